"""The mLODM estimator (Tan, Tan, Jiang & Zhou; SPEC §2.4): margin-distribution ranking model.

``MLODM(C, theta, mu)`` minimises eq. (15) (see :mod:`mlsvm.formulations.mlodm` for the objective
with its constants). Scores ``f_k(x) = Σ_i coef_ik k(x_i, x)``; the label set is chosen by the
threshold predictor of Elisseeff & Weston (:class:`mlsvm.threshold.ThresholdPredictor`), fitted on
the training scores. ``margin_stats_`` describes the distribution of the training label-pair
margins ``f_k(x_i) − f_l(x_i)`` (paper §6.4, Fig. 2).
"""

from __future__ import annotations

import time

import numpy as np

from mlsvm.data import ranking_pairs
from mlsvm.estimators._base import KernelMultilabelEstimator
from mlsvm.formulations import mlodm
from mlsvm.solvers.bcd import SUBPROBLEMS, solve_bcd
from mlsvm.threshold import ThresholdPredictor
from mlsvm.verification.cvxpy_tools import solve
from mlsvm.verification.report import FitReport

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
    kernel, gamma, degree, coef0 : kernel of :func:`mlsvm.kernels.make_kernel`.
    solver : ``"fast"`` (BCD with the exact block solver plus a whole-dual active-set polishing
        step, the default), ``"bcd"`` (paper Alg. 1 with ``subproblem``) or ``"cvxpy"`` (the dual eq. 18 solved by ``cvxpy_solver``).
    subproblem : ``"exact"`` (active set) or ``"m3"`` (paper Alg. 2), for ``solver="bcd"``.
    tol : stopping tolerance of BCD (relative duality gap and scaled natural residual).
    max_iter : maximal number of BCD sweeps.
    random_state : seed of the sweep order.
    shrinking : skip blocks that are already optimal (§5.2).
    cvxpy_solver : {"CLARABEL", "ECOS", "OSQP"}
        Backend of ``solver="cvxpy"``.

    Attributes
    ----------
    coef_ : (n_train, q) array, ``w_k = Σ_i coef_[i, k] φ(x_i)``.
    dual_coef_ : dict with the pair multipliers ``alpha`` and ``beta`` (eq. 18).
    threshold_ : the fitted :class:`~mlsvm.threshold.ThresholdPredictor`.
    margin_stats_ : dict ``mean``, ``variance``, ``counts``, ``edges``, ``n_pairs`` of the training
        label-pair margins.
    n_pairs_, n_without_pairs_ : number of ranking pairs, and of instances giving none.
    fit_report_ : :class:`~mlsvm.verification.report.FitReport`.
    """

    _solvers = ("fast", "bcd", "cvxpy")

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

    def _fit(self, gram: np.ndarray, Y: np.ndarray) -> FitReport:
        mlodm.check_hyperparameters(self.C, self.theta, self.mu)
        if self.subproblem not in SUBPROBLEMS:
            raise ValueError(f"subproblem must be one of {SUBPROBLEMS}; got {self.subproblem!r}")
        pairs = ranking_pairs(Y)
        problem = mlodm.MLODMProblem(gram, pairs, float(self.C), float(self.theta), float(self.mu))
        start = time.perf_counter()
        if self.solver == "cvxpy":
            cvx, variables = mlodm.dual_problem(problem)
            solve(cvx, self.cvxpy_solver)
            alpha = np.maximum(variables["alpha"].value, 0.0)
            beta = np.maximum(variables["beta"].value, 0.0)
            n_iter, converged, stop_rule, stop_value = 0, True, f"CVXPY {self.cvxpy_solver} optimal", float("nan")
            history, name = {}, "cvxpy"
        else:
            subproblem = "exact" if self.solver == "fast" else self.subproblem
            result = solve_bcd(problem, subproblem=subproblem, tol=self.tol, max_iter=self.max_iter,
                               shrinking=self.shrinking, random_state=self.random_state,
                               polish=self.solver == "fast")
            alpha, beta = result.dual["alpha"], result.dual["beta"]
            n_iter, converged, stop_rule, stop_value = result.n_iter, result.converged, result.stop_rule, result.stop_value
            history, name = result.history, self.solver if self.solver == "fast" else result.solver
        elapsed = time.perf_counter() - start
        self.coef_ = mlodm.coef_from_dual(problem, alpha, beta)
        self.dual_coef_ = {"alpha": alpha, "beta": beta}
        self.n_pairs_, self.n_without_pairs_ = pairs.n_pairs, pairs.n_without_pairs
        scores = gram @ self.coef_
        self.margin_stats_ = mlodm.margin_statistics(pairs.gather(scores))
        self.threshold_ = ThresholdPredictor().fit(scores, Y)
        return FitReport(
            primal_objective=mlodm.primal_objective(problem, self.coef_, scores),
            dual_objective=mlodm.dual_objective(problem, alpha, beta, scores),
            kkt=mlodm.kkt_residuals(problem, alpha, beta), n_iter=n_iter, converged=converged,
            solve_time=elapsed, solver=name, stop_rule=stop_rule, stop_value=stop_value, history=history)

    def _decision(self, gram_test: np.ndarray) -> np.ndarray:
        return gram_test @ self.coef_

    def _decide(self, scores: np.ndarray) -> np.ndarray:
        return self.threshold_.predict(scores)
