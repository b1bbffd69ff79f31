"""The one result type every solver returns, and the one non-convergence warning."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning

__all__ = ["SolverResult", "relative_gap", "warn_not_converged"]


@dataclass
class SolverResult:
    """What a solver found, and why it stopped.

    ``primal`` / ``dual`` hold named arrays (``W``, ``b``, ``alpha`` …) as the formulation names
    them. ``stop_rule`` says which quantity stopped the run (e.g. ``"relative duality gap"``,
    ``"Frank-Wolfe gap"``) and ``stop_value`` its final value; ``history`` has one list per tracked
    quantity, one entry per iteration.
    """

    primal: dict
    dual: dict
    converged: bool
    n_iter: int
    stop_value: float
    stop_rule: str
    solve_time: float
    history: dict = field(default_factory=dict)
    solver: str = ""


def warn_not_converged(solver: str, stop_rule: str, reached: float, tol: float, max_iter: int) -> None:
    """Raise the ``ConvergenceWarning`` a solver emits when ``max_iter`` ends it (STYLE rule 3)."""
    warnings.warn(
        f"{solver} did not converge in {max_iter} iterations: {stop_rule} reached {reached:.3e}, "
        f"tolerance asked {tol:.1e}. Increase max_iter or loosen tol.",
        ConvergenceWarning, stacklevel=3)


def relative_gap(primal, dual):
    """The relative duality gap the exact solvers stop on, ``(P − D) / max(1, |P|, |D|)`` (elementwise)."""
    return (primal - dual) / np.maximum(1.0, np.maximum(np.abs(primal), np.abs(dual)))
