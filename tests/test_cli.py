"""The command line, end to end through a subprocess: verify, fit / evaluate / save round trips
(multilabel and multiclass), on tiny files written to tmp_path."""

import json
import subprocess
import sys

import numpy as np
import pytest

from mlsvm.datasets import load_emotions, make_multiclass, make_multilabel
from mlsvm.metrics import all_metrics
from mlsvm.persistence import load_model


def _mlsvm(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "mlsvm.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=600, **kwargs)


def _strict_json(text):
    """JSON.parse semantics: NaN / Infinity are not JSON."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def _block(stdout: str, title: str) -> dict:
    """The metric lines printed under ``title`` as {name: value}."""
    lines = stdout.split(title, 1)[1].splitlines()[1:]
    values = {}
    for line in lines:
        if not line.startswith("  "):
            break
        name, value = line.split()[:2]
        values[name] = float(value)
    return values


def test_verify_binary_svm_json_is_strict_json():
    done = _mlsvm("verify", "--model", "binary_svm", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = _strict_json(done.stdout)   # used to hold bare NaN (not JSON)
    assert "NaN" not in done.stdout
    assert report["passed"] and report["n_failed"] == 0 and report["n_checks"] >= 20
    solvers = {row["solver"] for row in report["checks"]}
    assert {"cvxpy", "cvxpy-crosscheck", "libsvm", "liblinear"} <= solvers
    assert all(row["relative_difference"] <= 1e-6 for row in report["checks"])
    # a quantity a check does not measure is null, not a number
    assert any(row["duality_gap"] is None for row in report["checks"])


def test_verify_table_and_list():
    listed = _mlsvm("verify", "--model", "binary_svm", "--list")
    assert listed.returncode == 0 and "libsvm" in listed.stdout
    table = _mlsvm("verify", "--model", "binary_svm")
    assert table.returncode == 0
    assert "rel.diff" in table.stdout and " 0 failed" in table.stdout


def test_verify_list_json_and_both_spellings_of_a_model():
    underscores = _mlsvm("verify", "--model", "rank_svm", "--list", "--json")
    hyphens = _mlsvm("verify", "--model", "rank-svm", "--list", "--json")
    assert underscores.returncode == hyphens.returncode == 0, underscores.stderr + hyphens.stderr
    checks = _strict_json(hyphens.stdout)
    assert checks == _strict_json(underscores.stdout) and len(checks) > 0
    assert {check["model"] for check in checks} == {"rank_svm"}
    assert set(checks[0]) == {"model", "problem", "formulation", "solver"}


@pytest.mark.parametrize("args", [["--help"], ["verify", "--help"]])
def test_help(args):
    done = _mlsvm(*args)
    assert done.returncode == 0 and "verify" in done.stdout


def test_fit_help_lists_every_model_and_a_param_example_that_works(tmp_path):
    import mlsvm

    done = _mlsvm("fit", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert all(name in text for name in mlsvm._ESTIMATORS)
    assert "--param C=1 kernel=rbf" in text
    data = make_multilabel(12, 3, 2, random_state=0)
    path = tmp_path / "tiny.npz"
    np.savez(path, X=data.X, Y=data.Y)
    # the help's example, typed as written (it used to fail: 'unrecognized arguments: kernel=rbf')
    fitted = _mlsvm("fit", "MatrixSVM", "--train", path, "--param", "C=1", "kernel=rbf")
    assert fitted.returncode == 0, fitted.stderr
    assert "converged=True" in fitted.stdout


def _write_csv(path, X, y):
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    return path


@pytest.mark.parametrize("name, n_classes", [("SMSVM", 3), ("OvNSVM", 2)])
def test_single_label_column_is_multiclass_end_to_end(tmp_path, name, n_classes):
    """One label column holds classes: fit, metrics (on the one-hot indicator), save, evaluate. It
    used to fit, then fail with 'Y_pred has shape (150,); expected (150, 3)' and save nothing."""
    X, y = make_multiclass(30, 3, n_classes, random_state=1)
    train = _write_csv(tmp_path / "train.csv", X[:24], y[:24])
    test = _write_csv(tmp_path / "test.csv", X[24:], y[24:])
    model_file = tmp_path / "model.npz"
    fitted = _mlsvm("fit", name, "--train", train, "--test", test, "--labels", 1, "--out", model_file)
    assert fitted.returncode == 0, fitted.stderr
    assert f"{n_classes} classes" in fitted.stdout and "converged=True" in fitted.stdout
    model = load_model(model_file)
    for title, rows in (("training set:", slice(0, 24)), ("test set:", slice(24, 30))):
        printed = _block(fitted.stdout, title)
        predicted = model.predict(X[rows])
        # subset accuracy of the one-hot indicator is the plain accuracy
        assert printed["subset_accuracy"] == pytest.approx(np.mean(predicted == y[rows]), abs=5e-5)
        onehot = lambda labels: (labels[:, None] == np.arange(n_classes)).astype(int)  # noqa: E731
        scores = model.decision_function(X[rows])
        scores = np.column_stack([-scores, scores]) if scores.ndim == 1 else scores
        expected = all_metrics(onehot(y[rows]), onehot(predicted), scores)
        assert printed == pytest.approx({k: round(v, 4) for k, v in expected.items()}, abs=5e-5)
    evaluated = _mlsvm("evaluate", test, "--labels", 1, "--saved", model_file)
    assert evaluated.returncode == 0, evaluated.stderr
    assert _block(evaluated.stdout, "on test:") == _block(fitted.stdout, "test set:")


def test_multiclass_cross_validation_is_stratified(tmp_path):
    X, y = make_multiclass(30, 3, 3, random_state=2)
    data = _write_csv(tmp_path / "data.csv", X, y)
    done = _mlsvm("evaluate", data, "--labels", 1, "--model", "SMSVM", "--cv", 3, "--param", "lam=0.5")
    assert done.returncode == 0, done.stderr
    assert "StratifiedKFold" in done.stdout and "subset_accuracy" in done.stdout


def test_class_labels_in_an_npz_file(tmp_path):
    X, y = make_multiclass(24, 3, 3, random_state=3)
    path = tmp_path / "data.npz"
    np.savez(path, X=X, Y=y + 10)   # 1-D Y: class labels 10, 11, 12
    done = _mlsvm("fit", "OvNSVM", "--train", path)
    assert done.returncode == 0, done.stderr
    assert "3 classes (10, 11, 12; multiclass)" in done.stdout


@pytest.mark.realdata
def test_fit_save_evaluate_round_trip_on_emotions(datasets_dir, tmp_path):
    """Matrix-SVM (RBF) on emotions with standardized features: converges in well under a second
    (raw emotions ran the gradient solver to its 50,000-iteration budget without converging). The
    certificate says converged, and the reloaded model prints the same metrics."""
    emotions = load_emotions()
    X = (emotions.X - emotions.X.mean(axis=0)) / emotions.X.std(axis=0)
    data = tmp_path / "emotions-standardized.npz"
    np.savez(data, X=X, Y=emotions.Y)
    model = tmp_path / "model.npz"
    fitted = _mlsvm("fit", "MatrixSVM", "--train", data, "--param", "C=1", "kernel=rbf", "--out", model)
    assert fitted.returncode == 0, fitted.stderr
    certificate = fitted.stdout.splitlines()[1]
    assert "rel. gap" in certificate and certificate.endswith("converged=True"), certificate
    assert "ConvergenceWarning" not in fitted.stderr and model.is_file()
    evaluated = _mlsvm("evaluate", data, "--saved", model)
    assert evaluated.returncode == 0, evaluated.stderr
    # the training-set metrics printed by fit are the ones the reloaded model gives
    assert _block(evaluated.stdout, "emotions-standardized:") == _block(fitted.stdout, "training set:")
    assert len(_block(fitted.stdout, "training set:")) == 12
