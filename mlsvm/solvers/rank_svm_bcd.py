"""Exact Rank-SVM dual solver for the linear kernel: block coordinate descent by instance, in the
features' coordinates, inside a proximal augmented Lagrangian on the biases.

Problem 10 as ``min f(α) = ½‖W‖² − Σ_t α_t`` with ``W = Xᵀβ`` (d × Q), ``β = scatter(α)``, over
``0 ≤ α ≤ u`` and the Q equalities ``s = Σ_i β_i = 0`` (see :mod:`mlsvm.formulations.rank_svm`).

Outer loop (method of multipliers on the Q equalities; it is the proximal point method on the
primal's biases): with multipliers ν (the biases) and penalty ρ, minimise over the box only

    L(α) = ½‖W‖² − Σα + νᵀs + ρ/2 ‖s‖²,       then  ν ← ν + ρs.

ρ starts at :data:`RHO_START` · mean ‖x_i − m‖² and grows ×10 (up to :data:`RHO_CAP` times it)
while ‖s‖ does not fall by 4×. An inner solve ends at the inner tolerance (below). After an update
it is at most a tenth of the update's stop value, and below that it halves after an update that
halved the stop value and falls tenfold after one that did not. Tightened tenfold at every update,
the inner solves went far below the outer error where the stop value falls slowly (bibtex rows
summing to 1 at C = 1: tolerance 1e-6 at an equality violation of 0.14, 1,400 passes for that
inner solve).

Where C·‖x_i − m‖² is small the dual is nearly a linear program, and ``ν ← ν + ρs`` moves the biases
too slowly: ρ climbs to its cap, where the passes crawl (their rate is about ‖x_i − m‖²/ρ), and
the budget runs out (bibtex rows of unit length at C = 0.01; binary bibtex at C = 2·10⁻⁴). So when
an update's relative gap is at least :data:`BIASES_LP_FROM` times its equality violation (the
biases, not the equalities, hold the gap) or ρ would reach its cap, ν is replaced by the biases
that minimise the primal for the current weights — those of
:func:`mlsvm.solvers.rank_svm_decomposition.certified_biases`: a minimum-cost circulation on all
pairs by the network simplex, started from ν, in ``O(T)`` memory; failing that, HiGHS on the pairs
near their margin, at most :data:`BIASES_LP_ITERATIONS` dual simplex iterations per label, never
HiGHS on all pairs — and ρ then stays below its cap. These biases lower the gap of the update by
construction; the certificate is unchanged (below). Where neither holds (C = 1 on bibtex) the run
is the plain method of multipliers.

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
A pass over the instances is one compiled function (:func:`_bcd_pass`, through
:func:`mlsvm.solvers.compiled.compiled`) on the CSR arrays; it reports the largest violation it
saw at its visits (before each update).

A full check follows a pass that saw no violation above ``inner_tol``, and otherwise every
:data:`CHECK_EVERY` passes: ``W`` and ``s`` are recomputed from α (no drift), every pair's
gradient is gathered from ``XW`` (``O(nnz(X)·Q + T)``), the projected-gradient violation over all
pairs decides whether the inner problem is solved (below ``inner_tol``; only the check ends an
inner solve), and shrinking: an instance whose pairs all sit on a bound with the gradient pushing
outward by more than :data:`SHRINK_MARGIN` times the violation is skipped until the next check
that finds the shrunk problem solved (then all return).

Stopping rule (exact, stated): as :func:`mlsvm.solvers.rank_svm_alm.proximal_alm`: relative
duality gap at ``b = ν`` and the equality violation ``‖s‖∞ / max(1, ‖u‖∞)`` both ``≤ tol``, then
the point with its equality violation removed (:func:`mlsvm.formulations.rank_svm.restore_equalities`)
is graded by :func:`mlsvm.formulations.rank_svm.evaluate` — biases ν, and only if ν fails the
primal-optimal biases of :func:`mlsvm.solvers.rank_svm_decomposition.certified_biases` — and the run stops when
that relative gap and every scaled KKT residual are ``≤ tol``. A full check whose gap and violation
(at ``ν + ρs``) are ``≤ tol`` grades its iterate the same way (biases ``ν + ρs`` only) before the
inner solve ends: on degenerate problems the inner passes converge slowly near a point that
already certifies. Reaching ``max_iter`` passes warns
with the value reached. Memory ``O(T + nnz(X) + dQ + nQ)``: no n × n matrix.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from mlsvm.formulations.rank_svm import RankSVMProblem, center_biases, evaluate, restore_equalities
from mlsvm.solvers.compiled import argsort, compiled, search
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
#: passes between full checks while the passes themselves still see violations above the inner tolerance
CHECK_EVERY = 10
#: a multiplier update tries the primal-optimal biases when its relative gap is at least this times
#: the equality violation (relative to ``max u``): the biases are then far from optimal (small C·‖x‖²)
BIASES_LP_FROM = 0.1
#: the HiGHS LP's dual simplex iterations at most, per label (where the network simplex fails)
BIASES_LP_ITERATIONS = 20


@compiled
def _line_minimum(p: np.ndarray, upper: float, total: float) -> np.ndarray:
    """``clip(p − S, 0, u)`` with ``S`` the root of ``F(S) = Σ clip(p − S, 0, u) − total − S``
    (decreasing, piecewise linear with breakpoints ``p`` and ``p − u``). Newton's method from
    ``S = 0`` first (exact once the clipped set stops changing: near the solution a line moves
    little, one or two steps); if it has not settled in three steps, exactly from the sorted breakpoints."""
    m = p.size
    root = 0.0
    for _ in range(3):
        # F is linear with slope −(1 + inside) on the piece around the current root
        inside, at_upper, inside_sum = 0, 0, 0.0
        for j in range(m):
            shifted = p[j] - root
            if shifted >= upper:
                at_upper += 1
            elif shifted > 0.0:
                inside += 1
                inside_sum += p[j]
        new_root = (upper * at_upper + inside_sum - total) / (1.0 + inside)
        settled = True
        for j in range(m):
            before, after = p[j] - root, p[j] - new_root
            if (before >= upper) != (after >= upper) or (before > 0.0) != (after > 0.0):
                settled = False
                break
        if settled:
            return np.minimum(np.maximum(p - new_root, 0.0), upper)
        root = new_root
    ps = p[argsort(p)]
    prefix = np.zeros(m + 1)
    prefix[1:] = np.cumsum(ps)
    breaks = np.concatenate((ps - upper, ps))
    breaks = breaks[argsort(breaks)]
    below, full = np.empty(breaks.size, dtype=np.int64), np.empty(breaks.size, dtype=np.int64)
    for j in range(breaks.size):
        below[j] = search(ps, breaks[j], True)                   # p ≤ S: 0
        full[j] = search(ps, breaks[j] + upper, False)           # p < S + u: not u
    value = upper * (m - full) + (prefix[full] - prefix[below]) - breaks * (full - below) - total - breaks
    k = search(-value, 0.0, True)                                # value is decreasing: first index < 0
    if k == 0:      # root below every breakpoint: all at u
        root = upper * m - total
    elif k == breaks.size:   # above every breakpoint: all at 0
        root = -total
    else:           # linear between breaks[k − 1] (value ≥ 0) and breaks[k] (value < 0)
        left, right = breaks[k - 1], breaks[k]
        v_left, v_right = value[k - 1], value[k]
        root = left + v_left * (right - left) / (v_left - v_right) if v_left > v_right else left
    return np.minimum(np.maximum(p - root, 0.0), upper)


@compiled
def _bcd_pass(order, indptr, indices, data, W, s, shift, alpha, start, positive, positive_start,
              negative, negative_start, upper, squares, products, mean_square, rho, skip, violation):
    """One pass of block coordinate descent over the instances in ``order`` (module docstring),
    updating ``alpha``, ``W``, ``s`` and ``shift`` (``ν + ρs − Wᵀm``) in place. ``violation[i]``
    receives instance i's largest projected-gradient violation as found at its visit (before
    its update); a visit with none above ``skip`` changes nothing. Returns the pass's largest."""
    q = s.size
    z = np.empty(q)
    dbeta = np.empty(q)
    largest = 0.0
    for i in order:
        a0, a1 = indptr[i], indptr[i + 1]
        pos = positive[positive_start[i]:positive_start[i + 1]]
        neg = negative[negative_start[i]:negative_start[i + 1]]
        u, t0, n_neg = upper[i], start[i], neg.size
        # z = W_cᵀ(x_i − m) + ν + ρs − e_{Y_i}, the gradient of L in β_i
        offset = products[i] - mean_square
        for label in range(q):
            z[label] = shift[label] - offset * s[label]
        for j in range(a0, a1):
            feature, value = indices[j], data[j]
            for label in range(q):
                z[label] += value * W[feature, label]
        for k in pos:
            z[k] -= 1.0
        worst = 0.0
        for r in range(pos.size):
            for c in range(n_neg):
                g = z[pos[r]] - z[neg[c]]
                a_rc = alpha[t0 + r * n_neg + c]
                v = -g if a_rc <= 0.0 else (g if a_rc >= u else abs(g))
                worst = max(worst, v)
        violation[i] = worst
        largest = max(largest, worst)
        if worst <= skip:
            continue
        a = squares[i] + rho
        dbeta[:] = 0.0
        if pos.size <= n_neg:     # the block's rows: pairs (k, ·) of one relevant label k
            for r in range(pos.size):
                k = pos[r]
                row = alpha[t0 + r * n_neg:t0 + (r + 1) * n_neg]
                new = _line_minimum(row + (z[neg] - z[k]) / a, u, row.sum())
                for c in range(n_neg):
                    delta = new[c] - row[c]
                    row[c] = new[c]
                    z[k] += a * delta
                    z[neg[c]] -= a * delta
                    dbeta[k] += delta
                    dbeta[neg[c]] -= delta
        else:                     # the block's columns: pairs (·, l) of one irrelevant label l
            n_pos = pos.size
            for c in range(n_neg):
                l = neg[c]
                column = np.empty(n_pos)
                for r in range(n_pos):
                    column[r] = alpha[t0 + r * n_neg + c]
                new = _line_minimum(column + (z[l] - z[pos]) / a, u, column.sum())
                for r in range(n_pos):
                    delta = new[r] - column[r]
                    alpha[t0 + r * n_neg + c] = new[r]
                    z[l] -= a * delta
                    z[pos[r]] += a * delta
                    dbeta[l] -= delta
                    dbeta[pos[r]] += delta
        # W += x_i Δβᵀ, s += Δβ; Wᵀm changes by Δβ x_iᵀm
        for j in range(a0, a1):
            feature, value = indices[j], data[j]
            for label in range(q):
                W[feature, label] += value * dbeta[label]
        for label in range(q):
            s[label] += dbeta[label]
            shift[label] += (rho - products[i]) * dbeta[label]
    return largest


class _Blocks:
    """Per instance i (arrays for the compiled pass): its pairs ``start[i]:start[i + 1]`` in
    row-major ``|Y_i| × |Ȳ_i|`` order, its relevant labels ``positive[positive_start[i]:positive_start[i + 1]]``,
    its irrelevant ones likewise, and its bound ``upper[i]``; ``instances`` are those with pairs."""

    def __init__(self, problem: RankSVMProblem):
        pairs = problem.pairs
        offsets = np.asarray(pairs.offsets, dtype=np.int64)
        n = problem.n_samples
        self.start = offsets
        self.instances = np.flatnonzero(np.diff(offsets) > 0)
        positive, negative = [], []
        n_positive, n_negative = np.zeros(n, np.int64), np.zeros(n, np.int64)
        self.upper = np.zeros(n)
        for i in self.instances:
            a, b = offsets[i], offsets[i + 1]
            m = int(np.sum(pairs.relevant[a:b] == pairs.relevant[a]))   # |Ȳ_i|: the first row's length
            negative.append(pairs.irrelevant[a:a + m])
            positive.append(pairs.relevant[a:b:m])
            n_positive[i], n_negative[i] = (b - a) // m, m
            self.upper[i] = problem.upper[a]
        def flat(parts, counts):
            return (np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64),
                    np.concatenate(([0], np.cumsum(counts))).astype(np.int64))
        self.positive, self.positive_start = flat(positive, n_positive)
        self.negative, self.negative_start = flat(negative, n_negative)


def _check(problem, X, centre, alpha, nu, rho):
    """``β``, ``W = Xᵀβ``, ``s``, ``Wᵀm`` recomputed from α, the centred weights' squared norm and
    every pair's gradient of ``L`` (scores ``X_c W_c = XW − 1(Wᵀm)ᵀ − (Xm − ‖m‖²)sᵀ``)."""
    beta = problem.scatter(alpha)
    W = np.ascontiguousarray(X.T @ beta, dtype=np.float64)
    s = beta.sum(axis=0)
    projected = beta.T @ centre.products    # Wᵀm = βᵀ(Xm)
    scores = (np.asarray(X @ W) - projected[None, :] - np.outer(centre.products - centre.square, s)
              + (nu + rho * s)[None, :])
    centred = W - np.outer(centre.vector, s)
    gradient = problem.gather(scores)
    gradient -= 1.0
    return beta, W, s, projected, float(np.sum(centred * centred)), gradient


class _Centre:
    """The features' mean m, the products ``x_iᵀm`` and ``‖m‖²``: the solver works with the centred
    features ``x_i − m`` without forming them (a sparse X stays sparse)."""

    def __init__(self, X):
        self.vector = np.asarray(X.mean(axis=0)).ravel()
        self.products = np.asarray(X @ self.vector).ravel()
        self.square = float(self.vector @ self.vector)


@compiled
def _largest_violation(alpha, upper, gradient):
    """The largest projected-gradient violation over the pairs (in gradient units)."""
    largest = 0.0
    for t in range(alpha.size):
        g = gradient[t]
        if alpha[t] <= 0.0:
            g = -g
        elif alpha[t] < upper[t]:
            g = abs(g)
        largest = max(largest, g)
    return largest


@compiled
def _settled(alpha, upper, gradient, start, instances, threshold, settled):
    """``settled[j]``: every pair of instance ``instances[j]`` sits on a bound with the gradient
    pushing outward by more than ``threshold`` (the shrinking test)."""
    for j in range(instances.size):
        i = instances[j]
        settled[j] = True
        for t in range(start[i], start[i + 1]):
            if alpha[t] <= 0.0:
                outward = gradient[t]
            elif alpha[t] >= upper[t]:
                outward = -gradient[t]
            else:
                outward = -np.inf
            if not outward > threshold:
                settled[j] = False
                break


def _gap_and_violation(alpha, upper, quadratic, gradient, s, scale):
    """``(relative gap, equality violation, stop value)`` of the multiplier update: the primal at
    the margins ``gradient + 1`` against the dual ``Σα − ½ quadratic``; the stop value is the larger of
    the gap and the violation relative to ``scale``."""
    gap = relative_gap(0.5 * quadratic + float(_hinge_sum(upper, gradient)), float(alpha.sum()) - 0.5 * quadratic)
    violation = float(np.max(np.abs(s)))
    return gap, violation, max(abs(gap), violation / scale)


@compiled
def _hinge_sum(upper, gradient):
    """``Σ_t u_t max(0, −g_t)``: the primal's loss, with ``g_t = margin_t − 1``."""
    total = 0.0
    for t in range(upper.size):
        if gradient[t] < 0.0:
            total -= upper[t] * gradient[t]
    return total


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
    indptr, indices = X.indptr.astype(np.int64), X.indices.astype(np.int64)
    data = np.asarray(X.data, dtype=np.float64)
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
    active = blocks.instances
    visit_violation = np.zeros(problem.n_samples)
    last_check = 0
    rng = np.random.default_rng(0)   # a fixed order per pass (reproducible), shuffled as LIBLINEAR does
    beta, W, s, projected, quadratic, gradient = _check(problem, X, centre, alpha, nu, rho)
    shift = nu + rho * s - projected   # z's per-label part, kept by the passes; the s·(x_iᵀm − ‖m‖²) part in the pass
    stop_value, converged, stalled = np.inf, False, False
    previous_stop = np.inf  # the stop value of the previous multiplier update
    tried = np.inf          # the lowest stop value at which a full check tried to certify its iterate
    n_pass, point, n_outer = 0, None, 0
    schedule = MultiplierSchedule(STALL_WINDOW, RHO_CAP * mean_square)
    while n_pass < max_iter:
        # ---- one pass of block coordinate descent over the active instances (compiled)
        n_pass += 1
        largest = _bcd_pass(rng.permutation(active), indptr, indices, data, W, s, shift, alpha, blocks.start,
                            blocks.positive, blocks.positive_start, blocks.negative, blocks.negative_start,
                            blocks.upper, squares, centre.products, centre.square, rho, SKIP * inner_tol,
                            visit_violation)
        if largest > inner_tol and n_pass - last_check < CHECK_EVERY:
            continue   # the pass itself still saw violations above the inner tolerance
        last_check = n_pass
        # ---- full check: exact W, s and gradients; inner convergence; shrinking
        beta, W, s, projected, quadratic, gradient = _check(problem, X, centre, alpha, nu, rho)
        shift = nu + rho * s - projected   # z's per-label part, kept by the passes; the s·(x_iᵀm − ‖m‖²) part in the pass
        inner = float(_largest_violation(alpha, upper, gradient))
        if inner > inner_tol:
            # the iterate can certify before its inner problem is solved: on a degenerate problem
            # the passes converge slowly towards the inner optimum near points that are optimal.
            # Graded with the biases ν + ρs only (the LP of certified_biases waits for the update)
            gap, violation, trial = _gap_and_violation(alpha, upper, quadratic, gradient, s, scale)
            if trial <= tol and trial < 0.5 * tried:
                tried = trial
                value, candidate = _certify(problem, alpha, nu + rho * s, centre, tol, biases_lp=False)
                if value <= tol:
                    stop_value, point, converged = value, candidate, True
                    for key, value in zip(history, (n_pass, stop_value, gap, violation)):
                        history[key].append(value)
                    break
            # shrink: instances all of whose pairs are at a bound, pushed outward by a margin
            settled = np.zeros(blocks.instances.size, dtype=bool)
            _settled(alpha, upper, gradient, blocks.start, blocks.instances, SHRINK_MARGIN * inner, settled)
            kept = blocks.instances[~settled]
            active = kept if kept.size else blocks.instances
            continue
        active = blocks.instances
        # ---- multiplier update
        n_outer += 1
        nu = nu + rho * s
        # gradient + 1 = gather(XW) + Aᵀ(ν_old + ρs): the margins at the new ν
        gap, violation, stop_value = _gap_and_violation(alpha, upper, quadratic, gradient, s, scale)
        next_rho = schedule.penalty(rho, violation)
        if stop_value > tol and (abs(gap) >= BIASES_LP_FROM * violation / scale or next_rho >= schedule.rho_cap):
            # the biases, not the equalities, hold the gap, or ρ reaches its cap (where the inner
            # passes crawl): the biases that minimise the primal for these weights replace ν
            optimal = certified_biases(problem, gradient - problem.equality_adjoint(nu), center_biases(nu),
                                       full_lp=False, lp_iterations=BIASES_LP_ITERATIONS * q)
            if optimal is not None:   # biases set directly: ρ is not raised to its cap for them
                gradient += problem.equality_adjoint(optimal - nu)
                nu, next_rho = optimal, (rho if next_rho >= schedule.rho_cap else next_rho)
                gap, violation, stop_value = _gap_and_violation(alpha, upper, quadratic, gradient, s, scale)
        point = ({"beta": beta, "b": center_biases(nu - projected)}, {"alpha": alpha})
        if stop_value <= tol:
            gradient = None   # recomputed by the next check; T floats less while the certificate runs
            stop_value, point = _certify(problem, alpha, nu, centre, tol)
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
        rho = next_rho
        # at most a tenth of the update's stop value; halved after an update that halved the stop
        # value, tenfold tighter after one that did not (module docstring)
        tighten = 0.1 if stop_value >= 0.5 * previous_stop else 0.5
        previous_stop = stop_value
        inner_tol = max(min(tighten * inner_tol, 0.1 * max(abs(gap), violation / scale) * scale), 1e-14)
        beta, W, s, projected, quadratic, gradient = _check(problem, X, centre, alpha, nu, rho)
        shift = nu + rho * s - projected   # z's per-label part, kept by the passes; the s·(x_iᵀm − ‖m‖²) part in the pass
    if not np.isfinite(stop_value):
        # no multiplier update ran (the passes never met their inner tolerance): the warning quotes
        # the gap and equality violation of the last iterate, as the multiplier update would have
        beta, W, s, projected, quadratic, gradient = _check(problem, X, centre, alpha, nu, rho)
        stop_value = _gap_and_violation(alpha, upper, quadratic, gradient, s, scale)[2]
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
    return {"beta": beta, "b": center_biases(b)}, {"alpha": alpha}


def _certify(problem, alpha, nu, centre, tol, biases_lp=True):
    """Grade the point as the fit report will: biases ν (uncentred); if they fail ``tol`` (and
    ``biases_lp``), also the primal-optimal biases for this w (an LP), and return the better of
    the two."""
    point = _returned_point(problem, alpha, nu, centre)
    certificate = evaluate(problem, *point)
    value = max(abs(certificate.relative_gap), certificate.max_kkt)
    if value <= tol or not biases_lp:
        return value, point
    # the plain dual gradient (without the multiplier terms) at the restored α
    restored = point[1]["alpha"]
    plain = problem.gather(problem.kernel_times(problem.scatter(restored))) - 1.0
    b = certified_biases(problem, plain, center_biases(nu))
    other = ({"beta": point[0]["beta"], "b": b}, point[1])
    other_certificate = evaluate(problem, *other)
    other_value = max(abs(other_certificate.relative_gap), other_certificate.max_kkt)
    return (value, point) if value <= other_value else (other_value, other)
