"""Exact line search on a piecewise quadratic (the Newton steps and one-dimensional problems of
Ganu, Shevade & Sundararajan's Algorithms 2 and 3).

``φ(t) = ½ a t² + b t + w Σ_m max(0, u_m + t e_m)²`` is convex with a piecewise-linear,
nondecreasing derivative. :func:`minimize_with_decrease`, :func:`minimize_piecewise_quadratic` and
:func:`minimize_outer_terms` return its exact minimiser (and the decrease ``φ(0) − φ(t)``) for
batches of problems; all three run one compiled kernel (:func:`_exact_minimiser`, one problem at a
time: the bounded sweep below). :func:`sorted_root` is the slow, obviously exact reference.

The bounded sweep. The sign of φ'(0) gives the side σ of the minimiser; along it, ``t = σs`` with
``s ≥ 0``, the terms active at 0 that grow (``u > 0``, ``σe > 0``) stay active, so φ' along s has slope
at least ``a + 2w·Σ_grown e²`` and the minimiser satisfies ``s ≤ S = |φ'(0)| / (a + 2w·Σ_grown e²)``
(widened by 1e-9 against round-off). A term with the same state at 0 and at S keeps it on [0, S]:
the active ones are folded into the quadratic (sums of ``σe·u`` and ``e²``), the inactive ones
dropped. The others (the crossing terms, a few per cent in the greedy scoring) change state once
on [0, S], at ``s = −u/(σe)``: sorted by breakpoint, φ' is linear between consecutive breakpoints
and the minimiser is the root of the piece before the first breakpoint where φ' ≥ 0 (the last
piece if none): exact, no iteration. That piece's slope and intercept are summed afresh from the
terms' states (not carried by differences along the sweep, which would lose the small terms next
to large ones). The decrease comes from the same sums: a folded term changes by
``2s·σe·u + s²e²``, a crossing one by ``max(0, u + sσe)² − max(0, u)²``. A minimiser found at or
beyond ``S`` (round-off) is solved again with every term that changes state on [0, ∞) listed.
"""

from __future__ import annotations

import numpy as np

from mlsvm.solvers.compiled import argsort, compiled

__all__ = ["hinge_segment_search", "minimize_outer_terms", "minimize_piecewise_quadratic", "minimize_with_decrease",
           "sorted_root"]


@compiled
def _active_sums(u, e, scale):
    """Σ e·u, Σ e² and Σ_{e > 0} e² over the terms active at t = 0 (``u > 0``), the slopes being
    ``e·scale`` (a ``scale`` of ones: the slopes ``e`` themselves, bit for bit)."""
    eu, ee, rising = 0.0, 0.0, 0.0
    for m in range(u.size):
        if u[m] > 0.0:
            slope = e[m] * scale[m]
            eu += slope * u[m]
            square = slope * slope
            ee += square
            if slope > 0.0:
                rising += square
    return eu, ee, rising


#: from this many crossing terms on, their breakpoints are ordered by radix (quicksort below: bibtex's
#: first additions list thousands of crossing terms per problem, where quicksort costs ~3x more)
RADIX_FROM = 1500


@compiled
def _radix_order(breaks, count):
    """The stable order of ``breaks[:count]`` (non-negative: ``+0.0`` for a ``−0.0``), by an LSD radix
    sort of their bit patterns (increasing as the values for non-negative floats) in 11-bit digits,
    skipping the digits all keys share."""
    keys, spare_keys = np.empty(count, dtype=np.uint64), np.empty(count, dtype=np.uint64)
    order, spare = np.arange(count), np.empty(count, dtype=np.int64)
    if count < 2:
        return order
    bits = (breaks[:count] + 0.0).view(np.uint64)
    for i in range(count):
        keys[i] = bits[i]
    counts = np.empty(2048, dtype=np.int64)
    mask = np.uint64(2047)
    for shift in range(0, 64, 11):
        move = np.uint64(shift)
        counts[:] = 0
        for i in range(count):
            counts[(keys[i] >> move) & mask] += 1
        if counts[(keys[0] >> move) & mask] == count:
            continue
        total = 0
        for digit in range(2048):
            here = counts[digit]
            counts[digit] = total
            total += here
        for i in range(count):
            digit = (keys[i] >> move) & mask
            position = counts[digit]
            counts[digit] = position + 1
            spare_keys[position], spare[position] = keys[i], order[i]
        keys, spare_keys = spare_keys, keys
        order, spare = spare, order
    return order


@compiled
def _sweep(a, b, u, e, scale, index, size, sigma, bound, eu, ee, weight, listed_u, listed_e, breaks):
    """The minimiser ``s ≥ 0`` of φ(σs) and the decrease ``φ(0) − φ(σs)``, folding the terms whose
    state is the same at 0 and at ``bound`` and sweeping the sorted breakpoints of the others (module
    docstring); the slopes are ``e·scale``; ``eu, ee``: Σ e·u and Σ e² over the terms active at 0. Only
    the terms ``index[:size]`` (increasing) are read: every term that changes state on [0, bound] must
    be among them. ``listed_u, listed_e, breaks``: work arrays of at least ``size`` entries."""
    w2 = 2.0 * weight
    reach = sigma * bound
    # one pass: the terms that change state on [0, bound] listed (few: the branch is predictable; a
    # zero slope never changes state, and against an infinite bound it would give nan), the folded
    # sums being those over the terms active at 0 less the listed ones among them
    folded_eu, folded_ee, count = sigma * eu, ee, 0
    for q in range(size):
        m = index[q]
        term_slope = e[m] * scale[m]
        if term_slope != 0.0 and (u[m] > 0.0) != (u[m] + term_slope * reach > 0.0):
            slope = sigma * term_slope
            listed_u[count], listed_e[count] = u[m], slope
            breaks[count] = -u[m] / slope
            count += 1
            if u[m] > 0.0:
                folded_eu -= slope * u[m]
                folded_ee -= slope * slope
    order = argsort(breaks[:count]) if count < RADIX_FROM else _radix_order(breaks, count)
    # φ'(σs) = slope·s + intercept on each piece; before the first breakpoint the listed terms
    # active at 0 (u > 0, leaving) are active and the others (entering) are not
    slope, intercept = a + w2 * folded_ee, sigma * b + w2 * folded_eu
    for j in range(count):
        if listed_u[j] > 0.0:
            slope += w2 * listed_e[j] * listed_e[j]
            intercept += w2 * listed_e[j] * listed_u[j]
    passed = count             # breakpoints passed before the root's piece
    for position in range(count):
        j = order[position]
        if slope * breaks[j] + intercept >= 0.0:
            passed = position
            break
        sign = -1.0 if listed_u[j] > 0.0 else 1.0
        slope += sign * w2 * listed_e[j] * listed_e[j]
        intercept += sign * w2 * listed_e[j] * listed_u[j]
    # the root's piece summed afresh: the terms passed have changed state
    active_ee, active_eu = folded_ee, folded_eu
    for position in range(count):
        j = order[position]
        if (listed_u[j] > 0.0) != (position < passed):
            active_ee += listed_e[j] * listed_e[j]
            active_eu += listed_e[j] * listed_u[j]
    slope, intercept = a + w2 * active_ee, sigma * b + w2 * active_eu
    s = -intercept / slope if slope > 0.0 else 0.0   # slope 0: a zero direction (a = 0, e = 0), t = 0
    s = max(s, 0.0)            # the root is past 0 (φ'(0) < 0 along s): round-off only
    change = 2.0 * s * folded_eu + s * s * folded_ee
    for j in range(count):
        after, before = max(listed_u[j] + s * listed_e[j], 0.0), max(listed_u[j], 0.0)
        change += (after - before) * (after + before)
    return s, -(0.5 * a * s * s + sigma * b * s + weight * change)


@compiled
def _search_side(a, b, weight, eu, ee, rising):
    """φ'(0), the side σ of the minimiser and the bound S on its distance (module docstring), from the
    sums over the terms active at 0 (:func:`_active_sums`)."""
    slope0 = b + 2.0 * weight * eu                      # φ'(0)
    sigma = 1.0 if slope0 < 0.0 else -1.0
    grown = rising if sigma > 0.0 else ee - rising      # Σ e² of the active terms that grow along σ
    return slope0, sigma, abs(slope0) / (a + 2.0 * weight * grown) * (1.0 + 1e-9)


@compiled
def _bounded_minimiser(a, b, u, e, scale, index, size, weight, eu, ee, slope0, sigma, bound, everything,
                       listed_u, listed_e, breaks):
    """:func:`_exact_minimiser` from its :func:`_search_side`, reading the terms ``index[:size]`` (a
    superset of those that change state on [0, bound]); ``everything`` = ``arange(u.size)``."""
    if slope0 == 0.0:
        return 0.0, 0.0
    s, decrease = _sweep(a, b, u, e, scale, index, size, sigma, bound, eu, ee, weight, listed_u, listed_e, breaks)
    if s >= bound and bound < np.inf:                  # round-off: every term that can change state listed
        s, decrease = _sweep(a, b, u, e, scale, everything, u.size, sigma, np.inf, eu, ee, weight, listed_u,
                             listed_e, breaks)
    return sigma * s, decrease


@compiled
def _exact_minimiser(a, b, u, e, scale, weight, eu, ee, rising, everything, listed_u, listed_e, breaks):
    """The exact minimiser t of ``φ(t) = ½ a t² + b t + weight Σ_m max(0, u_m + t e_m scale_m)²`` and
    ``φ(0) − φ(t)``, from the sums over the terms active at 0 (:func:`_active_sums`: ``eu`` = Σ e·u,
    ``ee`` = Σ e², ``rising`` = Σ_{e > 0} e², of the slopes ``e·scale``). ``a > 0``, or ``a = 0`` with
    zero slopes (then t = 0). ``everything`` = ``arange(u.size)`` (or longer); ``listed_u, listed_e,
    breaks``: work arrays of at least ``u.size`` entries."""
    slope0, sigma, bound = _search_side(a, b, weight, eu, ee, rising)
    return _bounded_minimiser(a, b, u, e, scale, everything, u.size, weight, eu, ee, slope0, sigma, bound,
                              everything, listed_u, listed_e, breaks)


@compiled
def _minimise_rows(A, B, U, E, weight, t, decrease):
    """Problem p of the batch has the terms ``U[p], E[p]``: t[p] and decrease[p] written."""
    size = U.shape[1]
    ones, everything = np.ones(size), np.arange(size)
    listed_u, listed_e, breaks = np.empty(size), np.empty(size), np.empty(size)
    for p in range(A.size):
        eu, ee, rising = _active_sums(U[p], E[p], ones)
        t[p], decrease[p] = _exact_minimiser(A[p], B[p], U[p], E[p], ones, weight, eu, ee, rising, everything,
                                             listed_u, listed_e, breaks)


@compiled
def _minimise_outer(A, B, u_t, scale_t, columns, EU, EE, rising, weight, t, decrease):
    """Problem (c, r) has the terms ``u_t[r, i]``, ``columns[c, i]·scale_t[r, i]`` and the sums over its
    active terms ``EU, EE, rising`` (c, r).

    Label by label, the candidates in decreasing order of ``τ_c = max|columns[c]|·max|scale_t[r]|·S_cr``
    (S_cr: the bound of the sweep): a term with ``|u| > τ_c`` keeps its state on [0, S_cr] (its change
    ``|e|·S`` is smaller than ``|u|``, also in floating point: τ is widened by 1e-6), so each candidate
    reads only the label's points with ``|u| ≤ τ_c``, a list shrunk from one candidate to the next and
    kept in increasing order (the listed terms, and so every sum, are those of the full pass)."""
    count, n = columns.shape
    k = u_t.shape[0]
    everything = np.arange(n)
    index = np.empty(n, dtype=np.int64)
    listed_u, listed_e, breaks = np.empty(n), np.empty(n), np.empty(n)
    column_max = np.empty(count)
    for c in range(count):
        column_max[c] = np.max(np.abs(columns[c])) if n else 0.0
    slope0, sigma, bound, reach = np.empty(count), np.empty(count), np.empty(count), np.empty(count)
    for r in range(k):
        u, scale = u_t[r], scale_t[r]
        scale_max = np.max(np.abs(scale)) if n else 0.0
        for c in range(count):
            slope0[c], sigma[c], bound[c] = _search_side(A[c, r], B[c, r], weight, EU[c, r], EE[c, r], rising[c, r])
            reach[c] = column_max[c] * scale_max * bound[c] * (1.0 + 1e-6)
            if not reach[c] < np.inf:   # an infinite (or nan) bound: every term
                reach[c] = np.inf
        order = argsort(-reach)
        size = 0
        for c_position in range(count):
            c = order[c_position]
            limit = reach[c]
            if c_position == 0:
                for i in range(n):
                    if abs(u[i]) <= limit:
                        index[size] = i
                        size += 1
            else:
                kept = 0
                for q in range(size):
                    i = index[q]
                    if abs(u[i]) <= limit:
                        index[kept] = i
                        kept += 1
                size = kept
            t[c, r], decrease[c, r] = _bounded_minimiser(A[c, r], B[c, r], u, columns[c], scale, index, size, weight,
                                                         EU[c, r], EE[c, r], slope0[c], sigma[c], bound[c], everything,
                                                         listed_u, listed_e, breaks)


def minimize_piecewise_quadratic(a, b, u, e, weight: float):
    """Exact minimiser over t ∈ ℝ of ``φ(t) = ½ a t² + b t + weight Σ_m max(0, u_m + t e_m)²``.

    Batched: ``u, e`` of shape (..., m), ``a > 0`` and ``b`` of shape (...) (``a = 0`` is allowed only
    with ``e = 0``, a null direction: then t = 0). The bounded sweep of the module docstring, one
    problem at a time; a float for scalar problems.

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
    count = int(np.prod(shape))
    U = np.broadcast_to(u, shape + (m,)).reshape(count, m)
    E = np.broadcast_to(e, shape + (m,)).reshape(count, m)
    t, _ = minimize_with_decrease(np.broadcast_to(a, shape).ravel(), np.broadcast_to(b, shape).ravel(), U, E, weight)
    return t.reshape(shape) if shape else float(t[0])


def minimize_with_decrease(a, b, u, e, weight: float):
    """The minimisers of a batch of problems ``φ_p(t) = ½ a_p t² + b_p t + weight Σ_m max(0, u_pm + t e_pm)²``
    and their decreases ``φ_p(0) − φ_p(t_p)`` (the greedy candidate scoring (3.12) and the Newton line
    searches): the bounded sweep of the module docstring, one problem at a time.

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

    Returns
    -------
    t : ndarray of shape (p,)
        The minimisers.
    decrease : ndarray of shape (p,)
        ``φ_p(0) − φ_p(t_p)`` (≥ 0 up to round-off).
    """
    E = np.ascontiguousarray(e, dtype=np.float64)
    if E.ndim != 2:
        raise ValueError(f"e must be a 2-D array (problems × terms); got shape {E.shape}")
    count = E.shape[0]
    U = np.asarray(u, dtype=np.float64)
    U = np.ascontiguousarray(U) if U.ndim == 2 else np.broadcast_to(U, E.shape)   # a shared u: a view
    A = np.array(np.broadcast_to(np.asarray(a, dtype=np.float64), (count,)))
    B = np.array(np.broadcast_to(np.asarray(b, dtype=np.float64), (count,)))
    t, decrease = np.zeros(count), np.zeros(count)
    if count:
        _minimise_rows(A, B, U, E, float(weight), t, decrease)
    return t, decrease


def minimize_outer_terms(a, b, u, scale, columns, weight: float):
    """:func:`minimize_with_decrease` for problems whose term slopes are outer products: problem (c, r)
    is ``φ_cr(t) = ½ a_cr t² + b_cr t + weight Σ_i max(0, u_ir + t·columns_ci·scale_ir)²``, the offsets
    ``u`` shared by every c (SM3L's candidate scoring with R = I: c a candidate, r a label,
    ``scale = −Ys``). The sums over the terms active at 0 are matrix products (``columns`` times n × k
    matrices, BLAS); the sweep reads each problem's terms from ``u``, ``scale`` and ``columns`` (the
    κ × k × n term arrays are never formed), skipping the points where the candidate's column is 0.

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
    A = np.array(np.broadcast_to(np.asarray(a, dtype=np.float64), (count, k)))
    B = np.array(np.broadcast_to(np.asarray(b, dtype=np.float64), (count, k)))
    t, decrease = np.zeros((count, k)), np.zeros((count, k))
    if count == 0 or k == 0:
        return t, decrease
    squares = np.where(u > 0, scale * scale, 0.0)       # e² = columns² · scale² on the active terms
    EU = columns @ (scale * np.maximum(u, 0.0))                                 # Σ_active e·u
    EE = (columns * columns) @ squares                                          # Σ_active e²
    # Σ_active, e > 0 e²: e > 0 where columns and scale have the same sign
    positive, negative = np.maximum(columns, 0.0), np.minimum(columns, 0.0)
    rising = (positive * positive) @ np.where(scale > 0, squares, 0.0)
    if np.any(negative):
        rising += (negative * negative) @ np.where(scale < 0, squares, 0.0)
    _minimise_outer(A, B, np.ascontiguousarray(u.T), np.ascontiguousarray(scale.T), columns,
                    np.ascontiguousarray(EU), np.ascontiguousarray(EE), np.ascontiguousarray(rising),
                    float(weight), t, decrease)
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
