"""Feature selection for multilabel ranking (Elisseeff & Weston §7, Problem 9): multiplicative updates.

Linear models only (the method relies on the linearity of ``⟨w_k, x⟩``). Per label k a scaling
vector ``z_k ∈ R^d`` (the paper's ``w_k^t``); at every iteration solve Problem 9 with a soft margin
(so it is always feasible; SPEC §2.1), written with the ½ and the pair weights of Rank-SVM's
canonical primal::

    min_{w,b,ξ}  ½ Σ_k ‖w_k‖² + C Σ_i 1/(|Y_i||Ȳ_i|) Σ_{(k,l) ∈ Y_i×Ȳ_i} ξ_ikl
    s.t.  ⟨w_k ∘ z_k, x_i⟩ − ⟨w_l ∘ z_l, x_i⟩ + b_k − b_l ≥ 1 − ξ_ikl,  ξ ≥ 0

then ``z_k ← w_k ∘ z_k`` (step 4). Since ``v_k = w_k ∘ z_k`` is the effective weight, each step is a
ridge reweighted by ``1/z²``: coordinates that shrink are penalised more and go to zero, an
approximation of minimising the number of non-zero ``(w_1..w_Q)`` entries [Weston et al. 2003].

Departure from the paper: step 2 starts from ``w^0 = 0``, which makes every product ``w ∘ w^0``
zero (Problem 9 infeasible; with a soft margin the update would stay at 0 forever). We start from
``z = 1`` as the zero-norm method of [17] does. Entries with ``|z| ≤ zero_tol · max|z|`` are set to
0 exactly (they can never come back under a multiplicative update).

Stopping rule (step 5, "unless w^{t+1} = w^t"): ``max |z^{t+1} − z^t| ≤ tol · max(1, max |z^t|)``.
The inner problems are solved by CVXPY (ground-truth accuracy; the problems are small: ``Q·d``
weights and ``T`` slacks).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mlsvm.data import check_scalar, check_X_Y, ranking_pairs
from mlsvm.kernels import check_row_norms
from mlsvm.solvers.cvxpy_tools import solve

__all__ = ["FeatureSelectionResult", "scaled_ranking_problem", "multiplicative_feature_selection"]


@dataclass
class FeatureSelectionResult:
    """``selected``: indices of the features with a non-zero scaling for some label; ``scaling``
    ``(Q, d)`` the final ``z``; ``history`` the ``z`` after every iteration (``history[0]`` = ones);
    ``objectives`` the inner optimum per iteration.

    Parameters
    ----------
    selected : array of int
        Indices of the selected features.
    scaling : array of shape (d, q)
        Final per-label feature scalings z.
    history : list of ndarray
        The scalings of every iteration.
    objectives : list of float
        Objective of Problem 9 at every iteration.
    n_iter : int
        Iterations performed.
    converged : bool
        Whether the scalings stopped changing within tol.
    """

    selected: np.ndarray
    scaling: np.ndarray
    history: list = field(default_factory=list)
    objectives: list = field(default_factory=list)
    n_iter: int = 0
    converged: bool = False


def scaled_ranking_problem(X: np.ndarray, pairs, scaling: np.ndarray, C: float):
    """CVXPY soft-margin Problem 9 for a fixed scaling ``z`` (Q, d). Returns ``(problem, W)``.

    Parameters
    ----------
    X : array of shape (n, d)
        Features.
    pairs : RankingPairs
        Ranking pairs of the labels.
    scaling : array of shape (d, q)
        Current per-label feature scalings z.
    C : float
        Soft-margin constant of Problem 9.
    """
    n, d = X.shape
    q = scaling.shape[0]
    W = cp.Variable((q, d))
    b = cp.Variable(q)
    xi = cp.Variable(pairs.n_pairs)
    scores = X @ cp.multiply(W, scaling).T + np.ones((n, 1)) @ cp.reshape(b, (1, q), order="C")
    margins = pairs.gather_matrix("F") @ cp.vec(scores, order="F")  # F[i,k] − F[i,l]
    objective = 0.5 * cp.sum_squares(W) + C * (pairs.weight @ xi)
    return cp.Problem(cp.Minimize(objective), [margins >= 1 - xi, xi >= 0]), W


def multiplicative_feature_selection(X, Y, *, C: float = 1.0, max_iter: int = 30, tol: float = 1e-6,
                                     zero_tol: float = 1e-6, cvxpy_solver: str = "CLARABEL"
                                     ) -> FeatureSelectionResult:
    """Run the multiplicative update loop of E&W §7 (module docstring) on ``X`` (n, d) and the
    {0,1} indicator ``Y`` (n, Q). Warns (ConvergenceWarning) when ``max_iter`` ends it.

    Parameters
    ----------
    X : array of shape (n, d)
        Features.
    Y : array of shape (n, q)
        Label indicator.
    C : float
        Soft-margin constant of Problem 9.
    max_iter : int
        Number of multiplicative updates allowed.
    tol : float
        Stop when ``max|z⁺ − z| ≤ tol · max(1, max|z|)``.
    zero_tol : float
        Scalings ``≤ zero_tol · max|z|`` are set to 0.
    cvxpy_solver : str
        CVXPY backend of each step.
    """
    X, target = check_X_Y(X, Y)
    check_row_norms(X)   # the products ⟨w, x⟩ of every step would overflow, and the backend fail on them
    check_scalar(C, "C", low=0.0, low_open=True)
    check_scalar(max_iter, "max_iter", low=1, integer=True)
    check_scalar(tol, "tol", low=0.0, low_open=True)
    check_scalar(zero_tol, "zero_tol", low=0.0, high=1.0, high_open=True)
    pairs = ranking_pairs(target.Y)
    scaling = np.ones((target.Y.shape[1], X.shape[1]))
    result = FeatureSelectionResult(np.arange(X.shape[1]), scaling, history=[scaling.copy()])
    change = np.inf
    for iteration in range(1, max_iter + 1):
        problem, W = scaled_ranking_problem(X, pairs, scaling, float(C))
        result.objectives.append(solve(problem, cvxpy_solver))
        updated = W.value * scaling
        updated[np.abs(updated) <= zero_tol * np.max(np.abs(updated))] = 0.0
        change = float(np.max(np.abs(updated - scaling)))
        reference = max(1.0, float(np.max(np.abs(scaling))))
        scaling = updated
        result.history.append(scaling.copy())
        result.n_iter = iteration
        if change <= tol * reference:
            result.converged = True
            break
    if not result.converged:
        warnings.warn(f"multiplicative feature selection did not converge in {max_iter} iterations: "
                      f"max |z(t+1) − z(t)| reached {change:.3e}, tolerance asked {tol:.1e}. "
                      "Increase max_iter or loosen tol.", ConvergenceWarning, stacklevel=2)
    result.scaling = scaling
    result.selected = np.flatnonzero(np.any(scaling != 0.0, axis=0))
    return result
