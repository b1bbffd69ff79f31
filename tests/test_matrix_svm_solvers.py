"""AGD (Alg. 1) and its fast variant against CVXPY; batched = label by label; q = 1 = LIBLINEAR and
the foundation's binary SVM with regularized bias."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from mlsvm import MatrixSVM
from mlsvm.datasets import make_multilabel
from mlsvm.formulations import binary_svm as bsvm
from mlsvm.formulations import matrix_svm as ms
from mlsvm.kernels import make_kernel
from mlsvm.registry import matrix_svm as matrix_svm_registry
from mlsvm.solvers import matrix_svm_agd as agd
from mlsvm.solvers.matrix_svm_agd import solve_dual_agd, solve_label_by_label
from mlsvm.solvers.matrix_svm_ipm import MAX_WIDTH, interior_point_box
from mlsvm.verification.checks.matrix_svm import CHECK_TOL, correlation_matrix
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.report import relative_difference
from mlsvm.verification.tolerances import tolerance

SETTINGS = {  # solver name in the tolerance table -> AGD options
    "fast": dict(lipschitz="exact", restart=True, clip_extrapolation=False),
    "agd": dict(lipschitz="frobenius", restart=False, clip_extrapolation=True),
}


def _problem(kernel, loss, correlated, Y=None, seed=1, n=30, q=3):
    data = make_multilabel(n, 3, q, random_state=seed)
    Y = data.Y if Y is None else Y
    A = correlation_matrix(Y.shape[1]) if correlated else None
    return data, ms.MatrixSVMProblem(make_kernel(kernel, "scale", X=data.X)(data.X), Y, 1.0, A, loss)


def _grade(problem, result, solver):
    """Objective vs the CVXPY primal, relative gap and KKT, under the tolerance table."""
    tol = tolerance("matrix_svm", solver)
    reference = solve(ms.cvxpy_primal(problem)[0], "CLARABEL")
    alpha = result.dual["alpha"]
    primal = ms.primal_objective(problem, result.primal["coef"])
    dual = ms.dual_objective(problem, alpha)
    assert result.converged
    assert relative_difference(primal, reference) <= tol.objective
    assert (primal - dual) / max(1.0, abs(primal), abs(dual)) <= tol.gap
    assert max(ms.kkt_residuals(problem, alpha).values()) <= tol.kkt


@pytest.mark.parametrize("solver", sorted(SETTINGS))
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("loss", ms.LOSSES)
@pytest.mark.parametrize("correlated", [False, True])
def test_agd_reaches_the_cvxpy_optimum(solver, kernel, loss, correlated):
    _, problem = _problem(kernel, loss, correlated)
    result = solve_dual_agd(problem.gram_bar, problem.signed, problem.C, correlation=problem.correlation,
                            loss=loss, tol=CHECK_TOL, max_iter=200_000, **SETTINGS[solver])
    _grade(problem, result, solver)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("loss", ms.LOSSES)
@pytest.mark.parametrize("polish_every", [0, 10])
def test_split_bias_reaches_the_cvxpy_optimum(kernel, loss, polish_every):
    """The bias term ½(1ᵀB)² in the proximal step (the "fast" solver without A), with and without
    the active-set polish."""
    _, problem = _problem(kernel, loss, False, n=40)
    result = solve_dual_agd(problem.gram_bar, problem.signed, problem.C, loss=loss, split_bias=True,
                            polish_every=polish_every, tol=CHECK_TOL, max_iter=200_000)
    _grade(problem, result, "fast")


def test_split_bias_needs_identity_correlation():
    _, problem = _problem("rbf", "hinge", True)
    with pytest.raises(ValueError, match="split_bias"):
        solve_dual_agd(problem.gram_bar, problem.signed, 1.0, correlation=problem.correlation, split_bias=True)


STRUCTURES = ["plain", "label nobody has", "label everybody has", "all and none", "duplicates"]


def _awkward(data, structure):
    """Copies of (X, Y) with one of the awkward label structures of SPEC §3."""
    X, Y = data.X.copy(), data.Y.copy()
    if structure == "label nobody has":
        Y[:, 0] = 0
    elif structure == "label everybody has":
        Y[:, -1] = 1
    elif structure == "all and none":
        Y[0], Y[1] = 1, 0
    elif structure == "duplicates":
        X[1], Y[1] = X[0], Y[0]
    return X, Y


@settings(max_examples=10)
@given(seed=st.integers(0, 1000), q=st.integers(1, 3), structure=st.sampled_from(STRUCTURES))
def test_fast_agd_on_awkward_label_structures(seed, q, structure):
    X, Y = _awkward(make_multilabel(16, 2, q, random_state=seed), structure)
    problem = ms.MatrixSVMProblem(make_kernel("rbf", 0.7)(X), Y, 1.0)
    result = solve_dual_agd(problem.gram_bar, problem.signed, 1.0, tol=CHECK_TOL, max_iter=200_000)
    _grade(problem, result, "fast")


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("loss", ms.LOSSES)
def test_batched_equals_label_by_label(kernel, loss):
    """Per-label blocks make the batched run perform each label's own iterations: same α."""
    tol = tolerance("matrix_svm", "agd-label-by-label")
    _, problem = _problem(kernel, loss, False, q=4)
    batched = solve_dual_agd(problem.gram_bar, problem.signed, 1.0, loss=loss, tol=CHECK_TOL, max_iter=100_000)
    separate = solve_label_by_label(problem.gram_bar, problem.signed, 1.0, loss=loss, tol=CHECK_TOL, max_iter=100_000)
    assert np.max(np.abs(batched.dual["alpha"] - separate.dual["alpha"])) <= tol.objective * problem.C
    assert relative_difference(ms.primal_objective(problem, batched.primal["coef"]),
                               ms.primal_objective(problem, separate.primal["coef"])) <= tol.objective
    assert max(batched.history["relative_gap"][-1], separate.stop_value) <= tol.gap
    assert batched.n_iter == max(separate.history["n_iter_per_label"])


def test_single_label_equals_liblinear_and_the_binary_svm_with_regularized_bias():
    """q = 1: Matrix-SVM is the hinge SVM with ½b² in the objective (LinearSVC, intercept_scaling=1)."""
    data = make_multilabel(60, 4, 1, noise=0.15, random_state=5)
    problem = ms.MatrixSVMProblem(data.X @ data.X.T, data.Y, 1.0)
    result = solve_dual_agd(problem.gram_bar, problem.signed, 1.0, tol=CHECK_TOL, max_iter=200_000)
    ours = ms.primal_objective(problem, result.primal["coef"])
    y = problem.signed[:, 0]
    binary = bsvm.BinarySVMProblem(problem.gram, y, 1.0, "hinge", "regularized")
    assert relative_difference(ours, solve(bsvm.cvxpy_primal(binary)[0], "CLARABEL")) <= tolerance("matrix_svm", "fast").objective
    svc = LinearSVC(C=1.0, loss="hinge", intercept_scaling=1.0, tol=1e-10, max_iter=200_000).fit(data.X, y)
    w, b = svc.coef_.ravel(), svc.intercept_[0]
    liblinear = 0.5 * (w @ w + b * b) + np.maximum(0, 1 - y * (data.X @ w + b)).sum()
    assert relative_difference(ours, liblinear) <= tolerance("binary_svm", "liblinear").objective
    weights, bias = ms.linear_weights(data.X, result.primal["coef"])
    np.testing.assert_allclose(np.r_[weights.ravel(), bias], np.r_[w, b], atol=1e-3)  # w is unique; 1e-3 ≈ liblinear's precision


def test_restart_needs_fewer_iterations():
    _, problem = _problem("rbf", "hinge", False, n=60)
    runs = {restart: solve_dual_agd(problem.gram_bar, problem.signed, 1.0, restart=restart, tol=1e-8, max_iter=100_000)
            for restart in (True, False)}
    assert runs[True].n_iter < runs[False].n_iter


def test_max_iter_warns_with_the_gap_reached():
    _, problem = _problem("rbf", "hinge", False)
    with pytest.warns(ConvergenceWarning, match="relative duality gap"):
        result = solve_dual_agd(problem.gram_bar, problem.signed, 1.0, tol=1e-12, max_iter=3)
    assert not result.converged and result.n_iter == 3


# Three draws of the fuzz harness that ran the whole budget without progress: seven points with
# features at 1e-6 (K̄ ≈ 11ᵀ; the gap's round-off floor is about 1e-10) asked tol 1e-12 at C = 1e8;
# two points with features at 1e6 (curvature ~1e12 along K beside 1 along the bias); and three equal
# points at C = 1e300, where apg's start α = C/2 overflows the quadratic term and every gap is NaN
# (the comparisons of the progress test were then all false: 50,000 iterations, 20 s on 3 points)
NO_PROGRESS = {
    "round-off": (np.random.default_rng(0).standard_normal((7, 2)) * 1e-6,
                  np.random.default_rng(0).integers(0, 2, (7, 2)), dict(tol=1e-12, C=1e8)),
    "conditioning": (np.random.default_rng(1).standard_normal((2, 1)) * 1e6, np.array([1, 0]), {}),
    "overflow": (np.full((3, 1), 3.0), np.array([[1, 1], [0, 0], [1, 0]]), dict(C=1e300)),
}


@pytest.mark.parametrize("solver", ["apg", "agd"])
@pytest.mark.parametrize("case", sorted(NO_PROGRESS))
def test_a_doubling_without_progress_ends_the_run_as_stalled(case, solver):
    X, Y, params = NO_PROGRESS[case]
    model = MatrixSVM(solver=solver, kernel="linear", max_iter=5000, **params)
    with pytest.warns(ConvergenceWarning, match=r"stalled .* lowered by less than 0\.1% over iterations 501–1000"):
        model.fit(X, Y)
    assert not model.fit_report_.converged and model.fit_report_.n_iter == agd.PROGRESS_FROM


def test_fast_hands_a_low_rank_kernel_over_to_the_interior_point_above_max_width(monkeypatch):
    """The interior point took over from apg only when n + 1 ≤ MAX_WIDTH, though its systems have the
    width of K's rank. 1500 points, one feature at 1e6 beside four zero ones (found by a sweep of
    degenerate inputs): gamma="scale" sees that feature alone, K is of low rank, and the default fit
    ran apg for its 50,000 iterations (290 s) to a gap of 2.7e-8 short of tol; the interior point
    certifies it in 16 iterations. apg's stage is cut to 20 iterations here: the hand-over is tested."""
    monkeypatch.setattr(matrix_svm_registry, "APG_BEFORE_IPM", 20)
    rng = np.random.default_rng(0)
    X = np.c_[rng.standard_normal((MAX_WIDTH, 1)) * 1e6, np.zeros((MAX_WIDTH, 4))]
    model = MatrixSVM(max_iter=2000).fit(X, rng.integers(0, 2, (MAX_WIDTH, 4)))
    assert model.fit_report_.converged and "then ipm" in model.fit_report_.stop_rule
    full_rank = ms.MatrixSVMProblem(np.eye(MAX_WIDTH), np.ones((MAX_WIDTH, 1)), 1.0)   # K = I: rank n
    assert matrix_svm_registry._narrow_factor(full_rank) is None


def test_a_zero_kernel_above_the_dense_eigenvalue_size_has_lipschitz_constant_zero():
    """K = 0 (all-zero features under the poly kernel, coef0 = 0): Lanczos had no start vector and
    ARPACK's "error -9: Starting vector is zero" ended the fit (a sweep of degenerate inputs, 800
    points). Below 201 points the dense eigenvalue already gave 0."""
    assert agd.lambda_max(np.zeros((250, 250))) == 0.0
    assert agd.lambda_max(np.ones((250, 250)), minus_ones=True) == 0.0
    X, Y = np.zeros((250, 3)), np.random.default_rng(0).integers(0, 2, (250, 2))
    fast = MatrixSVM(kernel="poly").fit(X, Y).fit_report_
    assert fast.converged
    exact = MatrixSVM(kernel="poly", solver="cvxpy").fit(X, Y).fit_report_
    assert relative_difference(fast.primal_objective, exact.primal_objective) <= tolerance("matrix_svm", "fast").objective


def test_fast_whose_apg_stage_is_the_whole_budget_reports_its_stall():
    # "fast" on a kernel runs apg for 1000 iterations before the interior point; with max_iter = 1000
    # apg is the whole run, and its stall is what the warning says (not "increase max_iter")
    X, Y, params = NO_PROGRESS["round-off"]
    model = MatrixSVM(solver="fast", kernel="poly", degree=1, gamma=1.0, max_iter=1000, **params)
    with pytest.warns(ConvergenceWarning, match=r"'fast': apg\) stalled") as caught:
        model.fit(X, Y)
    assert not model.fit_report_.converged
    assert not any("Increase max_iter" in str(w.message) for w in caught)


def test_the_progress_test_fires_only_at_its_checkpoints_and_not_on_a_slow_creep():
    def gaps(per_doubling, t):   # a gap lowered by the factor per_doubling at every doubling of t
        return list(per_doubling ** np.log2(np.arange(1, t + 1)))
    for t in (agd.PROGRESS_FROM, 2 * agd.PROGRESS_FROM, 8 * agd.PROGRESS_FROM):
        assert agd._no_progress(gaps(1.0, t))                        # flat
        assert agd._no_progress(gaps(1.0 - agd.PROGRESS_MIN / 2, t))  # 0.05 % per doubling
        assert not agd._no_progress(gaps(0.976, t))                  # emotions' slowest doubling
        assert agd._no_progress([np.nan] * t)                         # overflowed objectives
        assert not agd._no_progress([np.nan] * (t // 2) + gaps(0.5, t // 2))  # finite only lately
    for t in (agd.PROGRESS_FROM - 1, 3 * agd.PROGRESS_FROM, 2 * agd.PROGRESS_FROM + 1):
        assert not agd._no_progress(gaps(1.0, t))                    # not a checkpoint


def test_warm_start_at_the_optimum_stops_at_once():
    _, problem = _problem("rbf", "hinge", False)
    first = solve_dual_agd(problem.gram_bar, problem.signed, 1.0, tol=CHECK_TOL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = solve_dual_agd(problem.gram_bar, problem.signed, 1.0, tol=1e-6, alpha0=first.dual["alpha"])
    assert again.n_iter == 1


@pytest.mark.parametrize("start", [0.0, 0.5])
@pytest.mark.parametrize("split_bias", [False, True])
def test_polishing_reaches_round_off_and_keeps_batched_equal_to_separate(split_bias, start):
    """Also from α = C/2 ("apg"'s start), which the label-by-label run slices per label."""
    _, problem = _problem("rbf", "hinge", False, n=60, q=4)
    options = dict(tol=1e-12, max_iter=100_000, polish_every=10, split_bias=split_bias,
                   alpha0=np.full(problem.signed.shape, start * problem.C))
    batched = solve_dual_agd(problem.gram_bar, problem.signed, 1.0, **options)
    separate = solve_label_by_label(problem.gram_bar, problem.signed, 1.0, **options)
    _grade(problem, batched, "fast")
    assert np.max(np.abs(batched.dual["alpha"] - separate.dual["alpha"])) <= tolerance("matrix_svm", "agd-label-by-label").objective


def test_a_stalled_gap_triggers_the_polish_and_it_reaches_the_cvxpy_optimum(monkeypatch):
    """Large C, smooth kernel: the gap stalls far above POLISH_BELOW, and the stall rule attempts
    the active-set steps anyway; they reach the CVXPY optimum at iteration 20, where without the
    rule the gradient phase runs 340 iterations before a polish is attempted."""
    data = make_multilabel(80, 5, 3, noise=0.1, random_state=1)
    problem = ms.MatrixSVMProblem(make_kernel("rbf", 0.1)(data.X), data.Y, 100.0)
    options = dict(tol=1e-8, max_iter=100_000, split_bias=True, polish_every=10,
                   alpha0=np.full(problem.signed.shape, 50.0))
    stalled = solve_dual_agd(problem.gram_bar, problem.signed, problem.C, **options)
    assert stalled.n_iter == 20 and stalled.history["relative_gap"][-2] > agd.POLISH_BELOW
    _grade(problem, stalled, "fast")
    monkeypatch.setattr(agd, "STALL_RATIO", 1e-300)      # the gap threshold alone
    assert solve_dual_agd(problem.gram_bar, problem.signed, problem.C, **options).n_iter > 100


@settings(max_examples=10)
@given(seed=st.integers(0, 1000), q=st.integers(1, 3), shift=st.sampled_from([0.0, 10.0]),
       C=st.sampled_from([0.1, 1.0, 10.0]), structure=st.sampled_from(STRUCTURES))
def test_interior_point_reaches_the_cvxpy_optimum(seed, q, shift, C, structure):
    """The interior point on the linear kernel's factor X, also shifted (the bias is regularized, so
    a shift changes the problem; the Newton systems are formed in centred coordinates)."""
    X, Y = _awkward(make_multilabel(20, 3, q, random_state=seed), structure)
    X += shift
    problem = ms.MatrixSVMProblem(X @ X.T, Y, C)
    _grade(problem, interior_point_box(X, problem.signed, C, tol=CHECK_TOL), "ipm")


def liblinear_single_label(X, signed):
    """LIBLINEAR on one ±1 label (C = 1, hinge, regularized bias): its ``(w, b)`` and objective."""
    y = signed[:, 0]
    svc = LinearSVC(C=1.0, loss="hinge", intercept_scaling=1.0, tol=1e-10, max_iter=200_000).fit(X, y)
    w, b = svc.coef_.ravel(), svc.intercept_[0]
    return w, b, 0.5 * (w @ w + b * b) + np.maximum(0, 1 - y * (X @ w + b)).sum()


def test_interior_point_single_label_equals_liblinear():
    data = make_multilabel(60, 4, 1, noise=0.15, random_state=5)
    problem = ms.MatrixSVMProblem(data.X @ data.X.T, data.Y, 1.0)
    result = interior_point_box(data.X, problem.signed, 1.0, tol=CHECK_TOL)
    w, b, liblinear = liblinear_single_label(data.X, problem.signed)
    assert relative_difference(ms.primal_objective(problem, result.primal["coef"]), liblinear) \
        <= tolerance("binary_svm", "liblinear").objective
    np.testing.assert_allclose(result.primal["W"].ravel(), np.r_[w, b], atol=1e-3)  # liblinear's precision


def test_interior_point_warns_and_refuses_too_wide_a_factor():
    data = make_multilabel(30, 3, 2, random_state=1)
    signed = 2.0 * data.Y - 1.0
    with pytest.warns(ConvergenceWarning, match=r"relative duality gap reached \d\.\d+e[-+]\d+, tolerance asked 1\.0e-12"):
        result = interior_point_box(data.X, signed, 1.0, tol=1e-12, max_iter=2)
    assert not result.converged and result.n_iter == 2
    with pytest.raises(ValueError, match="use mlsvm.solvers.matrix_svm_agd.solve_dual_agd"):
        interior_point_box(np.zeros((30, MAX_WIDTH)), signed, 1.0)


def test_interior_point_on_ill_conditioned_features_reaches_1e_6_and_warns_below():
    """Features around 100 with C = 10: the regularized bias direction has curvature ~1e4·n and the
    interior point reaches relative gaps of 1e-7–6e-7 (3 of 30 seeds stopped there at tol 1e-7);
    asked for 1e-12 it stops at the round-off stall (μ ≤ 1e-13·C), warns with the gap reached and
    returns its best iterate. Uncentred, the Newton system was indefinite here at once."""
    data = make_multilabel(20, 3, 2, random_state=0)
    X = data.X + 100.0
    problem = ms.MatrixSVMProblem(X @ X.T, data.Y, 10.0)
    _grade(problem, interior_point_box(X, problem.signed, 10.0, tol=1e-6), "ipm")
    with pytest.warns(ConvergenceWarning, match=r"stalled \(no further progress: round-off or conditioning\): relative duality gap reached \d\.\d+e-\d+; tolerance asked 1\.0e-12"):
        stalled = interior_point_box(X, problem.signed, 10.0, tol=1e-12)
    assert not stalled.converged and stalled.n_iter < 100 and stalled.stop_value <= 1e-6


def _wine_linear_problem():
    from mlsvm.verification.problems import multiclass_problems

    reference = next(r for r in multiclass_problems(False) if r.name.startswith("wine"))
    gram = make_kernel("linear")(reference.X)
    return ms.MatrixSVMProblem(gram, reference.Y, 1.0, None, "hinge", features=reference.X)


@pytest.fixture
def ipm_without_split(monkeypatch):
    """The interior point as it was before its Newton solves split off the rows of tiny D (every row
    eliminated through D⁻¹): it stalls on the problems below, which exercises the crossover."""
    from mlsvm.solvers import matrix_svm_ipm

    monkeypatch.setattr(matrix_svm_ipm, "SPLIT_AMPLIFICATION", np.inf)


def test_ipm_stalled_at_round_off_is_finished_by_the_active_set_crossover(ipm_without_split):
    """wine-150, linear, tol 1e-9 (a `verify --full` row): 150 points on a K̄ of rank 14 leave many α
    free; the interior point without its split stalls at a gap of 1.8e-9 with μ at 1e-14. The
    crossover's exact active-set solve certifies, and agrees with the CVXPY primal."""
    from mlsvm import registry

    problem = _wine_linear_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        name, result = registry.run(registry.model("matrix_svm"), problem, solver="ipm", tol=CHECK_TOL,
                                    max_iter=200)
    evaluation = ms.evaluate(problem, result.primal, result.dual)
    assert result.converged and "crossover" in result.stop_rule
    assert abs(evaluation.relative_gap) <= CHECK_TOL and evaluation.max_kkt <= CHECK_TOL
    cvx, _ = ms.cvxpy_primal(problem)
    assert relative_difference(evaluation.primal_objective, solve(cvx, "CLARABEL")) <= 1e-8


def test_a_crossover_that_does_not_certify_leaves_the_stall_warning(monkeypatch, ipm_without_split):
    from mlsvm import registry
    from mlsvm.registry import matrix_svm as table

    exact = table.polish_labels_factored
    monkeypatch.setattr(table, "polish_labels_factored",
                        lambda *args, **kwargs: np.clip(exact(*args, **kwargs) * 0.99, 0, None))
    problem = _wine_linear_problem()
    with pytest.warns(ConvergenceWarning, match="stalled"):
        _, result = registry.run(registry.model("matrix_svm"), problem, solver="ipm", tol=CHECK_TOL, max_iter=200)
    assert not result.converged and "crossover" not in result.stop_rule


def _emotions(rows):
    from mlsvm.datasets import load_emotions

    data = load_emotions()
    if rows == "duplicated":   # the first 300 rows and every third of them again
        return np.vstack([data.X[:300], data.X[:300:3]]), np.vstack([data.Y[:300], data.Y[:300:3]])
    return data.X, data.Y


def _certified_at_clarabels_optimum(X, Y, C, stop_rule):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = MatrixSVM(C=C, kernel="linear").fit(X, Y)
    report = model.fit_report_
    assert report.converged and stop_rule(report.stop_rule), report.stop_rule
    assert abs(report.relative_gap) <= model.tol and report.max_kkt <= model.tol
    problem = ms.MatrixSVMProblem(make_kernel("linear")(X), Y, C, None, "hinge", features=X)
    cvx, _ = ms.cvxpy_primal(problem)
    assert relative_difference(report.primal_objective, solve(cvx, "CLARABEL")) <= 1e-8


@pytest.mark.parametrize("rows, C", [("all", 1.0), ("all", 10.0), ("duplicated", 1.0)])
def test_the_crossover_through_the_features_certifies_emotions_raw_features(ipm_without_split, rows, C):
    """emotions (the bundled set, 593 × 72, columns up to 237 around means up to 155: cond X̄ ≈ 2e5)
    at the default tol 1e-8: the interior point without its split stalls (gap 2e-8 at C = 1, 3e-4
    at C = 10), and the active-set crossover on K̄_FF, whose factor squares that condition number,
    returned a point with a gap near 1. The crossover through the features certifies, at CVXPY's
    (Clarabel) primal optimum. "duplicated": copies of a point lie on the margin together (Z_F loses
    rank: the least-norm split of α_F)."""
    X, Y = _emotions(rows)
    _certified_at_clarabels_optimum(X, Y, C, lambda rule: "crossover" in rule)


@pytest.mark.parametrize("C", [1.0, 10.0, 100.0])
def test_the_interior_point_certifies_emotions_raw_features(C):
    """The same data: with the rows of tiny D split off its Newton solves, the interior point itself
    certifies (before: stalled at 2.2e-8, 3.5e-4 and 4.3e-3)."""
    X, Y = _emotions("all")
    _certified_at_clarabels_optimum(X, Y, C, lambda rule: "crossover" not in rule)


def test_newton_solves_keep_their_accuracy_when_d_spans_25_decades():
    """At an interior point's late iterate D is tiny on the free α (≤ r + 1 of them) and huge on the
    others. Eliminating every row through D⁻¹ (Woodbury) left a relative residual of 3e2 here; the
    rows of tiny D solved by their own Schur complement leave round-off."""
    from mlsvm.datasets import load_emotions
    from mlsvm.solvers.matrix_svm_ipm import _BatchedHinge

    data = load_emotions()
    signed = 2.0 * data.Y - 1.0
    rng = np.random.default_rng(0)
    d = np.full(signed.shape, 1e6)
    for k in range(signed.shape[1]):
        d[rng.choice(len(d), 40, replace=False), k] = 10.0 ** rng.uniform(-13, -8, 40)
    system = _BatchedHinge(data.X, signed, 10.0)
    system.factorize(d)
    rhs = rng.standard_normal(signed.shape)
    x, _ = system.solve(rhs)
    product = signed * (system.augmented @ (system.augmented.T @ (signed * x))) + d * x
    assert np.abs(product - rhs).max() <= 1e-7 * np.abs(rhs).max()
