"""Matrix-SVM formulations (SPEC §2.5): primal = dual on two backends (eq. 1/8, MLRL eq. 10, least
squares eq. 12), the closed form (eq. 14), what eq. (13) really says, the Lipschitz constants."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlsvm.datasets import make_multilabel
from mlsvm.formulations import matrix_svm as ms
from mlsvm.kernels import make_kernel
from mlsvm.solvers.matrix_svm_agd import lipschitz_constant
from mlsvm.solvers.matrix_svm_closed_form import solve_least_squares
from mlsvm.verification.checks.matrix_svm import correlation_matrix
from mlsvm.solvers.cvxpy_tools import CROSSCHECK_BACKEND, solve
from mlsvm.report import relative_difference
from mlsvm.verification.tolerances import BACKEND_AGREEMENT, tolerance

EXACT = tolerance("matrix_svm", "cvxpy")


def _problem(kernel="linear", loss="hinge", correlated=False, n=24, d=3, q=3, seed=0, C=1.0):
    data = make_multilabel(n, d, q, random_state=seed)
    gram = make_kernel(kernel, "scale", X=data.X)(data.X)
    A = correlation_matrix(q) if correlated else None
    return data, ms.MatrixSVMProblem(gram, data.Y, C, A, loss)


def _cvxpy_dual_alpha(problem, backend="CLARABEL"):
    cvx, variables = ms.cvxpy_dual(problem)
    alpha = variables["alpha"]
    value = -solve(cvx, backend)
    a = np.clip(alpha.value, 0, problem.C) if problem.loss == "hinge" else alpha.value
    return value, a


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("loss", ms.LOSSES)
@pytest.mark.parametrize("correlated", [False, True])
def test_primal_equals_dual_on_two_backends(kernel, loss, correlated):
    _, problem = _problem(kernel, loss, correlated)
    primal = solve(ms.cvxpy_primal(problem)[0], "CLARABEL")
    dual, alpha = _cvxpy_dual_alpha(problem)
    dual_ecos, _ = _cvxpy_dual_alpha(problem, CROSSCHECK_BACKEND)
    assert relative_difference(primal, dual) <= BACKEND_AGREEMENT
    assert relative_difference(dual, dual_ecos) <= BACKEND_AGREEMENT
    # the numpy objectives and the dual → primal map W = X̄ᵀ(α∘Ys)Aᵀ land on the same optimum
    assert relative_difference(ms.primal_objective(problem, ms.coef_from_dual(problem, alpha)), primal) <= EXACT.objective
    assert relative_difference(ms.dual_objective(problem, alpha), primal) <= EXACT.objective
    assert max(ms.kkt_residuals(problem, alpha).values()) <= EXACT.kkt


def test_kernel_primal_matches_linear_features():
    """With the linear kernel, ``W = X̄ᵀΘ`` evaluated in the original features gives the CVXPY
    primal's objective: the augmented column of ones is the (regularized) bias."""
    data, problem = _problem("linear")
    primal = solve(ms.cvxpy_primal(problem)[0], "CLARABEL")
    _, alpha = _cvxpy_dual_alpha(problem)
    weights, bias = ms.linear_weights(data.X, ms.coef_from_dual(problem, alpha))
    scores = data.X @ weights + bias
    value = 0.5 * (np.sum(weights ** 2) + np.sum(bias ** 2)) + np.maximum(0, 1 - problem.signed * scores).sum()
    assert relative_difference(value, primal) <= EXACT.objective


def test_equation_13_identity_is_exact_and_the_paper_factor_is_wrong():
    """Eq. (13): ‖Y∘(Y − XW)‖²_F equals ‖Y − XW‖²_F exactly (|Y| = 1); the printed middle step
    ‖Y‖²_F‖Y − XW‖²_F is off by the factor ‖Y‖²_F = nq."""
    rng = np.random.default_rng(0)
    Ys = np.where(rng.random((7, 3)) < 0.4, 1.0, -1.0)
    residual = Ys - rng.standard_normal((7, 3))
    exact = np.sum((Ys * residual) ** 2)
    assert exact == pytest.approx(np.sum(residual ** 2), rel=1e-14)
    paper = np.sum(Ys ** 2) * np.sum(residual ** 2)
    assert paper == pytest.approx(21 * exact, rel=1e-14)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("correlated", [False, True])
def test_least_squares_closed_form_equals_cvxpy(kernel, correlated):
    _, problem = _problem(kernel, "squared", correlated)
    primal = solve(ms.cvxpy_primal(problem)[0], "CLARABEL")
    result = solve_least_squares(problem.gram_bar, problem.signed, problem.C, correlation=problem.correlation)
    assert relative_difference(ms.primal_objective(problem, result.primal["coef"]), primal) <= EXACT.objective
    assert relative_difference(ms.dual_objective(problem, result.dual["alpha"]), primal) <= EXACT.objective
    assert max(ms.kkt_residuals(problem, result.dual["alpha"]).values()) <= EXACT.kkt


def test_equation_14_is_ridge_regression_on_the_augmented_features():
    """Eq. 14 with the same C: ``W = (X̄ᵀX̄ + I/(2C))⁻¹ X̄ᵀ Ys`` equals the kernel closed form."""
    data, problem = _problem("linear", "squared", C=0.7)
    augmented = np.hstack([data.X, np.ones((data.X.shape[0], 1))])
    W = np.linalg.solve(augmented.T @ augmented + np.eye(augmented.shape[1]) / (2 * 0.7), augmented.T @ problem.signed)
    coef = solve_least_squares(problem.gram_bar, problem.signed, 0.7).primal["coef"]
    weights, bias = ms.linear_weights(data.X, coef)
    np.testing.assert_allclose(np.vstack([weights, bias]), W, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("correlated", [False, True])
def test_exact_lipschitz_is_the_hessian_norm_and_below_the_paper_bound(correlated):
    for loss in ms.LOSSES:
        _, problem = _problem("rbf", loss, correlated, n=15)
        hessian = ms.hessian_operator(problem)
        dense = hessian.matmat(np.eye(hessian.shape[0]))
        exact = lipschitz_constant(problem.gram_bar, problem.label_gram, problem.ridge, "exact")
        paper = lipschitz_constant(problem.gram_bar, problem.label_gram, problem.ridge, "frobenius")
        assert exact == pytest.approx(np.linalg.eigvalsh(dense)[-1], rel=1e-10)
        assert exact <= paper * (1 + 1e-12)


@settings(max_examples=15)
@given(seed=st.integers(0, 10_000), q=st.integers(1, 3), C=st.floats(0.1, 10.0),
       loss=st.sampled_from(ms.LOSSES), awkward=st.booleans())
def test_weak_duality_at_random_feasible_points(seed, q, C, loss, awkward):
    """Any dual-feasible α gives D(α) ≤ P(Θ(α)) (the certificate the AGD stop rule relies on)."""
    data = make_multilabel(12, 2, q, random_state=seed)
    Y = data.Y.copy()
    if awkward:
        Y[:, 0] = 0
        Y[0] = 1
    problem = ms.MatrixSVMProblem(make_kernel("rbf", 0.5)(data.X), Y, C, None, loss)
    rng = np.random.default_rng(seed)
    alpha = rng.uniform(0, C, Y.shape) if loss == "hinge" else rng.standard_normal(Y.shape)
    assert ms.dual_objective(problem, alpha) <= ms.primal_objective(problem, ms.coef_from_dual(problem, alpha)) + 1e-9


@pytest.mark.parametrize("bad, match", [
    (dict(C=0.0), "C must lie in"), (dict(C=-1.0), "C must lie in"),
    (dict(correlation=np.eye(2)), r"correlation \(A\) must have shape"),
    (dict(correlation=np.full((3, 3), np.nan)), "NaN"),
    (dict(loss="hinge2"), "loss must be one of"),
])
def test_problem_rejects_bad_input(bad, match):
    data = make_multilabel(10, 2, 3, random_state=0)
    arguments = dict(gram=data.X @ data.X.T, Y=data.Y, C=1.0, correlation=None, loss="hinge") | bad
    with pytest.raises(ValueError, match=match):
        ms.MatrixSVMProblem(**arguments)


def test_problem_rejects_non_finite_gram():
    data = make_multilabel(10, 2, 3, random_state=0)
    gram = data.X @ data.X.T
    gram[0, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        ms.MatrixSVMProblem(gram, data.Y, 1.0)
