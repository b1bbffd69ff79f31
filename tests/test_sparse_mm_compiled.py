"""The compiled exact 1-D searches (mlsvm.solvers.piecewise_quadratic, mlsvm.solvers.sparse_mm_compiled)
against the obviously exact sorted-breakpoint reference and against φ evaluated from scratch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsvm.formulations import sparse_mm as form
from mlsvm.solvers.piecewise_quadratic import minimize_piecewise_quadratic, minimize_with_decrease, sorted_root
from mlsvm.solvers import sparse_mm_compiled
from mlsvm.solvers.sparse_mm_compiled import smsvm_candidate_gains
from mlsvm.verification.tolerances import tolerance

EXACT = tolerance("sparse_mm", "fast")


def _phi(a, b, u, e, weight):
    return lambda s: 0.5 * a * s * s + b * s + weight * np.sum(np.maximum(0.0, u + s * e) ** 2)


def _root_round_off(a, b, u, e, weight, root):
    """How far round-off alone can move a computed root of φ' = a·t + b + 2w Σ e_i (u_i + t e_i)₊:
    γ times the magnitudes of the terms a computation sums, over the least slope of φ' at the root,
    for each of the two computations (γ = u(λ√(m + 2) + 2), λ = 5, Higham & Mary's probabilistic
    bound, as the water-filling margins). The terms are those active anywhere between 0 and the root:
    the compiled sweep adds and removes them from running sums on its way (explore draw
    --hypothesis-seed=2521: terms of 1.2e107 active at 0 and none at the root, where b = 5e99 and
    a = 1e-3, left the compiled root 3.1e-9 relative from −b/a)."""
    low, high = min(0.0, root), max(0.0, root)
    visited = (u + low * e > 0) | (u + high * e > 0)
    terms = abs(a * root) + abs(b) + 2 * weight * np.sum(np.abs(e[visited]) * (np.abs(u[visited]) + max(-low, high) * np.abs(e[visited])))
    slope = a + 2 * weight * np.sum(e[u + root * e > 0] ** 2)
    gamma = np.finfo(float).eps / 2 * (5.0 * np.sqrt(u.size + 2) + 2.0)
    return 2 * gamma * terms / slope


def _check(a, b, u, e, weight, t, decrease):
    """t is the sorted-breakpoint root and decrease is φ(0) − φ(t), evaluated from scratch. The
    roots agree to 1e-9 relative, or within their round-off where cancellation leaves the root far
    below the terms that determine it (explore draw --hypothesis-seed=2517: b = 1e100 cancelled by
    the terms active at 0 to a root of ±1.1e83, its two computations on either side of 0; and
    :func:`_root_round_off`'s draw)."""
    root = sorted_root(a, b, u, e, weight)
    assert abs(t - root) <= 1e-9 * max(1.0, abs(root)) + _root_round_off(a, b, u, e, weight, root), (t, root)
    phi = _phi(a, b, u, e, weight)
    scale = max(abs(phi(0.0)), abs(phi(t)), 0.5 * a * t * t, abs(b * t))
    assert abs(decrease - (phi(0.0) - phi(t))) <= EXACT.objective * max(1.0, scale)


# terms drawn from few values: ties between breakpoints, roots on breakpoints, zeros in u and e
_small = st.sampled_from([-3.0, -2.0, -1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 2.0, 3.0])


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5), st.integers(0, 24), st.data(), st.sampled_from([1e-6, 0.5, 1.0, 1e6]),
       st.sampled_from([1e-100, 1e-8, 1.0, 1e8, 1e100]), st.sampled_from(["mixed", "active", "inactive"]))
def test_compiled_minimiser_matches_sorted_breakpoints(count, m, data, weight, magnitude, regime):
    """minimize_with_decrease on hypothesis-drawn batches: no terms, every term active at 0 or none,
    ties, zero slopes, weights and magnitudes from 1e-100 to 1e100 (u and e scaled together, a and
    b to match): each minimiser is the sorted-breakpoint root and each decrease φ(0) − φ(t)."""
    u = np.array(data.draw(st.lists(_small, min_size=count * m, max_size=count * m)), dtype=float).reshape(count, m)
    e = np.array(data.draw(st.lists(_small, min_size=count * m, max_size=count * m)), dtype=float).reshape(count, m)
    if regime == "active":
        u = np.abs(u) + 1.0
    elif regime == "inactive":
        u = -np.abs(u) - 1.0
    a = np.array(data.draw(st.lists(st.sampled_from([1e-3, 0.5, 1.0, 7.0]), min_size=count, max_size=count)))
    b = np.array(data.draw(st.lists(_small, min_size=count, max_size=count)))
    u, e, b = u * magnitude, e, b * magnitude     # t scales with the magnitude, φ with its square
    t, decrease = minimize_with_decrease(a, b, u, e, weight)
    for row in range(count):
        _check(a[row], b[row], u[row], e[row], weight, t[row], decrease[row])
    np.testing.assert_array_equal(minimize_piecewise_quadratic(a, b, u, e, weight), t)


_FAR = np.full(20, -3e100)
_FAR[[1, 10, 14, 15]] = [1e100, 5e99, 1e100, 5e99]
_FAR_SLOPES = np.full(20, -3.0)
_FAR_SLOPES[[1, 10, 14, 15]] = [0.5, -2.0, -2.0, 3.0]


@pytest.mark.parametrize("a, b, u, e, weight", [
    (1e-3, 1e100, _FAR, _FAR_SLOPES, 0.5),                                      # --hypothesis-seed=2517
    (1e-3, 5e99, np.array([4e100, 4e100]), np.array([0.5, 1.0]), 1e6),         # --hypothesis-seed=2521
])
def test_compiled_minimiser_at_cancelling_sums(a, b, u, e, weight):
    """The explore draws where the roots differ by round-off only: the terms cancel to a root near 0,
    or the sweep's running sums lose the terms it removes on its way (1.2e107 against b = 5e99)."""
    t, decrease = minimize_with_decrease(np.array([a]), np.array([b]), u[None], e[None], weight)
    _check(a, b, u, e, weight, t[0], decrease[0])


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 5), st.integers(1, 30), st.integers(1, 6), st.booleans(), st.booleans(), st.integers(0, 10_000))
def test_compiled_smsvm_scoring_matches_the_terms_written_out(k, n, count, integer_data, prune, seed):
    """SMSVM's compiled candidate scoring (terms computed inside the loop; ``prune``: in two passes over
    lists in decreasing margin left at the step's reach, the route of many classes, here forced)
    against the terms of MarginOperator.candidate_terms (numpy) solved by the sorted-breakpoint
    reference, class by class with the candidate's earlier classes moved: the same coefficients, and
    decreases φ(0) − φ(t)."""
    rng = np.random.default_rng(seed)
    label = rng.integers(k, size=n)
    ops = form.MarginOperator("smsvm", np.eye(k)[label])
    F = rng.standard_normal((n, k))
    columns = rng.standard_normal((count, n)) * (rng.random((count, n)) < 0.8)
    K_jj = np.abs(rng.standard_normal(count)) + 0.1
    own = rng.standard_normal((count, k))
    if integer_data:
        F, columns, own = np.round(F), np.round(columns), np.round(own)
    lam = 0.7
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sparse_mm_compiled, "PRUNE_FROM", 0 if prune else k + 1)
        decrease, coef = smsvm_candidate_gains(F, ops.label, columns, K_jj, own, lam, np.eye(k), ops.weight)
    expected = np.zeros((count, k))
    for r in range(k):
        u, e = ops.candidate_terms(F, r, columns, expected)
        for c in range(count):
            a, b = lam * K_jj[c], lam * (own[c, r])
            root = sorted_root(a, b, u[c], e[c], ops.weight)
            assert abs(coef[c, r] - root) <= 1e-9 * max(1.0, abs(root))
            expected[c, r] = coef[c, r]     # the next classes see the candidate's own move
    for c in range(count):
        total = 0.0
        for r in range(k):
            before = expected[c].copy()
            before[r:] = 0.0
            u, e = ops.candidate_terms(F, r, columns[c:c + 1], before[None])
            phi = _phi(lam * K_jj[c], lam * own[c, r], u[0], e[0], ops.weight)
            total += phi(0.0) - phi(coef[c, r])
        assert abs(decrease[c] - total) <= EXACT.objective * max(1.0, abs(total))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 1e-300, 5e-324, 0.5, 1.0, 1.0, 3.0, 1e300, np.inf]), max_size=60),
       st.lists(st.floats(0.0, 1e6, allow_nan=False), max_size=60), st.integers(0, 3))
def test_radix_order_is_the_stable_order_of_the_breakpoints(few, spread, extra):
    """The radix ordering of many crossing terms' breakpoints (non-negative; −0.0 for +0.0, ties,
    subnormals, inf) is numpy's stable argsort of them; entries past ``count`` are not read."""
    from mlsvm.solvers.piecewise_quadratic import _radix_order
    breaks = np.array(few + spread, dtype=float)
    work = np.concatenate([breaks, np.arange(extra, dtype=float)[::-1]])
    np.testing.assert_array_equal(_radix_order(work, breaks.size), np.argsort(breaks + 0.0, kind="stable"))


@pytest.mark.parametrize("seed", [0, 1])
def test_minimiser_with_thousands_of_crossing_terms(seed):
    """Problems where most of 4000 terms change state before the minimiser (bibtex's first greedy
    additions: their breakpoints ordered by radix, past RADIX_FROM) against the sorted-breakpoint root
    and φ(0) − φ(t) evaluated from scratch."""
    from mlsvm.solvers.piecewise_quadratic import RADIX_FROM
    rng = np.random.default_rng(seed)
    count, m = 6, 4000
    u = rng.standard_normal((count, m)) * 0.01
    e = rng.standard_normal((count, m))
    a, b = np.full(count, 1e-3), rng.choice([-1.0, 1.0], count) * 1e4
    crossing = [np.sum((u[p] > 0) != (u[p] + e[p] * sorted_root(a[p], b[p], u[p], e[p], 0.5) > 0)) for p in range(count)]
    assert min(crossing) > RADIX_FROM
    t, decrease = minimize_with_decrease(a, b, u, e, 0.5)
    for row in range(count):
        _check(a[row], b[row], u[row], e[row], 0.5, t[row], decrease[row])
