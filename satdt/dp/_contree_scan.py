"""ConTree's D2Split (Brita, van der Linden & Demirovic, AAAI 2025, Algorithm 2): the best
depth-one subtree on each side of a root split, for every split of a column, in one pass over
its sorted rows.

:func:`d2split` is the general scan, :func:`d2split_binary` the two-class one and
:func:`d2split_support` the one under a minimum leaf support; the bounds that rule a split
out before its scan (:func:`side_bound`, :func:`least_split`) and the side arrays' rows
(``S_TOT``, ``S_FLOOR``, ``S_CAP``, ``S_COUNT``) are shared with :func:`satdt.dp._contree_d2.solve_d2`,
whose kernel group compiles this module with its own.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from ._contree_kernels import (
    BOOL_T,
    F64_2D_T,
    I32_2D_T,
    I64_2D_T,
    I64_T,
    ORDER_T,
    _leaf_error,
)


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
def top2(F):
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
def side_bound(F, tot, floor, pen):
    """A lower bound on a side's cost at depth one, from its class weights ``F``: a leaf, or
    a split, whose two leaves classify at most the two heaviest classes right (and leave the
    irreducible error ``floor``)."""
    split = max(floor, tot - top2(F)) + 2.0 * pen
    return min(_leaf_error(F, tot) + pen, split)


@njit(cache=True, inline="always")
def least_split(F, tot, floor, pen):
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
