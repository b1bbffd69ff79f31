"""OvN with the linear kernel and no n × n Gram matrix (issues 16 and 18): the problem holds X (CSR
kept sparse); the feature class system's Newton solves against a dense Cholesky on both sides of its
per-class switch (kernel block when |C_k| ≤ d_k, Woodbury on the class's d_k non-zero columns
otherwise), for the four kinds of S; grading through X against grading through G; sparse X against
dense X and against CVXPY on hypothesis-drawn problems with empty rows and columns; and the fit
never forming an n × n matrix."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsvm import OvNSVM
from mlsvm.formulations import ovn
from mlsvm.report import relative_difference
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.solvers.ovn_ipm import _DenseSystem, _FeatureClassSystem, solve_ipm
from mlsvm.testing.strategies import hyperparameters
from mlsvm.verification.tolerances import tolerance
from ovn_strategies import FLAT_LABELS, FLAT_X

FAST = tolerance("ovn", "fast")
VARIANTS = [dict(alpha=0.0), dict(alpha=0.5), dict(alpha=-0.1, b_constraint="soft"), dict(w_constraint="hard")]


def _sparse_problem(sizes=(3, 9, 14), d=12, **variant):
    """Class k has sizes[k] members, each row with non-zeros in 4 of the class's own 8 columns (plus
    column 0 for every row), so d_k ≤ 9 < d for a class of its own rows: 3 members give a kernel
    block (m ≤ d_k), 14 a Woodbury matrix."""
    rng = np.random.default_rng(1)
    n = sum(sizes)
    X = np.zeros((n, d))
    Y = np.zeros((n, len(sizes)), dtype=np.int8)
    start = 0
    for k, m in enumerate(sizes):
        columns = 1 + (np.arange(8) + 3 * k) % (d - 1)
        for i in range(start, start + m):
            X[i, 0] = rng.standard_normal()
            X[i, rng.choice(columns, 4, replace=False)] = rng.standard_normal(4)
        Y[start:start + m, k] = 1
        start += m
    Y[0, 1] = 1   # a sample in two classes
    return X, Y, ovn.OvNProblem(None, Y, beta=1.0, features=sp.csr_matrix(X), **variant)


@pytest.mark.parametrize("variant", VARIANTS, ids=str)
def test_feature_class_solves_equal_dense_cholesky_on_both_sides_of_the_switch(variant):
    """H⁻¹R through X (sparse, support-restricted blocks; and dense X) against a dense Cholesky of the
    same H = Q + diag(d), d spanning ten decades; the per-class choice is the stated one."""
    X, Y, problem = _sparse_problem(**variant)
    sample, cls = problem.members
    s0, s1 = ovn.dual_metric_coefficients(problem)
    rng = np.random.default_rng(0)
    d = 10.0 ** rng.uniform(-5, 5, sample.size)
    rhs = rng.standard_normal((sample.size, 3))
    dense = _DenseSystem(ovn.dual_qp(problem)["P"][:sample.size, :sample.size])
    dense.factor(d)
    expected = dense.apply_inverse(rhs)
    for features in (problem.features, X):
        for blocks in ("auto", "kernel"):
            system = _FeatureClassSystem(s0, s1, features, sample, cls, blocks=blocks)
            widths = [F.shape[1] for F in system.F]
            counts = np.bincount(cls)
            assert system.kernel == [blocks == "kernel" or m <= w for m, w in zip(counts, widths)]
            if blocks == "auto" and sp.issparse(features):
                assert system.kernel[0] and not system.kernel[2]   # 3 members (kernel), 14 (Woodbury)
                assert max(widths) < X.shape[1]                     # blocks restricted to their columns
            system.factor(d)
            v = rng.standard_normal(sample.size)
            assert np.allclose(system.matvec(v), dense.matvec(v), rtol=0, atol=1e-12 * np.abs(dense.matvec(v)).max())
            got = system.apply_inverse(rhs)
            assert np.max(np.abs(got - expected)) <= 1e-8 * np.max(np.abs(expected))
            bound = system.abs_matvec(np.abs(v))
            assert np.all(bound >= np.abs(system.matvec(v)) - 1e-12)


def test_the_switch_point_is_m_equal_to_d_k():
    """A class with exactly d_k members takes its kernel block, one with d_k + 1 its Woodbury matrix."""
    rng = np.random.default_rng(3)
    d = 6
    X = np.hstack([rng.standard_normal((13, d)), np.zeros((13, 2))])   # two empty columns: d_k = 6 < 8
    Y = np.zeros((13, 2), dtype=np.int8)
    Y[:6, 0] = 1
    Y[6:, 1] = 1
    problem = ovn.OvNProblem(None, Y, features=sp.csr_matrix(X))
    sample, cls = problem.members
    system = _FeatureClassSystem(1.0, 0.0, problem.features, sample, cls)
    assert [F.shape for F in system.F] == [(6, 6), (7, 6)]
    assert system.kernel == [True, False]
    assert system.refine and system.block_diagonal


def test_grading_through_x_equals_grading_through_the_gram_matrix():
    """evaluate, the objectives and the KKT operator with gram=None (sparse and dense X) equal those
    of the same problem given its Gram matrix."""
    X, Y, problem = _sparse_problem(alpha=0.3, b_constraint="soft")
    reference = ovn.OvNProblem(X @ X.T, Y, alpha=0.3, b_constraint="soft")
    dense = ovn.OvNProblem(None, Y, alpha=0.3, b_constraint="soft", features=X)
    rng = np.random.default_rng(2)
    Lam = rng.random(Y.shape) * Y
    b = rng.standard_normal(Y.shape[1])
    primal, dual = {"coef": ovn.coef_from_dual(reference, Lam), "b": b}, {"Lam": Lam, "nu": 0.8}
    expected = ovn.evaluate(reference, primal, dual)
    for candidate in (problem, dense):
        got = ovn.evaluate(candidate, primal, dual)
        assert abs(got.primal_objective - expected.primal_objective) <= 1e-12 * abs(expected.primal_objective)
        assert abs(got.dual_objective - expected.dual_objective) <= 1e-12 * max(1.0, abs(expected.dual_objective))
        for key, value in expected.kkt.items():
            assert abs(got.kkt[key] - value) <= 1e-12 * max(1.0, abs(value))
        both = ovn.primal_dual_objectives(candidate, Lam, 0.8, b)
        assert relative_difference(both[0], ovn.primal_objective(reference, primal["coef"], b)) <= 1e-12
        assert relative_difference(both[1], ovn.dual_objective(reference, Lam, 0.8)) <= 1e-12
        assert np.allclose(ovn.dual_qp(candidate)["P"], ovn.dual_qp(reference)["P"], rtol=0, atol=1e-12)
    assert "gram_matrix" in problem.__dict__   # formed (and cached) by dual_qp only


def test_problem_needs_gram_or_features():
    with pytest.raises(ValueError, match="gram may be None only"):
        ovn.OvNProblem(None, np.eye(3, dtype=np.int8))
    with pytest.raises(ValueError, match="features must have n = 3 rows"):
        ovn.OvNProblem(np.eye(3), np.eye(3, dtype=np.int8), features=np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"Y must be an \(n, K\) indicator with n = 4"):
        ovn.OvNProblem(None, np.eye(3, dtype=np.int8), features=np.ones((4, 2)))


def test_linear_fit_forms_no_n_by_n_matrix(monkeypatch):
    """The estimator's linear fit never computes the Gram matrix (kernels, the problem's gram_matrix)
    nor a test Gram matrix at predict: coef_ = Xᵀdual_coef_ gives the scores."""
    import mlsvm.formulations.ovn as formulation
    from mlsvm.kernels import Kernel

    rng = np.random.default_rng(4)
    X = sp.random(60, 15, density=0.3, random_state=5, format="csr")
    Y = (rng.random((60, 3)) < 0.4).astype(np.int8)
    Y[0] = 1
    monkeypatch.setattr(Kernel, "__call__", lambda *args, **kwargs: pytest.fail("a Gram matrix was formed"))
    monkeypatch.setattr(formulation.OvNProblem, "gram_matrix",
                        property(lambda self: pytest.fail("the n × n Gram matrix was formed")))
    for variant in VARIANTS:
        model = OvNSVM(kernel="linear", tol=1e-8, **variant).fit(X, Y)
        assert model.fit_report_.converged
        assert model.coef_.shape == (15, 3)
        scores = model.decision_function(X[:7])
        assert np.allclose(scores, X[:7] @ (X.T @ model.dual_coef_) + model.intercept_, rtol=0, atol=1e-10)


@st.composite
def sparse_problems(draw):
    """Small sparse problems with empty rows and empty columns, every class non-empty."""
    n, d, K = draw(st.integers(4, 12)), draw(st.integers(2, 6)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.5)
    X[rng.integers(n)] = 0.0                                            # an empty row
    X[:, rng.integers(d)] = 0.0                                         # an empty column
    Y = (rng.random((n, K)) < 0.5).astype(np.int8)
    for k in range(K):
        if not Y[:, k].any():
            Y[rng.integers(n), k] = 1
    params = draw(hyperparameters("OvNSVM", n_labels=K))
    return X, Y, params


@settings(max_examples=15, deadline=None)
@given(sparse_problems())
def test_sparse_and_dense_x_give_the_same_model_and_the_cvxpy_optimum(drawn):
    """The same objective, the same W (unique: the objective is strongly convex in it, M ≻ 0) and,
    each certified, optimal biases. The optimal biases need not be unique: with hard b and no
    class member strictly inside its box they can move along the optimal face (found by
    HYPOTHESIS_PROFILE=explore: Clarabel and OSQP gave biases 0.1 apart at the same optimum, the
    dense and sparse runs 2e-7 apart at relative gaps of 3.5e-12). So the decision values are
    compared without them, and then with them: the fit returns the face's canonical point
    (ovn.optimal_biases), the same from both inputs."""
    X, Y, params = drawn
    dense = OvNSVM(kernel="linear", **params).fit(X, Y)
    sparse = OvNSVM(kernel="linear", **params).fit(sp.csr_matrix(X), Y)
    problem = ovn.OvNProblem(X @ X.T, Y, features=X, **params)
    optimum = solve(ovn.cvxpy_primal(problem)[0], "CLARABEL")
    for model in (dense, sparse):
        report = model.fit_report_
        assert report.converged
        assert relative_difference(report.primal_objective, optimum) <= FAST.objective
        assert abs(report.relative_gap) <= FAST.gap and report.max_kkt <= FAST.kkt
    assert relative_difference(sparse.fit_report_.primal_objective, dense.fit_report_.primal_objective) <= 1e-10
    scores = [model.decision_function(X) - model.intercept_ for model in (dense, sparse)]
    assert np.max(np.abs(scores[1] - scores[0])) <= 1e-8 * max(1.0, np.max(np.abs(scores[0])))
    scores = [model.decision_function(X) for model in (dense, sparse)]
    assert np.max(np.abs(scores[1] - scores[0])) <= 1e-8 * max(1.0, np.max(np.abs(scores[0])))




def test_every_route_returns_the_same_biases_on_a_flat_face():
    """Before ovn.optimal_biases the routes returned four points of the face: class 0's bias
    −0.57868 (dense X) and −0.57874 (sparse X) from the interior point, −0.70 from Clarabel, −0.87
    from SCS. Now each returns the face's canonical point: the midpoint of class 0's range at the
    optimal W, −0.8290232 (found by LPs in tests/test_ovn_formulation.py)."""
    fits = [OvNSVM(alpha=0.2, kernel="linear", tol=1e-10).fit(FLAT_X, FLAT_LABELS),
            OvNSVM(alpha=0.2, kernel="linear", tol=1e-10).fit(sp.csr_matrix(FLAT_X), FLAT_LABELS)]
    fits += [OvNSVM(alpha=0.2, kernel="linear", solver="cvxpy", cvxpy_solver=backend).fit(FLAT_X, FLAT_LABELS)
             for backend in ("CLARABEL", "SCS")]
    for model in fits:
        assert model.fit_report_.converged
        np.testing.assert_allclose(model.intercept_, fits[0].intercept_, rtol=0, atol=1e-8)
    assert fits[0].intercept_[0] == pytest.approx(-0.8290232, abs=1e-6)


def test_solve_ipm_takes_the_feature_route_for_every_linear_problem(monkeypatch):
    """K·d ≥ T (bibtex: 159 · 1836 against 11,805 memberships) used to take the class blocks of the
    n × n Gram matrix; now every linear problem goes through X."""
    import mlsvm.solvers.ovn_ipm as ipm

    built = []
    monkeypatch.setattr(ipm, "_ClassBlockSystem", lambda *args: built.append(1) or pytest.fail("Gram route"))
    X, Y, problem = _sparse_problem()
    assert problem.n_classes * problem.features.shape[1] >= problem.members[0].size
    result = solve_ipm(problem, tol=1e-10)
    evaluation = ovn.evaluate(problem, result.primal, result.dual)
    assert result.converged and abs(evaluation.relative_gap) <= 1e-10 and evaluation.max_kkt <= 1e-10
    assert not built


def test_the_multipliers_stay_where_the_canonical_bias_does_not_certify():
    """Three members on the margin at the optimum (w = 0, b = 1: two zero rows and x = 0.1, soft
    b, β = γ = 10), the third with a zero multiplier: degenerate, so the interior point's Λ and b
    are accurate to about √tol only. optimal_biases gives the exact b = 1 from W, but paired with
    that Λ its KKT residual is 1e-5, far above tol; with_canonical_biases keeps the multipliers,
    which certify."""
    X = np.array([[0.0], [0.0], [0.1]])
    problem = ovn.OvNProblem(None, np.ones((3, 1), dtype=np.int8), beta=10.0, b_constraint="soft", gamma_b=10.0,
                             features=X)
    result = solve_ipm(problem, tol=1e-10)
    evaluation = ovn.evaluate(problem, result.primal, result.dual)
    assert result.converged and abs(evaluation.relative_gap) <= 1e-10 and evaluation.max_kkt <= 1e-10
    canonical = ovn.optimal_biases(problem, ovn.member_scores(problem, result.primal["coef"]))
    assert canonical[0] == 1.0 and 1e-8 < 1.0 - result.primal["b"][0] < 1e-5
    assert ovn.evaluate(problem, dict(result.primal, b=canonical), result.dual).max_kkt > 1e-6

