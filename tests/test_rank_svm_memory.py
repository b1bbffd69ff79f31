"""Rank-SVM's pair structures in O(T + nnz(X)) memory (issue 16): int32 pair indices, the pair
operators as compiled loops (checked against the sparse incidence matrices they replace, which
are formed only on demand), and the linear "bcd" fit with its certificate bounded in bytes per
pair (tracemalloc: numpy's allocations, not wall clock)."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from mlsvm.data import ranking_pairs
from mlsvm.formulations import rank_svm
from mlsvm.solvers.rank_svm_bcd import instance_bcd

#: bytes per pair allowed for problem + solver + certificate (measured ≈ 110 after issue 16's fix, ≈ 290 before)
BYTES_PER_PAIR = 160


def _problem(n=300, d=200, q=20, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.05, random_state=seed, format="csr")
    Y = (rng.random((n, q)) < 0.4).astype(int)
    return X, Y


def test_pair_indices_are_int32_and_flat_indices_fit():
    _, Y = _problem()
    pairs = ranking_pairs(Y)
    assert pairs.instance.dtype == pairs.relevant.dtype == pairs.irrelevant.dtype == np.int32
    positive, negative = pairs.flat_index
    assert np.array_equal(positive, pairs.instance.astype(np.int64) * Y.shape[1] + pairs.relevant)
    assert np.array_equal(negative, pairs.instance.astype(np.int64) * Y.shape[1] + pairs.irrelevant)


def test_compiled_pair_operators_match_the_incidence_matrices():
    X, Y = _problem(n=60, q=7, seed=3)
    Y[5] = 0          # an instance without pairs
    problem = rank_svm.make_problem(None, Y, 1.0, features=X)
    assert "incidence" not in problem.__dict__ and "equality" not in problem.__dict__   # not formed by make_problem
    rng = np.random.default_rng(1)
    alpha, F, b = rng.normal(size=problem.n_pairs), rng.normal(size=Y.shape), rng.normal(size=Y.shape[1])
    D, A = problem.incidence.toarray(), problem.equality.toarray()
    assert D.shape == (problem.n_pairs, Y.size) and A.shape == (Y.shape[1], problem.n_pairs)
    assert np.allclose(problem.gather(F), D @ F.ravel(), rtol=0, atol=1e-12)
    assert np.allclose(problem.scatter(alpha).ravel(), D.T @ alpha, rtol=0, atol=1e-12)
    assert np.allclose(problem.balance(alpha), A @ alpha, rtol=0, atol=1e-12)
    assert np.allclose(problem.equality_adjoint(b), A.T @ b, rtol=0, atol=1e-12)
    assert np.allclose(problem.equality_transpose.toarray(), A.T)
    # the pair structure's own operators (the problem's delegate to them) against the same matrices
    assert np.allclose(problem.pairs.gather(F), D @ F.ravel(), rtol=0, atol=1e-12)
    assert np.allclose(problem.pairs.scatter(alpha).ravel(), D.T @ alpha, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=f"one value per pair: {problem.n_pairs} entries; got {problem.n_pairs - 1}"):
        problem.scatter(alpha[:-1])


def test_restore_equalities_without_the_matrix_matches_the_matrix_formula():
    X, Y = _problem(n=80, q=6, seed=4)
    problem = rank_svm.make_problem(None, Y, 1.0, features=X)
    rng = np.random.default_rng(2)
    alpha = rng.uniform(0.0, 1.0, problem.n_pairs) * problem.upper
    restored = rank_svm.restore_equalities(problem, alpha)
    # reference: the weighted least-norm correction with the sparse equality matrix
    A = problem.equality.toarray()
    weights = np.minimum(alpha, problem.upper - alpha)
    correction = -weights * (A.T @ (np.linalg.pinv((A * weights) @ A.T) @ (A @ alpha)))
    assert np.allclose(restored, np.clip(alpha + correction, 0.0, problem.upper), rtol=0, atol=1e-12)
    assert np.max(np.abs(A @ restored)) <= 1e-10 * np.max(np.abs(A @ alpha))


def test_linear_bcd_fit_and_certificate_stay_within_bytes_per_pair():
    X, Y = _problem()
    rank_svm.evaluate(*_fit(X[:30], Y[:30]))   # compile the loops outside the measurement
    tracemalloc.start()
    try:
        problem, primal, dual = _fit(X, Y)
        evaluation = rank_svm.evaluate(problem, primal, dual)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    n, q = Y.shape
    T = problem.n_pairs
    assert T > 20_000
    assert max(abs(evaluation.relative_gap), evaluation.max_kkt) <= 1e-6
    # O(T + nnz(X) + nQ + dQ): the pairs, α, a few T-sized vectors at a time; no T × nQ matrix
    allowed = BYTES_PER_PAIR * T + 16 * X.nnz + 64 * (n + X.shape[1]) * q + 2**20
    assert peak <= allowed, f"peak {peak} bytes ({peak / T:.0f} per pair) > {allowed}"
    assert "incidence" not in problem.__dict__ and "equality" not in problem.__dict__


def _fit(X, Y):
    problem = rank_svm.make_problem(None, Y, 1.0, features=X)
    result = instance_bcd(problem, tol=1e-6)
    assert result.converged
    return problem, result.primal, result.dual
