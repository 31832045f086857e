"""A file's table as either reader parsed it, made into a :class:`~satdt.data.Dataset`.

Both readers hand over the same thing: the column names, the line of each row and, for each
used column, float64 values (a column of numbers the fast reader parsed in C) or the sorted
distinct cells and each row's index among them. Here the label and feature columns are chosen
(or matched to a fitted schema), missing cells checked, each feature column's kind settled and
the design matrix assembled, once for both readers: so both give the same result and errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np

from ..core.errors import DataError
from .schema import (
    _COMPLETE_DATA_HINT,
    CATEGORICAL,
    MISSING_CODE,
    NUMERIC,
    ColumnSpec,
    Dataset,
    Schema,
    _assemble,
    _encode_uniques,
    _numeric_labels,
)
from .sniff import _MISSING_SPELLINGS, _parse_numbers

# One column as read: float64 values (fast reader), or the sorted distinct cells and the
# index of each row's cell among them.
_Column: TypeAlias = np.ndarray | tuple[np.ndarray, np.ndarray]


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


def _check_complete(
    table: _Table, columns: dict[int, _Column], label: int | None, missing: str = "error"
) -> None:
    """Raise on the first missing cell (earliest line) among the given columns.

    With ``missing="split"`` only the label column is checked (a feature cell may be
    missing). Columns of numbers from the fast reader hold no missing cell unless allowed.
    """
    first: tuple[int, int] | None = None
    total = 0
    for j, column in columns.items():
        if isinstance(column, np.ndarray) or (missing == "split" and j != label):
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
        if j == label:
            hint = "every row needs a label: fill it in or remove the row"
        else:
            hint = f"{_COMPLETE_DATA_HINT} (drop={table.names[j]!r})"
        raise DataError(f"{table.where(row, j)}: {seen} ({cells} in all); {hint}")


def _analyse_column(
    table: _Table, j: int, uniq: np.ndarray, inverse: np.ndarray, decimal_comma: bool
) -> tuple[ColumnSpec, np.ndarray]:
    """Kind of column ``j`` and its part of the design: float values, or category codes.

    Missing cells (:data:`~satdt.data.MISSING_TOKENS`) do not decide the kind: they become NaN
    in a numeric column (so does a cell that reads as NaN) and
    :data:`~satdt.data.schema.MISSING_CODE` in a categorical one, whose schema then has an
    ``is missing`` column.
    """
    gone = np.isin(uniq, _MISSING_SPELLINGS)
    present = uniq[~gone]
    numbers = _parse_numbers(present, decimal_comma)
    if numbers is None:
        codes = np.full(len(uniq), MISSING_CODE, dtype=np.int64)
        codes[~gone] = np.arange(len(present))
        spec = ColumnSpec(table.names[j], CATEGORICAL, tuple(present.tolist()), bool(gone.any()))
        return spec, codes[inverse]
    values = np.full(len(uniq), np.nan)
    values[~gone] = numbers
    infinite = np.flatnonzero(np.isinf(values[inverse]))
    if len(infinite):
        row = int(infinite[0])
        raise DataError(
            f"{table.where(row, j)}: {str(uniq[inverse[row]])!r} is not a finite number; "
            f"thresholds need finite values: replace it or drop the column"
        )
    return ColumnSpec(table.names[j], NUMERIC), values[inverse]


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


def _dataset(
    table: _Table,
    columns: dict[int, _Column],
    label: int,
    features: list[int],
    dropped: list[int],
    decimal_comma: bool,
    missing: str,
) -> Dataset:
    """Check the used columns, settle each feature's kind and assemble the design matrix."""
    _check_complete(table, columns, label, missing)
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


def _encoded_dataset(
    table: _Table,
    columns: dict[int, _Column],
    schema: Schema,
    positions: list[int],
    label: int | None,
    decimal_comma: bool,
) -> Dataset:
    """Check the used columns and encode them with a fitted schema (feature cells may be
    missing)."""
    _check_complete(table, columns, label, "split")
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
