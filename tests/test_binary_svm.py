"""The binary SVM reference: primal = dual on two backends, and the same optimum and decision
values as LIBSVM (SVC) and LIBLINEAR (LinearSVC).

Mappings: SVC(C) is hinge with a free bias; LinearSVC(C, loss, intercept_scaling=1) is
``½(‖w‖² + b²) + C Σ loss`` (a regularized bias), ``fit_intercept=False`` is ``bias="none"``.
"""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.svm import SVC, LinearSVC

from mlsvm.formulations import binary_svm as bsvm
from mlsvm.kernels import make_kernel
from mlsvm.verification import GroundTruthError, relative_difference, solve
from mlsvm.verification.checks.binary_svm import cvxpy_dual
from mlsvm.verification.tolerances import BACKEND_AGREEMENT, assert_decisions_agree, tolerance


def _data(n, d, seed, kernel="linear"):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.7 * rng.standard_normal(n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    spec = make_kernel(kernel, 0.5, X=X)
    return X, y, spec


def _solved_or_discarded(cvx, backend):
    """The optimal value, or the draw discarded when OSQP stopped at its iteration limit short of
    eps 1e-9 ("optimal_inaccurate": first-order, it stalls there on a few problems, e.g. n = 11,
    rbf, C = 2, squared hinge, free bias, found by HYPOTHESIS_PROFILE=explore; 2 of 300 random
    binary-SVM solves measured). The ground truth rightly refuses such an answer and the property
    needs one; hypothesis fails the test should many draws be discarded."""
    try:
        return solve(cvx, backend)
    except GroundTruthError:
        assume(not (backend == "OSQP" and cvx.status == cp.OPTIMAL_INACCURATE))
        raise


@settings(max_examples=12)
@given(n=st.integers(4, 25), d=st.integers(1, 4), seed=st.integers(0, 10_000),
       kernel=st.sampled_from(["linear", "rbf", "poly"]), C=st.floats(0.05, 20.0),
       loss=st.sampled_from(bsvm.LOSSES), bias=st.sampled_from(bsvm.BIASES),
       backend=st.sampled_from(["CLARABEL", "OSQP"]))
def test_primal_equals_dual(n, d, seed, kernel, C, loss, bias, backend):
    X, y, spec = _data(n, d, seed, kernel)
    problem = bsvm.BinarySVMProblem(spec(X), y, C, loss, bias)
    primal = _solved_or_discarded(bsvm.cvxpy_primal(problem)[0], backend)
    dual = -_solved_or_discarded(bsvm.cvxpy_dual(problem)[0], backend)
    assert relative_difference(primal, dual) <= BACKEND_AGREEMENT
    # the dual point also certifies itself through the numpy objectives and KKT residuals
    if backend == "CLARABEL":
        report = cvxpy_dual(problem, backend)
        tol = tolerance("binary_svm", "cvxpy")
        assert relative_difference(report.primal_objective, primal) <= tol.objective
        assert report.max_kkt <= tol.kkt


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_libsvm_decision_values(kernel, C):
    X, y, spec = _data(40, 3, 1, kernel)
    problem = bsvm.BinarySVMProblem(spec(X), y, C, "hinge", "free")
    report = cvxpy_dual(problem, "CLARABEL")
    cvx, variables = bsvm.cvxpy_dual(problem)
    alpha = variables["alpha"]
    solve(cvx, "CLARABEL")
    b = bsvm.bias_from_dual(problem, alpha.value, cvx.constraints[-1].dual_value)
    X_test = np.random.default_rng(2).standard_normal((15, 3))
    ours = bsvm.decision_from_dual(problem, alpha.value, b, spec(X_test, X))
    params = dict(kernel="linear") if kernel == "linear" else dict(kernel="rbf", gamma=0.5)
    svc = SVC(C=C, tol=1e-12, **params).fit(X, y)
    assert_decisions_agree(ours, svc.decision_function(X_test))
    svc_alpha = np.zeros(len(y))
    svc_alpha[svc.support_] = np.abs(svc.dual_coef_.ravel())
    assert relative_difference(bsvm.dual_objective(problem, svc_alpha), report.dual_objective) <= BACKEND_AGREEMENT


@pytest.mark.parametrize("loss", bsvm.LOSSES)
@pytest.mark.parametrize("bias", ["regularized", "none"])
def test_liblinear_decision_values(loss, bias):
    X, y, spec = _data(50, 4, 3)
    problem = bsvm.BinarySVMProblem(spec(X), y, 1.0, loss, bias)
    cvx, variables = bsvm.cvxpy_dual(problem)
    alpha = variables["alpha"]
    solve(cvx, "CLARABEL")
    b = bsvm.bias_from_dual(problem, alpha.value)
    w = X.T @ (y * alpha.value)
    model = LinearSVC(C=1.0, loss=loss, fit_intercept=bias == "regularized", intercept_scaling=1.0,
                      tol=1e-10, max_iter=200_000).fit(X, y)
    assert_decisions_agree(w, model.coef_.ravel())
    X_test = np.random.default_rng(4).standard_normal((10, 4))
    assert_decisions_agree(X_test @ w + b, model.decision_function(X_test))


def test_primal_recovers_the_same_decision_values():
    X, y, spec = _data(30, 2, 5, "rbf")
    problem = bsvm.BinarySVMProblem(spec(X), y, 2.0, "squared_hinge", "free")
    cvx, variables = bsvm.cvxpy_primal(problem)
    solve(cvx, "CLARABEL")
    primal_scores = variables["factor"] @ variables["v"].value + variables["b"].value
    dual, dual_variables = bsvm.cvxpy_dual(problem)
    alpha = dual_variables["alpha"]
    solve(dual, "CLARABEL")
    b = bsvm.bias_from_dual(problem, alpha.value, dual.constraints[-1].dual_value)
    assert_decisions_agree(bsvm.decision_from_dual(problem, alpha.value, b, problem.gram), primal_scores)


@pytest.mark.parametrize("kwargs, message", [
    (dict(C=0.0), "C must be > 0"),
    (dict(C=-1.0), "C must be > 0"),
    (dict(loss="log"), "loss must be one of"),
    (dict(bias="maybe"), "bias must be one of"),
])
def test_bad_input(kwargs, message):
    args = dict(gram=np.eye(2), y=np.array([1.0, -1.0]), C=1.0) | kwargs
    with pytest.raises(ValueError, match=message):
        bsvm.BinarySVMProblem(**args)
    with pytest.raises(ValueError, match="y must contain only"):
        bsvm.BinarySVMProblem(np.eye(2), np.array([1.0, 0.0]), 1.0)
