"""MULAN ARFF loading, the reference datasets, and seeded built-in problems (SPEC §5).

A MULAN file is an ARFF file whose last ``q`` attributes are the labels, declared ``{0,1}``.
Dense and sparse (``{index value, ...}``) data sections are read. The reference data lives in
``../shared/datasets`` (or the directory named by ``MLSVM_DATASETS``); the package never ships it.
"""

from __future__ import annotations

import os
import re
import shlex
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlsvm.data import check_scalar

__all__ = [
    "MultilabelData", "load_arff", "find_datasets_dir", "load_emotions", "load_yeast",
    "make_multilabel", "make_multiclass", "load_file", "DATASETS_ENV",
]

DATASETS_ENV = "MLSVM_DATASETS"


@dataclass(frozen=True)
class MultilabelData:
    """Features ``X`` (n, d), labels ``Y`` (n, q) in {0,1}, and their names."""

    X: np.ndarray
    Y: np.ndarray
    feature_names: list
    label_names: list
    name: str = ""


class ArffError(ValueError):
    """A malformed ARFF file; the message names the file and the line."""


_ATTRIBUTE = re.compile(r"@attribute\s+('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S+)\s+(.+)$", re.IGNORECASE)


def load_arff(path, n_labels: int) -> MultilabelData:
    """Read a MULAN ARFF file whose last ``n_labels`` attributes are the {0,1} labels."""
    path = Path(path)
    check_scalar(n_labels, "n_labels", low=1, integer=True)
    if not path.is_file():
        raise FileNotFoundError(f"ARFF file not found: {path}")
    names, kinds, rows = [], [], []
    in_data = False
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.strip()
            if not line or line.startswith("%"):
                continue
            if not in_data:
                lower = line.lower()
                if lower.startswith("@relation"):
                    continue
                if lower.startswith("@attribute"):
                    match = _ATTRIBUTE.match(line)
                    if match is None:
                        raise ArffError(f"{path}:{number}: malformed @attribute line: {line[:80]!r}")
                    names.append(match.group(1).strip("'\""))
                    kinds.append(match.group(2).strip())
                    continue
                if lower.startswith("@data"):
                    in_data = True
                    continue
                raise ArffError(f"{path}:{number}: unexpected header line: {line[:80]!r}")
            rows.append(_parse_row(line, len(names), path, number))
    if not in_data:
        raise ArffError(f"{path}: no @data section")
    if n_labels >= len(names):
        raise ArffError(f"{path}: n_labels={n_labels} but the file has only {len(names)} attributes")
    _check_label_block(path, names, kinds, n_labels)
    for name, kind in zip(names[-n_labels:], kinds[-n_labels:]):
        if kind.replace(" ", "") not in ("{0,1}", "{1,0}") and kind.lower() not in ("numeric", "integer", "real"):
            raise ArffError(f"{path}: label attribute {name!r} is declared {kind!r}; expected {{0,1}}")
    if not rows:
        raise ArffError(f"{path}: the @data section is empty")
    data = np.vstack(rows)
    X, Y = data[:, :-n_labels], data[:, -n_labels:]
    if not np.all(np.isfinite(X)):
        raise ArffError(f"{path}: missing or non-numeric feature values")
    if not np.all((Y == 0) | (Y == 1)):
        raise ArffError(f"{path}: label columns contain values other than 0 and 1 (is n_labels={n_labels} right?)")
    return MultilabelData(X, Y.astype(np.int8), names[:-n_labels], names[-n_labels:], path.stem)


def _parse_row(line: str, width: int, path: Path, number: int) -> np.ndarray:
    row = np.zeros(width)
    if line.startswith("{"):
        if not line.endswith("}"):
            raise ArffError(f"{path}:{number}: unterminated sparse row")
        for item in filter(None, (part.strip() for part in line[1:-1].split(","))):
            try:
                index, value = item.split(None, 1)
                row[int(index)] = _value(value)
            except (ValueError, IndexError):
                raise ArffError(f"{path}:{number}: malformed sparse entry {item!r}") from None
        return row
    values = line.split(",") if "'" not in line and '"' not in line else shlex.split(line.replace(",", " "))
    if len(values) != width:
        raise ArffError(f"{path}:{number}: {len(values)} values for {width} attributes")
    try:
        return np.array([_value(value) for value in values])
    except ValueError:
        raise ArffError(f"{path}:{number}: a value is not numeric") from None


def _value(text: str) -> float:
    text = text.strip().strip("'\"")
    return np.nan if text == "?" else float(text)


def _check_label_block(path: Path, names: list, kinds: list, n_labels: int) -> None:
    """Warn when the file's declarations place the labels elsewhere than ``n_labels`` says.

    MULAN declares labels ``{0,1}``. When the run of ``{0,1}`` attributes that ends the file is
    longer than ``n_labels`` and follows a non-{0,1} attribute (yeast: 103 numeric features, then
    14 labels), ``n_labels`` would read the first attributes of that run, labels by their
    declaration, as features: a warning names them. It is not an error: binary features may end a
    feature block. A file that is {0,1} throughout (bibtex: binary features) says nothing either way.
    """
    binary = [kind.replace(" ", "") in ("{0,1}", "{1,0}") for kind in kinds]
    run = next((i for i, is_binary in enumerate(reversed(binary)) if not is_binary), len(binary))
    if n_labels < run < len(binary):
        as_features = names[-run:-n_labels]
        shown = ", ".join(repr(name) for name in as_features[:5]) + (", ..." if len(as_features) > 5 else "")
        warnings.warn(f"{path}: the last {run} attributes are declared {{0,1}} after non-binary features, but "
                      f"n_labels={n_labels}: {len(as_features)} of them ({shown}) are read as features. "
                      f"If they are labels, pass n_labels={run}.", UserWarning, stacklevel=3)


def find_datasets_dir() -> Path | None:
    """``$MLSVM_DATASETS`` if set, else the first ``shared/datasets`` found beside the working
    directory or the package's checkout (``../shared/datasets``); ``None`` when neither exists."""
    override = os.environ.get(DATASETS_ENV)
    if override:
        return Path(override)
    here = Path(__file__).resolve().parent
    for base in (Path.cwd(), *Path.cwd().parents, here.parent, *here.parent.parents):
        candidate = base / "shared" / "datasets"
        if candidate.is_dir():
            return candidate
    return None


def _dataset_path(filename: str) -> Path:
    directory = find_datasets_dir()
    if directory is None or not (directory / filename).is_file():
        raise FileNotFoundError(
            f"{filename} not found: put the MULAN datasets in ../shared/datasets or set "
            f"{DATASETS_ENV} to their directory")
    return directory / filename


def load_emotions() -> MultilabelData:
    """MULAN emotions: 593 × 72, 6 labels (the full set; no standard split ships with it)."""
    return load_arff(_dataset_path("emotions.arff"), n_labels=6)


def load_yeast(subset: str = "train") -> MultilabelData:
    """MULAN yeast, the standard split: ``"train"`` 1500 × 103 or ``"test"`` 917 × 103; 14 labels."""
    if subset not in ("train", "test"):
        raise ValueError(f"subset must be 'train' or 'test'; got {subset!r}")
    return load_arff(_dataset_path(f"yeast-{subset}.arff"), n_labels=14)


def make_multilabel(n_samples=60, n_features=5, n_labels=4, *, noise=0.1, random_state=0) -> MultilabelData:
    """A seeded multilabel problem: label k is on when a random linear score exceeds its quantile.

    Label cardinality is about ``n_labels / 3``; ``noise`` flips that fraction of entries, so the
    problem is not separable and every solver meets active and inactive constraints.
    """
    check_scalar(n_samples, "n_samples", low=2, integer=True)
    check_scalar(n_features, "n_features", low=1, integer=True)
    check_scalar(n_labels, "n_labels", low=1, integer=True)
    check_scalar(noise, "noise", low=0.0, high=1.0)
    rng = np.random.default_rng(random_state)
    X = rng.standard_normal((n_samples, n_features))
    scores = X @ rng.standard_normal((n_features, n_labels)) + 0.3 * rng.standard_normal((n_samples, n_labels))
    Y = (scores > np.quantile(scores, 2.0 / 3.0, axis=0)).astype(np.int8)
    flip = rng.random(Y.shape) < noise
    Y[flip] = 1 - Y[flip]
    return MultilabelData(X, Y, [f"x{j}" for j in range(n_features)], [f"y{k}" for k in range(n_labels)],
                          f"synthetic-multilabel(n={n_samples},d={n_features},q={n_labels},seed={random_state})")


def make_multiclass(n_samples=60, n_features=4, n_classes=3, *, random_state=0):
    """A seeded multiclass problem: Gaussian blobs, overlapping a little. Returns ``(X, y)``."""
    check_scalar(n_classes, "n_classes", low=2, integer=True)
    rng = np.random.default_rng(random_state)
    centers = 2.0 * rng.standard_normal((n_classes, n_features))
    y = np.arange(n_samples) % n_classes
    X = centers[y] + rng.standard_normal((n_samples, n_features))
    return X, y


def load_file(path, n_labels: int | None = None) -> MultilabelData:
    """Load training or test data by extension: ``.arff`` (MULAN, needs ``n_labels``), ``.npz``
    (arrays ``X`` and ``Y``) or ``.csv`` (numeric, comma-separated, an optional header line; the
    last ``n_labels`` columns are the labels)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npz":
        with np.load(path, allow_pickle=False) as archive:
            if "X" not in archive.files or "Y" not in archive.files:
                raise ValueError(f"{path} must contain arrays 'X' and 'Y'; found {archive.files}")
            X, Y = archive["X"], archive["Y"]
        Y = Y[:, None] if Y.ndim == 1 else Y
        return MultilabelData(X, Y, [f"x{j}" for j in range(X.shape[1])], [f"y{k}" for k in range(Y.shape[1])], path.stem)
    if n_labels is None:
        raise ValueError(f"n_labels (--labels) is required to read {path.name}: the last n_labels columns are the labels")
    if suffix == ".arff":
        return load_arff(path, n_labels)
    if suffix == ".csv":
        check_scalar(n_labels, "n_labels", low=1, integer=True)
        with path.open() as handle:
            first = handle.readline()
        header = any(c.isalpha() for c in first.replace("e", "").replace("E", ""))
        table = np.loadtxt(path, delimiter=",", skiprows=1 if header else 0, ndmin=2)
        names = [name.strip() for name in first.split(",")] if header else [f"c{j}" for j in range(table.shape[1])]
        if n_labels >= table.shape[1]:
            raise ValueError(f"{path}: n_labels={n_labels} but the file has {table.shape[1]} columns")
        return MultilabelData(table[:, :-n_labels], table[:, -n_labels:], names[:-n_labels], names[-n_labels:], path.stem)
    raise ValueError(f"unsupported data file {path.name}: expected .arff, .npz or .csv")
