"""Loading a saved model validates it like a fresh estimator; foreign files are clear errors that
never suggest unpickling; outputs are checked before any work and written atomically."""

import json
import os
import pickle
import warnings

import numpy as np
import pytest

import mlsvm
from mlsvm.datasets import make_multiclass, make_multilabel
from mlsvm.persistence import ModelFileError, atomic_write, check_writable, load_model, save_model


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """One small fitted model per kind of state: multilabel (kernel rbf), multiclass, sparse basis."""
    folder = tmp_path_factory.mktemp("models")
    data = make_multilabel(20, 3, 3, random_state=0)
    X, y = make_multiclass(24, 3, 3, random_state=0)
    paths = {}
    for name, model, target in [("MatrixSVM", mlsvm.MatrixSVM(C=1.0), (data.X, data.Y)),
                                ("OvNSVM", mlsvm.OvNSVM(alpha=0.2), (X, y)),
                                ("SM3L", mlsvm.SM3L(lam=0.1, d_max=5, random_state=0), (data.X, data.Y)),
                                ("MLODM", mlsvm.MLODM(), (data.X, data.Y))]:
        paths[name] = save_model(model.fit(*target), folder / f"{name}.npz")
    return paths


def _tamper(source, target, change):
    arrays = dict(np.load(source, allow_pickle=False))
    meta = json.loads(arrays["__meta__"].tobytes())
    change(meta)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    np.savez(target, **arrays)
    return target


def test_saved_models_load_and_pass_their_own_checks(saved):
    for path in saved.values():
        load_model(path)


@pytest.mark.parametrize("name, change, match", [
    ("MatrixSVM", lambda m: m["params"].update(C=-5), r"invalid hyperparameter: C must lie in \(0\.0, inf\]; got -5"),
    ("MatrixSVM", lambda m: m["params"].update(loss="cubic"), "loss must be one of"),
    ("MatrixSVM", lambda m: m["params"].update(kernel="bogus"), "kernel must be one of"),
    ("MatrixSVM", lambda m: m["params"].update(gamma=0.5), "its hyperparameters give the kernel"),
    ("MatrixSVM", lambda m: m["params"].update(solver="magic"), "solver must be one of"),
    ("MatrixSVM", lambda m: m["params"].update(tol=0), "tol must lie in"),
    ("OvNSVM", lambda m: m["params"].update(alpha=-0.6), r"alpha must lie in \(-0\.5, 1"),   # K = 3 classes
    ("SM3L", lambda m: m["params"].update(d_max=1000), r"d_max must lie in \[1, 20\]"),
    ("SM3L", lambda m: m["params"].update(lam=0), "lam must lie in"),
    ("MLODM", lambda m: m["params"].update(theta=2.0), "theta must lie in"),
    ("MatrixSVM", lambda m: m.update(estimator="MatrixSVMv2"), r"unknown estimator 'MatrixSVMv2'.*known: \["),
    ("MatrixSVM", lambda m: m["params"].update(Cee=1), r"hyperparameters \['Cee'\] that it does not have"),
    ("MatrixSVM", lambda m: m["state"]["fit_report_"].update(__dataclass__=["mlsvm.verification.report", "Report"]),
     "not allowed"),
    ("MatrixSVM", lambda m: m["state"]["fit_report_"]["fields"].update(renamed_field=1.0),
     r"FitReport fields \['renamed_field'\] that this mlsvm does not have"),
    ("MatrixSVM", lambda m: m["state"].update(_fit=1), "would hide MatrixSVM._fit"),
    ("MatrixSVM", lambda m: m["state"].update(predict=1), "not a fitted-state name"),
    ("MatrixSVM", lambda m: m["state"].update(n_features_in_=2), "fitted arrays do not fit together"),
    ("MatrixSVM", lambda m: m["state"].pop("fit_report_"), "has no fit_report_"),
])
def test_tampered_metadata_is_a_model_file_error(saved, tmp_path, name, change, match):
    path = _tamper(saved[name], tmp_path / "tampered.npz", change)
    with pytest.raises(ModelFileError, match=match):
        load_model(path)


@pytest.mark.parametrize("name, attribute, change, match", [
    ("MatrixSVM", "dual_coef_", lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0, np.nan, a),
     "fitted array dual_coef_ holds NaN or infinite values"),
    ("MLODM", "coef_", lambda a: np.full_like(a, -np.inf), "fitted array coef_ holds NaN or infinite"),
    ("MatrixSVM", "alpha_", lambda a: np.full(a.shape, "x"), "fitted array alpha_ holds <U1 values, not numbers"),
    ("MatrixSVM", "dual_coef_", lambda a: np.full_like(a, 1e308), "decision values of X overflow float64"),
])
def test_tampered_fitted_arrays_are_a_model_file_error(saved, tmp_path, name, attribute, change, match):
    """A hand-edited array loaded, and the model predicted NaN: the probe read only the decision
    values' shape. An array predict does not read (alpha_) loaded as strings. No numpy warning."""
    arrays = dict(np.load(saved[name], allow_pickle=False))
    key = json.loads(arrays["__meta__"].tobytes())["state"][attribute]["__array__"]
    arrays[key] = change(arrays[key])
    np.savez(tmp_path / "tampered.npz", **arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ModelFileError, match=match):
            load_model(tmp_path / "tampered.npz")


def test_a_fitted_state_predict_cannot_read_is_a_model_file_error(saved, tmp_path):
    """predict reads state that decision_function does not (the indicator dtype): the probe runs both."""
    path = _tamper(saved["MatrixSVM"], tmp_path / "tampered.npz", lambda m: m["state"].update(_indicator_dtype="x"))
    with pytest.raises(ModelFileError, match=r"fitted arrays do not fit together \(TypeError"):
        load_model(path)


def test_foreign_files_never_suggest_unpickling(tmp_path):
    cases = {"arr.npy": lambda p: np.save(p, np.ones(3)),
             "objects.npz": lambda p: np.savez(p, a=np.array([{"a": 1}], dtype=object)),
             "model.pkl": lambda p: p.write_bytes(pickle.dumps({"x": 1})),
             "data.csv": lambda p: p.write_text("1,2,3\n4,5,6\n")}
    for name, write in cases.items():
        path = tmp_path / name
        write(path)
        with pytest.raises(ModelFileError, match="not an mlsvm model|not a readable mlsvm model") as caught:
            load_model(path)
        assert "allow_pickle" not in str(caught.value) and "pickle.load" not in str(caught.value)
    with pytest.raises(ModelFileError, match="is a directory"):
        load_model(tmp_path)
    with pytest.raises(FileNotFoundError, match="model file not found"):
        load_model(tmp_path / "absent.npz")


def test_outputs_are_checked_before_writing_and_errors_name_the_target(tmp_path):
    with pytest.raises(ValueError, match="output file name is empty"):
        check_writable("")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        check_writable(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"the directory .*no-dir does not exist"):
        atomic_write(tmp_path / "no-dir" / "m.npz", lambda handle: handle.write(b"x"))
    (tmp_path / "plain").write_text("")
    with pytest.raises(FileNotFoundError, match="plain is not a directory"):
        check_writable(tmp_path / "plain" / "m.npz")
    if os.geteuid() != 0:   # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(PermissionError, match="no permission to create files in"):
            check_writable(locked / "m.npz")


def test_a_failed_write_leaves_neither_half_a_file_nor_a_temporary(tmp_path):
    target = tmp_path / "m.npz"
    target.write_bytes(b"previous")

    def explode(handle):
        handle.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, explode)
    assert target.read_bytes() == b"previous" and sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
