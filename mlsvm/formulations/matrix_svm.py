"""Matrix-SVM (Jain & Rastogi, SPEC §2.5): CVXPY primal and dual, numpy objectives, KKT residuals.

Notation. ``K`` is the (n, n) Gram matrix, ``X̄ = [φ(X), 1]`` the features augmented by a column of
ones, so ``K̄ = X̄X̄ᵀ = K + 11ᵀ`` (the bias is regularized, as in LIBLINEAR with
``intercept_scaling=1``). ``Ys = 2Y − 1 ∈ {±1}^{n×q}``, ``E`` the all-ones matrix, ``∘`` the
Hadamard product, ``A`` the (q, q) label-correlation matrix (``A = I`` unless given) and
``M = AᵀA``. Every problem below is written with exactly these constants.

Hinge loss, primal (eq. 1; eq. 10 with ``A``)::

    min_{W,Q}  ½ tr(WᵀW) + C Σ_ij Q_ij     s.t.  Ys ∘ (X̄ W A) + Q ≥ E,  Q ≥ 0

Hinge loss, dual (eq. 8; derived here for eq. 10), written as a maximisation::

    max_α  Σ_ij α_ij − ½ tr(A Bᵀ K̄ B Aᵀ)      s.t.  0 ≤ α ≤ C,     B = α ∘ Ys

Derivation for eq. 10: the Lagrangian ``½tr(WᵀW) + C ΣQ − tr(αᵀ(Ys∘(X̄WA) + Q − E)) − tr(βᵀQ)``
is stationary in W at ``W = X̄ᵀ B Aᵀ`` (the paper's eq. 11 prints ``X̄ᵀBA``: the same only for a
symmetric A) and in Q at ``α + β = C E``; substituting gives the dual above. With ``A = I`` it is
eq. 8. Since ``tr(A Bᵀ K̄ B Aᵀ) = vec(B)ᵀ (M ⊗ K̄) vec(B)``, the Hessian in α is
``diag(Ys)(M ⊗ K̄)diag(Ys)`` and its largest eigenvalue is ``λ_max(M) λ_max(K̄)``.

Least squares (eq. 12, ``loss="squared"``)::

    min_{W,Q}  ½ tr(WᵀW) + C ‖Q‖²_F          s.t.  Ys ∘ (X̄ W A) + Q = E

Because every ``|Ys_ij| = 1``, ``Q = Ys ∘ (Ys − X̄WA)`` and ``‖Q‖_F = ‖Ys − X̄WA‖_F`` *exactly*: eq. 14,
``min ½tr(WᵀW) + C‖Ys − X̄WA‖²_F``, is the same problem with the same C. The paper's eq. (13) step
``‖Y∘(Y − XW)‖² = ‖Y‖²_F ‖Y − XW‖²`` is false (it would multiply the loss by ``‖Y‖²_F = nq``; the
paper then drops that factor with "≃"); the true identity needs no approximation
(``tests/test_matrix_svm_formulation.py`` shows both numerically). Its dual (α free)::

    max_α  Σ α − ½ tr(A Bᵀ K̄ B Aᵀ) − Σ α² / (4C),     B = α ∘ Ys

whose optimum solves the linear system ``K̄ B M + B / (2C) = Ys`` (the closed form, eq. 14).

Dual → primal: ``W = X̄ᵀ Θ`` with ``Θ = B Aᵀ`` (the *coefficients* below), so ``½tr(WᵀW) =
½tr(Θᵀ K̄ Θ)`` and the training scores are ``X̄WA = K̄ Θ A``; a test point scores
``f(x) = (k(x) + 1)ᵀ Θ A`` (the bias of label k is ``(1ᵀΘA)_k``). Primal optimum = dual optimum
(strong duality; checked on two CVXPY backends). The kernel primal is written in the coordinates
of a factor ``K = L Lᵀ`` (``X̄ ↦ [L, 1]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import cvxpy as cp
import numpy as np
from scipy.sparse.linalg import LinearOperator

from mlsvm.data import check_scalar, to_signed
from mlsvm.kernels import Kernel, gram_factor
from mlsvm.formulations.evaluation import Evaluation, check_gram_and_features, qp_residuals

__all__ = ["LOSSES", "MatrixSVMProblem", "cvxpy_primal", "cvxpy_dual", "evaluate", "solution_from_cvxpy", "coef_from_dual",
           "primal_objective", "dual_objective", "decision_function", "linear_weights",
           "kkt_residuals", "hessian_operator"]

LOSSES = ("hinge", "squared")


def check_correlation(correlation, n_labels: int) -> np.ndarray | None:
    """``None`` (A = I) or a finite (q, q) float matrix; otherwise a ValueError naming it."""
    if correlation is None:
        return None
    try:
        matrix = np.asarray(correlation, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"correlation must be a numeric (n_labels, n_labels) = ({n_labels}, {n_labels}) "
                         "matrix or None") from None
    if matrix.shape != (n_labels, n_labels):
        raise ValueError(f"correlation (A) must have shape (n_labels, n_labels) = ({n_labels}, {n_labels}); "
                         f"got {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("correlation (A) contains NaN or infinite values")
    return matrix


@dataclass(frozen=True)
class MatrixSVMProblem:
    """Data of one Matrix-SVM: Gram matrix K (without the ones), {0,1} labels, C, A, loss, and for
    the linear kernel the features X (``K = XXᵀ``; solvers may work in their coordinates).

    Parameters
    ----------
    gram : array of shape (n, n) or None
        Gram matrix K (without the ones); None only with ``features`` (then ``K = XXᵀ`` is formed
        only if a solver asks for :attr:`gram_bar`; every product here goes through X).
    Y : array of shape (n, q)
        Label indicator.
    C : float
        Loss weight C > 0.
    correlation : array of shape (q, q) or None
        Label-correlation matrix A (eq. 10); None is the identity.
    loss : {"hinge", "squared"}
        Hinge (eq. 1) or least squares (eq. 12).
    features : array or sparse matrix of shape (n, d), or None
        The features X when the kernel is linear, used instead of a factor of the Gram matrix.
    """

    gram: np.ndarray
    Y: np.ndarray
    C: float
    correlation: np.ndarray | None = None
    loss: str = "hinge"
    features: np.ndarray | None = None

    def __post_init__(self):
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}; got {self.loss!r}")
        check_scalar(self.C, "C", low=0.0, low_open=True)
        gram, features, n = check_gram_and_features(self.gram, self.features)   # a sparse X stays CSR
        object.__setattr__(self, "gram", gram)
        object.__setattr__(self, "features", features)
        Y = np.asarray(self.Y)
        if Y.ndim != 2 or Y.shape[0] != n:
            raise ValueError(f"Y must be an (n, q) indicator with n = {n}; got shape {Y.shape}")
        object.__setattr__(self, "correlation", check_correlation(self.correlation, Y.shape[1]))

    @property
    def n_samples(self) -> int:
        return np.asarray(self.Y).shape[0]

    @property
    def n_labels(self) -> int:
        return self.Y.shape[1]

    @cached_property
    def signed(self) -> np.ndarray:
        """``Ys = 2Y − 1``."""
        return to_signed(self.Y)

    @cached_property
    def gram_bar(self) -> np.ndarray:
        """``K̄ = K + 11ᵀ`` (X augmented by a column of ones); formed from the features (after the
        memory check of :mod:`mlsvm.kernels`) when the problem was built without K."""
        gram = self.gram if self.gram is not None else Kernel("linear")(self.features)
        return gram + 1.0

    def gram_bar_times(self, matrix: np.ndarray) -> np.ndarray:
        """``K̄ @ matrix``: with the linear kernel's features ``X(Xᵀ matrix) + 1(1ᵀ matrix)``,
        ``O(nnz(X) q)`` and no n × n matrix; otherwise the Gram matrix's product.

        Parameters
        ----------
        matrix : array of shape (n, q)
            The right-hand factor.
        """
        if self.features is None:
            return self.gram_bar @ matrix
        return np.asarray(self.features @ (self.features.T @ matrix)) + matrix.sum(axis=0)

    @cached_property
    def label_gram(self) -> np.ndarray | None:
        """``M = AᵀA``, or ``None`` for ``A = I``."""
        A = self.correlation
        return None if A is None else A.T @ A

    @property
    def ridge(self) -> float:
        """The ``Σα²/(4C)`` term's curvature ``1/(2C)`` (least squares), 0 for the hinge."""
        return 1.0 / (2.0 * self.C) if self.loss == "squared" else 0.0

    def right(self, matrix: np.ndarray, use: str = "M") -> np.ndarray:
        """``matrix @ M`` (``use="M"``), ``matrix @ A`` or ``matrix @ Aᵀ``; identity when A = I."""
        if self.correlation is None:
            return matrix
        return matrix @ {"M": self.label_gram, "A": self.correlation, "AT": self.correlation.T}[use]


def _augmented_factor(problem: MatrixSVMProblem) -> np.ndarray:
    """``[L, 1]`` with ``L Lᵀ = K``, so ``[L, 1][L, 1]ᵀ = K̄``: the rows of X̄ in factor coordinates."""
    gram = problem.gram if problem.gram is not None else problem.gram_bar - 1.0
    return np.hstack([gram_factor(gram), np.ones((problem.n_samples, 1))])


def cvxpy_primal(problem: MatrixSVMProblem):
    """CVXPY primal (eq. 1 / 10 / 12). Returns ``(cp.Problem, variables)``: ``W`` (r+1, q) in the
    coordinates of ``[L, 1]`` (its last row is the bias), the slack ``Q`` and ``features``.

    Parameters
    ----------
    problem : MatrixSVMProblem
        The problem data (validated formulation object).
    """
    features = _augmented_factor(problem)
    W = cp.Variable((features.shape[1], problem.n_labels))
    slack = cp.Variable((problem.n_samples, problem.n_labels))
    output = features @ W
    if problem.correlation is not None:
        output = output @ problem.correlation
    margin = cp.multiply(problem.signed, output) + slack
    if problem.loss == "hinge":
        constraints, loss = [margin >= 1, slack >= 0], cp.sum(slack)
    else:
        constraints, loss = [margin == 1], cp.sum_squares(slack)
    objective = 0.5 * cp.sum_squares(W) + problem.C * loss
    return cp.Problem(cp.Minimize(objective), constraints), {"W": W, "Q": slack, "features": features}


def cvxpy_dual(problem: MatrixSVMProblem):
    """CVXPY dual as the minimisation of the negated dual objective (eq. 8 and its extensions).
    Returns ``(cp.Problem, {"alpha"})``; the dual optimum is ``−problem.value``.

    Parameters
    ----------
    problem : MatrixSVMProblem
        The problem data (validated formulation object).
    """
    factor = _augmented_factor(problem)
    alpha = cp.Variable((problem.n_samples, problem.n_labels))
    B = cp.multiply(problem.signed, alpha)
    mapped = factor.T @ B
    if problem.correlation is not None:
        mapped = mapped @ problem.correlation.T
    quadratic = 0.5 * cp.sum_squares(mapped)  # ½ tr(A Bᵀ K̄ B Aᵀ) = ½ ‖[L,1]ᵀ B Aᵀ‖²_F
    constraints = []
    if problem.loss == "hinge":
        constraints = [alpha >= 0, alpha <= problem.C]
    else:
        quadratic = quadratic + cp.sum_squares(alpha) / (4.0 * problem.C)
    return cp.Problem(cp.Minimize(quadratic - cp.sum(alpha)), constraints), {"alpha": alpha}


def solution_from_cvxpy(problem: MatrixSVMProblem, cvx, variables) -> tuple[dict, dict]:
    """``(primal, dual)`` of a solved :func:`cvxpy_dual`: α (clipped to ``[0, C]`` for the hinge:
    interior-point round-off) and the coefficients it implies.

    Parameters
    ----------
    problem : MatrixSVMProblem
        The problem data (validated formulation object).
    cvx : cvxpy.Problem
        A solved problem of :func:`cvxpy_primal` or :func:`cvxpy_dual`.
    variables : dict
        Its variables, as returned with it.
    """
    alpha = np.asarray(variables["alpha"].value, dtype=np.float64)
    if problem.loss == "hinge":
        alpha = np.clip(alpha, 0.0, problem.C)
    return {"coef": coef_from_dual(problem, alpha)}, {"alpha": alpha}


def coef_from_dual(problem: MatrixSVMProblem, alpha: np.ndarray) -> np.ndarray:
    """``Θ = (α ∘ Ys) Aᵀ``: the primal point ``W = X̄ᵀΘ`` of a dual point (eq. 3 / 11).

    Parameters
    ----------
    problem : MatrixSVMProblem
        The problem data (validated formulation object).
    alpha : array of shape (n, q)
        Dual variables α.
    """
    return problem.right(alpha * problem.signed, "AT")


def _loss(problem: MatrixSVMProblem, scores: np.ndarray) -> float:
    residual = 1.0 - problem.signed * scores
    if problem.loss == "hinge":
        return float(np.maximum(residual, 0.0).sum())
    return float(np.sum(residual * residual))   # = ‖Ys − scores‖²_F since |Ys| = 1


def primal_objective(problem: MatrixSVMProblem, coef: np.ndarray) -> float:
    """Primal objective at ``W = X̄ᵀ coef`` with Q at its optimal (hinge) / forced (LS) value.

    Parameters
    ----------
    problem : MatrixSVMProblem
        The problem data (validated formulation object).
    coef : array of shape (n, q)
        Coefficients Θ with ``W = X̄ᵀΘ``.
    """
    gram_coef = problem.gram_bar_times(coef)
    regularizer = 0.5 * float(np.sum(coef * gram_coef))    # ½ tr(WᵀW) = ½ tr(Θᵀ K̄ Θ)
    return regularizer + problem.C * _loss(problem, problem.right(gram_coef, "A"))


def dual_objective(problem: MatrixSVMProblem, alpha: np.ndarray) -> float:
    """Dual objective (to maximise) at ``alpha``.

    Parameters
    ----------
    problem : MatrixSVMProblem
        The problem data (validated formulation object).
    alpha : array of shape (n, q)
        Dual variables α.
    """
    B = alpha * problem.signed
    quadratic = float(np.sum(B * problem.right(problem.gram_bar_times(B), "M")))
    value = float(alpha.sum()) - 0.5 * quadratic
    if problem.loss == "squared":
        value -= float(np.sum(alpha * alpha)) / (4.0 * problem.C)
    return value


def decision_function(problem: MatrixSVMProblem, coef: np.ndarray, gram_test: np.ndarray) -> np.ndarray:
    """Scores ``(K(X_test, X) + 1) Θ A`` (Alg. 1's last line, with A).

    Parameters
    ----------
    problem : MatrixSVMProblem
        The problem data (validated formulation object).
    coef : array of shape (n, q)
        Coefficients Θ with ``W = X̄ᵀΘ``.
    gram_test : array of shape (m, n)
        Kernel between the test points (rows) and the training points.
    """
    return (gram_test + 1.0) @ problem.right(coef, "A")


def linear_weights(X: np.ndarray, coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the linear kernel: ``W = X̄ᵀΘ`` split into the weights (d, q) and the bias row (q,).

    Parameters
    ----------
    X : array of shape (n, d)
        Training features (linear kernel).
    coef : array of shape (n, q)
        Coefficients Θ.
    """
    return X.T @ coef, coef.sum(axis=0)


def hessian_operator(problem: MatrixSVMProblem) -> LinearOperator:
    """The dual Hessian ``diag(Ys)(M ⊗ K̄)diag(Ys) [+ I/(2C)]`` on ``vec(α)`` (row-major), never
    formed: ``O(nq)`` memory besides K̄.

    Parameters
    ----------
    problem : MatrixSVMProblem
        The problem data (validated formulation object).
    """
    n, q = problem.n_samples, problem.n_labels

    def matvec(vector):
        alpha = np.asarray(vector, dtype=np.float64).reshape(n, q)
        product = problem.signed * problem.right(problem.gram_bar_times(alpha * problem.signed), "M")
        return (product + problem.ridge * alpha).ravel()

    return LinearOperator((n * q, n * q), matvec=matvec, rmatvec=matvec, dtype=np.float64)


def evaluate(problem: MatrixSVMProblem, primal: dict, dual: dict | None = None) -> Evaluation:
    """Grade a point: the primal objective and, with ``dual = {"alpha"}``, the dual objective and
    the dual QP's KKT residuals.

    ``primal = {"coef": Θ}`` (n, q), ``W = X̄ᵀΘ``; or, when the problem has the linear kernel's
    features, the weights themselves ``{"W": (d, q), "b": (q,)}`` (what LIBLINEAR returns with
    ``intercept_scaling=1``; any W, not only one in the span of the data). Without either, the
    dual's coefficients (:func:`coef_from_dual`). ``extra`` holds Θ (``coef``, when known) and the
    training decision values (``scores``).

    Parameters
    ----------
    problem : MatrixSVMProblem
        The problem the point is graded on.
    primal : dict
        The primal point: ``{"coef": Θ}`` of shape (n, q), or ``{"W", "b"}`` for a problem with the
        linear kernel's features; empty to use the coefficients the dual implies.
    dual : dict or None, optional
        The dual point ``{"alpha"}``; None grades the primal only.
    """
    if primal.get("coef") is None and primal.get("W") is not None:
        if problem.features is None:
            raise ValueError("primal['W'] needs the linear kernel's features (kernel='linear'); "
                             "give primal['coef'] for other kernels")
        weights = np.asarray(primal["W"], dtype=np.float64).reshape(-1, problem.n_labels)
        bias = np.asarray(primal.get("b", np.zeros(problem.n_labels)), dtype=np.float64).ravel()
        outputs = problem.right(np.asarray(problem.features @ weights) + bias, "A")
        value = 0.5 * (float(np.sum(weights * weights)) + float(bias @ bias)) + problem.C * _loss(problem, outputs)
        evaluation = Evaluation(value, extra={"coef": None, "scores": outputs})
    else:
        if primal.get("coef") is None:
            if dual is None:
                raise ValueError("evaluate needs primal['coef'] (or ['W'] with the linear kernel) or a dual point {'alpha'}")
            coef = coef_from_dual(problem, dual["alpha"])
        else:
            coef = np.asarray(primal["coef"], dtype=np.float64)
        evaluation = Evaluation(primal_objective(problem, coef),
                                extra={"coef": coef, "scores": problem.right(problem.gram_bar_times(coef), "A")})
    if dual is not None:
        evaluation.dual_objective = dual_objective(problem, dual["alpha"])
        evaluation.kkt = kkt_residuals(problem, dual["alpha"])
    return evaluation


def kkt_residuals(problem: MatrixSVMProblem, alpha: np.ndarray) -> dict[str, float]:
    """Scaled KKT residuals of the dual QP ``min ½αᵀPα − Σα`` (box ``[0, C]`` for the hinge, free for
    least squares) at ``alpha``, with the box multipliers stationarity implies,
    ``z_box = −(Pα − 1)``: a wrong active set shows up as complementarity.

    Parameters
    ----------
    problem : MatrixSVMProblem
        The problem data (validated formulation object).
    alpha : array of shape (n, q)
        Dual variables α.
    """
    P = hessian_operator(problem)
    x = np.asarray(alpha, dtype=np.float64).ravel()
    linear = -np.ones_like(x)
    if problem.loss == "squared":
        return qp_residuals(P, linear, x)
    implied = -(P.matvec(x) + linear)
    return qp_residuals(P, linear, x, lb=np.zeros_like(x), ub=np.full_like(x, problem.C), z_box=implied)
