"""SMSVM / SM3L's solvers (Ganu, Shevade & Sundararajan; SPEC §2.3), one table for both models (the
variant is ``SparseMMProblem.model``): Algorithm 4 — greedy basis selection with Newton on α_J — as
in the paper (one Newton step per class) or with a joint Newton step on all classes, and the full
model (J = all points) by dual coordinate descent or by CVXPY."""

from __future__ import annotations

import numpy as np

from mlsvm.data import check_scalar
from mlsvm.formulations import sparse_mm
from mlsvm.registry import EXACT, ModelSpec, SolverSpec
from mlsvm.solvers.cvxpy_tools import solve_cvxpy
from mlsvm.solvers.sparse_mm_full import full_model
from mlsvm.solvers.sparse_mm_greedy import greedy_sparse

GREEDY_OPTIONS = ("d_max", "kappa", "min_rel_decrease", "random_state")


def _check_options(options):
    check_scalar(options.get("kappa", 25), "kappa", low=1, integer=True)
    check_scalar(options.get("min_rel_decrease", 1e-3), "min_rel_decrease", low=0.0)


def _greedy(joint: bool):
    def run(problem, *, tol, max_iter, d_max=None, kappa=25, min_rel_decrease=1e-3, random_state=None):
        n = problem.gram.shape[0]
        d_max = min(100, n) if d_max is None else d_max
        check_scalar(d_max, "d_max", low=1, high=n, integer=True, explain="the basis is a subset of the n training points")
        return greedy_sparse(problem.gram, problem.margins, problem.lam, problem.R, d_max=int(d_max), kappa=int(kappa),
                             tol=tol, max_iter=max_iter, min_rel_decrease=min_rel_decrease, joint=joint,
                             random_state=random_state)
    return run


def _full(problem, *, tol, max_iter, random_state=None):
    """The full model (J = all points): dual coordinate descent, on X for the linear kernel (no
    n × n matrix), on the Gram matrix otherwise. SM3L with a label prior R ≠ I couples the labels
    in every coordinate step; there the joint Newton of Alg. 3 on the full basis solves it."""
    n = problem.gram.shape[0]
    if not np.array_equal(problem.R, np.eye(problem.R.shape[0])):
        return greedy_sparse(problem.gram, problem.margins, problem.lam, problem.R, basis=np.arange(n),
                             tol=tol, max_iter=max_iter)
    if problem.features is not None:
        return full_model(problem.margins, problem.lam, X=problem.features, tol=tol, max_iter=max_iter,
                          random_state=random_state)
    gram = (problem.gram.columns(np.arange(n)) if isinstance(problem.gram, sparse_mm.KernelColumns)
            else np.asarray(problem.gram))
    return full_model(problem.margins, problem.lam, gram=gram, tol=tol, max_iter=max_iter,
                      random_state=random_state)


def _cvxpy(problem, *, tol, max_iter, cvxpy_solver="CLARABEL"):
    return solve_cvxpy(sparse_mm, problem, cvxpy_solver)


MODEL = ModelSpec(
    name="sparse_mm",
    dual_names=("mu",),
    formulation=sparse_mm,
    solvers={
        "greedy-joint": SolverSpec("greedy-joint", _greedy(joint=True), EXACT,
                                   "Alg. 4 with a joint Newton step on all classes for α_J (CG preconditioned "
                                   "by the per-class Hessians)", options=GREEDY_OPTIONS),
        "greedy": SolverSpec("greedy", _greedy(joint=False), EXACT,
                             "paper Alg. 4: greedy basis selection, one Newton step per class (Alg. 3)",
                             options=GREEDY_OPTIONS),
        "full": SolverSpec("full", _full, EXACT,
                           "the full model (J = all points): compiled dual coordinate descent on the "
                           "strongly convex dual (linear kernel: on X, no n × n matrix); SM3L with R ≠ I: "
                           "joint Newton on the full basis", options=("random_state",)),
        "cvxpy": SolverSpec("cvxpy", _cvxpy, EXACT,
                            "the full model (J = all points): the derived dual by CVXPY (`cvxpy_solver`)",
                            options=("cvxpy_solver",)),
    },
    resolve_fast=lambda problem: "greedy-joint",
    fast_summary="'greedy-joint'",
    check_options=_check_options,
)
