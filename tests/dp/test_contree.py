"""ConTree (satdt.dp.contree): brute force (also with a leaf penalty and a minimum support),
agreement with Blossom, max_gap, anytime, edge cases."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import ROOT, dp_settings, examples
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_error, threshold_features

from satdt.core.errors import DataError, ParameterError
from satdt.dp import blossom, contree, contree_starts
from satdt.dp.common import SearchSettings
from satdt.dp.greedy import greedy_numeric_tree
from satdt.prepare.binarize import Binarizer
from satdt.task.result import Recorder

REPO = ROOT
CONTINUOUS = REPO.parent / "shared" / "data" / "continuous"
SWITCHES = sorted(contree.PRUNING)


def load_continuous(name: str, rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A file of the ConTree paper (label first), optionally its first ``rows`` rows, or skip."""
    path = CONTINUOUS / f"{name}.txt"
    if not path.exists():
        pytest.skip(f"shared data not found: {path} (the continuous files live in ../shared/data)")
    table = np.loadtxt(path, ndmin=2, max_rows=rows)
    return np.ascontiguousarray(table[:, 1:]), table[:, 0].astype(np.int64)


def load_iris() -> tuple[np.ndarray, np.ndarray]:
    path = REPO / "examples" / "data" / "iris.csv"
    if not path.exists():
        pytest.skip(f"example data not found: {path}")
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    return np.ascontiguousarray(table[:, :-1]), table[:, -1].astype(np.int64)


def run(X, y, n_classes, depth, weight=None, **kwargs):
    recorder = kwargs.pop("recorder", None) or Recorder("error")
    shared, own = dp_settings(kwargs, sample_weight=weight, recorder=recorder)
    return contree.solve_min_error(X, y, n_classes, depth, shared, contree.ConTreeOptions(**own))


def tree_error(tree, X, y, weight=None) -> float:
    """The weighted error of a tree, by predicting (independent of the search)."""
    weight = np.ones(len(y)) if weight is None else weight
    return float(weight[tree.predict_index(X) != y].sum())


def brute_force(X, y, weight, n_classes, depth) -> float:
    """Exhaustive search over every threshold of every column (all midpoints of the data)."""
    if X.shape[1] == 0 or len(y) == 0:
        return min_error(np.zeros((len(y), 0), dtype=np.uint8), y, weight, n_classes, depth)
    B = Binarizer(max_thresholds=None).fit(X).transform(X)
    return min_error(B, y, weight, n_classes, depth)


@st.composite
def tiny_numeric(draw):
    """Tiny numeric data with many ties and repeated rows, several classes, some weights."""
    n = draw(st.integers(1, 11))
    m = draw(st.integers(1, 3))
    n_classes = draw(st.integers(1, 3))
    levels = draw(st.integers(1, 4))
    X = np.array(
        draw(st.lists(st.integers(0, levels), min_size=n * m, max_size=n * m)), dtype=np.float64
    ).reshape(n, m)
    X = X * 0.37 - 0.5  # non-integer values with exact ties
    y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
    if draw(st.booleans()):
        weight = np.array(
            draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n))
        )
    else:
        weight = None
    return X, y, weight, n_classes


@settings(deadline=None, max_examples=examples(250))
@given(tiny_numeric(), st.integers(0, 3), st.sampled_from([None, *SWITCHES]))
def test_matches_brute_force(problem, depth, off):
    X, y, weight, n_classes = problem
    prune = contree.PRUNING - {off} if off else contree.PRUNING
    result = run(X, y, n_classes, depth, weight, prune=prune)
    w = np.ones(len(y)) if weight is None else weight
    expected = brute_force(X, y, w, n_classes, depth)
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(expected, abs=1e-9)
    assert result.lower_bound == pytest.approx(expected, abs=1e-9)
    assert result.model.depth <= depth
    assert tree_error(result.model, X, y, w) == pytest.approx(expected, abs=1e-9)


@st.composite
def tiny_weighted(draw):
    """Tiny numeric data for the leaf penalty and the support rule: 2-4 classes, weights with
    zeros, repeated rows (few levels per column)."""
    n = draw(st.integers(1, 14))
    m = draw(st.integers(1, 2))
    n_classes = draw(st.integers(2, 4))
    levels = draw(st.integers(1, 5))
    X = np.array(
        draw(st.lists(st.integers(0, levels), min_size=n * m, max_size=n * m)), dtype=np.float64
    ).reshape(n, m)
    X = X * 0.37 - 0.5
    y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
    weight = np.array(
        draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n))
    )
    return X, y, weight, n_classes


def leaf_supports(tree, X, weight) -> np.ndarray:
    """Training rows of positive weight reaching each leaf."""
    reached = np.bincount(tree.apply(X[weight > 0]), minlength=tree.n_nodes)
    return reached[tree.left < 0]


# no penalty, a small one (below a row's weight), a large one (no split pays for itself)
PENALTIES = [0.0, 0.3, 1.0, 1000.0]


@settings(deadline=None, max_examples=examples(200))
@given(
    tiny_weighted(),
    st.integers(0, 3),
    st.sampled_from(PENALTIES),
    st.integers(1, 3),
    st.sampled_from([None, *SWITCHES]),
)
def test_penalty_and_support_match_brute_force(problem, depth, penalty, support, off):
    X, y, weight, n_classes = problem
    prune = contree.PRUNING - {off} if off else contree.PRUNING
    result = run(
        X, y, n_classes, depth, weight, leaf_penalty=penalty, min_support=support, prune=prune
    )
    B = threshold_features(X)
    expected = min_error(B, y, weight, n_classes, depth, min_support=support, leaf_penalty=penalty)
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(expected, abs=1e-9)
    assert result.lower_bound == pytest.approx(expected, abs=1e-9)
    tree = result.model
    assert tree.depth <= depth
    cost = tree_error(tree, X, y, weight) + penalty * tree.n_leaves
    assert cost == pytest.approx(expected, abs=1e-9)
    if tree.n_leaves > 1:
        assert leaf_supports(tree, X, weight).min() >= support
    if penalty == 1000.0:
        assert tree.n_leaves == 1


@st.composite
def many_classes(draw):
    """Tiny numeric data with 3-7 classes (so that the class-weight bounds of the depth-two
    kernel and of Branch prune), weights with zeros, repeated rows."""
    n = draw(st.integers(2, 16))
    m = draw(st.integers(1, 3))
    n_classes = draw(st.integers(3, 7))
    levels = draw(st.integers(1, 6))
    X = np.array(
        draw(st.lists(st.integers(0, levels), min_size=n * m, max_size=n * m)), dtype=np.float64
    ).reshape(n, m)
    X = X * 0.37 - 0.5
    y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
    weight = np.array(
        draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n))
    )
    return X, y, weight, n_classes


@settings(deadline=None, max_examples=examples(200))
@given(
    many_classes(),
    st.integers(1, 3),
    st.sampled_from([0.0, 0.3, 1.0, 2.5]),
    st.integers(1, 3),
    st.sampled_from([None, *SWITCHES]),
)
def test_many_classes_match_brute_force(problem, depth, penalty, support, off):
    """The class-weight bounds (a side of a split classifies at most its 2^d heaviest classes
    right) keep every optimum: multi-class, weighted, with a penalty and a support rule."""
    X, y, weight, n_classes = problem
    prune = contree.PRUNING - {off} if off else contree.PRUNING
    result = run(
        X, y, n_classes, depth, weight, leaf_penalty=penalty, min_support=support, prune=prune
    )
    B = threshold_features(X)
    expected = min_error(B, y, weight, n_classes, depth, min_support=support, leaf_penalty=penalty)
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(expected, abs=1e-9)
    tree = result.model
    cost = tree_error(tree, X, y, weight) + penalty * tree.n_leaves
    assert cost == pytest.approx(expected, abs=1e-9)
    if tree.n_leaves > 1:
        assert leaf_supports(tree, X, weight).min() >= support


@settings(deadline=None, max_examples=examples(150))
@given(many_classes(), st.integers(1, 2), st.sampled_from([0.0, 0.3, 2.5]), st.integers(1, 3))
def test_class_weight_bounds_are_lower_bounds(problem, depth, penalty, support):
    """The class-weight bounds never exceed the brute-force optima: Branch's bound on the two
    sides of a split at depth 1 or 2 (``_Search._bounds``), the depth-two kernel's bound on a
    side at depth one (``side_bound``) and its least cost of a split (``least_split``)."""
    from satdt.dp import _contree_scan as d2
    from satdt.dp import kernels

    kernels.load(["contree_d2"])
    X, y, weight, n_classes = problem
    keep = weight > 0
    X, y, weight = X[keep], y[keep], weight[keep]
    if len(y) < 2:
        return
    prep = contree.prepare_numeric(X, y, weight, n_classes)
    flags, d2_on = contree._flags(contree.PRUNING)
    stats = contree.ConTreeStats()
    search = contree._Search(prep, flags, d2_on, 1, None, stats, print, penalty, support)
    order = contree._root_order(prep)
    B = threshold_features(X)

    def optimum(rows, d):
        return min_error(B[rows], y[rows], weight[rows], n_classes, d, support, penalty)

    def sums(rows):  # class weights, total weight and irreducible error of distinct rows
        return prep.W[rows].sum(axis=0), float(prep.rw[rows].sum()), float(prep.rirr[rows].sum())

    FQ, tot, floor = sums(order[0])
    least = d2.least_split(FQ, tot, floor, penalty)
    assert min(tot - FQ.max() + penalty, least) <= optimum(np.arange(len(y)), 2) + 1e-9
    rank0 = prep.Rt[0][order[0]]
    for r in np.unique(rank0)[:-1]:  # every split of the first column
        bounds = search._bounds(order[0][rank0 <= r], FQ, tot, floor, depth)
        for part, bound in zip((rank0 <= r, rank0 > r), bounds, strict=True):
            rows = np.flatnonzero(np.isin(np.searchsorted(prep.values[0], X[:, 0]), rank0[part]))
            assert bound <= optimum(rows, depth) + 1e-9
            assert d2.side_bound(*sums(order[0][part]), penalty) <= optimum(rows, 1) + 1e-9


def test_support_bounds_without_monotonicity():
    """Under a support rule a row set can cost less than a subset of it (the subset may be
    too small to split): Branch must not prune with monotonicity here (optimum 0)."""
    X = np.array([[1.0, 1.0], [2.0, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 2.0], [2.0, 0.0]])
    y = np.array([1, 0, 1, 1, 1, 0])
    B = threshold_features(X)
    for prune in (contree.PRUNING, ()):
        result = run(X, y, 2, 2, min_support=2, prune=prune)
        assert result.objective_value == min_error(B, y, np.ones(6), 2, 2, min_support=2) == 0.0


@pytest.mark.parametrize("penalty,support", [(0.0, 4), (3.0, 1), (1.5, 6)])
def test_penalty_and_support_agree_with_blossom(penalty, support):
    options = {"leaf_penalty": penalty, "min_support": support}
    for depth, rows in ((2, 150), (3, 80)):
        X, y = load_continuous("bank", rows)
        B = Binarizer(max_thresholds=None).fit(X).transform(X)
        ours = run(X, y, 2, depth, **options)
        theirs = blossom.solve_min_error(
            B, y, 2, depth, SearchSettings(recorder=Recorder("error"), **options)
        )
        assert ours.proven_optimal and theirs.proven_optimal
        assert ours.objective_value == pytest.approx(theirs.objective_value, abs=1e-9)
        tree = ours.model
        cost = tree_error(tree, X, y) + penalty * tree.n_leaves
        assert cost == pytest.approx(ours.objective_value, abs=1e-9)
        assert leaf_supports(tree, X, np.ones(len(y))).min() >= support


def test_penalty_with_gap_upper_bound_and_a_time_limit():
    X, y = load_continuous("raisin", 300)
    penalty = 2.0
    exact = run(X, y, 2, 3, leaf_penalty=penalty, min_support=3)
    gapped = run(X, y, 2, 3, leaf_penalty=penalty, min_support=3, max_gap=5.0)
    assert exact.proven_optimal and not gapped.proven_optimal
    assert exact.objective_value <= gapped.objective_value <= exact.objective_value + 5.0
    assert gapped.lower_bound <= exact.objective_value
    # an incumbent given as a cost
    greedy = greedy_numeric_tree(X, y, 2, max_depth=3)
    recorder = Recorder("error")
    bound = tree_error(greedy, X, y) + penalty * greedy.n_leaves
    recorder.improve(greedy, bound)
    again = run(X, y, 2, 3, recorder=recorder, upper_bound=bound, leaf_penalty=penalty)
    plain = run(X, y, 2, 3, leaf_penalty=penalty)
    assert again.objective_value == plain.objective_value
    # with a time limit at depth four: every incumbent's value is its cost
    timed = run(X, y, 2, 4, deadline=time.perf_counter() + 0.5, leaf_penalty=penalty)
    for incumbent in timed.history:
        tree = incumbent.model
        assert tree_error(tree, X, y) + penalty * tree.n_leaves == pytest.approx(incumbent.value)
    assert timed.lower_bound <= timed.objective_value


def test_blossom_trees_carry_the_penalty_and_the_support():
    """The primal phase (Blossom on quantile thresholds) searches with the same penalty and
    support, and each tree it hands over has the cost reported."""
    from satdt.dp import kernels

    kernels.load(["blossom"])
    X, y = load_continuous("raisin", 300)
    w = np.ones(len(y))
    prep = contree.prepare_numeric(X, y, w, 2)
    found = []
    until = time.perf_counter() + 1.0
    rows = contree._Rows(X, y, w, 2, prep, pen=2.0, s=5)
    contree_starts.primal(rows, lambda *tree: found.append(tree), 4, until)
    assert found
    for value, node in found:
        tree = contree_starts.to_tree(node, prep, X, y, w, 2)
        assert tree_error(tree, X, y) + 2.0 * tree.n_leaves == pytest.approx(value)
        assert leaf_supports(tree, X, w).min() >= 5


def test_rejects_bad_leaf_options():
    X = np.zeros((3, 2))
    y = np.array([0, 1, 0])
    with pytest.raises(ParameterError, match="leaf_penalty"):
        run(X, y, 2, 2, leaf_penalty=-1.0)
    with pytest.raises(ParameterError, match="min_support"):
        run(X, y, 2, 2, min_support=0)


@settings(deadline=None, max_examples=examples(60))
@given(tiny_numeric(), st.integers(1, 3))
def test_every_switch_off_matches(problem, depth):
    X, y, weight, n_classes = problem
    full = run(X, y, n_classes, depth, weight).objective_value
    none = run(X, y, n_classes, depth, weight, prune=()).objective_value
    assert none == pytest.approx(full, abs=1e-9)


def test_thresholds_are_the_binarizer_thresholds():
    rng = np.random.default_rng(3)
    X = np.round(rng.random((80, 3)), 2)
    y = (X[:, 0] + X[:, 1] > 1).astype(int) ^ (X[:, 2] > 0.7)
    tree = run(X, y, 2, 3).model
    binarizer = Binarizer(max_thresholds=None).fit(X)
    for node in np.flatnonzero(tree.left >= 0):
        column = tree.feature[node]
        allowed = binarizer.threshold_[binarizer.column_ == column]
        assert tree.threshold[node] in allowed


@pytest.mark.parametrize(
    "name,rows,depth",
    [
        ("iris", None, 2),
        ("iris", None, 3),
        ("bank", 300, 2),
        ("raisin", 200, 2),
        ("bank", 100, 3),
        ("raisin", 80, 3),
    ],
)
def test_agrees_with_blossom_quick(name, rows, depth):
    X, y = load_iris() if name == "iris" else load_continuous(name, rows)
    check_against_blossom(X, y, depth)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name,rows,depth",
    [
        ("bank", None, 2),
        ("raisin", None, 2),
        ("bank", 250, 3),
        ("raisin", 150, 3),
        ("segment", 80, 3),
        ("page", 300, 2),
        ("fault", 150, 2),
        ("avila", 300, 2),
        ("occupancy", 300, 3),
    ],
)
def test_agrees_with_blossom(name, rows, depth):
    X, y = load_continuous(name, rows)
    check_against_blossom(X, y, depth)


def check_against_blossom(X, y, depth):
    n_classes = int(y.max()) + 1
    ours = run(X, y, n_classes, depth)
    B = Binarizer(max_thresholds=None).fit(X).transform(X)
    theirs = blossom.solve_min_error(
        B, y, n_classes, depth, SearchSettings(recorder=Recorder("error"))
    )
    assert ours.proven_optimal and theirs.proven_optimal
    assert ours.objective_value == theirs.objective_value
    assert tree_error(ours.model, X, y) == ours.objective_value
    assert ours.model.depth <= depth


@pytest.mark.parametrize("gap", [0.05, 6.0])
def test_max_gap(gap):
    X, y = load_continuous("raisin", 300)
    exact = run(X, y, 2, 3)
    result = run(X, y, 2, 3, max_gap=gap)
    allowed = gap * len(y) if gap < 1 else gap
    assert exact.proven_optimal
    assert not result.proven_optimal
    assert exact.objective_value <= result.objective_value <= exact.objective_value + allowed
    assert result.lower_bound == pytest.approx(max(result.objective_value - allowed, 0.0))
    assert result.lower_bound <= exact.objective_value
    assert tree_error(result.model, X, y) == result.objective_value


def test_deadline_already_passed_returns_a_tree():
    X, y = load_continuous("raisin", 300)
    result = run(X, y, 2, 3, deadline=time.perf_counter())
    assert not result.proven_optimal
    assert result.stats.interrupted
    assert tree_error(result.model, X, y) == result.objective_value
    assert result.lower_bound <= result.objective_value


@pytest.fixture(scope="module")
def wide_root():
    """A random table of 50,000 x 48 distinct values and 7 classes prepared as ConTree's
    root: more rows x columns than the kernels' work between two looks at the clock."""
    rng = np.random.default_rng(11)
    X = rng.random((50_000, 48))
    y = rng.integers(0, 7, 50_000)
    prep = contree.prepare_numeric(X, y, np.ones(50_000), 7)
    return prep, contree._root_order(prep)


def test_the_depth_two_kernel_looks_at_the_clock_before_its_first_split(wide_root):
    # on 2.4 million cells, a deadline already passed stops the depth-two kernel while it
    # prepares (its best single splits, its sorted copies), before any D2Split: a depth-two
    # subproblem of 10^5 rows used to run its whole preparation and first split unchecked
    from satdt.dp import _contree_d2
    from satdt.dp import _contree_kernels as k

    prep, order = wide_root
    m, n = order.shape
    assert n * m > 2 * _contree_d2.CLOCK_WORK
    rule = np.zeros(k.N_RULE)
    rule[k.RULE_SUPPORT] = 1
    out = np.zeros(k.N_OUT, dtype=np.int64)
    goleft = np.zeros(n, dtype=np.bool_)
    args = (order, prep.Rt, prep.W, prep.rw, prep.rirr, prep.cls, prep.rc, rule, np.inf, 0.0)
    _contree_d2.solve_d2(*args, 15, goleft, out, 0.0)
    assert out[k.O_TIMEOUT] == 1 and out[k.O_D2SPLITS] == 0  # (before: one split, then)


def test_past_the_deadline_a_search_stops_between_columns(wide_root):
    # the best single splits of every column (one pass each) and the columns' sort look at
    # the clock between columns; a search past its deadline raises at once
    from satdt.core.errors import TimeUp
    from satdt.dp import _contree_kernels as k

    prep, order = wide_root
    m, n = order.shape
    scratch = (np.empty((m, n), dtype=np.int64), np.empty((m, n)), np.empty(m, dtype=np.int64))
    FQ = np.zeros(7)
    tot, _ = k.class_totals(order[0], prep.W, prep.rw, prep.rirr, FQ)
    common = (order, prep.Rt, prep.W, prep.rw, prep.rc, 1, FQ, tot, np.zeros(7), *scratch)
    assert not k.depth_one_all(*common, np.empty(m), np.empty(m, dtype=np.int64), 0.0)
    assert k.depth_one_all(*common, np.empty(m), np.empty(m, dtype=np.int64), np.inf)
    looks = []

    def check_time() -> None:
        looks.append(1)
        if len(looks) == 3:
            raise TimeUp

    with pytest.raises(TimeUp):
        contree._root_order(prep, check_time)
    assert len(looks) == 3
    stats = contree.ConTreeStats()
    search = contree._Search(prep, 15, True, 64, 0.0, stats, lambda value, node: None)
    with pytest.raises(TimeUp):
        search.solve(order, 3, np.inf, root=True)
    assert stats.expansions == 0 and stats.bottom_solves == 0


def test_deadline_honoured_and_improvements_reported():
    X, y = load_continuous("page")
    start = time.perf_counter()
    result = run(X, y, int(y.max()) + 1, 4, deadline=start + 1.0)
    elapsed = time.perf_counter() - start
    assert elapsed < 3.0
    assert not result.proven_optimal
    values = [incumbent.value for incumbent in result.history]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
    for incumbent in result.history:
        assert tree_error(incumbent.model, X, y) == incumbent.value


def test_upper_bound_from_a_greedy_tree():
    X, y = load_continuous("raisin", 300)
    greedy = greedy_numeric_tree(X, y, 2, max_depth=3)
    recorder = Recorder("error")
    error = tree_error(greedy, X, y)
    recorder.improve(greedy, error)
    result = run(X, y, 2, 3, recorder=recorder, upper_bound=error)
    exact = run(X, y, 2, 3)
    assert result.proven_optimal
    assert result.objective_value == exact.objective_value


def test_upper_bound_needs_its_tree():
    X, y = load_continuous("raisin", 50)
    with pytest.raises(DataError, match="upper_bound"):
        run(X, y, 2, 2, upper_bound=3.0)


def test_cache_cap_keeps_the_search_exact():
    X, y = load_continuous("bank", 400)
    full = run(X, y, 2, 4)
    capped = run(X, y, 2, 4, max_cache_mb=0.0)
    assert capped.objective_value == full.objective_value
    assert capped.stats.cache_full and capped.stats.cache_entries == 0
    assert full.stats.cache_entries > 0


def test_duplicates_zero_weights_and_trivial_data():
    X = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [2.0, 2.0]])
    y = np.array([0, 1, 1, 1, 0])
    w = np.array([1.0, 2.0, 0.0, 1.0, 1.0])
    result = run(X, y, 2, 2, w)
    assert result.objective_value == 1.0  # the first two rows cannot be separated
    assert result.stats.distinct_rows == 3
    one = run(X[:1], y[:1], 2, 3)
    assert one.objective_value == 0.0 and one.model.n_nodes == 1
    pure = run(X, np.zeros(5, dtype=int), 1, 3)
    assert pure.objective_value == 0.0 and pure.proven_optimal
    no_columns = run(np.zeros((5, 0)), np.array([0, 1, 1, 0, 1]), 2, 3)
    assert no_columns.objective_value == 2.0 and no_columns.model.n_nodes == 1
    no_rows = run(np.zeros((0, 3)), np.zeros(0, dtype=int), 2, 3)
    assert no_rows.objective_value == 0.0 and no_rows.proven_optimal


def test_rejects_bad_inputs():
    X = np.zeros((3, 2))
    y = np.array([0, 1, 0])
    with pytest.raises(ParameterError, match="unknown pruning"):
        run(X, y, 2, 2, prune={"fast"})
    with pytest.raises(DataError, match="finite"):
        run(np.array([[np.nan], [1.0], [2.0]]), y, 2, 2)
    with pytest.raises(DataError, match="class indices"):
        run(X, np.array([0, 2, 0]), 2, 2)
    with pytest.raises(ParameterError, match="max_gap"):
        run(X, y, 2, 2, max_gap=-1.0)


def test_with_a_time_limit_at_depth_four_blossom_trees_come_early():
    X, y = load_continuous("segment")
    n_classes = int(y.max()) + 1
    start = time.perf_counter()
    result = run(X, y, n_classes, 4, deadline=start + 4.0)
    assert time.perf_counter() - start < 6.0
    assert tree_error(result.model, X, y) == result.objective_value
    greedy = result.history[0].value
    # the greedy tree is improved on by Blossom's quantile-threshold trees within the limit
    assert result.objective_value < greedy
    assert result.history[1].elapsed < 3.0  # the exact search alone: after 4 s
