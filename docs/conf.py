"""Sphinx configuration of satdt's documentation site (pydata-sphinx-theme, numpydoc,
sphinx-gallery, MyST-NB: the MyST pages and the teaching notebooks, run at each build).
Build: ``python -m sphinx -W --keep-going docs docs/_build/html``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
try:  # no windows while building; in this process only, so the notebooks draw inline
    import matplotlib

    matplotlib.use("Agg")
except ImportError:
    pass

import satdt  # noqa: E402

project = "satdt"
author = "the satdt developers"
copyright = "2026, the satdt developers"
release = version = satdt.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",  # MyST markdown pages (myst-parser) and the teaching notebooks, run at build time
    "sphinx_gallery.gen_gallery",
    "sphinx_design",  # the landing page's grid and cards
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
# (sg_execution_times: the pages of computation times, left by an earlier build: see below)
exclude_patterns = [
    "_build",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "**.zip",
    "**sg_execution_times.rst",
]
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# The notebooks of examples/notebooks are committed without outputs: each build copies them to
# docs/teaching/notebooks/ and runs them (in the notebook's folder; their data paths follow
# satdt.__file__), a cell that fails failing the build. The kernel imports the satdt of this
# checkout, as the API reference does.
NOTEBOOKS = ROOT / "examples" / "notebooks"
nb_execution_mode = "force"  # every build: a cache would not see a change in satdt itself
nb_execution_timeout = 300  # seconds per cell; the whole notebook takes about 10 s
nb_execution_raise_on_error = True
nb_execution_show_tb = True
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
)

autosummary_generate = True
# A class's page is its autodoc entry, every documented member in full (the page's table of
# contents lists them); the estimators' and the models' pages add the methods they inherit (fit,
# predict, ... from their bases).
templates_path = ["_templates"]
autodoc_default_options = {"members": True}
numpydoc_show_class_members = False
# Nitpicky builds (-n) resolve every reference but these: the build runs offline (no
# intersphinx), so NumPy's and the standard library's types in signatures stay plain text, as do
# the internal types the public signatures name.
nitpick_ignore = [
    ("py:class", name)
    for name in (
        "numpy.ndarray",
        "collections.abc.Callable",
        "collections.abc.Mapping",
        "collections.abc.Sequence",
        "collections.abc.Iterator",
        "os.PathLike",
        "pathlib.Path",
        "Model",
        "Forest",  # satdt.models.forest.Forest in the signatures of its own module's readers
        "satdt.models.base.Self",  # the model's own kind in the base's signatures (a TypeVar)
        "Preparation",
        "Stats",
        "satdt.data.schema.Schema",
        "satdt.estimators.tree.ParetoFront",
        "satdt.estimators.canonical._Canonical",  # the private solver behind minimum_depth_trees' result
        "satdt.estimators.base.SatdtEstimator",
        "satdt.task.events.Event",
        "satdt.task.events.SatCall",
        "satdt.estimators.rashomon._Solver",
    )
]
# "tuple[X, ...]" and "dict[str, str]" of dataclass fields, split at their commas
nitpick_ignore_regex = [("py:class", r"tuple\[(Incumbent|Event|Bound)"), ("py:class", r"dict\[str")]
# numpydoc validates the docstring of every object the API reference documents: every check but
# those that fight the house style, where a docstring's summary is one sentence wrapped at 100
# columns and closed on its last line (SS06, GL02), the longer story is told in the user guide
# and the gallery (ES01 extended summary, SA01 See Also, EX01 Examples), and a Returns entry
# may name its value before its type (RT02).
numpydoc_validation_checks = {"all", "GL02", "SS06", "ES01", "SA01", "EX01", "RT02"}
numpydoc_validation_exclude: set[str] = set()  # every public docstring is validated


sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples" / "gallery"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",  # every example runs
    "abort_on_example_error": True,
    "download_all_examples": False,
    # no pages of computation times: they load jQuery and DataTables from CDNs, which a reader
    # offline (or the browser test) cannot reach
    "write_computation_times": False,
    "within_subsection_order": "FileNameSortKey",
}

html_theme = "pydata_sphinx_theme"
html_title = "satdt"
html_logo = "_static/logo.svg"
html_favicon = "_static/logo.svg"
html_static_path = ["_static"]
html_css_files = ["satdt.css"]
html_theme_options = {
    "logo": {"text": "satdt", "alt_text": "satdt: home"},
    "navigation_depth": 2,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "navbar_align": "left",
}
# The theme follows the reader's light or dark setting; without a default its first page logs
# "Got invalid theme mode" in the browser's console.
html_context = {"default_mode": "auto"}


def _write_cli_reference(app: object) -> None:
    """docs/guide/cli-reference.md from the parser itself: every command and option, never
    copied by hand."""
    import argparse

    from satdt.cli.parser import build_parser

    parser = build_parser()
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    os.environ.setdefault("COLUMNS", "100")
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    parts = [
        "# Command-line reference\n",
        "Generated from `satdt`'s parser when the site is built: every command and option.\n",
        "```text\n" + parser.format_help() + "```\n",
    ]
    for name, command in commands.choices.items():
        parts.append(f"## satdt {name}\n\n```text\n{command.format_help()}```\n")
    target = Path(__file__).parent / "guide" / "cli-reference.md"
    text = "\n".join(parts)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


def _write_parameters(app: object) -> None:
    """docs/guide/parameters.md from the table of parameters (satdt.estimators.parameters)."""
    from satdt.estimators.parameters import parameter_tables

    target = Path(__file__).parent / "guide" / "parameters.md"
    text = parameter_tables()
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


def _skip_slots(app: object, what: str, name: str, obj: object, skip: bool, options: object):
    """Leave out the slots of Tree and Diagram: each is a constructor parameter of the same
    name, documented in the class's Parameters section (autodoc would list them again, empty)."""
    # autodoc sees a slot's descriptor, autosummary a sentinel named SLOTS_ATTR
    if type(obj).__name__ == "member_descriptor" or repr(obj) == "SLOTS_ATTR":
        return True
    return None


def _copy_notebooks(app: object) -> None:
    """docs/teaching/notebooks/*.ipynb from examples/notebooks, never edited by hand."""
    target = Path(__file__).parent / "teaching" / "notebooks"
    target.mkdir(exist_ok=True)
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        copy = target / notebook.name
        if not copy.exists() or copy.read_bytes() != notebook.read_bytes():
            copy.write_bytes(notebook.read_bytes())


def setup(app: object) -> None:
    app.connect("builder-inited", _write_cli_reference)
    app.connect("builder-inited", _write_parameters)
    app.connect("builder-inited", _copy_notebooks)
    app.connect("autodoc-skip-member", _skip_slots)
