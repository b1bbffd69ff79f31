"""Binary approach (E&W Problem 3) checks: every registered solver (:mod:`mlsvm.registry.rank_binary`:
"fast" as resolved, and "cvxpy", the primal SOCP with multipliers from its constraints) through the
estimator against the CVXPY derived dual, the dual on another backend against the primal, and on
Q = 1 problems every solver against the binary C-SVM (``C_svm = C/2``, Problem 3's optimum twice
the SVM's), which is also checked against the CVXPY primal. The experimental alternating solver
(:mod:`mlsvm.solvers.rank_binary_alternating`) has no row: it is not exact when a label's optimal
``λ_k`` is 0 (awkward-labels/linear), so it is not a verified solver of this model.

Every solver row runs through :class:`BinaryApproachSVM` on a precomputed Gram matrix, so it grades
the FitReport a user gets; a ConvergenceWarning (a backend status other than optimal, or a
certificate that does not meet ``tol``) is a failed row."""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mlsvm import registry
from mlsvm.estimators.rank_binary import BinaryApproachSVM
from mlsvm.formulations import binary_svm as bsvm
from mlsvm.formulations import rank_binary as formulation
from mlsvm.kernels import make_kernel
from mlsvm.report import FitReport
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.verification.problems import binary_problems, multilabel_problems
from mlsvm.verification.registry import Check, compare

MODEL = "rank_binary"
#: Ground truth of this SOCP: the first backend that certifies "optimal" (Clarabel at 1e-10 ends
#: "optimal_inaccurate" on the primal of synthetic-80x6x5/linear where ECOS and SCS certify it);
#: the cross-check prefers another backend first.
REFERENCE = ("CLARABEL", "ECOS", "SCS")
CROSSCHECK = ("ECOS", "SCS", "CLARABEL")


def estimator_report(gram: np.ndarray, Y: np.ndarray, C: float, solver: str) -> FitReport:
    """The FitReport of ``BinaryApproachSVM(solver=solver)`` on the precomputed ``gram``."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a non-converged run is a failed row
        model = BinaryApproachSVM(C=C, kernel="precomputed", solver=solver).fit(gram, Y)
    return model.fit_report_


def dual_value(problem: formulation.BinaryApproachProblem, backend=REFERENCE) -> float:
    """The derived dual's optimum (``cvxpy_dual`` minimises its negation)."""
    return -solve(formulation.cvxpy_dual(problem)[0], backend)


def primal_value(problem: formulation.BinaryApproachProblem, backend=REFERENCE) -> float:
    return solve(formulation.cvxpy_primal(problem)[0], backend)


def crosscheck_report(problem, backend) -> FitReport:
    """A second backend's dual optimum (SPEC §3: backends agree on the value)."""
    start = time.perf_counter()
    value = dual_value(problem, backend)
    return FitReport(value, value, {}, 0, True, time.perf_counter() - start, f"cvxpy-{'/'.join(backend)}")


def binary_svm_report(gram: np.ndarray, y: np.ndarray, C: float) -> FitReport:
    """Q = 1: twice the binary C-SVM optimum with ``C_svm = C/2`` (CVXPY, Clarabel)."""
    start = time.perf_counter()
    cvx, _ = bsvm.cvxpy_primal(bsvm.BinarySVMProblem(gram, y, C / 2.0))
    value = 2.0 * solve(cvx, "CLARABEL")
    return FitReport(value, float("nan"), {}, 0, True, time.perf_counter() - start, "binary-svm")


def checks(quick: bool) -> list[Check]:
    found = []
    solvers = registry.model(MODEL).solver_names()
    kernels = ["linear", "rbf"] if quick else ["linear", "rbf", "poly"]
    for reference in multilabel_problems(quick):
        for kernel in kernels:
            gram = make_kernel(kernel, "scale", X=reference.X)(reference.X)
            problem = formulation.BinaryApproachProblem(gram, reference.Y, 1.0)
            name = f"{reference.name}/{kernel}/C=1"
            for solver in solvers:
                found.append(Check(MODEL, name, "primal vs dual", solver,
                                   lambda p=problem, n=name, s=solver: compare(
                                       MODEL, n, "primal vs dual", s, estimator_report(p.gram, p.Y, p.C, s),
                                       dual_value(p))))
            found.append(Check(MODEL, name, "dual (cross-check) vs primal", "cvxpy-crosscheck",
                               lambda p=problem, n=name: compare(MODEL, n, "dual (cross-check) vs primal",
                                                                 "cvxpy-crosscheck", crosscheck_report(p, CROSSCHECK),
                                                                 primal_value(p))))
    for reference in binary_problems(quick):
        gram = make_kernel("linear")(reference.X)
        Y = (reference.Y[:, None] > 0).astype(np.int8)
        problem = formulation.BinaryApproachProblem(gram, Y, 1.0)
        name = f"{reference.name}/linear/Q=1"
        for solver in solvers:
            found.append(Check(MODEL, name, "primal vs 2 x C-SVM(C/2)", solver,
                               lambda p=problem, n=name, r=reference, s=solver: compare(
                                   MODEL, n, "primal vs 2 x C-SVM(C/2)", s, estimator_report(p.gram, p.Y, p.C, s),
                                   binary_svm_report(p.gram, r.Y, p.C).primal_objective)))
        found.append(Check(MODEL, name, "Q=1 = 2 x C-SVM(C/2)", "binary-svm",
                           lambda p=problem, n=name, r=reference, g=gram: compare(
                               MODEL, n, "Q=1 = 2 x C-SVM(C/2)", "binary-svm",
                               binary_svm_report(g, r.Y, 1.0), primal_value(p))))
    return found
