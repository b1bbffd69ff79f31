"""Binary SVM: the anchor of every equivalence test. CVXPY primal and dual, numpy objectives.

With labels ``y ∈ {−1, +1}ⁿ``, Gram matrix ``K`` and feature map φ:

Primal, ``loss="hinge"``::

    min_{w,b,ξ}  ½‖w‖² [+ ½b²]  +  C Σ_i ξ_i       s.t.  y_i(⟨w, φ(x_i)⟩ + b) ≥ 1 − ξ_i,  ξ ≥ 0

``loss="squared_hinge"`` replaces ``C Σ ξ_i`` by ``C Σ ξ_i²``. ``bias="free"`` (LIBSVM's SVC),
``"regularized"`` (the bracketed ½b², LIBLINEAR with ``intercept_scaling=1``) or ``"none"``
(``b = 0``). Dual, with ``Q = diag(y) K̃ diag(y)``, ``K̃ = K + 11ᵀ`` for a regularized bias and
``K`` otherwise::

    max_α  Σ α − ½ αᵀQα [− Σ α²/(4C)]    s.t.  0 ≤ α [≤ C],   [Σ y_i α_i = 0]

(the bracketed term for squared hinge, where α has no upper bound; the equality for a free
bias). Then ``w = Σ α_i y_i φ(x_i)``, and ``b = Σ α_i y_i`` for a regularized bias.

Primal objective = dual objective at the optimum (strong duality; tested on two backends).
The kernel primal is written in the coordinates of a factor ``K = L Lᵀ`` (``φ(x_i) ↦ L_i``).
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from mlsvm.formulations.evaluation import qp_residuals
from mlsvm.kernels import gram_factor

__all__ = ["LOSSES", "BIASES", "BinarySVMProblem", "cvxpy_primal", "cvxpy_dual",
           "primal_objective", "dual_objective", "decision_from_dual", "bias_from_dual"]

LOSSES = ("hinge", "squared_hinge")
BIASES = ("free", "regularized", "none")


@dataclass(frozen=True)
class BinarySVMProblem:
    """Data of one binary SVM: Gram matrix, ±1 labels and hyperparameters.

    Parameters
    ----------
    gram : array of shape (n, n)
        Gram matrix.
    y : array of shape (n,)
        Signed labels in {-1, +1}.
    C : float
        Loss weight C > 0.
    loss : {"hinge", "squared"}
        Hinge or squared hinge.
    bias : {"free", "regularized", "none"}
        Free bias, regularized bias (``+ ½b²``) or none.
    """

    gram: np.ndarray
    y: np.ndarray
    C: float
    loss: str = "hinge"
    bias: str = "free"

    def __post_init__(self):
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}; got {self.loss!r}")
        if self.bias not in BIASES:
            raise ValueError(f"bias must be one of {BIASES}; got {self.bias!r}")
        if not self.C > 0:
            raise ValueError(f"C must be > 0; got {self.C!r}")
        if not np.all(np.abs(self.y) == 1):
            raise ValueError("y must contain only −1 and +1")

    @property
    def dual_gram(self) -> np.ndarray:
        """``K + 11ᵀ`` for a regularized bias, ``K`` otherwise."""
        return self.gram + 1.0 if self.bias == "regularized" else self.gram


def cvxpy_primal(problem: BinarySVMProblem):
    """CVXPY primal (a minimisation). Returns ``(cp.Problem, variables)`` with variables ``v`` (coordinates of w in
    the factor basis), ``b`` and ``xi``; the decision values on the training set are ``L v + b``.

    Parameters
    ----------
    problem : BinarySVMProblem
        The problem data (validated formulation object).
    """
    factor = gram_factor(problem.gram)
    v = cp.Variable(factor.shape[1])
    b = cp.Variable() if problem.bias != "none" else cp.Constant(0.0)
    xi = cp.Variable(problem.y.size)
    regularizer = 0.5 * cp.sum_squares(v)
    if problem.bias == "regularized":
        regularizer = regularizer + 0.5 * cp.square(b)
    loss = cp.sum(xi) if problem.loss == "hinge" else cp.sum_squares(xi)
    constraints = [cp.multiply(problem.y, factor @ v + b) >= 1 - xi, xi >= 0]
    cvx = cp.Problem(cp.Minimize(regularizer + problem.C * loss), constraints)
    return cvx, {"v": v, "b": b, "xi": xi, "factor": factor}


def cvxpy_dual(problem: BinarySVMProblem):
    """CVXPY dual as a minimisation of the negated dual objective. Returns
    ``(cp.Problem, {"alpha"})``; the dual optimum is ``−problem.value``; for a free bias the last
    constraint is the equality ``yᵀα = 0``, whose multiplier is ``b``.

    Parameters
    ----------
    problem : BinarySVMProblem
        The problem data (validated formulation object).
    """
    factor = gram_factor(problem.dual_gram)
    alpha = cp.Variable(problem.y.size)
    quadratic = 0.5 * cp.sum_squares(factor.T @ cp.multiply(problem.y, alpha))
    constraints = [alpha >= 0]
    if problem.loss == "hinge":
        constraints.append(alpha <= problem.C)
    else:
        quadratic = quadratic + cp.sum_squares(alpha) / (4.0 * problem.C)
    if problem.bias == "free":
        constraints.append(problem.y @ alpha == 0)
    return cp.Problem(cp.Minimize(quadratic - cp.sum(alpha)), constraints), {"alpha": alpha}


def primal_objective(problem: BinarySVMProblem, coef: np.ndarray, b: float) -> float:
    """Primal objective at ``w = Σ coef_i φ(x_i)`` and bias ``b`` (ξ at its optimal value).

    Parameters
    ----------
    problem : BinarySVMProblem
        The problem data (validated formulation object).
    coef : array of shape (n,)
        Coefficients of w, ``w = Σ_i coef_i φ(x_i)``.
    b : ndarray or float
        Biases.
    """
    scores = problem.gram @ coef + b
    slack = np.maximum(0.0, 1.0 - problem.y * scores)
    loss = slack.sum() if problem.loss == "hinge" else slack @ slack
    regularizer = 0.5 * coef @ problem.gram @ coef
    if problem.bias == "regularized":
        regularizer += 0.5 * b * b
    return float(regularizer + problem.C * loss)


def dual_objective(problem: BinarySVMProblem, alpha: np.ndarray) -> float:
    """Dual objective (to maximise) at ``alpha``.

    Parameters
    ----------
    problem : BinarySVMProblem
        The problem data (validated formulation object).
    alpha : array of shape (n,)
        Dual variables.
    """
    ya = problem.y * alpha
    value = alpha.sum() - 0.5 * ya @ problem.dual_gram @ ya
    if problem.loss == "squared_hinge":
        value -= alpha @ alpha / (4.0 * problem.C)
    return float(value)


def bias_from_dual(problem: BinarySVMProblem, alpha: np.ndarray, equality_multiplier=None) -> float:
    """``b`` at a dual optimum: ``Σ α_i y_i`` (regularized), 0 (none), or for a free bias the
    multiplier of ``Σ y_i α_i = 0`` when given, else the average of ``y_i − f_i`` over the free
    support vectors (KKT: ``y_i f_i = 1`` there; squared hinge: ``y_i f_i = 1 − α_i/(2C)``).

    Parameters
    ----------
    problem : BinarySVMProblem
        The problem data (validated formulation object).
    alpha : array of shape (n,)
        Dual variables.
    equality_multiplier : float or None
        Multiplier of ``yᵀα = 0`` (free bias) from the dual solve.
    """
    if problem.bias == "none":
        return 0.0
    ya = problem.y * alpha
    if problem.bias == "regularized":
        return float(ya.sum())
    if equality_multiplier is not None:
        return float(equality_multiplier)
    scores = problem.gram @ ya
    target = problem.y * (1.0 - (alpha / (2.0 * problem.C) if problem.loss == "squared_hinge" else 0.0))
    scale = max(problem.C, 1.0)
    free = (alpha > 1e-7 * scale) & ((alpha < problem.C * (1 - 1e-7)) if problem.loss == "hinge" else True)
    if not np.any(free):  # no free vector: the midpoint of the feasible interval of b
        free = alpha > 1e-7 * scale
    return float(np.mean((target - scores)[free])) if np.any(free) else 0.0


def decision_from_dual(problem: BinarySVMProblem, alpha: np.ndarray, b: float, gram_test: np.ndarray) -> np.ndarray:
    """``f(x) = Σ α_i y_i k(x_i, x) + b`` for the rows of ``gram_test`` (m × n).

    Parameters
    ----------
    problem : BinarySVMProblem
        The problem data (validated formulation object).
    alpha : array of shape (n,)
        Dual variables.
    b : ndarray or float
        Biases.
    gram_test : array of shape (m, n)
        Kernel between the test points (rows) and the training points.
    """
    return gram_test @ (problem.y * alpha) + b


def dual_qp(problem: BinarySVMProblem) -> dict:
    """The dual as the standard-form QP of :func:`mlsvm.formulations.evaluation.qp_residuals`
    (minimise ``½αᵀPα + qᵀα``): ``P``, ``q``, bounds and the equality row."""
    y = problem.y
    P = y[:, None] * problem.dual_gram * y[None, :]
    if problem.loss == "squared_hinge":
        P = P + np.eye(y.size) / (2.0 * problem.C)
    qp = {"P": P, "q": -np.ones(y.size), "lb": np.zeros(y.size),
          "ub": np.full(y.size, problem.C) if problem.loss == "hinge" else None}
    if problem.bias == "free":
        qp.update(A=y[None, :], b=np.zeros(1))
    return qp


def kkt_residuals(problem: BinarySVMProblem, alpha: np.ndarray, b: float) -> dict[str, float]:
    """Scaled KKT residuals of the dual QP at ``alpha`` with bias ``b`` (the multiplier of the
    equality for a free bias). The box multipliers are the ones stationarity implies,
    ``z_box = −(Pα + q + Aᵀb)``, so a wrong sign or an active bound violated shows up as
    complementarity."""
    qp = dual_qp(problem)
    gradient = qp["P"] @ alpha + qp["q"]
    y_eq = None
    if problem.bias == "free":
        y_eq = np.array([b])
        gradient = gradient + qp["A"].T @ y_eq
    return qp_residuals(qp["P"], qp["q"], alpha, A=qp.get("A"), b=qp.get("b"), y=y_eq,
                        lb=qp["lb"], ub=qp["ub"], z_box=-gradient)
