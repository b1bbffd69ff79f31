"""Checks of the built documentation site (run by CI after the Sphinx build).

    python docs/check_site.py [docs/_build/html]

1. Internal links: every relative ``href``/``src`` of every HTML page points to a file of the
   build, and every ``#fragment`` to an element ``id`` of its target page.
2. Rendered mathematics: every display/inline math block (MathJax's ``\\[ \\]`` / ``\\( \\)``
   inside ``class="math"``) has balanced braces and matching ``\\begin``/``\\end`` environments,
   and each model page contains its typeset canonical objective (a display block with the
   expected LaTeX).

Exits 1 with one line per problem. Only the standard library is used.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

# Model page -> LaTeX fragments its canonical objective must contain (in one display block).
OBJECTIVES = {
    "rank_svm.html": [r"\min_{w, b, \xi}", r"\frac12\sum_{k=1}^Q\|w_k\|^2", r"\frac{1}{|Y_i||\bar Y_i|}"],
    "ovn.html": [r"\frac12\operatorname{tr}(WMW^\top)", r"\beta\sum_{k=1}^K\sum_{i\in C_k}\xi_{ki}"],
    "sparse_mm.html": [r"\frac\lambda2\operatorname{tr}(R^{-1}A^\top K_{JJ}A)", r"\max(0, 1 - y_{ir}F_{ir})^2"],
    "mlodm.html": [r"\frac12\sum_k\|w_k\|^2 + \frac C2", r"\mu\epsilon_{ikl}^2"],
    "matrix_svm.html": [r"\frac12\operatorname{tr}(W^\top W) + C\sum_{ij}Q_{ij}"],
    "rank_binary.html": [r"\max_k\|w_k\|^2 + \frac CQ\sum_{ik}\xi_{ik}"],
    "binary_svm.html": [r"\frac12\|w\|^2"],
}


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.math: list[str] = []
        self._math_depth = 0
        self._buffer: list[str] = []
        self._stack: list[bool] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and "name" in attrs:
            self.ids.add(attrs["name"])
        for key in ("href", "src"):
            if attrs.get(key):
                self.links.append(attrs[key])
        if tag in ("br", "img", "meta", "link", "input", "hr"):
            return
        is_math = "math" in (attrs.get("class") or "").split()
        self._stack.append(is_math)
        if is_math:
            self._math_depth += 1

    def handle_endtag(self, tag):
        if not self._stack:
            return
        if self._stack.pop():
            self._math_depth -= 1
            if self._math_depth == 0:
                self.math.append("".join(self._buffer))
                self._buffer = []

    def handle_data(self, data):
        if self._math_depth:
            self._buffer.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _math_problems(source: str) -> list[str]:
    problems = []
    body = source.replace(r"\{", "").replace(r"\}", "")
    depth = 0
    for char in body:
        depth += (char == "{") - (char == "}")
        if depth < 0:
            break
    if depth != 0:
        problems.append("unbalanced braces")
    begins = re.findall(r"\\begin\{([^}]*)\}", source)
    ends = re.findall(r"\\end\{([^}]*)\}", source)
    if begins != ends[::-1] and sorted(begins) != sorted(ends):
        problems.append(f"\\begin/\\end mismatch {begins} vs {ends}")
    if len(re.findall(r"\\left(?![a-zA-Z])", source)) != len(re.findall(r"\\right(?![a-zA-Z])", source)):
        problems.append("\\left/\\right mismatch")
    return problems


def check(root: Path) -> list[str]:
    # _static holds the theme's template fragments, not pages.
    pages = {path: _parse(path) for path in root.rglob("*.html") if "_static" not in path.relative_to(root).parts}
    problems: list[str] = []
    n_links = n_math = 0
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith(("//", "mailto:", "javascript:", "data:")):
                continue
            n_links += 1
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{path.relative_to(root)}: broken link {link!r}")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{path.relative_to(root)}: missing anchor {link!r}")
        for block in page.math:
            n_math += 1
            for problem in _math_problems(block):
                problems.append(f"{path.relative_to(root)}: math {block.strip()[:60]!r}: {problem}")
    for name, fragments in OBJECTIVES.items():
        path = root / name
        if not path.exists():
            problems.append(f"{name}: page missing")
            continue
        displays = [block for block in pages[path.resolve()].math if block.strip().startswith(r"\[")]
        if not any(all(fragment in block for fragment in fragments) for block in displays):
            problems.append(f"{name}: no display math block contains the canonical objective {fragments}")
    print(f"check_site: {len(pages)} pages, {n_links} internal links, {n_math} math blocks, "
          f"{len(OBJECTIVES)} model objectives; {len(problems)} problems")
    return problems


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0] if argv else Path(__file__).resolve().parent / "_build" / "html").resolve()
    if not (root / "index.html").exists():
        print(f"check_site: {root} has no index.html; build the site first", file=sys.stderr)
        return 2
    problems = check(root)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
