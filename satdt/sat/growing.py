"""Consistent trees of rows that keep arriving: the counterexample-guided loop over a growing problem.

Algorithm 3 of Avellaneda (AAAI 2020) asks a finite table where its tree is wrong. Here the
rows arrive while the search goes on: from a stream (``OptimalTreeClassifier.partial_fit``)
or from a teacher that answers "here is a row your tree gets wrong" (:mod:`satdt.sat.teaching`).
See ``docs/teaching/teachers.md``. The answers stay exact because rows only ever add
constraints:

- a tree of depth k (with L leaves) consistent with more rows is consistent with fewer, so the
  minimum depth (size) can only grow, and a minimum tree that classifies the new rows is still
  a minimum: no SAT call is needed;
- an UNSAT answer at depth k on some rows holds for every superset of them: a refuted depth
  stays refuted (its loop is closed), a refuted leaf bound stays refuted;
- the thresholds are those of every row seen, as a fit on them would have: ``x[c] > a`` for
  each value a seen in column c but the largest (printed as the midpoint between a and the next
  value seen). A new value b adds one threshold, which on the rows seen before it equals a
  threshold already there (or is constant on them), so every loop keeps its formula and takes
  the new feature into the class of features it equals (the lazy feature classes of
  :class:`~satdt.sat.loop.CounterexampleLoop`, :meth:`~satdt.sat.loop.CounterexampleLoop.grow`).
  A new category is a new 0/1 column, 0 on the rows before it; a new class gets its variables
  and the clauses every encoded row owes it.

:class:`GrowingRows` holds the distinct rows and their binary features; :class:`GrowingSearch`
keeps one loop (one incremental solver) per depth it tried, from one call to the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import DataError, TimeUp, no_consistent_tree
from ..models.tree import LEAF, Tree, depth_lower_bound
from ..prepare.binarize import readable_thresholds
from ..task.result import Recorder
from ..task.stats import GrowingStats
from .counter import DEFAULT_COUNTER
from .heuristics import greedy_tree
from .loop import DEFAULT_COUNTEREXAMPLES, CounterexampleLoop, LoopOutcome
from .problem import Problem
from .search import DEFAULT_SIZE_STRATEGY, SIZE_STRATEGIES
from .solving import DEFAULT_SOLVER


@dataclass(frozen=True)
class RowsView:
    """The rows and thresholds of :class:`GrowingRows` at one moment (arrays never changed later).

    ``X`` holds the distinct rows over the columns, ``y`` their class indices, ``labels`` the
    label of each class index; binary feature j is ``X[:, column[j]] > below[j]``, drawn as
    ``X[:, column[j]] <= threshold[j]`` in the trees given back.
    """

    X: np.ndarray
    y: np.ndarray
    labels: np.ndarray
    column: np.ndarray
    threshold: np.ndarray

    def column_tree(self, tree: Tree) -> Tree:
        """A tree over binary features as a tree over the columns, simplified on the rows."""
        return tree.map_features(self.column, self.threshold).simplify(self.X)

    def labelled(
        self, tree: Tree, names: Sequence[str] | None = None, indicator: Sequence[int] = ()
    ) -> Tree:
        """A tree over the columns with the labels in sorted order as its classes (the order of
        ``classes_``), the columns' names and the rows' class counts."""
        classes, rank = sorted_labels(self.labels)
        out = tree.copy()
        leaves = out.feature == LEAF
        out.value[leaves] = rank[out.value[leaves]]
        out.classes = classes
        out.counts = np.zeros((out.n_nodes, len(classes)))
        out.feature_names = list(names) if names is not None else None
        out.indicator = frozenset(int(i) for i in indicator)
        return out.with_counts(self.X, rank[self.y])


def sorted_labels(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The labels sorted (a fit's ``classes_``) and the rank of each class index among them."""
    classes = np.unique(labels)
    return classes, np.searchsorted(classes, labels).astype(np.int64)


class GrowingRows:
    """The distinct rows seen, over numeric columns, and their binary features ``x[c] > a``.

    Feature j is ``x[column[j]] > below[j]`` for a value ``below[j]`` seen in that column other
    than the largest; features are appended as values arrive and keep their index, so the
    binary matrix ``B`` only ever gains rows and columns, and a feature's value on a row never
    changes. Class indices are given in order of arrival (or of ``labels``).

    Parameters
    ----------
    n_columns
        The columns of the rows to come (more may be inserted, see :meth:`insert_columns`).
    labels
        The class labels known from the start (``classes=`` of ``partial_fit``, a teacher's
        ``classes``); others join as they arrive.
    domains
        Every value each column may take (a teacher's finite domains): every threshold exists
        from the start, and a row outside the domains is refused.
    """

    def __init__(
        self,
        n_columns: int,
        labels: Sequence[Any] = (),
        domains: Sequence[np.ndarray] | None = None,
    ) -> None:
        self.X = np.zeros((0, n_columns))
        self.y = np.zeros(0, dtype=np.int64)
        self.labels: list[Any] = list(labels)
        self._index = {label: k for k, label in enumerate(self.labels)}
        self.fixed = domains is not None
        self.values = [np.zeros(0) for _ in range(n_columns)]
        self.column = np.zeros(0, dtype=np.int64)
        self.below = np.zeros(0)
        self.threshold = np.zeros(0)
        self._above = np.zeros(0)  # the value seen next above each feature's
        self.B = np.zeros((0, 0), dtype=np.uint8)
        self.arrival = np.zeros(0, dtype=np.int64)  # each distinct row's place among all rows given
        self.given = 0  # rows given, repeated ones included
        self._seen: dict[bytes, int] = {}
        self._problem: Problem | None = None
        self._view: RowsView | None = None
        if domains is not None:
            if len(domains) != n_columns:
                raise DataError(f"{len(domains)} domains for {n_columns} columns: give one each")
            self._extend_values([np.unique(np.asarray(d, dtype=np.float64)) for d in domains])

    @property
    def n_rows(self) -> int:
        return len(self.y)

    @property
    def n_classes(self) -> int:
        return len(self.labels)

    @property
    def problem(self) -> Problem:
        """The rows as a :class:`~satdt.sat.problem.Problem` (one object until the rows grow)."""
        if self._problem is None:
            self._problem = Problem(
                self.B, self.y, self.n_classes, self.arrival, self._label_array()
            )
        return self._problem

    def view(self) -> RowsView:
        """The rows and thresholds as they are now (:class:`RowsView`)."""
        if self._view is None:
            self._view = RowsView(self.X, self.y, self._label_array(), self.column, self.threshold)
        return self._view

    def _label_array(self) -> np.ndarray:
        return np.asarray(self.labels) if self.labels else np.zeros(0, dtype=np.int64)

    def class_index(self, labels: Sequence[Any]) -> np.ndarray:
        """The class index of each label, new labels appended to the classes."""
        out = np.empty(len(labels), dtype=np.int64)
        for i, label in enumerate(labels):
            k = self._index.get(label)
            if k is None:
                k = self._index[label] = len(self.labels)
                self.labels.append(label)
                self._changed()
            out[i] = k
        return out

    def _changed(self) -> None:
        self._problem = None
        self._view = None

    def insert_columns(self, positions: Sequence[int]) -> np.ndarray:
        """Insert columns of zeros at ``positions`` (indices in the widened layout, ascending):
        a category seen for the first time is a new 0/1 column, 0 on every row before it.

        Returns the new index of every old column.
        """
        positions = np.asarray(positions, dtype=np.int64)
        width = self.X.shape[1] + len(positions)
        moved = np.delete(np.arange(width), positions)
        X = np.zeros((self.n_rows, width))
        X[:, moved] = self.X
        self.X = X
        values: list[np.ndarray] = [np.zeros(min(self.n_rows, 1)) for _ in range(width)]
        for old, new in enumerate(moved.tolist()):
            values[new] = self.values[old]
        self.values = values
        self.column = moved[self.column] if len(self.column) else self.column
        self._seen = {self.X[i].tobytes(): i for i in range(self.n_rows)}
        self._changed()
        return moved

    def add(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Add rows (over the columns) with their class indices; return the new distinct rows.

        A row already seen with the same class adds nothing; with another class it is a
        contradiction (no consistent tree exists): :class:`DataError`, naming both, and
        nothing is added.
        """
        X = np.asarray(X, dtype=np.float64).reshape(-1, self.X.shape[1]) + 0.0  # no -0.0
        y = np.asarray(y, dtype=np.int64)
        if self.fixed:
            self._check_domains(X)
        new: list[int] = []
        pending: dict[bytes, int] = {}
        for r in range(len(X)):
            key = X[r].tobytes()
            i = self._seen.get(key, pending.get(key))
            if i is None:
                pending[key] = self.n_rows + len(new)
                new.append(r)
            else:
                known = int(self.y[i]) if i < self.n_rows else int(y[new[i - self.n_rows]])
                if known != int(y[r]):
                    raise _contradiction(X[r], self.labels[y[r]], self.labels[known])
        self._seen.update(pending)
        start = self.given
        self.given += len(X)
        if not new:
            return np.zeros(0, dtype=np.int64)
        Xn, yn = X[new], y[new]
        if not self.fixed:
            self._extend_values([np.union1d(v, Xn[:, c]) for c, v in enumerate(self.values)])
        first = self.n_rows
        Bn = (Xn[:, self.column] > self.below).astype(np.uint8)
        self.B = np.ascontiguousarray(np.vstack([self.B, Bn]))
        self.X = np.vstack([self.X, Xn])
        self.y = np.concatenate([self.y, yn])
        self.arrival = np.concatenate([self.arrival, start + np.asarray(new, dtype=np.int64)])
        self._changed()
        return np.arange(first, self.n_rows)

    def _check_domains(self, X: np.ndarray) -> None:
        for c, values in enumerate(self.values):
            outside = ~np.isin(X[:, c], values)
            if outside.any():
                raise DataError(
                    f"column {c}: {X[outside, c][0]:g} is not in its domain "
                    f"{values.tolist()[:8]}{' ...' if len(values) > 8 else ''}; a teacher's rows "
                    "take the values of its domains"
                )

    def _extend_values(self, values: list[np.ndarray]) -> None:
        """Take every column's new sorted values: the features ``x > a`` they add (appended,
        with the rows' values), and the thresholds of the features whose next value changed."""
        known = len(self.column)
        columns, belows = [self.column], [self.below]
        for c, (old, now) in enumerate(zip(self.values, values, strict=True)):
            added = np.setdiff1d(now[:-1], old[:-1])
            columns.append(np.full(len(added), c, dtype=np.int64))
            belows.append(added)
        self.values = values
        column, below = np.concatenate(columns), np.concatenate(belows)
        above = np.empty(len(below))
        for c in np.unique(column).tolist():
            mine = column == c
            above[mine] = values[c][np.searchsorted(values[c], below[mine]) + 1]
        moved = np.ones(len(below), dtype=bool)
        moved[:known] = above[:known] != self._above
        threshold = np.concatenate([self.threshold, np.zeros(len(below) - known)])
        threshold[moved] = readable_thresholds(below[moved], above[moved])
        extra = (self.X[:, column[known:]] > below[known:]).astype(np.uint8)
        self.B = np.ascontiguousarray(np.hstack([self.B, extra]))
        self.column, self.below, self.threshold, self._above = column, below, threshold, above
        self._changed()


def _contradiction(row: np.ndarray, label: Any, before: Any) -> DataError:
    values = ", ".join(f"{v:g}" for v in row.tolist()[:12])
    return DataError(
        f"the row ({values}) is labelled {label!r}, but the same row came before labelled "
        f"{before!r}: no tree classifies both, so no consistent tree exists; drop one of "
        "them, or fit the error objective on all rows"
    )


class GrowingSearch:
    """The minimum-depth (or minimum-size) search over :class:`GrowingRows`, kept between calls.

    One :class:`~satdt.sat.loop.CounterexampleLoop` per depth tried, kept open (its solver and
    learnt clauses) until its depth is refuted; the proven bounds (the last refuted depth + 1,
    the last refuted leaf bound + 1) and the current tree carry over from one :meth:`solve` to
    the next, since more rows never lower them. DT_depth and DT_size of Avellaneda (AAAI 2020).

    Parameters
    ----------
    rows
        The rows (they grow between calls of :meth:`solve`).
    objective
        ``"depth"`` or ``"size"`` (the fewest nodes among the trees of minimum depth, or of
        depth at most ``max_depth``).
    max_depth
        A cap on the depth (:class:`~satdt.core.errors.InfeasibleError` beyond it).
    solver, counterexamples, n_jobs
        Those of :class:`~satdt.sat.loop.CounterexampleLoop`.
    leaf_counter, size_search
        Those of :func:`satdt.sat.search.minimum_size`.
    heuristics
        Start each depth a call tries from a greedy tree of the rows (:meth:`_start`). Off
        for a teacher: a tree that only fits the rows known costs a question as a SAT call's
        does, and the questions are what a teacher's answers cost.
    """

    def __init__(
        self,
        rows: GrowingRows,
        objective: str = "depth",
        max_depth: int | None = None,
        *,
        solver: str = DEFAULT_SOLVER,
        counterexamples: str | int = DEFAULT_COUNTEREXAMPLES,
        n_jobs: int = 1,
        leaf_counter: str = DEFAULT_COUNTER,
        size_search: str = DEFAULT_SIZE_STRATEGY,
        heuristics: bool = True,
    ) -> None:
        if objective not in ("depth", "size"):
            raise ValueError(f"objective must be 'depth' or 'size', got {objective!r}")
        if size_search not in SIZE_STRATEGIES:
            raise ValueError(f"size_search must be one of {SIZE_STRATEGIES}, got {size_search!r}")
        self.rows = rows
        self.objective = objective
        self.max_depth = max_depth
        self.options: dict[str, Any] = dict(
            solver=solver, counterexamples=counterexamples, n_jobs=n_jobs
        )
        self.leaf_counter = leaf_counter
        self.size_search = size_search
        self.heuristics = heuristics
        self.loops: dict[int, CounterexampleLoop] = {}
        self.examples: dict[int, None] = {}  # every row any loop encoded (seeds new loops)
        self.sat_calls = 0  # of closed loops; open loops count their own rounds
        self.depth_lower = 0  # no consistent tree of smaller depth (proven)
        self.leaf_lower = 1  # at self.leaf_depth: no consistent tree with fewer leaves (proven)
        self.leaf_depth: int | None = None
        self.tree: Tree | None = None  # over the columns, class indices, simplified on the rows
        self.proven = False
        self.checked = 0  # the rows the tree was checked on
        self._probe = False  # the last proven size broke: try one bound at the old size first
        self._source = -1  # the depth of the loop that found the current tree
        self.kept = False  # the last solve kept a proven tree: no SAT call
        self.settled: list[int] = []  # the depths a re-grown greedy tree settled
        self._recorder: Recorder | None = None
        self._deadline: float | None = None

    # ------------------------------------------------------------------ state
    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its solvers: the loops are rebuilt, seeded with every row they
        encoded, when next needed (the proven bounds are kept)."""
        state = dict(self.__dict__)
        state["sat_calls"] = self.total_sat_calls
        state["loops"] = {}
        state["_recorder"] = None
        return state

    def close(self) -> None:
        """Close every loop (their solvers)."""
        for k in list(self.loops):
            self._close(k)

    def _close(self, k: int) -> None:
        loop = self.loops.pop(k)
        self.examples.update(dict.fromkeys(loop.included))
        self.sat_calls += loop.rounds
        loop.close()

    @property
    def total_sat_calls(self) -> int:
        """SAT calls of every loop so far."""
        return self.sat_calls + sum(loop.rounds for loop in self.loops.values())

    @property
    def examples_used(self) -> int:
        """Rows encoded in any loop so far."""
        used = dict(self.examples)
        for loop in self.loops.values():
            used.update(dict.fromkeys(loop.included))
        return len(used)

    @property
    def value(self) -> int:
        """The objective's value of the current tree (depth, or nodes); after :meth:`solve`."""
        if self.tree is None:
            raise RuntimeError("no tree yet: call solve first")
        return self.tree.depth if self.objective == "depth" else self.tree.n_nodes

    @property
    def lower_bound(self) -> int:
        """The proven lower bound on the objective for the rows so far."""
        if self.proven:
            return self.value
        if self.objective == "depth":
            return self.depth_lower
        leaves = max(int(np.unique(self.rows.y).size), self.depth_lower + 1)
        target = self.depth_lower if self.max_depth is None else self.max_depth
        if self.leaf_depth == target:  # a leaf bound proven for the trees searched now
            leaves = max(leaves, self.leaf_lower)
        return 2 * leaves - 1

    def insert_columns(self, positions: Sequence[int]) -> None:
        """Insert columns of zeros into the rows (:meth:`GrowingRows.insert_columns`) and
        renumber the current tree's columns."""
        moved = self.rows.insert_columns(positions)
        if self.tree is not None:
            tree = self.tree.copy()
            internal = tree.feature != LEAF
            tree.feature[internal] = moved[tree.feature[internal]]
            self.tree = tree

    def stats(
        self, recorder: Recorder, new_rows: int, questions: int = 0, settled_before: int = 0
    ) -> GrowingStats:
        """The counters of one call (its SAT calls are ``recorder``'s); ``settled_before``:
        how many of :attr:`settled` came before the call."""
        rows = self.rows
        return GrowingStats(
            rows=rows.n_rows,
            binary_features=rows.B.shape[1],
            sat_calls=len(recorder.trace),
            examples_used=self.examples_used,
            solve_time=sum(call.time for call in recorder.trace),
            settled_without_sat_call=self.settled[settled_before:],
            new_rows=new_rows,
            tree_kept=self.kept,
            questions=questions,
            rows_seen=rows.given,
        )

    # ------------------------------------------------------------------ the search
    def solve(self, recorder: Recorder, deadline: float | None = None) -> bool:
        """The minimum tree of the rows so far, from where the last call left; True if proven.

        The current tree, when it classifies the rows that arrived since, stays (proven
        optimal if it was) and no SAT call is made; its thresholds move to the midpoints of
        the values seen now. Otherwise the loops go on from the proven bounds. On time-out
        the tree is the one at hand, else a greedy tree of the rows, not proven.

        Raises
        ------
        InfeasibleError
            When no consistent tree of depth at most ``max_depth`` exists (proven).
        """
        self._recorder, self._deadline = recorder, deadline
        rows = self.rows
        present = int(np.unique(rows.y).size)
        self.depth_lower = max(self.depth_lower, depth_lower_bound(present))
        self._check_tree()
        self.kept = self.tree is not None and self.proven
        if self.kept:
            return True
        if present <= 1:
            label = int(rows.y[0]) if rows.n_rows else 0
            self.tree = Tree.single_leaf(label, np.arange(max(rows.n_classes, 1)))
            self.proven = True
            return True
        try:
            depth = self._depth_phase()
            if depth is not None and self.objective == "size":
                self._size_phase(depth)
        except TimeUp:
            self.proven = False
        if self.tree is None:
            greedy = greedy_tree(rows.B, rows.y, rows.n_classes)
            self.tree = rows.view().column_tree(greedy)
            self.proven = False
        if self.max_depth is not None and self.tree.depth > self.max_depth:
            self.tree = None
            raise no_consistent_tree(self.max_depth, None, self.depth_lower, True)
        return self.proven

    def _check_tree(self) -> None:
        """Keep the current tree if it classifies the rows that arrived since it was checked;
        else the rows it gets wrong are its counterexamples, encoded in the loop that found it
        (chosen as the loops choose theirs, see ``counterexamples``)."""
        rows, tree = self.rows, self.tree
        fresh = np.arange(self.checked, rows.n_rows)
        self.checked = rows.n_rows
        if tree is None:
            return
        wrong = fresh[tree.predict_index(rows.X[fresh]) != rows.y[fresh]]
        if len(wrong) == 0:
            self.tree = self._rethreshold(tree)
            return
        if self.proven and self.objective == "size" and self.leaf_depth is not None:
            self.leaf_lower = max(self.leaf_lower, tree.n_leaves)  # the minimum only grows
            self._probe = True
        loop = self.loops.get(self._source)
        if loop is not None:
            if loop.problem is not rows.problem:
                loop.grow(rows.problem)
            loop.add_examples(self._pick(wrong, tree.apply(rows.X[wrong])))
        self.tree = None
        self.proven = False

    def _pick(self, wrong: np.ndarray, leaf: np.ndarray) -> list[int]:
        """The counterexamples among ``wrong`` by the loops' policy (one per leaf by default)."""
        policy = self.options["counterexamples"]
        if policy == "first":
            return wrong[:1].tolist()
        if policy == "all":
            return wrong.tolist()
        _, first = np.unique(leaf, return_index=True)
        picked = wrong[np.sort(first)]
        return (picked[:policy] if isinstance(policy, int) else picked).tolist()

    def _rethreshold(self, tree: Tree) -> Tree:
        """The same splits of the rows, at the midpoints of the values seen now."""
        out = tree.copy()
        view = self.rows.view()
        for node in np.flatnonzero(out.feature != LEAF).tolist():
            c, t = int(out.feature[node]), float(out.threshold[node])
            values = self.rows.values[c]
            below = values[np.searchsorted(values, t, side="right") - 1]
            j = np.flatnonzero((view.column == c) & (self.rows.below == below))
            out.threshold[node] = view.threshold[j[0]]
        return out

    def _loop(self, k: int) -> CounterexampleLoop:
        """The loop at depth k, on the rows as they are now; a new one seeded with every row
        encoded so far (TimeUp when the deadline passes while it is built)."""
        problem = self.rows.problem
        loop = self.loops.get(k)
        if loop is None:
            loop = CounterexampleLoop(
                problem,
                k,
                features="lazy",
                recorder=self._recorder,
                deadline=self._deadline,
                **self.options,
            )
            self.loops[k] = loop
            loop.add_examples(list(self.examples))  # what the deadline keeps out waits
        elif loop.problem is not problem:
            loop.grow(problem)
        loop.recorder, loop.deadline = self._recorder, self._deadline
        return loop

    def _run(self, k: int, max_leaves: int | None = None) -> LoopOutcome:
        loop = self._loop(k)
        outcome = loop.run(max_leaves=max_leaves)
        if outcome.status == "UNKNOWN":
            raise TimeUp
        return outcome

    def _depth_phase(self) -> int:
        """Depths upwards from the proven bound, below the depth of a tree at hand: the
        minimum depth (its tree in ``self.tree``)."""
        upper = None if self.tree is None else self.tree.depth
        k = self.depth_lower
        while upper is None or k < upper:
            if self.max_depth is not None and k > self.max_depth:
                raise no_consistent_tree(self.max_depth, None, k, False)
            outcome = self._start(k) or self._run(k)
            if outcome.status == "UNSAT":
                self._close(k)
                k = self.depth_lower = k + 1
                continue
            self.tree = self.rows.view().column_tree(outcome.tree)
            self._source = k
            break
        self.proven = self.objective == "depth"
        return k

    def _start(self, k: int) -> LoopOutcome | None:
        """The first try at depth k in a call, as :meth:`~satdt.sat.search.LoopSearch.settle`
        makes it: the greedy tree of the rows, its last levels re-grown on every row, settles
        the depth when it classifies them all (no SAT call); otherwise it is the solver's phase
        hint."""
        if not self.heuristics:
            return None
        rows = self.rows
        hint = greedy_tree(rows.B, rows.y, rows.n_classes, max_depth=k, deadline=self._deadline)
        outcome = self._loop(k).try_tree(hint)
        if outcome is not None:
            self.settled.append(k)
        return outcome

    def _size_phase(self, depth: int) -> None:
        """The fewest leaves at the target depth (the minimum, or ``max_depth``), between the
        proven bound and the tree at hand; the strategies of :func:`~satdt.sat.search.minimise_leaves`."""
        target = depth if self.max_depth is None else self.max_depth
        lowest = max(int(np.unique(self.rows.y).size), depth + 1)
        if self.leaf_depth != target:
            self.leaf_depth, self.leaf_lower, self._probe = target, lowest, False
        self.leaf_lower = max(self.leaf_lower, lowest)
        upper = self.tree.n_leaves
        step = 1
        while self.leaf_lower < upper:
            lower = self.leaf_lower
            if self._probe:
                bound = lower
            elif self.size_search == "dichotomic":
                bound = (lower + upper - 1) // 2
            elif self.size_search == "galloping":
                bound = max(lower, upper - step)
            else:
                bound = upper - 1
            self._probe = False
            loop = self._loop(target)
            if loop.counter is None or loop.counter.max_bound < bound:
                loop.add_leaf_counter(min(2**target - 1, 2 * upper), self.leaf_counter)
            outcome = self._run(target, bound)
            if outcome.status == "UNSAT":
                self.leaf_lower = bound + 1
                step = 1
                continue
            tree = self.rows.view().column_tree(outcome.tree)
            if tree.n_leaves < upper:
                self.tree, upper, self._source = tree, tree.n_leaves, target
            step *= 2
        self.proven = True
