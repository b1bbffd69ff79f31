"""The network simplex of mlsvm/solvers/circulation.py: on drawn networks (parallel and opposite
arcs, self-loops, zero capacities, tied costs) it reaches the optimal value HiGHS finds, from any
starting potentials, with a flow that balances every node, stays within its bounds and meets
complementary slackness with the potentials it returns, with and without the coarse start on
samples of the arcs; hand-worked cases; and on the bias LP of bibtex it gives the biases of the
HiGHS LP's value, the coarse start closing most of the gap from a poor guess."""

from unittest.mock import patch

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

from mlsvm.formulations import rank_svm as rs
from mlsvm.solvers import circulation
from mlsvm.solvers.circulation import min_cost_circulation
from mlsvm.solvers.rank_svm_decomposition import certified_biases

# the optimality conditions hold to round-off: a few units in the last place of the costs
SLACK = 1e-12


@st.composite
def networks(draw):
    n = draw(st.integers(1, 7))
    m = draw(st.integers(0, 40))
    node = st.integers(0, n - 1)
    tail = np.array(draw(st.lists(node, min_size=m, max_size=m)), dtype=np.int64)
    head = np.array(draw(st.lists(node, min_size=m, max_size=m)), dtype=np.int64)
    if draw(st.booleans()):   # tied costs: degenerate pivots and optimal faces
        cost = np.array(draw(st.lists(st.integers(-2, 2), min_size=m, max_size=m)), dtype=float)
    else:
        cost = np.array(draw(st.lists(st.floats(-3, 3), min_size=m, max_size=m)))
    capacity = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.7, 2.0]), min_size=m, max_size=m)))
    guess = draw(st.none() | st.lists(st.floats(-5, 5), min_size=n, max_size=n).map(np.array))
    return tail, head, cost, capacity, n, guess


def _incidence(tail, head, n):
    m = tail.size
    return sp.csr_matrix((np.r_[np.ones(m), -np.ones(m)], (np.r_[tail, head], np.r_[np.arange(m), np.arange(m)])),
                         shape=(n, m))


def _assert_optimal(tail, head, cost, capacity, n, flow, potential):
    """Feasible (balanced, within bounds) and complementary with the potentials: optimal."""
    assert np.all(flow >= 0.0) and np.all(flow <= capacity)
    np.testing.assert_allclose(_incidence(tail, head, n) @ flow, 0.0, rtol=0, atol=SLACK * (1 + np.sum(capacity)))
    reduced = cost - potential[tail] + potential[head]
    slack = SLACK * max(1.0, float(np.max(np.abs(cost), initial=0.0)))
    movable = capacity > 0.0       # an arc of capacity 0 is fixed: any reduced cost is optimal
    assert np.all(reduced[movable & (flow <= 0.0)] >= -slack)
    assert np.all(reduced[movable & (flow >= capacity)] <= slack)
    assert np.all(np.abs(reduced[(flow > 0.0) & (flow < capacity)]) <= slack)


@pytest.mark.parametrize("coarse_sample", [circulation.COARSE_SAMPLE, 3])
@given(drawn=networks())
def test_the_simplex_reaches_the_optimum_highs_finds(coarse_sample, drawn):
    """With the default first sample the drawn networks are too small for the coarse start; with
    samples from 3 arcs up it runs on every network of 9 arcs or more."""
    tail, head, cost, capacity, n, guess = drawn
    with patch.object(circulation, "COARSE_SAMPLE", coarse_sample):
        flow, potential = min_cost_circulation(tail, head, cost, capacity, n, guess)
    _assert_optimal(tail, head, cost, capacity, n, flow, potential)
    if tail.size:
        reference = linprog(cost, A_eq=_incidence(tail, head, n), b_eq=np.zeros(n),
                            bounds=np.column_stack([np.zeros(tail.size), capacity]), method="highs")
        assert reference.status == 0
        assert abs(cost @ flow - reference.fun) <= 1e-9 * max(1.0, abs(reference.fun))


@pytest.mark.parametrize("case", [
    # a cycle of negative cost: its least capacity goes round it
    ([0, 1, 2], [1, 2, 0], [-1.0, 1.0, -1.0], [2.0, 1.0, 3.0], [1.0, 1.0, 1.0]),
    # the same cycle at positive cost: no flow
    ([0, 1, 2], [1, 2, 0], [-1.0, 2.0, -0.5], [2.0, 1.0, 3.0], [0.0, 0.0, 0.0]),
    # two opposite arcs, cost −1 + 0.5 < 0: the smaller capacity both ways
    ([0, 1], [1, 0], [-1.0, 0.5], [2.0, 3.0], [2.0, 2.0]),
    # a self-loop of negative cost is filled, one of positive cost left empty
    ([0, 1], [0, 1], [-1.0, 1.0], [0.5, 0.5], [0.5, 0.0]),
])
def test_hand_worked_circulations(case):
    tail, head, cost, capacity, expected = map(np.asarray, case)
    flow, potential = min_cost_circulation(tail, head, cost, capacity, 3, np.array([0.3, -2.0, 1.0]))
    np.testing.assert_allclose(flow, expected, rtol=0, atol=1e-15)
    _assert_optimal(tail, head, cost, capacity, 3, flow, potential)


@pytest.mark.parametrize("bad", ["cost", "capacity", "guess"])
def test_data_that_are_not_finite_give_no_answer(bad):
    data = {"cost": np.array([-1.0, 1.0]), "capacity": np.ones(2), "guess": np.zeros(2)}
    data[bad][0] = np.nan
    assert min_cost_circulation(np.array([0, 1]), np.array([1, 0]), data["cost"], data["capacity"], 2,
                                data["guess"]) is None


@pytest.mark.realdata
def test_the_biases_of_a_bibtex_fit_are_those_of_the_highs_lp(bibtex):
    """400 rows, all 159 labels, binary words, C = 0.01, at a random α in the box: the network
    simplex's biases (started from 0 and from a poor guess) are complementary with its flow and give
    the hinge sum of the HiGHS LP on all pairs, the LP's value."""
    X, Y = bibtex.X[:400], np.asarray(bibtex.Y)[:400]
    keep = (Y.sum(axis=1) > 0) & (Y.sum(axis=1) < Y.shape[1])
    problem = rs.make_problem(None, Y[keep], 0.01, features=sp.csr_matrix(X[keep]))
    alpha = problem.upper * np.random.default_rng(0).random(problem.n_pairs)
    gradient = problem.gather(problem.kernel_times(problem.scatter(alpha))) - 1.0
    pairs, q = problem.pairs, problem.n_labels
    vertex, b_highs = rs.linear_minimizer(problem, gradient)

    def hinge(b):
        return problem.upper @ np.maximum(0.0, -(gradient + problem.equality_adjoint(b)))

    lp_value = -(gradient @ vertex)
    for guess in (np.zeros(q), np.linspace(-1.0, 1.0, q)):
        flow, potential = min_cost_circulation(pairs.relevant, pairs.irrelevant, gradient, problem.upper, q, -guess)
        _assert_optimal(pairs.relevant, pairs.irrelevant, gradient, problem.upper, q, flow, potential)
        b = certified_biases(problem, gradient, guess, full_lp=False)
        assert abs(hinge(b) - lp_value) <= 1e-12 * lp_value
        assert abs(hinge(b) - hinge(b_highs)) <= 1e-12 * lp_value

    # from biases 0 the coarse start closes most of the gap in the dual value (-1.959 against
    # -2.589 at 0; the optimum -1.942)
    tail, head, upper = pairs.relevant, pairs.irrelevant, problem.upper
    start = circulation._coarse_start(tail, head, gradient, upper, q, np.zeros(q))
    dual_at_zero = circulation._dual_value(tail, head, gradient, upper, np.zeros(q))
    dual_at_start = circulation._dual_value(tail, head, gradient, upper, start)
    assert -lp_value - dual_at_start <= 0.1 * (-lp_value - dual_at_zero)
