"""Reading and validating tables: satdt.data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from satdt.data import (
    ColumnSpec,
    Dataset,
    Schema,
    contradiction_error,
    find_contradictions,
    from_arrays,
    read_csv,
    read_with_schema,
    resolve_majority,
)
from satdt.errors import ContradictionError, DataError


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


def error_of(path: Path, **kwargs: object) -> str:
    with pytest.raises(DataError) as info:
        read_csv(path, **kwargs)  # type: ignore[arg-type]
    return str(info.value)


# ---------------------------------------------------------------------- good CSV input
def test_reads_bom_crlf_whitespace_and_missing_final_newline(tmp_path: Path) -> None:
    text = "\ufeffa, b ,label\r\n1, 2.5 ,1.000\r\n 3,4,0.0\r\n\r\n5,6,1"
    data = read_csv(write(tmp_path, "t.csv", text))
    assert isinstance(data, Dataset)
    assert data.feature_names == ["a", "b"]
    assert data.schema.target == "label"
    np.testing.assert_array_equal(data.X, [[1, 2.5], [3, 4], [5, 6]])
    assert data.X.dtype == np.float64 and data.X.flags.c_contiguous
    assert data.y is not None and data.y.dtype == np.int64
    np.testing.assert_array_equal(data.y, [1, 0, 1])
    np.testing.assert_array_equal(data.line_numbers, [2, 3, 5])
    assert data.line_numbers.dtype == np.int64
    assert data.source is not None and data.source.endswith("t.csv")


def test_blank_trailing_lines_are_ignored(tmp_path: Path) -> None:
    data = read_csv(write(tmp_path, "t.csv", "a,y\n1,0\n2,1\n\n\n   \n"))
    assert data.X.shape == (2, 1)


def test_label_types(tmp_path: Path) -> None:
    floats = read_csv(write(tmp_path, "f.csv", "a,y\n1,0.5\n2,1\n"))
    assert floats.y is not None and floats.y.dtype == np.float64
    np.testing.assert_array_equal(floats.y, [0.5, 1.0])
    text = read_csv(write(tmp_path, "s.csv", "a,y\n1,cat\n2,dog\n3,1\n"))
    assert text.y is not None and text.y.dtype.kind == "U"
    assert text.y.tolist() == ["cat", "dog", "1"]


def test_categorical_columns_become_indicators(tmp_path: Path) -> None:
    text = "size,colour,y\n1,red,a\n2,blue,b\n3,red,a\n"
    data = read_csv(write(tmp_path, "c.csv", text))
    assert data.schema.columns == (
        ColumnSpec("size", "numeric"),
        ColumnSpec("colour", "categorical", ("blue", "red")),
    )
    assert data.feature_names == ["size", "colour == blue", "colour == red"]
    assert data.schema.indicator == (1, 2)
    np.testing.assert_array_equal(data.X, [[1, 0, 1], [2, 1, 0], [3, 0, 1]])


def test_target_by_name_index_and_digit_string(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", "a,b,c\n1,2,3\n4,5,6\n")
    by_name = read_csv(path, target="a")
    assert by_name.feature_names == ["b", "c"]
    np.testing.assert_array_equal(by_name.y, [1, 4])
    by_index = read_csv(path, target=1)
    assert by_index.feature_names == ["a", "c"]
    np.testing.assert_array_equal(by_index.y, [2, 5])
    by_digits = read_csv(path, target="0")
    np.testing.assert_array_equal(by_digits.y, [1, 4])


def test_digit_target_prefers_a_column_of_that_name(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", "2,0,1,y\n10,20,30,1\n")
    data = read_csv(path, target="0")  # the column named "0", which is index 1
    np.testing.assert_array_equal(data.y, [20])
    assert data.feature_names == ["2", "1", "y"]


def test_drop(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", "id,a,b,y\nx1,1,2,0\nx2,3,4,1\n")
    data = read_csv(path, drop=["id"])
    assert data.feature_names == ["a", "b"]
    assert data.schema.dropped == ("id",)


def test_missing_value_in_dropped_column_is_fine(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", "note,a,y\n,1,0\nNA,2,1\n")
    assert read_csv(path, drop=["note"]).X.shape == (2, 1)


def test_quoted_cell_over_two_lines_keeps_line_numbers(tmp_path: Path) -> None:
    data = read_csv(write(tmp_path, "q.csv", 'a,y\n"x\ny",0\nz,1\n'))
    assert data.schema.columns[0].categories == ("x\ny", "z")
    np.testing.assert_array_equal(data.line_numbers, [2, 4])


def test_blank_lines_inside_keep_line_numbers(tmp_path: Path) -> None:
    data = read_csv(write(tmp_path, "t.csv", "a,y\n\n1,0\n\n2,1\n"))
    np.testing.assert_array_equal(data.line_numbers, [3, 5])


# ---------------------------------------------------------------------- bad CSV input
def test_missing_file(tmp_path: Path) -> None:
    message = error_of(tmp_path / "nope.csv")
    assert "not found" in message and "nope.csv" in message


def test_directory(tmp_path: Path) -> None:
    assert "directory" in error_of(tmp_path)


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_file(tmp_path: Path, content: str) -> None:
    message = error_of(write(tmp_path, "e.csv", content))
    assert "empty" in message and "e.csv" in message


def test_header_only(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "h.csv", "a,b,y\n"))
    assert "no data rows" in message


def test_ragged_row(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "r.csv", "a,b,y\n1,2,0\n1,2\n"))
    assert "line 3" in message and "expected 3" in message and "found 2" in message


@pytest.mark.parametrize("token", ["", "NA", "N/A", "NaN", "nan", "?", "null", "None"])
def test_missing_values(tmp_path: Path, token: str) -> None:
    path = write(tmp_path, "m.csv", f"a,b,y\n1,2,0\n3,{token},1\n4,{token},1\n")
    message = error_of(path)
    assert "m.csv" in message
    assert "line 3" in message and "column 'b'" in message
    assert "2 missing cells" in message
    assert "complete data" in message and "impute" in message


def test_missing_label(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "m.csv", "a,y\n1,0\n2,?\n"))
    assert "line 3" in message and "column 'y'" in message


def test_first_missing_value_is_the_earliest_line(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "m.csv", "a,b,y\n1,2,0\n3,?,1\nNA,4,1\n"))
    assert "line 3" in message and "column 'b'" in message


def test_unknown_target_lists_columns(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "t.csv", "alpha,beta,y\n1,2,0\n"), target="gamma")
    assert "gamma" in message and "alpha, beta, y" in message


def test_target_index_out_of_range(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "t.csv", "a,b,y\n1,2,0\n"), target=7)
    assert "7" in message and "3 columns" in message


def test_duplicate_column_names(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "d.csv", "a,b,a,y\n1,2,3,0\n"))
    assert "duplicate" in message and "a" in message


def test_non_utf8_bytes(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "l.csv", b"a,y\n1,0\ncaf\xe9,1\n"))
    assert "UTF-8" in message and "line 3" in message and "offset 11" in message


def test_drop_of_the_label(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "t.csv", "a,b,y\n1,2,0\n"), drop=["y"])
    assert "label" in message and "'y'" in message


def test_drop_of_unknown_column(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "t.csv", "a,b,y\n1,2,0\n"), drop=["zzz"])
    assert "zzz" in message and "a, b, y" in message


def test_single_column_csv_suggests_labelfirst(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "s.csv", "0 1 0\n1 0 1\n"))
    assert "labelfirst" in message


def test_infinite_value(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "i.csv", "a,y\n1,0\ninf,1\n"))
    assert "line 3" in message and "finite" in message


def test_unknown_input_format(tmp_path: Path) -> None:
    assert "labelfirst" in error_of(write(tmp_path, "t.csv", "a,y\n1,0\n"), input_format="xls")


def test_no_feature_left(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "t.csv", "a,y\n1,0\n"), drop=["a"])
    assert "no feature columns" in message


# ---------------------------------------------------------------------- label-first files
def test_labelfirst_generated(tmp_path: Path) -> None:
    path = write(tmp_path, "b.txt", "1 0 1\n\n0  1\t0\r\n1 1 1")
    data = read_csv(path)
    assert data.feature_names == ["x1", "x2"]
    assert data.schema.target == "label"
    np.testing.assert_array_equal(data.X, [[0, 1], [1, 0], [1, 1]])
    np.testing.assert_array_equal(data.y, [1, 0, 1])
    np.testing.assert_array_equal(data.line_numbers, [1, 3, 4])
    same = read_csv(write(tmp_path, "b.dat", path.read_text()), input_format="labelfirst")
    np.testing.assert_array_equal(same.X, data.X)


def test_labelfirst_errors(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "r.txt", "1 0 1\n0 1\n"))
    assert "line 2" in message and "expected 3" in message and "found 2" in message
    assert "csv" in error_of(write(tmp_path, "c.txt", "1,0,1\n0,1,1\n"))
    assert "first column" in error_of(write(tmp_path, "t.txt", "1 0\n"), target="x1")


def test_txt_read_as_csv_when_asked(tmp_path: Path) -> None:
    data = read_csv(write(tmp_path, "t.txt", "a,y\n1,0\n"), input_format="csv")
    assert data.feature_names == ["a"]


def test_cp4im_file(data_dir: Path) -> None:
    start = time.perf_counter()
    data = read_csv(data_dir / "cp4im" / "mushroom.txt")
    elapsed = time.perf_counter() - start
    assert data.X.shape == (8124, 119)
    assert set(np.unique(data.X)) == {0.0, 1.0}
    assert set(data.y.tolist()) == {0, 1}  # type: ignore[union-attr]
    assert data.feature_names[0] == "x1" and data.feature_names[-1] == "x119"
    assert elapsed < 5.0  # about 0.2 s; a generous guard against an accidental slow path


def test_continuous_file(data_dir: Path) -> None:
    data = read_csv(data_dir / "continuous" / "page.txt")
    assert data.X.shape == (4378, 10)
    assert data.y is not None and data.y.dtype == np.int64
    assert set(data.y.tolist()) == set(range(5))
    assert data.X.min() > 0 and data.X.max() < 1


CONTINUOUS = {
    "avila": (10430, 10, 12),
    "bank": (1097, 4, 2),
    "bean": (10888, 16, 7),
    "eeg": (11984, 14, 2),
    "fault": (1552, 27, 7),
    "htru": (14318, 8, 2),
    "occupancy": (8143, 5, 2),
    "page": (4378, 10, 5),
    "raisin": (720, 7, 2),
    "room": (8103, 16, 4),
    "segment": (1848, 18, 7),
}


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_every_continuous_file(data_dir: Path, name: str) -> None:
    n, p, k = CONTINUOUS[name]
    data = read_csv(data_dir / "continuous" / f"{name}.txt")
    assert data.X.shape == (n, p)
    assert data.y is not None and sorted(set(data.y.tolist())) == list(range(k))


@pytest.mark.parametrize(
    ("name", "shape", "classes"),
    [("mouse", (70, 5), 2), ("iris", (150, 4), 3), ("monk1", (124, 6), 2), ("wine", (178, 13), 3)],
)
def test_inferdt_files(data_dir: Path, name: str, shape: tuple[int, int], classes: int) -> None:
    data = read_csv(data_dir / "inferdt" / f"{name}.csv")
    assert data.X.shape == shape
    assert data.y is not None and data.y.dtype == np.int64
    assert len(np.unique(data.y)) == classes


# ---------------------------------------------------------------------- arrays
def test_from_arrays_numpy() -> None:
    X, schema, y = from_arrays(np.array([[1, 2], [3, 4]]), np.array([0.0, 1.0]))
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    assert X.dtype == np.float64
    assert schema.feature_names == ("x0", "x1")
    assert y is not None and y.dtype == np.int64


def test_from_arrays_object_strings_are_categorical() -> None:
    raw = np.array([[1.5, "red"], [2.5, "blue"]], dtype=object)
    X, schema, y = from_arrays(raw, ["a", "b"], feature_names=["size", "colour"])
    assert schema.feature_names == ("size", "colour == blue", "colour == red")
    assert schema.indicator == (1, 2)
    np.testing.assert_array_equal(X, [[1.5, 0, 1], [2.5, 1, 0]])
    assert y is not None and y.tolist() == ["a", "b"]


@pytest.mark.parametrize("missing", [np.nan, None])
def test_from_arrays_missing(missing: object) -> None:
    raw = np.array([[1.0, 2.0], [3.0, missing]], dtype=object)
    with pytest.raises(DataError, match=r"row 1, column 'x1': missing"):
        from_arrays(raw)


def test_from_arrays_bad_shapes() -> None:
    with pytest.raises(DataError, match="reshape"):
        from_arrays(np.array([1.0, 2.0]))
    with pytest.raises(DataError, match="one label per row"):
        from_arrays(np.ones((3, 2)), [0, 1])
    with pytest.raises(DataError, match="one name per column"):
        from_arrays(np.ones((3, 2)), feature_names=["a"])
    with pytest.raises(DataError, match="missing label"):
        from_arrays(np.ones((2, 1)), [1.0, np.nan])


def test_from_arrays_pandas() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "n": [1, 2, 3],
            "c": pd.Series(["x", "y", "x"], dtype="category"),
            "s": ["u", "v", "w"],
            "b": [True, False, True],
        }
    )
    X, schema, y = from_arrays(frame, pd.Series([1.0, 0.0, 1.0], name="target"))
    assert [c.kind for c in schema.columns] == ["numeric"] + ["categorical"] * 3
    assert schema.feature_names == (
        "n",
        "c == x",
        "c == y",
        "s == u",
        "s == v",
        "s == w",
        "b == False",
        "b == True",
    )
    assert schema.target == "target"
    np.testing.assert_array_equal(X[:, 0], [1, 2, 3])
    np.testing.assert_array_equal(X[:, 6:], [[0, 1], [1, 0], [0, 1]])
    assert y is not None and y.dtype == np.int64
    # the schema encodes the same frame to the same matrix
    np.testing.assert_array_equal(schema.encode(frame.to_numpy(dtype=object)), X)


def test_from_arrays_pandas_missing() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1.0, None], "s": ["u", "v"]})
    with pytest.raises(DataError, match=r"row 1, column 'a'"):
        from_arrays(frame)
    frame = pd.DataFrame({"a": [1.0, 2.0], "s": ["u", None]})
    with pytest.raises(DataError, match=r"row 1, column 's'"):
        from_arrays(frame)


def test_importing_satdt_data_does_not_import_pandas() -> None:
    code = "import sys, satdt.data, satdt.binarize; sys.exit('pandas' in sys.modules)"
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    assert subprocess.run([sys.executable, "-c", code], env=env, check=False).returncode == 0


# ---------------------------------------------------------------------- schema
def categorical_file(tmp_path: Path) -> Path:
    return write(
        tmp_path, "train.csv", "id,size,colour,y\n1,1.5,red,0\n2,2.5,blue,1\n3,3.5,red,1\n"
    )


def test_schema_round_trip(tmp_path: Path) -> None:
    schema = read_csv(categorical_file(tmp_path), drop=["id"]).schema
    restored = Schema.from_dict(json.loads(json.dumps(schema.to_dict())))
    assert restored == schema
    assert isinstance(restored.columns, tuple) and isinstance(restored.columns[1].categories, tuple)


def test_schema_from_bad_dict() -> None:
    with pytest.raises(DataError, match="schema"):
        Schema.from_dict({"columns": []})
    good = Schema.from_columns([ColumnSpec("a", "numeric")], "y").to_dict()
    good["columns"][0]["kind"] = "text"
    with pytest.raises(DataError, match="numeric"):
        Schema.from_dict(good)


def test_encode_unknown_category_and_bad_number() -> None:
    schema = Schema.from_columns(
        [ColumnSpec("size", "numeric"), ColumnSpec("colour", "categorical", ("blue", "red"))], "y"
    )
    X = schema.encode([["1.5", "red"], ["2", "green"]])
    np.testing.assert_array_equal(X, [[1.5, 0, 1], [2, 0, 0]])
    with pytest.raises(DataError, match=r"row 1, column 'size': 'big' is not a number"):
        schema.encode([["1.5", "red"], ["big", "red"]])
    with pytest.raises(DataError, match="expected 2 columns"):
        schema.encode([["1.5"]])


def test_encode_numeric_array() -> None:
    schema = Schema.from_columns([ColumnSpec("a", "numeric"), ColumnSpec("b", "numeric")], "y")
    np.testing.assert_array_equal(schema.encode(np.array([[1, 2], [3, 4]])), [[1, 2], [3, 4]])
    with pytest.raises(DataError, match=r"row 1, column 'b': missing value"):
        schema.encode(np.array([[1.0, 2.0], [3.0, np.nan]]))


def test_read_with_schema_reorders_and_fills_labels(tmp_path: Path) -> None:
    train = read_csv(categorical_file(tmp_path), drop=["id"])
    test = write(tmp_path, "test.csv", "colour,y,size,id\nblue,1,9,7\ngreen,0,1,8\n")
    data = read_with_schema(test, train.schema)
    np.testing.assert_array_equal(data.X, [[9, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(data.y, [1, 0])
    np.testing.assert_array_equal(data.line_numbers, [2, 3])
    assert data.schema is train.schema


def test_read_with_schema_without_labels(tmp_path: Path) -> None:
    schema = read_csv(categorical_file(tmp_path), drop=["id"]).schema
    path = write(tmp_path, "p.csv", "size,colour\n1,red\n")
    assert read_with_schema(path, schema).y is None
    with pytest.raises(DataError, match="label column 'y' is missing"):
        read_with_schema(path, schema, require_target=True)


def test_read_with_schema_column_mismatch(tmp_path: Path) -> None:
    schema = read_csv(categorical_file(tmp_path), drop=["id"]).schema
    path = write(tmp_path, "p.csv", "size,shape,y\n1,round,0\n")
    with pytest.raises(DataError) as info:
        read_with_schema(path, schema)
    message = str(info.value)
    assert "missing columns: colour" in message and "unexpected columns: shape" in message


def test_read_with_schema_cell_errors(tmp_path: Path) -> None:
    schema = read_csv(categorical_file(tmp_path), drop=["id"]).schema
    path = write(tmp_path, "p.csv", "size,colour\n1,red\nlarge,blue\n")
    with pytest.raises(DataError, match=r"p.csv, line 3, column 'size': 'large' is not a number"):
        read_with_schema(path, schema)
    path = write(tmp_path, "q.csv", "size,colour\n1,red\n2,?\n")
    with pytest.raises(DataError, match=r"q.csv, line 3, column 'colour': missing"):
        read_with_schema(path, schema)


def test_read_with_schema_labelfirst(tmp_path: Path) -> None:
    schema = read_csv(write(tmp_path, "train.txt", "1 0 1\n0 1 0\n")).schema
    data = read_with_schema(write(tmp_path, "test.txt", "0 1 1\n"), schema)
    np.testing.assert_array_equal(data.X, [[1, 1]])
    np.testing.assert_array_equal(data.y, [0])
    with pytest.raises(DataError, match="2 features"):
        read_with_schema(write(tmp_path, "bad.txt", "0 1 1 1\n"), schema)


# ---------------------------------------------------------------------- contradictions
def test_find_contradictions() -> None:
    X = np.array([[0, 1], [1, 1], [0, 1], [1, 1], [2, 2], [2, 2], [0, 1]], dtype=float)
    y = np.array([0, 1, 1, 1, 5, 6, 0])
    assert find_contradictions(X, y) == [[0, 2, 6], [4, 5]]
    assert find_contradictions(X, np.zeros(7)) == []


def brute_force_contradictions(X: np.ndarray, y: np.ndarray) -> list[list[int]]:
    groups: list[list[int]] = []
    seen: set[int] = set()
    for i in range(len(X)):
        if i in seen:
            continue
        group = [j for j in range(len(X)) if np.array_equal(X[i], X[j])]
        seen.update(group)
        if len({y[j] for j in group}) > 1:
            groups.append(group)
    return groups


@settings(deadline=None, max_examples=60)
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
    assert find_contradictions(X, y) == brute_force_contradictions(X, y)


def test_contradiction_error_from_a_file(tmp_path: Path) -> None:
    data = read_csv(write(tmp_path, "c.csv", "a,b,y\n1,1,0\n2,2,0\n1,1,1\n"))
    groups = find_contradictions(data.X, data.y)  # type: ignore[arg-type]
    error = contradiction_error(groups, data.y, data.line_numbers, data.source)  # type: ignore[arg-type]
    assert isinstance(error, ContradictionError) and isinstance(error, DataError)
    message = str(error)
    assert message.startswith(
        "no consistent tree exists: 1 group of rows has identical features but different labels"
    )
    assert "  lines 2, 4: labels 0, 1" in message
    assert "--resolve majority" in message
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
