"""Decision diagrams with logic: the smallest consistent diagram by SAT, the best one by MaxSAT.

See ``encodings/diagram.md`` for the formulas (D1)-(D9), their exact sizes and a worked example.

A *skeleton* (Florio et al., AAAI 2023) gives the widths ``w_0 = 1, w_1, .., w_{D-1}`` of the
layers of internal nodes, numbered ``u = 0 .. S - 1`` layer by layer (``S = sum(w)``; node 0 is
the root). A node of layer ``l`` may send each side to a node of layer ``l + 1`` or straight to
the terminal of any class (the paper's long arcs). Features are binary: a node testing feature
``a`` sends a row with ``x[a] = 0`` to its *low* successor and a row with ``x[a] = 1`` to its
*high* one. Variables, all from one :class:`pysat.formula.IDPool` with tuple keys:

- ``("F", u, a)``: node u tests feature a;
- ``("A", u)``: node u (u >= 1) is active (the root always is);
- ``("Lo", u, s)``, ``("Hi", u, s)``: the low / high successor of node u is ``s`` (a node of the
  next layer, or ``-1 - k`` for the terminal of class k);
- ``("R", v, t)``: an arc of index at most t enters node v (symmetry breaking only; the arcs
  into a layer are numbered by parent, low before high);
- ``("V", i, u)``: example i visits node u (u >= 1; every example visits the root);
- ``("G", i, u)``: example i has the value 1 on the feature node u tests (it goes high there);
- ``("E", i, g)``: MaxSAT only: example i reaches a terminal of the g-th cost of its row.

The structure clauses (D1)-(D5) come once; the clauses (D6)-(D8) of one example are generated
on their own, so examples join a live solver (the counterexample-guided loop of the trees,
``encodings/incremental-loop.md``). (D9) counts the active nodes with the project's totalizer
(:mod:`satdt.sat.counter`); a size bound is one assumption literal on it, plus one per layer
that the bound narrows (:func:`layer_caps`).
"""

from __future__ import annotations

import math
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from pysat.examples.rc2 import RC2Stratified
from pysat.formula import WCNF, IDPool
from pysat.solvers import Solver

from ..data import Dataset
from ..diagram import Diagram, _reach
from ..errors import DataError, InfeasibleError, SatdtError, TimeUp
from ..prepare import group_rows, prepare
from ..result import Recorder
from .counter import SequentialCounter, leaf_counter
from .heuristics import greedy_tree
from .solving import DEFAULT_SOLVER, SOLVERS, add_clauses, past, solve_until

Clauses = list[list[int]]

# "per_exit": one misclassified row per exit arc (last node, side) of the decoded diagram;
# "all": every misclassified row.
COUNTEREXAMPLE_POLICIES = ("per_exit", "all")
DEFAULT_MAXSAT_SOLVER = "glucose3"


# ---------------------------------------------------------------------------- skeleton
def check_widths(widths: Sequence[int]) -> tuple[int, ...]:
    """The skeleton's widths as a tuple; the first is 1 (the root), all are positive integers."""
    out = tuple(int(w) for w in widths)
    if (
        not out
        or out[0] != 1
        or min(out) < 1
        or any(w != v for w, v in zip(out, widths, strict=True))
    ):
        raise DataError(
            f"widths must be positive integers, the first 1 (the root's layer); got {widths!r}"
        )
    return out


def tree_skeleton(max_depth: int, max_width: int | None = None) -> tuple[int, ...]:
    """The automatic skeleton of depth ``max_depth``: widths ``min(2**l, max_width)``.

    Without ``max_width`` it holds every layered diagram of depth at most ``max_depth``: the
    reachable nodes of layer ``l + 1`` are entered from the at most ``w_l`` nodes of layer ``l``,
    two arcs each, so a layer never needs more than ``2**l`` nodes. Any tree of depth at most
    ``max_depth`` fits, its depth-l nodes forming layer l.
    """
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
        raise DataError(f"max_depth must be an integer >= 1, got {max_depth!r}")
    if max_width is not None and (not isinstance(max_width, int) or max_width < 1):
        raise DataError(f"max_width must be None or an integer >= 1, got {max_width!r}")
    cap = max_width if max_width is not None else 2**max_depth
    return tuple(min(2**l, cap) for l in range(max_depth))


def layer_caps(widths: Sequence[int], max_nodes: int) -> tuple[int, ...]:
    """The most nodes each layer can use in a diagram of at most ``max_nodes`` internal nodes.

    Every node of layer l + 1 is entered from layer l, whose nodes have two arcs each, so k
    nodes in layer l need at least ``ceil(k / 2**j)`` nodes in layer l - j: layer l holds at
    most the largest ``k <= widths[l]`` with ``k + sum(ceil(k / 2**j), j = 1..l) <= max_nodes``
    (0 when even one node does not fit).
    """
    caps = []
    for l, width in enumerate(widths):
        cap = 0
        for k in range(1, width + 1):
            if k + sum(-(-k // 2**j) for j in range(1, l + 1)) > max_nodes:
                break
            cap = k
        caps.append(cap)
    return tuple(caps)


class Skeleton:
    """Layers of internal nodes and the arcs a diagram may use (the paper's graph G)."""

    def __init__(self, widths: Sequence[int], n_classes: int) -> None:
        self.widths = check_widths(widths)
        self.n_classes = n_classes
        self.first = np.concatenate(([0], np.cumsum(self.widths))).astype(np.int64)
        self.n_nodes = int(self.first[-1])
        self.layer = np.repeat(np.arange(len(self.widths)), self.widths)

    def successors(self, u: int) -> list[int]:
        """The nodes of the next layer, then the terminal codes ``-1 - k``."""
        l = int(self.layer[u])
        nxt = list(range(self.first[l + 1], self.first[l + 2])) if l + 1 < len(self.widths) else []
        return nxt + [-1 - k for k in range(self.n_classes)]

    def right_neighbours(self) -> list[tuple[int, int]]:
        """Pairs ``(u, u + 1)`` of consecutive nodes of one layer."""
        return [
            (u, u + 1) for u in range(1, self.n_nodes - 1) if self.layer[u] == self.layer[u + 1]
        ]


# ---------------------------------------------------------------------------- formula
class DiagramFormula:
    """The variables of a skeleton over ``n_features`` binary features, and the clause generators.

    The structure variables F, A, Lo, Hi, R are created in that order; each example's V and G
    come with the example.
    """

    def __init__(self, pool: IDPool, skeleton: Skeleton, n_features: int) -> None:
        self.pool = pool
        self.sk = skeleton
        self.m = n_features
        S, m = skeleton.n_nodes, n_features
        self.F = np.array(
            [[pool.id(("F", u, a)) for a in range(m)] for u in range(S)], dtype=np.int64
        ).reshape(S, m)
        self.A = np.array([0] + [pool.id(("A", u)) for u in range(1, S)], dtype=np.int64)
        tails, heads, lo, hi = [], [], [], []
        for side, out in (("Lo", lo), ("Hi", hi)):
            for u in range(S):
                for s in skeleton.successors(u):
                    out.append(pool.id((side, u, s)))
                    if side == "Lo":
                        tails.append(u)
                        heads.append(s)
        self.arc_u = np.array(tails, dtype=np.int64)
        self.arc_s = np.array(heads, dtype=np.int64)
        self.arc_lo = np.array(lo, dtype=np.int64)
        self.arc_hi = np.array(hi, dtype=np.int64)
        self.pairs = skeleton.right_neighbours()
        # The arcs into node v (v >= 1) from the layer above, in the order of their index
        # t = 2 * (parent's place in its layer) + side (low 0, high 1).
        self.into: dict[int, list[int]] = {}
        for v in range(1, S):
            l = int(skeleton.layer[v])
            parents = range(skeleton.first[l - 1], skeleton.first[l])
            self.into[v] = [pool.id((side, p, v)) for p in parents for side in ("Lo", "Hi")]
        self.R = {
            v: np.array([pool.id(("R", v, t)) for t in range(len(self.into[v]) - 1)], np.int64)
            for v, _ in self.pairs
        }

    # ------------------------------------------------------------------ structure (D1)-(D5)
    def feature_clauses(self) -> Clauses:
        """(D1): every node tests at least one feature (the paper's (15), "at least" half).

        "At most one" is not needed: by (D6) every encoded example agrees on all the features a
        node tests, so testing only the first of them routes every encoded example the same way.
        """
        return self.F.tolist()

    def successor_clauses(self) -> Clauses:
        """(D2): an active node has a low and a high successor (the paper's (6)).

        At least one each suffices: by (D7)-(D8) every encoded example visiting the node is
        sent down every chosen arc of its side and must be right on all of them, so keeping any
        one of them (the first, when decoding) stays consistent.
        """
        clauses: Clauses = []
        for arcs in (self.arc_lo, self.arc_hi):
            for u in range(self.sk.n_nodes):
                head = [-int(self.A[u])] if u else []
                clauses.append(head + arcs[self.arc_u == u].tolist())
        return clauses

    def arc_clauses(self) -> Clauses:
        """(D3): an arc into an internal node makes it active (the paper's (8)), and conversely.

        ``Lo[u][v] -> A[v]``, ``Hi[u][v] -> A[v]`` for every arc into an internal node, then
        ``A[v] -> OR(arcs into v)`` for every non-root node: a node counts only when entered.
        """
        inner = self.arc_s >= 0
        target = self.A[self.arc_s[inner]]
        clauses = np.stack([-self.arc_lo[inner], target], axis=1).tolist()
        clauses += np.stack([-self.arc_hi[inner], target], axis=1).tolist()
        return clauses + [[-int(self.A[v]), *into] for v, into in self.into.items()]

    def prefix_clauses(self) -> Clauses:
        """(D4): in each layer the active nodes come first: ``A[u + 1] -> A[u]``."""
        return [[-int(self.A[v]), int(self.A[u])] for u, v in self.pairs]

    def order_clauses(self) -> Clauses:
        """(D5): in each layer the first arcs into consecutive nodes increase (breadth-first order).

        The arcs into layer l + 1 are numbered ``t = 2 * (parent's place in layer l) + side``
        (low 0, high 1); ``R[v][t]`` is an arc of index at most t into v (``R[v][t] ->
        X[t](v) OR R[v][t-1]``), and an arc of index t into the next node v + 1 needs one of
        index below t into v (``X[t](v+1) -> R[v][t-1]``, no arc of index 0 into v + 1).
        Every arc enters one node, so in a diagram the first arcs into the nodes of a layer
        are distinct: numbering each layer's used nodes by their first arc, top down, gives
        a copy of any diagram (same predictions, same size) that meets (D4) and (D5); the
        order is total, so within the layers nothing symmetric is left.
        """
        clauses: Clauses = []
        for u, v in self.pairs:
            R, mine, nxt = self.R[u], self.into[u], self.into[v]
            clauses.append([-int(R[0]), mine[0]])
            for t in range(1, len(R)):
                clauses.append([-int(R[t]), mine[t], int(R[t - 1])])
            clauses.append([-nxt[0]])
            for t in range(1, len(nxt)):
                clauses.append([-nxt[t], int(R[t - 1])])
        return clauses

    def structure_sections(self) -> list[tuple[str, Clauses]]:
        """(D1)-(D5), named, in that order."""
        return [
            ("(D1)", self.feature_clauses()),
            ("(D2)", self.successor_clauses()),
            ("(D3)", self.arc_clauses()),
            ("(D4)", self.prefix_clauses()),
            ("(D5)", self.order_clauses()),
        ]

    # ------------------------------------------------------------------ examples (D6)-(D8)
    def example_vars(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """``V`` (0 for the root, which every example visits) and ``G`` of example i."""
        S = self.sk.n_nodes
        V = np.array([0] + [self.pool.id(("V", i, u)) for u in range(1, S)], dtype=np.int64)
        G = np.array([self.pool.id(("G", i, u)) for u in range(S)], dtype=np.int64)
        return V, G

    def value_clauses(self, G: np.ndarray, row: np.ndarray) -> Clauses:
        """(D6): ``F[u][a] -> G[i][u]`` if the example has ``x[a] = 1``, ``-> NOT G[i][u]`` if 0."""
        sign = np.where(np.asarray(row) == 1, 1, -1)
        block = np.stack(
            [-self.F, sign[None, :] * np.broadcast_to(G[:, None], self.F.shape)], axis=-1
        )
        return block.reshape(-1, 2).tolist()

    @staticmethod
    def _drop_root(block: np.ndarray, at_root: np.ndarray) -> Clauses:
        """Rows of ``block`` as clauses; the rows of root arcs lose their first literal (0)."""
        return block[at_root, 1:].tolist() + block[~at_root].tolist()

    def move_clauses(self, V: np.ndarray, G: np.ndarray) -> Clauses:
        """(D7): a visited node passes the example on along the arc of its side.

        ``V[u] AND NOT G[u] AND Lo[u][v] -> V[v]`` and ``V[u] AND G[u] AND Hi[u][v] -> V[v]``
        for every internal arc ``(u, v)``, low then high; at the root ``V`` is left out.
        """
        inner = self.arc_s >= 0
        u, v = self.arc_u[inner], self.arc_s[inner]
        low = np.stack([-V[u], G[u], -self.arc_lo[inner], V[v]], axis=1)
        high = np.stack([-V[u], -G[u], -self.arc_hi[inner], V[v]], axis=1)
        block = np.stack([low, high], axis=1).reshape(-1, 4)
        return self._drop_root(block, np.repeat(u == 0, 2))

    def terminal_clauses(self, V: np.ndarray, G: np.ndarray, relax: dict[int, int]) -> Clauses:
        """(D8): a visited node sends the example to no terminal of a wrong class.

        ``relax`` maps each wrong class k to 0 (a hard clause) or a literal ``E`` that the
        clause then allows (MaxSAT: the example's cost becomes due).
        """
        keep = np.flatnonzero(self.arc_s < 0)
        k = -1 - self.arc_s[keep]
        wrong = np.isin(k, list(relax))
        keep, k = keep[wrong], k[wrong]
        u = self.arc_u[keep]
        E = np.array([relax[int(c)] for c in k], dtype=np.int64).reshape(-1)
        low = np.stack([-V[u], G[u], -self.arc_lo[keep], E], axis=1)
        high = np.stack([-V[u], -G[u], -self.arc_hi[keep], E], axis=1)
        block = np.stack([low, high], axis=1).reshape(-1, 4)
        if not np.any(E):
            block = block[:, :3]
        return self._drop_root(block, np.repeat(u == 0, 2))

    def example_sections(
        self, i: int, row: np.ndarray, relax: dict[int, int]
    ) -> list[tuple[str, Clauses]]:
        """(D6), (D7), (D8) of example i (binary ``row``; ``relax`` as in :meth:`terminal_clauses`)."""
        V, G = self.example_vars(i)
        return [
            ("(D6)", self.value_clauses(G, row)),
            ("(D7)", self.move_clauses(V, G)),
            ("(D8)", self.terminal_clauses(V, G, relax)),
        ]

    def example_clauses(self, i: int, row: np.ndarray, label: int) -> Clauses:
        """All the hard clauses (D6)-(D8) of example i of class ``label``."""
        relax = {k: 0 for k in range(self.sk.n_classes) if k != label}
        return [c for _, clauses in self.example_sections(i, row, relax) for c in clauses]

    # ------------------------------------------------------------------ decoding
    def decode(
        self,
        model: Sequence[int],
        *,
        classes: Sequence[Any] | np.ndarray | None = None,
        feature_names: Sequence[str] | None = None,
    ) -> Diagram:
        """The diagram of a model over binary features (threshold 0.5, low = feature false).

        Each node takes its first true feature and, on each side, its first true successor;
        only the nodes reachable from the root are kept, in skeleton order.
        """
        truth = np.zeros(max(self.pool.top, max((abs(v) for v in model), default=0)) + 1, bool)
        truth[[v for v in model if v > 0]] = True
        S = self.sk.n_nodes
        feature = np.argmax(truth[self.F], axis=1) if self.m else np.zeros(S, np.int64)
        succ = np.zeros((S, 2), dtype=np.int64)
        for side, arcs in enumerate((self.arc_lo, self.arc_hi)):
            chosen = truth[arcs]
            for u in range(S):
                mine = np.flatnonzero((self.arc_u == u) & chosen)
                succ[u, side] = self.arc_s[mine[0]] if len(mine) else -1
        return build_diagram(self.sk, feature, succ, self.m, classes, feature_names)


def build_diagram(
    sk: Skeleton,
    feature: np.ndarray,
    succ: np.ndarray,
    n_features: int,
    classes: Sequence[Any] | np.ndarray | None = None,
    feature_names: Sequence[str] | None = None,
) -> Diagram:
    """The reachable part of a skeleton assignment as a :class:`~satdt.diagram.Diagram`.

    ``feature[u]`` is node u's binary feature and ``succ[u]`` its ``(low, high)`` successors.
    """
    seen = np.zeros(sk.n_nodes, dtype=bool)
    seen[0] = True
    for u in range(sk.n_nodes):
        if seen[u]:
            for s in succ[u]:
                if s >= 0:
                    seen[s] = True
    nodes = np.flatnonzero(seen)
    index = np.full(sk.n_nodes, -1, dtype=np.int64)
    index[nodes] = np.arange(len(nodes))
    renamed = np.where(succ[nodes] >= 0, index[np.maximum(succ[nodes], 0)], succ[nodes])
    return Diagram(
        sk.layer[nodes],
        feature[nodes],
        np.full(len(nodes), 0.5),
        renamed[:, 0],
        renamed[:, 1],
        n_features=n_features,
        classes=np.arange(sk.n_classes) if classes is None else classes,
        feature_names=feature_names,
    )


# ---------------------------------------------------------------------------- results
@dataclass
class DiagramResult:
    """What a diagram search returns.

    ``objective`` is the number of internal nodes (minimum size) or objective (18) (minimum
    error), recomputed on the data; ``lower_bound`` is proven; ``sat_calls`` counts solver
    calls (SAT calls of the loop, or RC2's oracle calls); ``examples`` the distinct rows the
    formula held at the end.
    """

    diagram: Diagram
    objective: float
    lower_bound: float
    proven: bool
    sat_calls: int
    runtime: float
    widths: tuple[int, ...]
    examples: int


def _deadline(time_limit: float | None, deadline: float | None) -> float | None:
    """The earlier of ``deadline`` and ``time_limit`` seconds from now (None: no limit)."""
    ends = [] if deadline is None else [deadline]
    if time_limit is not None:
        ends.append(time.perf_counter() + time_limit)
    return min(ends, default=None)


def _widths(
    widths: Sequence[int] | None, max_depth: int | None, max_width: int | None
) -> tuple[int, ...]:
    if (widths is None) == (max_depth is None):
        raise DataError("give either widths (a skeleton) or max_depth (the automatic one)")
    return check_widths(widths) if widths is not None else tree_skeleton(max_depth, max_width)


def _binary(B: np.ndarray, y: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    B = np.ascontiguousarray(B, dtype=np.uint8)
    y = np.asarray(y, dtype=np.int64)
    if B.ndim != 2 or len(B) != len(y) or not np.isin(B, (0, 1)).all():
        raise DataError(f"B must be a 0/1 matrix with one row per label; got shape {B.shape}")
    if len(y) == 0 or y.min() < 0 or y.max() >= n_classes:
        raise DataError(f"labels must be class indices in [0, {n_classes}); got {np.unique(y)}")
    return B, y


def _exits(diagram: Diagram, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Terminal class and exit arc ``2 * last node + side`` of every row of ``B``."""
    state = np.full(len(B), diagram.root, dtype=np.int64)
    exit_arc = np.full(len(B), -1, dtype=np.int64)
    active = np.flatnonzero(state >= 0)
    while len(active):
        node = state[active]
        side = B[active, diagram.feature[node]].astype(np.int64)
        exit_arc[active] = 2 * node + side
        state[active] = np.where(side == 1, diagram.high[node], diagram.low[node])
        active = active[state[active] >= 0]
    return -1 - state, exit_arc


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
        if solver not in SOLVERS:
            raise DataError(f"solver must be one of {SOLVERS}, got {solver!r}")
        if counterexamples not in COUNTEREXAMPLE_POLICIES:
            raise DataError(
                f"counterexamples must be one of {COUNTEREXAMPLE_POLICIES}, got {counterexamples!r}"
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

    def bound(self, max_nodes: int) -> list[int]:
        """Assumptions for "at most ``max_nodes`` internal nodes": the counter (D9) and the
        layer caps of :func:`layer_caps` (the first node past each cap is unused)."""
        out = self.counter.at_most(max_nodes - 1)
        sk = self.formula.sk
        for l, cap in enumerate(layer_caps(sk.widths, max_nodes)):
            if cap < sk.widths[l]:
                out.append(-int(self.formula.A[sk.first[l] + cap]))
        return out

    def run(self, max_nodes: int | None = None) -> tuple[str, Diagram | None]:
        """Loop until ``("SAT", consistent diagram)``, ``("UNSAT", None)`` or ``("UNKNOWN", None)``.

        ``max_nodes`` bounds the internal nodes, root included (needs :meth:`add_counter`).
        """
        assumptions = [] if max_nodes is None else self.bound(max_nodes)
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
    if diagram.n_nodes == 0:
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


def _fits(diagram: Diagram, widths: tuple[int, ...]) -> bool:
    return len(diagram.widths) <= len(widths) and all(
        w <= v for w, v in zip(diagram.widths, widths, strict=False)
    )


def _greedy_start(
    B: np.ndarray, y: np.ndarray, n_classes: int, widths: tuple[int, ...]
) -> Diagram | None:
    """A Gini tree as a first consistent diagram, when it fits the skeleton (else None)."""
    tree = greedy_tree(B, y, n_classes, max_depth=len(widths))
    diagram = Diagram.from_tree(tree, n_features=B.shape[1])
    if not _fits(diagram, widths) or diagram.n_nodes == 0 or (_exits(diagram, B)[0] != y).any():
        return None
    return diagram


def _tree_start(
    B: np.ndarray, y: np.ndarray, n_classes: int, widths: tuple[int, ...], seconds: float
) -> Diagram | None:
    """The fewest-errors tree of depth ``len(widths)`` (satdt's dynamic programming, at most
    ``seconds``) as a diagram, when it has no error and fits the skeleton (else None)."""
    from ..learner import OptimalTreeClassifier

    if seconds <= 0.01:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = OptimalTreeClassifier(
                objective="error", max_depth=len(widths), time_limit=seconds
            ).fit(B.astype(np.float64), y)
    except SatdtError:  # no tree in time: the SAT loop finds its own first diagram
        return None
    tree = Diagram.from_tree(model.tree_, n_features=B.shape[1])
    if tree.n_nodes == 0:
        return None
    label = np.asarray(model.tree_.classes, dtype=np.int64)  # tree class index -> row label
    low, high = (
        np.where(arc < 0, -1 - label[-1 - np.minimum(arc, -1)], arc)
        for arc in (tree.low, tree.high)
    )
    diagram = Diagram(
        tree.layer,
        tree.feature,
        np.full(tree.n_nodes, 0.5),
        low,
        high,
        n_features=B.shape[1],
        classes=np.arange(n_classes),
    )
    if not _fits(diagram, widths) or diagram.n_nodes == 0 or (_exits(diagram, B)[0] != y).any():
        return None
    return diagram


def minimum_size_diagram(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    widths: Sequence[int] | None = None,
    *,
    max_depth: int | None = None,
    max_width: int | None = None,
    time_limit: float | None = None,
    deadline: float | None = None,
    solver: str = DEFAULT_SOLVER,
    counterexamples: str = "per_exit",
    classes: Sequence[Any] | np.ndarray | None = None,
    feature_names: Sequence[str] | None = None,
) -> DiagramResult:
    """The consistent diagram with the fewest internal nodes within a skeleton, by incremental SAT.

    Parameters
    ----------
    B, y, n_classes
        Binary features (0/1, one row per example), class indices, number of classes.
    widths, max_depth, max_width
        The skeleton, or the automatic one :func:`tree_skeleton` ``(max_depth, max_width)``.
    time_limit, deadline
        Seconds from the call, and/or a ``time.perf_counter()`` value; the earlier applies.
        Past it the smallest diagram found is returned with ``proven=False``.
    solver, counterexamples
        PySAT solver (:data:`~satdt.sat.solving.SOLVERS`); rows added per round
        (:data:`COUNTEREXAMPLE_POLICIES`).
    classes, feature_names
        Labels and names stored in the diagram (default: class indices, no names).

    Returns
    -------
    DiagramResult
        The diagram (over the binary features: threshold 0.5, low = feature false), its node
        count, the proven lower bound and the counts. Identical rows are encoded once.
        Descending search. The first diagram is the smaller of a greedy Gini tree and the
        fewest-errors tree of depth ``len(widths)`` (satdt's dynamic programming, at most 5 s
        or a tenth of the time left), when consistent and fitting the skeleton, shrunk by
        :func:`compact`; else the first SAT answer. With N nodes known, the formula is built
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
    end = _deadline(time_limit, deadline)
    B, y = _binary(B, y, n_classes)
    widths = _widths(widths, max_depth, max_width)
    first, group = group_rows(B)
    if (y != y[first][group]).any():
        raise InfeasibleError(
            "rows with identical features carry different labels, so no diagram is consistent; "
            "relabel them or use minimum_error_diagram"
        )
    first = np.sort(first)
    Bd, yd = B[first], y[first]
    present = np.unique(yd)
    labels = np.arange(n_classes) if classes is None else classes
    if len(present) == 1:
        single = Diagram.single_terminal(
            int(present[0]), n_features=B.shape[1], classes=labels, feature_names=feature_names
        )
        return DiagramResult(single, 0, 0, True, 0, time.perf_counter() - began, widths, 0)
    lower = max(1, len(present) - 1)
    best: Diagram | None = None
    proven = False
    loop = None
    calls = 0
    try:
        starts = [_greedy_start(Bd, yd, n_classes, widths)]
        if starts[0] is None or starts[0].n_nodes > lower:
            left = 5.0 if end is None else 0.1 * (end - time.perf_counter())
            starts.append(_tree_start(Bd, yd, n_classes, widths, min(5.0, left)))
        starts = [compact(d, Bd, yd, n_classes) for d in starts if d is not None]
        best = min(starts, key=lambda d: d.n_nodes) if starts else None
        # a diagram smaller than the start fits the layer caps of its bound
        skeleton = widths
        if best is not None and best.n_nodes > lower:
            caps = layer_caps(widths, best.n_nodes - 1)
            skeleton = caps[: max(l + 1 for l, c in enumerate(caps) if c)]
        if best is None or best.n_nodes > lower:
            loop = DiagramLoop(
                Bd,
                yd,
                n_classes,
                skeleton,
                solver=solver,
                counterexamples=counterexamples,
                deadline=end,
            )
            loop.add_counter(sum(skeleton) - 1)
        reserved = False
        while best is None or best.n_nodes > lower:
            if end is not None and best is not None and not reserved:
                # once a diagram is known, the last share of the time raises the lower bound
                loop.deadline = end - LOWER_SHARE * max(end - time.perf_counter(), 0.0)
                reserved = True
            bound = None if best is None else best.n_nodes - 1
            status, diagram = loop.run(bound)
            if status == "UNKNOWN" and best is not None and not past(end):
                loop.deadline = end
                while status != "SAT" and lower < best.n_nodes:
                    status, diagram = loop.run(lower)
                    if status == "UNKNOWN":
                        break
                    lower += status == "UNSAT"
                if status == "SAT":
                    best = compact(diagram, Bd, yd, n_classes)
                if best.n_nodes > lower:
                    break
                continue
            if status == "UNKNOWN":
                break
            if status == "UNSAT":
                lower = sum(widths) + 1 if bound is None else bound + 1
                proven = True
                break
            best = compact(diagram, Bd, yd, n_classes)
        else:
            proven = True
    except TimeUp:
        pass
    finally:
        if loop is not None:
            calls = loop.calls
            loop.close()
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
        best.n_nodes,
        best.n_nodes if proven else lower,
        proven,
        calls,
        time.perf_counter() - began,
        widths,
        0 if loop is None else len(loop.included),
    )


# ---------------------------------------------------------------------------- minimum error
def _fraction(value: float) -> Fraction:
    """A float as the fraction its shortest decimal form states (0.1 -> 1/10)."""
    return Fraction(repr(float(value)))


def integer_weights(
    class_weight: np.ndarray, alpha: float, n_skeleton: int
) -> tuple[list[dict[int, int]], int, int]:
    """Objective (18) times a common denominator D, as integers.

    Row i reaching the terminal of class k costs ``(W_i - w_ik) / W`` (``W_i`` its weight,
    ``w_ik`` that of its class-k copies, ``W`` the total); an active non-root node costs
    ``alpha / (S - 1)``. Every weight and alpha are read as exact fractions of their
    decimal forms and D is the least common multiple of the denominators of all these costs,
    so ``D * objective(18)`` is an integer sum. Returns, per row, ``{cost: classes}`` as
    ``{integer cost: bitmask of classes}``, the integer node cost, and D.
    """
    W = [[_fraction(w) for w in row] for row in class_weight]
    total = sum(sum(row) for row in W)
    costs = [[(sum(row) - w) / total for w in row] for row in W]
    node = _fraction(alpha) / (n_skeleton - 1) if n_skeleton > 1 else Fraction(0)
    D = 1
    for value in [node, *(c for row in costs for c in row)]:
        D = D * value.denominator // math.gcd(D, value.denominator)
    groups = []
    for row in costs:
        mine: dict[int, int] = {}
        for k, c in enumerate(row):
            if c > 0:
                key = int(c * D)
                mine[key] = mine.get(key, 0) | (1 << k)
        groups.append(mine)
    return groups, int(node * D), D


def maxsat_formula(
    B: np.ndarray, class_weight: np.ndarray, widths: Sequence[int], alpha: float
) -> tuple[WCNF, DiagramFormula, int]:
    """The weighted formula of objective (18): hard (D1)-(D8), soft costs; and D.

    Each distinct row i gets one variable ``E[i][g]`` per distinct positive cost g of its
    terminals (one for a row with a single label); (D8) allows the terminals of that cost
    when ``E[i][g]`` holds, and the soft unit ``NOT E[i][g]`` weighs the cost. An active
    non-root node weighs ``alpha / (S - 1)`` (soft ``NOT A[u]``). Both scaled by D, see
    :func:`integer_weights`.
    """
    n_classes = class_weight.shape[1]
    pool = IDPool()
    formula = DiagramFormula(pool, Skeleton(widths, n_classes), B.shape[1])
    groups, node_cost, D = integer_weights(class_weight, alpha, formula.sk.n_nodes)
    wcnf = WCNF()
    for _, clauses in formula.structure_sections():
        wcnf.extend(clauses)
    for i in range(len(B)):
        relax: dict[int, int] = {}
        soft = []
        for g, (cost, mask) in enumerate(sorted(groups[i].items())):
            E = pool.id(("E", i, g))
            soft.append(([-E], cost))
            relax.update({k: E for k in range(n_classes) if mask >> k & 1})
        for _, clauses in formula.example_sections(i, B[i], relax):
            wcnf.extend(clauses)
        for clause, weight in soft:
            wcnf.append(clause, weight=weight)
    if node_cost:
        for a in formula.A[1:]:
            wcnf.append([-int(a)], weight=node_cost)
    return wcnf, formula, D


def diagram_objective(
    diagram: Diagram,
    B: np.ndarray,
    y: np.ndarray,
    alpha: float,
    widths: Sequence[int],
    sample_weight: np.ndarray | None = None,
) -> float:
    """Objective (18) of a diagram over binary features (as ``satdt.mip.heuristic.objective``).

    Weighted error rate plus ``alpha * (reachable internal nodes - 1) / (sum(widths) - 1)``.
    """
    weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    predicted, _ = _exits(diagram, B)
    error = float(weight[predicted != y].sum()) / float(weight.sum())
    S = sum(widths)
    return error + (alpha * max(diagram.n_nodes - 1, 0) / (S - 1) if S > 1 else 0.0)


def minimum_error_diagram(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    widths: Sequence[int] | None = None,
    *,
    max_depth: int | None = None,
    max_width: int | None = None,
    alpha: float = 0.01,
    sample_weight: np.ndarray | None = None,
    time_limit: float | None = None,
    deadline: float | None = None,
    solver: str = DEFAULT_MAXSAT_SOLVER,
    classes: Sequence[Any] | np.ndarray | None = None,
    feature_names: Sequence[str] | None = None,
) -> DiagramResult:
    """The diagram of least objective (18) within a skeleton, by MaxSAT (PySAT's RC2).

    Parameters
    ----------
    B, y, n_classes, widths, max_depth, max_width, classes, feature_names
        As for :func:`minimum_size_diagram`.
    alpha
        Weight of the node share in objective (18); alpha >= 0.
    sample_weight
        Non-negative row weights (default 1); identical rows are merged, their weights added
        per class.
    time_limit, deadline
        As for :func:`minimum_size_diagram`. Past it RC2 is interrupted and the best diagram
        known (at least the majority terminal) is returned with ``proven=False`` and RC2's
        cost so far as lower bound.
    solver
        The SAT oracle of RC2 (a PySAT solver name).

    Returns
    -------
    DiagramResult
        ``objective`` is objective (18) recomputed on the rows (checked against RC2's cost).
    """
    began = time.perf_counter()
    end = _deadline(time_limit, deadline)
    B, y = _binary(B, y, n_classes)
    widths = _widths(widths, max_depth, max_width)
    if not alpha >= 0:
        raise DataError(f"alpha must be a number >= 0, got {alpha!r}")
    weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    if weight.shape != y.shape or (weight < 0).any() or weight.sum() <= 0:
        raise DataError("sample_weight must hold one non-negative weight per row, not all zero")
    labels = np.arange(n_classes) if classes is None else classes
    first, group = group_rows(B)
    class_weight = np.zeros((len(first), n_classes))
    np.add.at(class_weight, (group, y), weight)
    keep = class_weight.sum(axis=1) > 0
    Bd, class_weight = B[first][keep], class_weight[keep]
    majority = int(np.argmax(class_weight.sum(axis=0)))
    best = Diagram.single_terminal(majority, n_features=B.shape[1], classes=np.arange(n_classes))
    best_value = diagram_objective(best, B, y, alpha, widths, weight)
    lower, proven, calls = 0.0, False, 0
    wcnf, formula, D = maxsat_formula(Bd, class_weight, widths, alpha)
    timed_out = threading.Event()
    with _CountingRC2(wcnf, solver=solver, adapt=True, exhaust=True, minz=True) as rc2:
        rc2.stop = timed_out
        timer = None
        if end is not None:
            timer = threading.Timer(max(end - time.perf_counter(), 0.0), _stop, (rc2, timed_out))
            timer.start()
        try:
            model = None if timed_out.is_set() else rc2.compute(expect_interrupt=True)
        except _Stopped as stopped:
            model, lower = None, min(stopped.cost / D, best_value)
        finally:
            if timer is not None:
                timer.cancel()
        calls = rc2.calls
        if model is not None:  # RC2 finished: its model is optimal
            diagram = formula.decode(model)
            value = diagram_objective(diagram, B, y, alpha, widths, weight)
            if abs(value - rc2.cost / D) > 1e-9 * max(1.0, value):
                raise RuntimeError(
                    f"internal error: the decoded diagram scores {value}, MaxSAT {rc2.cost / D}"
                )
            best, best_value, lower, proven = diagram, value, value, True
    return DiagramResult(
        best.replace(classes=labels, feature_names=feature_names),
        best_value,
        lower,
        proven,
        calls,
        time.perf_counter() - began,
        widths,
        len(Bd),
    )


def _stop(rc2: RC2Stratified, flag: threading.Event) -> None:
    flag.set()
    rc2.interrupt()


class _Stopped(Exception):
    """The clock stopped RC2; ``cost`` is the cost of the cores it had fully processed."""

    def __init__(self, cost: int) -> None:
        super().__init__(cost)
        self.cost = cost


class _CountingRC2(RC2Stratified):
    """RC2 (stratified) that counts its calls to the SAT oracle and stops at the clock.

    Once ``stop`` is set, an interrupted call (or the next call) raises :class:`_Stopped`
    instead of returning: RC2 itself would go on "processing the last found core" of the
    interrupted call — a core the solver never proved, which inflated the lower bound — and
    trim, minimise and exhaust it with more oracle calls past the time limit. The cost
    before the call counts only cores processed in full, so it is a valid lower bound.
    With ``stop`` every oracle call can be interrupted.
    """

    calls = 0
    stop: threading.Event | None = None

    def _call_oracle(self, assumptions: list[int] = (), expect_interrupt: bool = False) -> bool:
        if self.stop is not None and self.stop.is_set():
            raise _Stopped(self.cost)
        self.calls += 1
        cost = self.cost
        # every call interruptible: RC2 asks for that only in its main loop, not when it
        # trims, minimises or exhausts a core (one such call ran 4.4 s past a 5 s limit)
        result = super()._call_oracle(list(assumptions), self.stop is not None)
        if result is None and self.stop is not None and self.stop.is_set():
            raise _Stopped(cost)
        return result


# ---------------------------------------------------------------------------- CNF with a legend
def in_design_units(
    diagram: Diagram,
    column: np.ndarray,
    threshold: np.ndarray,
    feature_names: Sequence[str] | None = None,
    indicator: Sequence[int] | None = None,
) -> Diagram:
    """A diagram over binary features ``b = [x[column[b]] > threshold[b]]`` on the design columns.

    ``x[b] <= 0.5`` (feature false, low) is ``x[column[b]] <= threshold[b]``.
    """
    n_features = len(feature_names) if feature_names is not None else int(np.max(column)) + 1
    return diagram.replace(
        feature=np.asarray(column, np.int64)[diagram.feature],
        threshold=np.asarray(threshold, float)[diagram.feature],
        n_features=n_features,
        feature_names=feature_names,
        indicator=indicator,
    )


@dataclass
class DiagramCNF:
    """The whole formula of a skeleton and distinct rows: named sections, variable counts, legend.

    ``legend[v]`` says what variable v means; ``sections`` hold (D1)-(D8) (all rows) and, with
    a node limit, (D9): the sequential counter of ``encodings/node-counter.md`` over the
    active-node variables, with the bound as a unit clause.
    """

    formula: DiagramFormula
    sections: list[tuple[str, Clauses]]
    var_counts: list[tuple[str, int]]
    legend: dict[int, str]

    @property
    def n_vars(self) -> int:
        return self.formula.pool.top

    @property
    def n_clauses(self) -> int:
        return sum(len(c) for _, c in self.sections)

    def clauses(self) -> Clauses:
        return [c for _, cs in self.sections for c in cs]


def _quote(value: Any) -> str:
    return '"' + str(value).replace('"', "'") + '"'


def diagram_cnf(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    widths: Sequence[int],
    *,
    max_nodes: int | None = None,
    feature_names: Sequence[str] | None = None,
    classes: Sequence[Any] | None = None,
    row_names: Sequence[str] | None = None,
) -> DiagramCNF:
    """The CNF of the consistent diagrams of a skeleton with at most ``max_nodes`` internal nodes.

    ``B``, ``y``: distinct binary rows and their classes, all encoded. Variables are created
    in the order F, A, Lo, Hi, R, then V and G row by row (and the counter's H); clauses
    come in the order (D1)-(D5), then (D6), (D7), (D8) each over all rows, then (D9).
    """
    B, y = _binary(B, y, n_classes)
    if B.shape[1] == 0:
        raise DataError("every binary feature is constant: no node can test anything")
    pool = IDPool()
    f = DiagramFormula(pool, Skeleton(widths, n_classes), B.shape[1])
    sk, m = f.sk, f.m
    names = [f"x[{a}]" for a in range(m)] if feature_names is None else list(feature_names)
    labels = list(range(n_classes)) if classes is None else list(classes)
    rows = [f"row {i}" for i in range(len(B))] if row_names is None else list(row_names)
    sections = f.structure_sections()
    per_row: dict[str, Clauses] = {"(D6)": [], "(D7)": [], "(D8)": []}
    for i in range(len(B)):
        relax = {k: 0 for k in range(n_classes) if k != y[i]}
        for name, clauses in f.example_sections(i, B[i], relax):
            per_row[name].extend(clauses)
    sections += list(per_row.items())
    S = sk.n_nodes
    var_counts = [
        ("F", f.F.size),
        ("A", S - 1),
        ("Lo", len(f.arc_lo)),
        ("Hi", len(f.arc_hi)),
        ("R", sum(len(r) for r in f.R.values())),
        ("V", len(B) * (S - 1)),
        ("G", len(B) * S),
    ]
    legend: dict[int, str] = {}

    def where(s: int) -> str:
        return f"node {s}" if s >= 0 else f"class {_quote(labels[-1 - s])}"

    for u in range(S):
        for a in range(m):
            legend[int(f.F[u, a])] = f"F node={u} feature={a} : node {u} tests {_quote(names[a])}"
    for u in range(1, S):
        legend[int(f.A[u])] = f"A node={u} : node {u} is active"
    for side, arcs in (("Lo", f.arc_lo), ("Hi", f.arc_hi)):
        word = "low (feature false)" if side == "Lo" else "high (feature true)"
        for u, s, v in zip(f.arc_u, f.arc_s, arcs, strict=True):
            legend[int(v)] = (
                f"{side} node={u} to={s} : the {word} side of node {u} goes to {where(s)}"
            )
    for v, R in f.R.items():
        above = int(sk.first[sk.layer[v] - 1])
        for t, r in enumerate(R):
            p, side = divmod(t, 2)
            legend[int(r)] = (
                f"R node={v} arc={t} : node {v} is entered by an arc up to the "
                f"{('low', 'high')[side]} side of node {above + p}"
            )
    for i in range(len(B)):
        V, G = f.example_vars(i)
        for u in range(1, S):
            legend[int(V[u])] = f"V example={i} node={u} : {rows[i]} visits node {u}"
        for u in range(S):
            legend[int(G[u])] = f"G example={i} node={u} : {rows[i]} goes high at node {u}"
    if max_nodes is not None and max_nodes - 1 < S - 1:
        if max_nodes < 1:
            raise DataError(f"max_nodes must be at least 1 (the root), got {max_nodes}")
        counter = SequentialCounter(pool, f.A[1:], max_nodes - 1)
        H = counter.H
        for v in range(H.shape[0]):
            for j in range(H.shape[1]):
                if H[v, j]:
                    legend[int(H[v, j])] = (
                        f"H prefix={v} count={j} : at least {j} of the nodes 1..{v} are active"
                    )
        bound = [[lit] for lit in counter.at_most(max_nodes - 1)]
        sections.append(("(D9)", counter.clauses + bound))
        var_counts.append(("H", counter.n_vars))
    return DiagramCNF(f, sections, var_counts, legend)


def encode_diagram_dimacs(
    dataset: Dataset, widths: Sequence[int], *, max_nodes: int | None = None
) -> str:
    """The DIMACS CNF whose models are the diagrams of skeleton ``widths`` consistent with the data.

    The data are binarised as for the trees (:func:`satdt.sat.dimacs.encode_dimacs`); every
    distinct row is encoded. ``max_nodes`` also bounds the internal nodes, root included.
    The text: a header (data, skeleton, counts per variable kind and per formula), one
    comment per variable, ``p cnf V C`` and the clauses (see ``encodings/diagram.md``).

    Raises
    ------
    DataError
        No labels, contradictory rows, a bad skeleton or node limit, or no usable feature.
    """
    widths = check_widths(widths)
    if dataset.y is None:
        raise DataError("the data has no label column: encoding needs the class of every row")
    data = prepare(
        dataset,
        None,
        consistency=True,
        resolve=None,
        recorder=Recorder("size"),
        deadline=None,
        max_thresholds=None,
        max_memory_mb=1024,
    )
    view = data.binary()
    first = np.sort(group_rows(view.B)[0])
    lines = data.line_numbers[first]
    cnf = diagram_cnf(
        view.B[first],
        data.y[first],
        len(data.classes),
        widths,
        max_nodes=max_nodes,
        feature_names=view.names,
        classes=[str(c) for c in data.classes],
        row_names=[f"the row on line {line}" for line in lines],
    )
    f = cnf.formula
    source = "the data" if dataset.source is None else Path(dataset.source).name
    limit = "" if max_nodes is None else f" with at most {max_nodes} internal nodes"
    out = [
        f"c satdt encode --diagram: decision diagrams of skeleton {list(widths)}{limit}",
        f"c that classify every row of {source} correctly; formulas (D1)-(D9) and counts:",
        "c encodings/diagram.md",
        f"c data: {len(data.y)} rows ({len(first)} distinct), {f.m} binary features, "
        f"{len(data.classes)} classes",
        f"c skeleton: {f.sk.n_nodes} internal nodes in {len(widths)} layers; node 0 is the root",
        f"c variables: {cnf.n_vars} = " + " + ".join(f"{k} {n}" for k, n in cnf.var_counts),
        f"c clauses: {cnf.n_clauses} = " + " + ".join(f"{k} {len(c)}" for k, c in cnf.sections),
        "c",
        "c Nodes are numbered 0.. layer by layer. A node tests one binary feature; a row for",
        "c which it is false takes the low side, otherwise the high side. A side goes to a",
        "c node of the next layer or to the terminal of a class.",
        "c binary features:",
        *(f"c   feature {a}: {_quote(name)}" for a, name in enumerate(view.names)),
        "c classes:",
        *(f"c   class {k}: {_quote(label)}" for k, label in enumerate(data.classes)),
        "c",
        "c variables:",
        *(f"c {v} {text}" for v, text in sorted(cnf.legend.items())),
        f"p cnf {cnf.n_vars} {cnf.n_clauses}",
    ]
    out.extend(" ".join(map(str, clause)) + " 0" for clause in cnf.clauses())
    return "\n".join(out) + "\n"
