"""Blossom (satdt.dp.blossom): agreement with brute force, proven optima on cp4im, anytime behaviour."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from helpers import OPTIMA, check_tree, examples, load_cp4im, tiny_problems
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_error

from satdt.core.errors import DataError, ParameterError
from satdt.dp import common
from satdt.dp.blossom import solve_min_error
from satdt.dp.common import SearchSettings
from satdt.prepare import rows as prepare
from satdt.task.result import Recorder
from satdt.task.stats import DPStats

# Depth-4 and depth-5 optima that this implementation proves in about a second or less.
QUICK = {
    4: {
        "anneal",
        "heart-cleveland",
        "mushroom",
        "primary-tumor",
        "soybean",
        "tic-tac-toe",
        "zoo-1",
    },
    5: {"primary-tumor", "zoo-1", "breast-wisconsin", "mushroom", "segment"},
}


def solve(B, y, n_classes, depth, weight=None, time_limit=None, recorder=None):
    recorder = recorder or Recorder("error")
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    result = solve_min_error(
        B,
        y,
        n_classes,
        depth,
        SearchSettings(sample_weight=weight, deadline=deadline, recorder=recorder),
    )
    return result, recorder


@settings(deadline=None, max_examples=examples(300))
@given(tiny_problems())
def test_matches_brute_force(problem):
    B, y, w, n_classes, depth = problem
    result, _ = solve(B, y, n_classes, depth, weight=w)
    weight = np.ones(len(y)) if w is None else w
    assert result.objective_value == pytest.approx(
        min_error(B, y, weight, n_classes, depth), abs=1e-9
    )
    assert result.proven_optimal
    assert result.lower_bound == result.objective_value
    check_tree(result, B, y, w, depth)


def test_depth_zero_and_no_features_give_the_heaviest_class():
    B = np.zeros((5, 0), dtype=np.uint8)
    y = np.array([0, 1, 1, 2, 1])
    result, _ = solve(B, y, 3, 3)
    assert result.model.n_nodes == 1 and result.model.value[0] == 1
    assert result.objective_value == 2 and result.proven_optimal
    B = np.eye(5, dtype=np.uint8)
    result, _ = solve(B, y, 3, 0, weight=np.array([5.0, 1, 1, 1, 1]))
    assert result.model.value[0] == 0 and result.objective_value == 4


def test_duplicate_and_complementary_features_are_merged():
    B = np.array([[0, 1, 0], [1, 0, 1], [1, 0, 1], [0, 1, 1]], dtype=np.uint8)
    y = np.array([0, 1, 1, 0])
    result, recorder = solve(B, y, 2, 2)
    assert result.objective_value == 0 and result.proven_optimal
    assert recorder.stats.features_used == 2
    assert recorder.stats.distinct_rows == 3


@pytest.mark.parametrize(
    "name", sorted({name for name, depth in OPTIMA if depth == 3}) or ["missing"]
)
def test_cp4im_depth3_optimum(name):
    if (name, 3) not in OPTIMA:
        pytest.skip("optima.csv not found in ../shared/data/cp4im")
    B, y = load_cp4im(name)
    result, _ = solve(B, y, 2, 3)
    assert result.proven_optimal
    assert result.objective_value == OPTIMA[(name, 3)]
    check_tree(result, B, y, None, 3)


def _deeper_cases(slow: bool):
    cases = []
    for (name, depth), _ in sorted(OPTIMA.items()):
        if depth in (4, 5) and (name in QUICK[depth]) != slow:
            cases.append((name, depth))
    return cases


@pytest.mark.parametrize(("name", "depth"), _deeper_cases(slow=False))
def test_cp4im_quick_optimum(name, depth):
    B, y = load_cp4im(name)
    result, _ = solve(B, y, 2, depth)
    assert result.proven_optimal
    assert result.objective_value == OPTIMA[(name, depth)]
    check_tree(result, B, y, None, depth)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "depth"), _deeper_cases(slow=True))
def test_cp4im_slow_optimum(name, depth):
    B, y = load_cp4im(name)
    result, _ = solve(B, y, 2, depth, time_limit=120)
    assert result.proven_optimal
    assert result.objective_value == OPTIMA[(name, depth)]
    check_tree(result, B, y, None, depth)


def test_time_limit_returns_the_best_tree_so_far():
    B, y = load_cp4im("diabetes")
    tic = time.perf_counter()
    result, recorder = solve(B, y, 2, 6, time_limit=1.0)  # optimum 62, far from proven in 1 s
    elapsed = time.perf_counter() - tic
    assert elapsed < 1.5
    assert not result.proven_optimal
    assert result.lower_bound <= result.objective_value
    check_tree(result, B, y, None, 6)
    assert not result.stats.interrupted  # a time-out is not an interruption (Ctrl-C)
    errors = [incumbent.value for incumbent in recorder.history]
    assert errors == sorted(errors, reverse=True)
    assert len(set(errors)) == len(errors)


def test_first_tree_is_no_worse_than_cart():
    tree_module = pytest.importorskip("sklearn.tree")
    for name, depth in [("vehicle", 6), ("anneal", 5), ("australian-credit", 7)]:
        B, y = load_cp4im(name)
        _, recorder = solve(B, y, 2, depth, time_limit=0.5)
        cart = tree_module.DecisionTreeClassifier(max_depth=depth, random_state=0).fit(B, y)
        cart_error = int((cart.predict(B) != y).sum())
        assert recorder.history[0].value <= cart_error, name


def test_incumbents_are_recorded_and_reported():
    B, y = load_cp4im("australian-credit")
    snapshots = []
    recorder = Recorder("error", on_improve=snapshots.append)
    result, _ = solve(B, y, 2, 4, recorder=recorder)
    errors = [incumbent.value for incumbent in recorder.history]
    assert len(errors) >= 2
    assert all(a > b for a, b in itertools.pairwise(errors))
    assert [s.objective_value for s in snapshots] == errors
    assert result.objective_value == errors[-1]
    for incumbent in recorder.history:
        assert incumbent.model.count_error() == incumbent.value
    assert result.stats.distinct_rows <= len(y)


def test_statistics_are_typed():
    B, y = load_cp4im("australian-credit")
    result, recorder = solve(B, y, 2, 4)
    stats = result.stats
    assert isinstance(stats, DPStats) and recorder.stats is not stats  # a snapshot
    assert (stats.rows, stats.features) == B.shape
    assert stats.distinct_rows <= stats.rows and stats.features_used <= stats.features
    assert not stats.interrupted
    assert stats.expansions > 0 and stats.bottom_solves > 0 and stats.complete_trees > 0
    assert stats.backtracks == stats.expansions  # every decision is popped once
    assert stats.similarity_cuts <= stats.cuts


# ---------------------------------------------------------------------- order of rows
def _shuffled_group_rows(seed: int):
    """prepare.group_rows with its groups renumbered at random (same groups, other order)."""

    def group_rows(A):
        first, inverse = prepare.group_rows(A)
        renumber = np.random.default_rng(seed).permutation(len(first))
        shuffled = np.empty_like(first)
        shuffled[renumber] = first
        return shuffled, renumber[inverse]

    return group_rows


def _summary(result):
    stats = result.stats.as_dict()
    return result.objective_value, result.model.to_nested(), result.proven_optimal, stats


@pytest.mark.parametrize(("name", "depth"), [("tic-tac-toe", 4), ("anneal", 3), ("zoo-1", 3)])
def test_order_of_distinct_rows_does_not_matter_with_unit_weights(name, depth, monkeypatch):
    B, y = load_cp4im(name)
    reference = _summary(solve(B, y, 2, depth)[0])
    for seed in (0, 1):
        monkeypatch.setattr(common, "group_rows", _shuffled_group_rows(seed))
        assert _summary(solve(B, y, 2, depth)[0]) == reference


@settings(deadline=None, max_examples=examples(100))
@given(tiny_problems(), st.integers(0, 3))
def test_order_of_distinct_rows_does_not_change_the_optimum(problem, seed):
    B, y, w, n_classes, depth = problem
    reference, _ = solve(B, y, n_classes, depth, weight=w)
    original = common.group_rows
    try:
        common.group_rows = _shuffled_group_rows(seed)
        result, _ = solve(B, y, n_classes, depth, weight=w)
    finally:
        common.group_rows = original
    assert result.objective_value == pytest.approx(reference.objective_value, abs=1e-9)
    assert result.proven_optimal
    check_tree(result, B, y, w, depth)


# ---------------------------------------------------------------------- upper bound
def _recorder_holding(tree, value):
    """A recorder whose incumbent is the caller's tree (as a greedy start would leave it)."""
    recorder = Recorder("error")
    recorder.improve(tree, value)
    return recorder


def test_upper_bound_above_the_optimum_is_beaten():
    B, y = load_cp4im("australian-credit")
    shallow, _ = solve(B, y, 2, 2)  # a depth-2 tree is a depth-3 tree too
    plain, _ = solve(B, y, 2, 3)
    recorder = _recorder_holding(shallow.model, shallow.objective_value)
    result = solve_min_error(
        B, y, 2, 3, SearchSettings(recorder=recorder, upper_bound=shallow.objective_value)
    )
    assert result.proven_optimal
    assert result.objective_value == plain.objective_value < shallow.objective_value
    errors = [incumbent.value for incumbent in recorder.history]
    assert errors[0] == shallow.objective_value and len(errors) >= 2
    assert all(a > b for a, b in itertools.pairwise(errors))
    check_tree(result, B, y, None, 3)
    assert result.stats.complete_trees <= plain.stats.complete_trees


def test_upper_bound_at_the_optimum_proves_the_callers_tree():
    B, y = load_cp4im("australian-credit")
    best, _ = solve(B, y, 2, 3)
    recorder = _recorder_holding(best.model, best.objective_value)
    result = solve_min_error(
        B, y, 2, 3, SearchSettings(recorder=recorder, upper_bound=best.objective_value)
    )
    assert result.proven_optimal
    assert len(recorder.history) == 1 and result.model is best.model
    assert result.objective_value == result.lower_bound == best.objective_value
    assert isinstance(result.stats, DPStats) and result.stats.expansions > 0


def test_upper_bound_at_the_irreducible_error_stops_at_once():
    B = np.array([[0, 1], [0, 1], [1, 0], [1, 1]], dtype=np.uint8)
    y = np.array([0, 1, 1, 0])  # rows 0 and 1 contradict: irreducible error 1
    best, _ = solve(B, y, 2, 2)
    assert best.objective_value == 1
    recorder = _recorder_holding(best.model, 1.0)
    result = solve_min_error(B, y, 2, 2, SearchSettings(recorder=recorder, upper_bound=1.0))
    assert result.proven_optimal and len(recorder.history) == 1
    assert result.stats.irreducible_error == 1 and result.stats.expansions == 0


def test_upper_bound_needs_the_callers_tree_on_the_recorder():
    B, y = load_cp4im("zoo-1")
    with pytest.raises(DataError, match="upper_bound"):
        solve_min_error(B, y, 2, 2, SearchSettings(recorder=Recorder("error"), upper_bound=5.0))
    leaf, _ = solve(B, y, 2, 0)
    recorder = _recorder_holding(leaf.model, leaf.objective_value)
    with pytest.raises(DataError, match="upper_bound"):
        solve_min_error(
            B, y, 2, 2, SearchSettings(recorder=recorder, upper_bound=leaf.objective_value - 1)
        )


@settings(deadline=None, max_examples=examples(150))
@given(tiny_problems())
def test_upper_bound_from_a_leaf_matches_brute_force(problem):
    B, y, w, n_classes, depth = problem
    leaf, _ = solve(B, y, n_classes, 0, weight=w)
    recorder = _recorder_holding(leaf.model, leaf.objective_value)
    result = solve_min_error(
        B,
        y,
        n_classes,
        depth,
        SearchSettings(sample_weight=w, recorder=recorder, upper_bound=leaf.objective_value),
    )
    weight = np.ones(len(y)) if w is None else w
    optimum = min_error(B, y, weight, n_classes, depth)
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(optimum, abs=1e-9)
    assert all(inc.value < leaf.objective_value for inc in recorder.history[1:])
    check_tree(result, B, y, w, depth)


# ---------------------------------------------------------------------- leaf penalty, support
@st.composite
def rule_problems(draw):
    """Tiny weighted data with duplicate rows (some of weight 0), a depth, a leaf penalty P
    (none, small, or larger than any error a split can save) and a minimum support."""
    n = draw(st.integers(1, 12))
    m = draw(st.integers(1, 4))
    n_classes = draw(st.integers(2, 4))
    pool = draw(st.lists(st.lists(st.integers(0, 1), min_size=m, max_size=m), min_size=1))
    B = np.array([pool[draw(st.integers(0, len(pool) - 1))] for _ in range(n)], dtype=np.uint8)
    y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
    weights = st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, 0.3, 2.7])
    w = np.array(draw(st.lists(weights, min_size=n, max_size=n)))
    depth = draw(st.integers(0, 3))
    penalty = draw(st.sampled_from([0.0, 0.2, 0.5, 1.0, 1.3, 1e3]))
    support = draw(st.integers(1, 3))
    return B, y, w, n_classes, depth, penalty, support


def check_rules(result, B, w, penalty, support):
    """The tree's recomputed cost is the reported value; every leaf of a split tree holds
    ``support`` rows of positive weight."""
    tree = result.model
    cost = tree.count_error() + penalty * tree.n_leaves
    assert cost == pytest.approx(result.objective_value, abs=1e-9)
    if tree.n_leaves > 1:
        leaves = tree.apply(B.astype(float))[w > 0]
        held = np.bincount(leaves, minlength=tree.n_nodes)[tree.feature < 0]
        assert held.min() >= support


@settings(deadline=None, max_examples=examples(300))
@given(rule_problems())
def test_leaf_penalty_and_support_match_brute_force(problem):
    B, y, w, n_classes, depth, penalty, support = problem
    result = solve_min_error(
        B,
        y,
        n_classes,
        depth,
        SearchSettings(
            sample_weight=w, recorder=Recorder("error"), leaf_penalty=penalty, min_support=support
        ),
    )
    optimum = min_error(B, y, w, n_classes, depth, min_support=support, leaf_penalty=penalty)
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(optimum, abs=1e-9)
    assert result.lower_bound == result.objective_value
    assert result.model.depth <= depth
    check_rules(result, B, w, penalty, support)
    if penalty >= w.sum():  # no split saves more than the penalty: one leaf
        assert result.model.n_leaves == 1


@settings(deadline=None, max_examples=examples(100))
@given(rule_problems())
def test_leaf_penalty_and_support_from_an_upper_bound(problem):
    """Started from the root leaf's cost, the search reports only cheaper trees and proves
    the optimum."""
    B, y, w, n_classes, depth, penalty, support = problem
    rules = {"leaf_penalty": penalty, "min_support": support}
    leaf = solve_min_error(
        B, y, n_classes, 0, SearchSettings(sample_weight=w, recorder=Recorder("error"), **rules)
    )
    recorder = _recorder_holding(leaf.model, leaf.objective_value)
    result = solve_min_error(
        B,
        y,
        n_classes,
        depth,
        SearchSettings(
            sample_weight=w, recorder=recorder, upper_bound=leaf.objective_value, **rules
        ),
    )
    optimum = min_error(B, y, w, n_classes, depth, min_support=support, leaf_penalty=penalty)
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(optimum, abs=1e-9)
    assert all(inc.value < leaf.objective_value for inc in recorder.history[1:])
    check_rules(result, B, w, penalty, support)


@pytest.mark.parametrize(("penalty", "support"), [(0.0, 5), (2.0, 1), (2.0, 5)])
def test_leaf_penalty_and_support_on_cp4im(penalty, support):
    """Depth 3 on real data: the optimum under the rules is proven and costs what it says;
    its error is no less than the plain optimum's, and without a support rule its cost is
    no more than the plain optimum tree's cost."""
    B, y = load_cp4im("heart-cleveland")
    w = np.ones(len(y))
    plain, _ = solve(B, y, 2, 3)
    recorder = Recorder("error")
    result = solve_min_error(
        B, y, 2, 3, SearchSettings(recorder=recorder, leaf_penalty=penalty, min_support=support)
    )
    assert result.proven_optimal
    check_rules(result, B, w, penalty, support)
    assert result.model.count_error() >= plain.objective_value
    if support == 1:
        plain_cost = plain.objective_value + penalty * plain.model.n_leaves
        assert result.objective_value <= plain_cost + 1e-9
    for incumbent in recorder.history:
        tree = incumbent.model
        assert tree.count_error() + penalty * tree.n_leaves == pytest.approx(incumbent.value)


def test_default_rules_change_nothing():
    """P = 0 and s = 1 given explicitly: the same tree and the same search counters."""
    B, y = load_cp4im("heart-cleveland")
    reference, _ = solve(B, y, 2, 4)
    result = solve_min_error(
        B, y, 2, 4, SearchSettings(recorder=Recorder("error"), leaf_penalty=0.0, min_support=1)
    )
    assert _summary(result) == _summary(reference)


def test_bad_rules_are_refused():
    B = np.eye(3, dtype=np.uint8)
    y = np.array([0, 1, 1])
    with pytest.raises(ParameterError, match="leaf_penalty"):
        solve_min_error(B, y, 2, 2, SearchSettings(recorder=Recorder("error"), leaf_penalty=-1.0))
    with pytest.raises(ParameterError, match="min_support"):
        solve_min_error(B, y, 2, 2, SearchSettings(recorder=Recorder("error"), min_support=0))
