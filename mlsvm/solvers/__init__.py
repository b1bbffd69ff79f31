"""Hand-written solvers: pure algorithms on arrays that return a :class:`SolverResult`.

A solver never grades itself: the estimator evaluates the formulation's own numpy objectives and
KKT residuals on the returned point (STYLE.md, "Solver interface").
"""

from mlsvm.solvers.result import SolverResult, warn_not_converged

__all__ = ["SolverResult", "warn_not_converged"]
