"""What a report reads: the fitted model, its search's result, and the rows given."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..models.diagram import Diagram

if TYPE_CHECKING:
    from ..models.base import Model
    from ..task.result import SearchResult


@dataclass(frozen=True)
class Fit:
    """One fit as a report sees it.

    Parameters
    ----------
    model : Tree or Diagram
        The fitted model (over the user's design columns).
    result : SearchResult
        What its search returned.
    method : str
        The search that ran (the estimator's ``method_``).
    X : ndarray of shape (n_rows, n_columns), optional
        Rows of the design matrix, some of which the explanations explain (the training
        table, for the command line).
    row_names : sequence of str, optional
        How to name row ``i`` of the training table, when ``X`` is that table (default
        ``row i``; the command line passes line numbers).
    """

    model: Model
    result: SearchResult
    method: str
    X: np.ndarray | None = None
    row_names: Sequence[str] | None = None

    def row_name(self, row: int) -> str:
        """The name of training row ``row`` (0-based)."""
        names = self.row_names
        return names[row] if names is not None and 0 <= row < len(names) else f"row {row}"

    @property
    def class_weights(self) -> np.ndarray | None:
        """The training weight of each class (None when the model holds no counts)."""
        model = self.model
        if isinstance(model, Diagram):
            counts = model.terminal_counts
            totals = None if counts is None else counts.sum(axis=0)
        else:
            totals = model.counts[0] if model.n_nodes else None
        return totals if totals is not None and totals.sum() > 0 else None

    @property
    def column_names(self) -> list[str]:
        """The design columns' names (``x[0]``, ... when the model has none)."""
        model = self.model
        if model.feature_names is not None:
            return [str(name) for name in model.feature_names]
        if isinstance(model, Diagram):
            n = model.n_features
        elif self.X is not None:
            n = self.X.shape[1]
        else:
            n = int(model.feature.max()) + 1 if model.n_nodes else 0
        return [f"x[{c}]" for c in range(n)]
