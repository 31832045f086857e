"""Binary features ``b_j = [x[c] > t]`` over a design matrix, for searches that need 0/1 data.

A numeric column with ``r`` distinct values gives ``r - 1`` thresholds, at the midpoints
between consecutive distinct values: every way a single test can split the training rows on
that column, and no other. A 0/1 column (such as a category indicator ``colour == red``)
therefore gives the single feature ``x > 0.5``. ``max_thresholds`` keeps a few quantile
thresholds per column instead, for large numeric data.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import DataError, SatdtError


def _readable(threshold: float, below: float, above: float) -> str:
    """The shortest text (at least 6 significant digits) for a threshold between two values.

    The text, read back as a number, still lies in ``[below, above)``, so ``x > text`` splits
    the training values exactly as ``x > threshold`` does.
    """
    for digits in range(6, 18):
        text = f"{threshold:.{digits}g}"
        if below <= float(text) < above:
            return text
    return repr(threshold)


class Binarizer:
    """Turns a float design matrix into binary features ``x[c] > t``.

    Parameters
    ----------
    max_thresholds
        ``None`` keeps every threshold. An integer ``q`` keeps, for a column with more than
        ``q`` candidate thresholds, the midpoints around ``q`` evenly spaced quantiles of the
        column's values (fewer when two quantiles fall between the same values).

    Attributes
    ----------
    column_
        int64 ``(k,)``: the design column of each binary feature.
    threshold_
        float64 ``(k,)``: its threshold; feature ``j`` is ``X[:, column_[j]] > threshold_[j]``.
    names_
        Readable names: ``petal_length > 2.45``, or ``colour == red`` for indicator columns.
    n_columns_in_
        Number of design columns seen by :meth:`fit`.
    """

    def __init__(self, max_thresholds: int | None = None) -> None:
        self.max_thresholds = max_thresholds

    def fit(
        self,
        X: np.ndarray,
        feature_names: Sequence[str] | None = None,
        indicator: Sequence[int] = (),
    ) -> Binarizer:
        """Choose the thresholds of every column of ``X``, ordered by column then value."""
        q = self.max_thresholds
        if q is not None and (isinstance(q, bool) or not isinstance(q, (int, np.integer)) or q < 1):
            raise SatdtError(
                f"max_thresholds must be a positive integer or None, got {q!r}; "
                f"use None to keep every threshold"
            )
        X = _as_matrix(X)
        if not np.all(np.isfinite(X)):
            raise DataError("X contains NaN or infinite values; binary features need finite values")
        p = X.shape[1]
        if feature_names is None:
            feature_names = [f"x[{c}]" for c in range(p)]
        elif len(feature_names) != p:
            raise DataError(
                f"feature_names has {len(feature_names)} names but X has {p} columns; "
                f"give one name per column"
            )
        indicator_set = {int(c) for c in indicator}
        columns: list[np.ndarray] = []
        thresholds: list[np.ndarray] = []
        names: list[str] = []
        for c in range(p):
            values = np.unique(X[:, c])
            below, above = values[:-1], values[1:]
            mid = below + (above - below) / 2
            # keep below <= t < above even where the two values are adjacent floats
            mid = np.where(mid < above, mid, below)
            if q is not None and len(mid) > q:
                quantiles = np.quantile(X[:, c], np.arange(1, q + 1) / (q + 1))
                # the gap just above each quantile: between the largest value <= it and the next
                gap = np.searchsorted(values, quantiles, side="right") - 1
                keep = np.unique(np.clip(gap, 0, len(mid) - 1))
                below, above, mid = below[keep], above[keep], mid[keep]
            # the threshold itself is the shortest number between the two values, so trees
            # print it exactly and it splits the training rows as the midpoint would
            texts = [
                _readable(float(t), float(lo), float(hi))
                for t, lo, hi in zip(mid, below, above, strict=True)
            ]
            columns.append(np.full(len(mid), c, dtype=np.int64))
            thresholds.append(np.array([float(t) for t in texts], dtype=np.float64))
            if c in indicator_set and values.tolist() == [0.0, 1.0]:
                names.extend([str(feature_names[c])] * len(mid))
            else:
                names.extend(f"{feature_names[c]} > {text}" for text in texts)
        self.column_ = np.concatenate(columns) if columns else np.zeros(0, dtype=np.int64)
        self.threshold_ = np.concatenate(thresholds) if thresholds else np.zeros(0)
        self.names_ = names
        self.n_columns_in_ = p
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "column_"):
            raise SatdtError("this Binarizer is not fitted yet; call fit(X) first")

    def transform(self, X: np.ndarray) -> np.ndarray:
        """The binary features of the rows of ``X`` as a C-contiguous uint8 ``(n, k)`` matrix."""
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
        return B

    def fit_transform(
        self,
        X: np.ndarray,
        feature_names: Sequence[str] | None = None,
        indicator: Sequence[int] = (),
    ) -> np.ndarray:
        """:meth:`fit`, then :meth:`transform` the same rows."""
        return self.fit(X, feature_names, indicator).transform(X)

    @property
    def n_features_(self) -> int:
        """Number of binary features."""
        self._check_fitted()
        return len(self.column_)

    def describe(self) -> str:
        """One line saying how the features were chosen and how many there are."""
        k = self.n_features_
        count = f"{k} binary feature" + ("" if k == 1 else "s")
        if self.max_thresholds is None:
            return f"full thresholds: {count}"
        return f"at most {self.max_thresholds} quantile thresholds per column: {count}"


def _as_matrix(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise DataError(f"X must be a 2-D design matrix, got shape {X.shape}")
    return X


_CHUNK_CELLS = 1 << 24  # cells of B unpacked at a time by reduce_features


def reduce_features(B: np.ndarray) -> np.ndarray:
    """Indices of the binary columns worth keeping on these rows, ascending.

    Drops constant columns and every column identical or complementary to an earlier column:
    a tree can use the earlier column instead, with its branches swapped if complementary.
    Columns are compared as packed bit strings, so the cost is a sort, not ``k**2`` compares.
    """
    B = np.asarray(B)
    if B.ndim != 2:
        raise DataError(f"B must be a 2-D binary matrix, got shape {B.shape}")
    n, k = B.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    step = max(1, _CHUNK_CELLS // n)
    packed = np.empty((k, (n + 7) // 8), dtype=np.uint8)
    for start in range(0, k, step):
        block = B[:, start : start + step] != 0
        # flip each column so that row 0 reads 0: complementary columns become identical
        packed[start : start + step] = np.packbits((block ^ block[0]).T, axis=1)
    unique, first = np.unique(packed, axis=0, return_index=True)
    constant = ~unique.any(axis=1)  # after the flip, a constant column is all zeros
    return np.sort(first[~constant]).astype(np.int64)
