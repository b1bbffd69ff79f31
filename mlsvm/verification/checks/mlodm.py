"""mLODM checks: the CVXPY dual (eq. 18) on two backends, BCD with the exact block solver (also as
``"fast"``) and with M³ (certified by its own duality gap), all against the CVXPY primal (eq. 15).

Every solver runs through the estimator on a precomputed Gram matrix, so the rows grade the same
FitReport a user gets: primal objective at ``w(α, β)``, dual objective, KKT residuals of the dual.
"""

from __future__ import annotations

import warnings

from sklearn.exceptions import ConvergenceWarning

from mlsvm import registry
from mlsvm.data import ranking_pairs
from mlsvm.estimators.mlodm import MLODM
from mlsvm.formulations import mlodm
from mlsvm.kernels import make_kernel
from mlsvm.solvers.cvxpy_tools import CROSSCHECK_BACKEND, solve
from mlsvm.verification.problems import multilabel_problems
from mlsvm.verification.registry import Check, compare

MODEL = "mlodm"
#: (C, θ, μ): the paper's Fig. 2 setting C = 1 with a middle band, and a wide / asymmetric one
HYPERPARAMETERS = ((1.0, 0.5, 0.5), (8.0, 0.1, 0.9))
#: estimator settings per row: every registered solver (mlsvm.registry.mlodm) at tol 1e-8, the
#: CVXPY cross-check backend, and BCD with the M³ block sub-solver (sublinear: tol 1e-6)
SOLVERS = {
    **{name: dict(solver=name) if name == "cvxpy" else dict(solver=name, tol=1e-8)
       for name in registry.model(MODEL).solver_names()},
    "cvxpy-crosscheck": dict(solver="cvxpy", cvxpy_solver=CROSSCHECK_BACKEND),
    "bcd-m3": dict(solver="bcd", subproblem="m3", tol=1e-6),
}
FORMULATION = {"cvxpy": "dual (CLARABEL) vs primal", "cvxpy-crosscheck": f"dual ({CROSSCHECK_BACKEND}) vs primal"}


def _variants(quick: bool):
    """RBF and the linear kernel at the first setting; full: also RBF at the second setting (not the
    linear kernel: on a rank-d Gram matrix with a large C the dual is badly conditioned and BCD
    needs thousands of sweeps, docs/mlodm.md)."""
    for reference in multilabel_problems(quick):
        for kernel in ("rbf", "linear"):
            gram = make_kernel(kernel, "scale", X=reference.X)(reference.X)
            settings = HYPERPARAMETERS[:1] if quick or kernel == "linear" else HYPERPARAMETERS
            for C, theta, mu in settings:
                yield (f"{reference.name}/{kernel}/C={C:g},theta={theta:g},mu={mu:g}", reference.X, gram,
                       kernel, reference.Y, (C, theta, mu))


def _applies(solver: str, kernel: str) -> bool:
    """The weight-space solvers (mlsvm.registry.mlodm) solve the linear kernel only."""
    return kernel == "linear" or solver not in ("newton", "dcd")


def _run(name, X, gram, kernel, Y, hyper, solver, truth) -> object:
    C, theta, mu = hyper
    # the linear kernel runs on X, so "fast" takes the weight-space route; RBF on its Gram matrix
    data, kernel = (X, "linear") if kernel == "linear" else (gram, "precomputed")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a non-converged run is a failed row
        model = MLODM(C=C, theta=theta, mu=mu, kernel=kernel, random_state=0, max_iter=5000,
                      **SOLVERS[solver]).fit(data, Y)
    return compare(MODEL, name, FORMULATION.get(solver, "dual"), solver, model.fit_report_, truth())


def checks(quick: bool) -> list[Check]:
    found = []
    for name, X, gram, kernel, Y, hyper in _variants(quick):
        cache = {}

        def ground_truth(gram=gram, Y=Y, hyper=hyper, cache=cache):
            if "value" not in cache:
                problem = mlodm.MLODMProblem(gram, ranking_pairs(Y), *hyper)
                cache["value"] = solve(mlodm.cvxpy_primal(problem)[0], "CLARABEL")
            return cache["value"]

        for solver in (s for s in SOLVERS if _applies(s, kernel)):
            found.append(Check(MODEL, name, FORMULATION.get(solver, "dual"), solver,
                               lambda n=name, x=X, g=gram, k=kernel, y=Y, h=hyper, s=solver, t=ground_truth:
                               _run(n, x, g, k, y, h, s, t)))
    return found
