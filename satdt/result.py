"""What every search returns: :class:`SearchResult`, and the :class:`Recorder` searches report to.

A search (SAT or DP) never prints. It reports each new incumbent tree and each SAT call to a
:class:`Recorder`, which keeps the history, maps trees to the user's features (searches work on
binary features) and calls the user's ``on_improve(result)`` callback with a snapshot.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .tree import Tree


class Incumbent(NamedTuple):
    """One improvement of the best tree: when (seconds since the start), its objective value, the tree."""

    elapsed: float
    value: float
    tree: Tree


@dataclass(frozen=True)
class SatCall:
    """One call of the SAT solver in a counterexample-guided search.

    ``status`` is ``"SAT"``, ``"UNSAT"`` or ``"UNKNOWN"`` (stopped by the time limit);
    ``counterexamples`` are the 0-based training rows added after this call, with their labels.
    """

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
    trace
        One :class:`SatCall` per SAT solver call (empty for DP searches).
    stats
        Method-specific counters (examples used, SAT calls, binary features, ...).
    """

    objective: str
    tree: Tree
    objective_value: float
    lower_bound: float
    proven_optimal: bool
    runtime: float
    history: tuple[Incumbent, ...] = ()
    trace: tuple[SatCall, ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)

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
    on_improve
        Called with a snapshot on every new incumbent.
    on_sat_call
        Called with every :class:`SatCall` (live status lines).
    """

    def __init__(
        self,
        objective: str,
        *,
        to_user_tree: Callable[[Tree], Tree] | None = None,
        on_improve: Callable[[SearchResult], None] | None = None,
        on_sat_call: Callable[[SatCall], None] | None = None,
    ) -> None:
        self.objective = objective
        self.start = time.perf_counter()
        self._to_user_tree = to_user_tree or (lambda tree: tree)
        self._on_improve = on_improve
        self._on_sat_call = on_sat_call
        self.history: list[Incumbent] = []
        self.trace: list[SatCall] = []
        self.lower_bound: float = 0.0
        self.stats: dict[str, Any] = {}

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    @property
    def best(self) -> Incumbent | None:
        return self.history[-1] if self.history else None

    def improve(self, tree: Tree, value: float) -> Tree:
        """Record a new incumbent (a tree of the search) and return it as the user sees it."""
        user_tree = self._to_user_tree(tree)
        self.history.append(Incumbent(self.elapsed(), value, user_tree))
        if self._on_improve is not None:
            self._on_improve(self.snapshot(proven_optimal=False))
        return user_tree

    def sat_call(self, call: SatCall) -> None:
        self.trace.append(call)
        if self._on_sat_call is not None:
            self._on_sat_call(call)

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
            trace=tuple(self.trace),
            stats=dict(self.stats),
        )
