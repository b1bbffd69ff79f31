"""Solvers of Elisseeff & Weston's binary approach (§3, Problem 3; also categorical regression, §5):
the CVXPY primal (an SOCP in epigraph form), :mod:`mlsvm.solvers.rank_binary_cvxpy`.

The primal is what is solved, not the dual: the dual does not determine ``w_k`` for a label whose
optimal ``λ_k`` is 0 (see :mod:`mlsvm.formulations.rank_binary`). The experimental alternating
solver (:mod:`mlsvm.solvers.rank_binary_alternating`) is not registered: it is not exact when a
label's optimal ``λ_k`` is 0 (docs/rank_binary.md). An exact hand-written solver is one more
:class:`SolverSpec` row in :data:`MODEL` (and ``_resolve_fast`` may then name it).
"""

from __future__ import annotations

from mlsvm.formulations import rank_binary
from mlsvm.registry import EXACT, ModelSpec, SolverSpec
from mlsvm.solvers.rank_binary_cvxpy import solve_primal


def _cvxpy(problem, *, tol, max_iter, cvxpy_solver="ECOS"):
    return solve_primal(problem, cvxpy_solver, tol=tol)


def _resolve_fast(problem) -> str:
    """The CVXPY primal (``cvxpy_solver`` first, ECOS by default: Clarabel ends about 1 in 10 small
    instances of this SOCP "optimal_inaccurate", ECOS none of 30; docs/rank_binary.md)."""
    return "cvxpy"


MODEL = ModelSpec(
    name="rank_binary",
    formulation=rank_binary,
    solvers={
        "cvxpy": SolverSpec("cvxpy", _cvxpy, EXACT,
                            "the epigraph primal (Problem 3) solved by CVXPY (`cvxpy_solver` first, then "
                            "the other backends until one certifies tol), multipliers α, λ from its constraints",
                            options=("cvxpy_solver",)),
    },
    resolve_fast=_resolve_fast,
    fast_summary="'cvxpy' (the CVXPY primal, `cvxpy_solver` first)",
)
