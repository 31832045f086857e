"""Reading and validating tables, once: CSV files, label-first benchmark files, arrays.

A CSV file is split at a given separator or one detected from its first lines (comma,
semicolon, tab or ``|``). Tables of numbers are parsed by numpy's C parser (the *fast
reader*); a file with quotes or anything unusual goes to Python's csv module (the *exact
reader*), which performs every check. Both give the same result, down to the error messages.

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
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np

from .errors import DataError

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
SEPARATORS = (",", ";", "\t", "|")  # what sep=None detects, in order of preference
_SAMPLE_LINES = 100  # lines read to detect the separator and guess which columns hold numbers
_SAMPLE_BYTES = 1 << 18  # ... fewer lines once the sample is this long (wide tables)
_RETRIES = 8  # fast-reader passes (a column of numbers turning out to be text) before giving up
_LINE_END = re.compile(rb"\r\n|\r|\n")
_NON_BLANK = re.compile(rb"\S")
# A number numpy's C parser reads exactly as float() does; a column of them is parsed in C.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
# A number with a decimal comma, as spreadsheets in many European languages write it.
_DECIMAL_COMMA = re.compile(r"[+-]?(?:\d+(?:,\d*)?|,\d+)(?:[eE][+-]?\d+)?", re.ASCII)
# Where numpy's loadtxt reports a cell it could not read ("... at row 3, column 4."), at the
# end of the message (the cell's text, quoted before, may contain anything).
_NUMPY_CELL = re.compile(r"at row \d+, column (\d+)\.?\Z")

# One column as read: float64 values (fast reader), or the sorted distinct cells and the
# index of each row's cell among them.
_Column: TypeAlias = np.ndarray | tuple[np.ndarray, np.ndarray]


@dataclass
class _File:
    """A data file in memory: its bytes (byte-order mark removed), its name and how to split it."""

    data: bytes
    source: str
    label_first: bool
    sep: str  # the CSV separator, given or detected ("" for a label-first file)
    sep_given: bool

    @property
    def decimal_comma(self) -> bool:
        """Whether cells such as ``3,14`` may be numbers: only if commas do not separate cells."""
        return not self.label_first and self.sep != ","


@dataclass
class _Table:
    """A file's column names and the line of each row; raw cells only from the exact reader."""

    names: list[str]
    columns: list[np.ndarray]  # stripped cells, one unicode array per column (exact reader)
    line_numbers: np.ndarray
    source: str
    label_first: bool

    def where(self, row: int, column: int) -> str:
        return f"{self.source}, line {self.line_numbers[row]}, column '{self.names[column]}'"


def _read_bytes(path: str | os.PathLike[str]) -> tuple[bytes, str]:
    """The file's bytes (a UTF-8 byte-order mark removed) and its name for messages."""
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
    return data, source


def _decode(data: bytes, source: str) -> str:
    """The whole file as text; raises on bytes that are not UTF-8 and on an empty file."""
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
    return text


def _check_sep(sep: object) -> str | None:
    if sep is None:
        return None
    if not isinstance(sep, str) or len(sep) != 1 or sep in '"\r\n':
        raise DataError(
            f"sep must be one character other than a quote or a line break (such as ',', ';', "
            f"'\\t' or '|'), got {sep!r}; give a single character (a tab is '\\t', the tab "
            f"character itself), or leave sep out to detect the separator"
        )
    return sep


def _open(path: str | os.PathLike[str], input_format: str, sep: object) -> _File:
    """Check the options, read the file and settle its format and separator."""
    if input_format not in INPUT_FORMATS:
        raise DataError(
            f"unknown input format {input_format!r}; choose one of {', '.join(INPUT_FORMATS)}"
        )
    given = _check_sep(sep)
    by_name = input_format == "auto" and Path(path).suffix.lower() == ".txt"
    label_first = input_format == "labelfirst" or by_name
    if label_first and given is not None:
        why = " because its name ends in .txt" if by_name else ""
        raise DataError(
            f"sep={given!r} applies to CSV files, but {os.fspath(path)} is read as a label-first "
            f"file (whitespace-separated, no header){why}; leave sep out, or set "
            f"input_format='csv' to read it as a CSV file with a header"
        )
    data, source = _read_bytes(path)
    if label_first:
        return _File(data, source, True, "", False)
    return _File(data, source, False, given or _detect_sep(data), given is not None)


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


def _read_csv_table(text: str, source: str, sep: str, sep_given: bool, min_columns: int) -> _Table:
    """The exact reader: Python's csv module, for every file the fast reader declines."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
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
    if len(header) < min_columns:
        if sep_given:
            rule = f"split at sep={sep!r}, the header has only one column ({header[0]!r})"
            fix = "give the separator the file uses with the sep option"
        else:
            rule = (
                f"the header has only one column ({header[0]!r}): no comma, semicolon, tab or "
                f"'|' separates its column names"
            )
            fix = "if the file uses another separator, give it with the sep option"
        raise DataError(
            f"{source}: {rule}; a CSV file needs feature columns and a label: {fix} (for "
            f"whitespace-separated files with the label first and no header, use the labelfirst "
            f"input format)"
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


def _exact_table(file: _File, min_columns: int) -> _Table:
    """Every cell of the file as text, with every check: the reference the fast reader matches.

    ``min_columns`` is 2 for a table to fit on (features and a label), 1 for data to predict on.
    """
    text = _decode(file.data, file.source)
    if file.label_first:
        return _read_labelfirst_table(text, file.source)
    return _read_csv_table(text, file.source, file.sep, file.sep_given, min_columns)


# ---------------------------------------------------------------------- separator and sample
@dataclass
class _Sample:
    """The first records of a CSV file split at one separator (cells stripped, blanks skipped)."""

    header: list[str]
    rows: list[list[str]]
    header_lines: int  # physical lines up to the end of the header, blank lines before it included


def _head(data: bytes) -> tuple[str, bool] | None:
    """The first lines of the file as text and whether they are all of it; None if not UTF-8.

    At most ``_SAMPLE_LINES`` non-blank lines, fewer once they pass ``_SAMPLE_BYTES``: enough to
    see the header and a sample of rows without decoding a large file.
    """
    end, count, start = len(data), 0, 0
    for match in _LINE_END.finditer(data):
        count += bool(data[start : match.start()].strip())  # blank lines do not count
        start = match.end()
        if count >= _SAMPLE_LINES or (count >= 3 and start >= _SAMPLE_BYTES):
            end = start
            break
    try:
        return data[:end].decode("utf-8"), end == len(data)
    except UnicodeDecodeError:
        return None


def _sample(head: tuple[str, bool], sep: str) -> _Sample | None:
    """The head split at ``sep`` like the exact reader splits the file; None if csv rejects it."""
    text, complete = head
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    records: list[list[str]] = []
    header_lines = 0
    try:
        for record in reader:
            if not record or (len(record) == 1 and not record[0].strip()):
                continue
            records.append([cell.strip() for cell in record])
            if len(records) == 1:
                header_lines = reader.line_num
    except csv.Error:
        return None
    if not complete and records:
        records.pop()  # a quoted cell of the last record may go on past the sample
    if not records:
        return None
    return _Sample(records[0], records[1:], header_lines)


def _detect_sep(data: bytes) -> str:
    """The separator of a CSV file, from its header and first lines (see :func:`read_csv`).

    A candidate of :data:`SEPARATORS` is accepted when it splits the header into two fields or
    more and every sampled line into as many; the first accepted one wins, so a comma is
    preferred. With none accepted, the first that at least splits the header is returned, so
    that the exact reader reports the uneven rows; with none of that either, a comma, so that
    it reports a one-column header.
    """
    head = _head(data)
    if head is None:
        return ","
    splitting: list[str] = []
    for sep in SEPARATORS:
        sample = _sample(head, sep)
        if sample is None or len(sample.header) < 2:
            continue
        if all(len(row) == len(sample.header) for row in sample.rows):
            return sep
        splitting.append(sep)
    return splitting[0] if splitting else ","


# ---------------------------------------------------------------------- fast reader
def _fast_start(file: _File, min_columns: int) -> tuple[_Sample, int] | None:
    """The sample of a file the fast reader can take, and the offset of the line after the header.

    The fast reader takes CSV files split at one of :data:`SEPARATORS` whose header is valid and
    whose lines after the header hold no quote, no NUL byte and no lone carriage return: there,
    a record is a line and numpy's C parser splits it as the csv module would.
    """
    if file.label_first or file.sep not in SEPARATORS:
        return None
    head = _head(file.data)
    sample = None if head is None else _sample(head, file.sep)
    if sample is None:
        return None
    header = sample.header
    if len(header) < min_columns or "" in header or len(set(header)) != len(header):
        return None
    data = file.data
    offset = -1
    for count, match in enumerate(_LINE_END.finditer(data), 1):
        if count == sample.header_lines:
            offset = match.end()
            break
    if offset < 0 or data.find(b'"', offset) >= 0 or data.find(b"\0", offset) >= 0:
        return None
    if data.find(b"\r", offset) >= 0 and data.count(b"\r", offset) != data.count(b"\r\n", offset):
        return None
    if _NON_BLANK.search(data, offset) is None:
        return None  # no data rows: the exact reader says so
    return sample, offset


def _guess_mode(sample: _Sample, j: int, decimal_comma: bool) -> str:
    """How the fast reader first reads column ``j``, judged on the sample rows."""
    cells = [row[j] for row in sample.rows if j < len(row)]
    if all(_PLAIN_NUMBER.fullmatch(cell) for cell in cells):
        return "float"
    if decimal_comma and all(_DECIMAL_COMMA.fullmatch(cell) for cell in cells):
        return "comma"
    return "text"


def _skip(cell: str) -> float:
    """A numpy converter for a column that is not used: its cells are not parsed."""
    return 0.0


def _decimal_comma_number(cell: str) -> float:
    """A numpy converter for a column of numbers with decimal commas (``3,14``)."""
    cell = cell.strip()
    if _DECIMAL_COMMA.fullmatch(cell) is None:
        raise ValueError(f"not a number with a decimal comma: {cell!r}")
    return float(cell.replace(",", "."))


def _numberer(seen: dict[str, int]) -> Callable[[str], int]:
    """A numpy converter giving each distinct stripped cell of a column a number, in order."""

    def number(cell: str) -> int:
        return seen.setdefault(cell.strip(), len(seen))

    return number


def _distinct(seen: dict[str, int], numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct cells and each row's index among them, as :func:`numpy.unique` gives."""
    cells = list(seen)
    order = sorted(range(len(cells)), key=cells.__getitem__)
    rank = np.empty(len(cells), dtype=np.intp)
    rank[order] = np.arange(len(cells))
    return np.array([cells[k] for k in order], dtype=str), rank[numbers.astype(np.intp)]


def _line_numbers(data: bytes, offset: int, first: int, n: int) -> np.ndarray | None:
    """The line number of each non-blank line from ``offset`` on (whose line is ``first``).

    None unless there are ``n`` such lines. Line ends are ``\\n`` or ``\\r\\n`` here.
    """
    if data.count(b"\n", offset) + (not data.endswith(b"\n")) == n:
        return np.arange(first, first + n, dtype=np.int64)  # no blank line
    buf = np.frombuffer(data, dtype=np.uint8, offset=offset)
    ends = np.flatnonzero(buf == ord("\n"))
    starts = np.concatenate(([0], ends + 1))
    stops = np.concatenate((ends, [len(buf)]))
    length = stops - starts
    filled = length > 0
    length[filled] -= buf[stops[filled] - 1] == ord("\r")
    rows = np.flatnonzero(length > 0)
    return rows.astype(np.int64) + first if len(rows) == n else None


def _parse_fast(
    file: _File, sample: _Sample, offset: int, modes: list[str]
) -> tuple[dict[int, _Column], np.ndarray] | None:
    """Parse the lines after the header with numpy's C parser, in one pass over the text.

    ``modes[j]`` is ``"float"`` (a column of numbers, parsed in C), ``"comma"`` (numbers with
    decimal commas, converted cell by cell), ``"text"`` (distinct cells numbered by a converter,
    without keeping a Python string per cell) or ``"skip"``. A column with a cell its mode
    cannot read is read in the next mode in another pass (float, then comma if the file may
    have decimal commas, then text). Returns the used columns and the line numbers, or None
    when the file needs the exact reader (uneven rows, a value that is not finite, lines of
    spaces, bytes that are not UTF-8, ...).

    A column read as numbers with decimal commas gets the exact reader's values: if none of its
    cells has a comma, they are plain numbers, which is what the exact reader sees then.
    """
    width = len(sample.header)
    modes = list(modes)
    for _ in range(_RETRIES):
        seen: dict[int, dict[str, int]] = {j: {} for j, m in enumerate(modes) if m == "text"}
        converters: dict[int, Callable[[str], float | int]] = {
            j: _decimal_comma_number if m == "comma" else _skip
            for j, m in enumerate(modes)
            if m in ("comma", "skip")
        }
        converters.update({j: _numberer(cells) for j, cells in seen.items()})
        stream = io.BytesIO(file.data)
        stream.seek(offset)
        try:
            values = np.loadtxt(
                io.TextIOWrapper(stream, encoding="utf-8"),
                delimiter=file.sep,
                comments=None,
                quotechar=None,
                dtype=np.float64,
                ndmin=2,
                converters=converters or None,
            )
        except ValueError as exc:  # also UnicodeDecodeError
            match = _NUMPY_CELL.search(str(exc))
            j = int(match.group(1)) - 1 if match else -1
            if not 0 <= j < width or modes[j] not in ("float", "comma"):
                return None
            modes[j] = "comma" if modes[j] == "float" and file.decimal_comma else "text"
            continue
        break
    else:
        return None
    if values.ndim != 2 or values.shape[1] != width or len(values) == 0:
        return None
    line_numbers = _line_numbers(file.data, offset, sample.header_lines + 1, len(values))
    if line_numbers is None:
        return None
    finite = np.isfinite(values).all(axis=0)  # one pass over the rows, not one per column
    columns: dict[int, _Column] = {}
    for j, mode in enumerate(modes):
        if mode in ("float", "comma"):
            if not finite[j]:
                return None  # nan, inf: the exact reader tells the token and the line
            columns[j] = values[:, j]
        elif mode == "text":
            columns[j] = _distinct(seen[j], values[:, j])
    return columns, line_numbers


# ---------------------------------------------------------------------- column analysis
def _unique(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, inverse = np.unique(column, return_inverse=True)
    return uniq, inverse.reshape(-1)


def _check_complete(table: _Table, columns: dict[int, _Column], label: int | None) -> None:
    """Raise on the first missing cell (earliest line) among the given columns.

    Columns of numbers from the fast reader hold finite values only, so no missing cell.
    """
    first: tuple[int, int] | None = None
    total = 0
    for j, column in columns.items():
        if isinstance(column, np.ndarray):
            continue
        uniq, inverse = column
        bad = np.flatnonzero(np.isin(uniq, _MISSING_SPELLINGS))
        if len(bad):
            rows = np.flatnonzero(np.isin(inverse, bad))
            total += len(rows)
            if first is None or (rows[0], j) < first:
                first = (int(rows[0]), j)
    if first is not None:
        row, j = first
        uniq, inverse = columns[j]  # type: ignore[misc]  # a column of text
        cell = str(uniq[inverse[row]])
        seen = f"missing value {cell!r}" if cell else "empty cell"
        cells = "1 missing cell" if total == 1 else f"{total} missing cells"
        drop = "" if j == label else f" (drop={table.names[j]!r})"
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


def _parse_decimal_commas(values: np.ndarray) -> np.ndarray | None:
    """Numbers written with a decimal comma (``3,14``; ``3`` too), or ``None``.

    ``None`` unless every value is such a number (no dot, at most one comma) and one at least
    has a comma.
    """
    items = values.tolist()
    if not any("," in v for v in items) or not all(_DECIMAL_COMMA.fullmatch(v) for v in items):
        return None
    return np.array([float(v.replace(",", ".")) for v in items], dtype=np.float64)


def _parse_numbers(values: np.ndarray, decimal_comma: bool) -> np.ndarray | None:
    """The distinct cells of a column as numbers (decimal commas if allowed), or ``None``."""
    numbers = _parse_floats(values)
    if numbers is None and decimal_comma:
        numbers = _parse_decimal_commas(values)
    return numbers


def _analyse_column(
    table: _Table, j: int, uniq: np.ndarray, inverse: np.ndarray, decimal_comma: bool
) -> tuple[ColumnSpec, np.ndarray]:
    """Kind of column ``j`` and its part of the design: float values, or category codes."""
    numbers = _parse_numbers(uniq, decimal_comma)
    if numbers is None:
        return ColumnSpec(table.names[j], CATEGORICAL, tuple(str(v) for v in uniq)), inverse
    infinite = np.flatnonzero(~np.isfinite(numbers[inverse]))
    if len(infinite):
        row = int(infinite[0])
        raise DataError(
            f"{table.where(row, j)}: {str(uniq[inverse[row]])!r} is not a finite number; "
            f"thresholds need finite values: replace it or drop the column"
        )
    return ColumnSpec(table.names[j], NUMERIC), numbers[inverse]


def _labels(column: _Column, decimal_comma: bool) -> np.ndarray:
    """The label column as int64 (all integer values), float64 (other numbers) or text."""
    if isinstance(column, np.ndarray):
        return _numeric_labels(column)  # finite numbers from the fast reader
    return _labels_from_uniques(*column, decimal_comma=decimal_comma)


def _labels_from_uniques(
    uniq: np.ndarray, inverse: np.ndarray, *, decimal_comma: bool = False
) -> np.ndarray:
    """Labels as int64 (all integer values), float64 (other numbers) or text."""
    numbers = _parse_numbers(uniq, decimal_comma)
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
    # Blocks of rows that stay in the cache: a column at a time over all rows is several times
    # slower on a large table (every column write touches every row's cache line).
    block = max(1024, (1 << 17) // max(width, 1))
    for start in range(0, n, block):
        rows = slice(start, start + block)
        k = 0
        for spec, part in zip(columns, parts, strict=True):
            if spec.kind == NUMERIC:
                X[rows, k] = part[rows]
                k += 1
            else:
                m = len(spec.categories)
                X[rows, k : k + m] = part[rows, None] == np.arange(m)
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
        return _encode_uniques(spec, *_unique(values.astype(str)), line_numbers, source)
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
    text = np.array([str(v) for v in values], dtype=str)
    return _encode_uniques(spec, *_unique(text), line_numbers, source)


def _encode_uniques(
    spec: ColumnSpec,
    uniq: np.ndarray,
    inverse: np.ndarray,
    line_numbers: np.ndarray,
    source: str | None,
    decimal_comma: bool = False,
) -> np.ndarray:
    """Encode cells given as text (distinct cells and each row's index), parsing each once."""
    known = set(spec.categories)
    numbers = _parse_numbers(uniq, decimal_comma) if spec.kind == NUMERIC else None
    for k, value in enumerate(uniq.tolist()):
        if value.strip().lower() in MISSING_TOKENS and value not in known:
            problem = f"missing value {value!r}; {_COMPLETE_DATA_HINT}"
        elif spec.kind == NUMERIC and numbers is None and not _is_number(value):
            problem = (
                f"{value!r} is not a number, but the column was numeric when the model was "
                f"fitted; give a number"
            )
        else:
            continue
        where = _row_name(line_numbers, int(np.flatnonzero(inverse == k)[0]), source)
        raise DataError(f"{where}, column '{spec.name}': {problem}")
    if numbers is not None:
        return numbers[inverse]
    codes = {category: k for k, category in enumerate(spec.categories)}
    return np.array([codes.get(v, -1) for v in uniq.tolist()], dtype=np.int64)[inverse]


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------- public readers
def _resolve_target(
    names: list[str], source: str, label_first: bool, target: str | int | None
) -> int:
    available = ", ".join(names)
    if label_first:
        if target is None or target in (0, "0", "label"):
            return 0
        raise DataError(
            f"{source}: a label-first file has its label in the first column; a target "
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
            f"{source}: unknown target column {target!r}; available columns: {available}; "
            f"give a column name or a 0-based column index"
        )
    if not 0 <= index < len(names):
        raise DataError(
            f"{source}: target index {index} is out of range: the file has {len(names)} "
            f"columns (indices 0 to {len(names) - 1}: {available})"
        )
    return index


def _resolve_drop(names: list[str], source: str, drop: Sequence[str], label: int) -> list[int]:
    if isinstance(drop, str):
        drop = [drop]
    unknown = [name for name in drop if name not in names]
    if unknown:
        raise DataError(
            f"{source}: cannot drop {', '.join(map(repr, unknown))}: no such column; "
            f"available columns: {', '.join(names)}"
        )
    indices = sorted({names.index(name) for name in drop})
    if label in indices:
        raise DataError(
            f"{source}: dropping {names[label]!r} would remove the label column; "
            f"keep it, or choose another label column with the target option"
        )
    return indices


def _choose_columns(
    names: list[str],
    source: str,
    label_first: bool,
    target: str | int | None,
    drop: Sequence[str],
) -> tuple[int, list[int], list[int]]:
    """The label column, the feature columns and the dropped columns (indices in the file)."""
    label = _resolve_target(names, source, label_first, target)
    dropped = _resolve_drop(names, source, drop, label)
    features = [j for j in range(len(names)) if j != label and j not in dropped]
    if not features:
        raise DataError(
            f"{source}: no feature columns left besides the label {names[label]!r}; keep at "
            f"least one feature column"
        )
    return label, features, dropped


def _dataset(
    table: _Table,
    columns: dict[int, _Column],
    label: int,
    features: list[int],
    dropped: list[int],
    decimal_comma: bool,
) -> Dataset:
    """Check the used columns, settle each feature's kind and assemble the design matrix."""
    _check_complete(table, columns, label)
    specs: list[ColumnSpec] = []
    parts: list[np.ndarray] = []
    for j in features:
        column = columns[j]
        if isinstance(column, np.ndarray):
            spec, part = ColumnSpec(table.names[j], NUMERIC), column
        else:
            spec, part = _analyse_column(table, j, *column, decimal_comma)
        specs.append(spec)
        parts.append(part)
    schema = Schema.from_columns(specs, table.names[label], [table.names[j] for j in dropped])
    X = _assemble(specs, parts, len(table.line_numbers))
    y = _labels(columns[label], decimal_comma)
    return Dataset(X, y, schema, table.line_numbers, table.source)


def _parse_fast_table(
    file: _File, sample: _Sample, offset: int, modes: list[str]
) -> tuple[_Table, dict[int, _Column]] | None:
    """:func:`_parse_fast`, then the table of line numbers; the file's text is freed."""
    parsed = _parse_fast(file, sample, offset, modes)
    if parsed is None:
        return None
    columns, line_numbers = parsed
    file.data = b""  # parsed: no fallback from here on, so free the text before assembling X
    return _Table(sample.header, [], line_numbers, file.source, False), columns


def _read_csv_fast(file: _File, target: str | int | None, drop: Sequence[str]) -> Dataset | None:
    """:func:`read_csv` through numpy's C parser, or None to let the exact reader decide.

    Only checks made on the same parsed cells as the exact reader's raise here (missing values,
    infinite values in columns of text); everything else falls back.
    """
    start = _fast_start(file, 2)
    if start is None:
        return None
    sample, offset = start
    try:
        label, features, dropped = _choose_columns(sample.header, file.source, False, target, drop)
    except DataError:
        return None  # the exact reader may find a problem with the file first
    modes = ["skip"] * len(sample.header)
    for j in [*features, label]:
        modes[j] = _guess_mode(sample, j, file.decimal_comma)
    parsed = _parse_fast_table(file, sample, offset, modes)
    if parsed is None:
        return None
    table, columns = parsed
    return _dataset(table, columns, label, features, dropped, file.decimal_comma)


def read_csv(
    path: str | os.PathLike[str],
    *,
    target: str | int | None = None,
    drop: Sequence[str] = (),
    input_format: str = "auto",
    sep: str | None = None,
) -> Dataset:
    """Read and validate a table: a CSV file with a header, or a label-first benchmark file.

    Parameters
    ----------
    path
        The file, UTF-8 encoded (a byte-order mark is allowed). With ``input_format="auto"``, a
        ``.txt`` file is read as label-first (whitespace-separated, no header, label in the
        first column, features ``x1..xm``), anything else as CSV.
    target
        CSV only: the label column, as a name or a 0-based index (default: the last column).
    drop
        Names of columns to ignore (they may hold anything, missing values included).
    input_format
        ``"auto"``, ``"csv"`` or ``"labelfirst"``.
    sep
        CSV only: the character between cells, such as ``","``, ``";"``, ``"\\t"`` or ``"|"``.
        ``None`` (the default) detects it from the header line and the first data lines: a
        comma, semicolon, tab or ``|`` is accepted when it splits the header into two fields or
        more and every sampled line into as many (cells in double quotes may contain it); a
        comma is preferred when several are accepted.

    Returns
    -------
    Dataset
        The float64 design matrix, the labels, the schema and the line of each row.

    Raises
    ------
    DataError
        When the file cannot be used as given; the message names the file, the 1-based line
        and the column, and says how to fix it.

    Notes
    -----
    A column is numeric when every cell is a number, otherwise categorical (its categories
    become 0/1 indicator columns). Labels are int64 when every label is an integer value,
    float64 when they are other numbers, text otherwise. Cells are stripped of surrounding
    spaces; blank lines are skipped, and Windows line ends are fine. Missing values (an empty
    cell, ``NA``, ``N/A``, ``NaN``, ``?``, ``null``, ``None``) in a used column, infinite
    values, uneven rows and bytes that are not UTF-8 raise :class:`DataError`.

    Decimal commas: a spreadsheet set to a language that writes ``3,14`` saves CSV files with
    ``;`` between cells and a comma before the decimals. When the separator is not a comma, a
    column whose cells are all numbers written with a decimal comma (digits, at most one comma,
    no dot, an optional sign and exponent: ``3,14``, ``-0,5``, ``2``, ``1,5E-3``), at least one
    of them with a comma, is read as numbers; so is such a label column. A column with both
    ``3.5`` and ``3,5`` stays categorical.

    Large tables of numbers are parsed by numpy's C parser; a file with quotes, or anything
    else unusual, is read by Python's csv module instead, with the same result.

    Examples
    --------
    >>> data = read_csv("iris.csv")  # doctest: +SKIP
    >>> data = read_csv("export.csv", sep=";", target="class", drop=["id"])  # doctest: +SKIP
    """
    file = _open(path, input_format, sep)
    fast = _read_csv_fast(file, target, drop)
    return fast if fast is not None else _read_csv_exact(file, target, drop)


def _read_csv_exact(file: _File, target: str | int | None, drop: Sequence[str]) -> Dataset:
    """:func:`read_csv` through Python's csv module: every file, every check."""
    table = _exact_table(file, 2)
    label, features, dropped = _choose_columns(
        table.names, table.source, table.label_first, target, drop
    )
    columns: dict[int, _Column] = {j: _unique(table.columns[j]) for j in [*features, label]}
    return _dataset(table, columns, label, features, dropped, file.decimal_comma)


def _match_schema(
    names: list[str], source: str, label_first: bool, schema: Schema, require_target: bool
) -> tuple[list[int], int | None]:
    """Where the schema's columns are in the file, and the label column (None if absent)."""
    wanted = schema.column_names
    label: int | None
    if label_first:
        if len(names) != len(wanted) + 1:
            raise DataError(
                f"{source}: expected the label and {len(wanted)} features per line, as "
                f"when the model was fitted, but found {len(names) - 1} features"
            )
        positions, label = list(range(1, len(wanted) + 1)), 0
    else:
        index = {name: j for j, name in enumerate(names)}
        missing = [name for name in wanted if name not in index]
        known = {*wanted, schema.target, *schema.dropped}
        unexpected = [name for name in names if name not in known]
        if missing or unexpected:
            problems = []
            if missing:
                problems.append(f"missing columns: {', '.join(missing)}")
            if unexpected:
                problems.append(f"unexpected columns: {', '.join(unexpected)}")
            raise DataError(
                f"{source}: the columns do not match the model ({'; '.join(problems)}); "
                f"the model expects the columns {', '.join(wanted)} (and optionally the label "
                f"{schema.target!r})"
            )
        positions = [index[name] for name in wanted]
        label = index.get(schema.target)
    if label is None and require_target:
        raise DataError(
            f"{source}: the label column {schema.target!r} is missing; it is needed to "
            f"compare predictions with the true labels"
        )
    return positions, label


def _encoded_dataset(
    table: _Table,
    columns: dict[int, _Column],
    schema: Schema,
    positions: list[int],
    label: int | None,
    decimal_comma: bool,
) -> Dataset:
    """Check the used columns and encode them with a fitted schema."""
    _check_complete(table, columns, label)
    parts: list[np.ndarray] = []
    for spec, j in zip(schema.columns, positions, strict=True):
        column = columns[j]
        if isinstance(column, np.ndarray):
            parts.append(column)  # numbers from the fast reader, for a numeric column
        else:
            uniq, inverse = column
            parts.append(
                _encode_uniques(
                    spec, uniq, inverse, table.line_numbers, table.source, decimal_comma
                )
            )
    X = _assemble(schema.columns, parts, len(table.line_numbers))
    y = None if label is None else _labels(columns[label], decimal_comma)
    return Dataset(X, y, schema, table.line_numbers, table.source)


def _read_with_schema_fast(file: _File, schema: Schema, require_target: bool) -> Dataset | None:
    """:func:`read_with_schema` through numpy's C parser, or None to use the exact reader."""
    start = _fast_start(file, 1)
    if start is None:
        return None
    sample, offset = start
    try:
        positions, label = _match_schema(sample.header, file.source, False, schema, require_target)
    except DataError:
        return None
    modes = ["skip"] * len(sample.header)
    for spec, j in zip(schema.columns, positions, strict=True):
        numeric = spec.kind == NUMERIC
        modes[j] = _guess_mode(sample, j, file.decimal_comma) if numeric else "text"
    if label is not None:
        modes[label] = _guess_mode(sample, label, file.decimal_comma)
    parsed = _parse_fast_table(file, sample, offset, modes)
    if parsed is None:
        return None
    table, columns = parsed
    return _encoded_dataset(table, columns, schema, positions, label, file.decimal_comma)


def read_with_schema(
    path: str | os.PathLike[str],
    schema: Schema,
    *,
    input_format: str = "auto",
    require_target: bool = False,
    sep: str | None = None,
) -> Dataset:
    """Read a file to predict on (or to evaluate), encoding it with a fitted ``schema``.

    CSV columns are matched by name, in any order; the label column may be present (then
    ``y`` is filled) or absent, and columns dropped when fitting are ignored. A label-first
    file is matched by position. ``require_target=True`` makes a missing label an error.
    ``sep`` is the CSV separator, detected when ``None``, and decimal commas are read as in
    :func:`read_csv`.
    """
    file = _open(path, input_format, sep)
    fast = _read_with_schema_fast(file, schema, require_target)
    return fast if fast is not None else _read_with_schema_exact(file, schema, require_target)


def _read_with_schema_exact(file: _File, schema: Schema, require_target: bool) -> Dataset:
    """:func:`read_with_schema` through Python's csv module: every file, every check."""
    table = _exact_table(file, 1)
    positions, label = _match_schema(
        table.names, table.source, table.label_first, schema, require_target
    )
    used = positions if label is None else [*positions, label]
    columns: dict[int, _Column] = {j: _unique(table.columns[j]) for j in used}
    return _encoded_dataset(table, columns, schema, positions, label, file.decimal_comma)


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
