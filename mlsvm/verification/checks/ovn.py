"""OvN checks: for each built-in problem, kernel and the four constraint variants, the CVXPY primal
optimum (Clarabel) is the ground truth. Rows: every registered solver through the estimator (the
FitReport a user gets) — the derived dual by CVXPY on Clarabel (graded on the primal point it
implies: ``A = ΛS``, ``b`` = the equal-mass multipliers), the exact dual IPM (``ipm``, also as
``fast``) and the paper's MM (certified by its own duality gap) — and the dual on a second backend
(ECOS; OSQP where ECOS only reaches 'optimal_inaccurate'), graded on its optimal value.

No warning is ignored: a fit that did not converge is a failed row. MM is sublinear: it runs to a
certified relative gap (and scaled KKT residuals) of ``MM_TOL`` within ``MM_MAX_ITER``
iterations (measured on the quick set: at most 1,227 iterations)."""

from __future__ import annotations

import time
import warnings

from sklearn.exceptions import ConvergenceWarning

from mlsvm.estimators.ovn import OvNSVM
from mlsvm.formulations import ovn
from mlsvm.kernels import make_kernel
from mlsvm.report import FitReport
from mlsvm.solvers.cvxpy_tools import GroundTruthError, solve
from mlsvm.verification.problems import multiclass_problems, multilabel_problems
from mlsvm.verification.registry import Check, compare

MODEL = "ovn"
VARIANTS = [(w, b) for w in ovn.CONSTRAINTS for b in ovn.CONSTRAINTS]
HYPERPARAMETERS = dict(alpha=0.3, beta=1.0, gamma_b=0.5)
#: MM's certified relative gap (and KKT residuals) in the checks, and its iteration budget (quick, full)
MM_TOL = 1e-4
MM_MAX_ITER = {True: 5000, False: 20_000}
#: estimator settings per registered solver name
SOLVERS = {
    "cvxpy": dict(solver="cvxpy", cvxpy_solver="CLARABEL", tol=1e-9),
    "fast": dict(solver="fast", tol=1e-9, max_iter=100),
    "ipm": dict(solver="ipm", tol=1e-9, max_iter=100),
    "mm": dict(solver="mm", epsilon=1e-6, tol=MM_TOL),
}
FORMULATION = {"cvxpy": "dual (CLARABEL) vs primal", "fast": "dual", "ipm": "dual", "mm": "primal"}


def crosscheck_report(problem: ovn.OvNProblem) -> tuple[str, FitReport]:
    """The CVXPY dual on ECOS (OSQP where ECOS stops at 'optimal_inaccurate', which is never
    accepted), graded on the optimal value it reports (backends agree on values, SPEC §3)."""
    for backend in ("ECOS", "OSQP"):
        start = time.perf_counter()
        try:
            optimum = -solve(ovn.cvxpy_dual(problem)[0], backend)
        except GroundTruthError:
            if backend == "OSQP":
                raise
            continue
        return backend, FitReport(optimum, optimum, {}, 0, True, time.perf_counter() - start, f"cvxpy-{backend}")


def _cases(quick: bool):
    problems = multilabel_problems(quick) + multiclass_problems(quick)
    for reference in problems:
        kernels = ["linear"] if quick else ["linear", "rbf"]
        for kernel in kernels:
            spec = make_kernel(kernel, "scale", X=reference.X)
            for w_constraint, b_constraint in VARIANTS:
                problem = ovn.OvNProblem(spec(reference.X), reference.Y, w_constraint=w_constraint,
                                         b_constraint=b_constraint, features=reference.X if kernel == "linear" else None,
                                         **HYPERPARAMETERS)
                yield reference, kernel, problem


def _estimator_report(reference, kernel, problem, solver, quick) -> FitReport:
    settings = dict(SOLVERS[solver], max_iter=MM_MAX_ITER[quick]) if solver == "mm" else SOLVERS[solver]
    model = OvNSVM(kernel=kernel, gamma="scale", w_constraint=problem.w_constraint,
                   b_constraint=problem.b_constraint, **settings, **HYPERPARAMETERS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a non-converged run is a failed row
        return model.fit(reference.X, reference.Y).fit_report_


def checks(quick: bool) -> list[Check]:
    found = []
    for reference, kernel, problem in _cases(quick):
        name = f"{reference.name}/{kernel}/{problem.w_constraint}-w/{problem.b_constraint}-b"
        cache = {}

        def ground_truth(problem=problem, cache=cache):
            if "value" not in cache:
                cache["value"] = solve(ovn.cvxpy_primal(problem)[0], "CLARABEL")
            return cache["value"]

        def crosscheck_row(problem=problem, name=name, truth=ground_truth):
            backend, report = crosscheck_report(problem)
            return compare(MODEL, name, f"dual ({backend}) vs primal", "cvxpy-crosscheck", report, truth())

        def solver_row(solver, reference=reference, kernel=kernel, problem=problem, name=name, truth=ground_truth):
            return compare(MODEL, name, FORMULATION[solver], solver,
                           _estimator_report(reference, kernel, problem, solver, quick), truth())

        for solver in SOLVERS:
            found.append(Check(MODEL, name, FORMULATION[solver], solver, lambda f=solver_row, s=solver: f(s)))
        found.append(Check(MODEL, name, "dual (ECOS) vs primal", "cvxpy-crosscheck", crosscheck_row))
    return found
