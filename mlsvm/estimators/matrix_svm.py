"""``MatrixSVM``: the Matrix-SVM of Jain & Rastogi (SPEC §2.5) as a scikit-learn estimator.

Objective (reported as ``fit_report_.primal_objective``), with ``X̄ = [φ(X), 1]``, ``Ys = 2Y − 1``,
``A = correlation`` (identity when None)::

    loss="hinge":    min ½ tr(WᵀW) + C Σ_ij max(0, 1 − Ys_ij (X̄WA)_ij)          (eq. 1 / eq. 10)
    loss="squared":  min ½ tr(WᵀW) + C ‖Ys − X̄WA‖²_F                           (eq. 12 = eq. 14)

Solvers (:mod:`mlsvm.registry.matrix_svm`): ``"fast"`` resolves to the closed form (squared loss), to ``"ipm"`` (hinge, linear kernel,
no A, d + 1 ≤ 1500), to ``"liblinear-dcd"`` (the same, wider: LIBLINEAR per label, its dual point recovered and certified; ``"dcd"`` from there if needed) or to ``"apg"``; ``fit_report_.solver`` names the one that ran. ``"ipm"``: primal–dual
interior point batched over labels, Newton systems of size d + 1 in the primal coordinates
(:mod:`mlsvm.solvers.matrix_svm_ipm`; K̄ has rank d + 1, where gradient methods are sublinear).
``"apg"``: accelerated proximal gradient with the exact Lipschitz constant and
adaptive restart; without A it starts from α = C/2, the bias term ½(1ᵀB)² is moved into the
proximal step, so the constant is λ_max(K) instead of λ_max(K̄) ≈ n, and every 10 iterations labels
whose gap is below 5e-2 or has stalled get a primal-dual active-set (Newton) polish, in lockstep,
kept when its own gap meets ``tol`` (:func:`mlsvm.registry.matrix_svm.apg_options`); with A: from 0, λ_max(K̄)λ_max(AᵀA), no
polish. ``"agd"`` (Alg. 1 as printed: from 0,
step ``1/‖K̄‖_F``, δ clipped to the box, no restart), ``"cvxpy"`` (the dual, ground truth).
Every hand-written solver stops on the relative duality gap (``tol``). Decision: label k iff
``f_k(x) > 0`` (multiclass: argmax), ``f(x) = (k(x, X) + 1)ᵀ Θ A``.
"""

from __future__ import annotations

import numpy as np

from mlsvm.estimators._base import KernelMultilabelEstimator
from mlsvm.formulations import matrix_svm as formulation

__all__ = ["MatrixSVM"]


class MatrixSVM(KernelMultilabelEstimator):
    """Matrix-SVM: q binary SVMs with regularized bias (``K̄ = K + 11ᵀ``) solved as one problem,
    optionally coupled by a label-correlation matrix A (MLRL, eq. 10).

    Attributes after ``fit``: ``alpha_`` (n, q) dual variables, ``dual_coef_`` ``ΘA`` (n, q) and
    ``intercept_`` (q,) so that ``f(x) = k(x, X) dual_coef_ + intercept_``, ``fit_report_``; with
    the linear kernel also ``coef_ = Xᵀ dual_coef_`` (d, q), and ``f(x) = xᵀcoef_ + intercept_``.

    Parameters
    ----------
    C : float
        Loss weight C > 0 (eq. 1).
    correlation : array of shape (q, q) or None
        Label-correlation matrix A of the MLRL extension (eq. 10); None means the identity.
    loss : {"hinge", "squared"}
        Hinge loss (eq. 1) or least squares (eq. 12).
    %(kernel)s
    %(solver)s
    %(tol)s
    %(max_iter)s
    %(random_state)s
    %(cvxpy_solver)s
    """

    _registry_model = "matrix_svm"

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

    #: the linear kernel's problem holds X, not K = XXᵀ (formed only by a solver that needs it)
    _linear_without_gram = True

    def _problem(self, gram, Y: np.ndarray) -> formulation.MatrixSVMProblem:
        features = self.X_fit_ if self.kernel == "linear" else None   # sparse X stays CSR
        return formulation.MatrixSVMProblem(gram, Y, self.C, self.correlation, self.loss, features)

    def _set_fitted(self, problem, result, evaluation, Y) -> None:
        self.alpha_ = result.dual["alpha"]
        self.dual_coef_ = problem.right(evaluation.extra["coef"], "A")
        self.intercept_ = self.dual_coef_.sum(axis=0)
        if self.kernel == "linear":   # f(x) = xᵀ(XᵀΘA) + 1ᵀΘA: predictions need no test Gram matrix
            self.coef_ = np.asarray(self.X_fit_.T @ self.dual_coef_)

    def _scores(self, X) -> np.ndarray:
        return self._linear_scores(X) if self.kernel == "linear" else super()._scores(X)

    def _decision(self, gram_test: np.ndarray) -> np.ndarray:
        return gram_test @ self.dual_coef_ + self.intercept_
