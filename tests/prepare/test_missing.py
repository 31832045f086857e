"""Missing values: reading them, optimal splits that choose the side of missing rows, predict."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_consistent_depth, min_consistent_leaves, min_error, threshold_features

from satdt import OptimalTreeClassifier, read_csv
from satdt.cli import main
from satdt.core.errors import ContradictionError, DataError, SatdtError
from satdt.data import read_with_schema
from satdt.data.exact import _read_csv_exact
from satdt.data.fast import _read_csv_fast
from satdt.data.sniff import _open
from satdt.models.files import load_model
from satdt.models.tree import DEFAULT_LEFT, DEFAULT_RIGHT, MISSING_LEFT, MISSING_RIGHT, Tree
from satdt.prepare.rows import find_contradictions

TOKENS = ["", "NA", "n/a", "N/A", "NaN", "nan", "?", "null", "None", "NONE"]


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


# ---------------------------------------------------------------------- reading
@pytest.mark.parametrize("token", TOKENS)
def test_numeric_missing_cells_become_nan(tmp_path, token):
    path = write(tmp_path, "m.csv", f"a,b,y\n1,2,0\n3,{token},1\n4,{token},1\n")
    data = read_csv(path)
    assert [spec.kind for spec in data.schema.columns] == ["numeric", "numeric"]
    np.testing.assert_array_equal(data.X, [[1, 2], [3, np.nan], [4, np.nan]])
    exact = _read_csv_exact(_open(path, "auto", None), None, ())
    np.testing.assert_array_equal(exact.X, data.X)
    assert exact.schema == data.schema


@pytest.mark.parametrize("token", TOKENS)
def test_categorical_missing_cells_get_an_is_missing_column(tmp_path, token):
    path = write(tmp_path, "m.csv", f"a,c,y\n1,red,0\n2,{token},1\n3,blue,1\n")
    data = read_csv(path)
    column = data.schema.columns[1]
    assert column.kind == "categorical" and column.categories == ("blue", "red")
    assert column.missing
    assert data.feature_names == ["a", "c == blue", "c == red", "c is missing"]
    np.testing.assert_array_equal(data.X, [[1, 0, 1, 0], [2, 0, 0, 1], [3, 1, 0, 0]])


def test_fast_reader_keeps_nan_cells_of_a_large_table(tmp_path):
    rows = [f"{i},{i % 7},{i % 2}" for i in range(300)]
    rows[150] = "150,nan,0"
    path = write(tmp_path, "big.csv", "a,b,y\n" + "\n".join(rows) + "\n")
    fast = _read_csv_fast(_open(path, "auto", None), None, ())
    assert fast is not None  # the fast reader takes NaN cells in a column of numbers
    assert np.isnan(fast.X[150, 1]) and np.isnan(fast.X).sum() == 1
    exact = _read_csv_exact(_open(path, "auto", None), None, ())
    np.testing.assert_array_equal(exact.X, fast.X)


def test_missing_label_and_missing_error_are_refused(tmp_path):
    with pytest.raises(DataError, match=r"line 3, column 'y'.*every row needs a label"):
        read_csv(write(tmp_path, "l.csv", "a,y\n1,0\n2,NA\n"))
    path = write(tmp_path, "m.csv", "a,b,y\n1,2,0\n3,?,1\n")
    with pytest.raises(DataError, match=r"line 3, column 'b': missing value '\?'.*impute"):
        read_csv(path, missing="error")
    with pytest.raises(DataError, match="missing must be 'split'"):
        read_csv(path, missing="drop")


def test_predict_files_and_arrays_with_missing_cells(tmp_path):
    schema = read_csv(write(tmp_path, "t.csv", "a,c,y\n1,red,0\n2,blue,1\n")).schema
    data = read_with_schema(write(tmp_path, "p.csv", "a,c\nNA,red\n3,\n"), schema)
    # a category without missing cells when fitting: NaN in its columns (the default side)
    np.testing.assert_array_equal(data.X, [[np.nan, 0, 1], [3, np.nan, np.nan]])
    np.testing.assert_array_equal(
        schema.encode(np.array([[1.0, None]], dtype=object)), [[1, np.nan, np.nan]]
    )


def test_arrays_and_frames_with_missing_cells():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1.0, None, 3.0], "c": ["red", None, "blue"]})
    model = OptimalTreeClassifier().fit(frame, [0, 1, 1])
    assert model.feature_names_in_.tolist() == ["a", "c == blue", "c == red", "c is missing"]
    np.testing.assert_array_equal(model.predict(frame), [0, 1, 1])
    with pytest.raises(DataError, match=r"row 1, column 'a': missing value"):
        OptimalTreeClassifier(missing="error").fit(frame, [0, 1, 1])
    with pytest.raises(ValueError, match="NaN"):
        OptimalTreeClassifier(missing="error").fit(np.array([[1.0], [np.nan]]), [0, 1])
    with pytest.raises(ValueError, match="infinity"):
        OptimalTreeClassifier().fit(np.array([[1.0], [np.inf]]), [0, 1])


# ---------------------------------------------------------------------- brute force
VALUES = st.sampled_from([0.0, 1.0, 2.0, 3.0, math.nan])


@st.composite
def tiny_data_with_nan(draw, max_rows: int = 7, max_columns: int = 2, max_classes: int = 2):
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(1, max_columns))
    X = np.array(draw(st.lists(st.lists(VALUES, min_size=p, max_size=p), min_size=n, max_size=n)))
    X[draw(st.integers(0, n - 1)), draw(st.integers(0, p - 1))] = np.nan  # one missing at least
    k = draw(st.integers(2, max_classes))
    y = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    return X, y


def _check_routes(model: OptimalTreeClassifier, X: np.ndarray, y: np.ndarray) -> None:
    """The fitted tree predicts the rows as its counts say (NaN routed as learned)."""
    tree = model.tree_
    assert np.array_equal(
        tree.with_counts(X, np.searchsorted(model.classes_, y)).counts, tree.counts
    )


@settings(deadline=None, max_examples=examples(60))
@given(tiny_data_with_nan(max_classes=3))
def test_min_depth_over_every_threshold_and_side(data):
    X, y = data
    expected = min_consistent_depth(threshold_features(X), y)
    model = OptimalTreeClassifier(objective="depth")
    if math.isinf(expected):
        with pytest.raises(ContradictionError):
            model.fit(X, y)
        return
    model.fit(X, y)
    assert model.tree_.depth == expected and model.result_.proven_optimal
    np.testing.assert_array_equal(model.predict(X), y)
    _check_routes(model, X, y)


@settings(deadline=None, max_examples=examples(40))
@given(tiny_data_with_nan(max_rows=6), st.booleans())
def test_min_size_over_every_threshold_and_side(data, deeper):
    X, y = data
    B = threshold_features(X)
    depth = min_consistent_depth(B, y)
    if math.isinf(depth) or depth == 0:
        return
    cap = int(depth) + 1 if deeper else None
    model = OptimalTreeClassifier(objective="size", max_depth=cap).fit(X, y)
    leaves = min_consistent_leaves(B, y, int(depth) if cap is None else cap)
    assert model.tree_.n_nodes == 2 * leaves - 1 and model.result_.proven_optimal
    np.testing.assert_array_equal(model.predict(X), y)


@settings(deadline=None, max_examples=examples(40))
@given(tiny_data_with_nan(max_classes=3), st.integers(1, 2))
def test_min_error_over_every_threshold_and_side(data, depth):
    X, y = data
    B = threshold_features(X)
    classes, y_index = np.unique(y, return_inverse=True)
    expected = min_error(B, y_index, np.ones(len(y)), len(classes), depth)
    model = OptimalTreeClassifier(objective="error", max_depth=depth).fit(X, y)
    assert model.method_ == "portfolio" and model.result_.proven_optimal
    assert model.result_.objective_value == pytest.approx(expected)
    assert np.sum(model.predict(X) != y) == pytest.approx(expected)
    _check_routes(model, X, y)


# ---------------------------------------------------------------------- predict routing
@pytest.mark.parametrize(("label", "side"), [(1, MISSING_RIGHT), (0, MISSING_LEFT)])
def test_predict_sends_missing_values_the_learned_way(label, side):
    X = np.array([[1.0], [2.0], [3.0], [4.0], [np.nan]])
    model = OptimalTreeClassifier().fit(X, [0, 0, 1, 1, label])
    assert model.tree_.depth == 1 and model.tree_.missing[0] == side
    assert model.predict([[np.nan]]).tolist() == [label]
    assert model.apply([[np.nan]]).tolist() == model.apply([[4.0 if label else 1.0]]).tolist()
    proba = model.predict_proba([[np.nan]])
    assert proba[0, label] == 1.0
    assert ("or missing" in model.tree_.export_text()) and "or missing" in model.tree_.to_dot()


def test_is_missing_split():
    X = np.array([[1.0], [np.nan], [3.0], [np.nan]])
    model = OptimalTreeClassifier().fit(X, [0, 1, 0, 1])
    assert model.tree_.depth == 1
    assert "x0 is missing" in model.tree_.export_text()
    assert model.predict([[np.nan], [2.0], [100.0]]).tolist() == [1, 0, 0]


@pytest.mark.parametrize(
    ("y", "side", "label"), [([0, 1, 1], DEFAULT_RIGHT, 1), ([0, 0, 1], DEFAULT_LEFT, 0)]
)
def test_columns_without_missing_values_send_them_to_the_larger_side(y, side, label):
    model = OptimalTreeClassifier().fit(np.array([[1.0], [2.0], [3.0]]), y)
    assert model.tree_.missing[0] == side
    assert model.predict([[np.nan]]).tolist() == [label]
    assert "missing" not in model.tree_.export_text()  # a default side is not shown


def test_categorical_missing_values():
    X = np.array([["red"], ["blue"], [None], ["red"]], dtype=object)
    model = OptimalTreeClassifier().fit(X, [0, 0, 1, 0])
    assert "x0 is missing" in model.tree_.export_text()
    assert model.predict(np.array([[None], ["green"], ["blue"]], dtype=object)).tolist() == [
        1,
        0,
        0,
    ]
    # a categorical column without missing values when fitting: the larger side
    model = OptimalTreeClassifier().fit(
        np.array([["red"], ["blue"], ["blue"]], dtype=object), [0, 1, 1]
    )
    assert model.predict(np.array([[None]], dtype=object)).tolist() == [1]


# ---------------------------------------------------------------------- consistency checks
def test_contradictions_treat_missing_as_equal_to_missing():
    payload = np.array([np.nan, -np.nan, np.float64("nan")])
    X = np.array([[payload[0], 1.0], [payload[1], 1.0], [1.0, 1.0]])
    assert find_contradictions(X, np.array([0, 1, 0])) == [[0, 1]]
    with pytest.raises(ContradictionError):
        OptimalTreeClassifier().fit(X, [0, 1, 0])
    model = OptimalTreeClassifier(resolve="majority").fit(X, [0, 1, 0])
    assert model.tree_.depth == 0
    # missing versus present is no contradiction: "x is missing" tells them apart
    model = OptimalTreeClassifier().fit(np.array([[np.nan], [1.0]]), [0, 1])
    assert model.tree_.depth == 1


def test_numeric_methods_refuse_missing_values_and_auto_avoids_them():
    X = np.array([[1.0, 0.0], [np.nan, 1.0], [3.0, 1.0], [2.0, np.nan]])
    y = [0, 1, 1, 0]
    with pytest.raises(SatdtError, match="method='sat'"):
        OptimalTreeClassifier(method="boxes").fit(X, y)
    with pytest.raises(SatdtError, match="method='portfolio'"):
        OptimalTreeClassifier(objective="error", max_depth=2, method="contree").fit(X, y)
    assert OptimalTreeClassifier().fit(X, y).method_ == "sat"


# ---------------------------------------------------------------------- models on disk, CLI
def test_tree_files_keep_the_missing_sides():
    model = OptimalTreeClassifier().fit(np.array([[1.0], [np.nan], [3.0], [np.nan]]), [0, 1, 0, 1])
    text = model.tree_.to_json()
    assert "Infinity" not in text  # plain JSON
    assert Tree.from_json(text) == model.tree_
    # an older file, without the field: default sides, from the counts
    X, y = np.array([[1.0], [2.0], [3.0]]), np.array([0, 1, 1])
    old = Tree.from_nested((0, 1.5, 0, 1), [0, 1]).with_counts(X, y).to_dict()
    del old["missing"]
    assert Tree.from_dict(old).missing.tolist() == [DEFAULT_RIGHT, DEFAULT_LEFT, DEFAULT_LEFT]


CSV = "age,colour,y\n30,red,yes\nNA,blue,no\n25,,no\n?,red,yes\n41,blue,no\n33,,yes\n28,red,no\n"


def test_cli_fit_infer_predict_and_reload(tmp_path, capsys):
    data = write(tmp_path, "d.csv", CSV)
    rows = write(tmp_path, "rows.csv", "age,colour\nNA,red\n33,\n,\n29,green\n")
    for command in (["infer"], ["fit", "--max-depth", "2"]):
        model_file = tmp_path / f"{command[0]}.json"
        code = main([command[0], str(data), *command[1:], "--save", str(model_file), "--quiet"])
        _, err = capsys.readouterr()
        assert code == 0, err
        predictions = tmp_path / "out.csv"
        assert main(["predict", str(model_file), str(rows), "-o", str(predictions)]) == 0
        capsys.readouterr()
        written = predictions.read_text().split()[1:]
        tree, schema = load_model(model_file)
        expected = tree.predict(read_with_schema(rows, schema).X)
        assert written == [str(v) for v in expected]
        estimator = OptimalTreeClassifier(
            objective="depth" if command[0] == "infer" else "error",
            max_depth=None if command[0] == "infer" else 2,
        ).fit_dataset(read_csv(data))
        if command[0] == "infer":
            assert tree.depth == estimator.tree_.depth
        assert (
            tree.predict(read_csv(data).X).tolist()
            == estimator.tree_.predict(read_csv(data).X).tolist()
        )
    code = main(["infer", str(data), "--missing", "error"])
    _, err = capsys.readouterr()
    assert code == 2 and "line 3, column 'age'" in err and "--missing split" in err


def test_missing_error_passes_scikit_learns_nan_check():
    pytest.importorskip("sklearn")
    from sklearn.utils.estimator_checks import check_estimators_nan_inf

    check_estimators_nan_inf("OptimalTreeClassifier", OptimalTreeClassifier(missing="error"))
    model = OptimalTreeClassifier(missing="error").fit(np.array([[1.0], [2.0]]), [0, 1])
    with pytest.raises(ValueError, match="NaN"):
        model.predict([[np.nan]])


def test_diagrams_refuse_missing_values_naming_why():
    from satdt import OptimalDiagramClassifier

    with pytest.raises(DataError, match="diagrams need complete data"):
        OptimalDiagramClassifier().fit(np.array([[1.0], [np.nan]]), [0, 1])


def test_quantile_thresholds_on_a_column_with_missing_values():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 30, (200, 2)).astype(float)
    X[rng.random((200, 2)) < 0.2] = np.nan
    y = (np.nan_to_num(X[:, 0], nan=50) > 15).astype(int)
    model = OptimalTreeClassifier(objective="error", max_depth=1, max_thresholds=3).fit(X, y)
    assert model.result_.objective_value == 0  # "x0 > 15.5 or missing" is among the features
    assert "or missing" in model.tree_.export_text()
