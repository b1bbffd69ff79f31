"""The factor mode's smoothed-hinge (Huber) Newton start of water-filling's label SVMs (issue 18): PDAS
at the target C_k from the pieces of a Huber continuation, instead of LIBSVM at C ≤ 10 and the exact
path through every breakpoint up to C_k. Both routes (``HUBER_START`` on and off) against CVXPY and
each other, one label against LIBSVM at a tight tolerance, and the first solve at a C_k far above
LIBSVM's start without LIBSVM or a path walk (the walk's breakpoints grow with n: at n = 16,000 a
categorical-regression label needed more than WALK_MAX_STEPS = 5000 of them and failed)."""

import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import mlsvm
from mlsvm import datasets
from mlsvm.datasets import make_multilabel
from mlsvm.formulations import rank_binary as rb
from mlsvm.formulations.evaluation import relative_difference
from mlsvm.solvers import rank_binary_waterfill as waterfill
from mlsvm.verification.tolerances import tolerance

from tests.test_rank_binary_features import _pinned
from tests.test_rank_binary_waterfill import _certificate, _ground_truth, _labels

EXACT = tolerance("rank_binary", "fast")
TOL = 1e-9


def _problem(n, d, q, C, seed, structure, copies, route):
    data = make_multilabel(n, d, q, random_state=seed)
    X = data.X.copy()
    X[1:1 + copies] = X[0]                     # duplicated rows: a rank-deficient [L_F, 1]
    Y = _labels(data.Y, structure, seed)
    gram = None if route == "features" else X @ X.T
    return rb.BinaryApproachProblem(gram, Y, C, features=X)


def _solve(problem, huber, monkeypatch):
    monkeypatch.setattr(waterfill, "HUBER_START", huber)
    monkeypatch.setattr(waterfill, "HUBER_MIN_RATIO", 0)    # the start on every factor-mode problem
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL)
    assert any(issubclass(w.category, ConvergenceWarning) for w in caught) == (not result.converged)
    return result


@settings(max_examples=15)
@given(n=st.integers(24, 60), d=st.integers(1, 5), q=st.integers(1, 3), C=st.sampled_from([0.1, 1.0, 10.0, 100.0]),
       seed=st.integers(0, 1000), copies=st.integers(0, 4), route=st.sampled_from(["features", "gram"]),
       structure=st.sampled_from(["none", "nobody", "rows", "categorical"]))
@example(n=40, d=3, q=1, C=0.1, seed=106, copies=3, route="features", structure="categorical")
@example(n=24, d=3, q=3, C=0.1, seed=40, copies=0, route="features", structure="categorical")
def test_huber_start_and_old_route_agree_with_cvxpy(n, d, q, C, seed, copies, route, structure):
    """Factor mode (n ≥ 4d: the feature route, or a Gram matrix with its pivoted-Cholesky factor):
    water-filling with the Huber start and without it (LIBSVM + path-following) either certify and
    equal the CVXPY optimum, or warn and end honestly above tol; when both certify their objectives
    agree to 1e-9 and so do the training decision values of labels whose bias is pinned."""
    problem = _problem(n, d, q, C, seed, structure, copies, route)
    truth = _ground_truth(problem)
    with pytest.MonkeyPatch.context() as monkeypatch:
        results = {huber: _solve(problem, huber, monkeypatch) for huber in (True, False)}
    for result in results.values():
        objective, gap, kkt = _certificate(problem, result)
        if result.converged:
            assert gap <= TOL and kkt <= TOL
            assert relative_difference(objective, truth) <= EXACT.objective
        else:
            assert max(gap, kkt) > TOL
    new, old = results[True], results[False]
    if new.converged and old.converged:
        assert relative_difference(_certificate(problem, new)[0], _certificate(problem, old)[0]) <= 1e-9
        scores = [problem.gram_times(r.primal["coef"]) for r in (new, old)]
        size = max(1.0, np.abs(scores[1]).max())
        active = (new.dual["lam"] > 1e-6) & (old.dual["lam"] > 1e-6)
        assert np.max(np.abs(scores[0] - scores[1])[:, active], initial=0.0) <= 1e-7 * size
        pinned = _pinned(problem, new) & _pinned(problem, old) & active
        assert np.all(np.abs(new.primal["b"] - old.primal["b"])[pinned] <= 1e-7 * size)


@pytest.mark.parametrize("C", [0.5, 50.0, 5000.0])
def test_one_label_is_exact_and_beats_libsvm(C):
    """One label SVM ``½‖w‖² + C Σ ξ`` solved from the Huber start (no LIBSVM, no path walk): its dual
    ``β = C·fraction`` (flat segments: ``coef`` is p alone) gives w and is feasible (box, ``Σ y β = 0``) with zero duality gap (closed forms), and its
    primal objective is at most LIBSVM's at tol 1e-12 and within LIBSVM's accuracy of it (measured:
    LIBSVM ends 4e-11, 2e-8, 3e-6 relative above the exact optimum at C = 0.5, 50, 5000)."""
    data = make_multilabel(300, 6, 1, random_state=3)
    X, y = data.X / np.sqrt(np.max(np.sum(data.X ** 2, axis=1))), 2.0 * data.Y[:, 0] - 1
    label = waterfill._Label.__new__(waterfill._Label)
    label.gram, label.y, label.n = None, y, y.size
    label._factor_fn, label.factor = None, X
    label._box = label._rep = label.c = label.status = None
    label.flats, label.visited = {}, {}
    assert label._huber(C)
    coef, b, fraction = label.coefficients(C)
    beta, w = C * fraction, X.T @ coef
    assert np.max(np.abs(X.T @ (y * beta) - w)) <= 1e-9 * max(1.0, np.abs(w).max())   # w = Σ β_i y_i x_i
    assert beta.min() >= -1e-12 * C and beta.max() <= C * (1 + 1e-12) and abs(beta @ y) <= 1e-9 * C

    def primal(w, b):
        return 0.5 * w @ w + C * np.maximum(0.0, 1.0 - y * (X @ w + b)).sum()

    exact = primal(w, b)
    assert relative_difference(exact, beta.sum() - 0.5 * w @ w) <= 1e-10
    reference = SVC(kernel="linear", C=C, tol=1e-12, max_iter=10**8).fit(X, y)
    libsvm = primal(reference.coef_.ravel(), reference.intercept_[0])
    assert exact <= libsvm * (1 + 1e-12)
    assert relative_difference(exact, libsvm) <= 1e-5


def test_first_solve_far_above_the_libsvm_start_needs_no_path(monkeypatch):
    """A label whose first C_k is far above START_C (C = 100, C_k ≈ 500 in scaled units): the first
    solve is PDAS at C_k from the Huber pieces — LIBSVM and the exact path walk (whose breakpoints
    between START_C and C_k grow with n) do not run — and the fit certifies at CVXPY's optimum."""
    problem = _problem(200, 4, 2, 100.0, 5, "none", 0, "features")
    calls = []
    monkeypatch.setattr(waterfill._Label, "_start", lambda self, *args, **kwargs: calls.append("libsvm"))
    monkeypatch.setattr(waterfill._Label, "_walk", lambda self, *args, **kwargs: calls.append("walk"))
    outer = waterfill._Waterfill(problem)
    assert min(label.c for label in outer.labels.values()) > 10 * waterfill.START_C
    assert calls == []
    monkeypatch.undo()
    result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL)
    objective, gap, kkt = _certificate(problem, result)
    assert result.converged and gap <= TOL and kkt <= TOL
    assert relative_difference(objective, _ground_truth(problem)) <= EXACT.objective


@pytest.mark.parametrize("n, d, used", [(40, 4, True), (39, 4, False), (200, 4, True), (20, 4, False)])
def test_switch_point(monkeypatch, n, d, used):
    """The start runs when n ≥ HUBER_MIN_RATIO · (r + 1) (here r = d): on both sides of n = 8(d + 1) = 40,
    the fit certifies at CVXPY's optimum, and the Newton pieces are offered only at or above it."""
    assert waterfill.HUBER_MIN_RATIO == 8
    assert waterfill._Label.huber_route(n, d) == (n >= 8 * (d + 1))
    calls = []
    newton = waterfill._huber_newton
    monkeypatch.setattr(waterfill, "_huber_newton", lambda *args: calls.append(1) or newton(*args))
    problem = _problem(n, d, 2, 1.0, 7, "none", 0, "features")
    result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL)
    objective, gap, kkt = _certificate(problem, result)
    assert result.converged and gap <= TOL and kkt <= TOL
    assert relative_difference(objective, _ground_truth(problem)) <= EXACT.objective
    assert bool(calls) == used


@pytest.mark.parametrize("dataset, rows, estimator", [
    ("emotions", None, "BinaryApproachSVM"), ("emotions", None, "CategoricalRegressionSVM"),
    ("yeast", 900, "CategoricalRegressionSVM")])
def test_real_data_both_starts_give_the_same_model(dataset, rows, estimator, monkeypatch):
    """The issue's agreement with the route it replaces on the real datasets (bundled, standardised,
    linear kernel, both above the switch n ≥ 8(d + 1)): the estimator with the start and without it
    certifies at tol 1e-8 and gives the same objective (≤ 1e-10 relative) and training decision
    values (≤ 1e-8). Measured: ≤ 4e-16 and ≤ 7e-15."""
    data = getattr(datasets, f"load_{dataset}")()
    X = StandardScaler().fit_transform(data.X)[:rows]
    Y = data.Y[:rows]
    y = Y if estimator == "BinaryApproachSVM" else Y.argmax(axis=1)
    assert X.shape[0] >= waterfill.HUBER_MIN_RATIO * (X.shape[1] + 1)
    fits = []
    for huber in (True, False):
        monkeypatch.setattr(waterfill, "HUBER_START", huber)
        model = getattr(mlsvm, estimator)(kernel="linear", solver="waterfill", tol=1e-8).fit(X, y)
        assert model.fit_report_.converged
        fits.append((model.fit_report_.primal_objective, model.decision_function(X)))
    (objective, scores), (old_objective, old_scores) = fits
    assert relative_difference(objective, old_objective) <= 1e-10
    np.testing.assert_allclose(scores, old_scores, rtol=0, atol=1e-8)
