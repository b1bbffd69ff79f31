"""Matrix-SVM checks: CVXPY dual = primal (Clarabel; OSQP as cross-check: QPs, see cvxpy_tools.CROSSCHECK_BACKEND) and every MatrixSVM
solver ("fast" — which is "ipm", "apg" or the closed form —, "apg" where "fast" is "ipm", "agd", "cvxpy") reaches the CVXPY primal optimum, for the hinge (eq. 1 / 8), the
MLRL extension with a correlation matrix A (eq. 10) and the least-squares variant (eq. 12 / 14)."""

from __future__ import annotations

import time

import numpy as np

from mlsvm.formulations import matrix_svm as formulation
from mlsvm.kernels import make_kernel
from mlsvm.solvers.cvxpy_tools import CROSSCHECK_BACKEND, solve
from mlsvm.verification.problems import multiclass_problems, multilabel_problems
from mlsvm.verification.registry import Check, compare, graded_on_value
from mlsvm.report import FitReport

MODEL = "matrix_svm"
#: solver tolerance for the checks: the hinge's KKT residuals come out ≈ 3× the relative gap
CHECK_TOL = 1e-9


def correlation_matrix(n_labels: int, seed: int = 11) -> np.ndarray:
    """A fixed, non-symmetric, well-conditioned label-correlation matrix for the MLRL checks."""
    rng = np.random.default_rng(seed)
    return np.eye(n_labels) + 0.3 * rng.standard_normal((n_labels, n_labels))


def cvxpy_dual_report(problem: formulation.MatrixSVMProblem, backend: str) -> FitReport:
    """The CVXPY dual graded on its own point (Clarabel) or on the value it reports (a cross-check
    backend: SPEC §3, backends agree on the value)."""
    start = time.perf_counter()
    cvx, alpha = formulation.dual_problem(problem)
    optimum = -solve(cvx, backend)
    value = np.clip(alpha.value, 0.0, problem.C) if problem.loss == "hinge" else alpha.value
    report = FitReport(formulation.primal_objective(problem, formulation.coef_from_dual(problem, value)),
                       formulation.dual_objective(problem, value), formulation.kkt_residuals(problem, value),
                       0, True, time.perf_counter() - start, f"cvxpy-{backend}")
    return graded_on_value(report, optimum, backend)


def _variants(quick: bool):
    problems = multilabel_problems(quick) + multiclass_problems(quick)
    for reference in problems:
        for kernel in (["linear"] if quick else ["linear", "rbf"]):
            for loss in formulation.LOSSES:
                correlations = [None]
                if reference.name.startswith("synthetic"):
                    correlations.append(correlation_matrix(reference.Y.shape[1]))
                for correlation in correlations:
                    yield reference, kernel, loss, correlation


def checks(quick: bool) -> list[Check]:
    from mlsvm.estimators.matrix_svm import MatrixSVM

    found = []
    for reference, kernel, loss, correlation in _variants(quick):
        gram = make_kernel(kernel, "scale", X=reference.X)(reference.X)
        problem = formulation.MatrixSVMProblem(gram, reference.Y, 1.0, correlation, loss)
        name = f"{reference.name}/{kernel}/{loss}" + ("/A" if correlation is not None else "")

        def truth(problem=problem):
            cvx, _ = formulation.primal_problem(problem)
            return solve(cvx, "CLARABEL")

        for backend, solver in (("CLARABEL", "cvxpy"), (CROSSCHECK_BACKEND, "cvxpy-crosscheck")):
            found.append(Check(MODEL, name, f"dual ({backend}) vs primal", solver,
                               lambda p=problem, n=name, b=backend, s=solver, t=truth:
                               compare(MODEL, n, f"dual ({b}) vs primal", s, cvxpy_dual_report(p, b), t())))
        solvers = ["fast", "agd"]
        if kernel == "linear" and loss == "hinge" and correlation is None:
            solvers.append("apg")    # "fast" runs "ipm" here: the gradient solver keeps its own row
        for solver in solvers:
            def run(solver=solver, reference=reference, kernel=kernel, loss=loss, correlation=correlation,
                    name=name, t=truth):
                estimator = MatrixSVM(C=1.0, correlation=correlation, loss=loss, kernel=kernel, gamma="scale",
                                      solver=solver, tol=CHECK_TOL, max_iter=200_000)
                report = estimator.fit(reference.X, reference.Y).fit_report_
                return compare(MODEL, name, "dual (estimator)", solver, report, t())
            found.append(Check(MODEL, name, "dual (estimator)", solver, run))
    return found
