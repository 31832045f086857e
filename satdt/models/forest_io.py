"""Forests in and out: BA-Trees' text format and scikit-learn's ensembles.

BA-Trees' format (the forests of Vidal & Schiffer, "Born-Again Tree Ensembles", ICML 2020,
in ``../shared/peers/ba-trees/forests``) is a header of six ``KEY: value`` lines and a line
describing the node columns, then one block per tree::

    [TREE 0]
    NB_NODES: 13
    0 IN 1 8 1 5.5 0 -1
    ...
    3 LN -1 -1 -1 -1 3 0

A node line is: node id, ``IN`` (internal) or ``LN`` (leaf), left child, right child,
feature, threshold, depth, class (leaves; ``-1`` on internal nodes). ``x[feature] <=
threshold`` goes left. The forests vote hard: one vote per tree, ties to the lowest class.
A file is untrusted input: :func:`read_forest` checks every line and names the line of the
first mistake. :func:`write_forest` writes what :func:`read_forest` reads back equal (and a
published forest back to the same bytes): thresholds as Python writes floats, exactly.

:func:`from_sklearn` reads a fitted ``RandomForestClassifier``, ``ExtraTreesClassifier``
or two-class ``GradientBoostingClassifier``. scikit-learn's trees compare the input *cast
to float32* with a float64 threshold; the forest keeps, for each threshold ``t``, the
largest float64 ``t'`` whose float32 rounding is ``<= t`` (:func:`float32_split`), so
that ``x <= t'`` on float64 inputs decides exactly as scikit-learn does, on every input.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..core.errors import DataError, ParameterError
from .forest import Forest
from .tree import LEAF

_HEADER = ("DATASET_NAME", "ENSEMBLE", "NB_TREES", "NB_FEATURES", "NB_CLASSES", "MAX_TREE_DEPTH")
_FORMAT_LINE = (
    "Format: node / node type (LN - leave node, IN - internal node) left child / right child "
    "/ feature / threshold / node_depth / majority class (starts with index 0)"
)


# ---------------------------------------------------------------------- BA-Trees' format
class _Lines:
    """The non-blank lines of a text with their 1-based line numbers."""

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self._lines: Iterator[tuple[int, str]] = (
            (n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if line.strip()
        )
        self.number = 0

    def next(self, what: str) -> str:
        line = self.left_over()
        if line is None:
            raise self.error(f"the file ends where {what} should be")
        return line

    def error(self, message: str) -> DataError:
        return DataError(f"{self.source}, line {self.number}: {message}")

    def left_over(self) -> str | None:
        """The next non-blank line (None at the end)."""
        for number, line in self._lines:
            self.number = number
            return line
        return None


def _int(lines: _Lines, token: str, what: str, low: int, high: int | None = None) -> int:
    try:
        value = int(token)
    except ValueError:
        raise lines.error(f"{what} must be an integer, got {token!r}") from None
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in {low}..{high}"
        raise lines.error(f"{what} must be {bound}, got {value}")
    return value


def _keyed(lines: _Lines, key: str) -> str:
    line = lines.next(f"'{key}:'")
    name, colon, rest = line.partition(":")
    if not colon or name.strip() != key:
        raise lines.error(f"expected '{key}: ...', got {line!r}")
    return rest.strip()


def parse_forest(text: str, source: str = "forest") -> tuple[Forest, dict[str, str]]:
    """The forest a text in BA-Trees' format describes, and its header.

    Parameters
    ----------
    text : str
        The file's text.
    source : str, default "forest"
        What error messages call the text (a file name).

    Returns
    -------
    forest : Forest
        The trees, with hard votes, over features ``f0 .. f{p-1}`` and classes ``0 .. k-1``.
    header : dict of str to str
        The header's values as written (``DATASET_NAME``, ``ENSEMBLE``, ...).

    Raises
    ------
    DataError
        When a line breaks the format; the message names the line.
    """
    lines = _Lines(text, source)
    header: dict[str, str] = {}
    numbers: dict[str, int] = {}
    lowest = {"NB_TREES": 1, "NB_FEATURES": 1, "NB_CLASSES": 1, "MAX_TREE_DEPTH": 0}
    for key in _HEADER:
        header[key] = _keyed(lines, key)
        if key in lowest:  # checked on its own line
            top = 127 if key == "NB_CLASSES" else None
            numbers[key] = _int(lines, header[key], key, lowest[key], top)
    n_trees, n_features = numbers["NB_TREES"], numbers["NB_FEATURES"]
    n_classes, max_depth = numbers["NB_CLASSES"], numbers["MAX_TREE_DEPTH"]
    if not lines.next("the 'Format:' line").startswith("Format"):
        raise lines.error("expected the line 'Format: node / node type ...'")
    columns: list[list[Any]] = [[], [], [], [], []]  # feature, threshold, left, right, class
    roots = []
    for t in range(n_trees):
        if lines.next(f"'[TREE {t}]'").replace(" ", "") != f"[TREE{t}]":
            raise lines.error(f"expected '[TREE {t}]'")
        n_nodes = _int(lines, _keyed(lines, "NB_NODES"), "NB_NODES", 1)
        roots.append(len(columns[0]))
        depth = [0] * n_nodes
        for i in range(n_nodes):
            node = _parse_node(lines, i, n_nodes, n_features, n_classes)
            f, threshold, lo, hi, c, d = node
            if d != depth[i]:
                raise lines.error(f"node {i} has depth {depth[i]} in its tree, not {d}")
            if lo >= 0:
                depth[lo] = depth[hi] = d + 1
            shift = roots[-1] if lo >= 0 else 0
            for column, item in zip(
                columns, (f, threshold, lo + shift, hi + shift, c), strict=True
            ):
                column.append(item)
        if max(depth) > max_depth:
            raise lines.error(f"tree {t} has depth {max(depth)}, above MAX_TREE_DEPTH {max_depth}")
    extra = lines.left_over()
    if extra is not None:
        raise lines.error(f"unexpected text after the last tree: {extra!r}")
    feature, threshold, left, right, leaf_class = columns
    value = np.zeros((len(feature), n_classes))
    leaves = [i for i, f in enumerate(feature) if f == LEAF]
    value[leaves, [leaf_class[i] for i in leaves]] = 1.0
    try:
        forest = Forest(
            feature, threshold, left, right, value, roots, n_features, np.arange(n_classes), "hard"
        )
    except ValueError as error:  # e.g. a node with two parents
        raise DataError(f"{source}: {error}") from None
    return forest, header


def _parse_node(
    lines: _Lines, i: int, n_nodes: int, n_features: int, n_classes: int
) -> tuple[int, float, int, int, int, int]:
    """One node line: (feature, threshold, left, right, class, depth); leaves have feature,
    children and class ``-1``... except the class, and a NaN threshold."""
    tokens = lines.next(f"node {i}").split()
    if len(tokens) != 8:
        raise lines.error(f"a node line has 8 columns, got {len(tokens)}")
    _int(lines, tokens[0], "the node id", i, i)
    kind = tokens[1]
    depth = _int(lines, tokens[6], "the depth", 0)
    if kind == "LN":
        for token, what in zip(tokens[2:5], ("left child", "right child", "feature"), strict=True):
            _int(lines, token, f"a leaf's {what}", -1, -1)
        _float(lines, tokens[5])
        leaf_class = _int(lines, tokens[7], "a leaf's class", 0, n_classes - 1)
        return LEAF, math.nan, -1, -1, leaf_class, depth
    if kind != "IN":
        raise lines.error(f"the node type must be IN or LN, got {kind!r}")
    left = _int(lines, tokens[2], "the left child", i + 1, n_nodes - 1)
    right = _int(lines, tokens[3], "the right child", i + 1, n_nodes - 1)
    if left == right:
        raise lines.error("both children are the same node")
    feature = _int(lines, tokens[4], "the feature", 0, n_features - 1)
    threshold = _float(lines, tokens[5])
    _int(lines, tokens[7], "an internal node's class", -1, -1)
    return feature, threshold, left, right, -1, depth


def _float(lines: _Lines, token: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise lines.error(f"a threshold must be a number, got {token!r}") from None
    if not math.isfinite(value):
        raise lines.error(f"a threshold must be finite, got {token!r}")
    return value


def read_forest(path: str | os.PathLike[str]) -> Forest:
    """Read a forest written in BA-Trees' text format (see the module notes).

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    Forest
        Its trees, voting hard (one vote per tree, ties to the lowest class index).

    Raises
    ------
    DataError
        When the file cannot be read or breaks the format (the message names the line).
    """
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise DataError(f"cannot read the forest file {os.fspath(path)!r}: {error}") from None
    return parse_forest(text, os.fspath(path))[0]


def forest_text(forest: Forest, dataset: str = "satdt", ensemble: str = "RF") -> str:
    """A hard-vote forest in BA-Trees' text format (what :func:`write_forest` writes).

    Raises
    ------
    ParameterError
        When the forest does not vote hard (the format holds one class per leaf).
    """
    if forest.vote != "hard":
        raise ParameterError(
            f"BA-Trees' format holds one class per leaf (hard votes); this forest votes "
            f"{forest.vote!r}"
        )
    depths = forest.depths()
    out = [
        f"DATASET_NAME: {dataset}",
        f"ENSEMBLE: {ensemble}",
        f"NB_TREES: {forest.n_trees}",
        f"NB_FEATURES: {forest.n_features}",
        f"NB_CLASSES: {forest.n_classes}",
        f"MAX_TREE_DEPTH: {int(depths.max())}",
        _FORMAT_LINE,
        "",
    ]
    for t in range(forest.n_trees):
        nodes = forest.tree_nodes(t)
        out += [f"[TREE {t}]", f"NB_NODES: {len(nodes)}"]
        for i in nodes:
            local = i - nodes.start
            if forest.feature[i] == LEAF:
                leaf_class = int(np.argmax(forest.value[i]))
                out.append(f"{local} LN -1 -1 -1 -1 {depths[i]} {leaf_class}")
            else:
                lo, hi = forest.left[i] - nodes.start, forest.right[i] - nodes.start
                threshold = repr(float(forest.threshold[i]))
                out.append(f"{local} IN {lo} {hi} {forest.feature[i]} {threshold} {depths[i]} -1")
        out.append("")
    return "\n".join(out) + "\n"


def write_forest(
    path: str | os.PathLike[str], forest: Forest, dataset: str = "satdt", ensemble: str = "RF"
) -> None:
    """Write a hard-vote forest in BA-Trees' text format.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    forest : Forest
        A forest voting hard (a born-again tree: :meth:`satdt.models.forest.Forest.from_tree`, with
        ``ensemble="BA"`` as BA-Trees writes its trees).
    dataset, ensemble : str
        The header's ``DATASET_NAME`` and ``ENSEMBLE``.
    """
    text = forest_text(forest, dataset, ensemble)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


# ---------------------------------------------------------------------- scikit-learn
def float32_split(threshold: np.ndarray) -> np.ndarray:
    """For each threshold ``t``, the largest float64 ``t'`` with ``float32(x) <= t`` for
    every float64 ``x <= t'`` (and for no larger ``x``).

    scikit-learn's trees cast inputs to float32 before comparing them with ``t``; rounding
    to float32 is monotone, so those comparisons are ``x <= t'``. With ``f`` the largest
    float32 ``<= t`` and ``g`` the next float32, the inputs rounding to ``f`` or below are
    those below the midpoint of ``f`` and ``g``, and the midpoint itself when ties-to-even
    rounds it to ``f`` (``f``'s last bit is 0).
    """
    t = np.asarray(threshold, dtype=np.float64)
    f = t.astype(np.float32)
    f = np.where(f.astype(np.float64) > t, np.nextafter(f, np.float32(-np.inf)), f)
    g = np.nextafter(f, np.float32(np.inf))
    top = np.isinf(g)  # f is float32's largest: inputs round to it up to 2**103 above it
    mid = np.where(
        top,
        f.astype(np.float64) + 2.0**103,
        (f.astype(np.float64) + np.where(top, 0, g).astype(np.float64)) / 2,
    )
    odd = (f.view(np.uint32) & 1) == 1
    return np.where(odd, np.nextafter(mid, -np.inf), mid)


def from_sklearn(estimator: Any, vote: str | None = None) -> Forest:
    """A fitted scikit-learn ensemble as a :class:`Forest` that decides as it predicts.

    Parameters
    ----------
    estimator : RandomForestClassifier, ExtraTreesClassifier or GradientBoostingClassifier
        Fitted, one output; gradient boosting with two classes and its default (or
        ``"zero"``) initial estimator.
    vote : {"soft", "hard"}, optional
        Random forests and extra trees: ``"soft"`` (default) averages the trees'
        probabilities as scikit-learn's ``predict`` does; ``"hard"`` gives each tree one
        vote, ties to the lowest class index, as BA-Trees does. Gradient boosting decides
        by the sign of its decision function: leave ``vote`` unset.

    Returns
    -------
    Forest
        Its trees over the estimator's features (``feature_names_in_`` when it has them).

    Raises
    ------
    ParameterError
        For another estimator, an unfitted one, several outputs, multi-class gradient
        boosting, a gradient boosting whose initial prediction depends on the input, or a
        ``vote`` that does not apply.
    """
    try:
        from sklearn.dummy import DummyClassifier
        from sklearn.ensemble import (
            ExtraTreesClassifier,
            GradientBoostingClassifier,
            RandomForestClassifier,
        )
    except ImportError:  # pragma: no cover - scikit-learn is optional
        raise ParameterError("from_sklearn needs scikit-learn: pip install scikit-learn") from None
    name = type(estimator).__name__
    if isinstance(estimator, RandomForestClassifier | ExtraTreesClassifier):
        if vote not in (None, "soft", "hard"):
            raise ParameterError(f"vote must be 'soft' or 'hard' for a {name}, got {vote!r}")
        _fitted(estimator, "estimators_", name)
        if estimator.n_outputs_ != 1:
            raise ParameterError(f"a {name} with {estimator.n_outputs_} outputs: one only")
        trees = [e.tree_ for e in estimator.estimators_]
        return _assemble(estimator, trees, vote or "soft")
    if isinstance(estimator, GradientBoostingClassifier):
        if vote is not None:
            raise ParameterError(
                "a GradientBoostingClassifier decides by the sign of its decision function: "
                f"leave vote unset (got {vote!r})"
            )
        _fitted(estimator, "estimators_", name)
        if len(estimator.classes_) != 2:
            raise ParameterError(
                f"a GradientBoostingClassifier with {len(estimator.classes_)} classes: only two "
                "classes (one tree per stage) are supported"
            )
        if estimator.init_ == "zero":
            init = 0.0
        elif isinstance(estimator.init_, DummyClassifier):
            zeros = np.zeros((1, estimator.n_features_in_))
            init = float(estimator._raw_predict_init(zeros)[0, 0])
        else:
            raise ParameterError(
                "a GradientBoostingClassifier with its own init estimator: its initial "
                "prediction depends on the input; use the default init or init='zero'"
            )
        trees = [e.tree_ for e in estimator.estimators_[:, 0]]
        return _assemble(estimator, trees, "sum", (float(estimator.learning_rate), init))
    raise ParameterError(
        f"born-again trees reproduce a RandomForestClassifier, an ExtraTreesClassifier or a "
        f"two-class GradientBoostingClassifier; got a {name}"
    )


def _fitted(estimator: Any, attribute: str, name: str) -> None:
    if not hasattr(estimator, attribute):
        raise ParameterError(f"the {name} is not fitted: call fit first")


def _assemble(
    estimator: Any, trees: list[Any], vote: str, boosting: tuple[float, float] = (1.0, 0.0)
) -> Forest:
    """Concatenate scikit-learn's tree arrays (``tree_`` objects) into one forest; a
    boosting's ``(learning rate, initial prediction)`` becomes products in its leaves and
    a first tree of one leaf."""
    scale, init = boosting
    feature, threshold, left, right, values, roots = [], [], [], [], [], []
    start = 0
    if vote == "sum":
        feature.append(np.array([LEAF]))
        threshold.append(np.array([np.nan]))
        left.append(np.array([-1]))
        right.append(np.array([-1]))
        values.append(np.array([[init]]))
        roots.append(0)
        start = 1
    for tree in trees:
        leaf = tree.children_left == -1
        roots.append(start)
        feature.append(np.where(leaf, LEAF, tree.feature))
        threshold.append(np.where(leaf, np.nan, float32_split(tree.threshold)))
        left.append(np.where(leaf, -1, tree.children_left + start))
        right.append(np.where(leaf, -1, tree.children_right + start))
        raw = tree.value[:, 0, :].astype(np.float64)
        if vote == "sum":  # the products scikit-learn adds (predict_stages)
            value = scale * raw[:, :1]
        else:  # the probabilities as DecisionTreeClassifier.predict_proba normalises them
            total = raw.sum(axis=1)[:, np.newaxis]
            total[total == 0.0] = 1.0
            value = raw / total
            if vote == "hard":  # the tree's own prediction: its first most probable class
                value = np.eye(raw.shape[1])[np.argmax(value, axis=1)]
        values.append(np.where(leaf[:, None], value, 0.0))
        start += len(leaf)
    names = getattr(estimator, "feature_names_in_", None)
    return Forest(
        np.concatenate(feature),
        np.concatenate(threshold),
        np.concatenate(left),
        np.concatenate(right),
        np.concatenate(values),
        roots,
        int(estimator.n_features_in_),
        estimator.classes_,
        vote,
        None if names is None else [str(n) for n in names],
    )
