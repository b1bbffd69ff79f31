"""docs/check_site.py (run by CI on the built site) on a small hand-made HTML tree: it must pass a
correct tree and report each kind of fault: a broken link, a missing anchor, unbalanced math and
a model page without its typeset objective."""

import importlib.util
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location("check_site", Path(__file__).resolve().parents[1] / "docs" / "check_site.py")
check_site = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(check_site)

OBJECTIVE = r"\min_{w} \frac12\|w\|^2"


def _page(body: str) -> str:
    return f"<html><body>{body}</body></html>"


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.setattr(check_site, "OBJECTIVES", {"model.html": [OBJECTIVE]})
    (tmp_path / "index.html").write_text(_page('<a href="model.html#primal">model</a> <a href="https://x.org/">x</a>'))
    (tmp_path / "model.html").write_text(_page(
        f'<h2 id="primal">Primal</h2><div class="math notranslate nohighlight">\\[{OBJECTIVE}\\]</div>'
        '<p><span class="math notranslate nohighlight">\\(\\alpha \\leftarrow \\beta\\)</span></p>'))
    return tmp_path


def test_a_correct_site_passes(site):
    assert check_site.check(site) == []


@pytest.mark.parametrize("fault, expected", [
    (("index.html", 'href="model.html#primal"', 'href="modle.html#primal"'), "broken link"),
    (("index.html", 'href="model.html#primal"', 'href="model.html#dual"'), "missing anchor"),
    (("model.html", r"\(\alpha \leftarrow \beta\)", r"\(\alpha_{k \leftarrow \beta\)"), "unbalanced braces"),
    (("model.html", r"\frac12\|w\|^2", r"\frac12\|w\|^3"), "canonical objective"),
])
def test_each_fault_is_reported(site, fault, expected):
    name, old, new = fault
    path = site / name
    path.write_text(path.read_text().replace(old, new))
    problems = check_site.check(site)
    assert len(problems) == 1 and expected in problems[0]
