"""satdt.born_again: a scikit-learn ensemble, a Forest or a BA-Trees file in, a fitted
OptimalTreeClassifier out, deciding like the ensemble on every cell of its grid."""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest
from naive import grid_points

import satdt
from satdt import OptimalTreeClassifier
from satdt.core.errors import DataError, NotFittedError, ParameterError
from satdt.models.faithful import union_thresholds
from satdt.models.forest import Forest
from satdt.models.forest_io import from_sklearn, write_forest
from satdt.task.born_again import BornAgainSearchStats

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import load_iris  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    RandomForestClassifier,
)

X, Y = load_iris(return_X_y=True)


def _forest(n_estimators: int = 4, max_depth: int = 3, seed: int = 0) -> RandomForestClassifier:
    return RandomForestClassifier(
        n_estimators=n_estimators, max_depth=max_depth, random_state=seed
    ).fit(X, Y)


def cell_points(model: OptimalTreeClassifier, forest: Forest) -> np.ndarray:
    """One point in every cell of the grid of the forest's and the tree's thresholds (the
    test's own grid: no search and no grid code of satdt)."""
    return grid_points(union_thresholds(forest, model.tree_))


def assert_decides_like(model: OptimalTreeClassifier, predict, forest: Forest) -> None:
    """The estimator's predictions equal the ensemble's own ``predict`` on every cell."""
    points = cell_points(model, forest)
    assert len(points) > 1
    assert np.array_equal(model.predict(points), predict(points))


def test_a_random_forest_gives_a_fitted_estimator_deciding_like_it_everywhere() -> None:
    rf = _forest()
    model = satdt.born_again(rf)
    assert isinstance(model, OptimalTreeClassifier)
    assert_decides_like(model, rf.predict, model.forest_)
    assert np.array_equal(model.predict(X), rf.predict(X))
    result = model.result_
    assert result.proven_optimal and result.objective == "depth"
    assert result.objective_value == result.lower_bound == model.tree_.depth
    assert isinstance(result.stats, BornAgainSearchStats)
    assert (result.stats.route, result.stats.faithful_by) == ("grid", "grid")
    assert result.stats.grid is not None and result.stats.grid.cells == result.stats.cells
    assert result.history and result.history[-1].model is model.tree_
    assert model.method_ == "born-again"
    assert model.classes_.tolist() == [0, 1, 2] and model.n_features_in_ == 4
    assert model.feature_names_in_.tolist() == ["f0", "f1", "f2", "f3"]
    # what a fitted estimator offers works as after a fit
    proba = model.predict_proba(X[:5])
    assert proba.shape == (5, 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert "class:" in model.tree_.export_text()
    assert model.explain(X[:2])[0].prediction == model.predict(X[:1])[0]
    assert np.array_equal(model.to_sklearn().predict(X), model.predict(X))
    assert model.score(X, rf.predict(X)) == 1.0


def test_names_come_from_the_ensemble_and_nan_is_refused() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["sepal length", "sepal width", "petal length", "petal width"])
    rf = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=1).fit(frame, Y)
    model = satdt.born_again(rf)
    assert model.feature_names_in_.tolist() == list(frame.columns)
    assert set(model.tree_.feature_names) == set(frame.columns)
    assert np.array_equal(model.predict(frame), rf.predict(frame))
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.full((1, 4), np.nan))


@pytest.mark.parametrize("objective", ["size", "depth_then_size"])
def test_the_size_objectives(objective: str) -> None:
    rf = _forest(3, 3, seed=2)
    by_depth = satdt.born_again(rf)
    model = satdt.born_again(rf, objective=objective)
    assert_decides_like(model, rf.predict, model.forest_)
    result, tree = model.result_, model.tree_
    assert result.proven_optimal and result.objective == "size"
    assert result.objective_value == result.lower_bound == tree.n_nodes
    assert result.stats.objective == objective
    assert tree.n_leaves <= by_depth.tree_.n_leaves
    if objective == "depth_then_size":
        assert tree.depth == by_depth.tree_.depth == model.max_depth
    else:
        assert tree.depth >= by_depth.tree_.depth and model.max_depth is None


def test_hard_and_soft_votes() -> None:
    rf = _forest(5, 2, seed=3)
    soft = satdt.born_again(rf, vote="soft")
    hard = satdt.born_again(rf, vote="hard")
    assert soft.forest_.vote == "soft" and hard.forest_.vote == "hard"
    assert_decides_like(soft, rf.predict, soft.forest_)
    assert_decides_like(hard, hard.forest_.predict, hard.forest_)
    # hard votes: the most votes of the trees' own predictions, ties to the lowest class
    points = cell_points(hard, hard.forest_)
    votes = np.stack([t.predict(points) for t in rf.estimators_]).astype(int)
    counts = np.stack([(votes == c).sum(axis=0) for c in range(3)], axis=1)
    assert np.array_equal(hard.predict(points), counts.argmax(axis=1))


def test_extra_trees_and_two_class_gradient_boosting() -> None:
    et = ExtraTreesClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, Y)
    model = satdt.born_again(et)
    assert_decides_like(model, et.predict, model.forest_)
    labels = np.where(Y == 1, "versicolor", "other")
    gb = GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, labels)
    model = satdt.born_again(gb)
    assert model.forest_.vote == "sum" and model.classes_.tolist() == ["other", "versicolor"]
    assert_decides_like(model, gb.predict, model.forest_)
    assert model.result_.proven_optimal


def test_a_forest_object_and_a_ba_trees_file_give_the_same_tree(tmp_path) -> None:
    rf = _forest(3, 3, seed=4)
    forest = from_sklearn(rf, vote="hard")
    path = tmp_path / "forest.txt"
    write_forest(path, forest, dataset="iris")
    from_object = satdt.born_again(forest, objective="depth_then_size")
    from_file = satdt.born_again(path, objective="depth_then_size")
    from_text = satdt.born_again(str(path), objective="depth_then_size", vote="hard")
    assert from_object.tree_ == from_file.tree_ == from_text.tree_
    assert from_file.forest_ == forest
    assert_decides_like(from_file, forest.predict, forest)
    assert satdt.read_forest(path) == forest


def test_a_tiny_time_limit_gives_a_faithful_tree_not_proven_with_a_true_bound() -> None:
    rf = _forest(5, 3, seed=0)
    exact = satdt.born_again(rf)
    tic = time.perf_counter()
    with pytest.warns(satdt.NotProvenWarning, match="not proven"):
        model = satdt.born_again(rf, time_limit=1e-6)
    assert time.perf_counter() - tic < 30
    result = model.result_
    assert not result.proven_optimal and result.stop_reason == "time limit"
    assert_decides_like(model, rf.predict, model.forest_)
    assert 1 <= result.lower_bound <= exact.tree_.depth <= model.tree_.depth
    assert result.lower_bound == result.stats.depth_bound


def test_a_first_run_whose_kernels_outlast_the_limit_keeps_it(monkeypatch) -> None:
    """On a fresh install the kernels compile in the background; a time limit that passes
    first gets the greedy faithful tree, built without them, at the limit."""
    from satdt.dp import kernels

    def wait(options, until, on_wait=None):
        time.sleep(max(0.0, until - time.perf_counter()))
        return False

    rf = _forest(4, 3, seed=1)
    monkeypatch.setattr(kernels, "ready", lambda names: False)
    monkeypatch.setattr(kernels, "request", lambda names: True)
    monkeypatch.setattr(kernels, "wait", wait)
    tic = time.perf_counter()
    with pytest.warns(satdt.NotProvenWarning):
        model = satdt.born_again(rf, time_limit=0.5)
    assert time.perf_counter() - tic < 5
    result = model.result_
    assert result.stats.route == "greedy" and result.stats.grid is None
    assert not result.proven_optimal and result.stop_reason == "time limit"
    assert 0 <= result.lower_bound <= model.tree_.depth
    assert_decides_like(model, rf.predict, model.forest_)
    from satdt.cli.reports import search_lines

    assert any("the greedy faithful tree" in line for line in search_lines(result))


def test_the_sat_route_when_the_grid_is_too_large(monkeypatch) -> None:
    from satdt.dp import born_again as dp

    rf = _forest(3, 2, seed=5)
    exact = satdt.born_again(rf, vote="hard")
    monkeypatch.setattr(dp, "MAX_GRID_CELLS", 1)
    model = satdt.born_again(rf, vote="hard")
    stats = model.result_.stats
    assert stats.route == "sat" and stats.sat is not None and stats.grid is None
    assert model.result_.proven_optimal and model.tree_.depth == exact.tree_.depth
    assert_decides_like(model, model.forest_.predict, model.forest_)
    sized = satdt.born_again(rf, vote="hard", objective="size")
    assert sized.result_.stats.route == "sat"
    assert 1 <= sized.result_.lower_bound <= sized.tree_.n_nodes
    assert_decides_like(sized, sized.forest_.predict, sized.forest_)


@pytest.mark.parametrize("greedy_cells", [2**14, 1])
def test_the_sat_route_checks_its_trees_before_the_deadline_not_after(
    monkeypatch, greedy_cells: int
) -> None:
    # the greedy tree is re-checked as soon as it is built, before the SAT search; the
    # search's tree, when better (a greedy tree without the programme's small boxes), was
    # proven leaf box by leaf box by the search itself: no check is left for after the
    # time limit
    from satdt.cli.reports import search_lines
    from satdt.dp import born_again as dp
    from satdt.sat import born_again as sat
    from satdt.search import born_again as search

    events = []
    check, solve, greedy = search.is_faithful, sat.born_again_sat, dp.greedy_faithful_tree

    def spy_check(tree, forest, **options):
        events.append(("check", tree.n_leaves))
        return check(tree, forest, **options)

    def spy_solve(forest, **options):
        events.append(("sat", options["incumbent"].n_leaves))
        found = solve(forest, **options)
        events.append(("greedy kept", found.tree is options["incumbent"]))
        return found

    monkeypatch.setattr(search, "is_faithful", spy_check)
    monkeypatch.setattr(sat, "born_again_sat", spy_solve)
    monkeypatch.setattr(
        dp, "greedy_faithful_tree", lambda *a, **k: greedy(*a, **{**k, "max_cells": greedy_cells})
    )
    monkeypatch.setattr(dp, "MAX_GRID_CELLS", 1)
    rf = _forest(3, 2, seed=5)
    model = satdt.born_again(rf, vote="hard")
    stats = model.result_.stats
    assert [kind for kind, _ in events] == ["check", "sat", "greedy kept"]
    assert events[0][1] == events[1][1] == stats.greedy_leaves
    assert model.result_.proven_optimal and stats.check_seconds > 0
    assert_decides_like(model, model.forest_.predict, model.forest_)
    said = [line for line in search_lines(model.result_) if line.startswith("faithful")]
    if greedy_cells > 1:  # the greedy tree is the optimum: it is the tree returned
        assert events[2][1] and stats.faithful_by == "grid"
        assert said == [
            f"faithful to the forest: proven on every cell of the grid ({stats.check_seconds:.2f} s)"
        ]
    else:
        assert not events[2][1] and stats.faithful_by == "sat"
        assert model.tree_.depth < stats.greedy_depth
        assert said == [
            "faithful to the forest: proven leaf box by leaf box by the SAT search, before it "
            "took the tree"
        ]


def test_verbose_logs_the_steps(caplog) -> None:
    with caplog.at_level(logging.INFO, logger="satdt.born_again"):
        satdt.born_again(_forest(2, 2), verbose=True)
    assert any("cell programme" in r.getMessage() for r in caplog.records)


def test_bad_calls_are_refused_with_the_rule() -> None:
    rf = _forest(2, 2)
    with pytest.raises(ParameterError, match="objective must be one of"):
        satdt.born_again(rf, objective="leaves")
    with pytest.raises(ParameterError, match="vote must be"):
        satdt.born_again(rf, vote="sum")
    with pytest.raises(ParameterError, match="time_limit must be"):
        satdt.born_again(rf, time_limit=-1)
    with pytest.raises(ParameterError, match="ensemble must be"):
        satdt.born_again([[0, 1]])
    with pytest.raises(ParameterError, match="not fitted"):
        satdt.born_again(RandomForestClassifier())
    gb = GradientBoostingClassifier(n_estimators=2, max_depth=1).fit(X, Y)
    with pytest.raises(ParameterError, match="only two"):
        satdt.born_again(gb)
    forest = from_sklearn(rf, vote="hard")
    with pytest.raises(ParameterError, match="votes 'hard', not 'soft'"):
        satdt.born_again(forest, vote="soft")
    with pytest.raises(DataError, match="cannot read the forest file"):
        satdt.born_again("no/such/forest.txt")
    with pytest.raises(NotFittedError):
        OptimalTreeClassifier().predict(X)
