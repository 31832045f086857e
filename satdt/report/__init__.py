"""A fit as one HTML page a student can open by double-click: :func:`report_html` writes it,
:func:`save_report` saves it (``model.report(path)`` on the estimators; ``satdt infer|fit|diagram
DATA --report FILE.html`` on the command line).

The page is self-contained: inline CSS, inline SVG and a little inline JavaScript, no network
resource. It reads a fitted model, its :class:`~satdt.task.result.SearchResult` and the rows
given; it runs no search. Its sections (:data:`SECTIONS`): the data, the model drawn (from
:mod:`satdt.plot.layout`, without matplotlib), the search, its statistics, the bounds over time,
the counterexample-guided loop step by step and the explanations of a few rows.
:func:`visible_text` reads back the text a reader sees.
"""

from .page import SECTIONS, check_report_target, report_html, save_report
from .text import visible_text

__all__ = ["SECTIONS", "check_report_target", "report_html", "save_report", "visible_text"]
