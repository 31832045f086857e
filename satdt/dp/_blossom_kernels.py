"""Numba kernels of Blossom's search (:mod:`satdt.dp.blossom`) over flat arrays.

The search state lives in a handful of arrays allocated by :mod:`satdt.dp.blossom`, grouped
in the named tuples :class:`State` and :class:`Bottom` (and the shared :class:`Data` and
:class:`Scratch` of :mod:`satdt.dp._counts`); the kernels read and update them in place and
return to Python after a budget of work, so the caller can check the clock and report
incumbents between calls.

Positions. Blossom only ever holds one current tree, so each of its branches is named by its
position in heap order: root 1, children ``2p`` (feature = 0) and ``2p + 1`` (feature = 1).
Decisions are taken at depths ``0 .. L - 1``; a branch at depth ``L = max(K - 2, 0)`` is solved
exactly by the depth-two (or depth-one) solver of :mod:`satdt.dp._counts`, which counts the
class weights of all feature pairs in one pass over its rows.

The loop is the paper's Algorithm 1 (see :func:`search`): buds are expanded first-in
first-out until the current tree is complete, then decisions are popped (backtracking) until
one can try its next feature and is not cut by the lower bound.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, typeof, types

from ._counts import (
    DATA_T,
    F64_T,
    I64_T,
    SCRATCH_T,
    Space,
    class_totals,
    count_in_space,
    eval_pairs,
    eval_pairs_difference,
    leaf_error,
    make_space,
    new_space,
    similarity_bound,
    single_counts,
    solve_depth1,
)

# Columns of the per-position integer table ``ip``.
# STAMP names the branch instance; SIM_* remember the last depth-two solve at the position
# (the parent's instance and feature then), for the similarity lower bound.
START, END, NDOM, PTR, CUR, FINAL, INEXACT, INDEC, STAMP, SIM_G, SIM_STAMP = range(11)
N_IP = 11
# Columns of the per-position float table ``fp``: best error found, a proven lower bound (the
# irreducible error, raised by the similarity bound), the value of the current tree below
# the position (computed when a tree is complete), and the optimum of the last depth-two
# solve at the position (for the similarity bound).
BEST, IRR, TMP, SIM_OPT = range(4)
N_FP = 4
# Values of ``ip[p, FINAL]``: still searched, proven optimal, given up by the lower bound.
OPEN, EXACT, CUT = range(3)
# Slots of the control array ``ctl``: depth K and decision depth L, the decision stack
# length, FIFO head and tail, work done, counters, "a new incumbent is in ``inc``", the last
# branch instance stamp, and which rows the ``Bottom`` spaces hold (parent instance, its
# number of local features, smaller child instance).
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
# Slots of the float control array ``fctl``: the error to beat (the incumbent's, or the
# caller's upper bound), the irreducible error of the data.
F_INCUMBENT, F_FLOOR = range(2)
N_FCTL = 2
# Return codes of :func:`search`.
RUNNING, DONE = range(2)


class State(NamedTuple):
    """Blossom's search state, sized by positions ``P = 2^(L+1)``, rows N, features M, depth K.

    ``perm[d, start:end]`` are the rows of a position at depth ``d`` (children partition their
    parent's slice in ``perm[d + 1]``); ``ip``/``fp`` are per-position integer and float
    tables (columns above); ``dom[p, :ndom]`` the features still to try at ``p`` in heuristic
    order; ``bt`` the best subtree found at each position (relative heap order, feature index
    or -1 for a leaf); ``stk`` the decision stack ``seq`` (first half) and the FIFO ring of
    buds (second half); ``inc`` the incumbent tree over absolute positions.
    """

    perm: np.ndarray  # int32 (L + 1, N)
    ip: np.ndarray  # int64 (P, N_IP)
    fp: np.ndarray  # float64 (P, N_FP)
    dom: np.ndarray  # int64 (P, M)
    bt: np.ndarray  # int64 ((L + 1) * 2^(K+1),)
    stk: np.ndarray  # int64 (2P,)
    inc: np.ndarray  # int64 (2^(K+1),)


class Bottom(NamedTuple):
    """Counts reused by the depth-two solves of the buds under one parent (see ``_solve_bottom``).

    ``parent`` counts the parent's rows, ``small`` its smaller child's rows in the parent's
    local indices, ``large`` the larger child's per-feature counts (by subtraction; its
    ``pairs`` are unused, the pair counts being ``parent.pairs - small.pairs``).
    """

    parent: Space
    small: Space
    large: Space


def _sample_state() -> State:
    """A State of the smallest sizes, for its Numba type."""
    ints = np.zeros((1, 1), dtype=np.int64)
    return State(
        perm=np.zeros((1, 1), dtype=np.int32),
        ip=ints,
        fp=np.zeros((1, 1)),
        dom=ints,
        bt=np.zeros(1, dtype=np.int64),
        stk=np.zeros(1, dtype=np.int64),
        inc=np.zeros(1, dtype=np.int64),
    )


STATE_T = typeof(_sample_state())
BOTTOM_T = typeof(Bottom(new_space(1, 1), new_space(1, 1), new_space(1, 1)))


# ---------------------------------------------------------------------- search helpers
@njit(cache=True, inline="always")
def _depth(p):
    d = 0
    while p > 1:
        p >>= 1
        d += 1
    return d


@njit(cache=True, inline="always")
def _bt_offset(p, d, K):
    """Start of position p's subtree block in ``bt`` (blocks of 2^(K-d+1) per position)."""
    return d * (1 << (K + 1)) + (p - (1 << d)) * (1 << (K - d + 1))


@njit(cache=True, inline="always")
def _bt_leaf(bt, p, d, K):
    off = _bt_offset(p, d, K)
    bt[off : off + (1 << (K - d + 1))] = -1


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _bt_to_incumbent(bt, p, d, K, inc):
    """Copy position p's best subtree into the incumbent tree (absolute heap positions)."""
    off = _bt_offset(p, d, K)
    for e in range(K - d + 1):
        for r in range(1 << e, 1 << (e + 1)):
            inc[(p << e) + r - (1 << e)] = bt[off + r]


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _finalize(p, a, ip):
    """Close position p after a cut at ancestor a (0: exhausted); mark inexact positions."""
    if a != 0 and a != p:
        q = p
        while q != a:
            ip[q, INEXACT] = 1
            q >>= 1
    ip[p, FINAL] = CUT if ip[p, INEXACT] else EXACT


@njit((F64_T, I64_T, types.int64, F64_T, I64_T), cache=True)
def stable_sort(keys, values, n, key_buf, value_buf):
    """Sort ``keys[:n]`` ascending in place, ``values[:n]`` along, keeping ties in order.

    A bottom-up merge sort over insertion-sorted runs of 16 (a stable sort, so the same
    order as NumPy's ``argsort(kind="stable")``); ``key_buf``, ``value_buf`` hold ``n`` entries.
    """
    run = 16
    for lo in range(0, n, run):
        for i in range(lo + 1, min(lo + run, n)):
            key = keys[i]
            value = values[i]
            j = i - 1
            while j >= lo and keys[j] > key:
                keys[j + 1] = keys[j]
                values[j + 1] = values[j]
                j -= 1
            keys[j + 1] = key
            values[j + 1] = value
    width = run
    while width < n:  # merge runs of ``width`` into the buffers, then copy them back
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            for t in range(lo, hi):
                if j >= hi or (i < mid and keys[i] <= keys[j]):
                    key_buf[t] = keys[i]
                    value_buf[t] = values[i]
                    i += 1
                else:
                    key_buf[t] = keys[j]
                    value_buf[t] = values[j]
                    j += 1
        for t in range(n):
            keys[t] = key_buf[t]
            values[t] = value_buf[t]
        width *= 2


@njit(
    (types.int64, types.int64, types.int64, types.int64, DATA_T, STATE_T, I64_T, SCRATCH_T),
    cache=True,
)
def init_position(c, d, parent, skip, data, state, ctl, scr):
    """A new branch at depth d: its best is a leaf; its features are ordered by Gini impurity.

    The branch's features are those of its parent's domain that split its rows, except the
    parent's own feature ``skip`` (the paper's heuristic order; at depth L the bottom solver
    tries every feature, so no domain is kept there).
    """
    W, rirr = data.W, data.rirr
    perm, ip, fp, dom, bt = state.perm, state.ip, state.fp, state.dom, state.bt
    single, tot, score, n1, buf = scr.single, scr.tot, scr.score, scr.n1, scr.buf
    K = ctl[C_K]
    L = ctl[C_L]
    rows = perm[d, ip[c, START] : ip[c, END]]
    class_totals(rows, W, tot)
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
    ctl[C_WORK] += single_counts(rows, data, single, n1)
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
    stable_sort(score, buf, n, scr.best_left, scr.cand)  # (the two last: free scratch here)
    for i in range(n):
        dom[c, i] = buf[i]
    ip[c, NDOM] = n
    ctl[C_WORK] += n


@njit(cache=True, inline="always")
def _enqueue(p, stk, ctl, P):
    stk[P + ctl[C_TAIL] % P] = p
    ctl[C_TAIL] += 1


@njit(cache=True, inline="always")
def _expand(p, d, data, state, ctl, scr):
    """Take p's next feature: partition its rows and queue the two new branches."""
    Bd = data.Bd
    perm, ip, dom, stk = state.perm, state.ip, state.dom, state.stk
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
        init_position(c, d + 1, p, f, data, state, ctl, scr)
        _enqueue(c, stk, ctl, P)


@njit((types.int64, types.int64, DATA_T, STATE_T, I64_T, F64_T, SCRATCH_T, BOTTOM_T), cache=True)
def _solve_bottom(p, d, data, state, ctl, fctl, scr, bottom):
    """A bud at depth L: solve its remaining one or two levels exactly, unless cut.

    From the parent's second feature on, the parent's rows are counted once
    (``bottom.parent``); each feature then counts only its smaller child (``bottom.small``)
    and gets the larger one by subtraction, which also gives MurTree's similarity lower
    bound for a bud solved before under the parent's previous feature.
    """
    perm, ip, fp, bt = state.perm, state.ip, state.fp, state.bt
    qs, xs = bottom.parent, bottom.small
    K = ctl[C_K]
    q = p >> 1
    lower = fp[p, IRR]
    two = K - d == 2
    use_q = two and d >= 1 and ip[q, PTR] >= 2
    if use_q:
        if ctl[C_QKEY] != ip[q, STAMP]:
            qrows = perm[d - 1, ip[q, START] : ip[q, END]]
            aq, work = make_space(qrows, data, scr, qs)
            ctl[C_QA] = aq
            ctl[C_QKEY] = ip[q, STAMP]
            ctl[C_WORK] += work
        # raise the lower bounds of p and of its sibling if it is still to be solved
        for c in (p, p ^ 1):
            if ip[c, SIM_STAMP] == ip[q, STAMP] and ip[c, FINAL] == OPEN:
                bound = similarity_bound(
                    fp[c, SIM_OPT], qs, ctl[C_QA], ip[c, SIM_G], ip[q, CUR], c & 1
                )
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
            ctl[C_WORK] += count_in_space(srows, data, qs.loc, aq, xs, scr.buf)
            ctl[C_XKEY] = ip[small, STAMP]
        if p == small:
            e, i, il, ir, work = eval_pairs(xs, xs.pairs, rows.shape[0], aq, scr)
        else:
            lg = bottom.large
            for i in range(aq):
                for c in range(lg.single.shape[1]):
                    lg.single[i, c] = qs.single[i, c] - xs.single[i, c]
                lg.n1[i] = qs.n1[i] - xs.n1[i]
            for c in range(lg.tot.shape[0]):
                lg.tot[c] = qs.tot[c] - xs.tot[c]
            e, i, il, ir, work = eval_pairs_difference(
                lg, qs.pairs, xs.pairs, rows.shape[0], aq, scr
            )
        act = qs.act
        f = act[i] if i >= 0 else -1
        gl = act[il] if il >= 0 else -1
        gr = act[ir] if ir >= 0 else -1
    else:
        aq, work = make_space(rows, data, scr, xs)
        ctl[C_WORK] += work
        ctl[C_XKEY] = -1
        e, i, il, ir, work = eval_pairs(xs, xs.pairs, rows.shape[0], aq, scr)
        act = xs.act
        f = act[i] if i >= 0 else -1
        gl = act[il] if il >= 0 else -1
        gr = act[ir] if ir >= 0 else -1
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


@njit(cache=True, inline="always")
def _child_value(c, ip, fp):
    return fp[c, TMP] if ip[c, INDEC] else fp[c, BEST]


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _extract_current(ip, fp, bt, K, inc):
    """Write the tree whose error :func:`_current_value` computed into ``inc``."""
    for x in range(inc.shape[0]):
        inc[x] = -1
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


@njit(cache=True, inline="always")
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


@njit((DATA_T, STATE_T, I64_T, F64_T, SCRATCH_T, BOTTOM_T, types.int64), cache=True)
def search(data, state, ctl, fctl, scr, bottom, budget):
    """Run Blossom's loop for about ``budget`` units of work; ``DONE`` when proven optimal.

    The paper's Algorithm 1. Buds are expanded first-in first-out until the current tree is
    complete; then the tree is evaluated (one better than ``fctl[F_INCUMBENT]`` becomes the
    incumbent in ``inc`` and sets ``ctl[C_IMPROVED]``) and decisions are popped until one
    still has features to try and is not cut. ``DONE``: the space is exhausted, or the
    incumbent reached the irreducible error of the data.
    """
    ip, fp, bt, stk, inc = state.ip, state.fp, state.bt, state.stk, state.inc
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
                _solve_bottom(p, d, data, state, ctl, fctl, scr, bottom)
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
                for x in range(inc.shape[0]):
                    inc[x] = -1
                _bt_to_incumbent(bt, 1, 0, K, inc)
                ctl[C_IMPROVED] = 1
            return DONE
    return RUNNING
