"""The MLODM estimator: solvers agree through the FitReport, set-size prediction, margin
statistics, scikit-learn conventions, bad input, and real data (emotions, a yeast subset)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.preprocessing import MinMaxScaler

from mlsvm import MLODM
from mlsvm.data import ranking_pairs
from mlsvm.datasets import load_emotions, load_yeast, make_multiclass, make_multilabel
from mlsvm.formulations import mlodm
from mlsvm.kernels import make_kernel
from mlsvm.metrics import ranking_loss
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.report import relative_difference
from mlsvm.verification.tolerances import tolerance


@pytest.fixture(scope="module")
def data():
    return make_multilabel(40, 4, 5, random_state=2)


def _check_report(report, solver):
    tol = tolerance("mlodm", solver)
    if tol.gap is not None:
        assert report.relative_gap <= tol.gap
    if tol.kkt is not None:
        assert report.max_kkt <= tol.kkt
    return report


@pytest.mark.parametrize("kwargs,row", [
    (dict(solver="fast"), "fast"),
    (dict(solver="bcd", subproblem="exact"), "bcd"),
    (dict(solver="bcd", subproblem="m3"), "bcd-m3"),
    (dict(solver="cvxpy"), "cvxpy"),
])
def test_every_solver_reaches_the_cvxpy_primal(data, kwargs, row):
    model = MLODM(C=2.0, theta=0.2, mu=0.3, gamma=0.5, random_state=0, **kwargs).fit(data.X, data.Y)
    report = _check_report(model.fit_report_, row)
    problem = mlodm.MLODMProblem(make_kernel("rbf", 0.5)(data.X), ranking_pairs(data.Y), 2.0, 0.2, 0.3)
    truth = solve(mlodm.cvxpy_primal(problem)[0], "CLARABEL")
    bound = tolerance("mlodm", row).objective
    assert relative_difference(report.primal_objective, truth) <= (report.relative_gap if bound is None else bound) + 1e-12
    ran = {"fast": "bcd-polish", "bcd-m3": "bcd"}.get(row, row)  # the registry name of what ran
    assert report.converged and report.solver == ran and report.n_iter >= (0 if row == "cvxpy" else 1)


def test_prediction_uses_the_threshold_predictor_and_margin_stats(data):
    model = MLODM(C=1.0, theta=0.5, mu=0.5, gamma=0.5, random_state=0).fit(data.X, data.Y)
    scores = model.decision_function(data.X)
    assert scores.shape == data.Y.shape
    np.testing.assert_array_equal(model.predict(data.X), model.threshold_.predict(scores))
    margins = ranking_pairs(data.Y).gather(scores)
    stats = model.margin_stats_
    assert stats["counts"].sum() == model.n_pairs_ == margins.size
    assert stats["mean"] == pytest.approx(margins.mean(), rel=1e-9)
    assert stats["variance"] == pytest.approx(margins.var(), rel=1e-9)
    assert stats["edges"].size == stats["counts"].size + 1


def test_theta_one_band_contains_zero_so_w_is_zero(data):
    """θ = 1: the band [0, 2] contains the margins of w = 0, so the optimum is w = 0, objective 0."""
    model = MLODM(C=5.0, theta=1.0, mu=0.3, gamma=0.5).fit(data.X, data.Y)
    assert np.all(model.coef_ == 0.0)
    assert model.fit_report_.primal_objective == 0.0 and model.margin_stats_["variance"] == 0.0


def test_precomputed_kernel_matches_rbf(data):
    gram = make_kernel("rbf", 0.5)(data.X)
    direct = MLODM(gamma=0.5, random_state=1).fit(data.X, data.Y)
    pre = MLODM(kernel="precomputed", random_state=1).fit(gram, data.Y)
    np.testing.assert_allclose(pre.decision_function(gram), direct.decision_function(data.X), atol=1e-10)


def test_multiclass_target_predicts_class_labels():
    X, y = make_multiclass(45, 3, 3, random_state=0)
    labels = np.array(["a", "b", "c"])[y]
    model = MLODM(C=1.0, gamma=0.5).fit(X, labels)
    assert set(model.predict(X)) <= {"a", "b", "c"}
    assert np.mean(model.predict(X) == labels) > 1 / 3   # better than chance on separable blobs


def test_scikit_learn_conventions(data):
    model = MLODM(C=3.0, theta=0.1, mu=0.7, solver="bcd", subproblem="m3")
    assert clone(model).get_params() == model.get_params()
    assert not hasattr(model, "coef_")   # __init__ stores hyperparameters only


@pytest.mark.parametrize("params,name", [
    (dict(theta=-0.1), "theta"), (dict(theta=1.5), "theta"),
    (dict(mu=0.0), "mu"), (dict(mu=1.5), "mu"), (dict(mu=-1.0), "mu"),
    (dict(C=0.0), "C"), (dict(C=-1.0), "C"),
    (dict(subproblem="newton"), "subproblem"), (dict(solver="sgd"), "solver"),
    (dict(tol=0.0), "tol"), (dict(max_iter=0), "max_iter"),
])
def test_bad_hyperparameters_name_the_parameter(data, params, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        MLODM(**params).fit(data.X, data.Y)


def test_labels_without_any_pair_are_refused():
    X = np.random.default_rng(0).standard_normal((6, 2))
    with pytest.raises(ValueError, match="no ranking pairs"):
        MLODM().fit(X, np.array([[1], [0], [1], [0], [1], [1]]))   # q = 1: no relevant–irrelevant pair


# ---- real data ---------------------------------------------------------------------------------

def _emotions_split(datasets_dir):
    """Paper Table 1: 391 train / 202 test (a seeded split: the MULAN split files are not shipped);
    features scaled to [0, 1] on the training part (§6.1)."""
    data = load_emotions()
    order = np.random.default_rng(0).permutation(data.X.shape[0])
    train, test = order[:391], order[391:]
    scaler = MinMaxScaler().fit(data.X[train])
    return scaler.transform(data.X[train]), data.Y[train], np.clip(scaler.transform(data.X[test]), 0, 1), data.Y[test]


def test_emotions_rbf_exact_and_m3(datasets_dir):
    X, Y, X_test, Y_test = _emotions_split(datasets_dir)
    fast = MLODM(C=1.0, gamma=0.5, theta=0.5, mu=0.5, random_state=0).fit(X, Y)
    _check_report(fast.fit_report_, "fast")
    m3 = MLODM(C=1.0, gamma=0.5, theta=0.5, mu=0.5, solver="bcd", subproblem="m3", tol=1e-4,
               random_state=0).fit(X, Y)
    gap = m3.fit_report_.relative_gap
    assert relative_difference(m3.fit_report_.primal_objective, fast.fit_report_.primal_objective) <= gap + tolerance("mlodm", "fast").gap
    # better ranking than the label-frequency prior (the same score vector for every instance)
    prior = np.tile(Y.mean(axis=0), (Y_test.shape[0], 1))
    assert ranking_loss(Y_test, fast.decision_function(X_test)) < ranking_loss(Y_test, prior)


def test_yeast_subset_matches_cvxpy(datasets_dir):
    data = load_yeast("train")
    X, Y = MinMaxScaler().fit_transform(data.X[:25]), data.Y[:25]
    model = MLODM(C=4.0, gamma=2.0**-3, theta=0.3, mu=0.2, random_state=0).fit(X, Y)
    _check_report(model.fit_report_, "fast")
    problem = mlodm.MLODMProblem(make_kernel("rbf", 2.0**-3)(X), ranking_pairs(Y), 4.0, 0.3, 0.2)
    truth = solve(mlodm.cvxpy_primal(problem)[0], "CLARABEL")
    assert relative_difference(model.fit_report_.primal_objective, truth) <= tolerance("mlodm", "fast").objective


def test_margin_statistics_bin_only_the_finite_margins():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stats = mlodm.margin_statistics(np.array([0.5, np.nan, 1.5, np.inf, 1.0]), bins=4)
        huge = mlodm.margin_statistics(np.array([1e300, -1e300]), bins=2)
    assert stats["n_pairs"] == 5 and stats["counts"].sum() == 3
    assert stats["edges"][0] == 0.5 and stats["edges"][-1] == 1.5
    assert np.isnan(stats["mean"]) and np.isnan(stats["variance"])
    assert huge["mean"] == 0.0 and huge["variance"] == np.inf   # the square passes the float limit


def test_a_c_past_the_float_limit_is_the_breakdown_error_not_a_numpy_one(capfd):
    # C = 1e300 on features at 1e6: the linear Newton direction is nan. A unit step along it made W
    # nan, and the run stalled there; its nan scores reached np.histogram ("autodetected range of
    # [nan, nan]") and, past it, the threshold predictor's least squares (LAPACK printed "DLASCL
    # parameter number 4" and raised)
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((5, 1)) * 1e6, (rng.random((5, 2)) < 0.5).astype(int)
    with pytest.raises(ValueError, match=r"MLODM\(C=1e\+300, kernel='linear'\).*Newton direction is not finite"):
        MLODM(C=1e300, kernel="linear").fit(X, Y)
    assert capfd.readouterr() == ("", "")


@pytest.mark.parametrize("solver", ["bcd", "bcd-polish", "cvxpy"])
def test_a_c_whose_inverse_overflows_is_the_breakdown_error(solver):
    # C = 1e-300 with μ = 1e-8 (fuzz seed 2781): the dual's diagonal |Y_i||Ȳ_i| / (μC) = 2e308 is inf.
    # The blocks' active set cycled on it (a RuntimeError from inside the sub-solver), and CVXPY
    # refused the data ("Problem data contains NaN or Inf", naming no argument)
    X, Y = np.array([[1.26e-7]]), np.array([[0, 1, 1]])
    with pytest.raises(ValueError, match=r"MLODM\(C=1e-300, mu=1e-08.*\): the solver broke down in floating point"):
        MLODM(C=1e-300, mu=1e-8, kernel="rbf", solver=solver).fit(X, Y)
