"""Verification: the FitReport, QP residuals, CVXPY ground-truth helpers, the check registry."""

from mlsvm.solvers.cvxpy_tools import BACKENDS, GroundTruthError, solve, solve_checked
from mlsvm.verification.registry import Check, CheckResult, all_checks, compare, run_check
from mlsvm.report import FitReport, relative_difference
from mlsvm.formulations.evaluation import qp_residuals
from mlsvm.verification.tolerances import CERTIFIED, EXACT, Tolerance, tolerance

__all__ = [
    "BACKENDS", "GroundTruthError", "solve", "solve_checked", "Check", "CheckResult", "all_checks",
    "compare", "run_check", "FitReport", "relative_difference", "qp_residuals", "CERTIFIED", "EXACT",
    "Tolerance", "tolerance",
]
