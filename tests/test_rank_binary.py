"""Binary approach (E&W Problem 3): ground truth, dual, equivalences, solvers, estimator, bad input."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from mlsvm.datasets import make_multilabel
from mlsvm.estimators.rank_binary import BinaryApproachSVM
from mlsvm.formulations import binary_svm as bsvm
from mlsvm.formulations import rank_binary as rb
from mlsvm.kernels import make_kernel
from mlsvm.solvers.rank_binary_alternating import solve_binary_approach
from mlsvm.solvers.cvxpy_tools import solve, solve_first_optimal
from mlsvm.verification.problems import multilabel_problems
from mlsvm.verification.registry import run_check
from mlsvm.report import relative_difference
from mlsvm.verification.checks.rank_binary import checks
from mlsvm.verification.tolerances import BACKEND_AGREEMENT, tolerance

EXACT = tolerance("rank_binary", "cvxpy")


def cvxpy_point(problem, backends=("ECOS", "CLARABEL", "SCS")):
    """``(coef, b, alpha, lam)`` of the CVXPY primal (first backend to certify "optimal")."""
    (cvx, variables), _, _ = solve_first_optimal(lambda: rb.cvxpy_primal(problem), backends)
    primal, dual = rb.solution_from_cvxpy(problem, cvx, variables)
    return primal["coef"], primal["b"], dual["alpha"], dual["lam"]


def _problem(n=20, d=3, q=3, kernel="linear", C=1.0, seed=0):
    data = make_multilabel(n, d, q, random_state=seed)
    gram = make_kernel(kernel, "scale", X=data.X)(data.X)
    return data, rb.BinaryApproachProblem(gram, data.Y, C)


AWKWARD = ["none", "nobody", "everybody", "rows", "duplicate"]


def _awkward_problem(n, d, q, kernel, C, seed, awkward):
    """A small problem with an awkward label structure: a label nobody/everybody has, a row with
    every label and one with none, or a duplicated point (with its own labels)."""
    data = make_multilabel(n, d, q, random_state=seed)
    X, Y = data.X.copy(), data.Y.copy()
    if awkward == "nobody":
        Y[:, 0] = 0
    elif awkward == "everybody":
        Y[:, -1] = 1
    elif awkward == "rows":
        Y[0], Y[1] = 1, 0
    elif awkward == "duplicate":
        X[1] = X[0]
    return rb.BinaryApproachProblem(make_kernel(kernel, "scale", X=X)(X), Y, C)


@settings(max_examples=10)
@given(n=st.integers(6, 16), q=st.integers(1, 4), kernel=st.sampled_from(["linear", "rbf", "poly"]),
       C=st.sampled_from([0.1, 1.0, 5.0]), seed=st.integers(0, 1000),
       awkward=st.sampled_from(AWKWARD))
def test_primal_equals_dual_on_two_backends(n, q, kernel, C, seed, awkward):
    problem = _awkward_problem(n, 3, q, kernel, C, seed, awkward)
    # Interior-point backends end some of these small SOCPs "optimal_inaccurate" (measured on 30
    # random problems: Clarabel 3 primal + 2 dual, ECOS 0; hypothesis found an ECOS one too), and an
    # inaccurate status is never ground truth: take the first backend that certifies "optimal".
    _, primal, _ = solve_first_optimal(lambda: rb.cvxpy_primal(problem), ("ECOS", "CLARABEL", "SCS"))
    dual = -solve_first_optimal(lambda: rb.cvxpy_dual(problem), ("SCS", "CLARABEL", "ECOS"))[1]
    assert relative_difference(primal, dual) <= BACKEND_AGREEMENT


def test_cvxpy_point_is_optimal_and_dual_map_recovers_it():
    _, problem = _problem(kernel="rbf", q=4)
    coef, b, alpha, lam = cvxpy_point(problem, ("ECOS",))
    optimum = rb.primal_objective(problem, coef, b)
    assert relative_difference(optimum, rb.dual_objective(problem, np.clip(alpha, 0, problem.box))) <= EXACT.gap
    assert max(rb.kkt_residuals(problem, coef, b, alpha, lam).values()) <= EXACT.kkt
    # λ on the simplex and every label with λ_k > 0 attains the max norm (module docstring)
    assert abs(lam.sum() - 1) <= 1e-6
    norms = rb.label_norms(problem.gram, coef)
    assert np.all(np.abs(norms[lam > 1e-4] - norms.max()) <= 1e-5 * norms.max())
    mapped_coef, mapped_b, mapped_lam = rb.coef_from_dual(problem, np.clip(alpha, 0, problem.box))
    assert relative_difference(rb.primal_objective(problem, mapped_coef, mapped_b), optimum) <= EXACT.objective
    assert np.allclose(mapped_lam, lam, atol=1e-5)


def test_q1_is_binary_svm_with_half_C():
    """Q = 1: max_k ‖w_k‖² + C Σ ξ = 2 (½‖w‖² + (C/2) Σ ξ); LIBSVM and the foundation's CVXPY agree."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 3))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(30) > 0, 1.0, -1.0)
    gram = make_kernel("rbf", 0.5)(X)
    C = 3.0
    problem = rb.BinaryApproachProblem(gram, (y[:, None] > 0).astype(np.int8), C)
    optimum = solve(rb.cvxpy_primal(problem)[0], "ECOS")
    svm = bsvm.BinarySVMProblem(gram, y, C / 2)
    assert relative_difference(optimum, 2 * solve(bsvm.cvxpy_primal(svm)[0])) <= EXACT.objective
    model = SVC(C=C / 2, kernel="precomputed", tol=1e-12, shrinking=False).fit(gram, y)
    alpha = np.zeros(30)
    alpha[model.support_] = np.abs(model.dual_coef_.ravel())
    libsvm = 2 * bsvm.primal_objective(svm, y * alpha, float(model.intercept_[0]))
    assert relative_difference(optimum, libsvm) <= tolerance("binary_svm", "libsvm").objective
    # the estimator's decision function is the SVM's, up to the factor of the objective (none on f)
    est = BinaryApproachSVM(C=C, kernel="rbf", gamma=0.5).fit(X, (y[:, None] > 0).astype(int))
    assert np.allclose(est.decision_function(X).ravel(), model.decision_function(gram), atol=1e-4)


def test_identical_labels_and_trivial_labels_reduce_to_one_svm():
    """Q equal columns: Q·(C/Q)Σξ = CΣξ → C_svm = C/2. One real label among Q (the others all one
    sign, w_k = 0 optimal): (C/Q)Σξ → C_svm = C/(2Q). Both optima are twice the SVM's. Problem 3 is
    solved on another backend than the SVM (Clarabel): ECOS, or SCS where ECOS ends inaccurate (it did
    under OpenBLAS's Prescott kernels)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((25, 2))
    y = np.where(X[:, 1] + 0.4 * rng.standard_normal(25) > 0, 1.0, -1.0)
    gram = make_kernel("linear")(X)
    column = (y > 0).astype(np.int8)
    C, q = 2.0, 3
    same = rb.BinaryApproachProblem(gram, np.repeat(column[:, None], q, axis=1), C)
    svm_value = solve(bsvm.cvxpy_primal(bsvm.BinarySVMProblem(gram, y, C / 2))[0])
    assert relative_difference(solve(rb.cvxpy_primal(same)[0], ("ECOS", "SCS")), 2 * svm_value) <= EXACT.objective
    trivial = np.column_stack([column, np.ones(25, dtype=np.int8), np.zeros(25, dtype=np.int8)])
    one_real = rb.BinaryApproachProblem(gram, trivial, C)
    svm_value = solve(bsvm.cvxpy_primal(bsvm.BinarySVMProblem(gram, y, C / (2 * q)))[0])
    assert relative_difference(solve(rb.cvxpy_primal(one_real)[0], ("ECOS", "SCS")), 2 * svm_value) <= EXACT.objective


@pytest.mark.parametrize("n", [1, 3])
def test_all_zero_features_cvxpy_agrees_with_fast(n):
    """K = 0 (every feature zero; found by the fuzz harness under HYPOTHESIS_PROFILE=explore): the
    CVXPY route's factor is gram_factor's zero column and mapping its weights back solved a
    singular system (a raw LinAlgError). Now w = 0 there, the optimum is the biases' alone, and
    both routes certify the same value."""
    from mlsvm.estimators.rank_binary import CategoricalRegressionSVM

    X = np.zeros((n, 2))
    cases = [(BinaryApproachSVM, np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]])[:n])]
    if n > 1:
        cases.append((CategoricalRegressionSVM, np.arange(n)))
    for estimator, Y in cases:
        reports = [estimator(solver=solver, kernel="linear").fit(X, Y).fit_report_ for solver in ("cvxpy", "fast")]
        for report in reports:
            assert report.converged and abs(report.relative_gap) <= 1e-6 and report.max_kkt <= 1e-6
        assert relative_difference(reports[0].primal_objective, reports[1].primal_objective) <= EXACT.objective


def test_fast_whose_cvxpy_fallback_finds_nothing_warns_with_the_waterfilling_point(monkeypatch):
    """Found by the fuzz harness (HYPOTHESIS_PROFILE=explore, 500 draws): a poly kernel of degree 40
    on features of 1e-6 (K ≈ 1e-240) that water-filling does not certify and no CVXPY backend
    answers 'optimal'; the fallback's GroundTruthError escaped from solver='fast'. Now the
    water-filling point is reported, converged=False, with a ConvergenceWarning quoting both. The
    backends' failure is planted here (water-filling stopped by max_iter=1)."""
    import mlsvm.registry.rank_binary as registry
    from mlsvm.solvers.cvxpy_tools import GroundTruthError

    def no_answer(*args, **kwargs):
        raise GroundTruthError("no CVXPY backend answered 'optimal' (planted)")

    monkeypatch.setattr(registry, "_cvxpy", no_answer)
    data = make_multilabel(30, 4, 4, random_state=0)
    with pytest.warns(ConvergenceWarning, match="water-filling stopped at .* after 1 iterations.*planted"):
        model = BinaryApproachSVM(kernel="rbf", max_iter=1).fit(data.X, data.Y)
    assert not model.fit_report_.converged and model.fit_report_.solver == "waterfill-cvxpy"
    assert model.decision_function(data.X).shape == data.Y.shape


def test_poly_kernel_of_high_degree_does_not_overflow_water_filling():
    """Found by the fuzz harness: K = (1000·x·x')⁴⁰ ≈ 1.5e158 on two equal points; water-filling's
    test for labels with w = 0 squared c0 (≈ K's diagonal) and raised OverflowError."""
    X, Y = np.array([[3.0], [3.0]]), np.array([[0], [1]])
    report = BinaryApproachSVM(kernel="poly", degree=40, gamma=1000.0, coef0=0.0).fit(X, Y).fit_report_
    assert report.converged and abs(report.relative_gap) <= 1e-7 and report.max_kkt <= 1e-7


def test_optimal_bias_against_brute_force():
    rng = np.random.default_rng(2)
    for _ in range(20):
        scores = rng.standard_normal(9)
        y = rng.choice([-1.0, 1.0], 9)
        b = rb.optimal_bias(scores, y)
        grid = np.linspace(-5, 5, 20001)
        losses = np.maximum(0, 1 - y[None] * (scores[None] + grid[:, None])).sum(axis=1)
        value = np.maximum(0, 1 - y * (scores + b)).sum()
        assert value <= losses.min() + 1e-9


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_alternating_solver_matches_cvxpy(kernel):
    problem = rb.BinaryApproachProblem(
        make_kernel(kernel, "scale", X=multilabel_problems()[0].X)(multilabel_problems()[0].X),
        multilabel_problems()[0].Y, 1.0)
    truth = solve(rb.cvxpy_primal(problem)[0], "ECOS")
    result = solve_binary_approach(problem, tol=1e-7)
    assert result.converged and result.stop_value <= 1e-7
    value = rb.primal_objective(problem, result.primal["coef"], result.primal["b"])
    assert relative_difference(value, truth) <= tolerance("rank_binary", "alternating").objective
    dual = rb.dual_objective(problem, result.dual["alpha"])
    assert dual <= truth * (1 + 1e-9) and truth <= value * (1 + 1e-9)  # weak duality brackets it
    # secant λ-steps make the dual non-monotone; the returned iterate is the last (best) one
    assert result.stop_value == min(result.history["relative_gap"]) == result.history["relative_gap"][-1]


def test_alternating_solver_warns_with_the_gap_at_max_iter():
    """Stopped before its gap reaches tol, the solver must say so (with the gap), never silently."""
    awkward = multilabel_problems()[-1]
    problem = rb.BinaryApproachProblem(make_kernel("linear")(awkward.X), awkward.Y, 1.0)
    with pytest.warns(ConvergenceWarning, match="relative duality gap reached"):
        result = solve_binary_approach(problem, max_iter=3)
    assert not result.converged


def _certified_bracket(problem, result):
    """The alternating solver's certificate, recomputed: α dual-feasible, D ≤ P, stop value exact."""
    alpha, Ys = result.dual["alpha"], problem.signed
    assert alpha.min() >= 0 and alpha.max() <= problem.box
    assert np.abs((Ys * alpha).sum(axis=0)).max() <= 1e-9 * max(1.0, problem.box * Ys.shape[0])
    primal = rb.primal_objective(problem, result.primal["coef"], result.primal["b"])
    dual = rb.dual_objective(problem, alpha)
    assert result.stop_value == pytest.approx((primal - dual) / max(1.0, abs(primal), abs(dual)), rel=1e-12)
    return primal, dual


def _exact_against_cvxpy(problem, result):
    """The alternating solver's point, graded by the formulation, meets the EXACT row against CVXPY
    (ECOS/Clarabel/SCS)."""
    truth = solve_first_optimal(lambda: rb.cvxpy_primal(problem), ("ECOS", "CLARABEL", "SCS"))[1]
    report = rb.evaluate(problem, result.primal, result.dual)
    row = tolerance("rank_binary", "alternating")
    assert relative_difference(report.primal_objective, truth) <= row.objective
    assert report.max_kkt <= row.kkt and abs(report.relative_gap) <= row.gap
    return truth


def test_alternating_solver_is_exact_on_awkward_labels_with_lambda_zero():
    """awkward-labels/linear: CVXPY has λ_k ≈ 0 for two labels (one with ‖w_k‖² < t); the
    solver switches them to their hinge LP and meets the EXACT row here (it used to stall at 0.17).
    (Not exact in general — see the module — hence no verify row and not an estimator solver.)"""
    awkward = multilabel_problems()[-1]
    problem = rb.BinaryApproachProblem(make_kernel("linear")(awkward.X), awkward.Y, 1.0)
    _, _, _, lam = cvxpy_point(problem, ("ECOS",))
    assert np.sum(lam <= 1e-6 * lam.max()) == 2                      # the λ_k = 0 case is present
    result = solve_binary_approach(problem, tol=1e-7)
    assert result.converged and result.stop_value <= 1e-7
    assert np.array_equal(result.dual["lam"] == 0, lam <= 1e-6 * lam.max())
    _exact_against_cvxpy(problem, result)
    _certified_bracket(problem, result)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), q=st.integers(1, 4), C=st.floats(0.1, 10.0),
       awkward=st.sampled_from(AWKWARD))
def test_alternating_solver_certificate_brackets_cvxpy(seed, q, C, awkward):
    """On small problems with awkward label structures the returned (P, D) bracket CVXPY's optimum,
    even when stopped early (10 iterations)."""
    problem = _awkward_problem(10, 2, q, "linear", C, seed, awkward)
    truth = solve_first_optimal(lambda: rb.cvxpy_primal(problem), ("ECOS", "CLARABEL", "SCS"))[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = solve_binary_approach(problem, max_iter=10)
    primal, dual = _certified_bracket(problem, result)
    assert dual <= truth + 1e-8 * max(1.0, truth) and truth <= primal + 1e-8 * max(1.0, truth)


def test_estimator_does_not_accept_the_experimental_solver():
    data = make_multilabel(10, 2, 2, random_state=0)
    with pytest.raises(ValueError, match="solver must be one of"):
        BinaryApproachSVM(solver="alternating").fit(data.X, data.Y)


def test_verify_rows_for_cvxpy_pass():
    for check in checks(quick=True):
        if check.solver in ("cvxpy", "fast", "cvxpy-crosscheck", "binary-svm"):
            result = run_check(check)
            assert result.passed, (check.problem, check.solver, result.detail)


def test_estimator_multiclass_and_report():
    from mlsvm.datasets import make_multiclass
    X, y = make_multiclass(30, 3, 3, random_state=0)
    est = BinaryApproachSVM(C=1.0).fit(X, y)
    assert set(est.predict(X)) <= set(y)
    report = est.fit_report_
    assert abs(report.relative_gap) <= EXACT.gap and report.max_kkt <= EXACT.kkt
    assert est.decision_function(X).shape == (30, 3)


@pytest.mark.parametrize("kwargs, match", [
    ({"C": 0.0}, "C must lie"), ({"C": -1.0}, "C must lie"), ({"solver": "sgd"}, "solver must be"),
    ({"decoding": "l2"}, "decoding must be"), ({"codes": [[1, 0]]}, "codes must be"),
    ({"codes": [[2, 0, 1]]}, "codes must contain only 0 and 1"), ({"kernel": "cosine"}, "kernel must be"),
    ({"tol": 0.0}, "tol must lie"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    data = make_multilabel(12, 2, 3, random_state=0)
    with pytest.raises(ValueError, match=match):
        BinaryApproachSVM(**kwargs).fit(data.X, data.Y)


def test_bad_problem_C():
    with pytest.raises(ValueError, match="C must be"):
        rb.BinaryApproachProblem(np.eye(3), np.zeros((3, 1)), float("inf"))


def test_real_data_emotions_subset(datasets_dir):
    from mlsvm.datasets import load_emotions
    from mlsvm.metrics import hamming_loss
    data = load_emotions()
    X = (data.X - data.X.mean(0)) / np.where(data.X.std(0) > 0, data.X.std(0), 1)
    train, test = slice(0, 120), slice(400, 593)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = BinaryApproachSVM(C=1.0, kernel="rbf").fit(X[train], data.Y[train])
    report = est.fit_report_
    # ECOS's own point leaves a w-stationarity residual of 1.005e-6 (gap 4e-10); the stationary
    # point of its multipliers certifies (measured gap 8.8e-9, KKT 9.5e-9; docs/rank_binary.md)
    assert report.converged
    assert abs(report.relative_gap) <= EXACT.gap and report.max_kkt <= EXACT.kkt
    loss = hamming_loss(data.Y[test], est.predict(X[test]))
    assert loss < np.mean(data.Y[test])   # better than predicting no label at all


def test_estimators_are_sklearn_clonable_and_solvers_agree():
    from sklearn.base import clone
    from mlsvm.estimators.rank_binary import CategoricalRegressionSVM
    for estimator in (BinaryApproachSVM(C=2.0, codes=[[1, 0]]), CategoricalRegressionSVM(C=3.0)):
        assert clone(estimator).get_params() == estimator.get_params()
    data = make_multilabel(20, 3, 3, random_state=5)
    values = [BinaryApproachSVM(solver=s).fit(data.X, data.Y).fit_report_.primal_objective
              for s in ("fast", "cvxpy")]
    assert max(relative_difference(values[0], v) for v in values) <= EXACT.objective


@pytest.mark.parametrize("model", ["BinaryApproachSVM", "CategoricalRegressionSVM"])
def test_cvxpy_on_features_with_dependent_columns(model):
    """With the linear kernel CVXPY's factor is the features, and a feature zero on every point or
    a repeated one made ``LᵀL`` singular: the coefficients' solve broke down (the estimator's
    breakdown ValueError). Found by a sweep of degenerate inputs, where the default route met it
    after handing over to CVXPY (one feature at 1e6 beside four that are zero)."""
    import mlsvm

    cls = getattr(mlsvm, model)
    data = make_multilabel(20, 3, 3, random_state=0)
    y = data.Y if model == "BinaryApproachSVM" else data.Y.argmax(axis=1)
    fit = lambda solver, X: cls(solver=solver, kernel="linear").fit(X, y)  # noqa: E731
    zero_feature = fit("cvxpy", np.c_[data.X, np.zeros(20)])   # the same problem as without it
    assert zero_feature.fit_report_.converged
    assert relative_difference(zero_feature.fit_report_.primal_objective,
                               fit("cvxpy", data.X).fit_report_.primal_objective) <= EXACT.objective
    repeated = np.c_[data.X, data.X[:, :1]]                        # another problem: water-filling's
    assert fit("cvxpy", repeated).fit_report_.converged
    assert relative_difference(fit("cvxpy", repeated).fit_report_.primal_objective,
                               fit("waterfill", repeated).fit_report_.primal_objective) <= EXACT.objective


def test_coefficients_from_a_factor_of_dependent_columns_are_least_norm():
    rng = np.random.default_rng(0)
    L = rng.standard_normal((8, 3))
    L = np.c_[L, np.zeros(8), L[:, :1]]                            # rank 3 of 5 columns
    V = L.T @ rng.standard_normal((8, 2))                          # weights in the range of Lᵀ
    A = rb.coefficients_from_factor(L, V)
    np.testing.assert_allclose(L.T @ A, V, atol=1e-12)             # K A = L V
    np.testing.assert_allclose(A, L @ np.linalg.lstsq(L, A, rcond=None)[0], atol=1e-12)   # A in the range of L


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), q=st.integers(1, 4), C=st.floats(0.01, 10.0),
       kernel=st.sampled_from(["linear", "rbf"]))
def test_weak_duality_and_dual_map_feasibility(seed, q, C, kernel):
    """For any feasible α and any (w, b): dual(α) ≤ primal(w, b); the dual map gives λ on the simplex
    and, for labels with λ_k > 0, ‖w_k‖ = Σ‖u_l‖/2 (no solver involved)."""
    rng = np.random.default_rng(seed)
    data = make_multilabel(12, 2, q, random_state=seed)
    problem = rb.BinaryApproachProblem(make_kernel(kernel, "scale", X=data.X)(data.X), data.Y, C)
    Ys = problem.signed
    alpha = np.zeros(Ys.shape)
    for k in range(q):   # feasible by construction: equal mass on both signs, inside the box
        pos, neg = Ys[:, k] > 0, Ys[:, k] < 0
        if pos.any() and neg.any():
            mass = rng.uniform(0, 1) * problem.box * min(pos.sum(), neg.sum())
            alpha[pos, k], alpha[neg, k] = mass / pos.sum(), mass / neg.sum()
    assert np.all(np.abs((Ys * alpha).sum(axis=0)) <= 1e-12) and alpha.max() <= problem.box * (1 + 1e-12)
    dual = rb.dual_objective(problem, alpha)
    coef, b = rng.standard_normal(Ys.shape) * 0.3, rng.standard_normal(q)
    assert dual <= rb.primal_objective(problem, coef, b) + 1e-12
    mapped, mapped_b, lam = rb.coef_from_dual(problem, alpha)
    assert dual <= rb.primal_objective(problem, mapped, mapped_b) + 1e-9
    assert abs(lam.sum() - 1) <= 1e-12 and lam.min() >= 0
    u_norms = np.sqrt(rb.label_norms(problem.gram, Ys * alpha))
    norms = np.sqrt(rb.label_norms(problem.gram, mapped))
    assert np.allclose(norms[lam > 0], u_norms.sum() / 2, rtol=1e-8) or u_norms.sum() == 0


def test_stationary_primal_of_the_multipliers_certifies():
    """ECOS's multipliers are accurate to ~sqrt of its gap (w-stationarity 3e-7 at gap 1e-12 here);
    the point stationarity assigns to them is exactly stationary in w and certifies at 1e-7, at
    the CVXPY optimum (the "cvxpy" solver returns whichever of the two certifies better)."""
    reference = multilabel_problems()[0]
    problem = rb.BinaryApproachProblem(make_kernel("rbf", "scale", X=reference.X)(reference.X), reference.Y, 1.0)
    coef, b, alpha, lam = cvxpy_point(problem, ("ECOS",))
    truth = -solve_first_optimal(lambda: rb.cvxpy_dual(problem), ("CLARABEL", "ECOS", "SCS"))[1]
    point = rb.stationary_primal(problem, coef, alpha, lam)
    polished = rb.evaluate(problem, point, {"alpha": alpha, "lam": lam})
    assert polished.kkt["dual"] <= 1e-10
    assert polished.max_kkt <= 1e-7 and 0 <= polished.relative_gap <= 1e-7
    assert relative_difference(polished.primal_objective, truth) <= EXACT.objective
    report = BinaryApproachSVM(C=1.0, kernel="precomputed", solver="cvxpy").fit(problem.gram, problem.Y).fit_report_
    assert report.converged and report.max_kkt <= 1e-7
