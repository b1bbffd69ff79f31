"""A fit runs with one BLAS thread unless ``MLSVM_BLAS_THREADS`` asks for more, and leaves the
caller's setting as it found it (mlsvm/solvers/blas_threads.py; why: docs/tooling.md)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from threadpoolctl import OpenBLASController, threadpool_info, threadpool_limits

import mlsvm
import mlsvm.estimators._base as base
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
def released_two_threads():
    """Two BLAS threads set by a call that, unlike the context manager, holds no thread's control
    of OpenBLAS (threadpoolctl 3.8): a caller's setting that any thread may change."""
    release = getattr(OpenBLASController, "clear_controlling_thread", lambda: None)   # before 3.8: no control
    limiter = threadpool_limits(limits=2, user_api="blas")
    release()
    yield _blas_threads()
    limiter.restore_original_limits()
    release()


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


def _fit_in_a_live_thread(fit):
    """Run ``fit`` in a thread that lives on until the returned function ends it (a pool's worker)."""
    done, end = threading.Event(), threading.Event()

    def run():
        try:
            fit()
        finally:
            done.set()
            end.wait(10)

    thread = threading.Thread(target=run)
    thread.start()
    done.wait(10)
    return lambda: (end.set(), thread.join(10))


def test_fits_in_other_threads_get_their_threads_too(released_two_threads, seen_by_solver, monkeypatch):
    """threadpoolctl 3.8 lets one thread at a time set OpenBLAS's (process-wide) threads: the first
    thread to set them holds that control until it is released or dies. A fit took it and kept it, so
    after one fit in the main thread a fit in a worker thread ran on the caller's two threads, and
    after one fit in a live worker no later fit of the main thread was limited."""
    monkeypatch.delenv("MLSVM_BLAS_THREADS", raising=False)
    data = make_multilabel(30, 3, 3, random_state=0)
    mlsvm.RankSVM().fit(data.X, data.Y)
    stop = _fit_in_a_live_thread(lambda: mlsvm.RankSVM().fit(data.X, data.Y))
    assert _blas_threads() == released_two_threads   # the worker's fit restored the caller's setting
    mlsvm.RankSVM().fit(data.X, data.Y)              # while that worker is still alive
    stop()
    assert seen_by_solver == [{1}, {1}, {1}]
    assert _blas_threads() == released_two_threads


def test_concurrent_fits_restore_the_setting_only_when_the_last_one_ends(released_two_threads, monkeypatch):
    """The setting is process-wide: with fits in threads (joblib's threading backend), a fit that
    ends while another runs must not give the other its threads back, and the last to end restores
    the caller's, whichever thread it runs in (the first thread lives on, as a pool's worker)."""
    monkeypatch.delenv("MLSVM_BLAS_THREADS", raising=False)
    first_inside, second_inside, first_left = threading.Event(), threading.Event(), threading.Event()
    looked = threading.Event()
    seen = {}

    def first():
        with blas_threads():
            first_inside.set()
            second_inside.wait(5)
        first_left.set()
        looked.wait(10)

    def second():
        first_inside.wait(5)
        with blas_threads():
            second_inside.set()
            first_left.wait(5)
            seen["while the second runs"] = _blas_threads()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    threads[1].join(10)
    seen["after both"] = _blas_threads()
    looked.set()
    threads[0].join(10)
    assert seen == {"while the second runs": {1}, "after both": released_two_threads}


def test_the_setting_is_restored_when_the_fit_fails(two_threads, monkeypatch):
    monkeypatch.delenv("MLSVM_BLAS_THREADS", raising=False)
    with pytest.raises(ValueError, match="C must lie in"):
        mlsvm.RankSVM(C=-1.0).fit(np.eye(3), np.eye(3, dtype=int))
    assert _blas_threads() == two_threads
