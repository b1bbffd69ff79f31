"""Matrix-SVM, hinge loss, linear kernel, no A: LIBLINEAR per label, its dual point recovered
exactly, certified by the formulation (the ``"liblinear-dcd"`` route).

Without A the problem is q separate L2-regularised hinge SVMs whose bias is a feature of value 1
(:mod:`mlsvm.solvers.matrix_svm_dcd`), which is LIBLINEAR's dual problem with
``intercept_scaling=1``. So the compiled LIBLINEAR of scikit-learn
(``LinearSVC(loss="hinge", dual=True, fit_intercept=True, intercept_scaling=1)``, one fit per label,
``random_state`` passed to its visiting order) gives ``w̄_k = [w_k, b_k]`` at its own stopping rule
(``LIBLINEAR_TOL``: a projected-gradient spread, not our certificate, so its ConvergenceWarning is
caught here and never reaches the user). scikit-learn does not return LIBLINEAR's α, and the
certificate (relative duality gap and scaled KKT residuals of α) needs one, so α is rebuilt from
``w̄_k`` by the optimality conditions:

* margins ``m = y ∘ (X̄ w̄)`` split the rows into ``U = {m < 1 − δ}`` (α = C), ``L = {m > 1 + δ}``
  (α = 0) and the near-margin set ``F`` (δ = ``MARGIN_BAND``);
* on F the margins are 1 exactly: ``X̄_F X̄_Fᵀ (α_F ∘ y_F) = y_F − X̄_F X̄_Uᵀ (C y_U)``. Rows that
  are duplicates of one another (bibtex: 22 of 4880) make this system singular — measured on
  bibtex, its rank deficiency is exactly the number of duplicates in F — so each group of equal
  rows is one unknown (their summed ``α ∘ y``), shared equally by its members, and the system on
  the distinct rows is positive definite (a Cholesky factor, ``|F|³/3`` flops; least squares if
  the factor fails);
* the sets are corrected as in a primal–dual active-set method (free α outside the box go to the
  bound they crossed; bound rows whose gradient ``m − 1`` points inwards become free), at most
  ``RECOVERY_STEPS`` times or until the sets repeat.

The point is then graded: relative duality gap of the whole problem and ``certificate(α)`` (the
formulation's largest scaled KKT residual) both ≤ tol, else :func:`solve_dcd` goes on from it (its
coordinate passes and Newton face steps, same certificate). ``converged`` is never decided here:
the caller's report recomputes it. A warm start no better than α = 0 (LIBLINEAR stopped far from
its optimum: badly scaled features, e.g. raw emotions) is dropped and the passes start from 0.

A label with one class only (every ``y_i = s``) has no LIBLINEAR fit (scikit-learn refuses it), and
it needs none: with the column of ones in X̄, ``Σα = e_{d+1}ᵀ X̄ᵀα``, so its dual
``½‖X̄ᵀ(α∘y)‖² − Σα`` is ``½‖X̄ᵀα − e_{d+1}‖² − ½``, a bounded least-squares problem over
``0 ≤ α ≤ C`` that BVLS (``scipy.optimize.lsq_linear``) solves exactly by its active sets. Its
optimum is often degenerate (every margin exactly 1, more free α than the rank of X̄), which is
where coordinate descent crawls. BVLS solves a least-squares problem on its free set per active-set
change, cheap on a narrow X̄ (d + 1 ≤ ``ONE_CLASS_BVLS_WIDTH``, whose faces are the degenerate ones)
and slow on a square one, so it runs on the dense X̄ᵀ when X̄ is that narrow and has at most
``ONE_CLASS_DENSE_ENTRIES`` entries; any other one-class label starts the recovery from ``w̄ = 0``
(every margin 0: all α at C, then the active-set steps).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lstsq
from scipy.optimize import lsq_linear
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from mlsvm.solvers.matrix_svm_dcd import _label_objectives, solve_dcd
from mlsvm.solvers.result import CertifiedStop, SolverResult, relative_gap

__all__ = ["solve_liblinear_dcd", "recover_alpha", "LIBLINEAR_TOL", "MARGIN_BAND", "RECOVERY_STEPS",
           "ONE_CLASS_BVLS_WIDTH", "ONE_CLASS_DENSE_ENTRIES"]

#: LIBLINEAR's own stopping tolerance (its projected-gradient spread) for the warm start
LIBLINEAR_TOL = 1e-4
#: rows whose margin is within this of 1 start in the free set F of the recovery
MARGIN_BAND = 1e-3
#: active-set corrections of the recovery per label
RECOVERY_STEPS = 10
#: LIBLINEAR's iteration budget per label (its ConvergenceWarning is caught: the certificate decides)
LIBLINEAR_MAX_ITER = 10_000
#: widest X̄ (d + 1 columns) whose one-class labels are solved by BVLS
ONE_CLASS_BVLS_WIDTH = 128
#: largest X̄ᵀ ((d + 1) × n entries, 8 bytes each) formed densely for a one-class label's exact dual
ONE_CLASS_DENSE_ENTRIES = 4_000_000


def _duplicate_groups(features: sp.csr_matrix, seed: int = 0) -> np.ndarray:
    """A group id per row: rows with the same entries share it (two random projections compared
    exactly; a collision of distinct rows would only make the recovered point wrong, which the
    certificate then rejects)."""
    rng = np.random.default_rng(seed)
    keys = features @ rng.standard_normal((features.shape[1], 2))
    _, groups = np.unique(keys, axis=0, return_inverse=True)
    return groups.ravel()


def _one_class_alpha(augmented_t: np.ndarray, C: float) -> np.ndarray:
    """The exact dual of a label with one class only: ``argmin ‖X̄ᵀα − e_{d+1}‖`` over
    ``0 ≤ α ≤ C`` (module docstring), by BVLS on the dense ``X̄ᵀ``."""
    target = np.zeros(augmented_t.shape[0])
    target[-1] = 1.0
    fit = lsq_linear(augmented_t, target, bounds=(0.0, C), method="bvls", tol=1e-15)
    return np.clip(fit.x, 0.0, C)


class _GramCache:
    """Entries ``x̄_iᵀx̄_j`` of the rows one label's recovery has asked for: the free sets of its
    active-set steps differ by a few rows, so each step computes only the new rows' products."""

    def __init__(self, augmented: sp.csr_matrix):
        self.augmented = augmented
        self.rows = np.zeros(0, dtype=np.intp)
        self.matrix = augmented[self.rows]
        self.values = np.zeros((0, 0))
        self.position = np.full(augmented.shape[0], -1)

    def block(self, index: np.ndarray) -> np.ndarray:
        """``X̄_I X̄_Iᵀ`` for the rows ``index``."""
        missing = index[self.position[index] < 0]
        if missing.size:
            new = self.augmented[missing]
            cross = (new @ self.matrix.T).toarray() if self.rows.size else np.zeros((missing.size, 0))
            corner = (new @ new.T).toarray()
            self.values = np.block([[self.values, cross.T], [cross, corner]])
            self.position[missing] = self.rows.size + np.arange(missing.size)
            self.rows = np.r_[self.rows, missing]
            self.matrix = sp.vstack([self.matrix, new], format="csr")
        where = self.position[index]
        return self.values[np.ix_(where, where)]


def _liblinear_weights(X, signed, C, random_state, liblinear_tol):
    """``W̄`` ((d + 1) × q): LIBLINEAR's ``[coef_; intercept_]`` per label (zero for one-class labels)."""
    n_features, q = X.shape[1], signed.shape[1]
    weights = np.zeros((n_features + 1, q))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # our certificate decides, not its rule
        for k in range(q):
            y = signed[:, k]
            if np.all(y == y[0]):
                continue
            model = LinearSVC(C=C, loss="hinge", dual=True, fit_intercept=True, intercept_scaling=1.0,
                              tol=liblinear_tol, max_iter=LIBLINEAR_MAX_ITER, random_state=random_state)
            model.fit(X, (y > 0).astype(np.int8))
            weights[:-1, k] = model.coef_.ravel()
            weights[-1, k] = model.intercept_[0]
    return weights


def recover_alpha(features, signed: np.ndarray, C: float, weights: np.ndarray, *,
                  band: float = MARGIN_BAND, steps: int = RECOVERY_STEPS) -> np.ndarray:
    """A dual point α (n × q, in the box) whose ``X̄ᵀ(α ∘ Ys)`` is the optimum closest to ``weights``
    by the construction of the module docstring.

    Parameters
    ----------
    features : array or sparse matrix of shape (n, d)
        The features X (linear kernel); the column of ones is implied.
    signed : array of shape (n, q)
        ``Ys = 2Y − 1`` (±1).
    C : float
        Loss weight C > 0.
    weights : array of shape (d + 1, q)
        ``W̄ = [W; bᵀ]``, an approximate primal optimum (LIBLINEAR's).
    band : float
        Rows with ``|m − 1| ≤ band`` start free.
    steps : int
        Largest number of active-set corrections per label.
    """
    X = sp.csr_matrix(features, dtype=np.float64)
    n, q = signed.shape
    augmented = sp.hstack([X, np.ones((n, 1))], format="csr")
    augmented.sum_duplicates()
    transposed = augmented.T.tocsr()
    groups = _duplicate_groups(augmented)
    margins = signed * (augmented @ weights)
    alpha = np.zeros((n, q))
    dense_t = None
    width = X.shape[1] + 1
    one_class_by_bvls = width <= ONE_CLASS_BVLS_WIDTH and n * width <= ONE_CLASS_DENSE_ENTRIES
    for k in range(q):
        y, m = signed[:, k], margins[:, k]
        if one_class_by_bvls and np.all(y == y[0]):
            if dense_t is None:
                dense_t = transposed.toarray()
            alpha[:, k] = _one_class_alpha(dense_t, C)
            continue
        upper, free = m < 1.0 - band, np.abs(m - 1.0) <= band
        gram = _GramCache(augmented)
        for _ in range(max(steps, 1)):
            a = np.where(upper, C, 0.0)
            index = np.flatnonzero(free)
            fixed = transposed @ (a * y)                       # X̄ᵀ(C y ∘ 1_U)
            if index.size:
                # one unknown per group of equal rows: t_g = Σ_{i∈g} α_i y_i
                _, first, inverse, counts = np.unique(groups[index], return_index=True, return_inverse=True,
                                                      return_counts=True)
                inverse = inverse.ravel()
                distinct = index[first]
                system = gram.block(distinct)
                rhs = y[distinct] - augmented[distinct] @ fixed
                try:
                    t = cho_solve(cho_factor(system, lower=True, check_finite=False), rhs, check_finite=False)
                except LinAlgError:
                    t = lstsq(system, rhs, cond=1e-12, check_finite=False)[0]
                a[index] = y[index] * t[inverse] / counts[inverse]
            gradient = y * (augmented @ (transposed @ (a * y))) - 1.0
            new_upper = np.where(free, a >= C, upper & (gradient <= 0.0))
            new_free = np.where(free, (a > 0.0) & (a < C),
                                (upper & (gradient > 0.0)) | (~upper & (gradient < 0.0)))
            if np.array_equal(new_upper, upper) and np.array_equal(new_free, free):
                break
            upper, free = new_upper, new_free
        alpha[:, k] = np.clip(a, 0.0, C)
    return alpha


def solve_liblinear_dcd(features, signed: np.ndarray, C: float, *, tol: float = 1e-6, max_iter: int = 1000,
                        certificate=None, random_state=0, liblinear_tol: float = LIBLINEAR_TOL,
                        name: str = "MatrixSVM(solver='liblinear-dcd')") -> SolverResult:
    """LIBLINEAR per label, α recovered from its weights, graded; :func:`solve_dcd` from there
    when the point does not meet ``tol``.

    Returns the same fields as :func:`mlsvm.solvers.matrix_svm_dcd.solve_dcd`; ``n_iter`` counts
    the coordinate-descent passes after the warm start (0 when the recovered point is certified).

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
        Coordinate-descent passes allowed after the warm start.
    certificate : callable or None
        ``certificate(alpha) -> float``: the largest scaled KKT residual the point will be graded on.
    random_state : int or None
        Seed of LIBLINEAR's visiting order (and of the coordinate passes).
    liblinear_tol : float
        LIBLINEAR's own stopping tolerance for the warm start.
    name : str
        Solver name for warnings.
    """
    start = time.perf_counter()
    X = sp.csr_matrix(features, dtype=np.float64)
    signed = np.asarray(signed, dtype=np.float64)
    seed = 0 if random_state is None else random_state
    weights = _liblinear_weights(X, signed, C, seed, liblinear_tol)
    warm = time.perf_counter()
    alpha = recover_alpha(X, signed, C, weights)
    recovered = time.perf_counter()
    primal, dual, coef, bias, _ = _label_objectives(X, signed, C, alpha)
    gap = float(relative_gap(primal.sum(), dual.sum()))
    stop = CertifiedStop(tol, certificate)
    timing = {"liblinear": warm - start, "recovery": recovered - warm}
    if gap <= stop.target and stop.accept(alpha):
        return SolverResult(primal={"coef": alpha * signed, "W": coef, "b": bias}, dual={"alpha": alpha},
                            converged=True, n_iter=0, stop_value=gap,
                            stop_rule="relative duality gap (LIBLINEAR warm start, recovered α)",
                            solve_time=time.perf_counter() - start,
                            history={"relative_gap": [gap], "pass": [0], "timing": timing},
                            solver="liblinear-dcd")
    # a warm start worse than α = 0 (LIBLINEAR far from its optimum: badly scaled features) is dropped
    zero_primal = C * signed.shape[0] * signed.shape[1]           # at α = 0: W̄ = 0, every hinge 1
    keep = gap < float(relative_gap(zero_primal, 0.0))
    result = solve_dcd(X, signed, C, tol=tol, max_iter=max_iter, certificate=certificate, random_state=seed,
                       alpha0=alpha if keep else None, name=name)
    result.history["warm_gap"] = gap
    result.history["timing"] = timing
    result.stop_rule = (f"{result.stop_rule} (coordinate descent from the LIBLINEAR warm start, gap {gap:.1e})"
                        if keep else f"{result.stop_rule} (coordinate descent from 0: the LIBLINEAR warm start's "
                                     f"gap {gap:.1e} was no better)")
    result.solve_time = time.perf_counter() - start
    result.solver = "liblinear-dcd"
    return result
