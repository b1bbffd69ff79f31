"""OvN formulation: the derived dual equals the primal (four variants, linear and kernel, awkward
labels), the closed form for empty classes, the ε-smoothing bound of MM, bad input."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsvm.formulations import ovn
from mlsvm.kernels import make_kernel
from mlsvm.solvers.cvxpy_tools import GroundTruthError, solve, solve_checked, solve_first_optimal
from mlsvm.report import relative_difference
from mlsvm.verification.tolerances import BACKEND_AGREEMENT, tolerance
from ovn_strategies import FLAT_LABELS, FLAT_X, ovn_problems

EXACT = tolerance("ovn", "cvxpy")


@settings(max_examples=25)
@given(ovn_problems())
def test_primal_equals_dual_and_the_dual_point_is_optimal(drawn):
    """The dual is solved by the first backend that answers 'optimal' (cvxpy_tools.solve's policy):
    Clarabel, then OSQP (polished, so its multipliers are exact on the active set; ECOS's
    equal-mass multipliers were 1e-6 off on the case below), then ECOS. With a duplicated point the
    dual's Λ is not unique and Clarabel can stop at 'optimal_inaccurate' (a random hypothesis run:
    10 points, RBF), which is never accepted as ground truth."""
    problem, _, _ = drawn
    primal = solve(ovn.cvxpy_primal(problem)[0], "CLARABEL")
    (dual_cvx, variables), value, _ = solve_first_optimal(lambda: ovn.cvxpy_dual(problem),
                                                          ("CLARABEL", "OSQP", "ECOS"))
    dual = -value
    assert relative_difference(primal, dual) <= BACKEND_AGREEMENT
    # the dual point, mapped to the primal (A = ΛS, b = equal-mass multipliers), is primal optimal
    Lam = np.clip(variables["Lam"].value, 0.0, problem.beta)
    b = np.asarray(dual_cvx.constraints[-1].dual_value, dtype=float)
    A = ovn.coef_from_dual(problem, Lam)
    assert relative_difference(ovn.primal_objective(problem, A, b), primal) <= EXACT.objective
    assert relative_difference(ovn.dual_objective(problem, Lam, variables["nu"].value), primal) <= EXACT.objective
    assert max(ovn.kkt_residuals(problem, Lam, b, variables["nu"].value, A=A).values()) <= EXACT.kkt


def test_dual_with_a_duplicated_point_found_by_hypothesis():
    """Clarabel answers 'optimal_inaccurate' on this dual (rows 0 and 1 equal); OSQP solves it, the
    dual point is primal optimal (measured 2.4e-12), and primal = dual."""
    X = np.array([[0.12573022, -0.13210486, 0.64042265], [0.12573022, -0.13210486, 0.64042265],
                  [1.30400005, 0.94708096, -0.70373524], [-1.26542147, -0.62327446, 0.04132598],
                  [-2.32503077, -0.21879166, -1.24591095], [-0.73226735, -0.54425898, -0.31630016],
                  [0.41163054, 1.04251337, -0.12853466], [1.36646347, -0.66519467, 0.35151007],
                  [0.90347018, 0.0940123, -0.74349925], [-0.92172538, -0.45772583, 0.22019512]])
    Y = np.array([[1, 1, 1]] * 5 + [[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=np.int8)
    problem = ovn.OvNProblem(make_kernel("rbf", "scale", X=X)(X), Y, 0.25, 1.0, "soft", "soft", 0.1, None)
    with pytest.raises(GroundTruthError, match="optimal_inaccurate"):
        solve(ovn.cvxpy_dual(problem)[0], "CLARABEL")
    test_primal_equals_dual_and_the_dual_point_is_optimal.hypothesis.inner_test((problem, X, "rbf"))


@settings(max_examples=8)
@given(ovn_problems(structures=("random", "overlapping")))
def test_primal_and_dual_agree_on_a_second_backend(drawn):
    """ECOS is the cross-check; on degenerate draws (e.g. a rank-1 Gram matrix with β = 10) it may
    only reach 'optimal_inaccurate', which is never accepted: OSQP (SPEC §3's third backend) then
    stands in, and must agree just the same."""
    problem, _, _ = drawn
    for backend in ("ECOS", "OSQP"):
        try:
            agreement = solve_checked(lambda: ovn.cvxpy_dual(problem)[0], solvers=("CLARABEL", backend))
            primal = solve(ovn.cvxpy_primal(problem)[0], backend)
        except GroundTruthError:
            if backend == "OSQP":
                raise
            continue
        assert relative_difference(primal, -agreement.values[backend]) <= BACKEND_AGREEMENT
        assert relative_difference(primal, -agreement.values["CLARABEL"]) <= BACKEND_AGREEMENT
        return


@settings(max_examples=10)
@given(ovn_problems(structures=("empty class",)))
def test_empty_class_closed_form_is_optimal(drawn):
    problem, _, _ = drawn
    A, b, Lam, nu = ovn.empty_class_solution(problem)
    primal = solve(ovn.cvxpy_primal(problem)[0], "CLARABEL")
    assert relative_difference(ovn.primal_objective(problem, A, b), primal) <= EXACT.objective
    assert ovn.dual_objective(problem, Lam, nu) == 0.0
    if problem.b_constraint == "hard":
        assert abs(b.sum()) <= EXACT.kkt


def test_hard_w_kernel_coefficients_sum_to_zero_per_sample():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((12, 2)), (rng.random((12, 3)) < 0.5).astype(np.int8)
    Y[0] = 1
    problem = ovn.OvNProblem(np.exp(-((X[:, None] - X[None]) ** 2).sum(-1)), Y, w_constraint="hard")
    A = ovn.coef_from_dual(problem, rng.random(Y.shape))
    np.testing.assert_array_less(np.abs(A.sum(axis=1)), EXACT.kkt)  # Σ_k a_ki = 0 (eq. 16)


def _smoothed_optimum(problem: ovn.OvNProblem, epsilon: float) -> float:
    """min F_ε by CVXPY: h_ε(r) = huber(pos(r + ε), 2ε)/(4ε) is the ε-floored hinge."""
    cvx, variables = ovn.cvxpy_primal(problem)
    b = variables["b"]
    smooth = cp.huber(cp.pos(1 - variables["scores"] + epsilon), 2 * epsilon) / (4 * epsilon)
    objective = variables["regularizer"] + problem.beta * cp.sum(cp.multiply(problem.Y.astype(float), smooth))
    if problem.soft_b:
        objective = objective + problem.gamma_b * cp.square(cp.sum(b))
    return solve(cp.Problem(cp.Minimize(objective), cvx.constraints), "CLARABEL")


@pytest.mark.parametrize("epsilon", [1e-1, 1e-2])
@pytest.mark.parametrize("w_constraint, b_constraint", [("soft", "hard"), ("hard", "soft")])
def test_epsilon_floor_costs_at_most_beta_eps_T_over_4(epsilon, w_constraint, b_constraint):
    """docs/ovn.md: MM with the floor minimizes F_ε, and F* ≤ F_ε* ≤ F* + βεT/4."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((25, 3))
    Y = (X @ rng.standard_normal((3, 3)) + 0.5 * rng.standard_normal((25, 3)) > 0).astype(np.int8)
    problem = ovn.OvNProblem(X @ X.T, Y, alpha=0.4, beta=3.0, w_constraint=w_constraint,
                             b_constraint=b_constraint, gamma_b=0.5, features=X)
    optimum = solve(ovn.cvxpy_primal(problem)[0], "CLARABEL")
    smoothed = _smoothed_optimum(problem, epsilon)
    bound = problem.beta * epsilon * Y.sum() / 4
    assert optimum - EXACT.objective * max(1.0, optimum) <= smoothed <= optimum + bound
    assert smoothed - optimum > 0  # the smoothing is not free here: the bound is not vacuous


def test_refuses_non_convex_alpha_and_bad_hyperparameters():
    gram, Y = np.eye(4), np.eye(4, 3, dtype=np.int8)
    with pytest.raises(ValueError, match="positive definite.*Appendix A"):
        ovn.OvNProblem(gram, Y, alpha=1.0)
    with pytest.raises(ValueError, match="alpha must lie in"):
        ovn.OvNProblem(gram, Y, alpha=-0.5)  # −1/(K−1) = −0.5 is on the boundary
    ovn.OvNProblem(gram, Y, alpha=-0.5, w_constraint="hard")  # α unused by hard w
    with pytest.raises(ValueError, match="beta"):
        ovn.OvNProblem(gram, Y, beta=0.0)
    with pytest.raises(ValueError, match="gamma_b"):
        ovn.OvNProblem(gram, Y, b_constraint="soft", gamma_b=0.0)
    with pytest.raises(ValueError, match="w_constraint"):
        ovn.OvNProblem(gram, Y, w_constraint="medium")


@pytest.mark.parametrize("w_constraint", ovn.CONSTRAINTS)
@pytest.mark.parametrize("K", [1, 2, 5])
def test_dual_metric_coefficients_reproduce_S(w_constraint, K):
    """The fast solver's nested Woodbury relies on S = s₀I + s₁11ᵀ with the closed forms stated."""
    alpha = 0.3
    problem = ovn.OvNProblem(np.eye(3), np.ones((3, K), dtype=np.int8), alpha=alpha, w_constraint=w_constraint)
    s0, s1 = ovn.dual_metric_coefficients(problem)
    np.testing.assert_allclose(s0 * np.eye(K) + s1, problem.dual_metric, atol=1e-14)
    if w_constraint == "soft" and K > 1:
        np.testing.assert_allclose([s0, s1], [1 / (1 - alpha), -alpha / ((1 - alpha) * (1 - alpha + K * alpha))])
    elif w_constraint == "hard" and K > 1:
        np.testing.assert_allclose([s0, s1], [1.0, -1.0 / K])


# ---- the biases at fixed weights: optimal, and canonical on a flat face --------------------------

def _bias_value(problem, scores, b):
    cls = problem.members[1]
    value = problem.beta * np.maximum(0.0, 1.0 - scores - b[cls]).sum()
    return value + (problem.gamma_b * b.sum() ** 2 if problem.soft_b else 0.0)


def _assert_canonical(problem, scores, b):
    """b minimises the primal in b (against CVXPY's optimum), lies in every class's range over the
    optimal face, and sits at one common fraction θ of those ranges (θ = ½ for two classes with
    hard b). The ranges: the face is the hinge's level set at its least value on the plane
    ``Σb = s`` (s = 0 for hard b; for soft b the unique optimal sum, taken from b once b is shown
    optimal); two LPs per class find each b_k's ends, with the level relaxed by 1e-9."""
    cls = problem.members[1]
    bias = cp.Variable(problem.n_classes)
    hinge = problem.beta * cp.sum(cp.pos(1.0 - scores - bias[cls]))
    if problem.soft_b:
        optimum = solve(cp.Problem(cp.Minimize(hinge + problem.gamma_b * cp.square(cp.sum(bias)))), "CLARABEL")
    else:
        optimum = solve(cp.Problem(cp.Minimize(hinge), [cp.sum(bias) == 0]), "CLARABEL")
        assert abs(b.sum()) <= 1e-12 * max(1.0, np.max(np.abs(b)))
    assert _bias_value(problem, scores, b) <= optimum + 1e-9 * max(1.0, optimum)
    plane = [cp.sum(bias) == b.sum()]
    least = solve(cp.Problem(cp.Minimize(hinge), plane), "CLARABEL")
    face = plane + [hinge <= least + 1e-9 * max(1.0, least)]

    def end(sense, k):   # a face that is a point can leave Clarabel at 'optimal_inaccurate'
        return solve_first_optimal(lambda: cp.Problem(sense(bias[k]), face), ("CLARABEL", "ECOS", "OSQP"))[1]

    lo, hi = (np.array([end(sense, k) for k in range(problem.n_classes)]) for sense in (cp.Minimize, cp.Maximize))
    assert np.all(lo - 1e-6 <= b) and np.all(b <= hi + 1e-6)
    wide = hi - lo > 1e-4
    theta = (b[wide] - lo[wide]) / (hi[wide] - lo[wide])
    np.testing.assert_allclose(theta, theta[:1].repeat(theta.size), atol=1e-4)
    if problem.n_classes == 2 and not problem.soft_b and wide.any():
        assert theta[0] == pytest.approx(0.5, abs=1e-4)
    return lo, hi


@settings(max_examples=25)
@given(ovn_problems(structures=("random", "one-member class", "overlapping")), st.integers(0, 2**31 - 1))
def test_optimal_biases_minimise_the_primal_in_b_at_any_weights(drawn, seed):
    """At random weights (rounded scores: ties among the kinks) the optimal biases of the hard-b
    primal form a wide face on most draws; with soft b the sum s = ν/(2γ) is unique and may fall
    strictly between two faces. Checked against CVXPY's LPs, each class's range over the face."""
    problem, _, _ = drawn
    rng = np.random.default_rng(seed)
    scores = np.round(rng.standard_normal(problem.members[0].size) * rng.choice([0.3, 1.0, 3.0]), 1)
    _assert_canonical(problem, scores, ovn.optimal_biases(problem, scores))


FLAT_Y = np.eye(3, dtype=np.int8)[FLAT_LABELS]   # the seed-2526 face (ovn_strategies)


def test_optimal_biases_on_a_flat_face_at_the_optimum():
    problem = ovn.OvNProblem(None, FLAT_Y, alpha=0.2, beta=1.0, features=FLAT_X)
    cvx, variables = ovn.cvxpy_primal(problem)
    solve(cvx, "CLARABEL")
    sample, cls = problem.members
    scores = (FLAT_X @ variables["V"].value)[sample, cls]
    b = ovn.optimal_biases(problem, scores)
    lo, hi = _assert_canonical(problem, scores, b)
    assert hi[0] - lo[0] > 1.9 and hi[2] - lo[2] > 1.9 and hi[1] - lo[1] < 1e-6
    np.testing.assert_allclose(b, [0.5 * (lo[0] + hi[0]), 1.0, 0.5 * (lo[2] + hi[2])], atol=1e-6)


def test_optimal_biases_need_a_member_in_every_class():
    problem = ovn.OvNProblem(np.eye(3), np.array([[1, 0], [1, 0], [0, 0]], dtype=np.int8))
    with pytest.raises(ValueError, match="member in every class.*empty_class_solution"):
        ovn.optimal_biases(problem, np.zeros(2))
