"""The set-size predictor of Elisseeff & Weston §4.3 (mlsvm.threshold) against brute force."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsvm.threshold import ThresholdPredictor, optimal_thresholds, threshold_errors


def brute_force_threshold(scores, relevant):
    """Enumerate the open intervals between consecutive distinct scores (E is constant on each),
    keep the optimal ones and return the middle of the longest (the lowest on ties); the two
    unbounded ends are one spacing Δ = (max − min)/(Q − 1) long (Δ = 1 if all scores are equal).
    Written without the sorted counting of mlsvm.threshold: E is evaluated point by point."""
    values = sorted(set(scores.tolist()))
    spacing = (values[-1] - values[0]) / (len(scores) - 1) if len(values) > 1 else 1.0
    intervals = [(values[0] - spacing, values[0])]
    intervals += [(values[j], values[j + 1]) for j in range(len(values) - 1)]
    intervals.append((values[-1], values[-1] + spacing))
    errors = [threshold_errors(scores, relevant, 0.5 * (lo + hi)) for lo, hi in intervals]
    best = min(errors)
    optimal = [interval for interval, error in zip(intervals, errors) if error == best]
    lo, hi = max(optimal, key=lambda s: (s[1] - s[0], -s[0]))
    return 0.5 * (lo + hi), best


score_rows = st.integers(2, 7).flatmap(lambda q: st.tuples(
    st.lists(st.integers(-4, 4), min_size=q, max_size=q),   # small integers: many ties
    st.lists(st.booleans(), min_size=q, max_size=q)))


@given(score_rows)
@settings(max_examples=150)
def test_optimal_threshold_matches_brute_force(row):
    scores, relevant = np.array(row[0], dtype=float) * 0.5, np.array(row[1])
    expected, best_error = brute_force_threshold(scores, relevant)
    found = optimal_thresholds(scores[None, :], relevant[None, :])[0]
    assert found == pytest.approx(expected, abs=1e-12)
    # the optimum over every real t: E is piecewise constant between scores, so the scores, the
    # midpoints between distinct scores and one point beyond each end see every value E takes
    distinct = np.unique(scores)
    grid = np.concatenate([scores, 0.5 * (distinct[1:] + distinct[:-1]), [scores.min() - 1, scores.max() + 1]])
    assert threshold_errors(scores, relevant, found) == best_error
    assert best_error == min(threshold_errors(scores, relevant, t) for t in grid)
    # the optimal set is a union of open intervals that never touch: E at every score is worse
    assert all(threshold_errors(scores, relevant, v) > best_error for v in scores)


def test_tied_scores_threshold_is_not_placed_on_the_tie():
    """Scores (0, 0), labels (irrelevant, relevant): E = 1 on both sides of 0 and 2 at 0, so the
    two optimal intervals are not one segment; merging them would put t on the tie."""
    scores, relevant = np.array([0.0, 0.0]), np.array([0, 1])
    t = optimal_thresholds(scores[None], relevant[None])[0]
    assert threshold_errors(scores, relevant, t) == 1
    assert t == pytest.approx(-0.5)


def test_separable_scores_give_zero_error_threshold_between_the_groups():
    scores = np.array([3.0, 2.0, -1.0, -2.0])
    relevant = np.array([1, 1, 0, 0])
    assert optimal_thresholds(scores[None], relevant[None])[0] == pytest.approx(0.5)


def test_constant_sum_scores_get_the_minimum_norm_threshold():
    """Scores whose rows sum to 0 up to round-off (as Rank-SVM's and mLODM's do): the direction
    v = 1 of [F, 1] is null but for the round-off, and lstsq kept it (coefficients of 6.5e9 here,
    1.4e9 on Rank-SVM's raw-emotions scores). constant_sum=True fits v ⊥ 1; the reference is the
    minimum-norm solution on the exact scores, by the pseudo-inverse."""
    rng = np.random.default_rng(3)
    exact = rng.standard_normal((200, 5))
    exact -= exact.mean(axis=1, keepdims=True)                       # rows sum to 0 exactly
    Y = (exact > 0.2).astype(int)
    F = exact + 1e-12 * rng.standard_normal(200)[:, None]            # round-off along 1
    targets = optimal_thresholds(F, Y)
    reference = np.linalg.pinv(np.hstack([exact, np.ones((200, 1))]), rcond=1e-10) @ targets
    predictor = ThresholdPredictor(constant_sum=True).fit(F, Y)
    np.testing.assert_allclose(predictor.coef_, reference[:-1], atol=1e-9)
    assert predictor.intercept_ == pytest.approx(reference[-1], abs=1e-9)
    assert abs(predictor.coef_.sum()) <= 1e-12
    assert np.max(np.abs(ThresholdPredictor().fit(F, Y).coef_)) > 1e3   # without it


def test_predictor_recovers_a_linear_threshold_and_predicts_strictly_above():
    rng = np.random.default_rng(0)
    F = rng.standard_normal((200, 5))
    Y = (F > 0.3).astype(int)              # the ideal threshold is any t in the gap around 0.3
    predictor = ThresholdPredictor().fit(F, Y)
    predicted = predictor.predict(F)
    assert np.mean(predicted != Y) < 0.02
    t = predictor.threshold(F)
    assert np.array_equal(predicted, (F > t[:, None]).astype(np.int8))


@pytest.mark.parametrize("call, match", [
    (lambda F, Y: optimal_thresholds(F[:, :2], Y), r"Y has shape \(4, 3\); expected \(4, 2\) like F"),
    (lambda F, Y: optimal_thresholds(np.where(F > 0, np.nan, F), Y), "F contains NaN or infinite scores"),
    (lambda F, Y: optimal_thresholds(np.full_like(F, np.inf), Y), "F contains NaN or infinite scores"),
    (lambda F, Y: optimal_thresholds(F.astype(str), Y), r"F must be a 2-D array of real scores .* dtype <U"),
    (lambda F, Y: optimal_thresholds(F[0], Y[0]), r"F must be a 2-D array of real scores \(n, q\); got shape \(3,\)"),
    (lambda F, Y: optimal_thresholds(F, 2 * Y), r"Y must contain only 0 and 1"),
    (lambda F, Y: optimal_thresholds(F, Y[:, 0]), r"Y must be a 2-D label indicator"),
    (lambda F, Y: ThresholdPredictor().fit(F, Y).predict(F[:, :2]), "F has 2 columns; the predictor was fitted on 3"),
    (lambda F, Y: ThresholdPredictor().fit(F, Y).predict(np.full_like(F, np.nan)), "F contains NaN"),
    (lambda F, Y: ThresholdPredictor().predict(F), "not fitted"),
    (lambda F, Y: threshold_errors(F[0], Y[0, :2], 0.0), r"1-D arrays of one shape; got \(3,\) and \(2,\)"),
])
def test_bad_scores_and_labels_are_clear_errors(call, match):
    """The public threshold functions are usable on their own: before, a shape mismatch was a raw
    IndexError, NaN scores gave NaN thresholds, infinite ones numpy warnings and labels of 2 or
    '1' counted as relevant."""
    F = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5], [0.2, 0.3, 0.1], [-1.0, 1.5, 0.0]])
    Y = np.array([[1, 0, 1], [1, 0, 0], [0, 1, 1], [0, 1, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=match):
            call(F, Y)
