"""The binary approach of Elisseeff & Weston (§3, Problem 3): one hyperplane per label, max-norm margin.

With signed labels ``y_ik ∈ {−1, +1}`` (``Ys = 2Y − 1``), Gram matrix ``K`` and feature map φ,
``f_ik = ⟨w_k, φ(x_i)⟩ + b_k``.

Primal (Problem 3, exactly as printed and as SPEC §2.1 states it — no ½)::

    min_{w,b,ξ}  max_k ‖w_k‖²  +  (C/Q) Σ_ik ξ_ik     s.t.  y_ik f_ik ≥ 1 − ξ_ik,  ξ ≥ 0

Convex; CVXPY gets it in epigraph form ``min t + (C/Q) Σ ξ`` with ``‖w_k‖² ≤ t`` for every k, in
the coordinates of a factor ``K = L Lᵀ`` (``φ(x_i) ↦ L_i``, :func:`mlsvm.kernels.gram_factor`).

Dual (derived here; the paper gives none). With multipliers ``α_ik`` of the margin constraints and
``λ_k`` of ``‖w_k‖² ≤ t``, stationarity gives ``Σ_k λ_k = 1``, ``0 ≤ α_ik ≤ C/Q``,
``Σ_i α_ik y_ik = 0`` (from ``b_k``) and ``2 λ_k w_k = u_k := Σ_i α_ik y_ik φ(x_i)``. The dual
function is ``Σ α − Σ_k ‖u_k‖²/(4λ_k)``, and maximising over the simplex (``λ_k ∝ ‖u_k‖``) leaves::

    max_α  Σ_ik α_ik − ¼ (Σ_k ‖u_k‖)²      s.t.  0 ≤ α_ik ≤ C/Q,  Σ_i α_ik y_ik = 0 for every k

(``‖u_k‖² = c_kᵀ K c_k`` with ``c_k = y_k ∘ α_k``). Primal = dual at the optimum (strong duality;
tested on two backends). Dual → primal: ``S = Σ_k ‖u_k‖``, ``λ_k = ‖u_k‖/S`` and
``w_k = u_k/(2λ_k) = S/(2‖u_k‖) · u_k``, so every label with ``u_k ≠ 0`` has ``‖w_k‖ = S/2``: the max
is attained by all of them. Labels with ``u_k = 0`` get ``w_k = 0``; each bias is the exact
minimiser of its label's hinge loss given ``w_k`` (:func:`optimal_bias`). The map is exact for
every label with ``λ_k > 0``; a label with ``λ_k = 0`` may have its optimal ``w_k`` strictly inside
the norm ball (a minimiser of its hinge loss alone), which α does not determine — then
``w_k = 0`` is not optimal and :func:`kkt_residuals` shows it.

Equivalences (tested): Q = 1 — or all labels identical, or all labels but one trivial — is a
binary C-SVM ``½‖w‖² + C_svm Σ ξ`` with ``C_svm = C/(2Q)`` for one non-trivial label among Q
(``C/2`` when Q = 1 or the Q labels are equal), and Problem 3's optimum is twice the SVM's.
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np

import scipy.sparse as sp

from mlsvm.data import check_scalar, to_signed
from mlsvm.formulations.evaluation import Evaluation, check_gram_and_features
from mlsvm.kernels import Kernel, gram_factor

__all__ = [
    "BinaryApproachProblem", "cvxpy_primal", "cvxpy_dual", "evaluate", "solution_from_cvxpy",
    "primal_objective", "dual_objective", "label_norms", "coef_from_dual", "stationary_primal", "optimal_bias",
    "optimal_biases",
    "coefficients_from_factor", "kkt_residuals",
]


@dataclass(frozen=True)
class BinaryApproachProblem:
    """Data of Problem 3: Gram matrix ``gram`` (n, n), {0,1} indicator ``Y`` (n, Q), ``C > 0``.

    Parameters
    ----------
    gram : array of shape (n, n) or None
        Gram matrix; None only with ``features`` (the linear kernel): every product with K is then
        ``X(Xᵀ·)`` and no n × n matrix is formed (except by :attr:`gram_matrix`, which the
        water-filling solver calls only when ``d > n/2``, and the unregistered alternating solver).
    Y : array of shape (n, Q)
        Label indicator.
    C : float
        Loss weight C > 0 (the loss is ``(C/Q) Σ ξ``).
    features : array or sparse matrix of shape (n, d), optional
        A factor ``K = X Xᵀ`` (the linear kernel's features; a sparse X stays CSR). The certificate
        then measures feature-space norms as ``‖Xᵀc‖`` instead of ``sqrt(cᵀKc)``, whose round-off
        floor is ``~ sqrt(eps)`` of the terms: a label whose optimal ``w_k`` is 0 could not be
        certified below it. The water-filling solver works in the coordinates of X (never forming
        K) when ``d ≤ n/2``, whether or not ``gram`` is given.
    """

    gram: np.ndarray | None
    Y: np.ndarray
    C: float
    features: object = None

    def __post_init__(self):
        check_scalar(self.C, "C", low=0.0, low_open=True)
        gram, features, n = check_gram_and_features(self.gram, self.features)
        object.__setattr__(self, "gram", gram)
        object.__setattr__(self, "features", features)
        if self.Y.ndim != 2 or self.Y.shape[0] != n:
            raise ValueError(f"Y must be (n_samples, n_labels) with n_samples = {n}; "
                             f"got shape {self.Y.shape}")

    @property
    def n_samples(self) -> int:
        """n, the number of training samples."""
        return int(self.Y.shape[0])

    @property
    def gram_matrix(self) -> np.ndarray:
        """K itself: ``gram``, or ``XXᵀ`` formed from the features (n × n: only where needed)."""
        return self.gram if self.gram is not None else Kernel("linear")(self.features)

    def gram_times(self, matrix: np.ndarray) -> np.ndarray:
        """``K @ matrix``; without ``gram``, ``X(Xᵀ matrix)`` in ``O(nnz(X)·m)``, no n × n matrix.

        Parameters
        ----------
        matrix : array of shape (n,) or (n, m)
            The right-hand side.
        """
        if self.gram is not None:
            return self.gram @ matrix
        return np.asarray(self.features @ np.asarray(self.features.T @ matrix))

    def factor(self) -> np.ndarray:
        """A dense factor ``L`` with ``LLᵀ = K`` for CVXPY: the features (densified if sparse) when
        ``gram`` is None, else the eigen-factor of the Gram matrix (as before the feature route)."""
        if self.gram is not None:
            return gram_factor(self.gram)
        return self.features.toarray() if sp.issparse(self.features) else self.features

    @property
    def signed(self) -> np.ndarray:
        """``Ys = 2Y − 1``, shape (n, Q)."""
        return to_signed(self.Y)

    @property
    def n_labels(self) -> int:
        return int(self.Y.shape[1])

    @property
    def box(self) -> float:
        """Upper bound ``C/Q`` of every ``α_ik``."""
        return self.C / self.n_labels


def cvxpy_primal(problem: BinaryApproachProblem):
    """CVXPY epigraph primal. Returns ``(cp.Problem, variables)``: ``V`` (r, Q) factor coordinates
    of the ``w_k``, ``b`` (Q,), ``xi`` (n, Q), ``t``; and the constraints ``margin`` (dual value α)
    and ``norm`` (one per label, dual value λ_k).

    Parameters
    ----------
    problem : BinaryApproachProblem
        The problem data (validated formulation object).
    """
    factor = problem.factor()
    n, q = problem.Y.shape
    V = cp.Variable((factor.shape[1], q))
    b = cp.Variable(q)
    xi = cp.Variable((n, q))
    t = cp.Variable()
    scores = factor @ V + np.ones((n, 1)) @ cp.reshape(b, (1, q), order="C")
    margin = cp.multiply(problem.signed, scores) >= 1 - xi
    norms = [cp.sum_squares(V[:, k]) <= t for k in range(q)]
    cvx = cp.Problem(cp.Minimize(t + problem.box * cp.sum(xi)), [margin, xi >= 0, *norms])
    return cvx, {"V": V, "b": b, "xi": xi, "t": t, "factor": factor, "margin": margin, "norm": norms}


def cvxpy_dual(problem: BinaryApproachProblem):
    """CVXPY dual before λ is eliminated, as a minimisation (the dual optimum is ``−problem.value``)::

        min_{α, λ}  ¼ Σ_k ‖Lᵀ(y_k ∘ α_k)‖² / λ_k − Σ α     (a perspective: jointly convex)
        s.t.  0 ≤ α ≤ C/Q,  Σ_i α_ik y_ik = 0,  λ ≥ 0,  Σ_k λ_k = 1

    Maximising over λ gives the reduced dual of the module docstring, which
    :func:`dual_objective` evaluates. (The reduced form ``min ¼ s² − Σ α``, ``s ≥ Σ_k ‖·‖`` is
    equivalent but Clarabel ends it "optimal_inaccurate" at the tight settings; this one solves
    cleanly on Clarabel, ECOS and SCS.) Returns ``(cp.Problem, {"alpha", "lam"})``.

    Parameters
    ----------
    problem : BinaryApproachProblem
        The binary-approach problem to build the dual of.
    """
    factor = problem.factor()
    n, q = problem.Y.shape
    alpha = cp.Variable((n, q))
    lam = cp.Variable(q)
    coef = cp.multiply(problem.signed, alpha)
    penalty = sum(cp.quad_over_lin(factor.T @ coef[:, k], lam[k]) for k in range(q))
    constraints = [alpha >= 0, alpha <= problem.box, cp.sum(coef, axis=0) == 0, lam >= 0, cp.sum(lam) == 1]
    return cp.Problem(cp.Minimize(0.25 * penalty - cp.sum(alpha)), constraints), {"alpha": alpha, "lam": lam}


def primal_objective(problem: BinaryApproachProblem, coef: np.ndarray, b: np.ndarray) -> float:
    """Problem 3 at ``w_k = Σ_i coef_ik φ(x_i)`` and biases ``b`` (ξ at its optimal value).

    Parameters
    ----------
    problem : BinaryApproachProblem
        The problem data (validated formulation object).
    coef : array of shape (n, Q)
        Coefficients of the w_k.
    b : array of shape (Q,)
        Biases.
    """
    scores = problem.gram_times(coef) + b
    slack = np.maximum(0.0, 1.0 - problem.signed * scores)
    return float(np.max(_label_norms(problem, coef)) + problem.box * slack.sum())


def label_norms(gram: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """``‖w_k‖² = coef_kᵀ K coef_k`` for every label k (clipped at 0 against round-off).

    Parameters
    ----------
    gram : array of shape (n, n)
        Gram matrix.
    coef : array of shape (n, Q)
        Coefficients of the w_k.
    """
    return np.maximum(np.einsum("ik,ik->k", coef, gram @ coef), 0.0)


def _label_norms(problem: BinaryApproachProblem, coef: np.ndarray) -> np.ndarray:
    """:func:`label_norms` of the problem: ``coefᵀKcoef`` with a Gram matrix, else ``‖Xᵀcoef‖²``."""
    if problem.gram is not None:
        return label_norms(problem.gram, coef)
    return np.linalg.norm(np.asarray(problem.features.T @ coef), axis=0) ** 2


def dual_objective(problem: BinaryApproachProblem, alpha: np.ndarray) -> float:
    """``Σ α − ¼ (Σ_k ‖u_k‖)²`` (to maximise) at ``alpha`` (n, Q).

    Parameters
    ----------
    problem : BinaryApproachProblem
        The problem data (validated formulation object).
    alpha : array of shape (n, Q)
        Dual variables α_ik.
    """
    u_norms = np.sqrt(_label_norms(problem, problem.signed * alpha))
    return float(alpha.sum() - 0.25 * u_norms.sum() ** 2)


def optimal_bias(scores: np.ndarray, y: np.ndarray) -> float:
    """Exact ``argmin_b Σ_i max(0, 1 − y_i (g_i + b))`` for fixed scores ``g`` (one label).

    The loss is convex piecewise linear with kinks at ``b = y_i − g_i``; its minimisers form a
    segment whose finite ends are kinks. Returns the midpoint of the optimal kinks. (A label with
    one sign only has an unbounded segment, ``[max_i(y_i − g_i), ∞)`` for all ``y = +1``; only its
    finite end is a kink, so that end is returned.)

    Parameters
    ----------
    scores : array of shape (n,)
        ``⟨w, φ(x_i)⟩`` without bias.
    y : array of shape (n,)
        Signed labels.
    """
    scores, y = np.asarray(scores, dtype=np.float64), np.asarray(y, dtype=np.float64)
    kinks = np.unique(y - scores)
    # the loss at every kink from sorted prefix sums, O(n log n) and O(n) memory (the direct
    # kinks × n table is an n × n array: 2 GB at n = 16,000): with k_i = y_i − g_i the loss is
    # Σ_{y=+1} (k_i − b)₊ + Σ_{y=−1} (b − k_i)₊
    positive = np.sort((y - scores)[y > 0])
    negative = np.sort((y - scores)[y <= 0])
    above = positive.size - np.searchsorted(positive, kinks, side="right")
    below = np.searchsorted(negative, kinks, side="left")
    tail = np.concatenate([np.cumsum(positive[::-1])[::-1], [0.0]])
    head = np.concatenate([[0.0], np.cumsum(negative)])
    approximate = (tail[positive.size - above] - above * kinks) + (below * kinks - head[below])
    # the candidates within the prefix sums' round-off of the least, then their losses summed
    # directly (as the kinks × n table did: the same kinks are optimal to the last bit)
    magnitude = np.abs(positive).sum() + np.abs(negative).sum() + y.size * np.abs(kinks).max()
    slack = 1e-9 * max(1.0, float(approximate.min())) + 1e-13 * magnitude
    candidates = kinks[approximate <= approximate.min() + slack]
    block = max(1, 2**20 // max(1, y.size))
    losses = np.concatenate([
        np.maximum(0.0, 1.0 - y[None, :] * (scores[None, :] + candidates[start:start + block, None])).sum(axis=1)
        for start in range(0, candidates.size, block)])
    best = losses.min()
    optimal = candidates[losses <= best + 1e-12 * max(1.0, best)]
    return float(0.5 * (optimal.min() + optimal.max()))


def optimal_biases(problem: BinaryApproachProblem, coef: np.ndarray) -> np.ndarray:
    """Every label's :func:`optimal_bias` given ``w_k = Σ_i coef_ik φ(x_i)``: the midpoint of its
    optimal segment (a point, unless the label's hinge loss is flat in b).

    Parameters
    ----------
    problem : BinaryApproachProblem
        The problem data.
    coef : array of shape (n, Q)
        Coefficients of the w_k.
    """
    raw = problem.gram_times(coef)
    return np.array([optimal_bias(raw[:, k], problem.signed[:, k]) for k in range(problem.n_labels)])


def coef_from_dual(problem: BinaryApproachProblem, alpha: np.ndarray, rtol: float = 1e-10):
    """Dual → primal map of the module docstring: ``coef`` (n, Q) with ``w_k = Σ_i coef_ik φ(x_i)``,
    biases ``b`` (Q,) and ``lam`` (Q,) on the simplex. Labels with ``‖u_k‖ ≤ rtol · max_l ‖u_l‖``
    are treated as ``u_k = 0`` (``w_k = 0``, ``λ_k = 0``).

    Parameters
    ----------
    problem : BinaryApproachProblem
        The problem data (validated formulation object).
    alpha : array of shape (n, Q)
        Dual variables α_ik.
    rtol : float
        Relative tolerance.
    """
    direction = problem.signed * alpha
    u_norms = np.sqrt(_label_norms(problem, direction))
    active = u_norms > rtol * max(u_norms.max(), 1e-300)
    total = u_norms[active].sum()
    lam = np.zeros(problem.n_labels)
    coef = np.zeros_like(direction)
    if total > 0:
        lam[active] = u_norms[active] / total
        coef[:, active] = direction[:, active] / (2.0 * lam[active])
    else:  # α = 0 (every label trivial): w = 0, t = 0, and any λ on the simplex is optimal
        lam[:] = 1.0 / problem.n_labels
    return coef, optimal_biases(problem, coef), lam


def stationary_primal(problem: BinaryApproachProblem, coef: np.ndarray, alpha: np.ndarray, lam: np.ndarray,
                      rtol: float = 1e-6) -> dict:
    """The primal point that stationarity assigns to multipliers ``(α, λ)``: ``w_k = u_k/(2λ_k)``
    on every label with ``λ_k > rtol · max λ`` (so ``2λ_k w_k = u_k`` exactly), ``coef`` kept on the
    others (α does not determine their ``w_k``), and each bias the exact minimiser of its label's
    hinge loss (:func:`optimal_bias`). An interior-point backend returns a primal accurate to its
    gap but multipliers accurate only to ~sqrt of it: measured w-stationarity 3e-7 at a relative
    gap 1e-12 (ECOS, synthetic-30x4x4/rbf); this point trades it for a gap of ~1e-9.

    Parameters
    ----------
    problem : BinaryApproachProblem
        The binary-approach problem.
    coef : array of shape (n, Q)
        The current coefficients, kept on labels whose λ_k is (relatively) zero.
    alpha : array of shape (n, Q)
        The margin multipliers α.
    lam : array of shape (Q,)
        The norm multipliers λ (on the simplex).
    rtol : float, default=1e-6
        Labels with ``λ_k ≤ rtol · max λ`` keep their ``coef`` column.
    """
    alpha = np.clip(alpha, 0.0, problem.box)
    direction = problem.signed * alpha
    mapped = np.array(coef, dtype=np.float64, copy=True)
    active = lam > rtol * max(float(np.max(lam)), 1e-300)
    mapped[:, active] = direction[:, active] / (2.0 * lam[active])
    return {"coef": mapped, "b": optimal_biases(problem, mapped)}


def coefficients_from_factor(factor: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Expansion coefficients ``A``, the least-norm solution of ``Lᵀ A = V``: the ``w_k`` written in
    factor coordinates as ``Σ_i A_ik φ(x_i)``, so that ``K A = L V``. With the linear kernel ``L``
    is the features, whose columns may be dependent (a feature zero on every point, two equal
    features, more features than points), and ``LᵀL`` is then singular: a least-squares solve, not
    ``L (LᵀL)⁻¹ V``. A part of ``V`` outside the range of ``Lᵀ`` moves no score (``L`` maps it to
    0), and the optimum has none, the regulariser being its norm.

    Parameters
    ----------
    factor : array of shape (n, r)
        Factor L with ``L Lᵀ = K``.
    V : array of shape (r, Q)
        Weights in the factor coordinates.
    """
    if not np.any(factor):
        return np.zeros((factor.shape[0], V.shape[1]))
    return np.linalg.lstsq(factor.T, V, rcond=None)[0]


def _feature_norms(problem: BinaryApproachProblem, coef: np.ndarray) -> np.ndarray:
    """``‖Σ_i coef_ik φ(x_i)‖`` per label: through the features when the problem has them."""
    if problem.features is None:
        return np.sqrt(_label_norms(problem, coef))
    return np.linalg.norm(np.asarray(problem.features.T @ coef), axis=0)


def kkt_residuals(problem: BinaryApproachProblem, coef: np.ndarray, b: np.ndarray,
                  alpha: np.ndarray, lam: np.ndarray) -> dict[str, float]:
    """Scaled KKT residuals of Problem 3 at a primal point (``coef``, ``b``, ``ξ`` = hinge,
    ``t = max_k ‖w_k‖²``) and multipliers (``alpha``, ``lam``), each an ∞-norm over 1 + the
    largest term it is made of (as :mod:`mlsvm.formulations.evaluation`):

    * ``primal``: ``t ≥ ‖w_k‖²`` and the margins hold by construction, so only ``λ`` on the simplex
      and ``α`` in its box: ``max(|Σλ − 1|, ‖(−λ)₊‖, ‖(−α)₊‖, ‖(α − C/Q)₊‖)`` (dual feasibility);
    * ``dual``: stationarity in ``w_k`` (``‖2λ_k w_k − u_k‖`` in feature space) and in ``b_k``
      (``|Σ_i α_ik y_ik|``);
    * ``complementarity``: ``α_ik (y_ik f_ik − 1 + ξ_ik)``, ``(C/Q − α_ik) ξ_ik``,
      ``λ_k (t − ‖w_k‖²)``;
    * ``gap``: ``|primal − dual|`` relative.

    Parameters
    ----------
    problem : BinaryApproachProblem
        The problem data (validated formulation object).
    coef : array of shape (n, Q)
        Coefficients of the w_k.
    b : array of shape (Q,)
        Biases.
    alpha : array of shape (n, Q)
        Dual variables α_ik.
    lam : array of shape (Q,)
        Multipliers λ_k of the norm constraints.
    """
    Ys = problem.signed
    box = problem.box
    scores = problem.gram_times(coef) + b
    margins = Ys * scores
    slack = np.maximum(0.0, 1.0 - margins)
    norms = _label_norms(problem, coef)
    t = norms.max()
    feasibility = max(abs(lam.sum() - 1.0), np.max(np.maximum(-lam, 0.0)),
                      np.max(np.maximum(-alpha, 0.0)), np.max(np.maximum(alpha - box, 0.0)))
    direction = Ys * alpha
    residual = 2.0 * lam * coef - direction
    stationarity_w = _feature_norms(problem, residual).max()
    scale_w = _feature_norms(problem, direction).max()
    stationarity_b = np.abs(direction.sum(axis=0)).max()
    complementarity = max(np.max(np.abs(alpha * (margins - 1.0 + slack))),
                          np.max(np.abs((box - alpha) * slack)),
                          np.max(np.abs(lam * (t - norms))))
    compl_scale = max(box * np.max(np.abs(margins - 1.0 + slack)), box * slack.max(), t)
    primal = primal_objective(problem, coef, b)
    dual = dual_objective(problem, np.clip(alpha, 0.0, box))
    return {
        "primal": float(feasibility / (1.0 + max(1.0, box))),
        "dual": float(max(stationarity_w / (1.0 + scale_w), stationarity_b / (1.0 + box * Ys.shape[0]))),
        "complementarity": float(complementarity / (1.0 + compl_scale)),
        "gap": float(abs(primal - dual) / (1.0 + max(abs(primal), abs(dual)))),
    }


def evaluate(problem: BinaryApproachProblem, primal: dict, dual: dict | None = None) -> Evaluation:
    """Grade a point: Problem 3 at ``primal = {"coef", "b"}`` (``w_k = Σ_i coef_ik φ(x_i)``) and, with
    multipliers ``dual = {"alpha", "lam"}``, the dual objective (at α clipped to its box) and
    :func:`kkt_residuals`. Without ``coef`` the primal point is the one the dual implies
    (:func:`coef_from_dual`). ``extra`` holds ``coef``, ``b`` and the training scores ``K coef + b``.

    Parameters
    ----------
    problem : BinaryApproachProblem
        The problem the point is graded on.
    primal : dict
        The primal point ``{"coef": (n, Q), "b": (Q,)}``; without ``coef``, the point the dual
        implies.
    dual : dict or None, optional
        The multipliers ``{"alpha": (n, Q), "lam": (Q,)}``; None grades the primal only.
    """
    if primal.get("coef") is None:
        if dual is None:
            raise ValueError("evaluate needs primal['coef'] and primal['b'] or a dual point {'alpha', 'lam'}")
        coef, b, _ = coef_from_dual(problem, np.clip(dual["alpha"], 0.0, problem.box))
    else:
        coef, b = np.asarray(primal["coef"], dtype=np.float64), np.asarray(primal["b"], dtype=np.float64)
    evaluation = Evaluation(primal_objective(problem, coef, b),
                            extra={"coef": coef, "b": b, "scores": problem.gram_times(coef) + b})
    if dual is not None:
        alpha, lam = np.asarray(dual["alpha"], dtype=np.float64), np.asarray(dual["lam"], dtype=np.float64)
        evaluation.dual_objective = dual_objective(problem, np.clip(alpha, 0.0, problem.box))
        evaluation.kkt = kkt_residuals(problem, coef, b, alpha, lam)
    return evaluation


def solution_from_cvxpy(problem: BinaryApproachProblem, cvx, variables) -> tuple[dict, dict]:
    """``(primal, dual)`` of a solved :func:`cvxpy_primal` (the primal is what is solved: the dual
    does not determine ``w_k`` for a label with ``λ_k = 0``, module docstring): the coefficients of
    the factor coordinates ``V``, the biases, and the multipliers ``α`` (margin constraints) and
    ``λ`` (norm constraints).

    Parameters
    ----------
    problem : BinaryApproachProblem
        The problem :func:`cvxpy_primal` was built from.
    cvx : cvxpy.Problem
        The solved CVXPY problem (first element returned by :func:`cvxpy_primal`).
    variables : dict
        Its variables (second element returned by :func:`cvxpy_primal`).
    """
    coef = coefficients_from_factor(variables["factor"], variables["V"].value)
    b = np.asarray(variables["b"].value, dtype=np.float64)
    alpha = np.asarray(variables["margin"].dual_value, dtype=np.float64)
    lam = np.array([float(np.ravel(constraint.dual_value)[0]) for constraint in variables["norm"]])
    return {"coef": coef, "b": b}, {"alpha": alpha, "lam": lam}
