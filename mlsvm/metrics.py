"""Multilabel evaluation metrics, each with the definition it follows.

Notation: ``Y`` is the ``(n, q)`` {0,1} truth, ``P`` a {0,1} prediction, ``F`` real scores.
``Y_i`` / ``Ȳ_i`` are the relevant / irrelevant labels of instance i.

Conventions (stated once, tested in ``tests/test_metrics.py``):

* **Ties are pessimistic** in every ranking metric: a relevant label tied with an irrelevant one
  counts as misordered, ``rank(k) = |{l : F_il ≥ F_ik}|``, and a tie at the top counts as a one-error
  if any tied label is irrelevant.
* **Instances without pairs.** Ranking loss, one-error and average precision are averaged over the
  instances with at least one relevant and one irrelevant label (elsewhere they are undefined or
  trivial), as in Zhang & Zhou's reference evaluation code. scikit-learn instead scores those
  instances 0 (ranking loss) or 1 (average precision) and keeps them in the mean. When no instance
  qualifies the metric is ``nan``.
* **Coverage** is MULAN's: ``max_{k∈Y_i} rank(k) − 1``, 0 for an instance with no relevant label.
  scikit-learn's ``coverage_error`` is one larger on every instance that has a relevant label.
* **Empty sets** in the set-based metrics: every ``0/0`` is 1 (predicting nothing for an instance
  with nothing is perfect), i.e. scikit-learn's ``zero_division=1``.
"""

from __future__ import annotations

import numpy as np

from mlsvm.data import check_Y

__all__ = [
    "hamming_loss", "subset_accuracy", "ranking_loss", "one_error", "coverage",
    "average_precision", "example_accuracy", "example_precision", "example_recall",
    "example_f1", "micro_f1", "macro_f1", "all_metrics", "LOWER_IS_BETTER",
]

LOWER_IS_BETTER = frozenset({"hamming_loss", "ranking_loss", "one_error", "coverage"})


def _pair(Y, other, other_name: str, *, binary: bool):
    classes = np.ndim(Y) == 1
    Y = check_Y(Y, name="Y_true").Y.astype(bool)
    other = np.asarray(other)
    if other.shape != Y.shape:
        read = (f" (Y_true is a 1-D class vector, read as the indicator of its {Y.shape[1]} classes; give "
                f"{other_name} per class too)" if classes else "")
        raise ValueError(f"{other_name} has shape {other.shape}; expected {Y.shape} like Y_true{read}")
    if binary:
        other = check_Y(other, name=other_name).Y.astype(bool)
    else:
        other = other.astype(np.float64)
        if not np.all(np.isfinite(other)):
            raise ValueError(f"{other_name} contains NaN or infinite scores")
    return Y, other


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Elementwise ``num / den`` with ``0/0 = 1`` (see the module's convention)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.ones_like(num)
    np.divide(num, den, out=out, where=den > 0)
    return out


def hamming_loss(Y_true, Y_pred) -> float:
    """``1/(nq) Σ_i |P_i Δ Y_i|`` (Elisseeff & Weston §2 HL; Shajari & Rangarajan §4; mLODM §7.1).

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    Y_pred : array of shape (n, q)
        Predicted label indicator in {0, 1}.
    """
    Y, P = _pair(Y_true, Y_pred, "Y_pred", binary=True)
    return float(np.mean(Y != P))


def subset_accuracy(Y_true, Y_pred) -> float:
    """Exact match ratio ``1/n Σ_i I(P_i = Y_i)`` (Shajari & Rangarajan §4).

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    Y_pred : array of shape (n, q)
        Predicted label indicator in {0, 1}.
    """
    Y, P = _pair(Y_true, Y_pred, "Y_pred", binary=True)
    return float(np.mean(np.all(Y == P, axis=1)))


def _ranked_instances(Y: np.ndarray) -> np.ndarray:
    n_relevant = Y.sum(axis=1)
    return (n_relevant > 0) & (n_relevant < Y.shape[1])


def ranking_loss(Y_true, scores) -> float:
    """``1/m Σ_i |{(k,l) ∈ Y_i×Ȳ_i : F_ik ≤ F_il}| / (|Y_i||Ȳ_i|)`` (Elisseeff & Weston §2 RL).

    Averaged over the instances that have pairs (mLODM §7.1 prints ``≥``; the pair is misordered
    when the relevant label does not score strictly higher, as in Elisseeff & Weston).

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    scores : array of shape (n, q)
        Real-valued scores ``f_k(x_i)`` (larger means more relevant).
    """
    Y, F = _pair(Y_true, scores, "scores", binary=False)
    rows = _ranked_instances(Y)
    if not np.any(rows):
        return float("nan")
    Y, F = Y[rows], F[rows]
    # misordered[i, k, l] for relevant k, irrelevant l: F_ik <= F_il
    misordered = (F[:, :, None] <= F[:, None, :]) & Y[:, :, None] & ~Y[:, None, :]
    pairs = Y.sum(axis=1) * (~Y).sum(axis=1)
    return float(np.mean(misordered.sum(axis=(1, 2)) / pairs))


def one_error(Y_true, scores) -> float:
    """``1/m Σ_i I[argmax_k F_ik ∉ Y_i]`` (Elisseeff & Weston §2, 1-err); pessimistic on ties.

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    scores : array of shape (n, q)
        Real-valued scores ``f_k(x_i)`` (larger means more relevant).
    """
    Y, F = _pair(Y_true, scores, "scores", binary=False)
    rows = _ranked_instances(Y)
    if not np.any(rows):
        return float("nan")
    Y, F = Y[rows], F[rows]
    top = F == F.max(axis=1, keepdims=True)
    return float(np.mean(np.any(top & ~Y, axis=1)))


def _pessimistic_rank(F: np.ndarray) -> np.ndarray:
    """``rank[i, k] = |{l : F_il ≥ F_ik}|`` (1 for the strict maximum)."""
    return (F[:, None, :] >= F[:, :, None]).sum(axis=2)


def coverage(Y_true, scores) -> float:
    """MULAN coverage: ``1/n Σ_i max_{k∈Y_i} rank_i(k) − 1`` (0 when ``Y_i = ∅``).

    How far down the ranking one goes to cover every relevant label; scikit-learn's
    ``coverage_error`` is this plus one on instances with a relevant label.

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    scores : array of shape (n, q)
        Real-valued scores ``f_k(x_i)`` (larger means more relevant).
    """
    Y, F = _pair(Y_true, scores, "scores", binary=False)
    rank = _pessimistic_rank(F)
    deepest = np.where(Y, rank, 0).max(axis=1)
    return float(np.mean(np.maximum(deepest - 1, 0)))


def average_precision(Y_true, scores) -> float:
    """``1/m Σ_i 1/|Y_i| Σ_{k∈Y_i} |{l∈Y_i : rank(l) ≤ rank(k)}| / rank(k)`` (mLODM §7.1 averprec;
    Elisseeff & Weston's precision). ``rank(l) ≤ rank(k)`` is read as ``F_il ≥ F_ik``.

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    scores : array of shape (n, q)
        Real-valued scores ``f_k(x_i)`` (larger means more relevant).
    """
    Y, F = _pair(Y_true, scores, "scores", binary=False)
    rows = _ranked_instances(Y)
    if not np.any(rows):
        return float("nan")
    Y, F = Y[rows], F[rows]
    above = F[:, None, :] >= F[:, :, None]                 # above[i, k, l]: F_il >= F_ik
    rank = above.sum(axis=2)
    relevant_above = (above & Y[:, None, :]).sum(axis=2)
    per_label = np.where(Y, relevant_above / rank, 0.0)
    return float(np.mean(per_label.sum(axis=1) / Y.sum(axis=1)))


def _set_counts(Y_true, Y_pred, axis):
    Y, P = _pair(Y_true, Y_pred, "Y_pred", binary=True)
    tp = (Y & P).sum(axis=axis)
    return tp, P.sum(axis=axis), Y.sum(axis=axis), (Y | P).sum(axis=axis)


def example_accuracy(Y_true, Y_pred) -> float:
    """``1/n Σ_i |P_i ∩ Y_i| / |P_i ∪ Y_i|`` (Shajari & Rangarajan §4, accuracy score).

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    Y_pred : array of shape (n, q)
        Predicted label indicator in {0, 1}.
    """
    tp, _, _, union = _set_counts(Y_true, Y_pred, axis=1)
    return float(np.mean(_ratio(tp, union)))


def example_precision(Y_true, Y_pred) -> float:
    """``1/n Σ_i |P_i ∩ Y_i| / |P_i|`` (Godbole & Sarawagi; Shajari & Rangarajan §4).

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    Y_pred : array of shape (n, q)
        Predicted label indicator in {0, 1}.
    """
    tp, predicted, _, _ = _set_counts(Y_true, Y_pred, axis=1)
    return float(np.mean(_ratio(tp, predicted)))


def example_recall(Y_true, Y_pred) -> float:
    """``1/n Σ_i |P_i ∩ Y_i| / |Y_i|``.

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    Y_pred : array of shape (n, q)
        Predicted label indicator in {0, 1}.
    """
    tp, _, actual, _ = _set_counts(Y_true, Y_pred, axis=1)
    return float(np.mean(_ratio(tp, actual)))


def example_f1(Y_true, Y_pred) -> float:
    """``1/n Σ_i 2|P_i ∩ Y_i| / (|P_i| + |Y_i|)``.

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    Y_pred : array of shape (n, q)
        Predicted label indicator in {0, 1}.
    """
    tp, predicted, actual, _ = _set_counts(Y_true, Y_pred, axis=1)
    return float(np.mean(_ratio(2 * tp, predicted + actual)))


def micro_f1(Y_true, Y_pred) -> float:
    """``2 Σ tp / (2 Σ tp + Σ fp + Σ fn)`` over all instance-label pairs (Jain & Rastogi Table 4).

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    Y_pred : array of shape (n, q)
        Predicted label indicator in {0, 1}.
    """
    tp, predicted, actual, _ = _set_counts(Y_true, Y_pred, axis=None)
    return float(_ratio(2 * tp, predicted + actual))


def macro_f1(Y_true, Y_pred) -> float:
    """Mean over labels of ``2 tp_k / (2 tp_k + fp_k + fn_k)`` (Jain & Rastogi Table 4).

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    Y_pred : array of shape (n, q)
        Predicted label indicator in {0, 1}.
    """
    tp, predicted, actual, _ = _set_counts(Y_true, Y_pred, axis=0)
    return float(np.mean(_ratio(2 * tp, predicted + actual)))


def all_metrics(Y_true, Y_pred, scores=None) -> dict[str, float]:
    """Every set metric of ``Y_pred`` and, when ``scores`` is given, every ranking metric.

    Parameters
    ----------
    Y_true : array of shape (n, q)
        True label indicator in {0, 1}.
    Y_pred : array of shape (n, q)
        Predicted label indicator in {0, 1}.
    scores : array of shape (n, q)
        Real-valued scores ``f_k(x_i)`` (larger means more relevant).
    """
    values = {
        "hamming_loss": hamming_loss(Y_true, Y_pred),
        "subset_accuracy": subset_accuracy(Y_true, Y_pred),
        "example_accuracy": example_accuracy(Y_true, Y_pred),
        "example_precision": example_precision(Y_true, Y_pred),
        "example_recall": example_recall(Y_true, Y_pred),
        "example_f1": example_f1(Y_true, Y_pred),
        "micro_f1": micro_f1(Y_true, Y_pred),
        "macro_f1": macro_f1(Y_true, Y_pred),
    }
    if scores is not None:
        values.update({
            "ranking_loss": ranking_loss(Y_true, scores),
            "one_error": one_error(Y_true, scores),
            "coverage": coverage(Y_true, scores),
            "average_precision": average_precision(Y_true, scores),
        })
    return values
