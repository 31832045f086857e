"""The searches built on the counterexample-guided loop: minimum depth, minimum size, Pareto front.

DT_depth and DT_size of Avellaneda (AAAI 2020), and the depth/size trade-off between them.
See ``encodings/incremental-loop.md`` and ``encodings/node-counter.md``. A search keeps one
:class:`~satdt.sat.loop.CounterexampleLoop` (one incremental solver) per depth it tries,
seeds every new loop with the examples the earlier ones needed, and starts each depth from a
heuristic tree (:mod:`satdt.sat.heuristics`), which often settles it without a SAT call.
Size bounds are assumptions on one leaf counter per loop, so nothing is re-encoded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import TimeUp, no_consistent_tree
from ..models.tree import Tree, depth_lower_bound
from ..task.result import ParetoPoint, Recorder, SearchResult, front_ends_after
from ..task.stats import SatStats
from .chains import ChainLoop, chain_budget, threshold_chains
from .counter import DEFAULT_COUNTER
from .heuristics import greedy_tree, lookahead_tree, root_candidates
from .loop import SMALL_ROWS, CounterexampleLoop, LoopOutcome
from .problem import Problem

# Largest work (about 2^(k-3) m^3 words classes) for a lookahead hint at depth k.
_LOOKAHEAD_WORK = 10**7
# From this depth on, the loop first tries the best-looking root features, one at a time, under
# assumption (measured on car and balance-scale: deep final depths are where the solver is slow
# and a right root splits the search in two; below, refuting wrong roots costs more than it saves).
# Not on threshold chains, where the calls are faster and scoring the roots is most of the cost
# (436 rows of three landsat columns, depth 7: 15 s and 31 s unguided, 17 s and 36 s guided).
_GUIDED_DEPTH = 7
_GUIDED_ROOTS = 3
# Largest work (about m^3 words classes) for scoring the root candidates: beyond it (large
# tables) the scoring alone would outlast any time limit, and the loop runs unguided.
_GUIDED_WORK = 10**9
# Below this depth, a search without leaf bounds keeps the lazy per-feature encoding even
# when threshold chains pay off: on wine (1259 thresholds in 16 chains) its depth-3 SAT calls
# were twice as fast (1.0-1.7 s against 3.2 s), while in the size search, whose loop goes on
# under leaf bounds, the chains took the bounded calls from 4.8 s to 1.2 s (a fresh chain loop
# for the bounded calls only, without the clauses learnt before, took 4.2 s); the depth-6
# proof on 436 rows of three landsat columns went from 10 s to 1 s.
_CHAIN_DEPTH = 4
# The chains encode every feature at every node (``features="all"``): beyond this many
# node-feature pairs a loop keeps the lazy per-feature encoding, whose formula grows with the
# examples only (on a table of 200,000 rows and 20 numeric columns a chain loop at depth 10
# would hold some 20 million F variables before its first call). The landsat proofs above
# use 21,590, wine's size search at depth 4 18,885.
_CHAIN_NODE_FEATURES = 200_000
# Nor are chains looked for in a matrix of more cells than this (the search for them packs
# the matrix once): the tables it pays on have few rows and many thresholds.
_CHAIN_CELLS = 5 * 10**7


def _chains_for(
    problem: Problem, options: dict[str, Any], sized: bool
) -> tuple[list[np.ndarray] | None, int]:
    """The threshold chains the loops may encode (:mod:`satdt.sat.chains`), or None for the
    per-feature encoding, and the depth from which loops take them; pops ``features="auto"``
    or ``"chains"`` from ``options``.

    ``"auto"`` (the default) takes the chains when they shrink the formula enough
    (at most :func:`~satdt.sat.chains.chain_budget` chains): at every depth when the search bounds the
    leaves (``sized``), else from :data:`_CHAIN_DEPTH` on; ``"chains"`` takes them everywhere.
    """
    features = options.get("features", "auto")
    if features not in ("auto", "chains"):
        return None, 0
    options.pop("features", None)
    if problem.B.size > _CHAIN_CELLS:
        return None, 0
    if features == "chains":
        return threshold_chains(problem.B), 0
    chains = threshold_chains(problem.B, chain_budget(problem.B.shape[1]))
    return chains, 0 if sized else _CHAIN_DEPTH


class LoopSearch:
    """The loops of one search, by depth, and every example they used (seeds for new loops)."""

    def __init__(
        self,
        problem: Problem,
        options: dict[str, Any],
        deadline: float | None,
        recorder: Recorder,
        max_leaves: int | None = None,
        sized: bool = False,
    ) -> None:
        self.problem = problem
        self.max_leaves = max_leaves
        self.counter = options.pop("leaf_counter", DEFAULT_COUNTER)
        self.chains, self.chain_depth = _chains_for(
            problem, options, sized or max_leaves is not None
        )
        self.options = options
        self.deadline = deadline
        self.recorder = recorder
        self.loops: dict[int, CounterexampleLoop] = {}
        self.examples: dict[int, None] = {}  # insertion-ordered set
        self.begun: set[int] = set()  # depths whose heuristic tree and guesses were tried
        self.stats = SatStats(rows=len(problem.y), binary_features=problem.B.shape[1])
        recorder.stats = self.stats

    def __enter__(self) -> LoopSearch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()

    def finish(self) -> None:
        """Close every loop and complete the statistics."""
        for k in list(self.loops):
            self.close(k)
        self.stats.examples_used = len(self.examples)
        self.stats.solve_time = sum(call.time for call in self.recorder.trace)

    def set_deadline(self, deadline: float | None) -> None:
        """Move the deadline of the search and of every live loop (a slice of a portfolio:
        a loop stopped at one deadline resumes at the next call with what it learnt)."""
        self.deadline = deadline
        for loop in self.loops.values():
            loop.deadline = deadline

    def close(self, k: int) -> None:
        self.begun.discard(k)
        loop = self.loops.pop(k)
        self.examples.update(dict.fromkeys(loop.included))
        self.stats.sat_calls += loop.rounds
        loop.close()

    def loop_at(self, k: int) -> CounterexampleLoop | None:
        """The live loop at depth k, created and seeded with every example used so far; None on time-out.

        From depth ``chain_depth`` on, it encodes the threshold chains when there are any and
        the formula of every feature at every node stays small (:data:`_CHAIN_NODE_FEATURES`).
        """
        if k not in self.loops:
            try:
                common = dict(recorder=self.recorder, deadline=self.deadline, **self.options)
                fits = (2**k - 1) * self.problem.B.shape[1] <= _CHAIN_NODE_FEATURES
                if self.chains is not None and k >= self.chain_depth and fits:
                    loop = ChainLoop(self.problem, k, self.chains, **common)
                else:
                    loop = CounterexampleLoop(self.problem, k, **common)
            except TimeUp:
                return None
            self.loops[k] = loop
            if not loop.add_examples(list(self.examples)):
                return None
            if self.max_leaves is not None and self.max_leaves < 2**k:
                try:
                    loop.add_leaf_counter(self.max_leaves, self.counter)
                except TimeUp:
                    return None
        return self.loops[k]

    def bound(self, k: int) -> int | None:
        """The leaf bound the loop at depth k runs under (None: no node cap, or a cap it cannot reach)."""
        loop = self.loops.get(k)
        return self.max_leaves if loop is not None and loop.counter is not None else None

    def settle(self, k: int) -> LoopOutcome:
        """Is there a consistent tree of depth k? Tries a heuristic tree (repaired) before the solver.

        The heuristic is the lookahead tree when there are few features and not few rows
        (:data:`~satdt.sat.loop.SMALL_ROWS`), else the greedy tree; when it cannot be made
        consistent it becomes the solver's phase hint. A depth settled again after an
        ``"UNKNOWN"`` (a slice that ended) goes on with its loop, without the heuristics.
        """
        loop = self.loop_at(k)
        if loop is None:
            return LoopOutcome("UNKNOWN")
        if k in self.begun:
            outcome = loop.run(max_leaves=self.bound(k))
            self.examples.update(dict.fromkeys(loop.included))
            return outcome
        self.begun.add(k)
        p = self.problem
        m = p.B.shape[1]
        lookahead_work = 2 ** max(k - 3, 0) * m**3 * (len(p.y) // 64 + 1) * p.n_classes
        if k > 3 and lookahead_work <= _LOOKAHEAD_WORK and len(p.y) >= SMALL_ROWS:
            hint = lookahead_tree(p.B, p.y, p.n_classes, k)
        else:
            hint = greedy_tree(p.B, p.y, p.n_classes, max_depth=k, deadline=self.deadline)
        outcome = loop.try_tree(hint, self.max_leaves)
        if outcome is not None:
            self.stats.settled_without_sat_call.append(k)
            return outcome
        guided_work = m**3 * (len(p.y) // 64 + 1) * p.n_classes
        chains = isinstance(loop, ChainLoop)
        if k >= _GUIDED_DEPTH and hint.depth > 0 and guided_work <= _GUIDED_WORK and not chains:
            # guesses: the best-looking root features; SAT under one is an answer, UNSAT only
            # refutes the guess (its counterexamples stay useful)
            for root in root_candidates(p.B, p.y, p.n_classes, _GUIDED_ROOTS):
                guess = [int(loop.vars.F[0, loop.slot_of[root]])]
                outcome = loop.run(max_leaves=self.bound(k), assumptions=guess)
                if outcome.status != "UNSAT":
                    self.examples.update(dict.fromkeys(loop.included))
                    return outcome
        outcome = loop.run(max_leaves=self.bound(k))
        self.examples.update(dict.fromkeys(loop.included))
        return outcome

    def depth_search(
        self, lower: int, upper: int, max_depth: int | None
    ) -> tuple[int | None, Tree | None, bool]:
        """Depths upwards from ``lower`` while below ``upper`` (a depth already achieved).

        Returns ``(depth, tree, timed_out)``: the first SAT depth and its simplified tree
        (None when no depth below ``upper`` and within ``max_depth`` is SAT). The loop at the SAT
        depth stays open; ``recorder.lower_bound`` holds the last UNSAT depth + 1.
        """
        k = lower
        while k < upper and (max_depth is None or k <= max_depth):
            outcome = self.settle(k)
            if outcome.status == "UNKNOWN":
                return None, None, True
            if outcome.status == "UNSAT":
                self.close(k)
                k += 1
                self.recorder.raise_lower_bound(k)
                continue
            return k, outcome.tree.simplify(self.problem.B), False
        return None, None, False

    def minimum_depth(
        self, greedy: Tree, max_depth: int | None
    ) -> tuple[int | None, Tree | None, bool]:
        """:meth:`depth_search` from the sound lower bound up to the greedy tree's depth.

        When no shallower depth is SAT, the greedy tree itself has the minimum depth. Under a
        node cap the greedy tree may be too large: then the search goes on up to depth
        ``max_leaves - 1``, the deepest a tree with that many leaves can be.
        """
        present = int(np.unique(self.problem.y).size)
        admissible = self.admits(greedy)
        upper = greedy.depth if admissible else self.max_leaves
        depth, tree, timed_out = self.depth_search(depth_lower_bound(present), upper, max_depth)
        if (
            depth is None
            and not timed_out
            and admissible
            and (max_depth is None or greedy.depth <= max_depth)
        ):
            return greedy.depth, greedy, False
        return depth, tree, timed_out

    def admits(self, tree: Tree) -> bool:
        """Whether a tree keeps within the node cap."""
        return self.max_leaves is None or tree.n_leaves <= self.max_leaves


def _first_tree(problem: Problem, given: Tree | None) -> Tree:
    """The consistent tree a search starts from: ``given`` (already recorded by the caller,
    possibly over other features: only its shape is used), or a greedy tree over the binary
    features, simplified."""
    if given is not None:
        return given
    return greedy_tree(problem.B, problem.y, problem.n_classes).simplify(problem.B)


def _leaf_cap(max_nodes: int | None) -> int | None:
    """A tree with L leaves has 2L - 1 nodes: the most leaves within ``max_nodes`` nodes."""
    return None if max_nodes is None else max(0, (max_nodes + 1) // 2)


def minimum_depth(
    problem: Problem,
    *,
    max_depth: int | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
    recorder: Recorder,
    first_tree: Tree | None = None,
    **options: object,
) -> SearchResult:
    """The minimum-depth tree consistent with every row of ``problem`` (DT_depth).

    A greedy pure tree gives the first incumbent and an upper bound (``first_tree``: one
    already recorded by the caller, e.g. grown on the numeric data of a large table, so the
    search grows none over the binary features); depths are then tried
    upwards from a sound lower bound, each with its own incremental solver, seeded with the
    examples the previous depths needed. The first SAT depth is the minimum. On time-out the
    best tree known is returned with ``proven_optimal=False`` and ``lower_bound`` = last
    UNSAT depth + 1. ``max_nodes`` caps the size (a leaf counter under assumptions in every
    loop); ``options`` are those of :class:`~satdt.sat.loop.CounterexampleLoop`.

    Raises
    ------
    InfeasibleError
        When no consistent tree within ``max_depth`` and ``max_nodes`` exists (proven), or none
        was found before the deadline.
    """
    y = problem.y
    max_leaves = _leaf_cap(max_nodes)
    recorder.raise_lower_bound(depth_lower_bound(int(np.unique(y).size)))
    greedy = _first_tree(problem, first_tree)
    with LoopSearch(problem, options, deadline, recorder, max_leaves) as search:
        if (max_depth is None or greedy.depth <= max_depth) and search.admits(greedy):
            recorder.improve(greedy, greedy.depth)
        depth, tree, timed_out = search.minimum_depth(greedy, max_depth)
    if tree is not None and (recorder.best is None or depth < recorder.best.value):
        recorder.improve(tree, depth)
    if recorder.best is None:
        raise no_consistent_tree(max_depth, max_leaves, recorder.lower_bound, timed_out)
    if not timed_out:
        recorder.lower_bound = recorder.best.value
    return recorder.snapshot(proven_optimal=recorder.lower_bound >= recorder.best.value)


SIZE_STRATEGIES = ("descending", "dichotomic", "galloping")
DEFAULT_SIZE_STRATEGY = "descending"


def minimise_leaves(
    search: LoopSearch,
    depth: int,
    upper: int,
    lower: int,
    counter: str,
    strategy: str,
    on_tree: Callable[[Tree], None],
) -> tuple[int, bool]:
    """The fewest leaves of a consistent tree of depth <= ``depth``; ``upper`` leaves are achieved.

    One leaf counter sized for ``upper - 1`` goes into the live loop at this depth; every
    bound is an assumption on it. "descending" asks for one leaf fewer than the best tree so
    far (each SAT answer's simplified tree may jump further down); "dichotomic" asks for the
    middle of the open interval (the paper's search); "galloping" asks for 1, 2, 4, ... leaves
    fewer after each SAT answer and falls back to one fewer after an UNSAT one. Counterexamples found under any bound
    stay in the solver: they hold for every bound. Returns ``(lower bound, proven)``; every
    smaller tree found goes to ``on_tree``.
    """
    if upper <= lower:
        return upper, True
    loop = search.loop_at(depth)
    if loop is None:
        return lower, False
    if loop.counter is None:
        try:
            loop.add_leaf_counter(upper - 1, counter)
        except TimeUp:
            return lower, False
    step = 1
    while lower < upper:
        if strategy == "dichotomic":
            target = (lower + upper - 1) // 2
        elif strategy == "galloping":
            target = max(lower, upper - step)
        else:
            target = upper - 1
        outcome = loop.run(max_leaves=target)
        search.examples.update(dict.fromkeys(loop.included))
        if outcome.status == "UNKNOWN":
            return lower, False
        if outcome.status == "UNSAT":
            lower = target + 1
            step = 1
            continue
        tree = outcome.tree.simplify(search.problem.B)
        upper = tree.n_leaves
        step *= 2
        on_tree(tree)
    return lower, True


def minimum_size(
    problem: Problem,
    *,
    max_depth: int | None = None,
    max_nodes: int | None = None,
    leaf_counter: str = DEFAULT_COUNTER,
    size_search: str = DEFAULT_SIZE_STRATEGY,
    deadline: float | None = None,
    recorder: Recorder,
    first_tree: Tree | None = None,
    **options: object,
) -> SearchResult:
    """The consistent tree with the fewest nodes (DT_size), as ``2 L - 1`` for L leaves.

    Without ``max_depth``: the fewest nodes among the trees of minimum depth (the paper's
    DT_size). With ``max_depth = K``: the fewest nodes among all trees of depth <= K, which by
    Theorem 2 is the fewest labelled leaves of a perfect tree of depth K. ``max_nodes`` is a cap
    (infeasible beyond it); ``first_tree`` is as for :func:`minimum_depth`; ``options`` are
    those of :class:`~satdt.sat.loop.CounterexampleLoop`.
    """
    if size_search not in SIZE_STRATEGIES:
        raise ValueError(f"size_search must be one of {SIZE_STRATEGIES}, got {size_search!r}")
    B, y = problem.B, problem.y
    n_present = int(np.unique(y).size)
    best: list[Tree] = []  # the smallest admissible tree over binary features so far

    max_leaves = _leaf_cap(max_nodes)

    def on_tree(tree: Tree) -> None:
        admissible = (max_depth is None or tree.depth <= max_depth) and (
            max_leaves is None or tree.n_leaves <= max_leaves
        )
        if admissible and (not best or tree.n_leaves < best[-1].n_leaves):
            best.append(tree)
            recorder.improve(tree, tree.n_nodes)

    greedy = _first_tree(problem, first_tree)
    sat_options = dict(options, leaf_counter=leaf_counter)
    with LoopSearch(problem, sat_options, deadline, recorder, max_leaves, sized=True) as search:
        depth, tree, timed_out = search.minimum_depth(greedy, max_depth)
        depth_lower = recorder.lower_bound
        if max_depth is not None or depth is None:
            on_tree(greedy)  # any depth <= max_depth competes (or nothing better is known)
        if tree is not None:
            on_tree(tree)
        if depth is None:
            recorder.lower_bound = 2 * max(n_present, depth_lower + 1) - 1
            if recorder.best is None:
                raise no_consistent_tree(max_depth, max_leaves, depth_lower, timed_out)
            return recorder.snapshot(proven_optimal=False)
        target = depth if max_depth is None else max_depth
        if target > depth:  # the perfect trees of depth K hold every tree of depth <= K
            outcome = search.settle(target)
            if outcome.status == "SAT":
                on_tree(outcome.tree.simplify(B))
        lower = max(n_present, depth + 1)
        lower, proven = minimise_leaves(
            search, target, best[-1].n_leaves, lower, leaf_counter, size_search, on_tree
        )
    recorder.lower_bound = 2 * lower - 1
    return recorder.snapshot(proven_optimal=proven)


def pareto_front(
    problem: Problem,
    *,
    max_depth: int | None = None,
    leaf_counter: str = DEFAULT_COUNTER,
    size_search: str = DEFAULT_SIZE_STRATEGY,
    deadline: float | None = None,
    recorder: Recorder,
    **options: object,
) -> tuple[list[ParetoPoint], str]:
    """The depth/size trade-off: for each depth from the minimum to ``max_depth`` (default: the
    minimum + 2), the fewest nodes of a consistent tree of at most that depth.

    Stops early once the leaf count L at depth d satisfies L <= d + 2: a deeper tree has a path
    of d + 1 tests, hence at least d + 2 leaves, so it cannot be smaller. Returns the points
    and the rule that ended the search.
    """
    B, y = problem.B, problem.y
    n_present = int(np.unique(y).size)
    greedy = greedy_tree(B, y, problem.n_classes).simplify(B)
    points: list[ParetoPoint] = []
    sat_options = dict(options, leaf_counter=leaf_counter)
    with LoopSearch(problem, sat_options, deadline, recorder, sized=True) as search:
        depth, tree, timed_out = search.minimum_depth(greedy, max_depth)
        if depth is None:
            raise no_consistent_tree(max_depth, None, recorder.lower_bound, timed_out)
        last = depth + 2 if max_depth is None else max_depth
        best = [tree]
        recorder.improve(tree, tree.n_nodes)
        reason = f"reached the last depth asked for ({last})"
        for d in range(depth, last + 1):
            found: list[Tree] = []

            def on_tree(candidate: Tree, found: list[Tree] = found) -> None:
                found.append(candidate)
                recorder.improve(candidate, candidate.n_nodes)

            if d > depth:
                outcome = search.settle(d)
                if (
                    outcome.status == "SAT"
                    and outcome.tree.simplify(B).n_leaves < best[-1].n_leaves
                ):
                    on_tree(outcome.tree.simplify(B))
            upper = min([best[-1].n_leaves] + [t.n_leaves for t in found])
            _, proven = minimise_leaves(
                search, d, upper, max(n_present, depth + 1), leaf_counter, size_search, on_tree
            )
            best.extend(found)
            smallest = min(best, key=lambda t: t.n_leaves)
            points.append(ParetoPoint(d, smallest.n_nodes, smallest, proven))
            if d in search.loops:
                search.close(d)
            if not proven:
                reason = "time limit: the last point is not proven"
                break
            ended = front_ends_after(d, smallest.n_leaves)
            if ended:
                reason = ended
                break
    return points, reason
