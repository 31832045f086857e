"""Brute-force reference for the minimum-error tree of bounded depth (tiny data only)."""

from __future__ import annotations

import numpy as np


def _leaf_error(y: np.ndarray, w: np.ndarray, n_classes: int) -> float:
    if len(y) == 0:
        return 0.0
    per_class = np.bincount(y, weights=w, minlength=n_classes)
    return float(per_class.sum() - per_class.max())


def min_error(B: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, depth: int) -> float:
    """Smallest weighted error of a tree of depth <= ``depth`` over the binary features of B.

    best(rows, d) = min(leaf error, min over features f of best(rows with f = 0, d - 1) +
    best(rows with f = 1, d - 1)), by plain recursion over row subsets.
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
            value = min(value, best(rows[~ones], d - 1) + best(rows[ones], d - 1))
        return value

    return best(np.arange(len(y)), depth)
