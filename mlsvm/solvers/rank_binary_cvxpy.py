"""The binary approach (Problem 3) by CVXPY: the epigraph primal SOCP, certified by its own grade.

The primal is solved, not the dual: the dual does not determine ``w_k`` for a label whose optimal
``λ_k`` is 0 (:mod:`mlsvm.formulations.rank_binary`). The point is the backend's ``(w, b)`` with the
multipliers ``α`` (margin constraints) and ``λ`` (norm constraints) of its solution. Interior-point
multipliers are accurate only to about the square root of the backend's gap (measured:
w-stationarity 3e-7 at a relative gap of 1e-12, ECOS, synthetic-30x4x4/rbf), so the point that
stationarity assigns to them (:func:`~mlsvm.formulations.rank_binary.stationary_primal`) is graded
too and the better certified one kept.

Backends: ``cvxpy_solver`` first; when its status is not ``optimal`` or its point does not certify
``tol`` (relative gap and every scaled KKT residual, as the fit report grades), the other backends
of :data:`BACKENDS` are tried in turn and the best certified point is returned
(``stop_rule`` names the backend). ECOS ends "optimal_inaccurate" on synthetic-80x6x5/poly; Clarabel
on ~1 in 10 small instances of this SOCP; SCS's multipliers are the most accurate measured here
(w-stationarity ≤ 2e-8) but it is the slowest. No backend answering ``optimal``:
:class:`~mlsvm.solvers.cvxpy_tools.GroundTruthError` quoting each.
"""

from __future__ import annotations

import time

from mlsvm.formulations import rank_binary
from mlsvm.solvers.cvxpy_tools import GroundTruthError, check_backend, solve_first_optimal
from mlsvm.solvers.result import SolverResult

__all__ = ["solve_primal", "BACKENDS"]

#: the order in which backends are tried after the one asked for
BACKENDS = ("ECOS", "CLARABEL", "SCS")


def _certificate(problem, primal: dict, dual: dict) -> float:
    """``max(|relative gap|, KKT residuals)`` of the point, as the fit report grades it."""
    evaluation = rank_binary.evaluate(problem, primal, dual)
    return max(abs(evaluation.relative_gap), evaluation.max_kkt)


def solve_primal(problem: rank_binary.BinaryApproachProblem, cvxpy_solver: str = "ECOS", *,
                 tol: float = 1e-7) -> SolverResult:
    """Solve Problem 3's CVXPY primal (module docstring); ``primal = {"coef", "b"}``,
    ``dual = {"alpha", "lam"}``, ``stop_value`` the certificate of the returned point.

    Parameters
    ----------
    problem : BinaryApproachProblem
        The binary-approach problem.
    cvxpy_solver : str, default="ECOS"
        The CVXPY backend tried first; the others of ``BACKENDS`` follow when it does not certify.
    tol : float, default=1e-7
        Tolerance the returned point's certificate must meet.
    """
    start = time.perf_counter()
    first = check_backend(cvxpy_solver)
    backends = (first, *(backend for backend in BACKENDS if backend != first))
    best, failures, n_iter = None, [], 0
    for backend in backends:
        try:
            (cvx, variables), _, _ = solve_first_optimal(lambda: rank_binary.cvxpy_primal(problem), (backend,))
        except GroundTruthError as error:
            failures.append(str(error))
            continue
        n_iter += int(getattr(cvx.solver_stats, "num_iters", 0) or 0)
        primal, dual = rank_binary.solution_from_cvxpy(problem, cvx, variables)
        stationary = rank_binary.stationary_primal(problem, primal["coef"], dual["alpha"], dual["lam"])
        for point, how in ((primal, ""), (stationary, "; w_k from the multipliers (stationarity)")):
            value = _certificate(problem, point, dual)
            if best is None or value < best[0]:
                best = (value, point, dual, f"CVXPY {backend} status optimal{how}")
        if best[0] <= tol:
            break
    if best is None:
        raise GroundTruthError(
            f"no CVXPY backend answered 'optimal' on the binary-approach primal (cvxpy_solver={first!r} "
            "first, then the others), so there is no model to report; solver='fast' (water-filling) may "
            "solve this problem: " + " | ".join(failures))
    value, primal, dual, rule = best
    # every backend used answered "optimal"; the report grades the point against tol (and warns)
    return SolverResult(primal=primal, dual=dual, converged=True, n_iter=n_iter, stop_value=value,
                        stop_rule=rule, solve_time=time.perf_counter() - start, history={}, solver="cvxpy")
