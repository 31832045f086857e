"""Binary features x[c] > t: satdt.prepare.binarize."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from naive import distinct_feature_columns

from satdt.core.errors import DataError, SatdtError
from satdt.data import from_arrays, read_csv
from satdt.prepare.binarize import Binarizer
from satdt.prepare.rows import column_bitsets, distinct_features, group_rows, unpack_columns

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it


@pytest.mark.parametrize(
    ("name", "count"),
    [
        ("mouse", 40),
        ("iris", 119),
        ("car", 15),
        ("monk1", 11),
        ("monk2", 11),
        ("monk3", 11),
        ("wine", 1263),
        ("balance-scale", 16),
    ],
)
def test_counts_on_inferdt_files(data_dir: Path, name: str, count: int) -> None:
    data = read_csv(data_dir / "inferdt" / f"{name}.csv")
    binarizer = Binarizer().fit(
        data.X, feature_names=data.feature_names, indicator=data.schema.indicator
    )
    assert binarizer.n_features_ == count
    assert binarizer.describe() == f"full thresholds: {count} binary features"
    B = binarizer.transform(data.X)
    assert B.shape == (len(data.X), count)


def test_thresholds_are_midpoints_ordered_by_column() -> None:
    X = np.array([[4.0, 7, 0], [1, 7, 1], [2, 7, 1], [4, 7, 0]])
    binarizer = Binarizer().fit(X, feature_names=["a", "b", "c"])
    np.testing.assert_array_equal(binarizer.column_, [0, 0, 2])
    np.testing.assert_array_equal(binarizer.threshold_, [1.5, 3.0, 0.5])
    assert binarizer.names_ == ["a > 1.5", "a > 3", "c > 0.5"]
    assert binarizer.column_.dtype == np.int64 and binarizer.threshold_.dtype == np.float64


def test_transform_semantics() -> None:
    rng = np.random.default_rng(1)
    X = rng.integers(0, 6, size=(40, 5)) / 2
    binarizer = Binarizer().fit(X)
    B = binarizer.fit_transform(X)
    assert B.dtype == np.uint8 and B.flags.c_contiguous
    for j in range(binarizer.n_features_):
        expected = X[:, binarizer.column_[j]] > binarizer.threshold_[j]
        np.testing.assert_array_equal(B[:, j], expected)
    # on new rows too, including values never seen
    Z = rng.normal(size=(10, 5))
    for j, (c, t) in enumerate(zip(binarizer.column_, binarizer.threshold_, strict=True)):
        np.testing.assert_array_equal(binarizer.transform(Z)[:, j], Z[:, c] > t)


def test_indicator_names() -> None:
    raw = np.array([[1.5, "red"], [2.5, "blue"], [2.5, "red"]], dtype=object)
    X, schema, _ = from_arrays(raw, feature_names=["size", "colour"])
    binarizer = Binarizer().fit(X, feature_names=schema.feature_names, indicator=schema.indicator)
    assert binarizer.names_ == ["size > 2", "colour == blue", "colour == red"]
    np.testing.assert_array_equal(binarizer.threshold_, [2.0, 0.5, 0.5])


def test_default_names() -> None:
    assert Binarizer().fit(np.array([[0.0], [1.0]])).names_ == ["x[0] > 0.5"]


def test_names_are_short_but_still_separate_the_values() -> None:
    X = np.array([[2.4], [2.5], [1.0000001], [1.0000002]])
    binarizer = Binarizer().fit(X)
    # 6 significant digits would print the first threshold as 1, which splits nothing;
    # "> 1.0000001" splits the two values like the midpoint 1.00000015 does
    assert binarizer.names_ == ["x[0] > 1.0000001", "x[0] > 1.7", "x[0] > 2.45"]


def test_adjacent_floats_are_separated() -> None:
    a = 1.0
    b = np.nextafter(a, 2.0)
    X = np.array([[a], [b]])
    binarizer = Binarizer().fit(X)
    np.testing.assert_array_equal(binarizer.transform(X)[:, 0], [0, 1])
    t = float(binarizer.names_[0].split(" > ")[1])
    assert a <= t < b


def test_max_thresholds_limits_each_column() -> None:
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(size=200), rng.integers(0, 3, 200), np.arange(200) % 40])
    full = Binarizer().fit(X)
    limited = Binarizer(max_thresholds=5).fit(X)
    per_column = np.bincount(limited.column_, minlength=3)
    assert per_column.tolist()[1] == 2  # 2 candidate thresholds <= 5: all kept
    assert 1 <= per_column[0] <= 5 and 1 <= per_column[2] <= 5
    assert per_column[0] == 5  # distinct values everywhere: 5 different quantile gaps
    # every kept threshold is one of the full thresholds, still ordered by column then value
    full_pairs = set(zip(full.column_.tolist(), full.threshold_.tolist(), strict=True))
    assert (
        set(zip(limited.column_.tolist(), limited.threshold_.tolist(), strict=True)) <= full_pairs
    )
    order = np.lexsort((limited.threshold_, limited.column_))
    np.testing.assert_array_equal(order, np.arange(limited.n_features_))
    assert limited.describe() == (
        f"at most 5 quantile thresholds per column: {limited.n_features_} binary features"
    )


def test_max_thresholds_one_is_the_median_gap() -> None:
    X = np.array([[1.0], [2], [3], [4], [5]])
    binarizer = Binarizer(max_thresholds=1).fit(X)
    np.testing.assert_array_equal(binarizer.threshold_, [3.5])


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_bad_max_thresholds(bad: object) -> None:
    with pytest.raises(SatdtError, match="max_thresholds"):
        Binarizer(max_thresholds=bad).fit(np.zeros((2, 1)))  # type: ignore[arg-type]


def test_errors() -> None:
    with pytest.raises(SatdtError, match="not fitted"):
        Binarizer().transform(np.zeros((2, 2)))
    binarizer = Binarizer().fit(np.array([[0.0, 1.0], [1.0, 0.0]]))
    with pytest.raises(DataError, match="fitted on 2"):
        binarizer.transform(np.zeros((2, 3)))
    with pytest.raises(DataError, match="infinite"):
        Binarizer().fit(np.array([[0.0], [np.inf]]))


def test_constant_columns_give_no_feature() -> None:
    binarizer = Binarizer().fit(np.ones((4, 3)))
    assert binarizer.n_features_ == 0
    assert binarizer.transform(np.ones((4, 3))).shape == (4, 0)


# ---------------------------------------------------------------------- distinct features
def test_distinct_features_example() -> None:
    B = np.array(
        [
            [0, 1, 1, 0, 0, 1],
            [1, 1, 0, 1, 0, 0],
            [1, 1, 0, 1, 0, 1],
        ],
        dtype=np.uint8,
    )
    # column 1 constant, 2 complements 0, 3 duplicates 0, 4 constant, 5 new
    kept = distinct_features(B)
    assert kept.dtype == np.int64
    np.testing.assert_array_equal(kept, [0, 5])
    assert distinct_features(np.zeros((0, 4), dtype=np.uint8)).size == 0


@settings(deadline=None, max_examples=examples(150))
@given(
    hnp.arrays(
        np.uint8,
        st.tuples(st.integers(1, 20), st.integers(0, 12)),
        elements=st.integers(0, 1),
    )
)
def test_distinct_features_matches_brute_force(B: np.ndarray) -> None:
    assert distinct_features(B).tolist() == distinct_feature_columns(B)


def test_distinct_features_many_rows_and_columns() -> None:
    rng = np.random.default_rng(3)
    B = (rng.random((1000, 300)) < 0.5).astype(np.uint8)
    B[:, 100:150] = B[:, :50]
    B[:, 150:200] = 1 - B[:, 50:100]
    B[:, 200] = 1
    kept = distinct_features(B)
    assert kept.tolist() == [*range(100), *range(201, 300)]


@settings(deadline=None, max_examples=examples(100))
@given(
    hnp.arrays(
        np.uint8,
        st.tuples(st.integers(1, 150), st.integers(1, 70)),
        elements=st.integers(0, 1),
    )
)
def test_bitsets_round_trip_and_group_rows(B: np.ndarray) -> None:
    np.testing.assert_array_equal(unpack_columns(column_bitsets(B), B.shape[0]), B)
    first, group = group_rows(B)
    # same group exactly when the rows are equal; first is the smallest row of its group
    for i in range(len(B)):
        assert np.array_equal(B[i], B[first[group[i]]])
        assert first[group[i]] <= i
    assert len(first) == len({tuple(row) for row in B.tolist()})


def test_group_rows_of_floats_treats_negative_zero_as_zero() -> None:
    X = np.array([[0.0, 1.5], [-0.0, 1.5], [0.0, 2.5]])
    first, group = group_rows(X)
    assert group[0] == group[1] != group[2]
    assert sorted(first.tolist()) == [0, 2]


def test_transform_bits_equals_transform() -> None:
    rng = np.random.default_rng(5)
    X = np.round(rng.random((1001, 4)), 2)
    binarizer = Binarizer().fit(X)
    bits = binarizer.transform_bits(X)
    np.testing.assert_array_equal(unpack_columns(bits, len(X)), binarizer.transform(X))


def test_max_features_lowers_the_threshold_count() -> None:
    rng = np.random.default_rng(6)
    X = np.round(rng.random((500, 3)), 3)
    full = Binarizer().fit(X)
    capped = Binarizer(max_features=60).fit(X)
    assert full.reduced_to_ is None and full.n_full_ == full.n_features_
    assert capped.n_full_ == full.n_features_
    assert capped.n_features_ <= 60 and capped.reduced_to_ is not None
    assert "quantile" in capped.describe() and str(full.n_features_) in capped.describe()
    assert Binarizer(max_features=10**6).fit(X).reduced_to_ is None


def test_binarizer_in_a_pipeline_takes_y_as_labels_not_names():
    pipeline = pytest.importorskip("sklearn.pipeline")
    linear = pytest.importorskip("sklearn.linear_model")
    X = np.array([[0.0, 5.0], [1.0, 3.0], [2.0, 4.0], [3.0, 1.0]])
    y = np.array(["no", "no", "yes", "yes"])
    model = pipeline.make_pipeline(Binarizer(), linear.LogisticRegression()).fit(X, y)
    assert model[0].names_[0] == "x[0] > 0.5"  # not named after the labels
    assert model.score(X, y) == 1.0


def test_the_old_positional_feature_names_still_work_with_a_future_warning():
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    with pytest.warns(FutureWarning, match="feature_names="):
        binarizer = Binarizer().fit(X, ["a", "b"])
    assert binarizer.names_ == ["a > 0.5", "b > 0.5"]
