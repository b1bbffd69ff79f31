"""mLODM with the linear kernel: the Gram-free problem type and its exact solvers (Newton, DCD)."""

from __future__ import annotations

import warnings
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import MinMaxScaler

from mlsvm.data import ranking_pairs
from mlsvm.datasets import load_emotions, make_multilabel
from mlsvm.formulations import mlodm
from mlsvm.solvers import mlodm_linear
from mlsvm.solvers.mlodm_bcd import solve_bcd
from mlsvm.solvers.mlodm_linear import certificate, solve_linear
from mlsvm.solvers.cvxpy_tools import solve, solve_checked
from mlsvm.report import relative_difference
from mlsvm.verification.tolerances import tolerance
from tests.mlodm_problems import linear_mlodm_problems, random_dual_point

EXACT = tolerance("mlodm", "fast")
#: what the solvers are asked for in these tests (the checks below use EXACT's looser 1e-6)
TOL = 1e-9
#: DCD converges linearly, at a rate that degrades with duplicated points and θ = 0: thousands of
#: sweeps for 1e-9 on some drawn problems, so it is asked for 1e-8 in the property test
DCD_TOL = 1e-8


def gram_version(problem: mlodm.LinearMLODMProblem) -> mlodm.MLODMProblem:
    return mlodm.MLODMProblem(problem.gram, problem.pairs, problem.C, problem.theta, problem.mu)


def assert_certified(result, problem, tol=TOL):
    """converged, and the certificate recomputed here from (α, β) meets the tolerance."""
    assert result.converged and result.stop_value <= tol
    alpha, beta = result.dual["alpha"], result.dual["beta"]
    assert np.all(alpha >= 0) and np.all(beta >= 0)
    check = certificate(problem, alpha, beta)
    assert check["gap"] <= tol and max(check["kkt"].values()) <= tol
    np.testing.assert_allclose(result.primal["W"], problem.weights(mlodm.coef_from_dual(problem, alpha, beta)),
                               atol=1e-12)


@settings(max_examples=20)
@given(linear_mlodm_problems())
def test_newton_and_dcd_reach_the_cvxpy_optimum_of_primal_and_dual(drawn):
    """Ground truth: the CVXPY primal (eq. 15) and dual (eq. 18), each on Clarabel and OSQP."""
    problem, _ = drawn
    primal = solve_checked(lambda: mlodm.cvxpy_primal(problem)[0], rtol=1e-7)
    dual = solve_checked(lambda: mlodm.cvxpy_dual(problem)[0], rtol=1e-7)
    truth = primal.values["CLARABEL"]
    assert relative_difference(truth, -dual.values["CLARABEL"]) <= 1e-7
    for method, tol in (("newton", TOL), ("dcd", DCD_TOL)):
        result = solve_linear(problem, method=method, tol=tol, max_iter=20_000, random_state=0)
        assert_certified(result, problem, tol)
        assert relative_difference(result.history["primal"][-1], truth) <= EXACT.objective
        assert relative_difference(result.history["dual"][-1], -dual.values["OSQP"]) <= EXACT.objective


@settings(max_examples=20)
@given(linear_mlodm_problems())
def test_gram_free_objectives_and_kkt_residuals_equal_the_gram_ones(drawn):
    problem, _ = drawn
    with_gram = gram_version(problem)
    for seed in (0, 1):
        alpha, beta = random_dual_point(problem, seed)
        coef = mlodm.coef_from_dual(problem, alpha, beta)
        np.testing.assert_allclose(mlodm.pair_margins(problem, coef), mlodm.pair_margins(with_gram, coef),
                                   rtol=1e-12, atol=1e-12)
        for function in (mlodm.primal_objective,):
            assert np.isclose(function(problem, coef), function(with_gram, coef), rtol=1e-12, atol=1e-12)
        assert np.isclose(mlodm.dual_objective(problem, alpha, beta), mlodm.dual_objective(with_gram, alpha, beta),
                          rtol=1e-12, atol=1e-12)
        linear, gram = mlodm.kkt_residuals(problem, alpha, beta), mlodm.kkt_residuals(with_gram, alpha, beta)
        assert linear.keys() == gram.keys()
        for key in linear:
            assert np.isclose(linear[key], gram[key], rtol=1e-9, atol=1e-12), key


def test_sparse_features_give_the_dense_result():
    data = make_multilabel(80, 12, 5, random_state=3)
    X = data.X * (np.random.default_rng(0).random(data.X.shape) < 0.4)
    pairs = ranking_pairs(data.Y)
    dense = mlodm.LinearMLODMProblem(X, pairs, 2.0, 0.3, 0.7)
    sparse = mlodm.LinearMLODMProblem(csr_matrix(X), pairs, 2.0, 0.3, 0.7)
    assert sparse.features.format == "csr"
    for method in ("newton", "dcd"):
        results = [solve_linear(problem, method=method, tol=TOL, max_iter=5000, random_state=1)
                   for problem in (dense, sparse)]
        for result, problem in zip(results, (dense, sparse)):
            assert_certified(result, problem)
        np.testing.assert_allclose(results[0].dual["alpha"], results[1].dual["alpha"], atol=1e-10)
        np.testing.assert_allclose(results[0].dual["beta"], results[1].dual["beta"], atol=1e-10)
        np.testing.assert_allclose(results[0].primal["W"], results[1].primal["W"], atol=1e-10)
    for key, value in mlodm.kkt_residuals(dense, *random_dual_point(dense)).items():
        assert np.isclose(mlodm.kkt_residuals(sparse, *random_dual_point(sparse))[key], value, rtol=1e-12)


def test_binary_case_gives_opposite_label_weights():
    """q = 2 with one label each (binary ODM): the optimum has w_2 = −w_1 (½‖w_1‖² + ½‖w_2‖² is
    smallest for a given w_1 − w_2 when they are opposite)."""
    data = make_multilabel(120, 6, 1, random_state=5)
    Y = np.column_stack([data.Y[:, 0], 1 - data.Y[:, 0]])
    problem = mlodm.LinearMLODMProblem(data.X, ranking_pairs(Y), 1.0, 0.4, 0.6)
    result = solve_linear(problem, tol=TOL)
    assert_certified(result, problem)
    W = result.primal["W"]
    np.testing.assert_allclose(W[:, 1], -W[:, 0], atol=1e-9 * np.abs(W).max())


@pytest.mark.realdata
def test_agrees_with_the_fast_bcd_route_on_emotions(datasets_dir):
    data = load_emotions()
    X = MinMaxScaler().fit_transform(data.X)
    pairs = ranking_pairs(data.Y)
    problem = mlodm.LinearMLODMProblem(X, pairs, 1.0, 0.5, 0.5)
    result = solve_linear(problem, tol=TOL)
    assert_certified(result, problem)
    bcd = solve_bcd(gram_version(problem), tol=1e-6, random_state=0, polish=True)
    assert bcd.converged
    assert relative_difference(result.history["primal"][-1], bcd.history["primal"][-1]) <= 1e-6
    scale = max(1.0, np.abs(bcd.dual["alpha"]).max())
    np.testing.assert_allclose(result.dual["alpha"], bcd.dual["alpha"], atol=1e-6 * scale)
    np.testing.assert_allclose(result.dual["beta"], bcd.dual["beta"], atol=1e-6 * scale)


@pytest.mark.parametrize("method", ["newton", "dcd"])
def test_max_iter_one_warns_with_the_values_reached(method):
    data = make_multilabel(60, 5, 4, random_state=2)
    problem = mlodm.LinearMLODMProblem(data.X, ranking_pairs(data.Y), 10.0, 0.2, 0.5)
    with pytest.warns(ConvergenceWarning, match=r"did not converge in 1 iterations: .* reached [0-9.e+-]+"):
        result = solve_linear(problem, method=method, tol=TOL, max_iter=1, random_state=0)
    assert not result.converged and result.stop_value > TOL and result.n_iter == 1


def test_an_unreachable_tolerance_is_a_stall_warning():
    data = make_multilabel(60, 5, 4, random_state=2)
    problem = mlodm.LinearMLODMProblem(data.X, ranking_pairs(data.Y), 1.0, 0.5, 0.5)
    with pytest.warns(ConvergenceWarning, match=r"stalled after \d+ iterations .* reached"):
        result = solve_linear(problem, tol=1e-30, max_iter=1000)
    assert not result.converged and result.n_iter < 1000
    assert result.stop_value <= 1e-12   # round-off level: the stall is not a failure of the method


def test_the_certificate_rejects_a_perturbed_optimum():
    """Planted wrong answers: the optimum passes; moving one multiplier, or shrinking all, fails."""
    data = make_multilabel(70, 6, 4, random_state=4)
    problem = mlodm.LinearMLODMProblem(data.X, ranking_pairs(data.Y), 1.0, 0.5, 0.5)
    result = solve_linear(problem, tol=TOL)
    alpha, beta = result.dual["alpha"], result.dual["beta"]
    assert certificate(problem, alpha, beta)["stop_value"] <= TOL
    moved = alpha.copy()
    moved[np.argmax(alpha)] *= 1.01
    assert certificate(problem, moved, beta)["stop_value"] > 1e-6
    assert certificate(problem, 0.99 * alpha, 0.99 * beta)["stop_value"] > 1e-6
    positive = np.flatnonzero(alpha == 0)[0]      # a multiplier switched on where it must be 0
    switched = alpha.copy()
    switched[positive] = 1e-3
    assert certificate(problem, switched, beta)["stop_value"] > 1e-6


def test_bad_input_is_named():
    data = make_multilabel(20, 3, 3, random_state=0)
    pairs = ranking_pairs(data.Y)
    problem = mlodm.LinearMLODMProblem(data.X, pairs)
    with pytest.raises(ValueError, match="method"):
        solve_linear(problem, method="cg")
    with pytest.raises(ValueError, match="tol"):
        solve_linear(problem, tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        solve_linear(problem, max_iter=0)
    with pytest.raises(TypeError, match="LinearMLODMProblem"):
        solve_linear(gram_version(problem))
    with pytest.raises(ValueError, match="features has 19 rows"):
        mlodm.LinearMLODMProblem(data.X[:19], pairs)
    with pytest.raises(ValueError, match="NaN"):
        mlodm.LinearMLODMProblem(csr_matrix(np.where(data.X > 1, np.nan, data.X)), pairs)
    with pytest.raises(ValueError, match="theta"):
        mlodm.LinearMLODMProblem(data.X, pairs, theta=2.0)


def test_no_warning_when_converged():
    data = make_multilabel(50, 4, 3, random_state=1)
    problem = mlodm.LinearMLODMProblem(data.X, ranking_pairs(data.Y), 1.0, 0.5, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in ("newton", "dcd"):
            assert solve_linear(problem, method=method, tol=1e-8, max_iter=5000, random_state=0).converged


def test_hessian_pair_sums_equal_bincount():
    """The compiled pair sums of the Newton system equal the two ``np.bincount`` over the active
    pairs bit for bit (same order), compiled and as plain Python (``NUMBA_DISABLE_JIT=1``)."""
    from mlsvm.solvers.mlodm_linear import _pair_sums

    rng = np.random.default_rng(3)
    size, T = 40, 500
    positive = rng.integers(0, size, T).astype(np.int32)
    negative = rng.integers(0, size, T).astype(np.int32)
    curvature = rng.random(T) * (rng.random(T) < 0.6)
    scores = rng.standard_normal(size)
    active = np.flatnonzero(curvature)
    values = curvature[active] * (scores[positive[active]] - scores[negative[active]])
    for run in (_pair_sums, getattr(_pair_sums, "py_func", _pair_sums)):
        plus, minus = run(positive, negative, curvature, scores, size)
        assert np.array_equal(plus, np.bincount(positive[active], values, size))
        assert np.array_equal(minus, np.bincount(negative[active], values, size))
        plus, minus = run(positive, negative, curvature, np.empty(0), size)
        assert np.array_equal(plus + minus, np.bincount(positive, curvature, size) + np.bincount(negative, curvature, size))


@settings(max_examples=20)
@given(linear_mlodm_problems(), st.sampled_from([1, 10_000_000]), st.booleans())
def test_formed_newton_system_is_the_matrix_free_hessian(drawn, block_entries, sparse):
    """The dense generalised Hessian (formed when CG stops at its cap) equals, column by column, the
    product ``H e = e + Xᵀ scatter(c ∘ gather(X e))`` of the matrix-free Newton step, for dense and
    CSR features and one row of X per block or all at once."""
    problem, _ = drawn
    X = csr_matrix(problem.features) if sparse else problem.features
    pairs = problem.pairs
    rng = np.random.default_rng(0)
    curvature = rng.random(pairs.n_pairs) * (rng.random(pairs.n_pairs) < 0.6)
    size = X.shape[1] * pairs.n_labels
    columns = []
    for unit in np.eye(size):
        margins = pairs.gather(np.asarray(X @ unit.reshape(X.shape[1], -1)))
        columns.append(unit + np.asarray(X.T @ pairs.scatter(curvature * margins)).ravel())
    expected = np.column_stack(columns)
    with patch.object(mlodm_linear, "DIRECT_BLOCK_ENTRIES", block_entries):
        formed = mlodm_linear._hessian_matrix(X, pairs, curvature)
    np.testing.assert_allclose(formed, expected, rtol=0, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("C", [100.0, 1000.0])
def test_newton_certifies_raw_emotions_with_a_large_c(C):
    """emotions as MULAN ships it (features up to 237), C = 100 and 1000: CG on the generalised
    Hessian stops at its cap and its directions crawl (before the formed system: no certificate in
    50 iterations, a stall after 877 on all 593 rows at C = 100); solved exactly, Newton certifies in
    about ten, at CLARABEL's optimum of the primal (eq. 15). Once CG has stopped at its cap, the
    later systems are formed without it (CG ran to the cap again at every step, to be discarded)."""
    data = load_emotions()
    problem = mlodm.LinearMLODMProblem(data.X[:200], ranking_pairs(data.Y[:200]), C, 0.5, 0.5)
    result = solve_linear(problem, tol=EXACT.gap, max_iter=50)
    assert_certified(result, problem, EXACT.gap)
    truth = solve(mlodm.cvxpy_primal(problem)[0], "CLARABEL")
    assert relative_difference(result.history["primal"][-1], truth) <= EXACT.objective
    per_step = np.diff(result.history["hessian_products"])
    capped = np.flatnonzero(per_step >= mlodm_linear.CG_MAX_ITER)
    assert capped.size and np.all(per_step[capped[0] + 1:] == 0)
