"""Reading and validating tables, once: CSV files, label-first benchmark files, arrays.

A CSV file is split at a given separator or one detected from its first lines (comma,
semicolon, tab or ``|``; :mod:`.sniff`). Tables of numbers are parsed by numpy's C parser (the
*fast reader*, :mod:`.fast`); a file with quotes or anything unusual goes to Python's csv module
(the *exact reader*, :mod:`.exact`), which performs every check. Both give the same result,
down to the error messages (:mod:`.table` turns what either parsed into a :class:`Dataset`).
Arrays and DataFrames are validated by :func:`from_arrays` (:mod:`.arrays`).

Every table becomes a float64 *design matrix*: numeric columns keep their values and a
categorical column ``colour`` with categories ``blue, red`` becomes the 0/1 columns
``colour == blue`` and ``colour == red``. A :class:`Schema` remembers how, so that data to
predict on is encoded exactly like the training data (:mod:`.schema`). Missing cells stay
missing: NaN in a numeric column, a ``colour is missing`` column for a categorical one (see
:func:`read_csv`). Problems in the input raise :class:`~satdt.core.errors.DataError` naming the
file, the 1-based line and the column.
"""

from .arrays import from_arrays
from .readers import read_csv, read_with_schema
from .schema import (
    CATEGORICAL,
    MISSING_POLICIES,
    NUMERIC,
    ColumnSpec,
    Dataset,
    Schema,
    check_complete,
    check_missing,
)
from .sniff import INPUT_FORMATS, MISSING_TOKENS, SEPARATORS

__all__ = [
    "CATEGORICAL",
    "INPUT_FORMATS",
    "MISSING_POLICIES",
    "MISSING_TOKENS",
    "NUMERIC",
    "SEPARATORS",
    "ColumnSpec",
    "Dataset",
    "Schema",
    "check_complete",
    "check_missing",
    "from_arrays",
    "read_csv",
    "read_with_schema",
]
