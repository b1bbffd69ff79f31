"""The converters of mlsvm.testing.conventions: outside solvers certify at their own accuracy."""

import numpy as np
import pytest
from sklearn.svm import SVC, LinearSVC

from mlsvm.datasets import make_multilabel
from mlsvm.testing import certify
from mlsvm.testing.conventions import (from_linear_svc, matrix_svm_linear_svc_parameters, mlodm_libodm_parameters,
                                      ovn_from_svc, ovn_svc_parameters, rank_svm_from_svc, rank_svm_svc_parameters,
                                      sm3l_from_linear_svc, sm3l_linear_svc_parameters)

DATA = make_multilabel(60, 5, 3, random_state=4)


def _linear_svc_per_label(C, tol):
    return [LinearSVC(**matrix_svm_linear_svc_parameters(C), tol=tol, max_iter=1_000_000).fit(DATA.X, y)
            for y in DATA.Y.T]


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_liblinear_per_label_is_the_matrix_svm_optimum_at_its_own_accuracy(C):
    # LIBLINEAR at tol 1e-10 is within 1e-11 of our optimum (measured 5e-12 to 2e-11)
    tight = certify("MatrixSVM", DATA.X, DATA.Y, from_linear_svc(_linear_svc_per_label(C, 1e-10)),
                    kernel="linear", C=C, rtol=1e-9)
    assert tight.passed, str(tight)
    # stopped early (tol 0.1: 2e-4 to 9e-4 off) it fails, and the verdict names the suboptimality
    loose = certify("MatrixSVM", DATA.X, DATA.Y, from_linear_svc(_linear_svc_per_label(C, 1e-1)),
                    kernel="linear", C=C, rtol=1e-6)
    assert not loose.passed and "suboptimality" in loose.failures[0]


def test_a_liblinear_model_with_other_constants_is_refused():
    model = LinearSVC(C=1.0, loss="squared_hinge").fit(DATA.X, DATA.Y[:, 0])
    with pytest.raises(ValueError, match=r"models\[0\] is not Matrix-SVM's problem"):
        from_linear_svc([model])


def test_a_perturbed_liblinear_solution_fails_naming_the_suboptimality():
    solution = from_linear_svc(_linear_svc_per_label(1.0, 1e-10))
    solution["b"] = solution["b"] + np.array([0.1, 0.0, 0.0])
    certificate = certify("MatrixSVM", DATA.X, DATA.Y, solution, kernel="linear", C=1.0)
    assert not certificate.passed and "suboptimality" in str(certificate)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_libsvm_is_rank_svm_with_two_labels_at_its_own_accuracy(kernel, C):
    y = DATA.Y[:, 0]
    Y = np.column_stack([y, 1 - y])                        # one label per instance
    svc = SVC(kernel=kernel, gamma=0.5, tol=1e-10, **rank_svm_svc_parameters(C)).fit(DATA.X, y)
    # LIBSVM's tol bounds its own dual violation, not our residuals: at tol 1e-10 its primal point is
    # 1e-11 to 3.4e-7 off, its multipliers' scaled KKT residuals up to 1.3e-6 (C = 10, linear)
    solution = rank_svm_from_svc(svc, Y)
    primal_only = {key: solution[key] for key in ("beta", "b")}
    certificate = certify("RankSVM", DATA.X, Y, primal_only, kernel=kernel, gamma=0.5, C=C, rtol=1e-6)
    assert certificate.passed, str(certificate)
    with_dual = certify("RankSVM", DATA.X, Y, solution, kernel=kernel, gamma=0.5, C=C, rtol=1e-5)
    assert with_dual.passed, str(with_dual)
    # the SVM of the wrong C is another problem's optimum: the verdict says so
    wrong = SVC(kernel=kernel, gamma=0.5, tol=1e-10, C=C).fit(DATA.X, y)
    assert not certify("RankSVM", DATA.X, Y, rank_svm_from_svc(wrong, Y), kernel=kernel, gamma=0.5, C=C).passed


OVN_HARD = dict(w_constraint="hard", b_constraint="hard")


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("beta", [0.2, 2.0, 20.0])
def test_libsvm_is_ovn_with_two_classes_at_c_half_beta(kernel, beta):
    y = DATA.Y[:, 0]
    Y = np.column_stack([y, 1 - y])                        # one class per instance
    svc = SVC(kernel=kernel, gamma=0.5, tol=1e-10, **ovn_svc_parameters(beta)).fit(DATA.X, y)
    solution = ovn_from_svc(svc, Y)
    # measured: the primal point 2e-10 to 2.6e-7 off our optimum, the multipliers' KKT residuals ≤ 1.3e-7
    primal_only = {key: solution[key] for key in ("coef", "b")}
    certificate = certify("OvNSVM", DATA.X, Y, primal_only, kernel=kernel, gamma=0.5, beta=beta, **OVN_HARD)
    assert certificate.passed, str(certificate)
    with_dual = certify("OvNSVM", DATA.X, Y, solution, kernel=kernel, gamma=0.5, beta=beta, rtol=1e-6, **OVN_HARD)
    assert with_dual.passed, str(with_dual)
    assert np.allclose(solution["Lam"].sum(axis=0), solution["nu"])   # LIBSVM's Σ yα = 0 is OvN's equal mass


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_an_svc_fitted_with_c_equal_beta_is_not_the_ovn_optimum(kernel):
    # β = 0.2: C = β has bounded support vectors, so the solution moves with C (measured 2e-2 to 3e-2 off)
    y = DATA.Y[:, 0]
    Y = np.column_stack([y, 1 - y])
    wrong = SVC(kernel=kernel, gamma=0.5, tol=1e-10, C=0.2).fit(DATA.X, y)
    certificate = certify("OvNSVM", DATA.X, Y, ovn_from_svc(wrong, Y), kernel=kernel, gamma=0.5, beta=0.2, **OVN_HARD)
    assert not certificate.passed and "suboptimality" in certificate.failures[0]


def test_ovn_from_svc_refuses_rows_outside_exactly_one_class():
    svc = SVC(kernel="linear").fit(DATA.X, DATA.Y[:, 0])
    with pytest.raises(ValueError, match="exactly one class per row"):
        ovn_from_svc(svc, DATA.Y[:, :2])


def _liblinear_sm3l(lam, R, tol):
    return [LinearSVC(**params, tol=tol, max_iter=1_000_000).fit(DATA.X, y)
            for params, y in zip(sm3l_linear_svc_parameters(lam, R), DATA.Y.T)]


@pytest.mark.parametrize("R", [None, np.diag([1.0, 2.0, 0.5])], ids=["identity", "diagonal"])
@pytest.mark.parametrize("lam", [0.1, 1.0, 10.0])
def test_liblinear_squared_hinge_is_sm3l_at_c_one_over_lambda(lam, R):
    models = _liblinear_sm3l(lam, 3 if R is None else R, 1e-12)
    # measured: 1e-16 to 9e-16 off our optimum, as weights or as coefficients over the training points
    for solution in (sm3l_from_linear_svc(models), sm3l_from_linear_svc(models, DATA.X)):
        certificate = certify("SM3L", DATA.X, DATA.Y, solution, kernel="linear", lam=lam, R=R, rtol=1e-9)
        assert certificate.passed, str(certificate)
    # LIBLINEAR at C = 1/(10λ) is another problem's optimum (measured 7e-5 to 8e-2 off)
    wrong = _liblinear_sm3l(10.0 * lam, 3 if R is None else R, 1e-12)
    certificate = certify("SM3L", DATA.X, DATA.Y, sm3l_from_linear_svc(wrong), kernel="linear", lam=lam, R=R)
    assert not certificate.passed and "suboptimality" in certificate.failures[0]


def test_sm3l_converter_refuses_other_constants_and_a_coupling_r():
    with pytest.raises(ValueError, match="R must be diagonal"):
        sm3l_linear_svc_parameters(1.0, np.array([[1.0, 0.2], [0.2, 1.0]]))
    with pytest.raises(ValueError, match=r"models\[0\] is not SM3L's problem"):
        sm3l_from_linear_svc([LinearSVC(loss="squared_hinge").fit(DATA.X, DATA.Y[:, 0])])


def test_bad_constants_and_models_are_errors_naming_them():
    """Before: C = -1 or NaN came back as LinearSVC parameters, a string or an unfitted model in
    place of the fitted ones raised AttributeError, and mLODM's μ = 0 passed."""
    for call, error, message in [
        (lambda: matrix_svm_linear_svc_parameters(-1.0), ValueError, r"C must lie in \(0\.0, inf\]; got -1"),
        (lambda: rank_svm_svc_parameters(np.nan), ValueError, "C must be finite; got nan"),
        (lambda: mlodm_libodm_parameters(1.0, 0.5, 0.0, 10), ValueError, r"mu must lie in \(0\.0, 1\.0\]"),
        (lambda: mlodm_libodm_parameters(1.0, 0.5, 0.5, 0), ValueError, r"n_samples must lie in \[1, inf\]"),
        (lambda: from_linear_svc("models"), TypeError, "models must be a list of fitted LinearSVC models.*got str"),
        (lambda: from_linear_svc([LinearSVC()]), TypeError, r"models\[0\] must be a fitted LinearSVC \(with coef_"),
        (lambda: sm3l_from_linear_svc(LinearSVC()), TypeError, "models must be a list .*got LinearSVC"),
        (lambda: rank_svm_from_svc(SVC(), np.eye(2, dtype=int)), TypeError, "svc must be a fitted SVC"),
    ]:
        with pytest.raises(error, match=message):
            call()
