"""One vocabulary for trees and diagrams: every shared word means the same on a tree, on the
same tree seen as a diagram, and on a diagram from each route; renamed parameters still work
with a FutureWarning that names the release that removes them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from satdt import Diagram, OptimalDiagramClassifier, OptimalTreeClassifier
from satdt.core.errors import REMOVED_IN


def _xor(n: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, 3)).astype(float)
    y = (X[:, 0].astype(int) ^ X[:, 1].astype(int)) + 2 * (X[:, 2] > 0) * (X[:, 0] > 0)
    return X, y


def _shared_words(model, X=None) -> None:
    """What every model says about itself agrees with its own structure; apply gives the
    node each row ends at, one per row, a node that predicts the row's class."""
    assert model.n_nodes == model.n_splits + model.n_leaves
    assert model.n_splits >= 0 and model.n_leaves >= 1 and model.depth >= 0
    assert (model.n_splits == 0) == (model.depth == 0)
    if X is not None:
        ends = model.apply(X)
        assert ends.shape == (len(X),)
        # rows ending at one node get one prediction
        for node in np.unique(ends):
            assert len(np.unique(model.predict(X[ends == node]))) == 1


def _routes() -> list[dict]:
    routes = [{"method": "maxsat"}, {"method": "tree", "alpha": 0.0, "widths": (1, 2)}]
    routes.append({"method": "sat", "objective": "size"})
    try:
        import highspy  # noqa: F401

        routes.append({"method": "milp", "milp_solver": "highs"})
    except ImportError:
        pass
    return routes


def test_a_tree_and_the_same_tree_as_a_diagram_say_the_same():
    X, y = _xor()
    tree = OptimalTreeClassifier(max_depth=3).fit(X, y).tree_
    diagram = Diagram.from_tree(tree)
    for model in (tree, diagram):
        _shared_words(model, X)
    assert diagram.n_splits == tree.n_splits and diagram.depth == tree.depth
    np.testing.assert_array_equal(diagram.predict(X), tree.predict(X))
    np.testing.assert_allclose(diagram.predict_proba(X), tree.predict_proba(X))
    # a diagram shares one terminal per class among the tree's leaves of that class
    assert diagram.n_leaves == len(np.unique(tree.value[tree.feature < 0]))


@pytest.mark.parametrize("route", _routes(), ids=lambda r: r["method"])
def test_every_route_speaks_the_tree_words(route):
    X, y = _xor()
    params = {"widths": (1, 2, 2), "alpha": 0.01, "time_limit": 60, **route}
    est = OptimalDiagramClassifier(**params).fit(X, y)
    _shared_words(est.diagram_, X)
    np.testing.assert_array_equal(est.apply(X), est.diagram_.apply(X))
    result = est.result_
    assert (result.n_nodes, result.n_splits, result.n_leaves, result.depth) == (
        est.diagram_.n_nodes,
        est.diagram_.n_splits,
        est.diagram_.n_leaves,
        est.diagram_.depth,
    )
    # predict_proba: the training frequencies of each row's terminal, on every route
    proba = est.predict_proba(X)
    terminal = est.diagram_.terminal(X)
    for k in np.unique(terminal):
        rows = terminal == k
        frequencies = np.bincount(
            np.searchsorted(est.classes_, y[rows]), minlength=len(est.classes_)
        )
        np.testing.assert_allclose(proba[rows], np.tile(frequencies / rows.sum(), (rows.sum(), 1)))


def test_a_tree_estimator_result_speaks_the_same_words():
    X, y = _xor()
    est = OptimalTreeClassifier(objective="error", max_depth=2).fit(X, y)
    result = est.result_
    assert (result.n_nodes, result.n_splits, result.n_leaves) == (
        est.tree_.n_nodes,
        est.tree_.n_splits,
        est.tree_.n_leaves,
    )
    assert est.tree_.n_nodes == 2 * est.tree_.n_splits + 1


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [
        ("max_nodes", "max_splits", 2),
        ("seed", "random_state", 3),
        ("solver", "milp_solver", "highs"),
    ],
)
def test_renamed_diagram_parameters_work_with_a_future_warning(old, new, value):
    X, y = _xor()
    if old == "solver":
        pytest.importorskip("highspy")
    route = {"method": "milp"} if old == "solver" else {"method": "maxsat"}
    with pytest.warns(FutureWarning, match=rf"'{old}' is renamed '{new}'.*satdt {REMOVED_IN}"):
        by_old = OptimalDiagramClassifier(
            widths=(1, 2), time_limit=60, **route, **{old: value}
        ).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        by_new = OptimalDiagramClassifier(
            widths=(1, 2), time_limit=60, **route, **{new: value}
        ).fit(X, y)
    assert by_old.diagram_ == by_new.diagram_
    assert old in by_old.get_params() and new in by_old.get_params()


@pytest.mark.parametrize("route", _routes(), ids=lambda r: r["method"])
def test_training_error_is_one_word_on_trees_and_diagrams(route):
    X, y = _xor()
    tree = OptimalTreeClassifier(objective="error", max_depth=2).fit(X, y)
    wrong = float((tree.predict(X) != y).sum())
    assert tree.result_.training_error == wrong == tree.result_.objective_value
    assert (
        Diagram.from_tree(tree.tree_)
        .with_counts(X, np.searchsorted(tree.classes_, y))
        .count_error()
        == wrong
    )
    params = {"widths": (1, 2, 2), "alpha": 0.01, "time_limit": 60, **route}
    est = OptimalDiagramClassifier(**params).fit(X, y)
    assert est.result_.training_error == float((est.predict(X) != y).sum())
