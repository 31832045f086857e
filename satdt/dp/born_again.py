"""Born-again trees: the smallest single tree that decides like a tree ensemble everywhere.

Vidal & Schiffer, "Born-Again Tree Ensembles" (ICML 2020): the forest's thresholds cut
the input space into cells on which every tree, so the forest, decides one class
(:meth:`satdt.models.forest.Forest.cell_classes`); a tree is faithful to the forest when
each of its leaves holds cells of one class only, and no other thresholds are needed
(Section 3). The optimal tree is found by their dynamic programme over *regions*, boxes of
cells (Section 4; BA-Trees, ``../shared/peers/ba-trees/src/born_again_dp``):

    D(R) = 0 when R is pure, else 1 + min over splits (a, l) of max(D(left), D(right))

for the depth, and ``1 + L + R`` for the number of splits (leaves - 1). Depth then size
is the fewest splits among the trees of minimum depth: a second programme where each
region has a depth budget (its children one less), started from the optimal depth (exact,
where BA-Trees' lexicographic programme may keep more leaves).

What this module adds to BA-Trees' programme, all exact:

* **Hyperplane filtering** (BA-Trees' ``exportUsefulHyperplanes``): a threshold across
  which no cell changes class is dropped before the search; then, inside every region,
  the same rule shrinks the region to its *canonical form* (end slices that agree are
  dropped), and only canonical regions are memoised: far fewer regions than BA-Trees'
  and the depth and size unchanged (see :mod:`satdt.dp._born_again_kernels`).
* BA-Trees' two bounds: a sub-region's optimum bounds its region (monotonicity), and the
  best split of an axis is found by bisection for the depth (Theorem 4).
* An explicit stack, so that a time limit (an absolute ``deadline``) stops the search
  without losing it, with the best faithful tree known (a halving tree when the search has
  not finished) and a lower bound: the largest optimum of any sub-region solved so far.

Sizes: satdt counts a tree's size in nodes, ``2 * leaves - 1``; BA-Trees in leaves. The
result states both (:class:`BornAgainResult`).

The grid is built in full, so this route is for forests whose cell grid has at most
:data:`MAX_GRID_CELLS` cells; wider forests go to the counterexample-guided SAT search
(:mod:`satdt.sat.born_again`).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import DataError, ParameterError
from ..models.faithful import box_counterexample, grid_mismatches
from ..models.forest import Forest, random_cells
from ..models.tree import Tree
from ..task.born_again import BornAgainResult, BornAgainStats
from . import _born_again_kernels as k

OBJECTIVES = ("depth", "size", "depth_then_size")
#: The most cells of a forest's grid (before filtering) this route enumerates.
MAX_GRID_CELLS = 2**24
#: Search steps between two looks at the clock.
_SLICE = 200_000
#: Memo slots to start with (a power of two; doubled when half full).
_FIRST_MEMO = 2**16


class GridTooLarge(DataError):
    """The forest's cell grid has more cells than the grid search enumerates."""


# ---------------------------------------------------------------------- the grid
@dataclass
class CellGrid:
    """The forest's cells after filtering, laid out for the kernels.

    ``features[a]`` is the forest's feature of axis ``a`` and ``cuts[a][l]`` the threshold
    between its levels ``l`` and ``l + 1``; the last axes are packed into words (see
    :mod:`satdt.dp._born_again_kernels`).
    """

    cls: np.ndarray
    coords: np.ndarray
    stride: np.ndarray
    words: np.ndarray
    masks: np.ndarray
    istride: np.ndarray
    nout: int
    isize: int
    features: list[int]
    cuts: list[np.ndarray]
    cells: int
    thresholds: list[np.ndarray]
    forest_cells: np.ndarray

    @property
    def n(self) -> int:
        return len(self.cls)

    def info(self, objective: int) -> np.ndarray:
        return np.array([self.n, len(self.features), self.nout, self.isize, objective], np.int64)


def grid_cells(forest: Forest) -> int:
    """Cells of the forest's grid (before filtering): the product of thresholds + 1."""
    return math.prod(len(t) + 1 for t in forest.thresholds())


def build_grid(forest: Forest, max_cells: int = MAX_GRID_CELLS) -> CellGrid:
    """The forest's cell grid, filtered and bit-packed.

    A threshold is kept when some pair of neighbouring cells across it gets two classes;
    the others are dropped, and the levels they separated merge (BA-Trees' filtering:
    the optimal depth and size do not change, Section 4.1 of the paper).

    Raises
    ------
    GridTooLarge
        When the grid has more than ``max_cells`` cells.
    """
    thresholds = forest.thresholds()
    cells = math.prod(len(t) + 1 for t in thresholds)
    if cells > max_cells:
        raise GridTooLarge(
            f"the forest's grid has {cells} cells, more than the {max_cells} the grid search "
            "enumerates: use the SAT search (satdt.sat.born_again)"
        )
    forest_cells = forest.cell_classes(thresholds)
    keep = []
    for axis in range(forest_cells.ndim):
        changes = np.diff(forest_cells, axis=axis) != 0
        others = tuple(b for b in range(forest_cells.ndim) if b != axis)
        keep.append(np.flatnonzero(changes.any(axis=others)))
    features = [c for c in range(forest.n_features) if len(keep[c])]
    # each filtered level stands for the original levels up to its cut (the last: the rest)
    pick = [np.append(keep[c], len(thresholds[c])) for c in range(forest.n_features)]
    grid = forest_cells[np.ix_(*pick)].reshape([len(keep[c]) + 1 for c in features])
    cuts = [thresholds[c][keep[c]] for c in features]
    inner = _packed_axes([len(keep[c]) + 1 for c in features])
    order = [a for a in range(len(features)) if a not in inner] + inner
    grid = np.ascontiguousarray(np.transpose(grid, order)) if features else grid.reshape(1)
    features = [features[a] for a in order]
    cuts = [cuts[a] for a in order]
    return _layout(grid, features, cuts, cells, thresholds, forest_cells, len(order) - len(inner))


def _packed_axes(levels: list[int]) -> list[int]:
    """The axes packed into one word: the most cells, at most 64 (fewest axes on ties)."""
    best: tuple[int, tuple[int, ...]] = (1, ())
    axes = [a for a, n in enumerate(levels) if n > 1]
    for r in range(1, min(len(axes), 6) + 1):
        for group in itertools.combinations(axes, r):
            size = math.prod(levels[a] for a in group)
            if best[0] < size <= 64:
                best = (size, group)
    return list(best[1])


def _layout(
    grid: np.ndarray,
    features: list[int],
    cuts: list[np.ndarray],
    cells: int,
    thresholds: list[np.ndarray],
    forest_cells: np.ndarray,
    nout: int,
) -> CellGrid:
    """The kernels' arrays of a filtered grid whose axes from ``nout`` on are packed."""
    shape = grid.shape if features else ()
    n = grid.size
    p = len(shape)
    coords = np.zeros((n, max(p, 1)), dtype=np.int16)
    if p:
        coords[:, :p] = np.array(np.unravel_index(np.arange(n), shape), dtype=np.int16).T
    stride = np.array([math.prod(shape[a + 1 :]) for a in range(p)] or [1], dtype=np.int64)
    isize = math.prod(shape[nout:]) if p else 1
    cls = np.ascontiguousarray(grid.reshape(-1), dtype=np.int8)
    n_classes = int(cls.max()) + 1 if n else 1
    planes = max(1, math.ceil(math.log2(n_classes))) if n_classes > 1 else 1
    flat = cls.reshape(-1, isize).astype(np.uint64)
    weights = np.uint64(1) << np.arange(isize, dtype=np.uint64)
    words = np.zeros((planes, len(flat)), dtype=np.uint64)
    for plane in range(planes):
        bits = (flat >> np.uint64(plane)) & np.uint64(1)
        words[plane] = np.bitwise_or.reduce(bits * weights, axis=1)
    top = max(shape) if p else 1
    masks = np.zeros((max(p, 1), top, top), dtype=np.uint64)
    istride = np.zeros(max(p, 1), dtype=np.int64)
    inner_shape = shape[nout:]
    position = np.arange(isize)
    inner = np.unravel_index(position, inner_shape) if inner_shape else ()
    for j, axis in enumerate(range(nout, p)):
        istride[axis] = math.prod(inner_shape[j + 1 :])
        for lo in range(shape[axis]):
            for hi in range(lo, shape[axis]):
                chosen = position[(inner[j] >= lo) & (inner[j] <= hi)]
                masks[axis, lo, hi] = np.bitwise_or.reduce(weights[chosen])
    return CellGrid(
        cls, coords, stride, words, masks, istride, nout, isize, features, cuts, cells,
        thresholds, forest_cells,
    )  # fmt: skip


# ---------------------------------------------------------------------- the search
class _Search:
    """The memo, the stack and the counters of one search over a grid (resumable)."""

    def __init__(self, grid: CellGrid, objective: int) -> None:
        self.grid = grid
        self.objective = objective
        self.info = grid.info(objective)
        p = max(len(grid.features), 1)
        depth = sum(len(c) for c in grid.cuts) + 2
        self.frames = np.zeros((depth, k.N_FIELDS + p), dtype=np.int64)
        self.wit = np.full((depth + 1, 2 * p), -1, dtype=np.int64)
        self.idx = np.zeros(p, dtype=np.int64)
        self.state = np.zeros(k.N_STATE, dtype=np.int64)
        self.state[k.S_SP] = -1
        self.grows = 0
        self._memo(_FIRST_MEMO)

    def _memo(self, size: int) -> None:
        self.memo = np.full(2 * size, -1, dtype=np.int64)  # (key, value) per slot
        self.splits = np.full(size, -1, dtype=np.int32)
        self.state[k.S_LIMIT] = size // 2

    def _grow(self) -> None:
        old = self.memo, self.splits
        self._memo(len(self.splits) * 2)
        k.rehash(*old, self.memo, self.splits)
        self.grows += 1

    def _args(self) -> tuple:
        g = self.grid
        return (g.cls, self.info, g.coords, g.stride, g.words, g.masks, g.istride)

    def canonical(self, bot: int, top: int) -> tuple[int, int]:
        """The canonical form of a region, its witnesses in ``wit[0]``."""
        return k.canonical(
            bot, top, -1, self.wit[1], self.wit[0], *self._args(), self.idx, self.state
        )

    def key(self, bot: int, top: int, budget: int = 0) -> int:
        """The memo's key of a region (within a depth budget for ``OBJ_BUDGET``)."""
        return (bot * self.grid.n + top) * int(k.BUDGETS) + budget

    def known(self, bot: int, top: int, budget: int = 0) -> int | None:
        """The memo's value of a canonical region (None: not solved)."""
        key = self.key(bot, top, budget)
        i = k.slot(self.memo, key)
        return int(self.memo[2 * i + 1]) if self.memo[2 * i] == key else None

    def start(self, bot: int, top: int, budget: int = 0) -> int | None:
        """Prepare to solve a region: its value when known already (0 when pure; no tree
        within a budget of 0 otherwise), else None with its canonical form on the stack."""
        b2, t2 = self.canonical(bot, top)
        if b2 == t2:
            return 0
        if self.objective == k.OBJ_BUDGET and budget == 0:
            return int(k.UNKNOWN)
        value = self.known(b2, t2, budget)
        if value is not None:
            return value
        key = self.key(b2, t2, budget)
        k.push(0, b2, t2, key, -1, budget, self.info, self.grid.coords, self.frames)
        self.state[k.S_SP] = 0
        return None

    def run(self, deadline: float | None) -> int | None:
        """Run the stack to its end (the value) or to the deadline (None)."""
        while True:
            if deadline is not None and time.perf_counter() >= deadline:
                return None
            self.state[k.S_BUDGET] = _SLICE
            status = k.run(
                *self._args(), self.memo, self.splits, self.frames, self.wit, self.idx,
                self.state,
            )  # fmt: skip
            if status == k.DONE:
                return int(self.state[k.S_RESULT])
            if status == k.GROW:
                self._grow()

    def solve(
        self, bot: int, top: int, deadline: float | None = None, budget: int = 0
    ) -> int | None:
        """The optimal value of any region (None: the deadline passed)."""
        value = self.start(bot, top, budget)
        return value if value is not None else self.run(deadline)

    def lower_bound(self) -> int:
        """A lower bound of the root's value: the best value of any region solved (each is
        a sub-region of the root), or of a child the root has seen."""
        seen = int(self.frames[0, k.F_LB]) if self.state[k.S_SP] >= 0 else 0
        return max(int(self.state[k.S_BEST_BOUND]), seen)

    def stats(self, grid: CellGrid) -> BornAgainStats:
        s = self.state
        return BornAgainStats(
            cells=grid.cells,
            filtered_cells=grid.n,
            axes=len(grid.features),
            calls=int(s[k.S_CALLS]),
            expansions=int(s[k.S_EXPANSIONS]),
            memo_hits=int(s[k.S_HITS]),
            memo_entries=int(s[k.S_ENTRIES]),
            face_scans=int(s[k.S_SCANS]),
            face_words=int(s[k.S_WORDS]),
            steps=int(s[k.S_STEPS]),
            grows=self.grows,
        )


# ---------------------------------------------------------------------- trees
def _children(
    grid: CellGrid, bot: int, top: int, axis: int, level: int
) -> tuple[int, int, int, int]:
    """The corners of a region's two sides when split on ``axis`` after ``level``."""
    step = int(grid.stride[axis])
    lo, hi = int(grid.coords[bot, axis]), int(grid.coords[top, axis])
    return bot, top - step * (hi - level), bot + step * (level + 1 - lo), top


def _combine(objective: int, left: int, right: int) -> int:
    if objective == k.OBJ_DEPTH:
        return 1 + max(left, right)
    return int(k._combine(left, right, objective))


def _read_tree(search: _Search, bot: int, top: int, budget: int = 0) -> Any:
    """The optimal tree of a solved region (within a depth budget for ``OBJ_BUDGET``) as
    nested tuples over the grid's axes (``(axis, level, left, right)``, leaves class
    indices): the split the search kept for each canonical region, else the first whose
    sides' optima make the region's."""
    grid = search.grid
    b2, t2 = search.canonical(bot, top)
    if b2 == t2:
        return int(grid.cls[b2])
    value = search.solve(b2, t2, budget=budget)
    below = budget - 1 if search.objective == k.OBJ_BUDGET else 0
    key = search.key(b2, t2, budget)
    i = k.slot(search.memo, key)
    kept = int(search.splits[i]) if search.memo[2 * i] == key else -1
    candidates = [(kept >> 16, kept & 0xFFFF)] if kept >= 0 else []
    candidates += [
        (a, level)
        for a in range(len(grid.features))
        for level in range(int(grid.coords[b2, a]), int(grid.coords[t2, a]))
    ]
    for axis, level in candidates:
        lb, lt, rb, rt = _children(grid, b2, t2, axis, level)
        left, right = search.solve(lb, lt, budget=below), search.solve(rb, rt, budget=below)
        if _combine(search.objective, left, right) == value:
            return (
                axis,
                level,
                _read_tree(search, lb, lt, below),
                _read_tree(search, rb, rt, below),
            )
    raise RuntimeError("internal error: no split of a solved region makes its optimum")


def _halving_tree(search: _Search, bot: int, top: int) -> Any:
    """A faithful tree without search: split the canonical region's widest axis in the
    middle until every region is pure (the incumbent when time runs out)."""
    grid = search.grid
    b2, t2 = search.canonical(bot, top)
    if b2 == t2:
        return int(grid.cls[b2])
    ranges = grid.coords[t2].astype(np.int64) - grid.coords[b2]
    axis = int(np.argmax(ranges))
    level = int(grid.coords[b2, axis]) + int(ranges[axis] - 1) // 2
    lb, lt, rb, rt = _children(grid, b2, t2, axis, level)
    return (axis, level, _halving_tree(search, lb, lt), _halving_tree(search, rb, rt))


def _to_tree(nested: Any, grid: CellGrid, forest: Forest) -> Tree:
    """Nested tuples over the grid's axes as a :class:`Tree` over the forest's features."""

    def convert(node: Any) -> Any:
        if not isinstance(node, tuple):
            return node
        axis, level, left, right = node
        threshold = float(grid.cuts[axis][level])
        return (grid.features[axis], threshold, convert(left), convert(right))

    return Tree.from_nested(convert(nested), forest.classes, forest.feature_names)


# ---------------------------------------------------------------------- the search
def born_again_tree(
    forest: Forest,
    objective: str = "depth",
    *,
    deadline: float | None = None,
    max_cells: int = MAX_GRID_CELLS,
) -> BornAgainResult:
    """The optimal born-again tree of a forest, by the dynamic programme over its cells.

    Parameters
    ----------
    forest : Forest
        The tree ensemble (:mod:`satdt.models.forest`).
    objective : {"depth", "size", "depth_then_size"}, default "depth"
        Minimise the depth; the number of leaves (satdt's size, nodes, is
        ``2 * leaves - 1``); or the depth, then the leaves among trees of that depth (by a
        second search within the optimal depth: exactly the fewest, where BA-Trees'
        programme may keep more). Past the deadline in that second search, the tree is
        of optimal depth but its leaves are not proven.
    deadline : float, optional
        A ``time.perf_counter()`` value: past it, the best faithful tree known is returned,
        not proven, with a lower bound.
    max_cells : int, default :data:`MAX_GRID_CELLS`
        The most cells of the forest's grid to enumerate.

    Returns
    -------
    BornAgainResult
        A tree faithful to the forest on every cell (re-checked), optimal when ``proven``.

    Raises
    ------
    GridTooLarge
        The grid has more than ``max_cells`` cells.
    ParameterError
        An unknown objective.
    """
    if objective not in OBJECTIVES:
        raise ParameterError(f"objective must be one of {list(OBJECTIVES)}, got {objective!r}")
    started = time.perf_counter()
    grid = build_grid(forest, max_cells)
    root = (0, grid.n - 1)
    first = _Search(grid, k.OBJ_SIZE if objective == "size" else k.OBJ_DEPTH)
    value = first.solve(*root, deadline)
    searches, splits = [first], None
    if value is not None and objective == "depth_then_size":
        # the fewest splits of a tree within the optimal depth (not BA-Trees' programme)
        searches.append(_Search(grid, k.OBJ_BUDGET))
        splits = searches[1].solve(*root, deadline, budget=value)
    if value is None:
        nested = _halving_tree(first, *root)
    elif splits is not None:
        nested = _read_tree(searches[1], *root, value)
    else:
        nested = _read_tree(first, *root)
    tree = _to_tree(nested, grid, forest)
    proven = value is not None and (objective != "depth_then_size" or splits is not None)
    if value is not None:
        got = tree.n_splits if objective == "size" else tree.depth
        if got != value or (splits is not None and tree.n_splits != splits):
            raise RuntimeError(f"internal error: the tree read back has {got}, not {value}")
        bound = tree.n_leaves if objective == "size" else tree.depth
    else:  # the largest optimum of a sub-region solved: splits -> leaves for the size
        bound = max(first.lower_bound(), 1) + (1 if objective == "size" else 0)
    wrong = grid_mismatches(tree, forest, grid.thresholds, grid.forest_cells)
    if len(wrong):
        raise RuntimeError(
            f"internal error: the born-again tree decides otherwise than the forest at "
            f"{len(wrong)} cells, e.g. x = {wrong[0].tolist()}"
        )
    stats = first.stats(grid)
    for other in searches[1:]:
        for name, count in other.stats(grid).as_dict().items():
            if name not in ("cells", "filtered_cells", "axes"):
                setattr(stats, name, getattr(stats, name) + count)
    stats.seconds = time.perf_counter() - started
    return BornAgainResult(tree, objective, tree.depth, tree.n_leaves, bound, proven, stats)


# ---------------------------------------------------------------------- wide forests
def _cell_box(thresholds: list[np.ndarray], point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The box ``low < x <= high`` of the grid cell holding a point."""
    low, high = np.full(len(point), -np.inf), np.full(len(point), np.inf)
    for c, t in enumerate(thresholds):
        level = int(np.searchsorted(t, point[c]))  # t[level - 1] < x <= t[level]
        if level > 0:
            low[c] = t[level - 1]
        if level < len(t):
            high[c] = t[level]
    return low, high


def _live_box(
    forest: Forest, point: np.ndarray, max_cells: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A box around a point's cell, freed feature by feature (the one that keeps the most
    splits of the forest alive first) while it has at most ``max_cells`` cells."""
    thresholds = forest.thresholds()
    low, high = _cell_box(thresholds, point)
    cells = 1
    while True:
        best, best_nodes = -1, int(np.sum(forest.restricted(low, high).feature >= 0))
        for c in rng.permutation(forest.n_features):
            n = len(thresholds[c]) + 1
            if (
                n == 1
                or (not np.isfinite(low[c]) and not np.isfinite(high[c]))
                or cells * n > max_cells
            ):
                continue
            keep = low[c], high[c]
            low[c], high[c] = -np.inf, np.inf
            nodes = int(np.sum(forest.restricted(low, high).feature >= 0))
            low[c], high[c] = keep
            if nodes > best_nodes:
                best, best_nodes = int(c), nodes
        if best < 0:
            return low, high
        low[best], high[best] = -np.inf, np.inf
        cells *= len(thresholds[best]) + 1


def box_lower_bound(
    forest: Forest,
    objective: str = "depth",
    *,
    deadline: float | None = None,
    max_cells: int = 2**14,
    tries: int = 20,
    seed: int = 0,
) -> int:
    """A lower bound of a forest's born-again optimum from sub-boxes of its grid.

    A tree faithful to the forest is faithful on any box of the input space, and the
    part of it a box reaches has no more depth and no more leaves; so the optimum of the
    forest restricted to a box (:meth:`Forest.restricted`) bounds the forest's from below.
    Each try starts from a random cell and frees the features that keep the most splits of
    the forest alive, up to ``max_cells`` cells, and solves that box exactly by
    :func:`born_again_tree` (or takes its lower bound at the deadline).

    Returns
    -------
    int
        The best bound found: a depth for ``"depth"`` and ``"depth_then_size"``, leaves for
        ``"size"`` (0 or 1 for a constant forest).
    """
    rng = np.random.default_rng(seed)
    thresholds = forest.thresholds()
    everywhere = np.full(forest.n_features, -np.inf), np.full(forest.n_features, np.inf)
    best = 0
    for _ in range(tries):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        point = random_cells(thresholds, *everywhere, 1, rng)[0, 0]
        low, high = _live_box(forest, point, max_cells, rng)
        result = born_again_tree(forest.restricted(low, high), objective, deadline=deadline)
        best = max(best, result.lower_bound)
    return best


def greedy_faithful_tree(
    forest: Forest,
    objective: str = "depth",
    *,
    deadline: float | None = None,
    samples: int = 32,
    max_cells: int = 2**14,
    seed: int = 0,
) -> Tree:
    """A faithful tree of a forest whose grid is too large for :func:`born_again_tree`.

    Top-down, box by box, on the forest restricted to the box (:meth:`Forest.restricted`):
    a box where no split of the forest is left is a leaf; a box whose grid has at most
    ``max_cells`` cells gets its optimal subtree by the dynamic programme; a box whose
    ``samples`` random cells agree and where the forest has no point deciding otherwise
    (:func:`satdt.models.faithful.box_counterexample`) is a leaf; any other box is split on
    the forest threshold inside it that leaves the fewest live splits of the forest in its
    busier side. Every leaf is proven, so the tree is faithful. Past the deadline, small
    boxes get the programme's halving trees (faithful, not optimal).
    """
    rng = np.random.default_rng(seed)
    thresholds = forest.thresholds()

    def grow(low: np.ndarray, high: np.ndarray) -> Any:
        box = forest.restricted(low, high)
        if not np.any(box.feature >= 0):
            return int(box.predict_index(random_cells(thresholds, low, high, 1, rng)[0])[0])
        if grid_cells(box) <= max_cells:
            return born_again_tree(box, objective, deadline=deadline).tree.to_nested()
        points = random_cells(thresholds, low, high, samples, rng)[0]
        labels = box.predict_index(points)
        if (
            np.all(labels == labels[0])
            and box_counterexample(box, low, high, int(labels[0])) is None
        ):
            return int(labels[0])
        c, t = _busiest_split(box, low, high)
        left_high, right_low = high.copy(), low.copy()
        left_high[c], right_low[c] = t, t
        return (c, t, grow(low, left_high), grow(right_low, high))

    n = forest.n_features
    nested = grow(np.full(n, -np.inf), np.full(n, np.inf))
    return Tree.from_nested(nested, forest.classes, forest.feature_names)


def _busiest_split(box: Forest, low: np.ndarray, high: np.ndarray) -> tuple[int, float]:
    """The threshold of a restricted forest whose split leaves the fewest live splits in
    the busier side (then in both)."""
    best = (math.inf, math.inf, -1, 0.0)
    for c, ts in enumerate(box.thresholds()):
        for t in ts:
            left_high, right_low = high.copy(), low.copy()
            left_high[c], right_low[c] = t, t
            left = int(np.sum(box.restricted(low, left_high).feature >= 0))
            right = int(np.sum(box.restricted(right_low, high).feature >= 0))
            if (max(left, right), left + right) < best[:2]:
                best = (max(left, right), left + right, c, float(t))
    return best[2], best[3]
