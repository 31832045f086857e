"""Born-again trees by the cell DP (satdt.dp.born_again) and the faithfulness proofs
(satdt.models.faithful): brute force on tiny forests, every cell checked, BA-Trees' depths."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT, examples, grid_box, tiny_forests
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import born_again_optima, grid_points

from satdt.core.errors import ParameterError
from satdt.dp.born_again import GridTooLarge, born_again_tree, build_grid
from satdt.models.faithful import (
    box_counterexample,
    grid_mismatches,
    is_faithful,
    leaf_counterexamples,
    union_thresholds,
)
from satdt.models.forest import Forest
from satdt.models.forest_io import read_forest
from satdt.models.tree import Tree

FORESTS = ROOT.parent / "shared" / "peers" / "ba-trees" / "forests"


def assert_faithful_on_every_cell(tree: Tree, forest: Forest) -> None:
    """The test's own proof: one point per cell of the grid of both models' thresholds,
    each decided by walking the forest's trees and the tree (no grid code of satdt)."""
    points = grid_points(union_thresholds(forest, tree))
    assert np.array_equal(tree.predict_index(points), forest.predict_index(points))


@settings(deadline=None, max_examples=examples(60))
@given(tiny_forests())
def test_the_optima_equal_brute_force_over_every_tree_of_the_grid(forest: Forest) -> None:
    depth, leaves, leaves_at_depth = born_again_optima(forest.thresholds(), forest.predict_index)
    by_depth = born_again_tree(forest, "depth")
    by_size = born_again_tree(forest, "size")
    both = born_again_tree(forest, "depth_then_size")
    for result in (by_depth, by_size, both):
        assert result.proven
        assert_faithful_on_every_cell(result.tree, forest)
    assert by_depth.depth == by_depth.lower_bound == depth
    assert by_size.n_leaves == by_size.lower_bound == leaves
    assert by_size.n_nodes == 2 * leaves - 1
    assert (both.depth, both.n_leaves) == (depth, leaves_at_depth)


def test_hard_votes_with_ties_and_soft_votes_give_their_own_trees() -> None:
    # stumps on x0 and x1: hard votes tie where they disagree (class 0 wins); soft votes
    # with these probabilities let the surer tree win
    hard = Forest.from_nested([(0, 0.5, 1, 0), (1, 0.5, 0, 1)], 2, [0, 1])
    result = born_again_tree(hard, "depth")
    assert_faithful_on_every_cell(result.tree, hard)
    # class 1 only where x0 <= 0.5 and x1 > 0.5: depth 2
    assert (result.depth, result.n_leaves) == (2, 3)
    soft = Forest.from_nested(
        [(0, 0.5, [0.1, 0.9], [0.6, 0.4]), (1, 0.5, [0.55, 0.45], [0.45, 0.55])], 2, [0, 1], "soft"
    )
    result = born_again_tree(soft, "size")
    assert_faithful_on_every_cell(result.tree, soft)
    assert (result.depth, result.n_leaves) == (1, 2)  # x0 alone decides


def test_a_constant_forest_is_one_leaf() -> None:
    forest = Forest.from_nested([(0, 0.5, 1, 1), 1], 2, ["no", "yes"])
    result = born_again_tree(forest)
    assert result.tree.n_nodes == 1 and result.tree.predict(np.zeros((1, 2))).tolist() == ["yes"]
    assert result.proven and result.lower_bound == 0


def test_the_tree_keeps_the_forest_s_labels_names_and_thresholds() -> None:
    forest = Forest.from_nested([(1, 0.25, 0, 1)], 2, ["a", "b"], feature_names=["u", "v"])
    tree = born_again_tree(forest).tree
    assert tree.to_nested() == (1, 0.25, 0, 1)
    assert tree.feature_names == ["u", "v"] and tree.classes.tolist() == ["a", "b"]


def test_an_unknown_objective_is_refused() -> None:
    with pytest.raises(ParameterError, match="objective"):
        born_again_tree(Forest.from_nested([0], 1, [0, 1]), "leaves")


def test_a_grid_above_the_cap_is_refused() -> None:
    forest = Forest.from_nested([(0, 0.5, (1, 0.5, 0, 1), 1)], 2, [0, 1])
    with pytest.raises(GridTooLarge, match="SAT"):
        born_again_tree(forest, max_cells=3)


def test_filtering_drops_the_thresholds_no_cell_changes_across() -> None:
    # x1 <= 0.5 is tested only where both of its sides vote alike, so no cell changes class
    # across it; x1 <= 1.5 decides where x0 > 0.5 (the third tree breaks the tie)
    trees = [(0, 0.5, (1, 0.5, 1, 1), 0), (0, 0.5, 1, (1, 1.5, 0, 1))]
    grid = build_grid(Forest.from_nested(trees, 2, [0, 1]))
    assert (grid.cells, grid.n, grid.features) == (6, 2, [0])
    grid = build_grid(Forest.from_nested([*trees, (1, 1.5, 0, 1)], 2, [0, 1]))
    cuts = {f: c.tolist() for f, c in zip(grid.features, grid.cuts, strict=True)}
    assert (grid.cells, grid.n, cuts) == (6, 4, {0: [0.5], 1: [1.5]})


# ---------------------------------------------------------------------- anytime
def test_a_past_deadline_returns_a_faithful_tree_and_a_lower_bound() -> None:
    forest = read_forest(_published("Seeds", 1))
    result = born_again_tree(forest, "depth", deadline=time.perf_counter())
    assert not result.proven
    assert_faithful_on_every_cell(result.tree, forest)
    assert 1 <= result.lower_bound <= 11 <= result.depth


def test_a_search_stopped_and_resumed_ends_where_an_unstopped_one_does(monkeypatch) -> None:
    from satdt.dp import born_again

    forest = read_forest(_published("HTRU2", 2))
    whole = born_again_tree(forest)
    monkeypatch.setattr(born_again, "_SLICE", 7)  # a look at the clock every 7 steps
    monkeypatch.setattr(born_again, "_FIRST_MEMO", 4)  # and a memo grown many times
    sliced = born_again_tree(forest, deadline=time.perf_counter() + 600)
    assert sliced.tree == whole.tree and sliced.proven
    assert sliced.stats.grows > whole.stats.grows
    assert (sliced.stats.expansions, sliced.stats.calls) == (
        whole.stats.expansions,
        whole.stats.calls,
    )


# ---------------------------------------------------------------------- BA-Trees' forests
def _published(name: str, fold: int) -> Path:
    path = FORESTS / name / f"{name}.RF{fold}.txt"
    if not path.exists():
        pytest.skip("BA-Trees' forests not found: expected ../shared/peers/ba-trees/forests")
    return path


# BA-Trees' optimal depths (its own runs, objective 0), the quick folds
BA_DEPTHS = [
    ("HTRU2", 1, 6),
    ("HTRU2", 7, 2),
    ("HTRU2", 9, 6),
    ("COMPAS-ProPublica", 1, 8),
    ("COMPAS-ProPublica", 7, 7),
    ("FICO", 3, 3),
    ("FICO", 5, 7),
    ("FICO", 9, 7),
]


@pytest.mark.parametrize(("name", "fold", "depth"), BA_DEPTHS)
def test_the_depths_of_ba_trees_on_its_forests(name: str, fold: int, depth: int) -> None:
    forest = read_forest(_published(name, fold))
    result = born_again_tree(forest, "depth")
    assert (result.depth, result.proven) == (depth, True)
    assert is_faithful(result.tree, forest)


def test_the_search_effort_is_exact() -> None:
    # the same forest, the same counts: a change of effort is a change of the search
    stats = born_again_tree(read_forest(_published("HTRU2", 1))).stats
    assert (stats.cells, stats.filtered_cells, stats.axes) == (5760, 144, 6)
    assert (stats.calls, stats.expansions) == (673, 152)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "fold", "depth", "leaves"),
    [("Seeds", 1, 11, None), ("Pima-Diabetes", 2, 10, None), ("FICO", 1, 11, None)],
)
def test_the_deeper_published_forests(name: str, fold: int, depth: int, leaves) -> None:
    forest = read_forest(_published(name, fold))
    result = born_again_tree(forest, "depth")
    assert (result.depth, result.proven) == (depth, True)
    assert_faithful_on_every_cell(result.tree, forest)


# ---------------------------------------------------------------------- the proofs
def test_a_tree_that_errs_on_one_cell_is_caught_by_both_proofs() -> None:
    forest = Forest.from_nested([(0, 0.5, (1, 1.5, 0, 1), 1)], 2, [0, 1])
    wrong = Tree.from_nested((0, 0.5, 0, 1), classes=[0, 1])  # misses x0 <= 0.5 < 1.5 < x1
    points = grid_mismatches(wrong, forest)
    assert len(points) == 1 and forest.predict_index(points).tolist() == [1]
    found = leaf_counterexamples(wrong, forest)
    assert len(found) == 1
    leaf, point = found[0]
    assert wrong.apply(point[None, :])[0] == leaf
    assert forest.predict_index(point[None, :])[0] != wrong.value[leaf]
    assert not is_faithful(wrong, forest) and not is_faithful(wrong, forest, max_cells=1)
    right = Tree.from_nested((0, 0.5, (1, 1.5, 0, 1), 1), classes=[0, 1])
    assert is_faithful(right, forest) and is_faithful(right, forest, max_cells=1)


@settings(deadline=None, max_examples=examples(60))
@given(tiny_forests(), st.data())
def test_the_box_query_agrees_with_the_cells(forest: Forest, data) -> None:
    # a random box of the grid and a class: a counterexample exists exactly when a cell
    # of the box is decided otherwise, and the one returned lies in the box
    thresholds = forest.thresholds()
    low, high = grid_box(data, thresholds)
    cls = data.draw(st.integers(0, forest.n_classes - 1))
    points = grid_points(thresholds)
    inside = np.all((points > low) & (points <= high), axis=1)
    expected = bool(np.any(forest.predict_index(points[inside]) != cls))
    point = box_counterexample(forest, low, high, cls)
    assert (point is not None) == expected
    if point is not None:
        assert np.all((point > low) & (point <= high))
        assert forest.predict_index(point[None, :])[0] != cls


@settings(deadline=None, max_examples=examples(60))
@given(tiny_forests(), st.data(), st.sampled_from([1, 64, 2**22]))
def test_many_boxes_at_once_agree_with_the_cells(forest: Forest, data, chunk: int) -> None:
    # the batched proof (a bound for all boxes as arrays, a search for the rest), in
    # chunks of any size: per box, a counterexample exactly when a cell of the box is
    # decided otherwise
    from satdt.models import faithful

    thresholds = forest.thresholds()
    n = data.draw(st.integers(1, 12))
    boxes = [grid_box(data, thresholds) for _ in range(n)]
    classes = np.array([data.draw(st.integers(0, forest.n_classes - 1)) for _ in range(n)])
    low, high = np.array([b[0] for b in boxes]), np.array([b[1] for b in boxes])
    saved = faithful._CHUNK
    faithful._CHUNK = chunk
    try:
        found = faithful.box_counterexamples(forest, low, high, classes)
    finally:
        faithful._CHUNK = saved
    points = grid_points(thresholds)
    for i in range(n):
        inside = np.all((points > low[i]) & (points <= high[i]), axis=1)
        expected = bool(np.any(forest.predict_index(points[inside]) != classes[i]))
        assert (found[i] is not None) == expected
        if found[i] is not None:
            assert np.all((found[i] > low[i]) & (found[i] <= high[i]))
            assert forest.predict_index(found[i][None, :])[0] != classes[i]


def test_a_proof_past_its_deadline_stops_and_one_without_never_does(monkeypatch) -> None:
    from satdt.core.errors import TimeUp
    from satdt.models import faithful

    forest = Forest.from_nested([(0, 0.5, (1, 1.5, 0, 1), 1)], 2, [0, 1])
    wrong = Tree.from_nested((0, 0.5, 0, 1), classes=[0, 1])  # the bound leaves a search
    low, high = np.array([[-np.inf, -np.inf]]), np.array([[0.5, np.inf]])
    monkeypatch.setattr(faithful, "_NODES_PER_LOOK", 1)
    with pytest.raises(TimeUp):
        faithful.box_counterexamples(forest, low, high, np.array([0]), deadline=0.0)
    assert faithful.box_counterexamples(forest, low, high, np.array([0]))[0] is not None
    assert len(leaf_counterexamples(wrong, forest)) == 1


def test_a_round_adds_the_counterexamples_whose_clauses_fit_its_budget() -> None:
    from satdt.sat import born_again as sat

    found = [np.array([float(i)]) for i in range(100)]
    rng = np.random.default_rng(0)
    assert sat._within_budget(found, 3, 10, 2, rng) is found  # 86 clauses each: all fit
    per_cell = (2**12 - 1) * 200 + 2**12 * 3
    kept = sat._within_budget(found, 12, 200, 3, rng)
    assert len(kept) == sat.CLAUSES_PER_ROUND // per_cell >= 1
    assert len({float(p[0]) for p in kept}) == len(kept)
    assert len(sat._within_budget(found, 20, 200, 3, rng)) == 1  # never none


# ---------------------------------------------------------------------- wide forests
@settings(deadline=None, max_examples=examples(25))
@given(tiny_forests())
def test_the_sat_route_and_its_bounds_agree_with_the_cell_programme(forest: Forest) -> None:
    from satdt.dp.born_again import box_lower_bound, greedy_faithful_tree
    from satdt.sat.born_again import born_again_sat

    exact = born_again_tree(forest, "depth").depth
    greedy = greedy_faithful_tree(forest, max_cells=4)  # small boxes only by the programme
    assert_faithful_on_every_cell(greedy, forest)
    assert greedy.depth >= exact
    assert box_lower_bound(forest, max_cells=4, tries=3) <= exact
    result = born_again_sat(forest, incumbent=greedy)
    assert_faithful_on_every_cell(result.tree, forest)
    assert (result.depth, result.lower_bound, result.proven) == (exact, exact, True)
    assert result.route == "sat"


def test_the_sat_route_stops_at_its_deadline_with_a_bound() -> None:
    from satdt.dp.born_again import box_lower_bound, greedy_faithful_tree
    from satdt.sat.born_again import born_again_sat

    forest = read_forest(_published("Seeds", 1))
    incumbent = greedy_faithful_tree(forest, max_cells=256)
    assert is_faithful(incumbent, forest) and incumbent.depth >= 11
    bound = box_lower_bound(forest, max_cells=256, tries=4)
    assert 1 <= bound <= 11
    result = born_again_sat(
        forest, incumbent=incumbent, lower_bound=bound, deadline=time.perf_counter() + 1
    )
    assert result.tree is incumbent or is_faithful(result.tree, forest)
    assert bound <= result.lower_bound <= 11 <= result.depth
    assert result.proven == (result.lower_bound == result.depth)


def test_an_unfaithful_incumbent_is_refused() -> None:
    from satdt.sat.born_again import born_again_sat

    forest = Forest.from_nested([(0, 0.5, (1, 1.5, 0, 1), 1)], 2, [0, 1])
    wrong = Tree.from_nested((0, 0.5, 0, 1), classes=[0, 1])
    with pytest.raises(ParameterError, match="not faithful"):
        born_again_sat(forest, incumbent=wrong)
