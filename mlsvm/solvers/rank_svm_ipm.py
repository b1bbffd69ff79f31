"""Exact Rank-SVM dual solver for a low-rank kernel: primal–dual interior point (Mehrotra).

Problem 10 as ``min f(α) = ½αᵀPα − Σα`` over ``0 ≤ α ≤ u`` and ``Aα = 0`` (Q equalities
``Σ_i β_ki = 0``, of which Q − 1 are independent), for a Gram matrix given by a factor
``K = LLᵀ`` (``L`` n × r, e.g. ``X`` for the linear kernel). Then ``P = MᵀM`` with
``Mα = vec(Lᵀβ(α))`` (r·Q), so ``P`` has rank ≤ rQ however many pairs T there are.

KKT system, with lower/upper box multipliers ``z, y ≥ 0``, slack ``s = u − α`` and the equality
multipliers ν (= the biases b of Problem 8; ``Pα + Aᵀν`` are the pair margins ``f_k − f_l``)::

    Pα − 1 + Aᵀν − z + y = 0,   Aα = 0,   α∘z = σμ,   s∘y = σμ.

Each Newton system ``(P + D)Δα + AᵀΔν = r`` (``D = z/α + y/s``) is reduced to the primal
coordinates ``(ΔW, Δb)`` — exactly the Newton system of the primal (Problem 8) in ``w`` and the
bias: with ``L̃ = [L, 1]`` and the Laplacian of each instance's pairs
``Λ_i = Σ_{t∈i} D_t⁻¹ (e_k − e_l)(e_k − e_l)ᵀ`` (Q × Q),

    S = Σ_i Λ_i ⊗ L̃_iL̃_iᵀ + diag(I on the w part, 0 on the b part),   S [ΔW; Δb] = [M̃D⁻¹r; Ã D⁻¹r + Aα]

(the last label's bias is fixed to 0 — the Q equalities have rank Q − 1 — and the biases are
centred at the end), then ``Δα = D⁻¹(r − gather(LΔW + 1Δbᵀ))``. ``S`` has size Q(r+1) − 1 and is
formed by one matrix product ``(Q(Q+1)/2 × n) @ (n × (r+1)(r+2)/2)`` per iteration (both
symmetries used), then Cholesky-factorised once per iteration and reused by the predictor and
the corrector (Mehrotra). Cost per iteration ``O(nQ²r² + Q³r³ + T)``, independent of T but for
the gathers: the reason this solver exists (T = 58,248 pairs on yeast, but ``Q(r+1) = 1456``).
Near the optimum D⁻¹ spans many decades and the last formula cancels on the pairs of large D⁻¹,
so each step is refined by its residual on the full system (:meth:`_ReducedNewton.solve`).

The solver works with the centred factor ``L − 1mᵀ`` (``m`` the mean row), which leaves Problem 10
unchanged on its feasible set and turns the biases into ``c = b + Wᵀm`` (converted back by
:func:`mlsvm.formulations.rank_svm.uncentred_biases`); near-singular systems get a small relative
ridge (an inexact Newton step, still certified by the gap), and the tiny equality violation left
at the stop is removed by a weighted least-norm correction before returning.

Stopping rule (exact, stated, the same as :func:`mlsvm.solvers.rank_svm_alm.proximal_alm`):
relative duality gap ``(primal(β(α), b = ν) − dual(α)) / max(1, |primal|, |dual|) ≤ tol`` **and**
equality violation ``‖Aα‖∞ ≤ tol · max(1, ‖u‖∞)``; then the point it would return (equalities
restored, biases uncentred) is graded by :func:`mlsvm.formulations.rank_svm.evaluate`, and the run
stops only when that relative gap and every scaled KKT residual are ``≤ tol`` too: the gap alone
can pass while the complementarity residual does not (measured: gap 6.6e-9, complementarity
1.1e-8 on 120 emotions instances at tol 1e-8). The iterations are the shared Mehrotra loop
:func:`mlsvm.solvers.ipm_tools.box_qp_ipm`: reaching ``max_iter`` warns with the value reached; a
stall (no new best stopping value in ten iterations, e.g. ``C = 1e8`` on yeast, where the
iterates wander off once the Newton systems lose accuracy) warns as one and returns the best
iterate.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve

from mlsvm.formulations.rank_svm import RankSVMProblem, evaluate, restore_equalities, uncentred_biases
from mlsvm.solvers.ipm_tools import Measure, box_qp_ipm, packed_outer, ridged_cholesky
from mlsvm.solvers.result import SolverResult, relative_gap

__all__ = ["interior_point", "MAX_SYSTEM_SIZE"]

STOP_RULE = "relative duality gap, equality violation and scaled KKT residuals"
#: the reduced Newton system has size Q(r+1) − 1; beyond this the ALM solver is the better choice
MAX_SYSTEM_SIZE = 4000
#: at most this many corrections of a Newton step by its residual on the full system (LAPACK's ITMAX)
REFINEMENT_STEPS = 5


class _ReducedNewton:
    """The Newton system of the module docstring, assembled in the primal coordinates."""

    def __init__(self, problem: RankSVMProblem, factor: np.ndarray):
        self.problem = problem
        n, q = problem.n_samples, problem.n_labels
        self.factor = factor
        self.extended = extended = np.hstack([factor, np.ones((n, 1))])   # L̃ = [L, 1]
        self.width = width = extended.shape[1]                     # r + 1
        self.packed_outer, rows, cols = packed_outer(extended)     # n × (r+1)(r+2)/2
        full_to_packed = np.empty((width, width), dtype=np.intp)
        full_to_packed[rows, cols] = np.arange(rows.size)
        full_to_packed[cols, rows] = np.arange(rows.size)
        self.full_to_packed = full_to_packed
        self.label_rows, self.label_cols = np.triu_indices(q)
        self.size = q * width - 1                                  # the last bias is fixed to 0

    def factorize(self, inverse_d: np.ndarray):
        q, width = self.problem.n_labels, self.width
        laplacian = self.problem.pairs.laplacians(inverse_d)       # n × Q × Q
        upper = laplacian[:, self.label_rows, self.label_cols]     # n × Q(Q+1)/2
        products = upper.T @ self.packed_outer                     # Q(Q+1)/2 × (r+1)(r+2)/2
        blocks = products[:, self.full_to_packed]                  # each (r+1) × (r+1), symmetric
        system = np.empty((q * width, q * width))
        by_block = system.reshape(q, width, q, width)               # a view: [k, a, l, b]
        by_block[self.label_rows, :, self.label_cols, :] = blocks
        by_block[self.label_cols, :, self.label_rows, :] = blocks
        weight_part = np.arange(q * width) % width < width - 1
        system[np.flatnonzero(weight_part), np.flatnonzero(weight_part)] += 1.0
        system = system[: self.size, : self.size]
        self.inverse_d = inverse_d
        # the bias block is held up only by the pairs off their bounds: when those do not tie every
        # label together the biases are not unique and S is singular up to round-off
        self.cholesky = ridged_cholesky(system)

    def _lift(self, v: np.ndarray) -> np.ndarray:
        """``vec(L̃ᵀ scatter(v))`` in label-major order (Q × (r+1))."""
        return (self.extended.T @ self.problem.scatter(v)).T

    def solve(self, rhs: np.ndarray, equality_residual: np.ndarray):
        """``(Δα, Δν)`` solving ``(P + D)Δα + AᵀΔν = rhs``, ``AΔα = −Aα`` (``equality_residual = Aα``)
        by :meth:`_eliminate`, then refined: near the optimum D⁻¹ spans many decades and
        ``Δα = D⁻¹(rhs − margins)`` cancels on the pairs of large D⁻¹, so the residual of the full
        system is solved for with the same factor and added, as LAPACK's ``xPORFS`` does: while the
        normwise backward error exceeds the machine epsilon and halves at each step, at most
        :data:`REFINEMENT_STEPS` times."""
        step = self._eliminate(rhs, equality_residual)
        residual = self._residual(step, rhs, equality_residual)
        for _ in range(REFINEMENT_STEPS):
            if residual[2] <= np.finfo(float).eps:
                break
            correction = self._eliminate(residual[0], -residual[1])
            trial = (step[0] + correction[0], step[1] + correction[1])
            trial_residual = self._residual(trial, rhs, equality_residual)
            if not trial_residual[2] <= 0.5 * residual[2]:
                break
            step, residual = trial, trial_residual
        return step

    def _residual(self, step, rhs, equality_residual):
        """``(rhs − (P + D)Δα − AᵀΔν, −Aα − AΔα, backward error)`` with ``P`` applied through the
        factor (``Pv + Aᵀν = gather(L Lᵀscatter(v) + 1νᵀ)``); the normwise backward error is the
        residual's 2-norm over the sum of those of both sides."""
        d_alpha, d_nu = step
        problem, factor = self.problem, self.factor
        applied = problem.gather(factor @ (factor.T @ problem.scatter(d_alpha)) + d_nu[None, :])
        applied += d_alpha / self.inverse_d
        balance = problem.equality @ d_alpha
        residual = (rhs - applied, -equality_residual - balance)
        size = (np.hypot(np.linalg.norm(rhs), np.linalg.norm(equality_residual))
                + np.hypot(np.linalg.norm(applied), np.linalg.norm(balance)))
        error = np.hypot(np.linalg.norm(residual[0]), np.linalg.norm(residual[1])) / size if size > 0 else 0.0
        return residual[0], residual[1], float(error)

    def _eliminate(self, rhs: np.ndarray, equality_residual: np.ndarray):
        """The solve of :meth:`solve` by elimination to the primal coordinates:
        ``ΔW = Lᵀscatter(Δα)`` and ``1ᵀscatter(Δα) = −Aα`` give the right-hand side
        ``L̃ᵀscatter(D⁻¹ rhs) + [0; Aα]``; the gauge ``Δν_Q = 0`` fixes the common shift."""
        right = self._lift(self.inverse_d * rhs)
        right[:, -1] += equality_residual
        step = np.append(cho_solve(self.cholesky, right.ravel()[: self.size], check_finite=False),
                         0.0).reshape(self.problem.n_labels, self.width)
        delta_w, delta_nu = step[:, :-1].T, step[:, -1]
        margins = self.problem.gather(self.factor @ delta_w + delta_nu[None, :])
        return self.inverse_d * (rhs - margins), delta_nu


def _returned_point(problem: RankSVMProblem, alpha, slack, nu) -> tuple[dict, dict]:
    """``(primal, dual)`` the solver returns at the current iterate: equalities restored, and the
    biases of the centred factor converted back (:func:`mlsvm.formulations.rank_svm.uncentred_biases`)."""
    alpha = restore_equalities(problem, alpha, slack)
    beta = problem.scatter(alpha)
    return {"beta": beta, "b": uncentred_biases(problem, beta, nu)}, {"alpha": alpha}


class _RankQP(_ReducedNewton):
    """Problem 10 for :func:`~mlsvm.solvers.ipm_tools.box_qp_ipm`: the free variables are the
    equality multipliers ν; the stopping value is ``max(|gap|, ‖Aα‖∞ / max(1, ‖u‖∞))``."""

    def __init__(self, problem: RankSVMProblem, factor: np.ndarray):
        super().__init__(problem, factor)
        self.scale = max(1.0, float(np.max(problem.upper)))

    def measure(self, iterate):
        problem, alpha, nu = self.problem, iterate.alpha, iterate.free
        weights = self.factor.T @ problem.scatter(alpha)                      # W = Lᵀβ, r × Q
        margins = problem.gather(self.factor @ weights + nu[None, :])         # Pα + Aᵀν
        self.balance = problem.equality @ alpha
        quadratic = float(np.sum(weights * weights))
        primal = 0.5 * quadratic + float(problem.upper @ np.maximum(0.0, 1.0 - margins))
        dual = float(alpha.sum()) - 0.5 * quadratic
        gap = relative_gap(primal, dual)
        violation = float(np.max(np.abs(self.balance)))
        return Measure(primal, dual, max(abs(gap), violation / self.scale), margins - 1.0,
                       {"relative_gap": gap, "equality_violation": violation})

    def factorize(self, d):
        super().factorize(1.0 / d)

    def solve(self, rhs):
        return super().solve(rhs, self.balance)

    def point(self, iterate):
        return _returned_point(self.problem, iterate.alpha, iterate.slack, iterate.free)


def _certificate(problem: RankSVMProblem):
    def certificate(primal, dual):
        evaluation = evaluate(problem, primal, dual)
        return max(abs(evaluation.relative_gap), evaluation.max_kkt)
    return certificate


def interior_point(problem: RankSVMProblem, factor: np.ndarray, *, tol: float = 1e-8,
                   max_iter: int = 100, callback=None) -> SolverResult:
    """Solve the Rank-SVM dual to relative duality gap ``tol`` (module docstring).

    ``factor``: ``L`` (n × r) with ``K = LLᵀ``; ``Q(r+1) − 1`` must not exceed
    :data:`MAX_SYSTEM_SIZE`. ``max_iter`` bounds the interior-point iterations. Returns
    ``primal = {"beta", "b"}``, ``dual = {"alpha"}``; ``history`` has per iteration the primal
    and dual objectives, the stopping value ``max(|gap|, violation / max(1, ‖u‖∞))``, the relative
    gap, the equality violation and the barrier parameter μ. ``callback(iteration, primal, dual)``
    is called each iteration with the point the solver would return there (equalities restored).

    Parameters
    ----------
    problem : RankSVMProblem
        The Rank-SVM problem.
    factor : array of shape (n, r)
        ``L`` with ``K = LLᵀ``; ``Q(r+1) − 1`` must not exceed :data:`MAX_SYSTEM_SIZE`.
    tol : float, default=1e-8
        Tolerance on the relative duality gap (and KKT residuals).
    max_iter : int, default=100
        Maximum number of interior-point iterations.
    callback : callable or None, optional
        Called as ``callback(iteration, primal, dual)`` with the current point, in the names of the
        result.
    """
    factor = np.asarray(factor, dtype=np.float64)
    if factor.ndim != 2 or factor.shape[0] != problem.n_samples:
        raise ValueError(f"factor must have shape ({problem.n_samples}, r); got {factor.shape}")
    size = problem.n_labels * (factor.shape[1] + 1) - 1
    if size > MAX_SYSTEM_SIZE:
        raise ValueError(f"factor has rank {factor.shape[1]}: the interior point's Newton system would have size "
                         f"Q(rank + 1) − 1 = {size} > {MAX_SYSTEM_SIZE}; use solver='fast' (it picks a route that "
                         f"fits), 'bcd' or 'alm' (mlsvm.solvers.rank_svm_bcd.instance_bcd, "
                         f"mlsvm.solvers.rank_svm_alm.proximal_alm)")
    # Work with the centred factor L_c = L − 1mᵀ (m the mean row). On the feasible set (Σ_i β_ki = 0)
    # L_cᵀβ = Lᵀβ, so Problem 10 is unchanged; in the primal, L_cW + 1cᵀ = LW + 1bᵀ with
    # b = c − Wᵀm. Off the feasible set the uncentred dual carries a term ½‖m(Aα)ᵀ‖² that acts
    # like a penalty of weight ‖m‖² on the equalities: with features around 1e4 it stalled the
    # equality violation at 1e-2 and made the Newton system singular to round-off.
    return box_qp_ipm(_RankQP(problem, factor - factor.mean(axis=0)), problem.upper, np.zeros(problem.n_labels),
                      tol=tol, max_iter=max_iter, name="Rank-SVM interior point", stop_rule=STOP_RULE,
                      certificate=_certificate(problem), callback=callback)
