"""Optimal sparse trees: the error objective with a leaf penalty and no depth limit (DL8.5 over
every depth, ``dp.dl85.solve_min_error(max_depth=None)``), against brute force over every
depth, against the bounded search at a depth the penalty cannot bind, and through the
estimator."""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pytest
from helpers import dp_settings, examples, tiny_problems
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_sparse_cost, threshold_features

from satdt import OptimalTreeClassifier
from satdt.core.errors import ParameterError
from satdt.dp import dl85
from satdt.dp._dl85_search import depth_room
from satdt.dp.dl85 import DL85Options
from satdt.task.result import Recorder


def solve(B, y, n_classes, depth, weight=None, time_limit=None, **options):
    recorder = Recorder("error")
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    shared, own = dp_settings(options, sample_weight=weight, deadline=deadline, recorder=recorder)
    return dl85.solve_min_error(B, y, n_classes, depth, shared, DL85Options(**own))


def _cost(tree, B, y, w, penalty):
    return float(w[tree.predict(B.astype(float)) != y].sum()) + penalty * tree.n_leaves


def _structured(seed: int, n: int = 120, m: int = 10):
    """Rows whose class follows a few features, with noise: optimal trees of several depths."""
    rng = np.random.default_rng(seed)
    B = rng.integers(0, 2, size=(n, m)).astype(np.uint8)
    y = ((B[:, 0] & B[:, 1]) | (B[:, 2] & (1 - B[:, 3]) & B[:, 4])).astype(np.int64)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return B, y


@settings(deadline=None, max_examples=examples(300))
@given(
    tiny_problems(),
    st.sampled_from([None, "discrepancy", "topk"]),
    st.sampled_from([0.1, 0.3, 1.0, 2.5]),
    st.sampled_from([1, 2]),
)
def test_matches_brute_force_over_every_depth(problem, rule, penalty, min_support):
    """The proven cost is the brute-force optimum over trees of any depth, the tree costs
    exactly that, and its depth is within what the penalty allows."""
    B, y, w, n_classes, _ = problem
    result = solve(
        B, y, n_classes, None, weight=w, rule=rule, leaf_penalty=penalty, min_support=min_support
    )
    weight = np.ones(len(y)) if w is None else w
    expected = min_sparse_cost(B, y, weight, n_classes, penalty, min_support)
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(expected, abs=1e-9)
    assert result.lower_bound == result.objective_value
    assert _cost(result.model, B, y, weight, penalty) == pytest.approx(expected, abs=1e-9)
    error = float(weight.sum() - np.bincount(y, weight, n_classes).max())
    assert result.model.depth <= depth_room(error, 0.0, penalty, 0.0)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_equals_the_bounded_search_where_the_depth_cannot_bind(seed):
    """The bounded DL8.5 at the least depth D where every deeper tree costs at least the
    sparse optimum (D + 2 leaves: ``(D + 2) P >= optimum``) proves the same cost."""
    B, y = _structured(seed)
    P = 0.01 * len(y)
    sparse = solve(B, y, 2, None, leaf_penalty=P)
    assert sparse.proven_optimal
    depth = max(sparse.model.depth, math.ceil(sparse.objective_value / P) - 2)
    bounded = solve(B, y, 2, depth, leaf_penalty=P)
    assert bounded.proven_optimal
    assert bounded.objective_value == pytest.approx(sparse.objective_value, abs=1e-9)
    assert sparse.model.depth >= 4  # deep enough that the depth matters


def test_effort_is_exact_and_the_support_bound_cuts():
    """Node counts repeat exactly; the leaf-support bound cuts the splits that isolate a few
    rows (columns with few ones)."""
    B, y = _structured(4, n=120, m=8)
    rare = (np.random.default_rng(5).random((120, 6)) < 0.03).astype(np.uint8)
    B = np.ascontiguousarray(np.hstack([B, rare]))
    first = solve(B, y, 2, None, leaf_penalty=2.0)
    again = solve(B, y, 2, None, leaf_penalty=2.0)
    assert first.stats.nodes == again.stats.nodes > 0
    assert first.stats.support_cuts == again.stats.support_cuts > 0


def test_no_depth_needs_a_penalty():
    B, y = _structured(0, n=20, m=5)
    with pytest.raises(ParameterError, match=r"max_depth=None needs leaf_penalty > 0 .*, got 0\.0"):
        solve(B, y, 2, None)


def test_time_limit_returns_the_best_tree_and_a_bound():
    """Stopped by its deadline, the search returns its best tree, unproven, with a lower
    bound no higher than its cost."""
    rng = np.random.default_rng(7)
    B = rng.integers(0, 2, size=(400, 40)).astype(np.uint8)
    y = rng.integers(0, 2, size=400)
    tic = time.perf_counter()
    result = solve(B, y, 2, None, time_limit=0.5, leaf_penalty=1.0)
    assert time.perf_counter() - tic < 30
    assert not result.proven_optimal
    assert result.lower_bound <= result.objective_value
    assert _cost(result.model, B, y, np.ones(len(y)), 1.0) == pytest.approx(
        result.objective_value, abs=1e-9
    )


@pytest.mark.parametrize("method", ["auto", "dl85", "cadl85", "portfolio", "blossom"])
def test_estimator_without_max_depth_matches_brute_force(method):
    """``OptimalTreeClassifier(leaf_penalty=λ)`` with no ``max_depth``, on numeric rows
    (every threshold a feature): the brute-force optimum of errors / n + λ · leaves."""
    rng = np.random.default_rng(11)
    X = rng.integers(0, 4, size=(10, 2)).astype(float)
    y = (X[:, 0] + rng.integers(0, 2, size=10) > 2).astype(int)
    B = threshold_features(X)
    for penalty in (0.02, 0.1):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model = OptimalTreeClassifier(
                objective="error", leaf_penalty=penalty, method=method
            ).fit(X, y)
        expected = min_sparse_cost(B, y, np.ones(len(y)), 2, penalty * len(y)) / len(y)
        assert model.result_.proven_optimal
        assert model.result_.objective_value == pytest.approx(expected, abs=1e-9)
        recomputed = (model.predict(X) != y).mean() + penalty * model.tree_.n_leaves
        assert recomputed == pytest.approx(expected, abs=1e-9)
