"""The page: its sections in order, a table of contents, inline CSS and a little inline
JavaScript (zoom the model, open the loop's steps, mark an explanation on the model)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import SatdtError
from ..plot.draw import MARK_STYLE
from ..plot.layout import fitted_model
from ._fit import Fit
from ._html import esc, number
from .bounds import bounds_section
from .explained import explanations_section
from .loop import loop_section
from .sections import data_section, model_section, search_section, stats_section

if TYPE_CHECKING:
    from ..task.result import SearchResult

#: the sections of a report, in order: (anchor, title in the table of contents)
SECTIONS = (
    ("data", "The data"),
    ("model", "The model"),
    ("search", "The search"),
    ("stats", "Statistics"),
    ("bounds", "Bounds over time"),
    ("loop", "The counterexample loop"),
    ("explanations", "Explanations"),
)
SUFFIXES = (".html", ".htm")

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;
max-width:72rem;padding:0 1.2rem 3rem;color:#1b1b1b;line-height:1.45}
h1{font-size:1.6rem;margin:1.2rem 0 .3rem}h2{border-bottom:1px solid #ccc;margin-top:2.2rem}
nav ol{columns:2;padding-left:1.4rem}nav a{color:#1f5f99}
.intro{color:#444;font-style:italic}.not-applicable{color:#6b4e00;background:#fff6dc;
padding:.4rem .7rem;border-radius:4px}.more{color:#555;font-size:.9rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.92rem}
td,th{border:1px solid #ddd;padding:.2rem .55rem;text-align:left;vertical-align:top}
th{background:#f3f3f3}table.pairs thead{display:none}table.pairs td:first-child{color:#444}
.figure{overflow:auto;max-height:80vh;border:1px solid #ddd;border-radius:4px;background:#fff;
padding:4px}.figure.small{max-height:none;display:inline-block;max-width:100%}
svg text{font-family:"DejaVu Sans",Verdana,sans-serif;fill:#1b1b1b}
svg path.yes{fill:none;stroke:#4d4d4d;stroke-width:1.2}
svg path.no{fill:none;stroke:#737373;stroke-width:1.2;stroke-dasharray:5 3}
svg text.arc,svg text.tick{font-size:11px;fill:#4d4d4d}
svg .grid{stroke:#e4e4e4}svg .axis{stroke:#888}
svg path.series{fill:none;stroke-width:2}svg .incumbent{stroke:#1f77b4;fill:#1f77b4}
svg .lower{stroke:#d62728;fill:#d62728;stroke-dasharray:6 3}svg circle.lower{stroke-dasharray:none}
svg path.marker{stroke-width:2;fill:none}svg .refuted{stroke:#a3312a}svg .found{stroke:#2ca02c}
.legend .key{margin-right:1.2rem;font-size:.9rem}.legend .key::before{content:"";
display:inline-block;width:1.4rem;height:.25rem;margin-right:.35rem;vertical-align:middle;
background:#888}.key.incumbent::before{background:#1f77b4}.key.lower::before{background:#d62728}
.key.refuted::before{background:#a3312a}.key.found::before{background:#2ca02c}
details.step{border-left:4px solid #1f5f99;margin:.35rem 0;padding:.15rem .6rem}
details.step.unsat{border-color:#a3312a}details.step.unknown{border-color:#888}
details.step summary{cursor:pointer;font-family:ui-monospace,monospace;font-size:.88rem}
pre{background:#f6f6f6;padding:.5rem;overflow:auto;font-size:.85rem}
button{margin:0 .4rem .3rem 0;font:inherit;font-size:.85rem;cursor:pointer}
.explanation{border:1px solid #ddd;border-radius:4px;padding:.2rem .9rem;margin:.8rem 0}
code{background:#f3f3f3;padding:0 .2rem;border-radius:3px}
"""

_SCRIPT = """
document.addEventListener("click", function (event) {
  var button = event.target.closest("button");
  if (!button) return;
  var figure = document.getElementById("model-figure");
  var data = button.dataset;
  if (data.steps) {
    document.querySelectorAll("details.step").forEach(function (step) {
      step.open = data.steps === "open";
    });
  } else if (data.zoom && figure) {
    var svg = figure.querySelector("svg"), box = svg.viewBox.baseVal;
    var width = data.zoom === "fit" ? figure.clientWidth - 12
      : data.zoom === "actual" ? box.width : svg.width.baseVal.value * parseFloat(data.zoom);
    svg.setAttribute("width", Math.round(width));
    svg.setAttribute("height", Math.round(width * box.height / box.width));
  } else if (data.marks !== undefined && figure) {
    figure.querySelectorAll("g.box").forEach(function (box) {
      box.removeAttribute("data-mark");
    });
    data.marks.split(" ").forEach(function (pair) {
      var parts = pair.split(":");
      var box = figure.querySelector('g.box[data-gid="' + parts[0] + '"]');
      if (box) box.setAttribute("data-mark", parts[1]);
    });
    var leaf = figure.querySelector('g.box[data-mark="leaf"]');
    (leaf || figure).scrollIntoView({block: "center", inline: "center"});
  }
});
"""


def _mark_css() -> str:
    """How a node marked by an explanation's button is drawn: as the pictures of
    :func:`satdt.plot.plot_explanation` mark it."""
    rules = [
        f'g.box[data-mark="{role}"] rect{{stroke:{colour};stroke-width:{width * 96 / 72:.1f}px}}'
        f".key.mark-{role}::before{{background:{colour}}}"
        for role, (colour, width) in MARK_STYLE.items()
    ]
    return "".join(rules)


def check_report_target(path: str | Path, *, what: str = "report") -> Path:
    """Refuse a report path that does not name an HTML file, before any work.

    Parameters
    ----------
    path : str or Path
        The file to write.
    what : str, default="report"
        Who asks, for the message (the command line passes ``--report``).

    Returns
    -------
    Path
        ``path`` as a Path.

    Raises
    ------
    SatdtError
        If ``path`` does not end in ``.html`` or ``.htm``, or names a folder.
    """
    target = Path(path)
    if target.suffix.lower() not in SUFFIXES:
        raise SatdtError(
            f"{what} writes an HTML page: name a .html file, got {str(path)!r} "
            f"(e.g. {target.with_suffix('.html').name})"
        )
    if target.is_dir():
        raise SatdtError(f"{what} {path} is a folder, not a file: name a .html file in it")
    return target


def report_html(
    model: Any,
    result: SearchResult,
    *,
    method: str = "",
    X: Any = None,
    rows: int | Sequence[int] = 3,
    row_names: Sequence[str] | None = None,
    title: str = "",
) -> str:
    """A fit as one self-contained HTML page a student can open (no network needed).

    The page shows the data, the model drawn (inline SVG, scrollable and zoomable), the
    search's outcome, its statistics, the bounds over time (an inline SVG chart of the
    incumbents and the lower bound; for the consistency portfolio each depth settled, by
    which search and when), the counterexample-guided loop step by step (each SAT call: the
    bound asked, the answer, the formula's size, the rows added, the tree found) and the
    explanations of a few rows. A section that does not apply to the fit says so in one line.

    Parameters
    ----------
    model : Tree, Diagram or fitted estimator
        The model (an estimator's fitted ``tree_`` or ``diagram_``).
    result : SearchResult
        What its search returned (an estimator's ``result_``).
    method : str, default=""
        The search that ran (an estimator's ``method_``).
    X : array-like of shape (n_rows, n_columns), optional
        Rows of the model's design matrix, some of which the explanations explain (the
        training table, on the command line). Without it, no row is explained.
    rows : int or sequence of int, default=3
        The rows of ``X`` to explain: their indices, or how many (chosen to cover the
        classes predicted).
    row_names : sequence of str, optional
        The names of the training rows, when ``X`` is the training table: the
        counterexamples and the rows explained are called so (default ``row i``, the
        0-based index; the command line passes line numbers).
    title : str, default=""
        What the page is about (the data's name); the page's title.

    Returns
    -------
    str
        The page, valid HTML5; every name from the data escaped.

    Raises
    ------
    ParameterError
        If ``rows`` does not name rows of ``X``.
    """
    fitted = fitted_model(model)
    design = None if X is None else np.asarray(X, dtype=np.float64)
    fit = Fit(fitted, result, method, design, row_names)
    sections = [
        data_section(fit),
        model_section(fit),
        search_section(fit),
        stats_section(fit),
        bounds_section(fit),
        loop_section(fit),
        explanations_section(fit, rows),
    ]
    heading = f"satdt report: {title}" if title else "satdt report"
    proof = "proven optimal" if result.proven_optimal else "not proven optimal"
    toc = "".join(f'<li><a href="#{anchor}">{esc(name)}</a></li>' for anchor, name in SECTIONS)
    return "".join(
        [
            '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            # an empty icon of its own: a browser asks for none, the page stays offline
            '<link rel="icon" href="data:,">',
            f"<title>{esc(heading)}</title><style>{_CSS}{_mark_css()}</style></head><body>",
            f"<header><h1>{esc(heading)}</h1>",
            f'<p class="summary">{esc(method or "search")}: {esc(result.objective)} '
            f"{esc(number(result.objective_value))} ({proof}) in {result.runtime:.3g} s</p>",
            f"<nav><h2>Contents</h2><ol>{toc}</ol></nav></header><main>",
            *sections,
            "</main><footer><p>Made by satdt. One self-contained page: it needs no network "
            "and no other file.</p></footer>",
            f"<script>{_SCRIPT}</script></body></html>\n",
        ]
    )


def save_report(path: str | Path, model: Any, result: SearchResult, **options: Any) -> Path:
    """Write :func:`report_html` of a fit to ``path`` (an ``.html`` file).

    Parameters
    ----------
    path : str or Path
        The file to write.
    model : Tree, Diagram or fitted estimator
        As for :func:`report_html`.
    result : SearchResult
        As for :func:`report_html`.
    **options
        The keyword arguments of :func:`report_html` (``method``, ``X``, ``rows``,
        ``row_names``, ``title``).

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    SatdtError
        If ``path`` is not an ``.html`` file or cannot be written.
    """
    target = check_report_target(path)
    page = report_html(model, result, **options)
    try:
        target.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise SatdtError(f"cannot write the report to {path}: {exc.strerror or exc}") from None
    return target
