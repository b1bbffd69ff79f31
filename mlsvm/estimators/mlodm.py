"""The mLODM estimator (Tan, Tan, Jiang & Zhou; SPEC §2.4): margin-distribution ranking model.

``MLODM(C, theta, mu)`` minimises eq. (15) (see :mod:`mlsvm.formulations.mlodm` for the objective
with its constants). Scores ``f_k(x) = Σ_i coef_ik k(x_i, x)``; the label set is chosen by the
threshold predictor of Elisseeff & Weston (:class:`mlsvm.threshold.ThresholdPredictor`), fitted on
the training scores. ``margin_stats_`` describes the distribution of the training label-pair
margins ``f_k(x_i) − f_l(x_i)`` (paper §6.4, Fig. 2).
"""

from __future__ import annotations

import numpy as np

from mlsvm.data import ranking_pairs
from mlsvm.estimators._base import KernelMultilabelEstimator
from mlsvm.formulations import mlodm
from mlsvm.threshold import ThresholdPredictor

__all__ = ["MLODM"]


class MLODM(KernelMultilabelEstimator):
    """Multi-label optimal margin distribution machine.

    Parameters
    ----------
    C : float > 0
        Weight of the squared band violations (eq. 15).
    theta : float in [0, 1]
        Half-width of the insensitive band ``[1 − θ, 1 + θ]`` around the target pair margin 1.
    mu : float in (0, 1]
        Relative weight of violations above the band.
    %(kernel)s
    %(solver)s
    subproblem : {"exact", "m3"}
        Block sub-solver of ``solver="bcd"``: the exact active set, or paper Alg. 2.
    %(tol)s
    max_iter : int
        Budget of BCD sweeps (Newton iterations for ``"newton"``, passes for ``"dcd"``); reaching
        it raises a ``ConvergenceWarning`` quoting the values reached.
    %(random_state)s
    shrinking : bool
        Skip blocks that are already optimal (§5.2).
    %(cvxpy_solver)s

    Attributes
    ----------
    coef_ : (n_train, q) array, ``w_k = Σ_i coef_[i, k] φ(x_i)``.
    dual_coef_ : dict with the pair multipliers ``alpha`` and ``beta`` (eq. 18).
    threshold_ : the fitted :class:`~mlsvm.threshold.ThresholdPredictor`.
    margin_stats_ : dict ``mean``, ``variance``, ``counts``, ``edges``, ``n_pairs`` of the training
        label-pair margins.
    n_pairs_, n_without_pairs_ : number of ranking pairs, and of instances giving none.
    fit_report_ : :class:`~mlsvm.report.FitReport`.
    """

    _registry_model = "mlodm"
    #: the linear kernel's solvers work on X: K = XXᵀ is never formed
    _linear_without_gram = True

    def __init__(self, C=1.0, theta=0.5, mu=0.5, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 solver="fast", subproblem="exact", tol=1e-6, max_iter=1000, random_state=None,
                 shrinking=True, cvxpy_solver="CLARABEL"):
        self.C = C
        self.theta = theta
        self.mu = mu
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.subproblem = subproblem
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.shrinking = shrinking
        self.cvxpy_solver = cvxpy_solver

    def _problem(self, gram: np.ndarray, Y: np.ndarray):
        if self.kernel == "linear":   # the linear kernel's solvers work on X (K = XXᵀ never needed)
            return mlodm.LinearMLODMProblem(self.X_fit_, ranking_pairs(Y), self.C, self.theta, self.mu)
        return mlodm.MLODMProblem(gram, ranking_pairs(Y), self.C, self.theta, self.mu)

    def _set_fitted(self, problem, result, evaluation, Y) -> None:
        pairs, scores = problem.pairs, evaluation.extra["scores"]
        self.coef_ = evaluation.extra["coef"]
        self.dual_coef_ = {"alpha": result.dual["alpha"], "beta": result.dual["beta"]}
        self.n_pairs_, self.n_without_pairs_ = pairs.n_pairs, pairs.n_without_pairs
        self.margin_stats_ = mlodm.margin_statistics(pairs.gather(scores))
        self.threshold_ = ThresholdPredictor(constant_sum=True).fit(scores, Y)

    def _decision(self, gram_test: np.ndarray) -> np.ndarray:
        return gram_test @ self.coef_

    def _decide(self, scores: np.ndarray) -> np.ndarray:
        return self.threshold_.predict(scores)
