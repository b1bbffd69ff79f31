"""Exact line search on a piecewise quadratic (the Newton steps and one-dimensional problems of
Ganu, Shevade & Sundararajan's Algorithms 2 and 3).

``φ(t) = ½ a t² + b t + w Σ_m max(0, u_m + t e_m)²`` is convex with a piecewise-linear,
nondecreasing derivative; both functions below return its exact minimiser over t ∈ ℝ.
"""

from __future__ import annotations

import numpy as np

#: share of crossing terms above which :func:`minimize_with_decrease` runs Newton on all terms
DENSE_SHARE = 0.05

__all__ = ["hinge_segment_search", "minimize_outer_terms", "minimize_piecewise_quadratic", "minimize_with_decrease",
           "sorted_root"]


def minimize_piecewise_quadratic(a, b, u, e, weight: float):
    """Exact minimiser over t ∈ ℝ of ``φ(t) = ½ a t² + b t + weight Σ_m max(0, u_m + t e_m)²``.

    Batched: ``u, e`` of shape (..., m), ``a > 0`` and ``b`` of shape (...). φ' is piecewise linear
    and nondecreasing. Newton on φ' from t = 0, with the active set at t, safeguarded by
    bisection on the bracket [lo, hi] of the root (``a = 0`` is allowed only with ``e = 0``, a null
    direction: then t = 0); a step whose end point has the same active set
    is the exact root of that piece, so the result is exact (finitely many pieces). A root on a
    breakpoint can leave φ' at ±round-off on both sides, so neither test fires: once the bracket
    holds no float strictly inside it, t is the root to one ulp and the problem is settled. Problems
    not settled in 60 steps fall back to :func:`sorted_root` (a safeguard), scalar ones included.
    Settled problems leave the working arrays, so a batch costs what its slowest members need.

    Parameters
    ----------
    a : float
        Curvature of the quadratic part.
    b : float
        Slope of the quadratic part.
    u : ndarray
        Offsets of the squared-hinge terms.
    e : ndarray
        Their slopes.
    weight : float
        Weight of the hinge terms.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    u, e = np.asarray(u, dtype=np.float64), np.asarray(e, dtype=np.float64)
    shape = np.broadcast_shapes(a.shape, b.shape, u.shape[:-1], e.shape[:-1])
    m = np.broadcast_shapes(u.shape[-1:], e.shape[-1:])[0]
    # one row per problem (a broadcast u, e.g. shared by every candidate, stays a view)
    count = int(np.prod(shape))
    U = np.broadcast_to(u, shape + (m,)).reshape(count, m)
    E = np.broadcast_to(e, shape + (m,)).reshape(count, m)
    A, B = np.broadcast_to(a, shape).ravel(), np.broadcast_to(b, shape).ravel()
    result = np.zeros(A.size)
    if A.size == 0:
        return result.reshape(shape)
    pending = np.arange(A.size)   # the rows still iterated; settled rows leave the working arrays
    t = np.zeros(A.size)
    lo, hi = np.full(A.size, -np.inf), np.full(A.size, np.inf)
    EE = E * E
    residual = U + t[:, None] * E
    active = residual > 0
    for _ in range(60):
        # φ'(t) and its slope on the current piece: Σ e·max(0, u + te) and Σ_{active} e²
        derivative = A * t + B + 2 * weight * np.einsum("ij,ij->i", E, np.maximum(residual, 0.0))
        slope = A + 2 * weight * np.einsum("ij,ij->i", EE, active)
        lo = np.where(derivative < 0, t, lo)
        hi = np.where(derivative > 0, t, hi)
        done = (derivative == 0) | (slope <= 0)   # slope 0: a zero direction, t = 0 is as good as any
        done |= np.nextafter(lo, hi) >= hi          # collapsed bracket: the root is t, to one ulp
        step = t - derivative / np.where(slope > 0, slope, 1.0)
        outside = ~((step > lo) & (step < hi))
        with np.errstate(invalid="ignore"):  # −inf + inf where the bracket is still open: unused
            middle = 0.5 * (lo + hi)
        # a half-open bracket has no middle (it would be ±inf, and u + t·e then "inf · 0"): the step
        # fell onto its finite end by round-off (Newton's change was below one ulp of t), so the
        # root is the next float towards the open side
        middle = np.where(np.isfinite(lo) & np.isinf(hi), np.nextafter(lo, np.inf), middle)
        middle = np.where(np.isinf(lo) & np.isfinite(hi), np.nextafter(hi, -np.inf), middle)
        step = np.where(outside, middle, step)
        # a settled problem keeps its t; its step, which can be ±inf (a step of less than one ulp
        # against a half-open bracket), must not reach u + step·e (inf · 0: "invalid value")
        t = np.where(done, t, step)
        # the residual at the new t serves both the exactness test (a step that keeps its active
        # set is the exact root of that piece) and the next iteration
        residual = U + t[:, None] * E
        now_active = residual > 0
        done |= ~outside & np.all(now_active == active, axis=1)
        active = now_active
        if np.any(done):
            result[pending[done]] = t[done]
            keep = ~done
            if not np.any(keep):
                return result.reshape(shape) if shape else float(result[0])
            pending, t, lo, hi = pending[keep], t[keep], lo[keep], hi[keep]
            U, E, EE, A, B = U[keep], E[keep], EE[keep], A[keep], B[keep]
            residual, active = residual[keep], active[keep]
    for row, index in enumerate(pending):   # not settled in 60 steps: the sorted-breakpoint root
        result[index] = sorted_root(float(A[row]), float(B[row]), U[row], E[row], weight)
    return result.reshape(shape) if shape else float(result[0])


def minimize_with_decrease(a, b, u, e, weight: float, per_problem: bool = False):
    """The minimisers of a batch of problems ``φ_p(t) = ½ a_p t² + b_p t + weight Σ_m max(0, u_pm + t e_pm)²``
    and their decreases ``φ_p(0) − φ_p(t_p)``, sorting only the terms that change state.

    For the many problems of the greedy candidate scoring (Alg. 2, (3.12)) and the Newton line
    searches, where few terms change state between 0 and the minimiser. The sign of φ'(0) gives the
    side of the minimiser; along it, ``t = σs`` with ``s ≥ 0``, the terms active at 0 that grow
    (``u > 0``, ``σe > 0``) stay active, so φ' along s has slope at least ``a + 2·weight·Σ_grown e²`` and
    the minimiser satisfies ``s ≤ S = |φ'(0)| / (a + 2·weight·Σ_grown e²)``. A term with the same state
    at 0 and at S keeps it on [0, S]: the active ones are folded into the problem's quadratic (sums
    of ``σe·u`` and ``e²``: the sums over the terms active at 0 less the crossing ones), the inactive
    ones dropped. The others (the crossing terms, a few per cent in the greedy scoring) change state
    once on [0, S], at ``s = −u/(σe)``: kept as a flat list with problem indices and sorted by problem
    and breakpoint, φ' is linear between consecutive breakpoints (prefix sums of the terms that
    enter, suffix sums of those that leave), and the minimiser is the root of the piece before the
    first breakpoint where φ' ≥ 0 (the last piece if none): exact, no iteration. The decrease comes
    from the same sums: a term active at 0 and at s changes by ``2s·σe·u + s²e²``, a crossing one by
    ``max(0, u + sσe)² − max(0, u)²``. The full (p, m) arrays are read about eight times. In a problem
    where more than ``DENSE_SHARE`` (5 %) of the terms cross, the list operations would cost more
    than Newton on all its terms: :func:`minimize_piecewise_quadratic` runs on those rows instead
    and their decreases are summed over all terms (with ``per_problem``, the decision is per problem: in
    SM3L's per-label line searches a few labels move most of their terms while the others keep
    nearly all; otherwise by the share over the whole batch). The result agrees with :func:`minimize_piecewise_quadratic` up to round-off (the sums are
    formed in another order). A minimiser found beyond ``S`` (round-off) is solved again by
    :func:`sorted_root` on all its terms.

    Parameters
    ----------
    a : float or array of shape (p,)
        Curvatures of the quadratic parts (> 0, or 0 with ``e = 0``).
    b : float or array of shape (p,)
        Slopes of the quadratic parts.
    u : array of shape (p, m) or (m,)
        Offsets of the squared-hinge terms (a 1-D ``u`` is shared by every problem).
    e : array of shape (p, m)
        Their slopes.
    weight : float
        Weight of the hinge terms.
    per_problem : bool, default=False
        Decide the route (list or Newton on all terms) per problem, by its own share of crossing
        terms; False: for the whole batch, by the share over all its terms (the candidate scoring
        of SMSVM, where splitting the batch costs more than it saves: docs/sparse_mm.md).

    Returns
    -------
    t : ndarray of shape (p,)
        The minimisers.
    decrease : ndarray of shape (p,)
        ``φ_p(0) − φ_p(t_p)`` (≥ 0 up to round-off).
    """
    # rows contiguous: the row dots and passes below on a transposed view are several times slower
    E = np.ascontiguousarray(e, dtype=np.float64)
    if E.ndim != 2:
        raise ValueError(f"e must be a 2-D array (problems × terms); got shape {E.shape}")
    count = E.shape[0]
    U = np.asarray(u, dtype=np.float64)
    U = np.broadcast_to(np.ascontiguousarray(U) if U.ndim == 2 else U, E.shape)
    A = np.array(np.broadcast_to(np.asarray(a, dtype=np.float64), (count,)))
    B = np.array(np.broadcast_to(np.asarray(b, dtype=np.float64), (count,)))
    t, decrease = np.zeros(count), np.zeros(count)
    if count == 0:
        return t, decrease
    w2 = 2.0 * weight
    # (np.where and boolean indexing cost 5-10x an arithmetic pass on these arrays, 2-D np.nonzero
    # 8x a 1-D one, einsum's row sums 2.5x BLAS dots: masks multiply, rows are dotted by matmul)
    rowdot = lambda X, Y: (X[:, None, :] @ Y[:, :, None])[:, 0, 0]
    was_active = U > 0
    EU = rowdot(E, np.maximum(U, 0.0))                                          # Σ_active e·u
    slope0 = B + w2 * EU                                                        # φ'(0)
    sigma = np.where(slope0 < 0, 1.0, -1.0)                                     # the side of the minimiser
    held = E * was_active.view(np.uint8)                                        # e on the active terms
    EE = rowdot(held, held)                                                     # Σ_active e²
    np.maximum(held, 0.0, out=held)
    rising = rowdot(held, held)                                                 # Σ_active, e > 0 e²
    del held
    # Σ e² over the terms active at 0 that grow along s (u > 0, σe > 0: they stay active)
    grown = np.where(sigma > 0, rising, EE - rising)
    with np.errstate(divide="ignore", invalid="ignore"):   # 0/0 only where φ'(0) = 0: t = 0, unused
        # the bound S on the minimiser, widened against round-off (a minimiser found beyond it is re-solved)
        bound = np.abs(slope0) / (A + w2 * grown) * (1 + 1e-9)
    with np.errstate(invalid="ignore"):   # S = ∞ (a = 0, no growing term) times e = 0: not a crossing
        at_bound = E * (sigma * bound)[:, None]
        at_bound += U
        crossing = at_bound > 0
    del at_bound
    crossing ^= was_active
    crossing[slope0 == 0] = False                                               # φ'(0) = 0: t = 0
    del was_active
    # a problem where more than DENSE_SHARE of the terms change state (SM3L's first additions, the
    # first Newton step after one, on the labels that moved most): the list operations would cost
    # more than Newton on its full row; the others (most labels, most candidates) go by the list
    if per_problem:
        dense = np.count_nonzero(crossing, axis=1) > DENSE_SHARE * E.shape[1]
    else:
        dense = np.full(count, np.count_nonzero(crossing) > DENSE_SHARE * crossing.size)
    listed = np.flatnonzero(~dense)
    if dense.any():
        rows = np.flatnonzero(dense)
        U_d, E_d = U[rows], E[rows]
        t[rows] = minimize_piecewise_quadratic(A[rows], B[rows], U_d, E_d, weight)
        after, before = np.maximum(U_d + t[rows, None] * E_d, 0.0), np.maximum(U_d, 0.0)
        decrease[rows] = -(0.5 * A[rows] * t[rows] ** 2 + B[rows] * t[rows]
                           + weight * rowdot(after - before, after + before))
        del U_d, E_d, after, before
        if listed.size == 0:
            return t, decrease
        crossing = crossing[listed]
    rows, columns = np.divmod(np.flatnonzero(crossing), E.shape[1])
    del crossing
    if listed.size == count:
        return _crossing_roots(A, B, sigma, EU, EE, slope0, bound, rows, U[rows, columns], E[rows, columns], weight,
                               lambda index: (U[index], E[index]))
    original = listed[rows]
    t[listed], decrease[listed] = _crossing_roots(
        A[listed], B[listed], sigma[listed], EU[listed], EE[listed], slope0[listed], bound[listed], rows,
        U[original, columns], E[original, columns], weight, lambda index: (U[listed[index]], E[listed[index]]))
    return t, decrease


def minimize_outer_terms(a, b, u, scale, columns, weight: float):
    """:func:`minimize_with_decrease` for problems whose term slopes are outer products: problem (c, r)
    is ``φ_cr(t) = ½ a_cr t² + b_cr t + weight Σ_i max(0, u_ir + t·columns_ci·scale_ir)²``, the offsets
    ``u`` shared by every c (SM3L's candidate scoring with R = I: c a candidate, r a label,
    ``scale = −Ys``). The same exact method, its per-problem sums as matrix products (``columns`` times
    n × k matrices, BLAS) instead of passes over κ × n × k term arrays, which are never formed: the
    crossing test ``u + σS·e`` changing sign is, per term, ``columns_ci · (σS)_cr · g_ir > |u_ir|``
    with ``g = −sign(u)·scale`` (u = 0 counts as inactive), three passes per candidate over a k × n
    buffer (by blocks of labels). An active term with equality has its breakpoint exactly at the
    widened bound S, beyond the minimiser: it is folded, which is exact. The crossing terms
    then go through the list phase of :func:`minimize_with_decrease` (no Newton on all terms: there
    is no full term array to run it on). A crossing test rounded the other way only moves a term whose
    breakpoint is S (to round-off) between the folded and the listed terms: both exact on [0, t].

    Parameters
    ----------
    a : array of shape (κ, k)
        Curvatures of the quadratic parts (> 0, or 0 with all slopes of the problem 0).
    b : array of shape (κ, k)
        Slopes of the quadratic parts.
    u : array of shape (n, k)
        Offsets of the terms, shared by the κ rows of problems.
    scale : array of shape (n, k)
        The label factor of the slopes.
    columns : array of shape (κ, n)
        The candidate factor of the slopes.
    weight : float
        Weight of the hinge terms.

    Returns
    -------
    t : ndarray of shape (κ, k)
        The minimisers.
    decrease : ndarray of shape (κ, k)
        ``φ_cr(0) − φ_cr(t_cr)``.
    """
    u, scale = np.asarray(u, dtype=np.float64), np.asarray(scale, dtype=np.float64)
    columns = np.ascontiguousarray(columns, dtype=np.float64)
    (count, n), k = columns.shape, u.shape[1]
    if u.shape != (n, k) or scale.shape != (n, k):
        raise ValueError(f"u and scale must have shape ({n}, {k}); got {u.shape} and {scale.shape}")
    A = np.array(np.broadcast_to(np.asarray(a, dtype=np.float64), (count, k))).ravel()
    B = np.array(np.broadcast_to(np.asarray(b, dtype=np.float64), (count, k))).ravel()
    if count == 0 or k == 0:
        return np.zeros((count, k)), np.zeros((count, k))
    w2 = 2.0 * weight
    active = u > 0
    squares = np.where(active, scale * scale, 0.0)      # e² = columns² · scale² on the active terms
    EU = (columns @ (scale * np.maximum(u, 0.0))).ravel()                       # Σ_active e·u
    EE = ((columns * columns) @ squares).ravel()                               # Σ_active e²
    # Σ_active, e > 0 e²: e > 0 where columns and scale have the same sign
    positive, negative = np.maximum(columns, 0.0), np.minimum(columns, 0.0)
    rising = (positive * positive) @ np.where(scale > 0, squares, 0.0)
    if np.any(negative):
        rising += (negative * negative) @ np.where(scale < 0, squares, 0.0)
    rising = rising.ravel()
    slope0 = B + w2 * EU                                                        # φ'(0)
    sigma = np.where(slope0 < 0, 1.0, -1.0)
    grown = np.where(sigma > 0, rising, EE - rising)
    with np.errstate(divide="ignore", invalid="ignore"):   # 0/0 only where φ'(0) = 0: t = 0, unused
        bound = np.abs(slope0) / (A + w2 * grown) * (1 + 1e-9)
    # σS per problem; 0 where φ'(0) = 0 (t = 0, no crossing term)
    reach = np.where(slope0 != 0, sigma * bound, 0.0).reshape(count, k)
    g = np.ascontiguousarray((np.where(active, -scale, scale)).T)             # (k, n)
    threshold = np.ascontiguousarray(np.abs(u).T)
    # by blocks of labels of ~1.6 MB, which stay in cache between the three passes (timings:
    # docs/sparse_mm.md)
    block = max(1, 200_000 // max(n, 1))
    buffer, crossing = np.empty((min(block, k), n)), np.empty((count, k, n), dtype=bool)
    with np.errstate(invalid="ignore"):   # S = ∞ (a = 0, no growing term) times a zero slope: not a crossing
        for c in range(count):
            for start in range(0, k, block):
                stop = min(start + block, k)
                part = buffer[:stop - start]
                np.multiply(g[start:stop], reach[c, start:stop, None], out=part)
                part *= columns[c]
                np.greater(part, threshold[start:stop], out=crossing[c, start:stop])
    t, decrease = np.zeros((count, k)), np.zeros((count, k))
    # a label where more than DENSE_SHARE of its terms cross (SM3L's first additions): Newton on
    # its κ × n terms, as minimize_with_decrease does; listing and sorting them would cost more
    dense = np.count_nonzero(crossing, axis=(0, 2)) > DENSE_SHARE * count * n
    u_t, scale_t = np.ascontiguousarray(u.T), np.ascontiguousarray(scale.T)   # label rows contiguous
    for r in np.flatnonzero(dense):
        E = columns * scale_t[r]
        t[:, r] = minimize_piecewise_quadratic(A[r::k], B[r::k], u_t[r], E, weight)
        after, before = np.maximum(u_t[r] + t[:, r, None] * E, 0.0), np.maximum(u_t[r], 0.0)
        decrease[:, r] = -(0.5 * A[r::k] * t[:, r] ** 2 + B[r::k] * t[:, r]
                           + weight * np.einsum("ij,ij->i", after - before, after + before))
    listed = np.flatnonzero(~dense)            # the other labels: the list phase
    if listed.size == 0:
        return t, decrease
    if dense.any():
        crossing = crossing[:, listed]
    size = listed.size
    rows, i_index = np.divmod(np.flatnonzero(crossing), n)   # rows: problem (c, listed[j]) = c·size + j
    del crossing
    c_index, r_index = np.divmod(rows, size)
    r_index = listed[r_index]
    problems = (np.arange(count)[:, None] * k + listed).ravel()
    uu = u_t[r_index, i_index]
    ee = columns[c_index, i_index] * scale_t[r_index, i_index]
    del c_index, r_index, i_index
    roots, gains = _crossing_roots(
        A[problems], B[problems], sigma[problems], EU[problems], EE[problems], slope0[problems],
        bound[problems], rows, uu, ee, weight,
        lambda index: (u_t[problems[index] % k], columns[problems[index] // k] * scale_t[problems[index] % k]))
    t[:, listed], decrease[:, listed] = roots.reshape(count, size), gains.reshape(count, size)
    return t, decrease


def _crossing_roots(A, B, sigma, EU, EE, slope0, bound, rows, uu, ee, weight, row_terms):
    """The list phase of :func:`minimize_with_decrease` (and :func:`minimize_outer_terms`): from the
    per-problem sums over the terms active at 0 (``EU`` = Σ e·u, ``EE`` = Σ e²), the side ``sigma``,
    ``φ'(0)`` = ``slope0`` and the bound S = ``bound``, and the crossing terms as a flat list (problem
    ``rows``, offsets ``uu``, slopes ``ee``; none in a problem with φ'(0) = 0), the exact minimisers
    and decreases. ``row_terms(p)`` gives problem p's full ``(u, e)`` for the round-off re-solve.

    Parameters
    ----------
    A, B : ndarray of shape (p,)
        Curvatures and slopes of the quadratic parts.
    sigma : ndarray of shape (p,)
        The side of each minimiser (±1).
    EU, EE : ndarray of shape (p,)
        Σ e·u and Σ e² over the terms active at 0.
    slope0 : ndarray of shape (p,)
        φ'(0).
    bound : ndarray of shape (p,)
        The bound S on |t| (widened against round-off).
    rows : ndarray of int
        The problem of each crossing term.
    uu, ee : ndarray
        The crossing terms' offsets and slopes.
    weight : float
        Weight of the hinge terms.
    row_terms : callable
        ``row_terms(p) -> (u, e)``, all terms of problem p.
    """
    count = A.size
    t, decrease = np.zeros(count), np.zeros(count)
    w2 = 2.0 * weight
    pending = np.flatnonzero(slope0 != 0)
    position = np.full(count, -1)
    position[pending] = np.arange(pending.size)
    owner = position[rows]
    ee = ee * sigma[rows]
    del rows
    # folded (active at 0 and at S) = active at 0, less the crossing terms active at 0
    leaving = uu > 0
    FEU = (sigma * EU)[pending] - np.bincount(owner, weights=np.where(leaving, ee * uu, 0.0), minlength=pending.size)
    FEE = EE[pending] - np.bincount(owner, weights=np.where(leaving, ee * ee, 0.0), minlength=pending.size)
    del leaving
    # per pending problem, along s: φ' = (A + 2w·FEE)·s + σB + 2w·FEU + 2w Σ_crossing σe·max(0, u + sσe).
    # Each crossing term changes state once on [0, S], at its breakpoint −u/(σe): sorted per problem,
    # φ' is linear between consecutive breakpoints (prefix sums of the terms entering, suffix sums
    # of those leaving), and the root lies on the piece before the first breakpoint where φ' ≥ 0.
    size = pending.size
    keep = ee != 0                 # (only with S = ∞: a term that never moves is folded already)
    owner, uu, ee = owner[keep], uu[keep], ee[keep]
    breaks = -uu / ee
    if size < 2 ** 16:   # by breakpoint, then stably by problem: a radix sort on 16-bit owners (lexsort: 2.2x the time)
        order = np.argsort(breaks)
        order = order[np.argsort(owner[order].astype(np.uint16), kind="stable")]
    else:
        order = np.lexsort((breaks, owner))
    owner, uu, ee, breaks = owner[order], uu[order], ee[order], breaks[order]
    leaving = uu > 0               # active before its breakpoint, inactive after; the others enter
    eu, e2 = ee * uu, ee * ee
    counts = np.bincount(owner, minlength=size)
    first = np.cumsum(counts) - counts                       # start of each problem's segment
    def before_each(values):       # Σ over the same problem's earlier terms (exclusive prefix sums)
        total = np.cumsum(values)
        return total - values - (total - values)[first[owner]] if values.size else values
    enter_eu, enter_e2 = np.where(leaving, 0.0, eu), np.where(leaving, 0.0, e2)
    leave_eu, leave_e2 = eu - enter_eu, e2 - enter_e2
    all_leave_eu = np.bincount(owner, weights=leave_eu, minlength=size)
    all_leave_e2 = np.bincount(owner, weights=leave_e2, minlength=size)
    SA, SB = A[pending], (sigma * B)[pending]
    base_slope, base_intercept = SA + w2 * (FEE + all_leave_e2), SB + w2 * (FEU + all_leave_eu)
    # on the piece ending at each breakpoint: the leaving terms from it on, the entering ones before it
    slope_at = base_slope[owner] + w2 * (before_each(enter_e2) - before_each(leave_e2))
    intercept_at = base_intercept[owner] + w2 * (before_each(enter_eu) - before_each(leave_eu))
    rising = np.flatnonzero(slope_at * breaks + intercept_at >= 0)
    firsts = rising[np.r_[True, owner[rising[1:]] != owner[rising[:-1]]]] if rising.size else rising
    # default: the last piece (every crossing term has changed state)
    slope = SA + w2 * (FEE + np.bincount(owner, weights=enter_e2, minlength=size))
    intercept = SB + w2 * (FEU + np.bincount(owner, weights=enter_eu, minlength=size))
    slope[owner[firsts]], intercept[owner[firsts]] = slope_at[firsts], intercept_at[firsts]
    settled = slope > 0            # slope 0: a zero direction (a = 0, e = 0), t = 0 is as good as any
    S = np.where(settled, -intercept / np.where(settled, slope, 1.0), 0.0)
    S = np.maximum(S, 0.0)         # the root is past 0 (φ'(0) < 0 along s): round-off only
    after, before = np.maximum(uu + S[owner] * ee, 0.0), np.maximum(uu, 0.0)
    rest = np.bincount(owner, weights=(after - before) * (after + before), minlength=size)
    change = 2 * S * FEU + S * S * FEE + rest
    t[pending] = sigma[pending] * S
    decrease[pending] = -(0.5 * SA * S * S + SB * S + weight * change)
    pending = pending[S >= bound[pending]]     # at the bound: round-off; solved again below
    for index in pending:   # beyond the bound (round-off): the sorted-breakpoint root on all terms
        u_row, e_row = row_terms(index)
        root = sorted_root(float(A[index]), float(B[index]), u_row, e_row, weight)
        after, before = np.maximum(u_row + root * e_row, 0.0), np.maximum(u_row, 0.0)
        t[index] = root
        decrease[index] = -(0.5 * A[index] * root * root + B[index] * root
                            + weight * float((after - before) @ (after + before)))
    return t, decrease


def sorted_root(a: float, b: float, u: np.ndarray, e: np.ndarray, weight: float) -> float:
    """The same minimiser by sorting the breakpoints ``−u/e`` and prefix sums (O(m log m)); the
    slow, obviously exact reference for one problem.

    Parameters
    ----------
    a : float
        Curvature of the quadratic part.
    b : float
        Slope of the quadratic part.
    u : ndarray
        Offsets of the squared-hinge terms.
    e : ndarray
        Their slopes.
    weight : float
        Weight of the hinge terms.
    """
    nz = e != 0
    u, e = u[nz], e[nz]
    breaks = -u / e
    order = np.argsort(breaks)
    breaks, u, e = breaks[order], u[order], e[order]
    rising = e > 0  # term active for t > break; falling terms active for t < break
    eu, ee = e * u, e * e
    # interval m lies between break m-1 and break m
    s1_rise = np.concatenate([[0.0], np.cumsum(np.where(rising, eu, 0.0))])
    s2_rise = np.concatenate([[0.0], np.cumsum(np.where(rising, ee, 0.0))])
    s1_fall = np.concatenate([np.cumsum(np.where(rising, 0.0, eu)[::-1])[::-1], [0.0]])
    s2_fall = np.concatenate([np.cumsum(np.where(rising, 0.0, ee)[::-1])[::-1], [0.0]])
    slope = a + 2 * weight * (s2_rise + s2_fall)
    intercept = b + 2 * weight * (s1_rise + s1_fall)
    right_value = slope[:-1] * breaks + intercept[:-1]     # φ' at the right end of interval m
    m = int(np.argmax(right_value >= 0)) if np.any(right_value >= 0) else breaks.size
    return float(-intercept[m] / slope[m])


def hinge_segment_search(a: float, b: float, r: np.ndarray, e: np.ndarray, weight: float):
    """Exact search of ``φ(t) = ½ a t² + b t + weight Σ_m [r_m − t e_m]₊`` on ``t ∈ [0, 1]`` (``a ≥ 0``):
    a quadratic plus hinges, convex and piecewise quadratic with kinks at ``t = r_m/e_m``.

    Returns ``(t_min, t_level)``: ``t_min`` minimises φ on [0, 1] (the smallest minimiser) and
    ``t_level = max{t ∈ [0, 1] : φ(t) ≤ φ(0)}`` (≥ t_min; {φ ≤ φ(0)} is the interval [0, t_level]
    by convexity). Sorting the kinks in (0, 1) and prefix sums: O(m log m). Each piece is
    ``φ(t) − φ(0) = ½ a t² + (b − weight S_j) t + weight (R_j − R_0)`` with ``S_j, R_j`` the sums of
    ``e_m, r_m`` over the hinges active on piece j; crossing a kink deactivates a falling term
    (``r, e > 0``) or activates a rising one (``r, e < 0``), so ``S`` drops by ``|e_m|`` and ``R`` by ``|r_m|``.

    Parameters
    ----------
    a : float
        Curvature of the quadratic part along the segment.
    b : float
        Slope of the quadratic part at t = 0.
    r : ndarray
        Hinge arguments at t = 0.
    e : ndarray
        Their change per unit t.
    weight : float
        Weight of the hinge terms.
    """
    r, e = np.asarray(r, dtype=np.float64), np.asarray(e, dtype=np.float64)
    active = (r > 0) | ((r == 0) & (e < 0))
    crossing = (r != 0) & (np.sign(r) == np.sign(e))
    kinks = r[crossing] / e[crossing]
    inside = kinks < 1.0
    order = np.argsort(kinks[inside])
    knots = np.concatenate([[0.0], kinks[inside][order], [1.0]])
    S = float(e[active].sum()) - np.concatenate([[0.0], np.cumsum(np.abs(e[crossing][inside][order]))])
    R_drop = -np.concatenate([[0.0], np.cumsum(np.abs(r[crossing][inside][order]))])  # R_j − R_0
    linear = b - weight * S            # piece j: ψ(t) = ½ a t² + linear_j t + weight R_drop_j
    lo, hi = knots[:-1], knots[1:]
    rising = np.flatnonzero(a * hi + linear >= 0)
    if rising.size == 0:
        t_min = 1.0
    else:
        j = int(rising[0])
        t_min = float(np.clip(-linear[j] / a, lo[j], hi[j])) if a > 0 else float(lo[j])
    psi_hi = 0.5 * a * hi * hi + linear * hi + weight * R_drop
    above = np.flatnonzero((psi_hi > 0) & (hi > t_min))
    if above.size == 0:
        return t_min, 1.0
    j = int(above[0])
    c2, c1, c0 = 0.5 * a, linear[j], weight * R_drop[j]
    if c2 > 0:  # larger root of c2 t² + c1 t + c0, computed without cancellation
        disc = np.sqrt(max(c1 * c1 - 4 * c2 * c0, 0.0))
        root = (-c1 + disc) / (2 * c2) if c1 <= 0 else (2 * c0) / (-c1 - disc)
    else:
        root = -c0 / c1 if c1 > 0 else lo[j]
    return t_min, float(np.clip(root, max(lo[j], t_min), hi[j]))
