"""A reference suite any language can read: certified instances as ``.npy`` arrays plus one
``case.json`` per case (schema in ``docs/reference_suite.md``).

``export_reference(directory)`` writes one folder per case::

    <directory>/<case>/case.json     model, hyperparameters (our constants), kernel, objectives,
                                     relative gap, KKT residuals, backends that agreed, versions
    <directory>/<case>/X.npy, Y.npy  the data (Y: the (n, q) {0,1} indicator, or 1-D classes)
    <directory>/<case>/primal_<name>.npy, dual_<name>.npy   the certified optimal point

A case is written only when our exact solver and CVXPY on two backends agree to
:data:`AGREEMENT` (relative); ``check_reference(directory)`` re-certifies every case and reports
what no longer holds (a tampered file, a changed formulation).
"""

from __future__ import annotations

import json
import math
import numbers
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

import mlsvm
from mlsvm import registry
from mlsvm.data import read_npy
from mlsvm.datasets import make_multilabel
from mlsvm.formulations.evaluation import relative_difference
from mlsvm.persistence import atomic_write
from mlsvm.solvers.blas_threads import blas_threads
from mlsvm.solvers.cvxpy_tools import GroundTruthError, solve_first_optimal
from mlsvm.testing import REFERENCE_TOL, certify, estimator_class

__all__ = ["SCHEMA_VERSION", "AGREEMENT", "ReferenceCase", "default_cases", "export_reference",
           "check_reference", "load_case"]

SCHEMA_VERSION = 1
#: our exact solver and the two CVXPY backends must agree to this (relative) before a case is written
AGREEMENT = 1e-8
#: the CVXPY backends that confirm each case, in order of preference: the primal on the first that
#: answers "optimal", the dual on the first *other* one (OSQP takes QPs only, ECOS cones too)
PRIMAL_BACKENDS = ("CLARABEL", "ECOS")
DUAL_BACKENDS = ("OSQP", "ECOS", "CLARABEL", "SCS")


@dataclass(frozen=True)
class ReferenceCase:
    """One instance: a model, its data and hyperparameters.

    Parameters
    ----------
    name : str
        Case name.
    model : str
        Model name.
    X : ndarray
        Features.
    Y : ndarray
        Labels.
    hyperparameters : dict
        Hyperparameters with mlsvm's constants.
    """

    name: str
    model: str
    X: np.ndarray
    Y: np.ndarray
    hyperparameters: dict


def _awkward(n: int = 14, d: int = 3, q: int = 4, seed: int = 3):
    """Labels nobody / everybody has, rows with all / no labels, a duplicated point."""
    data = make_multilabel(n, d, q, noise=0.15, random_state=seed)
    Y, X = data.Y.copy(), data.X.copy()
    Y[:, 0], Y[:, 1] = 0, 1
    Y[0, :], Y[1, :] = 1, 0
    X[3] = X[2]
    return X, Y


def default_cases() -> list[ReferenceCase]:
    """Every registered model on small problems (n ≤ 16) with the awkward label structures of
    SPEC §3, q = 2, and the linear, RBF and poly kernels."""
    plain = make_multilabel(16, 3, 3, random_state=7)
    two = make_multilabel(12, 2, 2, random_state=8)
    X_awkward, Y_awkward = _awkward()
    datasets = {"plain": (plain.X, plain.Y), "awkward": (X_awkward, Y_awkward), "q2": (two.X, two.Y)}
    kernels = {"linear": dict(kernel="linear"), "rbf": dict(kernel="rbf", gamma=0.5),
               "poly": dict(kernel="poly", gamma=0.5, degree=2, coef0=1.0)}
    cases = []
    for name in (n for n in mlsvm.__all__ if n != "__version__"):
        cls = getattr(mlsvm, name)
        if cls._registry_model is None:
            continue
        for data_name, (X, Y) in datasets.items():
            if cls._single_output:
                Y = np.argmax(Y, axis=1) if data_name != "awkward" else np.arange(X.shape[0]) % 3
            for kernel_name, kernel in kernels.items():
                if data_name != "plain" and kernel_name == "poly":
                    continue
                parameters = dict(kernel)
                if cls._registry_model == "sparse_mm":   # the full model (J = all points): the greedy
                    parameters.update(min_rel_decrease=0.0, random_state=0)   # run adds until no gain
                cases.append(ReferenceCase(f"{name}-{data_name}-{kernel_name}", name, X, Y, parameters))
    return cases


def _cvxpy_values(spec, problem) -> dict:
    """The optimal value from the CVXPY primal on one backend and the dual on another."""
    _, primal, first = solve_first_optimal(lambda: spec.formulation.cvxpy_primal(problem), PRIMAL_BACKENDS)
    others = tuple(backend for backend in DUAL_BACKENDS if backend != first)
    _, dual, second = solve_first_optimal(lambda: spec.formulation.cvxpy_dual(problem), others)
    return {f"cvxpy primal ({first})": primal, f"cvxpy dual ({second})": -dual}


def _problem_parameters(spec, estimator) -> dict:
    """The estimator's parameters that define the problem (not how it is solved)."""
    how = {"solver", "tol", "max_iter", "random_state"}
    for entry in spec.solvers.values():
        how.update(entry.options)
    return {key: value for key, value in estimator.get_params(deep=False).items() if key not in how}


def _clean(value):
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def _save_array(path: Path, array) -> None:
    atomic_write(path, lambda handle: np.save(handle, np.asarray(array), allow_pickle=False))


def export_case(case: ReferenceCase, directory: Path) -> dict:
    """Solve, confirm on two CVXPY backends, and write one case; returns its ``case.json`` dict."""
    cls = estimator_class(case.model)
    estimator = cls(**case.hyperparameters)
    gram, indicator = estimator._training_data(case.X, case.Y)
    spec = registry.model(cls._registry_model)
    problem = estimator._problem(gram, indicator)
    with warnings.catch_warnings(), blas_threads():
        warnings.simplefilter("error", ConvergenceWarning)   # a case is written only when certified
        solver, result = registry.run(spec, problem, **estimator.get_params(deep=False)
                                      | {"solver": "fast", "tol": REFERENCE_TOL})
    evaluation = spec.formulation.evaluate(problem, result.primal, result.dual)
    values = _cvxpy_values(spec, problem)
    for backend, value in values.items():
        difference = relative_difference(evaluation.primal_objective, value)
        if difference > AGREEMENT:
            raise RuntimeError(f"{case.name}: {backend} optimum {value!r} differs from mlsvm {solver}'s "
                               f"{evaluation.primal_objective!r} by {difference:.1e} > {AGREEMENT:.0e}")
    folder = directory / case.name
    folder.mkdir(parents=True, exist_ok=True)
    _save_array(folder / "X.npy", case.X)
    _save_array(folder / "Y.npy", case.Y)
    for kind, point in (("primal", result.primal), ("dual", result.dual)):
        for key, array in point.items():
            _save_array(folder / f"{kind}_{key}.npy", array)
    record = _clean({
        "schema_version": SCHEMA_VERSION, "mlsvm_version": mlsvm.__version__, "case": case.name,
        "model": case.model, "registry_model": spec.name, "hyperparameters": _problem_parameters(spec, estimator),
        "primal_names": sorted(result.primal), "dual_names": sorted(result.dual),
        "primal_objective": evaluation.primal_objective, "dual_objective": evaluation.dual_objective,
        "relative_gap": evaluation.relative_gap, "kkt": evaluation.kkt,
        "solver": f"mlsvm {solver}", "agreed": {f"mlsvm {solver}": evaluation.primal_objective, **values},
        "agreement": AGREEMENT,
    })
    text = json.dumps(record, indent=1, allow_nan=False)
    atomic_write(folder / "case.json", lambda handle: handle.write(text.encode()))
    return record


def export_reference(directory, cases: list[ReferenceCase] | None = None, skipped: list | None = None) -> list[dict]:
    """Write every case (default: :func:`default_cases`) under ``directory``; a case that cannot be
    certified (no agreement, no optimal backend) is not written and is appended, with the reason,
    to ``skipped`` when given, else raised.

    Parameters
    ----------
    directory : str or Path
        Output directory.
    cases : list of ReferenceCase or None
        The cases (default: :func:`default_cases`).
    skipped : list or None
        Receives ``(case name, reason)`` for every case not certified; None: such a case raises.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    records = []
    for case in default_cases() if cases is None else cases:
        try:
            records.append(export_case(case, directory))
        except (GroundTruthError, RuntimeError, ConvergenceWarning) as exc:
            if skipped is None:
                raise
            skipped.append((case.name, f"{type(exc).__name__}: {exc}"))
    return records


#: the keys of ``case.json`` that reading and re-certifying a case use, with their JSON types
RECORD_FIELDS = {"case": (str, "a string"), "model": (str, "a string"),
                 "hyperparameters": (dict, "an object"), "primal_names": (list, "a list of names"),
                 "dual_names": (list, "a list of names"), "primal_objective": (numbers.Real, "a number"),
                 "dual_objective": (numbers.Real, "a number")}


def load_case(folder) -> tuple[dict, np.ndarray, np.ndarray, dict]:
    """``(case.json dict, X, Y, solution)`` of one case folder; the solution has every primal and
    dual array by name (what :func:`mlsvm.testing.certify` takes). A folder that is not such a case
    (a file missing or damaged, a ``case.json`` of another schema) is a ``ValueError`` naming the
    file and what is wrong with it.

    Parameters
    ----------
    folder : str or Path
        A case folder.
    """
    folder = Path(folder)
    path = folder / "case.json"
    if not path.is_file():
        raise ValueError(f"{folder} is not a reference case: no case.json in it")
    try:
        record = json.loads(path.read_bytes().decode("utf-8"))
    except ValueError as exc:   # not UTF-8, or not JSON
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    _check_record(record, path)
    load = lambda name: read_npy(folder / f"{name}.npy", f"array of the reference case {folder.name}")  # noqa: E731
    solution = {key: load(f"primal_{key}") for key in record["primal_names"]}
    solution.update({key: load(f"dual_{key}") for key in record["dual_names"]})
    return record, load("X"), load("Y"), solution


def _check_record(record, path: Path) -> None:
    """``case.json`` holds what :func:`load_case` and :func:`check_case` read, of the types of
    :data:`RECORD_FIELDS`, and array names that are file names within the case's folder."""
    if not isinstance(record, dict):
        raise ValueError(f"{path} must hold a JSON object (docs/testing.md); got {type(record).__name__}")
    if record.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path} has schema_version {record.get('schema_version')!r}; this mlsvm reads "
                         f"version {SCHEMA_VERSION}")
    for key, (kind, description) in RECORD_FIELDS.items():
        value = record.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(f"{path}: {key!r} must be {description}; got {value!r}"[:300])
    for key in record["primal_names"] + record["dual_names"]:
        if not (isinstance(key, str) and key.isidentifier()):
            raise ValueError(f"{path}: the array names must be identifiers (files primal_<name>.npy and "
                             f"dual_<name>.npy); got {key!r}")


def check_case(folder, rtol: float = 1e-8) -> list[str]:
    """What no longer holds for one case (empty: it re-certifies): the stored point must certify at
    ``rtol`` and re-evaluate to the stored objectives."""
    record, X, Y, solution = load_case(folder)
    certificate = certify(record["model"], X, Y, solution, rtol=rtol, **record["hyperparameters"])
    problems = [f"{record['case']}: {failure}" for failure in certificate.failures]
    for key, value in (("primal_objective", certificate.primal_objective),
                       ("dual_objective", certificate.dual_objective)):
        if relative_difference(value, record[key]) > rtol:
            problems.append(f"{record['case']}: {key} re-evaluates to {value!r}, stored {record[key]!r}")
    return problems


def check_reference(directory, rtol: float = 1e-8) -> list[str]:
    """:func:`check_case` on every case folder under ``directory``.

    Parameters
    ----------
    directory : str or Path
        Directory of case folders.
    rtol : float
        The bar of each re-certification.
    """
    folders = sorted(path.parent for path in Path(directory).glob("*/case.json"))
    if not folders:
        return [f"{directory}: no reference cases (no */case.json)"]
    return [problem for folder in folders for problem in check_case(folder, rtol)]
