"""The FitReport of SPEC §4: what every fitted estimator says about its own optimum."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["FitReport", "relative_difference"]


def relative_difference(a: float, b: float) -> float:
    """``|a − b| / max(1, |a|, |b|)``: relative for large values, absolute near zero.

    Every "agrees to 1e-6 relative" bar in the library and its tests uses this one definition.

    Parameters
    ----------
    a : float
        First value.
    b : float
        Second value.
    """
    return abs(a - b) / max(1.0, abs(a), abs(b))


@dataclass
class FitReport:
    """Objectives (the canonical ones of SPEC §2, numpy-evaluated), certificate and residuals.

    ``duality_gap`` is ``primal_objective − dual_objective`` written as a maximisation dual
    (≥ 0 up to round-off); ``relative_gap`` divides it by ``max(1, |primal|, |dual|)``.
    ``kkt`` maps residual names (``primal``, ``dual``, ``complementarity``, ``stationarity`` …)
    to scaled ∞-norms. ``stop_rule``/``stop_value`` say what stopped the solver.

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

    @property
    def duality_gap(self) -> float:
        return self.primal_objective - self.dual_objective

    @property
    def relative_gap(self) -> float:
        return self.duality_gap / max(1.0, abs(self.primal_objective), abs(self.dual_objective))

    @property
    def max_kkt(self) -> float:
        return max(self.kkt.values()) if self.kkt else float("nan")

    def as_dict(self) -> dict:
        out = asdict(self)
        out.pop("history")
        out.update(duality_gap=self.duality_gap, relative_gap=self.relative_gap, max_kkt=self.max_kkt)
        return out
