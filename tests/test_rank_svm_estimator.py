"""RankSVM estimator: solvers agree through the public API, multiclass input, the threshold rule,
bad input, non-convergence warnings, and one real-data check (emotions)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

import mlsvm
from mlsvm import RankSVM
from mlsvm.datasets import load_emotions, make_multiclass, make_multilabel
from mlsvm.formulations import rank_svm as rs
from mlsvm.kernels import make_kernel
from mlsvm.report import relative_difference
from mlsvm.threshold import ThresholdPredictor, optimal_thresholds
from mlsvm.verification.tolerances import tolerance

EXACT = tolerance("rank_svm", "fast")


def _awkward():
    data = make_multilabel(24, 3, 5, noise=0.15, random_state=3)
    Y = data.Y.copy()
    Y[:, 0] = 0
    Y[0, :] = 1
    Y[1, :] = 0
    return data.X, Y


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_fast_and_cvxpy_estimators_agree(kernel):
    X, Y = _awkward()
    fast = RankSVM(C=3.0, kernel=kernel, gamma=0.3, degree=2, coef0=1.0).fit(X, Y)
    truth = RankSVM(C=3.0, kernel=kernel, gamma=0.3, degree=2, coef0=1.0, solver="cvxpy").fit(X, Y)
    report = fast.fit_report_
    assert report.converged
    assert relative_difference(report.primal_objective, truth.fit_report_.primal_objective) <= EXACT.objective
    assert report.relative_gap <= EXACT.gap and report.max_kkt <= EXACT.kkt
    without = (Y.sum(axis=1) == 0) | (Y.sum(axis=1) == Y.shape[1])
    assert without[0] and without[1]
    assert fast.n_without_pairs_ == without.sum()     # counted, not dropped
    assert fast.dual_coef_.shape == (24, 5) and np.all(fast.dual_coef_[without] == 0)
    assert abs(fast.intercept_.sum()) <= 1e-10      # biases reported with Σ_k b_k = 0


def test_prediction_is_the_threshold_rule_and_precomputed_kernel_matches():
    X, Y = _awkward()
    model = RankSVM(C=1.0, kernel="rbf", gamma=0.5).fit(X, Y)
    scores = model.decision_function(X)
    threshold = model.threshold_.threshold(scores)
    assert np.array_equal(model.predict(X), (scores > threshold[:, None]).astype(np.int8))
    gram = make_kernel("rbf", 0.5)(X)
    precomputed = RankSVM(C=1.0, kernel="precomputed").fit(gram, Y)
    assert np.allclose(precomputed.decision_function(gram), scores, atol=1e-6)


@pytest.mark.parametrize("name", ["RankSVM", "MLODM"])
def test_threshold_on_raw_emotions_is_fitted_on_the_scores_not_their_round_off(name):
    """Emotions[:300] as MULAN ships it. The scores of both models sum to 0 over the labels by
    construction; Rank-SVM's row sums carry round-off of about 1e-10, and the least-squares
    threshold multiplied it by coefficients of 1.4e9 along v = 1 (8 of 1,758 predictions on the
    other rows flipped by it). Both estimators fit the threshold with ``constant_sum``; on these
    scores it must equal the fit on the scores with their row means removed, where lstsq sees no
    such direction (an independent computation of the same fit)."""
    emotions = load_emotions()
    X, Y = emotions.X[:300], emotions.Y[:300]
    model = getattr(mlsvm, name)(random_state=0).fit(X, Y)
    assert model.threshold_.constant_sum and abs(model.threshold_.coef_.sum()) <= 1e-12
    scores = model.decision_function(X)
    predictor = ThresholdPredictor(constant_sum=True).fit(scores, Y)
    centred = scores - scores.mean(axis=1, keepdims=True)
    reference = np.linalg.lstsq(np.hstack([centred, np.ones((300, 1))]), optimal_thresholds(scores, Y), rcond=None)[0]
    np.testing.assert_allclose(predictor.coef_, reference[:-1], atol=1e-8)
    assert predictor.intercept_ == pytest.approx(reference[-1], abs=1e-8)
    if name == "RankSVM":   # the failure this guards against, on the same scores
        assert np.max(np.abs(ThresholdPredictor().fit(scores, Y).coef_)) > 1e6


def test_multiclass_input_is_weston_watkins_and_predicts_classes():
    X, y = make_multiclass(45, 3, 3, random_state=2)
    labels = np.array(["a", "b", "c"])[y]
    model = RankSVM(C=1.0).fit(X, labels)
    onehot = RankSVM(C=1.0).fit(X, np.eye(3, dtype=int)[y])
    assert relative_difference(model.fit_report_.primal_objective, onehot.fit_report_.primal_objective) <= EXACT.objective
    predicted = model.predict(X)
    assert set(predicted) <= {"a", "b", "c"}
    assert np.array_equal(predicted, model.classes_[np.argmax(model.decision_function(X), axis=1)])
    assert np.mean(predicted == labels) > 0.8


def test_clone_keeps_hyperparameters():
    model = RankSVM(C=2.0, kernel="rbf", gamma=0.1, solver="frank-wolfe", tol=1e-3)
    assert clone(model).get_params() == model.get_params()


@pytest.mark.parametrize("C", [0.0, -1.0, float("nan")])
def test_non_positive_C_is_refused(C):
    X, Y = _awkward()
    with pytest.raises(ValueError, match="C"):
        RankSVM(C=C).fit(X, Y)
    with pytest.raises(ValueError, match="C"):
        rs.make_problem(np.eye(24), Y, C)


def test_kernel_that_is_not_psd_is_refused():
    X, Y = _awkward()
    gram = make_kernel("linear")(X) - 0.5 * np.eye(24)     # smallest eigenvalue −0.5
    with pytest.raises(ValueError, match="positive semidefinite"):
        RankSVM(kernel="precomputed").fit(gram, Y)
    with pytest.raises(ValueError, match="positive semidefinite"):
        rs.make_problem(gram, Y, 1.0)


@pytest.mark.parametrize("fill", [0, 1])
def test_labels_without_any_pair_are_refused(fill):
    X, _ = _awkward()
    Y = np.full((24, 3), fill)
    Y[5] = 1 - fill                                      # still no instance with both kinds
    with pytest.raises(ValueError, match="no ranking pairs"):
        RankSVM().fit(X, Y)


@pytest.mark.parametrize("solver, max_iter", [("fast", 1), ("ipm", 2), ("alm", 1), ("frank-wolfe", 2)])
def test_non_convergence_warns_with_the_gap_reached(solver, max_iter):
    # more pairs (384) than one decomposition working set takes (at most 240): on _awkward()'s 96
    # pairs the first sub-problem is the whole problem, and since the interior point's crossover to
    # the active set its answer is exact: certified at 1e-12 in one iteration (gap 8e-16)
    data = make_multilabel(80, 3, 5, noise=0.15, random_state=3)
    X, Y = data.X, data.Y.copy()
    Y[:, 0], Y[0, :], Y[1, :] = 0, 1, 0
    with pytest.warns(ConvergenceWarning, match=r"reached \d\.\d+e[-+]\d+, tolerance asked"):
        model = RankSVM(C=10.0, kernel="rbf", solver=solver, tol=1e-12, max_iter=max_iter).fit(X, Y)
    assert not model.fit_report_.converged


def test_unknown_solver_is_refused():
    X, Y = _awkward()
    with pytest.raises(ValueError, match="solver"):
        RankSVM(solver="smo").fit(X, Y)


@pytest.mark.parametrize("kernel, resolved", [("linear", "ipm"), ("rbf", "decomposition")])
def test_emotions_subset_fast_matches_cvxpy(datasets_dir, kernel, resolved):
    data = load_emotions()
    X = (data.X - data.X.mean(0)) / np.where(data.X.std(0) > 0, data.X.std(0), 1.0)
    X, Y = X[:120], data.Y[:120]
    fast = RankSVM(C=1.0, kernel=kernel).fit(X, Y)
    assert fast.fit_report_.solver == resolved
    truth = RankSVM(C=1.0, kernel=kernel, solver="cvxpy").fit(X, Y)
    assert relative_difference(fast.fit_report_.primal_objective, truth.fit_report_.primal_objective) <= EXACT.objective
    assert fast.fit_report_.max_kkt <= EXACT.kkt
