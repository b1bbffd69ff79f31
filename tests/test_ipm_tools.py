"""The shared interior-point loop (``mlsvm.solvers.ipm_tools.box_qp_ipm``) on its own: a dense
box-and-equality QP against CVXPY on two backends, and its stall rules (a step that overflows, a
Newton system that is not positive definite, a run whose stopping value and μ stop falling)."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from scipy.linalg import LinAlgError
from sklearn.exceptions import ConvergenceWarning

from mlsvm.datasets import load_yeast
from mlsvm.formulations import rank_svm as rs
from mlsvm.report import relative_difference
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.solvers.ipm_tools import STALL_WINDOW, Measure, box_qp_ipm
from mlsvm.solvers.rank_svm_ipm import interior_point
from mlsvm.verification.tolerances import EXACT

TOL = 1e-9


class DenseQP:
    """``min ½αᵀHα − cᵀα`` over ``0 ≤ α ≤ hi``, ``Eα = e``; the free variables are the equality
    multipliers ν, the Newton system the dense KKT matrix ``[[H + D, Eᵀ], [E, 0]]``."""

    def __init__(self, H, c, E, e):
        self.H, self.c, self.E, self.e = H, c, E, e

    def measure(self, iterate):
        alpha, nu = iterate.alpha, iterate.free
        gradient = self.H @ alpha - self.c + self.E.T @ nu
        self.equality = self.E @ alpha - self.e
        objective = 0.5 * alpha @ self.H @ alpha - self.c @ alpha
        complementarity = alpha @ iterate.lower + iterate.slack @ iterate.upper
        stationarity = np.max(np.abs(gradient - iterate.lower + iterate.upper))
        stop = max(complementarity / (1.0 + abs(objective)), stationarity / (1.0 + np.max(np.abs(self.c))),
                   np.max(np.abs(self.equality), initial=0.0))
        return Measure(objective, objective - complementarity, stop, gradient)

    def factorize(self, d):
        m = self.E.shape[0]
        self.kkt = np.block([[self.H + np.diag(d), self.E.T], [self.E, np.zeros((m, m))]])

    def solve(self, rhs):
        step = np.linalg.solve(self.kkt, np.concatenate([rhs, -self.equality]))
        return step[: rhs.size], step[rhs.size:]

    def point(self, iterate):
        return {"alpha": iterate.alpha}, {"nu": iterate.free}


def _qp(seed, n=12, m=2):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, 4))
    H = F @ F.T + 1e-3 * np.eye(n)              # nearly singular, as the SVM duals are
    c = rng.standard_normal(n) + 1.0
    E = rng.choice([-1.0, 1.0], size=(m, n))
    hi = rng.uniform(0.5, 2.0, n)
    e = E @ (hi * rng.uniform(0.2, 0.8, n))     # a feasible point strictly inside the box
    return H, c, E, e, hi


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("backend", ["CLARABEL", "ECOS"])
def test_the_loop_reaches_the_cvxpy_optimum_of_a_box_and_equality_qp(seed, backend):
    H, c, E, e, hi = _qp(seed)
    result = box_qp_ipm(DenseQP(H, c, E, e), hi, np.zeros(E.shape[0]), tol=TOL, max_iter=100,
                        name="dense QP", stop_rule="test")
    alpha = cp.Variable(hi.size)
    reference = solve(cp.Problem(cp.Minimize(0.5 * cp.quad_form(alpha, cp.psd_wrap(H)) - c @ alpha),
                                 [alpha >= 0, alpha <= hi, E @ alpha == e]), backend)
    assert result.converged and result.n_iter < 100
    assert relative_difference(result.history["primal"][-1], reference) <= EXACT.objective
    assert 0.0 <= result.history["primal"][-1] - result.history["dual"][-1] <= TOL * (1 + abs(reference))
    assert len(result.history["stop_value"]) == len(result.history["mu"]) == result.n_iter


def test_an_overflowing_step_is_a_stall_and_returns_the_best_iterate():
    H, c, E, e, hi = _qp(0)

    class Overflowing(DenseQP):
        def solve(self, rhs):
            return np.full(rhs.size, np.inf), np.zeros(E.shape[0])

    with pytest.warns(ConvergenceWarning, match=r"stalled \(no further progress") as caught:
        result = box_qp_ipm(Overflowing(H, c, E, e), hi, np.zeros(E.shape[0]), tol=TOL, max_iter=50,
                            name="dense QP", stop_rule="test")
    assert not any("Increase max_iter" in str(warning.message) for warning in caught)
    assert not result.converged and result.n_iter == 1
    np.testing.assert_array_equal(result.primal["alpha"], 0.5 * hi)


def test_a_newton_system_not_positive_definite_is_a_stall():
    H, c, E, e, hi = _qp(1)

    class Indefinite(DenseQP):
        def factorize(self, d):
            raise LinAlgError("not positive definite")

    with pytest.warns(ConvergenceWarning, match="stalled"):
        result = box_qp_ipm(Indefinite(H, c, E, e), hi, np.zeros(E.shape[0]), tol=TOL, max_iter=50,
                            name="dense QP", stop_rule="test")
    assert not result.converged and result.n_iter == 1


def test_rank_svm_with_a_huge_c_stalls_early_and_returns_its_best_iterate():
    """Issue 14 in small: C = 1e8 on yeast[:40] (10 features). Once the Newton systems lose
    accuracy the iterates wander off (the stopping value and μ rise); main's loop ran to max_iter
    and returned the last iterate (relative gap ≈ 1). The shared loop stops STALL_WINDOW iterations
    after its last progress with a stall warning and returns the best iterate."""
    yeast = load_yeast()
    X, Y = yeast.X[:40, :10], yeast.Y[:40]
    problem = rs.make_problem(X @ X.T, Y, 1e8, check_psd=False, features=X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = interior_point(problem, X, tol=1e-8, max_iter=100)
    messages = [str(warning.message) for warning in caught if warning.category is ConvergenceWarning]
    assert len(messages) == 1 and "stalled" in messages[0] and "Increase max_iter" not in messages[0]
    assert not result.converged and result.n_iter < 100
    history = np.asarray(result.history["stop_value"])
    assert result.stop_value == history.min() < history[-1]
    assert np.argmin(history) + 1 <= result.n_iter - STALL_WINDOW
