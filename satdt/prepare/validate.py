"""A table and its weights checked once, as scikit-learn's estimators check theirs.

:func:`validate` turns arrays or a DataFrame into a :class:`~satdt.data.Dataset` (numeric
matrix, categorical columns encoded, labels checked, missing cells as NaN where allowed);
:func:`design_for` encodes rows to predict with the schema learned at fit; the row weights
are ``sample_weight`` (:func:`sample_weights`) times ``class_weight`` (:func:`class_weights`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import (
    DataError,
    ParameterError,
    SatdtError,
    data_conversion_warning,
)
from ..core.params import is_number
from ..data import Dataset, Schema, check_missing, from_arrays

if TYPE_CHECKING:
    pass


# ---------------------------------------------------------------------- validation
def _numeric_matrix(X: Any, missing: str = "split") -> np.ndarray | None:
    """Numeric array-likes as a float matrix (with scikit-learn's error types); None for tables.

    NaN (a missing cell) is allowed unless ``missing="error"``; infinity never is.
    """
    if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        raise TypeError("satdt does not take sparse matrices; pass a dense array (X.toarray())")
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        return None  # a DataFrame: data.from_arrays reads its column types
    array = np.asarray(X)
    if array.dtype == object:
        for cell in array.ravel():
            if not isinstance(cell, str | int | float | bool | np.generic | None):
                raise TypeError(
                    f"argument must be a string or a number, not '{type(cell).__name__}': "
                    "every cell of X must be a number or a category name"
                )
        return None
    if array.dtype.kind in "US":
        return None
    if array.dtype.kind == "b":
        return array.astype(np.float64)
    if np.iscomplexobj(array):
        raise ValueError("Complex data not supported")
    if array.ndim != 2:
        raise ValueError(
            f"Expected a 2D array, got a {array.ndim}D array instead. Reshape your data either "
            "using array.reshape(-1, 1) if your data has a single feature or "
            "array.reshape(1, -1) if it contains a single sample"
        )
    if array.shape[1] == 0:
        raise ValueError(
            f"0 feature(s) (shape={array.shape}) while a minimum of 1 is required; "
            "give at least one feature column"
        )
    array = array.astype(np.float64)
    if np.isinf(array).any():
        raise ValueError("Input X contains infinity; thresholds need finite values")
    if missing == "error" and np.isnan(array).any():
        raise ValueError(
            "Input X contains NaN; with missing='error' satdt needs complete data: impute the "
            "missing values, or use missing='split' (the default) to learn where they go"
        )
    return array


def _check_labels(y: Any, estimator: str) -> Any:
    """Reject what is not a vector of class labels; flatten a column vector (with a warning)."""
    if y is None:
        raise ValueError(f"{estimator} requires y to be passed, but the target y is None")
    array = np.asarray(y)
    if array.ndim == 2 and array.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected; it was flattened "
            "(give y as a 1d array, one label per row)",
            data_conversion_warning(),
            stacklevel=4,
        )
        return array.ravel()
    if array.dtype.kind == "f" and np.isfinite(array).all() and (array != np.round(array)).any():
        raise ValueError(
            "Unknown label type: continuous. satdt learns classifiers: give class labels "
            "(integers or strings), not a continuous target"
        )
    return y


def validate(
    X: Any,
    y: Any,
    *,
    feature_names: Sequence[str] | None = None,
    estimator: str = "satdt",
    missing: str = "split",
) -> Dataset:
    """The one validation of in-memory training data: ``X`` (array or DataFrame) and labels ``y``.

    Numeric arrays must not hold infinity, nor NaN with ``missing="error"``; tables of
    strings become categorical columns (see :func:`satdt.data.from_arrays`). Errors follow
    scikit-learn's types (``ValueError``, ``TypeError``) so that its estimator checks pass.
    """
    y = _check_labels(y, estimator)
    check_missing(missing)
    numeric = _numeric_matrix(X, missing)
    design, schema, labels = from_arrays(
        X if numeric is None else numeric, y, feature_names=feature_names, missing=missing
    )
    return Dataset(design, labels, schema, np.arange(1, len(labels) + 1), None)


def design_for(X: Any, schema: Schema, n_features_in: int, estimator: str) -> np.ndarray:
    """Rows to predict on as the fitted design matrix, encoded with the fitted schema.

    Missing cells are allowed (NaN; see :meth:`satdt.data.Schema.encode`): a tree sends them
    where its splits learned to, or where more training rows went.
    """
    categorical = len(schema.columns) != n_features_in
    numeric = _numeric_matrix(X)
    if numeric is not None and not categorical:
        if numeric.shape[1] != n_features_in:
            raise ValueError(
                f"X has {numeric.shape[1]} features, but {estimator} is expecting "
                f"{n_features_in} features as input"
            )
        return numeric
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        missing = [c for c in schema.column_names if c not in set(map(str, X.columns))]
        if missing:
            raise DataError(f"X lacks the columns {missing} that the model was fitted on")
        X = X.rename(columns=str)[schema.column_names].to_numpy(dtype=object)
    raw = np.asarray(X if numeric is None else numeric, dtype=object)
    if raw.ndim != 2 or raw.shape[1] != len(schema.columns):
        raise ValueError(
            f"X has {raw.shape[-1] if raw.ndim else 0} features, but {estimator} is "
            f"expecting {len(schema.columns)} features as input"
        )
    return schema.encode(raw)


def sample_weights(sample_weight: Any, n: int) -> np.ndarray:
    """Row weights as a float vector of length ``n`` (default: all ones), finite and >= 0."""
    if sample_weight is None:
        return np.ones(n)
    weight = np.asarray(sample_weight, dtype=np.float64)
    if weight.ndim == 0:
        weight = np.full(n, float(weight))
    if weight.shape != (n,):
        raise ValueError(f"sample_weight must have shape ({n},), got {weight.shape}")
    if not np.isfinite(weight).all() or (weight < 0).any():
        raise ValueError("sample_weight must be finite and non-negative")
    return weight


def check_class_weight(class_weight: Any) -> None:
    """``class_weight`` is None, ``"balanced"`` or a mapping of labels to weights >= 0."""
    if class_weight is None or (isinstance(class_weight, str) and class_weight == "balanced"):
        return
    if not isinstance(class_weight, dict):
        raise ParameterError(
            "class_weight must be None, 'balanced' or a dict {label: weight}, "
            f"got {class_weight!r}"
        )
    for label, weight in class_weight.items():
        if not (is_number(weight) and weight >= 0):
            raise ParameterError(
                f"class_weight[{label!r}] must be a finite number >= 0, got {weight!r}"
            )


def class_weights(class_weight: Any, y: np.ndarray) -> np.ndarray:
    """The weight of each row's class, as scikit-learn defines ``class_weight``.

    ``"balanced"``: ``n_rows / (n_classes * rows of the class)``, from the labels alone; a
    dict gives the weight of the labels it names (1 for the others) and may not name a
    label the data lack.
    """
    labels, index, counts = np.unique(y, return_inverse=True, return_counts=True)
    if isinstance(class_weight, str):
        per_class = len(y) / (len(labels) * counts.astype(np.float64))
    else:
        known = {_label_key(label): i for i, label in enumerate(labels)}
        per_class = np.ones(len(labels))
        unknown = []
        for label, weight in class_weight.items():
            position = known.get(_label_key(label))
            if position is None:
                unknown.append(label)
            else:
                per_class[position] = float(weight)
        if unknown:
            raise SatdtError(
                f"class_weight names labels {unknown!r} that the training labels "
                f"({', '.join(map(str, labels[:10]))}{', ...' if len(labels) > 10 else ''}) "
                "do not have"
            )
    return per_class[index.reshape(-1)]


def _label_key(label: Any) -> Any:
    """A label as a dict key that matches NumPy scalars and Python values alike."""
    value = label.item() if isinstance(label, np.generic) else label
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
