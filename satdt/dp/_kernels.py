"""Numba kernels of the Blossom search over flat arrays.

The search state lives in a handful of arrays allocated by :mod:`satdt.dp.blossom`; the
kernels read and update them in place and return to Python after a budget of work, so the
caller can check the clock and report incumbents between calls.

Positions. Blossom only ever holds one current tree, so each of its branches is named by its
position in heap order: root 1, children ``2p`` (feature = 0) and ``2p + 1`` (feature = 1).
Decisions are taken at depths ``0 .. L - 1``; a branch at depth ``L = max(K - 2, 0)`` is solved
exactly by the depth-two (or depth-one) solver, which counts the class weights of all feature
pairs in one pass over its rows.

Data (the tuple ``data``). ``Bd`` is the reduced binary matrix of the ``N`` distinct rows, ``W``
their per-class weights, ``pure[u]`` the only class of row ``u`` (-1 if it has several),
``ones_ptr``/``ones`` the 1-features of each row (CSR), ``rirr[u]`` the irreducible error of row
``u`` (its weight minus its heaviest class).

State (the tuple ``state``). ``perm[d, start:end]`` are the rows of a position at depth ``d``
(children partition their parent's slice in ``perm[d + 1]``); ``ip``/``fp`` are per-position
integer and float tables (columns below); ``dom[p, :ndom]`` the features still to try at ``p``
in heuristic order; ``bt`` the best subtree found at each position (relative heap order,
feature index or -1 for a leaf); ``stk`` the decision stack ``seq`` (first half) and the FIFO
ring of buds (second half); ``inc`` the incumbent tree over absolute positions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Columns of the per-position integer table ``ip``.
# STAMP names the branch instance; SIM_* remember the last depth-two solve at the position
# (the parent's instance and feature then), for the similarity lower bound.
START, END, NDOM, PTR, CUR, FINAL, INEXACT, INDEC, STAMP, SIM_G, SIM_STAMP = range(11)
N_IP = 11
# Columns of the per-position float table ``fp``: best error found, a proven lower bound (the
# irreducible error, raised by the similarity bound), and the value of the current tree below
# the position (computed when a tree is complete).
BEST, IRR, TMP, SIM_OPT = range(4)
N_FP = 4
# Values of ``ip[p, FINAL]``: still searched, proven optimal, given up by the lower bound.
OPEN, EXACT, CUT = range(3)
# Slots of the control array ``ctl``.
(
    C_K,
    C_L,
    C_SEQ,
    C_HEAD,
    C_TAIL,
    C_WORK,
    C_EXPAND,
    C_SOLVE,
    C_BACKTRACK,
    C_CUTS,
    C_TREES,
    C_IMPROVED,
    C_STAMP,
    C_QKEY,
    C_QA,
    C_XKEY,
    C_SIM_CUTS,
) = range(17)
N_CTL = 17
# Slots of the float control array ``fctl``: incumbent error, irreducible error of the data.
F_INCUMBENT, F_FLOOR = range(2)
N_FCTL = 2
# Return codes of :func:`search`.
RUNNING, DONE = range(2)


@njit(cache=True)
def leaf_error(counts):
    """Weight minus the heaviest class: the error of a leaf over these class weights."""
    total = 0.0
    top = 0.0
    for c in range(counts.shape[0]):
        total += counts[c]
        if counts[c] > top:
            top = counts[c]
    return total - top


@njit(cache=True)
def _class_totals(rows, W, tot):
    """Class weights of a set of rows, into ``tot``."""
    tot[:] = 0.0
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


@njit(cache=True)
def _single_counts(rows, W, pure, ones_ptr, ones, single, n1):
    """Class weights ``single[f, c]`` and row counts ``n1[f]`` of the rows with feature f set.

    Returns the number of 1-entries visited (the work done).
    """
    single[:, :] = 0.0
    n1[:] = 0
    visited = 0
    for u in rows:
        cu = pure[u]
        lo = ones_ptr[u]
        hi = ones_ptr[u + 1]
        visited += hi - lo
        for t in range(lo, hi):
            _add_row(single, n1, ones[t], W, u, cu)
    return visited


@njit(cache=True)
def solve_depth1(rows, data, scr):
    """Optimal tree of depth at most one over ``rows``: ``(error, feature or -1, work)``."""
    _Bd, W, pure, ones_ptr, ones, _rirr = data
    single, tot, side, n1 = scr[0], scr[1], scr[2], scr[4]
    _class_totals(rows, W, tot)
    best = leaf_error(tot)
    if best <= 0.0:
        return best, -1, rows.shape[0]
    work = rows.shape[0] + _single_counts(rows, W, pure, ones_ptr, ones, single, n1)
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


@njit(cache=True)
def _count_pairs(rows, data, loc, a, pairs, buf):
    """Class weights of the rows having both features of each pair (local indices i < j).

    ``pairs[(i * a + j) * C + c]``: one pass over the rows adds each row's weight to every
    pair of its 1-features (MurTree's depth-two counting). Returns the work done.
    """
    _Bd, W, pure, ones_ptr, ones, _rirr = data
    C = W.shape[1]
    stride = a * C
    pairs[: a * stride] = 0.0
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


@njit(cache=True)
def _make_space(rows, data, scr, space):
    """Count ``rows`` over the features that split them (their local index space).

    Fills ``space = (pairs, single, tot, n1, act, loc)``: pair counts, per-feature class
    weights and row counts, class totals, local-to-feature and feature-to-local maps.
    Returns ``(number of local features, work)``.
    """
    _Bd, W, pure, ones_ptr, ones, _rirr = data
    g_single, g_n1, buf = scr[0], scr[4], scr[5]
    pairs, single, tot, n1, act, loc = space
    _class_totals(rows, W, tot)
    work = rows.shape[0] + _single_counts(rows, W, pure, ones_ptr, ones, g_single, g_n1)
    n_rows = rows.shape[0]
    a = 0
    for f in range(g_single.shape[0]):
        if 0 < g_n1[f] < n_rows:
            loc[f] = a
            act[a] = f
            single[a, :] = g_single[f, :]
            n1[a] = g_n1[f]
            a += 1
        else:
            loc[f] = -1
    work += _count_pairs(rows, data, loc, a, pairs, buf)
    return a, work


@njit(cache=True)
def _count_in_space(rows, data, loc, a, space, buf):
    """Count ``rows`` (a subset of another space's rows) in that space's local indices."""
    _Bd, W, pure, ones_ptr, ones, _rirr = data
    pairs, single, tot, n1 = space[0], space[1], space[2], space[3]
    _class_totals(rows, W, tot)
    single[:a, :] = 0.0
    n1[:a] = 0
    for u in rows:
        cu = pure[u]
        for t in range(ones_ptr[u], ones_ptr[u + 1]):
            i = loc[ones[t]]
            if i >= 0:
                _add_row(single, n1, i, W, u, cu)
    return rows.shape[0] + _count_pairs(rows, data, loc, a, pairs, buf)


@njit(cache=True)
def _eval_pairs(pa, pb, subtract, single, tot, n1, n_rows, a, scr):
    """Best depth-two tree from counts in a local index space.

    The weight of class c on both features i < j is ``pa[k + c]`` (minus ``pb[k + c]`` when
    ``subtract``: the counts of a node's rows minus those of its smaller child); the other
    three quadrants follow from ``single`` and ``tot``. Only features with
    ``0 < n1 < n_rows`` take part. Returns ``(error, i, left i, right i, work)``, -1 = leaf.
    """
    C = tot.shape[0]
    best_left, best_right, arg_left, arg_right, cand = scr[6], scr[7], scr[8], scr[9], scr[10]
    n = 0
    for i in range(a):
        if 0 < n1[i] < n_rows:
            cand[n] = i
            n += 1
    root_leaf = leaf_error(tot)
    side = scr[2]
    for x in range(n):
        i = cand[x]
        for c in range(C):
            side[c] = tot[c] - single[i, c]
        best_left[x] = leaf_error(side)
        best_right[x] = leaf_error(single[i])
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
                k = i * stride + j * C
                t11 = t10 = t01 = t00 = 0.0
                m11 = m10 = m01 = m00 = 0.0
                for c in range(C):
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
                e11 = t11 - m11
                e10 = t10 - m10
                e01 = t01 - m01
                e00 = t00 - m00
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
    best = root_leaf
    bi = bl = br = -1
    for x in range(n):
        e = best_left[x] + best_right[x]
        if e < best:
            best = e
            bi = cand[x]
            bl = arg_left[x]
            br = arg_right[x]
    return best, bi, bl, br, n * n // 2 + a


@njit(cache=True)
def solve_depth2(rows, data, scr, space):
    """Optimal tree of depth at most two over ``rows``: ``(error, f, g_left, g_right, work)``.

    Counts the rows over the features that split them (``space`` is overwritten), then
    evaluates every root feature with the best one-split subtree on each side; -1 = leaf.
    """
    W = data[1]
    tot = scr[1]
    _class_totals(rows, W, tot)
    if leaf_error(tot) <= 0.0:
        return leaf_error(tot), -1, -1, -1, rows.shape[0]
    a, work = _make_space(rows, data, scr, space)
    pairs, single, s_tot, n1, act = space[0], space[1], space[2], space[3], space[4]
    e, i, il, ir, w2 = _eval_pairs(pairs, pairs, False, single, s_tot, n1, rows.shape[0], a, scr)
    f = act[i] if i >= 0 else -1
    gl = act[il] if il >= 0 else -1
    gr = act[ir] if ir >= 0 else -1
    return e, f, gl, gr, work + w2


# ---------------------------------------------------------------------- search helpers
@njit(cache=True)
def _depth(p):
    d = 0
    while p > 1:
        p >>= 1
        d += 1
    return d


@njit(cache=True)
def _bt_offset(p, d, K):
    """Start of position p's subtree block in ``bt`` (blocks of 2^(K-d+1) per position)."""
    return d * (1 << (K + 1)) + (p - (1 << d)) * (1 << (K - d + 1))


@njit(cache=True)
def _bt_leaf(bt, p, d, K):
    off = _bt_offset(p, d, K)
    bt[off : off + (1 << (K - d + 1))] = -1


@njit(cache=True)
def _bt_combine(bt, p, d, K, f):
    """Best subtree of p := split on f with the best subtrees of its two children."""
    off = _bt_offset(p, d, K)
    lo = _bt_offset(2 * p, d + 1, K)
    hi = _bt_offset(2 * p + 1, d + 1, K)
    bt[off + 1] = f
    for e in range(K - d):
        for r in range(1 << e, 1 << (e + 1)):
            bt[off + r + (1 << e)] = bt[lo + r]
            bt[off + r + (1 << (e + 1))] = bt[hi + r]


@njit(cache=True)
def _bt_to_incumbent(bt, p, d, K, inc):
    """Copy position p's best subtree into the incumbent tree (absolute heap positions)."""
    off = _bt_offset(p, d, K)
    for e in range(K - d + 1):
        for r in range(1 << e, 1 << (e + 1)):
            inc[(p << e) + r - (1 << e)] = bt[off + r]


@njit(cache=True)
def _cut_level(p, lower, ip, fp, incumbent):
    """The position whose best no completion of p can beat (0 if none).

    Paper's bound: walking up from p, add the lower bounds of the siblings met on the way (the
    exact error of siblings already proven optimal, their irreducible error otherwise); once
    the sum reaches an ancestor's best error, nothing below p can improve that ancestor.
    """
    acc = lower
    if acc >= fp[p, BEST]:
        return p
    q = p
    while q > 1:
        s = q ^ 1
        acc += fp[s, BEST] if ip[s, FINAL] == EXACT else fp[s, IRR]
        q >>= 1
        bound = fp[q, BEST]
        if q == 1 and incumbent < bound:
            bound = incumbent
        if acc >= bound:
            return q
    return 0


@njit(cache=True)
def _finalize(p, a, ip):
    """Close position p after a cut at ancestor a (0: exhausted); mark inexact positions."""
    if a != 0 and a != p:
        q = p
        while q != a:
            ip[q, INEXACT] = 1
            q >>= 1
    ip[p, FINAL] = CUT if ip[p, INEXACT] else EXACT


@njit(cache=True)
def _init_position(c, d, parent, skip, data, state, ctl, scr):
    """A new branch at depth d: its best is a leaf; its features are ordered by Gini impurity."""
    _Bd, W, pure, ones_ptr, ones, rirr = data
    perm, ip, fp, dom, bt, _stk, _inc = state
    single, tot, score, n1, buf = scr[0], scr[1], scr[3], scr[4], scr[5]
    K = ctl[C_K]
    L = ctl[C_L]
    rows = perm[d, ip[c, START] : ip[c, END]]
    _class_totals(rows, W, tot)
    irr = 0.0
    for u in rows:
        irr += rirr[u]
    fp[c, BEST] = leaf_error(tot)
    fp[c, IRR] = irr
    ip[c, FINAL] = OPEN
    ip[c, INEXACT] = 0
    ip[c, PTR] = 0
    ip[c, NDOM] = 0
    ip[c, INDEC] = 0
    ctl[C_STAMP] += 1
    ip[c, STAMP] = ctl[C_STAMP]
    _bt_leaf(bt, c, d, K)
    ctl[C_WORK] += rows.shape[0]
    if d >= L or fp[c, BEST] <= irr:
        return
    ctl[C_WORK] += _single_counts(rows, W, pure, ones_ptr, ones, single, n1)
    n_rows = rows.shape[0]
    n = 0
    n_parent = ip[parent, NDOM] if parent > 0 else dom.shape[1]
    for i in range(n_parent):
        f = dom[parent, i] if parent > 0 else i
        if f == skip or n1[f] == 0 or n1[f] == n_rows:
            continue
        gini = 0.0
        right = 0.0
        left = 0.0
        sq_right = 0.0
        sq_left = 0.0
        for cc in range(W.shape[1]):
            x = single[f, cc]
            z = tot[cc] - x
            right += x
            left += z
            sq_right += x * x
            sq_left += z * z
        if right > 0.0:
            gini += right - sq_right / right
        if left > 0.0:
            gini += left - sq_left / left
        buf[n] = f
        score[n] = gini
        n += 1
    order = np.argsort(score[:n], kind="mergesort")
    for i in range(n):
        dom[c, i] = buf[order[i]]
    ip[c, NDOM] = n
    ctl[C_WORK] += n


@njit(cache=True)
def _enqueue(p, stk, ctl, P):
    stk[P + ctl[C_TAIL] % P] = p
    ctl[C_TAIL] += 1


@njit(cache=True)
def _expand(p, d, data, state, ctl, scr):
    """Take p's next feature: partition its rows and queue the two new branches."""
    Bd = data[0]
    perm, ip, _fp, dom, _bt, stk, _inc = state
    P = ip.shape[0]
    f = dom[p, ip[p, PTR]]
    ip[p, PTR] += 1
    ip[p, CUR] = f
    stk[ctl[C_SEQ]] = p
    ctl[C_SEQ] += 1
    ip[p, INDEC] = 1
    ctl[C_EXPAND] += 1
    s = ip[p, START]
    e = ip[p, END]
    lo = s
    hi = e
    for t in range(s, e):
        u = perm[d, t]
        if Bd[u, f] == 0:
            perm[d + 1, lo] = u
            lo += 1
        else:
            hi -= 1
            perm[d + 1, hi] = u
    ctl[C_WORK] += e - s
    ip[2 * p, START] = s
    ip[2 * p, END] = lo
    ip[2 * p + 1, START] = lo
    ip[2 * p + 1, END] = e
    for c in (2 * p, 2 * p + 1):
        _init_position(c, d + 1, p, f, data, state, ctl, scr)
        _enqueue(c, stk, ctl, P)


@njit(cache=True)
def _similarity_bound(p, q, ip, fp, qs, a, C):
    """MurTree's similarity bound for p from its last solve under the same parent instance.

    The rows of p then and now differ only where the parent's old and new features differ;
    removing rows lowers the optimal error by at most their weight, so
    ``opt(now) >= opt(then) - weight(then minus now)``, read off the parent's pair counts.
    """
    pairs, single, _tot, _n1, _act, loc = qs
    i = loc[ip[p, SIM_G]]
    j = loc[ip[q, CUR]]
    lo = min(i, j)
    hi = max(i, j)
    k = (lo * a + hi) * C
    both = 0.0
    removed = 0.0
    for c in range(C):
        both += pairs[k + c]
        removed += single[i, c] if p & 1 else single[j, c]
    return fp[p, SIM_OPT] - (removed - both)


@njit(cache=True)
def _solve_bottom(p, d, data, state, ctl, fctl, scr, spaces):
    """A bud at depth L: solve its remaining one or two levels exactly, unless cut.

    From the parent's second feature on, the parent's rows are counted once (``qs``); each
    feature then counts only its smaller child (``xs``) and gets the larger one by
    subtraction, which also gives the similarity lower bound.
    """
    perm, ip, fp, _dom, bt, _stk, _inc = state
    qs, xs = spaces
    W = data[1]
    C = W.shape[1]
    K = ctl[C_K]
    q = p >> 1
    lower = fp[p, IRR]
    two = K - d == 2
    use_q = two and d >= 1 and ip[q, PTR] >= 2
    if use_q:
        if ctl[C_QKEY] != ip[q, STAMP]:
            qrows = perm[d - 1, ip[q, START] : ip[q, END]]
            aq, work = _make_space(qrows, data, scr, qs)
            ctl[C_QA] = aq
            ctl[C_QKEY] = ip[q, STAMP]
            ctl[C_WORK] += work
        # raise the lower bounds of p and of its sibling if it is still to be solved
        for c in (p, p ^ 1):
            if ip[c, SIM_STAMP] == ip[q, STAMP] and ip[c, FINAL] == OPEN:
                bound = _similarity_bound(c, q, ip, fp, qs, ctl[C_QA], C)
                if bound > fp[c, IRR]:
                    fp[c, IRR] = bound
        lower = fp[p, IRR]
    a = _cut_level(p, lower, ip, fp, fctl[F_INCUMBENT])
    if a != 0:
        ctl[C_CUTS] += 1
        if use_q:
            ctl[C_SIM_CUTS] += 1
        _finalize(p, a, ip)
        return
    rows = perm[d, ip[p, START] : ip[p, END]]
    off = _bt_offset(p, d, K)
    ctl[C_SOLVE] += 1
    if not two:
        e, f, work = solve_depth1(rows, data, scr)
        if e < fp[p, BEST]:
            fp[p, BEST] = e
            bt[off + 1] = f
        ctl[C_WORK] += work
        _finalize(p, 0, ip)
        return
    if use_q:
        aq = ctl[C_QA]
        small = 2 * q
        if ip[2 * q, END] - ip[2 * q, START] > ip[2 * q + 1, END] - ip[2 * q + 1, START]:
            small = 2 * q + 1
        if ctl[C_XKEY] != ip[small, STAMP]:
            srows = perm[d, ip[small, START] : ip[small, END]]
            ctl[C_WORK] += _count_in_space(srows, data, qs[5], aq, xs, scr[5])
            ctl[C_XKEY] = ip[small, STAMP]
        if p == small:
            e, i, il, ir, work = _eval_pairs(
                xs[0], xs[0], False, xs[1], xs[2], xs[3], rows.shape[0], aq, scr
            )
        else:
            c_single, c_tot, c_n1 = scr[11], scr[12], scr[13]
            c_single[:aq, :] = qs[1][:aq, :] - xs[1][:aq, :]
            c_tot[:] = qs[2] - xs[2]
            c_n1[:aq] = qs[3][:aq] - xs[3][:aq]
            e, i, il, ir, work = _eval_pairs(
                qs[0], xs[0], True, c_single, c_tot, c_n1, rows.shape[0], aq, scr
            )
        act = qs[4]
        f = act[i] if i >= 0 else -1
        gl = act[il] if il >= 0 else -1
        gr = act[ir] if ir >= 0 else -1
    else:
        e, f, gl, gr, work = solve_depth2(rows, data, scr, xs)
        ctl[C_XKEY] = -1
    ctl[C_WORK] += work
    if e < fp[p, BEST]:
        fp[p, BEST] = e
        bt[off + 1] = f
        bt[off + 2] = gl
        bt[off + 3] = gr
    if d >= 1:
        ip[p, SIM_STAMP] = ip[q, STAMP]
        ip[p, SIM_G] = ip[q, CUR]
        fp[p, SIM_OPT] = fp[p, BEST]
    _finalize(p, 0, ip)


@njit(cache=True)
def _child_value(c, ip, fp):
    return fp[c, TMP] if ip[c, INDEC] else fp[c, BEST]


@njit(cache=True)
def _current_value(ip, fp, stk, ctl):
    """Error of the best tree that combines the current tree with the bests found so far.

    Walks the decisions from the deepest: a decision's value is the better of its best and
    the sum of its children's values (a complete current tree is needed).
    """
    for i in range(ctl[C_SEQ] - 1, -1, -1):
        p = stk[i]
        v = _child_value(2 * p, ip, fp) + _child_value(2 * p + 1, ip, fp)
        fp[p, TMP] = min(fp[p, BEST], v)
    return _child_value(1, ip, fp)


@njit(cache=True)
def _extract_current(ip, fp, bt, K, inc):
    """Write the tree whose error :func:`_current_value` computed into ``inc``."""
    inc[:] = -1
    todo = np.empty(ip.shape[0], dtype=np.int64)
    todo[0] = 1
    n = 1
    while n > 0:
        n -= 1
        p = todo[n]
        d = _depth(p)
        if ip[p, INDEC]:
            v = _child_value(2 * p, ip, fp) + _child_value(2 * p + 1, ip, fp)
            if v < fp[p, BEST]:
                inc[p] = ip[p, CUR]
                todo[n] = 2 * p
                todo[n + 1] = 2 * p + 1
                n += 2
                continue
        _bt_to_incumbent(bt, p, d, K, inc)


@njit(cache=True)
def _backtrack(ip, fp, bt, stk, ctl, fctl):
    """Pop decisions, keeping improved subtrees, until one can try its next feature."""
    K = ctl[C_K]
    P = ip.shape[0]
    while ctl[C_SEQ] > 0:
        ctl[C_SEQ] -= 1
        p = stk[ctl[C_SEQ]]
        ip[p, INDEC] = 0
        ctl[C_BACKTRACK] += 1
        v = fp[2 * p, BEST] + fp[2 * p + 1, BEST]
        if v < fp[p, BEST]:
            fp[p, BEST] = v
            _bt_combine(bt, p, _depth(p), K, ip[p, CUR])
        a = 0
        if ip[p, PTR] < ip[p, NDOM]:
            a = _cut_level(p, fp[p, IRR], ip, fp, fctl[F_INCUMBENT])
            if a == 0:
                _enqueue(p, stk, ctl, P)
                return
            ctl[C_CUTS] += 1
        _finalize(p, a, ip)


@njit(cache=True)
def search(data, state, ctl, fctl, scr, spaces, budget):
    """Run Blossom's loop for about ``budget`` units of work; ``DONE`` when proven optimal.

    Buds are expanded first-in first-out until the current tree is complete; then the tree
    is evaluated (a better one becomes the incumbent in ``inc`` and sets ``ctl[C_IMPROVED]``)
    and decisions are popped until one still has features to try and is not cut.
    """
    _perm, ip, fp, _dom, bt, stk, inc = state
    K = ctl[C_K]
    L = ctl[C_L]
    P = ip.shape[0]
    stop = ctl[C_WORK] + budget
    while ctl[C_WORK] < stop:
        ctl[C_WORK] += 1  # every step counts, so cut-only stretches still return in time
        if ctl[C_HEAD] < ctl[C_TAIL]:
            p = stk[P + ctl[C_HEAD] % P]
            ctl[C_HEAD] += 1
            d = _depth(p)
            if d == L:
                _solve_bottom(p, d, data, state, ctl, fctl, scr, spaces)
                continue
            if ip[p, PTR] == 0:
                a = _cut_level(p, fp[p, IRR], ip, fp, fctl[F_INCUMBENT])
                if a != 0:
                    _finalize(p, a, ip)
                    continue
            if ip[p, PTR] >= ip[p, NDOM]:
                _finalize(p, 0, ip)
                continue
            _expand(p, d, data, state, ctl, scr)
        elif ctl[C_SEQ] > 0:
            ctl[C_TREES] += 1
            ctl[C_WORK] += ctl[C_SEQ]
            value = _current_value(ip, fp, stk, ctl)
            if value < fctl[F_INCUMBENT]:
                fctl[F_INCUMBENT] = value
                _extract_current(ip, fp, bt, K, inc)
                ctl[C_IMPROVED] = 1
                if value <= fctl[F_FLOOR]:
                    return DONE
            _backtrack(ip, fp, bt, stk, ctl, fctl)
        else:
            if fp[1, BEST] < fctl[F_INCUMBENT]:
                fctl[F_INCUMBENT] = fp[1, BEST]
                inc[:] = -1
                _bt_to_incumbent(bt, 1, 0, K, inc)
                ctl[C_IMPROVED] = 1
            return DONE
    return RUNNING


@njit(cache=True)
def start(data, state, ctl, scr):
    """Reset the search: the root holds every row and is the only bud."""
    perm, ip, _fp, _dom, _bt, stk, _inc = state
    for i in range(perm.shape[1]):
        perm[0, i] = i
    ip[1, START] = 0
    ip[1, END] = perm.shape[1]
    for slot in range(C_SEQ, N_CTL):
        ctl[slot] = 0
    ctl[C_QKEY] = -1
    ctl[C_XKEY] = -1
    ip[:, SIM_STAMP] = -1
    _init_position(1, 0, 0, -1, data, state, ctl, scr)
    _enqueue(1, stk, ctl, ip.shape[0])
