"""Metrics: agreement with scikit-learn where it has the metric (documented differences handled
explicitly), hand-worked cases, bounds, and the edge cases of the module docstring."""

import numpy as np
import pytest
import sklearn.metrics as skm
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mlsvm import metrics


@st.composite
def problems(draw, ties=False):
    n = draw(st.integers(1, 15))
    q = draw(st.integers(2, 6))
    Y = draw(arrays(np.int8, (n, q), elements=st.integers(0, 1)))
    P = draw(arrays(np.int8, (n, q), elements=st.integers(0, 1)))
    elements = st.integers(-2, 2).map(float) if ties else st.floats(-5, 5, allow_nan=False)
    F = draw(arrays(np.float64, (n, q), elements=elements))
    return Y, P, F


def _has_pairs(Y):
    return (Y.sum(1) > 0) & (Y.sum(1) < Y.shape[1])


@given(problems(ties=True))
def test_set_metrics_match_scikit_learn(problem):
    Y, P, _ = problem
    assert metrics.hamming_loss(Y, P) == pytest.approx(skm.hamming_loss(Y, P))
    assert metrics.subset_accuracy(Y, P) == pytest.approx(skm.accuracy_score(Y, P))
    # every 0/0 is 1: scikit-learn's zero_division=1
    kw = dict(average="samples", zero_division=1)
    assert metrics.example_accuracy(Y, P) == pytest.approx(skm.jaccard_score(Y, P, **kw))
    assert metrics.example_precision(Y, P) == pytest.approx(skm.precision_score(Y, P, **kw))
    assert metrics.example_recall(Y, P) == pytest.approx(skm.recall_score(Y, P, **kw))
    assert metrics.example_f1(Y, P) == pytest.approx(skm.f1_score(Y, P, **kw))
    assert metrics.micro_f1(Y, P) == pytest.approx(skm.f1_score(Y, P, average="micro", zero_division=1))
    assert metrics.macro_f1(Y, P) == pytest.approx(skm.f1_score(Y, P, average="macro", zero_division=1))


@given(problems(ties=True))
def test_ranking_metrics_match_scikit_learn_on_instances_with_pairs(problem):
    """With ties (integer scores) included: both libraries treat ties pessimistically."""
    Y, _, F = problem
    rows = _has_pairs(Y)
    assume(rows.any())
    assert metrics.ranking_loss(Y, F) == pytest.approx(skm.label_ranking_loss(Y[rows], F[rows]))
    assert metrics.average_precision(Y, F) == pytest.approx(
        skm.label_ranking_average_precision_score(Y[rows], F[rows]))
    # MULAN coverage is scikit-learn's minus one on instances with a relevant label
    with_relevant = Y.sum(1) > 0
    expected = np.where(with_relevant, [skm.coverage_error(Y[i:i + 1], F[i:i + 1]) - 1 for i in range(len(Y))], 0)
    assert metrics.coverage(Y, F) == pytest.approx(np.mean(expected))


@given(problems(ties=True))
def test_bounds(problem):
    Y, P, F = problem
    for name in ("hamming_loss", "subset_accuracy", "example_accuracy", "example_precision",
                 "example_recall", "example_f1", "micro_f1", "macro_f1"):
        assert 0.0 <= getattr(metrics, name)(Y, P) <= 1.0
    if _has_pairs(Y).any():
        for name in ("ranking_loss", "one_error", "average_precision"):
            assert 0.0 <= getattr(metrics, name)(Y, F) <= 1.0
    assert 0.0 <= metrics.coverage(Y, F) <= Y.shape[1] - 1


@given(problems())
def test_perfect_and_worst_predictions(problem):
    Y = problem[0].copy()
    Y[:, 0], Y[:, -1] = 1, 0          # every instance has pairs
    perfect = Y + 0.0
    worst = 1.0 - Y
    assert metrics.hamming_loss(Y, Y) == 0.0 and metrics.hamming_loss(Y, 1 - Y) == 1.0
    assert metrics.ranking_loss(Y, perfect) == 0.0 and metrics.ranking_loss(Y, worst) == 1.0
    assert metrics.one_error(Y, perfect) == 0.0 and metrics.one_error(Y, worst) == 1.0
    assert metrics.average_precision(Y, perfect) == 1.0
    assert metrics.coverage(Y, perfect) == pytest.approx(np.mean(Y.sum(1) - 1))


@given(problems(), st.floats(0.1, 10), st.floats(-3, 3))
def test_ranking_metrics_are_invariant_to_increasing_maps(problem, scale, shift):
    Y, _, F = problem
    assume(_has_pairs(Y).any())
    G = np.exp(scale * F / 5.0) + shift
    # the premise: the map kept every pairwise order (round-off may merge nearly equal scores)
    assume(np.array_equal(F[:, :, None] >= F[:, None, :], G[:, :, None] >= G[:, None, :]))
    for name in ("ranking_loss", "one_error", "coverage", "average_precision"):
        assert getattr(metrics, name)(Y, G) == pytest.approx(getattr(metrics, name)(Y, F))


def test_hand_worked_example():
    Y = np.array([[1, 0, 1, 0], [0, 1, 0, 0]])
    F = np.array([[0.9, 0.8, 0.1, 0.0], [0.5, 0.4, 0.6, 0.1]])
    # instance 0: pairs (0,1),(0,3),(2,1),(2,3); misordered: (2,1) → 1/4. instance 1: label 1 is
    # below labels 2 and 0 → 2/3.
    assert metrics.ranking_loss(Y, F) == pytest.approx((1 / 4 + 2 / 3) / 2)
    assert metrics.one_error(Y, F) == pytest.approx(0.5)
    # ranks: instance 0 relevant labels at ranks 1 and 3 → coverage 2; instance 1 rank 3 → 2
    assert metrics.coverage(Y, F) == pytest.approx(2.0)
    # precision: inst 0: (1/1 + 2/3)/2; inst 1: 1/3
    assert metrics.average_precision(Y, F) == pytest.approx(((1 + 2 / 3) / 2 + 1 / 3) / 2)


def test_ties_are_pessimistic():
    Y = np.array([[1, 0, 0]])
    F = np.array([[1.0, 1.0, 0.0]])
    assert metrics.ranking_loss(Y, F) == pytest.approx(0.5)
    assert metrics.one_error(Y, F) == 1.0
    assert metrics.coverage(Y, F) == 1.0
    assert metrics.average_precision(Y, F) == pytest.approx(0.5)


def test_instances_without_pairs_are_excluded_from_ranking_metrics():
    Y = np.array([[1, 1, 1], [0, 0, 0], [1, 0, 0]])
    F = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0], [0.0, 1.0, 2.0]])
    assert metrics.ranking_loss(Y, F) == 1.0          # only the last instance counts
    assert metrics.one_error(Y, F) == 1.0
    assert metrics.average_precision(Y, F) == pytest.approx(1 / 3)
    assert metrics.coverage(Y, F) == pytest.approx((2 + 0 + 2) / 3)
    # scikit-learn keeps them with loss 0: a documented difference
    assert skm.label_ranking_loss(Y, F) == pytest.approx(1 / 3)
    assert np.isnan(metrics.ranking_loss(Y[:2], F[:2]))


def test_empty_sets_count_as_perfect():
    Y = np.array([[0, 0], [1, 0]])
    P = np.array([[0, 0], [0, 0]])
    assert metrics.example_accuracy(Y, P) == 0.5
    assert metrics.example_precision(Y, P) == 1.0
    assert metrics.example_f1(Y, P) == 0.5


@pytest.mark.parametrize("call, message", [
    (lambda: metrics.hamming_loss(np.eye(2, dtype=int), np.ones((2, 3))), "Y_pred has shape"),
    (lambda: metrics.ranking_loss(np.eye(2, dtype=int), np.array([[0, np.nan], [1, 0]])), "scores contains NaN"),
    (lambda: metrics.hamming_loss(np.eye(2, dtype=int), 2 * np.eye(2)), "only 0 and 1"),
    # two class vectors: "expected (3, 3) like Y_true" alone did not say why
    (lambda: metrics.hamming_loss(np.array([0, 1, 2]), np.array([0, 1, 1])),
     r"Y_pred has shape \(3,\); expected \(3, 3\) like Y_true \(Y_true is a 1-D class vector, read as the "
     r"indicator of its 3 classes; give Y_pred per class too\)"),
])
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_all_metrics_keys():
    Y = np.array([[1, 0], [0, 1]])
    values = metrics.all_metrics(Y, Y, Y + 0.0)
    assert set(values) >= {"hamming_loss", "ranking_loss", "coverage", "macro_f1"}
