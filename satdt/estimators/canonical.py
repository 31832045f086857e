"""Every minimum-depth tree up to symmetry: counted, listed lazily, and shared out by column.

:func:`minimum_depth_trees` counts exactly the consistent trees of depth at most the minimum
(or ``max_depth``) in a canonical form, so that trees which differ only by a symmetry count
once: a split's "no" side is its feature false; every split sends training rows both ways
(parts no row reaches are pruned); no split has two equal subtrees. The count is a dynamic
programme over families of row masks that multiplies the children's counts and subtracts the
pairs of equal children; trees are listed lazily, each re-checked against the data, the depth
and the canonical form. The helpers it shares with the Rashomon set (the data prepared by the
estimator's checks, trees mapped to the user's columns) live in :mod:`satdt.estimators.rashomon`.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..core.errors import InfeasibleError, ParameterError, SatdtError, TimeUp
from ..models.tree import Tree
from .rashomon import columns_by_name, dataset_of, prepared_without_search, row_mask, user_tree

__all__ = ["ConsistentTrees", "minimum_depth_trees"]


class ConsistentTrees:
    """Every consistent tree of a depth budget in canonical form, as
    :func:`~satdt.minimum_depth_trees` returns it (see there for the canonical form).

    Its attributes: ``depth``, the depth budget; ``optimum``, the least depth of a consistent
    tree (the trees of the set have this depth when the budget is the minimum); ``count``, the
    number of trees (exact, a Python integer).

    Parameters
    ----------
    solver : object
        The count over the prepared data (internal).
    depth : int
        The depth budget.
    optimum : int
        The minimum depth.
    """

    def __init__(self, solver: _Canonical, depth: int, optimum: int) -> None:
        self._solver = solver
        self.depth = depth
        self.optimum = optimum
        self._histogram = solver.histogram(frozenset({solver.all_rows}), depth, frozenset())
        self.count = sum(self._histogram.values())

    def histogram(self) -> dict[int, int]:
        """How many trees of the set have each number of nodes, fewest first.

        Returns
        -------
        dict
            Nodes (internal + leaves) -> number of trees.
        """
        return {2 * leaves - 1: count for leaves, count in sorted(self._histogram.items())}

    def trees(self, limit: int | None = None) -> Iterator[Tree]:
        """The trees of the set, lazily (in the order of the features, not of size).

        Parameters
        ----------
        limit : int, optional
            At most this many (the cap of the enumeration).

        Yields
        ------
        Tree
            Each tree, checked against the data (every row right), the depth budget and the
            canonical form.
        """
        solver = self._solver
        for produced, nested in enumerate(solver.nested(frozenset({solver.all_rows}), self.depth)):
            if limit is not None and produced >= limit:
                return
            yield solver.to_tree(nested)

    def feature_counts(self) -> dict[str, int]:
        """How many trees of the set split on each column (exact: the trees that avoid every
        binary feature of the column are counted and subtracted from all).

        Returns
        -------
        dict
            Column name -> number of trees.
        """
        solver = self._solver
        counts = {}
        for name, features in solver.columns.items():
            avoiding = solver.histogram(frozenset({solver.all_rows}), self.depth, features)
            counts[name] = self.count - sum(avoiding.values())
        return counts

    def feature_importance(self) -> dict[str, float]:
        """Each column's share of the trees of the set that split on it.

        Returns
        -------
        dict
            Column name -> share of the trees (0 to 1).
        """
        return {name: n / self.count for name, n in self.feature_counts().items()}


class _Canonical:
    """The count and the enumeration of canonical consistent trees.

    A subproblem is a *family* of row masks and a depth: the canonical trees that are
    consistent on every set of the family and whose every split separates the rows of each set
    that reach it. One set is the usual subproblem; families come from the rule against equal
    children: the pairs ``(T, T)`` to take out of a split's ``T0 x T1`` are the trees valid on
    both children's families at once.
    """

    def __init__(
        self,
        B: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        columns: dict[str, frozenset[int]],
        to_tree: Any,
        deadline: float | None,
    ) -> None:
        self.all_rows = (1 << len(y)) - 1
        self.features = [row_mask(B[:, j] != 0) for j in range(B.shape[1])]
        self.classes = [row_mask(y == k) for k in range(n_classes)]
        self.columns = columns
        self.to_tree = to_tree
        self.deadline = deadline
        self.memo: dict[tuple[frozenset[int], int, frozenset[int]], Counter] = {}

    def pure(self, family: frozenset[int]) -> int | None:
        """The one class of every row of the family, else None."""
        rows = 0
        for mask in family:
            rows |= mask
        return next((k for k, mask in enumerate(self.classes) if rows & ~mask == 0), None)

    def splits(
        self, family: frozenset[int], avoided: frozenset[int]
    ) -> Iterator[tuple[int, frozenset[int], frozenset[int]]]:
        """The features that separate every set of the family, with the two families."""
        for feature, mask in enumerate(self.features):
            if feature in avoided or any(not (a & mask and a & ~mask) for a in family):
                continue
            yield (
                feature,
                frozenset(a & ~mask for a in family),
                frozenset(a & mask for a in family),
            )

    def histogram(self, family: frozenset[int], depth: int, avoided: frozenset[int]) -> Counter:
        """Leaves -> number of canonical trees of depth <= ``depth`` valid on the family."""
        key = (family, depth, avoided)
        found = self.memo.get(key)
        if found is not None:
            return found
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise TimeUp
        histogram: Counter = Counter()
        if self.pure(family) is not None:
            histogram[1] = 1  # a pure family has no other canonical tree: its splits' sides
            # are pure of one class, so their only trees are two equal leaves
        elif depth > 0:
            for _, low, high in self.splits(family, avoided):
                left = self.histogram(low, depth - 1, avoided)
                right = self.histogram(high, depth - 1, avoided)
                if not left or not right:
                    continue
                for a, n in left.items():
                    for b, m in right.items():
                        histogram[a + b] += n * m
                for a, n in self.histogram(low | high, depth - 1, avoided).items():
                    histogram[2 * a] -= n  # the pairs of equal children
        histogram = Counter({k: n for k, n in histogram.items() if n})
        self.memo[key] = histogram
        return histogram

    def nested(self, family: frozenset[int], depth: int) -> Iterator[Any]:
        """Every canonical tree valid on the family, as nested tuples (feature, low, high) /
        class."""
        klass = self.pure(family)
        if klass is not None:
            yield klass
            return
        if depth == 0:
            return
        none = frozenset()
        for feature, low, high in self.splits(family, none):
            if not self.histogram(low, depth - 1, none) or not self.histogram(
                high, depth - 1, none
            ):
                continue
            for left in self.nested(low, depth - 1):
                for right in self.nested(high, depth - 1):
                    if left != right:
                        yield (feature, left, right)


def minimum_depth_trees(
    X: Any,
    y: Any,
    max_depth: int | None = None,
    *,
    time_limit: float | None = None,
    feature_names: list[str] | None = None,
    **params: Any,
) -> ConsistentTrees:
    """Every tree of the minimum depth that classifies every training row correctly, each once
    up to the changes that keep its function on the training rows.

    The trees are over the prepared binary features (``x > t``; identical and complementary
    features merged) and in *canonical form*:

    1. a split's ``no`` side is its feature false, its ``yes`` side true (a split on the
       negated test, children swapped, is the same tree);
    2. every split sends training rows both ways: a part that no training row reaches is
       pruned (the split is replaced by the side the rows take);
    3. no split has two equal subtrees (it is replaced by that subtree: the same function).

    Every consistent tree of depth <= ``max_depth`` reduces to one such tree, by applying 2 and
    3 from the leaves up, and the set holds each of them once: leaves then hold the class of
    their rows. The count is exact, by dynamic programming over subproblems (the pairs of equal
    children counted and subtracted), and so is the count of trees that split on each column.

    Parameters
    ----------
    X : array-like, DataFrame or Dataset
        As for :meth:`satdt.OptimalTreeClassifier.fit`, or a table read by
        :func:`satdt.read_csv` (its labels are used: pass ``y=None``).
    y : array-like or None
        The labels.
    max_depth : int, optional
        The depth budget (default: the minimum depth, found first by the depth search).
    time_limit : float, optional
        Seconds for the count; past it a :class:`~satdt.core.errors.SatdtError` says so.
    feature_names : list of str, optional
        Column names.
    **params : dict
        Other parameters of :class:`~satdt.OptimalTreeClassifier` that shape the data:
        ``max_thresholds``, ``resolve``, ``max_memory_mb``, ``missing``.

    Returns
    -------
    ConsistentTrees
        ``count``, ``optimum`` (the minimum depth), ``histogram()`` (by nodes), ``trees()``
        (lazily, with a cap), ``feature_counts()`` and ``feature_importance()``.

    Raises
    ------
    InfeasibleError
        If no tree of depth <= ``max_depth`` is consistent.
    SatdtError
        If the count takes longer than ``time_limit``.
    """
    from .tree import OptimalTreeClassifier

    if time_limit is not None and (
        isinstance(time_limit, bool) or not isinstance(time_limit, int | float) or time_limit <= 0
    ):
        raise ParameterError(
            f"time_limit must be None or a number > 0 (seconds), got {time_limit!r}"
        )
    started = time.perf_counter()
    if max_depth is not None:  # its rule checked before the search
        OptimalTreeClassifier(objective="depth", max_depth=max_depth, **params)._resolve()
    dataset = dataset_of(X, y, feature_names)
    depth_search = OptimalTreeClassifier(objective="depth", **params)
    optimum = depth_search.fit_dataset(dataset).tree_.depth
    if max_depth is None:
        max_depth = optimum
    elif max_depth < optimum:
        raise InfeasibleError(
            f"no tree of depth <= {max_depth} classifies every training row correctly (the "
            f"minimum is {optimum}); raise max_depth or leave it out"
        )
    estimator = OptimalTreeClassifier(objective="depth", max_depth=max_depth, **params)
    data = prepared_without_search(estimator, dataset, None)
    view = data.binary()
    columns = columns_by_name(view.column, data.feature_names, set(data.schema.indicator))
    deadline = None if time_limit is None else started + time_limit

    def to_tree(nested: Any) -> Tree:
        user = user_tree(data, view, nested)
        if (user.predict_index(data.X) != data.y).any() or user.depth > max_depth:
            raise RuntimeError("internal error: an enumerated tree is not consistent")
        reached = user.counts.sum(axis=1) > 0
        if not reached.all() or _equal_children(nested):
            raise RuntimeError("internal error: an enumerated tree is not canonical")
        return user

    solver = _Canonical(view.B, data.y, data.n_classes, columns, to_tree, deadline)
    try:
        trees = ConsistentTrees(solver, int(max_depth), int(optimum))
    except TimeUp:
        raise SatdtError(
            f"counting the consistent trees of depth <= {max_depth} took more than time_limit="
            f"{time_limit:g} s: give it more time, or fewer thresholds (max_thresholds)"
        ) from None
    solver.deadline = None  # the count is done: the enumeration and the shares are not timed
    if trees.count == 0:
        raise RuntimeError("internal error: the depth search's tree is missing from the count")
    return trees


def _equal_children(nested: Any) -> bool:
    """Whether some split of a nested tree has two equal subtrees."""
    if not isinstance(nested, tuple):
        return False
    _, low, high = nested
    return low == high or _equal_children(low) or _equal_children(high)
