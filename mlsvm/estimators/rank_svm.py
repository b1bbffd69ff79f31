"""RankSVM: the scikit-learn estimator of Elisseeff & Weston's Rank-SVM (SPEC §2.1, §4).

Ranking by ``f_k(x) = Σ_i β_ki k(x_i, x) + b_k`` from the dual of Problem 8; the label set of a
multilabel fit is ``{k : f_k(x) > t(x)}`` with the threshold predictor of §4.3
(:class:`mlsvm.threshold.ThresholdPredictor`); a multiclass fit (1-D ``y``) predicts the argmax
(then Rank-SVM is the Weston–Watkins multiclass SVM).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.sparse import issparse

from mlsvm.data import check_scalar
from mlsvm.estimators._base import KernelMultilabelEstimator
from mlsvm.formulations import rank_svm as formulation
from mlsvm.kernels import gram_factor
from mlsvm.solvers.rank_svm_frank_wolfe import frank_wolfe
from mlsvm.solvers.rank_svm_alm import proximal_alm
from mlsvm.solvers.rank_svm_ipm import MAX_SYSTEM_SIZE, interior_point
from mlsvm.threshold import ThresholdPredictor
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.report import FitReport

__all__ = ["RankSVM"]


class RankSVM(KernelMultilabelEstimator):
    """Rank-SVM (Elisseeff & Weston 2001) with the threshold-based set-size predictor.

    Parameters
    ----------
    C : float > 0
        Weight of the pair losses: ``½ Σ‖w_k‖² + C Σ_i 1/(|Y_i||Ȳ_i|) Σ ξ_ikl``.
    kernel, gamma, degree, coef0 : kernel of :func:`mlsvm.kernels.make_kernel`.
    solver : ``"fast"`` (exact; ``"ipm"`` for the linear kernel when ``Q(d+1) − 1 ≤ 4000``,
        ``"alm"`` otherwise), ``"ipm"`` (primal–dual interior point on the primal's Newton system,
        cost independent of the number of pairs; linear kernel, or any kernel through an
        eigen-factor of the Gram matrix), ``"alm"`` (proximal augmented Lagrangian + projected
        Newton–CG, any kernel), ``"frank-wolfe"`` (Fig. 11, stops on its certified gap) or
        ``"cvxpy"`` (ground truth).
    tol : relative duality gap at which the hand-written solvers stop (for Frank–Wolfe,
        sublinear, use e.g. 1e-3).
    max_iter : interior-point iterations (``"ipm"``), outer iterations (``"alm"``) or Frank–Wolfe
        iterations.
    random_state : unused (every solver is deterministic); kept for the common signature.
    cvxpy_solver : CVXPY backend of ``solver="cvxpy"``.

    Attributes
    ----------
    dual_coef_ : (n, q) β; ``intercept_`` : (q,) biases (``Σ_k b_k = 0``); ``alpha_`` : pair
    multipliers; ``n_pairs_``, ``n_without_pairs_``; ``threshold_`` : the fitted
    :class:`ThresholdPredictor`; ``fit_report_`` : :class:`mlsvm.verification.FitReport` (its
    ``solver`` names the solver that ran: ``"ipm"`` or ``"alm"`` for ``solver="fast"``).
    """

    _solvers = ("fast", "ipm", "alm", "frank-wolfe", "cvxpy")

    def __init__(self, C=1.0, kernel="linear", gamma="scale", degree=3, coef0=0.0, solver="fast",
                 tol=1e-8, max_iter=1000, random_state=None, cvxpy_solver="CLARABEL"):
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

    def _fit(self, gram: np.ndarray, Y: np.ndarray) -> FitReport:
        check_scalar(self.C, "C", low=0.0, low_open=True)
        # the base class validated a precomputed Gram matrix; the other kernels are PSD by construction
        problem = formulation.make_problem(gram, Y, self.C, check_psd=False)
        start = time.perf_counter()
        self._resolved_solver = self.solver
        if self.solver == "cvxpy":
            alpha, b, n_iter, converged, rule, value, history = self._solve_cvxpy(problem)
        else:
            linear_factor = self.X_fit_ if self.kernel == "linear" else None
            solver = self._resolved_solver = self._exact_solver(problem, linear_factor)
            if solver == "ipm":
                # the interior point centres its factor (L − 1mᵀ is dense): a sparse X is densified
                # here, n × d with Q(d+1) − 1 ≤ MAX_SYSTEM_SIZE (the ALM takes the CSR factor as is)
                factor = (linear_factor.toarray() if issparse(linear_factor) else linear_factor
                          ) if linear_factor is not None else gram_factor(gram)
                result = interior_point(problem, factor, tol=self.tol, max_iter=self.max_iter)
            elif solver == "alm":
                result = proximal_alm(problem, tol=self.tol, max_iter=self.max_iter, factor=linear_factor)
            else:
                result = frank_wolfe(problem, tol=self.tol, max_iter=self.max_iter)
            alpha, b = result.dual["alpha"], result.primal["b"]
            n_iter, converged, rule, value, history = (result.n_iter, result.converged, result.stop_rule,
                                                       result.stop_value, result.history)
        elapsed = time.perf_counter() - start
        beta = problem.scatter(alpha)
        self.alpha_, self.dual_coef_, self.intercept_ = alpha, beta, b
        self.n_pairs_, self.n_without_pairs_ = problem.n_pairs, problem.pairs.n_without_pairs
        self.threshold_ = ThresholdPredictor().fit(formulation.decision_function(beta, b, gram), Y)
        return FitReport(
            primal_objective=formulation.primal_objective(problem, beta, b),
            dual_objective=formulation.dual_objective(problem, alpha),
            kkt=formulation.kkt_residuals(problem, alpha, b), n_iter=n_iter, converged=converged,
            solve_time=elapsed, solver=self._resolved_solver, stop_rule=rule, stop_value=value, history=history)

    def _exact_solver(self, problem, linear_factor) -> str:
        """``"fast"`` resolves to the interior point when the linear kernel's Newton system is
        small (``Q(d+1) − 1 ≤ MAX_SYSTEM_SIZE``; measured 3.8 s for full yeast against 263 s for
        Clarabel), otherwise to the ALM, whose cost does not grow with the rank."""
        if self.solver != "fast":
            return self.solver
        if linear_factor is not None and problem.n_labels * (linear_factor.shape[1] + 1) - 1 <= MAX_SYSTEM_SIZE:
            return "ipm"
        return "alm"

    def _solve_cvxpy(self, problem):
        cvx, alpha, balance = formulation.dual_problem(problem)
        solve(cvx, self.cvxpy_solver)
        alpha_value = np.clip(alpha.value, 0.0, problem.upper)
        b = formulation.bias_from_equality_multipliers(problem, balance.dual_value)
        return alpha_value, b, 0, True, f"cvxpy {self.cvxpy_solver} optimal", float("nan"), {}

    def _decision(self, gram_test: np.ndarray) -> np.ndarray:
        return formulation.decision_function(self.dual_coef_, self.intercept_, gram_test)

    def _decide(self, scores: np.ndarray) -> np.ndarray:
        return self.threshold_.predict(scores)
