"""What the SAT searches solve: distinct rows of a binary matrix with their class indices."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..prepare.rows import group_rows


@dataclass(frozen=True)
class Problem:
    """A consistency problem: distinct rows of a binary matrix with their class indices.

    ``rows`` maps each row back to the caller's 0-based training row, ``labels`` the class
    indices to the user's labels (for the trace).
    """

    B: np.ndarray
    y: np.ndarray
    n_classes: int
    rows: np.ndarray
    labels: np.ndarray

    @classmethod
    def from_data(cls, B: np.ndarray, y: np.ndarray, n_classes: int, labels: np.ndarray) -> Problem:
        """Keep the first of every group of identical rows (they add nothing to a SAT formula).

        Rows are grouped on ``B`` alone, as packed bits (:func:`satdt.prepare.rows.group_rows`), so
        no widened copy of ``B`` is made. Identical rows with different labels (a
        contradiction, which callers reject or relabel first) are kept once per label. The
        kept rows stay in their original order.
        """
        B = np.ascontiguousarray(B, dtype=np.uint8)
        y = np.asarray(y, dtype=np.int64)
        first, group = group_rows(B)
        if len(y) and (y != y[first][group]).any():
            # split the groups by label: the first row of every distinct (group, label) pair
            low = int(y.min())
            key = group * (int(y.max()) - low + 1) + (y - low)
            _, first = np.unique(key, return_index=True)
        first = np.sort(first)
        if len(first) == len(y):  # every row distinct: no copy
            return cls(B, y, n_classes, first, np.asarray(labels))
        return cls(np.ascontiguousarray(B[first]), y[first], n_classes, first, np.asarray(labels))
