"""Exact solver for box QPs whose groups must carry equal mass: OvN's derived dual (SPEC §2.2).

Problem (the OvN dual as a minimisation, :func:`mlsvm.formulations.ovn.dual_qp`)::

    min_{λ, ν}  ½ λᵀQλ − 1ᵀλ + ½ p ν²
    s.t.        Σ_{t∈group k} λ_t = ν   for every group k = 0..K−1   (multipliers y_k)
                0 ≤ λ ≤ β

``Q`` is PSD (``S ⊗ G`` restricted to the memberships), ``p = 1/(2γ)`` (soft b) or 0 (hard b, ν
free). For OvN the multipliers ``y`` of the equal-mass rows are exactly the biases ``b``.

Algorithm: Mehrotra predictor–corrector primal–dual interior point method. Each iteration forms
``H = Q + diag(z_l/λ + z_u/(β − λ))`` (positive definite: the barrier terms are > 0), factors it
once by Cholesky (T × T; or, when ``Q = ZZᵀ`` with Z of p < T columns, the p × p Woodbury matrix
``I + Zᵀdiag(·)⁻¹Z``; or, for OvN's linear kernel, one factorization of ``min(|C_k|, d_k)`` per
class and one d × d for the α coupling, through the features and no n × n matrix, see
:class:`_FeatureClassSystem`; or, for other kernels, per-class blocks of the Gram matrix,
:class:`_ClassBlockSystem`) and reuses the factor for the predictor and the corrector; the equal-mass rows
and ν are eliminated through a (K+1) × (K+1) Schur system, so the equality is kept exactly in
every Newton step (no penalty, no projection). Woodbury solves carry ``1/diag``, which spans many
decades near the optimum: each gets iterative refinement until its residual is ≤ 1e-13 relative
(at most 3 steps; the residual is the check, or, at its round-off plateau ≤ 1e-7, the componentwise
backward error, see :func:`_solve`), and only a solve that misses it, or a Woodbury matrix that
loses definiteness, moves the IPM to the next, more stable system (at the end of the chain the dense
T × T one).

Stop rule (stated, absolute on scaled quantities): stop when the complementarity gap
``(λᵀz_l + (β−λ)ᵀz_u) / (1 + |objective|)`` and the ∞-norms of the stationarity residual (scaled
by ``1 + ‖Qλ‖ + 1``), of the mass residual ``Σ λ − ν`` (scaled by ``1 + ν``) and of the ν
stationarity are all ≤ ``tol``. The complementarity gap bounds the QP duality gap once the
residuals vanish. The iterations are the shared Mehrotra loop
:func:`mlsvm.solvers.ipm_tools.box_qp_ipm`: reaching ``max_iter`` warns with the value reached, a
stall (no progress, a non-finite step) warns as one; both return the best iterate.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lu_factor, lu_solve, solve_triangular
from scipy.sparse import csr_matrix, issparse
from scipy.linalg.lapack import dpotri as potri
from scipy.linalg.lapack import dpotrs as potrs

from mlsvm.formulations import ovn
from mlsvm.solvers.ipm_tools import Measure, box_qp_ipm, ridged_cholesky
from mlsvm.solvers.result import SolverResult

__all__ = ["equal_mass_ipm", "solve_ipm"]

STOP_RULE = "IPM: max(scaled complementarity gap, scaled residuals)"
#: largest residual accepted from a Woodbury solve of H·x = rhs, relative to 1 + the largest term
#: of H·x, before the IPM switches to the dense Newton system
WOODBURY_CHECK = 1e-9
#: a refined solve whose residual is above WOODBURY_CHECK but at most PLATEAU_CHECK is accepted when
#: its componentwise backward error is ≤ BACKWARD_CHECK (the residual is round-off, see :func:`_solve`);
#: a larger residual is not: a hypothesis-found 4-point problem (1/d up to 2e12) had 2.4e-5 with a
#: componentwise error of 1e-16, and its IPM stalled at 1.8e-10 on such directions (tol 1e-10)
PLATEAU_CHECK = 1e-7
BACKWARD_CHECK = 1e-12
#: iterative refinement of a Woodbury solve: at most this many steps, stopping at this relative residual
REFINEMENT_STEPS = 3
REFINEMENT_TARGET = 1e-13


class _DenseSystem:
    """``H = Q + diag(d)`` factored by Cholesky (T × T); its solves need no refinement. H is
    positive definite in exact arithmetic, but Q is only semidefinite (hard w: the centring
    matrix) and d spans many decades near the optimum, so the factorization takes the shared
    ridge fallback (:func:`mlsvm.solvers.ipm_tools.ridged_cholesky`; a random hypothesis run found
    a 4-point problem whose H lost definiteness to round-off)."""

    refine = False

    def __init__(self, Q):
        self.Q = Q

    def matvec(self, v):
        return self.Q @ v

    def largest_diagonal(self):
        return float(np.max(np.diag(self.Q)))

    def factor(self, d):
        self._factor = ridged_cholesky(self.Q + np.diag(d))

    def apply_inverse(self, rhs):
        return cho_solve(self._factor, rhs, check_finite=False)


class _LowRankSystem:
    """``H = ZZᵀ + diag(d)`` with ``Z`` (T × p), p < T, solved by Woodbury through the p × p
    matrix ``I + Zᵀ diag(1/d) Z`` (one Cholesky per iteration)."""

    refine = True

    def __init__(self, Z):
        self.Z = Z

    def matvec(self, v):
        return self.Z @ (self.Z.T @ v)

    def dense(self):
        return _DenseSystem(self.Z @ self.Z.T)

    def largest_diagonal(self):
        return float(np.max(np.einsum("ij,ij->i", self.Z, self.Z)))

    def factor(self, d):
        self._inverse_d = 1.0 / d
        self._scaled = self.Z * self._inverse_d[:, None]
        root = self.Z * np.sqrt(self._inverse_d)[:, None]
        capacitance = root.T @ root  # AᵀA: numpy uses a symmetric rank-k update
        capacitance[np.diag_indices_from(capacitance)] += 1.0
        self._factor = cho_factor(capacitance, lower=True, check_finite=False)

    def apply_inverse(self, rhs):
        first = self._inverse_d[:, None] * rhs if rhs.ndim == 2 else self._inverse_d * rhs
        return first - self._scaled @ cho_solve(self._factor, self.Z.T @ first, check_finite=False)


class _FeatureClassSystem:
    """``Q_ts = (s₀[k_t = k_s] + s₁) ⟨f_{i_t}, f_{i_s}⟩``, the OvN dual of the linear kernel with
    ``S = s₀I + s₁11ᵀ`` (``M⁻¹`` for soft w, the centring matrix for hard w), never formed and
    without any n × n matrix: every product goes through the features (a sparse X stays CSR).
    ``Q = s₀F̃F̃ᵀ + s₁GGᵀ`` with ``F̃`` the T × Kd block-diagonal matrix of the class blocks ``F_k``
    (rows ``f_{i_t}``, restricted to the columns ``J_k`` where the class has a non-zero: ``d_k``
    columns) and ``G = F̃(1 ⊗ I_d)`` (T × d). ``H = D + Q`` is inverted in two steps:

    * ``A = D + s₀F̃F̃ᵀ = blockdiag(A_k)``, one class at a time, by whichever is smaller:
      ``m_k = |C_k| ≤ d_k`` ("kernel" class): Cholesky of ``A_k = D_k + s₀F_kF_kᵀ`` (m_k × m_k,
      ``F_kF_kᵀ`` formed once), backward stable; else ("Woodbury" class)
      ``A_k⁻¹ = D_k⁻¹ − D_k⁻¹F_k B_k⁻¹ F_kᵀD_k⁻¹``, ``B_k = I/s₀ + F_kᵀD_k⁻¹F_k`` (d_k × d_k).
      Per iteration ``Σ_k min(m_k, d_k)²·max(m_k, d_k)`` flops, memory ``Σ_k min(m_k, d_k)·m_k``.
    * ``s₁ ≠ 0``: ``H = A + s₁GGᵀ``, ``H⁻¹ = A⁻¹ − A⁻¹G N⁻¹ GᵀA⁻¹`` with the d × d matrix
      ``N = I/s₁ + Σ_k F_kᵀA_k⁻¹F_k``. A Woodbury class gives ``F_kᵀA_k⁻¹F_k = (I − B_k⁻¹/s₀)/s₀``
      on J_k and ``GᵀA⁻¹r`` gives ``B_k⁻¹F_kᵀD_k⁻¹r_k/s₀``, so their part of N is formed without
      cancellation: ``N = diag(1/s₁ + c_j/s₀) − Σ B_k⁻¹/s₀² + Σ_kernel F_kᵀA_k⁻¹F_k`` (``c_j`` the
      Woodbury classes with j ∈ J_k; for dense X with only Woodbury classes the bracket is
      ``1/s₁ + K/s₀``: 0 for hard w). N is definite with the sign of ``s₁`` because H ≻ 0; one
      d × d Cholesky per iteration, skipped when ``s₁ = 0`` (α = 0).

    ``matvec`` is ``O(Σ_k nnz(F_k) + dK)`` per column. ``blocks="kernel"`` makes every class a kernel
    class (the more stable fallback when a Woodbury solve loses accuracy)."""

    def __init__(self, s0, s1, features, sample, groups, blocks="auto"):
        self.s0, self.s1, self.groups, self.blocks = float(s0), float(s1), groups, blocks
        K = int(groups.max()) + 1
        if np.all(np.diff(groups) >= 0):  # contiguous groups (OvN's memberships): slices, not copies
            bounds = np.searchsorted(groups, np.arange(K + 1))
            self.members = [slice(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]
        else:
            self.members = [np.flatnonzero(groups == k) for k in range(K)]
        self.features, self.sample, self.width = features, sample, features.shape[1]
        sparse = issparse(features)
        rows = features[sample]
        self.F, self.support, self.kernel, self.gram = [], [], [], []
        for members in self.members:
            F = rows[members]
            support = None   # only the columns where the class has a non-zero enter its block
            if sparse:
                support = np.unique(F.indices)
                F = F[:, support]
            elif not np.all(F.any(axis=0)):   # dense X with columns empty on the class: the same blocks
                support = np.flatnonzero(F.any(axis=0))
                F = F[:, support]
            kernel = blocks == "kernel" or F.shape[0] <= F.shape[1]
            if kernel:
                self.gram.append(np.asarray((F @ F.T).toarray() if sparse else F @ F.T))
            else:
                F = F.toarray() if sparse else F
                self.gram.append(None)
            self.F.append(F)
            self.support.append(support)
            self.kernel.append(kernel)
        self.refine = self.s1 != 0.0 or not all(self.kernel)
        self.block_diagonal = self.s1 == 0.0   # H = blockdiag(A_k): no coupling between classes
        self._squared_norms = np.asarray(rows.multiply(rows).sum(axis=1)).ravel() if sparse else \
            np.einsum("ij,ij->i", rows, rows)

    def _add(self, total, k, part):   # total[J_k] += part
        if self.support[k] is None:
            total += part
        else:
            total[self.support[k]] += part

    def _restrict(self, full, k):     # full[J_k]
        return full if self.support[k] is None else full[self.support[k]]

    def matvec(self, v):
        return self._product(v, absolute=False)

    def abs_matvec(self, v):
        """``|Q|v`` (entrywise absolute values of Q, ``v ≥ 0``): the scale of the round-off in a
        computed ``Qx``, for the componentwise backward error of :func:`_solve`.

        Parameters
        ----------
        v : array of shape (T,) or (T, m)
            Non-negative vector(s).
        """
        return self._product(v, absolute=True)

    def _product(self, v, absolute):
        columns = v.reshape(v.shape[0], -1)
        blocks = [abs(F) for F in self.F] if absolute else self.F
        s0, s1 = (abs(self.s0), abs(self.s1)) if absolute else (self.s0, self.s1)
        projected = [np.asarray(F.T @ columns[rows]) for rows, F in zip(self.members, blocks)]
        total = None
        if s1 != 0.0:
            total = np.zeros((self.width, columns.shape[1]))
            for k, part in enumerate(projected):
                self._add(total, k, part)
        out = np.empty_like(columns)
        for k, (rows, F, part) in enumerate(zip(self.members, blocks, projected)):
            mixed = s0 * part if total is None else s0 * part + s1 * self._restrict(total, k)
            out[rows] = F @ mixed
        return out.reshape(v.shape)

    def dense(self):
        """The next, more stable system when a refined solve misses its check: every class a kernel
        class (backward stable for ``s₁ = 0``); from there the dense T × T Newton matrix."""
        if self.blocks != "kernel" and not all(self.kernel):
            return _FeatureClassSystem(self.s0, self.s1, self.features, self.sample, self.groups, blocks="kernel")
        rows = self.features[self.sample]
        inner = rows @ rows.T
        inner = inner.toarray() if issparse(inner) else inner
        coupling = self.s0 * (self.groups[:, None] == self.groups[None, :]) + self.s1
        return _DenseSystem(coupling * inner)

    def largest_diagonal(self):
        return (self.s0 + self.s1) * float(np.max(self._squared_norms))

    def factor(self, d):
        self._inverse_d = 1.0 / d
        root_d = np.sqrt(self._inverse_d)
        self._factors = []
        for rows, F, gram, kernel in zip(self.members, self.F, self.gram, self.kernel):
            if kernel:
                block = self.s0 * gram
                block[np.diag_indices_from(block)] += d[rows]
                self._factors.append(ridged_cholesky(block))
            elif F.shape[1] == 0:   # the class's rows are all zero: A_k = D_k
                self._factors.append(None)
            else:
                weighted = F * root_d[rows][:, None]
                B = weighted.T @ weighted
                B[np.diag_indices_from(B)] += 1.0 / self.s0
                self._factors.append(cho_factor(B, lower=True, check_finite=False))
        if self.s1 != 0.0:
            diagonal = np.full(self.width, 1.0 / self.s1)
            inverse_sum = np.zeros((self.width, self.width))
            kernel_sum = np.zeros((self.width, self.width))
            for k, (F, factor, kernel) in enumerate(zip(self.F, self._factors, self.kernel)):
                index = np.ix_(self.support[k], self.support[k]) if self.support[k] is not None else slice(None)
                if kernel:   # F_kᵀA_k⁻¹F_k = (L⁻¹F_k)ᵀ(L⁻¹F_k)
                    scaled = solve_triangular(factor[0], F.toarray() if issparse(F) else F, lower=True,
                                              check_finite=False)
                    kernel_sum[index] += scaled.T @ scaled
                elif F.shape[1]:
                    identity = np.eye(F.shape[1])
                    inverse_sum[index] += cho_solve(factor, identity, check_finite=False)
                    if self.support[k] is None:
                        diagonal += 1.0 / self.s0
                    else:
                        diagonal[self.support[k]] += 1.0 / self.s0
            N = np.diag(diagonal) - inverse_sum / self.s0 ** 2 + kernel_sum
            self._sign = 1.0 if self.s1 > 0 else -1.0
            self._N = cho_factor(self._sign * 0.5 * (N + N.T), lower=True, check_finite=False)

    def _class_inverse(self, k, right):   # A_k⁻¹ right for a kernel class (LAPACK potrs: cheaper than cho_solve)
        return potrs(self._factors[k][0], right, lower=True)[0]

    def _woodbury_solve(self, k, right):  # B_k⁻¹ right (B_k is 0 × 0 for a class of empty rows)
        return right if self._factors[k] is None else potrs(self._factors[k][0], right, lower=True)[0]

    def apply_inverse(self, rhs):
        columns = rhs.reshape(rhs.shape[0], -1)
        first = self._inverse_d[:, None] * columns
        out = np.empty_like(columns)
        parts = []
        for k, (rows, F, kernel) in enumerate(zip(self.members, self.F, self.kernel)):
            if kernel:
                parts.append(self._class_inverse(k, columns[rows]))             # A_k⁻¹ r_k
            else:
                parts.append(np.asarray(F.T @ first[rows]))                      # P_k = F_kᵀD_k⁻¹r_k
        c = None
        if self.s1 != 0.0:  # c = N⁻¹ GᵀA⁻¹r, GᵀA⁻¹r = Σ_Woodbury B_k⁻¹P_k/s₀ + Σ_kernel F_kᵀA_k⁻¹r_k
            woodbury = np.zeros((self.width, columns.shape[1]))
            kernel_part = np.zeros((self.width, columns.shape[1]))
            for k, (F, part, kernel) in enumerate(zip(self.F, parts, self.kernel)):
                if kernel:
                    self._add(kernel_part, k, np.asarray(F.T @ part))
                else:
                    self._add(woodbury, k, self._woodbury_solve(k, part))
            c = self._sign * cho_solve(self._N, woodbury / self.s0 + kernel_part, check_finite=False)
        for k, (rows, F, part, kernel) in enumerate(zip(self.members, self.F, parts, self.kernel)):
            if kernel:   # A_k⁻¹r_k − A_k⁻¹F_k c
                out[rows] = part if c is None else part - self._class_inverse(k, np.asarray(F @ self._restrict(c, k)))
            else:        # D_k⁻¹r_k − D_k⁻¹F_k B_k⁻¹(P_k + c/s₀)
                right = part if c is None else part + self._restrict(c, k) / self.s0
                out[rows] = first[rows] - self._inverse_d[rows][:, None] * (F @ self._woodbury_solve(k, right))
        return out.reshape(rhs.shape)


class _ClassBlockSystem:
    """``Q_ts = (s₀[k_t = k_s] + s₁) G_{i_t i_s}``, the OvN dual for any kernel with
    ``S = s₀I + s₁11ᵀ``, never formed: ``Q = s₀·blockdiag_k(G[C_k, C_k]) + s₁PᵀGP`` with ``P`` the
    n × T incidence ``P[i_t, t] = 1`` (membership t belongs to sample i_t).

    * ``A = D + s₀·blockdiag(G[C_k, C_k])``: one Cholesky factorization per class, ``Σ_k |C_k|³/3``
      flops and ``Σ_k |C_k|²`` memory instead of ``T³/3`` and ``T²`` (yeast: 1.2e9 against 8.5e10
      flops, 35 MB against 320 MB). With ``s₁ = 0`` (soft w, α = 0, the default) ``H = A`` and this
      is the whole solve, backward stable like the dense Cholesky (no refinement needed).
    * ``s₁ ≠ 0`` (soft w with α ≠ 0, hard w): ``H = A + s₁PᵀGP``. With ``y = Px`` (n values),
      ``Hx = r`` ⇔ ``(I + s₁WG) y = PA⁻¹r`` and ``x = A⁻¹(r − s₁PᵀGy)``, ``W = PA⁻¹Pᵀ`` (n × n,
      from the explicit block inverses): one LU of an n × n matrix per iteration, ``O(n³)`` flops
      and ``O(n²)`` memory, never ``T × T``. Solves are refined like every Woodbury solve.

    ``matvec`` reads ``Q`` through the Gram matrix: ``(Qv)_t = (G V S)_{i_t k_t}`` with ``V`` the
    n × K scatter of v (``O(n²K)`` per product)."""

    def __init__(self, s0, s1, gram, sample, groups):
        self.s0, self.s1, self.gram, self.sample, self.groups = float(s0), float(s1), gram, sample, groups
        self.n, self.K = gram.shape[0], int(groups.max()) + 1
        self.members = [np.flatnonzero(groups == k) for k in range(self.K)]
        self.refine = self.s1 != 0.0
        self.block_diagonal = self.s1 == 0.0   # H = blockdiag(A_k): no coupling between classes

    def _scatter(self, v):  # (T, m) → (n, K·m): column block k·m.. holds class k's values
        columns = v.shape[1]
        V = np.zeros((self.n, self.K, columns))
        V[self.sample, self.groups] = v
        return V.reshape(self.n, self.K * columns)

    def matvec(self, v):
        columns = v.reshape(v.shape[0], -1)
        GV = (self.gram @ self._scatter(columns)).reshape(self.n, self.K, -1)
        mixed = self.s0 * GV + self.s1 * GV.sum(axis=1, keepdims=True)   # G V S with S = s₀I + s₁11ᵀ
        return mixed[self.sample, self.groups].reshape(v.shape)

    def dense(self):
        coupling = self.s0 * (self.groups[:, None] == self.groups[None, :]) + self.s1
        return _DenseSystem(coupling * self.gram[np.ix_(self.sample, self.sample)])

    def largest_diagonal(self):
        return (self.s0 + self.s1) * float(np.max(np.diag(self.gram)[self.sample]))

    def factor(self, d):
        self._factors = []
        for rows in self.members:
            block = self.s0 * self.gram[np.ix_(self.sample[rows], self.sample[rows])]
            block[np.diag_indices_from(block)] += d[rows]
            self._factors.append(ridged_cholesky(block))
        if self.s1 != 0.0:
            W = np.zeros((self.n, self.n))
            for rows, (factor, lower) in zip(self.members, self._factors):
                inverse, info = potri(factor, lower=lower)
                if info != 0:
                    raise LinAlgError(f"inverting a class block failed (potri info {info})")
                inverse = np.tril(inverse) + np.tril(inverse, -1).T
                points = self.sample[rows]
                W[np.ix_(points, points)] += inverse
            coupled = self.s1 * (W @ self.gram)
            coupled[np.diag_indices_from(coupled)] += 1.0
            self._lu = lu_factor(coupled, check_finite=False)

    def _block_solve(self, columns):  # A⁻¹ columns, class by class
        out = np.empty_like(columns)
        for rows, (factor, lower) in zip(self.members, self._factors):
            out[rows] = potrs(factor, columns[rows], lower=lower)[0]
        return out

    def apply_inverse(self, rhs):
        columns = rhs.reshape(rhs.shape[0], -1)
        first = self._block_solve(columns)
        if self.s1 != 0.0:
            projected = np.zeros((self.n, columns.shape[1]))
            np.add.at(projected, self.sample, first)                       # P A⁻¹ r
            y = lu_solve(self._lu, projected, check_finite=False)
            first = first - self.s1 * self._block_solve((self.gram @ y)[self.sample])
        return first.reshape(rhs.shape)


def _solve(system, d, rhs):
    """``H⁻¹ rhs`` with ``H = Q + diag(d)``. Woodbury carries ``1/d``, which spans many decades near
    the optimum: its solutions get iterative refinement until the residual is ≤ ``REFINEMENT_TARGET``
    relative to 1 + the largest term of ``Qx`` and ``d·x`` (at most ``REFINEMENT_STEPS`` steps).
    Returns the solution and whether its residual met ``WOODBURY_CHECK`` (normwise as above or, for
    a system that gives ``|Q||x|``, componentwise: see the comment below)."""
    solution = system.apply_inverse(rhs)
    if not system.refine:
        return solution, True
    shaped = d[:, None] if rhs.ndim == 2 else d
    for step in range(REFINEMENT_STEPS + 1):
        Qx = system.matvec(solution)
        residual = rhs - Qx - shaped * solution
        relative = np.max(np.abs(residual)) / (1.0 + max(np.max(np.abs(Qx)), np.max(np.abs(shaped * solution))))
        if relative <= REFINEMENT_TARGET or step == REFINEMENT_STEPS:
            break
        solution = solution + system.apply_inverse(residual)
    accurate = relative <= WOODBURY_CHECK
    if not accurate and relative <= PLATEAU_CHECK and hasattr(system, "abs_matvec"):
        # near the optimum (1/d up to ~1e6 on free variables) the residual cannot be computed more
        # accurately than the round-off of Qx, ε·(|Q||x|)_t, which exceeds ε·(1 + max|Qx|) when x is
        # large along directions Q nearly annihilates: refinement then plateaus (measured: 4e-9 at
        # n = 4000, 16 decades of d). Such a residual is accepted when it is all round-off: the
        # componentwise backward error (Oettli–Prager) max_t |r_t| / (|Q||x| + d|x| + |rhs|)_t is
        # ≤ BACKWARD_CHECK, i.e. x solves a system whose every entry is perturbed by ≤ 1e-12 relative.
        bound = system.abs_matvec(np.abs(solution)) + np.abs(shaped * solution) + np.abs(rhs)
        magnitude = np.abs(residual)
        ratio = np.divide(magnitude, bound, out=np.where(magnitude > 0, np.inf, 0.0), where=bound > 0)
        accurate = float(np.max(ratio)) <= BACKWARD_CHECK
    return solution, accurate


def _group_inverse(system, d, E, groups):
    """``H⁻¹Eᵀ`` (T × K) for the equal-mass rows E and whether its solve met its check. A system
    that is block diagonal over the groups (``s₁ = 0``) needs one column: ``H⁻¹1`` holds on group
    k's rows exactly column k of ``H⁻¹Eᵀ``, returned as a sparse T × K matrix (K solves fewer)."""
    if getattr(system, "block_diagonal", False):
        h, accurate = _solve(system, d, np.ones(groups.size))
        return csr_matrix((h, (np.arange(groups.size), groups)), shape=(groups.size, E.shape[0])), accurate
    return _solve(system, d, E.T.toarray())


def _dense_system(system, d, E, groups):
    """Switch a Woodbury system that lost accuracy (or definiteness) to the next, more stable one
    (``system.dense()``: feature class system → all classes as kernel blocks → the dense T × T
    Newton matrix; class blocks of a Gram matrix → the dense one), going further down the chain
    while the new system's refined solve of ``H⁻¹Eᵀ`` misses its check."""
    dense = system.dense()
    try:
        dense.factor(d)
        HE, accurate = _group_inverse(dense, d, E, groups)
    except LinAlgError:
        if not dense.refine:
            raise
        accurate = False
    if not accurate:
        return _dense_system(dense, d, E, groups)
    return dense, HE


class _EqualMassQP:
    """The QP of the module docstring for :func:`~mlsvm.solvers.ipm_tools.box_qp_ipm`: the free
    variables are ``(y, ν)``; the equal-mass rows and ν are eliminated through a (K+1) × (K+1)
    Schur system after one solve ``H⁻¹Eᵀ`` per iteration."""

    def __init__(self, system, groups, n_groups, nu_weight):
        self.system, self.K, self.nu_weight, self.groups = system, n_groups, nu_weight, groups
        self.E = csr_matrix((np.ones(groups.size), (groups, np.arange(groups.size))), shape=(n_groups, groups.size))

    def measure(self, iterate):
        lam, E, K = iterate.alpha, self.E, self.K
        y, nu = iterate.free[:K], iterate.free[K]
        Qlam = self.system.matvec(lam)
        gradient = Qlam - 1.0 + y[self.groups]
        r_dual = gradient - iterate.lower + iterate.upper
        self.r_nu = self.nu_weight * nu - y.sum()
        self.r_mass = E @ lam - nu
        complementarity = float(lam @ iterate.lower + iterate.slack @ iterate.upper)
        objective = 0.5 * float(lam @ Qlam) - float(lam.sum()) + 0.5 * self.nu_weight * nu * nu
        gap = complementarity / (1.0 + abs(objective))
        residual = max(np.max(np.abs(r_dual)) / (1.0 + np.max(np.abs(Qlam)) + 1.0),
                       np.max(np.abs(self.r_mass)) / (1.0 + abs(nu)), abs(self.r_nu) / (1.0 + np.max(np.abs(y))))
        # dual: the Lagrangian at the iterate, a lower bound on the objective once the residuals vanish
        return Measure(objective, objective - complementarity, max(gap, residual), gradient,
                       {"gap": gap, "residual": residual})

    def factorize(self, d):
        self.barrier = d
        try:
            self.system.factor(d)
            self.HE, accurate = _group_inverse(self.system, d, self.E, self.groups)
        except LinAlgError:
            if not self.system.refine:
                raise
            accurate = False
        if not accurate:  # continue with a more stable system (at the end of the chain the dense T × T one)
            self.system, self.HE = _dense_system(self.system, d, self.E, self.groups)

    def solve(self, g):
        K, E = self.K, self.E
        Hg, accurate = _solve(self.system, self.barrier, g)
        if not accurate:
            self.system, self.HE = _dense_system(self.system, self.barrier, E, self.groups)
            Hg = _solve(self.system, self.barrier, g)[0]
        schur = np.zeros((K + 1, K + 1))
        EHE = E @ self.HE
        schur[:K, :K] = EHE.toarray() if issparse(EHE) else EHE
        schur[:K, K] = 1.0
        schur[K, :K] = -1.0
        schur[K, K] = self.nu_weight
        solution = np.linalg.solve(schur, np.append(E @ Hg + self.r_mass, -self.r_nu))
        return Hg - self.HE @ solution[:K], solution

    def point(self, iterate):
        K = self.K
        return ({"lambda": iterate.alpha, "nu": float(iterate.free[K])},
                {"y": iterate.free[:K], "z_low": iterate.lower, "z_up": iterate.upper})


def equal_mass_ipm(Q: np.ndarray | None, groups: np.ndarray, n_groups: int, beta: float, nu_weight: float = 0.0,
                   tol: float = 1e-9, max_iter: int = 100, Q_factor: np.ndarray | None = None,
                   Q_coupled: tuple | None = None, callback=None, certificate=None,
                   Q_kernel: tuple | None = None) -> SolverResult:
    """Solve the equal-mass box QP above. ``groups[t]`` is the group of variable t; every group
    must be non-empty (OvN: a class without members has the closed-form optimum of
    :func:`mlsvm.formulations.ovn.empty_class_solution`). Returns primal ``{"lambda", "nu"}`` and
    dual ``{"y", "z_low", "z_up"}`` (the equal-mass and box multipliers).

    ``Q_factor`` (T × p, ``Q = Q_factor Q_factorᵀ``) may replace ``Q`` when p < T: each Newton
    system is then solved by Woodbury in p dimensions. ``Q_coupled = (s₀, s₁, F, sample)`` gives
    ``Q_ts = (s₀[groups[t] = groups[s]] + s₁)⟨F[sample[t]], F[sample[s]]⟩`` (OvN with a linear
    kernel, ``S = s₀I + s₁11ᵀ``, s₀ > 0; F dense or sparse), never formed: per group a Cholesky
    factorization of its ``|group|``-sized kernel block or of its d_k × d_k Woodbury matrix, whichever
    is smaller, and a d × d one for ``s₁ ≠ 0`` (:class:`_FeatureClassSystem`). ``Q_kernel = (s₀, s₁, G, sample)`` gives the same
    Q through an n × n Gram matrix ``G`` (any kernel), never formed: one Cholesky factorization per
    group and, when ``s₁ ≠ 0``, one n × n LU (:class:`_ClassBlockSystem`).

    The iterations are the shared Mehrotra loop :func:`mlsvm.solvers.ipm_tools.box_qp_ipm` (its
    stall detection included). ``callback(n_iter, primal, dual)`` sees every iterate in the names of
    the result; ``history`` has per iteration ``primal`` (the QP objective), ``dual`` (the Lagrangian
    at the iterate), ``gap`` (scaled complementarity), ``residual``, ``stop_value`` (their maximum)
    and μ. ``certificate(primal, dual) -> float``, if given, must also be ≤ ``tol`` before the IPM
    stops (the caller's own certificate, :class:`~mlsvm.solvers.result.CertifiedStop`).

    Parameters
    ----------
    Q : array of shape (T, T) or None
        The PSD matrix of the QP; None when ``Q_factor``, ``Q_coupled`` or ``Q_kernel`` gives it.
    groups : array of int of shape (T,)
        ``groups[t]`` is the group of variable t.
    n_groups : int
        Number of groups K (every group must be non-empty).
    beta : float
        The box upper bound β.
    nu_weight : float, default=0.0
        The weight p of ``½ p ν²`` (``1/(2γ)`` for soft b, 0 for hard b).
    tol : float, default=1e-9
        Tolerance of the stop rule of the module docstring.
    max_iter : int, default=100
        Maximum number of interior-point iterations.
    Q_factor : array of shape (T, p) or None, optional
        A factor with ``Q = Q_factor Q_factorᵀ``, used when p < T.
    Q_coupled : tuple or None, optional
        ``(s₀, s₁, F, sample)`` describing Q without forming it (OvN's linear kernel).
    callback : callable or None, optional
        Called as ``callback(n_iter, primal, dual)`` at every iterate.
    certificate : callable or None, optional
        ``certificate(primal, dual) -> float``: the caller's certificate, which must also be ≤
        ``tol`` before the IPM stops.
    Q_kernel : tuple or None, optional
        ``(s₀, s₁, G, sample)`` describing Q through a Gram matrix without forming it (OvN, any kernel).
    """
    if Q_coupled is not None:
        system = _FeatureClassSystem(*Q_coupled, groups)
    elif Q_kernel is not None:
        system = _ClassBlockSystem(*Q_kernel, groups)
    else:
        system = _DenseSystem(Q) if Q_factor is None else _LowRankSystem(Q_factor)
    T, K = groups.size, n_groups
    counts = np.bincount(groups, minlength=K)
    if np.any(counts == 0):
        raise ValueError(f"every group needs a member; groups {np.flatnonzero(counts == 0).tolist()} are empty")
    scale = max(1.0, system.largest_diagonal() * beta)  # for PSD Q, max |Q_ij| is on the diagonal
    # start: λ = β/2, ν the mean group mass, y = 0, box multipliers at the scale of Q·β
    free = np.append(np.zeros(K), 0.5 * beta * counts.mean())
    return box_qp_ipm(_EqualMassQP(system, groups, K, nu_weight), np.full(T, float(beta)), free, tol=tol,
                      max_iter=max_iter, name="equal-mass IPM", stop_rule=STOP_RULE, certificate=certificate,
                      callback=callback, multiplier=scale, solver="equal-mass-ipm")


def solve_ipm(problem: "ovn.OvNProblem", *, tol: float = 1e-10, max_iter: int = 100, callback=None) -> SolverResult:
    """The OvN dual (:func:`mlsvm.formulations.ovn.dual_qp`) by :func:`equal_mass_ipm`, returned in
    the formulation's names: primal ``{"coef": A = ΛS, "b"}``, dual ``{"Lam", "nu"}``. ``b`` is the
    canonical point of the optimal biases at that W
    (:func:`~mlsvm.formulations.ovn.with_canonical_biases`), or where that point does not certify,
    the equal-mass multipliers, centred for hard b (the IPM keeps ``Σb = 0`` to its tolerance only);
    history and callback see the multipliers. Every class needs a member (an empty class has the
    closed form :func:`~mlsvm.formulations.ovn.empty_class_solution`).

    The IPM stops on its own rule *and* when :func:`~mlsvm.formulations.ovn.evaluate` certifies the
    point it would return (relative duality gap and every scaled KKT residual ≤ ``tol``): its scaled
    complementarity gap is a sum over memberships divided by ``1 + |objective|``, the KKT residuals
    are ∞-norms with other scalings, so one can be met a step before the other. ``history`` adds
    ``primal`` and ``dual`` (the OvN objectives at each iterate); ``callback(n_iter, primal, dual)``
    sees each iterate in the names of the result.

    Parameters
    ----------
    problem : OvNProblem
        The OvN problem (every class with a member).
    tol : float, default=1e-10
        Tolerance of the IPM's stop rule and of the formulation's certificate.
    max_iter : int, default=100
        Maximum number of interior-point iterations.
    callback : callable or None, optional
        Called as ``callback(n_iter, primal, dual)`` at every iterate.
    """
    sample, cls = problem.members
    T = sample.size
    nu_weight = 1.0 / (2.0 * problem.gamma_b) if problem.soft_b else 0.0
    features = problem.features
    s0, s1 = ovn.dual_metric_coefficients(problem)
    coupled = blocks = None
    if features is not None and s0 > 0:
        # linear kernel: Newton systems through X (per class the smaller of its kernel block and its
        # Woodbury matrix, a d × d one for the s₁ coupling): no n × n matrix, dense or sparse X
        coupled = (s0, s1, features, sample)
    else:  # any kernel: per-class Cholesky blocks of s₀G[C_k, C_k] + D, the s₁ coupling through n × n
        blocks = (s0, s1, problem.gram_matrix, sample)   # (K = 1 with hard w: S = 0, s₀ = 0)

    def point(qp_primal, qp_dual):
        lam, nu, y = qp_primal["lambda"], qp_primal["nu"], qp_dual["y"]
        Lam = np.zeros(problem.Y.shape)
        Lam[sample, cls] = lam
        b = y - y.mean() if problem.b_constraint == "hard" else y.copy()
        return {"coef": ovn.coef_from_dual(problem, Lam), "b": b}, {"Lam": Lam, "nu": float(nu)}

    objectives = {"primal": [], "dual": []}

    def record(iteration, qp_primal, qp_dual):
        primal, dual = point(qp_primal, qp_dual)
        values = ovn.primal_dual_objectives(problem, dual["Lam"], dual["nu"], primal["b"])
        objectives["primal"].append(values[0])
        objectives["dual"].append(values[1])
        if callback is not None:
            callback(iteration, primal, dual)

    def certificate(qp_primal, qp_dual):
        evaluation = ovn.evaluate(problem, *point(qp_primal, qp_dual))
        return max(abs(evaluation.relative_gap), evaluation.max_kkt)

    result = equal_mass_ipm(None, cls, problem.n_classes, problem.beta, nu_weight, tol=tol, max_iter=max_iter,
                            Q_coupled=coupled, callback=record, certificate=certificate, Q_kernel=blocks)
    primal, dual = point(result.primal, result.dual)
    primal = ovn.with_canonical_biases(problem, primal, dual, tol)
    result.primal, result.dual = primal, dual
    result.history.update(objectives)
    result.stop_rule = STOP_RULE + ", and the formulation's certificate (relative gap, scaled KKT) ≤ tol"
    result.solver = "ipm"
    return result
