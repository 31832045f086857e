"""Local improvement of a consistent tree: shallower trees of large numeric tables.

Far above the minimum depth, an exact decision on thousands of rows cannot finish, and a
greedy tree is many levels too deep (a 2,000-row sample of eeg: CART's depth 16). DT-SLIM
(Schidler & Szeider, "SAT-based decision tree learning for large data sets", AAAI 2021; JAIR
80, 2024) improves a heuristic tree instead: the rows that reach a node of the tree are a
small problem, so the subtree below the node can be re-solved *exactly* on those rows only,
and a shallower result is spliced back. Only the rows reaching the node meet the new
subtree, so a subtree consistent with them keeps the whole tree consistent.

:class:`LocalImprovement` aims one level below the incumbent's depth ``D`` at a time: every
node must end within the height that leaves (``D - 1`` less its depth). Top-down from the
root, a node whose subtree is too deep

1. is re-solved on its rows, when they are few (:attr:`ImproveOptions.max_rows`), by ConTree
   (:mod:`satdt.dp.contree`, Brita, van der Linden & Demirovic, AAAI 2025): its minimum-error
   tree at the height allowed, accepted when its error is 0 (ConTree's anytime search with
   its greedy and quantile starts meets consistent trees far sooner than its decision
   procedure, which has no error to guide it);
2. else keeps its split, and both children are asked one level less (the deeper first: when
   it fails, the other is not tried);
3. else gets a new split, among the :attr:`ImproveOptions.candidates` best-looking ones: each
   column's best Gini threshold, ranked by the larger of the two greedy trees' numbers of
   leaves (a greedy tree's leaves tell how much a row set needs to be cut; the split that
   halves that need, not the purest one, leaves the shallowest children), whose children are
   then greedy trees improved the same way.

Each exact solve has a time budget; a pass that fails is repeated with twice the budget (up
to :attr:`ImproveOptions.max_budget`), keeping the subtrees it made shallower; a row set that
failed at a height is not tried again at that height with the same budget, nor ever at a
height ConTree refuted for it. The search runs in slices
(:meth:`LocalImprovement.advance`), as the portfolio of :mod:`satdt.search.hybrid` needs.

*Less to search.* A subproblem's columns keep only the thresholds between neighbouring values
of different labels: consecutive values held by rows of one and the same class are merged
into one value (a *run*), so rows that become identical are merged, and a column left with
one value (or equal to an earlier one) is dropped; the counts are in the statistics. A tree
of the merged values maps back to thresholds between the runs, which route the rows as the
search assumed. This may cost depth, never correctness: thresholds between two values of one
class can be needed (eight rows with two columns need depth 3 without them, depth 2 with
them; ``tests/dp/test_improve.py``), so nothing proven on merged values is a lower bound, and
this search proves nothing.

Every tree it returns is checked against every row.
"""

from __future__ import annotations

import math
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..models.tree import Tree, depth_lower_bound
from ..prepare.binarize import threshold_between
from ..task.stats import Decision, ImproveStats
from .consistent import ConsistencyDP
from .greedy import greedy_numeric_tree

# A nested tree: a class index, or (column, threshold, left, right).
Nested = Any


@dataclass(frozen=True)
class ImproveOptions:
    """How :class:`LocalImprovement` spends its time.

    Attributes
    ----------
    max_rows
        A node's subtree is re-solved exactly when at most this many rows reach it (ConTree
        finds consistent trees of a few hundred rows in a fraction of a second, not of
        thousands).
    first_budget
        Seconds of each exact solve in the first pass; each pass that lowers nothing doubles it.
    max_budget
        The largest budget of one solve; a pass that fails at it ends the search.
    candidates
        New splits tried at a node whose subtree cannot be made shallow enough otherwise.
    """

    max_rows: int = 300
    first_budget: float = 0.25
    max_budget: float = 4.0
    candidates: int = 3


def height(node: Nested) -> int:
    """The depth of a nested tree."""
    if not isinstance(node, tuple):
        return 0
    return 1 + max(height(node[2]), height(node[3]))


class _Reduced:
    """A subproblem's rows on merged values: each column's runs of neighbouring values held by
    one class become one value (the run's index); columns with one run, or equal to an earlier
    column, are dropped. ``X`` the merged columns (floats), ``columns`` their original
    indices, ``cuts[j]`` the thresholds between consecutive runs of merged column ``j``."""

    def __init__(self, X: np.ndarray, y: np.ndarray, n_classes: int, stats: ImproveStats) -> None:
        merged, columns, cuts = [], [], []
        for c in range(X.shape[1]):
            values, index = np.unique(X[:, c], return_inverse=True)
            stats.thresholds += max(len(values) - 1, 0)
            if len(values) < 2:
                stats.columns_dropped += 1
                continue
            low = np.full(len(values), n_classes)
            high = np.full(len(values), -1)
            np.minimum.at(low, index, y)
            np.maximum.at(high, index, y)
            single = np.where(low == high, low, -1)
            same = (single[1:] >= 0) & (single[1:] == single[:-1])
            stats.thresholds_dropped += int(same.sum())
            run = np.concatenate([[0], np.cumsum(~same)])
            first = np.flatnonzero(np.concatenate([[True], ~same]))  # each run's first value
            merged.append(run[index])
            columns.append(c)
            cuts.append([threshold_between(values, int(j) - 1) for j in first[1:]])
        R = np.column_stack(merged) if merged else np.zeros((len(y), 0), dtype=np.int64)
        _, keep = np.unique(R, axis=1, return_index=True)
        keep = np.sort(keep)
        stats.columns_dropped += len(columns) - len(keep)
        self.X = np.ascontiguousarray(R[:, keep], dtype=np.float64)
        self.columns = [columns[j] for j in keep]
        self.cuts = [cuts[j] for j in keep]
        stats.rows_merged += len(y) - len(np.unique(self.X, axis=0))

    def back(self, node: Nested) -> Nested:
        """A tree over the merged columns as a tree over the original ones."""
        if not isinstance(node, tuple):
            return node
        f, t, lo, hi = node[:4]
        run = math.floor(t)  # t lies between runs run and run + 1
        return (self.columns[f], self.cuts[f][run], self.back(lo), self.back(hi))


class LocalImprovement:
    """Lower the depth of a consistent tree by re-solving its subtrees (module docstring).

    Parameters
    ----------
    X
        float64 ``(n, p)`` design matrix without missing values.
    y
        Class index of each row; identical rows have identical labels.
    n_classes
        Number of classes.
    tree
        A consistent tree over ``X``'s columns (class indices at its leaves).
    deadline
        A ``time.perf_counter()`` value no exact solve runs past.
    options
        How the time is spent (:class:`ImproveOptions`).
    stats
        The counters to keep (a new :class:`~satdt.task.stats.ImproveStats` by default).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        tree: Tree,
        *,
        deadline: float | None = None,
        options: ImproveOptions = ImproveOptions(),
        stats: ImproveStats | None = None,
    ) -> None:
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.int64)
        self.n_classes = n_classes
        self.options = options
        self.stats = stats if stats is not None else ImproveStats()
        self.nested: Nested = tree.to_nested()
        self.depth = height(self.nested)
        self.stats.start_depth = self.stats.depth = self.depth
        self.floor = 0  # no tree is wanted below this depth (a proven lower bound)
        self.deadline = deadline
        self.budget = options.first_budget
        self.failed: dict[tuple[bytes, int], float] = {}  # (rows, height) -> budget it failed with
        self.splits: dict[bytes, list[tuple[int, float]]] = {}  # rows -> their new splits
        self.too_deep: dict[bytes, int] = {}  # rows -> the largest height ConTree refuted
        self.exhausted = False
        self._work: Generator[bool, None, None] | None = None

    # ------------------------------------------------------------------ the slices
    def offer(self, tree: Tree) -> None:
        """A consistent tree found elsewhere: continue from it when it is shallower."""
        if tree.depth < self.depth:
            self.nested, self.depth = tree.to_nested(), tree.depth
            self._work = None  # the pass under way worked on the older tree
            self.exhausted = False

    def advance(self, until: float, floor: int = 0) -> Decision:
        """Work until ``until`` (a ``time.perf_counter()`` value; an exact solve under way runs
        on for its budget, not past the deadline): ``"SAT"`` with a consistent tree shallower
        than the one before, else ``"UNKNOWN"``. ``floor``: a proven lower bound on the depth
        (no pass aims below it)."""
        self.floor = max(self.floor, floor)
        while not self.exhausted and time.perf_counter() < until:
            if self._work is None:
                self._work = self._passes()
            try:
                improved = next(self._work)
            except StopIteration:
                self.exhausted = True
                break
            if improved:
                return Decision("SAT", self.tree())
        return Decision("UNKNOWN")

    def tree(self) -> Tree:
        """The incumbent as a :class:`Tree` over ``X`` (class indices as classes)."""
        return Tree.from_nested(self.nested, classes=np.arange(self.n_classes))

    def _passes(self) -> Generator[bool, None, None]:
        """Passes at one level below the incumbent; yields True on each shallower tree, False
        after each exact solve (so that the caller can look at the clock). A pass that fails
        keeps the subtrees it made shallower: the next one has fewer to make."""
        rows = np.arange(len(self.y))
        while self.depth - 1 >= max(self.floor, 1):
            self.stats.passes += 1
            found, done = yield from self._within(self.nested, rows, self.depth - 1)
            tree = Tree.from_nested(found, classes=np.arange(self.n_classes))
            if not (tree.predict_index(self.X) == self.y).all() or tree.depth > self.depth:
                raise RuntimeError("internal error: an improved tree misclassifies rows")
            self.nested = found
            if not done:
                if self.budget >= self.options.max_budget:
                    return
                self.budget = min(2 * self.budget, self.options.max_budget)
                continue
            self.depth = tree.depth
            self.stats.improvements += 1
            self.stats.depth = self.depth
            yield True

    # ------------------------------------------------------------------ one pass
    def _within(
        self, node: Nested, rows: np.ndarray, allowed: int
    ) -> Generator[bool, None, tuple[Nested, bool]]:
        """``node``'s subtree over ``rows`` made at most ``allowed`` deep: ``(subtree, True)``;
        else ``(subtree, False)``, the subtree no deeper than ``node``'s, with the parts made
        shallower on the way."""
        if height(node) <= allowed:
            return node, True
        if allowed < depth_lower_bound(int(np.unique(self.y[rows]).size)):
            return node, False
        key = (rows.tobytes(), allowed)
        if self.failed.get(key, 0.0) >= self.budget or allowed <= self.too_deep.get(key[0], -1):
            return node, False
        if len(rows) <= self.options.max_rows:
            found = yield from self._solve(rows, allowed)
            if found is not None:
                return found, True
            if allowed <= self.too_deep.get(key[0], -1):
                return node, False
        if isinstance(node, tuple):
            node, done = yield from self._keep_split(node, rows, allowed)
            if done:
                return node, True
        if len(rows) > self.options.max_rows // 2:
            for column, threshold in self._candidates(rows, node):
                found = yield from self._new_split(column, threshold, rows, allowed)
                if found is not None:
                    self.stats.resplits += 1
                    return found, True
        self.failed[key] = self.budget
        return node, False

    def _keep_split(
        self, node: tuple, rows: np.ndarray, allowed: int
    ) -> Generator[bool, None, tuple[Nested, bool]]:
        """The node's split kept, both children one level less (the deeper first; when it
        fails, the other is left as it is)."""
        column, threshold, left, right = node[:4]
        goes_left = self.X[rows, column] <= threshold
        sides = [(left, rows[goes_left]), (right, rows[~goes_left])]
        children = [left, right]
        for side in (1, 0) if height(right) > height(left) else (0, 1):
            child, its_rows = sides[side]
            children[side], done = yield from self._within(child, its_rows, allowed - 1)
            if not done:
                return (column, threshold, children[0], children[1]), False
        return (column, threshold, children[0], children[1]), True

    def _new_split(
        self, column: int, threshold: float, rows: np.ndarray, allowed: int
    ) -> Generator[bool, None, Nested | None]:
        """A new split of ``rows`` whose children, greedy trees improved, are at most
        ``allowed - 1`` deep."""
        goes_left = self.X[rows, column] <= threshold
        children = []
        for side in (rows[goes_left], rows[~goes_left]):
            child, done = yield from self._within(self._greedy(side), side, allowed - 1)
            if not done:
                return None
            children.append(child)
        return (column, threshold, children[0], children[1])

    def _greedy(self, rows: np.ndarray) -> Nested:
        """A greedy Gini tree of ``rows``, nested."""
        return greedy_numeric_tree(self.X[rows], self.y[rows], self.n_classes).to_nested()

    def _solve(self, rows: np.ndarray, allowed: int) -> Generator[bool, None, Nested | None]:
        """ConTree's decision: a consistent tree of ``rows`` of depth at most ``allowed`` on
        merged values, within the pass's budget (or the deadline); None when there is none
        (remembered) or the budget ran out."""
        X, y = self.X[rows], self.y[rows]
        greedy = greedy_numeric_tree(X, y, self.n_classes)
        if greedy.depth <= allowed:  # far above the minimum, where a decision is slowest
            return greedy.to_nested()
        reduced = _Reduced(X, y, self.n_classes, self.stats)
        deadline = time.perf_counter() + self.budget
        if self.deadline is not None:
            deadline = min(deadline, self.deadline)
        decision = ConsistencyDP(reduced.X, y, self.n_classes).decide(allowed, deadline)
        self.stats.solves += 1
        yield False
        if decision.status == "UNSAT":  # no tree of this height on the merged values
            key = rows.tobytes()
            self.too_deep[key] = max(self.too_deep.get(key, -1), allowed)
        if decision.status != "SAT":
            return None
        self.stats.replaced += 1
        return reduced.back(decision.tree.to_nested())

    def _candidates(self, rows: np.ndarray, node: Nested) -> list[tuple[int, float]]:
        """The new splits worth trying at a node (its own split left out), once per row set:
        each column's two thresholds of :func:`_column_splits`; the :data:`SHORTLIST` times
        :attr:`ImproveOptions.candidates` whose larger side carries the least impurity; of
        those, the :attr:`ImproveOptions.candidates` whose larger side has the fewest greedy
        leaves."""
        key = rows.tobytes()
        if key in self.splits:
            return self.splits[key]
        X, y = self.X[rows], self.y[rows]
        current = X[:, node[0]] <= node[1] if isinstance(node, tuple) else None
        scored = []
        for column in range(X.shape[1]):
            for threshold, score in _column_splits(X[:, column], y, self.n_classes):
                goes_left = X[:, column] <= threshold
                if current is None or (goes_left != current).any():
                    scored.append((score, column, threshold))
        scored.sort()
        ranked = []
        for _, column, threshold in scored[: SHORTLIST * self.options.candidates]:
            goes_left = X[:, column] <= threshold
            need = max(self._leaves(rows[goes_left]), self._leaves(rows[~goes_left]))
            ranked.append((need, column, threshold))
        ranked.sort()
        self.splits[key] = [(c, t) for _, c, t in ranked[: self.options.candidates]]
        return self.splits[key]

    def _leaves(self, rows: np.ndarray) -> int:
        if np.unique(self.y[rows]).size <= 1:
            return 1
        return greedy_numeric_tree(self.X[rows], self.y[rows], self.n_classes).n_leaves


# How many more splits than it tries a node ranks by the greedy leaves of their sides.
SHORTLIST = 4


def _column_splits(values: np.ndarray, y: np.ndarray, n_classes: int) -> list[tuple[float, float]]:
    """A column's two candidate splits, each ``(threshold, the larger side's impurity)``: the
    one whose larger side carries the least impurity (rows times Gini: a split that halves
    what is left to separate), and the lowest total Gini impurity (CART's); none when the
    column has one value."""
    order = np.argsort(values, kind="stable")
    v = values[order]
    between = np.flatnonzero(v[1:] > v[:-1])  # a split after position i
    if between.size == 0:
        return []
    onehot = np.zeros((len(v), n_classes))
    onehot[np.arange(len(v)), y[order]] = 1.0
    left = np.cumsum(onehot, axis=0)[between]
    right = onehot.sum(axis=0) - left
    n_left = left.sum(axis=1)
    n_right = right.sum(axis=1)
    mass_left = n_left - (left**2).sum(axis=1) / n_left
    mass_right = n_right - (right**2).sum(axis=1) / n_right
    larger = np.maximum(mass_left, mass_right)
    splits = []
    for best in {int(np.argmin(larger)), int(np.argmin(mass_left + mass_right))}:
        i = int(between[best])
        splits.append((threshold_between(np.array([v[i], v[i + 1]]), 0), float(larger[best])))
    return splits
