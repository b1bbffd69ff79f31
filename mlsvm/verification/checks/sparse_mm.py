"""SMSVM / SM3L checks: the derived CVXPY dual = the CVXPY primal (full model, two backends), and
the greedy solvers' final α_J = the CVXPY primal on the same basis J (and on J = all points)."""

from __future__ import annotations

import time

import numpy as np

from mlsvm.estimators.sparse_mm import SM3L, SMSVM, fit_report
from mlsvm.formulations import sparse_mm as form
from mlsvm.kernels import make_kernel
from mlsvm.solvers.sparse_mm_greedy import greedy_sparse
from mlsvm.solvers.cvxpy_tools import CROSSCHECK_BACKEND, solve
from mlsvm.verification.problems import multiclass_problems, multilabel_problems
from mlsvm.verification.registry import Check, compare, graded_on_value

MODEL = "sparse_mm"
LAM = 0.5


def _prior(k: int) -> np.ndarray:
    """A fixed, well-conditioned label prior R = PᵀP (P = I + 0.3·(a seeded matrix))."""
    P = np.eye(k) + 0.3 * np.random.default_rng(11).standard_normal((k, k))
    return P.T @ P


def _primal_value(problem: form.SparseMMProblem, backend: str = "CLARABEL") -> float:
    return solve(form.primal_problem(problem)[0], backend)


def _dual_report(problem: form.SparseMMProblem, backend: str):
    start = time.perf_counter()
    cvx, mu = form.dual_problem(problem)
    optimum = -solve(cvx, backend)
    report = fit_report(problem, form.coefficients_from_dual(problem, mu.value), np.maximum(mu.value, 0.0),
                        n_iter=0, converged=True, solve_time=time.perf_counter() - start, solver=f"cvxpy-{backend}")
    return graded_on_value(report, optimum, backend)


def _variants(quick: bool):
    for reference in multilabel_problems(quick):
        yield reference, "sm3l", reference.Y, None
    yield multilabel_problems(quick)[0], "sm3l", multilabel_problems(quick)[0].Y, _prior(multilabel_problems(quick)[0].Y.shape[1])
    for reference in multiclass_problems(quick):
        yield reference, "smsvm", reference.Y, None


def checks(quick: bool) -> list[Check]:
    found = []
    for reference, model, Y, R in _variants(quick):
        gram = make_kernel("rbf", "scale", X=reference.X)(reference.X)
        full = form.SparseMMProblem(gram, Y, LAM, model, None, R)
        name = f"{reference.name}/rbf/{model}{'-R' if R is not None else ''}"

        for backend, solver in (("CLARABEL", "cvxpy"), (CROSSCHECK_BACKEND, "cvxpy-crosscheck")):
            found.append(Check(MODEL, name, f"dual ({backend}) vs primal, J=all", solver,
                               lambda p=full, b=backend, s=solver, n=name: compare(
                                   MODEL, n, f"dual ({b}) vs primal, J=all", s, _dual_report(p, b), _primal_value(p))))

        def fixed_all(problem=full, n=name):
            result = greedy_sparse(problem.gram, problem.margins, LAM, problem.R, basis=problem.basis, tol=1e-12)
            used = form.SparseMMProblem(problem.gram, problem.Y, LAM, problem.model, result.primal["basis"], problem.R)
            report = fit_report(used, result.primal["A"], n_iter=result.n_iter, converged=result.converged,
                                solve_time=result.solve_time, solver="fast")
            return compare(MODEL, n, "Newton, J=all vs CVXPY full", "fast", report, _primal_value(problem))

        found.append(Check(MODEL, name, "Newton, J=all vs CVXPY full", "fast", fixed_all))
        d_max = 8 if quick else 20
        for solver in ("fast", "greedy"):
            def greedy_row(solver=solver, X=reference.X, Y=Y, R=R, model=model, gram=gram, n=name, d_max=d_max):
                if model == "smsvm":
                    est = SMSVM(LAM, d_max=d_max, kappa=10, solver=solver, random_state=0).fit(X, np.argmax(Y, axis=1))
                else:
                    est = SM3L(LAM, d_max=d_max, kappa=10, R=R, solver=solver, random_state=0).fit(X, Y)
                on_basis = form.SparseMMProblem(gram, Y, LAM, model, est.basis_indices_, R)
                return compare(MODEL, n, f"Alg.4 |J|={est.n_basis_} vs CVXPY on J", solver, est.fit_report_,
                               _primal_value(on_basis))
            found.append(Check(MODEL, name, "Alg.4 vs CVXPY on same J", solver, greedy_row))
    return found
