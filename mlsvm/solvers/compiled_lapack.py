"""LAPACK and BLAS called from compiled loops, on matrices stored in place inside larger buffers.

A stack of k symmetric d × d matrices that grow by a border row (the per-class Hessians of the
SMSVM / SM3L Newton loop, :mod:`mlsvm.solvers.sparse_mm_greedy`) is kept in one C-ordered buffer of
shape (k, cap, cap): matrix r is ``buffer[r]`` read in Fortran order with leading dimension cap, so
its entry (i, j) is ``buffer[r, j, i]``, its lower triangle is ``buffer[r, j, i]`` with i ≥ j, and a
border row is written in place. SciPy's ``scipy.linalg.lapack`` wrappers take whole contiguous
arrays only, so each call on such a matrix would copy it in and out; and each call is a Python call
with its argument checks, which thousands of small per-class calls per Newton step add up to.

The routines are SciPy's own LAPACK and BLAS, exported as C function pointers by
``scipy.linalg.cython_lapack`` and ``scipy.linalg.cython_blas``. They are registered with LLVM under
names of mlsvm's (``mlsvm_dpotrf``, ...) and the compiled functions call those names, so the machine
code in numba's cache holds a name, not an address of one process. With ``NUMBA_DISABLE_JIT=1``
the same functions are written with ``scipy.linalg.lapack`` / ``blas`` on copies (slow, and the way
to step through the callers).

Every function takes the matrix as a 2-D C-ordered block ``a`` (``buffer[r]``; its Fortran reading
is the matrix) and the order n ≤ ``a.shape[0]`` of its leading part; only the lower triangle is
read or written.
"""

from __future__ import annotations

import numba
import numpy as np

from mlsvm.solvers.compiled import compiled

__all__ = ["potrf_lower", "potrs_lower", "syrk_lower", "trsv_lower"]

if numba.config.DISABLE_JIT:   # the routines below run as Python: SciPy's wrappers, on copies
    from scipy.linalg.blas import dsyrk, dtrsv
    from scipy.linalg.lapack import dpotrf, dpotrs

    def _potrf(a, n):
        factor, info = dpotrf(np.array(a[:n, :n].T, order="F"), lower=1, clean=0)
        a[:n, :n] = factor.T
        return info

    def _potrs(a, n, b):
        rhs = b.reshape(-1, n)
        solution, info = dpotrs(np.array(a[:n, :n].T, order="F"), rhs.T, lower=1)
        rhs[:] = solution.T
        return info

    def _syrk(alpha, rows, a, n):
        a[:n, :n] = dsyrk(alpha, rows.T, beta=1.0, c=np.array(a[:n, :n].T, order="F"), trans=0, lower=1).T

    def _trsv(a, n, x):
        x[:] = dtrsv(np.array(a[:n, :n].T, order="F"), x, lower=1)
else:
    import llvmlite.binding as llvm
    from numba import types
    from numba.extending import get_cython_function_address

    for _module, _names in (("scipy.linalg.cython_lapack", ("dpotrf", "dpotrs")),
                            ("scipy.linalg.cython_blas", ("dsyrk", "dtrsv"))):
        for _name in _names:
            llvm.add_symbol(f"mlsvm_{_name}", get_cython_function_address(_module, _name))

    _p = types.voidptr   # Fortran's arguments: every one a pointer (characters, integers, reals)
    _dpotrf = types.ExternalFunction("mlsvm_dpotrf", types.void(_p, _p, _p, _p, _p))
    _dpotrs = types.ExternalFunction("mlsvm_dpotrs", types.void(_p, _p, _p, _p, _p, _p, _p, _p))
    _dsyrk = types.ExternalFunction("mlsvm_dsyrk", types.void(_p, _p, _p, _p, _p, _p, _p, _p, _p, _p))
    _dtrsv = types.ExternalFunction("mlsvm_dtrsv", types.void(_p, _p, _p, _p, _p, _p, _p, _p))
    LOWER, NO = ord("L"), ord("N")   # the character flags, as their codes

    # The flag, size and scalar arguments are one-entry arrays bound to names: each lives until
    # the call has returned.

    @compiled
    def _char(code):
        return np.array([code], dtype=np.uint8)

    @compiled
    def _int(value):
        return np.array([value], dtype=np.int32)

    @compiled
    def _potrf(a, n):
        uplo, order, lda, info = _char(LOWER), _int(n), _int(max(a.shape[1], 1)), _int(0)
        _dpotrf(uplo.ctypes, order.ctypes, a.ctypes, lda.ctypes, info.ctypes)
        return info[0]

    @compiled
    def _potrs(a, n, b):
        uplo, order, count, lda, ldb, info = (_char(LOWER), _int(n), _int(b.size // max(n, 1)),
                                              _int(max(a.shape[1], 1)), _int(max(n, 1)), _int(0))
        _dpotrs(uplo.ctypes, order.ctypes, count.ctypes, a.ctypes, lda.ctypes, b.ctypes, ldb.ctypes, info.ctypes)
        return info[0]

    @compiled
    def _syrk(alpha, rows, a, n):
        uplo, trans, order, rank = _char(LOWER), _char(NO), _int(n), _int(rows.shape[0])
        scale, keep, ld_rows, lda = np.array([alpha]), np.array([1.0]), _int(max(n, 1)), _int(max(a.shape[1], 1))
        _dsyrk(uplo.ctypes, trans.ctypes, order.ctypes, rank.ctypes, scale.ctypes, rows.ctypes, ld_rows.ctypes,
               keep.ctypes, a.ctypes, lda.ctypes)

    @compiled
    def _trsv(a, n, x):
        uplo, trans, unit, order, lda, step = _char(LOWER), _char(NO), _char(NO), _int(n), _int(max(a.shape[1], 1)), _int(1)
        _dtrsv(uplo.ctypes, trans.ctypes, unit.ctypes, order.ctypes, a.ctypes, lda.ctypes, x.ctypes, step.ctypes)


@compiled
def potrf_lower(a, n):
    """Cholesky factor (lower) of the leading n × n matrix, in place; LAPACK's info (0, or the order
    of the first leading minor that is not positive definite).

    Parameters
    ----------
    a : array of shape (cap, cap), C-ordered
        The matrix, read in Fortran order (its entry (i, j) is ``a[j, i]``).
    n : int
        The order of its leading part, ``n ≤ cap``.
    """
    return _potrf(a, n)


@compiled
def potrs_lower(a, n, b):
    """Solve with the factor of :func:`potrf_lower`, in place; LAPACK's info.

    Parameters
    ----------
    a : array of shape (cap, cap), C-ordered
        The factor, as :func:`potrf_lower` left it.
    n : int
        The order of the system.
    b : array, C-ordered
        ``b.size // n`` right-hand sides of n entries each, one per row; overwritten by the solutions.
    """
    return _potrs(a, n, b)


@compiled
def syrk_lower(alpha, rows, a, n):
    """``M += alpha·rowsᵀ rows`` on the lower triangle of the leading n × n matrix M (BLAS reads the
    C-ordered rows as the n × p matrix rowsᵀ).

    Parameters
    ----------
    alpha : float
        The weight of the update (negative: a downdate).
    rows : array of shape (p, n), C-ordered
        The update's rows.
    a : array of shape (cap, cap), C-ordered
        The matrix M, read in Fortran order.
    n : int
        The order of its leading part.
    """
    _syrk(alpha, rows, a, n)


@compiled
def trsv_lower(a, n, x):
    """``x ← L⁻¹ x`` with L the lower triangle of the leading n × n matrix, in place.

    Parameters
    ----------
    a : array of shape (cap, cap), C-ordered
        The matrix holding L, read in Fortran order.
    n : int
        The order of L.
    x : array of shape (n,), contiguous
        The right-hand side; overwritten by the solution.
    """
    _trsv(a, n, x)
