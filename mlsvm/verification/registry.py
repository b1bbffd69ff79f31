"""The registry behind ``mlsvm verify``: every cross-check of every model, on built-in problems.

Each module in :mod:`mlsvm.verification.checks` defines ``checks(quick: bool) -> list[Check]``;
adding a model adds a module there, nothing else. A check runs one solver on one problem and
compares it with its ground truth under the tolerance table.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from dataclasses import asdict, dataclass
from typing import Callable

from mlsvm.formulations.evaluation import relative_difference
from mlsvm.report import FitReport
from mlsvm.solvers.blas_threads import blas_threads
from mlsvm.solvers.cvxpy_tools import REFERENCE_BACKEND
from mlsvm.verification.tolerances import NEGATIVE_GAP, Tolerance, tolerance

__all__ = ["Check", "CheckResult", "compare", "graded_on_value", "all_checks", "run_check"]


@dataclass
class CheckResult:
    """One row of the ``mlsvm verify`` table.

    Parameters
    ----------
    model : str
        Model name.
    problem : str
        Reference problem name.
    formulation : str
        Formulation name (a row key of the tolerance table).
    solver : str
        Name of the solver.
    objective : float
        Objective reached by the solver.
    reference : float
        The reference (ground-truth) optimal value.
    relative_difference : float
        ``|a − b| / max(1, |a|, |b|)`` against the reference.
    duality_gap : float
        Relative duality gap reported.
    max_kkt : float
        Largest scaled KKT residual.
    time : float
        Seconds.
    passed : bool
        Whether every bar of the tolerance row is met.
    detail : str
        Why it failed (empty when passed).
    """

    model: str
    problem: str
    formulation: str
    solver: str
    objective: float
    reference: float
    relative_difference: float
    duality_gap: float
    max_kkt: float
    time: float
    passed: bool
    detail: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Check:
    """A named cross-check; ``run()`` returns its :class:`CheckResult`.

    Parameters
    ----------
    model : str
        Model name.
    problem : str
        Reference problem name.
    formulation : str
        Formulation name (a row key of the tolerance table).
    solver : str
        Solver name.
    run : callable
        Runs the check and returns a :class:`CheckResult`.
    """

    model: str
    problem: str
    formulation: str
    solver: str
    run: Callable[[], CheckResult]


def compare(model: str, problem: str, formulation: str, solver: str, report: FitReport,
            reference: float, tol: Tolerance | None = None, elapsed: float | None = None) -> CheckResult:
    """Grade a solver's FitReport against a ground-truth optimal value with the tolerance table.

    ``formulation`` names what was solved (e.g. ``"dual"``); the tolerance row is (model, solver).
    Every row fails when the fit did not converge, or when its relative gap is below
    ``−NEGATIVE_GAP`` (a dual above the primal is a wrong point, not a tight bound). With a
    CERTIFIED tolerance the relative difference to the reference must not exceed the relative gap
    the solver certified.

    Parameters
    ----------
    model : str
        Model name.
    problem : str
        Reference problem name.
    formulation : str
        Formulation name (a row key of the tolerance table).
    solver : str
        Name of the solver.
    report : FitReport
        A fit report (:class:`mlsvm.report.FitReport`).
    reference : float
        The reference (ground-truth) optimal value.
    tol : Tolerance or None
        The bars (default: the table's row for formulation and solver).
    elapsed : float
        Seconds.
    """
    tol = tolerance(model, solver) if tol is None else tol
    difference = relative_difference(report.primal_objective, reference)
    failures = []
    if not report.converged:
        failures.append("did not converge")
    if report.relative_gap < -NEGATIVE_GAP:  # a NaN gap (no dual: LIBLINEAR) fails only rows that ask for one
        failures.append(f"negative duality gap {report.relative_gap:.1e} (dual above primal)")
    bound = tol.objective if tol.objective is not None else abs(report.relative_gap)
    if not difference <= bound:
        failures.append(f"objective off by {difference:.1e} > {bound:.0e}")
    if tol.kkt is not None and not report.max_kkt <= tol.kkt:
        failures.append(f"KKT residual {report.max_kkt:.1e} > {tol.kkt:.0e}")
    if tol.gap is not None and not abs(report.relative_gap) <= tol.gap:
        failures.append(f"duality gap {report.relative_gap:.1e} > {tol.gap:.0e}")
    return CheckResult(model, problem, formulation, solver, report.primal_objective, reference,
                       difference, report.relative_gap, report.max_kkt,
                       report.solve_time if elapsed is None else elapsed, not failures, "; ".join(failures))


def graded_on_value(report: FitReport, optimum: float, backend: str) -> FitReport:
    """A cross-check backend is graded on the optimal value it reports (SPEC §3: backends agree on
    the value); the reference backend, on the numpy objectives at the point it returns.

    Parameters
    ----------
    report : FitReport
        A fit report (:class:`mlsvm.report.FitReport`).
    optimum : float
        Optimal value of the ground truth.
    backend : str
        The CVXPY backend that produced it.
    """
    if backend != REFERENCE_BACKEND:
        report.primal_objective = report.dual_objective = optimum
    return report


def all_checks(quick: bool = True, models: list[str] | None = None) -> list[Check]:
    """Every registered check (of the given models) for the quick or the full problem set.

    Parameters
    ----------
    quick : bool
        The small (quick) problem set or protocol instead of the full one.
    models : list of str or None
        Only these models (None: all).
    """
    from mlsvm.verification import checks as package

    found = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_") or (models and info.name not in models):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found.extend(module.checks(quick))
    return found


def run_check(check: Check) -> CheckResult:
    """Run a check; an exception is a failed row that quotes it, never a crash of the whole run.

    Parameters
    ----------
    check : Check
        The check to run.
    """
    start = time.perf_counter()
    try:
        with blas_threads():
            return check.run()
    except Exception as exc:  # noqa: BLE001 - reported, not swallowed: the row fails
        return CheckResult(check.model, check.problem, check.formulation, check.solver,
                           float("nan"), float("nan"), float("nan"), float("nan"), float("nan"),
                           time.perf_counter() - start, False, f"{type(exc).__name__}: {exc}"[:300])
