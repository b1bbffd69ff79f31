"""Dual block coordinate descent for mLODM (Tan et al., Alg. 1), one block per instance.

Solves the dual (eq. 18; constants in :mod:`mlsvm.formulations.mlodm`)::

    min_{α, β ≥ 0}  ½ tr(BᵀKB) + Σ_t [α_t(θ − 1) + β_t(θ + 1)] + Σ_t n_t/(2C) (α_t² + β_t²/μ),
    B = scatter(α − β)

Each sweep visits the instances with pairs in a random order (``random_state``). For instance i
with pairs t ∈ i (``p = n_i`` of them, ``S_i`` their ±1 label incidences) the block is the NNQP of
eq. (24) in ``η = [α_i; β_i]``::

    H = [[A + (n_i/C) I, −A], [−A, A + n_i/(μC) I]],  A = K_ii S_iᵀS_i,
    v = [b − (1 − θ); −b + (1 + θ)],                    b = m_i − A(α_i − β_i)

(``m_i`` the current pair margins of instance i, so ``b`` is the part of the margins due to the
other instances; ``(S_iᵀS_i)_{tt'} = [k_t = k_t'] + [l_t = l_t']``). Sub-solvers:
``"exact"`` (active set, :func:`~mlsvm.solvers.nnqp.nnqp_active_set`, warm-started) and ``"m3"``
(Alg. 2 from η = 1 as the paper says, stopped at natural residual ``0.1·max(tol, r)`` with r the
scaled residual at the end of the previous sweep: a fixed loose inner tolerance from a fixed start
would make BCD stall at a fixed point of inexact updates).

Optimality is measured by the natural residual ``r(η) = min(η, ∇)`` (zero exactly at the optimum;
unlike the projected gradient it also vanishes on M³ iterates, which approach 0 but never reach it).

Shrinking (§5.2): the paper skips a block when ``∇F(η_i) = 0``; with bounds the right test is
``‖r(η_i)‖_∞ ≤`` the shrink threshold (a positive gradient at η = 0 is optimal too). The threshold
is ``0.1·`` the largest residual at the end of the previous sweep (0 in the first), divided by 10
whenever a sweep skips every block, so shrinking never stalls the descent.

Stopping rule (both, checked after every sweep on exactly recomputed scores ``F = K B``):
the relative duality gap ``(P(w) − D(α, β)) / max(1, |P|, |D|) ≤ tol`` (P the primal eq. 15 at
``w(α, β)``, D minus the eq. 18 objective: a true bound on both objectives' distance to the
optimum) and the scaled residual ``‖r‖_∞ / (2 + θ) ≤ tol`` (``2 + θ = 1 + ‖q‖_∞``; it bounds the
scaled dual-feasibility KKT residual; the gap alone is quadratic in the gradient and would stop
with KKT residuals near √tol). ``stop_value`` is the larger of the two.
Memory: α, β (2T), B and F (n × q) besides the Gram matrix.
"""

from __future__ import annotations

import time

import numpy as np

from mlsvm.formulations import mlodm
from mlsvm.solvers.nnqp import nnqp_active_set, nnqp_m3
from mlsvm.solvers.result import SolverResult, warn_not_converged

__all__ = ["SUBPROBLEMS", "solve_bcd"]

SUBPROBLEMS = ("exact", "m3")
STOP_RULE = "max(relative duality gap, scaled natural residual)"


def _block(gram_ii, relevant, irrelevant, margins, alpha_i, beta_i, C, theta, mu):
    """H and v of eq. (24) for one instance."""
    p = relevant.size
    incidence = (relevant[:, None] == relevant[None, :]).astype(np.float64)
    incidence += irrelevant[:, None] == irrelevant[None, :]
    A = gram_ii * incidence
    others = margins - A @ (alpha_i - beta_i)
    H = np.empty((2 * p, 2 * p))
    H[:p, :p] = A
    H[:p, p:] = -A
    H[p:, :p] = -A
    H[p:, p:] = A
    diagonal = np.arange(p)
    H[diagonal, diagonal] += p / C
    H[p + diagonal, p + diagonal] += p / (mu * C)
    v = np.concatenate([others - (1.0 - theta), (1.0 + theta) - others])
    return H, v


def _natural_residual(grad_alpha, grad_beta, alpha, beta) -> float:
    """``‖min(η, ∇)‖_∞``, zero exactly at the optimum. Unlike the projected gradient it also
    vanishes on M³ iterates, whose entries tend to 0 without ever reaching it."""
    return float(max(np.max(np.abs(np.minimum(alpha, grad_alpha)), initial=0.0),
                     np.max(np.abs(np.minimum(beta, grad_beta)), initial=0.0)))


def solve_bcd(problem: mlodm.MLODMProblem, *, subproblem: str = "exact", tol: float = 1e-6,
              max_iter: int = 1000, shrinking: bool = True, random_state=None,
              subproblem_max_iter: int = 10_000, callback=None) -> SolverResult:
    """Alg. 1 on ``problem``; ``max_iter`` counts sweeps (epochs over all instances).

    Returns a :class:`SolverResult` with ``dual = {"alpha", "beta"}`` and ``primal = {"coef"}``
    (``B``, ``w_k = Σ_i B_ik φ(x_i)``); ``history`` holds per sweep the primal and dual objectives,
    the relative gap, the number of blocks updated and the sub-solver's iterations.
    """
    if subproblem not in SUBPROBLEMS:
        raise ValueError(f"subproblem must be one of {SUBPROBLEMS}; got {subproblem!r}")
    start_time = time.perf_counter()
    gram, pairs = problem.gram, problem.pairs
    C, theta, mu = float(problem.C), float(problem.theta), float(problem.mu)
    n, q = pairs.n_samples, pairs.n_labels
    offsets, relevant, irrelevant = pairs.offsets, pairs.relevant, pairs.irrelevant
    alpha, beta = np.zeros(pairs.n_pairs), np.zeros(pairs.n_pairs)
    coef, scores = np.zeros((n, q)), np.zeros((n, q))
    instances = np.flatnonzero(np.diff(offsets) > 0)
    rng = np.random.default_rng(random_state)
    history = {"primal": [], "dual": [], "relative_gap": [], "natural_residual": [],
               "blocks_updated": [], "subproblem_iterations": []}
    stop_value, kkt_residual, shrink_threshold, converged, sweep = np.inf, 1.0, 0.0, False, 0
    for sweep in range(1, max_iter + 1):
        inner_tol = 0.1 * max(tol, min(kkt_residual, 1.0))
        updated, inner_iterations = 0, 0
        for i in rng.permutation(instances):
            s, e = offsets[i], offsets[i + 1]
            rel, irr = relevant[s:e], irrelevant[s:e]
            margins = scores[i, rel] - scores[i, irr]
            alpha_i, beta_i = alpha[s:e], beta[s:e]
            p = e - s
            if shrinking:
                grad_alpha = margins - (1.0 - theta) + p * alpha_i / C
                grad_beta = (1.0 + theta) - margins + p * beta_i / (mu * C)
                if _natural_residual(grad_alpha, grad_beta, alpha_i, beta_i) <= shrink_threshold:
                    continue
            H, v = _block(gram[i, i], rel, irr, margins, alpha_i, beta_i, C, theta, mu)
            if subproblem == "exact":
                eta, n_inner = nnqp_active_set(H, v, start=np.concatenate([alpha_i, beta_i]))
            else:
                eta, n_inner, _ = nnqp_m3(H, v, tol=inner_tol, max_iter=subproblem_max_iter)
            inner_iterations += n_inner
            delta = (eta[:p] - eta[p:]) - (alpha_i - beta_i)
            alpha[s:e], beta[s:e] = eta[:p], eta[p:]
            coef_change = np.bincount(rel, delta, minlength=q) - np.bincount(irr, delta, minlength=q)
            coef[i] += coef_change
            scores += np.outer(gram[:, i], coef_change)
            updated += 1
        scores = gram @ coef  # exact scores for the certificate (no accumulated round-off)
        primal = mlodm.primal_objective(problem, coef, scores)
        dual = mlodm.dual_objective(problem, alpha, beta, scores)
        gap = (primal - dual) / max(1.0, abs(primal), abs(dual))
        largest_residual = _natural_residual(
            *mlodm.dual_gradient(problem, alpha, beta, pairs.gather(scores)), alpha, beta)
        kkt_residual = largest_residual / (2.0 + theta)
        stop_value = max(gap, kkt_residual)
        for key, value in zip(history, (primal, dual, gap, kkt_residual, updated, inner_iterations)):
            history[key].append(value)
        if callback is not None:
            callback(sweep, alpha, beta)
        if stop_value <= tol:
            converged = True
            break
        shrink_threshold = shrink_threshold / 10.0 if updated == 0 else 0.1 * largest_residual
    if not converged:
        warn_not_converged(f"mLODM BCD ({subproblem})", STOP_RULE, stop_value, tol, max_iter)
    return SolverResult(primal={"coef": coef}, dual={"alpha": alpha, "beta": beta}, converged=converged,
                        n_iter=sweep, stop_value=float(stop_value), stop_rule=STOP_RULE,
                        solve_time=time.perf_counter() - start_time, history=history,
                        solver="bcd" if subproblem == "exact" else "bcd-m3")
