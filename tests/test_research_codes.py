"""Two research codes of the papers, mapped onto mlsvm by mlsvm.testing.conventions.

Neither runs inside the test suite (Min-Ling Zhang's Rank-SVM is MATLAB — WORC's Python port needs
numpy < 1.24 — and LIBODM is C++), so each test ports the few lines that define the problem the
code solves, written from its source (docs/testing.md names the files), solves that with CVXPY,
reads the answer out in the code's own layout and checks that the converter makes it certify as
our optimum — and that the other readings of the constants do not.
"""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from mlsvm.datasets import make_multilabel
from mlsvm.solvers.cvxpy_tools import solve
from mlsvm.testing import certify
from mlsvm.testing.conventions import mlodm_from_libodm, mlodm_libodm_parameters, rank_svm_from_zhang

DATA = make_multilabel(24, 3, 3, random_state=5)
BACKENDS = ("CLARABEL", "OSQP")     # the ground truth's tight settings, the first that answers optimal
KERNELS = {"linear": (dict(kernel="linear"), lambda X: X @ X.T),
           "rbf": (dict(kernel="rbf", gamma=0.5), lambda X: rbf_kernel(X, gamma=0.5))}


def _factor(gram):
    values, vectors = np.linalg.eigh(gram)
    return vectors * np.sqrt(np.maximum(values, 0.0))


def _zhang_rank_svm(X, target, cost, gram_of, box=None):
    """RankSVM_train.m's problem and read-out: its dual (``neg_dual_func``: ½Σ_k β_kᵀKβ_k − Σα) with
    ``0 ≤ α ≤ cost/size_alpha`` and ``Aeq α = 0`` over the instances it keeps (neither all +1 nor all
    −1), pairs in its order (instance, relevant label, irrelevant label); ``Weights`` = β (Q × n'),
    ``Bias`` = least squares of ``b_r − b_c = −gradient`` over the free α's (|α| ≥ lambda_tol and
    |α − UB| ≥ lambda_tol). ``box`` replaces its upper bound (to test a wrong reading)."""
    num_class = target.shape[0]
    kept = [i for i in range(target.shape[1]) if abs(target[:, i].sum()) != num_class]
    SVs, target = X[kept], target[:, kept]
    pairs, upper = [], []
    for i in range(len(kept)):
        relevant, irrelevant = np.flatnonzero(target[:, i] == 1), np.flatnonzero(target[:, i] != 1)
        size_alpha = relevant.size * irrelevant.size
        for r in relevant:
            for c in irrelevant:
                pairs.append((i, r, c))
                upper.append(cost / size_alpha if box is None else box(cost, size_alpha))
    T, n = len(pairs), len(kept)
    scatter = np.zeros((num_class, n, T))            # β_k = scatter[k] @ α  (c_value[k][r, c])
    for t, (i, r, c) in enumerate(pairs):
        scatter[r, i, t], scatter[c, i, t] = 1.0, -1.0
    gram = gram_of(SVs)
    L = _factor(gram)
    alpha = cp.Variable(T)
    objective = 0.5 * sum(cp.sum_squares(L.T @ (scatter[k] @ alpha)) for k in range(num_class)) - cp.sum(alpha)
    constraints = [alpha >= 0, alpha <= np.array(upper)] + [cp.sum(scatter[k] @ alpha) == 0 for k in range(num_class)]
    solve(cp.Problem(cp.Minimize(objective), constraints), BACKENDS)
    a = np.clip(alpha.value, 0.0, np.array(upper))
    Weights = np.stack([scatter[k] @ a for k in range(num_class)])      # Q × n'
    inner = Weights @ gram                                                # inner[k, j] = β_k · K[:, j]
    lambda_tol = 1e-6 * max(upper)
    left, right = [], []
    for t, (i, r, c) in enumerate(pairs):
        if a[t] >= lambda_tol and upper[t] - a[t] >= lambda_tol:
            row = np.zeros(num_class)
            row[r], row[c] = 1.0, -1.0
            left.append(row)
            right.append(-(inner[r, i] - inner[c, i] - 1.0))              # −gradient
    if not left:        # no free α: the code returns one number, np.sum(train_target)
        return Weights, float(np.sum(target))
    return Weights, np.linalg.lstsq(np.array(left), np.array(right), rcond=None)[0]


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("C", [0.3, 0.5])   # bounded α: the box matters
def test_zhang_rank_svm_is_ours_at_c_equal_cost(kernel, C):
    params, gram_of = KERNELS[kernel]
    Y = DATA.Y.copy()
    Y[0] = 1                                            # an instance with every label: the code drops it
    target = 2.0 * Y.T - 1.0                            # its Q × n targets in ±1
    Weights, Bias = _zhang_rank_svm(DATA.X, target, C, gram_of)
    n_relevant = Y.sum(axis=1)
    assert Weights.shape == (3, np.count_nonzero((n_relevant > 0) & (n_relevant < 3))) and Weights.shape[1] < len(Y)
    solution = rank_svm_from_zhang(Weights, Bias, Y)
    assert abs(solution["b"].sum()) <= 1e-8             # its minimum-norm biases sum to zero
    certificate = certify("RankSVM", DATA.X, Y, solution, C=C, **params)
    assert certificate.passed and certificate.decision_difference <= 1e-4, str(certificate)
    # the box read as cost per pair (no 1/(|Y_i||Ȳ_i|)) is another problem's optimum
    Weights, Bias = _zhang_rank_svm(DATA.X, target, C, gram_of, box=lambda cost, size: cost)
    wrong = certify("RankSVM", DATA.X, Y, rank_svm_from_zhang(Weights, Bias, Y), C=C, **params)
    assert not wrong.passed and "suboptimality" in wrong.failures[0]


def test_zhang_weights_need_one_row_per_label_and_a_known_column_count():
    with pytest.raises(ValueError, match="weights has 5 columns"):
        rank_svm_from_zhang(np.zeros((3, 5)), np.zeros(3), DATA.Y)
    scalar = rank_svm_from_zhang(np.zeros((3, DATA.X.shape[0])), 0.5, DATA.Y)   # no free α: one number
    assert np.array_equal(scalar["b"], np.full(3, 0.5))


def _two_labels():
    y = DATA.Y[:, 0]
    return np.column_stack([y, 1 - y]), 2.0 * y - 1.0


def _libodm_primal(X, y, lam, theta, mu):
    """odm.cpp's ``odm_tr::fun`` (the objective its trust-region Newton solver minimises, no bias):
    ``½‖w‖² + coef1 Σ (y wᵀx − (1−θ))₋² + coef2 Σ (y wᵀx − (1+θ))₊²``, ``coef1 = λ/(m(1−θ)²)``,
    ``coef2 = coef1·μ``."""
    m = X.shape[0]
    coef1 = lam / (m * (1 - theta) ** 2)
    w = cp.Variable(X.shape[1])
    z = cp.multiply(y, X @ w)
    objective = (0.5 * cp.sum_squares(w) + coef1 * cp.sum_squares(cp.pos(1 - theta - z))
                 + coef1 * mu * cp.sum_squares(cp.pos(z - 1 - theta)))
    solve(cp.Problem(cp.Minimize(objective)), BACKENDS)
    return w.value


def _libodm_dual(gram, y, lam, theta, mu):
    """odm.cpp's ``solve_cd`` problem (its coordinate gradient ``G``): minimise
    ``½ uᵀQu + ½c₁Σα² + ½c₂Σα'² + (θ−1)Σα + (θ+1)Σα'``, ``u = α − α'``, ``α, α' ≥ 0``,
    ``Q = diag(y) K diag(y)``, ``c₁ = m(1−θ)²/(2λ)``, ``c₂ = c₁/μ``; its model keeps
    ``sv_coef = y(α − α')`` at the indices where ``α ≠ α'``."""
    m = gram.shape[0]
    c1 = 0.5 * m * (1 - theta) ** 2 / lam
    a, a2 = cp.Variable(m, nonneg=True), cp.Variable(m, nonneg=True)
    L = _factor(gram)
    objective = (0.5 * cp.sum_squares(L.T @ cp.multiply(y, a - a2)) + 0.5 * c1 * cp.sum_squares(a)
                 + 0.5 * c1 / mu * cp.sum_squares(a2) + (theta - 1) * cp.sum(a) + (theta + 1) * cp.sum(a2))
    solve(cp.Problem(cp.Minimize(objective)), BACKENDS)
    coef = y * (a.value - a2.value)
    support = np.flatnonzero(np.abs(coef) > 0)
    return coef[support], support


@pytest.mark.parametrize("C, theta, mu", [(0.05, 0.2, 0.5), (1.0, 0.5, 0.9), (0.3, 0.0, 1.0)])
def test_libodm_is_mlodm_with_two_labels_at_lambda_c_m_one_minus_theta_squared(C, theta, mu):
    Y, y = _two_labels()
    m = len(y)
    settings = mlodm_libodm_parameters(C, theta, mu, m)
    assert settings["bias"] == 0                        # mLODM has no bias: LIBODM's default, no -b
    w = _libodm_primal(DATA.X, y, settings["lambda"], theta, mu)
    certificate = certify("MLODM", DATA.X, Y, mlodm_from_libodm(m, w=w), kernel="linear", C=C, theta=theta, mu=mu)
    assert certificate.passed, str(certificate)
    sv_coef, support = _libodm_dual(rbf_kernel(DATA.X, gamma=0.5), y, settings["lambda"], theta, mu)
    kernel = certify("MLODM", DATA.X, Y, mlodm_from_libodm(m, sv_coef=sv_coef, support=support),
                     kernel="rbf", gamma=0.5, C=C, theta=theta, mu=mu)
    assert kernel.passed, str(kernel)
    # λ read as C (LIBODM's λ is our C times m(1−θ)²) is another problem's optimum
    w_wrong = _libodm_primal(DATA.X, y, C, theta, mu)
    wrong = certify("MLODM", DATA.X, Y, mlodm_from_libodm(m, w=w_wrong), kernel="linear", C=C, theta=theta, mu=mu)
    assert not wrong.passed and "suboptimality" in wrong.failures[0]


def test_libodm_converter_needs_one_kind_of_model():
    with pytest.raises(ValueError, match="either w"):
        mlodm_from_libodm(5)
    with pytest.raises(ValueError, match="needs support"):
        mlodm_from_libodm(5, sv_coef=np.ones(2))
    with pytest.raises(ValueError, match=r"theta must be in \[0, 1\)"):
        mlodm_libodm_parameters(1.0, 1.0, 0.5, 10)
