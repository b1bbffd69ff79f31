"""Exact water-filling solver for the binary approach (E&W Problem 3) and categorical regression (§5):
against CVXPY on two backends, hostile inputs, max_iter, a planted wrong answer."""

import warnings
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from mlsvm.datasets import make_multilabel
from mlsvm.estimators.rank_binary import CategoricalRegressionSVM, categorical_codes
from mlsvm.formulations import rank_binary as rb
from mlsvm.kernels import make_kernel
from mlsvm.solvers import rank_binary_waterfill as waterfill
from mlsvm.solvers.result import relative_gap
from mlsvm.solvers.cvxpy_tools import GroundTruthError, solve_checked, solve_first_optimal
from mlsvm.formulations.evaluation import relative_difference
from mlsvm.verification.tolerances import BACKEND_AGREEMENT, tolerance

EXACT = tolerance("rank_binary", "fast")
TOL = 1e-7


def _labels(Y, structure, seed):
    """An awkward label structure, or the categorical-regression codes (7) of a class vector."""
    Y = Y.copy()
    if structure == "nobody":
        Y[:, 0] = 0
    elif structure == "everybody":
        Y[:, -1] = 1
    elif structure == "rows":
        Y[0], Y[1] = 1, 0
    elif structure == "categorical":
        classes = np.random.default_rng(seed).integers(0, Y.shape[1] + 1, size=Y.shape[0])
        Y = categorical_codes(Y.shape[1] + 1)[classes]
    return Y


def _problem(n, q, kernel, C, seed, structure, d=3):
    data = make_multilabel(n, d, q, random_state=seed)
    X = data.X.copy()
    if structure == "duplicate":
        X[1] = X[0]
    return rb.BinaryApproachProblem(make_kernel(kernel, "scale", X=X)(X), _labels(data.Y, structure, seed), C)


def _certificate(problem, result):
    """Relative gap and KKT residuals recomputed by the formulation (the solver never grades itself)."""
    coef, b = result.primal["coef"], result.primal["b"]
    alpha, lam = result.dual["alpha"], result.dual["lam"]
    primal, dual = rb.primal_objective(problem, coef, b), rb.dual_objective(problem, alpha)
    kkt = rb.kkt_residuals(problem, coef, b, alpha, lam)
    return primal, relative_gap(primal, dual), max(kkt.values())


def _ground_truth(problem):
    """The optimum from two CVXPY backends that agree (SPEC §3): the primal (ECOS first) against the
    dual (Clarabel first); when no backend answers one of them "optimal", or the two disagree, the
    first pair of backends that agree on the primal or on the dual (:func:`solve_checked`). Explore
    draws met both: every backend ending the primal "optimal_inaccurate" (n = 40, q = 1, C = 0.1,
    categorical codes, three copies of a point), and SCS answering the dual first, 6.2e-6 from every
    other backend's value."""
    try:
        _, primal, _ = solve_first_optimal(lambda: rb.cvxpy_primal(problem), ("ECOS", "CLARABEL", "SCS"))
        _, dual, _ = solve_first_optimal(lambda: rb.cvxpy_dual(problem), ("CLARABEL", "SCS", "ECOS"))
        if relative_difference(primal, -dual) <= BACKEND_AGREEMENT:   # cvxpy_dual minimises the negated dual
            return primal
    except GroundTruthError:
        pass
    failures = []
    for build, sign in ((rb.cvxpy_primal, 1.0), (rb.cvxpy_dual, -1.0)):
        for pair in combinations(("ECOS", "CLARABEL", "SCS"), 2):
            try:
                agreement = solve_checked(lambda: build(problem)[0], pair, rtol=BACKEND_AGREEMENT)
            except GroundTruthError as error:
                failures.append(str(error))
                continue
            return sign * agreement.values[pair[0]]
    raise GroundTruthError("no two CVXPY backends agree on the optimum: " + " | ".join(failures))


def _honest(problem, result, tol):
    """converged=True only with the formulation's gap and KKT ≤ tol; otherwise the stop value reached
    is above tol (the warning is checked by the callers)."""
    objective, gap, kkt = _certificate(problem, result)
    if result.converged:
        assert gap <= tol and kkt <= tol
    else:
        assert max(gap, kkt) > tol and result.stop_value > tol
    return objective


@settings(max_examples=20)
@given(n=st.integers(6, 16), q=st.integers(1, 4), kernel=st.sampled_from(["linear", "rbf"]),
       C=st.sampled_from([0.1, 1.0, 5.0]), seed=st.integers(0, 1000),
       structure=st.sampled_from(["none", "nobody", "everybody", "rows", "duplicate", "categorical"]))
def test_matches_cvxpy_on_two_backends(n, q, kernel, C, seed, structure):
    problem = _problem(n, q, kernel, C, seed, structure)
    truth = _ground_truth(problem)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)   # a warning fails the test
        result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL)
    objective, gap, kkt = _certificate(problem, result)
    assert result.converged and gap <= TOL and kkt <= TOL
    assert relative_difference(objective, truth) <= EXACT.objective
    assert set(result.history) == {"primal", "dual", "stop_value"}
    assert result.stop_value == result.history["stop_value"][-1] <= TOL


def test_categorical_regression_and_lambda_zero_labels():
    """Categorical codes (a trivial first column) and labels whose optimal λ_k is 0 (r_k < t)."""
    problem = _problem(40, 4, "linear", 100.0, 2, "none", d=5)
    truth = _ground_truth(problem)
    result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL)
    assert result.converged and np.sum(result.dual["lam"] == 0) == 2
    assert relative_difference(_honest(problem, result, TOL), truth) <= EXACT.objective
    problem = _problem(30, 4, "rbf", 1.0, 5, "categorical")
    result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL)
    assert result.converged and result.dual["lam"][0] == 0 and not result.primal["coef"][:, 0].any()
    assert relative_difference(_honest(problem, result, TOL), _ground_truth(problem)) <= EXACT.objective


HOSTILE = make_multilabel(n_samples=40, n_features=5, n_labels=4, random_state=0)


@pytest.mark.parametrize("scale, C, categorical", [(1e6, 1.0, False), (1.0, 1e8, False), (1.0, 1e8, True)])
def test_hostile_inputs_end_with_an_honest_certificate(scale, C, categorical):
    """X·1e6 and C = 1e8 (the CVXPY path claimed convergence there at gap 2.7e-5 / KKT 1.3e-1): the
    result is converged with the formulation's gap and KKT ≤ tol, or warns and says it is not."""
    X = HOSTILE.X * scale
    Y = categorical_codes(5)[HOSTILE.Y.sum(axis=1)] if categorical else HOSTILE.Y
    problem = rb.BinaryApproachProblem(make_kernel("linear")(X), Y, C)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL)
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    assert warned == (not result.converged)
    _honest(problem, result, TOL)


def test_a_path_in_round_off_ends_the_walk_not_after_its_step_budget(monkeypatch):
    """Fuzz seed 2781: a poly kernel of degree 40 on 9 points with features at 1e6 (categorical
    codes). At C_k ≈ 4e14 every interval of the exact path had width 0, and each walk took its
    5000 steps of 1e-7 relative: 200 s for one outer iteration. More than n narrow steps in a row
    now end the walk (a tie of exact breakpoints involves at most the n points), and the solve
    reports the same point and the same honest non-certificate."""
    rng = np.random.default_rng(823)
    X = rng.integers(-3, 4, (9, 3)).astype(float) * 1e6
    X[:, 0] = 3.0
    y = np.random.default_rng(13676).integers(0, 3, 9)
    states = []
    set_state = waterfill._Label._set
    monkeypatch.setattr(waterfill._Label, "_set", lambda self, *args, **kwargs: (
        states.append(args[0]), set_state(self, *args, **kwargs))[1])
    model = CategoricalRegressionSVM(solver="waterfill", kernel="poly", degree=40)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        model.fit(X, y)
    assert len(states) < 500   # 7773 states in the first outer iteration alone before the rule
    report = model.fit_report_
    assert not report.converged and max(abs(report.relative_gap), report.max_kkt) > model.tol


def test_max_iter_one_warns_with_the_value_reached():
    problem = _problem(30, 4, "rbf", 1.0, 1, "none")
    with pytest.warns(ConvergenceWarning, match="max_iter = 1 outer iterations reached"):
        result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL, max_iter=1)
    assert not result.converged and result.n_iter == 1
    _honest(problem, result, TOL)


def test_planted_wrong_answer_is_rejected(monkeypatch):
    """A label solve that returns wrong coefficients is caught by the formulation's certificate: no
    convergence claimed, a warning instead. (The refinement at the outer root would correct them
    from the margins, so its answer is planted wrong too. The biases are not the label solves'
    any more: the certificate takes each from w_k, the midpoint of its optimal segment.)"""
    exact, refined = waterfill._Label.coefficients, waterfill._Label.refined

    def wrong(self, c):
        coef, bias, fraction = exact(self, c)
        return 1.05 * coef, bias, fraction

    def wrong_refined(self, c, signed=None, bias=None):
        point = refined(self, c, signed, bias)
        return None if point is None else (1.05 * point[0], point[1], point[2])

    monkeypatch.setattr(waterfill._Label, "coefficients", wrong)
    monkeypatch.setattr(waterfill._Label, "refined", wrong_refined)
    problem = _problem(30, 3, "rbf", 1.0, 3, "none")
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL, max_iter=20)
    assert not result.converged
    _honest(problem, result, TOL)


def test_a_label_whose_first_solve_fails_is_a_warning_not_a_crash(monkeypatch):
    """Issue 14 (found by benchmarks/bench_defaults.py on yeast, linear kernel): when the active-set
    solve failed from LIBSVM's starts before any state was solved, the path-following fallback read
    the requested C_k as the last solved one and returned with no path (AttributeError later). It
    must be an inner failure: a ConvergenceWarning and an honestly graded point."""
    monkeypatch.setattr(waterfill._Label, "_try", lambda self, *args, **kwargs: False)
    problem = _problem(30, 3, "linear", 1.0, 2, "none")
    with pytest.warns(ConvergenceWarning, match="active-set solve of a label SVM failed"):
        result = waterfill.solve_rank_binary_waterfill(problem, tol=TOL, max_iter=20)
    assert not result.converged
    _honest(problem, result, TOL)


def test_trivial_labels_only_and_bad_arguments():
    Y = np.ones((8, 2), dtype=int)
    problem = rb.BinaryApproachProblem(make_kernel("linear")(np.arange(16.0).reshape(8, 2)), Y, 1.0)
    result = waterfill.solve_rank_binary_waterfill(problem)
    assert result.converged and result.stop_value == 0.0
    with pytest.raises(ValueError, match="tol"):
        waterfill.solve_rank_binary_waterfill(problem, tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        waterfill.solve_rank_binary_waterfill(problem, max_iter=0)


def test_a_label_flat_in_its_bias_gets_the_midpoint_of_the_optimal_segment():
    """An explore draw (seed 2540): label 0 has four positives and four negatives, all with ξ > 0 at the
    optimum (α = C/Q on every one), so its hinge loss is flat in b over [−0.675, 0.585]. The KKT bias
    of the final active set was the end that round-off made free: 0.585 from dense input, −0.675 from
    sparse input under another BLAS. The bias returned is the segment's midpoint, whatever the end."""
    from mlsvm import BinaryApproachSVM

    X = np.array([[0.0, -2.55566503, 0.74740799], [0.0, -0.45264929, 0.19381565], [0.0, 1.11163321, 0.0],
                  [0.0, 0.0, 0.0], [0.0, -0.92589957, 0.0], [0.0, 0.0, 0.58405831], [0.0, 0.0, 0.58253842],
                  [0.0, -0.21482891, -0.50522874]])
    Y = np.array([[1, 0, 0], [0, 1, 0], [0, 1, 1], [1, 0, 0], [0, 1, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]])
    model = BinaryApproachSVM(C=1.0, kernel="rbf", solver="waterfill", tol=1e-10).fit(X, Y)
    assert model.fit_report_.converged
    np.testing.assert_allclose(model.alpha_[:, 0], 1.0 / 3.0, rtol=1e-9)   # every point of label 0 at C/Q
    scores = model.decision_function(X)[:, 0] - model.intercept_[0]
    signed = 2.0 * Y[:, 0] - 1.0
    ends = np.sort(signed - scores)[[3, 4]]   # the flat segment: between the 4th and 5th kinks
    assert ends[1] - ends[0] > 1.0
    loss = [np.maximum(0.0, 1.0 - signed * (scores + b)).sum() for b in (*ends, ends.mean(), ends[0] - 0.1)]
    np.testing.assert_allclose(loss[:3], loss[0], rtol=1e-12)   # flat on the segment ...
    assert loss[3] > loss[0] + 1e-3                              # ... and rising outside it
    assert model.intercept_[0] == pytest.approx(ends.mean(), abs=1e-12)
