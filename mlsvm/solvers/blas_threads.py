"""The BLAS threads a fit runs with: one, unless ``MLSVM_BLAS_THREADS`` asks for more.

The solvers' dense linear algebra is mostly factorisations of a few hundred to a few thousand
rows, many times over. OpenBLAS splits each one over its threads, which wait for one another at
every block: on an idle machine a second thread gains little or loses there, and when another
process holds a core (a second experiment, a test worker, any job) the waiting threads make whole
fits several times slower (OpenBLAS issue 5517; the measurements are in ``docs/tooling.md``,
"BLAS threads"). One thread per fit also gives the same rounding on every machine, whatever its
number of cores, and it is the configuration every benchmark of the library was measured in.

:func:`blas_threads` sets the BLAS libraries' threads (``threadpoolctl``, a scikit-learn
dependency) for the duration of a fit and restores them after it. The setting is process-wide, so
the contexts are counted: with fits in several threads at once (joblib's threading backend) the
first to enter sets it and the last to leave restores it, whichever thread that is. threadpoolctl
3.8 lets one thread at a time set OpenBLAS's threads (the first to set them holds that control
until it is released), so each setting here releases the control it took: otherwise the first
thread to fit would keep it, and fits in every other thread would run on the caller's threads.
OpenMP (scikit-learn's own loops) is left alone.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

try:
    from threadpoolctl import OpenBLASController
    _release_control = OpenBLASController.clear_controlling_thread
except (ImportError, AttributeError):   # threadpoolctl < 3.8: any thread sets the threads
    def _release_control():
        pass

from mlsvm.data import check_scalar

__all__ = ["blas_threads", "requested_threads", "ENVIRONMENT_VARIABLE"]

#: the environment variable that sets the BLAS threads of a fit (default 1)
ENVIRONMENT_VARIABLE = "MLSVM_BLAS_THREADS"

_lock = threading.Lock()
_state = {"depth": 0, "limiter": None, "controller": None}


def requested_threads() -> int:
    """The BLAS threads a fit runs with: ``MLSVM_BLAS_THREADS`` (a positive integer), else 1."""
    value = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if not value:
        return 1
    try:
        value = int(value)
    except ValueError:
        pass   # check_scalar says it is not an integer
    return check_scalar(value, ENVIRONMENT_VARIABLE, low=1, integer=True, explain="The BLAS threads of a fit")


@contextmanager
def blas_threads():
    """Run the enclosed code with :func:`requested_threads` BLAS threads; restore them after."""
    threads = requested_threads()
    with _lock:
        if _state["depth"] == 0:
            # the BLAS libraries are found once (10 ms); numpy's and SciPy's are loaded by then
            if _state["controller"] is None:
                _state["controller"] = ThreadpoolController()
            _state["limiter"] = _state["controller"].limit(limits=threads, user_api="blas")
            _release_control()
        _state["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                _state["limiter"].restore_original_limits()
                _release_control()
                _state["limiter"] = None
