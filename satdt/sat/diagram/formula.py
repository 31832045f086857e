"""The SAT formula of a decision diagram's skeleton: variables, clauses (D1)-(D8), decoding.

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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pysat.formula import IDPool

from ...core.errors import DataError
from ...models.diagram import Diagram
from ...models.diagram_checks import check_widths

Clauses = list[list[int]]


# ---------------------------------------------------------------------------- skeleton
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


def layer_caps(widths: Sequence[int], max_splits: int) -> tuple[int, ...]:
    """The most nodes each layer can use in a diagram of at most ``max_splits`` internal nodes.

    Every node of layer l + 1 is entered from layer l, whose nodes have two arcs each, so k
    nodes in layer l need at least ``ceil(k / 2**j)`` nodes in layer l - j: layer l holds at
    most the largest ``k <= widths[l]`` with ``k + sum(ceil(k / 2**j), j = 1..l) <= max_splits``
    (0 when even one node does not fit).
    """
    caps = []
    for l, width in enumerate(widths):
        cap = 0
        for k in range(1, width + 1):
            if k + sum(-(-k // 2**j) for j in range(1, l + 1)) > max_splits:
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

    # ------------------------------------------------------------------ exact paths (constraints)
    def single_successor_clauses(self) -> Clauses:
        """At most one low and one high successor per node (pairwise): with them and
        :meth:`path_clauses` a row visits exactly the nodes of its path, as flows and
        fairness need (plain (D2) lets a node keep several arcs of a side)."""
        clauses: Clauses = []
        for arcs in (self.arc_lo, self.arc_hi):
            for u in range(self.sk.n_nodes):
                mine = arcs[self.arc_u == u].tolist()
                clauses += [[-a, -b] for k, a in enumerate(mine) for b in mine[k + 1 :]]
        return clauses

    def path_clauses(self, i: int, V: np.ndarray, G: np.ndarray) -> Clauses:
        """Example i visits node v only along an arc of its side from a node it visits.

        ``P[i][u][v]`` (u -> v taken): ``V[v] -> OR_u P``, ``P -> V[u]``, ``P AND G[u] ->
        Hi[u][v]``, ``P AND NOT G[u] -> Lo[u][v]`` (the converse of (D7), so V is exact).
        """
        pool, sk = self.pool, self.sk
        clauses: Clauses = []
        for v in range(1, sk.n_nodes):
            l = int(sk.layer[v])
            into = []
            for u in range(int(sk.first[l - 1]), int(sk.first[l])):
                p = pool.id(("P", i, u, v))
                into.append(p)
                if u:
                    clauses.append([-p, int(V[u])])
                clauses.append([-p, -int(G[u]), pool.id(("Hi", u, v))])
                clauses.append([-p, int(G[u]), pool.id(("Lo", u, v))])
            clauses.append([-int(V[v]), *into])
        return clauses

    def terminal_var_clauses(
        self, i: int, V: np.ndarray, G: np.ndarray
    ) -> tuple[np.ndarray, Clauses]:
        """``T[i][k]``: example i ends in the terminal of class k (exact with the clauses of
        :meth:`single_successor_clauses` and :meth:`path_clauses`): every arc of its side into
        terminal k from a visited node forces ``T[i][k]``, and at most one T holds."""
        K = self.sk.n_classes
        T = np.array([self.pool.id(("T", i, k)) for k in range(K)], dtype=np.int64)
        keep = np.flatnonzero(self.arc_s < 0)
        u, k = self.arc_u[keep], -1 - self.arc_s[keep]
        low = np.stack([-V[u], G[u], -self.arc_lo[keep], T[k]], axis=1)
        high = np.stack([-V[u], -G[u], -self.arc_hi[keep], T[k]], axis=1)
        block = np.stack([low, high], axis=1).reshape(-1, 4)
        clauses = self._drop_root(block, np.repeat(u == 0, 2))
        clauses += [[-int(a), -int(b)] for x, a in enumerate(T) for b in T[x + 1 :]]
        return T, clauses

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
    """The reachable part of a skeleton assignment as a :class:`~satdt.Diagram`.

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


@dataclass(frozen=True)
class Names:
    """The labels and feature names a diagram search stores in the diagram it returns.

    Parameters
    ----------
    classes : sequence, optional
        The label of each class index (default: the indices ``0 .. n_classes - 1``).
    feature_names : sequence of str, optional
        One name per column of ``B`` (default: none).
    """

    classes: Sequence[Any] | np.ndarray | None = None
    feature_names: Sequence[str] | None = None

    def labels(self, n_classes: int) -> Sequence[Any] | np.ndarray:
        """``classes``, else the class indices."""
        return np.arange(n_classes) if self.classes is None else self.classes


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
