"""Matrix-SVM checks: CVXPY dual = primal (Clarabel; OSQP as cross-check: QPs, see
cvxpy_tools.CROSSCHECK_BACKEND) and every registered MatrixSVM solver that applies ("fast", and each
of :mod:`mlsvm.registry.matrix_svm`: "ipm" on the hinge without A, "dcd" and "liblinear-dcd" on the same
with the linear kernel, "closed-form" on the squared
loss, "apg", "agd", "cvxpy") reaches the CVXPY primal optimum, for the hinge (eq. 1 / 8), the MLRL
extension with a correlation matrix A (eq. 10) and the least-squares variant (eq. 12 / 14)."""

from __future__ import annotations

import time

import numpy as np

from mlsvm import registry
from mlsvm.estimators.matrix_svm import MatrixSVM
from mlsvm.formulations import matrix_svm as formulation
from mlsvm.kernels import make_kernel
from mlsvm.solvers.cvxpy_tools import CROSSCHECK_BACKEND, solve
from mlsvm.verification.problems import multiclass_problems, multilabel_problems
from mlsvm.report import FitReport
from mlsvm.verification.registry import Check, compare, graded_on_value

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
    cvx, variables = formulation.cvxpy_dual(problem)
    optimum = -solve(cvx, backend)
    primal, dual = formulation.solution_from_cvxpy(problem, cvx, variables)
    evaluation = formulation.evaluate(problem, primal, dual)
    report = FitReport(evaluation.primal_objective, evaluation.dual_objective, evaluation.kkt,
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


def _applies(solver: str, loss: str, correlation, kernel: str) -> bool:
    if solver == "ipm":
        return loss == "hinge" and correlation is None
    if solver in ("dcd", "liblinear-dcd"):
        return loss == "hinge" and correlation is None and kernel == "linear"
    if solver == "closed-form":
        return loss == "squared"
    return solver != "cvxpy"   # the CVXPY rows grade the dual's own point, above


def checks(quick: bool) -> list[Check]:
    found = []
    for reference, kernel, loss, correlation in _variants(quick):
        gram = make_kernel(kernel, "scale", X=reference.X)(reference.X)
        problem = formulation.MatrixSVMProblem(gram, reference.Y, 1.0, correlation, loss)
        name = f"{reference.name}/{kernel}/{loss}" + ("/A" if correlation is not None else "")

        def truth(problem=problem):
            cvx, _ = formulation.cvxpy_primal(problem)
            return solve(cvx, "CLARABEL")

        for backend, solver in (("CLARABEL", "cvxpy"), (CROSSCHECK_BACKEND, "cvxpy-crosscheck")):
            found.append(Check(MODEL, name, f"dual ({backend}) vs primal", solver,
                               lambda p=problem, n=name, b=backend, s=solver, t=truth:
                               compare(MODEL, n, f"dual ({b}) vs primal", s, cvxpy_dual_report(p, b), t())))
        for solver in (s for s in registry.model(MODEL).solver_names() if _applies(s, loss, correlation, kernel)):
            def run(solver=solver, reference=reference, kernel=kernel, loss=loss, correlation=correlation,
                    name=name, t=truth):
                estimator = MatrixSVM(C=1.0, correlation=correlation, loss=loss, kernel=kernel, gamma="scale",
                                      solver=solver, tol=CHECK_TOL, max_iter=200_000)
                report = estimator.fit(reference.X, reference.Y).fit_report_
                return compare(MODEL, name, "dual (estimator)", solver, report, t())
            found.append(Check(MODEL, name, "dual (estimator)", solver, run))
    return found
