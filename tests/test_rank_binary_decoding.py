"""Decoding (2)/(5)/(6), categorical regression (§5, code (7), CR loss), feature selection (§7)."""

import numpy as np
import pytest

from mlsvm.estimators.rank_binary import (BinaryApproachSVM, CategoricalRegressionSVM, categorical_codes, decoding_cost,
                                          cr_loss, decode)
from mlsvm.feature_selection import multiplicative_feature_selection
from mlsvm.metrics import hamming_loss

FIGURE_1_CODES = np.array([[1, 1, 1, 1, 1], [0, 0, 0, 0, 0]])
FIGURE_1_OUTPUT = np.array([[1.0, -0.05, -0.05, -0.05, -0.05]])


def test_figure_1_hamming_and_ahl_decoding_disagree():
    """E&W Figure 1: Hamming distances 4 and 1 pick Y2; AHL 4.2 and 5.8 pick Y1."""
    signs = np.where(FIGURE_1_OUTPUT > 0, 1, -1)
    assert (signs != 2 * FIGURE_1_CODES - 1).sum(axis=1).tolist() == [4, 1]
    ahl = np.maximum(0, 1 - (2 * FIGURE_1_CODES - 1) * FIGURE_1_OUTPUT).sum(axis=1)
    assert np.allclose(ahl, [4.2, 5.8])
    assert decode(FIGURE_1_OUTPUT, FIGURE_1_CODES, "hamming").tolist() == [1]
    assert decode(FIGURE_1_OUTPUT, FIGURE_1_CODES, "ahl").tolist() == [0]
    assert decode(FIGURE_1_OUTPUT, FIGURE_1_CODES, "clipped").tolist() == [0]


def test_eq5_reduces_to_sign_over_all_label_sets():
    rng = np.random.default_rng(0)
    q = 4
    every = np.array([[(c >> k) & 1 for k in range(q)] for c in range(2 ** q)])
    scores = rng.standard_normal((50, q)) * 2
    for decoding in ("ahl", "clipped", "hamming"):
        assert np.array_equal(every[decode(scores, every, decoding)], (scores > 0).astype(int))


def test_eq6_is_not_a_rewriting_of_eq5_when_outputs_leave_the_unit_box():
    """(5) charges ``1 − y f`` when ``y f < −1``, (6) only 2: they agree inside the unit box and can
    pick different codes outside it (the paper calls (6) a rewriting of (5))."""
    codes = np.array([[1, 1, 1], [0, 0, 0]])
    inside = np.array([[0.3, -0.8, 0.1], [-0.2, -0.9, 0.4]])
    assert decode(inside, codes, "ahl").tolist() == decode(inside, codes, "clipped").tolist()
    scores = np.array([[-2.0, 0.6, 0.6]])
    # AHL: Y1 = 3 + 0.4 + 0.4 = 3.8, Y2 = 0 + 1.6 + 1.6 = 3.2 → Y2
    assert decode(scores, codes, "ahl").tolist() == [1]
    # clipped: Y1 = 2 + 0.4 + 0.4 = 2.8, Y2 = 0 + 1.6 + 1.6 = 3.2 → Y1
    assert decode(scores, codes, "clipped").tolist() == [0]


def test_code_7_and_cr_loss_is_hamming_loss_of_codes():
    codes = categorical_codes(5)
    assert codes[0].tolist() == [1, 0, 0, 0, 0] and codes[4].tolist() == [1, 1, 1, 1, 1]
    rng = np.random.default_rng(3)
    y_true, y_pred = rng.integers(0, 5, 40), rng.integers(0, 5, 40)
    assert cr_loss(y_true, y_pred, classes=np.arange(5)) == pytest.approx(
        hamming_loss(codes[y_true], codes[y_pred]))
    assert cr_loss([1, 4], [4, 1], classes=np.arange(1, 6)) == pytest.approx(3 / 5)


def test_categorical_regression_estimator_on_ordered_classes():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 5, (80, 1))
    y = np.clip(np.floor(X[:, 0] + 0.3 * rng.standard_normal(80)), 0, 4).astype(int)
    model = CategoricalRegressionSVM(C=10.0).fit(X, y)
    report = model.fit_report_
    assert abs(report.relative_gap) <= 1e-6 and report.max_kkt <= 1e-6
    predicted = model.predict(X)
    assert set(predicted) <= set(y)
    loss = cr_loss(y, predicted, classes=model.classes_)
    assert loss <= 0.1                      # ordered 1-D problem: mistakes are off by at most one
    assert loss < cr_loss(y, np.full_like(y, 2), classes=model.classes_)
    # scikit-learn's multiclass convention: per-class scores = −(decoding cost (6)), argmax = predict
    outputs = model.outputs(X)
    np.testing.assert_array_equal(model.decision_function(X), -decoding_cost(outputs, model.codes_, "clipped"))
    np.testing.assert_array_equal(model.classes_[np.argmax(model.decision_function(X), axis=1)], predicted)


def test_estimator_with_allowed_codes_predicts_only_codes():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 2))
    codes = np.array([[1, 1, 0], [0, 0, 1]])
    Y = codes[(X[:, 0] > 0).astype(int)]
    est = BinaryApproachSVM(C=1.0, codes=codes, decoding="clipped").fit(X, Y)
    predicted = est.predict(X)
    assert all(any(np.array_equal(row, c) for c in codes) for row in predicted)


@pytest.mark.parametrize("kwargs, match", [({"C": 0.0}, "C must lie"), ({"solver": "x"}, "solver must be")])
def test_categorical_regression_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CategoricalRegressionSVM(**kwargs).fit(np.zeros((4, 1)) + np.arange(4)[:, None], [0, 1, 2, 1])


def test_categorical_regression_bad_targets():
    with pytest.raises(ValueError, match="one class"):
        CategoricalRegressionSVM().fit(np.arange(4.0)[:, None], [1, 1, 1, 1])
    with pytest.raises(ValueError, match="1d array"):
        CategoricalRegressionSVM().fit(np.arange(4.0)[:, None], np.eye(4))
    with pytest.raises(ValueError, match="not in classes"):
        cr_loss([0, 1], [0, 7], classes=[0, 1])


def test_feature_selection_finds_the_informative_features():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 10))
    scores = X[:, :2] @ rng.standard_normal((2, 3)) * 2 + 0.2 * rng.standard_normal((60, 3))
    Y = (scores > np.median(scores, axis=0)).astype(int)
    result = multiplicative_feature_selection(X, Y, C=1.0)
    assert result.converged
    assert result.selected.tolist() == [0, 1]
    assert len(result.history) == result.n_iter + 1 and np.all(result.history[0] == 1)
    assert np.all(result.scaling[:, 2:] == 0)


def test_feature_selection_bad_input():
    with pytest.raises(ValueError, match="C must lie"):
        multiplicative_feature_selection(np.eye(3), np.eye(3, dtype=int), C=0.0)
    with pytest.raises(ValueError, match="no ranking pairs"):
        multiplicative_feature_selection(np.eye(3), np.ones((3, 2), dtype=int))
    # every step's products ⟨w, x⟩ overflow: before, the CVXPY backend failed (GroundTruthError)
    with pytest.raises(ValueError, match=r"X has 3 row\(s\) whose squared norm ‖x‖² overflows float64"):
        multiplicative_feature_selection(1e300 * np.eye(3), np.eye(3, dtype=int))
