"""The Rank-SVM decomposition's iterative free-set step (mlsvm/solvers/rank_svm_decomposition.py,
:func:`_free_set_cg`): one step keeps the box and the equalities and never increases the dual
objective f, without bound hits it is the equality-constrained QP's solution (:func:`_equality_qp`,
a dense direct solve), and the whole solver with the step forced at every full check is CVXPY's
optimum on two backends (drawn problems and awkward label structures)."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from mlsvm.formulations import rank_svm as rs
from mlsvm.kernels import make_kernel
from mlsvm.solvers import rank_svm_decomposition as module
from mlsvm.solvers.rank_svm_decomposition import _equality_qp, _free_set_cg, decomposition
from tests.test_rank_svm_decomposition import (SOLVER_TOL, _awkward, assert_certified_cvxpy_optimum, record_calls,
                                               kernel_problems)


def _state(problem, alpha):
    """Internal arrays of a problem (in its own pair order) and the gradient at α."""
    pairs = problem.pairs
    kernel_beta = problem.kernel_matrix @ problem.scatter(alpha)
    gradient = kernel_beta[pairs.instance, pairs.relevant] - kernel_beta[pairs.instance, pairs.irrelevant] - 1.0
    return pairs.instance, pairs.relevant, pairs.irrelevant, gradient


def _objective(problem, alpha):
    return -rs.dual_objective(problem, alpha)                  # f = −dual, minimised


def _interior_point(problem, seed):
    """A feasible α with many free pairs: a partly converged decomposition run."""
    result = decomposition(problem, tol=1e-2, max_iter=3 + seed % 5, working_set_size=8)
    return result.dual["alpha"]


@st.composite
def stepped(draw):
    problem, _ = draw(kernel_problems())
    return problem, draw(st.integers(0, 20)), draw(st.sampled_from([1, 3, 30, 500]))


@given(stepped())
@settings(max_examples=30)
def test_one_step_is_feasible_and_never_increases_f(drawn):
    problem, seed, budget = drawn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)     # stopped early on purpose
        alpha = _interior_point(problem, seed)
    upper = problem.upper
    free = np.flatnonzero((alpha > 0.0) & (alpha < upper))
    if free.size == 0:
        return
    instance, relevant, irrelevant, gradient = _state(problem, alpha)
    step = _free_set_cg(problem.kernel_matrix, instance, relevant, irrelevant, alpha, upper, gradient, free,
                        problem.n_labels, max_iter=budget)
    if step is None:
        return
    new, instances, beta_change = step
    after = alpha.copy()
    after[free] = new
    assert np.all(after >= 0.0) and np.all(after <= upper)
    scale = max(1.0, float(np.max(upper)))
    assert np.max(np.abs(problem.equality @ after)) <= 1e-12 * scale + np.max(np.abs(problem.equality @ alpha))
    assert _objective(problem, after) <= _objective(problem, alpha) + 1e-12 * max(1.0, abs(_objective(problem, alpha)))
    # the returned Δβ is the scatter of the change on the instances returned
    full = problem.scatter(after) - problem.scatter(alpha)
    assert np.allclose(full[instances], beta_change, atol=1e-14)
    assert np.allclose(np.delete(full, instances, axis=0), 0.0, atol=1e-14)


@pytest.mark.parametrize("seed, n, q", [(3, 12, 4), (8, 12, 4), (5, 20, 4), (0, 30, 5), (0, 50, 5)])
def test_without_bound_hits_the_step_is_the_equality_qp_solution(seed, n, q):
    """A strictly convex problem (RBF, distinct points), α in the middle of the box and a small
    gradient: CG reaches the equality-constrained QP's solution inside the box, which the dense
    direct solve (:func:`_equality_qp`) gives independently. Its budget and tol let it run past
    the residual's round-off floor: without the residual update (r less its multiplier part
    after each projection) the iterates then drifted off A_F d = 0 and the step ended 0.5–10 %
    short of the QP's decrease on these problems (seed 3 under OpenBLAS's Prescott kernels
    only, the others under the native ones)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    Y = (rng.random((n, q)) < 0.5).astype(int)
    first, last = np.eye(q, dtype=int)[[0, -1]]
    Y[0], Y[1] = first, 1 - first - last          # q = 4: [1, 0, 0, 0] and [0, 1, 1, 0]
    problem = rs.make_problem(make_kernel("rbf", "scale", X=X)(X), Y, 1.0)
    pairs, upper = problem.pairs, problem.upper
    instance, relevant, irrelevant = pairs.instance, pairs.relevant, pairs.irrelevant
    incidence = np.zeros((problem.n_labels, upper.size))
    incidence[relevant, np.arange(upper.size)] = 1.0
    incidence[irrelevant, np.arange(upper.size)] = -1.0
    # a feasible point in the middle of the box: u/2 less its least-norm equality residual
    alpha = 0.5 * upper
    alpha = alpha - incidence.T @ (np.linalg.pinv(incidence @ incidence.T) @ (incidence @ alpha))
    assert np.all((alpha > 0.0) & (alpha < upper)) and np.max(np.abs(incidence @ alpha)) < 1e-14
    # H is singular (an instance's 2 × 2 block of pairs has a cycle that changes no score): a
    # gradient in its range keeps the QP bounded; small, so the QP's solution stays inside
    hessian = problem.kernel_matrix[np.ix_(instance, instance)] * (incidence.T @ incidence)
    gradient = hessian @ np.random.default_rng(5).standard_normal(upper.size)
    gradient *= 1e-4 / np.max(np.abs(gradient))
    free = np.arange(upper.size)
    new, _, _ = _free_set_cg(problem.kernel_matrix, instance, relevant, irrelevant, alpha, upper, gradient, free,
                             problem.n_labels, max_iter=2000, tol=1e-13)
    # the dense QP with the same Hessian (H_st = K(x_i, x_j)(e_k − e_l)ᵀ(e_k' − e_l'))
    change, _ = _equality_qp(hessian, gradient, module._independent_rows(incidence), alpha, alpha, np.ones(alpha.size, bool))
    assert np.all((alpha + change > 0.0) & (alpha + change < upper))
    q = lambda d: float(gradient @ d + 0.5 * d @ hessian @ d)            # noqa: E731
    assert q(new - alpha) <= q(change) + 1e-10 * abs(q(change))
    assert q(new - alpha) < 0.0


@pytest.mark.parametrize("name", ["a label on every row", "a label on no row", "one instance with pairs",
                                  "duplicated rows", "rows with every label or none"])
def test_the_step_forced_at_every_check_matches_cvxpy_on_awkward_labels(monkeypatch, name):
    monkeypatch.setattr(module, "FREE_CG", True)
    monkeypatch.setattr(module, "CHECK_EVERY", 1)
    calls = record_calls(monkeypatch, module, "_free_set_cg")
    problem = _awkward(name)
    result = decomposition(problem, tol=SOLVER_TOL, working_set_size=4)
    if name != "one instance with pairs":
        assert calls                                            # the step ran
    assert_certified_cvxpy_optimum(problem, result)


@given(kernel_problems(), st.sampled_from([1, 30]))
@settings(max_examples=15)
def test_the_step_forced_at_every_check_matches_cvxpy_on_drawn_problems(drawn, budget):
    problem, working_set_size = drawn
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "FREE_CG", True)
        patch.setattr(module, "FREE_CG_ITER", budget)
        patch.setattr(module, "CHECK_EVERY", 1)
        result = decomposition(problem, tol=SOLVER_TOL, working_set_size=working_set_size)
    assert_certified_cvxpy_optimum(problem, result)
