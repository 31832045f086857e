"""Inline SVG without matplotlib: a laid-out model (:mod:`satdt.plot.layout`) and a chart of
step lines over time.

The model is drawn from the same layout, box looks and arc paths as matplotlib's drawing
(:func:`satdt.plot.layout.box_look`, :func:`satdt.plot.layout.arc_shape`), in CSS pixels (96
per inch), its text at :data:`satdt.plot.layout.BASE_FONT` points. Each box is a group
``<g class="box" data-gid="node-3">`` (the layout's gid), so a page can find it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..plot.layout import BASE_FONT, LINE, Picture, arc_shape, box_look
from ._html import Html, esc, number

PIXELS = 96.0  # CSS pixels per inch
_MARGIN = 0.12  # inches around a picture


def picture_svg(picture: Picture, *, scale: float = 1.0, label: str = "") -> Html:
    """The picture as an ``<svg>`` element, ``scale`` times its own size.

    Parameters
    ----------
    picture : Picture
        A laid-out model (:func:`satdt.plot.layout.model_picture`).
    scale : float, default=1.0
        The size on the page relative to the picture's own (text at 9 points).
    label : str, default=""
        What the picture shows, for screen readers (``aria-label``).

    Returns
    -------
    Html
        The SVG element, with its natural ``width`` and ``height`` in pixels.
    """
    width, height = picture.size
    left = min(item.x - item.width / 2 for item in picture.items) - _MARGIN
    top = picture.y(0) + picture.row_height / 2 + _MARGIN

    def x_of(x: float) -> str:
        return f"{(x - left) * PIXELS:.1f}"

    def y_of(y: float) -> str:
        return f"{(top - y) * PIXELS:.1f}"

    view_w, view_h = (width + 2 * _MARGIN) * PIXELS, (height + 2 * _MARGIN) * PIXELS
    parts = [
        f'<svg class="picture" viewBox="0 0 {view_w:.0f} {view_h:.0f}" '
        f'width="{view_w * scale:.0f}" height="{view_h * scale:.0f}" role="img" '
        f'aria-label="{esc(label)}" font-size="{BASE_FONT * PIXELS / 72:.0f}">'
    ]
    for chain, yes in picture.arcs:
        arc = arc_shape(picture, chain, yes)
        path = [f"M{x_of(arc.start[0])} {y_of(arc.start[1])}"]
        for step in arc.steps:
            points = " ".join(f"{x_of(x)} {y_of(y)}" for x, y in step)
            path.append(("C" if len(step) == 3 else "L") + points)
        word, anchor = ("yes", "end") if yes else ("no", "start")
        parts.append(
            f'<path class="{word}" d="{"".join(path)}"/>'
            f'<text class="arc" x="{x_of(arc.label[0])}" y="{y_of(arc.label[1])}" '
            f'text-anchor="{anchor}" dominant-baseline="central">{word}</text>'
        )
    line = LINE * BASE_FONT
    for item in picture.items:
        if item.kind == "dummy":
            continue
        look = box_look(item)
        y = picture.y(item.row)
        dashed = ' stroke-dasharray="3 2"' if look.dashed else ""
        first = y + (len(item.lines) - 1) * line / 2  # the first line's centre
        lines = "".join(
            f'<tspan x="{x_of(item.x)}" y="{y_of(first - k * line)}">{esc(text)}</tspan>'
            for k, text in enumerate(item.lines)
        )
        weight = ' font-weight="bold"' if item.kind in ("leaf", "terminal") else ""
        parts.append(
            f'<g class="box {item.kind}" data-gid="{esc(item.gid)}">'
            f'<rect x="{x_of(item.x - item.width / 2)}" y="{y_of(y + item.height / 2)}" '
            f'width="{item.width * PIXELS:.1f}" height="{item.height * PIXELS:.1f}" '
            f'rx="{look.rounding * PIXELS:.1f}" fill="{look.fill}" stroke="{look.edge}" '
            f'stroke-width="{look.width * PIXELS / 72:.1f}"{dashed}/>'
            f'<text text-anchor="middle" dominant-baseline="central"{weight}>{lines}</text></g>'
        )
    parts.append("</svg>")
    return Html("".join(parts))


@dataclass
class Series:
    """A step line of a chart: ``(time, value)`` points, each value held until the next point
    (the last until the chart's end), each with a dot whose tooltip is its note (default: the
    value and the time); ``kind`` is its CSS class (colour, dashes)."""

    name: str
    kind: str
    points: list[tuple[float, float]]
    notes: list[str] = field(default_factory=list)


@dataclass
class Marker:
    """A single point of a chart (a depth settled), with its tooltip."""

    time: float
    value: float
    kind: str
    note: str


_CHART = (640.0, 260.0)  # pixels
_PAD = (56.0, 16.0, 16.0, 40.0)  # left, right, top, bottom


def _ticks(low: float, high: float, integers: bool) -> list[float]:
    """About five round values between ``low`` and ``high``."""
    if high <= low:
        return [low]
    step = 10 ** math.floor(math.log10((high - low) / 5))
    for factor in (1, 2, 5, 10):
        if (high - low) / (step * factor) <= 6:
            step *= factor
            break
    if integers:
        step = max(1.0, round(step))
    first = math.ceil(low / step) * step
    return [first + k * step for k in range(int((high - first) / step + 1e-9) + 1)]


def chart_svg(
    series: Sequence[Series], markers: Sequence[Marker], end: float, y_name: str, integers: bool
) -> Html:
    """A chart of step lines over time, with markers: seconds from 0 to ``end``, or from just
    before the first point when every point falls in the last quarter of that time.

    Parameters
    ----------
    series : sequence of Series
        The step lines (a series of no points is left out).
    markers : sequence of Marker
        Points drawn as crosses, each with a tooltip.
    end : float
        The last second shown (the search's runtime).
    y_name : str
        What the values are (the vertical axis' title).
    integers : bool
        Whether the values are integers (a depth, a node count): ticks at integers.

    Returns
    -------
    Html
        The SVG element, with a legend of the series below it.
    """
    values = [v for s in series for _, v in s.points] + [m.value for m in markers]
    values = [v for v in values if math.isfinite(v)]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if high - low < 1e-12:
        low, high = low - 1, high + 1
    span = high - low
    low, high = low - 0.06 * span, high + 0.06 * span
    times = [t for s in series for t, _ in s.points] + [m.time for m in markers]
    end = max(end, *times, 1e-3)
    # from 0, unless everything happened in the last quarter (after reading the data, say)
    start = min(times, default=0.0)
    start = 0.0 if not 0.75 * end < start < end else start - 0.05 * (end - start)
    width, height = _CHART
    left, right, top, bottom = _PAD

    def x_of(t: float) -> float:
        return left + (width - left - right) * (min(max(t, start), end) - start) / (end - start)

    def y_of(v: float) -> float:
        return top + (height - top - bottom) * (high - v) / (high - low)

    parts = [
        f'<svg class="chart" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
        f'height="{height:.0f}" role="img" aria-label="{esc(y_name)} over time">'
    ]
    for v in _ticks(low, high, integers):
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y_of(v):.1f}" '
            f'y2="{y_of(v):.1f}"/><text class="tick" x="{left - 6}" y="{y_of(v):.1f}" '
            f'text-anchor="end" dominant-baseline="central">{number(v)}</text>'
        )
    for t in _ticks(start, end, False):
        parts.append(
            f'<text class="tick" x="{x_of(t):.1f}" y="{height - bottom + 16}" '
            f'text-anchor="middle">{number(round(t, 6))}</text>'
        )
    parts.append(
        f'<line class="axis" x1="{left}" x2="{width - right}" y1="{height - bottom}" '
        f'y2="{height - bottom}"/><text class="tick" x="{(left + width - right) / 2:.0f}" '
        f'y="{height - 4}" text-anchor="middle">time (s)</text>'
        f'<text class="tick" transform="translate(14 {(top + height - bottom) / 2:.0f}) '
        f'rotate(-90)" text-anchor="middle">{esc(y_name)}</text>'
    )
    for line in series:
        if not line.points:
            continue
        steps = [f"M{x_of(line.points[0][0]):.1f} {y_of(line.points[0][1]):.1f}"]
        for (_, before), (t, v) in zip(line.points, line.points[1:], strict=False):
            steps.append(f"L{x_of(t):.1f} {y_of(before):.1f}L{x_of(t):.1f} {y_of(v):.1f}")
        steps.append(f"L{x_of(end):.1f} {y_of(line.points[-1][1]):.1f}")
        parts.append(f'<path class="series {esc(line.kind)}" d="{"".join(steps)}"/>')
        for k, (t, v) in enumerate(line.points):
            note = line.notes[k] if k < len(line.notes) else f"{number(v)} at {t:.3g} s"
            parts.append(
                f'<circle class="dot {esc(line.kind)}" cx="{x_of(t):.1f}" cy="{y_of(v):.1f}" '
                f'r="3.5"><title>{esc(note)}</title></circle>'
            )
    for m in markers:
        x, y = x_of(m.time), y_of(m.value)
        parts.append(
            f'<path class="marker {esc(m.kind)}" d="M{x - 4:.1f} {y - 4:.1f}L{x + 4:.1f} '
            f'{y + 4:.1f}M{x - 4:.1f} {y + 4:.1f}L{x + 4:.1f} {y - 4:.1f}">'
            f"<title>{esc(m.note)}</title></path>"
        )
    parts.append("</svg>")
    legend = "".join(
        f'<span class="key {esc(s.kind)}">{esc(s.name)}</span>' for s in series if s.points
    )
    if markers:
        legend += "".join(
            f'<span class="key marker-key {esc(kind)}">{esc(name)}</span>'
            for kind, name in _marker_names(markers)
        )
    return Html("".join(parts) + f'<p class="legend">{legend}</p>')


def _marker_names(markers: Sequence[Marker]) -> list[tuple[str, str]]:
    """The kinds of markers present, once each, with their legend's words."""
    words = {"refuted": "a depth refuted", "found": "a depth found feasible"}
    kinds = dict.fromkeys(m.kind for m in markers)
    return [(kind, words.get(kind, kind)) for kind in kinds]
