"""`mlsvm export-reference` and `mlsvm certify` through a subprocess: a suite is written and
re-checked, the stored optimum certifies (exit 0, strict JSON), a perturbed one fails (exit 1)."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from mlsvm.testing.reference_suite import default_cases, export_reference


def _run(*args):
    return subprocess.run([sys.executable, "-m", "mlsvm.cli", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    directory = tmp_path_factory.mktemp("suite")
    export_reference(directory, [c for c in default_cases() if c.name == "MatrixSVM-plain-rbf"])
    return directory / "MatrixSVM-plain-rbf"


def test_the_suite_files_get_the_usual_mode(case):
    # written through a temporary file (mkstemp: mode 0600) and renamed: readable by whoever reads
    # a file this process would create, as a saved model is
    import os
    umask = os.umask(0)
    os.umask(umask)
    modes = {path.name: path.stat().st_mode & 0o777 for path in case.iterdir()}
    assert "case.json" in modes and len(modes) > 1
    assert set(modes.values()) == {0o666 & ~umask}, modes


def test_certify_the_stored_optimum_and_a_perturbed_one(case, tmp_path):
    solution = {"coef": np.load(case / "primal_coef.npy"), "alpha": np.load(case / "dual_alpha.npy")}
    good = tmp_path / "good.npz"
    np.savez(good, **solution)
    result = _run("certify", str(case), "--solution", str(good), "--json")
    assert result.returncode == 0, result.stderr
    certificate = json.loads(result.stdout)                       # strict JSON
    assert certificate["passed"] and certificate["suboptimality"] <= 1e-6
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"coef": (1.01 * solution["coef"]).tolist()}))
    result = _run("certify", str(case), "--solution", str(bad))
    assert result.returncode == 1 and "NOT OPTIMAL" in result.stdout and "suboptimality" in result.stdout
    assert "Traceback" not in result.stderr


def test_export_reference_check_and_bad_paths(case, tmp_path):
    result = _run("export-reference", str(case.parent), "--check")
    assert result.returncode == 0 and "1 cases checked, 0 problems" in result.stdout
    result = _run("certify", str(tmp_path / "missing"), "--solution", "x.npz")
    assert result.returncode == 2 and "is not an existing directory" in result.stderr
    result = _run("certify", str(case), "--solution", str(case / "case.json"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    damaged = tmp_path / "damaged.npz"
    good = tmp_path / "whole.npz"
    np.savez(good, coef=np.load(case / "primal_coef.npy"))
    damaged.write_bytes(good.read_bytes()[:60])
    result = _run("certify", str(case), "--solution", str(damaged))
    assert result.returncode == 2 and "Traceback" not in result.stderr and "unexpected" not in result.stderr
    assert f"{damaged} is not a readable solution file: a damaged .npz archive" in result.stderr


@pytest.mark.parametrize("text, message", [
    ("{not json", r"--solution .*bad\.json is not valid JSON: Expecting property name"),
    ('{"coef": [[1, 2], [3]]}', r"--solution .*bad\.json: 'coef' is not an array \(its rows differ in length\)"),
    ('{"coef": "abc"}', r"solution\['coef'\] must be an array of real numbers; got <U3"),
    ('{"coef": null}', r"solution\['coef'\] must be an array of real numbers; got object"),
])
def test_a_malformed_json_solution_is_an_error_naming_it(case, tmp_path, text, message):
    """Before: Python's JSON error or numpy's conversion messages, naming neither the file nor the entry."""
    (tmp_path / "bad.json").write_text(text)
    result = _run("certify", str(case), "--solution", str(tmp_path / "bad.json"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert re.search(message, result.stderr), result.stderr
