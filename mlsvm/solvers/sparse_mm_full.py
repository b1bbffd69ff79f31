"""The full SMSVM / SM3L models (J = all training points, SPEC §2.3) by dual coordinate descent.

With J = all points the models are the squared-hinge multiclass (SMSVM, c = ½) and multilabel
(SM3L, c = 1) SVMs without biases. Their derived dual (:func:`mlsvm.formulations.sparse_mm.cvxpy_dual`),
written as a minimisation over the multipliers μ ≥ 0 on the pairs Ω,

    min_μ  Σ μ²/(4c) + tr(Hᵀ K H R)/(2λ) − Σ μ,   H = Tᵀ(μ),

is strongly convex (the squared hinge gives the μ²/(4c) term), and its primal point is
``A = −H R/λ``, scores ``F = K A``. This module solves it for R = I (SMSVM always; SM3L without a
label prior — with R ≠ I every coordinate moves the scores of all labels, and the registry's
``"full"`` row runs the joint Newton of Algorithm 4 on the full basis instead). The gradient in μ_ir
is ``μ_ir/(2c) − u_ir`` with the margin ``u = 1 + T(F)``, so one coordinate has the exact minimiser
``max(0, μ_ir − g/q_ir)`` with curvature ``q_ir = 1/(2c) + K_ii tᵀt/λ`` (t = Tᵀ(e_ir): ``e_r − e_{y_i}``
for SMSVM, ``−s_ir e_r`` for SM3L). This is the dual coordinate descent of LIBLINEAR's L2-loss SVM,
here with the pairs of one training point updated together: the point's scores are updated locally
during a few sweeps over its pairs (O(k) each), then once in every row, ``F −= K[:, i] ⊗ Δh_i/λ``
(kernel, O(nk)) or in the weights ``W −= x_i ⊗ Δh_i/λ`` (linear kernel, O(nnz(x_i)) per class that
moved, W = XᵀA, no n × n matrix).

Coordinate descent is slow where coordinates are strongly correlated (nearly equal points, a
small λ; with the linear kernel on text-like data, bibtex, ‖x‖² up to hundreds, the passes stall at
a multiplier residual near 1e-3). When a certificate has not fallen tenfold since the previous one,
the linear kernel with few weights (d·k small enough that the dense generalized Hessian is formed
and factored within PRIMAL_STEP_MAX per step) first tries Newton's method on the weights
(:func:`_primal_newton`); otherwise, or when that does not lower the stop value,
an active-set Newton step is taken (:func:`_newton_on_active`: the pairs with μ > 0 as the active
set, CG on ``(I/(2c) + T_A K T_Aᵀ/λ) μ_A = 1`` preconditioned by each point's block and, for SMSVM,
each class pair's block, solved as far as the stop value reached calls for, kept when it raises the
dual objective or lowers the stop value); the descent goes on from there if it does not certify.
Stop rule: the relative duality gap ``(P(A) − D(μ))/max(1, |P|, |D|)``
and the scaled multiplier residual ``|μ − 2c·ξ(A)|∞ / (1 + max(|μ|∞, |2cξ|∞))`` both ≤ tol, with F
recomputed from μ (stationarity in A holds by construction: ``λKAR⁻¹ + KTᵀ(μ) = 0``).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.sparse import csr_matrix
from scipy.sparse.linalg import LinearOperator, cg

from mlsvm.solvers.compiled import compiled
from mlsvm.solvers.piecewise_quadratic import minimize_with_decrease
from mlsvm.solvers.rank_svm_decomposition import _Classes
from mlsvm.solvers.result import SolverResult, relative_gap, warn_not_converged

__all__ = ["full_model"]

STOP_RULE = "max(relative duality gap, scaled multiplier residual)"
INNER_SWEEPS = 5   # sweeps over one point's pairs per visit: local, O(k) each
CHECK_EVERY = 50   # passes between certificates at the latest (a slow descent still meets the Newton step)
FORCING = 0.3      # an active-set step asks a residual of FORCING × the stop value reached (never below tol's)
PAIR_BLOCK = 32    # pairs per block of one class pair at most (larger groups are cut: bounded memory and work)
#: the linear kernel's stall remedy tried first: Newton on the weights W (d × k) with its generalized
#: Hessian formed and factored, while a step (forming it from the active pairs' rows, (d·k)³/3 for
#: the Cholesky factor) costs at most PRIMAL_STEP_MAX multiply-adds; PRIMAL_NEWTON_STEPS steps at
#: most, and a line search whose relative decrease is below PRIMAL_STALL (round-off) ends it
PRIMAL_STEP_MAX = 5e7
PRIMAL_NEWTON_STEPS = 200
PRIMAL_STALL = 1e-15


@compiled
def _visit_point(i, f, mu, kii, label, signed, smsvm, lam, half, dh):
    """Sweeps over the pairs of point i on its local scores ``f`` (k,); accumulates ``Δh_i`` in
    ``dh``; returns the largest projected gradient seen before any update of the visit."""
    k = f.shape[0]
    first = 0.0
    for sweep in range(INNER_SWEEPS):
        largest = 0.0
        for r in range(k):
            if smsvm:
                y = label[i]
                if r == y:
                    continue
                u = 1.0 + f[r] - f[y]
                curvature = half + 2.0 * kii / lam
            else:
                s = signed[i, r]
                u = 1.0 - s * f[r]
                curvature = half + kii / lam
            g = mu[i, r] * half - u
            projected = g if mu[i, r] > 0.0 else min(g, 0.0)
            largest = max(largest, abs(projected))
            if projected == 0.0:
                continue
            new = max(0.0, mu[i, r] - g / curvature)
            delta = new - mu[i, r]
            mu[i, r] = new
            step = delta * kii / lam
            if smsvm:
                f[r] -= step
                f[y] += step
                dh[r] += delta
                dh[y] -= delta
            else:
                f[r] += s * step
                dh[r] -= s * delta
        if sweep == 0:
            first = largest
        if largest <= 1e-3 * first:
            break
    return first


@compiled
def _pass_kernel(order, gram, F_t, mu, diag, label, signed, smsvm, lam, half):
    """One pass over the points in ``order`` with the Gram matrix held; the scores are kept
    transposed (``F_t``, k × n), so that a class's update is one contiguous row."""
    k, n = F_t.shape
    f = np.empty(k)
    dh = np.empty(k)
    violation = 0.0
    for i in order:
        for r in range(k):
            f[r] = F_t[r, i]
            dh[r] = 0.0
        violation = max(violation, _visit_point(i, f, mu, diag[i], label, signed, smsvm, lam, half, dh))
        row = gram[i]   # K symmetric: row i is column i, read contiguously
        for r in range(k):
            if dh[r] != 0.0:
                step = dh[r] / lam
                scores = F_t[r]
                for j in range(n):
                    scores[j] -= step * row[j]
    return violation


@compiled
def _pass_linear(order, indptr, indices, data, W, mu, diag, label, signed, smsvm, lam, half):
    """One pass with the linear kernel: the scores of point i read from ``W`` (d × k, W = XᵀA)."""
    k = W.shape[1]
    f = np.empty(k)
    dh = np.empty(k)
    moved = np.empty(k, dtype=np.int64)
    violation = 0.0
    for i in order:
        for r in range(k):
            f[r] = 0.0
            dh[r] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            x, row = data[p], W[indices[p]]
            for r in range(k):
                f[r] += x * row[r]
        violation = max(violation, _visit_point(i, f, mu, diag[i], label, signed, smsvm, lam, half, dh))
        count = 0          # the classes whose weights move (none for most points late in the descent)
        for r in range(k):
            if dh[r] != 0.0:
                moved[count] = r
                dh[count] = dh[r] / lam
                count += 1
        if count == 0:
            continue
        for p in range(indptr[i], indptr[i + 1]):
            x, row = data[p], W[indices[p]]
            for m in range(count):
                row[moved[m]] -= x * dh[m]
    return violation


class _Kernel:
    """Products with the Gram matrix K, held (n × n) or as ``X Xᵀ`` (the linear kernel's features,
    kept as CSR)."""

    def __init__(self, gram=None, X=None):
        self.gram, self.X = gram, X
        if X is not None:
            self.X = csr_matrix(X, dtype=np.float64)   # the passes and the pairs' rows read CSR
            self.diag = np.asarray(self.X.multiply(self.X).sum(axis=1), dtype=np.float64).ravel()
            # (indptr, indices, data) as the compiled loops take them
            self.rows = (self.X.indptr.astype(np.int64), self.X.indices.astype(np.int64), self.X.data)
        else:
            self.diag = np.ascontiguousarray(np.diag(gram), dtype=np.float64)

    def times(self, M):
        """``K @ M``."""
        if self.X is None:
            return self.gram @ M
        return np.asarray(self.X @ np.asarray(self.X.T @ M))


def full_model(ops, lam, *, gram=None, X=None, tol=1e-10, max_iter=1000, random_state=None,
               callback=None) -> SolverResult:
    """The full SMSVM / SM3L model (J = all points, R = I) by dual coordinate descent (module
    docstring).

    Parameters
    ----------
    ops : MarginOperator
        The margin map T, pair set Ω and weight c of the model.
    lam : float
        Regularisation weight λ > 0.
    gram : array of shape (n, n) or None
        The training Gram matrix (kernel models).
    X : array or sparse matrix of shape (n, d) or None
        The linear kernel's features instead of ``gram`` (then ``K = XXᵀ`` is never formed).
    tol : float, default=1e-10
        Tolerance of the relative duality gap and the scaled multiplier residual.
    max_iter : int, default=1000
        Passes over the training points.
    random_state : int, Generator or None, optional
        Seeds the order of the points in each pass.
    callback : callable or None, optional
        Called as ``callback(n_iter, primal, dual)`` after every pass.

    Returns
    -------
    SolverResult
        ``primal`` ``{"coef": A (n, k), "basis": all points, "F": scores}`` (with X, the weights
        are ``XᵀA``), ``dual`` ``{"mu": μ}``.
    """
    start = time.perf_counter()
    if (gram is None) == (X is None):
        raise ValueError("full_model needs exactly one of gram (kernel) and X (linear kernel)")
    kernel = _Kernel(gram, X)
    n, k = ops.Y.shape
    smsvm = ops.model == "smsvm"
    c, half = ops.weight, 1.0 / (2 * ops.weight)
    label = ops.label.astype(np.int64) if smsvm else np.zeros(n, dtype=np.int64)
    signed = np.ascontiguousarray(ops.signed, dtype=np.float64)
    rng = np.random.default_rng(random_state)
    mu = np.zeros((n, k))
    linear = X is not None
    if linear:
        W = np.zeros((kernel.X.shape[1], k))
    else:
        gram = np.ascontiguousarray(gram, dtype=np.float64)
        F_t = np.zeros((k, n))

    def graded(point):
        """(scores, stop value, relative gap, primal, dual) at ``point`` (a μ), the scores recomputed
        from it (no drift)."""
        H = ops.adjoint(point)
        scores = -kernel.times(H) / lam
        xi = ops.slack(scores)
        quadratic = -float(np.sum(H * scores))          # tr(HᵀKH)/λ
        squares = float(np.sum(xi * xi))
        primal = 0.5 * quadratic + c * squares
        dual = _dual_objective(ops, point, H, scores)
        gap = relative_gap(primal, dual)
        implied = 2 * c * xi
        residual = float(np.max(np.abs(point - implied), initial=0.0)
                         / (1.0 + max(np.max(np.abs(point), initial=0.0), np.max(implied, initial=0.0))))
        return scores, max(abs(gap), residual), gap, primal, dual

    def stop_at(point):
        """The stop value at ``point``, for the stall remedies' acceptance."""
        return graded(point)[1]

    def certificate():
        """(scores, stop value, relative gap) at μ, recorded in the history."""
        scores, stop, gap, primal, dual = graded(mu)
        history["primal"].append(primal)
        history["dual"].append(dual)
        history["relative_gap"].append(gap)
        history["stop_value"].append(stop)
        return scores, stop, gap

    history = {"primal": [], "dual": [], "relative_gap": [], "stop_value": []}
    stop_value, converged, passes, newton_steps = np.inf, False, 0, 0
    previous = np.inf      # the stop value at the last certificate
    threshold = 1.0        # largest projected gradient of a pass before the certificate is computed
    while passes < max_iter:
        order = rng.permutation(n).astype(np.int64)
        arrays = (mu, kernel.diag, label, signed, smsvm, lam, half)
        violation = (_pass_linear(order, *kernel.rows, W, *arrays) if linear
                     else _pass_kernel(order, gram, F_t, *arrays))
        passes += 1
        if callback is not None:
            callback(passes, {"coef": -ops.adjoint(mu) / lam}, {"mu": mu})
        if violation > threshold and passes % CHECK_EVERY:
            continue
        scores, stop_value, _ = certificate()
        if stop_value <= tol:
            converged = True
            break
        stalled, previous = stop_value > 0.1 * previous, stop_value
        if stalled and ((linear and _primal_newton(ops, kernel.X, lam, mu, tol, stop_value, stop_at))
                        or _newton_on_active(ops, kernel, lam, mu, tol, stop_value, history["dual"][-1],
                                             stop_at=stop_at)):
            newton_steps += 1
            scores, stop_value, _ = certificate()
            previous = stop_value   # the descent's progress is judged from where the step left it
            if stop_value <= tol:
                converged = True
                break
        # restart the maintained scores from μ (no drift), ask a tighter pass next time
        if linear:
            W = np.ascontiguousarray(-np.asarray(kernel.X.T @ ops.adjoint(mu)) / lam)
        else:
            F_t = np.ascontiguousarray(scores.T)
        threshold = max(min(threshold, violation) * 0.1, 1e-15)
    else:   # max_iter passes: the certificate of where they ended
        scores, stop_value, _ = certificate()
    if not converged:
        warn_not_converged("full_model (dual coordinate descent)", STOP_RULE, stop_value, tol, max_iter)
    history["newton_steps"] = newton_steps
    A = -ops.adjoint(mu) / lam
    return SolverResult(primal={"coef": A, "basis": np.arange(n), "F": scores}, dual={"mu": mu},
                        converged=converged, n_iter=passes,
                        stop_value=stop_value, stop_rule=STOP_RULE, solve_time=time.perf_counter() - start,
                        solver="full", history=history)


def _pair_factors(ops, X, pairs):
    """``T_A X = G R`` for the pairs A (flat indices into n × k), on ``vec(W)`` (d·k, row-major W): pair
    (i, r)'s margin is ``1 + (G R vec(W))_(i,r)``. R's rows are x_i placed at class c, one per (point,
    class) that the pairs read: SMSVM's pair (i, r) is row (i, r) less row (i, y_i), and a point's own
    row serves all its pairs, so R holds fewer entries than the pairs' rows written out (each of those
    would carry x_i twice); SM3L's pair is its row times −s_ir."""
    n, k = ops.Y.shape
    points, classes = np.divmod(pairs, k)
    if ops.model == "sm3l":
        keys, weights = pairs, -ops.signed[points, classes]
        G = csr_matrix((weights, (np.arange(pairs.size), np.arange(pairs.size))), shape=(pairs.size, pairs.size))
    else:
        own = points * k + ops.label[points]
        keys = np.union1d(pairs, own)
        index = np.arange(pairs.size)
        G = csr_matrix((np.r_[np.ones(pairs.size), -np.ones(pairs.size)],
                        (np.r_[index, index], np.r_[np.searchsorted(keys, pairs), np.searchsorted(keys, own)])),
                       shape=(pairs.size, keys.size))
    key_points, key_classes = np.divmod(keys, k)
    rows_x = X[key_points]
    rows = np.repeat(np.arange(keys.size), np.diff(rows_x.indptr))
    R = csr_matrix((rows_x.data, (rows, rows_x.indices * k + key_classes[rows])), shape=(keys.size, X.shape[1] * k))
    return G, R


def _active_system(ops, kernel, lam, pairs):
    """The product with ``I/(2c) + T_A K T_Aᵀ/λ`` on the pairs A (flat indices into n × k): with X,
    through the factors ``T_A X = G R`` (:func:`_pair_factors`), O(Σ_A nnz(x_i)) per product; with the
    Gram matrix, through its block on the points that own a pair of A."""
    c = ops.weight
    if kernel.X is not None:
        G, R = _pair_factors(ops, kernel.X, pairs)
        GT, RT = G.T.tocsr(), R.T.tocsr()
        return lambda v: v / (2 * c) + G @ (R @ (RT @ (GT @ v))) / lam
    k = ops.Y.shape[1]
    points, classes = np.divmod(pairs, k)
    owners, local = np.unique(points, return_inverse=True)
    sub = type(ops)(ops.model, ops.Y[owners])
    block = kernel.gram[np.ix_(owners, owners)]
    flat = local * k + classes

    def product(v):
        M = np.zeros(owners.size * k)
        M[flat] = v
        return v / (2 * c) + sub.forward(block @ sub.adjoint(M.reshape(owners.size, k))).ravel()[flat] / lam

    return product


def _point_blocks(ops, kernel, lam, pairs):
    """The inverse of the block diagonal of ``I/(2c) + T_A K T_Aᵀ/λ`` by points (the CG preconditioner).

    Two pairs (i, r), (i, s) of one point are coupled through ``K_ii tᵀt``: for SMSVM
    ``(e_r − e_y)ᵀ(e_s − e_y) = 1 + δ_rs``, so point i's block on its m pairs is ``aI + b11ᵀ`` with
    ``a = 1/(2c) + K_ii/λ``, ``b = K_ii/λ``, inverted by Sherman–Morrison:
    ``(v − b·Σv/(a + mb)·1)/a``. For SM3L (``t = −s e_r``) the block is diagonal (b = 0). The diagonal
    alone leaves the ``b11ᵀ`` mode of every point, stiffer than the others by a factor up to ``1 + m``."""
    points = pairs // ops.Y.shape[1]        # pairs in increasing order: grouped by point
    starts = np.flatnonzero(np.r_[True, points[1:] != points[:-1]]) if points.size else np.zeros(0, dtype=int)
    counts = np.diff(np.r_[starts, points.size])
    stiffness = kernel.diag[points[starts]] / lam
    a = 1 / (2 * ops.weight) + stiffness
    b = stiffness if ops.model == "smsvm" else np.zeros_like(stiffness)
    shrink, scale = np.repeat(b / (a + counts * b), counts), np.repeat(1 / a, counts)
    return lambda v: (v - shrink * np.repeat(np.add.reduceat(v, starts), counts)) * scale


def _class_pair_blocks(ops, kernel, lam, pairs):
    """SMSVM: the inverse of the blocks of ``I/(2c) + T_A K T_Aᵀ/λ`` on the pairs that join the same two
    classes, as a sparse matrix on the pairs (the second half of the CG preconditioner); None for SM3L.

    Pair (i, r) joins the classes r and y_i: ``t = e_r − e_y = σ (e_hi − e_lo)``, σ = ±1 as r is the
    larger class or not. Two pairs of one class pair, of points i and j, are coupled by
    ``σσ' · 2 K_ij/λ``. These are the pairs whose rows nearly cancel: two near-duplicate points of
    classes a and b, each with its pair to the other's class, give ``t + t' = 0``, a direction where the
    system is ``1/(2c)`` and each pair's point block ``1/(2c) + 2K_ii/λ``: the smallest eigenvalues of
    the system preconditioned by the point blocks alone. The preconditioner is the sum of the two
    inverses (both positive definite); a point has at most one pair in each class pair, so the two
    sets of blocks overlap on the diagonal only. A class pair joined by more than :data:`PAIR_BLOCK`
    pairs is cut into blocks of that many, in the order of the pairs."""
    if ops.model != "smsvm" or pairs.size == 0:
        return None
    k = ops.Y.shape[1]
    points, classes = np.divmod(pairs, k)
    # Rank-SVM's grouping of (relevant, irrelevant) pairs: here (y_i, r), oriented +1 when r is the larger
    grouped = _Classes(ops.label[points], classes, k)
    order, sign = grouped.order, grouped.orientation
    rank = np.arange(order.size) - grouped.starts[grouped.index]   # a pair's position in its class pair
    starts = np.r_[np.flatnonzero(rank % PAIR_BLOCK == 0), order.size].astype(np.int64)
    first, second = _block_entries(starts)
    members = points[order]
    if kernel.X is None:
        gram = kernel.gram[members[first], members[second]]
    else:
        gram = _row_dots(*kernel.rows, members[first], members[second], np.zeros(kernel.X.shape[1]))
    values = 2 * sign[first] * sign[second] * gram / lam + (first == second) / (2 * ops.weight)
    _invert_blocks(starts, values)
    return csr_matrix((values, (order[first], order[second])), shape=(pairs.size, pairs.size))


@compiled
def _block_entries(starts):
    """The entries of the square blocks ``starts[g]:starts[g + 1]``, block by block, row by row, as
    (row, column) positions."""
    sizes = np.diff(starts)
    total = int(np.sum(sizes * sizes))
    first, second = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    position = 0
    for g in range(sizes.size):
        for a in range(starts[g], starts[g + 1]):
            for b in range(starts[g], starts[g + 1]):
                first[position], second[position] = a, b
                position += 1
    return first, second


@compiled
def _row_dots(indptr, indices, data, left, right, scratch):
    """``x_left[e] · x_right[e]`` for every entry e of the CSR rows; ``scratch`` (d,) is zero and is left
    zero (it holds the left row while the left index repeats)."""
    out = np.empty(left.size)
    held = -1
    for e in range(left.size):
        i = left[e]
        if i != held:
            if held >= 0:
                for p in range(indptr[held], indptr[held + 1]):
                    scratch[indices[p]] = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                scratch[indices[p]] = data[p]
            held = i
        j, total = right[e], 0.0
        for p in range(indptr[j], indptr[j + 1]):
            total += data[p] * scratch[indices[p]]
        out[e] = total
    if held >= 0:
        for p in range(indptr[held], indptr[held + 1]):
            scratch[indices[p]] = 0.0
    return out


def _invert_blocks(starts, values):
    """Replaces each square block of ``values`` (row-major, one after the other) by its inverse; the
    blocks of one size are inverted together, and each inverse is symmetrised (CG's preconditioner is
    symmetric; the rounding of the inversion need not be)."""
    sizes = np.diff(starts)
    offsets = np.cumsum(sizes * sizes) - sizes * sizes
    for m in np.unique(sizes):
        entries = offsets[sizes == m][:, None] + np.arange(m * m)
        inverse = np.linalg.inv(values[entries].reshape(-1, m, m))
        values[entries] = (0.5 * (inverse + inverse.transpose(0, 2, 1))).reshape(-1, m * m)


def _newton_on_active(ops, kernel, lam, mu, tol, stop_value, dual, stop_at=None) -> bool:
    """An active-set Newton step on the dual from μ (its stop value and dual objective given): towards
    the optimum with the pairs of μ > 0 active, ``(I/(2c) + T_A K T_Aᵀ/λ) μ_A = 1``, by CG
    preconditioned with the points' blocks (:func:`_point_blocks`) plus, for SMSVM, the class pairs'
    blocks (:func:`_class_pair_blocks`), warm from μ; pairs that come out
    negative are dropped and the rest solved again (warm). The residual asked is :data:`FORCING` times
    the stop value reached (an inexact Newton step: while the active set still moves, an exact solve
    on it is work thrown away), and never below what the certificate needs at ``tol``. The point
    reached (negatives left after the rounds clipped to 0) replaces μ only when it raises the dual
    objective (a CG iterate lowers the quadratic on the active set; the clipping may not) or, with
    ``stop_at`` (μ ↦ its stop value), lowers the stop value: near the optimum the dual is flat, its
    rise is second order in the step and falls below the dual's round-off (explore draw, 22 points
    in one feature at λ = 0.01: under some BLAS kernels every step that would have certified was
    rejected and the descent ended at 2.8e-10 against tol 1e-10). Returns whether μ was replaced."""
    c = ops.weight
    pairs = np.flatnonzero(mu.ravel() > 0)
    if pairs.size == 0:
        return False
    solution = mu.ravel()[pairs]
    # the certificate's |μ − 2cξ|∞ on the active pairs is 2c·|r|∞ ≤ 2c·‖r‖₂ (r: CG's residual)
    final = 0.25 * tol * (1 + solution.max()) / (2 * c)
    target = max(final, FORCING * stop_value * (1 + solution.max()) / (2 * c))
    for _ in range(5):
        product = _active_system(ops, kernel, lam, pairs)
        size = pairs.size
        system = LinearOperator((size, size), dtype=np.float64, matvec=product)
        by_point, by_class_pair = _point_blocks(ops, kernel, lam, pairs), _class_pair_blocks(ops, kernel, lam, pairs)
        precondition = LinearOperator((size, size), dtype=np.float64, matvec=by_point if by_class_pair is None
                                      else (lambda v: by_point(v) + by_class_pair @ v))
        solution, _ = cg(system, np.ones(size), x0=solution, rtol=0.0, atol=target, maxiter=1000, M=precondition)
        keep = solution >= 0
        if keep.all():
            break
        pairs, solution = pairs[keep], solution[keep]
        if pairs.size == 0:
            return False
    trial = np.zeros_like(mu)
    trial.ravel()[pairs] = np.maximum(solution, 0.0)
    H = ops.adjoint(trial)
    if _dual_objective(ops, trial, H, -kernel.times(H) / lam) <= dual and \
            (stop_at is None or stop_at(trial) >= stop_value):
        return False
    mu[...] = trial
    return True


def _primal_newton(ops, X, lam, mu, tol, stop_value, stop_at) -> bool:
    """Newton's method on the weights from ``W = −Xᵀ Tᵀ(μ)/λ``: the primal
    ``λ/2 ‖W‖² + c Σ_Ω max(0, 1 + T(XW))²`` with its generalized Hessian ``λI + 2c ZᵀZ`` formed (Z the
    active pairs' rows ``T_A X`` on ``vec(W)``, :func:`_pair_factors`) and an exact line search on the
    piecewise quadratic (:func:`~mlsvm.solvers.piecewise_quadratic.minimize_with_decrease`).
    Each iterate's multipliers ``2c ξ(W)`` are graded by ``stop_at``; the lowest replaces μ when it is
    below ``stop_value``. Where coordinate descent crawls (a small λ: standardised emotions, 300 points,
    λ = 0.01, gap 0.76 after 1,000 passes) the weights' Newton certifies in tens of steps. Returns
    whether μ was replaced; it stops early when a step would cost more than PRIMAL_STEP_MAX."""
    k = ops.Y.shape[1]
    c = ops.weight
    factor_cost = (X.shape[1] * k) ** 3 / 3
    if factor_cost > PRIMAL_STEP_MAX:
        return False
    row_entries = np.diff(X.indptr).astype(np.float64)
    W = -np.asarray(X.T @ ops.adjoint(mu)) / lam
    best, best_point = stop_value, None
    for _ in range(PRIMAL_NEWTON_STEPS):
        scores = np.asarray(X @ W)
        xi = ops.slack(scores)
        point = 2 * c * xi
        value = stop_at(point)
        if value < best:
            best, best_point = value, point
        if value <= tol:
            break
        pairs = np.flatnonzero(xi.ravel() > 0)
        if np.sum((2.0 * row_entries[pairs // k]) ** 2) + factor_cost > PRIMAL_STEP_MAX:
            break
        gradient = lam * W + np.asarray(X.T @ ops.adjoint(point))
        G, R = _pair_factors(ops, X, pairs)
        Z = (G @ R).tocsr()
        hessian = 2 * c * (Z.T @ Z).toarray()
        hessian[np.diag_indices_from(hessian)] += lam
        if not (np.all(np.isfinite(hessian)) and np.all(np.isfinite(gradient))):
            break   # beyond float64 (features near the overflow limit): the descent's remedy goes on
        try:
            direction = -cho_solve(cho_factor(hessian, check_finite=False), gradient.ravel(),
                                   check_finite=False).reshape(W.shape)
        except LinAlgError:
            break
        slopes = ops.forward(np.asarray(X @ direction))
        t, decrease = minimize_with_decrease(lam * float(np.sum(direction * direction)),
                                             lam * float(np.sum(W * direction)),
                                             1.0 + ops.forward(scores)[ops.mask][None],
                                             slopes[ops.mask][None], c)
        t, decrease = float(np.ravel(t)[0]), float(np.ravel(decrease)[0])
        objective = 0.5 * lam * float(np.sum(W * W)) + c * float(np.sum(xi * xi))
        if not (np.isfinite(t) and t > 0 and decrease > PRIMAL_STALL * objective):
            break   # no decrease above round-off is left: the weights are at their floor
        W = W + t * direction
    if best_point is None:
        return False
    mu[...] = best_point
    return True


def _dual_objective(ops, mu, H, scores) -> float:
    """``Σμ − Σμ²/(4c) − tr(Hᵀ K H)/(2λ)`` from ``H = Tᵀ(μ)`` and the scores ``−KH/λ``: the dual
    objective of the certificate."""
    return float(mu.sum()) - float(np.sum(mu * mu)) / (4 * ops.weight) + 0.5 * float(np.sum(H * scores))
