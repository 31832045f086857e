"""The Diagram model: agreement with trees, exports, round trips, simplification, validation."""

from __future__ import annotations

import numpy as np
import pytest

from satdt.diagram import Diagram
from satdt.tree import Tree


def random_nested(rng: np.random.Generator, depth: int, n_features: int, n_classes: int):
    """A random nested tree of at most ``depth`` levels."""
    if depth == 0 or rng.random() < 0.25:
        return int(rng.integers(n_classes))
    return (
        int(rng.integers(n_features)),
        float(np.round(rng.random(), 2)),
        random_nested(rng, depth - 1, n_features, n_classes),
        random_nested(rng, depth - 1, n_features, n_classes),
    )


def random_diagram(
    rng: np.random.Generator,
    widths: tuple[int, ...],
    n_features: int,
    n_classes: int,
    multivariate: bool = False,
    grid: int = 4,
) -> Diagram:
    """A random diagram filling ``widths``; thresholds on a coarse grid so tests repeat."""
    layer = np.repeat(np.arange(len(widths)), widths)
    n = len(layer)
    first = np.concatenate([[0], np.cumsum(widths)])
    feature = rng.integers(n_features, size=n)
    if multivariate:
        feature[rng.random(n) < 0.5] = -1
    threshold = rng.integers(grid + 1, size=n) / grid
    coef = rng.integers(-2, 3, size=(n, n_features)).astype(float) if multivariate else None
    succ = np.empty((n, 2), dtype=np.int64)
    for i in range(n):
        for side in range(2):
            later = np.arange(first[layer[i] + 1], n)
            if len(later) and rng.random() < 0.7:
                succ[i, side] = rng.choice(later)
            else:
                succ[i, side] = -1 - rng.integers(n_classes)
    return Diagram(
        layer,
        feature,
        threshold,
        succ[:, 0],
        succ[:, 1],
        coef=coef,
        n_features=n_features,
        classes=[f"c{k}" for k in range(n_classes)],
    )


def naive_terminal(diagram: Diagram, x: np.ndarray) -> int:
    """Follow one row through the diagram, one node at a time."""
    node = diagram.root
    while node >= 0:
        f = diagram.feature[node]
        value = x[f] if f >= 0 else diagram.coef[node] @ x
        node = diagram.low[node] if value <= diagram.threshold[node] else diagram.high[node]
    return -1 - int(node)


# ---------------------------------------------------------------------------- trees
@pytest.mark.parametrize("seed", range(20))
def test_from_tree_agrees_with_tree(seed: int) -> None:
    rng = np.random.default_rng(seed)
    nested = random_nested(rng, 4, 3, 3)
    tree = Tree.from_nested(nested, classes=["a", "b", "c"])
    X = np.round(rng.random((300, 3)), 2)
    diagram = Diagram.from_tree(tree, n_features=3)
    assert np.array_equal(diagram.predict(X), tree.predict(X))
    assert diagram.depth == tree.depth
    assert diagram.n_nodes == tree.n_nodes - tree.n_leaves


def test_from_tree_carries_counts_and_probabilities() -> None:
    rng = np.random.default_rng(1)
    X = rng.random((200, 2))
    y = (X[:, 0] > 0.5).astype(int) ^ (rng.random(200) < 0.1)
    tree = Tree.from_nested((0, 0.5, (1, 0.5, 0, 0), 1), classes=[0, 1]).with_counts(X, y)
    diagram = Diagram.from_tree(tree)
    assert np.array_equal(diagram.counts, tree.counts[[0, 1]])
    expected = np.zeros((2, 2))
    for leaf in np.flatnonzero(tree.feature == -1):
        expected[tree.value[leaf]] += tree.counts[leaf]
    assert np.array_equal(diagram.terminal_counts, expected)
    assert diagram == Diagram.from_tree(Tree.from_nested(tree.to_nested(), [0, 1])).with_counts(
        X, y
    )


def test_single_leaf_tree_is_single_terminal() -> None:
    diagram = Diagram.from_tree(Tree.single_leaf(1, ["no", "yes"]), n_features=2)
    assert diagram.n_nodes == 0 and diagram.depth == 0
    assert diagram.export_text() == "class: yes"
    X = np.zeros((4, 2))
    assert list(diagram.predict(X)) == ["yes"] * 4
    assert diagram.apply(X).tolist() == [[-2]] * 4


# ---------------------------------------------------------------------------- prediction
@pytest.mark.parametrize("multivariate", [False, True])
@pytest.mark.parametrize("seed", range(10))
def test_predict_agrees_with_row_by_row_walk(seed: int, multivariate: bool) -> None:
    rng = np.random.default_rng(seed)
    diagram = random_diagram(rng, (1, 2, 3, 2), 3, 3, multivariate)
    X = rng.integers(5, size=(200, 3)) / 4
    expected = [naive_terminal(diagram, x) for x in X]
    assert diagram.terminal(X).tolist() == expected
    path = diagram.apply(X)
    assert path.shape == (200, diagram.depth + 1)
    assert np.array_equal(-1 - path[:, -1], expected)
    for row in path:  # internal nodes, then the terminal repeated
        internal = row[row >= 0]
        assert np.all(row[len(internal) :] == row[-1])
        assert np.all(np.diff(diagram.layer[internal]) > 0)


def test_predict_proba_rows_sum_to_one() -> None:
    rng = np.random.default_rng(3)
    diagram = random_diagram(rng, (1, 2, 2), 2, 3)
    X = rng.random((100, 2))
    for model in (diagram, diagram.with_counts(X[:50], rng.integers(3, size=50))):
        proba = model.predict_proba(X)
        assert proba.shape == (100, 3)
        assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(diagram.predict_proba(X).argmax(axis=1), diagram.terminal(X))


def test_with_counts_adds_up() -> None:
    rng = np.random.default_rng(4)
    diagram = random_diagram(rng, (1, 2, 2), 2, 2)
    X = rng.random((80, 2))
    y = rng.integers(2, size=80)
    w = rng.random(80)
    counted = diagram.with_counts(X, y, w)
    assert np.isclose(counted.terminal_counts.sum(), w.sum())
    assert np.isclose(counted.counts[0].sum(), w.sum())
    k = diagram.terminal(X)
    for c in range(2):
        assert np.allclose(counted.terminal_counts[c], np.bincount(y[k == c], w[k == c], 2))
