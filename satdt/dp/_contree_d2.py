"""ConTree's depth-two kernel (Brita, van der Linden & Demirovic, AAAI 2025, Algorithm 2).

:func:`solve_d2` solves a depth-two subproblem in one kernel: Branch (Algorithm 1, the
kernels of :mod:`satdt.dp._contree_kernels`) over the root's splits, each split's two
depth-one children by D2Split (:func:`satdt.dp._contree_scan.d2split`) in one pass over the sorted data. Its own
module and kernel group, the largest of ConTree's: on a first run the search starts with the
other kernels (depth-two subproblems then recurse in Python) and takes this one in when it
is compiled (:mod:`satdt.dp.contree`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from ._contree_kernels import (
    BOOL_T,
    F64_2D_T,
    F64_T,
    I32_2D_T,
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
    clock,
    depth_one_all,
)
from ._contree_scan import (
    S_CAP,
    S_COUNT,
    S_FLOOR,
    S_TOT,
    d2split,
    d2split_binary,
    d2split_support,
    least_split,
    side_bound,
    top2,
)

# solve_d2 looks at the clock after this much work (rows x columns passed over), about a
# millisecond: one depth-two subproblem on 10^5 rows with many thresholds can take minutes.
CLOCK_WORK = 1_000_000


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
    weights of its sides already rule it out (:func:`side_bound`); so the depth-two
    subproblem chooses between a leaf, one split and two levels, and a split is tried only
    below its least cost by the class weights (:func:`least_split`). After each better
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
    best = ub
    target = ub
    leaf = _leaf_error(FQ, tot) + pen
    if leaf < target:
        best = leaf
        target = leaf - slack
        out[O_FOUND] = 1
    least = least_split(FQ, tot, floor, pen)  # the least cost of a split
    if target <= least or n < 2:
        return best
    pos = np.empty((m, n), dtype=np.int64)
    P = np.empty((m, n))
    Ks = np.empty(m, dtype=np.int64)
    err = np.empty(m)
    hint = np.empty(m, dtype=np.int64)
    if not depth_one_all(order, Rt, W, rw, rc, s, FQ, tot, CL, pos, P, Ks, err, hint, deadline):
        out[O_TIMEOUT] = 1
        return best
    features = np.arange(m)
    quick_argsort(err, features)
    rk_s = np.empty((m, n), dtype=np.int32)
    cl_s = np.empty((m, n), dtype=np.int32)
    wt_s = np.empty((m, n))
    sup = s > 1
    binary = C == 2 and not sup  # (d2split_support takes the general arrays)
    b_s = np.empty((m, n) if binary else (1, 1))
    rc_s = np.zeros((m, n) if sup else (1, 1), dtype=np.int64)
    work = 0
    for f in range(m):  # each column's rows in its order, the clock looked at between columns
        if work >= CLOCK_WORK:
            work = 0
            if clock() >= deadline:
                out[O_TIMEOUT] = 1
                return best
        work += n
        for q in range(n):
            row = order[f, q]
            rk_s[f, q] = Rt[f, row]
            if binary:  # the two class weights
                cl_s[f, q] = 0
                wt_s[f, q] = W[row, 0]
                b_s[f, q] = W[row, 1]
            else:
                cl_s[f, q] = cls[row]
                wt_s[f, q] = rw[row]
            if sup:
                rc_s[f, q] = rc[row]
    count = 0
    if sup:
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
                # every step passes over the rows (a ruled-out split too): the clock is looked
                # at after about CLOCK_WORK of them, wherever they went
                if work >= CLOCK_WORK:
                    work = 0
                    if clock() >= deadline:
                        out[O_TIMEOUT] = 1
                        break
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
                work += n
                for c in range(C):
                    FQ2[1, c] = FQ[c] - FQ2[0, c]
                totR = tot - totL
                floorR = floor - floorL
                lb0 = side_bound(FQ2[0], totL, floorL, pen)
                lb1 = side_bound(FQ2[1], totR, floorR, pen)
                if lb0 + lb1 >= target:  # the class weights alone rule the split out
                    ctl[PRUNED] += 1
                    branch_update(queue, ctl, Pf, thL, thR, target, flags, pen, drop, lb0, lb1)
                    continue
                side[S_TOT, 0] = totL
                side[S_TOT, 1] = totR
                # the error a split of a side leaves at least
                side[S_FLOOR, 0] = max(floorL, totL - top2(FQ2[0]))
                side[S_FLOOR, 1] = max(floorR, totR - top2(FQ2[1]))
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
