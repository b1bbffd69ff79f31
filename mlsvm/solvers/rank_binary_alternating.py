"""EXPERIMENTAL alternating solver for the dual of the binary approach (E&W Problem 3), with labels
whose optimal ``λ_k`` is 0 switched to their exact hinge-loss LP and a safeguarded secant λ-step.

Status: NOT exact in general (a hypothesis counterexample, a label with a tiny positive optimal λ_k,
settles above tol and warns), so it is not a verified solver of the model; ``BinaryApproachSVM`` does
not accept it. The returned α is dual-feasible and ``D ≤ optimum ≤ P`` (tested). The exact solver is
:mod:`mlsvm.solvers.rank_binary_waterfill`; measurements and the counterexample: docs/rank_binary.md.

The reduced dual (see :mod:`mlsvm.formulations.rank_binary`) is

    max_α  Σ α − ¼ (Σ_k ‖u_k‖)²,   0 ≤ α_ik ≤ C/Q,  Σ_i α_ik y_ik = 0,   u_k = Σ_i α_ik y_ik φ(x_i)

and ``(Σ_k ‖u_k‖)² = min_{λ ∈ simplex} Σ_k ‖u_k‖²/λ_k`` (attained at ``λ_k ∝ ‖u_k‖``). So the dual
is ``max_{α, λ} Σ α − ¼ Σ_k ‖u_k‖²/λ_k``, jointly concave, and we alternate exactly:

* α-step, λ fixed: Q independent binary SVMs. With ``α_k = 2 λ_k β_k`` the label-k block is
  ``2λ_k [Σβ − ½‖Σ_i β_i y_ik φ(x_i)‖²]``, ``0 ≤ β ≤ C_k = C/(2Qλ_k)``: LIBSVM's C-SVC
  (scikit-learn ``SVC(kernel="precomputed")``), solved to ``inner_tol``; ``w_k = Σ_i β_ik y_ik φ(x_i)``.
* λ-step, α fixed: ``λ_k = ‖u_k‖ / Σ_l ‖u_l‖`` (closed form, the MM step; each MM step cannot
  decrease the dual), or the secant step of :func:`_secant_lambda` (at the optimum every free label
  has ``‖w_k‖² = t`` and ‖w_k‖² depends on λ_k only), damped like a trust region: after an iterate
  that did not improve the best gap the damping halves and the step restarts from the best
  iterate; below 1/16 the MM step is taken. Secant steps make the dual non-monotone.

Labels whose entries all have one sign are trivial: ``α_k = 0``, ``w_k = 0``.

Labels with ``λ_k = 0`` (the norm constraint ``‖w_k‖² ≤ t`` inactive: on "awkward-labels", linear
kernel, labels 1 and 3, ``‖w_3‖² = 0.363 < t = 0.547``). Alone, the alternation cannot reach them:
λ_k decays geometrically, ``C_k → ∞`` and LIBSVM stops being accurate (gap stalled at 0.17). But
``λ_k = 0`` forces ``u_k = 2λ_k w_k = 0``, so the label's dual block is the LP
``max Σ_i α_ik  s.t. box, Σ_i α_ik y_ik = 0, Lᵀ(y_k∘α_k) = 0`` (``K = L Lᵀ``), whose value ``m_k`` is
the label's unconstrained hinge minimum and whose equality multipliers are a minimiser
``(w_k^LP, b_k^LP)`` with norm ``r_k`` (LP duality; HiGHS, exact to its vertex tolerances). Before
the loop every non-trivial label's LP is solved once. A free label is *switched* (λ_k = 0, α_k and
w_k from its LP, no LIBSVM call) when ``λ_k < SWITCH_LAMBDA/(number of free labels)`` and
``r_k ≤ t``, the largest ‖w_l‖² of the free labels; a switched label is restored (once, with
``λ_k = 1/Q``) when t falls below its ``r_k``.

Why the switching is exact: for a switched set I, the remaining problem over the free labels, plus the
constants ``m_k``, is a lower bound on Problem 3 (``h_k(t) ≥ m_k`` for every t), and the composite
point is feasible for Problem 3 whenever ``r_k ≤ t`` — then both are optimal. The composite α is
dual-feasible (``u_k = 0`` for switched labels, the LIBSVM blocks keep ``Σ yβ = 0``), so the
stopping rule below certifies the result whatever the heuristic switching did.

Stopping rule: the relative duality gap ``(P − D)/max(1, |P|, |D|) ≤ tol``, where ``D`` is the dual
objective at the current α (a lower bound on the optimum) and ``P`` Problem 3's objective at the
current primal point (an upper bound); both exact, so the stop value is a certificate. Reaching
``max_iter``, or a stall (the best gap fell by less than 10 % over the last ``STALL_WINDOW``
iterations since the last restore), stops it with a ConvergenceWarning quoting the gap reached,
returning the iterate with the best certified gap.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.optimize import brentq, linprog
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from mlsvm.formulations import rank_binary as formulation
from mlsvm.kernels import gram_factor
from mlsvm.solvers.result import SolverResult, relative_gap, warn_not_converged

__all__ = ["solve_binary_approach"]

STOP_RULE = "relative duality gap"
#: cap on LIBSVM iterations per label SVM (module docstring)
INNER_MAX_ITER = 100_000
#: stop (with a ConvergenceWarning) when the best gap fell by < 10 % over this many iterations
STALL_WINDOW = 30
#: a label with λ_k < SWITCH_LAMBDA / (number of free labels) is a candidate for λ_k = 0
SWITCH_LAMBDA = 0.1
#: safeguards of the secant λ-step: largest exponent 1/e_k and largest |Δ log λ_k| per step
SECANT_MAX_EXPONENT = 50.0
SECANT_MAX_LOG_STEP = 2.0


def _label_svm(gram: np.ndarray, y: np.ndarray, C_label: float, inner_tol: float) -> np.ndarray:
    """β of the binary C-SVC ``max Σβ − ½ βᵀ diag(y) K diag(y) β``, ``0 ≤ β ≤ C_label``, ``Σ yβ = 0``."""
    # LIBSVM can cycle at tight tolerances on degenerate labels (measured: 23 of 24 positive with a
    # duplicated point, tol 1e-8); cap its iterations and let the outer duality gap judge the result.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = SVC(C=C_label, kernel="precomputed", tol=inner_tol, shrinking=False,
                    max_iter=INNER_MAX_ITER).fit(gram, y)
    beta = np.zeros(y.size)
    beta[model.support_] = np.abs(model.dual_coef_.ravel())
    return np.minimum(beta, C_label)


def _hinge_lp(factor: np.ndarray, y: np.ndarray, box: float):
    """Label k with ``λ_k = 0``: ``u_k = 0``, so its dual block is the LP
    ``max Σα  s.t.  0 ≤ α ≤ box,  Σ_i α_i y_i = 0,  Lᵀ(y∘α) = 0`` whose value is the label's
    unconstrained hinge minimum ``min_{w,b} box Σ_i (1 − y_i(⟨w, φ(x_i)⟩ + b))₊`` (LP duality).
    Solved by HiGHS; returns ``(α, v, b)`` with ``v`` the minimiser's factor coordinates (minus the
    multipliers of the equalities), or ``None`` when HiGHS does not report success."""
    A_eq = np.vstack([factor.T * y, y])
    res = linprog(-np.ones(y.size), A_eq=A_eq, b_eq=np.zeros(A_eq.shape[0]), bounds=(0.0, box),
                  method="highs")
    if res.status != 0:
        return None
    marginals = -np.asarray(res.eqlin.marginals)
    return np.clip(res.x, 0.0, box), marginals[:-1], float(marginals[-1])


def _secant_lambda(lam_used, svm_norms, previous, free):
    """Secant-Newton λ-step (module docstring): every free label's ‖w_k‖² depends on its own λ_k only
    and must equal a common t at the optimum; with the elasticities e_k = −Δlog‖w_k‖²/Δlog λ_k of
    the last two iterates, ``λ_k ← λ_k (‖w_k‖²/t)^{1/e_k}`` with t such that Σλ = 1. ``None`` (use the
    MM step) without usable history."""
    if previous is None or free.sum() < 2:
        return None
    old_lam, old_norms = previous
    idx = free
    if np.any(old_lam[idx] <= 0) or np.any(lam_used[idx] <= 0) or np.any(svm_norms[idx] <= 0) \
            or np.any(old_norms[idx] <= 0):
        return None
    dl = np.log(lam_used[idx]) - np.log(old_lam[idx])
    dn = np.log(svm_norms[idx]) - np.log(old_norms[idx])
    if np.any(np.abs(dl) < 1e-12):
        return None
    elasticity = -dn / dl
    if not np.all(np.isfinite(elasticity)):
        return None
    # a flat label (e_k ≈ 0: its SVM at its hard-margin / saturated solution) takes the largest step
    exponent = 1.0 / np.maximum(elasticity, 1.0 / SECANT_MAX_EXPONENT)
    log_lam, log_norm = np.log(lam_used[idx]), np.log(svm_norms[idx])

    def excess(log_t):
        return logsumexp(log_lam + exponent * (log_norm - log_t))

    low, high = log_norm.min() - 60.0, log_norm.max() + 60.0
    log_t = brentq(excess, low, high, xtol=1e-14) if excess(low) > 0 > excess(high) else None
    if log_t is None:
        return None
    step = np.clip(exponent * (log_norm - log_t), -SECANT_MAX_LOG_STEP, SECANT_MAX_LOG_STEP)
    lam = np.zeros_like(lam_used)
    lam[idx] = np.exp(log_lam + step)
    return lam / lam.sum()


def solve_binary_approach(problem: formulation.BinaryApproachProblem, *, tol: float = 1e-7,
                          max_iter: int = 1000, inner_tol: float | None = None, callback=None) -> SolverResult:
    """Solve Problem 3 by alternating maximisation of its dual (module docstring).

    Returns a :class:`SolverResult` with ``primal = {"coef", "b"}`` (``w_k = Σ_i coef_ik φ(x_i)``)
    and ``dual = {"alpha", "lam"}``; ``history`` holds the primal, dual, stopping value and relative
    gap per iteration (the stopping value is the relative gap). ``inner_tol`` (LIBSVM's stopping
    tolerance) defaults to ``min(1e-3, 1e-3·tol)``. ``callback(iteration, primal, dual)`` is called
    each iteration with the current point as dicts of the same names.

    Parameters
    ----------
    problem : BinaryApproachProblem
        The binary-approach problem.
    tol : float, default=1e-7
        Tolerance on the relative duality gap.
    max_iter : int, default=1000
        Maximum number of alternating iterations.
    inner_tol : float or None, optional
        LIBSVM's stopping tolerance for the label SVMs; None means ``min(1e-3, 1e-3·tol)``.
    callback : callable or None, optional
        Called as ``callback(iteration, primal, dual)`` with the current point, in the names of the
        result.
    """
    start = time.perf_counter()
    inner_tol = min(1e-3, 1e-3 * tol) if inner_tol is None else inner_tol
    Ys = problem.signed
    n, q = Ys.shape
    two_signs = np.array([np.any(Ys[:, k] > 0) and np.any(Ys[:, k] < 0) for k in range(q)])
    gram = problem.gram_matrix   # this (unregistered) solver works on the n × n matrix
    factor = gram_factor(gram)
    lp = {k: _hinge_lp(factor, Ys[:, k], problem.box) for k in np.flatnonzero(two_signs)}
    lp_norm = {k: (float(r[1] @ r[1]) if r is not None else np.inf) for k, r in lp.items()}
    switched = np.zeros(q, dtype=bool)   # labels fixed at λ_k = 0 with their LP solution
    never_again = np.zeros(q, dtype=bool)   # labels whose switch was undone
    lam = np.where(two_signs, 1.0 / max(1, two_signs.sum()), 0.0)
    alpha = np.zeros((n, q))
    beta = np.zeros((n, q))
    history = {"primal": [], "dual": [], "stop_value": [], "relative_gap": []}
    gap, converged, iteration, phase_start = np.inf, False, 0, 0
    coef, b = np.zeros((n, q)), np.zeros(q)
    previous, best, anchor, rho, trial_was_mm = None, None, None, 1.0, True
    best_overall = None
    for iteration in range(1, max_iter + 1):
        lam_used = lam.copy()
        for k in np.flatnonzero((lam > 0) & ~switched):
            C_label = problem.C / (2.0 * q * lam[k])
            beta[:, k] = _label_svm(gram, Ys[:, k], C_label, inner_tol)
            alpha[:, k] = 2.0 * lam[k] * beta[:, k]
        alpha = np.clip(alpha, 0.0, problem.box)
        # w_k = Σ_i β_ik y_ik φ(x_i), each label SVM's own primal (= u_k/(2λ_k)); unlike the dual map
        # it stays defined as λ_k → 0, where w_k is any zero-loss separator inside the norm ball.
        coef = beta * Ys
        svm_norms = formulation.label_norms(gram, coef)
        for k in np.flatnonzero(switched):
            alpha[:, k] = lp[k][0]
            coef[:, k] = formulation.coefficients_from_factor(factor, lp[k][1][:, None])[:, 0]
        raw = gram @ coef
        b = np.array([formulation.optimal_bias(raw[:, k], Ys[:, k]) for k in range(q)])
        mapped, mapped_b, lam = formulation.coef_from_dual(problem, np.where(switched, 0.0, alpha))
        lam[switched] = 0.0
        primal = formulation.primal_objective(problem, coef, b)
        # second upper bound: the dual map (equal norms S/2 on the free labels), LP points kept
        mapped[:, switched] = coef[:, switched]
        raw = gram @ mapped
        mapped_b = np.array([formulation.optimal_bias(raw[:, k], Ys[:, k]) for k in range(q)])
        mapped_primal = formulation.primal_objective(problem, mapped, mapped_b)
        if mapped_primal < primal:
            primal, coef, b = mapped_primal, mapped, mapped_b
        dual = formulation.dual_objective(problem, alpha)
        gap = relative_gap(primal, dual)
        for key, value in zip(history, (primal, dual, gap, gap)):
            history[key].append(value)
        if callback is not None:
            callback(iteration, {"coef": coef, "b": b}, {"alpha": alpha, "lam": lam})
        improved = best is None or gap < best[0]
        if improved:
            best = (gap, coef.copy(), b.copy(), alpha.copy(), lam.copy())
        if best_overall is None or gap < best_overall[0]:
            best_overall = (gap, coef.copy(), b.copy(), alpha.copy(), lam.copy())
        if gap <= tol or not np.any(lam > 0):
            converged = True
            break
        # a label whose λ_k collapses and whose hinge minimiser fits in the ball ‖w‖² ≤ t of the
        # others is switched to λ_k = 0 with its exact LP solution (module docstring, "exact").
        norms = formulation.label_norms(gram, coef)
        free = two_signs & ~switched
        switched_before = switched.copy()
        t = norms[free].max() if free.any() else 0.0
        for k in np.flatnonzero(switched & ~never_again):
            if lp_norm[k] > t * (1.0 + 1e-9):   # the ball shrank below its minimiser: undo, once
                switched[k], never_again[k] = False, True
                lam[k] = 1.0 / max(1, two_signs.sum())   # restart it as a free label (λ ≠ 0)
                phase_start = iteration   # a new problem for the stall rule
        for k in np.flatnonzero(free & ~never_again & (lam < SWITCH_LAMBDA / max(1, free.sum()))):
            if lp_norm[k] <= t and (two_signs & ~switched).sum() > 1:
                switched[k] = True
        free = two_signs & ~switched
        lam = np.where(free, np.maximum(lam, 1e-12), 0.0)
        lam /= max(lam.sum(), 1e-300)
        # λ-step safeguard (trust region on the secant step): from an improving iterate take the
        # damped secant step; after a failed one, halve the damping and retry from the best
        # iterate; below 1/16, or without a secant, take the MM step (which is then accepted).
        if not np.array_equal(switched, switched_before):   # a new problem: restart the λ-steps
            previous, anchor, rho, trial_was_mm = None, None, 1.0, True
            best = None
        elif improved or trial_was_mm:
            secant = _secant_lambda(lam_used, svm_norms, previous, free)
            if np.any(free & (lam_used == 0)):
                secant = None
            rho = min(1.0, 2.0 * rho) if improved else rho
            anchor = (lam_used, lam.copy(), secant)
            previous = (lam_used, svm_norms)
        else:
            rho /= 2.0
        anchor_lam, anchor_mm, anchor_secant = anchor if anchor is not None else (lam, lam, None)
        if anchor is None:
            pass
        elif anchor_secant is not None and rho >= 1.0 / 16.0 and np.array_equal(anchor_lam > 0, free):
            with np.errstate(divide="ignore"):
                step = np.where(free, np.log(np.maximum(anchor_secant, 1e-300)) - np.log(np.maximum(anchor_lam, 1e-300)), 0.0)
            lam = np.where(free, anchor_lam * np.exp(rho * step), 0.0)
            lam /= lam.sum()
            trial_was_mm = False
        else:
            lam = np.where(free, anchor_mm, 0.0) if improved or trial_was_mm else lam
            lam /= max(lam.sum(), 1e-300)
            trial_was_mm = True
        gaps = history["relative_gap"][phase_start:]
        if len(gaps) > STALL_WINDOW and min(gaps) >= 0.9 * min(gaps[:-STALL_WINDOW]):
            break  # no tenfold progress in sight: stop early and warn (never silently)
    if not converged:
        gap, coef, b, alpha, lam = best_overall   # the best certified iterate
        warn_not_converged("binary-approach alternating solver", STOP_RULE, gap, tol, iteration)
    return SolverResult(primal={"coef": coef, "b": b}, dual={"alpha": alpha, "lam": lam},
                        converged=converged, n_iter=iteration, stop_value=float(gap), stop_rule=STOP_RULE,
                        solve_time=time.perf_counter() - start, history=history, solver="alternating")
