"""The NumPy twin of the greedy numeric tree (satdt.dp._greedy_numpy) grows the Numba tree."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from satdt.dp import _greedy_kernels, _greedy_numpy, greedy
from satdt.dp._greedy_numpy import grow_numpy
from satdt.models.tree import LEAF, Tree

# ---------------------------------------------------------------------------- helpers


def both(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    sample_weight: np.ndarray | None = None,
    max_depth: int | None = None,
    deadline: float | None = None,
) -> tuple[tuple[Tree, bool], tuple[Tree, bool]]:
    """``(Numba tree, fell_back)`` and ``(NumPy tree, fell_back)`` on the same inputs."""
    X, y, w = greedy._check_inputs(X, y, n_classes, sample_weight, max_depth)
    numba = greedy._grow_numba(X, y, n_classes, w, max_depth, deadline)
    return numba, grow_numpy(X, y, n_classes, w, max_depth, deadline)


def assert_same(X, y, n_classes, sample_weight=None, max_depth=None, deadline=None) -> Tree:
    """Both implementations give the same tree and the same flag; returns the tree."""
    (expected, expected_flag), (tree, flag) = both(
        X, y, n_classes, sample_weight, max_depth, deadline
    )
    assert tree == expected, (tree.to_nested(), expected.to_nested())
    assert flag == expected_flag
    return tree


def without_contradictions(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Labels where identical rows share the label of the first of them."""
    _, first, inverse = np.unique(X, axis=0, return_index=True, return_inverse=True)
    return y[first[inverse.ravel()]]


# ---------------------------------------------------------------------------- data

# few distinct values, so that rows and values repeat (and -0.0 meets 0.0)
VALUES = st.sampled_from([-1.5, -0.0, 0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 3.75])


@st.composite
def tables(draw, min_rows: int = 0, max_rows: int = 30, max_cols: int = 4, max_classes: int = 4):
    """``(X, y, sample_weight, n_classes)``: small tables, integer weights (some 0) or None.

    With integer weights every sum is exact whatever the order of the additions, so both
    implementations compute bit-identical scores and break exact ties the same way.
    """
    n = draw(st.integers(min_rows, max_rows))
    p = draw(st.integers(0, max_cols))
    n_classes = draw(st.integers(1, max_classes))
    X = draw(arrays(np.float64, (n, p), elements=VALUES, fill=st.nothing()))
    y = draw(arrays(np.int64, n, elements=st.integers(0, n_classes - 1), fill=st.nothing()))
    w = None
    if draw(st.booleans()):
        w = draw(arrays(np.float64, n, elements=st.integers(0, 3).map(float), fill=st.nothing()))
    return X, y, w, n_classes


DEPTHS = st.sampled_from([None, 0, 1, 2, 3])


# ---------------------------------------------------------------------------- properties


@settings(deadline=None, max_examples=examples(400))
@given(tables(), DEPTHS)
def test_same_tree_as_numba(table, max_depth):
    X, y, w, n_classes = table
    assert_same(X, y, n_classes, w, max_depth)


@settings(deadline=None, max_examples=examples(150))
@given(tables(min_rows=1, max_cols=3), DEPTHS)
def test_same_tree_without_contradictions(table, max_depth):
    X, y, w, n_classes = table
    y = without_contradictions(X, y)
    tree = assert_same(X, y, n_classes, w, max_depth)
    if max_depth is None and X.shape[1] and (w is None or np.all(w > 0)):
        assert np.array_equal(tree.predict_index(X), y)


@settings(deadline=None, max_examples=examples(200))
@given(tables(), DEPTHS)
def test_passed_deadline_gives_the_same_balanced_tree(table, max_depth):
    X, y, w, n_classes = table
    assert_same(X, y, n_classes, w, max_depth, deadline=0.0)


@settings(deadline=None, max_examples=examples(150))
@given(tables(min_rows=2), DEPTHS, st.sampled_from([1, 2, 3, 7, 16]), st.booleans())
def test_blocks_cutting_through_nodes_change_nothing(table, max_depth, block, wide):
    # tiny blocks of the Gini search: nodes spread over many blocks, blocks over many nodes
    X, y, w, n_classes = table
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_greedy_numpy, "_BLOCK", block)
        if wide:  # int64 codes, as with very many rows or classes
            patch.setattr(_greedy_numpy, "_CODE_LIMIT", 1)
        assert_same(X, y, n_classes, w, max_depth)
        assert_same(X, y, n_classes, w, max_depth, deadline=0.0)


@settings(deadline=None, max_examples=examples(100))
@given(tables(min_rows=1, max_cols=3), st.data())
def test_unit_weights_given_explicitly(table, data):
    X, y, _, n_classes = table
    max_depth = data.draw(DEPTHS)
    # the weighted path of both implementations, with weights that are all 1
    assert_same(X, y, n_classes, np.ones(len(y)), max_depth)


# ---------------------------------------------------------------------------- larger data


@pytest.mark.parametrize("seed", range(3))
def test_continuous_data(seed):
    rng = np.random.default_rng(seed)
    n = 20_000
    X = rng.normal(size=(n, 4))
    X[:, 3] = np.round(X[:, 3], 1)  # a column with repeated values
    y = (X[:, 0] * X[:, 1] + 0.5 * rng.normal(size=n) > 0).astype(int) + (X[:, 2] > 1)
    for max_depth in (3, None):
        assert_same(X, y, 3, None, max_depth)
    assert_same(X, y, 3, rng.integers(0, 5, n).astype(float), 4)
    assert_same(X, y, 3, None, None, deadline=0.0)


def test_values_differing_only_in_their_lowest_bits():
    # the fast presort keeps only the high bits of each value: these need its second look
    rng = np.random.default_rng(6)
    n = 3000
    # distinct values, but for a few equal ones and a few neighbouring floats in either order
    rare = rng.normal(size=n)
    pairs = rng.choice(n, size=(40, 2), replace=False)
    rare[pairs[:20, 1]] = rare[pairs[:20, 0]]
    rare[pairs[20:, 1]] = np.nextafter(rare[pairs[20:, 0]], np.inf * rng.choice([-1, 1], 20))
    X = np.stack(
        [
            1.0 + np.spacing(1.0) * rng.integers(0, 40, n),
            1.0 + np.spacing(1.0) * rng.permutation(n),
            rng.choice([-1e300, -5e-324, -0.0, 0.0, 5e-324, 2.5, 2.5 + 4 * np.spacing(2.5)], n),
            rare,
        ],
        axis=1,
    )
    y = rng.integers(0, 3, n)
    for max_depth in (2, None):
        assert_same(X, y, 3, None, max_depth)
    for c in range(X.shape[1]):  # alone, every value counts
        assert_same(X[:, [c]], y, 3, None, None)
    # the same order and ranks as the kernels' sorts
    idx = np.empty((X.shape[1], n), dtype=np.int32)
    code = np.empty((X.shape[1], n), dtype=np.int32)
    _greedy_kernels.presort(X, y.astype(np.int32), 2, idx, code)
    rows, codes = _greedy_numpy._presort(X, y.astype(np.int32), 2)
    assert np.array_equal(rows, idx)
    assert np.array_equal(codes, code)


def test_many_classes():
    rng = np.random.default_rng(7)
    X = np.round(rng.random((2000, 3)), 2)
    y = rng.integers(0, 9, 2000)
    assert_same(X, y, 9, None, None)
    assert_same(X, y, 9, rng.integers(1, 4, 2000).astype(float), 3)


class _Clock:
    """A fake ``time`` module whose clock advances by one at each look."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


def test_a_deadline_passing_during_growth(monkeypatch):
    rng = np.random.default_rng(4)
    X = np.round(rng.random((3000, 4)), 2)
    y = without_contradictions(X, rng.integers(0, 3, 3000))
    X, y, w = greedy._check_inputs(X, y, 3, None, None)
    gini, fell_back = grow_numpy(X, y, 3, w, None, None)
    assert not fell_back
    monkeypatch.setattr(_greedy_numpy, "_BLOCK", 64)
    monkeypatch.setattr(_greedy_numpy, "time", _Clock())
    tree, fell_back = grow_numpy(X, y, 3, w, None, 200.5)  # Gini for the first blocks only
    assert fell_back
    assert np.array_equal(tree.predict_index(X), y)
    assert tree.to_nested() != gini.to_nested()
    assert tree.feature[0] == gini.feature[0]  # the root still by Gini
    assert tree.threshold[0] == gini.threshold[0]


# ---------------------------------------------------------------------------- edge cases


def test_edge_cases():
    # no rows, no columns, one class, identical rows, constant columns, negative zeros
    cases = [
        (np.zeros((0, 3)), np.zeros(0, dtype=int), 2),
        (np.zeros((3, 0)), np.array([1, 1, 0]), 2),
        (np.arange(4.0)[:, None], np.zeros(4, dtype=int), 1),
        (np.ones((5, 2)), np.array([0, 1, 1, 0, 1]), 2),
        (np.array([[7.0, 0.0], [7.0, 1.0], [7.0, 2.0], [7.0, 3.0]]), np.array([0, 0, 1, 1]), 2),
        (np.array([[-0.0], [0.0], [1.0], [-0.0]]), np.array([0, 1, 1, 1]), 2),
        (np.array([[-0.0, 0.0], [0.0, -0.0], [-1.0, 1.0]]), np.array([0, 1, 1]), 3),
    ]
    for X, y, n_classes in cases:
        for deadline in (None, 0.0):
            for max_depth in (None, 0, 1):
                assert_same(X, y, n_classes, None, max_depth, deadline)
    # no rows: nothing to grow, so a passed deadline forces nothing
    _, fell_back = grow_numpy(np.zeros((0, 3)), np.zeros(0, dtype=np.int32), 2, np.zeros(0), 1, 0.0)
    assert not fell_back


def test_negative_zero_equals_zero():
    X = np.array([[-0.0], [0.0], [1.0]])
    tree = assert_same(X, np.array([0, 1, 1]), 2)
    assert tree.n_nodes == 3 and tree.threshold[0] == 0.5


def test_zero_weights_make_a_leaf():
    X = np.array([[0.0], [1.0], [2.0]])
    tree = assert_same(X, np.array([0, 1, 1]), 2, np.array([0.0, 1.0, 2.0]))
    assert tree.n_nodes == 1 and tree.feature[0] == LEAF  # pure: class 0 weighs nothing


def test_never_imports_numba():
    code = "import sys, satdt.dp._greedy_numpy; assert 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
