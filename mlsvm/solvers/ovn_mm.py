"""Majorization–minimization for One-vs-None (paper §3.3, Algorithm 1, Appendices A and B).

Works on features ``F`` (n × r) with ``FFᵀ = G`` (``X`` for the linear kernel, an eigen-factor of
the Gram matrix otherwise: Appendix B's ``α̃_k`` in the coordinates ``v_k = Lᵀα_k``, which makes the
Hessian positive definite where ``G₀`` of Appendix B is singular). Canonical objective (SPEC §2.2)::

    F(V, b) = ½ Σ_kl M_kl v_kᵀv_l + β Σ_k Σ_{i∈C_k} [1 − u_ki]₊  [+ γ(Σb)²],   u_ki = F_i v_k + b_k

with ``M = (1−α)I + α11ᵀ`` (soft w) or ``M = I`` and ``Σ_k v_k = 0`` (hard w); ``Σ b = 0`` (hard b).
Appendix A's Hessian ``D̃ + (α/2)D̃₀ + βX̃`` is this one at App-A scaling (canonical α/2, β/2).

Majorizer (eq. 9, [10]): ``[1 − u]₊ ≤ (1 − u + z)²/(4z)`` for every ``z > 0``, touching at
``z = |1 − u|``; eq. 13 floors ``z ← max(|1 − u|, ε)``. With the floor the majorizer touches
``h_ε(1 − u) = min_{z≥ε}(1 − u + z)²/(4z)`` (the hinge with a quadratic piece on ``|1 − u| < ε``),
so Algorithm 1 is an exact MM for the smoothed objective ``F_ε`` (hinge → h_ε): ``F_ε(x⁺) ≤
g(x⁺; z) ≤ g(x; z) = F_ε(x)``, but the true ``F`` can rise by up to the excess ``F_ε(x) − F(x)``
(a quadratic touching the hinge at ``|1 − u| = δ`` needs curvature ``1/(4δ)``, which the floor caps).

Safeguarded step (so that the true ``F`` never increases). With ``d = x⁺ − x`` the MM step:

1. ``F(x⁺) ≤ F(x)``: take it (Algorithm 1 unchanged; the usual case).
2. Otherwise ``φ(t) = F(x + t d)`` on ``[0, 1]`` is a quadratic plus hinges, convex and piecewise
   quadratic; :func:`~mlsvm.solvers.piecewise_quadratic.hinge_segment_search` gives its minimiser
   ``t_min`` and ``t_level = max{t : φ(t) ≤ φ(0)}`` exactly. Take ``t = (t_min + t_level)/2``, else
   ``t_min``, the first whose computed ``F`` is ≤ ``F(x)`` (``t = 0`` is always admissible).
3. No ``t > 0`` lowers F (MM's direction is an ascent direction of F; measured: the common case of
   a rise): stay at x and divide the floor by 10 (ε-continuation), down to ``ε·CONTINUATION_FLOOR``.

Hence ``F`` never increases: every accepted point's computed ``F`` is ≤ the previous one (the
comparison is made on the very values recorded in ``history["primal"]``). ``F_ε`` (at the
floor in force) never increases either: a full step is MM; a partial one by convexity,
``F_ε(x + td) ≤ (1−t)F_ε(x) + tF_ε(x⁺) ≤ F_ε(x)``; and ``F_ε' ≤ F_ε`` pointwise for ``ε' < ε``.
Continuation ends in exact arithmetic: once the floor is below every ``|1 − u_i|`` (none 0) the
majorizer touches F itself at x and step 1 applies. A stall at the last floor stops with a
``ConvergenceWarning``. Bound on where MM stops (the floor ``ε_f ≤ ε`` in force at the end; MM
converges to the minimizer ``x_f`` of ``F_{ε_f}``)::

    F* ≤ F(x_f) ≤ F_{ε_f}(x_f) ≤ F_{ε_f}(x*) ≤ F* + β ε_f N_f / 4 ≤ F* + β ε T / 4

(``N_f`` memberships with ``|1 − u*| < ε_f``, ``T`` all memberships); continuation only tightens it.
The history records ``primal`` (F), ``smoothed_objective`` (F at the floor in force),
``smoothing_excess`` (their difference), ``step`` (1, the safeguarded t, or 0) and ``epsilon``
(the floor in force), and more (stop rule below).

Each iteration minimizes the majorizer: one symmetric KKT system in ``ṽ_k = (v_k, b_k)``::

    blockdiag(C_k) + coupling on s = Σ_k ṽ_k,  C_k = diag((1−α)1_r, 0) + F̃_kᵀ diag(β/(2z)) F̃_k

(``F̃_k = [F_{C_k}, 1]``; coupling ``α`` on the v-part of s for soft w, ``2γ`` on its b-part for
soft b; hard constraints ``s_v = 0`` / ``s_b = 0``). It is solved by block elimination: one
Cholesky factorization of each ``C_k`` ((r+1)², K of them) and one (r+1)-dimensional Schur system
for the common multiplier ``π`` (``C_k ṽ_k + π = g_k``), instead of a dense ``K(r+1)`` solve.
A ``C_k`` that is not positive definite raises ``ValueError`` (the Hessian must be PD, App. A).

Stop rule (the certificate it is graded on). Each majorizer step also gives multipliers
``λ⁺ = β(1 − u⁺ + z)/(2z)`` at its minimiser x⁺: before clipping to ``[0, β]`` they carry equal
class masses and satisfy ``W⁺M = Σλ⁺φ`` exactly, however far x is from the optimum; clipped and
equalized (:func:`~mlsvm.formulations.ovn.equalize_class_mass`) they are a feasible dual point, so
``F(x) − D(λ)`` bounds ``F(x) − F*``. (The earlier ``β h_ε'(1 − u)`` at the final point moves by
β/(2ε) per unit of slack error: its gap was up to 4.5e-2 on the verify problems.) MM stops when
the relative gap is ≤ ``tol`` and then :func:`mlsvm.formulations.ovn.evaluate` at the returned
point says the relative gap and every scaled KKT residual are ≤ ``tol``; ``stop_value`` is that
maximum. The smoothing alone costs up to ``βεT/4``: while that bound (relative to F) exceeds
``SMOOTHING_SHARE·tol`` and the remaining gap is within twice it, the floor is divided by 10 too.
MM is sublinear: measured certificates 1e-4 within 1,227 iterations on the verify problems;
below ≈ 1e-7 the floor reaches round-off (weights β/(2ε) ≈ 1e9) and MM stalls with a
``ConvergenceWarning``. ``max_iter`` or a stall at the last floor warns with the certificate
reached. History: ``primal`` (F), ``dual`` (D at the equalized λ⁺), ``stop_value`` (the
certificate: its relative gap, or the full one once the gap is ≤ tol), ``relative_gap``,
``decrease`` (of F_ε, the paper's quantity), ``smoothed_objective``, ``smoothing_excess``,
``step``, ``epsilon``.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from mlsvm.formulations import ovn
from mlsvm.solvers.piecewise_quadratic import hinge_segment_search
from mlsvm.solvers.result import SolverResult, warn_not_converged

__all__ = ["mm"]

STOP_RULE = "max(|relative duality gap|, scaled KKT residuals) of the iterate and its equalized multipliers"
#: ε-continuation goes down to ε·CONTINUATION_FLOOR (six decades; on the tests' problems it used ≤ 4)
CONTINUATION_FLOOR = 1e-6
#: ε-continuation also divides the floor by 10 while the smoothing bound βεT/4 (relative to F) is
#: above this share of tol: the smoothing alone must never keep the certified gap above tol
SMOOTHING_SHARE = 0.1


def _majorizer_step(V, b, augmented, z, beta, regularizer_diagonal, coupling, hard, alpha, floor):
    """``x⁺ − x`` for the minimizer ``x⁺`` of the majorizer built with weights ``z`` (the KKT system
    of the module docstring). The correction is computed from the residual of the majorizer's
    stationarity at the current x (small near convergence), not from scratch: with z → ε the blocks
    carry weights β/(2ε) and a direct solve would lose the digits that monotonicity needs."""
    r, K = V.shape
    current = np.vstack([V, b[None, :]])                 # ṽ_k as columns, (r+1) × K
    coupling_term = coupling * current.sum(axis=1)       # Ω s on the soft coordinates
    factors, residuals, h, Z = [], [], np.zeros(r + 1), np.zeros((r + 1, r + 1))
    for k in range(K):
        weight = beta / (2.0 * z[k])
        C = np.diag(regularizer_diagonal) + augmented[k].T @ (weight[:, None] * augmented[k])
        try:
            factor = cho_factor(C, lower=True, check_finite=False)
        except LinAlgError:
            raise ValueError(
                f"the MM Hessian block of class {k} is not positive definite (alpha={alpha!r}, beta={beta!r}, "
                f"epsilon={floor!r}): Appendix A requires D̃ + (α/2)D̃₀ + βX̃ ≻ 0") from None
        g_k = augmented[k].T @ (weight * (1.0 + z[k]))
        residual_k = g_k - C @ current[:, k] - coupling_term
        factors.append(factor)
        residuals.append(residual_k)
        h += cho_solve(factor, residual_k, check_finite=False)
        Z += cho_solve(factor, np.eye(r + 1), check_finite=False)
    # common multiplier π: soft coordinate j: π_j = ω_j s_j; hard coordinate: s_j = 0; s = h − Zπ
    system = np.where(hard[:, None], Z, np.eye(r + 1) + coupling[:, None] * Z)
    rhs = np.where(hard, h, coupling * h)
    try:
        pi = np.linalg.solve(system, rhs)
    except np.linalg.LinAlgError:
        raise ValueError("the MM KKT system is singular: the Hessian is not positive definite "
                         "on the constraint set") from None
    correction = np.column_stack([cho_solve(factors[k], residuals[k] - pi, check_finite=False) for k in range(K)])
    return correction[:r], correction[r]


def _coef(features: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``A`` with ``W = ΦᵀA``: ``Fᵀ A = V`` in the least-squares (minimum-norm) sense."""
    return np.linalg.lstsq(features.T, V, rcond=None)[0]


def mm(problem: ovn.OvNProblem, *, epsilon: float = 1e-6, tol: float = 1e-8, max_iter: int = 1000,
       callback=None) -> SolverResult:
    """Algorithm 1 for the four variants, with the safeguarded step and the certified stop of the
    module docstring. Returns primal ``{"coef" (n × K, W = ΦᵀA), "b" (K), "V" (r × K, the features'
    coordinates)}`` and dual ``{"Lam", "nu"}`` (the last majorizer's multipliers, clipped to
    ``[0, β]`` and equalized: a feasible dual point, so its objective is a true lower bound).
    ``callback(n_iter, primal, dual)`` sees every iterate in those names."""
    start = time.perf_counter()
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0; got {epsilon!r}")
    features = problem.factor()
    Y, alpha, beta, gamma_b = problem.Y, problem.alpha, problem.beta, problem.gamma_b
    w_constraint, b_constraint = problem.w_constraint, problem.b_constraint
    n, r = features.shape
    K = Y.shape[1]
    classes = [np.flatnonzero(Y[:, k]) for k in range(K)]
    empty = [k for k, rows in enumerate(classes) if rows.size == 0]
    if empty:
        raise ValueError(f"classes {empty} have no member: the b-block of the Hessian is singular; "
                         "use mlsvm.formulations.ovn.empty_class_solution (closed form)")
    soft_w = w_constraint == "soft"
    a = alpha if soft_w else 0.0
    M = (1.0 - a) * np.eye(K) + a * np.ones((K, K))
    S = problem.dual_metric
    regularizer_diagonal = np.append(np.full(r, 1.0 - a), 0.0)
    coupling = np.append(np.full(r, a), 2.0 * gamma_b if b_constraint == "soft" else 0.0)
    hard = np.append(np.full(r, not soft_w), b_constraint == "hard")
    augmented = [np.hstack([features[rows], np.ones((rows.size, 1))]) for rows in classes]
    z = [np.ones(rows.size) for rows in classes]
    offsets = np.concatenate([[0], np.cumsum([rows.size for rows in classes])])
    member_rows = np.concatenate(classes)
    member_classes = np.repeat(np.arange(K), np.diff(offsets))

    def slacks(V, b):
        return np.concatenate([1.0 - (features[rows] @ V[:, k] + b[k]) for k, rows in enumerate(classes)])

    def regularizer(V, b):
        return 0.5 * float(np.sum((V.T @ V) * M)) + (gamma_b * float(b.sum()) ** 2 if b_constraint == "soft" else 0.0)

    def objectives(V, b, slack, floor):
        hinge = np.maximum(slack, 0.0)
        smooth = np.where(np.abs(slack) < floor, (slack + floor) ** 2 / (4.0 * floor), hinge)
        value = regularizer(V, b)
        return value + beta * hinge.sum(), value + beta * smooth.sum()

    def dual_point(multipliers):
        """The majorizer's multipliers as a feasible dual point ``(Λ, ν)`` and its objective."""
        Lam = np.zeros((n, K))
        Lam[member_rows, member_classes] = multipliers
        Lam = ovn.equalize_class_mass(problem, Lam)
        nu = float(Lam.sum(axis=0).mean())
        U = features.T @ Lam
        value = float(Lam.sum()) - 0.5 * float(np.sum((U.T @ U) * S))
        if problem.soft_b:
            value -= nu * nu / (4.0 * gamma_b)
        return {"Lam": Lam, "nu": nu}, value

    def certificate(V, b, dual):
        """max(|relative gap|, scaled KKT residuals) of the point MM would return, as graded."""
        evaluation = ovn.evaluate(problem, {"coef": _coef(features, V), "b": b}, dual)
        return max(abs(evaluation.relative_gap), evaluation.max_kkt)

    history = {"primal": [], "dual": [], "stop_value": [], "relative_gap": [], "decrease": [],
               "smoothed_objective": [], "smoothing_excess": [], "step": [], "epsilon": []}
    converged, iteration = False, 0
    V, b = np.zeros((r, K)), np.zeros(K)
    slack = slacks(V, b)
    value = objectives(V, b, slack, epsilon)[0]
    floor, stalled, certified_value = epsilon, False, np.inf
    dual = None
    for iteration in range(1, max_iter + 1):
        dV, db = _majorizer_step(V, b, augmented, z, beta, regularizer_diagonal, coupling, hard, alpha, floor)
        if b_constraint == "hard":  # remove round-off so every point of the segment is exactly feasible
            db -= db.mean()
        if not soft_w:
            dV -= dV.mean(axis=1, keepdims=True)
        new_slack = slacks(V + dV, b + db)
        # the majorizer's multipliers at its minimiser x⁺, β(1 − u⁺ + z)/(2z): before clipping they
        # carry equal class masses and give W⁺M = Σ λ⁺φ exactly, whatever the accuracy of x
        weights = np.concatenate(z)
        dual, dual_value = dual_point(beta * np.clip((new_slack + weights) / (2.0 * weights), 0.0, 1.0))
        new_value, new_smoothed = objectives(V + dV, b + db, new_slack, floor)
        smoothed = objectives(V, b, slack, floor)[1]
        decrease = (smoothed - new_smoothed) / max(1.0, abs(smoothed))  # the decrease Algorithm 1 makes
        step = 1.0
        if new_value > value:  # safeguard: F on the segment [x, x⁺], exactly (convex, piecewise quadratic)
            step = 0.0
            quadratic = 2.0 * regularizer(dV, db)
            linear = float(np.sum((V.T @ dV) * M)) + (2.0 * gamma_b * b.sum() * db.sum() if b_constraint == "soft" else 0.0)
            t_min, t_level = hinge_segment_search(quadratic, linear, slack, slack - new_slack, beta)
            for t in (0.5 * (t_min + t_level), t_min):
                if t > 0:
                    new_slack = slacks(V + t * dV, b + t * db)
                    new_value = objectives(V + t * dV, b + t * db, new_slack, floor)[0]
                    if new_value <= value:
                        step = t
                        break
        if step > 0:
            V, b, slack, value = V + step * dV, b + step * db, new_slack, new_value
        true_value, smoothed_value = objectives(V, b, slack, floor)
        gap = (true_value - dual_value) / max(1.0, abs(true_value), abs(dual_value))
        # the certificate as graded (gap and KKT residuals by the formulation) once the gap allows it
        certified_value = certificate(V, b, dual) if abs(gap) <= tol else abs(gap)
        for key, entry in zip(history, (true_value, dual_value, certified_value, gap, decrease,
                                        smoothed_value, smoothed_value - true_value, step, floor)):
            history[key].append(entry)
        if callback is not None:
            callback(iteration, {"coef": _coef(features, V), "b": b, "V": V}, dual)
        if certified_value <= tol:
            converged = True
            break
        smoothing_bound = beta * floor * len(weights) / 4.0 / max(1.0, abs(true_value))
        if step == 0 or (smoothing_bound > SMOOTHING_SHARE * tol and abs(gap) <= 2.0 * smoothing_bound):
            # F rises all along the MM step, or what is left of the gap is of the size of the smoothing
            # bound βεT/4, which could keep it above tol: continue with a smaller floor (ε-continuation)
            if floor <= epsilon * CONTINUATION_FLOOR:
                if step == 0:
                    stalled = True
                    break
            else:
                floor /= 10.0
        for k, rows in enumerate(classes):
            z[k] = np.maximum(np.abs(slack[offsets[k]:offsets[k + 1]]), floor)
    if stalled:
        warn_not_converged("OvN MM", STOP_RULE + f" (stalled: F rises along the MM step at the smallest floor "
                           f"{floor:.0e})", certified_value, tol, iteration)
    elif not converged:
        warn_not_converged("OvN MM", STOP_RULE, certified_value, tol, max_iter)
    return SolverResult(primal={"coef": _coef(features, V), "b": b.copy(), "V": V.copy()}, dual=dual,
                        converged=converged, n_iter=iteration, stop_value=certified_value, stop_rule=STOP_RULE,
                        solve_time=time.perf_counter() - start, history=history, solver="mm")
