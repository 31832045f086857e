"""ConTree's depth-two kernel (Brita, van der Linden & Demirovic, AAAI 2025, Algorithm 2).

:func:`solve_d2` solves a depth-two subproblem in one kernel: Branch (Algorithm 1, the
kernels of :mod:`satdt.dp._contree_kernels`) over the root's splits, each split's two
depth-one children by D2Split (:func:`d2split`) in one pass over the sorted data. Its own
module and kernel group, the largest of ConTree's: on a first run the search starts with the
other kernels (depth-two subproblems then recurse in Python) and takes this one in when it
is compiled (:mod:`satdt.dp.contree`).
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit, objmode, types

from ._contree_kernels import (
    BOOL_T,
    F64_2D_T,
    F64_T,
    I32_2D_T,
    I64_2D_T,
    I64_T,
    N_CTL,
    O_CUTS,
    O_D2SPLITS,
    O_F1,
    O_FL,
    O_FOUND,
    O_FR,
    O_R1,
    O_RL,
    O_RR,
    O_TIMEOUT,
    ORDER_T,
    PRUNED,
    RANKS_T,
    RULE_GAMMA,
    RULE_PEN,
    RULE_SUPPORT,
    _leaf_error,
    branch_init,
    branch_next,
    branch_update,
    class_totals,
    depth_one_all,
)

# solve_d2 looks at the clock after this much work (rows x columns passed over), about a
# millisecond: one depth-two subproblem on 10^5 rows with many thresholds can take minutes.
CLOCK_WORK = 1_000_000


@njit((), cache=True)
def _clock():
    """``time.perf_counter()`` from inside a kernel (about a microsecond)."""
    with objmode(now="float64"):
        now = time.perf_counter()
    return now


@njit(cache=True, inline="always")
def _argmax2(F, A):
    """Largest of F - A over the classes, which class, and the largest of the others."""
    best = -1.0
    second = -1.0
    arg = 0
    for q in range(F.shape[0]):
        x = F[q] - A[q]
        if x > best:
            second = best
            best = x
            arg = q
        elif x > second:
            second = x
    return best, arg, second


@njit(cache=True, inline="always")
def _top2(F):
    """Sum of the two largest entries of F (the most weight two leaves can classify right)."""
    a = 0.0
    b = 0.0
    for q in range(F.shape[0]):
        x = F[q]
        if x > a:
            b = a
            a = x
        elif x > b:
            b = x
    return a + b


@njit(cache=True, inline="always")
def _side_bound(F, tot, floor, pen):
    """A lower bound on a side's cost at depth one, from its class weights ``F``: a leaf, or
    a split, whose two leaves classify at most the two heaviest classes right (and leave the
    irreducible error ``floor``)."""
    split = max(floor, tot - _top2(F)) + 2.0 * pen
    return min(_leaf_error(F, tot) + pen, split)


@njit(cache=True, inline="always")
def _least_split(F, tot, floor, pen):
    """The least cost of a tree of depth two that splits: with k = 2, 3 or 4 leaves it leaves
    at least the weight of all but the k heaviest classes (and the irreducible error)."""
    top = np.sort(F)[::-1]
    least = np.inf
    kept = 0.0
    for k in range(min(4, F.shape[0])):
        kept += top[k]
        if k >= 1:
            least = min(least, max(floor, tot - kept) + (k + 1) * pen)
    if F.shape[0] < 2:
        least = floor + 2.0 * pen
    return least


# Rows of a side of a split (D2Split's state): weight, the least error of a split of it,
# cap, training rows (the last with a support rule only).
S_TOT, S_FLOOR, S_CAP, S_COUNT = range(4)


@njit(
    (
        ORDER_T,
        I32_2D_T,
        I32_2D_T,
        F64_2D_T,
        F64_2D_T,
        BOOL_T,
        F64_2D_T,
        F64_2D_T,
        types.float64,
        F64_2D_T,
        I64_T,
        I64_T,
    ),
    cache=True,
)
def d2split(order, rk_s, cl_s, wt_s, W, goleft, FQ2, side, pen, st, res, cols):  # noqa: C901 — Numba kernel: the depth-two scan of ConTree's Algorithm 2, split it costs speed
    """D2Split (Algorithm 2): optimal depth-one trees of both sides of a split, in one pass.

    Side 0 holds the rows with ``goleft``, side 1 the others; ``FQ2[q]`` are side q's class
    weights and ``side[:, q]`` its weight, the least error of a split of it and its cap (the
    cost above which its exact value does not matter; slots ``S_*``). Along every sorted
    column f2 of ``cols`` (the most promising first: the sooner a side's best split is found,
    the sooner it stops along the others; ``rk_s``, ``cl_s``, ``wt_s``: ranks, classes (-1:
    several, read from ``W``), weights in that column's order) the class weights ``A`` of each side's rows seen so far are
    updated (the rows not yet seen weigh ``FQ2[q] - A``), with the largest of each kept
    incrementally (a pure row changes one class; a runner-up bound says when the largest
    remaining class can change), and where a side's rank changes its split error is
    evaluated against ``lim``, the side's best cost less two leaves' penalty ``pen``. The
    state of each side is kept in scalars (the code of the two sides is written twice for
    that). A side's left-part error only grows along a column, so a side stops once it
    alone reaches ``lim``. Returns the two costs; each is exact if below its cap
    (``res[4 + q]`` = 1), else it is the cap, a lower bound. ``res[2q]``, ``res[2q + 1]``:
    column and rank threshold of side q (-1: a leaf). ``st`` is float scratch ``(2, C)``.
    Without a support rule (:func:`d2split_support` has one).
    """
    n = order.shape[1]
    C = W.shape[1]
    A0 = st[0]
    A1 = st[1]
    F0 = FQ2[0]
    F1 = FQ2[1]
    t0 = side[S_TOT, 0]
    t1 = side[S_TOT, 1]
    fl0 = side[S_FLOOR, 0]
    fl1 = side[S_FLOOR, 1]
    for slot in range(res.shape[0]):
        res[slot] = -1
    best0 = _leaf_error(F0, t0) + pen
    best1 = _leaf_error(F1, t1) + pen
    res[4] = 1
    res[5] = 1
    if best0 >= side[S_CAP, 0]:
        best0 = side[S_CAP, 0]
        res[4] = 0
    if best1 >= side[S_CAP, 1]:
        best1 = side[S_CAP, 1]
        res[5] = 0
    pen2 = 2.0 * pen
    lim0 = best0 - pen2  # the error a split of side 0 must be below
    lim1 = best1 - pen2
    for f2 in cols:
        run0 = lim0 > fl0
        run1 = lim1 > fl1
        if not (run0 or run1):
            break
        for q in range(C):
            A0[q] = 0.0
            A1[q] = 0.0
        mxA0 = 0.0
        mxA1 = 0.0
        mxB0, argB0, sec0 = _argmax2(F0, A0)
        mxB1, argB1, sec1 = _argmax2(F1, A1)
        n0 = 0.0
        n1 = 0.0
        last0 = -1
        last1 = -1
        of2 = order[f2]
        rk = rk_s[f2]
        cl = cl_s[f2]
        wt = wt_s[f2]
        for k in range(n):
            row = of2[k]
            r = rk[k]
            if goleft[row]:
                if not run0:
                    continue
                if r != last0:
                    if last0 >= 0:
                        eA = n0 - mxA0
                        if eA >= lim0:
                            run0 = False
                            if not run1:
                                break
                            continue
                        e = eA + (t0 - n0 - mxB0)
                        if e < lim0:
                            lim0 = e
                            res[0] = f2
                            res[1] = last0
                            res[4] = 1
                    last0 = r
                c = cl[k]
                x = wt[k]
                n0 += x
                if c >= 0:
                    v = A0[c] + x
                    A0[c] = v
                    if v > mxA0:
                        mxA0 = v
                    if c == argB0:
                        b = F0[c] - v
                        if b >= sec0:
                            mxB0 = b
                        else:
                            mxB0, argB0, sec0 = _argmax2(F0, A0)
                else:
                    for q in range(C):
                        A0[q] += W[row, q]
                        if A0[q] > mxA0:
                            mxA0 = A0[q]
                    mxB0, argB0, sec0 = _argmax2(F0, A0)
            else:
                if not run1:
                    continue
                if r != last1:
                    if last1 >= 0:
                        eA = n1 - mxA1
                        if eA >= lim1:
                            run1 = False
                            if not run0:
                                break
                            continue
                        e = eA + (t1 - n1 - mxB1)
                        if e < lim1:
                            lim1 = e
                            res[2] = f2
                            res[3] = last1
                            res[5] = 1
                    last1 = r
                c = cl[k]
                x = wt[k]
                n1 += x
                if c >= 0:
                    v = A1[c] + x
                    A1[c] = v
                    if v > mxA1:
                        mxA1 = v
                    if c == argB1:
                        b = F1[c] - v
                        if b >= sec1:
                            mxB1 = b
                        else:
                            mxB1, argB1, sec1 = _argmax2(F1, A1)
                else:
                    for q in range(C):
                        A1[q] += W[row, q]
                        if A1[q] > mxA1:
                            mxA1 = A1[q]
                    mxB1, argB1, sec1 = _argmax2(F1, A1)
    if res[0] >= 0:  # a split was found
        best0 = lim0 + pen2
    if res[2] >= 0:
        best1 = lim1 + pen2
    return best0, best1


@njit(
    (
        ORDER_T,
        I32_2D_T,
        F64_2D_T,
        F64_2D_T,
        BOOL_T,
        F64_2D_T,
        F64_2D_T,
        types.float64,
        I64_T,
        I64_T,
    ),
    cache=True,
)
def d2split_binary(order, rk_s, a_s, b_s, goleft, FQ2, side, pen, res, cols):  # noqa: C901 — Numba kernel: the two-class depth-two scan, split it costs speed
    """:func:`d2split` for two classes: ``a_s``, ``b_s`` are the class weights in each
    column's order, and every count is a scalar (no class arrays, merged rows included).
    """
    n = order.shape[1]
    for slot in range(res.shape[0]):
        res[slot] = -1
    F0a = FQ2[0, 0]
    F0b = FQ2[0, 1]
    F1a = FQ2[1, 0]
    F1b = FQ2[1, 1]
    fl0 = side[S_FLOOR, 0]
    fl1 = side[S_FLOOR, 1]
    best0 = min(F0a, F0b) + pen
    best1 = min(F1a, F1b) + pen
    res[4] = 1
    res[5] = 1
    if best0 >= side[S_CAP, 0]:
        best0 = side[S_CAP, 0]
        res[4] = 0
    if best1 >= side[S_CAP, 1]:
        best1 = side[S_CAP, 1]
        res[5] = 0
    pen2 = 2.0 * pen
    lim0 = best0 - pen2  # the error a split of side 0 must be below
    lim1 = best1 - pen2
    for f2 in cols:
        run0 = lim0 > fl0
        run1 = lim1 > fl1
        if not (run0 or run1):
            break
        a0 = 0.0
        b0 = 0.0
        a1 = 0.0
        b1 = 0.0
        last0 = -1
        last1 = -1
        of2 = order[f2]
        rk = rk_s[f2]
        wa = a_s[f2]
        wb = b_s[f2]
        for k in range(n):
            r = rk[k]
            if goleft[of2[k]]:
                if not run0:
                    continue
                if r != last0:
                    if last0 >= 0:
                        eA = min(a0, b0)
                        if eA >= lim0:
                            run0 = False
                            if not run1:
                                break
                            continue
                        e = eA + min(F0a - a0, F0b - b0)
                        if e < lim0:
                            lim0 = e
                            res[0] = f2
                            res[1] = last0
                            res[4] = 1
                    last0 = r
                a0 += wa[k]
                b0 += wb[k]
            else:
                if not run1:
                    continue
                if r != last1:
                    if last1 >= 0:
                        eA = min(a1, b1)
                        if eA >= lim1:
                            run1 = False
                            if not run0:
                                break
                            continue
                        e = eA + min(F1a - a1, F1b - b1)
                        if e < lim1:
                            lim1 = e
                            res[2] = f2
                            res[3] = last1
                            res[5] = 1
                    last1 = r
                a1 += wa[k]
                b1 += wb[k]
    if res[0] >= 0:  # a split was found
        best0 = lim0 + pen2
    if res[2] >= 0:
        best1 = lim1 + pen2
    return best0, best1


@njit(
    (
        ORDER_T,
        I32_2D_T,
        I32_2D_T,
        F64_2D_T,
        F64_2D_T,
        BOOL_T,
        F64_2D_T,
        F64_2D_T,
        I64_2D_T,
        types.int64,
        types.float64,
        F64_2D_T,
        I64_T,
        I64_T,
    ),
    cache=True,
)
def d2split_support(order, rk_s, cl_s, wt_s, W, goleft, FQ2, side, rc_s, s, pen, st, res, cols):  # noqa: C901 — Numba kernel: the depth-two scan under a minimum support, split it costs speed
    """:func:`d2split` under a minimum support ``s``: the same pass (on the general arrays,
    also for two classes), where a split of a side counts only with ``s`` training rows on
    each of its sides (``rc_s``: the training rows of each row, in each column's order;
    ``side[S_COUNT]``: a side's total), and a side also stops once fewer than ``s`` of its
    rows are left. Returns the two costs, with ``res``, as :func:`d2split`.
    """
    n = order.shape[1]
    C = W.shape[1]
    A0 = st[0]
    A1 = st[1]
    F0 = FQ2[0]
    F1 = FQ2[1]
    t0 = side[S_TOT, 0]
    t1 = side[S_TOT, 1]
    pen2 = 2.0 * pen
    # a split of a side costs at least its least error and two leaves
    fl0 = side[S_FLOOR, 0] + pen2
    fl1 = side[S_FLOOR, 1] + pen2
    c0 = int(side[S_COUNT, 0])
    c1 = int(side[S_COUNT, 1])
    for slot in range(res.shape[0]):
        res[slot] = -1
    best0 = _leaf_error(F0, t0) + pen
    best1 = _leaf_error(F1, t1) + pen
    res[4] = 1
    res[5] = 1
    if best0 >= side[S_CAP, 0]:
        best0 = side[S_CAP, 0]
        res[4] = 0
    if best1 >= side[S_CAP, 1]:
        best1 = side[S_CAP, 1]
        res[5] = 0
    for f2 in cols:
        run0 = best0 > fl0
        run1 = best1 > fl1
        if not (run0 or run1):
            break
        for q in range(C):
            A0[q] = 0.0
            A1[q] = 0.0
        mxA0 = 0.0
        mxA1 = 0.0
        mxB0, argB0, sec0 = _argmax2(F0, A0)
        mxB1, argB1, sec1 = _argmax2(F1, A1)
        n0 = 0.0
        n1 = 0.0
        a0 = 0  # training rows of each side seen
        a1 = 0
        last0 = -1
        last1 = -1
        of2 = order[f2]
        rk = rk_s[f2]
        cl = cl_s[f2]
        wt = wt_s[f2]
        rc = rc_s[f2]
        for k in range(n):
            row = of2[k]
            r = rk[k]
            if goleft[row]:
                if not run0:
                    continue
                if r != last0:
                    if last0 >= 0:
                        eA = n0 - mxA0
                        if eA + pen2 >= best0 or c0 - a0 < s:
                            run0 = False
                            if not run1:
                                break
                            continue
                        if a0 >= s:
                            e = eA + (t0 - n0 - mxB0) + pen2
                            if e < best0:
                                best0 = e
                                res[0] = f2
                                res[1] = last0
                                res[4] = 1
                    last0 = r
                a0 += rc[k]
                c = cl[k]
                x = wt[k]
                n0 += x
                if c >= 0:
                    v = A0[c] + x
                    A0[c] = v
                    if v > mxA0:
                        mxA0 = v
                    if c == argB0:
                        b = F0[c] - v
                        if b >= sec0:
                            mxB0 = b
                        else:
                            mxB0, argB0, sec0 = _argmax2(F0, A0)
                else:
                    for q in range(C):
                        A0[q] += W[row, q]
                        if A0[q] > mxA0:
                            mxA0 = A0[q]
                    mxB0, argB0, sec0 = _argmax2(F0, A0)
            else:
                if not run1:
                    continue
                if r != last1:
                    if last1 >= 0:
                        eA = n1 - mxA1
                        if eA + pen2 >= best1 or c1 - a1 < s:
                            run1 = False
                            if not run0:
                                break
                            continue
                        if a1 >= s:
                            e = eA + (t1 - n1 - mxB1) + pen2
                            if e < best1:
                                best1 = e
                                res[2] = f2
                                res[3] = last1
                                res[5] = 1
                    last1 = r
                a1 += rc[k]
                c = cl[k]
                x = wt[k]
                n1 += x
                if c >= 0:
                    v = A1[c] + x
                    A1[c] = v
                    if v > mxA1:
                        mxA1 = v
                    if c == argB1:
                        b = F1[c] - v
                        if b >= sec1:
                            mxB1 = b
                        else:
                            mxB1, argB1, sec1 = _argmax2(F1, A1)
                else:
                    for q in range(C):
                        A1[q] += W[row, q]
                        if A1[q] > mxA1:
                            mxA1 = A1[q]
                    mxB1, argB1, sec1 = _argmax2(F1, A1)
    return best0, best1


_SMALL_SORT = 15  # as Numba's quicksort: insertion sort below this many entries
_SORT_STACK = 100


@njit((F64_T, I64_T), cache=True)
def quick_argsort(A, R):  # noqa: C901 — Numba kernel: an in-place introsort loop
    """Permute ``R`` (the indices of ``A``, no NaN) so that ``A[R]`` is ascending.

    Numba's ``np.argsort`` (kind ``quicksort``) step for step: median-of-three partitions,
    insertion sort below 16 entries. An unstable sort orders equal keys by its own steps, so
    this keeps the order (and the search order of the columns) that the kernels had with
    ``np.argsort``, and it compiles in a fraction of the time of Numba's generic version.
    """
    n = A.shape[0]
    if n < 2:
        return
    stack = np.empty(2 * _SORT_STACK, dtype=np.int64)
    stack[0] = 0
    stack[1] = n - 1
    depth = 1
    while depth > 0:
        depth -= 1
        low = stack[2 * depth]
        high = stack[2 * depth + 1]
        while high - low >= _SMALL_SORT:
            mid = (low + high) >> 1
            if A[R[mid]] < A[R[low]]:
                t = R[low]
                R[low] = R[mid]
                R[mid] = t
            if A[R[high]] < A[R[mid]]:
                t = R[high]
                R[high] = R[mid]
                R[mid] = t
            if A[R[mid]] < A[R[low]]:
                t = R[low]
                R[low] = R[mid]
                R[mid] = t
            pivot = A[R[mid]]
            t = R[high]
            R[high] = R[mid]
            R[mid] = t
            i = low
            j = high - 1
            while True:
                while i < high and A[R[i]] < pivot:
                    i += 1
                while j >= low and pivot < A[R[j]]:
                    j -= 1
                if i >= j:
                    break
                t = R[i]
                R[i] = R[j]
                R[j] = t
                i += 1
                j -= 1
            t = R[i]
            R[i] = R[high]
            R[high] = t
            if high - i > i - low:  # push the larger part, go on with the smaller
                if high > i:
                    stack[2 * depth] = i + 1
                    stack[2 * depth + 1] = high
                    depth += 1
                high = i - 1
            else:
                if i > low:
                    stack[2 * depth] = low
                    stack[2 * depth + 1] = i - 1
                    depth += 1
                low = i + 1
        for i in range(low + 1, high + 1):
            r = R[i]
            v = A[r]
            j = i
            while j > low and v < A[R[j - 1]]:
                R[j] = R[j - 1]
                j -= 1
            R[j] = r


@njit(
    (
        ORDER_T,
        I32_2D_T,
        F64_2D_T,
        F64_T,
        F64_T,
        RANKS_T,
        I64_T,
        F64_T,
        types.float64,
        types.float64,
        types.int64,
        BOOL_T,
        I64_T,
        types.float64,
    ),
    cache=True,
)
def solve_d2(order, Rt, W, rw, rirr, cls, rc, rule, ub, slack, flags, goleft, out, deadline):  # noqa: C901 — Numba kernel: the depth-two solver's bound loop over every threshold
    """Minimum-cost tree of depth <= 2 with cost below ``ub``: its cost (else ``ub``).

    The cost is the error plus the penalty of ``rule`` per leaf; a split needs the rule's
    support s in training rows (``rc[u]`` of row u) on each side. Branch (Algorithm 1) over
    every column f1, in the order of their best single split, first at that split: every
    column's first split is evaluated before any column's Branch goes on (a good tree early,
    so a tight target for every column). Each split is solved by :func:`d2split` (children
    of depth one: a superset costs at least a subset less the rule's gamma) unless the class
    weights of its sides already rule it out (:func:`_side_bound`); so the depth-two
    subproblem chooses between a leaf, one split and two levels, and a split is tried only
    below its least cost by the class weights (:func:`_least_split`). After each better
    tree, only trees better by more than ``slack`` count.
    ``cls[u]`` is row u's class (-1: several), ``goleft`` scratch of length N. ``out`` gets
    the tree: ``O_FOUND``, the root split
    ``O_F1``/``O_R1`` and each child's split ``O_FL``/``O_RL``, ``O_FR``/``O_RR`` (-1:
    leaf), and counters. Past ``deadline`` (a ``time.perf_counter()`` value; ``inf``: none)
    it stops with ``O_TIMEOUT`` set, ``out`` holding the best tree so far (if any).
    """
    pen = rule[RULE_PEN]
    s = int(rule[RULE_SUPPORT])
    drop = rule[RULE_GAMMA]  # children of depth one: one merge at most
    m, n = order.shape
    C = W.shape[1]
    FQ = np.zeros(C)
    CL = np.zeros(C)
    FQ2 = np.zeros((2, C))
    side = np.zeros((4, 2))
    st = np.zeros((2, C))
    res = np.zeros(6, dtype=np.int64)
    tot, floor = class_totals(order[0], W, rw, rirr, FQ)
    for slot in range(out.shape[0]):
        out[slot] = -1
    out[O_FOUND] = 0
    out[O_D2SPLITS] = 0
    out[O_CUTS] = 0
    out[O_TIMEOUT] = 0
    work = 0
    best = ub
    target = ub
    leaf = _leaf_error(FQ, tot) + pen
    if leaf < target:
        best = leaf
        target = leaf - slack
        out[O_FOUND] = 1
    least = _least_split(FQ, tot, floor, pen)  # the least cost of a split
    if target <= least or n < 2:
        return best
    pos = np.empty((m, n), dtype=np.int64)
    P = np.empty((m, n))
    Ks = np.empty(m, dtype=np.int64)
    err = np.empty(m)
    hint = np.empty(m, dtype=np.int64)
    depth_one_all(order, Rt, W, rw, rc, s, FQ, tot, CL, pos, P, Ks, err, hint)
    features = np.arange(m)
    quick_argsort(err, features)
    rk_s = np.empty((m, n), dtype=np.int32)
    cl_s = np.empty((m, n), dtype=np.int32)
    wt_s = np.empty((m, n))
    sup = s > 1
    binary = C == 2 and not sup  # (d2split_support takes the general arrays)
    for f in range(m):
        for q in range(n):
            row = order[f, q]
            rk_s[f, q] = Rt[f, row]
            if binary:  # the two class weights
                cl_s[f, q] = 0
                wt_s[f, q] = W[row, 0]
            else:
                cl_s[f, q] = cls[row]
                wt_s[f, q] = rw[row]
    b_s = np.empty((m, n) if binary else (1, 1))
    if binary:
        for f in range(m):
            for q in range(n):
                b_s[f, q] = W[order[f, q], 1]
    rc_s = np.zeros((m, n) if sup else (1, 1), dtype=np.int64)
    count = 0
    if sup:
        for f in range(m):
            for q in range(n):
                rc_s[f, q] = rc[order[f, q]]
        for q in range(n):
            count += rc[order[0, q]]
    # every column's Branch state, so that each column's first split (its best single
    # split) is evaluated before any column's Branch goes on: a good tree early, a tight target
    queues = np.empty((m, n + 2, 4), dtype=np.int64)
    ctls = np.zeros((m, N_CTL), dtype=np.int64)
    thLs = np.zeros((m, n))
    thRs = np.zeros((m, n))
    for phase in range(2):
        for q in range(m):
            f1 = features[q]
            K = Ks[f1]
            if K == 0:
                continue
            queue = queues[f1]
            ctl = ctls[f1]
            thL = thLs[f1]
            thR = thRs[f1]
            Pf = P[f1]
            if phase == 0:
                branch_init(queue, ctl, K, hint[f1])
            of = order[f1]
            steps = 0
            while phase == 1 or steps == 0:
                w = branch_next(queue, ctl, Pf, thL, thR, K, target, flags, pen, drop)
                if w < 0:
                    break
                steps += 1
                cut = pos[f1, w]
                for c in range(C):
                    FQ2[0, c] = 0.0
                totL = 0.0
                floorL = 0.0
                countL = 0
                for k in range(cut):
                    row = of[k]
                    goleft[row] = True
                    c = cls[row]
                    if c >= 0:
                        FQ2[0, c] += rw[row]
                    else:
                        for c in range(C):
                            FQ2[0, c] += W[row, c]
                        floorL += rirr[row]
                    totL += rw[row]
                    if sup:
                        countL += rc[row]
                for k in range(cut, n):
                    goleft[of[k]] = False
                for c in range(C):
                    FQ2[1, c] = FQ[c] - FQ2[0, c]
                totR = tot - totL
                floorR = floor - floorL
                lb0 = _side_bound(FQ2[0], totL, floorL, pen)
                lb1 = _side_bound(FQ2[1], totR, floorR, pen)
                if lb0 + lb1 >= target:  # the class weights alone rule the split out
                    ctl[PRUNED] += 1
                    branch_update(queue, ctl, Pf, thL, thR, target, flags, pen, drop, lb0, lb1)
                    continue
                side[S_TOT, 0] = totL
                side[S_TOT, 1] = totR
                # the error a split of a side leaves at least
                side[S_FLOOR, 0] = max(floorL, totL - _top2(FQ2[0]))
                side[S_FLOOR, 1] = max(floorR, totR - _top2(FQ2[1]))
                # a side's exact cost matters only while the split can still beat target
                # (the other side costs at least its irreducible error and a leaf)
                side[S_CAP, 0] = target - floorR - pen
                side[S_CAP, 1] = target - floorL - pen
                side[S_COUNT, 0] = countL
                side[S_COUNT, 1] = count - countL
                if sup:
                    tl, tr = d2split_support(
                        order,
                        rk_s,
                        cl_s,
                        wt_s,
                        W,
                        goleft,
                        FQ2,
                        side,
                        rc_s,
                        s,
                        pen,
                        st,
                        res,
                        features,
                    )
                elif binary:
                    tl, tr = d2split_binary(
                        order, rk_s, wt_s, b_s, goleft, FQ2, side, pen, res, features
                    )
                else:
                    tl, tr = d2split(
                        order, rk_s, cl_s, wt_s, W, goleft, FQ2, side, pen, st, res, features
                    )
                out[O_D2SPLITS] += 1
                work += n * m
                if work >= CLOCK_WORK:
                    work = 0
                    if _clock() >= deadline:
                        out[O_TIMEOUT] = 1
                        break
                if res[4] and res[5] and tl + tr < target:
                    best = tl + tr
                    target = best - slack
                    out[O_FOUND] = 1
                    out[O_F1] = f1
                    out[O_R1] = Rt[f1, of[cut - 1]]
                    out[O_FL] = res[0]
                    out[O_RL] = res[1]
                    out[O_FR] = res[2]
                    out[O_RR] = res[3]
                branch_update(queue, ctl, Pf, thL, thR, target, flags, pen, drop, tl, tr)
                if target <= least:
                    break
            if target <= least or out[O_TIMEOUT]:
                break
        if target <= least or out[O_TIMEOUT]:
            break
    for f1 in range(m):
        out[O_CUTS] += ctls[f1, PRUNED]
    return best
