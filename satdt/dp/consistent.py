"""ConTree as a decision procedure: is there a consistent tree of depth k (with at most L leaves)?

The consistency objectives (minimum depth, then minimum size) ask whether some tree of depth
``k`` classifies every training row correctly. A minimum-error search answers it: the
optimum of ConTree (Brita, van der Linden & Demirovic, AAAI 2025; :mod:`satdt.dp.contree`)
at depth ``k`` is 0 exactly when such a tree exists. Optimising the error to its end is far
more work than deciding whether it can be 0, though: with unit weights an error is at least
1, so ConTree run with the upper bound ``ub = 1/2`` (Eq. (4)-(6) with every bound read
against it) prunes every subproblem as soon as one of its rows must be misclassified. The
depth-two subroutine (Algorithm 2) then rejects a split at its first impure side, the
similarity bound (Eq. (3)) and the interval prunings (Corollary 1, Theorems 2-3) discard
whole ranges of thresholds once one of them fails, and the cache of subproblems holds, for
every row set and remaining depth it failed on, the proof that it cannot be separated.

*Fewest leaves.* With a leaf penalty ``p`` below ``1 / (N + 1)`` for ``N`` distinct rows
(a tree has at most ``N`` useful leaves), the cost ``errors + p * leaves`` of a consistent
tree is below 1 and that of any other tree at least 1, so ConTree with the upper bound
``p * (U - 1/2)`` finds the consistent trees of fewer than ``U`` leaves, the one with the
fewest leaves first when it completes: the minimum size at that depth (a binary tree of L
leaves has ``2L - 1`` nodes). A node cap (``max_nodes``) on the depth search is the same
search with ``U`` one more than the cap.

Every search here is resumable in slices: a slice that runs out of time raises
:class:`~satdt.core.errors.TimeUp` inside ConTree, and the next slice at the same depth starts
again from the root with the cache of every subproblem solved or refuted so far (keyed by
row set and remaining depth, so the searches at different depths share it). The callers
(:mod:`satdt.search.hybrid`) interleave these slices with the SAT searches on one core.

*Good trees early.* Far above the minimum depth, ConTree's decision can spend long in
subtrees that cannot be separated before it meets one of the many consistent trees.
:class:`QuantilePrimal` looks for them the way ConTree's own anytime phase does
(:func:`satdt.dp.contree._primal`): Blossom (Demirovic et al., the anytime depth-first
search of :mod:`satdt.dp.blossom`) minimises the error on a few quantile thresholds per
column, and each of its trees with no error is a consistent tree of the numeric columns
(every quantile threshold lies between two data values). It proves nothing.

Identical rows must have identical labels (the caller settles contradictions first): the
rows are merged and weighed 1 each, whatever their sample weights, since only presence
matters for consistency.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ..core.errors import TimeUp
from ..models.tree import Tree
from ..prepare.binarize import Binarizer
from ..task.result import Recorder, SearchResult
from ..task.stats import ConTreeStats, Decision, DPStats
from .common import prepare_binary
from .contree import PRUNING, _flags, _root_order, _Search, prepare_numeric
from .contree_starts import PRIMAL_MAX_CELLS, checked_tree

# The decision's upper bound on the (unit-weight) error: any misclassified row costs 1.
_DECIDE_BOUND = 0.5


class ConsistencyDP:
    """ConTree's searches for consistent trees on one table, resumable in slices.

    Parameters
    ----------
    X
        float64 ``(n, p)`` design matrix without missing values.
    y
        Class index of each row; rows with identical features must have identical labels.
    n_classes
        Number of classes.
    column_values
        Each column's sorted distinct values, when the caller has them.
    max_cache_mb
        Cap on the caches of subproblems, half of it for each of the two searches (the
        decision and the fewest-leaves search); a full cache stops storing (still exact).
    check_time
        Called between columns while the rows are ranked (raises past a deadline).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        *,
        column_values: list[np.ndarray] | None = None,
        max_cache_mb: float = 512,
        check_time: Callable[[], None] = lambda: None,
    ) -> None:
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.int64)
        self.n_classes = n_classes
        self.w = np.ones(len(self.y))
        self.prep = prepare_numeric(
            self.X, self.y, self.w, n_classes, column_values=column_values, check_time=check_time
        )
        if self.prep.floor > 0:
            raise ValueError(
                "rows with identical features have different labels: settle the contradictions "
                "before deciding consistency"
            )
        self.order = _root_order(self.prep, check_time)
        self.distinct_rows = int(self.prep.Rt.shape[1])
        self.flags, self.d2 = _flags(PRUNING)
        self.max_cache_mb = max_cache_mb
        # one leaf of the fewest-leaves search costs this: N leaves cost less than one error
        self.leaf_cost = 1.0 / (self.distinct_rows + 1)
        self._decide: _Search | None = None
        self._leaves: _Search | None = None
        self._found: list[tuple[float, object]] = []

    # ------------------------------------------------------------------ searches
    def _search(self, penalised: bool) -> _Search:
        """The decision search (no penalty) or the fewest-leaves search, made once each."""
        current = self._leaves if penalised else self._decide
        if current is None:
            stats = ConTreeStats(
                rows=len(self.y), distinct_rows=self.distinct_rows, features=self.X.shape[1]
            )
            pen = self.leaf_cost if penalised else 0.0
            current = _Search(
                self.prep,
                self.flags,
                self.d2,
                self.max_cache_mb / 2,
                None,
                stats,
                lambda value, node: self._found.append((value, node)),
                pen,
                1,
                1.0,
            )
            if penalised:
                self._leaves = current
            else:
                self._decide = current
        return current

    def stats(self) -> ConTreeStats:
        """The counters of both searches, summed."""
        total = ConTreeStats(
            rows=len(self.y),
            distinct_rows=self.distinct_rows,
            features=self.X.shape[1],
            features_used=self.X.shape[1],
        )
        for search in (self._decide, self._leaves):
            if search is None:
                continue
            s = search.stats
            total.expansions += s.expansions
            total.bottom_solves += s.bottom_solves
            total.cuts += s.cuts
            total.d2_splits += s.d2_splits
            total.cache_hits += s.cache_hits
            total.cache_entries += len(search.cache)
            total.cache_mb += search.cache_bytes / 2**20
            total.cache_full |= s.cache_full
        return total

    def _run(
        self, search: _Search, depth: int, ub: float, slack: float, until: float | None
    ) -> tuple[float, object, bool]:
        """One slice of ConTree's root search below ``ub``: ``(value, node, complete)``, with
        ``node`` the best tree found (None: none below ``ub``)."""
        self._found.clear()
        search.deadline = until
        if until is not None and time.perf_counter() >= until:
            return ub, None, False
        try:
            value, node = search.solve(self.order, depth, ub, slack=slack, root=True)
            return value, node, True
        except TimeUp:
            if self._found:
                value, node = min(self._found, key=lambda found: found[0])
                return value, node, False
            return ub, None, False

    def _tree(self, value: float, node: object, pen: float) -> Tree:
        """The rank-space tree as a :class:`Tree` on ``X``, checked: no error, the cost claimed."""
        tree = checked_tree(value, node, self.prep, self.X, self.y, self.w, self.n_classes, pen)
        if tree.count_error() != 0:
            raise RuntimeError("internal error: the decision returned an inconsistent tree")
        return tree

    def decide(self, depth: int, until: float | None, max_leaves: int | None = None) -> Decision:
        """Is there a consistent tree of depth at most ``depth`` (and at most ``max_leaves``
        leaves)? One slice, up to ``until`` (a ``time.perf_counter()`` value)."""
        if max_leaves is not None and max_leaves < self.distinct_rows:
            within = self.fewer_leaves(depth, max_leaves + 1, until)
            return within if within.tree is None else Decision("SAT", within.tree)
        value, node, complete = self._run(
            self._search(False), depth, _DECIDE_BOUND, _DECIDE_BOUND / 2, until
        )
        if node is not None:
            return Decision("SAT", self._tree(value, node, 0.0))
        return Decision("UNSAT" if complete else "UNKNOWN")

    def fewer_leaves(self, depth: int, upper: int, until: float | None) -> Decision:
        """A consistent tree of depth at most ``depth`` with fewer than ``upper`` leaves, the
        fewest when the slice completes (``"SAT"``); ``"UNSAT"``: none has fewer (proven)."""
        pen = self.leaf_cost
        value, node, complete = self._run(
            self._search(True), depth, pen * (upper - 0.5), pen / 2, until
        )
        if node is not None:
            tree = self._tree(value, node, pen)
            # a complete search returns the fewest leaves; a cut-off one only fewer than upper
            return Decision("SAT" if complete else "UNKNOWN", tree)
        return Decision("UNSAT" if complete else "UNKNOWN")


# Quantile thresholds per column of the primal's grids, coarse first (as ConTree's primal).
PRIMAL_THRESHOLDS = (6, 32)
# Blossom keeps a domain of every feature at each of its 2^(depth - 1) positions: a grid whose
# domains would take more megabytes than this is skipped (deep targets on wide tables).
PRIMAL_MAX_MB = 128


class QuantilePrimal:
    """Blossom on quantile thresholds at one depth, resumable in slices: consistent trees of
    the numeric columns early (see the module docstring), never a proof.

    Each grid of :data:`PRIMAL_THRESHOLDS` runs until Blossom has proven its optimum there
    (then the next, finer grid), or until a tree with no error is found. A grid on which
    identical binarised rows have different labels has no consistent tree and is skipped.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, n_classes: int, depth: int) -> None:
        self.X, self.y, self.n_classes, self.depth = X, y, n_classes, depth
        self.grids = list(PRIMAL_THRESHOLDS)
        self.run = None
        self.found: Tree | None = None
        self.exhausted = False

    def _next_grid(self) -> bool:
        """Start Blossom on the next grid with a consistent tree; False when none is left."""
        from .blossom import BlossomRun

        X, y, C = self.X, self.y, self.n_classes
        w = np.ones(len(y))
        while self.grids:
            thresholds = self.grids.pop(0)
            if X.shape[0] * X.shape[1] * thresholds > PRIMAL_MAX_CELLS:  # not within a slice
                continue
            binarizer = Binarizer(max_thresholds=thresholds).fit(X)
            B = binarizer.transform(X)
            prep = prepare_binary(B, y, w, C)
            if prep.floor > 0:  # rows the grid merges disagree: nothing consistent here
                continue
            domains_mb = 2 ** max(self.depth - 1, 0) * prep.data.Bd.shape[1] * 8 / 2**20
            if domains_mb > PRIMAL_MAX_MB:
                continue

            def forward(result: SearchResult) -> None:
                if result.objective_value == 0:
                    self.found = result.model

            recorder = Recorder(
                "error",
                to_user_tree=lambda tree, b=binarizer: tree.map_features(b.column_, b.threshold_),
                on_improve=forward,
            )
            self.run = BlossomRun(
                prep, self.depth, float(len(y)), (B, y, w, C), recorder, DPStats()
            )
            return True
        return False

    def advance(self, until: float | None) -> Decision:
        """One slice: ``"SAT"`` with a consistent tree of depth at most ``depth`` found, else
        ``"UNKNOWN"`` (``exhausted`` once every grid is done)."""
        if self.found is None and not self.exhausted:
            if self.run is None and not self._next_grid():
                self.exhausted = True
            elif self.run.advance(until):  # proven on this grid, with errors
                self.run = None
        if self.found is None:
            return Decision("UNKNOWN")
        tree = self.found.with_counts(self.X, self.y, np.ones(len(self.y)))
        if tree.count_error() != 0:
            raise RuntimeError("internal error: the primal's tree misclassifies rows")
        return Decision("SAT", tree)
