"""The fast reader: tables of numbers parsed by numpy's C parser, in one pass over the text.

It takes a CSV file only where numpy splits it as the csv module would (see
:func:`_fast_start`) and returns ``None`` whenever the exact reader must decide, so that both
readers give the same result, down to the error messages.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence

import numpy as np

from ..core.errors import DataError
from .schema import NUMERIC, Dataset, Schema
from .sniff import (
    _DECIMAL_COMMA,
    _LINE_END,
    _PLAIN_NUMBER,
    SEPARATORS,
    _File,
    _head,
    _Sample,
    _sample,
)
from .table import _choose_columns, _Column, _dataset, _encoded_dataset, _match_schema, _Table

_RETRIES = 8  # fast-reader passes (a column of numbers turning out to be text) before giving up
_NON_BLANK = re.compile(rb"\S")
# Where numpy's loadtxt reports a cell it could not read ("... at row 3, column 4."), at the
# end of the message (the cell's text, quoted before, may contain anything).
_NUMPY_CELL = re.compile(r"at row \d+, column (\d+)\.?\Z")


def _fast_start(file: _File, min_columns: int) -> tuple[_Sample, int] | None:
    """The sample of a file the fast reader can take, and the offset of the line after the header.

    The fast reader takes CSV files split at one of :data:`~satdt.data.SEPARATORS` whose header
    is valid and whose lines after the header hold no quote, no NUL byte and no lone carriage
    return: there, a record is a line and numpy's C parser splits it as the csv module would.
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
    file: _File, sample: _Sample, offset: int, modes: list[str], nan_ok: Sequence[int] = ()
) -> tuple[dict[int, _Column], np.ndarray] | None:
    """Parse the lines after the header with numpy's C parser, in one pass over the text.

    ``modes[j]`` is ``"float"`` (a column of numbers, parsed in C), ``"comma"`` (numbers with
    decimal commas, converted cell by cell), ``"text"`` (distinct cells numbered by a converter,
    without keeping a Python string per cell) or ``"skip"``. A column with a cell its mode
    cannot read is read in the next mode in another pass (float, then comma if the file may
    have decimal commas, then text). Returns the used columns and the line numbers, or None
    when the file needs the exact reader (uneven rows, a value that is not finite, lines of
    spaces, bytes that are not UTF-8, ...). Columns in ``nan_ok`` may hold NaN (cells such as
    ``nan``: missing values kept as NaN, as the exact reader keeps them).

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
            if not finite[j] and (j not in nan_ok or np.isinf(values[:, j]).any()):
                return None  # nan, inf: the exact reader tells the token and the line
            columns[j] = values[:, j]
        elif mode == "text":
            columns[j] = _distinct(seen[j], values[:, j])
    return columns, line_numbers


def _parse_fast_table(
    file: _File, sample: _Sample, offset: int, modes: list[str], nan_ok: Sequence[int]
) -> tuple[_Table, dict[int, _Column]] | None:
    """:func:`_parse_fast`, then the table of line numbers; the file's text is freed."""
    parsed = _parse_fast(file, sample, offset, modes, nan_ok)
    if parsed is None:
        return None
    columns, line_numbers = parsed
    file.data = b""  # parsed: no fallback from here on, so free the text before assembling X
    return _Table(sample.header, [], line_numbers, file.source, False), columns


def _read_csv_fast(
    file: _File, target: str | int | None, drop: Sequence[str], missing: str = "split"
) -> Dataset | None:
    """:func:`~satdt.data.read_csv` through numpy's C parser, or None for the exact reader.

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
    nan_ok = features if missing == "split" else []
    parsed = _parse_fast_table(file, sample, offset, modes, nan_ok)
    if parsed is None:
        return None
    table, columns = parsed
    return _dataset(table, columns, label, features, dropped, file.decimal_comma, missing)


def _read_with_schema_fast(file: _File, schema: Schema, require_target: bool) -> Dataset | None:
    """:func:`~satdt.data.read_with_schema` through numpy's C parser, or None for the exact
    reader."""
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
    parsed = _parse_fast_table(file, sample, offset, modes, positions)
    if parsed is None:
        return None
    table, columns = parsed
    return _encoded_dataset(table, columns, schema, positions, label, file.decimal_comma)
