"""Every bad command line is one clear line on stderr (exit 2), found before any work, never a
traceback: paths checked up front, names in either spelling, saved models validated, Ctrl-C."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mlsvm.datasets import make_multilabel


def _mlsvm(*args):
    return subprocess.run([sys.executable, "-m", "mlsvm.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def _fails_clearly(done, *fragments, status=2):
    """One error line naming the problem, the status asked, no traceback and no work done."""
    assert done.returncode == status, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    assert "training set:" not in done.stdout   # nothing was fitted
    for fragment in fragments:
        assert fragment in done.stderr, done.stderr


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = tmp_path_factory.mktemp("data")
    data = make_multilabel(12, 3, 2, random_state=0)
    path = folder / "tiny.npz"
    np.savez(path, X=data.X, Y=data.Y)
    return path


def _unwritable_dir(tmp_path) -> Path:
    """A directory no file can be created in: a read-only one, or for root (who ignores the mode)
    sysfs, where even root cannot create files."""
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        return locked
    return Path("/sys")


def test_outputs_and_inputs_are_checked_before_training(tiny, tmp_path):
    fit = ("fit", "MatrixSVM", "--train", tiny)
    _fails_clearly(_mlsvm(*fit, "--out", "/no/such/dir/m.npz"),
                   "cannot write /no/such/dir/m.npz: the directory /no/such/dir does not exist")
    _fails_clearly(_mlsvm(*fit, "--out", tmp_path), f"{tmp_path} is a directory; expected a file name")
    _fails_clearly(_mlsvm(*fit, "--out", ""), "--out is empty")
    locked = _unwritable_dir(tmp_path)
    _fails_clearly(_mlsvm(*fit, "--out", locked / "m.npz"), f"cannot write {locked / 'm.npz'}: cannot create files in")
    _fails_clearly(_mlsvm(*fit, "--test", tmp_path / "absent.npz"), f"--test {tmp_path / 'absent.npz'} does not exist")
    _fails_clearly(_mlsvm("fit", "MatrixSVM", "--train", tmp_path / "absent.csv"), "does not exist")
    _fails_clearly(_mlsvm("fit", "MatrixSVM", "--train", tmp_path), "is a directory; expected a file")
    (tmp_path / "data.txt").write_text("1,2\n")
    _fails_clearly(_mlsvm("fit", "MatrixSVM", "--train", tmp_path / "data.txt"), "unsupported format '.txt'")
    (tmp_path / "data.csv").write_text("1,2,1\n3,4,0\n")
    _fails_clearly(_mlsvm("fit", "MatrixSVM", "--train", tmp_path / "data.csv"), "needs --labels N")
    _fails_clearly(_mlsvm("evaluate", tiny, "--saved", tmp_path / "absent.npz"), "does not exist")
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".npz") == []   # nothing written
    # the model written over the data it was trained on (a typo away): the data file was replaced
    data = tmp_path / "data.npz"
    data.write_bytes(tiny.read_bytes())
    _fails_clearly(_mlsvm("fit", "MatrixSVM", "--train", data, "--out", data),
                   f"--out {data} is the --train file: the model would replace the data")
    _fails_clearly(_mlsvm("fit", "MatrixSVM", "--train", tiny, "--test", data, "--out", tmp_path / "." / "data.npz"),
                   "is the --test file")
    assert data.read_bytes() == tiny.read_bytes()


def test_a_saved_model_goes_only_where_asked_and_whole(tiny, tmp_path):
    out = tmp_path / "model.npz"
    done = _mlsvm("fit", "MatrixSVM", "--train", tiny, "--out", out)
    assert done.returncode == 0, done.stderr
    assert f"saved to {out}" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.npz"]   # no temporary left beside it


def test_names_in_either_spelling_and_unknown_names_listed(tmp_path):
    _fails_clearly(_mlsvm("verify", "--model", "bogus"),
                   "unknown model 'bogus'; choose one of binary_svm, matrix_svm, mlodm, ovn, rank_binary, rank_svm")
    _fails_clearly(_mlsvm("fit", "NoSuchSVM", "--train", "x.npz"), "unknown model 'NoSuchSVM'; choose one of RankSVM")
    _fails_clearly(_mlsvm("reproduce", "bogus"), "unknown paper (or 'all') 'bogus'; choose one of matrix-svm")
    # rank_svm is accepted (the failure is the output directory, checked next)
    locked = _unwritable_dir(tmp_path)
    _fails_clearly(_mlsvm("reproduce", "rank_svm", "--out-dir", locked / "reports"), "--out-dir", "cannot write")
    _fails_clearly(_mlsvm("bench", "bogus", "--dir", tmp_path), f"no bench_*.py script in {tmp_path}")
    (tmp_path / "bench_matrix_svm.py").write_text("print('matrix benchmark ran')\n")
    _fails_clearly(_mlsvm("bench", "bogus", "--dir", tmp_path), "unknown benchmark 'bogus'; choose one of matrix_svm")
    ran = _mlsvm("bench", "matrix-svm", "--dir", tmp_path)
    assert ran.returncode == 0 and "matrix benchmark ran" in ran.stdout, ran.stderr


def test_reproduce_names_are_the_papers():
    from mlsvm.cli import PAPERS
    from mlsvm.reproduce import PAPERS as MODULES

    assert sorted(PAPERS) == sorted(MODULES)


def test_bad_params_name_the_valid_ones(tiny):
    _fails_clearly(_mlsvm("fit", "SMSVM", "--train", tiny, "--param", "C=1"),
                   "SMSVM has no hyperparameter 'C'; its hyperparameters:", "lam")
    _fails_clearly(_mlsvm("fit", "MatrixSVM", "--train", tiny, "--param", "C"), "--param expects NAME=VALUE; got 'C'")
    _fails_clearly(_mlsvm("fit", "MatrixSVM", "--train", tiny, "--param", "C=-1"), "C must lie in (0.0, inf]")
    _fails_clearly(_mlsvm("fit", "MatrixSVM", "--train", tiny, "--labels", "0"), "must be at least 1", status=2)


def test_arguments_are_checked_with_light_imports_only(tiny, tmp_path):
    """Bad arguments fail before scikit-learn, CVXPY or an estimator is imported (those took 2-7 s)."""
    cases = [["fit", "NoSuchSVM", "--train", str(tiny)],
             ["fit", "MatrixSVM", "--train", str(tiny), "--out", "/no/such/dir/m.npz"],
             ["fit", "MatrixSVM", "--train", str(tiny), "--test", str(tmp_path / "absent.npz")],
             ["fit", "MatrixSVM", "--train", str(tiny), "--param", "C"],
             ["verify", "--model", "bogus"],
             ["reproduce", "bogus"],
             ["evaluate", str(tiny), "--saved", str(tmp_path / "absent.npz")]]
    probe = ("import sys\nfrom mlsvm.cli import main\n"
             "status = main(sys.argv[1:])\n"
             "heavy = sorted(m for m in ('sklearn', 'cvxpy', 'scipy', 'mlsvm.estimators', 'mlsvm.datasets') "
             "if m in sys.modules)\n"
             "print('HEAVY', status, heavy)\n")
    for case in cases:
        done = subprocess.run([sys.executable, "-c", probe, *case], capture_output=True, text=True, timeout=120)
        assert "HEAVY 2 []" in done.stdout, (case, done.stdout, done.stderr)


def test_yeast_like_label_count_mismatch_warns_naming_the_column(tmp_path):
    header = "@relation t\n@attribute f1 numeric\n@attribute f2 numeric\n" + "".join(
        f"@attribute Class{k} {{0,1}}\n" for k in range(1, 4))
    rows = [f"{i % 3}.5,{i * 0.7 % 2:.2f},{i % 2},{(i + 1) % 2},{int(i % 3 == 0)}" for i in range(8)]
    path = tmp_path / "t.arff"
    path.write_text(header + "@data\n" + "\n".join(rows) + "\n")
    done = _mlsvm("fit", "MatrixSVM", "--train", path, "--labels", 2)
    assert done.returncode == 0, done.stderr
    assert "1 of them ('Class1') are read as features" in done.stderr and "pass n_labels=3" in done.stderr
    assert "Traceback" not in done.stderr


def test_damaged_data_files_are_clear(tiny, tmp_path):
    """A truncated .npz and a ragged CSV: one line naming the file (and the line), no traceback."""
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(tiny.read_bytes()[:100])
    _fails_clearly(_mlsvm("fit", "MatrixSVM", "--train", truncated),
                   f"{truncated} is not a readable data file: a damaged .npz archive")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("1,2,0\n3,4,1\n5,6\n")
    _fails_clearly(_mlsvm("evaluate", ragged, "--labels", "1", "--model", "MatrixSVM"),
                   f"{ragged}:3: 2 columns where the lines before have 3")


def test_cross_validation_problems_are_clear(tmp_path):
    """A seed outside scikit-learn's range is an argument error; a class too small for the folds is
    named with the class sizes, not reported as a fold's "Y has one class"."""
    rare = tmp_path / "rare.npz"
    np.savez(rare, X=np.random.default_rng(0).random((10, 2)), Y=np.array([0] * 9 + [1]))
    _fails_clearly(_mlsvm("evaluate", rare, "--model", "SMSVM", "--seed", "-1"),
                   "argument --seed: must be at least 0; got -1")
    _fails_clearly(_mlsvm("evaluate", rare, "--model", "SMSVM", "--cv", "3"),
                   "--cv 3: a fold's training part holds only class 0 (class sizes: {0: 9, 1: 1})")


def test_saved_model_problems_are_clear(tiny, tmp_path):
    import pickle

    not_a_model = tmp_path / "model.pkl"
    not_a_model.write_bytes(pickle.dumps({"x": 1}))
    done = _mlsvm("evaluate", tiny, "--saved", not_a_model)
    _fails_clearly(done, "not a readable mlsvm model file")
    assert "allow_pickle" not in done.stderr and "pickle.load" not in done.stderr
    model = tmp_path / "model.npz"
    assert _mlsvm("fit", "MatrixSVM", "--train", tiny, "--out", model).returncode == 0
    arrays = dict(np.load(model, allow_pickle=False))
    meta = json.loads(arrays["__meta__"].tobytes())
    meta["params"]["C"] = -5
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(tmp_path / "edited.npz", **arrays)
    _fails_clearly(_mlsvm("evaluate", tiny, "--saved", tmp_path / "edited.npz"),
                   "invalid hyperparameter: C must lie in (0.0, inf]; got -5")
    bad = tmp_path / "garbage.npz"
    bad.write_bytes(b"garbage")
    _fails_clearly(_mlsvm("evaluate", tiny, "--saved", bad), "not a readable mlsvm model file")


def test_a_cvxpy_backend_without_an_answer_is_one_line_naming_the_alternatives(tmp_path, monkeypatch, capsys):
    """``--param solver=cvxpy`` whose backend returns no point: no model, one line naming the backend
    and the alternatives, status 1 (not "unexpected error"), nothing written."""
    from mlsvm.cli import main
    from mlsvm.solvers import cvxpy_tools

    def no_answer(problem, solver="CLARABEL", **options):
        raise cvxpy_tools.GroundTruthError(f"CVXPY backend {solver} failed: Solver {solver!r} failed.")

    monkeypatch.setattr(cvxpy_tools, "solve", no_answer)
    rng = np.random.default_rng(0)
    data = tmp_path / "train.npz"
    np.savez(data, X=rng.standard_normal((8, 2)), Y=np.array([[1, 0], [0, 1]] * 4))
    model = tmp_path / "model.npz"
    status = main(["fit", "MatrixSVM", "--train", str(data), "--param", "solver=cvxpy", "--out", str(model)])
    err = capsys.readouterr().err
    assert status == 1 and not model.exists(), err
    assert err.count("\n") == 1 and "unexpected" not in err and "Traceback" not in err
    assert err.startswith("mlsvm fit: CVXPY backend CLARABEL returned no solution")
    assert "'ECOS', 'OSQP', 'SCS'" in err and "solver='fast'" in err


def _sigint_default():
    """Run in the child before exec: SIGINT at its default disposition, as a terminal's Ctrl-C finds
    a program. A test run started in the background without job control (``pytest … &`` in a
    script) ignores SIGINT, its children inherit that, Python then installs no KeyboardInterrupt
    handler and the signal below would do nothing: the run would finish with status 0."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_is_one_line_and_status_130():
    process = subprocess.Popen([sys.executable, "-m", "mlsvm.cli", "verify", "--model", "matrix_svm"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_sigint_default)
    process.stdout.readline()        # the table header: main() is running, the checks start
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert stderr.strip() == "mlsvm verify: interrupted"


BACKEND_UNDER_CTRL_C = """
import sys
import cvxpy as cp, numpy as np
from cvxpy.reductions.solvers.solving_chain import SolvingChain
from mlsvm.solvers import cvxpy_tools
backend = sys.argv[1]
raw = {}
call = SolvingChain.solve_via_data
def recording(self, *args, **kwargs):   # the backend's raw answer, whatever CVXPY makes of it
    raw["answer"] = call(self, *args, **kwargs)
    return raw["answer"]
SolvingChain.solve_via_data = recording
A = np.random.default_rng(0).standard_normal((600, 200))
x = cp.Variable(200)
problem = cp.Problem(cp.Minimize(cp.sum_squares(A @ x - 1) + cp.norm1(x)), [x >= -1, x <= 1])
options = {"OSQP": dict(max_iter=10**9, eps_abs=1e-15, eps_rel=1e-15, polishing=False, time_limit=30.0),
           "SCS": dict(max_iters=10**9, eps_abs=1e-15, eps_rel=1e-15, time_limit_secs=30.0)}[backend]
print("START", flush=True)
try:   # tolerances it cannot reach: it iterates until interrupted (or its 30 s time limit)
    cvxpy_tools.solve(problem, backend, **options)
    print("RESULT finished")
except KeyboardInterrupt:
    answer = raw.get("answer")
    status = (answer.info.status_val if backend == "OSQP" else answer["info"]["status_val"]) if answer else None
    interrupted = {"OSQP": cvxpy_tools.OSQP_INTERRUPTED, "SCS": cvxpy_tools.SCS_INTERRUPTED}[backend]
    print("RESULT KeyboardInterrupt", "inside the backend" if status == interrupted else "before the backend")
except Exception as exc:
    print("RESULT", type(exc).__name__)
"""


@pytest.mark.parametrize("backend", ["OSQP", "SCS"])
def test_ctrl_c_inside_a_backend_is_a_keyboard_interrupt_not_a_failed_solve(backend):
    """OSQP and SCS catch SIGINT themselves and return "interrupted by user" (CVXPY: SolverError),
    which would make Ctrl-C during a verify row a failed check and the program go on. The signal is
    sent a while after the solve starts; should it arrive before the backend iterates (a loaded
    machine), the run is repeated with a longer wait, so the test always ends with a signal that
    the backend caught."""
    for wait in (1.0, 3.0, 9.0):
        process = subprocess.Popen([sys.executable, "-c", BACKEND_UNDER_CTRL_C, backend],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   preexec_fn=_sigint_default)
        assert process.stdout.readline().strip() == "START"
        time.sleep(wait)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
        result = [line for line in stdout.splitlines() if line.startswith("RESULT")]
        assert result and result[0].startswith("RESULT KeyboardInterrupt"), (stdout[-500:], stderr[-500:])
        if result[0] == "RESULT KeyboardInterrupt inside the backend":
            return
    pytest.fail(f"the signal never arrived while {backend} iterated")


def test_an_osqp_interrupted_status_raises_keyboard_interrupt(monkeypatch):
    """The same without a signal: a solve whose raw OSQP status is "interrupted by user"."""
    from types import SimpleNamespace

    import cvxpy as cp

    from mlsvm.solvers import cvxpy_tools

    x = cp.Variable()
    problem = cp.Problem(cp.Minimize(cp.square(x - 1)))

    def interrupted(*args, **kwargs):
        problem._solver_cache["OSQP"] = (None, None, SimpleNamespace(info=SimpleNamespace(
            status_val=cvxpy_tools.OSQP_INTERRUPTED)))
        raise cp.error.SolverError("Solver 'OSQP' failed.")

    monkeypatch.setattr(problem, "solve", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cvxpy_tools.solve(problem, "OSQP")
    monkeypatch.setattr(problem, "solve", lambda *a, **k: 1.0)   # a different status: no interrupt
    problem._solver_cache["OSQP"] = (None, None, SimpleNamespace(info=SimpleNamespace(status_val=1)))
    with pytest.raises(cvxpy_tools.GroundTruthError):
        cvxpy_tools.solve(problem, "OSQP")
