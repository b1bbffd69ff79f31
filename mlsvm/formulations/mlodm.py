"""mLODM (Tan, Tan, Jiang & Zhou): CVXPY primal and dual, numpy objectives, dual→primal, KKT.

Notation (SPEC §1, §2.4): pairs ``t = (i, k, l)``, ``k ∈ Y_i`` relevant, ``l ∈ Ȳ_i`` irrelevant,
``n_t = |Y_i||Ȳ_i|`` (so ``weight_t = 1/n_t``); pair margin ``m_t = ⟨w_k − w_l, φ(x_i)⟩``.

Primal (paper eq. 15, no bias)::

    min_{w, ξ, ε}  ½ Σ_k ‖w_k‖²  +  C/2 Σ_t (1/n_t) (ξ_t² + μ ε_t²)
    s.t.  m_t ≥ 1 − θ − ξ_t,   m_t ≤ 1 + θ + ε_t

With squared slacks no sign constraint is needed: at the optimum ``ξ_t = (1 − θ − m_t)₊`` and
``ε_t = (m_t − 1 − θ)₊``, so the primal objective of a point ``w`` is
``½ Σ‖w_k‖² + C/2 Σ_t (1/n_t)[(1 − θ − m_t)₊² + μ (m_t − 1 − θ)₊²]`` (:func:`primal_objective`).

Dual (paper eq. 18), α ≥ 0 for the lower and β ≥ 0 for the upper constraints::

    min_{α, β ≥ 0}  ½ Σ_k ‖w_k‖² + Σ_t [α_t(θ − 1) + β_t(θ + 1)] + Σ_t n_t/(2C) (α_t² + β_t²/μ)

with ``w_k = Σ_i (Σ_t (α_t − β_t) c^k_t) φ(x_i)`` (eq. 16/20): the coefficient matrix
``B = pairs.scatter(α − β)`` (n × q) gives ``w_k = Σ_i B_ik φ(x_i)``, ``‖w‖² = tr(BᵀKB)`` and scores
``F = K B``. The primal optimum equals **minus** this minimum; :func:`dual_objective` returns the
negated dual (a maximisation) so ``duality_gap = primal − dual ≥ 0``. Eq. (17):
``ξ_t = n_t α_t / C``, ``ε_t = n_t β_t / (μC)`` at the optimum.

The dual is the non-negative QP ``min ½ ηᵀPη + qᵀη`` in ``η = [α; β]`` with
``P = [[G + D, −G], [−G, G + D/μ]]``, ``G = SᵀKS`` (``S`` = scatter), ``D = diag(n_t/C)``,
``q = [(θ − 1)·1; (θ + 1)·1]``. ``P`` is only ever applied (a LinearOperator), never formed.

Two problem types share every function of this module: :class:`MLODMProblem` holds a Gram matrix,
:class:`LinearMLODMProblem` the features ``X`` of the linear kernel (dense or scipy sparse) and
never forms ``K = X Xᵀ``: both apply ``K`` through ``kernel_product`` and give CVXPY a factor
``K = L Lᵀ`` through ``factor``, so objectives, gradients and :func:`kkt_residuals` cost
O(nnz(X)·q + T) for the linear kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np
from scipy.sparse.linalg import LinearOperator

from scipy.sparse import csr_matrix, issparse

from mlsvm.data import RankingPairs, check_scalar, check_X
from mlsvm.formulations.evaluation import Evaluation, _scaled
from mlsvm.kernels import gram_factor
from mlsvm.solvers.compiled import compiled

__all__ = ["MLODMProblem", "LinearMLODMProblem", "cvxpy_primal", "cvxpy_dual", "evaluate",
           "solution_from_cvxpy", "primal_objective", "dual_objective", "coef_from_dual",
           "pair_margins", "kkt_residuals", "dual_gradient", "check_hyperparameters", "margin_statistics"]


def check_hyperparameters(C, theta, mu) -> None:
    """``C > 0``, ``θ ∈ [0, 1]``, ``μ ∈ (0, 1]`` (SPEC §2.4); errors name the parameter.

    Parameters
    ----------
    C : float
        Must be > 0.
    theta : float
        Must lie in [0, 1].
    mu : float
        Must lie in (0, 1].
    """
    check_scalar(C, "C", low=0.0, low_open=True)
    check_scalar(theta, "theta", low=0.0, high=1.0,
                 explain="θ is the half-width of the insensitive band around margin 1")
    check_scalar(mu, "mu", low=0.0, high=1.0, low_open=True,
                 explain="μ weighs the penalty on margins above 1 + θ")


@dataclass(frozen=True)
class MLODMProblem:
    """Gram matrix, ranking pairs and hyperparameters of one mLODM problem.

    Parameters
    ----------
    gram : array of shape (n, n)
        Gram matrix.
    pairs : RankingPairs
        Ranking pairs of the labels.
    C : float
        Weight C > 0 of the squared band violations.
    theta : float
        Band half-width θ ∈ [0, 1].
    mu : float
        Weight μ ∈ (0, 1] of violations above the band.
    """

    gram: np.ndarray
    pairs: RankingPairs
    C: float = 1.0
    theta: float = 0.5
    mu: float = 0.5

    def __post_init__(self):
        check_hyperparameters(self.C, self.theta, self.mu)
        if self.gram.shape != (self.pairs.n_samples, self.pairs.n_samples):
            raise ValueError(f"gram has shape {self.gram.shape}; expected ({self.pairs.n_samples}, {self.pairs.n_samples})")

    @property
    def pair_size(self) -> np.ndarray:
        """``n_t = |Y_i||Ȳ_i|`` per pair."""
        return 1.0 / self.pairs.weight

    def kernel_product(self, coef: np.ndarray) -> np.ndarray:
        """``K @ coef``."""
        return self.gram @ coef

    def factor(self) -> np.ndarray:
        """A factor ``L`` with ``L Lᵀ = K`` (for the CVXPY problems)."""
        return gram_factor(self.gram)


@dataclass(frozen=True)
class LinearMLODMProblem:
    """An mLODM problem with the linear kernel, given by its features: ``K = X Xᵀ`` is never formed.

    ``features`` is a dense ``(n, d)`` array or a scipy sparse matrix (kept as CSR float64). Every
    function of this module accepts it in place of an :class:`MLODMProblem`; ``w_k = Σ_i B_ik x_i``
    is the column ``k`` of ``W = Xᵀ B`` (:meth:`weights`).

    Parameters
    ----------
    features : array of shape (n, d) or scipy sparse matrix
        The training features X (sparse input is kept as CSR float64).
    pairs : RankingPairs
        Ranking pairs of the labels.
    C : float, default=1.0
        Weight C > 0 of the squared band violations.
    theta : float, default=0.5
        Band half-width θ ∈ [0, 1].
    mu : float, default=0.5
        Weight μ ∈ (0, 1] of violations above the band.
    """

    features: object
    pairs: RankingPairs
    C: float = 1.0
    theta: float = 0.5
    mu: float = 0.5

    def __post_init__(self):
        check_hyperparameters(self.C, self.theta, self.mu)
        if issparse(self.features):
            features = csr_matrix(self.features, dtype=np.float64)
            if features.ndim != 2 or 0 in features.shape:
                raise ValueError(f"features must be a non-empty 2-D matrix; got shape {features.shape}")
            if not np.all(np.isfinite(features.data)):
                raise ValueError("features contains NaN or infinite value(s); every entry must be finite")
            features.sum_duplicates()
        else:
            features = check_X(self.features, "features")
        if features.shape[0] != self.pairs.n_samples:
            raise ValueError(f"features has {features.shape[0]} rows; expected {self.pairs.n_samples} (one per instance)")
        object.__setattr__(self, "features", features)

    @property
    def pair_size(self) -> np.ndarray:
        """``n_t = |Y_i||Ȳ_i|`` per pair."""
        return 1.0 / self.pairs.weight

    @property
    def gram(self) -> np.ndarray:
        """The dense ``X Xᵀ`` (n × n): for comparisons with :class:`MLODMProblem` only."""
        product = self.features @ self.features.T
        return product.toarray() if issparse(product) else np.asarray(product)

    def weights(self, coef: np.ndarray) -> np.ndarray:
        """``W = Xᵀ coef`` (d × q): ``w_k = Σ_i coef_ik x_i``."""
        return np.asarray(self.features.T @ coef)

    def kernel_product(self, coef: np.ndarray) -> np.ndarray:
        """``K @ coef = X (Xᵀ coef)`` in O(nnz(X)·q)."""
        return np.asarray(self.features @ self.weights(coef))

    def factor(self) -> np.ndarray:
        """``X`` itself (dense): ``X Xᵀ = K``."""
        return self.features.toarray() if issparse(self.features) else self.features


def coef_from_dual(problem: MLODMProblem, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Eq. (16)/(20): ``B = scatter(α − β)``, so ``w_k = Σ_i B_ik φ(x_i)``.

    Parameters
    ----------
    problem : MLODMProblem
        The problem data (validated formulation object).
    alpha : array of shape (T,)
        Multipliers of the lower band constraints.
    beta : array of shape (T,)
        Multipliers of the upper band constraints.
    """
    return problem.pairs.scatter(alpha - beta)


def pair_margins(problem: MLODMProblem, coef: np.ndarray) -> np.ndarray:
    """``m_t = F[i,k] − F[i,l]`` with training scores ``F = K B``.

    Parameters
    ----------
    problem : MLODMProblem or LinearMLODMProblem
        The mLODM problem.
    coef : array of shape (n, q)
        Coefficients B of ``w_k = Σ_i B_ik φ(x_i)``.
    """
    return problem.pairs.gather(problem.kernel_product(coef))


def primal_objective(problem: MLODMProblem, coef: np.ndarray, scores: np.ndarray | None = None) -> float:
    """Eq. (15) at ``w_k = Σ_i coef_ik φ(x_i)`` with the optimal slacks (module docstring).
    ``scores`` (``K @ coef``) may be passed when already known.

    Parameters
    ----------
    problem : MLODMProblem or LinearMLODMProblem
        The mLODM problem.
    coef : array of shape (n, q)
        Coefficients B of ``w_k = Σ_i B_ik φ(x_i)``.
    scores : array of shape (n, q) or None, optional
        The training scores ``K @ coef`` when already known.
    """
    scores = problem.kernel_product(coef) if scores is None else scores
    return _objective_at_scores(problem, 0.5 * float(np.sum(coef * scores)), scores)


def _objective_at_scores(problem, regularizer: float, scores: np.ndarray) -> float:
    """``regularizer + C/2 Σ_t (1/n_t)[(1 − θ − m_t)₊² + μ (m_t − 1 − θ)₊²]`` at training scores F."""
    margins = problem.pairs.gather(scores)
    below = np.maximum(0.0, 1.0 - problem.theta - margins)
    above = np.maximum(0.0, margins - 1.0 - problem.theta)
    loss = problem.pairs.weight @ (below * below + problem.mu * above * above)
    return float(regularizer + 0.5 * problem.C * loss)


def dual_objective(problem: MLODMProblem, alpha: np.ndarray, beta: np.ndarray,
                   scores: np.ndarray | None = None) -> float:
    """Minus the objective of eq. (18) (the dual as a maximisation) at ``α, β``.

    Parameters
    ----------
    problem : MLODMProblem
        The problem data (validated formulation object).
    alpha : array of shape (T,)
        Multipliers of the lower band constraints.
    beta : array of shape (T,)
        Multipliers of the upper band constraints.
    scores : array of shape (n, q) or None
        ``K @ coef_from_dual(...)`` if already known.
    """
    coef = coef_from_dual(problem, alpha, beta)
    scores = problem.kernel_product(coef) if scores is None else scores
    size = problem.pair_size
    penalty = size @ (alpha * alpha + beta * beta / problem.mu) / (2.0 * problem.C)
    linear = (1.0 - problem.theta) * alpha.sum() - (1.0 + problem.theta) * beta.sum()
    return float(linear - 0.5 * np.sum(coef * scores) - penalty)


def dual_gradient(problem: MLODMProblem, alpha, beta, margins=None) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of the eq. (18) objective (minimisation) in α and β:
    ``m − (1 − θ) + n α/C`` and ``−m + (1 + θ) + n β/(μC)`` (m = pair margins of w(α, β)).

    Parameters
    ----------
    problem : MLODMProblem
        The problem data (validated formulation object).
    alpha : array of shape (T,)
        Multipliers of the lower band constraints.
    beta : array of shape (T,)
        Multipliers of the upper band constraints.
    margins : ndarray or None
        Pair margins ``m_t`` of the current point (computed when None).
    """
    if margins is None:
        margins = pair_margins(problem, coef_from_dual(problem, alpha, beta))
    size = problem.pair_size
    grad_alpha = margins - (1.0 - problem.theta) + size * alpha / problem.C
    grad_beta = -margins + (1.0 + problem.theta) + size * beta / (problem.mu * problem.C)
    return grad_alpha, grad_beta


def _dual_operator(problem: MLODMProblem) -> LinearOperator:
    """``P`` of the module docstring as a LinearOperator (O(nq + T) memory besides K)."""
    T = problem.pairs.n_pairs
    diagonal = problem.pair_size / problem.C

    def matvec(eta):
        eta = np.ravel(eta)
        alpha, beta = eta[:T], eta[T:]
        margins = pair_margins(problem, coef_from_dual(problem, alpha, beta))
        return np.concatenate([margins + diagonal * alpha, -margins + diagonal * beta / problem.mu])

    return LinearOperator((2 * T, 2 * T), matvec=matvec, rmatvec=matvec, dtype=np.float64)


def kkt_residuals(problem: MLODMProblem, alpha: np.ndarray, beta: np.ndarray,
                  margins: np.ndarray | None = None) -> dict[str, float]:
    """Scaled KKT residuals of the dual QP (eq. 18) at ``(α, β)`` with the implied bound multipliers
    ``z = −∇`` (a negative gradient component is dual infeasibility; ``η_j ∇_j ≠ 0`` shows up as
    complementarity). See :func:`mlsvm.formulations.evaluation.qp_residuals`.

    ``margins`` (the pair margins of ``w(α, β)``) may be passed when already known: ``P η = ∇ − q``
    is then formed from them, with no further product with ``K``. The residuals are those of
    ``qp_residuals(P, q, η, lb=0, z_box=−∇)`` term by term, but taken in one compiled pass over
    the pairs: none of the 2T-vectors (η, q, ∇, Pη, the multipliers) is formed, so the memory is
    the margins' T floats.

    Parameters
    ----------
    problem : MLODMProblem or LinearMLODMProblem
        The mLODM problem.
    alpha : array of shape (T,)
        Dual variables α of the lower-band constraints, one per pair.
    beta : array of shape (T,)
        Dual variables β of the upper-band constraints, one per pair.
    margins : array of shape (T,) or None, optional
        The pair margins of ``w(α, β)`` when already known.
    """
    if margins is None:
        margins = pair_margins(problem, coef_from_dual(problem, alpha, beta))
    norms = _residual_norms(np.asarray(alpha, dtype=np.float64), np.asarray(beta, dtype=np.float64),
                            np.asarray(margins, dtype=np.float64), problem.pairs.weight,
                            float(problem.C), float(problem.theta), float(problem.mu))
    return _scaled_residuals(*norms)


#: the ∞-norms and sums :func:`_residual_norms` returns, in order
_NORMS = ("eta", "product", "linear", "gradient", "stationarity", "upper", "lower_bound",
          "complementarity", "eta_product", "linear_eta", "bound_multiplier")


@compiled
def _residual_norms(alpha, beta, margins, weight, C, theta, mu):
    """The norms and sums :func:`mlsvm.formulations.evaluation.qp_residuals` takes of the 2T-vectors
    of :func:`kkt_residuals` (η = [α; β], q, ∇, Pη = ∇ − q, stationarity, the box multiplier
    z = −∇ split into its parts), in one pass over the pairs with the same elementwise arithmetic
    and none of those vectors formed. ∞-norms propagate NaN as ``np.max`` does."""
    eta_norm = product_norm = gradient_norm = stationarity_norm = 0.0
    upper_norm = bound_norm = complementarity_norm = 0.0
    eta_product = linear_eta = bound_multiplier = 0.0
    low, high = 1.0 - theta, 1.0 + theta
    linear_norm = max(abs(theta - 1.0), abs(theta + 1.0)) if margins.size else 0.0
    for half in range(2):
        linear = theta - 1.0 if half == 0 else theta + 1.0
        for t in range(margins.size):
            size = 1.0 / weight[t]
            if half == 0:
                eta = alpha[t]
                gradient = margins[t] - low + size * alpha[t] / C
            else:
                eta = beta[t]
                gradient = -margins[t] + high + size * beta[t] / (mu * C)
            product = gradient - linear
            multiplier = -gradient
            stationarity = product + linear + multiplier
            upper = max(multiplier, 0.0)
            lower = min(multiplier, 0.0)
            eta_norm = _nan_max(eta_norm, abs(eta))
            product_norm = _nan_max(product_norm, abs(product))
            gradient_norm = _nan_max(gradient_norm, abs(multiplier))
            stationarity_norm = _nan_max(stationarity_norm, abs(stationarity))
            upper_norm = _nan_max(upper_norm, upper)
            bound_norm = _nan_max(bound_norm, max(0.0 - eta, 0.0))
            complementarity_norm = _nan_max(complementarity_norm, abs((eta - 0.0) * lower))
            eta_product += eta * product
            linear_eta += linear * eta
            bound_multiplier += 0.0 * lower
    return (eta_norm, product_norm, linear_norm, gradient_norm, stationarity_norm, upper_norm, bound_norm,
            complementarity_norm, eta_product, linear_eta, bound_multiplier)


@compiled
def _nan_max(best, value):
    """``max(best, value)`` that keeps a NaN once seen (as ``np.max`` over the values would)."""
    return value if value > best or value != value else best


def _scaled_residuals(eta, product, linear, gradient, stationarity, upper, lower_bound, complementarity,
                      eta_product, linear_eta, bound_multiplier) -> dict[str, float]:
    """:func:`~mlsvm.formulations.evaluation.qp_residuals` with ``lb = 0``, ``ub = None``,
    ``z_box = −∇`` from the norms of :func:`_residual_norms` (the same formulas, term by term)."""
    gap_terms = (eta_product, linear_eta, bound_multiplier)
    return {
        "primal": _scaled(max(0.0, lower_bound), eta),
        "dual": _scaled(max(stationarity, max(0.0, upper)), product, linear, gradient),
        "complementarity": _scaled(max(0.0, complementarity), 0.0, gradient * max(eta, 0.0)),
        "gap": _scaled(abs(sum(gap_terms)), *(abs(term) for term in gap_terms)),
    }


def cvxpy_primal(problem: MLODMProblem):
    """CVXPY primal (eq. 15) in the coordinates of a factor ``K = L Lᵀ`` (``φ(x_i) ↦ L_i``):
    variables ``V`` (r × q, ``w_k ↦ V[:, k]``), ``xi``, ``eps``. Returns ``(cp.Problem, variables)``.

    Parameters
    ----------
    problem : MLODMProblem or LinearMLODMProblem
        The mLODM problem to build the primal of.
    """
    factor = problem.factor()
    pairs = problem.pairs
    V = cp.Variable((factor.shape[1], pairs.n_labels))
    xi = cp.Variable(pairs.n_pairs)
    eps = cp.Variable(pairs.n_pairs)
    margins = pairs.gather_matrix("F") @ cp.vec(factor @ V, order="F")
    weight = pairs.weight
    objective = 0.5 * cp.sum_squares(V) + 0.5 * problem.C * (
        cp.sum(cp.multiply(weight, cp.square(xi))) + problem.mu * cp.sum(cp.multiply(weight, cp.square(eps))))
    constraints = [margins >= 1 - problem.theta - xi, margins <= 1 + problem.theta + eps]
    return cp.Problem(cp.Minimize(objective), constraints), {"V": V, "xi": xi, "eps": eps, "factor": factor}


def cvxpy_dual(problem: MLODMProblem):
    """CVXPY dual (eq. 18) as a minimisation; the primal optimum is ``−problem.value``.
    Returns ``(cp.Problem, {"alpha", "beta"})``.

    Parameters
    ----------
    problem : MLODMProblem or LinearMLODMProblem
        The mLODM problem to build the dual of.
    """
    factor = problem.factor()
    pairs = problem.pairs
    alpha = cp.Variable(pairs.n_pairs, nonneg=True)
    beta = cp.Variable(pairs.n_pairs, nonneg=True)
    # vec(B) = Gᵀ(α − β) (column-major), so Σ_k ‖w_k‖² = ‖Lᵀ B‖²_F
    coef = cp.reshape(pairs.gather_matrix("F").T @ (alpha - beta), (pairs.n_samples, pairs.n_labels), order="F")
    size = problem.pair_size
    objective = (0.5 * cp.sum_squares(factor.T @ coef)
                 + (problem.theta - 1.0) * cp.sum(alpha) + (problem.theta + 1.0) * cp.sum(beta)
                 + cp.sum(cp.multiply(size / (2 * problem.C), cp.square(alpha)))
                 + cp.sum(cp.multiply(size / (2 * problem.C * problem.mu), cp.square(beta))))
    return cp.Problem(cp.Minimize(objective)), {"alpha": alpha, "beta": beta}


def evaluate(problem: MLODMProblem, primal: dict, dual: dict | None = None) -> Evaluation:
    """Grade a point: the primal objective (eq. 15) and, with a dual point ``{"alpha", "beta"}``,
    minus the eq. 18 objective and the dual QP's KKT residuals.

    ``primal = {"coef": (n, q)}`` (``w_k = Σ_i coef_ik φ(x_i)``), or for a
    :class:`LinearMLODMProblem` also ``{"W": (d, q)}`` (any weights, not only those in the span of
    the data); when it has neither, the coefficients the dual implies (eq. 16/20). ``extra`` holds
    the training scores and, when known, ``coef``.

    Parameters
    ----------
    problem : MLODMProblem or LinearMLODMProblem
        The problem the point is graded on.
    primal : dict
        The primal point ``{"coef": (n, q)}``, or ``{"W": (d, q)}`` for a
        :class:`LinearMLODMProblem`; empty to use the coefficients the dual implies.
    dual : dict or None, optional
        The dual point ``{"alpha", "beta"}`` (each of shape (T,)); None grades the primal only.
    """
    weights = primal.get("W")
    if primal.get("coef") is not None:
        coef = np.asarray(primal["coef"], dtype=np.float64)
    elif dual is not None:
        coef = coef_from_dual(problem, dual["alpha"], dual["beta"])
    elif weights is None:
        raise ValueError("evaluate needs primal['coef'] (or ['W'] with the linear kernel) or a dual point")
    else:
        coef = None
    if weights is not None and isinstance(problem, LinearMLODMProblem) and primal.get("coef") is None:
        weights = np.asarray(weights, dtype=np.float64)
        scores = np.asarray(problem.features @ weights)
        value = _objective_at_scores(problem, 0.5 * float(np.sum(weights * weights)), scores)
    else:
        scores = problem.kernel_product(coef)
        value = primal_objective(problem, coef, scores)
    evaluation = Evaluation(value, extra={"coef": coef, "scores": scores})
    if dual is not None:
        alpha, beta = dual["alpha"], dual["beta"]
        evaluation.dual_objective = dual_objective(problem, alpha, beta)
        evaluation.kkt = kkt_residuals(problem, alpha, beta)
    return evaluation


def solution_from_cvxpy(problem: MLODMProblem, cvx, variables) -> tuple[dict, dict]:
    """``(primal, dual)`` of a solved :func:`cvxpy_dual`: the multipliers clipped to ``≥ 0`` and the
    coefficients they imply.

    Parameters
    ----------
    problem : MLODMProblem
        The problem data (validated formulation object).
    cvx : cvxpy.Problem
        A solved problem of :func:`cvxpy_primal` or :func:`cvxpy_dual`.
    variables : dict
        Its variables, as returned with it.
    """
    alpha = np.maximum(np.asarray(variables["alpha"].value, dtype=np.float64), 0.0)
    beta = np.maximum(np.asarray(variables["beta"].value, dtype=np.float64), 0.0)
    return {"coef": coef_from_dual(problem, alpha, beta)}, {"alpha": alpha, "beta": beta}


def margin_statistics(margins: np.ndarray, bins: int = 20, value_range=None) -> dict:
    """Mean, variance and histogram (counts, edges) of label-pair margins (paper §6.4, Fig. 2).

    Degenerate margins (one pair, or all equal up to round-off: a symmetric problem) span a few
    ulps, which numpy cannot cut into ``bins`` finite bins; they get numpy's range for constant
    data, the value ± ½ (± half its magnitude when that is larger), so every margin is counted.
    Margins that are not finite are counted in ``n_pairs`` and make the mean and variance inf or
    nan, but have no bin: the histogram is that of the finite ones.

    Parameters
    ----------
    margins : ndarray
        Label-pair margins.
    bins : int
        Number of histogram bins.
    value_range : tuple or None
        ``(low, high)`` of the histogram (None: the range of the margins).
    """
    margins = np.asarray(margins, dtype=np.float64)
    finite = margins[np.isfinite(margins)]
    if value_range is None and finite.size:
        low, high = float(finite.min()), float(finite.max())
        if high - low <= 4 * bins * np.finfo(np.float64).eps * max(1.0, abs(low), abs(high)):
            centre = 0.5 * (low + high)
            half = 0.5 * max(1.0, abs(centre))
            value_range = (centre - half, centre + half)
    counts, edges = np.histogram(finite, bins=bins, range=value_range)
    with np.errstate(over="ignore", invalid="ignore"):   # inf − inf, or a square past the float limit
        mean, variance = float(np.mean(margins)), float(np.var(margins))
    return {"mean": mean, "variance": variance, "counts": counts, "edges": edges, "n_pairs": int(margins.size)}
