"""Compiled loops of the sparse max-margin models (:mod:`mlsvm.solvers.sparse_mm_greedy`).

* :func:`smsvm_candidate_gains`: SMSVM's candidate scoring (Alg. 2, (3.12)); each candidate's k
  one-dimensional problems in turn, their terms written from the margins and the candidate's kernel
  column and solved exactly by :func:`mlsvm.solvers.piecewise_quadratic._exact_minimiser`.
* :func:`sm3l_line_steps` and :func:`sm3l_take_steps`: the per-label line searches and the update
  after the steps of the separable SM3L Newton loop (``sparse_mm_greedy._newton_separable``), on the
  rows of the labels still moving, read in place (no gathered copies of the k × n arrays).
* :func:`smsvm_pair_differences` and :func:`smsvm_pair_adjoint`: SMSVM's margin map T and its adjoint
  restricted to the active pairs, in the features Z (the generalized Hessian's products of the
  joint Newton step, and its gradient, without the two dense ``n × |J| × k`` products).
* :func:`factorize_classes`, :func:`solve_classes`, :func:`rank_updates` and :func:`border_factors`:
  the per-class Hessians of the Newton steps (``sparse_mm_greedy._ClassHessians``), one LAPACK or
  BLAS call per class inside one compiled loop (:mod:`mlsvm.solvers.compiled_lapack`: the matrices
  stay in place in their (k, cap, cap) buffers).
"""

from __future__ import annotations

import numpy as np

from mlsvm.solvers.compiled import compiled, dot
from mlsvm.solvers.compiled_lapack import potrf_lower, potrs_lower, syrk_lower, trsv_lower
from mlsvm.solvers.piecewise_quadratic import _active_sums, _exact_minimiser, _search_side, _sweep

__all__ = ["border_factors", "factorize_classes", "rank_updates", "sm3l_line_steps", "sm3l_take_steps",
           "smsvm_candidate_gains", "smsvm_pair_adjoint", "smsvm_pair_differences", "solve_classes"]


#: what :func:`_smsvm_class_terms` does with each term
_SUMS, _CROSSING, _ALL = 0, 1, 2


@compiled
def _smsvm_take(u, e, mode, reach, sums, listed_u, listed_e, count):
    """One term ``max(0, u + t·e)²`` of a candidate's class problem: ``_SUMS`` adds it to ``sums`` (Σ e·u,
    Σ e², Σ_{e > 0} e² over the terms active at 0, as :func:`_active_sums` sums them); ``_CROSSING``
    lists it if it changes state on [0, reach] (the test of :func:`_sweep`); ``_ALL`` lists it. Returns
    the new count of listed terms."""
    if mode == _SUMS:
        if u > 0.0:
            sums[0] += e * u
            square = e * e
            sums[1] += square
            if e > 0.0:
                sums[2] += square
        return count
    if mode == _ALL or (e != 0.0 and (u > 0.0) != (u + e * reach > 0.0)):
        listed_u[count], listed_e[count] = u, e
        return count + 1
    return count


@compiled
def _smsvm_class_terms(row_margins, margins_t, order_t, label_t, row_order, members, member_starts, column, coef, r,
                       mode, reach, theta, sums, listed_u, listed_e):
    """The terms that change when class r's score moves by ``t·column`` (the classes before r moved by
    ``coef[:r]``; ``coef[r:]`` = 0), each passed to :func:`_smsvm_take`: computed where they are read,
    never stored whole. Returns the count of listed terms.

    A term's margin is ``M + column_i·coef_q`` for a current margin M, so when every
    ``|column_i·coef_q| + |column_i|·bound`` is below ``theta``, a term with ``M ≤ −theta`` is inactive at
    0 and stays so on the whole search: the terms are visited in decreasing order of M and each list
    is left at its first ``M ≤ −theta`` (``theta = inf``: every term). Class r's points in that order
    are ``order_t[r]``, their margins in class r ``margins_t[r]`` and their classes ``label_t[r]`` (read
    in sequence); point i's margins in decreasing order are ``row_margins[i]``, their classes
    ``row_order[i]`` (read in sequence too)."""
    n, k = row_margins.shape
    count = 0
    for q in range(n):        # (i, r), y_i ≠ r: 1 + S_ir − S_iy_i
        margin = margins_t[r, q]
        if margin <= -theta:
            break
        y = label_t[r, q]
        if y != r:
            value = column[order_t[r, q]]
            count = _smsvm_take(margin - value * coef[y], value, mode, reach, sums, listed_u, listed_e, count)
    for q in range(member_starts[r], member_starts[r + 1]):   # (i, p), y_i = r, p ≠ r: 1 + S_ip − S_ir
        i = members[q]
        value = column[i]
        for position in range(k):
            margin = row_margins[i, position]
            if margin <= -theta:
                break
            p = row_order[i, position]
            if p != r:
                count = _smsvm_take(margin + value * coef[p], -value, mode, reach, sums, listed_u,
                                    listed_e, count)
    return count


@compiled
def _smsvm_write_terms(margins, margins_t, label, column, coef, r, terms_u, terms_e):
    """Every term of class r's problem (those of :func:`_smsvm_class_terms`) written to ``terms_u``,
    ``terms_e`` point by point, ``margins_t`` the plain transpose of ``margins``; returns their count."""
    n, k = margins.shape
    m = 0
    for i in range(n):
        value = column[i]
        if label[i] != r:     # (i, r): 1 + S_ir − S_iy_i
            terms_u[m], terms_e[m] = margins_t[r, i] - value * coef[label[i]], value
            m += 1
        else:                 # (i, p), p ≠ r: 1 + S_ip − S_ir
            for p in range(k):
                if p != r:
                    terms_u[m], terms_e[m] = margins[i, p] + value * coef[p], -value
                    m += 1
    return m


#: the widening of the pruning threshold of :func:`_smsvm_class_terms` against the rounding of
#: ``M + column_i·coef_q`` (two operations, each within 1.2e-16 relative)
_THETA_WIDENING = 1.0 + 1e-6


@compiled
def _smsvm_gains(margins, margins_t, label, order_t, label_t, row_order, members, member_starts, columns, K_jj,
                 own_scores, curvature, lam, R_inv, weight, prune, coef, decrease):
    """The loop of :func:`smsvm_candidate_gains` (``own_scores`` updated, ``coef`` and ``decrease``
    written), with the margins, orders and class members that :func:`_smsvm_class_terms` reads (with
    ``prune``, ``margins`` sorted in each row as ``row_order``; without, the plain margins and
    ``margins_t`` their transpose).

    Each problem is :func:`mlsvm.solvers.piecewise_quadratic._exact_minimiser` on its terms. With
    ``prune``, in two passes over the terms that can matter: the sums of the active ones at 0 give the
    side and the bound of the step (:func:`_search_side`), then the terms that change state within the
    bound are listed and swept (:func:`_sweep`). Without, every term is written once and searched."""
    n, k = margins.shape
    size = n * max(k - 1, 1)
    ones, everything = np.ones(size), np.arange(size)
    terms_u, terms_e = np.empty(size), np.empty(size)
    listed_u, listed_e, breaks = np.empty(size), np.empty(size), np.empty(size)
    sums = np.zeros(3)
    for c in range(columns.shape[0]):
        column = columns[c]
        column_max = np.max(np.abs(column)) if n else 0.0
        moved = 0.0           # max |coef[c, q]| over the classes moved so far
        for r in range(k):
            b = 0.0
            for q in range(k):        # λ (F_j R⁻¹)_r at the candidate's own row as it moves
                b += own_scores[c, q] * R_inv[r, q]
            a, b = curvature[r] * K_jj[c], lam * b
            if not prune:
                count = _smsvm_write_terms(margins, margins_t, label, column, coef[c], r, terms_u, terms_e)
                eu, ee, rising = _active_sums(terms_u[:count], terms_e[:count], ones[:count])
                t, gain = _exact_minimiser(a, b, terms_u[:count], terms_e[:count], ones[:count], weight, eu, ee, rising,
                                           everything, listed_u, listed_e, breaks)
            else:
                t, gain = _pruned_minimiser(margins, margins_t, order_t, label_t, row_order, members, member_starts,
                                            column, coef[c], r, a, b, weight, column_max * _THETA_WIDENING, moved,
                                            sums, terms_u, terms_e, ones, everything, listed_u, listed_e, breaks)
            coef[c, r] = t
            decrease[c] += gain
            own_scores[c, r] += t * K_jj[c]
            moved = max(moved, abs(t))


@compiled
def _pruned_minimiser(row_margins, margins_t, order_t, label_t, row_order, members, member_starts, column, coef, r, a,
                      b, weight, reach_scale, moved, sums, terms_u, terms_e, ones, everything, listed_u, listed_e,
                      breaks):
    """:func:`mlsvm.solvers.piecewise_quadratic._exact_minimiser` on class r's terms in two pruned passes
    (:func:`_smsvm_class_terms`; ``reach_scale`` = max |column|, widened): ``(t, decrease)``."""
    sums[:] = 0.0
    _smsvm_class_terms(row_margins, margins_t, order_t, label_t, row_order, members, member_starts, column, coef, r,
                       _SUMS, 0.0, reach_scale * moved, sums, terms_u, terms_e)
    eu, ee, rising = sums[0], sums[1], sums[2]
    slope0, sigma, bound = _search_side(a, b, weight, eu, ee, rising)
    if slope0 == 0.0:
        return 0.0, 0.0
    theta = reach_scale * (moved + bound)
    if not theta < np.inf:    # an infinite (or nan) bound: every term
        theta = np.inf
    count = _smsvm_class_terms(row_margins, margins_t, order_t, label_t, row_order, members, member_starts, column,
                               coef, r, _CROSSING, sigma * bound, theta, sums, terms_u, terms_e)
    s, gain = _sweep(a, b, terms_u, terms_e, ones, everything, count, sigma, bound, eu, ee, weight, listed_u, listed_e,
                     breaks)
    if s >= bound and bound < np.inf:   # round-off: every term that can change state listed
        count = _smsvm_class_terms(row_margins, margins_t, order_t, label_t, row_order, members, member_starts, column,
                                   coef, r, _ALL, 0.0, np.inf, sums, terms_u, terms_e)
        s, gain = _sweep(a, b, terms_u, terms_e, ones, everything, count, sigma, np.inf, eu, ee, weight, listed_u,
                         listed_e, breaks)
    return sigma * s, gain


#: from this many classes on, SMSVM's candidate scoring reads each class's terms in decreasing margin in
#: two passes left at the reach of the step (:func:`_pruned_minimiser`); below, it writes every term once:
#: with few classes the orders and the second pass cost more than they skip (docs/sparse_mm.md)
PRUNE_FROM = 32


def smsvm_candidate_gains(F, label, columns, K_jj, own_scores, lam, R_inv, weight):
    """SMSVM's (3.12) for every candidate: ``(decrease of e_J, α_{j,·})``, shapes (κ,) and (κ, k).

    Parameters
    ----------
    F : array of shape (n, k)
        Current training scores.
    label : array of int, shape (n,)
        The true classes y_i.
    columns : array of shape (κ, n)
        The candidates' kernel columns.
    K_jj : array of shape (κ,)
        The candidates' kernel diagonal.
    own_scores : array of shape (κ, k)
        The candidates' own rows of F.
    lam : float
        Regularisation weight λ.
    R_inv : array of shape (k, k)
        ``R⁻¹``.
    weight : float
        The loss weight c.
    """
    n, k = F.shape
    margins = 1.0 + F - F[np.arange(n), label][:, None]
    count = columns.shape[0]
    coef, decrease = np.zeros((count, k)), np.zeros(count)
    label = np.ascontiguousarray(label, dtype=np.int64)
    margins_t = np.ascontiguousarray(margins.T)
    prune = k >= PRUNE_FROM
    # read by the pruned route only: the points grouped by class; each class's points in decreasing
    # margin, with their margins and classes in that order; each point's classes in decreasing margin,
    # with their margins in that order (in place of the plain margins)
    order_t = label_t = row_order = np.zeros((0, 0), dtype=np.int64)
    members, member_starts = np.zeros(0, dtype=np.int64), np.zeros(k + 1, dtype=np.int64)
    if prune:
        members = np.argsort(label, kind="stable")
        member_starts = np.searchsorted(label[members], np.arange(k + 1))
        order_t = np.argsort(-margins_t, axis=1)
        margins_t, label_t = np.take_along_axis(margins_t, order_t, axis=1), label[order_t]
        row_order = np.argsort(-margins, axis=1)
        margins = np.take_along_axis(margins, row_order, axis=1)
    _smsvm_gains(margins, margins_t, label, order_t, label_t, row_order, members, member_starts,
                 np.ascontiguousarray(columns, dtype=np.float64),
                 np.ascontiguousarray(K_jj, dtype=np.float64), np.array(own_scores, dtype=np.float64),
                 lam * np.diag(R_inv), float(lam), np.ascontiguousarray(R_inv, dtype=np.float64), float(weight), prune,
                 coef, decrease)
    return decrease, coef


# SMSVM's active pairs (i, c), c ≠ y_i, are listed by point: those of point i are
# ``classes[starts[i]:starts[i + 1]]``; Z is C-ordered (n, d), its row i the features of point i.


@compiled
def smsvm_pair_differences(Z, D_t, starts, classes, label, values):
    """``values[m]`` ← ``(Z D)_ic − (Z D)_iy_i`` for each listed pair m = (i, c): T(ZD) on the pairs,
    one dot product of length d per pair.

    Parameters
    ----------
    Z : array of shape (n, d), C-ordered
        The features.
    D_t : array of shape (k, d), C-ordered
        The direction, transposed.
    starts : array of int, shape (n + 1,)
        Where each point's pairs start in ``classes``.
    classes : array of int
        The pairs' classes c, grouped by point.
    label : array of int, shape (n,)
        The true classes y_i.
    values : array of shape (len(classes),)
        Written.
    """
    for i in range(Z.shape[0]):
        if starts[i] == starts[i + 1]:
            continue
        own = dot(Z[i], D_t[label[i]])
        for m in range(starts[i], starts[i + 1]):
            values[m] = dot(Z[i], D_t[classes[m]]) - own


@compiled
def smsvm_pair_adjoint(Z, starts, classes, label, values, out_t):
    """``out_t`` ← ``(Zᵀ Tᵀ(V))ᵀ`` for V equal to ``values`` on the listed pairs and 0 elsewhere: each pair
    (i, c) adds ``v·z_i`` to class c and subtracts it from y_i.

    Parameters
    ----------
    Z, starts, classes, label : arrays
        The features and the listed pairs, as in :func:`smsvm_pair_differences`.
    values : array of shape (len(classes),)
        V on the pairs.
    out_t : array of shape (k, d), C-ordered
        Written.
    """
    d = Z.shape[1]
    out_t[:] = 0.0
    for i in range(Z.shape[0]):
        if starts[i] == starts[i + 1]:
            continue
        total = 0.0
        for m in range(starts[i], starts[i + 1]):
            value, row = values[m], out_t[classes[m]]
            total += value
            for q in range(d):
                row[q] += value * Z[i, q]
        row = out_t[label[i]]
        for q in range(d):
            row[q] -= total * Z[i, q]


@compiled
def _sm3l_line_steps(A, B, margin_t, negated_t, change_t, labels, weight, t):
    """The loop of :func:`sm3l_line_steps` (``t`` written)."""
    n = margin_t.shape[1]
    everything = np.arange(n)
    listed_u, listed_e, breaks = np.empty(n), np.empty(n), np.empty(n)
    for m in range(labels.size):
        r = labels[m]   # the slopes negated_t[r]·change_t[m], read in place
        eu, ee, rising = _active_sums(margin_t[r], negated_t[r], change_t[m])
        t[m], _ = _exact_minimiser(A[m], B[m], margin_t[r], negated_t[r], change_t[m], weight, eu, ee, rising,
                                   everything, listed_u, listed_e, breaks)


def sm3l_line_steps(A, B, margin_t, negated_t, change_t, labels, weight):
    """The exact step lengths of the moving labels' Newton directions: problem m is
    ``½ A_m t² + B_m t + weight Σ_i max(0, margin_t[r, i] + t·negated_t[r, i]·change_t[m, i])²``,
    ``r = labels[m]`` (:func:`mlsvm.solvers.piecewise_quadratic.minimize_with_decrease` on these terms).

    Parameters
    ----------
    A, B : arrays of shape (m,)
        Curvatures (> 0) and slopes of the quadratic parts.
    margin_t : array of shape (k, n)
        ``(1 + T(F))ᵀ``, all labels.
    negated_t : array of shape (k, n)
        ``−Ysᵀ``.
    change_t : array of shape (m, n)
        ``(Z D)ᵀ`` of the moving labels' directions.
    labels : array of int, shape (m,)
        The moving labels.
    weight : float
        The loss weight c.
    """
    t = np.zeros(labels.size)
    _sm3l_line_steps(np.ascontiguousarray(A, dtype=np.float64), np.ascontiguousarray(B, dtype=np.float64),
                     margin_t, negated_t, change_t, np.ascontiguousarray(labels, dtype=np.int64), float(weight), t)
    return t


@compiled
def _sm3l_take_steps(F_t, change_t, t, negated_t, labels, margin_t, weighted, xi_sums, xi_squares,
                     pair_label, pair_point):
    """The loop of :func:`sm3l_take_steps`; returns the number of pairs written."""
    n = F_t.shape[1]
    count = 0
    for m in range(labels.size):
        r = labels[m]
        total, squares = 0.0, 0.0
        for i in range(n):
            f = F_t[r, i] + t[m] * change_t[m, i]
            F_t[r, i] = f
            margin = 1.0 + negated_t[r, i] * f
            if (margin > 0.0) != (margin_t[r, i] > 0.0):
                pair_label[count], pair_point[count] = m, i
                count += 1
            margin_t[r, i] = margin
            xi = max(margin, 0.0)
            weighted[m, i] = negated_t[r, i] * xi
            total += xi
            squares += xi * xi
        xi_sums[r], xi_squares[r] = total, squares
    return count


def sm3l_take_steps(F_t, change_t, t, negated_t, labels, margin_t, xi_sums, xi_squares):
    """Move the labels ``labels`` by their steps, in place: ``F_t[r] += t_m·change_t[m]``, then their rows
    of the margins ``margin_t = 1 + negated_t∘F_t`` and the per-label ``Σξ``, ``Σξ²`` of the slacks
    ``ξ = max(0, margin)``. Returns ``(weighted, moved_label, moved_point)``: ``negated_t∘ξ`` on the
    moved rows (m × n, for ``ZᵀTᵀ(ξ)``) and the pairs (m, i) whose margin changed sign (active set),
    grouped by m.

    Parameters
    ----------
    F_t : array of shape (k, n)
        The scores, transposed.
    change_t : array of shape (m, n)
        ``(Z D)ᵀ`` of the moving labels' directions.
    t : array of shape (m,)
        Their step lengths.
    negated_t : array of shape (k, n)
        ``−Ysᵀ``.
    labels : array of int, shape (m,)
        The moving labels.
    margin_t : array of shape (k, n)
        The margins, updated on the moved rows.
    xi_sums, xi_squares : arrays of shape (k,)
        Per-label ``Σ_i ξ_ir`` and ``Σ_i ξ_ir²``, updated on the moved labels.
    """
    size = labels.size * F_t.shape[1]
    weighted = np.empty((labels.size, F_t.shape[1]))
    pair_label, pair_point = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64)
    count = _sm3l_take_steps(F_t, change_t, np.ascontiguousarray(t, dtype=np.float64), negated_t,
                             np.ascontiguousarray(labels, dtype=np.int64), margin_t, weighted, xi_sums,
                             xi_squares, pair_label, pair_point)
    return weighted, pair_label[:count], pair_point[:count]


# The per-class matrices below are stacks of (k, cap, cap) buffers, matrix r read from ``buffer[r]`` in
# Fortran order (:mod:`mlsvm.solvers.compiled_lapack`): its entry (i, j) is ``buffer[r, j, i]``; n is
# the order of the matrices (the basis size), only their lower triangles are read.


@compiled
def factorize_classes(grams, factors, shift, classes, n):
    """``factors[r]`` ← the Cholesky factor of ``grams[r] + shift[r]·I`` for every r in ``classes``.
    Returns the first class whose matrix is not positive definite, or −1.

    Parameters
    ----------
    grams, factors : arrays of shape (k, cap, cap)
        The matrices' Gram parts (lower triangles read) and their factors (written).
    shift : array of shape (k,)
        The diagonal added to each class's Gram part.
    classes : array of int
        The classes to factorise.
    n : int
        The order of the matrices.
    """
    for r in classes:
        gram, factor = grams[r], factors[r]
        for j in range(n):
            for i in range(j, n):
                factor[j, i] = gram[j, i]
            factor[j, j] += shift[r]
        if potrf_lower(factor, n) != 0:
            return r
    return -1


@compiled
def solve_classes(factors, classes, n, rhs):
    """``rhs[m]`` ← ``H_r⁻¹ rhs[m]``, ``r = classes[m]``, with the factors of :func:`factorize_classes`.

    Parameters
    ----------
    factors : array of shape (k, cap, cap)
        The classes' Cholesky factors.
    classes : array of int, shape (m,)
        The class of each right-hand side.
    n : int
        The order of the matrices.
    rhs : array of shape (m, n) or (m, p, n), C-ordered
        One right-hand side per class, or p of them (one per row); overwritten by the solutions.
    """
    for m in range(classes.size):
        potrs_lower(factors[classes[m]], n, rhs[m])


@compiled
def rank_updates(grams, rows, groups, starts, ends, alphas, n):
    """``grams[groups[g]] += alphas[g]·R_gᵀ R_g`` with ``R_g = rows[starts[g]:ends[g]]``, on the lower
    triangles.

    Parameters
    ----------
    grams : array of shape (k, cap, cap)
        The classes' Gram parts.
    rows : array of shape (P, n), C-ordered
        The rows of all updates, grouped.
    groups, starts, ends : arrays of int
        Each group's class and its rows' range.
    alphas : array of shape (len(groups),)
        Each group's weight.
    n : int
        The order of the matrices.
    """
    for g in range(groups.size):
        syrk_lower(alphas[g], rows[starts[g]:ends[g]], grams[groups[g]], n)


@compiled
def border_factors(factors, valid, border, corner, shift, n):
    """Grow the factor of every valid class r by the border row of its matrix: the new row ``(bᵀ, c)``
    (``b = border[r]``, ``c = corner[r] + shift[r]``) gives ``l = L⁻¹ b`` and the pivot ``√(c − lᵀl)``;
    a class whose pivot is not positive is marked invalid (to be factorised again).

    Parameters
    ----------
    factors : array of shape (k, cap, cap)
        The classes' factors of order n, grown to order n + 1 in place.
    valid : array of bool, shape (k,)
        Whether a class's factor is current (updated).
    border : array of shape (k, n), C-ordered
        Each class's new row left of the diagonal.
    corner : array of shape (k,)
        Each class's new diagonal entry of the Gram part.
    shift : array of shape (k,)
        The diagonal added to the Gram parts.
    n : int
        The order before the growth.
    """
    line = np.empty(n)
    for r in range(valid.size):
        if not valid[r]:
            continue
        factor = factors[r]
        line[:] = border[r]
        trsv_lower(factor, n, line)
        pivot = shift[r] + corner[r] - np.dot(line, line) if n else shift[r] + corner[r]
        factor[:n, n] = line
        factor[n, n] = np.sqrt(max(pivot, 0.0))
        valid[r] = pivot > 0
