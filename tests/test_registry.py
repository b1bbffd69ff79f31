"""STYLE rule 5: one parametrized test runs every registered check (every solver of every model
on every built-in reference problem) and grades it with the tolerance table; the registry is
complete (every solver has verify rows on every problem family of its model, and a tolerance);
and the grading cannot pass a wrong answer (planted below, in every registered model)."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mlsvm import registry
from mlsvm.datasets import make_multilabel
from mlsvm.formulations.evaluation import Evaluation
from mlsvm.report import build_report
from mlsvm.solvers.cvxpy_tools import solve_first_optimal
from mlsvm.solvers.result import SolverResult
from mlsvm.verification.registry import all_checks, compare, run_check
from mlsvm.verification.tolerances import CERTIFIED, tolerance

CHECKS = all_checks(quick=True)


def test_every_model_registers_checks():
    assert {check.model for check in CHECKS} >= {"binary_svm", *registry.MODEL_NAMES}


@pytest.mark.parametrize("name", registry.MODEL_NAMES)
def test_every_registered_solver_has_rows_on_every_problem_family_and_a_tolerance(name):
    spec = registry.model(name)
    rows = [check for check in CHECKS if check.model == name]
    families = {check.problem.split("/")[0] for check in rows}
    for solver in spec.solver_names():
        tolerance(name, solver)   # raises when the table has no bar for it
        covered = {check.problem.split("/")[0] for check in rows if check.solver == solver}
        assert covered == families, f"{name}/{solver}: no verify rows on {sorted(families - covered)}"


@pytest.mark.parametrize("check", CHECKS, ids=[f"{c.model}:{c.problem}:{c.formulation}:{c.solver}" for c in CHECKS])
def test_check_passes(check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # convergence warnings are graded by the row itself
        result = run_check(check)
    assert result.passed, result.detail


# ---- planted wrong answers: the grading must fail them, in every registered model -------------

def _estimator(name):
    """The registered model's estimator class, on a precomputed RBF Gram matrix."""
    import mlsvm

    classes = [getattr(mlsvm, cls) for cls in mlsvm.__all__[1:]]
    matches = [cls for cls in classes if cls._registry_model == name]
    return min(matches, key=lambda cls: cls._single_output)   # a multilabel one where there is one


def _planted(name):
    """A small problem, its CVXPY optimum, and the registry's converged "fast" result on it."""
    data = make_multilabel(24, 3, 3, random_state=5)
    sq = ((data.X[:, None, :] - data.X[None, :, :]) ** 2).sum(-1)
    gram = np.exp(-0.5 * sq)
    estimator = _estimator(name)(kernel="precomputed", tol=1e-8)
    estimator.fit(gram, data.Y)
    problem = estimator._problem(gram, data.Y)
    spec = registry.model(name)
    _, result = registry.run(spec, problem, **estimator.get_params(deep=False) | {"solver": "fast"})
    # the problem the point is graded on (SMSVM/SM3L: on the basis the greedy solver chose)
    graded = spec.formulation.evaluate(problem, result.primal, result.dual).extra.get("problem", problem)
    # Clarabel first; the binary approach's SOCP can end "optimal_inaccurate" there (only an
    # "optimal" answer is ground truth, from whichever backend gives one)
    _, truth, _ = solve_first_optimal(lambda: spec.formulation.cvxpy_primal(graded), ("CLARABEL", "ECOS", "SCS"))
    return spec, problem, truth, result, estimator.get_params(deep=False)


class _Graded:
    """A point graded under its own bar and under the weakest one (CERTIFIED: within its own gap)."""

    def __init__(self, own, weakest):
        self.own, self.weakest = own, weakest
        self.passed = own.passed or weakest.passed
        self.relative_difference = own.relative_difference

    def __repr__(self):
        return f"{self.own!r} / CERTIFIED bar: {self.weakest.detail or 'passed'}"


def _grade(spec, problem, result, truth, solver="fast"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        evaluation = spec.formulation.evaluate(problem, result.primal, result.dual)
        report = build_report(evaluation, result, 1e-8, solver=solver)
    return _Graded(compare(spec.name, "planted", "dual", solver, report, truth),
                   compare(spec.name, "planted", "dual", solver, report, truth, tol=CERTIFIED))


@pytest.mark.parametrize("name", registry.MODEL_NAMES)
def test_the_optimum_passes_and_a_perturbed_optimum_fails(name):
    spec, problem, truth, result, _ = _planted(name)
    assert _grade(spec, problem, result, truth).passed
    for perturbed in ({k: 1.01 * np.asarray(v) for k, v in result.dual.items()},):
        result.dual, original = perturbed, result.dual
        graded = _grade(spec, problem, result, truth)
        assert not graded.passed, f"{name}: a dual scaled by 1.01 passed ({graded})"
        result.dual = original


@pytest.mark.parametrize("name", registry.MODEL_NAMES)
def test_a_solver_stopped_after_one_iteration_fails_every_row(name):
    """Solvers stopped by ``max_iter=1`` short of the optimum fail their row, even when their point
    is flagged converged by the solver itself (the report recomputes the certificate). A solver
    that lands on a certified optimum in one step (a closed form, a polish, a CVXPY fallback) may
    pass; at least one solver of every model is stopped short here, so the check is exercised."""
    spec, problem, truth, _, params = _planted(name)
    stopped_short = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for solver in spec.solvers:
            if solver == "cvxpy":
                continue
            try:
                _, result = registry.run(spec, problem, **params | {"solver": solver, "max_iter": 1})
            except ValueError:   # the solver does not apply to this problem (e.g. closed-form: squared loss)
                continue
            honest = _grade(spec, problem, result, truth, solver)
            result.converged = True     # a solver that lies about converging is caught as well
            lying = _grade(spec, problem, result, truth, solver)
            if honest.own.passed:
                continue                # certified optimal after one iteration (at tol 1e-8)
            stopped_short += 1
            assert not honest.passed and not lying.passed, f"{name}/{solver}: one iteration passed ({lying})"
    assert stopped_short > 0


@pytest.mark.parametrize("stop_value, quoted", [(float("nan"), "(CVXPY CLARABEL status optimal)"),
                                                (3e-9, "(relative duality gap = 3.00e-09)")])
def test_a_certificate_that_fails_quotes_the_solvers_own_rule_and_its_value_when_it_has_one(stop_value, quoted):
    # a CVXPY backend stops on its status, with no value of its own: the warning quotes the status alone
    rule = "CVXPY CLARABEL status optimal" if stop_value != stop_value else "relative duality gap"
    result = SolverResult(primal={}, dual={}, converged=True, n_iter=1, stop_value=stop_value, stop_rule=rule,
                          solve_time=0.0)
    evaluation = Evaluation(primal_objective=1.0, dual_objective=1.0 - 1e-6, kkt={"stationarity": 1e-6})
    with pytest.warns(ConvergenceWarning, match="recomputed certificate does not meet tol") as caught:
        report = build_report(evaluation, result, 1e-8, solver="cvxpy")
    message = str(caught[0].message)
    assert not report.converged and quoted in message and "nan" not in message
