"""Docstrings of the public API (numpydoc validation, a stated subset of its checks).

The public API is every function (compiled ones too: numba dispatchers, :mod:`mlsvm.solvers.compiled`)
and class named in ``mlsvm.__all__`` and in the ``__all__`` of every module of the package (found by
walking it, so a renamed or new module is covered without editing this file). Each must pass these
numpydoc checks:

* GL08 — the object has a docstring;
* PR01 — every parameter of its signature is documented in a ``Parameters`` section;
* PR02 — the ``Parameters`` section documents no parameter the signature does not have.

The API reference of the documentation site is generated from these docstrings.
"""

import importlib
import inspect
import pkgutil

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

import mlsvm  # noqa: E402

CHECKS = ("GL08", "PR01", "PR02")


def _is_compiled(obj):
    """A function compiled by numba: its dispatcher keeps the Python function it compiles."""
    return inspect.isfunction(getattr(obj, "py_func", None))


def _public_objects():
    modules = ["mlsvm"] + sorted(info.name for info in pkgutil.walk_packages(mlsvm.__path__, "mlsvm."))
    seen = {}
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj) or _is_compiled(obj):
                seen.setdefault(f"{obj.__module__}.{obj.__qualname__}", f"{module_name}.{name}")
    return sorted(seen.items())


PUBLIC = _public_objects()


def test_the_public_api_is_found():
    names = {qualified for qualified, _ in PUBLIC}
    # one object of each layer, so an empty walk cannot pass the test below vacuously
    for expected in ("mlsvm.estimators.rank_svm.RankSVM", "mlsvm.formulations.mlodm.MLODMProblem",
                     "mlsvm.report.FitReport", "mlsvm.metrics.hamming_loss", "mlsvm.cli.main",
                     "mlsvm.solvers.compiled.compiled"):
        assert expected in names
    assert len(PUBLIC) > 150


@pytest.mark.parametrize("qualified, exported_as", PUBLIC, ids=[q for q, _ in PUBLIC])
def test_public_docstring(qualified, exported_as):
    result = numpydoc_validate.validate(qualified)
    errors = [f"{code}: {message}" for code, message in result["errors"] if code in CHECKS]
    assert not errors, f"{qualified} (exported as {exported_as}):\n" + "\n".join(errors)


@pytest.mark.parametrize("name", [n for n in mlsvm.__all__ if n != "__version__"])
def test_estimator_docstring_lists_the_registry_solvers(name):
    # the ``solver`` entry is generated from the registry table (mlsvm/estimators/_docs.py): a
    # solver added to the table appears in help() and on the API page without a docstring edit
    from numpydoc.docscrape import ClassDoc

    estimator = getattr(mlsvm, name)
    assert "%(" not in estimator.__doc__, "an unfilled shared-entry placeholder"
    entry = {parameter.name: parameter for parameter in ClassDoc(estimator)["Parameters"]}["solver"]
    listed = [part.strip().strip('"') for part in entry.type.strip("{}").split(",")]
    assert listed == list(estimator.solver_names())
    for solver in estimator.solver_names():
        assert f'``"{solver}"``' in "\n".join(entry.desc)
