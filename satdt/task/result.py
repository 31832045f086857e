"""What every search returns: :class:`SearchResult`, and the :class:`Recorder` searches report to.

A search never prints. It reports each new incumbent model and other events (a SAT call, a
restart, a bound, a preparation step) to a :class:`Recorder`, which keeps the history, maps
models to the user's features (searches work on prepared data) and calls the user's
``on_improve(result)`` / ``on_event(event)`` callbacks. Each method keeps its counters in a
typed statistics object (a :class:`Stats` subclass), so results pickle and are documented.
"""

from __future__ import annotations

import copy
import math
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..core.errors import REMOVED_IN, SatdtError
from ..models.tree import Tree
from ..prepare.costs import model_cost
from .events import Event, LowerBound, Progress, SatCall
from .stats import Preparation, Stats

if TYPE_CHECKING:
    import numpy

    from ..models.base import Model


def _deprecated_tree(owner: str) -> None:
    warnings.warn(
        f"{owner}.tree is deprecated (it may hold a diagram) and stops working in satdt "
        f"{REMOVED_IN}: use {owner}.model",
        FutureWarning,
        stacklevel=3,
    )


class Incumbent(NamedTuple):
    """One improvement of the best model: when (seconds since the start), its objective value,
    the model (a tree, or a diagram for the diagram searches)."""

    elapsed: float
    value: float
    model: Model

    @property
    def tree(self) -> Model:
        """Deprecated alias of ``model``."""
        _deprecated_tree("Incumbent")
        return self.model


class Bound(NamedTuple):
    """The proven lower bound from a moment on: when (seconds since the start) and its value."""

    elapsed: float
    value: float


@dataclass(frozen=True)
class SearchResult:
    """The outcome of a search.

    The searches build it; each parameter is an attribute of the same name.

    Parameters
    ----------
    objective : str
        ``"depth"``, ``"size"`` or ``"error"``.
    model : Tree or Diagram
        The best model found: a tree (simplified, over the user's design matrix) or, for the
        diagram searches, a diagram. ``tree`` is a deprecated alias.
    objective_value : float
        The objective's value in its own formula: a depth; a node count; the weighted
        training error (``objective="error"``); with a leaf penalty λ, error / total weight +
        λ × leaves; for a diagram, objective (18), error / total weight + α × share of nodes
        used. ``training_error`` gives the weighted training error of any model.
    lower_bound : float
        A proven lower bound on the optimum (equal to ``objective_value`` when proven).
    proven_optimal : bool
        Whether the search proved that no better tree exists.
    runtime : float
        Wall-clock seconds.
    history : tuple, default ()
        Every incumbent as ``(elapsed seconds, objective value, model)``.
    events : tuple, default ()
        Everything else the search reported, in order (``SatCall``, ``Progress``, ...).
    stats : Stats, optional
        The method's counters (a ``Stats`` subclass such as ``SatStats``).
    preparation : Preparation, optional
        What data preparation did.
    gap : float, default 0.0
        The permitted gap a search completed with (ConTree's ``max_gap``, as a weight): the
        tree is then proven within ``gap`` of the optimum, though not optimal; 0 otherwise.
    stop_reason : str, default ""
        Why a search stopped before proving its model optimal, for people (``""`` when
        proven): the time limit, an interruption, or a time limit that passed while the
        search's kernels were still compiling on a first run (the model is then the greedy
        tree grown meanwhile).
    cost_matrix : ndarray, optional
        The fit's misclassification costs (``cost_matrix``, rows the true class in
        ``classes_`` order): ``objective_value`` and ``training_error`` are then costs.
    compiled_in_background : dict, default {}
        On a first run, the Numba kernel groups the fit had compiled in a background process
        (:func:`satdt.dp.kernels.background`), each ``"compiled"``, ``"compiling"`` (still at
        it when the fit returned: later runs load them) or ``"failed"``; empty when none was.
    lower_bounds : tuple, default ()
        The proven lower bound over time, the companion of ``history``: ``(elapsed seconds,
        bound)`` each time it rose, for the searches that prove bounds as they go (the
        consistency searches: each depth refuted raises the minimum depth's bound). With
        ``history`` (the upper bound over time) it gives the gap at every moment.
    """

    objective: str
    model: Model
    objective_value: float
    lower_bound: float
    proven_optimal: bool
    runtime: float
    history: tuple[Incumbent, ...] = ()
    events: tuple[Event, ...] = ()
    stats: Stats = field(default_factory=Stats)
    preparation: Preparation = field(default_factory=Preparation)
    gap: float = 0.0
    stop_reason: str = ""
    cost_matrix: numpy.ndarray | None = field(default=None, compare=False)
    compiled_in_background: dict[str, str] = field(default_factory=dict, compare=False)
    lower_bounds: tuple[Bound, ...] = ()

    @property
    def trace(self) -> tuple[SatCall, ...]:
        """The SAT calls among the events (empty for searches that call no SAT solver)."""
        return tuple(event for event in self.events if isinstance(event, SatCall))

    @property
    def depth(self) -> int:
        """The model's depth."""
        return self.model.depth

    @property
    def n_nodes(self) -> int:
        """The model's nodes: decision nodes and leaves (a diagram's terminals)."""
        return self.model.n_nodes

    @property
    def n_leaves(self) -> int:
        """The model's leaves (a diagram's terminals)."""
        return self.model.n_leaves

    @property
    def n_splits(self) -> int:
        """The model's decision nodes."""
        return self.model.n_splits

    @property
    def training_error(self) -> float:
        """The model's weighted training error (misclassified weight), the same word on trees
        and diagrams whatever the objective's unit; with a ``cost_matrix``, the weighted cost
        of the training rows' predictions."""
        if self.cost_matrix is not None:
            return model_cost(self.model, self.cost_matrix)
        return self.model.count_error()

    @property
    def tree(self) -> Model:
        """Deprecated alias of ``model``."""
        _deprecated_tree("SearchResult")
        return self.model

    def primal_integral(self, best_known: float, horizon: float | None = None) -> float:
        """The primal gap integral of this search's incumbents against ``best_known``.

        The anytime measure of Berthold (2013), used by Kiossou, Nijssen & Schaus to compare
        CA-DL8.5, DL8.5 and Blossom: the integral over ``[0, horizon]`` of the primal gap of
        the incumbent (1 before the first tree). Lower is better; divided by ``horizon`` it is
        the average gap of the tree one would get by stopping the search at a random moment.
        See :func:`primal_integral` for the definition and the checks.

        Parameters
        ----------
        best_known : float
            The best objective value known for the problem, e.g. the lowest error any method
            found (it may be below this search's own best, never above a value it reached).
        horizon : float, optional
            The time budget T in seconds; default: this search's ``runtime``.

        Returns
        -------
        float
            The integral, in seconds (between 0 and ``horizon``).
        """
        return primal_integral(
            self.history, best_known, self.runtime if horizon is None else horizon
        )


class Recorder:
    """Collects what a search reports and turns it into :class:`SearchResult` snapshots.

    Parameters
    ----------
    objective
        The objective being optimised.
    to_user_tree
        Maps a tree found by the search to the tree returned to the user (see :meth:`begin`,
        where the one that runs the search says it when it did not create the recorder).
    start
        ``time.perf_counter()`` value the clock counts from (default: now).
    on_improve
        Called with a snapshot on every new incumbent.
    on_event
        Called with every :class:`Event` (live status lines, ``--trace``).

    The one that runs a search says, once, how the search's trees map to the user's columns
    and the units of its values (:meth:`begin`); a search sets ``stats`` to its own
    :class:`Stats` subclass when it starts. Nothing else is set from outside: why a search
    stopped is an argument of :meth:`snapshot`.
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
        self._to_user_tree: Callable[[Tree], Tree] = to_user_tree or _unchanged
        self._value_scale = 1.0
        self._value_offset = 0.0
        self._cost_matrix: np.ndarray | None = None
        self._on_improve = on_improve
        self._on_event = on_event
        self.history: list[Incumbent] = []
        self.events: list[Event] = []
        self.lower_bound: float = 0.0
        self.lower_bounds: list[Bound] = []  # see raise_lower_bound
        self.gap = 0.0  # see SearchResult.gap
        self.stats: Stats = Stats()
        self.preparation = Preparation()

    def begin(
        self,
        to_user_tree: Callable[[Tree], Tree] | None = None,
        value_scale: float = 1.0,
        *,
        value_offset: float = 0.0,
        cost_matrix: np.ndarray | None = None,
    ) -> None:
        """Say how the search about to run reports: what its trees are to the user, and in
        what units its values come.

        Parameters
        ----------
        to_user_tree : callable, optional
            Maps a tree of the search (over binary features, or over the numeric columns)
            to the tree returned to the user (default: as the recorder was made).
        value_scale : float, default=1.0
            Searches record values in their own units (a penalised error: weight plus the
            penalty per leaf); snapshots show them times this scale (1 / total weight with a
            leaf penalty, so the value reads errors / total + leaf_penalty * leaves).
        value_offset : float, default=0.0
            With a cost matrix the searches' errors are the cost plus this constant
            (:mod:`satdt.prepare.costs`): snapshots subtract it (before scaling), so that values and
            bounds are costs.
        cost_matrix : ndarray of shape (n_classes, n_classes), optional
            The cost matrix the search minimises, kept on every snapshot
            (:attr:`SearchResult.cost_matrix`).
        """
        if to_user_tree is not None:
            self._to_user_tree = to_user_tree
        self._value_scale = value_scale
        self._value_offset = value_offset
        self._cost_matrix = cost_matrix

    @property
    def to_user_tree(self) -> Callable[[Tree], Tree]:
        """The map from the running search's trees to the user's (see :meth:`begin`)."""
        return self._to_user_tree

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
        user_tree = tree if mapped else self._to_user_tree(tree)
        self.history.append(Incumbent(self.elapsed(), value, user_tree))
        if self._on_improve is not None:
            self._on_improve(self.snapshot(proven_optimal=False))
        return user_tree

    def raise_lower_bound(self, value: float) -> None:
        """A proven lower bound: ``lower_bound`` rises to ``value`` when below it, and the
        rise is kept with its time (``SearchResult.lower_bounds``) and reported (a
        :class:`~satdt.task.events.LowerBound` event)."""
        if value <= self.lower_bound:
            return
        self.lower_bound = value
        bound = Bound(self.elapsed(), float(value))
        self.lower_bounds.append(bound)
        self.event(LowerBound(bound.value, bound.elapsed))

    @property
    def trace(self) -> list[SatCall]:
        """The SAT calls reported so far."""
        return [event for event in self.events if isinstance(event, SatCall)]

    def event(self, event: Event) -> None:
        """Record an event and pass it to ``on_event``."""
        self.events.append(event)
        if self._on_event is not None:
            self._on_event(event)

    def progress(self, step: str, done: float = 0.0, total: float = 0.0) -> None:
        """Record a :class:`Progress` event: ``done`` of ``total`` of a step (0 when unknown)."""
        self.event(Progress(step, done, total))

    def snapshot(self, *, proven_optimal: bool, stop_reason: str = "") -> SearchResult:
        """The result as it stands: the last incumbent, the bound proven so far, and why the
        search stopped when it is not proven (``stop_reason``)."""
        best = self.best
        if best is None:
            raise RuntimeError("no incumbent recorded yet")
        lower_bound = best.value if proven_optimal else min(self.lower_bound, best.value)
        scale = self._value_scale
        history = self.history
        bounds = list(self.lower_bounds)
        if bounds and lower_bound > bounds[-1].value:  # proven at the end
            bounds.append(Bound(self.elapsed(), lower_bound))
        value = best.value
        gap = self.gap
        offset = self._value_offset
        if offset:  # the lower bound is at least 0, the cost of no tree being below
            history = [i._replace(value=i.value - offset) for i in history]
            bounds = [b._replace(value=max(b.value - offset, 0.0)) for b in bounds]
            value = best.value - offset
            lower_bound = value if proven_optimal else min(max(lower_bound - offset, 0.0), value)
        if scale != 1.0:  # depth and size stay integers
            history = [i._replace(value=i.value * scale) for i in history]
            bounds = [b._replace(value=b.value * scale) for b in bounds]
            value, lower_bound, gap = value * scale, lower_bound * scale, gap * scale
        return SearchResult(
            objective=self.objective,
            model=best.model,
            objective_value=value,
            lower_bound=lower_bound,
            proven_optimal=proven_optimal,
            runtime=self.elapsed(),
            history=tuple(history),
            events=tuple(self.events),
            stats=copy.deepcopy(self.stats),
            preparation=copy.deepcopy(self.preparation),
            gap=gap,
            stop_reason="" if proven_optimal else stop_reason,
            cost_matrix=self._cost_matrix,
            lower_bounds=tuple(bounds),
        )


def _unchanged(tree: Tree) -> Tree:
    return tree


def primal_gap(value: float, best_known: float) -> float:
    """Berthold's primal gap of an incumbent of objective ``value`` against ``best_known``.

    ``|value - best_known| / max(|value|, |best_known|)``, in [0, 1]: 0 when both are 0, and
    1 when they have opposite signs or ``value`` is infinite (no solution yet).
    """
    if math.isinf(value) or value * best_known < 0:
        return 1.0
    scale = max(abs(value), abs(best_known))
    return 0.0 if scale == 0 else abs(value - best_known) / scale


def primal_integral(
    history: Iterable[Sequence[float] | Incumbent], best_known: float, horizon: float
) -> float:
    """The primal gap integral P(T) of an anytime curve (Berthold 2013).

    The measure with which Kiossou, Nijssen & Schaus evaluate CA-DL8.5 against DL8.5 and
    Blossom ("Tables 2-3: average primal integral"): the gap p(t) of the best solution found
    by time t is 1 before the first solution, then ``|best(t) - best_known| /
    max(|best(t)|, |best_known|)`` (0 when both are 0); ``P(T) = integral of p(t) over
    [0, T]``, a step function integrated exactly. It rewards both finding good trees early
    and finding better ones: P(T) = 0 means an optimal tree at time 0, P(T) = T means no
    tree within the budget. A module-level function so that curves of other programs (a
    benchmark's peers) are scored the same way as satdt's.

    Parameters
    ----------
    history
        ``(elapsed seconds, objective value)`` pairs in order of time (a
        :class:`SearchResult`'s ``history`` of :class:`Incumbent` works as is; only the first
        two fields are read). best(t) is the lowest value seen by time t, so a curve that is
        not strictly improving is fine; points after ``horizon`` are ignored; an infinite
        value counts as no solution.
    best_known
        The reference value (for a minimum-error tree: the lowest error any method found). It
        may be lower than every value of ``history``.
    horizon
        T, the time budget in seconds.

    Returns
    -------
    float
        P(T) in seconds, between 0 and T.

    Raises
    ------
    SatdtError
        If ``horizon`` is negative or not finite, ``best_known`` is not finite, a time is
        negative or earlier than the one before it, a value is NaN, or a value is below
        ``best_known`` (then ``best_known`` is not the best known value: pass the lowest value
        any method reached).

    References
    ----------
    T. Berthold, "Measuring the impact of primal heuristics", Operations Research Letters
    41(6): 611-614, 2013. H. S. Kiossou, S. Nijssen, P. Schaus, "A Generic Complete Anytime
    Beam Search for Optimal Decision Tree" (CA-DL8.5), section "Experiments": their gap
    divides by ``|best(t)|`` alone, which is the same for non-negative errors, since
    ``best_known <= best(t)``.
    """
    horizon = float(horizon)
    best_known = float(best_known)
    if not math.isfinite(horizon) or horizon < 0:
        raise SatdtError(
            f"horizon must be a finite number of seconds >= 0, got {horizon!r}; "
            "pass the time budget of the run"
        )
    if not math.isfinite(best_known):
        raise SatdtError(
            f"best_known must be a finite objective value, got {best_known!r}; "
            "pass the best value any method found"
        )
    tolerance = 1e-9 * max(1.0, abs(best_known))  # float sums of row weights
    total = 0.0
    gap = 1.0  # no solution yet
    best = math.inf
    previous = 0.0  # the start of the current step
    last = 0.0  # the time of the point before
    for position, entry in enumerate(history):
        elapsed, value = float(entry[0]), float(entry[1])
        if math.isnan(elapsed) or elapsed < last:
            raise SatdtError(
                f"history[{position}] is at {elapsed!r} s, before the previous point "
                f"({last!r} s) or before 0; pass (elapsed, value) pairs in order of time"
            )
        last = elapsed
        if math.isnan(value):
            raise SatdtError(f"history[{position}] has the value NaN; pass objective values")
        if value < best_known - tolerance:
            raise SatdtError(
                f"history[{position}] reaches {value!r}, below best_known={best_known!r}; "
                "best_known must be the best value known (the lowest any method found)"
            )
        if elapsed < horizon:
            total += gap * (elapsed - previous)
            previous = elapsed
            if value < best:
                best = value
                gap = primal_gap(max(best, best_known), best_known)
        # a point at or after the horizon is only checked
    total += gap * (horizon - previous)
    return total


@dataclass(frozen=True)
class ParetoPoint:
    """The smallest consistent tree of depth at most ``depth`` found by a Pareto search (over
    the search's own features: binary for SAT, the numeric columns for the box DP)."""

    depth: int
    n_nodes: int
    tree: Tree
    proven: bool


def front_ends_after(depth: int, n_leaves: int) -> str | None:
    """Why a Pareto front stops after ``depth``, whose smallest tree has ``n_leaves`` leaves:
    a deeper tree has a path of ``depth + 1`` tests, hence at least ``depth + 2`` leaves, so it
    cannot be smaller once ``n_leaves <= depth + 2``; None while it may."""
    if n_leaves > depth + 2:
        return None
    return (
        f"stopped after depth {depth}: its {n_leaves} leaves are at most depth + 2, and any "
        f"deeper tree has at least {depth + 2} leaves"
    )
