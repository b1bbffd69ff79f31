"""Exact mLODM solvers for the linear kernel, in the primal coordinates ``W`` (d × q).

Both work on a :class:`~mlsvm.formulations.mlodm.LinearMLODMProblem` (features ``X``, dense or
scipy sparse; ``K = X Xᵀ`` is never formed) and keep ``W`` with ``w_k = Σ_i B_ik x_i``,
``B = scatter(α − β)``, so the pair margins are ``m = gather(X W)`` in O(nnz(X)·q + T).

``method="newton"`` (the fast route) minimises the primal eq. (15) written in ``W`` alone::

    f(W) = ½‖W‖² + C/2 Σ_t (1/n_t) [(1 − θ − m_t)₊² + μ (m_t − 1 − θ)₊²],   m = gather(X W)

which is convex, piecewise quadratic and once differentiable, with the generalised Hessian
``H V = V + Xᵀ scatter(c ∘ gather(X V))``, ``c_t = C/n_t ([m_t < 1 − θ] + μ [m_t > 1 + θ])``
(LIBLINEAR's primal Newton for the squared hinge, here with two hinges per pair). Each iteration
solves ``H p = −∇f`` by conjugate gradients preconditioned with ``diag(H)`` (inexact: relative
residual ``≤ 10⁻³ min(1, √‖∇f‖)``; when CG stops at its cap, as on raw features with a large C, and
``dq ≤ DIRECT_MAX_SIZE``, H is formed as ``I + Σ_i x_i x_iᵀ ⊗ Λ_i`` and factorised instead, ``Λ_i`` the
weighted Laplacian of instance i's pairs) and takes the exact minimiser of ``f`` along ``p`` (a 1-D
piecewise quadratic: safeguarded Newton on its derivative inside a bracket). On a piecewise
quadratic this is a semismooth Newton method: once the sets ``{m < 1 − θ}``, ``{m > 1 + θ}`` are
right, one step lands on the optimum (iteration counts and timings: docs/mlodm.md and
benchmarks/bench_mlodm_linear_results.txt).

``method="dcd"`` is dual coordinate descent as in LIBLINEAR and the binary ODM packages: one
coordinate per pair, the joint step on ``(α_t, β_t)`` (at a minimiser they are never both
positive: ∂_α + ∂_β = 2θ + n_t(α_t + β_t/μ)/C > 0 if either is). With ``b`` the margin of pair
``t = (i, k, l)`` without its own contribution (``b = m_t − 2‖x_i‖² u_t``, ``u = α − β``) the
exact minimiser is ``α_t = (1 − θ − b)₊ / (2‖x_i‖² + n_t/C)`` if ``b < 1 − θ``,
``β_t = (b − 1 − θ)₊ / (2‖x_i‖² + n_t/(μC))`` if ``b > 1 + θ``, both 0 inside the band; the step
moves ``w_k`` by ``+Δ x_i`` and ``w_l`` by ``−Δ x_i``. Sweeps visit the instances in a random
order and each instance's pairs in turn; all pairs of instance i see ``x_i`` only through the
q scores ``s = Wᵀ x_i``, which a step changes by ``±‖x_i‖² Δ`` in O(1), so ``W`` is read and
written once per instance (O(nnz(x_i)·q)) and the per-pair work is a few float operations.
It converges linearly and each sweep is a Python loop over the pairs (docs/mlodm.md has the
measurements), so it is kept as the textbook method and cross-check, not as the fast route.

Stopping rule (both methods; the formulation's own certificate). At the dual point
``α_t = C (1 − θ − m_t)₊ / n_t``, ``β_t = μC (m_t − 1 − θ)₊ / n_t`` (the optimality conditions of
eq. 15, Newton) or the iterate itself (DCD), ``W`` and the margins are recomputed exactly from
``(α, β)``; converged means the relative duality gap ``(P − D)/max(1, |P|, |D|)`` and every scaled
KKT residual of :func:`mlsvm.formulations.mlodm.kkt_residuals` are ``≤ tol``. ``stop_value`` is
the largest of them. An exhausted ``max_iter`` or a stall (Newton: ``STALL_ITERATIONS`` iterations without a
smaller primal objective, or a step that no longer moves ``W``; DCD: ``DCD_STALL_CERTIFICATES``
certificates without a smaller stopping value) emits a
``ConvergenceWarning`` saying which, with the values reached.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.sparse import issparse
from scipy.sparse.linalg import LinearOperator, cg
from sklearn.exceptions import ConvergenceWarning

from mlsvm.data import check_scalar
from mlsvm.formulations import mlodm
from mlsvm.solvers.compiled import compiled
from mlsvm.solvers.result import SolverResult, relative_gap, warn_not_converged

__all__ = ["METHODS", "certificate", "solve_linear"]

METHODS = ("newton", "dcd")
STOP_RULE = "max(relative duality gap, scaled KKT residuals)"
#: Newton iterations without a smaller primal objective (monotone in exact arithmetic) that count as a stall
STALL_ITERATIONS = 5
#: DCD certificates without a smaller stopping value that count as a stall (DCD's dual objective
#: is monotone too, but it stops moving in floating point while the KKT residuals still shrink)
DCD_STALL_CERTIFICATES = 20
#: DCD sweeps between two certificates (each costs about one sweep's worth of vector work)
DCD_CHECK_EVERY = 5
#: the Newton system's CG: relative residual asked is CG_FORCING · min(1, √‖∇f‖), at most CG_MAX_ITER steps
CG_FORCING = 1e-3
CG_MAX_ITER = 1000
#: when CG stops at its cap, the Newton system is formed and factorised instead if it has at most
#: this many unknowns d·q (a dense (dq)² matrix: 128 MB at this size)
DIRECT_MAX_SIZE = 4000
#: numbers in the temporaries of one block of rows while the Newton system is formed (rows × (d² + q²))
DIRECT_BLOCK_ENTRIES = 4_000_000


def certificate(problem: mlodm.LinearMLODMProblem, alpha: np.ndarray, beta: np.ndarray) -> dict:
    """Primal and dual objectives, relative gap and KKT residuals at ``(α, β)``, all recomputed
    from ``(α, β)`` (``W = Xᵀ scatter(α − β)``), in O(nnz(X)·q + T).

    Parameters
    ----------
    problem : LinearMLODMProblem
        The mLODM problem with the linear kernel.
    alpha : array of shape (T,)
        Dual variables α, one per pair.
    beta : array of shape (T,)
        Dual variables β, one per pair.
    """
    coef = mlodm.coef_from_dual(problem, alpha, beta)
    weights = problem.weights(coef)
    scores = np.asarray(problem.features @ weights)
    primal = mlodm.primal_objective(problem, coef, scores)
    dual = mlodm.dual_objective(problem, alpha, beta, scores)
    gap = float(relative_gap(primal, dual))
    kkt = mlodm.kkt_residuals(problem, alpha, beta, problem.pairs.gather(scores))
    return {"W": weights, "primal": primal, "dual": dual, "gap": gap, "kkt": kkt,
            "stop_value": max(gap, *kkt.values())}


def solve_linear(problem: mlodm.LinearMLODMProblem, *, method: str = "newton", tol: float = 1e-6,
                 max_iter: int = 1000, random_state=None, callback=None) -> SolverResult:
    """Solve mLODM (eq. 15/18) with the linear kernel to the certificate of the module docstring.

    ``max_iter`` counts Newton iterations (``"newton"``) or sweeps over all pairs (``"dcd"``);
    ``random_state`` seeds the DCD sweep order (Newton is deterministic); ``callback(iteration,
    primal, dual)`` is called after each certificate (the common signature). Returns a :class:`SolverResult` with
    ``dual = {"alpha", "beta"}``, ``primal = {"W"}`` (d × q, recomputed from α, β) and per
    certificate the histories ``primal``, ``dual``, ``relative_gap``, ``kkt`` (largest scaled
    residual), ``stop_value`` and ``iteration`` (plus ``hessian_products`` for Newton).

    Parameters
    ----------
    problem : LinearMLODMProblem
        The mLODM problem with the linear kernel.
    method : {"newton", "dcd"}, default="newton"
        Primal Newton method or dual coordinate descent.
    tol : float, default=1e-6
        Tolerance on the relative duality gap and the scaled KKT residuals.
    max_iter : int, default=1000
        Newton iterations (``"newton"``) or sweeps over all pairs (``"dcd"``).
    random_state : int, Generator or None, optional
        Seeds the DCD sweep order (Newton is deterministic).
    callback : callable or None, optional
        Called as ``callback(iteration, primal, dual)`` after each certificate.
    """
    if not isinstance(problem, mlodm.LinearMLODMProblem):
        raise TypeError(f"problem must be a LinearMLODMProblem (features X of the linear kernel); "
                        f"got {type(problem).__name__}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    check_scalar(tol, "tol", low=0.0, low_open=True)
    check_scalar(max_iter, "max_iter", low=1, integer=True)
    start = time.perf_counter()
    run = _newton if method == "newton" else _dcd
    alpha, beta, history, n_iter, reason = run(problem, tol, max_iter, random_state, callback)
    final = history.pop("_final")
    converged = final["stop_value"] <= tol
    if not converged:
        if reason == "max_iter":
            warn_not_converged(f"mLODM linear {method}", STOP_RULE, final["stop_value"], tol, max_iter)
        else:
            warnings.warn(
                f"mLODM linear {method} stalled after {n_iter} iterations ({reason}): {STOP_RULE} reached "
                f"{final['stop_value']:.3e} (relative gap {final['gap']:.3e}, KKT "
                f"{max(final['kkt'].values()):.3e}), tolerance asked {tol:.1e}. Loosen tol.",
                ConvergenceWarning, stacklevel=2)
    return SolverResult(primal={"W": final["W"]}, dual={"alpha": alpha, "beta": beta}, converged=converged,
                        n_iter=n_iter, stop_value=float(final["stop_value"]), stop_rule=STOP_RULE,
                        solve_time=time.perf_counter() - start, history=history, solver=f"linear-{method}")


def _record(history: dict, check: dict, iteration: int) -> None:
    history["primal"].append(check["primal"])
    history["dual"].append(check["dual"])
    history["relative_gap"].append(check["gap"])
    history["kkt"].append(max(check["kkt"].values()))
    history["stop_value"].append(check["stop_value"])
    history["iteration"].append(iteration)
    history["_final"] = check


def _new_history(*extra) -> dict:
    return {key: [] for key in ("primal", "dual", "relative_gap", "kkt", "stop_value", "iteration", *extra)}


# --------------------------------------------------------------------------------------- Newton


def _newton(problem, tol, max_iter, random_state, callback):
    X, pairs = problem.features, problem.pairs
    C, theta, mu = float(problem.C), float(problem.theta), float(problem.mu)
    scaled_weight = C * pairs.weight                               # C / n_t
    squared = X.multiply(X) if issparse(X) else X * X
    W = np.zeros((X.shape[1], pairs.n_labels))
    margins = np.zeros(pairs.n_pairs)
    history = _new_history("hessian_products")
    best, since_best, products, reason, iteration = np.inf, 0, 0, "max_iter", 0
    direct = False    # the Newton system formed and factorised (once CG has stopped at its cap)
    for iteration in range(1, max_iter + 1):
        below = np.maximum(0.0, 1.0 - theta - margins)
        above = np.maximum(0.0, margins - 1.0 - theta)
        alpha, beta = scaled_weight * below, mu * scaled_weight * above
        objective = 0.5 * np.sum(W * W) + 0.5 * scaled_weight @ (below * below + mu * above * above)
        del below, above   # 2T floats less while the certificate runs
        check = certificate(problem, alpha, beta)
        _record(history, check, iteration)
        history["hessian_products"].append(products)
        if callback is not None:
            callback(iteration, {"W": W}, {"alpha": alpha, "beta": beta})
        if check["stop_value"] <= tol:
            reason = "converged"
            break
        if objective < best:
            best, since_best = objective, 0
        else:
            since_best += 1
            if since_best >= STALL_ITERATIONS:
                reason = f"the primal objective did not decrease in {STALL_ITERATIONS} iterations"
                break
        if iteration == max_iter:
            break
        gradient = W - np.asarray(X.T @ pairs.scatter(alpha - beta))
        curvature = scaled_weight * ((margins < 1.0 - theta) + mu * (margins > 1.0 + theta))
        direction, used, direct = _newton_direction(X, squared, pairs, curvature, gradient, direct)
        del gradient, curvature   # T floats less during the line search and the next certificate
        products += used
        step_margins = pairs.gather(np.asarray(X @ direction))
        step = _line_search(W, direction, margins, step_margins, scaled_weight, theta, mu)
        if not step > 0.0 or not np.any(W + step * direction != W):
            reason = "the Newton step no longer moves W"
            break
        W = W + step * direction
        margins = pairs.gather(np.asarray(X @ W))
    return alpha, beta, history, iteration, reason


def _newton_direction(X, squared, pairs, curvature, gradient, direct=False):
    """``H p = −∇f`` by CG preconditioned with ``diag(H)``; returns ``(p, Hessian products, direct)``.
    Any number of CG steps from 0 gives a descent direction, so the cap only costs speed. ``direct``:
    the system is formed and factorised (:func:`_solve_formed`) without CG, as it is once CG stops at
    its cap; the returned flag says whether this step was solved so (the run keeps to it: the next
    systems are as ill-conditioned, and CG would run to its cap again only to be discarded)."""
    shape, size = gradient.shape, gradient.size
    formable = size <= DIRECT_MAX_SIZE
    if direct and formable:
        solution = _solve_formed(X, pairs, curvature, gradient)
        if solution is not None and np.all(np.isfinite(solution)):
            return solution.reshape(shape), 0, True
        formable = False    # it did not solve: CG's direction, with no second attempt below
    n, q = pairs.n_samples, pairs.n_labels
    positive, negative = pairs.flat_index
    plus, minus = _pair_sums(positive, negative, curvature, np.empty(0), n * q)
    diagonal = 1.0 + np.asarray(squared.T @ (plus + minus).reshape(n, q))
    del plus, minus

    def hessian(V):
        scores = np.asarray(X @ V).ravel()
        plus, minus = _pair_sums(positive, negative, curvature, scores, n * q)
        return V + np.asarray(X.T @ (plus - minus).reshape(n, q))

    products = [0]

    def matvec(v):
        products[0] += 1
        return hessian(v.reshape(shape)).ravel()

    norm = np.linalg.norm(gradient)
    operator = LinearOperator((size, size), matvec=matvec, dtype=np.float64)
    preconditioner = LinearOperator((size, size), matvec=lambda v: v / diagonal.ravel(), dtype=np.float64)
    solution, info = cg(operator, -gradient.ravel(), rtol=CG_FORCING * min(1.0, np.sqrt(norm)), atol=0.0,
                        maxiter=CG_MAX_ITER, M=preconditioner)
    direct = False
    if info != 0 and formable:
        # CG stopped at its cap (an ill-conditioned H: raw features with a large C), so its direction
        # is far from Newton's and the steps crawl; a small system is solved exactly instead
        formed = _solve_formed(X, pairs, curvature, gradient)
        if formed is not None:
            solution, direct = formed, True
    if not np.all(np.isfinite(solution)):
        # e.g. C = 1e300 on features at 1e6: the curvature overflows. A unit step along it made W
        # nan, and the run stalled there, its nan scores passed on to the threshold predictor
        raise FloatingPointError("the Newton direction is not finite (CG on the generalized Hessian)")
    return solution.reshape(shape), products[0], direct


def _solve_formed(X, pairs, curvature, gradient):
    """``H p = −∇f`` with H formed (:func:`_hessian_matrix`) and factorised by Cholesky, or None: H is
    positive definite (I + PSD), and one that overflowed or lost that to round-off is left to CG,
    whose iterates are descent directions after any number of steps."""
    hessian = _hessian_matrix(X, pairs, curvature)
    if not np.all(np.isfinite(hessian)):
        return None
    try:
        return cho_solve(cho_factor(hessian, check_finite=False), -gradient.ravel(), check_finite=False)
    except LinAlgError:
        return None


def _hessian_matrix(X, pairs, curvature):
    """The generalised Hessian as a dense (dq × dq) matrix in the order of ``W.ravel()``:
    ``H = I + Σ_i x_i x_iᵀ ⊗ Λ_i`` with ``Λ_i = Σ_{t ∈ i} c_t (e_k − e_l)(e_k − e_l)ᵀ`` the weighted
    Laplacian of instance i's pairs (:meth:`~mlsvm.data.RankingPairs.laplacians`), summed over
    blocks of rows of X so that no temporary exceeds about :data:`DIRECT_BLOCK_ENTRIES` numbers."""
    n, q, d = pairs.n_samples, pairs.n_labels, X.shape[1]
    products = np.zeros((d * d, q * q))
    block = max(1, DIRECT_BLOCK_ENTRIES // (d * d + q * q))
    for start in range(0, n, block):
        stop = min(n, start + block)
        rows = X[start:stop]
        rows = rows.toarray() if issparse(rows) else np.asarray(rows)
        products += ((rows[:, :, None] * rows[:, None, :]).reshape(-1, d * d).T
                     @ pairs.laplacians(curvature, start, stop).reshape(-1, q * q))
    hessian = products.reshape(d, d, q, q).transpose(0, 2, 1, 3).reshape(d * q, d * q)
    hessian[np.diag_indices_from(hessian)] += 1.0
    return hessian


@compiled
def _pair_sums(positive, negative, curvature, scores, size):
    """``(Σ_{t: positive_t = j} v_t, Σ_{t: negative_t = j} v_t)`` for ``j < size`` over the pairs
    with ``c_t ≠ 0`` (the others add nothing to H), ``v = c`` or, given ``scores``,
    ``v_t = c_t (scores[positive_t] − scores[negative_t])``: two ``np.bincount`` in the same
    order, without their T-sized temporaries (the values, the active pairs, the int64 copies
    of the indices)."""
    plus, minus = np.zeros(size), np.zeros(size)
    for t in range(curvature.size):
        value = curvature[t]
        if value != 0.0:
            if scores.size:
                value = value * (scores[positive[t]] - scores[negative[t]])
            plus[positive[t]] += value
            minus[negative[t]] += value
    return plus, minus


def _line_search(W, direction, margins, step_margins, scaled_weight, theta, mu) -> float:
    """The exact minimiser of ``f(W + s p)`` over ``s ≥ 0``: its derivative is piecewise linear and
    increasing; find its root by Newton steps kept inside a bracket (bisection when they leave it)."""
    pp, wp = float(np.sum(direction * direction)), float(np.sum(W * direction))

    def slope(s):
        moved = margins + s * step_margins
        below, above = moved < 1.0 - theta, moved > 1.0 + theta
        residual = np.where(below, moved - (1.0 - theta), 0.0) + mu * np.where(above, moved - (1.0 + theta), 0.0)
        first = s * pp + wp + (scaled_weight * residual) @ step_margins
        second = pp + (scaled_weight * (below + mu * above)) @ (step_margins * step_margins)
        return first, second

    scale = abs(slope(0.0)[0])
    low, high = 0.0, 1.0
    first, second = slope(high)
    while first < 0.0 and high < 1e8:      # a descent direction: f′(0) < 0; bracket the root
        low, high = high, 2.0 * high
        first, second = slope(high)
    s = high
    for _ in range(100):
        if abs(first) <= 1e-13 * scale or high - low <= 1e-15 * high:
            break
        if first > 0.0:
            high = s
        else:
            low = s
        candidate = s - first / second if second > 0.0 else 0.5 * (low + high)
        s = candidate if low < candidate < high else 0.5 * (low + high)
        first, second = slope(s)
    return s


# ------------------------------------------------------------------------------------------ DCD


def _dcd(problem, tol, max_iter, random_state, callback):
    X, pairs = problem.features, problem.pairs
    C, theta, mu = float(problem.C), float(problem.theta), float(problem.mu)
    q, sparse = pairs.n_labels, issparse(X)
    rows = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sparse else np.einsum("ij,ij->i", X, X)
    weights_t = np.zeros((q, X.shape[1]))          # Wᵀ, row k = w_k (contiguous for the updates)
    offsets = pairs.offsets
    relevant, irrelevant = pairs.relevant.tolist(), pairs.irrelevant.tolist()
    difference = [0.0] * pairs.n_pairs              # u_t = α_t − β_t
    instances = np.flatnonzero(np.diff(offsets) > 0)
    lower, upper = 1.0 - theta, 1.0 + theta
    rng = np.random.default_rng(random_state)
    history = _new_history()
    best, since_best, reason, sweep = np.inf, 0, "max_iter", 0
    for sweep in range(1, max_iter + 1):
        for i in rng.permutation(instances):
            if sparse:
                columns = X.indices[X.indptr[i]:X.indptr[i + 1]]
                values = X.data[X.indptr[i]:X.indptr[i + 1]]
                scores = (weights_t[:, columns] @ values).tolist()
            else:
                values = X[i]
                scores = (weights_t @ values).tolist()
            norm = float(rows[i])
            first, last = int(offsets[i]), int(offsets[i + 1])
            size = last - first
            curvature = 2.0 * norm
            denominator_alpha, denominator_beta = curvature + size / C, curvature + size / (mu * C)
            change = [0.0] * q
            for t in range(first, last):
                k, l, u = relevant[t], irrelevant[t], difference[t]
                others = scores[k] - scores[l] - curvature * u
                if others < lower:
                    new = (lower - others) / denominator_alpha
                elif others > upper:
                    new = (upper - others) / denominator_beta
                else:
                    new = 0.0
                delta = new - u
                if delta != 0.0:
                    difference[t] = new
                    scores[k] += norm * delta
                    scores[l] -= norm * delta
                    change[k] += delta
                    change[l] -= delta
            if sparse:
                weights_t[:, columns] += np.outer(change, values)
            else:
                weights_t += np.outer(change, values)
        if sweep % DCD_CHECK_EVERY and sweep != max_iter:
            continue
        u = np.asarray(difference)
        alpha, beta = np.maximum(u, 0.0), np.maximum(-u, 0.0)
        check = certificate(problem, alpha, beta)
        _record(history, check, sweep)
        if callback is not None:
            callback(sweep, {}, {"alpha": alpha, "beta": beta})
        if check["stop_value"] <= tol:
            reason = "converged"
            break
        # not the dual objective: near the optimum it moves by ~(KKT residual)², below round-off
        # long before the residuals reach a tight tol
        if check["stop_value"] < best:
            best, since_best = check["stop_value"], 0
        else:
            since_best += 1
            if since_best >= DCD_STALL_CERTIFICATES:
                reason = f"no smaller stopping value in {DCD_STALL_CERTIFICATES} certificates"
                break
        # re-anchor Wᵀ on (α, β): the increments' round-off never accumulates past a check
        weights_t = np.ascontiguousarray(check["W"].T)
    return alpha, beta, history, sweep, reason
