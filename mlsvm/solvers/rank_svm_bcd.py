"""Exact Rank-SVM dual solver for the linear kernel: block coordinate descent by instance, in the
features' coordinates, inside a proximal augmented Lagrangian on the biases.

Problem 10 as ``min f(α) = ½‖W‖² − Σ_t α_t`` with ``W = Xᵀβ`` (d × Q), ``β = scatter(α)``, over
``0 ≤ α ≤ u`` and the Q equalities ``s = Σ_i β_i = 0`` (see :mod:`mlsvm.formulations.rank_svm`).

Outer loop (method of multipliers on the Q equalities; it is the proximal point method on the
primal's biases): with multipliers ν (the biases) and penalty ρ, minimise over the box only

    L(α) = ½‖W‖² − Σα + νᵀs + ρ/2 ‖s‖²,       then  ν ← ν + ρs.

ρ starts at :data:`RHO_START` · mean ‖x_i − m‖² and grows ×10 (up to :data:`RHO_CAP` times it)
while ‖s‖ does not fall by 4×.

The features are centred, ``x_i − m`` with m their mean, without forming them (``Xm``, ``Wᵀm``
and ``‖m‖²`` carry the shift; a CSR X stays sparse): the problem is unchanged (a shift of x is
absorbed by the biases, which are returned for the uncentred x), and coordinate descent on
uncentred data (bibtex: centroid / spread 0.49) took twice the passes.

Inner solver: block coordinate descent, instances in a shuffled (seeded) order each pass. The
pairs of instance i form the ``|Y_i| × |Ȳ_i|`` block ``α_i``; ``L`` depends on it only through
``β_i ∈ R^Q`` with Hessian ``a_i I``, ``a_i = ‖x_i − m‖² + ρ``, and gradient
``z = W_cᵀ(x_i − m) + ν + ρs − e_{Y_i}`` (``W_c = W − msᵀ``; pair (k, l): ``z_k − z_l``).
One visit of i computes ``z`` (``O(nnz(x_i)·Q)``), minimises ``L`` exactly over each row of the
block in turn (the smaller side: rows ``k ∈ Y_i`` or columns ``l ∈ Ȳ_i``) — a line of the block
is ``α_new = clip(α + (z_l − z_k)/a − S, 0, u)`` with the scalar ``S = Σ(α_new − α)``, the root of a
decreasing piecewise-linear function, found exactly from its sorted breakpoints
(:func:`_line_minimum`) — updating ``z`` after each line, then ``W += x_i Δβ_iᵀ`` and ``s += Δβ_i``.
A pass is a Python loop over the instances, not over the pairs.

Every pass ends with a full check: ``W`` and ``s`` are recomputed from α (no drift), every pair's
gradient is gathered from ``XW`` (``O(nnz(X)·Q + T)``), the projected-gradient violation decides
whether the inner problem is solved (below ``inner_tol``), and shrinking: an instance whose pairs
all sit on a bound with the gradient pushing outward by more than :data:`SHRINK_MARGIN` times the
violation is skipped until the next check that finds the shrunk problem solved (then all return).

Stopping rule (exact, stated): as :func:`mlsvm.solvers.rank_svm_alm.proximal_alm`: relative
duality gap at ``b = ν`` and the equality violation ``‖s‖∞ / max(1, ‖u‖∞)`` both ``≤ tol``, then
the point with its equality violation removed (:func:`mlsvm.formulations.rank_svm.restore_equalities`)
is graded by :func:`mlsvm.formulations.rank_svm.evaluate` — biases ν, and the primal-optimal biases
of :func:`mlsvm.solvers.rank_svm_decomposition.certified_biases` if ν fails — and the run stops when
that relative gap and every scaled KKT residual are ``≤ tol``. Reaching ``max_iter`` passes warns
with the value reached. Memory ``O(T + nnz(X) + dQ + nQ)``: no n × n matrix.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from mlsvm.formulations.rank_svm import RankSVMProblem, evaluate, restore_equalities
from mlsvm.solvers.rank_svm_alm import MultiplierSchedule
from mlsvm.solvers.rank_svm_decomposition import certified_biases
from mlsvm.solvers.result import SolverResult, relative_gap, warn_not_converged, warn_stalled

__all__ = ["instance_bcd"]

STOP_RULE = "relative duality gap, equality violation and scaled KKT residuals"
#: ρ never exceeds this multiple of mean ‖x_i‖²
RHO_CAP = 1e3
#: shrinking skips instances whose pairs are all pushed outward by more than this times the violation
SHRINK_MARGIN = 1.0
#: outer (multiplier) updates without the stopping value halving after which the run stops as stalled
STALL_WINDOW = 20
#: a visit leaves an instance alone when none of its pairs violates optimality by more than this × inner tolerance
SKIP = 0.1
#: the first penalty ρ, as a multiple of mean ‖x_i − m‖²
RHO_START = 0.1


def _line_minimum(p: np.ndarray, upper: float, total: float) -> np.ndarray:
    """``clip(p − S, 0, u)`` with ``S`` the root of ``F(S) = Σ clip(p − S, 0, u) − total − S``
    (decreasing, piecewise linear with breakpoints ``p`` and ``p − u``). Newton's method from
    ``S = 0`` first (exact once the clipped set stops changing: near the solution a line moves
    little, one or two steps); if it has not settled in three steps, exactly from the sorted breakpoints."""
    root = 0.0
    for _ in range(3):
        shifted = p - root
        inside = (shifted > 0.0) & (shifted < upper)
        n_inside = int(np.count_nonzero(inside))
        # F is linear with slope −(1 + n_inside) on the piece around the current root
        new_root = (upper * np.count_nonzero(shifted >= upper) + float(p[inside].sum()) - total) / (1.0 + n_inside)
        check = p - new_root
        if np.array_equal((check > 0.0) & (check < upper), inside) and \
                np.array_equal(check >= upper, shifted >= upper):
            return np.clip(check, 0.0, upper)
        root = new_root
    ps = np.sort(p)
    prefix = np.concatenate(([0.0], np.cumsum(ps)))
    m = ps.size
    breaks = np.sort(np.concatenate((ps - upper, ps)))
    below = np.searchsorted(ps, breaks, side="right")            # p ≤ S: 0
    full = np.searchsorted(ps, breaks + upper, side="left")       # p < S + u: not u
    value = upper * (m - full) + (prefix[full] - prefix[below]) - breaks * (full - below) - total - breaks
    k = int(np.searchsorted(-value, 0.0, side="right"))          # value is decreasing: first index < 0
    if k == 0:      # root below every breakpoint: all at u
        root = upper * m - total
    elif k == breaks.size:   # above every breakpoint: all at 0
        root = -total
    else:           # linear between breaks[k − 1] (value ≥ 0) and breaks[k] (value < 0)
        left, right = breaks[k - 1], breaks[k]
        v_left, v_right = value[k - 1], value[k]
        root = left + v_left * (right - left) / (v_left - v_right) if v_left > v_right else left
    return np.clip(p - root, 0.0, upper)


class _Blocks:
    """Per instance: its pair slice, relevant and irrelevant labels, bound u_i and ‖x_i‖²."""

    def __init__(self, problem: RankSVMProblem):
        pairs = problem.pairs
        offsets = pairs.offsets
        self.instances = [i for i in range(problem.n_samples) if offsets[i + 1] > offsets[i]]
        self.start = offsets
        self.positive, self.negative = {}, {}
        for i in self.instances:
            a, b = offsets[i], offsets[i + 1]
            m = int(np.sum(pairs.relevant[a:b] == pairs.relevant[a]))   # |Ȳ_i|: the first row's length
            self.negative[i] = pairs.irrelevant[a:a + m].copy()
            self.positive[i] = pairs.relevant[a:b:m].copy()
        self.upper = {i: float(problem.upper[offsets[i]]) for i in self.instances}


def _check(problem, X, centre, alpha, nu, rho):
    """``β``, ``W = Xᵀβ``, ``s``, ``Wᵀm`` recomputed from α, the centred weights' squared norm and
    every pair's gradient of ``L`` (scores ``X_c W_c = XW − 1(Wᵀm)ᵀ − (Xm − ‖m‖²)sᵀ``)."""
    beta = problem.scatter(alpha)
    W = np.asarray(X.T @ beta)
    s = beta.sum(axis=0)
    projected = beta.T @ centre.products    # Wᵀm = βᵀ(Xm)
    scores = (np.asarray(X @ W) - projected[None, :] - np.outer(centre.products - centre.square, s)
              + (nu + rho * s)[None, :])
    centred = W - np.outer(centre.vector, s)
    return beta, W, s, projected, float(np.sum(centred * centred)), problem.gather(scores) - 1.0


class _Centre:
    """The features' mean m, the products ``x_iᵀm`` and ``‖m‖²``: the solver works with the centred
    features ``x_i − m`` without forming them (a sparse X stays sparse)."""

    def __init__(self, X):
        self.vector = np.asarray(X.mean(axis=0)).ravel()
        self.products = np.asarray(X @ self.vector).ravel()
        self.square = float(self.vector @ self.vector)


def _violation(alpha, upper, gradient):
    """Projected-gradient violation per pair (in gradient units)."""
    return np.where(alpha <= 0.0, np.maximum(-gradient, 0.0),
                    np.where(alpha >= upper, np.maximum(gradient, 0.0), np.abs(gradient)))


def instance_bcd(problem: RankSVMProblem, *, tol: float = 1e-6, max_iter: int = 2000,
                 factor=None, alpha0: np.ndarray | None = None, callback=None) -> SolverResult:
    """Solve the linear-kernel Rank-SVM dual to relative duality gap and KKT ``tol`` (module docstring).

    Needs the problem's features X (dense or CSR; CSR is used as it is, a dense X is read
    through a CSR copy) or, for another kernel, a factor ``L`` with ``K = LLᵀ`` in their place. ``max_iter`` bounds the passes over the instances. Returns
    ``primal = {"beta", "b"}``, ``dual = {"alpha"}``; ``history`` has per multiplier update the
    passes so far, the stopping value, the relative gap and the equality violation.

    Parameters
    ----------
    problem : RankSVMProblem
        The Rank-SVM problem; must carry ``features`` (the linear kernel).
    tol : float, default=1e-6
        Tolerance on the relative duality gap and the scaled KKT residuals.
    max_iter : int, default=2000
        Maximum number of passes over the instances.
    factor : array of shape (n, r), sparse matrix or None, optional
        ``L`` with ``K = LLᵀ`` used instead of ``problem.features`` (another kernel).
    alpha0 : array of shape (T,) or None, optional
        Starting dual point (default 0).
    callback : callable or None, optional
        Called as ``callback(iteration, primal, dual)`` after every multiplier update.
    """
    start_time = time.perf_counter()
    X = problem.features if factor is None else factor
    if X is None:
        raise ValueError("instance_bcd needs the linear kernel's features (problem.features) or a factor "
                         "L with K = LLᵀ (factor=...)")
    X = X.tocsr() if sp.issparse(X) else sp.csr_matrix(np.asarray(X, dtype=np.float64))
    X.sort_indices()
    indptr, indices, data = X.indptr, X.indices, X.data
    upper = problem.upper
    blocks = _Blocks(problem)
    centre = _Centre(X)
    # ‖x_i − m‖², the centred K_ii
    squares = np.maximum(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
                         - 2.0 * centre.products + centre.square, 0.0)
    q = problem.n_labels
    alpha = np.zeros(problem.n_pairs) if alpha0 is None else np.clip(np.asarray(alpha0, float), 0.0, upper)
    mean_square = max(float(np.mean(squares)), 1e-3)
    rho, nu = RHO_START * mean_square, np.zeros(q)
    scale = max(1.0, float(np.max(upper)))
    history = {"passes": [], "stop_value": [], "relative_gap": [], "equality_violation": []}
    inner_tol = 1e-1 * scale
    active = np.asarray(blocks.instances)
    rng = np.random.default_rng(0)   # a fixed order per pass (reproducible), shuffled as LIBLINEAR does
    beta, W, s, projected, quadratic, gradient = _check(problem, X, centre, alpha, nu, rho)
    stop_value, converged, stalled = np.inf, False, False
    n_pass, point, n_outer = 0, None, 0
    schedule = MultiplierSchedule(STALL_WINDOW, RHO_CAP * mean_square)
    while n_pass < max_iter:
        # ---- one pass of block coordinate descent over the active instances
        n_pass += 1
        shift = nu + rho * s - projected      # the per-label part of z; the s·(x_iᵀm − ‖m‖²) part below
        skip = SKIP * inner_tol
        for i in rng.permutation(active):
            a0, a1 = indptr[i], indptr[i + 1]
            idx, val = indices[a0:a1], data[a0:a1]
            z = val @ W[idx] + shift - (centre.products[i] - centre.square) * s
            pos, neg, u = blocks.positive[i], blocks.negative[i], blocks.upper[i]
            z[pos] -= 1.0
            t0, t1 = blocks.start[i], blocks.start[i + 1]
            block = alpha[t0:t1].reshape(pos.size, neg.size)
            # the block's pairs already within SKIP · inner_tol of optimal are left alone
            pair_gradient = z[pos][:, None] - z[neg][None, :]
            if not np.any(np.where(block <= 0.0, -pair_gradient, np.where(block >= u, pair_gradient,
                                                                           np.abs(pair_gradient))) > skip):
                continue
            a = squares[i] + rho
            old = block.copy()
            if pos.size <= neg.size:
                for r in range(pos.size):
                    row = block[r]
                    new = _line_minimum(row + (z[neg] - z[pos[r]]) / a, u, float(row.sum()))
                    delta = new - row
                    block[r] = new
                    z[pos[r]] += a * delta.sum()
                    z[neg] -= a * delta
            else:
                for c in range(neg.size):
                    col = block[:, c]
                    new = _line_minimum(col + (z[neg[c]] - z[pos]) / a, u, float(col.sum()))
                    delta = new - col
                    block[:, c] = new
                    z[neg[c]] -= a * delta.sum()
                    z[pos] += a * delta
            change = block - old
            dbeta = np.zeros(q)
            dbeta[pos] = change.sum(axis=1)
            dbeta[neg] = -change.sum(axis=0)
            W[idx] += val[:, None] * dbeta[None, :]
            s += dbeta
            shift += rho * dbeta - centre.products[i] * dbeta     # Wᵀm changes by Δβ x_iᵀm
        # ---- full check: exact W, s and gradients; inner convergence; shrinking
        beta, W, s, projected, quadratic, gradient = _check(problem, X, centre, alpha, nu, rho)
        violation_per_pair = _violation(alpha, upper, gradient)
        inner = float(np.max(violation_per_pair))
        if inner > inner_tol:
            # shrink: instances all of whose pairs are at a bound, pushed outward by a margin
            outward = np.where(alpha <= 0.0, gradient, np.where(alpha >= upper, -gradient, -np.inf))
            settled = np.minimum.reduceat(outward > SHRINK_MARGIN * inner, blocks.start[:-1][blocks.instances]) \
                if blocks.instances else np.zeros(0, bool)
            settled = settled.astype(bool)
            kept = np.asarray(blocks.instances)[~settled]
            active = kept if kept.size else np.asarray(blocks.instances)
            continue
        active = np.asarray(blocks.instances)
        # ---- multiplier update
        n_outer += 1
        nu = nu + rho * s
        violation = float(np.max(np.abs(s)))
        margins = gradient + 1.0   # gather(XW) + Aᵀ(ν_old + ρs): the margins at the new ν
        primal = 0.5 * quadratic + float(upper @ np.maximum(0.0, 1.0 - margins))
        dual = float(alpha.sum()) - 0.5 * quadratic
        gap = relative_gap(primal, dual)
        stop_value = max(abs(gap), violation / scale)
        point = ({"beta": beta, "b": nu - projected - np.mean(nu - projected)}, {"alpha": alpha})
        if stop_value <= tol:
            stop_value, point = _certify(problem, alpha, nu, centre)
            converged = stop_value <= tol
        for key, value in zip(history, (n_pass, stop_value, gap, violation)):
            history[key].append(value)
        if callback is not None:
            callback(n_outer, *point)
        if converged:
            break
        if schedule.stalled(stop_value):
            stalled = True
            break
        rho = schedule.penalty(rho, violation)
        inner_tol = max(min(0.1 * inner_tol, 0.1 * max(abs(gap), violation / scale) * scale), 1e-14)
        beta, W, s, projected, quadratic, gradient = _check(problem, X, centre, alpha, nu, rho)
    if stalled:
        warn_stalled("instance BCD", STOP_RULE, stop_value, float("nan"), tol)
    elif not converged:
        warn_not_converged("instance BCD", STOP_RULE, stop_value, tol, max_iter)
    if not converged:
        point = _returned_point(problem, alpha, nu, centre)
    primal_point, dual_point = point
    return SolverResult(primal=primal_point, dual=dual_point, converged=converged, n_iter=n_pass,
                        stop_value=stop_value, stop_rule=STOP_RULE,
                        solve_time=time.perf_counter() - start_time, history=history, solver="bcd")


def _returned_point(problem, alpha, nu, centre):
    """α with its equality violation removed, its β and the biases of the uncentred problem:
    the centred scores ``(x − m)ᵀw + ν`` are ``xᵀw + ν − wᵀm``."""
    alpha = restore_equalities(problem, alpha)
    beta = problem.scatter(alpha)
    b = nu - beta.T @ centre.products     # wᵀm = βᵀ(Xm)
    return {"beta": beta, "b": b - b.mean()}, {"alpha": alpha}


def _certify(problem, alpha, nu, centre):
    """Grade the point as the fit report will: biases ν (uncentred), else the primal-optimal biases for this w."""
    point = _returned_point(problem, alpha, nu, centre)
    certificate = evaluate(problem, *point)
    value = max(abs(certificate.relative_gap), certificate.max_kkt)
    # the plain dual gradient (without the multiplier terms) at the restored α
    restored = point[1]["alpha"]
    plain = problem.gather(problem.kernel_times(problem.scatter(restored))) - 1.0
    b = certified_biases(problem, plain, nu - nu.mean())
    other = ({"beta": point[0]["beta"], "b": b}, point[1])
    other_certificate = evaluate(problem, *other)
    other_value = max(abs(other_certificate.relative_gap), other_certificate.max_kkt)
    return (value, point) if value <= other_value else (other_value, other)
