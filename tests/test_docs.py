"""The documentation builds with warnings as errors, and every example draws its picture.

The site's sources (``docs/``, ``examples/``, ``CHANGELOG.md``) are copied to a
temporary folder and built there, so the test never writes into the source tree
(sphinx-gallery writes its pages next to the sources). Skipped when the ``docs``
extra (sphinx, pydata-sphinx-theme, numpydoc, sphinx-gallery, myst-parser,
sphinx-mathjax-offline) is not installed.

With pytest-xdist the site is built once for all workers: into the session's shared
temporary folder, under a lock (the first worker that needs it builds it, the others
wait and read the same build), as pytest-xdist's documentation recommends for
expensive fixtures; a worker never builds it a second time when the scheduler splits
this module's tests between workers.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:  # the lock of the shared build (POSIX; elsewhere each worker builds its own)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

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


def _build(root: Path) -> str:
    """Build the site from a copy of the sources into ``root``; sphinx's stderr when
    it fails, else the empty string."""
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
    return "" if proc.returncode == 0 else proc.stderr[-6000:] or "(no stderr)"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The site built from a copy of the sources; returns the copy's root (shared by
    the xdist workers of this session: module docstring)."""
    if "PYTEST_XDIST_WORKER" not in os.environ or fcntl is None:
        root = tmp_path_factory.mktemp("site")
        failure = _build(root)
        assert not failure, f"sphinx-build -W failed:\n{failure}"
        return root
    shared = tmp_path_factory.getbasetemp().parent  # (the workers' common folder)
    root, outcome = shared / "site", shared / "site.outcome"
    with open(shared / "site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not outcome.exists():
            shutil.rmtree(root, ignore_errors=True)  # (a build interrupted earlier)
            root.mkdir()
            outcome.write_text(_build(root))
        failure = outcome.read_text()
    assert not failure, f"sphinx-build -W failed:\n{failure}"
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


def test_an_object_has_one_page(built):
    """A name the package exports is documented once, on the package's page; the page
    of the module it comes from links there (``docs/conf.py``): no two API pages
    document the same object."""
    import importlib

    pages: dict[int, list[str]] = {}
    for page in (built / "docs" / "_build" / "html" / "generated").glob("aucstream*.html"):
        module, _, name = page.stem.rpartition(".")
        if not module:
            continue
        obj = getattr(importlib.import_module(module), name)
        pages.setdefault(id(obj), []).append(page.name)
    assert len(pages) > 150
    assert not [names for names in pages.values() if len(names) > 1]
    assert (built / "docs" / "_build" / "html" / "generated" / "aucstream.CAPO.html").is_file()


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
