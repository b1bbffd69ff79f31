"""SMSVM / SM3L checks: the derived CVXPY dual = the CVXPY primal (full model; Clarabel through the
estimator, OSQP graded on its optimal value), Newton on J = all points = the full model, the
"full" solver (dual coordinate descent, J = all) through the estimator = the CVXPY primal, and every
registered greedy solver (``fast`` = ``greedy-joint``, ``greedy``) through the estimator: its final
α_J = the CVXPY primal on the same basis J. No warning is ignored: a non-converged fit fails its row."""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mlsvm import registry
from mlsvm.estimators.sparse_mm import SM3L, SMSVM
from mlsvm.formulations import sparse_mm as form
from mlsvm.kernels import make_kernel
from mlsvm.report import FitReport, build_report
from mlsvm.solvers.cvxpy_tools import CROSSCHECK_BACKEND, solve
from mlsvm.solvers.sparse_mm_greedy import greedy_sparse
from mlsvm.verification.problems import multiclass_problems, multilabel_problems
from mlsvm.verification.registry import Check, compare

MODEL = "sparse_mm"
LAM = 0.5
#: the estimator's tolerance per solver: CVXPY's point is as accurate as its backend (Clarabel
#: ≈ 1e-8 on these problems), graded at the EXACT bar 1e-6; the Newton solvers reach 1e-10
TOL = {"cvxpy": 1e-6}
NEWTON_TOL = 1e-10


def _prior(k: int) -> np.ndarray:
    """A fixed, well-conditioned label prior R = PᵀP (P = I + 0.3·(a seeded matrix))."""
    P = np.eye(k) + 0.3 * np.random.default_rng(11).standard_normal((k, k))
    return P.T @ P


def _primal_value(problem: form.SparseMMProblem, backend: str = "CLARABEL") -> float:
    return solve(form.cvxpy_primal(problem)[0], backend)


def _crosscheck_report(problem: form.SparseMMProblem) -> FitReport:
    """The dual on the cross-check backend, graded on the optimal value it reports (SPEC §3)."""
    start = time.perf_counter()
    optimum = -solve(form.cvxpy_dual(problem)[0], CROSSCHECK_BACKEND)
    return FitReport(optimum, optimum, {}, 0, True, time.perf_counter() - start, f"cvxpy-{CROSSCHECK_BACKEND}")


def _fit(model, X, Y, R, solver, **settings):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a non-converged run is a failed row
        if model == "smsvm":
            return SMSVM(LAM, solver=solver, random_state=0, **settings).fit(X, np.argmax(Y, axis=1))
        return SM3L(LAM, R=R, solver=solver, random_state=0, **settings).fit(X, Y)


def _variants(quick: bool):
    for reference in multilabel_problems(quick):
        yield reference, "sm3l", reference.Y, None
    yield multilabel_problems(quick)[0], "sm3l", multilabel_problems(quick)[0].Y, _prior(multilabel_problems(quick)[0].Y.shape[1])
    for reference in multiclass_problems(quick):
        yield reference, "smsvm", reference.Y, None


def checks(quick: bool) -> list[Check]:
    found = []
    greedy_solvers = [s for s in registry.model(MODEL).solver_names() if s not in ("cvxpy", "full")]
    for reference, model, Y, R in _variants(quick):
        gram = make_kernel("rbf", "scale", X=reference.X)(reference.X)
        full = form.SparseMMProblem(gram, Y, LAM, model, None, R)
        name = f"{reference.name}/rbf/{model}{'-R' if R is not None else ''}"

        def cvxpy_row(X=reference.X, Y=Y, R=R, model=model, p=full, n=name):
            est = _fit(model, X, Y, R, "cvxpy", tol=TOL["cvxpy"])
            return compare(MODEL, n, "dual (CLARABEL) vs primal, J=all", "cvxpy", est.fit_report_, _primal_value(p))

        found.append(Check(MODEL, name, "dual (CLARABEL) vs primal, J=all", "cvxpy", cvxpy_row))
        found.append(Check(MODEL, name, f"dual ({CROSSCHECK_BACKEND}) vs primal, J=all", "cvxpy-crosscheck",
                           lambda p=full, n=name: compare(MODEL, n, f"dual ({CROSSCHECK_BACKEND}) vs primal, J=all",
                                                          "cvxpy-crosscheck", _crosscheck_report(p), _primal_value(p))))

        def fixed_all(problem=full, n=name):
            with warnings.catch_warnings():
                warnings.simplefilter("error", ConvergenceWarning)
                result = greedy_sparse(problem.gram, problem.margins, LAM, problem.R, basis=problem.basis, tol=NEWTON_TOL)
                report = build_report(form.evaluate(problem, result.primal, result.dual), result, NEWTON_TOL,
                                      solver="greedy-joint")
            return compare(MODEL, n, "Newton, J=all vs CVXPY full", "greedy-joint", report, _primal_value(problem))

        found.append(Check(MODEL, name, "Newton, J=all vs CVXPY full", "greedy-joint", fixed_all))

        def full_row(X=reference.X, Y=Y, R=R, model=model, p=full, n=name):
            est = _fit(model, X, Y, R, "full", tol=NEWTON_TOL)
            return compare(MODEL, n, "dual CD, J=all vs CVXPY full", "full", est.fit_report_, _primal_value(p))

        found.append(Check(MODEL, name, "dual CD, J=all vs CVXPY full", "full", full_row))
        d_max = 8 if quick else 20
        for solver in greedy_solvers:
            def greedy_row(solver=solver, X=reference.X, Y=Y, R=R, model=model, gram=gram, n=name, d_max=d_max):
                est = _fit(model, X, Y, R, solver, d_max=d_max, kappa=10, tol=NEWTON_TOL)
                on_basis = form.SparseMMProblem(gram, Y, LAM, model, est.basis_indices_, R)
                return compare(MODEL, n, f"Alg.4 |J|={est.n_basis_} vs CVXPY on J", solver, est.fit_report_,
                               _primal_value(on_basis))
            found.append(Check(MODEL, name, "Alg.4 vs CVXPY on same J", solver, greedy_row))
    return found
