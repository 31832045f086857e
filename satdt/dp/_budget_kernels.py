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
from numba import njit, types

from ._counts import (
    DATA_T,
    F64_2D_T,
    F64_T,
    I64_T,
    ROWS_T,
    SCRATCH_T,
    SPACE_T,
    count_in_space,
    make_space,
)

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


@njit(
    types.UniTuple(types.int64, 2)(
        ROWS_T, DATA_T, SCRATCH_T, SPACE_T, SPACE_T, ROWS_T, F64_T, F64_T, I64_2D_T
    ),
    cache=True,
)
def node_three(rows, data, scr, parent, child, split, params, cost, choice):
    """A node with three levels left: every feature f that splits ``rows`` with
    ``params[1]`` training rows on each side, its two children solved by
    :func:`depth_two_budget` for up to ``params[2]`` branching nodes each, combined into
    ``cost`` and ``choice`` (filled beforehand with the leaf) by :func:`convolve`, then
    :func:`at_most`. The rows are counted once in ``parent``; per feature the smaller child
    is counted in the parent's features (``child``) and the larger one is the difference
    (MurTree's subtraction); ``split`` (2N) holds the two sides. Returns the splits
    evaluated and the countings done.
    """
    a, _ = make_space(rows, data, scr, parent)
    Q = parent.tot.shape[0]
    C = Q - 1
    support = params[1]
    width = int(params[2])
    N = split.shape[0] // 2
    act = parent.act[:a]
    large_single = np.empty((a, Q))
    large_tot = np.empty(Q)
    small_cost = np.empty(4)
    large_cost = np.empty(4)
    small_choice = np.empty((4, 3), dtype=np.int64)
    large_choice = np.empty((4, 3), dtype=np.int64)
    work = np.empty((4, Q))
    splits = 0
    for i in range(a):
        f = act[i]
        if parent.single[i, C] < support or parent.tot[C] - parent.single[i, C] < support:
            continue
        splits += 1
        n_one = 0
        n_zero = 0
        for u in rows:
            if data.Bd[u, f]:
                split[N + n_one] = u
                n_one += 1
            else:
                split[n_zero] = u
                n_zero += 1
        one_small = n_one <= n_zero
        small = split[N : N + n_one] if one_small else split[:n_zero]
        count_in_space(small, data, parent.loc, a, child, scr.buf)
        for j in range(a):
            for q in range(Q):
                large_single[j, q] = parent.single[j, q] - child.single[j, q]
        for q in range(Q):
            large_tot[q] = parent.tot[q] - child.tot[q]
        depth_two_budget(
            child.pairs, child.pairs, 0.0, child.single, child.tot, act, params,
            small_cost, small_choice, work,
        )  # fmt: skip
        depth_two_budget(
            parent.pairs, child.pairs, 1.0, large_single, large_tot, act, params,
            large_cost, large_choice, work,
        )  # fmt: skip
        if one_small:
            convolve(cost, choice, f, large_cost[: width + 1], small_cost[: width + 1])
        else:
            convolve(cost, choice, f, small_cost[: width + 1], large_cost[: width + 1])
    at_most(cost, choice)
    return splits, splits + 1
