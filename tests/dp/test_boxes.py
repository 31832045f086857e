"""The box DP (satdt.dp.boxes): brute force, agreement with SAT, bounds, clock and auto's choice."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_consistent_depth, min_consistent_leaves

from satdt import OptimalTreeClassifier, read_csv
from satdt.cli import main
from satdt.core.errors import DataError, InfeasibleError, NotProvenWarning, TimeUp
from satdt.dp.boxes import BoxGrid, box_count, solve_consistent
from satdt.dp.boxes import pareto_front as box_front
from satdt.prepare.prepared import prepare_consistent
from satdt.search.auto import choose_method
from satdt.task.result import Recorder


@st.composite
def consistent_numeric_data(draw, max_rows: int = 9, max_columns: int = 3, max_values: int = 4):
    """Tiny data over small integer values; identical rows share one label."""
    p = draw(st.integers(1, max_columns))
    n = draw(st.integers(1, max_rows))
    n_classes = draw(st.integers(2, 3))
    rows = draw(
        st.lists(
            st.lists(st.integers(0, max_values - 1), min_size=p, max_size=p),
            min_size=n,
            max_size=n,
        )
    )
    label_of: dict[tuple[int, ...], int] = {}
    y = [label_of.setdefault(tuple(r), draw(st.integers(0, n_classes - 1))) for r in rows]
    return np.array(rows, dtype=float), np.array(y), n_classes


def every_threshold(X: np.ndarray) -> np.ndarray:
    """Binary features x[c] > t for every threshold between two values of a column."""
    columns = []
    for c in range(X.shape[1]):
        values = np.unique(X[:, c])
        columns += [X[:, c] > (a + b) / 2 for a, b in itertools.pairwise(values)]
    return np.array(columns, dtype=np.uint8).T.reshape(len(X), -1)


def solve(X, y, n_classes, objective, **options):
    return solve_consistent(X, y, n_classes, objective, recorder=Recorder(objective), **options)


def assert_consistent(tree, X, y):
    assert np.array_equal(tree.predict(X), y)


@settings(deadline=None, max_examples=examples(150))
@given(consistent_numeric_data(), st.booleans())
def test_box_dp_equals_brute_force(data, deeper):
    X, y, n_classes = data
    B = every_threshold(X)
    depth = min_consistent_depth(B, y)
    result = solve(X, y, n_classes, "depth")
    assert result.proven_optimal and result.objective_value == depth == result.model.depth
    assert result.model.n_nodes == 2 * min_consistent_leaves(B, y, depth) - 1
    assert_consistent(result.model, X, y)

    cap = depth + 1 if deeper else None
    result = solve(X, y, n_classes, "size", max_depth=cap)
    expected = 2 * min_consistent_leaves(B, y, depth if cap is None else cap) - 1
    assert result.proven_optimal and result.objective_value == expected == result.model.n_nodes
    assert result.model.depth <= (depth if cap is None else cap)
    assert_consistent(result.model, X, y)


@settings(deadline=None, max_examples=examples(60))
@given(consistent_numeric_data(), st.integers(1, 9))
def test_node_cap_gives_the_shallowest_tree_within_it(data, max_nodes):
    X, y, n_classes = data
    B = every_threshold(X)
    fits = [d for d in range(8) if 2 * min_consistent_leaves(B, y, d) - 1 <= max_nodes]
    if not fits:
        with pytest.raises(InfeasibleError, match=f"at most {max_nodes} nodes"):
            solve(X, y, n_classes, "depth", max_nodes=max_nodes)
        return
    result = solve(X, y, n_classes, "depth", max_nodes=max_nodes)
    assert result.objective_value == min(fits) and result.model.n_nodes <= max_nodes
    assert_consistent(result.model, X, y)


def test_grid_labels_every_box():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 1.0], [0.0, 1.0]])
    grid = BoxGrid.build(
        X, np.array([0, 0, 1, 1]), [np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0])]
    )
    assert grid.label.shape == (6, 3)  # 3 values: 6 intervals; 2 values: 3 intervals
    column0 = grid.axes[0]
    for i in range(6):
        for j in range(3):
            a, b = column0.lo[i], column0.hi[i]
            low, high = grid.axes[1].lo[j], grid.axes[1].hi[j]
            inside = (X[:, 0] >= a) & (X[:, 0] <= b) & (X[:, 1] >= low) & (X[:, 1] <= high)
            classes = set(np.array([0, 0, 1, 1])[inside].tolist())
            expected = -2 if not classes else (classes.pop() if len(classes) == 1 else -1)
            assert grid.label[i, j] == expected


def test_contradicting_rows_are_refused():
    X = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(DataError, match="no consistent tree exists"):
        solve(X, np.array([0, 1, 0]), 2, "depth")


def test_depth_cap_and_node_cap_are_proven_infeasible():
    X = np.array([[a, b] for a in range(2) for b in range(2)], dtype=float)
    xor = np.array([0, 1, 1, 0])
    with pytest.raises(InfeasibleError, match="depth at least 2"):
        solve(X, xor, 2, "depth", max_depth=1)
    with pytest.raises(InfeasibleError, match="the fewest is 7 nodes"):
        solve(X, xor, 2, "size", max_nodes=5)


def test_deadline_raises_with_what_was_proven():
    X = np.array([[a, b] for a in range(2) for b in range(2)], dtype=float)
    recorder = Recorder("depth")
    with pytest.raises(TimeUp):
        solve_consistent(X, np.array([0, 1, 1, 0]), 2, "depth", deadline=0.0, recorder=recorder)
    assert recorder.lower_bound == 1  # depth 0 was tabulated before the clock was read


def _prepared(path):
    return prepare_consistent(read_csv(path), Recorder("size"))


@pytest.mark.parametrize(
    ("name", "depth", "nodes"),
    [("monk1", 5, 15), ("monk3", 6, 39), ("monk2", 6, 67), ("car", 8, 143)],
)
def test_known_minimum_sizes(data_dir, name, depth, nodes):
    path = data_dir / "inferdt" / f"{name}.csv"
    assert choose_method("size", _prepared(path)) == "boxes"
    model = OptimalTreeClassifier(objective="size").fit_dataset(read_csv(path))
    assert model.method_ == "boxes" and model.result_.proven_optimal
    assert model.tree_.n_nodes == nodes and model.tree_.depth == depth


@pytest.mark.parametrize(
    "name",
    ["monk1", pytest.param("monk3", marks=pytest.mark.slow)],  # monk3: seconds of SAT
)
@pytest.mark.parametrize(
    ("objective", "extra_depth"), [("depth", None), ("size", None), ("size", 1)]
)
def test_boxes_and_sat_agree(data_dir, name, objective, extra_depth):
    table = read_csv(data_dir / "inferdt" / f"{name}.csv")
    depth = OptimalTreeClassifier(method="boxes").fit_dataset(table).tree_.depth
    max_depth = None if extra_depth is None else depth + extra_depth
    fits = {
        method: OptimalTreeClassifier(
            objective=objective, method=method, max_depth=max_depth
        ).fit_dataset(table)
        for method in ("boxes", "sat")
    }
    values = {m: f.result_.objective_value for m, f in fits.items()}
    assert values["boxes"] == values["sat"], values
    assert all(f.result_.proven_optimal for f in fits.values())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "objectives"),
    # SAT proves balance-scale_bin1's minimum depth in seconds, not its minimum size in hours
    [("monk2", ("depth", "size")), ("balance-scale_bin1", ("depth",))],
)
def test_boxes_and_sat_agree_on_harder_files(data_dir, name, objectives):
    table = read_csv(data_dir / "inferdt" / f"{name}.csv")
    for objective in objectives:
        boxes = OptimalTreeClassifier(objective=objective, method="boxes").fit_dataset(table)
        sat = OptimalTreeClassifier(objective=objective, method="sat").fit_dataset(table)
        assert sat.result_.proven_optimal
        assert boxes.result_.objective_value == sat.result_.objective_value


def test_auto_leaves_large_grids_to_the_portfolio_and_limited_thresholds_to_sat(data_dir):
    iris = _prepared(data_dir / "inferdt" / "iris.csv")
    assert box_count(iris.column_values()) > 2**21 and choose_method("depth", iris) == "hybrid"
    monk = _prepared(data_dir / "inferdt" / "monk1.csv")
    monk.max_thresholds = 1
    assert choose_method("depth", monk) == "sat"


def test_time_limit_returns_the_greedy_tree_unproven(monkeypatch):
    import satdt.dp.boxes as boxes

    real_build = boxes.BoxGrid.build

    def slow_build(*args):
        grid = real_build(*args)
        time.sleep(0.3)
        return grid

    monkeypatch.setattr(boxes.BoxGrid, "build", slow_build)
    X = np.array([[a, b, c] for a in range(3) for b in range(3) for c in range(2)], dtype=float)
    y = ((X[:, 0] + X[:, 1] + X[:, 2]) % 2).astype(int)
    with pytest.warns(NotProvenWarning):
        model = OptimalTreeClassifier(method="boxes", time_limit=0.2).fit(X, y)
    assert not model.result_.proven_optimal
    assert np.array_equal(model.predict(X), y)


def test_cli_says_which_search_ran(data_dir, capsys):
    assert main(["infer", str(data_dir / "inferdt" / "monk1.csv"), "--size"]) == 0
    out = capsys.readouterr().out
    assert "method: boxes (auto)" in out and "nodes: 15" in out and "boxes: 19,440" in out


def test_a_grid_over_the_memory_budget_is_refused_clearly(data_dir, capsys):
    iris = str(data_dir / "inferdt" / "iris.csv")
    assert main(["infer", iris, "--method", "boxes"]) != 0
    err = capsys.readouterr().err
    assert "--method boxes would tabulate" in err and "use --method hybrid" in err
    assert "Traceback" not in err


@settings(deadline=None, max_examples=examples(60))
@given(consistent_numeric_data())
def test_box_pareto_front_equals_brute_force(data):
    X, y, n_classes = data
    B = every_threshold(X)
    depth = min_consistent_depth(B, y)
    points, reason = box_front(X, y, n_classes, recorder=Recorder("size"))
    assert points[0].depth == depth and all(p.proven for p in points)
    for point in points:
        assert point.n_nodes == 2 * min_consistent_leaves(B, y, point.depth) - 1
        assert point.tree.depth <= point.depth
        assert_consistent(point.tree, X, y)
    assert reason.startswith("stopped after") or points[-1].depth == depth + 2


def test_pareto_front_by_boxes_and_by_sat_agree(data_dir):
    table = read_csv(data_dir / "inferdt" / "monk1.csv")
    fronts = {}
    for method in ("boxes", "sat"):
        model = OptimalTreeClassifier(objective="size", method=method)
        fronts[method] = [(d, n, proven) for d, n, _, proven in model.pareto_dataset(table)]
        assert model.method_ == method
    assert fronts["boxes"] == fronts["sat"] == [(5, 15, True), (6, 15, True)]
    auto = OptimalTreeClassifier(objective="size")
    auto.pareto_dataset(read_csv(data_dir / "inferdt" / "car.csv"))
    assert auto.method_ == "boxes" and auto.tree_.n_nodes == 87  # depth 10 (min depth 8 + 2)
