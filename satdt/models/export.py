"""Models that leave satdt: a fitted scikit-learn ``DecisionTreeClassifier`` and ONNX.

A satdt :class:`~satdt.Tree` already uses scikit-learn's orientation (``x[f] <= t``
goes left, a per-node side for missing values); :func:`to_sklearn` writes its nodes into the
arrays of ``sklearn.tree._tree.Tree`` (leaves ``-1`` children and feature ``-2``, class
frequencies per node, the side of missing values in ``missing_go_to_left``), so that
scikit-learn's own ``predict``, ``predict_proba``, ``apply``, ``plot_tree``,
``export_graphviz``, ``export_text``, SHAP's tree explainer and skl2onnx read it as one of
their own. :func:`to_onnx` converts that classifier with skl2onnx and completes what the
converter leaves out (where missing values go; thresholds rounded down to float32, the
precision ONNX and scikit-learn compare in).

scikit-learn compares ``float32(x) <= t``: a value within float32 rounding of a threshold
(about 6e-8 relative) may take the other branch than in satdt, which compares in float64;
satdt's thresholds lie midway between training values, so training rows never do.

A :class:`~satdt.Diagram` (a DAG, with hyperplanes when multivariate) has no scikit-learn
counterpart; :func:`diagram_to_onnx` writes it as an ONNX graph of standard operators.

scikit-learn, skl2onnx, onnx and onnxruntime are optional (the ``export`` extra), imported here
only.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import SatdtError
from .base import LEAF
from .tree_arrays import MISSING_RIGHT

if TYPE_CHECKING:
    from .diagram import Diagram
    from .tree import Tree

# scikit-learn's markers for a leaf's children and feature
_SKLEARN_LEAF, _SKLEARN_UNDEFINED = -1, -2
# added to a leaf's predicted class where its training frequencies tie with another class
# that scikit-learn's argmax would pick first (large enough to count in ONNX's float32)
_TIE_BREAK = 1e-6


def _optional(module: str, what: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise SatdtError(
            f"{what} needs the optional package {module.split('.')[0]!r}: "
            "pip install 'satdt[export]'"
        ) from None


def to_sklearn(tree: Tree, n_features: int | None = None) -> Any:
    """A fitted ``sklearn.tree.DecisionTreeClassifier`` that predicts as ``tree`` does.

    Parameters
    ----------
    tree : Tree
        A satdt tree over a design matrix.
    n_features : int, optional
        Columns of the design matrix (default: as many as ``tree.feature_names``, else the
        highest feature the tree tests plus one).

    Returns
    -------
    sklearn.tree.DecisionTreeClassifier
        Its ``predict``, ``predict_proba`` and ``apply`` (node ids are the same) equal the
        tree's on every row (see the module notes on float32); ``classes_`` are the tree's
        labels. Nodes hold the training class weights of ``tree.counts``.
    """
    tree_module = _optional("sklearn.tree._tree", "to_sklearn")
    sklearn_tree = _optional("sklearn.tree", "to_sklearn")
    if n_features is None:
        tested = int(tree.feature.max(initial=-1)) + 1
        n_features = len(tree.feature_names) if tree.feature_names is not None else tested
    if int(tree.feature.max(initial=-1)) >= n_features:
        raise SatdtError(
            f"the tree tests feature {int(tree.feature.max())} but n_features={n_features}: "
            "pass the number of columns of the design matrix"
        )
    n = tree.n_nodes
    leaf = tree.feature == LEAF
    nodes = np.zeros(n, dtype=tree_module.NODE_DTYPE)
    nodes["left_child"] = np.where(leaf, _SKLEARN_LEAF, tree.left)
    nodes["right_child"] = np.where(leaf, _SKLEARN_LEAF, tree.right)
    nodes["feature"] = np.where(leaf, _SKLEARN_UNDEFINED, tree.feature)
    nodes["threshold"] = np.where(leaf, float(_SKLEARN_UNDEFINED), tree.threshold)
    weight = tree.counts.sum(axis=1)
    nodes["weighted_n_node_samples"] = weight
    nodes["n_node_samples"] = np.maximum(np.rint(weight), 0).astype(np.int64)
    if "missing_go_to_left" in nodes.dtype.names:
        nodes["missing_go_to_left"] = np.where(leaf, 0, (tree.missing & 1) == 0)
    elif (~leaf & (tree.missing == MISSING_RIGHT)).any():
        raise SatdtError("missing values need scikit-learn >= 1.3 to export: upgrade it")
    frequencies = _frequencies(tree)
    with np.errstate(invalid="ignore"):
        nodes["impurity"] = 1.0 - (frequencies**2).sum(axis=1)
    values = frequencies[:, None, :]
    structure = tree_module.Tree(n_features, np.array([tree.n_classes], dtype=np.intp), 1)
    structure.__setstate__(
        {"max_depth": tree.depth, "node_count": n, "nodes": nodes, "values": values}
    )
    model = sklearn_tree.DecisionTreeClassifier(max_depth=max(tree.depth, 1))
    model.n_features_in_ = n_features
    model.n_outputs_ = 1
    model.classes_ = np.asarray(tree.classes)
    model.n_classes_ = tree.n_classes
    model.max_features_ = n_features
    model.tree_ = structure
    return model


def _frequencies(tree: Tree) -> np.ndarray:
    """Each node's training class frequencies (satdt's ``predict_proba`` at that node), with
    the node's own class made the first maximum where frequencies tie, so that scikit-learn's
    argmax predicts what satdt does."""
    frequencies = tree.frequencies()
    leaves = np.flatnonzero(tree.feature == LEAF)
    wrong = leaves[frequencies[leaves].argmax(axis=1) != tree.value[leaves]]
    frequencies[wrong, tree.value[wrong]] = frequencies[wrong].max(axis=1) + _TIE_BREAK
    frequencies[wrong] /= frequencies[wrong].sum(axis=1, keepdims=True)
    return frequencies


def to_onnx(tree: Tree, n_features: int | None = None) -> Any:
    """The tree as an ONNX model, for onnxruntime and any ONNX-ML runtime.

    Converted by skl2onnx from :func:`to_sklearn`'s classifier; the side of missing values
    (``nodes_missing_value_tracks_true``), which the converter leaves out, is filled in, and
    each threshold is rounded down to float32 so that ONNX decides exactly as scikit-learn.

    Parameters
    ----------
    tree : Tree
        A satdt tree over a design matrix.
    n_features : int, optional
        Columns of the design matrix, as for :func:`to_sklearn`.

    Returns
    -------
    onnx.ModelProto
        The model: input ``X`` (float32, one row per sample), outputs ``label`` and
        ``probabilities`` (one column per class, no ZipMap).
    """
    skl2onnx = _optional("skl2onnx", "to_onnx")
    data_types = _optional("skl2onnx.common.data_types", "to_onnx")
    model = to_sklearn(tree, n_features)
    onnx_model = skl2onnx.to_onnx(
        model,
        initial_types=[("X", data_types.FloatTensorType([None, model.n_features_in_]))],
        options={id(model): {"zipmap": False}},
        target_opset={"": 17, "ai.onnx.ml": 3},
    )
    (ensemble,) = [n for n in onnx_model.graph.node if n.op_type == "TreeEnsembleClassifier"]
    _complete_ensemble(ensemble, model.tree_)
    return onnx_model


def _complete_ensemble(ensemble: Any, structure: Any) -> None:
    """Set the ONNX nodes' missing sides and float32 thresholds from scikit-learn's nodes."""
    helper = _optional("onnx.helper", "to_onnx")
    attributes = {a.name: a for a in ensemble.attribute}
    node_ids = np.asarray(attributes["nodes_nodeids"].ints)
    go_left = np.asarray(structure.missing_go_to_left, dtype=np.int64)[node_ids]
    internal = np.asarray(structure.children_left)[node_ids] != _SKLEARN_LEAF
    thresholds = np.asarray(structure.threshold)[node_ids]
    single = thresholds.astype(np.float32)
    above = single.astype(np.float64) > thresholds
    single[above] = np.nextafter(single[above], np.float32(-np.inf))
    single[~internal] = 0.0
    del attributes["nodes_values"].floats[:]
    attributes["nodes_values"].floats.extend(single.tolist())
    tracks = [int(v) for v in np.where(internal, go_left, 0)]
    if "nodes_missing_value_tracks_true" in attributes:
        del attributes["nodes_missing_value_tracks_true"].ints[:]
        attributes["nodes_missing_value_tracks_true"].ints.extend(tracks)
    else:
        ensemble.attribute.append(helper.make_attribute("nodes_missing_value_tracks_true", tracks))


# A diagram's ONNX graph holds one column per root-to-terminal path; more would be a graph
# too large to be a model anyone deploys.
MAX_DIAGRAM_PATHS = 100_000


def _diagram_paths(diagram: Diagram) -> list[tuple[list[tuple[int, bool]], int]]:
    """Every root-to-terminal path of the diagram: its ``(node, goes low)`` steps and the
    class index of its terminal."""
    paths: list[tuple[list[tuple[int, bool]], int]] = []
    stack: list[tuple[int, list[tuple[int, bool]]]] = [(diagram.root, [])]
    while stack:
        state, steps = stack.pop()
        if state < 0:
            paths.append((steps, -1 - state))
            if len(paths) > MAX_DIAGRAM_PATHS:
                raise SatdtError(
                    f"the diagram has more than {MAX_DIAGRAM_PATHS} root-to-terminal paths; "
                    "its ONNX graph (one column per path) would be too large to export"
                )
            continue
        stack.append((int(diagram.high[state]), [*steps, (state, False)]))
        stack.append((int(diagram.low[state]), [*steps, (state, True)]))
    return paths


def diagram_to_onnx(diagram: Diagram) -> Any:
    """The diagram as an ONNX model of standard operators (opset 17), for onnxruntime.

    ONNX-ML's tree ensembles hold trees, not DAGs, and no hyperplanes; so the graph tests
    every node at once and finds each row's root-to-terminal path with two matrix products.
    A node's value is its column (``Gather``) or its hyperplane ``coef @ x`` (``MatMul``), its
    test ``value <= threshold`` (``LessOrEqual``); the tests and their negations, times a 0/1
    matrix of which path takes which side of which node, count the steps of each path a row
    satisfies, and the one path a row satisfies wholly (its count equals the path's length)
    gives the terminal: its label and its training class frequencies
    (:meth:`~satdt.Diagram.predict_proba`). Everything is computed in float64, as satdt
    computes, so the ONNX model predicts exactly as the diagram does. Diagrams hold no missing
    values.

    Parameters
    ----------
    diagram : Diagram
        A satdt diagram, univariate or multivariate.

    Returns
    -------
    onnx.ModelProto
        The model: input ``X`` (float64, one row per sample, ``diagram.n_features``
        columns), outputs ``label`` (the user's labels) and ``probabilities`` (float64, one
        column per class).

    Raises
    ------
    SatdtError
        When the ONNX packages are missing, or the diagram has more than
        ``MAX_DIAGRAM_PATHS`` paths.
    """
    onnx = _optional("onnx", "Diagram.to_onnx")
    helper, numpy_helper = onnx.helper, onnx.numpy_helper
    paths = _diagram_paths(diagram)
    n_nodes, n_classes = len(diagram.feature), diagram.n_classes
    terminal_proba = np.eye(n_classes)
    if diagram.terminal_counts is not None:
        totals = diagram.terminal_counts.sum(axis=1, keepdims=True)
        frequencies = diagram.terminal_counts / np.where(totals > 0, totals, 1.0)
        terminal_proba = np.where(totals > 0, frequencies, terminal_proba)
    classes = np.asarray(diagram.classes)
    if classes.dtype.kind in "USO":
        labels = np.asarray([str(c) for c in classes], dtype=object)
    elif classes.dtype.kind in "iub":
        labels = classes.astype(np.int64)
    else:
        labels = classes.astype(np.float64)
    path_class = np.array([k for _, k in paths], dtype=np.float64)[:, None]
    constants = {
        "path_proba": terminal_proba[path_class[:, 0].astype(np.int64)],
        "path_class": path_class,
        "classes": labels,
    }
    nodes = [
        helper.make_node("MatMul", ["member", "path_proba"], ["probabilities"]),
        helper.make_node("MatMul", ["member", "path_class"], ["class_column"]),
        helper.make_node("Cast", ["class_column"], ["class_float"], to=onnx.TensorProto.INT64),
        helper.make_node("Squeeze", ["class_float", "last_axis"], ["class_index"]),
        helper.make_node("Gather", ["classes", "class_index"], ["label"]),
    ]
    constants["last_axis"] = np.array([1], dtype=np.int64)
    if n_nodes == 0 or diagram.root < 0:  # a single terminal: every row is on its one path
        constants["one_column"] = np.array([1], dtype=np.int64)
        nodes[:0] = [
            helper.make_node("Shape", ["X"], ["shape"], end=1),
            helper.make_node("Concat", ["shape", "one_column"], ["member_shape"], axis=0),
            helper.make_node(
                "ConstantOfShape",
                ["member_shape"],
                ["member"],
                value=numpy_helper.from_array(np.array([1.0])),
            ),
        ]
    else:
        steps = np.zeros((2 * n_nodes, len(paths)))
        for p, (path, _) in enumerate(paths):
            for node, low in path:
                steps[node if low else n_nodes + node, p] = 1.0
        univariate = diagram.feature != LEAF
        constants |= {
            "columns": np.where(univariate, diagram.feature, 0).astype(np.int64),
            "thresholds": diagram.threshold[None, :].astype(np.float64),
            "steps": steps,
            "lengths": steps.sum(axis=0, keepdims=True),
            "one": np.array(1.0),
        }
        values = [helper.make_node("Gather", ["X", "columns"], ["values"], axis=1)]
        if diagram.coef is not None:
            constants |= {
                "hyperplanes": diagram.coef.T.astype(np.float64),
                "multivariate": ~univariate[None, :],
            }
            values = [
                helper.make_node("Gather", ["X", "columns"], ["column_values"], axis=1),
                helper.make_node("MatMul", ["X", "hyperplanes"], ["plane_values"]),
                helper.make_node(
                    "Where", ["multivariate", "plane_values", "column_values"], ["values"]
                ),
            ]
        nodes[:0] = [
            *values,
            helper.make_node("LessOrEqual", ["values", "thresholds"], ["holds"]),
            helper.make_node("Cast", ["holds"], ["low"], to=onnx.TensorProto.DOUBLE),
            helper.make_node("Sub", ["one", "low"], ["high"]),
            helper.make_node("Concat", ["low", "high"], ["sides"], axis=1),
            helper.make_node("MatMul", ["sides", "steps"], ["steps_taken"]),
            helper.make_node("Equal", ["steps_taken", "lengths"], ["on_path"]),
            helper.make_node("Cast", ["on_path"], ["member"], to=onnx.TensorProto.DOUBLE),
        ]
    label_type = {"O": onnx.TensorProto.STRING, "i": onnx.TensorProto.INT64}.get(
        labels.dtype.kind, onnx.TensorProto.DOUBLE
    )
    graph = helper.make_graph(
        nodes,
        "satdt_diagram",
        [helper.make_tensor_value_info("X", onnx.TensorProto.DOUBLE, [None, diagram.n_features])],
        [
            helper.make_tensor_value_info("label", label_type, [None]),
            helper.make_tensor_value_info(
                "probabilities", onnx.TensorProto.DOUBLE, [None, n_classes]
            ),
        ],
        initializer=[numpy_helper.from_array(np.asarray(v), name) for name, v in constants.items()],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="satdt"
    )
    onnx.checker.check_model(model)
    return model
