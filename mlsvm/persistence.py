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
import zipfile
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix, issparse

__all__ = ["FORMAT_VERSION", "ModelFileError", "save_model", "load_model", "atomic_write"]

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


def _encode(value, arrays: dict, key: str):
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
            return arrays[value[_ARRAY]]
        if _CSR in value:
            data, indices, indptr = (_decode(part, arrays) for part in value[_CSR])
            return csr_matrix((data, indices, indptr), shape=tuple(value["shape"]))
        if _DATACLASS in value:
            kind = tuple(value[_DATACLASS])
            if kind not in _ALLOWED_DATACLASSES:
                raise ModelFileError(f"model file names a type that is not allowed: {kind}")
            cls = getattr(importlib.import_module(kind[0]), kind[1])
            return cls(**{k: _decode(v, arrays) for k, v in value["fields"].items()})
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

    Parameters
    ----------
    path : str or Path
        A file written by :func:`save_model` (loaded without pickle).
    """
    from mlsvm import _ESTIMATORS

    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise ModelFileError(f"{path} is not a readable mlsvm model file ({exc})") from None
    try:
        meta = json.loads(arrays.pop("__meta__").tobytes().decode("utf-8"))
    except (KeyError, ValueError, UnicodeDecodeError):
        raise ModelFileError(f"{path} has no valid mlsvm metadata: not an mlsvm model or corrupt") from None
    if meta.get("format") != "mlsvm-model":
        raise ModelFileError(f"{path} is not an mlsvm model file")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(f"{path} has format version {meta.get('format_version')}; this mlsvm reads "
                             f"version {FORMAT_VERSION} (saved by mlsvm {meta.get('mlsvm_version')})")
    name = meta.get("estimator")
    if name not in _ESTIMATORS:
        raise ModelFileError(f"{path} names an unknown estimator {name!r}")
    try:
        cls = getattr(importlib.import_module(_ESTIMATORS[name]), name)
        estimator = cls(**{k: _decode(v, arrays) for k, v in meta["params"].items()})
        for key, value in meta["state"].items():
            setattr(estimator, key, _decode(value, arrays))
    except (KeyError, TypeError, ValueError) as exc:   # ValueError: inconsistent CSR arrays
        raise ModelFileError(f"{path} is corrupt: {exc}") from None
    return estimator
