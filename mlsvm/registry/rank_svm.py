"""Rank-SVM's solvers (Elisseeff & Weston; SPEC §2.1): the dual (Problem 10) by an interior point
in the primal's Newton system, by a proximal augmented Lagrangian, by the paper's Frank–Wolfe
(Fig. 11, certified by its own gap), or by CVXPY."""

from __future__ import annotations

from scipy.sparse import issparse

from mlsvm.formulations import rank_svm
from mlsvm.kernels import gram_factor
from mlsvm.registry import CERTIFIED, EXACT, ModelSpec, SolverSpec
from mlsvm.solvers.cvxpy_tools import solve_cvxpy
from mlsvm.solvers.rank_svm_alm import proximal_alm
from mlsvm.solvers.rank_svm_bcd import instance_bcd
from mlsvm.solvers.rank_svm_decomposition import decomposition
from mlsvm.solvers.rank_svm_frank_wolfe import frank_wolfe
from mlsvm.solvers.rank_svm_ipm import MAX_SYSTEM_SIZE, interior_point


#: each solver's own iteration budget, used when the estimator's ``max_iter`` is None (its default):
#: an interior point needs tens of iterations, a working-set method thousands
DEFAULT_MAX_ITER = {"ipm": 200, "alm": 1000, "bcd": 20_000, "decomposition": 20_000, "frank-wolfe": 1000}


def _budget(solver: str, max_iter):
    return DEFAULT_MAX_ITER[solver] if max_iter is None else max_iter


def _ipm(problem, *, tol, max_iter):
    # the linear kernel's features are a factor K = XXᵀ; any other kernel goes through an
    # eigen-factor of the Gram matrix (refused when the Newton system would exceed MAX_SYSTEM_SIZE).
    # The interior point centres its factor (L − 1mᵀ is dense): a sparse X is densified here,
    # n × d with Q(d+1) − 1 ≤ MAX_SYSTEM_SIZE (the ALM takes the CSR factor as it is)
    factor = problem.features if problem.features is not None else gram_factor(problem.gram)
    if issparse(factor):
        factor = factor.toarray()
    return interior_point(problem, factor, tol=tol, max_iter=_budget("ipm", max_iter))


def _alm(problem, *, tol, max_iter):
    return proximal_alm(problem, tol=tol, max_iter=_budget("alm", max_iter), factor=problem.features)


def _bcd(problem, *, tol, max_iter):
    # the linear kernel's X as it is (CSR stays CSR); any other kernel through an eigen-factor of K
    factor = None if problem.features is not None else gram_factor(problem.gram)
    return instance_bcd(problem, tol=tol, max_iter=_budget("bcd", max_iter), factor=factor)


def _decomposition(problem, *, tol, max_iter):
    return decomposition(problem, tol=tol, max_iter=_budget("decomposition", max_iter))


def _frank_wolfe(problem, *, tol, max_iter):
    return frank_wolfe(problem, tol=tol, max_iter=_budget("frank-wolfe", max_iter))


def _cvxpy(problem, *, tol, max_iter, cvxpy_solver="CLARABEL"):
    return solve_cvxpy(rank_svm, problem, cvxpy_solver)


def _resolve_fast(problem) -> str:
    """The linear kernel: the interior point when its Newton system is small
    (``Q(d+1) − 1 ≤ MAX_SYSTEM_SIZE``; its cost does not grow with the number of pairs), otherwise
    block coordinate descent by instance on X (sparse X stays sparse; faster than the ALM wherever
    both were measured above that size: bibtex subsets, dense synthetic). Other kernels: the
    working-set decomposition, faster than the ALM wherever both were measured (timings: docs/rank_svm.md)."""
    features = problem.features
    if features is None:
        return "decomposition"
    if problem.n_labels * (features.shape[1] + 1) - 1 <= MAX_SYSTEM_SIZE:
        return "ipm"
    return "bcd"


MODEL = ModelSpec(
    name="rank_svm",
    dual_names=("alpha",),
    formulation=rank_svm,
    solvers={
        "ipm": SolverSpec("ipm", _ipm, EXACT,
                          "primal-dual interior point (Mehrotra) in the primal's Newton system, size "
                          "Q(r+1) − 1 for a factor K = LLᵀ of rank r (X for the linear kernel)"),
        "alm": SolverSpec("alm", _alm, EXACT,
                          "proximal augmented Lagrangian, inner problems by L-BFGS-B then projected Newton-CG, any kernel"),
        "bcd": SolverSpec("bcd", _bcd, EXACT,
                          "block coordinate descent by instance in the features' coordinates (W = Xᵀβ), "
                          "exact line minimisation per row of an instance's pair block, augmented "
                          "Lagrangian on the Q bias equalities; O(T + nnz(X) + dQ) memory"),
        "decomposition": SolverSpec("decomposition", _decomposition, EXACT,
                                    "working-set decomposition keeping the Q equalities exactly "
                                    "(LIBSVM-style most-violating pairs per label pair, small QPs by "
                                    "active set), biases from the certificate's LP"),
        "frank-wolfe": SolverSpec("frank-wolfe", _frank_wolfe, CERTIFIED,
                                  "paper Fig. 11: Frank-Wolfe with exact LP direction and line search, "
                                  "stops on its certified relative gap"),
        "cvxpy": SolverSpec("cvxpy", _cvxpy, EXACT, "the dual (Problem 10) solved by CVXPY (`cvxpy_solver`)",
                            options=("cvxpy_solver",)),
    },
    resolve_fast=_resolve_fast,
    fast_summary=f"linear kernel: 'ipm' when Q(d+1) − 1 ≤ {MAX_SYSTEM_SIZE}, else 'bcd'; other kernels: "
                 "'decomposition'",
)
