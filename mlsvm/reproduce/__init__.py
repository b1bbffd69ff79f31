"""``mlsvm reproduce PAPER``: re-run each paper's experiments that our data allows and write a
markdown report — our number, the paper's, the difference, and the settings used.

Each paper has a module here defining ``TITLE``, ``PROTOCOL`` (what the paper did and what we do
instead, with every setting the paper leaves out and the choice we made) and
``experiments(quick) -> list[Row]``. ``quick`` runs a reduced protocol (stated in the report).
:func:`reproduce` runs one paper and writes ``reproduce-PAPER.md`` with its figures
(:mod:`mlsvm.reproduce.figures`) as PNGs beside it, linked by relative path.
"""

from __future__ import annotations

import importlib
import platform
import time
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline

from mlsvm.metrics import all_metrics
from mlsvm.persistence import atomic_write

__all__ = ["PAPERS", "Row", "run_paper", "render_markdown", "write_report", "reproduce", "evaluate_split",
           "evaluate_cv"]

PAPERS = {
    "rank-svm": "mlsvm.reproduce.rank_svm",
    "ovn": "mlsvm.reproduce.ovn",
    "sparse-mm": "mlsvm.reproduce.sparse_mm",
    "mlodm": "mlsvm.reproduce.mlodm",
    "matrix-svm": "mlsvm.reproduce.matrix_svm",
}


@dataclass
class Row:
    """One reproduced number: ``ours`` beside ``paper`` (``None`` when the paper has none).

    Parameters
    ----------
    experiment : str
        What was run.
    metric : str
        Metric name.
    ours : float
        Our value.
    paper : float or None
        The paper's value, if it gives one.
    settings : str
        Every setting used.
    """

    experiment: str
    metric: str
    ours: float
    paper: float | None
    settings: str

    @property
    def difference(self) -> float | None:
        return None if self.paper is None else self.ours - self.paper


def _metrics(model, X, Y) -> dict:
    """Every metric; a 1-D class vector is compared as a one-hot indicator over the model's classes."""
    predicted, scores = model.predict(X), model.decision_function(X)
    if np.ndim(Y) == 1:
        classes = model.classes_
        Y = (np.asarray(Y)[:, None] == classes[None, :]).astype(np.int8)
        predicted = (predicted[:, None] == classes[None, :]).astype(np.int8)
    return all_metrics(Y, predicted, scores)


def evaluate_split(make_model, X_train, Y_train, X_test, Y_test, scaler=None) -> dict:
    """Every metric of one train/test run; ``scaler`` (fitted on the training part only) optional.

    Parameters
    ----------
    make_model : callable
        Returns a fresh, unfitted estimator.
    X_train : ndarray
        Training features.
    Y_train : ndarray
        Training labels.
    X_test : ndarray
        Test features.
    Y_test : ndarray
        Test labels.
    scaler : transformer or None
        Feature scaler fitted on each training part (e.g. ``MinMaxScaler``), or None.
    """
    model = make_model() if scaler is None else make_pipeline(scaler, make_model())
    return _metrics(model.fit(X_train, Y_train), X_test, Y_test)


def evaluate_cv(make_model, X, Y, folds: int, seed: int = 0, scaler=None) -> dict:
    """Mean of every metric over shuffled k-fold CV (``KFold(folds, shuffle=True, random_state=seed)``).

    Parameters
    ----------
    make_model : callable
        Returns a fresh, unfitted estimator.
    X : array of shape (n, d)
        Feature matrix.
    Y : array of shape (n, q)
        Label indicator in {0, 1}.
    folds : int
        Number of folds.
    seed : int
        Shuffling seed.
    scaler : transformer or None
        Feature scaler fitted on each training part (e.g. ``MinMaxScaler``), or None.
    """
    results = [evaluate_split(make_model, X[train], Y[train], X[test], Y[test],
                              None if scaler is None else _fresh(scaler))
               for train, test in KFold(folds, shuffle=True, random_state=seed).split(X)]
    return {key: float(np.mean([r[key] for r in results])) for key in results[0]}


def _fresh(scaler):
    from sklearn.base import clone

    return clone(scaler)


def run_paper(paper: str, quick: bool = True):
    """Run a paper's experiments; returns ``(module, rows, seconds)``.

    Parameters
    ----------
    paper : str
        Paper key: ``rank-svm``, ``ovn``, ``sparse-mm``, ``mlodm`` or ``matrix-svm``.
    quick : bool
        The small (quick) problem set or protocol instead of the full one.
    """
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {sorted(PAPERS)}; got {paper!r}")
    module = importlib.import_module(PAPERS[paper])
    start = time.perf_counter()
    rows = module.experiments(quick)
    return module, rows, time.perf_counter() - start


def _cell(value) -> str:
    return "–" if value is None else f"{value:.4f}"


def render_markdown(paper: str, module, rows: list[Row], seconds: float, quick: bool, figures: str = "") -> str:
    """The report; ``figures``: a markdown section appended after the results (see :func:`reproduce`).

    Parameters
    ----------
    paper : str
        Paper key: ``rank-svm``, ``ovn``, ``sparse-mm``, ``mlodm`` or ``matrix-svm``.
    module : module
        The paper's reproduction module (its title and protocol text).
    rows : list of Row
        Result rows.
    seconds : float
        Run time.
    quick : bool
        The small (quick) problem set or protocol instead of the full one.
    figures : str
        Markdown of the figures.
    """
    from mlsvm import __version__

    lines = [f"# Reproduction: {module.TITLE}", "",
             f"mlsvm {__version__}, Python {platform.python_version()}, numpy {np.__version__}; "
             f"{'quick (reduced) protocol' if quick else 'full protocol'}; {seconds:.0f} s.", "",
             "## Protocol and settings", "", module.PROTOCOL.strip(), "",
             "## Results", "",
             "| experiment | metric | ours | paper | ours − paper | settings |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row.experiment} | {row.metric} | {_cell(row.ours)} | {_cell(row.paper)} | "
                     f"{_cell(row.difference)} | {row.settings} |")
    if figures:
        lines += ["", figures.strip()]
    return "\n".join(lines) + "\n"


def write_report(path, text: str) -> None:
    """Write the report atomically (temporary name, then rename).

    Parameters
    ----------
    path : str or Path
        File path.
    text : str
        Markdown text.
    """
    atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))


def reproduce(paper: str, out_dir, quick: bool = True):
    """Run ``paper``'s experiments, write its figures (PNG, when matplotlib is installed) and then
    ``out_dir/reproduce-PAPER.md`` linking them; every file is written atomically.
    Returns ``(path, text)``.

    Parameters
    ----------
    paper : str
        Paper key: ``rank-svm``, ``ovn``, ``sparse-mm``, ``mlodm`` or ``matrix-svm``.
    out_dir : str or Path
        Output directory.
    quick : bool
        The small (quick) problem set or protocol instead of the full one.
    """
    from pathlib import Path

    from mlsvm.reproduce.figures import write_figures

    module, rows, seconds = run_paper(paper, quick=quick)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = write_figures(paper, out_dir)
    text = render_markdown(paper, module, rows, seconds, quick=quick, figures=figures)
    path = out_dir / f"reproduce-{paper}.md"
    write_report(path, text)
    return path, text
