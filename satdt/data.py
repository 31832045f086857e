"""Reading and validating tables, once: CSV files, label-first benchmark files, arrays.

Every table becomes a float64 *design matrix*: numeric columns keep their values and a
categorical column ``colour`` with categories ``blue, red`` becomes the 0/1 columns
``colour == blue`` and ``colour == red``. A :class:`Schema` remembers how, so that data to
predict on is encoded exactly like the training data. Problems in the input raise
:class:`~satdt.errors.DataError` naming the file, the 1-based line and the column.
"""

from __future__ import annotations

import csv
import io
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ContradictionError, DataError

NUMERIC = "numeric"
CATEGORICAL = "categorical"
INPUT_FORMATS = ("auto", "csv", "labelfirst")
# Cells read from a file that mean "no value" (compared in lower case, after stripping).
MISSING_TOKENS = frozenset({"", "na", "n/a", "nan", "?", "null", "none"})
_COMPLETE_DATA_HINT = (
    "satdt needs complete data: impute the missing values, or remove the incomplete rows "
    "or the column"
)
# Every upper/lower-case spelling of the tokens, to find them in a column with np.isin.
_MISSING_SPELLINGS = sorted(
    {
        "".join(chars)
        for token in MISSING_TOKENS
        for chars in product(*({c, c.upper()} for c in token))
    }
)
_ROWS_SHOWN = 10  # rows listed per group of contradictory rows in an error message


# ---------------------------------------------------------------------- schema and dataset
@dataclass(frozen=True)
class ColumnSpec:
    """One input column: its name, ``"numeric"`` or ``"categorical"``, and the categories seen."""

    name: str
    kind: str
    categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class Schema:
    """How a table maps to the design matrix; saved with a model to encode new data the same way.

    Attributes
    ----------
    columns
        Input feature columns in file order (the label and dropped columns excluded).
    target
        Name of the label column.
    feature_names
        Names of the design-matrix columns (``colour == red`` for category indicators).
    indicator
        Indices of the design columns that are category indicators.
    dropped
        Columns removed when fitting; a file read with this schema may still contain them.
    """

    columns: tuple[ColumnSpec, ...]
    target: str
    feature_names: tuple[str, ...]
    indicator: tuple[int, ...]
    dropped: tuple[str, ...] = ()

    @classmethod
    def from_columns(
        cls, columns: Sequence[ColumnSpec], target: str, dropped: Sequence[str] = ()
    ) -> Schema:
        """Derive the design-matrix names and indicator indices from the input columns."""
        names: list[str] = []
        indicator: list[int] = []
        for spec in columns:
            if spec.kind == NUMERIC:
                names.append(spec.name)
            else:
                for category in spec.categories:
                    indicator.append(len(names))
                    names.append(f"{spec.name} == {category}")
        return cls(tuple(columns), target, tuple(names), tuple(indicator), tuple(dropped))

    @property
    def column_names(self) -> list[str]:
        return [spec.name for spec in self.columns]

    def encode(
        self,
        raw: list[list[str]] | np.ndarray,
        *,
        line_numbers: np.ndarray | None = None,
        source: str | None = None,
    ) -> np.ndarray:
        """Encode raw cells (``n`` rows by ``len(columns)``) as the float64 design matrix.

        Numeric cells are parsed as numbers; a category not seen when fitting gives 0 in all
        indicator columns of its column. ``line_numbers`` and ``source`` only improve messages.
        """
        array = raw if isinstance(raw, np.ndarray) else np.array(raw, dtype=object)
        if array.ndim != 2:
            raise DataError(
                f"data to encode must be a table (rows x columns), got an array of shape "
                f"{array.shape}; pass one row per example"
            )
        if array.shape[1] != len(self.columns):
            raise DataError(
                f"expected {len(self.columns)} columns ({', '.join(self.column_names)}) but got "
                f"{array.shape[1]}; give the columns the model was fitted on, in that order"
            )
        if line_numbers is None:
            line_numbers = np.arange(1, len(array) + 1, dtype=np.int64)
        parts = [
            _encode_column(spec, array[:, j], line_numbers, source)
            for j, spec in enumerate(self.columns)
        ]
        return _assemble(self.columns, parts, len(array))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary; :meth:`from_dict` restores an equal schema."""
        return {
            "columns": [
                {"name": s.name, "kind": s.kind, "categories": list(s.categories)}
                for s in self.columns
            ],
            "target": self.target,
            "feature_names": list(self.feature_names),
            "indicator": list(self.indicator),
            "dropped": list(self.dropped),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Schema:
        """Inverse of :meth:`to_dict`; a malformed dictionary raises :class:`DataError`."""
        try:
            columns = [
                ColumnSpec(str(c["name"]), str(c["kind"]), tuple(str(v) for v in c["categories"]))
                for c in d["columns"]
            ]
            schema = cls.from_columns(
                columns, str(d["target"]), [str(v) for v in d.get("dropped", ())]
            )
            stored = (tuple(d["feature_names"]), tuple(int(i) for i in d["indicator"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(
                f"not a valid satdt schema ({type(exc).__name__}: {exc}); the model file may be "
                f"damaged: fit the model again"
            ) from None
        kinds = {spec.kind for spec in columns} - {NUMERIC, CATEGORICAL}
        if kinds or stored != (schema.feature_names, schema.indicator):
            raise DataError(
                "not a valid satdt schema: column kinds must be 'numeric' or 'categorical' and "
                "the feature names must follow from the columns; the model file may be damaged: "
                "fit the model again"
            )
        return schema


@dataclass
class Dataset:
    """A validated table: design matrix, labels and where each row came from.

    Attributes
    ----------
    X
        float64 ``(n, p)`` design matrix, C-contiguous.
    y
        Labels: int64 when every label is an integer value, float64 when numeric otherwise,
        a unicode array for text labels; ``None`` when the table has no label column.
    schema
        How the table maps to ``X``.
    line_numbers
        int64 ``(n,)``: 1-based line of each row in the source file (the CSV header is line 1).
    source
        The file as given by the user, for messages.
    """

    X: np.ndarray
    y: np.ndarray | None
    schema: Schema
    line_numbers: np.ndarray
    source: str | None

    @property
    def feature_names(self) -> list[str]:
        return list(self.schema.feature_names)


# ---------------------------------------------------------------------- reading files
@dataclass
class _Table:
    """Raw cells of a file: one unicode array per column, stripped, no blank lines."""

    names: list[str]
    columns: list[np.ndarray]
    line_numbers: np.ndarray
    source: str
    label_first: bool

    def where(self, row: int, column: int) -> str:
        return f"{self.source}, line {self.line_numbers[row]}, column '{self.names[column]}'"


def _read_text(path: str | os.PathLike[str]) -> tuple[str, str]:
    """The file decoded as UTF-8 (a byte-order mark removed) and its name for messages."""
    source = os.fspath(path)
    p = Path(path)
    if p.is_dir():
        raise DataError(f"{source} is a directory, not a data file; give the path of a CSV file")
    if not p.exists():
        raise DataError(f"file not found: {source}; check the path and the file name")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise DataError(
            f"cannot read {source}: {exc.strerror}; check the file's permissions"
        ) from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(
            f"{source}, line {line}: byte 0x{data[exc.start]:02x} at offset {exc.start} is not "
            f"valid UTF-8; satdt reads UTF-8 text: save the file with UTF-8 encoding"
        ) from None
    if not text.strip():
        raise DataError(f"{source} is empty; expected one line per example (after a header line)")
    return text, source


def _check_rectangular(
    rows: list[list[str]], lines: list[int], width: int, what: str, source: str
) -> None:
    for cells, line in zip(rows, lines, strict=True):
        if len(cells) != width:
            raise DataError(
                f"{source}, line {line}: expected {width} cells ({what}) but found {len(cells)}; "
                f"every row needs one value per column: check for missing or extra separators"
            )


def _columns(rows: list[list[str]]) -> list[np.ndarray]:
    """Column-major unicode arrays (one per column, so one long cell does not widen them all)."""
    return [np.array(column, dtype=str) for column in zip(*rows, strict=True)]


def _read_csv_table(text: str, source: str) -> _Table:
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    rows: list[list[str]] = []
    lines: list[int] = []
    previous = 0
    try:
        for record in reader:
            start, previous = previous + 1, reader.line_num
            if not record or (len(record) == 1 and not record[0].strip()):
                continue  # a blank line
            cells = [cell.strip() for cell in record]
            if header is None:
                header = cells
            else:
                rows.append(cells)
                lines.append(start)
    except csv.Error as exc:
        raise DataError(
            f"{source}, line {reader.line_num}: not valid CSV ({exc}); fix or remove that line"
        ) from None
    if header is None:
        raise DataError(f"{source} has no header line; the first line must name the columns")
    for j, name in enumerate(header):
        if not name:
            raise DataError(
                f"{source}, line 1: column {j + 1} of the header has no name; every column needs "
                f"a name in the header line"
            )
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise DataError(
            f"{source}, line 1: duplicate column names in the header: {', '.join(duplicates)}; "
            f"rename them so that every column name is unique"
        )
    if len(header) == 1:
        raise DataError(
            f"{source}: the header has only one column ({header[0]!r}); a CSV file needs feature "
            f"columns and a label separated by commas (for whitespace-separated files with the "
            f"label first and no header, use the labelfirst input format)"
        )
    if not rows:
        raise DataError(f"{source} has a header but no data rows; add one line per example")
    _check_rectangular(rows, lines, len(header), "as many as the header has", source)
    return _Table(header, _columns(rows), np.array(lines, dtype=np.int64), source, False)


def _read_labelfirst_table(text: str, source: str) -> _Table:
    rows: list[list[str]] = []
    lines: list[int] = []
    for number, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        cells = line.split()
        if cells:
            rows.append(cells)
            lines.append(number)
    width = len(rows[0])
    if width == 1:
        raise DataError(
            f"{source}, line {lines[0]}: found one cell ({rows[0][0]!r}); a label-first file has "
            f"the label and then the features on each line, separated by spaces (for a CSV file "
            f"with a header, use the csv input format)"
        )
    _check_rectangular(rows, lines, width, f"as many as line {lines[0]} has", source)
    names = ["label", *(f"x{j}" for j in range(1, width))]
    return _Table(names, _columns(rows), np.array(lines, dtype=np.int64), source, True)


def _read_table(path: str | os.PathLike[str], input_format: str) -> _Table:
    if input_format not in INPUT_FORMATS:
        raise DataError(
            f"unknown input format {input_format!r}; choose one of {', '.join(INPUT_FORMATS)}"
        )
    text, source = _read_text(path)
    if input_format == "labelfirst" or (
        input_format == "auto" and Path(path).suffix.lower() == ".txt"
    ):
        return _read_labelfirst_table(text, source)
    return _read_csv_table(text, source)


# ---------------------------------------------------------------------- column analysis
def _unique(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, inverse = np.unique(column, return_inverse=True)
    return uniq, inverse.reshape(-1)


def _check_complete(
    table: _Table, uniques: dict[int, tuple[np.ndarray, np.ndarray]], label: int | None
) -> None:
    """Raise on the first missing cell (earliest line) among the given columns."""
    first: tuple[int, int] | None = None
    total = 0
    for j, (uniq, inverse) in uniques.items():
        bad = np.flatnonzero(np.isin(uniq, _MISSING_SPELLINGS))
        if len(bad):
            rows = np.flatnonzero(np.isin(inverse, bad))
            total += len(rows)
            if first is None or (rows[0], j) < first:
                first = (int(rows[0]), j)
    if first is not None:
        row, j = first
        cell = str(table.columns[j][row])
        seen = f"missing value {cell!r}" if cell else "empty cell"
        cells = "1 missing cell" if total == 1 else f"{total} missing cells"
        drop = "" if j == label else f" (--drop {table.names[j]})"
        raise DataError(
            f"{table.where(row, j)}: {seen} ({cells} in all); {_COMPLETE_DATA_HINT}{drop}"
        )


def _parse_floats(values: Sequence[str] | np.ndarray) -> np.ndarray | None:
    """The values as float64, or ``None`` if one of them is not a number."""
    items = values.tolist() if isinstance(values, np.ndarray) else values
    try:
        return np.array([float(v) for v in items], dtype=np.float64)
    except ValueError:
        return None


def _analyse_column(
    table: _Table, j: int, uniq: np.ndarray, inverse: np.ndarray
) -> tuple[ColumnSpec, np.ndarray]:
    """Kind of column ``j`` and its part of the design: float values, or category codes."""
    numbers = _parse_floats(uniq)
    if numbers is None:
        return ColumnSpec(table.names[j], CATEGORICAL, tuple(str(v) for v in uniq)), inverse
    infinite = np.flatnonzero(~np.isfinite(numbers[inverse]))
    if len(infinite):
        row = int(infinite[0])
        raise DataError(
            f"{table.where(row, j)}: {str(table.columns[j][row])!r} is not a finite number; "
            f"thresholds need finite values: replace it or drop the column"
        )
    return ColumnSpec(table.names[j], NUMERIC), numbers[inverse]


def _labels_from_uniques(uniq: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    """Labels as int64 (all integer values), float64 (other numbers) or text."""
    numbers = _parse_floats(uniq)
    if numbers is None or not np.all(np.isfinite(numbers)):
        return uniq.astype(str)[inverse]
    return _numeric_labels(numbers)[inverse]


def _numeric_labels(numbers: np.ndarray) -> np.ndarray:
    if np.all(numbers == np.round(numbers)) and np.all(np.abs(numbers) < 2.0**53):
        return numbers.astype(np.int64)
    return numbers.astype(np.float64)


def _assemble(columns: Sequence[ColumnSpec], parts: Sequence[np.ndarray], n: int) -> np.ndarray:
    """The design matrix from per-column parts: float values, or category codes (-1 unknown)."""
    width = sum(1 if spec.kind == NUMERIC else len(spec.categories) for spec in columns)
    X = np.empty((n, width), dtype=np.float64)
    k = 0
    for spec, part in zip(columns, parts, strict=True):
        if spec.kind == NUMERIC:
            X[:, k] = part
            k += 1
        else:
            m = len(spec.categories)
            X[:, k : k + m] = part[:, None] == np.arange(m)
            k += m
    return X


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, NaT and pandas.NA are not equal to themselves
    except (TypeError, ValueError):
        return True  # pandas.NA raises on bool()


def _row_name(line_numbers: np.ndarray, row: int, source: str | None) -> str:
    if source is None:
        return f"row {row}"
    return f"{source}, line {line_numbers[row]}"


def _encode_column(
    spec: ColumnSpec, values: np.ndarray, line_numbers: np.ndarray, source: str | None
) -> np.ndarray:
    """One column of raw values as design values (numeric) or category codes (categorical)."""
    if values.dtype.kind in "US":
        return _encode_text_column(spec, values.astype(str), line_numbers, source)
    if values.dtype.kind in "biuf":
        numbers = values.astype(np.float64)
        missing = np.flatnonzero(np.isnan(numbers))
        if len(missing) and spec.kind == NUMERIC:
            where = _row_name(line_numbers, int(missing[0]), source)
            raise DataError(
                f"{where}, column '{spec.name}': missing value (NaN); {_COMPLETE_DATA_HINT}"
            )
        if spec.kind == NUMERIC:
            return numbers
        values = values.astype(object)
    for row, value in enumerate(values):
        if _is_missing(value):
            where = _row_name(line_numbers, row, source)
            raise DataError(
                f"{where}, column '{spec.name}': missing value ({value}); {_COMPLETE_DATA_HINT}"
            )
    return _encode_text_column(
        spec, np.array([str(v) for v in values], dtype=str), line_numbers, source
    )


def _encode_text_column(
    spec: ColumnSpec, values: np.ndarray, line_numbers: np.ndarray, source: str | None
) -> np.ndarray:
    """Encode cells given as text, parsing each distinct value once."""
    uniq, inverse = _unique(values)
    known = set(spec.categories)
    for k, value in enumerate(uniq.tolist()):
        if value.strip().lower() in MISSING_TOKENS and value not in known:
            problem = f"missing value {value!r}; {_COMPLETE_DATA_HINT}"
        elif spec.kind == NUMERIC and not _is_number(value):
            problem = (
                f"{value!r} is not a number, but the column was numeric when the model was "
                f"fitted; give a number"
            )
        else:
            continue
        where = _row_name(line_numbers, int(np.flatnonzero(inverse == k)[0]), source)
        raise DataError(f"{where}, column '{spec.name}': {problem}")
    if spec.kind == NUMERIC:
        return np.array([float(v) for v in uniq.tolist()], dtype=np.float64)[inverse]
    codes = {category: k for k, category in enumerate(spec.categories)}
    return np.array([codes.get(v, -1) for v in uniq.tolist()], dtype=np.int64)[inverse]


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------- public readers
def _resolve_target(table: _Table, target: str | int | None) -> int:
    names = table.names
    available = ", ".join(names)
    if table.label_first:
        if target is None or target in (0, "0", "label"):
            return 0
        raise DataError(
            f"{table.source}: a label-first file has its label in the first column; a target "
            f"({target!r}) cannot be chosen: leave it out"
        )
    if target is None:
        return len(names) - 1
    if isinstance(target, str) and target.strip() in names:
        return names.index(target.strip())
    index: int | None = None
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        index = int(target)
    elif isinstance(target, str) and target.strip().isdigit():
        index = int(target.strip())
    if index is None:
        raise DataError(
            f"{table.source}: unknown target column {target!r}; available columns: {available}; "
            f"give a column name or a 0-based column index"
        )
    if not 0 <= index < len(names):
        raise DataError(
            f"{table.source}: target index {index} is out of range: the file has {len(names)} "
            f"columns (indices 0 to {len(names) - 1}: {available})"
        )
    return index


def _resolve_drop(table: _Table, drop: Sequence[str], label: int) -> list[int]:
    if isinstance(drop, str):
        drop = [drop]
    unknown = [name for name in drop if name not in table.names]
    if unknown:
        raise DataError(
            f"{table.source}: cannot drop {', '.join(map(repr, unknown))}: no such column; "
            f"available columns: {', '.join(table.names)}"
        )
    indices = sorted({table.names.index(name) for name in drop})
    if label in indices:
        raise DataError(
            f"{table.source}: dropping {table.names[label]!r} would remove the label column; "
            f"keep it, or choose another label column with the target option"
        )
    return indices


def read_csv(
    path: str | os.PathLike[str],
    *,
    target: str | int | None = None,
    drop: Sequence[str] = (),
    input_format: str = "auto",
) -> Dataset:
    """Read and validate a table: a CSV file with a header, or a label-first benchmark file.

    Parameters
    ----------
    path
        The file. With ``input_format="auto"``, a ``.txt`` file is read as label-first
        (whitespace-separated, no header, label in the first column, features ``x1..xm``),
        anything else as CSV.
    target
        CSV only: the label column, as a name or a 0-based index (default: the last column).
    drop
        Names of columns to ignore.
    input_format
        ``"auto"``, ``"csv"`` or ``"labelfirst"``.

    A column is numeric when every cell is a number, otherwise categorical. Blank lines are
    skipped; missing values, ragged rows and the like raise :class:`DataError`.
    """
    table = _read_table(path, input_format)
    label = _resolve_target(table, target)
    dropped = _resolve_drop(table, drop, label)
    features = [j for j in range(len(table.names)) if j != label and j not in dropped]
    if not features:
        raise DataError(
            f"{table.source}: no feature columns left besides the label "
            f"{table.names[label]!r}; keep at least one feature column"
        )
    uniques = {j: _unique(table.columns[j]) for j in [*features, label]}
    _check_complete(table, uniques, label)
    specs: list[ColumnSpec] = []
    parts: list[np.ndarray] = []
    for j in features:
        spec, part = _analyse_column(table, j, *uniques[j])
        specs.append(spec)
        parts.append(part)
    schema = Schema.from_columns(specs, table.names[label], [table.names[j] for j in dropped])
    X = _assemble(specs, parts, len(table.line_numbers))
    y = _labels_from_uniques(*uniques[label])
    return Dataset(X, y, schema, table.line_numbers, table.source)


def read_with_schema(
    path: str | os.PathLike[str],
    schema: Schema,
    *,
    input_format: str = "auto",
    require_target: bool = False,
) -> Dataset:
    """Read a file to predict on (or to evaluate), encoding it with a fitted ``schema``.

    CSV columns are matched by name, in any order; the label column may be present (then
    ``y`` is filled) or absent, and columns dropped when fitting are ignored. A label-first
    file is matched by position. ``require_target=True`` makes a missing label an error.
    """
    table = _read_table(path, input_format)
    wanted = schema.column_names
    if table.label_first:
        if len(table.names) != len(wanted) + 1:
            raise DataError(
                f"{table.source}: expected the label and {len(wanted)} features per line, as "
                f"when the model was fitted, but found {len(table.names) - 1} features"
            )
        positions, label = list(range(1, len(wanted) + 1)), 0
    else:
        index = {name: j for j, name in enumerate(table.names)}
        missing = [name for name in wanted if name not in index]
        known = {*wanted, schema.target, *schema.dropped}
        unexpected = [name for name in table.names if name not in known]
        if missing or unexpected:
            problems = []
            if missing:
                problems.append(f"missing columns: {', '.join(missing)}")
            if unexpected:
                problems.append(f"unexpected columns: {', '.join(unexpected)}")
            raise DataError(
                f"{table.source}: the columns do not match the model ({'; '.join(problems)}); "
                f"the model expects the columns {', '.join(wanted)} (and optionally the label "
                f"{schema.target!r})"
            )
        positions = [index[name] for name in wanted]
        label = index.get(schema.target)
    if label is None and require_target:
        raise DataError(
            f"{table.source}: the label column {schema.target!r} is missing; it is needed to "
            f"compare predictions with the true labels"
        )
    used = positions if label is None else [*positions, label]
    uniques = {j: _unique(table.columns[j]) for j in used}
    _check_complete(table, uniques, label)
    parts = [
        _encode_column(spec, table.columns[j], table.line_numbers, table.source)
        for spec, j in zip(schema.columns, positions, strict=True)
    ]
    X = _assemble(schema.columns, parts, len(table.line_numbers))
    y = None if label is None else _labels_from_uniques(*uniques[label])
    return Dataset(X, y, schema, table.line_numbers, table.source)


def _frame_columns(X: Any) -> tuple[list[str], list[np.ndarray]] | None:
    """Column names and values of a pandas DataFrame, or ``None`` when X is not one.

    pandas is never imported here: if it is not loaded, X cannot be a DataFrame.
    """
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(X, pd.DataFrame):
        return None
    names = [str(c) for c in X.columns]
    values: list[np.ndarray] = []
    for j in range(X.shape[1]):
        series = X.iloc[:, j]
        dtype = series.dtype
        if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
            values.append(series.to_numpy(dtype=np.float64, na_value=np.nan))
        else:
            values.append(series.to_numpy(dtype=object))
    return names, values


def _array_columns(
    X: Any, feature_names: Sequence[str] | None
) -> tuple[list[str], list[np.ndarray]]:
    frame = _frame_columns(X)
    if frame is not None:
        names, values = frame
        if feature_names is not None and list(feature_names) != names:
            raise DataError(
                "feature_names differ from the DataFrame's column names; leave feature_names out "
                "or rename the columns"
            )
        return names, values
    array = np.asarray(X)
    if array.ndim != 2:
        raise DataError(
            f"X must be a 2-D table (rows x columns), got shape {array.shape}; for a single "
            f"feature use X.reshape(-1, 1)"
        )
    if array.dtype.kind not in "biufOUS":
        raise DataError(
            f"X has unsupported dtype {array.dtype}; give numbers, or strings for categories"
        )
    if array.dtype.kind in "biuf":
        values = list(array.astype(np.float64).T)
    else:
        values = list(array.astype(object).T)
    if feature_names is None:
        names = [f"x{j}" for j in range(array.shape[1])]
    else:
        names = [str(name) for name in feature_names]
        if len(names) != array.shape[1]:
            raise DataError(
                f"feature_names has {len(names)} names but X has {array.shape[1]} columns; "
                f"give one name per column"
            )
    return names, values


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def _labels_from_array(y: Any, n: int) -> np.ndarray:
    labels = np.asarray(y)
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels.ravel()
    if labels.ndim != 1 or len(labels) != n:
        raise DataError(f"y must hold one label per row of X ({n} rows), got shape {labels.shape}")
    if labels.dtype.kind == "b":
        return labels
    if labels.dtype.kind in "iu":
        return labels.astype(np.int64)
    if labels.dtype.kind in "US":
        return labels.astype(str)
    if labels.dtype.kind not in "fO":
        raise DataError(f"y has unsupported dtype {labels.dtype}; give numbers or strings")
    missing = [i for i, v in enumerate(labels.tolist()) if _is_missing(v)]
    if missing:
        raise DataError(f"y, row {missing[0]}: missing label; every row needs a label")
    if labels.dtype.kind == "f":
        if not np.all(np.isfinite(labels)):
            raise DataError(
                "y contains an infinite label; labels must be finite numbers or strings"
            )
        return _numeric_labels(labels)
    items = labels.tolist()
    if all(isinstance(v, (bool, np.bool_)) for v in items):
        return labels.astype(bool)
    if all(_is_real(v) and math.isfinite(v) for v in items):
        return _numeric_labels(np.array(items, dtype=np.float64))
    return np.array([str(v) for v in items], dtype=str)


def from_arrays(
    X: Any, y: Any = None, *, feature_names: Sequence[str] | None = None
) -> tuple[np.ndarray, Schema, np.ndarray | None]:
    """Validate in-memory data: a NumPy array or a pandas DataFrame, and optional labels.

    Numeric columns stay numeric; columns of strings (object arrays; object, category, string
    or bool DataFrame columns) are categorical and become 0/1 indicator columns. Labels are
    normalised as in :func:`read_csv` (boolean labels stay boolean).

    Returns
    -------
    X, schema, y
        The float64 design matrix, its schema and the labels (``None`` when ``y`` is).
    """
    names, values = _array_columns(X, feature_names)
    n = len(values[0]) if values else len(np.asarray(X))
    if n == 0 or not values:
        raise DataError(
            f"X has {n} rows and {len(values)} columns; at least one row and one column are needed"
        )
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise DataError(f"duplicate column names: {', '.join(duplicates)}; make them unique")
    specs: list[ColumnSpec] = []
    parts: list[np.ndarray] = []
    line_numbers = np.arange(1, n + 1, dtype=np.int64)
    for name, column in zip(names, values, strict=True):
        if column.dtype.kind == "O" and all(_is_real(v) for v in column):
            column = column.astype(np.float64)
        if column.dtype.kind == "f":
            spec = ColumnSpec(name, NUMERIC)
            numbers = _encode_column(spec, column, line_numbers, None)
            infinite = np.flatnonzero(np.isinf(numbers))
            if len(infinite):
                raise DataError(
                    f"row {infinite[0]}, column '{name}': infinite value; thresholds need finite "
                    f"values: replace it or drop the column"
                )
            specs.append(spec)
            parts.append(numbers)
            continue
        for row, value in enumerate(column):
            if _is_missing(value):
                raise DataError(
                    f"row {row}, column '{name}': missing value ({value}); {_COMPLETE_DATA_HINT}"
                )
        uniq, inverse = _unique(np.array([str(v) for v in column], dtype=str))
        specs.append(ColumnSpec(name, CATEGORICAL, tuple(str(v) for v in uniq)))
        parts.append(inverse)
    target = "y"
    if y is not None and getattr(y, "name", None) is not None:
        target = str(y.name)
    schema = Schema.from_columns(specs, target)
    labels = None if y is None else _labels_from_array(y, n)
    return _assemble(specs, parts, n), schema, labels


# ---------------------------------------------------------------------- contradictions
def find_contradictions(X: np.ndarray, y: np.ndarray) -> list[list[int]]:
    """Groups of rows with identical features but not all the same label.

    Returns 0-based row indices, ascending within a group, groups ordered by their first row.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if len(X) == 0:
        return []
    _, rows = np.unique(X + 0.0, axis=0, return_inverse=True)  # + 0.0 turns -0.0 into 0.0
    _, labels = np.unique(y, return_inverse=True)
    rows, labels = rows.reshape(-1), labels.reshape(-1)
    pairs = np.unique(np.stack([rows, labels], axis=1), axis=0)
    n_labels = np.bincount(pairs[:, 0], minlength=rows.max() + 1)
    groups: dict[int, list[int]] = {}
    for i in np.flatnonzero(n_labels[rows] > 1).tolist():
        groups.setdefault(int(rows[i]), []).append(i)
    return list(groups.values())


def contradiction_error(
    groups: Sequence[Sequence[int]],
    y: np.ndarray,
    line_numbers: np.ndarray,
    source: str | None,
    limit: int = 10,
) -> ContradictionError:
    """The error for contradictory rows, listing at most ``limit`` groups by line number."""
    y = np.asarray(y)
    line_numbers = np.asarray(line_numbers)
    count = len(groups)
    verb = "group of rows has" if count == 1 else "groups of rows have"
    head = f"no consistent tree exists: {count} {verb} identical features but different labels"
    lines = [f"{head} (rows numbered from 1)" if source is None else f"{head} in {source}"]
    where = "rows" if source is None else "lines"
    for group in groups[:limit]:
        shown = group[:_ROWS_SHOWN]
        numbers = ", ".join(str(line_numbers[i]) for i in shown)
        labels = ", ".join(str(y[i]) for i in shown)
        if len(group) > len(shown):
            numbers += f", ... ({len(group)} rows)"
            labels += ", ..."
        lines.append(f"  {where} {numbers}: labels {labels}")
    if count > limit:
        lines.append(f"  ... and {count - limit} more groups")
    lines.append("use --resolve majority to keep each group's majority label")
    line_groups = [[int(line_numbers[i]) for i in group] for group in groups]
    return ContradictionError("\n".join(lines), line_groups)


def resolve_majority(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, int]:
    """Give every group of identical rows its majority label (ties: the smallest label).

    Returns the new labels and the number of rows whose label changed.
    """
    y = np.asarray(y)
    resolved = y.copy()
    changed = 0
    for group in find_contradictions(X, y):
        labels, counts = np.unique(y[group], return_counts=True)
        majority = labels[np.argmax(counts)]  # argmax takes the first, i.e. smallest, of ties
        changed += int(np.count_nonzero(y[group] != majority))
        resolved[group] = majority
    return resolved, changed
