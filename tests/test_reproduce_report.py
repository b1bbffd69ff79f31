"""``mlsvm reproduce`` embeds its figures: PNGs written beside the markdown report, linked by
relative path; without matplotlib the report says the figures were skipped and why.

The paper experiments themselves (minutes, on the real datasets) are replaced by one fixed row:
what is tested here is the report and its figures, which are computed on toy problems."""

import re
import sys

import pytest

import mlsvm.reproduce as reproduce_module
from mlsvm.reproduce import PAPERS, Row, reproduce

FIGURES_PER_PAPER = {"rank-svm": 1, "ovn": 3, "sparse-mm": 2, "mlodm": 2, "matrix-svm": 1}


@pytest.fixture
def one_row(monkeypatch):
    """Each paper's ``experiments`` replaced by one row (the real ones take minutes)."""
    import importlib

    for module_name in PAPERS.values():
        monkeypatch.setattr(importlib.import_module(module_name), "experiments",
                            lambda quick: [Row("toy", "accuracy", 0.5, 0.75, "stub")])


def _links(text):
    return re.findall(r"!\[[^\]]+\]\(([^)]+)\)", text)


@pytest.mark.parametrize("paper", ["mlodm", "sparse-mm"])
def test_report_links_existing_pngs(paper, one_row, tmp_path):
    pytest.importorskip("matplotlib")
    from test_plot import _check_png

    path, text = reproduce(paper, tmp_path)
    assert path == tmp_path / f"reproduce-{paper}.md" and path.read_text(encoding="utf-8") == text
    assert "| toy | accuracy | 0.5000 | 0.7500 | -0.2500 | stub |" in text
    links = _links(text)
    assert len(links) == FIGURES_PER_PAPER[paper]
    for link in links:
        assert "/" not in link and link.startswith(f"reproduce-{paper}-")  # relative, beside the report
        _check_png(path.parent / link)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(links + [path.name])  # no temporary left


def test_every_paper_has_figures():
    from mlsvm.reproduce.figures import FIGURES

    assert set(FIGURES) == set(PAPERS) == set(FIGURES_PER_PAPER)


def test_without_matplotlib_the_report_says_why(one_row, tmp_path, monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib → ImportError
    path, text = reproduce("ovn", tmp_path)
    assert "Figures skipped: matplotlib is not installed" in text and 'pip install "mlsvm[plot]"' in text
    assert not _links(text) and [p.name for p in tmp_path.iterdir()] == [path.name]
    assert reproduce_module.render_markdown  # the module still imports without matplotlib
