"""Small pieces of HTML every section writes: escaped text, numbers for people, tables,
capped lists, and the frame of a section."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any


class Html(str):
    """Text that is already HTML (built here from escaped parts): written as it is."""

    __slots__ = ()


def esc(value: Any) -> Html:
    """``value`` as text in HTML: every ``<``, ``>``, ``&`` and quote escaped."""
    return value if isinstance(value, Html) else Html(escape(str(value), quote=True))


def number(value: Any) -> str:
    """A number for people: integers as they are, others with four significant digits."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        if math.isinf(value):
            return "∞" if value > 0 else "-∞"
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.4g}"
    return str(value)


def seconds(value: float) -> str:
    """Seconds for people: ``0.0312 s``, ``12.3 s``."""
    return f"{value:.3g} s"


def table(head: Sequence[str], rows: Iterable[Sequence[Any]], *, kind: str = "") -> Html:
    """A table: ``head`` the column titles, each row's cells escaped unless already HTML."""
    kind_attribute = f' class="{esc(kind)}"' if kind else ""
    lines = [f"<table{kind_attribute}><thead><tr>"]
    lines += [f"<th>{esc(h)}</th>" for h in head]
    lines.append("</tr></thead><tbody>")
    for row in rows:
        lines.append("<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>")
    lines.append("</tbody></table>")
    return Html("".join(lines))


def pairs(rows: Iterable[tuple[str, Any]]) -> Html:
    """A two-column table of names and values (numbers written for people)."""
    return table(("", ""), ((name, number(value)) for name, value in rows), kind="pairs")


def capped(items: Sequence[Any], limit: int) -> tuple[Sequence[Any], int]:
    """The first ``limit`` items and how many are left out."""
    return items[:limit], max(0, len(items) - limit)


def more(left_out: int, what: str) -> Html:
    """``and 12 more rows`` (nothing when none is left out)."""
    return Html(f'<p class="more">and {left_out} more {esc(what)}</p>') if left_out else Html("")


def paragraph(text: Any, *, kind: str = "") -> Html:
    """A paragraph of text (escaped unless already HTML)."""
    kind_attribute = f' class="{esc(kind)}"' if kind else ""
    return Html(f"<p{kind_attribute}>{esc(text)}</p>")


def not_applicable(text: str) -> Html:
    """The one line a section holds when it does not apply to this fit."""
    return paragraph(text, kind="not-applicable")


def section(anchor: str, title: str, intro: str, body: Iterable[str]) -> Html:
    """A section of the page: its anchor, its title, a sentence saying what the student is
    looking at, then its content."""
    return Html(
        f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>'
        + paragraph(intro, kind="intro")
        + "".join(body)
        + "</section>"
    )
