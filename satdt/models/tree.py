"""Decision trees as flat arrays, shared by every search of satdt.

A :class:`Tree` is stored in preorder (node 0 is the root). Internal node ``i`` tests
``x[feature[i]] <= threshold[i]``: rows for which the test holds go to ``left[i]``, the
others to ``right[i]`` (scikit-learn's orientation; a binary feature ``x > t`` is true on the
right). Leaves have ``feature == -1`` and hold a class index in ``value``; ``classes`` maps
class indices back to the user's labels. ``counts[i, c]`` is the training weight of class
``c`` reaching node ``i`` (used by :meth:`Tree.predict_proba`).

Missing values: a row whose tested cell is NaN goes where ``missing[i]`` says. A split
learned on a column with missing values has its own side (``MISSING_LEFT`` or
``MISSING_RIGHT``, chosen by the search); any other split sends missing values to the child
that more training weight reached (``DEFAULT_LEFT`` or ``DEFAULT_RIGHT``, set whenever
counts are attached; left on a tie or without counts).

What every model does (predictions, paths, JSON, equality) is :class:`~satdt.models.base.Model`'s;
the rules a tree's arrays follow are :mod:`satdt.models.tree_arrays`'; the simplifications
that keep predictions are :mod:`satdt.models.tree_edits`'.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from . import tree_edits
from .base import LEAF, Model, class_frequencies, dot_quote
from .fields import Fields
from .tree_arrays import (
    DEFAULT_LEFT,
    DEFAULT_RIGHT,
    MISSING_LEFT,
    MISSING_RIGHT,
    check_tree,
)

__all__ = [
    "DEFAULT_LEFT",
    "DEFAULT_RIGHT",
    "LEAF",
    "MISSING_LEFT",
    "MISSING_RIGHT",
    "Tree",
    "depth_lower_bound",
    "leaf_lower_bound",
]

# A nested tree is either a class index (a leaf) or (feature, threshold, left, right), with a
# fifth item MISSING_LEFT or MISSING_RIGHT when the node learned where missing values go.
Nested = Any

# JSON has no NaN nor infinity: a leaf's threshold is written null, that of "x is missing" "inf".
_THRESHOLD_TOKENS = {None: math.nan, "inf": math.inf}


class Tree(Model):
    """A binary decision tree over a numeric design matrix.

    Parameters
    ----------
    feature, threshold, left, right, value : array-like of shape (n_nodes,)
        Per-node arrays in preorder; leaves have ``feature == -1``, ``left == right == -1``
        and a NaN threshold.
    counts : ndarray of shape (n_nodes, n_classes), optional
        Training class weights reaching each node.
    classes : array-like of shape (n_classes,), optional
        The user's labels, indexed by class index.
    feature_names : sequence of str, optional
        Names of the design-matrix columns (``None``: ``x[0]``, ``x[1]``, ...).
    indicator : sequence of int, optional
        Indices of design columns that are 0/1 indicators of a category (named like
        ``colour == red``); they print as ``colour == red`` / ``colour != red``.
    missing : array-like of int8 of shape (n_nodes,), optional
        Where a row whose tested cell is missing goes (see the module notes; default
        ``DEFAULT_LEFT`` everywhere, settled by the counts when they are given).
    """

    kind: ClassVar[str] = "tree"
    header: ClassVar[dict[str, Any]] = {"format": "satdt-tree", "version": 1}

    __slots__ = (
        "classes",
        "counts",
        "feature",
        "feature_names",
        "indicator",
        "left",
        "missing",
        "right",
        "threshold",
        "value",
    )

    def __init__(
        self,
        feature: Sequence[int] | np.ndarray,
        threshold: Sequence[float] | np.ndarray,
        left: Sequence[int] | np.ndarray,
        right: Sequence[int] | np.ndarray,
        value: Sequence[int] | np.ndarray,
        counts: np.ndarray | None = None,
        classes: Sequence[Any] | np.ndarray | None = None,
        feature_names: Sequence[str] | None = None,
        indicator: Sequence[int] | None = None,
        missing: Sequence[int] | np.ndarray | None = None,
    ) -> None:
        self.feature = np.asarray(feature, dtype=np.int64)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.left = np.asarray(left, dtype=np.int64)
        self.right = np.asarray(right, dtype=np.int64)
        self.value = np.asarray(value, dtype=np.int64)
        n = len(self.feature)
        if classes is None:
            n_classes = int(self.value.max()) + 1 if n else 1
            classes = np.arange(n_classes)
        self.classes = np.asarray(classes)
        if counts is None:
            counts = np.zeros((n, len(self.classes)))
        self.counts = np.asarray(counts, dtype=np.float64).reshape(n, len(self.classes))
        self.feature_names = list(feature_names) if feature_names is not None else None
        self.indicator = (
            frozenset(int(i) for i in indicator) if indicator is not None else frozenset()
        )
        if missing is None:
            self.missing = np.full(n, DEFAULT_LEFT, dtype=np.int8)
            self._settle_defaults()
        else:
            self.missing = np.asarray(missing, dtype=np.int8).reshape(n)

    def _settle_defaults(self) -> None:
        """Give every node without a learned side the child more training weight reached."""
        internal = np.flatnonzero((self.feature != LEAF) & (self.missing >= DEFAULT_LEFT))
        weight = self.counts.sum(axis=1)
        heavier = weight[self.right[internal]] > weight[self.left[internal]]
        self.missing[internal] = np.where(heavier, DEFAULT_RIGHT, DEFAULT_LEFT)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_nested(
        cls,
        nested: Nested,
        classes: Sequence[Any] | np.ndarray,
        feature_names: Sequence[str] | None = None,
        indicator: Sequence[int] | None = None,
    ) -> Tree:
        """Build a tree from ``class_index`` leaves and ``(feature, threshold, left, right)`` nodes.

        Parameters
        ----------
        nested : int or tuple
            A leaf's class index, or a node ``(feature, threshold, left, right)`` whose children
            are nested the same way (a fifth item, where given, is the node's side for missing
            values).
        classes : array-like of shape (n_classes,)
            The user's labels, indexed by class index.
        feature_names : sequence of str, optional
            Names of the design-matrix columns.
        indicator : sequence of int, optional
            Indices of the design columns that are 0/1 indicators of a category.

        Returns
        -------
        Tree
            The tree, its nodes in preorder, without training counts.
        """
        feature: list[int] = []
        threshold: list[float] = []
        left: list[int] = []
        right: list[int] = []
        value: list[int] = []
        missing: list[int] = []

        def add(node: Nested) -> int:
            index = len(feature)
            if isinstance(node, tuple):
                f, t, lo, hi = node[:4]
                feature.append(int(f))
                threshold.append(float(t))
                left.append(-1)
                right.append(-1)
                value.append(-1)
                missing.append(int(node[4]) if len(node) > 4 else DEFAULT_LEFT)
                left[index] = add(lo)
                right[index] = add(hi)
            else:
                feature.append(LEAF)
                threshold.append(np.nan)
                left.append(-1)
                right.append(-1)
                value.append(int(node))
                missing.append(DEFAULT_LEFT)
            return index

        add(nested)
        return cls(
            feature, threshold, left, right, value, None, classes, feature_names, indicator, missing
        )

    @classmethod
    def single_leaf(
        cls, class_index: int, classes: Sequence[Any] | np.ndarray, **kwargs: Any
    ) -> Tree:
        """The tree of depth 0 that predicts one class.

        Parameters
        ----------
        class_index : int
            Index in ``classes`` of the class predicted.
        classes : array-like of shape (n_classes,)
            The user's labels.
        **kwargs
            ``feature_names`` and ``indicator``, as for :meth:`from_nested`.

        Returns
        -------
        Tree
            A single leaf.
        """
        return cls.from_nested(int(class_index), classes, **kwargs)

    def to_nested(self, node: int = 0) -> Nested:
        """The tree as nested tuples (inverse of :meth:`from_nested`).

        Default sides for missing values are left out: they follow from the counts.

        Parameters
        ----------
        node : int, default 0
            The node whose subtree is returned (0: the root).

        Returns
        -------
        int or tuple
            A leaf's class index, or ``(feature, threshold, left, right)`` with nested
            children (and a fifth item where the node learned a side for missing values).
        """
        if self.feature[node] == LEAF:
            return int(self.value[node])
        nested = (
            int(self.feature[node]),
            float(self.threshold[node]),
            self.to_nested(int(self.left[node])),
            self.to_nested(int(self.right[node])),
        )
        side = int(self.missing[node])
        return nested if side >= DEFAULT_LEFT else (*nested, side)

    def _replace(self, nested: Nested, counts: list[np.ndarray] | None = None) -> Tree:
        tree = Tree.from_nested(nested, self.classes, self.feature_names, sorted(self.indicator))
        if counts is not None:
            tree.counts = np.array(counts, dtype=np.float64).reshape(
                tree.n_nodes, len(self.classes)
            )
            tree._settle_defaults()
        return tree

    # ------------------------------------------------------------------ shape
    @property
    def n_nodes(self) -> int:
        """All nodes: decision nodes (:attr:`n_splits`) and leaves (:attr:`n_leaves`)."""
        return len(self.feature)

    @property
    def n_leaves(self) -> int:
        """The nodes that predict."""
        return int(np.sum(self.feature == LEAF))

    @property
    def n_splits(self) -> int:
        """Decision (internal) nodes: ``n_nodes - n_leaves``."""
        return int(np.sum(self.feature != LEAF))

    @property
    def depth(self) -> int:
        """Length of the longest root-to-leaf path (a single leaf has depth 0)."""
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for i in range(self.n_nodes):  # preorder: a parent comes before its children
            if self.feature[i] != LEAF:
                depth[self.left[i]] = depth[self.right[i]] = depth[i] + 1
        return int(depth.max()) if self.n_nodes else 0

    # ------------------------------------------------------------------ prediction
    def apply(self, X: np.ndarray) -> np.ndarray:
        """Index of the leaf each row of ``X`` reaches.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix (NaN where a cell is missing).

        Returns
        -------
        ndarray of int64 of shape (n_rows,)
            The node index (in preorder) of each row's leaf.
        """
        return self._walk(self._rows(X))

    def holds(self, X: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Whether row ``r`` of ``X`` goes left at node ``nodes[r]`` (missing cells included).

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features)
            Rows of the design matrix (NaN where a cell is missing).
        nodes : ndarray of int of shape (n_rows,)
            The internal node whose test each row takes.

        Returns
        -------
        ndarray of bool of shape (n_rows,)
            True where the row goes to the node's ``left`` child.
        """
        return self._holds(self._rows(X), np.arange(len(nodes)), np.asarray(nodes))

    def _holds(self, X: np.ndarray, rows: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        cells = X[rows, self.feature[nodes]]
        goes_left = cells <= self.threshold[nodes]
        gone = np.flatnonzero(np.isnan(cells))
        if len(gone):
            goes_left[gone] = (self.missing[nodes[gone]] & 1) == 0
        return goes_left

    def _start(self) -> int:
        return 0

    def _internal(self, state: np.ndarray) -> np.ndarray:
        return self.feature[state] != LEAF

    def _successors(self) -> tuple[np.ndarray, np.ndarray]:
        return self.left, self.right

    def _end_class(self, end: np.ndarray) -> np.ndarray:
        return self.value[end]

    def _end_counts(self, end: np.ndarray) -> np.ndarray:
        return self.counts[end]

    def frequencies(self) -> np.ndarray:
        """Each node's training class frequencies.

        Returns
        -------
        ndarray of shape (n_nodes, n_classes)
            The share of each class in the training weight reaching each node; one-hot on the
            node's class where no training weight reached it.
        """
        return class_frequencies(
            self.counts, self.value.clip(0, self.n_classes - 1), self.n_classes
        )

    def with_counts(
        self, X: np.ndarray, y_index: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> Tree:
        """A copy whose ``counts`` are the class weights of ``(X, y_index)`` reaching each node.

        Nodes without a learned side for missing values then send them to the child more of
        this weight reached (``DEFAULT_RIGHT`` or ``DEFAULT_LEFT``).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix (NaN where a cell is missing).
        y_index : array-like of int of shape (n_rows,)
            Class index of each row.
        sample_weight : array-like of shape (n_rows,), optional
            Weight of each row (default 1).

        Returns
        -------
        Tree
            A copy of this tree with the new counts.
        """
        X = np.asarray(X, dtype=np.float64)
        weight = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, float)
        n_classes = self.n_classes
        leaf = self.apply(X)
        flat = np.bincount(
            leaf * n_classes + np.asarray(y_index, dtype=np.int64),
            weights=weight,
            minlength=self.n_nodes * n_classes,
        )
        counts = flat.reshape(self.n_nodes, n_classes)
        # children come after their parent in preorder: add each node's counts to its parent's
        parent = np.full(self.n_nodes, -1, dtype=np.int64)
        internal = np.flatnonzero(self.feature != LEAF)
        parent[self.left[internal]] = internal
        parent[self.right[internal]] = internal
        for i in range(self.n_nodes - 1, 0, -1):
            counts[parent[i]] += counts[i]
        tree = self.copy()
        tree.counts = counts
        tree._settle_defaults()
        return tree

    def count_error(self) -> float:
        """Training error recorded in ``counts``: the weight of each leaf not of its class.

        Returns
        -------
        float
            The weight reaching the leaves that is not of the leaf's class.
        """
        leaves = np.flatnonzero(self.feature == LEAF)
        counts = self.counts[leaves]
        return float(counts.sum() - counts[np.arange(len(leaves)), self.value[leaves]].sum())

    # ------------------------------------------------------------------ transformation
    def simplify(self, X: np.ndarray) -> Tree:
        """Remove what the rows of ``X`` cannot tell apart, never changing a prediction on ``X``.

        An internal node one of whose children no row of ``X`` reaches is replaced by its
        other child; sibling leaves of the same class are merged into one leaf. One
        bottom-up pass reaches the fixed point, because both rules only look at subtrees
        that are already simplified and at the rows reaching them.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix (NaN where a cell is missing).

        Returns
        -------
        Tree
            The simplified tree, with the counts of this tree's nodes it keeps.
        """
        return tree_edits.simplify(self, X)

    def pruned(
        self,
        leaf_penalty: float,
        min_support: int,
        X: np.ndarray,
        y_index: np.ndarray,
        sample_weight: np.ndarray,
    ) -> Tree:
        """Prune this tree bottom-up into its cheapest subtree for the error objective.

        ``counts`` must be those of ``(X, y_index, sample_weight)``. A subtree becomes a leaf
        when a leaf costs no more (weighted error + ``leaf_penalty`` per leaf: cost-complexity
        pruning) or when one of its children holds fewer than ``min_support`` rows of
        positive weight; the result is the best pruning of this tree under both rules (a
        greedy start the penalised searches can take as their first incumbent).

        Parameters
        ----------
        leaf_penalty : float
            Cost of each leaf, in units of weight.
        min_support : int
            Fewest rows of positive weight a child of a split must hold.
        X : array-like of shape (n_rows, n_features)
            The training rows of the design matrix.
        y_index : array-like of int of shape (n_rows,)
            Class index of each row.
        sample_weight : array-like of shape (n_rows,)
            Weight of each row.

        Returns
        -------
        Tree
            The cheapest pruning of this tree.
        """
        return tree_edits.pruned(self, leaf_penalty, min_support, X, y_index, sample_weight)

    def map_features(
        self,
        column: np.ndarray,
        threshold: np.ndarray,
        feature_names: Sequence[str] | None = None,
        indicator: Sequence[int] | None = None,
        missing: np.ndarray | None = None,
    ) -> Tree:
        """Rewrite a tree over binary features ``b_j = [x[column[j]] > threshold[j]]``.

        A node testing ``b_j <= 0.5`` becomes ``x[column[j]] <= threshold[j]``: both send the
        same rows left, so predictions are unchanged. ``missing[j]`` says where feature ``j``
        puts rows missing that cell (``MISSING_LEFT``/``MISSING_RIGHT``, or a default).

        Parameters
        ----------
        column : array-like of int of shape (n_binary,)
            The design column each binary feature tests.
        threshold : array-like of float of shape (n_binary,)
            The threshold each binary feature compares its column with.
        feature_names : sequence of str, optional
            Names of the design columns.
        indicator : sequence of int, optional
            Indices of the design columns that are 0/1 indicators of a category.
        missing : array-like of int8 of shape (n_binary,), optional
            Where each binary feature sends a row whose cell is missing.

        Returns
        -------
        Tree
            The same tree over the design columns.
        """
        tree = self.copy()
        internal = tree.feature != LEAF
        j = tree.feature[internal]
        tree.feature[internal] = np.asarray(column)[j]
        tree.threshold[internal] = np.asarray(threshold, dtype=np.float64)[j]
        if missing is not None:
            tree.missing[internal] = np.asarray(missing, dtype=np.int8)[j]
            tree._settle_defaults()
        tree.feature_names = list(feature_names) if feature_names is not None else None
        tree.indicator = (
            frozenset(int(i) for i in indicator) if indicator is not None else frozenset()
        )
        return tree

    # ------------------------------------------------------------------ export
    def condition(self, node: int, go_left: bool) -> str:
        """The test of ``node`` as text, for its left (true) or right branch.

        Parameters
        ----------
        node : int
            An internal node.
        go_left : bool
            True for the left branch (the test holds), False for the right one.

        Returns
        -------
        str
            The test in the user's feature names, such as ``petal_length <= 2.45``.
        """
        text = self._test(node, go_left)
        return text + " or missing" if self._takes_missing(node, go_left) else text

    def _takes_missing(self, node: int, go_left: bool) -> bool:
        """Whether a learned side for missing values is this branch (and is worth saying:
        not for the test ``x is missing`` itself; a default side is never said)."""
        learned = int(self.missing[node]) == (MISSING_LEFT if go_left else MISSING_RIGHT)
        return learned and not self._tests_missing(node)

    def _tests_missing(self, node: int) -> bool:
        """Whether the node is the test ``x is missing`` (missing values right, none else)."""
        return bool(np.isposinf(self.threshold[node])) and self.missing[node] == MISSING_RIGHT

    def _test(self, node: int, go_left: bool) -> str:
        """The test of ``node`` as text, for one branch, without where missing values go."""
        if self._tests_missing(node):
            name = self._feature_name(int(self.feature[node]))
            return f"{name} is not missing" if go_left else f"{name} is missing"
        return self._univariate_test(int(self.feature[node]), self.threshold[node], go_left)

    def class_label(self, node: int) -> str:
        """The label a node predicts, as text.

        Parameters
        ----------
        node : int
            A node of the tree.

        Returns
        -------
        str
            The user's label of the node's class.
        """
        return str(self.classes[self.value[node]])

    def export_text(self) -> str:
        """An indented text drawing, one line per branch, in the user's names and labels.

        Returns
        -------
        str
            The drawing, lines separated by newlines.
        """
        lines: list[str] = []

        def walk(node: int, indent: str) -> None:
            if self.feature[node] == LEAF:
                lines.append(f"{indent}class: {self.class_label(node)}")
                return
            for go_left, child in ((True, self.left[node]), (False, self.right[node])):
                lines.append(f"{indent}{self.condition(node, go_left)}")
                walk(int(child), indent + "|   ")

        if self.n_nodes and self.feature[0] == LEAF:
            lines.append(f"class: {self.class_label(0)}")
        else:
            walk(0, "")
        return "\n".join(lines)

    def to_dot(self) -> str:
        """Graphviz DOT source: boxes for tests, ellipses for leaves, edges labelled yes/no.

        The edge that missing values learned to take also says ``or missing``.

        Returns
        -------
        str
            The source of a ``digraph``.
        """

        lines = ["digraph tree {", "  node [fontname=helvetica];"]
        for i in range(self.n_nodes):
            if self.feature[i] == LEAF:
                lines.append(f"  n{i} [shape=ellipse, label={dot_quote(self.class_label(i))}];")
            else:
                lines.append(f"  n{i} [shape=box, label={dot_quote(self._test(i, True))}];")
                for child, answer, go_left in (
                    (self.left[i], "yes", True),
                    (self.right[i], "no", False),
                ):
                    if self._takes_missing(i, go_left):
                        answer = dot_quote(f"{answer} or missing")
                    lines.append(f"  n{i} -> n{child} [label={answer}];")
        lines.append("}")
        return "\n".join(lines)

    def to_sklearn(self, n_features: int | None = None) -> Any:
        """The tree as a fitted scikit-learn ``DecisionTreeClassifier``.

        It predicts as this tree does (``predict``, ``predict_proba``, ``apply``, missing values
        routed the same), so that scikit-learn's ``plot_tree``, ``export_graphviz``,
        ``export_text`` and converters read it; see :func:`satdt.models.export.to_sklearn`.

        Parameters
        ----------
        n_features : int, optional
            Number of design columns (default: as many as ``feature_names``, else the
            highest column tested plus one).

        Returns
        -------
        sklearn.tree.DecisionTreeClassifier
            The fitted scikit-learn tree.
        """
        from .export import to_sklearn

        return to_sklearn(self, n_features)

    def to_onnx(self, n_features: int | None = None) -> Any:
        """The tree as an ONNX model; see :func:`satdt.models.export.to_onnx`.

        Parameters
        ----------
        n_features : int, optional
            Number of design columns (default: as many as ``feature_names``, else the
            highest column tested plus one).

        Returns
        -------
        onnx.ModelProto
            The model: input ``X`` (float32), outputs ``label`` and ``probabilities``.
        """
        from .export import to_onnx

        return to_onnx(self, n_features)

    # ------------------------------------------------------------------ the model's own
    def check(self) -> None:
        """Check the tree's arrays: one tree of nodes reached from the root, children after
        their parent, classes and counts that agree (:meth:`from_dict` checks every tree it
        reads so).

        Raises
        ------
        ModelError
            For the first rule the arrays break, naming the node, the value and the rule.
        """
        check_tree(self)

    def _check_width(self, width: int) -> None:
        tested = int(self.feature.max(initial=LEAF))
        if tested >= width:
            raise self._error(
                f"the tree tests column {tested}, but the data has {width} columns (0 to "
                f"{width - 1})"
            )

    def _arrays(self) -> dict[str, Any]:
        return {
            "feature": self.feature.tolist(),
            # JSON has no infinity: the threshold of "x is missing" is written as "inf"
            "threshold": [
                None if np.isnan(t) else "inf" if np.isposinf(t) else float(t)
                for t in self.threshold
            ],
            "left": self.left.tolist(),
            "right": self.right.tolist(),
            "value": self.value.tolist(),
            "counts": self.counts.tolist(),
            "missing": self.missing.tolist(),
        }

    @classmethod
    def _from_fields(cls, fields: Fields, shared: dict[str, Any]) -> Tree:
        feature = fields.integers("feature")
        n = len(feature)
        missing = fields.integers("missing", n, -128, 127, optional=True)
        tree = cls(
            feature,
            fields.numbers("threshold", n, _THRESHOLD_TOKENS),
            fields.integers("left", n),
            fields.integers("right", n),
            fields.integers("value", n),
            fields.matrix("counts", n, len(shared["classes"]), "class"),
            missing=np.full(n, DEFAULT_LEFT) if missing is None else missing,
            **shared,
        )
        if missing is None:  # a file older than the field: default sides, from the counts
            tree.check()
            tree._settle_defaults()
        return tree

    def _repr_items(self) -> list[str]:
        return [f"depth={self.depth}", f"n_nodes={self.n_nodes}", f"n_leaves={self.n_leaves}"]


def depth_lower_bound(n_classes_present: int) -> int:
    """A tree of depth k has at most 2^k leaves, and each class needs one."""
    return max(0, math.ceil(math.log2(max(n_classes_present, 1))))


def leaf_lower_bound(n_classes_present: int, depth: int) -> int:
    """A tree of depth at least ``depth`` has at least ``depth + 1`` leaves (a path of
    ``depth`` tests), and a consistent tree one leaf per class present."""
    return max(n_classes_present, depth + 1)
