"""The greedy numeric tree in NumPy alone: a twin of :func:`satdt.dp.greedy._grow_numba`.

satdt must give a real tree on a fresh install, before any Numba kernel is compiled:
:func:`grow_numpy` grows exactly the tree of the Numba kernels
(:mod:`satdt.dp._greedy_kernels`): the same Gini splits and tie rules, the same leaves, the
same preorder, the same balanced rule after the deadline. It never imports Numba.

The kernels grow the tree depth-first, node by node, which Python cannot afford; here it
grows breadth-first, one level of open nodes at a time, each step a few array operations:

* each column is sorted once (:func:`_presort`) into two ``(p, n)`` arrays, as the kernels
  do: the rows by value, and their codes ``rank << shift | class`` (equal values, equal
  ranks). Each column keeps the rows grouped by open node, sorted within the node;
* per level, the score of every gap between two rows of a node is computed for all columns
  at once, block of positions by block, from cumulative class weights; the best gap of each
  node is a grouped maximum (:func:`_gini_level`);
* the next level's rows are a stable partition of each column (the open left children
  first, then the open right children), so no column is sorted again;
* the nodes are renumbered in preorder at the end (:func:`_build`).

With unit or integer weights every sum is exact, so each score is bit for bit the kernels'
and exact ties break the same way. With other weights the sums are added in another order:
scores may differ in their last bits, and a tie within rounding may go the other way (the
class weights of the nodes, summed in the kernels' order, still agree to the last bit). The
kernels stop a node's search once a score reaches the total weight; no score exceeds it
(bar rounding), so the full search here finds the same split.

Memory: the two ``(p, n)`` arrays, a few arrays of ``n`` entries, and the Gini search's work
arrays of ``O(n_classes)`` blocks (never ``n * p * n_classes``).
"""

from __future__ import annotations

import time

import numpy as np

from ..models.tree import LEAF, Tree
from ..prepare.binarize import readable_thresholds

# Codes rank << shift | class are int32 while they stay below this, else int64.
_CODE_LIMIT = 2**31
# Positions times columns scored at once by the Gini search (work arrays: n_classes + 9 MB).
_BLOCK = 1 << 17
# Where each row of a level goes: to an open left child, an open right one, or neither.
_LEFT, _RIGHT, _GONE = 0, 1, 2


def grow_numpy(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    w: np.ndarray,
    max_depth: int | None,
    deadline: float | None,
) -> tuple[Tree, bool]:
    """The tree of :func:`satdt.dp.greedy._grow_numba` and whether the deadline forced the balanced rule.

    The inputs are those of ``_grow_numba`` (after ``_check_inputs``): ``X`` float64, C-contiguous and
    finite, ``(n, p)``; ``y`` int32 class indices; ``w`` float64 weights, empty for all 1;
    ``max_depth`` a non-negative int or None; ``deadline`` a :func:`time.perf_counter` value
    or None, looked at before each level and each block of the Gini search. Once it has
    passed, the remaining splits follow the balanced rule (:func:`_balanced_level`).
    """
    n, p = X.shape
    n_classes = int(n_classes)
    classes = np.arange(n_classes)
    if n == 0:
        return Tree.single_leaf(0, classes), False
    root = np.bincount(y, weights=w if w.size else None, minlength=n_classes)
    counts = root.astype(np.float64)[None]
    opened = _opens(counts, 0, max_depth, p)
    if not opened[0]:
        return _build(X, 1, counts, [], classes), _passed(deadline)
    shift = (n_classes - 1).bit_length()
    rows, codes = _presort(X, y, shift)
    fell_back = _passed(deadline)

    # The open nodes of the level: their ids (in creation order), class weights, and the
    # positions starts[a]:starts[a + 1] of every column holding the rows of node a.
    ids = np.zeros(1, dtype=np.int64)
    starts = np.array([0, n])
    n_nodes = 1
    all_counts = [counts]
    splits = []  # per level: (node ids, column, row below, row above, first child id)
    side = np.empty(n, dtype=np.uint8)  # _LEFT, _RIGHT or _GONE for each row of the level
    depth = 0
    while ids.size:
        counts = counts[opened]
        m = starts[-1]
        fell_back = fell_back or _passed(deadline)
        found = None
        if not fell_back:
            found = _gini_level(rows[:, :m], codes[:, :m], w, shift, starts, counts, deadline)
        if found is None:
            fell_back = True
            found = _balanced_level(rows[:, :m], codes[:, :m], w, shift, starts, counts)
        column, cut = found
        split = np.flatnonzero(column >= 0)
        counts, moved, child, below, above = _split(
            rows, codes, w, shift, n_classes, starts, split, column[split], cut[split]
        )
        splits.append((ids[split], column[split], below, above, n_nodes))
        all_counts.append(counts)
        depth += 1
        opened = _opens(counts, depth, max_depth, p)
        n_split = split.size
        ids = n_nodes + np.flatnonzero(opened)  # the open left children, then the right ones
        n_nodes += 2 * n_split
        if ids.size:
            side[rows[0, :m]] = _GONE
            side[moved] = np.where(opened[child], child >= n_split, _GONE)
            sizes = np.bincount(child, minlength=2 * n_split)[opened]
            starts = np.concatenate(([0], np.cumsum(sizes)))
            _partition(rows, codes, m, side, starts[np.count_nonzero(opened[:n_split])], starts[-1])
    return _build(X, n_nodes, np.concatenate(all_counts), splits, classes), fell_back


def _passed(deadline: float | None) -> bool:
    """True once the deadline has passed."""
    return deadline is not None and time.perf_counter() >= deadline


def _opens(counts: np.ndarray, depth: int, max_depth: int | None, p: int) -> np.ndarray:
    """Which nodes of these class weights are split further (else they are leaves).

    A node is a leaf when it is pure (fewer than two classes of positive weight), at
    ``max_depth``, or when there is no column; identical rows are found by the search.
    """
    impure = np.count_nonzero(counts > 0.0, axis=1) >= 2
    return impure & (depth != max_depth) & (p > 0)


def _presort(X: np.ndarray, y: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """``(p, n)`` arrays: per column the rows by value (equal values by row), and their codes.

    The code of a row is ``rank << shift | y``: its value's rank among the column's distinct
    values (``-0.0`` counts as ``0.0``) and its class. The order is that of the kernels'
    stable sorts, found by a fast sort of the keys ``high bits of the value | row``: the
    values as unsigned integers in the same order (negative ones: all bits flipped; others:
    the sign bit set), their lowest bits replaced by the row. Only where neighbours have equal
    high bits are the whole values read again (often nowhere); the rare runs of values
    differing only in the low bits are then sorted anew.
    """
    n, p = X.shape
    rows = np.empty((p, n), dtype=np.int32)
    codes = np.empty((p, n), dtype=np.int32 if (n << shift) < _CODE_LIMIT else np.int64)
    low_bits = np.uint64(max(1, (n - 1).bit_length()))
    row = np.arange(n, dtype=np.uint64)
    values, key, high = np.empty(n), np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64)
    change = np.empty(max(n - 1, 0), dtype=bool)  # the value changes after this position
    rank = np.zeros(n, dtype=np.int64)
    for c in range(p):
        np.add(X[:, c], 0.0, out=values)  # -0.0 + 0.0 == +0.0
        bits = values.view(np.uint64)
        np.right_shift(bits, np.uint64(63), out=key)
        np.multiply(key, np.uint64(2**63 - 1), out=key)
        np.bitwise_or(key, np.uint64(2**63), out=key)
        np.bitwise_xor(key, bits, out=key)
        key >>= low_bits
        key <<= low_bits
        key |= row
        key.sort()
        np.right_shift(key, low_bits, out=high)
        np.not_equal(high[1:], high[:-1], out=change)
        rows[c] = key & ((np.uint64(1) << low_bits) - np.uint64(1))
        order = rows[c]
        ties = change.size - np.count_nonzero(change)
        if 8 * ties > n:  # many: compare every value with the next one
            ordered = values[order]
            wrong = np.flatnonzero(ordered[1:] < ordered[:-1])
            if wrong.size:
                _reorder(values, order, change, wrong)
                ordered = values[order]
            np.not_equal(ordered[1:], ordered[:-1], out=change)
        elif ties:  # few: compare those neighbours only
            tie = np.flatnonzero(~change)
            wrong = tie[values[order[tie]] > values[order[tie + 1]]]
            if wrong.size:
                _reorder(values, order, change, wrong)
            change[tie] = values[order[tie]] != values[order[tie + 1]]
        np.cumsum(change, out=rank[1:])
        np.left_shift(rank, shift, out=codes[c], casting="unsafe")
        codes[c] |= y[order]
    return rows, codes


def _reorder(values: np.ndarray, order: np.ndarray, change: np.ndarray, wrong: np.ndarray) -> None:
    """Sort by value, then row, the runs of equal high bits (``change`` False inside) that
    hold the out-of-order positions ``wrong``."""
    run = np.zeros(order.size, dtype=np.int64)
    np.cumsum(change, out=run[1:])
    redo = np.flatnonzero(np.isin(run, run[wrong]))
    order[redo] = order[redo[np.lexsort((order[redo], values[order[redo]], run[redo]))]]


def _balanced_level(
    rows: np.ndarray,
    codes: np.ndarray,
    w: np.ndarray,
    shift: int,
    starts: np.ndarray,
    counts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per open node, the split of the balanced rule (after the deadline), as the kernels'
    ``BALANCED`` mode: the Gini split among the gaps that leave at least a quarter of the
    node's rows on each side, else the median split (:func:`_median_level`)."""
    first, last = starts[:-1], starts[1:]
    quarter = np.maximum(1, (last - first) // 4)
    window = (first + quarter - 1, last - quarter - 1)
    column, cut = _gini_level(rows, codes, w, shift, starts, counts, None, window)
    median = column < 0
    if median.any():
        by_median = _median_level(codes, shift, starts)
        column[median], cut[median] = by_median[0][median], by_median[1][median]
    return column, cut


def _gini_level(
    rows: np.ndarray,
    codes: np.ndarray,
    w: np.ndarray,
    shift: int,
    starts: np.ndarray,
    counts: np.ndarray,
    deadline: float | None,
    window: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Per open node, the Gini split: ``(column or -1, position of the last row going left)``.

    As :func:`satdt.dp._greedy_kernels._best_split`: the largest
    ``sum_k L_k**2 / w_L + sum_k R_k**2 / w_R`` (a side of weight 0 counting 0) over the gaps
    between distinct values (with ``window = (lo, hi)``, only those whose last left position
    lies in ``[lo[a], hi[a]]`` for node ``a``); ties go to the lowest column, then the lowest
    gap. Column -1: no such gap (over every gap: identical rows). None when the deadline
    passes before a block.

    The positions are scanned in blocks, all columns at once, in work arrays allocated once
    (fresh memory for every temporary would cost more than the arithmetic). The class weights
    left of a gap are running sums from the level's first position (integers for unit
    weights, else floats added in position order, so that rows of weight 0 add exactly 0),
    minus their value just before the node's first position.
    """
    n_cols, m = codes.shape
    n_open, n_classes = counts.shape
    mask = (1 << shift) - 1
    first, last = starts[:-1], starts[1:]
    total = counts[:, 0].copy()  # summed in class order, as the kernels do
    for k in range(1, n_classes):
        total += counts[:, k]
    best = np.full(n_open, -np.inf)
    column = np.full(n_open, -1)
    cut = np.zeros(n_open, dtype=np.int64)
    # running sums: the weight of classes 1 .. n_classes - 1 (class 0 is the rest, as in the
    # kernels' two-class scan), then the total weight unless all weights are 1
    n_sums = n_classes - 1 + (w.size > 0)
    sum_type = np.float64 if w.size else np.int64
    carry = np.zeros((n_sums, n_cols), dtype=sum_type)
    before_open = np.zeros_like(carry)  # the sums before the node open at a block's start
    width = max(1, min(m - 1, _BLOCK // n_cols))
    size = n_cols * (width + 1)
    rank_buffer, class_buffer = np.empty(size, dtype=codes.dtype), np.empty(size, codes.dtype)
    gap_buffer, hit_buffer = np.empty(size, dtype=bool), np.empty(size, dtype=bool)
    running_buffer, spread_buffer = np.empty(size, sum_type), np.empty(size, sum_type)
    buffers = [np.empty(size) for _ in range(n_sums + 6)]
    for a in range(0, m - 1, width):  # the gaps after positions a .. b - 1
        if _passed(deadline):
            return None
        b = min(a + width, m - 1)
        span = b - a
        nodes = np.arange(np.searchsorted(first, a, "right") - 1, np.searchsorted(first, b))
        low = np.maximum(first[nodes], a) - a  # each node's part of the block
        lengths = np.minimum(last[nodes], b) - a - low
        piece = np.repeat(np.arange(nodes.size), lengths)  # the node of each position
        shape = (n_cols, span)
        gap, hit = _shaped(gap_buffer, shape), _shaped(hit_buffer, shape)
        classes, spread = _shaped(class_buffer, shape), _shaped(spread_buffer, shape)
        sums = [_shaped(buffer, shape) for buffer in buffers[:n_sums]]
        weight, w_right, sum_left, sum_right, score, work = (
            _shaped(buffer, shape) for buffer in buffers[n_sums:]
        )
        code = codes[:, a : b + 1]
        rank = np.right_shift(code, shift, out=_shaped(rank_buffer, (n_cols, span + 1)))
        np.not_equal(rank[:, 1:], rank[:, :-1], out=gap)
        ends = last[nodes] - 1 - a
        gap[:, ends[ends < span]] = False  # the last row of a node and the first of the next
        if window is not None:
            position = np.arange(a, b)
            gap &= (position >= window[0][nodes][piece]) & (position <= window[1][nodes][piece])
        np.bitwise_and(code[:, :-1], mask, out=classes)
        if w.size:
            np.take(w, rows[:, a:b], out=weight, mode="clip")
        running = _shaped(running_buffer, (n_cols, span + 1))
        for s, total_s in enumerate(sums):
            if s < n_classes - 1:
                part = np.equal(classes, s + 1, out=hit)
                if w.size:
                    part = np.multiply(part, weight, out=spread)
            else:
                part = weight
            running[:, 0] = carry[s]
            running[:, 1:] = part
            np.cumsum(running, axis=1, out=running)  # running[:, i]: the sum before a + i
            before = running[:, low]
            if first[nodes[0]] < a:
                before[:, 0] = before_open[s]
            carry[s] = running[:, span]
            before_open[s] = before[:, -1]
            np.subtract(running[:, 1:], np.take(before, piece, 1, spread, "clip"), out=total_s)
        if w.size:
            w_left = sums.pop()
            np.subtract(total[nodes][piece], w_left, out=w_right)
        else:
            w_left = (np.arange(a + 1, b + 1) - first[nodes][piece]).astype(np.float64)
            w_right = total[nodes][piece] - w_left
        np.subtract(w_left, sums[0], out=work)  # the weight of class 0
        for k in range(1, n_classes - 1):
            work -= sums[k]
        np.multiply(work, work, out=sum_left)
        np.subtract(counts[nodes, 0][piece], work, out=work)
        np.multiply(work, work, out=sum_right)
        for k, left in enumerate(sums, 1):
            np.multiply(left, left, out=work)
            sum_left += work
            np.subtract(counts[nodes, k][piece], left, out=work)
            np.multiply(work, work, out=work)
            sum_right += work
        if w.size:
            score.fill(0.0)
            work.fill(0.0)
            np.divide(sum_left, w_left, out=score, where=w_left > 0.0)
            np.divide(sum_right, w_right, out=work, where=w_right > 0.0)
        else:  # rows of weight 1: only past a node's last row is a side empty (0 / 0)
            np.divide(sum_left, w_left, out=score)
            with np.errstate(invalid="ignore"):
                np.divide(sum_right, w_right, out=work)
        score += work
        np.copyto(score, -np.inf, where=np.logical_not(gap, out=gap))
        # per node, the best column (the lowest on ties) and its first best position
        top_of_column = np.maximum.reduceat(score, low, axis=1)
        c = np.argmax(top_of_column, axis=0)
        top = top_of_column[c, np.arange(nodes.size)]
        reached = np.flatnonzero(score[c[piece], np.arange(span)] == top[piece])
        at = reached[np.searchsorted(reached, low)]
        # blocks go by position, so an equal score counts when it comes from a lower column
        better = (top > best[nodes]) | ((top == best[nodes]) & (c < column[nodes]))
        nodes = nodes[better]
        best[nodes] = top[better]
        column[nodes] = c[better]
        cut[nodes] = a + at[better]
    return column, cut


def _shaped(buffer: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The first entries of a flat work array, as a C-contiguous array of this shape."""
    return buffer[: shape[0] * shape[1]].reshape(shape)


def _median_level(codes: np.ndarray, shift: int, starts: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per open node, the median split: ``(column or -1, position of the last row going left)``.

    As :func:`satdt.dp._greedy_kernels._median_split`: the column with the most distinct
    values among the node's rows (the lowest on ties), cut at the gap nearest to the middle
    row (the lower of two equally near). Column -1: identical rows.
    """
    n_open = starts.size - 1
    first = starts[:-1]
    middle = first + (starts[1:] - first) // 2  # ideally the first row going right
    most = np.ones(n_open, dtype=np.int64)
    column = np.full(n_open, -1)
    cut = np.zeros(n_open, dtype=np.int64)
    for c, code in enumerate(codes):
        rank = code >> shift
        gap = rank[1:] != rank[:-1]
        gap[starts[1:-1] - 1] = False  # the last row of a node and the first of the next
        q = np.flatnonzero(gap)
        bounds = np.searchsorted(q, starts)
        distinct = 1 + np.diff(bounds)
        better = distinct > most
        most[better] = distinct[better]
        column[better] = c
        # the gap nearest to the middle: the largest -distance, the first one on ties
        low = bounds[:-1][distinct > 1]
        key = -np.abs(q + 1 - np.repeat(middle, np.diff(bounds)))
        reached = np.flatnonzero(
            key == np.repeat(np.maximum.reduceat(key, low), np.diff(low, append=q.size))
        )
        cut[better] = q[reached[np.searchsorted(reached, bounds[:-1][better])]]
    return column, cut


def _split(
    rows: np.ndarray,
    codes: np.ndarray,
    w: np.ndarray,
    shift: int,
    n_classes: int,
    starts: np.ndarray,
    split: np.ndarray,
    column: np.ndarray,
    cut: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """Split the open nodes ``split`` at ``(column, cut)``: the children and where rows go.

    Child ``k`` is the left child of the ``k``-th split node, child ``len(split) + k`` its right
    child. Returns the children's class weights (summed in the order of the split column, as
    the kernels do, so that they agree to the last bit), the rows of the split nodes with
    their child, and the two rows the threshold of each split falls between.
    """
    n_split = split.size
    mask = (1 << shift) - 1
    sizes = np.diff(starts)
    below = np.empty(n_split, dtype=np.int64)
    above = np.empty(n_split, dtype=np.int64)
    moved, child, classes = ([np.zeros(0, dtype=np.int64)] for _ in range(3))
    for c in np.unique(column):
        k = np.flatnonzero(column == c)
        lengths = sizes[split[k]]
        position = _ranges(starts[split[k]], lengths)
        goes_right = position > np.repeat(cut[k], lengths)
        moved.append(rows[c, position])
        child.append(np.repeat(k, lengths) + n_split * goes_right)
        classes.append(codes[c, position] & mask)
        below[k] = rows[c, cut[k]]
        above[k] = rows[c, cut[k] + 1]
    moved, child = np.concatenate(moved), np.concatenate(child)
    counts = np.bincount(
        child * n_classes + np.concatenate(classes),
        weights=w[moved] if w.size else None,
        minlength=2 * n_split * n_classes,
    )
    return counts.astype(np.float64).reshape(2 * n_split, n_classes), moved, child, below, above


def _partition(
    rows: np.ndarray, codes: np.ndarray, m: int, side: np.ndarray, n_left: int, kept: int
) -> None:
    """Move the first ``m`` positions of each column to the next level, stably, in place.

    The rows going to an open left child (``side`` of the row ``_LEFT``) come first, then
    those going to an open right child; the others are dropped: ``kept`` rows remain,
    ``n_left`` of them on the left.
    """
    goes = np.empty(m, dtype=np.uint8)
    to_left, to_right = np.empty(m, dtype=bool), np.empty(m, dtype=bool)
    buffers = np.empty(kept, dtype=rows.dtype), np.empty(kept, dtype=codes.dtype)
    for c in range(rows.shape[0]):
        np.take(side, rows[c, :m], out=goes, mode="clip")
        np.equal(goes, _LEFT, out=to_left)
        np.equal(goes, _RIGHT, out=to_right)
        for array, buffer in zip((rows, codes), buffers, strict=True):
            np.compress(to_left, array[c, :m], out=buffer[:n_left])
            np.compress(to_right, array[c, :m], out=buffer[n_left:])
            array[c, :kept] = buffer


def _ranges(first: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenated ``arange(f, f + l)`` of each pair."""
    offset = np.cumsum(lengths) - lengths
    return np.arange(lengths.sum()) + np.repeat(first - offset, lengths)


def _build(
    X: np.ndarray, n_nodes: int, counts: np.ndarray, splits: list, classes: np.ndarray
) -> Tree:
    """The :class:`Tree` in preorder from the nodes in creation (breadth-first) order."""
    feature = np.full(n_nodes, LEAF, dtype=np.int64)
    below = np.zeros(n_nodes, dtype=np.int64)
    above = np.zeros(n_nodes, dtype=np.int64)
    left = np.full(n_nodes, -1, dtype=np.int64)
    right = np.full(n_nodes, -1, dtype=np.int64)
    for ids, column, row_below, row_above, first_child in splits:
        feature[ids] = column
        below[ids] = row_below
        above[ids] = row_above
        left[ids] = first_child + np.arange(ids.size)
        right[ids] = left[ids] + ids.size
    size = np.ones(n_nodes, dtype=np.int64)  # of each subtree, deepest level first
    for ids, *_ in reversed(splits):
        size[ids] += size[left[ids]] + size[right[ids]]
    order = np.zeros(n_nodes, dtype=np.int64)  # the preorder number of each node
    for ids, *_ in splits:
        order[left[ids]] = order[ids] + 1
        order[right[ids]] = order[ids] + 1 + size[left[ids]]
    internal = feature != LEAF
    left[internal] = order[left[internal]]
    right[internal] = order[right[internal]]
    tree = np.empty((n_nodes, 5), dtype=np.int64)
    tree[order] = np.stack([feature, left, right, below, above], axis=1)
    in_preorder = np.empty_like(counts)
    in_preorder[order] = counts
    feature, left, right, below, above = tree.T
    internal = feature != LEAF
    column = feature[internal]
    threshold = np.full(n_nodes, np.nan)
    threshold[internal] = readable_thresholds(
        X[below[internal], column], X[above[internal], column]
    )
    value = np.where(internal, -1, np.argmax(in_preorder, axis=1))
    return Tree(feature, threshold, left, right, value, in_preorder, classes)
