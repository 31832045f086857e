"""Numba kernels of ConTree (Brita, van der Linden & Demirovic, AAAI 2025).

The data are the distinct rows ``0 .. N-1`` of the design matrix: ``Rt[f, u]`` is the rank of
row u's value among the distinct values of column f (int32, ``(m, N)``), ``W[u]`` its class
weights (``(N, C)``), ``rw[u]`` their sum and ``rirr[u]`` its irreducible error (weight not of
its heaviest class). A subproblem is ``order`` (int32 ``(m, n)``): its rows sorted by each
column (ties by row id), kept sorted through splits (:func:`partition`), so no subproblem is
ever sorted again. ``rc[u]`` is the number of training rows (of positive weight) merged into
row u, for the minimum support ``s``: a split is allowed only when each side holds at least
``s`` training rows. The cost of a tree is its error plus ``pen`` (the leaf penalty, in units
of the weights) per leaf; every error below is such a cost.

A split of a subproblem on column f is identified by its index k among the split points of
``order[f]`` (the positions where the rank changes and both sides have the support,
:func:`split_points`): rows before position ``pos[k]`` go left; ``P[k]`` is their weight.

The bounds of Branch rest on two facts about the optimal cost T of a row set at a depth:
adding rows of weight x raises T by at most x (the same tree, the same leaves, and more
support), and, with ``s = 1``, no subset costs more than its superset (monotonicity). Under a
minimum support a subset D of D' may cost more (it may be too small to split), but at depth
d by at most ``drop = gamma * (2^d - 1)``, ``gamma = max(0, (s - 1) * wmax - pen)`` with
``wmax`` the largest weight of a training row: take the optimal tree of D' on D and merge a
leaf with fewer than s rows of D into its sibling's subtree (which misclassifies at most its
s - 1 rows, saves a leaf, and leaves no new such leaf) until none is left; that is at most
2^d - 1 merges, and the tree then has the support on D. So Branch reads a superset's bound
as the subset's cost less ``drop`` (0 without a support rule); every side also costs at least
``pen``.

Branch (Algorithm 1) keeps a queue Q of intervals of split indices ``[i..j]`` with the nearest
evaluated indices ``u < i`` and ``v > j`` around them (``-1`` and ``K``: none);
:func:`branch_next` prunes and picks the next split to evaluate, :func:`branch_update`
stores its (lower bounds of) left and right errors and splits its interval. Both are called
from Python for depths of three or more and from :func:`satdt.dp._contree_d2.solve_d2` for
depth two (a module of its own: the search can start without it, see :mod:`satdt.dp.contree`).
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit, objmode, types

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

# Slots of ``rule``, the leaf rule of a search (float64): the leaf penalty, the minimum
# support s and gamma (see above).
RULE_PEN, RULE_SUPPORT, RULE_GAMMA = range(3)
N_RULE = 3

# ctl slots of a Branch state.
COUNT, HEAD, HINT, CUR_I, CUR_J, CUR_U, CUR_V, CUR_W, PRUNED = range(9)
N_CTL = 9

# out slots of solve_d1 and solve_d2: the tree found, as column and rank threshold per node.
# O_TIMEOUT: solve_d2 stopped at the deadline (the tree in out, if found, is not proven).
O_FOUND, O_F1, O_R1, O_FL, O_RL, O_FR, O_RR, O_D2SPLITS, O_CUTS, O_TIMEOUT = range(10)
N_OUT = 10


@njit(cache=True, inline="always")
def _support(order_f, rc):
    """Training rows of a subproblem (the sum of ``rc`` over its rows)."""
    total = 0
    for i in range(order_f.shape[0]):
        total += rc[order_f[i]]
    return total


@njit((RANKS_T, RANKS_T, F64_T, I64_T, types.int64, I64_T, F64_T), cache=True)
def split_points(order_f, rank_f, rw, rc, s, pos, P):
    """Split points of one sorted column: ``pos[k]`` rows (of weight ``P[k]``) go left; count K.

    Only the splits with at least ``s`` training rows on each side (a range of positions).
    """
    n = order_f.shape[0]
    sup = s > 1
    total = _support(order_f, rc) if sup else 0
    K = 0
    acc = 0.0
    left = 0
    for i in range(n - 1):
        acc += rw[order_f[i]]
        if sup:
            left += rc[order_f[i]]
        if rank_f[order_f[i + 1]] != rank_f[order_f[i]]:
            if sup:
                if total - left < s:
                    break
                if left < s:
                    continue
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
def _push_pieces(queue, ctl, P, thL, thR, target, flags, pen, drop):
    """Split the current interval around its evaluated index w (Eq. (9) when NEIGHBOURHOOD).

    Corollary 1: a split k < w moves the weight ``P[w] - P[k]`` across, so its left side
    costs at least ``theta_L(w) - (P[w] - P[k])`` and its right side, a superset, at least
    ``theta_R(w) - drop``; those with that bound >= target are dropped (k > w: the mirror
    image). With a penalty, the side that moves costs at least ``pen`` too.
    """
    i = ctl[CUR_I]
    j = ctl[CUR_J]
    u = ctl[CUR_U]
    v = ctl[CUR_V]
    w = ctl[CUR_W]
    a = w - 1
    b = w + 1
    if flags & NEIGHBOURHOOD:
        d = thL[w] + thR[w] - drop - target
        if d >= 0:
            a = _last_below(P, i, w - 1, P[w] - d)
            b = _first_above(P, w + 1, j, P[w] + d)
        if pen > 0.0:
            if thR[w] - drop + pen >= target:
                a = i - 1
            if thL[w] - drop + pen >= target:
                b = j + 1
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


@njit(
    (
        I64_2D_T,
        I64_T,
        F64_T,
        F64_T,
        F64_T,
        types.int64,
        types.float64,
        types.int64,
        types.float64,
        types.float64,
    ),
    cache=True,
)
def branch_next(queue, ctl, P, thL, thR, K, target, flags, pen, drop):  # noqa: C901 — Numba kernel: Branch's next threshold under every bound, split it costs speed
    """The next split index to evaluate (Algorithm 1, lines 4-10), or -1 when Q is empty.

    A split must cost less than ``target``. Popped intervals are pruned with interval
    shrinking (Corollary 1 from both neighbours and Theorem 2, the ``P_IS`` rule) and
    sub-interval pruning (Theorem 3, ``P_SP``), and the chosen index with the similarity
    lower bound (Eq. (3)) from both neighbours, per side: a skipped index keeps these bounds
    as its costs, so it still prunes its neighbourhood. Each side of a split costs at least
    ``pen``, and a superset of a side at least that side's cost less ``drop`` (see the module
    docstring).
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
                # every k > u: left side >= thL[u] - drop, right side >= thR[u] - (P[k] - P[u])
                if pen > 0.0 and thL[u] - drop + pen >= target:  # Theorem 2 with a leaf
                    ctl[PRUNED] += j - i + 1
                    continue
                d = thL[u] - drop + thR[u] - target
                if d >= 0:
                    if thR[u] <= pen:  # Theorem 2: every k > u costs >= theta_u
                        ctl[PRUNED] += j - i + 1
                        continue
                    i2 = _first_above(P, i, j, P[u] + d)
                    ctl[PRUNED] += i2 - i
                    i = i2
            if v < K and i <= j:
                if pen > 0.0 and thR[v] - drop + pen >= target:
                    ctl[PRUNED] += j - i + 1
                    continue
                d = thL[v] + thR[v] - drop - target
                if d >= 0:
                    if thL[v] <= pen:
                        ctl[PRUNED] += j - i + 1
                        continue
                    j2 = _last_below(P, i, j, P[v] - d)
                    ctl[PRUNED] += j - j2
                    j = j2
            if i > j:
                continue
        if flags & SUBINTERVAL:
            lo = max(thL[u] - drop, pen) if u >= 0 else pen
            hi = max(thR[v] - drop, pen) if v < K else pen
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
                lbL = thL[u] - drop  # the left side only grows from u to w
                lbR = thR[u] - (P[w] - P[u])  # the right side loses P[w] - P[u]
            if v < K:
                lbL = max(lbL, thL[v] - (P[v] - P[w]))
                lbR = max(lbR, thR[v] - drop)
            if pen > 0.0:  # each side costs at least a leaf
                lbL = max(lbL, pen)
                lbR = max(lbR, pen)
            if lbL + lbR >= target:
                thL[w] = max(lbL, 0.0)
                thR[w] = max(lbR, 0.0)
                ctl[PRUNED] += 1
                _push_pieces(queue, ctl, P, thL, thR, target, flags, pen, drop)
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
        types.float64,
        types.float64,
    ),
    cache=True,
)
def branch_update(queue, ctl, P, thL, thR, target, flags, pen, drop, tl, tr):
    """Record the (lower bounds of the) costs of the evaluated split and split its interval."""
    w = ctl[CUR_W]
    thL[w] = tl
    thR[w] = tr
    _push_pieces(queue, ctl, P, thL, thR, target, flags, pen, drop)


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


@njit(
    (RANKS_T, RANKS_T, F64_2D_T, F64_T, I64_T, types.int64, F64_T, types.float64, F64_T),
    cache=True,
)
def depth_one_scan(order_f, rank_f, W, rw, rc, s, FQ, tot, CL):
    """Best single split of one sorted column: (error, split index k, rank threshold); k = -1: none.

    Only splits with at least ``s`` training rows on each side count (numbered as by
    :func:`split_points`); the error is that of the two leaves, without their penalty.
    """
    n = order_f.shape[0]
    for c in range(CL.shape[0]):
        CL[c] = 0.0
    nL = 0.0
    best = np.inf
    kbest = -1
    rbest = -1
    k = 0
    C = W.shape[1]
    sup = s > 1
    total = _support(order_f, rc) if sup else 0
    left = 0
    for i in range(n - 1):
        row = order_f[i]
        for c in range(C):
            CL[c] += W[row, c]
        nL += rw[row]
        if sup:
            left += rc[row]
        r = rank_f[row]
        if rank_f[order_f[i + 1]] != r:
            if sup:
                if total - left < s:
                    break
                if left < s:
                    continue
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


@njit((), cache=True)
def clock():
    """``time.perf_counter()`` from inside a kernel (about a microsecond)."""
    with objmode(now="float64"):
        now = time.perf_counter()
    return now


# depth_one_all looks at the clock after this many rows x columns (a few milliseconds).
_ONE_WORK = 1 << 20


@njit(
    (
        ORDER_T,
        I32_2D_T,
        F64_2D_T,
        F64_T,
        I64_T,
        types.int64,
        F64_T,
        types.float64,
        F64_T,
        I64_2D_T,
        F64_2D_T,
        I64_T,
        F64_T,
        I64_T,
        types.float64,
    ),
    cache=True,
)
def depth_one_all(order, Rt, W, rw, rc, s, FQ, tot, CL, pos, P, Ks, err, hint, deadline):
    """Split points of every column (``pos``, ``P``, ``Ks``) and each column's best single split
    (its error ``err`` and index ``hint``), splits with support ``s`` only. Returns False when
    ``deadline`` (a ``time.perf_counter()`` value; ``inf``: none) passed first, looked at
    between columns (two passes over a subproblem of 10^5 rows take about 10 ms per column)."""
    m, n = order.shape
    work = 0
    for f in range(m):
        if work >= _ONE_WORK:
            work = 0
            if clock() >= deadline:
                return False
        work += n
        Ks[f] = split_points(order[f], Rt[f], rw, rc, s, pos[f], P[f])
        e, kb, _ = depth_one_scan(order[f], Rt[f], W, rw, rc, s, FQ, tot, CL)
        err[f] = e
        hint[f] = kb
    return True


@njit(
    (
        ORDER_T,
        I32_2D_T,
        F64_2D_T,
        F64_T,
        F64_T,
        I64_T,
        F64_T,
        types.float64,
        types.float64,
        I64_T,
    ),
    cache=True,
)
def solve_d1(order, Rt, W, rw, rirr, rc, rule, ub, slack, out):
    """Minimum-cost tree of depth <= 1 with cost below ``ub``: its cost (else ``ub``).

    The cost is the error plus the penalty of ``rule`` per leaf; a split needs the rule's
    support s in training rows (``rc[u]`` of row u) on each side. ``out[O_FOUND]`` says
    whether one was found; ``out[O_F1]``, ``out[O_R1]`` its split (-1: a leaf). After each
    better tree, only trees better by more than ``slack`` count.
    """
    pen = rule[RULE_PEN]
    s = int(rule[RULE_SUPPORT])
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
    leaf = _leaf_error(FQ, tot) + pen
    if leaf < target:
        best = leaf
        target = leaf - slack
        out[O_FOUND] = 1
    pen2 = 2.0 * pen
    for f in range(m):
        if target <= floor + pen2:  # a split costs at least the floor and two leaves
            break
        e, _, rb = depth_one_scan(order[f], Rt[f], W, rw, rc, s, FQ, tot, CL)
        e += pen2
        if e < target:
            best = e
            target = e - slack
            out[O_FOUND] = 1
            out[O_F1] = f
            out[O_R1] = rb
    return best
