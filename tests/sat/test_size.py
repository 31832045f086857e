"""Minimum-size trees: the leaf counters, the bound searches and the depth/size Pareto front."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import consistent_binary_data, examples, threshold_data
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_consistent_depth, min_consistent_leaves
from pysat.formula import IDPool
from pysat.solvers import Solver

from satdt import OptimalTreeClassifier, pareto_front, read_csv
from satdt.cli import main
from satdt.core.errors import InfeasibleError
from satdt.sat.counter import COUNTERS, labelled_leaf_vars, leaf_counter
from satdt.sat.problem import Problem
from satdt.sat.search import minimum_depth, minimum_size
from satdt.sat.search import pareto_front as search_front
from satdt.task.result import Recorder


@pytest.mark.parametrize("kind", COUNTERS)
def test_counter_bounds_labelled_leaves_exactly(kind):
    for n in range(1, 9):
        for bound in range(n):
            pool = IDPool()
            C = np.array([[pool.id(("C", v, c)) for c in range(2)] for v in range(n)])
            U, clauses = labelled_leaf_vars(pool, C)
            counter = leaf_counter(kind, pool, U, max_bound=n - 1)
            with Solver(name="glucose4", bootstrap_with=clauses + counter.clauses) as solver:
                for labelled in range(n + 1):
                    forced = [int(C[v, v % 2]) for v in range(labelled)]
                    assert solver.solve(assumptions=forced + counter.at_most(bound)) == (
                        labelled <= bound
                    )


def solve_size(B, y, n_classes, **options):
    problem = Problem.from_data(B, y, n_classes, np.arange(n_classes))
    return minimum_size(problem, recorder=Recorder("size"), **options)


@settings(deadline=None, max_examples=examples(80))
@given(
    consistent_binary_data(max_rows=9, max_features=4),
    st.sampled_from(["descending", "dichotomic"]),
    st.sampled_from(COUNTERS),
    st.booleans(),
)
def test_min_size_equals_brute_force(data, strategy, counter, deeper):
    B, y, n_classes = data
    depth = min_consistent_depth(B, y)
    if depth == 0:
        return  # one class: the facade answers with one leaf before any search
    cap = depth + 1 if deeper else None
    result = solve_size(B, y, n_classes, max_depth=cap, size_search=strategy, leaf_counter=counter)
    expected = 2 * min_consistent_leaves(B, y, depth if cap is None else cap) - 1
    assert result.proven_optimal
    assert result.objective_value == expected == result.model.n_nodes
    assert result.model.depth <= (depth if cap is None else cap)
    np.testing.assert_array_equal(result.model.predict_index(B.astype(float)), y)


@settings(deadline=None, max_examples=examples(40))
@given(consistent_binary_data(max_rows=9, max_features=4))
def test_pareto_front_equals_brute_force(data):
    B, y, n_classes = data
    depth = min_consistent_depth(B, y)
    if depth == 0:
        return
    problem = Problem.from_data(B, y, n_classes, np.arange(n_classes))
    points, reason = search_front(problem, recorder=Recorder("size"))
    assert [p.depth for p in points] == list(range(depth, depth + len(points)))
    for point in points:
        assert point.proven
        assert (
            point.n_nodes == 2 * min_consistent_leaves(B, y, point.depth) - 1 == point.tree.n_nodes
        )
        assert point.tree.depth <= point.depth
    sizes = [p.n_nodes for p in points]
    assert sizes == sorted(sizes, reverse=True)
    last = points[-1]
    assert len(points) == 3 or last.tree.n_leaves <= last.depth + 2, reason


REFERENCE_SIZES = {
    "mouse": (4, 15),
    "iris": (4, 15),
    "monk1": (5, 15),
    "monk3": (6, 39),
    "wine": (3, 15),
}


@pytest.mark.parametrize("name", sorted(REFERENCE_SIZES))
def test_reference_sizes(data_dir, name):
    check_reference_size(data_dir, name, *REFERENCE_SIZES[name])


@pytest.mark.slow
def test_reference_size_monk2(data_dir):
    check_reference_size(data_dir, "monk2", 6, 67)


def check_reference_size(data_dir, name, depth, nodes):
    data = read_csv(data_dir / "inferdt" / f"{name}.csv")
    model = OptimalTreeClassifier(objective="size").fit_dataset(data)
    assert model.result_.proven_optimal
    assert model.result_.objective_value == nodes == model.tree_.n_nodes
    assert model.tree_.depth == depth
    assert model.score(data.X, data.y) == 1.0


@pytest.mark.parametrize("search", ["descending", "dichotomic"])
@pytest.mark.parametrize("counter", COUNTERS)
def test_counters_and_searches_agree(data_dir, counter, search):
    data = read_csv(data_dir / "inferdt" / "mouse.csv")
    model = OptimalTreeClassifier(
        objective="size", method="sat", leaf_counter=counter, size_search=search
    )
    assert model.fit_dataset(data).result_.objective_value == 15
    assert model.result_.proven_optimal


def test_size_with_depth_cap_and_time_limit():
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 2, dtype=float)
    y = np.array([0, 1, 1, 0] * 2)
    model = OptimalTreeClassifier(objective="size", max_depth=3).fit(X, y)
    assert model.result_.objective_value == 7 and model.result_.proven_optimal
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(300, 10)).astype(float)
    y = rng.integers(0, 2, size=300)
    model = OptimalTreeClassifier(objective="size", time_limit=1.0, resolve="majority")
    with pytest.warns(UserWarning):
        model.fit(X, y)
    result = model.result_
    assert not result.proven_optimal
    assert result.lower_bound <= result.objective_value == model.tree_.n_nodes
    assert result.runtime < 3.0


def test_pareto_front_api_and_cli(capsys):
    X = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0]], dtype=float)
    y = np.array([0, 1, 1, 0, 1])
    front = pareto_front(X, y, max_depth=4)
    assert front and all(len(point) == 4 for point in front)
    assert front.stop_reason
    assert main(["infer", "examples/data/mouse.csv", "--pareto"]) == 0
    out = capsys.readouterr().out
    assert "depth  nodes" in out and "stopped after depth" in out
    assert main(["infer", "examples/data/mouse.csv", "--size"]) == 0
    out = capsys.readouterr().out
    assert "nodes: 15 (8 leaves; proven minimum)" in out


@settings(deadline=None, max_examples=examples(60))
@given(consistent_binary_data(max_rows=9, max_features=4), st.integers(1, 8), st.booleans())
def test_node_cap_equals_brute_force(data, leaves, size_objective):
    B, y, n_classes = data
    depth = min_consistent_depth(B, y)
    if depth == 0:
        return
    feasible = [d for d in range(depth, leaves) if min_consistent_leaves(B, y, d) <= leaves]
    problem = Problem.from_data(B, y, n_classes, np.arange(n_classes))
    search = minimum_size if size_objective else minimum_depth
    if not feasible:
        with pytest.raises(InfeasibleError):
            search(problem, max_nodes=2 * leaves - 1, recorder=Recorder("depth"))
        return
    result = search(problem, max_nodes=2 * leaves - 1, recorder=Recorder("depth"))
    assert result.proven_optimal
    assert result.model.n_leaves <= leaves
    np.testing.assert_array_equal(result.model.predict_index(B.astype(float)), y)
    if size_objective:
        assert result.objective_value == 2 * min_consistent_leaves(B, y, feasible[0]) - 1
    else:
        assert result.objective_value == feasible[0]


@settings(deadline=None, max_examples=examples(80))
@given(threshold_data(max_rows=8), st.sampled_from(COUNTERS), st.booleans())
def test_chain_encoding_min_size_equals_brute_force(data, counter, deeper):
    """The order encoding of threshold chains under leaf bounds: the same minimum size."""
    B, y, n_classes = data
    depth = min_consistent_depth(B, y)
    if depth == 0:
        return
    cap = depth + 1 if deeper else None
    result = solve_size(B, y, n_classes, max_depth=cap, leaf_counter=counter, features="chains")
    expected = 2 * min_consistent_leaves(B, y, depth if cap is None else cap) - 1
    assert result.proven_optimal
    assert result.objective_value == expected == result.model.n_nodes
    np.testing.assert_array_equal(result.model.predict_index(B.astype(float)), y)


@settings(deadline=None, max_examples=examples(30))
@given(threshold_data(max_rows=8))
def test_chain_encoding_pareto_front_and_node_cap_equal_brute_force(data):
    B, y, n_classes = data
    depth = min_consistent_depth(B, y)
    if depth == 0:
        return
    problem = Problem.from_data(B, y, n_classes, np.arange(n_classes))
    points, _ = search_front(problem, recorder=Recorder("size"), features="chains")
    for point in points:
        assert point.proven
        assert point.n_nodes == 2 * min_consistent_leaves(B, y, point.depth) - 1
    # a node cap at the fewest nodes of depth + 1: the minimum depth under it, by brute force
    nodes = 2 * min_consistent_leaves(B, y, depth + 1) - 1
    capped = minimum_depth(problem, max_nodes=nodes, recorder=Recorder("depth"), features="chains")
    assert capped.proven_optimal and capped.model.n_nodes <= nodes
    expected = min(d for d in (depth, depth + 1) if 2 * min_consistent_leaves(B, y, d) - 1 <= nodes)
    assert capped.objective_value == expected
