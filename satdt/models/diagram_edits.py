"""Changes of a diagram that keep what it predicts: :meth:`Diagram.simplify
<satdt.Diagram.simplify>` (fewer nodes) and :meth:`Diagram.unscale <satdt.Diagram.unscale>`
(original units for a diagram learnt on scaled features); which internal nodes a node reaches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .base import LEAF
from .diagram_checks import DiagramError

if TYPE_CHECKING:
    from .diagram import Diagram


def _reach(low: np.ndarray, high: np.ndarray, start: int) -> np.ndarray:
    """Mask of the internal nodes reachable from ``start`` (successors come later in the order)."""
    seen = np.zeros(len(low), dtype=bool)
    if start >= 0:
        seen[start] = True
        for i in range(start, len(low)):
            if seen[i]:
                for s in (low[i], high[i]):
                    if s >= 0:
                        seen[s] = True
    return seen


def simplify(diagram: Diagram, X: np.ndarray | None = None) -> Diagram:
    """An equivalent diagram with fewer nodes (see :meth:`Diagram.simplify
    <satdt.Diagram.simplify>`)."""
    n = len(diagram.layer)
    if not n:
        return diagram.copy()
    low, high, root = diagram.low.copy(), diagram.high.copy(), diagram.root
    if X is not None:
        sides = np.zeros((n, 2), dtype=np.int64)
        diagram._walk(diagram._rows(X), sides=sides)
        skip = np.arange(n)
        skip = np.where((sides[:, 0] == 0) & (sides[:, 1] > 0), high, skip)
        skip = np.where((sides[:, 1] == 0) & (sides[:, 0] > 0), low, skip)
        for i in range(n - 1, -1, -1):  # skipped successors are already resolved
            if skip[i] != i:
                s = skip[i]
                skip[i] = s if s < 0 else skip[s]
        low = np.where(low >= 0, skip[np.maximum(low, 0)], low)
        high = np.where(high >= 0, skip[np.maximum(high, 0)], high)
        root = int(skip[0])
    seen = _reach(low, high, root)
    canon = np.arange(n)
    merged: list[list[int]] = [[i] for i in range(n)]
    kept: dict[tuple[Any, ...], int] = {}
    for i in range(n - 1, -1, -1):
        if not seen[i]:
            continue
        lo = int(canon[low[i]]) if low[i] >= 0 else int(low[i])
        hi = int(canon[high[i]]) if high[i] >= 0 else int(high[i])
        low[i], high[i] = lo, hi
        if lo == hi:
            canon[i] = lo
            continue
        plane = diagram.coef[i].tobytes() if diagram.feature[i] == LEAF else b""
        key = (int(diagram.feature[i]), float(diagram.threshold[i]), plane, lo, hi)
        if key in kept:
            canon[i] = kept[key]
            merged[kept[key]].append(i)
        else:
            kept[key] = i
    root = int(canon[root]) if root >= 0 else root
    if root < 0:
        return type(diagram).single_terminal(
            -1 - root,
            n_features=diagram.n_features,
            classes=diagram.classes,
            feature_names=diagram.feature_names,
            terminal_counts=diagram.terminal_counts,
            indicator=sorted(diagram.indicator),
        )
    keep = _reach(low, high, root)
    nodes = np.flatnonzero(keep)
    new_index = np.zeros(n, dtype=np.int64)
    new_index[nodes] = np.arange(len(nodes))

    def renumber(succ: np.ndarray) -> np.ndarray:
        return np.where(succ >= 0, new_index[np.maximum(succ, 0)], succ)

    counts = None
    if diagram.counts is not None:
        counts = np.array([diagram.counts[merged[i]].sum(axis=0) for i in nodes])
        counts = counts.reshape(len(nodes), diagram.n_classes)
    return diagram.replace(
        layer=np.unique(diagram.layer[nodes], return_inverse=True)[1],
        feature=diagram.feature[nodes],
        threshold=diagram.threshold[nodes],
        low=renumber(low[nodes]),
        high=renumber(high[nodes]),
        coef=None if diagram.coef is None else diagram.coef[nodes],
        counts=counts,
        root=0,
    )


def unscale(diagram: Diagram, lo: np.ndarray, hi: np.ndarray) -> Diagram:
    """The diagram in original units (see :meth:`Diagram.unscale <satdt.Diagram.unscale>`)."""
    lo = np.asarray(lo, dtype=np.float64).reshape(-1)
    hi = np.asarray(hi, dtype=np.float64).reshape(-1)
    if lo.shape != (diagram.n_features,) or hi.shape != (diagram.n_features,):
        raise DiagramError(
            f"lo and hi must hold one value per feature ({diagram.n_features}); got "
            f"{lo.shape} and {hi.shape}"
        )
    scale = np.where(hi > lo, hi - lo, 1.0)
    threshold = diagram.threshold.copy()
    uni = np.flatnonzero(diagram.feature != LEAF)
    f = diagram.feature[uni]
    threshold[uni] = lo[f] + threshold[uni] * scale[f]
    coef = None
    if diagram.coef is not None:
        coef = diagram.coef / scale
        multi = np.flatnonzero(diagram.feature == LEAF)
        threshold[multi] += coef[multi] @ lo
    return diagram.replace(threshold=threshold, coef=coef)
