"""Misclassification costs (cost_matrix) in every error search: brute force on tiny weighted
multi-class data, alone and with sample_weight, class_weight, leaf_penalty and min_support;
the special cases that are today's searches; the reduction's algebra; errors and the CLI."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import min_cost, threshold_features

from satdt import OptimalTreeClassifier, ParameterError
from satdt.cli import main
from satdt.prepare.costs import cost_matrix, reduce_costs
from satdt.prepare.validate import class_weights

ERROR_METHODS = ("blossom", "dl85", "cadl85", "portfolio", "contree", "auto")


@st.composite
def costed_tables(draw):
    """4-9 rows, 1-2 columns of a few values, 2-3 classes (all present), weights, a matrix."""
    n = draw(st.integers(4, 9))
    m = draw(st.integers(1, 2))
    K = draw(st.integers(2, 3))
    X = np.array(
        draw(st.lists(st.lists(st.integers(0, 3), min_size=m, max_size=m), min_size=n, max_size=n)),
        dtype=float,
    )
    y = np.array(draw(st.lists(st.integers(0, K - 1), min_size=n, max_size=n)))
    y[:K] = np.arange(K)  # every class present: the matrix is K x K
    w = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n)))
    costs = st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.0])
    C = np.array(draw(st.lists(st.lists(costs, min_size=K, max_size=K), min_size=K, max_size=K)))
    np.fill_diagonal(C, 0.0)
    if not (C > 0).any():
        C[0, 1] = 1.0
    return X, y, w, C


def _fit(X, y, w=None, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every fit here must be proven
        return OptimalTreeClassifier(objective="error", **params).fit(X, y, sample_weight=w)


def _true_cost(model, X, y, w, C):
    predicted = np.searchsorted(model.classes_, model.predict(X))
    return float(np.dot(w, C[np.searchsorted(model.classes_, y), predicted]))


@pytest.mark.parametrize("method", ERROR_METHODS)
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    table=costed_tables(),
    depth=st.integers(0, 3),
    leaf_penalty=st.sampled_from([0.0, 0.0, 0.05, 0.2]),
    min_support=st.sampled_from([1, 1, 2, 3]),
    class_weight=st.sampled_from([None, "balanced", {0: 3.0}]),
)
def test_costs_match_brute_force(method, table, depth, leaf_penalty, min_support, class_weight):
    """The optimum of every search is the brute force's, and the fitted tree has that cost
    (recomputed from its predictions), its leaves hold min_support rows, and predict_proba
    gives the training class frequencies of the user's labels."""
    X, y, w, C = table
    if min_support > len(y):
        return
    model = _fit(
        X,
        y,
        w,
        method=method,
        max_depth=depth,
        cost_matrix=C,
        leaf_penalty=leaf_penalty,
        min_support=min_support,
        class_weight=class_weight,
    )
    weight = w * (1.0 if class_weight is None else class_weights(class_weight, y))
    total = weight.sum()
    B = threshold_features(X)
    expected = min_cost(B, y, weight, C, depth, min_support, leaf_penalty * total)
    result = model.result_
    assert result.proven_optimal
    scale = 1 / total if leaf_penalty > 0 else 1.0
    assert result.objective_value == pytest.approx(expected * scale, abs=1e-9)
    assert result.lower_bound == pytest.approx(result.objective_value, abs=1e-9)
    cost = _true_cost(model, X, y, weight, C)
    assert result.training_error == pytest.approx(cost, abs=1e-9)
    n_leaves = model.tree_.n_leaves
    assert (cost + leaf_penalty * total * n_leaves) * scale == pytest.approx(
        result.objective_value, abs=1e-9
    )
    assert all(v >= result.objective_value - 1e-9 for _, v, _ in result.history)
    leaves = model.apply(X)
    if n_leaves > 1:
        assert np.bincount(leaves)[np.unique(leaves)].min() >= min_support
    # predict_proba: the weighted frequencies of the user's labels in the row's leaf
    proba = model.predict_proba(X)
    for leaf in np.unique(leaves):
        here = leaves == leaf
        counts = np.bincount(y[here], weights=weight[here], minlength=len(C))
        np.testing.assert_allclose(proba[here][0], counts / counts.sum())
        # the leaf's class is one of least cost for its rows
        predicted = np.searchsorted(model.classes_, model.predict(X[here][:1]))[0]
        assert counts @ C[:, predicted] == pytest.approx((counts @ C).min(), abs=1e-9)


@pytest.mark.parametrize("method", ERROR_METHODS)
@pytest.mark.parametrize("scale", [1.0, 3.5])
def test_scaled_identity_complement_gives_todays_tree(method, scale):
    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, size=(70, 3)).astype(float)
    y = (X[:, 0] + rng.integers(0, 3, 70)) % 3
    plain = _fit(X, y, method=method, max_depth=2)
    costed = _fit(X, y, method=method, max_depth=2, cost_matrix=scale * (1 - np.eye(3)))
    assert costed.tree_ == plain.tree_
    assert costed.result_.objective_value == pytest.approx(
        scale * plain.result_.objective_value, rel=1e-12
    )
    np.testing.assert_allclose(costed.predict_proba(X), plain.predict_proba(X))


@pytest.mark.parametrize("method", ERROR_METHODS)
def test_two_class_costs_are_the_class_weights_they_stand_for(method):
    rng = np.random.default_rng(7)
    X = rng.integers(0, 5, size=(90, 3)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] + rng.integers(0, 3, 90) > 5, "sick", "well")
    w = rng.choice([1.0, 2.0], size=90)
    weighted = _fit(X, y, w, method=method, max_depth=3, class_weight={"sick": 4.0, "well": 1.5})
    costed = _fit(
        X,
        y,
        w,
        method=method,
        max_depth=3,
        cost_matrix={"sick": {"well": 4}, "well": {"sick": 1.5}},
    )
    # the same splits and leaves; the class counts stay the rows' own (sample_weight only)
    assert costed.tree_.to_nested() == weighted.tree_.to_nested()
    assert costed.result_.objective_value == pytest.approx(weighted.result_.objective_value)
    assert costed.tree_ == weighted.tree_.with_counts(X, np.searchsorted(["sick", "well"], y), w)


def test_all_methods_agree_on_a_larger_multiclass_table():
    rng = np.random.default_rng(11)
    X = rng.integers(0, 6, size=(150, 4)).astype(float)
    y = (X[:, 0] + X[:, 2] + rng.integers(0, 3, 150)) % 4
    C = rng.choice([1.0, 2.0, 5.0], size=(4, 4))
    np.fill_diagonal(C, 0)
    values = {
        m: _fit(X, y, method=m, max_depth=3, cost_matrix=C, min_support=3).result_.objective_value
        for m in ERROR_METHODS
    }
    assert max(values.values()) == pytest.approx(min(values.values()))


@settings(max_examples=examples(50), deadline=None)
@given(
    y=st.lists(st.integers(0, 2), min_size=1, max_size=8),
    costs=st.lists(st.sampled_from([0.0, 1.0, 2.5, 4.0]), min_size=9, max_size=9),
    min_support=st.sampled_from([1, 2]),
)
def test_the_reduction_is_cost_plus_a_constant(y, costs, min_support):
    """For every prediction of one leaf, the rewritten rows' weighted error when it predicts
    its heaviest class equals the least cost plus the offset, and each row becomes the same
    number of rows when a minimum support needs it."""
    y = np.array(y)
    C = np.array(costs).reshape(3, 3)
    np.fill_diagonal(C, 0)
    if not (C > 0).any():
        return
    w = np.linspace(1.0, 2.0, len(y))
    reduction = reduce_costs(y, w, C, min_support)
    g = np.bincount(reduction.y, weights=reduction.weight, minlength=3)
    least = min(float(np.dot(w, C[y, b])) for b in range(3))
    assert g.sum() - g.max() == pytest.approx(least + reduction.offset)
    assert float(np.dot(w, C[y, int(g.argmax())])) == pytest.approx(least)
    per_row = np.bincount(reduction.rows, minlength=len(y))
    assert (per_row >= 1).all()
    if min_support > 1:
        assert (per_row == reduction.factor).all()


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ([[0, 1, 2], [1, 0, 2]], r"must be square .* got shape \(2, 3\)"),
        ([[0, 1, 1], [1, 0, 1], [1, 1, 0]], r"is 3 x 3 but the training labels have 2 classes"),
        ([[0, -1], [1, 0]], r"entries must be finite numbers >= 0, found -1"),
        ([[1, 1], [1, 0]], r"must have a zero diagonal .* found 1 for class 'a'"),
        ([[0, 0], [0, 0]], r"has no positive cost"),
        ({"c": {"a": 2}}, r"names label 'c', which the training labels \(a, b\) do not have"),
        ({"a": 2}, r"maps each true label to a dict"),
        ("0,1;1,0", r"cost_matrix must be None or a square array"),
    ],
)
def test_bad_cost_matrices_say_the_rule(value, match):
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array(["a", "b", "a", "b"])
    with pytest.raises(ParameterError, match=match):
        OptimalTreeClassifier(objective="error", max_depth=1, cost_matrix=value).fit(X, y)


def test_consistency_objectives_refuse_costs():
    X, y = np.array([[0.0], [1.0]]), np.array([0, 1])
    for objective in ("depth", "size"):
        with pytest.raises(ParameterError, match="cost_matrix applies to objective='error'"):
            OptimalTreeClassifier(objective=objective, cost_matrix=[[0, 1], [1, 0]]).fit(X, y)


def test_a_dict_names_labels_and_unnamed_pairs_cost_one():
    C = cost_matrix({"b": {"a": 5}}, np.array(["a", "b", "c"]))
    np.testing.assert_array_equal(C, [[0, 1, 1], [5, 0, 1], [1, 1, 0]])
    np.testing.assert_array_equal(cost_matrix({1: {0: 2.0}}, np.array([0, 1])), [[0, 1], [2, 0]])


def _csv(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.integers(0, 5, size=(60, 2))
    y = np.where(X[:, 0] + rng.integers(0, 3, 60) > 4, "sick", "well")
    path = tmp_path / "costs.csv"
    rows = ["a,b,label"] + [f"{a},{b},{label}" for (a, b), label in zip(X, y, strict=True)]
    path.write_text("\n".join(rows) + "\n")
    return path, X.astype(float), y


def test_cli_cost_matrix_as_rows_json_and_file(tmp_path, capsys):
    path, X, y = _csv(tmp_path)
    expected = _fit(X, y, max_depth=2, cost_matrix=[[0, 5], [1, 0]]).result_.objective_value
    matrix = tmp_path / "costs.json"
    matrix.write_text(json.dumps({"sick": {"well": 5}}))
    for given_as in ("0,5;1,0", "[[0, 5], [1, 0]]", '{"sick": {"well": 5}}', str(matrix)):
        code = main(
            ["fit", str(path), "--max-depth", "2", "--cost-matrix", given_as, "--format", "json"]
        )
        assert code == 0
        document = json.loads(capsys.readouterr().out)
        assert document["cost"] == pytest.approx(expected)
        assert document["objective_value"] == pytest.approx(expected)
    assert main(["fit", str(path), "--max-depth", "2", "--cost-matrix", "0,5;1,0"]) == 0
    assert f"cost: {expected:g} (proven optimal); errors: " in capsys.readouterr().out


@pytest.mark.parametrize(
    ("given_as", "message"),
    [
        ("0,5,1;1,0,1", "--cost-matrix must be square"),
        ("0,1,1;1,0,1;1,1,0", "--cost-matrix is 3 x 3 but the training labels have 2 classes"),
        ("0,-5;1,0", "--cost-matrix entries must be finite numbers >= 0"),
        ("2,5;1,0", "--cost-matrix must have a zero diagonal"),
        ('{"ill": {"well": 5}}', "--cost-matrix names label 'ill'"),
    ],
)
def test_cli_bad_cost_matrix_exits_2_without_traceback(tmp_path, capsys, given_as, message):
    path, _, _ = _csv(tmp_path)
    assert main(["fit", str(path), "--max-depth", "2", "--cost-matrix", given_as]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("given_as", ["0,5;x,0", "[[0, 5], [1, 0]", "no-such-file.json"])
def test_cli_unreadable_cost_matrix_says_what_it_takes(tmp_path, capsys, given_as):
    path, _, _ = _csv(tmp_path)
    assert main(["fit", str(path), "--max-depth", "2", "--cost-matrix", given_as]) == 2
    err = capsys.readouterr().err
    assert "--cost-matrix must be None or a square array of costs" in err
    assert repr(given_as) in err and "Traceback" not in err


# ---------------------------------------------------------------------- diagrams
@pytest.mark.parametrize("route", ["milp", "maxsat"])
@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    table=costed_tables(), alpha=st.sampled_from([0.0, 0.2]), max_splits=st.sampled_from([None, 1])
)
def test_diagram_costs_match_brute_force(route, table, alpha, max_splits):
    from naive import min_diagram_objective

    from satdt import OptimalDiagramClassifier

    X, y, w, C = table
    X, y, w = X[:7], y[:7], w[:7]
    K = len(C)
    if len(np.unique(y)) < K:
        return
    widths = (1, 2)
    best = min_diagram_objective(X, y, K, widths, alpha, w, max_splits=max_splits, cost_matrix=C)
    model = OptimalDiagramClassifier(
        method=route, widths=widths, alpha=alpha, cost_matrix=C, max_splits=max_splits
    ).fit(X, y, sample_weight=w)
    result = model.result_
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(best, abs=1e-9)
    assert result.lower_bound == pytest.approx(best, abs=1e-9)
    predicted = np.searchsorted(model.classes_, model.predict(X))
    cost = float(np.dot(w, C[y, predicted]))
    assert result.training_error == pytest.approx(cost, abs=1e-9)
    proba = model.predict_proba(X)
    terminals = model.apply(X)
    for t in np.unique(terminals):
        here = terminals == t
        counts = np.bincount(y[here], weights=w[here], minlength=K)
        np.testing.assert_allclose(proba[here][0], counts / counts.sum())


def test_diagram_tree_route_and_identity_complement():
    from satdt import OptimalDiagramClassifier

    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(40, 2)).astype(float)
    y = (X[:, 0] + rng.integers(0, 2, 40)) % 3
    params = {"widths": (1, 2, 4), "alpha": 0.0}
    plain = OptimalDiagramClassifier(method="tree", **params).fit(X, y)
    scaled = OptimalDiagramClassifier(method="tree", cost_matrix=2 * (1 - np.eye(3)), **params)
    scaled.fit(X, y)
    assert scaled.result_.objective_value == pytest.approx(2 * plain.result_.objective_value)
    C = np.array([[0, 1, 4], [2, 0, 1], [1, 3, 0]])
    values = {
        route: OptimalDiagramClassifier(method=route, cost_matrix=C, **params)
        .fit(X, y)
        .result_.objective_value
        for route in ("tree", "milp", "maxsat")
    }
    assert max(values.values()) == pytest.approx(min(values.values()))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"objective": "size"}, "cost_matrix applies to objective='error'"),
        ({"min_flow": 2.0}, "cost_matrix does not go with min_flow"),
        ({"fairness": {"column": "x0"}}, "cost_matrix does not go with fairness"),
    ],
)
def test_diagram_costs_refuse_what_they_cannot_mean(params, match):
    from satdt import OptimalDiagramClassifier

    X, y = np.array([[0.0], [1.0], [2.0]]), np.array([0, 1, 0])
    with pytest.raises(ParameterError, match=match):
        OptimalDiagramClassifier(cost_matrix=[[0, 1], [2, 0]], **params).fit(X, y)


def test_cli_diagram_takes_a_cost_matrix(tmp_path, capsys):
    path, _, _ = _csv(tmp_path)
    code = main(["diagram", str(path), "--widths", "1,2", "--cost-matrix", "0,5;1,0"])
    assert code == 0
    assert "Traceback" not in capsys.readouterr().err


def test_contree_max_gap_stays_a_share_of_the_users_weight():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(120, 3)).round(2)
    y = (X[:, 0] + 0.5 * rng.normal(size=120) > 0).astype(int) + (X[:, 1] > 0.8)
    C = np.array([[0, 1, 3], [6, 0, 1], [2, 2, 0]])
    exact = _fit(X, y, method="contree", max_depth=3, cost_matrix=C).result_.objective_value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gapped = OptimalTreeClassifier(
            objective="error", method="contree", max_depth=3, cost_matrix=C, max_gap=0.05
        ).fit(X, y)
    result = gapped.result_
    assert exact <= result.objective_value <= exact + 0.05 * 120 + 1e-9
    if not result.proven_optimal:
        assert result.gap == pytest.approx(0.05 * 120)


def test_every_incumbent_shown_has_the_users_counts_and_cost():
    """The trees on_improve and the history show carry the user's rows' class counts, and
    their values are costs (a large table: the greedy first tree, pruned under a penalty)."""
    rng = np.random.default_rng(9)
    X = rng.integers(0, 8, size=(13_000, 3)).astype(float)
    y = np.minimum((X[:, 0] + X[:, 1]) // 5, 2)
    noise = rng.random(13_000) < 0.1
    y[noise] = rng.integers(0, 3, noise.sum())
    C = np.array([[0, 1, 3], [6, 0, 1], [2, 2, 0]])
    shown = []
    model = _fit(
        X,
        y,
        method="portfolio",
        max_depth=2,
        cost_matrix=C,
        leaf_penalty=0.001,
        on_improve=shown.append,
    )
    steps = [getattr(event, "step", "") for event in model.result_.events]
    assert any("greedy" in step for step in steps)  # the rewritten rows are over 20,000
    assert model.tree_.n_leaves > 1 and shown
    y_index = y.astype(int)
    for snapshot in shown:
        tree = snapshot.model
        np.testing.assert_allclose(tree.counts, tree.with_counts(X, y_index).counts)
        predicted = tree.predict_index(X)
        value = (C[y_index, predicted].sum() / 13_000) + 0.001 * tree.n_leaves
        assert snapshot.objective_value == pytest.approx(value)


def test_no_depth_limit_with_a_penalty_and_costs():
    rng = np.random.default_rng(12)
    X = rng.integers(0, 4, size=(60, 3)).astype(float)
    y = (X[:, 0] + rng.integers(0, 3, 60)) % 3
    C = np.array([[0, 1, 3], [6, 0, 1], [2, 2, 0]])
    free = _fit(X, y, method="dl85", cost_matrix=C, leaf_penalty=0.02)
    deep = _fit(X, y, method="dl85", cost_matrix=C, leaf_penalty=0.02, max_depth=6)
    assert free.result_.objective_value == pytest.approx(deep.result_.objective_value)


@pytest.mark.parametrize("method", ["blossom", "dl85", "portfolio"])
@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=costed_tables(), depth=st.integers(1, 2), holes=st.lists(st.booleans(), min_size=18))
def test_costs_with_missing_values_match_brute_force(method, table, depth, holes):
    """Missing cells: every split also chooses the side its missing rows take (the brute
    force's features ``x > t or missing``, ``x > t and present``, ``x is missing``)."""
    X, y, w, C = table
    X = X.copy()
    X[np.array(holes[: X.size]).reshape(X.shape)] = np.nan
    model = _fit(X, y, w, method=method, max_depth=depth, cost_matrix=C)
    expected = min_cost(threshold_features(X), y, w, C, depth)
    assert model.result_.objective_value == pytest.approx(expected, abs=1e-9)
    assert _true_cost(model, X, y, w, C) == pytest.approx(expected, abs=1e-9)


def test_a_single_class_is_one_leaf_of_cost_zero():
    from satdt import OptimalDiagramClassifier

    X, y = np.arange(6.0).reshape(-1, 1), np.zeros(6, dtype=int)
    tree = _fit(X, y, max_depth=2, cost_matrix=[[0]])
    assert tree.result_.objective_value == 0 and tree.tree_.n_leaves == 1
    np.testing.assert_allclose(tree.predict_proba(X), 1.0)
    diagram = OptimalDiagramClassifier(widths=(1, 2), cost_matrix=[[0]]).fit(X, y)
    assert diagram.result_.objective_value == 0
    assert diagram.result_.training_error == 0
