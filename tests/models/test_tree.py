"""Tree: prediction, shape, simplification, exports and the JSON round trip."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from satdt.models.base import Model
from satdt.models.tree import DEFAULT_LEFT, LEAF, MISSING_RIGHT, Tree

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it

CLASSES = np.array(["no", "yes"])


def small_tree() -> Tree:
    # petal <= 2.45 -> no ; else (colour == red ? yes : no)
    return Tree.from_nested(
        (0, 2.45, 0, (1, 0.5, 0, 1)),
        CLASSES,
        feature_names=["petal", "colour == red"],
        indicator=[1],
    )


def test_predict_apply_and_shape():
    tree = small_tree()
    X = np.array([[1.0, 1.0], [3.0, 0.0], [3.0, 1.0], [2.45, 1.0]])
    np.testing.assert_array_equal(tree.predict(X), ["no", "no", "yes", "no"])
    assert tree.depth == 2 and tree.n_nodes == 5 and tree.n_leaves == 3
    assert Tree.single_leaf(1, CLASSES).depth == 0


def test_predict_proba_uses_training_frequencies():
    tree = small_tree()
    X = np.array([[1.0, 0.0], [1.0, 1.0], [3.0, 1.0], [3.0, 1.0], [3.0, 0.0]])
    y = np.array([0, 1, 1, 1, 0])
    fitted = tree.with_counts(X, y)
    proba = fitted.predict_proba(np.array([[0.0, 0.0], [5.0, 1.0]]))
    np.testing.assert_allclose(proba, [[0.5, 0.5], [0.0, 1.0]])
    # a leaf no training row reaches predicts its own class with certainty
    np.testing.assert_allclose(tree.predict_proba(np.array([[5.0, 1.0]])), [[0.0, 1.0]])


def test_export_text_uses_names_and_labels():
    text = small_tree().export_text()
    assert "petal <= 2.45" in text and "petal > 2.45" in text
    assert "colour == red" in text and "colour != red" in text
    assert "class: yes" in text
    dot = small_tree().to_dot()
    assert dot.startswith("digraph") and '"petal <= 2.45"' in dot


def test_json_round_trip_is_exact():
    tree = small_tree().with_counts(np.array([[1.0, 0.0], [3.0, 1.0]]), np.array([0, 1]))
    tree.threshold[0] = 0.1 + 0.2  # not representable in short decimal form
    back = Tree.from_json(tree.to_json())
    assert back == tree
    assert back.threshold[0] == 0.1 + 0.2
    ints = Tree.from_nested((0, 0.5, 0, 1), np.array([3, 7]))
    assert Tree.from_json(ints.to_json()).classes.tolist() == [3, 7]


@st.composite
def random_tree(draw, depth=3, n_features=3, n_classes=3):
    def grow(d):
        if d == 0 or draw(st.booleans()):
            return draw(st.integers(0, n_classes - 1))
        f = draw(st.integers(0, n_features - 1))
        t = draw(st.sampled_from([0.5, 1.5]))
        return (f, t, grow(d - 1), grow(d - 1))

    return Tree.from_nested(grow(depth), np.arange(n_classes))


@settings(deadline=None, max_examples=examples(200))
@given(
    random_tree(),
    st.lists(st.lists(st.integers(0, 2), min_size=3, max_size=3), min_size=0, max_size=12),
)
def test_simplify_keeps_predictions_and_reaches_a_fixed_point(tree, rows):
    X = np.array(rows, dtype=float).reshape(-1, 3)
    simple = tree.simplify(X)
    np.testing.assert_array_equal(simple.predict(X), tree.predict(X))
    assert simple.n_nodes <= tree.n_nodes
    assert simple.simplify(X) == simple
    if len(X):
        # no internal node with an unreached child, no sibling leaves of one class
        leaves = simple.apply(X)
        reached = set(leaves.tolist())
        for i in range(simple.n_nodes):
            if simple.feature[i] >= 0:
                lo, hi = simple.left[i], simple.right[i]
                if simple.feature[lo] < 0 and simple.feature[hi] < 0:
                    assert simple.value[lo] != simple.value[hi]
                below = [lo, hi]
                for child in below:
                    stack, hit = [child], False
                    while stack:
                        node = stack.pop()
                        if simple.feature[node] < 0:
                            hit |= node in reached
                        else:
                            stack += [simple.left[node], simple.right[node]]
                    assert hit


@settings(deadline=None, max_examples=examples(100))
@given(
    random_tree(),
    st.lists(
        st.lists(st.sampled_from([0.0, 1.0, 2.0, np.nan]), min_size=3, max_size=3), max_size=10
    ),
)
def test_decision_path_follows_each_test_to_the_leaf(tree, rows):
    X = np.array(rows, dtype=float).reshape(-1, 3)
    path = tree.decision_path(X)
    assert path.shape == (len(X), tree.depth + 1)
    np.testing.assert_array_equal(path[:, -1], tree.apply(X))
    for r in range(len(X)):
        node = 0
        for step in range(tree.depth + 1):
            assert path[r, step] == node
            if tree.feature[node] != LEAF:
                goes_left = tree.holds(X[r : r + 1], np.array([node]))[0]
                node = tree.left[node] if goes_left else tree.right[node]


def test_equality_sees_every_field_and_copies_share_nothing():
    tree = small_tree().with_counts(np.array([[1.0, 0.0], [3.0, 1.0]]), np.array([0, 1]))
    assert isinstance(tree, Model) and tree == tree.copy()
    changes = {
        "feature": [0, 0, -1, -1, -1],
        "threshold": [2.5, 0.5, np.nan, np.nan, np.nan],
        "left": [1, 2, -1, -1, -1],
        "right": [4, 3, -1, -1, -1],
        "value": [-1, -1, 1, 1, 0],
        "counts": np.ones((5, 2)),
        "classes": np.array(["n", "y"]),
        "feature_names": ["p", "c"],
        "indicator": [],
        "missing": [MISSING_RIGHT, DEFAULT_LEFT, 2, 2, 2],
    }
    assert set(changes) == set(Tree.__slots__)
    for name, value in changes.items():
        assert tree.replace(**{name: value}) != tree, name
    copy = tree.copy()
    for name in Tree.__slots__:
        value = getattr(copy, name)
        if isinstance(value, np.ndarray):
            assert not np.shares_memory(value, getattr(tree, name)), name
    assert repr(tree) == "Tree(depth=2, n_nodes=5, n_leaves=3)"
