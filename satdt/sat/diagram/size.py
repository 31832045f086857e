"""The smallest consistent diagram of a skeleton by incremental SAT: the counterexample-guided
loop on one solver, a node bound by assumptions on the counter (D9) (``encodings/diagram.md``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pysat.formula import IDPool
from pysat.solvers import Solver

from ...core.errors import DataError, InfeasibleError, TimeUp
from ...models.diagram import Diagram, _reach
from ...models.diagram_checks import check_widths, fits
from ...prepare.rows import group_rows
from ..counter import leaf_counter
from ..heuristics import greedy_tree
from ..solving import DEFAULT_SOLVER, SAT_SOLVERS, add_clauses, past, solve_until
from .formula import (
    Clauses,
    DiagramFormula,
    DiagramResult,
    Names,
    Skeleton,
    _binary,
    _exits,
    layer_caps,
)

# "per_exit": one misclassified row per exit arc (last node, side) of the decoded diagram;
# "all": every misclassified row.
DIAGRAM_COUNTEREXAMPLE_POLICIES = ("per_exit", "all")


# ---------------------------------------------------------------------------- minimum size
class DiagramLoop:
    """The counterexample-guided loop for consistent diagrams of one skeleton, on one solver.

    Starts with no examples; each round solves, decodes a diagram, and adds rows it
    misclassifies to the same solver, until the diagram is consistent (SAT) or the formula
    is unsatisfiable (UNSAT on a subset of the rows is UNSAT on all of them). A size bound is
    an assumption on the active-node counter (D9), so the loop serves every bound.
    """

    def __init__(
        self,
        B: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        widths: Sequence[int],
        *,
        solver: str = DEFAULT_SOLVER,
        counterexamples: str = "per_exit",
        deadline: float | None = None,
    ) -> None:
        if solver not in SAT_SOLVERS:
            raise DataError(f"solver must be one of {SAT_SOLVERS}, got {solver!r}")
        if counterexamples not in DIAGRAM_COUNTEREXAMPLE_POLICIES:
            raise DataError(
                f"counterexamples must be one of {DIAGRAM_COUNTEREXAMPLE_POLICIES}, got {counterexamples!r}"
            )
        self.B, self.y, self.n_classes = B, y, n_classes
        self.policy = counterexamples
        self.deadline = deadline
        self.solver_name = solver
        self.pool = IDPool()
        self.formula = DiagramFormula(self.pool, Skeleton(widths, n_classes), B.shape[1])
        self.solver = Solver(name=solver)
        self.counter = None
        self.included: list[int] = []
        self.calls = 0
        self.n_clauses = 0
        self._add([c for _, cs in self.formula.structure_sections() for c in cs])

    def close(self) -> None:
        self.solver.delete()

    def __enter__(self) -> DiagramLoop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _add(self, clauses: Clauses) -> None:
        add_clauses(self.solver, clauses, self.deadline)
        self.n_clauses += len(clauses)

    def add_examples(self, rows: Sequence[int]) -> None:
        """Add the clauses (D6)-(D8) of rows ``rows`` to the live solver (raises TimeUp)."""
        for i in rows:
            i = int(i)
            self._add(self.formula.example_clauses(i, self.B[i], int(self.y[i])))
            self.included.append(i)

    def add_counter(self, max_bound: int) -> None:
        """(D9): a totalizer over the active non-root nodes, for bounds up to ``max_bound``."""
        self.counter = leaf_counter("totalizer", self.pool, self.formula.A[1:], max_bound)
        self._add(self.counter.clauses)

    def bound(self, max_splits: int) -> list[int]:
        """Assumptions for "at most ``max_splits`` internal nodes": the counter (D9) and the
        layer caps of :func:`layer_caps` (the first node past each cap is unused)."""
        out = self.counter.at_most(max_splits - 1)
        sk = self.formula.sk
        for l, cap in enumerate(layer_caps(sk.widths, max_splits)):
            if cap < sk.widths[l]:
                out.append(-int(self.formula.A[sk.first[l] + cap]))
        return out

    def run(self, max_splits: int | None = None) -> tuple[str, Diagram | None]:
        """Loop until ``("SAT", consistent diagram)``, ``("UNSAT", None)`` or ``("UNKNOWN", None)``.

        ``max_splits`` bounds the internal nodes, root included (needs :meth:`add_counter`).
        """
        assumptions = [] if max_splits is None else self.bound(max_splits)
        while True:
            status = solve_until(self.solver, self.solver_name, assumptions, self.deadline)
            self.calls += 1
            if status is None:
                return "UNKNOWN", None
            if not status:
                return "UNSAT", None
            diagram = self.formula.decode(self.solver.get_model())
            predicted, exit_arc = _exits(diagram, self.B)
            wrong = np.flatnonzero(predicted != self.y)
            if not len(wrong):
                return "SAT", diagram
            if self.policy == "per_exit":
                wrong = wrong[np.unique(exit_arc[wrong], return_index=True)[1]]
            try:
                self.add_examples(wrong)
            except TimeUp:
                return "UNKNOWN", None


def _route(root: int, feature: np.ndarray, low: np.ndarray, high: np.ndarray, B: np.ndarray):
    """The terminal code (``-1 - class``) each row of ``B`` reaches."""
    state = np.full(len(B), root, dtype=np.int64)
    active = np.arange(len(B))
    while len(active):
        node = state[active]
        side = B[active, feature[node]]
        state[active] = np.where(side == 1, high[node], low[node])
        active = active[state[active] >= 0]
    return state


def compact(diagram: Diagram, B: np.ndarray, y: np.ndarray, n_classes: int) -> Diagram:
    """A consistent diagram no larger than ``diagram``, by greedy redirection of arcs.

    Node by node (deepest layer first), the arcs into a node are sent to a class terminal,
    else to another node of its layer, whenever every row of ``B`` stays correct (the node
    and what only it reached drop out); until no such move is left. Layers are kept, so the
    result fits wherever ``diagram`` did.
    """
    if diagram.n_splits == 0:
        return diagram
    # layer order, so that successors come after their nodes (for _reach) whatever is merged
    order = np.argsort(diagram.layer, kind="stable")
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order))
    feature, layer, root = diagram.feature[order], diagram.layer[order], int(place[diagram.root])
    low, high = (
        np.where(a[order] >= 0, place[np.maximum(a[order], 0)], a[order])
        for a in (diagram.low, diagram.high)
    )
    target = -1 - np.asarray(y, dtype=np.int64)
    changed = True
    while changed:
        changed = False
        alive = _reach(low, high, root)
        for v in sorted(np.flatnonzero(alive), key=lambda u: -layer[u]):
            if v == root or not alive[v]:
                continue
            others = [u for u in np.flatnonzero(alive) if u != v and layer[u] == layer[v]]
            for t in [-1 - k for k in range(n_classes)] + others:
                new_low = np.where(low == v, t, low)
                new_high = np.where(high == v, t, high)
                if (_route(root, feature, new_low, new_high, B) == target).all():
                    low, high, changed = new_low, new_high, True
                    alive = _reach(low, high, root)
                    break
    keep = np.flatnonzero(_reach(low, high, root))
    index = np.full(len(layer), -1, dtype=np.int64)
    index[keep] = np.arange(len(keep))
    low, high = (
        np.where(a[keep] >= 0, index[np.maximum(a[keep], 0)], a[keep]) for a in (low, high)
    )
    return Diagram(
        layer[keep],
        feature[keep],
        np.full(len(keep), 0.5),
        low,
        high,
        n_features=diagram.n_features,
        classes=np.arange(n_classes),
    )


LOWER_SHARE = 0.25


def _greedy_start(
    B: np.ndarray, y: np.ndarray, n_classes: int, widths: tuple[int, ...]
) -> Diagram | None:
    """A Gini tree as a first consistent diagram, when it fits the skeleton (else None)."""
    tree = greedy_tree(B, y, n_classes, max_depth=len(widths))
    diagram = Diagram.from_tree(tree, n_features=B.shape[1])
    if not fits(diagram, widths) or diagram.n_splits == 0 or (_exits(diagram, B)[0] != y).any():
        return None
    return diagram


@dataclass(frozen=True)
class SizeRun:
    """How :func:`minimum_size_diagram` runs: its clock, its solver, its loop and its start.

    Parameters
    ----------
    deadline : float, optional
        A ``time.perf_counter()`` value (None: no limit). Past it the smallest diagram found
        is returned with ``proven=False``.
    solver : str
        PySAT solver (:data:`~satdt.sat.solving.SAT_SOLVERS`).
    counterexamples : str
        Rows added per round (:data:`DIAGRAM_COUNTEREXAMPLE_POLICIES`).
    start : Diagram, optional
        A diagram over the binary features of ``B`` to start from (used when it classifies
        every row correctly and fits the skeleton), e.g. the fewest-errors tree of depth
        ``len(widths)`` (:func:`satdt.search.diagrams.tree_start`).
    """

    deadline: float | None = None
    solver: str = DEFAULT_SOLVER
    counterexamples: str = "per_exit"
    start: Diagram | None = None


_DEFAULT_RUN = SizeRun()
_NO_NAMES = Names()


def minimum_size_diagram(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    widths: Sequence[int],
    run: SizeRun = _DEFAULT_RUN,
    names: Names = _NO_NAMES,
) -> DiagramResult:
    """The consistent diagram with the fewest internal nodes within a skeleton, by incremental SAT.

    Parameters
    ----------
    B, y, n_classes
        Binary features (0/1, one row per example), class indices, number of classes.
    widths
        The skeleton: at most ``widths[l]`` internal nodes in layer ``l``, ``widths[0] == 1``
        (:func:`~satdt.sat.diagram.formula.tree_skeleton` ``(max_depth, max_width)`` gives the
        automatic one).
    run
        The deadline, the SAT solver, the counterexample policy and a start (:class:`SizeRun`).
    names
        Labels and feature names stored in the diagram (default: class indices, no names).

    Returns
    -------
    DiagramResult
        The diagram (over the binary features: threshold 0.5, low = feature false), its node
        count, the proven lower bound and the counts. Identical rows are encoded once.
        Descending search. The first diagram is the smaller of a greedy Gini tree and
        ``run.start``, when consistent and fitting the skeleton, shrunk by :func:`compact`; else
        the first SAT answer. With N nodes known, the formula is built
        on the skeleton narrowed to :func:`layer_caps` ``(widths, N - 1)`` (every smaller
        diagram fits it), and at most N - 1 is asked (assumptions: the counter (D9) and the
        layer caps of the bound) until UNSAT; each diagram found is compacted too. With a
        time limit the descent stops at three quarters of the time left once a diagram is
        known, and the rest asks at most L nodes for L = lower bound, L + 1, .. (each UNSAT
        raises the bound; a SAT answer is an optimum). The lower bound starts at ``max(1, classes present - 1)``: N nodes have 2N arcs, N - 1 of which
        enter the non-root nodes, so at most N + 1 terminals are reached.

    Raises
    ------
    InfeasibleError
        Contradictory rows, no consistent diagram in the skeleton (proven), or none found in time.
    """
    began = time.perf_counter()
    B, y = _binary(B, y, n_classes)
    widths = check_widths(widths)
    deadline = run.deadline
    first, group = group_rows(B)
    if (y != y[first][group]).any():
        raise InfeasibleError(
            "rows with identical features carry different labels, so no diagram is consistent; "
            "relabel them or use minimum_error_diagram"
        )
    first = np.sort(first)
    Bd, yd = B[first], y[first]
    present = np.unique(yd)
    labels, feature_names = names.labels(n_classes), names.feature_names
    if len(present) == 1:
        single = Diagram.single_terminal(
            int(present[0]), n_features=B.shape[1], classes=labels, feature_names=feature_names
        )
        return DiagramResult(single, 0, 0, True, 0, time.perf_counter() - began, widths, 0)
    state = _Descent(None, max(1, len(present) - 1))
    loop = None
    calls = 0
    try:
        state.best = _first_diagram(Bd, yd, n_classes, widths, run.start)
        best, lower = state.best, state.lower
        # a diagram smaller than the start fits the layer caps of its bound
        skeleton = widths
        if best is not None and best.n_splits > lower:
            caps = layer_caps(widths, best.n_splits - 1)
            skeleton = caps[: max(l + 1 for l, c in enumerate(caps) if c)]
        if best is None or best.n_splits > lower:
            loop = DiagramLoop(
                Bd,
                yd,
                n_classes,
                skeleton,
                solver=run.solver,
                counterexamples=run.counterexamples,
                deadline=deadline,
            )
            loop.add_counter(sum(skeleton) - 1)
        _descend(state, loop, widths, deadline, Bd, yd, n_classes)
    except TimeUp:
        pass
    finally:
        if loop is not None:
            calls = loop.calls
            loop.close()
    best, lower, proven = state.best, state.lower, state.proven
    if best is None:
        why = "none exists (proven)" if proven else "none was found before the time limit"
        raise InfeasibleError(
            f"no consistent diagram within the skeleton {widths}: {why}; widen or deepen it"
        )
    predicted, _ = _exits(best, B)
    if (predicted != y).any():
        raise RuntimeError("internal error: the diagram found misclassifies a training row")
    best = best.replace(classes=labels, feature_names=feature_names)
    return DiagramResult(
        best,
        best.n_splits,
        best.n_splits if proven else lower,
        proven,
        calls,
        time.perf_counter() - began,
        widths,
        0 if loop is None else len(loop.included),
    )


@dataclass
class _Descent:
    """The state of the descent: the smallest diagram known, the lower bound, proven or not
    (kept outside the loop so a :class:`TimeUp` leaves it as it was)."""

    best: Diagram | None
    lower: int
    proven: bool = False


def _first_diagram(
    Bd: np.ndarray, yd: np.ndarray, n_classes: int, widths: tuple[int, ...], start: Diagram | None
) -> Diagram | None:
    """The smaller of a greedy Gini tree and ``start`` (when consistent and fitting the
    skeleton), shrunk by :func:`compact`; None when neither is usable."""
    starts = [_greedy_start(Bd, yd, n_classes, widths)]
    if start is not None and fits(start, widths) and (_exits(start, Bd)[0] == yd).all():
        starts.append(start)
    starts = [compact(d, Bd, yd, n_classes) for d in starts if d is not None]
    return min(starts, key=lambda d: d.n_splits) if starts else None


def _descend(
    state: _Descent,
    loop: DiagramLoop | None,
    widths: tuple[int, ...],
    end: float | None,
    Bd: np.ndarray,
    yd: np.ndarray,
    n_classes: int,
) -> None:
    """Ask for ever smaller diagrams until UNSAT (proven) or the time is up; once a diagram is
    known, the last share of the time raises the lower bound from below instead."""
    reserved = False
    while state.best is None or state.best.n_splits > state.lower:
        if end is not None and state.best is not None and not reserved:
            # once a diagram is known, the last share of the time raises the lower bound
            loop.deadline = end - LOWER_SHARE * max(end - time.perf_counter(), 0.0)
            reserved = True
        bound = None if state.best is None else state.best.n_splits - 1
        status, diagram = loop.run(bound)
        if status == "UNKNOWN" and state.best is not None and not past(end):
            loop.deadline = end
            while status != "SAT" and state.lower < state.best.n_splits:
                status, diagram = loop.run(state.lower)
                if status == "UNKNOWN":
                    break
                state.lower += status == "UNSAT"
            if status == "SAT":
                state.best = compact(diagram, Bd, yd, n_classes)
            if state.best.n_splits > state.lower:
                break
            continue
        if status == "UNKNOWN":
            break
        if status == "UNSAT":
            state.lower = sum(widths) + 1 if bound is None else bound + 1
            state.proven = True
            break
        state.best = compact(diagram, Bd, yd, n_classes)
    else:
        state.proven = True
