"""DL8.5 and CA-DL8.5: minimum-error trees of bounded depth by a cached OR-AND search.

Kiossou, Nijssen & Schaus, "A Generic Complete Anytime Beam Search for Optimal Decision
Tree" (``shared/papers/cadl85-kiossou-nijssen-schaus.txt``): Algorithm 1 is DL8.5 (Aglin,
Nijssen & Schaus 2020), Algorithm 2 is CA-DL8.5, which restarts a rule-pruned DL8.5 and
relaxes the rule between restarts (Table 1 of rules).

The search (:mod:`satdt.dp._dl85_search`) is an OR-AND search over the distinct rows of the
prepared data: a node's OR choice is a feature in Gini order, its AND children the rows
without and with it (Algorithm 1, lines 14-27); nodes with two levels left are solved
exactly by the shared depth-two kernels. Solved branches go to a cache capped in memory
(:mod:`satdt.dp._dl85_cache`, Algorithm 1, lines 9-11 and 28-29); a full cache stops
storing, and the search stays exact. This module prepares the data, checks the options,
runs the restarts and turns the search's nested trees into :class:`~satdt.Tree`.

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

The leaf penalty. With ``leaf_penalty`` P the search minimises the *cost*, the weighted error
plus P per leaf; every value above (node results, upper bounds, cached optima and lower
bounds, the features' values kept across restarts) is such a cost, P being fixed for a
search. A tree on a node's rows costs at least its irreducible error plus P, a split at
least the irreducible error plus 2P; so a leaf is optimal once its error is within P of the
irreducible error, and a child whose leaf is not optimal is bounded below by
``min(leaf + P, irreducible + 2P)``. The similarity bound holds for costs as it does for
errors (a tree moved to the other child's rows keeps its leaves; it is used only without a
minimum support, under which a moved tree's leaves could be too small). The depth-two
solvers weigh a leaf, one split and two levels by these costs
(:func:`~._counts.eval_pairs_penalised`, with P outside the pair loop).

Anytime. Whenever a node on the current path improves (or finishes a left child), the best
complete tree the path gives (:func:`~._dl85_anytime.path_tree`: finished subtrees, the rest
as leaves) goes to ``recorder.improve`` if it beats the incumbent; the deadline is checked at
every node (the longest step is one depth-two solve), and on a time-out the best tree is
returned, unproven, with the data's irreducible error as lower bound.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import ParameterError, TimeUp
from ..models.tree import Tree
from ..task.events import Restart
from ..task.result import Recorder, SearchResult
from ..task.stats import DL85Stats
from ._dl85_anytime import LEAF, Companion, CompanionProved
from ._dl85_search import Search, depth_room
from .common import (
    PreparedBinary,
    SearchSettings,
    bound_to_beat,
    check_inputs,
    check_leaf_options,
    prepare_binary,
    start_stats,
    tolerance,
)
from .rules import RULES, SCHEDULES, Rule, relaxation

__all__ = [
    "DEFAULT_CACHE_MB",
    "RULES",
    "SCHEDULES",
    "Companion",
    "DL85Options",
    "solve_min_error",
]

DEFAULT_CACHE_MB = 512


def _to_tree(nested: Any, prep: PreparedBinary, B, y, w, n_classes: int) -> Tree:
    """A search tree over reduced, flipped features as a Tree over the columns of ``B``.

    Leaves predict the heaviest class of the rows reaching them; a flipped feature swaps its
    children so that rows with ``B[:, j] == 0`` go left (threshold 0.5). A split that sends
    every row to one side is replaced by that side: the depth-two kernels weigh a child split
    by subtracting class weights, and with fractional weights and no leaf penalty the
    rounding can make a split whose other side is empty look a hair better than a leaf (its
    error is the leaf's; the tree keeps every leaf holding a training row).
    """
    Bd, W = prep.data.Bd, prep.data.W

    def build(t: Any, rows: np.ndarray):
        if t == LEAF:
            return int(np.argmax(W[rows].sum(axis=0))) if rows.size else 0
        f, lt, rt = t
        ones = Bd[rows, f] != 0
        if rows.size and ones.all():
            return build(rt, rows)
        if rows.size and not ones.any():
            return build(lt, rows)
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
        raise ParameterError(f"{name} must be a positive number or 'auto', got {value!r}")
    if not value > 0:
        raise ParameterError(f"{name} must be positive, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class DL85Options:
    """DL8.5's own options (:func:`solve_min_error`).

    Attributes
    ----------
    max_cache_mb
        Cap on the cache of solved branches (estimated MB); when reached the cache stops
        growing and branches not in it are recomputed (the result stays exact).
    rule
        ``None`` for DL8.5; one of :data:`RULES` for CA-DL8.5.
    relax, relax_step
        The relaxation schedule of CA-DL8.5 (:data:`SCHEDULES`) and its step δ: positions
        (default 1) for ``discrepancy`` / ``topk`` / ``topk_star``; gain gap in bits or
        purity (default 0.05) for ``gain`` / ``purity``.
    """

    max_cache_mb: float = DEFAULT_CACHE_MB
    rule: str | None = None
    relax: str = "monotonic"
    relax_step: float | None = None


def solve_min_error(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    max_depth: int | None,
    settings: SearchSettings,
    options: DL85Options = DL85Options(),
    *,
    prep: PreparedBinary | None = None,
    companion: Companion | None = None,
) -> SearchResult:
    """Minimum-error tree of depth at most ``max_depth`` by DL8.5, or by CA-DL8.5 with ``rule``.

    ``max_depth=None`` with a leaf penalty searches every depth: each node's remaining depth
    is what the penalty allows its rows (:func:`~._dl85_search.depth_room`), so the cache
    is keyed on the rows alone, and splits are cut by the leaf-support bound as well.

    Parameters
    ----------
    B, y, n_classes, max_depth, settings
        As :func:`satdt.dp.blossom.solve_min_error` (``B`` uint8 0/1 features, ``y`` class
        indices; ``settings`` the rows' weights, the deadline, the recorder, the cost of the
        recorder's incumbent, which the search must beat, the leaf penalty and the minimum
        support: every leaf holds at least that many training rows of positive weight, a
        split is tried only when both sides have that many (Algorithm 1, line 16), and every
        value reported is the weighted error plus the leaf penalty per leaf).
    options
        DL8.5's own (:class:`DL85Options`): the cache's cap, CA-DL8.5's rule and schedule.
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
    w = settings.weights(len(y))
    recorder, deadline, rule = settings.recorder, settings.deadline, options.rule
    check_inputs(B, y, w, n_classes, 0 if max_depth is None else max_depth)
    P, min_support = check_leaf_options(settings.leaf_penalty, settings.min_support)
    if max_depth is None and not P > 0:
        raise ParameterError(
            f"max_depth=None needs leaf_penalty > 0 (it bounds the leaves), got {P!r}: "
            "give max_depth or a positive leaf_penalty"
        )
    max_cache_mb, step = _search_options(
        options.max_cache_mb, rule, options.relax, options.relax_step
    )
    tol = tolerance(w)
    bound = bound_to_beat(settings.upper_bound, recorder, w)
    if prep is None:
        prep = prepare_binary(B, y, w, n_classes)
    M = prep.data.Bd.shape[1]
    stats = start_stats(DL85Stats, B, prep, recorder)
    W = prep.data.W
    root_error = float(W.sum() - W.sum(axis=0).max(initial=0.0))
    root_leaf = root_error + P
    sparse = max_depth is None
    K = depth_room(root_error, prep.floor, P, tol) if sparse else int(max_depth)
    # no tree costs less than the irreducible error and one leaf, nor a split less than two
    least = max(prep.floor + P, min(root_leaf, prep.floor + 2 * P)) if K > 0 else root_leaf

    def to_tree(nested: Any) -> Tree:
        return _to_tree(nested, prep, B, y, w, n_classes)

    on_root, to_beat = _reporter(recorder, bound, tol, P, to_tree)
    if K == 0 or M == 0 or bound <= least:
        if root_leaf < bound and (K == 0 or M == 0):
            on_root(root_leaf, LEAF)
        recorder.lower_bound = min(root_leaf, bound)
        return recorder.snapshot(proven_optimal=True)

    search = Search(
        prep, K, min_support, P, max_cache_mb, deadline, tol, on_root, companion, sparse
    )
    first = None if rule is None else _first_limit(rule, step, root_error, float(W.sum()))
    proven = False
    # a path has at most K + 1 nodes, three frames each
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 3 * K + 1000))
    try:
        proven = _restarts(search, recorder, to_beat, rule, first, options.relax, step)
    except TimeUp:
        pass
    except CompanionProved:
        proven = True
    finally:  # also on Ctrl-C, where the caller keeps the best tree
        sys.setrecursionlimit(limit)
        _fill_stats(stats, search)
    if recorder.best is None:  # stopped before the first tree: the root as a leaf
        on_root(root_leaf, LEAF)
    best = recorder.best.value
    recorder.lower_bound = best if proven else min(least, best)
    return recorder.snapshot(proven_optimal=proven)


def _search_options(
    max_cache_mb: Any, rule: str | None, relax: str, relax_step: Any
) -> tuple[float, float]:
    """Check the cache cap and CA-DL8.5's rule and schedule: ``(max_cache_mb, relax_step)``."""
    max_cache_mb = _positive("max_cache_mb", max_cache_mb, DEFAULT_CACHE_MB)
    if rule is not None and rule not in RULES:
        raise ParameterError(f"rule must be one of {list(RULES)}, got {rule!r}")
    if relax not in SCHEDULES:
        raise ParameterError(f"relax must be one of {list(SCHEDULES)}, got {relax!r}")
    fractional = rule in ("purity", "gain")
    step = _positive("relax_step", relax_step, 0.05 if fractional else 1.0)
    return max_cache_mb, step


def _reporter(
    recorder: Recorder, bound: float, tol: float, P: float, to_tree: Callable[[Any], Tree]
) -> tuple[Callable[[float, Any], None], Callable[[], float]]:
    """``(on_root, to_beat)``: report a root tree of the search to the recorder, re-checked
    against the data, when it beats the incumbent; and the bound a tree must beat."""

    def check(value: float, nested: Any) -> Tree:
        tree = to_tree(nested)
        cost = tree.count_error() + P * tree.n_leaves
        if abs(cost - value) > tol:
            raise RuntimeError(
                f"internal error: the search reports cost {value} but its tree costs {cost}"
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

    return on_root, to_beat


def _first_limit(rule: str, step: float, root_error: float, weight: float) -> float:
    """The rule's limit at the first restart (``purity``: one step above the root's)."""
    start = {"discrepancy": 0.0, "topk": 1.0, "topk_star": 1.0, "gain": 0.0}
    return start.get(rule, 1.0 - root_error / max(weight, 1e-300) + step)


def _restarts(
    search: Search,
    recorder: Recorder,
    to_beat: Callable[[], float],
    rule: str | None,
    first: float | None,
    relax: str,
    step: float,
) -> bool:
    """DL8.5 once, or CA-DL8.5's restarts (Algorithm 2, lines 5-10) until one is terminal:
    whether the last search was terminal (its result proven optimal)."""
    rows = np.arange(search.data.Bd.shape[0], dtype=np.int32)
    while True:
        active = None
        if rule is not None:
            active = Rule(rule, first + relaxation(relax, step, search.restarts))
        search.new_restart(active)
        tic = time.perf_counter()
        value, nested, terminal = search.node(rows, search.K, 0, to_beat(), 0.0)
        if nested is not None:
            search.on_root(value, nested)
        if rule is None:
            return terminal
        search.restarts += 1
        recorder.event(
            Restart(
                number=search.restarts,
                rule=rule,
                limit=active.limit,
                error=recorder.best.value if recorder.best is not None else math.inf,
                complete=terminal,
                time=time.perf_counter() - tic,
                cache_entries=len(search.cache),
            )
        )
        if terminal:
            return True


def _fill_stats(stats: DL85Stats, search: Search) -> None:
    search.three_stats()
    stats.expansions = search.nodes
    stats.nodes = search.nodes
    stats.bottom_solves = search.bottom
    stats.cuts = search.cuts
    stats.similarity_cuts = search.similarity_cuts
    stats.support_cuts = search.support_cuts
    stats.cache_hits = search.hits
    stats.cache_entries = len(search.cache) + (
        0 if search.three is None else int(search.three.fill[0])
    )
    stats.cache_mb = (
        search.bytes + search.local_bytes + search.partial_bytes
    ) / 2**20 + search.three_cache_mb()
    stats.cache_full = search.full
    stats.restarts = search.restarts
