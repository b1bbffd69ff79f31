"""Compiled loops of the sparse max-margin models (:mod:`mlsvm.solvers.sparse_mm_greedy`).

* :func:`smsvm_candidate_gains`: SMSVM's candidate scoring (Alg. 2, (3.12)); each candidate's k
  one-dimensional problems in turn, their terms written from the margins and the candidate's kernel
  column and solved exactly by :func:`mlsvm.solvers.piecewise_quadratic._exact_minimiser`.
"""

from __future__ import annotations

import numpy as np

from mlsvm.solvers.compiled import compiled
from mlsvm.solvers.piecewise_quadratic import _active_sums, _exact_minimiser

__all__ = ["smsvm_candidate_gains"]


@compiled
def _smsvm_gains(margins, label, columns, K_jj, own_scores, curvature, lam, R_inv, weight, coef, decrease):
    """The loop of :func:`smsvm_candidate_gains` (``own_scores`` updated, ``coef`` and ``decrease``
    written)."""
    n, k = margins.shape
    count = columns.shape[0]
    size = n * max(k - 1, 1)
    u, e = np.empty(size), np.empty(size)
    flags = np.empty(size, dtype=np.bool_)
    listed_u, listed_e, breaks = np.empty(size), np.empty(size), np.empty(size)
    for c in range(count):
        for r in range(k):
            # the terms that change when class r's score moves by t·K[:, j] (the classes before r
            # moved already: coef[c, :r]; coef[c, r:] = 0)
            m = 0
            for i in range(n):
                column = columns[c, i]
                if label[i] != r:     # (i, r): 1 + S_ir − S_iy_i
                    u[m], e[m] = margins[i, r] - column * coef[c, label[i]], column
                    m += 1
                else:                 # (i, p), p ≠ r: 1 + S_ip − S_ir
                    for p in range(k):
                        if p != r:
                            u[m], e[m] = margins[i, p] + column * coef[c, p], -column
                            m += 1
            b = 0.0
            for q in range(k):        # λ (F_j R⁻¹)_r at the candidate's own row as it moves
                b += own_scores[c, q] * R_inv[r, q]
            eu, ee, rising = _active_sums(u[:m], e[:m])
            t, gain = _exact_minimiser(curvature[r] * K_jj[c], lam * b, u[:m], e[:m], weight, eu, ee, rising,
                                       flags, listed_u, listed_e, breaks)
            coef[c, r] = t
            decrease[c] += gain
            own_scores[c, r] += t * K_jj[c]


def smsvm_candidate_gains(F, label, columns, K_jj, own_scores, lam, R_inv, weight):
    """SMSVM's (3.12) for every candidate: ``(decrease of e_J, α_{j,·})``, shapes (κ,) and (κ, k).

    Parameters
    ----------
    F : array of shape (n, k)
        Current training scores.
    label : array of int, shape (n,)
        The true classes y_i.
    columns : array of shape (κ, n)
        The candidates' kernel columns.
    K_jj : array of shape (κ,)
        The candidates' kernel diagonal.
    own_scores : array of shape (κ, k)
        The candidates' own rows of F.
    lam : float
        Regularisation weight λ.
    R_inv : array of shape (k, k)
        ``R⁻¹``.
    weight : float
        The loss weight c.
    """
    n, k = F.shape
    margins = 1.0 + F - F[np.arange(n), label][:, None]
    count = columns.shape[0]
    coef, decrease = np.zeros((count, k)), np.zeros(count)
    _smsvm_gains(margins, np.ascontiguousarray(label, dtype=np.int64), np.ascontiguousarray(columns, dtype=np.float64),
                 np.ascontiguousarray(K_jj, dtype=np.float64), np.array(own_scores, dtype=np.float64),
                 lam * np.diag(R_inv), float(lam), np.ascontiguousarray(R_inv, dtype=np.float64), float(weight),
                 coef, decrease)
    return decrease, coef
