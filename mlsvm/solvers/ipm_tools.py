"""Pieces shared by the interior-point solvers (Rank-SVM, Matrix-SVM, OvN's equal-mass dual)."""

from __future__ import annotations

import numpy as np

__all__ = ["max_step", "packed_outer"]


def max_step(value: np.ndarray, change: np.ndarray) -> float:
    """Largest ``t ≤ 1`` with ``value + t·change ≥ 0`` (for ``value > 0``): the step to the boundary."""
    shrinking = change < 0
    if not np.any(shrinking):
        return 1.0
    return float(min(1.0, np.min(-value[shrinking] / change[shrinking])))


def packed_outer(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row-wise outer products ``M_ia M_ib`` for ``a ≤ b``, packed: (n × w(w+1)/2), with the index
    arrays ``(rows, cols) = triu_indices(w)`` that unpack them. ``weightsᵀ @ packed`` then forms
    ``Σ_i weight_i M_iM_iᵀ`` for many weight vectors in one matrix product."""
    n, width = matrix.shape
    rows, cols = np.triu_indices(width)
    packed = np.empty((n, rows.size))
    for a, offset in enumerate(np.flatnonzero(np.diff(rows, prepend=-1))):
        packed[:, offset: offset + width - a] = matrix[:, a: a + 1] * matrix[:, a:]
    return packed, rows, cols
