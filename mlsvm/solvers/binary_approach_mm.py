"""Alternating (majorize–maximize) solver for the dual of the binary approach (E&W Problem 3),
with labels whose optimal ``λ_k`` is 0 switched to their exact hinge-loss LP.

The reduced dual (see :mod:`mlsvm.formulations.rank_binary`) is

    max_α  Σ α − ¼ (Σ_k ‖u_k‖)²,   0 ≤ α_ik ≤ C/Q,  Σ_i α_ik y_ik = 0,   u_k = Σ_i α_ik y_ik φ(x_i)

and ``(Σ_k ‖u_k‖)² = min_{λ ∈ simplex} Σ_k ‖u_k‖²/λ_k`` (attained at ``λ_k ∝ ‖u_k‖``). So the dual
is ``max_{α, λ} Σ α − ¼ Σ_k ‖u_k‖²/λ_k``, jointly concave, and we alternate exactly:

* α-step, λ fixed: Q independent binary SVMs. With ``α_k = 2 λ_k β_k`` the label-k block is
  ``2λ_k [Σβ − ½‖Σ_i β_i y_ik φ(x_i)‖²]``, ``0 ≤ β ≤ C_k = C/(2Qλ_k)``: LIBSVM's C-SVC
  (scikit-learn ``SVC(kernel="precomputed")``), solved to ``inner_tol``; ``w_k = Σ_i β_ik y_ik φ(x_i)``.
* λ-step, α fixed: ``λ_k = ‖u_k‖ / Σ_l ‖u_l‖`` (closed form).

Each step cannot decrease the dual. Labels whose entries all have one sign are trivial:
``α_k = 0``, ``w_k = 0``.

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

Why this is exact: for a switched set I, the remaining problem over the free labels, plus the
constants ``m_k``, is a lower bound on Problem 3 (``h_k(t) ≥ m_k`` for every t), and the composite
point is feasible for Problem 3 whenever ``r_k ≤ t`` — then both are optimal. The composite α is
dual-feasible (``u_k = 0`` for switched labels, the LIBSVM blocks keep ``Σ yβ = 0``), so the
stopping rule below certifies the result whatever the heuristic switching did.

Stopping rule: the relative duality gap ``(P − D)/max(1, |P|, |D|) ≤ tol``, where ``D`` is the dual
objective at the current α (a lower bound on the optimum) and ``P`` Problem 3's objective at the
current primal point (an upper bound); both exact, so the stop value is a certificate. Reaching
``max_iter``, or a stall (the best gap fell by less than 10 % over the last ``STALL_WINDOW``
iterations since the last restore), stops it with a ConvergenceWarning quoting the gap reached.

Measured (tol 1e-7): every built-in problem and kernel converges (awkward-labels/linear: 73
iterations, two labels switched; synthetic-80x6x5/linear: one label switched, ~300 iterations —
the alternation is linearly convergent, slowly when some λ_k is small); 150 random small problems
with awkward label structures all within the EXACT row of CVXPY.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.optimize import linprog
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from mlsvm.formulations import rank_binary as formulation
from mlsvm.kernels import gram_factor
from mlsvm.solvers.result import SolverResult, warn_not_converged

__all__ = ["solve_binary_approach"]

STOP_RULE = "relative duality gap"
#: cap on LIBSVM iterations per label SVM (module docstring)
INNER_MAX_ITER = 100_000
#: stop (with a ConvergenceWarning) when the best gap fell by < 10 % over this many iterations
STALL_WINDOW = 30
#: a label with λ_k < SWITCH_LAMBDA / (number of free labels) is a candidate for λ_k = 0
SWITCH_LAMBDA = 0.1


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


def solve_binary_approach(problem: formulation.BinaryApproachProblem, *, tol: float = 1e-7,
                          max_iter: int = 1000, inner_tol: float | None = None) -> SolverResult:
    """Solve Problem 3 by alternating maximisation of its dual (module docstring).

    Returns a :class:`SolverResult` with ``primal = {"coef", "b"}`` (``w_k = Σ_i coef_ik φ(x_i)``)
    and ``dual = {"alpha", "lam"}``; ``history`` holds the primal, dual and relative gap per
    iteration. ``inner_tol`` (LIBSVM's stopping tolerance) defaults to ``min(1e-3, 1e-3·tol)``.
    """
    start = time.perf_counter()
    inner_tol = min(1e-3, 1e-3 * tol) if inner_tol is None else inner_tol
    Ys = problem.signed
    n, q = Ys.shape
    two_signs = np.array([np.any(Ys[:, k] > 0) and np.any(Ys[:, k] < 0) for k in range(q)])
    factor = gram_factor(problem.gram)
    lp = {k: _hinge_lp(factor, Ys[:, k], problem.box) for k in np.flatnonzero(two_signs)}
    lp_norm = {k: (float(r[1] @ r[1]) if r is not None else np.inf) for k, r in lp.items()}
    switched = np.zeros(q, dtype=bool)   # labels fixed at λ_k = 0 with their LP solution
    never_again = np.zeros(q, dtype=bool)   # labels whose switch was undone
    lam = np.where(two_signs, 1.0 / max(1, two_signs.sum()), 0.0)
    alpha = np.zeros((n, q))
    beta = np.zeros((n, q))
    history = {"primal": [], "dual": [], "relative_gap": []}
    gap, converged, iteration, phase_start = np.inf, False, 0, 0
    coef, b = np.zeros((n, q)), np.zeros(q)
    for iteration in range(1, max_iter + 1):
        for k in np.flatnonzero((lam > 0) & ~switched):
            C_label = problem.C / (2.0 * q * lam[k])
            beta[:, k] = _label_svm(problem.gram, Ys[:, k], C_label, inner_tol)
            alpha[:, k] = 2.0 * lam[k] * beta[:, k]
        alpha = np.clip(alpha, 0.0, problem.box)
        # w_k = Σ_i β_ik y_ik φ(x_i), each label SVM's own primal (= u_k/(2λ_k)); unlike the dual map
        # it stays defined as λ_k → 0, where w_k is any zero-loss separator inside the norm ball.
        coef = beta * Ys
        for k in np.flatnonzero(switched):
            alpha[:, k] = lp[k][0]
            coef[:, k] = formulation.coefficients_from_factor(factor, lp[k][1][:, None])[:, 0]
        raw = problem.gram @ coef
        b = np.array([formulation.optimal_bias(raw[:, k], Ys[:, k]) for k in range(q)])
        _, _, lam = formulation.primal_from_dual(problem, np.where(switched, 0.0, alpha))
        lam[switched] = 0.0
        primal = formulation.primal_objective(problem, coef, b)
        dual = formulation.dual_objective(problem, alpha)
        gap = (primal - dual) / max(1.0, abs(primal), abs(dual))
        history["primal"].append(primal)
        history["dual"].append(dual)
        history["relative_gap"].append(gap)
        if gap <= tol or not np.any(lam > 0):
            converged = True
            break
        # a label whose λ_k collapses and whose hinge minimiser fits in the ball ‖w‖² ≤ t of the
        # others is switched to λ_k = 0 with its exact LP solution (module docstring, "exact").
        norms = formulation.label_norms(problem.gram, coef)
        free = two_signs & ~switched
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
        gaps = history["relative_gap"][phase_start:]
        if len(gaps) > STALL_WINDOW and min(gaps) >= 0.9 * min(gaps[:-STALL_WINDOW]):
            break  # no tenfold progress in sight: stop early and warn (never silently)
    if not converged:
        warn_not_converged("binary-approach alternating solver", STOP_RULE, gap, tol, iteration)
    return SolverResult(primal={"coef": coef, "b": b}, dual={"alpha": alpha, "lam": lam},
                        converged=converged, n_iter=iteration, stop_value=float(gap), stop_rule=STOP_RULE,
                        solve_time=time.perf_counter() - start, history=history, solver="alternating")
