"""Binary approach (E&W Problem 3) checks: CVXPY primal = derived dual on two backends, the
estimator's "fast" solver against the ground truth, and Q = 1 against the binary C-SVM
(``C_svm = C/2``, Problem 3's optimum twice the SVM's). The experimental alternating solver
(:mod:`mlsvm.solvers.rank_binary_alternating`) has no row: it is not exact when a label's optimal
``λ_k`` is 0 (awkward-labels/linear), so it is not a verified solver of this model."""

from __future__ import annotations

import time

import numpy as np

from mlsvm.estimators.rank_binary import FAST_BACKENDS, fit_report, solve_cvxpy
from mlsvm.formulations import binary_svm as bsvm
from mlsvm.formulations import rank_binary as formulation
from mlsvm.kernels import make_kernel
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.verification.problems import binary_problems, multilabel_problems
from mlsvm.verification.registry import Check, compare
from mlsvm.report import FitReport

MODEL = "rank_binary"
#: Ground truth of this SOCP: the first backend that certifies "optimal" (Clarabel at 1e-10 ends
#: "optimal_inaccurate" on the primal of synthetic-80x6x5/linear where ECOS and SCS certify it);
#: the cross-check prefers another backend first.
REFERENCE = ("CLARABEL", "ECOS", "SCS")
CROSSCHECK = ("ECOS", "SCS", "CLARABEL")


def cvxpy_report(problem: formulation.BinaryApproachProblem, backend=REFERENCE) -> FitReport:
    """The CVXPY primal's point and multipliers, graded by the formulation's numpy functions."""
    coef, b, alpha, lam, seconds, used, _ = solve_cvxpy(problem, backend)
    return fit_report(problem, coef, b, alpha, lam, solver=f"cvxpy-{used}", n_iter=0,
                      converged=True, solve_time=seconds)


def dual_value(problem: formulation.BinaryApproachProblem, backend=REFERENCE) -> float:
    cvx, _, _ = formulation.dual_problem(problem)
    return solve(cvx, backend)


def crosscheck_report(problem, backend: str) -> FitReport:
    """A second backend's dual optimum (SPEC §3: backends agree on the value)."""
    start = time.perf_counter()
    value = dual_value(problem, backend)
    return FitReport(value, value, {}, 0, True, time.perf_counter() - start, f"cvxpy-{'/'.join(backend)}")


def binary_svm_report(gram: np.ndarray, y: np.ndarray, C: float) -> FitReport:
    """Q = 1: twice the binary C-SVM optimum with ``C_svm = C/2`` (CVXPY, Clarabel)."""
    start = time.perf_counter()
    cvx, _ = bsvm.primal_problem(bsvm.BinarySVMProblem(gram, y, C / 2.0))
    value = 2.0 * solve(cvx, "CLARABEL")
    return FitReport(value, float("nan"), {}, 0, True, time.perf_counter() - start, "binary-svm")


def checks(quick: bool) -> list[Check]:
    found = []
    kernels = ["linear", "rbf"] if quick else ["linear", "rbf", "poly"]
    for reference in multilabel_problems(quick):
        for kernel in kernels:
            gram = make_kernel(kernel, "scale", X=reference.X)(reference.X)
            problem = formulation.BinaryApproachProblem(gram, reference.Y, 1.0)
            name = f"{reference.name}/{kernel}/C=1"
            found += [
                Check(MODEL, name, "primal vs dual", "cvxpy",
                      lambda p=problem, n=name: compare(MODEL, n, "primal vs dual", "cvxpy",
                                                        cvxpy_report(p), dual_value(p))),
                Check(MODEL, name, "primal (estimator default)", "fast",
                      lambda p=problem, n=name: compare(MODEL, n, "primal (estimator default)", "fast",
                                                        cvxpy_report(p, FAST_BACKENDS), dual_value(p))),
                Check(MODEL, name, "dual (cross-check) vs primal", "cvxpy-crosscheck",
                      lambda p=problem, n=name: compare(MODEL, n, "dual (cross-check) vs primal", "cvxpy-crosscheck",
                                                        crosscheck_report(p, CROSSCHECK), cvxpy_report(p).primal_objective)),
            ]
    for reference in binary_problems(quick):
        gram = make_kernel("linear")(reference.X)
        Y = (reference.Y[:, None] > 0).astype(np.int8)
        problem = formulation.BinaryApproachProblem(gram, Y, 1.0)
        name = f"{reference.name}/linear/Q=1"
        found.append(Check(MODEL, name, "Q=1 = 2 x C-SVM(C/2)", "binary-svm",
                           lambda p=problem, n=name, r=reference, g=gram: compare(
                               MODEL, n, "Q=1 = 2 x C-SVM(C/2)", "binary-svm",
                               binary_svm_report(g, r.Y, 1.0), solve(formulation.primal_problem(p)[0], REFERENCE))))
    return found
