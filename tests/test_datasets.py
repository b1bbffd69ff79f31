"""ARFF loading: the reference files have the documented shapes; malformed files give clear errors."""

import numpy as np
import pytest

from mlsvm.datasets import ArffError, load_arff, load_emotions, load_yeast, make_multiclass, make_multilabel


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
    data = load_arff(_write(tmp_path, HEADER + "% comment\n1.5,2,1,0\n{0 3.0,3 1}\n"), n_labels=2)
    np.testing.assert_array_equal(data.X, [[1.5, 2.0], [3.0, 0.0]])
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
])
def test_malformed_files(tmp_path, body, n_labels, message):
    with pytest.raises(ArffError, match=message):
        load_arff(_write(tmp_path, body), n_labels=n_labels)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="ARFF file not found"):
        load_arff(tmp_path / "nope.arff", 1)


def test_missing_dataset_dir_says_where_to_put_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MLSVM_DATASETS", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="MLSVM_DATASETS"):
        load_emotions()
    with pytest.raises(ValueError, match="subset must be"):
        load_yeast("validation")


def test_synthetic_generators_are_seeded():
    a, b = make_multilabel(random_state=5), make_multilabel(random_state=5)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.Y, b.Y)
    assert set(np.unique(a.Y)) <= {0, 1}
    X, y = make_multiclass(30, 3, 3, random_state=1)
    assert X.shape == (30, 3) and set(y) == {0, 1, 2}
