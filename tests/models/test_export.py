"""Trees that leave satdt: scikit-learn's DecisionTreeClassifier and ONNX predict as satdt does
on every row (missing values included), and scikit-learn's own tools read the export."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import ROOT, examples, random_diagram
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satdt import OptimalTreeClassifier, Tree, read_csv
from satdt.models.tree import DEFAULT_LEFT, DEFAULT_RIGHT, LEAF, MISSING_LEFT, MISSING_RIGHT

sklearn_tree = pytest.importorskip("sklearn.tree")


def _same(tree: Tree, X: np.ndarray, n_features: int | None = None) -> None:
    """The exported classifier answers as the tree on every row of ``X``."""
    model = tree.to_sklearn(n_features)
    np.testing.assert_array_equal(model.predict(X), tree.predict(X))
    np.testing.assert_array_equal(model.apply(X), tree.apply(X))
    np.testing.assert_allclose(model.predict_proba(X), tree.predict_proba(X), atol=1e-6)


def _onnx_same(tree: Tree, X: np.ndarray, n_features: int | None = None) -> None:
    runtime = pytest.importorskip("onnxruntime")
    pytest.importorskip("skl2onnx")
    session = runtime.InferenceSession(
        tree.to_onnx(n_features).SerializeToString(), providers=["CPUExecutionProvider"]
    )
    label, proba = session.run(None, {"X": X.astype(np.float32)})
    np.testing.assert_array_equal(label, tree.predict(X))
    np.testing.assert_allclose(proba, tree.predict_proba(X), atol=1e-6)


@st.composite
def trees_and_rows(draw):
    """A random tree (any sides for missing values, leaves without training weight, tied
    frequencies) and rows with missing cells, on thresholds exact in float32."""
    n_features = draw(st.integers(1, 4))
    n_classes = draw(st.integers(2, 4))
    feature, threshold, left, right, value, missing, counts = [], [], [], [], [], [], []

    def grow(depth: int) -> int:
        node = len(feature)
        for column in (feature, threshold, left, right, value, missing, counts):
            column.append(None)
        if depth == 0 or draw(st.booleans()):
            feature[node], threshold[node], left[node], right[node] = LEAF, np.nan, -1, -1
            weights = draw(
                st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=n_classes, max_size=n_classes)
            )
            # a leaf predicts one of its most frequent classes, as every tree satdt learns
            majority = np.flatnonzero(np.asarray(weights) == max(weights))
            value[node] = int(draw(st.sampled_from(majority.tolist())))
            counts[node] = weights
            missing[node] = DEFAULT_LEFT
            return node
        feature[node] = draw(st.integers(0, n_features - 1))
        threshold[node] = draw(st.sampled_from([-1.0, -0.5, 0.0, 0.25, 1.0]))
        missing[node] = draw(
            st.sampled_from([MISSING_LEFT, MISSING_RIGHT, DEFAULT_LEFT, DEFAULT_RIGHT])
        )
        value[node] = 0
        left[node] = grow(depth - 1)
        right[node] = grow(depth - 1)
        counts[node] = [0.0] * n_classes
        return node

    grow(draw(st.integers(0, 4)))
    counts = np.asarray(counts)
    for i in range(len(feature) - 1, -1, -1):  # internal nodes hold their children's weight
        if feature[i] != LEAF:
            counts[i] = counts[left[i]] + counts[right[i]]
    classes = np.asarray(draw(st.sampled_from([["a", "b", "c", "d"], [3, 5, 7, 9]]))[:n_classes])
    tree = Tree(feature, threshold, left, right, value, counts, classes, missing=missing)
    cells = st.sampled_from([np.nan, -2.0, -1.0, -0.5, -0.1, 0.0, 0.25, 0.5, 1.0, 3.0])
    rows = draw(
        st.lists(st.lists(cells, min_size=n_features, max_size=n_features), min_size=1, max_size=30)
    )
    return tree, np.asarray(rows, dtype=np.float64)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees_and_rows())
def test_random_trees_export_to_sklearn_and_onnx_unchanged(case):
    tree, X = case
    _same(tree, X, X.shape[1])
    _onnx_same(tree, X, X.shape[1])


def test_a_tie_at_a_leaf_predicts_satdt_class_in_sklearn():
    # one split, its right leaf holds 2 of each class and predicts the second
    tree = Tree(
        [0, LEAF, LEAF],
        [0.5, np.nan, np.nan],
        [1, -1, -1],
        [2, -1, -1],
        [0, 0, 1],
        np.array([[5.0, 2.0], [3.0, 0.0], [2.0, 2.0]]),
        np.array(["no", "yes"]),
    )
    X = np.array([[0.0], [1.0]])
    assert tree.to_sklearn().predict(X).tolist() == ["no", "yes"]
    _same(tree, X)
    _onnx_same(tree, X)


@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("loader", ["load_iris", "load_breast_cancer", "load_wine"])
def test_fitted_estimator_exports_equal_on_sklearn_tables(loader, missing):
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = getattr(datasets, loader)(return_X_y=True)
    if missing:
        X = X.copy()
        X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    est = OptimalTreeClassifier(objective="error", max_depth=2).fit(X, y)
    model = est.to_sklearn()
    np.testing.assert_array_equal(model.predict(X), est.predict(X))
    np.testing.assert_array_equal(model.apply(X), est.apply(X))
    np.testing.assert_allclose(model.predict_proba(X), est.predict_proba(X), atol=1e-12)
    _onnx_same(est.tree_, X, est.n_features_in_)


def test_shipped_and_shared_files_export_equal(data_dir):
    shipped = read_csv(ROOT / "examples" / "data" / "iris.csv")
    shared = np.loadtxt(data_dir / "continuous" / "raisin.txt")  # label first, then columns
    for X, y in ((shipped.X, shipped.y), (shared[:, 1:], shared[:, 0].astype(int))):
        est = OptimalTreeClassifier(objective="error", max_depth=3, time_limit=30).fit(X, y)
        np.testing.assert_array_equal(est.to_sklearn().predict(X), est.predict(X))
        np.testing.assert_array_equal(est.to_sklearn().apply(X), est.apply(X))
        _onnx_same(est.tree_, X, est.n_features_in_)


def test_sklearn_tools_read_the_export(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_iris(return_X_y=True)
    est = OptimalTreeClassifier(max_depth=4).fit(X, y)
    model = est.to_sklearn()
    names = [f"f{i}" for i in range(4)]
    text = sklearn_tree.export_text(model, feature_names=names)
    assert text.count("class:") == est.tree_.n_leaves
    dot = sklearn_tree.export_graphviz(model, feature_names=names)
    assert dot.count("->") == est.tree_.n_nodes - 1
    boxes = [a for a in sklearn_tree.plot_tree(model) if "samples =" in a.get_text()]
    assert len(boxes) == est.tree_.n_nodes
    assert boxes[0].get_text().endswith("samples = 150\nvalue = [50, 50, 50]")
    assert model.get_depth() == est.tree_.depth and model.get_n_leaves() == est.tree_.n_leaves


def test_a_tree_over_encoded_categories_says_how_to_export():
    X = np.array([["red", 1.0], ["blue", 2.0], ["red", 3.0], ["green", 0.5]], dtype=object)
    y = np.array([0, 1, 0, 1])
    est = OptimalTreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match=r"schema_\.encode"):
        est.to_sklearn()
    design = est.schema_.encode(X)
    np.testing.assert_array_equal(est.tree_.to_sklearn(est.n_features_in_).predict(design), y)


# ---------------------------------------------------------------------------- diagrams
def _diagram_onnx_same(diagram, X: np.ndarray) -> None:
    """The ONNX model of the diagram predicts its labels and probabilities on every row."""
    runtime = pytest.importorskip("onnxruntime")
    model = diagram.to_onnx()
    session = runtime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    label, proba = session.run(["label", "probabilities"], {"X": np.asarray(X, dtype=np.float64)})
    assert np.array_equal(label.astype(diagram.classes.dtype), diagram.predict(X))
    assert np.allclose(proba, diagram.predict_proba(X), rtol=0, atol=1e-12)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    widths=st.lists(st.integers(1, 3), min_size=0, max_size=3),
    multivariate=st.booleans(),
    counted=st.booleans(),
)
def test_random_diagrams_export_to_onnx_unchanged(seed, widths, multivariate, counted) -> None:
    pytest.importorskip("onnx")
    rng = np.random.default_rng(seed)
    diagram = random_diagram(rng, (1, *widths), 3, 3, multivariate, grid=4)
    X = rng.integers(-1, 6, size=(200, 3)) / 4  # on and around the thresholds' grid
    if counted:
        diagram = diagram.with_counts(X, rng.integers(3, size=len(X)))
    _diagram_onnx_same(diagram, X)


def test_a_single_terminal_diagram_exports_to_onnx() -> None:
    from satdt import Diagram

    pytest.importorskip("onnx")
    diagram = Diagram.single_terminal(1, n_features=2, classes=[3, 7])
    _diagram_onnx_same(diagram, np.zeros((5, 2)))


@pytest.mark.parametrize("route", [{"method": "maxsat"}, {"method": "tree", "alpha": 0.0}])
def test_fitted_diagram_estimator_exports_equal_on_iris(route: dict) -> None:
    from satdt import OptimalDiagramClassifier

    pytest.importorskip("onnx")
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_iris(return_X_y=True)
    model = OptimalDiagramClassifier(widths=(1, 2), time_limit=30, **route)
    model.fit(X, datasets.load_iris().target_names[y])
    _diagram_onnx_same(model.diagram_, X)
    runtime = pytest.importorskip("onnxruntime")
    session = runtime.InferenceSession(
        model.to_onnx().SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (label,) = session.run(["label"], {"X": X})
    assert list(label) == list(model.predict(X))
