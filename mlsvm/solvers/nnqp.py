"""Sub-solvers for the small non-negative QP of one mLODM block (paper eq. 24)::

    min_η  F(η) = ½ ηᵀHη + vᵀη     s.t.  η ≥ 0,        H symmetric positive definite

Optimality (KKT) is ``η ≥ 0``, ``g = Hη + v ≥ 0``, ``η ∘ g = 0``, i.e. the natural residual
``r(η) = min(η, g)`` vanishes. For H with smallest eigenvalue σ and norm L the error bound
``‖η − η*‖₂ ≤ (1 + L)/σ · ‖r(η)‖₂`` holds (strongly monotone LCP), which is how the tests turn a
residual into a distance.

* :func:`nnqp_active_set`: exact. A primal active-set method (Lawson–Hanson style) for strictly
  convex QPs with bounds: solve the equality-constrained QP on the free set, step back to the
  boundary when it leaves the orthant, free the most negative gradient on the bound set when
  not. Finite termination; it stops at an exact KKT point up to round-off of the linear solves.
  A warm start (the block's previous value) usually ends it in one or two solves.
* :func:`nnqp_m3`: the multiplicative updates of Sha, Saul & Lee (paper Alg. 2), from η = 1 as the
  paper prescribes. It converges only asymptotically; it stops when ``‖r(η)‖_∞ ≤ tol`` (absolute).
"""

from __future__ import annotations

import numpy as np

__all__ = ["nnqp_active_set", "nnqp_m3", "natural_residual"]


def natural_residual(H: np.ndarray, v: np.ndarray, eta: np.ndarray) -> float:
    """``‖min(η, Hη + v)‖_∞``: zero exactly at the optimum of the NNQP.

    Parameters
    ----------
    H : ndarray
        Symmetric positive semidefinite matrix of the quadratic term.
    v : array of shape (p,)
        Linear term.
    eta : array of shape (p,)
        Point η ≥ 0.
    """
    return float(np.max(np.abs(np.minimum(eta, H @ eta + v)))) if eta.size else 0.0


def nnqp_active_set(H: np.ndarray, v: np.ndarray, start: np.ndarray | None = None,
                    max_iter: int | None = None) -> tuple[np.ndarray, int]:
    """Exact solution of the NNQP by a primal active-set method. Returns ``(η, n_solves)``.

    ``start`` (≥ 0) is a warm start; its positive entries form the initial free set. Raises
    ``RuntimeError`` after ``max_iter`` (default ``10·p + 10``) working-set changes, which for a
    positive definite H only happens through cycling on a degenerate vertex.

    Parameters
    ----------
    H : ndarray
        Symmetric positive semidefinite matrix of the quadratic term.
    v : array of shape (p,)
        Linear term of ``½ηᵀHη + vᵀη``.
    start : ndarray or None
        Starting point (None: the solver's default).
    max_iter : int
        Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the value reached.
    """
    p = v.size
    x = np.zeros(p) if start is None else np.maximum(start, 0.0)
    free = x > 0
    max_iter = 10 * p + 10 if max_iter is None else max_iter
    scale = max(1.0, float(np.max(np.abs(v)))) if p else 1.0
    # Guess: free the entries that are positive or have a negative gradient at the start. If the
    # QP on that set has a positive solution it is a feasible start with a larger free set (saves
    # the one-entry-at-a-time growth from a cold start); otherwise start from ``start`` itself.
    guess = free | (H @ x + v < 0)
    extra = 0
    if np.any(guess & ~free):
        index = np.flatnonzero(guess)
        trial = np.linalg.solve(H[np.ix_(index, index)], -v[index])
        extra = 1
        if np.all(trial > 0):
            x = np.zeros(p)
            x[index] = trial
            free = guess
    for n_solves in range(1 + extra, max_iter + 1 + extra):
        target = np.zeros(p)
        if np.any(free):
            index = np.flatnonzero(free)
            target[index] = np.linalg.solve(H[np.ix_(index, index)], -v[index])
        leaving = free & (target <= 0.0)
        if not np.any(leaving):
            x = target
            gradient = H @ x + v
            candidates = np.where(free, 0.0, gradient)
            j = int(np.argmin(candidates))
            # a bound entry with a negative gradient (beyond round-off of v) may still decrease F
            if candidates[j] >= -1e-14 * scale:
                return x, n_solves
            free[j] = True
        else:
            # move from x towards target until the first free entry hits zero
            ratios = x[leaving] / (x[leaving] - target[leaving])
            step = float(np.min(ratios))
            x = x + step * (target - x)
            hit = leaving.copy()
            hit[leaving] = ratios <= step
            x[hit] = 0.0
            free &= ~hit
            x[~free] = 0.0
    raise RuntimeError(f"active-set NNQP did not terminate in {max_iter} working-set changes (cycling)")


def nnqp_m3(H: np.ndarray, v: np.ndarray, tol: float = 1e-8, max_iter: int = 10_000,
            start: np.ndarray | None = None) -> tuple[np.ndarray, int, float]:
    """Multiplicative Margin Maximization (paper Alg. 2; Sha et al. 2002).

    With ``H⁺ = max(H, 0)``, ``H⁻ = max(−H, 0)``, ``a = H⁺η``, ``c = H⁻η``, every entry is updated
    by ``η_j ← η_j · (−v_j + √(v_j² + 4 a_j c_j)) / (2 a_j)``; F never increases. Starts from
    ``η = 1`` (the paper) unless ``start`` is given; stops when the natural residual
    ``‖min(η, Hη + v)‖_∞ ≤ tol`` or after ``max_iter`` updates. Returns
    ``(η, n_updates, residual)``; the caller decides whether an unmet tolerance is an error.

    Parameters
    ----------
    H : ndarray
        Symmetric positive semidefinite matrix of the quadratic term.
    v : array of shape (p,)
        Linear term of ``½ηᵀHη + vᵀη``.
    tol : float
        Stopping tolerance: the bound on the quantity of the solver's stop rule (see the model's
        documentation page for which quantity).
    max_iter : int
        Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the value reached.
    start : ndarray or None
        Starting point (None: the solver's default).
    """
    positive = np.maximum(H, 0.0)
    negative = np.maximum(-H, 0.0)
    eta = np.ones(v.size) if start is None else np.array(start, dtype=np.float64)
    residual = natural_residual(H, v, eta)
    n_updates = 0
    while residual > tol and n_updates < max_iter:
        a = positive @ eta
        c = negative @ eta
        root = np.sqrt(v * v + 4.0 * a * c)
        # an entry at exactly 0 stays 0 (a may vanish there); elsewhere a ≥ H_jj η_j > 0
        factor = np.divide(root - v, 2.0 * a, out=np.zeros_like(eta), where=a > 0)
        eta = eta * factor
        n_updates += 1
        residual = natural_residual(H, v, eta)
    return eta, n_updates, residual
