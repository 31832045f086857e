"""Does a tree decide like a forest everywhere? Proofs that use no search of satdt.

A tree is *faithful* to a forest when both decide the same class on every point of the
input space (Vidal & Schiffer, "Born-Again Tree Ensembles", ICML 2020, Definition 1). Two
proofs, each complete:

:func:`grid_mismatches`
    On the grid of the forest's and the tree's thresholds together, both models are
    constant on every cell, so comparing them cell by cell proves faithfulness. Each
    model's cells are filled from its leaves' boxes (never cell by cell), so a grid of
    millions of cells takes a fraction of a second; for small forests.
:func:`box_counterexamples`
    For boxes of the tree's leaves and their classes, a point of each box where the
    forest decides another class, or ``None``: first a bound that takes each tree's best
    leaf in the box, for all boxes at once as array operations, which settles most boxes;
    then, for the rest, a branch and bound over the trees of the forest (one leaf per
    tree, intersected with the box), bounded by the best each remaining tree can still
    add. :func:`leaf_counterexamples` asks it of every leaf: the proof for forests whose
    grid is too large to enumerate.

Both return the points where the models differ, so a failed proof says where.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..core.errors import TimeUp
from .forest import Forest, level_points
from .tree import LEAF, Tree

#: Slack of the bounds of :func:`box_counterexamples` for sums of probabilities (float
#: rounding): a branch is cut only when its bound misses by more; a complete combination
#: of leaves is always decided by the forest's own arithmetic.
_SLACK = 1e-9
#: The most elements of one comparison of boxes against a tree's leaves (boxes x leaves x
#: features) in :func:`box_counterexamples`: the boxes are taken in chunks below it, so
#: the memory stays bounded for any number of leaves.
_CHUNK = 2**22
#: Branches of one box's search between two looks at the deadline.
_NODES_PER_LOOK = 256


# ---------------------------------------------------------------------- on the grid
def union_thresholds(forest: Forest, tree: Tree) -> list[np.ndarray]:
    """Per feature, the sorted thresholds of the forest and of the tree together."""
    inner = tree.feature != LEAF
    return [
        np.union1d(t, tree.threshold[inner & (tree.feature == c)])
        for c, t in enumerate(forest.thresholds())
    ]


def tree_cell_classes(tree: Tree, thresholds: list[np.ndarray]) -> np.ndarray:
    """The class index a tree decides on every cell of a grid holding all its thresholds
    (one axis per feature), filled leaf box by leaf box."""
    shape = tuple(len(t) + 1 for t in thresholds)
    out = np.full(shape, -1, dtype=np.int64)
    lo = [0] * len(shape)
    hi = [n - 1 for n in shape]

    def fill(node: int) -> None:
        f = int(tree.feature[node])
        if f == LEAF:
            out[tuple(slice(a, b + 1) for a, b in zip(lo, hi, strict=True))] = tree.value[node]
            return
        level = int(np.searchsorted(thresholds[f], tree.threshold[node]))
        old = lo[f], hi[f]
        hi[f] = min(old[1], level)
        if lo[f] <= hi[f]:
            fill(int(tree.left[node]))
        lo[f], hi[f] = max(old[0], level + 1), old[1]
        if lo[f] <= hi[f]:
            fill(int(tree.right[node]))
        lo[f], hi[f] = old

    fill(0)
    return out


def grid_mismatches(
    tree: Tree,
    forest: Forest,
    thresholds: list[np.ndarray] | None = None,
    forest_cells: np.ndarray | None = None,
) -> np.ndarray:
    """Points where the tree and the forest decide differently, one per cell of the grid of
    both models' thresholds (none: the tree is faithful).

    Parameters
    ----------
    tree : Tree
        Over the forest's features; its class indices are the forest's.
    forest : Forest
        The forest.
    thresholds : list of ndarray, optional
        The grid: sorted thresholds per feature holding every threshold of both models
        (default :func:`union_thresholds`).
    forest_cells : ndarray, optional
        The forest's :meth:`Forest.cell_classes` on that grid, when known already.

    Returns
    -------
    ndarray of shape (n_mismatches, n_features)
        One point inside each cell where the models differ.
    """
    if thresholds is None:
        thresholds = union_thresholds(forest, tree)
    if forest_cells is None:
        forest_cells = forest.cell_classes(thresholds)
    wrong = np.argwhere(tree_cell_classes(tree, thresholds) != forest_cells)
    points = level_points(thresholds)
    return np.array(
        [[points[c][i] for c, i in enumerate(cell)] for cell in wrong], dtype=np.float64
    ).reshape(len(wrong), forest.n_features)


# ---------------------------------------------------------------------- per leaf box
def tree_leaf_boxes(tree: Tree, n_features: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(leaves, low, high)``: the tree's leaves (node indices) and, row by row, their
    boxes: a leaf's points are those with ``low < x <= high`` on every feature (bounds may
    be infinite)."""
    boxes = []
    stack = [(0, np.full(n_features, -np.inf), np.full(n_features, np.inf))]
    while stack:
        node, low, high = stack.pop()
        f = int(tree.feature[node])
        if f == LEAF:
            boxes.append((node, low, high))
            continue
        t = float(tree.threshold[node])
        left_high, right_low = high.copy(), low.copy()
        left_high[f] = min(high[f], t)
        right_low[f] = max(low[f], t)
        if low[f] < left_high[f]:
            stack.append((int(tree.left[node]), low, left_high))
        if right_low[f] < high[f]:
            stack.append((int(tree.right[node]), right_low, high))
    nodes, low, high = zip(*boxes, strict=True)  # the root's box is never empty
    return np.array(nodes, dtype=np.int64), np.array(low), np.array(high)


class _Leaves:
    """The leaves of each tree of a forest as boxes ``low < x <= high`` and their values."""

    def __init__(self, forest: Forest) -> None:
        self.forest = forest
        self.per_tree: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for t in range(forest.n_trees):
            nodes = np.array([i for i in forest.tree_nodes(t) if forest.feature[i] == LEAF])
            low = np.full((len(nodes), forest.n_features), -np.inf)
            high = np.full((len(nodes), forest.n_features), np.inf)
            self._bound(int(forest.roots[t]), low, high, nodes)
            self.per_tree.append((nodes, low, high))

    def _bound(self, root: int, low: np.ndarray, high: np.ndarray, nodes: np.ndarray) -> None:
        index = {int(n): k for k, n in enumerate(nodes)}
        f = self.forest
        stack = [(root, np.full(f.n_features, -np.inf), np.full(f.n_features, np.inf))]
        while stack:
            node, lo, hi = stack.pop()
            c = int(f.feature[node])
            if c == LEAF:
                low[index[node]], high[index[node]] = lo, hi
                continue
            t = float(f.threshold[node])
            left_hi, right_lo = hi.copy(), lo.copy()
            left_hi[c] = min(hi[c], t)
            right_lo[c] = max(lo[c], t)
            stack.append((int(f.left[node]), lo, left_hi))
            stack.append((int(f.right[node]), right_lo, hi))


def _scores(forest: Forest, values: np.ndarray, cls: int, other: int) -> np.ndarray:
    """What each leaf adds to "``other`` beats ``cls``": the margin of the other class
    (votes or probabilities), or of the decision function's sign for a boosted forest."""
    if forest.vote == "sum":
        sign = 1.0 if other == 1 else -1.0
        return sign * values[:, 0]
    return values[:, other] - values[:, cls]


def _others(forest: Forest, cls: int) -> list[int]:
    """The classes that can take a box from ``cls``, in the order they are tried."""
    if forest.vote == "sum":
        return [1 - cls]
    return [c for c in range(forest.n_classes) if c != cls]


def _reach(forest: Forest, cls: int, other: int) -> float:
    """The least margin "``other`` beats ``cls``" a branch must be able to reach not to be
    cut: the margin must be > 0, or >= 0 when a tie goes to ``other`` (the lower class
    index; the positive class of a boosted forest). Hard votes count whole votes, exactly:
    > 0 is >= 1, so ties that go to ``cls`` are cut. Sums of probabilities or of boosted
    values may round: they get :data:`_SLACK` in the branch's favour."""
    ties_to_other = (forest.vote == "sum" and other == 1) or (forest.vote != "sum" and other < cls)
    if forest.vote == "hard":
        return 0.0 if ties_to_other else 1.0
    return -_SLACK if ties_to_other else 0.0


def box_counterexample(
    forest: Forest, low: np.ndarray, high: np.ndarray, cls: int, leaves: _Leaves | None = None
) -> np.ndarray | None:
    """A point with ``low < x <= high`` where the forest decides another class than
    ``cls``, or ``None`` when there is none (a proof); :func:`box_counterexamples` for one
    box.

    Parameters
    ----------
    forest : Forest
        The forest.
    low, high : ndarray of shape (n_features,)
        The box, open below and closed above (infinite bounds allowed).
    cls : int
        The class the box should get.
    leaves : optional
        The forest's leaf boxes, prepared once for many queries.

    Returns
    -------
    ndarray of shape (n_features,) or None
        A counterexample point, or None.
    """
    low = np.asarray(low, dtype=np.float64)[None, :]
    high = np.asarray(high, dtype=np.float64)[None, :]
    return box_counterexamples(forest, low, high, np.array([cls]), leaves)[0]


def box_counterexamples(
    forest: Forest,
    low: np.ndarray,
    high: np.ndarray,
    classes: np.ndarray,
    leaves: _Leaves | None = None,
    deadline: float | None = None,
) -> list[np.ndarray | None]:
    """For each box ``low[i] < x <= high[i]``, a point where the forest decides another
    class than ``classes[i]``, or ``None`` when there is none (a proof).

    For a box, its class ``c`` and each other class ``o``, the sum over the trees of the
    best margin of ``o`` over ``c`` among the tree's leaves meeting the box bounds what
    ``o`` can reach in the box. For most boxes of a faithful tree this bound alone proves
    that ``o`` cannot win; it is computed for many boxes at once, as array operations.
    Only where it does not prove it, a depth-first search picks one leaf per tree among
    those meeting the box (narrowing the box to their intersection), best margin first,
    and cuts a branch when even the best leaves of the remaining trees cannot make ``o``
    win. Every complete combination reached is decided by the forest itself on a point of
    its box, so rounding never decides.

    Parameters
    ----------
    forest : Forest
        The forest.
    low, high : ndarray of shape (n_boxes, n_features)
        The boxes, open below and closed above (infinite bounds allowed).
    classes : ndarray of shape (n_boxes,)
        The class index each box should get.
    leaves : optional
        The forest's leaf boxes, prepared once for many queries.
    deadline : float, optional
        A ``time.perf_counter()`` value; past it the proof stops with :class:`TimeUp`
        (a search that asks this on its own clock; a re-check never stops).

    Returns
    -------
    list of (ndarray of shape (n_features,) or None)
        Per box, a counterexample point, or None.

    Raises
    ------
    TimeUp
        The deadline passed first.
    """
    leaves = leaves or _Leaves(forest)
    low = np.asarray(low, dtype=np.float64).reshape(-1, forest.n_features)
    high = np.asarray(high, dtype=np.float64).reshape(-1, forest.n_features)
    classes = np.asarray(classes, dtype=np.int64).reshape(-1)
    found: list[np.ndarray | None] = [None] * len(classes)
    widest = max((len(nodes) for nodes, _, _ in leaves.per_tree), default=1)
    step = max(1, _CHUNK // max(widest * forest.n_features, 1))
    for start in range(0, len(classes), step):
        rows = np.arange(start, min(start + step, len(classes)))
        meets = [
            np.all(
                np.maximum(lo[None], low[rows, None]) < np.minimum(hi[None], high[rows, None]),
                axis=2,
            )
            for _, lo, hi in leaves.per_tree
        ]
        for cls in np.unique(classes[rows]).tolist():
            mine = np.flatnonzero(classes[rows] == cls)
            for other in _others(forest, cls):
                bound = _best_margins(forest, leaves, [m[mine] for m in meets], cls, other)
                for k in mine[bound >= _reach(forest, cls, other)].tolist():
                    i = int(rows[k])
                    if found[i] is None:
                        found[i] = _search_class(
                            forest,
                            leaves,
                            [m[k] for m in meets],
                            (low[i], high[i]),
                            (cls, other),
                            deadline,
                        )
    return found


def _best_margins(
    forest: Forest, leaves: _Leaves, meets: list[np.ndarray], cls: int, other: int
) -> np.ndarray:
    """Per box (a row of each tree's ``meets``: its leaves meeting the box), the most
    ``other`` can beat ``cls`` by in the box: each tree's best leaf meeting it, summed
    (``-inf`` for an empty box)."""
    bound = np.zeros(len(meets[0]))
    for (nodes, _, _), meet in zip(leaves.per_tree, meets, strict=True):
        score = _scores(forest, forest.value[nodes], cls, other)
        bound += np.where(meet, score[None, :], -np.inf).max(axis=1)
    return bound


def _search_class(
    forest: Forest,
    leaves: _Leaves,
    meets: list[np.ndarray],
    box: tuple[np.ndarray, np.ndarray],
    classes: tuple[int, int],
    deadline: float | None,
) -> np.ndarray | None:
    """A point of the box ``(low, high)`` where ``other`` beats ``cls`` (enough to decide
    against ``cls``) for ``classes = (cls, other)``, given each tree's leaves meeting the
    box (``meets``); :class:`TimeUp` past the deadline (looked at every
    :data:`_NODES_PER_LOOK` branches)."""
    low, high = box
    cls, other = classes
    options = []  # per tree: the leaves meeting the box, best margin first
    for (nodes, lo, hi), meet in zip(leaves.per_tree, meets, strict=True):
        score = _scores(forest, forest.value[nodes[meet]], cls, other)
        order = np.argsort(-score, kind="stable")
        options.append((lo[meet][order], hi[meet][order], score[order]))
    if any(len(o[2]) == 0 for o in options):  # the box is empty
        return None
    reach = _reach(forest, cls, other)
    best_rest = [*np.cumsum([o[2][0] for o in options][::-1])[::-1].tolist(), 0.0]
    n_trees = len(options)
    branches = 0

    def dfs(t: int, lo: np.ndarray, hi: np.ndarray, margin: float) -> np.ndarray | None:
        nonlocal branches
        branches += 1
        looks = deadline is not None and branches % _NODES_PER_LOOK == 0
        if looks and time.perf_counter() >= deadline:
            raise TimeUp("proving a leaf box faithful")
        if margin + best_rest[t] < reach:
            return None
        if t == n_trees:
            point = _inside(lo, hi)
            decided = int(forest.predict_index(point[None, :])[0])
            return point if decided != cls else None
        t_lo, t_hi, score = options[t]
        for k in range(len(score)):
            new_lo = np.maximum(lo, t_lo[k])
            new_hi = np.minimum(hi, t_hi[k])
            if np.all(new_lo < new_hi):
                found = dfs(t + 1, new_lo, new_hi, margin + float(score[k]))
                if found is not None:
                    return found
        return None

    return dfs(0, np.asarray(low, float), np.asarray(high, float), 0.0)


def _inside(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """A point with ``low < x <= high``: the upper bound where finite, else above ``low``."""
    finite = np.where(np.isfinite(low), low, 0.0)
    above = np.where(np.isfinite(low), finite + np.maximum(1.0, np.abs(finite)), 0.0)
    return np.where(np.isfinite(high), high, above)


def leaf_counterexamples(tree: Tree, forest: Forest) -> list[tuple[int, np.ndarray]]:
    """``(leaf, point)`` for every leaf of the tree whose box holds a point where the forest
    decides otherwise (empty: the tree is faithful), by :func:`box_counterexamples`."""
    nodes, low, high = tree_leaf_boxes(tree, forest.n_features)
    points = box_counterexamples(forest, low, high, tree.value[nodes].astype(np.int64))
    return [(int(n), p) for n, p in zip(nodes, points, strict=True) if p is not None]


def is_faithful(tree: Tree, forest: Forest, max_cells: int = 2**22) -> bool:
    """Whether the tree decides like the forest on every point: on the grid of both models'
    thresholds when it has at most ``max_cells`` cells, else leaf box by leaf box."""
    thresholds = union_thresholds(forest, tree)
    if math.prod(len(t) + 1 for t in thresholds) <= max_cells:
        return len(grid_mismatches(tree, forest, thresholds)) == 0
    return not leaf_counterexamples(tree, forest)
