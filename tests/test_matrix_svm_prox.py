"""The proximal map of box + regularized bias (``mlsvm.solvers.matrix_svm_bias_prox``) against CVXPY, and the
active-set polish (``mlsvm.solvers.matrix_svm_polish``) finding the exact optimum from a rough point."""

import cvxpy as cp
import numpy as np
import pytest

from mlsvm.datasets import make_multilabel
from mlsvm.formulations import matrix_svm as ms
from mlsvm.kernels import make_kernel
from mlsvm.solvers.matrix_svm_agd import solve_dual_agd
from mlsvm.solvers.matrix_svm_bias_prox import prox_box_bias
from mlsvm.solvers.matrix_svm_polish import FreeSetSystem, polish_labels
from mlsvm.solvers.cvxpy_tools import solve


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("box", [(0.0, 1.0), (0.0, 0.05), (-np.inf, np.inf)])
def test_prox_equals_cvxpy(seed, box):
    rng = np.random.default_rng(seed)
    n, q, t = 25, 3, [0.01, 0.3, 5.0][seed % 3]
    v = rng.normal(0.3, 1.0, (n, q))
    signed = np.where(rng.random((n, q)) < 0.3, -1.0, 1.0)
    ours, mu = prox_box_bias(v, signed, t, *box)
    for k in range(q):
        alpha = cp.Variable(n)
        constraints = [] if np.isinf(box[1]) else [alpha >= box[0], alpha <= box[1]]
        solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(alpha - v[:, k]) + 0.5 * t * cp.square(signed[:, k] @ alpha)),
                         constraints), "CLARABEL")
        np.testing.assert_allclose(ours[:, k], alpha.value, atol=1e-6)
    np.testing.assert_allclose(mu, np.sum(signed * ours, axis=0), atol=1e-10)   # μ is the bias yᵀα


def test_prox_warm_start_does_not_change_the_answer():
    rng = np.random.default_rng(3)
    v, signed = rng.normal(size=(40, 2)), np.where(rng.random((40, 2)) < 0.5, -1.0, 1.0)
    cold, _ = prox_box_bias(v, signed, 0.2, 0.0, 1.0)
    warm, _ = prox_box_bias(v, signed, 0.2, 0.0, 1.0, mu=np.array([-30.0, 30.0]))
    np.testing.assert_allclose(warm, cold, atol=1e-12)


def test_active_set_steps_find_the_optimum_from_a_rough_point():
    """From an AGD iterate at gap ~1e-2 the active-set steps, all labels in lockstep, reach the
    CVXPY optimum of every label, and the products they return are K̄(α ∘ Ys)."""
    data = make_multilabel(80, 3, 3, noise=0.2, random_state=4)
    problem = ms.MatrixSVMProblem(make_kernel("rbf", 1.0)(data.X), data.Y, 1.0)
    G, S = problem.gram_bar, problem.signed
    rough = solve_dual_agd(G, S, 1.0, tol=1e-2).dual["alpha"]
    gradient = S * (G @ (rough * S)) - 1.0
    polished, product = polish_labels(G, S, rough, 1.0, gradient=gradient, scale=0.5, steps=10)
    np.testing.assert_allclose(product, G @ (polished * S), rtol=1e-12, atol=1e-12)
    for k in range(S.shape[1]):
        label = ms.MatrixSVMProblem(problem.gram, data.Y[:, [k]], 1.0)
        reference = -solve(ms.cvxpy_dual(label)[0], "CLARABEL")
        assert abs(ms.dual_objective(label, polished[:, [k]]) - reference) <= 1e-9 * abs(reference)


@pytest.mark.parametrize("seed", range(3))
def test_bordered_solves_equal_direct_solves(seed):
    """FreeSetSystem: sets that add and remove a few indices (bordered solves on the first factor,
    G columns reused from call to call) and then a large change (a new factor) give the solution
    of K̄_FF x = r computed directly."""
    rng = np.random.default_rng(seed)
    n = 200
    gram_bar = make_kernel("rbf", 0.5)(rng.normal(size=(n, 4))) + 1.0
    free = rng.random(n) < 0.6
    system = FreeSetSystem(gram_bar, free)
    base = system.base.copy()
    for change, bordered in ((0, True), (2, True), (3, True), (5, True), (n // 2, False)):
        flip = rng.choice(n, size=change, replace=False)
        free = free.copy()
        free[flip] = ~free[flip]
        rhs = rng.normal(size=int(free.sum()))
        expected = np.linalg.solve(gram_bar[np.ix_(free, free)], rhs)
        np.testing.assert_allclose(system.solve(free, rhs), expected, rtol=1e-9, atol=1e-9)
        assert np.array_equal(system.base, base) == bordered      # which path ran
