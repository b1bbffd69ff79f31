"""The interior-point loop shared by the Matrix-SVM, Rank-SVM and OvN solvers (:func:`box_qp_ipm`),
and the pieces their Newton systems share."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cho_factor

from mlsvm.solvers.result import CertifiedStop, SolverResult, check_finite_point, warn_not_converged, warn_stalled

__all__ = ["box_qp_ipm", "Iterate", "Measure", "max_step", "packed_outer", "ridged_cholesky", "RIDGES"]

#: relative ridges tried in turn when a Newton system is indefinite to round-off
RIDGES = (0.0, 1e-14, 1e-12, 1e-10, 1e-8)
#: fraction of the step to the boundary taken
STEP_FRACTION = 0.995
#: iterations without a new low of the stopping value or of μ after which the interior point has stalled
STALL_WINDOW = 10


def max_step(value: np.ndarray, change: np.ndarray) -> float:
    """Largest ``t ≤ 1`` with ``value + t·change ≥ 0`` (for ``value > 0``): the step to the boundary.

    Parameters
    ----------
    value : ndarray
        Current positive variables.
    change : ndarray
        Search direction.
    """
    shrinking = change < 0
    if not np.any(shrinking):
        return 1.0
    return float(min(1.0, np.min(-value[shrinking] / change[shrinking])))


def packed_outer(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row-wise outer products ``M_ia M_ib`` for ``a ≤ b``, packed: (n × w(w+1)/2), with the index
    arrays ``(rows, cols) = triu_indices(w)`` that unpack them. ``weightsᵀ @ packed`` then forms
    ``Σ_i weight_i M_iM_iᵀ`` for many weight vectors in one matrix product.

    Parameters
    ----------
    matrix : array of shape (n, r)
        Rows whose outer products are packed.
    """
    n, width = matrix.shape
    rows, cols = np.triu_indices(width)
    packed = np.empty((n, rows.size))
    for a, offset in enumerate(np.flatnonzero(np.diff(rows, prepend=-1))):
        packed[:, offset: offset + width - a] = matrix[:, a: a + 1] * matrix[:, a:]
    return packed, rows, cols


def ridged_cholesky(system: np.ndarray):
    """``cho_factor`` (lower) of a Newton system that is positive definite in exact arithmetic.
    Near the optimum D⁻¹ spans many decades and directions held up only by variables at their
    bounds (or by the identity beside entries ~1e16) can be lost to round-off; then the smallest
    relative ridge of :data:`RIDGES` (times the largest diagonal entry) that restores definiteness
    is added. The step becomes an inexact Newton step; the solvers' stopping rule, a duality gap,
    does not depend on the step being exact.

    Parameters
    ----------
    system : array of shape (m, m)
        Symmetric positive (semi)definite system.
    """
    scale = float(np.max(np.diag(system)))
    for ridge in RIDGES:
        try:
            return cho_factor(system + ridge * scale * np.eye(len(system)) if ridge else system,
                              lower=True, check_finite=False)
        except LinAlgError:
            continue
    raise LinAlgError(f"Newton system not positive definite even with a relative ridge of {RIDGES[-1]:g}")


@dataclass(frozen=True)
class Iterate:
    """A primal–dual point of the box QP of :func:`box_qp_ipm`.

    Parameters
    ----------
    alpha : ndarray
        The box variables, ``0 < α < hi``.
    slack : ndarray
        ``hi − α``, kept as its own variable: recomputed, it would round to 0 next to ``hi``.
    lower : ndarray
        Multipliers ``z > 0`` of ``α ≥ 0``.
    upper : ndarray
        Multipliers ``y > 0`` of ``α ≤ hi``.
    free : ndarray
        The model's unbounded variables (equality multipliers, and any free primal variable).
    """

    alpha: np.ndarray
    slack: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    free: np.ndarray

    def moved(self, step: float, direction: "Iterate") -> "Iterate":
        """The point ``self + step · direction`` (the slack moves by ``direction.slack``)."""
        return Iterate(*(value + step * change for value, change in zip(vars(self).values(), vars(direction).values())))

    def finite(self) -> bool:
        """Whether every entry is finite (round-off can overflow a step on a badly scaled problem)."""
        return all(np.all(np.isfinite(value)) for value in vars(self).values())


@dataclass
class Measure:
    """What a model reports at an iterate of :func:`box_qp_ipm`.

    Parameters
    ----------
    primal : float
        Primal objective (in the formulation's scaling) at the iterate.
    dual : float
        Dual objective (or the bound the model has) at the iterate.
    stop_value : float
        The model's stopping quantity; the loop stops (subject to the certificate) when it is ≤ tol.
    gradient : ndarray
        ``Hα − c + Jᵀfree``: the stationarity residual without the box multipliers' terms.
    record : dict
        Further per-iteration history entries of the model (the same keys every iteration).
    """

    primal: float
    dual: float
    stop_value: float
    gradient: np.ndarray
    record: dict = field(default_factory=dict)


def box_qp_ipm(model, hi: np.ndarray, free: np.ndarray, *, tol: float, max_iter: int, name: str,
               stop_rule: str, certificate=None, callback=None, multiplier: float = 1.0,
               mu_floor: float = 0.0, solver: str = "ipm") -> SolverResult:
    """Mehrotra's predictor–corrector interior point for ``min ½αᵀHα − cᵀα`` over ``0 ≤ α ≤ hi``
    and the model's equality rows (``Eα = e``, possibly with further free variables), shared by the
    Matrix-SVM, Rank-SVM and OvN solvers. The model owns H and the equalities; the loop owns the
    box. With multipliers ``z, y ≥ 0`` of ``α ≥ 0`` and ``α ≤ hi``, slack ``s = hi − α`` and
    ``D = z/α + y/s``, each Newton system is ``(H + D)Δα + JᵀΔfree = rhs`` plus the model's
    linearised equality rows; the predictor (targets 0) and the corrector (targets
    ``σμ − Δα∘Δz``, ``σμ + Δα∘Δy``, ``σ = (μ_aff/μ)³``) share one factorization; one step
    length, 0.995 of the step to the boundary, moves every variable.

    ``model`` supplies ``measure(point) -> Measure``; ``factorize(D)`` (prepare solves with
    ``H + diag(D)``); ``solve(rhs) -> (Δα, Δfree)`` (the Newton step, the model's equality rows
    linearised at the point last measured); ``point(iterate) -> (primal, dual)`` (dicts in the
    formulation's names: callback, certificate and result).

    Stopping: when ``stop_value ≤ target`` (:class:`~mlsvm.solvers.result.CertifiedStop`, which
    starts at ``tol``) and ``certificate(primal, dual) ≤ tol``; converged then. Stalled (a
    ``warn_stalled`` ConvergenceWarning, the best iterate returned): neither the stopping value nor
    μ has reached a new low in :data:`STALL_WINDOW` iterations (a run that wanders off raises μ;
    while μ falls, a stopping value hovering at round-off can still recover), a Newton system is
    not positive definite even with a ridge, a step overflows, ``μ ≤ mu_floor``, or the
    certificate's target fell below its floor. Reaching ``max_iter`` returns the best iterate with
    a ``warn_not_converged`` warning. A best iterate whose point is not finite (the start ``hi/2``
    itself beyond float64) raises ``FloatingPointError`` instead of either warning.
    ``history`` has ``primal``, ``dual``, ``stop_value``, ``mu`` and the model's own records.

    Parameters
    ----------
    model : object
        Supplies ``measure``, ``factorize``, ``solve`` and ``point`` (above).
    hi : ndarray
        Upper bounds, the shape of α.
    free : ndarray
        Starting value of the model's free variables.
    tol : float
        Tolerance of the stopping value and of the certificate.
    max_iter : int
        Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the value reached.
    name : str
        Solver name in the warnings.
    stop_rule : str
        What ``stop_value`` is.
    certificate : callable or None, optional
        ``certificate(primal, dual) -> float``, the largest scaled KKT residual the returned point
        will be graded on; None: the loop stops on the stopping value alone.
    callback : callable or None, optional
        Called as ``callback(n_iter, primal, dual)`` at every iterate.
    multiplier : float, default=1.0
        Starting value of the box multipliers (α starts at ``hi/2``).
    mu_floor : float, default=0.0
        μ at or below which further steps only amplify round-off (a stall).
    solver : str, default="ipm"
        ``SolverResult.solver``.
    """
    start = time.perf_counter()
    iterate = Iterate(0.5 * hi, 0.5 * hi, np.full(hi.shape, multiplier), np.full(hi.shape, multiplier), free)
    pairs = 2 * hi.size
    history = {"primal": [], "dual": [], "stop_value": [], "mu": []}
    stop, certified, stalled = CertifiedStop(tol, certificate), False, False
    best = (np.inf, iterate, 0)          # (stopping value, iterate, iteration) of the best iterate
    lowest_mu, progress = np.inf, 0      # the lowest μ, and the last iteration with a new low of either
    iteration = 0
    # round-off on a badly scaled problem can overflow a Newton step: that is a stall, detected
    # below by a non-finite iterate, not a numpy warning for the user
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for iteration in range(1, max_iter + 1):
            measure = model.measure(iterate)
            alpha, slack, lower, upper = iterate.alpha, iterate.slack, iterate.lower, iterate.upper
            mu = float(np.vdot(alpha, lower) + np.vdot(slack, upper)) / pairs
            for key, value in (("primal", measure.primal), ("dual", measure.dual),
                               ("stop_value", measure.stop_value), ("mu", mu), *measure.record.items()):
                history.setdefault(key, []).append(value)
            if callback is not None:
                callback(iteration, *model.point(iterate))
            if measure.stop_value < best[0]:
                best, progress = (measure.stop_value, iterate, iteration), iteration
            if mu < lowest_mu:
                lowest_mu, progress = mu, iteration
            if measure.stop_value <= stop.target:
                certified = stop.accept(*model.point(iterate))
                if certified or stop.stalled:
                    break
            if mu <= mu_floor or iteration - progress >= STALL_WINDOW:
                stalled = True
                break
            try:
                model.factorize(lower / alpha + upper / slack)
            except LinAlgError:
                stalled = True
                break
            residual = measure.gradient - lower + upper

            def newton(target_lower, target_upper):
                d_alpha, d_free = model.solve(-residual + target_lower / alpha - lower - target_upper / slack + upper)
                return Iterate(d_alpha, -d_alpha, (target_lower - alpha * lower - lower * d_alpha) / alpha,
                               (target_upper - slack * upper + upper * d_alpha) / slack, d_free)

            def step_to_boundary(d):
                return min(max_step(alpha, d.alpha), max_step(slack, d.slack),
                           max_step(lower, d.lower), max_step(upper, d.upper))

            zeros = np.zeros(hi.shape)
            affine = newton(zeros, zeros)                                   # predictor
            trial = iterate.moved(step_to_boundary(affine), affine)
            sigma = ((np.vdot(trial.alpha, trial.lower) + np.vdot(trial.slack, trial.upper)) / pairs / mu) ** 3
            direction = newton(sigma * mu - affine.alpha * affine.lower,      # corrector
                               sigma * mu + affine.alpha * affine.upper)
            moved = iterate.moved(STEP_FRACTION * step_to_boundary(direction), direction)
            if not moved.finite():
                stalled = True
                break
            iterate = moved
    if not certified:
        iterate = best[1]
    value = measure.stop_value if certified else best[0]
    primal, dual = model.point(iterate)
    # C = 1e300: the start hi/2 is itself beyond float64 (Rank-SVM's biases from it are NaN)
    check_finite_point(primal, dual)
    if not certified:
        if stalled or stop.stalled:
            warn_stalled(name, stop_rule, value, stop.residual, tol)
        else:
            warn_not_converged(name, stop_rule, value, tol, max_iter)
    return SolverResult(primal=primal, dual=dual, converged=certified, n_iter=iteration, stop_value=value,
                        stop_rule=stop_rule, solve_time=time.perf_counter() - start, history=history,
                        solver=solver)
