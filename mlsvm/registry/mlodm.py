"""mLODM's solvers (Tan, Tan, Jiang & Zhou; SPEC §2.4): the dual eq. (18) by block coordinate
descent over instances (the paper's Alg. 1), with a whole-dual active-set polish, or by CVXPY;
with the linear kernel also a primal Newton method and a pair-wise dual coordinate descent in the
weights W (:mod:`mlsvm.solvers.mlodm_linear`: X Xᵀ is never formed). ``"fast"``: ``"newton"`` for
the linear kernel, ``"bcd-polish"`` otherwise."""

from __future__ import annotations

from mlsvm.formulations import mlodm
from mlsvm.registry import EXACT, ModelSpec, SolverSpec
from mlsvm.solvers.cvxpy_tools import solve_cvxpy
from mlsvm.solvers.mlodm_bcd import SUBPROBLEMS, solve_bcd
from mlsvm.solvers.mlodm_linear import solve_linear


def _check_options(options):
    subproblem = options.get("subproblem", "exact")
    if subproblem not in SUBPROBLEMS:
        raise ValueError(f"subproblem must be one of {SUBPROBLEMS}; got {subproblem!r}")


def _bcd(problem, *, tol, max_iter, subproblem="exact", shrinking=True, random_state=None):
    return solve_bcd(problem, subproblem=subproblem, tol=tol, max_iter=max_iter, shrinking=shrinking,
                     random_state=random_state)


def _bcd_polish(problem, *, tol, max_iter, shrinking=True, random_state=None):
    return solve_bcd(problem, subproblem="exact", tol=tol, max_iter=max_iter, shrinking=shrinking,
                     random_state=random_state, polish=True)


def _linear(method):
    def run(problem, *, tol, max_iter, random_state=None):
        if not isinstance(problem, mlodm.LinearMLODMProblem):
            raise ValueError(f"solver={method!r} solves mLODM with the linear kernel (kernel='linear'); "
                             "use 'bcd-polish' or 'bcd' for other kernels")
        return solve_linear(problem, method=method, tol=tol, max_iter=max_iter, random_state=random_state)
    return run


def _cvxpy(problem, *, tol, max_iter, cvxpy_solver="CLARABEL"):
    return solve_cvxpy(mlodm, problem, cvxpy_solver)


MODEL = ModelSpec(
    name="mlodm",
    dual_names=("alpha", "beta"),
    formulation=mlodm,
    solvers={
        "bcd": SolverSpec("bcd", _bcd, EXACT,
                          "paper Alg. 1: dual BCD over instances; block sub-solver `subproblem` "
                          "('exact' active set, or 'm3': Alg. 2, certified by its own gap)",
                          options=("subproblem", "shrinking", "random_state")),
        "bcd-polish": SolverSpec("bcd-polish", _bcd_polish, EXACT,
                                 "BCD with the exact block solver plus a whole-dual primal-dual "
                                 "active-set step once the gap is small",
                                 options=("shrinking", "random_state")),
        "newton": SolverSpec("newton", _linear("newton"), EXACT,
                             "linear kernel: primal Newton in W with preconditioned CG and exact line "
                             "search (K = XXᵀ never formed)"),
        "dcd": SolverSpec("dcd", _linear("dcd"), EXACT,
                          "linear kernel: dual coordinate descent, one exact (α_t, β_t) step per pair, "
                          "updating W", options=("random_state",)),
        "cvxpy": SolverSpec("cvxpy", _cvxpy, EXACT, "the dual (eq. 18) solved by CVXPY (`cvxpy_solver`)",
                            options=("cvxpy_solver",)),
    },
    resolve_fast=lambda problem: "newton" if isinstance(problem, mlodm.LinearMLODMProblem) else "bcd-polish",
    fast_summary="'newton' (linear kernel), else 'bcd-polish'",
    check_options=_check_options,
)
