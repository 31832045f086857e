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
from Python for depths of three or more and from :func:`solve_d2` for depth two.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit, objmode

# Pruning switches (bit flags), see ``satdt.dp.contree.PRUNING``.
NEIGHBOURHOOD = 1
SHRINKING = 2
SUBINTERVAL = 4
SIMILARITY = 8

# ctl slots of a Branch state.
COUNT, HEAD, HINT, CUR_I, CUR_J, CUR_U, CUR_V, CUR_W, PRUNED = range(9)
N_CTL = 9

# out slots of solve_d2 / solve_d1: the tree found, as column and rank threshold per node.
# O_TIMEOUT: solve_d2 stopped at the deadline (the tree in out, if found, is not proven).
O_FOUND, O_F1, O_R1, O_FL, O_RL, O_FR, O_RR, O_D2SPLITS, O_CUTS, O_TIMEOUT = range(10)
N_OUT = 10

# solve_d2 looks at the clock after this much work (rows x columns passed over), about a
# millisecond: one depth-two subproblem on 10^5 rows with many thresholds can take minutes.
CLOCK_WORK = 1_000_000


@njit(cache=True)
def _clock():
    """``time.perf_counter()`` from inside a kernel (about a microsecond)."""
    with objmode(now="float64"):
        now = time.perf_counter()
    return now


@njit(cache=True)
def column_ranks(X, f, values, ranks):
    """``ranks[i, f]``: the rank of ``X[i, f]`` among column f's sorted distinct ``values``."""
    for i in range(X.shape[0]):
        ranks[i, f] = np.searchsorted(values, X[i, f])


@njit(cache=True)
def rank_order(rank_f, n_values, order_f):
    """The rows sorted by their rank (ties by row id): a counting sort, linear in the rows."""
    start = np.zeros(n_values + 1, dtype=np.int64)
    for u in range(rank_f.shape[0]):
        start[rank_f[u] + 1] += 1
    for r in range(n_values):
        start[r + 1] += start[r]
    for u in range(rank_f.shape[0]):
        r = rank_f[u]
        order_f[start[r]] = u
        start[r] += 1


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def branch_init(queue, ctl, K, hint):
    """Start Branch over split indices [0..K-1]; ``hint`` (or -1) is evaluated first."""
    ctl[:] = 0
    queue[0, 0] = 0
    queue[0, 1] = K - 1
    queue[0, 2] = -1
    queue[0, 3] = K
    ctl[COUNT] = 1 if K > 0 else 0
    ctl[HINT] = hint


@njit(cache=True)
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


@njit(cache=True)
def _push(queue, ctl, i, j, u, v):
    """Append the interval [i..j] between evaluated u and v to the queue Q (a ring buffer)."""
    q = (ctl[HEAD] + ctl[COUNT]) % queue.shape[0]
    queue[q, 0] = i
    queue[q, 1] = j
    queue[q, 2] = u
    queue[q, 3] = v
    ctl[COUNT] += 1


@njit(cache=True)
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


@njit(cache=True)
def branch_update(queue, ctl, P, thL, thR, target, flags, tl, tr):
    """Record the (lower bounds of the) errors of the evaluated split and split its interval."""
    w = ctl[CUR_W]
    thL[w] = tl
    thR[w] = tr
    _push_pieces(queue, ctl, P, thL, thR, target, flags)


@njit(cache=True)
def _leaf_error(counts, total):
    best = 0.0
    for c in range(counts.shape[0]):
        if counts[c] > best:
            best = counts[c]
    return total - best


@njit(cache=True)
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


@njit(cache=True)
def depth_one_scan(order_f, rank_f, W, rw, FQ, tot, CL):
    """Best single split of one sorted column: (error, split index k, rank threshold); k = -1: none."""
    n = order_f.shape[0]
    CL[:] = 0.0
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


@njit(cache=True)
def class_totals(order0, W, rw, rirr, FQ):
    """Class weights FQ of a subproblem; returns (total weight, irreducible error)."""
    FQ[:] = 0.0
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


@njit(cache=True)
def depth_one_all(order, Rt, W, rw, FQ, tot, CL, pos, P, Ks, err, hint):
    """Split points of every column (``pos``, ``P``, ``Ks``) and each column's best single split."""
    m = order.shape[0]
    for f in range(m):
        Ks[f] = split_points(order[f], Rt[f], rw, pos[f], P[f])
        e, kb, _ = depth_one_scan(order[f], Rt[f], W, rw, FQ, tot, CL)
        err[f] = e
        hint[f] = kb


@njit(cache=True)
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
    out[:] = -1
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


@njit(cache=True)
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


@njit(cache=True)
def d2split(order, rk_s, cl_s, wt_s, W, goleft, FQ2, tot2, floor2, cap2, st, res):
    """D2Split (Algorithm 2): optimal depth-one trees of both sides of a split, in one pass.

    Side 0 holds the rows with ``goleft``, side 1 the others; ``FQ2[s]``, ``tot2[s]``,
    ``floor2[s]`` are a side's class weights, weight and irreducible error, ``cap2[s]`` the
    error above which its exact value does not matter. Along every sorted column f2
    (``rk_s``, ``cl_s``, ``wt_s``: ranks, classes (-1: several, read from ``W``), weights in
    that column's order) the class weights ``A`` of each side's rows seen so far are
    updated (the rows not yet seen weigh ``FQ2[s] - A``), with the largest of each kept
    incrementally (a pure row changes one class; a runner-up bound says when the largest
    remaining class can change), and where a side's rank changes its split error is
    evaluated. The state of each side is kept in scalars (the code of the two sides is
    written twice for that). A side's left-part error only grows along a column, so a side
    stops once it alone reaches the side's best. Returns the two errors; each is exact if
    below its cap (``res[4 + s]`` = 1), else it is the cap, a lower bound. ``res[2s]``,
    ``res[2s + 1]``: column and rank threshold of side s (-1: a leaf). ``st`` is float
    scratch ``(2, C)``.
    """
    m, n = order.shape
    C = W.shape[1]
    A0 = st[0]
    A1 = st[1]
    F0 = FQ2[0]
    F1 = FQ2[1]
    t0 = tot2[0]
    t1 = tot2[1]
    fl0 = floor2[0]
    fl1 = floor2[1]
    res[:] = -1
    best0 = _leaf_error(F0, t0)
    best1 = _leaf_error(F1, t1)
    res[4] = 1
    res[5] = 1
    if best0 >= cap2[0]:
        best0 = cap2[0]
        res[4] = 0
    if best1 >= cap2[1]:
        best1 = cap2[1]
        res[5] = 0
    for f2 in range(m):
        run0 = best0 > fl0
        run1 = best1 > fl1
        if not (run0 or run1):
            break
        A0[:] = 0.0
        A1[:] = 0.0
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
                        if eA >= best0:
                            run0 = False
                            if not run1:
                                break
                            continue
                        e = eA + (t0 - n0 - mxB0)
                        if e < best0:
                            best0 = e
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
                        if eA >= best1:
                            run1 = False
                            if not run0:
                                break
                            continue
                        e = eA + (t1 - n1 - mxB1)
                        if e < best1:
                            best1 = e
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
    return best0, best1


@njit(cache=True)
def d2split_binary(order, rk_s, a_s, b_s, goleft, FQ2, tot2, floor2, cap2, res):
    """:func:`d2split` for two classes: ``a_s``, ``b_s`` are the class weights in each
    column's order, and every count is a scalar (no class arrays, merged rows included).
    """
    m, n = order.shape
    res[:] = -1
    F0a = FQ2[0, 0]
    F0b = FQ2[0, 1]
    F1a = FQ2[1, 0]
    F1b = FQ2[1, 1]
    fl0 = floor2[0]
    fl1 = floor2[1]
    best0 = min(F0a, F0b)
    best1 = min(F1a, F1b)
    res[4] = 1
    res[5] = 1
    if best0 >= cap2[0]:
        best0 = cap2[0]
        res[4] = 0
    if best1 >= cap2[1]:
        best1 = cap2[1]
        res[5] = 0
    for f2 in range(m):
        run0 = best0 > fl0
        run1 = best1 > fl1
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
                        if eA >= best0:
                            run0 = False
                            if not run1:
                                break
                            continue
                        e = eA + min(F0a - a0, F0b - b0)
                        if e < best0:
                            best0 = e
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
                        if eA >= best1:
                            run1 = False
                            if not run0:
                                break
                            continue
                        e = eA + min(F1a - a1, F1b - b1)
                        if e < best1:
                            best1 = e
                            res[2] = f2
                            res[3] = last1
                            res[5] = 1
                    last1 = r
                a1 += wa[k]
                b1 += wb[k]
    return best0, best1


@njit(cache=True)
def solve_d2(order, Rt, W, rw, rirr, cls, ub, slack, flags, goleft, out, deadline):
    """Minimum-error tree of depth <= 2 with error below ``ub``: its error (else ``ub``).

    Branch (Algorithm 1) over every column f1, in the order of their best single split,
    first at that split (a good first tree), each split solved by :func:`d2split`. After
    each better tree, only trees better by more than ``slack`` count.
    ``cls[u]`` is row u's class (-1: several), ``goleft`` scratch of length N. ``out`` gets
    the tree: ``O_FOUND``, the root split
    ``O_F1``/``O_R1`` and each child's split ``O_FL``/``O_RL``, ``O_FR``/``O_RR`` (-1:
    leaf), and counters. Past ``deadline`` (a ``time.perf_counter()`` value; ``inf``: none)
    it stops with ``O_TIMEOUT`` set, ``out`` holding the best tree so far (if any).
    """
    m, n = order.shape
    C = W.shape[1]
    FQ = np.zeros(C)
    CL = np.zeros(C)
    FQ2 = np.zeros((2, C))
    tot2 = np.zeros(2)
    floor2 = np.zeros(2)
    cap2 = np.zeros(2)
    st = np.zeros((2, C))
    res = np.zeros(6, dtype=np.int64)
    tot, floor = class_totals(order[0], W, rw, rirr, FQ)
    out[:] = -1
    out[O_FOUND] = 0
    out[O_D2SPLITS] = 0
    out[O_CUTS] = 0
    out[O_TIMEOUT] = 0
    work = 0
    best = ub
    target = ub
    leaf = _leaf_error(FQ, tot)
    if leaf < target:
        best = leaf
        target = leaf - slack
        out[O_FOUND] = 1
    if target <= floor or n < 2:
        return best
    pos = np.empty((m, n), dtype=np.int64)
    P = np.empty((m, n))
    Ks = np.empty(m, dtype=np.int64)
    err = np.empty(m)
    hint = np.empty(m, dtype=np.int64)
    depth_one_all(order, Rt, W, rw, FQ, tot, CL, pos, P, Ks, err, hint)
    features = np.argsort(err)
    rk_s = np.empty((m, n), dtype=np.int32)
    cl_s = np.empty((m, n), dtype=np.int32)
    wt_s = np.empty((m, n))
    binary = C == 2
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
    ctl = np.zeros(N_CTL, dtype=np.int64)
    for q in range(m):
        f1 = features[q]
        K = Ks[f1]
        if K == 0:
            continue
        queue = np.empty((K + 2, 4), dtype=np.int64)
        thL = np.zeros(K)
        thR = np.zeros(K)
        Pf = P[f1]
        branch_init(queue, ctl, K, hint[f1])
        of = order[f1]
        while True:
            w = branch_next(queue, ctl, Pf, thL, thR, K, target, flags)
            if w < 0:
                break
            cut = pos[f1, w]
            FQ2[0, :] = 0.0
            totL = 0.0
            floorL = 0.0
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
            for k in range(cut, n):
                goleft[of[k]] = False
            for c in range(C):
                FQ2[1, c] = FQ[c] - FQ2[0, c]
            tot2[0] = totL
            tot2[1] = tot - totL
            floor2[0] = floorL
            floor2[1] = floor - floorL
            # a side's exact error matters only while the split can still beat target
            cap2[0] = target - floor2[1]
            cap2[1] = target - floor2[0]
            if binary:
                tl, tr = d2split_binary(
                    order, rk_s, wt_s, b_s, goleft, FQ2, tot2, floor2, cap2, res
                )
            else:
                tl, tr = d2split(
                    order, rk_s, cl_s, wt_s, W, goleft, FQ2, tot2, floor2, cap2, st, res
                )
            out[O_D2SPLITS] += 1
            work += n * m
            if work >= CLOCK_WORK:
                work = 0
                if _clock() >= deadline:
                    out[O_TIMEOUT] = 1
                    out[O_CUTS] += ctl[PRUNED]
                    return best
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
            branch_update(queue, ctl, Pf, thL, thR, target, flags, tl, tr)
            if target <= floor:
                break
        out[O_CUTS] += ctl[PRUNED]
        if target <= floor:
            break
    return best
