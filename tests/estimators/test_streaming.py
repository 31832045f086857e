"""OptimalTreeClassifier.partial_fit and fit_teacher: every prefix of a stream gets the
minimum a fresh fit finds, rows the tree classifies cost no SAT call, classes and categories
may arrive late, and what cannot stream says so."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from helpers import examples, labels_by_row, small_integer_rows
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_consistent_depth, min_consistent_leaves, threshold_features

from satdt import OptimalTreeClassifier
from satdt.core.errors import DataError, InfeasibleError, NotProvenWarning, ParameterError
from satdt.task.stats import GrowingStats
from satdt.task.teachers import FunctionTeacher, ModelTeacher

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it


@st.composite
def streams(draw):
    X = small_integer_rows(draw, max_rows=10, max_columns=3, min_rows=2)
    y = labels_by_row(draw, X, st.sampled_from(["a", "b", "c"]))
    batch = draw(st.integers(1, 3))
    return X, y, batch


@settings(deadline=None, max_examples=examples(60))
@given(streams(), st.sampled_from(["depth", "size"]))
def test_every_prefix_of_a_stream_gets_the_brute_force_minimum(stream, objective):
    X, y, batch = stream
    model = OptimalTreeClassifier(objective=objective)
    for end in range(batch, len(y) + batch, batch):
        model.partial_fit(X[end - batch : end], y[end - batch : end])
        seen, labels = X[:end], y[:end]
        B, index = threshold_features(seen), np.unique(labels, return_inverse=True)[1]
        depth = min_consistent_depth(B, index)
        assert model.result_.proven_optimal
        assert model.score(seen, labels) == 1.0
        if objective == "depth":
            assert model.tree_.depth == model.result_.objective_value == depth
        else:
            assert model.tree_.n_leaves == min_consistent_leaves(B, index, depth)
        assert model.classes_.tolist() == sorted(set(labels.tolist()))


def test_the_tree_and_its_thresholds_are_those_of_a_fresh_fit():
    rng = np.random.default_rng(11)
    X = rng.integers(0, 8, size=(60, 3)).astype(float)
    y = (X[:, 0] > 3).astype(int) + (X[:, 1] > 5)
    model = OptimalTreeClassifier()
    for start in range(0, 60, 15):
        model.partial_fit(X[start : start + 15], y[start : start + 15])
        fresh = OptimalTreeClassifier().fit(X[: start + 15], y[: start + 15])
        assert model.tree_.depth == fresh.tree_.depth
        assert model.result_.lower_bound == fresh.result_.lower_bound
        values = [np.unique(X[: start + 15, c]) for c in range(3)]
        tree = model.tree_
        for c, t in zip(tree.feature.tolist(), tree.threshold.tolist(), strict=True):
            if c >= 0:
                assert t in (values[c][:-1] + values[c][1:]) / 2


def test_rows_the_tree_classifies_cost_no_sat_call():
    X = np.array([[0.0], [6.0], [1.0], [5.0], [2.0], [4.0]])
    y = np.array([0, 1, 0, 1, 0, 1])
    model = OptimalTreeClassifier().partial_fit(X[:2], y[:2])
    assert len(model.result_.trace) == 1
    model.partial_fit(X[2:], y[2:])
    stats = model.result_.stats
    assert isinstance(stats, GrowingStats)
    assert model.result_.trace == () and stats.tree_kept and stats.new_rows == 4
    assert model.result_.proven_optimal and model.tree_.threshold[0] == 3.0
    model.partial_fit(X[:2], y[:2])  # rows seen before: nothing new
    assert model.result_.stats.new_rows == 0 and model.result_.stats.rows_seen == 8


def test_classes_as_scikit_learn_takes_them():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    model = OptimalTreeClassifier().partial_fit(X[:2], [0, 1], classes=[0, 1, 2])
    assert model.classes_.tolist() == [0, 1, 2]
    assert model.predict_proba(X[:2]).shape == (2, 3)
    with pytest.raises(ValueError, match="label 5, which is not among classes=\\[0, 1, 2\\]"):
        model.partial_fit(X[2:3], [5])
    with pytest.raises(ValueError, match="is not the same as on the first call"):
        model.partial_fit(X[2:3], [2], classes=[0, 2])
    model.partial_fit(X[2:], [2, 0])
    assert model.score(X, [0, 1, 2, 0]) == 1.0 and model.tree_.depth == 2


def test_a_class_and_a_category_that_come_late():
    model = OptimalTreeClassifier(objective="size")
    first = np.array([["red", 1.0], ["blue", 2.0]], dtype=object)
    model.partial_fit(first, ["a", "b"])
    later = np.array([["green", 1.0], ["blue", 1.0], ["red", 2.0]], dtype=object)
    model.partial_fit(later, ["c", "b", "a"])
    assert list(model.feature_names_in_) == ["x0 == blue", "x0 == red", "x0 == green", "x1"]
    assert model.classes_.tolist() == ["a", "b", "c"]
    rows = np.vstack([first, later])
    assert model.score(rows, ["a", "b", "c", "b", "a"]) == 1.0
    assert model.tree_.n_leaves == 3 and model.result_.proven_optimal
    with pytest.raises(DataError, match="labels of another type"):
        model.partial_fit(first, [1, 2])


def test_what_cannot_stream_says_why():
    for params, word in (
        ({"objective": "error", "max_depth": 2}, "objective='error'"),
        ({"method": "boxes"}, "method='boxes'"),
        ({"max_thresholds": 4}, "max_thresholds=4"),
        ({"resolve": "majority"}, "resolve='majority'"),
        ({"max_nodes": 7}, "max_nodes=7"),
    ):
        model = OptimalTreeClassifier(**params)
        assert not hasattr(model, "partial_fit") and not hasattr(model, "fit_teacher")
        with pytest.raises(AttributeError, match=f"partial_fit is not available with {word}"):
            model.partial_fit([[0.0]], [0])
    model = OptimalTreeClassifier()
    with pytest.raises(DataError, match="column 'x1' is missing: partial_fit takes complete"):
        model.partial_fit(np.array([[0.0, np.nan]]), [0])
    model.partial_fit(np.array([[0.0, 1.0], [1.0, 1.0]]), [0, 1])
    with pytest.raises(ValueError, match="X has 1 features, but OptimalTreeClassifier is expect"):
        model.partial_fit(np.array([[0.0]]), [0])
    with pytest.raises(DataError, match="the same row came before"):
        model.partial_fit(np.array([[0.0, 1.0]]), [1])
    model.set_params(objective="size")
    with pytest.raises(ParameterError, match="goes on with the parameters of its first call"):
        model.partial_fit(np.array([[2.0, 1.0]]), [1])


def test_max_depth_and_the_time_limit():
    X = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], dtype=float)
    model = OptimalTreeClassifier(max_depth=1).partial_fit(X[:2], [0, 1])
    with pytest.raises(InfeasibleError, match="depth at least 2"):
        model.partial_fit(X[2:], [1, 0])
    rng = np.random.default_rng(3)
    X = np.unique(rng.integers(0, 6, size=(200, 5)).astype(float), axis=0)
    y = rng.integers(0, 4, size=len(X))
    slow = OptimalTreeClassifier(time_limit=0.01)
    with pytest.warns(NotProvenWarning, match="time limit"):
        slow.partial_fit(X, y)
    assert slow.score(X, y) == 1.0 and not slow.result_.proven_optimal


def test_fit_starts_afresh_and_a_pickled_stream_goes_on():
    X = np.array([[0.0], [3.0], [1.0], [2.0]])
    y = np.array([0, 1, 1, 0])
    model = OptimalTreeClassifier().partial_fit(X[:2], y[:2])
    copy = pickle.loads(pickle.dumps(model))
    copy.partial_fit(X[2:], y[2:])
    assert copy.tree_.depth == 2 and copy.result_.proven_optimal
    assert copy.stream_.rows_seen == 4 and copy.stream_.y.tolist() == y.tolist()
    model.fit(X, y)
    assert not hasattr(model, "stream_")
    model.partial_fit(X[2:], y[2:])  # a new stream: the rows of fit are not kept
    assert model.stream_.rows_seen == 2


def mux(a0, a1, d0, d1, d2, d3):
    return [d0, d1, d2, d3][2 * a1 + a0]


def test_fit_teacher_learns_the_multiplexer():
    teacher = FunctionTeacher(mux, {n: bool for n in ("a0", "a1", "d0", "d1", "d2", "d3")})
    model = OptimalTreeClassifier().fit_teacher(teacher)
    assert model.result_.proven_optimal and model.tree_.depth == 3
    assert teacher.accepts(model.tree_) and model.classes_.tolist() == [False, True]
    assert model.predict(teacher.points).tolist() == teacher.labels.tolist()
    assert model.stream_.X.shape == (13, 6) and model.result_.stats.questions == 14
    small = OptimalTreeClassifier(objective="size").fit_teacher(teacher)
    assert small.tree_.n_nodes == 15 and small.result_.proven_optimal


def test_fit_teacher_on_categories_and_a_model():
    def label(size, colour):
        return "big" if size > 2 or colour == "red" else "small"

    teacher = FunctionTeacher(label, {"size": [1, 2, 3], "colour": ["red", "blue", "green"]})
    model = OptimalTreeClassifier(objective="size").fit_teacher(teacher)
    assert teacher.accepts(model.tree_) and model.tree_.n_leaves == 3
    rows = np.array([[1, "red"], [2, "green"]], dtype=object)
    assert model.predict(rows).tolist() == ["big", "small"]
    copied = OptimalTreeClassifier().fit_teacher(ModelTeacher(model, teacher.domains))
    assert copied.tree_.depth == model.tree_.depth and copied.result_.proven_optimal


def test_fit_teacher_refuses_what_is_no_teacher_and_stops_when_asked():
    teacher = FunctionTeacher(mux, [bool] * 6)
    with pytest.raises(ParameterError, match="a teacher has domains and a method counterexample"):
        OptimalTreeClassifier().fit_teacher(object())
    with pytest.raises(ParameterError, match="max_rounds must be a positive integer"):
        OptimalTreeClassifier().fit_teacher(teacher, max_rounds=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = OptimalTreeClassifier().fit_teacher(teacher, max_rounds=3)
    assert [w.category for w in caught] == [NotProvenWarning]
    assert "max_rounds=3" in model.result_.stop_reason and not model.result_.proven_optimal
