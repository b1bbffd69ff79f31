"""The reference suite: written certified, readable with numpy + json alone, re-certified by
check_reference, and a tampered file is caught."""

import json
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mlsvm.testing.reference_suite import check_reference, default_cases, export_reference, load_case

#: numpy + json only, mlsvm made unimportable: the hinge Matrix-SVM primal of SPEC §2.5 by hand
READER = textwrap.dedent("""
    import json, sys
    sys.modules["mlsvm"] = None                       # prove the format needs no mlsvm
    import numpy as np
    folder = sys.argv[1]
    case = json.load(open(f"{folder}/case.json"))
    X, Y = np.load(f"{folder}/X.npy"), np.load(f"{folder}/Y.npy")
    coef = np.load(f"{folder}/primal_coef.npy")       # Θ: W = [X, 1]ᵀΘ
    C = case["hyperparameters"]["C"]
    gram_bar = X @ X.T + 1.0                          # linear kernel, regularized bias
    scores, signed = gram_bar @ coef, 2.0 * Y - 1.0
    value = 0.5 * np.sum(coef * scores) + C * np.maximum(0.0, 1.0 - signed * scores).sum()
    print(abs(value - case["primal_objective"]) / max(1.0, abs(value)))
""")


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    wanted = {"MatrixSVM-plain-linear", "MatrixSVM-awkward-linear", "MLODM-awkward-rbf"}
    directory = tmp_path_factory.mktemp("reference")
    records = export_reference(directory, [case for case in default_cases() if case.name in wanted])
    assert {record["case"] for record in records} == wanted
    return directory


def test_every_case_is_certified_on_three_solvers(suite):
    for folder in suite.iterdir():
        import json
        record = json.loads((folder / "case.json").read_text())
        values = list(record["agreed"].values())
        assert len(values) == 3 and max(values) - min(values) <= 1e-8 * max(1.0, abs(values[0]))
        assert abs(record["relative_gap"]) <= 1e-9 and max(record["kkt"].values()) <= 1e-9


@pytest.mark.parametrize("case", ["MatrixSVM-plain-linear", "MatrixSVM-awkward-linear"])
def test_readable_with_numpy_and_json_alone(suite, case):
    output = subprocess.run([sys.executable, "-c", READER, str(suite / case)], capture_output=True,
                            text=True, check=True).stdout
    assert float(output) <= 1e-12


def test_check_passes_on_a_fresh_export_and_fails_on_a_tampered_file(suite, tmp_path):
    assert check_reference(suite) == []
    import shutil
    tampered = tmp_path / "tampered"
    shutil.copytree(suite, tampered)
    path = tampered / "MLODM-awkward-rbf" / "dual_alpha.npy"
    alpha = np.load(path)
    alpha[np.argmax(alpha)] *= 1.5
    np.save(path, alpha)
    problems = check_reference(tampered)
    assert problems and all(p.startswith("MLODM-awkward-rbf") for p in problems)
    assert any("KKT" in p or "objective" in p for p in problems)


def _edit_record(**changes):
    def edit(folder):
        record = json.loads((folder / "case.json").read_text())
        record.update(changes)
        (folder / "case.json").write_text(json.dumps(record))
    return edit


def _truncate(folder):
    data = (folder / "X.npy").read_bytes()
    (folder / "X.npy").write_bytes(data[:len(data) - 40])


DAMAGES = {   # what a case folder may hold instead of a case, and the words of the error
    "case.json not UTF-8": (lambda folder: (folder / "case.json").write_bytes(b"{\xe9}"),
                            r"case\.json is not valid JSON"),
    "case.json a list": (lambda folder: (folder / "case.json").write_text("[1, 2]"),
                         r"case\.json must hold a JSON object .*; got list"),
    "another schema": (_edit_record(schema_version=2), r"has schema_version 2; this mlsvm reads version 1"),
    "no model": (_edit_record(model=None), r"case\.json: 'model' must be a string; got None"),
    "names not a list": (_edit_record(primal_names=7), r"'primal_names' must be a list of names; got 7"),
    "a name outside the folder": (_edit_record(primal_names=["../X"]), r"array names must be identifiers .*'\.\./X'"),
    "X.npy missing": (lambda folder: (folder / "X.npy").unlink(), r"X\.npy is not a readable array .*: no such file"),
    "X.npy not an array": (lambda folder: (folder / "X.npy").write_bytes(b"garbage"), r"X\.npy .*: not a \.npy file"),
    "X.npy of objects": (lambda folder: np.save(folder / "X.npy", np.array([{}]), allow_pickle=True),
                         r"X\.npy .*: it holds Python objects \(pickle\), which mlsvm never loads"),
    "X.npy cut short": (_truncate, r"X\.npy .*: a damaged \.npy file"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_case_is_a_value_error_naming_its_file(suite, tmp_path, damage):
    """What ``mlsvm certify CASE`` reads. Before: KeyError or AttributeError ('unexpected error'),
    NumPy's advice to unpickle a file, and messages naming no file."""
    folder = tmp_path / "case"
    shutil.copytree(suite / "MatrixSVM-plain-linear", folder)
    load_case(folder)   # the undamaged folder reads
    apply, message = DAMAGES[damage]
    apply(folder)
    with pytest.raises(ValueError, match=message) as caught:
        load_case(folder)
    assert str(folder) in str(caught.value) and "allow_pickle" not in str(caught.value)
