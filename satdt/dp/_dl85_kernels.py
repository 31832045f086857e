"""The Numba kernel of DL8.5's minimum leaf support (:mod:`satdt.dp.dl85`), beyond :mod:`._counts`.

The depth-two solver of :mod:`._counts` tries every split; under DL8.5's minimum support
(Algorithm 1, line 16 of Kiossou, Nijssen & Schaus) a split is allowed only when both of
its sides hold at least ``min_support`` training rows. :func:`eval_pairs_support` is that
solver with the support rule: the class weights of a node's rows come from one
:class:`~._counts.Space`, the supports (training rows merged into each distinct row) from a
second one counted the same way over a one-class copy of the data whose weights are the
row counts, so both share one local feature numbering. A module (and a kernel group) of its
own, so that searches without a minimum support never compile it.
"""

from __future__ import annotations

from numba import njit, types

from ._counts import SCRATCH_T, SPACE_T, leaf_error, quadrant_errors


@njit(
    (SPACE_T, SPACE_T, types.int64, types.int64, types.int64, types.float64, SCRATCH_T),
    cache=True,
)
def eval_pairs_support(space, sup, a, n_rows, min_support, penalty, scr):
    """Best depth-two tree whose every split keeps ``min_support`` rows on each side.

    ``space`` counts the class weights of the node's ``n_rows`` distinct rows over its ``a``
    local features, ``sup`` their supports (one class); ``scr`` is a
    :class:`~._counts.Scratch` (``best_*``, ``arg_*``, ``cand``, ``side`` overwritten).
    Each leaf costs ``penalty`` besides its error (kept out of the pair loop as in
    :func:`~._counts.eval_pairs_penalised`: a side's entry is its cost less ``2 * penalty``).
    Returns ``(cost, i, left i, right i)`` in local indices, -1 = leaf (``left i`` splits
    the rows without feature i, ``right i`` those with it).
    """
    single, tot, n1, pairs = space.single, space.tot, space.n1, space.pairs
    ssingle, spairs = sup.single, sup.pairs
    stot = sup.tot[0]
    C = tot.shape[0]
    best_left, best_right = scr.best_left, scr.best_right
    arg_left, arg_right, cand, side = scr.arg_left, scr.arg_right, scr.cand, scr.side
    n = 0
    for i in range(a):
        if 0 < n1[i] < n_rows:
            cand[n] = i
            n += 1
    for x in range(n):
        i = cand[x]
        for c in range(C):
            side[c] = tot[c] - single[i, c]
        best_left[x] = leaf_error(side) - penalty
        best_right[x] = leaf_error(single[i]) - penalty
        arg_left[x] = -1
        arg_right[x] = -1
    stride = a * C
    for x in range(n):
        i = cand[x]
        si = ssingle[i, 0]
        for z in range(x + 1, n):
            j = cand[z]
            s11 = spairs[i * a + j]
            s10 = si - s11
            s01 = ssingle[j, 0] - s11
            s00 = stot - s11 - s10 - s01
            e11, e10, e01, e00 = quadrant_errors(
                pairs, pairs, False, i * stride + j * C, single, i, j, tot
            )
            if s11 >= min_support and s10 >= min_support and e11 + e10 < best_right[x]:
                best_right[x] = e11 + e10
                arg_right[x] = j
            if s01 >= min_support and s00 >= min_support and e01 + e00 < best_left[x]:
                best_left[x] = e01 + e00
                arg_left[x] = j
            if s11 >= min_support and s01 >= min_support and e11 + e01 < best_right[z]:
                best_right[z] = e11 + e01
                arg_right[z] = i
            if s10 >= min_support and s00 >= min_support and e10 + e00 < best_left[z]:
                best_left[z] = e10 + e00
                arg_left[z] = i
    best = leaf_error(tot) + penalty
    bi = bl = br = -1
    for x in range(n):
        i = cand[x]
        if ssingle[i, 0] < min_support or stot - ssingle[i, 0] < min_support:
            continue
        e = best_left[x] + best_right[x] + 4.0 * penalty
        if e < best:
            best = e
            bi = i
            bl = arg_left[x]
            br = arg_right[x]
    return best, bi, bl, br
