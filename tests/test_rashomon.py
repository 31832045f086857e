"""The Rashomon set (satdt.rashomon_set) against brute force: the same count and the same trees
on tiny data, the optimum of the error search, uniform samples and exact feature shares."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from satdt import OptimalTreeClassifier, ParameterError
from satdt.rashomon import rashomon_set


def _all_trees(B, rows, depth, n_classes):
    """Every tree over the binary features B: leaves of any class, splits that separate."""
    yield from range(n_classes)
    if depth == 0:
        return
    for f in range(B.shape[1]):
        left, right = rows & (B[:, f] == 0), rows & (B[:, f] == 1)
        if left.any() and right.any():
            for low in _all_trees(B, left, depth - 1, n_classes):
                for high in _all_trees(B, right, depth - 1, n_classes):
                    yield (f, low, high)


def _objective(nested, B, y, w, penalty):
    def walk(node, rows):
        if not isinstance(node, tuple):
            return float(w[rows & (y != node)].sum()), 1
        f, low, high = node
        el, ll = walk(low, rows & (B[:, f] == 0))
        er, lr = walk(high, rows & (B[:, f] == 1))
        return el + er, ll + lr

    errors, leaves = walk(nested, np.ones(len(y), dtype=bool))
    return errors / w.sum() + penalty * leaves


def _prepared_arrays(solver):
    """The binary features, class indices and integer weights of the rows the set is over."""
    n = solver.all_rows.bit_length()
    B = np.array([[(mask >> i) & 1 for mask in solver.features] for i in range(n)], dtype=np.int64)
    B = B.reshape(n, len(solver.features))
    units = np.array(
        [
            sum(((p >> i) & 1) << b for planes in solver.planes for b, p in enumerate(planes))
            for i in range(n)
        ],
        dtype=float,
    )
    classes = np.array(
        [
            next(k for k, planes in enumerate(solver.planes) if any((p >> i) & 1 for p in planes))
            for i in range(n)
        ]
    )
    return B, classes, units


@st.composite
def tiny(draw):
    p = draw(st.integers(1, 3))
    n = draw(st.integers(2, 8))
    rows = draw(
        st.lists(st.lists(st.integers(0, 1), min_size=p, max_size=p), min_size=n, max_size=n)
    )
    y = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    return (
        np.array(rows, dtype=float),
        np.array(y),
        draw(st.integers(1, 2)),
        draw(st.sampled_from([0.0, 0.05, 0.2])),
        draw(st.sampled_from([0.0, 0.1, 0.3])),
    )


@settings(deadline=None, max_examples=60)
@given(tiny())
def test_the_set_equals_brute_force(case):
    X, y, depth, penalty, epsilon = case
    rashomon = rashomon_set(X, y, depth, epsilon=epsilon, leaf_penalty=penalty)
    solver = rashomon._solver
    B, classes, units = _prepared_arrays(solver)
    rows = np.ones(len(classes), dtype=bool)
    every = list(_all_trees(B, rows, depth, solver.n_classes))
    costs = [_objective(t, B, classes, units, penalty) for t in every]
    best = min(costs)
    inside = [t for t, c in zip(every, costs, strict=True) if c <= best + epsilon + 1e-9]
    assert rashomon.optimum == pytest.approx(best)
    assert rashomon.count == len(inside)
    found = [
        nested
        for key in rashomon._histogram
        for nested in solver.nested(solver.all_rows, depth, key)
    ]
    assert Counter(map(repr, found)) == Counter(map(repr, inside))


def test_the_optimum_is_the_error_searchs_and_every_tree_is_checked():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(60, 5)).astype(float)
    y = (X[:, 0].astype(int) ^ X[:, 1].astype(int)) | (rng.random(60) < 0.1)
    for penalty in (0.01, 0.05):
        model = OptimalTreeClassifier(objective="error", max_depth=3, leaf_penalty=penalty)
        model.fit(X, y)
        rashomon = rashomon_set(X, y, 3, epsilon=0.02, leaf_penalty=penalty)
        assert rashomon.optimum == pytest.approx(model.result_.objective_value)
        assert rashomon.count == sum(rashomon.histogram().values()) >= 1
        trees = list(rashomon.trees())
        assert len(trees) == rashomon.count  # each re-checked against the data and the bound
        values = [float((t.predict(X) != y).mean()) + penalty * t.n_leaves for t in trees]
        assert min(values) == pytest.approx(rashomon.optimum)
        assert max(values) <= rashomon.optimum + 0.02 + 1e-9
        assert all(a <= b + 1e-12 for a, b in itertools.pairwise(values))  # best first


def test_feature_shares_are_exact_and_samples_uniform():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(40, 4)).astype(float)
    y = X[:, 0].astype(int) | X[:, 2].astype(int)
    rashomon = rashomon_set(X, y, 2, epsilon=0.1, leaf_penalty=0.02)
    trees = list(rashomon.trees())
    shares = rashomon.feature_importance()
    for name, share in shares.items():
        using = sum(f"{name} " in t.export_text() for t in trees)
        assert share == pytest.approx(using / len(trees))
    drawn = Counter(t.export_text() for t in rashomon.sample(4000, random_state=0))
    assert set(drawn) <= {t.export_text() for t in trees}
    expected = 4000 / len(trees)
    assert all(abs(count - expected) < 6 * expected**0.5 + 5 for count in drawn.values())


def test_bad_epsilon_is_refused():
    with pytest.raises(ParameterError, match="epsilon must be a number >= 0"):
        rashomon_set([[0.0], [1.0]], [0, 1], 1, epsilon=-1)


def test_cli_counts_the_set(capsys):
    from pathlib import Path

    from satdt.cli import main

    iris = Path(__file__).resolve().parents[1] / "examples" / "data" / "iris.csv"
    argv = [
        "rashomon",
        str(iris),
        "--max-depth",
        "2",
        "--epsilon",
        "0.02",
        "--leaf-penalty",
        "0.01",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("trees of depth <= 2 within 0.02 of the optimum 0.07: 1239")
    assert "tree 3:" in out and "tree 4:" not in out
    assert main([*argv, "--format", "json", "--show", "0"]) == 0
    import json

    document = json.loads(capsys.readouterr().out)
    assert document["count"] == 1239 == sum(c for _, c in document["histogram"])
    assert main(["rashomon", str(iris), "--max-depth", "2", "--epsilon", "-1"]) == 2
    assert "epsilon must be a number >= 0" in capsys.readouterr().err


@settings(deadline=None, max_examples=40)
@given(tiny())
def test_minimum_size_trees_are_the_sat_minimum_and_all_of_them(case):
    from satdt.rashomon import minimum_size_trees

    X, y, _, _, _ = case
    keys = [tuple(row) for row in X]
    labels = {}
    for key, label in zip(keys, y, strict=True):  # consistent data: one label per row
        labels.setdefault(key, label)
    y = np.array([labels[key] for key in keys])
    sat = OptimalTreeClassifier(objective="size", method="sat").fit(X, y)
    trees = minimum_size_trees(X, y)
    assert trees.optimum == sat.result_.objective_value
    assert trees.histogram() == {trees.optimum: trees.count}
    depth = OptimalTreeClassifier(objective="depth", method="sat").fit(X, y).tree_.depth
    solver = trees._solver
    every = []
    for tree in trees.trees():
        assert tree.n_nodes == trees.optimum and tree.depth <= depth
        assert (tree.predict(X) == y).all()
        every.append(tree.export_text())
    assert len(set(every)) == trees.count  # distinct trees, each checked
    B, classes, units = _prepared_arrays(solver)
    rows = np.ones(len(classes), dtype=bool)
    consistent = [
        t
        for t in _all_trees(B, rows, depth, solver.n_classes)
        if _objective(t, B, classes, units, 0.0) == 0
    ]
    fewest = min(_objective(t, B, classes, units, 1.0) for t in consistent)
    assert trees.count == sum(_objective(t, B, classes, units, 1.0) == fewest for t in consistent)


def test_cli_counts_minimum_size_trees_on_the_users_columns(capsys):
    from pathlib import Path

    from satdt.cli import main

    tiny_csv = Path(__file__).resolve().parents[1] / "examples" / "data" / "tiny.csv"
    assert main(["rashomon", str(tiny_csv), "--max-depth", "2", "--size", "--show", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("consistent trees of depth <= 2 with 5 nodes: 2")
    assert "  outlook: 100.0%" in out and "outlook != rainy" in out
    assert main(["rashomon", str(tiny_csv), "--max-depth", "1", "--size"]) == 1
    assert "no tree of depth <= 1 classifies every training row" in capsys.readouterr().err
