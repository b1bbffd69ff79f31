"""The converters of mlsvm.testing.conventions: outside solvers certify at their own accuracy."""

import numpy as np
import pytest
from sklearn.svm import SVC, LinearSVC

from mlsvm.datasets import make_multilabel
from mlsvm.testing import certify
from mlsvm.testing.conventions import (from_linear_svc, matrix_svm_linear_svc_parameters, rank_svm_from_svc,
                                      rank_svm_svc_parameters)

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
