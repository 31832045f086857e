"""The node budget search's depth-two kernel: the best trees of depth at most two with 0, 1,
2 and 3 branching nodes at once, from one pair table (MurTree's depth-two solver with the size
dimension; :mod:`satdt.dp.budget` drives it).

The table is a counted :class:`~satdt.dp.common.Space` of the shared counting kernels
(:mod:`satdt.dp._counts`) over ``Q = C + 1`` columns: the ``C`` class weights, then the count
of training rows (for the minimum support). ``pairs[(i * a + j) * Q + q]`` (``i < j``) holds
the rows having both local features i and j; a child counted in its parent's space is the
parent's table minus the other child's (``sign = 1``: ``pa - pb``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, typeof, types

from ._counts import (
    DATA_T,
    F64_2D_T,
    F64_T,
    I64_T,
    ROWS_T,
    SCRATCH_T,
    count_in_space,
    make_space,
)
from .common import new_budget_work

I64_2D_T = types.int64[:, ::1]


@njit(cache=True, inline="always")
def _leaf(x, C, penalty):
    """A leaf's cost over the class weights ``x[:C]``: weight less the heaviest class, plus
    the penalty."""
    total = 0.0
    top = 0.0
    for c in range(C):
        total += x[c]
        if x[c] > top:
            top = x[c]
    return total - top + penalty


@njit((F64_T, I64_2D_T), cache=True)
def at_most(cost, choice):
    """At most k branching nodes: where ``cost[k]`` is no better than ``cost[k - 1]``, the
    smaller budget's tree."""
    for k in range(1, cost.shape[0]):
        if cost[k] >= cost[k - 1]:
            cost[k] = cost[k - 1]
            for t in range(3):
                choice[k, t] = choice[k - 1, t]


@njit((F64_T, I64_2D_T, types.int64, F64_T, F64_T), cache=True)
def convolve(cost, choice, f, zero, one):
    """Improve ``cost[k]`` (k >= 1) with the split on feature ``f`` whose sides have the
    cost vectors ``zero`` and ``one``: the min-plus convolution over k_zero + k_one = k - 1
    (MurTree's recursion with the size dimension)."""
    width = cost.shape[0]
    for k_zero in range(zero.shape[0]):
        for k_one in range(min(one.shape[0], width - 1 - k_zero)):
            value = zero[k_zero] + one[k_one]
            k = k_zero + k_one + 1
            if value < cost[k]:
                cost[k] = value
                choice[k, 0] = f
                choice[k, 1] = k_zero
                choice[k, 2] = k_one


@njit((F64_T, F64_T, F64_T), cache=True)
def child_target(target, other, out):
    """The bound a child must beat for its split to improve ``target`` (the parent's
    incumbent costs, or its own bound where lower, per budget k): ``out[k_child]`` is the
    largest ``target[k_child + k_other + 1] - other[k_other]`` over the sibling's budgets
    (``other``: lower bounds on the sibling's costs), -inf where no budget fits. MurTree's
    upper bound of a child (Demirovic et al., JMLR 2022, Algorithm 2) per node count."""
    width = target.shape[0]
    for k_child in range(out.shape[0]):
        best = -np.inf
        for k_other in range(min(other.shape[0], width - 1 - k_child)):
            value = target[k_child + k_other + 1] - other[k_other]
            if value > best:
                best = value
        out[k_child] = best


# A vector of costs, cost[k] for at most k branching nodes, comes with a choice per entry:
# choice[k] = (f, k_zero, k_one), the root feature and its sides' budgets (f = -1: a leaf); a
# depth-two choice is (f, -g_left - 2, -g_right - 2), its children's features (-1: a leaf).
@njit(
    (F64_T, F64_T, types.float64, F64_2D_T, F64_T, I64_T, F64_T, F64_T, I64_2D_T, F64_2D_T),
    cache=True,
)
def depth_two_budget(pa, pb, sign, single, tot, act, params, cost, choice, work):  # noqa: C901
    """Fill ``cost[0..3]`` and ``choice[0..3]`` with the best trees of depth at most two
    over the ``a = len(act)`` local features (``act``: the feature behind each) with at most
    0, 1, 2, 3 branching nodes (each entry at most the previous). ``params``: leaf penalty,
    minimum support. ``single[i]``: the rows having feature i; ``tot``: all the rows.
    ``work``: a (Q,) row of scratch (its first).

    The root f sends the rows having f right; its right child g splits them into those
    having g and the rest, its left child g the rows without f likewise. Each unordered
    pair {i, j} is read once: its four quadrants give the right and left children of both
    roots i and j. Innermost loops over pairs of features and classes: above the complexity
    limit as one kernel, so that the quadrants are computed once.
    """
    Q = tot.shape[0]
    C = Q - 1
    a = act.shape[0]
    penalty = params[0]
    support = params[1]
    # local features while searching: (f, g_left, g_right), -1 for a leaf
    for k in range(4):
        cost[k] = 1e300
        for t in range(3):
            choice[k, t] = -1
    cost[0] = _leaf(tot, C, penalty)
    # per root feature, its best right child (splitting the rows having it) and left child
    best_right = np.full(a, 1e300)
    best_left = np.full(a, 1e300)
    g_right = np.full(a, -1, dtype=np.int64)
    g_left = np.full(a, -1, dtype=np.int64)
    for i in range(a):
        for j in range(i + 1, a):
            # the four quadrants of the pair: having i and j, i only, j only, neither
            k = (i * a + j) * Q
            t11 = t10 = t01 = t00 = 0.0
            m11 = m10 = m01 = m00 = 0.0
            for c in range(C):
                x11 = pa[k + c] - sign * pb[k + c]
                x10 = single[i, c] - x11
                x01 = single[j, c] - x11
                x00 = tot[c] - single[i, c] - single[j, c] + x11
                t11 += x11
                t10 += x10
                t01 += x01
                t00 += x00
                m11 = max(m11, x11)
                m10 = max(m10, x10)
                m01 = max(m01, x01)
                m00 = max(m00, x00)
            n11 = pa[k + C] - sign * pb[k + C]
            n10 = single[i, C] - n11
            n01 = single[j, C] - n11
            n00 = tot[C] - single[i, C] - single[j, C] + n11
            l11 = t11 - m11 + penalty
            l10 = t10 - m10 + penalty
            l01 = t01 - m01 + penalty
            l00 = t00 - m00 + penalty
            ok11, ok10 = n11 >= support, n10 >= support
            ok01, ok00 = n01 >= support, n00 >= support
            if ok11 and ok10 and l11 + l10 < best_right[i]:  # root i, right child j
                best_right[i] = l11 + l10
                g_right[i] = j
            if ok01 and ok00 and l01 + l00 < best_left[i]:  # root i, left child j
                best_left[i] = l01 + l00
                g_left[i] = j
            if ok11 and ok01 and l11 + l01 < best_right[j]:  # root j, right child i
                best_right[j] = l11 + l01
                g_right[j] = i
            if ok10 and ok00 and l10 + l00 < best_left[j]:  # root j, left child i
                best_left[j] = l10 + l00
                g_left[j] = i
    r = work[0]
    for f in range(a):
        for q in range(Q):
            r[q] = tot[q] - single[f, q]
        if single[f, C] < support or r[C] < support:
            continue
        leaf_one = _leaf(single[f], C, penalty)
        leaf_zero = _leaf(r, C, penalty)
        if leaf_zero + leaf_one < cost[1]:
            cost[1] = leaf_zero + leaf_one
            choice[1, 0] = f
            choice[1, 1] = -1
            choice[1, 2] = -1
        right = leaf_zero + best_right[f]
        left = best_left[f] + leaf_one
        if right < cost[2] and right <= left:
            cost[2] = right
            choice[2, 0] = f
            choice[2, 1] = -1
            choice[2, 2] = g_right[f]
        elif left < cost[2]:
            cost[2] = left
            choice[2, 0] = f
            choice[2, 1] = g_left[f]
            choice[2, 2] = -1
        if best_left[f] + best_right[f] < cost[3]:
            cost[3] = best_left[f] + best_right[f]
            choice[3, 0] = f
            choice[3, 1] = g_left[f]
            choice[3, 2] = g_right[f]
    for k in range(4):  # as features, in the form of a choice
        if choice[k, 0] >= 0:
            for t in range(3):
                g = choice[k, t]
                choice[k, t] = act[g] if t == 0 else (-act[g] - 2 if g >= 0 else -1)
    at_most(cost, choice)


@njit(cache=True, inline="always")
def _child_key(path, n_path, lit, zobrist, out):
    """The literals of a child (``path[:n_path]`` ascending, then ``lit``) ascending into
    ``out`` (-1 after them), and their key (the sum of their random numbers)."""
    key = zobrist[lit]
    k = 0
    placed = False
    for t in range(n_path):
        if not placed and lit < path[t]:
            out[k] = lit
            k += 1
            placed = True
        out[k] = path[t]
        key += zobrist[path[t]]
        k += 1
    if not placed:
        out[k] = lit
        k += 1
    for t in range(k, out.shape[0]):
        out[t] = -1
    return key


@njit(cache=True, inline="always")
def _find(work, key, lits):
    """The cache entry of these literals, or -1; the slot where it would go as a second
    value (the table is never full: at most half of its slots are used)."""
    slots = work.slots
    mask = slots.shape[0] - 1
    h = key & mask
    while slots[h] != 0:
        e = slots[h] - 1
        if work.keys[e] == key:
            same = True
            for t in range(lits.shape[0]):
                if work.lits[e, t] != lits[t]:
                    same = False
                    break
            if same:
                return e, h
        h = (h + 1) & mask
    return -1, h


@njit(cache=True, inline="always")
def _store(work, slot, key, lits, cost):
    """Add an entry at ``slot`` unless the cache is full (then ``fill[2] = 1``)."""
    e = work.fill[0]
    if e >= work.keys.shape[0]:
        work.fill[2] = 1
        return
    work.fill[0] = e + 1
    work.slots[slot] = e + 1
    work.keys[e] = key
    for t in range(lits.shape[0]):
        work.lits[e, t] = lits[t]
    for k in range(4):
        work.costs[e, k] = cost[k]


BUDGET_WORK_T = typeof(new_budget_work(1, 1, 2, 1, 1))


@njit(cache=True, inline="always")
def _similarity_floor(parent, a, i, prev, previous, low):
    """MurTree's similarity bound, per budget: raise ``low`` (per side and budget, lower
    bounds on the children's costs of the split on local feature i) to the children's costs
    ``previous`` of the split on ``prev`` less the weight of the rows that child has and
    this one has not (with a minimum support of one: the other child's trees fit this one)."""
    Q = parent.tot.shape[0]
    C = Q - 1
    lo, hi = (i, prev) if i < prev else (prev, i)
    k = (lo * a + hi) * Q
    both = 0.0
    w_i = 0.0
    w_prev = 0.0
    for c in range(C):
        both += parent.pairs[k + c]
        w_i += parent.single[i, c]
        w_prev += parent.single[prev, c]
    gone = (w_i - both, w_prev - both)  # rows without prev having i; with prev lacking i
    for side in range(2):
        for budget in range(low.shape[1]):
            low[side, budget] = max(low[side, budget], previous[side, budget] - gone[side])


@njit(cache=True, inline="always")
def _one_split(parent, a, params, leaves, splits):
    """Per local feature i of a counted node and side (0: without i, 1: with i), the
    child's leaf cost (``leaves[i, side]``) and its best tree of one split
    (``splits[i, side]``, 1e300 if none has the minimum support on both sides), read off the
    node's pair table: with i the bounds of :func:`node_three`'s cut before counting."""
    Q = parent.tot.shape[0]
    C = Q - 1
    penalty = params[0]
    support = params[1]
    x = np.empty((4, Q))  # quadrants: i and j, i only, j only, neither
    for i in range(a):
        for side in range(2):
            splits[i, side] = 1e300
        for q in range(Q):
            x[0, q] = parent.single[i, q]
            x[1, q] = parent.tot[q] - parent.single[i, q]
        leaves[i, 1] = _leaf(x[0], C, penalty)
        leaves[i, 0] = _leaf(x[1], C, penalty)
    for i in range(a):
        for j in range(i + 1, a):
            k = (i * a + j) * Q
            for q in range(Q):
                x[0, q] = parent.pairs[k + q]
                x[1, q] = parent.single[i, q] - x[0, q]
                x[2, q] = parent.single[j, q] - x[0, q]
                x[3, q] = parent.tot[q] - parent.single[i, q] - parent.single[j, q] + x[0, q]
            ok = (x[0, C] >= support, x[1, C] >= support, x[2, C] >= support, x[3, C] >= support)
            cost = (_leaf(x[0], C, penalty), _leaf(x[1], C, penalty), _leaf(x[2], C, penalty),
                    _leaf(x[3], C, penalty))  # fmt: skip
            if ok[0] and ok[1]:  # with i, split on j; with j, split on i
                splits[i, 1] = min(splits[i, 1], cost[0] + cost[1])
            if ok[2] and ok[3]:
                splits[i, 0] = min(splits[i, 0], cost[2] + cost[3])
            if ok[0] and ok[2]:
                splits[j, 1] = min(splits[j, 1], cost[0] + cost[2])
            if ok[1] and ok[3]:
                splits[j, 0] = min(splits[j, 0], cost[1] + cost[3])


@njit(cache=True, inline="always")
def _cannot_improve(low, cost, bound, width):
    """Whether children whose costs are at least ``low`` (per side and budget) improve no
    entry of ``cost`` below ``bound``."""
    for total in range(1, cost.shape[0]):
        for k_zero in range(min(total, width + 1)):
            k_one = total - 1 - k_zero
            if k_one <= width and low[0, k_zero] + low[1, k_one] < min(cost[total], bound[total]):
                return False
    return True


@njit(
    types.UniTuple(types.int64, 3)(
        ROWS_T,
        DATA_T,
        SCRATCH_T,
        BUDGET_WORK_T,
        F64_T,
        I64_T,
        types.int64,
        F64_T,
        F64_T,
        I64_2D_T,
    ),
    cache=True,
)
def node_three(rows, data, scr, work, params, path, n_path, bound, cost, choice):  # noqa: C901
    """A node with three levels left: every feature f that splits ``rows`` with
    ``params[1]`` training rows on each side, its two children of depth two for up to
    ``params[2]`` branching nodes each (:func:`depth_two_budget`), combined into ``cost``
    and ``choice`` (filled beforehand with the leaf) by :func:`convolve`, then
    :func:`at_most`. Only the entries below ``bound`` need be exact (MurTree's upper bound
    per node count; -inf: an entry not needed).

    The rows are counted once in ``work.parent``; per feature the smaller child is counted
    in the parent's features (``work.child``) and the larger one is the difference
    (MurTree's subtraction), unless the cache holds both children: a child is named by the
    literals of its path (``path[:n_path]``, ascending, and ``2 * f + side``; the same path
    in another order reaches the same rows). A split is skipped, uncounted, when its children
    cannot improve an entry of ``cost`` below ``bound`` by lower bounds on their costs per
    budget: their leaves and best single splits, read off the node's pair table, raised
    (with a minimum support of one) by MurTree's similarity bound against the last split
    solved. Returns the splits evaluated, the countings done and the splits skipped by the
    bounds. Above the complexity limit: the loop over the features holds the cache probes,
    the row split and both children, which one kernel call keeps together.
    """
    parent, child, split = work.parent, work.child, work.split
    a, _ = make_space(rows, data, scr, parent)
    Q = parent.tot.shape[0]
    C = Q - 1
    support = params[1]
    width = int(params[2])
    N = split.shape[0] // 2
    act = parent.act[:a]
    L = work.lits.shape[1]
    large_single = np.empty((a, Q))
    large_tot = np.empty(Q)
    costs = np.empty((2, 4))  # per side (0: without f, 1: with f)
    lits = np.empty((2, L), dtype=np.int64)
    keys = np.empty(2, dtype=np.int64)
    slots = np.empty(2, dtype=np.int64)
    bottom = np.empty((4, 3), dtype=np.int64)
    scratch = np.empty((4, Q))
    splits = 0
    countings = 1
    skipped = 0
    prev = -1
    previous = np.empty((2, 4))
    leaves = np.empty((a, 2))
    one_split = np.empty((a, 2))
    _one_split(parent, a, params, leaves, one_split)
    low = np.empty((2, 4))
    for i in range(a):
        f = act[i]
        if parent.single[i, C] < support or parent.tot[C] - parent.single[i, C] < support:
            continue
        for side in range(2):  # a leaf, the best split, then a leaf's penalty at least
            low[side, 0] = leaves[i, side]
            low[side, 1] = min(leaves[i, side], one_split[i, side])
            low[side, 2] = params[0]
            low[side, 3] = params[0]
        if support <= 1 and prev >= 0:
            _similarity_floor(parent, a, i, prev, previous, low)
        if _cannot_improve(low, cost, bound, width):
            skipped += 1
            continue
        splits += 1
        found = 0
        for side in range(2):
            keys[side] = _child_key(path, n_path, 2 * f + side, work.zobrist, lits[side])
            e, slots[side] = _find(work, keys[side], lits[side])
            if e >= 0:
                found += 1
                for k in range(4):
                    costs[side, k] = work.costs[e, k]
        if found == 2:
            work.fill[1] += 2
        else:
            n_one = 0
            n_zero = 0
            for u in rows:
                if data.Bd[u, f]:
                    split[N + n_one] = u
                    n_one += 1
                else:
                    split[n_zero] = u
                    n_zero += 1
            small_side = 1 if n_one <= n_zero else 0
            small = split[N : N + n_one] if small_side == 1 else split[:n_zero]
            count_in_space(small, data, parent.loc, a, child, scr.buf)
            countings += 1
            for j in range(a):
                for q in range(Q):
                    large_single[j, q] = parent.single[j, q] - child.single[j, q]
            for q in range(Q):
                large_tot[q] = parent.tot[q] - child.tot[q]
            depth_two_budget(
                child.pairs, child.pairs, 0.0, child.single, child.tot, act, params,
                costs[small_side], bottom, scratch,
            )  # fmt: skip
            depth_two_budget(
                parent.pairs, child.pairs, 1.0, large_single, large_tot, act, params,
                costs[1 - small_side], bottom, scratch,
            )  # fmt: skip
            for side in range(2):  # the slot found may be taken by the other side's entry
                e, slots[side] = _find(work, keys[side], lits[side])
                if e < 0:
                    _store(work, slots[side], keys[side], lits[side], costs[side])
        convolve(cost, choice, f, costs[0, : width + 1], costs[1, : width + 1])
        prev = i
        for side in range(2):
            for k in range(4):
                previous[side, k] = costs[side, k]
    at_most(cost, choice)
    return splits, countings, skipped
