"""Matrix-SVM, hinge loss, linear kernel, no A: dual coordinate descent (LIBLINEAR's method for the
L2-regularized hinge SVM, Hsieh et al. 2008), batched over the labels, finished by an active-set
step in the features' coordinates.

Without A the dual (eq. 8) separates into q box-constrained QPs, one per label k::

    min_α  ½ ‖X̄ᵀ(α_k ∘ y_k)‖² − Σ_i α_ik     s.t.  0 ≤ α_ik ≤ C,     X̄ = [X, 1],  y_k = Ys[:, k]

exactly LIBLINEAR's dual with the bias as a feature of value 1 (``intercept_scaling=1``). The
solver keeps ``W̄ = X̄ᵀ(α ∘ Ys)`` ((d + 1) × q) and visits the rows of X in a random order; row i
updates all q labels at once: gradient ``G_i = Ys_i ∘ (x̄_iᵀW̄) − 1`` (one gather of the rows of
W̄ that x_i touches), the exact coordinate step ``α_i ← Π_[0,C](α_i − G_i / ‖x̄_i‖²)``, and
``W̄ += x̄_i (Δα_i ∘ Ys_i)ᵀ``: ``O(nnz(x_i) · q)`` per row, ``O(nnz(X) · q)`` per pass, and no Gram
matrix. Shrinking as LIBLINEAR, per (row, label), decided at the end of a pass from the full
gradient (one product ``O(nnz(X) q)``): a coordinate at 0 whose gradient exceeds the pass's largest
projected gradient of its label (at C: below the smallest) is settled, and a row whose labels are
all settled is skipped in the next pass; every row is back in after a certificate.

Every ``CHECK_EVERY`` passes the relative duality gap of the whole problem is computed from α
(W̄ recomputed from α, so no drift enters it). Coordinate descent has a long tail at ``tol=1e-6``,
so a check that does not meet the tolerance is followed, on the labels whose relative gap is
between it and ``NEWTON_BELOW``, by up to ``NEWTON_STEPS`` Newton steps on the free face ``F = {0 < α < C}`` (``K̄_FF = X̄_F X̄_Fᵀ`` formed
from the rows of F only; a projected step kept only when the label's dual objective increases, so
the method stays monotone). The run stops when the relative gap meets ``tol`` and
``certificate(α)`` (the formulation's scaled KKT residuals) does too
(:class:`mlsvm.solvers.result.CertifiedStop`). ``max_iter`` counts passes; reaching it warns with
the gap reached.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from mlsvm.solvers.result import CertifiedStop, SolverResult, relative_gap, warn_not_converged, warn_stalled

__all__ = ["solve_dcd", "CHECK_EVERY", "NEWTON_STEPS", "MAX_FACE"]

STOP_RULE = "relative duality gap"
#: passes between two certificates (each costs about two passes: W̄ from α, the scores, the step)
CHECK_EVERY = 10
#: Newton steps on the free face per certificate
NEWTON_STEPS = 3
#: a label gets Newton steps only once its relative gap is below this (its free set is then
#: nearly the optimum's; earlier, on bibtex, the steps raised the dual but not the gap)
NEWTON_BELOW = 1e-2
#: largest free set a Newton step factors (|F|³/3 flops per label)
MAX_FACE = 1500


def _label_objectives(features: sp.csr_matrix, signed: np.ndarray, C: float, alpha: np.ndarray):
    """Per label: primal ``½‖w̄_k‖² + C Σ hinge``, dual ``Σα_k − ½‖w̄_k‖²``, and the scores."""
    theta = alpha * signed
    weights, bias = features.T @ theta, theta.sum(axis=0)
    scores = features @ weights + bias
    norms = np.einsum("ij,ij->j", weights, weights) + bias * bias
    primal = 0.5 * norms + C * np.maximum(1.0 - signed * scores, 0.0).sum(axis=0)
    dual = alpha.sum(axis=0) - 0.5 * norms
    return primal, dual, weights, bias, scores


def _label_dual(features, y, C, a) -> float:
    """One label's dual objective ``Σα − ½‖X̄ᵀ(α ∘ y)‖²`` (to maximise)."""
    theta = a * y
    mapped = features.T @ theta
    total = theta.sum()
    return float(a.sum() - 0.5 * (mapped @ mapped + total * total))


def _face_direction(system, rhs):
    """``(d, ray)`` for the face's dual ascent, ``Q d = rhs`` (``rhs = −G_F``): Cholesky's solution
    when every pivot is above 1e-6 of the largest (the squared pivots are Q's successive Schur
    complements: within the 1e-12 range the eigenvalue cut below keeps); otherwise, from Q's
    eigendecomposition (eigenvalues below 1e-12 of the largest taken as 0), ``rhs``'s part in the
    null space when it exceeds 1e-8 of ``rhs`` (``ray`` True: the dual rises linearly along it),
    else the pseudo-inverse's solution."""
    try:
        factor = cho_factor(system, lower=True, check_finite=False)
        pivots = np.abs(np.diagonal(factor[0]))
        if pivots.min() > 1e-6 * pivots.max():
            return cho_solve(factor, rhs, check_finite=False), False
    except LinAlgError:
        pass
    values, vectors = np.linalg.eigh(system)
    null = values <= 1e-12 * max(float(values[-1]), np.finfo(float).tiny)
    ray = vectors[:, null] @ (vectors[:, null].T @ rhs)
    if np.abs(ray).max(initial=0.0) > 1e-8 * np.abs(rhs).max():
        return ray, True
    kept = ~null
    return vectors[:, kept] @ ((vectors[:, kept].T @ rhs) / values[kept]), False


def _to_first_bound(a, free, direction, C):
    """``(a_F + t d, t)`` with t the step at which the first free coordinate reaches its bound, which
    that coordinate then takes exactly."""
    room = np.where(direction > 0.0, C - a[free], a[free])
    ratios = np.full(free.size, np.inf)
    moving = direction != 0.0
    ratios[moving] = room[moving] / np.abs(direction[moving])
    blocking = int(np.argmin(ratios))
    trial = a.copy()
    trial[free] = np.clip(a[free] + ratios[blocking] * direction, 0.0, C)
    trial[free[blocking]] = C if direction[blocking] > 0.0 else 0.0
    return trial, ratios[blocking]


def _face_trials(a, free, direction, ray, C):
    """The points a face step tries, in order: along a ray, the one step to the first bound (the
    dual rises linearly, so no shorter step is better); otherwise ``Π_[0,C](a_F + t d)`` for
    ``t = 1, ½, … 1/32``, then, when the Newton step leaves the box, the step along d to the first
    bound: the dual is a concave quadratic along d with its maximum at t = 1, so it rises up to
    that bound. (A nearly singular face gives a long d whose projections all clip it into a lower
    dual; coordinate descent crawls along that direction at a rate 1 − O(λ_min/λ_max).)"""
    if ray:
        yield _to_first_bound(a, free, direction, C)[0]
        return
    for halvings in range(6):
        trial = a.copy()
        trial[free] = np.clip(a[free] + 0.5 ** halvings * direction, 0.0, C)
        yield trial
    trial, length = _to_first_bound(a, free, direction, C)
    if length < 1.0:
        yield trial


def _face_newton(features, signed, C, alpha, scores, labels, steps=NEWTON_STEPS):
    """Newton steps on the face of the free coordinates ``F = {0 < α < C}``, label by label:
    ``Q_FF d = −G_F`` with ``Q_FF = diag(y_F) X̄_F X̄_Fᵀ diag(y_F)`` formed from the rows of F only,
    then the projected step ``Π_[0,C](α_F + t d)`` with ``t = 1, ½, ¼ …`` kept only if the label's
    dual objective increases. Q_FF is singular when rows repeat or |F| exceeds the rank d + 1; then
    (:func:`_face_direction`) −G_F's part in its null space, if any, is a ray along which the dual
    rises linearly, and the step follows it to the first bound (the face has no maximiser: F must
    shrink); otherwise the step is the pseudo-inverse's. Monotone, so coordinate descent goes on
    from the result; returns the new α of ``labels``."""
    candidate = alpha[:, labels].copy()
    for j, k in enumerate(labels):
        y, a = signed[:, k], candidate[:, j]
        gradient = y * scores[:, k] - 1.0
        value = _label_dual(features, y, C, a)
        for _ in range(steps):
            free = np.flatnonzero((a > 0.0) & (a < C))
            if free.size == 0 or free.size > MAX_FACE or not np.any(np.abs(gradient[free]) > 1e-15):
                break
            rows = features[free]
            system = ((rows @ rows.T).toarray() + 1.0) * np.outer(y[free], y[free])
            direction, ray = _face_direction(system, -gradient[free])
            improved = False
            for trial in _face_trials(a, free, direction, ray, C):
                trial_value = _label_dual(features, y, C, trial)
                if trial_value > value:
                    a, value, improved = trial, trial_value, True
                    break
            if not improved:
                break
            theta = a * y
            gradient = y * (features @ (features.T @ theta) + theta.sum()) - 1.0
        candidate[:, j] = a
    return candidate


def solve_dcd(features, signed: np.ndarray, C: float, *, tol: float = 1e-6, max_iter: int = 1000,
              certificate=None, shrinking: bool = True, random_state=0, alpha0=None,
              name: str = "MatrixSVM(solver='dcd')") -> SolverResult:
    """Solve the hinge dual above by dual coordinate descent with shrinking and active-set steps.

    Returns ``dual = {"alpha"}`` (n × q) and ``primal = {"coef", "W", "b"}``: ``Θ = α ∘ Ys`` and
    ``W̄ = X̄ᵀΘ`` split into the weights (d × q) and the biases (q,); ``history`` has the relative gap at every check.

    Parameters
    ----------
    features : array or sparse matrix of shape (n, d)
        The features X (linear kernel); the column of ones is implied.
    signed : array of shape (n, q)
        ``Ys = 2Y − 1`` (±1).
    C : float
        Loss weight C > 0.
    tol : float
        Relative duality gap (and, with ``certificate``, largest scaled KKT residual) to reach.
    max_iter : int
        Passes over the data.
    certificate : callable or None
        ``certificate(alpha) -> float``: the largest scaled KKT residual the point will be graded on.
    shrinking : bool
        Leave out coordinates at a bound whose gradient points outwards (LIBLINEAR's rule).
    random_state : int, Generator or None
        Seed of the visiting order.
    alpha0 : array of shape (n, q) or None
        Warm start (clipped to the box; None: α = 0), e.g. the LIBLINEAR point of
        :mod:`mlsvm.solvers.matrix_svm_liblinear`.
    name : str
        Solver name for warnings.
    """
    start = time.perf_counter()
    X = sp.csr_matrix(features, dtype=np.float64)
    X.sum_duplicates()
    signed = np.asarray(signed, dtype=np.float64)
    n, q = signed.shape
    rng = np.random.default_rng(random_state)
    indptr, indices, data = X.indptr, X.indices, X.data
    inverse_diagonal = 1.0 / (np.asarray(X.multiply(X).sum(axis=1)).ravel() + 1.0)

    if alpha0 is None:
        alpha = np.zeros((n, q))
        weights, bias = np.zeros((X.shape[1], q)), np.zeros(q)
    else:
        alpha = np.clip(np.asarray(alpha0, dtype=np.float64), 0.0, C)
        theta = alpha * signed
        weights, bias = X.T @ theta, theta.sum(axis=0)
    row_indices = [indices[indptr[i]:indptr[i + 1]] for i in range(n)]
    row_values = [data[indptr[i]:indptr[i + 1]] for i in range(n)]
    rows = np.arange(n)
    stop = CertifiedStop(tol, certificate)
    history = {"relative_gap": [], "pass": [], "active_rows": []}
    passes, converged, gap = 0, False, np.inf
    while passes < max_iter:
        for i in rng.permutation(rows):
            cols, values, y = row_indices[i], row_values[i], signed[i]
            gradient = values @ weights[cols]
            gradient += bias
            gradient *= y
            gradient -= 1.0
            a = alpha[i]
            new = a - gradient * inverse_diagonal[i]
            np.clip(new, 0.0, C, out=new)
            new -= a                                  # the step Δα_i
            if not new.any():
                continue
            a += new                                  # α_i (a view) updated in place
            new *= y
            weights[cols] += np.outer(values, new)
            bias += new
        passes += 1
        check = passes % CHECK_EVERY == 0 or passes == max_iter
        if not (shrinking or check):
            continue
        # the full gradient: W̄ recomputed from α (no drift), one product O(nnz(X) q)
        primal, dual, weights, bias, scores = _label_objectives(X, signed, C, alpha)
        gradient = signed * scores - 1.0
        if shrinking:   # LIBLINEAR's rule, per (row, label), applied to whole rows at the end of a pass
            at_lower, at_upper = alpha <= 0.0, alpha >= C
            projected = np.where(at_lower, np.minimum(gradient, 0.0),
                                 np.where(at_upper, np.maximum(gradient, 0.0), gradient))
            largest, smallest = projected.max(axis=0), projected.min(axis=0)
            settled = (at_lower & (gradient > largest)) | (at_upper & (gradient < smallest))
            rows = np.flatnonzero(~settled.all(axis=1))
        history["active_rows"].append(int(rows.size))
        if not check:
            continue
        rows = np.arange(n)                           # every row back in after a certificate
        gap = float(relative_gap(primal.sum(), dual.sum()))
        if not gap <= stop.target:   # Newton on the free face of the labels close to, not at, their optimum
            label_gap = relative_gap(primal, dual)
            labels = np.flatnonzero((label_gap > stop.target) & (label_gap <= NEWTON_BELOW))
            alpha[:, labels] = _face_newton(X, signed, C, alpha, scores, labels)
            primal, dual, weights, bias, scores = _label_objectives(X, signed, C, alpha)
            gap = float(relative_gap(primal.sum(), dual.sum()))
        history["relative_gap"].append(gap)
        history["pass"].append(passes)
        if gap <= stop.target and stop.accept(alpha):
            converged = True
            break
        if stop.stalled:
            warn_stalled(name, STOP_RULE, gap, stop.residual, tol)
            break
    if not converged and not stop.stalled:
        warn_not_converged(name, STOP_RULE, gap, tol, max_iter)
    return SolverResult(primal={"coef": alpha * signed, "W": weights, "b": bias}, dual={"alpha": alpha}, converged=converged,
                        n_iter=passes, stop_value=gap, stop_rule=STOP_RULE,
                        solve_time=time.perf_counter() - start, history=history, solver="dcd")
