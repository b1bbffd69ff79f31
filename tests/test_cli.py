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


@pytest.mark.realdata
def test_fit_save_evaluate_round_trip_on_emotions(datasets_dir, tmp_path):
    data = str(datasets_dir / "emotions.arff")
    model = tmp_path / "model.npz"
    fitted = _mlsvm("fit", "MatrixSVM", "--train", data, "--labels", "6", "--param", "C=1",
                    "--param", "kernel=rbf", "--out", str(model))
    assert fitted.returncode == 0, fitted.stderr
    assert "rel. gap" in fitted.stdout and model.is_file()
    evaluated = _mlsvm("evaluate", data, "--labels", "6", "--saved", str(model))
    assert evaluated.returncode == 0, evaluated.stderr
    # the training-set metrics printed by fit are the ones the reloaded model gives
    train_block = fitted.stdout.split("training set:")[1].splitlines()[1:13]
    assert train_block == evaluated.stdout.splitlines()[1:13]


def test_corrupt_model_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "model.npz"
    bad.write_bytes(b"garbage")
    data = tmp_path / "data.npz"
    import numpy as np
    np.savez(data, X=np.ones((4, 2)), Y=np.array([[0, 1], [1, 0], [0, 1], [1, 0]]))
    done = _mlsvm("evaluate", str(data), "--saved", str(bad))
    assert done.returncode == 2
    assert "not a readable mlsvm model file" in done.stderr and "Traceback" not in done.stderr


def test_unknown_model_and_bad_param():
    assert _mlsvm("fit", "NoSuchSVM", "--train", "x.npz").returncode != 0
