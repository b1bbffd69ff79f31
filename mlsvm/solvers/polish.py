"""Active-set polishing of one label's box-constrained dual (the ``"fast"`` Matrix-SVM solver).

For one label with ±1 labels ``y``, ``Q = diag(y) K̄ diag(y)``, the dual ``min ½αᵀQα − Σα``,
``0 ≤ α ≤ C``, is solved exactly once its active set is known: with ``F`` the free indices
(``0 < α_i < C``) and ``U`` those at ``C``, the optimum satisfies ``Q_FF α_F = 1 − C Q_FU 1``
(stationarity on the free set). Given an approximate α (an AGD iterate), :func:`polish_label`
guesses the sets from it, solves that system (Cholesky; least squares when Q_FF is singular) and
returns the candidate clipped to the box. It is only a *candidate*: the caller accepts it when its
duality gap meets the tolerance (the certificate does not depend on the guess being right), as
OSQP's solution polishing does.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lstsq

__all__ = ["polish_label"]


def polish_label(gram_bar: np.ndarray, y: np.ndarray, alpha: np.ndarray, C: float) -> np.ndarray:
    """A candidate optimum on the active set of ``alpha`` (see the module docstring)."""
    free = (alpha > 0.0) & (alpha < C)
    upper = alpha >= C
    candidate = np.where(upper, C, 0.0)
    if not free.any():
        return candidate
    yf = y[free]
    system = yf[:, None] * gram_bar[np.ix_(free, free)] * yf[None, :]
    rhs = 1.0 - yf * (gram_bar[np.ix_(free, upper)] @ (C * y[upper]))
    try:
        solution = cho_solve(cho_factor(system, lower=True, check_finite=False), rhs, check_finite=False)
        if not np.all(np.isfinite(solution)):
            raise LinAlgError("non-finite solution")
    except LinAlgError:
        solution = lstsq(system, rhs, cond=1e-12, check_finite=False)[0]
    candidate[free] = np.clip(solution, 0.0, C)
    return candidate
