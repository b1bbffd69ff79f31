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

The solver works with the centred factor ``L − 1mᵀ`` (``m`` the mean row), which leaves Problem 10
unchanged on its feasible set and turns the biases into ``c = b + Wᵀm`` (converted back at the
end); near-singular systems get a small relative ridge (an inexact Newton step, still certified
by the gap), and the tiny equality violation left at the stop is removed by a weighted
least-norm correction before returning.

Stopping rule (exact, stated, the same as :func:`mlsvm.solvers.rank_svm_alm.proximal_alm`):
relative duality gap ``(primal(β(α), b = ν) − dual(α)) / max(1, |primal|, |dual|) ≤ tol`` **and**
equality violation ``‖Aα‖∞ ≤ tol · max(1, ‖u‖∞)``; then the point it would return (equalities
restored, biases uncentred) is graded by :func:`mlsvm.formulations.rank_svm.evaluate`, and the run
stops only when that relative gap and every scaled KKT residual are ``≤ tol`` too: the gap alone
can pass while the complementarity residual does not (measured: gap 6.6e-9, complementarity
1.1e-8 on 120 emotions instances at tol 1e-8). Reaching ``max_iter`` warns with the value reached.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import LinAlgError, cho_solve

from mlsvm.formulations.rank_svm import RankSVMProblem, center_biases, evaluate, restore_equalities
from mlsvm.solvers.ipm_tools import max_step, packed_outer, ridged_cholesky
from mlsvm.solvers.result import SolverResult, relative_gap, warn_not_converged

__all__ = ["interior_point", "MAX_SYSTEM_SIZE"]

STOP_RULE = "relative duality gap, equality violation and scaled KKT residuals"
#: the reduced Newton system has size Q(r+1) − 1; beyond this the ALM solver is the better choice
MAX_SYSTEM_SIZE = 4000
#: fraction of the step to the boundary
STEP_FRACTION = 0.995


class _ReducedNewton:
    """The Newton system of the module docstring, assembled in the primal coordinates."""

    def __init__(self, problem: RankSVMProblem, factor: np.ndarray):
        self.problem = problem
        pairs = problem.pairs
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
        # flat positions of (i, k, l), (i, l, k), (i, k, k), (i, l, l) of every pair in n × Q × Q
        i, k, l = pairs.instance, pairs.relevant, pairs.irrelevant
        self.off_diagonal = np.concatenate([(i * q + k) * q + l, (i * q + l) * q + k])
        self.diagonal = np.concatenate([(i * q + k) * q + k, (i * q + l) * q + l])
        self.size = q * width - 1                                  # the last bias is fixed to 0

    def factorize(self, inverse_d: np.ndarray):
        q, n, width = self.problem.n_labels, self.problem.n_samples, self.width
        weights = np.concatenate([inverse_d, inverse_d])
        laplacian = (np.bincount(self.diagonal, weights, minlength=n * q * q)
                     - np.bincount(self.off_diagonal, weights, minlength=n * q * q)).reshape(n, q, q)
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
        """``(Δα, Δν)`` solving ``(P + D)Δα + AᵀΔν = rhs``, ``AΔα = −Aα`` (``equality_residual = Aα``):
        ``ΔW = Lᵀscatter(Δα)`` and ``1ᵀscatter(Δα) = −Aα`` give the right-hand side
        ``L̃ᵀscatter(D⁻¹ rhs) + [0; Aα]``; the gauge ``Δν_Q = 0`` fixes the common shift."""
        right = self._lift(self.inverse_d * rhs)
        right[:, -1] += equality_residual
        step = np.append(cho_solve(self.cholesky, right.ravel()[: self.size], check_finite=False),
                         0.0).reshape(self.problem.n_labels, self.width)
        delta_w, delta_nu = step[:, :-1].T, step[:, -1]
        margins = self.problem.gather(self.factor @ delta_w + delta_nu[None, :])
        return self.inverse_d * (rhs - margins), delta_nu


def _returned_point(problem: RankSVMProblem, alpha, slack, nu, mean, factor) -> tuple[dict, dict]:
    """``(primal, dual)`` the solver returns at the current iterate: equalities restored, and the
    biases of the centred factor converted back, ``b = c − Wᵀm``."""
    alpha = restore_equalities(problem, alpha, slack)
    beta = problem.scatter(alpha)
    return {"beta": beta, "b": center_biases(nu - mean @ (factor.T @ beta))}, {"alpha": alpha}


def interior_point(problem: RankSVMProblem, factor: np.ndarray, *, tol: float = 1e-8,
                   max_iter: int = 100, callback=None) -> SolverResult:
    """Solve the Rank-SVM dual to relative duality gap ``tol`` (module docstring).

    ``factor``: ``L`` (n × r) with ``K = LLᵀ``; ``Q(r+1) − 1`` must not exceed
    :data:`MAX_SYSTEM_SIZE`. ``max_iter`` bounds the interior-point iterations. Returns
    ``primal = {"beta", "b"}``, ``dual = {"alpha"}``; ``history`` has per iteration the primal
    and dual objectives, the stopping value (``max(|gap|, violation / max(1, ‖u‖∞))``, and once that is ≤ ``tol`` the
    returned point's ``max(|relative gap|, KKT residuals)``), the relative
    gap, the equality violation and the barrier parameter μ. ``callback(iteration, primal, dual)``
    is called each iteration with the current point as dicts of the same names.
    """
    start = time.perf_counter()
    factor = np.asarray(factor, dtype=np.float64)
    if factor.ndim != 2 or factor.shape[0] != problem.n_samples:
        raise ValueError(f"factor must have shape ({problem.n_samples}, r); got {factor.shape}")
    size = problem.n_labels * (factor.shape[1] + 1) - 1
    if size > MAX_SYSTEM_SIZE:
        raise ValueError(f"factor has rank {factor.shape[1]}: the Newton system would have size {size} "
                         f"> {MAX_SYSTEM_SIZE}; use mlsvm.solvers.rank_svm_alm.proximal_alm")
    upper, T = problem.upper, problem.n_pairs
    # Work with the centred factor L_c = L − 1mᵀ (m the mean row). On the feasible set (Σ_i β_ki = 0)
    # L_cᵀβ = Lᵀβ, so Problem 10 is unchanged; in the primal, L_cW + 1cᵀ = LW + 1bᵀ with
    # b = c − Wᵀm. Off the feasible set the uncentred dual carries a term ½‖m(Aα)ᵀ‖² that acts
    # like a penalty of weight ‖m‖² on the equalities: with features around 1e4 it stalled the
    # equality violation at 1e-2 and made the Newton system singular to round-off.
    mean = factor.mean(axis=0)
    factor = factor - mean
    newton = _ReducedNewton(problem, factor)
    alpha, slack = 0.5 * upper, 0.5 * upper      # slack u − α kept as its own variable (see below)
    lower_mult, upper_mult = np.ones(T), np.ones(T)
    nu = np.zeros(problem.n_labels)
    scale = max(1.0, float(np.max(upper)))
    history = {"primal": [], "dual": [], "stop_value": [], "relative_gap": [], "equality_violation": [], "mu": []}
    stop_value, converged = np.inf, False
    for iteration in range(1, max_iter + 1):
        beta = problem.scatter(alpha)
        weights = factor.T @ beta                                  # W = Lᵀβ, r × Q
        margins = problem.gather(factor @ weights + nu[None, :])   # Pα + Aᵀν
        balance = problem.equality @ alpha
        quadratic = float(np.sum(weights * weights))
        primal = 0.5 * quadratic + float(upper @ np.maximum(0.0, 1.0 - margins))
        dual = float(alpha.sum()) - 0.5 * quadratic
        gap = relative_gap(primal, dual)
        violation = float(np.max(np.abs(balance)))
        mu = float(alpha @ lower_mult + slack @ upper_mult) / (2 * T)
        stop_value = max(abs(gap), violation / scale)
        if stop_value <= tol:   # grade the point that would be returned (module docstring)
            certificate = evaluate(problem, *_returned_point(problem, alpha, slack, nu, mean, factor))
            stop_value = max(abs(certificate.relative_gap), certificate.max_kkt)
            converged = stop_value <= tol
        for key, value in zip(history, (primal, dual, stop_value, gap, violation, mu)):
            history[key].append(value)
        if callback is not None:   # b = c − Wᵀm in the uncentred coordinates (see above)
            callback(iteration, {"beta": beta, "b": center_biases(nu - mean @ weights)}, {"alpha": alpha})
        if converged:
            break
        dual_residual = margins - 1.0 - lower_mult + upper_mult
        try:
            newton.factorize(1.0 / (lower_mult / alpha + upper_mult / slack))
        except LinAlgError as error:
            raise RuntimeError(f"interior point: the reduced Newton system is not positive definite "
                               f"at iteration {iteration} ({error})") from error

        def direction(target_lower, target_upper):
            rhs = -dual_residual + target_lower / alpha - lower_mult - target_upper / slack + upper_mult
            d_alpha, d_nu = newton.solve(rhs, balance)
            d_lower = (target_lower - alpha * lower_mult - lower_mult * d_alpha) / alpha
            d_upper = (target_upper - slack * upper_mult + upper_mult * d_alpha) / slack
            return d_alpha, d_nu, d_lower, d_upper

        def step_lengths(d_alpha, d_lower, d_upper):
            primal_step = min(max_step(alpha, d_alpha), max_step(slack, -d_alpha))
            dual_step = min(max_step(lower_mult, d_lower), max_step(upper_mult, d_upper))
            return primal_step, dual_step

        # predictor (affine scaling), then Mehrotra's corrector with σ = (μ_aff/μ)³
        zeros = np.zeros(T)
        d_alpha, _, d_lower, d_upper = direction(zeros, zeros)
        primal_step, dual_step = step_lengths(d_alpha, d_lower, d_upper)
        mu_affine = float((alpha + primal_step * d_alpha) @ (lower_mult + dual_step * d_lower)
                          + (slack - primal_step * d_alpha) @ (upper_mult + dual_step * d_upper)) / (2 * T)
        sigma = (mu_affine / mu) ** 3
        d_alpha, d_nu, d_lower, d_upper = direction(sigma * mu - d_alpha * d_lower,
                                                    sigma * mu + d_alpha * d_upper)
        primal_step, dual_step = step_lengths(d_alpha, d_lower, d_upper)
        # one step length for (α, ν, z, y): the equality residual and the dual residual then
        # shrink by the same factor, and Pα + Aᵀν stays consistent with the margins
        step = STEP_FRACTION * min(primal_step, dual_step)
        # updating s = u − α by its own step (not recomputing u − α) keeps a variable close to
        # its upper bound strictly interior: u − α would round to 0 there
        alpha = alpha + step * d_alpha
        slack = slack - step * d_alpha
        nu = nu + step * d_nu
        lower_mult = lower_mult + step * d_lower
        upper_mult = upper_mult + step * d_upper
    if not converged:
        warn_not_converged("Rank-SVM interior point", STOP_RULE, stop_value, tol, max_iter)
    primal_point, dual_point = _returned_point(problem, alpha, slack, nu, mean, factor)
    return SolverResult(primal=primal_point, dual=dual_point, converged=converged, n_iter=iteration,
                        stop_value=stop_value, stop_rule=STOP_RULE,
                        solve_time=time.perf_counter() - start, history=history, solver="ipm")
