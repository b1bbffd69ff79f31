"""Rank-SVM's block coordinate descent by instance ("bcd", mlsvm/solvers/rank_svm_bcd.py): it reaches
the CVXPY optimum confirmed by two backends (awkward label structures, linear kernel through X,
RBF through an eigen-factor), agrees with the interior point and the ALM on bibtex subsets (the
sparse text data it is for; on emotions' and yeast's dense raw features it crawls: see
docs/rank_svm.md), gives the same iterates on a CSR and a dense X, never needs an n × n matrix
with the linear kernel, and warns when its budget runs out."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import normalize

from mlsvm import RankSVM, kernels
from mlsvm.datasets import make_multilabel
from mlsvm.formulations import rank_svm as rs
from mlsvm.kernels import gram_factor
from mlsvm.registry import rank_svm as registry
from mlsvm.report import relative_difference
from mlsvm.solvers.cvxpy_tools import solve_checked
from mlsvm.solvers.rank_svm_bcd import _line_minimum, instance_bcd
from mlsvm.verification.tolerances import tolerance

from test_rank_svm import rank_problems

EXACT = tolerance("rank_svm", "bcd")


def _one_feature_case():
    """An explore draw (seed 2523): 11 points in one feature, 4 labels, C = 0.1. ρ reaches its cap
    and the inner passes crawl (coordinate descent on ``(x − m)(x − m)ᵀ + ρ11ᵀ``); its iterate
    certified 10 passes after the 9th multiplier update, but only the end of the inner solve was
    graded, and the budget ran out 1,840 passes into it."""
    X = np.array([[0.9147427], [-0.24058691], [0.10733354], [0.17354696], [-0.70004724], [-0.86406113],
                  [0.51854876], [-0.92659724], [1.02756773], [-1.04120056], [1.20087869]])
    relevant = {0: [2, 3], 2: [3], 3: [2, 3], 4: [1, 2, 3], 5: [2, 3], 6: [1], 8: [1, 2, 3], 9: [1, 2, 3],
                10: [3]}
    Y = np.zeros((11, 4), dtype=int)
    for i, labels in relevant.items():
        Y[i, labels] = 1
    return rs.make_problem(X @ X.T, Y, 0.1), X


@settings(max_examples=5, deadline=None)
@given(drawn=rank_problems())
@example(drawn=_one_feature_case())
def test_bcd_reaches_the_cvxpy_optimum_of_two_backends(drawn):
    _assert_bcd_reaches_the_cvxpy_optimum(*drawn)


def _assert_bcd_reaches_the_cvxpy_optimum(problem, X):
    agreement = solve_checked(lambda: rs.cvxpy_dual(problem)[0])   # raises when the backends disagree
    reference = -agreement.values["CLARABEL"]
    linear = np.allclose(problem.gram, X @ X.T, rtol=1e-12, atol=1e-12)
    factor = X if linear else gram_factor(problem.gram)
    result = instance_bcd(problem, tol=1e-7, max_iter=20_000, factor=factor)
    evaluation = rs.evaluate(problem, result.primal, result.dual)
    assert result.converged
    assert abs(evaluation.relative_gap) <= 1e-7 and evaluation.max_kkt <= 1e-7
    assert relative_difference(evaluation.primal_objective, reference) <= EXACT.objective
    beta = problem.scatter(result.dual["alpha"])
    assert np.max(np.abs(beta.sum(axis=0))) <= 1e-7 * max(1.0, float(np.max(problem.upper)))


@settings(max_examples=200, deadline=None)
@given(drawn=rank_problems())
def test_line_minimum_is_the_exact_minimiser_of_its_line(drawn):
    problem, _ = drawn
    rng = np.random.default_rng(problem.n_pairs)
    for scale in (1e-3, 1.0, 1e3):
        p = scale * rng.standard_normal(1 + problem.n_pairs % 9)
        upper, total = float(problem.upper[0]), float(rng.random() * problem.upper[0] * p.size)
        new = _line_minimum(p, upper, total)
        root = float(new.sum()) - total
        np.testing.assert_allclose(new, np.clip(p - root, 0.0, upper), rtol=0, atol=1e-12 * max(1.0, scale))


def _sparse_text(n, q, d=1836, words=70, seed=0):
    """Data shaped like bibtex (the sparse data bcd is for): binary bag-of-words rows with about
    ``words`` of ``d`` words each (CSR), and q labels with one to three on per row."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), words)
    columns = np.concatenate([rng.choice(d, words, replace=False) for _ in range(n)])
    X = sp.csr_matrix((np.ones(n * words), (rows, columns)), shape=(n, d))
    Y = np.zeros((n, q), dtype=int)
    for i in range(n):
        Y[i, rng.choice(q, rng.integers(1, 4), replace=False)] = 1
    return X, Y


def _assert_bcd_agrees_with_ipm_and_alm(X, Y):
    X = X[:, np.argsort(-X.sum(axis=0), kind="stable")[:200]]   # the 200 most used words: Q(d+1) small for ipm
    problem = rs.make_problem(None, Y, 1.0, features=X)
    values = {}
    for solver in ("bcd", "ipm", "alm"):
        result = registry.MODEL.solvers[solver].run(problem, tol=1e-7, max_iter=None)
        evaluation = rs.evaluate(problem, result.primal, result.dual)
        assert result.converged, solver
        assert abs(evaluation.relative_gap) <= 1e-7 and evaluation.max_kkt <= 1e-7, solver
        values[solver] = evaluation.primal_objective
    assert relative_difference(values["bcd"], values["ipm"]) <= 1e-6
    assert relative_difference(values["bcd"], values["alm"]) <= 1e-6


def test_bcd_agrees_with_ipm_and_alm_on_sparse_text():
    X, Y = _sparse_text(60, 6)
    _assert_bcd_agrees_with_ipm_and_alm(X.toarray(), Y)


@pytest.mark.realdata
def test_bcd_agrees_with_ipm_and_alm_on_a_bibtex_subset(bibtex):
    _assert_bcd_agrees_with_ipm_and_alm(bibtex.X[:60].toarray(), np.asarray(bibtex.Y)[:60, :6])


def test_csr_and_dense_features_give_the_same_iterates(monkeypatch):
    X, Y = _sparse_text(60, 6)
    dense = rs.make_problem(None, Y, 1.0, features=X.toarray())
    sparse = rs.make_problem(None, Y, 1.0, features=X)
    monkeypatch.setattr(kernels, "available_memory", lambda: 1)   # any n × n matrix would be refused
    a = instance_bcd(dense, tol=1e-7, max_iter=20_000)
    b = instance_bcd(sparse, tol=1e-7, max_iter=20_000)
    assert a.converged and b.converged and a.n_iter == b.n_iter
    np.testing.assert_allclose(a.dual["alpha"], b.dual["alpha"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.primal["b"], b.primal["b"], rtol=0, atol=1e-12)


def test_an_exhausted_budget_warns_with_the_value_reached():
    X, Y = _sparse_text(60, 6)
    problem = rs.make_problem(None, Y, 1.0, features=X)
    for budget in (1, 3):   # passes that never met their inner tolerance: no multiplier update ran
        with pytest.warns(ConvergenceWarning, match=f"instance BCD did not converge in {budget} iterations") as caught:
            result = instance_bcd(problem, tol=1e-10, max_iter=budget)
        assert not result.converged and result.n_iter == budget
        assert np.isfinite(result.stop_value) and f"reached {result.stop_value:.3e}," in str(caught[0].message)
    evaluation = rs.evaluate(problem, result.primal, result.dual)
    assert max(abs(evaluation.relative_gap), evaluation.max_kkt) > 1e-10


def test_fast_picks_bcd_above_the_interior_points_size_and_ipm_below():
    X, Y = _sparse_text(60, 6)
    wide = rs.make_problem(None, Y, 1.0, features=X)                 # Q(d+1) − 1 = 11,021 > 4000
    narrow = rs.make_problem(None, Y, 1.0, features=X[:, :100])      # 605 ≤ 4000
    assert registry.MODEL.resolve_fast(wide) == "bcd"
    assert registry.MODEL.resolve_fast(narrow) == "ipm"


def test_the_estimator_runs_bcd_on_a_csr_matrix():
    X, Y = _sparse_text(60, 6)
    reference = RankSVM(kernel="linear", solver="alm", tol=1e-7).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = RankSVM(kernel="linear", solver="fast", tol=1e-7).fit(X, Y)
    assert model.fit_report_.converged and model.fit_report_.solver == "bcd"
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(X), rtol=1e-3, atol=1e-3)


@st.composite
def sparse_rank_problems(draw):
    """Bag-of-words problems for the compiled pass on a CSR X: binary rows (some empty, one
    duplicated), with the awkward label structures of SPEC §3."""
    n, d, q = draw(st.integers(5, 14)), draw(st.integers(2, 8)), draw(st.integers(2, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = (rng.random((n, d)) < draw(st.sampled_from([0.2, 0.5]))).astype(float)
    X[1] = 0.0                                          # an empty row
    X[3] = X[2]                                         # a duplicated row
    Y = (rng.random((n, q)) < draw(st.sampled_from([0.3, 0.6]))).astype(int)
    Y[:, 0] = 0                                         # a label nobody has
    if q > 2:
        Y[:, 1] = 1                                     # a label everybody has
    Y[0, :] = 1                                         # an instance with every label
    Y[4, :] = 0                                         # and one with none
    Y[-1, :] = 0
    Y[-1, -1] = 1                                       # at least one instance with pairs
    C = draw(st.sampled_from([0.1, 1.0, 10.0]))
    return rs.make_problem(None, Y, C, features=sp.csr_matrix(X)), X, Y, C


@settings(max_examples=8, deadline=None)
@given(drawn=sparse_rank_problems())
def test_compiled_bcd_on_csr_features_reaches_the_cvxpy_optimum_of_two_backends(drawn):
    problem, X, Y, C = drawn
    # the reference is the same problem given by its Gram matrix (CVXPY never sees the CSR path)
    agreement = solve_checked(lambda: rs.cvxpy_dual(rs.make_problem(X @ X.T, Y, C))[0])
    reference = -agreement.values["CLARABEL"]
    result = instance_bcd(problem, tol=1e-7, max_iter=20_000)
    evaluation = rs.evaluate(problem, result.primal, result.dual)
    assert result.converged
    assert abs(evaluation.relative_gap) <= 1e-7 and evaluation.max_kkt <= 1e-7
    assert relative_difference(evaluation.primal_objective, reference) <= EXACT.objective


def _bibtex_text(bibtex, n_rows, norm, C, *, pairs_only=False):
    """The first ``n_rows`` bibtex rows on their 12 first labels and 300 most used words, scaled by
    ``norm`` (a common preprocessing of text; None keeps the binary features); rows without any of
    the words dropped, and with ``pairs_only`` the rows without a ranking pair too."""
    X = bibtex.X[:n_rows]
    X = X[:, np.argsort(-np.asarray(X.sum(axis=0)).ravel(), kind="stable")[:300]]
    X = X if norm is None else normalize(X, norm)
    Y = np.asarray(bibtex.Y)[:n_rows, :12]
    keep = np.asarray(X.sum(axis=1)).ravel() > 0
    if pairs_only:
        keep &= (Y.sum(axis=1) > 0) & (Y.sum(axis=1) < Y.shape[1])
    return rs.make_problem(None, Y[keep], C, features=sp.csr_matrix(X[keep]))


@pytest.mark.realdata
def test_bcd_agrees_with_the_interior_point_on_a_wider_bibtex_subset(bibtex):
    """150 rows, 12 labels, the 300 most used words: the compiled passes meet ipm to 1e-6 (objective)
    and give the same weights W (unique: the primal is strictly convex in W; the biases need not be)."""
    problem = _bibtex_text(bibtex, 150, None, 1.0)   # no row lacks all 300 words
    values, weights = {}, {}
    for solver in ("bcd", "ipm"):
        result = registry.MODEL.solvers[solver].run(problem, tol=1e-7, max_iter=None)
        evaluation = rs.evaluate(problem, result.primal, result.dual)
        assert result.converged and max(abs(evaluation.relative_gap), evaluation.max_kkt) <= 1e-7, solver
        values[solver] = evaluation.primal_objective
        weights[solver] = problem.weights(result.primal["beta"])
    assert relative_difference(values["bcd"], values["ipm"]) <= 1e-6
    np.testing.assert_allclose(weights["bcd"], weights["ipm"], rtol=0, atol=1e-3 * np.max(np.abs(weights["ipm"])))


def _small_c_cases():
    """Problems where C·‖x − m‖² is small, so the dual is nearly a linear program: the multiplier
    updates alone moved the biases so slowly that the budget of 20,000 passes ran out on each."""
    D = make_multilabel(n_samples=60, n_features=5, n_labels=4, random_state=0)
    X, Y = _sparse_text(60, 6)
    return [(D.X, D.Y, 1e-3), (D.X, D.Y, 1e-4), (X[:, :100].toarray(), Y, 1e-4)]


@settings(max_examples=10, deadline=None)
@given(drawn=rank_problems(Cs=(1e-4, 1e-3, 1e-2)))
def test_bcd_reaches_the_cvxpy_optimum_at_a_small_c(drawn):
    """The draws of the test above at C = 1e-4 to 1e-2, where the dual is nearly a linear program
    (the code before the biases' LP ran out of passes on the first draws)."""
    _assert_bcd_reaches_the_cvxpy_optimum(*drawn)


@pytest.mark.parametrize("case", range(3))
def test_bcd_certifies_where_c_times_the_squared_norms_is_small(case):
    X, Y, C = _small_c_cases()[case]
    _assert_bcd_meets_the_interior_point(rs.make_problem(None, Y, C, features=X))


def _assert_bcd_meets_the_interior_point(problem):
    values = {}
    for solver in ("bcd", "ipm"):
        result = registry.MODEL.solvers[solver].run(problem, tol=1e-8, max_iter=None)
        evaluation = rs.evaluate(problem, result.primal, result.dual)
        assert result.converged and max(abs(evaluation.relative_gap), evaluation.max_kkt) <= 1e-8, solver
        values[solver] = evaluation.primal_objective
    assert relative_difference(values["bcd"], values["ipm"]) <= 1e-7


@pytest.mark.realdata
def test_bcd_certifies_bibtex_rows_of_unit_length_at_a_small_c(bibtex):
    """Text rows scaled to unit length at C = 0.01: 150 rows."""
    _assert_bcd_meets_the_interior_point(_bibtex_text(bibtex, 150, "l2", 0.01))


@pytest.mark.realdata
def test_bcd_certifies_bibtex_rows_summing_to_one(bibtex):
    """Term frequencies (rows scaled to sum 1) at C = 1 on the 47 of the first 300 rows with a ranking
    pair: C·‖x − m‖² is small and the stop value falls slowly; inner solves made ten times tighter at
    every multiplier update used up the 20,000 passes (stop value 6.6e-6), against 3,713 passes now."""
    _assert_bcd_meets_the_interior_point(_bibtex_text(bibtex, 300, "l1", 1.0, pairs_only=True))
