"""Rank-SVM (Elisseeff & Weston, SPEC §2.1): CVXPY primal and dual, numpy objectives, biases, KKT.

With the ranking pairs ``t = (i, k, l)``, ``k ∈ Y_i``, ``l ∈ Ȳ_i`` (:func:`mlsvm.data.ranking_pairs`),
upper bounds ``u_t = C/(|Y_i||Ȳ_i|)`` and scores ``f_k(x) = ⟨w_k, φ(x)⟩ + b_k``:

Primal (Problem 8 with the ½ of its Lagrangian (8); the paper's statement drops it)::

    min_{w,b,ξ}  ½ Σ_k ‖w_k‖²  +  Σ_t u_t ξ_t      s.t.  f_k(x_i) − f_l(x_i) ≥ 1 − ξ_t,  ξ ≥ 0

Dual (Problem 10), ``β = scatter(α)`` (``β_ki = Σ c^k α``, eq. (13))::

    max_α  Σ_t α_t − ½ Σ_k β_kᵀ K β_k      s.t.  0 ≤ α_t ≤ u_t,   Σ_i β_ki = 0  (k = 1..Q)

Then ``w_k = Σ_i β_ki φ(x_i)`` (eq. (12)); ``Σ_k β_ki = 0`` for every i, hence ``Σ_k w_k = 0``.
The Q equalities sum to ``0 = 0``: only Q − 1 are independent, and the biases — the equality
multipliers — are defined up to a common shift; they are reported with ``Σ_k b_k = 0``.

As a QP ``min ½αᵀPα + qᵀα`` (the dual negated): ``P = Dᵀ(K ⊗ I_Q)D``, ``q = −1``, where ``D``
(T × nQ, two non-zeros per row) is the pair incidence: ``gather(F) = D vec(F)``,
``scatter(α) = Dᵀα``. ``P`` is only ever applied (``O(T + n²Q)``), never formed.

The linear kernel's problem may be built without K (``gram=None``, ``features=X``): every product
``Kβ`` is then ``X(Xᵀβ)`` (``O(nnz(X)·Q)``, X dense or CSR kept sparse), ``diag K`` the squared row
norms, and the objectives, KKT residuals and scores go through ``W = Xᵀβ`` — memory
``O(nnz(X) + T + nQ)``, no n × n matrix. Only the solvers that read K's columns (the working-set
decomposition, the CVXPY references without a factor) form it, through :attr:`RankSVMProblem.kernel_matrix`.

Instances without pairs (all labels or none) are kept: they have no α, so β is zero on their row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from scipy.sparse.linalg import LinearOperator

from mlsvm.data import RankingPairs, check_scalar, ranking_pairs
from mlsvm.formulations.evaluation import Evaluation, linear_weights, qp_residuals
from mlsvm.kernels import Kernel, check_gram, gram_factor
from mlsvm.solvers.compiled import compiled

__all__ = ["RankSVMProblem", "make_problem", "cvxpy_primal", "cvxpy_dual", "evaluate", "solution_from_cvxpy",
           "coef_from_dual", "primal_objective", "dual_objective", "dual_gradient", "decision_function",
           "bias_from_equality_multipliers", "optimal_biases", "bias_from_kkt", "circulation_lp",
           "linear_minimizer", "kkt_residuals", "center_biases", "uncentred_biases", "restore_equalities"]


@dataclass(frozen=True)
class RankSVMProblem:
    """A Rank-SVM training problem: Gram matrix, pairs, ``C`` and the pair operators.

    :meth:`gather`, :meth:`scatter`, :meth:`balance` (``Aα``) and :meth:`equality_adjoint`
    (``Aᵀb``) are compiled loops over the pairs' index arrays (int32): memory ``T`` floats for
    their result, nothing else T-sized. The sparse matrices ``incidence`` (``D``, T × nQ) and
    ``equality`` (``A``, Q × T, ``equality @ α = Σ_i β_i``) are formed only when a solver asks for
    them (the CVXPY references, the LPs, the working-set and interior-point solvers), then kept.
    ``features`` (optional, n × d with ``features featuresᵀ = gram``: ``X`` for the linear kernel)
    is a factor of the Gram matrix (``"fast"`` reads its width); with features, ``gram`` may be
    None and every product with K goes through the features (:meth:`kernel_times`).

    Parameters
    ----------
    gram : array of shape (n, n) or None
        Gram matrix K; None only with ``features`` (K = XXᵀ is then formed only when a solver asks
        for :attr:`kernel_matrix`).
    pairs : RankingPairs
        Ranking pairs of the labels.
    C : float
        Regularisation constant C > 0.
    upper : array of shape (T,)
        Box upper bounds ``u_t = C/(|Y_i||Ȳ_i|)``, one per pair.
    features : array of shape (n, d) or None, optional
        A factor of the Gram matrix (``features featuresᵀ = gram``), e.g. X for the linear kernel.
    """

    gram: np.ndarray | None
    pairs: RankingPairs
    C: float
    upper: np.ndarray = field(repr=False)
    features: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_samples(self) -> int:
        return self.pairs.n_samples

    @property
    def n_labels(self) -> int:
        return self.pairs.n_labels

    @property
    def n_pairs(self) -> int:
        return self.pairs.n_pairs

    @cached_property
    def incidence(self) -> sp.csr_matrix:
        """The pair incidence matrix D (T × nQ, CSR): ``gather(F) = D vec(F)``; formed on first use."""
        return self.pairs.gather_matrix("C")

    @cached_property
    def equality(self) -> sp.csr_matrix:
        """The Q × T matrix A of the equalities (``A α = Σ_i β_i``, CSR); formed on first use."""
        pairs, T = self.pairs, self.n_pairs
        indptr = np.arange(0, 2 * T + 1, 2, dtype=np.int64)
        indices = np.empty(2 * T, dtype=np.int32)
        indices[0::2], indices[1::2] = pairs.relevant, pairs.irrelevant
        data = np.empty(2 * T)
        data[0::2], data[1::2] = 1.0, -1.0
        return sp.csc_matrix((data, indices, indptr), shape=(self.n_labels, T)).tocsr()

    @cached_property
    def equality_transpose(self) -> sp.csr_matrix:
        """``Aᵀ`` (T × Q, CSR); formed on first use."""
        return self.equality.T.tocsr()

    @cached_property
    def kernel_matrix(self) -> np.ndarray:
        """K itself: the Gram matrix, or ``XXᵀ`` formed from the features (after the memory check
        of :mod:`mlsvm.kernels`) when the problem was built without it; for the solvers that read
        K's columns."""
        return self.gram if self.gram is not None else Kernel("linear")(self.features)

    @cached_property
    def kernel_diagonal(self) -> np.ndarray:
        """``diag K`` (the squared row norms of the features when the problem has no Gram matrix)."""
        if self.gram is not None:
            return np.diag(self.gram).copy()
        features = self.features
        squares = features.multiply(features).sum(axis=1) if sp.issparse(features) else np.einsum("ij,ij->i", features, features)
        return np.asarray(squares, dtype=np.float64).ravel()

    def kernel_times(self, beta: np.ndarray) -> np.ndarray:
        """``Kβ``: ``X(Xᵀβ)`` without a Gram matrix (``O(nnz(X)·Q)``), else the Gram matrix's product.

        Parameters
        ----------
        beta : array of shape (n, Q)
            The right-hand factor.
        """
        if self.gram is None:
            return np.asarray(self.features @ np.asarray(self.features.T @ beta))
        return self.gram @ beta

    def weights(self, beta: np.ndarray) -> np.ndarray:
        """``W = Xᵀβ`` (d × Q), the linear kernel's weights; needs the features.

        Parameters
        ----------
        beta : array of shape (n, Q)
            Coefficients over the training points.
        """
        return np.asarray(self.features.T @ beta)

    def scatter(self, alpha: np.ndarray) -> np.ndarray:
        """``β = scatter(α)``, shape (n, Q) (eq. (13)): :meth:`mlsvm.data.RankingPairs.scatter`.

        Parameters
        ----------
        alpha : array of shape (T,)
            One value per pair.
        """
        return self.pairs.scatter(alpha)

    def gather(self, F: np.ndarray) -> np.ndarray:
        """Pair margins ``F[i,k] − F[i,l]``: :meth:`mlsvm.data.RankingPairs.gather`.

        Parameters
        ----------
        F : array of shape (n, Q)
            Scores (or any per-instance, per-label values; a flat ``n·Q`` vector is read row-major).
        """
        return self.pairs.gather(F)

    def balance(self, alpha: np.ndarray) -> np.ndarray:
        """``Aα = Σ_i β_i`` (Q,): the equalities' left-hand side, without forming A.

        Parameters
        ----------
        alpha : array of shape (T,)
            One value per pair.
        """
        alpha = np.asarray(alpha, dtype=np.float64).ravel()
        q = self.n_labels
        return (np.bincount(self.pairs.relevant, alpha, minlength=q)
                - np.bincount(self.pairs.irrelevant, alpha, minlength=q))

    def equality_adjoint(self, b: np.ndarray) -> np.ndarray:
        """``Aᵀb``: ``b_k − b_l`` per pair.

        Parameters
        ----------
        b : array of shape (Q,)
            One value per label.
        """
        b = np.ascontiguousarray(b, dtype=np.float64).ravel()
        out = np.empty(self.n_pairs)
        _label_differences(b, self.pairs.relevant, self.pairs.irrelevant, out)
        return out

    def equality_operator(self) -> LinearOperator:
        """A (Q × T) as a LinearOperator (:meth:`balance`, :meth:`equality_adjoint`): no matrix."""
        return LinearOperator((self.n_labels, self.n_pairs), matvec=self.balance, rmatvec=self.equality_adjoint,
                              dtype=np.float64)


@compiled
def _label_differences(b, relevant, irrelevant, out):
    """``out[t] = b[k] − b[l]`` for the pairs ``t = (i, k, l)``."""
    for t in range(relevant.size):
        out[t] = b[relevant[t]] - b[irrelevant[t]]


@compiled
def _label_pair_sums(weights, relevant, irrelevant, out):
    """``out[k, l] += w_t`` for the pairs ``t = (i, k, l)`` (Q × Q)."""
    for t in range(relevant.size):
        out[relevant[t], irrelevant[t]] += weights[t]


def make_problem(gram, Y, C: float, *, check_psd: bool = True, features=None) -> RankSVMProblem:
    """Validate and build a :class:`RankSVMProblem`.

    Raises ``ValueError`` for ``C ≤ 0``, a Gram matrix that is not symmetric PSD beyond round-off
    (:func:`mlsvm.kernels.check_gram`), a ``Y`` without any ranking pair, ``features`` whose
    number of rows is not the Gram matrix's, or ``gram=None`` without features.

    Parameters
    ----------
    gram : array-like of shape (n, n) or None
        Gram matrix K (symmetric PSD); None with the linear kernel's ``features`` (K = XXᵀ is then
        not formed: memory ``O(nnz(X) + T + nQ)``).
    Y : array-like of shape (n, Q)
        Binary label indicator matrix; its ranking pairs define the problem.
    C : float
        Regularisation constant C > 0.
    check_psd : bool, default=True
        Check that the Gram matrix is symmetric PSD beyond round-off
        (:func:`mlsvm.kernels.check_gram`); False only converts it to float64.
    features : array of shape (n, d) or None, optional
        A factor of the Gram matrix (``features featuresᵀ = gram``), e.g. X for the linear kernel.
    """
    check_scalar(C, "C", low=0.0, low_open=True)
    if gram is None and features is None:
        raise ValueError("gram may be None only with the linear kernel's features (K = XXᵀ)")
    if gram is not None:
        gram = check_gram(gram, "gram") if check_psd else np.asarray(gram, dtype=np.float64)
    if features is not None:   # a factor K = XXᵀ; a sparse X stays sparse (CSR)
        features = sp.csr_matrix(features, dtype=np.float64) if sp.issparse(features) else \
            np.asarray(features, dtype=np.float64)
        if features.ndim != 2 or (gram is not None and features.shape[0] != gram.shape[0]):
            n_rows = "n" if gram is None else gram.shape[0]
            raise ValueError(f"features must have shape ({n_rows}, d); got {features.shape}")
    n = features.shape[0] if gram is None else gram.shape[0]
    pairs = ranking_pairs(Y)
    if pairs.n_samples != n:
        raise ValueError(f"Y has {pairs.n_samples} rows but the Gram matrix has {n}")
    return RankSVMProblem(gram, pairs, float(C), C * pairs.weight, features)


def uncentred_biases(problem: RankSVMProblem, beta: np.ndarray, centred: np.ndarray) -> np.ndarray:
    """The biases of Problem 8 for a solver that works with the centred kernel ``HKH`` (features
    ``x_i − m``) and found the biases ``centred`` for it: ``b = centred − mean_i (Kβ)_i``, centred.

    Where ``Σ_i β_ki = 0``, ``HKHβ = Kβ − 1 mean_i (Kβ)_i``, so the scores are the same. ``Kβ`` is
    formed by :meth:`RankSVMProblem.kernel_times`, as :func:`evaluate` and the estimators form the
    scores: with features far from the origin its round-off is nearly the same in every row (about
    ε‖m‖²Σ|β|), and these biases absorb it. Formed another way (``Wᵀm``, ``(K1/n)ᵀβ``), that
    round-off stays in every score: on 60 points with 4 features shifted by 10⁴ (tol 1e-8) the
    interior point and the ALM stopped as stalled with certificate KKT residuals of 5.6e-8 and
    1.1e-7, and certify at 4.2e-10 and 1.3e-11 with these biases.

    Parameters
    ----------
    problem : RankSVMProblem
        The problem.
    beta : array of shape (n, Q)
        The coefficients (on the equalities, up to round-off).
    centred : array of shape (Q,)
        The biases for the centred kernel.
    """
    return center_biases(np.asarray(centred, dtype=np.float64) - problem.kernel_times(beta).mean(axis=0))


def center_biases(b: np.ndarray) -> np.ndarray:
    """The representative with ``Σ_k b_k = 0`` (biases are defined up to a common shift).

    Parameters
    ----------
    b : array of shape (Q,)
        Biases.
    """
    b = np.asarray(b, dtype=np.float64)
    return b - b.mean()


# ---- CVXPY ground truths ------------------------------------------------------------------
def _factor(problem: RankSVMProblem) -> np.ndarray:
    """A dense factor ``L`` with ``LLᵀ = K``: the features themselves when there is no Gram matrix."""
    if problem.gram is None:
        features = problem.features
        return features.toarray() if sp.issparse(features) else features
    return gram_factor(problem.gram)


def cvxpy_primal(problem: RankSVMProblem):
    """CVXPY primal (Problem 8 with ½). ``w_k`` in the coordinates of a factor ``K = L Lᵀ``:
    ``V`` (r × Q), training scores ``F = L V + 1bᵀ``. Returns ``(cp.Problem, variables)``.

    Parameters
    ----------
    problem : RankSVMProblem
        The problem data (validated formulation object).
    """
    factor = _factor(problem)
    V = cp.Variable((factor.shape[1], problem.n_labels))
    b = cp.Variable(problem.n_labels)
    xi = cp.Variable(problem.n_pairs)
    scores = factor @ V + np.ones((problem.n_samples, 1)) @ cp.reshape(b, (1, problem.n_labels), order="C")
    margins = problem.incidence @ cp.vec(scores, order="C")
    objective = 0.5 * cp.sum_squares(V) + problem.upper @ xi
    cvx = cp.Problem(cp.Minimize(objective), [margins >= 1 - xi, xi >= 0])
    return cvx, {"V": V, "b": b, "xi": xi, "factor": factor}


def cvxpy_dual(problem: RankSVMProblem):
    """CVXPY dual (Problem 10) as the minimisation of ``½ Σ_k ‖Lᵀβ_k‖² − Σα``; dual optimum is
    ``−value``. Only the first Q − 1 equalities are imposed (the last is their negated sum; a
    redundant row would make the interior-point KKT system singular); they are
    ``cp.Problem.constraints[2]``, whose multipliers are the biases
    (:func:`bias_from_equality_multipliers`). Returns ``(cp.Problem, {"alpha"})``.

    Parameters
    ----------
    problem : RankSVMProblem
        The Rank-SVM problem to build the dual of.
    """
    factor = _factor(problem)
    alpha = cp.Variable(problem.n_pairs)
    beta = cp.reshape(problem.incidence.T @ alpha, (problem.n_samples, problem.n_labels), order="C")
    objective = 0.5 * cp.sum_squares(factor.T @ beta) - cp.sum(alpha)
    balance = cp.sum(beta, axis=0)[: problem.n_labels - 1] == 0
    cvx = cp.Problem(cp.Minimize(objective), [alpha >= 0, alpha <= problem.upper, balance])
    return cvx, {"alpha": alpha}


def bias_from_equality_multipliers(problem: RankSVMProblem, multipliers) -> np.ndarray:
    """Biases from the multipliers of the Q − 1 equalities of :func:`cvxpy_dual` (the last
    label's bias is 0 before centring). CVXPY's Lagrangian adds ``νᵀ(Aα)`` to the minimised
    objective, so stationarity reads ``Pα − 1 + Aᵀν + z = 0`` and ``b = ν`` (KKT of Problem 8).

    Parameters
    ----------
    problem : RankSVMProblem
        The problem data (validated formulation object).
    multipliers : array of shape (Q − 1,)
        Multipliers of the first Q − 1 equalities.
    """
    nu = np.zeros(problem.n_labels)
    nu[: problem.n_labels - 1] = np.asarray(multipliers, dtype=np.float64).ravel()
    return center_biases(nu)


def solution_from_cvxpy(problem: RankSVMProblem, cvx, variables) -> tuple[dict, dict]:
    """``(primal, dual)`` of a solved :func:`cvxpy_dual`: α clipped to its box ``[0, u]``, the
    biases from the equalities' multipliers, and the ``β`` that α implies.

    Parameters
    ----------
    problem : RankSVMProblem
        The problem :func:`cvxpy_dual` was built from.
    cvx : cvxpy.Problem
        The solved CVXPY problem (first element returned by :func:`cvxpy_dual`).
    variables : dict
        Its variables (second element returned by :func:`cvxpy_dual`).
    """
    alpha = np.clip(np.asarray(variables["alpha"].value, dtype=np.float64), 0.0, problem.upper)
    b = bias_from_equality_multipliers(problem, cvx.constraints[2].dual_value)
    return {"beta": coef_from_dual(problem, alpha), "b": b}, {"alpha": alpha}


# ---- numpy objectives ----------------------------------------------------------------------
def primal_objective(problem: RankSVMProblem, beta: np.ndarray, b: np.ndarray) -> float:
    """``½ Σ_k β_kᵀKβ_k + Σ_t u_t max(0, 1 − f_k(x_i) + f_l(x_i))`` at ``w_k = Σ_i β_ki φ(x_i)``.

    Parameters
    ----------
    problem : RankSVMProblem
        The problem data (validated formulation object).
    beta : array of shape (n, Q)
        β, ``w_k = Σ_i β_ki φ(x_i)``.
    b : array of shape (Q,)
        Biases.
    """
    kernel_beta = problem.kernel_times(beta)
    margins = problem.gather(kernel_beta + np.asarray(b)[None, :])
    slack = np.maximum(0.0, 1.0 - margins)
    return float(0.5 * np.sum(beta * kernel_beta) + problem.upper @ slack)


def coef_from_dual(problem: RankSVMProblem, alpha: np.ndarray) -> np.ndarray:
    """Eq. (12)/(13): ``β = scatter(α)`` (n × Q), so ``w_k = Σ_i β_ki φ(x_i)``.

    Parameters
    ----------
    problem : RankSVMProblem
        The Rank-SVM problem.
    alpha : array of shape (T,)
        The dual variables, one per pair.
    """
    return problem.scatter(alpha)


def dual_objective(problem: RankSVMProblem, alpha: np.ndarray) -> float:
    """``Σ α − ½ Σ_k β_kᵀKβ_k`` (Problem 10, to maximise).

    Parameters
    ----------
    problem : RankSVMProblem
        The problem data (validated formulation object).
    alpha : array of shape (T,)
        Pair multipliers α_ikl.
    """
    beta = problem.scatter(alpha)
    if problem.gram is None:   # βᵀKβ = ‖Xᵀβ‖²
        weights = problem.weights(beta)
        return float(alpha.sum() - 0.5 * np.sum(weights * weights))
    return float(alpha.sum() - 0.5 * np.sum(beta * (problem.gram @ beta)))


def dual_gradient(problem: RankSVMProblem, alpha: np.ndarray) -> np.ndarray:
    """Gradient of the minimised dual ``½αᵀPα − Σα``: ``g_t = ⟨w_k − w_l, φ(x_i)⟩ − 1`` (Fig. 11, 5).

    Parameters
    ----------
    problem : RankSVMProblem
        The problem data (validated formulation object).
    alpha : array of shape (T,)
        Pair multipliers α_ikl.
    """
    gradient = problem.gather(problem.kernel_times(problem.scatter(alpha)))
    gradient -= 1.0
    return gradient


def decision_function(beta: np.ndarray, b: np.ndarray, gram_test: np.ndarray) -> np.ndarray:
    """``f_k(x) = Σ_i β_ki k(x_i, x) + b_k`` for the rows of ``gram_test`` (m × n).

    Parameters
    ----------
    beta : array of shape (n, Q)
        β of the trained model.
    b : array of shape (Q,)
        Biases.
    gram_test : array of shape (m, n)
        Kernel between the test points (rows) and the training points.
    """
    return gram_test @ beta + np.asarray(b)[None, :]


# ---- biases --------------------------------------------------------------------------------
def circulation_lp(cost: np.ndarray, equality, rhs: np.ndarray, upper: np.ndarray, **options):
    """The LP ``min ⟨cost, α⟩`` s.t. ``Eα = rhs``, ``0 ≤ α ≤ upper`` by HiGHS' dual simplex, solved
    on scaled data: ``cost / max|cost|`` and ``α / max(upper)``.

    HiGHS reads a cost of magnitude ≥ 1e20 as infinite (its ``infinite_cost``; model status
    Unknown), fails to solve near it, and takes its feasibility tolerances as absolute, so costs far
    below 1 are solved as if they were 0 (the vertex and the multipliers then wrong). The dual
    gradient with a Gram matrix at 1e94 (``gamma="scale"`` on duplicated rows) is such a cost, at
    5.6e77. Scaling is exact:
    positive factors change neither the optimal vertex (up to the factor on ``α``) nor the sign of
    a reduced cost, and the multipliers are ``max|cost|`` times the scaled LP's. Returns
    ``(α, y)`` with HiGHS' marginals ``y`` (``cost − Eᵀy`` are the reduced costs), or None when
    HiGHS reports no optimum (or the data are not finite).

    Parameters
    ----------
    cost : array of shape (m,)
        Cost vector.
    equality : sparse matrix of shape (r, m)
        Equality matrix E (entries ±1 here: it is not scaled).
    rhs : array of shape (r,)
        Right-hand side of the equalities.
    upper : array of shape (m,)
        Upper bounds (positive; the lower bounds are 0).
    **options
        HiGHS options besides ``presolve=False`` (e.g. feasibility tolerances, which then apply to
        the scaled LP).
    """
    cost, upper = np.asarray(cost, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    cost_scale = float(np.max(np.abs(cost), initial=0.0))
    bound_scale = float(np.max(upper, initial=0.0))
    if not (np.isfinite(cost_scale) and np.isfinite(bound_scale) and bound_scale > 0.0):
        return None
    cost_scale = cost_scale if cost_scale > 0.0 else 1.0
    result = linprog(cost / cost_scale, A_eq=equality, b_eq=np.asarray(rhs, dtype=np.float64) / bound_scale,
                     bounds=np.column_stack([np.zeros(cost.size), upper / bound_scale]),
                     method="highs-ds", options={"presolve": False, **options})
    if result.status != 0:
        return None
    return np.clip(result.x * bound_scale, 0.0, upper), result.eqlin.marginals * cost_scale


def linear_minimizer(problem: RankSVMProblem, cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact solution of the LP ``min ⟨cost, α⟩`` subject to ``0 ≤ α ≤ u, Σ_i β_ki(α) = 0`` and its
    equality multipliers (Problem 12 / Fig. 11 step 6).

    The equalities are flow conservation on the Q-node label graph (pair t is an arc k → l with
    capacity u_t and cost cost_t), so the LP is a min-cost circulation; with only Q − 1 rows it
    is solved exactly by HiGHS' dual simplex on the sparse constraint matrix, on scaled data
    (:func:`circulation_lp`). Returns the vertex and ``b = −y`` (HiGHS' marginals ``y`` satisfy
    ``cost − Aᵀy = reduced costs``): with ``cost = ∇`` of the dual, ``b`` are the biases that
    minimise the primal for the current w. Raises ``FloatingPointError`` when the cost is not
    finite (an iterate that overflowed: C near the float limit) and ``RuntimeError`` when HiGHS
    finds no optimum otherwise (the LP is feasible, α = 0, and bounded).

    Parameters
    ----------
    problem : RankSVMProblem
        The problem data (validated formulation object).
    cost : array of shape (T,)
        Cost vector of the LP (the gradient for Frank–Wolfe).
    """
    q = problem.n_labels
    if not np.all(np.isfinite(cost)):
        raise FloatingPointError("the cost of the Frank-Wolfe LP (the dual gradient) is not finite")
    solution = circulation_lp(cost, problem.equality[: q - 1], np.zeros(q - 1), problem.upper)
    if solution is None:
        raise RuntimeError("HiGHS found no optimum of the Frank-Wolfe LP")
    vertex, marginals = solution
    b = np.zeros(q)
    b[: q - 1] = -marginals
    return vertex, center_biases(b)


def optimal_biases(problem: RankSVMProblem, alpha: np.ndarray) -> np.ndarray:
    """The biases minimising the primal for ``w = w(α)``: by LP duality, the multipliers of
    :func:`linear_minimizer` at ``cost = ∇`` (then ``primal − dual`` equals the Frank–Wolfe gap).

    Parameters
    ----------
    problem : RankSVMProblem
        The problem data (validated formulation object).
    alpha : array of shape (T,)
        Pair multipliers α_ikl.
    """
    return linear_minimizer(problem, dual_gradient(problem, alpha))[1]


def bias_from_kkt(problem: RankSVMProblem, alpha: np.ndarray, rtol: float = 1e-6) -> np.ndarray:
    """Biases from KKT (14): ``b_k − b_l = 1 − ⟨w_k − w_l, φ(x_i)⟩`` on the free pairs
    ``0 < α_t < u_t``, in least squares. Only labels joined by free pairs are determined relative
    to each other; use :func:`optimal_biases` when the free pairs do not connect every label.

    Parameters
    ----------
    problem : RankSVMProblem
        The problem data (validated formulation object).
    alpha : array of shape (T,)
        Pair multipliers α_ikl.
    rtol : float
        A pair is free when its α is farther than ``rtol · u`` from both bounds.
    """
    margins = dual_gradient(problem, alpha) + 1.0
    free = (alpha > rtol * problem.upper) & (alpha < (1 - rtol) * problem.upper)
    if not np.any(free):
        return np.zeros(problem.n_labels)
    design = problem.equality[:, free].T.toarray()
    b, *_ = np.linalg.lstsq(design, 1.0 - margins[free], rcond=None)
    return center_biases(b)


def restore_equalities(problem: RankSVMProblem, alpha: np.ndarray, slack: np.ndarray | None = None) -> np.ndarray:
    """Remove the equality violation ``Aα`` left at the stop (≤ tol) by the weighted least-norm
    correction ``Δ = −WAᵀ(AWAᵀ)⁺Aα``, ``W = diag(min(α, u − α))``: variables near a bound hardly
    move, so ``α + Δ`` stays in the box for the tiny violations met here (clipped regardless).
    It matters when the caller evaluates Problem 10 with the uncentred Gram matrix, where ``Aα``
    enters multiplied by the mean feature vector (see :func:`mlsvm.solvers.rank_svm_ipm.interior_point`),
    and for the dual objective as a bound: at an α off the equalities it may exceed the primal.
    ``slack`` is ``u − α`` when a solver keeps it separately (more accurate near ``u``).

    Parameters
    ----------
    problem : RankSVMProblem
        The Rank-SVM problem.
    alpha : array of shape (T,)
        The dual point to correct (inside its box ``[0, u]``).
    slack : array of shape (T,) or None, optional
        ``u − α`` when the solver keeps it separately; None computes it from ``alpha``.
    """
    slack = problem.upper - alpha if slack is None else slack
    weights = np.maximum(np.minimum(alpha, slack), 0.0)
    balance = problem.balance(alpha)
    # AWAᵀ (Q × Q): pair (k, l) adds w_t at (k, k) and (l, l), −w_t at (k, l) and (l, k)
    by_pair = np.zeros((problem.n_labels, problem.n_labels))
    _label_pair_sums(weights, problem.pairs.relevant, problem.pairs.irrelevant, by_pair)
    normal = -(by_pair + by_pair.T)
    normal[np.diag_indices_from(normal)] = by_pair.sum(axis=1) + by_pair.sum(axis=0)
    correction = problem.equality_adjoint(np.linalg.pinv(normal) @ balance)
    correction *= -weights
    corrected = np.clip(alpha + correction, 0.0, problem.upper)
    if np.max(np.abs(problem.balance(corrected))) < np.max(np.abs(balance)):
        return corrected
    return np.clip(alpha, 0.0, problem.upper)


# ---- KKT residuals -------------------------------------------------------------------------
def _operators(problem: RankSVMProblem):
    T = problem.n_pairs
    hessian = LinearOperator((T, T), matvec=lambda v: problem.gather(problem.kernel_times(problem.scatter(np.ravel(v)))),
                             dtype=np.float64)
    return hessian, problem.equality_operator()


def kkt_residuals(problem: RankSVMProblem, alpha: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Scaled KKT residuals (:func:`mlsvm.formulations.evaluation.qp_residuals`) of the dual QP at
    ``α`` with equality multipliers ``b``; the box multipliers are those stationarity implies,
    ``z = 1 − (margins + b_k − b_l)``, so a violated complementarity shows as ``complementarity``.
    ``O(T + n²Q)`` memory (``O(T + nnz(X) + nQ)`` without a Gram matrix): ``P`` is a LinearOperator.

    Parameters
    ----------
    problem : RankSVMProblem
        The problem data (validated formulation object).
    alpha : array of shape (T,)
        Pair multipliers α_ikl.
    b : array of shape (Q,)
        Biases.
    """
    hessian, equality = _operators(problem)
    b = np.asarray(b, dtype=np.float64)
    z_box = dual_gradient(problem, alpha)    # −(∇ + Aᵀb), in place: T floats, not four
    z_box += problem.equality_adjoint(b)
    np.negative(z_box, out=z_box)
    return qp_residuals(hessian, -np.ones(problem.n_pairs), alpha, A=equality, b=np.zeros(problem.n_labels),
                        y=b, lb=np.zeros(problem.n_pairs), ub=problem.upper, z_box=z_box)


def _hinge(margins: np.ndarray) -> np.ndarray:
    """``max(0, 1 − m)``, overwriting ``margins`` (a temporary of the caller)."""
    np.subtract(1.0, margins, out=margins)
    return np.maximum(margins, 0.0, out=margins)


def evaluate(problem: RankSVMProblem, primal: dict, dual: dict | None = None) -> Evaluation:
    """Grade a point: the primal objective (Problem 8 with ½) at ``w_k = Σ_i β_ki φ(x_i)`` and
    biases ``b`` and, with a dual point ``{"alpha"}``, the dual objective (Problem 10, a
    maximisation) and the dual QP's KKT residuals with ``b`` as the equality multipliers.

    ``primal = {"beta": (n, Q), "b": (Q,)}``; without ``beta`` the coefficients are those the dual
    implies (eq. 12/13); ``b`` is required (the biases are part of the primal point). ``extra``
    holds ``beta``, ``b`` and the training scores ``Kβ + 1bᵀ``.

    Parameters
    ----------
    problem : RankSVMProblem
        The problem the point is graded on.
    primal : dict
        The primal point ``{"beta": (n, Q), "b": (Q,)}``; ``b`` is required, without ``beta`` the
        coefficients the dual implies are used. With the linear kernel's features also
        ``{"W": (d, Q), "b": (Q,)}`` (any weights, not only those in the span of the data).
    dual : dict or None, optional
        The dual point ``{"alpha": (T,)}``; None grades the primal only.
    """
    if primal.get("b") is None:
        raise ValueError("evaluate needs the biases primal['b']")
    b = np.asarray(primal["b"], dtype=np.float64)
    W = linear_weights(problem.features, primal, problem.n_labels)
    if W is not None:   # the linear kernel's weights: ½‖W‖² and the scores XW + 1bᵀ
        beta, scores = None, np.asarray(problem.features @ W) + b[None, :]
        value = float(0.5 * np.sum(W * W) + problem.upper @ _hinge(problem.gather(scores)))
    else:
        if primal.get("beta") is not None:
            beta = np.asarray(primal["beta"], dtype=np.float64)
        elif dual is not None:
            beta = coef_from_dual(problem, dual["alpha"])
        else:
            raise ValueError("evaluate needs primal['beta'] (or ['W'] with the linear kernel) or a dual point {'alpha'}")
        if problem.gram is None:   # W = Xᵀβ: ½‖W‖² and the scores XW + 1bᵀ, no n × n matrix
            W = problem.weights(beta)
            scores = np.asarray(problem.features @ W) + b[None, :]
            value = float(0.5 * np.sum(W * W) + problem.upper @ _hinge(problem.gather(scores)))
        else:
            scores, value = decision_function(beta, b, problem.gram), primal_objective(problem, beta, b)
    evaluation = Evaluation(value, extra={"beta": beta, "b": b, "scores": scores})
    if dual is not None:
        alpha = np.asarray(dual["alpha"], dtype=np.float64)
        evaluation.dual_objective = dual_objective(problem, alpha)
        evaluation.kkt = kkt_residuals(problem, alpha, b)
    return evaluation
