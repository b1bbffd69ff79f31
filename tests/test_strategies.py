"""mlsvm.testing.strategies: the drawn problems are valid for every model (our optimum certifies on
them), every awkward label structure is reachable, and the module names its optional dependency."""

import runpy
import sys
import warnings

import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis.errors import NoSuchExample
from sklearn.exceptions import ConvergenceWarning

import mlsvm
from mlsvm.formulations.ovn import alpha_interval
from mlsvm.testing import certify, strategies
from mlsvm.testing.strategies import LABEL_QUIRKS, hyperparameters, kernels, multilabel_data, problems

ESTIMATORS = [getattr(mlsvm, name) for name in mlsvm.__all__ if name != "__version__"]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=[cls.__name__ for cls in ESTIMATORS])
def test_drawn_problems_fit_and_their_optimum_certifies(cls):
    @settings(max_examples=4)
    @given(problems(cls, max_samples=8, max_labels=3))
    def check(problem):
        X, targets, params = problem
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = cls(**params, tol=1e-10).fit(X, targets)
        solution = _solution(model)
        certificate = certify(cls, X, targets, solution, **params)
        assert certificate.passed, str(certificate)
    check()


def _solution(model):
    """The fitted model's primal point in certify's names, from its fitted attributes."""
    names = {"RankSVM": ("beta", "b"), "OvNSVM": ("coef", "b"), "BinaryApproachSVM": ("coef", "b"),
             "CategoricalRegressionSVM": ("coef", "b"), "MatrixSVM": ("coef",)}
    name = type(model).__name__
    if name in ("SMSVM", "SM3L"):
        return {"coef": model.coef_, "basis": model.basis_indices_}
    if name == "MLODM":
        return {"coef": model.coef_}
    values = (model.dual_coef_, getattr(model, "intercept_", None))
    return dict(zip(names[name], values))


@settings(max_examples=50)
@given(multilabel_data(min_labels=2, need_pair=True))
def test_data_are_binary_of_the_asked_size_and_keep_a_ranking_pair(data):
    X, Y = data
    assert X.shape[0] == Y.shape[0] >= 4 and 1 <= X.shape[1] <= 4 and 2 <= Y.shape[1] <= 4
    assert set(np.unique(Y)) <= {0, 1}
    n_relevant = Y.sum(axis=1)
    assert np.any((n_relevant > 0) & (n_relevant < Y.shape[1]))


QUIRK_HOLDS = {
    "label nobody has": lambda X, Y: Y.shape[1] >= 3 and not Y[:, 0].any(),
    "label everybody has": lambda X, Y: Y.shape[1] >= 3 and Y[:, 1].all(),
    "row with every label": lambda X, Y: Y[0].all(),
    "row with no label": lambda X, Y: not Y[1].any(),
    "duplicated point": lambda X, Y: np.array_equal(X[2], X[3]),
}


@pytest.mark.parametrize("quirk", LABEL_QUIRKS)
def test_every_label_quirk_is_drawn(quirk):
    """``find`` searches the strategy: each awkward structure of SPEC §3 is drawn, and never when
    it is not asked for."""
    find(multilabel_data(), lambda data: QUIRK_HOLDS[quirk](*data))
    others = tuple(q for q in LABEL_QUIRKS if q != quirk)
    if quirk == "duplicated point":   # the other quirks are label patterns random labels can repeat
        with pytest.raises(NoSuchExample):
            find(multilabel_data(quirks=others), lambda data: QUIRK_HOLDS[quirk](*data),
                 settings=settings(max_examples=200))


@pytest.mark.parametrize("q", [1, 2])
def test_one_or_two_labels_are_drawn(q):
    X, Y = find(multilabel_data(min_labels=q, max_labels=q), lambda data: True)
    assert Y.shape[1] == q


@settings(max_examples=50)
@given(hyperparameters("OvNSVM", n_labels=4), kernels())
def test_ovn_alpha_lies_inside_its_convexity_interval(params, kernel):
    low, high = alpha_interval(4)
    assert low < params["alpha"] < high and params["beta"] > 0
    assert kernel["kernel"] in ("linear", "rbf", "poly")


def test_wrong_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="quirks must be among"):
        find(multilabel_data(quirks=("no such",)), lambda data: True)
    with pytest.raises(ValueError, match="need_pair needs min_labels >= 2"):
        find(multilabel_data(need_pair=True), lambda data: True)
    assert set(LABEL_QUIRKS) >= {"label nobody has", "duplicated point"}


def test_without_hypothesis_the_import_error_names_the_test_extra(monkeypatch):
    # the module's own file run with hypothesis unimportable (None in sys.modules blocks an import)
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    monkeypatch.setitem(sys.modules, "hypothesis.strategies", None)
    with pytest.raises(ImportError, match=r"needs hypothesis(.|\n)*'test' extra"):
        runpy.run_path(strategies.__file__)
