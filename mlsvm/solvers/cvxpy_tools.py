"""CVXPY as a solver like the others: one named backend at tight tolerance, a two-backend check,
and :func:`solve_cvxpy`, which returns a :class:`SolverResult` for any formulation.

SPEC §3: Clarabel is the reference interior-point solver, ECOS the cross-check, OSQP (with
polishing) a third. Any status but ``optimal`` is an error for a ground truth: an
``optimal_inaccurate`` answer is not one. CVXPY's own warnings never reach the user: the status is
what is checked. Neither does what a backend's compiled code prints (SCS writes "ERROR: could not
determine problem status." to the process's standard output when its iterates overflow):
:func:`solve` collects it and quotes it in the :class:`GroundTruthError` it raises.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import osqp
from sklearn.exceptions import ConvergenceWarning

from mlsvm.formulations.evaluation import relative_difference
from mlsvm.solvers.result import SolverResult

__all__ = ["check_backend", "solve_cvxpy", "variable_value", "REFERENCE_BACKEND", "CROSSCHECK_BACKEND", "BACKENDS",
           "GroundTruthError", "solve", "solve_first_optimal", "solve_checked", "BackendAgreement"]

#: Tight settings per backend (the tolerance table of the ground truth).
BACKENDS = {
    "CLARABEL": dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, max_iter=500),
    # ECOS at 1e-10: on SOCPs (epigraph forms) it reaches it; on some QPs written as SOCs it
    # answers optimal_inaccurate instead, which solve() refuses — never a silently loose value.
    "ECOS": dict(abstol=1e-10, reltol=1e-10, feastol=1e-10, max_iters=500),
    # OSQP: polishing makes the answer exact on the active set; at 1e-10 it can stall to
    # max_iter before polishing (measured on a 4-point primal), 1e-9 polishes.
    "OSQP": dict(eps_abs=1e-9, eps_rel=1e-9, polishing=True, max_iter=400_000),
    "SCS": dict(eps_abs=1e-9, eps_rel=1e-9, max_iters=400_000),
}


#: The reference backend, and the second backend that confirms it on QPs. ECOS is kept available
#: (``cvxpy_solver="ECOS"``) but is not the QP cross-check: it solves a QP through an SOC
#: reformulation and, measured on a squared-hinge binary SVM dual (n = 14, C = 11), reported
#: "optimal" 1.1e-6 relative off the Clarabel/OSQP value at 1e-7 settings, and
#: "optimal_inaccurate" at 1e-8 and tighter. OSQP with polishing meets 1e-6 on every QP we pose.
REFERENCE_BACKEND = "CLARABEL"
CROSSCHECK_BACKEND = "OSQP"


class GroundTruthError(RuntimeError):
    """A CVXPY backend did not return an optimal solution."""


#: OSQP's status "interrupted by user" (-5 before OSQP 1.0)
OSQP_INTERRUPTED = osqp.SolverStatus.OSQP_SIGINT if hasattr(osqp, "SolverStatus") else -5


#: SCS's status "interrupted by user" (``SCS_SIGINT`` in scs.h)
SCS_INTERRUPTED = -5


def _raise_if_interrupted(problem: cp.Problem, solver: str) -> None:
    """Raise KeyboardInterrupt when OSQP stopped on Ctrl-C.

    OSQP installs its own SIGINT handler while it iterates, so Python never sees the signal:
    OSQP returns the status "interrupted by user", which CVXPY turns into a SolverError.
    Ctrl-C must stop the program, not count as a failed solve. CVXPY keeps OSQP's raw results
    in the problem's solver cache; SCS does the same as OSQP but its raw results are only cached
    when optimal, so :func:`_solve_scs` reads them itself; Clarabel and ECOS let the
    KeyboardInterrupt through.
    """
    if solver != "OSQP":
        return
    cached = getattr(problem, "_solver_cache", None) or {}
    results = cached.get("OSQP", (None, None, None))[2]
    status = getattr(getattr(results, "info", None), "status_val", None)
    if status is not None and status == OSQP_INTERRUPTED:
        raise KeyboardInterrupt


def _c_stdio():
    """The C library's ``fflush``, or None where it cannot be loaded (only POSIX exposes it as
    ``CDLL(None)``)."""
    try:
        return ctypes.CDLL(None).fflush
    except (OSError, AttributeError, TypeError):
        return None


_FFLUSH = _c_stdio()


@contextlib.contextmanager
def _interrupts_deferred():
    """Hold Ctrl-C back for the block and deliver it after: the main thread's SIGINT handler is
    swapped for one that notes the signal, and a noted signal is raised again once the handler is
    back. Python raises KeyboardInterrupt between any two bytecodes of the main thread; raised in the
    middle of :meth:`_BackendOutput.collected`'s switch of the standard streams it left them pointing
    at the backend's file (``mlsvm verify`` interrupted then exited 130 with its message lost). Other
    threads never see KeyboardInterrupt; a handler installed from C (None) is left alone."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield
        return
    noted = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if noted:
            signal.raise_signal(signal.SIGINT)   # to the handler now in place (KeyboardInterrupt by default)


class _BackendOutput:
    """The process's standard output and error pointed at one temporary file while backends run.

    The backends are compiled code, which can print with C's stdio to file descriptors 1 and 2,
    below ``sys.stdout``; SCS's Python wrapper prints through ``sys.stdout`` (``PySys_WriteStdout``).
    Both levels are redirected. Calls overlap when fits run in threads (joblib's threading backend), so
    the redirection is counted: the first call in saves the descriptors and streams, the last call
    out restores them. Each call reads back what was written to the file after it entered. While a
    backend runs, what any thread of the process prints goes to that file.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.depth = 0
        self.saved = {}
        self.streams = ()
        self.sink = None
        self.stream = None

    @contextlib.contextmanager
    def collected(self):
        """Redirect for the duration of the block; yields a list that holds, after it, the text
        written meanwhile (one string).

        A single Ctrl-C at any moment leaves the streams as they were. It is held back while they
        are switched (:func:`_interrupts_deferred`); one that arrives as the switch back begins,
        before it is held, leaves nothing switched back yet, and the switch back runs again."""
        text, entered = [], False
        try:
            with _interrupts_deferred(), self.lock:
                if self.depth == 0:
                    self._flush()
                    self.sink = tempfile.TemporaryFile()
                    self.saved = {}
                    for fd in (1, 2):
                        with contextlib.suppress(OSError):   # a closed descriptor stays closed
                            self.saved[fd] = os.dup(fd)
                            os.dup2(self.sink.fileno(), fd)
                    # the same file, appended to through a descriptor of its own (line buffered)
                    self.stream = open(os.dup(self.sink.fileno()), "w", buffering=1, errors="replace")
                    self.streams = sys.stdout, sys.stderr
                    sys.stdout = sys.stderr = self.stream
                self.depth += 1
                entered = True
                start = os.fstat(self.sink.fileno()).st_size
            yield text
        finally:
            if entered:
                try:
                    self._switch_back(start, text)
                except KeyboardInterrupt:
                    if not text:   # not switched back yet (the text is read first, under the hold)
                        self._switch_back(start, text)
                    raise

    def _switch_back(self, start, text):
        """The end of :meth:`collected`: the text written since ``start`` appended to ``text``, and
        the last call out restores the descriptors and streams."""
        with _interrupts_deferred(), self.lock:
            self._flush()
            sink = self.sink
            text.append(_read_from(sink.fileno(), start).decode(errors="replace").strip())
            self.depth -= 1
            if self.depth == 0:
                sys.stdout, sys.stderr = self.streams
                self.stream.close()
                self.streams, self.stream = (), None
                for fd, saved in self.saved.items():
                    os.dup2(saved, fd)
                    os.close(saved)
                self.saved, self.sink = {}, None
                sink.close()

    @staticmethod
    def _flush():
        """Write out what is buffered for the standard output and error (Python's streams and C's
        stdio) before they are switched or read."""
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    stream.flush()
        if _FFLUSH is not None:
            _FFLUSH(None)


_BACKEND_OUTPUT = _BackendOutput()


def _read_from(fd, start, limit=4096) -> bytes:
    """At most ``limit`` bytes of file ``fd`` from offset ``start``, its offset left at the end (where
    the redirected descriptors, which share it, write next)."""
    if hasattr(os, "pread"):
        return os.pread(fd, limit, start)
    os.lseek(fd, start, os.SEEK_SET)
    data = os.read(fd, limit)
    os.lseek(fd, 0, os.SEEK_END)
    return data


def _solve_scs(problem: cp.Problem, **settings) -> float:
    """``problem.solve(solver="SCS", **settings)`` in CVXPY's documented three steps (problem data,
    the backend's call, unpacking), so SCS's raw status is seen: "interrupted by user" (SCS caught
    Ctrl-C) raises KeyboardInterrupt instead of CVXPY's SolverError."""
    data, chain, inverse_data = problem.get_problem_data(cp.SCS)
    solution = chain.solve_via_data(problem, data, solver_opts=settings)
    if solution.get("info", {}).get("status_val") == SCS_INTERRUPTED:
        raise KeyboardInterrupt
    problem.unpack_results(solution, chain, inverse_data)
    return problem.value


def check_backend(name, argument: str = "cvxpy_solver") -> str:
    """The backend ``name`` in :data:`BACKENDS` (any letter case), upper-cased; otherwise a
    ``ValueError`` naming ``argument`` and the backends.

    Parameters
    ----------
    name : str
        A CVXPY backend name.
    argument : str
        The argument's name, for the message.
    """
    if not isinstance(name, str) or name.upper() not in BACKENDS:
        raise ValueError(f"{argument} must be one of {sorted(BACKENDS)}; got {name!r}")
    return name.upper()


def solve(problem: cp.Problem, solver="CLARABEL", **options) -> float:
    """Solve ``problem`` with ``solver`` at the tight settings of :data:`BACKENDS`.

    Returns the optimal value; raises :class:`GroundTruthError` on any status but ``optimal``.
    ``solver`` may be a tuple of backends tried in order until one answers ``optimal`` (an
    interior-point method can stop on "insufficient progress" on a degenerate but well-posed
    problem, e.g. a dual with duplicated basis points); every answer taken is still ``optimal``.
    ``options`` override the defaults.

    Parameters
    ----------
    problem : cvxpy.Problem
        The problem to solve.
    solver : str
        Backend name.
    **options
        Backend options overriding the tight settings.
    """
    if isinstance(solver, (tuple, list)):
        return solve_first_optimal(lambda: problem, solver, **options)[1]
    solver = check_backend(solver)
    settings = {**BACKENDS[solver], **options}
    try:
        # "Solution may be inaccurate" & co.: the status says it; what the backend prints is quoted
        with warnings.catch_warnings(), _BACKEND_OUTPUT.collected() as printed:
            warnings.simplefilter("ignore")
            value = (_solve_scs(problem, **settings) if solver == "SCS"
                     else problem.solve(solver=solver, **settings))
    except cp.error.SolverError as exc:
        _raise_if_interrupted(problem, solver)
        raise GroundTruthError(f"CVXPY backend {solver} failed: {exc}{_quoted(printed)}") from exc
    except ValueError as exc:
        # CVXPY checks the data it hands a backend; a constant that overflowed (1/C at C = 1e-300) is
        # no backend's failure, but the float_guard breakdown of the caller's hyperparameters
        if "NaN or Inf" in str(exc):
            raise FloatingPointError(f"the data CVXPY would pass to {solver} is not finite") from None
        raise
    _raise_if_interrupted(problem, solver)
    if problem.status != cp.OPTIMAL:
        raise GroundTruthError(
            f"CVXPY backend {solver} returned status {problem.status!r} (value {value}); "
            f"only 'optimal' is accepted as ground truth{_quoted(printed)}")
    return float(value)


def _quoted(printed) -> str:
    """What a backend printed, for an error message (nothing when it printed nothing)."""
    text = " ".join(printed).strip()
    return f" (the backend printed: {text[:300]!r})" if text else ""


def solve_first_optimal(build, backends, **options):
    """Solve ``build()`` with each backend in turn (a fresh build each time: ``build`` may return
    ``(problem, variables)``); return ``(built, value, backend)`` for the first that answers
    ``optimal``. Raises :class:`GroundTruthError` quoting every failure when none does.

    Parameters
    ----------
    build : callable
        Returns ``(cp.Problem, ...)``; called once per backend.
    backends : sequence of str
        Backends tried in turn.
    **options
        Passed to :func:`solve`.
    """
    backends = (backends,) if isinstance(backends, str) else tuple(backends)
    failures = []
    for backend in backends:
        built = build()
        problem = built[0] if isinstance(built, tuple) else built
        try:
            return built, solve(problem, backend, **options), backend
        except GroundTruthError as exc:
            failures.append(str(exc))
    raise GroundTruthError(f"no CVXPY backend of {backends} solved the problem: " + " | ".join(failures))


@dataclass(frozen=True)
class BackendAgreement:
    """Optimal values of one problem under two backends and their relative difference.

    Parameters
    ----------
    values : dict
        Backend → optimal value.
    relative_difference : float
        ``|a − b| / max(1, |a|, |b|)`` against the reference.
    solve_time : dict
        Backend → seconds.
    """

    values: dict
    relative_difference: float
    solve_time: dict


def solve_checked(build, solvers=(REFERENCE_BACKEND, CROSSCHECK_BACKEND), rtol: float = 1e-6) -> BackendAgreement:
    """Build a fresh problem with ``build()`` for each backend, solve, and check they agree.

    Raises :class:`GroundTruthError` when the optimal values differ by more than ``rtol``
    (relative, :func:`relative_difference`): a ground truth must be confirmed before it is trusted.

    Parameters
    ----------
    build : callable
        Returns ``(cp.Problem, ...)``; called once per backend.
    solvers : tuple of str
        The backends that must agree.
    rtol : float
        Relative tolerance.
    """
    values, times = {}, {}
    for solver in solvers:
        start = time.perf_counter()
        values[solver] = solve(build(), solver)
        times[solver] = time.perf_counter() - start
    first, second = (values[s] for s in solvers[:2])
    difference = relative_difference(first, second)
    if difference > rtol:
        raise GroundTruthError(
            f"backends disagree: {values} (relative difference {difference:.2e} > {rtol:.0e})")
    return BackendAgreement(values, difference, times)


def solve_cvxpy(formulation, problem, cvxpy_solver: str = REFERENCE_BACKEND) -> SolverResult:
    """Solve ``formulation.cvxpy_dual(problem)`` with one backend and return its point.

    ``formulation`` is a module of :mod:`mlsvm.formulations`: ``cvxpy_dual(problem)`` gives
    ``(cp.Problem, variables)`` and ``solution_from_cvxpy(problem, cvx, variables)`` the
    ``(primal, dual)`` dicts its ``evaluate`` reads. A status other than ``optimal`` is no
    certificate: when the backend still returned a point (``optimal_inaccurate``) the result has
    ``converged=False`` and a ``ConvergenceWarning`` names the status; with no point at all,
    :class:`GroundTruthError` naming the backend and the alternatives (the backend is the caller's
    choice: no other is tried in its place).

    Parameters
    ----------
    formulation : module
        A module of :mod:`mlsvm.formulations`.
    problem : object
        Its problem.
    cvxpy_solver : str
        Backend name.
    """
    start = time.perf_counter()
    cvx, variables = formulation.cvxpy_dual(problem)
    status_rule = f"CVXPY {cvxpy_solver} status"
    try:
        solve(cvx, cvxpy_solver)
        converged = True
    except GroundTruthError as exc:
        if cvx.status not in (cp.OPTIMAL_INACCURATE, cp.USER_LIMIT) or any(
                v.value is None for v in cvx.variables()):
            others = ", ".join(repr(name) for name in BACKENDS if name != cvxpy_solver.upper())
            raise GroundTruthError(
                f"CVXPY backend {cvxpy_solver.upper()} returned no solution, so there is no model to "
                f"report ({exc}). cvxpy_solver picks the one backend that runs: another ({others}) or "
                "solver='fast' may solve this problem") from exc
        warnings.warn(f"{exc}: the point it returned is reported with converged=False",
                      ConvergenceWarning, stacklevel=2)
        converged = False
    primal, dual = formulation.solution_from_cvxpy(problem, cvx, variables)
    stats = cvx.solver_stats
    return SolverResult(primal=primal, dual=dual, converged=converged,
                        n_iter=int(getattr(stats, "num_iters", 0) or 0),
                        stop_value=float("nan"), stop_rule=f"{status_rule} {cvx.status}",
                        solve_time=time.perf_counter() - start, history={}, solver="cvxpy")


def variable_value(variable, lower=None, upper=None) -> np.ndarray:
    """A CVXPY variable's value as a float array, clipped to ``[lower, upper]`` (interior-point
    round-off may leave a bound by ~1e-10; the residuals grade the clipped point).

    Parameters
    ----------
    variable : cvxpy.Variable
        A variable of a solved problem.
    lower : float or None
        Lower clip bound.
    upper : float or None
        Upper clip bound.
    """
    value = np.asarray(variable.value, dtype=np.float64)
    return value if lower is None and upper is None else np.clip(value, lower, upper)
