"""mlsvm.testing: the optimum of every registered model certifies, and a perturbed one fails with a
verdict that names the failing quantity."""

import json
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

import mlsvm
from mlsvm import registry
from mlsvm.datasets import make_multilabel
from mlsvm.testing import assert_optimal, certify, estimator_class

ESTIMATORS = [getattr(mlsvm, name) for name in mlsvm.__all__ if name != "__version__"]
DATA = make_multilabel(30, 4, 3, random_state=1)


def _targets(cls):
    return DATA.Y.argmax(axis=1) if cls._single_output else DATA.Y


def _optimum(cls, **params):
    """The registry's own exact point for ``cls`` on DATA, as a solution dict."""
    estimator = cls(**params)
    gram, indicator = estimator._training_data(DATA.X, _targets(cls))
    problem = estimator._problem(gram, indicator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        _, result = registry.run(registry.model(cls._registry_model), problem,
                                 **estimator.get_params(deep=False) | {"tol": 1e-10})
    return result.primal, result.dual


def _scaled(values: dict, factor: float) -> dict:
    """The point's arrays times ``factor``; a basis J (indices of training points) is kept."""
    return {key: value if key == "basis" else factor * np.asarray(value) for key, value in values.items()}


@pytest.mark.parametrize("cls", ESTIMATORS, ids=[c.__name__ for c in ESTIMATORS])
def test_the_optimum_certifies_and_a_perturbed_one_fails(cls):
    params = dict(kernel="rbf", gamma=0.5)
    primal, dual = _optimum(cls, **params)
    certificate = assert_optimal(cls.__name__, DATA.X, _targets(cls), {**primal, **dual}, **params)
    assert certificate.suboptimality <= 1e-6 and max(certificate.kkt.values()) <= 1e-6
    assert "OPTIMAL" in str(certificate)
    json.dumps(certificate.as_dict(), allow_nan=False)           # strict JSON

    with pytest.raises(AssertionError, match=r"NOT OPTIMAL(.|\n)*suboptimality"):
        assert_optimal(cls, DATA.X, _targets(cls), _scaled(primal, 1.01), **params)
    with pytest.raises(AssertionError, match=r"NOT OPTIMAL(.|\n)*KKT"):
        assert_optimal(cls, DATA.X, _targets(cls), {**primal, **_scaled(dual, 1.01)}, **params)


def test_model_names_resolve_and_a_wrong_name_is_a_clear_error():
    assert estimator_class("MatrixSVM") is mlsvm.MatrixSVM
    assert estimator_class("matrix-svm") is mlsvm.MatrixSVM
    assert estimator_class(mlsvm.MLODM(C=2.0)) is mlsvm.MLODM
    with pytest.raises(ValueError, match="model must name one estimator"):
        estimator_class("svm-light")
    # anything but a name, an mlsvm estimator or its class: it was an AttributeError inside certify
    for model in (["MatrixSVM"], SVC, SVC()):
        with pytest.raises(ValueError, match=r"model must be an mlsvm estimator .* its class or its name; got"):
            certify(model, DATA.X, DATA.Y, {"coef": np.zeros((30, 3))})
    assert estimator_class(type("Mine", (mlsvm.MatrixSVM,), {})).__name__ == "Mine"   # a subclass is one


@pytest.mark.parametrize("rtol, message", [(np.inf, "must be finite"), (np.nan, "must be finite"),
                                           (0.0, r"must lie in \(0\.0, 1\.0\)"), (-1e-6, "must lie in"),
                                           (1.0, "must lie in"), ("1e-6", "must be a real number")])
def test_the_verdicts_tolerance_is_checked(rtol, message):
    """At rtol = inf the zero point was OPTIMAL; a string was a TypeError from a comparison."""
    with pytest.raises(ValueError, match=rf"rtol {message}"):
        certify("MatrixSVM", DATA.X, DATA.Y, {"coef": np.zeros((30, 3))}, rtol=rtol)


def test_a_hyperparameter_the_model_lacks_is_named():
    """It was the constructor's TypeError ("__init__() got an unexpected keyword argument")."""
    with pytest.raises(ValueError, match=r"MatrixSVM has no hyperparameter 'lam'; its hyperparameters: C, "):
        certify("MatrixSVM", DATA.X, DATA.Y, {"coef": np.zeros((30, 3))}, lam=1.0)


def test_an_estimator_instance_gives_its_hyperparameters():
    model = mlsvm.MatrixSVM(kernel="linear", C=3.0).fit(DATA.X, DATA.Y)
    good = certify(model, DATA.X, DATA.Y, {"coef": model.dual_coef_, "alpha": model.alpha_})
    assert good.passed
    # the same point is not optimal for another C: the verdict follows the hyperparameters asked
    assert not certify(model, DATA.X, DATA.Y, {"coef": model.dual_coef_}, C=1.0).passed


def test_an_infeasible_point_is_reported_infeasible():
    """OvN with hard w requires Σ_k w_k = 0 (kernel form: Σ_k a_ki = 0 for every i)."""
    params = dict(kernel="rbf", gamma=0.5, w_constraint="hard", b_constraint="hard")
    primal, dual = _optimum(mlsvm.OvNSVM, **params)
    assert certify("OvNSVM", DATA.X, DATA.Y, primal, **params).passed
    shifted = dict(primal, coef=np.asarray(primal["coef"]) + np.array([0.05, 0.0, 0.0]))
    certificate = certify("OvNSVM", DATA.X, DATA.Y, shifted, **params)
    assert not certificate.passed and certificate.infeasibility > 1e-3
    assert "infeasible" in str(certificate)
    biased = dict(primal, b=np.asarray(primal["b"]) + 0.1)
    assert "infeasible" in str(certify("OvNSVM", DATA.X, DATA.Y, biased, **params))


@pytest.mark.parametrize("cls", ESTIMATORS, ids=[c.__name__ for c in ESTIMATORS])
def test_a_hostile_solution_is_a_clear_error_or_fails_never_a_raw_exception(cls):
    """Every malformed solution is a ValueError (TypeError for a non-mapping) naming the entry, before
    anything is graded; a point far off (entries at 1e300) is NOT OPTIMAL without a numpy warning.
    Before: MatrixSVM's alpha with two extra unit dimensions was graded and passed; a misspelt name
    was ignored; a missing ``b`` was a KeyError; NaN or a wrong shape surfaced as NumPy's warnings or
    broadcasting errors."""
    params = dict(kernel="rbf", gamma=0.5)
    primal, dual = _optimum(cls, **params)
    point = {**primal, **dual}
    main = "beta" if "beta" in primal else "coef"
    dual_name = sorted(dual)[0]

    def fails(solution, error, message):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(error, match=message):
                certify(cls, DATA.X, _targets(cls), solution, **params)

    fails(dict(point, **{main: np.where(np.arange(point[main].size).reshape(point[main].shape) == 0, np.nan,
                                          point[main])}),
          ValueError, rf"solution\['{main}'\] holds NaN or infinite entries")
    fails(dict(point, **{dual_name: np.asarray(point[dual_name])[..., None, None]}), ValueError,
          rf"solution\['{dual_name}'\] must have shape")
    fails(dict(point, **{main: np.asarray(point[main]).T}), ValueError, rf"solution\['{main}'\] must have shape")
    fails(dict(point, Coef=point[main]), ValueError, rf"solution has 'Coef', which {cls.__name__} does not read")
    fails(dict(point, **{main: np.asarray(point[main]).astype(str)}), ValueError,
          rf"solution\['{main}'\] must be an array of real numbers")
    fails([point[main]], TypeError, "solution must be a dict of named arrays; got list")
    if len(dual) > 1:   # a dual point with a part missing (a one-name dual removed is a primal point)
        fails({key: value for key, value in point.items() if key != dual_name}, ValueError,
              rf"dual point needs all of .*'{dual_name}'")
    if "b" in primal:
        fails({key: value for key, value in point.items() if key != "b"}, ValueError,
              rf"solution must hold a primal point .*'b'")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        far = certify(cls, DATA.X, _targets(cls), dict(point, **{main: 1e300 * np.ones_like(point[main])}), **params)
    assert not far.passed


@pytest.mark.parametrize("model, solution, params", [
    ("RankSVM", {"beta": np.zeros((30, 3)), "b": np.zeros(3)}, dict(C=1e300)),
    ("MatrixSVM", {"coef": np.zeros((30, 3))}, dict(C=1e300)),
    ("OvNSVM", {"coef": np.zeros((30, 3)), "b": np.zeros(3)}, dict(beta=1e300)),
])
def test_no_certificate_without_a_finite_reference_bracket(model, solution, params):
    """At C = 1e300 the reference solve overflows and its bracket is NaN or infinite; the zero point
    then passed, every comparison with NaN being false (a false certificate). Now the verdict fails
    and says why, without NumPy warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # the reference solve's own, expected here
        warnings.simplefilter("error", RuntimeWarning)
        certificate = certify(model, DATA.X, DATA.Y, solution, **params)
    assert not certificate.passed
    assert "reference solve gave no finite bracket of the optimum" in str(certificate)
