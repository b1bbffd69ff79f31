"""One-vs-None (Shajari & Rangarajan): CVXPY primal and derived dual, numpy objectives, KKT.

Notation. ``n`` samples, ``K`` classes (labels), Gram matrix ``G = ΦΦᵀ``, indicator ``Y`` (n × K);
class ``C_k = {i : Y_ik = 1}``; ``T = Σ_k |C_k|`` memberships (a sample may be in several classes,
or in none). Weights ``w_k = Σ_i A_ik φ(x_i)`` (representer theorem, paper eq. 15), so
``W = ΦᵀA`` and the scores are ``F = G A + 1bᵀ``.

Canonical primal (SPEC §2.2; paper eq. 5 with the ½ of eq. 9)::

    min_{W,b,ξ}  ½ tr(W M Wᵀ) + β Σ_k Σ_{i∈C_k} ξ_ki   [+ γ (Σ_k b_k)²      (soft b)]
    s.t.         w_kᵀφ(x_i) + b_k ≥ 1 − ξ_ki,  ξ_ki ≥ 0   (i ∈ C_k only: no negatives anywhere)
                 [Σ_k b_k = 0     (hard b)]
                 [Σ_k w_k = 0     (hard w; kernel: Σ_k A_ik = 0 for every i, eq. 16)]

``M = (1−α)I + α11ᵀ`` (soft w), i.e. ``½Σ‖w_k‖² + α Σ_{k<l} w_kᵀw_l``; hard w uses ``M = I``
(under ``Σ w_k = 0`` the α term is constant in α anyway). Soft w is convex iff ``M ≻ 0`` iff
``−1/(K−1) < α < 1``. The paper's Appendix A writes ``Σ w̃ᵀDw̃ + α Σ_{k<l} …`` without the ½:
App-A(α, β) = canonical(α/2, β/2) (SPEC §2.2), so Fig. 1's "α ∈ [1, 2]" is canonical α ∈ [½, 1).

Derived dual (the paper has none). Lagrangian with ``λ_ki ≥ 0`` on the margin constraints,
``μ_ki ≥ 0`` on ``ξ ≥ 0``::

    L = ½tr(WMWᵀ) + βΣξ − Σ λ_ki (w_kᵀφ_i + b_k − 1 + ξ_ki) − Σ μ_ki ξ_ki  [+ γ s² | + ν s],
    s = Σ_k b_k.

* ∂ξ: ``β − λ − μ = 0`` ⇒ ``0 ≤ λ_ki ≤ β``.
* ∂W: ``W M = U``, ``U = [u_1 … u_K]``, ``u_k = Σ_{i∈C_k} λ_ki φ_i`` ⇒ ``W = U M⁻¹`` and
  ``½tr(WMWᵀ) − tr(WᵀU) = −½ tr(M⁻¹ UᵀU)``. Hard w (``M = I``, constraint ``W1 = 0`` with a
  multiplier): ``W = U P``, ``P = I − 11ᵀ/K`` (the centring matrix), term ``−½ tr(P UᵀU)``.
* ∂b_k: hard b ⇒ ``Σ_{i∈C_k} λ_ki = ν`` for every k (ν = the multiplier of ``Σb = 0``, free);
  soft b ⇒ ``Σ_{i∈C_k} λ_ki = 2γ s =: ν`` for every k, and ``γs² − νs = −ν²/(4γ)``.

Hence, with ``Λ`` the n × K array of ``λ_ki`` (zero off the memberships) and ``U = ΦᵀΛ``::

    max_{Λ,ν}  Σ λ − ½ tr(S ΛᵀGΛ)  [− ν²/(4γ)   (soft b)]
    s.t.       0 ≤ λ_ki ≤ β  (i ∈ C_k),   Σ_{i∈C_k} λ_ki = ν  for every class k   (equal mass)

with ``S = M⁻¹`` (soft w) or ``S = I − 11ᵀ/K`` (hard w). Dual → primal: ``A = Λ S``, and ``b`` is
the multiplier vector of the equal-mass constraints (at a free ``0 < λ_ki < β``,
``(GA)_ik + b_k = 1``); ``Σ b = 0`` (hard b) or ``Σ b = ν/(2γ)`` (soft b). A class with no member
forces ``ν = 0``, hence ``Λ = 0``: the optimum is ``W = 0`` with the biases absorbing every margin
(:func:`empty_class_solution`). Primal = dual is tested for all four variants on two backends.

The CVXPY problems use a factor ``L`` (``LLᵀ = G``; the features ``X`` themselves for the linear
kernel): ``W ↦ V = LᵀA`` (r × K), ``tr(WMWᵀ) = ‖V R‖²`` with ``M = RRᵀ`` (Cholesky).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csr_matrix
from scipy.sparse.linalg import LinearOperator

from mlsvm.data import check_scalar
from mlsvm.formulations.evaluation import Evaluation, check_gram_and_features, linear_weights, qp_residuals
from mlsvm.kernels import Kernel, gram_factor

__all__ = ["CONSTRAINTS", "OvNProblem", "cvxpy_primal", "cvxpy_dual", "evaluate", "solution_from_cvxpy",
           "primal_objective", "smoothed_primal_objective", "dual_objective", "primal_dual_objectives", "coef_from_dual",
           "member_scores", "optimal_biases", "with_canonical_biases",
           "equalize_class_mass", "empty_class_solution", "dual_qp", "dual_metric_root", "dual_metric_coefficients", "dual_quadratic_factor", "kkt_residuals",
           "alpha_interval", "primal_infeasibility"]

CONSTRAINTS = ("soft", "hard")


def alpha_interval(n_classes: int) -> tuple[float, float]:
    """Open interval of α for which ``M = (1−α)I + α11ᵀ`` is positive definite.

    Parameters
    ----------
    n_classes : int
        Number of classes K.
    """
    return (-1.0 / (n_classes - 1) if n_classes > 1 else -np.inf), 1.0


@dataclass(frozen=True)
class OvNProblem:
    """Data of one OvN problem. ``features`` (optional, n × r with ``features featuresᵀ = gram``,
    e.g. ``X`` for the linear kernel) replaces the eigen-factor of ``gram`` in CVXPY and MM. With
    ``features``, ``gram`` may be None: every product with G is then ``X(Xᵀ·)`` (a sparse X stays
    CSR), and the n × n matrix is formed only by :attr:`gram_matrix` (the dense
    :func:`dual_qp`, the Gram-matrix fallback of the interior point), never by grading a point.

    Parameters
    ----------
    gram : array of shape (n, n) or None
        Gram matrix G; None only with ``features`` (the linear kernel).
    Y : array of shape (n, K)
        Class memberships (a sample may be in several classes or none).
    alpha : float
        Coupling α of soft w, in ``(−1/(K−1), 1)``.
    beta : float
        Hinge weight β > 0.
    w_constraint : {"soft", "hard"}
        Soft w (the α coupling term) or hard w (``Σ_k w_k = 0``).
    b_constraint : {"soft", "hard"}
        Hard b (``Σ_k b_k = 0``) or soft b (``+ γ_b (Σ_k b_k)²``).
    gamma_b : float
        Weight γ_b > 0 of the soft-b penalty ``γ_b (Σ_k b_k)²``.
    features : array or sparse matrix of shape (n, r), or None
        Features with ``features featuresᵀ = gram`` (``X`` for the linear kernel), used instead of an
        eigen-factor of the Gram matrix; a sparse matrix is kept as CSR.
    """

    gram: np.ndarray | None
    Y: np.ndarray
    alpha: float = 0.0
    beta: float = 1.0
    w_constraint: str = "soft"
    b_constraint: str = "hard"
    gamma_b: float = 1.0
    features: np.ndarray | None = None

    def __post_init__(self):
        gram, features, n = check_gram_and_features(self.gram, self.features)   # a sparse X stays CSR
        object.__setattr__(self, "gram", gram)
        object.__setattr__(self, "features", features)
        if np.ndim(self.Y) != 2 or np.shape(self.Y)[0] != n:
            raise ValueError(f"Y must be an (n, K) indicator with n = {n}; got shape {np.shape(self.Y)}")
        for name in ("w_constraint", "b_constraint"):
            if getattr(self, name) not in CONSTRAINTS:
                raise ValueError(f"{name} must be one of {CONSTRAINTS}; got {getattr(self, name)!r}")
        check_scalar(self.beta, "beta", low=0.0, low_open=True)
        if self.soft_b:
            check_scalar(self.gamma_b, "gamma_b", low=0.0, low_open=True,
                         explain="b_constraint='soft' adds gamma_b·(Σ_k b_k)², which needs gamma_b > 0")
        if self.w_constraint == "soft":
            low, high = alpha_interval(self.n_classes)
            check_scalar(self.alpha, "alpha", low=low, high=high, low_open=True, high_open=True, explain=(
                f"With w_constraint='soft' the regularizer ½tr(WMWᵀ), M = (1−α)I + α11ᵀ, is convex only "
                f"when M is positive definite, i.e. −1/(K−1) < alpha < 1 (K = {self.n_classes}); outside it the "
                "problem is unbounded below. alpha is in the canonical scaling of eq. 5: the paper's "
                "Appendix A drops the ½, so its α equals 2·alpha (App-A(α, β) = canonical(α/2, β/2))"))

    @property
    def n_classes(self) -> int:
        return self.Y.shape[1]

    @property
    def soft_b(self) -> bool:
        return self.b_constraint == "soft"

    @property
    def coupling(self) -> np.ndarray:
        """``M`` of the regularizer ½tr(WMWᵀ) (``I`` for hard w)."""
        K = self.n_classes
        alpha = self.alpha if self.w_constraint == "soft" else 0.0
        return (1.0 - alpha) * np.eye(K) + alpha * np.ones((K, K))

    @property
    def dual_metric(self) -> np.ndarray:
        """``S``: ``M⁻¹`` (soft w) or the centring matrix ``I − 11ᵀ/K`` (hard w)."""
        K = self.n_classes
        if self.w_constraint == "hard":
            return np.eye(K) - np.ones((K, K)) / K
        return np.linalg.inv(self.coupling)

    @cached_property
    def members(self) -> tuple[np.ndarray, np.ndarray]:
        """``(sample, class)`` index arrays of the T memberships, ordered class by class (computed once)."""
        cls, sample = np.nonzero(np.asarray(self.Y).T)
        return sample, cls

    @property
    def n_samples(self) -> int:
        return self.Y.shape[0]

    @cached_property
    def member_features(self):
        """The features of the T memberships' samples, ``features[sample]`` (T × r, CSR if sparse)."""
        return self.features[self.members[0]]

    @cached_property
    def member_nonzeros(self) -> tuple[np.ndarray, np.ndarray]:
        """For each stored entry of the sparse :attr:`member_features`: its membership t and class k_t."""
        rows = self.member_features
        owner = np.repeat(np.arange(rows.shape[0]), np.diff(rows.indptr))
        return owner, self.members[1][owner]

    @cached_property
    def gram_matrix(self) -> np.ndarray:
        """G itself: ``gram``, or ``XXᵀ`` formed from the features (after the memory check of
        :mod:`mlsvm.kernels`) for the few consumers that need the n × n matrix."""
        return self.gram if self.gram is not None else Kernel("linear")(self.features)

    def gram_times(self, matrix: np.ndarray) -> np.ndarray:
        """``G @ matrix``: with features ``X(Xᵀ matrix)``, ``O(nnz(X)·m)`` and no n × n matrix.

        Parameters
        ----------
        matrix : array of shape (n, m)
            The right-hand factor.
        """
        if self.features is None:
            return self.gram @ matrix
        return np.asarray(self.features @ np.asarray(self.features.T @ matrix))

    def gram_quadratic(self, A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(AᵀGA, GA)`` (K × K, n × K); with features through ``U = XᵀA`` (``UᵀU``, ``XU``).

        Parameters
        ----------
        A : array of shape (n, K)
            Coefficients over the training points.
        """
        if self.features is None:
            GA = self.gram @ A
            return A.T @ GA, GA
        U = np.asarray(self.features.T @ A)
        return U.T @ U, np.asarray(self.features @ U)

    def features_times_dual(self, Lam: np.ndarray) -> np.ndarray:
        """``XᵀΛ`` (r × K) for a Λ that is zero off the T memberships, through the sparse Λ: ``O(Σ_t
        nnz(x_{i_t}))`` instead of ``O(nnz(X)·K)``. Needs ``features``.

        Parameters
        ----------
        Lam : array of shape (n, K)
            Dual variables, zero off the memberships.
        """
        product = self.features.T @ csr_matrix(Lam)
        return product.toarray() if sp.issparse(product) else np.asarray(product)

    def factor(self) -> np.ndarray:
        """A dense factor ``L`` with ``LLᵀ = G`` (the features, densified if sparse; else an
        eigen-factor of the Gram matrix), for CVXPY and MM."""
        if self.features is None:
            return gram_factor(self.gram)
        return self.features.toarray() if sp.issparse(self.features) else self.features


def _mask(problem: OvNProblem) -> np.ndarray:
    return np.asarray(problem.Y, dtype=np.float64)


def cvxpy_primal(problem: OvNProblem):
    """CVXPY primal in factor coordinates. Returns ``(cp.Problem, {"V", "b", "factor", "scores",
    "regularizer"})``; training scores are ``factor @ V + b``.

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    """
    factor = problem.factor()
    K = problem.n_classes
    V = cp.Variable((factor.shape[1], K))
    b = cp.Variable(K)
    scores = factor @ V + np.ones((factor.shape[0], 1)) @ cp.reshape(b, (1, K), order="C")
    if problem.w_constraint == "soft":
        R = np.linalg.cholesky(problem.coupling)
        regularizer = 0.5 * cp.sum_squares(V @ R)
        constraints = []
    else:
        regularizer = 0.5 * cp.sum_squares(V)
        constraints = [cp.sum(V, axis=1) == 0]
    objective = regularizer + problem.beta * cp.sum(cp.multiply(_mask(problem), cp.pos(1 - scores)))
    if problem.soft_b:
        objective = objective + problem.gamma_b * cp.square(cp.sum(b))
    else:
        constraints.append(cp.sum(b) == 0)
    variables = {"V": V, "b": b, "factor": factor, "scores": scores, "regularizer": regularizer}
    return cp.Problem(cp.Minimize(objective), constraints), variables


def cvxpy_dual(problem: OvNProblem):
    """CVXPY dual as a minimisation of the negated dual objective. Returns
    ``(cp.Problem, {"Lam", "nu"})``; ``Λ = Y ∘ Lam``; the dual optimum is ``−problem.value``. The
    last constraint holds the equal-mass rows: its multipliers are the biases ``b``.

    Parameters
    ----------
    problem : OvNProblem
        The OvN problem to build the dual of.
    """
    factor = problem.factor()
    mask = _mask(problem)
    lam = cp.Variable(mask.shape, nonneg=True)
    nu = cp.Variable()
    Lam = cp.multiply(mask, lam)
    R_S = dual_metric_root(problem)  # tr(S ΛᵀGΛ) = ‖Lᵀ Λ R_S‖² with S = R_S R_Sᵀ
    negated = 0.5 * cp.sum_squares(factor.T @ Lam @ R_S) - cp.sum(Lam)
    if problem.soft_b:
        negated = negated + cp.square(nu) / (4.0 * problem.gamma_b)
    constraints = [lam <= problem.beta, cp.sum(Lam, axis=0) == nu]
    return cp.Problem(cp.Minimize(negated), constraints), {"Lam": Lam, "nu": nu}


def _loss_terms(problem: OvNProblem, A: np.ndarray, b: np.ndarray) -> np.ndarray:
    return 1.0 - (problem.gram_times(A) + b[None, :])


def primal_objective(problem: OvNProblem, A: np.ndarray, b: np.ndarray) -> float:
    """Canonical primal objective at ``W = ΦᵀA`` and ``b`` (ξ at its optimal value). Feasibility of
    the hard constraints is reported by :func:`kkt_residuals`, not assumed.

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    A : array of shape (n, K)
        Coefficients, ``w_k = Σ_i A_ik φ(x_i)``.
    b : array of shape (K,)
        Biases.
    """
    inner, GA = problem.gram_quadratic(A)
    return _objective(problem, inner, GA + b[None, :], b)


def _objective(problem: OvNProblem, inner: np.ndarray, scores: np.ndarray, b: np.ndarray) -> float:
    """The canonical primal objective from ``WᵀW`` (``inner``, K × K) and the training scores."""
    regularizer = 0.5 * float(np.sum(inner * problem.coupling))
    slack = np.maximum(0.0, 1.0 - scores)
    value = regularizer + problem.beta * float(np.sum(_mask(problem) * slack))
    if problem.soft_b:
        value += problem.gamma_b * float(b.sum()) ** 2
    return value


def smoothed_primal_objective(problem: OvNProblem, A: np.ndarray, b: np.ndarray, epsilon: float) -> float:
    """The objective MM with the ε floor minimizes: the hinge ``r₊`` (``r = 1 − u``) replaced by
    ``h_ε(r) = min_{z≥ε} (r + z)²/(4z)`` = ``r₊`` for ``|r| ≥ ε``, ``(r + ε)²/(4ε)`` for ``|r| < ε``.
    ``0 ≤ h_ε − r₊ ≤ ε/4``, so ``F ≤ F_ε ≤ F + βεT/4``.

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    A : array of shape (n, K)
        Coefficients.
    b : array of shape (K,)
        Biases.
    epsilon : float
        Floor ε > 0 of the smoothed hinge.
    """
    inner, GA = problem.gram_quadratic(A)
    r = 1.0 - (GA + b[None, :])
    smooth = np.where(np.abs(r) < epsilon, (r + epsilon) ** 2 / (4.0 * epsilon), np.maximum(r, 0.0))
    regularizer = 0.5 * float(np.sum(inner * problem.coupling))
    value = regularizer + problem.beta * float(np.sum(_mask(problem) * smooth))
    if problem.soft_b:
        value += problem.gamma_b * float(b.sum()) ** 2
    return value


def dual_objective(problem: OvNProblem, Lam: np.ndarray, nu: float | None = None) -> float:
    """Dual objective (to maximise) at ``Λ`` (n × K, zero off the memberships); ``ν`` defaults to
    the mean class mass. Equal masses are a constraint, checked by :func:`kkt_residuals`.

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    Lam : array of shape (n, K)
        Dual variables ``λ_ki`` (zero off the memberships).
    nu : float or None
        Common class mass ν of the equal-mass constraints (None: computed from Lam).
    """
    Lam = _mask(problem) * Lam
    nu = float(Lam.sum(axis=0).mean()) if nu is None else float(nu)
    return _dual_value(problem, Lam, _dual_inner(problem, Lam)[0], nu)


def _dual_inner(problem: OvNProblem, Lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ΛᵀGΛ, XᵀΛ)`` through the sparse Λ with features, else ``(ΛᵀGΛ, GΛ)``."""
    if problem.features is not None:
        U = problem.features_times_dual(Lam)
        return U.T @ U, U
    GLam = problem.gram @ Lam
    return Lam.T @ GLam, GLam


def _dual_value(problem: OvNProblem, Lam: np.ndarray, inner: np.ndarray, nu: float) -> float:
    """``Σλ − ½tr(S ΛᵀGΛ) [− ν²/(4γ)]`` from ``inner = ΛᵀGΛ``."""
    value = float(Lam.sum()) - 0.5 * float(np.sum(inner * problem.dual_metric))
    if problem.soft_b:
        value -= float(nu) ** 2 / (4.0 * problem.gamma_b)
    return value


def primal_dual_objectives(problem: OvNProblem, Lam: np.ndarray, nu: float, b: np.ndarray) -> tuple[float, float]:
    """``(primal_objective(A = ΛS, b), dual_objective(Λ, ν))`` from one product with the Gram
    matrix (with features: ``U = XᵀΛ`` through the sparse Λ, then the T member scores
    ``x_{i_t}ᵀ(US)_{k_t}`` only), as an iterative solver records them at every iterate. The same
    values as the two functions up to the order of summation.

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    Lam : array of shape (n, K)
        Dual variables ``λ_ki`` (zero off the memberships).
    nu : float
        Common class mass ν.
    b : array of shape (K,)
        Biases.
    """
    Lam = _mask(problem) * Lam
    S = problem.dual_metric
    cls = problem.members[1]
    inner, product = _dual_inner(problem, Lam)   # only the T member scores enter the hinge
    scores = _member_scores(problem, product @ S)
    primal = 0.5 * float(np.sum((S @ inner @ S) * problem.coupling))
    primal += problem.beta * float(np.sum(np.maximum(0.0, 1.0 - scores - b[cls])))
    if problem.soft_b:
        primal += problem.gamma_b * float(b.sum()) ** 2
    return primal, _dual_value(problem, Lam, inner, nu)


def _member_scores(problem: OvNProblem, W: np.ndarray) -> np.ndarray:
    """``w_{k_t}ᵀφ(x_{i_t})`` for the T memberships. With features, ``W = XᵀA`` (r × K) and the scores
    take ``O(nnz(X[members]))`` (sparse) or ``O(T·r)`` (dense) instead of the n × K product ``XW``;
    without, ``W`` is the score matrix ``GA`` (n × K) itself."""
    sample, cls = problem.members
    if problem.features is None:
        return W[sample, cls]
    rows = problem.member_features
    if not sp.issparse(rows):
        return np.einsum("tj,jt->t", rows, W[:, cls])
    owner, owner_class = problem.member_nonzeros
    return np.bincount(owner, weights=rows.data * W[rows.indices, owner_class], minlength=sample.size)


def coef_from_dual(problem: OvNProblem, Lam: np.ndarray) -> np.ndarray:
    """``A = Λ S`` (so ``W = U M⁻¹`` or ``U P``).

    Parameters
    ----------
    problem : OvNProblem
        The OvN problem.
    Lam : array of shape (n, K)
        The dual variables Λ (zero outside the memberships).
    """
    return (_mask(problem) * Lam) @ problem.dual_metric


def member_scores(problem: OvNProblem, A: np.ndarray) -> np.ndarray:
    """``w_kᵀφ(x_i)`` for the T memberships ``(i, k)`` at ``W = ΦᵀA`` (no bias), in the order of
    :attr:`OvNProblem.members`.

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    A : array of shape (n, K)
        Coefficients, ``w_k = Σ_i A_ik φ(x_i)``.
    """
    product = problem.gram @ A if problem.features is None else np.asarray(problem.features.T @ A)
    return _member_scores(problem, product)


def optimal_biases(problem: OvNProblem, scores: np.ndarray) -> np.ndarray:
    """The optimal biases at fixed weights, and one canonical choice where they are not unique.

    At fixed W the primal is, in b, ``Σ_k β Σ_{i∈C_k} (t_ki − b_k)₊`` with the kinks
    ``t_ki = 1 − w_kᵀφ(x_i)``, under ``Σ_k b_k = 0`` (hard b) or plus ``γ (Σ_k b_k)²`` (soft b). Let
    ν be the multiplier of the sum (the dual's common class mass). Class k's term has slope
    ``−β·#{i : t_ki > b_k}``, so it is stationary at its (m+1)-th largest kink ``t_k,(m+1)`` when
    ``βm < ν < β(m+1)``, and anywhere on ``[t_k,(m+1), t_k,(m)]`` when ``ν = βm``: the same m for every
    class. The sums ``S(m) = Σ_k t_k,(m+1)`` fall as m grows while the sum ν asks for (0, or
    ``ν/(2γ)``) rises, so exactly one m balances them.

    At ``ν = βm`` the optimal biases form the face ``{b : t_k,(m+1) ≤ b_k ≤ t_k,(m), Σ_k b_k = s}``.
    Where W is optimal and some member's multiplier lies strictly inside ``(0, β)``, the face is a
    single point. Otherwise it can be wide, and a solver's biases are any point of it (which one moves with
    round-off). This function returns a canonical point: each b_k at the same fraction θ of the
    range ``[lo_k, hi_k]`` that b_k spans over the face, θ set by ``Σ_k b_k = s``. For two classes
    (hard b) θ = ½, the midpoint of b₁'s optimal interval. That is LIBSVM's bias of the equivalent
    binary SVM (SPEC §2.2, §3.5), and the rule of :func:`mlsvm.formulations.rank_binary.optimal_bias`.

    Parameters
    ----------
    problem : OvNProblem
        The problem data; every class needs a member (else see :func:`empty_class_solution`).
    scores : array of shape (T,)
        ``w_kᵀφ(x_i)`` for the memberships, as :func:`member_scores` returns them.
    """
    cls = problem.members[1]
    K = problem.n_classes
    counts = np.bincount(cls, minlength=K)
    if counts.min() == 0:
        raise ValueError("optimal_biases needs a member in every class; see empty_class_solution")
    order = np.lexsort((np.asarray(scores, dtype=np.float64), cls))   # class by class, kinks falling
    kinks = 1.0 - np.asarray(scores, dtype=np.float64)[order]
    smallest = int(counts.min())
    # column m of the table holds every class's m-th largest kink, ±∞ past its ends
    table = np.full((K, smallest + 2), -np.inf)
    table[:, 0] = np.inf
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    table[:, 1:smallest + 1] = kinks[starts[:, None] + np.arange(smallest)[None, :]]
    longer = counts > smallest
    table[longer, smallest + 1] = kinks[starts[longer] + smallest]
    sums = table.sum(axis=0)   # sums[m] = Σ_k t_k,(m)

    # the sum Σb that ν = βm asks for, m = 0 … smallest
    targets = problem.beta * np.arange(smallest + 1) / (2.0 * problem.gamma_b) if problem.soft_b \
        else np.zeros(smallest + 1)
    m = int(np.argmax(sums[1:] <= targets))   # the first: sums[smallest + 1] = −∞
    s = float(targets[m])
    if s > sums[m]:   # soft b only: ν = 2γ·S(m − 1) strictly between β(m − 1) and βm, one point
        return table[:, m].copy()
    low, high = table[:, m + 1], table[:, m]
    lo = np.maximum(low, s - _sum_of_others(high))
    hi = np.minimum(high, s - _sum_of_others(low))
    width = float(np.sum(hi - lo))
    theta = min(1.0, max(0.0, (s - float(lo.sum())) / width)) if width > 0 else 0.0
    return lo + theta * (hi - lo)


def with_canonical_biases(problem: OvNProblem, primal: dict, dual: dict, tol: float) -> dict:
    """``primal`` with its biases replaced by :func:`optimal_biases` at its W, unless that grades
    worse than both ``tol`` and ``primal`` itself (max of the relative gap and the scaled KKT
    residuals of :func:`evaluate` with ``dual``).

    A solver's biases (the equal-mass multipliers) are one point of the optimal face, and where the
    face is wide which point moves with round-off. The canonical point is computed from W alone.
    On a degenerate problem (a member on its margin with a zero multiplier) an interior point's Λ
    and b are accurate to about √tol only; the canonical b does not pair with that Λ, and its KKT
    residual can be far above tol (1e-5 at tol 1e-10 on the three points of tests/test_ovn_linear.py)
    though its gap is as small. The solver's certified point is kept there.

    Parameters
    ----------
    problem : OvNProblem
        The problem data; every class needs a member.
    primal : dict
        ``{"coef": A, "b": b}`` as :func:`evaluate` takes it.
    dual : dict
        ``{"Lam": Λ, "nu": ν}``.
    tol : float
        The tolerance the point is certified at.
    """
    canonical = dict(primal, b=optimal_biases(problem, member_scores(problem, primal["coef"])))

    def grade(point):
        evaluation = evaluate(problem, point, dual)
        return max(abs(evaluation.relative_gap), evaluation.max_kkt)

    canonical_grade = grade(canonical)
    return canonical if canonical_grade <= tol or canonical_grade <= grade(primal) else primal


def _sum_of_others(values: np.ndarray) -> np.ndarray:
    """``Σ_{j≠k} values_j`` for every k, where values may hold ±∞ (never both: a face's lower ends
    are < ∞ and its upper ends > −∞)."""
    finite = np.isfinite(values)
    out = float(values[finite].sum()) - np.where(finite, values, 0.0)
    for infinity in (np.inf, -np.inf):
        here = values == infinity
        out[np.count_nonzero(here) - here > 0] = infinity
    return out


def equalize_class_mass(problem: OvNProblem, Lam: np.ndarray) -> np.ndarray:
    """A dual-feasible point near ``Λ``: each class scaled down to the smallest class mass (the box
    ``[0, β]`` is kept because the scaling is ≤ 1), so its dual objective is a true lower bound.

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    Lam : array of shape (n, K)
        Dual variables ``λ_ki`` (zero off the memberships).
    """
    Lam = np.clip(_mask(problem) * Lam, 0.0, problem.beta)
    mass = Lam.sum(axis=0)
    target = float(mass.min()) if mass.size else 0.0
    scale = np.divide(target, mass, out=np.zeros_like(mass), where=mass > 0)
    return Lam * scale[None, :]


def empty_class_solution(problem: OvNProblem):
    """Closed-form optimum when some class has no member, or ``None``. Then ``ν = 0``, ``Λ = 0``,
    ``W = 0``; biases ``b_k = 1`` on non-empty classes and the empty ones share ``−(#non-empty)``
    so that ``Σ b = 0`` (optimal for soft b too). Primal = dual = 0.

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    """
    counts = np.asarray(problem.Y).sum(axis=0)
    empty = counts == 0
    if not np.any(empty):
        return None
    b = np.where(empty, -float(np.count_nonzero(~empty)) / np.count_nonzero(empty), 1.0)
    n, K = problem.Y.shape
    return np.zeros((n, K)), b, np.zeros((n, K)), 0.0


def dual_qp(problem: OvNProblem) -> dict:
    """The dual as the standard-form QP of :func:`qp_residuals` over ``x = (λ_members, ν)``:
    minimise ``½xᵀPx + qᵀx`` with ``P = [[S_kl G_ij], p]`` (``p = 1/(2γ)`` soft b, else 0),
    ``q = (−1, 0)``, equalities ``Σ_{i∈C_k} λ_ki − ν = 0`` (multipliers: the biases ``b_k``),
    bounds ``0 ≤ λ ≤ β`` and the implied ``0 ≤ ν ≤ β·min_k |C_k|``.

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    """
    sample, cls = problem.members
    T, K = sample.size, problem.n_classes
    P = np.zeros((T + 1, T + 1))
    P[:T, :T] = problem.gram_matrix[np.ix_(sample, sample)] * problem.dual_metric[np.ix_(cls, cls)]
    P[T, T] = 1.0 / (2.0 * problem.gamma_b) if problem.soft_b else 0.0
    A = np.zeros((K, T + 1))
    A[cls, np.arange(T)] = 1.0
    A[:, T] = -1.0
    counts = np.asarray(problem.Y).sum(axis=0)
    ub = np.append(np.full(T, problem.beta), problem.beta * float(counts.min()))
    return {"P": P, "q": np.append(-np.ones(T), 0.0), "A": A, "b": np.zeros(K),
            "lb": np.zeros(T + 1), "ub": ub}


def _dual_qp_operator(problem: OvNProblem) -> dict:
    """:func:`dual_qp` with ``P`` as a :class:`~scipy.sparse.linalg.LinearOperator` and ``A`` sparse:
    ``P (λ, ν) = ((G Λ S)_{i_t k_t}, p ν)`` through the Gram matrix (or ``F(FᵀΛ)`` with the features),
    so grading a point needs ``O(nK + T)`` memory besides G, never the (T+1)² matrix (320 MB on
    yeast, 3.4 GiB at n = 4000)."""
    sample, cls = problem.members
    T, K = sample.size, problem.n_classes
    n = problem.Y.shape[0]
    S = problem.dual_metric
    nu_weight = 1.0 / (2.0 * problem.gamma_b) if problem.soft_b else 0.0

    def product(x):
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        Lam = np.zeros((n, K))
        Lam[sample, cls] = x[:T]
        if problem.features is not None:   # X((XᵀΛ) S) with the sparse Λ
            GLamS = np.asarray(problem.features @ (problem.features_times_dual(Lam) @ S))
        else:
            GLamS = problem.gram @ Lam @ S
        return np.append(GLamS[sample, cls], nu_weight * x[T])

    P = LinearOperator((T + 1, T + 1), matvec=product, rmatvec=product, dtype=np.float64)
    A = csr_matrix((np.ones(T), (cls, np.arange(T))), shape=(K, T + 1)).tolil()
    A[:, T] = -1.0
    counts = np.asarray(problem.Y).sum(axis=0)
    ub = np.append(np.full(T, problem.beta), problem.beta * float(counts.min()))
    return {"P": P, "q": np.append(-np.ones(T), 0.0), "A": A.tocsr(), "b": np.zeros(K),
            "lb": np.zeros(T + 1), "ub": ub}


def dual_metric_root(problem: OvNProblem) -> np.ndarray:
    """``R_S`` with ``R_S R_Sᵀ = S`` (the dual metric), from its eigen-decomposition (S is PSD; the
    centring matrix of hard w is singular).

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    """
    eigenvalues, vectors = np.linalg.eigh(problem.dual_metric)
    return vectors * np.sqrt(np.maximum(eigenvalues, 0.0))


def dual_metric_coefficients(problem: OvNProblem) -> tuple[float, float]:
    """``(s₀, s₁)`` with ``S = s₀I + s₁11ᵀ``: soft w ``s₀ = 1/(1−α)``, ``s₁ = −α/((1−α)(1−α+Kα))``
    (``M⁻¹``); hard w ``s₀ = 1``, ``s₁ = −1/K`` (the centring matrix; K = 1: ``S = 0``).

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    """
    S = problem.dual_metric
    s1 = float(S[0, 1]) if S.shape[0] > 1 else 0.0
    return float(S[0, 0]) - s1, s1


def dual_quadratic_factor(problem: OvNProblem) -> np.ndarray | None:
    """``Z`` (T × K·r) with ``ZZᵀ`` = the λ-block of :func:`dual_qp` (``S_kl ⟨f_i, f_j⟩``), from the
    explicit ``features`` (rows ``kron(R_S[k], f_i)``); ``None`` without features.

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    """
    if problem.features is None:
        return None
    sample, cls = problem.members
    Z = dual_metric_root(problem)[cls][:, :, None] * problem.factor()[sample][:, None, :]
    return Z.reshape(sample.size, -1)


def kkt_residuals(problem: OvNProblem, Lam: np.ndarray, b: np.ndarray, nu: float | None = None,
                  A: np.ndarray | None = None) -> dict[str, float]:
    """Scaled KKT residuals of :func:`dual_qp` at ``(Λ, ν)`` with the biases ``b`` as the equality
    multipliers; box multipliers are the implied ones ``z = −(Px + q + Aᵀb)``. With the primal
    coefficients ``A`` given, ``hard_constraints`` adds the violation of ``Σb = 0`` / ``Σ_k A_ik = 0``.

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    Lam : array of shape (n, K)
        Dual variables ``λ_ki`` (zero off the memberships).
    b : array of shape (K,)
        Biases.
    nu : float or None
        Common class mass ν of the equal-mass constraints (None: computed from Lam).
    A : array of shape (n, K) or None
        Primal coefficients (default: ``Lam @ S``).
    """
    sample, cls = problem.members
    Lam = _mask(problem) * Lam
    nu = float(Lam.sum(axis=0).mean()) if nu is None else float(nu)
    qp = _dual_qp_operator(problem)
    x = np.append(Lam[sample, cls], nu)
    gradient = qp["P"] @ x + qp["q"] + qp["A"].T @ b
    residuals = qp_residuals(qp["P"], qp["q"], x, A=qp["A"], b=qp["b"], y=np.asarray(b, dtype=float),
                             lb=qp["lb"], ub=qp["ub"], z_box=-gradient)
    if A is not None:
        violation = abs(float(b.sum())) if not problem.soft_b else 0.0
        if problem.w_constraint == "hard":
            violation = max(violation, float(np.max(np.abs(A.sum(axis=1)))))
        residuals["hard_constraints"] = violation / (1.0 + max(np.max(np.abs(b)), np.max(np.abs(A))))
    return residuals


def primal_infeasibility(problem: OvNProblem, A: np.ndarray, b: np.ndarray) -> float:
    """Scaled violation of the primal point's own constraints: hard w, ``Σ_k a_ki = 0`` for every
    i (``Σ_k w_k = 0`` in the kernel form), as ``‖A1‖∞ / (1 + ‖A‖∞)``; hard b, ``Σ_k b_k = 0``, as
    ``|Σ b| / (1 + ‖b‖∞)``. 0 for the soft variants.

    Parameters
    ----------
    problem : OvNProblem
        The problem data (validated formulation object).
    A : array of shape (n, K)
        Coefficients of ``W = ΦᵀA``.
    b : array of shape (K,)
        Biases.
    """
    violation = 0.0
    if problem.w_constraint == "hard":
        violation = float(np.max(np.abs(A.sum(axis=1)))) / (1.0 + float(np.max(np.abs(A))))
    if problem.b_constraint == "hard":
        violation = max(violation, abs(float(b.sum())) / (1.0 + float(np.max(np.abs(b)))))
    return violation


def evaluate(problem: OvNProblem, primal: dict, dual: dict | None = None) -> Evaluation:
    """Grade a point: the canonical primal objective at ``{"coef": A, "b": b}`` (``W = ΦᵀA``) and,
    with a dual point ``{"Lam": Λ, "nu": ν}`` (``ν`` may be None: the mean class mass), the dual
    objective and the scaled KKT residuals of :func:`dual_qp` with the biases as the equal-mass
    multipliers, plus ``hard_constraints`` (:func:`kkt_residuals`). ``extra`` holds the training
    scores ``G A + 1bᵀ``.

    Parameters
    ----------
    problem : OvNProblem
        The problem the point is graded on.
    primal : dict
        The primal point ``{"coef": A (n, K), "b": (K,)}``, or with the linear kernel's features
        ``{"W": (d, K), "b": (K,)}`` (any weights; hard w checks ``Σ_k w_k = W1 = 0``).
    dual : dict or None, optional
        The dual point ``{"Lam": Λ, "nu": ν}``; None grades the primal only.
    """
    b = np.asarray(primal["b"], dtype=np.float64)
    W = linear_weights(problem.features, primal, problem.n_classes)
    if W is None:
        A = np.asarray(primal["coef"], dtype=np.float64)
        inner, GA = problem.gram_quadratic(A)
        scores = GA + b[None, :]
        value = _objective(problem, inner, scores, b)
    else:   # the row sums of W are Σ_k w_k, as those of A are in the kernel form: the same checks
        A = W
        scores = np.asarray(problem.features @ W) + b[None, :]
        value = _objective(problem, W.T @ W, scores, b)
    evaluation = Evaluation(value, extra={"scores": scores}, infeasibility=primal_infeasibility(problem, A, b))
    if dual is not None:
        Lam, nu = np.asarray(dual["Lam"], dtype=np.float64), dual.get("nu")
        evaluation.dual_objective = dual_objective(problem, Lam, nu)
        evaluation.kkt = kkt_residuals(problem, Lam, b, nu, A=A)
    return evaluation


def solution_from_cvxpy(problem: OvNProblem, cvx, variables) -> tuple[dict, dict]:
    """``(primal, dual)`` of a solved :func:`cvxpy_dual`: Λ clipped to its box ``[0, β]``, the
    biases read from the multipliers of the equal-mass rows (its last constraint), ``A = ΛS``.

    Parameters
    ----------
    problem : OvNProblem
        The problem :func:`cvxpy_dual` was built from.
    cvx : cvxpy.Problem
        The solved CVXPY problem (first element returned by :func:`cvxpy_dual`).
    variables : dict
        Its variables (second element returned by :func:`cvxpy_dual`).
    """
    Lam = np.clip(np.asarray(variables["Lam"].value, dtype=np.float64), 0.0, problem.beta)
    b = np.asarray(cvx.constraints[-1].dual_value, dtype=np.float64).reshape(problem.n_classes)
    nu = float(variables["nu"].value)
    return {"coef": coef_from_dual(problem, Lam), "b": b}, {"Lam": Lam, "nu": nu}
