"""Rank-SVM (SPEC §2.1): CVXPY primal = dual, the exact solver and Frank–Wolfe against CVXPY,
KKT, Σ_k w_k = 0, biases three ways, and the two equivalences (Weston–Watkins, binary C-SVM)."""

import inspect
import warnings
from unittest.mock import patch

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsvm import RankSVM
from mlsvm.datasets import load_emotions, make_multilabel
from mlsvm.formulations import binary_svm as bsvm
from mlsvm.formulations import rank_svm as rs
from mlsvm.kernels import gram_factor, make_kernel
from mlsvm.solvers.rank_svm_frank_wolfe import frank_wolfe
from mlsvm.solvers import rank_svm_alm as alm
from mlsvm.solvers.rank_svm_alm import MultiplierSchedule, proximal_alm
from mlsvm.solvers.rank_svm_ipm import MAX_SYSTEM_SIZE, _ReducedNewton, interior_point
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.report import relative_difference
from mlsvm.verification.tolerances import BACKEND_AGREEMENT, tolerance

EXACT = tolerance("rank_svm", "fast")
CVXPY = tolerance("rank_svm", "cvxpy")


@st.composite
def rank_problems(draw, min_q=2, max_q=4, Cs=(0.1, 1.0, 10.0)):
    """Small problems with the awkward label structures of SPEC §3 and at least one pair."""
    n = draw(st.integers(4, 12))
    d = draw(st.integers(1, 3))
    q = draw(st.integers(min_q, max_q))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = (rng.random((n, q)) < draw(st.sampled_from([0.3, 0.5, 0.7]))).astype(int)
    if draw(st.booleans()):
        Y[:, 0] = 0                                    # a label nobody has
    if q > 2 and draw(st.booleans()):
        Y[:, 1] = 1                                    # a label everybody has
    if draw(st.booleans()):
        Y[0, :] = 1                                    # an instance with every label
        Y[1, :] = 0                                    # and one with none
    if draw(st.booleans()):
        X[2] = X[3]                                    # a duplicated point
    Y[-1, :] = 0
    Y[-1, -1] = 1                                      # at least one instance with pairs
    kernel = draw(st.sampled_from(["linear", "rbf"]))
    C = draw(st.sampled_from(Cs))
    gram = make_kernel(kernel, "scale", X=X)(X)
    return rs.make_problem(gram, Y, C), X


def cvxpy_dual_solution(problem):
    cvx, variables = rs.cvxpy_dual(problem)
    value = -solve(cvx, "CLARABEL")
    primal, dual = rs.solution_from_cvxpy(problem, cvx, variables)
    return value, dual["alpha"], primal["b"]


def objectives_at(problem, result):
    """(α, b, β, primal, dual) of a SolverResult, graded by the formulation's numpy objectives."""
    alpha, b = result.dual["alpha"], result.primal["b"]
    beta = problem.scatter(alpha)
    return alpha, b, beta, rs.primal_objective(problem, beta, b), rs.dual_objective(problem, alpha)


def certified_interior_optimum(problem, X):
    """The primal optimum by the interior point at tol 1e-10, asserted certified (a reference where
    CVXPY is slow: hundreds of rows)."""
    interior = interior_point(problem, X, tol=1e-10)
    assert interior.converged
    return objectives_at(problem, interior)[3]


def assert_exact_optimum(problem, result, reference):
    """The result converged to the reference optimum within the EXACT row (objective, relative gap,
    every KKT residual); returns its β."""
    alpha, b, beta, primal, dual = objectives_at(problem, result)
    assert result.converged
    assert relative_difference(primal, reference) <= EXACT.objective
    assert (primal - dual) / max(1.0, abs(primal), abs(dual)) <= EXACT.gap
    assert max(rs.kkt_residuals(problem, alpha, b).values()) <= EXACT.kkt
    return beta


@given(rank_problems())
@settings(max_examples=15)
def test_pair_operators_match_the_shared_pairs(drawn):
    problem, _ = drawn
    rng = np.random.default_rng(0)
    alpha = rng.random(problem.n_pairs)
    F = rng.standard_normal((problem.n_samples, problem.n_labels))
    assert np.allclose(problem.scatter(alpha), problem.pairs.scatter(alpha))
    assert np.allclose(problem.gather(F), problem.pairs.gather(F))
    assert np.allclose(problem.equality @ alpha, problem.pairs.scatter(alpha).sum(axis=0))


@given(rank_problems())
@settings(max_examples=10)
def test_cvxpy_primal_equals_dual_with_kkt_and_zero_sum_weights(drawn):
    problem, _ = drawn
    primal_cvx, _ = rs.cvxpy_primal(problem)
    primal_value = solve(primal_cvx, "CLARABEL")
    dual_value, alpha, b = cvxpy_dual_solution(problem)
    assert relative_difference(primal_value, dual_value) <= BACKEND_AGREEMENT
    beta = problem.scatter(alpha)
    # the numpy objectives evaluate the recovered point to the same optimum
    assert relative_difference(rs.primal_objective(problem, beta, b), primal_value) <= CVXPY.objective
    assert relative_difference(rs.dual_objective(problem, alpha), primal_value) <= CVXPY.objective
    assert max(rs.kkt_residuals(problem, alpha, b).values()) <= CVXPY.kkt
    # Σ_k β_ki = 0 for every instance, hence Σ_k w_k = Σ_i (Σ_k β_ki) φ(x_i) = 0
    assert np.max(np.abs(beta.sum(axis=1))) <= 1e-12 * max(1.0, np.max(np.abs(beta)))
    assert np.all(beta[problem.pairs.without_pairs] == 0.0)


EXACT_SOLVERS = {
    "alm": lambda problem: proximal_alm(problem, tol=1e-8, max_iter=500),
    # any kernel through an eigen-factor K = LLᵀ (the estimator uses X for the linear kernel)
    "ipm": lambda problem: interior_point(problem, gram_factor(problem.gram), tol=1e-8),
}


@pytest.mark.parametrize("solver", sorted(EXACT_SOLVERS))
@given(drawn=rank_problems())
@settings(max_examples=10)
def test_exact_solvers_match_cvxpy_with_kkt(solver, drawn):
    problem, X = drawn
    reference, _, _ = cvxpy_dual_solution(problem)
    result = EXACT_SOLVERS[solver](problem)
    beta = assert_exact_optimum(problem, result, reference)
    w_sum = X.T @ beta.sum(axis=1)                     # Σ_k w_k for a linear feature map
    assert np.max(np.abs(w_sum)) <= 1e-12 * max(1.0, np.max(np.abs(beta)))


@given(rank_problems())
@settings(max_examples=6)
def test_frank_wolfe_is_within_its_certified_gap(drawn):
    problem, _ = drawn
    reference, _, _ = cvxpy_dual_solution(problem)
    result = frank_wolfe(problem, tol=1e-2, max_iter=5000)
    _, _, _, primal, dual = objectives_at(problem, result)
    gap = result.history["fw_gap"][-1]
    # the FW gap is exactly primal(w(α), b_LP) − dual(α) (LP duality), and brackets the optimum
    assert primal - dual == pytest.approx(gap, rel=1e-7, abs=1e-9)
    scale = max(1.0, abs(reference))
    assert dual <= reference + 1e-8 * scale
    assert primal >= reference - 1e-8 * scale
    assert primal - reference <= gap + 1e-8 * scale
    assert result.converged and result.stop_value <= 1e-2


def test_frank_wolfe_gap_decreases_to_a_tight_certificate():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((25, 3))
    Y = (X @ rng.standard_normal((3, 4)) + 0.5 * rng.standard_normal((25, 4)) > 0).astype(int)
    problem = rs.make_problem(make_kernel("linear")(X), Y, 1.0)
    reference, _, _ = cvxpy_dual_solution(problem)
    result = frank_wolfe(problem, tol=1e-4, max_iter=20000)
    dual = result.history["dual"]
    assert all(later >= earlier - 1e-12 for earlier, later in zip(dual, dual[1:]))  # exact line search
    assert reference - dual[-1] <= result.history["fw_gap"][-1] + 1e-9
    assert result.stop_value <= 1e-4


def test_biases_from_multipliers_lp_and_kkt_agree():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 3))
    Y = (X @ rng.standard_normal((3, 4)) + rng.standard_normal((30, 4)) > 0.3).astype(int)
    problem = rs.make_problem(make_kernel("rbf", 0.5)(X), Y, 2.0)
    value, alpha, b_multiplier = cvxpy_dual_solution(problem)
    beta = problem.scatter(alpha)
    for b in (b_multiplier, rs.optimal_biases(problem, alpha), rs.bias_from_kkt(problem, alpha)):
        assert relative_difference(rs.primal_objective(problem, beta, b), value) <= CVXPY.objective


@pytest.mark.parametrize("scale", [1e77, 1e20, 1.0, 1e-23])
def test_linear_minimizer_is_exact_at_any_scale_of_the_cost(scale):
    """The fuzz harness's RankSVM(kernel="poly") on ten equal rows (gamma = 1 / a round-off
    variance, as gamma="scale" was on them; K ≈ 1.1e94): the gradient at 5.6e77 reached HiGHS, which reads a cost ≥ 1e20 as
    infinite and returned model status Unknown (a raw RuntimeError); at 1e-23 it returned the
    vertex 0 and multiplier 0 (below its absolute tolerances). The LP is solved on scaled data:
    the vertex does not depend on a positive factor of the cost, and the biases scale with it."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((8, 2))
    Y = (rng.random((8, 3)) < 0.5).astype(int)
    Y[0], Y[1] = [1, 0, 0], [0, 1, 1]
    problem = rs.make_problem(make_kernel("rbf", "scale", X=X)(X), Y, 1.0)
    cost = rs.dual_gradient(problem, np.zeros(problem.n_pairs)) + rng.standard_normal(problem.n_pairs)
    vertex, b = rs.linear_minimizer(problem, cost)
    scaled_vertex, scaled_b = rs.linear_minimizer(problem, scale * cost)
    np.testing.assert_allclose(scaled_vertex, vertex, rtol=0, atol=1e-12 * np.max(problem.upper))
    np.testing.assert_allclose(scaled_b, scale * b, rtol=1e-9, atol=0)
    # it is the LP's optimum: no vertex of the box on the equalities costs less (reduced costs)
    reduced = cost + problem.equality_adjoint(b)
    assert np.all(reduced[vertex <= 0.0] >= -1e-9) and np.all(reduced[vertex >= problem.upper] <= 1e-9)


def weston_watkins_cvxpy(X, y, n_classes, C):
    """Weston & Watkins (1999), linear, written directly:
    min ½ Σ_k ‖w_k‖² + C Σ_i Σ_{k≠y_i} ξ_ik  s.t.  ⟨w_{y_i} − w_k, x_i⟩ + b_{y_i} − b_k ≥ 1 − ξ_ik, ξ ≥ 0."""
    W = cp.Variable((X.shape[1], n_classes))
    b = cp.Variable(n_classes)
    constraints, slacks = [], []
    for i in range(X.shape[0]):
        for k in range(n_classes):
            if k != y[i]:
                xi = cp.Variable(nonneg=True)
                slacks.append(xi)
                constraints.append(X[i] @ (W[:, y[i]] - W[:, k]) + b[y[i]] - b[k] >= 1 - xi)
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W) + C * cp.sum(cp.hstack(slacks))), constraints)
    return solve(problem, "CLARABEL")


@pytest.mark.parametrize("n_classes", [3, 4])
def test_single_label_rank_svm_is_weston_watkins(n_classes):
    """|Y_i| = 1: weight 1/(|Y_i||Ȳ_i|) = 1/(Q − 1), so Rank-SVM(C) = Weston–Watkins(C/(Q − 1))."""
    rng = np.random.default_rng(n_classes)
    X = rng.standard_normal((24, 3))
    y = np.arange(24) % n_classes
    X += 1.5 * rng.standard_normal((n_classes, 3))[y]
    C = 2.0
    problem = rs.make_problem(make_kernel("linear")(X), np.eye(n_classes, dtype=int)[y], C)
    result = proximal_alm(problem, tol=1e-9)
    rank_value = rs.primal_objective(problem, problem.scatter(result.dual["alpha"]), result.primal["b"])
    assert relative_difference(rank_value, weston_watkins_cvxpy(X, y, n_classes, C / (n_classes - 1))) <= EXACT.objective


def test_two_labels_one_each_is_the_binary_c_svm():
    """Q = 2, one label each: one pair per instance with weight 1, and at the optimum w_1 = −w_2
    = w/2, b_1 − b_2 = b, so ½(‖w_1‖² + ‖w_2‖²) = ¼‖w‖²: Rank-SVM(C) = ½ · C-SVM(2C), with
    f_svm = f_1 − f_2 and y = +1 for label 1."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 2))
    y = np.where(X[:, 0] + 0.7 * rng.standard_normal(30) > 0, 1.0, -1.0)
    Y = np.column_stack([y > 0, y < 0]).astype(int)
    gram = make_kernel("rbf", 0.7)(X)
    C = 0.8
    problem = rs.make_problem(gram, Y, C)
    result = proximal_alm(problem, tol=1e-10)
    beta, b = problem.scatter(result.dual["alpha"]), result.primal["b"]
    svm = bsvm.BinarySVMProblem(gram, y, 2.0 * C, "hinge", "free")
    svm_value = solve(bsvm.cvxpy_primal(svm)[0], "CLARABEL")
    assert relative_difference(rs.primal_objective(problem, beta, b), 0.5 * svm_value) <= EXACT.objective
    svm_dual, svm_variables = bsvm.cvxpy_dual(svm)
    svm_alpha = svm_variables["alpha"]
    solve(svm_dual, "CLARABEL")
    scores = rs.decision_function(beta, b, gram)
    svm_scores = gram @ (y * svm_alpha.value) + bsvm.bias_from_dual(svm, np.clip(svm_alpha.value, 0, 2 * C), svm_dual.constraints[-1].dual_value)
    assert np.allclose(scores[:, 0] - scores[:, 1], svm_scores, atol=1e-5)


def test_interior_point_refuses_a_factor_of_the_wrong_shape_or_too_large_a_system():
    X = np.random.default_rng(1).standard_normal((8, 2))
    Y = np.eye(8, 3, dtype=int)[:, ::-1] | np.eye(8, 3, dtype=int)
    problem = rs.make_problem(X @ X.T, Y, 1.0)
    with pytest.raises(ValueError, match=r"factor must have shape \(8, r\)"):
        interior_point(problem, X[:5])
    too_wide = np.zeros((8, MAX_SYSTEM_SIZE // 3 + 1))
    with pytest.raises(ValueError, match=r"size Q\(rank \+ 1\) − 1 = 4004 > 4000.*use solver='fast' .*'bcd' or "
                                         r"'alm' \(mlsvm.solvers.rank_svm_bcd.instance_bcd, "
                                         r"mlsvm.solvers.rank_svm_alm.proximal_alm\)"):
        interior_point(problem, too_wide)


def test_interior_point_warns_with_the_gap_when_stopped_early():
    X = np.random.default_rng(2).standard_normal((20, 3))
    Y = (np.random.default_rng(3).random((20, 4)) < 0.5).astype(int)
    Y[0] = [1, 0, 0, 0]
    problem = rs.make_problem(X @ X.T, Y, 10.0)
    with pytest.warns(ConvergenceWarning, match=r"reached \d\.\d+e[-+]\d+, tolerance asked 1.0e-12"):
        result = interior_point(problem, X, tol=1e-12, max_iter=3)
    assert not result.converged and result.n_iter == 3


def test_interior_point_two_pair_closed_form():
    """x = (1, −1), Y = ([1, 0], [0, 1]), u = C per pair. With δ = w₁ − w₂ and c = b₁ − b₂ the
    margins are δ + c and δ − c; the primal is min ½(w₁² + w₂²) + C(ξ₁ + ξ₂), minimised at c = 0,
    w = (δ/2, −δ/2), value δ²/4 + 2C·max(0, 1 − δ): δ* = 1 for C > ¼, value ¼. Then
    w₁ = α₁ + α₂ = ½ and the equality α₁ − α₂ = 0 give α* = (¼, ¼), both free (so b is determined)."""
    X = np.array([[1.0], [-1.0]])
    Y = np.array([[1, 0], [0, 1]])
    problem = rs.make_problem(X @ X.T, Y, 10.0)
    result = interior_point(problem, X, tol=1e-12)
    beta, b = result.primal["beta"], result.primal["b"]
    assert np.allclose(X.T @ beta, [[0.5, -0.5]], atol=1e-9)
    assert np.allclose(b, 0.0, atol=1e-9)
    assert np.allclose(result.dual["alpha"], 0.25, atol=1e-9)
    assert rs.primal_objective(problem, beta, b) == pytest.approx(0.25, abs=1e-9)


def _unshifted_problem():
    """40 points with 3 features and 3 labels, and the optimum of their problem by CLARABEL."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 3))
    Y = (rng.random((40, 3)) < 0.4).astype(int)
    Y[0] = [1, 0, 0]
    reference, _, _ = cvxpy_dual_solution(rs.make_problem(X @ X.T, Y, 1.0))
    return X, Y, reference


SHIFTED_SOLVES = {"ipm": lambda problem, X: interior_point(problem, X, tol=1e-8),
                  "alm-gram": lambda problem, X: proximal_alm(problem, tol=1e-8),
                  "alm-features": lambda problem, X: proximal_alm(problem, tol=1e-8, factor=X)}


@pytest.mark.parametrize("solver", sorted(SHIFTED_SOLVES))
@pytest.mark.parametrize("shift", [100.0, 1e3])
def test_exact_solvers_are_invariant_to_a_feature_shift(shift, solver):
    """A shift of every feature is absorbed by the biases (LW + 1bᵀ with b ← b − Wᵀshift), so the
    optimum is that of the unshifted problem. Uncentred, features around 100 (scikit-learn's
    check_fit_idempotent data) made the interior point's reduced Newton system singular to
    round-off, and the kernel's constant mode (eigenvalue about n·shift²) made every ALM subproblem
    stiff: the ALM, with its products through the Gram matrix or through the features, stopped as
    stalled at a stopping value of 7.5e-5 (shift 100) and 0.95 (shift 1000)."""
    X, Y, reference = _unshifted_problem()
    shifted = X + shift
    problem = rs.make_problem(shifted @ shifted.T, Y, 1.0, check_psd=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = SHIFTED_SOLVES[solver](problem, shifted)
    assert_exact_optimum(problem, result, reference)


@pytest.mark.parametrize("solver", ["ipm", "alm"])
@pytest.mark.parametrize("shift", [1e4, 1e5])
def test_exact_solvers_certify_features_far_from_the_origin(shift, solver):
    """The problem above built as the estimator builds it for the linear kernel (the features, no
    Gram matrix), shifted by 10⁴ and 10⁵. The interior point converted its biases back from the
    centred ones through ``Wᵀm``, which left the round-off of the scores ``X(Xᵀβ)`` (about
    ε·shift²·Σ|β|, nearly the same in every row) in every score: it stopped as stalled with a
    certificate KKT residual of 7.6e-8 (10⁴) and 4.0e-6 (10⁵). The ALM, uncentred, stalled near 1.
    ``uncentred_biases`` forms ``Kβ`` as the scores are formed, and absorbs that round-off."""
    X, Y, reference = _unshifted_problem()
    shifted = X + shift
    problem = rs.make_problem(None, Y, 1.0, features=shifted)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        if solver == "ipm":
            result = interior_point(problem, shifted, tol=1e-8)
        else:
            result = proximal_alm(problem, tol=1e-8, factor=shifted)
    assert_exact_optimum(problem, result, reference)


@pytest.mark.parametrize("tol", [1e-6, 1e-8])
def test_fast_route_certifies_standardised_emotions_shifted_far_from_the_origin(tol):
    """Emotions[:120], standardised, then every feature shifted by 10⁴: the estimator's default
    route (the interior point) stopped as stalled at a relative gap of 2.2e-5 even at tol 1e-6
    (the biases' conversion above). The shift is absorbed by the biases, so the optimum is the
    unshifted problem's, which the interior point certifies at tol 1e-10."""
    emotions = load_emotions()
    X, Y = StandardScaler().fit_transform(emotions.X[:120]), emotions.Y[:120]
    unshifted = rs.make_problem(None, Y, 1.0, features=X)
    reference = certified_interior_optimum(unshifted, X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = RankSVM(tol=tol).fit(X + 1e4, Y)
    report = model.fit_report_
    assert report.converged and report.solver == "ipm"
    assert abs(report.relative_gap) <= tol and report.max_kkt <= tol
    assert relative_difference(report.primal_objective, reference) <= EXACT.objective


def _raw_emotions(n=100, C=10.0):
    """emotions[:n] as MULAN ships it (features up to 237, ‖x‖² up to 7e4), linear kernel."""
    emotions = load_emotions()
    X, Y = emotions.X[:n], emotions.Y[:n]
    return rs.make_problem(X @ X.T, Y, C, check_psd=False, features=X), X


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_interior_point_newton_step_is_refined_on_the_full_system(seed):
    """With D spanning 16 decades, as near the optimum, the elimination's Δα = D⁻¹(rhs − margins)
    cancels: the normwise backward error of the full Newton system (``(P + D)Δα + AᵀΔν = rhs``,
    ``AΔα = −Aα``, here with P through the dense centred Gram matrix) is ≥ 1e-5; the refined
    step's is ≤ 1e-6."""
    problem, X = _raw_emotions()
    centred = X - X.mean(axis=0)
    model = _ReducedNewton(problem, centred)
    rng = np.random.default_rng(seed)
    T = problem.n_pairs
    inverse_d = 10.0 ** -rng.uniform(-8, 8, T)
    model.factorize(inverse_d)
    rhs, balance = rng.standard_normal(T), problem.equality @ rng.random(T)   # Aα: consistent

    def backward_error(step):
        d_alpha, d_nu = step
        applied = problem.gather(centred @ centred.T @ problem.scatter(d_alpha) + d_nu[None, :]) + d_alpha / inverse_d
        equality = problem.equality @ d_alpha
        residual = np.hypot(np.linalg.norm(rhs - applied), np.linalg.norm(balance + equality))
        return residual / (np.hypot(np.linalg.norm(rhs), np.linalg.norm(balance))
                           + np.hypot(np.linalg.norm(applied), np.linalg.norm(equality)))
    assert backward_error(model._eliminate(rhs, balance)) >= 1e-5
    assert backward_error(model.solve(rhs, balance)) <= 1e-6


def test_interior_point_certifies_raw_emotions_with_c_10():
    """Before its Newton steps were refined the interior point stalled here at a gap of 5.9e-7
    (tol 1e-8), from C = 10 on; CLARABEL gives the reference optimum."""
    problem, X = _raw_emotions()
    reference, _, _ = cvxpy_dual_solution(problem)
    result = interior_point(problem, X, tol=1e-8)
    assert_exact_optimum(problem, result, reference)


def test_alm_is_not_stopped_as_stalled_while_its_envelope_still_falls():
    """Explore seed 2553's draw (rounded): one feature, two equal rows. The gap, evaluated at the
    multipliers, dipped to 1.5e-7 at the fifth outer iteration and then descended from 5.9e-6; the
    stall rule (ten iterations without halving the best) stopped the ALM at 1.4e-6 with "no further
    progress", two iterations before it certifies 6.7e-12. Now a run whose largest stopping value
    over the window still falls is not stalled."""
    X = np.array([[-0.58759269], [0.29974904], [0.19853132], [0.19853132], [-0.32710169], [-0.01710639]])
    Y = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 0], [0, 1, 1], [0, 1, 0], [0, 0, 1]])
    problem = rs.make_problem(make_kernel("linear")(X), Y, 1.0)
    reference, _, _ = cvxpy_dual_solution(problem)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = proximal_alm(problem, tol=1e-8, max_iter=500)
    assert_exact_optimum(problem, result, reference)


def test_alm_certifies_standardised_emotions():
    """Standardised emotions[:400]: 72 features for 2,861 pairs, so P is far from full rank. With
    projected Newton alone each subproblem from the second on used its 200 steps (every Newton
    direction sent hundreds of variables to a bound and the Armijo search cut the step to about
    1 % of the box), and the ALM stopped as stalled at 3.7e-2 (tol 1e-6). L-BFGS-B now finds the
    active set first; the interior point gives the reference optimum."""
    emotions = load_emotions()
    X = StandardScaler().fit_transform(emotions.X[:400])
    problem = rs.make_problem(X @ X.T, emotions.Y[:400], 1.0, features=X)
    reference = certified_interior_optimum(problem, X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = proximal_alm(problem, tol=1e-6, factor=X)
    assert_exact_optimum(problem, result, reference)


def test_alm_inner_solves_end_at_round_off_not_at_their_step_budget():
    """Issue 14's 40 points (rbf) at tol = 1e-300: once ρ reaches 760 the projected gradient of
    the inner problem does not fall below about 1e-12, and every inner solve then took its 200
    projected-Newton steps (a 23 s fit, stalled). Now they end when ten steps in a row, within 100
    times the gradient's round-off, do not halve it; the fit still ends stalled, warned."""
    data = make_multilabel(n_samples=40, n_features=5, n_labels=4, random_state=0)
    steps, original = [], alm._projected_newton

    def counted(*args):
        result = original(*args)
        steps.append(result[2])
        return result

    with patch.object(alm, "_projected_newton", counted), pytest.warns(ConvergenceWarning, match="stalled"):
        report = RankSVM(kernel="rbf", solver="alm", tol=1e-300).fit(data.X, data.Y).fit_report_
    assert not report.converged
    assert max(steps) < inspect.signature(proximal_alm).parameters["inner_max_iter"].default


def test_the_multiplier_schedule_stalls_on_a_flat_envelope_only():
    schedule = MultiplierSchedule(window=3, rho_cap=1.0)
    # a dip, then a steady descent above it: no stall
    assert not any(schedule.stalled(value) for value in [1.0, 1e-3, 0.5, 0.3, 0.2, 0.1, 0.05, 0.03, 0.02])
    schedule = MultiplierSchedule(window=3, rho_cap=1.0)
    # a dip, then values that go up and down with no trend: a stall, three iterations after the dip
    stops = [schedule.stalled(value) for value in [0.5, 1e-3, 0.5, 0.4, 0.5, 0.45, 0.5]]
    assert stops == [False, False, False, False, True, True, True]
