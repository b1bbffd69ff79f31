"""One-vs-None's solvers (Shajari & Rangarajan; SPEC §2.2): the derived dual by an exact interior
point method, the paper's majorization–minimization (Algorithm 1), or CVXPY. A class without a
member has a closed-form optimum (:func:`mlsvm.formulations.ovn.empty_class_solution`), which
every solver returns."""

from __future__ import annotations

import time

from mlsvm.data import check_scalar
from mlsvm.formulations import ovn
from mlsvm.registry import CERTIFIED, EXACT, ModelSpec, SolverSpec
from mlsvm.solvers.cvxpy_tools import solve_cvxpy
from mlsvm.solvers.ovn_ipm import solve_ipm
from mlsvm.solvers.ovn_mm import mm
from mlsvm.solvers.result import SolverResult


def _closed_form(problem) -> SolverResult | None:
    start = time.perf_counter()
    solution = ovn.empty_class_solution(problem)
    if solution is None:
        return None
    A, b, Lam, nu = solution
    return SolverResult(primal={"coef": A, "b": b}, dual={"Lam": Lam, "nu": nu}, converged=True, n_iter=0,
                        stop_value=0.0, stop_rule="closed form (empty class)",
                        solve_time=time.perf_counter() - start, solver="closed-form")


def _check_options(options):
    check_scalar(options.get("epsilon", 1e-6), "epsilon", low=0.0, low_open=True,
                 explain="epsilon is MM's floor on the majorizer weights z")


def _ipm(problem, *, tol, max_iter):
    return _closed_form(problem) or solve_ipm(problem, tol=tol, max_iter=max_iter)


def _mm(problem, *, tol, max_iter, epsilon=1e-6):
    return _closed_form(problem) or mm(problem, epsilon=float(epsilon), tol=tol, max_iter=max_iter)


def _cvxpy(problem, *, tol, max_iter, cvxpy_solver="CLARABEL"):
    closed_form = _closed_form(problem)
    if closed_form is not None:
        return closed_form
    result = solve_cvxpy(ovn, problem, cvxpy_solver)
    # where the optimal biases are not unique each backend's multipliers are another point of them
    result.primal = ovn.with_canonical_biases(problem, result.primal, result.dual, tol)
    return result


MODEL = ModelSpec(
    name="ovn",
    dual_names=("Lam", "nu"),
    formulation=ovn,
    solvers={
        "ipm": SolverSpec("ipm", _ipm, EXACT,
                          "Mehrotra interior point on the derived dual (equal-mass rows kept exactly; "
                          "linear kernel through X, no n × n matrix: per class the smaller of kernel "
                          "block and Woodbury matrix)"),
        "mm": SolverSpec("mm", _mm, CERTIFIED,
                         "paper Alg. 1: majorization–minimization with the ε floor `epsilon`, safeguarded, "
                         "stopped on its certified gap", options=("epsilon",)),
        "cvxpy": SolverSpec("cvxpy", _cvxpy, EXACT, "the derived dual solved by CVXPY (`cvxpy_solver`)",
                            options=("cvxpy_solver",)),
    },
    resolve_fast=lambda problem: "ipm",
    fast_summary="'ipm'",
    check_options=_check_options,
)
