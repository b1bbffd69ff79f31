"""Rank-SVM checks: the CVXPY primal (Clarabel) is the reference; every registered solver
(:mod:`mlsvm.registry.rank_svm`: "fast" as resolved, the exact "ipm" and "alm", Frank–Wolfe within
its certified gap, the CVXPY dual on Clarabel) and the dual on OSQP (the QP cross-check, graded on
its value) must reach it. Multilabel problems (including the awkward label structures) and
multiclass ones (Weston–Watkins case), linear kernel (quick) and RBF (full).

Every solver runs through the estimator, so the rows grade the same FitReport a user gets; a
ConvergenceWarning (budget, or a certificate that does not meet ``tol``) is a failed row."""

from __future__ import annotations

import time
import warnings

from mlsvm import registry
from mlsvm.estimators.rank_svm import RankSVM
from mlsvm.formulations import rank_svm as rs
from mlsvm.kernels import make_kernel
from mlsvm.report import FitReport
from mlsvm.solvers.cvxpy_tools import CROSSCHECK_BACKEND, solve
from mlsvm.verification.problems import multiclass_problems, multilabel_problems
from mlsvm.verification.registry import Check, compare

MODEL = "rank_svm"
#: Frank–Wolfe is sublinear: it runs to this certified relative gap (quick, full) in the checks
FRANK_WOLFE_TOL = {True: 1e-2, False: 1e-3}
#: Frank–Wolfe converges as O(1/k): measured 12,534 iterations to a 1e-3 relative FW gap on
#: wine-150 (linear), so the full set allows more iterations than the quick one
FRANK_WOLFE_MAX_ITER = {True: 5000, False: 20_000}


def _primal_reference(X, Y, kernel: str, C: float) -> float:
    gram = make_kernel(kernel, "scale", X=X)(X)
    cvx, _ = rs.cvxpy_primal(rs.make_problem(gram, Y, C))
    return solve(cvx, "CLARABEL")


def _crosscheck(X, Y, kernel: str, C: float, backend: str) -> FitReport:
    """The dual on a second backend, graded on the optimal value it reports (SPEC §3)."""
    start = time.perf_counter()
    gram = make_kernel(kernel, "scale", X=X)(X)
    cvx, _ = rs.cvxpy_dual(rs.make_problem(gram, Y, C))
    value = -solve(cvx, backend)
    return FitReport(value, value, {}, 0, True, time.perf_counter() - start, f"cvxpy-{backend}")


def _estimator_report(X, Y, kernel: str, C: float, solver: str, quick: bool) -> FitReport:
    tol = FRANK_WOLFE_TOL[quick] if solver == "frank-wolfe" else 1e-8
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a non-converged run is a failed row, not a quiet one
        max_iter = FRANK_WOLFE_MAX_ITER[quick] if solver == "frank-wolfe" else 5000
        model = RankSVM(C=C, kernel=kernel, solver=solver, tol=tol, max_iter=max_iter).fit(X, Y)
    return model.fit_report_


def _problems(quick: bool):
    for reference in multilabel_problems(quick) + multiclass_problems(quick):
        kernels = ("linear",) if quick else ("linear", "rbf")
        for kernel in kernels:
            yield reference, kernel


def checks(quick: bool) -> list[Check]:
    """The Rank-SVM rows of ``mlsvm verify``: every solver against the CVXPY ground truth.

    Parameters
    ----------
    quick : bool
        The small problem set and the linear kernel only (True), or the full set with RBF.
    """
    found = []
    C = 1.0
    for reference, kernel in _problems(quick):
        name = f"{reference.name}/{kernel}/C={C:g}"
        X, Y = reference.X, reference.Y
        cache: dict = {}

        def truth(X=X, Y=Y, kernel=kernel, cache=cache):
            if "value" not in cache:
                cache["value"] = _primal_reference(X, Y, kernel, C)
            return cache["value"]

        # "fast" (resolved to "ipm" on the linear kernel, "alm" otherwise) also has rows of its own
        for solver in registry.model(MODEL).solver_names():
            formulation = "dual (CLARABEL) vs primal" if solver == "cvxpy" else "dual"
            found.append(Check(MODEL, name, formulation, solver,
                               lambda X=X, Y=Y, k=kernel, s=solver, n=name, f=formulation, t=truth:
                               compare(MODEL, n, f, s, _estimator_report(X, Y, k, C, s, quick), t())))
        found.append(Check(MODEL, name, f"dual ({CROSSCHECK_BACKEND}) vs primal", "cvxpy-crosscheck",
                           lambda X=X, Y=Y, k=kernel, n=name, t=truth:
                           compare(MODEL, n, f"dual ({CROSSCHECK_BACKEND}) vs primal", "cvxpy-crosscheck",
                                   _crosscheck(X, Y, k, C, CROSSCHECK_BACKEND), t())))
    return found


__all__ = ["checks", "MODEL", "FRANK_WOLFE_TOL"]
