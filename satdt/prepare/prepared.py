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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import (
    DataError,
    TimeUp,
)
from ..data import Dataset
from ..models.tree import Tree
from .binarize import Binarizer
from .costs import CostReduction, reduce_costs
from .rows import (
    TILE_COLUMNS,
    contradiction_error,
    distinct_bitsets,
    find_contradictions,
    resolve_majority,
    unpack_columns,
)
from .validate import sample_weights

if TYPE_CHECKING:
    from ..task.result import Recorder


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
            self.check_time("unpacking binary features", unpacked[0], -(-len(kept) // TILE_COLUMNS))

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
