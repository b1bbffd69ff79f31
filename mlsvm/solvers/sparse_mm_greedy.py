"""Algorithm 4 of Ganu, Shevade & Sundararajan: greedy basis selection + Newton for α_J.

Objective (SPEC §2.3; see :mod:`mlsvm.formulations.sparse_mm`), for a basis set J::

    e_J(A) = λ/2 tr(R⁻¹ Aᵀ K_JJ A) + c Σ_{(i,r)∈Ω} max(0, 1 + T(K_J A))_ir²

(SMSVM (3.10): c = ½, R = I; SM3L (4.22): c = 1). The margin map T, the pair set Ω and c come
from a :class:`mlsvm.formulations.sparse_mm.MarginOperator`.

Coordinates: the Cholesky factor ``L_J`` of ``K_JJ`` is grown by one row per added basis vector
(``l = L_J⁻¹ K_{J,j}``, pivot ``ρ = √(K_jj − lᵀl)``), and the solver works in the features
``Z = K_J L_J⁻ᵀ`` (so ``F = Z C``, ``A = L_J⁻ᵀ C``, regulariser ``λ/2 tr(C R⁻¹ Cᵀ)``): each new
feature column costs ``O(n|J|)``. A candidate whose pivot is below ``1e-10·K_jj`` (numerically in the
span of the current basis, e.g. a duplicated point) is not eligible.

* Selection (Alg. 2 with the speed-up of §3.3): κ random candidates outside J; for each, the k
  one-dimensional problems (3.12) in α_{j,r}, r = 1..k, one after the other with α_J fixed, each
  solved exactly on the true piecewise-quadratic objective (the paper freezes the sets I^r, I^r_m
  and then rejects candidates whose objective rose; the exact 1-D minimum never rises). The score
  cache F = K_J A is updated in place; j* maximises the decrease (3.13).
* α_J (Alg. 3): Newton with the generalized Hessian and an exact line search on the piecewise
  quadratic (:mod:`mlsvm.solvers.piecewise_quadratic`). ``joint=False`` (solver "greedy", the paper): one Newton step per class r in turn,
  Hessian ``λ(R⁻¹)_rr I + Zᵀ diag(ω_r) Z`` by its Cholesky factor, which is grown by a border row
  when J grows and re-factorised only when the active set changed. These sweeps are block
  coordinate descent (linear rate); when a sweep fails to halve the duality gap (strongly coupled
  classes: small λ, two-class SMSVM) the run continues with joint steps (recorded in history as
  ``joint_from_sweep``) — a departure from the paper, which reports < 4 sweeps in its runs.
  ``joint=True`` (solver "fast"): one Newton step on all classes, the system solved by conjugate
  gradients (SciPy's ``cg``) preconditioned with those per-class factors — for SMSVM on the
  complement of the common-class mode ``v1ᵀ``, which the Hessian maps to ``λv1ᵀ`` and the
  preconditioner inverts exactly (:func:`_preconditioner`) — (forcing term
  ``min(1e-2, √max(gap, 0))``: a round-off negative gap near the optimum asks the tightest; exact
  when the classes decouple). SM3L with a diagonal R⁻¹ (the label problems separate) has its own
  loop, :func:`_newton_separable`: each new basis is solved from the previous optimum with α_j = 0
  (Alg. 4 starts from the candidate's α_{j,·}; the optimum on J is the same, unique), so the loop
  carries its scores, margins, slacks, coupling and Hessian curvature from one basis to the next.
  The per-class Hessians live in ``(k, |J|, |J|)`` buffers that LAPACK/BLAS work on in place from
  compiled loops (:mod:`mlsvm.solvers.compiled_lapack`).
* Stop rules. Newton: relative duality gap ``(e_J − D_J(μ))/max(1,|e_J|,|D_J|) ≤ tol`` with the
  implied multipliers ``μ = 2c·ξ`` in the derived dual (an exact certificate of the objective) and
  the scaled stationarity residual of :func:`mlsvm.formulations.sparse_mm.kkt_residuals` ≤ tol (the
  gap is quadratic in the gradient: alone it let fits end with stationarity residuals of 1e-2 to
  3.6e-2 on yeast, issue 19); inner solves while J grows use ``max(tol, 1e-6)``. ``max_iter``
  bounds the Newton steps of the whole run. A Newton loop held above tol by round-off stops as
  stalled (a ``ConvergenceWarning`` that says so, converged=False): SM3L's separable loop when its
  labels, each at the exact minimiser of its problem on its active set, settle twice without
  halving the stop value; the joint loop when two steps on an unchanged active set (each solving
  its quadratic to CG's tolerance) fail to halve the gradient, the scores recomputed from the
  coefficients between them. The joint loop and the class-wise sweeps also stall when
  ``STALL_STEPS`` steps (sweeps) in a row lower neither e_J (monotone in exact arithmetic) nor the
  least stop value so far: with badly scaled features, margins at 0 flicker and CG stops at its cap,
  so the active set never stays unchanged, and a gap at round-off never fails to halve, so the
  sweeps never turn joint. A stall on a J that is still growing does not end the selection: the
  solve on the final J is the one certified. Greedy: ``|J| = d_max``, or the relative decrease of
  e_J after an addition below ``min_rel_decrease`` (1e-3 in the paper), or no candidate decreases
  e_J.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import solve_triangular
from scipy.sparse.linalg import LinearOperator, cg

from mlsvm.formulations.sparse_mm import gram_source
from mlsvm.solvers.piecewise_quadratic import (minimize_outer_terms, minimize_piecewise_quadratic,
                                               minimize_with_decrease)
from mlsvm.solvers.sparse_mm_compiled import (border_factors, factorize_classes, rank_updates, sm3l_line_steps,
                                              sm3l_take_steps, smsvm_candidate_gains, smsvm_pair_adjoint,
                                              smsvm_pair_differences, solve_classes)
from mlsvm.solvers.result import SolverResult, relative_gap, warn_not_converged, warn_stalled

__all__ = ["candidate_gains", "newton_fixed_basis", "greedy_sparse"]

PIVOT_RTOL = 1e-10
#: Newton steps (class-wise: sweeps) in a row that lower neither e_J nor the least stop value so far: a stall
STALL_STEPS = 10
STOP_RULE = "max(relative duality gap, scaled stationarity residual)"


def _objective_and_dual(Z, C, F, ops, lam, R, R_inv, xi=None, ZtH=None, sums=None):
    """e_J, the derived dual at the implied multipliers and their relative gap; ``xi`` (the slacks),
    ``ZtH`` (``Zᵀ Tᵀ(2c·ξ)``) and ``sums`` (``(Σξ, Σξ²)``: then xi is not read) when the Newton loop has
    them already."""
    if sums is None:
        xi = ops.slack(F) if xi is None else xi
        sums = float(xi.sum()), float(np.sum(xi * xi))
    total, squares = sums
    primal = 0.5 * lam * float(np.sum((C @ R_inv) * C)) + ops.weight * squares
    scale = 2 * ops.weight     # μ = 2c·ξ; 2c = 1 or 2: Σμ and Σμ² from Σξ and Σξ² are the same floats
    ZtH = Z.T @ ops.adjoint(scale * xi) if ZtH is None else ZtH
    dual = float(scale * total - scale * scale * squares / (4 * ops.weight)
                 - np.sum((ZtH @ R) * ZtH) / (2 * lam))
    return primal, dual, relative_gap(primal, dual)


def _active(ops, margin):
    """The active pairs of the margins ``1 + T(F)``: in Ω with a positive margin (n × k booleans)."""
    return ops.mask & (margin > 0)


def _curvature(ops, F, active=None):
    """ω (n × k): diagonal blocks of the generalized Hessian of the loss in F (``active`` = its active
    pairs when known)."""
    active = _active(ops, 1.0 + ops.forward(F)) if active is None else active
    omega = 2 * ops.weight * active.astype(np.float64)
    if ops.model == "smsvm":
        omega[np.arange(F.shape[0]), ops.label] = 2 * ops.weight * active.sum(axis=1)
    return omega


def _groups(keys):
    """The key, start and end of each run of equal values of the grouped (non-empty) ``keys``: three
    arrays."""
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[starts], starts, np.r_[starts[1:], keys.size]


class _ClassHessians:
    """Per-class ``H_r = λ(R⁻¹)_rr I + Zᵀ diag(ω_r) Z``: the Gram part ``Zᵀ diag(ω_r) Z`` (its lower
    triangle) kept up to date by the rows whose ω changed, the Cholesky factor grown by a border row
    when J grows and recomputed only for classes whose active set changed. Grams and factors are two
    (k, capacity, capacity) buffers, matrix r read from ``buffer[r]`` in Fortran order with leading
    dimension capacity (:mod:`mlsvm.solvers.compiled_lapack`): a border row is written in place, and
    LAPACK/BLAS work on every class from one compiled loop (:mod:`mlsvm.solvers.sparse_mm_compiled`)."""

    def __init__(self, lam, R_inv, n, k, capacity):
        self.diag = lam * np.diag(R_inv)
        self.omega = np.zeros((n, k))
        self.grams = np.zeros((k, capacity, capacity))
        self.factors = np.zeros((k, capacity, capacity))
        self.valid = np.ones(k, dtype=bool)
        self.size = 0
        self.refactorizations = 0
        self._inverses = np.zeros((k, 0, 0))                 # H_r⁻¹ of :meth:`inverses`, kept per class
        self._inverse_current = np.zeros(k, dtype=bool)     # ... and whether it is that of the factor

    def factor(self, r):
        """The Cholesky factor L_r (d × d, lower triangular)."""
        d = self.size
        return np.tril(self.factors[r, :d, :d].T)

    def _reserve(self, size):
        """Buffers of at least ``size`` rows (the contents kept)."""
        capacity = self.grams.shape[1]
        if size <= capacity:
            return
        grown = max(size, 2 * capacity)
        for name in ("grams", "factors"):
            buffer = np.zeros((self.valid.size, grown, grown))
            buffer[:, :capacity, :capacity] = getattr(self, name)
            setattr(self, name, buffer)

    def grow(self, Z, z):
        """Border every H_r with the new feature column z (Z: the current n × d features)."""
        d = self.size
        self._reserve(d + 1)
        weighted = self.omega * z[:, None]                       # (n, k)
        border = Z.T @ weighted                                  # (d, k)
        corner = z @ weighted                                    # (k,)
        self.grams[:, :d, d] = border.T                          # row d of each H_r's Gram part
        self.grams[:, d, d] = corner
        border_factors(self.factors, self.valid, np.ascontiguousarray(border.T), corner, self.diag, d)
        self.size = d + 1
        self._inverse_current[:] = False

    def reset(self, d):
        """Start over with d features (all factors to be computed)."""
        self._reserve(d)
        self.size, self.valid[:], self._inverse_current[:] = d, False, False
        self.grams[:, :d, :d] = 0.0
        self.omega[:] = 0.0

    def refresh(self, Z, omega):
        """Bring the factors to the curvature ``omega`` (n × k, either memory layout: the separable
        Newton loop passes the transpose of its k × n array)."""
        # the (class, row) pairs whose ω changed, class by class (flatnonzero and divmod: a 2-D
        # nonzero costs several times more)
        classes, moved = np.divmod(np.flatnonzero((omega != self.omega).T), omega.shape[0])
        if classes.size:
            self._update_grams(Z, classes, moved, omega[moved, classes] - self.omega[moved, classes])
            self.omega = omega   # kept, not copied: every caller passes a fresh array
        self.factorize()

    def set_pairs(self, Z, classes, moved, values):
        """:meth:`refresh` from the changed entries only: ``ω[moved, classes] = values`` (pairs grouped by
        class)."""
        if classes.size:
            self._update_grams(Z, classes, moved, values - self.omega[moved, classes])
            self.omega[moved, classes] = values
        self.factorize()

    def _update_grams(self, Z, classes, moved, delta):
        """Add ``delta·z_i z_iᵀ`` to the Gram part of class r for each pair (r, i) of ``classes, moved``
        (grouped by class): one gather of their rows for all classes (the per-class gathers cost as
        much as the products: bibtex SM3L, ~100 classes x ~100 rows per step). When every δ is ±2c
        (SM3L), per class and sign a symmetric rank update (BLAS syrk, the lower triangle: half the
        work of a product); otherwise (SMSVM's true class: ω = 2c·#active) per class a product."""
        d = self.size
        magnitude = abs(float(delta[0])) if delta.size else 0.0
        if not np.all(np.abs(delta) == magnitude):   # mixed δ: per class a product
            rows = Z[moved]
            weighted = delta[:, None] * rows
            for r, start, end in zip(*(runs.tolist() for runs in _groups(classes))):
                self.grams[r, :d, :d] += (rows[start:end].T @ weighted[start:end]).T   # its Fortran reading
                self.valid[r] = False
            return
        # δ = ±magnitude: the pairs grouped by (class, sign), then one syrk per group on its rows
        key = 2 * classes + (delta < 0)
        order = np.argsort(key, kind="stable")
        group_keys, starts, ends = _groups(key[order])
        groups, negative = np.divmod(group_keys, 2)
        rows = np.ascontiguousarray(Z[moved[order]])
        rank_updates(self.grams, rows, groups, starts, ends, np.where(negative, -magnitude, magnitude), d)
        self.valid[groups] = False

    def factorize(self):
        """Recompute the factors of the classes whose Gram part changed."""
        stale = np.flatnonzero(~self.valid)
        failed = factorize_classes(self.grams, self.factors, self.diag, stale, self.size)
        if failed >= 0:
            raise np.linalg.LinAlgError(f"potrf failed: the Hessian of class {failed} is not positive definite")
        self.valid[stale] = True
        self._inverse_current[stale] = False
        self.refactorizations += stale.size

    def solve(self, classes, rhs):
        """``H_r⁻¹ rhs[m]`` for ``r = classes[m]``: rhs of shape (m, d), one right-hand side per row
        (a new array)."""
        solution = np.array(rhs, dtype=np.float64, order="C")
        solve_classes(self.factors, np.asarray(classes, dtype=np.int64), self.size, solution)
        return solution

    def inverses(self):
        """``H_r⁻¹`` stacked (k, d, d), from the current factors (the CG preconditioner): recomputed only
        for the classes whose factor changed since the last call (a Newton step re-factorises the
        classes whose active set changed; the array is overwritten by the next call)."""
        d = self.size
        if self._inverses.shape[1] != d:
            self._inverses = np.empty((self.valid.size, d, d))
            self._inverse_current[:] = False
        stale = np.flatnonzero(~self._inverse_current)
        if stale.size:
            self._inverses[stale] = self.solve(stale, np.broadcast_to(np.eye(d), (stale.size, d, d)))
            self._inverse_current[stale] = True
        return self._inverses


def _hessian_product(Z, ops, omega_active, lam, R_inv, D):
    """The generalized Hessian times D through the dense n × k products; ``omega_active`` is 2c on the
    active pairs, 0 elsewhere (SMSVM: also 0 at r = y_i, so ``Tᵀ`` reduces to one scatter into the true
    class)."""
    change = Z @ D
    if ops.model == "smsvm":
        rows = np.arange(change.shape[0])
        weighted = omega_active * (change - change[rows, ops.label][:, None])
        weighted[rows, ops.label] -= weighted.sum(axis=1)
        return lam * D @ R_inv + Z.T @ weighted
    return lam * D @ R_inv + Z.T @ ops.adjoint(omega_active * ops.forward(change))


#: SMSVM's Newton steps take T and Tᵀ on the listed active pairs when the pairs and one own-class
#: entry per point are fewer than this fraction of the n × k entries, and dense products otherwise:
#: a pair costs a dot product of length ``|J|``, which runs at about a third of BLAS's rate per entry
#: (``benchmarks/bench_smsvm_pair_products.py``)
PAIRS_BELOW = 0.25


class _ActivePairs:
    """SMSVM's active pairs (i, c) — c ≠ y_i with margin ``1 + F_ic − F_iy_i > 0`` — listed by point,
    with the features Z in rows (C order: pass them so, a copy per basis rather than per Newton step):
    T and Tᵀ on these pairs only, ``O(|J|)`` per pair instead of two ``n × |J| × k`` products per
    Hessian product (many classes, few of them active per point)."""

    def __init__(self, active, label, Z):
        # flatnonzero and divmod: a 2-D nonzero costs several times more (as in _ClassHessians.refresh)
        self.points, self.classes = np.divmod(np.flatnonzero(active), active.shape[1])
        self.starts = np.searchsorted(self.points, np.arange(active.shape[0] + 1))
        self.label = label.astype(np.int64)
        self.Z = np.ascontiguousarray(Z)
        self.k = active.shape[1]

    @classmethod
    def listed(cls, ops, active, Z):
        """The ``active`` pairs listed when listing them pays (:data:`PAIRS_BELOW`), else None."""
        if np.count_nonzero(active) + active.shape[0] >= PAIRS_BELOW * active.size:
            return None
        return cls(active, ops.label, Z)

    def adjoint(self, values):
        """``Zᵀ Tᵀ(V)`` (d × k) for V equal to ``values`` on the pairs, 0 elsewhere."""
        out_t = np.empty((self.k, self.Z.shape[1]))
        smsvm_pair_adjoint(self.Z, self.starts, self.classes, self.label, np.ascontiguousarray(values), out_t)
        return out_t.T

    def product(self, D, weight):
        """``Zᵀ Tᵀ(weight · T(Z D))`` with T(Z D) on the pairs: the loss part of the generalized Hessian
        times D (d × k) when ``weight`` = 2c."""
        values = np.empty(self.classes.size)
        smsvm_pair_differences(self.Z, np.ascontiguousarray(D.T), self.starts, self.classes, self.label, values)
        return self.adjoint(weight * values)


def _joint_direction(Z, ops, F, hessians, lam, R_inv, gradient, cg_tol, cg_max=500, active=None, pairs=None):
    """Newton direction on all classes: SciPy's CG on the generalized Hessian (a ``LinearOperator``
    on the flattened d × k direction), preconditioned by :func:`_preconditioner`, to relative residual
    ``cg_tol`` (an inexact Newton step: every CG iterate is a descent direction, and the exact line
    search keeps the decrease). ``active`` = the active pairs of F when known; SMSVM's products on its listed
    active ``pairs`` (:class:`_ActivePairs`) when given. Returns ``(D, solved)``, ``solved`` whether the
    residual reached ``cg_tol`` (CG within ``cg_max`` products, or the exact class-by-class solve)."""
    if F.shape[1] == 1 or _separable(ops, R_inv):
        # the blocks are the whole Hessian: exact Newton, class by class
        return hessians.solve(np.arange(F.shape[1]), -gradient.T).T, True
    shape = gradient.shape
    if pairs is not None:
        product = lambda D: lam * D @ R_inv + pairs.product(D, 2 * ops.weight)
    else:
        omega_active = 2 * ops.weight * (_active(ops, 1.0 + ops.forward(F)) if active is None else active)
        product = lambda D: _hessian_product(Z, ops, omega_active, lam, R_inv, D)
    precondition = _preconditioner(ops, hessians, lam)
    size = gradient.size
    hessian = LinearOperator((size, size), dtype=np.float64, matvec=lambda v: product(v.reshape(shape)).ravel())
    preconditioner = LinearOperator((size, size), dtype=np.float64,
                                    matvec=lambda v: precondition(v.reshape(shape)).ravel())
    # info > 0 (cg_max reached) still leaves a descent direction; the line search and the outer
    # Newton stop (gap and stationarity) decide
    D, info = cg(hessian, -gradient.ravel(), rtol=cg_tol, atol=0.0, maxiter=cg_max, M=preconditioner)
    if not np.all(np.isfinite(D)):
        # e.g. λ = 1e-300: the preconditioner's common mode (divided by λ) overflows. No later step
        # can mend it (each ran CG to cg_max on NaN, to the end of max_iter)
        raise FloatingPointError("the joint Newton direction is not finite (CG on the generalized Hessian)")
    return D.reshape(shape), info == 0


def _preconditioner(ops, hessians, lam):
    """The CG preconditioner of the joint Newton system, a map of d × k blocks: the per-class
    Hessian factors; for SMSVM with the common-class mode solved exactly.

    SMSVM's loss is blind to a shift common to all classes (its Hessian in F_i annihilates 1), so
    the generalized Hessian maps D = v1ᵀ to λv1ᵀ (R = I) and keeps {D : D1 = 0} invariant: the
    common part is divided by λ, the class blocks act on the rest, projected back onto D1 = 0 (a
    symmetric positive definite map). The class blocks alone treat v1ᵀ as stiff as the loss
    curvature of every class: on yeast (12 argmax classes, |J| = 100) that mode set the CG
    iteration count (Hessian products 7,935 → 1,885; J = all: CG 21 → 3.8 s CPU).

    Parameters
    ----------
    ops : MarginOperator
        The margin map (its ``model`` decides the SMSVM correction).
    hessians : _ClassHessians
        The per-class factors.
    lam : float
        Regularisation weight λ.
    """
    if hessians.size <= 300:  # explicit block inverses: one batched product per CG step
        blocks = hessians.inverses()
        per_class = lambda V: np.matmul(blocks, V.T[:, :, None])[:, :, 0].T
    else:
        per_class = lambda V: hessians.solve(np.arange(V.shape[1]), V.T).T
    return _with_common_mode(per_class, lam) if ops.model == "smsvm" else per_class


def _with_common_mode(per_class, lam):
    """SMSVM's preconditioner from a map ``per_class`` of d × k blocks: the common-class mode (a shift
    shared by all classes, where the Hessian is λ·I) solved exactly, ``per_class`` on the rest,
    projected back onto D1 = 0 (see :func:`_preconditioner`)."""
    def precondition(V):
        common = V.mean(axis=1, keepdims=True)
        out = per_class(V - common)
        return out - out.mean(axis=1, keepdims=True) + common / lam

    return precondition


def _separable(ops, R_inv) -> bool:
    """SM3L with a diagonal R⁻¹ (off-diagonal entries exactly 0): the objective is a sum of one
    problem per label, which both the per-label Newton steps and the candidate scoring rely on."""
    return ops.model == "sm3l" and not np.any(R_inv - np.diag(np.diag(R_inv)))


def _stop_value(Z, C, ops, lam, R, R_inv, xi, coupling, factor, history, sums=None):
    """The Newton stop test of one iterate from its slacks ``xi`` (either layout) or their ``sums``
    (Σξ, Σξ²) and ``coupling`` = ZᵀTᵀ(2c·ξ): ``(relative gap, max(|gap|, scaled stationarity), e_J)``,
    recorded in ``history``."""
    primal, dual, gap = _objective_and_dual(Z, C, None, ops, lam, R, R_inv, xi, coupling, sums)
    stop_value = max(abs(gap), _stationarity(Z, C, None, ops, lam, R_inv, factor, coupling))
    if history is not None:
        for key, value in (("primal", primal), ("dual", dual), ("stop_value", stop_value), ("relative_gap", gap)):
            history.setdefault(key, []).append(value)
    return gap, stop_value, primal


class _LabelScores:
    """The state of the separable Newton loop (:func:`_newton_separable`), which the greedy run carries
    from one basis to the next: the scores ``F_t`` (Fᵀ, k × n), the margins ``margin_t`` ((1 + T(F))ᵀ),
    the per-label ``xi_sums`` and ``xi_squares`` (Σξ, Σξ²) and ``coupling_t`` ((ZᵀTᵀ(2c·ξ))ᵀ, k × d).
    A basis point added with α_j = 0 changes none of them but adds one coupling column (:meth:`grow`):
    the next solve starts without the k × n × d product and the pass over the scores."""

    def __init__(self):
        self.F_t = None

    def describes(self, F) -> bool:
        """Whether this state is that of the scores F (F is the transpose of ``F_t``)."""
        return self.F_t is not None and F.base is self.F_t

    def start(self, ops, F, Z):
        """The state of the scores F on the features Z, computed afresh."""
        negated_t = ops.negated_signs_t                      # Tᵀ(V) = −Ys∘V
        self.F_t = np.ascontiguousarray(F.T)
        self.margin_t = negated_t * self.F_t
        self.margin_t += 1.0                                 # (1 + T(F))ᵀ, T(F) = −Ys∘F
        xi_t = np.maximum(self.margin_t, 0.0)
        self.xi_sums, self.xi_squares = xi_t.sum(axis=1), np.sum(xi_t * xi_t, axis=1)   # per label, for the gap
        # the factor 2c (= 2) applied after the product (a power of two: the same bits)
        self.coupling_t = 2 * ops.weight * ((negated_t * xi_t) @ Z)

    def grow(self, ops, z):
        """The basis grew by the feature column z, its coefficients 0 (the scores unchanged)."""
        if self.F_t is not None:
            column = 2 * ops.weight * ((ops.negated_signs_t * np.maximum(self.margin_t, 0.0)) @ z)
            self.coupling_t = np.column_stack([self.coupling_t, column])


def _newton_separable(Z, ops, lam, R, R_inv, C, F, tol, max_iter, hessians, history, factor, on_iterate,
                      scores=None):
    """The joint Newton loop of :func:`newton_fixed_basis` for SM3L with a diagonal R⁻¹: k independent
    label problems, one exact Newton step per label, each with its own exact step length.

    A label whose step changed the state of none of its terms (its active set after the step is the
    one its Newton direction was computed on) has reached the exact minimiser of its problem (the
    step solved the label's objective on that active set, whose gradient is then 0): it takes no more
    steps on this basis (bibtex, |J| = 200: most labels settle in one or two steps, a few need five or
    more). Its slacks and coupling column stay those of its last iterate, so the stop test still reads
    every label; the labels still moving take the same steps as without this. The scores are kept
    transposed (k × n, one copy in and one out): the line search reads each label's n terms
    contiguously; F is returned as the transpose of that array (n × k, Fortran order). ``scores`` (a
    :class:`_LabelScores`) is the loop's state, updated in place: when it describes F already (the
    greedy run, after an addition with α_j = 0), the loop starts from it, and the Hessians' curvature
    is the one they were left with."""
    scores = _LabelScores() if scores is None else scores
    if scores.describes(F):
        hessians.factorize()                                 # the classes whose border pivot failed
    else:
        scores.start(ops, F, Z)
        hessians.refresh(Z, (2 * ops.weight * (scores.margin_t > 0)).T)   # the curvature ω, transposed
    F_t, margin_t, coupling_t = scores.F_t, scores.margin_t, scores.coupling_t
    xi_sums, xi_squares = scores.xi_sums, scores.xi_squares
    negated_t = ops.negated_signs_t
    C = np.array(C)
    Z_t = Z.T
    w2 = 2 * ops.weight
    scale = lam * np.diag(R_inv)
    stop_value, settled = np.inf, np.inf
    moving = np.arange(C.shape[1])                           # the labels not yet at their minimiser
    for iteration in range(max_iter + 1):
        gap, stop_value, _ = _stop_value(Z, C, ops, lam, R, R_inv, None, coupling_t.T, factor, history,
                                         sums=(float(xi_sums.sum()), float(xi_squares.sum())))
        if on_iterate is not None:
            on_iterate(C, F_t.T)
        if stop_value <= tol:
            return C, F_t.T, iteration, stop_value, True
        if iteration == max_iter:
            break
        if moving.size == 0:
            # Every label at the exact minimiser of its problem on its active set: the stop value is
            # above tol by round-off. The labels step again from a state computed afresh from C (the
            # carried scores and sums gather round-off); when they settle again without halving the
            # stop value, round-off is all that is left: a stall, which more steps would not mend.
            if stop_value > 0.5 * settled:
                if history is not None:
                    history["stalled"] = iteration
                return C, F_t.T, iteration, stop_value, False
            settled = stop_value
            scores.start(ops, Z @ C, Z)
            hessians.refresh(Z, (2 * ops.weight * (scores.margin_t > 0)).T)
            F_t, margin_t, coupling_t = scores.F_t, scores.margin_t, scores.coupling_t
            xi_sums, xi_squares = scores.xi_sums, scores.xi_squares
            moving = np.arange(C.shape[1])
        gradient_t = coupling_t[moving] + scale[moving, None] * C[:, moving].T
        D_t = hessians.solve(moving, -gradient_t)            # the Newton directions, one row per moving label
        D = D_t.T
        change_t = D_t @ Z_t                                 # (ZD)ᵀ of the moving labels
        t = sm3l_line_steps(scale[moving] * np.sum(D * D, axis=0), scale[moving] * np.sum(C[:, moving] * D, axis=0),
                            margin_t, negated_t, change_t, moving, ops.weight)
        C[:, moving] += t * D
        weighted, pair_label, pair_point = sm3l_take_steps(F_t, change_t, t, negated_t, moving, margin_t,
                                                           xi_sums, xi_squares)
        coupling_t[moving] = w2 * (weighted @ Z)
        # the new curvature on the pairs whose term changed state; the labels without any are done
        labels = moving[pair_label]
        hessians.set_pairs(Z, labels, pair_point, w2 * (margin_t[labels, pair_point] > 0))
        moving = np.unique(labels)
    return C, F_t.T, max_iter, stop_value, False


def _line_step(ops, F, C, D, dF, lam, R_inv, margin=None):
    """Exact step length along (D, dF) (``margin`` = 1 + T(F) when known): one problem over the n × k
    terms, of which few change state along the step, so the bounded search of
    :func:`minimize_with_decrease` folds the others (bibtex SMSVM, 147 classes, |J| = 20, profiled:
    2.4 → 1.3 s over the fit against Newton on all terms); the pairs outside Ω get e = 0 (constant
    terms)."""
    e = ops.forward(dF)
    e *= ops.mask
    u = 1.0 + ops.forward(F) if margin is None else margin
    a = lam * float(np.sum((D @ R_inv) * D))
    b = lam * float(np.sum((C @ R_inv) * D))
    t, _ = minimize_with_decrease(a, b, u.reshape(1, -1), e.reshape(1, -1), ops.weight)
    return float(t[0])


def _stationarity(Z, C, F, ops, lam, R_inv, factor=None, coupling=None) -> float:
    """The scaled stationarity residual of :func:`mlsvm.formulations.sparse_mm.kkt_residuals` with the
    implied multipliers μ = 2c·ξ: ``λK_JJAR⁻¹ + K_JᵀTᵀ(μ)``, here ``L(λCR⁻¹ + ZᵀTᵀ(μ))`` with
    ``K_JJ = LLᵀ``, ``A = L⁻ᵀC`` (``factor`` = L; without it, in the coordinates C); ``coupling`` =
    ``ZᵀTᵀ(μ)`` when known."""
    regular = lam * C @ R_inv
    coupling = Z.T @ ops.adjoint(2 * ops.weight * ops.slack(F)) if coupling is None else coupling
    if factor is not None:
        regular, coupling = factor @ regular, factor @ coupling
    return float(np.max(np.abs(regular + coupling), initial=0.0)
                 / (1.0 + max(np.max(np.abs(regular), initial=0.0), np.max(np.abs(coupling), initial=0.0))))


def newton_fixed_basis(Z, ops, lam, R, C, F=None, *, tol=1e-10, max_iter=1000, joint=True,
                       hessians=None, history=None, factor=None, on_iterate=None, scores=None):
    """Alg. 3 on the features Z: minimise ``λ/2 tr(C R⁻¹ Cᵀ) + c Σ_Ω max(0, 1 + T(ZC))²``.

    Returns ``(C, F, n_iter, stop_value, converged)``: stops when the relative duality gap (implied
    multipliers) and the scaled stationarity residual (:func:`_stationarity`, in the coefficients A
    when ``factor`` = L is given) are both ≤ tol, after at most ``max_iter`` Newton steps (or
    class-wise sweeps). The gap alone is quadratic in the gradient: on yeast a gap of 5.5e-6 came with
    a stationarity residual of 3.3e-2 (issue 19). ``history`` gets ``primal``, ``dual``, ``stop_value``
    and ``relative_gap`` per iteration; ``on_iterate(C, F)`` sees each iterate. When the stop value is
    held above tol by round-off (the steps no longer shrink the gradient on an unchanged active set),
    the loop stops not converged and ``history["stalled"]`` holds the iteration; so does a loop whose
    last ``STALL_STEPS`` steps (or sweeps) lowered neither e_J nor the least stop value.

    Parameters
    ----------
    Z : array of shape (n, d)
        The features ``Z = K_J L_J⁻ᵀ`` of the basis.
    ops : MarginOperator
        The margin map T, pair set Ω and weight c.
    lam : float
        Regularisation weight λ > 0.
    R : array of shape (k, k)
        The label-correlation matrix (identity for SMSVM).
    C : array of shape (d, k)
        Starting coefficients in the coordinates of Z.
    F : array of shape (n, k) or None, optional
        The scores ``Z C`` when already known.
    tol : float, default=1e-10
        Tolerance on the relative duality gap and the scaled stationarity residual.
    max_iter : int, default=1000
        Maximum number of Newton steps (or class-wise sweeps).
    joint : bool, default=True
        Joint Newton steps on all classes; False: one step per class in turn.
    hessians : _ClassHessians or None, optional
        The per-class Hessian factors to reuse (the greedy run grows them); None builds them.
    history : dict or None, optional
        Lists to append ``primal``, ``dual``, ``stop_value`` and ``relative_gap`` to.
    factor : array of shape (d, d) or None, optional
        ``L`` with ``K_JJ = LLᵀ``: the stationarity residual is then measured in the coefficients A.
    on_iterate : callable or None, optional
        Called as ``on_iterate(C, F)`` at each iterate.
    scores : _LabelScores or None, optional
        The separable loop's state, carried by the greedy run from one basis to the next (SM3L with
        a diagonal R⁻¹ and ``joint=True`` only).
    """
    R_inv = np.linalg.inv(R)
    F = Z @ C if F is None else F
    rows = np.ascontiguousarray(Z) if ops.model == "smsvm" else None   # Z by rows, for the active pairs
    if hessians is None:
        hessians = _ClassHessians(lam, R_inv, Z.shape[0], C.shape[1], Z.shape[1])
        hessians.reset(Z.shape[1])
    if joint and _separable(ops, R_inv):
        return _newton_separable(Z, ops, lam, R, R_inv, C, F, tol, max_iter, hessians, history, factor, on_iterate,
                                 scores)

    def state(F):
        """1 + T(F), its active pairs (as a mask, and for SMSVM listed when that pays), the slacks and
        ZᵀTᵀ(2c·ξ), once per iterate: the gap, the stationarity, the gradient, the curvature, the
        stall test and the line search all read them."""
        margin = 1.0 + ops.forward(F)
        active = _active(ops, margin)
        xi = np.where(active, margin, 0.0)
        pairs = _ActivePairs.listed(ops, active, rows) if ops.model == "smsvm" else None
        if pairs is not None:   # ξ > 0 on the active pairs only
            coupling = pairs.adjoint(2 * ops.weight * xi[pairs.points, pairs.classes])
        else:
            coupling = Z.T @ ops.adjoint(2 * ops.weight * xi)
        return margin, active, xi, pairs, coupling

    gap, previous_gap, stop_value = np.inf, np.inf, np.inf
    last_step, floor, best = None, np.inf, (np.inf, C, F)
    lowest, idle = np.inf, 0     # the least primal objective so far; the steps since one lowered either
    for iteration in range(max_iter + 1):
        margin, active, xi, pairs, coupling = state(F)
        gap, stop_value, primal = _stop_value(Z, C, ops, lam, R, R_inv, xi, coupling, factor, history)
        if on_iterate is not None:
            on_iterate(C, F)
        if stop_value <= tol:
            return C, F, iteration, stop_value, True
        if iteration == max_iter:
            break
        if not joint and gap > 0.5 * previous_gap:
            # Class-wise sweeps are block coordinate descent: linear, and slow when the classes are
            # strongly coupled (small λ, SMSVM with 2 classes). Once a sweep fails to halve the gap,
            # the remaining steps are joint Newton steps (exact; finite convergence).
            joint = True
            if history is not None:
                history["joint_from_sweep"] = iteration
        previous_gap = gap
        idle = 0 if stop_value < best[0] or primal < lowest else idle + 1
        lowest = min(lowest, primal)
        if idle >= STALL_STEPS:
            # In exact arithmetic every step lowers e_J (descent directions, exact line searches).
            # These lowered neither it nor the stop value: they move at round-off. Joint steps: margins
            # at 0 flicker (so the test below never sees the active set unchanged) and CG stops at
            # cg_max. Sweeps: a gap at round-off (negative) never fails to halve, so they never turn
            # joint. Without this rule both went on to max_iter
            if history is not None:
                history["stalled"] = iteration
            stop_value, C, F = best
            return C, F, iteration, stop_value, False
        if stop_value < best[0]:   # the joint steps rebind C and F; the sweeps write them in place
            best = (stop_value, C, F) if joint else (stop_value, C.copy(), F.copy())
        if joint:
            gradient = lam * C @ R_inv + coupling
            norm = np.linalg.norm(gradient)
            if last_step is not None and norm > 0.5 * last_step[1] and np.array_equal(active, last_step[0]):
                # The last step left every term's state as it was: it solved the quadratic of that
                # active set to CG's tolerance (≤ 1e-2), and the gradient should have shrunk by as
                # much. It did not even halve: what is left is round-off. The step is taken again from
                # scores computed afresh from C (F + t·dF gathers round-off); when that does not halve
                # the gradient either, the loop has stalled, and more steps would not mend it. Steps at
                # round-off move at random: it returns its iterate of least stop value.
                if norm > 0.5 * floor:
                    if history is not None:
                        history["stalled"] = iteration
                    stop_value, C, F = best
                    return C, F, iteration, stop_value, False
                floor, F = norm, Z @ C
                margin, active, xi, pairs, coupling = state(F)
                gradient = lam * C @ R_inv + coupling
                norm = np.linalg.norm(gradient)
            hessians.refresh(Z, _curvature(ops, F, active))
            # forcing term: loose while the gap is large, tight near the optimum (superlinear)
            D, solved = _joint_direction(Z, ops, F, hessians, lam, R_inv, gradient,
                                         cg_tol=min(1e-2, max(np.sqrt(max(gap, 0.0)), 1e-12)), active=active,
                                         pairs=pairs)
            last_step = (active, norm) if solved else None
            dF = Z @ D
            t = _line_step(ops, F, C, D, dF, lam, R_inv, margin)
            if t == 0.0 and not solved:
                # no decrease along a direction CG did not solve for (a CG iterate is a descent direction
                # in exact arithmetic: this is round-off). The iterate is unchanged, so every later step
                # would repeat this one, CG to cg_max each time, to max_iter (λ = 1e-300); a solved step
                # gets the retry from fresh scores above
                if history is not None:
                    history["stalled"] = iteration
                stop_value, C, F = best
                return C, F, iteration, stop_value, False
            C, F = C + t * D, F + t * dF
            continue
        for r in range(C.shape[1]):  # Alg. 3: one Newton step per class, exact line search
            hessians.refresh(Z, _curvature(ops, F))
            grad_F = ops.adjoint(2 * ops.weight * ops.slack(F))
            g = lam * C @ R_inv[:, r] + Z.T @ grad_F[:, r]
            d = -hessians.solve([r], g[None, :])[0]
            df = Z @ d
            u, e = ops.column_terms(F, r, df)
            t = minimize_piecewise_quadratic(lam * R_inv[r, r] * (d @ d), lam * d @ (C @ R_inv[:, r]),
                                             u, e, ops.weight)
            C[:, r] += t * d
            F[:, r] += t * df
    return C, F, max_iter, stop_value, False


def candidate_gains(gram, candidates, ops, F, lam, R_inv, columns=None):
    """(3.12) for every candidate j at once: the k one-dimensional problems in α_{j,r} (r in turn,
    α_J fixed), each solved exactly on the true objective. Returns ``(decrease of e_J, α_{j,·})``,
    shapes (κ,) and (κ, k). A candidate's scores are ``F + K[:, j] ⊗ α_{j,·}`` (classes before r
    moved): :meth:`MarginOperator.candidate_terms` reads them without a copy of F per candidate.

    Parameters
    ----------
    gram : array of shape (n, n) or KernelColumns
        Gram (kernel) matrix of the training points.
    candidates : array of int
        Candidate basis points.
    ops : MarginOperator
        The margin map T and its pair set Ω (:class:`mlsvm.formulations.sparse_mm.MarginOperator`).
    F : ndarray or None
        Current training scores (cache).
    lam : float
        Regularisation weight λ (> 0) of the sparse models.
    R_inv : array of shape (k, k)
        ``R⁻¹``.
    columns : array of shape (n, κ) or None, optional
        ``K[:, candidates]`` when already computed.
    """
    columns = (gram_source(gram).columns(candidates) if columns is None else columns).T   # (κ, n)
    rows = np.arange(len(candidates))
    K_jj = columns[rows, candidates]
    if _separable(ops, R_inv):
        # R⁻¹ diagonal: the k label problems of a candidate do not see each other (b_r = λ(R⁻¹)_rr F_jr),
        # and label r's terms are max(0, u_ir + t·K_ij·(−Ys_ir)) with u shared by the candidates: all
        # κ × k problems at once, their sums as matrix products (bibtex, 159 labels: 25 × 159 problems
        # of 4880 terms per addition)
        scale = np.diag(R_inv)
        negated_t = ops.negated_signs_t
        # u and −Ys as transposes of k × n arrays (F is one after the separable Newton loop): read label
        # by label without a transposed copy
        u = (1.0 + negated_t * np.asarray(F).T).T
        t, gain = minimize_outer_terms(lam * K_jj[:, None] * scale, lam * F[candidates] * scale,
                                       u, negated_t.T, columns, ops.weight)
        return gain.sum(axis=1), t
    if ops.model == "smsvm":   # the terms written and solved in one compiled loop
        return smsvm_candidate_gains(F, ops.label, columns, K_jj, F[candidates], lam, R_inv, ops.weight)
    own_scores = F[candidates].copy()     # F_j + K_jj α_{j,·}: the candidate's own row, as it moves
    coef = np.zeros((len(candidates), F.shape[1]))
    decrease = np.zeros(len(candidates))
    for r in range(F.shape[1]):
        u, e = ops.candidate_terms(F, r, columns, coef)
        a = lam * R_inv[r, r] * K_jj
        b = lam * own_scores @ R_inv[r]    # λ Σ_m (R⁻¹)_rm ⟨φ_j, w_m⟩ = λ (F_j R⁻¹)_r
        t, gain = minimize_with_decrease(a, b, u, e, ops.weight)
        decrease += gain
        coef[:, r] = t
        own_scores[:, r] += t * K_jj
    return decrease, coef


def greedy_sparse(gram, ops, lam, R=None, *, d_max=50, kappa=25, tol=1e-10, max_iter=1000,
                  min_rel_decrease=1e-3, joint=True, random_state=None, basis=None, callback=None) -> SolverResult:
    """Algorithm 4 (SMSVM/SM3L): grow J greedily, re-optimise α_J by Newton after each addition.

    ``basis`` given: skip selection and solve for that fixed J (points numerically in the span of
    the ones before them are left out: same span, same optimum). Returns ``primal`` with ``coef``
    (A, ``|J|`` × k on ``basis``), ``basis``, ``F`` (training scores); ``dual`` with ``mu`` (the implied
    multipliers 2c·ξ); history ``primal``, ``dual``, ``stop_value``, ``relative_gap`` (every Newton
    iteration of every α_J solve) and ``objective_path`` (e_J after each addition). ``max_iter``
    bounds the Newton iterations (class-wise: sweeps) of the whole run; when it ends the run, the
    result is not converged and a ``ConvergenceWarning`` says so (issue 14: it used to bound each
    solve, so ``max_iter=1`` ran 17–38 steps and said converged). ``callback(n_iter, primal, dual)``
    sees every iterate in the result's names.

    Parameters
    ----------
    gram : array of shape (n, n) or KernelColumns
        The training Gram matrix K, held or computed by columns on demand (only the columns of
        the basis and of the candidates are read).
    ops : MarginOperator
        The margin map T, pair set Ω and weight c
        (:class:`mlsvm.formulations.sparse_mm.MarginOperator`).
    lam : float
        Regularisation weight λ > 0.
    R : array of shape (k, k) or None, optional
        SM3L's label-correlation matrix; None means the identity.
    d_max : int, default=50
        Maximum basis size ``|J|``.
    kappa : int, default=25
        Number of random candidates scored per addition.
    tol : float, default=1e-10
        Tolerance of the Newton stop (relative gap and scaled stationarity).
    max_iter : int, default=1000
        Newton iterations (class-wise: sweeps) of the whole run.
    min_rel_decrease : float, default=1e-3
        Stop growing J when the relative decrease of e_J after an addition is below it.
    joint : bool, default=True
        Joint Newton steps on all classes (``"fast"``); False: one step per class in turn (the
        paper).
    random_state : int, Generator or None, optional
        Seeds the candidate sampling.
    basis : array of int or None, optional
        A fixed basis J: skip the selection and solve on it.
    callback : callable or None, optional
        Called as ``callback(n_iter, primal, dual)`` at every iterate.
    """
    start = time.perf_counter()
    n, k = ops.Y.shape
    R = np.eye(k) if R is None else R
    R_inv = np.linalg.inv(R)
    rng = np.random.default_rng(random_state)
    source = gram_source(gram)   # the columns of K, held or computed from X on demand
    diag = source.diagonal()
    inner_tol = max(tol, 1e-6)
    capacity = d_max if basis is None else len(basis)
    hessians = _ClassHessians(lam, R_inv, n, k, capacity)
    L_buffer = np.zeros((capacity, capacity))            # Cholesky factor of K_JJ, grown by rows
    Z_buffer = np.zeros((n, capacity), order="F")        # features Z = K_J L⁻ᵀ
    C, F = np.zeros((0, k)), np.zeros((n, k))
    chosen: list[int] = []
    path = []
    features = lambda: Z_buffer[:, :len(chosen)]
    factor = lambda: L_buffer[:len(chosen), :len(chosen)]

    # SM3L's label problems (R⁻¹ diagonal, joint steps): the Newton loop's state, carried across additions
    scores = _LabelScores() if joint and _separable(ops, R_inv) else None

    def add(j, coef, column=None):
        """Grow J by j with the coefficients ``coef`` (``column`` = K[:, j] when already computed)."""
        nonlocal C, F
        d = len(chosen)
        column = source.columns([j])[:, 0] if column is None else column
        line = solve_triangular(factor(), column[chosen], lower=True) if d else np.zeros(0)
        pivot = np.sqrt(diag[j] - line @ line)
        z = (column - features() @ line) / pivot
        hessians.grow(features(), z)
        L_buffer[d, :d], L_buffer[d, d], Z_buffer[:, d] = line, pivot, z
        C = np.vstack([C + np.outer(line, coef), pivot * coef[None, :]])
        if np.any(coef):
            F = np.add(F, np.outer(column, coef), out=np.empty_like(F))   # F keeps its memory layout
        elif scores is not None:
            scores.grow(ops, z)
        chosen.append(int(j))

    def eligible(js, columns):
        """The points of js (columns = K[:, js]) whose pivot is not numerically 0."""
        if not chosen:
            return diag[js] > 0
        lines = solve_triangular(factor(), columns[chosen], lower=True)
        return diag[js] - np.sum(lines * lines, axis=0) > PIVOT_RTOL * diag[js]

    def set_fixed_basis(js):
        """The factor of K_JJ at once; if a pivot is too small, grow it point by point instead."""
        try:
            L = np.linalg.cholesky(source.block(js, js))
            ok = np.all(np.diag(L) ** 2 > PIVOT_RTOL * diag[js])
        except np.linalg.LinAlgError:
            ok = False
        if not ok:  # a point in the span of those before it changes nothing: skipped
            for j in js:
                column = source.columns([j])
                if eligible(np.array([j]), column)[0]:
                    add(j, np.zeros(k), column[:, 0])
            return
        d = len(js)
        L_buffer[:d, :d] = L
        Z_buffer[:, :d] = solve_triangular(L, source.columns(js).T, lower=True).T
        chosen.extend(int(j) for j in js)
        hessians.reset(d)

    history = {"primal": [], "dual": [], "stop_value": [], "relative_gap": []}
    seen = [0]

    def on_iterate(C, F):
        seen[0] += 1
        if callback is not None:
            A = solve_triangular(factor().T, C, lower=False)
            callback(seen[0], {"coef": A, "basis": np.asarray(chosen), "F": F}, {"mu": 2 * ops.weight * ops.slack(F)})

    def solve_on_basis(C, F, tolerance):
        """Newton on the current J within what is left of the run's budget ``max_iter``."""
        newton_history = {}
        C, F, iters, stop_value, converged = newton_fixed_basis(
            features(), ops, lam, R, C, F, tol=tolerance, max_iter=max_iter - total[0], joint=joint,
            hessians=hessians, history=newton_history, factor=factor(), on_iterate=on_iterate, scores=scores)
        total[0] += iters
        for key in ("primal", "dual", "stop_value", "relative_gap"):
            history[key].extend(newton_history[key])
        if "joint_from_sweep" in newton_history:
            history["joint_from_sweep"] = newton_history["joint_from_sweep"]
        stalled = "stalled" in newton_history     # kept for the last solve only: the run's result
        if stalled:
            history["stalled"] = newton_history["stalled"]
        else:
            history.pop("stalled", None)
        return C, F, stop_value, converged, stalled

    total = [0]
    stop_rule = "d_max"
    if basis is not None:
        set_fixed_basis(np.asarray(basis, dtype=int))
        C = np.zeros((len(chosen), k))
    else:
        first = rng.integers(n)  # Alg. 4 step 1: a random example
        if diag[first] <= 0:     # the zero vector in feature space (an empty sparse row, linear
            nonzero = np.flatnonzero(diag > 0)   # kernel) spans nothing and has pivot 0: draw again
            if nonzero.size == 0:              # among the examples that span something
                raise ValueError("X spans nothing in feature space (the Gram matrix is zero: every example "
                                 "is the zero vector for this kernel): there is no basis to select")
            first = rng.choice(nonzero)
        add(first, np.zeros(k))
    while True:
        selecting = basis is None and len(chosen) < d_max
        C, F, stop_value, converged, stalled = solve_on_basis(C, F, inner_tol if selecting else tol)
        path.append(history["primal"][-1])
        # max_iter bounds the whole run: the budget is spent; or the final solve stalled. A solve that
        # stalled while J still grows ends at round-off, as exact as this J allows: the selection goes
        # on, and the solve on the final J is the one certified.
        if not converged and not (selecting and stalled):
            stop_rule = "stalled" if stalled else "max_iter"
            break
        if not selecting:
            stop_rule = "fixed basis" if basis is not None else "d_max"
            break
        if len(path) > 1 and (path[-2] - path[-1]) < min_rel_decrease * abs(path[-2]):
            stop_rule = "relative decrease"
            break
        outside = np.setdiff1d(np.arange(n), chosen)
        sampled = rng.choice(outside, size=min(kappa, outside.size), replace=False)
        columns = source.columns(sampled)
        keep = eligible(sampled, columns)
        candidates, columns = sampled[keep], columns[:, keep]
        if candidates.size == 0:
            stop_rule = "no eligible candidate"
            break
        decrease, coef = candidate_gains(source, candidates, ops, F, lam, R_inv, columns=columns)
        best = int(np.argmax(decrease))
        if decrease[best] <= 0:
            stop_rule = "no decrease"
            break
        # Alg. 4 re-optimises α_J from the candidate's α_{j,·} of (3.12); SM3L's separable loop starts
        # from the previous optimum instead (α_j = 0: the same unique optimum on the new J), whose
        # scores, margins and curvature it carries over
        add(candidates[best], np.zeros(k) if scores is not None else coef[best], columns[:, best])
    if tol < inner_tol and stop_rule in ("relative decrease", "no eligible candidate", "no decrease"):
        # the selection ended on a J last solved to the inner tolerance: solved again to tol
        C, F, stop_value, converged, stalled = solve_on_basis(C, F, tol)
        path[-1] = history["primal"][-1]
    rule = f"{STOP_RULE} (basis: {stop_rule})"
    if not converged and "stalled" in history:
        warn_stalled("greedy_sparse Newton", rule, stop_value, np.nan, tol)
    elif not converged:
        warn_not_converged("greedy_sparse Newton", rule, stop_value, tol, max_iter)
    A = solve_triangular(factor().T, C, lower=False)
    mu = 2 * ops.weight * ops.slack(F)
    history.update(objective_path=path, hessian_refactorizations=hessians.refactorizations)
    return SolverResult(
        primal={"coef": A, "basis": np.asarray(chosen), "F": F}, dual={"mu": mu}, converged=converged,
        n_iter=total[0], stop_value=stop_value, stop_rule=rule,
        solve_time=time.perf_counter() - start, solver="fast" if joint else "greedy",
        history=history)
