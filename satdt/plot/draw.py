"""Drawing a laid-out model with matplotlib: :func:`plot_tree` into an Axes, :func:`save_tree`
into a file, :func:`model_svg` as the inline SVG a notebook shows."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.errors import SatdtError
from ._mpl import check_plot_target, mpl_svg_text, save_figure
from .layout import (
    BASE_FONT,
    CHAR,
    NODE_GID,
    Picture,
    arc_shape,
    box_look,
    fitted_model,
    model_picture,
)

#: the depth at which a notebook's picture of a model (:func:`model_svg`) is cut by default
REPR_MAX_DEPTH = 6


#: how a marked box or arc is drawn: role -> (edge colour, line width in points)
MARK_STYLE = {
    "explanation": ("#d62728", 3.0),
    "path": ("#1f77b4", 2.2),
    "leaf": ("#1f77b4", 3.0),
    "contrast": ("#9467bd", 2.2),
    "contrast-leaf": ("#9467bd", 3.0),
}
MARK_GID = "satdt-mark-"  # the gid prefix of a marked box: satdt-mark-<role>-<item gid>


def draw_picture(
    ax: Any,
    picture: Picture,
    *,
    grow: bool = False,
    marks: dict[str, str] | None = None,
    marked_arcs: dict[tuple[str, str, bool], str] | None = None,
) -> None:
    """Draw a laid-out picture into ``ax``, the font scaled to the Axes' size (a small
    picture keeps its size, top-centred, unless ``grow``). ``marks`` (item gid -> role of
    :data:`MARK_STYLE`) frames boxes in the role's colour; ``marked_arcs`` ((source gid,
    target gid, yes) -> role) draws those arcs so."""
    from matplotlib.patches import FancyBboxPatch, PathPatch
    from matplotlib.path import Path as MplPath

    width, height = picture.size
    left = min(item.x - item.width / 2 for item in picture.items)
    top = picture.y(0) + picture.row_height / 2
    margin = 0.08
    figure = ax.get_figure()
    box = ax.get_position()
    fig_w, fig_h = figure.get_size_inches()
    box_w, box_h = box.width * fig_w, box.height * fig_h
    scale = min(box_w / (width + 2 * margin), box_h / (height + 2 * margin))
    scale = scale if grow else min(scale, 1.0)
    centre = left + width / 2
    ax.set_xlim(centre - box_w / scale / 2, centre + box_w / scale / 2)
    ax.set_ylim(top + margin - box_h / scale, top + margin)
    ax.set_aspect("equal")
    ax.set_axis_off()
    font = BASE_FONT * scale
    marks = marks or {}
    marked_arcs = marked_arcs or {}
    for chain, yes in picture.arcs:
        arc = arc_shape(picture, chain, yes)
        arc_role = marked_arcs.get((picture.items[chain[0]].gid, picture.items[chain[-1]].gid, yes))
        vertices, codes = [arc.start], [MplPath.MOVETO]
        for step in arc.steps:
            vertices += step
            codes += [MplPath.CURVE4] * 3 if len(step) == 3 else [MplPath.LINETO]
        ax.add_patch(
            PathPatch(
                MplPath(vertices, codes),
                fill=False,
                edgecolor=MARK_STYLE[arc_role][0] if arc_role else "0.3" if yes else "0.45",
                linestyle="-" if yes else (0, (4, 2)),
                linewidth=(MARK_STYLE[arc_role][1] if arc_role else 0.9) * scale,
            )
        )
        ax.text(
            *arc.label,
            "yes" if yes else "no",
            ha="right" if yes else "left",
            va="center",
            fontsize=font * 0.8,
            color="0.3",
        )

    for item in picture.items:
        if item.kind == "dummy":
            continue
        y = picture.y(item.row)
        look = box_look(item)
        role = marks.get(item.gid)
        edge, width = MARK_STYLE[role] if role is not None else (look.edge, look.width)
        ax.add_patch(
            FancyBboxPatch(
                (item.x - item.width / 2, y - item.height / 2),
                item.width,
                item.height,
                boxstyle=f"round,pad=0,rounding_size={look.rounding}",
                facecolor=look.fill,
                edgecolor=edge,
                linewidth=width * scale,
                linestyle=(0, (2, 1.5)) if look.dashed else "-",
                gid=f"{MARK_GID}{role}-{item.gid}" if role is not None else None,
            )
        )
        ax.text(
            item.x,
            y,
            "\n".join(item.lines),
            ha="center",
            va="center",
            fontsize=font,
            fontweight="bold" if item.kind in ("leaf", "terminal") else "normal",
            linespacing=1.15,
            gid=NODE_GID + item.gid,
        )


def plot_tree(
    model: Any,
    ax: Any = None,
    *,
    feature_names: Sequence[str] | None = None,
    class_names: Sequence[Any] | None = None,
    max_depth: int | None = None,
    counts: bool = True,
) -> Any:
    """Draw a tree or a decision diagram with matplotlib (no Graphviz), like scikit-learn's.

    Each internal node shows its test (``x <= t``: the rows for which it holds take the solid
    ``yes`` arc, the others the dashed ``no`` arc), the training counts reaching it and their
    majority class; each leaf (a diagram's class terminal) its class and counts, a red frame
    when it holds rows of another class. Fill colours follow the majority class, deeper for
    purer nodes. A diagram is drawn layer by layer, shared nodes once, its class terminals in
    the bottom row; arcs that skip layers pass between the boxes, never through them.

    Parameters
    ----------
    model
        A :class:`~satdt.Tree`, a :class:`~satdt.Diagram`, or a fitted
        estimator (its ``tree_`` or ``diagram_``).
    ax
        The matplotlib Axes to draw into; default: a new pyplot figure sized to the model.
    feature_names, class_names
        Names replacing the model's (one per design column; one per class index).
    max_depth
        Draw the tests down to this depth (a diagram: layer), as scikit-learn does; a node
        deeper than that becomes a dashed ``...`` box giving its counts and the number of
        nodes below it.
    counts
        Show the training counts (when the model has them).

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn into; each node's text has the gid ``satdt-node-<kind>-<index>``.

    Raises
    ------
    SatdtError
        If matplotlib is missing, or the model or a name list does not fit.
    """
    check_plot_target(what="plot_tree")
    picture = model_picture(model, feature_names, class_names, max_depth, counts)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=_figure_size(picture))
    draw_picture(ax, picture, grow=True)
    return ax


def _figure_size(picture: Picture) -> tuple[float, float]:
    width, height = picture.size
    return width + 0.3, height + 0.3


def save_tree(
    model: Any,
    path: str | Path,
    *,
    title: str | None = None,
    dpi: float = 110,
    **options: Any,
) -> None:
    """Draw a model as :func:`plot_tree` does, in a figure of its own size, into ``path``.

    The format follows the extension (``.png``, ``.svg``, ``.pdf``, ...). ``options`` are
    those of :func:`plot_tree`. ``satdt infer|fit|diagram --draw FILE`` calls this.
    """
    check_plot_target(path, what="save_tree")
    from matplotlib.figure import Figure

    picture = model_picture(
        model,
        options.pop("feature_names", None),
        options.pop("class_names", None),
        options.pop("max_depth", None),
        options.pop("counts", True),
    )
    if options:
        raise SatdtError(f"save_tree got unknown options: {', '.join(sorted(options))}")
    width, height = _figure_size(picture)
    extra = 0.45 if title else 0.0
    title_width = len(title or "") * CHAR * (BASE_FONT + 1) + 0.4
    figure = Figure(figsize=(max(width, 2.5, title_width), height + extra))
    ax = figure.add_axes((0.0, 0.0, 1.0, height / (height + extra)))
    if title:
        figure.suptitle(title, fontsize=BASE_FONT + 1, y=1 - 0.12 / (height + extra), va="top")
    draw_picture(ax, picture)
    save_figure(figure, path, dpi)


def model_svg(model: Any, *, max_depth: int | None = None) -> str | None:
    """The model drawn as inline SVG text (a notebook's picture of it), or None without
    matplotlib. Models deeper than :data:`REPR_MAX_DEPTH` are cut there unless
    ``max_depth`` says otherwise."""
    try:
        check_plot_target()
    except SatdtError:
        return None
    from matplotlib.figure import Figure

    fitted = fitted_model(model)
    if max_depth is None and fitted.depth > REPR_MAX_DEPTH:
        max_depth = REPR_MAX_DEPTH
    picture = model_picture(fitted, None, None, max_depth, True)
    figure = Figure(figsize=_figure_size(picture))
    draw_picture(figure.add_axes((0.0, 0.0, 1.0, 1.0)), picture)
    buffer = io.StringIO()
    with mpl_svg_text():
        figure.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # no XML prolog: the SVG goes inside a page
