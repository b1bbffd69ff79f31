"""EXPERIMENTAL alternating (majorize–maximize) solver for the dual of the binary approach (E&W Problem 3).

Status: not exact in general, therefore not a verified solver of the model — it has no
``mlsvm verify`` row and ``BinaryApproachSVM`` does not accept it (see "Known limit" below). What
it does certify, always, is its stop value: ``D ≤ optimum ≤ P`` with ``D`` the dual at the returned
α and ``P`` Problem 3 at the returned primal point, both evaluated exactly by the formulation
(tested against CVXPY, including on labels whose optimal ``λ_k`` is 0). A result with
``converged=False`` carries a ConvergenceWarning quoting that gap.

The reduced dual (see :mod:`mlsvm.formulations.rank_binary`) is

    max_α  Σ α − ¼ (Σ_k ‖u_k‖)²,   0 ≤ α_ik ≤ C/Q,  Σ_i α_ik y_ik = 0,   u_k = Σ_i α_ik y_ik φ(x_i)

and ``(Σ_k ‖u_k‖)² = min_{λ ∈ simplex} Σ_k ‖u_k‖²/λ_k`` (attained at ``λ_k ∝ ‖u_k‖``). So the dual
is ``max_{α, λ} Σ α − ¼ Σ_k ‖u_k‖²/λ_k``, jointly concave, and we alternate exactly:

* α-step, λ fixed: Q independent binary SVMs. With ``α_k = 2 λ_k β_k`` the label-k block is
  ``2λ_k [Σβ − ½‖Σ_i β_i y_ik φ(x_i)‖²]``, ``0 ≤ β ≤ C_k = C/(2Qλ_k)``: LIBSVM's C-SVC
  (scikit-learn ``SVC(kernel="precomputed")``), solved to ``inner_tol``.
* λ-step, α fixed: ``λ_k = ‖u_k‖ / Σ_l ‖u_l‖`` (closed form).

Each step cannot decrease the dual (it is a majorize–maximize scheme for the squared sum of
norms). Labels whose entries all have one sign are trivial: ``α_k = 0``, ``w_k = 0``.

Stopping rule: the relative duality gap ``(P − D)/max(1, |P|, |D|) ≤ tol``, where ``D`` is the dual
objective at the current α (a lower bound on the optimum) and ``P`` Problem 3's objective at the
primal point mapped from α (an upper bound); both exact, so the stop value is a certificate.
Reaching ``max_iter``, or a stall (the best gap fell by less than 10 % over the last
``STALL_WINDOW`` iterations), stops it with a ConvergenceWarning quoting the gap reached.

Known limit (measured, why it is experimental and not an accepted estimator solver): a label whose optimal ``λ_k`` is 0 —
its ``w_k`` lies strictly inside the norm ball, an unconstrained minimiser of its hinge loss (on the
built-in "awkward-labels" problem, linear kernel, labels 1 and 3: CVXPY gives ``λ ≈ 1e-11`` and
``‖w_3‖² = 0.363 < t = 0.547``) — makes λ_k decay geometrically, so ``C_k = C/(2Qλ_k)`` explodes
and LIBSVM (capped at ``INNER_MAX_ITER``) no longer solves the label SVM; the gap stalls near 0.2
and the solver stops with a warning. Otherwise linear convergence: relative gap 1e-7 in 2–90
iterations on the built-in problems.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from mlsvm.formulations import rank_binary as formulation
from mlsvm.solvers.result import SolverResult, warn_not_converged

__all__ = ["solve_binary_approach"]

STOP_RULE = "relative duality gap"
#: cap on LIBSVM iterations per label SVM (module docstring)
INNER_MAX_ITER = 100_000
#: stop (with a ConvergenceWarning) when the best gap fell by < 10 % over this many iterations
STALL_WINDOW = 30


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


def solve_binary_approach(problem: formulation.BinaryApproachProblem, *, tol: float = 1e-7,
                          max_iter: int = 200, inner_tol: float | None = None) -> SolverResult:
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
    lam = np.where(two_signs, 1.0 / max(1, two_signs.sum()), 0.0)
    alpha = np.zeros((n, q))
    beta = np.zeros((n, q))
    history = {"primal": [], "dual": [], "relative_gap": []}
    gap, converged, iteration = np.inf, False, 0
    coef, b = np.zeros((n, q)), np.zeros(q)
    for iteration in range(1, max_iter + 1):
        for k in np.flatnonzero(lam > 0):
            C_label = problem.C / (2.0 * q * lam[k])
            beta[:, k] = _label_svm(problem.gram, Ys[:, k], C_label, inner_tol)
            alpha[:, k] = 2.0 * lam[k] * beta[:, k]
        alpha = np.clip(alpha, 0.0, problem.box)
        # w_k = Σ_i β_ik y_ik φ(x_i), each label SVM's own primal (= u_k/(2λ_k)); unlike the dual map
        # it stays defined as λ_k → 0, where w_k is any zero-loss separator inside the norm ball.
        coef = beta * Ys
        raw = problem.gram @ coef
        b = np.array([formulation.optimal_bias(raw[:, k], Ys[:, k]) for k in range(q)])
        _, _, lam = formulation.primal_from_dual(problem, alpha)
        primal = formulation.primal_objective(problem, coef, b)
        dual = formulation.dual_objective(problem, alpha)
        gap = (primal - dual) / max(1.0, abs(primal), abs(dual))
        history["primal"].append(primal)
        history["dual"].append(dual)
        history["relative_gap"].append(gap)
        if gap <= tol or not np.any(lam > 0):
            converged = True
            break
        gaps = history["relative_gap"]
        if iteration > STALL_WINDOW and min(gaps) >= 0.9 * min(gaps[:-STALL_WINDOW]):
            break  # no tenfold progress in sight: stop early and warn (never silently)
    if not converged:
        warn_not_converged("binary-approach alternating solver", STOP_RULE, gap, tol, iteration)
    return SolverResult(primal={"coef": coef, "b": b}, dual={"alpha": alpha, "lam": lam},
                        converged=converged, n_iter=iteration, stop_value=float(gap), stop_rule=STOP_RULE,
                        solve_time=time.perf_counter() - start, history=history, solver="alternating")
