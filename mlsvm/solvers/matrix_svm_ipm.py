"""Exact Matrix-SVM hinge dual for a low-rank kernel: primal–dual interior point, batched over labels.

Dual of eq. 8 (``A = I``), one box-constrained QP per label k, solved together::

    min_α  Σ_k ½ α_kᵀ Z_kZ_kᵀ α_k − Σ α      s.t.  0 ≤ α ≤ C,    Z_k = diag(Ys_k) X̄

with ``X̄ = [F, 1]`` for a factor ``K = FFᵀ`` (``X`` for the linear kernel), so ``K̄ = X̄X̄ᵀ`` and
``w_k = Z_kᵀα_k`` is label k's primal weight vector (bias included: it is regularized).

KKT with lower/upper multipliers ``z, y ≥ 0`` and slack ``s = C − α``:
``Ys∘(X̄W) − 1 − z + y = 0``, ``α∘z = σμ``, ``s∘y = σμ``. The Newton system of label k,
``(Z_kZ_kᵀ + D_k)Δα_k = r_k`` with ``D = z/α + y/s``, is solved in the primal coordinates
(Woodbury): ``(I + X̄ᵀD_k⁻¹X̄) Δw_k = Z_kᵀD_k⁻¹r_k``, ``Δα_k = D_k⁻¹(r_k − Z_kΔw_k)``. The q matrices
of size r+1 are formed by one product ``(q × n) @ (n × (r+1)(r+2)/2)`` (in centred coordinates,
see the code) and are positive definite (eigenvalues ≥ 1) up to round-off. Mehrotra's
predictor–corrector reuses their Cholesky factors. Cost per iteration ``O(nqr² + qr³)``: on emotions
(593 × 72, q = 6) a few milliseconds, where accelerated gradient needs thousands of iterations
because ``K̄`` has rank r + 1 (no strong convexity).

Rows of tiny D. Near the optimum D → 0 on the free α (at most r + 1 per label on generic data) and
Woodbury's ``Δα_i = (r_i − z_iᵀΔw)/D_i`` cancels: its error grows like ``‖x̄_i‖²/D_i`` (emotions'
raw features, C = 10: relative residuals of the Newton system from 1e-6 to 1e3 over the last
iterations, and the interior point stalled at a gap of 3.5e-4). The rows F where that ratio exceeds
``SPLIT_AMPLIFICATION`` (at most ``SPLIT_MAX_FACTOR·(r+1)`` of them, the largest ratios) are kept out
of the elimination: with ``N`` the system of the other rows, ``Δα_F`` solves the ``|F| × |F|`` Schur
complement ``S = Z_F N⁻¹Z_Fᵀ + D_F`` (no D⁻¹ in it), then ``Δv = N⁻¹(Z_BᵀD_B⁻¹r_B + Z_FᵀΔα_F)``
(centred coordinates) and the other rows B by Woodbury as before. Extra cost per label
``O(|F|·r² + |F|²r + |F|³)``.

Stopping rule (exact, stated): relative duality gap ``(P(W(α)) − D(α)) / max(1, |P|, |D|) ≤ tol``
with P and D the primal and dual objectives of the whole problem (summed over labels).
Reaching ``max_iter``, or a stall (μ ≤ 1e-13·max(1, C) without meeting ``tol``, or the others of
:func:`~mlsvm.solvers.ipm_tools.box_qp_ipm`), returns the best iterate and warns with its gap.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, solve_triangular

from mlsvm.solvers.ipm_tools import Measure, box_qp_ipm, packed_outer, ridged_cholesky
from mlsvm.solvers.result import SolverResult, relative_gap

__all__ = ["interior_point_box", "MAX_WIDTH"]

STOP_RULE = "relative duality gap"
#: r + 1 beyond which the q dense (r+1)² systems cost more than accelerated gradient
MAX_WIDTH = 1500
#: μ (relative to max(1, C)) below which further interior-point steps only amplify round-off
STALL_MU = 1e-13
#: a row i of label k leaves the Woodbury elimination when ‖x̄_i‖² / D_ik exceeds this
SPLIT_AMPLIFICATION = 1e6
#: at most this many times r + 1 rows per label are split off (the largest amplifications)
SPLIT_MAX_FACTOR = 2


class _BatchedHinge:
    """The q label QPs of the module docstring for :func:`~mlsvm.solvers.ipm_tools.box_qp_ipm`:
    no equality rows; Newton systems by Woodbury through the q systems ``G + X̃ᵀD_k⁻¹X̃``, the rows of
    tiny D by their own Schur complement (module docstring)."""

    def __init__(self, factor: np.ndarray, signed: np.ndarray, C: float):
        n = signed.shape[0]
        self.signed, self.C = signed, C
        self.augmented = np.hstack([factor, np.ones((n, 1))])           # X̄
        self.width = width = self.augmented.shape[1]
        # Newton systems in centred coordinates: X̄ = X̃T with X̃ = [F − 1mᵀ, 1], T = [[I, 0], [mᵀ, 1]],
        # so I + X̄ᵀD⁻¹X̄ = Tᵀ(G + X̃ᵀD⁻¹X̃)T with G = T⁻ᵀT⁻¹ = [[I + mmᵀ, −m], [−mᵀ, 1]] and the margin
        # change is X̄Δw = X̃(G + X̃ᵀD⁻¹X̃)⁻¹X̃ᵀu. Uncentred, features around 100 make the columns of X̄
        # nearly parallel and the system indefinite to round-off (entries ~1e16 beside the identity).
        mean = factor.mean(axis=0)
        self.centred = np.hstack([factor - mean, np.ones((n, 1))])      # X̃
        self.metric = np.block([[np.eye(width - 1) + np.outer(mean, mean), -mean[:, None]],
                                [-mean[None, :], np.ones((1, 1))]])     # G
        self.packed, self.rows, self.cols = packed_outer(self.centred)  # n × (r+1)(r+2)/2
        self.row_norms = np.einsum("ij,ij->i", self.augmented, self.augmented)   # diag K̄

    def measure(self, iterate):
        alpha = iterate.alpha
        weights = self.augmented.T @ (alpha * self.signed)               # W = X̄ᵀ(α∘Ys), (r+1) × q
        margins = self.signed * (self.augmented @ weights)               # Z_kZ_kᵀα_k, all labels
        quadratic = float(np.sum(weights * weights))
        primal = 0.5 * quadratic + self.C * float(np.maximum(0.0, 1.0 - margins).sum())
        dual = float(alpha.sum()) - 0.5 * quadratic
        gap = relative_gap(primal, dual)
        return Measure(primal, dual, abs(gap), margins - 1.0, {"relative_gap": gap})

    def factorize(self, d):
        # rows whose elimination through D⁻¹ would amplify round-off by more than SPLIT_AMPLIFICATION
        # (the free α near the optimum, D → 0) are kept in a small system of their own; the rest are
        # eliminated into the (r+1)² systems as before
        amplification = self.row_norms[:, None] / d
        self.split = []
        weights = 1.0 / d                                                 # D⁻¹, 0 on the split rows
        for k in range(d.shape[1]):
            rows = np.flatnonzero(amplification[:, k] > SPLIT_AMPLIFICATION)
            if rows.size > SPLIT_MAX_FACTOR * self.width:
                rows = rows[np.argsort(amplification[rows, k])[-SPLIT_MAX_FACTOR * self.width:]]
            self.split.append(rows)
            weights[rows, k] = 0.0
        self.weights = weights
        systems = np.zeros((self.signed.shape[1], self.width, self.width))
        products = weights.T @ self.packed                               # q × (r+1)(r+2)/2
        systems[:, self.rows, self.cols] = products
        systems[:, self.cols, self.rows] = products
        systems += self.metric
        self.factors = [ridged_cholesky(system) for system in systems]
        # per split label: V = L⁻¹Z_Fᵀ (centred) with N = LLᵀ, and the factor of S = VᵀV + D_F
        self.borders, self.schur = [None] * len(self.split), [None] * len(self.split)
        for k, rows in enumerate(self.split):
            if rows.size:
                V = solve_triangular(self.factors[k][0], (self.signed[rows, k, None] * self.centred[rows]).T,
                                     lower=True, check_finite=False)
                self.borders[k], self.schur[k] = V, ridged_cholesky(V.T @ V + np.diag(d[rows, k]))

    def solve(self, rhs):
        """``(Z_kZ_kᵀ + D_k)⁻¹ rhs_k`` through the primal coordinates (Woodbury); the split rows F
        by the Schur complement ``S = Z_F N⁻¹ Z_Fᵀ + D_F`` of the eliminated rest."""
        solution = self.weights * rhs                                    # D⁻¹r, 0 on the split rows
        right = self.centred.T @ (self.signed * solution)
        delta_v = np.empty_like(right)
        for k, factor in enumerate(self.factors):
            rows, V = self.split[k], self.borders[k]
            if V is None:
                delta_v[:, k] = cho_solve(factor, right[:, k], check_finite=False)
                continue
            # Δv = L⁻ᵀ(L⁻¹ right + V Δα_F) with S Δα_F = r_F − Vᵀ L⁻¹ right
            half = solve_triangular(factor[0], right[:, k], lower=True, check_finite=False)
            solution[rows, k] = cho_solve(self.schur[k], rhs[rows, k] - V.T @ half, check_finite=False)
            delta_v[:, k] = solve_triangular(factor[0], half + V @ solution[rows, k], lower=True, trans="T",
                                             check_finite=False)
        moved = self.weights * self.signed * (self.centred @ delta_v)  # X̄Δw = X̃Δv, on the eliminated rows
        return solution - moved, np.zeros(0)

    def point(self, iterate):
        alpha = np.clip(iterate.alpha, 0.0, self.C)
        coef = alpha * self.signed
        return {"coef": coef, "W": self.augmented.T @ coef}, {"alpha": alpha}


def interior_point_box(factor: np.ndarray, signed: np.ndarray, C: float, *, tol: float = 1e-8,
                       max_iter: int = 100, certificate=None, name: str = "Matrix-SVM interior point",
                       callback=None) -> SolverResult:
    """Solve the hinge dual above for ``K = factor factorᵀ``; ``signed`` is ``Ys`` (n × q, ±1).

    ``certificate(alpha) -> float`` (optional): the largest scaled KKT residual the point will be
    graded on; the run stops only when it too is ``≤ tol`` (:class:`CertifiedStop`).

    Returns ``dual = {"alpha"}`` (n × q) and ``primal = {"coef", "W"}``: ``Θ = α∘Ys`` (n × q) and
    ``W = X̄ᵀΘ`` ((r+1) × q, last row the biases);
    ``history`` has the primal and dual objectives, the relative gap and μ per iteration.

    Parameters
    ----------
    factor : array of shape (n, r + 1)
        Rows of X̄ (features with the column of ones).
    signed : array of shape (n, q)
        Signed labels ``Ys = 2Y − 1``.
    C : float
        Regularisation constant (> 0) of the formulation, with the scaling of its objective above.
    tol : float
        Stopping tolerance: the bound on the quantity of the solver's stop rule (see the model's
        documentation page for which quantity).
    max_iter : int
        Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the value reached.
    name : str
        Solver name in the result.
    certificate : callable or None
        Computes the largest scaled KKT residual of a point (see
        :class:`mlsvm.solvers.result.CertifiedStop`); None: the solver stops on its own gap alone.
    callback : callable or None, optional
        Called as ``callback(n_iter, primal, dual)`` at every iterate, in the names of the result.
    """
    factor = np.asarray(factor, dtype=np.float64)
    if factor.shape[1] + 1 > MAX_WIDTH:
        raise ValueError(f"factor has {factor.shape[1]} columns: the Newton systems would have size "
                         f"{factor.shape[1] + 1} > {MAX_WIDTH}; use mlsvm.solvers.matrix_svm_agd.solve_dual_agd")
    # complementarity at round-off while the gap is not (μ ≤ STALL_MU·max(1, C)): on ill-conditioned
    # data (e.g. features around 100 with C = 10, a bias direction with curvature ~1e4·n) the free α
    # are only known to the accuracy the Newton solves allow, and further steps degrade them
    return box_qp_ipm(_BatchedHinge(factor, signed, C), np.full(signed.shape, float(C)), np.zeros(0),
                      tol=tol, max_iter=max_iter, name=name, stop_rule=STOP_RULE,
                      certificate=None if certificate is None else lambda primal, dual: certificate(dual["alpha"]),
                      callback=callback, mu_floor=STALL_MU * max(1.0, C))
