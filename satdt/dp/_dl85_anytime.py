"""DL8.5's anytime side: the best complete tree the current search path gives, and the
companion search run in slices between its nodes.

The search (:mod:`satdt.dp._dl85_search`) keeps one frame per node being expanded on the
current path; whenever a node on it improves (or finishes a left child), :func:`path_tree`
composes the best complete tree the path gives (finished subtrees, the rest as leaves), which
the search reports if it beats the incumbent. A :class:`Companion` (a portfolio's Blossom)
runs between the search's nodes and shares its recorder.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

LEAF = -1  # a leaf in the search's nested trees; an internal node is (feature, left, right)


class CompanionProved(Exception):
    """The search run alongside (a portfolio's companion) proved the incumbent optimal."""


class Companion(Protocol):
    """A search that runs in slices between DL8.5's nodes and shares the recorder.

    ``every``: seconds of DL8.5 between two calls of ``pause(now)``, which runs the companion
    for its slice and returns True when it proved the recorder's incumbent optimal.
    """

    every: float

    def pause(self, now: float) -> bool: ...


def path_tree(frames: list[list[Any]]) -> tuple[float, Any]:
    """The best complete tree the current path gives: ``(cost, nested tree)`` (``None``: none).

    A frame is ``[leaf, best, best_tree, feature, side, right_leaf, lv, lt, ...]``: the node's cost
    as a leaf, its best tree so far and its cost, the feature in progress, ``side`` -1 between
    features, 0 while the left child is searched and 1 while the right one is, the cost of the
    right rows as a leaf, and the left child's finished tree and cost. Walking the path up
    from the deepest node: a node's tree is the best of its leaf, its best tree so far, and
    its feature in progress with the tree below (the left child's tree and the right rows as
    a leaf, or the left child's finished tree and the right child's tree so far). So DL8.5
    reports trees before the root finishes its first feature, as Blossom does, and CA-DL8.5
    within each restart.
    """
    value, tree = math.inf, None
    for leaf, best, best_tree, f, side, right_leaf, lv, lt, *_ in reversed(frames):
        v, t = leaf, LEAF
        if best_tree is not None and best < v:
            v, t = best, best_tree
        if side == 0 and tree is not None and value + right_leaf < v:
            v, t = value + right_leaf, (f, tree, LEAF)
        elif side == 1:
            below, sub = (value, tree) if tree is not None else (right_leaf, LEAF)
            if lv + below < v:
                v, t = lv + below, (f, lt, sub)
        value, tree = v, t
    return value, tree
