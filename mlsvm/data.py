"""Input validation, ±1 conversion and the ranking-pair structure (SPEC §1).

Every public entry point validates through this module, so an error always names the argument
and says what was expected. The ranking-pair structure is shared by Rank-SVM and mLODM: it is
kept as flat index arrays of length ``T = Σ_i |Y_i||Ȳ_i|`` (never a dense ``T × T`` object).
"""

from __future__ import annotations

import numbers
import warnings
import zipfile
import zlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix, issparse
from sklearn.exceptions import DataConversionWarning

from mlsvm.solvers.compiled import compiled

__all__ = [
    "NonNumericError",
    "read_npz",
    "read_npy",
    "check_X",
    "check_Y",
    "check_class_vector",
    "check_X_Y",
    "check_scalar",
    "to_signed",
    "RankingPairs",
    "ranking_pairs",
    "LabelTarget",
]


class NonNumericError(TypeError, ValueError):
    """An input that cannot be read as numbers. Both a ``ValueError`` (mlsvm's rule: bad input
    raises ValueError naming the argument) and a ``TypeError`` (what numpy and scikit-learn raise
    for, e.g., an object array holding a dict)."""


def read_npz(path, what: str, error: type[ValueError] = ValueError, hint: str = "") -> dict:
    """Every array of the ``.npz`` archive at ``path``, read whole and never unpickled.

    A file that is not such an archive raises ``error`` naming it and saying what it is instead: a
    single ``.npy`` array, not a zip archive at all, an archive holding Python objects (pickle), or a
    damaged one. NumPy's own messages would advise loading a pickle "unsafely", which mlsvm never does.

    Parameters
    ----------
    path : str or Path
        The file.
    what : str
        What the file should be, for the messages (e.g. ``"mlsvm model file"``).
    error : type, default=ValueError
        The exception raised (a ``ValueError`` subclass).
    hint : str, default=""
        Appended to the messages, e.g. which command writes such files.
    """
    path = Path(path)
    with path.open("rb") as handle:
        magic = handle.read(6)
    if magic.startswith(b"\x93NUMPY"):
        raise error(f"{path} is a single numpy array (.npy), not a readable {what}{hint}")
    if not magic.startswith(b"PK"):
        raise error(f"{path} is not a readable {what}: not a .npz archive{hint}")

    def read(handle):
        with np.load(handle, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}

    return _read_numpy_file(path, read, what, ".npz archive", error, hint)


def read_npy(path, what: str, error: type[ValueError] = ValueError) -> np.ndarray:
    """The array of the ``.npy`` file at ``path``, never unpickled.

    A file that is missing or is not such an array (a folder, a ``.npz`` archive, other bytes, an
    array of Python objects, a damaged file) raises ``error`` naming it and what it is instead.

    Parameters
    ----------
    path : str or Path
        The file.
    what : str
        What the file should be, for the messages (e.g. ``"array X of a reference case"``).
    error : type, default=ValueError
        The exception raised (a ``ValueError`` subclass).
    """
    path = Path(path)
    if not path.is_file():
        raise error(f"{path} is not a readable {what}: {'a folder' if path.is_dir() else 'no such file'}")
    with path.open("rb") as handle:
        magic = handle.read(6)
    if not magic.startswith(b"\x93NUMPY"):
        kind = "a .npz archive, not a single array" if magic.startswith(b"PK") else "not a .npy file"
        raise error(f"{path} is not a readable {what}: {kind}")
    return _read_numpy_file(path, lambda handle: np.load(handle, allow_pickle=False), what, ".npy file", error)


def _read_numpy_file(path: Path, read, what: str, kind: str, error: type[ValueError], hint: str = ""):
    """``read(handle)`` on the file opened here (so that it is closed when NumPy's reading fails);
    NumPy's, zipfile's and zlib's failures become ``error`` naming the file and what it holds."""
    try:
        with path.open("rb") as handle:
            return read(handle)
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise error(f"{path} is not a readable {what}: it holds Python objects (pickle), which mlsvm never "
                        f"loads{hint}") from None
        raise error(f"{path} is not a readable {what}: a damaged {kind} ({exc}){hint}") from None
    except (OSError, zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError) as exc:
        # NotImplementedError: zipfile's word for a damaged member header (an unknown version or compression)
        raise error(f"{path} is not a readable {what}: a damaged {kind} ({exc}){hint}") from None


def check_X(X, name: str = "X", n_samples: int | None = None):
    """Return ``X`` as a finite float64 ``(n, d)`` array, or raise ``ValueError`` naming ``name``.

    Array-likes (lists, DataFrames, objects with ``__array__``) are converted with ``np.asarray``
    first; numpy functions are only called on the converted array. A scipy sparse matrix or array
    (any format) is returned as a float64 ``csr_matrix`` with sorted, summed indices, checked
    without densifying it.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Input to validate (finite, numeric, 2-D).
    name : str
        Argument name used in error messages.
    n_samples : int or None
        Required number of rows, if any.
    """
    if issparse(X):
        return _check_sparse_X(X, name, n_samples)
    try:
        array = np.asarray(X)
        complex_values = array.dtype.kind == "c" or (
            array.dtype.kind == "O" and any(isinstance(value, complex) for value in array.flat))
        if not complex_values:
            array = array.astype(np.float64, copy=False)
    except (TypeError, ValueError) as exc:
        raise NonNumericError(f"{name} must be a numeric array of shape (n_samples, n_features); {exc}") from None
    if complex_values:
        raise ValueError(f"{name} contains complex values (Complex data not supported); expected real numbers")
    _check_shape(array.shape, name, n_samples)
    _check_finite(array, name)
    return array


def _check_shape(shape: tuple, name: str, n_samples: int | None) -> None:
    if len(shape) != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got an array of shape {shape}. "
                         "Reshape your data: X.reshape(-1, 1) for one feature, X.reshape(1, -1) for one sample")
    if shape[0] == 0:
        raise ValueError(f"{name} must have at least one sample; got 0 sample(s) (shape={shape}) "
                         "while a minimum of 1 is required.")
    if shape[1] == 0:
        raise ValueError(f"{name} must have at least one feature; got 0 feature(s) (shape={shape}) "
                         "while a minimum of 1 is required.")
    if n_samples is not None and shape[0] != n_samples:
        raise ValueError(f"{name} has {shape[0]} rows; expected {n_samples}")


def _check_finite(values: np.ndarray, name: str) -> None:
    if not np.all(np.isfinite(values)):
        bad = int(np.count_nonzero(~np.isfinite(values)))
        raise ValueError(f"{name} contains {bad} NaN or infinite value(s); every entry must be finite")


def _check_sparse_X(X, name: str, n_samples: int | None) -> csr_matrix:
    """A sparse ``X`` as a float64 CSR copy: duplicates summed, indices sorted (canonical form,
    so that products and row slices see each entry once); only the stored values are checked."""
    if X.dtype.kind == "c":
        raise ValueError(f"{name} contains complex values (Complex data not supported); expected real numbers")
    _check_shape(X.shape, name, n_samples)
    try:
        matrix = csr_matrix(X, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise NonNumericError(f"{name} must be a numeric sparse matrix of shape (n_samples, n_features); {exc}") from None
    matrix.sum_duplicates()
    _check_finite(matrix.data, name)
    return matrix


@dataclass(frozen=True)
class LabelTarget:
    """Validated labels: the ``(n, q)`` {0,1} indicator and how to map predictions back.

    ``classes`` is set for a multiclass target (a 1-D class vector), ``None`` for multilabel.

    Parameters
    ----------
    Y : array of shape (n, q)
        The {0, 1} indicator.
    classes : array or None
        Class labels when the input was a 1-D class vector (multiclass), else None.
    """

    Y: np.ndarray
    classes: np.ndarray | None

    @property
    def is_multiclass(self) -> bool:
        return self.classes is not None


def check_Y(Y, n_samples: int | None = None, name: str = "Y") -> LabelTarget:
    """Validate a target: an ``(n, q)`` indicator with entries in {0, 1}, or a 1-D class vector.

    A 1-D vector is one-hot encoded over its sorted distinct values (multiclass); a 2-D array must
    contain only 0 and 1 (multilabel, scikit-learn's convention).

    Parameters
    ----------
    Y : array-like
        An (n, q) {0, 1} indicator, or a 1-D vector of class labels (multiclass).
    n_samples : int or None
        Required number of rows, if any.
    name : str
        Argument name used in error messages.
    """
    if Y is None:
        raise ValueError(f"{name} is required: this estimator requires y to be passed, but the target y is None")
    array = _label_array(Y, name)
    if array.ndim == 1 and array.dtype.kind == "f" and np.all(np.isfinite(array)) and np.any(array != np.round(array)):
        raise ValueError(f"{name} holds non-integer numbers (Unknown label type: continuous); a classifier "
                         "needs class labels (1-D) or a {0,1} indicator (2-D)")
    if array.ndim == 1 or (array.ndim == 2 and array.shape[1] == 1 and not _is_indicator(array)):
        array = array.ravel()
        if array.size == 0:
            raise ValueError(f"{name} is empty; expected one class label per sample")
        if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
            raise ValueError(f"{name} contains NaN or infinite class labels")
        classes, codes = np.unique(array, return_inverse=True)
        if classes.size < 2:
            raise ValueError(f"{name} has one class {classes.tolist()}; a classifier needs at least two")
        indicator = np.zeros((array.size, classes.size), dtype=np.int8)
        indicator[np.arange(array.size), codes] = 1
        target = LabelTarget(indicator, classes)
    elif array.ndim == 2:
        if array.shape[0] == 0 or array.shape[1] == 0:
            raise ValueError(f"{name} must have at least one sample and one label; got shape {array.shape}")
        if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
            raise ValueError(f"{name} contains NaN or infinite values; entries must be 0 or 1")
        if not _is_indicator(array):
            values = np.unique(array)[:6].tolist()
            raise ValueError(f"{name} must contain only 0 and 1 (multilabel indicator); found values {values}"
                             f"{_LABEL_LISTS_HINT.format(name=name) if array.dtype.kind in 'iu' else ''}")
        target = LabelTarget(array.astype(np.int8), None)
    else:
        raise ValueError(f"{name} must be a 1-D class vector or a 2-D (n_samples, n_labels) indicator; got shape {array.shape}")
    if n_samples is not None and target.Y.shape[0] != n_samples:
        raise ValueError(f"{name} has {target.Y.shape[0]} samples but X has {n_samples}")
    return target


def check_class_vector(y, name: str = "y"):
    """A target that must be one class label per sample (multiclass-only models): a column vector
    ``(n, 1)`` is raveled with a ``DataConversionWarning`` (scikit-learn's convention); any other
    2-D target raises ``ValueError``. Returns the 1-D array (not yet validated by :func:`check_Y`).

    Parameters
    ----------
    y : array-like of shape (n,)
        Class labels to validate.
    name : str
        Argument name used in error messages.
    """
    if y is None:
        raise ValueError(f"{name} is required: this estimator requires y to be passed, but the target y is None")
    array = _label_array(y, name)
    if array.ndim == 2 and array.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape "
                      "of y to (n_samples, ), for example using ravel().", DataConversionWarning, stacklevel=3)
        return array.ravel()
    if array.ndim != 1:
        raise ValueError(f"{name} should be a 1d array: a 1-D class vector (this model is multiclass; a "
                         f"multilabel indicator needs a multilabel model); got shape {array.shape}")
    return array


_LABEL_LISTS_HINT = (". If {name} is a list of label lists per sample, convert it to an indicator with "
                     "sklearn.preprocessing.MultiLabelBinarizer().fit_transform({name})")
_SEQUENCES = (list, tuple, set, frozenset, np.ndarray)


def _label_array(Y, name: str) -> np.ndarray:
    """A target as a numpy array before its values are read: a sparse indicator is densified (Y is
    (n, q) and small next to X); a list of label lists (``[[0, 2], [1]]``, rows of different
    lengths) is rejected naming ``name``, as scikit-learn does since 0.17 — the number of labels
    cannot be read from it (a label that no sample has is invisible) and predictions could not
    come back in that form; a 1-D target mixing strings and numbers (which numpy would silently
    turn into strings, or fail to sort) is rejected too."""
    if issparse(Y):
        return Y.toarray()
    if isinstance(Y, (list, tuple)) or (isinstance(Y, np.ndarray) and Y.dtype == object):
        items = Y.ravel() if isinstance(Y, np.ndarray) else Y
        nested = [isinstance(item, _SEQUENCES) for item in items]
        if any(nested) and (isinstance(Y, np.ndarray) or not all(nested)
                            or any(isinstance(item, (set, frozenset)) for item in items)
                            or len({len(item) for item in items}) > 1):
            raise ValueError(
                f"{name} looks like a list of label lists (rows of different lengths, e.g. [[0, 2], [1]]); "
                f"a multilabel target must be an (n_samples, n_labels) {{0,1}} indicator"
                + _LABEL_LISTS_HINT.format(name=name))
        if not any(nested):
            _check_label_types(items, name)
    return np.asarray(Y)


def _check_label_types(items, name: str) -> None:
    """Class labels must be all numbers or all strings: numpy turns ``[1, "a", 2.5]`` into the
    strings ``['1', 'a', '2.5']`` (or, as objects, cannot sort them)."""
    kinds = {"string" if isinstance(item, (str, bytes)) else "number" if isinstance(item, numbers.Number)
             else type(item).__name__ for item in items}
    if len(kinds) > 1 or not kinds <= {"string", "number"}:
        examples = {}
        for item in items:
            examples.setdefault(type(item).__name__, item)
        shown = ", ".join(f"{value!r} ({kind})" for kind, value in examples.items())
        raise ValueError(f"{name} mixes label types ({shown}); class labels must be all numbers or all strings")


def _is_indicator(array: np.ndarray) -> bool:
    if array.dtype.kind not in "biuf":
        return False
    return bool(np.all((array == 0) | (array == 1)))


def check_X_Y(X, Y) -> tuple[np.ndarray, LabelTarget]:
    """Validate a training pair; ``Y`` must have one row per row of ``X``.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Features.
    Y : array-like
        Indicator or class labels with the same n.
    """
    X = check_X(X, "X")
    return X, check_Y(Y, n_samples=X.shape[0], name="Y")


def check_scalar(value, name: str, *, low=None, high=None, low_open=False, high_open=False,
                 integer=False, explain: str = "") -> float:
    """Check a hyperparameter lies in its domain; the error names it and the interval.

    Parameters
    ----------
    value : object
        The number to check.
    name : str
        Argument name used in the error message.
    low : float or None
        Lower bound.
    high : float or None
        Upper bound.
    low_open : bool
        Exclude the lower bound.
    high_open : bool
        Exclude the upper bound.
    integer : bool
        Require an integer.
    explain : str
        Extra sentence appended to the error message.
    """
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ValueError(f"{name} must be {'an integer' if integer else 'a real number'}; got {value!r}")
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value!r}")
    below = low is not None and (value <= low if low_open else value < low)
    above = high is not None and (value >= high if high_open else value > high)
    if below or above:
        left = "(" if low_open else "["
        right = ")" if high_open else "]"
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        message = f"{name} must lie in {left}{lo}, {hi}{right}; got {value!r}"
        raise ValueError(message + (f". {explain}" if explain else ""))
    return value


def to_signed(Y: np.ndarray) -> np.ndarray:
    """Map a {0,1} indicator to ±1 (``Ys = 2Y − 1``) as float64.

    Parameters
    ----------
    Y : array of shape (n, q)
        Indicator in {0, 1}.
    """
    return 2.0 * np.asarray(Y, dtype=np.float64) - 1.0


@dataclass(frozen=True)
class RankingPairs:
    """All ranking pairs ``(i, k, l)``, ``k ∈ Y_i`` relevant, ``l ∈ Ȳ_i`` irrelevant (SPEC §1).

    Pairs are stored instance by instance: the pairs of instance ``i`` are the slice
    ``offsets[i]:offsets[i + 1]``. ``weight[t] = 1/(|Y_i||Ȳ_i|)`` for the instance of pair t.

    The coefficient ``c^k_{ikl}`` is +1 on the relevant label and −1 on the irrelevant one, so for
    a pair vector ``a`` of length T, ``scatter(a)[i, k] = Σ_{(k,l)} a − Σ_{(l,k)} a``
    (``β_ki`` of Rank-SVM's Problem 10) and ``gather(F)[t] = F[i,k] − F[i,l]``.

    Parameters
    ----------
    instance : array of int, shape (T,)
        Instance i of each pair.
    relevant : array of int, shape (T,)
        Relevant label k of each pair.
    irrelevant : array of int, shape (T,)
        Irrelevant label l of each pair.
    weight : array of shape (T,)
        Pair weight ``1 / (|Y_i||Ȳ_i|)``.
    offsets : array of int, shape (n + 1,)
        Pairs of instance i are ``offsets[i]:offsets[i + 1]``.
    n_samples : int
        Number of instances n.
    n_labels : int
        Number of labels Q.
    without_pairs : array of int
        Instances with all or no labels (they give no pair).
    """

    instance: np.ndarray
    relevant: np.ndarray
    irrelevant: np.ndarray
    weight: np.ndarray
    offsets: np.ndarray
    n_samples: int
    n_labels: int
    without_pairs: np.ndarray

    @property
    def n_pairs(self) -> int:
        return int(self.instance.size)

    @property
    def n_without_pairs(self) -> int:
        """Instances with no relevant or no irrelevant label: they contribute no pairs."""
        return int(self.without_pairs.size)

    @property
    def pair_counts(self) -> np.ndarray:
        """``|Y_i||Ȳ_i|`` per instance (0 for instances without pairs)."""
        return np.diff(self.offsets)

    @cached_property
    def flat_index(self) -> tuple[np.ndarray, np.ndarray]:
        """Row-major positions ``i·q + k`` and ``i·q + l`` of each pair's two entries (1-D
        indexing and ``bincount`` are several times faster than 2-D indexing and ``add.at``)."""
        index = np.int32 if self.n_samples * self.n_labels < 2**31 else np.int64   # n·q may exceed int32
        base = self.instance.astype(index) * index(self.n_labels)
        return base + self.relevant, base + self.irrelevant

    def laplacians(self, weights: np.ndarray, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Per instance i in ``start:stop`` the weighted Laplacian of its pairs,
        ``Λ_i = Σ_{t ∈ i} w_t (e_k − e_l)(e_k − e_l)ᵀ`` (q × q): the block that ``gather`` and
        ``scatter`` put around a diagonal weight, ``scatter(w ∘ gather(F))_i = Λ_i F_i`` per row.

        Parameters
        ----------
        weights : array of shape (T,)
            One weight per pair (all pairs, also those outside ``start:stop``).
        start, stop : int
            The instances whose blocks are formed (stop None: through the last).
        """
        stop = self.n_samples if stop is None else stop
        q = self.n_labels
        span = slice(self.offsets[start], self.offsets[stop])
        row = self.instance[span].astype(np.int64) - start
        k, l, w = self.relevant[span], self.irrelevant[span], np.asarray(weights, dtype=np.float64)[span]
        size = (stop - start) * q * q
        out = np.zeros(size)
        for first, second, sign in ((k, k, 1.0), (l, l, 1.0), (k, l, -1.0), (l, k, -1.0)):
            out += np.bincount((row * q + first) * q + second, sign * w, minlength=size)
        return out.reshape(stop - start, q, q)

    def gather(self, F: np.ndarray) -> np.ndarray:
        """Pair margins ``F[i,k] − F[i,l]`` for an ``(n, q)`` score matrix ``F`` (a flat ``n·q``
        vector is read row-major): one compiled pass over the pairs, no T-sized index temporaries.

        Parameters
        ----------
        F : array of shape (n, q)
            Scores (or any per-instance, per-label values).
        """
        F = np.ascontiguousarray(F, dtype=np.float64).reshape(self.n_samples, self.n_labels)
        out = np.empty(self.n_pairs)
        _gather_pairs(F, self.offsets, self.relevant, self.irrelevant, out)
        return out

    def gather_matrix(self, order: str = "C"):
        """:meth:`gather` as a sparse ``T × nq`` matrix acting on ``vec(F)``: row t has +1 at
        ``(i, k)`` and −1 at ``(i, l)``. ``order="C"`` indexes ``(i, k)`` as ``i·q + k``
        (``F.ravel()``), ``order="F"`` as ``i + n·k`` (CVXPY's ``vec(F, order="F")``)."""
        from scipy.sparse import csr_matrix

        if order not in ("C", "F"):
            raise ValueError(f"order must be 'C' or 'F'; got {order!r}")
        n, q, T = self.n_samples, self.n_labels, self.n_pairs

        def index(label):
            instance = self.instance.astype(np.int64)   # n·q may exceed the int32 indices' range
            return instance * q + label if order == "C" else instance + n * np.asarray(label, dtype=np.int64)

        rows = np.repeat(np.arange(T), 2)
        cols = np.column_stack([index(self.relevant), index(self.irrelevant)]).ravel()
        return csr_matrix((np.tile([1.0, -1.0], T), (rows, cols)), shape=(T, n * q))

    def scatter(self, values: np.ndarray) -> np.ndarray:
        """Adjoint of :meth:`gather`: the ``(n, q)`` matrix ``Σ_t values_t c^k_t`` per instance
        (``+v_t`` at ``(i, k)``, ``−v_t`` at ``(i, l)``; Rank-SVM's β of eq. (13)).

        Parameters
        ----------
        values : array of shape (T,)
            One value per pair.
        """
        values = np.ascontiguousarray(values, dtype=np.float64).ravel()
        if values.size != self.n_pairs:
            raise ValueError(f"scatter needs one value per pair: {self.n_pairs} entries; got {values.size}")
        out = np.zeros((self.n_samples, self.n_labels))
        _scatter_pairs(values, self.offsets, self.relevant, self.irrelevant, out)
        return out


@compiled
def _gather_pairs(F, offsets, relevant, irrelevant, out):
    """``out[t] = F[i, k] − F[i, l]`` for the pairs ``t = (i, k, l)`` (instance i's in ``offsets[i]:offsets[i + 1]``)."""
    for i in range(offsets.size - 1):
        for t in range(offsets[i], offsets[i + 1]):
            out[t] = F[i, relevant[t]] - F[i, irrelevant[t]]


@compiled
def _scatter_pairs(values, offsets, relevant, irrelevant, out):
    """``out[i, k] += v_t``, ``out[i, l] −= v_t`` for the pairs ``t = (i, k, l)`` (adjoint of :func:`_gather_pairs`)."""
    for i in range(offsets.size - 1):
        for t in range(offsets[i], offsets[i + 1]):
            out[i, relevant[t]] += values[t]
            out[i, irrelevant[t]] -= values[t]


def ranking_pairs(Y, *, require_pairs: bool = True) -> RankingPairs:
    """Build the ranking-pair index arrays from an ``(n, q)`` {0,1} indicator.

    Raises ``ValueError`` when ``require_pairs`` and no instance gives a pair (every instance has
    all labels or none): a ranking model has nothing to learn then.

    Parameters
    ----------
    Y : array-like of shape (n, Q)
        Label indicator.
    require_pairs : bool
        Raise ``ValueError`` when Y gives no pair at all.
    """
    Y = check_Y(Y, name="Y").Y.astype(bool)
    n, q = Y.shape
    n_relevant = Y.sum(axis=1)
    counts = n_relevant * (q - n_relevant)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    total = int(offsets[-1])
    if require_pairs and total == 0:
        raise ValueError(
            "Y gives no ranking pairs: every instance has either all labels or none "
            f"({n} instances, {q} labels); a ranking model needs at least one instance with both "
            "a relevant and an irrelevant label")
    # int32 indices (4 bytes a pair each, against 8) whenever n and q fit: T reaches millions
    index = np.int32 if max(n, q) < 2**31 else np.int64
    instance = np.repeat(np.arange(n, dtype=index), counts)
    relevant = np.empty(total, dtype=index)
    irrelevant = np.empty(total, dtype=index)
    for i in np.flatnonzero(counts):
        pos = np.flatnonzero(Y[i])
        neg = np.flatnonzero(~Y[i])
        relevant[offsets[i]:offsets[i + 1]] = np.repeat(pos, neg.size)
        irrelevant[offsets[i]:offsets[i + 1]] = np.tile(neg, pos.size)
    weight = 1.0 / counts[instance].astype(np.float64)
    return RankingPairs(
        instance=instance, relevant=relevant, irrelevant=irrelevant, weight=weight,
        offsets=offsets, n_samples=n, n_labels=q, without_pairs=np.flatnonzero(counts == 0),
    )
