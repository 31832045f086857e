"""The MILP of Florio et al., "Optimal Decision Diagrams for Classification" (AAAI 2023).

Formulation (1)-(18) over a skeleton of internal layers of given widths, with the paper's
extensions: demographic parity (19) and its false-positive / false-negative variants, a cap on
the number of active nodes (parsimony) and a minimum flow through every active node (20).
The model is built once, solver-agnostic (:mod:`satdt.mip.solvers`), and solved with HiGHS or SCIP.

Notation (the paper's): internal nodes ``0..N-1`` listed by layer (node 0 is the root), terminal
``N+k`` for class ``k``; arcs go from a node of layer ``l`` to every node of layer ``l+1`` and to
every terminal. Per node: hyperplane ``a_v`` in ``[-1, 1]^d`` and ``b_v`` in ``[-1, 1]``, activity
``d_v``; per arc: ``y-``/``y+``; per row and node: flows ``w-``/``w+``; per row and arc: ``z-``/``z+``;
per row and layer: the side ``lambda``. A row takes the *negative* side of ``v`` when
``a_v x + eps <= b_v`` (13) and the *positive* side when ``a_v x >= b_v`` (14).

Model-size reductions (all exact):

* rows with identical features are merged into one row carrying its weight per class (and per
  fairness group and class): identical rows satisfy the same constraints (13)-(14), so they take
  the same path in every feasible solution; rows of zero weight are dropped (they enter no sum);
* the terminal flows ``w_iv`` of (17) are substituted into (18)-(19) (they are defined by an equality);
* the in-degree ordering (12) is stated for consecutive nodes of a layer only (it is transitive).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..core.errors import SatdtError
from ..models.diagram_checks import Fairness
from .solvers import LinearModel, check_clock


@dataclass(frozen=True)
class MilpOptions:
    """The search options of :func:`solve_diagram`.

    Parameters
    ----------
    alpha : float
        Weight of the node count in objective (18): weighted error rate plus
        ``alpha * (active non-root nodes) / (internal nodes - 1)``; it lies in [0, 1 + alpha].
    split : {"univariate", "multivariate"}
        Univariate splits add (15)-(16); multivariate splits are hyperplanes ``a x <= b``.
    solver : {"highs", "scip"}
        HiGHS (``highspy``, big-M rows) or SCIP (``pyscipopt``, big-M rows or indicators).
    cutoff : float, optional
        Only diagrams of objective at most ``cutoff`` are sought (status "infeasible" if none).
    max_splits : int, optional
        Parsimony: at most this many active internal nodes, the root included.
    min_flow : float, optional
        Stability (20): every active internal node is reached by a weight of at least ``min_flow``.
    fairness : Fairness, optional
        Fairness constraint (19) or a false-positive / false-negative variant (see :class:`Fairness`).
    epsilon : float
        The strictness gap of (13): negative side ``a x + epsilon <= b``.
    threads : int
        Threads for HiGHS (SCIP is sequential).
    log : bool
        Show the solver's log.
    indicators : bool
        SCIP only: state (13)-(14) as indicator constraints (``addConsIndicator``, the paper's
        choice; the flows ``w`` become binary) instead of big-M rows. Measured slower than big-M
        on small instances (echocardiogram, skeleton (1, 2, 2): 25.8 s against 16.3 s to optimality).
    """

    alpha: float = 0.01
    split: str = "univariate"
    solver: str = "highs"
    cutoff: float | None = None
    max_splits: int | None = None
    min_flow: float | None = None
    fairness: Fairness | None = None
    epsilon: float = 1e-4
    threads: int = 1
    log: bool = False
    indicators: bool = False


# --------------------------------------------------------------------------------------------
# data: merged, weighted rows


@dataclass
class _Rows:
    """Distinct rows: features, class weights (n, K), fairness weights (n, 2, 2) as [group][is positive]."""

    X: np.ndarray
    class_weight: np.ndarray
    group_weight: np.ndarray
    inverse: np.ndarray

    @property
    def weight(self) -> np.ndarray:
        return self.class_weight.sum(axis=1)


def _merge_rows(
    X: np.ndarray, y: np.ndarray, n_classes: int, weight: np.ndarray, fairness: Fairness | None
) -> _Rows:
    """Merge identical feature vectors into weighted rows; drop rows of zero weight."""
    keep = weight > 0
    X, y, weight = X[keep], y[keep], weight[keep]
    distinct, inverse = np.unique(X, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    class_weight = np.zeros((len(distinct), n_classes))
    np.add.at(class_weight, (inverse, y), weight)
    group_weight = np.zeros((len(distinct), 2, 2))
    if fairness is not None:
        is_pos = (y == fairness.positive).astype(int)
        for g, mask in enumerate((fairness.group1, fairness.group2)):
            member = np.asarray(mask)[keep]
            np.add.at(group_weight, (inverse[member], g, is_pos[member]), weight[member])
    return _Rows(distinct, class_weight, group_weight, inverse)


# --------------------------------------------------------------------------------------------
# skeleton and variable layout


class _Skeleton:
    """Internal nodes by layer, terminals after them, and the arcs of the graph G = (V, A)."""

    def __init__(self, widths: tuple[int, ...], n_classes: int) -> None:
        self.widths = widths
        self.n_layers = len(widths)
        self.n_nodes = sum(widths)
        self.n_classes = n_classes
        self.first = np.concatenate(([0], np.cumsum(widths)))
        self.layer = np.repeat(np.arange(self.n_layers), widths)
        tail, head = [], []
        for u in range(self.n_nodes):
            successors = self.successors(u)
            tail += [u] * len(successors)
            head += successors
        self.tail = np.array(tail, dtype=np.int64)
        self.head = np.array(head, dtype=np.int64)

    def successors(self, u: int) -> list[int]:
        """delta+(u): the next layer, then the terminals, by increasing index."""
        l = self.layer[u]
        nxt = list(range(self.first[l + 1], self.first[l + 2])) if l + 1 < self.n_layers else []
        return nxt + list(range(self.n_nodes, self.n_nodes + self.n_classes))

    def arc(self, u: int, v: int) -> int:
        """The index of arc (u, v)."""
        return int(np.flatnonzero((self.tail == u) & (self.head == v))[0])


class _Layout:
    """Column indices of every variable block."""

    def __init__(self, sk: _Skeleton, n_rows: int, n_features: int, univariate: bool) -> None:
        N, A, D, d = sk.n_nodes, len(sk.tail), sk.n_layers, n_features
        sizes = {
            "a": N * d,
            "b": N,
            "e": N * d if univariate else 0,
            "d": N,
            "yneg": A,
            "ypos": A,
            "lam": n_rows * D,
            "wneg": n_rows * N,
            "wpos": n_rows * N,
            "zneg": n_rows * A,
            "zpos": n_rows * A,
        }
        shapes = {
            "a": (N, d),
            "b": (N,),
            "e": (N, d) if univariate else (0,),
            "d": (N,),
            "yneg": (A,),
            "ypos": (A,),
            "lam": (n_rows, D),
            "wneg": (n_rows, N),
            "wpos": (n_rows, N),
            "zneg": (n_rows, A),
            "zpos": (n_rows, A),
        }
        offset = 0
        self.block: dict[str, np.ndarray] = {}
        for name, size in sizes.items():
            self.block[name] = np.arange(offset, offset + size).reshape(shapes[name])
            offset += size
        self.n_cols = offset

    def __getitem__(self, name: str) -> np.ndarray:
        return self.block[name]


class _RowBuilder:
    """Accumulates linear rows ``lb <= sum coef * x <= ub`` given as (row, column, coefficient) triples."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lb: list[np.ndarray] = []
        self.ub: list[np.ndarray] = []
        self.count = 0

    def add(
        self,
        n_new: int,
        rows: ArrayLike,
        cols: ArrayLike,
        vals: ArrayLike,
        lb: ArrayLike,
        ub: ArrayLike,
    ) -> None:
        """Add ``n_new`` rows; ``rows`` are local indices in ``0..n_new-1``, ``vals``/``lb``/``ub`` broadcast."""
        rows, cols = (
            np.asarray(rows, dtype=np.int64).ravel(),
            np.asarray(cols, dtype=np.int64).ravel(),
        )
        self.rows.append(rows + self.count)
        self.cols.append(cols)
        self.vals.append(np.broadcast_to(np.asarray(vals, dtype=np.float64), rows.shape).ravel())
        self.lb.append(np.broadcast_to(np.asarray(lb, dtype=np.float64), (n_new,)))
        self.ub.append(np.broadcast_to(np.asarray(ub, dtype=np.float64), (n_new,)))
        self.count += n_new

    def csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        rows = np.concatenate(self.rows) if self.rows else np.zeros(0, dtype=np.int64)
        cols = np.concatenate(self.cols) if self.cols else np.zeros(0, dtype=np.int64)
        vals = np.concatenate(self.vals) if self.vals else np.zeros(0)
        order = np.argsort(rows, kind="stable")
        indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=self.count))))
        lb = np.concatenate(self.lb) if self.lb else np.zeros(0)
        ub = np.concatenate(self.ub) if self.ub else np.zeros(0)
        return indptr, cols[order], vals[order], lb, ub


def _pairs(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (i, j) pair of two index vectors, flattened."""
    return np.repeat(left, len(right)), np.tile(right, len(left))


# --------------------------------------------------------------------------------------------
# the model: one function per constraint family


@dataclass
class _Problem:
    """Everything needed to build, start, solve and decode one MILP."""

    rows: _Rows
    sk: _Skeleton
    lay: _Layout
    univariate: bool
    alpha: float
    epsilon: float
    total: float
    model: LinearModel


@dataclass
class _Columns:
    """The columns of the MILP: layout, bounds and integrality."""

    lay: _Layout
    lb: np.ndarray
    ub: np.ndarray
    integer: np.ndarray


def _columns(sk: _Skeleton, n: int, d: int, univariate: bool) -> _Columns:
    """The variables: ``a`` and ``b`` in [-1, 1] ((13)-(14)), binary ``e`` (15), ``d``, ``y``
    and ``lambda``, flows ``w`` and ``z`` in [0, 1] (continuous, Theorem 1); the root is active."""
    lay = _Layout(sk, n, d, univariate)
    lb = np.zeros(lay.n_cols)
    ub = np.ones(lay.n_cols)
    lb[lay["a"].ravel()] = -1.0
    lb[lay["b"]] = -1.0
    integer = np.zeros(lay.n_cols, dtype=bool)
    for name in ("e", "d", "yneg", "ypos", "lam"):
        integer[lay[name].ravel()] = True
    lb[lay["d"][0]] = 1.0  # the root is active
    return _Columns(lay, lb, ub, integer)


def _cost(rows: _Rows, sk: _Skeleton, lay: _Layout, alpha: float, total: float) -> np.ndarray:
    """Objective (18), the terminal flows (17) substituted: ``sum_i sum_v phi_iv z_i.v`` over arcs
    into terminals, plus ``alpha / (N - 1)`` per active non-root node."""
    N = sk.n_nodes
    cost = np.zeros(lay.n_cols)
    to_terminal = np.flatnonzero(sk.head >= N)
    # phi_iv of (18), weighted: the weight of row i not of the class of terminal v
    phi = (rows.weight[:, None] - rows.class_weight)[:, sk.head[to_terminal] - N] / total
    cost[lay["zneg"][:, to_terminal].ravel()] = phi.ravel()
    cost[lay["zpos"][:, to_terminal].ravel()] = phi.ravel()
    if N > 1:
        cost[lay["d"][1:]] = alpha / (N - 1)
    return cost


def _add_flow_conservation(R: _RowBuilder, sk: _Skeleton, lay: _Layout, n: int) -> None:
    """Flow conservation (1)-(3): a unit of flow per row enters the root; the flow into a node
    (``w+ + w-``) is its inflow, and each side's flow leaves along that side's arcs."""
    N, A = sk.n_nodes, len(sk.tail)
    I = np.arange(n)
    wn, wp, zn, zp = (lay[k] for k in ("wneg", "wpos", "zneg", "zpos"))
    # (1) flow conservation into each internal node: w+ + w- = [v = 0] or inflow
    r_iv = I[:, None] * N + np.arange(N)[None, :]
    into = np.flatnonzero(sk.head < N)
    ri, ai = _pairs(I, into)
    rows_1 = np.concatenate(
        (r_iv.ravel(), r_iv.ravel(), ri * N + sk.head[ai], ri * N + sk.head[ai])
    )
    cols_1 = np.concatenate((wp.ravel(), wn.ravel(), zp[ri, ai], zn[ri, ai]))
    vals_1 = np.concatenate((np.ones(2 * n * N), -np.ones(2 * len(ri))))
    rhs_1 = np.zeros((n, N))
    rhs_1[:, 0] = 1.0
    R.add(n * N, rows_1, cols_1, vals_1, rhs_1.ravel(), rhs_1.ravel())
    # (2)-(3) outflow of each side: w-_iu = sum_v z-_iuv, w+_iu = sum_v z+_iuv
    ri, ai = _pairs(I, np.arange(A))
    for w, z in ((wn, zn), (wp, zp)):
        R.add(
            n * N,
            np.concatenate((r_iv.ravel(), ri * N + sk.tail[ai])),
            np.concatenate((w.ravel(), z[ri, ai])),
            np.concatenate((np.ones(n * N), -np.ones(len(ri)))),
            0.0,
            0.0,
        )


def _add_layer_sides(R: _RowBuilder, sk: _Skeleton, lay: _Layout, n: int) -> None:
    """(4)-(5): per row and layer, one side: ``sum_l w- <= 1 - lambda``, ``sum_l w+ <= lambda``."""
    N, D = sk.n_nodes, sk.n_layers
    ri, ui = _pairs(np.arange(n), np.arange(N))
    r_il = ri * D + sk.layer[ui]
    for w, sign, ub in ((lay["wneg"], 1.0, 1.0), (lay["wpos"], -1.0, 0.0)):
        R.add(
            n * D,
            np.concatenate((r_il, np.arange(n * D))),
            np.concatenate((w[ri, ui], lay["lam"].ravel())),
            np.concatenate((np.ones(len(ri)), np.full(n * D, sign))),
            -np.inf,
            ub,
        )


def _add_arcs(R: _RowBuilder, sk: _Skeleton, lay: _Layout) -> None:
    """Arcs and activity (6)-(8): an active node has one arc per side, an active non-root node
    an incoming arc, and arcs only enter active nodes."""
    N, A = sk.n_nodes, len(sk.tail)
    yn, yp, dv = lay["yneg"], lay["ypos"], lay["d"]
    # (6) one arc per side of an active node: sum_v y+_uv = sum_v y-_uv = d_u
    for y in (yp, yn):
        R.add(
            N,
            np.concatenate((sk.tail, np.arange(N))),
            np.concatenate((y, dv)),
            np.concatenate((np.ones(A), -np.ones(N))),
            0.0,
            0.0,
        )
    # (7) an active non-root node has an incoming arc: d_v <= sum_u (y+_uv + y-_uv)
    into = np.flatnonzero(sk.head < N)
    if N > 1:
        R.add(
            N - 1,
            np.concatenate((np.arange(N - 1), sk.head[into] - 1, sk.head[into] - 1)),
            np.concatenate((dv[1:], yp[into], yn[into])),
            np.concatenate((np.ones(N - 1), -np.ones(2 * len(into)))),
            -np.inf,
            0.0,
        )
    # (8) arcs only into active nodes: y+_uv + y-_uv <= d_v (d_v = 1 for terminals)
    internal_head = sk.head < N
    cols_8 = np.stack((yp, yn, np.where(internal_head, dv[np.minimum(sk.head, N - 1)], -1)), axis=1)
    vals_8 = np.where(internal_head[:, None], [1.0, 1.0, -1.0], [1.0, 1.0, 0.0])
    keep = cols_8 >= 0
    R.add(
        A,
        np.repeat(np.arange(A), 3)[keep.ravel()],
        cols_8[keep],
        vals_8[keep],
        -np.inf,
        np.where(internal_head, 0.0, 1.0),
    )


def _add_arc_flow(R: _RowBuilder, sk: _Skeleton, lay: _Layout, n: int) -> None:
    """(9)-(10): flow only along chosen arcs, ``z+_iuv <= y+_uv`` and ``z-_iuv <= y-_uv``."""
    A = len(sk.tail)
    r = np.arange(n * A)
    for z, y in ((lay["zpos"], lay["ypos"]), (lay["zneg"], lay["yneg"])):
        R.add(
            n * A,
            np.concatenate((r, r)),
            np.concatenate((z.ravel(), np.tile(y, n))),
            np.concatenate((np.ones(n * A), -np.ones(n * A))),
            -np.inf,
            0.0,
        )


def _add_symmetry(R: _RowBuilder, sk: _Skeleton, lay: _Layout) -> None:
    """Symmetry breaking (11)-(12): a node's negative arc precedes its positive one, and the
    nodes of layers 2..D-1 are weakly ordered by in-degree (12), for consecutive nodes only."""
    A, D = len(sk.tail), sk.n_layers
    yn, yp = lay["yneg"], lay["ypos"]
    # (11) y-_uv = 1 forbids y+_uw for every w <= v
    r11, c11 = [], []
    for a in range(A):
        same = np.flatnonzero((sk.tail == sk.tail[a]) & (sk.head <= sk.head[a]))
        r11 += [a] * (len(same) + 1)
        c11 += [yn[a], *yp[same].tolist()]
    R.add(A, r11, c11, 1.0, -np.inf, 1.0)
    # (12) weak in-degree ordering of consecutive nodes of layers 2..D-1 (it is transitive)
    r12, c12, v12, n12 = [], [], [], 0
    for l in range(2, D):
        for u in range(sk.first[l], sk.first[l + 1] - 1):
            for v, sign in ((u, 1.0), (u + 1, -1.0)):
                arcs = np.flatnonzero(sk.head == v)
                r12 += [n12] * (2 * len(arcs))
                c12 += yp[arcs].tolist() + yn[arcs].tolist()
                v12 += [sign] * (2 * len(arcs))
            n12 += 1
    if n12:
        R.add(n12, r12, c12, v12, 0.0, np.inf)


def _add_univariate(R: _RowBuilder, sk: _Skeleton, lay: _Layout, d: int) -> None:
    """Univariate splits (15)-(16): one feature ``e_vj`` per node and ``|a_vj| <= e_vj``."""
    N = sk.n_nodes
    R.add(N, np.repeat(np.arange(N), d), lay["e"].ravel(), 1.0, 1.0, 1.0)
    r = np.arange(N * d)
    for sign in (1.0, -1.0):
        R.add(
            N * d,
            np.concatenate((r, r)),
            np.concatenate((lay["a"].ravel(), lay["e"].ravel())),
            np.concatenate((np.full(N * d, sign), -np.ones(N * d))),
            -np.inf,
            0.0,
        )


def _add_parsimony(R: _RowBuilder, sk: _Skeleton, lay: _Layout, max_splits: int) -> None:
    """Parsimony: ``sum_v d_v <= max_splits`` active internal nodes, the root included."""
    R.add(1, np.zeros(sk.n_nodes), lay["d"], 1.0, -np.inf, float(max_splits))


def _add_min_flow(
    R: _RowBuilder, rows: _Rows, sk: _Skeleton, lay: _Layout, min_flow: float
) -> None:
    """Stability (20): the weight through an active node is at least ``min_flow``
    (its inflow is ``w+ + w-`` by (1))."""
    N, n = sk.n_nodes, len(rows.X)
    weight = rows.weight
    R.add(
        N,
        np.concatenate((np.tile(np.arange(N), 2 * n), np.arange(N))),
        np.concatenate((lay["wpos"].ravel(), lay["wneg"].ravel(), lay["d"])),
        np.concatenate((np.repeat(weight, N), np.repeat(weight, N), np.full(N, -float(min_flow)))),
        0.0,
        np.inf,
    )


def _add_fairness(
    R: _RowBuilder, rows: _Rows, sk: _Skeleton, lay: _Layout, fairness: Fairness
) -> None:
    """Fairness (19) on rates: ``rate(g1) >= xi rate(g2)`` (and the reverse when ``both_ways``).

    The flow of row i into the positive terminal is ``F_i = sum_u z+_iuP + z-_iuP`` ((17) substituted);
    each rate is ``c0 + sum_i c_i F_i``: parity ``sum_{g} F_i / |g|``, false positives
    ``sum_{g, c_i != P} F_i / |g, c_i != P|``, false negatives ``1 - sum_{g, c_i = P} F_i / |g, c_i = P|``.
    """
    gw = rows.group_weight
    if fairness.kind == "parity":
        member = gw.sum(axis=2)
    elif fairness.kind == "false_positive":
        member = gw[:, :, 0]
    else:
        member = gw[:, :, 1]
    size = member.sum(axis=0)
    base = {
        "parity": "rows",
        "false_positive": "rows of another class",
        "false_negative": "rows of the positive class",
    }
    for g in range(2):
        if size[g] <= 0:
            raise SatdtError(
                f"fairness kind={fairness.kind!r} needs group{g + 1} to hold {base[fairness.kind]} "
                f"(positive={fairness.positive}) with positive weight; it holds none: choose other groups"
            )
    sign = -1.0 if fairness.kind == "false_negative" else 1.0
    c0 = 1.0 if fairness.kind == "false_negative" else 0.0
    coef = sign * member / size  # (n, 2)
    arcs = np.flatnonzero(sk.head == sk.n_nodes + fairness.positive)
    n = len(rows.X)
    ri, ai = _pairs(np.arange(n), arcs)
    directions = [(0, 1), (1, 0)] if fairness.both_ways else [(0, 1)]
    for g, h in directions:
        c = coef[:, g] - fairness.ratio * coef[:, h]
        R.add(
            1,
            np.zeros(2 * len(ri)),
            np.concatenate((lay["zpos"][ri, ai], lay["zneg"][ri, ai])),
            np.concatenate((c[ri], c[ri])),
            fairness.ratio * c0 - c0,
            np.inf,
        )


def _switch_rows(
    rows: _Rows, sk: _Skeleton, lay: _Layout, univariate: bool, epsilon: float, deadline: float
) -> tuple[np.ndarray, ...]:
    """Splits (13)-(14) as switch rows ``w-_iv = 1 => a_v x_i + eps <= b_v`` and
    ``w+_iv = 1 => a_v x_i >= b_v``, each with its big-M.

    For x in [0,1]^d, a in [-1,1]^d (``|a|_1 <= 1`` if univariate) ``|a x_i| <= s_i`` where
    ``s_i = max_j x_ij`` (univariate) or ``sum_j x_ij`` (multivariate); with ``|b| <= 1``, (13)
    ``a x_i - b <= -eps`` needs ``M_i = s_i + 1 + eps`` and (14) ``b - a x_i <= 0`` needs
    ``M_i = s_i + 1``. Returns (var, indptr, indices, values, rhs, big_m) of the switch rows.
    """
    n = len(rows.X)
    wn, wp = lay["wneg"], lay["wpos"]
    s = rows.X.max(axis=1) if univariate else rows.X.sum(axis=1)
    nz_i, nz_j = np.nonzero(rows.X)
    counts = np.bincount(nz_i, minlength=n) + 1
    last = np.cumsum(counts) - 1
    body = np.ones(last[-1] + 1 if n else 0, dtype=bool)
    body[last] = False
    sw_var, sw_count, sw_idx, sw_val, sw_rhs, sw_m = [], [], [], [], [], []
    for v in range(sk.n_nodes):
        check_clock(deadline)
        for sign, w, rhs, extra in ((1.0, wn, -epsilon, epsilon), (-1.0, wp, 0.0, 0.0)):
            idx = np.empty(len(body), dtype=np.int64)
            val = np.empty(len(body))
            idx[body] = lay["a"][v][nz_j]
            val[body] = sign * rows.X[nz_i, nz_j]
            idx[last] = lay["b"][v]
            val[last] = -sign
            sw_var.append(w[:, v])
            sw_count.append(counts)
            sw_idx.append(idx)
            sw_val.append(val)
            sw_rhs.append(np.full(n, rhs))
            sw_m.append(s + 1.0 + extra)
    return (
        np.concatenate(sw_var),
        np.concatenate(([0], np.cumsum(np.concatenate(sw_count)))),
        np.concatenate(sw_idx),
        np.concatenate(sw_val),
        np.concatenate(sw_rhs),
        np.concatenate(sw_m),
    )


def _build(rows: _Rows, sk: _Skeleton, options: MilpOptions, deadline: float = np.inf) -> _Problem:
    """The MILP (1)-(18) and its extensions (parsimony, (19), (20)) over merged rows and a skeleton.

    Reads the clock between blocks of rows and raises :class:`~satdt.core.errors.TimeUp`
    once ``deadline`` (a ``time.perf_counter()`` value) has passed.
    """
    check_clock(deadline)
    n, d = rows.X.shape
    univariate = options.split == "univariate"
    cols = _columns(sk, n, d, univariate)
    lay = cols.lay
    total = float(rows.weight.sum())
    cost = _cost(rows, sk, lay, options.alpha, total)
    R = _RowBuilder()
    _add_flow_conservation(R, sk, lay, n)
    _add_layer_sides(R, sk, lay, n)
    check_clock(deadline)
    _add_arcs(R, sk, lay)
    _add_arc_flow(R, sk, lay, n)
    check_clock(deadline)
    _add_symmetry(R, sk, lay)
    if univariate:
        _add_univariate(R, sk, lay, d)
    if options.max_splits is not None:
        _add_parsimony(R, sk, lay, options.max_splits)
    if options.min_flow is not None and options.min_flow > 0:
        _add_min_flow(R, rows, sk, lay, options.min_flow)
    if options.fairness is not None:
        _add_fairness(R, rows, sk, lay, options.fairness)
    check_clock(deadline)
    indptr, indices, values, row_lb, row_ub = R.csr()
    check_clock(deadline)
    switches = _switch_rows(rows, sk, lay, univariate, options.epsilon, deadline)
    model = LinearModel(
        cols.lb, cols.ub, cols.integer, cost, indptr, indices, values, row_lb, row_ub, *switches
    )
    return _Problem(rows, sk, lay, univariate, options.alpha, options.epsilon, total, model)
