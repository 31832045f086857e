"""Numba kernels of the greedy numeric tree (:mod:`satdt.dp.greedy`) over flat arrays.

The state is two ``(p, n)`` int32 matrices. ``idx[c]`` lists the row indices sorted by
column ``c``; ``code[c]`` holds, at the same positions, ``rank << shift | class``: the rank of
the row's value among the distinct values of the column (equal values, equal ranks) and the
row's class in the low ``shift`` bits. So the split search reads one sequential array per
column: two neighbours differ in value iff their codes differ above the class bits, and with
unit weights the rows themselves are never looked up.

Both matrices are kept *partitioned by node*: an open node owns the same slice
``[start, end)`` of every column, holding its rows sorted by that column. Splitting a node is
a stable linear partition of its slice (the split column is already in order), so the rows
are sorted once, at the start, and never again. The tree grows depth-first, so once a
node's slices fit in the cache its whole subtree is grown there.

Two kernels: :func:`presort` (once) and :func:`grow` (called again after each budget of work,
so that the caller can watch the clock). Weights ``w`` are either one float per row or an
empty array meaning "all 1" (the fast path).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

# Numba types of the kernels' arguments: each kernel is compiled for one signature (see
# :mod:`satdt.dp._counts`); codes are int32 (:mod:`satdt.dp.greedy` keeps them below 2^31).
I32_T = types.int32[::1]
I32_2D_T = types.int32[:, ::1]
I64_T = types.int64[::1]
I64_2D_T = types.int64[:, ::1]
U64_T = types.uint64[::1]
U8_T = types.uint8[::1]
F64_T = types.float64[::1]
F64_2D_T = types.float64[:, ::1]

# Split rules (ctl[MODE]): Gini over every gap, or after the deadline Gini over the gaps that
# leave at least a quarter of the rows on each side (else the median rule), so that the rest
# of the tree has logarithmic depth (Gini alone may peel one row off at a time: O(n) levels).
GINI = 1
BALANCED = 2
# Slots of the control array ctl of grow.
TOP, N_NODES, MODE, MAX_DEPTH, BUDGET, SHIFT, LOCAL = range(7)
# Return values of grow.
DONE, BUDGET_SPENT, STACK_FULL = range(3)
# Children of a split that will be split again (their rows must be kept in order).
KEEP_LEFT, KEEP_RIGHT, KEEP_BOTH = 1, 2, 3

_SIGN = np.uint64(0x8000000000000000)
_DIGIT_BITS = 11
_N_DIGITS = 6  # 6 * 11 >= 64
_RADIX = 1 << _DIGIT_BITS
_MASK = np.uint64(_RADIX - 1)
_GROUP = 4  # columns of X read in one pass (X is row-major)
_FEW = 1 << 14  # columns with at most this many distinct values are sorted by counting
_TABLE = 1 << 15  # slots of the hash table finding them
_FIB = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top 15 bits of key * _FIB
_HASH_SHIFT = np.uint64(64 - 15)
_LOOSE = 1.0 - 1e-12  # margin of the division-free filter of _best_split


@njit((U64_T, U64_T, I32_T, I32_T, I64_2D_T), cache=True)
def _radix_sort(keys, spare, rows, spare_rows, hist):
    """Sort ``keys`` with their ``rows`` by LSD radix (11-bit digits), skipping digits equal
    for every key; returns the sorted keys and rows (either the given arrays or the spares).
    """
    n = keys.shape[0]
    for d in range(_N_DIGITS):
        for b in range(_RADIX):
            hist[d, b] = 0
    for i in range(n):
        k = keys[i]
        for d in range(_N_DIGITS):
            hist[d, (k >> np.uint64(d * _DIGIT_BITS)) & _MASK] += 1
    for d in range(_N_DIGITS):
        s = np.uint64(d * _DIGIT_BITS)
        if n == 0 or hist[d, (keys[0] >> s) & _MASK] == n:
            continue  # every key has this digit: the pass would not move anything
        total = 0
        for b in range(_RADIX):  # bucket sizes -> first position of each bucket
            size = hist[d, b]
            hist[d, b] = total
            total += size
        for i in range(n):
            k = keys[i]
            b = (k >> s) & _MASK
            j = hist[d, b]
            hist[d, b] = j + 1
            spare[j] = k
            spare_rows[j] = rows[i]
        keys, spare = spare, keys
        rows, spare_rows = spare_rows, rows
    return keys, rows


@njit((U64_T, I32_T, types.int64, I32_T, I32_T, I32_T, U64_T, I32_T, I64_2D_T), cache=True)
def _counting_sort(keys, y, shift, idx_c, code_c, slot_of, table, table_slot, hist):
    """Sort by counting when the keys take at most ``_FEW`` values; False (nothing done) else.

    The distinct keys are found with a hash table (linear probing) and sorted by radix; each
    row then goes straight to its final position: two passes over the rows instead of six.
    """
    n = keys.shape[0]
    for h in range(_TABLE):
        table_slot[h] = -1
    n_slots = 0
    for i in range(n):
        k = keys[i]
        h = np.int64((k * _FIB) >> _HASH_SHIFT)
        while True:
            s = table_slot[h]
            if s < 0:
                if n_slots == _FEW:
                    return False
                s = n_slots
                n_slots += 1
                table_slot[h] = s
                table[h] = k
                break
            if table[h] == k:
                break
            h = (h + 1) & (_TABLE - 1)
        slot_of[i] = s
    # the distinct keys in value order (slot numbers ride along as the "rows")
    distinct = np.empty(n_slots, dtype=np.uint64)
    slots = np.empty(n_slots, dtype=np.int32)
    for h in range(_TABLE):
        if table_slot[h] >= 0:
            distinct[table_slot[h]] = table[h]
            slots[table_slot[h]] = table_slot[h]
    _, order = _radix_sort(
        distinct, np.empty(n_slots, dtype=np.uint64), slots, np.empty(n_slots, dtype=np.int32), hist
    )
    rank_of = np.empty(n_slots, dtype=np.int64)
    count = np.zeros(n_slots, dtype=np.int64)
    for i in range(n):
        count[slot_of[i]] += 1
    total = 0
    for r in range(n_slots):  # slot sizes -> first position of each slot, in value order
        s = order[r]
        rank_of[s] = r
        size = count[s]
        count[s] = total
        total += size
    for i in range(n):
        s = slot_of[i]
        j = count[s]
        count[s] = j + 1
        idx_c[j] = i
        code_c[j] = (rank_of[s] << shift) | y[i]
    return True


@njit((F64_2D_T, I32_T, types.int64, I32_2D_T, I32_2D_T), cache=True)
def presort(X, y, shift, idx, code):
    """Sort every column of ``X``: row indices into ``idx[c]``, ``rank << shift | y`` into ``code[c]``.

    The values are compared through their IEEE bits, mapped to unsigned integers in the same
    order (negative values: all bits flipped; others: the sign bit set; ``-0.0`` counts as
    ``0.0``). A column with few distinct values is sorted by counting (:func:`_counting_sort`),
    the others by radix (:func:`_radix_sort`); both are stable, so equal values keep row
    order. The values must be finite (the caller checks).
    """
    n, p = X.shape
    group = np.empty((_GROUP, n), dtype=np.uint64)  # the keys of a few columns, read together
    spare = np.empty(n, dtype=np.uint64)
    rows = np.empty(n, dtype=np.int32)
    spare_rows = np.empty(n, dtype=np.int32)
    hist = np.empty((_N_DIGITS, _RADIX), dtype=np.int64)
    table = np.empty(_TABLE, dtype=np.uint64)
    table_slot = np.empty(_TABLE, dtype=np.int32)
    values = group.view(np.float64)
    for c0 in range(0, p, _GROUP):
        g_end = min(_GROUP, p - c0)
        for i in range(n):  # one pass over the rows of X per group of columns
            for g in range(g_end):
                values[g, i] = X[i, c0 + g] + 0.0  # -0.0 + 0.0 == +0.0: equal values, equal keys
        for g in range(g_end):
            keys = group[g]
            for i in range(n):
                k = keys[i]
                keys[i] = ~k if k & _SIGN else k | _SIGN
            c = c0 + g
            if _counting_sort(keys, y, shift, idx[c], code[c], rows, table, table_slot, hist):
                continue
            for i in range(n):
                rows[i] = i
            keys, sorted_rows = _radix_sort(keys, spare, rows, spare_rows, hist)
            rank = 0
            for i in range(n):
                if i > 0 and keys[i] != keys[i - 1]:
                    rank += 1
                row = sorted_rows[i]
                idx[c, i] = row
                code[c, i] = (rank << shift) | y[row]


@njit(cache=True, inline="always")
def _score(sum_left, w_left, sum_right, w_right):
    """``sum_left / w_left + sum_right / w_right``, a side of weight 0 counting 0."""
    score = 0.0
    if w_left > 0.0:
        score += sum_left / w_left
    if w_right > 0.0:
        score += sum_right / w_right
    return score


@njit(cache=True, inline="always")
def _may_beat(sum_left, w_left, sum_right, w_right, best):
    """False only when :func:`_score` is surely not above ``best``.

    A filter without division (divisions dominate the scan otherwise): the cross-multiplied
    score with a margin far above rounding errors, so that the exact test
    ``_score(...) > best``, made only when this says True, decides every comparison.
    """
    if w_left <= 0.0 or w_right <= 0.0:
        return True
    return sum_left * w_right + sum_right * w_left > best * (w_left * w_right) * _LOOSE


@njit(
    (
        I32_2D_T,
        I32_2D_T,
        types.int64,
        F64_T,
        F64_T,
        types.int64,
        types.int64,
        types.int64,
        types.int64,
        F64_T,
    ),
    cache=True,
    error_model="numpy",
)
def _best_split(idx, code, shift, w, counts, s, e, lo, hi, left):  # noqa: C901 — Numba innermost scan: splitting it costs speed
    """The Gini split of the rows at positions ``s:e``: ``(column, last left position)``.

    The largest ``score = sum_k L_k**2 / w_L + sum_k R_k**2 / w_R`` over the class weights
    ``L``, ``R`` of the two sides (the lowest weighted Gini impurity), between two
    consecutive distinct values of the rows whose last left position lies in ``[lo, hi]``
    (``[s, e - 2]``: every gap), in one pass per column with cumulative class
    weights. Ties: lowest column, then lowest threshold (a later candidate must score
    strictly higher). ``counts`` are the class weights of the rows; ``left`` a scratch array.
    With integer weights every sum is exact, so each score is exactly the float of this
    formula, whatever the order of the additions. No score exceeds the total weight (reached
    by a split into pure sides), so the search stops there. Column -1: no gap in ``[lo, hi]``
    (over every gap: identical rows).
    """
    n_classes = counts.shape[0]
    mask = (1 << shift) - 1
    unit = w.shape[0] == 0
    total = 0.0
    for k in range(n_classes):
        total += counts[k]
    best = -np.inf
    best_c = -1
    best_q = -1
    for c in range(idx.shape[0]):
        if best >= total:
            break  # a split into pure sides: no score is higher
        kc = code[c]
        ic = idx[c]
        if n_classes == 2 and unit:  # the running counts stay in registers
            t0 = counts[0]
            t1 = counts[1]
            ones = 0  # rows of class 1 on the left
            for q in range(s, e - 1):
                a = kc[q]
                ones += a & 1
                if (a ^ kc[q + 1]) >> shift and lo <= q <= hi:
                    w_left = float(q - s + 1)
                    l1 = float(ones)
                    l0 = w_left - l1
                    r0 = t0 - l0
                    r1 = t1 - l1
                    sum_left = l0 * l0 + l1 * l1
                    sum_right = r0 * r0 + r1 * r1
                    if _may_beat(sum_left, w_left, sum_right, total - w_left, best):
                        score = _score(sum_left, w_left, sum_right, total - w_left)
                        if score > best:
                            best = score
                            best_c = c
                            best_q = q
        elif n_classes == 2:
            t0 = counts[0]
            t1 = counts[1]
            w_left = 0.0
            l1 = 0.0
            for q in range(s, e - 1):
                a = kc[q]
                wt = w[ic[q]]
                w_left += wt
                l1 += wt * (a & 1)
                if (a ^ kc[q + 1]) >> shift and lo <= q <= hi:
                    l0 = w_left - l1
                    r0 = t0 - l0
                    r1 = t1 - l1
                    sum_left = l0 * l0 + l1 * l1
                    sum_right = r0 * r0 + r1 * r1
                    if _may_beat(sum_left, w_left, sum_right, total - w_left, best):
                        score = _score(sum_left, w_left, sum_right, total - w_left)
                        if score > best:
                            best = score
                            best_c = c
                            best_q = q
        else:
            for k in range(n_classes):
                left[k] = 0.0
            w_left = 0.0
            for q in range(s, e - 1):
                a = kc[q]
                wt = 1.0 if unit else w[ic[q]]
                w_left += wt
                left[a & mask] += wt
                if (a ^ kc[q + 1]) >> shift and lo <= q <= hi:
                    sum_left = 0.0
                    sum_right = 0.0
                    for k in range(n_classes):
                        r = counts[k] - left[k]
                        sum_left += left[k] * left[k]
                        sum_right += r * r
                    if _may_beat(sum_left, w_left, sum_right, total - w_left, best):
                        score = _score(sum_left, w_left, sum_right, total - w_left)
                        if score > best:
                            best = score
                            best_c = c
                            best_q = q
    return best_c, best_q


@njit((I32_2D_T, types.int64, types.int64, types.int64), cache=True)
def _median_split(code, shift, s, e):
    """The balanced rule's last resort: ``(column, last left position)``.

    The column with the most distinct values among the rows at positions ``s:e`` (the
    lowest on ties), cut at the gap between distinct values nearest to the middle row. Both
    sides are non-empty, so repeating it ends at pure leaves. Column -1: identical rows.
    """
    best_c = -1
    most = 1
    for c in range(code.shape[0]):
        kc = code[c]
        distinct = 1
        for q in range(s, e - 1):
            distinct += ((kc[q] ^ kc[q + 1]) >> shift) != 0
        if distinct > most:
            most = distinct
            best_c = c
    if best_c < 0:
        return -1, -1
    kc = code[best_c]
    middle = s + (e - s) // 2  # the first row of the right part, ideally
    for offset in range(e - s):
        b = middle - offset
        if s < b < e and (kc[b] ^ kc[b - 1]) >> shift:
            return best_c, b - 1
        b = middle + offset
        if s < b < e and (kc[b] ^ kc[b - 1]) >> shift:
            return best_c, b - 1
    return -1, -1  # not reached: the column has two distinct values


@njit(
    (
        I32_2D_T,
        I32_2D_T,
        types.int64,
        types.int64,
        types.int64,
        types.int64,
        types.int64,
        U8_T,
        I32_T,
        I32_T,
        U8_T,
    ),
    cache=True,
)
def _partition(idx, code, s, e, col, pos, keep, side, buf_idx, buf_code, buf_side):
    """Split the rows at positions ``s:e`` of every column into the two children, stably.

    Rows at positions ``s .. pos`` of column ``col`` go left, the rest right; ``side`` (one
    byte per row) records it. Every other column then puts its left rows first and its
    right rows behind them, each part still sorted. ``keep`` names the children that will
    be split again: a child that will not (a pure one) needs no order, so with KEEP_LEFT or
    KEEP_RIGHT only the other child's rows are compacted, in place; with KEEP_BOTH the slice
    is copied aside and scattered back. Branch-free, since the side of a row is unpredictable.
    """
    ic = idx[col]
    for q in range(s, pos + 1):
        side[ic[q]] = 1
    for q in range(pos + 1, e):
        side[ic[q]] = 0
    n_left = pos + 1 - s
    for c in range(idx.shape[0]):
        if c == col:
            continue  # already in order: left part first
        ic = idx[c]
        kc = code[c]
        if keep == KEEP_LEFT:
            write = s
            for q in range(s, e):
                row = ic[q]
                ic[write] = row  # write <= q: this position was read already
                kc[write] = kc[q]
                write += np.int64(side[row])
        elif keep == KEEP_RIGHT:
            write = e - 1
            for q in range(e - 1, s - 1, -1):
                row = ic[q]
                ic[write] = row  # write >= q: this position was read already
                kc[write] = kc[q]
                write -= 1 - np.int64(side[row])
        else:
            # copy the slice aside with the side of each row, then scatter it back
            for q in range(s, e):
                row = ic[q]
                buf_idx[q - s] = row
                buf_code[q - s] = kc[q]
                buf_side[q - s] = side[row]
            write_left = s
            write_right = s + n_left
            for t in range(e - s):
                goes_left = np.int64(buf_side[t])
                dest = write_right + goes_left * (write_left - write_right)
                ic[dest] = buf_idx[t]
                kc[dest] = buf_code[t]
                write_left += goes_left
                write_right += 1 - goes_left


@njit(cache=True, inline="always")
def _impure(counts):
    """True when at least two classes have positive weight."""
    positive = 0
    for k in range(counts.shape[0]):
        positive += counts[k] > 0.0
    return positive >= 2


@njit((I32_2D_T, types.int64, types.int64, F64_T, I32_T, F64_T, I32_T), cache=True)
def _renumber(idx, s, e, w, origin, w_local, remap):
    """Number the rows at positions ``s:e`` as ``s .. e - 1`` (their order in column 0).

    ``remap`` (one entry per row of the table) is scratch; ``origin`` and ``w_local`` (empty
    for unit weights) receive each new number's row and weight.
    """
    ic = idx[0]
    for t in range(s, e):
        remap[ic[t]] = t
        origin[t] = ic[t]
    for c in range(idx.shape[0]):
        ic = idx[c]
        for t in range(s, e):
            ic[t] = remap[ic[t]]
    if w.shape[0]:
        for t in range(s, e):
            w_local[t] = w[origin[t]]


@njit(cache=True, inline="always")
def _side_counts(ic, kc, s, e, mask, unit, weights, counts):
    """The class weights of the rows at positions ``s:e`` of one column (row ids ``ic``,
    codes ``kc``; weight 1 each when ``unit``) into ``counts``."""
    for k in range(counts.shape[0]):
        counts[k] = 0.0
    for t in range(s, e):
        counts[kc[t] & mask] += 1.0 if unit else weights[ic[t]]


@njit(
    (I32_2D_T, I32_2D_T, F64_T, I64_2D_T, F64_2D_T, I32_2D_T, F64_2D_T, I64_T, I32_T, F64_T),
    cache=True,
)
def grow(idx, code, w, stack, stack_counts, tree, tree_counts, ctl, origin, w_local):
    """Grow the tree depth-first from the open nodes on ``stack``, until a budget of work.

    ``stack[t] = (parent, side | local << 1, start, end, depth)`` is an open node (side 0:
    left child) whose rows sit at positions ``start:end`` of every column;
    ``stack_counts[t]`` are its class weights. Nodes are numbered in preorder as they are
    popped (the left child is pushed last, so it comes next): ``tree[i] = (column or -1,
    left, right, row below, row above)`` where the rows hold the two values the threshold
    falls between; class weights go to ``tree_counts[i]``. A node becomes a leaf when it is
    pure, at depth ``ctl[MAX_DEPTH]`` (-1: no limit), or when its rows are identical. Splits
    follow :func:`_best_split` over every gap or, when ``ctl[MODE] == BALANCED``, over the
    gaps leaving a quarter of the rows on each side, else :func:`_median_split`.

    Local numbering: the first node of at most ``ctl[LOCAL]`` rows on a path renumbers its
    rows ``start .. end - 1`` in ``idx`` (``origin[i]`` is the row numbered ``i``,
    ``w_local[i]`` its weight), so that in its whole subtree the per-row flags and weights
    read by the partition and the scan lie in one small block of memory instead of all over
    the ``n`` rows. The flag ``local`` of a stack entry says that its rows are renumbered.

    Returns DONE (stack empty), BUDGET_SPENT (``ctl[BUDGET]`` row-column visits were spent: the
    caller checks the clock) or STACK_FULL (the caller enlarges the stack); ``ctl[TOP]`` and
    ``ctl[N_NODES]`` are updated, so calling again resumes.
    """
    n_cols, n = idx.shape
    n_classes = tree_counts.shape[1]
    mode = ctl[MODE]
    max_depth = ctl[MAX_DEPTH]
    shift = ctl[SHIFT]
    top = ctl[TOP]
    n_nodes = ctl[N_NODES]
    side = np.empty(n, dtype=np.uint8)
    buf_idx = np.empty(n, dtype=idx.dtype)
    buf_code = np.empty(n, dtype=code.dtype)
    buf_side = np.empty(n, dtype=np.uint8)
    scratch = np.empty(n_classes)
    mask = (1 << shift) - 1
    unit = w.shape[0] == 0
    work = 0
    status = DONE
    while top > 0:
        if work >= ctl[BUDGET]:
            status = BUDGET_SPENT
            break
        if top + 1 > stack.shape[0]:  # popping one node may push two
            status = STACK_FULL
            break
        top -= 1
        parent = stack[top, 0]
        child_side = stack[top, 1] & 1
        local = stack[top, 1] >> 1
        s = stack[top, 2]
        e = stack[top, 3]
        depth = stack[top, 4]
        node = n_nodes
        n_nodes += 1
        if parent >= 0:
            tree[parent, 1 + child_side] = node
        for k in range(5):
            tree[node, k] = -1
        counts = tree_counts[node]
        for k in range(n_classes):
            counts[k] = stack_counts[top, k]
        if depth == max_depth or not _impure(counts) or n_cols == 0:
            continue
        work += (e - s) * n_cols
        if not local and e - s <= ctl[LOCAL]:
            _renumber(idx, s, e, w, origin, w_local, buf_idx)
            local = 1
        weights = w_local if local else w
        lo, hi = s, e - 2  # every gap
        if mode == BALANCED:  # a quarter of the rows at least on each side
            quarter = max(1, (e - s) // 4)
            lo, hi = s + quarter - 1, e - quarter - 1
        c, q = _best_split(idx, code, shift, weights, counts, s, e, lo, hi, scratch)
        if c < 0 and mode == BALANCED:
            c, q = _median_split(code, shift, s, e)
        if c < 0:
            continue
        tree[node, 0] = c
        tree[node, 3] = origin[idx[c, q]] if local else idx[c, q]
        tree[node, 4] = origin[idx[c, q + 1]] if local else idx[c, q + 1]
        # the children: right at top, left at top + 1 (popped next)
        right = stack_counts[top]
        left = stack_counts[top + 1]
        _side_counts(idx[c], code[c], s, q + 1, mask, unit, weights, left)
        _side_counts(idx[c], code[c], q + 1, e, mask, unit, weights, right)
        if depth + 1 != max_depth:
            keep = KEEP_LEFT * _impure(left) + KEEP_RIGHT * _impure(right)
            if keep:
                _partition(idx, code, s, e, c, q, keep, side, buf_idx, buf_code, buf_side)
        for k in range(2):  # k = 0: the left child, at top + 1
            stack[top + 1 - k, 0] = node
            stack[top + 1 - k, 1] = k | local << 1
            stack[top + 1 - k, 2] = s if k == 0 else q + 1
            stack[top + 1 - k, 3] = q + 1 if k == 0 else e
            stack[top + 1 - k, 4] = depth + 1
        top += 2
    ctl[TOP] = top
    ctl[N_NODES] = n_nodes
    return status
