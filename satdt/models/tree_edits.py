"""Simplifications of a tree that keep its predictions: :meth:`Tree.simplify
<satdt.Tree.simplify>` on the rows it must keep, :meth:`Tree.pruned <satdt.Tree.pruned>` for
the penalised objectives.

Both rebuild the tree as nested tuples (:meth:`Tree.from_nested <satdt.Tree.from_nested>`),
bottom-up over the node order (a child comes after its parent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .base import LEAF
from .tree_arrays import DEFAULT_LEFT

if TYPE_CHECKING:
    from .tree import Nested, Tree


def simplify(tree: Tree, X: np.ndarray) -> Tree:
    """The tree without the splits the rows of ``X`` cannot tell apart (see :meth:`Tree.simplify
    <satdt.Tree.simplify>`)."""
    X = np.asarray(X, dtype=np.float64)
    reached = np.zeros(tree.n_nodes, dtype=np.int64)
    leaves = tree.apply(X)
    # a node is reached iff one of the leaves below it is
    np.add.at(reached, leaves, 1)
    for i in range(tree.n_nodes - 1, -1, -1):  # children come after parents in preorder
        if tree.feature[i] != LEAF:
            reached[i] = reached[tree.left[i]] + reached[tree.right[i]]

    def rebuild(node: int) -> tuple[Nested, list[np.ndarray]]:
        if tree.feature[node] == LEAF:
            return int(tree.value[node]), [tree.counts[node]]
        lo, hi = int(tree.left[node]), int(tree.right[node])
        if reached[node] > 0 and reached[lo] == 0:
            return rebuild(hi)
        if reached[node] > 0 and reached[hi] == 0:
            return rebuild(lo)
        lo_tree, lo_counts = rebuild(lo)
        hi_tree, hi_counts = rebuild(hi)
        if not isinstance(lo_tree, tuple) and lo_tree == hi_tree:
            return lo_tree, [lo_counts[0] + hi_counts[0]]
        nested = (int(tree.feature[node]), float(tree.threshold[node]), lo_tree, hi_tree)
        if tree.missing[node] < DEFAULT_LEFT:
            nested = (*nested, int(tree.missing[node]))
        return nested, [tree.counts[node], *lo_counts, *hi_counts]

    nested, new_counts = rebuild(0)
    return tree._replace(nested, new_counts)


def pruned(
    tree: Tree,
    leaf_penalty: float,
    min_support: int,
    X: np.ndarray,
    y_index: np.ndarray,
    sample_weight: np.ndarray,
) -> Tree:
    """The cheapest pruning of the tree for the error objective (see :meth:`Tree.pruned
    <satdt.Tree.pruned>`)."""
    X = np.asarray(X, dtype=np.float64)
    weight = np.asarray(sample_weight, dtype=np.float64)
    rows = np.bincount(tree.apply(X)[weight > 0], minlength=tree.n_nodes)
    internal = tree.feature != LEAF
    for i in range(tree.n_nodes - 1, -1, -1):  # children come after parents in preorder
        if internal[i]:
            rows[i] = rows[tree.left[i]] + rows[tree.right[i]]

    def cheapest(node: int) -> tuple[Nested, float]:
        counts = tree.counts[node]
        leaf_cost = float(counts.sum() - counts.max(initial=0.0)) + leaf_penalty
        leaf = int(np.argmax(counts)) if counts.sum() > 0 else int(tree.value[node])
        if not internal[node]:
            return int(tree.value[node]), leaf_cost
        lo, hi = int(tree.left[node]), int(tree.right[node])
        if min(rows[lo], rows[hi]) < min_support:
            return leaf, leaf_cost
        lo_tree, lo_cost = cheapest(lo)
        hi_tree, hi_cost = cheapest(hi)
        if leaf_cost <= lo_cost + hi_cost:
            return leaf, leaf_cost
        nested = (int(tree.feature[node]), float(tree.threshold[node]), lo_tree, hi_tree)
        side = int(tree.missing[node])  # a learned side for missing values stays
        return (nested if side >= DEFAULT_LEFT else (*nested, side)), lo_cost + hi_cost

    nested, _ = cheapest(0)
    return tree._replace(nested).with_counts(X, y_index, weight)
