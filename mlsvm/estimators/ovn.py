"""``OvNSVM``: the One-vs-None multiclass/multilabel SVM (Shajari & Rangarajan), SPEC §2.2.

Solvers: ``"fast"`` (default; an interior-point method on the derived dual, exact to the duality
gap), ``"mm"`` (the paper's Algorithm 1, majorization–minimization with an ε floor) and
``"cvxpy"`` (ground truth: CVXPY primal for ``b``/``W`` and dual for the multipliers).
Decision (§3.2): the labels ``{k : f_k(x) ≥ 1}``, or ``argmax_k f_k(x)`` when that set is empty;
a multiclass fit predicts ``argmax``.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.sparse import issparse

from mlsvm.data import check_scalar
from mlsvm.estimators._base import KernelMultilabelEstimator
from mlsvm.formulations import ovn
from mlsvm.solvers.ovn_ipm import equal_mass_ipm
from mlsvm.solvers.ovn_mm import mm
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.report import FitReport

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
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable
        The kernel (:func:`mlsvm.kernels.make_kernel`); ``"precomputed"`` takes Gram matrices as X.
    gamma : float or "scale"
        RBF / poly width; ``"scale"`` is ``1 / (d · Var X)`` as in scikit-learn.
    degree : int
        Degree of the poly kernel.
    coef0 : float
        Constant of the poly kernel.
    solver : {"fast", "mm", "cvxpy"}
        Interior point on the derived dual, the paper's MM (Alg. 1), or the CVXPY ground truth.
    tol : float
        Stopping tolerance: the bound on the quantity of the solver's stop rule (see the model's
        documentation page for which quantity).
    max_iter : int
        Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the value reached.
    random_state : int, Generator or None
        Seed of the randomised parts of the solver (sweep order, candidate sets).
    epsilon : float
        Floor ε > 0 of the MM majorizer ``z = max(|1 − u|, ε)``.
    cvxpy_solver : {"CLARABEL", "ECOS", "OSQP"}
        Backend of ``solver="cvxpy"``.
    """

    _solvers = ("fast", "mm", "cvxpy")

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
        for name in ("w_constraint", "b_constraint"):
            if getattr(self, name) not in ovn.CONSTRAINTS:
                raise ValueError(f"{name} must be one of {ovn.CONSTRAINTS}; got {getattr(self, name)!r}")
        check_scalar(self.beta, "beta", low=0.0, low_open=True)
        check_scalar(self.epsilon, "epsilon", low=0.0, low_open=True)
        if self.b_constraint == "soft":
            check_scalar(self.gamma_b, "gamma_b", low=0.0, low_open=True,
                         explain="b_constraint='soft' adds gamma_b·(Σ_k b_k)², which needs gamma_b > 0")
        if self.w_constraint == "soft":
            low, high = ovn.alpha_interval(Y.shape[1])
            check_scalar(self.alpha, "alpha", low=low, high=high, low_open=True, high_open=True, explain=(
                f"With w_constraint='soft' the regularizer ½tr(WMWᵀ), M = (1−α)I + α11ᵀ, is convex only "
                f"when M is positive definite, i.e. −1/(K−1) < alpha < 1 (K = {Y.shape[1]}); outside it the "
                "problem is unbounded below. alpha is in the canonical scaling of eq. 5: the paper's "
                "Appendix A drops the ½, so its α equals 2·alpha (App-A(α, β) = canonical(α/2, β/2))"))
        features = self.X_fit_ if self.kernel == "linear" else None
        if issparse(features):  # the OvN solvers (Woodbury blocks, MM's lstsq, CVXPY factor) read the
            features = features.toarray()   # features densely (n × d)
        return ovn.OvNProblem(gram, Y, float(self.alpha), float(self.beta), self.w_constraint,
                              self.b_constraint, float(self.gamma_b), features)

    def _fit(self, gram: np.ndarray, Y: np.ndarray) -> FitReport:
        problem = self._problem(gram, Y)
        start = time.perf_counter()
        closed_form = ovn.empty_class_solution(problem)
        if closed_form is not None:
            A, b, Lam, nu = closed_form
            n_iter, converged, stop_rule, stop_value, solver, history = 0, True, "closed form (empty class)", 0.0, "closed-form", {}
        elif self.solver == "fast":
            A, b, Lam, nu, result = self._fit_fast(problem)
            n_iter, converged, stop_rule, stop_value, history = (result.n_iter, result.converged, result.stop_rule,
                                                                  result.stop_value, result.history)
            solver = "fast"
        elif self.solver == "mm":
            A, b, Lam, nu, result = self._fit_mm(problem)
            n_iter, converged, stop_rule, stop_value, history = (result.n_iter, result.converged, result.stop_rule,
                                                                  result.stop_value, result.history)
            solver = "mm"
        else:
            A, b, Lam, nu = self._fit_cvxpy(problem)
            n_iter, converged, stop_rule, stop_value, solver, history = 0, True, "interior point (CVXPY)", 0.0, f"cvxpy-{self.cvxpy_solver}", {}
        elapsed = time.perf_counter() - start
        self.dual_coef_, self.intercept_, self.multipliers_ = A, b, Lam
        return FitReport(primal_objective=ovn.primal_objective(problem, A, b),
                         dual_objective=ovn.dual_objective(problem, Lam, nu),
                         kkt=ovn.kkt_residuals(problem, Lam, b, nu, A=A), n_iter=n_iter, converged=converged,
                         solve_time=elapsed, solver=solver, stop_rule=stop_rule, stop_value=stop_value,
                         history=history)

    def _fit_fast(self, problem: ovn.OvNProblem):
        sample, cls = problem.members
        T = sample.size
        nu_weight = 1.0 / (2.0 * problem.gamma_b) if problem.soft_b else 0.0
        features = problem.features
        s0, s1 = ovn.dual_metric_coefficients(problem)
        if features is not None and problem.n_classes * features.shape[1] < T and s0 > 0:
            # linear kernel, K·d < T: Newton systems by nested Woodbury on Q = (s₀I + s₁11ᵀ) ⊗ XXᵀ
            Q, coupled = None, (s0, s1, features, sample)
        else:
            Q, coupled = ovn.dual_qp(problem)["P"][:T, :T], None
        result = equal_mass_ipm(Q, cls, problem.n_classes, problem.beta, nu_weight, tol=self.tol,
                                max_iter=self.max_iter, Q_coupled=coupled)
        Lam = np.zeros(problem.Y.shape)
        Lam[sample, cls] = result.primal["lambda"]
        b = result.dual["y"]
        if problem.b_constraint == "hard":  # the IPM keeps Σb = 0 to its tolerance; make it exact
            b = b - b.mean()
        return ovn.coefficients_from_dual(problem, Lam), b, Lam, result.primal["nu"], result

    def _fit_mm(self, problem: ovn.OvNProblem):
        features = problem.factor()
        result = mm(features, problem.Y, problem.alpha, problem.beta, problem.w_constraint, problem.b_constraint,
                    problem.gamma_b, epsilon=float(self.epsilon), tol=self.tol, max_iter=self.max_iter)
        A = np.linalg.lstsq(features.T, result.primal["V"], rcond=None)[0]
        Lam = ovn.equalize_class_mass(problem, result.dual["lambda"])  # a feasible dual point: a true bound
        return A, result.primal["b"], Lam, None, result

    def _fit_cvxpy(self, problem: ovn.OvNProblem):
        primal, variables = ovn.primal_problem(problem)
        solve(primal, self.cvxpy_solver)
        A = np.linalg.lstsq(variables["factor"].T, variables["V"].value, rcond=None)[0]
        dual, dual_variables = ovn.dual_problem(problem)
        solve(dual, self.cvxpy_solver)
        Lam = np.clip(dual_variables["Lam"].value, 0.0, problem.beta)
        return A, np.asarray(variables["b"].value, dtype=float), Lam, float(dual_variables["nu"].value)

    def _decision(self, gram_test: np.ndarray) -> np.ndarray:
        return gram_test @ self.dual_coef_ + self.intercept_[None, :]

    def _decide(self, scores: np.ndarray) -> np.ndarray:
        return ovn_decide(scores)
