"""certify grades the linear kernel's weights ``{"W", "b"}`` (any W, not only one in the span of the
data) for every formulation whose primal is naturally W and b: the optimum written as weights
certifies, ``W·1.01`` fails naming the suboptimality, and OvN's hard w is checked on ``W1 = 0``."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import mlsvm
from mlsvm import registry
from mlsvm.datasets import make_multilabel
from mlsvm.testing import certify

DATA = make_multilabel(30, 4, 3, random_state=1)
OVN_VARIANTS = [dict(w_constraint=w, b_constraint=b, alpha=0.3) for w in ("soft", "hard") for b in ("soft", "hard")]
#: (estimator, hyperparameters, the name of its coefficients over the training points)
CASES = ([(mlsvm.RankSVM, {}, "beta")]
         + [(mlsvm.OvNSVM, variant, "coef") for variant in OVN_VARIANTS]
         + [(mlsvm.SM3L, {}, "coef"), (mlsvm.SM3L, dict(R=np.diag([1.0, 2.0, 0.5])), "coef"),
            (mlsvm.SMSVM, {}, "coef"), (mlsvm.MatrixSVM, {}, "coef"), (mlsvm.MLODM, {}, "coef")])
IDS = [f"{cls.__name__}-{'-'.join(str(v) for k, v in params.items() if k != 'R') or ('R' if params else 'plain')}"
       for cls, params, _ in CASES]


def _targets(cls):
    return DATA.Y.argmax(axis=1) if cls._single_output else DATA.Y


def _optimum_as_weights(cls, params, coef_name):
    """The registry's exact point on DATA (linear kernel), its coefficients turned into ``W = Xᵀcoef``
    (on the basis the solver chose, for the sparse models; Matrix-SVM's ``b = 1ᵀΘ``), and its dual."""
    estimator = cls(kernel="linear", **params)
    gram, indicator = estimator._training_data(DATA.X, _targets(cls))
    problem = estimator._problem(gram, indicator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        _, result = registry.run(registry.model(cls._registry_model), problem,
                                 **estimator.get_params(deep=False) | {"tol": 1e-10})
    basis = result.primal.get("basis")
    rows = DATA.X if basis is None else DATA.X[np.asarray(basis)]
    if "W" in result.primal and cls is mlsvm.MLODM:   # mLODM's linear solver works on W itself
        primal = {"W": np.asarray(result.primal["W"])}
    else:
        primal = {"W": rows.T @ np.asarray(result.primal[coef_name])}
    if "b" in result.primal:
        primal["b"] = np.asarray(result.primal["b"])
    elif cls is mlsvm.MatrixSVM:   # W̄ = [X, 1]ᵀΘ: the bias is the last row
        primal["b"] = np.asarray(result.primal[coef_name]).sum(axis=0)
    return primal, result.dual


@pytest.mark.parametrize("cls, params, coef_name", CASES, ids=IDS)
def test_the_optimum_as_weights_certifies_and_scaled_weights_fail(cls, params, coef_name):
    primal, dual = _optimum_as_weights(cls, params, coef_name)
    certificate = certify(cls, DATA.X, _targets(cls), primal, kernel="linear", **params)
    assert certificate.passed, str(certificate)
    assert certificate.decision_difference <= 1e-5
    scaled = dict(primal, W=1.01 * primal["W"])
    worse = certify(cls, DATA.X, _targets(cls), scaled, kernel="linear", **params)
    assert not worse.passed and "suboptimality" in worse.failures[0], str(worse)


@pytest.mark.parametrize("cls, params, coef_name", [c for c in CASES if c[0] is not mlsvm.MatrixSVM],
                         ids=[i for c, i in zip(CASES, IDS) if c[0] is not mlsvm.MatrixSVM])
def test_weights_with_the_dual_point_grade_the_kkt_residuals(cls, params, coef_name):
    primal, dual = _optimum_as_weights(cls, params, coef_name)
    if cls in (mlsvm.SM3L, mlsvm.SMSVM):   # the dual of the full basis the weights are graded on
        dual = {"mu": mlsvm.formulations.sparse_mm.multipliers_from_primal(
            _full_problem(cls, params), np.linalg.lstsq(DATA.X.T, primal["W"], rcond=None)[0])}
    certificate = certify(cls, DATA.X, _targets(cls), {**primal, **dual}, kernel="linear", **params)
    assert certificate.passed and max(certificate.kkt.values()) <= 1e-6, str(certificate)
    perturbed = {key: 1.01 * np.asarray(value) for key, value in dual.items()}
    assert any("KKT" in failure for failure in certify(cls, DATA.X, _targets(cls), {**primal, **perturbed},
                                                        kernel="linear", **params).failures)


def _full_problem(cls, params):
    estimator = cls(kernel="linear", **params)
    return estimator._problem(*estimator._training_data(DATA.X, _targets(cls)))


def test_ovn_hard_w_weights_that_do_not_sum_to_zero_are_infeasible():
    params = dict(w_constraint="hard", b_constraint="hard")
    primal, _ = _optimum_as_weights(mlsvm.OvNSVM, params, "coef")
    assert np.max(np.abs(primal["W"].sum(axis=1))) <= 1e-8
    shifted = dict(primal, W=primal["W"] + np.array([[0.05, 0.0, 0.0]]))
    certificate = certify("OvNSVM", DATA.X, DATA.Y, shifted, kernel="linear", **params)
    assert not certificate.passed and certificate.infeasibility > 1e-3 and "infeasible" in str(certificate)


def test_weights_need_the_linear_kernel_and_the_right_shape():
    primal, _ = _optimum_as_weights(mlsvm.RankSVM, {}, "beta")
    with pytest.raises(ValueError, match=r"solution\['W'\] needs the linear kernel"):
        certify("RankSVM", DATA.X, DATA.Y, primal, kernel="rbf", gamma=0.5)
    with pytest.raises(ValueError, match=r"solution\['W'\] must have shape \(d, q\) = \(4, 3\); got \(3, 4\)"):
        certify("RankSVM", DATA.X, DATA.Y, dict(primal, W=primal["W"].T), kernel="linear")


def test_a_full_model_optimum_certifies_when_the_greedy_reference_would_pick_a_smaller_basis():
    """SM3L's fast solver selects a basis of at most d_max points: its bracket bounds that restricted
    problem (a larger optimum), so it is no certificate for a point on the full basis; the reference
    is then the CVXPY full model."""
    primal, _ = _optimum_as_weights(mlsvm.SM3L, {}, "coef")
    certificate = certify("SM3L", DATA.X, DATA.Y, primal, kernel="linear", d_max=3)
    assert certificate.passed and certificate.reference_solver == "mlsvm cvxpy", str(certificate)
