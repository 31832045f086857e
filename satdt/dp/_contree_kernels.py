"""Numba kernels of ConTree (Brita, van der Linden & Demirovic, AAAI 2025).

The data are the distinct rows ``0 .. N-1`` of the design matrix: ``Rt[f, u]`` is the rank of
row u's value among the distinct values of column f (int32, ``(m, N)``), ``W[u]`` its class
weights (``(N, C)``), ``rw[u]`` their sum and ``rirr[u]`` its irreducible error (weight not of
its heaviest class). A subproblem is ``order`` (int32 ``(m, n)``): its rows sorted by each
column (ties by row id), kept sorted through splits (:func:`partition`), so no subproblem is
ever sorted again.

A split of a subproblem on column f is identified by its index k among the split points of
``order[f]`` (the positions where the rank changes, :func:`split_points`): rows before
position ``pos[k]`` go left; ``P[k]`` is their weight.

Branch (Algorithm 1) keeps a queue Q of intervals of split indices ``[i..j]`` with the nearest
evaluated indices ``u < i`` and ``v > j`` around them (``-1`` and ``K``: none);
:func:`branch_next` prunes and picks the next split to evaluate, :func:`branch_update`
stores its (lower bounds of) left and right errors and splits its interval. Both are called
from Python for depths of three or more and from :func:`satdt.dp._contree_d2.solve_d2` for
depth two (a module of its own: the search can start without it, see :mod:`satdt.dp.contree`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

# Numba types of the kernels' arguments: each kernel is compiled for one signature (see
# :mod:`satdt.dp._counts`).
ORDER_T = types.int32[:, ::1]  # a subproblem: its rows sorted by each column
RANKS_T = types.int32[::1]
I32_2D_T = types.int32[:, ::1]
I64_T = types.int64[::1]
I64_2D_T = types.int64[:, ::1]
F64_T = types.float64[::1]
F64_2D_T = types.float64[:, ::1]
BOOL_T = types.boolean[::1]

# Pruning switches (bit flags), see ``satdt.dp.contree.PRUNING``.
NEIGHBOURHOOD = 1
SHRINKING = 2
SUBINTERVAL = 4
SIMILARITY = 8

# ctl slots of a Branch state.
COUNT, HEAD, HINT, CUR_I, CUR_J, CUR_U, CUR_V, CUR_W, PRUNED = range(9)
N_CTL = 9

# out slots of solve_d1 and solve_d2: the tree found, as column and rank threshold per node.
# O_TIMEOUT: solve_d2 stopped at the deadline (the tree in out, if found, is not proven).
O_FOUND, O_F1, O_R1, O_FL, O_RL, O_FR, O_RR, O_D2SPLITS, O_CUTS, O_TIMEOUT = range(10)
N_OUT = 10


@njit((RANKS_T, RANKS_T, F64_T, I64_T, F64_T), cache=True)
def split_points(order_f, rank_f, rw, pos, P):
    """Split points of one sorted column: ``pos[k]`` rows (of weight ``P[k]``) go left; count K."""
    n = order_f.shape[0]
    K = 0
    acc = 0.0
    for i in range(n - 1):
        acc += rw[order_f[i]]
        if rank_f[order_f[i + 1]] != rank_f[order_f[i]]:
            pos[K] = i + 1
            P[K] = acc
            K += 1
    return K


@njit((ORDER_T, RANKS_T, types.int64, ORDER_T, ORDER_T), cache=True)
def partition(order, rank_f, r, left, right):
    """Stable split of every sorted column of a subproblem: rank <= r left, the others right."""
    m, n = order.shape
    for g in range(m):
        a = 0
        b = 0
        for k in range(n):
            row = order[g, k]
            if rank_f[row] <= r:
                left[g, a] = row
                a += 1
            else:
                right[g, b] = row
                b += 1


@njit(cache=True, inline="always")
def _first_above(P, lo, hi, x):
    """First k in [lo..hi] with P[k] > x (P increasing), else hi + 1."""
    a = lo
    b = hi + 1
    while a < b:
        mid = (a + b) // 2
        if P[mid] > x:
            b = mid
        else:
            a = mid + 1
    return a


@njit(cache=True, inline="always")
def _last_below(P, lo, hi, x):
    """Last k in [lo..hi] with P[k] < x (P increasing), else lo - 1."""
    a = lo
    b = hi + 1
    while a < b:
        mid = (a + b) // 2
        if P[mid] < x:
            a = mid + 1
        else:
            b = mid
    return a - 1


@njit((I64_2D_T, I64_T, types.int64, types.int64), cache=True)
def branch_init(queue, ctl, K, hint):
    """Start Branch over split indices [0..K-1]; ``hint`` (or -1) is evaluated first."""
    for slot in range(ctl.shape[0]):
        ctl[slot] = 0
    queue[0, 0] = 0
    queue[0, 1] = K - 1
    queue[0, 2] = -1
    queue[0, 3] = K
    ctl[COUNT] = 1 if K > 0 else 0
    ctl[HINT] = hint


@njit(cache=True, inline="always")
def _push_pieces(queue, ctl, P, thL, thR, target, flags):
    """Split the current interval around its evaluated index w (Eq. (9) when NEIGHBOURHOOD).

    Corollary 1: a split k < w moves the weight ``P[w] - P[k]`` across, so its error is at
    least ``theta_w - (P[w] - P[k])``; those with that bound >= target are dropped.
    """
    i = ctl[CUR_I]
    j = ctl[CUR_J]
    u = ctl[CUR_U]
    v = ctl[CUR_V]
    w = ctl[CUR_W]
    a = w - 1
    b = w + 1
    if flags & NEIGHBOURHOOD:
        d = thL[w] + thR[w] - target
        if d >= 0:
            a = _last_below(P, i, w - 1, P[w] - d)
            b = _first_above(P, w + 1, j, P[w] + d)
    if i <= a:
        _push(queue, ctl, i, a, u, w)
    if b <= j:
        _push(queue, ctl, b, j, w, v)


@njit(cache=True, inline="always")
def _push(queue, ctl, i, j, u, v):
    """Append the interval [i..j] between evaluated u and v to the queue Q (a ring buffer)."""
    q = (ctl[HEAD] + ctl[COUNT]) % queue.shape[0]
    queue[q, 0] = i
    queue[q, 1] = j
    queue[q, 2] = u
    queue[q, 3] = v
    ctl[COUNT] += 1


@njit((I64_2D_T, I64_T, F64_T, F64_T, F64_T, types.int64, types.float64, types.int64), cache=True)
def branch_next(queue, ctl, P, thL, thR, K, target, flags):
    """The next split index to evaluate (Algorithm 1, lines 4-10), or -1 when Q is empty.

    A split must have an error below ``target``. Popped intervals are pruned with interval
    shrinking (Corollary 1 from both neighbours and Theorem 2, the ``P_IS`` rule) and
    sub-interval pruning (Theorem 3, ``P_SP``), and the chosen index with the similarity
    lower bound (Eq. (3)) from both neighbours, per side: a skipped index keeps these bounds
    as its errors, so it still prunes its neighbourhood.
    """
    while ctl[COUNT] > 0:
        q = ctl[HEAD]
        ctl[HEAD] = (q + 1) % queue.shape[0]
        ctl[COUNT] -= 1
        i = queue[q, 0]
        j = queue[q, 1]
        u = queue[q, 2]
        v = queue[q, 3]
        if flags & SHRINKING:
            if u >= 0:
                d = thL[u] + thR[u] - target
                if d >= 0:
                    if thR[u] == 0.0:  # Theorem 2: every k > u has error >= theta_u
                        ctl[PRUNED] += j - i + 1
                        continue
                    i2 = _first_above(P, i, j, P[u] + d)
                    ctl[PRUNED] += i2 - i
                    i = i2
            if v < K and i <= j:
                d = thL[v] + thR[v] - target
                if d >= 0:
                    if thL[v] == 0.0:
                        ctl[PRUNED] += j - i + 1
                        continue
                    j2 = _last_below(P, i, j, P[v] - d)
                    ctl[PRUNED] += j - j2
                    j = j2
            if i > j:
                continue
        if flags & SUBINTERVAL:
            lo = thL[u] if u >= 0 else 0.0
            hi = thR[v] if v < K else 0.0
            if lo + hi >= target:  # Theorem 3
                ctl[PRUNED] += j - i + 1
                continue
        hint = ctl[HINT]
        if i <= hint <= j:
            w = hint
            ctl[HINT] = -1
        else:
            w = (i + j) // 2
        ctl[CUR_I] = i
        ctl[CUR_J] = j
        ctl[CUR_U] = u
        ctl[CUR_V] = v
        ctl[CUR_W] = w
        if flags & SIMILARITY:
            lbL = 0.0
            lbR = 0.0
            if u >= 0:
                lbL = thL[u]  # the left side only grows from u to w
                lbR = thR[u] - (P[w] - P[u])  # the right side loses P[w] - P[u]
            if v < K:
                lbL = max(lbL, thL[v] - (P[v] - P[w]))
                lbR = max(lbR, thR[v])
            if lbL + lbR >= target:
                thL[w] = lbL
                thR[w] = max(lbR, 0.0)
                ctl[PRUNED] += 1
                _push_pieces(queue, ctl, P, thL, thR, target, flags)
                continue
        return w
    return -1


@njit(
    (
        I64_2D_T,
        I64_T,
        F64_T,
        F64_T,
        F64_T,
        types.float64,
        types.int64,
        types.float64,
        types.float64,
    ),
    cache=True,
)
def branch_update(queue, ctl, P, thL, thR, target, flags, tl, tr):
    """Record the (lower bounds of the) errors of the evaluated split and split its interval."""
    w = ctl[CUR_W]
    thL[w] = tl
    thR[w] = tr
    _push_pieces(queue, ctl, P, thL, thR, target, flags)


@njit(cache=True, inline="always")
def _leaf_error(counts, total):
    best = 0.0
    for c in range(counts.shape[0]):
        if counts[c] > best:
            best = counts[c]
    return total - best


@njit(cache=True, inline="always")
def _split_error(CL, FQ, nL, tot):
    """Error of the two leaves of a split: left class weights CL, right FQ - CL."""
    a = 0.0
    b = 0.0
    for c in range(CL.shape[0]):
        x = CL[c]
        if x > a:
            a = x
        z = FQ[c] - x
        if z > b:
            b = z
    return (nL - a) + (tot - nL - b)


@njit((RANKS_T, RANKS_T, F64_2D_T, F64_T, F64_T, types.float64, F64_T), cache=True)
def depth_one_scan(order_f, rank_f, W, rw, FQ, tot, CL):
    """Best single split of one sorted column: (error, split index k, rank threshold); k = -1: none."""
    n = order_f.shape[0]
    for c in range(CL.shape[0]):
        CL[c] = 0.0
    nL = 0.0
    best = np.inf
    kbest = -1
    rbest = -1
    k = 0
    C = W.shape[1]
    for i in range(n - 1):
        row = order_f[i]
        for c in range(C):
            CL[c] += W[row, c]
        nL += rw[row]
        r = rank_f[row]
        if rank_f[order_f[i + 1]] != r:
            e = _split_error(CL, FQ, nL, tot)
            if e < best:
                best = e
                kbest = k
                rbest = r
            k += 1
    return best, kbest, rbest


@njit((RANKS_T, F64_2D_T, F64_T, F64_T, F64_T), cache=True)
def class_totals(order0, W, rw, rirr, FQ):
    """Class weights FQ of a subproblem; returns (total weight, irreducible error)."""
    for c in range(FQ.shape[0]):
        FQ[c] = 0.0
    tot = 0.0
    floor = 0.0
    C = W.shape[1]
    for k in range(order0.shape[0]):
        row = order0[k]
        for c in range(C):
            FQ[c] += W[row, c]
        tot += rw[row]
        floor += rirr[row]
    return tot, floor


@njit(
    (
        ORDER_T,
        I32_2D_T,
        F64_2D_T,
        F64_T,
        F64_T,
        types.float64,
        F64_T,
        I64_2D_T,
        F64_2D_T,
        I64_T,
        F64_T,
        I64_T,
    ),
    cache=True,
)
def depth_one_all(order, Rt, W, rw, FQ, tot, CL, pos, P, Ks, err, hint):
    """Split points of every column (``pos``, ``P``, ``Ks``) and each column's best single split."""
    m = order.shape[0]
    for f in range(m):
        Ks[f] = split_points(order[f], Rt[f], rw, pos[f], P[f])
        e, kb, _ = depth_one_scan(order[f], Rt[f], W, rw, FQ, tot, CL)
        err[f] = e
        hint[f] = kb


@njit((ORDER_T, I32_2D_T, F64_2D_T, F64_T, F64_T, types.float64, types.float64, I64_T), cache=True)
def solve_d1(order, Rt, W, rw, rirr, ub, slack, out):
    """Minimum-error tree of depth <= 1 with error below ``ub``: its error (else ``ub``).

    ``out[O_FOUND]`` says whether one was found; ``out[O_F1]``, ``out[O_R1]`` its split
    (-1: a leaf). After each better tree, only trees better by more than ``slack`` count.
    """
    m = order.shape[0]
    C = W.shape[1]
    FQ = np.zeros(C)
    CL = np.zeros(C)
    tot, floor = class_totals(order[0], W, rw, rirr, FQ)
    for slot in range(out.shape[0]):
        out[slot] = -1
    out[O_FOUND] = 0
    best = ub
    target = ub
    leaf = _leaf_error(FQ, tot)
    if leaf < target:
        best = leaf
        target = leaf - slack
        out[O_FOUND] = 1
    for f in range(m):
        if target <= floor:
            break
        e, _, rb = depth_one_scan(order[f], Rt[f], W, rw, FQ, tot, CL)
        if e < target:
            best = e
            target = e - slack
            out[O_FOUND] = 1
            out[O_F1] = f
            out[O_R1] = rb
    return best
