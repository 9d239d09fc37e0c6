"""Sphinx configuration of the aucstream documentation.

Build (warnings are errors; the gallery scripts run at build time):

    sphinx-build -W -b html docs docs/_build/html
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT / "src"))  # the source tree, also without an install

import aucstream  # noqa: E402

project = "aucstream"
author = "aucstream developers"
copyright = "aucstream developers, BSD-3-Clause"
release = aucstream.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax copied into the site (_static/mathjax), so formulas render offline
    # instead of loading from a CDN (the docs extra installs it)
    "sphinx-mathjax-offline",
    "sphinx.ext.viewcode",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

# the bundled MathJax (sphinx-mathjax-offline copies it there), never a remote URL
mathjax_path = "mathjax/tex-chtml.js"

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
# benchmarks.md is written by benchmarks/run.py and shown through benchmarks.rst;
# results/README_scale_section.md is README text, not a page
exclude_patterns = [
    "_build",
    "_generated",
    "benchmarks.md",
    "results/README_scale_section.md",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.json",
]

# --- API reference: autosummary pages from the docstrings (numpydoc format)
autosummary_generate = True
autosummary_ignore_module_all = False  # a module's members are its __all__


def _documented_elsewhere() -> dict[str, dict[str, str]]:
    """{module: {name: the page's name}} of the members a documented module re-exports
    whose page is another module's: the package's own names (``aucstream.capo.CAPO``
    is ``aucstream.CAPO``) and a class imported from the module that defines it
    (``aucstream.random_features.ChunkedPipeline``). Their module pages link to that
    one page (``_templates/autosummary/module.rst``) instead of a copy of it."""
    import importlib

    api = (DOCS / "api.rst").read_text()
    names = re.findall(r"^ {3}(aucstream(?:\.\w+)*)\s*$", api, flags=re.M)
    modules = {name: importlib.import_module(name) for name in names}
    moved: dict[str, dict[str, str]] = {}
    for name, module in modules.items():
        if name == "aucstream":
            continue  # (the package's page keeps all its names)
        for item in getattr(module, "__all__", ()):
            obj = getattr(module, item)
            home = getattr(obj, "__module__", None)
            if item in aucstream.__all__ and getattr(aucstream, item) is obj:
                moved.setdefault(name, {})[item] = f"aucstream.{item}"
            elif home != name and home in modules and item in modules[home].__all__:
                moved.setdefault(name, {})[item] = f"{home}.{item}"
    return moved


autosummary_context = {"documented_elsewhere": _documented_elsewhere()}
autodoc_default_options = {"member-order": "groupwise"}
autodoc_typehints = "none"  # the numpydoc Parameters sections give the types
numpydoc_show_class_members = False  # members are listed by the class template
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "sklearn": ("https://scikit-learn.org/stable", None),
}
# the build must not need the network: inventories are used only when cached
intersphinx_disabled_reftypes = ["*"]
intersphinx_timeout = 1
if os.environ.get("AUCSTREAM_DOCS_OFFLINE", "1") == "1":
    intersphinx_mapping = {}

# --- Plain-text notation in docstrings that reStructuredText would misread.
# Some docstrings write a set size as |S| or name an attribute as beta_ in running
# text; docutils reads the first as a substitution and the second as a hyperlink
# reference and stops with an error. Outside literals, roles, emphasis and math, such
# text is escaped here (the docstrings themselves are listed for fixing in the
# release notes of the documentation); nothing else is changed.
_PROTECTED = re.compile(r"(``.+?``|:\w+:`[^`]+`|`[^`]+`_{0,2}|\*\*.+?\*\*|\*[^*\s][^*]*\*)")
_BARS = re.compile(r"(?<![\\|\w])\|([A-Za-z][\w ]*)\|(?![\w|])")
_TRAILING = re.compile(r"(?<![\\\w`])([A-Za-z]\w*?)_(?=[\s^.,;:)+\-*/|\]}]|$)")


def _escape_plain(text: str) -> str:
    parts = _PROTECTED.split(text)
    for i in range(0, len(parts), 2):  # even items are outside the protected spans
        parts[i] = _TRAILING.sub(r"\1\\_", _BARS.sub(r"\\|\1\\|", parts[i]))
    return "".join(parts)


def _escape_docstring(app, what, name, obj, options, lines) -> None:
    in_math = False
    math_indent = 0
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if stripped.startswith(".. math::"):
            in_math, math_indent = True, indent
            continue
        if in_math:
            if stripped and indent <= math_indent:
                in_math = False
            else:
                continue
        if stripped.startswith(("..", ">>>", "...")) or not stripped:
            continue
        lines[i] = _escape_plain(line)


def _skip_member(app, what, name, obj, skip, options):
    """Leave out scikit-learn's metadata-routing and output-container methods
    (``set_fit_request`` and the like, generated on every estimator class;
    ``set_output`` of transformers) and the members of River's base classes: they
    are documented by those libraries, and their docstrings refer to labels of
    their own sites."""
    if name in ("get_metadata_routing", "set_output") or (
        name.startswith("set_") and name.endswith("_request")
    ):
        return True
    # members inherited from River's base classes (aucstream.river) are River's
    if str(getattr(obj, "__module__", "") or "").startswith("river."):
        return True
    return None


def _numpydoc_template_once() -> None:
    """numpydoc makes a new template environment, and compiles its docstring template
    again, for every object it documents (its ``get_doc_object``; about a tenth of
    this site's build): the same template is compiled once here, loaded as numpydoc
    loads it, and the rest of numpydoc's work is unchanged. Its hook for this is the
    module's ``get_doc_object`` (which ``numpydoc.setup`` also sets)."""
    from jinja2.sandbox import SandboxedEnvironment
    from numpydoc import docscrape_sphinx as scrape
    from numpydoc import numpydoc as extension
    from sphinx.jinja2glue import BuiltinTemplateLoader

    original = extension.get_doc_object
    loaded: dict = {}

    def get_doc_object(obj, what=None, doc=None, config=None, builder=None):
        if builder is None:  # numpydoc's other use (signatures): unchanged
            return original(obj, what=what, doc=doc, config=config, builder=builder)
        if builder not in loaded:
            loader = BuiltinTemplateLoader()
            loader.init(builder, dirs=[str(Path(scrape.__file__).parent / "templates")])
            env = SandboxedEnvironment(loader=loader)
            loaded[builder] = env.get_template("numpydoc_docstring.rst")
        config = {} if config is None else config
        config["template"] = loaded[builder]
        return scrape.get_doc_object_orig(
            obj,
            what=what,
            doc=doc,
            config=config,
            class_doc=scrape.SphinxClassDoc,
            func_doc=scrape.SphinxFunctionDoc,
            obj_doc=scrape.SphinxObjDoc,
        )

    extension.get_doc_object = get_doc_object


def setup(app) -> None:
    app.connect("autodoc-process-docstring", _escape_docstring, priority=900)
    app.connect("autodoc-skip-member", _skip_member)
    _numpydoc_template_once()


# --- The benchmark report (written by benchmarks/run.py) when it exists
_GENERATED = DOCS / "_generated"
_GENERATED.mkdir(exist_ok=True)
_bench = DOCS / "benchmarks.md"
_bench_text = (
    _bench.read_text()
    if _bench.exists()
    else "The benchmark report `docs/benchmarks.md` has not been generated in this "
    "checkout: run `python benchmarks/run.py`.\n"
)
if not (_GENERATED / "benchmarks.md").exists() or (
    (_GENERATED / "benchmarks.md").read_text() != _bench_text
):
    (_GENERATED / "benchmarks.md").write_text(_bench_text)

# --- Markdown pages (the reproduction reports, the changelog)
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

# --- Examples gallery: every script runs at build time on shipped or generated data
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "image_scrapers": ("matplotlib",),
    "abort_on_example_error": True,
    "show_memory": False,
    "capture_repr": (),
}

# --- HTML
html_theme = "pydata_sphinx_theme"
html_static_path = ["_static"]
html_css_files = ["aucstream.css"]
html_title = f"aucstream {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    # the page's table of contents on the right, except beside the reports' wide tables
    "secondary_sidebar_items": {
        "getting_started": ["page-toc"],
        "user_guide/*": ["page-toc"],
        "generated/*": ["page-toc"],
        "auto_examples/*": ["page-toc"],
        "results/*": [],
    },
}
html_sidebars = {"index": [], "getting_started": [], "changelog": []}
html_show_sourcelink = False
