"""The Rank-SVM decomposition's separable guess (mlsvm/solvers/rank_svm_decomposition.py): the
exact line search against bisection, the separable problem and the guessed active-set start
against CVXPY, the row labels of the independent equalities, and the whole solver with every
sub-problem started from the guess against CVXPY on two backends."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from mlsvm.formulations import rank_svm as rs
from mlsvm.kernels import make_kernel
from mlsvm.solvers import rank_svm_decomposition as module
from mlsvm.solvers.cvxpy_tools import REFERENCE_BACKEND, solve
from mlsvm.solvers.rank_svm_decomposition import (_active_set, _independent_rows, _line_root,
                                                  _separable_guess, decomposition)
from tests.test_rank_svm_decomposition import (SOLVER_TOL, _awkward, assert_certified_cvxpy_optimum, record_calls,
                                               kernel_problems, label_graphs)

finite = st.floats(-3.0, 3.0, allow_nan=False)


@st.composite
def lines(draw):
    """``φ'(t) = aᵀclip(p − q t, 0, u) − c`` with ``q = a w`` (w > 0) and ``φ'(0) > 0``."""
    size = draw(st.integers(1, 12))
    start = np.array(draw(st.lists(finite, min_size=size, max_size=size)))
    direction = np.array(draw(st.lists(finite, min_size=size, max_size=size)))
    direction[np.abs(direction) < 1e-3] = 0.0
    weight = np.array(draw(st.lists(st.floats(0.1, 3.0), min_size=size, max_size=size)))
    upper = np.array(draw(st.lists(st.floats(0.1, 2.0), min_size=size, max_size=size)))
    rate = direction * weight
    at_zero = float(direction @ np.clip(start, 0.0, upper))
    # the constant puts φ'(0) = slope > 0 and a root within reach (φ' falls below 0 for large t)
    low = float(direction @ np.where(direction > 0.0, 0.0, upper))       # the limit of aᵀclip as t → ∞
    assume(at_zero - low > 1e-3)                                # φ' does fall below 0
    constant = draw(st.floats(0.01, 0.99)) * (at_zero - low) + low
    return start, rate, direction, upper, at_zero - constant, constant


@given(lines())
def test_line_root_is_the_root_of_the_piecewise_linear_derivative(line):
    start, rate, direction, upper, slope, constant = line

    def derivative(t):
        return float(direction @ np.clip(start - rate * t, 0.0, upper)) - constant

    root = _line_root(start, rate, direction, upper, slope)
    assert root > 0.0
    # φ' is non-increasing: at the root it is 0, or it jumps over 0 there (a flat piece ends)
    scale = 1.0 + float(np.abs(direction) @ upper)
    assert derivative(root * (1.0 - 1e-9) - 1e-12) >= -1e-9 * scale
    assert derivative(root * (1.0 + 1e-9) + 1e-12) <= 1e-9 * scale


@st.composite
def separable_problems(draw):
    """A working set's independent equalities (awkward label graphs), a positive diagonal, a
    gradient and a feasible start: 0, or u on a cycle of arcs (balanced), or a mix."""
    incidence = draw(label_graphs())
    equality = _independent_rows(incidence)
    size = incidence.shape[1]
    diagonal = np.array(draw(st.lists(st.floats(0.2, 4.0), min_size=size, max_size=size)))
    gradient = np.array(draw(st.lists(finite, min_size=size, max_size=size)))
    upper = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=size, max_size=size)))
    old = np.zeros(size)
    if size >= 2 and draw(st.booleans()):
        # an arc and its reverse at the same value keep the equalities
        k, l = np.flatnonzero(incidence[:, 0] > 0)[0], np.flatnonzero(incidence[:, 0] < 0)[0]
        reverse = np.flatnonzero((incidence[k] < 0) & (incidence[l] > 0))
        if reverse.size:
            value = min(upper[0], upper[reverse[0]]) * draw(st.sampled_from([0.5, 1.0]))
            old[0] = old[reverse[0]] = value
    return diagonal, gradient, equality, old, upper


def _flat_case(tail, gradient_tail, diagonal_tail=()):
    """An explore draw (seed 2522): nine pairs from label 1 to the dropped label, then ``tail``'s
    columns, which close a cycle of three labels; ψ is flat along the cycle's potentials (the nine
    pairs pushed to 0). The ridge-scaled part of the Newton step there had sent μ to ~1e8, where
    the cycle's moves fell below its round-off."""
    tail = np.array(tail, dtype=float)
    equality = np.hstack([np.vstack([-np.ones(9), np.zeros((2, 9))]), tail])
    size = equality.shape[1]
    diagonal = np.r_[np.ones(size - len(diagonal_tail)), diagonal_tail]
    return diagonal, np.r_[np.zeros(size - len(gradient_tail)), gradient_tail], equality, np.zeros(size), np.full(size, 0.5)


@given(separable_problems())
@example(drawn=_flat_case([[1, 0, -1], [-1, 1, 0], [0, -1, 1]], [-1.0, 0.0, -1.0, 0.0]))
@example(drawn=_flat_case([[0, -1, -1, 1], [1, 0, 0, -1], [-1, 1, 0, 0]], [-1.0, -1.0], [2.0]))
@example(drawn=(np.array([1.0, 1.0, 0.5, 1.0, 1.0, 1.0]), np.array([0.0, 0.0, 0.0, 0.0, 0.0, -3.0]),
                np.array([[-1.0, -1.0, 1.0, -1.0, -1.0, -1.0], [0.0, 0.0, -1.0, 0.0, 0.0, 0.0]]),
                np.zeros(6), np.full(6, 0.5)))
@example(drawn=(np.r_[np.ones(9), 2.0, 2.0, 0.25], np.r_[0.0, 0.0, -1.0, np.zeros(9)],
                np.array([[1, 1, -1, 0, 0, 1, 1, 1, 1, 1, 1, 0], [-1, 0, 1, 0, 0, -1, -1, -1, -1, -1, -1, 1],
                          [0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, -1], [0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                          [0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0]], dtype=float), np.zeros(12), np.full(12, 0.5)))
@settings(max_examples=30)
def test_separable_guess_solves_the_separable_problem(drawn):
    """With enough Newton steps the guess is the separable QP's optimum (CVXPY, Clarabel). The
    examples are draws of the explore profile and of a 3000-draw run: two duals flat along a cycle of
    labels (:func:`_flat_case`); one whose only feasible point is 0; and one where the line search,
    taking a round-off φ' of 1e-18 for a rise, walked a flat piece to its far end."""
    diagonal, gradient, equality, old, upper = drawn
    y, mu = _separable_guess(diagonal, gradient, equality, old, upper, np.zeros(equality.shape[0]))
    assert np.all(y >= 0.0) and np.all(y <= upper)
    variable = cp.Variable(old.size)
    change = variable - old
    constraints = [variable >= 0, variable <= upper]
    if equality.shape[0]:
        constraints.append(equality @ change == 0)
    objective = cp.Minimize(0.5 * cp.sum(cp.multiply(diagonal, cp.square(change))) + gradient @ change)
    reference = solve(cp.Problem(objective, constraints), REFERENCE_BACKEND)
    value = float(0.5 * (diagonal * (y - old)) @ (y - old) + gradient @ (y - old))
    assert abs(value - reference) <= 1e-6 * max(1.0, abs(reference))
    assert np.max(np.abs(equality @ (y - old)), initial=0.0) <= 1e-9


@given(kernel_problems(), st.integers(0, 2**32 - 1))
@settings(max_examples=20)
def test_the_active_set_from_the_guess_is_the_subproblem_optimum(drawn, seed):
    """A random working set of a problem at a feasible α off 0 (two iterations of the solver): the
    active set started from the separable guess, when it answers (None sends the solver to the
    other routes), is the sub-problem's optimum (CVXPY, Clarabel) and keeps the equalities."""
    problem, _ = drawn
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():                                 # two iterations: a feasible α
        warnings.simplefilter("ignore", ConvergenceWarning)         # off 0, not converged
        alpha = decomposition(problem, tol=1e-12, max_iter=2).dual["alpha"]
    size = min(problem.n_pairs, int(rng.integers(2, 25)))
    working = np.sort(rng.choice(problem.n_pairs, size=size, replace=False))
    pairs = problem.pairs
    rows_of, k_w, l_w = pairs.instance[working], pairs.relevant[working], pairs.irrelevant[working]
    incidence = np.zeros((problem.n_labels, size))
    incidence[k_w, np.arange(size)] = 1.0
    incidence[l_w, np.arange(size)] = -1.0
    hessian = problem.kernel_matrix[np.ix_(rows_of, rows_of)] * (incidence.T @ incidence)
    equality = _independent_rows(incidence)
    beta = problem.scatter(alpha)
    scores = problem.kernel_matrix @ beta
    gradient = scores[rows_of, k_w] - scores[rows_of, l_w] - 1.0
    old, upper = alpha[working], problem.upper[working]
    guess, _ = _separable_guess(np.diagonal(hessian).copy(), gradient, equality, old, upper,
                                np.zeros(equality.shape[0]))
    new = _active_set(hessian, gradient, equality, old, upper, start=guess)
    if new is None:
        return
    variable = cp.Variable(size)
    change = variable - old
    factor = np.linalg.cholesky(hessian + 1e-12 * np.eye(size))
    constraints = [variable >= 0, variable <= upper]
    if equality.shape[0]:
        constraints.append(equality @ change == 0)
    reference = solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(factor.T @ change) + gradient @ change),
                                 constraints), REFERENCE_BACKEND)
    found = new - old
    value = float(gradient @ found + 0.5 * found @ hessian @ found)
    assert value <= reference + 1e-7 * max(1.0, abs(reference))
    assert np.all(new >= 0.0) and np.all(new <= upper)
    assert np.max(np.abs(equality @ found), initial=0.0) <= 1e-12 * max(1.0, float(np.max(upper)))


@given(label_graphs())
def test_independent_rows_name_their_labels_and_the_label_dropped(incidence):
    """Each row kept is the incidence row of the label named, and the label named as dropped from
    its component is touched, not kept, and connected to it (the potentials of the separable guess
    are carried over between sub-problems by these labels)."""
    reduced, labels, grounds = _independent_rows(incidence, labels=True)
    assert np.array_equal(reduced, incidence[labels])
    assert not set(grounds.tolist()) & set(labels.tolist())
    adjacency = (np.abs(incidence) @ np.abs(incidence).T) > 0
    reach = adjacency.copy()
    for _ in range(incidence.shape[0]):
        reach = (reach.astype(float) @ adjacency) > 0
    assert all(reach[label, ground] for label, ground in zip(labels, grounds))


@pytest.mark.parametrize("name", ["a label on every row", "a label on no row", "one instance with pairs",
                                  "duplicated rows", "rows with every label or none"])
def test_every_subproblem_started_from_the_guess_matches_cvxpy(monkeypatch, name):
    """GUESS_FIRST = True: each sub-problem's active set starts from the separable guess (the
    plain start, then the interior point, only when it fails); the certified optimum is CVXPY's."""
    monkeypatch.setattr(module, "GUESS_FIRST", True)
    calls = record_calls(monkeypatch, module, "_separable_guess")
    problem = _awkward(name)
    result = decomposition(problem, tol=SOLVER_TOL, working_set_size=8)
    assert len(calls) >= result.n_iter - 1                     # the guessed start ran every iteration
    assert_certified_cvxpy_optimum(problem, result)


@given(kernel_problems())
@settings(max_examples=15)
def test_the_guessed_route_matches_cvxpy_on_drawn_problems(drawn):
    """The drawn problems of the decomposition's tests, every sub-problem started from the guess."""
    problem, working_set_size = drawn
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "GUESS_FIRST", True)
        result = decomposition(problem, tol=SOLVER_TOL, working_set_size=working_set_size)
    assert_certified_cvxpy_optimum(problem, result)


def test_the_guess_is_skipped_when_turned_off(monkeypatch):
    """GUESS_FIRST = False: the previous route (plain start, then the interior point) only, the
    same certified optimum."""
    problem = rs.make_problem(make_kernel("rbf", "scale", X=np.eye(6))(np.eye(6)),
                              np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 1]]), 1.0)
    monkeypatch.setattr(module, "GUESS_FIRST", False)
    monkeypatch.setattr(module, "_separable_guess", lambda *args: pytest.fail("the guess ran"))
    assert_certified_cvxpy_optimum(problem, decomposition(problem, tol=SOLVER_TOL, working_set_size=4))


def test_the_guessed_start_answers_on_most_subproblems(monkeypatch):
    """On a synthetic problem (80 rows, 5 labels, RBF, working sets of 20) the active set started
    from the guess answers on at least 80 % of the sub-problems (measured 48 of 50), and the run is
    CVXPY's optimum."""
    from mlsvm.datasets import make_multilabel

    data = make_multilabel(n_samples=80, n_features=5, n_labels=5, random_state=0)
    problem = rs.make_problem(make_kernel("rbf", "scale", X=data.X)(data.X), data.Y, 1.0)
    answers, solve = [], module._active_set

    def recorded(*args, start=None, **kwargs):
        new = solve(*args, start=start, **kwargs)
        if start is not None:
            answers.append(new is not None)
        return new

    monkeypatch.setattr(module, "_active_set", recorded)
    monkeypatch.setattr(module, "GUESS_FIRST", True)
    result = decomposition(problem, tol=SOLVER_TOL, working_set_size=20)
    assert len(answers) >= 10 and np.mean(answers) >= 0.8
    assert_certified_cvxpy_optimum(problem, result)
