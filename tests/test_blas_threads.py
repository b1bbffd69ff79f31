"""A fit runs with one BLAS thread unless ``MLSVM_BLAS_THREADS`` asks for more, and leaves the
caller's setting as it found it (mlsvm/solvers/blas_threads.py; why: docs/tooling.md)."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import mlsvm
import mlsvm.estimators._base as base
import mlsvm.solvers.blas_threads as blas_threads_module
from mlsvm.datasets import make_multilabel
from mlsvm.solvers.blas_threads import blas_threads, requested_threads


def _blas_threads() -> set:
    return {entry["num_threads"] for entry in threadpool_info() if entry["user_api"] == "blas"}


@pytest.fixture
def two_threads():
    """The caller's setting: two BLAS threads (what OpenBLAS grants on this machine)."""
    with threadpool_limits(limits=2, user_api="blas"):
        yield _blas_threads()


@pytest.fixture
def seen_by_solver(monkeypatch):
    """The BLAS threads each registry solve of a fit ran with."""
    seen = []
    run = base.registry.run

    def recording(*args, **kwargs):
        seen.append(_blas_threads())
        return run(*args, **kwargs)

    monkeypatch.setattr(base.registry, "run", recording)
    return seen


def test_a_fit_runs_its_solver_on_one_blas_thread_and_restores_the_callers(two_threads, seen_by_solver,
                                                                            monkeypatch):
    monkeypatch.delenv("MLSVM_BLAS_THREADS", raising=False)
    data = make_multilabel(30, 3, 3, random_state=0)
    mlsvm.RankSVM().fit(data.X, data.Y)
    assert seen_by_solver == [{1}]
    assert _blas_threads() == two_threads


def test_the_environment_variable_sets_the_threads_of_a_fit(two_threads, seen_by_solver, monkeypatch):
    monkeypatch.setenv("MLSVM_BLAS_THREADS", "2")
    data = make_multilabel(30, 3, 3, random_state=0)
    mlsvm.MatrixSVM().fit(data.X, data.Y)
    assert seen_by_solver == [two_threads]
    for value, message in [("0", r"must lie in \[1, inf\]; got 0"), ("-1", r"must lie in \[1, inf\]; got -1"),
                           ("two", "must be an integer; got 'two'"), ("1.5", "must be an integer; got '1.5'")]:
        monkeypatch.setenv("MLSVM_BLAS_THREADS", value)
        with pytest.raises(ValueError, match=rf"MLSVM_BLAS_THREADS {message}"):
            requested_threads()


def test_concurrent_fits_restore_the_setting_only_when_the_last_one_ends(monkeypatch):
    """The setting is process-wide: with fits in threads (joblib's threading backend), a fit that
    ends while another runs must not give the other its threads back. The contexts' count is
    checked on a recording controller (OpenBLAS itself ignores a thread's setting once the main
    thread has set one, so real threads could not show it)."""
    monkeypatch.delenv("MLSVM_BLAS_THREADS", raising=False)
    calls = []

    class Recording:
        def limit(self, limits, user_api):
            calls.append(("limit", limits, user_api))
            return SimpleNamespace(restore_original_limits=lambda: calls.append(("restore",)))

    monkeypatch.setitem(blas_threads_module._state, "controller", Recording())
    first_inside, second_inside, first_left = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with blas_threads():
            first_inside.set()
            second_inside.wait(5)
        first_left.set()

    def second():
        first_inside.wait(5)
        with blas_threads():
            second_inside.set()
            first_left.wait(5)
            seen["while the second runs"] = list(calls)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"while the second runs": [("limit", 1, "blas")]}
    assert calls == [("limit", 1, "blas"), ("restore",)]


def test_the_setting_is_restored_when_the_fit_fails(two_threads, monkeypatch):
    monkeypatch.delenv("MLSVM_BLAS_THREADS", raising=False)
    with pytest.raises(ValueError, match="C must lie in"):
        mlsvm.RankSVM(C=-1.0).fit(np.eye(3), np.eye(3, dtype=int))
    assert _blas_threads() == two_threads
