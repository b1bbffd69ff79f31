"""Compiled inner loops: the one place that says how a solver's loop is compiled.

Coordinate and active-set methods take many tiny steps (one pair, one instance, one row of a
piecewise-quadratic search). In numpy each step costs a dozen calls of microseconds on arrays of a
few entries, which is what kept those solvers a factor of ten behind LIBSVM / LIBLINEAR. Numba
compiles such a loop, written as plain Python over arrays, to machine code; the loop still reads as
the algorithm and runs as Python when ``NUMBA_DISABLE_JIT=1`` is set (how a reader can step
through it).

Every compiled function of mlsvm is declared with :func:`compiled`, never with numba's decorators
directly, so the options are chosen once:

* ``cache=True``: the machine code is written beside the module (or to numba's user cache folder
  when the package folder is read-only) and loaded by later processes, so the compilation (about a
  second per function) is paid once per install, not once per fit. Where no cache folder can be
  written, the function is compiled in memory instead of failing the import.
* ``error_model="numpy"``: a division by zero gives ``inf``/``nan`` as numpy does, never a
  Python exception from inside compiled code; callers test for non-finite values as before.
* no ``fastmath``: IEEE arithmetic, the same rounding as the numpy code it replaces, so the
  certificates and the tests' bitwise comparisons keep their meaning. The one exception is
  :func:`dot`, whose sum may be reordered (``fastmath={"reassoc"}``) so that LLVM spreads it over
  SIMD lanes, as BLAS's ``ddot`` does; it is for loops that take many short dot products, where
  ``np.dot`` pays a BLAS call per product.
"""

from __future__ import annotations

import numba

__all__ = ["compiled", "dot"]

_OPTIONS = {"nogil": True, "error_model": "numpy"}


def compiled(function):
    """Compile ``function`` with numba in nopython mode, with mlsvm's options (module docstring).

    Parameters
    ----------
    function : callable
        A function on numpy arrays and scalars in the subset of Python that numba compiles.

    Returns
    -------
    numba dispatcher
        Called like ``function``; the first call with new argument types compiles (or loads the
        cached machine code).
    """
    return _compile(function)


def _compile(function, **options):
    try:
        return numba.njit(cache=True, **_OPTIONS, **options)(function)
    except RuntimeError:  # no cache locator: neither the package folder nor a user cache is writable
        return numba.njit(cache=False, **_OPTIONS, **options)(function)


def _dot(a, b):
    """``Σ_q a_q b_q`` of two 1-D arrays of equal length, the terms summed in any order.

    Parameters
    ----------
    a, b : arrays of shape (d,)
        The vectors (contiguous, for SIMD loads).

    Returns
    -------
    float
        Their inner product.
    """
    total = 0.0
    for q in range(a.size):
        total += a[q] * b[q]
    return total


dot = _compile(_dot, fastmath={"reassoc"})
