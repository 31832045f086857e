"""ConTree's trees: its nodes turned into checked trees, and the first trees it starts from.

A node of ConTree's search (:mod:`satdt.dp.contree`) is a tree over the ranks of the numeric
columns; :func:`to_tree` makes it a :class:`~satdt.models.tree.Tree` over the columns' values
and :func:`checked_tree` re-checks its cost and leaf support. The first upper bounds:
:func:`greedy_first`, the greedy tree of the numeric columns; with a time limit at depth
:data:`PRIMAL_DEPTH` or more, :func:`primal`, Blossom on a few quantile thresholds per column,
interleaved with the exact search by :func:`solve_with_primal`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import TimeUp
from ..models.tree import Tree
from ..prepare.binarize import threshold_between
from ..task.result import Recorder, SearchResult
from . import kernels
from .common import SearchSettings
from .greedy import greedy_numeric_tree

if TYPE_CHECKING:
    from .contree import PreparedNumeric, _Rows

# Relative tolerance on errors (float weights summed in different orders), times the total
# weight: as in Blossom, trees must beat an incumbent by more than it.
REL_TOL = 1e-9
# With a time limit at depth >= PRIMAL_DEPTH, when the exact search has not finished within
# PRIMAL_FIRST of the time left (at most 1 s), Blossom on PRIMAL_THRESHOLDS quantile
# thresholds per column (a coarse grid for PRIMAL_COARSE_SHARE of that time, then a finer
# one) runs for PRIMAL_SHARE of it (at most PRIMAL_SECONDS) to find good trees early
# (:func:`primal`); then the exact search resumes with their bound.
PRIMAL_DEPTH = 4
PRIMAL_FIRST = 0.1
PRIMAL_THRESHOLDS = (6, 32)
PRIMAL_COARSE_SHARE = 0.7
PRIMAL_SHARE = 0.3
PRIMAL_SECONDS = 30.0
# A grid's binary matrix is built in one step that no clock interrupts (about 25 ns a cell,
# Blossom's preparation included): a grid of more cells (rows x binary features) than this is
# skipped, so that the primal's slice, and the time limit, ends within about half a second of
# its end (150,000 x 24 numeric cells, 32 thresholds a column: 3 s for both grids).
PRIMAL_MAX_CELLS = 20_000_000


def to_tree(
    node: Any, prep: PreparedNumeric, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int
) -> Tree:
    """A rank-space tree as a :class:`Tree` on ``X``; each leaf predicts its heaviest class."""

    def nested(t: Any) -> Any:
        if not isinstance(t, tuple):
            return 0
        f, r, lo, hi = t
        return (f, threshold_between(prep.values[f], r), nested(lo), nested(hi))

    tree = Tree.from_nested(nested(node), classes=np.arange(n_classes)).with_counts(X, y, w)
    leaves = np.flatnonzero(tree.left < 0)
    tree.value[leaves] = np.argmax(tree.counts[leaves], axis=1)
    return tree


def penalised_cost(tree: Tree, pen: float) -> float:
    """The cost of a tree with counts: its error plus ``pen`` per leaf."""
    return tree.count_error() + pen * tree.n_leaves


def supported(tree: Tree, X: np.ndarray, w: np.ndarray, s: int) -> bool:
    """Whether every leaf of a tree (with counts) with a split holds ``s`` training rows of
    positive weight (then each side of every split does)."""
    if tree.n_leaves == 1:
        return True
    leaves = tree.left < 0
    if s <= 1:  # a leaf with positive weight
        return bool((tree.counts[leaves].sum(axis=1) > 0).all())
    reached = np.bincount(tree.apply(X[w > 0]), minlength=tree.n_nodes)
    return bool(reached[leaves].min() >= s)


def checked_tree(
    value: float, node: Any, prep, X, y, w, n_classes, pen: float = 0.0, s: int = 1
) -> Tree:
    """Build the tree and check that it really has the cost the search claims (its error
    plus ``pen`` per leaf) and the support ``s`` on each side of every split."""
    tree = to_tree(node, prep, X, y, w, n_classes)
    cost = penalised_cost(tree, pen)
    if abs(cost - value) > REL_TOL * max(1.0, float(w.sum())):
        raise RuntimeError(
            f"internal error: the search reports cost {value} but its tree has cost {cost}"
        )
    if not supported(tree, X, w, s):
        raise RuntimeError(f"internal error: the search's tree has a leaf of fewer than {s} rows")
    return tree


def greedy_node(tree: Tree, prep: PreparedNumeric) -> Any:
    """A greedy tree in rank space (None if a split does not fall between two data values)."""

    def walk(node: int) -> Any:
        if tree.left[node] < 0:
            return -1
        f = int(tree.feature[node])
        values = prep.values[f]
        r = int(np.searchsorted(values, tree.threshold[node], side="right")) - 1
        lo, hi = walk(int(tree.left[node])), walk(int(tree.right[node]))
        if not 0 <= r < len(values) - 1 or lo is None or hi is None:
            return None
        return (f, r, lo, hi)

    return walk(0)


def primal(rows: _Rows, report: Callable[[float, Any], None], max_depth: int, until: float) -> None:
    """Good trees early: Blossom on ``PRIMAL_THRESHOLDS`` quantile thresholds per column
    until ``until`` (with the rows' leaf penalty ``pen`` and minimum support ``s``), each of
    its better trees reported (``report(cost, node)``) as a ConTree incumbent; first on the
    coarse grid for up to ``PRIMAL_COARSE_SHARE`` of the time (a small problem, often solved
    in seconds), then on the finer one.

    At depth four or more ConTree improves on its greedy tree only once a whole depth-three
    subproblem is solved, which can take minutes; Blossom on few thresholds finds good trees
    within seconds. Its trees are trees over the numeric columns (each quantile threshold
    lies between two data values), so they become ConTree incumbents and bounds.
    """
    from ..prepare.binarize import Binarizer
    from .blossom import solve_min_error as blossom  # its kernels are ready (see the caller)

    X, y, w, n_classes, prep, pen, s = (
        rows.X, rows.y, rows.w, rows.n_classes, rows.prep, rows.pen, rows.s
    )  # fmt: skip

    def forward(result: SearchResult) -> None:
        node = greedy_node(result.model, prep)
        if node is not None:
            tree = to_tree(node, prep, X, y, w, n_classes)
            if supported(tree, X, w, s):
                report(penalised_cost(tree, pen), node)

    coarse, fine = PRIMAL_THRESHOLDS
    coarse_until = time.perf_counter() + PRIMAL_COARSE_SHARE * (until - time.perf_counter())
    for thresholds, stop in ((coarse, coarse_until), (fine, until)):
        if X.shape[0] * X.shape[1] * thresholds > PRIMAL_MAX_CELLS:
            continue
        binarizer = Binarizer(max_thresholds=thresholds).fit(X)
        B = binarizer.transform(X)
        sub = Recorder(
            "error",
            to_user_tree=lambda tree, b=binarizer: tree.map_features(b.column_, b.threshold_),
            on_improve=forward,
        )
        blossom(
            B,
            y,
            n_classes,
            max_depth,
            SearchSettings(sub, sample_weight=w, deadline=stop, leaf_penalty=pen, min_support=s),
        )
        if time.perf_counter() >= until:
            return


def greedy_first(
    rows: _Rows,
    report: Callable[[float, Any], None],
    max_depth: int,
    deadline: float | None,
    ub: float,
    slack: float,
) -> float:
    """Report a greedy tree grown on the training rows (those of positive weight: no leaf of
    rows of weight 0 alone) when it beats ``ub`` and keeps the support; the bound after it."""
    X, y, w, n_classes, prep, pen, s = (
        rows.X, rows.y, rows.w, rows.n_classes, rows.prep, rows.pen, rows.s
    )  # fmt: skip
    used = w > 0
    Xg, yg, wg = (X, y, w) if used.all() else (X[used], y[used], w[used])
    greedy = greedy_numeric_tree(
        Xg, yg, n_classes, sample_weight=wg, max_depth=max_depth, deadline=deadline
    )
    node = greedy_node(greedy, prep)
    if node is not None:
        tree = to_tree(node, prep, X, y, w, n_classes)
        value = penalised_cost(tree, pen)
        if value < ub and supported(tree, X, w, s):
            report(value, node)
            ub = value - slack
    return ub


def solve_with_primal(search, order, depth, ub, slack, deadline, recorder, primal):
    """The exact search briefly (easy problems end here), then Blossom's good trees early
    (``primal(until)``), then the exact search again with their bound and its cache."""
    blossom = primal_groups()
    kernels.request(blossom)
    left = max(deadline - time.perf_counter(), 0.0)
    search.deadline = time.perf_counter() + min(PRIMAL_FIRST * left, 1.0)
    try:
        return search.solve(order, depth, ub, slack=slack, root=True)
    except TimeUp:
        if kernels.ready(blossom):  # on a first run they may be compiling still
            until = time.perf_counter() + min(PRIMAL_SHARE * left, PRIMAL_SECONDS)
            primal(min(until, deadline))
        if recorder.best is not None:
            ub = min(ub, recorder.best.value - slack)
        search.deadline = deadline
        return search.solve(order, depth, ub, slack=slack, root=True)


def primal_groups() -> tuple[str, ...]:
    """The primal's groups: Blossom's (from the table of searches)."""
    from .kernels import kernels_of

    return kernels_of("blossom").start
