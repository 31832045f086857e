"""Blossom: anytime minimum-error decision trees of bounded depth.

Demirovic, Hebrard & Jean, "A simple and efficient anytime algorithm for computing optimal
decision trees" (see ``shared/notes/blossom.md``). The search always completes the current
tree before trying an alternative feature anywhere, so a good tree (Gini at the top, optimal
depth-two subtrees at the bottom) is known almost at once and improves until the search
space is exhausted, which proves it optimal. Memory is proportional to the data: one current
tree, no cache.

This module prepares the data (:func:`satdt.dp.common.prepare_binary`: duplicate rows
merged, redundant features dropped), drives the search kernels of
:mod:`satdt.dp._blossom_kernels` in chunks so the deadline is honoured, and turns the
kernels' heap-ordered trees into :class:`satdt.Tree` objects.

A caller that already holds a tree (say a greedy one) passes its error as ``upper_bound``:
the search then prunes with it from the start and reports only strictly better trees; when
it exhausts the space without one, the caller's tree is the proven optimum.

With a leaf penalty P every value (incumbents, bounds, ``upper_bound``) is the cost: the
error plus P per leaf; with a minimum support s a split needs s training rows of positive
weight on each side (see :mod:`satdt.dp._blossom_kernels`).
"""

from __future__ import annotations

import time

import numpy as np

from ..core.errors import honour_interrupt
from ..models.tree import Tree
from ..task.result import SearchResult
from ..task.stats import DPStats
from . import _blossom_kernels as k
from .common import (
    Data,
    PreparedBinary,
    Scratch,
    SearchSettings,
    bound_to_beat,
    check_inputs,
    check_leaf_options,
    new_scratch,
    new_space,
    prepare_binary,
    start_stats,
    tolerance,
)

# Seconds of work per kernel call: short enough to honour a deadline and report incumbents
# promptly, long enough that the Python round trip costs nothing.
_CHUNK_SECONDS = 0.02


def _allocate(
    prep: PreparedBinary, K: int, bound: float, leaf_penalty: float, min_support: int
) -> tuple[k.State, np.ndarray, np.ndarray, Scratch, k.Bottom, k.Support]:
    """State, control arrays and scratch space of one search (sizes: data, positions, depth).

    ``bound`` is the cost a tree must beat to be reported (``inf``: any tree).
    """
    N, M = prep.data.Bd.shape
    C = prep.data.W.shape[1]
    L = max(K - 2, 0)
    P = 1 << (L + 1)
    state = k.State(
        perm=np.zeros((L + 1, N), dtype=np.int32),
        ip=np.zeros((P, k.N_IP), dtype=np.int64),
        fp=np.zeros((P, k.N_FP)),
        dom=np.zeros((P if L > 0 else 1, M), dtype=np.int64),
        bt=np.full((L + 1) << (K + 1), -1, dtype=np.int64),
        stk=np.zeros(2 * P, dtype=np.int64),
        inc=np.full(1 << (K + 1), -1, dtype=np.int64),
    )
    ctl = np.zeros(k.N_CTL, dtype=np.int64)
    ctl[k.C_K] = K
    ctl[k.C_L] = L
    ctl[k.C_SUPPORT] = min_support
    fctl = np.zeros(k.N_FCTL)
    fctl[k.F_INCUMBENT] = bound
    fctl[k.F_FLOOR] = prep.floor + leaf_penalty
    fctl[k.F_PENALTY] = leaf_penalty
    pairs = K >= 2  # pair counts over a local feature index, for the depth-two solver
    bottom = k.Bottom(
        parent=new_space(M, C, pairs=pairs),
        small=new_space(M, C, pairs=pairs),
        large=new_space(M, C, pairs=False),
    )
    support = k.new_support(prep.data, prep.count, min_support)
    return state, ctl, fctl, new_scratch(M, C), bottom, support


def _start(
    data: Data,
    state: k.State,
    ctl: np.ndarray,
    fctl: np.ndarray,
    scr: Scratch,
    support: k.Support,
) -> None:
    """Reset the search: the root holds every row and is the only bud (in NumPy: one kernel
    less to compile)."""
    state.perm[0] = np.arange(state.perm.shape[1], dtype=np.int32)
    state.ip[1, k.START] = 0
    state.ip[1, k.END] = state.perm.shape[1]
    ctl[k.C_SEQ :] = 0
    ctl[k.C_QKEY] = -1
    ctl[k.C_XKEY] = -1
    state.ip[:, k.SIM_STAMP] = -1
    k.init_position(1, 0, 0, -1, data, state, ctl, fctl, scr)
    if ctl[k.C_SUPPORT] > 1:
        k.drop_unsupported(1, 0, state, ctl, support)
    P = state.ip.shape[0]  # the root enters the FIFO of buds (the kernels' _enqueue)
    state.stk[P + ctl[k.C_TAIL] % P] = 1
    ctl[k.C_TAIL] += 1


def _heap_to_tree(
    inc: np.ndarray,
    prep: PreparedBinary,
    B: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    n_classes: int,
) -> Tree:
    """The kernels' heap-ordered tree over reduced features as a Tree over the columns of B.

    Leaves predict the heaviest class of the rows reaching them; a flipped feature swaps its
    children, so that rows with ``B[:, j] == 0`` still go left.
    """
    Bd = prep.data.Bd
    N = Bd.shape[0]
    node = np.ones(N, dtype=np.int64)
    rows = np.arange(N)
    while True:
        f = inc[node]
        active = f >= 0
        if not active.any():
            break
        node[active] = 2 * node[active] + Bd[rows[active], f[active]]
    leaf_weight = np.zeros((len(inc), n_classes))
    np.add.at(leaf_weight, node, prep.data.W)

    def nested(p: int):
        f = int(inc[p])
        if f < 0:
            return int(np.argmax(leaf_weight[p]))
        zero_side, one_side = 2 * p, 2 * p + 1
        if prep.flip[f]:
            zero_side, one_side = one_side, zero_side
        return (int(prep.keep[f]), 0.5, nested(zero_side), nested(one_side))

    tree = Tree.from_nested(nested(1), classes=np.arange(n_classes))
    return tree.with_counts(B, y, w)


def _checked_tree(
    value: float,
    inc: np.ndarray,
    prep: PreparedBinary,
    B,
    y,
    w,
    n_classes,
    leaf_penalty: float,
) -> Tree:
    """Build the tree and check that it really has the cost the search claims (its error
    plus ``leaf_penalty`` per leaf)."""
    tree = _heap_to_tree(inc, prep, B, y, w, n_classes)
    cost = tree.count_error() + leaf_penalty * tree.n_leaves
    if abs(cost - value) > tolerance(w):
        raise RuntimeError(
            f"internal error: the search reports cost {value} but its tree has cost {cost}"
        )
    return tree


def solve_min_error(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    max_depth: int,
    settings: SearchSettings,
) -> SearchResult:
    """Minimum-cost tree of depth at most ``max_depth`` over binary features, by Blossom.

    The cost is the weighted error plus ``settings.leaf_penalty`` per leaf (the error alone
    by default).

    Parameters
    ----------
    B
        ``uint8 (n, m)`` binary features; a node on feature j sends rows with ``B[:, j] == 0``
        left (threshold 0.5).
    y
        Class index of each row, in ``[0, n_classes)``.
    n_classes
        Number of classes; leaves hold class indices.
    max_depth
        Maximum depth (0 gives a single leaf).
    settings
        The rows' weights, the deadline, the recorder (its ``stats`` becomes a
        :class:`satdt.task.stats.DPStats`), the upper bound, the leaf penalty and the minimum
        support (:class:`~satdt.dp.common.SearchSettings`).

    Returns
    -------
    SearchResult
        The recorder's snapshot (values are costs); ``proven_optimal`` when the search space
        was exhausted or the cost reached the least possible one (the irreducible error of the
        data plus one leaf's penalty).

        With ``upper_bound``, exhausting the space proves that no tree of depth at most
        ``max_depth`` has a cost below ``upper_bound`` other than the trees the search
        reported. If it reported none, the result is the caller's tree (the recorder's
        incumbent), marked ``proven_optimal``: the proof holds for that tree because it has
        cost ``upper_bound`` and depth at most ``max_depth``, which the caller vouches for.

    Raises
    ------
    DataError
        On malformed inputs, or when ``upper_bound`` is given but the recorder holds no
        incumbent with at most that cost (the result would have no tree to return).
    """
    B = np.ascontiguousarray(B, dtype=np.uint8)
    y = np.asarray(y, dtype=np.int64)
    w = settings.weights(len(y))
    recorder = settings.recorder
    check_inputs(B, y, w, n_classes, max_depth)
    P, s = check_leaf_options(settings.leaf_penalty, settings.min_support)
    bound = bound_to_beat(settings.upper_bound, recorder, w)
    prep = prepare_binary(B, y, w, n_classes)
    M = prep.data.Bd.shape[1]
    K = int(max_depth)
    stats = start_stats(DPStats, B, prep, recorder)
    W = prep.data.W
    root_leaf = float(W.sum() - W.sum(axis=0).max(initial=0.0)) + P
    if K == 0 or M == 0 or bound <= prep.floor + P:  # a leaf is optimal, or nothing beats bound
        if root_leaf < bound and (K == 0 or M == 0):
            inc = np.full(2, -1, dtype=np.int64)
            tree = _checked_tree(root_leaf, inc, prep, B, y, w, n_classes, P)
            recorder.improve(tree, root_leaf)
        recorder.lower_bound = min(root_leaf, bound)
        return recorder.snapshot(proven_optimal=True)

    run = BlossomRun(prep, K, bound, (B, y, w, n_classes), recorder, stats, P, s)
    run.advance(settings.deadline)
    return run.finish()


class BlossomRun:
    """One Blossom search that can be advanced in slices and resumed (for a portfolio).

    The kernels keep the whole search state in arrays, so a search stopped at a slice's end
    continues where it was. Another search sharing the recorder may find a better tree;
    :meth:`tighten` lowers the bound Blossom prunes with, which keeps its proof valid: when
    the space is exhausted, no tree beats the recorder's incumbent. ``leaf_penalty`` and
    ``min_support`` are those of :func:`solve_min_error` (checked by the caller); ``bound``
    and every value are costs.
    """

    def __init__(
        self,
        prep: PreparedBinary,
        K: int,
        bound: float,
        source,
        recorder,
        stats,
        leaf_penalty: float = 0.0,
        min_support: int = 1,
    ):
        self.prep, self.K, self.source = prep, K, source
        self.recorder, self.stats = recorder, stats
        self.leaf_penalty = float(leaf_penalty)
        self.state, self.ctl, self.fctl, self.scr, self.bottom, self.support = _allocate(
            prep, K, bound, self.leaf_penalty, int(min_support)
        )
        _start(prep.data, self.state, self.ctl, self.fctl, self.scr, self.support)
        self.budget = 20_000
        self.rate = self.budget / _CHUNK_SECONDS  # work per second, until measured
        self.proven = False

    def tighten(self, value: float) -> None:
        """Prune from now on with ``value``, the cost of a tree already on the recorder."""
        if value < self.fctl[k.F_INCUMBENT]:
            self.fctl[k.F_INCUMBENT] = value
            if value <= self.fctl[k.F_FLOOR]:
                self.proven = True

    def advance(self, until: float | None) -> bool:
        """Search until ``until`` (a ``time.perf_counter()`` value) or the end; True if proven."""
        ctl, fctl = self.ctl, self.fctl
        if until is not None:  # a short slice (a portfolio's turn): no chunk sized for a longer one
            chunk = min(_CHUNK_SECONDS, until - time.perf_counter())
            self.budget = int(min(max(self.rate * chunk, 1_000), 1e12))
        while not self.proven:
            honour_interrupt()  # a Ctrl-C that other code swallowed, raised between chunks
            tic = time.perf_counter()
            status = k.search(
                self.prep.data,
                self.state,
                ctl,
                fctl,
                self.scr,
                self.bottom,
                self.support,
                self.budget,
            )
            toc = time.perf_counter()
            if ctl[k.C_IMPROVED]:
                ctl[k.C_IMPROVED] = 0
                value = float(fctl[k.F_INCUMBENT])
                self.recorder.improve(self._checked(value), value)
            if status == k.DONE:
                self.proven = True
                break
            if until is not None and toc >= until:
                break
            self.rate = self.budget / max(toc - tic, 1e-6)
            chunk = _CHUNK_SECONDS if until is None else min(_CHUNK_SECONDS, until - toc)
            self.budget = int(min(max(self.rate * chunk, 1_000), 1e12))
        return self.proven

    def _checked(self, value: float) -> Tree:
        return _checked_tree(value, self.state.inc, self.prep, *self.source, self.leaf_penalty)

    def finish(self) -> SearchResult:
        """The recorder's snapshot, with the root as a leaf if no tree was found yet."""
        recorder, prep = self.recorder, self.prep
        if recorder.best is None:  # stopped before the first complete tree: the root as a leaf
            self.state.inc[:] = -1
            W = prep.data.W
            root_leaf = float(W.sum() - W.sum(axis=0).max(initial=0.0)) + self.leaf_penalty
            recorder.improve(self._checked(root_leaf), root_leaf)
        floor = float(self.fctl[k.F_FLOOR])
        recorder.lower_bound = recorder.best.value if self.proven else floor
        self.fill_stats()
        return recorder.snapshot(proven_optimal=self.proven)

    def fill_stats(self) -> None:
        """Copy the kernels' counters into the statistics."""
        ctl, stats = self.ctl, self.stats
        stats.expansions = int(ctl[k.C_EXPAND])
        stats.bottom_solves = int(ctl[k.C_SOLVE])
        stats.backtracks = int(ctl[k.C_BACKTRACK])
        stats.cuts = int(ctl[k.C_CUTS])
        stats.similarity_cuts = int(ctl[k.C_SIM_CUTS])
        stats.complete_trees = int(ctl[k.C_TREES])
