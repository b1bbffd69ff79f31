"""Minimum-cost circulation by the primal network simplex: the exact Rank-SVM biases in ``O(T)``
memory.

The problem, on a directed graph of ``n`` nodes and T arcs ``t = (tail_t → head_t)``::

    min Σ_t c_t x_t   over   0 ≤ x_t ≤ u_t,   Σ_{t out of v} x_t − Σ_{t into v} x_t = 0 for every v,

with potentials π (the conservation rows' multipliers) and reduced costs
``r_t = c_t − π_tail + π_head``: x is optimal if and only if ``x_t = 0`` where ``r_t > 0``,
``x_t = u_t`` where ``r_t < 0`` (complementary slackness). Rank-SVM's bias LP (the Frank–Wolfe
LP of :func:`mlsvm.formulations.rank_svm.linear_minimizer`) is this problem on the label graph:
pair ``(i, k, l)`` is an arc ``k → l`` with cost the dual gradient ``g_t`` and capacity ``u_t``,
and the biases are ``b = −π`` (then ``r_t = g_t + b_k − b_l``).

Algorithm: the primal network simplex (Ahuja, Magnanti & Orlin, *Network Flows*, 1993, ch. 11).
A basis is a spanning tree of the nodes and a root; the arcs outside it sit on a bound, the tree
arcs carry what conservation asks, and π makes every tree arc's reduced cost 0. A pivot takes an
arc whose reduced cost says it should move off its bound, sends flow θ around the cycle it closes
in the tree until an arc of the cycle reaches a bound, and swaps that arc out of the tree (or the
entering arc only changes bound). Entering arcs are priced by blocks of ``√T`` arcs, the most
violating arc of the next block with a violation (the block search of Király & Kovács, 2012). The
leaving arc is the last blocking arc met going round the cycle from its apex in the direction of
the flow: the tree stays *strongly feasible* (Cunningham, 1976), so degenerate pivots (θ = 0)
cannot cycle.

Warm start from a guess of the potentials: each arc starts on the bound its reduced cost at the
guess picks, and each node's imbalance is carried by an artificial arc to or from the root whose
cost makes the guess the starting potentials, plus a large M (an artificial arc never enters
again once out of the tree). With the biases of the previous multiplier update as the guess, most
arcs start on their final bound: on bibtex train (1.8 M pairs, C = 0.01) the later solves of a fit
took 5,700–85,000 pivots; from ``x = 0`` a solve takes about 1.7 pivots per arc.

A guess far from the optimum costs many pivots (the first solve of a fit on bibtex, 1.0 M); it is
first improved on samples of the arcs: the same circulation on ``m`` arcs drawn at random, their
capacities scaled by ``T/m`` so that the sample stands for the whole, started from the potentials
kept so far. A sample's potentials are kept when they raise the dual value
``Σ_t u_t min(0, r_t)`` of the whole network (a lower bound on the optimal cost, for any π). The
samples start at :data:`COARSE_SAMPLE` arcs and grow :data:`COARSE_GROWTH` times, up to a third of
the arcs; two samples in a row that do not raise the dual value end them (a sample's potentials
fall short of the optimal dual value by about ``1/m``, so a guess that one sample does not beat
may lose to the next). A good guess costs the two smallest samples and the dual value three
times. The measurements are in the Rank-SVM documentation ("A coarse start").

The tree update is ``O(n)`` per pivot (the nodes are the labels, a few hundred at most). Memory:
the flows, the scaled costs, a state byte per arc and the ``O(n)`` tree; a sample of the coarse
start holds the same for at most a third of the arcs, with its copy of their data. At the end the
tree's flows are recomputed from the arcs on their bounds and the potentials from the tree (no
drift from a million pivots), and the pricing runs once more with them. A part of the final tree that hangs
from the root by an empty artificial arc has its potentials fixed by that arc's cost (guess ± M),
not by optimality; each such part is moved as near the guess as complementary slackness allows
(:func:`_settle_parts`), so that the potentials stay of the size of the costs and the guess. The
caller checks the answer (see :func:`mlsvm.solvers.rank_svm_decomposition.certified_biases`).
"""

from __future__ import annotations

import numpy as np

from mlsvm.solvers.compiled import argsort, compiled

__all__ = ["min_cost_circulation"]

#: pivots at most, per arc (from ``x = 0`` a solve takes about 1.7)
PIVOTS_PER_ARC = 5
#: the pricing's threshold on a reduced cost, relative to the largest |cost|
PRICING_TOL = 1e-13
#: arcs in the first sample of the coarse start (module docstring) ...
COARSE_SAMPLE = 10_000
#: ... and the growth from one sample to the next
COARSE_GROWTH = 4


@compiled
def _residual(arc, origin, n_arcs, tail, capacity, flow, artificial_tail, artificial_flow):
    """How much more flow tree arc ``arc`` can carry away from its end node ``origin``."""
    if arc >= n_arcs:                      # the artificial arc of node arc − T: uncapacitated
        v = arc - n_arcs
        return np.inf if origin == artificial_tail[v] else artificial_flow[v]
    if tail[arc] == origin:
        return max(capacity[arc] - flow[arc], 0.0)
    return max(flow[arc], 0.0)


@compiled
def _push(arc, origin, amount, n_arcs, tail, flow, artificial_tail, artificial_flow):
    """Send ``amount`` along tree arc ``arc`` away from ``origin``."""
    if arc >= n_arcs:
        v = arc - n_arcs
        artificial_flow[v] += amount if origin == artificial_tail[v] else -amount
    elif tail[arc] == origin:
        flow[arc] += amount
    else:
        flow[arc] -= amount


@compiled
def _tree_cost(arc, child, n_arcs, tail, cost, artificial_tail, artificial_cost):
    """``π_child − π_parent`` that a zero reduced cost on tree arc ``arc`` asks."""
    if arc >= n_arcs:
        v = arc - n_arcs
        return artificial_cost[v] if artificial_tail[v] == child else -artificial_cost[v]
    return cost[arc] if tail[arc] == child else -cost[arc]


@compiled
def _fill_depths(parent, depth, path):
    """Set every depth marked −1 from the nearest ancestor with a depth (``path``: scratch)."""
    for v in range(parent.size):
        length, w = 0, v
        while depth[w] < 0:
            path[length] = w
            length += 1
            w = parent[w]
        for i in range(length - 1, -1, -1):
            depth[path[i]] = depth[parent[path[i]]] + 1


@compiled
def _refresh(parent, parent_arc, depth, potential, order, n_arcs, tail, head, cost, capacity, flow,
             artificial_tail, artificial_cost, artificial_flow):
    """Recompute depths, potentials (from the root) and the tree arcs' flows (from the arcs on
    their bounds, leaves first): exact up to one rounding per term."""
    n = parent.size
    root = n - 1
    # depths, then the nodes in order of depth (a counting sort)
    depth[:] = -1
    depth[root] = 0
    _fill_depths(parent, depth, order)
    counts = np.zeros(n + 1, np.int64)
    for v in range(n):
        counts[depth[v] + 1] += 1
    for d in range(n):
        counts[d + 1] += counts[d]
    for v in range(n):
        order[counts[depth[v]]] = v
        counts[depth[v]] += 1
    potential[root] = 0.0
    for i in range(1, n):
        v = order[i]
        potential[v] = potential[parent[v]] + _tree_cost(parent_arc[v], v, n_arcs, tail, cost,
                                                         artificial_tail, artificial_cost)
    # each node's net outflow on the non-tree arcs; the tree arcs balance it, leaves first
    excess = np.zeros(n)
    for t in range(n_arcs):
        if flow[t] != 0.0 and parent_arc[tail[t]] != t and parent_arc[head[t]] != t:
            excess[tail[t]] += flow[t]
            excess[head[t]] -= flow[t]
    for i in range(n - 1, 0, -1):
        v = order[i]
        arc = parent_arc[v]
        # the arc must carry −excess[v] away from v (towards its parent)
        amount = -excess[v]
        if arc >= n_arcs:
            artificial_flow[arc - n_arcs] = amount if artificial_tail[arc - n_arcs] == v else -amount
        elif tail[arc] == v:
            flow[arc] = amount
        else:
            flow[arc] = -amount
        excess[parent[v]] -= amount
        excess[v] = 0.0


@compiled
def _network_simplex(tail, head, cost, capacity, n_nodes, guess, big, tol, max_pivots):
    """The pivots (module docstring). Returns ``(flow, potential, status, pivots)``; status 0
    optimal, 1 pivot budget spent, 2 flow left on an artificial arc."""
    n_arcs = tail.size
    n = n_nodes + 1
    root = n_nodes
    flow = np.zeros(n_arcs)
    state = np.zeros(n_arcs, np.int8)         # 0 on the lower bound, 1 on the upper, 2 in the tree
    parent = np.full(n, -1, np.int64)
    parent_arc = np.full(n, -1, np.int64)
    depth = np.zeros(n, np.int64)
    potential = np.zeros(n)
    order = np.empty(n, np.int64)
    excess = np.zeros(n)                       # net outflow of the starting flow
    for t in range(n_arcs):
        if cost[t] - guess[tail[t]] + guess[head[t]] < 0.0:
            state[t], flow[t] = 1, capacity[t]
            excess[tail[t]] += capacity[t]
            excess[head[t]] -= capacity[t]
    # the starting tree: one artificial arc per node, to the root (v → root) or from it
    # (root → v, for a node with more outflow than inflow), costed so that π = guess ± M
    artificial_tail = np.empty(n_nodes, np.int64)
    artificial_flow = np.abs(excess[:n_nodes])
    artificial_cost = np.empty(n_nodes)
    for v in range(n_nodes):
        parent[v], parent_arc[v], depth[v] = root, n_arcs + v, 1
        if excess[v] > 0.0:
            artificial_tail[v], potential[v] = root, guess[v] - big
        else:
            artificial_tail[v], potential[v] = v, guess[v] + big
        artificial_cost[v] = potential[v] if artificial_tail[v] == v else -potential[v]
    path_p = np.empty(n, np.int64)
    path_q = np.empty(n, np.int64)
    in_subtree = np.zeros(n, np.int8)
    block = max(64, int(np.sqrt(n_arcs)))
    n_blocks = (n_arcs + block - 1) // block
    cursor, quiet, pivots = 0, 0, 0
    while True:
        if quiet == n_blocks:
            # no arc violates: recompute the tree exactly, then price every block once more
            _refresh(parent, parent_arc, depth, potential, order, n_arcs, tail, head, cost, capacity, flow,
                     artificial_tail, artificial_cost, artificial_flow)
        elif quiet >= 2 * n_blocks:
            break
        if pivots >= max_pivots:
            return flow, potential, 1, pivots
        # ---- pricing: the most violating arc of the next block
        entering, violation = -1, tol
        end = min(cursor + block, n_arcs)
        for t in range(cursor, end):
            if state[t] == 2:
                continue
            reduced = cost[t] - potential[tail[t]] + potential[head[t]]
            arc_violation = -reduced if state[t] == 0 else reduced
            if arc_violation > violation:
                entering, violation = t, arc_violation
        cursor = end if end < n_arcs else 0
        if entering < 0:
            quiet += 1
            continue
        quiet = 0
        pivots += 1
        e = entering
        p, q = (tail[e], head[e]) if state[e] == 0 else (head[e], tail[e])   # the flow goes p → q on e
        # ---- the cycle: e, then the tree from q up to the apex and down to p
        a, b, n_p, n_q = p, q, 0, 0
        while a != b:
            if depth[a] >= depth[b]:
                path_p[n_p] = a
                n_p += 1
                a = parent[a]
            else:
                path_q[n_q] = b
                n_q += 1
                b = parent[b]
        # the last blocking arc from the apex in the flow's direction: apex → p, e, q → apex
        theta, side, index = np.inf, 0, -1
        for i in range(n_p - 1, -1, -1):
            v = path_p[i]
            residual = _residual(parent_arc[v], parent[v], n_arcs, tail, capacity, flow,
                                 artificial_tail, artificial_flow)
            if residual <= theta:
                theta, side, index = residual, -1, i
        if capacity[e] <= theta:
            theta, side, index = capacity[e], 0, -1
        for i in range(n_q):
            v = path_q[i]
            residual = _residual(parent_arc[v], v, n_arcs, tail, capacity, flow, artificial_tail, artificial_flow)
            if residual <= theta:
                theta, side, index = residual, 1, i
        if theta > 0.0:
            for i in range(n_p):
                v = path_p[i]
                _push(parent_arc[v], parent[v], theta, n_arcs, tail, flow, artificial_tail, artificial_flow)
            for i in range(n_q):
                v = path_q[i]
                _push(parent_arc[v], v, theta, n_arcs, tail, flow, artificial_tail, artificial_flow)
        if side == 0:                          # the entering arc only changes bound
            if state[e] == 0:
                state[e], flow[e] = 1, capacity[e]
            else:
                state[e], flow[e] = 0, 0.0
            continue
        flow[e] = theta if state[e] == 0 else capacity[e] - theta
        state[e] = 2
        # ---- the leaving arc joins node `child` to its parent; e's end in child's subtree is `inner`
        if side == -1:
            child, inner, outer = path_p[index], p, q
            origin = parent[child]
        else:
            child, inner, outer = path_q[index], q, p
            origin = child
        leaving = parent_arc[child]
        if leaving >= n_arcs:
            artificial_flow[leaving - n_arcs] = 0.0
        elif tail[leaving] == origin:          # it was filled in its own direction
            state[leaving], flow[leaving] = 1, capacity[leaving]
        else:
            state[leaving], flow[leaving] = 0, 0.0
        # child's subtree, before the change
        in_subtree[:] = 0                    # 0 not known yet, 1 in it, 2 not
        in_subtree[child], in_subtree[root] = 1, 2
        for v in range(n):
            w = v
            while in_subtree[w] == 0:
                w = parent[w]
            mark, w = in_subtree[w], v
            while in_subtree[w] == 0:
                in_subtree[w] = mark
                w = parent[w]
        # hang the subtree from e: reverse the parent links from inner up to child
        previous, previous_arc, w = outer, e, inner
        while True:
            next_node, next_arc = parent[w], parent_arc[w]
            parent[w], parent_arc[w] = previous, previous_arc
            if w == child:
                break
            previous, previous_arc, w = w, next_arc, next_node
        # the subtree's potentials move together so that e's reduced cost is 0; depths afresh
        reduced = cost[e] - potential[tail[e]] + potential[head[e]]
        shift = -reduced if inner == head[e] else reduced
        for v in range(n):
            if in_subtree[v] == 1:
                potential[v] += shift
                depth[v] = -1
        _fill_depths(parent, depth, order)
    left = 1e-12 * np.sum(capacity)
    for v in range(n_nodes):
        if parent_arc[v] == n_arcs + v and artificial_flow[v] > left:
            return flow, potential, 2, pivots
    _settle_parts(parent, potential, guess, tail, head, cost, capacity, state)
    return flow, potential, 0, pivots


@compiled
def _settle_parts(parent, potential, guess, tail, head, cost, capacity, state):
    """Move the potentials of each part of the final tree that hangs from the root (by an empty
    artificial arc) by the constant nearest the guess's mean over the part that keeps every arc's
    reduced cost on the side its bound asks.

    The tree fixes such a part's potentials relative to the root through the artificial arc's cost
    (guess ± M), which is no optimality condition: when the arcs between two parts all sit on their
    bounds the optimal potentials differ there by any amount in an interval, and the tree's pick is
    M away. The parts are moved one after another, each to the point of its interval (given the
    others' moves so far) nearest its target, the largest parts first, in sweeps until none moves (at
    most one sweep per part): the conditions hold after every move."""
    n = parent.size
    root = n - 1
    part = np.full(n, -1, np.int64)
    n_parts = 0
    for v in range(n - 1):
        if parent[v] == root:
            part[v] = n_parts
            n_parts += 1
    for v in range(n - 1):
        w = v
        while part[w] < 0:
            w = parent[w]
        part[v] = part[w]
    # lower[a, b] ≤ δ_a − δ_b ≤ upper[a, b] from the arcs between parts (δ = 0 meets them)
    lower = np.full((n_parts, n_parts), -np.inf)
    upper = np.full((n_parts, n_parts), np.inf)
    for t in range(tail.size):
        a, b = part[tail[t]], part[head[t]]
        if a == b or capacity[t] <= 0.0:
            continue
        reduced = cost[t] - potential[tail[t]] + potential[head[t]]   # after the moves: r − δ_a + δ_b
        if state[t] == 0:
            upper[a, b] = min(upper[a, b], max(reduced, 0.0))
        else:
            lower[a, b] = max(lower[a, b], min(reduced, 0.0))
    target = np.zeros(n_parts)
    size = np.zeros(n_parts)
    for v in range(n - 1):
        target[part[v]] += guess[v] - potential[v]
        size[part[v]] += 1.0
    shift = np.zeros(n_parts)
    by_size = argsort(-size)
    for _ in range(n_parts):
        moved = False
        for a in by_size:
            low, high = -np.inf, np.inf
            for b in range(n_parts):
                if b != a:
                    low = max(low, lower[a, b] + shift[b], shift[b] - upper[b, a])
                    high = min(high, upper[a, b] + shift[b], shift[b] - lower[b, a])
            new = min(max(target[a] / size[a], low), high)
            moved = moved or new != shift[a]
            shift[a] = new
        if not moved:
            break
    for v in range(n - 1):
        potential[v] += shift[part[v]]


@compiled
def _dual_value(tail, head, cost, capacity, potential):
    """``Σ_t u_t min(0, c_t − π_tail + π_head)``: the LP dual's value at π, at most the optimal cost."""
    value = 0.0
    for t in range(tail.size):
        reduced = cost[t] - potential[tail[t]] + potential[head[t]]
        if reduced < 0.0:
            value += capacity[t] * reduced
    return value


def _coarse_start(tail, head, cost, capacity, n_nodes, guess):
    """Potentials from samples of the arcs, or ``guess`` (module docstring)."""
    n_arcs, m = tail.size, COARSE_SAMPLE
    if m > n_arcs // 3:
        return guess
    rng = np.random.default_rng(0)
    best = _dual_value(tail, head, cost, capacity, guess)
    missed = 0
    while m <= n_arcs // 3 and missed < 2:
        sample = np.sort(rng.integers(0, n_arcs, m))
        solution = _solve(tail[sample], head[sample], cost[sample], capacity[sample] * (n_arcs / m), n_nodes, guess)
        value = -np.inf if solution is None else _dual_value(tail, head, cost, capacity, solution[1])
        if value > best:
            guess, best, missed = solution[1], value, 0
        else:
            missed += 1
        m *= COARSE_GROWTH
    return guess


def _solve(tail, head, cost, capacity, n_nodes, guess):
    """The network simplex on costs scaled to at most 1, from ``guess``: ``(flow, potential)`` or None."""
    scale = float(np.max(np.abs(cost), initial=0.0))
    scale = scale if scale > 0.0 else 1.0
    # M exceeds the cost of any simple path, guess included
    guess = np.append(guess - guess.mean(), 0.0) / scale
    big = 2.0 * n_nodes + 2.0 * float(np.max(np.abs(guess)))
    flow, potential, status, _ = _network_simplex(tail, head, cost / scale, capacity, n_nodes, guess, big,
                                                  PRICING_TOL, PIVOTS_PER_ARC * max(tail.size, 1) + 10 * n_nodes)
    if status != 0:
        return None
    return np.clip(flow, 0.0, capacity), potential[:n_nodes] * scale


def min_cost_circulation(tail: np.ndarray, head: np.ndarray, cost: np.ndarray, capacity: np.ndarray,
                         n_nodes: int, potential_guess: np.ndarray | None = None):
    """An optimal circulation and potentials (module docstring), or None when the simplex did not
    end at an optimum (its pivot budget, :data:`PIVOTS_PER_ARC` per arc, spent; or flow left on an
    artificial arc) or the data are not finite.

    Parameters
    ----------
    tail, head : int arrays of shape (T,)
        The arcs ``tail_t → head_t``, nodes ``0 … n_nodes − 1``.
    cost : array of shape (T,)
        Arc costs.
    capacity : array of shape (T,)
        Arc capacities (≥ 0).
    n_nodes : int
        Number of nodes.
    potential_guess : array of shape (n_nodes,) or None, optional
        Potentials to start from (default 0): the arcs start on the bound their reduced cost there
        picks.

    Returns
    -------
    (flow, potential) or None
        ``flow`` of shape (T,) and ``potential`` of shape (n_nodes,), with ``potential`` defined up
        to a constant on each part of the graph the arcs connect.
    """
    cost = np.asarray(cost, dtype=np.float64)
    capacity = np.asarray(capacity, dtype=np.float64)
    guess = np.zeros(n_nodes) if potential_guess is None else np.asarray(potential_guess, dtype=np.float64)
    if not (np.all(np.isfinite(cost)) and np.all(np.isfinite(capacity)) and np.all(np.isfinite(guess))):
        return None
    # the pair arrays as they are (int32 for Rank-SVM's pairs: no copy of 16 bytes a pair)
    tail, head = (np.ascontiguousarray(nodes) if np.issubdtype(np.asarray(nodes).dtype, np.integer)
                  else np.asarray(nodes, dtype=np.int64) for nodes in (tail, head))
    return _solve(tail, head, cost, capacity, n_nodes, _coarse_start(tail, head, cost, capacity, n_nodes, guess))
