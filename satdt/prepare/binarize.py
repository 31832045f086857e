"""Binary features ``b_j = [x[c] > t]`` over a design matrix, for searches that need 0/1 data.

A numeric column with ``r`` distinct values gives ``r - 1`` thresholds, at the midpoints
between consecutive distinct values: every way a single test can split the training rows on
that column, and no other. A 0/1 column (such as a category indicator ``colour == red``)
therefore gives the single feature ``x > 0.5``. ``max_thresholds`` keeps a few quantile
thresholds per column instead, for large numeric data.

A column with missing values (NaN) gives, per threshold ``t`` between its present values,
both ``x > t or missing`` and ``x > t and not missing``, and once ``x is missing``: a tree
over these features is any tree of threshold splits that also chooses, at each split, the
side its missing rows take (so the searches over binary features optimise that choice too).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.errors import REMOVED_IN, DataError, ParameterError, SatdtError
from ..models.tree import DEFAULT_LEFT, MISSING_LEFT, MISSING_RIGHT


def readable_threshold(threshold: float, below: float, above: float) -> str:
    """The shortest text (at least 6 significant digits) for a threshold between two values.

    The text, read back as a number, still lies in ``[below, above)``, so ``x > text`` splits
    the training values exactly as ``x > threshold`` does.
    """
    for digits in range(6, 18):
        text = f"{threshold:.{digits}g}"
        if below <= float(text) < above:
            return text
    return repr(threshold)


def readable_thresholds(below: np.ndarray, above: np.ndarray) -> np.ndarray:
    """For each pair, the shortest decimal in ``[below, above)`` near the midpoint (as
    :func:`readable_threshold`): the thresholds of a greedy tree's splits.

    Each distinct pair is written once: on real data the same gaps recur in many nodes.
    """
    if below.size == 0:
        return np.zeros(0)
    pairs = np.empty(below.size, dtype=np.complex128)  # (below, above) as one sortable number
    pairs.real = below
    pairs.imag = above
    pairs, inverse = np.unique(pairs, return_inverse=True)
    lo, hi = pairs.real, pairs.imag
    with np.errstate(over="ignore"):
        mid = lo + (hi - lo) / 2
    # keep below <= t < above even where the two values are adjacent floats
    mid = np.where(mid < hi, mid, lo)
    texts = [
        float(readable_threshold(t, a, b))
        for t, a, b in zip(mid.tolist(), lo.tolist(), hi.tolist(), strict=True)
    ]
    return np.asarray(texts, dtype=np.float64)[inverse.ravel()]


def threshold_between(values: np.ndarray, rank: int) -> float:
    """The Binarizer's threshold between the sorted distinct values of rank ``rank`` and ``rank + 1``."""
    below, above = float(values[rank]), float(values[rank + 1])
    mid = below + (above - below) / 2
    if not mid < above:
        mid = below
    return float(readable_threshold(mid, below, above))


class Binarizer:
    """Turns a float design matrix into binary features ``x[c] > t``.

    Parameters
    ----------
    max_thresholds : int, optional
        ``None`` keeps every threshold. An integer ``q`` keeps, for a column with more than
        ``q`` candidate thresholds, the midpoints around ``q`` evenly spaced quantiles of the
        column's values (fewer when two quantiles fall between the same values).
    max_features : int, optional
        A cap on the total number of binary features (a memory budget: the features of
        ``n`` rows take ``n`` bytes each). When the thresholds asked for would exceed it, the
        per-column number of quantile thresholds is lowered until they fit, and
        ``reduced_to_`` says to how many.

    Attributes
    ----------
    column_
        int64 ``(k,)``: the design column of each binary feature.
    threshold_
        float64 ``(k,)``: its threshold; feature ``j`` is ``X[:, column_[j]] > threshold_[j]``
        on the rows where that cell is present (``inf`` for ``x is missing``).
    missing_
        int8 ``(k,)``: where the rows missing that cell go, in the codes of
        :class:`~satdt.Tree`: ``MISSING_RIGHT`` (the feature is 1 on them),
        ``MISSING_LEFT`` (0), or ``DEFAULT_LEFT`` for a column without missing values.
    names_
        Readable names: ``petal_length > 2.45``, ``age > 30.5 or missing``, ``age is missing``,
        or ``colour == red`` for indicator columns.
    n_columns_in_
        Number of design columns seen by :meth:`fit`.
    n_full_
        Number of binary features with every threshold (before any cap).
    reduced_to_
        The per-column threshold count imposed by ``max_features``, or ``None``.
    """

    def __init__(self, max_thresholds: int | None = None, max_features: int | None = None) -> None:
        self.max_thresholds = max_thresholds
        self.max_features = max_features

    def fit(
        self,
        X: np.ndarray,
        y: Any = None,
        *,
        feature_names: Sequence[str] | None = None,
        indicator: Sequence[int] = (),
        on_column: Callable[[int, int], None] | None = None,
        column_values: Sequence[np.ndarray] | None = None,
    ) -> Binarizer:
        """Choose the thresholds of every column of ``X``, ordered by column then value.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_columns)
            The design matrix (NaN where a cell is missing).
        y : object, optional
            Ignored: the thresholds depend on ``X`` only (a scikit-learn ``Pipeline`` passes
            the labels).
        feature_names : sequence of str, optional
            The columns' names (default ``x[0]``, ...).
        indicator : sequence of int, default ()
            The columns that are 0/1 indicators of a category.
        on_column : callable, optional
            ``on_column(done, total)`` is called after each column is read and after each
            column's thresholds are chosen (progress reports; it may raise to stop early).
        column_values : sequence of ndarray, optional
            The sorted distinct values of each column, when the caller has them.

        Returns
        -------
        Binarizer
            This binarizer, fitted.
        """
        if feature_names is None and _looks_like_names(y, X):
            warnings.warn(
                "Binarizer.fit(X, feature_names) is deprecated and stops working in satdt "
                f"{REMOVED_IN}: "
                "the second argument is y, as in scikit-learn; pass feature_names=...",
                FutureWarning,
                stacklevel=2,
            )
            feature_names = list(y)
        q = self.max_thresholds
        for name, value in (("max_thresholds", q), ("max_features", self.max_features)):
            _check_limit(name, value)
        X = _as_matrix(X)
        if np.isinf(X).any():
            raise DataError("X contains infinite values; binary features need finite values")
        p = X.shape[1]
        if feature_names is None:
            feature_names = [f"x[{c}]" for c in range(p)]
        elif len(feature_names) != p:
            raise DataError(
                f"feature_names has {len(feature_names)} names but X has {p} columns; "
                f"give one name per column"
            )
        values_of: list[np.ndarray] = []
        has_missing = np.isnan(X).any(axis=0)
        for c in range(p):
            if column_values is None:
                values = np.unique(X[:, c])
                values_of.append(values[~np.isnan(values)])
            else:
                values_of.append(column_values[c])
            if on_column is not None:
                on_column(c + 1, 2 * p)
        gaps = np.array([max(len(values) - 1, 0) for values in values_of], dtype=np.int64)
        per_gap = np.where(has_missing, 2, 1)  # features per threshold
        extra = int(has_missing.sum())  # the "is missing" features
        self.n_full_ = int((per_gap * gaps).sum()) + extra
        self.reduced_to_ = None
        if self.max_features is not None:
            asked = (
                self.n_full_ if q is None else int((per_gap * np.minimum(gaps, q)).sum()) + extra
            )
            if asked > self.max_features:
                q = _largest_fitting_count(gaps, int(self.max_features) - extra, per_gap)
                self.reduced_to_ = q
        indicator_set = {int(c) for c in indicator}
        columns: list[np.ndarray] = []
        thresholds: list[np.ndarray] = []
        sides: list[np.ndarray] = []
        names: list[str] = []
        for c, values in enumerate(values_of):
            threshold, side, column_names = _column_features(
                values,
                X[:, c],
                q,
                str(feature_names[c]),
                c in indicator_set,
                bool(has_missing[c]),
            )
            columns.append(np.full(len(threshold), c, dtype=np.int64))
            thresholds.append(threshold)
            sides.append(side)
            names.extend(column_names)
            if on_column is not None:
                on_column(p + c + 1, 2 * p)
        self.column_ = np.concatenate(columns) if columns else np.zeros(0, dtype=np.int64)
        self.threshold_ = np.concatenate(thresholds) if thresholds else np.zeros(0)
        self.missing_ = np.concatenate(sides) if sides else np.zeros(0, dtype=np.int8)
        self.names_ = names
        self.n_columns_in_ = p
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "column_"):
            raise SatdtError("this Binarizer is not fitted yet; call fit(X) first")

    def transform(self, X: np.ndarray) -> np.ndarray:
        """The binary features of the rows of ``X`` as a C-contiguous uint8 matrix.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_columns)
            Rows of the design matrix :meth:`fit` saw.

        Returns
        -------
        ndarray of uint8 of shape (n_rows, n_features)
            Feature ``j`` of row ``i`` is 1 where ``X[i, column_[j]] > threshold_[j]``.
        """
        self._check_fitted()
        X = _as_matrix(X)
        if X.shape[1] != self.n_columns_in_:
            raise DataError(
                f"X has {X.shape[1]} columns but the Binarizer was fitted on "
                f"{self.n_columns_in_}; give the same design columns"
            )
        B = np.empty((X.shape[0], self.n_features_), dtype=np.uint8)
        # one design column at a time: never materialise X[:, column_] as floats
        starts = np.flatnonzero(np.diff(self.column_, prepend=-1, append=-1))
        for start, end in zip(starts[:-1].tolist(), starts[1:].tolist(), strict=True):
            c = self.column_[start]
            np.greater(X[:, c, None], self.threshold_[start:end], out=B[:, start:end].view(bool))
            right = self.missing_[start:end] == MISSING_RIGHT
            if right.any():
                gone = np.isnan(X[:, c])
                B[np.ix_(gone, start + np.flatnonzero(right))] = 1
        return B

    def fit_transform(
        self,
        X: np.ndarray,
        y: Any = None,
        *,
        feature_names: Sequence[str] | None = None,
        indicator: Sequence[int] = (),
    ) -> np.ndarray:
        """Fit on ``X`` (:meth:`fit`), then :meth:`transform` the same rows.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_columns)
            The design matrix.
        y : object, optional
            Ignored, as in :meth:`fit`.
        feature_names : sequence of str, optional
            The columns' names.
        indicator : sequence of int, default ()
            The columns that are 0/1 indicators of a category.

        Returns
        -------
        ndarray of uint8 of shape (n_rows, n_features)
            The binary features of the rows of ``X``.
        """
        return self.fit(X, y, feature_names=feature_names, indicator=indicator).transform(X)

    def transform_bits(
        self, X: np.ndarray, on_column: Callable[[], None] | None = None
    ) -> np.ndarray:
        """The binary features of the rows of ``X`` as column bitsets ``(k, ceil(n / 64))`` uint64.

        Bit ``i`` of bitset ``j`` is feature ``j`` of row ``i`` (see
        ``satdt.prepare.rows.column_bitsets``): ``n / 8`` bytes per feature, an eighth of the
        dense matrix, computed a block of thresholds at a time.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_columns)
            Rows of the design matrix :meth:`fit` saw.
        on_column : callable, optional
            Called without arguments between blocks (progress, deadline).

        Returns
        -------
        ndarray of uint64 of shape (n_features, ceil(n_rows / 64))
            One bitset per binary feature.
        """
        self._check_fitted()
        X = _as_matrix(X)
        n = X.shape[0]
        words = (n + 63) // 64
        bits = np.zeros((self.n_features_, words), dtype=np.uint64)
        step = max(1, _CHUNK_CELLS // max(n, 1))
        for start in range(0, self.n_features_, step):
            end = min(start + step, self.n_features_)
            cells = X[:, self.column_[start:end]]
            block = cells > self.threshold_[start:end]
            right = self.missing_[start:end] == MISSING_RIGHT
            if right.any():
                block[:, right] |= np.isnan(cells[:, right])
            packed = np.packbits(block, axis=0, bitorder="little")  # (ceil(n / 8), end - start)
            as_bytes = bits[start:end].view(np.uint8)
            as_bytes[:, : packed.shape[0]] = packed.T
            if on_column is not None:
                on_column()
        return bits

    @property
    def n_features_(self) -> int:
        """Number of binary features."""
        self._check_fitted()
        return len(self.column_)

    @property
    def max_thresholds_used_(self) -> int | None:
        """The per-column threshold cap in force: ``max_thresholds``, or lower if the budget cut it."""
        self._check_fitted()
        return self.max_thresholds if self.reduced_to_ is None else self.reduced_to_

    def describe(self) -> str:
        """One line saying how the features were chosen and how many there are.

        Returns
        -------
        str
            Such as ``full thresholds: 12 binary features``.
        """
        k = self.n_features_
        count = f"{k} binary feature" + ("" if k == 1 else "s")
        q = self.max_thresholds_used_
        if q is None:
            return f"full thresholds: {count}"
        text = f"at most {q} quantile thresholds per column: {count}"
        if self.reduced_to_ is not None:
            text += f" (every threshold would give {self.n_full_}, over the budget of {self.max_features})"
        return text


def _check_limit(name: str, value: object) -> None:
    """A limit is a positive integer or None."""
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1
    ):
        raise ParameterError(
            f"{name} must be a positive integer or None, got {value!r}; use None for no limit"
        )


def _column_features(
    values: np.ndarray,
    column: np.ndarray,
    q: int | None,
    name: str,
    indicator: bool,
    missing: bool,
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The binary features of one column: thresholds, where missing rows go, names.

    ``values`` are the column's sorted distinct present values, ``column`` its cells; with
    ``q`` at most ``q`` quantile thresholds are kept.
    """
    below, above = values[:-1], values[1:]
    mid = below + (above - below) / 2
    # keep below <= t < above even where the two values are adjacent floats
    mid = np.where(mid < above, mid, below)
    if q is not None and len(mid) > q:
        present = column[~np.isnan(column)] if missing else column
        quantiles = np.quantile(present, np.arange(1, q + 1) / (q + 1))
        # the gap just above each quantile: between the largest value <= it and the next
        gap = np.searchsorted(values, quantiles, side="right") - 1
        keep = np.unique(np.clip(gap, 0, len(mid) - 1))
        below, above, mid = below[keep], above[keep], mid[keep]
    # the threshold itself is the shortest number between the two values, so trees
    # print it exactly and it splits the training rows as the midpoint would
    texts = [
        readable_threshold(float(t), float(lo), float(hi))
        for t, lo, hi in zip(mid, below, above, strict=True)
    ]
    values_t = np.array([float(t) for t in texts], dtype=np.float64)
    if missing:
        # per threshold: missing rows right (feature 1), then left; then "is missing"
        side = np.tile(np.array([MISSING_RIGHT, MISSING_LEFT], dtype=np.int8), len(mid))
        names = []
        for text in texts:
            names.append(f"{name} > {text} or missing")
            names.append(f"{name} > {text} and not missing")
        names.append(f"{name} is missing")
        return (
            np.append(np.repeat(values_t, 2), np.inf),
            np.append(side, np.int8(MISSING_RIGHT)),
            names,
        )
    if indicator and values.tolist() == [0.0, 1.0]:
        names = [name] * len(mid)
    else:
        names = [f"{name} > {text}" for text in texts]
    return values_t, np.full(len(mid), DEFAULT_LEFT, dtype=np.int8), names


def _largest_fitting_count(gaps: np.ndarray, budget: int, per_gap: np.ndarray) -> int:
    """The largest per-column threshold count q with sum(per_gap * min(gaps, q)) <= budget
    (at least 1); ``per_gap``: features per threshold of each column."""
    low, high = 1, max(int(gaps.max(initial=1)), 1)
    while low < high:
        middle = (low + high + 1) // 2
        if int((per_gap * np.minimum(gaps, middle)).sum()) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def _as_matrix(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise DataError(f"X must be a 2-D design matrix, got shape {X.shape}")
    return X


_CHUNK_CELLS = 1 << 22  # cells compared at a time by transform_bits


def _looks_like_names(y: Any, X: Any) -> bool:
    """Whether a second argument of :meth:`Binarizer.fit` is feature names (the old call),
    not labels: strings, one per column."""
    if y is None or isinstance(y, str) or not isinstance(y, Sequence | np.ndarray):
        return False
    columns = np.shape(X)[1] if np.ndim(X) == 2 else -1
    return len(y) == columns and all(isinstance(name, str) for name in y)
