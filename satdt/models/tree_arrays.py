"""A tree's arrays: what their codes mean and the rules they follow.

:class:`~satdt.Tree` stores its nodes in flat arrays (see :mod:`satdt.models.tree`). The
searches build trees that follow the rules below by construction; a tree read from a
dictionary or a file (someone else's, maybe damaged or edited) is held to them by
:func:`check_tree` before it predicts anything: a node pointing back to an ancestor would make
every walk loop forever, a child index beyond the last node would fail deep in NumPy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import ModelError
from .base import LEAF

if TYPE_CHECKING:
    from .tree import Tree

# Where an internal node sends a row whose tested cell is missing (NaN): a side learned on
# training rows with missing values, or by default the side more training weight took.
# Bit 0 says right; the codes from 2 on are defaults.
MISSING_LEFT, MISSING_RIGHT, DEFAULT_LEFT, DEFAULT_RIGHT = 0, 1, 2, 3


def check_tree(tree: Tree) -> None:
    """Raise :class:`~satdt.core.errors.ModelError` for the first rule the tree's arrays break.

    The rules: one entry per node in every per-node array and a row of ``counts`` per node
    with a column per class; leaves (``feature == -1``) without children and predicting a
    class; internal nodes testing a column (within ``feature_names`` when named), with a
    threshold that is a number (``+inf`` for ``x is missing``) and a side for missing values;
    each child after its parent in the node order and every node but the root the child of
    exactly one node (so the nodes form one tree, reached from the root, with no cycle);
    finite, non-negative counts. Linear in the number of nodes.
    """
    _check_lengths(tree)
    _check_nodes(tree)
    _check_children(tree)
    _check_annotations(tree)


def _check_lengths(tree: Tree) -> None:
    n = len(tree.feature)
    if n == 0:
        raise ModelError("a tree has at least one node (a single leaf); it has none")
    for name in ("threshold", "left", "right", "value", "missing"):
        if getattr(tree, name).shape != (n,):
            raise ModelError(
                f"every per-node array of a tree has one entry per node: feature has {n}, "
                f"{name} has shape {getattr(tree, name).shape}"
            )
    if tree.classes.ndim != 1 or len(tree.classes) < 1:
        raise ModelError(f"a tree's classes are a non-empty list of labels; got {tree.classes!r}")
    if tree.counts.shape != (n, len(tree.classes)):
        raise ModelError(
            f"a tree's counts have a row per node and a column per class, shape "
            f"{(n, len(tree.classes))}; got {tree.counts.shape}"
        )


def _first(mask: np.ndarray) -> int | None:
    """The first index where ``mask`` holds (None: nowhere)."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) if len(hits) else None


def _check_nodes(tree: Tree) -> None:
    """Each node's own entries: a leaf's class, an internal node's column, threshold and side."""
    leaf = tree.feature == LEAF
    n_classes, names = len(tree.classes), tree.feature_names
    if (i := _first(tree.feature < LEAF)) is not None:
        raise ModelError(
            f"node {i} tests feature {tree.feature[i]}; a node tests a column index >= 0, or "
            "is a leaf (-1)"
        )
    if names is not None and (i := _first(tree.feature >= len(names))) is not None:
        raise ModelError(
            f"node {i} tests feature {tree.feature[i]}, but the tree names {len(names)} columns"
        )
    if (i := _first(leaf & ((tree.left != LEAF) | (tree.right != LEAF)))) is not None:
        raise ModelError(
            f"node {i} is a leaf (feature -1) with children {tree.left[i]} and {tree.right[i]}; "
            "a leaf's children are -1"
        )
    if (i := _first(leaf & ((tree.value < 0) | (tree.value >= n_classes)))) is not None:
        raise ModelError(
            f"leaf {i} predicts class index {tree.value[i]}, but the tree has {n_classes} "
            f"classes (indices 0 to {n_classes - 1})"
        )
    if (i := _first(~leaf & ((tree.value < LEAF) | (tree.value >= n_classes)))) is not None:
        raise ModelError(
            f"internal node {i} holds class index {tree.value[i]}; it must be -1 or a class "
            f"index below {n_classes}"
        )
    bad = ~leaf & (np.isnan(tree.threshold) | np.isneginf(tree.threshold))
    if (i := _first(bad)) is not None:
        raise ModelError(
            f"node {i} has threshold {tree.threshold[i]}; an internal node's threshold is a "
            "number (+inf only for the test 'x is missing')"
        )
    codes = (MISSING_LEFT, MISSING_RIGHT, DEFAULT_LEFT, DEFAULT_RIGHT)
    if (i := _first(~leaf & ~np.isin(tree.missing, codes))) is not None:
        raise ModelError(
            f"node {i} sends missing values to side {tree.missing[i]}; the sides are 0 or 1 "
            "(learned: left, right) and 2 or 3 (by default: left, right)"
        )


def _check_children(tree: Tree) -> None:
    """One tree, reached from the root: children after their parent, one parent each."""
    n = len(tree.feature)
    internal = np.flatnonzero(tree.feature != LEAF)
    for side in ("left", "right"):
        child = getattr(tree, side)[internal]
        if (k := _first((child <= internal) | (child >= n))) is not None:
            raise ModelError(_bad_child(tree, int(internal[k]), side, int(child[k])))
    children = np.concatenate([tree.left[internal], tree.right[internal]])
    parents = np.bincount(children, minlength=n)
    if (j := _first(parents[1:] != 1)) is not None:
        j += 1
        if parents[j] == 0:
            raise ModelError(
                f"node {j} is the child of no node, so no row reaches it from the root; a "
                "tree's nodes other than the root each have one parent"
            )
        both = np.concatenate([internal, internal])[children == j][:2].tolist()
        parents_of = (
            f"node {both[0]} twice" if both[0] == both[1] else f"nodes {both[0]} and {both[1]}"
        )
        raise ModelError(
            f"node {j} is the child of {parents_of}; a tree's nodes each have one parent, and "
            "a node's two children are two nodes"
        )


def _bad_child(tree: Tree, node: int, side: str, child: int) -> str:
    """Why a child index breaks the tree: beyond the nodes, the node itself, an ancestor."""
    n = len(tree.feature)
    where = f"node {node}'s {side} child is {child}"
    if child < 0 or child >= n:
        return f"{where}, outside the tree's nodes 0 to {n - 1}"
    if child == node:
        return f"{where}, the node itself (a cycle: a row would loop there forever)"
    if child in _ancestors(tree, node):
        return (
            f"{where}, an ancestor (a cycle: a row would loop forever; a tree's nodes each "
            "have one parent)"
        )
    return f"{where}, which comes before it; in a tree's node order a child follows its parent"


def _ancestors(tree: Tree, node: int) -> set[int]:
    """The ancestors of a node, by the children of the nodes before it (which are checked)."""
    parent: dict[int, int] = {}
    for i in range(node):
        if tree.feature[i] != LEAF:
            parent[int(tree.left[i])] = parent[int(tree.right[i])] = i
    found: set[int] = set()
    while node in parent and parent[node] not in found:  # unchecked children may loop
        node = parent[node]
        found.add(node)
    return found


def _check_annotations(tree: Tree) -> None:
    """Counts: finite, non-negative; indicator columns among the named ones."""
    if not np.all(np.isfinite(tree.counts)) or np.any(tree.counts < 0):
        raise ModelError("a tree's counts are training weights: finite numbers >= 0")
    names = tree.feature_names
    bad = [i for i in tree.indicator if i < 0 or (names is not None and i >= len(names))]
    if bad:
        width = f"0 to {len(names) - 1}" if names is not None else ">= 0"
        raise ModelError(f"the tree's indicator columns must be columns {width}; got {bad[:5]}")
