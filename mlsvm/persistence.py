"""Saving and loading fitted estimators without pickle.

A saved model is one ``.npz`` file (``numpy.savez``, loaded with ``allow_pickle=False``) holding
every fitted array, plus one JSON document (stored in the same archive under ``__meta__``) with
the format version, the estimator class, its hyperparameters and the non-array fitted state.
Only mlsvm's own estimator classes and a whitelist of its dataclasses are ever instantiated, so
loading a file runs no code from it. Files are written to a temporary name and renamed: a crash
never leaves half a model.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["FORMAT_VERSION", "ModelFileError", "save_model", "load_model", "atomic_write", "check_writable"]

FORMAT_VERSION = 1
_ARRAY = "__array__"
_DATACLASS = "__dataclass__"
_CSR = "__csr__"   # a sparse matrix (X_fit_ of a fit on sparse X) as its CSR arrays and shape

#: dataclasses a saved model may contain (module, name); nothing else is instantiated on load
_ALLOWED_DATACLASSES = {
    ("mlsvm.kernels", "Kernel"),
    ("mlsvm.threshold", "ThresholdPredictor"),
    ("mlsvm.report", "FitReport"),
}


class ModelFileError(ValueError):
    """A model file that is not an mlsvm model, is corrupt, or has another format version."""


def atomic_write(path, write) -> None:
    """Call ``write(handle)`` on a temporary file beside ``path``, then rename it to ``path``.

    Parameters
    ----------
    path : str or Path
        Destination file.
    write : callable
        Called with a temporary path to write to; the file is moved into place only if it succeeds.
    """
    path = Path(path)
    check_writable(path)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)   # mkstemp makes 0600; a saved file gets the usual mode
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def check_writable(path) -> Path:
    """Check that a file can be written at ``path`` (before any work is spent on its content): not
    empty, not a directory, its directory exists and a file can be created in it (tried). The
    errors name ``path`` (:func:`atomic_write` writes a temporary file beside it, whose name would
    mean nothing).

    Parameters
    ----------
    path : str or Path
        The file to be written.

    Returns
    -------
    Path
        ``path``, as a :class:`~pathlib.Path`.
    """
    if str(path) == "":
        raise ValueError("the output file name is empty")
    path = Path(path)
    folder = path.parent
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory; expected a file name (e.g. {path / 'model.npz'})")
    if not folder.is_dir():
        what = "is not a directory" if folder.exists() else "does not exist"
        raise FileNotFoundError(f"cannot write {path}: the directory {folder} {what}")
    if path.exists() and not os.access(path, os.W_OK):
        raise PermissionError(f"cannot write {path}: the file exists and is read-only")
    try:   # the real test (permissions, ACLs, read-only file systems, root): create a file there
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise PermissionError(f"cannot write {path}: cannot create files in {folder} ({exc.strerror})") from None
    return path


def _encode(value, arrays: dict, key: str):
    from scipy.sparse import issparse   # here, not at the top: the CLI checks outputs with numpy only

    if issparse(value):
        value = value.tocsr()
        return {_CSR: [_encode(part, arrays, key) for part in (value.data, value.indices, value.indptr)],
                "shape": list(value.shape)}
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            value = value.astype(str)
        name = f"a{len(arrays)}"
        arrays[name] = value
        return {_ARRAY: name}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = (type(value).__module__, type(value).__name__)
        if kind not in _ALLOWED_DATACLASSES:
            raise TypeError(f"cannot save {key}: {kind[0]}.{kind[1]} is not a savable type")
        fields = {f.name: _encode(getattr(value, f.name), arrays, f"{key}.{f.name}") for f in dataclasses.fields(value)}
        return {_DATACLASS: list(kind), "fields": fields}
    if isinstance(value, dict):
        return {"__dict__": {str(k): _encode(v, arrays, f"{key}[{k}]") for k, v in value.items()}}
    if isinstance(value, (list, tuple)):
        return {"__list__": [_encode(v, arrays, f"{key}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, (np.generic,)):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot save {key}: values of type {type(value).__name__} are not supported")


def _decode(value, arrays):
    if isinstance(value, dict):
        if _ARRAY in value:
            if value[_ARRAY] not in arrays:
                raise ModelFileError(f"model file refers to an array {value[_ARRAY]!r} it does not hold")
            return arrays[value[_ARRAY]]
        if _CSR in value:
            from scipy.sparse import csr_matrix

            data, indices, indptr = (_decode(part, arrays) for part in value[_CSR])
            return csr_matrix((data, indices, indptr), shape=tuple(value["shape"]))
        if _DATACLASS in value:
            kind = tuple(value[_DATACLASS])
            if kind not in _ALLOWED_DATACLASSES:
                raise ModelFileError(f"model file names a type that is not allowed: {kind}")
            try:
                cls = getattr(importlib.import_module(kind[0]), kind[1])
            except (ImportError, AttributeError):
                raise ModelFileError(f"model file names {kind[0]}.{kind[1]}, which this mlsvm does not have") from None
            fields = {k: _decode(v, arrays) for k, v in value["fields"].items()}
            unknown = sorted(set(fields) - {f.name for f in dataclasses.fields(cls)})
            if unknown:
                raise ModelFileError(f"model file gives {kind[1]} fields {unknown} that this mlsvm does not have")
            return cls(**fields)
        if "__dict__" in value:
            return {k: _decode(v, arrays) for k, v in value["__dict__"].items()}
        if "__list__" in value:
            return [_decode(v, arrays) for v in value["__list__"]]
    return value


def save_model(estimator, path) -> Path:
    """Save a fitted mlsvm estimator to ``path`` (``.npz``), atomically.

    Parameters
    ----------
    estimator : estimator
        A fitted mlsvm estimator.
    path : str or Path
        Destination ``.npz`` file.
    """
    from mlsvm import _ESTIMATORS

    name = type(estimator).__name__
    if _ESTIMATORS.get(name) != type(estimator).__module__:
        raise TypeError(f"estimator must be one of mlsvm's {sorted(_ESTIMATORS)}; got {name}")
    if not hasattr(estimator, "fit_report_"):
        raise ValueError(f"{name} is not fitted: call fit before save_model")
    arrays: dict = {}
    state = {k: _encode(v, arrays, k) for k, v in vars(estimator).items() if k.endswith("_") or k.startswith("_") and not k.startswith("__")}
    params = {k: _encode(v, arrays, k) for k, v in estimator.get_params(deep=False).items()}
    from mlsvm import __version__

    meta = {"format": "mlsvm-model", "format_version": FORMAT_VERSION, "mlsvm_version": __version__,
            "estimator": name, "params": params, "state": state}
    path = Path(path)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    atomic_write(path, lambda handle: np.savez(handle, **arrays))
    return path


def load_model(path):
    """Load a model saved by :func:`save_model`; a clear :class:`ModelFileError` otherwise.

    The loaded model is checked like a fresh estimator: its hyperparameters pass the checks ``fit``
    runs on them, the kernel they give is the saved one, its fitted arrays are finite numbers, and
    it predicts, with finite decision values, on a probe point, so a corrupt or hand-edited file
    fails here, with a message, and not at the first ``predict``.

    Parameters
    ----------
    path : str or Path
        A file written by :func:`save_model` (loaded without pickle).
    """
    from mlsvm import _ESTIMATORS

    path = Path(path)
    arrays = _read_archive(path)
    try:
        meta = json.loads(arrays.pop("__meta__").tobytes().decode("utf-8"))
    except (KeyError, ValueError, UnicodeDecodeError):
        raise ModelFileError(f"{path} has no valid mlsvm metadata: not an mlsvm model or corrupt") from None
    if not isinstance(meta, dict) or meta.get("format") != "mlsvm-model":
        raise ModelFileError(f"{path} is not an mlsvm model file")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(f"{path} has format version {meta.get('format_version')}; this mlsvm reads "
                             f"version {FORMAT_VERSION} (saved by mlsvm {meta.get('mlsvm_version')})")
    name = meta.get("estimator")
    saved_by = f"saved by mlsvm {meta.get('mlsvm_version')}, this is {_version()}"
    if name not in _ESTIMATORS:
        raise ModelFileError(f"{path} names an unknown estimator {name!r} ({saved_by}); known: {sorted(_ESTIMATORS)}")
    try:
        cls = getattr(importlib.import_module(_ESTIMATORS[name]), name)
    except (ImportError, AttributeError):
        raise ModelFileError(f"{path} names the estimator {name!r}, which this mlsvm cannot import "
                             f"({saved_by})") from None
    if not isinstance(meta.get("params"), dict) or not isinstance(meta.get("state"), dict):
        raise ModelFileError(f"{path} is corrupt: its metadata lacks the params or the fitted state")
    unknown = sorted(set(meta["params"]) - set(cls().get_params(deep=False)))
    if unknown:
        raise ModelFileError(f"{path} gives {name} hyperparameters {unknown} that it does not have ({saved_by})")
    try:
        estimator = cls(**{k: _decode(v, arrays) for k, v in meta["params"].items()})
        for key, value in meta["state"].items():
            _check_state_name(cls, key)
            setattr(estimator, key, _decode(value, arrays))
    except (KeyError, TypeError, ValueError) as exc:   # ValueError: inconsistent CSR arrays
        raise ModelFileError(f"{path} is corrupt: {exc}") from None
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    _check_loaded(estimator, path)
    return estimator


def _version() -> str:
    from mlsvm import __version__

    return __version__


def _read_archive(path: Path) -> dict:
    """Every array of the ``.npz`` at ``path``; never unpickles (a file that holds pickled objects
    is reported as not a model: mlsvm model files hold plain arrays only)."""
    if not path.exists():
        raise FileNotFoundError(f"model file not found: {path}")
    if path.is_dir():
        raise ModelFileError(f"{path} is a directory, not an mlsvm model file (.npz)")
    from mlsvm.data import read_npz

    return read_npz(path, "mlsvm model file", ModelFileError,
                    " (models are .npz files written by save_model or 'mlsvm fit --out')")


def _check_state_name(cls, key: str) -> None:
    """Fitted state is what :func:`save_model` writes: ``name_`` or ``_name`` attributes, none of
    which may hide a method or a hyperparameter of the class."""
    if not isinstance(key, str) or not (key.endswith("_") or key.startswith("_")) or key.startswith("__"):
        raise ModelFileError(f"fitted attribute {key!r} is not a fitted-state name")
    if callable(getattr(cls, key, None)) or isinstance(getattr(cls, key, None), property):
        raise ModelFileError(f"fitted attribute {key!r} would hide {cls.__name__}.{key}")


def _check_loaded(estimator, path: Path) -> None:
    """Validate a loaded model as :meth:`fit` validates a fresh one, then probe it."""
    from scipy.sparse import issparse

    from mlsvm.kernels import make_kernel
    from mlsvm.report import FitReport

    name = type(estimator).__name__
    for attribute in ("fit_report_", "kernel_", "n_features_in_", "n_labels_", "classes_", "X_fit_"):
        if not hasattr(estimator, attribute):
            raise ModelFileError(f"{path} is corrupt: the fitted {name} has no {attribute}")
    if not isinstance(estimator.fit_report_, FitReport):
        raise ModelFileError(f"{path} is corrupt: fit_report_ is not a FitReport")
    try:
        _check_hyperparameters(estimator)
        kernel = make_kernel(estimator.kernel, estimator.gamma, estimator.degree, estimator.coef0, estimator.X_fit_)
    except (ValueError, TypeError) as exc:
        raise ModelFileError(f"{path} holds a {name} with an invalid hyperparameter: {exc}") from None
    if kernel != estimator.kernel_:
        raise ModelFileError(f"{path} is inconsistent: its hyperparameters give the kernel {kernel}, "
                             f"but the fitted model holds {estimator.kernel_}")
    n_features = estimator.n_features_in_
    if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 1:
        raise ModelFileError(f"{path} is corrupt: n_features_in_ = {n_features!r}")
    for key, value in vars(estimator).items():
        values = value.data if issparse(value) else value
        if not isinstance(values, np.ndarray) or key == "classes_":   # class labels may be strings
            continue
        if values.dtype.kind not in "biuf":
            raise ModelFileError(f"{path} is corrupt: its fitted array {key} holds {values.dtype} values, not numbers")
        if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
            raise ModelFileError(f"{path} is corrupt: its fitted array {key} holds NaN or infinite values "
                                 "(a fitted model has none)")
    probe = np.zeros((1, n_features))
    try:   # decision values that overflow are a ValueError of their own
        estimator.decision_function(probe)
        estimator.predict(probe)
    except (ValueError, TypeError, IndexError, AttributeError, KeyError) as exc:
        raise ModelFileError(f"{path} is corrupt: its fitted arrays do not fit together "
                             f"({type(exc).__name__}: {exc})") from None


def _check_hyperparameters(estimator) -> None:
    """The checks ``fit`` runs on the hyperparameters, for a model not fitted in this process.

    They live inside each estimator's fit (mixed with the data); here they are called one by one,
    through the same check functions, with the data-dependent bounds taken from the fitted model
    (number of labels or classes, of training points).
    """
    from mlsvm.data import check_scalar
    from mlsvm.estimators._base import check_solver
    from mlsvm.solvers.cvxpy_tools import check_backend

    check_solver(estimator.solver, type(estimator).solver_names())
    if hasattr(estimator, "cvxpy_solver"):
        check_backend(estimator.cvxpy_solver)
    check_scalar(estimator.tol, "tol", low=0.0, low_open=True)
    if estimator.max_iter is not None:   # None: each solver's own budget, as fit allows it
        check_scalar(estimator.max_iter, "max_iter", low=1, integer=True)
    name, n_labels = type(estimator).__name__, estimator.n_labels_
    if name in ("RankSVM", "BinaryApproachSVM", "CategoricalRegressionSVM", "MatrixSVM"):
        check_scalar(estimator.C, "C", low=0.0, low_open=True)
    if name == "BinaryApproachSVM":
        from mlsvm.estimators.rank_binary import DECODINGS

        if estimator.decoding not in DECODINGS:
            raise ValueError(f"decoding must be one of {DECODINGS}; got {estimator.decoding!r}")
    elif name == "MatrixSVM":
        from mlsvm.formulations import matrix_svm

        if estimator.loss not in matrix_svm.LOSSES:
            raise ValueError(f"loss must be one of {matrix_svm.LOSSES}; got {estimator.loss!r}")
        matrix_svm.check_correlation(estimator.correlation, n_labels)
    elif name == "MLODM":
        from mlsvm.formulations.mlodm import check_hyperparameters
        from mlsvm.solvers.mlodm_bcd import SUBPROBLEMS

        check_hyperparameters(estimator.C, estimator.theta, estimator.mu)
        if estimator.subproblem not in SUBPROBLEMS:
            raise ValueError(f"subproblem must be one of {SUBPROBLEMS}; got {estimator.subproblem!r}")
    elif name == "OvNSVM":   # the formulation's Problem validates itself; a K × K stand-in suffices
        from mlsvm.formulations import ovn

        check_scalar(estimator.epsilon, "epsilon", low=0.0, low_open=True)
        ovn.OvNProblem(np.eye(n_labels), np.eye(n_labels, dtype=np.int8), float(estimator.alpha),
                       float(estimator.beta), estimator.w_constraint, estimator.b_constraint,
                       float(estimator.gamma_b))
    elif name in ("SMSVM", "SM3L"):
        n_train = estimator.n_features_in_ if estimator.X_fit_ is None else estimator.X_fit_.shape[0]
        check_scalar(estimator.lam, "lam", low=0.0, low_open=True)
        if estimator.d_max is not None:
            check_scalar(estimator.d_max, "d_max", low=1, high=n_train, integer=True)
        check_scalar(estimator.kappa, "kappa", low=1, integer=True)
        check_scalar(estimator.min_rel_decrease, "min_rel_decrease", low=0.0)
        estimator._correlation(n_labels)
