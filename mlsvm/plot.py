"""Figures: convergence curves, label-pair margin histograms, 2-D decision regions.

matplotlib is an optional extra (``pip install "mlsvm[plot]"``), imported only when a function
here is called. Figures are built on matplotlib's object API with the Agg canvas: no pyplot, no
global backend switch, no window (``plt.show`` is never called), so the functions work headless
and leave an interactive user's backend alone. Pass ``ax`` to draw into your own axes; otherwise
a new ``Figure`` is returned. :func:`save_figure` writes it atomically.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mlsvm.kernels import available_memory
from mlsvm.persistence import atomic_write

__all__ = ["plot_convergence", "plot_margin_histogram", "plot_decision_regions", "save_figure"]

_INSTALL_HINT = 'mlsvm.plot needs matplotlib, an optional extra: pip install "mlsvm[plot]"'
_OBJECTIVE_KEYS = ("objective", "primal_objective", "primal")
_GAP_KEYS = ("gap", "duality_gap", "relative_gap")


def _matplotlib():
    try:
        import matplotlib
        import matplotlib.colors
        import matplotlib.ticker
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(_INSTALL_HINT) from None
    return matplotlib, Figure, FigureCanvasAgg


def _new_figure(ncols: int = 1, width: float = 6.0, height: float = 4.5):
    _, Figure, FigureCanvasAgg = _matplotlib()
    figure = Figure(figsize=(width * ncols, height), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, ncols)
    return figure, axes


def _colors(n: int):
    matplotlib, _, _ = _matplotlib()
    cmap = matplotlib.colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


# ---- convergence -----------------------------------------------------------------------------

def _named_histories(reports_or_histories) -> list[tuple[str, dict]]:
    """Normalise the accepted inputs to ``[(name, history dict), …]``."""
    def one(item, default_name):
        if hasattr(item, "history"):  # a FitReport (or anything carrying one)
            return (getattr(item, "solver", "") or default_name), item.history
        if isinstance(item, dict):
            return default_name, item
        raise ValueError(f"reports_or_histories must hold FitReports or history dicts; got {type(item).__name__}")

    if hasattr(reports_or_histories, "history") or (
            isinstance(reports_or_histories, dict) and set(reports_or_histories) & set(_OBJECTIVE_KEYS + _GAP_KEYS)):
        items = [one(reports_or_histories, "run")]
    elif isinstance(reports_or_histories, dict):  # name -> report or history
        items = [(str(name), one(item, str(name))[1]) for name, item in reports_or_histories.items()]
    elif isinstance(reports_or_histories, (list, tuple)):
        items = [one(item, f"run {i + 1}") for i, item in enumerate(reports_or_histories)]
    else:
        raise ValueError("reports_or_histories must be a FitReport, a history dict, a list of them, "
                         f"or a dict name → report/history; got {type(reports_or_histories).__name__}")
    if not items:
        raise ValueError("reports_or_histories is empty: nothing to plot")
    return items


def _floats(values, what: str) -> np.ndarray:
    """``values`` as a flat float array, or a ``ValueError`` naming ``what``."""
    try:
        return np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"{what} must hold real numbers; got {np.asarray(values).dtype}") from None


def _series(history: dict, keys: tuple[str, ...]):
    for key in keys:
        if key in history and len(history[key]):
            return key, _floats(history[key], f"history[{key!r}]")
    return None, None


def plot_convergence(reports_or_histories, ax=None):
    """Objective and duality gap against iteration, one line per solver.

    ``reports_or_histories``: a ``FitReport`` (its ``history``), a history dict with per-iteration
    lists (``"objective"`` and/or ``"gap"``; also ``primal_objective``/``duality_gap``/
    ``relative_gap``), a list of these, or a dict ``name → report/history`` (the names label the
    lines; a report is labelled by its ``solver``). The gap axis is logarithmic; gap values ≤ 0
    (exact zero, round-off) cannot be drawn there and are left out of the line.
    ``ax``: None (a new figure with two panels), a pair of Axes (objective, gap), or one Axes
    (objective on it, gap on a log-scale twin axis). Returns the Figure.

    Parameters
    ----------
    reports_or_histories : FitReport, dict or list
        What to draw (see above).
    ax : matplotlib Axes or None
        Where to draw; None creates a new figure.
    """
    runs = _named_histories(reports_or_histories)
    twin = False
    if ax is None:
        figure, (objective_ax, gap_ax) = _new_figure(2, width=5.0, height=4.0)
    elif isinstance(ax, (list, tuple, np.ndarray)) and len(ax) == 2:
        objective_ax, gap_ax = ax
        figure = objective_ax.figure
    elif hasattr(ax, "twinx"):
        objective_ax, gap_ax, twin = ax, ax.twinx(), True
        figure = ax.figure
    else:
        raise ValueError(f"ax must be None, one matplotlib Axes or a pair of them; got {ax!r}")
    for (name, history), color in zip(runs, _colors(len(runs))):
        _, objective = _series(history, _OBJECTIVE_KEYS)
        gap_key, gap = _series(history, _GAP_KEYS)
        if objective is None and gap is None:
            raise ValueError(f"history of {name!r} has none of {_OBJECTIVE_KEYS + _GAP_KEYS}; "
                             f"its keys are {sorted(history)}")
        if objective is not None:
            objective_ax.plot(np.arange(1, objective.size + 1), objective, color=color, label=name)
        if gap is not None:
            positive = np.where(gap > 0, gap, np.nan)
            gap_ax.plot(np.arange(1, gap.size + 1), positive, color=color, linestyle="--" if twin else "-",
                        label=f"{name} ({gap_key})")
    objective_ax.set_xlabel("iteration")
    objective_ax.set_ylabel("objective")
    gap_ax.set_yscale("log")
    gap_ax.set_ylabel("duality gap (log scale)")
    if twin:  # one legend for both axes
        lines = objective_ax.get_legend_handles_labels(), gap_ax.get_legend_handles_labels()
        objective_ax.legend(lines[0][0] + lines[1][0], lines[0][1] + lines[1][1], fontsize="small")
        objective_ax.set_title("objective (solid) and gap (dashed)")
    else:
        gap_ax.set_xlabel("iteration")
        objective_ax.set_title("objective")
        gap_ax.set_title("duality gap")
        for axis in (objective_ax, gap_ax):
            if axis.get_legend_handles_labels()[0]:
                axis.legend(fontsize="small")
    matplotlib, _, _ = _matplotlib()
    for axis in (objective_ax, gap_ax):
        axis.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))  # iterations are whole
    objective_ax.grid(True, alpha=0.3)
    gap_ax.grid(True, alpha=0.3, which="both" if not twin else "major")
    return figure


# ---- margins ---------------------------------------------------------------------------------

def plot_margin_histogram(margins_by_model: dict, ax=None, bins: int = 30):
    """Histograms of label-pair margins, one per model, overlaid (mLODM Fig. 2 style).

    ``margins_by_model``: name → array of margins (e.g. ``pairs.gather(F)``: ``f_k(x_i) − f_l(x_i)``
    for each relevant k, irrelevant l — computed by the caller). Each legend entry quotes the mean
    and variance, the two quantities mLODM optimises. Returns the Figure.

    Parameters
    ----------
    margins_by_model : dict
        Model name → array of pair margins.
    ax : matplotlib Axes or None
        Where to draw; None creates a new figure.
    bins : int
        Number of histogram bins.
    """
    if not isinstance(margins_by_model, dict) or not margins_by_model:
        raise ValueError("margins_by_model must be a non-empty dict name → array of margins")
    if not isinstance(bins, (int, np.integer)) or isinstance(bins, bool) or bins < 1:
        raise ValueError(f"bins must be a positive int; got {bins!r}")
    margins = {}
    for name, values in margins_by_model.items():
        values = _floats(values, f"margins_by_model[{name!r}]")
        if values.size == 0:
            raise ValueError(f"margins_by_model[{name!r}] is empty")
        if not np.all(np.isfinite(values)):
            raise ValueError(f"margins_by_model[{name!r}] has NaN or infinite margins")
        margins[str(name)] = values
    figure, ax = (_new_figure() if ax is None else (ax.figure, ax))
    everything = np.concatenate(list(margins.values()))
    low, high = everything.min(), everything.max()
    edges = np.linspace(low, high if high > low else low + 1.0, bins + 1)
    for (name, values), color in zip(margins.items(), _colors(len(margins))):
        label = f"{name}: mean {values.mean():.3g}, var {values.var():.3g}"
        ax.hist(values, bins=edges, density=True, histtype="stepfilled", alpha=0.25, color=color)
        ax.hist(values, bins=edges, density=True, histtype="step", linewidth=1.5, color=color, label=label)
    ax.axvline(0.0, color="0.3", linewidth=0.8)
    ax.axvline(1.0, color="0.3", linewidth=0.8, linestyle=":")
    ax.set_xlabel("label-pair margin  f_k(x) − f_l(x),  k relevant, l irrelevant")
    ax.set_ylabel("density")
    ax.set_title("margin distribution")
    ax.legend(fontsize="small")
    return figure


# ---- decision regions ------------------------------------------------------------------------

def _label_set_names(Y: np.ndarray):
    """Group the rows of an indicator by label set: (group of each row, "{0, 2}"-style names, sets)."""
    rows, codes = np.unique(Y.astype(int), axis=0, return_inverse=True)
    names = ["{" + ", ".join(str(k) for k in np.flatnonzero(row)) + "}" for row in rows]
    return codes.ravel(), names, rows


def _grid_regions(estimator, grid: np.ndarray):
    """``(scores or None, region index per grid point, region names)`` from the estimator."""
    if hasattr(estimator, "decision_function"):
        scores = np.asarray(estimator.decision_function(grid), dtype=float)
        if scores.ndim == 1:  # a binary scikit-learn classifier: one score, region by its sign
            scores = scores[:, None]
        region = (scores[:, 0] > 0).astype(int) if scores.shape[1] == 1 else np.argmax(scores, axis=1)
        names = [str(c) for c in getattr(estimator, "classes_", range(max(2, scores.shape[1])))]
        return scores, region, names
    predicted = np.asarray(estimator.predict(grid))
    if predicted.ndim == 2:
        region, names, _ = _label_set_names(predicted)
        return None, region, names
    values, region = np.unique(predicted, return_inverse=True)
    return None, region.ravel(), [str(c) for c in values]


def _draw_level_lines(ax, xx, yy, scores: np.ndarray, colors) -> None:
    """Binary: ``f = 0`` solid, ``f = ±1`` dashed in black; else per label k in its colour,
    ``f_k = 0`` solid and ``f_k = 1`` dashed (a level the function never crosses is skipped)."""
    if scores.shape[1] == 1:
        f = scores[:, 0].reshape(xx.shape)
        ax.contour(xx, yy, f, levels=[-1.0, 0.0, 1.0], colors="k", linestyles=["--", "-", "--"], linewidths=1.2)
        return
    for k in range(scores.shape[1]):
        f = scores[:, k].reshape(xx.shape)
        for level, style in ((0.0, "-"), (1.0, "--")):
            if f.min() < level < f.max():
                ax.contour(xx, yy, f, levels=[level], colors=[colors[k]], linestyles=style, linewidths=1.5)


def _scatter_points(ax, X: np.ndarray, Y: np.ndarray, region_names: list, colors) -> None:
    """Training points: by class (coloured as the region of that class) or by label set
    (a one-label set in its label's colour, {} white, larger sets grey), one marker per group."""
    if Y.ndim == 1:
        values, group = np.unique(Y, return_inverse=True)
        names = [str(c) for c in values]
        index = {name: i for i, name in enumerate(region_names)}
        point_colors = [colors[index.get(name, i) % len(colors)] for i, name in enumerate(names)]
        title = "class"
    else:
        group, names, rows = _label_set_names(Y)
        point_colors = [colors[np.flatnonzero(row)[0] % len(colors)] if row.sum() == 1
                        else ("white" if row.sum() == 0 else "0.35") for row in rows]
        title = "label set"
    markers = "osD^vP*Xh<>"
    for g, (name, color) in enumerate(zip(names, point_colors)):
        members = group.ravel() == g
        ax.scatter(X[members, 0], X[members, 1], s=22, color=color, edgecolors="k", linewidths=0.5,
                   marker=markers[g % len(markers)], label=name)
    ax.legend(title=title, fontsize="small", loc="best")


def plot_decision_regions(estimator, X, Y_or_y, ax=None, resolution: int = 200):
    """2-D decision regions of a fitted estimator (OvN Fig. 1–3, SMSVM Fig. 1 style).

    Filled regions: the argmax class ``argmax_k f_k(x)`` (a binary ``decision_function``: its sign).
    Lines per label k: ``f_k(x) = 0`` solid and ``f_k(x) = 1`` dashed (binary: ``f = 0`` and
    ``f = ±1``). Without ``decision_function`` the regions come from ``predict`` and no lines are
    drawn. Points: ``Y_or_y`` as classes (1-D) or as label sets (an (n, q) {0,1} indicator).
    ``X`` must have two features; ``resolution`` grid points per axis. Returns the Figure.

    Parameters
    ----------
    estimator : estimator
        A fitted estimator on two features.
    X : array of shape (n, 2)
        Points to draw.
    Y_or_y : array-like
        Classes (1-D) or label sets ((n, q) indicator) of the points.
    ax : matplotlib Axes or None
        Where to draw; None creates a new figure.
    resolution : int
        Grid points per axis.
    """
    matplotlib, _, _ = _matplotlib()  # before any work: a missing extra is said at once
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"X must have shape (n, 2) for a 2-D picture; got {X.shape}")
    X = _floats(X, "X").reshape(-1, 2)
    if not np.all(np.isfinite(X)):   # the grid spans X: it would be NaN
        raise ValueError(f"X contains {int(np.count_nonzero(~np.isfinite(X)))} NaN or infinite value(s); "
                         "every point drawn must be finite")
    Y = np.asarray(Y_or_y)
    if Y.ndim not in (1, 2) or Y.shape[0] != X.shape[0]:
        raise ValueError(f"Y_or_y must be a 1-D class vector or an (n, q) indicator with n = {X.shape[0]}; got {Y.shape}")
    if not isinstance(resolution, (int, np.integer)) or isinstance(resolution, bool) or resolution < 2:
        raise ValueError(f"resolution must be an int ≥ 2; got {resolution!r}")
    # the grid: its two coordinate arrays, its points (two columns) and their regions, float64 each
    needed, available = 5 * 8 * int(resolution) ** 2, available_memory()
    if available is not None and needed > available:
        raise ValueError(f"resolution={resolution} is a grid of {int(resolution) ** 2:,} points that needs about "
                         f"{needed / 1e9:.3g} GB of memory, but only {available / 1e9:.3g} GB is available; "
                         "lower resolution")
    padding = 0.1 * np.maximum(np.ptp(X, axis=0), 1e-12)
    low, high = X.min(axis=0) - padding, X.max(axis=0) + padding
    xx, yy = np.meshgrid(np.linspace(low[0], high[0], resolution), np.linspace(low[1], high[1], resolution))
    grid = np.column_stack([xx.ravel(), yy.ravel()])

    scores, region, region_names = _grid_regions(estimator, grid)
    figure, ax = (_new_figure(width=6.0, height=5.5) if ax is None else (ax.figure, ax))
    n_regions = int(max(region.max() + 1, len(region_names)))
    colors = _colors(max(n_regions, scores.shape[1] if scores is not None else 1))
    ax.pcolormesh(xx, yy, region.reshape(xx.shape), cmap=matplotlib.colors.ListedColormap(colors[:n_regions]),
                  vmin=-0.5, vmax=n_regions - 0.5, alpha=0.18, shading="auto")
    if scores is not None:
        _draw_level_lines(ax, xx, yy, scores, colors)
    _scatter_points(ax, X, Y, region_names, colors)
    ax.set_xlim(low[0], high[0])
    ax.set_ylim(low[1], high[1])
    ax.set_xlabel("x₁")
    ax.set_ylabel("x₂")
    if scores is None:
        subtitle = "regions: predict"
    elif scores.shape[1] == 1:
        subtitle = "regions: sign f;  f = 0 solid, f = ±1 dashed"
    else:
        subtitle = "regions: argmax_k f_k;  f_k = 0 solid, f_k = 1 dashed"
    ax.set_title(f"{type(estimator).__name__}\n{subtitle}", fontsize="medium")
    return figure


# ---- saving ----------------------------------------------------------------------------------

def save_figure(figure, path, *, dpi: int = 120) -> Path:
    """Write ``figure`` to ``path`` atomically (a temporary file beside it, then a rename); the
    format comes from the suffix (``.png``, ``.pdf``, ``.svg`` …). Returns the path.

    Parameters
    ----------
    figure : matplotlib Figure
        The figure.
    path : str or Path
        Output file (format from the suffix).
    dpi : int
        Resolution.
    """
    if not (hasattr(figure, "savefig") and hasattr(figure, "canvas")):
        raise TypeError(f"figure must be a matplotlib Figure (as the plot functions return); "
                        f"got {type(figure).__name__}")
    path = Path(path)
    file_format = path.suffix.lstrip(".").lower()
    supported = figure.canvas.get_supported_filetypes()
    if file_format not in supported:
        raise ValueError(f"path must end in one of {sorted('.' + s for s in supported)}; got {str(path)!r}")
    atomic_write(path, lambda handle: figure.savefig(handle, format=file_format, dpi=dpi))
    return path
