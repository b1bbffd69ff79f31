"""Matrix-SVM's solvers (Jain & Rastogi; SPEC §2.5): the dual eq. (8) by the paper's accelerated
gradient (Alg. 1), by accelerated proximal gradient with active-set polishing, by a primal–dual
interior point batched over labels, in closed form (least squares, eq. 14), or by CVXPY.

``"fast"``: the closed form for the squared loss; the interior point for the hinge on the linear
kernel without A when ``d + 1 ≤ MAX_WIDTH`` (K̄ has rank d + 1, where gradient methods are
sublinear), dual coordinate descent (LIBLINEAR's method, O(nnz) per pass, no Gram matrix) when it
is wider; otherwise accelerated proximal gradient, handing over to the interior point when it
is still short of the tolerance after ``APG_BEFORE_IPM`` iterations (ill-conditioned kernels).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.sparse import issparse
from sklearn.exceptions import ConvergenceWarning

from mlsvm.formulations import matrix_svm
from mlsvm.kernels import gram_factor, low_rank_factor
from mlsvm.registry import EXACT, ModelSpec, SolverSpec
from mlsvm.solvers.cvxpy_tools import solve_cvxpy
from mlsvm.solvers.matrix_svm_agd import solve_dual_agd
from mlsvm.solvers.matrix_svm_closed_form import solve_least_squares
from mlsvm.solvers.matrix_svm_dcd import solve_dcd
from mlsvm.solvers.matrix_svm_ipm import MAX_WIDTH, interior_point_box
from mlsvm.solvers.matrix_svm_liblinear import solve_liblinear_dcd
from mlsvm.solvers.matrix_svm_polish import polish_labels, polish_labels_factored
from mlsvm.solvers.result import SolverResult, warn_not_converged, warn_stalled

#: "apg" without A: labels whose gap is small or has stalled get an active-set polish every this
#: many iterations (docs/matrix_svm.md has the measurements behind the three constants)
FAST_POLISH_EVERY = 10
#: "apg" without A starts from α = FAST_START · C (the paper's Alg. 1 starts from 0)
FAST_START = 0.5
#: the interior point needs few iterations; ``max_iter``'s default is sized for the gradient methods
IPM_MAX_ITER = 200
#: active-set steps of the crossover that follows an interior point stalled short of ``tol``
CROSSOVER_STEPS = 10
#: the coordinate-descent passes ``max_iter`` may ask for (its default is sized for the gradient methods)
DCD_MAX_PASSES = 5000
#: "fast" on a kernel: accelerated gradient first (tens of iterations on well-scaled data); past
#: this many iterations the problem is ill-conditioned (raw features, a high-degree poly kernel)
#: and the interior point, whose iteration count does not depend on conditioning, takes over
#: when its Newton systems fit (the rank of K below MAX_WIDTH)
APG_BEFORE_IPM = 1000
#: the rank screen of "fast" above MAX_WIDTH points counts pivots of K down to this fraction of its
#: largest diagonal entry (gram_factor keeps eigenvalues down to 1e-12 of the largest)
RANK_RTOL = 1e-12


def apg_options(problem: matrix_svm.MatrixSVMProblem) -> dict:
    """The options of :func:`mlsvm.solvers.matrix_svm_agd.solve_dual_agd` that make ``"apg"``."""
    if problem.correlation is not None:   # one coupled block: no bias prox, no polish
        return {}
    return dict(split_bias=True, polish_every=FAST_POLISH_EVERY,
                alpha0=np.full(problem.signed.shape, FAST_START * problem.C))


def _certificate(problem):
    """The largest scaled KKT residual of α: what the report will grade (the solvers stop on it too)."""
    return lambda alpha: max(matrix_svm.kkt_residuals(problem, alpha).values())


def _gradient(problem, *, tol, max_iter, paper: bool):
    name = "agd" if paper else "apg"
    return solve_dual_agd(problem.gram_bar, problem.signed, problem.C, correlation=problem.correlation,
                          loss=problem.loss, lipschitz="frobenius" if paper else "exact",
                          restart=not paper, clip_extrapolation=paper, **({} if paper else apg_options(problem)),
                          tol=tol, max_iter=max_iter, certificate=_certificate(problem),
                          name=f"MatrixSVM(solver={name!r})")


def _agd(problem, *, tol, max_iter):
    return _gradient(problem, tol=tol, max_iter=max_iter, paper=True)


def _apg(problem, *, tol, max_iter):
    return _gradient(problem, tol=tol, max_iter=max_iter, paper=False)


def _ipm(problem, *, tol, max_iter, factor=None):
    if problem.loss != "hinge" or problem.correlation is not None:
        raise ValueError("solver='ipm' solves the hinge loss without a correlation matrix "
                         f"(got loss={problem.loss!r}, correlation given: {problem.correlation is not None})")
    if factor is None:
        factor = problem.features if problem.features is not None else gram_factor(problem.gram)
    if issparse(factor):   # the interior point centres [X − 1mᵀ, 1]: it reads the features densely
        factor = factor.toarray()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        result = interior_point_box(factor, problem.signed, problem.C, tol=tol,
                                    max_iter=min(max_iter, IPM_MAX_ITER), certificate=_certificate(problem),
                                    name="MatrixSVM(solver='ipm')")
    crossover = None if result.converged else _crossover(problem, result, factor, tol)
    if crossover is not None and crossover.stop_value < result.stop_value:
        if not crossover.converged:   # better than the interior point's iterate, still short of tol
            warn_stalled("MatrixSVM(solver='ipm') with its active-set crossover", "the certificate (relative "
                         "gap and scaled KKT)", crossover.stop_value, float("nan"), tol)
        caught = [w for w in caught if not issubclass(w.category, ConvergenceWarning)]
        result = crossover
    for warning in caught:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return result


def _crossover(problem, result, factor, tol):
    """A point from a stalled interior point's iterate. With many free α on a K̄ of low rank (the
    linear kernel, n ≫ d) or features far from the origin, the Newton systems lose accuracy as the
    barrier on the free set vanishes, and the gap stalls (1e-9 on wine, 2e-8 to 3e-4 on emotions
    with C = 1 to 10, whose columns reach 237 around means up to 155) while μ is at 1e-14. The
    active sets the last iterate identifies (from ``α − c∇g``, ``c = 1 / mean diag K̄``) are solved
    exactly by active-set steps: through the features (:func:`polish_labels_factored`) for the
    linear kernel, where a factor of ``K̄_FF`` squares the features' condition number (on emotions it
    leaves no usable candidate), and on K̄ by the "apg" polish otherwise. The candidate is
    ``converged`` only when its own relative gap and scaled KKT residuals meet ``tol``, and its
    ``stop_value`` is that certificate."""
    alpha, signed = result.dual["alpha"], problem.signed
    if problem.features is not None:
        candidate = polish_labels_factored(factor, signed, alpha, problem.C, steps=CROSSOVER_STEPS)
    else:
        gradient = signed * problem.gram_bar_times(alpha * signed) - 1.0
        candidate, _ = polish_labels(problem.gram_bar, signed, alpha, problem.C, gradient=gradient,
                                     scale=1.0 / float(np.mean(np.diag(problem.gram_bar))), steps=CROSSOVER_STEPS)
    evaluation = matrix_svm.evaluate(problem, {}, {"alpha": candidate})
    certificate = max(abs(evaluation.relative_gap), evaluation.max_kkt)
    coef = evaluation.extra["coef"]
    weights = np.vstack([factor.T @ coef, coef.sum(axis=0)])                # W = X̄ᵀΘ, X̄ = [F, 1]
    return SolverResult(primal={"coef": coef, "W": weights}, dual={"alpha": candidate},
                        converged=bool(certificate <= tol), n_iter=result.n_iter, stop_value=certificate,
                        stop_rule=f"{result.stop_rule} (interior point stalled at {result.stop_value:.1e}), "
                                  f"then an active-set crossover: certificate",
                        solve_time=result.solve_time, history=result.history, solver=result.solver)


def _dcd(problem, *, tol, max_iter, random_state=None):
    if problem.features is None or problem.loss != "hinge" or problem.correlation is not None:
        raise ValueError("solver='dcd' solves the hinge loss with the linear kernel (kernel='linear') and "
                         f"no correlation matrix (got loss={problem.loss!r}, linear kernel: "
                         f"{problem.features is not None}, correlation given: {problem.correlation is not None})")
    return solve_dcd(problem.features, problem.signed, problem.C, tol=tol, max_iter=min(max_iter, DCD_MAX_PASSES),
                     certificate=_certificate(problem), random_state=0 if random_state is None else random_state)


def _liblinear_dcd(problem, *, tol, max_iter, random_state=None):
    if problem.features is None or problem.loss != "hinge" or problem.correlation is not None:
        raise ValueError("solver='liblinear-dcd' solves the hinge loss with the linear kernel (kernel='linear') "
                         f"and no correlation matrix (got loss={problem.loss!r}, linear kernel: "
                         f"{problem.features is not None}, correlation given: {problem.correlation is not None})")
    return solve_liblinear_dcd(problem.features, problem.signed, problem.C, tol=tol,
                               max_iter=min(max_iter, DCD_MAX_PASSES), certificate=_certificate(problem),
                               random_state=0 if random_state is None else random_state)


def _apg_then_ipm(problem, *, tol, max_iter):
    """``"apg"`` for at most :data:`APG_BEFORE_IPM` iterations, then the interior point (hinge, no
    A, its factor of K at most ``MAX_WIDTH − 1`` wide: :func:`_narrow_factor`), else ``"apg"`` on
    from where it stopped, to ``max_iter`` in all."""
    budget = min(max_iter, APG_BEFORE_IPM)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # the next stage decides
        first = _apg(problem, tol=tol, max_iter=budget)
    if first.converged or budget == max_iter:
        if "stalled" in first.history:
            warn_stalled("MatrixSVM(solver='fast': apg)", first.stop_rule, first.stop_value, np.nan, tol)
        elif not first.converged:
            warn_not_converged("MatrixSVM(solver='fast': apg)", first.stop_rule, first.stop_value, tol, max_iter)
        return first
    factor = _narrow_factor(problem) if problem.loss == "hinge" and problem.correlation is None else None
    if factor is not None:
        second = _ipm(problem, tol=tol, max_iter=max_iter - budget, factor=factor)
    else:
        second = solve_dual_agd(problem.gram_bar, problem.signed, problem.C, correlation=problem.correlation,
                                loss=problem.loss, **{**apg_options(problem), "alpha0": first.dual["alpha"]},
                                tol=tol, max_iter=max_iter - budget, certificate=_certificate(problem),
                                name="MatrixSVM(solver='fast': apg)")
    second.n_iter += first.n_iter
    second.solve_time += first.solve_time
    second.stop_rule = f"apg ({first.n_iter} iterations), then {second.solver}: {second.stop_rule}"
    return second


def _narrow_factor(problem):
    """The interior point's factor of K when its Newton systems fit (width + 1 ≤ ``MAX_WIDTH``), else
    None. Its width is K's numerical rank, not n: the kernels whose gradient runs reach the interior
    point are ill-conditioned, and often of low rank (an RBF kernel whose ``gamma="scale"`` sees one
    feature far larger than the others). Above ``MAX_WIDTH`` points a pivoted Cholesky factor
    (:func:`mlsvm.kernels.low_rank_factor`, residual down to ``RANK_RTOL`` of K's largest diagonal
    entry) screens the rank first: it stops after ``MAX_WIDTH`` columns, O(n · MAX_WIDTH²), where
    an eigendecomposition of a full-rank K would cost O(n³) for nothing."""
    if problem.features is not None:
        factor = problem.features
    else:
        gram = problem.gram
        if problem.n_samples + 1 > MAX_WIDTH and low_rank_factor(
                gram, MAX_WIDTH - 1, RANK_RTOL * float(np.max(np.diag(gram)))) is None:
            return None
        factor = gram_factor(gram)
    return factor if factor.shape[1] + 1 <= MAX_WIDTH else None


def _closed_form(problem, *, tol, max_iter):
    if problem.loss != "squared":
        raise ValueError(f"solver='closed-form' solves loss='squared'; got loss={problem.loss!r}")
    return solve_least_squares(problem.gram_bar, problem.signed, problem.C, correlation=problem.correlation)


def _cvxpy(problem, *, tol, max_iter, cvxpy_solver="CLARABEL"):
    return solve_cvxpy(matrix_svm, problem, cvxpy_solver)


def _resolve_fast(problem) -> str:
    if problem.loss == "squared":
        return "closed-form"
    if problem.features is not None and problem.correlation is None:
        return "ipm" if problem.features.shape[1] + 1 <= MAX_WIDTH else "liblinear-dcd"
    return "apg-ipm"


MODEL = ModelSpec(
    name="matrix_svm",
    dual_names=("alpha",),
    formulation=matrix_svm,
    solvers={
        "ipm": SolverSpec("ipm", _ipm, EXACT, "primal-dual interior point batched over labels, Newton "
                          "systems of size rank(K) + 1 (hinge, no A)"),
        "dcd": SolverSpec("dcd", _dcd, EXACT, "dual coordinate descent batched over labels with "
                          "shrinking (LIBLINEAR's method, O(nnz(X) q) per pass, no Gram matrix) and "
                          "active-set steps (hinge, linear kernel, no A)", options=("random_state",)),
        "liblinear-dcd": SolverSpec("liblinear-dcd", _liblinear_dcd, EXACT, "LIBLINEAR (scikit-learn's "
                                    "LinearSVC) per label, its dual point recovered exactly from the weights "
                                    "and certified, 'dcd' from there when it falls short (hinge, linear "
                                    "kernel, no A)", options=("random_state",)),
        "apg": SolverSpec("apg", _apg, EXACT, "accelerated proximal gradient with exact Lipschitz "
                          "constant, restart, bias prox and active-set polishing"),
        "apg-ipm": SolverSpec("apg-ipm", _apg_then_ipm, EXACT,
                              f"'apg' for up to {APG_BEFORE_IPM} iterations, then 'ipm' (hinge, no A, "
                              f"rank of K + 1 ≤ {MAX_WIDTH}) or 'apg' on"),
        "agd": SolverSpec("agd", _agd, EXACT, "paper Alg. 1 as printed (step 1/‖K̄‖_F, from 0)"),
        "closed-form": SolverSpec("closed-form", _closed_form, EXACT,
                                  "least squares (eq. 14): one linear system"),
        "cvxpy": SolverSpec("cvxpy", _cvxpy, EXACT, "the dual (eq. 8 / 10 / 12) solved by CVXPY (`cvxpy_solver`)",
                            options=("cvxpy_solver",)),
    },
    resolve_fast=_resolve_fast,
    fast_summary="'closed-form' (squared loss), 'ipm' (hinge, linear kernel, no A, d + 1 ≤ MAX_WIDTH), "
                 "'liblinear-dcd' (the same, d + 1 > MAX_WIDTH), else 'apg-ipm'",
)
