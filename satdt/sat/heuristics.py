"""Heuristic trees for the SAT searches: first incumbents, repairs and guesses (NumPy only).

* :func:`greedy_tree`: a Gini tree grown until every leaf is pure (or ``max_depth`` is
  reached). It is consistent at once, so its depth is an upper bound on the minimum depth and
  the answer when a time limit stops the exact search.
* :func:`best_subtree`: the subtree of depth <= 3 with the fewest errors, exactly (class
  counts of feature pairs as popcounts of row bitsets).
* :func:`repair_bottom`: keeps the top of a perfect tree and re-grows its last two or three
  levels exactly, which often turns a SAT model consistent with the encoded rows only into a
  tree consistent with all of them (the loop then needs no more counterexamples).
* :func:`lookahead_tree`: a better heuristic tree of a given depth, for few features.
* :func:`root_candidates`: the best-looking root features, tried first under assumption.

The SAT side imports no numba, so these stay in NumPy.
"""

from __future__ import annotations

import time

import numpy as np

from ..models.tree import Tree
from ..prepare.rows import column_bitsets


def _best_split(B: np.ndarray, rows: np.ndarray, y: np.ndarray, n_classes: int) -> int:
    """The feature whose split of ``rows`` has the lowest weighted Gini impurity, or -1 if none
    splits. Class counts are integer sums over each class's rows (no float copy of ``B``)."""
    labels = y[rows]
    right = np.empty((B.shape[1], n_classes))  # (m, c) class counts on the right
    for c in range(n_classes):
        right[:, c] = B[rows[labels == c]].sum(axis=0, dtype=np.int64)
    total = np.bincount(labels, minlength=n_classes).astype(np.float64)
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


def greedy_tree(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    max_depth: int | None = None,
    deadline: float | None = None,
) -> Tree:
    """Grow a Gini tree on binary features ``B`` (rows go right when the feature is 1).

    Leaves predict their majority class (ties: the smallest class index). Growth stops at
    pure leaves, at leaves no feature splits, at ``max_depth``, and everywhere once the
    ``deadline`` (a ``time.perf_counter()`` value) has passed: the tree is then only a hint.
    """
    y = np.asarray(y, dtype=np.int64)

    def grow(rows: np.ndarray, depth: int):
        counts = np.bincount(y[rows], minlength=n_classes)
        majority = int(np.argmax(counts))
        if counts[majority] == len(rows) or (max_depth is not None and depth >= max_depth):
            return majority
        if deadline is not None and time.perf_counter() >= deadline:
            return majority
        f = _best_split(B, rows, y, n_classes)
        if f < 0:
            return majority
        goes_right = B[rows, f] == 1
        return (f, 0.5, grow(rows[~goes_right], depth + 1), grow(rows[goes_right], depth + 1))

    nested = grow(np.arange(B.shape[0]), 0)
    return Tree.from_nested(nested, classes=np.arange(n_classes))


# How many (feature pair, word) entries best_depth_two ANDs at once.
_PAIR_CHUNK = 1 << 20


def _errors(counts: np.ndarray) -> np.ndarray:
    """Misclassified rows of a leaf per class-count vector (last axis): total minus the largest."""
    return counts.sum(axis=-1) - counts.max(axis=-1)


def best_depth_two(B: np.ndarray, y: np.ndarray, n_classes: int) -> tuple[float, object]:
    """The subtree of depth <= 2 with the fewest errors on ``(B, y)``, exactly.

    Class counts for every pair of features (``N11[f, g, c]`` = rows with f = 1, g = 1 and
    class c) are popcounts of ANDed row bitsets; the other three quadrants follow from
    single-feature counts. Returns ``(errors, nested tree)`` with the nested form of
    :meth:`satdt.Tree.from_nested` (threshold 0.5 on binary features).
    """
    y = np.asarray(y, dtype=np.int64)
    onehot = np.eye(n_classes, dtype=np.float64)[y]
    total = onehot.sum(axis=0)
    if B.shape[1] == 0 or _errors(total) == 0:
        return float(_errors(total)), int(np.argmax(total))
    features = column_bitsets(B)  # (m, words)
    classes = column_bitsets(y[:, None] == np.arange(n_classes))  # (c, words)
    n1 = (
        np.bitwise_count(features[:, None, :] & classes[None, :, :]).sum(axis=-1).astype(np.float64)
    )
    m = features.shape[0]
    n11 = np.empty((m, m, n_classes))
    step = max(1, _PAIR_CHUNK // max(1, m * features.shape[1]))
    for start in range(0, m, step):
        both = features[start : start + step, None, :] & features[None, :, :]
        for c in range(n_classes):
            n11[start : start + step, :, c] = np.bitwise_count(both & classes[c]).sum(axis=-1)
    n10 = n1[:, None, :] - n11  # f = 1, g = 0
    n01 = n1[None, :, :] - n11  # f = 0, g = 1
    n00 = total - n1[:, None, :] - n1[None, :, :] + n11
    left = _errors(n00) + _errors(n01)  # (f, g): f = 0 side split by g
    right = _errors(n10) + _errors(n11)
    g_left = np.argmin(left, axis=1)
    h_right = np.argmin(right, axis=1)
    rows = np.arange(B.shape[1])
    per_root = left[rows, g_left] + right[rows, h_right]
    f = int(np.argmin(per_root))
    if per_root[f] >= _errors(total):
        return float(_errors(total)), int(np.argmax(total))

    def side(counts_zero: np.ndarray, counts_one: np.ndarray, g: int) -> object:
        leaf = counts_zero + counts_one
        if _errors(counts_zero) + _errors(counts_one) >= _errors(leaf):
            return int(np.argmax(leaf))
        return (g, 0.5, int(np.argmax(counts_zero)), int(np.argmax(counts_one)))

    g, h = int(g_left[f]), int(h_right[f])
    nested = (f, 0.5, side(n00[f, g], n01[f, g], g), side(n10[f, h], n11[f, h], h))
    return float(per_root[f]), nested


def _best_leaf(y: np.ndarray, n_classes: int) -> tuple[float, object]:
    counts = np.bincount(np.asarray(y, dtype=np.int64), minlength=n_classes)
    return float(len(y) - counts.max()), int(np.argmax(counts))


def _best_depth_one(B: np.ndarray, y: np.ndarray, n_classes: int) -> tuple[float, object]:
    """The best single split (or leaf) on ``(B, y)``."""
    onehot = np.eye(n_classes)[np.asarray(y, dtype=np.int64)]
    total = onehot.sum(axis=0)
    right = B.T.astype(np.float64) @ onehot
    left = total - right
    errors = _errors(left) + _errors(right)
    leaf = _best_leaf(y, n_classes)
    if B.shape[1] == 0 or errors.min() >= leaf[0]:
        return leaf
    f = int(np.argmin(errors))
    return float(errors[f]), (f, 0.5, int(np.argmax(left[f])), int(np.argmax(right[f])))


def best_subtree(B: np.ndarray, y: np.ndarray, n_classes: int, depth: int) -> tuple[float, object]:
    """The subtree of depth <= ``depth`` (at most 3) with the fewest errors on ``(B, y)``, exactly.

    Depth 3 tries every root feature with the best depth-2 subtrees below it.
    """
    if depth <= 1:
        return _best_depth_one(B, y, n_classes) if depth == 1 else _best_leaf(y, n_classes)
    if depth == 2:
        return best_depth_two(B, y, n_classes)
    best = best_depth_two(B, y, n_classes)
    if best[0] == 0:
        return best
    for f in range(B.shape[1]):
        right = B[:, f] == 1
        if right.all() or not right.any():
            continue
        lo = best_depth_two(B[~right], y[~right], n_classes)
        if lo[0] >= best[0]:
            continue
        hi = best_depth_two(B[right], y[right], n_classes)
        if lo[0] + hi[0] < best[0]:
            best = (lo[0] + hi[0], (f, 0.5, lo[1], hi[1]))
            if best[0] == 0:
                break
    return best


def repair_bottom(
    node_feature: np.ndarray,
    depth: int,
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    levels: int = 2,
) -> Tree | None:
    """Keep the top ``depth - levels`` levels of a perfect tree and re-grow the rest optimally.

    Returns the tree when it classifies every row of ``(B, y)`` correctly, else ``None``: a
    cheap way to turn a SAT model that is consistent with the encoded rows only into one that
    is consistent with all of them. ``levels`` is 2 or 3.
    """
    levels = min(levels, depth)
    if levels < 2:
        return None
    top = depth - levels
    node = np.ones(B.shape[0], dtype=np.int64)
    rows = np.arange(B.shape[0])
    for _ in range(top):
        node = 2 * node + B[rows, node_feature[node - 1]]
    bottoms = {}
    for q in range(2**top, 2 ** (top + 1)):
        here = np.flatnonzero(node == q)
        if len(here) == 0:
            bottoms[q] = 0
            continue
        errors, nested = best_subtree(B[here], y[here], n_classes, levels)
        if errors > 0:
            return None
        bottoms[q] = nested

    def build(q: int, level: int):
        if level == top:
            return bottoms[q]
        return (int(node_feature[q - 1]), 0.5, build(2 * q, level + 1), build(2 * q + 1, level + 1))

    return Tree.from_nested(build(1, 0), classes=np.arange(n_classes))


def lookahead_tree(B: np.ndarray, y: np.ndarray, n_classes: int, depth: int) -> Tree:
    """A tree of depth <= ``depth``: each top node takes the feature whose two depth-2 subtrees
    err least, and the last three levels are exact (:func:`best_subtree`).

    Costs about ``2^(depth-3) * m`` calls of :func:`best_depth_two`: for few features only.
    """
    y = np.asarray(y, dtype=np.int64)

    def grow(rows: np.ndarray, d: int):
        counts = np.bincount(y[rows], minlength=n_classes)
        if counts.max() == len(rows) or d == 0:
            return int(np.argmax(counts))
        if d <= 3:
            return best_subtree(B[rows], y[rows], n_classes, d)[1]
        best_score, best_feature = np.inf, -1
        for f in range(B.shape[1]):
            right = B[rows, f] == 1
            if right.all() or not right.any():
                continue
            score = best_depth_two(B[rows[~right]], y[rows[~right]], n_classes)[0]
            if score < best_score:
                score += best_depth_two(B[rows[right]], y[rows[right]], n_classes)[0]
            if score < best_score:
                best_score, best_feature = score, f
        if best_feature < 0:
            return int(np.argmax(counts))
        right = B[rows, best_feature] == 1
        return (best_feature, 0.5, grow(rows[~right], d - 1), grow(rows[right], d - 1))

    return Tree.from_nested(grow(np.arange(len(y)), depth), classes=np.arange(n_classes))


def root_candidates(B: np.ndarray, y: np.ndarray, n_classes: int, count: int) -> list[int]:
    """The ``count`` features whose best depth-2 subtrees on both sides err least (ties: lowest index)."""
    y = np.asarray(y, dtype=np.int64)
    scores = []
    for f in range(B.shape[1]):
        right = B[:, f] == 1
        if right.all() or not right.any():
            continue
        score = best_depth_two(B[~right], y[~right], n_classes)[0]
        score += best_depth_two(B[right], y[right], n_classes)[0]
        scores.append((score, f))
    return [f for _, f in sorted(scores)[:count]]
