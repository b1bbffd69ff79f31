"""``MatrixSVM``: the Matrix-SVM of Jain & Rastogi (SPEC §2.5) as a scikit-learn estimator.

Objective (reported as ``fit_report_.primal_objective``), with ``X̄ = [φ(X), 1]``, ``Ys = 2Y − 1``,
``A = correlation`` (identity when None)::

    loss="hinge":    min ½ tr(WᵀW) + C Σ_ij max(0, 1 − Ys_ij (X̄WA)_ij)          (eq. 1 / eq. 10)
    loss="squared":  min ½ tr(WᵀW) + C ‖Ys − X̄WA‖²_F                           (eq. 12 = eq. 14)

Solvers: ``"fast"`` resolves to the closed form (squared loss), to ``"ipm"`` (hinge, linear kernel,
no A) or to ``"apg"``; ``fit_report_.solver`` names the one that ran. ``"ipm"``: primal–dual
interior point batched over labels, Newton systems of size d + 1 in the primal coordinates
(:mod:`mlsvm.solvers.box_ipm`; K̄ has rank d + 1, where gradient methods are sublinear).
``"apg"``: accelerated proximal gradient with the exact Lipschitz constant and
adaptive restart; without A it starts from α = C/2, the bias term ½(1ᵀB)² is moved into the
proximal step, so the constant is λ_max(K) instead of λ_max(K̄) ≈ n, and every 10 iterations labels
whose gap is below 5e-2 or has stalled get a primal-dual active-set (Newton) polish, in lockstep,
kept when its own gap meets ``tol`` (:func:`apg_options`); with A: from 0, λ_max(K̄)λ_max(AᵀA), no
polish. ``"agd"`` (Alg. 1 as printed: from 0,
step ``1/‖K̄‖_F``, δ clipped to the box, no restart), ``"cvxpy"`` (the dual, ground truth).
Every hand-written solver stops on the relative duality gap (``tol``). Decision: label k iff
``f_k(x) > 0`` (multiclass: argmax), ``f(x) = (k(x, X) + 1)ᵀ Θ A``.
"""

from __future__ import annotations

import time

import numpy as np

from mlsvm.data import check_scalar
from mlsvm.estimators._base import KernelMultilabelEstimator
from mlsvm.formulations import matrix_svm as formulation
from mlsvm.kernels import gram_factor
from mlsvm.solvers.agd import solve_dual_agd
from mlsvm.solvers.box_ipm import MAX_WIDTH, interior_point_box
from mlsvm.solvers.closed_form import solve_least_squares
from mlsvm.verification.cvxpy_tools import solve as solve_cvxpy
from mlsvm.verification.report import FitReport

__all__ = ["MatrixSVM"]

#: "apg" without A: active-set polishing attempts every 10 iterations (yeast RBF: 20 iterations,
#: against 200 with every 50 and the old α-only active-set guess)
FAST_POLISH_EVERY = 10
#: "apg" without A starts from α = C/2 (Alg. 1 starts from 0): every label's gap is below 5e-2 by
#: iteration 20 (from 0 only by 25–30), so every polish is attempted once, at iteration 20
#: (yeast RBF, 10 interleaved runs: median 0.40 s; from 0 with the earlier threshold 1e-1, 0.50 s)
FAST_START = 0.5
#: interior-point iterations are few (17 on emotions, 21 on yeast); max_iter's default is sized for AGD
IPM_MAX_ITER = 200


def apg_options(problem: formulation.MatrixSVMProblem) -> dict:
    """The options of :func:`mlsvm.solvers.agd.solve_dual_agd` that make ``solver="apg"``."""
    if problem.correlation is not None:   # one coupled block: no bias prox, no polish
        return {}
    return dict(split_bias=True, polish_every=FAST_POLISH_EVERY,
                alpha0=np.full(problem.signed.shape, FAST_START * problem.C))


class MatrixSVM(KernelMultilabelEstimator):
    """Matrix-SVM: q binary SVMs with regularized bias (``K̄ = K + 11ᵀ``) solved as one problem,
    optionally coupled by a label-correlation matrix A (MLRL, eq. 10).

    Attributes after ``fit``: ``alpha_`` (n, q) dual variables, ``dual_coef_`` ``ΘA`` (n, q) and
    ``intercept_`` (q,) so that ``f(x) = k(x, X) dual_coef_ + intercept_``, ``fit_report_``.

    Parameters
    ----------
    C : float
        Loss weight C > 0 (eq. 1).
    correlation : array of shape (q, q) or None
        Label-correlation matrix A of the MLRL extension (eq. 10); None means the identity.
    loss : {"hinge", "squared"}
        Hinge loss (eq. 1) or least squares (eq. 12).
    kernel : {"linear", "rbf", "poly", "precomputed"} or callable
        The kernel (:func:`mlsvm.kernels.make_kernel`); ``"precomputed"`` takes Gram matrices as X.
    gamma : float or "scale"
        RBF / poly width; ``"scale"`` is ``1 / (d · Var X)`` as in scikit-learn.
    degree : int
        Degree of the poly kernel.
    coef0 : float
        Constant of the poly kernel.
    solver : {"fast", "ipm", "apg", "agd", "cvxpy"}
        ``"fast"`` picks the closed form, the interior point or APG (see the module docstring);
        ``"agd"`` is Alg. 1 as printed.
    tol : float
        Stopping tolerance: the bound on the quantity of the solver's stop rule (see the model's
        documentation page for which quantity).
    max_iter : int
        Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the value reached.
    random_state : int, Generator or None
        Seed of the randomised parts of the solver (sweep order, candidate sets).
    cvxpy_solver : {"CLARABEL", "ECOS", "OSQP"}
        Backend of ``solver="cvxpy"``.
    """

    _solvers = ("fast", "ipm", "apg", "agd", "cvxpy")

    def __init__(self, C=1.0, correlation=None, loss="hinge", kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, solver="fast", tol=1e-8, max_iter=50_000, random_state=None,
                 cvxpy_solver="CLARABEL"):
        self.C = C
        self.correlation = correlation
        self.loss = loss
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state  # unused: every solver here is deterministic
        self.cvxpy_solver = cvxpy_solver

    def _problem(self, gram: np.ndarray, Y: np.ndarray) -> formulation.MatrixSVMProblem:
        check_scalar(self.C, "C", low=0.0, low_open=True)
        if self.loss not in formulation.LOSSES:
            raise ValueError(f"loss must be one of {formulation.LOSSES}; got {self.loss!r}")
        return formulation.MatrixSVMProblem(gram, Y, float(self.C), self.correlation, self.loss)

    def _fit(self, gram: np.ndarray, Y: np.ndarray) -> FitReport:
        problem = self._problem(gram, Y)
        start = time.perf_counter()
        self._resolved_solver = self.solver
        if self.solver == "cvxpy":
            alpha, n_iter, converged, stop = self._solve_cvxpy(problem)
        else:
            result = self._solve_hand_written(problem)
            alpha, n_iter, converged = result.dual["alpha"], result.n_iter, result.converged
            stop = (result.stop_rule, result.stop_value, result.history)
        elapsed = time.perf_counter() - start
        coef = formulation.coef_from_dual(problem, alpha)
        self.alpha_ = alpha
        self.dual_coef_ = problem.right(coef, "A")
        self.intercept_ = self.dual_coef_.sum(axis=0)
        return FitReport(
            primal_objective=formulation.primal_objective(problem, coef),
            dual_objective=formulation.dual_objective(problem, alpha),
            kkt=formulation.kkt_residuals(problem, alpha), n_iter=n_iter, converged=converged,
            solve_time=elapsed, solver=self._resolved_solver, stop_rule=stop[0], stop_value=stop[1], history=stop[2])

    def _resolve(self, problem) -> str:
        """What ``"fast"`` runs: the closed form (squared loss), the interior point (hinge, linear
        kernel, no A, ``d + 1 ≤ MAX_WIDTH``: K̄ has rank d + 1, where gradient methods are
        sublinear — 0.08 s against 11 s for "apg" on emotions), else accelerated proximal gradient."""
        if self.solver != "fast":
            return self.solver
        if problem.loss == "squared":
            return "closed-form"
        if (self.kernel == "linear" and problem.correlation is None
                and self.X_fit_.shape[1] + 1 <= MAX_WIDTH):
            return "ipm"
        return "apg"

    def _solve_hand_written(self, problem):
        solver = self._resolved_solver = self._resolve(problem)
        if solver == "closed-form":
            return solve_least_squares(problem.gram_bar, problem.signed, problem.C,
                                       correlation=problem.correlation)
        if solver == "ipm":
            if problem.loss != "hinge" or problem.correlation is not None:
                raise ValueError("solver='ipm' solves the hinge loss without a correlation matrix "
                                 f"(got loss={problem.loss!r}, correlation given: {problem.correlation is not None})")
            factor = self.X_fit_ if self.kernel == "linear" else gram_factor(problem.gram)
            return interior_point_box(factor, problem.signed, problem.C, tol=self.tol,
                                      max_iter=min(self.max_iter, IPM_MAX_ITER),
                                      name="MatrixSVM(solver='ipm')")
        paper = solver == "agd"
        return solve_dual_agd(problem.gram_bar, problem.signed, problem.C, correlation=problem.correlation,
                              loss=problem.loss, lipschitz="frobenius" if paper else "exact",
                              restart=not paper, clip_extrapolation=paper, **({} if paper else apg_options(problem)),
                              tol=self.tol, max_iter=self.max_iter, name=f"MatrixSVM(solver={self.solver!r})")

    def _solve_cvxpy(self, problem):
        cvx, alpha = formulation.dual_problem(problem)
        solve_cvxpy(cvx, self.cvxpy_solver)
        value = alpha.value
        if problem.loss == "hinge":  # interior-point round-off outside the box
            value = np.clip(value, 0.0, problem.C)
        return value, int(cvx.solver_stats.num_iters or 0), True, (f"cvxpy {self.cvxpy_solver} optimal", 0.0, {})

    def _decision(self, gram_test: np.ndarray) -> np.ndarray:
        return gram_test @ self.dual_coef_ + self.intercept_
