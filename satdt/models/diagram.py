"""Decision diagrams as flat arrays: layered directed acyclic graphs of tests ending in classes.

A :class:`Diagram` (Florio et al., "Optimal Decision Diagrams for Classification", AAAI 2023)
has internal nodes sorted by layer (node 0 is the root, alone in layer 0) and one shared
terminal per class. Internal node ``i`` tests ``x[feature[i]] <= threshold[i]`` (univariate)
or, when ``feature[i] == -1``, ``coef[i] @ x <= threshold[i]`` (multivariate). Rows for which
the test holds go to ``low[i]`` (the paper's negative side), the others to ``high[i]``. A
successor ``s >= 0`` is an internal node of a later layer; ``s < 0`` is the terminal of class
index ``-1 - s`` (the paper's long arcs: any node may end a path). ``classes`` maps class
indices back to the user's labels, as in :class:`~satdt.Tree`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from . import display
from .diagram_checks import DiagramError, check_arrays
from .tree import LEAF, Tree, _format_threshold, _json_scalar

FORMAT = "satdt-diagram"


def terminal_code(class_index: int) -> int:
    """The successor value that means the terminal of ``class_index`` (``-1 - class_index``)."""
    return -1 - int(class_index)


def _reach(low: np.ndarray, high: np.ndarray, start: int) -> np.ndarray:
    """Mask of the internal nodes reachable from ``start`` (successors come later in the order)."""
    seen = np.zeros(len(low), dtype=bool)
    if start >= 0:
        seen[start] = True
        for i in range(start, len(low)):
            if seen[i]:
                for s in (low[i], high[i]):
                    if s >= 0:
                        seen[s] = True
    return seen


def _optional_equal(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and bool(np.array_equal(a, b))


class Diagram:
    """A classifier shaped as a layered directed acyclic graph.

    Parameters
    ----------
    layer : array-like of int of shape (n_nodes,)
        Layer of each internal node, non-decreasing; node 0 is the root, the only node of
        layer 0.
    feature : array-like of int of shape (n_nodes,)
        Feature tested by each node, or -1 for a multivariate node (a hyperplane in ``coef``).
    threshold : array-like of float of shape (n_nodes,)
        ``t`` in ``x[feature] <= t``, or ``b`` in ``coef[node] @ x <= b``; finite.
    low, high : array-like of int of shape (n_nodes,)
        Successor when the test holds / does not: an internal node of a later layer, or
        ``-1 - k`` for the terminal of class index ``k``.
    coef : ndarray of shape (n_nodes, n_features), optional
        Hyperplanes of the multivariate nodes (rows of univariate
        nodes are ignored and stored as zeros); ``None`` when every node is univariate (and
        stored as ``None`` then, even if given).
    n_features : int
        Number of design-matrix columns the diagram reads.
    classes : array-like of shape (n_classes,)
        The user's labels, indexed by class index.
    feature_names : sequence of str, optional
        Names of the design-matrix columns (``None``: ``x[0]``, ``x[1]``, ...).
    counts : ndarray of shape (n_nodes, n_classes), optional
        Training class weights passing through each node.
    terminal_counts : ndarray of shape (n_classes, n_classes), optional
        Training class weights reaching each terminal; :meth:`predict_proba` uses them.
    indicator : sequence of int, optional
        Indices of 0/1 indicator columns named like ``colour == red`` (printed as
        ``colour != red`` / ``colour == red``, as in :class:`~satdt.Tree`).
    root : int, optional
        Where prediction starts: ``0`` (the default) when there are internal nodes; a diagram
        with none is the single terminal ``root = -1 - k`` (see :meth:`single_terminal`).
    """

    kind: ClassVar[str] = "diagram"  # the model kind in saved model files (see satdt.models.model)

    __slots__ = (
        "classes",
        "coef",
        "counts",
        "feature",
        "feature_names",
        "high",
        "indicator",
        "layer",
        "low",
        "n_features",
        "root",
        "terminal_counts",
        "threshold",
    )

    def __init__(
        self,
        layer: Sequence[int] | np.ndarray,
        feature: Sequence[int] | np.ndarray,
        threshold: Sequence[float] | np.ndarray,
        low: Sequence[int] | np.ndarray,
        high: Sequence[int] | np.ndarray,
        *,
        coef: np.ndarray | None = None,
        n_features: int,
        classes: Sequence[Any] | np.ndarray,
        feature_names: Sequence[str] | None = None,
        counts: np.ndarray | None = None,
        terminal_counts: np.ndarray | None = None,
        indicator: Sequence[int] | None = None,
        root: int | None = None,
    ) -> None:
        self.layer = np.asarray(layer, dtype=np.int64).reshape(-1)
        self.feature = np.asarray(feature, dtype=np.int64).reshape(-1)
        self.threshold = np.asarray(threshold, dtype=np.float64).reshape(-1)
        self.low = np.asarray(low, dtype=np.int64).reshape(-1)
        self.high = np.asarray(high, dtype=np.int64).reshape(-1)
        self.n_features = int(n_features)
        self.classes = np.asarray(classes)
        self.feature_names = list(feature_names) if feature_names is not None else None
        self.indicator = (
            frozenset(int(i) for i in indicator) if indicator is not None else frozenset()
        )
        self.root = 0 if root is None else int(root)
        self.coef = None if coef is None else np.array(coef, dtype=np.float64)
        self.counts = None if counts is None else np.asarray(counts, dtype=np.float64)
        self.terminal_counts = (
            None if terminal_counts is None else np.asarray(terminal_counts, dtype=np.float64)
        )
        check_arrays(self)
        if self.coef is not None:  # canonical form: zero rows for univariate nodes, or None
            univariate = self.feature != LEAF
            self.coef = None if univariate.all() else self.coef
            if self.coef is not None:
                self.coef[univariate] = 0.0

    # ------------------------------------------------------------------ construction
    @classmethod
    def single_terminal(
        cls,
        class_index: int,
        *,
        n_features: int,
        classes: Sequence[Any] | np.ndarray,
        feature_names: Sequence[str] | None = None,
        terminal_counts: np.ndarray | None = None,
        indicator: Sequence[int] | None = None,
    ) -> Diagram:
        """The diagram without internal nodes: every row gets class ``class_index``.

        Parameters
        ----------
        class_index : int
            Index in ``classes`` of the class predicted.
        n_features : int
            Number of design-matrix columns.
        classes : array-like of shape (n_classes,)
            The user's labels.
        feature_names : sequence of str, optional
            Names of the design-matrix columns.
        terminal_counts : ndarray of shape (n_classes, n_classes), optional
            Training class weights reaching each terminal.
        indicator : sequence of int, optional
            Indices of the 0/1 indicator columns.

        Returns
        -------
        Diagram
            A diagram whose ``root`` is the terminal of ``class_index``.
        """
        empty = np.zeros(0)
        return cls(
            empty,
            empty,
            empty,
            empty,
            empty,
            n_features=n_features,
            classes=classes,
            feature_names=feature_names,
            counts=np.zeros((0, len(classes))) if terminal_counts is not None else None,
            terminal_counts=terminal_counts,
            indicator=indicator,
            root=terminal_code(class_index),
        )

    @classmethod
    def from_tree(cls, tree: Tree, n_features: int | None = None) -> Diagram:
        """The diagram of a tree: node depths become layers, leaves arcs to class terminals.

        Tree counts (when recorded) become node counts, and each terminal gets the counts of
        the leaves of its class.

        Parameters
        ----------
        tree : Tree
            The tree.
        n_features : int, optional
            Number of design-matrix columns (default: as many as the tree's feature names,
            else one more than the largest feature tested).

        Returns
        -------
        Diagram
            A diagram with the same splits, depth and predictions.
        """
        if n_features is None and tree.feature_names is not None:
            n_features = len(tree.feature_names)
        elif n_features is None:
            n_features = int(tree.feature.max()) + 1  # leaves hold -1
        leaves = np.flatnonzero(tree.feature == LEAF)
        known = bool(np.any(tree.counts))
        terminal_counts = None
        if known:
            terminal_counts = np.zeros((tree.n_classes, tree.n_classes))
            np.add.at(terminal_counts, tree.value[leaves], tree.counts[leaves])
        common: dict[str, Any] = {
            "n_features": n_features,
            "classes": tree.classes,
            "feature_names": tree.feature_names,
            "indicator": sorted(tree.indicator),
        }
        if tree.feature[0] == LEAF:
            return cls.single_terminal(
                int(tree.value[0]), terminal_counts=terminal_counts, **common
            )
        depth = np.zeros(tree.n_nodes, dtype=np.int64)
        for i in range(tree.n_nodes):  # preorder: a parent comes before its children
            if tree.feature[i] != LEAF:
                depth[tree.left[i]] = depth[tree.right[i]] = depth[i] + 1
        internal = np.flatnonzero(tree.feature != LEAF)
        internal = internal[np.argsort(depth[internal], kind="stable")]
        index = np.zeros(tree.n_nodes, dtype=np.int64)
        index[internal] = np.arange(len(internal))
        index[leaves] = -1 - tree.value[leaves]
        return cls(
            depth[internal],
            tree.feature[internal],
            tree.threshold[internal],
            index[tree.left[internal]],
            index[tree.right[internal]],
            counts=tree.counts[internal] if known else None,
            terminal_counts=terminal_counts,
            **common,
        )

    def copy(self) -> Diagram:
        """A copy that shares no array with this diagram.

        Returns
        -------
        Diagram
            An equal diagram.
        """
        return self.replace()

    def replace(self, **changes: Any) -> Diagram:
        """A validated copy with some constructor arguments replaced (e.g. ``feature_names``).

        Parameters
        ----------
        **changes
            Constructor arguments, by name, to replace.

        Returns
        -------
        Diagram
            The new diagram, checked as the constructor checks.
        """
        args: dict[str, Any] = {
            "layer": self.layer.copy(),
            "feature": self.feature.copy(),
            "threshold": self.threshold.copy(),
            "low": self.low.copy(),
            "high": self.high.copy(),
            "coef": None if self.coef is None else self.coef.copy(),
            "n_features": self.n_features,
            "classes": self.classes.copy(),
            "feature_names": self.feature_names,
            "counts": None if self.counts is None else self.counts.copy(),
            "terminal_counts": None
            if self.terminal_counts is None
            else self.terminal_counts.copy(),
            "indicator": sorted(self.indicator),
            "root": self.root,
        }
        args.update(changes)
        layer, feature, threshold, low, high = (
            args.pop(k) for k in ("layer", "feature", "threshold", "low", "high")
        )
        return Diagram(layer, feature, threshold, low, high, **args)

    # ------------------------------------------------------------------ shape
    def reachable(self) -> np.ndarray:
        """Boolean mask of the stored internal nodes reachable from the root.

        Returns
        -------
        ndarray of bool of shape (n_stored_nodes,)
            True for each internal node some path from the root visits.
        """
        return _reach(self.low, self.high, self.root)

    @property
    def n_splits(self) -> int:
        """Decision (internal) nodes reachable from the root, as ``Tree.n_splits``."""
        return int(self.reachable().sum())

    @property
    def n_terminals(self) -> int:
        """Class terminals reachable from the root: a diagram's leaves, one per class at
        most (a tree seen as a diagram shares one terminal among its leaves of a class)."""
        if not len(self.layer):
            return 1
        seen = self.reachable()
        succ = np.concatenate([self.low[seen], self.high[seen]])
        return len(np.unique(succ[succ < 0]))

    @property
    def n_leaves(self) -> int:
        """The nodes that predict: :attr:`n_terminals` (the word trees use)."""
        return self.n_terminals

    @property
    def n_nodes(self) -> int:
        """All nodes reachable from the root: decision nodes and terminals, as
        ``Tree.n_nodes`` counts decision nodes and leaves."""
        return self.n_splits + self.n_terminals

    @property
    def depth(self) -> int:
        """Internal nodes on the longest root-to-terminal path (a single terminal has depth 0)."""
        n = len(self.layer)
        if not n:
            return 0
        longest = np.zeros(n, dtype=np.int64)
        longest[0] = 1
        for i in range(n):
            if longest[i]:
                for s in (self.low[i], self.high[i]):
                    if s >= 0:
                        longest[s] = max(longest[s], longest[i] + 1)
        return int(longest.max())

    @property
    def widths(self) -> tuple[int, ...]:
        """Reachable decision nodes in each layer, from 0 to the last (``()`` for a terminal)."""
        if not len(self.layer):
            return ()
        seen = self.reachable()
        return tuple(np.bincount(self.layer[seen], minlength=int(self.layer.max()) + 1).tolist())

    @property
    def n_classes(self) -> int:
        """Number of classes (the length of ``classes``)."""
        return len(self.classes)

    @property
    def multivariate(self) -> bool:
        """Whether some node tests a hyperplane rather than one feature."""
        return self.coef is not None

    # ------------------------------------------------------------------ prediction
    def _check_X(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise DiagramError(
                f"X must be a 2-D array with {self.n_features} columns (the diagram's "
                f"n_features); got shape {X.shape}; pass the design matrix it was learnt on"
            )
        return X

    def holds(self, X: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Whether row ``r`` of ``X`` satisfies the test of ``nodes[r]`` (goes to ``low``).

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features)
            Rows of the design matrix.
        nodes : ndarray of int of shape (n_rows,)
            The internal node whose test each row takes.

        Returns
        -------
        ndarray of bool of shape (n_rows,)
            True where the row goes to the node's ``low`` successor.
        """
        f = self.feature[nodes]
        uni = f != LEAF
        out = np.empty(len(nodes), dtype=bool)
        rows = np.flatnonzero(uni)
        out[rows] = X[rows, f[rows]] <= self.threshold[nodes[rows]]
        if self.coef is not None:
            rows = np.flatnonzero(~uni)
            values = np.einsum("ij,ij->i", X[rows], self.coef[nodes[rows]])
            out[rows] = values <= self.threshold[nodes[rows]]
        return out

    def _route(
        self, X: np.ndarray, path: np.ndarray | None = None, sides: np.ndarray | None = None
    ) -> np.ndarray:
        """Move all rows one arc at a time; the terminal code of each row.

        ``path`` (rows x (depth + 1)) receives each row's states; ``sides`` (nodes x 2)
        accumulates how many rows leave each node by ``low`` and by ``high``.
        """
        state = np.full(len(X), self.root, dtype=np.int64)
        step = 0
        active = np.flatnonzero(state >= 0)
        while True:
            if path is not None:
                path[:, step] = state
            if not len(active):
                break
            node = state[active]
            go_low = self.holds(X[active], node)
            if sides is not None:
                np.add.at(sides, (node, (~go_low).astype(np.int64)), 1)
            state[active] = np.where(go_low, self.low[node], self.high[node])
            active = active[state[active] >= 0]
            step += 1
        if path is not None:
            path[:, step:] = state[:, None]
        return state

    def count_error(self) -> float:
        """Training error recorded in ``terminal_counts``, as :meth:`Tree.count_error
        <satdt.Tree.count_error>` gives a tree's.

        Returns
        -------
        float
            The weight reaching each terminal that is not of the terminal's class.
        """
        if self.terminal_counts is None:
            raise ValueError("this diagram holds no training counts (see with_counts)")
        counts = self.terminal_counts
        return float(counts.sum() - np.trace(counts))

    def decision_path(self, X: np.ndarray) -> np.ndarray:
        """The path of each row: an ``(n_rows, depth + 1)`` int array.

        Row ``r`` lists the internal nodes it visits from the root, then its terminal
        ``-1 - k``, repeated to the end as padding: the last column is always the terminal.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix the diagram reads.

        Returns
        -------
        ndarray of int64 of shape (n_rows, depth + 1)
            The path of each row.
        """
        X = self._check_X(X)
        path = np.empty((len(X), self.depth + 1), dtype=np.int64)
        self._route(X, path=path)
        return path

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The node each row ends at, as :meth:`Tree.apply <satdt.Tree.apply>` gives
        a tree's leaf: its terminal, numbered after the stored decision nodes (terminal
        ``k`` is node ``len(feature) + k``).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix the diagram reads.

        Returns
        -------
        ndarray of int64 of shape (n_rows,)
            The terminal node of each row; :meth:`decision_path` gives the nodes it visits.
        """
        return len(self.feature) + self.terminal(X)

    def terminal(self, X: np.ndarray) -> np.ndarray:
        """Class index of the terminal each row reaches.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix the diagram reads.

        Returns
        -------
        ndarray of int64 of shape (n_rows,)
            Indices into ``classes``.
        """
        return -1 - self._route(self._check_X(X))

    def predict_index(self, X: np.ndarray) -> np.ndarray:
        """Class index predicted for each row (the class of its terminal).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix the diagram reads.

        Returns
        -------
        ndarray of int64 of shape (n_rows,)
            Indices into ``classes``.
        """
        return self.terminal(X)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The user's label predicted for each row.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix the diagram reads.

        Returns
        -------
        ndarray of shape (n_rows,)
            Labels taken from ``classes``.
        """
        return self.classes[self.terminal(X)]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Training class frequencies of each row's terminal (one-hot where unknown).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix the diagram reads.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
            The share of each class in the training weight that reached the row's terminal.
        """
        k = self.terminal(X)
        one_hot = np.zeros((len(k), self.n_classes))
        one_hot[np.arange(len(k)), k] = 1.0
        if self.terminal_counts is None:
            return one_hot
        counts = self.terminal_counts[k]
        total = counts.sum(axis=1, keepdims=True)
        return np.where(total > 0, counts / np.where(total > 0, total, 1.0), one_hot)

    def with_counts(
        self, X: np.ndarray, y_index: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> Diagram:
        """A copy whose ``counts`` and ``terminal_counts`` are the class weights of ``(X, y_index)``.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix the diagram reads.
        y_index : array-like of int of shape (n_rows,)
            Class index of each row.
        sample_weight : array-like of shape (n_rows,), optional
            Weight of each row (default 1).

        Returns
        -------
        Diagram
            A copy of this diagram with the new counts.
        """
        path = self.decision_path(X)
        y = np.asarray(y_index, dtype=np.int64)
        weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
        k = self.n_classes
        n = len(self.layer)
        flat = np.zeros(n * k)
        for column in path[:, :-1].T:  # a path visits a node at most once
            inside = column >= 0
            flat += np.bincount(
                column[inside] * k + y[inside], weights=weight[inside], minlength=n * k
            )
        terminal_flat = np.bincount((-1 - path[:, -1]) * k + y, weights=weight, minlength=k * k)
        return self.replace(counts=flat.reshape(n, k), terminal_counts=terminal_flat.reshape(k, k))

    # ------------------------------------------------------------------ transformation
    def simplify(self, X: np.ndarray | None = None) -> Diagram:
        """An equivalent diagram with fewer nodes; predictions never change.

        Unreachable nodes are dropped; bottom-up, a node whose two successors are equal is
        replaced by that successor, and nodes with the same test and the same successors are
        merged into one (the deepest, so every arc still points to a later layer); empty
        layers are closed up. With ``X``, a node that rows of ``X`` reach but all leave by the
        same side is first replaced by that side's successor: predictions on ``X`` stay the
        same, elsewhere they may change. Counts of merged nodes are added.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features), optional
            Rows whose predictions must stay the same (default: all rows).

        Returns
        -------
        Diagram
            The simplified diagram.
        """
        n = len(self.layer)
        if not n:
            return self.copy()
        low, high, root = self.low.copy(), self.high.copy(), self.root
        if X is not None:
            sides = np.zeros((n, 2), dtype=np.int64)
            self._route(self._check_X(X), sides=sides)
            skip = np.arange(n)
            skip = np.where((sides[:, 0] == 0) & (sides[:, 1] > 0), high, skip)
            skip = np.where((sides[:, 1] == 0) & (sides[:, 0] > 0), low, skip)
            for i in range(n - 1, -1, -1):  # skipped successors are already resolved
                if skip[i] != i:
                    s = skip[i]
                    skip[i] = s if s < 0 else skip[s]
            low = np.where(low >= 0, skip[np.maximum(low, 0)], low)
            high = np.where(high >= 0, skip[np.maximum(high, 0)], high)
            root = int(skip[0])
        seen = _reach(low, high, root)
        canon = np.arange(n)
        merged: list[list[int]] = [[i] for i in range(n)]
        kept: dict[tuple[Any, ...], int] = {}
        for i in range(n - 1, -1, -1):
            if not seen[i]:
                continue
            lo = int(canon[low[i]]) if low[i] >= 0 else int(low[i])
            hi = int(canon[high[i]]) if high[i] >= 0 else int(high[i])
            low[i], high[i] = lo, hi
            if lo == hi:
                canon[i] = lo
                continue
            plane = self.coef[i].tobytes() if self.feature[i] == LEAF else b""
            key = (int(self.feature[i]), float(self.threshold[i]), plane, lo, hi)
            if key in kept:
                canon[i] = kept[key]
                merged[kept[key]].append(i)
            else:
                kept[key] = i
        root = int(canon[root]) if root >= 0 else root
        if root < 0:
            return Diagram.single_terminal(
                -1 - root,
                n_features=self.n_features,
                classes=self.classes,
                feature_names=self.feature_names,
                terminal_counts=self.terminal_counts,
                indicator=sorted(self.indicator),
            )
        keep = _reach(low, high, root)
        nodes = np.flatnonzero(keep)
        new_index = np.zeros(n, dtype=np.int64)
        new_index[nodes] = np.arange(len(nodes))

        def renumber(succ: np.ndarray) -> np.ndarray:
            return np.where(succ >= 0, new_index[np.maximum(succ, 0)], succ)

        counts = None
        if self.counts is not None:
            counts = np.array([self.counts[merged[i]].sum(axis=0) for i in nodes])
            counts = counts.reshape(len(nodes), self.n_classes)
        return self.replace(
            layer=np.unique(self.layer[nodes], return_inverse=True)[1],
            feature=self.feature[nodes],
            threshold=self.threshold[nodes],
            low=renumber(low[nodes]),
            high=renumber(high[nodes]),
            coef=None if self.coef is None else self.coef[nodes],
            counts=counts,
            root=0,
        )

    def unscale(self, lo: np.ndarray, hi: np.ndarray) -> Diagram:
        """The diagram in original units, for one learnt on min-max scaled features.

        Scaling is ``x' = (x - lo) / s`` with ``s = hi - lo`` (``s = 1`` where
        ``hi <= lo``, a constant feature). A univariate test ``x'_j <= t`` becomes
        ``x_j <= lo_j + t * s_j``; a hyperplane ``a @ x' <= b`` becomes
        ``(a / s) @ x <= b + (a / s) @ lo``.

        Parameters
        ----------
        lo, hi : array-like of shape (n_features,)
            The smallest and largest value of each feature, as the scaling used them.

        Returns
        -------
        Diagram
            The diagram over the unscaled features.
        """
        lo = np.asarray(lo, dtype=np.float64).reshape(-1)
        hi = np.asarray(hi, dtype=np.float64).reshape(-1)
        if lo.shape != (self.n_features,) or hi.shape != (self.n_features,):
            raise DiagramError(
                f"lo and hi must hold one value per feature ({self.n_features}); got "
                f"{lo.shape} and {hi.shape}"
            )
        scale = np.where(hi > lo, hi - lo, 1.0)
        threshold = self.threshold.copy()
        uni = np.flatnonzero(self.feature != LEAF)
        f = self.feature[uni]
        threshold[uni] = lo[f] + threshold[uni] * scale[f]
        coef = None
        if self.coef is not None:
            coef = self.coef / scale
            multi = np.flatnonzero(self.feature == LEAF)
            threshold[multi] += coef[multi] @ lo
        return self.replace(threshold=threshold, coef=coef)

    # ------------------------------------------------------------------ export
    def _feature_name(self, feature: int) -> str:
        if self.feature_names is not None and 0 <= feature < len(self.feature_names):
            return self.feature_names[feature]
        return f"x[{feature}]"

    def node_name(self, node: int) -> str:
        """The node's name, ``n<layer>.<position>``: its layer and its position there.

        Parameters
        ----------
        node : int
            An internal node.

        Returns
        -------
        str
            The name, such as ``n2.1``.
        """
        layer = int(self.layer[node])
        first = int(np.searchsorted(self.layer, layer, side="left"))
        return f"n{layer}.{node - first}"

    def successor_name(self, successor: int) -> str:
        """A node's name, or ``class <label>`` for a terminal.

        Parameters
        ----------
        successor : int
            An internal node (``>= 0``) or the terminal ``-1 - k`` of class index ``k``.

        Returns
        -------
        str
            The name.
        """
        if successor >= 0:
            return self.node_name(successor)
        return f"class {self.classes[-1 - successor]}"

    def condition(self, node: int, go_low: bool = True) -> str:
        """The test of ``node`` as text, for its low (true) or high branch.

        Parameters
        ----------
        node : int
            An internal node.
        go_low : bool, default True
            True for the low branch (the test holds), False for the high one.

        Returns
        -------
        str
            The test in the user's feature names, such as ``petal_length <= 2.45``.
        """
        f = int(self.feature[node])
        t = _format_threshold(float(self.threshold[node]))
        if f != LEAF:
            name = self._feature_name(f)
            if f in self.indicator and " == " in name:
                column, category = name.split(" == ", 1)
                return f"{column} != {category}" if go_low else name
            return f"{name} <= {t}" if go_low else f"{name} > {t}"
        plane = self.coef[node] if self.coef is not None else np.zeros(self.n_features)
        terms = []
        for j in np.flatnonzero(plane):
            c = float(plane[j])
            size = "" if abs(c) == 1.0 else f"{_format_threshold(abs(c))} * "
            sign = "-" if c < 0 else "+"
            terms.append((sign, f"{size}{self._feature_name(int(j))}"))
        if not terms:
            lhs = "0"
        else:
            lhs = ("-" if terms[0][0] == "-" else "") + terms[0][1]
            lhs += "".join(f" {sign} {term}" for sign, term in terms[1:])
        return f"{lhs} <= {t}" if go_low else f"{lhs} > {t}"

    def export_text(self) -> str:
        """Each reachable node once, in layer order: its test and both successors.

        ``yes`` is the successor of the rows satisfying the test, ``no`` of the others.

        Returns
        -------
        str
            The text, lines separated by newlines.
        """
        if not len(self.layer):
            return f"class: {self.classes[-1 - self.root]}"
        lines = []
        for i in np.flatnonzero(self.reachable()):
            lines.append(f"{self.node_name(i)}: {self.condition(i)}")
            lines.append(f"    yes -> {self.successor_name(int(self.low[i]))}")
            lines.append(f"    no  -> {self.successor_name(int(self.high[i]))}")
        return "\n".join(lines)

    def to_dot(self) -> str:
        """Graphviz DOT source: a box per reachable node, an ellipse per reachable terminal.

        The nodes of a layer share one rank; edges are labelled yes/no.

        Returns
        -------
        str
            The source of a ``digraph``.
        """

        def quote(text: str) -> str:
            escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            return '"' + escaped + '"'

        def ident(successor: int) -> str:
            return f"n{successor}" if successor >= 0 else f"c{-1 - successor}"

        lines = ["digraph diagram {", "  node [fontname=helvetica];"]
        seen = self.reachable()
        nodes = np.flatnonzero(seen)
        for layer in np.unique(self.layer[nodes]):
            members = nodes[self.layer[nodes] == layer]
            lines.append("  { rank=same; " + " ".join(f"n{i};" for i in members) + " }")
        for i in nodes:
            label = quote(f"{self.node_name(i)}\n{self.condition(i)}")
            lines.append(f"  n{i} [shape=box, label={label}];")
        succ = np.concatenate([self.low[seen], self.high[seen], [self.root]])
        terminals = np.unique(-1 - succ[succ < 0])
        for k in terminals:
            lines.append(f"  c{k} [shape=ellipse, label={quote(str(self.classes[k]))}];")
        if len(nodes):
            lines.append("  { rank=sink; " + " ".join(f"c{k};" for k in terminals) + " }")
        for i in nodes:
            lines.append(f"  n{i} -> {ident(int(self.low[i]))} [label=yes];")
            lines.append(f"  n{i} -> {ident(int(self.high[i]))} [label=no];")
        lines.append("}")
        return "\n".join(lines)

    def to_onnx(self) -> Any:
        """The diagram as an ONNX model; see :func:`satdt.models.export.diagram_to_onnx`.

        Returns
        -------
        onnx.ModelProto
            The model: input ``X`` (float64), outputs ``label`` and ``probabilities``; it
            predicts exactly as :meth:`predict` and :meth:`predict_proba`.
        """
        from .export import diagram_to_onnx

        return diagram_to_onnx(self)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary; :meth:`from_dict` restores an equal diagram.

        Returns
        -------
        dict
            The format tag, the labels, the feature names and the per-node arrays as lists.
        """
        return {
            "format": FORMAT,
            "model": self.kind,
            "version": 1,
            "classes": [_json_scalar(c) for c in self.classes.tolist()],
            "feature_names": self.feature_names,
            "indicator": sorted(self.indicator),
            "n_features": self.n_features,
            "root": self.root,
            "layer": self.layer.tolist(),
            "feature": self.feature.tolist(),
            "threshold": self.threshold.tolist(),
            "low": self.low.tolist(),
            "high": self.high.tolist(),
            "coef": None if self.coef is None else self.coef.tolist(),
            "counts": None if self.counts is None else self.counts.tolist(),
            "terminal_counts": (
                None if self.terminal_counts is None else self.terminal_counts.tolist()
            ),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diagram:
        """The diagram of a :meth:`to_dict` dictionary.

        Parameters
        ----------
        data : dict
            A dictionary written by :meth:`to_dict` (or read from its JSON).

        Returns
        -------
        Diagram
            The diagram.
        """
        if data.get("format") != FORMAT:
            raise DiagramError(
                f"not a satdt diagram: the 'format' field is {data.get('format')!r}, not {FORMAT!r}"
            )
        n_classes = len(data["classes"])

        def array(key: str, shape: tuple[int, ...]) -> np.ndarray | None:
            value = data.get(key)
            return None if value is None else np.asarray(value, dtype=np.float64).reshape(shape)

        n = len(data["layer"])
        return cls(
            data["layer"],
            data["feature"],
            data["threshold"],
            data["low"],
            data["high"],
            coef=array("coef", (n, data["n_features"])),
            n_features=data["n_features"],
            classes=np.asarray(data["classes"]),
            feature_names=data.get("feature_names"),
            counts=array("counts", (n, n_classes)),
            terminal_counts=array("terminal_counts", (n_classes, n_classes)),
            indicator=data.get("indicator"),
            root=data["root"],
        )

    def to_json(self, indent: int | None = None) -> str:
        """The diagram as JSON text (:meth:`to_dict`, serialised).

        Parameters
        ----------
        indent : int, optional
            Indentation of the JSON (default: one line).

        Returns
        -------
        str
            The JSON text; :meth:`from_json` reads it back.
        """
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Diagram:
        """The diagram that JSON text of :meth:`to_json` describes.

        Parameters
        ----------
        text : str
            The JSON text.

        Returns
        -------
        Diagram
            The diagram.
        """
        return cls.from_dict(json.loads(text))

    # ------------------------------------------------------------------ comparison
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Diagram):
            return NotImplemented
        return (
            self.root == other.root
            and self.n_features == other.n_features
            and np.array_equal(self.layer, other.layer)
            and np.array_equal(self.feature, other.feature)
            and np.array_equal(self.threshold, other.threshold)
            and np.array_equal(self.low, other.low)
            and np.array_equal(self.high, other.high)
            and _optional_equal(self.coef, other.coef)
            and _optional_equal(self.counts, other.counts)
            and _optional_equal(self.terminal_counts, other.terminal_counts)
            and np.array_equal(self.classes, other.classes)
            and self.feature_names == other.feature_names
            and self.indicator == other.indicator
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        kind = "multivariate" if self.multivariate else "univariate"
        return (
            f"Diagram(depth={self.depth}, n_splits={self.n_splits}, widths={self.widths}, "
            f"n_classes={self.n_classes}, {kind})"
        )

    def _repr_svg_(self) -> str | None:
        """The model drawn for Jupyter (:func:`satdt.plot.model_svg`, through the hook of
        :mod:`satdt.models.display`); None without matplotlib, and the notebook shows the text
        repr instead."""
        return display.svg(self)
