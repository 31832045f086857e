"""An explanation drawn: the model with the row's path and the explanation's tests marked.

:func:`plot_explanation` draws a tree or a diagram as :func:`~satdt.plot.plot_tree` does and
frames the row's path: the tests on the explanation's columns in red (for an AXp the tests the
prediction needs, for a CXp the tests to change), the path's other tests in blue (for an AXp the
redundant ones, Izza et al.'s measure), the row's leaf in blue; for a CXp also the other-class
path that the change follows, in purple. :func:`save_explanation` writes it to a file (``satdt
explain --draw``).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from ..core.errors import SatdtError
from ..models.tree import Tree
from ._mpl import check_plot_target, save_figure
from .draw import MARK_STYLE, draw_picture
from .layout import BASE_FONT, CHAR, fitted_model, model_picture

# legend texts per role, for an AXp and for a CXp
_AXP_LEGEND = {
    "explanation": "tests the prediction needs (the AXp)",
    "path": "tests of the path it does not need",
    "leaf": "the prediction",
}
_CXP_LEGEND = {
    "explanation": "tests to change (the CXp)",
    "path": "tests of the path kept",
    "leaf": "the prediction",
    "contrast": "the path the change follows",
    "contrast-leaf": "the other class",
}


def _gid(model: Any, node: int) -> str:
    """The picture's gid of a model's node (a diagram's terminal ``k`` given as ``-1 - k``)."""
    if isinstance(model, Tree):
        return f"{'leaf' if model.feature[node] < 0 else 'node'}-{node}"
    return f"terminal-{-1 - node}" if node < 0 else f"node-{node}"


def _children(model: Any, node: int) -> tuple[int, ...]:
    """The node's children, yes branch first (none for a tree's leaf)."""
    if isinstance(model, Tree):
        if model.feature[node] < 0:
            return ()
        return int(model.left[node]), int(model.right[node])
    return int(model.low[node]), int(model.high[node])


def _check_path(model: Any, nodes: tuple[int, ...], what: str) -> None:
    """Raise unless ``nodes`` is a path of the model from its root to a leaf."""
    root = 0 if isinstance(model, Tree) else int(model.root)
    size = len(model.feature)
    valid = bool(nodes) and nodes[0] == root
    for a, b in itertools.pairwise(nodes):
        valid = valid and 0 <= a < size and b in _children(model, a)
    last = nodes[-1] if nodes else 0
    leaf = model.feature[last] < 0 if isinstance(model, Tree) and 0 <= last < size else last < 0
    if not (valid and leaf):
        raise SatdtError(
            f"this explanation's {what} {list(nodes)} is not a path of the model drawn: pass "
            "the model the explanation was computed for"
        )


def explanation_marks(
    model: Any, explanation: Any, show: str = "smallest_axp", contrast: int = 0
) -> tuple[dict[str, str], dict[tuple[str, str, bool], str]]:
    """The marks of an explanation on the model's picture.

    Returns
    -------
    tuple of dict
        Box gid -> role (:meth:`satdt.explanations.explanation.Explanation.marks`) and (source gid, target
        gid, yes branch) -> role for the arcs of the row's path (``"path"``) and of the CXp's
        path (``"contrast"``).
    """
    model = fitted_model(model)
    roles = explanation.marks(show, contrast)
    paths = [(explanation.nodes, "path", "path")]
    if show == "cxp":
        paths.append((explanation.cxps[contrast].nodes, "contrast", "CXp's path"))
    arcs: dict[tuple[str, str, bool], str] = {}
    for nodes, role, what in reversed(paths):  # the row's own arcs drawn over shared ones
        _check_path(model, nodes, what)
        for a, b in itertools.pairwise(nodes):
            for child, yes in zip(_children(model, a), (True, False), strict=True):
                if child == b:
                    arcs[(_gid(model, a), _gid(model, b), yes)] = role
    return {_gid(model, node): role for node, role in roles.items()}, arcs


def _legend(ax: Any, roles: set[str], cxp: bool) -> None:
    from matplotlib.lines import Line2D

    texts = _CXP_LEGEND if cxp else _AXP_LEGEND
    handles = [
        Line2D([], [], color=MARK_STYLE[role][0], linewidth=MARK_STYLE[role][1], label=text)
        for role, text in texts.items()
        if role in roles
    ]
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=min(3, len(handles)),
        frameon=False,
        fontsize=BASE_FONT * 0.9,
    )


def plot_explanation(
    model: Any,
    explanation: Any,
    ax: Any = None,
    *,
    show: str = "smallest_axp",
    contrast: int = 0,
    feature_names: list[str] | None = None,
    class_names: list[Any] | None = None,
    counts: bool = True,
    legend: bool = True,
) -> Any:
    """Draw a model with one row's explanation marked on it.

    Parameters
    ----------
    model : Tree, Diagram or estimator
        The :class:`~satdt.Tree`, :class:`~satdt.Diagram` or fitted estimator explained.
    explanation : Explanation
        One of :func:`satdt.explain`'s explanations of that model.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw into; default: a new pyplot figure sized to the model.
    show : {"smallest_axp", "axp", "path_axp", "cxp"}, default="smallest_axp"
        Which explanation to mark (:meth:`~satdt.explanations.explanation.Explanation.marks`).
    contrast : int, default=0
        With ``show="cxp"``: which of the row's CXps.
    feature_names : list of str, optional
        Names replacing the model's, as for :func:`~satdt.plot.plot_tree`.
    class_names : list, optional
        Names replacing the classes', as for :func:`~satdt.plot.plot_tree`.
    counts : bool, default=True
        Show the training counts (when the model has them).
    legend : bool, default=True
        Say what each colour means, below the drawing.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes; each marked box's patch has the gid ``satdt-mark-<role>-<box gid>``.

    Raises
    ------
    SatdtError
        If matplotlib is missing or the explanation is not one of this model's.
    ParameterError
        If ``show`` or ``contrast`` names no explanation of the row.
    """
    check_plot_target(what="plot_explanation")
    marks, arcs = explanation_marks(model, explanation, show, contrast)
    picture = model_picture(model, feature_names, class_names, None, counts)
    if ax is None:
        import matplotlib.pyplot as plt

        width, height = picture.size
        _, ax = plt.subplots(figsize=(width + 0.3, height + 0.3 + (0.6 if legend else 0.0)))
    draw_picture(ax, picture, grow=True, marks=marks, marked_arcs=arcs)
    if legend:
        _legend(ax, set(marks.values()), show == "cxp")
    return ax


def save_explanation(
    model: Any,
    explanation: Any,
    path: str | Path,
    *,
    title: str | None = None,
    dpi: float = 110,
    **options: Any,
) -> None:
    """Draw an explanation as :func:`plot_explanation` does, in a figure of its own size, into
    a file (``satdt explain --draw FILE`` calls this).

    Parameters
    ----------
    model : Tree, Diagram or estimator
        The model explained.
    explanation : Explanation
        One of :func:`satdt.explain`'s explanations of that model.
    path : str or Path
        The file; the format follows the extension (``.png``, ``.svg``, ``.pdf``, ...).
    title : str, optional
        Default: the row, its prediction and the explanation shown.
    dpi : float, default=110
        Dots per inch of a raster format.
    **options : dict
        ``show``, ``contrast``, ``feature_names``, ``class_names``, ``counts``, as for
        :func:`plot_explanation`.

    Raises
    ------
    SatdtError
        If matplotlib is missing, the format is unknown, an option is unknown or the
        explanation is not one of this model's.
    """
    check_plot_target(path, what="save_explanation")
    from matplotlib.figure import Figure

    show = options.get("show", "smallest_axp")
    contrast = options.get("contrast", 0)
    marks, arcs = explanation_marks(model, explanation, show, contrast)  # fails before drawing
    known = {"show", "contrast", "feature_names", "class_names", "counts"}
    if set(options) - known:
        raise SatdtError(
            f"save_explanation got unknown options: {', '.join(sorted(set(options) - known))}"
        )
    picture = model_picture(
        model,
        options.get("feature_names"),
        options.get("class_names"),
        None,
        options.get("counts", True),
    )
    if title is None:
        title = _title(explanation, show, contrast)
    width, height = picture.size
    top, bottom = 0.5 + 0.18 * title.count("\n"), 0.7
    title_width = max(len(line) for line in title.split("\n")) * CHAR * (BASE_FONT + 1) + 0.4
    figure = Figure(figsize=(max(width + 0.3, 5.5, title_width), height + top + bottom))
    total = height + top + bottom
    ax = figure.add_axes((0.0, bottom / total, 1.0, height / total))
    figure.suptitle(title, fontsize=BASE_FONT + 1, y=1 - 0.12 / total, va="top")
    draw_picture(ax, picture, marks=marks, marked_arcs=arcs)
    _legend(ax, set(marks.values()), show == "cxp")
    save_figure(figure, path, dpi)


def _title(explanation: Any, show: str, contrast: int) -> str:
    head = f"row {explanation.row}: predicted {explanation.prediction}"
    if show == "cxp":
        return f"{head}\nCXp: {explanation.cxps[contrast]}"
    conditions = " and ".join(map(str, getattr(explanation, show))) or "(always)"
    label = {"axp": "AXp", "smallest_axp": "smallest AXp", "path_axp": "path's AXp"}[show]
    return f"{head}\n{label}: {conditions}"
