"""Sphinx configuration of the mlsvm documentation site.

Build (warnings are errors, as in CI)::

    pip install ".[docs]"
    python -m sphinx -W -b html docs docs/_build/html

The gallery (``examples/``) and the errata proofs (``examples/errata/``) are executed by
sphinx-gallery at every build; their printed numbers and figures are part of the pages.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import mlsvm  # noqa: E402
from mlsvm.cli import build_parser  # noqa: E402

project = "mlsvm"
author = "the mlsvm developers"
copyright = "2026, the mlsvm developers"
release = version = mlsvm.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "check_site.py", "_templates"]
templates_path = ["_templates"]
nitpicky = False

# Markdown pages: $...$ and $$...$$ math with labelled amsmath environments, ``:::`` fences,
# heading anchors so that [text](page.md#anchor) links are checked.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
myst_dmath_double_inline = True

# API reference: autosummary walks the packages recursively (module renames flow through).
autosummary_generate = True
autosummary_imported_members = False
autosummary_ignore_module_all = True   # a module's own public names; re-exports are documented once, where defined
autodoc_default_options = {"show-inheritance": False}
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()   # validation is a test (tests/test_docstrings.py)


sphinx_gallery_conf = {
    "examples_dirs": [str(ROOT / "examples")],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/(plot|erratum)_",
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "min_reported_time": 0,
    "show_memory": False,
    "within_subsection_order": "FileNameSortKey",
    "plot_gallery": "True",
}

html_theme = "pydata_sphinx_theme"
html_title = f"mlsvm {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_depth": 3,
    "show_toc_level": 2,
    "navbar_align": "left",
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"**": ["sidebar-nav-bs"]}
html_show_sourcelink = False


def _write_cli_help(app) -> None:
    """Write the ``--help`` text of ``mlsvm`` and of each subcommand for ``cli.md`` to include."""
    out = HERE / "_generated"
    out.mkdir(exist_ok=True)
    parser = build_parser()
    os.environ["COLUMNS"] = "100"
    texts = {"mlsvm": parser.format_help()}
    for action in parser._subparsers._group_actions:           # the subcommands, in order
        for name, sub in action.choices.items():
            texts[f"mlsvm-{name}"] = sub.format_help()
    for name, text in texts.items():
        path = out / f"{name}.txt"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def _skip_member(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated metadata-routing methods (their docstrings refer to
    scikit-learn's own glossary, which this site does not have)."""
    if name == "get_metadata_routing" or (name.startswith("set_") and name.endswith("_request")):
        return True
    return None


def setup(app):
    app.connect("builder-inited", _write_cli_help)
    app.connect("autodoc-skip-member", _skip_member)
