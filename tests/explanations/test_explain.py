"""Formal explanations (satdt.explain) against brute force: every AXp forces the prediction
and is subset-minimal, the smallest is smallest, every CXp can flip it and is minimal, and the
two families are each other's minimal hitting sets."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest
from helpers import ROOT, examples
from hypothesis import given, settings
from hypothesis import strategies as st

from satdt import Diagram, OptimalDiagramClassifier, OptimalTreeClassifier, ParameterError, Tree
from satdt.core.errors import SatdtError
from satdt.explanations.explainer import explain, redundancy

VALUES = (0.0, 1.0, 2.0, 3.0)  # the cells of midpoint thresholds on integer columns 0..3


def _brute_force(model, x: np.ndarray) -> tuple[set[frozenset[int]], set[frozenset[int]]]:
    """Every AXp and every CXp of row ``x``, by trying every row of VALUES^p."""
    p = len(x)
    grid = np.array(list(itertools.product(VALUES, repeat=p)))
    predicted = model.predict_index(x[None, :])[0]
    others = model.predict_index(grid) != predicted

    def flips(free: frozenset[int]) -> bool:
        fixed = [j for j in range(p) if j not in free]
        same = (grid[:, fixed] == x[fixed]).all(axis=1)
        return bool((others & same).any())

    subsets = [frozenset(s) for k in range(p + 1) for s in itertools.combinations(range(p), k)]
    sufficient = [s for s in subsets if not flips(frozenset(range(p)) - s)]
    axps = {s for s in sufficient if not any(t < s for t in sufficient)}
    flipping = [s for s in subsets if flips(s)]
    cxps = {s for s in flipping if not any(t < s for t in flipping)}
    return axps, cxps


def _indices(conditions, model) -> frozenset[int]:
    names = list(model.feature_names or [f"x[{j}]" for j in range(99)])
    return frozenset(names.index(c.column) for c in conditions)


@st.composite
def small_tables(draw):
    p = draw(st.integers(1, 4))
    n = draw(st.integers(2, 12))
    X = np.array(
        draw(
            st.lists(
                st.lists(st.sampled_from(VALUES), min_size=p, max_size=p), min_size=n, max_size=n
            )
        )
    )
    y = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    return X, y, draw(st.integers(1, 3))


def _check_against_brute_force(model, X: np.ndarray) -> None:
    for explanation in explain(model, X, enumerate_axps=True):
        x = X[explanation.row]
        axps, cxps = _brute_force(model, x)
        assert explanation.complete
        assert {_indices(a, model) for a in explanation.axps} == axps
        assert {_indices(c.conditions, model) for c in explanation.cxps} == cxps
        assert _indices(explanation.axp, model) in axps
        assert len(explanation.smallest_axp) == min(map(len, axps))
        if cxps:
            assert len(explanation.smallest_cxp.columns) == min(map(len, cxps))
        # duality: each family is the minimal hitting sets of the other
        for axp in axps:
            assert all(axp & cxp for cxp in cxps)
        for cxp in cxps:
            assert all(cxp & axp for axp in axps)
        for contrast in explanation.cxps:
            assert contrast.prediction != explanation.prediction
        # the path's redundancy is measured within the path's own columns (Izza et al.)
        on_path = _indices(explanation.path, model)
        inside = [axp for axp in axps if axp <= on_path]
        assert _indices(explanation.path_axp, model) in inside
        assert len(explanation.path_axp) == min(map(len, inside))


@settings(deadline=None, max_examples=examples(60))
@given(small_tables())
def test_tree_explanations_equal_brute_force(table):
    X, y, depth = table
    model = OptimalTreeClassifier(objective="error", max_depth=depth).fit(X, y)
    _check_against_brute_force(model.tree_, X)


@settings(deadline=None, max_examples=examples(25))
@given(small_tables())
def test_a_tree_seen_as_a_diagram_has_the_same_explanations(table):
    X, y, depth = table
    tree = OptimalTreeClassifier(objective="error", max_depth=depth).fit(X, y).tree_
    diagram = Diagram.from_tree(tree, X.shape[1])
    as_tree = [e.to_dict() for e in explain(tree, X, enumerate_axps=True)]
    as_diagram = [e.to_dict() for e in explain(diagram, X, enumerate_axps=True)]
    for a, b in zip(as_tree, as_diagram, strict=True):
        for key in ("prediction", "axp", "smallest_axp", "axps"):
            assert a[key] == b[key]
        assert {frozenset(c["columns"]) for c in a["cxps"]} == {
            frozenset(c["columns"]) for c in b["cxps"]
        }


@pytest.mark.parametrize(
    "options",
    [
        {"method": "maxsat", "widths": (1, 2, 2)},
        {"method": "sat", "objective": "size", "widths": (1, 2, 2)},
        {"method": "tree", "widths": (1, 2, 4), "alpha": 0.0},
        {"method": "milp", "widths": (1, 2, 2), "milp_solver": "highs"},
    ],
    ids=lambda options: options["method"],
)
def test_diagram_routes_explanations_equal_brute_force(options):
    rng = np.random.default_rng(5)
    X = rng.choice(VALUES, size=(24, 3))
    y = ((X[:, 0] > 1) ^ (X[:, 1] > 2)).astype(int)
    model = OptimalDiagramClassifier(time_limit=20, **options).fit(X, y)
    _check_against_brute_force(model.diagram_, X)


def test_a_categorical_column_is_one_feature_with_one_value():
    X = np.array(
        [["red", 1.0], ["blue", 2.0], ["green", 1.0], ["red", 3.0], ["blue", 3.0], ["green", 2.0]],
        dtype=object,
    )
    y = np.array([1, 0, 0, 1, 1, 0])
    model = OptimalTreeClassifier(objective="error", max_depth=2).fit(
        X, y, feature_names=["colour", "size"]
    )
    for explanation in explain(model, X):
        columns = {c.column for c in explanation.path} | {c.column for c in explanation.axp}
        assert columns <= {"colour", "size"}
        for condition in explanation.smallest_axp:
            if condition.column == "colour":
                assert condition.text == f"colour = {X[explanation.row, 0]}"
    red_big = explain(model, X, rows=[3])[0]  # predicted 1 by colour alone or by size
    assert red_big.prediction == 1
    assert all(c.prediction == 0 for c in red_big.cxps)


def test_missing_values_are_a_value_where_the_tree_learned_their_side():
    X = np.array([[0.0, 0], [1, 0], [np.nan, 1], [np.nan, 1], [2, 1], [3, 1], [0, 0], [np.nan, 0]])
    y = np.array([0, 0, 1, 1, 1, 1, 0, 1])
    model = OptimalTreeClassifier(objective="error", max_depth=1).fit(X, y)
    (explanation,) = explain(model, X, rows=[2])
    assert [c.text for c in explanation.path] == ["x0 > 1.5 or missing"]
    assert [c.text for c in explanation.axp] == ["x0 is missing"]
    assert [str(c) for c in explanation.cxps] == ["x0 <= 1.5 -> 0"]


def test_a_single_leaf_needs_nothing():
    model = OptimalTreeClassifier().fit([[0.0], [1.0]], [1, 1])
    (explanation,) = explain(model, [[0.0]])
    assert explanation.axp == explanation.smallest_axp == ()
    assert explanation.cxps == ()
    assert explanation.redundancy == 0.0


def test_redundancy_summary_and_json(tmp_path):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    model = OptimalTreeClassifier(objective="error", max_depth=3).fit(X, y)
    explanations = explain(model, X)
    summary = redundancy(explanations)
    assert summary["rows"] == 150
    assert 0 < summary["redundant_rows"] <= 1  # paths of optimal trees hold needless tests
    assert summary["mean_smallest_axp"] < summary["mean_path_columns"]
    json.dumps([e.to_dict() for e in explanations])


def test_bad_arguments_are_refused_with_the_rule():
    model = OptimalTreeClassifier().fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(ParameterError, match="row 5 is not a row of X"):
        explain(model, [[0.0]], rows=[5])
    with pytest.raises(ParameterError, match="limit must be an integer >= 1"):
        explain(model, [[0.0]], limit=0)


def test_a_tree_of_the_user_is_explained_on_its_own_columns():
    tree = Tree.from_nested((0, 0.5, 0, (1, 0.5, 1, 0)), classes=np.array(["no", "yes"]))
    (explanation,) = explain(tree, [[1.0, 1.0]])
    assert explanation.prediction == "no"
    # the path tests both columns; x[1] > 0.5 alone forces "no" (Izza et al.'s redundancy)
    assert [c.text for c in explanation.path] == ["x[0] > 0.5", "x[1] > 0.5"]
    assert [c.text for c in explanation.smallest_axp] == ["x[1] > 0.5"]
    assert explanation.redundancy == 0.5
    assert [str(c) for c in explanation.cxps] == ["x[1] <= 0.5 -> yes"]


def test_cli_explains_a_saved_model(tmp_path, capsys):
    from satdt.cli import main

    iris = ROOT / "examples" / "data" / "iris.csv"
    saved = tmp_path / "model.json"
    assert main(["fit", str(iris), "--max-depth", "3", "--save", str(saved), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["explain", str(saved), str(iris), "--rows", "0,70-71"]) == 0
    out = capsys.readouterr().out
    assert out.count("smallest AXp:") == 3 and "CXp:" in out and out.startswith("row 0:")
    assert "paths: 3 rows" in out
    assert main(["explain", str(saved), str(iris), "--format", "json", "--all-axps"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert len(document["explanations"]) == 150 and document["summary"]["rows"] == 150
    assert all(e["axps"] and e["complete"] for e in document["explanations"])
    with pytest.raises(SystemExit) as usage:  # argparse's own usage error
        main(["explain", str(saved), str(iris), "--rows", "x"])
    assert usage.value.code == 2 and "0,3,5-7" in capsys.readouterr().err
    assert main(["explain", str(saved), str(iris), "--rows", "500"]) == 2
    assert "row 500 is not a row of X" in capsys.readouterr().err


def test_a_path_that_is_an_axp_is_not_redundant_even_when_a_smaller_axp_leaves_it():
    tree = Tree.from_nested((0, 0.5, (1, 0.5, 0, 1), (2, 0.5, 0, 1)), classes=np.array([0, 1]))
    (explanation,) = explain(tree, [[0.0, 1.0, 1.0]], enumerate_axps=True)
    assert [str(c) for c in explanation.smallest_axp] == ["x[1] > 0.5", "x[2] > 0.5"]
    assert [str(c) for c in explanation.path_axp] == ["x[0] <= 0.5", "x[1] > 0.5"]
    assert explanation.redundancy == 0.0


def _marked(ax) -> dict[str, str]:
    """Box gid -> role, read back from the patches' gids (satdt-mark-<role>-<box gid>)."""
    found = {}
    for patch in ax.patches:
        gid = patch.get_gid() or ""
        match = re.fullmatch(r"satdt-mark-([a-z-]+)-((?:node|leaf|terminal)-\d+)", gid)
        if match:
            found[match.group(2)] = match.group(1)
    return found


def _walk(tree, x) -> list[int]:
    """The nodes a row visits in a tree, root to leaf."""
    node, nodes = 0, [0]
    while tree.feature[node] >= 0:
        node = (
            tree.left[node] if x[tree.feature[node]] <= tree.threshold[node] else tree.right[node]
        )
        nodes.append(int(node))
    return nodes


@pytest.mark.parametrize("show", ["smallest_axp", "axp", "path_axp"])
def test_the_drawing_marks_the_rows_path_and_the_axps_tests(show):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from satdt.plot import plot_explanation

    rng = np.random.default_rng(3)
    X = rng.choice(VALUES, size=(40, 4))
    y = ((X[:, 0] > 1) & (X[:, 1] > 0) | (X[:, 2] > 2)).astype(int)
    tree = OptimalTreeClassifier(objective="error", max_depth=3).fit(X, y).tree_
    for explanation in explain(tree, X, rows=range(0, 40, 7)):
        nodes = _walk(tree, X[explanation.row])
        assert list(explanation.nodes) == nodes
        ax = plot_explanation(tree, explanation, show=show)
        columns = {c.column for c in getattr(explanation, show)}
        expected = {
            f"node-{n}": "explanation" if tree.feature_names[tree.feature[n]] in columns else "path"
            for n in nodes[:-1]
        }
        expected[f"leaf-{nodes[-1]}"] = "leaf"
        assert _marked(ax) == expected
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert "the prediction" in legend
        matplotlib.pyplot.close(ax.figure)


def test_the_drawing_of_a_cxp_marks_the_path_to_the_other_class():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from satdt.plot import plot_explanation

    tree = Tree.from_nested((0, 0.5, (1, 0.5, 0, 1), (2, 0.5, 0, 1)), classes=np.array([0, 1]))
    (explanation,) = explain(tree, [[0.0, 1.0, 1.0]])  # path 0 -> 1 -> 3 (class 1)
    assert explanation.nodes == (0, 1, 3)
    assert [list(c.columns) for c in explanation.cxps] == [["x[1]"], ["x[0]", "x[2]"]]
    assert [c.nodes for c in explanation.cxps] == [(0, 1, 2), (0, 4, 5)]
    ax = plot_explanation(tree, explanation, show="cxp")
    assert _marked(ax) == {
        "node-0": "path",
        "node-1": "explanation",
        "leaf-3": "leaf",
        "leaf-2": "contrast-leaf",
    }
    ax = plot_explanation(tree, explanation, show="cxp", contrast=1)
    assert _marked(ax) == {
        "node-0": "explanation",
        "node-1": "path",
        "leaf-3": "leaf",
        "node-4": "contrast",
        "leaf-5": "contrast-leaf",
    }
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[0] == "tests to change (the CXp)" and "the path the change follows" in legend
    matplotlib.pyplot.close("all")
    with pytest.raises(ParameterError, match="contrast must index one of the row's 2 CXps"):
        plot_explanation(tree, explanation, show="cxp", contrast=3)
    with pytest.raises(ParameterError, match="show must be one of"):
        plot_explanation(tree, explanation, show="best")
    other = Tree.from_nested((2, 0.5, 0, 1), classes=np.array([0, 1]))
    with pytest.raises(SatdtError, match="not a path of the model drawn"):
        plot_explanation(other, explanation)


def test_a_diagrams_explanation_is_drawn_on_its_nodes_and_terminals(tmp_path):
    pytest.importorskip("matplotlib")
    from satdt.plot import save_explanation

    rng = np.random.default_rng(5)
    X = rng.choice(VALUES, size=(24, 3))
    y = ((X[:, 0] > 1) ^ (X[:, 1] > 2)).astype(int)
    diagram = OptimalDiagramClassifier(method="maxsat", widths=(1, 2, 2), time_limit=20)
    diagram = diagram.fit(X, y).diagram_
    (explanation,) = explain(diagram, X, rows=[0])
    assert explanation.nodes[0] == diagram.root and explanation.nodes[-1] < 0
    target = tmp_path / "row0.svg"
    save_explanation(diagram, explanation, target, show="cxp")
    svg = target.read_text()
    k = -1 - explanation.nodes[-1]
    assert f'id="satdt-mark-leaf-terminal-{k}"' in svg
    for node in explanation.nodes[:-1]:
        assert re.search(rf'id="satdt-mark-(explanation|path)-node-{node}"', svg)
    assert "CXp:" in svg


def test_cli_draws_an_explanation(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from satdt.cli import main

    iris = ROOT / "examples" / "data" / "iris.csv"
    saved = tmp_path / "model.json"
    assert main(["fit", str(iris), "--max-depth", "3", "--save", str(saved), "--quiet"]) == 0
    one = tmp_path / "one.svg"
    assert main(["explain", str(saved), str(iris), "--rows", "70", "--draw", str(one)]) == 0
    assert "satdt-mark-leaf-leaf-" in one.read_text()
    several = tmp_path / "rows.png"
    args = ["explain", str(saved), str(iris), "--rows", "0,70", "--draw", str(several)]
    assert main([*args, "--show", "cxp"]) == 0
    assert (tmp_path / "rows-row0.png").exists() and (tmp_path / "rows-row70.png").exists()
    capsys.readouterr()
    assert main(["explain", str(saved), str(iris), "--rows", "0", "--draw", "x.bad"]) == 2
    assert "--draw cannot write a .bad file" in capsys.readouterr().err


def test_berge_and_hitman_enumerate_the_same_axps(monkeypatch):
    from sklearn.datasets import load_iris

    import satdt.explanations.hitting as explanations

    X, y = load_iris(return_X_y=True)
    tree = OptimalTreeClassifier(objective="error", max_depth=4).fit(X, y).tree_
    by_berge = explain(tree, X, enumerate_axps=True)
    monkeypatch.setattr(explanations, "BERGE_MAX_SETS", 0)  # every step too large: Hitman
    by_hitman = explain(tree, X, enumerate_axps=True)
    assert any(len(e.axps) > 1 for e in by_berge)
    for a, b in zip(by_berge, by_hitman, strict=True):
        assert a.smallest_axp == b.smallest_axp == a.axps[0] == b.axps[0]
        assert set(a.axps) == set(b.axps) and a.complete and b.complete
        assert [len(axp) for axp in a.axps] == sorted(len(axp) for axp in a.axps)
    row = next(e.row for e in by_berge if len(e.axps) > 1)
    for setting in (20_000, 0):
        monkeypatch.setattr(explanations, "BERGE_MAX_SETS", setting)
        (cut,) = explain(tree, X, rows=[row], enumerate_axps=True, limit=1)
        assert cut.axps == (cut.smallest_axp,) and not cut.complete
