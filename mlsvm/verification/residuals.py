"""qpbenchmark-style optimality residuals of a convex QP, computed in numpy.

The QP is written in the standard form of qpsolvers::

    minimise ½ xᵀPx + qᵀx   s.t.  Gx ≤ h  (multiplier z ≥ 0),  Ax = b  (y),  lb ≤ x ≤ ub  (z_box)

with ``z_box = z_ub − z_lb`` (positive where the upper bound is active, negative at the lower).
Matrices may be dense, sparse or :class:`scipy.sparse.linalg.LinearOperator`; a formulation with
``T`` variables never needs more than ``O(T)`` memory besides its Gram matrix.

Each residual is an ∞-norm divided by ``1 +`` the largest ∞-norm among the terms it is made of, so
a residual ≤ 1e-6 means "zero to six digits of the quantities involved":

* ``primal``: infeasibility ``max(‖(Gx − h)₊‖, ‖Ax − b‖, ‖(lb − x)₊‖, ‖(x − ub)₊‖)``
* ``dual``: stationarity ``‖Px + q + Gᵀz + Aᵀy + z_box‖`` and dual feasibility ``‖(−z)₊‖``
* ``complementarity``: ``max(‖z ∘ (h − Gx)‖, ‖z_ub ∘ (ub − x)‖, ‖z_lb ∘ (x − lb)‖)``
* ``gap``: ``|xᵀPx + qᵀx + hᵀz + bᵀy + ubᵀz_box⁺ + lbᵀz_box⁻|``, the primal–dual gap.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import aslinearoperator

__all__ = ["qp_residuals", "inf_norm"]


def inf_norm(v) -> float:
    """``max |v_i|`` (0 for an empty array).

    Parameters
    ----------
    v : array-like
        The vector (any shape; flattened).
    """
    v = np.asarray(v, dtype=np.float64)
    return float(np.max(np.abs(v))) if v.size else 0.0


def _scaled(residual: float, *terms: float) -> float:
    return residual / (1.0 + max((0.0, *terms)))


def qp_residuals(P, q, x, *, G=None, h=None, z=None, A=None, b=None, y=None,
                 lb=None, ub=None, z_box=None) -> dict[str, float]:
    """Scaled residuals ``primal``, ``dual``, ``complementarity``, ``gap`` at ``(x, z, y, z_box)``.

    Parameters
    ----------
    P : ndarray or LinearOperator
        Quadratic term.
    q : ndarray
        Linear term.
    x : ndarray
        Primal point.
    G : ndarray or None
        Inequality matrix (``Gx ≤ h``).
    h : ndarray or None
        Inequality right-hand side.
    z : ndarray or None
        Inequality multipliers (≥ 0).
    A : ndarray or None
        Equality matrix (``Ax = b``).
    b : ndarray or None
        Equality right-hand side.
    y : ndarray or None
        Equality multipliers.
    lb : ndarray or None
        Lower bounds.
    ub : ndarray or None
        Upper bounds.
    z_box : ndarray or None
        Box multipliers (None: implied by stationarity).
    """
    x = np.asarray(x, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    Px = aslinearoperator(P).matvec(x)
    stationarity = Px + q
    primal, primal_terms = [0.0], [inf_norm(x)]
    dual_terms = [inf_norm(Px), inf_norm(q)]
    compl, compl_terms = [0.0], [0.0]
    gap_terms = [float(x @ Px), float(q @ x)]
    dual_infeasible = 0.0
    if G is not None:
        G = aslinearoperator(G)
        Gx, Gtz = G.matvec(x), G.rmatvec(z)
        stationarity = stationarity + Gtz
        primal.append(inf_norm(np.maximum(Gx - h, 0.0)))
        primal_terms += [inf_norm(Gx), inf_norm(h)]
        dual_terms.append(inf_norm(Gtz))
        dual_infeasible = max(dual_infeasible, inf_norm(np.maximum(-z, 0.0)))
        compl.append(inf_norm(z * (h - Gx)))
        compl_terms.append(inf_norm(z) * max(inf_norm(h), inf_norm(Gx)))
        gap_terms.append(float(h @ z))
    if A is not None:
        A = aslinearoperator(A)
        Ax, Aty = A.matvec(x), A.rmatvec(y)
        stationarity = stationarity + Aty
        primal.append(inf_norm(Ax - b))
        primal_terms += [inf_norm(Ax), inf_norm(b)]
        dual_terms.append(inf_norm(Aty))
        gap_terms.append(float(b @ y))
    if z_box is not None:
        z_box = np.asarray(z_box, dtype=np.float64)
        stationarity = stationarity + z_box
        dual_terms.append(inf_norm(z_box))
        upper, lower = np.maximum(z_box, 0.0), np.minimum(z_box, 0.0)
        if ub is not None:
            primal.append(inf_norm(np.maximum(x - ub, 0.0)))
            compl.append(inf_norm(upper * (ub - x)))
            gap_terms.append(float(ub @ upper))
        if lb is not None:
            primal.append(inf_norm(np.maximum(lb - x, 0.0)))
            compl.append(inf_norm(lower * (x - lb)))
            gap_terms.append(float(lb @ lower))
        if ub is None:  # an upper multiplier without an upper bound is dual infeasible
            dual_infeasible = max(dual_infeasible, inf_norm(upper))
        if lb is None:
            dual_infeasible = max(dual_infeasible, inf_norm(lower))
        bounds = [inf_norm(v) for v in (lb, ub) if v is not None]
        compl_terms.append(inf_norm(z_box) * max([inf_norm(x), *bounds]))
    gap = abs(sum(gap_terms))
    return {
        "primal": _scaled(max(primal), *primal_terms),
        "dual": _scaled(max(inf_norm(stationarity), dual_infeasible), *dual_terms),
        "complementarity": _scaled(max(compl), *compl_terms),
        "gap": _scaled(gap, *(abs(t) for t in gap_terms)),
    }
