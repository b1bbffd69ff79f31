"""MULAN ARFF loading, the reference datasets, and seeded built-in problems (SPEC §5).

A MULAN file is an ARFF file whose last ``q`` attributes are the labels, declared ``{0,1}``.
Dense and sparse (``{index value, ...}``) data sections are read; a sparse file gives a CSR ``X``
built from its entries, never through a dense array (bibtex: 7395 × 1836, 0.35 % non-zero).

emotions and yeast (train, test) ship inside the package as compressed ``.npz`` files
(``mlsvm/data_files/``, written by ``tools/bundle_datasets.py`` from the MULAN ARFF files and
equal to what :func:`load_arff` reads from them), so :func:`load_emotions` and :func:`load_yeast`
work right after ``pip install``. Larger sets (bibtex) are read from a path, ``$MLSVM_DATASETS``
or ``../shared/datasets``; docs/datasets.md says where MULAN publishes them.
"""

from __future__ import annotations

import os
import re
import shlex
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix, issparse

from mlsvm.data import check_scalar, read_npz

__all__ = [
    "MultilabelData", "ArffError", "load_arff", "find_datasets_dir", "load_emotions", "load_yeast",
    "load_bibtex", "make_multilabel", "make_multiclass", "load_file", "DATASETS_ENV", "MULAN_URL",
    "BIBTEX_TRAIN_SIZE",
]

DATASETS_ENV = "MLSVM_DATASETS"
#: where MULAN publishes its multilabel datasets
MULAN_URL = "https://mulan.sourceforge.net/datasets-mlc.html"
#: bibtex ships as one file; this project takes its first 4880 rows as the training set and the
#: other 2515 as the test set (the sizes of MULAN's bibtex-train / bibtex-test split)
BIBTEX_TRAIN_SIZE = 4880


@dataclass(frozen=True)
class MultilabelData:
    """Features ``X`` (n, d) — a dense array, or a CSR matrix for sparse data —, labels ``Y``
    (n, q) in {0,1} (dense int8), and their names.

    Parameters
    ----------
    X : array or sparse matrix of shape (n, d)
        Features.
    Y : array of shape (n, q)
        Label indicator.
    feature_names : list of str
        Attribute names of the features.
    label_names : list of str
        Attribute names of the labels.
    name : str
        Data set name.
    """

    X: np.ndarray | csr_matrix
    Y: np.ndarray
    feature_names: list
    label_names: list
    name: str = ""


class ArffError(ValueError):
    """A malformed ARFF file; the message names the file and the line."""


_ATTRIBUTE = re.compile(r"@attribute\s+('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S+)\s+(.+)$", re.IGNORECASE)


def load_arff(path, n_labels: int, *, sparse: bool | None = None) -> MultilabelData:
    """Read a MULAN ARFF file whose last ``n_labels`` attributes are the {0,1} labels.

    ``sparse``: ``None`` (default) returns a CSR ``X`` when the data section has sparse rows
    (``{index value, ...}``) and a dense array otherwise; ``True`` / ``False`` force CSR / dense.
    Rows are collected as (index, value) lists, so a sparse file is never expanded densely unless
    ``sparse=False`` asks for it. Sparse rows may list indices in any order, hold explicit zeros or
    be empty (``{}``); a repeated or out-of-range index is an error naming the file and line.

    Parameters
    ----------
    path : str or Path
        ARFF file (MULAN: the labels are the last attributes).
    n_labels : int
        Number of label attributes q.
    sparse : bool or None
        Return X as CSR (True), dense (False) or as the file is written (None).
    """
    path = Path(path)
    check_scalar(n_labels, "n_labels", low=1, integer=True)
    if sparse not in (None, True, False):
        raise ValueError(f"sparse must be None (auto), True or False; got {sparse!r}")
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory; load_arff reads one ARFF file")
    if not path.is_file():
        raise FileNotFoundError(f"ARFF file not found: {path}")
    names, kinds = [], []
    rows = _Rows()
    in_data = False
    # utf-8-sig: a byte-order mark (written by some editors) is not part of the first line
    with path.open("r", encoding="utf-8-sig", errors="replace") as handle:
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
            if line.startswith("{"):
                rows.add_sparse(*_parse_sparse_row(line, len(names), path, number))
            else:
                rows.add_dense(_parse_row(line, len(names), path, number))
    if not in_data:
        raise ArffError(f"{path}: no @data section")
    if n_labels >= len(names):
        raise ArffError(f"{path}: n_labels={n_labels} but the file has only {len(names)} attributes")
    _check_label_block(path, names, kinds, n_labels)
    for name, kind in zip(names[-n_labels:], kinds[-n_labels:]):
        if kind.replace(" ", "") not in ("{0,1}", "{1,0}") and kind.lower() not in ("numeric", "integer", "real"):
            raise ArffError(f"{path}: label attribute {name!r} is declared {kind!r}; expected {{0,1}}")
    if not rows.count:
        raise ArffError(f"{path}: the @data section is empty")
    n_features = len(names) - n_labels
    X, Y = rows.split(n_features, len(names), sparse=rows.any_sparse if sparse is None else sparse)
    if not np.all(np.isfinite(X.data if issparse(X) else X)):
        raise ArffError(f"{path}: missing or non-numeric feature values")
    if not np.all((Y == 0) | (Y == 1)):
        raise ArffError(f"{path}: label columns contain values other than 0 and 1 (is n_labels={n_labels} right?)")
    return MultilabelData(X, Y.astype(np.int8), names[:-n_labels], names[-n_labels:], path.stem)


class _Rows:
    """The data section as read: dense rows (full arrays) and sparse rows ((index, value) arrays),
    in file order; :meth:`split` assembles ``X`` (dense or CSR) and the dense label block ``Y``."""

    def __init__(self):
        self.rows = []   # each: ndarray (dense row) or (indices, values)
        self.any_sparse = False

    @property
    def count(self) -> int:
        return len(self.rows)

    def add_dense(self, row: np.ndarray) -> None:
        self.rows.append(row)

    def add_sparse(self, indices: np.ndarray, values: np.ndarray) -> None:
        self.rows.append((indices, values))
        self.any_sparse = True

    def _entries(self, width: int):
        """Every row as (indices, values), sorted by index, zeros of dense rows left out."""
        for row in self.rows:
            if isinstance(row, tuple):
                yield row
            else:
                where = np.flatnonzero(row)
                yield where, row[where]

    def split(self, n_features: int, width: int, *, sparse: bool):
        n = len(self.rows)
        Y = np.zeros((n, width - n_features))
        if not sparse:
            X = np.zeros((n, n_features))
            for i, row in enumerate(self.rows):
                if isinstance(row, tuple):
                    indices, values = row
                    features = indices < n_features
                    X[i, indices[features]] = values[features]
                    Y[i, indices[~features] - n_features] = values[~features]
                else:
                    X[i], Y[i] = row[:n_features], row[n_features:]
            return X, Y
        indptr = np.zeros(n + 1, dtype=np.int64)
        columns, data = [], []
        for i, (indices, values) in enumerate(self._entries(width)):
            features = indices < n_features       # indices are sorted: features first, then labels
            cut = int(np.count_nonzero(features))
            columns.append(indices[:cut])
            data.append(values[:cut])
            indptr[i + 1] = indptr[i] + cut
            Y[i, indices[cut:] - n_features] = values[cut:]
        X = csr_matrix((np.concatenate(data) if data else np.zeros(0),
                        np.concatenate(columns) if columns else np.zeros(0, dtype=np.int64), indptr),
                       shape=(n, n_features))
        X.eliminate_zeros()   # explicit zeros of the file are not stored entries
        return X, Y


def _parse_sparse_row(line: str, width: int, path: Path, number: int) -> tuple[np.ndarray, np.ndarray]:
    """``{i v, j w, ...}`` → sorted indices and their values (checked: in range, not repeated)."""
    if not line.endswith("}"):
        raise ArffError(f"{path}:{number}: unterminated sparse row")
    body = line[1:-1].strip()
    if not body:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    items = body.split(",")
    pairs = [item.split(None, 1) for item in items]
    try:
        indices = np.array([int(pair[0]) for pair in pairs], dtype=np.int64)
        try:   # the common case: plain numbers, converted in one pass
            values = np.array([float(pair[1]) for pair in pairs])
        except ValueError:   # quoted values or '?' (missing: NaN, reported for the whole file below)
            values = np.array([_value(pair[1]) for pair in pairs])
    except (ValueError, IndexError):
        bad = next((item for item, pair in zip(items, pairs) if not _valid_sparse_pair(pair)), body)
        raise ArffError(f"{path}:{number}: malformed sparse entry {bad.strip()!r}: expected 'index value'") from None
    except OverflowError:   # an index beyond int64
        indices = np.array([min(max(int(pair[0]), -1), width) for pair in pairs], dtype=np.int64)
    out_of_range = (indices < 0) | (indices >= width)
    if np.any(out_of_range):
        bad = items[int(np.flatnonzero(out_of_range)[0])].strip()
        raise ArffError(f"{path}:{number}: malformed sparse entry {bad!r}: index outside 0..{width - 1} "
                        f"({width} attributes)")
    order = np.argsort(indices, kind="stable")
    indices, values = indices[order], values[order]
    repeated = np.flatnonzero(np.diff(indices) == 0)
    if repeated.size:
        raise ArffError(f"{path}:{number}: malformed sparse row: index {int(indices[repeated[0]])} appears twice")
    return indices, values


def _valid_sparse_pair(pair: list) -> bool:
    if len(pair) != 2:
        return False
    try:
        int(pair[0])
        _value(pair[1])
    except ValueError:
        return False
    return True


def _parse_row(line: str, width: int, path: Path, number: int) -> np.ndarray:
    try:
        values = line.split(",") if "'" not in line and '"' not in line else shlex.split(line.replace(",", " "))
    except ValueError as exc:   # shlex: an unmatched quote
        raise ArffError(f"{path}:{number}: {exc} (an unmatched quote)") from None
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
        where = f"not in {directory}" if directory is not None else "no datasets directory found"
        raise FileNotFoundError(
            f"{filename} not found ({where}): download the MULAN dataset from {MULAN_URL}, then put "
            f"{filename} in ../shared/datasets, set {DATASETS_ENV} to its directory, or pass path=")
    return directory / filename


#: bundled sets: name → (file in mlsvm/data_files, ARFF file name, number of labels)
BUNDLED = {
    "emotions": ("emotions.npz", "emotions.arff", 6),
    "yeast-train": ("yeast-train.npz", "yeast-train.arff", 14),
    "yeast-test": ("yeast-test.npz", "yeast-test.arff", 14),
}


def _load_bundled(name: str) -> MultilabelData:
    """A dataset shipped in ``mlsvm/data_files`` (plain arrays, read without pickle)."""
    filename = BUNDLED[name][0]
    with resources.files("mlsvm").joinpath("data_files", filename).open("rb") as handle:
        with np.load(handle, allow_pickle=False) as archive:
            return MultilabelData(archive["X"], archive["Y"], archive["feature_names"].tolist(),
                                  archive["label_names"].tolist(), name)


def load_emotions() -> MultilabelData:
    """MULAN emotions: 593 × 72, 6 labels (the full set; no standard split ships with it).
    Bundled with the package (equal to ``load_arff("emotions.arff", 6)``)."""
    return _load_bundled("emotions")


def load_yeast(subset: str = "train") -> MultilabelData:
    """MULAN yeast, the standard split: ``"train"`` 1500 × 103 or ``"test"`` 917 × 103; 14 labels.
    Bundled with the package (equal to ``load_arff("yeast-train.arff", 14)`` / ``-test``).

    Parameters
    ----------
    subset : {"train", "test"}
        Which MULAN split.
    """
    if subset not in ("train", "test"):
        raise ValueError(f"subset must be 'train' or 'test'; got {subset!r}")
    return _load_bundled(f"yeast-{subset}")


def load_bibtex(split: str = "train", path=None, *, sparse: bool = True) -> MultilabelData:
    """MULAN bibtex (BibSonomy tags): 7395 × 1836 binary features, 159 labels, read as CSR.

    The file ships as one ``bibtex.arff``; ``split="train"`` is its first 4880 rows
    (:data:`BIBTEX_TRAIN_SIZE`), ``"test"`` the other 2515 (the sizes of MULAN's split; the
    project takes it by row order), ``"all"`` every row. ``path``: the ARFF file, or a folder
    holding ``bibtex.arff`` (default: ``bibtex.arff`` in ``$MLSVM_DATASETS`` or
    ``../shared/datasets``). ``sparse=False`` returns a dense ``X`` (118 MB for the whole set).

    Parameters
    ----------
    split : {"train", "test"}
        Which part (the first 4880 rows are train).
    path : str, Path or None
        The ARFF file, or a folder holding ``bibtex.arff`` (default: found like the other datasets).
    sparse : bool
        Return X as CSR.
    """
    if split not in ("train", "test", "all"):
        raise ValueError(f"split must be 'train', 'test' or 'all'; got {split!r}")
    if path is None:
        path = _dataset_path("bibtex.arff")
    elif Path(path).is_dir():
        path = Path(path) / "bibtex.arff"
    data = load_arff(path, n_labels=159, sparse=sparse)
    rows = {"train": slice(0, BIBTEX_TRAIN_SIZE), "test": slice(BIBTEX_TRAIN_SIZE, None), "all": slice(None)}[split]
    return MultilabelData(data.X[rows], data.Y[rows], data.feature_names, data.label_names, f"bibtex-{split}")


def make_multilabel(n_samples=60, n_features=5, n_labels=4, *, noise=0.1, random_state=0) -> MultilabelData:
    """A seeded multilabel problem: label k is on when a random linear score exceeds its quantile.

    Label cardinality is about ``n_labels / 3``; ``noise`` flips that fraction of entries, so the
    problem is not separable and every solver meets active and inactive constraints.

    Parameters
    ----------
    n_samples : int
        Number of samples.
    n_features : int
        Number of features.
    n_labels : int
        Number of labels.
    noise : float
        Probability of flipping each label.
    random_state : int
        Seed.
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
    """A seeded multiclass problem: Gaussian blobs, overlapping a little. Returns ``(X, y)``.

    Parameters
    ----------
    n_samples : int
        Number of samples, at least ``n_classes`` (the classes take turns: each gets a point).
    n_features : int
        Number of features.
    n_classes : int
        Number of classes.
    random_state : int
        Seed.
    """
    check_scalar(n_classes, "n_classes", low=2, integer=True)
    check_scalar(n_samples, "n_samples", low=n_classes, integer=True)
    check_scalar(n_features, "n_features", low=1, integer=True)
    rng = np.random.default_rng(random_state)
    centers = 2.0 * rng.standard_normal((n_classes, n_features))
    y = np.arange(n_samples) % n_classes
    X = centers[y] + rng.standard_normal((n_samples, n_features))
    return X, y


def load_file(path, n_labels: int | None = None) -> MultilabelData:
    """Load training or test data by extension: ``.arff`` (MULAN, dense or sparse rows; needs
    ``n_labels``), ``.npz`` (arrays ``X`` and ``Y``, or one sparse matrix ``[X | Y]`` written by
    ``scipy.sparse.save_npz``, whose last ``n_labels`` columns are the labels) or ``.csv`` (numeric, comma-separated, an optional header line; the
    last ``n_labels`` columns are the labels).

    Parameters
    ----------
    path : str or Path
        A ``.arff``, ``.npz`` (arrays X, Y) or ``.csv`` file.
    n_labels : int or None
        Number of label columns/attributes (needed for ARFF and CSV).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npz":
        arrays = read_npz(path, "data file", hint=" (a .npz data file holds arrays X and Y, or one "
                          "scipy.sparse.save_npz matrix [X | Y])")
        if not {"X", "Y"} <= set(arrays):
            if {"format", "shape", "data"} <= set(arrays):   # scipy.sparse.save_npz
                return _sparse_npz(path, n_labels)
            raise ValueError(f"{path} must contain arrays 'X' and 'Y', or be a scipy.sparse.save_npz "
                             f"matrix [X | Y] (with n_labels); found {sorted(arrays)}")
        X, Y = arrays["X"], arrays["Y"]
        if X.ndim != 2:
            raise ValueError(f"{path}: X must be a 2-D array (n_samples, n_features); got shape {X.shape}")
        if Y.ndim not in (1, 2):
            raise ValueError(f"{path}: Y must be a 1-D class vector or a 2-D (n_samples, n_labels) indicator; "
                             f"got shape {Y.shape}")
        Y = Y[:, None] if Y.ndim == 1 else Y
        return MultilabelData(X, Y, [f"x{j}" for j in range(X.shape[1])], [f"y{k}" for k in range(Y.shape[1])], path.stem)
    if n_labels is None:
        raise ValueError(f"n_labels (--labels) is required to read {path.name}: the last n_labels columns are the labels")
    if suffix == ".arff":
        return load_arff(path, n_labels)
    if suffix == ".csv":
        return _read_csv(path, n_labels)
    raise ValueError(f"unsupported data file {path.name}: expected .arff, .npz or .csv")


def _numbers(fields) -> bool:
    """Whether every field reads as a number (``float`` accepts ``nan``, ``inf`` and exponents)."""
    try:
        for field in fields:
            float(field)
    except ValueError:
        return False
    return True


def _read_csv(path: Path, n_labels: int) -> MultilabelData:
    """A numeric comma-separated table, its first line a header when it does not read as numbers;
    the last ``n_labels`` columns are the labels. A line that is not numbers, or not as wide as
    the ones before, is reported with the file and line number."""
    check_scalar(n_labels, "n_labels", low=1, integer=True)
    lines = _text_lines(path)
    first = lines[0] if lines else ""
    fields = first.split("#", 1)[0].split(",")
    header = bool(first.strip()) and not _numbers(fields)
    try:
        with warnings.catch_warnings():   # an empty table is reported below, in this file's terms
            warnings.filterwarnings("ignore", message="loadtxt: input contained no data")
            table = np.loadtxt(lines, delimiter=",", skiprows=1 if header else 0, ndmin=2)
    except ValueError:
        raise ValueError(_csv_problem(path, lines, header)) from None
    if table.shape[0] == 0:
        raise ValueError(f"{path} holds no data rows")
    names = [name.strip() for name in fields] if header else [f"c{j}" for j in range(table.shape[1])]
    if n_labels >= table.shape[1]:
        raise ValueError(f"{path}: n_labels={n_labels} but the file has {table.shape[1]} columns; it needs "
                         f"at least one feature column before the {n_labels} label column(s)")
    return MultilabelData(table[:, :-n_labels], table[:, -n_labels:], names[:-n_labels], names[-n_labels:], path.stem)


def _text_lines(path: Path) -> list:
    """The lines of a UTF-8 text file, without a leading byte-order mark (a spreadsheet's "CSV
    UTF-8" starts with one, and the first line would not read as numbers); a byte that is not
    UTF-8 is an error naming its line."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{path}:{line}: byte 0x{raw[exc.start]:02x} is not UTF-8 text; "
                         "save the file as UTF-8 (or ASCII)") from None
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")   # the newlines open() reads


def _csv_problem(path: Path, lines: list, header: bool) -> str:
    """Why ``np.loadtxt`` could not read the CSV ``lines`` of ``path``: its first line that is not
    numbers or not as wide as the lines before (comments after ``#`` and blank lines skipped, as it
    does)."""
    width = None
    for number, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].split(",")
        if (header and number == 1) or not "".join(fields).strip():
            continue
        if width is not None and len(fields) != width:
            return f"{path}:{number}: {len(fields)} columns where the lines before have {width}"
        width = len(fields)
        for column, field in enumerate(fields, 1):
            if not _numbers([field]):
                return f"{path}:{number}: column {column} is {field.strip()!r}, not a number"
    return f"{path}: not a numeric comma-separated table"


def _sparse_npz(path: Path, n_labels: int | None) -> MultilabelData:
    """A ``scipy.sparse.save_npz`` file holding ``[X | Y]``: CSR ``X``, dense {0,1} ``Y``."""
    from scipy.sparse import load_npz

    if n_labels is None:
        raise ValueError(f"n_labels (--labels) is required to read {path.name}: it holds one sparse matrix "
                         "whose last n_labels columns are the labels")
    check_scalar(n_labels, "n_labels", low=1, integer=True)
    try:   # the archive reads (load_file checked it); its arrays may still not make a valid matrix
        matrix = load_npz(path).tocsr()
        matrix.check_format(full_check=True)
    except (ValueError, TypeError, IndexError) as exc:
        raise ValueError(f"{path} is not a valid scipy.sparse matrix ({exc})") from None
    if n_labels >= matrix.shape[1]:
        raise ValueError(f"{path}: n_labels={n_labels} but the matrix has {matrix.shape[1]} columns; it needs "
                         f"at least one feature column before the {n_labels} label column(s)")
    d = matrix.shape[1] - n_labels
    X, Y = matrix[:, :d], matrix[:, d:].toarray()
    if not np.all((Y == 0) | (Y == 1)):
        raise ValueError(f"{path}: label columns contain values other than 0 and 1 (is n_labels={n_labels} right?)")
    return MultilabelData(X, Y.astype(np.int8), [f"x{j}" for j in range(d)], [f"y{k}" for k in range(n_labels)], path.stem)
