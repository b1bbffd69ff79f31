"""MatrixSVM estimator: solvers agree, decision function = formulation scores, multiclass input,
bad input, and real data (emotions, yeast)."""

import numpy as np
import pytest
from sklearn.preprocessing import MinMaxScaler

from mlsvm import MatrixSVM
from mlsvm.datasets import load_emotions, load_yeast, make_multiclass, make_multilabel
from mlsvm.formulations import matrix_svm as ms
from mlsvm.metrics import hamming_loss
from mlsvm.verification.checks.matrix_svm import CHECK_TOL, correlation_matrix
from mlsvm.report import relative_difference
from mlsvm.verification.tolerances import assert_decisions_agree, tolerance

DATA = make_multilabel(30, 3, 3, random_state=2)


@pytest.mark.parametrize("loss", ms.LOSSES)
@pytest.mark.parametrize("correlated", [False, True])
def test_solvers_agree_and_report(loss, correlated):
    A = correlation_matrix(3) if correlated else None
    fits = {solver: MatrixSVM(C=2.0, correlation=A, loss=loss, kernel="rbf", gamma=0.5, solver=solver,
                              tol=CHECK_TOL, max_iter=200_000).fit(DATA.X, DATA.Y)
            for solver in ("cvxpy", "fast", "apg", "agd") + (("ipm",) if loss == "hinge" and not correlated else ())}
    reference = fits["cvxpy"].fit_report_.primal_objective
    resolved = {"fast": "closed-form" if loss == "squared" else "apg-ipm"}   # an RBF kernel: "fast" is not "ipm"
    for solver, model in fits.items():
        report = model.fit_report_
        tol = tolerance("matrix_svm", solver)
        assert relative_difference(report.primal_objective, reference) <= tol.objective
        assert report.relative_gap <= tol.gap and report.max_kkt <= tol.kkt
        assert report.solver == resolved.get(solver, solver) and report.converged
        np.testing.assert_allclose(model.decision_function(DATA.X), fits["cvxpy"].decision_function(DATA.X),
                                   atol=1e-4 * max(1.0, np.abs(fits["cvxpy"].decision_function(DATA.X)).max()))


def test_decision_function_is_the_constrained_output():
    """Training scores equal ``K̄ΘA`` (X̄WA, the quantity eq. 10 puts the margin on)."""
    A = correlation_matrix(3)
    model = MatrixSVM(correlation=A, kernel="poly", gamma=0.5, degree=2, coef0=1.0, tol=1e-8).fit(DATA.X, DATA.Y)
    problem = ms.MatrixSVMProblem(model.kernel_(DATA.X), DATA.Y, 1.0, A)
    coef = ms.coef_from_dual(problem, model.alpha_)
    np.testing.assert_allclose(model.decision_function(DATA.X), problem.gram_bar @ coef @ A, rtol=1e-10, atol=1e-10)
    assert model.predict(DATA.X).shape == DATA.Y.shape


def test_precomputed_kernel_equals_named_kernel():
    named = MatrixSVM(kernel="linear", solver="apg", tol=1e-9).fit(DATA.X, DATA.Y)
    pre = MatrixSVM(kernel="precomputed", tol=1e-9).fit(DATA.X @ DATA.X.T, DATA.Y)
    assert pre.fit_report_.solver == "apg-ipm"                     # no feature matrix: not the interior point
    np.testing.assert_allclose(pre.decision_function(DATA.X @ DATA.X.T), named.decision_function(DATA.X), atol=1e-12)


def test_fast_is_the_interior_point_for_the_linear_hinge_and_agrees_with_cvxpy():
    fast = MatrixSVM(kernel="linear", tol=1e-9).fit(DATA.X, DATA.Y)
    truth = MatrixSVM(kernel="linear", solver="cvxpy").fit(DATA.X, DATA.Y)
    report, exact = fast.fit_report_, tolerance("matrix_svm", "ipm")
    assert report.solver == "ipm" and report.converged
    assert relative_difference(report.primal_objective, truth.fit_report_.primal_objective) <= exact.objective
    assert report.relative_gap <= exact.gap and report.max_kkt <= exact.kkt
    assert_decisions_agree(fast.decision_function(DATA.X), truth.decision_function(DATA.X))


@pytest.mark.parametrize("loss, correlated", [("squared", False), ("hinge", True)])
def test_interior_point_refuses_what_it_does_not_solve(loss, correlated):
    A = correlation_matrix(3) if correlated else None
    with pytest.raises(ValueError, match="solver='ipm' solves the hinge loss without a correlation"):
        MatrixSVM(kernel="linear", loss=loss, correlation=A, solver="ipm").fit(DATA.X, DATA.Y)


def test_multiclass_input_predicts_classes():
    X, y = make_multiclass(45, 3, 3, random_state=1)
    model = MatrixSVM(kernel="rbf", gamma=0.5).fit(X, y + 10)
    assert set(np.unique(model.predict(X))) <= {10, 11, 12}
    assert np.mean(model.predict(X) == y + 10) > 0.8
    assert model.decision_function(X).shape == (45, 3)


@pytest.mark.parametrize("params, match", [
    (dict(C=0.0), "C must lie in"), (dict(C=-1.0), "C must lie in"),
    (dict(correlation=np.eye(2)), r"correlation \(A\) must have shape \(n_labels, n_labels\) = \(3, 3\)"),
    (dict(correlation=np.ones((3, 4))), r"must have shape"),
    (dict(loss="squared_hinge"), "loss must be one of"),
    (dict(solver="newton"), "solver must be one of"),
    (dict(kernel="poly", gamma=1e3, degree=200), "NaN or infinite"),   # a kernel that overflows
])
def test_bad_input(params, match):
    with pytest.raises(ValueError, match=match):
        MatrixSVM(**params).fit(DATA.X, DATA.Y)


def test_non_finite_precomputed_kernel():
    gram = DATA.X @ DATA.X.T
    gram[2, 3] = gram[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        MatrixSVM(kernel="precomputed").fit(gram, DATA.Y)


def _scaled(train, test):
    scaler = MinMaxScaler((-1, 1)).fit(train)   # the paper normalises to [−1, 1]
    return scaler.transform(train), np.clip(scaler.transform(test), -1, 1)


@pytest.mark.realdata
def test_emotions_fixed_split_rbf(datasets_dir):
    """Emotions, first 2/3 train / last 1/3 test (file order), RBF p = 0.3, C = 1 as in the paper.
    The certified fit must hold its gap; the batched and label-by-label fits predict alike."""
    data = load_emotions()
    cut = 2 * data.X.shape[0] // 3
    X_train, X_test = _scaled(data.X[:cut], data.X[cut:])
    model = MatrixSVM(C=1.0, kernel="rbf", gamma=0.3, tol=1e-6).fit(X_train, data.Y[:cut])
    assert model.fit_report_.converged and model.fit_report_.relative_gap <= 1e-6
    loss = hamming_loss(data.Y[cut:], model.predict(X_test))
    assert loss < 0.30   # Table 4 reports 0.181 ± 0.005 (10-fold CV); predicting no label gives 0.31


@pytest.mark.realdata
def test_yeast_linear_least_squares_closed_form(datasets_dir):
    """Yeast train/test, least squares (closed form, exact): certificate at round-off level."""
    train, test = load_yeast("train"), load_yeast("test")
    X_train, X_test = _scaled(train.X, test.X)
    model = MatrixSVM(C=1.0, loss="squared", kernel="linear").fit(X_train, train.Y)
    assert abs(model.fit_report_.relative_gap) <= tolerance("matrix_svm", "fast").gap
    assert model.fit_report_.max_kkt <= tolerance("matrix_svm", "fast").kkt
    assert hamming_loss(test.Y, model.predict(X_test)) < 0.303   # the all-zero predictor's loss on yeast test
