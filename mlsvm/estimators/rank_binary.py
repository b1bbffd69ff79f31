"""Elisseeff & Weston's binary approach (§3, Problem 3) and categorical regression (§5).

* :class:`BinaryApproachSVM` trains Problem 3 (max-norm margin, one hyperplane per label) and
  decodes by (2) (the sign of every ``f_k``) or, over an allowed code set, by (5) (AHL decoding),
  (6) (clipped-output decoding) or the Hamming distance of the signs (ECOC-style).
* :class:`CategoricalRegressionSVM` codes class i of Q ordered classes as (7) — i ones then −1's —,
  trains the binary approach on the codes and decodes by (6) over the Q codes.
* :func:`cr_loss`: ``CR(h, x, y) = |h(x) − y| / Q`` (§5), averaged over samples.
"""

from __future__ import annotations

import numpy as np

from mlsvm.data import check_scalar, to_signed
from mlsvm.estimators._base import KernelMultilabelEstimator
from mlsvm.formulations import rank_binary as formulation
from mlsvm.solvers.rank_binary_waterfill import feature_route

__all__ = ["DECODINGS", "decode", "decoding_cost", "categorical_codes", "cr_loss", "BinaryApproachSVM",
           "CategoricalRegressionSVM"]

#: decoding rules over an allowed code set: eq. (5), eq. (6), Hamming distance of sign(f) (eq. 2)
DECODINGS = ("ahl", "clipped", "hamming")


def _check_codes(codes, n_labels: int) -> np.ndarray:
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[1] != n_labels or codes.shape[0] == 0:
        raise ValueError(f"codes must be a non-empty (n_codes, {n_labels}) array of allowed label sets; "
                         f"got shape {codes.shape}")
    if not np.all((codes == 0) | (codes == 1)):
        raise ValueError("codes must contain only 0 and 1 (one allowed label set per row)")
    return codes.astype(np.int8)


def decoding_cost(scores: np.ndarray, codes: np.ndarray, decoding: str = "ahl") -> np.ndarray:
    """Cost ``(m, c)`` of every allowed code (c, Q) {0,1} for every row of ``scores`` (m, Q):

    * ``"ahl"``, eq. (5): ``Σ_k |1 − y_k f_k|₊``;
    * ``"clipped"``, eq. (6): ``Σ_k |y_k − σ(f_k)|``, σ = clip to [−1, 1]. The paper calls (6) a
      rewriting of (5); they agree when every ``|f_k| ≤ 1`` but not in general: for
      ``y_k f_k < −1`` (5) charges ``1 − y_k f_k`` and (6) only 2 (tested);
    * ``"hamming"``: ``|{k : y_k ≠ sign(f_k)}|`` — decoding (2), then the nearest code.

    Parameters
    ----------
    scores : array of shape (n, q)
        Real-valued scores ``f_k(x_i)`` (larger means more relevant).
    codes : array of shape (c, q) or None
        Allowed label codes (rows in {0, 1}); None decodes each label by its sign.
    decoding : {"ahl", "clipped", "hamming"}
        Decoding rule: eq. (5), eq. (6) or the nearest code to the signs.
    """
    if decoding not in DECODINGS:
        raise ValueError(f"decoding must be one of {DECODINGS}; got {decoding!r}")
    signed = to_signed(codes)                             # (c, Q)
    F = np.asarray(scores, dtype=np.float64)[:, None, :]  # (m, 1, Q)
    if decoding == "ahl":
        return np.maximum(0.0, 1.0 - signed[None] * F).sum(axis=2)
    if decoding == "clipped":
        return np.abs(signed[None] - np.clip(F, -1.0, 1.0)).sum(axis=2)
    return (np.where(F > 0, 1.0, -1.0) != signed[None]).sum(axis=2)


def decode(scores: np.ndarray, codes: np.ndarray, decoding: str = "ahl") -> np.ndarray:
    """Index of the chosen allowed code for every row of ``scores``: the least
    :func:`decoding_cost` (eq. (5), (6) or Hamming). Ties go to the first code.

    Parameters
    ----------
    scores : array of shape (n, q)
        Real-valued scores ``f_k(x_i)`` (larger means more relevant).
    codes : array of shape (c, q) or None
        Allowed label codes (rows in {0, 1}); None decodes each label by its sign.
    decoding : {"ahl", "clipped", "hamming"}
        Decoding rule: eq. (5), eq. (6) or the nearest code to the signs.
    """
    return np.argmin(decoding_cost(scores, codes, decoding), axis=1)


def categorical_codes(n_classes: int) -> np.ndarray:
    """Code (7) as a {0,1} matrix: row i−1 (class i, 1-based) has i ones then zeros (−1's).

    Parameters
    ----------
    n_classes : int
        Number of ordered classes.
    """
    check_scalar(n_classes, "n_classes", low=2, integer=True)
    return np.tril(np.ones((n_classes, n_classes), dtype=np.int8))


def cr_loss(y_true, y_pred, classes=None) -> float:
    """Categorical-regression loss (E&W §5): ``1/m Σ |h(x) − y| / Q`` with classes ranked 1..Q in
    the order of ``classes`` (default: the sorted distinct values of ``y_true`` and ``y_pred``).
    Equals the Hamming loss between the codes (7) of ``y_pred`` and ``y_true`` (tested).

    Parameters
    ----------
    y_true : array of shape (n,)
        True ordered classes.
    y_pred : array of shape (n,)
        Predicted classes.
    classes : array or None
        The ordered classes (default: the sorted distinct values of ``y_true`` and ``y_pred``).
    """
    y_true, y_pred = np.asarray(y_true).ravel(), np.asarray(y_pred).ravel()
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_pred has {y_pred.size} entries; expected {y_true.size} like y_true")
    classes = np.unique(np.concatenate([y_true, y_pred])) if classes is None else np.asarray(classes)
    position = {value: index for index, value in enumerate(classes.tolist())}
    unknown = set(y_true.tolist()) | set(y_pred.tolist())
    unknown -= set(position)
    if unknown:
        raise ValueError(f"y_true/y_pred contain values {sorted(unknown)[:5]} that are not in classes")
    true_rank = np.array([position[v] for v in y_true.tolist()])
    pred_rank = np.array([position[v] for v in y_pred.tolist()])
    return float(np.mean(np.abs(pred_rank - true_rank)) / classes.size)


def _store_unchanged(estimator, arguments: dict) -> None:
    """scikit-learn style: every ``__init__`` argument stored unchanged under its own name."""
    for name, value in arguments.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


class BinaryApproachSVM(KernelMultilabelEstimator):
    """Problem 3 of Elisseeff & Weston: ``min max_k ‖w_k‖² + (C/Q) Σ_ik ξ_ik`` (hinge on
    ``y_ik f_k(x_i)``), any kernel.

    ``codes=None``: every label set is allowed and label k is predicted iff ``f_k(x) > 0`` (eq. 2).
    ``codes`` (c, q) {0,1}: only those label sets are allowed and the prediction is the code chosen
    by ``decoding`` (``"ahl"`` eq. (5), ``"clipped"`` eq. (6), ``"hamming"``; see :func:`decode`).
    A 1-D class vector ``y`` (multiclass) is one-hot coded and predicted by the argmax (codes unused).
    The paper's alternating dual solver (:mod:`mlsvm.solvers.rank_binary_alternating`) is not a
    ``solver`` here: it is not exact when a label's optimal ``λ_k`` is 0 (see its module and
    docs/rank_binary.md); call it directly and read its certified gap.

    Parameters
    ----------
    C : float
        Loss weight C > 0 of Problem 3 (the loss is ``(C/Q) Σ ξ``).
    %(kernel)s
    codes : array of shape (c, q) or None
        Allowed label codes (rows in {0, 1}); None decodes each label by its sign.
    decoding : {"ahl", "clipped", "hamming"}
        Decoding rule: eq. (5), eq. (6) or the nearest code to the signs.
    %(solver)s
    %(tol)s
    max_iter : int
        Iteration budget of the hand-written solver (water-filling root steps); CVXPY runs its
        backends at their own tight settings.
    %(random_state)s
    %(cvxpy_solver)s
    """

    _registry_model = "rank_binary"

    def __init__(self, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0, codes=None,
                 decoding="ahl", solver="fast", tol=1e-7, max_iter=200, random_state=None,
                 cvxpy_solver="ECOS"):
        _store_unchanged(self, locals())

    def _check_decoding(self, n_labels: int) -> None:
        """The decoding parameters (not the formulation's: :class:`BinaryApproachProblem` checks C)."""
        if self.decoding not in DECODINGS:
            raise ValueError(f"decoding must be one of {DECODINGS}; got {self.decoding!r}")
        self.codes_ = None if self.codes is None else _check_codes(self.codes, n_labels)

    def _linear_features(self):
        """The linear kernel's factor ``X`` (``K = XXᵀ``) for the certificate, else None."""
        return self.X_fit_ if self.kernel == "linear" else None

    def _train_gram(self, X):
        """No Gram matrix for the linear kernel when water-filling works on the features
        (``d ≤ n/2``, :func:`~mlsvm.solvers.rank_binary_waterfill.feature_route`): the problem then
        has ``gram=None`` and every product with K is ``X(Xᵀ·)`` (memory O(n·d + n·q))."""
        self._linear_without_gram = self.kernel == "linear" and feature_route(*X.shape)
        return super()._train_gram(X)

    def _problem(self, gram: np.ndarray, Y: np.ndarray) -> formulation.BinaryApproachProblem:
        self._check_decoding(Y.shape[1])
        return formulation.BinaryApproachProblem(gram, Y, self.C, features=self._linear_features())

    def _set_fitted(self, problem, result, evaluation, Y) -> None:
        self.dual_coef_, self.intercept_ = evaluation.extra["coef"], evaluation.extra["b"]
        self.alpha_, self.label_weights_ = result.dual["alpha"], result.dual["lam"]
        if self.kernel == "linear":   # w_k = Xᵀ dual_coef_k: scores without a test Gram matrix
            self.coef_ = np.asarray(self.X_fit_.T @ self.dual_coef_)

    def _decision(self, gram_test: np.ndarray) -> np.ndarray:
        return gram_test @ self.dual_coef_ + self.intercept_

    def _scores(self, X) -> np.ndarray:
        if self.kernel == "linear":
            return self._linear_scores(X)
        return super()._scores(X)

    def _decide(self, scores: np.ndarray) -> np.ndarray:
        if self.codes_ is None:
            return (scores > 0).astype(np.int8)                      # eq. (2)
        return self.codes_[decode(scores, self.codes_, self.decoding)]


class CategoricalRegressionSVM(BinaryApproachSVM):
    """Categorical regression (E&W §5): ordered classes ``classes_`` (sorted distinct values of
    ``y``), class i coded by (7), trained as the binary approach, predicted by (6) over the Q codes.

    :meth:`outputs` returns the Q real outputs ``f_k``. ``decision_function`` follows scikit-learn's
    multiclass convention: per class, minus its decoding cost (6), ``−Σ_k |y_k − σ(f_k)|``, so the
    argmax is the prediction (ties to the first class, as the decoding); with two classes the 1-D
    difference, which is ``2σ(f_2)``. :func:`cr_loss` scores predictions.

    Parameters
    ----------
    C : float
        Loss weight C > 0 of Problem 3 (the loss is ``(C/Q) Σ ξ``).
    %(kernel)s
    %(solver)s
    %(tol)s
    max_iter : int
        Iteration budget of the hand-written solver (water-filling root steps); CVXPY runs its
        backends at their own tight settings.
    %(random_state)s
    %(cvxpy_solver)s
    """

    _single_output = True

    def __init__(self, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0, solver="fast",
                 tol=1e-7, max_iter=200, random_state=None, cvxpy_solver="ECOS"):
        _store_unchanged(self, locals())

    def _check_decoding(self, n_labels: int) -> None:
        self.codes_ = categorical_codes(n_labels)

    def _problem(self, gram: np.ndarray, Y: np.ndarray) -> formulation.BinaryApproachProblem:
        """``Y``: the one-hot indicator of the ordered classes; trained on their codes (7)."""
        self._check_decoding(Y.shape[1])
        return formulation.BinaryApproachProblem(gram, categorical_codes(Y.shape[1])[np.argmax(Y, axis=1)], self.C,
                                                 features=self._linear_features())

    def outputs(self, X) -> np.ndarray:
        """The Q real outputs ``f_k(x)`` of the binary approach, shape (m, Q)."""
        return self._finite_scores(X)

    def _class_scores(self, scores: np.ndarray) -> np.ndarray:
        return -decoding_cost(scores, self.codes_, "clipped")
