"""Rows with identical features and different labels: satdt.prepare.prepared."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import contradiction_groups

from satdt.core.errors import ContradictionError, DataError
from satdt.data import read_csv
from satdt.prepare.rows import contradiction_error, find_contradictions, resolve_majority

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it


def write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8"))
    return path


# ---------------------------------------------------------------------- contradictions
def test_find_contradictions() -> None:
    X = np.array([[0, 1], [1, 1], [0, 1], [1, 1], [2, 2], [2, 2], [0, 1]], dtype=float)
    y = np.array([0, 1, 1, 1, 5, 6, 0])
    assert find_contradictions(X, y) == [[0, 2, 6], [4, 5]]
    assert find_contradictions(X, np.zeros(7)) == []


@settings(deadline=None, max_examples=examples(60))
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.integers(0, 1), min_size=2, max_size=2), min_size=n, max_size=n),
            st.lists(st.integers(0, 2), min_size=n, max_size=n),
        )
    )
)
def test_find_contradictions_matches_brute_force(data: tuple[list[list[int]], list[int]]) -> None:
    X, y = np.array(data[0], dtype=float), np.array(data[1])
    assert find_contradictions(X, y) == contradiction_groups(X, y)


def test_contradiction_error_from_a_file(tmp_path: Path) -> None:
    data = read_csv(write(tmp_path, "c.csv", "a,b,y\n1,1,0\n2,2,0\n1,1,1\n"))
    assert data.y is not None
    groups = find_contradictions(data.X, data.y)
    error = contradiction_error(groups, data.y, data.line_numbers, data.source)
    assert isinstance(error, ContradictionError) and isinstance(error, DataError)
    message = str(error)
    assert message.startswith(
        "no consistent tree exists: 1 group of rows has identical features but different labels"
    )
    assert "  lines 2, 4: labels 0, 1" in message
    assert message.endswith("set resolve='majority' to keep each group's majority label")
    assert "--resolve" not in message
    assert error.groups == [[2, 4]]


def test_contradiction_error_shows_at_most_ten_groups() -> None:
    groups = [[2 * g, 2 * g + 1] for g in range(12)]
    y = np.tile([0, 1], 12)
    lines = np.arange(24) + 2
    message = str(contradiction_error(groups, y, lines, "f.csv"))
    assert "12 groups of rows have identical features but different labels" in message
    assert "lines 20, 21" in message and "lines 22, 23" not in message
    assert "2 more groups" in message
    assert len(contradiction_error(groups, y, lines, "f.csv").groups) == 12


def test_resolve_majority() -> None:
    X = np.array([[0], [0], [0], [1], [1], [2]], dtype=float)
    y = np.array([1, 0, 1, 3, 2, 7])
    resolved, changed = resolve_majority(X, y)
    np.testing.assert_array_equal(resolved, [1, 1, 1, 2, 2, 7])  # tie 3/2 -> 2
    assert changed == 2
    np.testing.assert_array_equal(y, [1, 0, 1, 3, 2, 7])  # input untouched
    assert find_contradictions(X, resolved) == []


def test_resolve_majority_string_labels() -> None:
    X = np.zeros((2, 1))
    resolved, changed = resolve_majority(X, np.array(["b", "a"]))
    assert resolved.tolist() == ["a", "a"] and changed == 1


def _prepared(X: np.ndarray, y: np.ndarray):
    from satdt.prepare.prepared import prepare
    from satdt.prepare.validate import validate
    from satdt.task.result import Recorder

    return prepare(
        validate(X, y),
        None,
        consistency=False,
        resolve=None,
        recorder=Recorder("error"),
        deadline=None,
        max_thresholds=None,
        max_memory_mb=64,
    )


def _stump(j: int):
    """A tree over binary features: feature ``j`` at the root, class 0 left, 1 right."""
    from satdt.models.tree import Tree

    return Tree([j, -1, -1], [0.5, 0.0, 0.0], [1, -1, -1], [2, -1, -1], [0, 0, 1])


def test_each_cap_gets_its_own_binary_view_and_trees_map_with_theirs():
    """A second cap is not silently the first one's view: each effective cap has its view
    (a view that needed no reduction serves every cap it fits), and a tree found on a view
    maps to the user's columns with that view."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)).round(2)
    y = (X[:, 0] > 0.3).astype(np.int64)
    data = _prepared(X, y)
    small = data.binary(6)
    assert small.n_features <= 6 and small.binarizer.reduced_to_ is not None
    full = data.binary()
    assert full.n_features > 6 and full.binarizer.reduced_to_ is None
    assert data.binary(6) is small  # built once per cap
    assert data.binary(10_000) is full  # a view with no reduction serves every cap it fits
    assert data.binary(full.binarizer.n_features_) is full
    for view, cap in ((small, 6), (full, None)):
        # the column-0 feature whose threshold is nearest 0.3 (the label's rule)
        on_0 = np.flatnonzero(view.column == 0)
        j = int(on_0[np.argmin(abs(view.threshold[on_0] - 0.3))])
        mapped = data.user_tree(_stump(j), view)
        assert (mapped.feature[0], mapped.threshold[0]) == (0, view.threshold[j])
        data.binary(cap)  # the view a search asks for is the one in use
        assert data.user_tree(_stump(j)).threshold[0] == view.threshold[j]
    assert small.threshold.tolist() != full.threshold[: small.n_features].tolist()
