"""Brute force over every decision diagram of a tiny skeleton on tiny binary data.

A diagram of skeleton ``widths`` is enumerated node by node in layer order: a node that an
arc enters chooses a feature and a low and a high successor (a node of the next layer or a
class terminal); nodes no arc enters are unused. Two features that split the rows reaching
a node the same way are interchangeable there, and when all those rows take one side, the
other side's successor only adds a node or changes nothing, so it is taken equal to the
used one. Every diagram's (weighted error, used nodes) is recorded.
"""

from __future__ import annotations

import numpy as np


def diagram_outcomes(
    B: np.ndarray, y: np.ndarray, n_classes: int, widths, weight=None
) -> set[tuple[float, int]]:
    """Every ``(weighted error, used internal nodes)`` of a diagram of the skeleton."""
    n, m = B.shape
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=float)
    first = np.concatenate(([0], np.cumsum(widths))).astype(int)
    S = int(first[-1])
    layer_of = np.repeat(np.arange(len(widths)), widths)
    high_rows = [sum(1 << i for i in range(n) if B[i, a]) for a in range(m)]
    cost = [  # cost[rows][k]: weight of the rows in the bitmask that are not of class k
        [sum(w[i] for i in range(n) if rows >> i & 1 and y[i] != k) for k in range(n_classes)]
        for rows in range(1 << n)
    ]

    def successors(u: int) -> list[int]:
        l = layer_of[u]
        nxt = list(range(first[l + 1], first[l + 2])) if l + 1 < len(widths) else []
        return nxt + [-1 - k for k in range(n_classes)]

    rows_at = [0] * S
    used = [False] * S
    used[0] = True
    rows_at[0] = (1 << n) - 1
    out: set[tuple[float, int]] = set()

    def visit(u: int, error: float) -> None:
        if u == S:
            out.add((round(error, 9), sum(used)))
            return
        if not used[u]:
            visit(u + 1, error)
            return
        here = rows_at[u]
        splits = {(here & ~h, here & h) for h in high_rows}
        for low, high in splits:
            pairs = (
                [(s, t) for s in successors(u) for t in successors(u)]
                if low and high
                else [(s, s) for s in successors(u)]
            )
            for lo, hi in pairs:
                saved = [(v, rows_at[v], used[v]) for v in {lo, hi} if v >= 0]
                extra = 0.0
                for v, part in ((lo, low), (hi, high)):
                    if v >= 0:
                        rows_at[v] |= part
                        used[v] = True
                    else:
                        extra += cost[part][-1 - v]
                visit(u + 1, error + extra)
                for v, r, s in saved:
                    rows_at[v], used[v] = r, s

    visit(0, 0.0)
    return out


def min_consistent_nodes(B: np.ndarray, y: np.ndarray, n_classes: int, widths) -> float:
    """The fewest internal nodes of a consistent diagram of the skeleton (inf if none)."""
    sizes = [nodes for error, nodes in diagram_outcomes(B, y, n_classes, widths) if error == 0]
    return min(sizes, default=float("inf"))


def min_objective(
    B: np.ndarray, y: np.ndarray, n_classes: int, widths, alpha: float, weight=None
) -> float:
    """The least objective (18): error / total weight + alpha * (nodes - 1) / (sum(widths) - 1)."""
    total = float(np.sum(weight)) if weight is not None else float(len(y))
    S = sum(widths)
    return min(
        error / total + (alpha * (nodes - 1) / (S - 1) if S > 1 else 0.0)
        for error, nodes in diagram_outcomes(B, y, n_classes, widths, weight)
    )
