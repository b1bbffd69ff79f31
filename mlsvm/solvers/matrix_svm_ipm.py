"""Exact Matrix-SVM hinge dual for a low-rank kernel: primal–dual interior point, batched over labels.

Dual of eq. 8 (``A = I``), one box-constrained QP per label k, solved together::

    min_α  Σ_k ½ α_kᵀ Z_kZ_kᵀ α_k − Σ α      s.t.  0 ≤ α ≤ C,    Z_k = diag(Ys_k) X̄

with ``X̄ = [F, 1]`` for a factor ``K = FFᵀ`` (``X`` for the linear kernel), so ``K̄ = X̄X̄ᵀ`` and
``w_k = Z_kᵀα_k`` is label k's primal weight vector (bias included: it is regularized).

KKT with lower/upper multipliers ``z, y ≥ 0`` and slack ``s = C − α``:
``Ys∘(X̄W) − 1 − z + y = 0``, ``α∘z = σμ``, ``s∘y = σμ``. The Newton system of label k,
``(Z_kZ_kᵀ + D_k)Δα_k = r_k`` with ``D = z/α + y/s``, is solved in the primal coordinates
(Woodbury): ``(I + X̄ᵀD_k⁻¹X̄) Δw_k = Z_kᵀD_k⁻¹r_k``, ``Δα_k = D_k⁻¹(r_k − Z_kΔw_k)``. The q matrices
of size r+1 are formed by one product ``(q × n) @ (n × (r+1)(r+2)/2)`` (in centred coordinates,
see the code) and are positive definite (eigenvalues ≥ 1) up to round-off. Mehrotra's
predictor–corrector reuses their Cholesky factors. Cost per iteration ``O(nqr² + qr³)``: on emotions
(593 × 72, q = 6) a few milliseconds, where accelerated gradient needs thousands of iterations
because ``K̄`` has rank r + 1 (no strong convexity).

Stopping rule (exact, stated): relative duality gap ``(P(W(α)) − D(α)) / max(1, |P|, |D|) ≤ tol``
with P and D the primal and dual objectives of the whole problem (summed over labels).
Reaching ``max_iter``, or μ ≤ 1e-13·max(1, C) without meeting ``tol`` (round-off stall), returns the
best iterate and warns with its gap.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import cho_solve

from mlsvm.solvers.ipm_tools import max_step, packed_outer, ridged_cholesky
from mlsvm.solvers.result import CertifiedStop, SolverResult, relative_gap, warn_not_converged, warn_stalled

__all__ = ["interior_point_box", "MAX_WIDTH"]

STOP_RULE = "relative duality gap"
#: r + 1 beyond which the q dense (r+1)² systems cost more than accelerated gradient
MAX_WIDTH = 1500
STEP_FRACTION = 0.995
#: μ (relative to max(1, C)) below which further interior-point steps only amplify round-off
STALL_MU = 1e-13


def interior_point_box(factor: np.ndarray, signed: np.ndarray, C: float, *, tol: float = 1e-8,
                       max_iter: int = 100, certificate=None, name: str = "Matrix-SVM interior point") -> SolverResult:
    """Solve the hinge dual above for ``K = factor factorᵀ``; ``signed`` is ``Ys`` (n × q, ±1).

    ``certificate(alpha) -> float`` (optional): the largest scaled KKT residual the point will be
    graded on; the run stops only when it too is ``≤ tol`` (:class:`CertifiedStop`).

    Returns ``dual = {"alpha"}`` (n × q) and ``primal = {"coef", "W"}``: ``Θ = α∘Ys`` (n × q) and
    ``W = X̄ᵀΘ`` ((r+1) × q, last row the biases);
    ``history`` has the relative gap and μ per iteration.

    Parameters
    ----------
    factor : array of shape (n, r + 1)
        Rows of X̄ (features with the column of ones).
    signed : array of shape (n, q)
        Signed labels ``Ys = 2Y − 1``.
    C : float
        Regularisation constant (> 0) of the formulation, with the scaling of its objective above.
    tol : float
        Stopping tolerance: the bound on the quantity of the solver's stop rule (see the model's
        documentation page for which quantity).
    max_iter : int
        Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the value reached.
    name : str
        Solver name in the result.
    certificate : callable or None
        Computes the largest scaled KKT residual of a point (see
        :class:`mlsvm.solvers.result.CertifiedStop`); None: the solver stops on its own gap alone.
    """
    start = time.perf_counter()
    n, q = signed.shape
    factor = np.asarray(factor, dtype=np.float64)
    augmented = np.hstack([factor, np.ones((n, 1))])           # X̄
    width = augmented.shape[1]
    # Newton systems in centred coordinates: X̄ = X̃T with X̃ = [F − 1mᵀ, 1], T = [[I, 0], [mᵀ, 1]],
    # so I + X̄ᵀD⁻¹X̄ = Tᵀ(G + X̃ᵀD⁻¹X̃)T with G = T⁻ᵀT⁻¹ = [[I + mmᵀ, −m], [−mᵀ, 1]] and the margin
    # change is X̄Δw = X̃(G + X̃ᵀD⁻¹X̃)⁻¹X̃ᵀu. Uncentred, features around 100 make the columns of X̄
    # nearly parallel and the system indefinite to round-off (entries ~1e16 beside the identity).
    mean = factor.mean(axis=0)
    centred = np.hstack([factor - mean, np.ones((n, 1))])      # X̃
    metric = np.block([[np.eye(width - 1) + np.outer(mean, mean), -mean[:, None]],
                       [-mean[None, :], np.ones((1, 1))]])     # G
    if width > MAX_WIDTH:
        raise ValueError(f"factor has {width - 1} columns: the Newton systems would have size {width} "
                         f"> {MAX_WIDTH}; use mlsvm.solvers.matrix_svm_agd.solve_dual_agd")
    packed, rows, cols = packed_outer(centred)                    # n × (r+1)(r+2)/2
    alpha = np.full((n, q), 0.5 * C)
    slack = np.full((n, q), 0.5 * C)       # C − α kept as its own variable (u − α rounds to 0 near C)
    lower, upper = np.ones((n, q)), np.ones((n, q))
    history = {"primal": [], "dual": [], "stop_value": [], "relative_gap": [], "mu": []}
    gap = np.inf
    best = (np.inf, alpha)              # (|gap|, α) of the best iterate: returned if round-off stalls
    stop, certified = CertifiedStop(tol, certificate), False
    for iteration in range(1, max_iter + 1):
        weights = augmented.T @ (alpha * signed)                 # W = X̄ᵀ(α∘Ys), (r+1) × q
        margins = signed * (augmented @ weights)                 # Z_kZ_kᵀα_k, all labels
        quadratic = float(np.sum(weights * weights))
        primal = 0.5 * quadratic + C * float(np.maximum(0.0, 1.0 - margins).sum())
        dual = float(alpha.sum()) - 0.5 * quadratic
        gap = relative_gap(primal, dual)
        mu = float(np.sum(alpha * lower) + np.sum(slack * upper)) / (2 * n * q)
        for key, value in zip(history, (primal, dual, abs(gap), gap, mu)):
            history[key].append(value)
        if abs(gap) < best[0]:
            best = (abs(gap), alpha)
        if abs(gap) <= stop.target:
            certified = stop.accept(np.clip(alpha, 0.0, C))
            if certified or stop.stalled:
                break
        if mu <= STALL_MU * max(1.0, C):
            # complementarity is at round-off but the gap is not: on ill-conditioned data (e.g. features
            # around 100 with C = 10, a bias direction with curvature ~1e4·n) the free α are only
            # known to the accuracy the Newton solves allow, and further steps degrade them
            break
        residual = margins - 1.0 - lower + upper
        inverse_d = 1.0 / (lower / alpha + upper / slack)
        systems = np.zeros((q, width, width))
        products = inverse_d.T @ packed                           # q × (r+1)(r+2)/2
        systems[:, rows, cols] = products
        systems[:, cols, rows] = products
        systems += metric
        factors = [ridged_cholesky(system) for system in systems]

        def reduced_solve(rhs):
            """``(Z_kZ_kᵀ + D_k)⁻¹ rhs_k`` through the primal coordinates (Woodbury)."""
            scaled = inverse_d * rhs
            right = centred.T @ (signed * scaled)
            delta_v = np.column_stack([cho_solve(factor, right[:, k], check_finite=False)
                                       for k, factor in enumerate(factors)])
            return scaled - inverse_d * signed * (centred @ delta_v)        # X̄Δw = X̃Δv

        def direction(target_lower, target_upper):
            rhs = -residual + target_lower / alpha - lower - target_upper / slack + upper
            d_alpha = reduced_solve(rhs)
            d_lower = (target_lower - alpha * lower - lower * d_alpha) / alpha
            d_upper = (target_upper - slack * upper + upper * d_alpha) / slack
            return d_alpha, d_lower, d_upper

        def step_length(d_alpha, d_lower, d_upper):
            return min(max_step(alpha, d_alpha), max_step(slack, -d_alpha),
                       max_step(lower, d_lower), max_step(upper, d_upper))

        zeros = np.zeros((n, q))
        d_alpha, d_lower, d_upper = direction(zeros, zeros)
        step = step_length(d_alpha, d_lower, d_upper)
        mu_affine = float(np.sum((alpha + step * d_alpha) * (lower + step * d_lower))
                          + np.sum((slack - step * d_alpha) * (upper + step * d_upper))) / (2 * n * q)
        sigma = (mu_affine / mu) ** 3
        d_alpha, d_lower, d_upper = direction(sigma * mu - d_alpha * d_lower, sigma * mu + d_alpha * d_upper)
        step = STEP_FRACTION * step_length(d_alpha, d_lower, d_upper)
        alpha = alpha + step * d_alpha
        slack = slack - step * d_alpha
        lower = lower + step * d_lower
        upper = upper + step * d_upper
    if certified:
        gap = abs(gap)
    else:
        gap, alpha = best
    converged = certified or (certificate is None and gap <= tol)
    if not converged:
        if stop.stalled or mu <= STALL_MU * max(1.0, C):
            warn_stalled(name, STOP_RULE, gap, stop.residual, tol)
        else:
            warn_not_converged(name, STOP_RULE, gap, tol, iteration)
    alpha = np.clip(alpha, 0.0, C)
    coef = alpha * signed
    return SolverResult(primal={"coef": coef, "W": augmented.T @ coef}, dual={"alpha": alpha},
                        converged=converged, n_iter=iteration, stop_value=gap,
                        stop_rule=STOP_RULE, solve_time=time.perf_counter() - start, history=history,
                        solver="ipm")
