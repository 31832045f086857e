"""Model files as untrusted input: files written by earlier versions load and predict as they
did; a damaged or edited file (a cycle, NaN, an index of 10**9, a newer version, a field of
the wrong type) is refused with one clean error, fast, never a hang nor a traceback; the
command line exits 2 with one line."""

from __future__ import annotations

import copy
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import FIXTURES, ROOT, examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satdt.cli import main
from satdt.core.errors import ModelError, SatdtError
from satdt.data import read_with_schema
from satdt.models import Diagram, Tree
from satdt.models.fields import NewerFormatError
from satdt.models.files import load_model, model_dict, read_model_dict

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it

MODEL_FILES = FIXTURES / "models"
EXAMPLES = ROOT / "examples" / "data"
# Written by satdt before the models shared a base: each file, its data, what it predicted.
EXPECTED = json.loads((MODEL_FILES / "expected.json").read_text(encoding="utf-8"))
SECOND = 1.0  # "no hang": generous on a loaded machine, each load is milliseconds


def _document(name: str) -> dict[str, Any]:
    return json.loads((MODEL_FILES / name).read_text(encoding="utf-8"))


def _data(name: str) -> Path:
    data = EXPECTED[name]["data"]
    return MODEL_FILES / data if (MODEL_FILES / data).exists() else EXAMPLES / data


def _tree_dict() -> dict[str, Any]:
    """The tree of ``tree-mouse.json`` (node 0 splits; nodes 1 and 3 are internal)."""
    return _document("tree-mouse.json")["model"]


# ---------------------------------------------------------------------- files of earlier versions
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_files_written_before_load_and_predict_as_they_did(name):
    model, schema = load_model(MODEL_FILES / name)
    X = read_with_schema(_data(name), schema).X
    assert model.predict(X).tolist() == EXPECTED[name]["predict"]
    np.testing.assert_array_equal(model.predict_proba(X), EXPECTED[name]["proba"])
    # ... and write the same model back
    assert model_dict(model, schema)["model"] == _document(name)["model"]


def test_version_1_files_hold_a_tree():
    document = _document("tree-mouse.json")
    old = {k: v for k, v in document.items() if k not in ("kind", "model")}
    old.update(version=1, tree=document["model"])
    model, _ = read_model_dict(old, "old.json")
    assert model == read_model_dict(document)[0]
    del old["tree"]
    with pytest.raises(ModelError, match=r"old\.json: a satdt tree is a JSON object"):
        read_model_dict(old, "old.json")


# ---------------------------------------------------------------------- one rule each
def _set(key: str, index: int, value: Any):
    def change(tree: dict[str, Any]) -> None:
        tree[key][index] = value

    return change


def _extra_leaf(tree: dict[str, Any]) -> None:
    for key in ("feature", "left", "right", "value", "missing"):
        tree[key].append(-1 if key != "missing" else 2)
    tree["threshold"].append(None)
    tree["counts"].append([0.0, 0.0])
    tree["value"][-1] = 0


def _two_children_the_same(tree: dict[str, Any]) -> None:
    tree["right"][0] = tree["left"][0]


def _drop(key: str):
    def change(tree: dict[str, Any]) -> None:
        del tree[key]

    return change


def _replace(key: str, value: Any):
    def change(tree: dict[str, Any]) -> None:
        tree[key] = value

    return change


TREE_DAMAGE = {
    "child is an ancestor": (_set("left", 3, 0), "node 3's left child is 0, an ancestor"),
    "child is the node": (_set("left", 1, 1), "the node itself"),
    "child comes before": (_set("right", 3, 2), "comes before it"),
    "child far away": (_set("left", 0, 10**9), "outside the tree's nodes 0 to 18"),
    "child of a leaf": (_set("left", 2, 5), "a leaf's children are -1"),
    "two parents": (_two_children_the_same, "node 1 is the child of node 0 twice"),
    "no parent": (_extra_leaf, "node 19 is the child of no node"),
    "NaN threshold": (_set("threshold", 0, math.nan), "threshold nan"),
    "-inf threshold": (_set("threshold", 0, -math.inf), "threshold -inf"),
    "threshold as text": (_set("threshold", 0, "nan"), r"'threshold\[0\]' must be a number"),
    "class beyond the classes": (_set("value", 2, 2), "predicts class index 2"),
    "column beyond the names": (_set("feature", 0, 5), "tests feature 5, but the tree names 5"),
    "feature below -1": (_set("feature", 0, -3), "tests feature -3"),
    "missing side": (_set("missing", 0, 7), "sends missing values to side 7"),
    "missing beyond int8": (_set("missing", 0, 300), r"'missing\[0\]' must be an integer"),
    "negative counts": (_set("counts", 0, [-1.0, 70.0]), "finite numbers >= 0"),
    "counts of other classes": (_replace("classes", [0]), "1 numbers, one per class"),
    "no classes": (_replace("classes", []), "at least one class"),
    "the same class twice": (_replace("classes", [0, 0]), "distinct"),
    "classes of two kinds": (_replace("classes", [0, "1"]), "one kind"),
    "huge class label": (_replace("classes", [0, 10**30]), "within 64 bits"),
    "a field dropped": (_drop("left"), "has no field 'left'"),
    "a list as text": (_replace("right", "[1, 2]"), "'right' must be a list"),
    "boolean indices": (_set("left", 0, True), r"'left\[0\]' must be an integer"),
    "integer beyond 64 bits": (_set("left", 0, 2**70), r"'left\[0\]' must be an integer"),
    "a newer version": (_replace("version", 2), "newer satdt .*version 2"),
    "another format": (_replace("format", "satdt-forest"), "not a satdt tree"),
    "no nodes": (
        lambda t: t.update({k: [] for k in t if isinstance(t[k], list) and k != "classes"}),
        "at least one node",
    ),
}


@pytest.mark.parametrize("case", sorted(TREE_DAMAGE))
def test_a_damaged_tree_is_refused_with_the_rule(case):
    damage, message = TREE_DAMAGE[case]
    tree = _tree_dict()
    assert Tree.from_dict(copy.deepcopy(tree)) is not None  # the file itself is fine
    damage(tree)
    started = time.perf_counter()
    with pytest.raises(ModelError, match=message):
        Tree.from_dict(tree)
    assert time.perf_counter() - started < SECOND


def test_a_newer_tree_says_upgrade_not_damaged():
    tree = _tree_dict()
    tree["version"] = 5
    with pytest.raises(NewerFormatError, match="upgrade satdt"):
        Tree.from_dict(tree)


def test_from_json_refuses_text_that_is_not_a_tree():
    with pytest.raises(ModelError, match="not valid JSON"):
        Tree.from_json('{"format": "satdt-tree"')
    with pytest.raises(ModelError, match="not valid JSON"):
        Diagram.from_json("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ModelError, match="JSON object of fields; got a list"):
        Tree.from_json("[1, 2]")


def test_a_tree_built_in_code_is_checked_on_request():
    tree = Tree.from_nested((0, 0.5, 0, (1, 0.5, 1, 0)), [0, 1])
    tree.check()  # the tree of from_nested follows every rule
    tree.right[2] = 0
    with pytest.raises(ModelError, match="node 2's right child is 0, an ancestor"):
        tree.check()


def _diagram_dict() -> dict[str, Any]:
    return _document("diagram-multivariate.json")["model"]


DIAGRAM_DAMAGE = {
    "arc to an earlier layer": (_set("low", 2, 1), "later layer"),
    "arc to itself": (_set("high", 1, 1), "later layer"),
    "terminal beyond the classes": (_set("high", 0, -9), "there are 3 classes"),
    "NaN threshold": (_set("threshold", 1, math.nan), "finite"),
    "threshold as text": (_set("threshold", 1, "0.5"), "must be a number"),
    "a huge layer": (_set("layer", -1, 10**15), "layers are numbered up to"),
    "ragged hyperplanes": (_set("coef", 1, [1.0]), r"'coef\[1\]' must be a list of 4 numbers"),
    "negative counts": (_replace("terminal_counts", [[-1.0] * 3] * 3), "finite numbers >= 0"),
    "counts of other classes": (_replace("terminal_counts", [[1.0]]), "list of 3 rows"),
    "a newer version": (_replace("version", 3), "newer satdt"),
    "root elsewhere": (_replace("root", 2), "starts at node 0"),
}


@pytest.mark.parametrize("case", sorted(DIAGRAM_DAMAGE))
def test_a_damaged_diagram_is_refused_with_the_rule(case):
    damage, message = DIAGRAM_DAMAGE[case]
    diagram = _diagram_dict()
    assert Diagram.from_dict(copy.deepcopy(diagram)).multivariate
    damage(diagram)
    with pytest.raises(ModelError, match=message):
        Diagram.from_dict(diagram)


# ---------------------------------------------------------------------- sizes declared, not held
def test_a_huge_declared_size_is_refused_before_it_is_allocated(tmp_path):
    # a diagram of 10**9 columns in a file of 300 bytes: its hyperplane's row says otherwise
    small = {
        "format": "satdt-diagram",
        "version": 1,
        "classes": [0, 1],
        "n_features": 10**9,
        "root": 0,
        "layer": [0],
        "feature": [-1],
        "threshold": [0.5],
        "low": [-1],
        "high": [-2],
        "coef": [[1.0, 2.0]],
    }
    started = time.perf_counter()
    with pytest.raises(ModelError, match="must be a list of 1000000000 numbers"):
        Diagram.from_dict(small)
    # as a model file, the schema's two columns refuse the 10**9 of a univariate diagram
    small.update(feature=[0], coef=None)
    document = _document("diagram-iris.json")
    document["model"] = small
    path = tmp_path / "small.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ModelError, match="reads 1000000000 columns, but the data has 4"):
        load_model(path)
    assert time.perf_counter() - started < SECOND


def test_the_model_and_the_schema_must_agree():
    document = _document("tree-shapes.json")
    document["model"]["feature_names"][0] = "height"
    with pytest.raises(ModelError, match="names the columns"):
        read_model_dict(document, "shapes.json")


# ---------------------------------------------------------------------- mutations of valid files
SEEDS = {
    "tree": _document("tree-mouse.json"),
    "tree with missing sides and categories": _document("tree-shapes.json"),
    "diagram with counts": _document("diagram-iris.json"),
    "multivariate diagram without counts": _document("diagram-multivariate.json"),
}
# The arrays of node indices and codes, where an edit makes cycles, orphans and two parents.
INDEX_ARRAYS = ("left", "right", "low", "high", "value", "feature", "layer", "missing")
ODD_VALUES = st.one_of(
    st.sampled_from(
        [None, True, False, "x", "inf", "nan", "", math.nan, math.inf, -math.inf, 0, -1, 1, 2]
    ),
    st.sampled_from([10**9, -(10**9), 2**63, 10**30, 1e308, 0.5, -2.5, [], {}, [0, 1], [[]]]),
    st.integers(-5, 25),  # node indices, in range and out, ancestors among them
    st.builds(lambda n: [0] * n, st.sampled_from([1, 1000, 200_000])),  # huge arrays
    st.builds(lambda n: [[1.0, 0.0]] * n, st.sampled_from([3, 100_000])),
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON document (the document itself excluded; not inside a huge list
    an earlier edit put there)."""
    if isinstance(value, dict):
        children = list(value.items())
    elif isinstance(value, list) and len(value) <= 1000:
        children = list(enumerate(value))
    else:
        return []
    found = []
    for key, child in children:
        found.append((*prefix, key))
        found += _paths(child, (*prefix, key))
    return found


@st.composite
def damaged_documents(draw) -> dict[str, Any]:
    """A valid model file's document with one to three random edits."""
    document = copy.deepcopy(SEEDS[draw(st.sampled_from(sorted(SEEDS)))])
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(document)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        edit = draw(
            st.sampled_from(["drop", "duplicate", "set", "as text", "wrap", "version", "index"])
        )
        body = document.get("model")
        arrays = [k for k in INDEX_ARRAYS if isinstance(body, dict) and body.get(k)]
        if edit == "index" and arrays:  # a node pointing elsewhere: cycles, two parents, ...
            array = body[draw(st.sampled_from(arrays))]
            if isinstance(array, list):
                position = draw(st.integers(0, len(array) - 1))
                array[position] = draw(st.integers(-4, len(array) + 2))
        elif edit == "drop":
            del parent[key]
        elif edit == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif edit == "as text":
            parent[key] = json.dumps(parent[key])
        elif edit == "wrap":
            parent[key] = [parent[key]]
        elif edit == "version":
            target = draw(st.sampled_from([document, body if isinstance(body, dict) else {}]))
            field = draw(st.sampled_from(["version", "kind", "format"]))
            target[field] = draw(st.sampled_from([0, 1, 2, 3, 999, "2", "tree", "diagram", None]))
        else:
            parent[key] = draw(ODD_VALUES)
    return document


def _loads_cleanly_or_is_refused(document: dict[str, Any], path: Path) -> None:
    """Either the file loads into a model that keeps its own rules and predicts, or it is
    refused with a SatdtError; in under a second either way."""
    path.write_text(json.dumps(document), encoding="utf-8")
    started = time.perf_counter()
    try:
        model, schema = load_model(path)
    except SatdtError:
        assert time.perf_counter() - started < SECOND
        return
    model.check()
    width = len(schema.feature_names)
    X = np.random.default_rng(0).normal(0.0, 50.0, size=(8, width))
    X[::3, : max(width // 2, 1)] = np.nan
    assert model.predict(X).shape == (8,)
    assert np.allclose(model.predict_proba(X).sum(axis=1), 1.0)
    assert model.decision_path(X).shape[0] == 8
    assert type(model).from_dict(json.loads(model.to_json())) == model
    assert time.perf_counter() - started < SECOND


FUZZ = settings(
    deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


@settings(FUZZ, max_examples=examples(50))
@given(damaged_documents())
def test_damaged_files_load_cleanly_or_are_refused(tmp_path, document):
    _loads_cleanly_or_is_refused(document, tmp_path / "model.json")


@pytest.mark.slow
@settings(FUZZ, max_examples=examples(1000))
@given(damaged_documents())
def test_a_thousand_damaged_files_load_cleanly_or_are_refused(tmp_path, document):
    _loads_cleanly_or_is_refused(document, tmp_path / "model.json")


# ---------------------------------------------------------------------- the command line
def _write_damaged(path: Path, case: str) -> None:
    document = _document("tree-mouse.json")
    tree = document["model"]
    if case == "cycle":
        tree["left"][3] = 0
    elif case == "NaN threshold":
        tree["threshold"][0] = math.nan
    elif case == "index 10**9":
        tree["left"][0] = 10**9
    elif case == "newer version":
        document["version"] = 999
    elif case == "kind":
        document["kind"] = "forest"
    elif case == "classes":
        tree["classes"] = [0, 1, 2]
    elif case == "schema":
        document["schema"]["feature_names"] = ["A"]
    if case == "not JSON":
        path.write_text("{ this is not json")
    elif case == "nested too deeply":
        path.write_text("[" * 200_000 + "]" * 200_000)
    else:
        path.write_text(json.dumps(document))


BAD_FILES = {
    "cycle": "an ancestor",
    "NaN threshold": "threshold nan",
    "index 10**9": "outside the tree's nodes",
    "newer version": "version 999",
    "kind": "forest",
    "classes": "one per class",
    "schema": "schema",
    "not JSON": "not valid JSON",
    "nested too deeply": "nested too deeply",
}


@pytest.mark.parametrize("command", ["predict", "explain"])
@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_the_command_line_refuses_a_bad_model_file_in_one_line(capsys, tmp_path, command, case):
    model = tmp_path / "bad.json"
    _write_damaged(model, case)
    started = time.perf_counter()
    code = main([command, str(model), str(EXAMPLES / "mouse.csv")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("satdt: error:"), err
    assert "Traceback" not in err and BAD_FILES[case] in err
    assert time.perf_counter() - started < 5 * SECOND
