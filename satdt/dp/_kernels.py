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
START, END, NDOM, PTR, CUR, FINAL, INEXACT, INDEC = range(8)
N_IP = 8
# Columns of the per-position float table ``fp``: best error found, irreducible error, and the
# value of the current tree below the position (computed when a tree is complete).
BEST, IRR, TMP = range(3)
N_FP = 3
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
) = range(12)
N_CTL = 12
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


@njit(cache=True)
def _single_counts(rows, W, pure, ones_ptr, ones, single, n1):
    """Class weights ``single[f, c]`` and row counts ``n1[f]`` of the rows with feature f set.

    Returns the number of 1-entries visited (the work done).
    """
    single[:, :] = 0.0
    n1[:] = 0
    C = W.shape[1]
    visited = 0
    for u in rows:
        cu = pure[u]
        lo = ones_ptr[u]
        hi = ones_ptr[u + 1]
        visited += hi - lo
        for t in range(lo, hi):
            f = ones[t]
            n1[f] += 1
            if cu >= 0:
                single[f, cu] += W[u, cu]
            else:
                for c in range(C):
                    single[f, c] += W[u, c]
    return visited


@njit(cache=True)
def solve_depth1(rows, data, scr):
    """Optimal tree of depth at most one over ``rows``: ``(error, feature or -1, work)``."""
    _Bd, W, pure, ones_ptr, ones, _rirr = data
    single, _pairs, tot, side, _bl, _br, n1, _loc, _act, _buf, _al, _ar = scr
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
def _quadrant_errors(pairs, base, single, f, g, tot):
    """Leaf errors of the quadrants (f, g) = (1,1), (1,0), (0,1), (0,0) of one feature pair."""
    t11 = t10 = t01 = t00 = 0.0
    m11 = m10 = m01 = m00 = 0.0
    for c in range(tot.shape[0]):
        x11 = pairs[base + c]
        x10 = single[f, c] - x11
        x01 = single[g, c] - x11
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


@njit(cache=True)
def solve_depth2(rows, data, scr):
    """Optimal tree of depth at most two over ``rows``.

    One pass over the rows adds each row's class weight to every pair of its 1-features
    (MurTree's depth-two counting); the other three quadrants of a pair follow from the
    single-feature and total counts. Only features that split ``rows`` take part. Returns
    ``(error, f, g_left, g_right, work)`` with -1 for a leaf; ``work`` counts the row, pair
    and evaluation steps, for the caller's budget.
    """
    _Bd, W, pure, ones_ptr, ones, _rirr = data
    single, pairs, tot, side, best_left, best_right, n1, loc, act, buf, arg_left, arg_right = scr
    _class_totals(rows, W, tot)
    root_leaf = leaf_error(tot)
    n_rows = rows.shape[0]
    if root_leaf <= 0.0:
        return root_leaf, -1, -1, -1, n_rows
    work = n_rows + _single_counts(rows, W, pure, ones_ptr, ones, single, n1)
    C = W.shape[1]
    a = 0
    for f in range(single.shape[0]):
        if 0 < n1[f] < n_rows:
            loc[f] = a
            act[a] = f
            a += 1
        else:
            loc[f] = -1
    if a == 0:
        return root_leaf, -1, -1, -1, work
    stride = a * C
    pairs[: a * stride] = 0.0
    work += a * a
    for u in rows:
        k = 0
        for t in range(ones_ptr[u], ones_ptr[u + 1]):
            lf = loc[ones[t]]
            if lf >= 0:
                buf[k] = lf
                k += 1
        work += k * (k - 1) // 2
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
    # best one-split subtree on each side of each root feature, starting from the leaves
    for i in range(a):
        f = act[i]
        for c in range(C):
            side[c] = tot[c] - single[f, c]
        best_left[i] = leaf_error(side)
        best_right[i] = leaf_error(single[f])
        arg_left[i] = -1
        arg_right[i] = -1
    for i in range(a):
        f = act[i]
        for j in range(i + 1, a):
            g = act[j]
            e11, e10, e01, e00 = _quadrant_errors(pairs, i * stride + j * C, single, f, g, tot)
            # root f: its right child (f = 1) and left child (f = 0) split by g
            if e11 + e10 < best_right[i]:
                best_right[i] = e11 + e10
                arg_right[i] = g
            if e01 + e00 < best_left[i]:
                best_left[i] = e01 + e00
                arg_left[i] = g
            # root g: its right child (g = 1) and left child (g = 0) split by f
            if e11 + e01 < best_right[j]:
                best_right[j] = e11 + e01
                arg_right[j] = f
            if e10 + e00 < best_left[j]:
                best_left[j] = e10 + e00
                arg_left[j] = f
    work += a * a
    best = root_leaf
    bf = bl = br = -1
    for i in range(a):
        e = best_left[i] + best_right[i]
        if e < best:
            best = e
            bf = act[i]
            bl = arg_left[i]
            br = arg_right[i]
    return best, bf, bl, br, work


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
    single, _pairs, tot, side, score, _br, n1, _loc, _act, buf, _al, _ar = scr
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
def _solve_bottom(p, d, data, state, ctl, fctl, scr):
    """A bud at depth L: solve its remaining one or two levels exactly, unless cut."""
    perm, ip, fp, _dom, bt, _stk, _inc = state
    K = ctl[C_K]
    a = _cut_level(p, fp[p, IRR], ip, fp, fctl[F_INCUMBENT])
    if a != 0:
        ctl[C_CUTS] += 1
        _finalize(p, a, ip)
        return
    rows = perm[d, ip[p, START] : ip[p, END]]
    off = _bt_offset(p, d, K)
    ctl[C_SOLVE] += 1
    if K - d >= 2:
        e, f, gl, gr, work = solve_depth2(rows, data, scr)
        if e < fp[p, BEST]:
            fp[p, BEST] = e
            bt[off + 1] = f
            bt[off + 2] = gl
            bt[off + 3] = gr
    else:
        e, f, work = solve_depth1(rows, data, scr)
        if e < fp[p, BEST]:
            fp[p, BEST] = e
            bt[off + 1] = f
    ctl[C_WORK] += work
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
def search(data, state, ctl, fctl, scr, budget):
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
        if ctl[C_HEAD] < ctl[C_TAIL]:
            p = stk[P + ctl[C_HEAD] % P]
            ctl[C_HEAD] += 1
            d = _depth(p)
            if d == L:
                _solve_bottom(p, d, data, state, ctl, fctl, scr)
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
    for slot in (C_SEQ, C_HEAD, C_TAIL, C_WORK, C_EXPAND, C_SOLVE, C_BACKTRACK, C_CUTS):
        ctl[slot] = 0
    ctl[C_TREES] = 0
    ctl[C_IMPROVED] = 0
    _init_position(1, 0, 0, -1, data, state, ctl, scr)
    _enqueue(1, stk, ctl, ip.shape[0])
