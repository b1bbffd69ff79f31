"""The one table of agreement tolerances (STYLE rule 4), keyed by (formulation, solver).

Library checks (``mlsvm verify``) and the tests read it; nothing else sets a tolerance. An exact
solver must reach the ground truth within ``objective`` (relative, see
:func:`mlsvm.report.relative_difference`), with scaled KKT residuals ≤ ``kkt`` and a
relative duality gap ≤ ``gap``. A paper-faithful solver that converges sublinearly (Frank–Wolfe,
M³, MM) is ``CERTIFIED``: it must be within the gap it certifies itself, no more.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlsvm import registry

__all__ = ["Tolerance", "EXACT", "CERTIFIED", "BACKEND_AGREEMENT", "NEGATIVE_GAP", "TOLERANCES", "CROSSCHECK", "DECISION_VALUES", "assert_decisions_agree", "tolerance"]


@dataclass(frozen=True)
class Tolerance:
    """The bars one (formulation, solver) row must meet; None means the bar is not asked.

    Parameters
    ----------
    objective : float or None
        Bar on the relative difference to the ground-truth optimum (None: graded on the gap the
        solver certifies instead).
    kkt : float or None
        Bar on the largest scaled KKT residual.
    gap : float or None
        Bar on the relative duality gap.
    """

    objective: float | None   # relative difference to the ground truth; None: the certified gap
    kkt: float | None         # max scaled KKT residual; None: not asked of this solver
    gap: float | None         # relative duality gap; None: not asked of this solver


EXACT = Tolerance(objective=1e-6, kkt=1e-6, gap=1e-6)
CERTIFIED = Tolerance(objective=None, kkt=None, gap=None)
#: two CVXPY backends, and a primal against its dual, must agree to this (SPEC §3)
BACKEND_AGREEMENT = 1e-6
#: a relative duality gap below −NEGATIVE_GAP fails every row: the dual objective exceeds the
#: primal beyond round-off, so one of the two points is wrong
NEGATIVE_GAP = 1e-9

#: decision values (and w) of two solvers of the same strictly convex problem, relative to the
#: scale of the scores, max(1, ‖f‖∞): the objectives agree to ~1e-10, so w agrees to about
#: sqrt(1e-10) = 1e-5 (strong convexity of ½‖w‖²). Use :func:`assert_decisions_agree`.
DECISION_VALUES = 1e-5
#: a second CVXPY backend (ECOS, OSQP) is a cross-check of the optimal value, not of multipliers
CROSSCHECK = Tolerance(objective=BACKEND_AGREEMENT, kkt=None, gap=None)

TOLERANCES = {
    ("binary_svm", "cvxpy"): EXACT,
    ("binary_svm", "libsvm"): Tolerance(objective=1e-6, kkt=None, gap=None),
    ("binary_svm", "liblinear"): Tolerance(objective=1e-6, kkt=None, gap=None),
    ("rank_svm", "cvxpy"): EXACT,
    ("rank_svm", "fast"): EXACT,
    ("rank_svm", "ipm"): EXACT,
    ("rank_svm", "alm"): EXACT,
    ("rank_svm", "bcd"): EXACT,
    ("rank_svm", "frank-wolfe"): CERTIFIED,
    ("mlodm", "bcd-m3"): CERTIFIED,   # the "bcd" rows with the M³ block sub-solver
    # batched AGD against the same AGD run label by label (identical iterations, batched products)
    ("matrix_svm", "agd-label-by-label"): Tolerance(objective=1e-8, kkt=1e-6, gap=1e-6),
    ("binary_svm", "cvxpy-crosscheck"): CROSSCHECK,
    ("rank_binary", "cvxpy-crosscheck"): CROSSCHECK,
    # the experimental alternating solver (tests only, not registered: not exact when a λ_k is 0)
    ("rank_binary", "alternating"): EXACT,
    ("rank_binary", "binary-svm"): Tolerance(objective=1e-6, kkt=None, gap=None),
    ("rank_svm", "cvxpy-crosscheck"): CROSSCHECK,
    ("ovn", "cvxpy-crosscheck"): CROSSCHECK,
    ("sparse_mm", "cvxpy-crosscheck"): CROSSCHECK,
    ("mlodm", "cvxpy-crosscheck"): CROSSCHECK,
    ("matrix_svm", "cvxpy-crosscheck"): CROSSCHECK,
}


def assert_decisions_agree(actual, desired, rtol: float = DECISION_VALUES) -> None:
    """``‖actual − desired‖∞ ≤ rtol · max(1, ‖desired‖∞)`` (AssertionError otherwise).

    Parameters
    ----------
    actual : array-like
        Decision values of the solver under test.
    desired : array-like
        Reference decision values.
    rtol : float
        Relative bar (default: :data:`DECISION_VALUES`).
    """
    import numpy as np

    actual, desired = np.asarray(actual, dtype=float), np.asarray(desired, dtype=float)
    bound = rtol * max(1.0, float(np.max(np.abs(desired))) if desired.size else 1.0)
    error = float(np.max(np.abs(actual - desired))) if desired.size else 0.0
    if not error <= bound:
        raise AssertionError(f"decision values differ by {error:.2e} > {bound:.2e} (rtol {rtol:.0e})")


def tolerance(formulation: str, solver: str) -> Tolerance:
    """The bar of ``(formulation, solver)``: a registered solver's grade (:mod:`mlsvm.registry`;
    ``"fast"`` is EXACT), else the row of :data:`TOLERANCES` (cross-checks and references).

    Parameters
    ----------
    formulation : str
        Formulation (model) name, e.g. ``"mlodm"``.
    solver : str
        Solver name, e.g. ``"bcd"``.
    """
    if formulation in registry.MODEL_NAMES:
        spec = registry.model(formulation)
        if solver == "fast":
            return EXACT
        if solver in spec.solvers:
            return EXACT if spec.solvers[solver].grade == registry.EXACT else CERTIFIED
    try:
        return TOLERANCES[(formulation, solver)]
    except KeyError:
        raise KeyError(f"no tolerance for ({formulation!r}, {solver!r}): register the solver in "
                       "mlsvm/registry/ or add a row to mlsvm/verification/tolerances.py") from None
