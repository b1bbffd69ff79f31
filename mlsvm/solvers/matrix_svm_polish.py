"""Active-set (semismooth Newton) polishing of one label's box-constrained dual (the ``"fast"``
Matrix-SVM solver).

For one label with ±1 labels ``y``, ``Q = diag(y) K̄ diag(y)``, the dual ``min ½αᵀQα − Σα``,
``0 ≤ α ≤ C``, is solved exactly once its active set is known: with ``F`` the free indices
(``0 < α_i < C``) and ``U`` those at ``C``, the optimum satisfies ``Q_FF α_F = 1 − C Q_FU 1``
(stationarity on the free set). :func:`polish_labels` is the primal-dual active-set method
(Hintermüller, Ito & Kunisch 2002; a semismooth Newton method on ``α = Π_box(α − c∇g(α))``):
from an approximate α (an AGD iterate) with gradient ``∇g = Qα − 1``, it guesses ::

    L = {i : α_i − c ∇g_i ≤ 0},   U = {i : α_i − c ∇g_i ≥ C},   F = the rest,

solves the system above on F, recomputes the gradient and repeats, at most ``steps`` times or
until the sets repeat (then, if α_F lies in the box, the point satisfies the KKT conditions
exactly). ``c = 0`` reads the sets off α alone. The result, clipped to the box, is only a
*candidate*: the caller accepts it when its duality gap meets the tolerance (the certificate does
not depend on the guess being right), as OSQP's solution polishing does.

After the first step the sets change by a few indices (yeast, RBF: the free set of ~1000 loses
40–90 indices, then 1–10), so the systems are solved by :class:`FreeSetSystem` from the first
step's Cholesky factor, bordered by the changed indices, rather than refactored.

Large free sets. The first guess of F (from an early AGD iterate) is often much larger than the
final one (synthetic RBF data, n = 2000: 1400 guessed, 600 final), and its Cholesky factor costs
``|F|³/3``: the term that made the polish, and the whole fit, grow like n³ (``|F|`` grows with n).
From ``ITERATIVE_FROM`` free indices on, a label's systems are solved by conjugate gradients
(:class:`IterativeFreeSetSystem`) warm-started from the current α, at ``|F|²`` per iteration; when
CG has not reached its tolerance within ``max(CG_MIN_BUDGET, |F| / CG_BUDGET_RATIO)`` iterations (an ill-conditioned
K̄_FF, where a factor is the cheaper way), that label goes back to :class:`FreeSetSystem`. CG
solves to ``CG_LOOSE_RTOL`` while the sets still move (only the next sets depend on those
solves: an inexact semismooth Newton step), and once a label's sets repeat, solves once more on
them to ``CG_RTOL`` from there, the step whose point is the candidate. Either
way the candidate is judged by its own duality gap, so the switch changes the cost, never the
certificate.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lstsq, solve, solve_triangular
from scipy.sparse.linalg import cg

from mlsvm.solvers.matrix_svm_dcd import _label_objectives

__all__ = ["FreeSetSystem", "IterativeFreeSetSystem", "polish_labels", "polish_labels_factored"]

#: refactor when more than |B| / REFACTOR_RATIO indices changed: the bordered solve costs about
#: |B|²p flops in triangular solves against |F|³/3 for a new factor (docs/matrix_svm.md, "Tuned
#: constants", has the measurement)
REFACTOR_RATIO = 8
#: free sets of at least this many indices are solved by CG (:class:`IterativeFreeSetSystem`);
#: below it the Cholesky factor and its bordered updates are as cheap (docs/matrix_svm.md, "Cost")
ITERATIVE_FROM = 400
#: relative residual ``‖K̄_FF x − r‖₂ ≤ CG_RTOL ‖r‖₂`` asked of CG (the residual is a stationarity
#: error on F; the gap then decides whether the candidate is kept)
CG_RTOL = 1e-12
#: ... while a label's sets are still changing (the next sets are all that step decides)
CG_LOOSE_RTOL = 1e-4
#: CG gives up after ``max(CG_MIN_BUDGET, |F| / CG_BUDGET_RATIO)`` iterations: by then a factor
#: (|F|³/3 flops, at BLAS-3 speed) would have cost about as much
CG_BUDGET_RATIO = 4
CG_MIN_BUDGET = 100


class FreeSetSystem:
    """Solves ``K̄_FF x = r`` for free sets F that change a little between calls, from one
    Cholesky factor ``K̄_BB = LLᵀ`` of a base set B (the first F, or F at the last refactorization).

    With ``A = F \\ B`` (added), ``R = B \\ F`` (removed), ``p = |A| + |R|``, x is the solution of
    the bordered system (``z_R = 0`` takes the removed rows out, λ is their multiplier) ::

        [K̄_BB  K̄_BA  E_R] [z  ]   [r on B ∩ F, 0 on R]
        [K̄_AB  K̄_AA  0  ] [x_A] = [r on A]                 x on B ∩ F = z there,
        [E_Rᵀ  0     0  ] [λ  ]   [0]

    by block elimination with one triangular solve per border column: with ``V = [K̄_BA, E_R]``
    (``|B|`` × p), ``G = L⁻¹V`` and ``D = diag(K̄_AA, 0)``, the p × p Schur complement
    ``(D − GᵀG) u = [r_A; 0] − Gᵀy₀``, ``y₀ = L⁻¹r_B``, then ``z = L⁻ᵀ(y₀ − G u)``,
    ``u = [x_A; λ]``. It is nonsingular whenever ``K̄_FF`` is (it is K̄_FF's Schur complement in the
    bordered matrix, up to the λ block). The columns of G are kept between calls (index by index),
    so a step pays only for indices that changed since the previous one. A singular base
    (round-off) falls back to least squares, a singular border to a new factor.

    Parameters
    ----------
    gram_bar : array of shape (n, n)
        ``K̄ = K + 11ᵀ``, the Gram matrix of the features augmented by a column of ones.
    free : array of int
        The free set F.
    """

    def __init__(self, gram_bar: np.ndarray, free: np.ndarray):
        self.gram_bar = gram_bar
        self._factor_on(free)

    def _factor_on(self, free: np.ndarray) -> None:
        """Factor ``K̄_BB``, B = ``free``."""
        self.base = free.copy()
        self.index = np.flatnonzero(free)
        self.position = np.full(free.size, -1)
        self.position[self.index] = np.arange(self.index.size)
        self.columns: dict[int, np.ndarray] = {}
        try:
            self.factor = cho_factor(self._block(self.index), lower=True, overwrite_a=True, check_finite=False)
        except LinAlgError:
            self.factor = None

    def _block(self, index: np.ndarray) -> np.ndarray:
        """``K̄[index, index]`` by two ``take``s (faster than ``np.ix_`` at this size: docs/matrix_svm.md,
        "Tuned constants")."""
        return self.gram_bar.take(index, axis=0).take(index, axis=1)

    def _base_solve(self, rhs: np.ndarray) -> np.ndarray:
        return cho_solve(self.factor, rhs, check_finite=False)

    def _lower_solve(self, rhs: np.ndarray) -> np.ndarray:
        return solve_triangular(self.factor[0], rhs, lower=True, check_finite=False)

    def solve(self, free: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        """x with ``K̄_FF x = rhs``, F = ``free`` (bool mask), rhs and x in F's index order."""
        added, removed = np.flatnonzero(free & ~self.base), np.flatnonzero(self.base & ~free)
        full = np.zeros(free.size)
        full[free] = rhs
        if self.factor is None or added.size + removed.size > self.index.size / REFACTOR_RATIO:
            self._factor_on(free)
            if self.factor is None:
                return lstsq(self._block(np.flatnonzero(free)), rhs, cond=1e-12, check_finite=False)[0]
            added = removed = np.zeros(0, dtype=np.intp)
        if added.size + removed.size == 0:
            solution = self._base_solve(full[self.index])
        else:
            solution = self._bordered(full, added, removed)
            if solution is None or not np.all(np.isfinite(solution)):   # a singular border: start anew
                self._factor_on(free)
                return self.solve(free, rhs)
        x = np.zeros(free.size)
        x[self.index] = solution[:self.index.size]
        x[added] = solution[self.index.size:]
        return x[free]

    def _bordered(self, full: np.ndarray, added: np.ndarray, removed: np.ndarray) -> np.ndarray | None:
        """``[z; x_A]`` of the class docstring (z over B, zero on R up to round-off)."""
        keys = np.r_[added, removed]
        missing = np.array([j for j, key in enumerate(keys) if key not in self.columns], dtype=np.intp)
        if missing.size:
            border = np.zeros((self.index.size, missing.size))
            new_added = added[missing[missing < added.size]]
            border[:, :new_added.size] = self.gram_bar[new_added][:, self.index].T        # K̄_BA
            new_removed = self.position[keys[missing[new_added.size:]]]
            border[new_removed, new_added.size + np.arange(new_removed.size)] = 1.0         # E_R
            self.columns.update(zip(keys[missing].tolist(), self._lower_solve(border).T))
        G = np.column_stack([self.columns[int(key)] for key in keys])
        schur = -G.T @ G
        schur[:added.size, :added.size] += self.gram_bar[np.ix_(added, added)]
        rhs_base = full[self.index]
        rhs_base[self.position[removed]] = 0.0
        y0 = self._lower_solve(rhs_base)
        try:
            u = solve(schur, np.r_[full[added], np.zeros(removed.size)] - G.T @ y0,
                      assume_a="sym", check_finite=False)
        except LinAlgError:
            return None
        z = solve_triangular(self.factor[0], y0 - G @ u, lower=True, trans="T", check_finite=False)
        return np.r_[z, u[:added.size]]


class IterativeFreeSetSystem:
    """Solves ``K̄_FF x = r`` by conjugate gradients on the block ``K̄_FF`` (formed at each call
    and not kept: memory ``|F|²``, against a factor per label for :class:`FreeSetSystem`), from a
    starting point (the current α ∘ y on F). ``solve`` returns
    None when CG does not reach ``CG_RTOL`` within its budget (module docstring); the caller then
    solves by :class:`FreeSetSystem`.

    Parameters
    ----------
    gram_bar : array of shape (n, n)
        ``K̄ = K + 11ᵀ``, the Gram matrix of the features augmented by a column of ones.
    """

    def __init__(self, gram_bar: np.ndarray):
        self.gram_bar = gram_bar
        self.n_iter = 0

    def solve(self, free: np.ndarray, rhs: np.ndarray, start: np.ndarray, rtol: float = CG_RTOL) -> np.ndarray | None:
        """x with ``‖K̄_FF x − rhs‖₂ ≤ rtol ‖rhs‖₂`` (F = ``free``, a bool mask) from ``start``, or
        None (see above).

        Parameters
        ----------
        free : array of bool, shape (n,)
            The free set F.
        rhs : array of shape (n_free,)
            Right-hand side, in F's index order (n_free = the size of F).
        start : array of shape (n_free,)
            Starting point of CG.
        rtol : float
            Relative residual asked.
        """
        index = np.flatnonzero(free)
        # np.ix_ copies |F|² entries only (two takes copy |F|·n first: 2–3× slower at n = 4000);
        # the block is not kept between calls, so one label's block at a time is in memory
        block = self.gram_bar[np.ix_(index, index)]
        budget = max(CG_MIN_BUDGET, index.size // CG_BUDGET_RATIO)
        steps = [0]

        def count(_):
            steps[0] += 1

        x, info = cg(block, rhs, x0=start.astype(np.float64), rtol=rtol, atol=0.0, maxiter=budget, callback=count)
        self.n_iter += steps[0]
        if info != 0 or not np.all(np.isfinite(x)):   # over budget, or K̄_FF numerically singular
            return None
        # CG's recurrence residual drifts from the true one: judge the true residual
        true = rhs - block @ x
        return x if float(np.linalg.norm(true)) <= 2.0 * rtol * float(np.linalg.norm(rhs)) else None


def polish_labels(gram_bar: np.ndarray, signed: np.ndarray, alpha: np.ndarray, C: float, *,
                  gradient: np.ndarray | None = None, scale: float = 0.0,
                  steps: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Candidate optima (in the box) for the labels of ``signed`` (n, k) by at most ``steps`` ≥ 1
    active-set steps from ``alpha`` (n, k), and their products ``K̄(candidate ∘ signed)``;
    ``gradient`` is ``∇g(alpha)`` (needed when ``scale`` c > 0). See the module docstring.

    The labels step in lockstep, each with its own :class:`FreeSetSystem`, so that each step's
    products ``K̄(α ∘ y)`` of all labels still running are one matrix product, not k
    matrix–vector products (docs/matrix_svm.md, "Tuned constants", has the measurement).

    Parameters
    ----------
    gram_bar : array of shape (n, n)
        ``K̄ = K + 11ᵀ``, the Gram matrix of the features augmented by a column of ones.
    signed : array of shape (n, q)
        Signed labels ``Ys = 2Y − 1``.
    alpha : array of shape (n, q)
        Current dual point (feasible).
    C : float
        Regularisation constant (> 0) of the formulation, with the scaling of its objective above.
    gradient : ndarray or None
        Its gradient if known.
    scale : float
        ``c`` of the active-set rule ``α − c∇g`` (0: ``1 / mean diag K̄``).
    steps : int
        Largest number of active-set steps.
    """
    point = alpha.copy() if gradient is None or scale == 0.0 else alpha - scale * gradient
    free, upper = (point > 0.0) & (point < C), point >= C
    upper_product = gram_bar @ np.where(upper, C * signed, 0.0)        # K̄(C y ∘ 1_U) per label
    systems = [None] * signed.shape[1]
    current = np.clip(alpha, 0.0, C)                 # the starting point of CG (iterative systems)
    alpha, product = np.where(upper, C, 0.0), np.empty(signed.shape)
    running = np.arange(signed.shape[1])
    tight = np.zeros(signed.shape[1], dtype=bool)    # CG to CG_RTOL (else CG_LOOSE_RTOL)
    loose = np.zeros(signed.shape[1], dtype=bool)    # the label's last solve was a loose CG solve
    for _ in range(max(steps, 1)):
        for k in running:
            f, y = free[:, k], signed[:, k]
            alpha[:, k] = np.where(upper[:, k], C, 0.0)
            if f.any():
                # Q_FF α_F = 1 − C Q_FU 1  ⇔  K̄_FF (y_F ∘ α_F) = y_F − (K̄(C y ∘ 1_U))_F  (y_F² = 1)
                rhs = y[f] - upper_product[f, k]
                if systems[k] is None:
                    systems[k] = (IterativeFreeSetSystem(gram_bar) if np.count_nonzero(f) >= ITERATIVE_FROM
                                  else FreeSetSystem(gram_bar, f))
                solution, loose[k] = None, False
                if isinstance(systems[k], IterativeFreeSetSystem):
                    solution = systems[k].solve(f, rhs, y[f] * current[f, k],
                                                CG_RTOL if tight[k] else CG_LOOSE_RTOL)
                    loose[k] = solution is not None and not tight[k]
                    if solution is None:     # CG over budget: this label factors from now on
                        systems[k] = FreeSetSystem(gram_bar, f)
                if solution is None:
                    solution = systems[k].solve(f, rhs)
                alpha[f, k] = y[f] * solution
        current[:, running] = alpha[:, running]
        product[:, running] = gram_bar @ (alpha[:, running] * signed[:, running])
        point[:, running] = alpha[:, running]
        if scale != 0.0:
            point[:, running] -= scale * (signed[:, running] * product[:, running] - 1.0)
        new_free = (point[:, running] > 0.0) & (point[:, running] < C)
        new_upper = point[:, running] >= C
        moved = new_upper ^ upper[:, running]
        settled = ~np.any(moved | (new_free ^ free[:, running]), axis=0)
        retighten = settled & loose[running]      # sets repeat after a loose solve: once more, tight
        tight[running[retighten]] = True
        settled &= ~retighten
        for j, k in enumerate(running):   # K̄(C y ∘ 1_U) updated by the rows that entered or left U
            rows = np.flatnonzero(moved[:, j])
            upper_product[:, k] += (np.where(new_upper[rows, j], C, -C) * signed[rows, k]) @ gram_bar[rows]
        free[:, running], upper[:, running] = new_free, new_upper
        running = running[~settled]
        if running.size == 0:
            break
    candidate = np.clip(alpha, 0.0, C)
    clipped = np.flatnonzero(np.any(candidate != alpha, axis=0))
    if clipped.size:
        product[:, clipped] = gram_bar @ (candidate[:, clipped] * signed[:, clipped])
    return candidate, product


def polish_labels_factored(factor: np.ndarray, signed: np.ndarray, alpha: np.ndarray, C: float, *,
                           steps: int = 1) -> np.ndarray:
    """Candidate optima (in the box) for the labels of ``signed`` (n, k) by at most ``steps`` ≥ 1
    active-set steps from ``alpha`` (n, k), for ``K = FFᵀ`` given by its factor F and
    ``K̄ = X̄X̄ᵀ``, ``X̄ = [F, 1]`` (n × p).

    The steps of :func:`polish_labels` (sets from ``α − c∇g``, ``c = 1 / mean diag K̄``), with the
    system on the free set F solved through the factor instead of ``K̄_FF``. With ``Z = diag(y)X̄``,
    ``w_U = C Z_Uᵀ1`` and the thin SVD ``Z_Fᵀ = U S Vᵀ``, stationarity on F (``Z_F w = 1`` for
    ``w = w_U + Z_Fᵀα_F``) gives ::

        α_F = V S⁻² Vᵀ (1 − Z_F w_U).

    The SVD of Z_F holds its small singular values to an absolute ``ε·S_max``; ``K̄_FF = Z_F Z_Fᵀ``,
    once formed, holds its small eigenvalues only to ``ε·S_max²``, so a solve through it carries the
    square of the condition number that this one carries: features far from the origin (emotions,
    columns up to 237 around means up to 155, where cond X̄ ≈ 2e5) leave ``K̄_FF`` singular to
    round-off and :func:`polish_labels` without a usable candidate. Singular values below ``p·ε·S_max`` are
    dropped (duplicate points on the margin: α_F is then the least-norm split, w is unchanged).
    A free set larger than the rank p cannot be a generic optimum's (at most p points lie on a
    label's margin): the label stops stepping there. Each label keeps, of its starting point and
    its steps' points (clipped to the box), the one with the smallest duality gap, since steps from
    sets guessed far from the optimum can land outside the box. As for :func:`polish_labels`, the
    candidate is judged by its own certificate, never trusted.

    Parameters
    ----------
    factor : array of shape (n, p − 1)
        F with ``K = FFᵀ`` (the features for the linear kernel).
    signed : array of shape (n, q)
        Signed labels ``Ys = 2Y − 1``.
    alpha : array of shape (n, q)
        Current dual point (feasible).
    C : float
        Regularisation constant (> 0).
    steps : int
        Largest number of active-set steps per label.
    """
    augmented = np.hstack([factor, np.ones((factor.shape[0], 1))])
    width = augmented.shape[1]
    scale = 1.0 / float(np.mean(np.einsum("ij,ij->i", augmented, augmented)))
    candidate = np.clip(alpha, 0.0, C)
    for k in range(signed.shape[1]):
        y = signed[:, k]

        def gap_and_point(a):
            """The label's duality gap at the clipped ``a`` and the point ``a − c∇g(a)`` of the set rule."""
            primal, dual, *_ = _label_objectives(factor, y[:, None], C, np.clip(a, 0.0, C)[:, None])
            return float(primal[0] - dual[0]), a - scale * (y * (augmented @ (augmented.T @ (y * a))) - 1.0)

        best_gap, point = gap_and_point(candidate[:, k])
        free, upper = (point > 0.0) & (point < C), point >= C
        for _ in range(max(steps, 1)):
            if np.count_nonzero(free) > width:
                break
            step = np.where(upper, C, 0.0)
            if free.any():
                rows = y[free, None] * augmented[free]                    # Z_F
                residual = 1.0 - rows @ (C * augmented[upper].T @ y[upper])
                _, S, Vt = np.linalg.svd(rows.T, full_matrices=False)
                keep = S > width * np.finfo(float).eps * S[0]
                step[free] = Vt[keep].T @ ((Vt[keep] @ residual) / S[keep] ** 2)
            gap, point = gap_and_point(step)
            if gap < best_gap:   # an active-set step from wrong sets can land far outside the box
                best_gap, candidate[:, k] = gap, np.clip(step, 0.0, C)
            new_free, new_upper = (point > 0.0) & (point < C), point >= C
            if np.array_equal(new_free, free) and np.array_equal(new_upper, upper):
                break
            free, upper = new_free, new_upper
    return candidate
