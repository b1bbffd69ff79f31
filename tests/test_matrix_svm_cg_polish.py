"""The polish's conjugate-gradient free-set solves (``IterativeFreeSetSystem``, used from
``ITERATIVE_FROM`` free indices on): equal to direct solves, the switch on both sides of its
threshold, the fall-back to the Cholesky factor, the whole "fast" route against CVXPY with CG
everywhere, and agreement with the Cholesky-only route on the real datasets."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.exceptions import ConvergenceWarning

from mlsvm import MatrixSVM
from mlsvm.datasets import load_emotions, load_yeast, make_multilabel
from mlsvm.formulations import matrix_svm as ms
from mlsvm.kernels import make_kernel
from mlsvm.report import relative_difference
from mlsvm.solvers import matrix_svm_polish as polish
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.solvers.matrix_svm_agd import lambda_max, solve_dual_agd
from mlsvm.solvers.matrix_svm_polish import IterativeFreeSetSystem, polish_labels

NEVER = 10**12     # ITERATIVE_FROM that keeps every label on the Cholesky factor


def _rough(n=80, d=3, q=3, gamma=1.0, seed=4):
    data = make_multilabel(n, d, q, noise=0.2, random_state=seed)
    problem = ms.MatrixSVMProblem(make_kernel("rbf", gamma)(data.X), data.Y, 1.0)
    rough = solve_dual_agd(problem.gram_bar, problem.signed, 1.0, tol=1e-2).dual["alpha"]
    return data, problem, rough


def _polish(problem, rough):
    G, S = problem.gram_bar, problem.signed
    return polish_labels(G, S, rough, 1.0, gradient=S * (G @ (rough * S)) - 1.0, scale=0.5, steps=20)


@pytest.mark.parametrize("seed", range(3))
def test_cg_solve_equals_the_direct_solve(seed):
    rng = np.random.default_rng(seed)
    n = 300
    gram_bar = make_kernel("rbf", 1.0)(rng.normal(size=(n, 8))) + 1.0   # κ(K̄_FF) ~ 500: 26 iterations
    free = rng.random(n) < 0.7
    rhs = rng.normal(size=int(free.sum()))
    expected = np.linalg.solve(gram_bar[np.ix_(free, free)], rhs)
    x = IterativeFreeSetSystem(gram_bar).solve(free, rhs, np.zeros(rhs.size))
    np.testing.assert_allclose(x, expected, rtol=1e-8, atol=1e-8)
    # a loose solve meets its own residual bound only
    loose = IterativeFreeSetSystem(gram_bar).solve(free, rhs, np.zeros(rhs.size), rtol=1e-3)
    residual = np.linalg.norm(gram_bar[np.ix_(free, free)] @ loose - rhs)
    assert residual <= 2e-3 * np.linalg.norm(rhs)


def test_cg_over_budget_returns_none(monkeypatch):
    """An ill-conditioned block (raw, close points: RBF with a tiny γ) is not solved in a budget of
    two iterations: the system says so rather than return an inexact x."""
    monkeypatch.setattr(polish, "CG_MIN_BUDGET", 2)
    rng = np.random.default_rng(0)
    gram_bar = make_kernel("rbf", 1e-3)(rng.normal(size=(60, 3))) + 1.0
    free = np.ones(60, dtype=bool)
    assert IterativeFreeSetSystem(gram_bar).solve(free, rng.normal(size=60), np.zeros(60)) is None


@pytest.mark.parametrize("budget", [None, 2])
def test_polish_by_cg_equals_polish_by_cholesky_and_cvxpy(monkeypatch, budget):
    """Both sides of the switch (every label by CG, every label by the factor) and the fall-back
    from CG to the factor (a CG budget of 2 iterations) give the same candidate, the CVXPY optimum."""
    data, problem, rough = _rough()
    monkeypatch.setattr(polish, "ITERATIVE_FROM", NEVER)
    by_factor, _ = _polish(problem, rough)
    monkeypatch.setattr(polish, "ITERATIVE_FROM", 1)
    if budget is not None:
        monkeypatch.setattr(polish, "CG_MIN_BUDGET", budget)
        monkeypatch.setattr(polish, "CG_BUDGET_RATIO", NEVER)
    by_cg, product = _polish(problem, rough)
    np.testing.assert_allclose(by_cg, by_factor, atol=1e-8)
    np.testing.assert_allclose(product, problem.gram_bar @ (by_cg * problem.signed), rtol=1e-12, atol=1e-12)
    for k in range(problem.signed.shape[1]):
        label = ms.MatrixSVMProblem(problem.gram, data.Y[:, [k]], 1.0)
        reference = -solve(ms.cvxpy_dual(label)[0], "CLARABEL")
        assert abs(ms.dual_objective(label, by_cg[:, [k]]) - reference) <= 1e-9 * abs(reference)


@pytest.mark.parametrize("offset, iterative", [(0, True), (1, False)])
def test_switch_threshold_both_sides(monkeypatch, offset, iterative):
    """A label whose first free set has exactly ``ITERATIVE_FROM`` indices is solved by CG; one
    index short of it, by the Cholesky factor."""
    _, problem, rough = _rough()
    G, S = problem.gram_bar, problem.signed
    point = rough - 0.5 * (S * (G @ (rough * S)) - 1.0)
    sizes = np.count_nonzero((point > 0.0) & (point < 1.0), axis=0)
    k = int(np.argmax(sizes))
    made = []
    monkeypatch.setattr(polish, "ITERATIVE_FROM", int(sizes[k]) + offset)
    original = IterativeFreeSetSystem.__init__

    def spy(self, gram_bar):
        made.append(True)
        original(self, gram_bar)
    monkeypatch.setattr(IterativeFreeSetSystem, "__init__", spy)
    polish_labels(G, S[:, [k]], rough[:, [k]], 1.0, gradient=S[:, [k]] * (G @ (rough[:, [k]] * S[:, [k]])) - 1.0,
                  scale=0.5, steps=20)
    assert bool(made) == iterative


@settings(max_examples=8)
@given(seed=st.integers(0, 1000), q=st.integers(1, 3), C=st.sampled_from([0.1, 1.0, 10.0]),
       gamma=st.sampled_from([0.1, 1.0, 5.0]))
def test_fast_with_cg_everywhere_reaches_the_cvxpy_optimum(seed, q, C, gamma):
    data = make_multilabel(40, 3, q, noise=0.2, random_state=seed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(polish, "ITERATIVE_FROM", 1)
        est = MatrixSVM(C=C, kernel="rbf", gamma=gamma, tol=1e-8).fit(data.X, data.Y)
    problem = ms.MatrixSVMProblem(make_kernel("rbf", gamma)(data.X), data.Y, C)
    reference = solve(ms.cvxpy_primal(problem)[0], "CLARABEL")
    report = est.fit_report_
    assert report.converged
    assert relative_difference(report.primal_objective, reference) <= 1e-6
    assert max(report.kkt.values()) <= 1e-8


def test_cg_route_warns_when_the_budget_runs_out():
    data = make_multilabel(60, 3, 2, noise=0.2, random_state=0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(polish, "ITERATIVE_FROM", 1)
        with pytest.warns(ConvergenceWarning, match="relative duality gap"):
            MatrixSVM(kernel="rbf", gamma=1.0, solver="apg", tol=1e-12, max_iter=3).fit(data.X, data.Y)


@pytest.mark.parametrize("load", [load_emotions, lambda: load_yeast("train")], ids=["emotions", "yeast"])
def test_cg_route_agrees_with_the_cholesky_route_on_real_data(datasets_dir, load, monkeypatch):
    """The "fast" route with CG from |F| ≥ 1 and with the factor only: same objective to 1e-6 (both
    certified at 1e-8) and the same decision function."""
    data = load()
    fits = {}
    for threshold in (1, NEVER):
        monkeypatch.setattr(polish, "ITERATIVE_FROM", threshold)
        fits[threshold] = MatrixSVM(kernel="rbf", gamma=0.3, tol=1e-8).fit(data.X, data.Y)
        assert fits[threshold].fit_report_.converged
    cg, factor = fits[1].fit_report_, fits[NEVER].fit_report_
    assert relative_difference(cg.primal_objective, factor.primal_objective) <= 1e-6
    scores = [fit.decision_function(data.X[:200]) for fit in fits.values()]
    np.testing.assert_allclose(scores[0], scores[1], atol=1e-5)


@pytest.mark.parametrize("n", [150, 300])
def test_lambda_max_of_k_without_the_copy(n):
    """λ_max(K̄ − 11ᵀ) by the operator (Lanczos, n > 200) or dense (n ≤ 200) equals the dense
    eigenvalue of the copy."""
    gram_bar = make_kernel("rbf", 0.2)(np.random.default_rng(n).normal(size=(n, 5))) + 1.0
    expected = np.linalg.eigvalsh(gram_bar - 1.0)[-1]
    assert abs(lambda_max(gram_bar, minus_ones=True) - expected) <= 1e-10 * expected
