"""Minimum error under a depth *and* a node budget (MurTree's and STreeD's size dimension).

MurTree (Demirović et al., JMLR 2022) writes the optimal tree with at most ``n`` branching
nodes and depth at most ``d`` over the rows ``D`` as

    T(D, d, n) = min( leaf(D),  min over f, n_l + n_r = n - 1 of T(D_f0, d-1, n_l) + T(D_f1, d-1, n_r) )

(``D_f0``, ``D_f1``: the rows without and with feature f), and solves the subproblems of
depth two for every node count at once from the pair counts of their rows. This module is
that recursion over the binary features of :mod:`satdt.dp.common`:

- a subproblem ``(rows, d)`` is solved for *every* budget ``k = 0 .. min(K, 2^d - 1)`` at once,
  as the vector ``cost[k]`` of the least cost with at most ``k`` branching nodes (non-increasing
  in ``k``), and cached by its set of rows (within half of ``max_cache_mb``; when full, the
  cache is emptied and filled again: still exact);
- a node with ``d >= 4`` levels left combines its children's vectors by a min-plus
  convolution over ``k_0 + k_1 = k - 1`` (:func:`~satdt.dp._budget_kernels.convolve`);
- a node with three levels left runs in one kernel
  (:func:`~satdt.dp._budget_kernels.node_three`): the rows counted once over the features
  that split them (the shared counting kernels of :mod:`satdt.dp._counts`), per feature the
  smaller child counted in the parent's features and the larger one as the difference
  (MurTree's subtraction), each child's best trees with 0, 1, 2 and 3 branching nodes from
  its pair table (:func:`~satdt.dp._budget_kernels.depth_two_budget`), and a cache of those
  children named by the literals of their paths (the other half of ``max_cache_mb``; a set of
  literals fixes the rows, so the cache is exact; it starts small and grows as it fills).

Bounds prune it per budget (MurTree's upper bounds per node count, Algorithm 2): a subproblem
is solved *below a bound vector* ``need``: the entries with ``cost[k] < need[k]`` are exact,
the others are ``need[k]``, proven reached (so every entry is a lower bound; -inf: not needed;
the cache keeps the bound each answer was solved below, and solves again when asked for more).
The root needs only its full budget, below the incumbent; a node solves each child below what
it must beat at each budget given the other's lower bounds
(:func:`~satdt.dp._budget_kernels.child_target`), both children's budgets up to two first
(those of depth two: one pair table), then the larger ones; a subproblem that needs only
budgets up to ``k`` below its depth is that of depth ``k`` (a tree with ``k`` branching nodes
is at most ``k`` deep); the three-level kernel skips the splits whose children cannot beat its
bound by their leaves and best single splits, raised by the similarity bound. A combination
that uses an entry that is only a bound is at least the bound it was asked to beat, so the
exact entries stay exact.

satdt counts every node (``max_nodes``: branching nodes + leaves); a binary tree with ``k``
branching nodes has ``2k + 1`` nodes, so the budget is ``K = (max_nodes - 1) // 2`` branching
nodes. The cost is the weighted error plus ``leaf_penalty`` per leaf (a tree with ``k``
branching nodes has ``k + 1`` leaves: the penalty rides on each leaf's cost) and a split needs
``min_support`` training rows of positive weight on each side, as in the other searches.

Anytime: the search deepens ``d = 1, 2, ..., min(max_depth, K)`` (a tree with K branching
nodes is at most K deep; the caches carry over, so the shallower passes cost little) and
records the optimum of each depth as an incumbent (the first, of depth one, comes at once);
the deadline is checked before every node with three or more levels left, and stops the
search with the best tree so far.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import ParameterError, TimeUp
from ..models.tree import Tree
from ..task.result import SearchResult
from ..task.stats import BudgetStats
from ._budget_kernels import child_target, convolve, depth_two_budget, node_three
from ._counts import make_space
from .common import (
    PreparedBinary,
    SearchSettings,
    bound_to_beat,
    budget_entry_bytes,
    check_inputs,
    check_leaf_options,
    empty_budget_cache,
    new_budget_work,
    new_scratch,
    prepare_binary,
    start_stats,
    tolerance,
)

# A subproblem's answer: its cost vector (cost[k]: the least cost with at most k branching
# nodes where below the bound it was solved for, else that bound, a lower bound) and its
# choices, int64 (k + 1, 3) (see satdt.dp._budget_kernels).
Solved = tuple[np.ndarray, np.ndarray]
# Bytes a cached subproblem costs besides its rows (its arrays, the dict's entry).
_ENTRY_BYTES = 300
# Entries of the first cache of children (it grows as it fills, within max_cache_mb).
_FIRST_ENTRIES = 1 << 12


@dataclass(frozen=True)
class BudgetOptions:
    """The node budget search's own options.

    Attributes
    ----------
    max_nodes
        The most nodes (branching nodes + leaves) of a tree, >= 1; None: no cap (the
        perfect tree of the depth).
    max_cache_mb
        Cap in MB on the cache of solved subproblems.
    """

    max_nodes: int | None
    max_cache_mb: float = 512.0

    def __post_init__(self) -> None:
        if self.max_nodes is None:
            return
        if isinstance(self.max_nodes, bool) or not isinstance(self.max_nodes, int | np.integer):
            raise ParameterError(f"max_nodes must be an integer >= 1, got {self.max_nodes!r}")
        if self.max_nodes < 1:
            raise ParameterError(
                f"max_nodes must be >= 1 (a single leaf is one node), got {self.max_nodes}"
            )


def branching_budget(max_nodes: int | None, max_depth: int) -> int:
    """The most branching nodes of a tree within ``max_nodes`` nodes (None: no cap) and
    depth ``max_depth``: ``(max_nodes - 1) // 2`` (a tree with k branching nodes has 2k + 1
    nodes), at most the ``2^max_depth - 1`` of the perfect tree."""
    perfect = (1 << min(max_depth, 62)) - 1
    return perfect if max_nodes is None else min((max_nodes - 1) // 2, perfect)


class _Search:
    """The recursion over one prepared data set: cached vectors, the deadline, the stats."""

    def __init__(
        self,
        prep: PreparedBinary,
        K: int,
        depth: int,
        penalty: float,
        support: int,
        deadline: float | None,
        cache_bytes: float,
        stats: BudgetStats,
    ) -> None:
        data = prep.data
        self.Bd = data.Bd
        # class weights, then the count of training rows (of positive weight) as a last
        # column: the counting kernels count both, for the error and for the support (no
        # row has a single column then: pure = -1)
        self.Wc = np.ascontiguousarray(np.column_stack([data.W, prep.count.astype(np.float64)]))
        self.counted = data._replace(W=self.Wc, pure=np.full(len(self.Wc), -1, dtype=np.int64))
        M, Q = data.Bd.shape[1], self.Wc.shape[1]
        self.scratch = new_scratch(M, Q)
        # half of the memory for the children of the nodes with three levels left, in a
        # table that starts small and grows (emptied) by four each time it fills
        self.literals = depth
        self.max_entries = max(1, int(cache_bytes / 2 / budget_entry_bytes(depth)))
        entries = min(self.max_entries, _FIRST_ENTRIES)
        self.work = new_budget_work(len(self.Wc), M, Q, depth, entries)
        self.child_hits = 0
        self.C = data.W.shape[1]
        self.params = np.array([penalty, float(support)])
        self.bottom_cost = np.zeros(4)
        self.bottom_choice = np.zeros((4, 3), dtype=np.int64)
        self.bottom_work = np.zeros((4, Q))
        self.rirr = data.rirr
        self.K, self.penalty, self.support = K, penalty, support
        self.deadline = deadline
        # per subproblem: its answer and the bound it was solved for (exact below it)
        self.cache: dict[tuple[bytes, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.cache_bytes, self.cache_used = cache_bytes / 2, 0.0
        self.stats = stats

    # ------------------------------------------------------------------ helpers
    def width(self, d: int) -> int:
        """The longest budget vector of a subproblem of depth ``d``."""
        return min(self.K, (1 << min(d, 62)) - 1)

    def leaf_cost(self, counts: np.ndarray) -> float:
        """The cost of a leaf over class weights ``counts[:C]``: weight minus the heaviest
        class, plus the leaf penalty."""
        w = counts[: self.C]
        return float(w.sum() - w.max()) + self.penalty

    def count_cache(self) -> None:
        """Add the cache of children (:class:`~satdt.dp.common.BudgetWork`) to the stats."""
        entries, hits, _ = (int(v) for v in self.work.fill)
        self.stats.cache_entries = len(self.cache) + entries
        self.stats.cache_hits += self.child_hits + hits

    def tick(self) -> None:
        """Raise :class:`~satdt.core.errors.TimeUp` once the deadline has passed."""
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            raise TimeUp

    def remember(self, key: tuple[bytes, int], value: Solved, bound: np.ndarray) -> None:
        """Cache a subproblem solved below ``bound``; past the cache's share of
        ``max_cache_mb``, empty the cache first (what is dropped is solved again when met:
        still exact)."""
        size = len(key[0]) + _ENTRY_BYTES + 40 * len(value[0])
        if self.cache_used + size > self.cache_bytes:
            self.cache.clear()
            self.cache_used = 0.0
            self.stats.cache_full = True
        self.cache[key] = (*value, bound)
        self.cache_used += size
        self.stats.cache_entries = len(self.cache)

    # ------------------------------------------------------------------ the recursion
    def lower(self, rows: np.ndarray, d: int) -> np.ndarray:
        """Lower bounds on the costs of ``(rows, d)`` per budget: the cached answer, else the
        rows' irreducible error plus one leaf's penalty."""
        floor = float(self.rirr[rows].sum()) + self.penalty
        hit = self.cache.get((rows.tobytes(), d))
        if hit is not None:
            return np.maximum(hit[0], floor)
        return np.full(self.width(d) + 1, floor)

    def solve(
        self, rows: np.ndarray, d: int, path: tuple[int, ...], bound: np.ndarray | None = None
    ) -> Solved:
        """The cost vector of ``(rows, d)`` (least cost with at most k branching nodes,
        k = 0 .. width(d)) and the choice behind each entry; ``path``: the literals
        (``2 * feature + value``) of a path that reaches the rows, ascending. Only the
        entries below ``bound`` (per k; None: all) are exact, with their choices; the others
        are the bound, which the least cost is proven to reach (MurTree's upper bound per
        node count)."""
        width = self.width(d)
        need = np.full(width + 1, math.inf) if bound is None else bound
        wanted = np.flatnonzero(need > -math.inf)
        top = int(wanted[-1]) if len(wanted) else 0
        if top < d:  # a tree of k branching nodes is at most k deep: solve at depth `top`
            return self.shallower(rows, d, top, path, need)
        key = (rows.tobytes(), d)
        hit = self.cache.get(key)
        if hit is not None:
            cost, choice, solved_below = hit
            # every entry exact, or proven to reach what is needed now
            if np.all((cost < solved_below) | (cost >= need)):
                self.stats.cache_hits += 1
                return cost, choice
            need = np.maximum(need, solved_below)  # exact where it was, and where needed
        tot = self.Wc[rows].sum(axis=0)
        leaf = self.leaf_cost(tot)
        irreducible = float(self.rirr[rows].sum())
        exact = np.full(width + 1, math.inf)
        # a split costs at least the rows' irreducible error plus two leaves' penalties
        if width == 0 or leaf <= irreducible + 2 * self.penalty:
            value: Solved = (np.full(width + 1, leaf), np.full((width + 1, 3), -1, dtype=np.int64))
            need = exact
        elif d <= 2:
            value = self.depth_two(rows, d)
            need = exact
        elif np.all(need <= irreducible + self.penalty):  # no tree reaches below the bound
            self.stats.cuts += 1
            value = (need.copy(), np.full((width + 1, 3), -1, dtype=np.int64))
        elif d == 3:
            value = self.three(rows, leaf, path, need)
        else:
            value = self.combine(rows, d, tot, leaf, path, need)
        value = (np.minimum(value[0], need), value[1])
        self.remember(key, value, need)
        return value

    def shallower(
        self, rows: np.ndarray, d: int, top: int, path: tuple[int, ...], need: np.ndarray
    ) -> Solved:
        """``(rows, d)`` where only the budgets up to ``top < d`` are needed: those of
        ``(rows, top)``, the same (a tree with k branching nodes is at most k deep), and
        -inf (no bound) for the larger budgets."""
        width = self.width(d)
        cost, choice = self.solve(rows, top, path, need[: self.width(top) + 1].copy())
        padded = np.full(width + 1, -math.inf)
        padded[: top + 1] = cost[: top + 1]
        chosen = np.full((width + 1, 3), -1, dtype=np.int64)
        chosen[: top + 1] = choice[: top + 1]
        return padded, chosen

    def combine(
        self,
        rows: np.ndarray,
        d: int,
        tot: np.ndarray,
        leaf: float,
        path: tuple[int, ...],
        bound: np.ndarray,
    ) -> Solved:
        """A node of depth ``d >= 4``: every feature that splits the rows, its children's
        vectors combined by a min-plus convolution over ``k_left + k_right = k - 1``.

        Each child is solved below what it must beat for the split to improve an entry
        (the incumbent ``cost[k]``, or ``bound[k]`` where lower) given lower bounds on its
        sibling (:func:`~satdt.dp._budget_kernels.child_target`; MurTree's upper bounds per
        node count): first both sides' budgets up to two, which are those of depth two (one
        pair table each), then the larger budgets of the side without the feature, then of
        the side with it, each against the other's costs so far. A side that cannot beat
        its target at any larger budget is not searched further; a split whose first side
        cannot, is cut (``cuts``). No :func:`~satdt.dp._budget_kernels.at_most` pass: the
        children's budgets reach every ``k - 1 <= 2 * width(d - 1)``, so the convolution of
        their vectors (each "at most") already holds the trees of fewer nodes, and an entry
        that is only a bound must not be carried to a larger budget."""
        width = self.width(d)
        cost = np.full(width + 1, leaf)
        choice = np.full((width + 1, 3), -1, dtype=np.int64)
        column = self.Bd[rows]
        # training rows having each feature, and not: both sides of a split hold `support`
        having = np.einsum("n,nm->m", self.Wc[rows, self.C], column)
        lacking = tot[self.C] - having
        target = np.empty(width + 1)
        side_bound = np.empty(self.width(d - 1) + 1)
        small = np.arange(len(side_bound)) <= 2  # the budgets of depth two
        for f in np.flatnonzero((having >= self.support) & (lacking >= self.support)):
            self.tick()
            ones = column[:, f].astype(bool)
            sides = [rows[~ones], rows[ones]]
            paths = [_with(path, 2 * f), _with(path, 2 * f + 1)]
            lower = [self.lower(sides[0], d - 1), self.lower(sides[1], d - 1)]
            np.minimum(cost, bound, out=target)
            child_target(target, lower[1], side_bound)
            if np.all(side_bound <= lower[0]):
                self.stats.cuts += 1
                continue
            self.stats.expansions += 1
            for large in (False, True):
                for side in (0, 1):
                    child_target(target, lower[1 - side], side_bound)
                    side_bound[small == large] = -math.inf
                    if np.any(side_bound > lower[side]):
                        found = self.solve(sides[side], d - 1, paths[side], side_bound.copy())
                        np.maximum(lower[side], found[0], out=lower[side])
            convolve(cost, choice, int(f), lower[0], lower[1])
        return cost, choice

    def three(
        self, rows: np.ndarray, leaf: float, path: tuple[int, ...], bound: np.ndarray
    ) -> Solved:
        """A node with three levels left, in one kernel
        (:func:`~satdt.dp._budget_kernels.node_three`): every split, its children of depth
        two from the pair tables (or the cache of children, by their paths), combined; exact
        below ``bound``."""
        self.tick()
        width = self.width(3)
        cost = np.full(width + 1, leaf)
        choice = np.full((width + 1, 3), -1, dtype=np.int64)
        params = np.array([self.penalty, float(self.support), float(self.width(2))])
        literals = np.zeros(self.work.lits.shape[1], dtype=np.int64)
        literals[: len(path)] = path
        splits, countings, skipped = node_three(
            rows, self.counted, self.scratch, self.work, params, literals, len(path), bound,
            cost, choice,
        )  # fmt: skip
        self.stats.expansions += splits
        self.stats.bottom_solves += countings
        self.stats.similarity_cuts += skipped
        if self.work.fill[2]:  # full: a larger table, empty, or the same one emptied
            self.child_hits += int(self.work.fill[1])
            entries = min(self.max_entries, 4 * len(self.work.keys))
            self.stats.cache_full = self.stats.cache_full or entries == len(self.work.keys)
            self.work = empty_budget_cache(self.work, self.literals, entries)
        return cost, choice

    def depth_two(self, rows: np.ndarray, d: int) -> Solved:
        """The best trees of depth at most ``d <= 2`` with at most 0 .. width(d) (<= 3)
        branching nodes: the rows counted once (:func:`~satdt.dp._counts.make_space`), then
        :func:`~satdt.dp._budget_kernels.depth_two_budget`."""
        space = self.work.parent
        a, _ = make_space(rows, self.counted, self.scratch, space)
        self.stats.bottom_solves += 1
        cost, choice = self.bottom_cost, self.bottom_choice
        depth_two_budget(
            space.pairs, space.pairs, 0.0, space.single, space.tot, space.act[:a], self.params,
            cost, choice, self.bottom_work,
        )  # fmt: skip
        width = self.width(d)
        return cost[: width + 1].copy(), choice[: width + 1].copy()

    # ------------------------------------------------------------------ trees
    def nested(
        self, rows: np.ndarray, d: int, k: int, prep: PreparedBinary, path: tuple[int, ...] = ()
    ) -> Any:
        """The tree behind ``cost[k]`` of ``(rows, d)`` (reached by ``path``) as
        :meth:`Tree.from_nested` reads it, over the columns of the caller's ``B`` (a flipped
        feature swaps its children)."""
        k = min(k, self.width(d))
        needed = np.full(self.width(d) + 1, -math.inf)
        needed[k] = math.inf  # only entry k need be exact
        _, choice = self.solve(rows, d, path, needed)
        f, k_zero, k_one = (int(v) for v in choice[k])
        if f < 0:
            return int(np.argmax(self.Wc[rows, : self.C].sum(axis=0)))
        ones = self.Bd[rows, f].astype(bool)
        if k_zero < 0:  # a depth-two choice: (f, g_left, g_right)
            zero = self._bottom_nested(rows[~ones], -k_zero - 2, prep)
            one = self._bottom_nested(rows[ones], -k_one - 2, prep)
        else:
            zero = self.nested(rows[~ones], d - 1, k_zero, prep, _with(path, 2 * f))
            one = self.nested(rows[ones], d - 1, k_one, prep, _with(path, 2 * f + 1))
        return _node(f, zero, one, prep)

    def _bottom_nested(self, rows: np.ndarray, g: int, prep: PreparedBinary) -> Any:
        """A child of a depth-two choice: a leaf (``g == -1``) or a split on ``g``."""

        def leaf(part: np.ndarray) -> int:
            return int(np.argmax(self.Wc[part, : self.C].sum(axis=0)))

        if g < 0:
            return leaf(rows)
        ones = self.Bd[rows, g].astype(bool)
        return _node(g, leaf(rows[~ones]), leaf(rows[ones]), prep)


def _with(path: tuple[int, ...], literal: int) -> tuple[int, ...]:
    """The literals of a path and one more, ascending."""
    return tuple(sorted((*path, int(literal))))


def _node(f: int, zero: Any, one: Any, prep: PreparedBinary) -> Any:
    """A node on kept feature ``f``: rows with ``B[:, keep[f]] == 0`` go left."""
    if prep.flip[f]:
        zero, one = one, zero
    return (int(prep.keep[f]), 0.5, zero, one)


def solve_min_error(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    max_depth: int,
    settings: SearchSettings,
    options: BudgetOptions,
) -> SearchResult:
    """Minimum-cost tree of depth at most ``max_depth`` with at most ``options.max_nodes``
    nodes (branching nodes + leaves) over binary features.

    The cost is the weighted error plus ``settings.leaf_penalty`` per leaf; every split has
    ``settings.min_support`` training rows of positive weight on each side.

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
        :class:`satdt.task.stats.BudgetStats`), the upper bound, the leaf penalty and the minimum
        support (:class:`~satdt.dp.common.SearchSettings`).
    options
        The node budget and the cache's cap (:class:`BudgetOptions`).

    Returns
    -------
    SearchResult
        The recorder's snapshot (values are costs), ``proven_optimal`` unless the deadline
        stopped the search. With ``upper_bound``, only strictly better trees are reported; if
        none is, the caller's tree is the proven optimum (the caller vouches for its depth
        and size).
    """
    B = np.ascontiguousarray(B, dtype=np.uint8)
    y = np.asarray(y, dtype=np.int64)
    w = settings.weights(len(y))
    recorder = settings.recorder
    check_inputs(B, y, w, n_classes, max_depth)
    penalty, support = check_leaf_options(settings.leaf_penalty, settings.min_support)
    bound = bound_to_beat(settings.upper_bound, recorder, w)
    prep = prepare_binary(B, y, w, n_classes)
    stats = start_stats(BudgetStats, B, prep, recorder)
    K = branching_budget(options.max_nodes, int(max_depth))
    stats.branching_budget = K
    deepest = min(int(max_depth), max(K, 1))  # a tree of K branching nodes: depth <= K
    cache_bytes = options.max_cache_mb * 2**20
    search = _Search(prep, K, deepest, penalty, support, settings.deadline, cache_bytes, stats)
    rows = np.arange(prep.data.Bd.shape[0], dtype=np.int32)
    floor = prep.floor + penalty
    tol = tolerance(w)

    def record(d: int) -> float:
        # only the full budget counts at the root (a tree with fewer nodes is within it), and
        # only below the incumbent (the shallower passes' or the caller's): what is not
        # below is proven no better, and the incumbent stands
        needed = np.full(search.width(d) + 1, -math.inf)
        needed[-1] = min(bound, recorder.best.value if recorder.best else math.inf)
        value = float(search.solve(rows, d, (), needed)[0][-1])
        if value < bound and (recorder.best is None or value < recorder.best.value - tol):
            tree = Tree.from_nested(
                search.nested(rows, d, K, prep), classes=np.arange(n_classes)
            ).with_counts(B, y, w)
            checked = tree.count_error() + penalty * tree.n_leaves
            if abs(checked - value) > tol or tree.n_nodes > 2 * K + 1 or tree.depth > d:
                raise RuntimeError(
                    f"internal error: the budget search reports cost {value} within {2 * K + 1}"
                    f" nodes and depth {d}, but its tree has cost {checked}, {tree.n_nodes} "
                    f"nodes and depth {tree.depth}"
                )
            recorder.improve(tree, value)
        return value

    try:
        for d in range(0 if K == 0 else 1, deepest + 1 if K else 1):
            value = record(d)
            stats.depths_done = d
            if value <= floor + tol:  # nothing can be better: proven
                break
    except TimeUp:
        recorder.lower_bound = min(floor, recorder.best.value if recorder.best else math.inf)
        if recorder.best is None:
            raise
        return recorder.snapshot(proven_optimal=False, stop_reason="time limit")
    finally:
        search.count_cache()
    if recorder.best is None:  # the caller's bound was not beaten and no tree was recorded
        raise RuntimeError("internal error: the budget search ended without a tree")
    recorder.lower_bound = recorder.best.value
    return recorder.snapshot(proven_optimal=True)
