"""LAPACK and BLAS from compiled loops (mlsvm.solvers.compiled_lapack): each routine on a matrix held
inside a larger buffer (leading dimension > order) against numpy/SciPy on the plain matrix, the
rest of the buffer untouched; compiled, and as the SciPy fallback that ``NUMBA_DISABLE_JIT=1`` runs."""

import os
import subprocess
import sys

import numpy as np
import pytest


def _embedded(rng, n, cap, k=3, r=1):
    """A (k, cap, cap) buffer of noise, matrix r's leading n × n Fortran reading an SPD matrix M."""
    buffer = rng.standard_normal((k, cap, cap))
    A = rng.standard_normal((n, n + 2))
    M = A @ A.T + 0.1 * np.eye(n)
    buffer[r, :n, :n] = M.T
    return buffer, M


def _check_routines():
    from mlsvm.solvers.compiled_lapack import potrf_lower, potrs_lower, syrk_lower, trsv_lower

    rng = np.random.default_rng(0)
    for n, cap in ((1, 1), (5, 5), (6, 11), (40, 57)):
        buffer, M = _embedded(rng, n, cap)
        before = buffer.copy()
        lower = np.tril(np.ones((n, n), dtype=bool))
        outside = np.ones(buffer.shape, dtype=bool)
        outside[1, :n, :n] = ~lower.T   # matrix 1's lower triangle is buffer[1, j, i] with i ≥ j

        rows = rng.standard_normal((4, n))
        syrk_lower(0.5, rows, buffer[1], n)
        syrk_lower(-0.25, rows, buffer[1], n)   # an update and a downdate (M stays positive definite)
        M = M + 0.25 * rows.T @ rows
        np.testing.assert_allclose(buffer[1, :n, :n].T[lower], M[lower], rtol=1e-13, atol=1e-13)
        assert np.array_equal(buffer[outside], before[outside])

        assert potrf_lower(buffer[1], n) == 0
        L = np.tril(buffer[1, :n, :n].T)
        np.testing.assert_allclose(L, np.linalg.cholesky(M), rtol=1e-10, atol=1e-12)
        assert np.array_equal(buffer[outside], before[outside])

        b = rng.standard_normal((3, n))
        x = b.copy()
        assert potrs_lower(buffer[1], n, x) == 0
        np.testing.assert_allclose(x, np.linalg.solve(M, b.T).T, rtol=1e-9, atol=1e-12)
        y = b[0].copy()
        assert potrs_lower(buffer[1], n, y) == 0
        np.testing.assert_allclose(y, x[0], rtol=1e-13, atol=1e-14)
        y = b[1].copy()
        trsv_lower(buffer[1], n, y)
        np.testing.assert_allclose(L @ y, b[1], rtol=1e-10, atol=1e-12)
        assert np.array_equal(buffer[outside], before[outside])

    buffer, M = _embedded(rng, 4, 6)
    buffer[1, 2, 2] = -1.0   # a negative diagonal entry: not positive definite
    assert potrf_lower(buffer[1], 4) > 0


def test_routines_on_matrices_inside_larger_buffers():
    _check_routines()


def test_the_scipy_fallback_without_the_jit():
    """With ``NUMBA_DISABLE_JIT=1`` the module defines the routines with ``scipy.linalg.lapack``/``blas``
    (the compiled code's external calls cannot run as Python): the same checks."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok (jit disabled)"


if __name__ == "__main__":
    import numba

    _check_routines()
    print(f"ok (jit {'disabled' if numba.config.DISABLE_JIT else 'enabled'})")
