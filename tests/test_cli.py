"""The command line, end to end through a subprocess."""

import json
import subprocess
import sys

import pytest


def _mlsvm(*args):
    return subprocess.run([sys.executable, "-m", "mlsvm.cli", *args], capture_output=True, text=True, timeout=600)


def test_verify_binary_svm_json():
    done = _mlsvm("verify", "--model", "binary_svm", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] and report["n_failed"] == 0 and report["n_checks"] >= 20
    solvers = {row["solver"] for row in report["checks"]}
    assert {"cvxpy", "cvxpy-crosscheck", "libsvm", "liblinear"} <= solvers
    assert all(row["relative_difference"] <= 1e-6 for row in report["checks"])


def test_verify_table_and_list():
    listed = _mlsvm("verify", "--model", "binary_svm", "--list")
    assert listed.returncode == 0 and "libsvm" in listed.stdout
    table = _mlsvm("verify", "--model", "binary_svm")
    assert table.returncode == 0
    assert "rel.diff" in table.stdout and " 0 failed" in table.stdout


def test_verify_with_no_checks_fails():
    done = _mlsvm("verify", "--model", "no_such_model")
    assert done.returncode == 1


@pytest.mark.parametrize("args", [["--help"], ["verify", "--help"]])
def test_help(args):
    done = _mlsvm(*args)
    assert done.returncode == 0 and "verify" in done.stdout
