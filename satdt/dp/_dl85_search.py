"""DL8.5's OR-AND search (Algorithm 1; Algorithm 2's ``BeamDL8.5`` under a CA-DL8.5 rule).

Kiossou, Nijssen & Schaus, "A Generic Complete Anytime Beam Search for Optimal Decision
Tree" (``shared/papers/cadl85-kiossou-nijssen-schaus.txt``). A node is a set of rows (the
distinct rows of the prepared data, ascending) with a remaining depth. Its OR choice is a
feature, tried in Gini order (as Blossom does); its AND children are the rows without and
with the feature (Algorithm 1, lines 14-27): the left child gets the node's bound
``child_ub`` minus the right child's lower bound, the right child ``child_ub`` minus the left
child's error (lines 17 and 20), and a better tree lowers ``child_ub`` (line 25). The leaf is
always an option, so a node's result is the best tree of depth at most the remaining depth.

Nodes with two levels left (one, if ``max_depth`` is 1) are solved exactly by the shared
depth-two solver of :mod:`satdt.dp._counts` (with a larger ``min_support``, by its variant
under the support rule in :mod:`satdt.dp._dl85_kernels`, whose kernels load only then; one
level left is then solved in NumPy). The depth-two children of a node with three levels left
are counted in the parent's feature space, the smaller child directly and the larger by
subtraction (Blossom's and MurTree's scheme), in one kernel (:mod:`satdt.dp._dl85_three`); on
a first run, until that kernel is compiled, such a node is searched like the others. Lower
bounds: the irreducible error of a node's rows (rows that agree on every feature but differ in
class; Blossom's bound), raised by any
lower bound the cache (:mod:`satdt.dp._dl85_cache`) holds for the node and, for depth-two
children, by MurTree's similarity bound from the child solved under the previous feature; a
node whose bound reaches its upper bound is not searched, and a node stops once its tree
reaches its bound.

Every value is a *cost*: the weighted error plus the leaf penalty P per leaf. A tree on a
node's rows costs at least its irreducible error plus P, a split at least the irreducible
error plus 2P; so a leaf is optimal once its error is within P of the irreducible error, and
a child whose leaf is not optimal is bounded below by ``min(leaf + P, irreducible + 2P)``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import TimeUp, honour_interrupt
from . import kernels
from ._counts import make_space, node_totals, single_counts, solve_depth1, solve_depth2
from ._dl85_anytime import LEAF, Companion, CompanionProved, path_tree
from ._dl85_cache import BranchCache
from .common import (
    CHILD_ENTRY_BYTES,
    Data,
    PreparedBinary,
    new_scratch,
    new_space,
    new_three_level,
)
from .rules import Rule

# Work units (rows and pair cells visited) per call of the three-level kernel: a few
# milliseconds, so the deadline and a companion's turn are never far.
_THREE_WORK = 2_000_000
# Seconds between two looks at the three-level kernel's group while it compiles (a first run).
_THREE_LOOK = 0.25
# Seconds between two looks at the clock with no deadline and no companion: a Ctrl-C that
# other code swallowed (noted by the command line, see :func:`~satdt.core.errors.on_sigint`)
# is raised there.
_LOOK = 0.05


def _three():
    """The three-level kernel's module (importing it loads, or compiles, group ``dl85``)."""
    from . import _dl85_three

    return _dl85_three


def _entropy(counts: np.ndarray) -> np.ndarray:
    """Weight times entropy (bits) of each row of class weights ``(k, C)``."""
    total = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = counts / total[:, None]
        h = -np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0).sum(axis=1)
    return np.where(total > 0, total * h, 0.0)


class Search(BranchCache):
    """One DL8.5 search over prepared data: the scratch arrays, the counters, the current
    path (for anytime trees) and, inherited, the cache of solved branches."""

    def __init__(
        self,
        prep: PreparedBinary,
        depth: int,
        min_support: int,
        penalty: float,
        max_cache_mb: float,
        deadline: float | None,
        tol: float,
        on_root: Callable[[float, Any], None],
        companion: Companion | None = None,
        sparse: bool = False,
    ) -> None:
        # a quarter of the memory for the three-level kernel's cache of depth-two children
        super().__init__(max_cache_mb * (0.75 if depth >= 3 else 1.0))
        self.prep = prep
        self.data = prep.data
        self.K = depth
        self.min_support = min_support
        self.P = penalty
        self.deadline = deadline
        self.companion = companion
        self.wake = self._next_wake()
        self.tol = tol
        self.on_root = on_root
        # no depth limit: each node's remaining depth is what the leaf penalty allows its rows
        # (:func:`depth_room`) and a tree below its upper bound (:meth:`_reach`), and splits
        # are cut by the leaf-support bound
        self.sparse = sparse
        self.support_cuts = 0
        M = self.data.Bd.shape[1]
        C = self.data.W.shape[1]
        self.scr = new_scratch(M, C)
        self.space = new_space(M, C, pairs=depth >= 2)
        # the work arrays of the nodes with three levels left (one kernel solves their splits);
        # on a first run its group may still be compiling: those nodes are then searched like
        # the others (exact all the same) until it is ready
        self.three = None
        self._three_size = (self.data.Bd.shape[0], M, C, three_cache_bytes(max_cache_mb))
        self._three_look = 0.0 if depth >= 3 else math.inf
        self._take_three()
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
        self.similarity_cuts = 0
        self.frames: list[list[Any]] = []
        self.rule: Rule | None = None
        self.nodes = 0
        self.hits = 0
        self.bottom = 0
        self.cuts = 0
        self.restarts = 0  # CA-DL8.5's restarts completed
        if hasattr(companion, "watch"):  # a companion that schedules by this search's progress
            companion.watch(self)

    def _take_three(self) -> None:
        """Start using the three-level kernel once its group is loaded: at once when it is
        compiled (or cannot compile in the background: then here, now); else, while a
        background process compiles it (or a thread loads it near the deadline), the next
        look is in ``_THREE_LOOK`` seconds."""
        now = time.perf_counter()
        if now < self._three_look:
            return
        from .kernels import kernels_of

        three = kernels_of("dl85").later  # the three-level kernel's group
        if kernels.load_soon(three, self.deadline) or not kernels.request(three):
            _three()
            self.three = self._new_three()
            self._three_look = math.inf
        else:
            self._three_look = now + _THREE_LOOK

    def progress(self) -> float:
        """How much of the search (of the current restart) is done, roughly: the features
        tried at each node on the current path, each feature's subtree an equal share of its
        node's and each child half of its feature's (the first features, searched under the
        loosest bounds, cost more than their share: an underestimate early on)."""
        done, share = 0.0, 1.0
        for frame in self.frames:
            tried, count = frame[8], frame[9]
            done += share * tried / count
            share /= count
            if frame[4] == 1:  # the right child: the left one's half is done
                done += share / 2
            if frame[4] >= 0:
                share /= 2
        return min(done, 1.0)

    def _new_three(self):
        """The three-level kernel's work arrays and cache of children (a worker of a proof
        on several cores shares its cache with the others: :mod:`satdt.dp.root_split`)."""
        return new_three_level(*self._three_size)

    def _next_wake(self) -> float:
        """When ``node`` must next look up: the deadline, the companion's next slice, or in
        :data:`_LOOK` seconds (a Ctrl-C to honour)."""
        every = _LOOK if self.companion is None else self.companion.every
        turn = time.perf_counter() + every
        return turn if self.deadline is None else min(turn, self.deadline)

    def _wake(self) -> None:
        """Between two nodes: a Ctrl-C that other code swallowed (an optional import that
        caught it as an ImportError, say) is raised; the deadline; the companion's turn."""
        honour_interrupt()
        now = time.perf_counter()
        if self.deadline is not None and now >= self.deadline:
            raise TimeUp
        if self.companion is not None and self.companion.pause(now):
            raise CompanionProved
        self.wake = self._next_wake()

    def new_restart(self, rule: Rule | None) -> None:
        """Results pruned by the previous rule are forgotten; exact ones stay (Algorithm 2)."""
        self.rule = rule
        self.frames.clear()
        self._forget_local()

    def node(
        self, rows: np.ndarray, rem: int, depth: int, ub: float, state: float
    ) -> tuple[float, Any, bool]:
        """Algorithm 1's ``DL85-Search`` (Algorithm 2's ``BeamDL8.5`` under a rule).

        Returns ``(value, tree, terminal)``. With a tree, ``value < ub`` is its cost (error
        plus the leaf penalty per leaf); without (``None``), no tree below ``ub`` was found.
        ``terminal``: the rule cut nothing here or below, so a tree is this node's optimum and
        a failure proves ``optimum >= value``.
        """
        if time.perf_counter() >= self.wake:
            self._wake()
        self.nodes += 1
        data = self.data
        P = self.P
        tot = np.empty(data.W.shape[1])
        irr = float(node_totals(rows, data.W, data.rirr, tot))
        error = _leaf(tot)
        leaf = error + P
        # lines 5-6: a leaf is optimal when no split (two leaves, at least the irreducible
        # error) can beat it
        if rem == 0 or error <= irr + P + self.tol:
            return leaf, (LEAF if leaf < ub else None), True
        if self.sparse:  # the depth a tree beating the leaf can have on these rows
            rem = depth_room(error, irr, P, self.tol)
        lb = irr + 2 * P  # every split costs that much, and the leaf more
        if lb >= ub:
            self.cuts += 1
            return lb, None, True
        key = (rem, rows.tobytes())
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
            if rule.stops(error, float(tot.sum())):  # Table 1, purity: a leaf here
                return leaf, (LEAF if leaf < ub else None), False
            local = self.local.get((rem, key[1], state))
            if local is not None and ub <= local[0]:
                self.hits += 1
                value, tree = local[1], local[2]
                return value, (tree if tree is not None and value < ub else None), False
        reach = self._reach(rem, irr, ub)
        if reach <= 2:
            value, tree = self._small(rows, reach, tot, leaf)
            if reach < rem and value >= ub:  # no tree below ub at any depth: only a bound
                self._store(key, False, ub, None)
                return ub, None, True
            self._store(key, True, value, tree)
            return value, (tree if value < ub else None), True
        value, tree, terminal = self._expand(rows, reach, depth, ub, state, tot, leaf, lb, key)
        if terminal:
            if tree is not None:
                self._store(key, True, value, tree)
            else:
                self._store(key, False, value, None)
        else:
            self._store_local(key, state, ub, value, tree)
        return value, tree, terminal

    def _reach(self, rem: int, irr: float, ub: float) -> int:
        """The depth a node is searched to: ``rem``, or with no depth limit, the depth a tree
        costing less than ``ub`` can have when that is less (``irr + L * P < ub`` leaves,
        so depth at most ``ceil((ub - irr) / P) - 2``, :func:`depth_room`'s argument with
        the upper bound for the leaf). A tree found below ``ub`` is then the node's optimum
        over every depth, and none found proves the optimum is at least ``ub``."""
        if not self.sparse or ub == math.inf:
            return rem
        return min(rem, math.ceil((ub - irr + self.tol) / self.P) - 2)

    def _small(self, rows: np.ndarray, rem: int, tot: np.ndarray, leaf: float):
        """The exact optimum ``(cost, tree)`` of a node with one or two levels left (with a
        minimum support, under its rule); ``leaf`` is the cost of its rows as a leaf."""
        if self.min_support <= 1:
            return self._bottom(rows, rem)
        if rem == 1:
            return self._depth1_support(rows, tot, leaf)
        return self._depth2_support(rows)

    def _bottom(self, rows: np.ndarray, rem: int) -> tuple[float, Any]:
        """The exact optimum of a node with one or two levels left (shared kernels)."""
        self.bottom += 1
        P = self.P
        if rem == 1:  # the best split has the least error; it must beat the leaf by P
            e, f, _ = solve_depth1(rows, self.data, self.scr)
            if f < 0:
                return float(e) + P, LEAF
            leaf = _leaf(self.scr.tot) + P
            split = float(e) + 2 * P
            return (split, (int(f), LEAF, LEAF)) if split < leaf else (leaf, LEAF)
        e, f, gl, gr, _ = solve_depth2(rows, self.data, self.scr, self.space, P)
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
            self.space, self.sup_space, a, rows.shape[0], self.min_support, self.P, self.scr
        )
        if i < 0:
            return float(e), LEAF
        act = self.space.act
        left = LEAF if il < 0 else (int(act[il]), LEAF, LEAF)
        right = LEAF if ir < 0 else (int(act[ir]), LEAF, LEAF)
        return float(e), (int(act[i]), left, right)

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

    def _depth1_support(self, rows: np.ndarray, tot: np.ndarray, leaf: float):
        """Best tree of depth at most one under ``min_support`` (line 16's support rule):
        ``(cost, tree)``; ``leaf`` is the cost of the rows as a leaf."""
        self.bottom += 1
        cand, single = self._candidates(rows, tot)
        best = leaf
        tree: Any = LEAF
        if cand.size:
            other = tot[None, :] - single
            err = (single.sum(axis=1) - single.max(axis=1)) + (
                other.sum(axis=1) - other.max(axis=1)
            )
            j = int(np.argmin(err))
            if err[j] + 2 * self.P < best:
                best = float(err[j]) + 2 * self.P
                tree = (int(cand[j]), LEAF, LEAF)
        return best, tree

    def _expand(self, rows, rem, depth, ub, state, tot, leaf, lb, key):
        """Lines 13-29: try each feature, children left then right, under ``child_ub``.

        Under a rule, each node keeps across restarts (``self.partial``) its features in
        heuristic order and what each feature is worth once both its children were terminal:
        its exact error with its tree, or a lower bound. A later restart starts from the best
        feature known exactly (even one the current rule cuts), skips the features whose
        bound cannot beat it, and tries only the features the rule allows (Algorithm 2,
        lines 16-27); the node stays terminal when every feature the rule cut is known not
        to beat its result.
        """
        rule = self.rule
        if rem == 3 and self.three is None:
            self._take_three()
        # the splits of a node with three levels left are tried in one kernel, which bounds
        # them itself; the others are bounded all at once before any is tried
        in_kernel = (
            rem == 3
            and self.three is not None
            and self.min_support <= 1
            and (rule is None or rule.name != "purity")
        )
        record, kept = self._features(rows, tot, key, bound_splits=not in_kernel)
        cand, gaps, single, val, exact, _ = record
        best_tree: Any = LEAF if leaf < ub else None
        child_ub = min(ub, leaf)
        # this node on the current path: its leaf, best so far, feature in progress (see
        # path_tree); frame[4] is -1 between features, 0 while the left child is searched, 1
        # while the right one is; then how many of its features were tried, of how many
        # (:meth:`progress`)
        frame = [leaf, child_ub, best_tree, -1, -1, 0.0, 0.0, None, 0, max(cand.size, 1)]
        self.frames.append(frame)
        if kept:
            child_ub, best_tree = self._best_known(record, frame)
        allowed = None if rule is None else rule.mask(state, depth, gaps, cand.size)
        order = range(cand.size) if allowed is None else np.flatnonzero(allowed & ~exact).tolist()
        terminal = True
        bounded = False
        if in_kernel:
            order = np.arange(cand.size) if allowed is None else np.asarray(order, dtype=np.int64)
            child_ub, best_tree, bounded = self._three_levels(
                rows, record, order, child_ub, best_tree, lb, frame, kept
            )
            order = ()
        # all the node's columns at once when every feature will be tried; one by one under a
        # rule, which usually tries few of them per restart
        column = self.data.Bd[rows] if rule is None and rem > 3 else None
        frame[9] = max(len(order), 1)
        for tried, i in enumerate(order):
            frame[4], frame[8] = -1, tried
            if lb >= child_ub - self.tol:
                bounded = True
                break
            if val[i] >= child_ub:  # cut by its bound, not tried (counted once per record)
                self.cuts += not kept
                continue
            f = int(cand[i])
            gap = 0.0 if gaps is None else float(gaps[i])
            child_state = 0.0 if rule is None else rule.child_state(state, i, gap)
            value, lt, rt, term = self._branch(
                rows, column, f, tot, single[i], rem, depth, child_ub, child_state, frame
            )
            terminal &= term
            if term:
                val[i] = max(val[i], value)
                if rt is not None and kept:
                    self._remember_tree(record, i, (f, lt, rt))
            if rt is not None and value < child_ub:
                child_ub = value
                best_tree = (f, lt, rt)
                frame[1], frame[2], frame[4] = child_ub, best_tree, -1
                self._compose()
        self.frames.pop()
        if not bounded and _cut_may_beat(allowed, exact, val, child_ub):
            terminal = False
        if terminal and kept:
            self._drop_record(key, record)
        if best_tree is not None:
            return child_ub, best_tree, terminal
        return max(ub, lb), None, terminal

    def _features(self, rows, tot, key, bound_splits: bool) -> tuple[tuple[Any, ...], bool]:
        """The node's record of features ``(cand, gaps, single, val, exact, trees)`` and
        whether it is kept across restarts: the kept one if any, else a new one.

        ``cand``: the features in heuristic order (line 15), ``gaps`` their information-gain
        gaps under the ``gain`` rule, ``single`` their class weights on the 1-side, ``val`` a
        lower bound per feature (exact where ``exact``, with its tree in ``trees``): in a new
        record, with ``bound_splits``, what each split costs at least (:meth:`_split_bounds`),
        else 0.
        """
        rule = self.rule
        if rule is not None:
            record = self.partial.get(key)
            if record is not None:
                return record, True
        cand, single = self._candidates(rows, tot)
        gaps = None
        if rule is not None and rule.name == "gain" and cand.size:
            gaps = _gain_gaps(tot, single)
        trees: dict[int, Any] = {}
        val = self._split_bounds(rows, tot, cand, single) if bound_splits else np.zeros(cand.size)
        record = (cand, gaps, single, val, np.zeros(cand.size, dtype=bool), trees)
        return record, rule is not None and self._keep_record(key, record)

    def _best_known(self, record: tuple[Any, ...], frame: list[Any]) -> tuple[float, Any]:
        """A restart starts from the best feature known exactly, if it beats the frame's best:
        the node's ``(child_ub, best_tree)`` after it."""
        _, _, _, val, exact, trees = record
        child_ub, best_tree = frame[1], frame[2]
        if exact.any():
            known = np.flatnonzero(exact)
            k = int(known[np.argmin(val[known])])
            if val[k] < child_ub:
                child_ub = float(val[k])
                best_tree = trees[k]
                frame[1], frame[2] = child_ub, best_tree
                self._compose()
        return child_ub, best_tree

    def _three_levels(self, rows, record, order, child_ub, best_tree, lb, frame, kept):
        """Lines 13-29 at a node with three levels left: the splits ``cand[order]`` tried by one
        kernel (:func:`satdt.dp._counts.depth3_splits`), in slices of about ``_THREE_WORK``
        so that the deadline and a companion keep their turns. Updates the record's bounds
        (and its trees when kept); returns ``(child_ub, best_tree, bounded)``."""
        cand, _, _, val, _, _ = record
        three = self.three
        kernel = _three()
        feats = np.ascontiguousarray(cand[order], dtype=np.int64)
        flb = val[order]
        three.state[kernel.S_CHILD_UB] = child_ub
        three.state[kernel.S_LOWER] = lb
        start, bounded = 0, False
        while start < feats.size and not bounded:
            start, bounded = kernel.depth3_splits(
                rows, self.data, feats, flb, start, _THREE_WORK, self.P, self.tol, self.scr, three
            )
            frame[8], frame[9] = start, max(feats.size, 1)
            if three.state[kernel.S_CHILD_UB] < child_ub:
                child_ub = float(three.state[kernel.S_CHILD_UB])
                best_tree = _three_tree(three.best)
                frame[1], frame[2], frame[4] = child_ub, best_tree, -1
                self._compose()
            if start < feats.size and time.perf_counter() >= self.wake:
                self._wake()
        val[order] = flb
        if kept:
            for x in np.flatnonzero(three.found[:start]):
                row = three.trees[x]
                self._remember_tree(record, int(order[x]), _three_tree(np.r_[feats[x], row]))
        return child_ub, best_tree, bounded

    def three_stats(self) -> None:
        """Fold the three-level kernel's counters into the search's."""
        if self.three is not None:
            kernel = _three()
            counts = self.three.stats
            self.nodes += int(counts[kernel.T_NODES])
            self.bottom += int(counts[kernel.T_SOLVES])
            self.cuts += int(counts[kernel.T_CUTS])
            self.similarity_cuts += int(counts[kernel.T_SIM_CUTS])
            counts[:] = 0
            fill = self.three.fill
            self.hits += int(fill[2])
            fill[2] = 0
            self.full = self.full or bool(fill[3])

    def three_cache_mb(self) -> float:
        """Memory the three-level kernel's cache of children holds."""
        if self.three is None:
            return 0.0
        fill = self.three.fill
        return (float(fill[0]) * CHILD_ENTRY_BYTES + 4.0 * float(fill[1])) / 2**20

    def _split_bounds(
        self, rows: np.ndarray, tot: np.ndarray, cand: np.ndarray, single: np.ndarray
    ) -> np.ndarray:
        """What each candidate's split costs at least, all at once: the bound :meth:`_branch`
        cuts a split by (each child its irreducible error and a leaf; with a penalty, two
        leaves unless its leaf is optimal), so that the splits it would cut are skipped
        without a call each (with a leaf penalty most splits of the upper levels are)."""
        if cand.size == 0:
            return np.zeros(0)
        rirr, P = self.data.rirr[rows], self.P
        irr_r = np.zeros(cand.size)
        if rirr.any():
            irr_r = rirr @ self.data.Bd[np.ix_(rows, cand)]
        irr_l = float(rirr.sum()) - irr_r
        lb_l, lb_r = irr_l + P, irr_r + P
        if P > 0:
            other = tot[None, :] - single
            leaf_l = other.sum(axis=1) - other.max(axis=1, initial=0.0)
            leaf_r = single.sum(axis=1) - single.max(axis=1, initial=0.0)
            lb_l = np.maximum(lb_l, np.minimum(leaf_l + P, irr_l + 2 * P))
            lb_r = np.maximum(lb_r, np.minimum(leaf_r + P, irr_r + 2 * P))
        bounds = lb_l + lb_r
        if self.sparse:
            # OSDT's leaf accurate-support bound: a leaf whose rightly classified rows weigh
            # less than P is in no optimal tree (its split replaced by the sibling's subtree
            # on both sides' rows errs at most that weight more and saves P); a leaf below a
            # child classifies right at most the child's heaviest class
            weak = (single.max(axis=1) < P) | ((tot[None, :] - single).max(axis=1) < P)
            self.support_cuts += int(np.count_nonzero(weak))
            bounds[weak] = math.inf
        return bounds

    def _branch(self, rows, column, f, tot, single, rem, depth, child_ub, child_state, frame):
        """Lines 14-23 for feature ``f`` (class weights ``single`` on its 1-side): the split's
        ``(value, left tree, right tree, terminal)``.

        A child costs at least its irreducible error and one leaf; with a penalty, a child
        whose leaf is not optimal costs at least two leaves; under a three-level node,
        MurTree's similarity bound raises them. A split whose bounds reach ``child_ub`` is cut
        (counted; ``value`` their sum, terminal). Otherwise the left child is searched under
        ``child_ub`` minus the right child's bound, then, when it has a tree, the right child
        under ``child_ub`` minus the left child's cost: ``value`` is the split's cost (a lower
        bound when a tree is ``None``; with no left tree, the left child's bound plus the
        right child's), ``terminal`` whether the children searched were terminal.
        """
        ones = (column[:, f] if column is not None else self.data.Bd[rows, f]) != 0
        left = rows[~ones]
        right = rows[ones]
        rirr, P = self.data.rirr, self.P
        irr_l = float(rirr[left].sum())
        irr_r = float(rirr[right].sum())
        lb_l = irr_l + P
        lb_r = irr_r + P
        if P > 0:
            lb_l = max(lb_l, min(_leaf(tot - single) + P, irr_l + 2 * P))
            lb_r = max(lb_r, min(_leaf(single) + P, irr_r + 2 * P))
        if lb_l + lb_r >= child_ub:
            self.cuts += 1
            return lb_l + lb_r, None, None, True
        frame[3], frame[4] = f, 0
        frame[5] = _leaf(single) + P
        lv, lt, lterm = self.node(left, rem - 1, depth + 1, child_ub - lb_r, child_state)
        if lt is None:
            return lv + lb_r, None, None, lterm
        frame[4], frame[6], frame[7] = 1, lv, lt
        self._compose()
        rv, rt, rterm = self.node(right, rem - 1, depth + 1, child_ub - lv, child_state)
        return lv + rv, lt, rt, lterm and rterm

    def _compose(self) -> None:
        """Report the best complete tree the current path gives (:func:`path_tree`)."""
        value, tree = path_tree(self.frames)
        if tree is not None:
            self.on_root(value, tree)


def depth_room(error: float, irr: float, P: float, tol: float) -> int:
    """The greatest depth a tree can have on rows whose leaf errs ``error`` and whose
    irreducible error is ``irr`` when it costs less than the leaf (``error + P``).

    A tree with L leaves costs at least ``irr + L * P``: rows that agree on every feature
    share a leaf, so the minority of each group is misclassified (the equivalent-points
    bound of Lin et al. 2020, GOSDT, and Hu et al. 2019, OSDT), and each leaf costs P. To
    beat the leaf, ``irr + L * P < error + P``, so ``L < (error - irr) / P + 1`` and the depth
    is at most ``L - 1 = ceil((error - irr) / P) - 1``: OSDT's upper bound on the number of
    leaves (at most 1 / (2λ) on two classes), taken per subproblem as its parent-specific
    form is. A node's optimum over every depth is its optimum at this depth, which depends
    on its rows only, so the cache key (depth, rows) names the subproblem.
    """
    return max(0, math.ceil((error - irr - tol) / P) - 1)


def _three_tree(row: np.ndarray) -> Any:
    """The nested tree of a three-level split: ``row`` is its feature, then each child's
    ``(g, g_left, g_right)``, -1 for a leaf."""

    def child(g: int, gl: int, gr: int) -> Any:
        if g < 0:
            return LEAF
        return (g, LEAF if gl < 0 else (gl, LEAF, LEAF), LEAF if gr < 0 else (gr, LEAF, LEAF))

    r = [int(v) for v in row]
    return (r[0], child(*r[1:4]), child(*r[4:7]))


def three_cache_bytes(max_cache_mb: float) -> float:
    """The bytes of a search's cache cap that its three-level kernel's cache of children
    holds: a quarter."""
    return max_cache_mb * 2**20 / 4


def _leaf(counts: np.ndarray) -> float:
    """The error of rows with class weights ``counts`` as one leaf."""
    return float(counts.sum() - counts.max(initial=0.0))


def _gain_gaps(tot: np.ndarray, single: np.ndarray) -> np.ndarray:
    """Per feature, the gap between the best information gain and its own, per unit weight
    (the ``gain`` rule's measure, Table 1)."""
    other = tot[None, :] - single
    gain = _entropy(tot[None, :])[0] - _entropy(single) - _entropy(other)
    weight = float(tot.sum())
    return (gain.max() - gain) / weight if weight > 0 else np.zeros(single.shape[0])


def _cut_may_beat(allowed, exact: np.ndarray, val: np.ndarray, child_ub: float) -> bool:
    """Whether a feature the rule cut (not known exactly) might beat the node's result."""
    if allowed is None:
        return False
    cut = ~allowed & ~exact
    return bool((val[cut] < child_ub).any())
