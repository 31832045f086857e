"""In-memory input: NumPy arrays and pandas DataFrames (pandas is never imported here)."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.errors import DataError
from .schema import (
    _COMPLETE_DATA_HINT,
    CATEGORICAL,
    MISSING_CODE,
    NUMERIC,
    ColumnSpec,
    Schema,
    _assemble,
    _encode_column,
    _is_missing,
    _is_real,
    _numeric_labels,
    _unique,
    check_missing,
)


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
    X: Any,
    y: Any = None,
    *,
    feature_names: Sequence[str] | None = None,
    missing: str = "split",
) -> tuple[np.ndarray, Schema, np.ndarray | None]:
    """Validate in-memory data: a NumPy array or a pandas DataFrame, and optional labels.

    Numeric columns stay numeric; columns of strings (object arrays; object, category, string
    or bool DataFrame columns) are categorical and become 0/1 indicator columns. Labels are
    normalised as in :func:`~satdt.data.read_csv` (boolean labels stay boolean). Missing cells (NaN,
    ``None``, ``pandas.NA``) are kept as :func:`~satdt.data.read_csv` keeps them, or raise
    :class:`DataError` with ``missing="error"``.

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
    check_missing(missing)
    for name, column in zip(names, values, strict=True):
        if column.dtype.kind == "f":
            gone = np.isnan(column)
        else:
            gone = np.array([_is_missing(v) for v in column], dtype=bool)
        if gone.any() and missing == "error":
            row = int(np.flatnonzero(gone)[0])
            raise DataError(
                f"row {row}, column '{name}': missing value ({column[row]}); {_COMPLETE_DATA_HINT}"
            )
        if column.dtype.kind == "O" and all(_is_real(v) for v in column[~gone]):
            column = np.where(gone, np.nan, column).astype(np.float64)
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
        uniq, inverse = _unique(np.array([str(v) for v in column[~gone]], dtype=str))
        specs.append(ColumnSpec(name, CATEGORICAL, tuple(str(v) for v in uniq), bool(gone.any())))
        codes = np.full(n, MISSING_CODE, dtype=np.int64)
        codes[~gone] = inverse
        parts.append(codes)
    target = "y"
    if y is not None and getattr(y, "name", None) is not None:
        target = str(y.name)
    schema = Schema.from_columns(specs, target)
    labels = None if y is None else _labels_from_array(y, n)
    return _assemble(specs, parts, n), schema, labels
