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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from . import diagram_edits
from .base import LEAF, Model, dot_quote, format_threshold
from .diagram_checks import DiagramError, check_arrays
from .diagram_edits import _reach
from .fields import Fields

if TYPE_CHECKING:
    from .tree import Tree

FORMAT = "satdt-diagram"


def terminal_code(class_index: int) -> int:
    """The successor value that means the terminal of ``class_index`` (``-1 - class_index``)."""
    return -1 - int(class_index)


class Diagram(Model):
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

    kind: ClassVar[str] = "diagram"
    header: ClassVar[dict[str, Any]] = {"format": FORMAT, "model": "diagram", "version": 1}
    _error = DiagramError

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
    def multivariate(self) -> bool:
        """Whether some node tests a hyperplane rather than one feature."""
        return self.coef is not None

    # ------------------------------------------------------------------ prediction
    def _rows(self, X: np.ndarray) -> np.ndarray:
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
        return self._holds(np.asarray(X, dtype=np.float64), np.arange(len(nodes)), nodes)

    def _holds(self, X: np.ndarray, rows: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        f = self.feature[nodes]
        uni = f != LEAF
        out = np.empty(len(nodes), dtype=bool)
        at = np.flatnonzero(uni)
        out[at] = X[rows[at], f[at]] <= self.threshold[nodes[at]]
        if self.coef is not None:
            at = np.flatnonzero(~uni)
            values = np.einsum("ij,ij->i", X[rows[at]], self.coef[nodes[at]])
            out[at] = values <= self.threshold[nodes[at]]
        return out

    def _start(self) -> int:
        return self.root

    def _internal(self, state: np.ndarray) -> np.ndarray:
        return state >= 0

    def _successors(self) -> tuple[np.ndarray, np.ndarray]:
        return self.low, self.high

    def _end_class(self, end: np.ndarray) -> np.ndarray:
        return -1 - end

    def _end_counts(self, end: np.ndarray) -> np.ndarray | None:
        return None if self.terminal_counts is None else self.terminal_counts[-1 - end]

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
        return self.predict_index(X)

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
        return diagram_edits.simplify(self, X)

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
        return diagram_edits.unscale(self, lo, hi)

    # ------------------------------------------------------------------ export
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
        if f != LEAF:
            return self._univariate_test(f, self.threshold[node], go_low)
        plane = self.coef[node] if self.coef is not None else np.zeros(self.n_features)
        terms = []
        for j in np.flatnonzero(plane):
            c = float(plane[j])
            size = "" if abs(c) == 1.0 else f"{format_threshold(abs(c))} * "
            sign = "-" if c < 0 else "+"
            terms.append((sign, f"{size}{self._feature_name(int(j))}"))
        if not terms:
            lhs = "0"
        else:
            lhs = ("-" if terms[0][0] == "-" else "") + terms[0][1]
            lhs += "".join(f" {sign} {term}" for sign, term in terms[1:])
        t = format_threshold(self.threshold[node])
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

        def ident(successor: int) -> str:
            return f"n{successor}" if successor >= 0 else f"c{-1 - successor}"

        lines = ["digraph diagram {", "  node [fontname=helvetica];"]
        seen = self.reachable()
        nodes = np.flatnonzero(seen)
        for layer in np.unique(self.layer[nodes]):
            members = nodes[self.layer[nodes] == layer]
            lines.append("  { rank=same; " + " ".join(f"n{i};" for i in members) + " }")
        for i in nodes:
            label = dot_quote(f"{self.node_name(i)}\n{self.condition(i)}")
            lines.append(f"  n{i} [shape=box, label={label}];")
        succ = np.concatenate([self.low[seen], self.high[seen], [self.root]])
        terminals = np.unique(-1 - succ[succ < 0])
        for k in terminals:
            lines.append(f"  c{k} [shape=ellipse, label={dot_quote(str(self.classes[k]))}];")
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

    # ------------------------------------------------------------------ the model's own
    def check(self) -> None:
        """Check the diagram's arrays: nodes sorted by layer, successors in later layers or
        class terminals, finite tests (the constructor checks every diagram so).

        Raises
        ------
        ModelError
            For the first rule the arrays break (a ``DiagramError``), naming the node, the
            value and the rule.
        """
        check_arrays(self)

    def _check_width(self, width: int) -> None:
        if self.n_features != width:
            raise DiagramError(
                f"the diagram reads {self.n_features} columns, but the data has {width}"
            )

    def _arrays(self) -> dict[str, Any]:
        return {
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
    def _from_fields(cls, fields: Fields, shared: dict[str, Any]) -> Diagram:
        layer = fields.integers("layer")
        n, n_classes = len(layer), len(shared["classes"])
        n_features = fields.integer("n_features", 0)
        return cls(
            layer,
            fields.integers("feature", n),
            fields.numbers("threshold", n),
            fields.integers("low", n),
            fields.integers("high", n),
            coef=fields.matrix("coef", n, n_features, "feature"),
            n_features=n_features,
            counts=fields.matrix("counts", n, n_classes, "class"),
            terminal_counts=fields.matrix("terminal_counts", n_classes, n_classes, "class"),
            root=fields.integer("root"),
            **shared,
        )

    def _repr_items(self) -> list[str]:
        kind = "multivariate" if self.multivariate else "univariate"
        return [
            f"depth={self.depth}",
            f"n_splits={self.n_splits}",
            f"widths={self.widths}",
            f"n_classes={self.n_classes}",
            kind,
        ]
