"""The explanations of a few rows (:func:`satdt.explanations.explainer.explain`): each row's
path, its smallest abductive explanation and its contrastive ones, stated on the user's
columns, and the nodes a button marks on the model drawn."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.errors import ParameterError
from ..explanations.explainer import explain
from ..explanations.explanation import Explanation
from ..models.diagram import Diagram
from ..models.tree import LEAF
from ._fit import Fit
from ._html import Html, capped, esc, more, not_applicable, pairs, section, table

MAX_CXPS = 5  # contrastive explanations listed per row

#: what each role of a marked node means (Explanation.marks), for the legend
ROLES = {
    "explanation": "a test the explanation holds",
    "path": "another test on the row's path",
    "leaf": "the row's leaf",
    "contrast": "the path to another class",
    "contrast-leaf": "where that path ends",
}


def chosen_rows(fit: Fit, rows: int | Sequence[int]) -> list[int]:
    """The rows to explain: those given, or ``rows`` rows covering as many predicted classes
    as they can (the first row of each class in turn, then the next rows in order).

    Raises
    ------
    ParameterError
        If ``rows`` is neither a count >= 0 nor a sequence of rows of ``X``.
    """
    X = fit.X
    n = 0 if X is None else len(X)
    if isinstance(rows, int | np.integer) and not isinstance(rows, bool):
        if rows < 0:
            raise ParameterError(
                f"rows must be a number of rows >= 0 or a list of row indices, got {rows}; "
                "pass e.g. rows=3"
            )
        if X is None or not n:
            return []
        predicted = fit.model.predict_index(X)
        _, firsts = np.unique(predicted, return_index=True)  # each class's first row
        picked = sorted(int(r) for r in firsts[: int(rows)])
        others = (r for r in range(n) if r not in picked)
        return picked + list(itertools.islice(others, max(0, int(rows) - len(picked))))
    try:
        picked = [int(r) for r in rows]
    except (TypeError, ValueError):
        raise ParameterError(
            f"rows must be a number of rows >= 0 or a list of row indices, got {rows!r}"
        ) from None
    if picked and X is None:
        raise ParameterError(f"rows {picked} name rows of X, and no X was given: pass X too")
    bad = [r for r in picked if not 0 <= r < n]
    if bad:
        raise ParameterError(
            f"rows {bad} are not rows of X (it has {n} rows): pass indices from 0 to {n - 1}"
        )
    return picked


def _gid(model: Any, node: int) -> str:
    """The layout's gid of a node of an explanation (a diagram's terminal k as -1 - k)."""
    if isinstance(model, Diagram):
        return f"node-{node}" if node >= 0 else f"terminal-{-1 - node}"
    return f"leaf-{node}" if model.feature[node] == LEAF else f"node-{node}"


def _marks(model: Any, explanation: Explanation, show: str) -> str:
    """``gid:role`` pairs, separated by spaces: what a button marks on the model drawn."""
    return " ".join(f"{_gid(model, node)}:{role}" for node, role in explanation.marks(show).items())


def _joined(conditions: Sequence[Any]) -> str:
    return " and ".join(c.text for c in conditions) or "(nothing: every row gets this class)"


def _explanation(fit: Fit, explanation: Explanation) -> str:
    """One row: its prediction, its path, its AXps and CXps, buttons marking them."""
    model = fit.model
    facts = [
        ("path (the tests the row passes)", _joined(explanation.path)),
        ("smallest AXp (enough to force the prediction)", _joined(explanation.smallest_axp)),
    ]
    if explanation.axp != explanation.smallest_axp:
        facts.append(("another AXp (by deletion)", _joined(explanation.axp)))
    used = {c.column for c in explanation.path}
    needless = len(used) - len(explanation.path_axp)
    facts.append(("path columns the prediction does not need", f"{needless} of {len(used)}"))
    buttons = [
        f'<button type="button" data-marks="{esc(_marks(model, explanation, "smallest_axp"))}">'
        "show the path and the smallest AXp on the model</button>"
    ]
    shown, left_out = capped(explanation.cxps, MAX_CXPS)
    if shown:
        cxps = table(
            ("change the columns", "to", "and the model predicts"),
            (
                (", ".join(c.columns), " and ".join(k.text for k in c.conditions), c.prediction)
                for c in shown
            ),
        )
        buttons.append(
            f'<button type="button" data-marks="{esc(_marks(model, explanation, "cxp"))}">'
            "show the smallest CXp on the model</button>"
        )
    else:
        cxps = not_applicable("No CXp: no change of any column gives another class.")
    return (
        f'<div class="explanation" data-row="{explanation.row}">'
        f"<h3>{esc(fit.row_name(explanation.row))}: predicted {esc(explanation.prediction)}</h3>"
        f"{pairs(facts)}<h4>Contrastive explanations (CXps)</h4>{cxps}{more(left_out, 'CXps')}"
        f'<p class="mark-buttons">{" ".join(buttons)}</p></div>'
    )


def explanations_section(fit: Fit, rows: int | Sequence[int]) -> Html:
    """The explanations of the rows asked for (see :func:`chosen_rows`)."""
    intro = (
        "Why the model predicts what it does for a few rows. An abductive explanation (AXp) "
        "is a minimal set of the row's values that forces the prediction whatever the other "
        "columns say; a contrastive explanation (CXp) a minimal set of columns whose change "
        "can give another class. Every AXp shares a column with every CXp."
    )
    picked = chosen_rows(fit, rows)
    if fit.X is None:
        body = [
            not_applicable(
                "No rows were given: pass X to report() (the command line passes the "
                "training table) to explain some."
            )
        ]
    elif not picked:
        body = [not_applicable("No row was asked for (rows=0).")]
    else:
        explanations = explain(fit.model, fit.X, picked)
        legend = "".join(
            f'<span class="key mark-{role}">{esc(text)}</span>' for role, text in ROLES.items()
        )
        body = [f'<p class="legend">{legend}</p>']
        body += [_explanation(fit, explanation) for explanation in explanations]
    return section("explanations", "Explanations", intro, body)
