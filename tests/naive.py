"""Brute-force references over tiny binary data, by recursion over row subsets (not tree enumeration): min depth, min leaves, min error.

A row goes right at a feature when its value is 1. ``best(rows, d)`` ranges over every
feature at every node, so these are the true optima that every search must match.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np


def min_consistent_depth(B: np.ndarray, y: np.ndarray) -> float:
    """The minimum depth of a tree classifying every row correctly (inf if rows contradict)."""
    B = np.asarray(B)
    y = np.asarray(y)

    @cache
    def depth(rows: frozenset[int]) -> float:
        if len({int(y[i]) for i in rows}) <= 1:
            return 0
        best = math.inf
        for f in range(B.shape[1]):
            right = frozenset(i for i in rows if B[i, f] == 1)
            if 0 < len(right) < len(rows):
                best = min(best, 1 + max(depth(right), depth(rows - right)))
        return best

    return depth(frozenset(range(len(y))))


def min_consistent_leaves(B: np.ndarray, y: np.ndarray, max_depth: int) -> float:
    """The fewest leaves of a consistent tree of depth at most ``max_depth`` (inf if none)."""
    B = np.asarray(B)
    y = np.asarray(y)

    @cache
    def leaves(rows: frozenset[int], d: int) -> float:
        if len({int(y[i]) for i in rows}) <= 1:
            return 1
        if d == 0:
            return math.inf
        best = math.inf
        for f in range(B.shape[1]):
            right = frozenset(i for i in rows if B[i, f] == 1)
            if 0 < len(right) < len(rows):
                best = min(best, leaves(right, d - 1) + leaves(rows - right, d - 1))
        return best

    return leaves(frozenset(range(len(y))), max_depth)


def _leaf_error(y: np.ndarray, w: np.ndarray, n_classes: int) -> float:
    if len(y) == 0:
        return 0.0
    per_class = np.bincount(y, weights=w, minlength=n_classes)
    return float(per_class.sum() - per_class.max())


def min_error(
    B: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, depth: int, min_support: int = 1
) -> float:
    """Smallest weighted error of a tree of depth <= ``depth`` over the binary features of B.

    best(rows, d) = min(leaf error, min over features f of best(rows with f = 0, d - 1) +
    best(rows with f = 1, d - 1)), by plain recursion over row subsets. With ``min_support``
    above 1, a split is allowed only when each side holds at least that many rows of
    positive weight (DL8.5's minimum support; a single leaf is always allowed).
    """
    B = np.asarray(B, dtype=np.uint8)
    y = np.asarray(y, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)

    def best(rows: np.ndarray, d: int) -> float:
        value = _leaf_error(y[rows], w[rows], n_classes)
        if d == 0 or value == 0.0:
            return value
        for f in range(B.shape[1]):
            ones = B[rows, f] == 1
            if ones.all() or not ones.any():
                continue
            if min_support > 1:
                positive = w[rows] > 0
                if (positive & ones).sum() < min_support or (positive & ~ones).sum() < min_support:
                    continue
            value = min(value, best(rows[~ones], d - 1) + best(rows[ones], d - 1))
        return value

    return best(np.arange(len(y)), depth)


def expand_class_weights(B: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows carrying several class weights ``W (n, C)`` as one row per (row, class) of weight > 0.

    Returns ``(B, y, w)`` for :func:`min_error`, whose rows each have a single class.
    """
    B = np.asarray(B, dtype=np.uint8)
    W = np.asarray(W, dtype=np.float64)
    rows, classes = np.nonzero(W > 0)
    return B[rows], classes.astype(np.int64), W[rows, classes]


def depth2_tree_error(B: np.ndarray, W: np.ndarray, f: int, g_left: int, g_right: int) -> float:
    """Error of the tree of depth <= 2 with root f (-1: a leaf) and children g_left / g_right.

    Rows with ``B[:, f] == 0`` go to ``g_left`` (-1: a leaf), the others to ``g_right``; each
    leaf predicts its heaviest class under the class weights ``W (n, C)``.
    """
    B = np.asarray(B, dtype=np.uint8)
    W = np.asarray(W, dtype=np.float64)

    def leaf(mask: np.ndarray) -> float:
        per_class = W[mask].sum(axis=0)
        return float(per_class.sum() - per_class.max(initial=0.0))

    def node(mask: np.ndarray, g: int) -> float:
        if g < 0:
            return leaf(mask)
        return leaf(mask & (B[:, g] == 0)) + leaf(mask & (B[:, g] == 1))

    everything = np.ones(B.shape[0], dtype=bool)
    if f < 0:
        return leaf(everything)
    return node(B[:, f] == 0, g_left) + node(B[:, f] == 1, g_right)
