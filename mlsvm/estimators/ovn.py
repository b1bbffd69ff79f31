"""``OvNSVM``: the One-vs-None multiclass/multilabel SVM (Shajari & Rangarajan), SPEC §2.2.

Solvers (:mod:`mlsvm.registry.ovn`): ``"fast"`` (default) = ``"ipm"`` (an interior-point method on
the derived dual, exact to the duality gap), ``"mm"`` (the paper's Algorithm 1,
majorization–minimization with an ε floor, stopped on its certified gap) and ``"cvxpy"`` (the
derived dual by CVXPY; ``b`` = the multipliers of its equal-mass rows).
Decision (§3.2): the labels ``{k : f_k(x) ≥ 1}``, or ``argmax_k f_k(x)`` when that set is empty;
a multiclass fit predicts ``argmax``.

OvN separates each class "against the origin" (paper §2–3): there are no negatives, and the biases
are tied by ``Σ_k b_k = 0``, so with the linear or poly kernel the fit depends on where the origin
is. The paper normalizes its data (§5.2). On data whose centroid is farther from the origin than
its spread (raw iris: 3.6×) every class's members lie on the same side of the origin, the w_k come
out nearly parallel and the predictions are near chance (raw iris: accuracy 1/3, class 2 never
predicted); :class:`UncenteredDataWarning` says so. The RBF kernel is translation invariant.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.sparse import issparse

from mlsvm.estimators._base import KernelMultilabelEstimator
from mlsvm.formulations import ovn

__all__ = ["OvNSVM", "ovn_decide", "UncenteredDataWarning", "ORIGIN_RATIO"]

#: warn when ``‖mean(X)‖₂ > ORIGIN_RATIO · sqrt(Σ_j Var X_j)`` with a linear or poly kernel. Standardised
#: iris shifted off the origin (training accuracy, α = 0): ratio 1 → 0.75 (from 0.95), 2 → 0.51,
#: 4 → 1/3; wine 0.99 → 0.89, 0.64, 0.47. The paper's own Table 3 toy (ratio 1.4) still works, raw
#: iris / wine / emotions are at 3.6 / 2.4 / 5.5 (docs/ovn.md, "Defaults and unscaled data")
ORIGIN_RATIO = 2.0


class UncenteredDataWarning(UserWarning):
    """OvN with a linear or poly kernel was fitted on data far from the origin (see the module
    docstring): standardise X (e.g. ``sklearn.preprocessing.StandardScaler``) or use ``kernel="rbf"``.

    Parameters
    ----------
    message : str
        What was found and what to do.
    """

    def __init__(self, message: str):
        super().__init__(message)


def _origin_ratio(X) -> float:
    """``‖mean(X)‖₂ / sqrt(Σ_j Var X_j)`` (dense or sparse X); 0 when X has < 2 rows or no spread."""
    if X is None or X.shape[0] < 2:
        return 0.0
    mean = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
    squares = np.asarray((X.multiply(X) if issparse(X) else X * X).mean(axis=0), dtype=np.float64).ravel()
    spread = float(np.sqrt(max(float(np.sum(squares - mean * mean)), 0.0)))
    with np.errstate(over="ignore", invalid="ignore"):
        ratio = float(np.linalg.norm(mean)) / spread if spread > 0 else 0.0
    return ratio if np.isfinite(ratio) else 0.0


def ovn_decide(scores: np.ndarray) -> np.ndarray:
    """§3.2: label k iff ``f_k ≥ 1``; an instance with no such label gets its argmax label.

    Parameters
    ----------
    scores : array of shape (n, K)
        Scores ``f_k(x)``.
    """
    labels = (scores >= 1.0).astype(np.int8)
    none = ~labels.any(axis=1)
    labels[np.flatnonzero(none), np.argmax(scores[none], axis=1)] = 1
    return labels


class OvNSVM(KernelMultilabelEstimator):
    """One-vs-None SVM: one hyperplane per class, hinge loss on the class members only.

    Objective (canonical, SPEC §2.2): ``½tr(WMWᵀ) + β Σ_k Σ_{i∈C_k} [1 − f_k(x_i)]₊``
    (``+ gamma_b (Σb)²`` for ``b_constraint="soft"``), ``M = (1−α)I + α11ᵀ`` for
    ``w_constraint="soft"``; ``Σ_k w_k = 0`` for ``"hard"``; ``Σ_k b_k = 0`` for hard b.
    ``alpha`` is in the canonical scaling: the paper's Appendix-A α is ``2·alpha``.
    ``epsilon`` is the MM floor on ``z`` (``solver="mm"`` only; MM ends within ``β·epsilon·T/4`` of
    the optimum, and its safeguard may lower the floor below ``epsilon`` so that the true objective
    never increases: :mod:`mlsvm.solvers.ovn_mm`).

    Attributes after ``fit``: ``dual_coef_`` A (n, K) with ``W = ΦᵀA``, ``intercept_`` b (K,),
    ``multipliers_`` Λ (n, K), ``fit_report_``; with the linear kernel also ``coef_ = Xᵀ dual_coef_``
    (d, K), and ``f(x) = xᵀcoef_ + intercept_``. The linear kernel never forms an n × n matrix (a
    sparse X stays CSR; docs/ovn.md gives the time and memory formula).

    Parameters
    ----------
    alpha : float
        Coupling α of soft w (canonical scaling), in ``(−1/(K−1), 1)``.
    beta : float
        Hinge weight β > 0.
    w_constraint : {"soft", "hard"}
        Soft w (the α coupling term) or hard w (``Σ_k w_k = 0``).
    b_constraint : {"soft", "hard"}
        Hard b (``Σ_k b_k = 0``) or soft b (``+ γ_b (Σ_k b_k)²``).
    gamma_b : float
        Weight γ_b > 0 of the soft-b penalty ``γ_b (Σ_k b_k)²``.
    %(kernel)s
    %(solver)s
    %(tol)s
    %(max_iter)s
    %(random_state)s
    epsilon : float
        Floor ε > 0 of the MM majorizer ``z = max(|1 − u|, ε)``.
    %(cvxpy_solver)s
    """

    _registry_model = "ovn"
    #: the linear kernel's problem holds X, not G = XXᵀ: every solver and the grading use X(Xᵀ·)
    _linear_without_gram = True

    def __init__(self, alpha=0.0, beta=1.0, w_constraint="soft", b_constraint="hard", gamma_b=1.0,
                 kernel="linear", gamma="scale", degree=3, coef0=0.0, solver="fast", tol=1e-10,
                 max_iter=1000, random_state=None, epsilon=1e-6, cvxpy_solver="CLARABEL"):
        self.alpha = alpha
        self.beta = beta
        self.w_constraint = w_constraint
        self.b_constraint = b_constraint
        self.gamma_b = gamma_b
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.epsilon = epsilon
        self.cvxpy_solver = cvxpy_solver

    def _problem(self, gram: np.ndarray, Y: np.ndarray) -> ovn.OvNProblem:
        if self.kernel in ("linear", "poly"):
            ratio = _origin_ratio(self.X_fit_)
            if ratio > ORIGIN_RATIO:
                warnings.warn(
                    f"OvNSVM with kernel={self.kernel!r}: the centroid of X is {ratio:.1f}× its spread away from "
                    "the origin. OvN separates every class against the origin (no negatives; Σ_k b_k = 0), so on "
                    "such data the class hyperplanes come out nearly parallel and predictions can be near chance "
                    "(raw iris: accuracy 1/3). Standardise X (e.g. StandardScaler; the paper normalizes its data) "
                    "or use kernel='rbf'.", UncenteredDataWarning, stacklevel=4)
        features = self.X_fit_ if self.kernel == "linear" else None  # a sparse X stays CSR
        return ovn.OvNProblem(gram, Y, self.alpha, self.beta, self.w_constraint, self.b_constraint,
                              self.gamma_b, features)

    def _set_fitted(self, problem, result, evaluation, Y) -> None:
        self.dual_coef_, self.intercept_ = result.primal["coef"], result.primal["b"]
        self.multipliers_ = result.dual["Lam"]
        if self.kernel == "linear":   # f(x) = xᵀ(Xᵀ dual_coef_) + b: predictions need no test Gram matrix
            self.coef_ = np.asarray(self.X_fit_.T @ self.dual_coef_)

    def _scores(self, X) -> np.ndarray:
        return self._linear_scores(X) if self.kernel == "linear" else super()._scores(X)

    def _decision(self, gram_test: np.ndarray) -> np.ndarray:
        return gram_test @ self.dual_coef_ + self.intercept_[None, :]

    def _decide(self, scores: np.ndarray) -> np.ndarray:
        return ovn_decide(scores)
