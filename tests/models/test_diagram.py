"""The Diagram model: agreement with trees, exports, round trips, simplification, validation."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from helpers import examples, random_diagram
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import diagram_terminal

from satdt.core.errors import SatdtError
from satdt.models.base import Model
from satdt.models.diagram import Diagram, DiagramError
from satdt.models.tree import Tree

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it


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
    assert diagram.n_splits == tree.n_splits


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
    assert diagram.n_splits == 0 and diagram.depth == 0
    assert diagram.export_text() == "class: yes"
    X = np.zeros((4, 2))
    assert list(diagram.predict(X)) == ["yes"] * 4
    assert diagram.decision_path(X).tolist() == [[-2]] * 4


# ---------------------------------------------------------------------------- prediction
@pytest.mark.parametrize("multivariate", [False, True])
@pytest.mark.parametrize("seed", range(10))
def test_predict_agrees_with_row_by_row_walk(seed: int, multivariate: bool) -> None:
    rng = np.random.default_rng(seed)
    diagram = random_diagram(rng, (1, 2, 3, 2), 3, 3, multivariate)
    X = rng.integers(5, size=(200, 3)) / 4
    expected = [diagram_terminal(diagram, x) for x in X]
    assert diagram.terminal(X).tolist() == expected
    path = diagram.decision_path(X)
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


def test_follows_the_model_protocol() -> None:
    diagram = random_diagram(np.random.default_rng(2), (1, 2), 2, 2)
    assert isinstance(diagram, Model) and diagram.kind == "diagram"
    X = np.random.default_rng(3).random((20, 2))
    assert np.array_equal(diagram.predict_index(X), diagram.terminal(X))


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


# ---------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("multivariate", [False, True])
def test_json_round_trip_is_exact(multivariate: bool) -> None:
    rng = np.random.default_rng(5)
    diagram = random_diagram(rng, (1, 2, 2), 3, 3, multivariate)
    diagram = diagram.replace(threshold=rng.random(5) / 3, feature_names=["a", "b c", 'd"e'])
    if multivariate:
        diagram = diagram.replace(coef=rng.normal(size=(5, 3)))
    X = rng.random((60, 3))
    diagram = diagram.with_counts(X, rng.integers(3, size=60), rng.random(60) / 7)
    data = json.loads(diagram.to_json())
    assert data["model"] == "diagram" and data["format"] == "satdt-diagram"
    again = Diagram.from_json(diagram.to_json(indent=1))
    assert again == diagram
    assert again.threshold.tobytes() == diagram.threshold.tobytes()
    assert np.array_equal(again.predict_proba(X), diagram.predict_proba(X))


def test_json_round_trip_single_terminal_and_labels() -> None:
    diagram = Diagram.single_terminal(
        0, n_features=2, classes=np.array([3, 7]), terminal_counts=np.array([[2.0, 0], [1, 0]])
    )
    again = Diagram.from_json(diagram.to_json())
    assert again == diagram and again.predict(np.zeros((1, 2))).tolist() == [3]
    assert Diagram.from_dict(diagram.to_dict()).root == -1


def test_from_dict_rejects_other_formats() -> None:
    tree = Tree.single_leaf(0, [0, 1])
    with pytest.raises(DiagramError, match="not a satdt diagram"):
        Diagram.from_dict(tree.to_dict())


def test_equality_sees_every_field() -> None:
    rng = np.random.default_rng(6)
    diagram = random_diagram(rng, (1, 2), 2, 2)
    assert diagram == diagram.copy()
    assert diagram != diagram.replace(threshold=diagram.threshold + 1)
    assert diagram != diagram.replace(feature_names=["p", "q"])
    assert diagram != diagram.replace(classes=["x", "y"])
    assert diagram != diagram.replace(counts=np.zeros((3, 2)))
    assert "Diagram(" in repr(diagram) and "widths=(1, 2)" in repr(diagram)


# ---------------------------------------------------------------------------- simplify
@st.composite
def diagrams_and_data(draw: st.DrawFn) -> tuple[Diagram, np.ndarray]:
    seed = draw(st.integers(0, 2**32 - 1))
    widths = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    multivariate = draw(st.booleans())
    rng = np.random.default_rng(seed)
    diagram = random_diagram(rng, (1, *widths), 2, 3, multivariate, grid=2)
    X = rng.integers(5, size=(draw(st.integers(0, 40)), 2)) / 4
    return diagram, X


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(diagrams_and_data())
def test_simplify_never_changes_a_prediction(case: tuple[Diagram, np.ndarray]) -> None:
    diagram, X = case
    grid = np.array([[a, b] for a in np.arange(-1, 10) / 8 for b in np.arange(-1, 10) / 8])
    simple = diagram.simplify()
    assert np.array_equal(simple.terminal(grid), diagram.terminal(grid))
    assert simple.n_splits <= diagram.n_splits and simple.depth <= diagram.depth
    assert simple.simplify() == simple  # a fixed point
    assert np.all(simple.low != simple.high)
    on_data = diagram.simplify(X)
    assert np.array_equal(on_data.terminal(X), diagram.terminal(X))
    assert on_data.n_splits <= diagram.n_splits
    assert on_data.n_splits == len(on_data.layer)  # nothing unreachable is kept


def test_simplify_merges_duplicates_and_collapses() -> None:
    # n1.0 and n1.1 are the same test with the same successors; n2.0 sends both sides to class 0
    diagram = Diagram(
        [0, 1, 1, 2],
        [0, 1, 1, 0],
        [0.5, 0.25, 0.25, 0.75],
        [1, 3, 3, -1],
        [2, -2, -2, -1],
        n_features=2,
        classes=["a", "b"],
    )
    simple = diagram.simplify()
    assert diagram.n_splits == 4 and simple.n_splits == 1
    assert simple.export_text() == "n0.0: x[1] <= 0.25\n    yes -> class a\n    no  -> class b"
    X = np.random.default_rng(0).random((100, 2))
    assert np.array_equal(simple.predict(X), diagram.predict(X))


def test_simplify_adds_counts_of_merged_nodes() -> None:
    diagram = Diagram(
        [0, 1, 1],
        [0, 1, 1],
        [0.5, 0.5, 0.5],
        [1, -1, -1],
        [2, -2, -2],
        n_features=2,
        classes=[0, 1],
    )
    X = np.random.default_rng(1).random((50, 2))
    counted = diagram.with_counts(X, (X[:, 1] > 0.5).astype(int))
    simple = counted.simplify()
    assert simple.n_splits == 1
    assert np.array_equal(simple.counts[0], counted.counts[0])
    assert np.array_equal(simple.terminal_counts, counted.terminal_counts)


def test_simplify_with_data_drops_unused_arcs() -> None:
    tree = Tree.from_nested((0, 0.5, (1, 0.5, 0, 1), (1, 0.9, 1, 0)), classes=[0, 1])
    diagram = Diagram.from_tree(tree)
    X = np.array([[0.2, 0.2], [0.2, 0.8], [0.8, 0.1], [0.7, 0.3]])
    simple = diagram.simplify(X)
    assert simple.n_splits == 2 and simple.widths == (1, 1)
    assert np.array_equal(simple.predict(X), diagram.predict(X))


def test_simplify_to_single_terminal() -> None:
    diagram = Diagram([0, 1], [0, 1], [0.5, 0.5], [1, -2], [-2, -2], n_features=2, classes=[0, 1])
    simple = diagram.simplify()
    assert simple.n_splits == 0 and simple.root == -2
    assert simple.predict(np.zeros((3, 2))).tolist() == [1, 1, 1]


# ---------------------------------------------------------------------------- exports
@pytest.mark.parametrize("seed", range(8))
def test_export_text_names_every_reachable_node_once(seed: int) -> None:
    rng = np.random.default_rng(seed)
    diagram = random_diagram(rng, (1, 3, 2, 2), 3, 2, multivariate=seed % 2 == 1)
    text = diagram.export_text()
    defined = re.findall(r"^(n\d+\.\d+):", text, flags=re.MULTILINE)
    reachable = [diagram.node_name(i) for i in np.flatnonzero(diagram.reachable())]
    assert defined == reachable
    targets = re.findall(r"-> (n\d+\.\d+|class \S+)", text)
    assert len(targets) == 2 * diagram.n_splits
    assert {t for t in targets if t.startswith("n")} <= set(defined)


def test_export_text_readable_conditions() -> None:
    diagram = Diagram(
        [0, 1],
        [-1, 2],
        [1.5, 0.25],
        [1, -1],
        [-2, -1 - 2],
        coef=np.array([[2.0, -1.0, 0.0], [9.0, 9.0, 9.0]]),
        n_features=3,
        classes=["lo", "mid", "hi"],
        feature_names=["age", "income", "colour == red"],
        indicator=[2],
    )
    text = diagram.export_text()
    assert "n0.0: 2.0 * age - income <= 1.5" in text
    assert "n1.0: colour != red" in text
    assert "yes -> class lo" in text and "no  -> class hi" in text
    assert diagram.coef[1].tolist() == [0.0, 0.0, 0.0]  # univariate rows are ignored
    univariate = build(coef=np.ones((3, 2)))
    assert univariate.coef is None and univariate == build()


@pytest.mark.parametrize("seed", range(8))
def test_to_dot_lists_every_node_and_edge_once(seed: int) -> None:
    rng = np.random.default_rng(seed)
    diagram = random_diagram(rng, (1, 2, 3), 2, 3)
    dot = diagram.to_dot()
    assert dot.startswith("digraph") and dot.endswith("}")
    boxes = re.findall(r"^  (n\d+) \[shape=box", dot, flags=re.MULTILINE)
    ellipses = re.findall(r"^  (c\d+) \[shape=ellipse", dot, flags=re.MULTILINE)
    edges = re.findall(r"^  (n\d+) -> ([nc]\d+) \[label=(yes|no)\];", dot, flags=re.MULTILINE)
    nodes = np.flatnonzero(diagram.reachable())
    assert boxes == [f"n{i}" for i in nodes]
    expected_edges = [(f"n{i}", s) for i in nodes for s in (diagram.low[i], diagram.high[i])]
    named = [(a, f"n{s}" if s >= 0 else f"c{-1 - s}") for a, s in expected_edges]
    assert [(a, b) for a, b, _ in edges] == named
    assert sorted(ellipses) == sorted({b for _, b in named if b.startswith("c")})
    assert len(set(ellipses)) == len(ellipses)
    ranks = re.findall(r"\{ rank=same; ([^}]*)\}", dot)
    assert len(ranks) == len(set(diagram.layer[nodes].tolist()))


def test_to_dot_single_terminal() -> None:
    dot = Diagram.single_terminal(1, n_features=1, classes=["x", 'y"z']).to_dot()
    assert 'c1 [shape=ellipse, label="y\\"z"]' in dot and "->" not in dot


# ---------------------------------------------------------------------------- unscale
@pytest.mark.parametrize("multivariate", [False, True])
def test_unscale_maps_back_to_original_units(multivariate: bool) -> None:
    rng = np.random.default_rng(7)
    X = rng.normal(3.0, 5.0, size=(300, 3))
    X[:, 2] = 4.0  # a constant feature
    lo, hi = X.min(axis=0), X.max(axis=0)
    scaled = (X - lo) / np.where(hi > lo, hi - lo, 1.0)
    diagram = random_diagram(rng, (1, 2, 2), 3, 2, multivariate)
    diagram = diagram.replace(threshold=rng.random(5))
    original = diagram.unscale(lo, hi)
    same = original.terminal(X) == diagram.terminal(scaled)
    assert same.mean() > 0.99  # rows within rounding of a threshold may flip
    with pytest.raises(DiagramError, match="one value per feature"):
        diagram.unscale(lo[:2], hi)


# ---------------------------------------------------------------------------- validation
def build(**changes):
    args = {
        "layer": [0, 1, 1],
        "feature": [0, 1, 0],
        "threshold": [0.5, 0.5, 0.5],
        "low": [1, -1, -1],
        "high": [2, -2, -2],
        "n_features": 2,
        "classes": [0, 1],
    }
    args.update(changes)
    positional = [args.pop(k) for k in ("layer", "feature", "threshold", "low", "high")]
    return Diagram(*positional, **args)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"layer": [1, 1, 2]}, "root and must be in layer 0"),
        ({"layer": [0, 0, 1], "low": [2, -1, -1], "high": [2, -2, -2]}, "only the root"),
        ({"layer": [0, 2, 1]}, "sorted by layer"),
        ({"low": [1, 2, -1]}, "later layer"),
        ({"low": [5, -1, -1]}, "later layer"),
        ({"high": [2, -3, -2]}, "there are 2 classes"),
        ({"feature": [0, 2, 0]}, "outside"),
        ({"feature": [0, -2, 0]}, "outside"),
        ({"threshold": [0.5, np.nan, 0.5]}, "finite"),
        ({"feature": [0, -1, 0]}, "needs its hyperplane"),
        ({"feature": [0, -1, 0], "coef": np.zeros((3, 3))}, "coef must have shape"),
        ({"low": [1, -1]}, "one entry per internal node"),
        ({"feature": [0, -1], "coef": np.zeros((3, 2))}, "one entry per internal node"),
        ({"feature_names": ["a"]}, "feature_names"),
        ({"counts": np.zeros((2, 2))}, "counts must have shape"),
        ({"terminal_counts": np.zeros((3, 2))}, "terminal_counts must have shape"),
        ({"classes": []}, "non-empty"),
        ({"root": -1}, "starts at node 0"),
        ({"indicator": [4]}, "indicator"),
    ],
)
def test_constructor_errors_say_the_rule(changes: dict, message: str) -> None:
    with pytest.raises(DiagramError, match=message) as info:
        build(**changes)
    assert isinstance(info.value, SatdtError) and isinstance(info.value, ValueError)


def test_single_terminal_needs_a_class() -> None:
    with pytest.raises(DiagramError, match="single terminal"):
        Diagram([], [], [], [], [], n_features=1, classes=[0, 1])
    with pytest.raises(DiagramError, match="single terminal"):
        Diagram([], [], [], [], [], n_features=1, classes=[0, 1], root=-3)


def test_predict_checks_the_columns() -> None:
    with pytest.raises(DiagramError, match="2 columns"):
        build().predict(np.zeros((3, 3)))
