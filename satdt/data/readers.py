"""Reading a data file: :func:`read_csv` to fit on, :func:`read_with_schema` to predict on.

Both try the fast reader first and fall back to the exact reader, which gives the same result
on every file the fast reader takes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from .exact import _read_csv_exact, _read_with_schema_exact
from .fast import _read_csv_fast, _read_with_schema_fast
from .schema import Dataset, Schema, check_missing
from .sniff import _open


def read_csv(
    path: str | os.PathLike[str],
    *,
    target: str | int | None = None,
    drop: Sequence[str] = (),
    input_format: str = "auto",
    sep: str | None = None,
    missing: str = "split",
) -> Dataset:
    """Read and validate a table: a CSV file with a header, or a label-first benchmark file.

    Parameters
    ----------
    path : str or os.PathLike
        The file, UTF-8 encoded (a byte-order mark is allowed). With ``input_format="auto"``, a
        ``.txt`` file is read as label-first (whitespace-separated, no header, label in the
        first column, features ``x1..xm``), anything else as CSV.
    target : str or int, optional
        CSV only: the label column, as a name or a 0-based index (default: the last column).
    drop : sequence of str, default ()
        Names of columns to ignore (they may hold anything, missing values included).
    input_format : {"auto", "csv", "labelfirst"}, default "auto"
        ``"auto"``, ``"csv"`` or ``"labelfirst"``.
    sep : str, optional
        CSV only: the character between cells, such as ``","``, ``";"``, ``"\\t"`` or ``"|"``.
        ``None`` (the default) detects it from the header line and the first data lines: a
        comma, semicolon, tab or ``|`` is accepted when it splits the header into two fields or
        more and every sampled line into as many (cells in double quotes may contain it); a
        comma is preferred when several are accepted.
    missing : {"split", "error"}, default "split"
        ``"split"`` (the default): a feature cell may be missing (see Notes); ``"error"``:
        a missing feature cell raises :class:`DataError`.

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
    cell, ``NA``, ``N/A``, ``NaN``, ``?``, ``null``, ``None``, in any case) do not decide a
    column's kind: in a numeric column they become NaN, in a categorical column ``colour``
    they get the 0/1 column ``colour is missing`` (its category columns are 0 there). A
    missing label, a missing feature cell with ``missing="error"``, infinite values, uneven
    rows and bytes that are not UTF-8 raise :class:`DataError`.

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
    check_missing(missing)
    file = _open(path, input_format, sep)
    fast = _read_csv_fast(file, target, drop, missing)
    return fast if fast is not None else _read_csv_exact(file, target, drop, missing)


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
    file is matched by position. ``require_target=True`` makes a missing label column an
    error. Missing feature cells are encoded as :meth:`~satdt.data.Schema.encode` says.
    ``sep`` is the CSV separator, detected when ``None``, and decimal commas are read as in
    :func:`read_csv`.
    """
    file = _open(path, input_format, sep)
    fast = _read_with_schema_fast(file, schema, require_target)
    return fast if fast is not None else _read_with_schema_exact(file, schema, require_target)
