"""Proximal map of the box plus the regularized-bias term, column by column (the ``"fast"``
Matrix-SVM solver's projection step, :func:`mlsvm.solvers.matrix_svm_agd.solve_dual_agd` with ``split_bias``).

With ``K̄ = K + 11ᵀ`` the dual's quadratic is ``½ BᵀK B + ½ (1ᵀB)²`` per label (``B = α ∘ y``,
``1ᵀB = yᵀα``, the bias). The rank-one part carries ``λ_max(K̄)`` (≈ n on an RBF kernel, against
``λ_max(K)`` ≈ 30 on yeast), so moving it from the smooth part into the proximal part shrinks the
Lipschitz constant of the accelerated gradient method. Its proximal map, for a step t::

    prox(v) = argmin_{lower ≤ α ≤ upper}  ½‖α − v‖² + (t/2) (yᵀα)²

has the closed form ``α(μ) = Π_box(v − t μ y)`` at the root μ of ``φ(μ) = μ − yᵀα(μ)``, a
continuous, strictly increasing, piecewise-linear function (slope ``1 + t·#free``, since
``y_i² = 1``). It is found by Newton steps on φ (exact once the free set stops changing),
safeguarded by bisection on the bracket ``[min yᵀα, max yᵀα]`` over the box.
"""

from __future__ import annotations

import numpy as np

__all__ = ["prox_box_bias"]

#: Newton/bisection steps at most (bisection alone would shrink the bracket by 2⁻⁸⁰)
MAX_STEPS = 80


def prox_box_bias(v: np.ndarray, signed: np.ndarray, t: float, lower: float, upper: float,
                  mu: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(prox(v), μ)`` of the module docstring for every column of ``v`` (n, q); ``signed`` the
    ±1 labels (n, q); ``mu`` (q,) a warm start (the previous root).

    Parameters
    ----------
    v : array of shape (n, q)
        Points to project.
    signed : array of shape (n, q)
        Signed labels ``Ys = 2Y − 1``.
    t : float
        Step size (weight of the bias term).
    lower : float
        Lower bound of the box.
    upper : float or ndarray
        Upper bound(s) of the box.
    mu : array of shape (q,) or None
        Warm start of the 1-D roots.
    """
    positive = signed > 0
    low = np.where(positive, lower, -upper).sum(axis=0)    # min over the box of yᵀα
    high = np.where(positive, upper, -lower).sum(axis=0)   # max over the box of yᵀα
    mu = np.zeros(v.shape[1]) if mu is None else np.clip(mu, low, high)
    scale = 1.0 + np.abs(v).sum(axis=0)
    running = np.arange(v.shape[1])      # columns whose root is not found yet (only these are updated)
    for _ in range(MAX_STEPS):
        m, ys = mu[running], signed[:, running]
        shifted = v[:, running] - (t * m) * ys
        phi = m - np.sum(ys * np.clip(shifted, lower, upper), axis=0)
        found = np.abs(phi) <= 1e-14 * scale[running]
        low[running] = np.where(phi < 0.0, m, low[running])
        high[running] = np.where(phi > 0.0, m, high[running])
        slope = 1.0 + t * np.sum((shifted > lower) & (shifted < upper), axis=0)
        newton = m - phi / slope
        inside = (newton > low[running]) & (newton < high[running])
        mu[running] = np.where(found | (phi == 0.0), m,
                               np.where(inside, newton, 0.5 * (low[running] + high[running])))
        running = running[~found]
        if running.size == 0:
            break
    alpha = np.clip(v - (t * mu) * signed, lower, upper)
    return alpha, mu
