"""Exact water-filling solver for the binary approach (E&W Problem 3), with exact active-set label SVMs.

Problem 3 (no ½, SPEC §2.1)::

    min_{w,b,ξ}  max_k ‖w_k‖²  +  (C/Q) Σ_ik ξ_ik     s.t.  y_ik(⟨w_k, φ(x_i)⟩ + b_k) ≥ 1 − ξ_ik,  ξ ≥ 0

In epigraph form (``‖w_k‖² ≤ t``) the multiplier μ of the norm constraints lies on the simplex, and for
fixed μ the Lagrangian separates into Q binary C-SVMs ``min μ_k‖w_k‖² + (C/Q)Σ_i ξ_ik``, i.e.
``½‖w_k‖² + C_k Σ_i ξ_ik`` with ``C_k = C/(2Qμ_k)``. Its value ``G_k(μ_k)`` is concave with
``G_k'(μ_k) = ‖w_k(μ_k)‖²``, nonincreasing in μ_k. Optimality is water-filling over one scalar t:
every label with ``μ_k > 0`` has ``‖w_k(C_k)‖² = t`` and every label with ``μ_k = 0`` has its
``C_k → ∞`` limit norm ``r_k ≤ t``, with ``Σ_k μ_k = 1``. So the solver finds the root of the
nonincreasing scalar function ``S(t) = Σ_k μ_k(t) − 1``:

* label level — ``μ_k(t)``: solve ``‖w_k(C_k)‖² = t`` for ``C_k``. Each label SVM is solved exactly by
  a primal–dual active-set method (PDAS) on its dual, warm-started from the label's last active set
  (the first start: LIBSVM at its default tolerance, scikit-learn's ``SVC``; in factor mode first
  the pieces of a smoothed-hinge Newton solve at C_k itself, :func:`_huber_newton`, which also comes
  before path-following whenever PDAS from the last set does not finish). For a fixed active set
  (free set F, sets at 0 and at C_k) the KKT system is linear and its solution is affine in C_k,
  ``c = p + C_k q`` (signed coefficients ``c_i = y_i β_i``, bias likewise), so on the C_k-interval where
  that active set stays optimal (a ratio test) ``‖w_k‖² = A + 2B C_k + D C_k²`` exactly. The root is
  taken in closed form when it falls inside the interval, otherwise C_k moves past its end (Newton on
  the quadratic, safeguarded by a bracket and log-bisection) and the PDAS solve is repeated. A label
  whose interval reaches C_k = ∞ with a constant norm (the hinge loss's minimum-norm minimiser, the
  "exact regularization" of an LP) has ``μ_k = 0`` for ``t > r_k``; its dual block ``α_k = (C/Q) y∘q``
  is the limit of the affine path (``u_k = 0``). Flat pieces make ``S`` jump; the solver tries
  ``t = r_k`` and, when ``S`` jumps over 0 there, gives that label the remaining μ.
* outer level — safeguarded Newton on ``log S(t) = 0`` in ``log t`` (the derivative from the labels'
  exact local models), inside a bracket, bisection (geometric) when Newton leaves it. One outer
  iteration is one evaluation of S(t); ``max_iter`` bounds them.

Certificate (the solver never grades itself): at every outer iterate the labels' SVM solutions give a
dual-feasible ``α_k = (C/Q) β_k/C_k`` (box ``[0, C/Q]``, ``Σ_i α_ik y_ik = 0``) and a primal point
(``w_k`` of the label SVM, and the bias at the midpoint of the label's optimal segment given w_k,
:func:`~mlsvm.formulations.rank_binary.optimal_bias`: a label whose points all have ξ > 0 has a
whole segment of optimal biases), and λ = μ/Σμ. Stopping rule: the relative duality gap
``(P − D)/max(1, |P|, |D|)`` (P, D by :mod:`mlsvm.formulations.rank_binary`) ≤ tol AND every scaled KKT
residual of :func:`~mlsvm.formulations.rank_binary.kkt_residuals` ≤ tol (both exact quantities).
Reaching ``max_iter`` or a failed label solve returns the best iterate with a ConvergenceWarning.
At any iterate ``P − D = t (1 − Σμ)²`` (exact label solves), so the gap closes quadratically in S.

Rank-deficient Gram (factor mode; a linear kernel with n > d + 1, duplicated rows): when a
pivoted-Cholesky factor ``K ≈ L Lᵀ`` with few columns exists, every label works in its coordinates.
For a fixed active set ``w = Lᵀc`` and ``b`` stay unique and affine in C_k (so the norm model and the
water-filling argument are unchanged) while the free coefficients form an affine set: they are
unique when ``[L_F, 1]`` has full row rank, else a box-feasible representative is picked by bounded
least squares (and on a flat segment its C-range comes from two LPs). Between breakpoints the path
is followed exactly (one breakpoint's events at a time, confirmed by PDAS); labels whose optimal w
is 0 are recognised by one exact KKT check (docs/rank_binary.md, "Factor mode").

The Gram matrix is scaled internally by ``κ = max diag K`` (so that ``X · 1e6`` works in the same
numbers); results are returned in the problem's own units.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_factor, cho_solve, qr
from scipy.optimize import linprog, lsq_linear
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from mlsvm.formulations import rank_binary as formulation
from mlsvm.kernels import gram_factor, low_rank_factor
from mlsvm.solvers.result import SolverResult, relative_gap

__all__ = ["solve_rank_binary_waterfill", "feature_route"]

STOP_RULE = "relative duality gap and scaled KKT residuals"
#: PDAS: a coefficient is at a bound / a margin is violated beyond these (relative) tolerances
BOUND_TOL = 1e-11
MARGIN_TOL = 1e-9
#: a free point's margin this far from 1 means the free equations were inconsistent (not round-off:
#: an ill-conditioned K_FF leaves ~3e-10 on yeast/linear)
INCONSISTENT_TOL = 1e-7
#: the margins' round-off, by a probabilistic bound λ √m u (:meth:`_Label._margin_noise`); with λ = 5
#: a sum of m = 665 terms exceeds it with probability at most 2m·exp(−λ²(1 − u)²/2) ≈ 0.005
ROUNDOFF_LAMBDA = 5.0
#: PDAS iterations per attempt (a label solve tries: warm PDAS, exact path-following from the
#: last solved state, then LIBSVM at tol 1e-3 and RESTART_SVC_TOL as PDAS starts)
PDAS_MAX_ITER = 40
#: PDAS iterations of the first attempt at a new C_k from the last active set (when it fails there,
#: exact path-following takes over; measured on yeast/linear: failed 40-iteration attempts were a
#: quarter of the time)
JUMP_MAX_ITER = 10
RESTART_SVC_TOL = 1e-8
#: exact path-following: breakpoints per label solve, and how far past a breakpoint (relative)
#: the next set is confirmed; constraints whose breakpoint is this close (relative) to an
#: interval's end are its events
WALK_MAX_STEPS = 5000
WALK_STEPS = (1e-7, 1e-10, 1e-5, 1e-3)
EVENT_RTOL = 1e-12
#: largest C_k (scaled Gram, max diag 1) LIBSVM starts a label at
START_C = 10.0
#: when PDAS from LIBSVM fails there, the first solve is tried at START_C · START_SHRINK^j, j < START_TRIES
START_SHRINK = 0.1
#: a LIBSVM margin within this (relative) distance of 1 starts as free in the margin-based start
MARGIN_START_TOL = 1e-6
START_TRIES = 5
#: rounds of margin refinement and outer Newton step at the outer root (:meth:`_Waterfill._refined`)
REFINE_ROUNDS = 2
#: label root search: largest factor C_k moves in one step, and its iteration cap
MAX_STEP_FACTOR = 1e2
#: label root search: the factor C_k moves by when the local model has no root ahead and the
#: root is not bracketed yet
SEARCH_FACTOR = 4.0
LABEL_MAX_STEPS = 200
#: the path's slope q is in the kernel's null space when ‖Kq‖∞ ≤ NULL_TOL ‖q‖∞ (K scaled to max diag 1)
NULL_TOL = 1e-9
#: factor mode (rank-deficient Gram): singular values of the free points' [L_F, 1] below this
#: fraction of the largest count as 0; a box-feasible representative of the free coefficients must
#: reproduce the free equations' right-hand side to this relative residual
RANK_TOL = 1e-10
REPRESENTATIVE_TOL = 1e-9
#: factor mode is used when the Gram matrix's numerical rank is at most this fraction of n (below
#: it every free-set system is (r+1)-sized; above it the dense systems are no larger)
LOW_RANK_FRACTION = 0.5
#: eigenvalues of the scaled Gram matrix below this fraction of the largest are dropped from the
#: lazily computed eigen-factor (the round-off eigenvalues of a linear kernel's X Xᵀ reach ~n·eps)
FACTOR_RTOL = 1e-10
#: factor mode: the smoothed-hinge (Huber) Newton start — its smoothing widths h (from 1 down), the
#: Newton steps allowed per width, and the switch (False: LIBSVM at C ≤ START_C and the exact
#: path-following only, the route before; tests run both)
HUBER_LEVELS = 10.0 ** -np.arange(0, 9)
#: a warm start (the last solved state's path extended to the new C_k) begins at HUBER_LEVELS[2] = 1e-2
#: (measured, BinaryApproachSVM n = 8000: 21.4 s from 1e-2, 25.5 s from 1, 33.3 s from 1e-4)
HUBER_WARM_LEVEL = 2
HUBER_STEPS = 50
HUBER_START = True
#: ... and only when n ≥ HUBER_MIN_RATIO · (r + 1): with few points per factor column the free sets
#: PDAS meets from the Newton pieces are often rank-deficient (bounded least squares at every
#: iteration). Measured (CPU s, BinaryApproachSVM defaults, one process, on / off): scene-like
#: 1211 × 294 (n/(r+1) = 4.1) 62.6 / 39.3 — slower; yeast/linear (14.4) 10.6 / 14.7; synthetic
#: d = 50 at n = 8000 (157) 21 / 57
HUBER_MIN_RATIO = 8
#: the pivoted-Cholesky factor tried first: at most LOW_RANK_MAX columns, residual ≤ FACTOR_TOL
#: (scaled Gram, max diag 1; a margin then moves by at most FACTOR_TOL·‖c‖₁)
LOW_RANK_MAX = 400
FACTOR_TOL = 1e-13


def feature_route(n_samples: int, n_features: int) -> bool:
    """Does water-filling work in the coordinates of the linear kernel's features (never forming
    the n × n Gram matrix)? When ``d ≤ LOW_RANK_FRACTION · n``, the rule by which a Gram matrix's
    factor mode is chosen; above it the dense label systems are no larger than the factor's and
    the n × n matrix is at most 2 n d numbers (docs/rank_binary.md, "Linear kernel").

    Parameters
    ----------
    n_samples : int
        n, the number of training samples.
    n_features : int
        d, the number of features.
    """
    return n_features <= LOW_RANK_FRACTION * n_samples


def _feature_factor(features, kappa):
    """The factor ``L`` of the scaled linear Gram matrix ``X Xᵀ / κ`` that the Gram route's pivoted
    Cholesky (:func:`mlsvm.kernels.low_rank_factor`, residual ≤ ``FACTOR_TOL``) builds, computed from X without
    forming K: the pivoted QR ``XᵀΠ = QR`` of ``Xᵀ/√κ`` gives ``K_ΠΠ = RᵀR``, so ``L = ΠRᵀ``, cut at
    the first pivot whose residual ``|R_jj|²`` is ≤ ``FACTOR_TOL`` (the same pivots and stop rule;
    ``‖K − LLᵀ‖_max ≤ FACTOR_TOL``). The basis matters, not only the span: with ``X/√κ`` itself
    (raw emotions: feature scales 0.02–237, ``XᵀX`` conditioned 3.8e10) water-filling ended
    uncertified at C = 1 (docs/rank_binary.md, "Linear kernel"). O(n d²) time, O(n d) memory."""
    dense = features.toarray() if sp.issparse(features) else np.array(features, dtype=float)
    dense /= np.sqrt(kappa)
    n, d = dense.shape
    if d == 0:
        return np.zeros((n, 1))
    R, pivots = qr(dense.T, mode="r", pivoting=True)
    small = np.flatnonzero(np.abs(np.diag(R)) ** 2 <= FACTOR_TOL)   # the pivots' residuals
    rank = int(small[0]) if small.size else d
    if rank == 0:
        return np.zeros((n, 1))
    factor = np.empty((n, rank))
    factor[pivots] = R[:rank].T
    return factor


def _huber_line_search(a, z, wd, dd, c, h):
    """Exact line search of the smoothed-hinge objective along a Newton direction: the root of its
    derivative ``φ'(s) = wd + s dd − c Σ_i ψ_h'(z_i − s a_i) a_i`` (nondecreasing, piecewise linear) by
    Newton's method on φ' inside a bracket (bisection when it leaves it)."""
    lo, hi, s = 0.0, np.inf, 1.0
    for _ in range(60):
        shifted = z - s * a
        derivative = wd + s * dd - c * (np.clip(shifted / h, 0.0, 1.0) @ a)
        if derivative > 0:
            hi = s
        else:
            lo = s
        quadratic = (shifted > 0) & (shifted < h)
        curvature = dd + (c / h) * (a[quadratic] @ a[quadratic])
        if abs(derivative) <= 1e-13 * (abs(wd) + 1.0) or curvature <= 0:
            return s
        step = s - derivative / curvature
        if not lo < step < hi:
            step = 0.5 * (lo + hi) if np.isfinite(hi) else 2.0 * s
        if abs(step - s) <= 1e-15 * max(1.0, s):
            return step
        s = step
    return s


def _huber_newton(L, y, c, start, accept, first=0):
    """Solve the label SVM ``½‖w‖² + c Σ_i ψ_h(1 − y_i(l_iᵀw + b))`` in the factor's coordinates, ψ_h the
    hinge smoothed over width h (quadratic on ``(0, h)``), for h down :data:`HUBER_LEVELS` from its
    index ``first`` (each solution starts the next; ``start``: the first (w, b), else 0), and offer the pieces of each width's solution to ``accept(status,
    last)`` as an active set (0: margin > 1, 1: in the quadratic piece, 2: margin < 1 − h) — once a
    width's Newton iterations ended with unchanged pieces, and always after the last width. Returns
    True as soon as ``accept`` does. A Newton step costs O(n r + |Q| r²) (Q: the points in the
    quadratic piece); the smoothed problem's dual ``β_i = c ψ_h'`` is the hinge dual with
    ``(h/2c)‖β‖²`` added, so its pieces estimate the hinge's sets: a heuristic start only (``accept``
    runs PDAS, whose exact KKT check decides). Measured (synthetic d = 50, n = 4000): the pieces
    are the optimal set from h = 1e-4 on, while each further width costs ~20 Newton steps (its first
    step leaves the narrower quadratic piece with few points)."""
    n, r = L.shape
    v = np.zeros(r + 1) if start is None else np.array(start, dtype=float)
    Ly = L * y[:, None]
    for level, h in enumerate(HUBER_LEVELS):
        if level < first:
            continue
        settled = False
        for _ in range(HUBER_STEPS):
            z = 1.0 - (Ly @ v[:r] + y * v[r])
            quadratic = (z > 0) & (z < h)
            slope = np.clip(z / h, 0.0, 1.0)
            gradient = np.append(v[:r] - c * (Ly.T @ slope), -c * (slope @ y))
            Lq = L[quadratic]
            hessian = np.empty((r + 1, r + 1))
            hessian[:r, :r] = (c / h) * (Lq.T @ Lq)
            hessian[:r, :r][np.diag_indices(r)] += 1.0
            hessian[:r, r] = hessian[r, :r] = (c / h) * Lq.sum(axis=0)
            hessian[r, r] = (c / h) * quadratic.sum()
            if not (np.all(np.isfinite(hessian)) and np.all(np.isfinite(gradient))):
                return False   # overflow (a hostile scale): no start; PDAS's other starts follow
            try:   # positive definite unless the quadratic piece is empty (then b has no curvature)
                direction = cho_solve(cho_factor(hessian), -gradient)
            except np.linalg.LinAlgError:
                direction = np.linalg.lstsq(hessian, -gradient, rcond=None)[0]
            if not np.all(np.isfinite(direction)):
                return False
            if gradient @ direction >= 0:
                break
            a = Ly @ direction[:r] + y * direction[r]
            step = _huber_line_search(a, z, v[:r] @ direction[:r], direction[:r] @ direction[:r], c, h)
            v = v + step * direction
            moved = z - step * a
            # the pieces did not change: the Newton point of this quadratic piece is its minimiser
            if np.array_equal(quadratic, (moved > 0) & (moved < h)) and np.array_equal(z >= h, moved >= h):
                settled = True
                break
        last = level == len(HUBER_LEVELS) - 1
        # offered: the last width's pieces, and a settled width's with at most r + 1 points in the
        # quadratic piece (an exact free set has that many unless [L_F, 1] is rank-deficient; a
        # larger one costs PDAS bounded least squares — measured: 5x the whole fit)
        if last or (settled and np.count_nonzero(quadratic) <= r + 1):
            z = 1.0 - (Ly @ v[:r] + y * v[r])
            if not np.all(np.isfinite(z)):
                return False
            if accept(np.where(z <= 0, 0, np.where(z >= h, 2, 1)).astype(np.int8), last):
                return True
    return False


class _InnerFailure(RuntimeError):
    """A label SVM whose active-set solve did not converge (the solver then warns and stops)."""


class _Label:
    """One label's C-SVM ``½‖w‖² + c Σ ξ`` on the scaled Gram ``gram`` and its exact affine path.

    After :meth:`solve` at ``c``: signed coefficients ``p + c q`` and bias ``bp + c bq`` (``q`` the
    path's slope), valid for ``c`` in ``[lo, hi]``; the norm ``‖w‖² = A + 2Bc + Dc²`` there."""

    def __init__(self, gram, y, c, factor=None, low_rank=None):
        # ``gram`` is None on the linear kernel's feature route: ``low_rank`` (the features) is then
        # an exact factor and every product with K goes through it
        self.gram, self.y, self.n = gram, y, y.size
        # factor mode: ``low_rank`` (K ≈ L Lᵀ) from the start, or ``factor()`` returns a low-rank L
        # (or None) the first time a dense free-set system is singular
        self._factor_fn, self.factor = factor, low_rank
        self._box = None     # factor mode: box infeasibility of the last free set (masks, sizes)
        self._rep = None     # factor mode: data to pick box-feasible free coefficients at any c
        self.status = None   # 0: β = 0, 1: free, 2: β = c
        self.c = None        # the C_k of the last solved state (None until a solve succeeds)
        self.flats = {}      # ‖w‖² value of every flat segment met -> (lo, hi, state)
        self.visited = {}    # C_k -> active set, for the ends of the exact path-following walks
        # factor mode: PDAS at c itself from the smoothed-hinge Newton's set (:meth:`_huber`). Else
        # LIBSVM, which is slow and inaccurate at a large C (x·1e6 with a linear kernel is C·1e12
        # here): start it at most at START_C and follow the path to c with warm PDAS solves
        if self._huber(c):
            return
        self._initial(min(c, START_C))
        self.solve(c)

    def _initial(self, c):
        """A first solved state: PDAS from LIBSVM's active set at c, else at smaller C (PDAS from
        LIBSVM fails on some labels of yeast/linear at C = 10, where the set is far from LIBSVM's
        tol-1e-3 one; at a smaller C fewer points are free), from which :meth:`solve` walks the
        exact path up to c."""
        for j, start in enumerate(c * START_SHRINK ** np.arange(START_TRIES)):
            for svc_tol in (1e-3, RESTART_SVC_TOL):
                self._start(start, tol=svc_tol)
                if self._try(start):
                    return
                self.status = self._margin_status
                if self._try(start):
                    return
                if j == 0 and svc_tol == 1e-3 and self._try_zero(c):
                    return
        raise _InnerFailure(f"active-set solve of a label SVM failed at C_k = {c:.3e} and below "
                            f"(no warm start)")

    def _start(self, c, tol):
        """Active set from LIBSVM (scikit-learn's SVC) at ``c``: a warm start for PDAS."""
        # the feature route: LIBSVM's linear kernel on the factor (K = L Lᵀ, kernel values from its
        # rows; no n × n matrix), the same problem as the precomputed Gram matrix
        data, kernel = (self.gram, "precomputed") if self.gram is not None else (self.factor, "linear")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = SVC(C=c, kernel=kernel, tol=tol, max_iter=1_000_000).fit(data, self.y)
        beta = np.zeros(self.n)
        beta[model.support_] = np.abs(model.dual_coef_.ravel())
        self.status = np.where(beta <= 1e-8 * c, 0, np.where(beta >= c * (1 - 1e-8), 2, 1)).astype(np.int8)
        # the same solution's sets read from its margins instead (an inexact dual puts many points
        # strictly inside the box; its margins are often the better guess): tried when β's fail
        if self.gram is not None:
            margin = self.y * model.decision_function(data)
        else:   # through w = Lᵀ(dual_coef) in O(n r) (LIBSVM's decision_function: O(n · #SV · r))
            w = self.factor[model.support_].T @ model.dual_coef_.ravel()
            margin = self.y * (self.factor @ w + model.intercept_[0])
        spread = MARGIN_START_TOL * max(1.0, np.abs(margin).max())
        self._margin_status = np.where(margin > 1 + spread, 0, np.where(margin < 1 - spread, 2, 1)).astype(np.int8)

    def _bordered(self, free):
        """The free equations' matrix ``[[K_FF, 1], [1ᵀ, 0]]`` (``K_FF = L_F L_Fᵀ`` in factor mode)."""
        m = free.size
        system = np.zeros((m + 1, m + 1))
        if self.factor is not None:
            rows = self.factor[free]
            system[:m, :m] = rows @ rows.T
        else:
            system[:m, :m] = self.gram[np.ix_(free, free)]
        system[:m, m] = system[m, :m] = 1.0
        return system

    def _kkt(self, status, c):
        """Affine KKT solution for the active set: ``(p, q, bp, bq, rep)`` with free equations
        ``K_FF c_F + b = y_F − K_FU c_U``, ``Σ_F c_F = −Σ_U c_U`` and ``c_U = c y_U`` (``rep`` is None
        here; factor mode: :meth:`_kkt_factor`)."""
        if self.factor is not None:
            return self._kkt_factor(status, c)
        free = np.flatnonzero(status == 1)
        upper = status == 2
        q = np.where(upper, self.y, 0.0)
        p = np.zeros(self.n)
        Kq = self.gram @ q
        m = free.size
        system = self._bordered(free)
        rhs = np.zeros((m + 1, 2))
        rhs[:m, 0] = self.y[free]
        rhs[:m, 1] = -Kq[free]
        rhs[m, 1] = -q.sum()
        try:
            solution = np.linalg.solve(system, rhs)
            ok = np.all(np.isfinite(solution)) and np.allclose(system @ solution, rhs, rtol=1e-9, atol=1e-9)
        except np.linalg.LinAlgError:
            ok = False
        if not ok:   # singular (linear kernel with more free points than rank, duplicates)
            if self._factor_fn is not None:
                self.factor = self._factor_fn()
                if self.factor is not None:   # a low-rank Gram: factor mode from now on
                    return self._kkt_factor(status, c)
            solution = np.linalg.lstsq(system, rhs, rcond=None)[0]
        p[free], q[free] = solution[:m, 0], solution[:m, 1]
        self._box = None
        return p, q, float(solution[m, 0]), float(solution[m, 1]), None

    def _kkt_factor(self, status, c):
        """Factor mode (``K = L Lᵀ``, L n × r): the same affine KKT solution, every system (r+1)-sized.

        With ``M = [L_F, 1]`` the free equations read ``M ẑ = y_F − c L_F g`` for ``ẑ = (u; b)``,
        ``u = L_Fᵀ c_F`` (``g = L_Uᵀ y_U``), and ``ζ = (u; Σ_F c_F)`` must lie in the range of ``Mᵀ``
        (the ``c_F`` exist). Their solution set in ``c_F`` is affine: ``w = Lᵀc`` and ``b`` are unique
        (consistent equations), the free coefficients are not once ``rank M < |F|``; ``p``, ``q`` are
        the minimum-norm ones and :meth:`_representative` picks box-feasible ones (p shifted by a
        null vector of ``Mᵀ``, which changes neither w nor b nor the sum constraint)."""
        L, y = self.factor, self.y
        r = L.shape[1]
        free = np.flatnonzero(status == 1)
        q = np.where(status == 2, y, 0.0)
        p = np.zeros(self.n)
        g = L.T @ q
        m = free.size
        M = np.empty((m, r + 1))
        M[:, :r] = L[free]
        M[:, r] = 1.0
        if m <= r + 1:   # usually (free ≈ r on yeast): unique c_F when M has full row rank
            unique = self._kkt_full_row_rank(M, free, q, g, c)
            if unique is not None:
                return unique
        U, sv, Vt = np.linalg.svd(M, full_matrices=m < r + 1)
        rank = int(np.sum(sv > RANK_TOL * sv[0])) if sv.size else 0
        Ur, svr, Vr, Vperp = U[:, :rank], sv[:rank], Vt[:rank], Vt[rank:].T
        f = np.column_stack([y[free], -(L[free] @ g)])
        h = np.array([0.0, -q.sum()])
        z = Vr.T @ ((Ur.T @ f) / svr[:, None])          # least-squares ẑ (exact when consistent)
        if Vperp.shape[1]:   # M singular: ẑ + Vperp a, with ζ ⊥ null(M) fixing a
            E = np.ones(r + 1)
            E[r] = 0.0
            shift = E[:, None] * z
            shift[r] += h
            a = np.linalg.lstsq(Vperp.T @ (E[:, None] * Vperp), -(Vperp.T @ shift), rcond=None)[0]
            z = z + Vperp @ a
        zeta = z.copy()
        zeta[r] = h
        coef = Ur @ ((Vr @ zeta) / svr[:, None])       # minimum-norm c_F with Mᵀ c_F = ζ
        p[free], q[free] = coef[:, 0], coef[:, 1]
        bp, bq = float(z[r, 0]), float(z[r, 1])
        self._box = None
        rep = None
        if rank < m:   # non-unique free coefficients: a box-feasible one at c, if there is one
            rep = (free, (M * y[free][:, None]).T, zeta)
            theta, residual = self._representative(rep, c)
            if residual is None:
                p[free] = y[free] * theta * c - c * q[free]
            else:   # no free coefficients in the box: the bounds the least-squares fit presses on
                gradient = rep[1].T @ residual
                low = np.zeros(self.n, bool)
                high = np.zeros(self.n, bool)
                low[free] = (theta <= 0.0) & (gradient > 0)
                high[free] = (theta >= 1.0) & (gradient < 0)
                size = np.zeros(self.n)
                size[free] = np.abs(gradient)
                self._box = (low, high, size)
        return p, q, bp, bq, rep

    def _kkt_full_row_rank(self, M, free, q, g, c):
        """The factor-mode KKT solution when ``M = [L_F, 1]`` has full row rank (checked by the
        pivots of the Cholesky factor of ``M Mᵀ``): then the bordered system
        ``[[L_F L_Fᵀ, 1], [1ᵀ, 0]]`` is nonsingular (its null vectors have ``Mᵀ c_F = 0``) and the
        free coefficients are unique. An m × m solve instead of an SVD; None when the check fails."""
        m, r = M.shape[0], M.shape[1] - 1
        try:
            chol = np.linalg.cholesky(M @ M.T)
        except np.linalg.LinAlgError:
            return None
        pivots = np.diag(chol) ** 2
        if pivots.min() < RANK_TOL ** 2 * max(pivots.max(), 1.0) * 1e4:
            return None
        LF = M[:, :r]
        system = self._bordered(free)
        rhs = np.zeros((m + 1, 2))
        rhs[:m, 0] = self.y[free]
        rhs[:m, 1] = -(LF @ g)
        rhs[m, 1] = -q.sum()
        try:
            solution = np.linalg.solve(system, rhs)
        except np.linalg.LinAlgError:
            return None
        if not (np.all(np.isfinite(solution)) and np.allclose(system @ solution, rhs, rtol=1e-9, atol=1e-9)):
            return None
        p = np.zeros(self.n)
        q = q.copy()
        p[free], q[free] = solution[:m, 0], solution[:m, 1]
        self._box = None
        return p, q, float(solution[m, 0]), float(solution[m, 1]), None

    @staticmethod
    def _representative(rep, c):
        """Free coefficients ``β_F = c θ``, ``θ ∈ [0, 1]``, with ``Mᵀ(y_F∘β_F) = ζ_p + c ζ_q`` (``c = ∞``:
        the limit ``Mᵀ(y_F∘θ) = ζ_q``), by bounded-variable least squares (an active-set method, exact
        to round-off when the box meets the affine set). Returns ``(θ, None)`` when it does, else
        ``(θ, residual)``."""
        free, A, zeta = rep
        target = zeta[:, 1] if np.isinf(c) else zeta[:, 0] / c + zeta[:, 1]
        theta = np.clip(lsq_linear(A, target, bounds=(0.0, 1.0), method="bvls").x, 0.0, 1.0)
        residual = A @ theta - target
        inside = (theta > 0.0) & (theta < 1.0)
        if np.any(inside):   # polish: BVLS stops at its own tolerance; refit the interior exactly
            for _ in range(2):
                step = np.linalg.lstsq(A[:, inside], -residual, rcond=None)[0]
                polished = theta.copy()
                polished[inside] += step
                if polished.min() < 0.0 or polished.max() > 1.0:
                    break
                new_residual = A @ polished - target
                if np.linalg.norm(new_residual) >= np.linalg.norm(residual):
                    break
                theta, residual = polished, new_residual
        if np.linalg.norm(residual) <= REPRESENTATIVE_TOL * (1.0 + np.linalg.norm(target)):
            return theta, None
        return theta, residual

    def _times(self, v):
        """``K v`` (through the factor in factor mode)."""
        if self.factor is not None:
            return self.factor @ (self.factor.T @ v)
        return self.gram @ v

    def _products(self, p, q):
        """``K p`` and ``K q`` (through the factor in factor mode)."""
        return self._times(p), self._times(q)

    def _margin_noise(self, coef, bias):
        """The round-off of the computed margins ``y_i (Σ_j K_ij coef_j + b) − 1``: Higham and Mary's
        probabilistic bound for a sum of m products, ``λ √m u`` times the sum of their magnitudes
        (u = eps/2; "A new approach to probabilistic rounding error analysis", SIAM J. Sci. Comput.
        41(5), 2019), here ``γ (|K||coef| + |b|)`` with
        ``γ = u (λ (√n + √r) + 2)``: the products through the factor's r columns (``√n`` alone for a
        Gram matrix) and the two additions. A set's test cannot see violations below it: at a large
        C_k the terms of a margin are many orders larger than the margin (raw emotions at
        C_k ≈ 8e5: terms up to 1.8e8, so a computed margin is exact to about 1e-7 only, where
        MARGIN_TOL asks 1e-9). Too wide a test accepts sets that are not optimal; the worst-case
        bound ``m u`` grows like m where the errors grow like √m (docs/rank_binary.md, "Margins at
        a large C_k", has the measured window). A bound on ``|K_ij|`` by ``sqrt(K_ii K_jj)`` first decides
        whether the noise can reach MARGIN_TOL, so the product with ``|K|`` is only formed when it
        can; returns None when it cannot."""
        u = np.finfo(float).eps / 2
        if self.factor is not None:
            gamma = u * (ROUNDOFF_LAMBDA * (np.sqrt(self.n) + np.sqrt(self.factor.shape[1])) + 2)
            root = np.linalg.norm(self.factor, axis=1)
        else:
            gamma = u * (ROUNDOFF_LAMBDA * np.sqrt(self.n) + 2)
            root = np.sqrt(np.clip(np.diag(self.gram), 0.0, None))
        magnitude = np.abs(coef)
        if gamma * (root.max() * (root @ magnitude) + abs(bias)) <= MARGIN_TOL:
            return None
        if self.factor is not None:
            factor = np.abs(self.factor)
            terms = factor @ (factor.T @ magnitude)
        else:
            terms = np.abs(self.gram) @ magnitude
        return gamma * (terms + abs(bias))

    def _violations(self, status, path, c):
        p, q, bp, bq, _ = path
        coef = p + c * q
        beta = self.y * coef
        scores = self._times(coef)
        margin = self.y * (scores + bp + c * bq)
        noise = self._margin_noise(coef, bp + c * bq)
        margin_tol, inconsistent_tol = (MARGIN_TOL, INCONSISTENT_TOL) if noise is None else \
            (np.maximum(MARGIN_TOL, noise), np.maximum(INCONSISTENT_TOL, noise))
        # a free point off its margin: the free equations were inconsistent (a singular K_FF, e.g. a
        # linear kernel with more free points than its rank + 1; lstsq then fits them only in least
        # squares): it leaves F for the bound its margin asks for
        off = (status == 1) & (np.abs(margin - 1.0) > inconsistent_tol)
        low = (status == 1) & ((beta < -BOUND_TOL * c) | (off & (margin > 1.0)))
        high = (status == 1) & ((beta > c * (1 + BOUND_TOL)) | (off & (margin < 1.0)))
        enter_low = (status == 0) & (margin < 1 - margin_tol)
        enter_high = (status == 2) & (margin > 1 + margin_tol)
        enter = enter_low | enter_high
        size = np.where(low | high, np.maximum(np.maximum(-beta / c, beta / c - 1.0),
                                               np.abs(margin - 1.0) * off), 0.0) \
            + np.where(enter, np.abs(margin - 1.0), 0.0)
        if self._box is not None:   # factor mode, no box-feasible free coefficients
            box_low, box_high, box_size = self._box
            low = (status == 1) & ((off & (margin > 1.0)) | (box_low & ~off))
            high = (status == 1) & ((off & (margin < 1.0)) | (box_high & ~off))
            size = np.where(off, np.abs(margin - 1.0), np.where(low | high, box_size, 0.0)) \
                + np.where(enter, np.abs(margin - 1.0), 0.0)
        return low, high, enter, margin, size

    def _pdas(self, c, status, max_iter=PDAS_MAX_ITER):
        """Primal–dual active set iterations from ``status``; returns the solved status or None.

        Full PDAS swaps every violator at once (fast from a warm start, but it can cycle on
        non-M-matrix problems — measured: a period-6 cycle on a 9-point problem — and overshoots
        when K_FF is rank-deficient — yeast/linear: 8 violators became 175 in one swap); when the
        number of violators stops falling it returns to the best set met and swaps only the largest
        violation per step."""
        best, best_status, single = np.inf, status, False
        for _ in range(max_iter):
            if not np.any(status == 1):   # the bias needs a free equation: the point nearest the margin
                scores = self._times(np.where(status == 2, c * self.y, 0.0))
                margin = self.y * (scores + formulation.optimal_bias(scores, self.y))
                status[np.argmin(np.abs(margin - 1.0))] = 1
            path = self._kkt(status, c)
            low, high, enter, margin, size = self._violations(status, path, c)
            count = low.sum() + high.sum() + enter.sum()
            if count == 0:
                return status, path
            if count < best:
                best, best_status = count, status
            elif not single:   # no progress: back to the best set, one swap per step from now on
                single, status = True, best_status
                path = self._kkt(status, c)
                low, high, enter, margin, size = self._violations(status, path, c)
            status = status.copy()
            if single:
                worst = int(np.argmax(size))
                status[worst] = 0 if low[worst] else 2 if high[worst] else 1
            else:
                status[low], status[high], status[enter] = 0, 2, 1
        return None, None

    def _try_zero(self, c):
        """Is ``w = 0`` optimal (then at every C: 0 stays in the subdifferential when C grows)? With
        ``w = 0`` and the hinge-optimal bias ``b = −1`` (+1) the majority (minority) class sits on
        its margin and the minority is at the bound: one exact KKT check of that set. (yeast/linear,
        raw features: label 7 is such a label — LIBSVM's sets at C ≤ 5 have 205–636 free points
        and margins within 1e-5 of 1 for 1,211 points, where PDAS does not find the set.)"""
        majority = 1.0 if np.sum(self.y > 0) >= np.sum(self.y < 0) else -1.0
        status = np.where(self.y == majority, 1, 2).astype(np.int8)
        path = self._kkt(status, c)
        low, high, enter, _, _ = self._violations(status, path, c)
        if low.any() or high.any() or enter.any():
            return False
        self._set(c, status, path, zero=True)
        return True

    @staticmethod
    def huber_route(n_samples, rank):
        """Do label solves start from the smoothed-hinge Newton pieces? In factor mode (``rank``, the
        factor's column count r, is not None), when :data:`HUBER_START` and ``n ≥ HUBER_MIN_RATIO ·
        (r + 1)``.

        Parameters
        ----------
        n_samples : int
            n, the number of training samples.
        rank : int or None
            r, the factor's number of columns (None: no factor, dense mode).
        """
        return bool(HUBER_START and rank is not None and n_samples >= HUBER_MIN_RATIO * (rank + 1))

    def _huber(self, c, warm=False):
        """Factor mode: PDAS at ``c`` from the active set of the smoothed-hinge SVM's solution
        (:func:`_huber_newton`, O(n r) per Newton step); ``warm``: Newton starts from the last
        solved state's affine path extended to c. The set only starts PDAS, whose exact KKT check
        decides; on failure the label's state is unchanged. (Measured on the synthetic d = 50 data,
        n = 4000: the set of width 1e-8 was the optimal one for all 20 labels × C_k tried, 0.12 s
        each, against LIBSVM at C = 10 plus a path of thousands of breakpoints.)"""
        if not self.huber_route(self.n, None if self.factor is None else self.factor.shape[1]):
            return False
        start = None
        if warm and self.c is not None:
            start = np.append(self.factor.T @ (self.p + c * self.q), self.bp + c * self.bq)
        saved = self.status

        def accept(status, last):
            self.status = status
            if self._try(c, PDAS_MAX_ITER if last else JUMP_MAX_ITER):
                return True
            self.status = saved
            return False

        return _huber_newton(self.factor, self.y, c, start, accept, HUBER_WARM_LEVEL if start is not None else 0)

    def _try(self, c, max_iter=PDAS_MAX_ITER):
        """PDAS at ``c`` from the current active set; on success the label's state moves to ``c``."""
        status, path = self._pdas(c, self.status.copy(), max_iter)
        if status is None:
            return False
        self._set(c, status, path)
        return True

    def solve(self, c):
        """Exact solution at ``c``: PDAS from the last active set; else (factor mode) PDAS from the
        smoothed-hinge Newton's pieces at c (:meth:`_huber`); else exact path-following from
        the last solved state (:meth:`_walk`, one breakpoint at a time); else PDAS from LIBSVM's
        active set at c (default tol, then RESTART_SVC_TOL). (Measured on yeast/linear, rank 103:
        from a warm start PDAS converges for steps of a few % in C_k only — the path has hundreds of
        breakpoints there.)"""
        if self._try(c, JUMP_MAX_ITER):
            return
        if self._huber(c, warm=True):
            return
        warm = (self.status.copy(), self.c)
        if self.c is not None:
            # walk from the solved state nearest to c (the outer iterations revisit C-ranges)
            nearest = min(self.visited, key=lambda known: abs(np.log(known / c)), default=self.c)
            if abs(np.log(nearest / c)) < abs(np.log(self.c / c)):
                state = self.visited[nearest]
                self._set(nearest, state, self._kkt(state, nearest))
            if self._walk(c):
                self.visited[c] = self.status
                return
        for svc_tol in (1e-3, RESTART_SVC_TOL):
            self._start(c, tol=svc_tol)
            if self._try(c):
                return
        if warm[1] is None:   # no solved state to follow the path from
            raise _InnerFailure(f"active-set solve of a label SVM failed at C_k = {c:.3e} (no warm start)")
        raise _InnerFailure(f"active-set solve of a label SVM failed at C_k = {c:.3e}")

    def _walk(self, c):
        """Follow the exact piecewise-affine path from the solved state to ``c``: at the end of the
        current interval the constraints that become tight there change sets (the recorded
        events) and PDAS confirms the new set just past the breakpoint (it also repairs ties).
        Returns False when a step fails, when WALK_MAX_STEPS breakpoints were not enough, or when
        more than n steps in a row found an interval narrower than their own step: exact
        breakpoints that close together are a tie, which at most the n points make; beyond that
        the intervals are round-off (docs/rank_binary.md, "A path in round-off")."""
        narrow = 0
        for _ in range(WALK_MAX_STEPS):
            if self.lo <= c <= self.hi:
                return self._try(c)
            up = c > self.hi
            edge = self.hi if up else self.lo
            if abs(edge - self.c) <= WALK_STEPS[0] * self.c:   # a walk starts from a solved state
                narrow += 1
                if narrow > self.n:
                    return False
            else:
                narrow = 0
            status = self.status.copy()
            for index, moved in (self._events_hi if up else self._events_lo):
                status[index] = moved
            # just past the breakpoint; when PDAS does not confirm a set there (ties, round-off at a
            # large C_k: emotions/raw categorical codes at C_k ≈ 1e5), nearer and farther steps
            for relative in WALK_STEPS:
                step = min(c, edge * (1 + relative)) if up else max(c, edge * (1 - relative))
                found, path = self._pdas(step, status)
                if found is not None:
                    break
            else:
                return False
            self._set(step, found, path)
        return False

    def _set(self, c, status, path, zero=False):
        """Make ``(status, path)`` the label's state at ``c``: its norm model, its C-interval and
        breakpoint events; ``zero``: the set of an optimal ``w = 0`` (optimal at every C, so its
        range is (0, ∞) without the flat-range LPs)."""
        self.status, self.c = status, c
        self.p, self.q, self.bp, self.bq, self.rep = path
        self._fraction_cache = {}
        Kp, Kq = self._products(self.p, self.q)
        self.A, self.B, self.D = float(self.p @ Kp), float(self.p @ Kq), float(self.q @ Kq)
        # flat segment: the slope is in the kernel's null space (Kq = 0 and bq = 0: ‖w‖² and the
        # margins constant on [lo, hi]); terminal when, besides, no free β leaves its box as c grows
        # (valid up to c = ∞: the hinge loss's minimum-norm minimiser)
        size = max(1.0, np.abs(self.q).max())
        self.flat = bool(np.abs(Kq).max() <= NULL_TOL * size and abs(self.bq) <= NULL_TOL * size)
        if zero:
            self.flat = True
            self.lo, self.hi, self.terminal = 0.0, np.inf, True
            self._events_lo, self._events_hi = [], []
        elif self.flat and self.rep is not None:
            # non-unique free coefficients on a flat segment: its c-range is where some free
            # coefficients fit the box (two LPs), terminal when that range is unbounded
            self.lo, self.hi = self._flat_range(c)
            self._events_lo, self._events_hi = [], []
            self.terminal = bool(np.isinf(self.hi))
        else:
            self.lo, self.hi = self._interval(c, Kp, Kq)
            free = self.status == 1
            slope = self.y[free] * self.q[free]
            self.terminal = self.flat and bool(np.all(slope >= -NULL_TOL) and np.all(slope <= 1 + NULL_TOL))
        if self.flat:
            self.B, self.D = 0.0, 0.0
            self.flats[self.A] = (self.lo, np.inf if self.terminal else self.hi,
                                  (c, status, path, self.lo, self.hi, self.terminal))
        if self.terminal:
            self.hi = np.inf

    def _flat_range(self, c):
        """Factor mode, flat segment: the c-range of ``{β_F : Mᵀ(y_F∘β_F) = ζ_p + c ζ_q, 0 ≤ β_F ≤ c}``
        (w, b and the bound points' margins are constant there), by two LPs in ``(β_F, c)``."""
        free, A, zeta = self.rep
        m = free.size
        A_eq = np.hstack([A, -zeta[:, 1:2]])
        # β_F − c ≤ 0 as a sparse matrix: a dense m × m identity is 8m² bytes (1.6 GB at m = 14,000
        # free points; the feature route's only n × n-sized array); HiGHS reads it sparse either way
        A_ub = sp.hstack([sp.identity(m, format="csr"), sp.csr_matrix(-np.ones((m, 1)))], format="csr")
        ends = []
        for sign in (1.0, -1.0):
            cost = np.zeros(m + 1)
            cost[m] = sign
            result = linprog(cost, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=zeta[:, 0],
                             bounds=(0.0, None), method="highs")
            if result.status == 3:     # unbounded above
                ends.append(np.inf)
            elif result.status == 0:
                ends.append(float(result.x[m]))
            else:
                ends.append(c)
        return min(ends[0], c), max(ends[1], c)

    def restore_flat(self, value):
        """Back to the recorded flat segment with ‖w‖² = value; returns its μ-range bounds in c."""
        c, status, path, lo, hi, terminal = self.flats[value][2]
        self._set(c, status, path, zero=self.flats[value][1] == np.inf and lo == 0.0)
        return self.flats[value][:2]

    def _interval(self, c, Kp, Kq):
        """C-interval on which the active set stays optimal (ratio tests on affine functions of c).
        Also records the breakpoint events at each end (``_events_lo``/``_events_hi``: the points
        whose constraint becomes tight there and the set each moves to) for :meth:`_walk`."""
        y, free = self.y, self.status == 1
        offsets, slopes, index, target = [], [], [], []
        free_index = np.flatnonzero(free)
        offsets += [y[free] * self.p[free], -y[free] * self.p[free]]        # β ≥ 0, c − β ≥ 0
        slopes += [y[free] * self.q[free], 1 - y[free] * self.q[free]]
        index += [free_index, free_index]
        target += [np.zeros(free_index.size, np.int8), np.full(free_index.size, 2, np.int8)]
        g, h = y * (Kp + self.bp) - 1.0, y * (Kq + self.bq)
        for s, sign in ((0, 1.0), (2, -1.0)):                              # margin ≥ 1 / ≤ 1
            mask = self.status == s
            offsets.append(sign * g[mask])
            slopes.append(sign * h[mask])
            index.append(np.flatnonzero(mask))
            target.append(np.ones(int(mask.sum()), np.int8))
        a, s = np.concatenate(offsets), np.concatenate(slopes)
        index, target = np.concatenate(index), np.concatenate(target)
        slack = MARGIN_TOL * np.maximum(1.0, np.abs(a) + np.abs(s) * c)
        with np.errstate(divide="ignore", invalid="ignore"):
            limit = -(a + slack) / s
        lo = np.max(limit[s > 0], initial=0.0)
        hi = np.min(limit[s < 0], initial=np.inf)
        near = EVENT_RTOL * max(abs(lo), abs(hi) if np.isfinite(hi) else 0.0, c)
        with np.errstate(invalid="ignore"):
            at_lo = (s > 0) & (np.abs(limit - lo) <= near)
            at_hi = (s < 0) & np.isfinite(hi) & (np.abs(limit - hi) <= near)
        self._events_lo = list(zip(index[at_lo], target[at_lo]))
        self._events_hi = list(zip(index[at_hi], target[at_hi]))
        return min(lo, c), max(hi, c)

    def norm_at(self, c):
        return self.A + 2 * self.B * c + self.D * c * c

    def root_in_segment(self, t):
        """The c in [lo, hi] where the quadratic equals t (None if the model root is outside)."""
        A, B, D = self.A, self.B, self.D
        disc = B * B - D * (A - t)
        if self.flat:
            root = np.inf if t > A else 0.0
        elif D > 0 and disc >= 0:
            root = (t - A) / (B + np.sqrt(disc)) if B + np.sqrt(disc) > 0 else np.inf
        elif B > 0:
            root = (t - A) / (2 * B)
        else:
            root = np.inf if t > A else 0.0
        return root

    def invert(self, t):
        """Move this label to ``‖w(c)‖² = t``; returns c (``inf`` when r_k ≤ t: μ_k = 0)."""
        bracket_lo, bracket_hi, norm_lo, norm_hi = 0.0, np.inf, 0.0, np.inf
        for _ in range(LABEL_MAX_STEPS):
            c = self.c
            norm = self.norm_at(c)
            if self.terminal and norm <= t:
                return np.inf
            root = self.root_in_segment(t)
            if self.lo * (1 - 1e-12) <= root <= self.hi * (1 + 1e-12) and np.isfinite(root) and root > 0:
                self.c = root
                return root
            if bracket_hi <= bracket_lo * (1 + 1e-13):   # t sits on a breakpoint (round-off)
                return c
            if norm < t:
                if c > bracket_lo:
                    bracket_lo, norm_lo = c, norm
            elif c < bracket_hi:
                bracket_hi, norm_hi = c, norm
            usable = np.isfinite(root) and root > 0
            if not usable and bracket_lo > 0 and np.isfinite(bracket_hi):
                # the local model has no root ahead (its constant term exceeds t): secant in log c
                # between the bracket ends (else one step per breakpoint — hundreds on yeast/linear)
                share = (t - norm_lo) / (norm_hi - norm_lo) if norm_hi > norm_lo else 0.5
                root, usable = bracket_lo * (bracket_hi / bracket_lo) ** min(max(share, 0.0), 1.0), True
            if norm < t:
                target = max(root if usable else c * SEARCH_FACTOR, self.hi * (1 + 1e-9))
                target = min(target, c * MAX_STEP_FACTOR)
            else:
                target = min(root if usable else c / SEARCH_FACTOR, self.lo * (1 - 1e-9))
                target = max(target, c / MAX_STEP_FACTOR)
            if not (bracket_lo < target < bracket_hi):
                target = np.sqrt(bracket_lo * bracket_hi) if np.isfinite(bracket_hi) and bracket_lo > 0 \
                    else (c * 10 if norm < t else c / 10)
            self.solve(target)
        raise _InnerFailure(f"label root search for ‖w_k‖² = {t:.3e} did not converge")

    def coefficients(self, c):
        """(signed coefficients, bias, α/(C/Q)) at c (``inf``: the terminal limit). On a flat segment
        the slope q is in the kernel's null space: w is p alone (``c q`` would only add round-off,
        ~ c²·eps in ‖w‖², which at C = 1e8 exceeds the norm itself). In factor mode with non-unique
        free coefficients, α/(C/Q) is a box-feasible representative at c (:meth:`_representative`);
        w and b do not depend on that choice."""
        if self.rep is not None:
            free = self.rep[0]
            if c not in self._fraction_cache:
                fraction = (self.status == 2).astype(float)
                fraction[free] = self._representative(self.rep, c)[0]
                self._fraction_cache = {c: fraction}
            fraction = self._fraction_cache[c].copy()
            if np.isinf(c) or self.flat:
                return self.p.copy(), self.bp, fraction
            return self.p + c * self.q, self.bp + c * self.bq, fraction
        if np.isinf(c):
            return self.p.copy(), self.bp, self.y * self.q
        if self.flat:
            return self.p.copy(), self.bp, np.clip(self.y * (self.p / c + self.q), 0.0, 1.0)
        coef = self.p + c * self.q
        return coef, self.bp + c * self.bq, np.clip(self.y * coef / c, 0.0, 1.0)

    def refined(self, c, signed=None, bias=None):
        """(signed coefficients, bias, α/(C/Q)) at a finite c after one step of iterative refinement
        of the state's free equations (free margins at 1, ``Σ y∘β = 0``), from :meth:`coefficients`
        or from ``signed``, ``bias``: their residual from the margins at the point, the
        bordered system ``[[K_FF, 1], [1ᵀ, 0]]`` solved for the correction. The path's ``p + c q``
        at a large c carries the round-off of ``c q`` (docs/rank_binary.md, "The outer root: refined
        margins and norms"). None where the free coefficients are not unique (factor mode's
        representative), on a flat segment, or when the system is singular."""
        if self.rep is not None or self.flat or not np.isfinite(c):
            return None
        if signed is None:
            signed, bias, _ = self.coefficients(c)
        free = np.flatnonzero(self.status == 1)
        m = free.size
        system = self._bordered(free)
        residual = np.empty(m + 1)
        residual[:m] = self.y[free] - (self._times(signed)[free] + bias)
        residual[m] = -signed.sum()
        try:
            correction = np.linalg.solve(system, residual)
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(correction)):
            return None
        signed = signed.copy()
        signed[free] += correction[:m]
        return signed, bias + correction[m], np.clip(self.y * signed / c, 0.0, 1.0)


def _label_slope(label, c):
    """dμ/dt at this label's root: μ = scale/c, so dμ/dt = −μ / (c N'(c)) (0 when μ = 0 or flat)."""
    derivative = 2 * label.B + 2 * label.D * c
    if not np.isfinite(c) or derivative <= 0:
        return 0.0
    return -1.0 / (c * c * derivative)


class _Waterfill:
    """The outer level: labels, the scalar t, and the certificate of an iterate (module docstring)."""

    def __init__(self, problem):
        self.problem = problem
        self.Ys = problem.signed
        n, q = self.Ys.shape
        features = problem.features
        if features is not None and feature_route(n, features.shape[1]):
            # linear kernel, d ≤ n/2: the features are an exact factor (K = X Xᵀ); κ from the row
            # norms, every label in factor mode, and no n × n matrix
            rows = features.multiply(features).sum(axis=1) if sp.issparse(features) else \
                np.einsum("ij,ij->i", features, features)
            self.kappa = max(float(np.max(rows)), np.finfo(float).tiny)
            gram, low_rank = None, _feature_factor(features, self.kappa)
        else:
            K = problem.gram_matrix
            self.kappa = max(float(np.max(np.diag(K))), np.finfo(float).tiny)
            gram = np.ascontiguousarray(K / self.kappa)
            # a low-rank Gram (a linear kernel with n > d + 1, duplicated rows): every label in factor mode
            low_rank = low_rank_factor(gram, min(LOW_RANK_MAX, LOW_RANK_FRACTION * n), FACTOR_TOL)
        self.labels_gram = gram
        self.scale = self.kappa * problem.C / (2 * q)   # μ_k = scale / c_k (c_k: C_k in scaled units)
        two_signs = [k for k in range(q) if np.any(self.Ys[:, k] > 0) and np.any(self.Ys[:, k] < 0)]
        self.c0 = self.scale * max(1, len(two_signs))   # μ uniform over the two-sign labels
        self._factor = None if low_rank is None else (low_rank,)
        self.labels = {k: _Label(gram, self.Ys[:, k], self.c0, factor=self.factor, low_rank=low_rank)
                       for k in two_signs}
        # a label with w = 0 at one C_k has w = 0 at every C_k (0 ∈ ∂_w of its hinge loss): μ_k = 0
        # (‖w‖² ≤ 1e-28·(c0·n)², compared as square roots: c0 scales with K's diagonal, whose square
        # overflows a float on a poly kernel of high degree)
        self.null = [k for k, label in self.labels.items()
                     if np.sqrt(max(label.norm_at(self.c0), 0.0)) <= 1e-14 * self.c0 * n]
        self.active = [k for k in self.labels if k not in self.null]

    def factor(self):
        """A factor ``L`` (n × r) of the scaled Gram matrix when its rank r is at most
        ``LOW_RANK_FRACTION · n``, else None; computed once, the first time a label asks."""
        if self._factor is None:
            n = self.Ys.shape[0]
            factor = gram_factor(self.labels_gram, rtol=FACTOR_RTOL)
            self._factor = (factor,) if factor.shape[1] <= LOW_RANK_FRACTION * n else (None,)
        return self._factor[0]

    def evaluate(self, t):
        """Every active label moved to ‖w_k‖² = t: their c_k, μ_k, S'(t); a label with a flat segment at
        exactly t (a jump of S) is fixed by :meth:`assign_jump` when S jumps over 1 there."""
        cs, ranges = {}, {}
        for k in self.active:
            label = self.labels[k]
            if t in label.flats:
                lo, hi = label.restore_flat(t)
                ranges[k] = (self.scale / hi, self.scale / lo if lo > 0 else np.inf)
                cs[k] = label.c
            else:
                cs[k] = label.invert(t)
        mus = {k: (self.scale / c if np.isfinite(c) else 0.0) for k, c in cs.items()}
        if ranges:
            self.assign_jump(cs, mus, ranges)
        slope = sum(self.scale * _label_slope(self.labels[k], cs[k]) for k in self.active)
        return cs, mus, slope

    def assign_jump(self, cs, mus, ranges):
        """At a jump of S the labels in ``ranges`` may take any μ_k in their range: the smallest when
        S stays above 1, the largest when below, else they share what closes Σμ = 1."""
        fixed = sum(mu for k, mu in mus.items() if k not in ranges)
        rest = 1.0 - fixed - sum(low for low, _ in ranges.values())
        for k, (low, high) in ranges.items():
            share = min(max(rest, 0.0), high - low)
            rest -= share
            mus[k] = low + share
            cs[k] = self.scale / mus[k] if mus[k] > 0 else np.inf
            self.labels[k].c = cs[k] if np.isfinite(cs[k]) else self.labels[k].c

    def _refined(self, cs):
        """REFINE_ROUNDS rounds of: every active label's coefficients refined (:meth:`_Label.refined`),
        then one Newton step on the outer equations ``‖w_k(c_k)‖² = t``, ``Σ_k scale/c_k = 1`` from
        them, each label moved along its path (``p + c q``). The labels' norm models
        ``A + 2Bc + Dc²`` carry the round-off of ``c q`` as the margins do, so refined margins alone
        leave the norms unequal by as much (raw emotions, categorical regression at C = 1000: 1e-6
        relative, and λ_k(t − ‖w_k‖²) then misses tol). Returns ``{k: (signed, bias, fraction, c)}``;
        ``{}`` when a label cannot be refined; the last margins alone when a step would leave a
        label's segment."""
        moved = {k: (None, None, None, cs[k]) for k in self.active}
        for _ in range(REFINE_ROUNDS):
            step = self._refine_round(moved)
            if step is None:
                return {}
            moved, outer = step
            if not outer:
                break
        return moved

    def _refine_round(self, points):
        """One round of :meth:`_refined` from ``{k: (signed, bias, fraction, c)}`` (``signed`` None:
        the label's own coefficients at c); returns ``(points, moved along the paths)``, or None
        when a label cannot be refined."""
        refined = {}
        for k, (signed, bias, _, c) in points.items():
            point = self.labels[k].refined(c, signed, bias)
            if point is None:
                return None
            refined[k] = (*point, c)
        # ‖w_k‖² and its derivative along the path, d/dc ‖w + c q‖² = 2 qᵀK w, at the refined points
        norms, slopes = {}, {}
        for k, (signed, *_) in refined.items():
            scores = self.labels[k]._times(signed)
            norms[k], slopes[k] = float(signed @ scores), 2.0 * float(self.labels[k].q @ scores)
        if not refined or min(slopes.values()) <= 0:
            return refined, False
        # Δc_k = (t − N_k)/N'_k with Σ_k (scale/c_k²) Δc_k = Σ_k scale/c_k − 1: linear in t
        weights = {k: self.scale / (point[3] ** 2 * slopes[k]) for k, point in refined.items()}
        excess = sum(self.scale / point[3] for point in refined.values()) - 1.0
        t = (excess + sum(weights[k] * norms[k] for k in refined)) / sum(weights.values())
        moved = {}
        for k, (signed, bias, _, c) in refined.items():
            label = self.labels[k]
            new_c = c + (t - norms[k]) / slopes[k]
            if not label.lo <= new_c <= label.hi:
                return refined, False
            signed = signed + (new_c - c) * label.q
            moved[k] = (signed, bias + (new_c - c) * label.bq, np.clip(label.y * signed / new_c, 0.0, 1.0), new_c)
        return moved, True

    def certificate(self, cs, t, tol, refine=False):
        """Primal point, multipliers and the formulation's own objectives and residuals at ``cs``
        (``refine``: the labels' coefficients and C_k by :meth:`_refined`).

        A label at its terminal segment with ``r_k < t`` has μ_k = 0, ``w_k`` the segment's limit and
        ``α_k = (C/Q) y∘q``, whose ``u_k = 0`` holds only to round-off: the Gram-form norm
        ``sqrt(cᵀKc)`` of the residual has a floor ~ sqrt(eps)·(C/Q)·‖q‖₁ (measured 2e-6 at C = 100,
        n = 40), so at large C such problems may end above a tight tol with a ConvergenceWarning."""
        problem = self.problem
        n, q = self.Ys.shape
        refined = self._refined(cs) if refine else {}
        coef, alpha, mu = np.zeros((n, q)), np.zeros((n, q)), np.zeros(q)
        for k in self.labels:   # a label of one sign only has w = 0, α = 0
            c = cs.get(k, self.c0)
            if k in refined:
                signed, _, fraction, c = refined[k]
            else:
                signed, _, fraction = self.labels[k].coefficients(c)
            alpha[:, k] = problem.box * fraction
            if k in self.active:
                coef[:, k] = signed / self.kappa
                mu[k] = self.scale / c if np.isfinite(c) else 0.0
        if mu.sum() > 0:
            lam = mu / mu.sum()
        else:   # t = 0: every label has w = 0 and any λ on the simplex is optimal
            lam = np.full(q, 1.0 / q)
        dual = formulation.dual_objective(problem, alpha)

        def graded(coef):
            # every bias at the midpoint of its label's optimal segment given w_k. The segment is a
            # point unless the label's hinge loss is flat in b (all its points with ξ > 0, α = C/Q),
            # and then the label's KKT bias is whichever end round-off made free: an explore draw
            # gave biases 1.26 apart from sparse and dense input, both certified
            b = formulation.optimal_biases(problem, coef)
            primal = formulation.primal_objective(problem, coef, b)
            kkt = formulation.kkt_residuals(problem, coef, b, alpha, lam)
            return b, primal, kkt, max(relative_gap(primal, dual), max(kkt.values()))

        b, primal, kkt, stop = graded(coef)
        if stop > tol and max(relative_gap(primal, dual), *(v for key, v in kkt.items() if key != "dual")) <= tol:
            # only stationarity in w misses tol. In factor mode the label's coefficients and its
            # representative α∘y/(2μ_k) are the same w_k up to the Gram matrix's null space, and the
            # Gram-form norm sqrt(rᵀKr) of a residual r in that null space is a round-off floor
            # ~ sqrt(eps)·‖r‖ (docs/rank_binary.md, "Known limits"): grade the representative of w_k
            # built from α as well and keep the better point
            from_alpha = coef.copy()
            for k in self.active:
                if mu[k] > 0:
                    from_alpha[:, k] = self.Ys[:, k] * alpha[:, k] / (2.0 * mu[k])
            candidate = graded(from_alpha)
            if candidate[3] < stop:
                coef, (b, primal, kkt, stop) = from_alpha, candidate
        return {"coef": coef, "b": b}, {"alpha": alpha, "lam": lam}, primal, dual, stop


def _next_t(t, S, slope, t_lo, t_hi, breakpoints):
    """Safeguarded Newton step on log S(t) = 0 in log t; geometric bisection outside the bracket (×4
    or ÷4 before it is closed). Once it is closed, a Newton step that crosses known jump points r_k
    tries the median of those it crosses (the first when it crosses one or two); without a usable
    Newton step (S flat: every active label on a
    flat piece, or the step leaves the bracket) the next t is the median jump point inside the
    bracket, a binary search over them (S is nonincreasing in t), else the geometric midpoint.
    Walking the jump points one by one instead took one outer iteration each: 426 of them on a
    linear problem with n = 2000, d = 50, more than max_iter."""
    closed = t_lo > 0 and np.isfinite(t_hi)
    inside = sorted(r for r in breakpoints if t_lo < r < t_hi and r != t) if closed else []
    if S > 0 and slope < 0:
        candidate = t * np.exp(np.clip(-np.log(S) / (t * slope / S), -50.0, 50.0))
        if t_lo < candidate < t_hi:
            crossed = sorted((r for r in inside if min(t, candidate) <= r <= max(t, candidate)),
                             key=lambda r: abs(r - t))
            return crossed[(len(crossed) - 1) // 2] if crossed else candidate
    if inside:
        return inside[len(inside) // 2]
    if closed:
        return np.sqrt(t_lo * t_hi)
    return t * 4.0 if S > 1 else t / 4.0   # S > 1: t too small


def solve_rank_binary_waterfill(problem: formulation.BinaryApproachProblem, *, tol: float = 1e-7,
                                max_iter: int = 200) -> SolverResult:
    """Solve Problem 3 by water-filling over exact label SVMs (module docstring).

    Returns a :class:`SolverResult` with ``primal = {"coef", "b"}`` (``w_k = Σ_i coef_ik φ(x_i)``) and
    ``dual = {"alpha", "lam"}`` as :mod:`mlsvm.formulations.rank_binary` names them; ``history`` has
    ``primal``, ``dual`` and ``stop_value`` (max of the relative gap and the scaled KKT residuals) per
    outer iteration. ``max_iter`` bounds the outer iterations (evaluations of S(t)).

    Parameters
    ----------
    problem : BinaryApproachProblem
        The binary-approach problem.
    tol : float, default=1e-7
        Tolerance on the relative gap and the scaled KKT residuals.
    max_iter : int, default=200
        Maximum number of outer iterations (evaluations of S(t)).
    """
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a finite number > 0; got {tol!r}")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}")
    start = time.perf_counter()
    history = {"primal": [], "dual": [], "stop_value": []}
    best, failure, iteration = None, "", 0
    try:
        outer = _Waterfill(problem)
        active = outer.active
        t = float(np.mean([outer.labels[k].norm_at(outer.c0) for k in active])) if active else 0.0
        t_lo, t_hi = 0.0, np.inf
        for iteration in range(1, int(max_iter) + 1):
            if active:
                cs, mus, slope = outer.evaluate(t)
                S = sum(mus.values())
            else:
                cs, S, slope = {}, 1.0, 0.0
            primal_point, dual_point, primal, dual, stop = outer.certificate(cs, t, tol)
            history["primal"].append(primal)
            history["dual"].append(dual)
            history["stop_value"].append(stop)
            if best is None or stop < best[0]:
                best = (stop, primal_point, dual_point)
            if stop <= tol:
                break
            if S > 1:
                t_lo = t
            elif S < 1:
                t_hi = t
            breakpoints = [value for k in active for value in outer.labels[k].flats]
            t_next = t if S == 1.0 else _next_t(t, S, slope, t_lo, t_hi, breakpoints)
            if t_next == t:   # the outer root to t's resolution: what is left is the labels' round-off
                refined = outer.certificate(cs, t, tol, refine=True)
                if refined[-1] < best[0]:
                    best = (refined[-1], refined[0], refined[1])
                if best[0] > tol:
                    failure = (f"the outer root t = {t:.6e} is reached (S(t) − 1 = {S - 1:.1e}), but the "
                               f"certificate stays above tol with the labels' free margins refined")
                break
            t = t_next
    except _InnerFailure as error:
        failure = str(error)
    stop, primal_point, dual_point = best if best is not None else (np.inf, None, None)
    converged = stop <= tol
    if not converged:
        reason = failure or f"max_iter = {max_iter} outer iterations reached"
        warnings.warn(f"binary-approach water-filling solver did not converge ({reason}): {STOP_RULE} "
                      f"reached {stop:.3e}, tolerance asked {tol:.1e}.", ConvergenceWarning, stacklevel=2)
    if primal_point is None:   # failed before the first iterate: the zero point, honestly graded
        q = problem.n_labels
        primal_point = {"coef": np.zeros_like(problem.signed), "b": np.zeros(q)}
        dual_point = {"alpha": np.zeros_like(problem.signed), "lam": np.full(q, 1.0 / q)}
    return SolverResult(primal=primal_point, dual=dual_point, converged=converged, n_iter=iteration,
                        stop_value=float(stop), stop_rule=STOP_RULE, solve_time=time.perf_counter() - start,
                        history=history, solver="waterfill")
