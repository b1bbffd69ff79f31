"""The one result type every solver returns, and the one non-convergence warning."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mlsvm.formulations.evaluation import relative_gap

__all__ = ["SolverResult", "CertifiedStop", "relative_gap", "warn_not_converged", "warn_stalled",
           "check_finite_point"]


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


class CertifiedStop:
    """A solver's stopping target tied to the certificate it will be graded on.

    A solver stops on its own cheap quantity (usually the relative duality gap) reaching
    :attr:`target`. The report then grades the point by the formulation's scaled KKT residuals
    too (:func:`mlsvm.report.build_report`), which a gap can meet while a residual does not (the gap
    is quadratic in the gradient near the optimum). So when the solver's own rule is met it asks
    :meth:`accept`: with no ``certificate`` callable, or when ``certificate(point) ≤ tol``, stop;
    otherwise the target is divided by 10 and the solver goes on. Below ``floor`` the solver has
    stalled at round-off (:attr:`stalled`) and stops with ``converged=False``.

    Parameters
    ----------
    tol : float
        The tolerance asked.
    certificate : callable or None
        Computes the largest scaled KKT residual of a point (see
        :class:`mlsvm.solvers.result.CertifiedStop`); None: the solver stops on its own gap alone.
    floor : float
        Below this target the solver has stalled at round-off.
    """

    def __init__(self, tol: float, certificate=None, floor: float = 1e-15):
        self.tol, self.target, self.certificate, self.floor = tol, tol, certificate, floor
        self.residual = float("nan")

    def accept(self, *point) -> bool:
        if self.certificate is None:
            return True
        self.residual = float(self.certificate(*point))
        if self.residual <= self.tol:
            return True
        self.target /= 10.0
        return False

    @property
    def stalled(self) -> bool:
        return self.target < self.floor


def check_finite_point(primal: dict, dual: dict) -> None:
    """Raise ``FloatingPointError`` when a point (the named arrays of a :class:`SolverResult`) has
    an entry that is not finite: no model can be built from it, and the estimator's ``float_guard``
    turns the error into one naming its hyperparameters.

    Parameters
    ----------
    primal : dict
        Named primal arrays.
    dual : dict
        Named dual arrays.
    """
    for part in (primal, dual):
        for key, value in part.items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f" and not np.all(np.isfinite(value)):
                raise FloatingPointError(f"the solver's point is not finite ({key})")


def warn_stalled(solver: str, stop_rule: str, reached: float, residual: float, tol: float) -> None:
    """The ``ConvergenceWarning`` of a solver that stalled (its stopping value stopped decreasing:
    round-off, or a conditioning its steps cannot resolve): more iterations would not help, so it
    does not advise raising ``max_iter``.

    Parameters
    ----------
    solver : str
        Solver name.
    stop_rule : str
        Which quantity stopped the solver, and whether it is relative or absolute.
    reached : float
        Value of the stop quantity reached.
    residual : float
        Largest scaled KKT residual reached.
    tol : float
        Tolerance asked.
    """
    certificate = (f", the certificate's largest scaled KKT residual {residual:.3e}"
                   if residual == residual else "")
    warnings.warn(
        f"{solver} stalled (no further progress: round-off or conditioning): {stop_rule} reached "
        f"{reached:.3e}{certificate}; tolerance asked {tol:.1e}. More iterations will not help: "
        "converged=False.",
        ConvergenceWarning, stacklevel=3)
