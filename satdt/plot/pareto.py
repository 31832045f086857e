"""A depth/size Pareto front drawn as a curve above the tree of each point."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.errors import SatdtError
from ..models.tree import Tree
from ._mpl import check_plot_target
from ._panels import Panel, finish, panel_figure
from .layout import BASE_FONT, model_picture


def plot_pareto(
    front: Sequence[tuple[int, int, Tree, bool]],
    path: str | Path | None = None,
    *,
    columns: int = 3,
    max_depth: int | None = None,
    title: str | None = None,
) -> Any:
    """Draw a depth/size Pareto front (:func:`satdt.pareto_front`): the fewest nodes at each
    depth as a curve (filled dots proven, hollow not), and the tree of each point.

    ``path``, ``max_depth`` and ``title`` as in :func:`plot_loop`. Returns the Figure.
    """
    check_plot_target(path, what="plot_pareto")
    if not len(front):
        raise SatdtError("the Pareto front is empty: nothing to draw")
    panels = [
        Panel(
            f"depth <= {depth}: {n_nodes} nodes" + ("" if proven else " (not proven)"),
            picture=model_picture(tree, None, None, max_depth, True),
        )
        for depth, n_nodes, tree, proven in front
    ]
    chart = 2.2  # inches of the curve, above the trees, with room for its axis labels
    if title is None:
        title = "depth / size trade-off: the fewest nodes at each depth"
    figure, width, height = panel_figure(
        panels, title, columns=columns, top=chart + 0.8, pyplot=path is None
    )
    from matplotlib.ticker import MaxNLocator

    ax = figure.add_axes(
        (
            0.8 / width,
            (height - chart - 0.75) / height,
            min(5.0, width - 1.2) / width,
            chart / height,
        )
    )
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    depths = [p[0] for p in front]
    nodes = [p[1] for p in front]
    ax.plot(depths, nodes, color="C0", linewidth=1.5)
    for depth, n_nodes, _, proven in front:
        ax.plot(
            depth,
            n_nodes,
            "o",
            color="C0",
            markerfacecolor="C0" if proven else "white",
            markersize=7,
            gid="satdt-pareto-point",
        )
        ax.annotate(
            f"{n_nodes}",
            (depth, n_nodes),
            textcoords="offset points",
            xytext=(6, 4),
            fontsize=BASE_FONT,
        )
    ax.set_xticks(depths)
    ax.set_xlabel("maximum depth")
    ax.set_ylabel("fewest nodes")
    ax.grid(True, alpha=0.3)
    return finish(figure, path)
