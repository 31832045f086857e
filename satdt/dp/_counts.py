"""Counting kernels shared by the dynamic-programming searches over binary features.

Every DP method (Blossom today; DL8.5 and ConTree next) asks the same questions of a set of
rows: what is the class weight of the rows, of the rows having feature f, of the rows having
both f and g, and what is the best tree of depth one or two over them. This module answers
them with Numba kernels over the flat arrays of :mod:`satdt.dp.common` (:class:`Data`,
:class:`Scratch`, :class:`Space`).

Compilation. Every kernel that Python or another kernel calls is compiled for one signature,
given explicitly (the ``*_T`` types below), when its module is imported, or loaded from
Numba's on-disk cache: calls with other integer or literal types convert to it instead of
compiling a second specialization. Helpers of a few lines are inlined where they are called
(``inline="always"``), so they cost no separate compilation unit; the kernels avoid the
constructs that are slow to compile (slice assignments, array expressions, NumPy's sorts).
"""

from __future__ import annotations

import numpy as np
from numba import njit, typeof, types

from .common import (
    Data,
    Scratch,
    Space,
    build_data,
    new_scratch,
    new_space,
)

# Numba types of the kernels' arguments (one compiled signature per kernel).
ROWS_T = types.int32[::1]  # a set of distinct rows
I64_T = types.int64[::1]
F64_T = types.float64[::1]
F64_2D_T = types.float64[:, ::1]


DATA_T = typeof(build_data(np.zeros((1, 1), dtype=np.uint8), np.zeros((1, 1)))[0])
SCRATCH_T = typeof(new_scratch(1, 1))
SPACE_T = typeof(new_space(1, 1))


# ---------------------------------------------------------------------- class weights
@njit(cache=True, inline="always")
def leaf_error(counts):
    """Weight minus the heaviest class: the error of a leaf over these class weights."""
    total = 0.0
    top = 0.0
    for c in range(counts.shape[0]):
        total += counts[c]
        if counts[c] > top:
            top = counts[c]
    return total - top


@njit(cache=True, inline="always")
def class_totals(rows, W, tot):
    """Class weights of a set of rows, into ``tot``."""
    for c in range(tot.shape[0]):
        tot[c] = 0.0
    for u in rows:
        for c in range(W.shape[1]):
            tot[c] += W[u, c]


@njit(cache=True, inline="always")
def _add_row(single, n1, f, W, u, cu):
    """Add row u (its class weights W[u]; ``cu`` its only class, or -1) to feature f's counts."""
    n1[f] += 1
    if cu >= 0:
        single[f, cu] += W[u, cu]
    else:
        for c in range(W.shape[1]):
            single[f, c] += W[u, c]


@njit((ROWS_T, F64_2D_T, F64_T, F64_T), cache=True)
def node_totals(rows, W, rirr, tot):
    """Class weights of a node's rows into ``tot``; returns their irreducible error.

    One pass for the two numbers every DL8.5 node starts from (its leaf error, Algorithm 1
    line 4, and its lower bound).
    """
    for c in range(tot.shape[0]):
        tot[c] = 0.0
    irr = 0.0
    for u in rows:
        irr += rirr[u]
        for c in range(W.shape[1]):
            tot[c] += W[u, c]
    return irr


@njit((ROWS_T, DATA_T, F64_2D_T, I64_T), cache=True)
def single_counts(rows, data, single, n1):
    """Class weights ``single[f, c]`` and row counts ``n1[f]`` of the rows with feature f set.

    Returns the number of 1-entries visited (the work done).
    """
    W, pure, ones_ptr, ones = data.W, data.pure, data.ones_ptr, data.ones
    for f in range(n1.shape[0]):
        for c in range(single.shape[1]):
            single[f, c] = 0.0
        n1[f] = 0
    visited = 0
    for u in rows:
        cu = pure[u]
        lo = ones_ptr[u]
        hi = ones_ptr[u + 1]
        visited += hi - lo
        for t in range(lo, hi):
            _add_row(single, n1, ones[t], W, u, cu)
    return visited


# ---------------------------------------------------------------------- depth one
@njit((ROWS_T, DATA_T, SCRATCH_T), cache=True)
def solve_depth1(rows, data, scr):
    """Optimal tree of depth at most one over ``rows``: ``(error, feature or -1, work)``.

    Every feature that splits the rows is tried; ``scr.single``, ``scr.tot``, ``scr.side``
    and ``scr.n1`` are overwritten.
    """
    W = data.W
    single, tot, side, n1 = scr.single, scr.tot, scr.side, scr.n1
    class_totals(rows, W, tot)
    best = leaf_error(tot)
    if best <= 0.0:
        return best, -1, rows.shape[0]
    work = rows.shape[0] + single_counts(rows, data, single, n1)
    best_f = -1
    for f in range(single.shape[0]):
        if n1[f] == 0 or n1[f] == rows.shape[0]:
            continue
        for c in range(W.shape[1]):
            side[c] = tot[c] - single[f, c]
        e = leaf_error(single[f]) + leaf_error(side)
        if e < best:
            best = e
            best_f = f
    return best, best_f, work + single.shape[0]


# ---------------------------------------------------------------------- depth two
@njit((ROWS_T, DATA_T, I64_T, types.int64, F64_T, I64_T), cache=True)
def _count_pairs(rows, data, loc, a, pairs, buf):
    """Class weights of the rows having both features of each pair (local indices i < j).

    ``pairs[(i * a + j) * C + c]``: one pass over the rows adds each row's weight to every
    pair of its 1-features (MurTree's depth-two counting). Returns the work done.
    """
    W, pure, ones_ptr, ones = data.W, data.pure, data.ones_ptr, data.ones
    C = W.shape[1]
    stride = a * C
    for k in range(a * stride):
        pairs[k] = 0.0
    work = a * a
    for u in rows:
        k = 0
        for t in range(ones_ptr[u], ones_ptr[u + 1]):
            lf = loc[ones[t]]
            if lf >= 0:
                buf[k] = lf
                k += 1
        work += 1 + k * (k - 1) // 2
        cu = pure[u]
        if cu >= 0:
            w = W[u, cu]
            for i in range(k):
                row_base = buf[i] * stride + cu
                for j in range(i + 1, k):
                    pairs[row_base + buf[j] * C] += w
        else:
            for i in range(k):
                row_base = buf[i] * stride
                for j in range(i + 1, k):
                    base = row_base + buf[j] * C
                    for c in range(C):
                        pairs[base + c] += W[u, c]
    return work


@njit((ROWS_T, DATA_T, SCRATCH_T, SPACE_T), cache=True)
def make_space(rows, data, scr, space):
    """Count ``rows`` over the features that split them (their local index space).

    Fills every field of ``space`` (``scr.single``, ``scr.n1`` and ``scr.buf`` are
    overwritten). Returns ``(number of local features a, work)``.
    """
    W = data.W
    g_single, g_n1 = scr.single, scr.n1
    single, n1, act, loc = space.single, space.n1, space.act, space.loc
    class_totals(rows, W, space.tot)
    work = rows.shape[0] + single_counts(rows, data, g_single, g_n1)
    n_rows = rows.shape[0]
    a = 0
    for f in range(g_single.shape[0]):
        if 0 < g_n1[f] < n_rows:
            loc[f] = a
            act[a] = f
            for c in range(single.shape[1]):
                single[a, c] = g_single[f, c]
            n1[a] = g_n1[f]
            a += 1
        else:
            loc[f] = -1
    work += _count_pairs(rows, data, loc, a, space.pairs, scr.buf)
    return a, work


@njit((ROWS_T, DATA_T, I64_T, types.int64, SPACE_T, I64_T), cache=True)
def count_in_space(rows, data, loc, a, space, buf):
    """Count ``rows`` (a subset of another space's rows) in that space's local indices.

    ``loc`` and ``a`` are the other space's; ``space.pairs``, ``single``, ``tot`` and ``n1``
    are filled (``act`` and ``loc`` are not touched). Returns the work done.
    """
    W, pure, ones_ptr, ones = data.W, data.pure, data.ones_ptr, data.ones
    single, n1 = space.single, space.n1
    class_totals(rows, W, space.tot)
    for i in range(a):
        for c in range(single.shape[1]):
            single[i, c] = 0.0
        n1[i] = 0
    for u in rows:
        cu = pure[u]
        for t in range(ones_ptr[u], ones_ptr[u + 1]):
            i = loc[ones[t]]
            if i >= 0:
                _add_row(single, n1, i, W, u, cu)
    return rows.shape[0] + _count_pairs(rows, data, loc, a, space.pairs, buf)


@njit(cache=True, inline="always")
def quadrant_errors(pa, pb, subtract, k, single, i, j, tot):
    """Leaf errors of the four cells of a split on features i and j (local indices).

    ``pa[k:k + C]`` (less ``pb[k:k + C]`` when ``subtract``) holds the class weights of the
    rows having both features; ``single`` and ``tot`` give the rest by subtraction. Returns
    ``(e11, e10, e01, e00)``, the first digit for feature i, the second for j.
    """
    t11 = t10 = t01 = t00 = 0.0
    m11 = m10 = m01 = m00 = 0.0
    for c in range(tot.shape[0]):
        x11 = pa[k + c] - pb[k + c] if subtract else pa[k + c]
        x10 = single[i, c] - x11
        x01 = single[j, c] - x11
        x00 = tot[c] - x11 - x10 - x01
        t11 += x11
        t10 += x10
        t01 += x01
        t00 += x00
        m11 = max(m11, x11)
        m10 = max(m10, x10)
        m01 = max(m01, x01)
        m00 = max(m00, x00)
    return t11 - m11, t10 - m10, t01 - m01, t00 - m00


@njit(cache=True, inline="always")
def _best_pairs(counts, pa, pb, subtract, n_rows, a, penalty, scr):  # noqa: C901 — Numba innermost pair loop: splitting it costs speed
    """Best depth-two tree from counts in a local index space, each leaf costing ``penalty``.

    ``counts`` gives the per-feature weights (``single``), class totals (``tot``) and row
    counts (``n1``) of the rows; the weight of class c on both features i < j is ``pa[k + c]``
    (minus ``pb[k + c]`` when ``subtract``: the counts of a node's rows minus those of its
    smaller child), the other three quadrants follow from ``single`` and ``tot``. Only
    features with ``0 < n1 < n_rows`` take part. Returns ``(cost, i, left i, right i, work)``
    in local indices, -1 = leaf; the cost is the error plus ``penalty`` per leaf. Inlined
    into :func:`eval_pairs_penalised` and :func:`eval_pairs_difference_penalised` with
    ``subtract`` a constant, so that the innermost loop has no test of it.

    The penalty stays out of the innermost loop: ``best_left`` and ``best_right`` hold the
    cost of a side's best subtree *less* ``2 * penalty`` (a leaf: its error less the penalty;
    one split: the error of its two leaves), so a split is compared on errors alone; the
    two levels are weighed against the leaf (``root_leaf + penalty``) at the end.
    """
    single, tot, n1 = counts.single, counts.tot, counts.n1
    C = tot.shape[0]
    best_left, best_right = scr.best_left, scr.best_right
    arg_left, arg_right, cand = scr.arg_left, scr.arg_right, scr.cand
    n = 0
    for i in range(a):
        if 0 < n1[i] < n_rows:
            cand[n] = i
            n += 1
    root_leaf = leaf_error(tot)
    side = scr.side
    for x in range(n):
        i = cand[x]
        for c in range(C):
            side[c] = tot[c] - single[i, c]
        best_left[x] = leaf_error(side) - penalty
        best_right[x] = leaf_error(single[i]) - penalty
        arg_left[x] = -1
        arg_right[x] = -1
    stride = a * C
    if C == 2:
        t0 = tot[0]
        t1 = tot[1]
        for x in range(n):
            i = cand[x]
            fi0 = single[i, 0]
            fi1 = single[i, 1]
            bl_x = best_left[x]
            br_x = best_right[x]
            al_x = arg_left[x]
            ar_x = arg_right[x]
            row = i * stride
            for z in range(x + 1, n):
                j = cand[z]
                k = row + 2 * j
                p0 = pa[k]
                p1 = pa[k + 1]
                if subtract:
                    p0 -= pb[k]
                    p1 -= pb[k + 1]
                q0 = fi0 - p0  # i = 1, j = 0
                q1 = fi1 - p1
                r0 = single[j, 0] - p0  # i = 0, j = 1
                r1 = single[j, 1] - p1
                s0 = t0 - p0 - q0 - r0  # i = 0, j = 0
                s1 = t1 - p1 - q1 - r1
                e11 = min(p0, p1)
                e10 = min(q0, q1)
                e01 = min(r0, r1)
                e00 = min(s0, s1)
                if e11 + e10 < br_x:
                    br_x = e11 + e10
                    ar_x = j
                if e01 + e00 < bl_x:
                    bl_x = e01 + e00
                    al_x = j
                if e11 + e01 < best_right[z]:
                    best_right[z] = e11 + e01
                    arg_right[z] = i
                if e10 + e00 < best_left[z]:
                    best_left[z] = e10 + e00
                    arg_left[z] = i
            best_left[x] = bl_x
            best_right[x] = br_x
            arg_left[x] = al_x
            arg_right[x] = ar_x
    else:
        for x in range(n):
            i = cand[x]
            for z in range(x + 1, n):
                j = cand[z]
                e11, e10, e01, e00 = quadrant_errors(
                    pa, pb, subtract, i * stride + j * C, single, i, j, tot
                )
                if e11 + e10 < best_right[x]:
                    best_right[x] = e11 + e10
                    arg_right[x] = j
                if e01 + e00 < best_left[x]:
                    best_left[x] = e01 + e00
                    arg_left[x] = j
                if e11 + e01 < best_right[z]:
                    best_right[z] = e11 + e01
                    arg_right[z] = i
                if e10 + e00 < best_left[z]:
                    best_left[z] = e10 + e00
                    arg_left[z] = i
    best = root_leaf + penalty
    four = 4.0 * penalty
    bi = bl = br = -1
    for x in range(n):
        e = best_left[x] + best_right[x] + four
        if e < best:
            best = e
            bi = cand[x]
            bl = arg_left[x]
            br = arg_right[x]
    return best, bi, bl, br, n * n // 2 + a


@njit((SPACE_T, F64_T, types.int64, types.int64, types.float64, SCRATCH_T), cache=True)
def eval_pairs_penalised(counts, pairs, n_rows, a, penalty, scr):
    """:func:`_best_pairs` from the pair counts ``pairs`` of the rows themselves, each leaf
    costing ``penalty`` (0: the error alone)."""
    return _best_pairs(counts, pairs, pairs, False, n_rows, a, penalty, scr)


@njit((SPACE_T, F64_T, F64_T, types.int64, types.int64, types.float64, SCRATCH_T), cache=True)
def eval_pairs_difference_penalised(counts, pa, pb, n_rows, a, penalty, scr):
    """:func:`_best_pairs` from the pair counts ``pa - pb``: a node's minus those of its
    smaller child, which gives the larger child's (``counts`` are the larger child's); each
    leaf costing ``penalty``."""
    return _best_pairs(counts, pa, pb, True, n_rows, a, penalty, scr)


def solve_depth2(
    rows: np.ndarray, data: Data, scr: Scratch, space: Space, penalty: float = 0.0
) -> tuple[float, int, int, int, int]:
    """Optimal tree of depth at most two over ``rows``: ``(error, f, g_left, g_right, work)``.

    Counts the rows over the features that split them (``space`` is overwritten), then
    evaluates every root feature with the best one-split subtree on each side; -1 = leaf
    (``g_left`` splits the rows without f, ``g_right`` those with f). With a ``penalty``,
    each leaf costs that much more and the first number is that cost.
    """
    a, work = make_space(rows, data, scr, space)
    e, i, il, ir, w2 = eval_pairs_penalised(space, space.pairs, rows.shape[0], a, penalty, scr)
    act = space.act
    f, gl, gr = (int(act[x]) if x >= 0 else -1 for x in (i, il, ir))
    return e, f, gl, gr, work + w2


@njit(cache=True, inline="always")
def subtract_counts(lg, qs, xs, aq):
    """The larger child's single counts and totals: the parent's (``qs``) minus the smaller
    child's (``xs``), over the parent's ``aq`` local features."""
    for i in range(aq):
        for c in range(lg.single.shape[1]):
            lg.single[i, c] = qs.single[i, c] - xs.single[i, c]
        lg.n1[i] = qs.n1[i] - xs.n1[i]
    for c in range(lg.tot.shape[0]):
        lg.tot[c] = qs.tot[c] - xs.tot[c]


# ---------------------------------------------------------------------- lower bounds
@njit(cache=True, inline="always")
def removed_weight(space, a, g, f, side):
    """Weight of the rows with ``g == side`` but ``f != side``, from a parent's pair counts.

    ``space`` counts the parent's rows (``a`` local features); g and f are two different
    features (not local indices) that split them. A child reached by ``g == side`` and the child reached by
    ``f == side`` differ by these rows (and by rows added, which cannot lower the error).
    """
    pairs, single, loc = space.pairs, space.single, space.loc
    C = single.shape[1]
    i = loc[g]
    j = loc[f]
    lo = min(i, j)
    hi = max(i, j)
    k = (lo * a + hi) * C
    both = 0.0
    removed = 0.0
    for c in range(C):
        both += pairs[k + c]
        removed += single[i, c] if side else single[j, c]
    return removed - both


@njit(
    (types.float64, SPACE_T, types.int64, types.int64, types.int64, types.int64),
    cache=True,
    inline="always",
)
def similarity_bound(opt_then, space, a, g, f, side):
    """MurTree's similarity lower bound on the optimal error of a child of a parent node.

    The parent's ``side`` child under feature g had optimal error ``opt_then``; under feature
    f its rows differ only by the rows with ``g == side, f != side`` (removed) and those with
    ``f == side, g != side`` (added). Adding rows never lowers the optimal error, removing
    rows lowers it by at most their weight, so the optimum under f is at least
    ``opt_then - removed_weight``.
    """
    return opt_then - removed_weight(space, a, g, f, side)
