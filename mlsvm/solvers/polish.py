"""Active-set (semismooth Newton) polishing of one label's box-constrained dual (the ``"fast"``
Matrix-SVM solver).

For one label with ±1 labels ``y``, ``Q = diag(y) K̄ diag(y)``, the dual ``min ½αᵀQα − Σα``,
``0 ≤ α ≤ C``, is solved exactly once its active set is known: with ``F`` the free indices
(``0 < α_i < C``) and ``U`` those at ``C``, the optimum satisfies ``Q_FF α_F = 1 − C Q_FU 1``
(stationarity on the free set). :func:`polish_label` is the primal-dual active-set method
(Hintermüller, Ito & Kunisch 2002; a semismooth Newton method on ``α = Π_box(α − c∇g(α))``):
from an approximate α (an AGD iterate) with gradient ``∇g = Qα − 1``, it guesses ::

    L = {i : α_i − c ∇g_i ≤ 0},   U = {i : α_i − c ∇g_i ≥ C},   F = the rest,

solves the system above on F (Cholesky; least squares when Q_FF is singular), recomputes the
gradient and repeats, at most ``steps`` times or until the sets repeat (then, if α_F lies in the
box, the point satisfies the KKT conditions exactly). ``c = 0`` reads the sets off α alone. The
result, clipped to the box, is only a *candidate*: the caller accepts it when its duality gap meets
the tolerance (the certificate does not depend on the guess being right), as OSQP's solution
polishing does.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lstsq

__all__ = ["polish_label"]


def _solve_on_sets(gram_bar, y, free, upper, C) -> np.ndarray:
    """α with α_U = C, α_L = 0 and α_F solving ``Q_FF α_F = 1 − C Q_FU 1`` (not clipped)."""
    alpha = np.where(upper, C, 0.0)
    if not free.any():
        return alpha
    # Q_FF α_F = r  ⇔  K̄_FF (y_F ∘ α_F) = y_F ∘ r  (y_F² = 1): no scaling of the n_F² block;
    # K̄_FU (C y_U) from a full product (a gather of n_F × n_U entries costs more than it saves)
    system = gram_bar[np.ix_(free, free)]
    rhs = y[free] - (gram_bar @ np.where(upper, C * y, 0.0))[free]
    try:
        solution = cho_solve(cho_factor(system, lower=True, overwrite_a=True, check_finite=False), rhs,
                             check_finite=False)
        if not np.all(np.isfinite(solution)):
            raise LinAlgError("non-finite solution")
    except LinAlgError:
        solution = lstsq(gram_bar[np.ix_(free, free)], rhs, cond=1e-12, check_finite=False)[0]
    alpha[free] = y[free] * solution
    return alpha


def polish_label(gram_bar: np.ndarray, y: np.ndarray, alpha: np.ndarray, C: float, *,
                 gradient: np.ndarray | None = None, scale: float = 0.0, steps: int = 1) -> np.ndarray:
    """A candidate optimum (in the box) by ``steps`` active-set steps from ``alpha``; ``gradient``
    is ``∇g(alpha)`` (needed when ``scale`` c > 0). See the module docstring."""
    point = alpha if gradient is None or scale == 0.0 else alpha - scale * gradient
    sets = None
    for _ in range(steps):
        free, upper = (point > 0.0) & (point < C), point >= C
        if sets is not None and np.array_equal(free, sets[0]) and np.array_equal(upper, sets[1]):
            break
        sets = free, upper
        alpha = _solve_on_sets(gram_bar, y, free, upper, C)
        if scale == 0.0:
            point = alpha
        else:
            gradient = y * (gram_bar @ (alpha * y)) - 1.0      # α_L = 0: a full product, no gather
            point = alpha - scale * gradient
    return np.clip(alpha, 0.0, C)
