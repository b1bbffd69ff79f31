"""Accelerated projected gradient (Jain & Rastogi, Alg. 1) for the Matrix-SVM dual, batched or
label by label.

Problem (SPEC §2.5, eq. 8; eq. 10's dual with ``M = AᵀA``; least squares with ``ridge = 1/(2C)``),
with ``B = α ∘ Ys`` and ``K̄ = K + 11ᵀ``::

    min_α  g(α) = ½ tr(Bᵀ K̄ B M) − Σ α + (ridge/2) Σ α²     s.t.  0 ≤ α ≤ C   (hinge; LS: α free)

``∇g = Ys ∘ (K̄ B M) − E + ridge·α`` (eq. 9), Lipschitz constant ``L = λ_max(K̄) λ_max(M) + ridge``
(``lipschitz="exact"``: λ_max by Lanczos, ``scipy.sparse.linalg.eigsh``), or the paper's bound
``‖K̄‖_F ‖M‖_F + ridge`` (``lipschitz="frobenius"``, ≥ the exact one, so a shorter safe step), or a
number. Iteration (FISTA; Alg. 1 with μ = 1/L)::

    α_{t+1} = Π_box(δ − ∇g(δ)/L),   z_{t+1} = (1 + √(1 + 4 z_t²))/2,
    δ ← α_{t+1} + (z_t − 1)/z_{t+1} · (α_{t+1} − α_t)

Alg. 1 also clips δ to the box (``clip_extrapolation=True``); FISTA's theory does not, and without
the clip ``K̄Bδ`` is a combination of the two last products, so each iteration costs one product
``K̄ (n × n) · B (n × q)`` instead of two. ``restart=True``: O'Donoghue & Candès' gradient restart
(momentum reset when ``⟨δ − α_{t+1}, α_{t+1} − α_t⟩ > 0``). ``polish_every=m`` (hinge, A = I):
every m iterations, each label whose relative gap is below ``POLISH_BELOW`` (after a failed
attempt: a tenth of the gap it failed at), or whose gap fell by less than ``STALL_RATIO`` since
the previous check (with a doubling back-off after failures), gets an active-set candidate (:mod:`mlsvm.solvers.matrix_svm_polish`;
these labels step together, one product per step), kept only if *its* gap meets the tolerance; the
AGD iterates are otherwise untouched.

Blocks. Without A the dual separates over labels: each label is its own block with its own
momentum, restart test and duality gap, and a label whose gap meets the tolerance is frozen (no
more products for it). So the batched run performs, label for label, exactly the iterations of the
label-by-label run (:func:`solve_label_by_label`, the paper's BR-SVM, same code); only the matrix
products are batched. With A every label is coupled: one block.

Stop rule (exact certificate): every block's duality gap ``P_b − D_b ≤ tol · max(1, |P_b|, |D_b|)``,
``P`` the primal objective at ``W = X̄ᵀ B Aᵀ``, ``D = −g(α)``; the total relative gap is then ≤ tol
whenever each ``|P_b| ≥ 1`` (and ≤ q·tol in any case). Least squares (α free, the gap only
quadratic in the gradient) also asks the scaled stationarity
``‖∇g‖∞ / (1 + max(1, ‖Ys∘(K̄BM) + ridge·α‖∞)) ≤ tol``, the ``dual`` KKT residual. Reaching
``max_iter`` warns (``ConvergenceWarning`` quoting the largest relative gap reached).

Progress test: at iterations ``PROGRESS_FROM · 2^j`` the best value of the largest block gap over
the second half of the run is compared with its best over the first half; if a doubling of the
iterations brought it down by less than the fraction ``PROGRESS_MIN``, the run stops as stalled
(``ConvergenceWarning``, converged=False). FISTA's bound falls 4× per doubling; at less than 0.1 %
per doubling, a factor 10 would take 2,300 more doublings: the iterates are held by round-off, or by
a scaling or conditioning that gradient steps cannot resolve (a direction whose curvature is ~10⁻¹²
of L; a box of side C = 1e8 crossed in steps of about 1/L).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.sparse.linalg import LinearOperator, eigsh

from mlsvm.solvers.matrix_svm_bias_prox import prox_box_bias
from mlsvm.solvers.matrix_svm_polish import polish_labels
from mlsvm.solvers.result import CertifiedStop, SolverResult, relative_gap, warn_not_converged, warn_stalled

__all__ = ["lambda_max", "lipschitz_constant", "solve_dual_agd", "solve_label_by_label"]

STOP_RULE = "relative duality gap (per block)"
#: polishing is attempted only on labels whose relative gap is already below this: far above it
#: the active set is still off and the steps only refactor (a failed candidate is never wrong,
#: only wasted: its own gap decides). docs/matrix_svm.md ("Tuned constants") has the measurements
#: behind this and the next two constants.
POLISH_BELOW = 5e-2
#: ... or when its gap fell by less than this factor since the previous check: the gradient phase
#: has stalled (large C), where the active-set steps often succeed from far above POLISH_BELOW.
#: After a failed stall attempt the label lets 2, 4, 8, … stalled checks pass.
STALL_RATIO = 2.0
#: active-set steps per polishing attempt: smoother kernels need more steps before the sets repeat;
#: steps after the first are bordered solves on the first factor, so an extra step is cheap.
POLISH_STEPS = 20
#: the progress test (module docstring): first at this iteration, then at every doubling
PROGRESS_FROM = 1000
#: ... a doubling of the iterations that lowers the best largest block gap by less than this
#: fraction is a stall (the slow creep of emotions with the linear kernel lowers it by 2.4-48 % per
#: doubling; docs/matrix_svm.md)
PROGRESS_MIN = 1e-3


def lambda_max(matrix: np.ndarray, minus_ones: bool = False) -> float:
    """Largest eigenvalue of a symmetric PSD matrix (of ``matrix − 11ᵀ`` with ``minus_ones``):
    dense ``eigvalsh`` for n ≤ 200, else Lanczos (``minus_ones`` then as an operator, without an
    n × n copy).

    Parameters
    ----------
    matrix : ndarray
        A symmetric matrix.
    minus_ones : bool
        Take the eigenvalue of ``matrix − 11ᵀ`` (K from K̄ = K + 11ᵀ).
    """
    n = matrix.shape[0]
    if n <= 200:
        return float(np.linalg.eigvalsh(matrix - 1.0 if minus_ones else matrix)[-1])
    if np.all(matrix == 1.0) if minus_ones else not np.any(matrix):
        return 0.0   # K = 0 (every point the zero vector for this kernel): Lanczos has no start (ARPACK error -9)
    operator = (LinearOperator((n, n), matvec=lambda v: matrix @ v - np.sum(v, axis=0), dtype=np.float64)
                if minus_ones else matrix)
    value = eigsh(operator, k=1, which="LA", tol=1e-12, v0=np.ones(n), return_eigenvectors=False)
    return float(value[0])


def lipschitz_constant(gram_bar: np.ndarray, label_gram: np.ndarray | None, ridge: float,
                       rule: str | float = "exact", minus_ones: bool = False) -> float:
    """``L`` of the module docstring for ``rule`` = "exact", "frobenius" or a given number.

    Parameters
    ----------
    gram_bar : array of shape (n, n)
        ``K̄ = K + 11ᵀ``, the Gram matrix of the features augmented by a column of ones.
    label_gram : array of shape (q, q) or None
        ``M = AᵀA`` (None: identity).
    ridge : float
        Curvature ``1/(2C)`` of the least-squares term (0 for the hinge).
    rule : "exact", "frobenius" or float
        ``λ_max`` (exact), the paper's ``‖K̄‖_F`` bound, or a given constant.
    minus_ones : bool
        The constant of ``K̄ − 11ᵀ`` (the smooth part under ``split_bias``) instead of ``K̄``.
    """
    if not isinstance(rule, str):
        if not (np.isfinite(rule) and rule > 0):
            raise ValueError(f"lipschitz must be 'exact', 'frobenius' or a positive number; got {rule!r}")
        return float(rule)
    if rule == "exact":
        label_part = 1.0 if label_gram is None else lambda_max(label_gram)
        return lambda_max(gram_bar, minus_ones) * label_part + ridge
    if rule == "frobenius":  # the paper's L_f = ‖K̄‖_F (§3.2), times ‖M‖_F for eq. 10
        label_part = 1.0 if label_gram is None else float(np.linalg.norm(label_gram))
        return float(np.linalg.norm(gram_bar - 1.0 if minus_ones else gram_bar)) * label_part + ridge
    raise ValueError(f"lipschitz must be 'exact', 'frobenius' or a positive number; got {rule!r}")


def _block_sum(values: np.ndarray, block_of: np.ndarray, n_blocks: int) -> np.ndarray:
    return np.bincount(block_of, weights=values, minlength=n_blocks)


def solve_dual_agd(gram_bar: np.ndarray, signed: np.ndarray, C: float, *, correlation=None,
                   loss: str = "hinge", lipschitz: str | float = "exact", restart: bool = True,
                   clip_extrapolation: bool = False, tol: float = 1e-6, max_iter: int = 20_000,
                   polish_every: int = 0, split_bias: bool = False, alpha0: np.ndarray | None = None,
                   certificate=None, callback=None, name: str = "agd") -> SolverResult:
    """Minimise the dual of the module docstring from ``alpha0`` (default 0, as Alg. 1).

    ``gram_bar`` is ``K + 11ᵀ`` (n, n); ``signed`` the ±1 labels (n, q); ``correlation`` A (q, q) or
    None. Returns ``dual={"alpha"}``, ``primal={"coef": (α∘Ys)Aᵀ}``; ``history`` has the total
    primal, dual and stopping value per iteration. ``callback(t, primal, dual)`` is called each
    iteration. ``certificate(alpha) -> float`` (optional): the largest scaled KKT residual the
    point will be graded on; the run stops only when it too is ``≤ tol`` (:class:`CertifiedStop`:
    otherwise every block's gap target is divided by 10 and the blocks go on).

    Parameters
    ----------
    gram_bar : array of shape (n, n)
        ``K̄ = K + 11ᵀ``, the Gram matrix of the features augmented by a column of ones.
    signed : array of shape (n, q)
        Signed labels ``Ys = 2Y − 1``.
    C : float
        Regularisation constant (> 0) of the formulation, with the scaling of its objective above.
    correlation : array of shape (q, q) or None
        Label-correlation matrix A of the MLRL extension (eq. 10); None means the identity.
    loss : {"hinge", "squared"}
        Hinge loss (eq. 1) or least squares (eq. 12).
    lipschitz : "exact", "frobenius" or float
        Step rule (see :func:`lipschitz_constant`).
    restart : bool
        Adaptive restart of the momentum.
    clip_extrapolation : bool
        Clip the extrapolated point to the box (Alg. 1 as printed).
    tol : float
        Stopping tolerance: the bound on the quantity of the solver's stop rule (see the model's
        documentation page for which quantity).
    max_iter : int
        Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the value reached.
    polish_every : int
        Attempt the active-set polish every this many iterations (0: never).
    split_bias : bool
        Move the rank-one bias term into the proximal step.
    alpha0 : ndarray or None
        Warm start for the dual variables (feasible), or None for the solver's default start.
    certificate : callable or None
        Computes the largest scaled KKT residual of a point (see
        :class:`mlsvm.solvers.result.CertifiedStop`); None: the solver stops on its own gap alone.
    callback : callable or None
        Called once per iteration, for monitoring only (it does not change the iterates).
    name : str
        Solver name in the result and warnings.
    """
    start = time.perf_counter()
    n, q = signed.shape
    label_gram = None if correlation is None else correlation.T @ correlation
    ridge = 1.0 / (2.0 * C) if loss == "squared" else 0.0
    lower, upper = (0.0, C) if loss == "hinge" else (-np.inf, np.inf)
    if split_bias and label_gram is not None:
        raise ValueError("split_bias needs correlation=None (with A the bias term couples the labels)")
    # split_bias: the smooth part is ½BᵀKB (K = K̄ − 11ᵀ), the bias term ½(1ᵀB)² goes to the prox;
    # K's λ_max is computed by Lanczos on the operator v ↦ K̄v − 1(1ᵀv), without an n × n copy of K
    # a smooth part with (numerically) no curvature (e.g. K ≈ 0 at a tiny feature scale): any step is
    # valid; the floor keeps it finite (still ≤ 1/L, since L is below the floor then)
    floor = 1e-12 * max(1.0, float(np.max(np.abs(np.diagonal(gram_bar)))))
    step = 1.0 / max(lipschitz_constant(gram_bar, label_gram, ridge, lipschitz, minus_ones=split_bias), floor)
    bias_root = np.zeros(q)                           # warm start of the prox's root μ per label
    block_of = np.arange(q) if label_gram is None else np.zeros(q, dtype=np.intp)
    n_blocks = int(block_of.max()) + 1

    def product(B, columns):   # K̄ B M on the given columns (all columns when coupled)
        out = gram_bar @ B
        return out if label_gram is None else out @ label_gram

    alpha = np.zeros((n, q)) if alpha0 is None else np.clip(np.array(alpha0, dtype=np.float64), lower, upper)
    previous = alpha.copy()
    scores = product(alpha * signed, None)          # K̄BM at α_t
    previous_scores = scores.copy()
    momentum = np.ones(n_blocks)                      # z_t per block
    active = np.ones(n_blocks, dtype=bool)
    polish_below = np.full(n_blocks, POLISH_BELOW)    # a failed attempt waits for a 10× smaller gap
    check_gap = np.full(n_blocks, np.inf)             # each block's gap at the previous polish check
    stall_wait = np.zeros(n_blocks)                   # stalled checks to let pass before an attempt
    stall_backoff = np.ones(n_blocks)                 # doubled after each failed attempt
    polish_scale = 1.0 / float(np.mean(np.diag(gram_bar)))   # c of the active-set guess α − c∇g
    block_gap = np.full(n_blocks, np.inf)
    history = {"primal": [], "dual": [], "stop_value": [], "relative_gap": [], "n_active_blocks": []}
    stop, certified = CertifiedStop(tol, certificate), False
    worst_gaps = []                                   # the largest block gap after each iteration
    no_progress = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        columns = np.flatnonzero(active[block_of])
        z = momentum[block_of[columns]]
        z_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * z * z))
        beta = (z - 1.0) / z_next
        a, a_prev = alpha[:, columns], previous[:, columns]
        Ys = signed[:, columns]
        delta = a + beta * (a - a_prev)
        if clip_extrapolation:  # Alg. 1 as printed: δ clipped, its product recomputed
            delta = np.clip(delta, lower, upper)
            delta_scores = product(delta * Ys, columns)
        else:                   # K̄(δ∘Ys)M by linearity: no extra product
            s, s_prev = scores[:, columns], previous_scores[:, columns]
            delta_scores = s + beta * (s - s_prev)
        gradient = Ys * delta_scores - 1.0 + ridge * delta
        if split_bias:
            gradient -= Ys * np.sum(delta * Ys, axis=0)          # K̄Bδ − 1(1ᵀBδ) = KBδ
            new, bias_root[columns] = prox_box_bias(delta - step * gradient, Ys, step, lower, upper,
                                                    bias_root[columns])
        else:
            new = np.clip(delta - step * gradient, lower, upper)
        new_scores = product(new * Ys, columns)

        # duality gap per block at the new iterate (an exact certificate)
        B = new * Ys
        quadratic = _block_sum(np.sum(B * new_scores, axis=0), block_of[columns], n_blocks)
        residual = 1.0 - Ys * new_scores
        loss_cols = (np.maximum(residual, 0.0).sum(axis=0) if loss == "hinge"
                     else np.sum(residual * residual, axis=0))
        primal = 0.5 * quadratic + C * _block_sum(loss_cols, block_of[columns], n_blocks)
        dual = (_block_sum(new.sum(axis=0) - 0.5 * ridge * np.sum(new * new, axis=0),
                           block_of[columns], n_blocks) - 0.5 * quadratic)
        blocks = np.unique(block_of[columns])
        relative = relative_gap(primal[blocks], dual[blocks])
        restart_now = np.zeros(n_blocks, dtype=bool)
        if restart:
            test = _block_sum(np.sum((delta - new) * (new - a), axis=0), block_of[columns], n_blocks)
            restart_now[blocks] = test[blocks] > 0.0

        previous[:, columns], alpha[:, columns] = a, new
        previous_scores[:, columns], scores[:, columns] = scores[:, columns], new_scores
        block_z_next = np.ones(n_blocks)
        block_z_next[block_of[columns]] = z_next        # equal within a block
        momentum[blocks] = np.where(restart_now[blocks], 1.0, block_z_next[blocks])
        done = relative <= stop.target
        if loss == "squared":   # α free: also the scaled stationarity ‖∇g‖∞ (the gap is only quadratic in it)
            fitted = Ys * new_scores + ridge * new
            stationarity = np.abs(fitted - 1.0).max(axis=0) / (1.0 + np.maximum(np.abs(fitted).max(axis=0), 1.0))
            done &= np.maximum.reduceat(stationarity, _starts(block_of[columns])) <= stop.target
        active[blocks[done]] = False
        block_gap[blocks] = relative
        if polish_every and n_iter % polish_every == 0 and loss == "hinge" and label_gram is None:
            stalled = np.zeros(n_blocks, dtype=bool)
            stalled[blocks] = relative > check_gap[blocks] / STALL_RATIO
            check_gap[blocks] = relative
            ready = np.array([k for k, gap in zip(blocks, relative)
                              if active[k] and (gap <= polish_below[k] or (stalled[k] and stall_wait[k] <= 0))],
                             dtype=np.intp)
            stall_wait[blocks] -= stalled[blocks]
            if ready.size:
                candidate, candidate_scores, polished = _polish(gram_bar, signed[:, ready], C, polish_scale,
                                                                alpha[:, ready], scores[:, ready])
                accept = polished <= stop.target
                kept = ready[accept]
                alpha[:, kept], scores[:, kept] = candidate[:, accept], candidate_scores[:, accept]
                active[kept], block_gap[kept] = False, polished[accept]
                failed = ready[~accept]
                polish_below[failed] = np.minimum(polish_below[failed], block_gap[failed] / 10.0)
                stall_backoff[failed] *= 2.0
                stall_wait[failed] = stall_backoff[failed]
        if callback is not None:
            callback(n_iter, {"coef": _coef(alpha, signed, correlation)}, {"alpha": alpha})
        _record(history, signed, alpha, scores, C, loss, ridge, int(active.sum()))
        if not active.any():
            certified = stop.accept(alpha)
            if certified or stop.stalled:
                break
            active[:] = True       # the certificate asks more: every block to the tighter target
        worst_gaps.append(float(block_gap.max()))
        no_progress = _no_progress(worst_gaps)
        if no_progress:
            history["stalled"] = n_iter
            break
    converged = certified
    worst_gap = float(block_gap.max())
    if no_progress:
        warn_stalled(name, f"{STOP_RULE}, lowered by less than {PROGRESS_MIN:.1%} over iterations "
                           f"{n_iter // 2 + 1}–{n_iter},", worst_gap, stop.residual, tol)
    elif stop.stalled:
        warn_stalled(name, STOP_RULE, worst_gap, stop.residual, tol)
    elif not converged:
        warn_not_converged(name, STOP_RULE, worst_gap, tol, max_iter)
    coef = _coef(alpha, signed, correlation)
    return SolverResult(primal={"coef": coef}, dual={"alpha": alpha}, converged=converged, n_iter=n_iter,
                        stop_value=worst_gap, stop_rule=STOP_RULE, solve_time=time.perf_counter() - start,
                        history=history, solver=name)


def _coef(alpha, signed, correlation):
    """``Θ = (α∘Ys)Aᵀ`` (module docstring)."""
    return alpha * signed if correlation is None else (alpha * signed) @ correlation.T


def _polish(gram_bar, signed, C, scale, alpha, scores):
    """Polished candidates for some labels (:func:`mlsvm.solvers.matrix_svm_polish.polish_labels`,
    ``POLISH_STEPS`` active-set steps from the sets of ``α − scale·∇g``): ``(α, K̄(α∘Ys), relative
    duality gap per label)``. The caller keeps a label's candidate only when its gap meets ``tol``."""
    candidate, candidate_scores = polish_labels(gram_bar, signed, alpha, C, gradient=signed * scores - 1.0,
                                                scale=scale, steps=POLISH_STEPS)
    quadratic = np.sum(candidate * signed * candidate_scores, axis=0)
    primal = 0.5 * quadratic + C * np.maximum(1.0 - signed * candidate_scores, 0.0).sum(axis=0)
    dual = candidate.sum(axis=0) - 0.5 * quadratic
    return candidate, candidate_scores, relative_gap(primal, dual)


def _no_progress(worst_gaps: list) -> bool:
    """The progress test of the module docstring on the largest block gaps of the iterations so far
    (False but at the iterations ``t = PROGRESS_FROM · 2^j``). A gap that is not a number (the
    objectives overflowed: a C near the float limit) is no progress: with it the comparisons were
    all false and the run went on to ``max_iter``."""
    t = len(worst_gaps)
    if t < PROGRESS_FROM or t % PROGRESS_FROM or (t // PROGRESS_FROM) & (t // PROGRESS_FROM - 1):
        return False
    gaps = np.nan_to_num(np.asarray(worst_gaps), nan=np.inf)
    before, after = gaps[:t // 2].min(), gaps[t // 2:].min()
    return not np.isfinite(after) or after > (1.0 - PROGRESS_MIN) * before


def _starts(sorted_blocks: np.ndarray) -> np.ndarray:
    """First position of each block in a sorted block-index array (for ``reduceat``)."""
    return np.flatnonzero(np.r_[True, sorted_blocks[1:] != sorted_blocks[:-1]])


def _record(history, signed, alpha, scores, C, loss, ridge, n_active) -> None:
    """Total primal, dual and relative gap of all labels (frozen ones at their final values)."""
    B = alpha * signed
    quadratic = float(np.sum(B * scores))
    residual = 1.0 - signed * scores
    loss_value = np.maximum(residual, 0.0).sum() if loss == "hinge" else np.sum(residual * residual)
    primal = 0.5 * quadratic + C * float(loss_value)
    dual = float(alpha.sum()) - 0.5 * quadratic - 0.5 * ridge * float(np.sum(alpha * alpha))
    history["primal"].append(primal)
    history["dual"].append(dual)
    history["stop_value"].append(float(relative_gap(primal, dual)))
    history["relative_gap"].append(relative_gap(primal, dual))
    history["n_active_blocks"].append(n_active)


def solve_label_by_label(gram_bar: np.ndarray, signed: np.ndarray, C: float, *, loss: str = "hinge",
                         lipschitz: str | float = "exact", **options) -> SolverResult:
    """The paper's BR-SVM baseline: :func:`solve_dual_agd` run on one label at a time (A = I).

    The Lipschitz constant is computed once and shared (it does not depend on the labels).
    ``n_iter`` is the total over labels; ``history["n_iter_per_label"]`` lists them.

    Parameters
    ----------
    gram_bar : array of shape (n, n)
        ``K̄ = K + 11ᵀ``, the Gram matrix of the features augmented by a column of ones.
    signed : array of shape (n, q)
        Signed labels ``Ys = 2Y − 1``.
    C : float
        Regularisation constant (> 0) of the formulation, with the scaling of its objective above.
    loss : {"hinge", "squared"}
        Hinge loss (eq. 1) or least squares (eq. 12).
    lipschitz : "exact", "frobenius" or float
        Step rule.
    **options
        Passed to :func:`solve_dual_agd` for each label.
    """
    start = time.perf_counter()
    ridge = 1.0 / (2.0 * C) if loss == "squared" else 0.0
    constant = lipschitz_constant(gram_bar, None, ridge, lipschitz, minus_ones=bool(options.get("split_bias")))
    alpha0 = options.pop("alpha0", None)
    results = [solve_dual_agd(gram_bar, signed[:, [k]], C, loss=loss, lipschitz=constant,
                              alpha0=None if alpha0 is None else np.asarray(alpha0)[:, [k]], **options)
               for k in range(signed.shape[1])]
    alpha = np.hstack([r.dual["alpha"] for r in results])
    return SolverResult(
        primal={"coef": alpha * signed}, dual={"alpha": alpha}, converged=all(r.converged for r in results),
        n_iter=sum(r.n_iter for r in results), stop_value=max(r.stop_value for r in results),
        stop_rule=STOP_RULE, solve_time=time.perf_counter() - start,
        history={"n_iter_per_label": [r.n_iter for r in results]}, solver="agd-label-by-label")
