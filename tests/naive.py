"""Brute-force references over tiny binary data, by recursion over row subsets (not tree enumeration): min depth, min leaves, min error (also within a node cap).

A row goes right at a feature when its value is 1. ``best(rows, d)`` ranges over every
feature at every node, so these are the true optima that every search must match.
Diagrams have one reference, an enumeration of every diagram of a tiny skeleton
(:func:`min_diagram_objective`, :func:`min_consistent_nodes`); the data preparation is
checked against pairwise comparisons (:func:`distinct_feature_columns`,
:func:`contradiction_groups`). The canonical consistent trees are the one reference by tree
enumeration (:func:`consistent_canonical_trees`: every consistent tree, reduced).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np


def min_consistent_depth(B: np.ndarray, y: np.ndarray) -> float:
    """The minimum depth of a tree classifying every row correctly (inf if rows contradict)."""
    B = np.asarray(B)
    y = np.asarray(y)

    @cache
    def depth(rows: frozenset[int]) -> float:
        if len({int(y[i]) for i in rows}) <= 1:
            return 0
        best = math.inf
        for f in range(B.shape[1]):
            right = frozenset(i for i in rows if B[i, f] == 1)
            if 0 < len(right) < len(rows):
                best = min(best, 1 + max(depth(right), depth(rows - right)))
        return best

    return depth(frozenset(range(len(y))))


def min_consistent_leaves(B: np.ndarray, y: np.ndarray, max_depth: int) -> float:
    """The fewest leaves of a consistent tree of depth at most ``max_depth`` (inf if none)."""
    B = np.asarray(B)
    y = np.asarray(y)

    @cache
    def leaves(rows: frozenset[int], d: int) -> float:
        if len({int(y[i]) for i in rows}) <= 1:
            return 1
        if d == 0:
            return math.inf
        best = math.inf
        for f in range(B.shape[1]):
            right = frozenset(i for i in rows if B[i, f] == 1)
            if 0 < len(right) < len(rows):
                best = min(best, leaves(right, d - 1) + leaves(rows - right, d - 1))
        return best

    return leaves(frozenset(range(len(y))), max_depth)


def _leaf_error(y: np.ndarray, w: np.ndarray, n_classes: int) -> float:
    if len(y) == 0:
        return 0.0
    per_class = np.bincount(y, weights=w, minlength=n_classes)
    return float(per_class.sum() - per_class.max())


def min_error(
    B: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    n_classes: int,
    depth: int,
    min_support: int = 1,
    leaf_penalty: float = 0.0,
) -> float:
    """Smallest weighted error (plus ``leaf_penalty`` per leaf) of a tree of depth <= ``depth``
    over the binary features of B.

    best(rows, d) = min(leaf error + leaf_penalty, min over features f of best(rows with
    f = 0, d - 1) + best(rows with f = 1, d - 1)), by plain recursion over row subsets. With
    ``min_support`` above 1, a split is allowed only when each side holds at least that many
    rows of positive weight (DL8.5's minimum support; a single leaf is always allowed).
    ``leaf_penalty`` is in the units of the weights (lambda times the total weight for the
    normalised objective error / total + lambda * leaves).
    """
    B = np.asarray(B, dtype=np.uint8)
    y = np.asarray(y, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)

    def best(rows: np.ndarray, d: int) -> float:
        value = _leaf_error(y[rows], w[rows], n_classes) + leaf_penalty
        if d == 0 or value == leaf_penalty:
            return value
        for f in range(B.shape[1]):
            ones = B[rows, f] == 1
            if ones.all() or not ones.any():
                continue
            if min_support > 1:
                positive = w[rows] > 0
                if (positive & ones).sum() < min_support or (positive & ~ones).sum() < min_support:
                    continue
            value = min(value, best(rows[~ones], d - 1) + best(rows[ones], d - 1))
        return value

    return best(np.arange(len(y)), depth)


def min_sparse_cost(
    B: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    n_classes: int,
    leaf_penalty: float,
    min_support: int = 1,
) -> float:
    """Smallest weighted error plus ``leaf_penalty`` per leaf of a tree of *any* depth over the
    binary features of B (GOSDT's objective in units of the weights): :func:`min_error` at
    depth ``len(y)``, which no tree reaches, since every split leaves fewer rows on each side."""
    return min_error(B, y, w, n_classes, len(y), min_support, leaf_penalty)


def min_cost(
    B: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    C: np.ndarray,
    depth: int,
    min_support: int = 1,
    leaf_penalty: float = 0.0,
) -> float:
    """Smallest weighted misclassification cost (plus ``leaf_penalty`` per leaf) of a tree of
    depth <= ``depth`` over the binary features of B, ``C[a, b]`` the cost of predicting b
    for a row of class a.

    As :func:`min_error`, with a leaf costing min over classes b of sum_i w_i C[y_i, b]
    (the class of least cost), computed from the costs directly (no reduction to weights).
    """
    B = np.asarray(B, dtype=np.uint8)
    y = np.asarray(y, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)

    def leaf(rows: np.ndarray) -> float:
        return min(float(np.dot(w[rows], C[y[rows], b])) for b in range(C.shape[0]))

    def best(rows: np.ndarray, d: int) -> float:
        value = leaf(rows) + leaf_penalty
        if d == 0:
            return value
        for f in range(B.shape[1]):
            ones = B[rows, f] == 1
            if ones.all() or not ones.any():
                continue
            if min_support > 1 and min(ones.sum(), (~ones).sum()) < min_support:
                continue
            value = min(value, best(rows[~ones], d - 1) + best(rows[ones], d - 1))
        return value

    return best(np.arange(len(y)), depth)


def min_error_nodes(
    B: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    n_classes: int,
    depth: int,
    max_nodes: int,
    min_support: int = 1,
    leaf_penalty: float = 0.0,
) -> float:
    """Smallest weighted error (plus ``leaf_penalty`` per leaf) of a tree of depth <= ``depth``
    with at most ``max_nodes`` nodes (branching nodes + leaves) over the binary features of B
    (inf when ``max_nodes`` < 1).

    A tree with k branching nodes has 2k + 1 nodes, so at most k = (max_nodes - 1) // 2 of
    them: best(rows, d, k) = min(leaf, min over features f and k_0 + k_1 = k - 1 of best(rows
    with f = 0, d - 1, k_0) + best(rows with f = 1, d - 1, k_1)), by plain recursion over row
    subsets (each ``(rows, d, k)`` computed once: a memo, so that depths four and five stay
    quick); ``min_support`` and ``leaf_penalty`` as in :func:`min_error`.
    """
    if max_nodes < 1:
        return math.inf
    B = np.asarray(B, dtype=np.uint8)
    y = np.asarray(y, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    memo: dict[tuple[bytes, int, int], float] = {}

    def best(rows: np.ndarray, d: int, k: int) -> float:
        key = (rows.tobytes(), d, k)
        if key not in memo:
            memo[key] = search(rows, d, k)
        return memo[key]

    def search(rows: np.ndarray, d: int, k: int) -> float:
        value = _leaf_error(y[rows], w[rows], n_classes) + leaf_penalty
        if d == 0 or k == 0 or value == leaf_penalty:
            return value
        positive = w[rows] > 0
        for f in range(B.shape[1]):
            ones = B[rows, f] == 1
            if ones.all() or not ones.any():
                continue
            if (positive & ones).sum() < min_support or (positive & ~ones).sum() < min_support:
                continue
            for k_zero in range(k):
                value = min(
                    value,
                    best(rows[~ones], d - 1, k_zero) + best(rows[ones], d - 1, k - 1 - k_zero),
                )
        return value

    return best(np.arange(len(y)), depth, (max_nodes - 1) // 2)


def threshold_features(X: np.ndarray) -> np.ndarray:
    """Every split of tiny numeric data as binary features (1 = the row goes right).

    For each column and each midpoint t between consecutive distinct present values:
    ``x > t`` on a column without missing values; on a column with missing values (NaN) both
    ``x > t or missing`` and ``x > t and present``, plus ``x is missing``. A tree over these
    features is any tree of threshold splits that also chooses, per split, the side its
    missing rows take.
    """
    X = np.asarray(X, dtype=np.float64)
    columns = []
    for c in range(X.shape[1]):
        x = X[:, c]
        missing = np.isnan(x)
        values = np.unique(x[~missing])
        for t in (values[:-1] + values[1:]) / 2:
            above = np.where(missing, False, x > t)
            if missing.any():
                columns += [above | missing, above]
            else:
                columns.append(above)
        if missing.any():
            columns.append(missing)
    if not columns:
        return np.zeros((len(X), 0), dtype=np.uint8)
    return np.column_stack(columns).astype(np.uint8)


def expand_class_weights(B: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows carrying several class weights ``W (n, C)`` as one row per (row, class) of weight > 0.

    Returns ``(B, y, w)`` for :func:`min_error`, whose rows each have a single class.
    """
    B = np.asarray(B, dtype=np.uint8)
    W = np.asarray(W, dtype=np.float64)
    rows, classes = np.nonzero(W > 0)
    return B[rows], classes.astype(np.int64), W[rows, classes]


def depth2_tree_error(B: np.ndarray, W: np.ndarray, f: int, g_left: int, g_right: int) -> float:
    """Error of the tree of depth <= 2 with root f (-1: a leaf) and children g_left / g_right.

    Rows with ``B[:, f] == 0`` go to ``g_left`` (-1: a leaf), the others to ``g_right``; each
    leaf predicts its heaviest class under the class weights ``W (n, C)``.
    """
    B = np.asarray(B, dtype=np.uint8)
    W = np.asarray(W, dtype=np.float64)

    def leaf(mask: np.ndarray) -> float:
        per_class = W[mask].sum(axis=0)
        return float(per_class.sum() - per_class.max(initial=0.0))

    def node(mask: np.ndarray, g: int) -> float:
        if g < 0:
            return leaf(mask)
        return leaf(mask & (B[:, g] == 0)) + leaf(mask & (B[:, g] == 1))

    everything = np.ones(B.shape[0], dtype=bool)
    if f < 0:
        return leaf(everything)
    return node(B[:, f] == 0, g_left) + node(B[:, f] == 1, g_right)


def diagram_objective(
    diagram, X: np.ndarray, y: np.ndarray, alpha: float, widths, sample_weight=None
) -> float:
    """Objective (18) of Florio et al. for a decision diagram, by routing each row one at a time.

    Weighted error rate plus ``alpha * (internal nodes reachable from the root, root excluded)
    / (sum(widths) - 1)``.
    """
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    error = 0.0
    for i in range(len(y)):
        node = 0
        while node >= 0:
            if diagram.feature[node] >= 0:
                value = X[i, diagram.feature[node]]
            else:
                value = float(np.dot(diagram.coef[node], X[i]))
            node = diagram.low[node] if value <= diagram.threshold[node] else diagram.high[node]
        error += w[i] * (-1 - node != y[i])
    seen, stack = {0}, [0]
    while stack:
        u = stack.pop()
        for v in (diagram.low[u], diagram.high[u]):
            if v >= 0 and v not in seen:
                seen.add(int(v))
                stack.append(int(v))
    n_nodes = sum(widths)
    return error / w.sum() + (alpha * (len(seen) - 1) / (n_nodes - 1) if n_nodes > 1 else 0.0)


def _best_diagram(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    widths,
    score,
    sample_weight=None,
    *,
    max_splits=None,
    min_flow=None,
    fairness=None,
    cost_matrix=None,
) -> float:
    """The least ``score(weighted error, internal nodes)`` over all univariate diagrams of the
    skeleton ``widths`` that meet the extensions, by enumeration (inf if none does).

    Nodes are visited in layer order; a node reached by an arc chooses a partition of the rows
    reaching it (every threshold ``x[j] <= v`` at a value of the data, so all-low is included) and
    any successors in the next layer or among the terminals (both sides may share one successor).
    When one side of the partition is empty, both arcs go to one successor: an empty arc into
    another node only adds a node with no rows, so it never gives a better feasible diagram.
    Extensions, checked on each complete diagram: at most ``max_splits`` internal nodes, every
    node reached by a weight of at least ``min_flow``, and ``fairness = (kind, group1, group2,
    positive, ratio)``: the groups' rates (of positive predictions; of false positives; of
    false negatives) within the ratio both ways. With ``cost_matrix`` the error of a row of
    class a sent to the terminal of class k is ``w C[a, k]`` instead of ``w [a != k]``.
    """
    n, n_feat = X.shape
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    first = np.concatenate(([0], np.cumsum(widths)))
    n_nodes = int(first[-1])
    layer_of = np.repeat(np.arange(len(widths)), widths)

    def successors(u: int) -> list[int]:
        l = layer_of[u]
        nxt = list(range(first[l + 1], first[l + 2])) if l + 1 < len(widths) else []
        return nxt + [-1 - k for k in range(n_classes)]

    def cost(rows: int, k: int) -> float:
        if cost_matrix is not None:
            return sum(w[i] * cost_matrix[y[i], k] for i in range(n) if rows >> i & 1)
        return sum(w[i] for i in range(n) if rows >> i & 1 and y[i] != k)

    masks = [
        [sum(1 << i for i in range(n) if X[i, j] <= v) for v in np.unique(X[:, j])]
        for j in range(n_feat)
    ]
    rows_at = [0] * n_nodes
    reached = [False] * n_nodes
    reached[0] = True
    rows_at[0] = (1 << n) - 1

    positive_rows = [0]  # rows sent to the terminal of the positive class

    def weight_of(rows: int) -> float:
        return sum(w[i] for i in range(n) if rows >> i & 1)

    def meets() -> bool:
        if max_splits is not None and sum(reached) > max_splits:
            return False
        if min_flow is not None and any(
            weight_of(rows_at[v]) < min_flow - 1e-9 for v in range(n_nodes) if reached[v]
        ):
            return False
        if fairness is None:
            return True
        kind, g1, g2, positive, ratio = fairness
        hit = np.array([bool(positive_rows[0] >> i & 1) for i in range(n)])
        if kind == "parity":
            counted, base = hit, np.ones(n, bool)
        elif kind == "false_positive":
            counted, base = hit & (y != positive), y != positive
        else:
            counted, base = ~hit & (y == positive), y == positive
        rates = []
        for g in (g1, g2):
            total = w[g & base].sum()
            rates.append(w[g & counted].sum() / total if total > 0 else 0.0)
        return rates[0] >= ratio * rates[1] - 1e-9 and rates[1] >= ratio * rates[0] - 1e-9

    def best(u: int, error: float) -> float:
        if u == n_nodes:
            return score(error, sum(reached)) if meets() else np.inf
        if not reached[u]:
            return best(u + 1, error)
        here = rows_at[u]
        value = np.inf
        for low_rows in {here & m for ms in masks for m in ms}:
            high_rows = here & ~low_rows
            pairs = (
                [(lo, hi) for lo in successors(u) for hi in successors(u)]
                if low_rows and high_rows
                else [(s, s) for s in successors(u)]
            )
            for lo, hi in pairs:
                saved = [(v, rows_at[v], reached[v]) for v in {lo, hi} if v >= 0]
                saved_positive = positive_rows[0]
                extra = 0.0
                for v, part in ((lo, low_rows), (hi, high_rows)):
                    if v >= 0:
                        rows_at[v] |= part
                        reached[v] = True
                    else:
                        extra += cost(part, -1 - v)
                        if fairness is not None and -1 - v == fairness[3]:
                            positive_rows[0] |= part
                value = min(value, best(u + 1, error + extra))
                positive_rows[0] = saved_positive
                for v, r, s in saved:
                    rows_at[v], reached[v] = r, s
        return value

    return best(0, 0.0)


def min_diagram_objective(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    widths,
    alpha: float,
    sample_weight=None,
    *,
    max_splits=None,
    min_flow=None,
    fairness=None,
    cost_matrix=None,
) -> float:
    """Minimum of objective (18) over all univariate diagrams of the skeleton ``widths``, by
    enumeration: weighted error rate plus ``alpha * (nodes - 1) / (sum(widths) - 1)``, over the
    diagrams meeting the extensions (see :func:`_best_diagram`; inf if none does). Binary data
    ``B`` is its own ``X``. With ``cost_matrix``, the weighted cost rate instead of the
    error rate."""
    total = float(np.sum(sample_weight)) if sample_weight is not None else float(len(y))
    n_nodes = sum(widths)

    def objective(error: float, nodes: int) -> float:
        return error / total + (alpha * (nodes - 1) / (n_nodes - 1) if n_nodes > 1 else 0.0)

    return _best_diagram(
        X,
        y,
        n_classes,
        widths,
        objective,
        sample_weight,
        max_splits=max_splits,
        min_flow=min_flow,
        fairness=fairness,
        cost_matrix=cost_matrix,
    )


def min_consistent_nodes(X: np.ndarray, y: np.ndarray, n_classes: int, widths) -> float:
    """The fewest internal nodes of a consistent diagram of the skeleton (inf if none), by
    enumeration (:func:`_best_diagram`)."""
    return _best_diagram(
        X, y, n_classes, widths, lambda error, nodes: nodes if error == 0 else np.inf
    )


def diagram_terminal(diagram, x: np.ndarray) -> int:
    """The class terminal one row reaches, following the diagram one node at a time."""
    node = diagram.root
    while node >= 0:
        f = diagram.feature[node]
        value = x[f] if f >= 0 else diagram.coef[node] @ x
        node = diagram.low[node] if value <= diagram.threshold[node] else diagram.high[node]
    return -1 - int(node)


def distinct_feature_columns(B: np.ndarray) -> list[int]:
    """The columns of B kept when constant columns and columns equal or complementary to an
    earlier one are dropped, by comparing every pair of columns."""
    keep: list[int] = []
    for j in range(B.shape[1]):
        column = B[:, j]
        if column.min() == column.max():
            continue
        if any(
            np.array_equal(column, B[:, i]) or np.array_equal(column, 1 - B[:, i]) for i in range(j)
        ):
            continue
        keep.append(j)
    return keep


def contradiction_groups(X: np.ndarray, y: np.ndarray) -> list[list[int]]:
    """The groups of identical rows carrying more than one label, by comparing every pair of
    rows (each group in row order, the groups by their first row)."""
    groups: list[list[int]] = []
    seen: set[int] = set()
    for i in range(len(X)):
        if i in seen:
            continue
        group = [j for j in range(len(X)) if np.array_equal(X[i], X[j])]
        seen.update(group)
        if len({y[j] for j in group}) > 1:
            groups.append(group)
    return groups


def consistent_trees(B: np.ndarray, y: np.ndarray, rows: np.ndarray, depth: int):
    """Every tree of depth at most ``depth`` that classifies the ``rows`` right: any feature at
    each split (one that sends every row one way included), at each leaf the class of its rows
    (nested tuples ``(feature, low, high)`` / class). Where no row goes, one leaf stands for
    every subtree: :func:`canonical_form` never looks at a part no row reaches."""
    if not rows.any():
        yield 0
        return
    labels = set(y[rows].tolist())
    if len(labels) == 1:
        yield labels.pop()
    if depth == 0:
        return
    for f in range(B.shape[1]):
        highs = list(consistent_trees(B, y, rows & (B[:, f] == 1), depth - 1))
        for low in consistent_trees(B, y, rows & (B[:, f] == 0), depth - 1):
            for high in highs:
                yield (f, low, high)


def canonical_form(tree, B: np.ndarray, rows: np.ndarray):
    """A tree reduced on the rows reaching it: a split that sends them all one way becomes the
    side they take, a split whose two (reduced) subtrees are equal becomes that subtree."""
    if not isinstance(tree, tuple):
        return tree
    f, low, high = tree
    right = rows & (B[:, f] == 1)
    left = rows & (B[:, f] == 0)
    if not right.any():
        return canonical_form(low, B, left)
    if not left.any():
        return canonical_form(high, B, right)
    low, high = canonical_form(low, B, left), canonical_form(high, B, right)
    return low if low == high else (f, low, high)


def consistent_canonical_trees(B: np.ndarray, y: np.ndarray, depth: int) -> set:
    """The canonical forms of every tree of depth <= ``depth`` that classifies every row
    right: each such tree (:func:`consistent_trees`), reduced (:func:`canonical_form`)."""
    B = np.asarray(B)
    y = np.asarray(y)
    everyone = np.ones(len(y), dtype=bool)
    return {canonical_form(t, B, everyone) for t in consistent_trees(B, y, everyone, depth)}


def model_reliance(predict, X: np.ndarray, y: np.ndarray, columns: list[int]) -> float:
    """A model's reliance on some design columns taken together, by every pair of rows: the
    error rate when row i takes row j's values on the columns (all n^2 pairs ``(i, j)``, ``i =
    j`` included), minus the error rate on the rows (Fisher, Rudin & Dominici 2019, in the
    difference form)."""
    n = len(y)
    paired = np.repeat(X, n, axis=0)
    paired[:, columns] = np.tile(X[:, columns], (n, 1))
    switched = float(np.mean(predict(paired) != np.repeat(y, n)))
    return switched - float(np.mean(predict(X) != y))


def grid_points(thresholds: list) -> np.ndarray:
    """One point in every cell of the grid of per-feature sorted thresholds: each level's
    upper threshold, and one above the last threshold (0.0 on a feature without any)."""
    import itertools

    levels = []
    for t in thresholds:
        t = [float(v) for v in t]
        levels.append([*t, t[-1] + 1.0] if t else [0.0])
    return np.array(list(itertools.product(*levels)), dtype=float).reshape(-1, len(thresholds))


def born_again_optima(thresholds: list, decide) -> tuple[float, float, float]:
    """Brute force over every tree on a forest's cell grid (born-again trees): the minimum
    depth, the fewest leaves, and the fewest leaves among the trees of minimum depth, of a
    tree that decides ``decide(points)`` on one point of every cell. The cells are rows,
    the thresholds binary features ``x[c] > t`` (no threshold outside the forest's is
    needed: every cell is one point of the space for both models)."""
    X = grid_points(thresholds)
    y = np.asarray(decide(X))
    columns = [X[:, c] > t for c, ts in enumerate(thresholds) for t in ts]
    B = np.array(columns, dtype=np.uint8).T.reshape(len(X), len(columns))
    depth = min_consistent_depth(B, y)
    # a path never needs to test a feature twice, so depth <= features gives every tree
    leaves = min_consistent_leaves(B, y, max(B.shape[1], 0))
    return depth, leaves, min_consistent_leaves(B, y, int(depth))
