"""SMSVM / SM3L: derived dual, Newton on a fixed basis vs CVXPY, greedy selection properties,
equivalences with binary squared-hinge SVMs (LIBLINEAR and the foundation's CVXPY), bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from mlsvm import SM3L, SMSVM
from mlsvm.datasets import make_multiclass, make_multilabel
from mlsvm.report import build_report
from mlsvm.formulations import binary_svm as bsvm
from mlsvm.formulations import sparse_mm as form
from mlsvm.kernels import make_kernel
from mlsvm.solvers.sparse_mm_greedy import candidate_gains, greedy_sparse
from mlsvm.solvers.piecewise_quadratic import (minimize_outer_terms, minimize_piecewise_quadratic, minimize_with_decrease,
                                               sorted_root)
from mlsvm.solvers.cvxpy_tools import CROSSCHECK_BACKEND, solve
from mlsvm.report import relative_difference
from mlsvm.formulations.evaluation import inf_norm
from mlsvm.verification.tolerances import BACKEND_AGREEMENT, tolerance

EXACT = tolerance("sparse_mm", "fast")
LIBLINEAR = tolerance("binary_svm", "liblinear")


def _gram(X, kernel="rbf"):
    return make_kernel(kernel, "scale", X=X)(X)


def _primal(problem, backend="CLARABEL"):
    return solve(form.cvxpy_primal(problem)[0], backend)


def _dual(problem, backend=("CLARABEL", "OSQP")):
    cvx, variables = form.cvxpy_dual(problem)
    return -solve(cvx, backend), variables["mu"].value


def fit_report(problem, result, tol=1e-10):
    """The FitReport of a greedy_sparse result, graded by the formulation (as the estimator does)."""
    evaluation = form.evaluate(problem, result.primal, result.dual)
    return build_report(evaluation, result, tol, solver=result.solver)


def _prior(k, seed=5):
    P = np.eye(k) + 0.4 * np.random.default_rng(seed).standard_normal((k, k))
    return P, P.T @ P


@st.composite
def problems(draw, model=None):
    """Small SMSVM/SM3L problems with awkward structure: empty/full labels, rows with all or no
    labels, q = 1 or 2, duplicated points, a random basis (or all points), an optional prior."""
    model = draw(st.sampled_from(form.MODELS)) if model is None else model
    n = draw(st.integers(6, 14))
    k = draw(st.integers(1 if model == "sm3l" else 2, 3))
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    if draw(st.booleans()):
        X[1] = X[0]  # duplicated point
    if model == "smsvm":
        y = rng.integers(0, k, n)
        y[:k] = np.arange(k)
        Y = np.eye(k, dtype=np.int8)[y]
    else:
        Y = (rng.random((n, k)) < 0.4).astype(np.int8)
        structure = draw(st.sampled_from(["none", "empty-label", "full-label", "rows"]))
        if structure == "empty-label":
            Y[:, 0] = 0
        elif structure == "full-label":
            Y[:, -1] = 1
        elif structure == "rows":
            Y[0], Y[-1] = 1, 0
    kernel = draw(st.sampled_from(["linear", "rbf"]))
    lam = draw(st.sampled_from([0.05, 0.5, 3.0]))
    basis = None if draw(st.booleans()) else np.sort(rng.choice(n, draw(st.integers(1, n)), replace=False))
    R = _prior(k, seed)[1] if model == "sm3l" and draw(st.booleans()) else None
    return form.SparseMMProblem(_gram(X, kernel), Y, lam, model, basis, R)


# ---- formulation: the derived dual ---------------------------------------------------------------

@settings(max_examples=15)
@given(problems())
def test_derived_dual_equals_primal_on_two_backends(problem):
    primal = _primal(problem)
    dual, mu = _dual(problem)
    assert relative_difference(primal, dual) <= BACKEND_AGREEMENT
    assert relative_difference(primal, _primal(problem, CROSSCHECK_BACKEND)) <= BACKEND_AGREEMENT
    # the dual → primal map gives a primal point with that objective, and the KKT conditions hold
    A = form.coef_from_dual(problem, mu)
    assert relative_difference(form.primal_objective(problem, A), primal) <= EXACT.objective
    assert relative_difference(form.dual_objective(problem, mu), dual) <= EXACT.objective


def test_smsvm_class_weights_sum_to_zero():
    """KKT property of the SMSVM dual: the rows of H = Tᵀ(μ) sum to 0, so Σ_r w_r = 0."""
    X, y = make_multiclass(40, 3, 4, random_state=2)
    est = SMSVM(0.3, d_max=12, kernel="rbf", random_state=0).fit(X, y)
    total = est.coef_.sum(axis=1)
    assert inf_norm(total) / (1 + inf_norm(est.coef_)) <= EXACT.kkt


def test_prior_P_equals_R_and_dual_needs_only_R():
    data = make_multilabel(30, 4, 3, random_state=4)
    P, R = _prior(3)
    by_P = SM3L(0.5, d_max=10, P=P, random_state=1).fit(data.X, data.Y)
    by_R = SM3L(0.5, d_max=10, R=R, random_state=1).fit(data.X, data.Y)
    np.testing.assert_array_equal(by_P.basis_indices_, by_R.basis_indices_)
    assert relative_difference(by_P.fit_report_.primal_objective, by_R.fit_report_.primal_objective) <= EXACT.objective


# ---- Newton on a fixed basis ----------------------------------------------------------------------

@settings(max_examples=15)
@given(problems(), st.booleans())
def test_newton_on_fixed_basis_equals_cvxpy_and_the_dual(problem, joint):
    result = greedy_sparse(problem.gram, problem.margins, problem.lam, problem.R, basis=problem.basis,
                           joint=joint, tol=1e-10, max_iter=5000)
    report = fit_report(problem, result)
    truth = _primal(problem)  # the full requested basis: dependent points left out change nothing
    assert result.converged and report.converged
    assert relative_difference(report.primal_objective, truth) <= EXACT.objective
    assert relative_difference(report.dual_objective, _dual(problem)[0]) <= EXACT.objective
    assert report.relative_gap <= EXACT.gap and report.max_kkt <= EXACT.kkt


def test_all_points_equals_full_model_through_the_greedy_path():
    """|J| grown greedily to n (κ = n) gives the full model's optimum (CVXPY, J = all)."""
    data = make_multilabel(25, 3, 3, random_state=7)
    est = SM3L(0.4, d_max=25, kappa=25, min_rel_decrease=0.0, random_state=0).fit(data.X, data.Y)
    full = SM3L(0.4, solver="cvxpy").fit(data.X, data.Y)
    assert est.n_basis_ == 25
    assert relative_difference(est.fit_report_.primal_objective, full.fit_report_.primal_objective) <= EXACT.objective
    np.testing.assert_allclose(est.decision_function(data.X), full.decision_function(data.X),
                               atol=np.sqrt(EXACT.objective) * max(1.0, np.abs(full.decision_function(data.X)).max()))


# ---- greedy selection ---------------------------------------------------------------------------

def test_sm3l_greedy_run_carries_the_newton_state_across_additions(monkeypatch):
    """SM3L's separable Newton loop starts each basis from the state the previous solve left and the
    addition grew (α_j = 0: one new coupling column): at every start it equals the state computed
    afresh from the scores and the features, and the Hessians' curvature is that of its margins."""
    import mlsvm.solvers.sparse_mm_greedy as greedy

    data = make_multilabel(60, 5, 4, random_state=2)
    gram = _gram(data.X)
    ops = form.MarginOperator("sm3l", data.Y)
    loop, carried = greedy._newton_separable, []

    def checked(Z, ops, lam, R, R_inv, C, F, tol, max_iter, hessians, history, factor, on_iterate, scores=None):
        if scores is not None and scores.describes(F):
            fresh = greedy._LabelScores()
            fresh.start(ops, F, Z)
            assert np.array_equal(scores.margin_t, fresh.margin_t)
            np.testing.assert_allclose(scores.xi_squares, fresh.xi_squares, rtol=1e-12)
            np.testing.assert_allclose(scores.coupling_t, fresh.coupling_t, rtol=1e-12, atol=1e-12)
            assert np.array_equal(hessians.omega, 2 * ops.weight * (fresh.margin_t > 0).T)
            assert np.allclose(Z @ C, F, rtol=1e-12, atol=1e-12)
            carried.append(Z.shape[1])
        return loop(Z, ops, lam, R, R_inv, C, F, tol, max_iter, hessians, history, factor, on_iterate, scores)

    monkeypatch.setattr(greedy, "_newton_separable", checked)
    result = greedy_sparse(gram, ops, 0.3, d_max=12, kappa=5, tol=1e-10, min_rel_decrease=0.0, random_state=0)
    assert result.converged and carried == list(range(2, 13))
    on_basis = form.SparseMMProblem(gram, data.Y, 0.3, "sm3l", result.primal["basis"])
    assert relative_difference(result.history["objective_path"][-1], _primal(on_basis)) <= EXACT.objective


@settings(max_examples=10)
@given(problems(), st.integers(0, 100))
def test_objective_never_increases_as_J_grows(problem, seed):
    result = greedy_sparse(problem.gram, problem.margins, problem.lam, problem.R, d_max=problem.gram.shape[0],
                           kappa=3, min_rel_decrease=0.0, random_state=seed)
    path = np.asarray(result.history["objective_path"])
    assert np.all(np.diff(path) <= EXACT.objective * np.maximum(1.0, np.abs(path[:-1])))
    # and each value is the optimum on its basis: the last one checked against CVXPY
    on_basis = form.SparseMMProblem(problem.gram, problem.Y, problem.lam, problem.model, result.primal["basis"], problem.R)
    assert relative_difference(path[-1], _primal(on_basis)) <= EXACT.objective


@settings(max_examples=10)
@given(problems(), st.integers(0, 100))
def test_candidate_gain_is_the_true_decrease(problem, seed):
    """(3.12) solved exactly: the predicted decrease equals e_J − e_Ĵ evaluated from scratch, and
    no coefficient on a grid around the chosen one does better (each 1-D problem is minimised)."""
    rng = np.random.default_rng(seed)
    n, k = problem.Y.shape
    J = rng.choice(n, size=max(1, n // 3), replace=False)
    A = rng.standard_normal((J.size, k))
    on_J = form.SparseMMProblem(problem.gram, problem.Y, problem.lam, problem.model, J, problem.R)
    candidates = np.setdiff1d(np.arange(n), J)[:4]
    decrease, coef = candidate_gains(problem.gram, candidates, problem.margins, problem.gram[:, J] @ A,
                                     problem.lam, np.linalg.inv(problem.R))
    base = form.primal_objective(on_J, A)
    for j, gain, a in zip(candidates, decrease, coef):
        grown = form.SparseMMProblem(problem.gram, problem.Y, problem.lam, problem.model, np.append(J, j), problem.R)
        value = lambda c: form.primal_objective(grown, np.vstack([A, c]))
        assert relative_difference(base - value(a), gain) <= EXACT.objective * max(1.0, base) / max(1.0, abs(gain))
        assert gain >= 0
        for r in range(k):
            for delta in (-1e-3, 1e-3):
                moved = a.copy()
                moved[r] += delta
                # the last coordinate is exactly minimised with the others fixed
                if r == k - 1:
                    assert value(moved) >= value(a) - EXACT.objective * max(1.0, value(a))


@settings(max_examples=50)
@given(st.integers(0, 40), st.floats(1e-4, 1e2), st.floats(-10, 10), st.sampled_from([0.5, 1.0]), st.integers(0, 10_000))
def test_exact_line_search_matches_sorted_breakpoints_and_is_a_minimum(m, a, b, weight, seed):
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(m) * 3
    e = rng.standard_normal(m) * (rng.random(m) < 0.8)
    t = minimize_piecewise_quadratic(a, b, u, e, weight)
    assert relative_difference(t, sorted_root(a, b, u, e, weight)) <= EXACT.objective
    phi = lambda s: 0.5 * a * s * s + b * s + weight * np.sum(np.maximum(0.0, u + s * e) ** 2)
    grid = t + np.linspace(-1, 1, 41) * max(1.0, abs(t))
    assert min(phi(s) for s in grid) >= phi(t) - EXACT.objective * max(1.0, abs(phi(t)))


@settings(max_examples=40)
@given(st.integers(1, 6), st.integers(0, 40), st.floats(1e-4, 1e2), st.floats(0.0, 10.0), st.sampled_from([0.5, 1.0]),
       st.booleans(), st.booleans(), st.integers(0, 10_000))
def test_batched_minimiser_with_decrease_matches_sorted_breakpoints_and_a_grid(count, m, a, b_scale, weight, shared_u,
                                                                               integer_data, seed):
    """minimize_with_decrease (the candidate scoring's solver, which folds the terms that keep their
    state on [0, S] and sorts the breakpoints of the others, or runs Newton on all terms when many
    cross: both routes forced here) against the sorted-breakpoint root and a direct evaluation of φ:
    same minimiser, decrease φ(0) − φ(t) as evaluated from scratch, and no point of a grid around t
    lower. Integer data put roots and breakpoints on each other and zeros in u and e."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(m if shared_u else (count, m)) * 3
    e = rng.standard_normal((count, m)) * (rng.random((count, m)) < 0.8)
    if integer_data:
        u, e = np.round(u), np.round(e)
    a_rows = a * rng.uniform(0.5, 2.0, count)
    b_rows = b_scale * rng.standard_normal(count)
    _check_minimiser_with_decrease(a_rows, b_rows, u, e, weight)


def test_a_newton_step_below_one_ulp_against_a_half_open_bracket(monkeypatch):
    """Found by drawing the property above by hand (20,000 draws; this is the first that failed):
    a = 1e-4, no active term at t = 0, so the bracket stays open above while Newton closes in from
    below; its last change was under one ulp of t, the step fell on the bracket's finite end and
    the bisection's "middle" of [lo, ∞) was ∞: t = ∞, u + t·e gave inf · 0 (a RuntimeWarning from
    numpy) and the row ran its 60 steps before the sorted-breakpoint fallback. The root is the
    next float: no warning, no fallback, the same roots."""
    import mlsvm.solvers.piecewise_quadratic as pq

    rng = np.random.default_rng(7483)
    u = np.round(rng.standard_normal(36) * 3)
    e = np.round(rng.standard_normal((2, 36)) * (rng.random((2, 36)) < 0.8))
    a, b = 1e-4 * rng.uniform(0.5, 2.0, 2), 9.58413631777952 * rng.standard_normal(2)
    reference = [sorted_root(a[row], b[row], u, e[row], 1.0) for row in range(2)]
    monkeypatch.setattr(pq, "sorted_root", lambda *args: pytest.fail("fell back to the sorted breakpoints"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        roots = minimize_piecewise_quadratic(a, b, u, e, 1.0)
    np.testing.assert_allclose(roots, reference, rtol=1e-15)


def _check_minimiser_with_decrease(a_rows, b_rows, u, e, weight):
    t, decrease = minimize_with_decrease(a_rows, b_rows, u, e, weight)
    count = len(a_rows)
    reference = minimize_piecewise_quadratic(a_rows, b_rows, u, e, weight)
    U = np.broadcast_to(u, e.shape)
    for row in range(count):
        phi = lambda s: 0.5 * a_rows[row] * s * s + b_rows[row] * s + weight * np.sum(np.maximum(0.0, U[row] + s * e[row]) ** 2)
        root = sorted_root(a_rows[row], b_rows[row], U[row], e[row], weight)
        assert abs(t[row] - root) <= 1e-9 * max(1.0, abs(root))
        assert abs(t[row] - reference[row]) <= 1e-9 * max(1.0, abs(root))
        assert abs(decrease[row] - (phi(0.0) - phi(t[row]))) <= EXACT.objective * max(1.0, phi(0.0))
        grid = t[row] + np.linspace(-1, 1, 41) * max(1.0, abs(t[row]))
        assert min(phi(s) for s in grid) >= phi(t[row]) - EXACT.objective * max(1.0, abs(phi(t[row])))


@settings(max_examples=40)
@given(st.integers(0, 5), st.integers(1, 4), st.integers(0, 30), st.sampled_from([0.5, 1.0]), st.booleans(),
       st.integers(0, 10_000))
def test_outer_term_minimiser_matches_sorted_breakpoints_and_a_grid(count, k, n, weight, integer_data, seed):
    """minimize_outer_terms (SM3L's scoring with R = I: slopes columns_ci · scale_ir, offsets u shared by
    the candidates, sums as matrix products, the terms read without the term arrays) against the sorted-breakpoint root of each
    problem's terms written out and φ evaluated from scratch: same minimiser, decrease φ(0) − φ(t),
    no point of a grid lower. Integer data put breakpoints on the bound, roots on breakpoints and
    zeros in u; columns of both signs and zeros; a = 0 with zero slopes."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal((n, k)) * 2
    scale = rng.choice([-1.0, 1.0, 0.5], (n, k)) * (rng.random((n, k)) < 0.9)
    columns = rng.standard_normal((count, n)) * (rng.random((count, n)) < 0.8)
    a, b = rng.uniform(0.1, 5.0, (count, k)), rng.standard_normal((count, k)) * 3
    if integer_data:
        u, columns, b = np.round(u), np.round(columns), np.round(b)
    if count and n:
        columns[0] = 0.0
        a[0, 0], b[0, 0] = 0.0, 0.0 if integer_data else b[0, 0]   # a = 0 with all slopes 0
    t, decrease = minimize_outer_terms(a, b, u, scale, columns, weight)
    assert t.shape == decrease.shape == (count, k)
    for c in range(count):
        for r in range(k):
            e = columns[c] * scale[:, r]
            phi = lambda s: 0.5 * a[c, r] * s * s + b[c, r] * s + weight * np.sum(np.maximum(0.0, u[:, r] + s * e) ** 2)
            if a[c, r] == 0:   # zero slopes: φ linear in t; only t = 0 is defined (b = 0)
                assert t[c, r] == 0.0 and decrease[c, r] == 0.0
                continue
            root = sorted_root(a[c, r], b[c, r], u[:, r], e, weight)
            assert abs(t[c, r] - root) <= 1e-9 * max(1.0, abs(root))
            assert abs(decrease[c, r] - (phi(0.0) - phi(t[c, r]))) <= EXACT.objective * max(1.0, phi(0.0))
            grid = t[c, r] + np.linspace(-1, 1, 41) * max(1.0, abs(t[c, r]))
            assert min(phi(s) for s in grid) >= phi(t[c, r]) - EXACT.objective * max(1.0, abs(phi(t[c, r])))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_outer_term_minimiser_reading_only_the_small_offsets(seed):
    """The later greedy additions' regime of minimize_outer_terms: most offsets |u| far from 0, so each
    problem reads only its points with |u| ≤ max|column|·max|scale|·S (S: the sweep's bound), a list
    shrunk candidate by candidate; some points sit just inside and outside that cut. Against the
    sorted-breakpoint root of the written-out terms and φ(0) − φ(t) evaluated from scratch."""
    rng = np.random.default_rng(seed)
    count, n, k, weight = 25, 3000, 5, 1.0
    columns = rng.standard_normal((count, n)) * (rng.random((count, n)) < 0.9)
    scale = rng.choice([-1.0, 1.0], (n, k))
    u = rng.choice([-1.0, 1.0], (n, k)) * rng.uniform(0.5, 3.0, (n, k))
    near = rng.random((n, k)) < 0.05                        # a few points near the hinge
    u[near] = rng.standard_normal(near.sum()) * 1e-3
    a, b = rng.uniform(500.0, 5000.0, (count, k)), rng.standard_normal((count, k)) * 5
    t, decrease = minimize_outer_terms(a, b, u, scale, columns, weight)
    read = []
    for c in range(count):
        for r in range(k):
            e = columns[c] * scale[:, r]
            active = u[:, r] > 0
            slope0 = b[c, r] + 2 * weight * np.sum(e[active] * u[active, r])
            grown = np.sum(np.where(active & (e * -np.sign(slope0) > 0), e * e, 0.0))
            bound = abs(slope0) / (a[c, r] + 2 * weight * grown)
            read.append(np.mean(np.abs(u[:, r]) <= np.max(np.abs(columns[c])) * bound))
            root = sorted_root(a[c, r], b[c, r], u[:, r], e, weight)
            assert abs(t[c, r] - root) <= 1e-9 * max(1.0, abs(root))
            phi = lambda s: 0.5 * a[c, r] * s * s + b[c, r] * s + weight * np.sum(np.maximum(0.0, u[:, r] + s * e) ** 2)
            assert abs(decrease[c, r] - (phi(0.0) - phi(t[c, r]))) <= EXACT.objective * max(1.0, phi(0.0))
    assert np.mean(read) < 0.2     # the regime: most points are not read


@pytest.mark.parametrize("seed", [0, 1])
def test_sm3l_scoring_by_matrix_products_matches_the_per_label_route(seed):
    """candidate_gains for SM3L with R = I (all κ × k problems by minimize_outer_terms) against the
    per-label route it replaced (candidate_terms, then minimize_with_decrease per label) on a
    scoring-sized problem (25 candidates, 400 points, 12 labels), at a random F and at F = 0 (every
    term active: the first addition): the same coefficients and decreases to round-off."""
    rng = np.random.default_rng(seed)
    n, k, count = 400, 12, 25
    X = np.abs(rng.standard_normal((n, 6))) * (rng.random((n, 6)) < 0.6)
    gram = X @ X.T
    ops = form.MarginOperator("sm3l", (rng.random((n, k)) < 0.2).astype(np.int8))
    candidates = rng.choice(n, count, replace=False)
    for F in (rng.standard_normal((n, k)), np.zeros((n, k))):
        decrease, coef = candidate_gains(gram, candidates, ops, F, 0.7, np.eye(k))
        columns = gram[:, candidates].T
        expected_coef, expected = np.zeros((count, k)), np.zeros(count)
        for r in range(k):
            u, e = ops.candidate_terms(F, r, columns, expected_coef)
            t, gain = minimize_with_decrease(0.7 * columns[np.arange(count), candidates], 0.7 * F[candidates, r], u, e, 1.0)
            expected_coef[:, r], expected = t, expected + gain
        assert np.allclose(coef, expected_coef, rtol=1e-9, atol=1e-12)
        assert np.allclose(decrease, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batched_minimiser_with_decrease_on_scoring_sized_problems(seed):
    """The candidate scoring's regime: 25 problems of 3000 terms of which a few per cent change state
    between 0 and the minimiser (the sorted-breakpoint route, with shared and per-problem u), against
    the sorted-breakpoint root and φ(0) − φ(t) evaluated from scratch."""
    rng = np.random.default_rng(seed)
    count, m = 25, 3000
    for u in (rng.standard_normal((count, m)) * 3, rng.standard_normal(m) * 3):
        e = rng.standard_normal((count, m)) * (rng.random((count, m)) < 0.9)
        a, b = rng.uniform(50, 100, count), rng.standard_normal(count) * 100
        t, decrease = minimize_with_decrease(a, b, u, e, 0.5)
        U = np.broadcast_to(u, e.shape)
        for row in range(count):
            phi = lambda s: 0.5 * a[row] * s * s + b[row] * s + 0.5 * np.sum(np.maximum(0.0, U[row] + s * e[row]) ** 2)
            root = sorted_root(a[row], b[row], U[row], e[row], 0.5)
            assert abs(t[row] - root) <= 1e-9 * max(1.0, abs(root))
            assert abs(decrease[row] - (phi(0.0) - phi(t[row]))) <= EXACT.objective * max(1.0, phi(0.0))


def test_batched_minimiser_with_decrease_edge_cases():
    """No problems; a zero slope at 0 (t = 0, no decrease); a = 0 with e = 0; the bad shape of e."""
    t, decrease = minimize_with_decrease(np.ones(0), np.ones(0), np.ones((0, 3)), np.ones((0, 3)), 1.0)
    assert t.shape == decrease.shape == (0,)
    u, e = np.array([[-1.0, 2.0], [0.5, -0.5]]), np.array([[1.0, 0.0], [0.0, 0.0]])
    t, decrease = minimize_with_decrease(np.array([1.0, 0.0]), np.array([-4.0, -1.0]), u, e, 0.5)
    assert t[1] == 0.0 and decrease[1] == 0.0 and t[0] == pytest.approx(sorted_root(1.0, -4.0, u[0], e[0], 0.5))
    t, decrease = minimize_with_decrease(1.0, 0.0, np.array([[-1.0, -2.0]]), np.array([[1.0, 1.0]]), 1.0)
    assert t[0] == 0.0 and decrease[0] == 0.0
    with pytest.raises(ValueError, match="e must be a 2-D array"):
        minimize_with_decrease(1.0, 0.0, np.zeros(3), np.zeros(3), 1.0)


def test_reproducible_with_random_state():
    data = make_multilabel(40, 4, 3, random_state=9)
    fits = [SM3L(0.5, d_max=8, kappa=5, random_state=3).fit(data.X, data.Y) for _ in range(2)]
    np.testing.assert_array_equal(fits[0].basis_indices_, fits[1].basis_indices_)
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    other = SM3L(0.5, d_max=8, kappa=5, random_state=4).fit(data.X, data.Y)
    assert not np.array_equal(other.basis_indices_, fits[0].basis_indices_)


def test_stops_on_relative_decrease_and_reports_the_path():
    data = make_multilabel(60, 4, 3, random_state=2)
    est = SM3L(0.5, d_max=60, random_state=0, min_rel_decrease=1e-3).fit(data.X, data.Y)
    path = est.objective_path_
    assert "relative decrease" in est.fit_report_.stop_rule and est.n_basis_ < 60
    assert len(path) == est.n_basis_ and (path[-2] - path[-1]) < 1e-3 * path[-2]
    assert all((path[i - 1] - path[i]) >= 1e-3 * path[i - 1] for i in range(1, len(path) - 1))


def test_precomputed_kernel_and_basis_only_inference_agree():
    data = make_multilabel(30, 4, 3, random_state=3)
    kernel = make_kernel("rbf", 0.3)
    on_X = SM3L(0.5, d_max=6, kernel="rbf", gamma=0.3, random_state=0).fit(data.X, data.Y)
    on_K = SM3L(0.5, d_max=6, kernel="precomputed", random_state=0).fit(kernel(data.X), data.Y)
    test = data.X[:7] + 0.1
    np.testing.assert_array_equal(on_X.basis_indices_, on_K.basis_indices_)
    assert relative_difference(float(np.abs(on_X.decision_function(test) - on_K.decision_function(kernel(test, data.X))).max()), 0.0) <= EXACT.objective


def test_linear_scores_follow_the_basis_order_when_every_point_is_in_J():
    """With more features than points the greedy route can take every point, in its own order; the
    linear kernel's scores X (X_Jᵀ A) must read the basis rows in that order (against the Gram
    matrix route, the definition f = K(X, X_J) A). Planted: X_fitᵀ A in training order, as a
    full-basis shortcut once did, is off by about 3 on scores below 1."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((12, 30)), rng.integers(0, 3, 12)
    model = SMSVM(1.0, d_max=12, kernel="linear", min_rel_decrease=0.0, random_state=0).fit(X, y)
    assert model.n_basis_ == 12 and not np.array_equal(model.basis_indices_, np.arange(12))
    test = rng.standard_normal((5, 30))
    expected = (test @ X[model.basis_indices_].T) @ model.coef_
    assert relative_difference(float(np.abs(model.decision_function(test) - expected).max()), 0.0) <= EXACT.objective


# ---- equivalences ---------------------------------------------------------------------------------

def _binary_objective(gram, y, C):
    problem = bsvm.BinarySVMProblem(gram, y, C, loss="squared_hinge", bias="none")
    return solve(bsvm.cvxpy_primal(problem)[0])


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_sm3l_identity_prior_is_q_independent_squared_hinge_svms(kernel):
    """SM3L(λ, R = I), J = all = Σ_r λ · [½‖w_r‖² + (1/λ) Σ_i max(0, 1 − y_ir f_r)²]: C = 1/λ."""
    data = make_multilabel(40, 3, 3, random_state=5)
    lam = 0.5
    est = SM3L(lam, kernel=kernel, solver="cvxpy").fit(data.X, data.Y)
    fast = greedy_sparse(_gram(data.X, kernel), form.MarginOperator("sm3l", data.Y), lam, basis=np.arange(40))
    Ys = 2.0 * data.Y - 1.0
    gram = _gram(data.X, kernel)
    binary = sum(lam * _binary_objective(gram, Ys[:, r], 1 / lam) for r in range(3))
    assert relative_difference(est.fit_report_.primal_objective, binary) <= EXACT.objective
    used = form.SparseMMProblem(gram, data.Y, lam, "sm3l", fast.primal["basis"])
    assert relative_difference(form.primal_objective(used, fast.primal["coef"]), binary) <= EXACT.objective
    if kernel == "linear":
        liblinear = 0.0
        for r in range(3):
            svc = LinearSVC(C=1 / lam, loss="squared_hinge", fit_intercept=False, tol=1e-10, max_iter=200_000).fit(data.X, Ys[:, r])
            w = svc.coef_.ravel()
            slack = np.maximum(0.0, 1 - Ys[:, r] * (data.X @ w))
            liblinear += lam * (0.5 * w @ w + slack @ slack / lam)
        assert relative_difference(liblinear, binary) <= LIBLINEAR.objective


def test_sm3l_diagonal_prior_is_independent_svms_with_scaled_C():
    """R = diag(s): λ/2 Σ_r ‖w_r‖²/s_r + Σ loss_r = Σ_r (λ/s_r)·binary(C = s_r/λ)."""
    data = make_multilabel(30, 3, 3, random_state=6)
    lam, s = 0.5, np.array([0.5, 1.0, 4.0])
    est = SM3L(lam, R=np.diag(s), d_max=30, kappa=30, min_rel_decrease=0.0, random_state=0).fit(data.X, data.Y)
    gram, Ys = _gram(data.X), 2.0 * data.Y - 1.0
    binary = sum(lam / s[r] * _binary_objective(gram, Ys[:, r], s[r] / lam) for r in range(3))
    assert relative_difference(est.fit_report_.primal_objective, binary) <= EXACT.objective


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_smsvm_two_classes_is_one_squared_hinge_svm_on_the_difference(kernel):
    """Two classes: the loss depends on u = w₁ − w₂ only, and min ‖w₁‖² + ‖w₂‖² given u is ‖u‖²/2
    (w₁ = −w₂ = u/2), so SMSVM = λ/4‖u‖² + ½Σ max(0, 1 − s_i f_u)² = (λ/2)·binary(C = 1/λ),
    with s_i = +1 for the first class and f₁ − f₂ = f_binary."""
    X, y = make_multiclass(40, 3, 2, random_state=3)
    lam = 0.4
    est = SMSVM(lam, kernel=kernel, d_max=40, kappa=40, min_rel_decrease=0.0, random_state=0).fit(X, y)
    gram, s = _gram(X, kernel), np.where(y == 0, 1.0, -1.0)
    binary = _binary_objective(gram, s, 1 / lam)
    assert relative_difference(est.fit_report_.primal_objective, lam / 2 * binary) <= EXACT.objective
    if kernel == "linear":
        svc = LinearSVC(C=1 / lam, loss="squared_hinge", fit_intercept=False, tol=1e-10, max_iter=200_000).fit(X, s)
        w = svc.coef_.ravel()
        slack = np.maximum(0.0, 1 - s * (X @ w))
        assert relative_difference(lam / 2 * (0.5 * w @ w + slack @ slack / lam), lam / 2 * binary) <= LIBLINEAR.objective


# ---- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    (dict(lam=0.0), "lam"), (dict(lam=-1.0), "lam"), (dict(d_max=0), "d_max"), (dict(d_max=31), "d_max"),
    (dict(kappa=0), "kappa"), (dict(R=np.array([[1.0, 0.5, 0], [0.0, 1, 0], [0, 0, 1]])), "symmetric"),
    (dict(R=-np.eye(3)), "positive definite"), (dict(P=np.ones((3, 3))), "singular"),
    (dict(R=np.eye(3), P=np.eye(3)), "either R or P"), (dict(R=np.eye(2)), "R must be"),
    (dict(solver="newton"), "solver"),
])
def test_sm3l_bad_input(kwargs, match):
    data = make_multilabel(30, 3, 3, random_state=0)
    with pytest.raises(ValueError, match=match):
        SM3L(**{"lam": 1.0, **kwargs}).fit(data.X, data.Y)


def test_smsvm_bad_input():
    X, y = make_multiclass(20, 3, 3)
    with pytest.raises(ValueError, match="1-D class vector"):
        SMSVM().fit(X, np.eye(3)[y])
    with pytest.raises(ValueError, match="lam"):
        SMSVM(lam=0).fit(X, y)
    with pytest.raises(ValueError, match="d_max"):
        SMSVM(d_max=21).fit(X, y)
    with pytest.raises(ValueError, match="kappa"):
        SMSVM(kappa=0).fit(X, y)


def test_n_support_counts_training_points_inside_the_margin():
    """n_support_: points with a nonzero multiplier, i.e. some label with y_ir f_r(x_i) < 1."""
    data = make_multilabel(40, 3, 3, random_state=8)
    est = SM3L(0.5, d_max=10, random_state=0).fit(data.X, data.Y)
    inside = np.any((2.0 * data.Y - 1.0) * est.decision_function(data.X) < 1, axis=1)
    assert est.n_support_ == int(inside.sum()) and est.n_basis_ == 10


def test_classwise_newton_switches_to_joint_steps_on_coupled_classes():
    """Two-class SMSVM with small λ: the paper's class-wise sweeps (block coordinate descent) crawl;
    the "greedy" solver then continues with joint Newton steps and still reaches the optimum."""
    X, y = make_multiclass(30, 3, 2, random_state=1)
    problem = form.SparseMMProblem(_gram(X), np.eye(2, dtype=np.int8)[y], 0.05, "smsvm", np.arange(5))
    result = greedy_sparse(problem.gram, problem.margins, problem.lam, basis=problem.basis, joint=False)
    assert "joint_from_sweep" in result.history
    report = fit_report(problem, result)
    assert relative_difference(report.primal_objective, _primal(problem)) <= EXACT.objective
    assert report.max_kkt <= EXACT.kkt


def test_duplicated_basis_points_are_left_out_without_changing_the_optimum():
    data = make_multilabel(20, 3, 2, random_state=2)
    X = data.X.copy()
    X[5] = X[3]
    problem = form.SparseMMProblem(_gram(X), data.Y, 0.5, "sm3l", np.array([1, 3, 5, 8]))
    result = greedy_sparse(problem.gram, problem.margins, problem.lam, basis=problem.basis)
    assert result.primal["basis"].tolist() == [1, 3, 8]
    used = form.SparseMMProblem(problem.gram, data.Y, 0.5, "sm3l", result.primal["basis"])
    assert relative_difference(form.primal_objective(used, result.primal["coef"]), _primal(problem)) <= EXACT.objective


@pytest.mark.parametrize("solver", ["fast", "greedy"])
@pytest.mark.parametrize("model", form.MODELS)
def test_max_iter_bounds_the_whole_run(solver, model):
    """Issue 14: max_iter used to bound each α_J solve, so max_iter=1 ran 17–38 Newton steps and said
    converged. Now it bounds the run: one step, converged=False, a ConvergenceWarning naming it."""
    if model == "smsvm":
        X, y = make_multiclass(30, 3, 3, random_state=1)
        estimator, target = SMSVM(0.5, d_max=5, max_iter=1, solver=solver, random_state=0), y
    else:
        data = make_multilabel(30, 3, 3, random_state=1)
        estimator, target = SM3L(0.5, d_max=5, max_iter=1, solver=solver, random_state=0), data.Y
    with pytest.warns(ConvergenceWarning, match=r"did not converge in 1 iterations.*\(basis: max_iter\) reached"):
        estimator.fit(X if model == "smsvm" else data.X, target)
    report = estimator.fit_report_
    assert report.n_iter == 1 and not report.converged
    long = estimator.set_params(max_iter=1000).fit(X if model == "smsvm" else data.X, target).fit_report_
    assert long.converged and long.n_iter > 1


@pytest.mark.parametrize("lam", [1.0, 0.01])
def test_separable_newton_stops_at_a_round_off_floor_as_a_stall(lam):
    """SM3L's per-label Newton loop on emotions' unscaled features at tol 1e-10: every label reaches
    the exact minimiser of its problem on its active set, and the stop value stays above tol by
    round-off (2e-10 to 9e-9). That is a stall: the loop says so and stops, instead of stepping to
    max_iter (it used to take all 5000 steps) and advising a larger max_iter. The report's own
    recomputed certificate confirms that tol is out of reach: no converged claim was withheld."""
    from mlsvm.datasets import load_emotions
    data = load_emotions()
    estimator = SM3L(lam, d_max=30, kernel="linear", tol=1e-10, max_iter=5000, random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"Newton stalled .*More iterations will not help"):
        estimator.fit(data.X, data.Y)
    report = estimator.fit_report_
    assert not report.converged and report.n_iter < 1000
    assert max(abs(report.relative_gap), report.max_kkt) > 1e-10
    assert report.max_kkt <= 1e-7 and abs(report.relative_gap) <= 1e-10   # a floor, not a failure
    loose = estimator.set_params(tol=1e-8).fit(data.X, data.Y).fit_report_
    assert loose.converged


@pytest.mark.parametrize("model, lam, tol, loose_tol", [("smsvm", 1.0, 1e-10, 1e-8), ("smsvm", 0.01, 1e-10, 1e-7),
                                                       ("sm3l", 1.0, 1e-13, 1e-8)])
def test_joint_newton_stops_at_a_round_off_floor_as_a_stall(model, lam, tol, loose_tol):
    """The joint Newton loop (SMSVM; SM3L with a full R) on emotions' unscaled features. At this tol
    the solve on the final basis reaches a round-off floor: its steps leave the active set unchanged
    and no longer shrink the gradient. The loop says so and stops, and returns its iterate of least
    stop value: its KKT residual is within a few times that of the fit at the looser tol, which
    converges (1.6 times at most, measured). It used to step on at random (t from −5 to 1.7) until
    max_iter (tol 1e-13: all 3000 steps, advising a larger max_iter) or a lucky stop value, whose
    recomputed certificate then missed tol; its last iterate's KKT residual was up to 26 times that
    of the looser fit. With λ = 0.01 the first basis
    (``|J|`` = 1) stalls at 3.6e-6, above the inner tolerance 1e-6: that stall must not end the
    selection, so at tol 1e-6 the fit converges on its whole basis. At the floor the loop's own stop
    value and the recomputed certificate are two evaluations of the same round-off: under OpenBLAS's
    Prescott kernels the loop's fell below tol (9.5e-11) where the certificate's did not (2.2e-10),
    and the fit says that instead — as honest, and held to the same bounds."""
    from mlsvm.datasets import load_emotions
    data = load_emotions()
    if model == "smsvm":
        target = data.Y.argmax(axis=1)
        estimator = SMSVM(lam, d_max=30, kernel="linear", max_iter=5000, random_state=0)
    else:
        P = np.random.default_rng(0).normal(size=(6, 6)) / np.sqrt(6) + np.eye(6)
        target, estimator = data.Y, SM3L(lam, d_max=20, R=P.T @ P, kernel="linear", max_iter=5000, random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"Newton stalled .*More iterations will not help|stopped on its own "
                                                r"rule .* but the recomputed certificate does not meet tol"):
        estimator.set_params(tol=tol).fit(data.X, target)
    report = estimator.fit_report_
    assert not report.converged and report.n_iter < 1000
    assert max(abs(report.relative_gap), report.max_kkt) > tol
    loose = clone(estimator).set_params(tol=loose_tol).fit(data.X, target).fit_report_
    assert loose.converged
    assert report.max_kkt <= 3 * loose.max_kkt and abs(report.relative_gap) <= loose_tol
    assert clone(estimator).set_params(tol=1e-6).fit(data.X, target).fit_report_.converged


def test_joint_newton_stops_when_its_steps_lower_nothing():
    """SMSVM on 200 emotions points with the features ×1e3 (the linear kernel's entries up to 1e11
    against λ = 1), on a basis of 70 points. Newton reaches a stop value near 7e-6 and then steps at
    round-off: e_J and the stop value flicker in their last digits, margins at 0 flip in and out of
    the active set (so the unchanged-active-set test never fires) and CG stops at its cap of 500
    products each step. The loop went on to max_iter (over 200 s at max_iter=3000); now ``STALL_STEPS``
    steps that lower neither e_J nor the least stop value end it as a stall, with its best iterate,
    after e_J had stopped falling (it fell at each of the first 300 steps)."""
    from mlsvm.datasets import load_emotions
    from mlsvm.solvers.sparse_mm_greedy import STALL_STEPS
    data = load_emotions()
    X, y = data.X[:200] * 1e3, data.Y[:200].argmax(axis=1)
    ops = form.MarginOperator("smsvm", np.eye(data.Y.shape[1])[y])
    with pytest.warns(ConvergenceWarning, match=r"Newton stalled .*More iterations will not help"):
        result = greedy_sparse(_gram(X, "linear"), ops, 1.0, basis=np.arange(70), tol=1e-10, max_iter=1000)
    assert not result.converged and result.n_iter < 1000 and result.history["stalled"] == result.n_iter
    primal, stop = np.array(result.history["primal"]), np.array(result.history["stop_value"])
    idle = slice(-STALL_STEPS, None)
    assert primal[idle].min() >= primal[:-STALL_STEPS].min() and stop[idle].min() >= stop[:-STALL_STEPS].min()
    # the stall came after e_J had stopped falling: over the idle steps it moved by round-off only
    # (where the plateau begins, between steps 300 and 320, depends on the BLAS's summation order)
    assert np.ptp(primal[-STALL_STEPS - 1:]) <= 1e-12 * primal.min()
    assert np.all(np.diff(primal[:250]) < 0)
    assert result.stop_value == stop.min() < 1e-4


@pytest.mark.parametrize("size", [1, 2])
def test_class_wise_sweeps_stop_when_they_lower_nothing(size):
    """SM3L's class-wise sweeps (the paper's Alg. 3, ``joint=False``) on 200 emotions points ×1e3, on
    a basis of one or two points: the first sweep solves every label exactly (R = I: the labels
    separate), and the stop value is then held near 3e-4 by round-off (the stationarity in A cancels
    terms near 1e13). The gap sits at −2e-16, which never "fails to halve", so the sweeps never turned
    joint and ran on to max_iter, advising a larger one (solver "greedy" with max_iter=100000 had not
    ended a fit after 120 s). Now ``STALL_STEPS`` sweeps that lower neither e_J nor the least stop
    value end the solve as stalled, at the objective the separable Newton loop reaches."""
    from mlsvm.datasets import load_emotions
    from mlsvm.solvers.sparse_mm_greedy import STALL_STEPS
    data = load_emotions()
    X, Y = data.X[:200] * 1e3, data.Y[:200]
    gram, ops = _gram(X, "linear"), form.MarginOperator("sm3l", Y)
    with pytest.warns(ConvergenceWarning, match=r"Newton stalled .*More iterations will not help"):
        sweeps = greedy_sparse(gram, ops, 1.0, basis=np.arange(size), joint=False, max_iter=1000)
    assert not sweeps.converged and sweeps.n_iter <= 3 * STALL_STEPS and sweeps.history["stalled"] == sweeps.n_iter
    stop = np.array(sweeps.history["stop_value"])
    assert sweeps.stop_value == stop.min() and abs(sweeps.history["relative_gap"][-1]) <= 1e-14
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # the separable loop meets the same floor
        newton = greedy_sparse(gram, ops, 1.0, basis=np.arange(size), max_iter=1000)
    primal = lambda result: result.history["primal"][-1]
    assert abs(primal(sweeps) - primal(newton)) <= 1e-12 * primal(newton)


def test_joint_newton_at_a_vanishing_weight_ends_at_once():
    """λ = 1e-300: the preconditioner divides the common-class mode by λ and overflows, so CG's
    direction is NaN; or CG, unable to reach its tolerance, returns a direction along which the exact
    line search finds no decrease (t = 0). Either way the iterate cannot move and every later step
    would repeat the last one, CG to cg_max each time: a fit on 40 points took 40-107 s to exhaust
    max_iter (the fuzz harness found it). Now the NaN direction is a ValueError naming the estimator's
    parameters, and a step of t = 0 on an unsolved direction stops the solve as stalled: the next line
    search is on a larger basis. At which basis the direction overflows is round-off (the BLAS
    decides: seed 0 broke down at |J| = 1 under OpenBLAS's Haswell kernels and at |J| = 7 under its
    SkylakeX kernels, after one step of t = 0 at each of |J| = 1-6)."""
    X = np.random.default_rng(0).random((40, 3))
    y = np.arange(40) % 3
    for seed in (0, 9):
        steps = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)   # the stalled bases
            with pytest.raises(ValueError, match=rf"SMSVM\(lam=1e-300, random_state={seed}\): the solver broke "
                                                 r"down in floating point \(the joint Newton direction is not "
                                                 r"finite"):
                _record_line_steps(lambda: SMSVM(1e-300, random_state=seed).fit(X, y), steps)
        for (size, t), (next_size, _) in zip(steps, steps[1:]):
            assert t > 0.0 or next_size > size, steps


def _record_line_steps(fit, steps):
    """Run ``fit`` with the joint loop's line searches recorded in ``steps`` as (|J|, step length)."""
    from unittest import mock

    from mlsvm.solvers import sparse_mm_greedy

    line_step = sparse_mm_greedy._line_step

    def recorded(ops, F, C, D, *args, **kwargs):
        t = line_step(ops, F, C, D, *args, **kwargs)
        steps.append((D.shape[0], t))
        return t

    with mock.patch.object(sparse_mm_greedy, "_line_step", recorded):
        return fit()


def test_stationarity_is_certified_not_only_the_gap():
    """Issue 19: SM3L on yeast reported converged=True with a stationarity residual of 3.3e-2 at
    tol 1e-4: the certificate (the relative duality gap with the implied multipliers) was right, but
    it is quadratic in the gradient (gap 5.5e-6 there). The Newton solver now also stops on the
    scaled stationarity residual the report grades, so a converged fit meets tol on both. Here a
    smaller problem with the same mechanism: the gap alone would stop with stationarity ≫ tol."""
    data = make_multilabel(60, 6, 4, random_state=5)
    for tol in (1e-3, 1e-4):  # measured: iterates with gap ≤ tol had stationarity up to 0.15 / 0.058
        result = greedy_sparse(_gram(data.X), form.MarginOperator("sm3l", data.Y), 1.0, d_max=30, kappa=10,
                               tol=tol, random_state=0)
        problem = form.SparseMMProblem(_gram(data.X), data.Y, 1.0, "sm3l")
        report = fit_report(problem, result, tol)
        assert result.converged and report.converged
        assert report.kkt["stationarity"] <= tol and abs(report.relative_gap) <= tol
        # some iterate had its gap within tol and its stationarity not: the gap alone stopped there
        history = result.history
        assert any(abs(g) <= tol < v for g, v in zip(history["relative_gap"], history["stop_value"]))


@pytest.mark.parametrize("solver", ["fast", "greedy", "cvxpy"])
def test_every_registered_name_certifies_and_fast_is_greedy_joint(solver):
    data = make_multilabel(25, 3, 3, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        # CVXPY's point is as accurate as the backend (Clarabel ~1e-8 here): graded at 1e-6
        report = SM3L(0.5, d_max=6, solver=solver, random_state=0, tol=1e-6 if solver == "cvxpy" else 1e-10
                      ).fit(data.X, data.Y).fit_report_
    assert report.solver == {"fast": "greedy-joint"}.get(solver, solver) and report.converged
    assert abs(report.relative_gap) <= report.tol and report.max_kkt <= report.tol


def test_linear_kernel_basis_stops_at_the_rank_and_equals_the_full_model():
    """With a linear kernel in 3 dimensions every fourth point lies in the span of J: the greedy
    stops with 3 basis vectors, and that span is the full model's."""
    data = make_multilabel(40, 3, 3, random_state=12)
    est = SM3L(0.5, d_max=20, kappa=40, kernel="linear", min_rel_decrease=0.0, random_state=0).fit(data.X, data.Y)
    full = SM3L(0.5, kernel="linear", solver="cvxpy").fit(data.X, data.Y)
    assert est.n_basis_ == 3 and "no eligible candidate" in est.fit_report_.stop_rule
    assert relative_difference(est.fit_report_.primal_objective, full.fit_report_.primal_objective) <= EXACT.objective


@pytest.mark.parametrize("scale", [0.1, 0.3, 0.7, 1.9, 2.6, 0.5864037618298334])
def test_exact_line_search_with_the_root_on_a_breakpoint(scale):
    """The root on a kink: φ' is ±round-off on both sides and the active set flips at the root, so
    neither exactness test fires; the bracket collapses to one float and that is the answer (it
    used to bisect in place for 60 steps and then crash in the fallback on a scalar problem)."""
    rng = np.random.default_rng(3)
    e = rng.standard_normal(40)
    e[0] = 1.0
    u = -np.abs(rng.standard_normal(40)) - 3.0 * np.abs(e) * (1 + scale) - 1.0   # inactive on [0, 2·scale] ...
    u[0] = -scale                                                 # ... except one kink exactly at `scale`
    a = 1e-4
    b = -a * scale   # φ'(scale) = a·scale + b + 0 = 0: the minimiser is the breakpoint itself
    t = minimize_piecewise_quadratic(a, b, u, e, 1.0)
    assert isinstance(t, float)
    assert t == pytest.approx(sorted_root(a, b, u, e, 1.0), rel=1e-12)
    assert t == pytest.approx(scale, rel=1e-9)


def test_sm3l_tiny_lambda_fits_where_a_line_search_root_sits_on_a_breakpoint():
    """SM3L(lam=1e-8) on this seeded problem met a line search whose root is a breakpoint (11 of 40
    seeds raised "Calling nonzero on 0d arrays"); now every seed converges with its certificate."""
    data = make_multilabel(n_samples=40, n_features=5, n_labels=4, random_state=0)
    for seed in range(0, 40, 4):
        report = SM3L(lam=1e-8, random_state=seed).fit(data.X, data.Y).fit_report_
        assert report.converged and report.relative_gap <= 1e-12 and report.max_kkt <= 1e-8


def test_a_negative_round_off_gap_sets_the_tightest_forcing_term_without_a_warning():
    """The example plot_decision_regions.py (SMSVM, three blobs, λ = 0.1, RBF γ = 1, |J| = 8) reached
    a Newton iterate whose relative gap was a round-off negative: ``√gap`` for CG's forcing term
    raised "invalid value encountered in sqrt". The forcing term now uses ``max(gap, 0)``; the fit
    certifies as before."""
    data = make_multiclass(n_samples=90, n_features=2, n_classes=3, random_state=1)
    X, y = data if isinstance(data, tuple) else (data.X, data.Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        report = SMSVM(lam=0.1, kernel="rbf", gamma=1.0, d_max=8, random_state=0).fit(X, y).fit_report_
    assert report.converged and report.max_kkt <= report.tol
    assert report.relative_gap >= -1e-9


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_kernel_columns_from_sparse_X_give_the_dense_gram_fit(kernel):
    """The greedy solvers read K by columns computed from X (a CSR X stays sparse): the same basis
    and objective as the solver on the held n × n Gram matrix, and the columns, blocks and diagonal
    are those of that matrix."""
    from scipy.sparse import csr_matrix
    data = make_multilabel(50, 6, 3, random_state=4)
    X = data.X * (np.random.default_rng(0).random(data.X.shape) < 0.5)   # half the entries zero
    k = make_kernel(kernel, "scale", X=X)
    gram = k(X)
    columns = form.KernelColumns(k, csr_matrix(X))
    idx = np.array([3, 7, 11, 40])
    assert np.allclose(columns.columns(idx), gram[:, idx], rtol=1e-12, atol=1e-12)
    assert np.allclose(columns.block(idx, idx), gram[np.ix_(idx, idx)], rtol=1e-12, atol=1e-12)
    assert np.allclose(columns.diagonal(), np.diag(gram), rtol=1e-12, atol=1e-12)
    for model, Y in (("sm3l", data.Y), ("smsvm", np.eye(3, dtype=np.int8)[data.Y.argmax(1)])):
        ops = form.MarginOperator(model, Y)
        with warnings.catch_warnings():
            # linear and poly here once met a settled line search whose unused step was ±inf:
            # "invalid value encountered in multiply" from the exact line search (now not computed)
            warnings.simplefilter("error", RuntimeWarning)
            lazy = greedy_sparse(columns, ops, 0.5, d_max=12, kappa=10, random_state=0)
        held = greedy_sparse(gram, ops, 0.5, d_max=12, kappa=10, random_state=0)
        assert np.array_equal(lazy.primal["basis"], held.primal["basis"])
        assert relative_difference(lazy.history["primal"][-1], held.history["primal"][-1]) <= 1e-10
    estimator = SM3L(0.5, d_max=12, kappa=10, kernel=kernel, random_state=0)
    sparse_fit = estimator.fit(csr_matrix(X), data.Y)
    assert isinstance(sparse_fit._problem(sparse_fit._train_gram(csr_matrix(X)), data.Y).gram, form.KernelColumns)
    dense_fit = SM3L(0.5, d_max=12, kappa=10, kernel=kernel, random_state=0).fit(X, data.Y)
    assert np.array_equal(sparse_fit.basis_indices_, dense_fit.basis_indices_)
    assert relative_difference(sparse_fit.fit_report_.primal_objective, dense_fit.fit_report_.primal_objective) <= 1e-10
    assert np.allclose(sparse_fit.decision_function(csr_matrix(X)), dense_fit.decision_function(X), rtol=1e-8, atol=1e-8)
    assert sparse_fit.fit_report_.converged


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 40), st.integers(1, 12), st.floats(-3.0, 2.0), st.integers(0, 10_000))
def test_smsvm_active_pair_products_equal_the_dense_products(k, n, d, shift, seed):
    """SMSVM's joint Newton step works on the active pairs only (:class:`_ActivePairs`): Tᵀ and the
    Hessian's loss part from the listed pairs equal the dense n × k products through
    MarginOperator.forward/adjoint — with points that have no active pair, all pairs active
    (``shift`` high), none (low), and k = 1 (no pair at all). The dense products use the generic T
    and Tᵀ, not the SMSVM-specialised dense product of the Newton step: that one is checked the same."""
    from mlsvm.solvers.sparse_mm_greedy import _ActivePairs, _hessian_product
    rng = np.random.default_rng(seed)
    ops = form.MarginOperator("smsvm", np.eye(k)[rng.integers(k, size=n)])
    Z = np.asfortranarray(rng.standard_normal((n, d)))     # the greedy run's feature buffer is Fortran-ordered
    margin = 1.0 + ops.forward(Z @ rng.standard_normal((d, k))) + shift
    active = ops.mask & (margin > 0)
    pairs = _ActivePairs(active, ops.label, Z)
    assert pairs.classes.size == active.sum()
    V = rng.standard_normal((n, k)) * active
    np.testing.assert_allclose(pairs.adjoint(V[pairs.points, pairs.classes]), Z.T @ ops.adjoint(V),
                               rtol=1e-12, atol=1e-12)
    D, lam = rng.standard_normal((d, k)), 0.3
    dense = lam * D + Z.T @ ops.adjoint(2 * ops.weight * active * ops.forward(Z @ D))
    np.testing.assert_allclose(lam * D + pairs.product(D, 2 * ops.weight), dense, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_hessian_product(Z, ops, 2 * ops.weight * active, lam, np.eye(k), D), dense,
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("size", [3, 301])   # explicit block inverses / per-class triangular solves
@pytest.mark.parametrize("seed", [0, 1])
def test_smsvm_preconditioner_is_spd_and_exact_on_the_common_class_mode(seed, size):
    """The joint CG's preconditioner for SMSVM: a symmetric positive definite map of d × k blocks
    that inverts the generalized Hessian exactly on D = v1ᵀ (where the Hessian is λ·I: the loss is
    blind to a shift shared by all classes); and the CG direction it gives = the dense solve of the
    explicit Hessian."""
    from mlsvm.solvers.sparse_mm_greedy import (_ActivePairs, _ClassHessians, _curvature, _hessian_product,
                                                _joint_direction, _preconditioner)
    rng = np.random.default_rng(seed)
    n, k, lam = size + 20, 4, 0.3
    ops = form.MarginOperator("smsvm", np.eye(k)[rng.integers(k, size=n)])
    Z, C = rng.normal(size=(n, size)), rng.normal(size=(size, k)) * 0.1
    F = Z @ C
    hessians = _ClassHessians(lam, np.eye(k), n, k, size)
    hessians.reset(size)
    hessians.refresh(Z, _curvature(ops, F))
    precondition = _preconditioner(ops, hessians, lam)
    active = 2 * ops.weight * (ops.mask & (1.0 + ops.forward(F) > 0))
    v = rng.normal(size=(size, 1))
    common = _hessian_product(Z, ops, active, lam, np.eye(k), v * np.ones((1, k)))
    np.testing.assert_allclose(common, lam * v * np.ones((1, k)), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(precondition(common), v * np.ones((1, k)), rtol=1e-10, atol=1e-10)
    if size > 10:
        return
    units = np.eye(size * k).reshape(-1, size, k)
    P = np.array([precondition(u).ravel() for u in units])
    H = np.array([_hessian_product(Z, ops, active, lam, np.eye(k), u).ravel() for u in units])
    np.testing.assert_allclose(P, P.T, atol=1e-12)
    assert np.linalg.eigvalsh(P).min() > 0
    gradient = rng.normal(size=(size, k))
    D, _ = _joint_direction(Z, ops, F, hessians, lam, np.eye(k), gradient, cg_tol=1e-12)
    np.testing.assert_allclose(D.ravel(), np.linalg.solve(H, -gradient.ravel()), rtol=1e-8, atol=1e-10)
    pairs = _ActivePairs(active > 0, ops.label, Z)     # the products on the listed active pairs
    D, _ = _joint_direction(Z, ops, F, hessians, lam, np.eye(k), gradient, cg_tol=1e-12, pairs=pairs)
    np.testing.assert_allclose(D.ravel(), np.linalg.solve(H, -gradient.ravel()), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("capacity", [7, 2])
def test_class_hessian_factors_follow_changing_curvature_and_a_grown_basis(transposed, capacity):
    """_ClassHessians kept up to date through several curvature changes (ω given n × k or as the
    transpose of a k × n array, as the separable Newton loop passes it) and a border row when the
    basis grows: every factor L_r satisfies L_r L_rᵀ = λ(R⁻¹)_rr I + Zᵀ diag(ω_r) Z built from scratch;
    also when the buffers, made for 2 features, have to grow. The inverses of the CG preconditioner,
    kept per class, are those of the current factors, also when one class's curvature changed."""
    from mlsvm.solvers.sparse_mm_greedy import _ClassHessians
    rng = np.random.default_rng(3)
    n, k, d, lam = 40, 5, 6, 0.7
    R_inv = np.diag(rng.uniform(0.5, 2.0, k))
    Z = rng.standard_normal((n, d + 1))
    hessians = _ClassHessians(lam, R_inv, n, k, capacity)
    hessians.reset(d)

    def curvature():
        omega = 2.0 * (rng.random((n, k)) < 0.5)
        return np.ascontiguousarray(omega.T).T if transposed else omega

    def check(size, omega):
        for r in range(k):
            L = hessians.factor(r)
            expected = lam * R_inv[r, r] * np.eye(size) + Z[:, :size].T @ (omega[:, r, None] * Z[:, :size])
            assert np.allclose(L @ L.T, expected, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(hessians.inverses()[r], np.linalg.inv(expected), rtol=1e-9, atol=1e-12)

    for _ in range(3):
        omega = curvature()
        hessians.refresh(Z[:, :d], omega)
        check(d, omega)
    hessians.grow(Z[:, :d], Z[:, d])
    check(d + 1, omega)
    omega = curvature()
    hessians.refresh(Z, omega)
    check(d + 1, omega)
    omega = omega.copy()
    omega[:, 1] = 2.0 - omega[:, 1]    # one class's curvature changes: its inverse, and only it, is stale
    hessians.refresh(Z, omega)
    check(d + 1, omega)


@pytest.mark.parametrize("estimator", [SM3L, SMSVM])
def test_features_that_span_nothing_are_refused_naming_x(estimator):
    """Every example the zero vector for the kernel (found by the fuzz harness: the message named
    no argument): a ValueError that says it is X."""
    Y = np.array([[1, 0], [0, 1], [1, 1]]) if estimator is SM3L else np.array([0, 1, 1])
    with pytest.raises(ValueError, match="^X spans nothing in feature space"):
        estimator(kernel="linear").fit(np.zeros((3, 2)), Y)
