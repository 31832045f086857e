"""The schema of a table and the validated table, :class:`Dataset`; encoding cells with a schema.

Every table becomes a float64 *design matrix*: numeric columns keep their values and a
categorical column ``colour`` with categories ``blue, red`` becomes the 0/1 columns
``colour == blue`` and ``colour == red``. A :class:`Schema` remembers how, so that data to
predict on is encoded exactly like the training data. Missing cells stay missing: NaN in a
numeric column, a ``colour is missing`` column for a categorical one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import DataError
from .sniff import MISSING_TOKENS, _is_number, _parse_numbers

NUMERIC = "numeric"
CATEGORICAL = "categorical"
# What a missing feature cell does: "split" keeps it (NaN, or a category's "is missing"
# column; every split then chooses the side its missing rows take), "error" refuses it.
MISSING_POLICIES = ("split", "error")
# The category code of a missing cell of a categorical column (-1: a category not seen).
MISSING_CODE = -2
_COMPLETE_DATA_HINT = (
    "with missing='error' satdt needs complete data: impute the missing values, remove the "
    "incomplete rows or the column, or use missing='split' (the default) to learn where "
    "missing values go"
)


@dataclass(frozen=True)
class ColumnSpec:
    """One input column: its name, ``"numeric"`` or ``"categorical"``, and the categories seen.

    ``missing``: a categorical column had missing cells when fitting, so it has the 0/1
    design column ``name is missing`` after its categories (a numeric column keeps its
    missing cells as NaN instead).
    """

    name: str
    kind: str
    categories: tuple[str, ...] = ()
    missing: bool = False


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
                if spec.missing:
                    indicator.append(len(names))
                    names.append(f"{spec.name} is missing")
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

        Numeric cells are parsed as numbers, missing cells (see :func:`~satdt.data.read_csv`)
        as NaN; a category not seen when fitting gives 0 in all indicator columns of its
        column. A missing categorical cell gives 1 in its ``is missing`` column if the column
        had missing cells when fitting, else NaN in its indicator columns (so that a tree sends
        it where it sends a column without learned missing values: see
        :class:`~satdt.Tree`). ``line_numbers`` and ``source`` only improve messages.
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
                | ({"missing": True} if s.missing else {})
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
                ColumnSpec(
                    str(c["name"]),
                    str(c["kind"]),
                    tuple(str(v) for v in c["categories"]),
                    bool(c.get("missing", False)),
                )
                for c in d["columns"]
            ]
            schema = cls.from_columns(
                columns, str(d["target"]), [str(v) for v in d.get("dropped", ())]
            )
            stored = (tuple(d["feature_names"]), tuple(int(i) for i in d["indicator"]))
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
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

    :func:`satdt.read_csv` builds it; each parameter is an attribute of the same name.

    Parameters
    ----------
    X : ndarray of float64 of shape (n, p)
        The design matrix, C-contiguous.
    y : ndarray of shape (n,) or None
        Labels: int64 when every label is an integer value, float64 when numeric otherwise,
        a unicode array for text labels; ``None`` when the table has no label column.
    schema : Schema
        How the table maps to ``X``.
    line_numbers : ndarray of int64 of shape (n,)
        1-based line of each row in the source file (the CSV header is line 1).
    source : str or None
        The file as given by the user, for messages.
    """

    X: np.ndarray
    y: np.ndarray | None
    schema: Schema
    line_numbers: np.ndarray
    source: str | None

    @property
    def feature_names(self) -> list[str]:
        """The names of the design matrix's columns (categories as ``colour == red``)."""
        return list(self.schema.feature_names)


def _unique(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, inverse = np.unique(column, return_inverse=True)
    return uniq, inverse.reshape(-1)


def _numeric_labels(numbers: np.ndarray) -> np.ndarray:
    if np.all(numbers == np.round(numbers)) and np.all(np.abs(numbers) < 2.0**53):
        return numbers.astype(np.int64)
    return numbers.astype(np.float64)


def _assemble(columns: Sequence[ColumnSpec], parts: Sequence[np.ndarray], n: int) -> np.ndarray:
    """The design matrix from per-column parts: float values, or category codes (-1 unknown,
    :data:`MISSING_CODE` missing: see :meth:`Schema.encode`)."""
    width = sum(
        1 if spec.kind == NUMERIC else len(spec.categories) + spec.missing for spec in columns
    )
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
                codes = part[rows]
                X[rows, k : k + m] = codes[:, None] == np.arange(m)
                gone = codes == MISSING_CODE
                if spec.missing:
                    X[rows, k + m] = gone
                elif gone.any():
                    X[start + np.flatnonzero(gone), k : k + m] = np.nan
                k += m + spec.missing
    return X


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, NaT and pandas.NA are not equal to themselves
    except (TypeError, ValueError):
        return True  # pandas.NA raises on bool()


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


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
        if spec.kind == NUMERIC:
            return values.astype(np.float64)
        values = values.astype(object)
    gone = np.array([_is_missing(value) for value in values], dtype=bool)
    if spec.kind == NUMERIC and all(_is_real(v) for v in values[~gone]):
        return np.where(gone, np.nan, values).astype(np.float64)
    text = np.array([str(v) for v in values[~gone]], dtype=str)
    if spec.kind == NUMERIC:
        encoded = np.full(len(values), np.nan)
    else:
        encoded = np.full(len(values), MISSING_CODE, dtype=np.int64)
    encoded[~gone] = _encode_uniques(spec, *_unique(text), line_numbers[~gone], source)
    return encoded


def _encode_uniques(
    spec: ColumnSpec,
    uniq: np.ndarray,
    inverse: np.ndarray,
    line_numbers: np.ndarray,
    source: str | None,
    decimal_comma: bool = False,
) -> np.ndarray:
    """Encode cells given as text (distinct cells and each row's index), parsing each once.

    Missing cells become NaN (numeric) or :data:`MISSING_CODE` (categorical).
    """
    known = set(spec.categories)
    gone = np.array(
        [v.strip().lower() in MISSING_TOKENS and v not in known for v in uniq.tolist()],
        dtype=bool,
    )
    present = uniq[~gone]
    if spec.kind == NUMERIC:
        numbers = _parse_numbers(present, decimal_comma)
        if numbers is None:
            k = next(k for k, v in enumerate(uniq.tolist()) if not gone[k] and not _is_number(v))
            where = _row_name(line_numbers, int(np.flatnonzero(inverse == k)[0]), source)
            raise DataError(
                f"{where}, column '{spec.name}': {str(uniq[k])!r} is not a number, but the column "
                f"was numeric when the model was fitted; give a number"
            )
        values = np.full(len(uniq), np.nan)
        values[~gone] = numbers
        return values[inverse]
    codes = {category: k for k, category in enumerate(spec.categories)}
    coded = [
        MISSING_CODE if out else codes.get(v, -1)
        for v, out in zip(uniq.tolist(), gone, strict=True)
    ]
    return np.array(coded, dtype=np.int64)[inverse]


def check_complete(dataset: Dataset, hint: str = _COMPLETE_DATA_HINT) -> None:
    """Raise :class:`DataError` on the first missing feature cell of a table already read
    (the refusal of ``missing="error"``), naming its row or line and its column; ``hint``
    says what to do."""
    schema = dataset.schema
    gone = np.isnan(dataset.X)
    owner: list[str] = []  # the input column of each design column
    for spec in schema.columns:
        width = 1 if spec.kind == NUMERIC else len(spec.categories) + spec.missing
        owner += [spec.name] * width
        if spec.missing:
            gone[:, len(owner) - 1] |= dataset.X[:, len(owner) - 1] == 1
    rows = np.flatnonzero(gone.any(axis=1))
    if len(rows):
        row = int(rows[0])
        column = owner[int(np.flatnonzero(gone[row])[0])]
        where = _row_name(dataset.line_numbers, row, dataset.source)
        raise DataError(
            f"{where}, column '{column}': missing value (NaN; {len(rows)} incomplete "
            f"{'row' if len(rows) == 1 else 'rows'} in all); {hint}"
        )


def check_missing(missing: object) -> None:
    """Raise unless ``missing`` is one of :data:`MISSING_POLICIES`."""
    if missing not in MISSING_POLICIES:
        raise DataError(
            f"missing must be 'split' (learn where missing values go) or 'error' (refuse "
            f"incomplete data), got {missing!r}"
        )
