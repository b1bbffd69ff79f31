"""Compiled inner loops of the Rank-SVM decomposition (:mod:`mlsvm.solvers.rank_svm_decomposition`).

The sub-problem's active-set rounds and separable guess work on dense arrays of a few dozen to a
few hundred entries, and the working-set selection passes over all pairs a dozen times; written
with numpy, each was dozens of calls of microseconds each. Here they are plain loops
compiled by :func:`mlsvm.solvers.compiled.compiled` (IEEE arithmetic; ``NUMBA_DISABLE_JIT=1`` runs
them as Python). The decomposition module's functions (``_equality_qp``, ``_active_set``,
``_subproblem``, ``_separable_guess``, ``_Classes.select``, ...) call these and document the
mathematics; the arrays given must be contiguous float64 (``free`` boolean). The factorisations
are LAPACK's, called between the compiled halves (the measurements behind this split:
docs/rank_svm.md, issue 19's fifth pass).

* :func:`kkt_system`, :func:`kkt_solve`: one equality-constrained QP on a free set, before and after
  the LU of its regularised KKT matrix (LAPACK's dgetrf), with
  :func:`lu_solve` (dgetrs), two steps of iterative refinement and the least-norm correction of
  the equality residual (:func:`pseudo_inverse`).
* :func:`starting_partition`, :func:`active_set_round`: the primal–dual active-set rounds
  (Hintermüller, Ito & Kunisch) around that QP.
* :func:`separable_guess` with :func:`line_root` and :func:`small_solve`: the active set's
  separable starting guess.
* :func:`select_candidates`: the working-set selection's pass over all pairs.
* :func:`interior_point_residuals`, :func:`interior_point_step` with :func:`cholesky_solve` and
  :func:`small_cholesky`: the residuals and Newton matrix at an iterate of the sub-problem's
  interior point, and its predictor–corrector step after LAPACK's Cholesky (dpotrf) of that matrix.
* :func:`working_set_hessian`, :func:`beta_change`: a working set's Hessian, and the change of β
  its answer makes.
* :func:`label_components`: the independent equalities of a working set (connected components of
  its label graph, by union-find).
"""

from __future__ import annotations

import numpy as np

from mlsvm.solvers.compiled import argsort, compiled, stable_argsort

__all__ = ["lu_solve", "pseudo_inverse", "kkt_system", "kkt_solve", "starting_partition", "active_set_round",
           "small_solve", "line_root", "separable_guess", "select_candidates",
           "label_components", "cholesky_solve", "small_cholesky", "interior_point_step",
           "working_set_hessian", "beta_change", "interior_point_residuals"]


@compiled
def lu_solve(factors, pivots, rhs):
    """``x`` with ``A x = rhs`` from LAPACK's LU of A with partial pivoting (dgetrf: row k swapped with
    ``pivots[k]``, 0-based; L unit lower triangular below the diagonal, U on and above it), given as
    ``factors`` = the transpose of dgetrf's column-major array, so that each column of L and U is a
    contiguous row here and both substitutions run column by column; rhs unchanged.

    Parameters
    ----------
    factors : array of shape (n, n)
        The transpose of dgetrf's LU array of A (row j: column j of U up to the diagonal, then of L below it).
    pivots : int array of shape (n,)
        dgetrf's row interchanges, 0-based: row k swapped with row ``pivots[k]``.
    rhs : array of shape (n,)
        The right-hand side (not modified).

    Returns
    -------
    x : ndarray of shape (n,)
        The solution of ``A x = rhs``.
    """
    n = factors.shape[0]
    x = rhs.copy()
    for k in range(n):
        x[k], x[pivots[k]] = x[pivots[k]], x[k]
    for j in range(n):                          # L y = P rhs, column j of L is factors[j, j+1:]
        for i in range(j + 1, n):
            x[i] -= factors[j, i] * x[j]
    for j in range(n - 1, -1, -1):              # U x = y, column j of U is factors[j, :j+1]
        x[j] /= factors[j, j]
        for i in range(j):
            x[i] -= factors[j, i] * x[j]
    return x


@compiled
def pseudo_inverse(matrix, cut=1e-12):
    """Pseudo-inverse of a small symmetric PSD matrix: its symmetric part's eigenvalues below
    ``cut`` times the largest are dropped (all of them when none is positive).

    Parameters
    ----------
    matrix : array of shape (n, n)
        The matrix, symmetric PSD up to round-off (only its symmetric part is used).
    cut : float, optional
        The relative eigenvalue below which a direction counts as null.

    Returns
    -------
    ndarray of shape (n, n)
        Its pseudo-inverse.
    """
    n = matrix.shape[0]
    result = np.zeros((n, n))
    if n == 0:
        return result
    values, vectors = np.linalg.eigh(0.5 * (matrix + matrix.T))
    threshold = cut * max(max(values.max(), 0.0), 1e-300)
    for k in range(n):
        if values[k] > threshold:
            for i in range(n):
                scaled = vectors[i, k] / values[k]
                for j in range(n):
                    result[i, j] += scaled * vectors[j, k]
    return result


@compiled
def kkt_system(hessian, gradient, equality, old, candidate, free):
    """The KKT system of the equality QP (the decomposition's ``_equality_qp``): ``[H_FF E_Fᵀ; E_F 0]``,
    the same with ``+εI`` / ``−εI`` on its two diagonal blocks (ε = 1e-12 max(1, max diag H_FF)),
    the right-hand side ``[−g_F − H_FB d_B; −E_B d_B]`` and ``d = candidate − old`` (its free entries
    to be solved for). H is symmetric: H_FF is read from its upper triangle (the system is exactly
    symmetric, so LAPACK may factor its transpose) and H_FB from its rows of the values that moved.

    Parameters
    ----------
    hessian : array of shape (m, m)
        The sub-problem's Hessian H (symmetric).
    gradient : array of shape (m,)
        The gradient g at ``old``.
    equality : array of shape (rows, m)
        The equality matrix E (``Ed = 0``).
    old : array of shape (m,)
        The current values.
    candidate : array of shape (m,)
        The values, those off ``free`` fixed (on a bound); its free entries only seed ``change``'s, solved for.
    free : bool array of shape (m,)
        The free set F.

    Returns
    -------
    system : ndarray of shape (n, n)
        ``[H_FF E_Fᵀ; E_F 0]``, ``n = |F| + rows``.
    regularised : ndarray of shape (n, n)
        The same with ``+εI`` / ``−εI`` on its diagonal blocks (to be factored by LAPACK's dgetrf).
    rhs : ndarray of shape (n,)
        ``[−g_F − H_FB d_B; −E_B d_B]``.
    change : ndarray of shape (m,)
        ``d = candidate − old``; its free entries are overwritten by :func:`kkt_solve`.
    """
    m, rows = old.size, equality.shape[0]
    change = candidate - old
    free_index = np.flatnonzero(free)
    size = free_index.size
    n = size + rows
    system = np.zeros((n, n))
    rhs = np.zeros(n)
    top = 0.0
    for a in range(size):
        s = free_index[a]
        for b in range(a, size):
            system[a, b] = system[b, a] = hessian[s, free_index[b]]
        for r in range(rows):
            system[a, size + r] = equality[r, s]
            system[size + r, a] = equality[r, s]
        top = max(top, hessian[s, s])
        rhs[a] = -gradient[s]
    for t in range(m):
        if not free[t] and change[t] != 0.0:
            for a in range(size):
                rhs[a] -= hessian[t, free_index[a]] * change[t]
            for r in range(rows):
                rhs[size + r] -= equality[r, t] * change[t]
    epsilon = 1e-12 * max(1.0, top)
    regularised = system.copy()
    for a in range(size):
        regularised[a, a] += epsilon
    for r in range(size, n):
        regularised[r, r] -= epsilon
    return system, regularised, rhs, change


@compiled
def kkt_solve(factors, pivots, system, rhs, equality, free, change):
    """Finish the equality QP from the LU ``(factors, pivots)`` (as :func:`lu_solve` takes it) of the
    regularised system of :func:`kkt_system`: the solution, two steps of iterative refinement on the unregularised
    ``system``, the least-norm correction of the equality residual on the free values when it
    exceeds 1e-15 max(1, max|d_F|), written into ``change``'s free entries. Returns ``(d, ν)``.

    Parameters
    ----------
    factors : array of shape (n, n)
        The transpose of dgetrf's LU array of :func:`kkt_system`'s ``regularised`` (``n = |F| + rows``).
    pivots : int array of shape (n,)
        dgetrf's row interchanges, 0-based.
    system : array of shape (n, n)
        The unregularised KKT matrix of :func:`kkt_system`.
    rhs : array of shape (n,)
        The right-hand side of :func:`kkt_system`.
    equality : array of shape (rows, m)
        The equality matrix E.
    free : bool array of shape (m,)
        The free set F.
    change : array of shape (m,)
        :func:`kkt_system`'s ``d``; its free entries are set to the solution ``d_F`` in place.

    Returns
    -------
    change : ndarray of shape (m,)
        The change d (the array ``change`` given).
    nu : ndarray of shape (rows,)
        The multipliers ν of the equalities.
    """
    rows = equality.shape[0]
    free_index = np.flatnonzero(free)
    size = free_index.size
    solution = lu_solve(factors, pivots, rhs)
    for _ in range(2):
        solution += lu_solve(factors, pivots, rhs - np.dot(system, solution))
    step = solution[:size].copy()
    residual = np.zeros(rows)
    largest_residual, largest_step = 0.0, 0.0
    for r in range(rows):
        total = -rhs[size + r]
        for a in range(size):
            total += equality[r, free_index[a]] * step[a]
        residual[r] = total
        largest_residual = max(largest_residual, abs(total))
    for a in range(size):
        largest_step = max(largest_step, abs(step[a]))
    if rows and largest_residual > 1e-15 * max(1.0, largest_step):
        gram_rows = np.zeros((rows, rows))      # E_F E_Fᵀ
        for r in range(rows):
            for q in range(rows):
                total = 0.0
                for a in range(size):
                    total += equality[r, free_index[a]] * equality[q, free_index[a]]
                gram_rows[r, q] = total
        weights = np.dot(pseudo_inverse(gram_rows), residual)
        for a in range(size):
            for r in range(rows):
                step[a] -= equality[r, free_index[a]] * weights[r]
    for a in range(size):
        change[free_index[a]] = step[a]
    return change, solution[size:].copy()


@compiled
def starting_partition(gradient, old, upper, start, from_start):
    """The active set's first partition ``(free, bound_values)``: with ``from_start``, that of
    ``start`` (free strictly inside the box, else on the bound it reaches); otherwise the bounds
    ``old`` sits on, a value on a bound freed when its gradient points inward.

    Parameters
    ----------
    gradient : array of shape (m,)
        The gradient g at ``old``.
    old : array of shape (m,)
        The current values.
    upper : array of shape (m,)
        The upper bounds u.
    start : array of shape (m,)
        The starting guess (read only with ``from_start``).
    from_start : bool
        Partition by ``start`` rather than by the bounds ``old`` sits on.

    Returns
    -------
    free : bool ndarray of shape (m,)
        The free set.
    bound_values : ndarray of shape (m,)
        The bound (0 or ``u_t``) each value off ``free`` is fixed on.
    """
    m = old.size
    free = np.empty(m, np.bool_)
    bound_values = np.zeros(m)
    for t in range(m):
        if from_start:
            free[t] = start[t] > 0.0 and start[t] < upper[t]
            if start[t] >= upper[t]:
                bound_values[t] = upper[t]
        else:
            at_lower, at_upper = old[t] <= 0.0, old[t] >= upper[t]
            free[t] = not (at_lower and gradient[t] >= 0.0) and not (at_upper and gradient[t] <= 0.0)
            if at_upper:
                bound_values[t] = upper[t]
    return free, bound_values


@compiled
def active_set_round(hessian, gradient, equality, old, upper, change, nu, free, bound_values):
    """One primal–dual active-set round after the equality QP's ``(d, ν)`` on the free set: 0 when
    the answer fails a check (the equalities beyond 1e-12 max(1, max u): the fixed values leave a
    flow the free ones cannot balance; a free value's reduced gradient ``g + Hd + Eᵀν`` beyond
    1e-10 max(1, max|g|): singular and inconsistent, unbounded on the free set); 1 when nothing
    changes (``old + d`` is a KKT point of the sub-problem, to be clipped to the box); else 2, after
    fixing in place the free values that left the box on the bound they crossed (beyond 1e-15
    max(1, max u): a value 4e-27 below 0 had made the rounds cycle on a sub-problem whose only
    feasible point is its start) and freeing the fixed ones whose multiplier has the wrong sign
    (beyond 1e-12 max(1, max|g|)). H is symmetric.

    Parameters
    ----------
    hessian : array of shape (m, m)
        The sub-problem's Hessian H (symmetric).
    gradient : array of shape (m,)
        The gradient g at ``old``.
    equality : array of shape (rows, m)
        The equality matrix E.
    old : array of shape (m,)
        The current values.
    upper : array of shape (m,)
        The upper bounds u.
    change : array of shape (m,)
        The equality QP's change d (:func:`kkt_solve`).
    nu : array of shape (rows,)
        The equality QP's multipliers ν.
    free : bool array of shape (m,)
        The free set; updated in place (status 2).
    bound_values : array of shape (m,)
        The bound (0 or ``u_t``) each value off ``free`` is fixed on; updated in place (status 2).

    Returns
    -------
    int
        0 (the answer fails a check), 1 (a KKT point) or 2 (the partition changed).
    """
    m, rows = old.size, equality.shape[0]
    scale, top = 1.0, 1.0
    for t in range(m):
        scale = max(scale, abs(gradient[t]))
        top = max(top, upper[t])
    for r in range(rows):
        total = 0.0
        for t in range(m):
            total += equality[r, t] * change[t]
        if not abs(total) <= 1e-12 * top:
            return 0
    multiplier = gradient.copy()
    for t in range(m):
        for r in range(rows):
            multiplier[t] += equality[r, t] * nu[r]
    for s in range(m):                          # + H d, by the rows of the values that moved
        if change[s] != 0.0:
            for t in range(m):
                multiplier[t] += hessian[s, t] * change[s]
    for t in range(m):
        if free[t] and not abs(multiplier[t]) <= 1e-10 * scale:
            return 0
    settled = 1
    for t in range(m):
        if free[t]:
            value = old[t] + change[t]
            if value < -1e-15 * top:            # crossed its lower bound (beyond round-off): fixed there
                free[t], bound_values[t], settled = False, 0.0, 2
            elif value > upper[t] + 1e-15 * top:
                free[t], bound_values[t], settled = False, upper[t], 2
        elif ((bound_values[t] == 0.0 and multiplier[t] < -1e-12 * scale)
              or (bound_values[t] > 0.0 and multiplier[t] > 1e-12 * scale)):
            free[t], settled = True, 2          # wrong-signed multiplier: freed
    return settled


@compiled
def small_solve(matrix, rhs):
    """``x`` with ``A x = rhs`` for a small square A by Gaussian elimination with partial pivoting
    (as LAPACK's dgesv); ``(x, False)`` when a column has no nonzero pivot. A and rhs unchanged.

    Parameters
    ----------
    matrix : array of shape (n, n)
        The matrix A (not modified).
    rhs : array of shape (n,)
        The right-hand side (not modified).

    Returns
    -------
    x : ndarray of shape (n,)
        The solution (meaningless when ``nonsingular`` is False).
    nonsingular : bool
        False when elimination met a column with no nonzero pivot.
    """
    n = matrix.shape[0]
    a, x = matrix.copy(), rhs.copy()
    for k in range(n):
        pivot_row, largest = k, abs(a[k, k])
        for i in range(k + 1, n):
            if abs(a[i, k]) > largest:
                pivot_row, largest = i, abs(a[i, k])
        if not largest > 0.0:
            return x, False
        if pivot_row != k:
            for j in range(n):
                a[k, j], a[pivot_row, j] = a[pivot_row, j], a[k, j]
            x[k], x[pivot_row] = x[pivot_row], x[k]
        for i in range(k + 1, n):
            factor = a[i, k] / a[k, k]
            for j in range(k + 1, n):
                a[i, j] -= factor * a[k, j]
            x[i] -= factor * x[k]
    for i in range(n - 1, -1, -1):
        total = x[i]
        for j in range(i + 1, n):
            total -= a[i, j] * x[j]
        x[i] = total / a[i, i]
    return x, True


@compiled
def line_root(start, rate, direction, upper, slope):
    """The root ``t > 0`` of ``φ'(t) = aᵀclip(p − q t, 0, u) − sᵀe`` (``p = start``, ``q = rate``,
    ``a = direction``, ``φ'(0) = slope > 0``; see the decomposition's ``_line_root``), walking the
    breakpoints in increasing order: pair t is unclipped on one interval of t, where it adds
    ``−a_t q_t`` to φ''. The nearest root: φ' within 1e-13 Σ|a|u (its round-off) of 0 counts as 0.

    Parameters
    ----------
    start : array of shape (m,)
        ``p = old − (g + Eᵀμ)/h``, the unclipped values at ``t = 0``.
    rate : array of shape (m,)
        ``q = a/h``, their rate of decrease in t.
    direction : array of shape (m,)
        ``a = Eᵀs``, the Newton step s of the multipliers mapped to the values.
    upper : array of shape (m,)
        The upper bounds u.
    slope : float
        ``φ'(0) = sᵀ(E y(μ) − E old) > 0``.

    Returns
    -------
    float
        The step length ``t > 0``.
    """
    m = start.size
    times, changes = np.empty(2 * m), np.empty(2 * m)
    events, second = 0, 0.0                     # φ'' just after 0
    for t in range(m):
        if rate[t] == 0.0:
            continue
        at_zero, at_upper = start[t] / rate[t], (start[t] - upper[t]) / rate[t]
        enters, leaves = min(at_zero, at_upper), max(at_zero, at_upper)
        curvature = direction[t] * rate[t]
        if enters <= 0.0 and leaves > 0.0:
            second -= curvature
        if enters > 0.0:
            times[events], changes[events] = enters, -curvature
            events += 1
        if leaves > 0.0:
            times[events], changes[events] = leaves, curvature
            events += 1
    if events == 0:
        return slope / -second if second < 0.0 else 1.0
    noise = 0.0                                 # φ''s round-off: its terms' size times 1e-13
    for t in range(m):
        noise += abs(direction[t]) * upper[t]
    noise *= 1e-13
    order = stable_argsort(times[:events])
    begin, value = 0.0, slope                   # φ' at the last event passed
    for e in range(events):
        event = times[order[e]]
        next_value = value + second * (event - begin)
        if next_value <= noise:
            # the root lies before this event, or φ' jumps over 0 at it, or φ' is 0 within its
            # round-off from here on a flat piece: the nearest maximiser, not one along ψ's flat
            # directions, where μ could travel far enough for the pairs' moves to drown in its round-off
            return min(begin + value / -second, event) if second < 0.0 else event
        begin, value = event, next_value
        second += changes[order[e]]
    return begin + (value / -second if second < 0.0 else 0.0)


@compiled
def separable_guess(diagonal, gradient, equality, old, upper, mu, iterations):
    """The decomposition's ``_separable_guess``: ``y(μ) = clip(old − (g + Eᵀμ)/h, 0, u)`` with μ the
    root of ``E y(μ) = E old`` by at most ``iterations`` Newton steps on the concave dual (Jacobian
    ``E_F diag(1/h_F) E_Fᵀ`` over the values F whose unclipped value lies in [0, u] within the
    tolerance below, those at a kink included, plus a ridge of 1e-9 of max(1, its largest diagonal
    entry)) with the exact line search :func:`line_root`, from ``mu``; where the ridge sets the step
    (the residual has a part along the Jacobian's eigenvectors below 1e-6 of its largest eigenvalue,
    where the dual is linear) the step is that part alone, ``r − J J⁺r`` (:func:`pseudo_inverse`),
    else the Newton step ``J⁺r`` on the other eigenvectors. Stops when the
    equalities hold within 1e-12 max(1, max u) or the Jacobian is singular. Returns ``(y, μ)``.

    Parameters
    ----------
    diagonal : array of shape (m,)
        The Hessian's diagonal h.
    gradient : array of shape (m,)
        The gradient g at ``old``.
    equality : array of shape (rows, m)
        The equality matrix E.
    old : array of shape (m,)
        The current values.
    upper : array of shape (m,)
        The upper bounds u.
    mu : array of shape (rows,)
        The starting multipliers μ (not modified).
    iterations : int
        Largest number of Newton steps.

    Returns
    -------
    y : ndarray of shape (m,)
        The guess ``y(μ)``.
    mu : ndarray of shape (rows,)
        The multipliers μ reached.
    """
    rows, m = equality.shape[0], old.size
    top = 0.0
    for t in range(m):
        top = max(top, diagonal[t])
    floor = 1e-12 * max(top, 1e-300)
    weight = np.empty(m)
    for t in range(m):
        weight[t] = 1.0 / max(diagonal[t], floor)
    target = np.zeros(rows)
    tolerance = 1.0
    for t in range(m):
        tolerance = max(tolerance, upper[t])
        for r in range(rows):
            target[r] += equality[r, t] * old[t]
    tolerance *= 1e-12
    mu = mu.copy()
    start, y = np.empty(m), np.empty(m)
    residual, jacobian = np.empty(rows), np.empty((rows, rows))
    direction = np.empty(m)
    for _ in range(iterations if rows else 0):
        for t in range(m):
            total = gradient[t]
            for r in range(rows):
                total += equality[r, t] * mu[r]
            start[t] = old[t] - total * weight[t]
            y[t] = min(max(start[t], 0.0), upper[t])
        largest = 0.0
        for r in range(rows):
            total = -target[r]
            for t in range(m):
                total += equality[r, t] * y[t]
            residual[r] = total
            largest = max(largest, abs(total))
        if largest <= tolerance:
            break
        jacobian[:, :] = 0.0
        for t in range(m):
            if start[t] >= -tolerance and start[t] <= upper[t] + tolerance:
                for r in range(rows):
                    if equality[r, t] != 0.0:
                        for q in range(rows):
                            jacobian[r, q] += equality[r, t] * weight[t] * equality[q, t]
        ridge = 1.0
        for r in range(rows):
            ridge = max(ridge, jacobian[r, r])
        for r in range(rows):
            jacobian[r, r] += 1e-9 * ridge
        step, nonsingular = small_solve(jacobian, residual)
        if not nonsingular:                     # singular despite the ridge: keep the guess so far
            break
        largest_step = 0.0
        for r in range(rows):
            largest_step = max(largest_step, abs(step[r]))
        if 1e-9 * ridge * largest_step > 1e-6 * largest:
            # the ridge, not the pairs, set the step: the residual has a part along eigenvectors of
            # the Jacobian with eigenvalues below 1e-6 of its largest, where ψ is (nearly) linear.
            # Scaled by 1/ridge that part would carry μ far along ψ's flat directions, where the
            # pairs' O(1) moves fall below μ's round-off. The step is that part alone (steepest
            # ascent where ψ is linear; the line search stops it where ψ stops rising), or, when
            # the residual has none, the Newton step on the other eigenvectors
            for r in range(rows):
                jacobian[r, r] -= 1e-9 * ridge
            newton = np.dot(pseudo_inverse(jacobian, 1e-6), residual)
            flat = residual - np.dot(jacobian, newton)
            linear = 0.0
            for r in range(rows):
                linear = max(linear, abs(flat[r]))
            step[:] = flat if linear > tolerance else newton
        slope = 0.0
        for r in range(rows):
            slope += step[r] * residual[r]
        for t in range(m):
            total = 0.0
            for r in range(rows):
                total += equality[r, t] * step[r]
            direction[t] = total
        length = line_root(start, direction * weight, direction, upper, slope)
        for r in range(rows):
            mu[r] += length * step[r]
    for t in range(m):
        total = gradient[t]
        for r in range(rows):
            total += equality[r, t] * mu[r]
        y[t] = min(max(old[t] - total * weight[t], 0.0), upper[t])
    return y, mu


@compiled
def select_candidates(orientation, index, n_classes, alpha, upper, gradient):
    """The working-set candidates of the decomposition's ``_Classes.select`` over positions grouped
    by class (``index``: each position's class, sorted): with ``value = −y g`` and ``I_up`` / ``I_low``
    LIBSVM's sets, each class's extremes (its first position of ``I_up`` with the largest value and
    of ``I_low`` with the smallest; sorted, unique), and the violators with a positive score against
    the best partner of their class: ``I_up`` positions with ``value ≥ min(best_up, best_low)``,
    scored ``value − best_low``, then ``I_low`` ones with ``value ≤ max(best_up, best_low)``, scored
    ``best_up − value`` (each in position order). Returns ``(extremes, violators, scores)``.

    Parameters
    ----------
    orientation : array of shape (p,)
        LIBSVM's orientation ``y_t`` (±1) of each position.
    index : int array of shape (p,)
        The class of each position (sorted, 0 … ``n_classes − 1``).
    n_classes : int
        Number of classes.
    alpha : array of shape (p,)
        The values α.
    upper : array of shape (p,)
        The upper bounds u.
    gradient : array of shape (p,)
        The gradient g.

    Returns
    -------
    extremes : int ndarray of shape (e,)
        The classes' extreme positions, sorted and unique (e ≤ 2 ``n_classes``).
    violators : int ndarray of shape (v,)
        The violators' positions, ``I_up`` ones first.
    scores : ndarray of shape (v,)
        Their scores (> 0).
    """
    size = alpha.size
    value = np.empty(size)
    up, low = np.empty(size, np.bool_), np.empty(size, np.bool_)
    best_up, best_low = np.full(n_classes, -np.inf), np.full(n_classes, np.inf)
    for t in range(size):
        value[t] = -orientation[t] * gradient[t]
        below, above = alpha[t] < upper[t], alpha[t] > 0.0
        if orientation[t] > 0.0:                # y = +1: α can grow in I_up; y = −1: shrink
            up[t], low[t] = below, above
        else:
            up[t], low[t] = above, below
        c = index[t]
        if up[t] and value[t] > best_up[c]:
            best_up[c] = value[t]
        if low[t] and value[t] < best_low[c]:
            best_low[c] = value[t]
    up_extreme, low_extreme = np.full(n_classes, -1), np.full(n_classes, -1)
    violators, scores = np.empty(2 * size, np.int64), np.empty(2 * size)
    count = 0
    for t in range(size):
        c = index[t]
        if up[t] and value[t] >= min(best_up[c], best_low[c]):
            if value[t] == best_up[c] and up_extreme[c] < 0:
                up_extreme[c] = t
            score = value[t] - best_low[c]
            if score > 0.0:
                violators[count], scores[count] = t, score
                count += 1
    for t in range(size):
        c = index[t]
        if low[t] and value[t] <= max(best_up[c], best_low[c]):
            if value[t] == best_low[c] and low_extreme[c] < 0:
                low_extreme[c] = t
            score = best_up[c] - value[t]
            if score > 0.0:
                violators[count], scores[count] = t, score
                count += 1
    extremes = np.concatenate((up_extreme, low_extreme))
    extremes = extremes[extremes >= 0]
    extremes = extremes[argsort(extremes)]
    distinct = np.ones(extremes.size, dtype=np.bool_)
    distinct[1:] = extremes[1:] != extremes[:-1]
    return extremes[distinct], violators[:count], scores[:count]


@compiled
def label_components(incidence):
    """For a label incidence matrix (labels × pairs): the labels touched that are not the first
    (smallest) label of their connected component in the label graph (two labels joined when a
    column is nonzero on both), in increasing order, and the first label of each one's component.
    Returns ``(labels, first_labels)``.

    Parameters
    ----------
    incidence : array of shape (Q, m)
        The label incidence matrix of a working set (each column a +1 and a −1).

    Returns
    -------
    labels : int ndarray of shape (c,)
        The labels touched that are not the first of their component, increasing.
    first_labels : int ndarray of shape (c,)
        The first label of each one's component.
    """
    n_labels, n_pairs = incidence.shape
    parent = np.arange(n_labels)                # union-find; a root is its component's smallest label
    touched = np.zeros(n_labels, np.bool_)
    for t in range(n_pairs):
        previous = -1
        for k in range(n_labels):
            if incidence[k, t] != 0.0:
                touched[k] = True
                if previous >= 0:
                    a, b = previous, k
                    while parent[a] != a:
                        a = parent[a]
                    while parent[b] != b:
                        b = parent[b]
                    parent[max(a, b)] = min(a, b)
                previous = k
    labels, first_labels = np.empty(n_labels, np.int64), np.empty(n_labels, np.int64)
    count = 0
    for k in range(n_labels):
        root = k
        while parent[root] != root:
            root = parent[root]
        if touched[k] and root != k:
            labels[count], first_labels[count] = k, root
            count += 1
    return labels[:count], first_labels[:count]


@compiled
def cholesky_solve(factor, rhs):
    """``x`` with ``L Lᵀ x = rhs`` from LAPACK's lower Cholesky factor (dpotrf), given as ``factor`` =
    the transpose of dpotrf's column-major array (row j holds column j of L from the diagonal on;
    the other entries are not read); rhs unchanged.

    Parameters
    ----------
    factor : array of shape (n, n)
        The transpose of dpotrf's array of the lower factor L (row j: column j of L from the diagonal on).
    rhs : array of shape (n,)
        The right-hand side (not modified).

    Returns
    -------
    x : ndarray of shape (n,)
        The solution of ``L Lᵀ x = rhs``.
    """
    n = factor.shape[0]
    x = rhs.copy()
    for j in range(n):                          # L z = rhs, column by column
        x[j] /= factor[j, j]
        for i in range(j + 1, n):
            x[i] -= factor[j, i] * x[j]
    for i in range(n - 1, -1, -1):              # Lᵀ x = z, row i of Lᵀ is factor[i, i:]
        total = x[i]
        for j in range(i + 1, n):
            total -= factor[i, j] * x[j]
        x[i] = total / factor[i, i]
    return x


@compiled
def small_cholesky(matrix):
    """Lower Cholesky factor of a small symmetric matrix; ``(L, False)`` when a pivot is not positive
    (as LAPACK's dpotrf fails).

    Parameters
    ----------
    matrix : array of shape (n, n)
        The symmetric matrix (its lower triangle is read).

    Returns
    -------
    lower : ndarray of shape (n, n)
        The lower factor L (incomplete when ``definite`` is False).
    definite : bool
        False when a pivot is not positive.
    """
    n = matrix.shape[0]
    lower = np.zeros((n, n))
    for j in range(n):
        total = matrix[j, j]
        for k in range(j):
            total -= lower[j, k] * lower[j, k]
        if not total > 0.0:
            return lower, False
        lower[j, j] = np.sqrt(total)
        for i in range(j + 1, n):
            total = matrix[i, j]
            for k in range(j):
                total -= lower[i, k] * lower[j, k]
            lower[i, j] = total / lower[j, j]
    return lower, True


@compiled
def _to_boundary(value, change):
    """Largest ``t ≤ 1`` with ``value + t·change ≥ 0`` (``value > 0``)."""
    length = 1.0
    for t in range(value.size):
        if change[t] < 0.0:
            length = min(length, -value[t] / change[t])
    return length


@compiled
def _newton_direction(factor, equality, m_inv_et, schur_factor, schur_pinv, schur_definite, y, slack,
                      lower_mult, upper_mult, dual_residual, primal_residual, target_lower, target_upper):
    """The interior point's Newton direction ``(Δy, Δν, Δz_lower, Δz_upper)`` for the complementarity
    targets given (see :func:`interior_point_step`)."""
    rows = equality.shape[0]
    rhs = -dual_residual + target_lower / y - lower_mult - target_upper / slack + upper_mult
    m_inv_rhs = cholesky_solve(factor, rhs)
    schur_rhs = np.dot(equality, m_inv_rhs) + primal_residual
    if schur_definite:                          # L Lᵀ d_ν = schur_rhs
        d_nu = schur_rhs.copy()
        for i in range(rows):
            total = d_nu[i]
            for j in range(i):
                total -= schur_factor[i, j] * d_nu[j]
            d_nu[i] = total / schur_factor[i, i]
        for i in range(rows - 1, -1, -1):
            total = d_nu[i]
            for j in range(i + 1, rows):
                total -= schur_factor[j, i] * d_nu[j]
            d_nu[i] = total / schur_factor[i, i]
    else:
        d_nu = np.dot(schur_pinv, schur_rhs)
    d_y = m_inv_rhs - np.dot(d_nu, m_inv_et)
    d_lower = (target_lower - y * lower_mult - lower_mult * d_y) / y
    d_upper = (target_upper - slack * upper_mult + upper_mult * d_y) / slack
    return d_y, d_nu, d_lower, d_upper


@compiled
def interior_point_step(factor, m_inv_et, equality, y, slack, lower_mult, upper_mult, nu, dual_residual,
                        primal_residual, mu):
    """One Mehrotra predictor–corrector step of the decomposition's ``_subproblem`` (``min ½yᵀHy +
    cᵀy`` s.t. ``Ey = e``, ``0 ≤ y ≤ u``, slack ``u − y``, multipliers ``z_lower``, ``z_upper``, ν),
    given the Cholesky factor of ``M = H + diag(z_lower/y + z_upper/slack)`` (as
    :func:`cholesky_solve` takes it), ``(M⁻¹Eᵀ)ᵀ`` (rows × m, from LAPACK's dpotrs on all rows of E
    at once), the residuals ``Hy + c + Eᵀν − z_lower + z_upper``, ``Ey − e`` and μ. The Schur
    complement ``E M⁻¹ Eᵀ`` is factored by Cholesky, or inverted on its range (:func:`pseudo_inverse`)
    when round-off makes that fail; the affine direction's step lengths give ``σ = (μ_aff/μ)³``; the
    corrected direction is taken with 0.995 of the largest step keeping every value and multiplier
    positive. Returns the new ``(y, slack, z_lower, z_upper, ν)``.

    Parameters
    ----------
    factor : array of shape (m, m)
        The transpose of dpotrf's array of M's lower Cholesky factor.
    m_inv_et : array of shape (rows, m)
        ``(M⁻¹Eᵀ)ᵀ``.
    equality : array of shape (rows, m)
        The equality matrix E.
    y : array of shape (m,)
        The values y (0 < y < u).
    slack : array of shape (m,)
        The slacks ``u − y`` (> 0).
    lower_mult : array of shape (m,)
        The multipliers ``z_lower`` of ``y ≥ 0`` (> 0).
    upper_mult : array of shape (m,)
        The multipliers ``z_upper`` of ``y ≤ u`` (> 0).
    nu : array of shape (rows,)
        The multipliers ν of ``Ey = e``.
    dual_residual : array of shape (m,)
        ``Hy + c + Eᵀν − z_lower + z_upper`` (:func:`interior_point_residuals`).
    primal_residual : array of shape (rows,)
        ``Ey − e``.
    mu : float
        The complementarity measure μ.

    Returns
    -------
    y, slack, lower_mult, upper_mult : ndarray of shape (m,)
        The new values, slacks and multipliers ``z_lower``, ``z_upper`` (new arrays; the inputs are not modified).
    nu : ndarray of shape (rows,)
        The new multipliers ν.
    """
    m, rows = y.size, equality.shape[0]
    schur = np.dot(equality, m_inv_et.T)
    schur_factor, schur_definite = small_cholesky(schur)
    schur_pinv = np.zeros((rows, rows)) if schur_definite else pseudo_inverse(schur)
    zeros = np.zeros(m)
    d_y, _, d_lower, d_upper = _newton_direction(factor, equality, m_inv_et, schur_factor, schur_pinv,
                                                 schur_definite, y, slack, lower_mult, upper_mult,
                                                 dual_residual, primal_residual, zeros, zeros)
    primal_step = min(_to_boundary(y, d_y), _to_boundary(slack, -d_y))
    dual_step = min(_to_boundary(lower_mult, d_lower), _to_boundary(upper_mult, d_upper))
    mu_affine = (np.dot(y + primal_step * d_y, lower_mult + dual_step * d_lower)
                 + np.dot(slack - primal_step * d_y, upper_mult + dual_step * d_upper)) / (2 * m)
    sigma = (mu_affine / mu) ** 3
    d_y, d_nu, d_lower, d_upper = _newton_direction(factor, equality, m_inv_et, schur_factor, schur_pinv,
                                                    schur_definite, y, slack, lower_mult, upper_mult,
                                                    dual_residual, primal_residual,
                                                    sigma * mu - d_y * d_lower, sigma * mu + d_y * d_upper)
    step = 0.995 * min(_to_boundary(y, d_y), _to_boundary(slack, -d_y),
                       _to_boundary(lower_mult, d_lower), _to_boundary(upper_mult, d_upper))
    return (y + step * d_y, slack - step * d_y, lower_mult + step * d_lower, upper_mult + step * d_upper,
            nu + step * d_nu)


@compiled
def working_set_hessian(gram, rows_of, relevant, irrelevant):
    """The sub-problem's Hessian ``H_st = K(x_i, x_j) (e_k − e_l)ᵀ(e_k' − e_l')`` for the pairs
    ``(i, k, l)`` given by their instance rows, relevant and irrelevant labels.

    Parameters
    ----------
    gram : array of shape (n, n)
        The Gram matrix K of the instances.
    rows_of : int array of shape (m,)
        The instance i (row of K) of each pair.
    relevant : int array of shape (m,)
        The relevant label k of each pair.
    irrelevant : int array of shape (m,)
        The irrelevant label l of each pair.

    Returns
    -------
    ndarray of shape (m, m)
        The Hessian H.
    """
    size = rows_of.size
    hessian = np.empty((size, size))
    for s in range(size):
        for t in range(size):
            labels = (int(relevant[s] == relevant[t]) - int(relevant[s] == irrelevant[t])
                      - int(irrelevant[s] == relevant[t]) + int(irrelevant[s] == irrelevant[t]))
            hessian[s, t] = gram[rows_of[s], rows_of[t]] * labels
    return hessian


@compiled
def beta_change(position, relevant, irrelevant, change, n_instances, n_labels):
    """``Δβ`` on the working set's instances: ``+Δα_t`` at (instance, relevant label) and ``−Δα_t`` at
    (instance, irrelevant label) of every pair t that moved (``position``: its instance's row).

    Parameters
    ----------
    position : int array of shape (m,)
        Each pair's instance as a row of the result (0 … ``n_instances − 1``).
    relevant : int array of shape (m,)
        The relevant label k of each pair.
    irrelevant : int array of shape (m,)
        The irrelevant label l of each pair.
    change : array of shape (m,)
        The change Δα of each pair.
    n_instances : int
        Number of the working set's instances.
    n_labels : int
        Number of labels Q.

    Returns
    -------
    ndarray of shape (n_instances, n_labels)
        Δβ on those instances.
    """
    result = np.zeros((n_instances, n_labels))
    for t in range(change.size):
        if change[t] != 0.0:
            result[position[t], relevant[t]] += change[t]
    for t in range(change.size):
        if change[t] != 0.0:
            result[position[t], irrelevant[t]] -= change[t]
    return result


@compiled
def interior_point_residuals(hessian, linear, equality, target, y, slack, lower_mult, upper_mult, nu):
    """At an iterate of the decomposition's ``_subproblem``: the residuals ``Hy + c + Eᵀν − z_lower +
    z_upper`` and ``Ey − e``, μ = ``(yᵀz_lower + slackᵀz_upper)/(2m)``, the residuals' largest
    magnitudes (NaN if one is), and the Newton matrix ``M = H + diag(z_lower/y + z_upper/slack)``.

    Parameters
    ----------
    hessian : array of shape (m, m)
        The Hessian H (symmetric).
    linear : array of shape (m,)
        The linear term c.
    equality : array of shape (rows, m)
        The equality matrix E.
    target : array of shape (rows,)
        The right-hand side e of ``Ey = e``.
    y : array of shape (m,)
        The values y (0 < y < u).
    slack : array of shape (m,)
        The slacks ``u − y`` (> 0).
    lower_mult : array of shape (m,)
        The multipliers ``z_lower`` of ``y ≥ 0`` (> 0).
    upper_mult : array of shape (m,)
        The multipliers ``z_upper`` of ``y ≤ u`` (> 0).
    nu : array of shape (rows,)
        The multipliers ν of ``Ey = e``.

    Returns
    -------
    dual_residual : ndarray of shape (m,)
        ``Hy + c + Eᵀν − z_lower + z_upper``.
    primal_residual : ndarray of shape (rows,)
        ``Ey − e``.
    mu : float
        μ.
    largest_dual : float
        The largest magnitude of ``dual_residual`` (NaN if one is).
    largest_primal : float
        The largest magnitude of ``primal_residual`` (NaN if one is).
    system : ndarray of shape (m, m)
        The Newton matrix M.
    """
    m = y.size
    dual_residual = np.dot(hessian, y) + linear + np.dot(nu, equality) - lower_mult + upper_mult
    primal_residual = np.dot(equality, y) - target
    mu = (np.dot(y, lower_mult) + np.dot(slack, upper_mult)) / (2 * m)
    largest_dual, largest_primal = 0.0, 0.0    # NaN, once met, is kept (as np.max keeps it)
    for t in range(m):
        if abs(dual_residual[t]) > largest_dual or dual_residual[t] != dual_residual[t]:
            largest_dual = abs(dual_residual[t])
    for r in range(primal_residual.size):
        if abs(primal_residual[r]) > largest_primal or primal_residual[r] != primal_residual[r]:
            largest_primal = abs(primal_residual[r])
    system = hessian.copy()
    for t in range(m):
        system[t, t] += lower_mult[t] / y[t] + upper_mult[t] / slack[t]
    return dual_residual, primal_residual, mu, largest_dual, largest_primal, system
