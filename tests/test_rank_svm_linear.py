"""Rank-SVM with the linear kernel and no Gram matrix (``gram=None``, products through X): the same
problem as with K = XXᵀ formed — objectives, KKT residuals and scores agree to round-off on drawn
problems with empty rows and columns, dense and CSR X — the exact routes reach CVXPY's optimum, and
a fit needs no memory for any n × n matrix (fit and predict)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsvm import RankSVM, kernels
from mlsvm.datasets import make_multilabel
from mlsvm.formulations import rank_svm as rs
from mlsvm.registry import rank_svm as registry
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.verification.tolerances import tolerance

EXACT = tolerance("rank_svm", "fast")


@st.composite
def linear_problems(draw):
    """X with an empty row and an empty column, Y with at least one pair; both problem forms."""
    n, d, q = draw(st.integers(4, 10)), draw(st.integers(1, 4)), draw(st.integers(2, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.7)
    X[0] = 0.0                                      # an empty row
    if d > 1:
        X[:, -1] = 0.0                              # an empty column
    Y = (rng.random((n, q)) < 0.5).astype(int)
    Y[-1, :] = 0
    Y[-1, 0] = 1                                    # at least one instance with pairs
    features = sp.csr_matrix(X) if draw(st.booleans()) else X
    C = draw(st.sampled_from([0.1, 1.0, 10.0]))
    return rs.make_problem(X @ X.T, Y, C, features=features), rs.make_problem(None, Y, C, features=features)


@settings(max_examples=30, deadline=None)
@given(linear_problems(), st.integers(0, 2**16))
def test_the_problem_without_gram_grades_every_point_as_the_one_with_it(problems, seed):
    with_gram, without = problems
    rng = np.random.default_rng(seed)
    alpha = rng.random(with_gram.n_pairs) * with_gram.upper
    b = rs.center_biases(rng.standard_normal(with_gram.n_labels))
    beta = with_gram.scatter(alpha)
    np.testing.assert_allclose(without.kernel_times(beta), with_gram.gram @ beta, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(without.kernel_diagonal, np.diag(with_gram.gram), rtol=1e-12, atol=1e-14)
    a = rs.evaluate(with_gram, {"beta": beta, "b": b}, {"alpha": alpha})
    c = rs.evaluate(without, {"beta": beta, "b": b}, {"alpha": alpha})
    for value_a, value_c in [(a.primal_objective, c.primal_objective), (a.dual_objective, c.dual_objective)]:
        assert abs(value_a - value_c) <= 1e-10 * max(1.0, abs(value_a))
    np.testing.assert_allclose(c.extra["scores"], a.extra["scores"], rtol=1e-10, atol=1e-10)
    for name, value in a.kkt.items():
        assert abs(c.kkt[name] - value) <= 1e-10, name


@settings(max_examples=12, deadline=None)
@given(linear_problems(), st.sampled_from(["ipm", "alm"]))
def test_exact_routes_without_gram_reach_the_cvxpy_optimum(problems, solver):
    with_gram, without = problems
    cvx, _ = rs.cvxpy_dual(with_gram)
    reference = -solve(cvx, "CLARABEL")
    result = registry.MODEL.solvers[solver].run(without, tol=1e-9, max_iter=None)
    evaluation = rs.evaluate(without, result.primal, result.dual)
    assert result.converged
    assert abs(evaluation.relative_gap) <= 1e-9 and evaluation.max_kkt <= 1e-9
    assert abs(evaluation.primal_objective - reference) <= EXACT.objective * max(1.0, abs(reference))


def test_make_problem_refuses_no_gram_without_features():
    with pytest.raises(ValueError, match="gram may be None only with the linear kernel's features"):
        rs.make_problem(None, np.array([[1, 0], [0, 1]]), 1.0)


@pytest.mark.parametrize("solver", ["ipm", "alm", "fast"])
def test_linear_fit_and_predict_need_no_memory_for_an_n_by_n_matrix(monkeypatch, solver):
    data = make_multilabel(40, 5, 3, random_state=1)
    reference = RankSVM(kernel="linear", solver="ipm", tol=1e-8).fit(data.X, data.Y)
    monkeypatch.setattr(kernels, "available_memory", lambda: 1)   # any n × n matrix would be refused
    model = RankSVM(kernel="linear", solver=solver, tol=1e-8).fit(sp.csr_matrix(data.X), data.Y)
    assert model.fit_report_.converged
    np.testing.assert_allclose(model.decision_function(data.X), reference.decision_function(data.X),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(model.decision_function(data.X), data.X @ model.coef_ + model.intercept_,
                               rtol=1e-12, atol=1e-12)
    assert model.predict(sp.csr_matrix(data.X)).shape == data.Y.shape
    with pytest.raises(ValueError, match="Gram matrix"):   # the kernel-column solver does need K
        RankSVM(kernel="linear", solver="decomposition", tol=1e-6).fit(data.X, data.Y)
