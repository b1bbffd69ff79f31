"""Solvers of Elisseeff & Weston's binary approach (§3, Problem 3; also categorical regression, §5):
exact water-filling over the label SVMs (:mod:`mlsvm.solvers.rank_binary_waterfill`) and the CVXPY
primal (an SOCP in epigraph form, :mod:`mlsvm.solvers.rank_binary_cvxpy`). ``"fast"`` is
``"waterfill-cvxpy"``: water-filling, and the CVXPY primal only when water-filling does not certify.
On a rank-deficient Gram matrix (a linear kernel with n > d + 1, duplicated rows) water-filling runs
its label SVMs in the coordinates of a low-rank factor ``K = L Lᵀ`` (every free-set system
(r+1)-sized, box-feasible free coefficients by bounded least squares, exact path-following between
breakpoints), so emotions, yeast, scene-sized sets and the synthetic sets of
``benchmarks/bench_scaling.py`` certify without CVXPY; the CVXPY primal stays behind it as the
safety net (docs/rank_binary.md).

The primal is what is solved, not the dual: the dual does not determine ``w_k`` for a label whose
optimal ``λ_k`` is 0 (see :mod:`mlsvm.formulations.rank_binary`). The experimental alternating
solver (:mod:`mlsvm.solvers.rank_binary_alternating`) is not registered: it is not exact when a
label's optimal ``λ_k`` is 0 (docs/rank_binary.md). """

from __future__ import annotations

import warnings

from sklearn.exceptions import ConvergenceWarning

from mlsvm.formulations import rank_binary
from mlsvm.registry import EXACT, ModelSpec, SolverSpec
from mlsvm.solvers.cvxpy_tools import GroundTruthError
from mlsvm.solvers.rank_binary_cvxpy import solve_primal
from mlsvm.solvers.rank_binary_waterfill import solve_rank_binary_waterfill


def _cvxpy(problem, *, tol, max_iter, cvxpy_solver="ECOS"):
    """``cvxpy_solver`` first (ECOS by default: Clarabel ends about 1 in 10 small instances of this
    SOCP "optimal_inaccurate", ECOS none of 30; docs/rank_binary.md)."""
    return solve_primal(problem, cvxpy_solver, tol=tol)


def _waterfill(problem, *, tol, max_iter):
    return solve_rank_binary_waterfill(problem, tol=tol, max_iter=max_iter)


def _waterfill_then_cvxpy(problem, *, tol, max_iter, cvxpy_solver="ECOS"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # the fallback decides
        first = _waterfill(problem, tol=tol, max_iter=max_iter)
    if first.converged:
        return first
    try:
        second = _cvxpy(problem, tol=tol, max_iter=max_iter, cvxpy_solver=cvxpy_solver)
    except GroundTruthError as error:   # no backend answered "optimal": water-filling's point, uncertified
        warnings.warn(f"binary approach: water-filling stopped at {first.stop_value:.3e} after {first.n_iter} "
                      f"iterations (tolerance asked {tol:.1e}) and its CVXPY fallback found no optimal "
                      f"answer ({error}); the water-filling point is reported with converged=False",
                      ConvergenceWarning, stacklevel=2)
        return first
    second.solve_time += first.solve_time
    second.stop_rule = (f"water-filling stopped at {first.stop_value:.1e} after {first.n_iter} "
                        f"iterations, then {second.stop_rule}")
    return second


MODEL = ModelSpec(
    name="rank_binary",
    dual_names=("alpha", "lam"),
    formulation=rank_binary,
    solvers={
        "waterfill": SolverSpec("waterfill", _waterfill, EXACT,
                                "water-filling: root in t of Σ_k μ_k(t) = 1 over exact label SVMs "
                                "(warm-started primal-dual active set along their C-path)"),
        "waterfill-cvxpy": SolverSpec("waterfill-cvxpy", _waterfill_then_cvxpy, EXACT,
                                      "'waterfill', then 'cvxpy' when it does not certify",
                                      options=("cvxpy_solver",)),
        "cvxpy": SolverSpec("cvxpy", _cvxpy, EXACT,
                            "the epigraph primal (Problem 3) solved by CVXPY (`cvxpy_solver` first, then "
                            "the other backends until one certifies tol), multipliers α, λ from its constraints",
                            options=("cvxpy_solver",)),
    },
    resolve_fast=lambda problem: "waterfill-cvxpy",
    fast_summary="'waterfill-cvxpy' (exact water-filling over the label SVMs, factor mode on a "
                 "rank-deficient Gram; the CVXPY primal only when it does not certify)",
)
