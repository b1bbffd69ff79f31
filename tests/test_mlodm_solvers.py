"""mLODM solvers: the block NNQP sub-solvers (exact active set, M³) and dual BCD (Alg. 1)."""

from __future__ import annotations

import warnings
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.optimize import nnls
from sklearn.exceptions import ConvergenceWarning

from mlsvm.data import ranking_pairs
from mlsvm.datasets import make_multilabel
from mlsvm.formulations import mlodm
from mlsvm.kernels import make_kernel
from mlsvm.solvers import mlodm_bcd
from mlsvm.solvers.mlodm_bcd import _block, _instance_blocks, solve_bcd
from mlsvm.solvers.nnqp import natural_residual, nnqp_active_set, nnqp_m3
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.report import relative_difference
from mlsvm.verification.tolerances import BACKEND_AGREEMENT, tolerance
from tests.mlodm_problems import mlodm_problems, random_dual_point

EXACT = tolerance("mlodm", "bcd")
#: the natural-residual tolerance the M³ sub-solver is asked for in these tests
M3_TOL = 1e-9


def _block_nnqp(p: int, seed: int):
    """A strictly convex NNQP of size 2p with the ±A block structure of eq. (24)."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((p, p + 1))
    A = A @ A.T
    H = np.block([[A, -A], [-A, A]]) + np.diag(np.concatenate([np.full(p, 0.5), np.full(p, 1.5)]))
    return H, 3.0 * rng.standard_normal(2 * p)


@st.composite
def nnqps(draw):
    """Random strictly convex NNQPs, half of them with the ±A block structure of eq. (24)."""
    p = draw(st.integers(1, 8))
    seed = draw(st.integers(0, 2**16))
    if draw(st.booleans()):
        return _block_nnqp(p, seed)
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((p, p))
    H = A @ A.T + draw(st.sampled_from([0.05, 1.0])) * np.eye(p)
    return H, 3.0 * rng.standard_normal(p)


@settings(max_examples=40)
@given(nnqps())
def test_active_set_is_exact_and_agrees_with_nnls_on_a_cholesky_factor(qp):
    H, v = qp
    x, _ = nnqp_active_set(H, v)
    assert np.all(x >= 0)
    scale = 1 + np.abs(H).max() * max(1, np.abs(x).max()) + np.abs(v).max()
    assert natural_residual(H, v, x) <= 1e-12 * scale
    # independent: ½ηᵀHη + vᵀη = ½‖Rη + R⁻ᵀv‖² + const with H = RᵀR, solved by Lawson–Hanson NNLS
    R = np.linalg.cholesky(H).T
    reference, _ = nnls(R, -np.linalg.solve(R.T, v))
    np.testing.assert_allclose(x, reference, atol=1e-8 * scale)
    # a warm start from any non-negative point reaches the same optimum
    warm, _ = nnqp_active_set(H, v, start=np.abs(np.random.default_rng(0).standard_normal(v.size)))
    np.testing.assert_allclose(warm, x, atol=1e-10 * scale)


@settings(max_examples=40)
@given(nnqps())
@example(_block_nnqp(8, 221))
def test_m3_reaches_the_exact_solution_to_its_stated_tolerance(qp):
    """At natural residual r, ‖η − η*‖₂ ≤ (1 + L)/σ · ‖r‖₂ (strongly monotone LCP error bound).

    M³ reaches M3_TOL within the budget where the optimum is strictly complementary by a margin:
    its update moves η_j by a step proportional to η_j, so near an optimal η*_j > 0 its rate is
    1 − O(η*_j), and near η*_j = 0 it is 1 − O(∇_j). Where that margin is below 1e-4 (relative to
    the data) no budget is promised; the point must then be honest: the residual returned is the
    natural residual of η, and the error bound holds at it. (Explore draw --hypothesis-seed=2517:
    η*_0 = 6.6e-5, residual 3.5e-3 after 1,000 updates, 4.3e-5 after 100,000, 5.2e-6 after 200,000.)"""
    H, v = qp
    exact, _ = nnqp_active_set(H, v)
    margin = np.min(np.maximum(exact, H @ exact + v)) / (1 + np.abs(v).max())
    eta, n_updates, residual = nnqp_m3(H, v, tol=M3_TOL, max_iter=200_000)
    assert np.all(eta >= 0)
    assert residual == natural_residual(H, v, eta)
    if margin >= 1e-4:
        assert residual <= M3_TOL
    else:
        assert residual <= M3_TOL or n_updates == 200_000
    eigenvalues = np.linalg.eigvalsh(H)
    bound = (1 + eigenvalues[-1]) / eigenvalues[0] * np.sqrt(v.size) * max(residual, M3_TOL)
    assert np.linalg.norm(eta - exact) <= bound


@settings(max_examples=20)
@given(nnqps())
def test_m3_never_increases_the_objective(qp):
    H, v = qp
    objective = lambda eta: 0.5 * eta @ H @ eta + v @ eta  # noqa: E731
    eta, previous = np.ones(v.size), objective(np.ones(v.size))
    for _ in range(30):
        eta, _, _ = nnqp_m3(H, v, tol=0.0, max_iter=1, start=eta)
        assert objective(eta) <= previous + 1e-12 * max(1.0, abs(previous))
        previous = objective(eta)


def test_block_subproblem_is_the_dual_restricted_to_one_instance():
    """F(η_i) of eq. (24) differs from the eq. (18) objective by a constant in the block."""
    data = make_multilabel(15, 3, 5, random_state=5)
    problem = mlodm.MLODMProblem(make_kernel("rbf", 0.7)(data.X), ranking_pairs(data.Y), 2.0, 0.3, 0.6)
    alpha, beta = random_dual_point(problem, 1)
    pairs = problem.pairs
    i = int(np.argmax(np.diff(pairs.offsets)))
    s, e = pairs.offsets[i], pairs.offsets[i + 1]
    margins = mlodm.pair_margins(problem, mlodm.coef_from_dual(problem, alpha, beta))[s:e]
    H, v = _block(problem.gram[i, i], pairs.relevant[s:e], pairs.irrelevant[s:e], margins,
                  alpha[s:e], beta[s:e], problem.C, problem.theta, problem.mu)
    rng = np.random.default_rng(2)
    differences = []
    for _ in range(4):
        eta = rng.random(2 * (e - s))
        a, b = alpha.copy(), beta.copy()
        a[s:e], b[s:e] = eta[: e - s], eta[e - s:]
        differences.append(-mlodm.dual_objective(problem, a, b) - (0.5 * eta @ H @ eta + v @ eta))
    np.testing.assert_allclose(differences, differences[0], atol=1e-10)


@settings(max_examples=10)
@given(mlodm_problems(), st.booleans(), st.booleans())
def test_bcd_exact_reaches_the_cvxpy_optimum_with_kkt(drawn, shrinking, polish):
    problem, _ = drawn
    truth = solve(mlodm.cvxpy_primal(problem)[0], "CLARABEL")
    result = solve_bcd(problem, subproblem="exact", tol=1e-9, random_state=0, shrinking=shrinking,
                       polish=polish, max_iter=20_000)
    alpha, beta = result.dual["alpha"], result.dual["beta"]
    primal = mlodm.primal_objective(problem, mlodm.coef_from_dual(problem, alpha, beta))
    dual = mlodm.dual_objective(problem, alpha, beta)
    assert result.converged
    assert relative_difference(primal, truth) <= EXACT.objective
    assert (primal - dual) / max(1, abs(primal), abs(dual)) <= EXACT.gap
    assert max(mlodm.kkt_residuals(problem, alpha, beta).values()) <= EXACT.kkt


@given(mlodm_problems(), st.integers(0, 2**16), st.sampled_from([64, 3]))
def test_polish_preconditioner_is_the_inverse_of_p_ff_instance_blocks(drawn, seed, block_max):
    """The polish's CG preconditioner on a free set F equals, entry for entry, the inverse of the
    block diagonal of ``P_FF`` with one block per instance — ``P`` read column by column from the
    dual operator, so the block structure is not assumed twice —, blocks above the size cap
    replaced by their diagonal."""
    problem, _ = drawn
    T = problem.pairs.n_pairs
    operator = mlodm._dual_operator(problem)
    P = np.column_stack([operator.matvec(column) for column in np.eye(2 * T)])
    rng = np.random.default_rng(seed)
    index = np.flatnonzero(rng.random(2 * T) < 0.7)
    if index.size == 0:
        index = np.array([0])
    instance = problem.pairs.instance[index % T]
    block_diagonal = np.where(instance[:, None] == instance[None, :], P[np.ix_(index, index)], 0.0)
    large = np.bincount(instance, minlength=problem.pairs.n_samples)[instance] > block_max
    block_diagonal[large] = np.diag(np.diag(block_diagonal))[large]
    with patch.object(mlodm_bcd, "PRECONDITIONER_BLOCK_MAX", block_max):
        preconditioner = _instance_blocks(problem, index)
    vectors = rng.standard_normal((index.size, 3))
    applied = np.column_stack([preconditioner.matvec(v) for v in vectors.T])
    np.testing.assert_allclose(block_diagonal @ applied, vectors, rtol=0, atol=1e-8 * np.abs(vectors).max())


@settings(max_examples=5)
@given(mlodm_problems(max_samples=8, max_labels=3))
def test_bcd_m3_is_within_the_gap_it_certifies(drawn):
    problem, _ = drawn
    truth = solve(mlodm.cvxpy_primal(problem)[0], "CLARABEL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # certified at whatever gap it reached
        result = solve_bcd(problem, subproblem="m3", tol=1e-6, random_state=0, max_iter=60)
    alpha, beta = result.dual["alpha"], result.dual["beta"]
    primal = mlodm.primal_objective(problem, mlodm.coef_from_dual(problem, alpha, beta))
    dual = mlodm.dual_objective(problem, alpha, beta)
    gap = (primal - dual) / max(1, abs(primal), abs(dual))
    # the certificate brackets the optimum: D ≤ opt ≤ P, up to the ground truth's own accuracy
    truth_error = BACKEND_AGREEMENT * max(1.0, abs(truth))
    assert dual <= truth + truth_error and primal >= truth - truth_error
    assert relative_difference(primal, truth) <= gap + BACKEND_AGREEMENT


def test_bcd_history_gap_is_monotone_in_the_dual_and_seeded():
    data = make_multilabel(30, 4, 4, random_state=1)
    problem = mlodm.MLODMProblem(make_kernel("rbf", 0.5)(data.X), ranking_pairs(data.Y), 2.0, 0.3, 0.4)
    first = solve_bcd(problem, tol=1e-10, random_state=3)
    again = solve_bcd(problem, tol=1e-10, random_state=3)
    np.testing.assert_array_equal(first.dual["alpha"], again.dual["alpha"])
    assert np.all(np.diff(first.history["dual"]) >= -1e-12)   # exact block minimisation never lowers D
    assert first.stop_rule.startswith("max(relative duality gap")


def test_bcd_warns_with_the_gap_when_max_iter_ends_it():
    data = make_multilabel(30, 4, 4, random_state=1)
    problem = mlodm.MLODMProblem(make_kernel("linear")(data.X), ranking_pairs(data.Y), 8.0, 0.1, 0.9)
    with pytest.warns(ConvergenceWarning, match="reached .* tolerance asked 1.0e-12"):
        result = solve_bcd(problem, tol=1e-12, max_iter=2, random_state=0)
    assert not result.converged and result.n_iter == 2


def test_bcd_rejects_an_unknown_subproblem():
    data = make_multilabel(10, 2, 3, random_state=1)
    problem = mlodm.MLODMProblem(make_kernel("linear")(data.X), ranking_pairs(data.Y))
    with pytest.raises(ValueError, match="subproblem must be one of"):
        solve_bcd(problem, subproblem="newton")


def _slow_problem():
    """Low-rank linear Gram matrix with a large C: plain BCD needs thousands of sweeps."""
    data = make_multilabel(30, 4, 4, random_state=1)
    return mlodm.MLODMProblem(make_kernel("linear")(data.X), ranking_pairs(data.Y), 8.0, 0.1, 0.9)


def _polish_outcomes(outcomes):
    """A stand-in for ``_polish`` that returns ``outcomes[k]`` at its k-th call (None: CG failed;
    ``"same"``: the point it was given, which lowers nothing) and None after the last."""
    calls = iter(outcomes)

    def polish(problem, alpha, beta, tol):
        outcome = next(calls, None)
        return (alpha.copy(), beta.copy()) if outcome == "same" else outcome
    return polish


@pytest.mark.parametrize("failure", [None, "same"])
def test_polish_that_keeps_failing_is_tried_at_sweeps_1_2_4_8_16(failure):
    """A polish that does not halve the stop value (failed CG, or the same point, which the
    certificate on exactly recomputed scores may find better by round-off) makes the next ones
    wait twice as long: 5 attempts in 20 sweeps instead of 20."""
    problem = _slow_problem()
    with patch.object(mlodm_bcd, "_polish", _polish_outcomes([failure] * 20)), \
            pytest.warns(ConvergenceWarning, match="did not converge in 20 iterations"):
        result = solve_bcd(problem, tol=1e-12, max_iter=20, random_state=0, polish=True)
    assert np.flatnonzero(result.history["polish_tried"]) + 1 == pytest.approx([1, 2, 4, 8, 16])
    with pytest.warns(ConvergenceWarning):
        plain = solve_bcd(problem, tol=1e-12, max_iter=20, random_state=0)
    np.testing.assert_allclose(result.dual["alpha"], plain.dual["alpha"], rtol=0, atol=1e-12)


def test_an_accepted_polish_resets_the_wait():
    """Failures at sweeps 1 and 2, an accepted point at sweep 4 (far better, not optimal); the count
    then starts again: attempts at 5, 6, 8, 12 and 20."""
    problem = _slow_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ahead = solve_bcd(problem, tol=1e-12, max_iter=300, random_state=1)
    better = (ahead.dual["alpha"], ahead.dual["beta"])
    with patch.object(mlodm_bcd, "_polish", _polish_outcomes([None, None, better])), \
            pytest.warns(ConvergenceWarning, match="did not converge in 20 iterations"):
        result = solve_bcd(problem, tol=1e-12, max_iter=20, random_state=0, polish=True)
    assert np.flatnonzero(result.history["polish_tried"]) + 1 == pytest.approx([1, 2, 4, 5, 6, 8, 12, 20])
    assert np.flatnonzero(result.history["polished"]) + 1 == pytest.approx([4])
    assert result.history["stop_value"][3] == pytest.approx(ahead.stop_value, rel=1e-9)


def test_polish_that_lands_after_failures_certifies_the_sweep():
    """Three failed attempts (sweeps 1, 2, 4), then the real polish at sweep 8 lands on the optimum
    and certifies it there; plain BCD is nowhere near at sweep 8."""
    problem = _slow_problem()
    real = mlodm_bcd._polish
    failures = _polish_outcomes([None] * 3)
    attempts = []

    def polish(*args, **kwargs):
        attempts.append(len(attempts))
        return failures(*args, **kwargs) if len(attempts) <= 3 else real(*args, **kwargs)
    with patch.object(mlodm_bcd, "_polish", polish):
        result = solve_bcd(problem, tol=1e-9, max_iter=100, random_state=0, polish=True)
    assert result.converged and result.n_iter == 8
    assert np.flatnonzero(result.history["polish_tried"]) + 1 == pytest.approx([1, 2, 4, 8])
    assert result.history["polished"][-1]
    assert max(mlodm.kkt_residuals(problem, result.dual["alpha"], result.dual["beta"]).values()) <= EXACT.kkt
