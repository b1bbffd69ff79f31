"""mLODM formulation (SPEC §2.4): CVXPY primal (eq. 15) = −(dual minimum) (eq. 18) on two
backends, numpy objectives and KKT residuals agree with CVXPY, and the two limits of the model."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsvm.data import ranking_pairs
from mlsvm.datasets import make_multilabel
from mlsvm.formulations import mlodm
from mlsvm.kernels import make_kernel
from mlsvm.solvers.cvxpy_tools import CROSSCHECK_BACKEND, solve
from mlsvm.report import relative_difference
from mlsvm.verification.tolerances import BACKEND_AGREEMENT, tolerance
from tests.mlodm_problems import mlodm_problems, random_dual_point

EXACT = tolerance("mlodm", "cvxpy")


@settings(max_examples=10)
@given(mlodm_problems())
def test_primal_equals_minus_dual_minimum(drawn):
    problem, _ = drawn
    primal = solve(mlodm.cvxpy_primal(problem)[0], "CLARABEL")
    dual_cvx, variables = mlodm.cvxpy_dual(problem)
    dual_min = solve(dual_cvx, "CLARABEL")
    assert relative_difference(primal, -dual_min) <= BACKEND_AGREEMENT
    # a second backend confirms the ground truth
    assert relative_difference(-solve(mlodm.cvxpy_dual(problem)[0], CROSSCHECK_BACKEND), primal) <= BACKEND_AGREEMENT
    # numpy objectives at the CVXPY dual point, through w(α, β) of eq. (16)
    alpha = np.maximum(variables["alpha"].value, 0.0)
    beta = np.maximum(variables["beta"].value, 0.0)
    coef = mlodm.coef_from_dual(problem, alpha, beta)
    assert relative_difference(mlodm.primal_objective(problem, coef), primal) <= EXACT.objective
    assert relative_difference(mlodm.dual_objective(problem, alpha, beta), primal) <= EXACT.objective
    assert max(mlodm.kkt_residuals(problem, alpha, beta).values()) <= EXACT.kkt


def _small_problem(C=2.0, theta=0.3, mu=0.4, kernel="rbf", n=20, seed=1):
    data = make_multilabel(n, 3, 4, random_state=seed)
    gram = make_kernel(kernel, 0.5)(data.X)
    return mlodm.MLODMProblem(gram, ranking_pairs(data.Y), C, theta, mu)


def test_weak_duality_and_slack_formula_at_random_points():
    """P(w) ≥ D(α, β) for every feasible pair (weak duality) and eq. (17) holds at the optimum."""
    problem = _small_problem()
    for seed in range(5):
        alpha, beta = random_dual_point(problem, seed)
        coef = np.random.default_rng(seed).standard_normal(problem.gram.shape[0:1] + (problem.pairs.n_labels,))
        assert mlodm.primal_objective(problem, coef) >= mlodm.dual_objective(problem, alpha, beta)
    dual_cvx, variables = mlodm.cvxpy_dual(problem)
    solve(dual_cvx)
    alpha, beta = variables["alpha"].value, variables["beta"].value
    margins = mlodm.pair_margins(problem, mlodm.coef_from_dual(problem, alpha, beta))
    size = problem.pair_size
    xi = np.maximum(0.0, 1 - problem.theta - margins)
    eps = np.maximum(0.0, margins - 1 - problem.theta)
    np.testing.assert_allclose(size * alpha / problem.C, xi, atol=1e-6)
    np.testing.assert_allclose(size * beta / (problem.mu * problem.C), eps, atol=1e-6)


def test_kkt_residuals_detect_a_perturbed_point():
    problem = _small_problem()
    dual_cvx, variables = mlodm.cvxpy_dual(problem)
    solve(dual_cvx)
    alpha, beta = np.maximum(variables["alpha"].value, 0), np.maximum(variables["beta"].value, 0)
    assert max(mlodm.kkt_residuals(problem, alpha, beta).values()) <= EXACT.kkt
    worse = alpha.copy()
    worse[np.argmax(alpha)] *= 1.01
    assert max(mlodm.kkt_residuals(problem, worse, beta).values()) > EXACT.kkt


def test_dual_operator_matches_dense_quadratic():
    """The LinearOperator P of the dual QP equals the Hessian of eq. (18) built densely."""
    problem = _small_problem(n=8)
    pairs, T = problem.pairs, problem.pairs.n_pairs
    S = np.stack([pairs.scatter(e).ravel() for e in np.eye(T)], axis=1)  # (nq × T) scatter matrix
    G = S.T @ np.kron(problem.gram, np.eye(pairs.n_labels)) @ S
    D = np.diag(problem.pair_size / problem.C)
    P = np.block([[G + D, -G], [-G, G + D / problem.mu]])
    eta = np.concatenate(random_dual_point(problem, 3))
    np.testing.assert_allclose(mlodm._dual_operator(problem).matvec(eta), P @ eta, atol=1e-10)


@pytest.mark.parametrize("theta", [0.0, 0.4])
def test_mu_one_is_the_squared_insensitive_pair_loss(theta):
    """μ = 1: the loss is ``C/2 Σ (1/n_t) max(0, |m_t − 1| − θ)²`` (θ = 0: squared loss on the pair
    margins), checked against an independent CVXPY form without slack variables."""
    problem = _small_problem(C=3.0, theta=theta, mu=1.0)
    factor = np.linalg.cholesky(problem.gram + 1e-12 * np.eye(problem.gram.shape[0]))
    pairs = problem.pairs
    V = cp.Variable((factor.shape[1], pairs.n_labels))
    scores = factor @ V
    margins = cp.hstack([scores[i, k] - scores[i, l] for i, k, l in zip(pairs.instance, pairs.relevant, pairs.irrelevant)])
    loss = cp.sum(cp.multiply(pairs.weight, cp.square(cp.pos(cp.abs(margins - 1) - theta))))
    independent = solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(V) + 0.5 * problem.C * loss)), "CLARABEL")
    assert relative_difference(independent, solve(mlodm.cvxpy_primal(problem)[0])) <= BACKEND_AGREEMENT
    assert relative_difference(independent, -solve(mlodm.cvxpy_dual(problem)[0])) <= BACKEND_AGREEMENT


def test_theta_zero_mu_one_closed_form():
    """θ = 0, μ = 1: the dual in d = α − β is unconstrained, ``(SᵀKS + diag(n_t/C)) d = 1``."""
    problem = _small_problem(C=3.0, theta=0.0, mu=1.0, n=10)
    pairs, T = problem.pairs, problem.pairs.n_pairs
    S = np.stack([pairs.scatter(e).ravel() for e in np.eye(T)], axis=1)
    G = S.T @ np.kron(problem.gram, np.eye(pairs.n_labels)) @ S
    d = np.linalg.solve(G + np.diag(problem.pair_size / problem.C), np.ones(T))
    alpha, beta = np.maximum(d, 0.0), np.maximum(-d, 0.0)
    closed_form = mlodm.primal_objective(problem, mlodm.coef_from_dual(problem, alpha, beta))
    assert relative_difference(closed_form, solve(mlodm.cvxpy_primal(problem)[0])) <= BACKEND_AGREEMENT
    assert max(mlodm.kkt_residuals(problem, alpha, beta).values()) <= EXACT.kkt


def test_large_C_approaches_the_hard_band():
    """As C grows the optimum approaches ``min ½Σ‖w_k‖² s.t. 1 − θ ≤ m_t ≤ 1 + θ`` from below, with
    the rigorous bounds ``0 ≤ P_hard − P_C ≤ Σ n_t (α*² + β*²/μ) / (2C)`` (the hard band's
    multipliers are feasible in the soft dual) and ``C/2 Σ (1/n_t) v_t² ≤ P_C`` for the violations v."""
    data = make_multilabel(12, 3, 3, random_state=4)
    gram = make_kernel("rbf", 2.0)(data.X)          # full rank: the band is feasible
    pairs = ranking_pairs(data.Y)
    theta, mu = 0.2, 0.5
    factor = np.linalg.cholesky(gram)
    V = cp.Variable((factor.shape[1], pairs.n_labels))
    margins = pairs.gather_matrix("F") @ cp.vec(factor @ V, order="F")
    lower, upper = margins >= 1 - theta, margins <= 1 + theta
    hard = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(V)), [lower, upper])
    hard_value = solve(hard, "CLARABEL")
    a_star, b_star = lower.dual_value, upper.dual_value
    size = 1.0 / pairs.weight
    previous = -np.inf
    for C in (1.0, 10.0, 100.0, 1000.0):
        problem = mlodm.MLODMProblem(gram, pairs, C, theta, mu)
        value = solve(mlodm.cvxpy_primal(problem)[0], "CLARABEL")
        bound = size @ (a_star**2 + b_star**2 / mu) / (2 * C)
        assert previous - BACKEND_AGREEMENT * value <= value <= hard_value * (1 + BACKEND_AGREEMENT)
        assert hard_value - value <= bound * (1 + BACKEND_AGREEMENT) + BACKEND_AGREEMENT
        dual_cvx, variables = mlodm.cvxpy_dual(problem)
        solve(dual_cvx)
        m = mlodm.pair_margins(problem, mlodm.coef_from_dual(problem, variables["alpha"].value, variables["beta"].value))
        violation = np.maximum(np.maximum(1 - theta - m, m - 1 - theta), 0.0)
        min_weight = pairs.weight.min() * min(1.0, mu)
        assert violation.max() <= np.sqrt(2 * hard_value / (C * min_weight)) + BACKEND_AGREEMENT
        previous = value
    # the bound is not vacuous: at C = 1000 it pins the soft optimum to the hard one within it
    assert bound < hard_value


@settings(max_examples=60)
@given(st.floats(-1e6, 1e6, allow_nan=False), st.integers(0, 60), st.integers(1, 12))
def test_margin_statistics_of_degenerate_margins(value, ulps, n_pairs):
    """All margins equal up to a few ulps (numpy: "Too many bins for data range"): every margin is
    still counted, in bins of finite width, and the mean and variance are the data's."""
    margins = value + np.arange(n_pairs) % 2 * ulps * np.spacing(value)
    stats = mlodm.margin_statistics(margins)
    assert stats["counts"].sum() == n_pairs == stats["n_pairs"]
    assert np.all(np.diff(stats["edges"]) > 0)
    assert stats["edges"][0] <= margins.min() and margins.max() <= stats["edges"][-1]
    assert stats["mean"] == pytest.approx(np.mean(margins), rel=1e-15, abs=1e-300)
    assert stats["variance"] == np.var(margins)


def test_mlodm_fits_two_points_with_equal_margins():
    """The symmetric two-point problem has both pair margins equal up to round-off; the fit used to
    raise from the margin histogram after the solve."""
    from mlsvm import MLODM

    X = make_multilabel(n_samples=40, n_features=5, n_labels=4, random_state=0).X[:2]
    model = MLODM().fit(X, [[1, 0], [0, 1]])
    assert model.fit_report_.converged
    assert model.margin_stats_["counts"].sum() == model.margin_stats_["n_pairs"] == 2


@settings(max_examples=15)
@given(mlodm_problems(), st.integers(0, 2**16), st.booleans())
def test_kkt_residual_pass_equals_the_qp_residuals_formula(drawn, seed, negative):
    """The one-pass residuals of :func:`mlodm.kkt_residuals` against the generic numpy
    ``qp_residuals`` with ``P`` applied as an operator (an independent ``Pη``), at a random point
    (with ``negative``, some entries below the bound 0: primal infeasibility shows), compiled and
    as plain Python (what ``NUMBA_DISABLE_JIT=1`` runs)."""
    from mlsvm.formulations.evaluation import qp_residuals

    problem, _ = drawn
    alpha, beta = random_dual_point(problem, seed)
    if negative:    # the first α always below 0: a draw of few pairs could keep every entry above it
        alpha, beta = alpha - 0.3, beta - 0.2
        alpha[0] = -0.3
    T = problem.pairs.n_pairs
    linear = np.concatenate([np.full(T, problem.theta - 1.0), np.full(T, problem.theta + 1.0)])
    gradient = np.concatenate(mlodm.dual_gradient(problem, alpha, beta))
    expected = qp_residuals(mlodm._dual_operator(problem), linear, np.concatenate([alpha, beta]),
                            lb=np.zeros(2 * T), z_box=-gradient)
    got = mlodm.kkt_residuals(problem, alpha, beta)
    margins = mlodm.pair_margins(problem, mlodm.coef_from_dual(problem, alpha, beta))
    args = (alpha, beta, margins, problem.pairs.weight, float(problem.C), float(problem.theta), float(problem.mu))
    as_python = mlodm._scaled_residuals(*getattr(mlodm._residual_norms, "py_func", mlodm._residual_norms)(*args))
    assert got.keys() == expected.keys() == as_python.keys()
    for name in expected:   # Pη by the operator vs ∇ − q, sums in another order: round-off only
        assert got[name] == pytest.approx(expected[name], rel=1e-9, abs=1e-13), name
        assert as_python[name] == pytest.approx(got[name], rel=1e-12, abs=1e-15), name
    if negative:
        assert got["primal"] > 0.0
