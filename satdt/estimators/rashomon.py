"""The Rashomon set: every tree whose objective is within ``epsilon`` of the optimum.

Many trees are often equally good, and which one a search returns is an accident. The
Rashomon set of depth-``d`` trees for the objective

    errors / total weight + leaf_penalty * leaves

(the error objective with its leaf penalty, as :class:`~satdt.OptimalTreeClassifier` has it)
holds every tree of depth at most ``d`` over the prepared binary features whose objective is at
most the optimum plus ``epsilon``: its splits (each separating the rows that reach it: a split
that sends every row one way is not a tree of the set) and the class of each leaf (any class,
not only the majority: a leaf of another class belongs to the set when the objective allows it).

satdt counts it exactly by dynamic programming over the subproblems the paths define, in the
manner of TreeFARMS (Xin, Zhong, Chen, Takagi, Seltzer & Rudin, NeurIPS 2022) over satdt's own
bounds: each subproblem (the rows reaching a node, the depth left) keeps its optimum and the
histogram of its subtrees' ``(errors, leaves)`` up to its optimum plus ``epsilon`` — a subtree
that exceeds its own optimum by more than ``epsilon`` cannot belong to a tree of the set, since
the rest of the tree costs at least its optimum. A split's histogram is the product of its
children's, cut at the node's bound. From the histograms the set is enumerated lazily and
sampled uniformly without being listed, and each feature's share of the set is exact (the
histogram of the trees that avoid the feature, subtracted from the whole).

Rows and their weights: masks of rows are Python integers (one bit per prepared row); a
weighted count is a sum of popcounts over the bit planes of the integer weights (a row's
weight written in binary), so it stays exact and fast; non-integer weights (``class_weight``)
are scaled to integers when they are multiples of a common unit, else refused.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import InfeasibleError, ParameterError
from ..models.tree import Tree

__all__ = ["RashomonSet", "minimum_size_trees", "rashomon_set"]

# A subtree's key in a histogram: (weighted errors, in integer weight units; leaves).
_Key = tuple[int, int]
# Relative tolerance on the bound (the objective of trees is compared in floating point).
_TOL = 1e-9


@dataclass
class _Node:
    """A subproblem: its optimum, its histogram and how its subtrees are made."""

    optimum: float
    histogram: Counter  # _Key -> number of subtrees
    leaves: list[tuple[int, _Key]]  # (class, key) of each admissible leaf
    splits: list[tuple[int, int, int]]  # (feature, left mask, right mask)


class RashomonSet:
    """Every tree within ``epsilon`` of the optimum (see the module notes), as
    :func:`~satdt.rashomon_set` and :func:`~satdt.minimum_size_trees` return it.

    Its attributes: ``optimum``, the least objective (errors / total weight + leaf_penalty *
    leaves; nodes for :func:`~satdt.minimum_size_trees`); ``epsilon``, the slack (the set holds the
    trees of objective at most ``optimum + epsilon``); ``count``, the number of trees in the
    set (exact, a Python integer).

    Parameters
    ----------
    solver : object
        The dynamic programme over the prepared data (internal).
    root : int
        The mask of every row.
    depth : int
        The depth budget.
    epsilon : float
        The slack.
    unit : str, optional
        ``"nodes"``: the optimum and the histogram count nodes.
    """

    def __init__(
        self, solver: _Solver, root: int, depth: int, epsilon: float, unit: str | None = None
    ) -> None:
        self._solver = solver
        self._root = root
        self._depth = depth
        self._in_nodes = unit == "nodes"
        node = solver.node(root, depth, frozenset())
        self.optimum = self._shown(node.optimum, node.histogram)
        self.epsilon = epsilon
        self._bound = node.optimum + epsilon + _TOL * max(1.0, node.optimum)
        self._histogram = {k: c for k, c in node.histogram.items() if solver.cost(k) <= self._bound}
        self.count = sum(self._histogram.values())

    def _shown(self, optimum: float, histogram: Counter) -> float:
        if not self._in_nodes:
            return optimum
        leaves = [leaves for (errors, leaves) in histogram if errors == 0]
        return 2 * min(leaves) - 1 if leaves else math.nan

    def histogram(self) -> dict[float, int]:
        """How many trees of the set reach each objective value, best first.

        Returns
        -------
        dict
            Objective value (nodes for :func:`~satdt.minimum_size_trees`) -> number of trees.
        """
        values: Counter = Counter()
        for key, count in self._histogram.items():
            value = 2 * key[1] - 1 if self._in_nodes else round(self._solver.cost(key), 12)
            values[value] += count
        return dict(sorted(values.items()))

    def trees(self, limit: int | None = None) -> Iterator[Tree]:
        """The trees of the set, best objective first, lazily.

        Parameters
        ----------
        limit : int, optional
            At most this many.

        Yields
        ------
        Tree
            Each tree, checked against the data and the bound.
        """
        keys = sorted(self._histogram, key=self._solver.cost)
        produced = 0
        for key in keys:
            for nested in self._solver.nested(self._root, self._depth, key):
                if limit is not None and produced >= limit:
                    return
                produced += 1
                yield self._solver.tree(nested)

    def sample(self, n: int, random_state: int | None = None) -> list[Tree]:
        """Draw trees uniformly from the set, with replacement.

        Parameters
        ----------
        n : int
            How many.
        random_state : int, optional
            The seed.

        Returns
        -------
        list of Tree
            The trees drawn, each checked against the data and the bound.
        """
        rng = random.Random(random_state)
        keys = list(self._histogram)
        weights = [self._histogram[k] for k in keys]
        drawn = []
        for _ in range(n):
            key = rng.choices(keys, weights)[0] if len(keys) > 1 else keys[0]
            drawn.append(self._solver.tree(self._solver.draw(self._root, self._depth, key, rng)))
        return drawn

    def feature_importance(self) -> dict[str, float]:
        """Each column's share of the trees of the set that split on it.

        Exact: the trees that avoid every binary feature of the column are counted and
        subtracted from all.

        Returns
        -------
        dict
            Column name -> share of the trees (0 to 1).
        """
        shares = {}
        for name, features in self._solver.columns.items():
            without = self._solver.node(self._root, self._depth, features)
            avoiding = sum(
                count
                for key, count in without.histogram.items()
                if self._solver.cost(key) <= self._bound
            )
            shares[name] = (self.count - avoiding) / self.count if self.count else 0.0
        return shares

    def model_class_reliance(self) -> dict[str, tuple[float, float]]:
        """Each column's model class reliance: the least and the most that a tree of the set
        relies on it (Fisher, Rudin & Dominici, "All Models are Wrong, but Many are Useful",
        JMLR 2019).

        A tree's *reliance* on a column is how much its weighted error rate grows when the
        column is drawn independently of the others from its own distribution in the data:
        ``e_switch - e_orig``, where ``e_switch`` is the error over every pair of rows ``(i,
        j)`` of row ``i`` with its column replaced by row ``j``'s (weights ``w_i w_j``; the
        pairs ``i = j`` included, so it is the error under the product of the column's
        distribution and the others'), and ``e_orig`` the error rate on the rows (Fisher et al.'s
        difference form, their section 3 with all ``n^2`` pairs). It is exact per tree, and its
        range over the set is exact too: the paired rows are a weighted data set of their own,
        so a tree's ``e_switch`` adds up over its leaves, and a dynamic programme over the
        subtrees of the set (the rows and the paired rows reaching a node, the depth left, the
        subtree's ``(errors, leaves)``) keeps its least and its most.

        Returns
        -------
        dict
            Column name -> ``(least, most)`` reliance over the trees of the set.
        """
        solver = self._solver
        ranges = {}
        for name, features in solver.columns.items():
            switched = _Switched(solver, sorted(features))
            lows, highs = [], []
            for key in self._histogram:
                least, most = switched.extremes(
                    solver.all_rows, switched.all_pairs, self._depth, key
                )
                error = key[0] / switched.row_total
                lows.append(least / switched.pair_total - error)
                highs.append(most / switched.pair_total - error)
            ranges[name] = (min(lows), max(highs))
        return ranges


class _Switched:
    """The pairs of rows ``(i, j)``: row ``i`` with one column's binary features taken from row
    ``j``, weight ``w_i w_j``, label ``y_i`` (rows ``j`` grouped by their value of the column),
    as bit masks, with the least and the most error of the set's subtrees on them."""

    def __init__(self, solver: _Solver, column_features: list[int]) -> None:
        self.solver = solver
        B, y, units = solver.B, solver.y, solver.units
        codes, group = np.unique(B[:, column_features], axis=0, return_inverse=True)
        code_units = [0] * len(codes)
        for g, u in zip(group.ravel().tolist(), units.tolist(), strict=True):
            code_units[g] += int(u)
        pairs = np.repeat(B, len(codes), axis=0)
        pairs[:, column_features] = np.tile(codes, (len(B), 1))
        weight = np.array([int(u) * c for u in units.tolist() for c in code_units])
        label = np.repeat(y, len(codes))
        self.features = [row_mask(pairs[:, f] != 0) for f in range(B.shape[1])]
        self.planes = [
            [
                row_mask((label == k) & ((weight >> b) & 1 == 1))
                for b in range(int(weight.max()).bit_length())
            ]
            for k in range(solver.n_classes)
        ]
        self.all_pairs = (1 << len(label)) - 1
        self.row_total = int(units.sum())
        self.pair_total = self.row_total**2
        self.memo: dict[tuple[int, int, int, _Key], tuple[int, int]] = {}

    def errors(self, pairs: int, klass: int) -> int:
        """The weight of the pairs in the mask whose label is not ``klass``."""
        return sum(
            sum((pairs & plane).bit_count() << b for b, plane in enumerate(planes))
            for k, planes in enumerate(self.planes)
            if k != klass
        )

    def extremes(self, rows: int, pairs: int, depth: int, key: _Key) -> tuple[int, int]:
        """The least and the most error on the pairs of the set's subtrees of this key."""
        memo_key = (rows, pairs, depth, key)
        found = self.memo.get(memo_key)
        if found is not None:
            return found
        least, most = math.inf, -math.inf
        for option, _ in self.solver._options(rows, depth, key):
            if option[0] == "leaf":
                low = high = self.errors(pairs, option[1])
            else:
                _, feature, left, right, left_key, right_key = option
                mask = self.features[feature]
                a = self.extremes(left, pairs & ~mask, depth - 1, left_key)
                b = self.extremes(right, pairs & mask, depth - 1, right_key)
                low, high = a[0] + b[0], a[1] + b[1]
            least, most = min(least, low), max(most, high)
        self.memo[memo_key] = (least, most)
        return least, most


class _Solver:
    """The dynamic programme over subproblems (masks of rows, depth left, features avoided)."""

    def __init__(
        self,
        B: np.ndarray,
        y: np.ndarray,
        units: np.ndarray,
        n_classes: int,
        unit: float,
        total: float,
        leaf_penalty: float,
        epsilon: float,
        columns: dict[str, frozenset[int]],
        to_tree: Any,
    ) -> None:
        n = len(y)
        self.n_classes = n_classes
        self.columns = columns
        self.to_tree = to_tree
        self.scale = unit / total  # objective per unit of integer weight
        self.leaf_penalty = leaf_penalty
        self.epsilon = epsilon
        self.all_rows = (1 << n) - 1
        self.B, self.y, self.units = B, y, units  # the rows, for model reliance (_Switched)
        self.features = [row_mask(B[:, j] != 0) for j in range(B.shape[1])]
        # per class, the bit planes of the rows' integer weights: plane b holds the rows of
        # that class whose weight has bit b set
        planes = int(units.max()).bit_length() if n else 0
        self.planes = [
            [row_mask((y == k) & ((units >> b) & 1 == 1)) for b in range(planes)]
            for k in range(n_classes)
        ]
        self.memo: dict[tuple[int, int, frozenset[int]], _Node] = {}

    def cost(self, key: _Key) -> float:
        errors, leaves = key
        return errors * self.scale + self.leaf_penalty * leaves

    def class_units(self, rows: int) -> list[int]:
        return [
            sum((rows & plane).bit_count() << b for b, plane in enumerate(planes))
            for planes in self.planes
        ]

    def node(self, rows: int, depth: int, avoided: frozenset[int]) -> _Node:
        memo_key = (rows, depth, avoided)
        found = self.memo.get(memo_key)
        if found is not None:
            return found
        units = self.class_units(rows)
        total = sum(units)
        leaf_keys = [(k, (total - units[k], 1)) for k in range(self.n_classes)]
        optimum = min(self.cost(key) for _, key in leaf_keys)
        children = []
        if depth > 0:
            for feature, mask in enumerate(self.features):
                if feature in avoided:
                    continue
                right = rows & mask
                left = rows & ~mask
                if not right or not left:
                    continue
                low, high = (
                    self.node(left, depth - 1, avoided),
                    self.node(right, depth - 1, avoided),
                )
                children.append((feature, left, right, low, high))
                optimum = min(optimum, low.optimum + high.optimum)
        bound = optimum + self.epsilon + _TOL * max(1.0, optimum)
        histogram: Counter = Counter()
        leaves = [(k, key) for k, key in leaf_keys if self.cost(key) <= bound]
        for _, key in leaves:
            histogram[key] += 1
        splits = []
        for feature, left, right, low, high in children:
            if low.optimum + high.optimum > bound:
                continue
            splits.append((feature, left, right))
            for left_key, left_count in low.histogram.items():
                left_cost = self.cost(left_key)
                if left_cost + high.optimum > bound:
                    continue
                for right_key, right_count in high.histogram.items():
                    key = (left_key[0] + right_key[0], left_key[1] + right_key[1])
                    if self.cost(key) <= bound:
                        histogram[key] += left_count * right_count
        node = _Node(optimum, histogram, leaves, splits)
        self.memo[memo_key] = node
        return node

    def _options(self, rows: int, depth: int, key: _Key) -> Iterator[tuple[Any, int]]:
        """The ways to build a subtree of this key: leaves, then splits with a key pair,
        each with the number of subtrees it makes."""
        node = self.node(rows, depth, frozenset())
        for k, leaf_key in node.leaves:
            if leaf_key == key:
                yield ("leaf", k), 1
        for feature, left, right in node.splits:
            low = self.node(left, depth - 1, frozenset())
            high = self.node(right, depth - 1, frozenset())
            for left_key, left_count in low.histogram.items():
                right_key = (key[0] - left_key[0], key[1] - left_key[1])
                right_count = high.histogram.get(right_key, 0)
                if right_count:
                    yield (
                        ("split", feature, left, right, left_key, right_key),
                        (left_count * right_count),
                    )

    def nested(self, rows: int, depth: int, key: _Key) -> Iterator[Any]:
        """Every subtree of this key, as nested tuples (feature, left, right) / class."""
        for option, _ in self._options(rows, depth, key):
            if option[0] == "leaf":
                yield option[1]
                continue
            _, feature, left, right, left_key, right_key = option
            for low in self.nested(left, depth - 1, left_key):
                for high in self.nested(right, depth - 1, right_key):
                    yield (feature, low, high)

    def draw(self, rows: int, depth: int, key: _Key, rng: random.Random) -> Any:
        """One subtree of this key, uniformly."""
        options = list(self._options(rows, depth, key))
        option = rng.choices([o for o, _ in options], [c for _, c in options])[0]
        if option[0] == "leaf":
            return option[1]
        _, feature, left, right, left_key, right_key = option
        return (
            feature,
            self.draw(left, depth - 1, left_key, rng),
            self.draw(right, depth - 1, right_key, rng),
        )

    def tree(self, nested: Any) -> Tree:
        return self.to_tree(nested)


def columns_by_name(
    column: np.ndarray, names: list[str], indicator: set[int]
) -> dict[str, frozenset]:
    """The binary features of each user column (a categorical column's indicators together)."""
    columns: dict[str, set[int]] = {}
    for feature, design in enumerate(column.tolist()):
        name = names[design]
        if design in indicator:
            name = name.split(" == ")[0] if " == " in name else name.removesuffix(" is missing")
        columns.setdefault(name, set()).add(feature)
    return {name: frozenset(features) for name, features in columns.items()}


def row_mask(flags: np.ndarray) -> int:
    """A boolean vector as a Python integer, bit i for row i."""
    packed = np.packbits(flags.astype(bool), bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def _integer_units(weight: np.ndarray) -> tuple[np.ndarray, float]:
    """Row weights as integers times one unit: ``(units, unit)``."""
    rounded = np.rint(weight)
    if np.allclose(weight, rounded, rtol=0, atol=1e-9):
        return rounded.astype(np.int64), 1.0
    for denominator in (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 25, 32, 50, 64, 100, 1000):
        scaled = weight * denominator
        if np.allclose(scaled, np.rint(scaled), rtol=0, atol=1e-6):
            return np.rint(scaled).astype(np.int64), 1.0 / denominator
    raise ParameterError(
        "the Rashomon set counts weighted errors exactly, so the row weights (sample_weight "
        "times class_weight) must be multiples of a common unit such as 1/100; got weights "
        f"like {weight[:3].tolist()}: round them"
    )


def rashomon_set(
    X: Any,
    y: Any,
    max_depth: int,
    *,
    epsilon: float,
    leaf_penalty: float = 0.0,
    sample_weight: Any = None,
    feature_names: list[str] | None = None,
    **params: Any,
) -> RashomonSet:
    """Every tree of depth at most ``max_depth`` whose objective (errors / total weight +
    ``leaf_penalty`` * leaves) is within ``epsilon`` of the optimum.

    Parameters
    ----------
    X : array-like, DataFrame or Dataset
        As for :meth:`satdt.OptimalTreeClassifier.fit`, or a table read by
        :func:`satdt.read_csv` (its labels are used: pass ``y=None``).
    y : array-like or None
        The labels.
    max_depth : int
        The depth budget of the trees.
    epsilon : float
        The slack, in the objective's unit (a fraction of the total weight): 0 gives every
        optimal tree.
    leaf_penalty : float, default=0.0
        The cost of a leaf, as in the estimator.
    sample_weight : array-like, optional
        Row weights (multiples of a common unit such as 1/100: counts are exact).
    feature_names : list of str, optional
        Column names.
    **params : dict
        Other parameters of :class:`~satdt.OptimalTreeClassifier` that shape the data:
        ``max_thresholds``, ``class_weight``, ``max_memory_mb``, ``missing``.

    Returns
    -------
    RashomonSet
        The set: ``count``, ``optimum``, ``histogram()``, ``trees()``, ``sample()``,
        ``feature_importance()``.
    """
    from .tree import OptimalTreeClassifier

    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float) or not epsilon >= 0:
        raise ParameterError(f"epsilon must be a number >= 0, got {epsilon!r}")
    if not math.isfinite(epsilon):
        raise ParameterError(f"epsilon must be finite, got {epsilon!r}")
    estimator = OptimalTreeClassifier(
        objective="error", max_depth=max_depth, leaf_penalty=leaf_penalty, **params
    )
    data = prepared_without_search(estimator, dataset_of(X, y, feature_names), sample_weight)
    return _build(data, int(max_depth), float(epsilon), float(leaf_penalty), None)


def minimum_size_trees(
    X: Any,
    y: Any,
    max_depth: int | None = None,
    *,
    feature_names: list[str] | None = None,
    **params: Any,
) -> RashomonSet:
    """Every tree with the fewest nodes that classifies every training row correctly.

    At the minimum depth, or among the trees of depth at most ``max_depth``: the optimal
    trees of ``objective="size"``, counted and enumerated exactly. Such a tree has no
    redundant part (a split whose sides compute the same function would make it larger), so
    the set holds trees that differ as functions on the training rows' binary features.
    ``optimum`` and ``histogram()`` are in nodes.

    Parameters
    ----------
    X : array-like, DataFrame or Dataset
        As for :meth:`satdt.OptimalTreeClassifier.fit`, or a table read by
        :func:`satdt.read_csv` (its labels are used: pass ``y=None``).
    y : array-like or None
        The labels.
    max_depth : int, optional
        The depth budget (default: the minimum depth, found first by the depth search).
    feature_names : list of str, optional
        Column names.
    **params : dict
        Other parameters of :class:`~satdt.OptimalTreeClassifier` that shape the data:
        ``max_thresholds``, ``resolve``, ``max_memory_mb``, ``missing``.

    Returns
    -------
    RashomonSet
        Every minimum-size tree, as for :func:`~satdt.rashomon_set`.
    """
    from .tree import OptimalTreeClassifier

    dataset = dataset_of(X, y, feature_names)
    if max_depth is None:
        depth_search = OptimalTreeClassifier(objective="depth", **params)
        max_depth = depth_search.fit_dataset(dataset).tree_.depth
    estimator = OptimalTreeClassifier(objective="size", max_depth=max_depth, **params)
    data = prepared_without_search(estimator, dataset, None)
    trees = _build(data, int(max_depth), 0.0, None, "nodes")
    if math.isnan(trees.optimum):
        raise InfeasibleError(
            f"no tree of depth <= {max_depth} classifies every training row correctly; raise "
            "max_depth or leave it out (the minimum depth is then found first)"
        )
    return trees


def user_tree(data: Any, view: Any, nested: Any) -> Tree:
    """A nested tree over the prepared binary features, on the user's columns, with counts."""

    def with_thresholds(node: Any) -> Any:
        if not isinstance(node, tuple):
            return int(node)
        feature, low, high = node
        return (feature, 0.5, with_thresholds(low), with_thresholds(high))

    tree = Tree.from_nested(with_thresholds(nested), classes=np.arange(data.n_classes))
    mapped = tree.map_features(
        view.column, view.threshold, data.feature_names, list(data.schema.indicator), view.missing
    )
    mapped.classes = data.classes
    return data.named(mapped).with_counts(data.X, data.y, data.weight)


def dataset_of(X: Any, y: Any, feature_names: Any) -> Any:
    """The table to learn from: a Dataset as given, else validated as fit does."""
    from ..data import Dataset
    from ..prepare.validate import validate

    if isinstance(X, Dataset):  # a table read by satdt.read_csv: its schema and labels
        return X
    return validate(X, y, feature_names=feature_names, estimator="rashomon_set")


def prepared_without_search(estimator: Any, dataset: Any, sample_weight: Any) -> Any:
    """The estimator's checks and data preparation, without a search."""
    estimator._resolve()
    return estimator._prepare(dataset, sample_weight, None, None)


def _build(
    data: Any, max_depth: int, epsilon: float, leaf_penalty: float | None, unit_name: str | None
) -> RashomonSet:
    """The set over the prepared data. ``leaf_penalty=None``: the fewest leaves among the
    trees without error (a leaf costs less than half the least error spread over every leaf
    of the depth)."""
    view = data.binary()
    units, unit = _integer_units(data.weight)
    total = float(data.weight.sum())
    if leaf_penalty is None:
        leaf_penalty = unit / total / 2 ** (max_depth + 1)

    def to_tree(nested: Any) -> Tree:
        # not simplified: a split whose two leaves predict one class is a tree of its own
        user = user_tree(data, view, nested)
        wrong = user.predict_index(data.X) != data.y
        objective = float(data.weight[wrong].sum()) / total + leaf_penalty * user.n_leaves
        if objective > bound[0]:
            raise RuntimeError(
                f"internal error: a tree of the Rashomon set has objective {objective}, over "
                f"the bound {bound[0]}"
            )
        return user

    solver = _Solver(
        view.B,
        data.y,
        units,
        data.n_classes,
        unit,
        total,
        float(leaf_penalty),
        float(epsilon),
        columns_by_name(view.column, data.feature_names, set(data.schema.indicator)),
        to_tree,
    )
    bound = [math.inf]  # the set's bound, once known: every tree built is checked against it
    rashomon = RashomonSet(solver, solver.all_rows, max_depth, epsilon, unit_name)
    bound[0] = rashomon._bound
    return rashomon
