"""The greedy numeric tree (satdt.dp.greedy): consistency, thresholds, a NumPy reference, scikit-learn."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from satdt.core.errors import DataError, SatdtError
from satdt.dp import _greedy_kernels, greedy
from satdt.dp._greedy_numpy import grow_numpy
from satdt.dp.greedy import greedy_numeric_tree
from satdt.models.tree import LEAF, Tree

# ---------------------------------------------------------------------------- reference


def reference_greedy(
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    n_classes: int,
    max_depth: int | None = None,
) -> tuple[float, bool]:
    """The greedy Gini rule, straightforwardly: ``(training error, some choice was a near tie)``.

    At each node, for every column in order and every gap between consecutive distinct values
    of the node's rows (ascending), ``score = sum_k L_k**2 / w_L + sum_k R_k**2 / w_R`` (a side
    of weight 0 counting 0); the first candidate with the largest score wins. Growth stops at
    pure nodes (a single class of positive weight), identical rows and ``max_depth``. The flag
    says whether a chosen split had a rival splitting the rows differently with a score within
    1e-9 (relative): there another implementation may choose the other one.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    weighted = np.eye(n_classes)[y] * w[:, None]

    def grow(rows: np.ndarray, depth: int) -> tuple[float, bool]:
        counts = weighted[rows].sum(axis=0)
        total = counts.sum()
        error = float(total - counts.max())
        if np.count_nonzero(counts > 0) < 2 or (max_depth is not None and depth >= max_depth):
            return error, False
        candidates = []  # (score, rows going left)
        for c in range(X.shape[1]):
            order = rows[np.argsort(X[rows, c], kind="stable")]
            values = X[order, c]
            cumulative = np.cumsum(weighted[order], axis=0)
            w_cumulative = np.cumsum(w[order])
            for g in np.flatnonzero(values[1:] != values[:-1]):
                left = cumulative[g]
                right = counts - left
                w_left = w_cumulative[g]
                w_right = total - w_left
                score = 0.0
                if w_left > 0:
                    score += (left**2).sum() / w_left
                if w_right > 0:
                    score += (right**2).sum() / w_right
                candidates.append((score, order[: g + 1]))
        if not candidates:
            return error, False
        best = max(range(len(candidates)), key=lambda i: (candidates[i][0], -i))
        score, left_rows = candidates[best]
        chosen = frozenset(left_rows.tolist())
        tied = any(
            abs(other - score) <= 1e-9 * abs(score) and frozenset(rows_.tolist()) != chosen
            for other, rows_ in candidates
        )
        right_rows = np.setdiff1d(rows, left_rows)
        e_left, t_left = grow(np.sort(left_rows), depth + 1)
        e_right, t_right = grow(right_rows, depth + 1)
        return e_left + e_right, tied or t_left or t_right

    return grow(np.arange(len(y)), 0)


def training_error(tree: Tree, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """Weight of the rows the tree misclassifies."""
    return float(w[tree.predict_index(X) != y].sum())


def node_rows(tree: Tree, X: np.ndarray) -> list[np.ndarray]:
    """The training rows reaching each node."""
    rows: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * tree.n_nodes
    rows[0] = np.arange(len(X))
    for i in range(tree.n_nodes):  # preorder: parents first
        if tree.feature[i] != LEAF:
            goes_left = X[rows[i], tree.feature[i]] <= tree.threshold[i]
            rows[tree.left[i]] = rows[i][goes_left]
            rows[tree.right[i]] = rows[i][~goes_left]
    return rows


# ---------------------------------------------------------------------------- data

# few distinct values, so that rows and values repeat; spaced far beyond scikit-learn's 1e-7
VALUES = st.sampled_from([-1.5, 0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 3.75])


@st.composite
def tables(draw, min_rows: int = 1, max_rows: int = 24, max_cols: int = 3, weighted: bool = True):
    """``(X, y, w, n_classes)``: small tables, integer weights (or all 1)."""
    n = draw(st.integers(min_rows, max_rows))
    p = draw(st.integers(1, max_cols))
    n_classes = draw(st.integers(2, 3))
    X = draw(arrays(np.float64, (n, p), elements=VALUES, fill=st.nothing()))
    y = draw(arrays(np.int64, n, elements=st.integers(0, n_classes - 1), fill=st.nothing()))
    if weighted and draw(st.booleans()):
        w = draw(arrays(np.float64, n, elements=st.integers(1, 3).map(float)))
    else:
        w = np.ones(n)
    return X, y, w, n_classes


def without_contradictions(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Labels where identical rows share the label of the first of them."""
    _, first, inverse = np.unique(X, axis=0, return_index=True, return_inverse=True)
    return y[first[inverse.ravel()]]


def numba_tree(X, y, n_classes, sample_weight=None, max_depth=None, deadline=None) -> Tree:
    """The tree of the Numba kernels (``greedy_numeric_tree`` grows small tables in NumPy)."""
    X, y, w = greedy._check_inputs(X, y, n_classes, sample_weight, max_depth)
    return greedy._grow_numba(X, y, n_classes, w, max_depth, deadline)[0]


def fit(X, y, w, n_classes, **kwargs) -> Tree:
    weights = None if np.all(w == 1) else w
    return greedy_numeric_tree(X, y, n_classes, sample_weight=weights, **kwargs)


# ---------------------------------------------------------------------------- properties


@settings(deadline=None, max_examples=examples(150))
@given(tables())
def test_fully_grown_tree_is_consistent(table):
    X, y, w, n_classes = table
    y = without_contradictions(X, y)
    tree = fit(X, y, w, n_classes)
    assert np.array_equal(tree.predict_index(X), y)
    assert np.array_equal(tree.classes, np.arange(n_classes))
    # the counts are the training class weights reaching each node
    assert np.array_equal(tree.counts, tree.with_counts(X, y, w).counts)


@settings(deadline=None, max_examples=examples(150))
@given(tables(), st.sampled_from([None, 1, 2]))
def test_thresholds_lie_between_consecutive_values_of_the_node(table, max_depth):
    X, y, w, n_classes = table
    tree = fit(X, y, w, n_classes, max_depth=max_depth)
    for i, rows in enumerate(node_rows(tree, X)):
        if tree.feature[i] == LEAF:
            continue
        values = X[rows, tree.feature[i]]
        t = tree.threshold[i]
        below, above = values[values <= t], values[values > t]
        assert below.size and above.size  # the split separates the node's rows
        lo, hi = below.max(), above.min()  # consecutive distinct values of the node
        assert lo < t < hi or np.nextafter(lo, np.inf) == hi
        assert len(repr(float(t))) <= 8  # the shortest decimal, printed exactly


@settings(deadline=None, max_examples=examples(200))
@given(tables(min_rows=4, max_rows=30), st.integers(0, 3))
def test_training_error_matches_the_reference(table, max_depth):
    X, y, w, n_classes = table
    tree = fit(X, y, w, n_classes, max_depth=max_depth)
    assert tree.depth <= max_depth
    expected, _ = reference_greedy(X, y, w, n_classes, max_depth)
    assert training_error(tree, X, y, w) == expected


@settings(deadline=None, max_examples=examples(200))
@given(tables(min_rows=10, max_rows=40, max_cols=4), st.integers(1, 3))
def test_training_error_matches_scikit_learn_without_ties(table, max_depth):
    tree_module = pytest.importorskip("sklearn.tree")
    X, y, w, n_classes = table
    _, tied = reference_greedy(X, y, w, n_classes, max_depth)
    if tied:
        return  # scikit-learn visits the columns in a random order: ties may go either way
    tree = fit(X, y, w, n_classes, max_depth=max_depth)
    cart = tree_module.DecisionTreeClassifier(max_depth=max_depth, criterion="gini", random_state=0)
    cart.fit(X, y, sample_weight=w)
    cart_error = float(w[cart.predict(X) != y].sum())
    assert training_error(tree, X, y, w) == pytest.approx(cart_error)


@pytest.mark.parametrize("seed", range(4))
def test_scikit_learn_agreement_on_continuous_data(seed):
    tree_module = pytest.importorskip("sklearn.tree")
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((300, 5)), 3)
    y = (X[:, 0] + X[:, 1] ** 2 + 0.4 * rng.random(300) > 1.0).astype(int) + (X[:, 2] > 0.7)
    w = np.ones(300)
    error, tied = reference_greedy(X, y, w, 3, 3)
    tree = greedy_numeric_tree(X, y, 3, max_depth=3)
    assert training_error(tree, X, y, w) == error
    cart = tree_module.DecisionTreeClassifier(max_depth=3, criterion="gini", random_state=0)
    cart_error = float((cart.fit(X, y).predict(X) != y).sum())
    if not tied:
        assert error == cart_error


@settings(deadline=None, max_examples=examples(100))
@given(tables(weighted=False), st.data())
def test_integer_weights_act_as_repeated_rows(table, data):
    X, y, _, n_classes = table
    w = data.draw(arrays(np.int64, len(y), elements=st.integers(1, 3)))
    max_depth = data.draw(st.sampled_from([None, 1, 2]))
    weighted = greedy_numeric_tree(X, y, n_classes, sample_weight=w, max_depth=max_depth)
    repeated = greedy_numeric_tree(
        np.repeat(X, w, axis=0), np.repeat(y, w), n_classes, max_depth=max_depth
    )
    assert weighted == repeated


def test_weights_change_the_prediction():
    X = np.array([[0.0], [0.0], [0.0]])  # identical rows: a single leaf
    y = np.array([0, 1, 1])
    assert greedy_numeric_tree(X, y, 2).value[0] == 1
    tree = greedy_numeric_tree(X, y, 2, sample_weight=np.array([5.0, 1.0, 1.0]))
    assert tree.n_nodes == 1 and tree.value[0] == 0
    assert np.array_equal(tree.counts, [[5.0, 2.0]])


@settings(deadline=None, max_examples=examples(100))
@given(tables(max_rows=40), st.sampled_from([None, 2]))
def test_a_passed_deadline_still_gives_a_consistent_tree(table, max_depth):
    X, y, w, n_classes = table
    y = without_contradictions(X, y)
    tree = fit(X, y, w, n_classes, max_depth=max_depth, deadline=0.0)
    if max_depth is None:
        assert np.array_equal(tree.predict_index(X), y)
    else:
        assert tree.depth <= max_depth


def test_a_tiny_deadline_on_larger_data():
    rng = np.random.default_rng(1)
    X = np.round(rng.random((5000, 6)), 2)
    y = without_contradictions(X, rng.integers(0, 3, 5000))
    tree, fell_back = greedy._grow(X, y, 3, None, None, time.perf_counter())
    assert fell_back
    assert np.array_equal(tree.predict_index(X), y)
    # the balanced rule keeps the tree shallow: each side keeps a quarter of a node's rows
    assert tree.depth <= np.log(len(y)) / np.log(4 / 3) + 1


def _node_rows(tree: Tree) -> np.ndarray:
    return tree.counts.sum(axis=1)


def test_past_the_deadline_every_split_keeps_a_quarter_of_the_rows():
    # alternating classes along one column: Gini peels one row off at a time (n levels,
    # O(n^2) work); past the deadline each side keeps a quarter of its node's rows at least
    n = 2000
    X = np.arange(n, dtype=np.float64)[:, None]
    y = np.arange(n) % 2
    gini, fell_back = greedy._grow(X, y, 2, None, None, None)
    assert not fell_back and gini.depth > n // 4
    for grow in (greedy._grow, _greedy_numpy_grow):
        tree, fell_back = grow(X, y, 2, None, None, 0.0)
        assert fell_back
        assert np.array_equal(tree.predict_index(X), y)
        rows = _node_rows(tree)
        internal = np.flatnonzero(tree.left >= 0)
        smaller = np.minimum(rows[tree.left[internal]], rows[tree.right[internal]])
        assert (smaller >= np.maximum(1, rows[internal] // 4)).all()
        assert tree.depth <= np.log(n) / np.log(4 / 3) + 1
    assert greedy_numeric_tree(X, y, 2, balanced=True) == tree  # the same rule from the start


def _greedy_numpy_grow(X, y, n_classes, w, max_depth, deadline):
    X, y, w = greedy._check_inputs(X, y, n_classes, w, max_depth)
    return grow_numpy(X, y, n_classes, w, max_depth, deadline)


def test_past_the_deadline_the_columns_that_separate_the_classes_stay_in_use():
    # a diagonal separates the classes: the balanced rule goes on splitting on x0 and x1, where
    # a median rule on the column with the most distinct values (here the other columns)
    # grows a node per few rows
    rng = np.random.default_rng(5)
    X = rng.random((20_000, 6))
    X[:, :2] = np.round(X[:, :2], 3)
    y = (X[:, 0] + X[:, 1] > 1).astype(np.int64)
    gini = greedy_numeric_tree(X, y, 2)
    tree, fell_back = greedy._grow(X, y, 2, None, None, 0.0)
    assert fell_back and np.array_equal(tree.predict_index(X), y)
    assert tree.n_nodes <= 2 * gini.n_nodes  # the median rule: 20,295 nodes, Gini 287


def test_resuming_after_each_node_changes_nothing(monkeypatch):
    rng = np.random.default_rng(2)
    X = np.round(rng.random((3000, 4)), 2)
    y = without_contradictions(X, rng.integers(0, 2, 3000))
    w = rng.integers(1, 4, 3000).astype(float)
    expected = [
        greedy_numeric_tree(X, y, 2),
        greedy_numeric_tree(X, y, 2, sample_weight=w),
        greedy_numeric_tree(X, y, 2, max_depth=3),
    ]
    assert expected[0].depth > 4
    monkeypatch.setattr(greedy, "_BUDGET", 1)  # back to Python after every split
    monkeypatch.setattr(greedy, "_STACK", 1)  # and whenever the stack is full
    for local in (0, 1, 37, 1000, 1 << 20):  # subtrees renumbering their rows, from none to all
        monkeypatch.setattr(greedy, "_LOCAL", local)
        assert numba_tree(X, y, 2) == expected[0]
        assert numba_tree(X, y, 2, sample_weight=w) == expected[1]
        assert numba_tree(X, y, 2, max_depth=3) == expected[2]


class _Clock:
    """A fake ``time`` module whose clock advances by one at each look."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


def test_a_deadline_passing_during_growth(monkeypatch):
    rng = np.random.default_rng(4)
    X = np.round(rng.random((3000, 4)), 2)
    y = without_contradictions(X, rng.integers(0, 3, 3000))
    gini = greedy_numeric_tree(X, y, 3)
    monkeypatch.setattr(greedy, "_BUDGET", 1)
    monkeypatch.setattr(greedy, "time", _Clock())
    X, y, w = greedy._check_inputs(X, y, 3, None, None)
    tree, fell_back = greedy._grow_numba(X, y, 3, w, None, 10.5)  # Gini for the first 10 splits
    assert fell_back
    assert np.array_equal(tree.predict_index(X), y)
    assert tree.to_nested() != gini.to_nested()
    assert tree.feature[:5].tolist() == gini.feature[:5].tolist()  # the top still by Gini


def test_ties_go_to_the_lowest_column_then_the_lowest_threshold():
    # splits after the first and after the third row score the same, on both columns
    X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    y = np.array([0, 1, 1, 0])
    tree = greedy_numeric_tree(X, y, 2, max_depth=1)
    assert (tree.feature[0], tree.threshold[0]) == (0, 0.5)


def test_thresholds_print_exactly():
    X = np.array([[0.1], [0.2], [0.3], [1 / 3]])
    y = np.array([0, 1, 1, 0])
    tree = greedy_numeric_tree(X, y, 2)
    text = tree.export_text()
    assert "x[0] <= 0.15" in text
    assert "x[0] <= 0.316667" in text  # between 0.3 and 1/3: 6 significant digits suffice


def test_a_known_tree():
    X = np.array([[1.0, 5.0], [2.0, 6.0], [3.0, 5.0], [4.0, 6.0]])
    y = np.array([0, 0, 1, 1])
    tree = greedy_numeric_tree(X, y, 2)
    assert tree.to_nested() == (0, 2.5, 0, 1)
    assert np.array_equal(tree.counts, [[2, 2], [2, 0], [0, 2]])


def test_multiclass_on_random_data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 4))
    y = rng.integers(0, 5, 2000)
    tree = greedy_numeric_tree(X, y, 5)
    assert np.array_equal(tree.predict_index(X), y)
    shallow = greedy_numeric_tree(X, y, 5, max_depth=2)
    expected, _ = reference_greedy(X, y, np.ones(2000), 5, 2)
    assert training_error(shallow, X, y, np.ones(2000)) == expected


def test_negative_zero_equals_zero():
    X = np.array([[-0.0], [0.0], [1.0]])
    y = np.array([0, 1, 1])
    tree = greedy_numeric_tree(X, y, 2)  # -0.0 and 0.0 cannot be told apart
    assert tree.n_nodes == 3 and tree.threshold[0] == 0.5


def test_wide_class_codes(monkeypatch):
    # codes rank << shift | class too wide for the kernels' int32: the NumPy twin grows the tree
    rng = np.random.default_rng(0)
    X = np.round(rng.random((100, 3)), 2)
    y = without_contradictions(X, rng.integers(0, 2, 100))
    narrow = numba_tree(X, y, 2)
    monkeypatch.setattr(greedy, "_CODE_LIMIT", 64)
    monkeypatch.setattr(greedy, "_grow_numba", None)  # not called
    assert greedy_numeric_tree(X, y, 2) == narrow


def test_edge_cases():
    empty = greedy_numeric_tree(np.zeros((0, 3)), np.zeros(0, dtype=int), 2)
    assert empty.n_nodes == 1 and empty.value[0] == 0
    no_columns = greedy_numeric_tree(np.zeros((3, 0)), np.array([1, 1, 0]), 2)
    assert no_columns.n_nodes == 1 and no_columns.value[0] == 1
    one_class = greedy_numeric_tree(np.arange(4.0)[:, None], np.zeros(4, dtype=int), 1)
    assert one_class.n_nodes == 1
    strided = np.asfortranarray(np.arange(12.0).reshape(6, 2))
    assert greedy_numeric_tree(strided, np.array([0, 0, 0, 1, 1, 1]), 2).to_nested() == (
        0,
        5.0,
        0,
        1,
    )


@pytest.mark.parametrize(
    ("X", "y", "kwargs", "error"),
    [
        (np.array([[np.nan], [1.0]]), [0, 1], {}, DataError),
        (np.array([[np.inf], [1.0]]), [0, 1], {}, DataError),
        (np.array([[0.0], [1.0]]), [0, 2], {}, DataError),
        (np.array([[0.0], [1.0]]), [0, -1], {}, DataError),
        (np.array([[0.0], [1.0]]), [0.0, 1.0], {}, DataError),
        (np.array([[0.0], [1.0]]), [0], {}, DataError),
        (np.array([0.0, 1.0]), [0, 1], {}, DataError),
        (np.array([[0.0], [1.0]]), [0, 1], {"sample_weight": [1.0, -1.0]}, DataError),
        (np.array([[0.0], [1.0]]), [0, 1], {"sample_weight": [1.0]}, DataError),
        (np.array([[0.0], [1.0]]), [0, 1], {"max_depth": -1}, SatdtError),
        (np.array([[0.0], [1.0]]), [0, 1], {"max_depth": 1.5}, SatdtError),
    ],
)
def test_invalid_input_is_rejected(X, y, kwargs, error):
    with pytest.raises(error):
        greedy_numeric_tree(X, np.asarray(y), 2, **kwargs)


@pytest.mark.parametrize("distinct", [50, 40_000])  # counting sort, radix sort
def test_presort_orders_rows_and_ranks_values(distinct):
    rng = np.random.default_rng(distinct)
    n = 50_000
    pool = np.concatenate(
        [rng.normal(scale=1e3, size=distinct - 6), [-0.0, 0.0, 5e-324, -1e300, 1e300, 2.5]]
    )
    X = np.ascontiguousarray(rng.choice(pool, size=(n, 5)))
    X[:, 4] = np.round(X[:, 4])  # fewer distinct values in one column
    y = rng.integers(0, 3, n).astype(np.int32)
    idx = np.empty((5, n), dtype=np.int32)
    code = np.empty((5, n), dtype=np.int32)
    _greedy_kernels.presort(X, y, 2, idx, code)
    for c in range(5):
        _, rank = np.unique(X[:, c], return_inverse=True)  # -0.0 == 0.0 for np.unique too
        assert np.array_equal(np.sort(idx[c]), np.arange(n))
        assert np.all(np.diff(X[idx[c], c]) >= 0)
        assert np.array_equal(code[c] >> 2, rank.ravel()[idx[c]])
        assert np.array_equal(code[c] & 3, y[idx[c]])
        # stable: equal values keep row order
        same = np.diff(code[c] >> 2) == 0
        assert np.all(np.diff(idx[c])[same] > 0)


def test_many_distinct_values_match_the_reference():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20_000, 2))  # more distinct values than the counting sort takes
    y = (X[:, 0] * X[:, 1] + 0.5 * rng.normal(size=20_000) > 0).astype(int)
    w = np.ones(20_000)
    tree = greedy_numeric_tree(X, y, 2, max_depth=2)
    expected, _ = reference_greedy(X, y, w, 2, 2)
    assert training_error(tree, X, y, w) == expected
    assert np.array_equal(greedy_numeric_tree(X, y, 2).predict_index(X), y)
