"""The consistency portfolio: SAT and ConTree together prove minimum depth and minimum size.

Two exact searches answer the question "is there a consistent tree of depth k (with fewer
than L leaves)?", and each is fast where the other is slow:

* **SAT** (:mod:`satdt.sat.search`): the counterexample-guided loop of Avellaneda (AAAI
  2020, Algorithm 3) over binary features ``x[c] > t``, one per threshold. On binary tables
  and on columns with few values it is the faster prover; on numeric columns it drowns in
  thresholds (scikit-learn's breast-cancer table: 15,131 binary features, depth 3 not
  refuted in 90 s).
* **ConTree as a decision procedure** (:mod:`satdt.dp.consistent`): ConTree (Brita, van der
  Linden & Demirovic, AAAI 2025, Eq. (4)-(6), Algorithms 1-2) on the numeric columns, with
  an upper bound below one error, so that every subproblem that must misclassify a row is
  pruned (breast-cancer: depth 3 refuted in 0.07 s, a consistent depth-4 tree in 0.4 s).

The portfolio runs them in turns on one core. The *arms*: SAT at the lowest depth not yet
refuted (``L``); ConTree at ``L`` (the *bottom*); ConTree just below the best tree found
(``U - 1``, the *top*), which makes the incumbent shallower while the others prove; and from
:data:`PRIMAL_DEPTH` on, a *primal* arm at the top's depth, Blossom on quantile thresholds
(:class:`satdt.dp.consistent.QuantilePrimal`), whose error-free trees are consistent trees.
Each turn goes to the arm that has run least for its side's share of the core (SAT's side,
or ConTree's with the primal arm) and lasts as long as that arm has run so far (at least
:data:`FIRST_SLICE`), so an arm whose question needs a long run gets turns that double.
SAT's first share falls with the size of its binary matrix (:data:`SAT_CELLS`); when one
side settles a question while the other ran without settling one, the winner's share
doubles and the loser's halves (down to :data:`MIN_SHARE`). Nothing is lost between turns:
a SAT loop keeps its solver and what it learnt (clauses a deadline cut off stay queued), and
ConTree its cache of subproblems solved or refuted (keyed by row set and remaining depth, so
shared by the arms). A refutation by either raises ``L`` for both; a tree found by either
lowers ``U``; ``L = U`` proves the minimum depth. The box DP (:mod:`satdt.dp.boxes`) is not
an arm: ``auto`` runs it alone where the grid of boxes is small.

SAT's refutations count only over the binary features of *every* threshold: where those
would not fit in memory (quantile thresholds) the SAT arm is left out. ConTree needs its
Numba kernels: SAT runs alone for :data:`LOAD_AFTER` seconds (times the cube of its share)
before they start loading in a helper thread (or, on a first run, compiling in the
background), so small problems that SAT settles at once never pay for them; while they load,
ConTree's turns are waits (the loading holds the interpreter's lock for long stretches, and
SAT beside it slowed both down, measured).

*Minimum size.* Once the depth is settled (or up to ``max_depth``), two arms take turns on
the fewest leaves at that depth: SAT's leaf counter under assumptions
(:func:`satdt.sat.search.minimise_leaves`) and ConTree with a leaf penalty below one error
(:meth:`satdt.dp.consistent.ConsistencyDP.fewer_leaves`). A tree with L leaves has
``2L - 1`` nodes. The Pareto front repeats this at each depth.

Every tree is re-checked against every row by the estimator; the statistics
(:class:`satdt.task.stats.HybridStats`) say which search settled which question.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import TimeUp, no_consistent_tree
from ..models.tree import Tree, depth_lower_bound, leaf_lower_bound
from ..task.events import Progress
from ..task.objectives import OBJECTIVES
from ..task.result import ParetoPoint, SearchResult, front_ends_after
from ..task.stats import SEARCH_NAMES, Decision, HybridStats, Proof

if TYPE_CHECKING:
    from ..dp.consistent import ConsistencyDP, QuantilePrimal
    from ..dp.cores import CoreBound
    from ..dp.improve import LocalImprovement
    from ..dp.kernels import Loading
    from ..sat.search import LoopSearch
    from ..task.spec import Task

# The first turn of an arm, in seconds; later turns last as long as the arm has run so far.
FIRST_SLICE = 0.05
# From this depth on, the top arm's target also gets a primal arm (Blossom on quantile
# thresholds, :class:`satdt.dp.consistent.QuantilePrimal`): ConTree's decision far above
# the minimum can search long before it meets a consistent tree (a 500-row sample of avila:
# none at depth 16 in 30 s, where Blossom on 6 thresholds per column finds one at depth 14
# in 0.1 s).
PRIMAL_DEPTH = 4
# How often to look at the kernels while they load or compile, in seconds.
_POLL = 0.02
# SAT runs alone for this long (times the cube of its first share) before ConTree's kernels
# start loading (about half a second): the problems SAT settles at once never pay for them
# (wine, 1,259 binary features: 0.6 s of SAT), the others wait little for ConTree.
LOAD_AFTER = 0.8
# SAT's first share of the core is 1 up to this many cells of the binary matrix (distinct
# rows x binary features), and falls in proportion beyond: a SAT call's work grows with both
# (wine, 178 x 1,259: SAT proves its minimum depth in 0.6 s; 500 rows of the bank file,
# 500 x 1,950: SAT takes 4.7 s, ConTree 0.1 s once loaded).
SAT_CELLS = 300_000
# A search's share of the core halves (down to this) each time the other settles a question
# while it settled none, and doubles (up to 1) each time it settles one.
MIN_SHARE = 1 / 16
# ConTree's arms race the same way: those that raise the lower bound against those that look
# for shallower trees (on a large table the cores stop proving long before the local
# improvement stops lowering the best tree, and on others the other way round), and the
# latter among themselves (a decision on the whole of a large table far above its minimum
# depth never ends, while the local improvement lowers it in seconds).
LOWER_ARMS = ("contree-cores", "contree-bottom")
UPPER_ARMS = ("contree-top", "contree-primal", "contree-improve")


# The search each arm's answers are credited to (ConTree's own arms: "contree").
_ARM_SEARCH = {
    "sat": "sat",
    "contree-primal": "blossom",
    "contree-cores": "cores",
    "contree-improve": "improve",
}


def _search_of(arm: str) -> str:
    """The side an arm (or a search's name) is on: ``"sat"``, or ``"contree"`` for every
    search over the numeric columns (Blossom's primal arm included)."""
    return "sat" if arm.startswith("sat") else "contree"


def _kernel_groups() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The kernel groups the hybrid search loads (the table of searches says which): ConTree's
    to start, then its later ones and Blossom's (the primal arm)."""
    from ..dp.kernels import kernels_of

    mine = kernels_of("hybrid")
    return mine.start, (*mine.later, *_primal_groups())


def _primal_groups() -> tuple[str, ...]:
    """The primal arm's kernel groups, Blossom's, and the greedy tree's, which the local
    improvement grows (from the table of searches)."""
    from ..dp.kernels import kernels_of

    return (*kernels_of("blossom").start, *kernels_of("greedy").start)


class _Kernels:
    """ConTree's kernels, loaded in a helper thread while SAT runs (or compiled in the
    background first, on a first run: :mod:`satdt.dp.kernels`). Nothing happens before the
    first :meth:`ready` (finding Numba's cache imports Numba, a fifth of a second)."""

    def __init__(self) -> None:
        self.loading: Loading | None = None
        self.compiles_here: bool | None = None  # None: not asked yet

    def ready(self) -> bool:
        """Whether ConTree can run now; starts loading the kernels once they are compiled
        (or compiling them in this process, where no background process can or did)."""
        from ..dp import kernels  # not before: SAT settles the small problems alone

        # ConTree's groups from the table of searches; its depth-two kernel and Blossom's
        # (for the primal arm) are used once ready
        first, later = _kernel_groups()
        if self.compiles_here is None:
            self.compiles_here = not kernels.request(first + later)
        if self.loading is None and not self.compiles_here and kernels.failed(first):
            self.compiles_here = True
        if self.loading is None and (self.compiles_here or kernels.ready(first)):
            self.loading = kernels.load_in_background(first, then=later)
        return self.loading is not None and self.loading.done()


class _Sat:
    """The SAT arm: the counterexample-guided loops over the binary features, one per depth."""

    def __init__(self, task: Task, max_leaves: int | None, sized: bool) -> None:
        from ..sat.problem import Problem
        from ..sat.search import LoopSearch

        data = task.data
        B = data.binary().B
        self.problem = Problem.from_data(B, data.y, data.n_classes, data.classes)
        self.data = data
        self.search: LoopSearch = LoopSearch(
            self.problem, {}, task.deadline, task.recorder, max_leaves, sized
        )
        self.stats = self.search.stats

    def decide(self, depth: int, until: float | None) -> Decision:
        """One slice of "is there a consistent tree of depth ``depth``?" (a tree over the user's
        columns when there is)."""
        self.search.set_deadline(until)
        outcome = self.search.settle(depth)
        if outcome.status == "SAT":
            return Decision("SAT", self.user_tree(outcome.tree))
        if outcome.status == "UNSAT":
            self.search.close(depth)
        return Decision(outcome.status)

    def user_tree(self, tree: Tree) -> Tree:
        return self.data.user_tree(tree.simplify(self.problem.B))

    def refuted(self, depth: int) -> None:
        """Depths up to ``depth`` have no consistent tree: their loops are of no more use."""
        for k in [k for k in self.search.loops if k <= depth]:
            self.search.close(k)

    def fewer_leaves(
        self,
        depth: int,
        upper: int,
        lower: int,
        until: float | None,
        *,
        on_tree: Callable[[Tree, str], None],
    ) -> tuple[int, bool]:
        """One slice of the fewest leaves at ``depth`` (``upper`` achieved, ``lower`` proven):
        the proven lower bound after it and whether it is the minimum; trees go to
        ``on_tree``."""
        from ..sat.search import minimise_leaves

        self.search.set_deadline(until)
        return minimise_leaves(
            self.search,
            depth,
            upper,
            lower,
            self.search.counter,
            "descending",
            lambda tree: on_tree(self.user_tree(tree), "sat"),
        )

    def close(self) -> None:
        self.search.finish()


class ConsistencyPortfolio:
    """Minimum depth, minimum size and the Pareto front by SAT and ConTree in turns.

    Parameters
    ----------
    task
        The fit's task (consistency objective; data without missing values when ConTree runs).
    use_sat, use_contree
        Which searches take turns (``method="sat"`` and ``"contree"`` run one alone through
        the same code).
    """

    def __init__(self, task: Task, *, use_sat: bool = True, use_contree: bool = True) -> None:
        self.task = task
        self.data = data = task.data
        self.recorder = task.recorder
        self.deadline = task.deadline
        self.objective = task.objective
        self.max_depth = task.max_depth
        self.max_leaves = None if task.max_nodes is None else max(0, (task.max_nodes + 1) // 2)
        self.n_present = int(np.unique(data.y).size)
        self.lower = depth_lower_bound(self.n_present)
        self.best: Tree | None = None  # the shallowest admissible tree found
        self.best_by = ""
        # whether the depth phase records the trees it finds: not where the objective is
        # the size at the minimum depth, which only the depth phase's end tells
        self.recording = task.objective == "depth" or task.max_depth is not None
        self.leaf_bound: int | None = None  # the fewest leaves proven, once sizes are searched
        self.size_bounds = task.objective == "size"  # whether leaf bounds bound the objective
        self.stats = HybridStats(rows=len(data.y))
        self.spent: dict[str, float] = defaultdict(float)  # seconds per arm
        self.share = {"sat": 1.0, "contree": 1.0}  # per search
        self.since = {"sat": 0.0, "contree": 0.0}  # seconds per search since a settlement
        self.arm_share: dict[str, float] = defaultdict(lambda: 1.0)  # within ConTree's share
        self.arm_since: dict[str, float] = defaultdict(float)  # seconds since a settlement
        self.last_arm = ""  # the arm that ran last
        self.kernels = _Kernels() if use_contree else None
        self.dp: ConsistencyDP | None = None
        self.primal: QuantilePrimal | None = None  # the primal arm at the top arm's depth
        self.improve: LocalImprovement | None = None  # the local improvement of the best tree
        self.cores: CoreBound | None = None  # the lower bounds from cores
        self.sat: _Sat | None = None
        # both sides record trees over the user's columns; the map is for the SAT loop's trace
        self.recorder.begin(data.user_tree)
        if use_sat and (not use_contree or self._full_thresholds_fit()):
            self.sat = _Sat(task, self.max_leaves, sized=task.objective == "size")
            self.stats.binary_features = int(self.sat.problem.B.shape[1])
            share = SAT_CELLS / max(self.sat.problem.B.size, 1)
            self.share["sat"] = min(1.0, max(MIN_SHARE, share))
            self.stats.sat = self.sat.stats
        self.alone = LOAD_AFTER * self.share["sat"] ** 3  # SAT alone before ConTree loads
        self.recorder.stats = self.stats

    def _full_thresholds_fit(self) -> bool:
        """Whether the binary features of every threshold fit the memory budget, so that
        SAT's refutations hold for the numeric columns too."""
        data = self.data
        return data.max_thresholds is None and data.full_threshold_count() <= data.feature_budget

    # ------------------------------------------------------------------ bookkeeping
    def _admissible(self, tree: Tree) -> bool:
        return (self.max_depth is None or tree.depth <= self.max_depth) and (
            self.max_leaves is None or tree.n_leaves <= self.max_leaves
        )

    def _prove(self, depth: int, answer: str, by: str, leaves: int | None = None) -> None:
        """Keep what was settled, and say it on the status line; the search that settled it
        gets a larger share of the core, the other, if it ran meanwhile, a smaller one."""
        if by in ("sat", "contree", "blossom", "cores", "improve"):
            kind = _search_of(by)
            other = "contree" if kind == "sat" else "sat"
            if self.since[other] > 0:  # a race the other lost (alone, nothing is learnt)
                self.share[other] = max(MIN_SHARE, self.share[other] / 2)
                self.share[kind] = min(1.0, self.share[kind] * 2)
            self.since = {"sat": 0.0, "contree": 0.0}
            self._race(self.last_arm)
        self.stats.proofs.append(Proof(depth, answer, by, self.recorder.elapsed(), leaves))
        what = f"depth {depth}" if leaves is None else f"depth {depth}, under {leaves} leaves"
        verdict = "a consistent tree" if answer == "found" else "no consistent tree"
        self.recorder.event(Progress(f"{what}: {verdict} ({SEARCH_NAMES[by]})"))

    def _record(self, tree: Tree, by: str) -> None:
        """A consistent, admissible tree over the user's columns: the incumbent when it is
        better (its depth, or its number of nodes for the size objectives)."""
        value = OBJECTIVES[self.objective].value_of(tree, 0.0)
        if self.recorder.improve(tree, value, mapped=True) is not None:
            self.stats.found_by = by

    def _race(self, winner: str) -> None:
        """ConTree's arm ``winner`` settled a question: the arms it races (see
        :data:`UPPER_ARMS`) that ran meanwhile without settling one get half their share of
        ConTree's time, the winner twice its own."""
        if winner in LOWER_ARMS:
            losers = UPPER_ARMS
        elif winner in UPPER_ARMS:
            losers = UPPER_ARMS + LOWER_ARMS
        else:
            return
        for arm in losers:
            if arm != winner and self.arm_since[arm] > 0:
                self.arm_share[arm] = max(MIN_SHARE, self.arm_share[arm] / 2)
        self.arm_share[winner] = min(1.0, self.arm_share[winner] * 2)
        self.arm_since.clear()

    def _found(self, tree: Tree, by: str, depth: int) -> None:
        """A consistent tree of depth at most ``depth`` was found."""
        self._prove(depth, "found", by)
        if not self._admissible(tree):
            return
        if self.best is None or tree.depth < self.best.depth:
            self.best, self.best_by = tree, by
            if self.improve is not None:
                self.improve.offer(tree)
        if self.recording:
            self._record(tree, by)

    def _refuted(self, depth: int, by: str) -> None:
        """No consistent tree of depth at most ``depth`` exists (proven)."""
        self._prove(depth, "none", by)
        if depth + 1 > self.lower:
            self.lower = depth + 1
            self.stats.lower_bound_by = by
            if self.objective == "depth":
                self.recorder.raise_lower_bound(self.lower)
        if self.sat is not None:
            self.sat.refuted(depth)

    def _time_left(self) -> None:
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            raise TimeUp

    def _slice(self, arm: str) -> float | None:
        """The end of the arm's next turn: as long as the arm has run so far, and for SAT
        alone no further than the moment ConTree's kernels start loading."""
        turn = max(FIRST_SLICE, self.spent[arm])
        if _search_of(arm) == "sat" and self.kernels is not None and self.kernels.loading is None:
            turn = min(turn, max(FIRST_SLICE, self.alone - self.stats.sat_seconds))
        until = time.perf_counter() + turn
        return until if self.deadline is None else min(until, self.deadline)

    def _dp_ready(self) -> bool:
        """Whether ConTree can take turns (building its view of the data once the kernels
        are loaded)."""
        if self.kernels is None or (self.sat is not None and self.stats.sat_seconds < self.alone):
            return self.dp is not None
        asked = self.kernels.compiles_here is not None
        ready = self.dp is not None or self.kernels.ready()
        if not asked and not ready:  # a first run: say why ConTree is not there yet
            what = "in the background" if not self.kernels.compiles_here else "here"
            meanwhile = "; SAT meanwhile" if self.sat is not None else ""
            self.recorder.event(
                Progress(f"compiling ConTree's kernels {what} (first run only){meanwhile}")
            )
        if self.dp is None and ready:
            from ..dp.consistent import ConsistencyDP

            started = time.perf_counter()
            data = self.data
            self.dp = ConsistencyDP(
                data.X,
                data.y,
                data.n_classes,
                column_values=data.column_values(),
                max_cache_mb=float(self.task.options.get("max_cache_mb", 512)),
                check_time=self._time_left,
            )
            self.spent["contree"] += time.perf_counter() - started
        return self.dp is not None

    def _loading(self, arms: list[tuple[str, Callable[[float | None], Any]]]) -> None:
        """While ConTree's kernels load, its turns are waits that leave the core (and the
        GIL, which loading holds for long stretches) to the loading thread; SAT keeps its
        share meanwhile (running SAT beside the loading delays both: measured)."""
        if self.dp is None and self.kernels is not None and self.kernels.loading is not None:
            arms.append(("contree-load", self._wait))

    def _wait(self, until: float | None) -> None:
        pause = _POLL if until is None else max(0.0, min(_POLL, until - time.perf_counter()))
        time.sleep(pause)

    def _share(self, arm: str) -> float:
        """An arm's share of the core: its search's, times its own within the search."""
        return self.share[_search_of(arm)] * self.arm_share[arm]

    def _turn(self, arms: list[tuple[str, Callable[[float | None], Any]]]) -> tuple[str, Any]:
        """Give the next turn to the arm that has run least for its search's share; returns
        its name and answer. With no arm able to run (ConTree's kernels still compiling, no
        SAT), waits a moment."""
        self._time_left()
        self._loading(arms)
        if not arms:
            time.sleep(_POLL)
            return "", None
        name, run = min(arms, key=lambda arm: self.spent[arm[0]] / self._share(arm[0]))
        started = time.perf_counter()
        self.last_arm = name
        try:
            answer = run(self._slice(name))
        finally:
            seconds = time.perf_counter() - started
            self.spent[name] += seconds
            self.stats.arm_seconds[name] = self.spent[name]
            self.arm_since[name] += seconds
            kind = _search_of(name)
            self.since[kind] += seconds
            setattr(self.stats, f"{kind}_seconds", getattr(self.stats, f"{kind}_seconds") + seconds)
        return name, answer

    # ------------------------------------------------------------------ the first tree
    def _first_tree(self) -> None:
        """The incumbent the search starts from: the caller's (a greedy tree of a large
        table), else a greedy Gini tree grown to purity on the numeric columns (as CART)."""
        best = self.recorder.best
        if best is not None:
            self.best, self.best_by = best.model, "greedy"
            self._prove(best.model.depth, "found", "greedy")
            return
        from ..dp.greedy import greedy_numeric_tree

        data = self.data
        grown = greedy_numeric_tree(data.X, data.y, data.n_classes, deadline=self.deadline)
        tree = data.finish(grown)
        if tree.count_error() == 0:  # always, once contradictions are settled
            self._found(tree, "greedy", tree.depth)

    # ------------------------------------------------------------------ minimum depth
    def _depth_cap(self) -> int | None:
        """The deepest admissible tree: ``max_depth``, and a tree of L leaves has depth at
        most L - 1."""
        caps = [self.max_depth, None if self.max_leaves is None else self.max_leaves - 1]
        known = [cap for cap in caps if cap is not None]
        return min(known) if known else None

    def _upper(self) -> int:
        """The depth below which a tree is still wanted: the best tree's, or one past the cap."""
        if self.best is not None:
            return self.best.depth
        cap = self._depth_cap()
        if cap is None:
            raise RuntimeError("internal error: no first tree and no depth cap")
        return cap + 1

    def _depth_arms(self) -> list[tuple[str, Callable[[float | None], Any]]]:
        low, top = self.lower, self._upper() - 1
        arms: list[tuple[str, Callable[[float | None], Any]]] = []
        if self._dp_ready():
            dp, cap = self.dp, self.max_leaves
            cores = self._cores()
            if cores is None:  # a node cap: the whole table's decision at the bottom
                arms.append(("contree-bottom", lambda until: (low, dp.decide(low, until, cap))))
            else:
                arms.append(("contree-cores", lambda until: (low, cores.advance(low, until))))
            if top > low:
                arms.append(("contree-top", lambda until: (top, dp.decide(top, until, cap))))
            primal = self._primal_at(top) if top > low else None
            if primal is not None:
                arms.append(("contree-primal", lambda until: (top, primal.advance(until))))
            improve = self._improver() if top > low else None
            if improve is not None:
                arms.append(("contree-improve", lambda until: (top, improve.advance(until, low))))
        if self.sat is not None:
            arms.append(("sat", lambda until: (low, self.sat.decide(low, until))))
        return arms

    def _primal_at(self, depth: int) -> QuantilePrimal | None:
        """The primal arm's search at ``depth`` (from :data:`PRIMAL_DEPTH` on, without a node
        cap, once Blossom's kernels are loaded; None once its grids are exhausted)."""
        from ..dp import kernels

        if depth < PRIMAL_DEPTH or self.max_leaves is not None:
            return None
        if not all(kernels.loaded(group) for group in _primal_groups()):
            return None
        if self.primal is None or self.primal.depth != depth:
            from ..dp.consistent import QuantilePrimal

            data = self.data
            self.primal = QuantilePrimal(data.X, data.y, data.n_classes, depth)
        return None if self.primal.exhausted else self.primal

    def _later_loaded(self) -> bool:
        """Whether the kernels the primal arm and the local improvement run on are loaded."""
        from ..dp import kernels

        return all(kernels.loaded(group) for group in _primal_groups())

    def _cores(self) -> CoreBound | None:
        """The lower bounds from cores (without a node cap)."""
        if self.max_leaves is not None:
            return None
        if self.cores is None:
            from ..dp.cores import CoreBound

            data = self.data
            self.cores = CoreBound(
                data.X,
                data.y,
                data.n_classes,
                max_cache_mb=float(self.task.options.get("max_cache_mb", 512)) / 2,
            )
            self.stats.cores = self.cores.stats
        return self.cores

    def _improver(self) -> LocalImprovement | None:
        """The local improvement of the best tree (without a node cap, once its kernels are
        loaded; None once it has nothing more to try)."""
        if self.max_leaves is not None or self.best is None or not self._later_loaded():
            return None
        if self.improve is None:
            from ..dp.improve import LocalImprovement

            data = self.data
            self.improve = LocalImprovement(
                data.X, data.y, data.n_classes, self.best, deadline=self.deadline
            )
            self.stats.improve = self.improve.stats
        return None if self.improve.exhausted else self.improve

    def _depth_phase(self) -> None:
        """Raise ``lower`` and lower the best tree's depth until they meet."""
        while self.lower < self._upper():
            name, result = self._turn(self._depth_arms())
            if result is None:
                continue
            depth, answer = result
            by = _ARM_SEARCH.get(name, "contree")
            if answer.status == "SAT":
                tree = answer.tree if by == "sat" else self.data.finish(answer.tree)
                self._found(tree, by, tree.depth if by == "improve" else depth)
            elif answer.status == "UNSAT":
                self._refuted(depth, by)

    def minimum_depth(self) -> SearchResult:
        """The minimum-depth consistent tree (the ``depth`` objective)."""
        timed_out = False
        self.recorder.raise_lower_bound(self.lower)  # one leaf per class
        try:
            self._first_tree()
            self._depth_phase()
        except TimeUp:
            timed_out = True
        finally:
            self._finish()
        return self._result(timed_out, self.lower)

    def _finish(self) -> None:
        """Record the best tree if nothing is recorded yet (a search stopped before its end),
        close the SAT loops and keep both searches' counters."""
        if self.best is not None and self.recorder.best is None:
            self._record(self.best, self.best_by)
        if self.sat is not None:
            self.sat.close()
            self.stats.sat = self.sat.stats
        if self.dp is not None:
            self.stats.contree = self.dp.stats()

    def _result(self, timed_out: bool, lower: float) -> SearchResult:
        """The result, or the error of a search that ends without an admissible tree."""
        recorder = self.recorder
        if recorder.best is None:
            raise no_consistent_tree(self.max_depth, self.max_leaves, self.lower, timed_out)
        recorder.lower_bound = lower
        proven = not timed_out and lower >= recorder.best.value
        if proven and self.objective == "depth":
            self.stats.lower_bound_by = self.stats.lower_bound_by or "classes"
        return recorder.snapshot(proven_optimal=proven)

    # ------------------------------------------------------------------ minimum size
    def _leaves_proven(self, leaves: int) -> None:
        """No consistent tree of the size phase's depth has fewer than ``leaves`` leaves; for
        the size objective, a bound on its nodes (the Pareto front records none)."""
        self.leaf_bound = leaves
        if self.size_bounds:
            self.recorder.raise_lower_bound(2 * leaves - 1)

    def _size_phase(self, depth: int, upper: Tree) -> Tree:
        """The consistent tree of depth at most ``depth`` with the fewest leaves, from
        ``upper`` (an admissible tree of that depth or less); every smaller tree is recorded.
        Raises :class:`TimeUp` with ``self.leaf_bound`` holding the bound proven so far."""
        best = [upper]
        self._leaves_proven(leaf_lower_bound(self.n_present, self.lower))

        def improve(tree: Tree, by: str) -> None:
            if tree.depth <= depth and tree.n_leaves < best[-1].n_leaves and self._admissible(tree):
                best.append(tree)
                self._prove(depth, "found", by, leaves=best[-2].n_leaves)
                self._record(tree, by)

        while self.leaf_bound < best[-1].n_leaves:
            arms: list[tuple[str, Callable[[float | None], Any]]] = []
            leaves = best[-1].n_leaves
            if self._dp_ready():
                arms.append(("contree-size", partial(self.dp.fewer_leaves, depth, leaves)))
            if self.sat is not None:
                sat = partial(
                    self.sat.fewer_leaves, depth, leaves, self.leaf_bound, on_tree=improve
                )
                arms.append(("sat-size", sat))
            name, answer = self._turn(arms)
            if answer is None:
                continue
            if name == "sat-size":
                lower, proven = answer
                self._leaves_proven(max(self.leaf_bound, best[-1].n_leaves if proven else lower))
                if proven:
                    self._prove(depth, "none", "sat", leaves=best[-1].n_leaves)
                continue
            if answer.tree is not None:
                improve(self.data.finish(answer.tree), "contree")
            if answer.status == "SAT" or answer.status == "UNSAT":
                self._leaves_proven(best[-1].n_leaves)
                self._prove(depth, "none", "contree", leaves=best[-1].n_leaves)
        return best[-1]

    def minimum_size(self) -> SearchResult:
        """The consistent tree with the fewest nodes: at the minimum depth, or (``max_depth``)
        among every tree of depth at most ``max_depth``."""
        timed_out = False
        try:
            self._first_tree()
            self._depth_phase()
            if self.best is not None:
                self._record(self.best, self.best_by)
                upper = self.recorder.best.model if self.recorder.best else self.best
                target = self.best.depth if self.max_depth is None else self.max_depth
                self._size_phase(target, upper)
        except TimeUp:
            timed_out = True
        finally:
            self._finish()
        leaves = self.leaf_bound or leaf_lower_bound(self.n_present, self.lower)
        return self._result(timed_out, 2 * leaves - 1)

    def pareto_front(self) -> tuple[list[ParetoPoint], str]:
        """For each depth from the minimum to ``max_depth`` (default: the minimum + 2), the
        fewest nodes of a consistent tree of at most that depth; stops early once the L
        leaves at depth d satisfy L <= d + 2 (a deeper tree has at least d + 2 leaves)."""
        last, self.max_depth, self.recording = self.max_depth, None, False
        self.size_bounds = False
        try:
            self._first_tree()
            self._depth_phase()
        except TimeUp:
            self._finish()
            raise no_consistent_tree(last, None, self.lower, True) from None
        depth = self.best.depth
        last = depth + 2 if last is None else last
        if depth > last:
            self._finish()
            raise no_consistent_tree(last, None, self.lower, False)
        points: list[ParetoPoint] = []
        reason = f"reached the last depth asked for ({last})"
        smallest = self.best
        self._record(smallest, self.best_by)
        try:
            for d in range(depth, last + 1):
                try:
                    smallest = self._size_phase(d, smallest)
                except TimeUp:
                    smallest = self.recorder.best.model
                    points.append(ParetoPoint(d, smallest.n_nodes, smallest, False))
                    reason = "time limit: the last point is not proven"
                    break
                points.append(ParetoPoint(d, smallest.n_nodes, smallest, True))
                ended = front_ends_after(d, smallest.n_leaves)
                if ended:
                    reason = ended
                    break
        finally:
            self._finish()
        return points, reason


def solve(task: Task, *, use_sat: bool = True, use_contree: bool = True) -> SearchResult:
    """Run the consistency objective of ``task`` (``"depth"`` or ``"size"``) by the portfolio."""
    portfolio = ConsistencyPortfolio(task, use_sat=use_sat, use_contree=use_contree)
    if task.objective == "size":
        return portfolio.minimum_size()
    return portfolio.minimum_depth()


def pareto_front(
    task: Task, *, use_sat: bool = True, use_contree: bool = True
) -> tuple[list[ParetoPoint], str]:
    """The depth/size Pareto front of ``task``'s data by the portfolio."""
    return ConsistencyPortfolio(task, use_sat=use_sat, use_contree=use_contree).pareto_front()
