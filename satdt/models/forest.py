"""Tree ensembles as flat arrays: the models a born-again tree reproduces.

A :class:`Forest` holds the trees of a random forest, of extremely randomised trees or of a
two-class gradient boosting, one after the other in flat arrays (each tree in preorder,
``roots[t]`` its first node; children are indices into the same arrays). Internal node
``i`` sends ``x[feature[i]] <= threshold[i]`` left, as :class:`satdt.models.tree.Tree`,
scikit-learn and BA-Trees do. What a leaf holds, and how the trees decide together, is the
forest's ``vote``:

``"hard"``
    Each leaf holds one class (``value`` one-hot); each tree casts one vote and the class
    with most votes wins, ties going to the lowest class index: BA-Trees' rule
    (``RandomForest::majorityClass`` in ``../shared/peers/ba-trees/src``).
``"soft"``
    Each leaf holds class probabilities; they are added up tree by tree, divided by the
    number of trees, and the first largest wins: scikit-learn's ``predict`` of a random
    forest, to the last rounding (the same additions in the same order).
``"sum"``
    Each leaf holds one number; the decision function is their sum, tree by tree, and
    class 1 wins where it is ``>= 0``: scikit-learn's two-class gradient boosting
    (``GradientBoostingClassifier.predict``), whose initial prediction is a first tree of
    one leaf and whose leaves hold ``learning_rate * value``, the very products
    scikit-learn adds.

The forest's **cell grid** (:meth:`Forest.thresholds`): per feature, the sorted distinct
thresholds its trees test; ``n`` thresholds cut the feature into ``n + 1`` *levels*, level
``i`` the interval ``(t[i - 1], t[i]]``. Every point of a cell (one level per feature) meets
the same leaves, so the forest decides one class per cell (:meth:`Forest.cell_classes`); a
born-again tree (Vidal & Schiffer, "Born-Again Tree Ensembles", ICML 2020, Section 3) is a
tree that decides like the forest on every cell.

Reading and writing BA-Trees' text format and importing scikit-learn's ensembles live in
:mod:`satdt.models.forest_io`; checking that a tree decides like a forest everywhere in
:mod:`satdt.models.faithful`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .tree import LEAF, Tree

VOTES = ("hard", "soft", "sum")
#: The most cells :meth:`Forest.cell_classes` tabulates (int8 classes plus float64 sums).
MAX_CELLS = 2**26


class Forest:
    """A tree ensemble: its trees as flat arrays and how they vote (see the module notes).

    Parameters
    ----------
    feature, threshold, left, right : array-like of shape (n_nodes,)
        Per-node arrays of all trees, each tree in preorder; leaves have ``feature == -1``,
        ``left == right == -1`` and a NaN threshold; children are global node indices.
    value : array-like of shape (n_nodes, n_values)
        What each leaf holds (rows of internal nodes are zero): one-hot classes (``"hard"``,
        ``n_values`` the number of classes), class probabilities (``"soft"``), or one number
        (``"sum"``, ``n_values == 1``).
    roots : array-like of int of shape (n_trees,)
        The root of each tree; tree ``t`` holds the nodes ``roots[t]`` to
        ``roots[t + 1] - 1``.
    n_features : int
        Columns of the inputs.
    classes : array-like of shape (n_classes,)
        The labels, indexed by class index.
    vote : {"hard", "soft", "sum"}
        How the trees decide together.
    feature_names : sequence of str, optional
        Names of the input columns (default ``f0``, ``f1``, ...).

    Raises
    ------
    ValueError
        When the arrays do not describe trees (the message says which node is wrong).
    """

    kind = "forest"

    def __init__(
        self,
        feature: Sequence[int] | np.ndarray,
        threshold: Sequence[float] | np.ndarray,
        left: Sequence[int] | np.ndarray,
        right: Sequence[int] | np.ndarray,
        value: np.ndarray,
        roots: Sequence[int] | np.ndarray,
        n_features: int,
        classes: Sequence[Any] | np.ndarray,
        vote: str,
        feature_names: Sequence[str] | None = None,
    ) -> None:
        self.n_features = int(n_features)
        self.classes = np.asarray(classes)
        self.vote = vote
        self.feature_names = (
            list(feature_names)
            if feature_names is not None
            else [f"f{c}" for c in range(self.n_features)]
        )
        self._set_nodes(feature, threshold, left, right, value, roots)
        self._check()

    def _set_nodes(
        self,
        feature: Sequence[int] | np.ndarray,
        threshold: Sequence[float] | np.ndarray,
        left: Sequence[int] | np.ndarray,
        right: Sequence[int] | np.ndarray,
        value: np.ndarray,
        roots: Sequence[int] | np.ndarray,
    ) -> None:
        """Set the nodes' arrays (see the class notes), unchecked."""
        self.feature = np.ascontiguousarray(feature, dtype=np.int64)
        self.threshold = np.ascontiguousarray(threshold, dtype=np.float64)
        self.left = np.ascontiguousarray(left, dtype=np.int64)
        self.right = np.ascontiguousarray(right, dtype=np.int64)
        self.value = np.ascontiguousarray(value, dtype=np.float64).reshape(len(self.feature), -1)
        self.roots = np.ascontiguousarray(roots, dtype=np.int64)

    # ------------------------------------------------------------------ validation
    def _check(self) -> None:
        """Refuse arrays that are not trees over ``n_features`` columns with this vote."""
        n = len(self.feature)
        for name in ("threshold", "left", "right"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"forest: {name} has {len(getattr(self, name))} nodes, not {n}")
        if self.vote not in VOTES:
            raise ValueError(f"forest: vote must be one of {VOTES}, got {self.vote!r}")
        n_classes = len(self.classes)
        want = 1 if self.vote == "sum" else n_classes
        if self.value.shape[1] != want or (self.vote == "sum" and n_classes != 2):
            raise ValueError(
                f"forest: a {self.vote!r} vote needs {want} value(s) per leaf and "
                f"{'2' if self.vote == 'sum' else 'at least 1'} classes; got "
                f"{self.value.shape[1]} values and {n_classes} classes"
            )
        if len(self.feature_names) != self.n_features:
            raise ValueError(
                f"forest: {len(self.feature_names)} feature names for {self.n_features} features"
            )
        if len(self.roots) == 0 or self.roots[0] != 0 or np.any(np.diff(self.roots) <= 0):
            raise ValueError("forest: roots must start at 0 and increase (one per tree)")
        if self.roots[-1] >= n:
            raise ValueError("forest: the last tree has no node")
        ends = np.append(self.roots[1:], n)
        for t, (start, end) in enumerate(zip(self.roots.tolist(), ends.tolist(), strict=True)):
            self._check_tree(t, start, end)

    def _check_tree(self, t: int, start: int, end: int) -> None:
        """Tree ``t`` (nodes ``start .. end - 1``): each node but the root has one parent
        before it, inside the tree; splits test a known feature at a finite threshold."""
        parents = np.zeros(end - start, dtype=np.int64)
        for i in range(start, end):
            f, lo, hi = int(self.feature[i]), int(self.left[i]), int(self.right[i])
            where = f"forest: tree {t}, node {i - start}"
            if f == LEAF:
                if lo != -1 or hi != -1:
                    raise ValueError(f"{where}: a leaf has children")
                if self.vote == "hard" and not _one_hot(self.value[i]):
                    raise ValueError(f"{where}: a hard vote's leaf must hold one class")
                continue
            if not 0 <= f < self.n_features:
                raise ValueError(f"{where}: feature {f} outside 0..{self.n_features - 1}")
            if not math.isfinite(self.threshold[i]):
                raise ValueError(f"{where}: threshold {self.threshold[i]} is not finite")
            for child in (lo, hi):
                if not i < child < end:
                    raise ValueError(f"{where}: child {child - start} is not after it in the tree")
                parents[child - start] += 1
        if np.any(parents[1:] != 1):
            orphan = int(np.flatnonzero(parents[1:] != 1)[0]) + 1
            raise ValueError(f"forest: tree {t}, node {orphan} has {parents[orphan]} parents")

    # ------------------------------------------------------------------ shape
    @property
    def n_trees(self) -> int:
        """Number of trees."""
        return len(self.roots)

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return len(self.classes)

    @property
    def n_nodes(self) -> int:
        """Nodes of all trees together."""
        return len(self.feature)

    def tree_nodes(self, t: int) -> range:
        """The global indices of tree ``t``'s nodes.

        Parameters
        ----------
        t : int
            The tree's position in the forest.

        Returns
        -------
        range
            Its nodes' indices in the flat arrays, root first.
        """
        end = int(self.roots[t + 1]) if t + 1 < self.n_trees else self.n_nodes
        return range(int(self.roots[t]), end)

    def depths(self) -> np.ndarray:
        """Depth of every node (a root has depth 0).

        Returns
        -------
        numpy.ndarray
            An int64 array of shape ``(n_nodes,)``.
        """
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for i in range(self.n_nodes):  # parents come before their children
            if self.feature[i] != LEAF:
                depth[self.left[i]] = depth[self.right[i]] = depth[i] + 1
        return depth

    @property
    def max_depth(self) -> int:
        """The depth of the deepest tree."""
        return int(self.depths().max())

    # ------------------------------------------------------------------ prediction
    def apply(self, X: np.ndarray) -> np.ndarray:
        """The leaf each row reaches in each tree.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows without missing values.

        Returns
        -------
        ndarray of int64 of shape (n_rows, n_trees)
            Global node indices of the leaves.
        """
        X = _check_rows(X, self.n_features)
        node = np.repeat(self.roots[None, :], len(X), axis=0)
        rows = np.repeat(np.arange(len(X))[:, None], self.n_trees, axis=1)
        while True:
            inner = self.feature[node] != LEAF
            if not inner.any():
                return node
            at, by = node[inner], rows[inner]
            goes_left = X[by, self.feature[at]] <= self.threshold[at]
            node[inner] = np.where(goes_left, self.left[at], self.right[at])

    def decision(self, X: np.ndarray) -> np.ndarray:
        """What the trees add up to per row: votes, mean probabilities, or the decision
        function, as the module notes say.

        Parameters
        ----------
        X : numpy.ndarray
            Rows of shape ``(n_rows, n_features)``.

        Returns
        -------
        numpy.ndarray
            Shape ``(n_rows, n_classes)`` (``(n_rows, 1)`` for a boosted sum).
        """
        return self.combine(self.apply(X))

    def combine(self, leaves: np.ndarray) -> np.ndarray:
        """The trees' combined values for rows of leaves, added in tree order, as
        scikit-learn adds them.

        Parameters
        ----------
        leaves : numpy.ndarray
            The leaf each row reaches in each tree, shape ``(n_rows, n_trees)``.

        Returns
        -------
        numpy.ndarray
            The combined values, as :meth:`decision` gives them.
        """
        total = np.zeros((leaves.shape[0], self.value.shape[1]))
        for t in range(self.n_trees):
            total += self.value[leaves[:, t]]
        if self.vote == "soft":
            total /= self.n_trees
        return total

    def decide(self, total: np.ndarray) -> np.ndarray:
        """Class indices of combined values.

        Parameters
        ----------
        total : numpy.ndarray
            Rows of :meth:`combine`.

        Returns
        -------
        numpy.ndarray
            The int64 class index per row (ties to the lowest index, as BA-Trees).
        """
        if self.vote == "sum":
            return (total[:, 0] >= 0).astype(np.int64)
        return np.argmax(total, axis=1).astype(np.int64)

    def predict_index(self, X: np.ndarray) -> np.ndarray:
        """Class index decided for each row.

        Parameters
        ----------
        X : numpy.ndarray
            Rows of shape ``(n_rows, n_features)``.

        Returns
        -------
        numpy.ndarray
            An int64 array of shape ``(n_rows,)``.
        """
        return self.decide(self.decision(X))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The label decided for each row.

        Parameters
        ----------
        X : numpy.ndarray
            Rows of shape ``(n_rows, n_features)``.

        Returns
        -------
        numpy.ndarray
            One label of ``classes`` per row.
        """
        return self.classes[self.predict_index(X)]

    # ------------------------------------------------------------------ the cell grid
    def thresholds(self) -> list[np.ndarray]:
        """Per feature, the sorted distinct thresholds the trees test (the cell grid).

        Returns
        -------
        list of numpy.ndarray
            One sorted array per feature (empty where no tree tests it).
        """
        inner = self.feature != LEAF
        return [
            np.unique(self.threshold[inner & (self.feature == c)]) for c in range(self.n_features)
        ]

    def leaf_boxes(self, thresholds: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The box of levels of each node.

        Parameters
        ----------
        thresholds : list of numpy.ndarray
            Per feature, sorted thresholds holding every threshold of the forest.

        Returns
        -------
        lo, hi : numpy.ndarray
            Int64 arrays of shape ``(n_nodes, n_features)``: ``lo[i, c] .. hi[i, c]`` are the levels
            of feature ``c`` whose points reach node ``i``.
        """
        lo = np.zeros((self.n_nodes, self.n_features), dtype=np.int64)
        hi = np.array([[len(t) for t in thresholds]] * self.n_nodes, dtype=np.int64)
        for i in range(self.n_nodes):  # parents come before their children
            f = int(self.feature[i])
            if f == LEAF:
                continue
            level = int(np.searchsorted(thresholds[f], self.threshold[i]))
            if level >= len(thresholds[f]) or thresholds[f][level] != self.threshold[i]:
                raise ValueError(f"threshold {self.threshold[i]} of feature {f} is not on the grid")
            a, b = int(self.left[i]), int(self.right[i])
            lo[a], hi[a], lo[b], hi[b] = lo[i], hi[i], lo[i], hi[i]
            hi[a, f] = min(hi[i, f], level)
            lo[b, f] = max(lo[i, f], level + 1)
        return lo, hi

    def cell_classes(self, thresholds: list[np.ndarray] | None = None) -> np.ndarray:
        """The class the forest decides on every cell of a grid.

        Each tree's leaves are boxes of cells, so the trees' values are added box by box
        (in tree order, as :meth:`decision` adds them), never cell by cell.

        Parameters
        ----------
        thresholds : list of ndarray, optional
            Sorted thresholds per feature, holding every threshold of the forest (default
            :meth:`thresholds`).

        Returns
        -------
        ndarray of int8 of shape (len(thresholds[0]) + 1, ...)
            The class index of each cell, one axis per feature.

        Raises
        ------
        ValueError
            When the grid has more than ``MAX_CELLS`` cells.
        """
        if thresholds is None:
            thresholds = self.thresholds()
        shape = tuple(len(t) + 1 for t in thresholds)
        cells = math.prod(shape)
        if cells > MAX_CELLS:
            raise ValueError(f"the grid has {cells} cells, more than the {MAX_CELLS} tabulated")
        lo, hi = self.leaf_boxes(thresholds)
        total = np.zeros((*shape, self.value.shape[1]))
        for t in range(self.n_trees):
            for i in self.tree_nodes(t):
                if self.feature[i] == LEAF:
                    box = tuple(slice(a, b + 1) for a, b in zip(lo[i], hi[i], strict=True))
                    total[box] += self.value[i]
        if self.vote == "soft":
            total /= self.n_trees
        flat = self.decide(total.reshape(cells, -1))
        return flat.astype(np.int8).reshape(shape)

    def restricted(self, low: np.ndarray, high: np.ndarray) -> Forest:
        """The forest on the box ``low < x <= high``: every split that the box decides is
        replaced by the child the box takes, so the trees test only thresholds inside it.

        Parameters
        ----------
        low, high : numpy.ndarray
            The box's bounds per feature (infinite bounds allowed).

        Returns
        -------
        Forest
            A forest that decides as this one on every point of the box; its cell grid is the
            box's part of this forest's grid.
        """
        low = np.asarray(low, dtype=np.float64)
        high = np.asarray(high, dtype=np.float64)
        keep: list[int] = []
        new_left: list[int] = []
        new_right: list[int] = []
        roots = []

        def carry(node: int) -> int:
            while self.feature[node] != LEAF:
                f, t = int(self.feature[node]), float(self.threshold[node])
                if high[f] <= t:
                    node = int(self.left[node])
                elif low[f] >= t:
                    node = int(self.right[node])
                else:
                    break
            index = len(keep)
            keep.append(node)
            new_left.append(-1)
            new_right.append(-1)
            if self.feature[node] != LEAF:
                new_left[index] = carry(int(self.left[node]))
                new_right[index] = carry(int(self.right[node]))
            return index

        for root in self.roots:
            roots.append(len(keep))
            carry(int(root))
        nodes = np.array(keep, dtype=np.int64)
        # parts of this checked forest: the checks (a loop over every node) are not run again
        box = copy.copy(self)  # the same features, classes, vote and names
        box._set_nodes(
            self.feature[nodes],
            self.threshold[nodes],
            new_left,
            new_right,
            self.value[nodes],
            roots,
        )
        return box

    # ------------------------------------------------------------------ conversions
    @classmethod
    def from_nested(
        cls,
        trees: Sequence[Any],
        n_features: int,
        classes: Sequence[Any] | np.ndarray,
        vote: str = "hard",
        feature_names: Sequence[str] | None = None,
    ) -> Forest:
        """A forest of nested trees: ``(feature, threshold, left, right)`` nodes and leaves
        holding a class index (``"hard"``), a sequence of class probabilities (``"soft"``)
        or a number (``"sum"``).

        Parameters
        ----------
        trees : sequence
            The trees, each nested as above.
        n_features : int
            Columns of the inputs.
        classes : array-like
            The labels, indexed by class index.
        vote : {"hard", "soft", "sum"}, default "hard"
            How the trees decide together (see the module notes).
        feature_names : sequence of str, optional
            Names of the input columns.
        """
        n_values = 1 if vote == "sum" else len(classes)
        feature: list[int] = []
        threshold: list[float] = []
        left: list[int] = []
        right: list[int] = []
        value: list[np.ndarray] = []
        roots: list[int] = []

        def add(node: Any) -> int:
            index = len(feature)
            if isinstance(node, tuple):
                f, t, lo, hi = node
                feature.append(int(f))
                threshold.append(float(t))
                left.append(-1)
                right.append(-1)
                value.append(np.zeros(n_values))
                left[index] = add(lo)
                right[index] = add(hi)
                return index
            feature.append(LEAF)
            threshold.append(math.nan)
            left.append(-1)
            right.append(-1)
            if vote == "hard":
                leaf = np.zeros(n_values)
                leaf[int(node)] = 1.0
            else:
                leaf = np.asarray(node, dtype=np.float64).reshape(n_values)
            value.append(leaf)
            return index

        for tree in trees:
            roots.append(len(feature))
            add(tree)
        return cls(
            feature, threshold, left, right, np.array(value), roots, n_features, classes, vote,
            feature_names,
        )  # fmt: skip

    @classmethod
    def from_tree(cls, tree: Tree, n_features: int | None = None) -> Forest:
        """A single tree as a one-tree forest with hard votes (to write it in BA-Trees'
        format, as BA-Trees writes its born-again trees).

        Parameters
        ----------
        tree : Tree
            The tree (its nodes in preorder, as every satdt tree).
        n_features : int, optional
            Columns of the inputs (default: the tree's feature names, else its highest
            feature + 1).
        """
        if n_features is None:
            n_features = (
                len(tree.feature_names)
                if tree.feature_names is not None
                else int(max(tree.feature.max(), 0)) + 1
            )
        value = np.zeros((tree.n_nodes, tree.n_classes))
        leaves = np.flatnonzero(tree.feature == LEAF)
        value[leaves, tree.value[leaves]] = 1.0
        return cls(
            tree.feature,
            tree.threshold,
            tree.left,
            tree.right,
            value,
            [0],
            n_features,
            tree.classes,
            "hard",
            tree.feature_names,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Forest):
            return NotImplemented
        arrays = ("feature", "left", "right", "roots", "value", "classes")
        return (
            all(np.array_equal(getattr(self, a), getattr(other, a)) for a in arrays)
            and np.array_equal(self.threshold, other.threshold, equal_nan=True)
            and (self.n_features, self.vote, self.feature_names)
            == (other.n_features, other.vote, other.feature_names)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable arrays

    def __repr__(self) -> str:
        return (
            f"Forest({self.n_trees} trees, {self.n_features} features, "
            f"{self.n_classes} classes, vote={self.vote!r})"
        )


def _one_hot(row: np.ndarray) -> bool:
    return bool(np.all((row == 0) | (row == 1)) and row.sum() == 1)


def _check_rows(X: np.ndarray, n_features: int) -> np.ndarray:
    """Rows as a float64 matrix of ``n_features`` columns without missing values."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != n_features:
        raise ValueError(f"expected rows of {n_features} features, got shape {X.shape}")
    if np.isnan(X).any():
        raise ValueError("a forest's rows may not hold missing values (NaN)")
    return X


def level_points(thresholds: list[np.ndarray]) -> list[np.ndarray]:
    """One point inside each level of each feature: the level's upper threshold, and for
    the last level a point above the last threshold (0.0 for a feature without threshold)."""
    points = []
    for t in thresholds:
        last = float(t[-1]) + max(1.0, abs(float(t[-1]))) if len(t) else 0.0
        points.append(np.append(np.asarray(t, dtype=np.float64), last))
    return points


def random_cells(
    thresholds: list[np.ndarray],
    low: np.ndarray,
    high: np.ndarray,
    n: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``n`` random points of each box ``low[i] < x <= high[i]`` of a grid, each in a random
    cell of its box, for all boxes at once.

    Per feature, a threshold inside the box or the box's upper end (when the box is open
    above, a point above its lower end and every threshold), each as likely.

    Parameters
    ----------
    thresholds : list of ndarray
        The grid: the sorted thresholds of each feature.
    low, high : ndarray of shape (n_boxes, n_features)
        The boxes (infinite bounds allowed).
    n : int
        Points per box.
    rng : numpy.random.Generator
        The random draws.

    Returns
    -------
    ndarray of shape (n_boxes, n, n_features)
    """
    low = np.asarray(low, dtype=np.float64).reshape(-1, len(thresholds))
    high = np.asarray(high, dtype=np.float64).reshape(-1, len(thresholds))
    points = np.empty((len(low), n, len(thresholds)))
    for c, t in enumerate(thresholds):
        first = np.searchsorted(t, low[:, c], side="right")  # the first threshold inside
        inside = np.searchsorted(t, high[:, c], side="left") - first  # how many are
        highest = np.fmax(low[:, c], t[-1] if len(t) else -np.inf)  # below an open top
        top = np.where(
            np.isfinite(high[:, c]),
            high[:, c],
            np.where(np.isfinite(highest), highest, 0.0) + 1.0,
        )
        pick = (rng.random((len(low), n)) * (inside + 1)[:, None]).astype(np.int64)
        level = np.append(t, np.nan)[np.minimum(first[:, None] + pick, len(t))]
        points[:, :, c] = np.where(pick < inside[:, None], level, top[:, None])
    return points
