"""Exact Rank-SVM dual solver for any kernel: working-set decomposition (SMO generalised to Q equalities).

Problem 10 as ``min f(α) = ½ Σ_k β_kᵀKβ_k − Σ_t α_t`` over ``0 ≤ α ≤ u`` and ``Aα = 0`` (the Q
equalities ``Σ_i β_ki = 0``; ``β = scatter(α)``, see :mod:`mlsvm.formulations.rank_svm`). The
gradient is ``g_t = G[i,k] − G[i,l] − 1`` with ``G = Kβ`` (n × Q), kept up to date.

Feasible moves. Pair ``t = (i, k, l)`` is an arc ``k → l`` of the label graph and ``Aα = 0`` is flow
conservation, so the moves that keep it are (a) two pairs of the same unordered label pair
``{k, l}`` (opposite changes in the same orientation, equal ones in opposite orientations: the
binary SVM's SMO move with ``y_t = ±1`` the orientation) and (b) cycles of arcs through several
labels. At the optimum the biases (the equalities' multipliers) satisfy, on every unordered label
pair ("class"), LIBSVM's condition ``max_{I_up} −y_t g_t ≤ b_l − b_k ≤ min_{I_low} −y_t g_t``.

Working set (each iteration, :meth:`_Classes.select`). Every class's extremes — the pair of
``I_up`` with the largest ``−y_t g_t`` and the pair of ``I_low`` with the smallest — always enter:
they hold the maximal violating pair of every class (a move of kind (a) whenever one exists) and
the pairs that bound every class's interval for ``b_l − b_k``, hence a descent cycle (b) whenever
the intervals admit no potentials. The rest of the ``working_set_size`` budget goes to the pairs
with the largest violation against the best partner of their class.

Free-set step. Once a full check's primal bound (below) has a relative gap under
:data:`FREE_STEP_BELOW`, each full check's iteration first tries the working set joined with the
free pairs (``0 < α_t < u_t``; those with the largest reduced gradient at the least-squares biases
when more than :data:`FREE_STEP_SIZE` pairs in all would result), solved by the active set only:
near the optimum the free pairs are the ones a Newton step moves, and the first-order selection
alone approaches them in a slow linear tail. If that sub-problem's active set fails, the regular
working set is solved in the same iteration.

Sub-problem. The QP restricted to the working set W, the other pairs fixed, with the equalities
``Σ_{t∈W} A_t α_t = Σ_{t∈W} A_t α_t^old`` (so ``Aα = 0`` is kept; of the labels W touches, one per
connected component of its label graph is dropped, :func:`_independent_rows`), is solved first by primal–dual
active-set rounds (:func:`_active_set`: one KKT solve on the free set per round — a quasi-definite
regularised LU with iterative refinement, :func:`_equality_qp` —, accepted only as a checked KKT
point of the sub-problem), else by a dense Mehrotra interior point (:func:`_subproblem`, one
Cholesky of ``|W| × |W|`` per iteration). Once its μ is below :data:`CROSSOVER_MU` (relative), the
partition its iterate suggests (a value on a bound when its multiplier exceeds its distance to it,
both scaled) starts the active set once (a crossover); that exact answer, when there is one, ends the
interior point. Otherwise its answer is polished on its active set
(:func:`_polish`) near the end or when it does not decrease f. Values within 1e-10·u of a bound
are put on it and the equality residual this leaves is removed on the free pairs of W. A
sub-problem answer that increases f is refused. ``G`` is updated with the rows of K of the
instances whose pairs moved: ``O(n |W| Q)``.

Compiled loops. The work on the working set's small dense arrays (the active-set rounds around
each LU, the interior point's residuals and steps around each Cholesky, the separable guess, the
selection's pass over the pairs, the label components, the Hessian) runs as loops compiled by
numba, :mod:`mlsvm.solvers.rank_svm_decomposition_kernels`, with IEEE arithmetic; the LU and
Cholesky factorisations are LAPACK's (dgetrf, dpotrf), called between them. The functions of this
module keep the mathematics and call them.

Two starts of the active set. Started from the bounds α sits on (pairs pushed inward free), it
fails when most pairs of W cross their bound in the first round (the start, where they go from
0 to u): fixing them all leaves a flow on the label graph that the few pairs still free cannot
balance. The other start is the partition of a separable guess (:func:`_separable_guess`): the
sub-problem with H replaced by its diagonal, a quadratic flow problem whose Q − 1 label
multipliers are found by Newton steps with an exact line search (:func:`_line_root`), warm-started
from the previous sub-problem's label potentials; its guess is feasible, so the first round's
system is consistent, and it has close to the right pairs on their bounds. After the plain start
failed, the guessed one is tried first (the plain one is probed again at each full check); either
failing, the other is tried, then the interior point. The guess only chooses the start: the answer
is the active set's checked KKT point either way.

Iterative free-set step (:func:`_free_set_cg`). In the tail the free pairs can be many more than
the direct step takes (yeast poly 3: 5,410 at the optimum; a dense solve of 1,000+ pairs costs
more than it saves). Then, at each full check with the gap bound under :data:`FREE_CG_BELOW`, all
free pairs move first, the others fixed: projected preconditioned CG on the equality-constrained
QP over them (the projection onto ``A_F d = 0`` in the metric of H's diagonal ``2K_ii`` needs only
the Q × Q weighted label Laplacian; each Hessian product is ``K_II Δβ_I`` on the free instances,
``O(|I|²Q)``); an iterate that would leave the box stops at the first bound hit, that pair is fixed
on it and CG restarts on the others, :data:`FREE_CG_ITER` products in all. The step is feasible
and is kept only when it decreases f (checked exactly); the iteration's working set is then
selected at the new point. It only gives the decomposition a better point: the certificate is
unchanged.

Shrinking. Every :data:`CHECK_EVERY` iterations a full check gathers every pair's gradient from G
(no kernel work), with least-squares biases (:func:`_least_squares_biases`) as the equality
multipliers; the pairs on a bound whose reduced gradient points outward by more than
:data:`SHRINK_MARGIN` times the largest violation (LIBSVM's rule with a margin: 0.1 measured 15 %
faster than 1 on yeast RBF, same iterations) are left out of the selection until the next full
check, and all come back when the dual stagnates while the certificate fails. The certificate always uses all pairs.

Stopping rule (exact, stated): the formulation's own relative duality gap
``(primal(β(α), b) − dual(α)) / max(1, |primal|, |dual|) ≤ tol`` **and** the largest scaled KKT
residual of :func:`mlsvm.formulations.rank_svm.kkt_residuals` ``≤ tol``, with ``b`` the biases that
minimise the primal for the current w (:func:`certified_biases`: the multipliers of the
Frank–Wolfe LP, a minimum-cost circulation solved by the network simplex). Each full check
records a primal at least-squares biases (an upper bound) and its relative gap to the dual; the
certificate is evaluated when that bound meets ``tol`` or the dual stagnates. Reaching ``max_iter``, or a
stall (no dual increase beyond the round-off of its evaluation, :func:`_dual_roundoff`, for
:data:`STALL_ITERATIONS` iterations while the certificate fails), warns with the values reached;
a stall's warning says when the round-off of the scores ``Kβ`` (at β, or at a unit β when the
sub-problems never moved it) exceeds ``tol`` (a Gram matrix so large, e.g. ``gamma="scale"`` on
duplicated rows, that the gradients are round-off). Memory
``O(T + nQ + |W|²)`` besides the Gram matrix (``|W| ≤`` :data:`FREE_STEP_SIZE` in the
free-set step), plus a copy of ``K_II`` (< 0.81 n² floats; K itself when I holds ≥ 90 % of the
instances) during an iterative free-set step.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.linalg.lapack import dgetrf, dpotrf, dpotrs
from sklearn.exceptions import ConvergenceWarning

from mlsvm.formulations import rank_svm as formulation
from mlsvm.formulations.rank_svm import RankSVMProblem, center_biases
from mlsvm.solvers import rank_svm_decomposition_kernels as kernels
from mlsvm.solvers.circulation import min_cost_circulation
from mlsvm.solvers.ipm_tools import ridged_cholesky
from mlsvm.solvers.result import SolverResult, relative_gap, warn_not_converged

__all__ = ["decomposition", "certified_biases", "default_working_set_size"]

STOP_RULE = "relative duality gap and scaled KKT residuals"
#: values this close to a bound (relative to u) are put on the bound after a sub-problem
SNAP = 1e-10
#: iterations without a dual increase beyond its round-off (while the certificate fails) that count as a stall
STALL_ITERATIONS = 50
#: iterations between full checks (every pair's gradient: primal bound, shrinking, certificate trigger)
CHECK_EVERY = 10
#: shrinking leaves out the pairs pushed outward by more than this times the largest violation
SHRINK_MARGIN = 0.1
#: the interior point's sub-problem answers are polished (:func:`_polish`) once the gap bound is below this
POLISH_BELOW = 1e-3
#: primal–dual active-set rounds tried on a sub-problem before the interior point
ACTIVE_SET_ROUNDS = 10
#: the free-set step (every full check once the primal bound's relative gap is below
#: FREE_STEP_BELOW): the working set with up to FREE_STEP_SIZE pairs in all, the free ones added
FREE_STEP_BELOW, FREE_STEP_SIZE = 1e-3, 700
#: sub-problem interior point: relative complementarity / residual at which it stops, iteration cap
SUB_TOL, SUB_MAX_ITER = 1e-13, 60
#: Newton iterations of the separable guess (:func:`_separable_guess`); whether the active set
#: starts from it first (None: after the plain start failed, see the loop; True: always; False: never)
SEPARABLE_ITER, GUESS_FIRST, GUESS_WAIT = 20, None, 8
#: the iterative free-set step (:func:`_free_set_cg`) at a full check: None — once the gap bound is
#: below FREE_STEP_BELOW and the free pairs do not fit in the direct free-set step; True — at every
#: full check with free pairs; False — never. Projected CG iterations cap and relative tolerance.
FREE_CG, FREE_CG_ITER, FREE_CG_TOL = None, 30, 1e-10
#: the gap bound below which the iterative free-set step runs (with FREE_CG None)
FREE_CG_BELOW = 1e-3
#: the sub-problem interior point hands its partition to the active set once μ is below this (relative)
CROSSOVER_MU = 1e-3
#: the default working-set size is √T clipped to this range (:func:`default_working_set_size`)
WORKING_SET_SIZES = (160, 240)


def _pseudo_inverse(matrix):
    """Pseudo-inverse of a small symmetric PSD matrix (eigenvalues below 1e-12 of the largest dropped)."""
    return kernels.pseudo_inverse(np.ascontiguousarray(matrix, dtype=np.float64))


def _independent_rows(incidence, labels=False):
    """The rows of a working set's label incidence matrix (Q × |W|, each column a +1 and a −1) that
    are independent: the labels the working set touches, less one label of each connected component
    of its label graph (the rows of a component sum to 0, and no other dependence exists). The
    equalities of the rows dropped follow from the others for every change. With ``labels``, also
    the label of each row kept and the label dropped from its component."""
    labels_kept, first_labels = kernels.label_components(np.ascontiguousarray(incidence, dtype=np.float64))
    if labels:
        return incidence[labels_kept], labels_kept, first_labels
    return incidence[labels_kept]


def _subproblem(hessian, linear, equality, target, upper, crossover=None):
    """Mehrotra's interior point for ``min ½yᵀHy + cᵀy`` s.t. ``Ey = e``, ``0 ≤ y ≤ u`` (dense, small).

    E has independent rows (:func:`_independent_rows`), so the Schur complement ``E M⁻¹ Eᵀ`` is
    positive definite and factored by Cholesky; should round-off make that fail, it is inverted on
    its range instead (the right-hand side always lies in it). ``crossover``: None, or a function
    called once, when μ first falls below :data:`CROSSOVER_MU` (relative), with the partition the
    iterate suggests (0, u or u/2 for free); its answer, when not None, is returned at once. Each
    step after LAPACK's Cholesky of the Newton system is compiled
    (:func:`mlsvm.solvers.rank_svm_decomposition_kernels.interior_point_step`)."""
    hessian, linear, equality, target, upper = _contiguous(hessian, linear, equality, target, upper)
    m = linear.size
    y, slack = 0.5 * upper, 0.5 * upper
    lower_mult, upper_mult = np.ones(m), np.ones(m)
    nu = np.zeros(equality.shape[0])
    scale = max(1.0, float(np.max(np.abs(linear))))
    bound = float(np.max(upper))
    diagonal = np.arange(m) * (m + 1)
    best, best_error = y, np.inf
    for iteration in range(SUB_MAX_ITER + 1):
        dual_residual, primal_residual, mu, largest_dual, largest_primal, system = kernels.interior_point_residuals(
            hessian, linear, equality, target, y, slack, lower_mult, upper_mult, nu)
        # the stopping test as one number (≤ 1: stop); the iterate that came closest is returned
        # when the budget runs out (past the accuracy round-off allows, the barrier terms reach
        # 1e30 and later iterates lose the equalities: seen on a rank-one Gram matrix)
        error = max(mu / (SUB_TOL * scale * bound), largest_dual / (1e-11 * scale), largest_primal / (SUB_TOL * bound))
        if error <= 1.0:
            return np.clip(y, 0.0, upper)
        if error < best_error:
            best, best_error = y, error
        if iteration == SUB_MAX_ITER:
            break
        if crossover is not None and mu <= CROSSOVER_MU * scale * bound:
            # the partition the iterate suggests (a value is on a bound when its multiplier is
            # larger than its distance to it, both scaled) handed to the caller once: an exact
            # answer from it ends the interior point
            start = np.where(lower_mult / scale > y / bound, 0.0,
                             np.where(upper_mult / scale > slack / bound, upper, 0.5 * upper))
            answer, crossover = crossover(start), None
            if answer is not None:
                return answer
        cholesky, info = dpotrf(system.T, lower=1, clean=0, overwrite_a=1)     # M is symmetric
        if info != 0:                                   # indefinite to round-off: a ridge
            system = hessian.copy()
            system.flat[diagonal] += lower_mult / y + upper_mult / slack
            cholesky = ridged_cholesky(system)[0]
        m_inv_et = dpotrs(cholesky, equality.T, lower=1)[0]
        y, slack, lower_mult, upper_mult, nu = kernels.interior_point_step(
            np.ascontiguousarray(cholesky.T), np.ascontiguousarray(m_inv_et.T), equality, y, slack, lower_mult,
            upper_mult, nu, dual_residual, primal_residual, mu)
    return np.clip(best, 0.0, upper)



def _equality_qp(hessian, gradient, equality, old, candidate, free):
    """Change ``d`` minimising ``gᵀd + ½dᵀHd`` with ``Ed = 0``, the values off ``free`` fixed at
    ``candidate``: the KKT system ``[H_FF E_Fᵀ; E_F 0][d_F; ν] = [−g_F − H_FB d_B; −E_B d_B]``.

    H may be singular (moves that change no score, e.g. a cycle of an instance's pairs) and the rows
    of E are dependent (they sum to 0), so the system is factored with a quasi-definite
    regularisation ``[H_FF + εI, E_Fᵀ; E_F, −εI]`` (one LU, ε = 1e-12 of H's largest diagonal entry)
    and two steps of iterative refinement on the unregularised system remove ε's effect where the
    system is consistent; the equality residual left is removed by the least-norm correction on the
    free values (exact when the free values can balance the fixed ones). The system is built and
    solved by compiled loops (:mod:`mlsvm.solvers.rank_svm_decomposition_kernels`: ``kkt_system``,
    ``kkt_solve``), factored between them by LAPACK. Returns ``(d, ν)``."""
    return _kkt_step(*_contiguous(hessian, gradient, equality, old, candidate),
                     np.ascontiguousarray(free, dtype=np.bool_))


def _kkt_step(hessian, gradient, equality, old, candidate, free):
    """:func:`_equality_qp` on contiguous float64 arrays (``free`` boolean): the KKT system built and
    solved by compiled loops, factored between them by LAPACK (the matrix is symmetric, so its
    transpose, Fortran-ordered, is factored in place)."""
    system, regularised, rhs, change = kernels.kkt_system(hessian, gradient, equality, old, candidate, free)
    lu, pivots, _ = dgetrf(regularised.T, overwrite_a=True)
    return kernels.kkt_solve(lu.T, pivots, system, rhs, equality, free, change)


def _contiguous(*arrays):
    """The arrays as C-contiguous float64 (what the compiled kernels take)."""
    return tuple(np.ascontiguousarray(array, dtype=np.float64) for array in arrays)


def _line_root(start, rate, direction, upper, slope):
    """The maximiser ``t > 0`` of the concave ``φ(t) = ψ(μ + t·s)`` of :func:`_separable_guess`:
    the root of ``φ'(t) = aᵀclip(p − q t, 0, u) − sᵀe``, piecewise linear and non-increasing
    (``q = a/h``, ``a = Eᵀs``, ``φ'(0) = slope > 0``), found exactly by walking its breakpoints (each
    pair is unclipped on one interval of t, where it adds ``−a_t q_t ≤ 0`` to φ''). The nearest
    root: on a piece where φ' is 0 within its round-off, its start, since beyond it μ would only
    travel along ψ's flat directions."""
    return kernels.line_root(*_contiguous(start, rate, direction, upper), float(slope))


def _separable_guess(diagonal, gradient, equality, old, upper, mu):
    """The sub-problem with its Hessian replaced by the diagonal, ``min Σ_t ½h_t d_t² + g_t d_t``
    s.t. ``Ed = 0``, ``0 ≤ old + d ≤ u``: ``y(μ) = clip(old − (g + Eᵀμ)/h, 0, u)`` with ``μ`` the
    root of ``E y(μ) = E old``, by Newton steps on the concave dual ``ψ(μ)`` (Jacobian
    ``E_F diag(1/h_F) E_Fᵀ`` over the unclipped pairs F, those at a kink included, a tiny ridge
    where they leave a label unreached) with an exact line search (:func:`_line_root`); where that
    ridge would set the step, the residual's part along the Jacobian's near-null eigenvectors (ψ
    is linear there: steepest ascent) or, without one, the Newton step on the other eigenvectors;
    from the multipliers ``mu`` given
    (the previous sub-problem's). Used only as the active set's starting guess (which pairs sit on
    which bound; the active set then computes the answer exactly): at most
    :data:`SEPARABLE_ITER` steps. Returns ``(y, μ)``."""
    return kernels.separable_guess(*_contiguous(diagonal, gradient, equality, old, upper, mu), SEPARABLE_ITER)


def _active_set(hessian, gradient, equality, old, upper, rounds=ACTIVE_SET_ROUNDS, start=None):
    """Primal–dual active-set iterations (Hintermüller, Ito & Kunisch) for the sub-problem, started
    from the bounds the current values sit on, a pair on a bound being freed when its gradient
    points inward. Each round solves :func:`_equality_qp` on the free set, then fixes the values
    that left the box on the bound they crossed and frees the fixed ones whose multiplier has the
    wrong sign. Returns the solution when a round changes nothing (it is then a KKT point of the
    sub-problem, checked), else None (the caller falls back to the interior point)."""
    hessian, gradient, equality, old, upper = _contiguous(hessian, gradient, equality, old, upper)
    from_start = start is not None
    free, bound_values = kernels.starting_partition(
        gradient, old, upper, np.ascontiguousarray(start, dtype=np.float64) if from_start else old, from_start)
    for _ in range(rounds):
        if not free.any():
            return None
        change, nu = _kkt_step(hessian, gradient, equality, old, np.where(free, old, bound_values), free)
        # checks the answer (None: it fails), else fixes / frees values in place (free, bound_values)
        status = kernels.active_set_round(hessian, gradient, equality, old, upper, change, nu, free, bound_values)
        if status == 0:
            return None
        if status == 1:
            return np.clip(old + change, 0.0, upper)
    return None


def _snap_to_bounds(y, upper, equality, target):
    """Put values within ``SNAP·u`` of a bound on it, then remove the equality residual this leaves
    by the least-norm correction on the free values, ``Δ = −ΩEᵀ(EΩEᵀ)⁺(Ey − e)``,
    ``Ω = diag(min(y, u − y))`` (values near a bound hardly move; clipped regardless)."""
    snapped = np.where(y <= SNAP * upper, 0.0, np.where(y >= (1.0 - SNAP) * upper, upper, y))
    residual = equality @ snapped - target
    if np.array_equal(snapped, y) and np.abs(residual).max(initial=0.0) <= 1e-15 * max(1.0, float(upper.max())):
        return y        # nothing snapped and the equalities hold to round-off (an active-set answer)
    y = snapped
    weights = np.minimum(y, upper - y)
    if np.max(np.abs(residual), initial=0.0) > 0.0 and np.any(weights > 0.0):
        correction = -weights * (equality.T @ (_pseudo_inverse((equality * weights[None, :]) @ equality.T) @ residual))
        corrected = np.clip(y + correction, 0.0, upper)
        if np.max(np.abs(equality @ corrected - target)) < np.max(np.abs(residual)):
            y = corrected
    return y



def _polish(hessian, gradient, equality, old, new, upper):
    """Exact sub-problem solution on the active set the interior point found (as OSQP polishes):
    :func:`_equality_qp` with the values on a bound fixed. The interior point's own answer is only
    accurate to its last μ, far above the tiny improvements left near the optimum. Values the
    solve pushes out of the box are fixed on the bound they cross and the solve repeated (a few
    rounds); the result is kept when it is in the box, keeps the equalities and is no worse than
    the interior point's."""
    def objective(candidate):
        change = candidate - old
        return float(gradient @ change + 0.5 * change @ hessian @ change)

    candidate = new
    for _ in range(5):
        free = (candidate > 0.0) & (candidate < upper)
        if not np.any(free):
            break
        change, _ = _equality_qp(hessian, gradient, equality, old, candidate, free)
        polished = old + change
        inside = (polished >= 0.0) & (polished <= upper)
        candidate = np.clip(polished, 0.0, upper)
        if np.all(inside):
            break
    else:
        return new
    if np.max(np.abs(equality @ (candidate - old)), initial=0.0) > 1e-12 * max(1.0, float(np.max(upper))):
        return new
    return candidate if objective(candidate) <= objective(new) else new

def _free_set_cg(gram, instance, relevant, irrelevant, alpha, upper, gradient, free_index, n_labels,
                 max_iter=None, tol=None):
    """A feasible descent step on all free pairs F, the others fixed: the equality-constrained QP
    ``min_d g_Fᵀd + ½dᵀH_FFd`` s.t. ``A_F d = 0`` by projected preconditioned CG (Gould, Hribar &
    Nocedal) from ``d = 0``, then a ratio test back into the box (the step to the first bound hit,
    that pair put on its bound). Each Hessian product is ``Δβ = scatter(d)`` on F's instances I,
    ``K_II Δβ`` and a gather: ``O(|I|²Q + |F|)``. The preconditioner is H's diagonal ``2K_ii``; the
    projection in its metric needs the Q × Q weighted label Laplacian ``A_F M⁻¹ A_Fᵀ`` (inverted on
    its range: each component's rows sum to 0, and so does ``A_F v`` for every v). After each
    projection the residual drops its multiplier part, ``r ← r − A_Fᵀν`` (Gould, Hribar & Nocedal's
    residual update; ν are the projection's multipliers): r then tends to 0 instead of to
    ``A_Fᵀλ``, whose round-off through the projection otherwise floors the projected residual and,
    once CG runs past that floor, moves the iterates off ``A_F d = 0``. Every CG iterate
    ``d_j`` minimises the QP over a subspace that contains it, so the objective decreases along
    ``t·d_j`` for ``t ∈ [0, 1]``: the ratio-tested step is feasible and never increases f (the
    caller checks that too). Returns ``(new values of α_F, instances I, Δβ_I)`` or None."""
    max_iter = FREE_CG_ITER if max_iter is None else max_iter
    tol = FREE_CG_TOL if tol is None else tol
    q = n_labels
    rows_of = instance[free_index]
    k, l = relevant[free_index], irrelevant[free_index]
    instances, position = np.unique(rows_of, return_inverse=True)
    if instances.size >= 0.9 * gram.shape[0]:
        # nearly all instances: K itself (a copy of K_II would be nearly as large; products cost
        # at most 1.23× more)
        instances, position, kernel = np.arange(gram.shape[0]), rows_of, gram
    else:
        # a copy of K_II (< 0.81 n² floats, for the step only): with K itself each product would
        # cost (n/|I|)² more — measured on yeast poly 2 (|I| ≈ 0.62 n) 2.21 → 2.85 s
        kernel = gram.take(instances, axis=0).take(instances, axis=1)
    flat_k, flat_l = position * q + k, position * q + l
    size = instances.size * q

    def scatter(d):
        return (np.bincount(flat_k, d, minlength=size) - np.bincount(flat_l, d, minlength=size)).reshape(-1, q)

    def hessian_times(d):
        product = (kernel @ scatter(d)).ravel()
        return product[flat_k] - product[flat_l]

    diagonal = 2.0 * np.diagonal(kernel)[position]
    inverse_diagonal = 1.0 / np.maximum(diagonal, 1e-12 * max(float(np.max(diagonal, initial=0.0)), 1e-300))
    old, box = alpha[free_index], upper[free_index]

    def projector(weight):
        """``r ↦ P_M r = M⁻¹r − M⁻¹A_Fᵀ(A_F M⁻¹ A_Fᵀ)⁺A_F M⁻¹r`` (M⁻¹ = ``weight``, 0 on the pairs
        fixed): in the null space of A_F, zero on the fixed pairs."""
        laplacian_pinv = _pseudo_inverse(_label_laplacian(k, l, weight, q))

        def project(r):
            z = weight * r
            nu = laplacian_pinv @ (np.bincount(k, z, minlength=q) - np.bincount(l, z, minlength=q))
            correction = nu[k] - nu[l]
            return z - weight * correction, r - correction
        return project

    # projected CG on the free pairs; when an iterate would leave the box, the step stops at the
    # first bound hit (f decreases along p up to CG's step), that pair is fixed there and CG
    # restarts on the others from the current point (its gradient r kept up to date), within a
    # budget of max_iter Hessian products in all
    weight = inverse_diagonal.copy()
    project = projector(weight)
    d = np.zeros(free_index.size)
    r = gradient[free_index].copy()
    z, reduced = project(r)
    rz = float(r @ z)
    if not rz > 1e-20 * float(r @ (weight * r)):      # no projected gradient beyond round-off
        return None
    first, p, r = rz, -z, reduced
    for _ in range(max_iter):
        hp = hessian_times(p)
        curvature = float(p @ hp)
        if not curvature > 1e-10 * float(diagonal @ (p * p)):     # H (nearly) singular along p
            break
        step = rz / curvature
        value = old + d
        up, down = p > 0.0, p < 0.0
        ratios = np.full(d.size, np.inf)
        ratios[up] = (box[up] - value[up]) / p[up]
        ratios[down] = -value[down] / p[down]
        blocking = int(np.argmin(ratios))
        hit = ratios[blocking] < step
        step = min(step, float(max(ratios[blocking], 0.0)))
        d += step * p
        r += step * hp
        if hit:                                      # fix the pair on its bound, restart CG
            d[blocking] = (box[blocking] if p[blocking] > 0.0 else 0.0) - old[blocking]
            weight[blocking] = 0.0
            project = projector(weight)
            z, r = project(r)
            rz = float(r @ z)
            if not rz > tol * tol * first:
                break
            p = -z
            continue
        z, r = project(r)
        rz, previous = float(r @ z), rz
        if rz <= tol * tol * first:
            break
        p = -z + (rz / previous) * p
    new = np.clip(old + d, 0.0, box)
    # values within SNAP·u of a bound on it, the residual this leaves removed on the others
    equality = np.zeros((q, free_index.size))
    equality[k, np.arange(free_index.size)] = 1.0
    equality[l, np.arange(free_index.size)] = -1.0
    new = _snap_to_bounds(new, box, equality, equality @ old)
    change = new - old
    if np.max(np.abs(equality @ change)) > 1e-12 * max(1.0, float(np.max(upper))):
        return None
    # f's change, exactly: a step that does not decrease f (round-off directions) is refused
    beta_change = scatter(change)
    if float(gradient[free_index] @ change) + 0.5 * float(np.sum(beta_change * (kernel @ beta_change))) >= 0.0:
        return None
    return new, instances, beta_change


def certified_biases(problem: RankSVMProblem, gradient: np.ndarray, guess: np.ndarray, *,
                     full_lp: bool = True, lp_iterations: int | None = None) -> np.ndarray | None:
    """The biases minimising the primal for the current w: the equality multipliers of the
    Frank–Wolfe LP ``min ⟨g, α'⟩`` over the feasible set (as
    :func:`mlsvm.formulations.rank_svm.optimal_biases`, which solves it with HiGHS on all T pairs).

    That LP is a minimum-cost circulation on the label graph (pair ``(i, k, l)`` an arc ``k → l``,
    cost ``g_t``, capacity ``u_t``; the biases are minus its potentials). It is solved first by the
    network simplex of :func:`mlsvm.solvers.circulation.min_cost_circulation` on all pairs,
    started from ``guess``: ``O(T)`` memory, and a few pivots per pair that ``guess`` puts on the
    wrong bound. Its answer is accepted when its flow balances every label and it satisfies
    complementary slackness with the biases: reduced gradient ``ĝ_t = g_t + b_k − b_l ≤ 0`` where
    ``α'_t = u_t``, ``≥ 0`` where ``α'_t = 0``, and 0 in between (each up to ``1e-12`` of the
    largest ``|g_t|``). Then the biases are exact.

    Otherwise HiGHS (:func:`mlsvm.formulations.rank_svm.circulation_lp`) on the pairs whose
    ``ĝ_t`` at ``guess`` lies within ``δ`` of 0, the others fixed at the bound the sign of ``ĝ_t``
    picks (``u`` for ``ĝ < 0``, 0 for ``ĝ > 0``). If the multipliers found keep every fixed pair's
    sign, they with the fixed values satisfy the full LP's optimality conditions, so they are
    exact; otherwise ``δ`` grows ×100, and the full LP is solved last (``full_lp``; without it,
    None).

    Parameters
    ----------
    problem : RankSVMProblem
        The Rank-SVM problem.
    gradient : array of shape (T,)
        The dual gradient ``g_t = G[i,k] − G[i,l] − 1`` at the current α.
    guess : array of shape (Q,)
        Biases to start from (e.g. the previous ones).
    full_lp : bool, default=True
        Solve the LP on all T pairs when neither the network simplex nor the pairs near their
        margin give the biases; if False, return None instead.
    lp_iterations : int or None, optional
        Dual simplex iterations of each HiGHS LP at most (an LP that needs more counts as not
        solved).
    """
    pairs, upper, q = problem.pairs, problem.upper, problem.n_labels
    scale = max(1.0, float(np.max(np.abs(gradient))))
    slack = 1e-12 * scale
    solution = min_cost_circulation(pairs.relevant, pairs.irrelevant, gradient, upper, q, -np.asarray(guess))
    if solution is not None:
        flow, potential = solution
        b = center_biases(-potential)
        after = gradient + b[pairs.relevant] - b[pairs.irrelevant]
        at_upper, at_lower = flow >= upper, flow <= 0.0
        between = ~(at_upper | at_lower)
        if (np.max(np.abs(problem.balance(flow)), initial=0.0) <= 1e-12 * float(np.sum(upper))
                and np.all(after[at_upper] <= slack) and np.all(after[at_lower] >= -slack)
                and np.all(np.abs(after[between]) <= slack)):
            return b
    for delta in (1e-8, 1e-6, 1e-4, 1e-2, 1.0):
        reduced = gradient + guess[pairs.relevant] - guess[pairs.irrelevant]
        near = np.abs(reduced) <= delta * scale
        fixed = np.where(reduced < 0.0, upper, 0.0)
        fixed[near] = 0.0
        if not np.any(near):
            continue
        solution = formulation.circulation_lp(gradient[near], problem.equality[: q - 1][:, near],
                                              -(problem.equality[: q - 1] @ fixed), upper[near],
                                              dual_feasibility_tolerance=1e-10, primal_feasibility_tolerance=1e-10,
                                              **({} if lp_iterations is None else {"maxiter": lp_iterations}))
        if solution is None:
            continue
        b = np.zeros(q)
        b[: q - 1] = -solution[1]
        after = gradient + b[pairs.relevant] - b[pairs.irrelevant]
        at_upper, at_lower = ~near & (reduced < 0.0), ~near & (reduced > 0.0)
        if np.all(after[at_upper] <= slack) and np.all(after[at_lower] >= -slack):
            return center_biases(b)
    return formulation.linear_minimizer(problem, gradient)[1] if full_lp else None


def _dual_roundoff(alpha_sum, root_diagonal, beta):
    """Round-off scales of the dual ``Σα − ½ Σ_k β_kᵀKβ_k`` and of the scores ``Kβ`` (first order,
    one unit round-off ``ε`` per term, without the length factor of a worst-case bound), from
    ``|K_ij| ≤ √(K_ii K_jj)`` (K is PSD): with ``s_k = Σ_j √K_jj |β_jk|``, ``|Kβ|_ik ≤ √K_ii s_k``, so
    the dual's is ``ε(Σα + Σ_k s_k²)`` and the scores' ``ε max_i √K_ii max_k s_k``. ``O(nQ)``."""
    eps = np.finfo(np.float64).eps
    spread = root_diagonal @ np.abs(beta)
    return (eps * (alpha_sum + float(spread @ spread)),
            eps * float(np.max(root_diagonal, initial=0.0)) * float(np.max(spread, initial=0.0)))


def _label_laplacian(relevant, irrelevant, weight, n_labels):
    """``A diag(w) Aᵀ`` for pairs ``k → l`` (columns ``e_k − e_l`` of A): the label graph's weighted
    Laplacian (Q × Q)."""
    q = n_labels
    return (np.diag(np.bincount(relevant, weight, minlength=q) + np.bincount(irrelevant, weight, minlength=q))
            - np.bincount(relevant * q + irrelevant, weight, minlength=q * q).reshape(q, q)
            - np.bincount(irrelevant * q + relevant, weight, minlength=q * q).reshape(q, q))


def _least_squares_biases(relevant, irrelevant, gradient, free, previous, n_labels):
    """``argmin_b Σ_{t free} (g_t + b_k − b_l)² + ε‖b − b_prev‖²`` (a Q × Q Laplacian system): the
    KKT biases where the free pairs determine them, the previous ones elsewhere. A cheap estimate
    for the per-iteration primal bound; the certificate uses :func:`certified_biases`."""
    k, l, g = relevant[free], irrelevant[free], gradient[free]
    q = n_labels
    laplacian = _label_laplacian(k, l, np.ones(k.size), q)
    rhs = np.bincount(l, g, minlength=q) - np.bincount(k, g, minlength=q)
    ridge = 1e-10 * max(1.0, float(np.max(np.diag(laplacian))))
    return center_biases(np.linalg.solve(laplacian + ridge * np.eye(q), rhs + ridge * previous))


class _Classes:
    """The pairs grouped by unordered label pair (class), with LIBSVM's orientation ``y_t``."""

    def __init__(self, relevant, irrelevant, n_labels):
        low, high = np.minimum(relevant, irrelevant), np.maximum(relevant, irrelevant)
        key = low * n_labels + high
        self.order = np.argsort(key, kind="stable")             # pairs sorted by class
        sorted_key = key[self.order]
        self.starts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
        self.index = np.repeat(np.arange(self.starts.size), np.diff(np.r_[self.starts, key.size]))
        self.orientation = np.where(relevant < irrelevant, 1.0, -1.0)[self.order]

    @property
    def n_classes(self) -> int:
        return self.starts.size

    def restrict(self, kept):
        """The same grouping over the positions ``kept`` (sorted) only."""
        view = _Classes.__new__(_Classes)
        index = self.index[kept]
        view.starts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
        view.index = np.repeat(np.arange(view.starts.size), np.diff(np.r_[view.starts, index.size]))
        view.orientation = self.orientation[kept]
        view.order = None
        return view

    def select(self, alpha, upper, gradient, size):
        """Positions (in class order) of the working set of the module docstring: each class's
        extremes, then the violators with the largest scores
        (:func:`mlsvm.solvers.rank_svm_decomposition_kernels.select_candidates`) to fill ``size``."""
        chosen, rest, score = kernels.select_candidates(self.orientation, self.index, self.n_classes,
                                                        *_contiguous(alpha, upper, gradient))
        room = size - chosen.size
        if room > 0 and rest.size:
            if rest.size > room:
                rest = rest[np.argpartition(-score, room - 1)[:room]]
            chosen = np.union1d(chosen, rest)
        return chosen


def default_working_set_size(n_pairs: int) -> int:
    """The working-set size used when none is given: ``√T`` clipped to [:data:`WORKING_SET_SIZES`].

    Each iteration costs ``O(T)`` (gradients gathered, the selection) besides the sub-problem, whose
    active-set rounds grow with ``|W|`` faster than the iterations fall; the larger the problem, the
    larger the working set that pays (measurements: docs/rank_svm.md, issue 19's fourth pass).

    Parameters
    ----------
    n_pairs : int
        The number of pairs T of the problem.
    """
    low, high = WORKING_SET_SIZES
    return int(min(high, max(low, round(float(np.sqrt(n_pairs))))))


def decomposition(problem: RankSVMProblem, *, tol: float = 1e-6, max_iter: int = 20_000,
                  working_set_size: int | None = None, alpha0: np.ndarray | None = None,
                  callback=None) -> SolverResult:
    """Solve the Rank-SVM dual (Problem 10) to the certificate of the module docstring.

    ``problem``: :func:`mlsvm.formulations.rank_svm.make_problem` (its Gram matrix is used as
    is, any PSD kernel). ``alpha0``: a feasible warm start (``0 ≤ α ≤ u``, ``Aα = 0``; default 0).
    ``max_iter`` bounds the decomposition iterations. Returns ``primal = {"beta", "b"}``,
    ``dual = {"alpha"}``; ``history`` has per iteration ``dual``, per full check ``primal`` (at
    least-squares biases, an upper bound of the optimum), ``stop_value`` (their relative gap) and
    ``kept`` (pairs left to the selection by shrinking), and the ``certificate`` list of
    ``(iteration, relative gap, max KKT residual)`` evaluations.
    ``callback(iteration, primal, dual)`` is called each iteration (``primal`` empty: the
    biases are only computed at a certificate; ``dual = {"alpha"}``).

    Parameters
    ----------
    problem : RankSVMProblem
        The Rank-SVM problem (:func:`mlsvm.formulations.rank_svm.make_problem`).
    tol : float, default=1e-6
        Tolerance of the certificate (relative gap and KKT residuals).
    max_iter : int, default=20000
        Maximum number of decomposition iterations.
    working_set_size : int or None, default=None
        Number of pairs per working set (≥ 2); None: :func:`default_working_set_size` of the
        number of pairs (√T within [160, 240]).
    alpha0 : array of shape (T,) or None, optional
        A feasible warm start (default 0).
    callback : callable or None, optional
        Called as ``callback(iteration, primal, dual)`` each iteration.
    """
    start = time.perf_counter()
    tol = float(tol)
    if not tol > 0.0:
        raise ValueError(f"tol must be positive; got {tol!r}")
    if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 1):
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}")
    if working_set_size is None:
        working_set_size = default_working_set_size(problem.n_pairs)
    if not (isinstance(working_set_size, (int, np.integer)) and working_set_size >= 2):
        raise ValueError(f"working_set_size must be an integer ≥ 2; got {working_set_size!r}")
    gram, pairs, n_labels = problem.kernel_matrix, problem.pairs, problem.n_labels
    classes = _Classes(pairs.relevant, pairs.irrelevant, n_labels)
    order = classes.order                                       # internal arrays in class order
    instance, relevant, irrelevant = pairs.instance[order], pairs.relevant[order], pairs.irrelevant[order]
    upper = problem.upper[order]
    flat_relevant, flat_irrelevant = instance * n_labels + relevant, instance * n_labels + irrelevant
    if alpha0 is None:
        alpha = np.zeros(problem.n_pairs)
    else:
        alpha0 = np.asarray(alpha0, dtype=np.float64)
        if alpha0.shape != (problem.n_pairs,):
            raise ValueError(f"alpha0 must have shape ({problem.n_pairs},); got {alpha0.shape}")
        alpha = np.clip(alpha0, 0.0, problem.upper)[order]
    beta = np.zeros((problem.n_samples, n_labels))
    np.add.at(beta.ravel(), flat_relevant, alpha)
    np.subtract.at(beta.ravel(), flat_irrelevant, alpha)
    kernel_beta = gram @ beta
    biases = np.zeros(n_labels)
    history = {"dual": [], "primal": [], "stop_value": [], "kept": [], "certificate": []}
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    root_diagonal = np.sqrt(np.maximum(np.diagonal(gram), 0.0))    # |K_ij| ≤ √(K_ii K_jj): round-off scales

    def certify(gradient, guess):
        """(b, relative gap, max KKT) by the formulation's functions, in the caller's pair order."""
        alpha_out = alpha[inverse]
        b = certified_biases(problem, gradient[inverse], guess)
        beta_out = problem.scatter(alpha_out)
        primal = formulation.primal_objective(problem, beta_out, b)
        dual = formulation.dual_objective(problem, alpha_out)
        kkt = max(formulation.kkt_residuals(problem, alpha_out, b).values())
        return b, float(relative_gap(primal, dual)), kkt

    best_dual, stalled_for, next_check, certified = -np.inf, 0, 0, biases
    converged, stalled, gap, kkt, bound = False, False, np.inf, np.inf, np.inf
    kept, view = None, classes                  # shrinking: the pairs selection looks at
    # after a stagnant check all pairs come back and stay until the dual increases again, so that a
    # stall is judged on the whole problem (re-shrinking at every check would hide it for ever)
    hold_full = False
    potential = np.zeros(n_labels)     # label potentials: the separable guesses' multipliers
    guess_first, guess_skip, guess_wait = False, 0, 0
    for iteration in range(1, max_iter + 1):
        flat_g = kernel_beta.ravel()
        quadratic = float(np.sum(beta * kernel_beta))
        alpha_sum = float(alpha.sum())
        dual = alpha_sum - 0.5 * quadratic
        history["dual"].append(dual)
        if callback is not None:
            callback(iteration, {}, {"alpha": alpha[inverse]})
        # an increase within the round-off of the dual's own evaluation is no increase: with a
        # Gram matrix so large that the round-off of Kβ swamps the margins, the sub-problems
        # follow round-off and the dual creeps up by amounts that mean nothing
        roundoff = _dual_roundoff(alpha_sum, root_diagonal, beta)[0]
        stalled_for = stalled_for + 1 if dual <= best_dual + roundoff else 0
        hold_full = hold_full and stalled_for > 0
        stagnant = dual - best_dual <= max(0.1 * tol * max(1.0, abs(dual)), roundoff)
        best_dual = max(best_dual, dual)
        checked = (iteration - 1) % CHECK_EVERY == 0 or (stagnant and iteration >= next_check)
        if checked:
            # a full check: every pair's gradient (a gather from G, no kernel work)
            gradient = flat_g[flat_relevant] - flat_g[flat_irrelevant] - 1.0
            free = (alpha > 0.0) & (alpha < upper)
            biases = _least_squares_biases(relevant, irrelevant, gradient, free, biases, n_labels)
            reduced = gradient + biases[relevant] - biases[irrelevant]
            primal_bound = 0.5 * quadratic + float(upper @ np.maximum(0.0, -reduced))
            bound = relative_gap(primal_bound, dual)
            history["primal"].append(primal_bound)
            history["stop_value"].append(bound)
            # the formulation's complementarity residual at the least-squares biases (z_box = −ĝ)
            violation = np.maximum(alpha * np.maximum(reduced, 0.0), (upper - alpha) * np.maximum(-reduced, 0.0))
            complementarity = float(np.max(violation)) / (1.0 + float(np.max(np.abs(reduced))) * float(np.max(upper)))
            unshrink = False
            if (bound <= tol and complementarity <= tol) or (stagnant and iteration >= next_check):
                certified, gap, kkt = certify(gradient, biases)
                history["certificate"].append((iteration, gap, kkt))
                if gap <= tol and kkt <= tol:
                    converged = True
                    break
                next_check = iteration + max(10, iteration // 10)
                if stalled_for >= STALL_ITERATIONS and kept is None:
                    stalled = True
                    break
                unshrink = stagnant             # the pairs kept are done: look at all of them again
                hold_full = hold_full or unshrink
            # shrinking (LIBSVM's rule with the biases as the equality multipliers): a pair on a
            # bound whose reduced gradient points outward by more than the largest violation
            # (inward at a bound, either way when free) is left out until the next full check
            inward = np.where(alpha < upper, np.maximum(-reduced, 0.0), 0.0)
            inward = np.maximum(inward, np.where(alpha > 0.0, np.maximum(reduced, 0.0), 0.0))
            outward = np.where(alpha <= 0.0, reduced, np.where(alpha >= upper, -reduced, -np.inf))
            shrunk = outward > SHRINK_MARGIN * float(np.max(inward, initial=0.0))
            if unshrink or hold_full or not np.any(shrunk):
                kept, view = None, classes
            else:
                kept = np.flatnonzero(~shrunk)
                view = classes.restrict(kept)
                # the kept pairs' gather indices and bounds, read at every iteration until the next check
                kept_relevant, kept_irrelevant, kept_upper = flat_relevant[kept], flat_irrelevant[kept], upper[kept]
            history["kept"].append(problem.n_pairs if kept is None else kept.size)
        if kept is None:
            gradient = flat_g.take(flat_relevant) - flat_g.take(flat_irrelevant) - 1.0
            working = view.select(alpha, upper, gradient, working_set_size)
        else:
            gradient = np.full(alpha.size, np.nan)  # only the kept entries are read
            kept_gradient = flat_g.take(kept_relevant) - flat_g.take(kept_irrelevant) - 1.0
            gradient[kept] = kept_gradient
            working = kept[view.select(alpha.take(kept), kept_upper, kept_gradient, working_set_size)]
        attempts = [working]
        inside = np.flatnonzero((alpha > 0.0) & (alpha < upper)) if checked else None
        cg_step = checked and inside.size > 0 and (
            FREE_CG is True or (FREE_CG is None and bound <= FREE_CG_BELOW
                                and inside.size > FREE_STEP_SIZE - working.size))
        if cg_step:
            # the iterative free-set step on all free pairs: a better start for this iteration's
            # working set (kept only when f does not increase; the gradient is then recomputed)
            gradient_all = flat_g[flat_relevant] - flat_g[flat_irrelevant] - 1.0
            step = _free_set_cg(gram, instance, relevant, irrelevant, alpha, upper, gradient_all, inside, n_labels)
            if step is not None:
                new_free, cg_instances, cg_beta = step
                alpha[inside] = new_free
                beta[cg_instances] += cg_beta
                # G += K[:, I] Δβ_I (K symmetric; all of K when I is every instance, no copy)
                kernel_beta += (gram if cg_instances.size == gram.shape[0] else gram[cg_instances].T) @ cg_beta
                if kept is None:
                    gradient = flat_g[flat_relevant] - flat_g[flat_irrelevant] - 1.0
                    working = view.select(alpha, upper, gradient, working_set_size)
                else:
                    gradient = np.full(alpha.size, np.nan)
                    gradient[kept] = flat_g[flat_relevant[kept]] - flat_g[flat_irrelevant[kept]] - 1.0
                    working = kept[view.select(alpha[kept], upper[kept], gradient[kept], working_set_size)]
                attempts = [working]
        if checked and bound <= FREE_STEP_BELOW and not cg_step:
            # the free-set step: the working set with the free pairs (those with the largest
            # reduced gradient at the least-squares biases when they do not all fit), solved by the
            # active set only; if that fails, the regular working set in the same iteration
            room = FREE_STEP_SIZE - working.size
            if room > 0 and inside.size:
                if inside.size > room:
                    inside = inside[np.argpartition(-np.abs(reduced[inside]), room - 1)[:room]]
                attempts.insert(0, np.union1d(working, inside))
        for attempt, working in enumerate(attempts):
            rows_of = instance[working]
            k_w, l_w = relevant[working], irrelevant[working]
            incidence = np.zeros((n_labels, working.size))
            incidence[k_w, np.arange(working.size)] = 1.0
            incidence[l_w, np.arange(working.size)] = -1.0
            # H_st = K(x_i, x_j) (e_k − e_l)ᵀ(e_k' − e_l'); the rows of K of W's instances are
            # gathered once for the update of G below
            instances, position = np.unique(rows_of, return_inverse=True)
            kernel_rows = gram.take(instances, axis=0)
            hessian = kernels.working_set_hessian(gram, rows_of, k_w, l_w)
            incidence, row_labels, ground_labels = _independent_rows(incidence, labels=True)
            old = alpha[working]
            target = incidence @ old
            # the active set from the bounds α sits on; when that failed last time (failures come in
            # runs: at the start most pairs of W go from 0 to u), first from the separable guess's
            # bounds (GUESS_FIRST: None this rule, True always, False never). At a full check the
            # plain start is probed again. After the guessed start failed, it is left out of the
            # next 1, 2, 4, … (at most GUESS_WAIT) sub-problems whose plain start failed.
            if GUESS_FIRST is None:
                starts = (False, True) if not guess_first or checked else (True, False)
                if guess_skip > 0 and (attempt == len(attempts) - 1):
                    starts = (False,)
            else:
                starts = (True, False) if GUESS_FIRST else (False,)
            new = None
            for start_from_guess in starts:
                if start_from_guess:
                    guess, mu = _separable_guess(np.diagonal(hessian).copy(), gradient[working], incidence, old,
                                                 upper[working], potential[row_labels] - potential[ground_labels])
                    potential[row_labels] = potential[ground_labels] + mu
                    new = _active_set(hessian, gradient[working], incidence, old, upper[working], start=guess)
                    guess_wait = 0 if new is not None else min(max(1, 2 * guess_wait), GUESS_WAIT)
                    guess_skip = 0 if new is not None else guess_wait
                else:
                    new = _active_set(hessian, gradient[working], incidence, old, upper[working])
                    guess_first = new is None
                    if new is None and starts == (False,):
                        guess_skip -= 1
                if new is not None:
                    break
            if new is not None:
                break
        exact = new is not None
        if not exact:
            crossover_hit = [False]

            def crossover(start):
                answer = _active_set(hessian, gradient[working], incidence, old, upper[working], start=start)
                crossover_hit[0] = answer is not None
                return answer
            new = _subproblem(hessian, gradient[working] - hessian @ old, incidence, target, upper[working],
                              crossover=crossover if CROSSOVER_MU else None)
            exact = crossover_hit[0]
        new = _snap_to_bounds(new, upper[working], incidence, target)
        change = new - old
        linear_term, curvature = float(gradient[working] @ change), float(change @ hessian @ change)
        # the interior point's answers are polished (the active set's are exact KKT points already)
        # near the end, and whenever they do not decrease f (their accuracy, ~μ, can exceed the
        # decrease left, e.g. a pair 1e-9 from u)
        if not exact and (bound <= POLISH_BELOW or linear_term + 0.5 * curvature >= 0.0):
            new = _polish(hessian, gradient[working], incidence, old, new, upper[working])
            new = _snap_to_bounds(new, upper[working], incidence, target)
            change = new - old
            linear_term, curvature = float(gradient[working] @ change), float(change @ hessian @ change)
        if np.max(np.abs(incidence @ change), initial=0.0) > 1e-12 * max(1.0, float(np.max(upper[working]))):
            continue            # an answer that breaks the equalities (the interior point's, when the
            #                     correction above cannot restore them): keep α feasible
        if linear_term + 0.5 * curvature > 1e-12 * (abs(linear_term) + curvature):
            continue                                            # an increase: keep α (a stall if it lasts)
        alpha[working] = new
        beta_change = kernels.beta_change(position, k_w, l_w, change, instances.size, n_labels)
        beta[instances] += beta_change
        # G += K[:, I] Δβ_I with the rows of K read for the Hessian (rows whose pairs did not move
        # add zero; gathering the others again would cost about what the product saves)
        kernel_beta += kernel_rows.T @ beta_change
    if not converged and not stalled:                           # max_iter: certify the last α
        flat_g = kernel_beta.ravel()
        gradient = flat_g[flat_relevant] - flat_g[flat_irrelevant] - 1.0
        certified, gap, kkt = certify(gradient, biases)
        history["certificate"].append((max_iter, gap, kkt))
        converged = gap <= tol and kkt <= tol
    stop_value = max(gap, kkt)
    if stalled:
        dual_roundoff, score_roundoff = _dual_roundoff(float(alpha.sum()), root_diagonal, beta)
        largest = float(np.max(root_diagonal, initial=0.0)) ** 2
        # the scores' round-off at β, or at a unit β when the sub-problems never moved it: their steps
        # are then lost in the round-off of a Gram matrix of this scale (which of the two happens is
        # round-off too: the rank-one Gram matrix of tests/test_rank_svm_decomposition.py at 1e94)
        score_roundoff = max(score_roundoff, np.finfo(np.float64).eps * largest)
        cause = ""
        if score_roundoff > tol:
            cause = (f" The round-off of the scores Kβ (about {score_roundoff:.1e}, largest K_ii "
                     f"{largest:.1e}) exceeds the tolerance: at this scale "
                     "of K the decomposition's gradients are round-off in float64 (rescale X, or set gamma).")
        warnings.warn(
            f"Rank-SVM decomposition stalled at iteration {iteration} (no dual increase beyond its "
            f"round-off, {dual_roundoff:.1e}, for {STALL_ITERATIONS} iterations): relative duality gap "
            f"{gap:.3e}, max scaled KKT residual {kkt:.3e}, tolerance asked {tol:.1e}.{cause}",
            ConvergenceWarning, stacklevel=2)
    elif not converged:
        warn_not_converged("Rank-SVM decomposition", STOP_RULE, stop_value, tol, max_iter)
    alpha_out = alpha[inverse]
    return SolverResult(primal={"beta": problem.scatter(alpha_out), "b": certified}, dual={"alpha": alpha_out},
                        converged=converged, n_iter=iteration, stop_value=stop_value, stop_rule=STOP_RULE,
                        solve_time=time.perf_counter() - start, history=history, solver="decomposition")
