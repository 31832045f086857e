"""What a search reports besides its incumbents."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..models.tree import Tree

if TYPE_CHECKING:
    pass


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
class LowerBound(Event):
    """The proven lower bound on the objective rose to ``value``, ``elapsed`` seconds after
    the start (:meth:`satdt.task.result.Recorder.raise_lower_bound`)."""

    kind: ClassVar[str] = "lower_bound"
    value: float
    elapsed: float


@dataclass(frozen=True)
class SatCall(Event):
    """One call of the SAT solver in a counterexample-guided search.

    ``status`` is ``"SAT"``, ``"UNSAT"`` or ``"UNKNOWN"`` (stopped by the time limit);
    ``counterexamples`` are the 0-based training rows added after this call, with their labels.
    After a SAT answer, ``tree`` is the tree of the solver's model (over the user's columns,
    simplified on the training rows, with their counts: the counterexamples are among the
    rows it gets wrong); :func:`satdt.plot.plot_loop` draws it. The search records it as
    ``found``, a function that builds it when first asked for (mapping a tree onto every
    training row costs tens of milliseconds on large tables, every SAT call).
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
    found: Tree | Callable[[], Tree] | None = field(default=None, compare=False, repr=False)

    @property
    def tree(self) -> Tree | None:
        """The tree this call found (``None`` after UNSAT), built on first use."""
        found = self.found
        if callable(found):
            found = found()
            object.__setattr__(self, "found", found)
        return found

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and copied with its tree built (not with the function and its data)."""
        return {**self.__dict__, "found": self.tree}


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
