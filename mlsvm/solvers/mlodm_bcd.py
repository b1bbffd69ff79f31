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
optimum) and the scaled residual ``‖r‖_∞ / (1 + max(‖Pη‖_∞, ‖q‖_∞, ‖∇‖_∞)) ≤ tol`` (the scaling
of the dual-feasibility KKT residual of :func:`mlsvm.formulations.mlodm.kkt_residuals`, which it
bounds; the gap alone is quadratic in the gradient and would stop with KKT residuals near √tol).
``stop_value`` is the larger of the two.
Memory: α, β (2T), B and F (n × q) besides the Gram matrix.
"""

from __future__ import annotations

import time

import numpy as np

from scipy.sparse.linalg import LinearOperator, cg

from mlsvm.formulations import mlodm
from mlsvm.solvers.nnqp import nnqp_active_set, nnqp_m3
from mlsvm.solvers.result import SolverResult, relative_gap, warn_not_converged

__all__ = ["SUBPROBLEMS", "solve_bcd"]

SUBPROBLEMS = ("exact", "m3")
#: the relative gap below which the ``polish`` step of the "fast" solver is tried (1: from the
#: first sweep on; a failed polish is discarded, so trying early only costs; docs/mlodm.md has the
#: measurement)
POLISH_FROM_GAP = 1.0
#: instance blocks of the polish's preconditioner larger than this are replaced by their diagonal
PRECONDITIONER_BLOCK_MAX = 64
#: relative CG residual of the active-set steps whose free set may still change
SEARCH_RTOL = 1e-6
#: the accurate solve's relative CG residual: ``tol / √|F|`` (then the free entries' KKT residual,
#: at most the residual's 2-norm, is below tol), at least this
ACCURATE_RTOL_FLOOR = 1e-13
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


def _certificate(problem, alpha, beta, coef) -> dict:
    """Stopping quantities on exactly recomputed scores (no accumulated round-off)."""
    scores = problem.gram @ coef
    primal = mlodm.primal_objective(problem, coef, scores)
    dual = mlodm.dual_objective(problem, alpha, beta, scores)
    gap = relative_gap(primal, dual)
    grad_alpha, grad_beta = mlodm.dual_gradient(problem, alpha, beta, problem.pairs.gather(scores))
    largest = _natural_residual(grad_alpha, grad_beta, alpha, beta)
    linear = 1.0 + problem.theta  # ‖q‖_∞; P η = ∇ − q
    scale = 1.0 + max(linear, np.max(np.abs(grad_alpha + 1.0 - problem.theta), initial=0.0),
                      np.max(np.abs(grad_beta - linear), initial=0.0),
                      np.max(np.abs(grad_alpha), initial=0.0), np.max(np.abs(grad_beta), initial=0.0))
    residual = largest / scale
    return {"scores": scores, "primal": primal, "dual": dual, "gap": gap, "largest_residual": largest,
            "residual": residual, "stop_value": max(gap, residual)}


def _instance_blocks(problem, index):
    """Block-Jacobi preconditioner of ``P_FF`` (the free entries ``index`` of η = [α; β]): the
    inverse of its diagonal blocks, one per instance. An instance's block couples its own pairs only
    (``K_ii S_iᵀS_i`` with the signs of α and β, plus the diagonal ``n_t/C``, ``n_t/(μC)``); the
    blocks of one size are inverted together. Blocks larger than :data:`PRECONDITIONER_BLOCK_MAX`
    (many labels) keep only their diagonal, so the preconditioner holds at most that many numbers
    per free entry."""
    pairs, T = problem.pairs, problem.pairs.n_pairs
    pair = index % T
    sign = np.where(index < T, 1.0, -1.0)
    diagonal = problem.pair_size[pair] / problem.C * np.where(index < T, 1.0, 1.0 / problem.mu)
    instance = pairs.instance[pair]
    order = np.argsort(instance, kind="stable")        # index is sorted, so α entries come first
    starts = np.flatnonzero(np.r_[True, np.diff(instance[order]) != 0])
    sizes = np.diff(np.r_[starts, order.size])
    kernel_diagonal = np.diag(problem.gram)
    groups = []
    large = sizes > PRECONDITIONER_BLOCK_MAX
    jacobi = order[np.repeat(large, sizes)]
    jacobi_inverse = 1.0 / (2.0 * kernel_diagonal[instance[jacobi]] + diagonal[jacobi])
    for size in np.unique(sizes[~large]):
        first = starts[(sizes == size) & ~large]
        members = order[first[:, None] + np.arange(size)]          # (blocks, size) positions in index
        t, s = pair[members], sign[members]
        incidence = ((pairs.relevant[t][:, :, None] == pairs.relevant[t][:, None, :]).astype(np.float64)
                     + (pairs.irrelevant[t][:, :, None] == pairs.irrelevant[t][:, None, :]))
        blocks = kernel_diagonal[instance[members[:, 0]]][:, None, None] * incidence * s[:, :, None] * s[:, None, :]
        blocks[:, np.arange(size), np.arange(size)] += diagonal[members]
        groups.append((members, np.linalg.inv(blocks)))

    def solve(residual):
        residual = np.ravel(residual)
        out = np.empty_like(residual)
        out[jacobi] = jacobi_inverse * residual[jacobi]
        for members, inverse in groups:
            out[members] = np.einsum("bij,bj->bi", inverse, residual[members])
        return out

    return LinearOperator((index.size, index.size), matvec=solve, dtype=np.float64)


def _polish(problem, alpha, beta, tol, max_steps: int = 8):
    """Primal-dual active-set steps for the whole dual (see :func:`solve_bcd`): the free set is
    ``{j : η_j − ∇_j > 0}``; solve ``P_FF η_F = −q_F`` (CG, matrix-free, preconditioned by
    :func:`_instance_blocks`) with ``η = 0`` elsewhere and repeat until the free set repeats. While
    the free set may still change CG stops at :data:`SEARCH_RTOL`; once it repeats, one more solve
    from that point reaches ``tol/√|F|``. Returns the last iterate clipped at 0, or ``None``; the
    caller keeps it only when its certificate is better."""
    T = problem.pairs.n_pairs
    operator = mlodm._dual_operator(problem)
    linear = np.concatenate([np.full(T, problem.theta - 1.0), np.full(T, problem.theta + 1.0)])
    eta = np.concatenate([alpha, beta])
    free = eta - (operator.matvec(eta) + linear) > 0
    rtol = SEARCH_RTOL
    for _ in range(max_steps):
        index = np.flatnonzero(free)
        if index.size == 0:
            return None

        def restricted(x, index=index):
            full = np.zeros(2 * T)
            full[index] = np.ravel(x)
            return operator.matvec(full)[index]

        system = LinearOperator((index.size, index.size), matvec=restricted, dtype=np.float64)
        solution, info = cg(system, -linear[index], x0=eta[index], rtol=rtol, atol=0.0, maxiter=10 * index.size,
                            M=_instance_blocks(problem, index))
        if info != 0:
            return None
        eta = np.zeros(2 * T)
        eta[index] = solution
        new_free = eta - (operator.matvec(eta) + linear) > 0
        if np.array_equal(new_free, free):
            accurate = max(min(SEARCH_RTOL, tol / np.sqrt(index.size)), ACCURATE_RTOL_FLOOR)
            if rtol <= accurate:
                break
            rtol = accurate   # the free set has settled: one accurate solve on it, from this point
            continue
        free = new_free
    eta = np.maximum(eta, 0.0)
    return eta[:T], eta[T:]


def solve_bcd(problem: mlodm.MLODMProblem, *, subproblem: str = "exact", tol: float = 1e-6,
              max_iter: int = 1000, shrinking: bool = True, random_state=None,
              subproblem_max_iter: int = 10_000, polish: bool = False, callback=None) -> SolverResult:
    """Alg. 1 on ``problem``; ``max_iter`` counts sweeps (epochs over all instances).

    Returns a :class:`SolverResult` with ``dual = {"alpha", "beta"}`` and ``primal = {"coef"}``
    (``B``, ``w_k = Σ_i B_ik φ(x_i)``); ``history`` holds per sweep the primal and dual objectives,
    the stopping value, the relative gap, the scaled residual, the number of blocks updated, the sub-solver's
    iterations, whether a polishing step was tried and whether it was accepted.

    ``polish=True`` (the library's ``"fast"`` solver, not the paper's algorithm): once the relative
    gap is below ``POLISH_FROM_GAP``, a sweep also tries a few primal-dual active-set steps on
    the whole dual (free set ``{η − ∇ > 0}``, the equality-constrained QP ``P_FF η_F = −q_F`` solved
    by conjugate gradients with the matrix-free ``P``, O(T + nq) memory). Once BCD is close to the
    optimal support this lands on the exact optimum; the result is kept only if it lowers the
    stopping value. A polish that does not halve the stopping value (its CG failed, or its point
    is no better or barely better) makes the next ones wait: after the k-th in a row, the next
    ``2^(k-1) − 1`` sweeps go without. On data where it keeps failing (e.g. an ill-conditioned
    Gram matrix) it is tried at sweeps 1, 2, 4, 8, …: O(log max_iter) attempts, not one per sweep.

    Parameters
    ----------
    problem : mlodm.MLODMProblem
        The problem data (validated formulation object).
    subproblem : {"exact", "m3"}
        Block solver: exact active set or M³ multiplicative updates.
    tol : float
        Stopping tolerance: the bound on the quantity of the solver's stop rule (see the model's
        documentation page for which quantity).
    max_iter : int
        Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the value reached.
    shrinking : bool
        Skip blocks whose natural residual is small (§5.2).
    random_state : int, Generator or None
        Seed of the randomised parts of the solver (sweep order, candidate sets).
    subproblem_max_iter : int
        Iteration budget of each block solve.
    polish : bool
        Whole-dual active-set polishing steps after the sweeps (``solver="fast"``).
    callback : callable or None
        Called once per iteration, for monitoring only (it does not change the iterates).
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
    if instances.size and not np.isfinite(np.max(np.diff(offsets)) / (mu * C)):
        # C = 1e-300 with μ = 1e-8: the blocks' H held inf and the active set cycled on it
        raise FloatingPointError(f"the dual's diagonal |Y_i||Ȳ_i| / (μC) overflows float64 (C = {C:g}, "
                                 f"μ = {mu:g})")
    rng = np.random.default_rng(random_state)
    history = {"primal": [], "dual": [], "stop_value": [], "relative_gap": [], "natural_residual": [],
               "blocks_updated": [], "subproblem_iterations": [], "polish_tried": [], "polished": []}
    stop_value, kkt_residual, shrink_threshold, converged, sweep = np.inf, 1.0, 0.0, False, 0
    polish_failures, polish_wait = 0, 0
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
        certificate = _certificate(problem, alpha, beta, coef)
        polished = tried = False
        if polish and certificate["stop_value"] > tol and certificate["gap"] <= POLISH_FROM_GAP:
            if polish_wait > 0:
                polish_wait -= 1
            else:
                tried, before = True, certificate["stop_value"]
                candidate = _polish(problem, alpha, beta, tol)
                if candidate is not None:
                    trial = _certificate(problem, *candidate, mlodm.coef_from_dual(problem, *candidate))
                    if trial["stop_value"] < before:
                        (alpha, beta), certificate, polished = candidate, trial, True
                        coef = mlodm.coef_from_dual(problem, alpha, beta)
                # a polish whose CG fails costs up to 10|F| operator products, far more than a
                # sweep: after the k-th polish in a row that does not halve the stop value, the
                # next 2^(k-1) - 1 sweeps go without
                progressed = certificate["stop_value"] <= 0.5 * before
                polish_failures = 0 if progressed else polish_failures + 1
                polish_wait = 2 ** (polish_failures - 1) - 1 if polish_failures else 0
        scores, stop_value = certificate["scores"], certificate["stop_value"]
        for key, value in zip(history, (certificate["primal"], certificate["dual"], stop_value, certificate["gap"],
                                        certificate["residual"], updated, inner_iterations, tried, polished)):
            history[key].append(value)
        if callback is not None:
            callback(sweep, {"coef": coef}, {"alpha": alpha, "beta": beta})
        if stop_value <= tol:
            converged = True
            break
        shrink_threshold = shrink_threshold / 10.0 if updated == 0 else 0.1 * certificate["largest_residual"]
        kkt_residual = certificate["residual"]
    if not converged:
        warn_not_converged(f"mLODM BCD ({subproblem})", STOP_RULE, stop_value, tol, max_iter)
    return SolverResult(primal={"coef": coef}, dual={"alpha": alpha, "beta": beta}, converged=converged,
                        n_iter=sweep, stop_value=float(stop_value), stop_rule=STOP_RULE,
                        solve_time=time.perf_counter() - start_time, history=history,
                        solver="bcd" if subproblem == "exact" else "bcd-m3")
