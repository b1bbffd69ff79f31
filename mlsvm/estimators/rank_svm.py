"""RankSVM: the scikit-learn estimator of Elisseeff & Weston's Rank-SVM (SPEC §2.1, §4).

Ranking by ``f_k(x) = Σ_i β_ki k(x_i, x) + b_k`` from the dual of Problem 8; the label set of a
multilabel fit is ``{k : f_k(x) > t(x)}`` with the threshold predictor of §4.3
(:class:`mlsvm.threshold.ThresholdPredictor`); a multiclass fit (1-D ``y``) predicts the argmax
(then Rank-SVM is the Weston–Watkins multiclass SVM).
"""

from __future__ import annotations

import numpy as np

from mlsvm.estimators._base import KernelMultilabelEstimator
from mlsvm.formulations import rank_svm as formulation
from mlsvm.threshold import ThresholdPredictor

__all__ = ["RankSVM"]


class RankSVM(KernelMultilabelEstimator):
    """Rank-SVM (Elisseeff & Weston 2001) with the threshold-based set-size predictor.

    Parameters
    ----------
    C : float > 0
        Weight of the pair losses: ``½ Σ‖w_k‖² + C Σ_i 1/(|Y_i||Ȳ_i|) Σ ξ_ikl``.
    %(kernel)s
    %(solver)s
    %(tol)s
        Frank–Wolfe is sublinear: use e.g. 1e-3 with it.
    max_iter : int or None
        Interior-point iterations (``"ipm"``), outer iterations (``"alm"``), working-set iterations
        (``"decomposition"``) or Frank–Wolfe iterations; None (the default): each solver's own
        budget (200, 1000, 20,000, 1000).
    %(random_state)s
    %(cvxpy_solver)s

    Attributes
    ----------
    dual_coef_ : (n, q) β; ``intercept_`` : (q,) biases (``Σ_k b_k = 0``); ``coef_`` : (d, q)
    ``W = Xᵀβ`` (linear kernel only; predictions then need no test Gram matrix); ``alpha_`` : pair
    multipliers; ``n_pairs_``, ``n_without_pairs_``; ``threshold_`` : the fitted
    :class:`ThresholdPredictor`; ``fit_report_`` : :class:`~mlsvm.report.FitReport` (its
    ``solver`` names the solver that ran).
    """

    _registry_model = "rank_svm"
    #: the linear kernel's problem holds X, not K = XXᵀ: no n × n matrix at fit or predict
    _linear_without_gram = True

    def __init__(self, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0, solver="fast",
                 tol=1e-8, max_iter=None, random_state=None, cvxpy_solver="CLARABEL"):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.cvxpy_solver = cvxpy_solver

    def _problem(self, gram, Y: np.ndarray) -> formulation.RankSVMProblem:
        # the base class validated a precomputed Gram matrix; the other kernels are PSD by
        # construction. The linear kernel's features are a factor K = XXᵀ ("fast" reads its width)
        # and its gram is None: the problem's products with K go through X (sparse X stays CSR).
        features = self.X_fit_ if self.kernel == "linear" else None
        return formulation.make_problem(gram, Y, self.C, check_psd=False, features=features)

    def _set_fitted(self, problem, result, evaluation, Y) -> None:
        self.alpha_ = result.dual["alpha"]
        self.dual_coef_, self.intercept_ = evaluation.extra["beta"], evaluation.extra["b"]
        self.n_pairs_, self.n_without_pairs_ = problem.n_pairs, problem.pairs.n_without_pairs
        self.threshold_ = ThresholdPredictor(constant_sum=True).fit(evaluation.extra["scores"], Y)
        if self.kernel == "linear":   # f(x) = xᵀXᵀβ + b: predictions need no test Gram matrix
            self.coef_ = np.asarray(self.X_fit_.T @ self.dual_coef_)

    def _scores(self, X) -> np.ndarray:
        return self._linear_scores(X) if self.kernel == "linear" else super()._scores(X)

    def _decision(self, gram_test: np.ndarray) -> np.ndarray:
        return formulation.decision_function(self.dual_coef_, self.intercept_, gram_test)

    def _decide(self, scores: np.ndarray) -> np.ndarray:
        return self.threshold_.predict(scores)
