"""The one data preparation of satdt: from a validated table to what a search reads.

:func:`validate` checks in-memory ``X, y`` once (files are checked by :mod:`satdt.data`);
:func:`prepare` drops zero-weight rows, settles contradictions by the objective's kind and
gives a :class:`Prepared` whose views are built lazily, when a method asks: the numeric
design matrix, or binary features ``x[c] > t`` (:class:`BinaryView`) within a memory
budget. Grouping identical rows and identical (or complementary) binary features happens
here and only here, on packed bits, so the SAT and DP sides share one implementation.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import (
    ContradictionError,
    DataError,
    ParameterError,
    SatdtError,
    TimeUp,
    data_conversion_warning,
)
from ..core.params import is_number
from ..data import Dataset, Schema, check_missing, from_arrays
from ..models.tree import Tree
from .binarize import Binarizer
from .costs import CostReduction, reduce_costs

if TYPE_CHECKING:
    from ..task.result import Recorder

_ROWS_SHOWN = 10  # rows listed per group of contradictory rows in an error message


# ---------------------------------------------------------------------- packed bits
def pack_rows(B: np.ndarray) -> np.ndarray:
    """The rows of a 0/1 matrix ``(n, k)`` as ``(n, ceil(k / 64))`` uint64 words.

    Bits are packed with :func:`numpy.packbits` (big bit order within a byte) and the bytes
    read as little-endian words: only equality and a fixed order matter to the callers.
    """
    B = np.asarray(B)
    packed = np.packbits(B != 0 if B.dtype != np.uint8 else B, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def column_bitsets(B: np.ndarray) -> np.ndarray:
    """The columns of a 0/1 matrix ``(n, k)`` as ``k`` bitsets of ``n`` bits in uint64 words.

    Bit ``i`` of bitset ``j`` (little bit order: word ``i // 64``, bit ``i % 64``) is ``B[i, j]``;
    counting rows of a set is a popcount.
    """
    B = np.asarray(B)
    packed = np.packbits(B.T, axis=1, bitorder="little")  # nonzero packs as 1: no bool copy
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def _row_keys(A: np.ndarray) -> np.ndarray:
    """Integer words whose rows are equal exactly when the rows of ``A`` are equal."""
    A = np.asarray(A)
    if A.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {A.shape}")
    if A.dtype == np.uint8 or A.dtype == np.bool_:
        return pack_rows(A)
    if A.dtype.kind == "f":
        A = A.astype(np.float64) + 0.0  # -0.0 == 0.0
        A[np.isnan(A)] = np.nan  # one NaN: a missing cell equals a missing cell
        return np.ascontiguousarray(A).view(np.uint64)
    return np.ascontiguousarray(A)


def _hash_rows(words: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of a word matrix (equal rows, equal hashes)."""
    h = np.full(words.shape[0], 0x9E3779B97F4A7C15, dtype=np.uint64)
    for column in words.T:
        h ^= column.view(np.uint64) if column.dtype.itemsize == 8 else column.astype(np.uint64)
        h *= np.uint64(0xBF58476D1CE4E5B9)  # wraps modulo 2**64
        h ^= h >> np.uint64(31)
    return h


def group_rows(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups of identical rows: the first row of each group and the group of each row.

    ``A`` is a 0/1 matrix (compared as packed bits), a float matrix (``-0.0 == 0.0``, and NaN,
    a missing cell, equals NaN: every split sends two such rows the same way) or an integer
    matrix. ``first[g]`` is the smallest row index of group ``g``; groups are numbered
    in an order fixed by their contents. Rows are sorted by a 64-bit hash, and only rows whose
    hashes collide are sorted by their words, so the cost is one sort of ``n`` integers.
    """
    words = _row_keys(A)
    n, width = words.shape
    if width <= 1:
        key = words[:, 0] if width else np.zeros(n, dtype=np.uint64)
        order = np.argsort(key, kind="stable")
    else:
        h = _hash_rows(words)
        order = np.argsort(h, kind="stable")
        ordered_hash = h[order]
        same = ordered_hash[1:] == ordered_hash[:-1]
        in_run = np.zeros(n, dtype=bool)
        in_run[1:] |= same
        in_run[:-1] |= same
        if in_run.any():  # equal hashes: sort those rows by their words (hash first)
            sub = order[in_run]
            order[in_run] = sub[np.lexsort((*words[sub].T[::-1], h[sub]))]
    ordered = words[order]
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    group_sorted = np.cumsum(new_group) - 1
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group_sorted
    return order[new_group], inverse


def distinct_bitsets(bits: np.ndarray, n: int) -> np.ndarray:
    """Indices of the features worth keeping, given as column bitsets of ``n`` rows, ascending.

    Drops constant features and every feature identical or complementary to an earlier one:
    a tree can use the earlier feature instead, with its branches swapped if complementary.
    Each bitset is compared flipped so that row 0 reads 0; the cost is a sort of ``k``
    bitsets, never a copy of the dense matrix.
    """
    if n == 0 or len(bits) == 0:
        return np.zeros(0, dtype=np.int64)
    bits = bits.copy()
    flipped = (bits[:, 0] & np.uint64(1)) != 0
    bits[flipped] = ~bits[flipped]
    tail = n % 64
    if tail:  # bits past the last row stay zero after the flip
        bits[:, -1] &= np.uint64((1 << tail) - 1)
    first, _ = group_rows(bits)
    constant = ~bits[first].any(axis=1)  # after the flip, a constant feature is all zeros
    return np.sort(first[~constant]).astype(np.int64)


def distinct_features(B: np.ndarray) -> np.ndarray:
    """:func:`distinct_bitsets` of the columns of a dense 0/1 matrix ``(n, k)``."""
    B = np.asarray(B)
    if B.ndim != 2:
        raise ValueError(f"expected a 2-D binary matrix, got shape {B.shape}")
    return distinct_bitsets(column_bitsets(B), B.shape[0])


# Tiles of the transposition in unpack_columns: columns unpacked at a time, rows copied at a time.
_TILE_COLUMNS, _TILE_ROWS = 256, 1024


def unpack_columns(
    bits: np.ndarray, n: int, on_block: Callable[[], None] | None = None
) -> np.ndarray:
    """Column bitsets ``(k, words)`` back to a C-contiguous uint8 ``(n, k)`` matrix.

    A block of columns is unpacked at once, then copied into the matrix in row tiles (a
    transposition tile by tile stays in the cache). ``on_block()`` is called between
    blocks (progress, deadline).
    """
    k = len(bits)
    B = np.empty((n, k), dtype=np.uint8)
    for start in range(0, k, _TILE_COLUMNS):
        block = np.unpackbits(
            bits[start : start + _TILE_COLUMNS].view(np.uint8), axis=1, count=n, bitorder="little"
        )
        for row in range(0, n, _TILE_ROWS):
            B[row : row + _TILE_ROWS, start : start + _TILE_COLUMNS] = block[
                :, row : row + _TILE_ROWS
            ].T
        if on_block is not None:
            on_block()
    return B


# ---------------------------------------------------------------------- contradictions
def find_contradictions(X: np.ndarray, y: np.ndarray) -> list[list[int]]:
    """Groups of rows with identical features but not all the same label.

    Returns 0-based row indices, ascending within a group, groups ordered by their first row.
    """
    X = np.asarray(X)
    y = np.asarray(y)
    if len(X) == 0:
        return []
    _, rows = group_rows(X)
    _, labels = np.unique(y, return_inverse=True)
    labels = labels.reshape(-1)
    # a group is contradictory when its rows do not all carry the label of its first row
    first_label = np.full(rows.max() + 1, -1, dtype=np.int64)
    first_label[rows[::-1]] = labels[::-1]
    mixed = np.zeros(len(first_label), dtype=bool)
    mixed[rows[labels != first_label[rows]]] = True
    members = np.flatnonzero(mixed[rows])
    groups: dict[int, list[int]] = {}
    for i in members.tolist():
        groups.setdefault(int(rows[i]), []).append(i)
    return list(groups.values())


def contradiction_error(
    groups: Sequence[Sequence[int]],
    y: np.ndarray,
    line_numbers: np.ndarray,
    source: str | None,
    limit: int = 10,
) -> ContradictionError:
    """The error for contradictory rows, listing at most ``limit`` groups by line number."""
    y = np.asarray(y)
    line_numbers = np.asarray(line_numbers)
    count = len(groups)
    verb = "group of rows has" if count == 1 else "groups of rows have"
    head = f"no consistent tree exists: {count} {verb} identical features but different labels"
    lines = [f"{head} (rows numbered from 1)" if source is None else f"{head} in {source}"]
    where = "rows" if source is None else "lines"
    for group in groups[:limit]:
        shown = group[:_ROWS_SHOWN]
        numbers = ", ".join(str(line_numbers[i]) for i in shown)
        labels = ", ".join(str(y[i]) for i in shown)
        if len(group) > len(shown):
            numbers += f", ... ({len(group)} rows)"
            labels += ", ..."
        lines.append(f"  {where} {numbers}: labels {labels}")
    if count > limit:
        lines.append(f"  ... and {count - limit} more groups")
    lines.append("set resolve='majority' to keep each group's majority label")
    line_groups = [[int(line_numbers[i]) for i in group] for group in groups]
    return ContradictionError("\n".join(lines), line_groups)


def resolve_majority(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, int]:
    """Give every group of identical rows its majority label (ties: the smallest label).

    Returns the new labels and the number of rows whose label changed.
    """
    y = np.asarray(y)
    resolved = y.copy()
    changed = 0
    for group in find_contradictions(X, y):
        labels, counts = np.unique(y[group], return_counts=True)
        majority = labels[np.argmax(counts)]  # argmax takes the first, i.e. smallest, of ties
        changed += int(np.count_nonzero(y[group] != majority))
        resolved[group] = majority
    return resolved, changed


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


# ---------------------------------------------------------------------- the prepared data
# The dense binary matrix may take this fraction of ``max_memory_mb``: the searches derive
# a few arrays of the same size from it (distinct rows, per-row index lists).
_DENSE_SHARE = 8
# Seconds between two progress reports of a long preparation step.
_PROGRESS_EVERY = 0.25


@dataclass
class BinaryView:
    """Binary features ``b_j = [x[column[j]] > threshold[j]]`` of the prepared rows.

    ``B`` is a C-contiguous uint8 ``(n, k)`` matrix without constant, identical or
    complementary columns; ``binarizer`` chose the thresholds (``describe()`` says how).
    ``missing[j]`` says where feature ``j`` puts rows missing that cell (the codes of
    :class:`~satdt.Tree`; see :attr:`Binarizer.missing_`).
    """

    B: np.ndarray
    column: np.ndarray
    threshold: np.ndarray
    names: list[str]
    binarizer: Binarizer
    missing: np.ndarray

    @property
    def n_features(self) -> int:
        return self.B.shape[1]


class Prepared:
    """One fit's data as the methods see it: validated rows, class indices, weights, views.

    Attributes
    ----------
    X
        float64 ``(n, p)`` design matrix of the rows with positive weight.
    y
        int64 class index of each row (after contradictions were settled).
    weight
        float64 row weights (all positive).
    classes
        The user's labels, indexed by class index.
    schema, line_numbers, source
        Where the rows came from (messages, saved models).
    relabelled
        Rows whose label ``resolve="majority"`` changed.
    recorder
        Where progress and incumbents go; its clock started when ``fit`` was called.
    deadline
        ``time.perf_counter()`` value of the time limit, or ``None``.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        weight: np.ndarray,
        classes: np.ndarray,
        dataset: Dataset,
        line_numbers: np.ndarray,
        *,
        relabelled: int,
        recorder: Recorder,
        deadline: float | None,
        max_thresholds: int | None,
        max_memory_mb: float,
        resolve: str | None,
        consistency: bool,
    ) -> None:
        self.X = X
        self.y = y
        self.weight = weight
        self.classes = classes
        self.schema = dataset.schema
        self.source = dataset.source
        self.line_numbers = line_numbers
        self.relabelled = relabelled
        self.recorder = recorder
        self.deadline = deadline
        self.max_thresholds = max_thresholds
        self.max_memory_mb = max_memory_mb
        self.resolve = resolve
        self.consistency = consistency
        # the binary views built, each with the cap it was built under, and the one in use
        self._binaries: list[tuple[int, BinaryView]] = []
        self._in_use: BinaryView | None = None
        self._column_values: list[np.ndarray] | None = None
        self._has_missing: bool | None = None
        self._last_report = 0.0
        # with a cost matrix (with_costs): the user's rows, the reduction, rows per user row
        self.original: Prepared | None = None
        self.costs: CostReduction | None = None
        recorder.preparation.rows = len(y)
        recorder.preparation.relabelled_rows = relabelled

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def with_costs(self, C: np.ndarray, min_support: int = 1) -> Prepared:
        """The rows rewritten for the cost matrix ``C`` (:func:`satdt.prepare.costs.reduce_costs`),
        as the searches read them: same features, classes and clock, so that every tree's
        weighted error on them is its cost on these rows plus ``costs.offset``.

        The result keeps these rows as ``original`` (the trees' class counts, :meth:`finish`;
        the check with the true cost); its column values are these rows' (the same values).
        """
        reduction = reduce_costs(self.y, self.weight, C, min_support)
        rows = reduction.rows
        costed = Prepared(
            np.ascontiguousarray(self.X[rows]),
            reduction.y,
            reduction.weight,
            self.classes,
            Dataset(self.X, self.y, self.schema, self.line_numbers, self.source),
            self.line_numbers[rows],
            relabelled=self.relabelled,
            recorder=self.recorder,
            deadline=self.deadline,
            max_thresholds=self.max_thresholds,
            max_memory_mb=self.max_memory_mb,
            resolve=self.resolve,
            consistency=self.consistency,
        )
        costed._column_values = self._column_values
        costed._has_missing = self._has_missing
        costed.original = self
        costed.costs = reduction
        self.recorder.preparation.rows = len(self.y)  # the user's rows, not the rewritten ones
        return costed

    @property
    def feature_names(self) -> list[str]:
        return list(self.schema.feature_names)

    def time_left(self) -> float | None:
        """Seconds to the deadline (``None``: no limit)."""
        return None if self.deadline is None else self.deadline - time.perf_counter()

    def check_time(self, step: str, done: float = 0.0, total: float = 0.0) -> None:
        """Raise :class:`TimeUp` past the deadline; report progress now and then."""
        now = time.perf_counter()
        if self.deadline is not None and now >= self.deadline:
            raise TimeUp(step)
        if now - self._last_report >= _PROGRESS_EVERY:
            self._last_report = now
            self.recorder.progress(step, done, total)

    # ------------------------------------------------------------------ views
    def numeric(self) -> np.ndarray:
        """The float64 design matrix (categorical columns as 0/1 indicator columns)."""
        return self.X

    def column_values(self) -> list[np.ndarray]:
        """The sorted distinct present values of each column (computed once; the binarizer
        reuses them)."""
        if self._column_values is None:
            p = self.X.shape[1]
            values = []
            for c in range(p):
                distinct = np.unique(self.X[:, c])
                values.append(distinct[~np.isnan(distinct)] if self.has_missing else distinct)
                self.check_time("reading column values", c + 1, p)
            self._column_values = values
        return self._column_values

    @property
    def has_missing(self) -> bool:
        """Whether some cell is missing (NaN): then only methods over binary features apply."""
        if self._has_missing is None:
            self._has_missing = bool(np.isnan(self.X).any())
        return self._has_missing

    def full_threshold_count(self) -> int:
        """How many binary features every threshold of every column would give."""
        count = sum(max(len(values) - 1, 0) for values in self.column_values())
        if self.has_missing:  # a column with missing values: two per threshold, one more
            gone = np.isnan(self.X).any(axis=0)
            count += sum(
                max(len(v) - 1, 0) + 1 for v, g in zip(self.column_values(), gone, strict=True) if g
            )
        return count

    @property
    def feature_budget(self) -> int:
        """The most binary features whose dense matrix keeps within the memory budget."""
        cells = self.max_memory_mb * 2**20 / _DENSE_SHARE
        return max(1, int(cells // max(len(self.y), 1)))

    def binary(self, max_features: int | None = None) -> BinaryView:
        """Binary features within the memory budget (built once per effective cap, on first
        use), and from now on the view in use (:meth:`user_tree` maps trees with it).

        ``max_features`` is a method's own cap (its scratch memory or its work grows with the
        number of features); the effective cap is the smaller of it and the memory budget.
        When every threshold (or ``max_thresholds``) would exceed it, fewer quantile
        thresholds per column are used and the preparation notes say so: optimality then
        holds for these features only. A view that needed no reduction serves every cap it
        fits; a reduced one only its own cap. Raises :class:`TimeUp` past the deadline.
        """
        budget = self.feature_budget
        cap = budget if max_features is None else min(budget, int(max_features))
        view = self._binary_for(cap)
        if view is None:
            view = self._build_binary(cap)
            self._binaries.append((cap, view))
        self._in_use = view
        return view

    def _binary_for(self, cap: int) -> BinaryView | None:
        """The view already built that a binarisation under ``cap`` would give, if any."""
        for built_under, view in self._binaries:
            binarizer = view.binarizer
            if built_under == cap or (
                binarizer.reduced_to_ is None and binarizer.n_features_ <= cap
            ):
                return view
        return None

    def _build_binary(self, max_features: int) -> BinaryView:
        X = self.X
        n = X.shape[0]
        binarizer = Binarizer(max_thresholds=self.max_thresholds, max_features=max_features)
        binarizer.fit(
            X,
            feature_names=self.feature_names,
            indicator=self.schema.indicator,
            on_column=lambda done, total: self.check_time("choosing thresholds", done, total),
            column_values=self.column_values(),
        )
        k = binarizer.n_features_
        blocks = [0]

        def on_block() -> None:
            blocks[0] += 1
            self.check_time("binarizing", blocks[0], k)

        bits = binarizer.transform_bits(X, on_block)
        kept = distinct_bitsets(bits, n)
        unpacked = [0]

        def on_unpacked() -> None:
            unpacked[0] += 1
            self.check_time(
                "unpacking binary features", unpacked[0], -(-len(kept) // _TILE_COLUMNS)
            )

        B = unpack_columns(bits[kept], n, on_unpacked)
        del bits
        if self.consistency and binarizer.max_thresholds_used_ is not None:
            self._check_binary_contradictions(B, binarizer)
        summary = self.recorder.preparation
        summary.binary_features_total = binarizer.n_features_
        summary.binary_features = B.shape[1]
        summary.binarization = binarizer.describe()
        if binarizer.reduced_to_ is not None:
            summary.notes.append(
                f"every threshold would give {binarizer.n_full_} binary features over {n} rows, "
                f"more than the memory budget (max_memory_mb={self.max_memory_mb:g}) or the time "
                f"limit allows; using at most {binarizer.reduced_to_} quantile thresholds per "
                "column, so optimality holds for these thresholds only"
            )
        return BinaryView(
            B,
            binarizer.column_[kept],
            binarizer.threshold_[kept],
            [binarizer.names_[j] for j in kept],
            binarizer,
            binarizer.missing_[kept],
        )

    def _check_binary_contradictions(self, B: np.ndarray, binarizer: Binarizer) -> None:
        """Rows that only quantile thresholds make identical may still disagree on the label."""
        groups = find_contradictions(B, self.y)
        if not groups:
            return
        q = binarizer.max_thresholds_used_
        if self.resolve != "majority":
            raise DataError(
                f"with at most {q} thresholds per column, {len(groups)} groups of rows become "
                "identical but have different labels, so no consistent tree exists over these "
                "features; use full thresholds (max_thresholds=None, and a larger max_memory_mb "
                "if the budget cut them) or resolve='majority'"
            )
        self.y, changed = resolve_majority(B, self.y)
        self.relabelled += changed
        self.recorder.preparation.relabelled_rows = self.relabelled

    # ------------------------------------------------------------------ trees
    def user_tree(self, tree: Tree, view: BinaryView | None = None) -> Tree:
        """A tree over binary features as a tree over the user's columns, simplified, with counts.

        ``view``: the binary features the tree tests (default: the view in use, the one the
        latest :meth:`binary` call gave, which is the running search's; the default view
        when none was asked for yet).
        """
        if view is None:
            view = self._in_use if self._in_use is not None else self.binary()
        mapped = tree.map_features(
            view.column,
            view.threshold,
            self.feature_names,
            list(self.schema.indicator),
            view.missing,
        )
        mapped.classes = self.classes
        return self.finish(mapped)

    def named(self, tree: Tree) -> Tree:
        """A copy of a tree over the user's columns with their names and the user's labels."""
        named = tree.copy()
        named.feature_names = self.feature_names
        named.indicator = frozenset(int(i) for i in self.schema.indicator)
        named.classes = self.classes
        return named

    def finish(self, tree: Tree) -> Tree:
        """A tree over the user's columns, simplified on the rows and with their class weights
        (with a cost matrix, those of the user's rows, ``original``: ``predict_proba`` gives
        their frequencies; the rewritten rows have the same features, so they simplify the
        same way)."""
        rows = self if self.original is None else self.original
        return self.named(tree).simplify(self.X).with_counts(rows.X, rows.y, rows.weight)


def prepare(
    dataset: Dataset,
    sample_weight: Any,
    *,
    consistency: bool,
    resolve: str | None,
    recorder: Recorder,
    deadline: float | None,
    max_thresholds: int | None,
    max_memory_mb: float,
) -> Prepared:
    """Rows with positive weight, class indices, contradictions settled: the :class:`Prepared` data.

    ``consistency`` says whether the objective needs every row classified correctly: then
    rows with identical features and different labels are an error (listing them), or, with
    ``resolve="majority"``, relabelled by their group's majority. Error objectives keep them
    (they are the irreducible error).
    """
    X, y = dataset.X, np.asarray(dataset.y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1D (one label per row), got shape {y.shape}")
    if len(y) != len(X):
        raise ValueError(f"X has {len(X)} rows but y has {len(y)} labels")
    if len(y) == 0:
        raise DataError("the data has no rows: satdt needs at least one labelled row")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinity")
    weight = sample_weights(sample_weight, len(y))
    keep = weight > 0
    if not keep.any():
        raise DataError("every sample_weight is zero: no row is left to learn from")
    if not keep.all():
        X, y, weight = X[keep], y[keep], weight[keep]
    line_numbers = dataset.line_numbers[keep]
    classes, y_index = np.unique(y, return_inverse=True)
    y_index = y_index.reshape(-1).astype(np.int64)
    relabelled = 0
    if consistency:
        groups = find_contradictions(X, y_index)
        if groups:
            if resolve != "majority":
                raise contradiction_error(groups, y, line_numbers, dataset.source)
            y_index, relabelled = resolve_majority(X, y_index)
    return Prepared(
        np.ascontiguousarray(X),
        y_index,
        weight,
        classes,
        dataset,
        line_numbers,
        relabelled=relabelled,
        recorder=recorder,
        deadline=deadline,
        max_thresholds=max_thresholds,
        max_memory_mb=max_memory_mb,
        resolve=resolve,
        consistency=consistency,
    )


def prepare_consistent(
    dataset: Dataset, recorder: Recorder, max_memory_mb: float = 1024
) -> Prepared:
    """Every row and every threshold, contradictions an error, no clock: the preparation of a
    consistency objective outside a fit (CNF export, benchmarks, tests), reporting to
    ``recorder``."""
    return prepare(
        dataset,
        None,
        consistency=True,
        resolve=None,
        recorder=recorder,
        deadline=None,
        max_thresholds=None,
        max_memory_mb=max_memory_mb,
    )
