"""The Rashomon set (satdt.rashomon_set) against brute force: the same count and the same trees
on tiny data, the optimum of the error search, uniform samples and exact feature shares."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from helpers import ROOT, examples
from hypothesis import given, settings
from hypothesis import strategies as st

from satdt import OptimalTreeClassifier, ParameterError
from satdt.core.errors import InfeasibleError, SatdtError
from satdt.estimators.rashomon import rashomon_set


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


@settings(deadline=None, max_examples=examples(60))
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

    from satdt.cli import main

    iris = ROOT / "examples" / "data" / "iris.csv"
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


@settings(deadline=None, max_examples=examples(40))
@given(tiny())
def test_minimum_size_trees_are_the_sat_minimum_and_all_of_them(case):
    from satdt.estimators.rashomon import minimum_size_trees

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

    from satdt.cli import main

    tiny_csv = ROOT / "examples" / "data" / "tiny.csv"
    assert main(["rashomon", str(tiny_csv), "--max-depth", "2", "--size", "--show", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("consistent trees of depth <= 2 with 5 nodes: 2")
    assert "  outlook: 100.0%" in out and "outlook != rainy" in out
    assert main(["rashomon", str(tiny_csv), "--max-depth", "1", "--size"]) == 1
    assert "no tree of depth <= 1 classifies every training row" in capsys.readouterr().err


def _canonical_arrays(solver):
    """The binary features and class indices of the rows the canonical trees are over."""
    n = solver.all_rows.bit_length()
    B = np.array([[(mask >> i) & 1 for mask in solver.features] for i in range(n)], dtype=np.int64)
    B = B.reshape(n, len(solver.features))
    y = np.array([next(k for k, m in enumerate(solver.classes) if (m >> i) & 1) for i in range(n)])
    return B, y


def _consistent(X, y):
    """The labels made consistent: the first label of each distinct row."""
    labels = {}
    for key, label in zip(map(tuple, X), y, strict=True):
        labels.setdefault(key, label)
    return np.array([labels[tuple(row)] for row in X])


@st.composite
def grids(draw):
    """Rows of a grid of binary columns (some left out), labels a function of some of the
    columns, a depth budget of the minimum or one more: splits on a column the labels do not
    need, whose two sides need the same subtree, are common."""
    p = draw(st.integers(1, 3))
    grid = list(itertools.product([0, 1], repeat=p))
    kept = draw(st.lists(st.booleans(), min_size=len(grid), max_size=len(grid)))
    X = np.array([row for row, keep in zip(grid, kept, strict=True) if keep] or [grid[0]])
    needed = draw(st.lists(st.integers(0, p - 1), min_size=1, max_size=p, unique=True))
    table = draw(st.lists(st.integers(0, 2), min_size=2 ** len(needed), max_size=2 ** len(needed)))
    y = [table[int("".join(str(row[j]) for j in needed), 2)] for row in X]
    return X.astype(float), np.array(y), draw(st.integers(1, 2))


@settings(deadline=None, max_examples=examples(80))
@given(
    st.one_of(grids(), tiny().map(lambda case: (case[0], _consistent(case[0], case[1]), case[2])))
)
def test_minimum_depth_trees_are_the_brute_force_canonical_trees(case):
    from naive import consistent_canonical_trees, min_consistent_depth

    from satdt.estimators.canonical import minimum_depth_trees

    X, y, extra = case
    minimum = min_consistent_depth(X, y)
    budget = min(minimum + extra - 1, 3)  # the minimum depth, or one more
    found = minimum_depth_trees(X, y, budget if budget > minimum else None)
    solver = found._solver
    B, classes = _canonical_arrays(solver)
    expected = consistent_canonical_trees(B, classes, found.depth)
    assert found.optimum == minimum and found.depth == max(budget, minimum)
    assert found.count == len(expected) == sum(found.histogram().values())
    every = list(solver.nested(frozenset({solver.all_rows}), found.depth))
    assert len(every) == len(set(every)) and set(every) == expected
    for nodes, count in found.histogram().items():
        assert count == sum(_leaves(t) == (nodes + 1) // 2 for t in expected)
    for name, count in found.feature_counts().items():
        features = solver.columns[name]
        assert count == sum(bool(_features(t) & features) for t in expected)
    for tree in found.trees():  # each re-checked against the data and the canonical form
        assert (tree.predict(X) == y).all() and found.optimum <= tree.depth <= found.depth


def _leaves(tree) -> int:
    return _leaves(tree[1]) + _leaves(tree[2]) if isinstance(tree, tuple) else 1


def _features(tree) -> set[int]:
    if not isinstance(tree, tuple):
        return set()
    return {tree[0]} | _features(tree[1]) | _features(tree[2])


def test_a_depth_budget_above_the_minimum_counts_deeper_canonical_trees_too():
    from naive import consistent_canonical_trees

    from satdt.estimators.canonical import minimum_depth_trees

    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float)
    y = np.array([0, 1, 1, 0])  # exclusive or: depth 2, both orders of the tests
    at_minimum = minimum_depth_trees(X, y)
    assert (at_minimum.optimum, at_minimum.count, at_minimum.histogram()) == (2, 2, {7: 2})
    deeper = minimum_depth_trees(X, y, max_depth=3)
    B, classes = _canonical_arrays(deeper._solver)
    assert deeper.count == len(consistent_canonical_trees(B, classes, 3)) == 2
    assert deeper.feature_importance() == {"x0": 1.0, "x1": 1.0}
    with pytest.raises(InfeasibleError, match="the minimum is 2"):
        minimum_depth_trees(X, y, max_depth=1)
    with pytest.raises(ParameterError, match="time_limit must be None or a number > 0"):
        minimum_depth_trees(X, y, time_limit=0)
    with pytest.raises(SatdtError, match="took more than time_limit=1e-09 s: give it more time"):
        minimum_depth_trees(X, y, time_limit=1e-9)  # over before the count starts
    for bad in ("3", -1, 2.5):
        with pytest.raises(ParameterError, match="max_depth must be None or an integer >= 0"):
            minimum_depth_trees(X, y, bad)


def test_equal_subtrees_are_one_tree_and_the_count_says_so():
    from naive import consistent_canonical_trees, consistent_trees

    from satdt.estimators.canonical import minimum_depth_trees

    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float)
    y = np.array([0, 1, 0, 1])  # x1 alone: (x0, T, T) and (x1, 0, (x0, 1, 1)) are T
    found = minimum_depth_trees(X, y, max_depth=2)
    B, classes = _canonical_arrays(found._solver)
    assert consistent_canonical_trees(B, classes, 2) == {(1, 0, 1)}
    everyone = np.ones(len(classes), dtype=bool)
    # the brute force meets the redundant tree, and reduces it
    assert (0, (1, 0, 1), (1, 0, 1)) in set(consistent_trees(B, classes, everyone, 2))
    assert (found.count, found.histogram(), found.optimum) == (1, {3: 1}, 1)
    (tree,) = found.trees()
    assert tree.export_text().startswith("x1 <= 0.5")


def test_cli_counts_minimum_depth_trees(capsys):

    from satdt.cli import main

    tiny_csv = ROOT / "examples" / "data" / "tiny.csv"
    argv = ["rashomon", str(tiny_csv), "--max-depth", "2", "--depth"]
    assert main([*argv, "--show", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "consistent trees of depth <= 2 up to symmetry (the minimum depth is 2): 3"
    )
    assert "nodes: trees\n  5: 2\n  7: 1" in out and "tree 1:" in out and "tree 2:" not in out
    assert main([*argv, "--format", "json", "--show", "5"]) == 0
    import json

    document = json.loads(capsys.readouterr().out)
    assert document["count"] == 3 == len(document["trees"])
    assert document["histogram"] == [[5, 2], [7, 1]]
    assert main(["rashomon", str(tiny_csv), "--max-depth", "1", "--depth"]) == 1
    assert "the minimum is 2" in capsys.readouterr().err


@settings(deadline=None, max_examples=examples(40))
@given(tiny())
def test_model_class_reliance_is_the_range_over_every_tree_of_the_set(case):
    from naive import model_reliance

    X, y, depth, penalty, epsilon = case
    rashomon = rashomon_set(X, y, depth, epsilon=epsilon, leaf_penalty=penalty)
    ranges = rashomon.model_class_reliance()
    trees = list(rashomon.trees())
    assert len(trees) == rashomon.count
    for c in range(X.shape[1]):
        values = [model_reliance(t.predict, X, y, [c]) for t in trees]
        if f"x{c}" not in ranges:  # no binary feature of its own: no tree splits on it
            assert values == [0.0] * len(values)
            continue
        assert ranges[f"x{c}"] == pytest.approx((min(values), max(values)), abs=1e-12)


def test_cli_gives_the_model_class_reliance(capsys):

    from satdt.cli import main

    iris = ROOT / "examples" / "data" / "iris.csv"
    argv = ["rashomon", str(iris), "--max-depth", "2", "--epsilon", "0.02", "--leaf-penalty"]
    assert main([*argv, "0.01", "--reliance", "--show", "0"]) == 0
    out = capsys.readouterr().out
    assert "model class reliance (the error's growth when the column is switched):" in out
    assert "  feat_3: 0 to 0.62" in out
    assert main([*argv, "0.01", "--reliance", "--show", "0", "--format", "json"]) == 0
    import json

    document = json.loads(capsys.readouterr().out)
    assert document["model_class_reliance"]["feat_4"] == [0.0, pytest.approx(0.62)]
    assert main(["rashomon", str(iris), "--max-depth", "2", "--depth", "--reliance"]) == 2
    assert "--reliance goes with --epsilon or --size" in capsys.readouterr().err
