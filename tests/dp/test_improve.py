"""The local improvement of a consistent tree (satdt.dp.improve) and the lower bounds from
cores (satdt.dp.cores): every tree consistent and shallower, every bound at most the brute
force's minimum depth, on tiny random tables; why merged values prove nothing; effort."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from helpers import SHARED, examples, labels_by_row, small_integer_rows
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_consistent_depth, threshold_features

from satdt.dp.cores import CoreBound
from satdt.dp.greedy import greedy_numeric_tree
from satdt.dp.improve import ImproveOptions, LocalImprovement, _Reduced, height
from satdt.models.tree import Tree
from satdt.task.stats import ImproveStats


@st.composite
def consistent_tables(draw, max_rows: int = 9, max_columns: int = 3, max_classes: int = 3):
    """Tiny numeric tables (small integers, so that values repeat) whose identical rows share
    a label: a consistent tree exists."""
    X = small_integer_rows(draw, max_rows, max_columns, min_rows=2)
    n_classes = draw(st.integers(2, max_classes))
    return X, labels_by_row(draw, X, st.integers(0, n_classes - 1)).astype(np.int64), n_classes


def _improve_all(X, y, n_classes, **options):
    """Every tree a local improvement from the greedy tree returns, until it has nothing more
    to try (generous budgets: tiny tables)."""
    start = greedy_numeric_tree(X, y, n_classes)
    search = LocalImprovement(X, y, n_classes, start, options=ImproveOptions(**options))
    trees = [start]
    while not search.exhausted:
        decision = search.advance(time.perf_counter() + 5)
        if decision.status == "SAT":
            trees.append(decision.tree)
    return trees, search


@settings(max_examples=examples(60), deadline=None)
@given(consistent_tables())
def test_every_improved_tree_is_consistent_shallower_and_no_better_than_brute_force(table):
    X, y, n_classes = table
    minimum = min_consistent_depth(threshold_features(X), y)
    trees, search = _improve_all(X, y, n_classes, max_rows=4, first_budget=5.0)
    for before, after in itertools.pairwise(trees):
        assert (after.predict_index(X) == y).all()
        assert after.depth < before.depth
    assert trees[-1].depth >= minimum and search.stats.depth == trees[-1].depth


@settings(max_examples=examples(60), deadline=None)
@given(consistent_tables(), st.integers(0, 4))
def test_a_core_never_refutes_a_depth_that_a_consistent_tree_has(table, depth):
    """UNSAT on a core only below the brute-force minimum; SAT with a tree of every row."""
    X, y, n_classes = table
    minimum = min_consistent_depth(threshold_features(X), y)
    cores = CoreBound(X, y, n_classes)
    decision = cores.advance(depth, math.inf)
    if depth < minimum:
        assert decision.status == "UNSAT"
        assert cores.stats.cores[-1] == (depth, cores.stats.rows)
    else:
        assert decision.status == "SAT" and decision.tree.depth <= depth
        assert (decision.tree.predict_index(X) == y).all()


def test_thresholds_between_values_of_one_class_can_be_needed():
    """Merging neighbouring values of one class (the improvement's subproblems) may cost
    depth: here 2 with every threshold, 3 without those between same-class values. So the
    merged values prove no lower bound, and the cores keep every threshold of their rows."""
    X = np.array([[3, 1], [4, 3], [0, 7], [5, 5], [1, 4], [7, 2], [2, 6], [6, 0]], dtype=float)
    y = np.array([1, 2, 2, 0, 2, 2, 0, 2])
    reduced = _Reduced(X, y, 3, stats := ImproveStats())
    assert stats.thresholds_dropped > 0
    assert min_consistent_depth(threshold_features(X), y) == 2
    assert min_consistent_depth(threshold_features(reduced.X), y) == 3
    assert CoreBound(X, y, 3).advance(1, math.inf).status == "UNSAT"
    assert CoreBound(X, y, 3).advance(2, math.inf).status == "SAT"


def test_a_tree_of_merged_values_routes_the_rows_as_on_the_original_ones():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 20, size=(60, 3)).astype(float)
    y = (X[:, 0] > 9).astype(np.int64) ^ (X[:, 1] > 14).astype(np.int64)
    stats = ImproveStats()
    reduced = _Reduced(X, y, 2, stats)
    assert reduced.X.shape[1] < X.shape[1] or stats.thresholds_dropped > 0
    tree = greedy_numeric_tree(reduced.X, y, 2)
    back = Tree.from_nested(reduced.back(tree.to_nested()), classes=np.arange(2))
    assert (back.apply(X) == tree.apply(reduced.X)).all()


def test_an_offered_shallower_tree_replaces_the_incumbent():
    X = np.arange(8, dtype=float)[:, None]
    y = (X[:, 0] > 3.5).astype(np.int64)
    # a consistent chain of depth 4, and the stump of depth 1
    chain = Tree.from_nested((0, 0.5, 0, (0, 1.5, 0, (0, 2.5, 0, (0, 3.5, 0, 1)))), np.arange(2))
    stump = Tree.from_nested((0, 3.5, 0, 1), np.arange(2))
    search = LocalImprovement(X, y, 2, chain)
    assert search.depth == 4
    search.offer(chain)
    assert search.depth == 4
    search.offer(stump)
    assert search.depth == 1 and height(search.nested) == 1
    assert search.advance(time.perf_counter() + 1).status == "UNKNOWN" and search.exhausted


def _continuous(name: str, rows: int) -> tuple[np.ndarray, np.ndarray]:
    path = SHARED / "continuous" / f"{name}.txt"
    if not path.exists():
        pytest.skip(f"shared data not found: {path}")
    table = np.loadtxt(path, ndmin=2)
    keep = np.sort(np.random.default_rng(0).choice(len(table), rows, replace=False))
    return np.ascontiguousarray(table[keep, 1:]), table[keep, 0].astype(np.int64)


def test_the_improvement_lowers_a_greedy_tree_far():
    """300 rows of the bank file: the greedy tree's depth falls by at least two levels."""
    X, y = _continuous("bank", 300)
    start = greedy_numeric_tree(X, y, 2)
    search = LocalImprovement(X, y, 2, start, options=ImproveOptions(max_rows=100))
    while search.depth > start.depth - 2 and not search.exhausted:
        search.advance(time.perf_counter() + 1)
    assert search.depth <= start.depth - 2 and (search.tree().predict_index(X) == y).all()
    assert search.stats.replaced >= 1 and search.stats.solves >= search.stats.replaced
