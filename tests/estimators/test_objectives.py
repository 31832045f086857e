"""The error objective's options through the estimator: leaf penalty, minimum leaf support and
class weights, in every error method, against brute force; and the command line's flags."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import ROOT, examples, tiny_tables
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import min_error, threshold_features

from satdt import OptimalDiagramClassifier, OptimalTreeClassifier, ParameterError, SatdtError
from satdt.cli import main
from satdt.core.errors import InfeasibleError
from satdt.models.tree import Tree
from satdt.prepare.validate import class_weights

ERROR_METHODS = ("blossom", "dl85", "cadl85", "portfolio", "contree")


def _fit(X, y, w=None, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every fit here must be proven
        return OptimalTreeClassifier(objective="error", **params).fit(X, y, sample_weight=w)


def _cost(model, X, y, w, leaf_penalty):
    """The penalised objective of the fitted tree, recomputed from its predictions."""
    wrong = model.predict(X) != y
    return w[wrong].sum() / w.sum() + leaf_penalty * model.tree_.n_leaves


def _leaf_support(model, X, w) -> int:
    leaves = model.apply(X[w > 0])
    return int(np.bincount(leaves)[np.unique(leaves)].min())


@pytest.mark.parametrize("method", ERROR_METHODS)
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    table=tiny_tables(),
    depth=st.integers(0, 3),
    leaf_penalty=st.sampled_from([0.0, 0.02, 0.1, 0.3]),
    min_support=st.sampled_from([1, 2, 3]),
)
def test_penalty_and_support_match_brute_force(method, table, depth, leaf_penalty, min_support):
    X, y, w = table
    labels = np.unique(y[w > 0])
    if len(labels) < 2 or min_support > np.count_nonzero(w > 0):
        return
    keep = w > 0
    model = _fit(
        X, y, w, method=method, max_depth=depth, leaf_penalty=leaf_penalty, min_support=min_support
    )
    result = model.result_
    total = w.sum()
    # the brute force over every threshold split, on the rows of positive weight (class
    # indices as the estimator numbers them)
    y_index = np.searchsorted(labels, y[keep])
    B = threshold_features(X[keep])
    expected = min_error(B, y_index, w[keep], len(labels), depth, min_support, leaf_penalty * total)
    expected /= total if leaf_penalty > 0 else 1.0
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(expected, abs=1e-9)
    recomputed = _cost(model, X, y, w, leaf_penalty)
    if leaf_penalty > 0:
        assert recomputed == pytest.approx(result.objective_value, abs=1e-9)
    else:
        assert recomputed * total == pytest.approx(result.objective_value, abs=1e-9)
    if model.tree_.n_leaves > 1:
        assert _leaf_support(model, X, w) >= min_support
    assert model.tree_.depth <= depth


@pytest.mark.parametrize("method", ERROR_METHODS)
def test_zero_penalty_is_todays_search_and_a_tiny_one_keeps_the_fewest_errors(method):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(80, 4)).astype(float)
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 2, 80) > 3).astype(int)
    plain = _fit(X, y, method=method, max_depth=3)
    zero = _fit(X, y, method=method, max_depth=3, leaf_penalty=0.0)
    assert zero.tree_ == plain.tree_
    assert zero.result_.objective_value == plain.result_.objective_value
    # a penalty too small to trade one error for a leaf: the fewest errors, then fewest leaves
    tiny = _fit(X, y, method=method, max_depth=3, leaf_penalty=1e-4)
    errors = int((tiny.predict(X) != y).sum())
    assert errors == plain.result_.objective_value
    assert tiny.tree_.n_leaves <= plain.tree_.n_leaves
    assert tiny.result_.objective_value == pytest.approx(errors / 80 + 1e-4 * tiny.tree_.n_leaves)


@pytest.mark.parametrize("method", ERROR_METHODS)
def test_a_large_penalty_gives_one_leaf(method):
    rng = np.random.default_rng(4)
    X = rng.random((60, 3))
    y = (X[:, 0] > 0.5).astype(int)
    model = _fit(X, y, method=method, max_depth=3, leaf_penalty=0.6)
    assert model.tree_.n_leaves == 1
    assert model.result_.objective_value == pytest.approx(min(y.mean(), 1 - y.mean()) + 0.6)


def test_penalty_weighs_a_leaf_against_the_errors_it_saves():
    # one split saves 10 of 100 rows: worth it below a penalty of 0.1 per leaf, not above
    X = np.r_[np.zeros(90), np.ones(10)].reshape(-1, 1)
    y = np.r_[np.zeros(90, int), np.ones(10, int)]
    assert _fit(X, y, max_depth=2, leaf_penalty=0.09).tree_.n_leaves == 2
    assert _fit(X, y, max_depth=2, leaf_penalty=0.11).tree_.n_leaves == 1


def test_summary_and_history_are_in_the_penalised_units():
    rng = np.random.default_rng(5)
    X = rng.random((200, 4))
    y = (X[:, 0] + 0.3 * rng.random(200) > 0.6).astype(int)
    model = _fit(X, y, max_depth=3, leaf_penalty=0.01)
    result = model.result_
    assert result.lower_bound == pytest.approx(result.objective_value)
    assert result.history[-1].value == pytest.approx(result.objective_value)
    assert all(a.value >= b.value for a, b in zip(result.history, result.history[1:], strict=False))
    assert result.objective_value == pytest.approx(_cost(model, X, y, np.ones(200), 0.01))


@pytest.mark.parametrize("method", ERROR_METHODS)
def test_balanced_class_weight_equals_its_sample_weight(method):
    rng = np.random.default_rng(6)
    X = rng.integers(0, 5, size=(90, 3)).astype(float)
    y = np.where(rng.random(90) < 0.2, "rare", "common")
    y[X[:, 0] > 3] = "rare"
    counts = {label: (y == label).sum() for label in np.unique(y)}
    weight = np.array([90 / (2 * counts[label]) for label in y])
    by_class = _fit(X, y, method=method, max_depth=2, class_weight="balanced")
    by_rows = _fit(X, y, weight, method=method, max_depth=2)
    assert by_class.result_.objective_value == pytest.approx(by_rows.result_.objective_value)
    assert by_class.tree_ == by_rows.tree_
    # a dict multiplies sample_weight
    both = _fit(X, y, np.full(90, 2.0), method=method, max_depth=2, class_weight={"rare": 3})
    direct = _fit(X, y, np.where(y == "rare", 6.0, 2.0), method=method, max_depth=2)
    assert both.result_.objective_value == pytest.approx(direct.result_.objective_value)


def test_class_weights_as_scikit_learn_defines_them():
    pytest.importorskip("sklearn")
    from sklearn.utils.class_weight import compute_sample_weight

    y = np.array([0, 0, 0, 1, 2, 2])
    np.testing.assert_allclose(class_weights("balanced", y), compute_sample_weight("balanced", y))
    np.testing.assert_allclose(
        class_weights({1: 4.0, 2: 0.5}, y), compute_sample_weight({1: 4.0, 2: 0.5}, y)
    )
    np.testing.assert_allclose(class_weights({"b": 2}, np.array(["a", "b"])), [1.0, 2.0])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"class_weight": {"nope": 2}}, "class_weight names labels"),
        ({"class_weight": "even"}, "class_weight must be"),
        ({"class_weight": {0: -1}}, r"class_weight\[0\] must be"),
        ({"leaf_penalty": -0.1}, "leaf_penalty must be"),
        ({"leaf_penalty": float("nan")}, "leaf_penalty must be"),
        ({"min_support": 0}, "min_support must be"),
    ],
)
def test_bad_options_are_clear_errors(params, message):
    X, y = np.arange(8.0).reshape(-1, 1), np.array([0, 1] * 4)
    with pytest.raises(SatdtError, match=message):
        OptimalTreeClassifier(objective="error", max_depth=2, **params).fit(X, y)


def test_penalty_and_support_belong_to_the_error_objective():
    X, y = np.arange(8.0).reshape(-1, 1), np.array([0, 1] * 4)
    with pytest.raises(SatdtError, match="leaf_penalty applies to objective='error'"):
        OptimalTreeClassifier(objective="depth", leaf_penalty=0.1).fit(X, y)
    with pytest.raises(SatdtError, match="min_support applies"):
        OptimalTreeClassifier(objective="size", min_support=2).fit(X, y)


def test_min_support_over_the_rows_is_infeasible_and_says_so():
    X, y = np.arange(8.0).reshape(-1, 1), np.array([0, 1] * 4)
    with pytest.raises(InfeasibleError, match="min_support=9 is more than the 8 training rows"):
        OptimalTreeClassifier(objective="error", max_depth=2, min_support=9).fit(X, y)
    # half the rows or more: no split keeps both sides that large, so one leaf
    model = _fit(X, y, max_depth=2, min_support=5)
    assert model.tree_.n_leaves == 1


def _full_tree(depth: int, rng) -> object:
    """A complete tree of random threshold splits on two columns, in nested form."""
    if depth == 0:
        return int(rng.integers(0, 2))
    return (int(rng.integers(0, 2)), float(rng.random()), _full_tree(depth - 1, rng),
            _full_tree(depth - 1, rng))  # fmt: skip


def test_pruned_is_the_cheapest_pruning():
    rng = np.random.default_rng(7)
    X = rng.random((120, 2))
    y = (X[:, 0] > 0.5).astype(int) ^ (rng.random(120) < 0.1)
    deep = Tree.from_nested(_full_tree(4, rng), classes=np.arange(2)).with_counts(X, y)
    for penalty, support in [(0.0, 1), (2.0, 1), (0.5, 10), (100.0, 1)]:
        pruned = deep.pruned(penalty, support, X, y, np.ones(len(y)))
        cost = pruned.count_error() + penalty * pruned.n_leaves
        assert cost <= deep.count_error() + penalty * deep.n_leaves + 1e-9
        # no single merge of two sibling leaves makes it cheaper
        for node in np.flatnonzero(pruned.feature >= 0):
            lo, hi = pruned.left[node], pruned.right[node]
            if pruned.feature[lo] < 0 and pruned.feature[hi] < 0:
                merged = pruned.counts[node].sum() - pruned.counts[node].max() + penalty
                split = pruned.counts[lo].sum() - pruned.counts[lo].max() + penalty
                split += pruned.counts[hi].sum() - pruned.counts[hi].max() + penalty
                assert split < merged
        leaves = pruned.apply(X)
        if pruned.n_leaves > 1:
            assert np.bincount(leaves)[np.unique(leaves)].min() >= support
    assert deep.pruned(100.0, 1, X, y, np.ones(len(y))).n_leaves == 1
    assert deep.pruned(0.0, 1, X, y, np.ones(len(y))).n_leaves <= deep.n_leaves


def test_grid_search_over_leaf_penalty():
    pytest.importorskip("sklearn")
    from sklearn.model_selection import GridSearchCV

    rng = np.random.default_rng(8)
    X = rng.random((120, 3))
    y = ((X[:, 0] > 0.5) ^ (rng.random(120) < 0.15)).astype(int)
    search = GridSearchCV(
        OptimalTreeClassifier(objective="error", max_depth=3, max_thresholds=8),
        {"leaf_penalty": [0.0, 0.01, 0.05]},
        cv=3,
    ).fit(X, y)
    assert search.best_params_["leaf_penalty"] in (0.0, 0.01, 0.05)
    assert search.best_estimator_.tree_.n_leaves >= 1
    assert 0.5 <= search.best_score_ <= 1.0


def test_diagram_class_weight_equals_its_sample_weight():
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 1], [0, 0]] * 2, dtype=float)
    y = np.array([0, 1, 1, 0, 1, 0] * 2)
    params = dict(widths=(1, 2), method="tree", alpha=0.0)
    by_class = OptimalDiagramClassifier(class_weight={1: 3.0}, **params).fit(X, y)
    by_rows = OptimalDiagramClassifier(**params).fit(X, y, sample_weight=np.where(y == 1, 3, 1))
    assert by_class.result_.objective_value == pytest.approx(by_rows.result_.objective_value)
    with pytest.raises(SatdtError, match="class_weight"):
        OptimalDiagramClassifier(class_weight=[1, 2], **params).fit(X, y)


# ---------------------------------------------------------------------- command line
def _csv(tmp_path):
    rng = np.random.default_rng(9)
    X = rng.integers(0, 6, size=(60, 3))
    y = np.where(X[:, 0] + rng.integers(0, 3, 60) > 5, "yes", "no")
    path = tmp_path / "table.csv"
    lines = ["a,b,c,label"] + [
        f"{a},{b},{c},{label}" for (a, b, c), label in zip(X, y, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_leaf_penalty_min_support_and_class_weight(tmp_path, capsys):
    path = _csv(tmp_path)
    code = main(["fit", str(path), "--max-depth", "3", "--leaf-penalty", "0.02"])
    out = capsys.readouterr().out
    assert code == 0
    assert "objective: " in out and "errors / weight + 0.02 * leaves (proven optimal)" in out
    assert "errors: " in out and "leaves" in out
    code = main(["fit", str(path), "--max-depth", "3", "--min-support", "8", "--format", "json"])
    assert code == 0
    capsys.readouterr()
    for weights in ("balanced", "yes=3,no=1"):
        code = main(["fit", str(path), "--max-depth", "2", "--class-weight", weights])
        assert code == 0
        assert "proven optimal" in capsys.readouterr().out


def test_cli_bad_error_options_exit_2_without_traceback(tmp_path, capsys):
    path = _csv(tmp_path)
    assert main(["fit", str(path), "--max-depth", "2", "--leaf-penalty", "-1"]) == 2
    assert "--leaf-penalty must be a number >= 0, got -1" in capsys.readouterr().err
    assert main(["fit", str(path), "--max-depth", "2", "--class-weight", "maybe=2"]) == 2
    assert "class_weight names labels" in capsys.readouterr().err.replace(
        "--class-weight", "class_weight"
    )
    with pytest.raises(SystemExit):
        main(["fit", str(path), "--max-depth", "2", "--class-weight", "yes"])
    assert main(["fit", str(path), "--max-depth", "2", "--min-support", "61"]) == 1
    assert "no leaf can hold that many" in capsys.readouterr().err


@settings(deadline=None, max_examples=examples(40))
@given(
    st.integers(1, 3).flatmap(
        lambda p: st.tuples(
            st.lists(st.lists(st.integers(0, 1), min_size=p, max_size=p), min_size=2, max_size=10),
            st.lists(st.integers(0, 2), min_size=10, max_size=10),
            st.sampled_from([0.01, 0.05, 0.15]),
        )
    )
)
def test_a_leaf_penalty_without_max_depth_equals_a_depth_that_cannot_bind(case):
    rows, labels, penalty = case
    X = np.array(rows, dtype=float)
    y = np.array(labels[: len(rows)])
    free = OptimalTreeClassifier(objective="error", leaf_penalty=penalty).fit(X, y)
    # a path tests each of the p binary columns at most once: depth p cannot bind
    bound = OptimalTreeClassifier(objective="error", leaf_penalty=penalty, max_depth=X.shape[1])
    bound.fit(X, y)
    assert free.result_.proven_optimal
    assert free.result_.objective_value == pytest.approx(bound.result_.objective_value)
    assert free.result_.lower_bound == pytest.approx(free.result_.objective_value)


def test_no_max_depth_needs_a_leaf_penalty():
    with pytest.raises(ParameterError, match=r"needs max_depth .* or a leaf_penalty > 0"):
        OptimalTreeClassifier(objective="error").fit([[0.0], [1.0]], [0, 1])


def test_cli_fit_without_max_depth_takes_a_leaf_penalty(capsys):

    iris = ROOT / "examples" / "data" / "iris.csv"
    assert main(["fit", str(iris), "--leaf-penalty", "0.02"]) == 0
    out = capsys.readouterr().out
    assert "(proven optimal)" in out and "depth: 2 (any depth)" in out
    assert main(["fit", str(iris)]) == 2
    assert "needs --max-depth" in capsys.readouterr().err
