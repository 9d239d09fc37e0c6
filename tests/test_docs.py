"""The documentation builds with warnings as errors, and every example draws its picture.

The site's sources (``docs/``, ``examples/``, ``CHANGELOG.md``) are copied to a
temporary folder and built there, so the test never writes into the source tree
(sphinx-gallery writes its pages next to the sources). Skipped when the ``docs``
extra (sphinx, pydata-sphinx-theme, numpydoc, sphinx-gallery, myst-parser,
sphinx-mathjax-offline) is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))

for module in (
    "sphinx",
    "pydata_sphinx_theme",
    "numpydoc",
    "sphinx_gallery",
    "myst_parser",
    "sphinx-mathjax-offline",
):
    pytest.importorskip(module, reason="the docs extra is not installed")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The site built from a copy of the sources; returns the copy's root."""
    root = tmp_path_factory.mktemp("site")
    ignore = shutil.ignore_patterns("_build", "generated", "_generated", "auto_examples")
    shutil.copytree(ROOT / "docs", root / "docs", ignore=ignore)
    shutil.copytree(ROOT / "examples", root / "examples")
    shutil.copy(ROOT / "CHANGELOG.md", root / "CHANGELOG.md")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-b", "html", "-q", "docs", "docs/_build/html"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, f"sphinx-build -W failed:\n{proc.stderr[-6000:]}"
    return root


def test_there_are_examples():
    assert len(EXAMPLES) >= 5


def test_the_site_builds_with_warnings_as_errors(built):
    html = built / "docs" / "_build" / "html"
    for page in ("index", "getting_started", "api", "reproductions", "changelog", "benchmarks"):
        assert (html / f"{page}.html").is_file(), page
    for page in ("auc", "choosing", "learners", "high_dimensional", "persistence"):
        assert (html / "user_guide" / f"{page}.html").is_file(), page
    # the API reference has a page per learner, generated from its docstring
    assert (html / "generated" / "aucstream.OPAUC.html").is_file()
    assert "class_weight" in (html / "user_guide" / "auc.html").read_text()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_drew_its_picture(built, example):
    images = built / "docs" / "auto_examples" / "images"
    pictures = sorted(images.glob(f"sphx_glr_{example.stem}_*.png"))
    assert pictures, f"{example.name} produced no figure"
    assert all(p.stat().st_size > 10_000 for p in pictures)  # not an empty canvas
    page = built / "docs" / "_build" / "html" / "auto_examples" / f"{example.stem}.html"
    assert pictures[0].name in page.read_text()


def test_formulas_render_offline(built):
    """MathJax is served from the site itself: no page loads it from another host, and
    the pages with formulas load the bundled copy (they showed raw LaTeX offline)."""
    html = built / "docs" / "_build" / "html"
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file()
    remote = re.compile(r"""<script[^>]+src="(?:https?:)?//[^"]*mathjax""", re.I)
    local = re.compile(r"""<script[^>]+src="[./]*_static/mathjax/tex-chtml\.js""")
    with_math = 0
    for page in html.rglob("*.html"):
        text = page.read_text(errors="replace")
        assert not remote.search(text), f"{page.relative_to(html)} loads MathJax remotely"
        if 'class="math' in text:  # Sphinx's math nodes
            assert local.search(text), f"{page.relative_to(html)} has formulas, no MathJax"
            with_math += 1
    assert with_math >= 3  # the user guide, the API pages with formulas
