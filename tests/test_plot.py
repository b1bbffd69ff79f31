"""mlsvm.plot: figures render headless to valid PNGs, draw exactly the data given, save atomically,
and say how to install matplotlib when it is missing."""

import struct
import sys
import warnings
import zlib

import numpy as np
import pytest
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import SVC, LinearSVC

from mlsvm.datasets import make_multiclass, make_multilabel
from mlsvm.report import FitReport

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def plot():
    pytest.importorskip("matplotlib", reason='matplotlib is the optional extra "mlsvm[plot]"')
    import mlsvm.plot

    return mlsvm.plot


def _png_chunks(path):
    """Parse a PNG file: every chunk's CRC must hold; returns [(type, data)]."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset:offset + 4])
        kind = data[offset + 4:offset + 8]
        body = data[offset + 8:offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length:offset + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in chunk {kind!r}"
        chunks.append((kind, body))
        offset += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    return chunks


def _check_png(path, min_colors=8):
    """A valid PNG with a real picture: sane size, many distinct colours, not one flat fill."""
    from matplotlib.image import imread

    chunks = _png_chunks(path)
    width, height = struct.unpack(">II", chunks[0][1][:8])
    assert width >= 300 and height >= 200
    pixels = imread(path)
    assert pixels.shape[:2] == (height, width)
    colors = np.unique(pixels.reshape(-1, pixels.shape[2]), axis=0)
    assert len(colors) >= min_colors
    non_white = np.any(pixels[..., :3] < 0.95, axis=2).mean()
    assert 0.02 < non_white < 0.98  # something drawn, not a blank or a solid block


def _report(solver, objective, gap):
    return FitReport(primal_objective=objective[-1], dual_objective=objective[-1] - gap[-1], kkt={},
                     n_iter=len(objective), converged=True, solve_time=0.0, solver=solver,
                     history={"objective": list(objective), "gap": list(gap)})


# ---- convergence -----------------------------------------------------------------------------

def test_convergence_png_and_line_data(plot, tmp_path):
    k = np.arange(1, 41)
    fw = _report("frank-wolfe", 1 + 1 / k, 1 / k)
    bcd = _report("bcd", 1 + np.exp(-k[:25] / 3), np.exp(-k[:25] / 2))
    figure = plot.plot_convergence([fw, bcd])
    objective_ax, gap_ax = figure.axes
    assert gap_ax.get_yscale() == "log"
    assert [line.get_label() for line in objective_ax.lines] == ["frank-wolfe", "bcd"]
    np.testing.assert_array_equal(objective_ax.lines[0].get_ydata(), 1 + 1 / k)
    np.testing.assert_array_equal(gap_ax.lines[1].get_xdata(), np.arange(1, 26))
    np.testing.assert_array_equal(gap_ax.lines[1].get_ydata(), np.exp(-k[:25] / 2))
    path = plot.save_figure(figure, tmp_path / "convergence.png", dpi=72)
    _check_png(path)


def test_convergence_accepts_histories_by_name_and_masks_nonpositive_gaps(plot):
    histories = {"mm": {"objective": [3.0, 2.0, 1.5]}, "exact": {"gap": [1e-2, 0.0, -1e-17]}}
    figure = plot.plot_convergence(histories)
    objective_ax, gap_ax = figure.axes
    assert [line.get_label() for line in objective_ax.lines] == ["mm"]
    gap = gap_ax.lines[0].get_ydata()
    assert gap[0] == 1e-2 and np.isnan(gap[1]) and np.isnan(gap[2])  # zero and round-off not drawn on log axis


def test_convergence_single_axes_uses_a_log_twin(plot):
    from matplotlib.figure import Figure

    figure = Figure()
    ax = figure.subplots()
    assert plot.plot_convergence({"objective": [2.0, 1.0], "gap": [1.0, 0.1]}, ax=ax) is figure
    assert len(figure.axes) == 2 and figure.axes[1].get_yscale() == "log"


@pytest.mark.parametrize("bad, message", [
    ([], "empty"), (42, "FitReport"), ([{"loss": [1.0]}], "none of"), ([3.0], "FitReports or history"),
    ({"objective": ["a", "b"]}, r"history\['objective'\] must hold real numbers; got <U1"),   # was numpy's message
])
def test_convergence_bad_input(plot, bad, message):
    with pytest.raises(ValueError, match=message):
        plot.plot_convergence(bad)


# ---- margins ---------------------------------------------------------------------------------

def test_margin_histogram_png_and_legend_statistics(plot, tmp_path):
    rng = np.random.default_rng(0)
    margins = {"mLODM": rng.normal(1.0, 0.2, 400), "Rank-SVM": rng.normal(1.3, 0.6, (20, 20))}
    figure = plot.plot_margin_histogram(margins)
    labels = [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
    assert labels[0] == f"mLODM: mean {margins['mLODM'].mean():.3g}, var {margins['mLODM'].var():.3g}"
    assert labels[1].startswith("Rank-SVM: mean ")  # a 2-D array is flattened, not rejected
    _check_png(plot.save_figure(figure, tmp_path / "margins.png", dpi=72))


@pytest.mark.parametrize("bad, message", [
    ({}, "non-empty dict"), ([1.0, 2.0], "non-empty dict"), ({"a": []}, "empty"), ({"a": [1.0, np.nan]}, "NaN"),
    ({"a": ["x"]}, r"margins_by_model\['a'\] must hold real numbers"),
])
def test_margin_histogram_bad_input(plot, bad, message):
    with pytest.raises(ValueError, match=message):
        plot.plot_margin_histogram(bad)


# ---- decision regions ------------------------------------------------------------------------

def _mesh_regions(figure):
    from matplotlib.collections import QuadMesh

    meshes = [c for c in figure.axes[0].collections if isinstance(c, QuadMesh)]
    assert len(meshes) == 1
    return np.asarray(meshes[0].get_array()).ravel()


def test_multiclass_regions_are_the_argmax_of_the_scores(plot, tmp_path):
    X, y = make_multiclass(60, 2, 3, random_state=1)
    model = OneVsRestClassifier(SVC(kernel="rbf", gamma=0.5)).fit(X, y)
    resolution = 40
    figure = plot.plot_decision_regions(model, X, y, resolution=resolution)
    # the same grid, rebuilt independently: 10 % padding around the data
    padding = 0.1 * np.ptp(X, axis=0)
    low, high = X.min(axis=0) - padding, X.max(axis=0) + padding
    xx, yy = np.meshgrid(np.linspace(low[0], high[0], resolution), np.linspace(low[1], high[1], resolution))
    expected = np.argmax(model.decision_function(np.column_stack([xx.ravel(), yy.ravel()])), axis=1)
    np.testing.assert_array_equal(_mesh_regions(figure), expected)
    assert len(np.unique(expected)) == 3
    _check_png(plot.save_figure(figure, tmp_path / "regions.png", dpi=72))


def test_multilabel_and_binary_regions_render(plot, tmp_path):
    data = make_multilabel(60, 2, 3, random_state=3)
    model = OneVsRestClassifier(SVC(kernel="rbf", gamma=0.5)).fit(data.X, data.Y)
    figure = plot.plot_decision_regions(model, data.X, data.Y, resolution=60)
    legend = [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
    assert len(legend) == len(np.unique(data.Y, axis=0)) and all(name.startswith("{") for name in legend)
    _check_png(plot.save_figure(figure, tmp_path / "multilabel.png", dpi=72))

    X, y = make_multiclass(40, 2, 2, random_state=4)
    binary = LinearSVC().fit(X, y)  # 1-D decision_function: regions by its sign
    figure = plot.plot_decision_regions(binary, X, y, resolution=30)
    regions = _mesh_regions(figure)
    assert set(np.unique(regions)) == {0, 1}
    _check_png(plot.save_figure(figure, tmp_path / "binary.png", dpi=72))


def test_regions_from_predict_without_decision_function(plot):
    from sklearn.neighbors import KNeighborsClassifier

    X, y = make_multiclass(30, 2, 3, random_state=5)
    figure = plot.plot_decision_regions(KNeighborsClassifier(3).fit(X, y), X, y, resolution=20)
    assert set(np.unique(_mesh_regions(figure))) <= {0, 1, 2}


@pytest.mark.parametrize("X_shape, y_shape, resolution, message", [
    ((10, 3), (10,), 20, r"shape \(n, 2\)"), ((10, 2), (9,), 20, "Y_or_y"), ((10, 2), (10,), 1, "resolution"),
])
def test_decision_regions_bad_input(plot, X_shape, y_shape, resolution, message):
    X, y = make_multiclass(30, 2, 3, random_state=5)
    model = SVC().fit(X, y)
    with pytest.raises(ValueError, match=message):
        plot.plot_decision_regions(model, np.zeros(X_shape), np.zeros(y_shape), resolution=resolution)


def test_decision_regions_of_points_not_finite_or_a_grid_beyond_memory(plot):
    """Before: NaN or infinite points made a NaN grid, reported as the grid's 40,000 bad values (with
    numpy warnings for inf); resolution=10**6 ended in a MemoryError for 7 TiB."""
    X, y = make_multiclass(30, 2, 3, random_state=5)
    model = SVC().fit(X, y)
    bad = X.copy()
    bad[0, 0], bad[3, 1] = np.nan, np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"X contains 2 NaN or infinite value\(s\); every point drawn must be"):
            plot.plot_decision_regions(model, bad, y, resolution=200)
        with pytest.raises(ValueError, match=r"resolution=1000000 is a grid of 1,000,000,000,000 points that needs"):
            plot.plot_decision_regions(model, X, y, resolution=10**6)


# ---- saving ----------------------------------------------------------------------------------

def test_save_figure_is_atomic(plot, tmp_path):
    figure = plot.plot_convergence({"objective": [2.0, 1.0], "gap": [1.0, 0.1]})
    target = tmp_path / "figure.png"
    target.write_bytes(b"previous figure")

    def broken_savefig(handle, **options):
        handle.write(b"half a picture")
        raise RuntimeError("disk full")

    figure.savefig = broken_savefig
    with pytest.raises(RuntimeError, match="disk full"):
        plot.save_figure(figure, target)
    assert target.read_bytes() == b"previous figure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure.png"]  # no temporary file left


def test_save_figure_formats(plot, tmp_path):
    figure = plot.plot_convergence({"objective": [2.0, 1.0]})
    assert plot.save_figure(figure, tmp_path / "f.svg").read_text().lstrip().startswith("<?xml")
    with pytest.raises(ValueError, match="path must end in one of"):
        plot.save_figure(figure, tmp_path / "f.docx")
    with pytest.raises(TypeError, match="figure must be a matplotlib Figure .*; got str"):   # was AttributeError
        plot.save_figure("figure", tmp_path / "f.png")


def test_missing_matplotlib_says_how_to_install(monkeypatch):
    import mlsvm.plot

    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib → ImportError
    with pytest.raises(ImportError, match=r'pip install "mlsvm\[plot\]"'):
        mlsvm.plot.plot_convergence({"objective": [1.0]})
