"""DL8.5 and CA-DL8.5: minimum-error trees of bounded depth by a cached OR-AND search.

Kiossou, Nijssen & Schaus, "A Generic Complete Anytime Beam Search for Optimal Decision
Tree" (``shared/papers/cadl85-kiossou-nijssen-schaus.txt``): Algorithm 1 is DL8.5 (Aglin,
Nijssen & Schaus 2020), Algorithm 2 is CA-DL8.5, which restarts a rule-pruned DL8.5 and
relaxes the rule between restarts (Table 1 of rules).

The search. A node is a set of rows (the distinct rows of the prepared data, ascending)
with a remaining depth. Its OR choice is a feature, tried in Gini order (as Blossom does);
its AND children are the rows without and with the feature (Algorithm 1, lines 14-27): the
left child gets the node's bound ``child_ub`` minus the right child's lower bound, the right
child ``child_ub`` minus the left child's error (lines 17 and 20), and a better tree lowers
``child_ub`` (line 25). The leaf is always an option, so a node's result is the best tree of
depth at most the remaining depth. Nodes with two levels left (one, if ``max_depth`` is 1)
are solved exactly by the shared depth-two solver of :mod:`satdt.dp._counts` (with a
larger ``min_support``, by its variant under the support rule in
:mod:`satdt.dp._dl85_kernels`, whose kernels load only then; one level left is then solved
in NumPy). The depth-two
children of a node with three levels left are counted in the parent's feature space, the
smaller child directly and the larger by subtraction (Blossom's and MurTree's scheme).
Lower bounds: the irreducible error of a node's rows (rows that agree on every feature but
differ in class; Blossom's bound), raised by any lower bound the cache holds for the node
and, for depth-two children, by MurTree's similarity bound from the child solved under the
previous feature; a node whose bound reaches its upper bound is not searched, and a node
stops once its tree reaches its bound.

The cache (Algorithm 1, lines 9-11 and 28-29). Solved branches are stored under the key
``(remaining depth, the bytes of the node's sorted distinct-row indices)``; a Python dict
compares keys in full, so two row sets whose hashes collide are never confused. An entry is
either the node's *exact* optimum with its tree (reused whatever the later upper bound), or
a *lower bound* from a search that found nothing below its upper bound (reused when a later
call's upper bound is no tighter, the paper's ``ub <= node.ub``). The cache is capped at
``max_cache_mb`` (an estimate of its Python memory: keys, entries and trees): once full it
**stops storing** new entries and keeps the old ones, so branches met again are searched
again. The search stays exact; it only loses time.

CA-DL8.5 (Algorithm 2). A rule prunes features (``discrepancy``: the sum of the positions
of the features chosen on the path, in heuristic order, is at most the limit; ``topk``: the
feature's position is below k; ``topk_star``: below k halved at each level, minimum 1;
``gain``: the sum along the path of the gap between the best information gain and the
chosen feature's is at most the limit) or stops expanding a node (``purity``: a node whose
purity ``1 - error / weight`` reaches the limit becomes a leaf). A node where the rule cut
nothing, in it or below it, is *terminal* (lines 25-27 and 44-45): its result is exact and
goes to the shared cache; other results are kept only for the current restart (keyed also
by the rule's state). A non-terminal node keeps across restarts its feature order and what
each feature proved to be worth (exactly, or a lower bound), so a restart re-expands it
cheaply and uses a feature known exactly even when the rule now cuts it; a node whose
cut features are all known not to beat its result is terminal too. Each restart searches with the incumbent's error as upper bound
(line 8), so it reports only better trees, then the rule is relaxed (line 9) by the step
``relax_step`` times 1 (``monotonic``), 2^r (``exponential``) or the r-th term of the Luby
sequence (``luby``). The restart whose root is terminal proves the incumbent optimal.
Nodes with two levels left are solved exactly under every rule (the depth-two solver sees
every feature), so rules prune only the levels above.

Anytime. Whenever a node on the current path improves (or finishes a left child), the best
complete tree the path gives (:meth:`_Search._compose`: finished subtrees, the rest as
leaves) goes to ``recorder.improve`` if it beats the incumbent; the deadline is checked at
every node (the longest step is one depth-two solve), and on a time-out the best tree is
returned, unproven, with the data's irreducible error as lower bound.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from ..errors import DataError
from ..result import DL85Stats, Recorder, Restart, SearchResult
from ..tree import Tree
from ._counts import (
    count_in_space,
    eval_pairs,
    eval_pairs_difference,
    make_space,
    node_totals,
    similarity_bound,
    single_counts,
    solve_depth1,
    solve_depth2,
)
from .common import (
    Data,
    PreparedBinary,
    bound_to_beat,
    check_inputs,
    new_scratch,
    new_space,
    prepare_binary,
    start_stats,
    tolerance,
)
from .rules import RULES, SCHEDULES, Rule, relaxation

DEFAULT_CACHE_MB = 512
# Estimated bytes of one cache entry besides its key's row bytes (dict slot, tuples, floats).
_ENTRY_BYTES = 200
# Estimated bytes per internal node of a cached tree (a 3-tuple).
_TREE_NODE_BYTES = 72

LEAF = -1  # a leaf in the search's nested trees; an internal node is (feature, left, right)


class _TimeUp(Exception):
    """The deadline passed inside the search (caught by the driver)."""


class _CompanionProved(Exception):
    """The search run alongside (a portfolio's companion) proved the incumbent optimal."""


class Companion(Protocol):
    """A search that runs in slices between DL8.5's nodes and shares the recorder.

    ``every``: seconds of DL8.5 between two calls of ``pause(now)``, which runs the companion
    for its slice and returns True when it proved the recorder's incumbent optimal.
    """

    every: float

    def pause(self, now: float) -> bool: ...


def _entropy(counts: np.ndarray) -> np.ndarray:
    """Weight times entropy (bits) of each row of class weights ``(k, C)``."""
    total = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = counts / total[:, None]
        h = -np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0).sum(axis=1)
    return np.where(total > 0, total * h, 0.0)


class _Search:
    """One DL8.5 search over prepared data: the cache, the scratch arrays, the counters."""

    def __init__(
        self,
        prep: PreparedBinary,
        depth: int,
        min_support: int,
        max_cache_mb: float,
        deadline: float | None,
        tol: float,
        on_root: Callable[[float, Any], None],
        companion: Companion | None = None,
    ) -> None:
        self.prep = prep
        self.data = prep.data
        self.K = depth
        self.min_support = min_support
        self.cap = max_cache_mb * 2**20
        self.deadline = deadline
        self.companion = companion
        self.wake = self._next_wake()
        self.tol = tol
        self.on_root = on_root
        M = self.data.Bd.shape[1]
        C = self.data.W.shape[1]
        self.scr = new_scratch(M, C)
        self.space = new_space(M, C, pairs=depth >= 2)
        # Counts shared by the depth-two children of a node with three levels left (Blossom's
        # scheme): the parent's rows once, the smaller child, the larger one by subtraction.
        self.qs = new_space(M, C, pairs=depth >= 3)
        self.xs = new_space(M, C, pairs=depth >= 3)
        self.lg = new_space(M, C, pairs=False)
        if min_support > 1 and depth >= 2:  # supports counted like a one-class weight
            d = self.data
            self.sup_data = Data(
                Bd=d.Bd,
                W=prep.count.astype(np.float64).reshape(-1, 1),
                pure=np.zeros(d.Bd.shape[0], dtype=np.int64),
                ones_ptr=d.ones_ptr,
                ones=d.ones,
                rirr=np.zeros(d.Bd.shape[0]),
            )
            self.sup_space = new_space(M, 1)
            self.sup_scr = new_scratch(M, 1)
        self.q_on = False
        self.q_rows = np.zeros(0, dtype=np.int32)
        self.q_a = -1
        self.q_key: tuple[int, bytes] | None = None
        self.q_seen = -1
        self.q_children: tuple[np.ndarray, np.ndarray] = (self.q_rows, self.q_rows)
        self.q_small = 0
        self.q_f = -1
        self.q_side = 0
        self.q_counted = False
        self.sim: list[tuple[int, float] | None] = [None, None]
        self.similarity_cuts = 0
        self.frames: list[list[Any]] = []
        self.cache: dict[tuple[int, bytes], tuple[bool, float, Any]] = {}
        self.local: dict[tuple[int, bytes, float], tuple[float, float, Any]] = {}
        self.bytes = 0.0
        self.local_bytes = 0.0
        self.partial: dict[tuple[int, bytes], tuple[Any, ...]] = {}
        self.partial_bytes = 0.0
        self.full = False
        self.rule: Rule | None = None
        self.nodes = 0
        self.hits = 0
        self.bottom = 0
        self.cuts = 0

    def _next_wake(self) -> float | None:
        """When ``node`` must next look up: the deadline, or the companion's next slice."""
        if self.companion is None:
            return self.deadline
        turn = time.perf_counter() + self.companion.every
        return turn if self.deadline is None else min(turn, self.deadline)

    def _wake(self) -> None:
        now = time.perf_counter()
        if self.deadline is not None and now >= self.deadline:
            raise _TimeUp
        if self.companion is not None and self.companion.pause(now):
            raise _CompanionProved
        self.wake = self._next_wake()

    # ------------------------------------------------------------------ cache
    def _room(self, size: float) -> bool:
        if self.bytes + self.local_bytes + self.partial_bytes + size > self.cap:
            self.full = True
            return False
        return True

    def _store(self, key: tuple[int, bytes], exact: bool, value: float, tree: Any) -> None:
        old = self.cache.get(key)
        if old is not None:
            if old[0] or (not exact and old[1] >= value):
                return
            self.cache[key] = (exact, value, tree)  # replaces a weaker lower bound
            return
        size = _ENTRY_BYTES + len(key[1]) + _tree_bytes(tree)
        if self._room(size):
            self.cache[key] = (exact, value, tree)
            self.bytes += size

    def _store_local(self, key, state, ub, value, tree) -> None:
        size = _ENTRY_BYTES + len(key[1]) + _tree_bytes(tree)
        lkey = (key[0], key[1], state)
        if lkey not in self.local and self._room(size):
            self.local_bytes += size
        elif lkey not in self.local:
            return
        self.local[lkey] = (ub, value, tree)

    def new_restart(self, rule: Rule | None) -> None:
        """Results pruned by the previous rule are forgotten; exact ones stay (Algorithm 2)."""
        self.rule = rule
        self.frames.clear()
        self.local.clear()
        self.local_bytes = 0.0

    # ------------------------------------------------------------------ the search
    def node(
        self, rows: np.ndarray, rem: int, depth: int, ub: float, state: float
    ) -> tuple[float, Any, bool]:
        """Algorithm 1's ``DL85-Search`` (Algorithm 2's ``BeamDL8.5`` under a rule).

        Returns ``(value, tree, terminal)``. With a tree, ``value < ub`` is its error; without
        (``None``), no tree below ``ub`` was found. ``terminal``: the rule cut nothing here or
        below, so a tree is this node's optimum and a failure proves ``optimum >= value``.
        """
        if self.wake is not None and time.perf_counter() >= self.wake:
            self._wake()
        self.nodes += 1
        data = self.data
        tot = np.empty(data.W.shape[1])
        irr = float(node_totals(rows, data.W, data.rirr, tot))
        leaf = _leaf(tot)
        if rem == 0 or leaf <= irr + self.tol:  # lines 5-6: a leaf is optimal
            return leaf, (LEAF if leaf < ub else None), True
        if irr >= ub:
            self.cuts += 1
            return irr, None, True
        key = (rem, rows.tobytes())
        lb = irr
        entry = self.cache.get(key)
        if entry is not None:  # lines 9-11: reuse when the bound is no tighter
            exact, value, tree = entry
            if exact:
                self.hits += 1
                return value, (tree if value < ub else None), True
            if value >= ub:
                self.hits += 1
                return value, None, True
            lb = max(lb, value)
        rule = self.rule
        if rule is not None:
            if rule.stops(leaf, float(tot.sum())):  # Table 1, purity: a leaf here
                return leaf, (LEAF if leaf < ub else None), False
            local = self.local.get((rem, key[1], state))
            if local is not None and ub <= local[0]:
                self.hits += 1
                value, tree = local[1], local[2]
                return value, (tree if tree is not None and value < ub else None), False
        if self.min_support <= 1 and (rem <= 2):
            value, tree = self._bottom(rows, rem)
            self._store(key, True, value, tree)
            return value, (tree if value < ub else None), True
        if rem <= 2:
            if rem == 1:
                value, tree = self._depth1_support(rows, tot)
            else:
                value, tree = self._depth2_support(rows)
            self._store(key, True, value, tree)
            return value, (tree if value < ub else None), True
        value, tree, terminal = self._expand(rows, rem, depth, ub, state, tot, leaf, irr, lb, key)
        if terminal:
            if tree is not None:
                self._store(key, True, value, tree)
            else:
                self._store(key, False, value, None)
        else:
            self._store_local(key, state, ub, value, tree)
        return value, tree, terminal

    def _bottom(self, rows: np.ndarray, rem: int) -> tuple[float, Any]:
        """The exact optimum of a node with one or two levels left (shared kernels)."""
        self.bottom += 1
        if rem == 1:
            e, f, _ = solve_depth1(rows, self.data, self.scr)
            return float(e), (LEAF if f < 0 else (int(f), LEAF, LEAF))
        if self.q_on and (self.q_a >= 0 or self.q_seen not in (-1, self.q_f)):
            e, f, gl, gr = self._shared_depth2(rows)
        else:  # the node's first feature: counting its rows once would not pay yet
            if self.q_on:
                self.q_seen = self.q_f
            e, f, gl, gr, _ = solve_depth2(rows, self.data, self.scr, self.space)
        if f < 0:
            return float(e), LEAF
        left = LEAF if gl < 0 else (int(gl), LEAF, LEAF)
        right = LEAF if gr < 0 else (int(gr), LEAF, LEAF)
        return float(e), (int(f), left, right)

    def _depth2_support(self, rows: np.ndarray) -> tuple[float, Any]:
        """Depth-two optimum under ``min_support`` (:mod:`._dl85_kernels`, loaded when used)."""
        from ._dl85_kernels import eval_pairs_support

        self.bottom += 1
        a, _ = make_space(rows, self.data, self.scr, self.space)
        make_space(rows, self.sup_data, self.sup_scr, self.sup_space)
        e, i, il, ir = eval_pairs_support(
            self.space, self.sup_space, a, rows.shape[0], self.min_support, self.scr
        )
        if i < 0:
            return float(e), LEAF
        act = self.space.act
        left = LEAF if il < 0 else (int(act[il]), LEAF, LEAF)
        right = LEAF if ir < 0 else (int(act[ir]), LEAF, LEAF)
        return float(e), (int(act[i]), left, right)

    def _parent_space(self) -> int:
        """Count the rows of the node with three levels left once (its local features)."""
        if self.q_a < 0:
            self.q_a, _ = make_space(self.q_rows, self.data, self.scr, self.qs)
        return self.q_a

    def _shared_depth2(self, rows: np.ndarray) -> tuple[float, int, int, int]:
        """Depth-two optimum of a child of the current three-level node, by subtraction.

        The smaller child of the current feature is counted in the parent's local space; the
        larger child's pair counts are the parent's minus the smaller one's (MurTree's and
        Blossom's scheme), so each feature costs one pass over its smaller child.
        """
        data, scr, qs, xs = self.data, self.scr, self.qs, self.xs
        a = self._parent_space()
        if not self.q_counted:
            small = self.q_children[self.q_small]
            count_in_space(small, data, qs.loc, a, xs, scr.buf)
            self.q_counted = True
        if self.q_side == self.q_small:
            e, i, il, ir, _ = eval_pairs(xs, xs.pairs, rows.shape[0], a, scr)
        else:
            lg = self.lg
            lg.single[:a, :] = qs.single[:a, :] - xs.single[:a, :]
            lg.tot[:] = qs.tot - xs.tot
            lg.n1[:a] = qs.n1[:a] - xs.n1[:a]
            e, i, il, ir, _ = eval_pairs_difference(lg, qs.pairs, xs.pairs, rows.shape[0], a, scr)
        act = qs.act
        f = int(act[i]) if i >= 0 else -1
        gl = int(act[il]) if il >= 0 else -1
        gr = int(act[ir]) if ir >= 0 else -1
        return float(e), f, gl, gr

    def _similarity(self, f: int, side: int) -> float:
        """MurTree's similarity bound on f's ``side`` child from the last child solved there."""
        last = self.sim[side]
        if last is None or last[0] == f or self.q_a < 0:
            return 0.0
        return float(similarity_bound(last[1], self.qs, self.q_a, last[0], f, side))

    def _candidates(self, rows: np.ndarray, tot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Features that split the rows (each side at least ``min_support`` training rows),
        in Gini order, and their class weights on the 1-side (line 15: sorted by a heuristic)."""
        data, scr = self.data, self.scr
        single_counts(rows, data, scr.single, scr.n1)
        n1 = scr.n1
        cand = np.flatnonzero((n1 > 0) & (n1 < rows.shape[0]))
        if self.min_support > 1 and cand.size:
            count = self.prep.count[rows]
            ones = count @ data.Bd[np.ix_(rows, cand)]
            total = int(count.sum())
            ok = (ones >= self.min_support) & (total - ones >= self.min_support)
            cand = cand[ok]
        single = scr.single[cand]
        other = tot[None, :] - single
        w1 = single.sum(axis=1)
        w0 = other.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            gini = np.where(w1 > 0, w1 - (single**2).sum(axis=1) / w1, 0.0) + np.where(
                w0 > 0, w0 - (other**2).sum(axis=1) / w0, 0.0
            )
        order = np.argsort(gini, kind="stable")
        return cand[order], single[order]

    def _depth1_support(self, rows: np.ndarray, tot: np.ndarray) -> tuple[float, Any]:
        """Best tree of depth at most one under ``min_support`` (line 16's support rule)."""
        self.bottom += 1
        cand, single = self._candidates(rows, tot)
        best = float(tot.sum() - tot.max(initial=0.0))
        tree: Any = LEAF
        if cand.size:
            other = tot[None, :] - single
            err = (single.sum(axis=1) - single.max(axis=1)) + (
                other.sum(axis=1) - other.max(axis=1)
            )
            j = int(np.argmin(err))
            if err[j] < best:
                best = float(err[j])
                tree = (int(cand[j]), LEAF, LEAF)
        return best, tree

    def _expand(self, rows, rem, depth, ub, state, tot, leaf, irr, lb, key):
        """Lines 13-29: try each feature, children left then right, under ``child_ub``.

        Under a rule, each node keeps across restarts (``self.partial``) its features in
        heuristic order and what each feature is worth once both its children were terminal:
        its exact error with its tree, or a lower bound. A later restart starts from the best
        feature known exactly (even one the current rule cuts), skips the features whose
        bound cannot beat it, and tries only the features the rule allows (Algorithm 2,
        lines 16-27); the node stays terminal when every feature the rule cut is known not
        to beat its result.
        """
        data = self.data
        rule = self.rule
        rec = self.partial.get(key) if rule is not None else None
        if rec is not None:
            cand, gaps, single, val, exact, trees = rec
        else:
            cand, single = self._candidates(rows, tot)  # line 15: heuristic order
            gaps = None
            if rule is not None and rule.name == "gain" and cand.size:
                other = tot[None, :] - single
                gain = _entropy(tot[None, :])[0] - _entropy(single) - _entropy(other)
                weight = float(tot.sum())
                gaps = (gain.max() - gain) / weight if weight > 0 else np.zeros(cand.size)
            val = np.zeros(cand.size)  # a lower bound (exact where ``exact``) per feature
            exact = np.zeros(cand.size, dtype=bool)
            trees: dict[int, Any] = {}
            if rule is not None:
                size = _ENTRY_BYTES + len(key[1]) + cand.size * 25 + 8 * single.size
                if self._room(size):
                    rec = (cand, gaps, single, val, exact, trees)
                    self.partial[key] = rec
                    self.partial_bytes += size
        n = cand.size
        best_tree: Any = LEAF if leaf < ub else None
        child_ub = min(ub, leaf)
        terminal = True
        # this node on the current path: its leaf, best so far, feature in progress (see
        # _compose); frame[4] is -1 between features, 0 while the left child is searched, 1
        # while the right one is
        frame = [leaf, child_ub, best_tree, -1, -1, 0.0, 0.0, None]
        self.frames.append(frame)
        if rec is not None and exact.any():  # the best feature known exactly, first
            known = np.flatnonzero(exact)
            k = int(known[np.argmin(val[known])])
            if val[k] < child_ub:
                child_ub = float(val[k])
                best_tree = trees[k]
                frame[1], frame[2] = child_ub, best_tree
                self._compose()
        allowed = None if rule is None else rule.mask(state, depth, gaps, n)
        order = range(n) if allowed is None else np.flatnonzero(allowed & ~exact).tolist()
        shared = rem == 3 and self.min_support <= 1
        if shared:
            if self.q_key != key:  # the parent's counts are kept while the node is the same
                self.q_key = key
                self.q_rows = rows
                self.q_a = -1
            self.q_seen = -1
            self.sim = [None, None]
        # all the node's columns at once when every feature will be tried; one by one under a
        # rule, which usually tries few of them per restart
        column = data.Bd[rows] if rule is None else None
        rirr = data.rirr
        bounded = False
        for i in order:
            frame[4] = -1
            if lb >= child_ub - self.tol:
                bounded = True
                break
            if val[i] >= child_ub:
                continue
            f = int(cand[i])
            gap = 0.0 if gaps is None else float(gaps[i])
            child_state = 0.0 if rule is None else rule.child_state(state, i, gap)
            ones = (column[:, f] if column is not None else data.Bd[rows, f]) != 0
            left = rows[~ones]
            right = rows[ones]
            irr_l = float(rirr[left].sum())
            irr_r = float(rirr[right].sum())
            if irr_l + irr_r >= child_ub:
                self.cuts += 1
                val[i] = max(val[i], irr_l + irr_r)
                continue
            if shared:
                lb_l = max(irr_l, self._similarity(f, 0))
                lb_r = max(irr_r, self._similarity(f, 1))
                if lb_l + lb_r >= child_ub:
                    self.cuts += 1
                    self.similarity_cuts += 1
                    val[i] = max(val[i], lb_l + lb_r)
                    continue
                irr_r = lb_r
                self.q_f = f
                self.q_children = (left, right)
                self.q_small = 0 if left.shape[0] <= right.shape[0] else 1
                self.q_counted = False
                self.q_side = 0
                self.q_on = True
            frame[3], frame[4] = f, 0
            frame[5] = _leaf(single[i])
            try:
                lv, lt, lterm = self.node(left, rem - 1, depth + 1, child_ub - irr_r, child_state)
            finally:
                self.q_on = False
            if shared and lterm:
                self.sim[0] = (f, lv)
            terminal &= lterm
            if lt is None:
                if lterm:
                    val[i] = max(val[i], lv + irr_r)
                continue
            frame[4], frame[6], frame[7] = 1, lv, lt
            self._compose()
            if shared:
                self.q_side = 1
                self.q_on = True
            try:
                rv, rt, rterm = self.node(right, rem - 1, depth + 1, child_ub - lv, child_state)
            finally:
                self.q_on = False
            if shared and rterm:
                self.sim[1] = (f, rv)
            terminal &= rterm
            if lterm and rterm:
                val[i] = max(val[i], lv + rv)
                if rt is not None and rec is not None and self._room(_TREE_NODE_BYTES * 8):
                    exact[i] = True
                    trees[i] = (f, lt, rt)
                    self.partial_bytes += _tree_bytes(trees[i])
            if rt is None:
                continue
            e = lv + rv
            if e < child_ub:
                child_ub = e
                best_tree = (f, lt, rt)
                frame[1], frame[2], frame[4] = child_ub, best_tree, -1
                self._compose()
        self.frames.pop()
        if allowed is not None and not bounded:
            cut = ~allowed & ~exact  # features the rule cut that might beat the result
            if (val[cut] < child_ub).any():
                terminal = False
        if terminal and rec is not None:
            del self.partial[key]
            self.partial_bytes -= _ENTRY_BYTES + len(key[1]) + n * 25 + 8 * single.size
            self.partial_bytes -= sum(_tree_bytes(t) for t in trees.values())
        if best_tree is not None:
            return child_ub, best_tree, terminal
        return max(ub, lb), None, terminal

    def _compose(self) -> None:
        """Report the best complete tree the current path gives, if it beats the incumbent.

        Walking the path up from the deepest node being expanded: a node's tree is the best of
        its leaf, its best tree so far, and its feature in progress with the tree below (the
        left child's tree and the right rows as a leaf, or the left child's finished tree and
        the right child's tree so far). So DL8.5 reports trees before the root finishes its
        first feature, as Blossom does, and CA-DL8.5 within each restart.
        """
        value, tree = math.inf, None
        for leaf, best, best_tree, f, side, right_leaf, lv, lt in reversed(self.frames):
            v, t = leaf, LEAF
            if best_tree is not None and best < v:
                v, t = best, best_tree
            if side == 0 and tree is not None and value + right_leaf < v:
                v, t = value + right_leaf, (f, tree, LEAF)
            elif side == 1:
                below, sub = (value, tree) if tree is not None else (right_leaf, LEAF)
                if lv + below < v:
                    v, t = lv + below, (f, lt, sub)
            value, tree = v, t
        if tree is not None:
            self.on_root(value, tree)


def _leaf(counts: np.ndarray) -> float:
    return float(counts.sum() - counts.max(initial=0.0))


def _tree_bytes(tree: Any) -> int:
    if tree is None or tree == LEAF:
        return 0
    return _TREE_NODE_BYTES + _tree_bytes(tree[1]) + _tree_bytes(tree[2])


def _to_tree(nested: Any, prep: PreparedBinary, B, y, w, n_classes: int) -> Tree:
    """A search tree over reduced, flipped features as a Tree over the columns of ``B``.

    Leaves predict the heaviest class of the rows reaching them; a flipped feature swaps its
    children so that rows with ``B[:, j] == 0`` go left (threshold 0.5).
    """
    Bd, W = prep.data.Bd, prep.data.W

    def build(t: Any, rows: np.ndarray):
        if t == LEAF:
            return int(np.argmax(W[rows].sum(axis=0))) if rows.size else 0
        f, lt, rt = t
        ones = Bd[rows, f] != 0
        zero_side, one_side = build(lt, rows[~ones]), build(rt, rows[ones])
        if prep.flip[f]:
            zero_side, one_side = one_side, zero_side
        return (int(prep.keep[f]), 0.5, zero_side, one_side)

    rows = np.arange(Bd.shape[0])
    tree = Tree.from_nested(build(nested, rows), classes=np.arange(n_classes))
    return tree.with_counts(B, y, w)


def _positive(name: str, value: Any, default: float) -> float:
    if value is None or value == "auto":
        return default
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise DataError(f"{name} must be a positive number or 'auto', got {value!r}")
    if not value > 0:
        raise DataError(f"{name} must be positive, got {value!r}")
    return float(value)


def solve_min_error(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    max_depth: int,
    *,
    sample_weight: np.ndarray | None = None,
    deadline: float | None = None,
    recorder: Recorder,
    upper_bound: float | None = None,
    min_support: int = 1,
    max_cache_mb: float = DEFAULT_CACHE_MB,
    rule: str | None = None,
    relax: str = "monotonic",
    relax_step: float | None = None,
    prep: PreparedBinary | None = None,
    companion: Companion | None = None,
) -> SearchResult:
    """Minimum-error tree of depth at most ``max_depth`` by DL8.5, or by CA-DL8.5 with ``rule``.

    Parameters
    ----------
    B, y, n_classes, max_depth, sample_weight, deadline, recorder, upper_bound
        As :func:`satdt.dp.blossom.solve_min_error` (``B`` uint8 0/1 features, ``y`` class
        indices, ``deadline`` a ``time.perf_counter()`` value, ``upper_bound`` the error of
        the recorder's incumbent, which the search must beat).
    min_support
        Every leaf holds at least this many training rows (of positive weight): a split is
        tried only when both sides have that many (Algorithm 1, line 16). A single leaf is
        always allowed.
    max_cache_mb
        Cap on the cache of solved branches (estimated MB); when reached the cache stops
        growing and branches not in it are recomputed (the result stays exact).
    rule
        ``None`` for DL8.5; one of :data:`RULES` for CA-DL8.5.
    relax, relax_step
        The relaxation schedule of CA-DL8.5 (:data:`SCHEDULES`) and its step δ: positions
        (default 1) for ``discrepancy`` / ``topk`` / ``topk_star``; gain gap in bits or
        purity (default 0.05) for ``gain`` / ``purity``.
    prep, companion
        For a portfolio (:mod:`satdt.dp.portfolio`): the data already prepared by
        :func:`~satdt.dp.common.prepare_binary` from the same arguments, and a search run in
        slices between this one's nodes that reports to the same recorder. Each restart
        starts from the recorder's incumbent, whoever found it; when the companion proves
        it optimal, so is the result.

    Returns
    -------
    SearchResult
        ``proven_optimal`` when the search (the last restart) cut nothing by its rule and
        finished before the deadline; ``recorder.stats`` is a :class:`DL85Stats`.
    """
    B = np.ascontiguousarray(B, dtype=np.uint8)
    y = np.asarray(y, dtype=np.int64)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    check_inputs(B, y, w, n_classes, max_depth)
    if isinstance(min_support, bool) or not isinstance(min_support, int | np.integer):
        raise DataError(f"min_support must be a positive integer, got {min_support!r}")
    if min_support < 1:
        raise DataError(f"min_support must be >= 1, got {min_support}")
    max_cache_mb = _positive("max_cache_mb", max_cache_mb, DEFAULT_CACHE_MB)
    if rule is not None and rule not in RULES:
        raise DataError(f"rule must be one of {list(RULES)}, got {rule!r}")
    if relax not in SCHEDULES:
        raise DataError(f"relax must be one of {list(SCHEDULES)}, got {relax!r}")
    fractional = rule in ("purity", "gain")
    step = _positive("relax_step", relax_step, 0.05 if fractional else 1.0)
    tol = tolerance(w)
    bound = bound_to_beat(upper_bound, recorder, w)
    if prep is None:
        prep = prepare_binary(B, y, w, n_classes)
    N, M = prep.data.Bd.shape
    K = int(max_depth)
    stats = start_stats(DL85Stats, B, prep, recorder)
    W = prep.data.W
    root_leaf = float(W.sum() - W.sum(axis=0).max(initial=0.0))

    def check(value: float, nested: Any) -> Tree:
        tree = _to_tree(nested, prep, B, y, w, n_classes)
        error = tree.count_error()
        if abs(error - value) > tol:
            raise RuntimeError(
                f"internal error: the search reports error {value} but its tree has error {error}"
            )
        return tree

    incumbent = [bound]

    def to_beat() -> float:
        """The bound a tree must beat: this search's best, or a companion's if lower."""
        best = recorder.best
        if best is not None and best.value - tol < incumbent[0]:
            incumbent[0] = best.value - tol
        return incumbent[0]

    def on_root(value: float, nested: Any) -> None:
        if value < to_beat():
            incumbent[0] = value
            recorder.improve(check(value, nested), value)

    if K == 0 or M == 0 or bound <= prep.floor:
        if root_leaf < bound and (K == 0 or M == 0):
            on_root(root_leaf, LEAF)
        recorder.lower_bound = min(root_leaf, bound)
        return recorder.snapshot(proven_optimal=True)

    search = _Search(prep, K, int(min_support), max_cache_mb, deadline, tol, on_root, companion)
    rows = np.arange(N, dtype=np.int32)
    proven = False
    restart = 0
    try:
        while True:
            active = None
            if rule is not None:
                start = {"discrepancy": 0.0, "topk": 1.0, "topk_star": 1.0, "gain": 0.0}
                base = start.get(rule, 1.0 - root_leaf / max(float(W.sum()), 1e-300) + step)
                active = Rule(rule, base + relaxation(relax, step, restart))
            search.new_restart(active)
            tic = time.perf_counter()
            value, nested, terminal = search.node(rows, K, 0, to_beat(), 0.0)
            if nested is not None:
                on_root(value, nested)
            if rule is not None:
                restart += 1
                recorder.event(
                    Restart(
                        number=restart,
                        rule=rule,
                        limit=active.limit,
                        error=recorder.best.value if recorder.best is not None else math.inf,
                        complete=terminal,
                        time=time.perf_counter() - tic,
                        cache_entries=len(search.cache),
                    )
                )
            if terminal or rule is None:
                proven = terminal
                break
    except _TimeUp:
        pass
    except _CompanionProved:
        proven = True
    finally:  # also on Ctrl-C, where the caller keeps the best tree
        _fill_stats(stats, search, restart)
    if recorder.best is None:  # stopped before the first tree: the root as a leaf
        on_root(root_leaf, LEAF)
    best = recorder.best.value
    recorder.lower_bound = best if proven else min(prep.floor, best)
    return recorder.snapshot(proven_optimal=proven)


def _fill_stats(stats: DL85Stats, search: _Search, restarts: int) -> None:
    stats.expansions = search.nodes
    stats.nodes = search.nodes
    stats.bottom_solves = search.bottom
    stats.cuts = search.cuts
    stats.similarity_cuts = search.similarity_cuts
    stats.cache_hits = search.hits
    stats.cache_entries = len(search.cache)
    stats.cache_mb = (search.bytes + search.local_bytes + search.partial_bytes) / 2**20
    stats.cache_full = search.full
    stats.restarts = restarts
