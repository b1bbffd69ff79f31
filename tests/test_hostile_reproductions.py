"""Issue 14's reproductions, each a test that failed before (hang, false certificate, raw error).

d = make_multilabel(n_samples=40, n_features=5, n_labels=4, random_state=0). "Failed before"
means: never ended (killed at 150 s), reported converged=True with a certificate above tol, or
raised an internal error. Now each ends in an honest certificate or a ConvergenceWarning."""

import warnings

import pytest
from sklearn.exceptions import ConvergenceWarning

from mlsvm import BinaryApproachSVM, CategoricalRegressionSVM, MatrixSVM, RankSVM
from mlsvm.datasets import make_multilabel

D = make_multilabel(n_samples=40, n_features=5, n_labels=4, random_state=0)


@pytest.mark.parametrize("model", [
    RankSVM(kernel="rbf", solver="alm", C=1e8),        # was > 120 s (never ended)
    RankSVM(kernel="rbf", solver="alm", tol=1e-300),   # never ended
    RankSVM(kernel="poly", degree=40),                 # 181 s to a gap of 1.0
    RankSVM(kernel="rbf", C=1e8),
    MatrixSVM(kernel="poly", degree=40, C=1e-8),       # 50,000 iterations, 32-42 s on 12 points
    BinaryApproachSVM(C=1e8),                          # converged=True with max KKT 1.3e-2
    CategoricalRegressionSVM(C=1e8),                   # converged=True with max KKT 1.3e-1
], ids=lambda m: repr(m))
def test_ends_in_an_honest_certificate_or_a_warning(model):
    y = D.Y.sum(axis=1) if model._single_output else D.Y
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = model.fit(D.X, y).fit_report_
    if report.converged:
        assert abs(report.relative_gap) <= model.tol and report.max_kkt <= model.tol
    else:
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
    assert all(issubclass(w.category, ConvergenceWarning) for w in caught), [str(w.message) for w in caught]


def test_binary_approach_on_features_scaled_by_1e6_is_never_a_false_certificate():
    """Was converged=True at relative gap 2.7e-5 with tol 1e-7 (an SCS fallback)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = BinaryApproachSVM().fit(D.X * 1e6, D.Y).fit_report_
    assert (report.converged and abs(report.relative_gap) <= 1e-7 and report.max_kkt <= 1e-7) or (
        not report.converged and any(issubclass(w.category, ConvergenceWarning) for w in caught))


@pytest.mark.parametrize("cls", [BinaryApproachSVM])
def test_max_iter_one_is_respected(cls):
    """SM3L, SMSVM and BinaryApproachSVM ignored max_iter=1 (17-38 iterations, converged=True)."""
    with pytest.warns(ConvergenceWarning):
        report = cls(max_iter=1, solver="waterfill").fit(D.X, D.Y).fit_report_
    assert not report.converged and report.n_iter <= 1
