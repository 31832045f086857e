"""Reading and validating tables: satdt.data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from helpers import ROOT, examples
from hypothesis import given, settings
from hypothesis import strategies as st

import satdt.data.exact as exact_reader
import satdt.data.fast as fast_reader
import satdt.data.sniff as sniff
from satdt.core.errors import DataError
from satdt.data import (
    SEPARATORS,
    ColumnSpec,
    Dataset,
    Schema,
    from_arrays,
    read_csv,
    read_with_schema,
)

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it


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
    message = error_of(path, missing="error")
    assert "m.csv" in message
    assert "line 3" in message and "column 'b'" in message
    assert "2 missing cells" in message
    assert "complete data" in message and "impute" in message


def test_missing_label(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "m.csv", "a,y\n1,0\n2,?\n"))
    assert "line 3" in message and "column 'y'" in message


def test_first_missing_value_is_the_earliest_line(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "m.csv", "a,b,y\n1,2,0\n3,?,1\nNA,4,1\n"), missing="error")
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
        from_arrays(raw, missing="error")
    X, schema, _ = from_arrays(raw)
    np.testing.assert_array_equal(X, [[1, 2], [3, np.nan]])
    assert [spec.kind for spec in schema.columns] == ["numeric", "numeric"]


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
        from_arrays(frame, missing="error")
    frame = pd.DataFrame({"a": [1.0, 2.0], "s": ["u", None]})
    with pytest.raises(DataError, match=r"row 1, column 's'"):
        from_arrays(frame, missing="error")
    X, schema, _ = from_arrays(frame)
    assert schema.feature_names == ("a", "s == u", "s is missing")
    np.testing.assert_array_equal(X, [[1, 1, 0], [2, 0, 1]])


def test_importing_satdt_data_does_not_import_pandas() -> None:
    code = "import sys, satdt.data, satdt.prepare.binarize; sys.exit('pandas' in sys.modules)"
    root = ROOT
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
    # a missing cell to predict on stays NaN: the tree sends it where its split says
    np.testing.assert_array_equal(
        schema.encode(np.array([[1.0, 2.0], [3.0, np.nan]])), [[1, 2], [3, np.nan]]
    )


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
    # a missing cell to predict on is no error: NaN, sent where the tree's split says
    assert np.isnan(read_with_schema(path, schema).X[1, 1:]).all()


def test_read_with_schema_labelfirst(tmp_path: Path) -> None:
    schema = read_csv(write(tmp_path, "train.txt", "1 0 1\n0 1 0\n")).schema
    data = read_with_schema(write(tmp_path, "test.txt", "0 1 1\n"), schema)
    np.testing.assert_array_equal(data.X, [[1, 1]])
    np.testing.assert_array_equal(data.y, [0])
    with pytest.raises(DataError, match="2 features"):
        read_with_schema(write(tmp_path, "bad.txt", "0 1 1 1\n"), schema)


# ---------------------------------------------------------------------- separators
@pytest.mark.parametrize(("sep", "name"), [(";", "semicolon"), ("\t", "tab"), ("|", "pipe")])
def test_separator_detected(tmp_path: Path, sep: str, name: str) -> None:
    rows = [["size", "colour", "y"], ["1.5", "red", "a"], ["2", "blue", "b"], ["3", "red", "a"]]
    path = write(tmp_path, f"{name}.csv", "\n".join(sep.join(row) for row in rows) + "\n")
    data = read_csv(path)
    assert data.feature_names == ["size", "colour == blue", "colour == red"]
    np.testing.assert_array_equal(data.X, [[1.5, 0, 1], [2, 1, 0], [3, 0, 1]])
    assert data.y is not None and data.y.tolist() == ["a", "b", "a"]
    assert data.schema == read_csv(path, sep=sep).schema


def test_comma_preferred_when_ambiguous_and_sep_forced(tmp_path: Path) -> None:
    text = "name, first;age;y\nSmith, Ann;30;0\nDoe, Bob;40;1\n"
    path = write(tmp_path, "a.csv", text)
    assert [c.name for c in read_csv(path).schema.columns] == ["name"]  # split at commas
    data = read_csv(path, sep=";")
    assert data.feature_names == ["name, first == Doe, Bob", "name, first == Smith, Ann", "age"]
    np.testing.assert_array_equal(data.y, [0, 1])


def test_sep_forced_on_a_file_detection_would_misread(tmp_path: Path) -> None:
    path = write(tmp_path, "p.csv", "a|b|y\n1|2|0\n3|4|1\n")
    np.testing.assert_array_equal(read_csv(path, sep="|").X, [[1, 2], [3, 4]])
    message = error_of(path, sep=",")
    assert "sep=','" in message and "only one column" in message and "sep option" in message


def test_separator_inside_quotes_is_a_cell(tmp_path: Path) -> None:
    path = write(tmp_path, "q.csv", 'a;b;y\n"x;1";2;0\nz;"3";1\n')
    data = read_csv(path)
    assert data.schema.columns[0].categories == ("x;1", "z")
    np.testing.assert_array_equal(data.X[:, -1], [2, 3])
    np.testing.assert_array_equal(data.line_numbers, [2, 3])


def test_quoted_header_and_plain_rows(tmp_path: Path) -> None:
    path = write(tmp_path, "h.csv", '"a";"b";"y"\r\n1;2;0\r\n\r\n3;4;1\r\n')
    data = read_csv(path)
    assert data.feature_names == ["a", "b"]
    np.testing.assert_array_equal(data.X, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(data.line_numbers, [2, 4])


def test_undetectable_separator_suggests_sep(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "s.csv", "a:b:y\n1:2:0\n"))
    assert "only one column ('a:b:y')" in message
    assert "sep option" in message and "labelfirst" in message
    np.testing.assert_array_equal(read_csv(tmp_path / "s.csv", sep=":").X, [[1, 2]])


def test_uneven_rows_still_reported_with_detection(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "r.csv", "a;b;y\n1;2;0\n1;2\n"))
    assert "line 3" in message and "expected 3" in message and "found 2" in message


@pytest.mark.parametrize("sep", [",;", "", '"', "\n", "\r", 44, "\\t"])
def test_bad_sep(tmp_path: Path, sep: object) -> None:
    path = write(tmp_path, "t.csv", "a,y\n1,0\n")
    message = error_of(path, sep=sep)
    assert "sep must be one character" in message and repr(sep) in message
    assert "'\\t'" in message  # the fix shows how to write a tab
    with pytest.raises(DataError, match="sep must be one character"):
        read_with_schema(path, read_csv(path).schema, sep=sep)  # type: ignore[arg-type]


def test_sep_with_a_labelfirst_file(tmp_path: Path) -> None:
    path = write(tmp_path, "b.txt", "1 0 1\n0 1 0\n")
    message = error_of(path, sep=";")
    assert "label-first" in message and ".txt" in message and "input_format='csv'" in message
    message = error_of(write(tmp_path, "b.dat", "1 0 1\n"), sep=";", input_format="labelfirst")
    assert "label-first" in message and ".txt" not in message
    data = read_csv(write(tmp_path, "c.txt", "a;y\n1;0\n"), sep=";", input_format="csv")
    assert data.feature_names == ["a"]


def test_labelfirst_ignores_detection(tmp_path: Path) -> None:
    data = read_csv(write(tmp_path, "b.txt", "1 0;1 1\n0 1;0 0\n"))
    assert data.schema.columns[0] == ColumnSpec("x1", "categorical", ("0;1", "1;0"))


# ---------------------------------------------------------------------- decimal commas
def test_decimal_commas(tmp_path: Path) -> None:
    text = "a;b;c;y\n3,14;1;x;1,0\n-0,5;2;y;0,0\n2;3,5E-1;z;1\n"
    data = read_csv(write(tmp_path, "d.csv", text))
    assert [c.kind for c in data.schema.columns] == ["numeric", "numeric", "categorical"]
    np.testing.assert_array_equal(data.X[:, :2], [[3.14, 1], [-0.5, 2], [2, 0.35]])
    assert data.y is not None and data.y.dtype == np.int64
    np.testing.assert_array_equal(data.y, [1, 0, 1])


def test_decimal_commas_only_when_the_column_is_all_numbers(tmp_path: Path) -> None:
    text = "mixed;thousands;label\n1,5;1,234,5;1,5\n1.5;2;x\n"
    data = read_csv(write(tmp_path, "d.csv", text))
    assert data.schema.columns[0].categories == ("1,5", "1.5")  # a dot and a comma
    assert data.schema.columns[1].categories == ("1,234,5", "2")  # two commas
    assert data.y is not None and data.y.tolist() == ["1,5", "x"]


def test_no_decimal_commas_in_comma_separated_files(tmp_path: Path) -> None:
    data = read_csv(write(tmp_path, "q.csv", 'a,y\n"3,5",0\n"4,5",1\n'))
    assert data.schema.columns[0] == ColumnSpec("a", "categorical", ("3,5", "4,5"))


def test_decimal_commas_with_a_schema(tmp_path: Path) -> None:
    schema = read_csv(write(tmp_path, "train.csv", "a;y\n0,5;0\n1,5;1\n")).schema
    data = read_with_schema(write(tmp_path, "test.csv", "a\n2,25\n3\n"), schema, sep=";")
    np.testing.assert_array_equal(data.X, [[2.25], [3]])
    with pytest.raises(DataError, match=r"line 2, column 'a': '2,25' is not a number"):
        read_with_schema(write(tmp_path, "bad.csv", "a;y\n2,25;0\n3.5;1\n"), schema)


def test_one_column_file_to_predict_on(tmp_path: Path) -> None:
    schema = read_csv(write(tmp_path, "train.csv", "a,y\n1,0\n2,1\n")).schema
    data = read_with_schema(write(tmp_path, "test.csv", "a\n5\n6\n"), schema)
    np.testing.assert_array_equal(data.X, [[5], [6]])
    assert data.y is None


def test_missing_value_beside_decimal_commas(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "m.csv", "a;y\n0,5;0\nNA;1\n"), missing="error")
    assert "line 3" in message and "column 'a'" in message and "missing value 'NA'" in message


# ---------------------------------------------------------------------- fast reader
Outcome = Dataset | str | None


def outcome(read: object) -> Outcome:
    """What a reader gives: a Dataset, None (the fast reader declines) or the error message."""
    try:
        return read()  # type: ignore[operator,no-any-return]
    except DataError as exc:
        return str(exc)


def assert_same(fast: Outcome, exact: Outcome) -> None:
    """The fast reader's answer is the exact reader's, bit for bit (or the same message)."""
    assert isinstance(exact, (Dataset, str))
    if isinstance(fast, str) or isinstance(exact, str):
        assert fast == exact
        return
    assert isinstance(fast, Dataset)
    assert fast.X.dtype == exact.X.dtype == np.float64 and fast.X.flags.c_contiguous
    np.testing.assert_array_equal(fast.X, exact.X)
    np.testing.assert_array_equal(np.signbit(fast.X), np.signbit(exact.X))
    if exact.y is None:
        assert fast.y is None
    else:
        assert fast.y is not None and fast.y.dtype == exact.y.dtype
        np.testing.assert_array_equal(fast.y, exact.y)
    assert fast.schema == exact.schema
    assert fast.line_numbers.dtype == np.int64
    np.testing.assert_array_equal(fast.line_numbers, exact.line_numbers)
    assert fast.source == exact.source


def opened(path: Path, sep: str | None = None) -> sniff._File:
    """The file as the readers take it (the fast reader frees its bytes once it has parsed)."""
    return sniff._open(path, "auto", sep)


def both_readers(path: Path, sep: str | None = None, drop: tuple[str, ...] = ()) -> Dataset:
    """Read with the fast and the exact reader, check they agree, and return the result."""
    fast = outcome(lambda: fast_reader._read_csv_fast(opened(path, sep), None, drop))
    exact = outcome(lambda: exact_reader._read_csv_exact(opened(path, sep), None, drop))
    assert fast is not None, "the fast reader declined the file"
    assert_same(fast, exact)
    assert isinstance(exact, Dataset)
    return exact


def test_fast_reader_takes_plain_tables(tmp_path: Path) -> None:
    text = "a;colour;id;y\r\n1,5;red;x;cat\r\n\r\n2; blue ;?;dog\r\n-3;red;;cat\r\n\r\n"
    data = both_readers(write(tmp_path, "t.csv", text), drop=("id",))
    np.testing.assert_array_equal(data.X, [[1.5, 0, 1], [2, 1, 0], [-3, 0, 1]])
    assert data.y is not None and data.y.tolist() == ["cat", "dog", "cat"]
    np.testing.assert_array_equal(data.line_numbers, [2, 4, 5])
    path = write(tmp_path, "n.csv", "\n\n a , b ,y\n1,2,0\n3,4,1")
    np.testing.assert_array_equal(both_readers(path).line_numbers, [4, 5])


def late_surprise(tmp_path: Path, cell: str, rows: int = 150) -> Path:
    """A table of numbers whose column 'b' holds ``cell`` on line ``rows`` (past the sample)."""
    lines = ["a,b,y"] + [f"{i},{i / 8},{i % 2}" for i in range(rows)]
    lines[-2] = f"7,{cell},1"
    return write(tmp_path, "late.csv", "\n".join(lines) + "\n")


@pytest.mark.parametrize("sep", [",", ";"])
def test_late_text_in_a_column_of_numbers(tmp_path: Path, sep: str) -> None:
    cell = "red" if sep == "," else "at row 0, column 1."  # numpy's words for where it failed
    path = late_surprise(tmp_path, cell)
    path.write_text(path.read_text().replace(",", sep).replace("row 0; column", "row 0, column"))
    data = both_readers(path)
    assert data.schema.columns[1].kind == "categorical"
    assert cell in data.schema.columns[1].categories
    assert data.X.shape == (150, 1 + 150)
    np.testing.assert_array_equal(data.line_numbers, np.arange(2, 152))


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("NA", "line 150, column 'b': missing value 'NA' (1 missing cell in all)"),
        ("", "line 150, column 'b': empty cell"),
        ("nan", "line 150, column 'b': missing value 'nan'"),
        ("-inf", "line 150, column 'b': '-inf' is not a finite number"),
        ("1,2", "line 150: expected 3 cells"),
    ],
)
def test_late_problems_keep_their_messages(tmp_path: Path, cell: str, expected: str) -> None:
    path = late_surprise(tmp_path, cell)
    assert expected in error_of(path, missing="error")
    for missing in ("error", "split"):
        fast = outcome(lambda m=missing: fast_reader._read_csv_fast(opened(path), None, (), m))
        if fast is not None:  # a missing value in text it reports itself; nan, inf it leaves
            exact = outcome(
                lambda m=missing: exact_reader._read_csv_exact(opened(path), None, (), m)
            )
            assert_same(fast, exact)


@pytest.mark.parametrize("cell", ["NA", "", "nan"])
def test_late_missing_cells_are_kept(tmp_path: Path, cell: str) -> None:
    data = both_readers(late_surprise(tmp_path, cell))
    assert data.schema.columns[1].kind == "numeric"
    assert np.isnan(data.X[148, 1]) and np.isnan(data.X).sum() == 1


def test_late_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = late_surprise(tmp_path, "x")
    path.write_bytes(path.read_bytes().replace(b",x,", b",caf\xe9,"))
    message = error_of(path)
    assert "line 150" in message and "UTF-8" in message


def test_late_quotes_and_decimal_commas(tmp_path: Path) -> None:
    path = late_surprise(tmp_path, '"q,r"')
    assert "q,r" in read_csv(path).schema.columns[1].categories
    lines = ["a;b;y"] + [f"{i};{i};{i % 2}" for i in range(150)]
    lines[-2] = "7;0,5;1"
    data = read_csv(write(tmp_path, "d.csv", "\n".join(lines)))
    assert data.schema.columns[1].kind == "numeric" and data.X[-2, 1] == 0.5


WEIRD_CELLS = [
    *["", " ", "NA", "nan", "NaN", "-nan", "inf", "-Infinity", "None", "?", "n/a"],
    *["1_000", "\u0664", " 7 ", "+3.", ".5", "1e3", "-0", "0x10", "\xa02", "x y", "caf\u00e9"],
    *["1,5", "-0,25", "2,0", "1.5", "a;b", "c|d", "e\tf"],
]
CELLS = {
    "int": ["-3", "0", "1", "2", "12"],
    "float": ["0.5", "-1.25", "3", "1e-3", "2.0", "-0.0", "0", "7.125"],
    "comma": ["0,5", "-1,25", "3", "1,5E-3", "2"],
    "text": ["red", "blue", "1", "x y", "\u00e9t\u00e9"],
    "weird": WEIRD_CELLS,
}


@st.composite
def csv_files(draw: st.DrawFn) -> tuple[str, tuple[str, ...], int]:
    """A small CSV text with every feature of the readers: separators, kinds, odd cells, blanks."""
    sep = draw(st.sampled_from(SEPARATORS))
    n = draw(st.integers(1, 6))
    kinds = draw(st.lists(st.sampled_from(sorted(CELLS)), min_size=2, max_size=5))
    columns = [[draw(st.sampled_from(CELLS[kind])) for _ in range(n)] for kind in kinds]
    names = [f"c{j}" for j in range(len(kinds) - 1)] + ["y"]
    if draw(st.booleans()):
        names = [f'"{name}"' for name in names]
    pad = draw(st.sampled_from(["", " "]))
    lines = [sep.join(names)] + [
        sep.join(f"{pad}{column[i]}{pad}" for column in columns) for i in range(n)
    ]
    for _ in range(draw(st.integers(0, 2))):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["", "  "])))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = end.join(lines) + draw(st.sampled_from(["", end, end + end]))
    drop = ("c0",) if len(kinds) > 2 and draw(st.booleans()) else ()
    return text, drop, draw(st.sampled_from([2, 3, 100]))


@settings(deadline=None, max_examples=examples(200))
@given(csv_files())
def test_fast_and_exact_readers_agree(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, tuple[str, ...], int]
) -> None:
    text, drop, sample_lines = case
    path = write(tmp_path_factory.mktemp("agree"), "t.csv", text)
    with mock.patch.object(sniff, "_SAMPLE_LINES", sample_lines):
        fast = outcome(lambda: fast_reader._read_csv_fast(opened(path), None, drop))
        exact = outcome(lambda: exact_reader._read_csv_exact(opened(path), None, drop))
        if fast is not None:
            assert_same(fast, exact)
        if not isinstance(exact, Dataset):
            return
        schema = exact.schema
        fast = outcome(lambda: fast_reader._read_with_schema_fast(opened(path), schema, False))
        exact = outcome(lambda: exact_reader._read_with_schema_exact(opened(path), schema, False))
        if fast is not None:
            assert_same(fast, exact)


def test_fast_reader_takes_most_generated_files() -> None:
    """Guard for the property test above: the fast reader is not declining everything."""
    taken = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        values = rng.integers(-999, 999, size=(5, 3)) / 8
        text = "a;b;c;y\n" + "\n".join(";".join(map(str, row)) + ";1" for row in values)
        file = sniff._File(text.encode(), "mem.csv", False, ";", False)
        taken += fast_reader._read_csv_fast(file, None, ()) is not None
    assert taken == 40


def big_numeric_csv(path: Path, n: int) -> np.ndarray:
    """Write ``n`` rows of 20 three-decimal numbers and an integer label; return the values."""
    rng = np.random.default_rng(7)
    block = np.round(rng.uniform(-1000, 1000, size=(1000, 21)), 3)
    block[:, 20] = rng.integers(0, 5, size=1000)
    lines = [",".join(f"{v:.3f}" for v in row[:20]) + f",{int(row[20])}" for row in block]
    header = ",".join([*(f"f{j}" for j in range(20)), "label"])
    with path.open("wb") as out:
        out.write(header.encode() + b"\n")
        body = ("\n".join(lines) + "\n").encode()
        for k in range(n // 1000):
            out.write(body)
            if k == n // 2000:
                out.write(b"\n")  # one blank line half-way
    return np.tile(block, (n // 1000, 1))


@pytest.mark.slow
def test_large_numeric_csv(tmp_path: Path) -> None:
    n = 200_000
    expected = big_numeric_csv(tmp_path / "big.csv", n)
    data = read_csv(tmp_path / "big.csv")
    assert data.X.shape == (n, 20) and data.X.flags.c_contiguous
    np.testing.assert_array_equal(data.X, expected[:, :20])
    assert data.y is not None and data.y.dtype == np.int64
    np.testing.assert_array_equal(data.y, expected[:, 20].astype(np.int64))
    half = (n // 2000 + 1) * 1000  # rows before the blank line
    np.testing.assert_array_equal(data.line_numbers[:half], np.arange(2, half + 2))
    np.testing.assert_array_equal(data.line_numbers[half:], np.arange(half + 3, n + 3))
    assert data.feature_names == [f"f{j}" for j in range(20)]
