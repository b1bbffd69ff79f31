"""SMSVM (multiclass) and SM3L (multilabel): sparse max-margin models on a greedily chosen basis.

Solvers (:mod:`mlsvm.registry.sparse_mm`): ``"fast"`` (default) = ``"greedy-joint"``, Algorithm 4
with a joint Newton step on all classes; ``"greedy"``: Algorithm 4 as in the paper (one Newton step
per class, Alg. 3); ``"full"``: the full model (J = all training points) by dual coordinate descent
(:mod:`mlsvm.solvers.sparse_mm_full`; with the linear kernel on X, no n × n matrix); ``"cvxpy"``: the
full model, its derived dual by CVXPY, the ground truth (``d_max`` and ``kappa`` are used by neither). ``tol`` bounds the relative duality
gap and the scaled stationarity residual; ``max_iter`` the Newton steps of the whole run.
With the linear kernel a sparse basis does not make prediction cheaper (the weights are d × k
either way), and on large sparse data ``"full"`` can be both the faster and the more accurate fit
(SMSVM on bibtex: docs, sparse_mm, "Where SMSVM on bibtex stands").
Fitted: ``coef_`` (``|J|`` × k), ``basis_indices_``, ``n_basis_`` = ``|J|``, ``objective_path_`` (e_J after
each added basis vector), ``n_support_`` (training points with a nonzero multiplier; for J = all the
full model's support vectors), ``fit_report_``.
Formulations: :mod:`mlsvm.formulations.sparse_mm`; algorithm: :mod:`mlsvm.solvers.sparse_mm_greedy`.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from mlsvm.data import check_X
from mlsvm.estimators._base import KernelMultilabelEstimator, check_n_features
from mlsvm.formulations import sparse_mm as form
from mlsvm.kernels import check_row_norms, make_kernel

__all__ = ["SMSVM", "SM3L"]


class _SparseMaxMargin(KernelMultilabelEstimator):
    _registry_model = "sparse_mm"
    _doc_entries = {
        "basis": """\
lam : float
    Regularisation weight λ (> 0) of the sparse models.
d_max : int or None
    Largest basis size ``|J|`` (default ``min(100, n)``).
kappa : int
    Number of random candidates examined per greedy step (κ).""",
        "min_rel_decrease": """\
min_rel_decrease : float
    Greedy selection stops when adding a basis vector decreases the objective by less than this
    relative amount.""",
    }
    #: the variant of the formulation (``SparseMMProblem.model``), unrelated to ``_registry_model``
    _model = ""

    def _correlation(self, n_labels: int) -> np.ndarray | None:
        return None

    def _train_gram(self, X):
        """The greedy solvers read only the columns of K at the basis and the candidates: they get
        :class:`mlsvm.formulations.sparse_mm.KernelColumns` (computed from X, sparse X kept sparse;
        memory ``n·(|J| + κ)``, not n²), and so does the full model's dual coordinate descent with the
        linear kernel (it works on X). The CVXPY full model, the full model with another kernel, a
        precomputed Gram matrix and the poly kernel with ``coef0 < 0`` (whose Gram matrix is checked
        PSD) take the n × n matrix."""
        full_gram = self.solver == "cvxpy" or (self.solver == "full" and self.kernel != "linear")
        if self.kernel == "precomputed" or full_gram or (self.kernel == "poly" and self.coef0 < 0):
            return super()._train_gram(X)
        self.kernel_ = make_kernel(self.kernel, self.gamma, self.degree, self.coef0, X)
        self.n_features_in_, self.X_fit_ = X.shape[1], X
        return form.KernelColumns(self.kernel_, X)

    def _problem(self, gram, Y) -> form.SparseMMProblem:
        features = self.X_fit_ if self.kernel == "linear" else None   # lets certify grade weights {"W"}
        return form.SparseMMProblem(gram, Y, self.lam, self._model, None, self._correlation(Y.shape[1]), features)

    def _set_fitted(self, problem, result, evaluation, Y) -> None:
        used = evaluation.extra["problem"]  # the problem on the basis the solver chose
        A = result.primal["coef"]
        self.coef_, self.basis_indices_, self.n_basis_ = A, used.basis, int(used.basis.size)
        self.objective_path_ = list(result.history.get("objective_path", [evaluation.primal_objective]))
        # training points with a nonzero multiplier μ = 2c·ξ: the full model's "support vectors"
        self.n_support_ = int(np.count_nonzero(np.any(form.multipliers_from_primal(used, A) > 0, axis=1)))

    def _decision(self, gram_test):
        return gram_test[:, self.basis_indices_] @ self.coef_

    def _scores(self, X) -> np.ndarray:
        """Scores ``f_r(x) = Σ_{j∈J} α_jr k(x_j, x)``: only the ``|J|`` basis points are evaluated."""
        if self.kernel == "precomputed":  # the caller's (m, n) Gram matrix; _decision keeps J's columns
            return super()._scores(X)
        check_is_fitted(self, "fit_report_")
        X = check_X(X, "X", n_samples=None)
        check_n_features(self, X)
        check_row_norms(X)
        if self.kernel == "linear":   # X (X_Jᵀ A): no m × |J| test Gram matrix (m × n for the full model)
            return np.asarray(X @ np.asarray(self.X_fit_[self.basis_indices_].T @ self.coef_))
        return self.kernel_(X, self.X_fit_[self.basis_indices_]) @ self.coef_


class SMSVM(_SparseMaxMargin):
    """Sparse multiclass SVM (3.10): ``λ/2 Σ_r‖w_r‖² + ½ Σ_i Σ_{r≠y_i} max(0, 1 + f_r − f_{y_i})²``,
    ``w_r = Σ_{j∈J} α_jr φ(x_j)``. ``y`` is a 1-D class vector; ``predict`` is the argmax.

    Parameters
    ----------
    %(basis)s
    %(kernel)s
    %(solver)s
    %(tol)s
    %(max_iter)s
    %(random_state)s
    %(min_rel_decrease)s
    %(cvxpy_solver)s
    """

    _model = "smsvm"
    _single_output = True  # y is one class per sample; SM3L is the multilabel model

    def __init__(self, lam=1.0, d_max=None, kappa=25, *, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 solver="fast", tol=1e-10, max_iter=1000, random_state=None, min_rel_decrease=1e-3,
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
    %(basis)s
    R : array of shape (q, q) or None
        Label-correlation matrix ``R = PᵀP`` of SM3L (symmetric positive definite); None means the
        identity.
    P : array of shape (q, q) or None
        Label-correlation prior with ``R = PᵀP`` (give R or P, not both).
    %(kernel)s
    %(solver)s
    %(tol)s
    %(max_iter)s
    %(random_state)s
    %(min_rel_decrease)s
    %(cvxpy_solver)s
    """

    _model = "sm3l"

    def __init__(self, lam=1.0, d_max=None, kappa=25, R=None, P=None, *, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, solver="fast", tol=1e-10, max_iter=1000, random_state=None, min_rel_decrease=1e-3,
                 cvxpy_solver="CLARABEL"):
        self.lam, self.d_max, self.kappa, self.R, self.P = lam, d_max, kappa, R, P
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.solver, self.tol, self.max_iter, self.random_state = solver, tol, max_iter, random_state
        self.min_rel_decrease, self.cvxpy_solver = min_rel_decrease, cvxpy_solver

    def _correlation(self, n_labels):
        return form.check_correlation(self.R, self.P, n_labels)
