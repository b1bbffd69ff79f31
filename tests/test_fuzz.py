"""Hostile-input fuzz harness (issue 14): every estimator and solver, hostile X and Y, and
hyperparameters at the edges of their domains.

Each draw must end in exactly one of:

* a ``ValueError`` / ``TypeError`` whose message names the offending argument;
* a fit whose report says ``converged=True`` with an honest certificate (the recomputed relative
  gap and every scaled KKT residual within ``tol``);
* a ``ConvergenceWarning`` and ``converged=False``;
* with ``solver="cvxpy"`` only, a ``GroundTruthError`` naming the backend that returned no point
  and the alternatives (``cvxpy_solver`` runs exactly the backend asked; with no point there is no
  model: Clarabel fails on a one-point Matrix-SVM with features at 2e6 that ECOS, OSQP and SCS
  certify);

never another exception, never a warning from a dependency (numpy, SciPy, CVXPY), never a line
printed to the standard output or error (a backend's compiled code included), and never a fit
longer than :data:`TIME_BOUND` seconds (the problems have at most 12 points). The CI profile draws
:data:`EXAMPLES` problems per estimator; ``HYPOTHESIS_PROFILE=explore`` with
``MLSVM_FUZZ_EXAMPLES=500`` is the larger run by hand.
"""

from __future__ import annotations

import os
import re
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning, DataConversionWarning

import mlsvm
import mlsvm.datasets
from mlsvm.estimators.ovn import UncenteredDataWarning
from mlsvm.solvers.cvxpy_tools import GroundTruthError

ESTIMATORS = [getattr(mlsvm, name) for name in mlsvm.__all__ if name != "__version__"]
EXAMPLES = int(os.environ.get("MLSVM_FUZZ_EXAMPLES", "12"))
#: seconds a fit on ≤ 12 points may take, whatever the input
TIME_BOUND = 20.0
#: warnings of the library's own that a draw may emit (a column vector y is scikit-learn's convention;
#: OvN with a linear/poly kernel on data far from the origin)
OWN_WARNINGS = (ConvergenceWarning, DataConversionWarning, UncenteredDataWarning)

#: hyperparameter values at and beyond the edges of their domains, per name
EDGES = {
    "C": [1e-8, 1.0, 1e8, 0.0, -1.0, np.inf, np.nan, 1e-300, 1e300],
    "tol": [1e-12, 1e-6, 0.5, 0.0],
    "max_iter": [1, 3, 0],
    "gamma": ["scale", 1e-8, 1e3, 0.0, -1.0],
    "degree": [1, 2, 40, 0],
    "coef0": [0.0, 1.0, -1.0],
    "theta": [0.0, 1.0, 0.5, 1.5],
    "mu": [1e-8, 1.0, 0.0],
    "lam": [1e-8, 1.0, 1e8, 0.0, 1e-300, 1e300],
    "alpha": [0.0, 0.99, -0.9, 1.0],
    "beta": [1e-8, 1.0, 1e8, 0.0, 1e300],
    "gamma_b": [1e-8, 1.0, 0.0],
    "d_max": [1, 5, 0],
    "kappa": [1, 25, 0],
    "random_state": [None, 0, 2**40, -1, "seed"],
}


def _hostile_X(draw, n: int, d: int):
    X = draw(st.sampled_from(["normal", "integers"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = rng.standard_normal((n, d)) if X == "normal" else rng.integers(-3, 4, (n, d)).astype(float)
    X = X * 10.0 ** draw(st.sampled_from([-6, 0, 0, 6]))
    twist = draw(st.sampled_from(["none", "constant column", "duplicated rows", "float32",
                                  "numeric strings", "sparse", "nan", "near the float limit"]))
    if twist == "constant column":
        X[:, 0] = 3.0
    elif twist == "duplicated rows" and n > 1:
        X[1:] = X[0]
    elif twist == "float32":
        X = X.astype(np.float32)
    elif twist == "numeric strings":
        X = X.astype(str)
    elif twist == "sparse":
        X[np.abs(X) < np.median(np.abs(X))] = 0.0
        X = sp.csr_matrix(X)
    elif twist == "nan":
        X[0, 0] = np.nan
    elif twist == "near the float limit":   # every product and square overflows float64
        X = X / np.max(np.abs(X), initial=1.0) * 1e308
    return X, twist


def _hostile_Y(draw, n: int, q: int, single_output: bool):
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if single_output:
        kind = draw(st.sampled_from(["classes", "classes", "one class", "strings", "column", "float labels"]))
    else:
        kind = draw(st.sampled_from(["indicator", "indicator", "all zero", "all one", "classes",
                                     "ragged", "sparse", "one class"]))
    if kind in ("classes", "column"):
        y = rng.integers(0, draw(st.integers(2, 3)), n)
        return (y[:, None] if kind == "column" else y), kind
    if kind == "one class":
        return np.zeros(n, dtype=int), kind
    if kind == "strings":
        return np.array(["a", "b", "c"])[rng.integers(0, 3, n)], kind
    if kind == "float labels":
        return rng.integers(0, 2, n) + 0.5, kind
    Y = rng.integers(0, 2, (n, q))
    if kind == "all zero":
        Y[:] = 0
    elif kind == "all one":
        Y[:] = 1
    elif kind == "ragged":
        return [list(np.flatnonzero(row)) for row in Y], kind
    elif kind == "sparse":
        return sp.csr_matrix(Y), kind
    return Y, kind


def _names_an_argument(message: str, estimator) -> bool:
    names = {"X", "Y", "y", *estimator.get_params(deep=False)}
    return any(re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", message) for name in names)


def _check_draw(cls, data, capfd):
    n = data.draw(st.integers(1, 12), label="n")
    d = data.draw(st.integers(1, 4), label="d")
    q = data.draw(st.integers(1, 3), label="q")
    X, x_kind = _hostile_X(data.draw, n, d)
    Y, y_kind = _hostile_Y(data.draw, n, q, cls._single_output)
    estimator = cls()
    params = {"solver": data.draw(st.sampled_from(list(cls.solver_names())), label="solver"),
              "kernel": data.draw(st.sampled_from(["linear", "rbf", "poly"]), label="kernel")}
    for name in data.draw(st.lists(st.sampled_from(sorted(set(EDGES) & set(estimator.get_params()))),
                                   max_size=3, unique=True), label="edges"):
        params[name] = data.draw(st.sampled_from(EDGES[name]), label=name)
    estimator.set_params(**params)
    capfd.readouterr()
    try:
        _fit_and_grade(estimator, X, Y, params, x_kind, y_kind)
    finally:
        printed = capfd.readouterr()
    assert printed == ("", ""), f"printed {printed} (X: {x_kind}, Y: {y_kind}, {params})"


def _fit_and_grade(estimator, X, Y, params, x_kind, y_kind):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            estimator.fit(X, Y)
        except (ValueError, TypeError) as exc:
            assert _names_an_argument(str(exc), estimator), \
                f"{type(exc).__name__} names no argument: {exc!r} (X: {x_kind}, Y: {y_kind}, {params})"
            return
        except GroundTruthError as exc:
            assert params["solver"] == "cvxpy" and "cvxpy_solver" in str(exc) and "solver='fast'" in str(exc), \
                f"{exc!r} (X: {x_kind}, Y: {y_kind}, {params})"
            return
        finally:
            elapsed = time.perf_counter() - start
        assert elapsed <= TIME_BOUND, f"fit took {elapsed:.1f} s (X: {x_kind}, Y: {y_kind}, {params})"
        try:
            estimator.predict(X)
            estimator.decision_function(X)
        except ValueError as exc:
            # a fit at the edge of float64 that did not converge may hold coefficients (1e304 at C = 1e300)
            # whose scores overflow: then predict says so, in X's terms
            assert not estimator.fit_report_.converged and "decision values of X overflow float64" in str(exc), \
                f"{exc!r} (X: {x_kind}, Y: {y_kind}, {params})"
    foreign = [w for w in caught if not issubclass(w.category, OWN_WARNINGS)]
    assert not foreign, f"stray warnings {[f'{w.category.__name__}: {w.message}' for w in foreign]} " \
                        f"(X: {x_kind}, Y: {y_kind}, {params})"
    report = estimator.fit_report_
    if report.converged:
        tol = estimator.tol
        assert abs(report.relative_gap) <= tol and report.max_kkt <= tol, \
            f"false certificate: gap {report.relative_gap:.2e}, KKT {report.max_kkt:.2e}, tol {tol} ({params})"
    else:
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught), \
            f"converged=False without a ConvergenceWarning ({params})"


@pytest.fixture(scope="module", autouse=True)
def compiled_loops_ready():
    """The first call of a compiled loop compiles it or loads its cached machine code (up to ~30 s,
    once per installation: docs/compiled.md). TIME_BOUND bounds a fit on hostile input, not numba's
    compiler, so every route with compiled loops is fitted once on a small ordinary problem first
    (their argument types do not depend on the input: the solvers convert it)."""
    data = mlsvm.datasets.make_multilabel(40, 4, 3, random_state=0)
    X, y = sp.csr_matrix(data.X), data.Y.argmax(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlsvm.RankSVM(kernel="rbf", solver="decomposition").fit(data.X, data.Y)
        mlsvm.RankSVM(kernel="linear", solver="bcd").fit(X, data.Y)
        for solver in ("fast", "greedy"):
            mlsvm.SMSVM(solver=solver, d_max=4).fit(data.X, y)
            mlsvm.SM3L(solver=solver, d_max=4).fit(data.X, data.Y)
        for kernel in ("rbf", "linear"):   # the full model's passes: Gram matrix and CSR X
            mlsvm.SMSVM(solver="full", kernel=kernel).fit(data.X, y)
            mlsvm.SM3L(solver="full", kernel=kernel).fit(data.X, data.Y)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=[cls.__name__ for cls in ESTIMATORS])
def test_hostile_input_ends_in_an_error_an_honest_certificate_or_a_warning(cls, capfd):
    @settings(max_examples=EXAMPLES)
    @given(data=st.data())
    def draw(data):
        _check_draw(cls, data, capfd)

    draw()
