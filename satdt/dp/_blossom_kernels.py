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

Every value is a *cost*: the misclassified weight plus a leaf penalty P (``fctl[F_PENALTY]``)
per leaf, and a split must keep at least ``ctl[C_SUPPORT]`` training rows on each side
(minimum leaf support, counted in :class:`Support`). With P = 0 and a support of 1 the cost is
the error and every branch the paper's. A tree on rows with irreducible error ``irr`` costs at
least ``irr + P`` and a split at least ``irr + 2P``, so a leaf is optimal when its error is at
most ``irr + P``; the lower bounds below are these.
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
    eval_pairs_difference_penalised,
    eval_pairs_penalised,
    leaf_error,
    make_space,
    new_space,
    similarity_bound,
    single_counts,
    solve_depth1,
    subtract_counts,
)
from ._dl85_kernels import eval_pairs_support
from .common import Data, Scratch, build_data, new_scratch

# Columns of the per-position integer table ``ip``.
# STAMP names the branch instance; SIM_* remember the last depth-two solve at the position
# (the parent's instance and feature then), for the similarity lower bound.
START, END, NDOM, PTR, CUR, FINAL, INEXACT, INDEC, STAMP, SIM_G, SIM_STAMP = range(11)
N_IP = 11
# Columns of the per-position float table ``fp``: best cost found, a proven lower bound on
# the optimum (the irreducible error plus P, raised by the similarity bound), the value of the
# current tree below the position (computed when a tree is complete), the optimum of the last
# depth-two solve at the position (for the similarity bound), and a lower bound on the cost
# of any split of the position (the irreducible error plus 2P).
BEST, IRR, TMP, SIM_OPT, SPLIT = range(5)
N_FP = 5
# Values of ``ip[p, FINAL]``: still searched, proven optimal, given up by the lower bound.
OPEN, EXACT, CUT = range(3)
# Slots of the control array ``ctl``: depth K, decision depth L and the minimum leaf support
# (set once), then (reset by each start) the decision stack length, FIFO head and tail, work
# done, counters, "a new incumbent is in ``inc``", the last branch instance stamp, and which
# rows the ``Bottom`` spaces hold (parent instance, its number of local features, smaller
# child instance).
(
    C_K,
    C_L,
    C_SUPPORT,
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
) = range(18)
N_CTL = 18
# Slots of the float control array ``fctl``: the cost to beat (the incumbent's, or the
# caller's upper bound), the least cost of any tree (irreducible error of the data plus P),
# the leaf penalty P.
F_INCUMBENT, F_FLOOR, F_PENALTY = range(3)
N_FCTL = 3
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


class Support(NamedTuple):
    """The minimum leaf support's counts: supports (training rows of positive weight merged
    into each distinct row) counted like a one-class weight, as DL8.5 does.

    ``data`` is the search's :class:`Data` with the row counts as the only class weight;
    ``space`` the supports of a bud's rows in the local numbering of ``Bottom.small``;
    ``scr`` per-feature supports of a branch's rows.
    """

    data: Data
    space: Space
    scr: Scratch


def new_support(data: Data, count: np.ndarray, min_support: int) -> Support:
    """The :class:`Support` of a search (arrays of one cell when ``min_support`` is 1)."""
    M = data.Bd.shape[1] if min_support > 1 else 1
    sup_data = Data(
        Bd=data.Bd,
        W=count.astype(np.float64).reshape(-1, 1),
        pure=np.zeros(data.Bd.shape[0], dtype=np.int64),
        ones_ptr=data.ones_ptr,
        ones=data.ones,
        rirr=np.zeros(data.Bd.shape[0]),
    )
    return Support(data=sup_data, space=new_space(M, 1), scr=new_scratch(M, 1))


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
SUPPORT_T = typeof(
    new_support(build_data(np.zeros((1, 1), dtype=np.uint8), np.ones((1, 1)))[0], np.ones(1), 2)
)


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
def _split_lower(p, fp):
    """Lower bound on the cost of any split of p: what searching p further can find."""
    return max(fp[p, IRR], fp[p, SPLIT])


@njit(cache=True, inline="always")
def _cut_level(p, lower, ip, fp, incumbent):
    """The position whose best no completion of p can beat (0 if none).

    Paper's bound: walking up from p, add the lower bounds of the siblings met on the way (the
    exact cost of siblings already proven optimal, their lower bound ``IRR`` otherwise); once
    the sum reaches an ancestor's best cost, nothing below p can improve that ancestor.
    ``lower`` bounds the cost of the subtrees of p still to be searched (a split of p:
    :func:`_split_lower`).
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


@njit(cache=True, inline="always")
def _supports(rows, sup, ctl):
    """Supports of the rows having each feature into ``sup.scr.single[:, 0]``; returns the
    supports of all the rows."""
    ctl[C_WORK] += single_counts(rows, sup.data, sup.scr.single, sup.scr.n1)
    total = 0.0
    for u in rows:
        total += sup.data.W[u, 0]
    return total


@njit(
    (
        types.int64,
        types.int64,
        types.int64,
        types.int64,
        DATA_T,
        STATE_T,
        I64_T,
        F64_T,
        SCRATCH_T,
    ),
    cache=True,
)
def init_position(c, d, parent, skip, data, state, ctl, fctl, scr):
    """A new branch at depth d: its best is a leaf; its features are ordered by Gini impurity.

    The branch's features are those of its parent's domain that split its rows, except the
    parent's own feature ``skip`` (the paper's heuristic order; at depth L the bottom solver
    tries every feature, so no domain is kept there). The domain is empty when a leaf is
    optimal: its error is at most ``irr + P``. (Under a minimum support,
    :func:`drop_unsupported` then removes the features that leave too few rows on a side.)
    """
    W, rirr = data.W, data.rirr
    perm, ip, fp, dom, bt = state.perm, state.ip, state.fp, state.dom, state.bt
    single, tot, score, n1, buf = scr.single, scr.tot, scr.score, scr.n1, scr.buf
    K = ctl[C_K]
    L = ctl[C_L]
    penalty = fctl[F_PENALTY]
    rows = perm[d, ip[c, START] : ip[c, END]]
    class_totals(rows, W, tot)
    irr = 0.0
    for u in rows:
        irr += rirr[u]
    leaf = leaf_error(tot)
    fp[c, BEST] = leaf + penalty
    fp[c, IRR] = irr + penalty
    fp[c, SPLIT] = irr + 2.0 * penalty
    ip[c, FINAL] = OPEN
    ip[c, INEXACT] = 0
    ip[c, PTR] = 0
    ip[c, NDOM] = 0
    ip[c, INDEC] = 0
    ctl[C_STAMP] += 1
    ip[c, STAMP] = ctl[C_STAMP]
    _bt_leaf(bt, c, d, K)
    ctl[C_WORK] += rows.shape[0]
    if d >= L or leaf <= irr + penalty:
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


@njit((types.int64, types.int64, STATE_T, I64_T, SUPPORT_T), cache=True)
def drop_unsupported(c, d, state, ctl, sup):
    """Keep in branch c's domain only the features with at least ``ctl[C_SUPPORT]`` training
    rows on each side (in heuristic order). A kernel of its own, called only under a minimum
    support, so that the search without one passes no support counts around."""
    ip, dom = state.ip, state.dom
    if ip[c, NDOM] == 0:
        return
    s = ctl[C_SUPPORT]
    rows = state.perm[d, ip[c, START] : ip[c, END]]
    one = sup.scr.single
    total = _supports(rows, sup, ctl)
    n = 0
    for i in range(ip[c, NDOM]):
        f = dom[c, i]
        if min(one[f, 0], total - one[f, 0]) >= s:
            dom[c, n] = f
            n += 1
    ip[c, NDOM] = n


@njit(cache=True, inline="always")
def _enqueue(p, stk, ctl, P):
    stk[P + ctl[C_TAIL] % P] = p
    ctl[C_TAIL] += 1


@njit(cache=True, inline="always")
def _expand(p, d, data, state, ctl, fctl, scr, sup):
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
        init_position(c, d + 1, p, f, data, state, ctl, fctl, scr)
        if ctl[C_SUPPORT] > 1:
            drop_unsupported(c, d + 1, state, ctl, sup)
        _enqueue(c, stk, ctl, P)


@njit(cache=True, inline="always")
def _solve_depth1_support(rows, data, ctl, scr, sup, penalty, min_support):
    """Least-cost tree of depth at most one over ``rows`` under the minimum support:
    ``(cost, feature or -1)``.

    Every split has two leaves, so the best split is the one of least error (the first in
    feature order) among those with at least ``min_support`` training rows on each side; it
    is taken when it beats the leaf by more than the penalty.
    """
    W = data.W
    single, tot, side, n1 = scr.single, scr.tot, scr.side, scr.n1
    class_totals(rows, W, tot)
    leaf = leaf_error(tot)
    ctl[C_WORK] += rows.shape[0] + single_counts(rows, data, single, n1) + single.shape[0]
    sup_one = sup.scr.single
    sup_all = _supports(rows, sup, ctl)
    best = leaf
    best_f = -1
    for f in range(single.shape[0]):
        if n1[f] == 0 or n1[f] == rows.shape[0]:
            continue
        if min(sup_one[f, 0], sup_all - sup_one[f, 0]) < min_support:
            continue
        for c in range(W.shape[1]):
            side[c] = tot[c] - single[f, c]
        e = leaf_error(single[f]) + leaf_error(side)
        if e < best:
            best = e
            best_f = f
    if best_f >= 0 and best + 2.0 * penalty < leaf + penalty:
        return best + 2.0 * penalty, best_f
    return leaf + penalty, -1


@njit(cache=True, inline="always")
def _raise_similarity(p, q, qs, ip, fp, aq):
    """Raise the lower bounds of bud p and of its sibling, if still to be solved, by MurTree's
    similarity bound from the bud solved under the parent's previous feature."""
    for c in (p, p ^ 1):
        if ip[c, SIM_STAMP] == ip[q, STAMP] and ip[c, FINAL] == OPEN:
            bound = similarity_bound(fp[c, SIM_OPT], qs, aq, ip[c, SIM_G], ip[q, CUR], c & 1)
            if bound > fp[c, IRR]:
                fp[c, IRR] = bound


@njit((types.int64, types.int64, DATA_T, STATE_T, I64_T, F64_T, SCRATCH_T, BOTTOM_T), cache=True)
def _solve_bottom(p, d, data, state, ctl, fctl, scr, bottom):
    """A bud at depth L: solve its remaining one or two levels exactly, unless cut.

    From the parent's second feature on, the parent's rows are counted once
    (``bottom.parent``); each feature then counts only its smaller child (``bottom.small``)
    and gets the larger one by subtraction, which also gives MurTree's similarity lower
    bound for a bud solved before under the parent's previous feature. (Under a minimum
    support: :func:`_solve_bottom_support`.)
    """
    perm, ip, fp, bt = state.perm, state.ip, state.fp, state.bt
    qs, xs = bottom.parent, bottom.small
    K = ctl[C_K]
    penalty = fctl[F_PENALTY]
    q = p >> 1
    two = K - d == 2
    use_q = two and d >= 1 and ip[q, PTR] >= 2
    if use_q:
        if ctl[C_QKEY] != ip[q, STAMP]:
            qrows = perm[d - 1, ip[q, START] : ip[q, END]]
            aq, work = make_space(qrows, data, scr, qs)
            ctl[C_QA] = aq
            ctl[C_QKEY] = ip[q, STAMP]
            ctl[C_WORK] += work
        _raise_similarity(p, q, qs, ip, fp, ctl[C_QA])
    a = _cut_level(p, _split_lower(p, fp), ip, fp, fctl[F_INCUMBENT])
    if a != 0:
        ctl[C_CUTS] += 1
        if use_q:
            ctl[C_SIM_CUTS] += 1
        _finalize(p, a, ip)
        return
    rows = perm[d, ip[p, START] : ip[p, END]]
    off = _bt_offset(p, d, K)
    ctl[C_SOLVE] += 1
    if not two:  # the split of least error, if it beats the leaf (fp[p, BEST]) by more than P
        e, f, work = solve_depth1(rows, data, scr)
        if f >= 0 and e + 2.0 * penalty < fp[p, BEST]:
            fp[p, BEST] = e + 2.0 * penalty
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
            e, i, il, ir, work = eval_pairs_penalised(xs, xs.pairs, rows.shape[0], aq, penalty, scr)
        else:
            lg = bottom.large
            subtract_counts(lg, qs, xs, aq)
            e, i, il, ir, work = eval_pairs_difference_penalised(
                lg, qs.pairs, xs.pairs, rows.shape[0], aq, penalty, scr
            )
        act = qs.act
        f = act[i] if i >= 0 else -1
        gl = act[il] if il >= 0 else -1
        gr = act[ir] if ir >= 0 else -1
    else:
        aq, work = make_space(rows, data, scr, xs)
        ctl[C_WORK] += work
        ctl[C_XKEY] = -1
        e, i, il, ir, work = eval_pairs_penalised(xs, xs.pairs, rows.shape[0], aq, penalty, scr)
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


@njit(
    (types.int64, types.int64, DATA_T, STATE_T, I64_T, F64_T, SCRATCH_T, BOTTOM_T, SUPPORT_T),
    cache=True,
)
def _solve_bottom_support(p, d, data, state, ctl, fctl, scr, bottom, sup):
    """:func:`_solve_bottom` under a minimum support above 1 (without the shared counts).

    The bud's rows are counted afresh, class weights (``bottom.small``) and supports
    (``sup.space``, same local numbering), and solved by DL8.5's support-rule kernel. The
    similarity bound is not used: a tree optimal on the rows of a sibling under the parent's
    previous feature may break the support rule on these rows.
    """
    perm, ip, fp, bt = state.perm, state.ip, state.fp, state.bt
    xs = bottom.small
    K = ctl[C_K]
    penalty = fctl[F_PENALTY]
    min_support = ctl[C_SUPPORT]
    a = _cut_level(p, _split_lower(p, fp), ip, fp, fctl[F_INCUMBENT])
    if a != 0:
        ctl[C_CUTS] += 1
        _finalize(p, a, ip)
        return
    rows = perm[d, ip[p, START] : ip[p, END]]
    off = _bt_offset(p, d, K)
    ctl[C_SOLVE] += 1
    if K - d == 1:
        e, f = _solve_depth1_support(rows, data, ctl, scr, sup, penalty, min_support)
        gl = gr = -1
    else:
        aq, work = make_space(rows, data, scr, xs)
        ctl[C_XKEY] = -1
        ctl[C_WORK] += work + make_space(rows, sup.data, sup.scr, sup.space)[1] + aq * aq
        e, i, il, ir = eval_pairs_support(
            xs, sup.space, aq, rows.shape[0], min_support, penalty, scr
        )
        f = xs.act[i] if i >= 0 else -1
        gl = xs.act[il] if il >= 0 else -1
        gr = xs.act[ir] if ir >= 0 else -1
    if e < fp[p, BEST]:
        fp[p, BEST] = e
        bt[off + 1] = f
        if K - d == 2:
            bt[off + 2] = gl
            bt[off + 3] = gr
    _finalize(p, 0, ip)


@njit(cache=True, inline="always")
def _child_value(c, ip, fp):
    return fp[c, TMP] if ip[c, INDEC] else fp[c, BEST]


@njit(cache=True, inline="always")
def _current_value(ip, fp, stk, ctl):
    """Cost of the best tree that combines the current tree with the bests found so far.

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
    """Write the tree whose cost :func:`_current_value` computed into ``inc``."""
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
            a = _cut_level(p, _split_lower(p, fp), ip, fp, fctl[F_INCUMBENT])
            if a == 0:
                _enqueue(p, stk, ctl, P)
                return
            ctl[C_CUTS] += 1
        _finalize(p, a, ip)


@njit((DATA_T, STATE_T, I64_T, F64_T, SCRATCH_T, BOTTOM_T, SUPPORT_T, types.int64), cache=True)
def search(data, state, ctl, fctl, scr, bottom, sup, budget):
    """Run Blossom's loop for about ``budget`` units of work; ``DONE`` when proven optimal.

    The paper's Algorithm 1. Buds are expanded first-in first-out until the current tree is
    complete; then the tree is evaluated (one better than ``fctl[F_INCUMBENT]`` becomes the
    incumbent in ``inc`` and sets ``ctl[C_IMPROVED]``) and decisions are popped until one
    still has features to try and is not cut. ``DONE``: the space is exhausted, or the
    incumbent reached the least cost of any tree (``fctl[F_FLOOR]``).
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
                if ctl[C_SUPPORT] > 1:
                    _solve_bottom_support(p, d, data, state, ctl, fctl, scr, bottom, sup)
                else:
                    _solve_bottom(p, d, data, state, ctl, fctl, scr, bottom)
                continue
            if ip[p, PTR] == 0:
                a = _cut_level(p, _split_lower(p, fp), ip, fp, fctl[F_INCUMBENT])
                if a != 0:
                    _finalize(p, a, ip)
                    continue
            if ip[p, PTR] >= ip[p, NDOM]:
                _finalize(p, 0, ip)
                continue
            _expand(p, d, data, state, ctl, fctl, scr, sup)
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
