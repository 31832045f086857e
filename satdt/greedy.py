"""A greedy (CART-like) tree over binary features: the first incumbent of the SAT searches.

Grown with the Gini impurity until every leaf is pure (or ``max_depth`` is reached), it gives
a consistent tree at once, so its depth is an upper bound on the minimum depth and the
answer when a time limit stops the exact search. NumPy only: the SAT path imports no numba.
"""

from __future__ import annotations

import numpy as np

from .tree import Tree


def _best_split(B: np.ndarray, y_onehot: np.ndarray) -> int:
    """The feature whose split has the lowest weighted Gini impurity, or -1 if none splits."""
    right = B.T.astype(np.float64) @ y_onehot  # (m, c) class counts on the right
    total = y_onehot.sum(axis=0)
    left = total[None, :] - right
    n_right = right.sum(axis=1)
    n_left = left.sum(axis=1)
    splits = (n_right > 0) & (n_left > 0)
    if not splits.any():
        return -1
    with np.errstate(invalid="ignore", divide="ignore"):
        gini_r = n_right - (right**2).sum(axis=1) / np.where(n_right > 0, n_right, 1)
        gini_l = n_left - (left**2).sum(axis=1) / np.where(n_left > 0, n_left, 1)
    impurity = np.where(splits, gini_r + gini_l, np.inf)
    return int(np.argmin(impurity))


def greedy_tree(B: np.ndarray, y: np.ndarray, n_classes: int, max_depth: int | None = None) -> Tree:
    """Grow a Gini tree on binary features ``B`` (rows go right when the feature is 1).

    Leaves predict their majority class (ties: the smallest class index). Growth stops at
    pure leaves, at leaves no feature splits, and at ``max_depth``.
    """
    y = np.asarray(y, dtype=np.int64)
    onehot = np.eye(n_classes, dtype=np.float64)[y]

    def grow(rows: np.ndarray, depth: int):
        counts = onehot[rows].sum(axis=0)
        majority = int(np.argmax(counts))
        if counts[majority] == len(rows) or (max_depth is not None and depth >= max_depth):
            return majority
        f = _best_split(B[rows], onehot[rows])
        if f < 0:
            return majority
        goes_right = B[rows, f] == 1
        return (f, 0.5, grow(rows[~goes_right], depth + 1), grow(rows[goes_right], depth + 1))

    nested = grow(np.arange(B.shape[0]), 0)
    return Tree.from_nested(nested, classes=np.arange(n_classes))
