"""MULAN label declarations against n_labels: a label read as a feature is named in a warning."""

import warnings

import pytest

from mlsvm.datasets import load_arff

HEADER = "@relation t\n@attribute f1 numeric\n@attribute f2 numeric\n"


def _write(tmp_path, header, rows):
    path = tmp_path / "t.arff"
    path.write_text(header + "@data\n" + "\n".join(rows) + "\n")
    return path


def test_fewer_labels_than_the_declared_label_block_warns_naming_the_columns(tmp_path):
    header = HEADER + "".join(f"@attribute L{k} {{0,1}}\n" for k in range(3))
    path = _write(tmp_path, header, ["0.5,1.5,1,0,1", "2.5,0.1,0,1,1"])
    with pytest.warns(UserWarning, match=r"last 3 attributes are declared \{0,1\}.*n_labels=2: 1 of them "
                                         r"\('L0'\) are read as features.*pass n_labels=3"):
        data = load_arff(path, 2)
    assert data.X.shape == (2, 3) and data.feature_names[-1] == "L0"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_arff(path, 3).Y.shape == (2, 3)


def test_binary_features_throughout_say_nothing(tmp_path):
    """bibtex's features are {0,1} too: the file cannot tell where its labels begin."""
    header = "@relation t\n" + "".join(f"@attribute a{k} {{0,1}}\n" for k in range(5))
    path = _write(tmp_path, header, ["1,0,1,0,1", "0,1,1,1,0"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_arff(path, 2).X.shape == (2, 3)
