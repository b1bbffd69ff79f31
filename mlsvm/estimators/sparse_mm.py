"""SMSVM (multiclass) and SM3L (multilabel): sparse max-margin models on a greedily chosen basis.

``solver="fast"`` (default): Algorithm 4 with a joint Newton step on all classes; ``"greedy"``:
Algorithm 4 as in the paper (one Newton step per class, Alg. 3); ``"cvxpy"``: the full model
(J = all training points) by CVXPY, the ground truth (``d_max`` and ``kappa`` are not used).
Fitted: ``coef_`` (``|J|`` × k), ``basis_indices_``, ``n_basis_`` = ``|J|``, ``objective_path_`` (e_J after
each added basis vector), ``n_support_`` (training points with a nonzero multiplier; for J = all the
full model's support vectors), ``fit_report_``.
Formulations: :mod:`mlsvm.formulations.sparse_mm`; algorithm: :mod:`mlsvm.solvers.sparse_mm_greedy`.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.utils.validation import check_is_fitted

from mlsvm.data import check_scalar, check_X
from mlsvm.estimators._base import KernelMultilabelEstimator, check_n_features
from mlsvm.formulations import sparse_mm as form
from mlsvm.solvers.sparse_mm_greedy import greedy_sparse
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.report import FitReport

__all__ = ["SMSVM", "SM3L", "fit_report"]


def fit_report(problem: form.SparseMMProblem, A: np.ndarray, mu: np.ndarray | None = None, **fields) -> FitReport:
    """FitReport of coefficients ``A`` on ``problem.basis``: the formulation's numpy primal, its
    derived dual at ``mu`` (default: the multipliers A implies, μ = 2c·ξ) and KKT residuals.

    Parameters
    ----------
    problem : form.SparseMMProblem
        The sparse-model problem on the basis J.
    A : array of shape (n_basis, k)
        Coefficients on the basis.
    mu : ndarray or None
        Dual multipliers (None: the ones implied by A).
    **fields
        Solver fields of the report (``solver``, ``n_iter``, ``converged``, ...).
    """
    mu = form.multipliers_from_primal(problem, A) if mu is None else mu
    return FitReport(primal_objective=form.primal_objective(problem, A),
                     dual_objective=form.dual_objective(problem, mu), kkt=form.kkt_residuals(problem, A, mu),
                     **fields)


class _SparseMaxMargin(KernelMultilabelEstimator):
    _solvers = ("fast", "greedy", "cvxpy")
    _model = ""

    def _correlation(self, n_labels: int) -> np.ndarray | None:
        return None

    def _fit(self, gram, Y) -> FitReport:
        n = gram.shape[0]
        check_scalar(self.lam, "lam", low=0.0, low_open=True)
        d_max = min(100, n) if self.d_max is None else self.d_max
        check_scalar(d_max, "d_max", low=1, high=n, integer=True,
                     explain="the basis is a subset of the n training points")
        check_scalar(self.kappa, "kappa", low=1, integer=True)
        check_scalar(self.min_rel_decrease, "min_rel_decrease", low=0.0)
        R = self._correlation(Y.shape[1])
        if self.solver == "cvxpy":
            problem = form.SparseMMProblem(gram, Y, float(self.lam), self._model, None, R)
            start = time.perf_counter()
            cvx, variables = form.primal_problem(problem)
            solve(cvx, self.cvxpy_solver)
            A = variables["to_coef"] @ variables["C"].value
            elapsed, n_iter, converged = time.perf_counter() - start, 0, True
            stop_rule, stop_value, history = f"CVXPY {self.cvxpy_solver} optimal", float("nan"), {}
            basis = np.arange(n)
            self.objective_path_ = [form.primal_objective(problem, A)]
        else:
            ops = form.MarginOperator(self._model, Y)
            result = greedy_sparse(gram, ops, float(self.lam), R, d_max=int(d_max), kappa=int(self.kappa),
                                   tol=self.tol, max_iter=self.max_iter, min_rel_decrease=self.min_rel_decrease,
                                   joint=self.solver == "fast", random_state=self.random_state)
            A, basis = result.primal["A"], result.primal["basis"]
            problem = form.SparseMMProblem(gram, Y, float(self.lam), self._model, basis, R)
            elapsed, n_iter, converged = result.solve_time, result.n_iter, result.converged
            stop_rule, stop_value, history = result.stop_rule, result.stop_value, result.history
            self.objective_path_ = list(result.history["objective_path"])
        self.coef_, self.basis_indices_, self.n_basis_ = A, basis, int(basis.size)
        # training points with a nonzero multiplier μ = 2c·ξ: the full model's "support vectors"
        self.n_support_ = int(np.count_nonzero(np.any(form.multipliers_from_primal(problem, A) > 0, axis=1)))
        return fit_report(problem, A, n_iter=n_iter, converged=converged, solve_time=elapsed, solver=self.solver,
                          stop_rule=stop_rule, stop_value=stop_value, history=history)

    def _decision(self, gram_test):
        return gram_test[:, self.basis_indices_] @ self.coef_

    def _scores(self, X) -> np.ndarray:
        """Scores ``f_r(x) = Σ_{j∈J} α_jr k(x_j, x)``: only the ``|J|`` basis points are evaluated."""
        if self.kernel == "precomputed":  # the caller's (m, n) Gram matrix; _decision keeps J's columns
            return super()._scores(X)
        check_is_fitted(self, "fit_report_")
        X = check_X(X, "X", n_samples=None)
        check_n_features(self, X)
        return self.kernel_(X, self.X_fit_[self.basis_indices_]) @ self.coef_


class SMSVM(_SparseMaxMargin):
    """Sparse multiclass SVM (3.10): ``λ/2 Σ_r‖w_r‖² + ½ Σ_i Σ_{r≠y_i} max(0, 1 + f_r − f_{y_i})²``,
    ``w_r = Σ_{j∈J} α_jr φ(x_j)``. ``y`` is a 1-D class vector; ``predict`` is the argmax.

    Parameters
    ----------
    lam : float
        Regularisation weight λ (> 0) of the sparse models.
    d_max : int or None
        Largest basis size ``|J|`` (default ``min(100, n)``).
    kappa : int
        Number of random candidates examined per greedy step (κ).
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable
        The kernel (:func:`mlsvm.kernels.make_kernel`); ``"precomputed"`` takes Gram matrices as X.
    gamma : float or "scale"
        RBF / poly width; ``"scale"`` is ``1 / (d · Var X)`` as in scikit-learn.
    degree : int
        Degree of the poly kernel.
    coef0 : float
        Constant of the poly kernel.
    solver : {"fast", "greedy", "cvxpy"}
        Algorithm 4 with joint Newton steps, Algorithm 4 as printed, or the CVXPY full model.
    tol : float
        Stopping tolerance: the bound on the quantity of the solver's stop rule (see the model's
        documentation page for which quantity).
    max_iter : int
        Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the value reached.
    random_state : int, Generator or None
        Seed of the randomised parts of the solver (sweep order, candidate sets).
    min_rel_decrease : float
        Greedy selection stops when adding a basis vector decreases the objective by less than this
        relative amount.
    cvxpy_solver : {"CLARABEL", "ECOS", "OSQP"}
        Backend of ``solver="cvxpy"``.
    """

    _model = "smsvm"
    _single_output = True  # y is one class per sample; SM3L is the multilabel model

    def __init__(self, lam=1.0, d_max=None, kappa=25, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 solver="fast", tol=1e-14, max_iter=1000, random_state=None, min_rel_decrease=1e-3,
                 cvxpy_solver="CLARABEL"):
        self.lam, self.d_max, self.kappa = lam, d_max, kappa
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.solver, self.tol, self.max_iter, self.random_state = solver, tol, max_iter, random_state
        self.min_rel_decrease, self.cvxpy_solver = min_rel_decrease, cvxpy_solver


class SM3L(_SparseMaxMargin):
    """Sparse max-margin multilabel (4.22): ``λ/2 tr(R⁻¹WᵀW) + Σ_i Σ_r max(0, 1 − y_ir f_r(x_i))²``,
    ``R = PᵀP`` from a label prior (``R`` or ``P``; identity by default). Label r iff ``f_r > 0``.

    Parameters
    ----------
    lam : float
        Regularisation weight λ (> 0) of the sparse models.
    d_max : int or None
        Largest basis size ``|J|`` (default ``min(100, n)``).
    kappa : int
        Number of random candidates examined per greedy step (κ).
    R : array of shape (q, q) or None
        Label-correlation matrix ``R = PᵀP`` of SM3L (symmetric positive definite); None means the
        identity.
    P : array of shape (q, q) or None
        Label-correlation prior with ``R = PᵀP`` (give R or P, not both).
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable
        The kernel (:func:`mlsvm.kernels.make_kernel`); ``"precomputed"`` takes Gram matrices as X.
    gamma : float or "scale"
        RBF / poly width; ``"scale"`` is ``1 / (d · Var X)`` as in scikit-learn.
    degree : int
        Degree of the poly kernel.
    coef0 : float
        Constant of the poly kernel.
    solver : {"fast", "greedy", "cvxpy"}
        Algorithm 4 with joint Newton steps, Algorithm 4 as printed, or the CVXPY full model.
    tol : float
        Stopping tolerance: the bound on the quantity of the solver's stop rule (see the model's
        documentation page for which quantity).
    max_iter : int
        Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the value reached.
    random_state : int, Generator or None
        Seed of the randomised parts of the solver (sweep order, candidate sets).
    min_rel_decrease : float
        Greedy selection stops when adding a basis vector decreases the objective by less than this
        relative amount.
    cvxpy_solver : {"CLARABEL", "ECOS", "OSQP"}
        Backend of ``solver="cvxpy"``.
    """

    _model = "sm3l"

    def __init__(self, lam=1.0, d_max=None, kappa=25, R=None, P=None, *, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, solver="fast", tol=1e-14, max_iter=1000, random_state=None, min_rel_decrease=1e-3,
                 cvxpy_solver="CLARABEL"):
        self.lam, self.d_max, self.kappa, self.R, self.P = lam, d_max, kappa, R, P
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.solver, self.tol, self.max_iter, self.random_state = solver, tol, max_iter, random_state
        self.min_rel_decrease, self.cvxpy_solver = min_rel_decrease, cvxpy_solver

    def _correlation(self, n_labels):
        return form.check_correlation(self.R, self.P, n_labels)
