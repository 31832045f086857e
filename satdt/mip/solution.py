"""Diagrams and MILP solutions, both ways: a solution decoded into a diagram (its thresholds
snapped between the sides' training values), and a diagram encoded as a full solution (a MIP
start), for the model of :mod:`satdt.mip.formulation`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..models.diagram import Diagram
from .formulation import _Problem, _Skeleton

# --------------------------------------------------------------------------------------------
# diagrams <-> solutions


@dataclass
class _Arrays:
    """A decoded diagram as plain arrays (the fields of :class:`satdt.Diagram`)."""

    layer: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    low: np.ndarray
    high: np.ndarray
    coef: np.ndarray | None


def _paths(arrays: Diagram | _Arrays, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Route rows: (reaches node, goes low at node) of shape (n, n_nodes) and the terminal class per row.

    ``arrays`` has the fields of :class:`_Arrays` (a Diagram will do); successors of node u are > u.
    """
    n, n_nodes = len(X), len(arrays.feature)
    current = np.zeros(n, dtype=np.int64)
    reach = np.zeros((n, n_nodes), dtype=bool)
    went_low = np.zeros((n, n_nodes), dtype=bool)
    for u in range(n_nodes):
        here = np.flatnonzero(current == u)
        if len(here) == 0:
            continue
        j = arrays.feature[u]
        value = X[here, j] if j >= 0 else X[here] @ np.asarray(arrays.coef)[u]
        test = value <= arrays.threshold[u]
        reach[here, u] = True
        went_low[here, u] = test
        current[here] = np.where(test, arrays.low[u], arrays.high[u])
    return reach, went_low, -1 - current


def _univariate_cut(
    values_low: np.ndarray, values_high: np.ndarray, column: np.ndarray
) -> float | None:
    """The midpoint threshold separating two sides of a node, or None if they overlap.

    With one side empty the rows go low and the threshold is the midpoint between their largest
    value and the next larger value of the feature in the training data (or that value itself).
    """
    if len(values_low) and len(values_high):
        lo, hi = values_low.max(), values_high.min()
        return None if lo >= hi else (lo + hi) / 2
    lo = values_low.max()
    above = column[column > lo]
    return (lo + above.min()) / 2 if len(above) else float(lo)


def _decode(prob: _Problem, x: np.ndarray) -> tuple[_Arrays, float]:
    """The diagram of a MILP solution in scaled units and its objective (18), recomputed on the data.

    Univariate nodes are oriented so that ``low`` is the ``x[feature] <= t`` side, ``t`` snapped to
    the midpoint between the sides' training values; multivariate thresholds are snapped likewise
    between the sides' values of ``a x`` (``b - epsilon / 2`` when a side is empty). Raises
    RuntimeError if the diagram does not route every row as the MILP's flows do (an internal error).
    """
    sk, lay, X = prob.sk, prob.lay, prob.rows.X
    N = sk.n_nodes
    active = np.flatnonzero(x[lay["d"]] > 0.5)
    new = np.full(N, -1)
    new[active] = np.arange(len(active))

    def successor(u: int, y: np.ndarray) -> int:
        v = sk.head[(sk.tail == u) & (x[y] > 0.5)][0]
        return int(new[v]) if v < N else -1 - int(v - N)

    on_neg = x[lay["wneg"]] > 0.5
    on_pos = x[lay["wpos"]] > 0.5
    m = len(active)
    out = _Arrays(
        sk.layer[active].copy(),
        np.full(m, -1),
        np.zeros(m),
        np.zeros(m, dtype=np.int64),
        np.zeros(m, dtype=np.int64),
        None if prob.univariate else x[lay["a"]][active],
    )
    for k, u in enumerate(active):
        neg, pos = successor(u, lay["yneg"]), successor(u, lay["ypos"])
        if not prob.univariate:  # b - eps/2, or the midpoint of the sides' values of a x
            values = X @ out.coef[k]
            vneg, vpos = values[on_neg[:, u]], values[on_pos[:, u]]
            both = len(vneg) > 0 and len(vpos) > 0 and vneg.max() < vpos.min()
            t = (vneg.max() + vpos.min()) / 2 if both else x[lay["b"][u]] - prob.epsilon / 2
            out.threshold[k], out.low[k], out.high[k] = t, neg, pos
            continue
        j = int(np.argmax(x[lay["e"][u]]))
        column = X[:, j]
        vneg, vpos = column[on_neg[:, u]], column[on_pos[:, u]]
        out.feature[k] = j
        if len(vneg) == 0 and len(vpos) == 0:
            out.threshold[k], out.low[k], out.high[k] = 0.5, neg, pos
            continue
        for low_values, high_values, low, high in ((vneg, vpos, neg, pos), (vpos, vneg, pos, neg)):
            if len(low_values) == 0:
                continue
            t = _univariate_cut(low_values, high_values, column)
            if t is not None:
                out.threshold[k], out.low[k], out.high[k] = t, low, high
                break
        else:
            raise RuntimeError(
                f"internal error: the MILP sends overlapping values of feature {j} to both sides of node {u}"
            )
    _, _, terminal = _paths(out, X)
    arcs = np.flatnonzero(sk.head >= N)
    flow = x[lay["zneg"]][:, arcs] + x[lay["zpos"]][:, arcs]
    milp_terminal = sk.head[arcs][np.argmax(flow, axis=1)] - N
    wrong = np.flatnonzero(terminal != milp_terminal)
    if len(wrong):
        raise RuntimeError(
            f"internal error: the decoded diagram sends row {wrong[0]} to class {terminal[wrong[0]]}, "
            f"the MILP to class {milp_terminal[wrong[0]]}"
        )
    return out, _objective(prob, terminal, len(active))


def _objective(prob: _Problem, terminal: np.ndarray, n_active: int) -> float:
    """Objective (18): weighted error rate plus alpha times the share of non-root skeleton nodes used."""
    rows = prob.rows
    error = (
        float((rows.weight - rows.class_weight[np.arange(len(terminal)), terminal]).sum())
        / prob.total
    )
    N = prob.sk.n_nodes
    return error + (prob.alpha * (n_active - 1) / (N - 1) if N > 1 else 0.0)


class _Unrepresentable(Exception):
    """A start diagram that is not a feasible solution of this MILP (the reason is the message)."""


def _encode_start(prob: _Problem, start: Diagram) -> np.ndarray:
    """A full MILP solution equal to the diagram ``start`` (its flows computed on the rows).

    Nodes unreachable from the root are dropped; layers of width >= 3 are ordered by in-degree
    (12); each node's hyperplane is oriented so its negative successor has the smaller index (11);
    a node with ``low == high`` becomes a constant split whose unused side points to a terminal.
    """
    sk, lay, X = prob.sk, prob.lay, prob.rows.X
    N = sk.n_nodes
    view = _start_view(prob, start)
    feature, low, high, layer = view.feature, view.low, view.high, view.layer
    reach, went_low, _ = _paths(view, X)
    reachable = _reachable(low, high, layer)
    slot = _slots(sk, low, high, layer, reachable)

    def target(v: int) -> int:
        return int(slot[v]) if v >= 0 else N + (-1 - int(v))

    x = np.zeros(lay.n_cols)
    if prob.univariate:
        x[lay["e"][:, 0]] = 1.0  # (15) holds for inactive nodes too
    for u in np.flatnonzero(reachable):
        s = slot[u]
        neg_rows, pos_rows, neg_t, pos_t, direction, b = _start_split(
            prob, view, u, target(low[u]), target(high[u]), reach[:, u], went_low[:, u]
        )
        x[lay["d"][s]] = 1.0
        x[lay["yneg"][sk.arc(s, neg_t)]] = 1.0
        x[lay["ypos"][sk.arc(s, pos_t)]] = 1.0
        x[lay["a"][s]] = direction
        x[lay["b"][s]] = b
        if prob.univariate:
            x[lay["e"][s]] = np.eye(X.shape[1])[int(feature[u]) if feature[u] >= 0 else 0]
        x[lay["wneg"][neg_rows, s]] = 1.0
        x[lay["wpos"][pos_rows, s]] = 1.0
        x[lay["zneg"][neg_rows, sk.arc(s, neg_t)]] = 1.0
        x[lay["zpos"][pos_rows, sk.arc(s, pos_t)]] = 1.0
        x[lay["lam"][pos_rows, layer[u]]] = 1.0
    worst = prob.model.violation(x)
    if worst > 1e-6:
        raise _Unrepresentable(f"it violates a constraint of the MILP by {worst:.3g}")
    return x


def _start_view(prob: _Problem, start: Diagram) -> Diagram | _Arrays:
    """The start's arrays (a single terminal as a root sending every row to it), checked
    against the data's features and classes and the split kind."""
    if start.n_features != prob.rows.X.shape[1] or len(start.classes) != prob.sk.n_classes:
        raise _Unrepresentable("its number of features or classes differs from the data's")
    view: Diagram | _Arrays = start
    if len(start.layer) == 0:  # a single terminal: a root sending every row to it
        root = np.array([start.root])
        view = _Arrays(
            np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.ones(1), root, root, None
        )
    if prob.univariate and np.any(view.feature < 0):
        raise _Unrepresentable("it has multivariate nodes but split='univariate'")
    return view


def _reachable(low: np.ndarray, high: np.ndarray, layer: np.ndarray) -> np.ndarray:
    """The nodes reachable from the root; every arc between them must go to the next layer."""
    reachable = np.zeros(len(low), dtype=bool)
    reachable[0] = True
    for u in range(len(low)):
        if reachable[u]:
            for v in (low[u], high[u]):
                if v >= 0:
                    if layer[v] != layer[u] + 1:
                        raise _Unrepresentable(f"node {u} links to node {v}, not in the next layer")
                    reachable[v] = True
    return reachable


def _slots(
    sk: _Skeleton, low: np.ndarray, high: np.ndarray, layer: np.ndarray, reachable: np.ndarray
) -> np.ndarray:
    """The skeleton node of each reachable node: by layer, layers from 2 on by decreasing
    in-degree (12); raises :class:`_Unrepresentable` when a layer is wider than the skeleton's."""
    indegree = np.zeros(len(low), dtype=np.int64)
    for u in np.flatnonzero(reachable):
        for v in {int(low[u]), int(high[u])}:
            if v >= 0:
                indegree[v] += 1
    slot = np.full(len(low), -1)
    for l in range(int(layer[reachable].max()) + 1):
        nodes = np.flatnonzero(reachable & (layer == l))
        if l >= sk.n_layers or len(nodes) > sk.widths[l]:
            raise _Unrepresentable(
                f"its layer {l} has {len(nodes)} nodes, more than the skeleton's {sk.widths[l] if l < sk.n_layers else 0}"
            )
        if l >= 2:
            nodes = nodes[np.argsort(-indegree[nodes], kind="stable")]
        slot[nodes] = sk.first[l] + np.arange(len(nodes))
    return slot


def _start_split(
    prob: _Problem,
    view: Diagram | _Arrays,
    u: int,
    tl: int,
    th: int,
    reach: np.ndarray,
    went_low: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int, int, np.ndarray, float]:
    """Node ``u`` of the start as a hyperplane of the MILP: (negative rows, positive rows,
    negative successor, positive successor, ``a``, ``b``), its successors ``tl``/``th`` being
    skeleton indices and ``reach``/``went_low`` the rows' paths at ``u``."""
    X, eps = prob.rows.X, prob.epsilon
    N, K = prob.sk.n_nodes, prob.sk.n_classes
    direction = np.zeros(X.shape[1])
    if tl == th:  # a constant split (a = 0) sends every row to the one successor
        everyone = np.flatnonzero(reach)
        if tl < N + K - 1:  # all negative (b = 1); the unused positive arc to the last terminal
            neg_rows, pos_rows, neg_t, pos_t, b = everyone, everyone[:0], tl, N + K - 1, 1.0
        else:  # all positive (b = 0); the unused negative arc to the first terminal
            neg_rows, pos_rows, neg_t, pos_t, b = everyone[:0], everyone, N, tl, 0.0
    else:
        feature, coef = view.feature, view.coef
        if feature[u] >= 0:
            direction[int(feature[u])] = 1.0
        else:
            direction = coef[u] / max(np.abs(coef[u]).max(), 1e-12)
        rows_low = np.flatnonzero(reach & went_low)
        rows_high = np.flatnonzero(reach & ~went_low)
        if tl < th:
            neg_rows, pos_rows, neg_t, pos_t = rows_low, rows_high, tl, th
        else:
            neg_rows, pos_rows, neg_t, pos_t, direction = (
                rows_high,
                rows_low,
                th,
                tl,
                -direction,
            )
        b = (
            (X[pos_rows] @ direction).min()
            if len(pos_rows)
            else ((X[neg_rows] @ direction).max() + eps if len(neg_rows) else 0.0)
        )
        if abs(b) > 1:
            direction, b = direction / abs(b), float(np.sign(b))
    if len(neg_rows) and (X[neg_rows] @ direction).max() + eps > b + 1e-9:
        raise _Unrepresentable(f"node {u} separates values closer than epsilon={eps}")
    return neg_rows, pos_rows, neg_t, pos_t, direction, b


def _to_diagram(
    arrays: _Arrays, X: np.ndarray, y: np.ndarray, weight: np.ndarray, n_classes: int
) -> Diagram:
    """A :class:`satdt.Diagram` from decoded arrays, with the class weights of ``(X, y)``.

    Classes are ``0..n_classes-1``; thresholds are in the scaled units of ``X``.
    """
    return Diagram(
        arrays.layer,
        arrays.feature,
        arrays.threshold,
        arrays.low,
        arrays.high,
        coef=arrays.coef,
        n_features=X.shape[1],
        classes=np.arange(n_classes),
    ).with_counts(X, y, weight)
