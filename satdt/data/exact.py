"""The exact reader: Python's csv module, for every file, with every check.

It reads every cell as text and is the reference the fast reader matches: a file the fast
reader declines (quotes, uneven rows, bytes that are not UTF-8, ...) is read here, and the
errors raised here are the ones users see.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

import numpy as np

from ..core.errors import DataError
from .schema import Dataset, Schema, _unique
from .sniff import _File
from .table import _choose_columns, _Column, _dataset, _encoded_dataset, _match_schema, _Table


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


def _read_csv_exact(
    file: _File, target: str | int | None, drop: Sequence[str], missing: str = "split"
) -> Dataset:
    """:func:`~satdt.data.read_csv` through Python's csv module: every file, every check."""
    table = _exact_table(file, 2)
    label, features, dropped = _choose_columns(
        table.names, table.source, table.label_first, target, drop
    )
    columns: dict[int, _Column] = {j: _unique(table.columns[j]) for j in [*features, label]}
    return _dataset(table, columns, label, features, dropped, file.decimal_comma, missing)


def _read_with_schema_exact(file: _File, schema: Schema, require_target: bool) -> Dataset:
    """:func:`~satdt.data.read_with_schema` through Python's csv module: every file, every check."""
    table = _exact_table(file, 1)
    positions, label = _match_schema(
        table.names, table.source, table.label_first, schema, require_target
    )
    used = positions if label is None else [*positions, label]
    columns: dict[int, _Column] = {j: _unique(table.columns[j]) for j in used}
    return _encoded_dataset(table, columns, schema, positions, label, file.decimal_comma)
