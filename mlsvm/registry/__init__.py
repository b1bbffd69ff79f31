"""The solver registry: for every model, each solver name → the function that runs it, its grade,
the estimator parameters it reads, and what ``"fast"`` resolves to.

One table per model, in :mod:`mlsvm.registry.<model>` (``MODEL = ModelSpec(...)``). The
estimators, ``mlsvm verify``, the CLI's help and the tolerance table all read these tables; adding
a solver is one :class:`SolverSpec` row (and ``tests/test_registry.py`` fails until it has verify
rows on every reference problem family).

Grades: ``EXACT`` solvers reach the optimum to the tolerance table's bars (relative 1e-6 to the
CVXPY ground truth, gap and KKT ≤ 1e-6); ``CERTIFIED`` solvers (the papers' sublinear
algorithms: Frank–Wolfe, M³, MM) are graded on the gap they certify themselves. Either way a fit
is ``converged`` only when its own recomputed certificate meets ``tol`` (:mod:`mlsvm.report`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from pkgutil import iter_modules
from types import ModuleType
from typing import Callable

from mlsvm.solvers.result import SolverResult

__all__ = ["EXACT", "CERTIFIED", "SolverSpec", "ModelSpec", "MODEL_NAMES", "model", "all_models",
           "normalize_model_name", "run"]

EXACT = "exact"
CERTIFIED = "certified"

#: registered models: one module per model in this package (sorted by name)
MODEL_NAMES = tuple(sorted(info.name for info in iter_modules(__path__) if not info.name.startswith("_")))


@dataclass(frozen=True)
class SolverSpec:
    """One registered solver.

    ``run(problem, *, tol, max_iter, **options) -> SolverResult``; ``options`` names the estimator
    parameters it reads besides ``tol`` and ``max_iter`` (e.g. ``random_state``, ``cvxpy_solver``),
    each passed by keyword. ``summary`` is the one line the CLI's help and the docs show.

    Parameters
    ----------
    name : str
        Solver name (the estimator's ``solver=``).
    run : callable
        ``run(problem, *, tol, max_iter, **options) -> SolverResult``.
    grade : {"exact", "certified"}
        How ``mlsvm verify`` grades it (the tolerance row).
    summary : str
        One line for the CLI's help and the docs.
    options : tuple of str
        Estimator parameters it reads besides tol and max_iter.
    """

    name: str
    run: Callable[..., SolverResult]
    grade: str
    summary: str
    options: tuple[str, ...] = ()

    def __post_init__(self):
        if self.grade not in (EXACT, CERTIFIED):
            raise ValueError(f"grade must be {EXACT!r} or {CERTIFIED!r}; got {self.grade!r}")


@dataclass(frozen=True)
class ModelSpec:
    """A model's formulation module, its solvers, and the rule that resolves ``"fast"``.

    ``resolve_fast(problem) -> str`` names the solver ``"fast"`` runs on that problem;
    ``check_options(options)`` rejects an invalid solver option (e.g. mLODM's ``subproblem``)
    whichever solver runs, as scikit-learn validates every parameter at ``fit``.

    Parameters
    ----------
    name : str
        Model name.
    formulation : module
        Its module of :mod:`mlsvm.formulations`.
    solvers : dict
        Solver name → :class:`SolverSpec`.
    resolve_fast : callable
        ``resolve_fast(problem) -> str``: the solver ``"fast"`` runs on that problem.
    fast_summary : str
        What ``"fast"`` resolves to, in words.
    check_options : callable or None
        Rejects an invalid solver option whichever solver runs.
    dual_names : tuple of str
        The keys of a solution dict that are dual variables (the rest are primal).
    """

    name: str
    formulation: ModuleType
    solvers: dict = field(default_factory=dict)
    resolve_fast: Callable = None
    fast_summary: str = ""
    check_options: Callable = None
    dual_names: tuple = ()

    def solver_names(self) -> tuple[str, ...]:
        """``"fast"`` first (the default of every estimator), then the registered solvers."""
        return ("fast", *self.solvers)

    def resolve(self, solver: str, problem) -> str:
        if solver == "fast":
            return self.resolve_fast(problem)
        if solver not in self.solvers:
            raise ValueError(f"solver must be one of {self.solver_names()}; got {solver!r}")
        return solver


def normalize_model_name(name: str) -> str:
    """``"rank-svm"``, ``"Rank_SVM"`` → ``"rank_svm"`` (the CLI accepts either spelling).

    Parameters
    ----------
    name : str
        A model or estimator name, e.g. ``"MLODM"``, ``"matrix-svm"``.
    """
    return str(name).strip().lower().replace("-", "_")


def model(name: str) -> ModelSpec:
    """The registry table of one model (``ValueError`` naming the known models otherwise).

    Parameters
    ----------
    name : str
        Model name (any spelling :func:`normalize_model_name` accepts).
    """
    key = normalize_model_name(name)
    if key not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; known models: {', '.join(MODEL_NAMES)}")
    return import_module(f"{__name__}.{key}").MODEL


def all_models() -> list[ModelSpec]:
    """The registry entry of every model, in the order of ``MODEL_NAMES``."""
    return [model(name) for name in MODEL_NAMES]


def run(spec: ModelSpec, problem, *, solver: str, tol: float, max_iter: int, **options) -> tuple[str, SolverResult]:
    """Resolve ``solver`` on ``problem`` and run it; returns ``(name that ran, result)``.
    ``options`` may hold more than the solver reads (an estimator passes all its parameters):
    each solver takes only its own.

    Parameters
    ----------
    spec : ModelSpec
        The model's registry entry.
    problem : object
        The formulation's problem.
    solver : str
        Solver name, or ``"fast"``.
    tol : float
        Stopping tolerance: the bound on the quantity of the solver's stop rule (see the model's
        documentation page for which quantity).
    max_iter : int
        Iteration budget; reaching it raises a ``ConvergenceWarning`` quoting the value reached.
    **options
        Estimator parameters; each solver takes only its own.
    """
    if spec.check_options is not None:
        spec.check_options(options)
    name = spec.resolve(solver, problem)
    entry = spec.solvers[name]
    taken = {key: options[key] for key in entry.options if key in options}
    return name, entry.run(problem, tol=tol, max_iter=max_iter, **taken)
