"""Figures of panels, each a picture or a message with a title and a footnote (the loop's
SAT calls, the Pareto front's trees)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

from ._mpl import save_figure
from .draw import draw_picture
from .layout import BASE_FONT, CHAR, Picture

_PANEL_MAX = (6.0, 4.2)  # inches: a larger picture is scaled down (its font with it)
_PANEL_TITLE = 0.62  # inches above a panel
_PANEL_FOOT = 0.5  # inches below a panel


class Panel:
    """One cell of a figure of panels: a picture or a message, a title and a footnote."""

    def __init__(
        self,
        title: str,
        *,
        picture: Picture | None = None,
        message: str = "",
        foot: str = "",
        colour: str = "0.15",
    ) -> None:
        self.title, self.picture, self.message, self.foot, self.colour = (
            title,
            picture,
            message,
            foot,
            colour,
        )


def panel_figure(
    panels: list[Panel], title: str, *, columns: int, top: float = 0.0, pyplot: bool = False
) -> tuple[Any, float, float]:
    """A figure holding ``panels`` in a grid below ``top`` inches of free space; returns the
    figure and its size in inches."""
    sizes = [p.picture.size if p.picture is not None else (2.6, 1.4) for p in panels]
    cell_w = min(max(w for w, _ in sizes), _PANEL_MAX[0]) + 0.3
    cell_w = max(cell_w, 3.2)
    columns = max(1, min(columns, len(panels)))
    columns = math.ceil(len(panels) / math.ceil(len(panels) / columns))  # balanced rows
    # each row of panels as tall as its tallest picture
    row_h = [
        min(max(h for _, h in sizes[start : start + columns]), _PANEL_MAX[1]) + 0.2
        for start in range(0, len(panels), columns)
    ]
    head = 0.55 if title else 0.1
    width = columns * cell_w
    height = head + top + sum(h + _PANEL_TITLE + _PANEL_FOOT for h in row_h)
    if pyplot:
        import matplotlib.pyplot as plt

        figure = plt.figure(figsize=(width, height))
    else:
        from matplotlib.figure import Figure

        figure = Figure(figsize=(width, height))
    if title:
        figure.suptitle(title, fontsize=BASE_FONT + 2, y=1 - 0.12 / height, va="top")
    foot_chars = int((cell_w - 0.2) / (CHAR * (BASE_FONT - 1)))
    for number, panel in enumerate(panels):
        row, column = divmod(number, columns)
        left = column * cell_w
        cell_h = row_h[row]
        cell_top = height - head - top - sum(h + _PANEL_TITLE + _PANEL_FOOT for h in row_h[:row])
        bottom = cell_top - _PANEL_TITLE - cell_h
        ax = figure.add_axes((left / width, bottom / height, cell_w / width, cell_h / height))
        figure.text(
            (left + cell_w / 2) / width,
            (cell_top - 0.08) / height,
            panel.title,
            ha="center",
            va="top",
            fontsize=BASE_FONT,
            color=panel.colour,
            fontweight="bold",
        )
        if panel.foot:
            figure.text(
                (left + cell_w / 2) / width,
                (bottom - 0.06) / height,
                "\n".join(textwrap.wrap(panel.foot, foot_chars)),
                ha="center",
                va="top",
                fontsize=BASE_FONT - 1,
                color="0.25",
            )
        if panel.picture is not None:
            draw_picture(ax, panel.picture)
        else:
            ax.set_axis_off()
            ax.text(
                0.5,
                max(0.5, 1 - 0.8 / cell_h),  # level with the top of the trees beside it
                panel.message,
                ha="center",
                va="center",
                fontsize=BASE_FONT + 1,
                color=panel.colour,
                transform=ax.transAxes,
                gid="satdt-message",
            )
    return figure, width, height


def finish(figure: Any, path: str | Path | None) -> Any:
    """Save the figure to ``path`` when given; return it."""
    if path is not None:
        save_figure(figure, path)
    return figure
