"""The FitReport of SPEC §4, built in one place from a solver's result and its formulation's grade.

A solver never grades itself: :func:`build_report` takes the :class:`Evaluation` that the
formulation's own ``evaluate`` computed at the returned point, and the :class:`SolverResult`.
The one invariant of the library lives here: a report says ``converged=True`` only when the solver
stopped on its own rule **and** the recomputed relative duality gap and every scaled KKT residual
meet the tolerance asked. Anything else is ``converged=False`` with a ``ConvergenceWarning`` that
quotes both values.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field

from sklearn.exceptions import ConvergenceWarning

from mlsvm.formulations.evaluation import Evaluation, relative_difference, relative_gap
from mlsvm.solvers.result import SolverResult

__all__ = ["FitReport", "build_report", "certificate_failures", "relative_difference"]


@dataclass
class FitReport:
    """Objectives (the canonical ones of SPEC §2, numpy-evaluated), certificate and residuals.

    ``duality_gap`` is ``primal_objective − dual_objective`` written as a maximisation dual
    (≥ 0 up to round-off); ``relative_gap`` divides it by ``max(1, |primal|, |dual|)``.
    ``kkt`` maps residual names (``primal``, ``dual``, ``complementarity``, ``stationarity`` …)
    to scaled ∞-norms. ``stop_rule``/``stop_value`` say what stopped the solver; ``tol`` is the
    tolerance the certificate was graded against.

    Parameters
    ----------
    primal_objective : float
        Canonical primal objective (SPEC §2), evaluated in numpy.
    dual_objective : float
        Canonical dual objective.
    kkt : dict
        Scaled KKT residuals by name.
    n_iter : int
        Iterations performed.
    converged : bool
        Whether the stop rule was met (never set by a solver that merely ran out of budget).
    solve_time : float
        Wall-clock time of the solve in seconds.
    solver : str
        Name of the solver.
    stop_rule : str
        Which quantity stopped the solver, and whether it is relative or absolute.
    stop_value : float
        The value of that quantity at the end.
    history : dict
        Per-iteration records of the solver (same keys for every iteration).
    tol : float
        The tolerance asked of the solver.
    """

    primal_objective: float
    dual_objective: float
    kkt: dict
    n_iter: int
    converged: bool
    solve_time: float
    solver: str
    stop_rule: str = ""
    stop_value: float = float("nan")
    history: dict = field(default_factory=dict, repr=False)
    tol: float = float("nan")

    @property
    def duality_gap(self) -> float:
        return self.primal_objective - self.dual_objective

    @property
    def relative_gap(self) -> float:
        return float(relative_gap(self.primal_objective, self.dual_objective))

    @property
    def max_kkt(self) -> float:
        return max(self.kkt.values()) if self.kkt else float("nan")

    def as_dict(self) -> dict:
        out = asdict(self)
        out.pop("history")
        out.update(duality_gap=self.duality_gap, relative_gap=self.relative_gap, max_kkt=self.max_kkt)
        return out


def certificate_failures(evaluation: Evaluation, tol: float) -> list[str]:
    """What keeps ``evaluation`` from certifying optimality at ``tol`` (empty: it certifies).

    The relative gap must lie in ``[−tol, tol]`` (a dual above the primal beyond round-off is a
    wrong point, not a good one) and every scaled KKT residual must be ``≤ tol``; a missing dual
    or a non-finite value never certifies.

    Parameters
    ----------
    evaluation : Evaluation
        The formulation's grading of a point.
    tol : float
        The tolerance asked.
    """
    failures = []
    gap = evaluation.relative_gap
    if not math.isfinite(gap):
        failures.append(f"relative gap {gap}")
    elif not abs(gap) <= tol:
        failures.append(f"relative gap {gap:.2e} (tolerance {tol:.1e})")
    if not evaluation.kkt:
        failures.append("no KKT residuals (no dual point)")
    for name, value in evaluation.kkt.items():
        if not value <= tol:  # also catches NaN
            failures.append(f"KKT {name} residual {value:.2e} (tolerance {tol:.1e})")
    return failures


def build_report(evaluation: Evaluation, result: SolverResult, tol: float, solver: str) -> FitReport:
    """The :class:`FitReport` of ``result`` graded by ``evaluation`` at ``tol`` (module docstring).

    ``solver`` is the name that ran (``"fast"`` resolved). Warns when the solver claimed
    convergence but the recomputed certificate does not meet ``tol``; a solver that did not
    converge has already warned why (stall, divergence, budget).

    Parameters
    ----------
    evaluation : Evaluation
        The formulation's grading of the solver's point.
    result : SolverResult
        What the solver returned.
    tol : float
        The tolerance asked.
    solver : str
        Name of the solver that ran.
    """
    failures = certificate_failures(evaluation, tol)
    if result.converged and failures:
        # a CVXPY backend's rule is its status, with no value of its own (stop_value is NaN)
        own_rule = (result.stop_rule if math.isnan(result.stop_value)
                    else f"{result.stop_rule} = {result.stop_value:.2e}")
        warnings.warn(
            f"{solver} stopped on its own rule ({own_rule}) but the "
            f"recomputed certificate does not meet tol: " + "; ".join(failures) + ". converged=False.",
            ConvergenceWarning, stacklevel=3)
    return FitReport(
        primal_objective=float(evaluation.primal_objective), dual_objective=float(evaluation.dual_objective),
        kkt=dict(evaluation.kkt), n_iter=int(result.n_iter), converged=bool(result.converged and not failures),
        solve_time=float(result.solve_time), solver=solver, stop_rule=result.stop_rule,
        stop_value=float(result.stop_value), history=result.history, tol=float(tol))
