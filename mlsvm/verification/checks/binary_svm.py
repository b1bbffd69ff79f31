"""Binary SVM checks: CVXPY primal = dual on two backends, and LIBSVM / LIBLINEAR reach the same
optimum (SVC: hinge, free bias, any kernel; LinearSVC: linear kernel, regularized or no bias)."""

from __future__ import annotations

import time

import numpy as np
from sklearn.svm import SVC, LinearSVC

from mlsvm.formulations import binary_svm as bsvm
from mlsvm.kernels import make_kernel
from mlsvm.solvers.cvxpy_tools import CROSSCHECK_BACKEND, solve
from mlsvm.verification.problems import binary_problems
from mlsvm.verification.registry import Check, compare, graded_on_value
from mlsvm.report import FitReport

MODEL = "binary_svm"


def dual_report(problem: bsvm.BinarySVMProblem, alpha, b, solver: str, elapsed: float) -> FitReport:
    """FitReport of a dual point: numpy objectives at ``w = Σ α_i y_i φ(x_i)`` and KKT residuals."""
    return FitReport(
        primal_objective=bsvm.primal_objective(problem, problem.y * alpha, b),
        dual_objective=bsvm.dual_objective(problem, alpha),
        kkt=bsvm.kkt_residuals(problem, alpha, b), n_iter=0, converged=True,
        solve_time=elapsed, solver=solver)


def cvxpy_dual(problem: bsvm.BinarySVMProblem, backend: str) -> FitReport:
    """The CVXPY dual, graded on its recovered primal point (reference backend), or, for a
    cross-check backend, on the optimal value it reports (SPEC §3: backends agree on the value)."""
    start = time.perf_counter()
    cvx, variables = bsvm.cvxpy_dual(problem)
    alpha = variables["alpha"]
    optimum = -solve(cvx, backend)
    multiplier = cvx.constraints[-1].dual_value if problem.bias == "free" else None
    value = np.clip(alpha.value, 0.0, problem.C if problem.loss == "hinge" else None)
    report = dual_report(problem, value, bsvm.bias_from_dual(problem, value, multiplier),
                         f"cvxpy-{backend}", time.perf_counter() - start)
    return graded_on_value(report, optimum, backend)


def libsvm(problem: bsvm.BinarySVMProblem) -> FitReport:
    """SVC(kernel="precomputed", C) solves the hinge / free-bias dual (LIBSVM's C-SVC)."""
    start = time.perf_counter()
    model = SVC(C=problem.C, kernel="precomputed", tol=1e-12, shrinking=False).fit(problem.gram, problem.y)
    alpha = np.zeros(problem.y.size)
    alpha[model.support_] = np.abs(model.dual_coef_.ravel())
    # SVC's intercept is for classes ordered (−1, +1); its decision function is for +1.
    return dual_report(problem, alpha, float(model.intercept_[0]), "libsvm", time.perf_counter() - start)


def liblinear(problem: bsvm.BinarySVMProblem, X: np.ndarray) -> FitReport:
    """LinearSVC(C, loss, intercept_scaling=1): the regularized-bias (or no-bias) primal.

    ``tol=1e-10``: LIBLINEAR's projected-gradient test cannot be met at 1e-12 in double
    precision; it then runs to ``max_iter`` and drifts (measured: 2 % off on breast-cancer)."""
    start = time.perf_counter()
    model = LinearSVC(C=problem.C, loss=problem.loss, fit_intercept=problem.bias == "regularized",
                      intercept_scaling=1.0, tol=1e-10, max_iter=200_000, dual=True).fit(X, problem.y)
    w, b = model.coef_.ravel(), float(model.intercept_[0]) if problem.bias == "regularized" else 0.0
    scores = X @ w + b
    slack = np.maximum(0.0, 1.0 - problem.y * scores)
    loss = slack.sum() if problem.loss == "hinge" else slack @ slack
    primal = 0.5 * (w @ w + (b * b if problem.bias == "regularized" else 0.0)) + problem.C * loss
    return FitReport(primal, float("nan"), {}, int(model.n_iter_), True, time.perf_counter() - start, "liblinear")


def _variants(quick: bool):
    for reference in binary_problems(quick):
        kernels = ["linear"] if quick and reference.name.startswith("breast") else ["linear", "rbf"]
        for kernel in kernels:
            spec = make_kernel(kernel, "scale", X=reference.X)
            for loss in bsvm.LOSSES:
                for bias in bsvm.BIASES:
                    yield reference, kernel, bsvm.BinarySVMProblem(spec(reference.X), reference.Y, 1.0, loss, bias)


def checks(quick: bool) -> list[Check]:
    found = []
    for reference, kernel, problem in _variants(quick):
        name = f"{reference.name}/{kernel}/{problem.loss}/{problem.bias}-bias"

        def ground_truth(problem=problem):
            cvx, _ = bsvm.cvxpy_primal(problem)
            return solve(cvx, "CLARABEL")

        def dual_row(problem=problem, name=name, backend="CLARABEL", truth=ground_truth):
            solver = "cvxpy" if backend == "CLARABEL" else "cvxpy-crosscheck"
            return compare(MODEL, name, f"dual ({backend}) vs primal", solver, cvxpy_dual(problem, backend), truth())

        found.append(Check(MODEL, name, "dual (CLARABEL) vs primal", "cvxpy", dual_row))
        found.append(Check(MODEL, name, f"dual ({CROSSCHECK_BACKEND}) vs primal", "cvxpy-crosscheck",
                           lambda f=dual_row: f(backend=CROSSCHECK_BACKEND)))
        if problem.loss == "hinge" and problem.bias == "free":
            found.append(Check(MODEL, name, "dual", "libsvm",
                               lambda p=problem, n=name, t=ground_truth: compare(MODEL, n, "dual", "libsvm", libsvm(p), t())))
        if kernel == "linear" and problem.bias != "free":
            found.append(Check(MODEL, name, "primal", "liblinear",
                               lambda p=problem, n=name, t=ground_truth, X=reference.X:
                               compare(MODEL, n, "primal", "liblinear", liblinear(p, X), t())))
    return found
