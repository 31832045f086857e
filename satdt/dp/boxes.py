"""Minimum depth and minimum size of consistent trees by dynamic programming over boxes.

On data whose columns take few distinct values (car: 6 columns of 3-4 values, 15 binary
features; balance-scale: 4 columns of 5 values; the monks problems), every subproblem a
tree can reach is a *box*: one interval of values per column, since a path of tests
``x[c] <= t`` only ever narrows each column's interval. There are
``prod_c n_c (n_c + 1) / 2`` boxes for columns of ``n_c`` values (car: 216,000; balance
scale: 50,625; monks: 19,440), few enough to tabulate every one, so the recursion

    L(box, 0) = 1 if the box is pure (or empty), else unreachable
    L(box, r) = 1 if pure, else min over splits (a, b) of L(a, r - 1) + L(b, r - 1)

(the fewest leaves of a tree of depth <= r classifying the box's rows without error) is
computed layer by layer for all boxes at once, with NumPy: the tables have one axis per
column, and one depth is a few array operations per column (no compiled kernel, so nothing
to load either: the whole process stays small on small files). The minimum depth is the first ``r`` with
``L(root, r)`` finite, the minimum size at depth ``<= K`` is ``2 L(root, K) - 1``, and the
tree is read back from the tables. The hypotheses are those of the SAT searches with every
threshold of every column (:class:`satdt.prepare.binarize.Binarizer` with ``max_thresholds=None``),
so both prove the same optima: a box DP answer is the SAT answer (tests check it).

Why the answer is right: a split that leaves one side empty is never needed (the other
side's subtree alone is a tree with fewer leaves and no more depth), and the value of a
box depends only on its rows, since a threshold outside the box's interval splits nothing.
The layers stop at the first depth that answers the question, or when a layer changes no
box (deeper trees cannot do better; if the root is still unreachable the rows contradict).

This is the "DP that proves the minimum size on small-feature data" of the size objective:
where the grid is small it is faster than SAT by orders of magnitude (docs/how-it-works/minimum-size.md, "How the
minimum-size search works"), and ``method="auto"`` picks it there.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..core.errors import DataError, InfeasibleError, TimeUp
from ..models.tree import Tree
from ..prepare.binarize import threshold_between
from ..task.events import Progress
from ..task.objectives import OBJECTIVES
from ..task.result import ParetoPoint, Recorder, SearchResult, front_ends_after
from ..task.stats import BoxStats

#: ``label`` of a box holding no row.
EMPTY = -2
#: ``label`` of a box holding rows of two classes or more.
MIXED = -1
#: The leaf count of a box no tree of the layer's depth classifies (two add up within int32).
UNREACHABLE = np.int32(2**29)


#: The most boxes ``method="auto"`` tabulates for the consistency objectives: above it a
#: layer takes seconds, and a shallow optimum SAT finds at once would wait (docs/how-it-works/minimum-size.md).
AUTO_BOXES = 2**21


def box_count(column_values: list[np.ndarray]) -> int:
    """How many boxes (one interval of values per column) the box DP tabulates."""
    return math.prod(len(v) * (len(v) + 1) // 2 for v in column_values)


def box_table_mb(column_values: list[np.ndarray]) -> float:
    """Megabytes of the box DP's tables at worst: an int32 layer per depth (at most one per
    threshold, plus depth 0), the labels, and the split sums of the column with the most
    values (``(n - 1) / 3`` splits per interval, two arrays of them)."""
    layers = sum(len(v) - 1 for v in column_values) + 2
    sums = 2 * max([1.0] + [(len(v) - 1) / 3 for v in column_values])
    return box_count(column_values) * 4 * (layers + sums) / 2**20


@dataclass
class _Axis:
    """The intervals of one column with ``n`` values, numbered by width then start (the ``n``
    single values first, so a value's interval index is its rank), and their splits."""

    n: int
    lo: np.ndarray  # first rank of each interval
    hi: np.ndarray  # last rank
    left: np.ndarray  # per split (grouped by the interval split): interval of the low side
    right: np.ndarray  # interval of the high side
    starts: np.ndarray  # first split of each interval of width >= 2

    @classmethod
    def of(cls, n: int) -> _Axis:
        lo = np.concatenate([np.arange(n - w + 1) for w in range(1, n + 1)])
        hi = lo + np.concatenate([np.full(n - w + 1, w - 1) for w in range(1, n + 1)])
        axis = cls(n, lo, hi, np.empty(0, np.intp), np.empty(0, np.intp), np.empty(0, np.intp))
        left, right, starts = [], [], []
        for a, b in zip(lo[n:].tolist(), hi[n:].tolist(), strict=True):
            starts.append(len(left))
            for j in range(a, b):
                left.append(axis.index(a, j))
                right.append(axis.index(j + 1, b))
        axis.left, axis.right = np.array(left, np.intp), np.array(right, np.intp)
        axis.starts = np.array(starts, np.intp)
        return axis

    def index(self, a: int, b: int) -> int:
        """The interval index of ranks ``[a, b]``."""
        shorter = b - a  # intervals of widths 1 .. b - a come first
        return shorter * (self.n + 1) - shorter * (shorter + 1) // 2 + a


def _merge(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The labels of the unions of two arrays of boxes from theirs."""
    merged = np.where(low == high, low, MIXED)
    merged = np.where(low == EMPTY, high, merged)
    return np.where(high == EMPTY, low, merged)


@dataclass
class BoxGrid:
    """The grid of one dataset: the intervals of each column, box labels, the layers so far.

    Tables are arrays with one axis per column, as long as that column's interval count.
    """

    values: list[np.ndarray]
    axes: list[_Axis]
    label: np.ndarray
    layers: list[np.ndarray]

    @classmethod
    def build(
        cls, X: np.ndarray, y: np.ndarray, column_values: list[np.ndarray] | None = None
    ) -> BoxGrid:
        """The grid of ``X`` (rows) over the sorted distinct ``column_values`` of each column
        (default: those of ``X``).

        Raises :class:`DataError` when two rows with the same values have different classes.
        """
        if column_values is None:
            column_values = [np.unique(X[:, c]) for c in range(X.shape[1])]
        axes = [_Axis.of(len(v)) for v in column_values]
        shape = tuple(axis.lo.size for axis in axes)
        ranks = tuple(np.searchsorted(v, X[:, c]) for c, v in enumerate(column_values))
        cells, labels = np.unique(np.stack([np.ravel_multi_index(ranks, shape), y]), axis=1)
        if np.any(cells[1:] == cells[:-1]):
            raise DataError(
                "some rows share all their values with a row of another class, so no "
                "consistent tree exists"
            )
        label = np.full(shape, EMPTY, dtype=np.int32)
        label.flat[cells] = labels
        for axis_number, axis in enumerate(axes):  # widen this axis, the others as filled so far
            along = np.moveaxis(label, axis_number, 0)
            n = axis.n
            for width in range(2, n + 1):
                starts = np.arange(n - width + 1)
                first = axis.index(0, width - 1)
                shorter = axis.index(0, width - 2) + starts
                along[first + starts] = _merge(along[shorter], along[starts + width - 1])
        grid = cls(list(column_values), axes, label, [])
        grid.layers.append(np.where(label == MIXED, UNREACHABLE, 1).astype(np.int32))
        return grid

    @property
    def depth(self) -> int:
        """The deepest layer tabulated."""
        return len(self.layers) - 1

    def leaves(self, depth: int) -> int | None:
        """Fewest leaves of a consistent tree of depth <= ``depth`` (None: none exists)."""
        value = int(self.layers[min(depth, self.depth)].flat[-1])  # the root box is the last
        return None if value >= UNREACHABLE else value

    def extend(self) -> bool:
        """Tabulate the next depth; False when it changed no box (the tables are final).

        A box's leaves at depth r: 1 if it is pure (or empty), else the least sum over its
        splits of both sides' leaves at depth r - 1. Splits with an empty side are included:
        they never beat the best split with rows on both sides (dropping such a split keeps
        the tree and saves a leaf), so the minimum is the same.
        """
        previous = self.layers[-1]
        current = np.full_like(previous, UNREACHABLE)
        for axis_number, axis in enumerate(self.axes):
            if axis.n < 2:
                continue
            along = np.moveaxis(previous, axis_number, 0)
            sums = along[axis.left] + along[axis.right]
            best = np.minimum.reduceat(sums, axis.starts, axis=0)
            target = np.moveaxis(current, axis_number, 0)[axis.n :]
            np.minimum(target, best, out=target)
        np.minimum(current, UNREACHABLE, out=current)
        current[self.label != MIXED] = 1
        if np.array_equal(current, previous):
            return False
        self.layers.append(current)
        return True

    def tree(self, depth: int, n_classes: int) -> Tree:
        """A tree of depth <= ``depth`` with the fewest leaves, read back from the tables."""

        def grow(box: tuple[int, ...], r: int):
            if self.label[box] != MIXED:
                return int(self.label[box])
            target = int(self.layers[r][box])
            below = self.layers[r - 1]
            for c, axis in enumerate(self.axes):
                a, b = int(axis.lo[box[c]]), int(axis.hi[box[c]])
                for j in range(a, b):
                    left = (*box[:c], axis.index(a, j), *box[c + 1 :])
                    right = (*box[:c], axis.index(j + 1, b), *box[c + 1 :])
                    if EMPTY in (self.label[left], self.label[right]):
                        continue
                    if int(below[left]) + int(below[right]) == target:
                        threshold = threshold_between(self.values[c], j)
                        return (c, threshold, grow(left, r - 1), grow(right, r - 1))
            raise RuntimeError("internal error: the box tables hold no split of this value")

        root = tuple(axis.lo.size - 1 for axis in self.axes)
        r = min(depth, self.depth)
        while r > 0 and self.layers[r - 1][root] == self.layers[r][root]:
            r -= 1  # the same leaves at a smaller depth: the shallower tree
        return Tree.from_nested(grow(root, r), classes=np.arange(n_classes))


def solve_consistent(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    objective: str,
    *,
    column_values: list[np.ndarray] | None = None,
    max_depth: int | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
    recorder: Recorder,
) -> SearchResult:
    """The minimum-depth (``objective="depth"``) or minimum-size (``"size"``) consistent tree.

    ``"depth"``: the shallowest tree within ``max_nodes``, and among those one with the fewest
    leaves. ``"size"``: without ``max_depth`` the fewest nodes among the trees of minimum depth
    (DT_size, as the SAT search); with ``max_depth = K`` the fewest among all trees of depth
    <= K. Trees are over the columns of ``X`` with the Binarizer's thresholds.

    Raises
    ------
    InfeasibleError
        No consistent tree within ``max_depth`` and ``max_nodes`` (proven).
    TimeUp
        The deadline passed; ``recorder.lower_bound`` holds what was proven.
    """
    if objective not in ("depth", "size"):
        raise ValueError(f"objective must be 'depth' or 'size', got {objective!r}")
    started = time.perf_counter()
    grid = BoxGrid.build(X, y, column_values)
    stats = BoxStats(boxes=grid.label.size)
    recorder.stats = stats
    leaf_cap = None if max_nodes is None else (max_nodes + 1) // 2

    def fits(depth: int) -> bool:
        leaves = grid.leaves(depth)
        return leaves is not None and (leaf_cap is None or leaves <= leaf_cap)

    depth = 0
    while not fits(depth):
        if max_depth is not None and depth >= max_depth:
            raise _infeasible(max_depth, max_nodes, grid)
        if deadline is not None and time.perf_counter() >= deadline:
            # no tree of depth <= depth: at least depth + 1, so at least depth + 2 leaves
            recorder.lower_bound = OBJECTIVES[objective].at_least(depth + 1)
            raise TimeUp("box DP")
        if not grid.extend():  # no box changed: deeper trees do no better
            raise _infeasible(max_depth, max_nodes, grid)
        depth = grid.depth
        stats.depths = depth + 1
        recorder.event(Progress(f"box DP: depth {depth} tabulated"))
    proven = True
    # every consistent tree has depth >= depth, so at least depth + 1 leaves
    recorder.lower_bound = OBJECTIVES[objective].at_least(depth)
    if objective == "size" and max_depth is not None:
        while grid.depth < max_depth:
            if deadline is not None and time.perf_counter() >= deadline:
                proven = False  # the last layer's tree is the best known
                break
            if not grid.extend():
                break
        stats.depths = grid.depth + 1
        depth = min(max_depth, grid.depth)
    stats.seconds = time.perf_counter() - started
    tree = grid.tree(depth, n_classes)
    value = OBJECTIVES[objective].value_of(tree, 0.0)
    recorder.improve(tree, value)
    return recorder.snapshot(proven_optimal=proven)


def _infeasible(max_depth: int | None, max_nodes: int | None, grid: BoxGrid) -> InfeasibleError:
    """Why no tree fits: the layers stopped at ``max_depth`` or at their final depth."""
    leaves = grid.leaves(grid.depth)
    if leaves is None:  # the depth cap stopped the layers (a grid without clashes has a tree)
        return InfeasibleError(
            f"no consistent tree of depth at most {max_depth} exists: every consistent tree "
            f"has depth at least {grid.depth + 1} (proven); raise max_depth"
        )
    within = "" if max_depth is None else f" and depth at most {max_depth}"
    return InfeasibleError(
        f"no consistent tree of at most {max_nodes} nodes{within} exists (proven: the fewest "
        f"is {2 * leaves - 1} nodes); relax max_nodes or max_depth"
    )


def pareto_front(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    column_values: list[np.ndarray] | None = None,
    max_depth: int | None = None,
    deadline: float | None = None,
    recorder: Recorder,
) -> tuple[list[ParetoPoint], str]:
    """The depth/size trade-off from the box tables: for each depth from the minimum to
    ``max_depth`` (default: the minimum + 2), the fewest nodes of a consistent tree of at most
    that depth, every point proven.

    Stops early by the rule of :func:`satdt.sat.search.pareto_front` (L leaves at depth d with
    L <= d + 2: a deeper tree has at least d + 2 leaves). Returns the points and that reason.
    """
    grid = BoxGrid.build(X, y, column_values)
    stats = BoxStats(boxes=grid.label.size)
    recorder.stats = stats

    def out_of_time() -> bool:
        return deadline is not None and time.perf_counter() >= deadline

    depth = 0
    while grid.leaves(depth) is None:
        if max_depth is not None and depth >= max_depth:
            raise _infeasible(max_depth, None, grid)
        if out_of_time():
            recorder.lower_bound = 2 * depth + 3
            raise TimeUp("box DP")
        grid.extend()
        depth = grid.depth
    last = depth + 2 if max_depth is None else max_depth
    points: list[ParetoPoint] = []
    reason = f"reached the last depth asked for ({last})"
    for d in range(depth, last + 1):
        if d > grid.depth and out_of_time():
            reason = f"time limit: depth {d} and deeper not tabulated"
            break
        while grid.depth < d and grid.extend():
            pass  # a layer that changes nothing ends the tables: deeper depths read the last
        tree = grid.tree(d, n_classes)
        recorder.improve(tree, tree.n_nodes)
        points.append(ParetoPoint(d, tree.n_nodes, tree, True))
        ended = front_ends_after(d, tree.n_leaves)
        if ended:
            reason = ended
            break
    stats.depths = grid.depth + 1
    return points, reason
