"""The search over rows that arrive (satdt.sat.growing): every prefix of a stream gets the
brute-force minimum, the binary features are every threshold of the rows seen, the loops grow
(features, classes, columns) without re-encoding, and the state survives pickling."""

from __future__ import annotations

import pickle
import time

import numpy as np
import pytest
from helpers import examples, labels_by_row, small_integer_rows
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_consistent_depth, min_consistent_leaves, threshold_features

from satdt.core.errors import DataError, InfeasibleError
from satdt.prepare.binarize import Binarizer
from satdt.sat.growing import GrowingRows, GrowingSearch
from satdt.task.result import Recorder

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it


@st.composite
def streams(draw, max_rows: int = 9, max_columns: int = 3, max_classes: int = 3):
    """Tiny numeric rows (identical rows share a label) cut into batches."""
    X = small_integer_rows(draw, max_rows, max_columns)
    n = len(X)
    y = labels_by_row(draw, X, st.integers(0, max_classes - 1)).astype(np.int64)
    cuts = sorted(set(draw(st.lists(st.integers(1, n), max_size=4))) | {n})
    return X, y, cuts


def _stream(X, y, cuts, objective, max_depth=None, **options):
    """Feed the batches; yield (rows so far, search) after each solve."""
    rows = GrowingRows(X.shape[1])
    search = GrowingSearch(rows, objective, max_depth, **options)
    start = 0
    for cut in cuts:
        rows.add(X[start:cut], rows.class_index(y[start:cut].tolist()))
        start = cut
        assert search.solve(Recorder(objective))
        yield cut, search


def _class_index(rows: GrowingRows, y: np.ndarray) -> np.ndarray:
    return np.array([rows.labels.index(label) for label in y.tolist()])


@settings(deadline=None, max_examples=examples(100))
@given(streams(), st.sampled_from(["first", "per_leaf", "all"]))
def test_every_prefix_gets_the_brute_force_minimum_depth(stream, counterexamples):
    X, y, cuts = stream
    for n, search in _stream(X, y, cuts, "depth", counterexamples=counterexamples):
        tree = search.tree
        np.testing.assert_array_equal(tree.predict_index(X[:n]), _class_index(search.rows, y[:n]))
        assert tree.depth == min_consistent_depth(threshold_features(X[:n]), y[:n])
        assert search.lower_bound == tree.depth


@settings(deadline=None, max_examples=examples(80))
@given(streams(), st.sampled_from([None, 2, 3]), st.sampled_from(["descending", "dichotomic"]))
def test_every_prefix_gets_the_brute_force_minimum_size(stream, max_depth, size_search):
    X, y, cuts = stream
    rows_seen = 0
    try:
        for n, search in _stream(X, y, cuts, "size", max_depth, size_search=size_search):
            rows_seen = n
            B = threshold_features(X[:n])
            depth = min_consistent_depth(B, y[:n])
            leaves = min_consistent_leaves(B, y[:n], depth if max_depth is None else max_depth)
            assert search.tree.n_leaves == leaves
            assert search.value == search.lower_bound == 2 * leaves - 1
            if max_depth is None:
                assert search.tree.depth == depth
    except InfeasibleError:
        assert min_consistent_depth(threshold_features(X[: cuts[-1]]), y[: cuts[-1]]) > max_depth
        assert rows_seen < cuts[-1] or max_depth is not None


@settings(deadline=None, max_examples=examples(100))
@given(streams(max_rows=12))
def test_the_features_are_every_threshold_of_the_rows_seen(stream):
    """The binary features are every split of the rows seen, as threshold_features gives them,
    and their thresholds are the Binarizer's (what a fit on those rows would print)."""
    X, y, cuts = stream
    rows = GrowingRows(X.shape[1])
    start = 0
    for cut in cuts:
        rows.add(X[start:cut], rows.class_index(y[start:cut].tolist()))
        start = cut
        distinct = np.unique(X[:cut], axis=0, return_index=True)[1]
        order = np.argsort(rows.arrival)  # the distinct rows in the order they came
        assert sorted(map(tuple, rows.X[order].tolist())) == sorted(
            map(tuple, X[:cut][distinct].tolist())
        )
        expected = threshold_features(rows.X)
        assert {tuple(c) for c in rows.B.T.tolist()} == {tuple(c) for c in expected.T.tolist()}
        assert rows.B.shape[1] == expected.shape[1]
        fitted = Binarizer().fit(rows.X)
        assert set(zip(rows.column.tolist(), rows.threshold.tolist(), strict=True)) == set(
            zip(fitted.column_.tolist(), fitted.threshold_.tolist(), strict=True)
        )


def test_a_tree_that_classifies_the_new_rows_stays_without_a_sat_call():
    X = np.array([[0.0], [4.0], [1.0], [3.0]])
    y = np.array([0, 1, 0, 1])
    rows = GrowingRows(1)
    search = GrowingSearch(rows)
    rows.add(X[:2], rows.class_index(y[:2].tolist()))
    recorder = Recorder("depth")
    assert search.solve(recorder)
    assert search.tree.threshold[0] == 2.0 and len(recorder.trace) == 1
    rows.add(X[2:], rows.class_index(y[2:].tolist()))
    recorder = Recorder("depth")
    assert search.solve(recorder)
    assert search.kept and not recorder.trace
    assert search.tree.threshold[0] == 2.0  # the midpoint of the gap (1, 3) it splits now
    rows.add(np.array([[2.5]]), rows.class_index([0]))
    assert search.solve(Recorder("depth")) and not search.kept
    assert search.tree.threshold[0] == 2.75


def test_a_class_that_comes_late_joins_the_open_loops():
    rows = GrowingRows(2)
    search = GrowingSearch(rows)
    X = np.array([[0, 0], [1, 0], [0, 1]], dtype=float)
    rows.add(X, rows.class_index(["a", "b", "b"]))
    assert search.solve(Recorder("depth")) and search.tree.depth == 2
    loop = search.loops[2]
    rows.add(np.array([[1, 1]], dtype=float), rows.class_index(["c"]))
    assert search.solve(Recorder("depth"))
    assert search.loops[2] is loop and loop.vars.C.shape[1] == 3
    assert search.tree.depth == 2
    np.testing.assert_array_equal(search.tree.predict_index(rows.X), rows.y)


def test_a_contradiction_names_both_labels_and_adds_nothing():
    rows = GrowingRows(1)
    rows.add(np.array([[1.0], [2.0]]), rows.class_index(["yes", "no"]))
    with pytest.raises(DataError, match="labelled 'no', but the same row came before labelled"):
        rows.add(np.array([[3.0], [1.0]]), rows.class_index(["no", "no"]))
    assert rows.n_rows == 2 and rows.given == 2
    with pytest.raises(DataError, match="the same row came before"):
        rows.add(np.array([[5.0], [5.0]]), rows.class_index(["no", "yes"]))
    assert rows.n_rows == 2


def test_rows_outside_the_domains_are_refused():
    rows = GrowingRows(2, domains=[np.array([0.0, 1.0]), np.array([1.0, 2.0, 3.0])])
    assert rows.B.shape == (0, 3)  # every threshold of the domains from the start
    with pytest.raises(DataError, match="column 1: 5 is not in its domain"):
        rows.add(np.array([[0.0, 5.0]]), rows.class_index([1]))


def test_a_column_inserted_later_is_zero_on_the_rows_before_it():
    """A new category: a 0/1 column inserted in the middle, its feature false on old rows."""
    rows = GrowingRows(2)
    search = GrowingSearch(rows, "size")
    rows.add(np.array([[1, 0], [0, 1]], dtype=float), rows.class_index([0, 1]))
    assert search.solve(Recorder("size"))
    search.insert_columns([1])
    X = np.array([[0, 1, 0], [0, 0, 1]], dtype=float)  # the new column in the middle
    rows.add(X, rows.class_index([2, 1]))
    assert search.solve(Recorder("size"))
    np.testing.assert_array_equal(rows.X[:2], [[1, 0, 0], [0, 0, 1]])
    B = threshold_features(rows.X)
    assert search.tree.n_leaves == min_consistent_leaves(B, rows.y, min_consistent_depth(B, rows.y))
    np.testing.assert_array_equal(search.tree.predict_index(rows.X), rows.y)


def test_a_pickled_search_rebuilds_its_loops_and_keeps_its_bounds():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(30, 3)).astype(float)
    y = (X.sum(axis=1) % 3).astype(int)
    rows = GrowingRows(3)
    search = GrowingSearch(rows)
    rows.add(X[:15], rows.class_index(y[:15].tolist()))
    search.solve(Recorder("depth"))
    copy = pickle.loads(pickle.dumps(search))
    assert copy.loops == {} and copy.depth_lower == search.depth_lower
    assert copy.total_sat_calls == search.total_sat_calls
    for s in (search, copy):
        s.rows.add(X[15:], s.rows.class_index(y[15:].tolist()))
        assert s.solve(Recorder("depth"))
    assert copy.tree.depth == search.tree.depth == min_consistent_depth(threshold_features(X), y)


def test_a_deadline_gives_a_consistent_tree_not_proven_and_the_next_call_goes_on():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 5, size=(40, 4)).astype(float)
    y = rng.integers(0, 3, size=40)
    X, keep = np.unique(X, axis=0, return_index=True)
    y = y[keep]
    rows = GrowingRows(4)
    search = GrowingSearch(rows)
    rows.add(X, rows.class_index(y.tolist()))
    assert not search.solve(Recorder("depth"), deadline=time.perf_counter() - 1)
    np.testing.assert_array_equal(search.tree.predict_index(rows.X), rows.y)
    assert search.lower_bound <= search.value
    assert search.solve(Recorder("depth"))
    assert search.tree.depth == min_consistent_depth(threshold_features(X), y)


def test_a_depth_beyond_max_depth_is_infeasible():
    X = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], dtype=float)
    rows = GrowingRows(2)
    search = GrowingSearch(rows, "depth", max_depth=1)
    rows.add(X, rows.class_index([0, 1, 1, 0]))
    with pytest.raises(InfeasibleError, match="depth at least 2"):
        search.solve(Recorder("depth"))
