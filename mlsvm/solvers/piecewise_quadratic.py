"""Exact line search on a piecewise quadratic (the Newton steps and one-dimensional problems of
Ganu, Shevade & Sundararajan's Algorithms 2 and 3).

``φ(t) = ½ a t² + b t + w Σ_m max(0, u_m + t e_m)²`` is convex with a piecewise-linear,
nondecreasing derivative; both functions below return its exact minimiser over t ∈ ℝ.
"""

from __future__ import annotations

import numpy as np

__all__ = ["minimize_piecewise_quadratic", "sorted_root"]


def minimize_piecewise_quadratic(a, b, u, e, weight: float):
    """Exact minimiser over t ∈ ℝ of ``φ(t) = ½ a t² + b t + weight Σ_m max(0, u_m + t e_m)²``.

    Batched: ``u, e`` of shape (..., m), ``a > 0`` and ``b`` of shape (...). φ' is piecewise linear
    and nondecreasing. Newton on φ' from t = 0, with the active set at t, safeguarded by
    bisection on the bracket [lo, hi] of the root (``a = 0`` is allowed only with ``e = 0``, a null
    direction: then t = 0); a step whose end point has the same active set
    is the exact root of that piece, so the result is exact (finitely many pieces). Problems not
    settled in 60 steps fall back to :func:`sorted_root` (a safeguard).
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    t = np.zeros(np.broadcast(a, b).shape)
    lo, hi = np.full(t.shape, -np.inf), np.full(t.shape, np.inf)
    done = np.zeros(t.shape, dtype=bool)
    active = u > 0
    for _ in range(60):
        residual = u + t[..., None] * e
        active = residual > 0
        derivative = a * t + b + 2 * weight * np.sum(np.where(active, e * residual, 0.0), axis=-1)
        slope = a + 2 * weight * np.sum(np.where(active, e * e, 0.0), axis=-1)
        lo = np.where(derivative < 0, t, lo)
        hi = np.where(derivative > 0, t, hi)
        done |= (derivative == 0) | (slope <= 0)  # slope 0: a zero direction, t = 0 is as good as any
        step = t - derivative / np.where(slope > 0, slope, 1.0)
        outside = ~((step > lo) & (step < hi))
        with np.errstate(invalid="ignore"):  # −inf + inf where the bracket is still open: unused
            step = np.where(outside, 0.5 * (lo + hi), step)
        same = ~outside & np.all((u + step[..., None] * e > 0) == active, axis=-1)
        t = np.where(done, t, step)
        done |= same
        if np.all(done):
            return t if t.ndim else float(t)
    for index in zip(*np.nonzero(~done)):
        t[index] = sorted_root(float(a[index] if a.ndim else a), float(b[index] if b.ndim else b),
                               u[index], e[index], weight)
    return t if t.ndim else float(t)


def sorted_root(a: float, b: float, u: np.ndarray, e: np.ndarray, weight: float) -> float:
    """The same minimiser by sorting the breakpoints ``−u/e`` and prefix sums (O(m log m)); the
    slow, obviously exact reference for one problem."""
    nz = e != 0
    u, e = u[nz], e[nz]
    breaks = -u / e
    order = np.argsort(breaks)
    breaks, u, e = breaks[order], u[order], e[order]
    rising = e > 0  # term active for t > break; falling terms active for t < break
    eu, ee = e * u, e * e
    # interval m lies between break m-1 and break m
    s1_rise = np.concatenate([[0.0], np.cumsum(np.where(rising, eu, 0.0))])
    s2_rise = np.concatenate([[0.0], np.cumsum(np.where(rising, ee, 0.0))])
    s1_fall = np.concatenate([np.cumsum(np.where(rising, 0.0, eu)[::-1])[::-1], [0.0]])
    s2_fall = np.concatenate([np.cumsum(np.where(rising, 0.0, ee)[::-1])[::-1], [0.0]])
    slope = a + 2 * weight * (s2_rise + s2_fall)
    intercept = b + 2 * weight * (s1_rise + s1_fall)
    right_value = slope[:-1] * breaks + intercept[:-1]     # φ' at the right end of interval m
    m = int(np.argmax(right_value >= 0)) if np.any(right_value >= 0) else breaks.size
    return float(-intercept[m] / slope[m])
