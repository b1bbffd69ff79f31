"""``OvNSVM``: the One-vs-None multiclass/multilabel SVM (Shajari & Rangarajan), SPEC §2.2.

Solvers (:mod:`mlsvm.registry.ovn`): ``"fast"`` (default) = ``"ipm"`` (an interior-point method on
the derived dual, exact to the duality gap), ``"mm"`` (the paper's Algorithm 1,
majorization–minimization with an ε floor, stopped on its certified gap) and ``"cvxpy"`` (the
derived dual by CVXPY; ``b`` = the multipliers of its equal-mass rows).
Decision (§3.2): the labels ``{k : f_k(x) ≥ 1}``, or ``argmax_k f_k(x)`` when that set is empty;
a multiclass fit predicts ``argmax``.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import issparse

from mlsvm.estimators._base import KernelMultilabelEstimator
from mlsvm.formulations import ovn

__all__ = ["OvNSVM", "ovn_decide"]


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
        features = self.X_fit_ if self.kernel == "linear" else None  # MM and the IPM's Woodbury use X
        if issparse(features):  # the OvN solvers (Woodbury blocks, MM's lstsq, CVXPY factor) read the
            features = features.toarray()   # features densely (n × d)
        return ovn.OvNProblem(gram, Y, self.alpha, self.beta, self.w_constraint, self.b_constraint,
                              self.gamma_b, features)

    def _set_fitted(self, problem, result, evaluation, Y) -> None:
        self.dual_coef_, self.intercept_ = result.primal["coef"], result.primal["b"]
        self.multipliers_ = result.dual["Lam"]

    def _decision(self, gram_test: np.ndarray) -> np.ndarray:
        return gram_test @ self.dual_coef_ + self.intercept_[None, :]

    def _decide(self, scores: np.ndarray) -> np.ndarray:
        return ovn_decide(scores)
