"""How a data file is split, and what its cells are: separators, numbers, missing values.

A file is opened once (:func:`_open`), which settles its format (CSV, or label-first for a
``.txt`` name) and the CSV separator, given or detected from the header and the first lines
(:func:`_detect_sep`). The same first lines, split at the separator, are the sample on which
the fast reader guesses which columns hold numbers. A cell is a plain number, a number with a
decimal comma (where commas do not separate cells), or a missing value (:data:`MISSING_TOKENS`).
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path

import numpy as np

from ..core.errors import DataError

INPUT_FORMATS = ("auto", "csv", "labelfirst")
SEPARATORS = (",", ";", "\t", "|")  # what sep=None detects, in order of preference
_SAMPLE_LINES = 100  # lines read to detect the separator and guess which columns hold numbers
_SAMPLE_BYTES = 1 << 18  # ... fewer lines once the sample is this long (wide tables)
_LINE_END = re.compile(rb"\r\n|\r|\n")
# A number numpy's C parser reads exactly as float() does; a column of them is parsed in C.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
# A number with a decimal comma, as spreadsheets in many European languages write it.
_DECIMAL_COMMA = re.compile(r"[+-]?(?:\d+(?:,\d*)?|,\d+)(?:[eE][+-]?\d+)?", re.ASCII)
# Cells read from a file that mean "no value" (compared in lower case, after stripping).
MISSING_TOKENS = frozenset({"", "na", "n/a", "nan", "?", "null", "none"})
# Every upper/lower-case spelling of the tokens, to find them in a column with np.isin.
_MISSING_SPELLINGS = sorted(
    {
        "".join(chars)
        for token in MISSING_TOKENS
        for chars in product(*({c, c.upper()} for c in token))
    }
)


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
    """The separator of a CSV file, from its header and first lines (see
    :func:`~satdt.data.read_csv`).

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


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True
