"""Models as pictures, laid out without matplotlib: a tree by Reingold and Tilford's tidy
drawing, a diagram by Sugiyama's layered drawing.

A picture is laid out in inches first (boxes sized from their text at :data:`BASE_FONT`
points), then drawn in those units (:mod:`satdt.plot.draw` with matplotlib, :mod:`satdt.report.svg`
as SVG text, both from the boxes' looks of :func:`box_look` and the arcs' paths of
:func:`arc_shape`), so the text fits its box at any scale: an Axes of another size scales the
font with it. Every node's text artist has a gid
``satdt-node-<kind>-<id>`` (an SVG group of that id), so a drawing can be checked node by node.
"""

from __future__ import annotations

import functools
import itertools
import math
import textwrap
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..core.errors import SatdtError
from ..models.diagram import Diagram, _reach
from ..models.tree import LEAF, Tree

BASE_FONT = 9.0  # points: the font of a picture drawn at its own size
CHAR = 0.6 / 72  # average glyph width of DejaVu Sans, in inches per point of font size
LINE = 1.3 / 72  # line height, in inches per point of font size
_PAD = 0.09  # inches of margin inside a box
_GAP_X = 0.22  # inches between neighbouring boxes of a row
_GAP_Y = 0.55  # inches between the bottom of a row and the top of the next
_DUMMY = 0.12  # inches a long arc reserves where it crosses a row
_WRAP = 34  # characters per line of a node's text
NODE_GID = "satdt-node-"  # the gid prefix of every box's text
#: the fill colour of each class index, in turn (matplotlib's ``tab10``)
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip


class Item:
    """A box (node, leaf, terminal, truncation marker) or a long arc's passage through a row."""

    __slots__ = ("counts", "gid", "height", "kind", "klass", "lines", "row", "width", "x")

    def __init__(
        self,
        kind: str,
        row: int,
        lines: list[str],
        *,
        gid: str = "",
        klass: int = -1,
        counts: np.ndarray | None = None,
    ) -> None:
        self.kind = kind  # "node", "leaf", "terminal", "more" or "dummy"
        self.row = row
        self.lines = lines
        self.gid = gid
        self.klass = klass
        self.counts = counts
        if kind == "dummy":
            self.width, self.height = _DUMMY, 0.0
        else:
            chars = max(len(line) for line in lines)
            self.width = chars * CHAR * BASE_FONT + 2 * _PAD
            self.height = len(lines) * LINE * BASE_FONT + 2 * _PAD
        self.x = 0.0


class Picture:
    """Items in rows and arcs between them (chains of items, the first a box), in inches.

    Rows and their height are read once every item is in (by the layout and the drawing).
    """

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.arcs: list[tuple[list[int], bool]] = []  # (item chain, the "yes" branch)

    def add(self, item: Item) -> int:
        self.items.append(item)
        return len(self.items) - 1

    @functools.cached_property
    def n_rows(self) -> int:
        return 1 + max(item.row for item in self.items)

    @functools.cached_property
    def row_height(self) -> float:
        return max(item.height for item in self.items)

    def y(self, row: int) -> float:
        """The centre line of a row (rows go down from 0)."""
        return -row * (self.row_height + _GAP_Y)

    @property
    def size(self) -> tuple[float, float]:
        left = min(item.x - item.width / 2 for item in self.items)
        right = max(item.x + item.width / 2 for item in self.items)
        return right - left, self.n_rows * self.row_height + (self.n_rows - 1) * _GAP_Y


def _class_names(model: Any, class_names: Sequence[Any] | None) -> list[str]:
    names = list(model.classes) if class_names is None else list(class_names)
    if len(names) < len(model.classes):
        raise SatdtError(
            f"class_names must name the {len(model.classes)} classes; got {len(names)} names"
        )
    return [str(name) for name in names]


def _count_line(counts: np.ndarray | None) -> list[str]:
    """``n=150 [50, 50, 50]`` (at most four classes), else ``n=150``; nothing when unknown."""
    if counts is None or counts.sum() <= 0:
        return []
    total = f"n={counts.sum():g}"
    if len(counts) <= 4:
        return [f"{total} [{', '.join(f'{c:g}' for c in counts)}]"]
    return [total]


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, _WRAP, break_long_words=False) or [text]


def _majority(counts: np.ndarray | None, default: int) -> int:
    if counts is None or counts.sum() <= 0:
        return default
    return int(np.argmax(counts))


def _tree_picture(
    tree: Tree, names: list[str], max_depth: int | None, show_counts: bool
) -> Picture:
    """Rows are depths; sibling subtrees are set as close as their contours allow (Reingold and
    Tilford's tidy drawing), each parent centred over its children."""
    picture = Picture()
    known = show_counts and bool(np.any(tree.counts))

    def counts_of(node: int) -> np.ndarray | None:
        return tree.counts[node] if known else None

    def box(node: int, depth: int) -> int:
        counts = counts_of(node)
        if tree.feature[node] == LEAF:
            klass = int(tree.value[node])
            lines = [f"class {names[klass]}", *_count_line(counts)]
            if counts is not None:
                wrong = counts.sum() - counts[klass]
                if wrong > 0:
                    lines.append(f"{wrong:g} wrong")
            return picture.add(
                Item("leaf", depth, lines, gid=f"leaf-{node}", klass=klass, counts=counts)
            )
        klass = _majority(counts, -1)
        if max_depth is not None and depth > max_depth:
            below = _subtree_size(tree, node) - 1
            lines = ["...", f"({below} nodes below)", *_count_line(counts)]
            return picture.add(
                Item("more", depth, lines, gid=f"more-{node}", klass=klass, counts=counts)
            )
        lines = _wrap(tree.condition(node, True)) + _count_line(counts)
        if klass >= 0:
            lines.append(f"class {names[klass]}")
        return picture.add(
            Item("node", depth, lines, gid=f"node-{node}", klass=klass, counts=counts)
        )

    def place(node: int, depth: int) -> tuple[list[int], list[float], list[float]]:
        """Lay out the subtree of ``node``, its root at x = 0: its items (the root's first)
        and its left and right contours (the extreme box edges at each depth below it)."""
        index = box(node, depth)
        item = picture.items[index]
        if item.kind != "node":
            return [index], [-item.width / 2], [item.width / 2]
        (low, low_left, low_right) = place(int(tree.left[node]), depth + 1)
        (high, high_left, high_right) = place(int(tree.right[node]), depth + 1)
        # Reingold and Tilford: push the subtrees apart until their contours clear by a gap
        apart = max(r - l for r, l in zip(low_right, high_left, strict=False)) + _GAP_X
        for i in low:
            picture.items[i].x -= apart / 2
        for i in high:
            picture.items[i].x += apart / 2
        left_contour, right_contour = [-item.width / 2], [item.width / 2]
        for d in range(max(len(low_left), len(high_left))):
            left_contour.append(
                min(low_left[d] - apart / 2 if d < len(low_left) else math.inf,
                    high_left[d] + apart / 2 if d < len(high_left) else math.inf)
            )  # fmt: skip
            right_contour.append(
                max(low_right[d] - apart / 2 if d < len(low_right) else -math.inf,
                    high_right[d] + apart / 2 if d < len(high_right) else -math.inf)
            )  # fmt: skip
        picture.arcs.append(([index, low[0]], True))
        picture.arcs.append(([index, high[0]], False))
        return [index, *low, *high], left_contour, right_contour

    if tree.n_nodes:
        place(0, 0)
    return picture


def _subtree_size(tree: Tree, node: int) -> int:
    size, stack = 0, [node]
    while stack:
        i = stack.pop()
        size += 1
        if tree.feature[i] != LEAF:
            stack += [int(tree.left[i]), int(tree.right[i])]
    return size


def _isotonic(target: list[float], widths: list[float]) -> list[float]:
    """Positions closest to ``target`` (least squares) keeping the order and the boxes apart.

    With ``offset[k]`` the least distance from item 0 to item k, ``x[k] - offset[k]`` must not
    decrease: pool adjacent violators on ``target - offset``, then add the offsets back.
    """
    offset = [0.0]
    for k in range(1, len(widths)):
        offset.append(offset[-1] + (widths[k - 1] + widths[k]) / 2 + _GAP_X)
    blocks: list[list[float]] = []  # [mean, count]
    for t, o in zip(target, offset, strict=True):
        blocks.append([t - o, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean, count = blocks.pop()
            blocks[-1][0] = (blocks[-1][0] * blocks[-1][1] + mean * count) / (blocks[-1][1] + count)
            blocks[-1][1] += count
    z = [mean for mean, count in blocks for _ in range(int(count))]
    return [zk + o for zk, o in zip(z, offset, strict=True)]


def _diagram_picture(
    diagram: Diagram, names: list[str], max_depth: int | None, show_counts: bool
) -> Picture:
    """Sugiyama's layered drawing: layers are rows, class terminals the last row; an arc that
    skips rows gets a reserved passage in each row it crosses, so it never runs through a
    box; rows are ordered by barycentres and placed by least squares (:func:`_isotonic`)."""
    picture = Picture()
    node_counts = diagram.counts if show_counts else None
    terminal_counts = diagram.terminal_counts if show_counts else None
    if not len(diagram.layer):
        k = -1 - diagram.root
        counts = None if terminal_counts is None else terminal_counts[k]
        picture.add(
            Item(
                "terminal",
                0,
                [f"class {names[k]}", *_count_line(counts)],
                gid=f"terminal-{k}",
                klass=k,
                counts=counts,
            )
        )
        return picture
    shown = diagram.reachable()
    if max_depth is not None:
        hidden = shown & (diagram.layer > max_depth)
        shown &= diagram.layer <= max_depth
    else:
        hidden = np.zeros_like(shown)
    last_layer = int(diagram.layer[shown].max())
    item_of: dict[int, int] = {}  # diagram successor code (node, or -1-k) -> item
    for i in np.flatnonzero(shown):
        counts = None if node_counts is None else node_counts[i]
        klass = _majority(counts, -1)
        lines = [diagram.node_name(i), *_wrap(diagram.condition(i)), *_count_line(counts)]
        if klass >= 0:
            lines.append(f"class {names[klass]}")
        item_of[int(i)] = picture.add(
            Item("node", int(diagram.layer[i]), lines, gid=f"node-{i}", klass=klass, counts=counts)
        )
    more_row = last_layer + 1
    successors = {int(s) for i in np.flatnonzero(shown) for s in (diagram.low[i], diagram.high[i])}
    truncated = sorted(s for s in successors if s >= 0 and hidden[s])
    for s in truncated:
        below = int(_reach(diagram.low, diagram.high, s).sum()) - 1
        counts = None if node_counts is None else node_counts[s]
        lines = ["...", f"{diagram.node_name(s)} (+{below} nodes)", *_count_line(counts)]
        item_of[s] = picture.add(
            Item(
                "more", more_row, lines, gid=f"more-{s}", klass=_majority(counts, -1), counts=counts
            )
        )
    terminal_row = more_row + (1 if truncated else 0)
    for code in sorted((s for s in successors if s < 0), reverse=True):
        k = -1 - code
        counts = None if terminal_counts is None else terminal_counts[k]
        item_of[code] = picture.add(
            Item(
                "terminal",
                terminal_row,
                [f"class {names[k]}", *_count_line(counts)],
                gid=f"terminal-{k}",
                klass=k,
                counts=counts,
            )
        )
    for i in np.flatnonzero(shown):
        for successor, yes in ((int(diagram.low[i]), True), (int(diagram.high[i]), False)):
            source, target = item_of[int(i)], item_of[successor]
            chain = [source]
            for row in range(picture.items[source].row + 1, picture.items[target].row):
                chain.append(picture.add(Item("dummy", row, [])))
            picture.arcs.append(([*chain, target], yes))
    _place_layers(picture)
    return picture


def _place_layers(picture: Picture) -> None:
    """Order each row by the barycentres of its neighbours, then place it by least squares."""
    items = picture.items
    up: dict[int, list[int]] = {i: [] for i in range(len(items))}
    down: dict[int, list[int]] = {i: [] for i in range(len(items))}
    for chain, _ in picture.arcs:
        for a, b in itertools.pairwise(chain):
            down[a].append(b)
            up[b].append(a)
    rows = [[i for i in range(len(items)) if items[i].row == r] for r in range(picture.n_rows)]
    position = {i: float(k) for row in rows for k, i in enumerate(row)}

    def barycentre(i: int, neighbours: dict[int, list[int]]) -> float:
        near = neighbours[i]
        return sum(position[j] for j in near) / len(near) if near else position[i]

    for sweep in range(8):  # down then up, the usual layer-by-layer crossing reduction
        order = range(1, len(rows)) if sweep % 2 == 0 else range(len(rows) - 2, -1, -1)
        neighbours = up if sweep % 2 == 0 else down
        for r in order:
            rows[r].sort(key=lambda i: barycentre(i, neighbours))
            position.update({i: float(k) for k, i in enumerate(rows[r])})
    for row in rows:  # start packed and centred on 0
        xs = _isotonic([0.0] * len(row), [items[i].width for i in row])
        for i, x in zip(row, xs, strict=True):
            items[i].x = x
    for sweep in range(12):
        order = range(1, len(rows)) if sweep % 2 == 0 else range(len(rows) - 2, -1, -1)
        neighbours = up if sweep % 2 == 0 else down
        for r in order:
            row = rows[r]
            target = [
                sum(items[j].x for j in neighbours[i]) / len(neighbours[i])
                if neighbours[i]
                else items[i].x
                for i in row
            ]
            for i, x in zip(row, _isotonic(target, [items[i].width for i in row]), strict=True):
                items[i].x = x


def model_picture(
    model: Any,
    feature_names: Sequence[str] | None,
    class_names: Sequence[Any] | None,
    max_depth: int | None,
    show_counts: bool,
) -> Picture:
    """Lay out a tree, a diagram or a fitted estimator's model, names replaced when given,
    cut below ``max_depth``, with the training counts when ``show_counts``."""
    if max_depth is not None and (isinstance(max_depth, bool) or max_depth < 0):
        raise SatdtError(f"max_depth must be None or an integer >= 0, got {max_depth!r}")
    model = fitted_model(model)
    if not isinstance(model, Tree | Diagram):
        raise SatdtError(
            f"cannot draw a {type(model).__name__}: pass a Tree, a Diagram or a fitted estimator"
        )
    names = _class_names(model, class_names)
    if feature_names is not None:
        if isinstance(model, Diagram):
            model = model.replace(feature_names=list(feature_names))
        else:
            model = model.copy()
            model.feature_names = list(feature_names)
    if isinstance(model, Diagram):
        return _diagram_picture(model, names, max_depth, show_counts)
    return _tree_picture(model, names, max_depth, show_counts)


def fitted_model(model: Any) -> Any:
    """The model itself, or the fitted tree or diagram of an estimator."""
    attribute = getattr(type(model), "_fitted_attribute", None)
    if attribute is None:
        return model
    fitted = getattr(model, attribute, None)
    if fitted is None:
        raise SatdtError(f"this {type(model).__name__} is not fitted yet: call fit first")
    return fitted


class Look(NamedTuple):
    """How a box is drawn: its fill and edge colours (``#rrggbb``), the edge's width in
    points, whether the edge is dashed (a truncation marker) and the corners' radius in inches."""

    fill: str
    edge: str
    width: float
    dashed: bool
    rounding: float


def _blend(colour: str, share: float) -> str:
    """``colour`` mixed with white: ``share`` of the colour, the rest white."""
    rgb = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{round(255 - share * (255 - c)):02x}" for c in rgb)


def box_look(item: Item) -> Look:
    """The look of a box: filled in its majority class's colour, deeper for purer counts
    (leaves and terminals deeper than tests), white without a class; a leaf holding training
    rows of another class framed in red."""
    purity = 0.0
    if item.counts is not None and item.counts.sum() > 0:
        purity = float(item.counts.max() / item.counts.sum())
    end = item.kind in ("leaf", "terminal")
    share = 0.18 + 0.42 * purity if end else 0.08 + 0.3 * purity
    fill = _blend(PALETTE[item.klass % len(PALETTE)], share) if item.klass >= 0 else "#ffffff"
    wrong = (
        item.kind == "leaf"
        and item.counts is not None
        and item.counts.sum() > item.counts[item.klass]
    )
    edge, width = ("#c0392b", 1.8) if wrong else ("#404040", 0.9)
    rounding = 0.12 if item.kind == "terminal" else 0.04
    return Look(fill, edge, width, item.kind == "more", rounding)


Point = tuple[float, float]


class Arc(NamedTuple):
    """An arc as drawn, in the picture's inches (y up): from ``start``, ``steps`` of three
    points (a cubic Bézier curve: two control points and its end) or one point (a straight
    line); ``label`` is where its word (``yes`` ending there, ``no`` starting there) goes."""

    start: Point
    steps: list[tuple[Point, ...]]
    yes: bool
    label: Point


def arc_shape(picture: Picture, chain: list[int], yes: bool) -> Arc:
    """The path of an arc (a chain of items, the first a box): it leaves the box's bottom edge
    on the left (``yes``) or the right (``no``), curves to the top of each next item, and runs
    straight down through the passage a long arc reserves in each row it crosses."""
    items = [picture.items[i] for i in chain]
    start = items[0]
    side = -1.0 if yes else 1.0
    x_start = start.x + side * min(start.width / 5, 0.25)
    origin = (x_start, picture.y(start.row) - start.height / 2)
    row_half = picture.row_height / 2
    steps: list[tuple[Point, ...]] = []
    x0, y0 = origin
    for item in items[1:]:
        y = picture.y(item.row)
        top_y = y + (row_half if item.kind == "dummy" else item.height / 2)
        middle = (y0 + top_y) / 2
        steps.append(((x0, middle), (item.x, middle), (item.x, top_y)))
        x0, y0 = item.x, top_y
        if item.kind == "dummy":
            y0 = y - row_half
            steps.append(((item.x, y0),))
    return Arc(origin, steps, yes, (x_start + side * 0.04, origin[1] - 0.1))
