"""Lower bounds on the minimum depth from small row sets (cores).

A set of rows that no tree of depth ``k`` classifies correctly proves that no tree of depth
``k`` classifies the whole table correctly: every tree consistent with the table is
consistent with the set. On a table of thousands of rows ConTree's decision procedure
(:mod:`satdt.dp.consistent`) cannot refute even a small depth (a 2,000-row sample of eeg:
depth 4 not refuted in 20 s), while on a hundred well-chosen rows it refutes it in a second.
:class:`CoreBound` finds such rows the way the counterexample-guided loop of Avellaneda (AAAI
2020, Algorithm 3) finds its examples: it decides depth ``k`` on the core alone; a tree
consistent with the core is checked against every row, and one misclassified row per leaf
joins the core, until the core has no consistent tree of depth ``k`` (a proof) or the tree
is consistent with the whole table (found). The core proven at depth ``k`` is where the
search at depth ``k + 1`` starts, so the cores grow with the depth and no row is found twice.

*Soundness.* ConTree's decision on the core searches every threshold between neighbouring
distinct values of the core's own columns: every threshold of the table splits the core as
one of those does (or not at all, which no tree of minimum depth needs), so the core's answer
holds for the thresholds of the table. Only that many thresholds are searched (the
statistics count the table's others as dropped). Keeping only the thresholds between
neighbouring values of different labels would not be sound here (see
:mod:`satdt.dp.improve`).
"""

from __future__ import annotations

import time

import numpy as np

from ..task.stats import CoreStats, Decision
from .consistent import ConsistencyDP


class CoreBound:
    """Decisions of "a consistent tree of depth ``k``?" on a core of the rows, grown by
    counterexamples (module docstring); resumable in slices.

    Parameters
    ----------
    X
        float64 ``(n, p)`` design matrix without missing values.
    y
        Class index of each row; identical rows have identical labels.
    n_classes
        Number of classes.
    max_cache_mb
        Cap on the decision's cache of subproblems (see :class:`ConsistencyDP`).
    stats
        The counters to keep (a new :class:`~satdt.task.stats.CoreStats` by default).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        *,
        max_cache_mb: float = 256,
        stats: CoreStats | None = None,
    ) -> None:
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.int64)
        self.n_classes = n_classes
        self.max_cache_mb = max_cache_mb
        self.stats = stats if stats is not None else CoreStats()
        # the first row of each class: any tree of depth >= 1 separates them
        _, first = np.unique(self.y, return_index=True)
        self.core = np.sort(first)
        self.table_thresholds = sum(
            max(len(np.unique(self.X[:, c])) - 1, 0) for c in range(self.X.shape[1])
        )
        self.dp: ConsistencyDP | None = None
        self._count()

    def _count(self) -> None:
        """The core's size and thresholds in the statistics."""
        X = self.X[self.core]
        thresholds = sum(max(len(np.unique(X[:, c])) - 1, 0) for c in range(X.shape[1]))
        self.stats.rows = len(self.core)
        self.stats.thresholds = thresholds
        self.stats.thresholds_dropped = self.table_thresholds - thresholds

    def advance(self, depth: int, until: float) -> Decision:
        """One slice of "is there a consistent tree of depth at most ``depth``?", up to
        ``until`` (a ``time.perf_counter()`` value): ``"UNSAT"`` (the core has none, so the
        table has none), ``"SAT"`` with a tree consistent with every row, or ``"UNKNOWN"``."""
        while time.perf_counter() < until:
            if self.dp is None:
                self.dp = ConsistencyDP(
                    self.X[self.core],
                    self.y[self.core],
                    self.n_classes,
                    max_cache_mb=self.max_cache_mb,
                )
            decision = self.dp.decide(depth, until)
            if decision.status == "UNKNOWN":
                return decision
            self.stats.decisions += 1
            if decision.status == "UNSAT":
                self.stats.cores.append((depth, len(self.core)))
                return decision
            tree = decision.tree
            wrong = np.flatnonzero(tree.predict_index(self.X) != self.y)
            if wrong.size == 0:
                return decision
            # one misclassified row per leaf that misclassifies rows
            _, first = np.unique(tree.apply(self.X[wrong]), return_index=True)
            self.core = np.union1d(self.core, wrong[first])
            self.dp = None
            self._count()
        return Decision("UNKNOWN")
