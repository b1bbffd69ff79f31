"""Water-filling on rank-deficient Gram matrices (factor mode): a linear kernel with n ≫ d, duplicated
rows, labels with one sign or an optimal w = 0 — against CVXPY on two backends, on real data against
the CVXPY route, the low-rank factor itself, and planted failures (ConvergenceWarning)."""

import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from mlsvm import BinaryApproachSVM
from mlsvm.datasets import load_emotions, load_yeast, make_multilabel
from mlsvm.formulations import rank_binary as rb
from mlsvm.formulations.evaluation import relative_difference
from mlsvm.kernels import low_rank_factor
from mlsvm.registry import rank_binary as registry
from mlsvm.solvers import rank_binary_waterfill as waterfill
from mlsvm.solvers.rank_binary_cvxpy import solve_primal
from mlsvm.verification.tolerances import tolerance

from tests.test_rank_binary_waterfill import _certificate, _ground_truth, _labels

EXACT = tolerance("rank_binary", "fast")
TOL = 1e-7


def _linear_problem(n, d, q, C, seed, structure, copies=0):
    """A linear kernel on n points in d dimensions (rank ≤ d < n), ``copies`` duplicated rows."""
    data = make_multilabel(n, d, q, random_state=seed)
    X = data.X.copy()
    X[1:1 + copies] = X[0]
    return rb.BinaryApproachProblem(X @ X.T, _labels(data.Y, structure, seed), C, features=X)


def test_low_rank_factor_is_exact_or_refused():
    X = np.random.default_rng(0).normal(size=(60, 4))
    gram = X @ X.T / np.max(np.sum(X * X, axis=1))
    factor = low_rank_factor(gram, 30, 1e-13)
    assert factor.shape == (60, 4)
    assert np.max(np.abs(gram - factor @ factor.T)) <= 1e-12
    assert low_rank_factor(gram, 3, 1e-13) is None          # rank 4 > 3 columns
    assert low_rank_factor(np.eye(10), 5, 1e-13) is None     # full rank


@settings(max_examples=15)
@given(n=st.integers(20, 40), d=st.integers(1, 4), q=st.integers(1, 4), C=st.sampled_from([0.1, 1.0, 10.0]),
       seed=st.integers(0, 1000), copies=st.integers(0, 6),
       structure=st.sampled_from(["none", "nobody", "everybody", "rows", "categorical"]))
@example(n=21, d=2, q=3, C=10.0, seed=384, copies=5, structure="none")   # a failed label solve
def test_factor_mode_matches_cvxpy(n, d, q, C, seed, copies, structure):
    """n ≫ d (rank ≤ d, so many more free points than rank + 1 are possible), duplicated rows, labels
    nobody/everybody has, categorical codes. Water-filling either certifies at 1e-7 and equals
    CVXPY's optimum, or says it failed (ConvergenceWarning, converged=False: a label solve can fail,
    docs/rank_binary.md "Known limits", the explicit example) and "fast" then certifies the optimum
    through the CVXPY primal."""
    problem = _linear_problem(n, d, q, C, seed, structure, copies)
    truth = _ground_truth(problem)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL)
    if not result.converged:
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
        result = registry.MODEL.solvers[registry.MODEL.resolve_fast(problem)].run(problem, tol=TOL, max_iter=200)
    objective, gap, kkt = _certificate(problem, result)
    assert result.converged and gap <= TOL and kkt <= TOL
    assert relative_difference(objective, truth) <= EXACT.objective


def test_zero_w_label_is_certified_through_the_features():
    """The only label's optimal w is 0 with λ = 1 (its positives copy negatives' points): the
    w-stationarity residual is ‖u‖ = 0. Through the Gram matrix, sqrt(cᵀKc) sits at its round-off
    floor; through the features ‖Xᵀc‖ it is ~1e-14 and the fit certifies. Which side of tol the floor
    falls on is the BLAS's round-off of X Xᵀ and of the form (2.9e-7 under OpenBLAS's Haswell and
    SkylakeX kernels, within tol under its Sandybridge kernels): the Gram route must be honest about
    it either way."""
    rng = np.random.default_rng(3)
    for _ in range(3):                       # the draw test_zero_w_label_is_found starts from
        X = rng.normal(size=(30, 2))
    X = np.vstack([X, X[:10]])
    Y = np.zeros((40, 1), dtype=int)
    Y[30:, 0] = 1
    floor = rb.BinaryApproachProblem(X @ X.T, Y, 10.0)
    problem = rb.BinaryApproachProblem(X @ X.T, Y, 10.0, features=X)
    result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL)   # the feature route (d ≤ n/2)
    objective, gap, kkt = _certificate(problem, result)
    assert result.converged and gap <= TOL and kkt <= TOL
    assert rb.label_norms(problem.gram, result.primal["coef"])[0] <= 1e-20
    # the Gram route's point (the solver grades it through the Gram matrix) is certified through the
    # features; through the Gram matrix it is certified exactly when the floor falls within tol, and
    # the solver warns exactly when it does not
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gram_route = waterfill.solve_rank_binary_waterfill(floor, tol=TOL)
    objective, gap, kkt = _certificate(problem, gram_route)
    assert gap <= TOL and kkt <= TOL
    _, gram_gap, gram_kkt = _certificate(floor, gram_route)
    assert gram_route.converged == (max(gram_gap, gram_kkt) <= TOL)
    assert [w.category for w in caught] == ([] if gram_route.converged else [ConvergenceWarning])


def test_zero_w_label_is_found():
    """A label whose optimal w is 0 (its mean-shifted classes cannot be separated better than by the
    bias: the positives are copies of the negatives' points) ends with w = 0 and λ = 0 — exactly."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    X = np.vstack([X, X[:10]])                                    # 10 positives duplicate negatives
    Y = np.zeros((40, 2), dtype=int)
    Y[30:, 0] = 1
    Y[:, 1] = X[:, 0] > 0.2
    problem = rb.BinaryApproachProblem(X @ X.T, Y, 1.0)
    truth = _ground_truth(problem)
    result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL)
    objective, gap, kkt = _certificate(problem, result)
    assert result.converged and gap <= TOL and kkt <= TOL
    assert relative_difference(objective, truth) <= EXACT.objective
    assert rb.label_norms(problem.gram, result.primal["coef"])[0] <= 1e-20


def _real(name, n, q):
    """The first n rows and q labels (the CVXPY reference's time grows with both), standardised."""
    data = load_yeast("train") if name == "yeast" else load_emotions()
    X = StandardScaler().fit_transform(np.asarray(data.X, dtype=float)[:n])
    return rb.BinaryApproachProblem(X @ X.T, np.asarray(data.Y)[:n, :q], 1.0)


@pytest.mark.parametrize("name, n, q", [("yeast", 220, 5), ("emotions", 150, 6)])
def test_real_data_agrees_with_the_cvxpy_route(name, n, q):
    """yeast (rank 103 < n) and emotions (rank 72 < n), linear: "fast" (water-filling, factor mode)
    against the CVXPY primal: objectives and decision values of the labels with λ_k > 0 (their w_k
    and b_k are unique) to 1e-6."""
    problem = _real(name, n, q)
    assert low_rank_factor(problem.gram / problem.gram.diagonal().max(), n / 2, 1e-13) is not None
    fast = registry.MODEL.solvers[registry.MODEL.resolve_fast(problem)].run(problem, tol=TOL, max_iter=200)
    reference = solve_primal(problem, "ECOS", tol=TOL)
    assert fast.converged and fast.solver == "waterfill"
    objectives = [rb.primal_objective(problem, r.primal["coef"], r.primal["b"]) for r in (fast, reference)]
    assert relative_difference(*objectives) <= 1e-6
    scores = [problem.gram @ r.primal["coef"] + r.primal["b"] for r in (fast, reference)]
    active = fast.dual["lam"] > 1e-3
    assert np.any(active)
    assert np.max(np.abs(scores[0][:, active] - scores[1][:, active])) <= 1e-6 * max(1.0, np.abs(scores[1]).max())


def test_failed_label_solve_in_factor_mode_warns(monkeypatch):
    """A label solve that fails (planted: no PDAS attempt, no path-following, no w = 0 set succeeds)
    ends converged=False with a ConvergenceWarning naming it — in the solver and through the
    estimator with solver="waterfill"; "fast" then certifies through the CVXPY primal and its stop
    rule says that water-filling stopped first."""
    for name in ("_try", "_walk", "_try_zero"):
        monkeypatch.setattr(waterfill._Label, name, lambda self, *args, **kwargs: False)
    problem = _linear_problem(30, 2, 3, 1.0, 0, "none")
    with pytest.warns(ConvergenceWarning, match="active-set solve of a label SVM failed"):
        result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL)
    assert not result.converged
    data = make_multilabel(30, 2, 3, random_state=0)
    with pytest.warns(ConvergenceWarning):
        model = BinaryApproachSVM(solver="waterfill").fit(data.X, data.Y)
    assert not model.fit_report_.converged
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        report = BinaryApproachSVM().fit(data.X, data.Y).fit_report_
    assert report.converged and report.stop_rule.startswith("water-filling stopped at")


def test_stationarity_holds_coefficientwise_not_only_up_to_the_null_space():
    """In factor mode a label's coefficients and α∘y/(2λ_k) may differ by a vector of K's null space,
    which the Gram-form residual sqrt(rᵀKr) sees only as a round-off floor ~ sqrt(eps)·‖r‖ (1e-8
    here, above tol 1e-10). The certificate then grades the representative built from α: for every
    label with λ_k > 0, 2λ_k coef_k = α_k ∘ y_k entrywise, and the stationarity residual is round-off.

    Every label here has λ_k > 0. A label with λ_k = 0 has a floor of its own, which the
    representative does not touch (docs/rank_binary.md, "Known limits", first item); whether it
    shows at tol 1e-10 is decided by the round-off of X Xᵀ, so by the BLAS: the problem this test
    first used (seed 4, C = 3, one label weighted) certified under OpenBLAS's Haswell kernels and
    stopped at 1.8e-8 under its SkylakeX kernels."""
    data = make_multilabel(200, 5, 4, random_state=5)
    problem = rb.BinaryApproachProblem(data.X @ data.X.T, data.Y, 0.3)       # rank 5, no features
    result = waterfill.solve_rank_binary_waterfill(problem, tol=1e-10)
    assert result.converged
    coef, alpha, lam = result.primal["coef"], result.dual["alpha"], result.dual["lam"]
    weighted = lam > 0
    assert weighted.all()
    residual = 2.0 * lam[weighted] * coef[:, weighted] - problem.signed[:, weighted] * alpha[:, weighted]
    assert np.max(np.abs(residual)) <= 1e-12 * max(1.0, np.abs(alpha).max())
    kkt = rb.kkt_residuals(problem, coef, result.primal["b"], alpha, lam)
    assert kkt["dual"] <= 1e-14
