"""What every search returns: :class:`SearchResult`, and the :class:`Recorder` searches report to.

A search never prints. It reports each new incumbent model and other events (a SAT call, a
restart, a bound, a preparation step) to a :class:`Recorder`, which keeps the history, maps
models to the user's features (searches work on prepared data) and calls the user's
``on_improve(result)`` / ``on_event(event)`` callbacks. Each method keeps its counters in a
typed statistics object (a :class:`Stats` subclass), so results pickle and are documented.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, NamedTuple

from .tree import Tree


class Incumbent(NamedTuple):
    """One improvement of the best tree: when (seconds since the start), its objective value, the tree."""

    elapsed: float
    value: float
    tree: Tree


@dataclass(frozen=True)
class Event:
    """Something a search reports besides a new incumbent; subclasses say what."""

    kind: ClassVar[str] = "event"


@dataclass(frozen=True)
class Progress(Event):
    """A step of data preparation or of a search: ``done`` of ``total`` (0 when unknown)."""

    kind: ClassVar[str] = "progress"
    step: str
    done: float = 0.0
    total: float = 0.0


@dataclass(frozen=True)
class SatCall(Event):
    """One call of the SAT solver in a counterexample-guided search.

    ``status`` is ``"SAT"``, ``"UNSAT"`` or ``"UNKNOWN"`` (stopped by the time limit);
    ``counterexamples`` are the 0-based training rows added after this call, with their labels.
    """

    kind: ClassVar[str] = "sat_call"
    depth: int
    round: int
    n_examples: int
    n_vars: int
    n_clauses: int
    status: str
    time: float
    max_leaves: int | None = None
    counterexamples: tuple[tuple[int, Any], ...] = ()


@dataclass(frozen=True)
class Restart(Event):
    """One restart of CA-DL8.5 (Kiossou, Nijssen & Schaus, Algorithm 2, lines 6-11).

    ``rule`` and ``limit`` are the pruning rule and its threshold during the restart
    (discrepancies, k, gain gap or minimum purity); ``error`` the incumbent's error after it
    (``inf``: no tree yet); ``complete`` whether nothing was pruned by the rule, which proves
    the incumbent optimal; ``time`` the restart's seconds; ``cache_entries`` the cache size
    after it.
    """

    kind: ClassVar[str] = "restart"
    number: int
    rule: str
    limit: float
    error: float
    complete: bool
    time: float
    cache_entries: int = 0


@dataclass
class Stats:
    """Counters every method has; methods extend it with their own (see ``as_dict``)."""

    interrupted: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The counters as a JSON-ready dictionary."""
        return asdict(self)


@dataclass
class SatStats(Stats):
    """Counters of the counterexample-guided SAT searches."""

    rows: int = 0
    binary_features: int = 0
    sat_calls: int = 0
    examples_used: int = 0
    solve_time: float = 0.0
    settled_without_sat_call: list[int] = field(default_factory=list)


@dataclass
class DPStats(Stats):
    """Counters of the dynamic-programming searches over binary features."""

    rows: int = 0
    distinct_rows: int = 0
    features: int = 0
    features_used: int = 0
    irreducible_error: float = 0.0
    expansions: int = 0
    bottom_solves: int = 0
    backtracks: int = 0
    cuts: int = 0
    similarity_cuts: int = 0
    complete_trees: int = 0


@dataclass
class DL85Stats(DPStats):
    """Counters of DL8.5 and CA-DL8.5: search nodes, the cache of solved branches, restarts.

    ``cache_full`` says that the cache reached ``max_cache_mb`` and stopped storing new
    branches (those are recomputed when met again; the search stays exact).
    """

    nodes: int = 0
    cache_hits: int = 0
    cache_entries: int = 0
    cache_mb: float = 0.0
    cache_full: bool = False
    restarts: int = 0


@dataclass
class Preparation:
    """What data preparation did: the features a search saw and how they were chosen."""

    rows: int = 0
    binary_features_total: int = 0
    binary_features: int = 0
    binarization: str = ""
    relabelled_rows: int = 0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SearchResult:
    """The outcome of a search.

    Attributes
    ----------
    objective
        ``"depth"``, ``"size"`` or ``"error"``.
    tree
        The best tree found (simplified, over the user's design matrix).
    objective_value
        Its depth, node count or training error.
    lower_bound
        A proven lower bound on the optimum (equal to ``objective_value`` when proven).
    proven_optimal
        Whether the search proved that no better tree exists.
    runtime
        Wall-clock seconds.
    history
        Every incumbent as ``(elapsed seconds, objective value, tree)``.
    events
        Everything else the search reported, in order (:class:`SatCall`, :class:`Progress`, ...).
    stats
        The method's counters (a :class:`Stats` subclass such as :class:`SatStats`).
    preparation
        What data preparation did (:class:`Preparation`).
    """

    objective: str
    tree: Tree
    objective_value: float
    lower_bound: float
    proven_optimal: bool
    runtime: float
    history: tuple[Incumbent, ...] = ()
    events: tuple[Event, ...] = ()
    stats: Stats = field(default_factory=Stats)
    preparation: Preparation = field(default_factory=Preparation)

    @property
    def trace(self) -> tuple[SatCall, ...]:
        """The SAT calls among the events (empty for searches that call no SAT solver)."""
        return tuple(event for event in self.events if isinstance(event, SatCall))

    @property
    def depth(self) -> int:
        return self.tree.depth

    @property
    def n_nodes(self) -> int:
        return self.tree.n_nodes

    @property
    def n_leaves(self) -> int:
        return self.tree.n_leaves


class Recorder:
    """Collects what a search reports and turns it into :class:`SearchResult` snapshots.

    Parameters
    ----------
    objective
        The objective being optimised.
    to_user_tree
        Maps a tree found by the search (over binary features) to the tree returned to the user.
    start
        ``time.perf_counter()`` value the clock counts from (default: now).
    on_improve
        Called with a snapshot on every new incumbent.
    on_event
        Called with every :class:`Event` (live status lines, ``--trace``).

    A search sets ``stats`` to its own :class:`Stats` subclass when it starts.
    """

    def __init__(
        self,
        objective: str,
        *,
        to_user_tree: Callable[[Tree], Tree] | None = None,
        on_improve: Callable[[SearchResult], None] | None = None,
        on_event: Callable[[Event], None] | None = None,
        start: float | None = None,
    ) -> None:
        self.objective = objective
        self.start = time.perf_counter() if start is None else start
        self.to_user_tree = to_user_tree or (lambda tree: tree)
        self._on_improve = on_improve
        self._on_event = on_event
        self.history: list[Incumbent] = []
        self.events: list[Event] = []
        self.lower_bound: float = 0.0
        self.stats: Stats = Stats()
        self.preparation = Preparation()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    @property
    def best(self) -> Incumbent | None:
        return self.history[-1] if self.history else None

    def improve(self, tree: Tree, value: float, *, mapped: bool = False) -> Tree | None:
        """Record a new incumbent and return it as the user sees it.

        ``tree`` is a tree of the search, mapped with ``to_user_tree``, or already over the
        user's columns when ``mapped``. A tree no better than the incumbent is ignored
        (``None`` is returned), so the history strictly improves.
        """
        if self.history and value >= self.history[-1].value:
            return None
        user_tree = tree if mapped else self.to_user_tree(tree)
        self.history.append(Incumbent(self.elapsed(), value, user_tree))
        if self._on_improve is not None:
            self._on_improve(self.snapshot(proven_optimal=False))
        return user_tree

    @property
    def trace(self) -> list[SatCall]:
        """The SAT calls reported so far."""
        return [event for event in self.events if isinstance(event, SatCall)]

    def event(self, event: Event) -> None:
        """Record an event and pass it to ``on_event``."""
        self.events.append(event)
        if self._on_event is not None:
            self._on_event(event)

    def snapshot(self, *, proven_optimal: bool) -> SearchResult:
        """The result as it stands: the last incumbent, the bound proven so far."""
        best = self.best
        if best is None:
            raise RuntimeError("no incumbent recorded yet")
        lower_bound = best.value if proven_optimal else min(self.lower_bound, best.value)
        return SearchResult(
            objective=self.objective,
            tree=best.tree,
            objective_value=best.value,
            lower_bound=lower_bound,
            proven_optimal=proven_optimal,
            runtime=self.elapsed(),
            history=tuple(self.history),
            events=tuple(self.events),
            stats=copy.deepcopy(self.stats),
            preparation=copy.deepcopy(self.preparation),
        )
