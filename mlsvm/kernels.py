"""Gram matrices (SPEC §1): linear, rbf, poly, precomputed, with scikit-learn's parameter names.

* ``"linear"``: ``⟨x, x'⟩``
* ``"rbf"``: ``exp(−gamma ‖x − x'‖²)``
* ``"poly"``: ``(gamma ⟨x, x'⟩ + coef0)^degree``
* ``"precomputed"``: the caller passes the Gram matrix itself.

``gamma`` may be a positive float, ``"scale"`` (``1 / (d · Var(X))``, scikit-learn's default) or
``"auto"`` (``1 / d``); :class:`Kernel` resolves it once on the training data so that training and
prediction use the same number.

``X`` may be a scipy sparse matrix (CSR from :func:`mlsvm.data.check_X`): the Gram matrix is then
formed by a sparse product and returned dense (it is ``n × m`` in every case), without densifying
``X``. Before a Gram matrix is formed its memory is estimated (:func:`gram_bytes`) and compared with
the memory the system has available (:func:`available_memory`): when it cannot fit, a
``ValueError`` says how much it would need and how much there is, rather than the process swapping
or being killed. Every Gram matrix computed here is checked finite: a kernel that overflows float64 (e.g.
``poly`` with a large ``degree`` and ``gamma``) raises a ``ValueError`` naming its parameters
instead of reaching a solver as ``inf``. The estimators also refuse, in ``fit`` and in every
prediction, an ``X`` with a row whose ``‖x‖²`` overflows (:func:`check_row_norms`): the linear
routes that work on X itself form no Gram matrix to check, and ``‖a‖² + ‖b‖² − 2⟨a, b⟩`` would
cancel to NaN; and ``gamma="scale"`` whose ``Var X`` overflows.
"""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass

import numpy as np
from scipy.sparse import issparse

from mlsvm.data import check_scalar

__all__ = ["KERNELS", "Kernel", "make_kernel", "check_gram", "gram_factor", "low_rank_factor", "available_memory",
           "gram_bytes",
           "check_gram_memory", "check_row_norms"]

KERNELS = ("linear", "rbf", "poly", "precomputed")

#: Relative size of the most negative eigenvalue still accepted as round-off in a Gram matrix.
PSD_TOLERANCE = 1e-8


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation without swapping: ``MemAvailable`` of
    ``/proc/meminfo`` (Linux), else ``os.sysconf`` free pages × page size; None when unknown."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def gram_bytes(n_rows: int, n_columns: int, *, sparse_input: bool = False, kernel: str = "linear") -> int:
    """Peak bytes of forming an ``n_rows × n_columns`` Gram matrix here: the float64 result, the
    RBF kernel's ``‖a‖² + ‖b‖²`` temporary of the same size, and for sparse input the sparse product
    (up to one 12-byte entry, value and index, per element) before it is made dense.

    Parameters
    ----------
    n_rows : int
        Rows of the Gram matrix (points of the first argument).
    n_columns : int
        Columns (points of the second argument).
    sparse_input : bool
        Whether X is a scipy sparse matrix.
    kernel : str
        Kernel name (``"rbf"`` needs a temporary of the result's size).
    """
    per_entry = 8 + (8 if kernel == "rbf" else 0) + (12 if sparse_input else 0)
    return int(n_rows) * int(n_columns) * per_entry


def _readable(n_bytes: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= size:
            return f"{n_bytes / size:.3g} {unit}"
    return f"{int(n_bytes)} bytes"


def check_gram_memory(n_rows: int, n_columns: int, *, sparse_input: bool = False, kernel: str = "linear",
                      what: str = "Gram matrix") -> None:
    """Raise a ``ValueError`` naming the memory a Gram matrix would need and the memory available
    when it cannot fit (:func:`gram_bytes` > :func:`available_memory`); nothing when it fits or
    the available memory is unknown.

    Parameters
    ----------
    n_rows : int
        Rows of the Gram matrix.
    n_columns : int
        Columns of the Gram matrix.
    sparse_input : bool
        Whether X is a scipy sparse matrix.
    kernel : str
        Kernel name.
    what : str
        Which matrix, for the message.
    """
    needed = gram_bytes(n_rows, n_columns, sparse_input=sparse_input, kernel=kernel)
    available = available_memory()
    if available is not None and needed > available:
        raise ValueError(
            f"the {what} of kernel={kernel!r} is {n_rows} × {n_columns} float64 and forming it would need "
            f"about {_readable(needed)} of memory, but only {_readable(available)} is available "
            "(MemAvailable): use fewer training samples, or a model/solver that works on X for the "
            "linear kernel (docs list each model's memory)")


@dataclass(frozen=True)
class Kernel:
    """A kernel with every parameter resolved (``gamma`` is a number here).

    Parameters
    ----------
    name : {"linear", "rbf", "poly"}
        Kernel name.
    gamma : float
        Resolved width.
    degree : int
        Poly degree.
    coef0 : float
        Poly constant.
    """

    name: str
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0

    def __call__(self, A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
        """Gram matrix ``k(A_i, B_j)``; ``B`` defaults to ``A`` (then the result is symmetric)."""
        if self.name == "precomputed":
            raise ValueError("a precomputed kernel has no feature map: pass the Gram matrix itself")
        symmetric = B is None
        B = A if B is None else B
        if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
            raise ValueError(f"a kernel takes 2-D arrays (n, d) with the same number of features; got shapes "
                             f"{A.shape} and {B.shape}")
        check_gram_memory(A.shape[0], B.shape[0], sparse_input=issparse(A) or issparse(B), kernel=self.name,
                          what="training Gram matrix" if symmetric else "test-vs-training Gram matrix")
        # overflow is detected below, once, on the result; numpy's warnings would only add noise
        with np.errstate(over="ignore", invalid="ignore"):
            # A @ A.T runs as a symmetric rank-k update (syrk): the result is exactly symmetric, and
            # every step below keeps it so, without a symmetrising pass over n² entries.
            gram = A @ B.T
            if issparse(gram):   # sparse A and B: the product's summation order is not symmetric in
                gram = gram.toarray()   # (i, j), so the train Gram matrix is symmetrised: (G + Gᵀ)/2
                if symmetric:
                    gram += gram.T
                    gram *= 0.5
            gram = np.asarray(gram)   # sparse @ dense gives an ndarray; never an np.matrix downstream
            if self.name == "poly":
                gram *= self.gamma
                gram += self.coef0
                gram **= self.degree
            elif self.name == "rbf":  # ‖a − b‖² = ‖a‖² + ‖b‖² − 2⟨a, b⟩, clipped at 0 against cancellation
                sq_a = _squared_norms(A)
                sq_b = sq_a if symmetric else _squared_norms(B)
                gram *= -2.0
                gram += np.add.outer(sq_a, sq_b)   # (a_i + a_j) is symmetric; adding them one by one is not
                np.maximum(gram, 0.0, out=gram)
                if symmetric:
                    np.fill_diagonal(gram, 0.0)
                gram *= -self.gamma
                np.exp(gram, out=gram)
        self._check_finite(gram, "training" if symmetric else "test-vs-training")
        return gram

    def _check_finite(self, gram: np.ndarray, which: str) -> None:
        if np.isfinite(gram).all():
            return
        bad = int(np.count_nonzero(~np.isfinite(gram)))
        parameters = {"linear": "",
                      "rbf": f" with gamma={self.gamma:g}",
                      "poly": f" with gamma={self.gamma:g}, degree={self.degree}, coef0={self.coef0:g}"}[self.name]
        formula = {"linear": "⟨x, x'⟩", "rbf": "‖x − x'‖²", "poly": "(gamma⟨x, x'⟩ + coef0)^degree"}[self.name]
        advice = {"linear": "scale X", "rbf": "scale X", "poly": "lower degree or gamma, or scale X"}[self.name]
        raise ValueError(
            f"the {which} Gram matrix of kernel={self.name!r}{parameters} has {bad} NaN or infinite "
            f"entr{'y' if bad == 1 else 'ies'}: {formula} overflowed float64 (largest finite value "
            f"{np.finfo(np.float64).max:.3g}); {advice}")


def check_row_norms(X, name: str = "X") -> None:
    """Raise a ``ValueError`` when a row's squared norm ``‖x‖²`` overflows float64: every kernel's
    inner products with that row (and a linear model's scores, computed from X without a Gram
    matrix) would overflow, or cancel to NaN in ``‖a‖² + ‖b‖² − 2⟨a, b⟩``.

    Parameters
    ----------
    X : array or sparse matrix of shape (n, d)
        Validated features.
    name : str, default="X"
        The argument's name, for the message.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        norms = _squared_norms(X)
    bad = int(np.count_nonzero(~np.isfinite(norms)))
    if bad:
        raise ValueError(f"{name} has {bad} row(s) whose squared norm ‖x‖² overflows float64 (largest finite "
                         f"value {np.finfo(np.float64).max:.3g}): its inner products would overflow; scale {name}")


def _squared_norms(A) -> np.ndarray:
    """Row norms ``‖a_i‖²`` of a dense or sparse matrix (sparse: over the stored entries only)."""
    if issparse(A):
        return np.asarray(A.multiply(A).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", A, A)


#: the numpydoc entries of the kernel parameters, shared by :func:`make_kernel` and every estimator
KERNEL_PARAMETERS = '''\
kernel : {"linear", "rbf", "poly", "precomputed"} or callable
    The kernel (:func:`mlsvm.kernels.make_kernel`); ``"precomputed"`` takes Gram matrices as X.
gamma : float or "scale"
    RBF / poly width; ``"scale"`` is ``1 / (d · Var X)`` as in scikit-learn, and 1 when the
    entries of X are all equal.
degree : int
    Degree of the poly kernel.
coef0 : float
    Constant of the poly kernel.'''


def make_kernel(kernel="linear", gamma="scale", degree=3, coef0=0.0, X=None) -> Kernel:
    """Validate kernel parameters and resolve ``gamma`` on the training data ``X``.

    Parameters
    ----------
    %(kernel)s
    X : array of shape (n, d) or None
        Training features, needed to resolve ``gamma="scale"``.
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}; got {kernel!r}")
    check_scalar(degree, "degree", low=1, integer=True)
    check_scalar(coef0, "coef0")
    if kernel in ("linear", "precomputed"):
        return Kernel(kernel, 1.0, int(degree), float(coef0))
    if isinstance(gamma, str):
        if gamma not in ("scale", "auto"):
            raise ValueError(f"gamma must be a positive number, 'scale' or 'auto'; got {gamma!r}")
        if X is None:
            raise ValueError(f"gamma={gamma!r} needs the training data X to be resolved")
        if not issparse(X):
            X = np.asarray(X)
        if X.ndim != 2 or X.dtype.kind not in "biuf":
            raise ValueError(f"gamma={gamma!r} is resolved on X, a 2-D array of real numbers (n, d); got shape "
                             f"{X.shape} and dtype {X.dtype}")
        with np.errstate(over="ignore", invalid="ignore"):   # an overflow is reported below, in X's terms
            variance = _variance(X) if gamma == "scale" else 1.0
            gamma = 1.0 / (X.shape[1] * variance) if variance > 0 else 1.0
        if not (np.isfinite(variance) and 0.0 < gamma < np.inf):
            raise ValueError(f"gamma='scale' is 1 / (n_features · Var X), and computing it overflows float64 "
                             f"(largest finite value {np.finfo(np.float64).max:.3g}; got Var X = {variance:g}): "
                             "scale X, or pass a numeric gamma")
    else:
        check_scalar(gamma, "gamma", low=0.0, low_open=True)
    return Kernel(kernel, float(gamma), int(degree), float(coef0))


make_kernel.__doc__ = make_kernel.__doc__.replace("    %(kernel)s", textwrap.indent(KERNEL_PARAMETERS, "    "))


def _variance(X) -> float:
    """``Var`` over every entry of ``X``. Sparse: two passes over the stored values, the implicit
    zeros adding ``μ²`` each — no densifying, and no ``E[x²] − μ²`` cancellation (which for
    features far from 0 would make gamma="scale" differ between a sparse and a dense X).

    Entries that are all equal have variance exactly 0: the computed mean of equal values can
    differ from them by round-off, and 1 / that round-off (1.4e45 for entries at 1e-6) put the
    poly kernel's values at 1e94."""
    if not issparse(X):
        X = np.asarray(X, dtype=np.float64)
        return 0.0 if X.size == 0 or X.min() == X.max() else float(X.var())
    X = X.tocsr()
    if not X.has_canonical_format:   # duplicates would be counted as separate entries
        X = X.copy()
        X.sum_duplicates()
    size = X.shape[0] * X.shape[1]
    if size == 0 or X.min() == X.max():   # scipy's min and max count the implicit zeros
        return 0.0
    values = np.asarray(X.data, dtype=np.float64)
    mean = values.sum() / size
    centred = values - mean
    return float((centred @ centred + (size - values.size) * mean * mean) / size)


def check_gram(gram, name: str = "K", *, square: bool = True, psd: bool = True) -> np.ndarray:
    """Validate a Gram matrix: finite; when ``square``, symmetric and PSD up to round-off.

    The PSD test accepts a smallest eigenvalue down to ``−PSD_TOLERANCE · max(1, ‖K‖₂)``; beyond
    that the problem would not be convex and the error says so.

    Parameters
    ----------
    gram : array-like
        Gram matrix to validate (finite; square unless ``square=False``).
    name : str
        Argument name used in error messages.
    square : bool
        Require a square matrix.
    psd : bool
        With ``square``, test positive semidefiniteness (an eigendecomposition; :func:`gram_factor`,
        which decomposes the matrix anyway, tests the eigenvalues it computes instead).
    """
    # a precomputed Gram matrix given sparse is densified: it is n × n and read densely anyway
    try:
        gram = gram.toarray().astype(np.float64, copy=False) if issparse(gram) else np.asarray(gram, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a Gram matrix of real numbers; got {type(gram).__name__} "
                         f"{np.asarray(gram).dtype if not issparse(gram) else gram.dtype} values") from None
    if gram.ndim != 2:
        raise ValueError(f"{name} must be a 2-D Gram matrix; got shape {gram.shape}")
    if not np.all(np.isfinite(gram)):
        raise ValueError(f"{name} (the Gram matrix) contains NaN or infinite values")
    if not square:
        return gram
    if gram.shape[0] != gram.shape[1]:
        raise ValueError(f"{name} must be a square (n_samples, n_samples) Gram matrix; got shape {gram.shape}")
    scale = max(1.0, float(np.max(np.abs(gram))))
    asymmetry = float(np.max(np.abs(gram - gram.T)))
    if asymmetry > PSD_TOLERANCE * scale:
        raise ValueError(f"{name} is not symmetric (max |K − Kᵀ| = {asymmetry:.3g}); a kernel matrix must be")
    gram = 0.5 * (gram + gram.T)
    if psd:
        _check_psd(np.linalg.eigvalsh(gram), name)
    return gram


def _check_psd(eigenvalues: np.ndarray, name: str = "K") -> None:
    """Raise a ``ValueError`` unless the ascending ``eigenvalues`` of a symmetric Gram matrix are
    those of a positive semidefinite one up to round-off: the smallest down to
    ``−PSD_TOLERANCE · max(1, ‖K‖₂)`` (``‖K‖₂`` the largest eigenvalue in magnitude).

    Parameters
    ----------
    eigenvalues : array of shape (n,)
        Eigenvalues of the symmetric matrix, ascending (``numpy.linalg.eigh`` order).
    name : str
        Argument name used in error messages.
    """
    smallest = float(eigenvalues[0])
    if smallest < -PSD_TOLERANCE * max(1.0, abs(smallest), float(eigenvalues[-1])):
        raise ValueError(
            f"{name} is not positive semidefinite (smallest eigenvalue {smallest:.3g}): the problem "
            "would not be convex; use a valid kernel")


def low_rank_factor(gram: np.ndarray, max_rank, tol: float) -> np.ndarray | None:
    """``L`` (n × r) with ``‖K − L Lᵀ‖_max ≤ tol`` by pivoted Cholesky, or None when that needs
    more than ``max_rank`` columns. (K PSD: the residual is PSD, so its largest entry is its
    largest diagonal entry, the stopping quantity.) Cost O(n r²), stopping at ``max_rank + 1``
    columns whatever K's rank.

    Parameters
    ----------
    gram : array of shape (n, n)
        Positive semidefinite Gram matrix.
    max_rank : int or float
        Most columns allowed.
    tol : float
        Largest entry of ``K − L Lᵀ`` allowed.
    """
    n = gram.shape[0]
    columns = min(int(max_rank), n)
    factor = np.zeros((n, max(columns, 1)))
    residual = np.array(np.diag(gram), dtype=float)
    for k in range(columns + 1):
        pivot = int(np.argmax(residual))
        if residual[pivot] <= tol:
            return factor[:, :max(k, 1)].copy()   # contiguous, without the unused columns
        if k == columns:
            return None
        column = np.array(gram[:, pivot], dtype=float) - factor[:, :k] @ factor[pivot, :k]
        column /= np.sqrt(residual[pivot])
        factor[:, k] = column
        residual -= column * column
        residual[pivot] = 0.0
    return None


def gram_factor(gram: np.ndarray, rtol: float = 1e-12) -> np.ndarray:
    """A factor ``L`` (n × r) with ``L Lᵀ = K`` up to eigenvalues below ``rtol · λ_max``.

    CVXPY ground truths use it to write ``½ aᵀKa`` as ``½‖Lᵀa‖²`` (DCP, and never a matrix larger
    than ``n × n``). Eigenvalues that round-off made slightly negative are dropped.

    Parameters
    ----------
    gram : array of shape (n, n)
        Positive semidefinite Gram matrix.
    rtol : float
        Eigenvalues below ``rtol · λ_max`` are dropped.
    """
    gram = check_gram(gram, "gram", psd=False)   # symmetrised
    eigenvalues, vectors = np.linalg.eigh(gram)
    _check_psd(eigenvalues, "gram")
    keep = eigenvalues > rtol * max(eigenvalues[-1], 0.0)
    if not np.any(keep):
        return np.zeros((gram.shape[0], 1))
    return vectors[:, keep] * np.sqrt(eigenvalues[keep])

