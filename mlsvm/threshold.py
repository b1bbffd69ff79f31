"""The threshold-based set-size predictor of Elisseeff & Weston §4.3 (used by every ranking model).

For a training instance with scores ``f = (f_1..f_Q)`` and relevant set ``Y``, the target threshold
minimises ``E(t) = |{k ∈ Y : f_k ≤ t}| + |{k ∈ Ȳ : f_k ≥ t}|``. ``E`` is constant on the open
intervals between consecutive distinct scores and never lower at a score itself (a tie there is an
error on both sides), so the minimisers form a union of open intervals. Two adjacent optimal
intervals never join into one segment: at the score ``v`` between them
``E(v) = E_right + #{irrelevant at v} = E_left + #{relevant at v}``, and some label scores ``v``,
so ``E(v) > min E`` (merging them put the threshold of scores (0, 0), labels (0, 1) at 0, where
``E = 2 > 1``). Following the paper ("when the optimal values are a segment, we choose the
middle"), the threshold is the middle of the longest optimal interval (the lowest one on ties). The two unbounded end segments get the middle of a virtual segment one typical score
spacing ``Δ = (max f − min f)/(Q − 1)`` long (``Δ = 1`` when all scores are equal), i.e.
``min f − Δ/2`` and ``max f + Δ/2``.

A linear least-squares model ``t(x) = ⟨v, f(x)⟩ + v_0`` is then fitted on these targets, and label k
is predicted iff ``f_k(x) > t(x)``.

Where the scores of every instance sum to the same constant by construction (Rank-SVM: ``Σ_k w_k = 0``
and ``Σ_k b_k = 0``; mLODM: ``Σ_k w_k = 0``, no biases), the design ``[F, 1]`` has the null direction
``v = 1``: least squares has a line of solutions, all with the same thresholds on such scores, and
which one ``lstsq`` returns is decided by the round-off in ``Σ_k f_k``. On emotions as MULAN ships it
(300 rows), Rank-SVM's coefficients came out at 1.4e9 and every threshold was that round-off times
1.4e9. With ``constant_sum=True`` the fit is restricted to ``v ⊥ 1``: the minimum-norm solution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["threshold_errors", "optimal_thresholds", "ThresholdPredictor"]


def threshold_errors(scores: np.ndarray, relevant: np.ndarray, t: float) -> int:
    """``E(t)`` of the module docstring for one instance.

    Parameters
    ----------
    scores : array of shape (q,)
        Scores of one instance.
    relevant : array of bool, shape (q,)
        Its relevant labels.
    t : float
        Threshold.
    """
    scores, relevant = np.asarray(scores), np.asarray(relevant)
    if scores.ndim != 1 or relevant.shape != scores.shape:
        raise ValueError(f"scores and relevant must be 1-D arrays of one shape; got {scores.shape} "
                         f"and {relevant.shape}")
    relevant = relevant.astype(bool)
    return int(np.sum(scores[relevant] <= t) + np.sum(scores[~relevant] >= t))


def _optimal_threshold(scores: np.ndarray, relevant: np.ndarray) -> float:
    values = np.unique(scores)
    spacing = (values[-1] - values[0]) / (scores.size - 1) if values.size > 1 else 1.0
    # Candidate open intervals: (-inf, v_0), (v_0, v_1), ..., (v_{m-1}, +inf); their finite stand-ins.
    lows = np.concatenate([[values[0] - spacing], values])
    highs = np.concatenate([values, [values[-1] + spacing]])
    relevant = relevant.astype(bool)
    # errors on interval j: relevant scores <= lows[j] (none for j = 0) + irrelevant scores >= highs[j]
    rel_le = np.searchsorted(np.sort(scores[relevant]), values, side="right")
    irr_ge = np.sum(~relevant) - np.searchsorted(np.sort(scores[~relevant]), values, side="left")
    errors = np.concatenate([[0], rel_le]) + np.concatenate([irr_ge, [0]])
    optimal = np.flatnonzero(errors == errors.min())
    spans = highs[optimal] - lows[optimal]
    best_index = optimal[np.argmax(spans)]  # argmax: the lowest of the longest
    best = (lows[best_index], highs[best_index])
    return 0.5 * (best[0] + best[1])


def _check_scores(F, n_labels: int | None = None) -> np.ndarray:
    """``F`` as a 2-D float array of finite scores (with ``n_labels`` columns when given)."""
    F = np.asarray(F)
    if F.ndim != 2 or F.dtype.kind not in "biuf":
        raise ValueError(f"F must be a 2-D array of real scores (n, q); got shape {F.shape} and dtype {F.dtype}")
    if n_labels is not None and F.shape[1] != n_labels:
        raise ValueError(f"F has {F.shape[1]} columns; the predictor was fitted on {n_labels} labels")
    F = F.astype(np.float64, copy=False)
    if not np.all(np.isfinite(F)):
        raise ValueError("F contains NaN or infinite scores")
    return F


def optimal_thresholds(F: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Per-instance optimal thresholds (module docstring) for scores ``F`` and truth ``Y`` (n, q).

    Parameters
    ----------
    F : array of shape (n, q)
        Training scores (finite).
    Y : array of shape (n, q)
        Label indicator in {0, 1}.
    """
    from mlsvm.data import check_Y

    F = _check_scores(F)
    if np.ndim(Y) != 2:
        raise ValueError(f"Y must be a 2-D label indicator (n, q) like F; got shape {np.shape(Y)}")
    Y = check_Y(Y, name="Y").Y.astype(bool)
    if Y.shape != F.shape:
        raise ValueError(f"Y has shape {Y.shape}; expected {F.shape} like F")
    return np.array([_optimal_threshold(F[i], Y[i]) for i in range(F.shape[0])])


@dataclass
class ThresholdPredictor:
    """Linear regression from the score vector to the optimal threshold (E&W §4.3).

    Parameters
    ----------
    coef_ : array of shape (q,) or None
        Linear map from scores to the threshold (fitted).
    intercept_ : float
        Its intercept.
    constant_sum : bool, default=False
        The scores of every instance sum to the same constant by construction: fit ``coef_ ⊥ 1``
        (module docstring).
    """

    coef_: np.ndarray | None = None
    intercept_: float = 0.0
    constant_sum: bool = False

    def fit(self, F: np.ndarray, Y: np.ndarray) -> "ThresholdPredictor":
        targets = optimal_thresholds(F, Y)   # validates F and Y
        F = np.asarray(F, dtype=np.float64)
        basis = None
        if self.constant_sum:   # v = basis z, the basis orthonormal in 1⊥: the last Q − 1 columns
            # of the Householder reflection that maps 1 to a multiple of e_1
            basis = np.linalg.qr(np.ones((F.shape[1], 1)), mode="complete")[0][:, 1:]
        design = np.hstack([F if basis is None else F @ basis, np.ones((F.shape[0], 1))])
        solution, *_ = np.linalg.lstsq(design, targets, rcond=None)
        self.coef_ = solution[:-1] if basis is None else basis @ solution[:-1]
        self.intercept_ = float(solution[-1])
        return self

    def threshold(self, F: np.ndarray) -> np.ndarray:
        if self.coef_ is None:
            raise ValueError("this ThresholdPredictor is not fitted: call fit first")
        return _check_scores(F, self.coef_.size) @ self.coef_ + self.intercept_

    def predict(self, F: np.ndarray) -> np.ndarray:
        """``Y_pred[i, k] = 1`` iff ``F[i, k] > t(F[i])``."""
        threshold = self.threshold(F)   # validates F
        return (np.asarray(F, dtype=np.float64) > threshold[:, None]).astype(np.int8)
