"""Tree ensembles (satdt.models.forest, forest_io): votes, the cell grid, BA-Trees' format,
scikit-learn's ensembles decided exactly as scikit-learn predicts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT, examples, grid_box, tiny_forests
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import grid_points

from satdt.core.errors import DataError, ParameterError
from satdt.models.forest import Forest, random_cells
from satdt.models.forest_io import (
    float32_split,
    forest_text,
    from_sklearn,
    parse_forest,
    read_forest,
    write_forest,
)
from satdt.models.tree import Tree

FORESTS = ROOT.parent / "shared" / "peers" / "ba-trees" / "forests"


@pytest.fixture(scope="module")
def published() -> list[Path]:
    """BA-Trees' 60 published forests (skipped where they are not next to the repository)."""
    paths = sorted(FORESTS.glob("*/*.txt"))
    if not paths:
        pytest.skip("BA-Trees' forests not found: expected ../shared/peers/ba-trees/forests")
    return paths


# ---------------------------------------------------------------------- votes
def test_hard_votes_tie_to_the_lowest_class() -> None:
    # two stumps on x0: below 0.5 they vote 2 and 0 (a tie: class 0), above 1 and 1
    forest = Forest.from_nested([(0, 0.5, 2, 1), (0, 0.5, 0, 1)], 1, ["a", "b", "c"])
    assert forest.predict_index(np.array([[0.0], [1.0]])).tolist() == [0, 1]
    # three classes, one vote each: the lowest
    forest = Forest.from_nested([2, 1, 0], 1, ["a", "b", "c"])
    assert forest.predict_index(np.zeros((1, 1))).tolist() == [0]
    forest = Forest.from_nested([2, 1, 2], 1, ["a", "b", "c"])
    assert forest.predict(np.zeros((1, 1))).tolist() == ["c"]


def test_soft_votes_average_and_tie_to_the_first() -> None:
    trees = [(0, 0.5, [0.6, 0.4], [0.2, 0.8]), [0.4, 0.6]]
    forest = Forest.from_nested(trees, 1, [0, 1], "soft")
    # below: (0.6 + 0.4) / 2 = 0.5 each: a tie, class 0; above: class 1
    assert forest.predict_index(np.array([[0.0], [0.7]])).tolist() == [0, 1]
    assert np.allclose(forest.decision(np.array([[0.7]])), [[0.3, 0.7]])


def test_a_boosted_forest_takes_class_one_at_zero() -> None:
    forest = Forest.from_nested([0.5, (0, 0.5, -0.5, 0.5)], 1, [0, 1], "sum")
    # 0.5 - 0.5 = 0: class 1 (scikit-learn's >= 0); above: 1.0
    assert forest.predict_index(np.array([[0.0], [1.0]])).tolist() == [1, 1]
    forest = Forest.from_nested([0.25, (0, 0.5, -0.5, 0.5)], 1, [0, 1], "sum")
    assert forest.predict_index(np.array([[0.0], [1.0]])).tolist() == [0, 1]


def test_a_threshold_sends_its_own_value_left() -> None:
    forest = Forest.from_nested([(0, 1.5, 0, 1)], 1, [0, 1])
    x = np.array([[1.5], [np.nextafter(1.5, 2)], [np.nextafter(1.5, 1)]])
    assert forest.predict_index(x).tolist() == [0, 1, 0]


def test_malformed_arrays_are_refused() -> None:
    good = dict(feature=[0, -1, -1], threshold=[0.5, np.nan, np.nan], left=[1, -1, -1])
    value = np.array([[0, 0], [1, 0], [0, 1]], dtype=float)
    Forest(
        **good, right=[2, -1, -1], value=value, roots=[0], n_features=1, classes=[0, 1], vote="hard"
    )
    with pytest.raises(ValueError, match="parents"):
        Forest(
            **good,
            right=[1, -1, -1],
            value=value,
            roots=[0],
            n_features=1,
            classes=[0, 1],
            vote="hard",
        )
    with pytest.raises(ValueError, match="feature 3"):
        Forest(
            [3, -1, -1], good["threshold"], good["left"], [2, -1, -1], value, [0], 1, [0, 1], "hard"
        )
    with pytest.raises(ValueError, match="one class"):
        Forest(
            **good,
            right=[2, -1, -1],
            value=value * 0.5,
            roots=[0],
            n_features=1,
            classes=[0, 1],
            vote="hard",
        )
    with pytest.raises(ValueError, match="vote"):
        Forest(
            **good,
            right=[2, -1, -1],
            value=value,
            roots=[0],
            n_features=1,
            classes=[0, 1],
            vote="max",
        )


# ---------------------------------------------------------------------- the cell grid
@settings(deadline=None, max_examples=examples(80))
@given(tiny_forests())
def test_cell_classes_are_the_decisions_on_one_point_per_cell(forest: Forest) -> None:
    thresholds = forest.thresholds()
    cells = forest.cell_classes(thresholds)
    assert cells.shape == tuple(len(t) + 1 for t in thresholds)
    assert np.array_equal(cells.reshape(-1), forest.predict_index(grid_points(thresholds)))


def test_a_feature_without_threshold_has_one_level() -> None:
    forest = Forest.from_nested([(1, 0.5, 0, 1)], 3, [0, 1])
    assert [len(t) for t in forest.thresholds()] == [0, 1, 0]
    assert forest.cell_classes().shape == (1, 2, 1)


# ---------------------------------------------------------------------- BA-Trees' format
def test_the_published_forests_are_read_and_written_back_to_the_same_bytes(published) -> None:
    for path in published:
        text = path.read_text()
        forest, header = parse_forest(text, str(path))
        assert (forest.n_trees, forest.vote) == (10, "hard")
        assert forest.n_features == int(header["NB_FEATURES"])
        assert forest_text(forest, header["DATASET_NAME"], header["ENSEMBLE"]) == text


def test_a_written_forest_reads_back_equal(tmp_path) -> None:
    forest = Forest.from_nested([(0, 0.25, (1, 1e-300, 0, 2), 1), 2], 2, [0, 1, 2])
    path = tmp_path / "f.txt"
    write_forest(path, forest)
    assert read_forest(path) == forest
    tree = Tree.from_nested((1, 0.1 + 0.2, 0, (0, -3.5, 1, 0)), classes=[0, 1])
    write_forest(path, Forest.from_tree(tree, 2), ensemble="BA")
    again = read_forest(path)
    assert np.array_equal(again.threshold, Forest.from_tree(tree, 2).threshold, equal_nan=True)
    assert "ENSEMBLE: BA" in path.read_text()


def test_only_hard_votes_are_written() -> None:
    forest = Forest.from_nested([[0.5, 0.5]], 1, [0, 1], "soft")
    with pytest.raises(ParameterError, match="hard"):
        forest_text(forest)


HEADER = (
    "DATASET_NAME: d\nENSEMBLE: RF\nNB_TREES: 1\nNB_FEATURES: 2\nNB_CLASSES: 2\n"
    "MAX_TREE_DEPTH: 1\nFormat: node / ...\n\n"
)
GOOD = (
    HEADER
    + "[TREE 0]\nNB_NODES: 3\n0 IN 1 2 1 0.5 0 -1\n1 LN -1 -1 -1 -1 1 0\n2 LN -1 -1 -1 -1 1 1\n"
)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (GOOD.replace("NB_TREES: 1", "NB_TREES: x"), 3, "NB_TREES must be an integer"),
        (GOOD.replace("ENSEMBLE", "ENSEMBL"), 2, "expected 'ENSEMBLE"),
        (GOOD.replace("0 IN 1 2 1", "0 IN 1 2 2"), 11, "feature must be in 0..1"),
        (GOOD.replace("0 IN 1 2", "0 IN 2 2"), 11, "both children"),
        (GOOD.replace("0 IN 1 2", "0 IN 0 2"), 11, "left child must be in 1..2"),
        (GOOD.replace("1 0.5 0 -1", "1 nan 0 -1"), 11, "finite"),
        (GOOD.replace("1 LN -1 -1 -1 -1 1 0", "1 LN -1 -1 -1 -1 1 2"), 12, "class must be in 0..1"),
        (GOOD.replace("1 LN -1 -1 -1 -1 1 0", "1 LN -1 -1 -1 -1 2 0"), 12, "depth 1"),
        (GOOD.replace("1 LN", "1 XX"), 12, "IN or LN"),
        (GOOD.replace("2 LN -1 -1 -1 -1 1 1\n", ""), 12, "ends where node 2"),
        (GOOD + "3 LN\n", 14, "after the last tree"),
        (GOOD.replace("1 LN -1 -1 -1 -1 1 0", "1 LN -1 -1 -1"), 12, "8 columns"),
        (GOOD.replace("MAX_TREE_DEPTH: 1", "MAX_TREE_DEPTH: 0"), 13, "above MAX_TREE_DEPTH"),
    ],
)
def test_a_malformed_file_names_its_line(text: str, line: int, message: str) -> None:
    with pytest.raises(DataError, match=f"line {line}: .*{message}"):
        parse_forest(text, "f.txt")


def test_a_node_with_two_parents_is_refused() -> None:
    text = HEADER.replace("NB_FEATURES: 2", "NB_FEATURES: 1").replace("DEPTH: 1", "DEPTH: 2") + (
        "[TREE 0]\nNB_NODES: 4\n0 IN 1 2 0 0.5 0 -1\n1 IN 2 3 0 0.2 1 -1\n"
        "2 LN -1 -1 -1 -1 2 0\n3 LN -1 -1 -1 -1 2 1\n"
    )
    with pytest.raises(DataError, match="node 2 has 2 parents"):
        parse_forest(text)


def test_a_missing_file_is_a_data_error(tmp_path) -> None:
    with pytest.raises(DataError, match="cannot read"):
        read_forest(tmp_path / "none.txt")


# ---------------------------------------------------------------------- scikit-learn
def test_float32_split_decides_as_the_float32_cast() -> None:
    rng = np.random.default_rng(0)
    t = np.concatenate(
        [
            rng.normal(size=500),
            rng.normal(size=200).astype(np.float32).astype(np.float64),  # exactly float32
            [0.0, -0.0, 0.5, 1e-40, -1e-40, 3.4e38],
        ]
    )
    split = float32_split(t)
    for x in (split, np.nextafter(split, np.inf), np.nextafter(split, -np.inf), t):
        with np.errstate(over="ignore"):
            assert np.array_equal(x.astype(np.float32) <= t, x <= split)


@pytest.fixture(scope="module")
def sklearn_data():
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(300, 4)), 1)
    y3 = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    return X, y3


def _probe_points(forest: Forest, estimators, rng) -> np.ndarray:
    """Random points, and points exactly on (and next to) every threshold scikit-learn and
    the forest hold, each coordinate of a random point replaced in turn."""
    X = rng.normal(size=(200, forest.n_features))
    points = [X]
    raw = np.concatenate([e.tree_.threshold[e.tree_.children_left >= 0] for e in estimators])
    for value in np.concatenate([raw, forest.threshold[~np.isnan(forest.threshold)]]):
        for near in (value, np.nextafter(value, np.inf), np.nextafter(value, -np.inf)):
            row = rng.normal(size=(forest.n_features, forest.n_features))
            np.fill_diagonal(row, near)
            points.append(row)
    return np.vstack(points)


@pytest.mark.parametrize("kind", ["forest", "extra"])
def test_random_forests_decide_as_scikit_learn_predicts(kind, sklearn_data) -> None:
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    X, y = sklearn_data
    model = (RandomForestClassifier if kind == "forest" else ExtraTreesClassifier)(
        n_estimators=7, max_depth=4, random_state=0
    ).fit(X, np.array(["a", "b", "c"])[y])
    forest = from_sklearn(model)
    assert forest.vote == "soft" and forest.classes.tolist() == ["a", "b", "c"]
    points = _probe_points(forest, model.estimators_, np.random.default_rng(2))
    assert np.array_equal(forest.predict(points), model.predict(points))
    # hard votes: each tree's own prediction, one vote each, ties to the lowest class
    hard = from_sklearn(model, vote="hard")
    votes = np.stack([e.predict(points).astype(int) for e in model.estimators_], axis=1)
    counts = np.stack([(votes == c).sum(axis=1) for c in range(3)], axis=1)
    assert np.array_equal(hard.predict_index(points), np.argmax(counts, axis=1))


def test_gradient_boosting_decides_as_scikit_learn_predicts(sklearn_data) -> None:
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = sklearn_data
    for init in (None, "zero"):
        model = GradientBoostingClassifier(n_estimators=8, max_depth=2, init=init, random_state=0)
        model.fit(X, y > 0)
        forest = from_sklearn(model)
        assert forest.vote == "sum"
        points = _probe_points(forest, model.estimators_[:, 0], np.random.default_rng(3))
        assert np.array_equal(forest.predict(points), model.predict(points))
        assert np.allclose(forest.decision(points)[:, 0], model.decision_function(points))


def test_unsupported_estimators_are_refused(sklearn_data) -> None:
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    X, y = sklearn_data
    with pytest.raises(ParameterError, match="LogisticRegression"):
        from_sklearn(LogisticRegression())
    with pytest.raises(ParameterError, match="not fitted"):
        from_sklearn(RandomForestClassifier())
    with pytest.raises(ParameterError, match="3 classes"):
        from_sklearn(GradientBoostingClassifier(n_estimators=2).fit(X, y))
    with pytest.raises(ParameterError, match="outputs"):
        from_sklearn(RandomForestClassifier(n_estimators=2).fit(X, np.stack([y, y], axis=1)))
    with pytest.raises(ParameterError, match="init"):
        from_sklearn(
            GradientBoostingClassifier(n_estimators=2, init=DecisionTreeClassifier()).fit(X, y > 0)
        )
    with pytest.raises(ParameterError, match="vote"):
        from_sklearn(GradientBoostingClassifier(n_estimators=2).fit(X, y > 0), vote="hard")
    with pytest.raises(ParameterError, match="vote"):
        from_sklearn(RandomForestClassifier(n_estimators=2).fit(X, y), vote="max")


def test_feature_names_come_from_the_data_frame(sklearn_data) -> None:
    pd = pytest.importorskip("pandas")
    from sklearn.ensemble import RandomForestClassifier

    X, y = sklearn_data
    frame = pd.DataFrame(X, columns=["w", "x", "y", "z"])
    forest = from_sklearn(RandomForestClassifier(n_estimators=2, random_state=0).fit(frame, y))
    assert forest.feature_names == ["w", "x", "y", "z"]
    assert from_sklearn(RandomForestClassifier(n_estimators=2).fit(X, y)).feature_names[0] == "f0"


@settings(deadline=None, max_examples=examples(40))
@given(tiny_forests(), st.data())
def test_random_cells_of_many_boxes_lie_in_their_boxes_on_the_grid(forest: Forest, data) -> None:
    thresholds = forest.thresholds()
    boxes = [grid_box(data, thresholds) for _ in range(data.draw(st.integers(1, 6)))]
    low, high = np.array([b[0] for b in boxes]), np.array([b[1] for b in boxes])
    drawn = random_cells(thresholds, low, high, 5, np.random.default_rng(0))
    assert drawn.shape == (len(boxes), 5, forest.n_features)
    assert np.all((drawn > low[:, None, :]) & (drawn <= high[:, None, :]))
    for c, t in enumerate(thresholds):  # a threshold of the box, or a value above them all
        on_grid = np.isin(drawn[:, :, c], t) | (drawn[:, :, c] > (t.max() if len(t) else -np.inf))
        assert on_grid.all()
    # every cell of a box can be drawn: on a one-feature box, each of its levels comes up
    t = thresholds[0]
    everywhere = np.full((1, forest.n_features), -np.inf), np.full((1, forest.n_features), np.inf)
    levels = np.unique(
        random_cells(thresholds, *everywhere, 400, np.random.default_rng(1))[0, :, 0]
    )
    assert len(levels) == len(t) + 1


@settings(deadline=None, max_examples=examples(60))
@given(tiny_forests(), st.data())
def test_a_restricted_forest_decides_as_the_forest_on_its_box(forest: Forest, data) -> None:
    thresholds = forest.thresholds()
    low, high = grid_box(data, thresholds)
    box = forest.restricted(low, high)
    box._check()  # made without the checks: it passes them
    points = grid_points(thresholds)
    inside = np.all((points > low) & (points <= high), axis=1)
    assert np.array_equal(box.predict_index(points[inside]), forest.predict_index(points[inside]))
    for c, t in enumerate(box.thresholds()):  # only thresholds inside the box are left
        assert np.all((t > low[c]) & (t < high[c]))
