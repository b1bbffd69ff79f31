"""The Rank-SVM decomposition's crossover from the sub-problem interior point to the active set
(mlsvm/solvers/rank_svm_decomposition.py, CROSSOVER_MU): the sub-problem answers against CVXPY, and
the whole solver with every sub-problem sent through the interior point and its crossover against
CVXPY on two backends."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsvm.datasets import make_multilabel
from mlsvm.formulations import rank_svm as rs
from mlsvm.kernels import make_kernel
from mlsvm.solvers import rank_svm_decomposition as module
from mlsvm.solvers.cvxpy_tools import REFERENCE_BACKEND, solve
from mlsvm.solvers.rank_svm_decomposition import _active_set, _independent_rows, _subproblem, decomposition
from tests.test_rank_svm_decomposition import SOLVER_TOL, assert_certified_cvxpy_optimum, kernel_problems


def _working_set_subproblem(problem, alpha, working):
    """Hessian, gradient, independent equalities, old values and bounds of the sub-problem on W."""
    pairs = problem.pairs
    rows_of, k_w, l_w = pairs.instance[working], pairs.relevant[working], pairs.irrelevant[working]
    incidence = np.zeros((problem.n_labels, working.size))
    incidence[k_w, np.arange(working.size)] = 1.0
    incidence[l_w, np.arange(working.size)] = -1.0
    hessian = problem.kernel_matrix[np.ix_(rows_of, rows_of)] * (incidence.T @ incidence)
    scores = problem.kernel_matrix @ problem.scatter(alpha)
    gradient = scores[rows_of, k_w] - scores[rows_of, l_w] - 1.0
    return hessian, gradient, _independent_rows(incidence), alpha[working], problem.upper[working]


def _cvxpy_subproblem_value(hessian, gradient, equality, old, upper):
    variable = cp.Variable(old.size)
    change = variable - old
    factor = np.linalg.cholesky(hessian + 1e-12 * np.eye(old.size))
    constraints = [variable >= 0, variable <= upper]
    if equality.shape[0]:
        constraints.append(equality @ change == 0)
    return solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(factor.T @ change) + gradient @ change),
                            constraints), REFERENCE_BACKEND)


@given(kernel_problems(), st.integers(0, 2**32 - 1))
@settings(max_examples=20)
def test_the_crossover_answer_is_the_subproblem_optimum(drawn, seed):
    """A random working set at α = 0: the interior point with the crossover (the active set from
    the partition of its iterate at μ ≤ CROSSOVER_MU) returns the sub-problem's optimum (CVXPY,
    Clarabel) in the box and on the equalities, whether the crossover answered or not."""
    problem, _ = drawn
    rng = np.random.default_rng(seed)
    size = min(problem.n_pairs, int(rng.integers(2, 25)))
    working = np.sort(rng.choice(problem.n_pairs, size=size, replace=False))
    hessian, gradient, equality, old, upper = _working_set_subproblem(problem, np.zeros(problem.n_pairs), working)
    starts = []

    def crossover(start):
        starts.append(start)
        return _active_set(hessian, gradient, equality, old, upper, start=start)

    new = _subproblem(hessian, gradient - hessian @ old, equality, equality @ old, upper, crossover=crossover)
    assert len(starts) <= 1                                     # handed over once at most
    reference = _cvxpy_subproblem_value(hessian, gradient, equality, old, upper)
    found = new - old
    value = float(gradient @ found + 0.5 * found @ hessian @ found)
    assert value <= reference + 1e-7 * max(1.0, abs(reference))
    assert np.all(new >= 0.0) and np.all(new <= upper)
    assert np.max(np.abs(equality @ found), initial=0.0) <= 1e-9 * max(1.0, float(np.max(upper)))


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_every_subproblem_through_the_crossover_matches_cvxpy(monkeypatch, kernel):
    """The active set's own starts refused (every sub-problem goes to the interior point), so each
    exact answer comes from the crossover: it answers on at least 80 % of them, and the certified
    optimum is CVXPY's on two backends."""
    data = make_multilabel(n_samples=60, n_features=4, n_labels=4, random_state=2)
    kernel_args = {"degree": 2, "coef0": 1.0} if kernel == "poly" else {}
    problem = rs.make_problem(make_kernel(kernel, "scale", X=data.X, **kernel_args)(data.X), data.Y, 1.0)
    answers, active_set = [], module._active_set

    def crossover_only(*args, start=None, **kwargs):
        if start is None:
            return None                                         # the plain start refused
        new = active_set(*args, start=start, **kwargs)
        answers.append(new is not None)
        return new

    monkeypatch.setattr(module, "GUESS_FIRST", False)           # no guessed start either
    monkeypatch.setattr(module, "_active_set", crossover_only)
    result = decomposition(problem, tol=SOLVER_TOL, working_set_size=16)
    assert len(answers) >= 5 and np.mean(answers) >= 0.8        # measured 55 of 57 (RBF), 160 of 160 (poly)
    assert_certified_cvxpy_optimum(problem, result)
