"""Matrix-SVM's dual coordinate descent (hinge, linear kernel, no A; :mod:`mlsvm.solvers.matrix_svm_dcd`)
against CVXPY on hypothesis-drawn problems with the awkward label structures, sparse and dense X;
one label = LIBLINEAR; "fast" routes wide features to it; max_iter warns with the gap reached."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings, strategies as st
from sklearn.exceptions import ConvergenceWarning

from mlsvm import MatrixSVM, registry
from mlsvm.datasets import make_multilabel
from mlsvm.formulations import matrix_svm as ms
from mlsvm.report import relative_difference
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.solvers import matrix_svm_dcd as module
from mlsvm.solvers.matrix_svm_dcd import solve_dcd
from mlsvm.solvers.matrix_svm_ipm import MAX_WIDTH
from mlsvm.verification.checks.matrix_svm import CHECK_TOL
from mlsvm.verification.tolerances import tolerance
from tests.test_matrix_svm_solvers import STRUCTURES, _awkward, liblinear_single_label

def _certificate(problem):
    return lambda alpha: max(ms.kkt_residuals(problem, alpha).values())


@settings(max_examples=15)
@given(seed=st.integers(0, 1000), q=st.integers(1, 3), C=st.sampled_from([0.1, 1.0, 10.0]),
       structure=st.sampled_from(STRUCTURES), sparse=st.booleans(), empty_column=st.booleans())
# draws of HYPOTHESIS_PROFILE=explore whose free faces were singular with the dual rising along a
# null direction: the Newton step (least squares) never left them, 10,530 and 15,720 passes
@example(seed=157, q=3, C=10.0, structure="all and none", sparse=False, empty_column=False)
@example(seed=245, q=3, C=10.0, structure="plain", sparse=False, empty_column=False)
# and one whose face was nearly singular (eigenvalues 2.7e-8 … 11): every projection of the long Newton
# step lowered the dual, and the gap stayed at 2-4e-5 for 5,000 passes
@example(seed=82, q=2, C=1.0, structure="plain", sparse=False, empty_column=False)
def test_reaches_the_cvxpy_optimum(seed, q, C, structure, sparse, empty_column):
    X, Y = _awkward(make_multilabel(20, 4, q, random_state=seed), structure)
    if empty_column:
        X[:, 0] = 0.0
        X[3] = 0.0   # an empty row too
    features = sp.csr_matrix(X) if sparse else X
    problem = ms.MatrixSVMProblem(None, Y, C, features=features)
    result = solve_dcd(features, problem.signed, C, tol=CHECK_TOL, max_iter=5000, certificate=_certificate(problem))
    tol = tolerance("matrix_svm", "dcd")
    reference = solve(ms.cvxpy_primal(problem)[0], "CLARABEL")
    evaluation = ms.evaluate(problem, {"W": result.primal["W"], "b": result.primal["b"]}, result.dual)
    assert result.converged
    assert relative_difference(evaluation.primal_objective, reference) <= tol.objective
    assert evaluation.relative_gap <= tol.gap
    assert evaluation.max_kkt <= tol.kkt
    # the weights it returns are those its α implies
    np.testing.assert_allclose(ms.primal_objective(problem, result.primal["coef"]), evaluation.primal_objective,
                               rtol=1e-12)


def test_a_singular_face_with_a_rising_null_direction_is_left_along_it():
    """Six free coordinates in four features and the bias: Q_FF (6 × 6) has rank 5. When −G_F has a
    part in Q_FF's null space the face has no maximiser; the direction is that part (Q d = 0, the dual
    rises along it), not a solve whose tiny pivot blows it up or a least-squares step that ignores it."""
    rng = np.random.default_rng(0)
    rows = np.c_[rng.standard_normal((6, 4)), np.ones(6)]
    signs = rng.choice([-1.0, 1.0], 6)
    system = (rows @ rows.T) * np.outer(signs, signs)
    null = np.linalg.eigh(system)[1][:, 0]
    rising = rng.standard_normal(6) * 1e-3 + 2e-3 * null
    direction, ray = module._face_direction(system, rising)
    assert ray
    np.testing.assert_allclose(direction, (null @ rising) * null, rtol=1e-8)     # the null space is one line
    assert np.abs(system @ direction).max() <= 1e-12 * np.abs(system).max()
    assert rising @ direction > 0.0
    # in the range only: the least-norm solution, no ray
    in_range = system @ rng.standard_normal(6)
    direction, ray = module._face_direction(system, in_range)
    assert not ray
    np.testing.assert_allclose(system @ direction, in_range, rtol=1e-9, atol=1e-12 * np.abs(in_range).max())
    np.testing.assert_allclose(null @ direction, 0.0, atol=1e-12)


def test_single_label_equals_liblinear():
    data = make_multilabel(60, 4, 1, noise=0.15, random_state=5)
    problem = ms.MatrixSVMProblem(None, data.Y, 1.0, features=data.X)
    result = solve_dcd(data.X, problem.signed, 1.0, tol=CHECK_TOL, max_iter=5000, certificate=_certificate(problem))
    w, b, liblinear = liblinear_single_label(data.X, problem.signed)
    assert relative_difference(ms.primal_objective(problem, result.primal["coef"]), liblinear) \
        <= tolerance("binary_svm", "liblinear").objective
    np.testing.assert_allclose(np.r_[result.primal["W"].ravel(), result.primal["b"]], np.r_[w, b], atol=1e-3)


def test_max_iter_warns_with_the_gap_reached():
    data = make_multilabel(40, 3, 2, random_state=1)
    with pytest.warns(ConvergenceWarning, match=r"did not converge in 2 iterations: relative duality gap "
                                                r"reached \d\.\d+e[-+]\d+, tolerance asked 1\.0e-12"):
        result = solve_dcd(data.X, 2.0 * data.Y - 1.0, 1.0, tol=1e-12, max_iter=2)
    assert not result.converged and result.n_iter == 2 and result.stop_value > 1e-12


def test_dcd_certifies_wide_linear_hinge_problems_sparse_and_dense():
    """d + 1 > MAX_WIDTH: the interior point's Newton systems would be too wide; "fast" goes to the
    LIBLINEAR warm start (tests/test_matrix_svm_liblinear.py), "dcd" stays available."""
    rng = np.random.default_rng(0)
    X = sp.random(40, MAX_WIDTH, density=0.01, random_state=rng, format="csr")
    Y = make_multilabel(40, 3, 3, random_state=2).Y
    problem = ms.MatrixSVMProblem(None, Y, 1.0, features=X)
    assert registry.model("matrix_svm").resolve("fast", problem) == "liblinear-dcd"
    narrow = ms.MatrixSVMProblem(None, Y, 1.0, features=X[:, :10])
    assert registry.model("matrix_svm").resolve("fast", narrow) == "ipm"
    model = MatrixSVM(C=1.0, kernel="linear", tol=1e-8, solver="dcd").fit(X, Y)
    assert model.fit_report_.solver == "dcd" and model.fit_report_.converged
    dense = MatrixSVM(C=1.0, kernel="linear", tol=1e-8, solver="dcd").fit(X.toarray(), Y)
    assert relative_difference(dense.fit_report_.primal_objective, model.fit_report_.primal_objective) <= 1e-8
    np.testing.assert_allclose(dense.decision_function(X), model.decision_function(X.toarray()), atol=1e-6)


@pytest.mark.parametrize("arguments", [dict(loss="squared"), dict(correlation=np.eye(3)), dict(kernel="rbf")])
def test_refuses_what_it_does_not_solve(arguments):
    data = make_multilabel(20, 3, 3, random_state=0)
    with pytest.raises(ValueError, match="solver='dcd' solves the hinge loss with the linear kernel"):
        MatrixSVM(**{"kernel": "linear", **arguments}, solver="dcd").fit(data.X, data.Y)
