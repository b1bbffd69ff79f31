"""The verification core: QP residuals on a hand-solved QP, CVXPY status handling, FitReport."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsvm.verification import FitReport, GroundTruthError, qp_residuals, relative_difference, solve, solve_checked


def test_residuals_vanish_at_a_hand_solved_qp():
    # min ½‖x‖² − x1 − 2 x2  s.t. x1 + x2 = 1, 0 ≤ x ≤ 0.8  →  x = (0.2, 0.8); stationarity
    # x − c + y·1 + z_box = 0: y = 0.8 from coordinate 1 (free), z_box2 = 2 − 0.8 − 0.8 = 0.4.
    P, q = np.eye(2), np.array([-1.0, -2.0])
    x, y, z_box = np.array([0.2, 0.8]), np.array([0.8]), np.array([0.0, 0.4])
    res = qp_residuals(P, q, x, A=np.ones((1, 2)), b=np.ones(1), y=y, lb=np.zeros(2), ub=np.full(2, 0.8), z_box=z_box)
    assert max(res.values()) < 1e-15
    # a perturbed point shows up in the residual that describes it
    bad = qp_residuals(P, q, x + [0.1, 0.0], A=np.ones((1, 2)), b=np.ones(1), y=y, lb=np.zeros(2),
                       ub=np.full(2, 0.8), z_box=z_box)
    assert bad["primal"] > 0.01 and bad["dual"] > 0.01
    wrong_sign = qp_residuals(P, q, x, A=np.ones((1, 2)), b=np.ones(1), y=y, lb=np.zeros(2), ub=None, z_box=z_box)
    assert wrong_sign["dual"] > 0.1   # an upper multiplier without an upper bound


@given(st.integers(2, 8), st.integers(0, 10_000))
def test_residuals_of_a_cvxpy_solution_are_small(n, seed):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    P, q = M @ M.T + 0.1 * np.eye(n), rng.standard_normal(n)
    G, h = rng.standard_normal((3, n)), rng.random(3) + 0.1
    x = cp.Variable(n)
    ineq = G @ x <= h
    problem = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, P) + q @ x), [ineq])
    solve(problem, "CLARABEL")
    res = qp_residuals(P, q, x.value, G=G, h=h, z=ineq.dual_value)
    assert max(res.values()) < 1e-7


def test_non_optimal_status_is_an_error():
    x = cp.Variable()
    with pytest.raises(GroundTruthError, match="infeasible"):
        solve(cp.Problem(cp.Minimize(x), [x >= 1, x <= 0]), "CLARABEL")
    with pytest.raises(ValueError, match="cvxpy_solver must be one of"):
        solve(cp.Problem(cp.Minimize(x), [x >= 1]), "GUROBI")


def _overflowing_problem():
    """A QP whose loss weight 1e300 overflows SCS's iterates: SCS then prints "ERROR: could not
    determine problem status." (through ``sys.stdout``)."""
    x = cp.Variable(2)
    return cp.Problem(cp.Minimize(cp.sum_squares(x) + 1e300 * cp.sum(cp.pos(1 - x))))


def test_what_a_backend_prints_is_quoted_in_its_error_and_never_reaches_the_terminal(capfd):
    with pytest.raises(GroundTruthError, match="SCS failed.*the backend printed: 'ERROR: could not determine"):
        solve(_overflowing_problem(), "SCS")
    assert capfd.readouterr() == ("", "")


def test_a_fit_whose_last_resort_backend_prints_prints_nothing(capfd):
    # C = 1e300: water-filling overflows, and the fallback runs through ECOS and Clarabel to SCS,
    # which prints; the fit ends honestly, converged=False with the library's warning
    from sklearn.exceptions import ConvergenceWarning

    from mlsvm import BinaryApproachSVM
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(8, 3)), np.tile([[1, 0, 1], [0, 1, 0]], (4, 1))
    with pytest.warns(ConvergenceWarning):
        model = BinaryApproachSVM(C=1e300, kernel="linear").fit(X, Y)
    assert not model.fit_report_.converged
    assert capfd.readouterr() == ("", "")


def test_overlapping_backend_calls_each_read_their_output_and_restore_the_descriptors(capfd):
    # two threads inside the redirection at once (joblib's threading backend): the first one out
    # must not restore the terminal under the second, nor the last one leave it redirected
    import os
    import threading

    from mlsvm.solvers.cvxpy_tools import _BACKEND_OUTPUT

    inside, first_out = threading.Event(), threading.Event()
    texts = {}

    def second():
        with _BACKEND_OUTPUT.collected() as printed:
            inside.set()
            first_out.wait(10)
            os.write(1, b"second")
        texts["second"] = printed

    thread = threading.Thread(target=second)
    with _BACKEND_OUTPUT.collected() as printed:
        thread.start()
        inside.wait(10)
        os.write(2, b"first")
    texts["first"] = printed
    first_out.set()
    thread.join(10)
    os.write(1, b"after")
    assert texts["first"] == ["first"]
    assert texts["second"] == ["firstsecond"]   # what was written since it entered, the first's included
    assert capfd.readouterr() == ("after", "")
    assert _BACKEND_OUTPUT.depth == 0


@pytest.mark.parametrize("module, name, call", [("os", "dup2", 1), ("os", "dup2", 3), ("signal", "getsignal", 2)],
                         ids=["switching in", "switching back", "as the switch back begins"])
def test_ctrl_c_while_the_streams_switch_interrupts_once_they_are_restored(module, name, call, monkeypatch):
    # Ctrl-C arrives between any two bytecodes: here right after the redirection's first os.dup2 (fd 1
    # pointed at the backend's file, fd 2 not yet), its third (fd 1 restored, fd 2 not yet), or as the
    # switch back starts to hold Ctrl-C back. The first two used to leave a descriptor on the file:
    # `mlsvm verify` interrupted there exited 130, its message lost
    import importlib
    import os
    import signal
    import sys

    from mlsvm.solvers.cvxpy_tools import _BACKEND_OUTPUT

    def identity(fd):
        status = os.fstat(fd)
        return status.st_dev, status.st_ino

    owner = importlib.import_module(module)
    original, calls = getattr(owner, name), []

    def interrupted(*args):
        result = original(*args)
        calls.append(args)
        if len(calls) == call:
            signal.raise_signal(signal.SIGINT)
        return result

    streams, descriptors, kept = (sys.stdout, sys.stderr), [identity(1), identity(2)], [os.dup(1), os.dup(2)]
    # Python's own Ctrl-C handler, as in any terminal session: a test run started in the background
    # by a shell begins with SIGINT ignored, and raise_signal would then do nothing
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    monkeypatch.setattr(owner, name, interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            with _BACKEND_OUTPUT.collected():
                pass
        assert len(calls) >= call
        assert (sys.stdout, sys.stderr) == streams
        assert [identity(1), identity(2)] == descriptors
        assert _BACKEND_OUTPUT.depth == 0
    finally:   # whatever the outcome, the test run's own streams and handler back
        monkeypatch.undo()
        signal.signal(signal.SIGINT, handler)
        sys.stdout, sys.stderr = streams
        for fd, saved in zip((1, 2), kept):
            os.dup2(saved, fd)
            os.close(saved)


def test_backends_agree_or_raise():
    def build():
        x = cp.Variable(2)
        return cp.Problem(cp.Minimize(cp.sum_squares(x - [1.0, 2.0]) + cp.norm1(x)))
    agreement = solve_checked(build, ("CLARABEL", "ECOS"))
    assert agreement.relative_difference < 1e-8
    assert agreement.values["CLARABEL"] == pytest.approx(2.5)   # x = (0.5, 1.5): 0.25 + 0.25 + 2
    shifts = iter([0.0, 1e-3])

    def drifting():  # the second backend is handed a slightly different problem
        x = cp.Variable()
        return cp.Problem(cp.Minimize(cp.square(x - 1.0) + next(shifts)))
    with pytest.raises(GroundTruthError, match="disagree"):
        solve_checked(drifting, ("CLARABEL", "ECOS"))


def test_fit_report_gap():
    report = FitReport(10.0, 9.0, {"dual": 1e-9, "primal": 2e-9}, 3, True, 0.1, "x")
    assert report.duality_gap == 1.0 and report.relative_gap == pytest.approx(0.1)
    assert report.max_kkt == 2e-9
    assert report.as_dict()["relative_gap"] == pytest.approx(0.1)
    assert relative_difference(1e-9, 0.0) == 1e-9 and relative_difference(200.0, 100.0) == 0.5


def test_ipm_tools_step_to_the_boundary_and_packed_outer_products():
    from mlsvm.solvers.ipm_tools import max_step, packed_outer

    value = np.array([1.0, 2.0, 4.0])
    assert max_step(value, np.array([-2.0, 1.0, -1.0])) == 0.5      # the first hits 0 at t = ½
    assert max_step(value, np.array([1.0, 0.0, -1.0])) == 1.0       # capped at a full step
    matrix = np.random.default_rng(0).standard_normal((5, 4))
    weights = np.random.default_rng(1).random(5)
    packed, rows, cols = packed_outer(matrix)
    full = np.zeros((4, 4))
    full[rows, cols] = weights @ packed
    full[cols, rows] = weights @ packed
    np.testing.assert_allclose(full, matrix.T @ (weights[:, None] * matrix), rtol=1e-13)


def test_ridged_cholesky_adds_the_smallest_ridge_that_works_and_refuses_indefinite_systems():
    from scipy.linalg import LinAlgError

    from mlsvm.solvers.ipm_tools import ridged_cholesky

    vector = np.array([1.0, 1e-9, 1.0])
    singular = np.outer(vector, vector) * 1e16 + np.diag([0.0, 0.0, -1e-3])   # PD only up to round-off
    factor, lower = ridged_cholesky(singular)
    rebuilt = np.tril(factor) @ np.tril(factor).T
    assert np.max(np.abs(rebuilt - singular)) <= 1e-8 * 1e16                      # at most the 1e-8 ridge
    with pytest.raises(LinAlgError, match="even with a relative ridge of 1e-08"):
        ridged_cholesky(np.diag([1.0, -1.0]))
