"""DL8.5's nodes with three levels left, in one kernel (group ``dl85`` of :mod:`.kernels`).

Kiossou, Nijssen & Schaus, "A Generic Complete Anytime Beam Search for Optimal Decision
Tree" (``shared/papers/cadl85-kiossou-nijssen-schaus.txt``), Algorithm 1, lines 13-29, at a
node whose children have two levels left: every split is tried in the kernel, its children
solved by the shared depth-two solver of :mod:`satdt.dp._counts` (the parent's rows counted
once, each feature's smaller child in their space, the larger by subtraction; MurTree's
similarity bound between consecutive features) and cached by their set of rows, so that a
child reached again by another order of the same features is not solved twice. The Python
search (:mod:`satdt.dp._dl85_search`) keeps the levels above, the cache of those nodes and
the anytime trees.

Its own group because it is the slowest kernel to compile (about 5 s): on a first run DL8.5
starts on the counting kernels alone, searching these nodes like the others, and takes the
kernel in once it is compiled (:meth:`satdt.dp._dl85_search.Search._take_three`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, typeof, types

from ._counts import (
    DATA_T,
    F64_T,
    I64_T,
    ROWS_T,
    SCRATCH_T,
    count_in_space,
    eval_pairs_difference_penalised,
    eval_pairs_penalised,
    leaf_error,
    make_space,
    similarity_bound,
    subtract_counts,
)
from .common import new_three_level

THREE_T = typeof(new_three_level(1, 1, 1))

# Indices of ThreeLevel.state
S_CHILD_UB, S_LOWER, S_LAST_F0, S_LAST_V0, S_LAST_F1, S_LAST_V1, S_ACTIVE = range(7)
# Indices of ThreeLevel.stats
T_NODES, T_SOLVES, T_CUTS, T_SIM_CUTS, T_WORK = range(5)


@njit(cache=True, inline="always")
def _child_bound(tot, irr, ub, penalty, tol):
    """A child with two levels left before any count, as DL8.5's ``node`` starts it:
    ``(value, 0)`` when its leaf is optimal, ``(lower bound, 1)`` when that bound reaches
    ``ub`` (cut), ``(0, 2)`` when it must be solved."""
    error = leaf_error(tot)
    if error <= irr + penalty + tol:
        return error + penalty, 0
    lb = irr + 2.0 * penalty
    if lb >= ub:
        return lb, 1
    return 0.0, 2


@njit(cache=True, inline="always")
def _solve_child(n_rows, small, a, penalty, scr, three, x, o):
    """The exact depth-two optimum of one child of the current split, from the parent's
    counts and its smaller child's (``small``: this child is the smaller one); its subtree
    goes to ``three.trees[x, o:o + 3]``."""
    qs, xs, lg = three.parent, three.small, three.large
    if small:
        e, i, il, ir, work = eval_pairs_penalised(xs, xs.pairs, n_rows, a, penalty, scr)
    else:
        subtract_counts(lg, qs, xs, a)
        e, i, il, ir, work = eval_pairs_difference_penalised(
            lg, qs.pairs, xs.pairs, n_rows, a, penalty, scr
        )
    three.stats[T_SOLVES] += 1
    three.stats[T_WORK] += work
    act, trees = qs.act, three.trees
    trees[x, o] = act[i] if i >= 0 else -1
    trees[x, o + 1] = act[il] if il >= 0 else -1
    trees[x, o + 2] = act[ir] if ir >= 0 else -1
    return e


@njit(cache=True, inline="always")
def _count_small(small_left, nl, nr, data, a, scr, three):
    """Count the current split's smaller child in the parent's local space (``three.small``)."""
    N = data.Bd.shape[0]
    rows = three.split[:nl] if small_left else three.split[N : N + nr]
    three.stats[T_WORK] += count_in_space(rows, data, three.parent.loc, a, three.small, scr.buf)


@njit(cache=True, inline="always")
def _split_rows(rows, Bd, rirr, f, three):
    """Rows without f to ``split[:nl]``, with f from ``split[N]``:
    ``(nl, nr, irr_l, irr_r, key_l, key_r)``, the keys of the two row sets in the cache."""
    N = Bd.shape[0]
    split, zobrist = three.split, three.zobrist
    nl = 0
    nr = 0
    irr_l = 0.0
    irr_r = 0.0
    key_l = 0
    key_r = 0
    for u in rows:
        if Bd[u, f] != 0:
            split[N + nr] = u
            nr += 1
            irr_r += rirr[u]
            key_r += zobrist[u]
        else:
            split[nl] = u
            nl += 1
            irr_l += rirr[u]
            key_l += zobrist[u]
    return nl, nr, irr_l, irr_r, key_l, key_r


@njit(cache=True, inline="always")
def _cached(three, key, rows):
    """The cache's entry for this set of rows (ascending), or -1; an empty slot's index as
    ``-2 - slot``."""
    slots, pool = three.slots, three.pool
    mask = slots.shape[0] - 1
    s = key & mask
    n = rows.shape[0]
    while True:
        e = slots[s] - 1
        if e < 0:
            return -2 - s
        if three.keys[e] == key and three.lens[e] == n:
            at = three.starts[e]
            same = True
            for t in range(n):
                if pool[at + t] != rows[t]:
                    same = False
                    break
            if same:
                return e
        s = (s + 1) & mask


@njit(cache=True, inline="always")
def _peer_cached(peers, key, rows):
    """A child solved by another worker of the proof: ``(worker, entry)``, or ``(-1, -1)``.

    Worker ``w``'s table is read up to ``peers.limit[w]`` entries, those it said were complete
    (under a lock, before this search read the count): a slot naming a later entry is
    skipped, and an empty slot (or one written since, not seen yet) ends the look-up, a miss.
    """
    pool = peers.pool
    n = rows.shape[0]
    for w in range(peers.limit.shape[0]):
        limit = peers.limit[w]
        if limit <= 0:  # this search's own table, or nothing complete yet
            continue
        mask = peers.slots.shape[1] - 1
        s = key & mask
        while True:
            e = peers.slots[w, s] - 1
            if e < 0:
                break
            if e < limit and peers.keys[w, e] == key and peers.lens[w, e] == n:
                at = peers.starts[w, e]
                same = True
                for t in range(n):
                    if pool[w, at + t] != rows[t]:
                        same = False
                        break
                if same:
                    return w, e
            s = (s + 1) & mask
    return -1, -1


@njit(cache=True, inline="always")
def _from_peer(three, w, e, x, o):
    """Another worker's cached child: its optimum, its subtree to ``three.trees[x, o:o + 3]``."""
    three.fill[2] += 1
    peers = three.peers
    for t in range(3):
        three.trees[x, o + t] = peers.subtrees[w, e, t]
    return peers.values[w, e]


@njit(cache=True, inline="always")
def _from_cache(three, e, x, o):
    """A cached child's optimum, its subtree to ``three.trees[x, o:o + 3]``."""
    three.fill[2] += 1
    for t in range(3):
        three.trees[x, o + t] = three.subtrees[e, t]
    return three.values[e]


@njit(cache=True, inline="always")
def _store_child(three, slot, key, rows, value, x, o):
    """Cache a child just solved (in the empty ``slot`` its lookup found) while there is room."""
    fill = three.fill
    new = fill[0]
    n = rows.shape[0]
    if new >= three.keys.shape[0] or fill[1] + n > three.pool.shape[0]:
        fill[3] = 1
        return
    three.slots[slot] = new + 1
    three.keys[new] = key
    three.values[new] = value
    three.starts[new] = fill[1]
    three.lens[new] = n
    for t in range(n):
        three.pool[fill[1] + t] = rows[t]
    for t in range(3):
        three.subtrees[new, t] = three.trees[x, o + t]
    fill[0] += 1
    fill[1] += n


@njit(cache=True, inline="always")
def _child_lower(leaf, irr, penalty):
    """What a child costs at least: its irreducible error and a leaf; with a penalty, two
    leaves unless its leaf is optimal."""
    lb = irr + penalty
    if penalty > 0:
        lb = max(lb, min(leaf + penalty, irr + 2.0 * penalty))
    return lb


@njit(cache=True, inline="always")
def _similar(three, a, f, side, lb):
    """``lb`` raised by MurTree's similarity bound from the child solved last on ``side``."""
    st = three.state
    g = int(st[S_LAST_F0 + 2 * side])
    if g >= 0 and g != f:
        lb = max(lb, similarity_bound(st[S_LAST_V0 + 2 * side], three.parent, a, g, f, side))
    return lb


@njit(
    (ROWS_T, DATA_T, I64_T, F64_T, types.int64, types.int64, types.float64, types.float64,
     SCRATCH_T, THREE_T),
    cache=True,
)  # fmt: skip
def depth3_splits(rows, data, feats, flb, start, budget, penalty, tol, scr, three):  # noqa: C901 — Numba innermost loop of a three-level node: splitting it costs speed
    """The splits of a DL8.5 node with three levels left (Algorithm 1, lines 13-29), in order.

    ``feats`` are the features to try (heuristic order), ``flb`` a lower bound on each split's
    cost (raised here to what each split was found to cost or be worth at least); the node's
    bound ``child_ub`` and lower bound are ``three.state``'s, and an improving split lowers the
    bound and goes to ``three.best``. Each split's children (two levels left) are treated as
    :meth:`Search.node` treats them, without the cache: a leaf that is optimal, a child cut
    by its irreducible error or by MurTree's similarity bound from the child solved last on
    that side, else its exact depth-two optimum, the parent's rows counted once and each
    feature's smaller child counted in their space, the larger by subtraction. The left child
    is bounded by ``child_ub`` less the right child's lower bound, the right child by
    ``child_ub`` less the left child's cost.

    Resumable: starts at candidate ``start`` (0 counts the parent's rows) and returns
    ``(next candidate, bounded)`` once about ``budget`` work is done, all candidates are
    tried, or the node's lower bound reaches its bound (``bounded``).
    """
    qs = three.parent
    st, stats, trees, found, best = three.state, three.stats, three.trees, three.found, three.best
    Bd, rirr, split = data.Bd, data.rirr, three.split
    N = Bd.shape[0]
    C = qs.tot.shape[0]
    if start == 0:
        a, work = make_space(rows, data, scr, qs)
        stats[T_WORK] += work
        st[S_ACTIVE] = a
        st[S_LAST_F0] = -1.0
        st[S_LAST_F1] = -1.0
    a = int(st[S_ACTIVE])
    tot_l = np.empty(C)
    tot_r = np.empty(C)
    child_ub = st[S_CHILD_UB]
    lb = st[S_LOWER]
    until = stats[T_WORK] + budget
    x = start
    bounded = False
    while x < feats.shape[0] and (x == start or stats[T_WORK] < until):
        if lb >= child_ub - tol:
            bounded = True
            break
        found[x] = 0
        if flb[x] >= child_ub:
            x += 1
            continue
        f = feats[x]
        nl, nr, irr_l, irr_r, key_l, key_r = _split_rows(rows, Bd, rirr, f, three)
        stats[T_WORK] += rows.shape[0]
        i = qs.loc[f]
        for c in range(C):
            tot_r[c] = qs.single[i, c]
            tot_l[c] = qs.tot[c] - tot_r[c]
        lb_l = _child_lower(leaf_error(tot_l), irr_l, penalty)
        lb_r = _child_lower(leaf_error(tot_r), irr_r, penalty)
        if lb_l + lb_r < child_ub:
            lb_l = _similar(three, a, f, 0, lb_l)
            lb_r = _similar(three, a, f, 1, lb_r)
            if lb_l + lb_r >= child_ub:
                stats[T_SIM_CUTS] += 1
        if lb_l + lb_r >= child_ub:
            stats[T_CUTS] += 1
            flb[x] = max(flb[x], lb_l + lb_r)
            x += 1
            continue
        small_left = nl <= nr
        counted = False
        for o in range(6):
            trees[x, o] = -1
        stats[T_NODES] += 1
        lv, status = _child_bound(tot_l, irr_l, child_ub - lb_r, penalty, tol)
        if status == 2:
            e = _cached(three, key_l, split[:nl])
            if e >= 0:
                lv = _from_cache(three, e, x, 0)
            else:
                w, pe = _peer_cached(three.peers, key_l, split[:nl])
                if pe >= 0:
                    lv = _from_peer(three, w, pe, x, 0)
                else:
                    _count_small(small_left, nl, nr, data, a, scr, three)
                    counted = True
                    lv = _solve_child(nl, small_left, a, penalty, scr, three, x, 0)
                    _store_child(three, -2 - e, key_l, split[:nl], lv, x, 0)
        elif status == 1:
            stats[T_CUTS] += 1
        st[S_LAST_F0] = f
        st[S_LAST_V0] = lv
        if lv >= child_ub - lb_r:  # no left tree below its bound: the split cannot win
            flb[x] = max(flb[x], lv + lb_r)
            x += 1
            continue
        stats[T_NODES] += 1
        ub_r = child_ub - lv
        rv, status = _child_bound(tot_r, irr_r, ub_r, penalty, tol)
        if status == 2:
            right = split[N : N + nr]
            e = _cached(three, key_r, right)
            if e >= 0:
                rv = _from_cache(three, e, x, 3)
            else:
                w, pe = _peer_cached(three.peers, key_r, right)
                if pe >= 0:
                    rv = _from_peer(three, w, pe, x, 3)
                else:
                    if not counted:
                        _count_small(small_left, nl, nr, data, a, scr, three)
                    rv = _solve_child(nr, not small_left, a, penalty, scr, three, x, 3)
                    _store_child(three, -2 - e, key_r, right, rv, x, 3)
        elif status == 1:
            stats[T_CUTS] += 1
        st[S_LAST_F1] = f
        st[S_LAST_V1] = rv
        flb[x] = max(flb[x], lv + rv)
        if rv < ub_r:  # lv + rv < child_ub: a better split
            found[x] = 1
            child_ub = lv + rv
            best[0] = f
            for o in range(6):
                best[1 + o] = trees[x, o]
        x += 1
    st[S_CHILD_UB] = child_ub
    return x, bounded
