"""Model selection: scikit-learn's GridSearchCV on one machine or a Dask cluster, and the papers' grids.

:func:`grid_search` runs ``GridSearchCV`` inside ``joblib.parallel_backend(backend)``:

* ``backend=None`` — joblib's default (processes through loky when ``n_jobs`` > 1, else serial);
* ``"loky"`` / ``"threading"`` — explicitly on this machine;
* ``"dask"`` — every (candidate, fold) fit is a task on the Dask cluster of the active
  ``distributed.Client`` (create one before calling; ``pip install "mlsvm[dask]"``).

Folds are fixed before any fit (shuffled ``KFold``, or ``StratifiedKFold`` for a 1-D class vector,
seeded by ``random_state``), so the serial, loky and Dask runs score the same splits and return the
same ``cv_results_``. Errors raise (``error_score="raise"``): a failed fit is never a silent NaN.

:data:`PAPER_GRIDS` holds, as data, what each paper says about its hyperparameters: the values it
searched, the values it fixed, the CV protocol, and what it does not state.

The mLODM paper grid (13,689 settings × 5 folds = 68,445 fits) on one machine (loky processes,
every core) or on a Dask cluster (one task per fit; start workers with one thread each, e.g.
``dask worker tcp://scheduler:8786 --nworkers 8 --nthreads 1``, the fits are numpy-bound)::

    from sklearn.preprocessing import MinMaxScaler
    from mlsvm import MLODM
    from mlsvm.model_selection import grid_search, paper_grid

    X = MinMaxScaler().fit_transform(X_train)            # the paper scales to [0, 1] (§6.1)
    search = grid_search(MLODM(), paper_grid("mlodm"), X, Y_train, cv=5,
                         scoring="ranking_loss", n_jobs=-1)               # this machine

    from distributed import Client
    with Client("tcp://scheduler:8786"):                 # or Client(LocalCluster(...))
        search = grid_search(MLODM(), paper_grid("mlodm"), X, Y_train, cv=5,
                             scoring="ranking_loss", n_jobs=-1, backend="dask")

Cost: fits × folds × (seconds per fit) / workers; docs/tooling.md gives the per-fit time measured
on emotions (``benchmarks/bench_mlodm.py --grid-cost``) and the resulting estimate.
"""

from __future__ import annotations

import contextlib
import dataclasses
import types
import warnings

import joblib
import numpy as np
from sklearn.metrics import get_scorer_names, make_scorer
from sklearn.model_selection import GridSearchCV, KFold, ParameterGrid, StratifiedKFold

from mlsvm import metrics
from mlsvm.progress import Progress, is_terminal

__all__ = ["grid_search", "make_cv", "metric_scorer", "PaperGrid", "PAPER_GRIDS", "paper_grid", "BACKENDS"]

#: joblib backends accepted by :func:`grid_search` (None = joblib's default)
BACKENDS = (None, "loky", "threading", "sequential", "dask")

#: mlsvm metrics that rank with real-valued scores (decision_function), not with predictions
_RANKING_METRICS = frozenset({"ranking_loss", "one_error", "coverage", "average_precision"})


def metric_scorer(name: str):
    """A scikit-learn scorer for the mlsvm metric ``name`` (definitions of :mod:`mlsvm.metrics`).

    Loss metrics are negated (scikit-learn maximises scores); ranking metrics are computed on
    ``decision_function``, set metrics on ``predict``.

    Parameters
    ----------
    name : str
        An mlsvm metric name (:mod:`mlsvm.metrics`).
    """
    names = [n for n in metrics.__all__ if n not in ("all_metrics", "LOWER_IS_BETTER")]
    if name not in names:
        raise ValueError(f"scoring must be one of mlsvm's metrics {names} or a scikit-learn scorer "
                         f"(sklearn.metrics.get_scorer_names()); got {name!r}")
    metric, greater_is_better = getattr(metrics, name), name not in metrics.LOWER_IS_BETTER
    ranking = name in _RANKING_METRICS
    try:
        return make_scorer(metric, greater_is_better=greater_is_better,
                           response_method="decision_function" if ranking else "predict")
    except TypeError:  # scikit-learn < 1.4 has no response_method (pyproject allows ≥ 1.3)
        return make_scorer(metric, greater_is_better=greater_is_better, needs_threshold=ranking)


def make_cv(Y, cv=5, random_state=0):
    """The CV splitter :func:`grid_search` uses: an int ``cv`` becomes a shuffled, seeded
    ``StratifiedKFold`` for a 1-D class vector or ``KFold`` for an (n, q) indicator; a splitter
    object or an iterable of (train, test) index pairs is returned unchanged.

    Parameters
    ----------
    Y : array-like
        Targets: a 1-D class vector gives a shuffled ``StratifiedKFold``, an (n, q) indicator a shuffled
        ``KFold``.
    cv : int or splitter
        Number of folds, or a scikit-learn splitter (returned as is).
    random_state : int
        Shuffling seed.
    """
    if cv is None or isinstance(cv, (bool, np.bool_, float, str)):
        raise ValueError(f"cv must be an int ≥ 2, a scikit-learn splitter or a list of (train, test) pairs; got {cv!r}")
    if not isinstance(cv, (int, np.integer)):
        return cv
    if cv < 2:
        raise ValueError(f"cv must be at least 2 folds; got {cv}")
    if np.ndim(Y) == 1:
        return StratifiedKFold(n_splits=int(cv), shuffle=True, random_state=random_state)
    return KFold(n_splits=int(cv), shuffle=True, random_state=random_state)


def _check_dask_client():
    try:
        from distributed import get_client
    except ImportError:
        raise ImportError('backend="dask" needs Dask\'s distributed scheduler: pip install "mlsvm[dask]"') from None
    try:
        client = get_client()
    except ValueError:
        raise ValueError('backend="dask" needs an active distributed.Client: create one '
                         '(e.g. Client(LocalCluster()) or Client("tcp://scheduler:8786")) before grid_search') from None
    if sum(client.ncores().values()) == 1:
        # joblib treats one worker thread as n_jobs = 1 and then runs every fit here, sequentially
        warnings.warn("the Dask cluster has a single worker thread: joblib runs the grid search locally "
                      "and sequentially, not on the cluster; give it at least two", RuntimeWarning, stacklevel=3)
    return client


class _GridSearchWithProgress(GridSearchCV):
    """GridSearchCV that evaluates its candidates in about 20 chunks and counts each finished
    chunk on ``self._progress`` (a :class:`mlsvm.progress.Progress`, removed after the fit)."""

    def _run_search(self, evaluate_candidates):
        candidates = list(ParameterGrid(self.param_grid))
        size = max(1, len(candidates) // 20)
        with self._progress:
            for start in range(0, len(candidates), size):
                chunk = candidates[start:start + size]
                evaluate_candidates(chunk)
                self._progress.update(len(chunk))


def grid_search(estimator, param_grid, X, Y, *, cv=5, scoring=None, n_jobs=None, backend=None,
                refit=True, random_state=0, return_train_score=False, progress=None):
    """Fit ``GridSearchCV(estimator, param_grid)`` on ``X, Y`` under the joblib ``backend``.

    Parameters
    ----------
    estimator : any scikit-learn estimator (an mlsvm model or e.g. ``sklearn.svm.SVC``).
    param_grid : dict or list of dicts, as for ``GridSearchCV`` (e.g. ``paper_grid("mlodm")``).
    cv : int (folds, shuffled with ``random_state``; see :func:`make_cv`) or a splitter.
    scoring : None (the estimator's ``score``), an mlsvm metric name (see :func:`metric_scorer`;
        these names take precedence over scikit-learn's scorer of the same name), or anything
        ``GridSearchCV`` accepts.
    n_jobs : parallel fits, as for ``GridSearchCV`` (-1: every core, or every Dask worker thread).
    backend : None, "loky", "threading", "sequential" or "dask" (needs an active ``distributed.Client``
        with at least two worker threads in all: with one, joblib runs every fit locally).
    progress : None, or a stream (e.g. ``sys.stderr``) for a :class:`mlsvm.progress.Progress` line
        counting finished candidates. Only on a terminal: then the candidates are evaluated in about
        20 chunks (each chunk's folds × candidates still run in parallel); otherwise nothing changes.
    X : array of shape (n, d)
        Features.
    Y : array-like
        Targets (indicator or class vector).
    refit : bool
        Refit the best candidate on all data (``GridSearchCV``'s refit).
    random_state : int
        Seed of the shuffled folds when ``cv`` is an int.
    return_train_score : bool
        As for ``GridSearchCV``.

    Returns
    -------
    GridSearchCV
        The fitted search (``best_params_``, ``cv_results_``, ``best_estimator_``).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}; got {backend!r}")
    if not isinstance(param_grid, (dict, list, tuple)) or not param_grid:
        raise ValueError(f"param_grid must be a non-empty dict (or list of dicts) of parameter lists; got {param_grid!r}")
    if isinstance(scoring, str) and scoring in metrics.__all__:
        scoring = metric_scorer(scoring)
    elif isinstance(scoring, str) and scoring not in get_scorer_names():
        metric_scorer(scoring)   # the error: neither an mlsvm metric nor a scikit-learn scorer
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0):
        raise ValueError(f"n_jobs must be None, a positive number of parallel fits or a negative one (-1: every "
                         f"core); got {n_jobs!r}")
    on_terminal = progress is not None and is_terminal(progress)
    search = (_GridSearchWithProgress if on_terminal else GridSearchCV)(
        estimator, param_grid, cv=make_cv(Y, cv, random_state), scoring=scoring, n_jobs=n_jobs, refit=refit,
        error_score="raise", return_train_score=return_train_score)
    if on_terminal:
        search._progress = Progress(total=len(ParameterGrid(param_grid)), label="grid search", stream=progress)
    if backend == "dask":
        _check_dask_client()
    try:
        with joblib.parallel_backend(backend) if backend is not None else contextlib.nullcontext():
            return search.fit(X, Y)
    finally:
        if on_terminal:
            del search._progress  # a stream does not pickle; the fitted search should


# ---- the papers' grids, as data ------------------------------------------------------------

def _powers_of_two(low: int, high: int) -> tuple[float, ...]:
    return tuple(2.0 ** e for e in range(low, high + 1))


_TENTHS = tuple(round(0.1 * k, 1) for k in range(1, 10))  # {0.1, 0.2, …, 0.9}


@dataclasses.dataclass(frozen=True)
class PaperGrid:
    """What a paper says about choosing its hyperparameters (SPEC §4 names, our kernel convention
    ``exp(−gamma‖x−x'‖²)``).

    ``searched``: name → the values the paper's search covers; ``fixed``: name → the value it fixes;
    ``protocol``: how it selects and evaluates; ``not_stated``: names it leaves out (the caller must
    choose and say so); ``source``: where in the paper.

    Parameters
    ----------
    model : str
        Model key.
    estimator : str
        Estimator class name.
    searched : dict
        Hyperparameter name → values searched in the paper.
    fixed : dict
        Hyperparameters the paper fixes.
    protocol : str
        The paper's model-selection protocol.
    not_stated : tuple of str
        What the paper leaves out.
    source : str
        Where in the paper the grid is stated.
    """

    model: str
    estimator: str
    searched: dict = dataclasses.field(default_factory=dict)
    fixed: dict = dataclasses.field(default_factory=dict)
    protocol: str = ""
    not_stated: tuple[str, ...] = ()
    source: str = ""

    def __post_init__(self):  # the papers' numbers are read-only (and not shared between rows)
        object.__setattr__(self, "searched", types.MappingProxyType(dict(self.searched)))
        object.__setattr__(self, "fixed", types.MappingProxyType(dict(self.fixed)))

    @property
    def n_candidates(self) -> int:
        return int(np.prod([len(values) for values in self.searched.values()])) if self.searched else 1

    def param_grid(self) -> dict:
        """The grid for ``GridSearchCV``: the searched lists plus each fixed value as a 1-list."""
        return {**{k: [v] for k, v in self.fixed.items()}, **{k: list(v) for k, v in self.searched.items()}}


_SMSVM = PaperGrid(
    model="smsvm", estimator="SMSVM",
    fixed={"kernel": "rbf", "kappa": 25},
    protocol="γ and λ tuned by cross-validation; greedy basis selection with κ = 25 candidates, "
             "stop when the relative decrease < 1e-3 or |J| = d_max.",
    not_stated=("lam grid", "gamma grid", "d_max"),
    source="§3.3 speed-up heuristics (κ = 25), §5 setup")

PAPER_GRIDS = {
    "mlodm": PaperGrid(
        model="mlodm", estimator="MLODM",
        searched={"C": _powers_of_two(-2, 10), "gamma": _powers_of_two(-10, 2), "theta": _TENTHS, "mu": _TENTHS},
        fixed={"kernel": "rbf"},
        protocol="C and γ by 5-fold CV over Rank-SVM's ranges; θ, μ from {0.1, …, 0.9}; threshold by "
                 "linear regression (Elisseeff & Weston). Fig. 2 margins use C = 1, γ = 2^-1.",
        not_stated=("the CV score that picks the candidate", "the RBF form of 'kernel scale factor γ' "
                    "(taken as exp(−γ‖x−x'‖²))"),
        source="§6.1.3 (grids), §6.4 (Fig. 2 settings)"),
    "matrix_svm": PaperGrid(
        model="matrix_svm", estimator="MatrixSVM",
        fixed={"C": 1.0, "kernel": "rbf", "gamma": 0.3},
        protocol="no search: c = 1; RBF exp(−p‖x−x'‖²) with p = 0.3 on multilabel data (p = 0.7 on "
                 "multiclass data); features scaled to [−1, 1]; ten-fold cross-validation.",
        source="experiments section (setup paragraph)"),
    "rank_svm": PaperGrid(
        model="rank_svm", estimator="RankSVM",
        searched={"degree": tuple(range(2, 10))},
        fixed={"kernel": "poly", "gamma": 1.0, "coef0": 1.0},
        protocol="Yeast: polynomial kernels (⟨x, x'⟩ + 1)^d, d = 2 … 9, each reported (Tables 8–10), "
                 "not selected by CV.",
        not_stated=("C",),
        source="Yeast experiments, Tables 8–10"),
    "ovn": PaperGrid(
        model="ovn", estimator="OvNSVM",
        fixed={"w_constraint": "soft", "b_constraint": "hard"},
        protocol="3-fold CV over 'a finite and discrete grid', best mean accuracy reported; Gaussian "
                 "kernel exp(−‖x−x'‖²/(2σ²)), i.e. gamma = 1/(2σ²).",
        not_stated=("alpha", "beta", "gamma (σ)", "the grid values"),
        source="§5 (experiments), Tables 5–6"),
    "smsvm": _SMSVM,
    "sm3l": dataclasses.replace(_SMSVM, model="sm3l", estimator="SM3L", protocol=_SMSVM.protocol
                                + " SM3L: R = I (no label-correlation prior); SM3L-P: a prior P."),
}


def paper_grid(model: str) -> dict:
    """``PAPER_GRIDS[model].param_grid()``, for ``GridSearchCV`` / :func:`grid_search`.

    Parameters
    ----------
    model : str
        Model key, e.g. ``"mlodm"``.
    """
    if model not in PAPER_GRIDS:
        raise ValueError(f"model must be one of {sorted(PAPER_GRIDS)}; got {model!r}")
    return PAPER_GRIDS[model].param_grid()
