"""ARFF loading: the reference files have the documented shapes; malformed files give clear errors."""

import re
import struct
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsvm.datasets import (BUNDLED, ArffError, load_arff, load_bibtex, load_emotions, load_file, load_yeast,
                            make_multiclass, make_multilabel)


@pytest.mark.realdata
def test_reference_datasets(datasets_dir):
    emotions = load_emotions()
    assert emotions.X.shape == (593, 72) and emotions.Y.shape == (593, 6)
    assert emotions.Y.sum(1).mean() == pytest.approx(1.87, abs=0.01)   # label cardinality (README)
    train, test = load_yeast("train"), load_yeast("test")
    assert train.X.shape == (1500, 103) and train.Y.shape == (1500, 14)
    assert test.X.shape == (917, 103)
    assert train.Y.sum(1).mean() == pytest.approx(4.23, abs=0.01)
    assert train.label_names[0] == "Class1"


def _write(tmp_path, text):
    path = tmp_path / "data.arff"
    path.write_text(text)
    return path


HEADER = "@relation t\n@attribute a numeric\n@attribute 'b c' numeric\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n"


def test_dense_and_sparse_rows(tmp_path):
    path = _write(tmp_path, HEADER + "% comment\n1.5,2,1,0\n{0 3.0,3 1}\n")
    data = load_arff(path, n_labels=2, sparse=False)
    np.testing.assert_array_equal(data.X, [[1.5, 2.0], [3.0, 0.0]])
    auto = load_arff(path, n_labels=2)   # a file with sparse rows reads to CSR by default
    assert sp.isspmatrix_csr(auto.X)
    np.testing.assert_array_equal(auto.X.toarray(), data.X)
    np.testing.assert_array_equal(auto.Y, data.Y)
    np.testing.assert_array_equal(data.Y, [[1, 0], [0, 1]])
    assert data.feature_names == ["a", "b c"] and data.label_names == ["l1", "l2"]


@pytest.mark.parametrize("body, n_labels, message", [
    (HEADER + "1,2,1\n", 2, "3 values for 4 attributes"),
    (HEADER + "1,x,1,0\n", 2, "not numeric"),
    (HEADER + "1,2,1,2\n", 2, "values other than 0 and 1"),
    (HEADER + "1,?,1,0\n", 2, "missing or non-numeric"),
    (HEADER, 2, "empty"),
    (HEADER.replace("@data\n", ""), 2, "no @data"),
    (HEADER + "1,2,1,0\n", 4, "has only 4 attributes"),
    ("@relation t\n@attribute\n@data\n", 1, "malformed @attribute"),
    (HEADER.replace("l2 {0,1}", "l2 {a,b}") + "1,2,1,0\n", 2, "declared"),
    (HEADER + "{0 1,9 1}\n", 2, "malformed sparse entry"),
    (HEADER + "1,'2,1,0\n", 2, r"data.arff:7: No closing quotation \(an unmatched quote\)"),
])
def test_malformed_files(tmp_path, body, n_labels, message):
    with pytest.raises(ArffError, match=message):
        load_arff(_write(tmp_path, body), n_labels=n_labels)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="ARFF file not found"):
        load_arff(tmp_path / "nope.arff", 1)
    with pytest.raises(IsADirectoryError, match="is a directory; load_arff reads one ARFF file"):   # was "not found"
        load_arff(tmp_path, 1)


def test_bibtex_path_may_be_the_folder_that_holds_it(tmp_path):
    """load_bibtex(path=folder) read the folder as the file ("ARFF file not found: folder")."""
    attributes = "".join(f"@attribute f{j} {{0,1}}\n" for j in range(161))
    (tmp_path / "bibtex.arff").write_text(f"@relation bibtex\n{attributes}@data\n{{0 1,2 1}}\n{{1 1,160 1}}\n")
    for path in (tmp_path, tmp_path / "bibtex.arff"):
        data = load_bibtex("all", path)
        assert data.X.shape == (2, 2) and data.Y.shape == (2, 159)
        assert data.X.toarray().tolist() == [[1, 0], [0, 1]] and data.Y[0].sum() == 1 and data.Y[1, -1] == 1


def test_missing_dataset_dir_says_where_to_put_it(tmp_path, monkeypatch):
    """bibtex is not bundled: the error names the file, the variable and where MULAN publishes it.
    emotions and yeast are bundled: they load with no datasets directory at all."""
    monkeypatch.setenv("MLSVM_DATASETS", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"bibtex.arff not found.*mulan.sourceforge.net/datasets-mlc.html"
                                                r".*MLSVM_DATASETS"):
        load_bibtex("train")
    assert load_emotions().X.shape == (593, 72) and load_yeast("test").Y.shape == (917, 14)
    with pytest.raises(ValueError, match="subset must be"):
        load_yeast("validation")
    with pytest.raises(ValueError, match="split must be"):
        load_bibtex("validation")


@pytest.mark.realdata
@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_equal_the_arff_files(datasets_dir, name):
    """mlsvm/data_files/*.npz (tools/bundle_datasets.py) hold exactly what the parser reads."""
    _, arff, n_labels = BUNDLED[name]
    bundled = load_emotions() if name == "emotions" else load_yeast(name.split("-")[1])
    parsed = load_arff(datasets_dir / arff, n_labels)
    assert bundled.X.dtype == parsed.X.dtype == np.float64 and bundled.Y.dtype == parsed.Y.dtype == np.int8
    np.testing.assert_array_equal(bundled.X, parsed.X)
    np.testing.assert_array_equal(bundled.Y, parsed.Y)
    assert bundled.feature_names == parsed.feature_names and bundled.label_names == parsed.label_names


SPARSE_HEADER = ("% a comment before the header\n@relation s\n@attribute f0 numeric\n@attribute f1 numeric\n"
                 "@attribute f2 numeric\n@attribute l0 {0,1}\n@attribute l1 {0,1}\n@data\n")
SPARSE_BODY = ("{2 1.5, 0 -2, 4 1}\n"        # unordered indices
               "% a comment between rows\n"
               "{}\n"                        # an empty row
               "{1 0, 3 1, 4 0}\n"           # explicit zeros (a feature and a label)
               "{ 1 2.5e-1 ,3 1 }\n")        # spaces around entries
SPARSE_X = [[-2.0, 0.0, 1.5], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.25, 0.0]]
SPARSE_Y = [[0, 1], [0, 0], [1, 0], [1, 0]]


def test_sparse_arff_reads_to_csr(tmp_path):
    data = load_arff(_write(tmp_path, SPARSE_HEADER + SPARSE_BODY), n_labels=2)
    assert sp.isspmatrix_csr(data.X) and data.X.dtype == np.float64 and data.X.has_canonical_format
    np.testing.assert_array_equal(data.X.toarray(), SPARSE_X)
    assert data.X.nnz == 3                        # the explicit zero is not stored
    np.testing.assert_array_equal(data.X.indptr, [0, 2, 2, 2, 3])
    np.testing.assert_array_equal(data.Y, SPARSE_Y)
    assert data.Y.dtype == np.int8 and data.feature_names == ["f0", "f1", "f2"]
    dense = load_arff(_write(tmp_path, SPARSE_HEADER + SPARSE_BODY), n_labels=2, sparse=False)
    assert isinstance(dense.X, np.ndarray)
    np.testing.assert_array_equal(dense.X, SPARSE_X)
    np.testing.assert_array_equal(dense.Y, SPARSE_Y)


def test_dense_arff_on_request_as_csr(tmp_path):
    data = load_arff(_write(tmp_path, HEADER + "1.5,0,1,0\n0,0,0,1\n"), n_labels=2, sparse=True)
    assert sp.isspmatrix_csr(data.X) and data.X.nnz == 1
    np.testing.assert_array_equal(data.X.toarray(), [[1.5, 0.0], [0.0, 0.0]])
    np.testing.assert_array_equal(data.Y, [[1, 0], [0, 1]])
    assert isinstance(load_arff(_write(tmp_path, HEADER + "1.5,0,1,0\n"), n_labels=2).X, np.ndarray)
    with pytest.raises(ValueError, match="sparse must be"):
        load_arff(_write(tmp_path, HEADER + "1.5,0,1,0\n"), n_labels=2, sparse="yes")


@pytest.mark.parametrize("row, message", [
    ("{0 1, 5 1}", r"data.arff:9: malformed sparse entry '5 1': index outside 0..4"),
    ("{0 1, -1 1}", r":9: malformed sparse entry '-1 1'"),
    ("{0 1, 99999999999999999999 1}", r":9: malformed sparse entry '99999999999999999999 1': index outside 0\.\.4"),
    ("{0 1, 2 1, 0 3}", r":9: malformed sparse row: index 0 appears twice"),
    ("{0 1, 2}", r":9: malformed sparse entry '2': expected 'index value'"),
    ("{a 1}", r":9: malformed sparse entry 'a 1'"),
    ("{0 x}", r":9: malformed sparse entry '0 x'"),
    ("{0 1 2, 3 1}", r":9: malformed sparse entry '0 1 2'"),
    ("{0 1, 3 1", r":9: unterminated sparse row"),
    ("{0 ?, 3 1}", r"missing or non-numeric feature values"),
    ("{0 1, 3 2}", r"label columns contain values other than 0 and 1"),
])
def test_malformed_sparse_rows(tmp_path, row, message):
    with pytest.raises(ArffError, match=message):
        load_arff(_write(tmp_path, SPARSE_HEADER + row + "\n"), n_labels=2)


def test_sparse_label_count_checks(tmp_path):
    with pytest.raises(ArffError, match="has only 5 attributes"):
        load_arff(_write(tmp_path, SPARSE_HEADER + "{0 1}\n"), n_labels=5)
    with pytest.raises(ArffError, match="values other than 0 and 1"):   # n_labels too large: a feature read as a label
        load_arff(_write(tmp_path, SPARSE_HEADER + "{2 1.5, 4 1}\n"), n_labels=3)


def test_load_file_reads_a_sparse_npz(tmp_path):
    """``scipy.sparse.save_npz`` of ``[X | Y]`` (what ``mlsvm fit/evaluate`` read with --labels)."""
    X = sp.random(6, 4, density=0.4, random_state=0, format="csr")
    Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0], [0, 1]])
    path = tmp_path / "data.npz"
    sp.save_npz(path, sp.hstack([X, sp.csr_matrix(Y)]).tocsc())
    data = load_file(path, n_labels=2)
    assert sp.isspmatrix_csr(data.X)
    np.testing.assert_array_equal(data.X.toarray(), X.toarray())
    np.testing.assert_array_equal(data.Y, Y)
    with pytest.raises(ValueError, match="n_labels"):
        load_file(path)
    sparse_arff = load_file(_write(tmp_path, SPARSE_HEADER + SPARSE_BODY), n_labels=2)
    assert sp.isspmatrix_csr(sparse_arff.X)


def _npz_cases(tmp_path):
    """Data files that are not what load_file reads, each with the words its error must hold."""
    good = tmp_path / "good.npz"
    sp.save_npz(good, sp.csr_matrix(np.array([[1.0, 0.0, 1.0], [0.0, 2.0, 0.0]])))
    raw = dict(np.load(good))
    cases = {
        "text.npz": (lambda p: p.write_text("hello"), "not a .npz archive"),
        "truncated.npz": (lambda p: p.write_bytes(good.read_bytes()[:100]), "a damaged .npz archive"),
        "single.npz": (lambda p: p.write_bytes(_npy_bytes()), "single numpy array (.npy)"),
        "objects.npz": (lambda p: np.savez(p, X=np.array([{"a": 1}], dtype=object), Y=np.ones(1)),
                        "holds Python objects (pickle), which mlsvm never loads"),
        "flat.npz": (lambda p: np.savez(p, X=np.arange(3.0), Y=np.ones(3)), "X must be a 2-D array"),
        "scalar.npz": (lambda p: np.savez(p, X=np.ones((3, 2)), Y=np.array(1)), "Y must be a 1-D class vector"),
        "indices.npz": (lambda p: np.savez(p, **{**raw, "indices": raw["indices"] + 5}),
                        "not a valid scipy.sparse matrix (indices must be < 3)"),
        "pointer.npz": (lambda p: np.savez(p, **{**raw, "indptr": raw["indptr"][::-1]}),
                        "not a valid scipy.sparse matrix"),
        # zipfile's NotImplementedError and zlib's error, which were raised raw
        "version.npz": (lambda p: _compressed_and_damaged(p, "version"), "a damaged .npz archive (zip file version"),
        "method.npz": (lambda p: _compressed_and_damaged(p, "method"),
                       "a damaged .npz archive (That compression method is not supported)"),
        "deflated.npz": (lambda p: _compressed_and_damaged(p, "payload"),
                         "a damaged .npz archive (Error -3 while decompressing data"),
    }
    return cases


def _compressed_and_damaged(path, where: str) -> None:
    """``np.savez_compressed`` data with one field of its first member damaged: the version needed
    to extract it or its compression method (central directory), or its deflated bytes."""
    np.savez_compressed(path, X=np.ones((3, 2)), Y=np.ones((3, 1)))
    data = bytearray(path.read_bytes())
    central = data.index(b"PK\x01\x02")
    if where == "version":
        data[central + 6] = 0xFF
    elif where == "method":
        data[central + 10] = 99
    else:
        name_length, extra_length = struct.unpack("<HH", data[26:30])
        start = 30 + name_length + extra_length
        data[start:start + 8] = b"\xff" * 8
    path.write_bytes(bytes(data))


def _npy_bytes() -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.ones(3))
    return buffer.getvalue()


def test_load_file_names_what_is_wrong_with_an_npz(tmp_path):
    """A damaged or foreign .npz is a ValueError naming the file and what it holds instead, never
    NumPy's advice to unpickle, a zip or index error, or a matrix with entries out of its shape."""
    for name, (write, message) in _npz_cases(tmp_path).items():
        path = tmp_path / name
        write(path)
        with pytest.raises(ValueError, match=re.escape(message)) as caught:
            load_file(path, n_labels=1)
        assert str(path) in str(caught.value)
        assert "allow_pickle" not in str(caught.value) and "pickle.load" not in str(caught.value)


@pytest.mark.parametrize("text, message", [
    ("1,2,0\n3,x,1\n", ":2: column 2 is 'x', not a number"),
    ("a,b,y\n1,2,0\n3,4\n", ":3: 2 columns where the lines before have 3"),
    ("", "holds no data rows"),
    ("a,b,y\n", "holds no data rows"),
    ("1,0\n2,1\n", "needs at least one feature column before the 2 label column(s)"),
])
def test_load_file_names_the_line_of_a_bad_csv(tmp_path, text, message):
    """The file and line in our words: not NumPy's (``usecols``) nor its warning on an empty table."""
    path = tmp_path / "data.csv"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=re.escape(message)) as caught:
            load_file(path, n_labels=2 if "feature column" in message else 1)
    assert str(path) in str(caught.value) and "usecols" not in str(caught.value)


def test_csv_header_is_a_line_that_is_not_numbers(tmp_path):
    """A first line of numbers is data even when it holds nan or inf (they read as numbers)."""
    path = tmp_path / "data.csv"
    path.write_text("1,nan,0\n3,4,1\n-inf,1e-3,1\n")
    data = load_file(path, n_labels=1)
    assert data.X.shape == (3, 2) and np.isnan(data.X[0, 1]) and data.X[2, 0] == -np.inf
    np.testing.assert_array_equal(data.Y[:, 0], [0, 1, 1])
    path.write_text("a, b ,label\n1,2,0\n")
    data = load_file(path, n_labels=1)
    assert data.feature_names == ["a", "b"] and data.label_names == ["label"] and data.X.shape == (1, 2)


def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path):
    """A spreadsheet's "CSV UTF-8" starts with a byte-order mark. The first line then did not read
    as numbers, so a CSV without a header lost its first row as one (feature names '\\ufeff1', '2'),
    and an ARFF file's '@relation' was an 'unexpected header line'."""
    csv = tmp_path / "data.csv"
    csv.write_bytes(b"\xef\xbb\xbf1,2,0\n3,4,1\n")
    np.testing.assert_array_equal(load_file(csv, n_labels=1).X, [[1, 2], [3, 4]])
    csv.write_bytes(b"\xef\xbb\xbfa,b,y\n3,4,1\n")
    assert load_file(csv, n_labels=1).feature_names == ["a", "b"]
    arff = tmp_path / "data.arff"
    arff.write_bytes(b"\xef\xbb\xbf" + (HEADER + "1,2,1,0\n").encode())
    np.testing.assert_array_equal(load_arff(arff, n_labels=2).X, [[1, 2]])


def test_a_csv_that_is_not_utf8_is_an_error_naming_its_line(tmp_path):
    """It was NumPy's UnicodeDecodeError, naming neither the file nor the line."""
    csv = tmp_path / "data.csv"
    csv.write_bytes("a,b,y\n1,2,0\n3,4,1  # café\n".encode("latin-1"))
    with pytest.raises(ValueError, match=re.escape(f"{csv}:3: byte 0xe9 is not UTF-8 text")):
        load_file(csv, n_labels=1)


#: valid files that the hostile ones are edited from, and the edits
VALID_FILES = {"arff": HEADER + "% comment\n1.5,2,1,0\n{0 3.0,3 1}\n{}\n", "csv": "a,b,l1,l2\n1,2,0,1\n3,4,1,0\n"}
EDITS = ["{", "}", ",", " ", "\n", "\r", "\t", "'", '"', "%", "#", "?", "@data", "@attribute x numeric", "{0,1}",
         "{3 1,0 2}", "nan", "inf", "1e400", "-0", "99999999999999999999", "\x00", "\ufeff", "é"]


@st.composite
def hostile_files(draw):
    """``(suffix, bytes)``: a valid ARFF or CSV file with a few edits, maybe a byte that is not
    UTF-8 text (a Latin-1 accent) put in, or bytes that are no text at all."""
    suffix = draw(st.sampled_from(sorted(VALID_FILES)))
    if draw(st.integers(0, 7)) == 0:
        return suffix, draw(st.binary(max_size=120))
    text = VALID_FILES[suffix]
    for _ in range(draw(st.integers(1, 4))):
        at, cut = draw(st.integers(0, len(text))), draw(st.integers(0, 6))
        text = text[:at] + draw(st.sampled_from(EDITS) | st.text(max_size=3)) + text[at + cut:]
    raw = text.encode("utf-8", "surrogatepass")   # a drawn surrogate is not UTF-8 either
    if draw(st.booleans()):
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + bytes([draw(st.integers(0x80, 0xFF))]) + raw[at:]
    return suffix, raw


@settings(max_examples=200)
@given(hostile_files(), st.sampled_from([1, 2, 3]))
def test_a_hostile_data_file_is_read_or_a_value_error_naming_it(case, n_labels):
    """What ``mlsvm fit --train`` reads: data of the shapes asked, or a ValueError naming the file."""
    suffix, raw = case
    with tempfile.TemporaryDirectory() as folder:   # hypothesis runs many examples per test function
        path = Path(folder) / f"data.{suffix}"
        path.write_bytes(raw)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.filterwarnings("ignore", message=".* are read as features", category=UserWarning)  # our own
            try:
                data = load_file(path, n_labels)
            except ValueError as error:
                assert str(path) in str(error) and not isinstance(error, UnicodeError), repr(error)
                return
    assert data.X.shape[0] == data.Y.shape[0] >= 1 and data.Y.shape[1] == n_labels


@pytest.mark.realdata
def test_bibtex(datasets_dir):
    """bibtex: shape, non-zeros, labels and ranking pairs as docs/datasets.md states; the
    4880/2515 split by row order; MatrixSVM (linear) on the first 800 training rows from CSR gives
    the model of the dense copy, with a certified gap."""
    import mlsvm
    from mlsvm.data import ranking_pairs

    if not (datasets_dir / "bibtex.arff").is_file():
        pytest.skip(f"bibtex.arff not in {datasets_dir}")
    data = load_bibtex("all")
    assert sp.isspmatrix_csr(data.X) and data.X.shape == (7395, 1836) and data.Y.shape == (7395, 159)
    assert data.X.nnz == 507_746 and np.all(data.X.data == 1.0)        # binary features
    assert ranking_pairs(data.Y).n_pairs == 2_760_350
    assert data.Y.sum(1).mean() == pytest.approx(2.40, abs=0.005)      # label cardinality
    test = load_bibtex("test")          # the rows after the first 4880 ("train": the first 4880)
    assert test.X.shape == (2515, 1836) and (test.X != data.X[4880:]).nnz == 0
    np.testing.assert_array_equal(test.Y, data.Y[4880:])
    X, Y = data.X[:800], data.Y[:800]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the active-set polish's LinAlgWarnings (ill-conditioned Schur systems)
        sparse_model = mlsvm.MatrixSVM(kernel="linear", C=1.0).fit(X, Y)
        dense_model = mlsvm.MatrixSVM(kernel="linear", C=1.0).fit(X.toarray(), Y)
    report = sparse_model.fit_report_
    assert report.converged and report.relative_gap <= 1e-8
    assert abs(report.primal_objective - dense_model.fit_report_.primal_objective) <= 1e-10 * report.primal_objective
    np.testing.assert_allclose(sparse_model.decision_function(test.X[:300]),
                               dense_model.decision_function(test.X[:300].toarray()), rtol=0, atol=1e-8)


def test_synthetic_generators_are_seeded():
    a, b = make_multilabel(random_state=5), make_multilabel(random_state=5)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.Y, b.Y)
    assert set(np.unique(a.Y)) <= {0, 1}
    X, y = make_multiclass(30, 3, 3, random_state=1)
    assert X.shape == (30, 3) and set(y) == {0, 1, 2}


@pytest.mark.parametrize("args, message", [
    ((0, 3, 3), r"n_samples must lie in \[3, inf\]; got 0"),
    ((1, 1, 2), r"n_samples must lie in \[2, inf\]; got 1"),
    ((10, 0, 3), r"n_features must lie in \[1, inf\]; got 0"),
    ((10.5, 3, 3), "n_samples must be an integer; got 10.5"),
    (("a", 3, 3), "n_samples must be an integer; got 'a'"),
])
def test_make_multiclass_checks_its_sizes(args, message):
    """Before: 0 samples or 0 features gave empty arrays, a single sample a one-class problem, and
    10.5 or 'a' a raw IndexError or TypeError from numpy."""
    with pytest.raises(ValueError, match=message):
        make_multiclass(*args)
    X, y = make_multiclass(3, 1, 3)
    assert X.shape == (3, 1) and sorted(y) == [0, 1, 2]
