"""Pieces shared by the interior-point solvers (Rank-SVM, Matrix-SVM, OvN's equal-mass dual)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor

__all__ = ["max_step", "packed_outer", "ridged_cholesky", "RIDGES"]

#: relative ridges tried in turn when a Newton system is indefinite to round-off
RIDGES = (0.0, 1e-14, 1e-12, 1e-10, 1e-8)


def max_step(value: np.ndarray, change: np.ndarray) -> float:
    """Largest ``t ≤ 1`` with ``value + t·change ≥ 0`` (for ``value > 0``): the step to the boundary.

    Parameters
    ----------
    value : ndarray
        Current positive variables.
    change : ndarray
        Search direction.
    """
    shrinking = change < 0
    if not np.any(shrinking):
        return 1.0
    return float(min(1.0, np.min(-value[shrinking] / change[shrinking])))


def packed_outer(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row-wise outer products ``M_ia M_ib`` for ``a ≤ b``, packed: (n × w(w+1)/2), with the index
    arrays ``(rows, cols) = triu_indices(w)`` that unpack them. ``weightsᵀ @ packed`` then forms
    ``Σ_i weight_i M_iM_iᵀ`` for many weight vectors in one matrix product.

    Parameters
    ----------
    matrix : array of shape (n, r)
        Rows whose outer products are packed.
    """
    n, width = matrix.shape
    rows, cols = np.triu_indices(width)
    packed = np.empty((n, rows.size))
    for a, offset in enumerate(np.flatnonzero(np.diff(rows, prepend=-1))):
        packed[:, offset: offset + width - a] = matrix[:, a: a + 1] * matrix[:, a:]
    return packed, rows, cols


def ridged_cholesky(system: np.ndarray):
    """``cho_factor`` (lower) of a Newton system that is positive definite in exact arithmetic.
    Near the optimum D⁻¹ spans many decades and directions held up only by variables at their
    bounds (or by the identity beside entries ~1e16) can be lost to round-off; then the smallest
    relative ridge of :data:`RIDGES` (times the largest diagonal entry) that restores definiteness
    is added. The step becomes an inexact Newton step; the solvers' stopping rule, a duality gap,
    does not depend on the step being exact.

    Parameters
    ----------
    system : array of shape (m, m)
        Symmetric positive (semi)definite system.
    """
    scale = float(np.max(np.diag(system)))
    for ridge in RIDGES:
        try:
            return cho_factor(system + ridge * scale * np.eye(len(system)) if ridge else system,
                              lower=True, check_finite=False)
        except LinAlgError:
            continue
    raise LinAlgError(f"Newton system not positive definite even with a relative ridge of {RIDGES[-1]:g}")
