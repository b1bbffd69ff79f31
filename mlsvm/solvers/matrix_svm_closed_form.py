"""Closed form of the least-squares Matrix-SVM (Jain & Rastogi eq. 12/14; SPEC §2.5).

``min_W ½ tr(WᵀW) + C ‖Ys − X̄ W A‖²_F`` (eq. 14, which *equals* eq. 12 because ``|Ys| = 1``; see
:mod:`mlsvm.formulations.matrix_svm`). Stationarity gives ``W = X̄ᵀ B Aᵀ`` with
``B = 2C (Ys − X̄WA)``, i.e. the linear system

    K̄ B M + B / (2C) = Ys,        K̄ = K + 11ᵀ,  M = AᵀA.

Without A: ``B = (K̄ + I/(2C))⁻¹ Ys`` by one Cholesky factorisation (in the linear primal:
``W = (X̄ᵀX̄ + I/(2C))⁻¹ X̄ᵀ Ys``, ridge regression with penalty ``1/(2C)`` on the augmented X).
With A: the eigendecompositions ``K̄ = UΛUᵀ``, ``M = VμVᵀ`` diagonalise it,
``B = U [(UᵀYsV)_ij / (λ_i μ_j + 1/(2C))] Vᵀ``. The dual variables are ``α = B ∘ Ys`` (free).
Direct solve, no iterations: ``stop_rule`` is "direct".
"""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import cho_factor, cho_solve, eigh

from mlsvm.solvers.result import SolverResult

__all__ = ["solve_least_squares"]


def solve_least_squares(gram_bar: np.ndarray, signed: np.ndarray, C: float, *, correlation=None) -> SolverResult:
    """Solve ``K̄ B M + B/(2C) = Ys`` exactly; returns ``alpha = B ∘ Ys`` and ``coef = B Aᵀ``.

    Parameters
    ----------
    gram_bar : array of shape (n, n)
        ``K̄ = K + 11ᵀ``, the Gram matrix of the features augmented by a column of ones.
    signed : array of shape (n, q)
        Signed labels ``Ys = 2Y − 1``.
    C : float
        Regularisation constant (> 0) of the formulation, with the scaling of its objective above.
    correlation : array of shape (q, q) or None
        Label-correlation matrix A of the MLRL extension (eq. 10); None means the identity.
    """
    start = time.perf_counter()
    shift = 1.0 / (2.0 * C)
    if correlation is None:
        system = gram_bar + shift * np.eye(gram_bar.shape[0])
        B = cho_solve(cho_factor(system, lower=True), signed)
        coef = B
    else:
        sample_values, U = eigh(gram_bar)
        label_values, V = eigh(correlation.T @ correlation)
        rotated = U.T @ signed @ V
        B = U @ (rotated / (np.outer(sample_values, label_values) + shift)) @ V.T
        coef = B @ correlation.T
    return SolverResult(primal={"coef": coef}, dual={"alpha": B * signed}, converged=True, n_iter=1,
                        stop_value=0.0, stop_rule="direct", solve_time=time.perf_counter() - start,
                        solver="closed-form")
