"""What every formulation's ``evaluate`` returns, and the measures it is built from.

:class:`Evaluation` is the one grade of a point: the canonical primal objective (SPEC §2), the dual
objective (written as a maximisation, so ``primal − dual ≥ 0``), and scaled KKT residuals. Every
formulation module has ``evaluate(problem, primal, dual) -> Evaluation``; the fit report, the
verification checks and :mod:`mlsvm.testing` all grade through it.

Below it: :func:`relative_difference` and :func:`relative_gap` (the one definition of "relative"
in the library), and qpbenchmark-style optimality residuals of a convex QP, computed in numpy.

The QP is written in the standard form of qpsolvers::

    minimise ½ xᵀPx + qᵀx   s.t.  Gx ≤ h  (multiplier z ≥ 0),  Ax = b  (y),  lb ≤ x ≤ ub  (z_box)

with ``z_box = z_ub − z_lb`` (positive where the upper bound is active, negative at the lower).
Matrices may be dense, sparse or :class:`scipy.sparse.linalg.LinearOperator`; a formulation with
``T`` variables never needs more than ``O(T)`` memory besides its Gram matrix.

Each residual is an ∞-norm divided by ``1 +`` the largest ∞-norm among the terms it is made of, so
a residual ≤ 1e-6 means "zero to six digits of the quantities involved":

* ``primal``: infeasibility ``max(‖(Gx − h)₊‖, ‖Ax − b‖, ‖(lb − x)₊‖, ‖(x − ub)₊‖)``
* ``dual``: stationarity ``‖Px + q + Gᵀz + Aᵀy + z_box‖`` and dual feasibility ``‖(−z)₊‖``
* ``complementarity``: ``max(‖z ∘ (h − Gx)‖, ‖z_ub ∘ (ub − x)‖, ‖z_lb ∘ (x − lb)‖)``
* ``gap``: ``|xᵀPx + qᵀx + hᵀz + bᵀy + ubᵀz_box⁺ + lbᵀz_box⁻|``, the primal–dual gap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import aslinearoperator

__all__ = ["Evaluation", "relative_difference", "relative_gap", "qp_residuals", "inf_norm", "linear_weights",
           "check_gram_and_features"]


def relative_difference(a: float, b: float) -> float:
    """``|a − b| / max(1, |a|, |b|)``: relative for large values, absolute near zero.

    Every "agrees to 1e-6 relative" bar in the library and its tests uses this one definition.

    Parameters
    ----------
    a : float
        First value.
    b : float
        Second value.
    """
    return abs(a - b) / max(1.0, abs(a), abs(b))


def relative_gap(primal, dual):
    """The relative duality gap ``(P − D) / max(1, |P|, |D|)`` (elementwise on arrays).

    Parameters
    ----------
    primal : float or ndarray
        Primal objective(s) P.
    dual : float or ndarray
        Dual objective(s) D.
    """
    with np.errstate(invalid="ignore"):   # inf − inf or inf / inf: NaN, which no tolerance accepts
        return (primal - dual) / np.maximum(1.0, np.maximum(np.abs(primal), np.abs(dual)))


@dataclass
class Evaluation:
    """A point graded by its formulation: objectives and scaled KKT residuals (∞-norms).

    ``kkt`` maps residual names (``primal``, ``dual``, ``complementarity``, ``gap``,
    ``stationarity`` …) to scaled values; it is empty when no dual point was given. The primal
    objective is that of the point with its optimal slacks; it means something only where
    ``infeasibility`` is (near) zero.
    ``extra`` carries by-products callers reuse: every formulation puts the training decision
    values ``f_k(x_i)`` there as ``extra["scores"]`` (n, q), and may add its own (coefficients).

    Parameters
    ----------
    primal_objective : float
        Primal objective of the point with its optimal slacks.
    dual_objective : float
        Dual objective (NaN without a dual point).
    kkt : dict
        Scaled KKT residuals by name (empty without a dual point).
    extra : dict
        By-products, e.g. the training decision values ``extra["scores"]``.
    infeasibility : float
        Largest scaled constraint violation of the primal point.
    """

    primal_objective: float
    dual_objective: float = float("nan")
    kkt: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict, repr=False)
    #: scaled violation of the primal point's own constraints beyond the slacks (e.g. OvN's
    #: ``Σ_k w_k = 0`` with hard w, ``Σ_k b_k = 0`` with hard b); 0 where there are none
    infeasibility: float = 0.0

    @property
    def duality_gap(self) -> float:
        return self.primal_objective - self.dual_objective

    @property
    def relative_gap(self) -> float:
        return float(relative_gap(self.primal_objective, self.dual_objective))

    @property
    def max_kkt(self) -> float:
        return max(self.kkt.values()) if self.kkt else float("nan")


def linear_weights(features, primal: dict, n_outputs: int) -> np.ndarray | None:
    """The linear kernel's weights ``primal["W"]`` as a (d, n_outputs) array, or None when the point
    is given by its coefficients (``primal["coef"]`` / ``primal["beta"]``) or has no ``W``.

    A point ``{"W", "b"}`` is any weight matrix, not only one in the span of the data: its
    regularizer is ``WᵀW`` and its training scores ``X W (+ b)``. Raises ``ValueError`` when the
    problem has no features (a kernel other than the linear one) or ``W`` has the wrong shape.

    Parameters
    ----------
    features : array of shape (n, d), sparse matrix or None
        The problem's linear-kernel features (None for other kernels).
    primal : dict
        The primal point.
    n_outputs : int
        The number of weight vectors (labels / classes).
    """
    if primal.get("W") is None or primal.get("coef") is not None or primal.get("beta") is not None:
        return None
    if features is None:
        raise ValueError("primal['W'] needs the linear kernel's features (kernel='linear'); give the "
                         "coefficients over the training points for other kernels")
    W = np.asarray(primal["W"], dtype=np.float64)
    if W.ndim == 1 and n_outputs == 1:
        W = W[:, None]
    if W.shape != (features.shape[1], n_outputs):
        raise ValueError(f"primal['W'] must have shape ({features.shape[1]}, {n_outputs}) (features × outputs); "
                         f"got {W.shape}")
    return W


def check_gram_and_features(gram, features) -> tuple[np.ndarray | None, object, int]:
    """A problem's Gram matrix and linear-kernel features, validated: ``(gram, features, n)`` with
    ``gram`` a finite square float64 array or None (allowed only with features: the linear kernel
    then works through X), ``features`` float64, a sparse X kept sparse (CSR).

    Parameters
    ----------
    gram : array of shape (n, n) or None
        The Gram matrix.
    features : array or sparse matrix of shape (n, d), or None
        The features X of the linear kernel.
    """
    if features is not None:   # a sparse X stays sparse (CSR): the linear solvers read its rows
        features = sp.csr_matrix(features, dtype=np.float64) if sp.issparse(features) else \
            np.asarray(features, dtype=np.float64)
        if features.ndim != 2:
            raise ValueError(f"features must be an (n, d) matrix; got shape {features.shape}")
    if gram is None:
        if features is None:
            raise ValueError("gram may be None only with the linear kernel's features (then K = XXᵀ is "
                             "formed only by the solvers that need it)")
        return None, features, features.shape[0]
    gram = np.asarray(gram, dtype=np.float64)
    if gram.ndim != 2 or gram.shape[0] != gram.shape[1]:
        raise ValueError(f"gram must be a square (n, n) Gram matrix; got shape {gram.shape}")
    if not np.all(np.isfinite(gram)):
        raise ValueError("gram (the kernel matrix) contains NaN or infinite values; check the kernel "
                         "parameters (e.g. a poly kernel overflowing) or the precomputed matrix")
    if features is not None and features.shape[0] != gram.shape[0]:
        raise ValueError(f"features must have n = {gram.shape[0]} rows; got shape {features.shape}")
    return gram, features, gram.shape[0]


def inf_norm(v) -> float:
    """``max |v_i|`` (0 for an empty array).

    Parameters
    ----------
    v : array-like
        The vector (any shape; flattened).
    """
    v = np.asarray(v, dtype=np.float64)
    return float(np.max(np.abs(v))) if v.size else 0.0


def _scaled(residual: float, *terms: float) -> float:
    return residual / (1.0 + max((0.0, *terms)))


def _positive_part(v: np.ndarray) -> np.ndarray:
    """``max(v, 0)``, overwriting the temporary ``v``."""
    return np.maximum(v, 0.0, out=v)


def _times(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``v ∘ w``, overwriting the temporary ``v``."""
    v *= w
    return v


def qp_residuals(P, q, x, *, G=None, h=None, z=None, A=None, b=None, y=None,
                 lb=None, ub=None, z_box=None) -> dict[str, float]:
    """Scaled residuals ``primal``, ``dual``, ``complementarity``, ``gap`` at ``(x, z, y, z_box)``.

    Parameters
    ----------
    P : ndarray or LinearOperator
        Quadratic term.
    q : ndarray
        Linear term.
    x : ndarray
        Primal point.
    G : ndarray or None
        Inequality matrix (``Gx ≤ h``).
    h : ndarray or None
        Inequality right-hand side.
    z : ndarray or None
        Inequality multipliers (≥ 0).
    A : ndarray or None
        Equality matrix (``Ax = b``).
    b : ndarray or None
        Equality right-hand side.
    y : ndarray or None
        Equality multipliers.
    lb : ndarray or None
        Lower bounds.
    ub : ndarray or None
        Upper bounds.
    z_box : ndarray or None
        Box multipliers (None: implied by stationarity).
    """
    x = np.asarray(x, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    Px = aslinearoperator(P).matvec(x)
    stationarity = Px + q
    primal, primal_terms = [0.0], [inf_norm(x)]
    dual_terms = [inf_norm(Px), inf_norm(q)]
    compl, compl_terms = [0.0], [0.0]
    gap_terms = [float(x @ Px), float(q @ x)]
    dual_infeasible = 0.0
    if G is not None:
        G = aslinearoperator(G)
        Gx, Gtz = G.matvec(x), G.rmatvec(z)
        stationarity += Gtz
        primal.append(inf_norm(np.maximum(Gx - h, 0.0)))
        primal_terms += [inf_norm(Gx), inf_norm(h)]
        dual_terms.append(inf_norm(Gtz))
        dual_infeasible = max(dual_infeasible, inf_norm(np.maximum(-z, 0.0)))
        compl.append(inf_norm(z * (h - Gx)))
        compl_terms.append(inf_norm(z) * max(inf_norm(h), inf_norm(Gx)))
        gap_terms.append(float(h @ z))
    if A is not None:
        A = aslinearoperator(A)
        Ax, Aty = A.matvec(x), A.rmatvec(y)
        stationarity += Aty
        primal.append(inf_norm(Ax - b))
        primal_terms += [inf_norm(Ax), inf_norm(b)]
        dual_terms.append(inf_norm(Aty))
        gap_terms.append(float(b @ y))
        del Ax, Aty
    if z_box is not None:
        z_box = np.asarray(z_box, dtype=np.float64)
        stationarity += z_box
        dual_terms.append(inf_norm(z_box))
    # the norm only from here: the vectors below are formed one or two at a time (large QPs)
    stationarity_norm = inf_norm(stationarity)
    del stationarity, Px
    if z_box is not None:
        upper = np.maximum(z_box, 0.0)
        if ub is not None:
            primal.append(inf_norm(_positive_part(x - ub)))
            compl.append(inf_norm(_times(ub - x, upper)))
            gap_terms.append(float(ub @ upper))
        else:  # an upper multiplier without an upper bound is dual infeasible
            dual_infeasible = max(dual_infeasible, inf_norm(upper))
        del upper
        lower = np.minimum(z_box, 0.0)
        if lb is not None:
            primal.append(inf_norm(_positive_part(lb - x)))
            compl.append(inf_norm(_times(x - lb, lower)))
            gap_terms.append(float(lb @ lower))
        else:
            dual_infeasible = max(dual_infeasible, inf_norm(lower))
        del lower
        bounds = [inf_norm(v) for v in (lb, ub) if v is not None]
        compl_terms.append(inf_norm(z_box) * max([inf_norm(x), *bounds]))
    gap = abs(sum(gap_terms))
    return {
        "primal": _scaled(max(primal), *primal_terms),
        "dual": _scaled(max(stationarity_norm, dual_infeasible), *dual_terms),
        "complementarity": _scaled(max(compl), *compl_terms),
        "gap": _scaled(gap, *(abs(t) for t in gap_terms)),
    }
