"""SMSVM (3.10) and SM3L (4.22) of Ganu, Shevade & Sundararajan for a basis set J (SPEC §2.3).

No biases. With Gram matrix ``K`` (n × n), basis ``J`` (d indices; ``None`` = all n points),
``K_J = K[:, J]``, ``K_JJ = K[J][:, J]``, coefficients ``A`` (d × k), scores ``F = K_J A``::

    SMSVM (3.10):  min_A  λ/2 Σ_r A_rᵀ K_JJ A_r  +  ½ Σ_i Σ_{r≠y_i} max(0, 1 + F_ir − F_{i,y_i})²
    SM3L  (4.22):  min_A  λ/2 tr(R⁻¹ Aᵀ K_JJ A)  +    Σ_i Σ_r   max(0, 1 − y_ir F_ir)²

(``y_ir = ±1``; SM3L has no ½ on the loss, as in the paper; ``R = PᵀP``, ``R = I`` by default;
SMSVM is the case ``R = I``.) Both are written ``min λ/2 tr(R⁻¹AᵀK_JJA) + c Σ_{(i,r)∈Ω} ξ_ir²``,
``ξ ≥ 1 + T(F)``, with the linear margin map ``T`` and pair set Ω of :class:`MarginOperator`
(SM3L: ``T(F) = −Ys∘F``, Ω all, ``c = 1``; SMSVM: ``T(F)_ir = F_ir − F_{i,y_i}``, Ω = {r ≠ y_i},
``c = ½``).

Dual (derived here; the paper gives none). With multipliers ``μ ≥ 0`` on Ω, ``H = Tᵀ(μ)`` and the
Nyström matrix ``Q_J = K_J K_JJ⁺ K_Jᵀ`` (``= K`` for J = all points)::

    max_μ  Σ μ − Σ μ²/(4c) − 1/(2λ) tr(Hᵀ Q_J H R)           (μ = 0 outside Ω)

Minimising the Lagrangian in ξ gives ``ξ = μ/(2c)`` and in A gives ``K_JJ A = −(1/λ) K_Jᵀ H R``
(``K_Jᵀ H`` lies in the range of ``K_JJ`` because K is PSD), so ``A = −(1/λ) K_JJ⁺ K_Jᵀ H R`` and
``F = −(1/λ) Q_J H R``. At the optimum ``μ = 2c·max(0, 1 + T(F))``. For SMSVM the rows of H sum
to 0, hence ``Σ_r w_r = 0``. SM3L's dual needs only R, never P.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import cvxpy as cp
import numpy as np
from scipy.sparse import issparse

from mlsvm.formulations.evaluation import Evaluation, inf_norm, linear_weights

__all__ = ["MODELS", "SparseMMProblem", "MarginOperator", "KernelColumns", "gram_source", "nystrom_factor", "cvxpy_primal",
           "cvxpy_dual", "evaluate", "solution_from_cvxpy", "primal_objective", "dual_objective",
           "multipliers_from_primal", "coef_from_dual", "kkt_residuals", "check_correlation"]

MODELS = ("smsvm", "sm3l")
#: eigenvalues of K_JJ below this fraction of the largest are treated as 0 (pseudo-inverse)
PINV_RTOL = 1e-12


def check_correlation(R=None, P=None, n_labels: int = 1) -> np.ndarray:
    """Validate the label prior and return R (k × k, symmetric positive definite).

    ``P`` (invertible, k × k) gives ``R = PᵀP``; ``R`` is taken as is; neither gives ``I``.

    Parameters
    ----------
    R : array of shape (q, q) or None
        Label-correlation matrix ``R = PᵀP`` of SM3L (symmetric positive definite); None means the
        identity.
    P : array of shape (q, q) or None
        Label-correlation prior with ``R = PᵀP`` (give R or P, not both).
    n_labels : int
        Number of labels q.
    """
    if R is not None and P is not None:
        raise ValueError("give either R or P (R = PᵀP), not both")
    if P is not None:
        P = np.asarray(P, dtype=np.float64)
        if P.shape != (n_labels, n_labels) or not np.all(np.isfinite(P)):
            raise ValueError(f"P must be a finite ({n_labels}, {n_labels}) matrix; got shape {P.shape}")
        singular = np.linalg.svd(P, compute_uv=False)
        if singular[-1] <= 1e-12 * max(singular[0], 1e-300):
            raise ValueError(f"P is singular (smallest singular value {singular[-1]:.3g}); "
                             "the label prior must be an invertible matrix")
        return P.T @ P
    if R is None:
        return np.eye(n_labels)
    R = np.asarray(R, dtype=np.float64)
    if R.shape != (n_labels, n_labels) or not np.all(np.isfinite(R)):
        raise ValueError(f"R must be a finite ({n_labels}, {n_labels}) matrix; got shape {R.shape}")
    if np.max(np.abs(R - R.T)) > 1e-10 * max(1.0, np.max(np.abs(R))):
        raise ValueError("R must be symmetric positive definite; it is not symmetric")
    try:
        np.linalg.cholesky(R)
    except np.linalg.LinAlgError:
        raise ValueError(f"R must be symmetric positive definite; smallest eigenvalue "
                         f"{np.linalg.eigvalsh(R)[0]:.3g}") from None
    return 0.5 * (R + R.T)


class KernelColumns:
    """The training Gram matrix ``K = k(X, X)`` by columns, computed on demand from ``X`` (dense or
    scipy sparse, never densified): the greedy solver reads only the ``|J| + κ`` columns of the basis
    and the candidates, so the n × n matrix (190 MB for bibtex's 4880 rows) is never formed.

    ``columns(idx)`` is ``K[:, idx]`` (n × m, dense), ``block(rows, cols)`` is ``K[rows][:, cols]``
    (the symmetric kernel evaluation when ``rows`` equals ``cols``), ``diagonal()`` the ``k(x_i, x_i)``
    (exact: 1 for RBF, ``‖x_i‖²`` linear, ``(γ‖x_i‖² + c₀)^degree`` poly). The last ``columns`` request
    is kept, because grading a fit reads ``K_J`` several times.

    Parameters
    ----------
    kernel : mlsvm.kernels.Kernel
        The resolved kernel (``gamma`` a number).
    X : array or scipy sparse matrix of shape (n, d)
        The training features.
    """

    def __init__(self, kernel, X):
        self.kernel = kernel
        self.X = X.tocsr() if issparse(X) else np.asarray(X, dtype=np.float64)
        self.shape = (X.shape[0], X.shape[0])
        self._last = (None, None)

    def diagonal(self) -> np.ndarray:
        """``k(x_i, x_i)`` for every training point, without any column."""
        X = self.X
        squared = (np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel() if issparse(X)
                   else np.einsum("ij,ij->i", X, X))
        if self.kernel.name == "rbf":
            return np.ones(self.shape[0])
        if self.kernel.name == "poly":
            return (self.kernel.gamma * squared + self.kernel.coef0) ** self.kernel.degree
        return squared

    def columns(self, idx) -> np.ndarray:
        """``K[:, idx]`` (n × len(idx)).

        Parameters
        ----------
        idx : array of int
            Training points whose columns are wanted.
        """
        idx = np.asarray(idx, dtype=int)
        key = idx.tobytes()
        if self._last[0] != key:
            self._last = (key, self.kernel(self.X, self.X[idx]))
        return self._last[1]

    def block(self, rows, cols) -> np.ndarray:
        """``K[rows][:, cols]``; symmetric (and with the exact diagonal) when ``rows`` equals ``cols``.

        Parameters
        ----------
        rows : array of int
            Row points.
        cols : array of int
            Column points.
        """
        rows, cols = np.asarray(rows, dtype=int), np.asarray(cols, dtype=int)
        if np.array_equal(rows, cols):
            return self.kernel(self.X[rows])
        return self.kernel(self.X[rows], self.X[cols])


class _DenseColumns:
    """A Gram matrix held in memory, read through the :class:`KernelColumns` methods."""

    def __init__(self, gram):
        self.gram, self.shape = gram, gram.shape

    def diagonal(self):
        return np.diag(self.gram).copy()

    def columns(self, idx):
        return self.gram[:, np.asarray(idx, dtype=int)]

    def block(self, rows, cols):
        return self.gram[np.ix_(np.asarray(rows, dtype=int), np.asarray(cols, dtype=int))]


def gram_source(gram):
    """``gram`` read by columns: a :class:`KernelColumns` as is, an (n, n) array through the same
    ``columns``/``block``/``diagonal`` methods.

    Parameters
    ----------
    gram : array of shape (n, n) or KernelColumns
        The training Gram matrix, held or computed on demand.
    """
    return gram if isinstance(gram, (KernelColumns, _DenseColumns)) else _DenseColumns(np.asarray(gram))


@dataclass(frozen=True)
class MarginOperator:
    """The loss ``weight · Σ_Ω max(0, 1 + T(F))²`` of one model, T linear, Ω = ``mask``.

    Parameters
    ----------
    model : {"sm3l", "smsvm"}
        Which margin map.
    Y : ndarray
        SM3L: (n, q) indicator; SMSVM: (n,) class indices.
    """

    model: str
    Y: np.ndarray  # (n, k) {0,1}
    signed: np.ndarray = field(init=False, repr=False)
    label: np.ndarray = field(init=False, repr=False)
    mask: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        Y = np.asarray(self.Y)
        object.__setattr__(self, "signed", 2.0 * Y - 1.0)
        if self.model == "smsvm":
            if not np.all(Y.sum(axis=1) == 1):
                raise ValueError("SMSVM needs exactly one class per sample (a one-hot Y)")
            object.__setattr__(self, "label", np.argmax(Y, axis=1))
            object.__setattr__(self, "mask", Y == 0)
        else:
            object.__setattr__(self, "label", np.zeros(0, dtype=int))
            object.__setattr__(self, "mask", np.ones(Y.shape, dtype=bool))

    @property
    def weight(self) -> float:
        return 0.5 if self.model == "smsvm" else 1.0

    @cached_property
    def negated_signs_t(self) -> np.ndarray:
        """``−Ysᵀ`` (k × n, C order): SM3L's ``Tᵀ`` label by label, which the separable Newton loop and
        the candidate scoring of a greedy run read at every addition (formed once per operator)."""
        return -np.ascontiguousarray(self.signed.T)

    def forward(self, F: np.ndarray) -> np.ndarray:
        """``T(F)``: SM3L ``−Ys∘F``; SMSVM ``F_ir − F_{i,y_i}`` (0 at r = y_i)."""
        if self.model == "sm3l":
            return -self.signed * F
        return F - F[np.arange(F.shape[0]), self.label][:, None]

    def adjoint(self, V: np.ndarray) -> np.ndarray:
        """``Tᵀ(V)`` for V zero outside Ω."""
        V = np.where(self.mask, V, 0.0)
        if self.model == "sm3l":
            return -self.signed * V
        out = V.copy()
        out[np.arange(V.shape[0]), self.label] -= V.sum(axis=1)
        return out

    def column_terms(self, F: np.ndarray, r: int, column: np.ndarray):
        """``(u, e)``: the loss terms ``max(0, u + t e)²`` that change when column r of the scores
        moves, ``F[..., :, r] += t · column`` (leading batch axes allowed). SM3L: the entries of
        column r; SMSVM: (i, r) for y_i ≠ r and (i, p ≠ r) for y_i = r."""
        if self.model == "sm3l":
            return 1.0 - self.signed[:, r] * F[..., :, r], -self.signed[:, r] * column
        other = np.flatnonzero(self.label != r)
        own = np.flatnonzero(self.label == r)
        rest = np.delete(np.arange(F.shape[-1]), r)
        u_other = 1.0 + F[..., other, r] - F[..., other, self.label[other]]
        u_own = 1.0 + F[..., own, :][..., rest] - F[..., own, r][..., None]
        e_own = np.broadcast_to(-column[..., own, None], u_own.shape)
        flat = u_own.shape[:-2] + (-1,)
        return (np.concatenate([u_other, u_own.reshape(flat)], axis=-1),
                np.concatenate([column[..., other], e_own.reshape(flat)], axis=-1))

    def candidate_terms(self, F: np.ndarray, r: int, columns: np.ndarray, coef: np.ndarray):
        """:meth:`column_terms` for a batch of candidates c without a copy of the scores per
        candidate: candidate c's scores are ``F + columns[c] ⊗ coef[c]`` (its classes before r
        already moved, ``coef[:, r:] = 0``), and column r moves by ``t · columns[c]``. Returns
        ``(u, e)``, shapes (κ, m) or, for SM3L, ``u`` (n,) shared by all candidates.

        Parameters
        ----------
        F : array of shape (n, k)
            The current scores.
        r : int
            The class that moves.
        columns : array of shape (κ, n)
            The candidates' kernel columns.
        coef : array of shape (κ, k)
            The candidates' coefficients so far (0 from class r on).
        """
        if self.model == "sm3l":   # column r of the scores has not moved yet: u is the same for all
            return 1.0 - self.signed[:, r] * F[:, r], -self.signed[:, r] * columns
        other = np.flatnonzero(self.label != r)
        own = np.flatnonzero(self.label == r)
        rest = np.delete(np.arange(F.shape[1]), r)
        # (i, r), y_i ≠ r: 1 + S[i, r] − S[i, y_i], with S[i, r] = F[i, r] (coef[:, r] = 0)
        u_other = ((1.0 + F[other, r] - F[other, self.label[other]])[None, :]
                   - columns[:, other] * coef[:, self.label[other]])
        # (i, p), y_i = r, p ≠ r: 1 + S[i, p] − S[i, r]
        u_own = ((1.0 + F[own][:, rest] - F[own, r][:, None])[None]
                 + columns[:, own, None] * coef[:, None, rest])
        e_own = np.broadcast_to(-columns[:, own, None], u_own.shape)
        count = columns.shape[0]
        return (np.concatenate([u_other, u_own.reshape(count, -1)], axis=1),
                np.concatenate([columns[:, other], e_own.reshape(count, -1)], axis=1))

    def slack(self, F: np.ndarray) -> np.ndarray:
        """``ξ = max(0, 1 + T(F))`` on Ω, 0 elsewhere."""
        return np.where(self.mask, np.maximum(0.0, 1.0 + self.forward(F)), 0.0)


@dataclass(frozen=True)
class SparseMMProblem:
    """One SMSVM / SM3L instance: full training Gram matrix, labels, λ, basis J and R.

    Parameters
    ----------
    gram : array of shape (n, n) or KernelColumns
        Gram matrix, held or computed by columns on demand from X.
    Y : ndarray
        SM3L: (n, q) indicator; SMSVM: (n,) class indices.
    lam : float
        Regularisation weight λ > 0.
    model : {"sm3l", "smsvm"}
        Which model.
    basis : array of int or None
        Basis set J (None: all training points).
    R : array of shape (q, q) or None
        Label-correlation matrix ``R = PᵀP`` of SM3L (symmetric positive definite); None means the
        identity.
    features : array of shape (n, d) or None, optional
        The linear kernel's features X (``gram = XXᵀ``), so that :func:`evaluate` can grade weights
        ``{"W"}`` on the full basis.
    """

    gram: np.ndarray
    Y: np.ndarray
    lam: float
    model: str = "sm3l"
    basis: np.ndarray | None = None
    R: np.ndarray | None = None
    features: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}; got {self.model!r}")
        if not self.lam > 0:
            raise ValueError(f"lam must be > 0; got {self.lam!r}")
        basis = np.arange(self.gram.shape[0]) if self.basis is None else np.asarray(self.basis, dtype=int)
        object.__setattr__(self, "basis", basis)
        object.__setattr__(self, "R", check_correlation(self.R, None, self.Y.shape[1]))
        if self.model == "smsvm" and not np.allclose(self.R, np.eye(self.Y.shape[1])):
            raise ValueError("SMSVM has no label prior: R must be the identity")
        object.__setattr__(self, "margins", MarginOperator(self.model, self.Y))

    @property
    def K_J(self) -> np.ndarray:
        return gram_source(self.gram).columns(self.basis)

    @property
    def K_JJ(self) -> np.ndarray:
        return gram_source(self.gram).block(self.basis, self.basis)

    @property
    def R_inv(self) -> np.ndarray:
        return np.linalg.inv(self.R)


def nystrom_factor(problem: SparseMMProblem):
    """``(Z, to_coef)``: ``Z = K_J V s^{-1/2}`` (n × r) with ``Z Zᵀ = Q_J``, and ``to_coef`` (d × r)
    mapping coordinates ``C`` (with ``F = Z C``, ``Σ‖w_r‖²``-metric ``CᵀC``) to ``A = to_coef C``.

    Parameters
    ----------
    problem : SparseMMProblem
        The problem data (validated formulation object).
    """
    s, V = np.linalg.eigh(problem.K_JJ)
    keep = s > PINV_RTOL * max(s[-1], 0.0)
    to_coef = V[:, keep] / np.sqrt(s[keep])
    return problem.K_J @ to_coef, to_coef


def _is_full_basis(problem: SparseMMProblem) -> bool:
    """J = all training points, in order (the full models)."""
    n = problem.gram.shape[0]
    return problem.basis.size == n and np.array_equal(problem.basis, np.arange(n))


def _full_times(problem: SparseMMProblem, M: np.ndarray) -> np.ndarray:
    """``K M`` on the full basis, where ``K_J = K_JJ = K`` (symmetric): with the linear kernel's
    features ``X (Xᵀ M)``, so no n × n matrix is formed (bibtex: 4880² = 190 MB); with a held Gram
    matrix the product itself, without the copy that indexing K by J makes."""
    if problem.features is not None:
        return np.asarray(problem.features @ np.asarray(problem.features.T @ M))
    source = gram_source(problem.gram)
    gram = source.gram if isinstance(source, _DenseColumns) else source.columns(problem.basis)
    return gram @ M


def _times_K_J(problem: SparseMMProblem, M: np.ndarray) -> np.ndarray:
    """``K_J M`` (n × m) for M of shape (|J|, m)."""
    return _full_times(problem, M) if _is_full_basis(problem) else problem.K_J @ M


def _times_K_J_T(problem: SparseMMProblem, V: np.ndarray) -> np.ndarray:
    """``K_Jᵀ V`` (|J| × m) for V of shape (n, m)."""
    return _full_times(problem, V) if _is_full_basis(problem) else problem.K_J.T @ V


def _times_K_JJ(problem: SparseMMProblem, M: np.ndarray) -> np.ndarray:
    """``K_JJ M`` for M of shape (|J|, m)."""
    return _full_times(problem, M) if _is_full_basis(problem) else problem.K_JJ @ M


def _weighted_norm(matrix, R) -> cp.Expression:
    """``tr(matrix R matrixᵀ)`` as ``‖matrix L‖²_F`` with ``R = L Lᵀ``."""
    return cp.sum_squares(matrix @ np.linalg.cholesky(R))


def cvxpy_primal(problem: SparseMMProblem):
    """CVXPY primal in the coordinates ``C`` of :func:`nystrom_factor` (then ``A = to_coef C``).

    ``λ/2 tr(R⁻¹AᵀK_JJA) = λ/2 tr(C R⁻¹ Cᵀ)``. Returns ``(cp.Problem, {"C", "to_coef"})``.

    Parameters
    ----------
    problem : SparseMMProblem
        The problem data (validated formulation object).
    """
    Z, to_coef = nystrom_factor(problem)
    ops = problem.margins
    C = cp.Variable((Z.shape[1], problem.Y.shape[1]))
    F = Z @ C
    if problem.model == "sm3l":
        margin = 1 - cp.multiply(ops.signed, F)
    else:
        true_score = cp.sum(cp.multiply(problem.Y, F), axis=1, keepdims=True)
        margin = 1 + F - true_score @ np.ones((1, F.shape[1]))
    rows, cols = np.nonzero(ops.mask)
    xi = cp.Variable(rows.size)  # slack on Ω only: ξ ≥ 0, ξ ≥ 1 + T(F)
    constraints = [xi >= 0, xi >= margin[rows, cols]]
    objective = problem.lam / 2 * _weighted_norm(C, problem.R_inv) + ops.weight * cp.sum_squares(xi)
    return cp.Problem(cp.Minimize(objective), constraints), {"C": C, "to_coef": to_coef}


def cvxpy_dual(problem: SparseMMProblem):
    """CVXPY dual as a minimisation of the negated dual objective; the dual optimum is
    ``−problem.value``. Returns ``(cp.Problem, {"mu": μ})`` with μ (n × k), 0 outside Ω.

    Parameters
    ----------
    problem : SparseMMProblem
        The SMSVM / SM3L problem to build the derived dual of (on ``problem.basis``).
    """
    Z, _ = nystrom_factor(problem)
    ops = problem.margins
    n, k = problem.Y.shape
    mu = cp.Variable((n, k))
    if problem.model == "sm3l":
        H = -cp.multiply(ops.signed, mu)
    else:
        masked = cp.multiply(ops.mask, mu)
        H = masked - cp.multiply(problem.Y, cp.sum(masked, axis=1, keepdims=True) @ np.ones((1, k)))
    quadratic = _weighted_norm(Z.T @ H, problem.R) / (2 * problem.lam)
    objective = cp.sum_squares(mu) / (4 * ops.weight) + quadratic - cp.sum(mu)
    constraints = [mu >= 0]
    outside = np.flatnonzero(~ops.mask.ravel())
    if problem.model == "smsvm" and outside.size:
        # μ = 0 off Ω, one row per fixed entry: writing multiply(~mask, μ) == 0 also adds the
        # empty rows 0 = 0, a rank-deficient equality block on which Clarabel can fail
        constraints.append(cp.vec(mu, order="C")[outside] == 0)
    return cp.Problem(cp.Minimize(objective), constraints), {"mu": mu}


def primal_objective(problem: SparseMMProblem, A: np.ndarray) -> float:
    """(3.10) / (4.22) at coefficients ``A`` (d × k) on the basis J.

    Parameters
    ----------
    problem : SparseMMProblem
        The problem data (validated formulation object).
    A : array of shape (n_basis, k)
        Coefficients on the basis.
    """
    ops = problem.margins
    xi = ops.slack(_times_K_J(problem, A))
    regularizer = 0.5 * problem.lam * float(np.sum(_times_K_JJ(problem, A) * (A @ problem.R_inv)))
    return regularizer + ops.weight * float(np.sum(xi * xi))


def dual_objective(problem: SparseMMProblem, mu: np.ndarray) -> float:
    """The derived dual (to maximise) at ``mu`` (n × k).

    Parameters
    ----------
    problem : SparseMMProblem
        The problem data (validated formulation object).
    mu : array of shape (n, k)
        Multipliers μ ≥ 0 on Ω.
    """
    ops = problem.margins
    mu = np.where(ops.mask, mu, 0.0)
    H = ops.adjoint(mu)
    if _is_full_basis(problem):   # Q_J = K K⁺ K = K: tr(Hᵀ K H R), no eigendecomposition of K
        quadratic = float(np.sum(_times_K_J(problem, H) * (H @ problem.R)))
    else:
        Z, _ = nystrom_factor(problem)
        ZtH = Z.T @ H
        quadratic = float(np.sum((ZtH @ problem.R) * ZtH))
    return float(mu.sum() - np.sum(mu * mu) / (4 * ops.weight) - quadratic / (2 * problem.lam))


def multipliers_from_primal(problem: SparseMMProblem, A: np.ndarray) -> np.ndarray:
    """The KKT multipliers a primal point implies: ``μ = 2c·ξ``.

    Parameters
    ----------
    problem : SparseMMProblem
        The problem data (validated formulation object).
    A : array of shape (n_basis, k)
        Coefficients on the basis.
    """
    return 2 * problem.margins.weight * problem.margins.slack(_times_K_J(problem, A))


def coef_from_dual(problem: SparseMMProblem, mu: np.ndarray) -> np.ndarray:
    """The dual → primal map ``A = −(1/λ) K_JJ⁺ K_Jᵀ Tᵀ(μ) R`` (the minimum-norm A).

    Parameters
    ----------
    problem : SparseMMProblem
        The SMSVM / SM3L problem (its basis J).
    mu : array of shape (n, k)
        The dual variables μ (0 outside Ω).
    """
    Z, to_coef = nystrom_factor(problem)
    return -(to_coef @ (Z.T @ problem.margins.adjoint(mu))) @ problem.R / problem.lam


def kkt_residuals(problem: SparseMMProblem, A: np.ndarray, mu: np.ndarray | None = None) -> dict[str, float]:
    """Scaled ∞-norm KKT residuals at ``(A, μ)`` (μ defaults to the implied multipliers).

    * ``stationarity``: ``λ K_JJ A R⁻¹ + K_Jᵀ Tᵀ(μ)`` (gradient of the Lagrangian in A)
    * ``multiplier``: ``μ − 2c ξ(A)`` (stationarity in ξ, which also gives complementarity)
    * ``dual``: ``(−μ)₊`` and μ outside Ω;  ``gap``: primal − dual, relative.

    Each is divided by ``1 +`` the largest ∞-norm of the terms it is made of.

    Parameters
    ----------
    problem : SparseMMProblem
        The problem data (validated formulation object).
    A : array of shape (n_basis, k)
        Coefficients on the basis.
    mu : ndarray or None
        Multipliers on Ω (None: the implied ones).
    """
    implied = multipliers_from_primal(problem, A)
    mu = implied if mu is None else np.asarray(mu, dtype=np.float64)
    regular = problem.lam * _times_K_JJ(problem, A) @ problem.R_inv
    coupling = _times_K_J_T(problem, problem.margins.adjoint(mu))
    return _kkt_from_terms(problem, regular, coupling, implied, mu, primal_objective(problem, A))


def _kkt_from_terms(problem, regular, coupling, implied, mu, primal) -> dict[str, float]:
    """The residuals of :func:`kkt_residuals` from the two terms of the Lagrangian's gradient (in A
    or, for the linear kernel's weights, in W), the implied and given multipliers and the primal value."""
    ops = problem.margins
    dual = dual_objective(problem, mu)
    return {
        "stationarity": inf_norm(regular + coupling) / (1 + max(inf_norm(regular), inf_norm(coupling))),
        "multiplier": inf_norm(mu - implied) / (1 + max(inf_norm(mu), inf_norm(implied))),
        "dual": max(inf_norm(np.maximum(-mu, 0.0)), inf_norm(np.where(ops.mask, 0.0, mu))) / (1 + inf_norm(mu)),
        "gap": abs(primal - dual) / max(1.0, abs(primal), abs(dual)),
    }


def on_basis(problem: SparseMMProblem, basis) -> SparseMMProblem:
    """The same problem on the basis J a solver chose (``problem.basis`` when ``basis`` is None)."""
    return problem if basis is None else replace(problem, basis=np.asarray(basis, dtype=int))


def evaluate(problem: SparseMMProblem, primal: dict, dual: dict | None = None) -> Evaluation:
    """Grade a point: (3.10) / (4.22) at ``{"coef": A}`` on the basis ``primal["basis"]`` (default
    ``problem.basis``; the greedy solver chooses J) and, with ``{"mu": μ}``, the derived dual on that
    basis and :func:`kkt_residuals`. ``extra`` holds the training scores ``K_J A`` and the problem on
    the basis used.

    Parameters
    ----------
    problem : SparseMMProblem
        The problem the point is graded on.
    primal : dict
        The primal point ``{"coef": A (|J|, k)}``, optionally with ``"basis"`` (the J it lives on;
        default ``problem.basis``).
        With the linear kernel's features also the weights ``{"W": (d, k)}`` of the full model
        (the basis of all training points; any weights, not only those in the span of the data).
    dual : dict or None, optional
        The dual point ``{"mu": (n, k)}``; None grades the primal only (with ``W``, the dual is
        graded on the full basis).
    """
    W = linear_weights(problem.features, primal, problem.Y.shape[1])
    if W is not None:   # the full model's weights (the linear kernel): λ/2 tr(R⁻¹WᵀW) and the scores XW
        if primal.get("basis") is not None:
            raise ValueError("primal['W'] is graded on the full basis; give primal['coef'] with a basis J")
        used, scores = problem, np.asarray(problem.features @ W)
        xi = problem.margins.slack(scores)
        value = 0.5 * problem.lam * float(np.sum((W.T @ W) * problem.R_inv)) + problem.margins.weight * float(np.sum(xi * xi))
    else:
        used = on_basis(problem, primal.get("basis"))
        A = np.asarray(primal["coef"], dtype=np.float64)
        value, scores = primal_objective(used, A), _times_K_J(used, A)
    evaluation = Evaluation(value, extra={"scores": scores, "problem": used})
    if dual is not None:
        mu = np.asarray(dual["mu"], dtype=np.float64)
        evaluation.dual_objective = dual_objective(used, mu)
        if W is None:
            evaluation.kkt = kkt_residuals(used, A, mu)
        else:   # stationarity in W: λ W R⁻¹ + Xᵀ Tᵀ(μ)
            implied = 2 * problem.margins.weight * problem.margins.slack(scores)
            coupling = np.asarray(problem.features.T @ problem.margins.adjoint(mu))
            evaluation.kkt = _kkt_from_terms(problem, problem.lam * W @ problem.R_inv, coupling, implied, mu, value)
    return evaluation


def solution_from_cvxpy(problem: SparseMMProblem, cvx, variables) -> tuple[dict, dict]:
    """``(primal, dual)`` of a solved :func:`cvxpy_dual`: μ clipped to ``≥ 0`` (and 0 off Ω), the
    minimum-norm coefficients it implies on ``problem.basis``.

    Parameters
    ----------
    problem : SparseMMProblem
        The problem :func:`cvxpy_dual` was built from.
    cvx : cvxpy.Problem
        The solved CVXPY problem (first element returned by :func:`cvxpy_dual`).
    variables : dict
        Its variables (second element returned by :func:`cvxpy_dual`).
    """
    mu = np.where(problem.margins.mask, np.maximum(np.asarray(variables["mu"].value, dtype=np.float64), 0.0), 0.0)
    return {"coef": coef_from_dual(problem, mu), "basis": problem.basis}, {"mu": mu}
