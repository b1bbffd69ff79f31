"""Matrix-SVM's LIBLINEAR warm start with exact dual recovery (hinge, linear kernel, no A;
:mod:`mlsvm.solvers.matrix_svm_liblinear`): against CVXPY on hypothesis-drawn problems with the
awkward label structures (a label with one class only, duplicated rows), sparse and dense X; the
same optimum as the pure coordinate-descent route on emotions, yeast and a bibtex subset; a planted
bad warm start still ends certified (coordinate descent takes over) or warns; LIBLINEAR's own
ConvergenceWarning never reaches the user."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import MinMaxScaler

from mlsvm import MatrixSVM, registry
from mlsvm.datasets import load_bibtex, load_emotions, load_yeast, make_multilabel
from mlsvm.formulations import matrix_svm as ms
from mlsvm.report import relative_difference
from mlsvm.solvers import matrix_svm_liblinear
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.solvers.matrix_svm_dcd import solve_dcd
from mlsvm.solvers.matrix_svm_ipm import MAX_WIDTH
from mlsvm.solvers.matrix_svm_liblinear import recover_alpha, solve_liblinear_dcd
from mlsvm.verification.checks.matrix_svm import CHECK_TOL
from mlsvm.verification.tolerances import tolerance
from tests.test_matrix_svm_solvers import STRUCTURES, _awkward


def _certificate(problem):
    return lambda alpha: max(ms.kkt_residuals(problem, alpha).values())


@settings(max_examples=15)
@given(seed=st.integers(0, 1000), q=st.integers(1, 3), C=st.sampled_from([0.1, 1.0, 10.0]),
       structure=st.sampled_from(STRUCTURES), sparse=st.booleans())
def test_reaches_the_cvxpy_optimum(seed, q, C, structure, sparse):
    X, Y = _awkward(make_multilabel(20, 4, q, random_state=seed), structure)
    features = sp.csr_matrix(X) if sparse else X
    problem = ms.MatrixSVMProblem(None, Y, C, features=features)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)   # LIBLINEAR's is caught inside
        result = solve_liblinear_dcd(features, problem.signed, C, tol=CHECK_TOL, max_iter=5000,
                                     certificate=_certificate(problem))
    tol = tolerance("matrix_svm", "liblinear-dcd")
    reference = solve(ms.cvxpy_primal(problem)[0], "CLARABEL")
    evaluation = ms.evaluate(problem, {"W": result.primal["W"], "b": result.primal["b"]}, result.dual)
    assert result.converged
    assert relative_difference(evaluation.primal_objective, reference) <= tol.objective
    assert evaluation.relative_gap <= tol.gap
    assert evaluation.max_kkt <= tol.kkt
    np.testing.assert_allclose(ms.primal_objective(problem, result.primal["coef"]), evaluation.primal_objective,
                               rtol=1e-12)


@pytest.mark.parametrize("seed", [286, 713])
@pytest.mark.parametrize("structure", ["label nobody has", "label everybody has"])
def test_a_one_class_label_is_solved_exactly_without_passes(seed, structure):
    # draws whose optimum is degenerate (every margin exactly 1, more free α than the rank of X̄):
    # coordinate descent from the old w̄ = 0 recovery stalled there at gaps of 1e-7 and 2e-6
    X, Y = _awkward(make_multilabel(20, 4, 1, random_state=seed), structure)
    problem = ms.MatrixSVMProblem(None, Y, 0.1, features=X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = solve_liblinear_dcd(X, problem.signed, 0.1, tol=CHECK_TOL, max_iter=5000,
                                     certificate=_certificate(problem))
    assert result.converged and result.n_iter == 0
    evaluation = ms.evaluate(problem, {"W": result.primal["W"], "b": result.primal["b"]}, result.dual)
    assert evaluation.relative_gap <= CHECK_TOL and evaluation.max_kkt <= CHECK_TOL
    for backend in ("CLARABEL", "ECOS"):
        reference = solve(ms.cvxpy_primal(problem)[0], backend)
        assert relative_difference(evaluation.primal_objective, reference) <= tolerance("matrix_svm", "liblinear-dcd").objective


def test_recovery_from_the_exact_weights_is_exact_with_duplicated_rows():
    """Duplicated rows make the face system singular; grouped, the recovered α is the optimum's."""
    data = make_multilabel(60, 5, 3, random_state=3)
    X, Y = np.vstack([data.X, data.X[:10]]), np.vstack([data.Y, data.Y[:10]])
    problem = ms.MatrixSVMProblem(None, Y, 1.0, features=X)
    # the optimum's weights only (coordinate descent to a gap of 1e-12), not its α
    exact = solve_dcd(X, problem.signed, 1.0, tol=1e-12, max_iter=20_000)
    assert exact.converged
    weights = np.vstack([exact.primal["W"], exact.primal["b"][None, :]])
    alpha = recover_alpha(X, problem.signed, 1.0, weights)
    evaluation = ms.evaluate(problem, {}, {"alpha": alpha})
    assert evaluation.relative_gap <= 1e-12 and evaluation.max_kkt <= 1e-12


def _real_sets(datasets_dir):
    """(X, Y, the route "fast" took before this one): emotions scaled to [−1, 1] (raw, its features
    reach 237 and neither LIBLINEAR nor coordinate descent gets near 1e-9), 600 rows of yeast, and
    500 rows × 8 labels of bibtex (sparse, all 1836 features)."""
    emotions, yeast = load_emotions(), load_yeast("train")
    scaled = MinMaxScaler((-1.0, 1.0)).fit_transform(emotions.X)
    sets = {"emotions": (scaled, emotions.Y, "ipm"), "yeast": (yeast.X[:600], yeast.Y[:600], "ipm")}
    if (datasets_dir / "bibtex.arff").is_file():
        bibtex = load_bibtex("train", datasets_dir / "bibtex.arff")
        Y = np.asarray(bibtex.Y)[:500]
        sets["bibtex-subset"] = (bibtex.X[:500], Y[:, np.argsort(-Y.sum(axis=0), kind="stable")[:8]], "dcd")
    return sets


@pytest.mark.realdata
def test_same_optimum_as_the_old_route_on_real_data(datasets_dir):
    for name, (X, Y, old_route) in _real_sets(datasets_dir).items():
        fits = {solver: MatrixSVM(C=1.0, kernel="linear", solver=solver, tol=1e-9, max_iter=200_000).fit(X, Y)
                for solver in ("liblinear-dcd", old_route)}
        new, old = (fits[s].fit_report_ for s in ("liblinear-dcd", old_route))
        assert new.converged and old.converged, name
        assert relative_difference(new.primal_objective, old.primal_objective) <= 1e-8, name
        np.testing.assert_allclose(fits["liblinear-dcd"].decision_function(X), fits[old_route].decision_function(X),
                                   atol=1e-4, err_msg=name)


@pytest.mark.parametrize("planted", ["random weights", "zero weights"])
def test_a_bad_warm_start_still_ends_certified(monkeypatch, planted):
    data = make_multilabel(40, 6, 3, random_state=4)
    rng = np.random.default_rng(0)

    def bad(X, signed, C, random_state, liblinear_tol):
        shape = (X.shape[1] + 1, signed.shape[1])
        return 10.0 * rng.standard_normal(shape) if planted == "random weights" else np.zeros(shape)

    monkeypatch.setattr(matrix_svm_liblinear, "_liblinear_weights", bad)
    problem = ms.MatrixSVMProblem(None, data.Y, 1.0, features=data.X)
    result = solve_liblinear_dcd(data.X, problem.signed, 1.0, tol=CHECK_TOL, max_iter=5000,
                                 certificate=_certificate(problem))
    reference = solve(ms.cvxpy_primal(problem)[0], "CLARABEL")
    evaluation = ms.evaluate(problem, {}, result.dual)
    assert result.converged and evaluation.relative_gap <= CHECK_TOL and evaluation.max_kkt <= 1e-6
    assert relative_difference(evaluation.primal_objective, reference) <= tolerance("matrix_svm", "liblinear-dcd").objective


def test_a_bad_warm_start_without_passes_left_warns(monkeypatch):
    data = make_multilabel(40, 6, 3, random_state=4)
    monkeypatch.setattr(matrix_svm_liblinear, "_liblinear_weights",
                        lambda X, signed, *args: np.full((X.shape[1] + 1, signed.shape[1]), 5.0))
    with pytest.warns(ConvergenceWarning, match="did not converge in 1 iterations: relative duality gap"):
        result = solve_liblinear_dcd(data.X, 2.0 * data.Y - 1.0, 1.0, tol=1e-12, max_iter=1)
    assert not result.converged and result.stop_value > 1e-12


def test_liblinear_convergence_warning_does_not_leak(monkeypatch):
    """LIBLINEAR stopped after one iteration warns inside; the certificate decides, and it is met."""
    monkeypatch.setattr(matrix_svm_liblinear, "LIBLINEAR_MAX_ITER", 1)
    data = make_multilabel(60, 6, 3, random_state=2)
    X = MinMaxScaler((-1.0, 1.0)).fit_transform(data.X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = MatrixSVM(C=1.0, kernel="linear", solver="liblinear-dcd", tol=1e-8).fit(X, data.Y)
    assert model.fit_report_.converged


def test_fast_routes_wide_linear_hinge_problems_here():
    rng = np.random.default_rng(0)
    X = sp.random(40, MAX_WIDTH, density=0.01, random_state=rng, format="csr")
    Y = make_multilabel(40, 3, 3, random_state=2).Y
    assert registry.model("matrix_svm").resolve("fast", ms.MatrixSVMProblem(None, Y, 1.0, features=X)) \
        == "liblinear-dcd"
    model = MatrixSVM(C=1.0, kernel="linear", tol=1e-8, random_state=3).fit(X, Y)
    assert model.fit_report_.solver == "liblinear-dcd" and model.fit_report_.converged


@pytest.mark.parametrize("arguments", [dict(loss="squared"), dict(correlation=np.eye(3)), dict(kernel="rbf")])
def test_refuses_what_it_does_not_solve(arguments):
    data = make_multilabel(20, 3, 3, random_state=0)
    with pytest.raises(ValueError, match="solver='liblinear-dcd' solves the hinge loss with the linear kernel"):
        MatrixSVM(**{"kernel": "linear", **arguments}, solver="liblinear-dcd").fit(data.X, data.Y)
