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

    Parameters
    ----------
    primal : dict
        Named primal arrays (the names the formulation's evaluation reads).
    dual : dict
        Named dual arrays.
    converged : bool
        Whether the stop rule was met (never set by a solver that merely ran out of budget).
    n_iter : int
        Iterations performed.
    stop_value : float
        The value of that quantity at the end.
    stop_rule : str
        Which quantity stopped the solver, and whether it is relative or absolute.
    solve_time : float
        Wall-clock time of the solve in seconds.
    history : dict
        Per-iteration records of the solver (same keys for every iteration).
    solver : str
        Name of the solver.
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
    """Raise the ``ConvergenceWarning`` a solver emits when ``max_iter`` ends it (STYLE rule 3).

    Parameters
    ----------
    solver : str
        Solver name for the message.
    stop_rule : str
        Which quantity stopped the solver, and whether it is relative or absolute.
    reached : float
        Value of the stop quantity reached.
    tol : float
        Tolerance asked.
    max_iter : int
        Budget that was exhausted.
    """
    warnings.warn(
        f"{solver} did not converge in {max_iter} iterations: {stop_rule} reached {reached:.3e}, "
        f"tolerance asked {tol:.1e}. Increase max_iter or loosen tol.",
        ConvergenceWarning, stacklevel=3)


def relative_gap(primal, dual):
    """The relative duality gap the exact solvers stop on, ``(P − D) / max(1, |P|, |D|)`` (elementwise).

    Parameters
    ----------
    primal : float or ndarray
        Primal objective(s) P.
    dual : float or ndarray
        Dual objective(s) D.
    """
    return (primal - dual) / np.maximum(1.0, np.maximum(np.abs(primal), np.abs(dual)))
