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

No compiled function calls numba's ``np.sort``, ``np.argsort``, ``np.unique`` or
``np.searchsorted``: they use :func:`argsort`, :func:`stable_argsort` and :func:`search` below.
Numba builds those numpy functions from factories (a quicksort for sorting and another for argsort,
a search for each side) whose machine code carries the factory's qualified name, the argument types
and a counter that each process starts afresh. Two cached functions compiled in different
processes can therefore hold two different bodies under one symbol name; a process that loads
both runs one of them in place of the other (numba issue 10486, open). mlsvm hit it: the argsort
of SM3L's scoring and the sort of RankSVM's block step, cached by two test runs, met in a third,
and the process died with a segmentation fault. The helpers are functions of this module, whose
names and bodies are one-to-one.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["compiled", "dot", "argsort", "stable_argsort", "search"]

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


#: argsort: partitions of fewer entries than this are put in order by insertion (numba's value)
_SMALL = 15
#: argsort: the depth of its stack of pending partitions (numba's value; the smaller side is sorted
#: first, so the depth stays below log2(n))
_STACK = 100
#: stable_argsort: runs of this many entries are put in order by insertion before the merges
_RUN = 16


@compiled
def _insertion(values, order, low, high):
    """Put ``order[low:high + 1]`` in increasing order of ``values`` (inclusive bounds)."""
    for i in range(low + 1, high + 1):
        item = order[i]
        key = values[item]
        j = i
        while j > low and key < values[order[j - 1]]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = item


@compiled
def _partition(values, order, low, high):
    """Partition ``order[low:high + 1]`` around the median of its first, middle and last keys;
    returns the pivot's final position."""
    middle = (low + high) >> 1
    if values[order[middle]] < values[order[low]]:
        order[low], order[middle] = order[middle], order[low]
    if values[order[high]] < values[order[middle]]:
        order[high], order[middle] = order[middle], order[high]
    if values[order[middle]] < values[order[low]]:
        order[low], order[middle] = order[middle], order[low]
    pivot = values[order[middle]]
    order[high], order[middle] = order[middle], order[high]
    i, j = low, high - 1
    while True:
        while i < high and values[order[i]] < pivot:
            i += 1
        while j >= low and pivot < values[order[j]]:
            j -= 1
        if i >= j:
            break
        order[i], order[j] = order[j], order[i]
        i += 1
        j -= 1
    order[i], order[high] = order[high], order[i]
    return i


@compiled
def argsort(values):
    """An order that sorts a 1-D array: numba's ``np.argsort(values)`` (its quicksort, median of three,
    insertion sort below 15 entries), written out here so that its code is mlsvm's own. For values
    without NaN it returns the very permutation numba's does, so the solvers' results did not move
    by a bit when they switched to it; equal keys come in no particular order.

    Parameters
    ----------
    values : array of shape (n,)
        The keys, without NaN.

    Returns
    -------
    array of int64, shape (n,)
        Indices that put ``values`` in increasing order.
    """
    n = values.size
    order = np.arange(n)
    if n < 2:
        return order
    lows, highs = np.empty(_STACK, dtype=np.int64), np.empty(_STACK, dtype=np.int64)
    lows[0], highs[0] = 0, n - 1
    pending = 1
    while pending > 0:
        pending -= 1
        low, high = lows[pending], highs[pending]
        while high - low >= _SMALL:
            i = _partition(values, order, low, high)
            if high - i > i - low:   # the larger side waits on the stack
                if high > i:
                    lows[pending], highs[pending] = i + 1, high
                    pending += 1
                high = i - 1
            else:
                if i > low:
                    lows[pending], highs[pending] = low, i - 1
                    pending += 1
                low = i + 1
        _insertion(values, order, low, high)
    return order


@compiled
def stable_argsort(values):
    """The stable order of a 1-D array (``np.argsort(values, kind="stable")`` for values without
    NaN), by merge sort over runs put in order by insertion.

    Parameters
    ----------
    values : array of shape (n,)
        The keys, without NaN.

    Returns
    -------
    array of int64, shape (n,)
        Indices that put ``values`` in increasing order, equal keys in their original order.
    """
    n = values.size
    order = np.arange(n)
    for start in range(0, n, _RUN):
        _insertion(values, order, start, min(start + _RUN, n) - 1)
    spare = np.empty(n, dtype=np.int64)
    width = _RUN
    while width < n:
        for left in range(0, n, 2 * width):
            middle, right = min(left + width, n), min(left + 2 * width, n)
            i, j = left, middle
            for k in range(left, right):
                if j >= right or (i < middle and values[order[i]] <= values[order[j]]):
                    spare[k] = order[i]
                    i += 1
                else:
                    spare[k] = order[j]
                    j += 1
        order, spare = spare, order
        width *= 2
    return order


@compiled
def search(ordered, needle, right):
    """``np.searchsorted(ordered, needle, side="right" if right else "left")`` for one needle: the
    first index ``i`` with ``ordered[i] > needle`` (right) or ``ordered[i] >= needle`` (left).

    Parameters
    ----------
    ordered : array of shape (n,)
        Values in increasing order.
    needle : float
        The value searched for.
    right : bool
        Which side of a run of values equal to ``needle`` the index is on.
    """
    low, high = 0, ordered.size
    while low < high:
        middle = (low + high) // 2
        if ordered[middle] < needle or (right and ordered[middle] == needle):
            low = middle + 1
        else:
            high = middle
    return low
