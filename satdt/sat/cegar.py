"""The incremental counterexample-guided loop (Algorithm 3) and the searches built on it.

Minimum depth (DT_depth), minimum size (DT_size) and the depth/size Pareto front.

See ``encodings/incremental-loop.md``. One solver per depth, kept for the whole search at
that depth: the loop starts with no examples, solves, decodes the perfect tree of the model,
looks for training rows it misclassifies and adds their clauses (3)-(6) to the *same*
solver, until the tree is consistent (SAT) or the formula is unsatisfiable (no consistent
tree of that depth exists: UNSAT on a subset of the rows is UNSAT on all of them).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np
from pysat.formula import IDPool
from pysat.solvers import Solver

from ..errors import InfeasibleError
from ..greedy import greedy_tree, lookahead_tree, repair_bottom, root_candidates
from ..result import Recorder, SatCall, SearchResult
from ..tree import Tree
from .counter import DEFAULT_COUNTER, labelled_leaf_vars, leaf_counter
from .perfect import (
    PerfectTreeVars,
    class_vars,
    decode,
    feature_vars,
    leaf_clauses,
    one_feature_clauses,
    path_vars,
    perfect_form,
    perfect_leaf_of,
    routing_clauses,
    some_feature_clauses,
)

# Solvers that accept clauses between calls and can be stopped at a deadline.
SOLVERS = ("cadical195", "glucose4", "glucose3", "minisat22", "maplechrono")
DEFAULT_SOLVER = "glucose4"
# "first": add the first misclassified row; "per_leaf": one misclassified row per leaf the
# tree sends misclassified rows to; "all": every misclassified row; an integer k: the first k
# of the "per_leaf" rows.
COUNTEREXAMPLE_POLICIES = ("first", "per_leaf", "all")
DEFAULT_COUNTEREXAMPLES = "per_leaf"
DEFAULT_AT_MOST_ONE = "none"
FEATURE_MODES = ("lazy", "all")
DEFAULT_FEATURES = "lazy"

# Largest m^2 * words * classes for which SAT models are repaired (best_depth_two's work per round).
_REPAIR_WORK = 2 * 10**6
# Largest work (about 2^(k-3) m^3 words classes) for a lookahead hint at depth k.
_LOOKAHEAD_WORK = 10**7
# From this depth on, the loop first tries the best-looking root features, one at a time, under
# assumption (measured on car and balance-scale: deep final depths are where the solver is slow
# and a right root splits the search in two; below, refuting wrong roots costs more than it saves).
_GUIDED_DEPTH = 7
_GUIDED_ROOTS = 3
# How many clauses to hand to the solver between two looks at the clock.
_CHUNK = 20000


class _TimeUp(Exception):
    """The deadline passed while the formula was being built."""


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
        """Keep the first of every group of identical rows (they add nothing to a SAT formula)."""
        B = np.ascontiguousarray(B, dtype=np.uint8)
        y = np.asarray(y, dtype=np.int64)
        keyed = np.column_stack([B, y]) if B.size else y[:, None]
        _, first = np.unique(keyed, axis=0, return_index=True)
        first = np.sort(first)
        return cls(np.ascontiguousarray(B[first]), y[first], n_classes, first, np.asarray(labels))


def solve_until(
    solver: Solver, name: str, assumptions: list[int], deadline: float | None
) -> bool | None:
    """Solve under ``assumptions``; ``None`` when ``deadline`` (a perf_counter value) passes first.

    Ctrl-C inside the solver (which PySAT reports as its own error) becomes KeyboardInterrupt,
    so that callers can return the best tree known.
    """
    try:
        return _solve_until(solver, name, assumptions, deadline)
    except Exception as exc:
        if "keyboard interrupt" in str(exc).lower():
            raise KeyboardInterrupt from None
        raise


def _solve_until(
    solver: Solver, name: str, assumptions: list[int], deadline: float | None
) -> bool | None:
    """See :func:`solve_until`.

    CaDiCaL cannot be interrupted from another thread, so it runs on conflict budgets sized
    to about a tenth of a second between looks at the clock; the other solvers are
    interrupted by a timer.
    """
    if deadline is None:
        return solver.solve(assumptions=assumptions)
    if time.perf_counter() >= deadline:
        return None
    if name.startswith("cadical"):
        budget = 2000
        while True:
            started = time.perf_counter()
            solver.conf_budget(budget)
            status = solver.solve_limited(assumptions=assumptions)
            if status is not None:
                return status
            now = time.perf_counter()
            if now >= deadline:
                return None
            spent = max(now - started, 1e-4)
            budget = int(min(max(budget * 0.1 / spent, 500), 10**6))
    timer = threading.Timer(max(deadline - time.perf_counter(), 0.0), solver.interrupt)
    timer.start()
    try:
        status = solver.solve_limited(assumptions=assumptions, expect_interrupt=True)
    finally:
        timer.cancel()
        solver.clear_interrupt()
    return status


@dataclass
class LoopOutcome:
    """The end of one run of the loop: ``"SAT"`` with a consistent tree, ``"UNSAT"`` or ``"UNKNOWN"``."""

    status: str
    tree: Tree | None = None


class CounterexampleLoop:
    """Algorithm 3 at one depth, on one incremental solver.

    With ``features="lazy"`` (the default) the formula holds one feature per class of
    features that are identical, or complementary, on the examples encoded so far: features
    in a class are interchangeable in the formula (a tree testing one routes every encoded
    example as a tree testing another, children swapped for a complement), so one
    representative keeps the formula equisatisfiable. A new example splits classes; each
    new class gets its F variables and its clauses (3)-(4) for the encoded examples, and
    formula (1) is re-issued over all representatives under a fresh selector literal
    (the old one is switched off), so nothing is re-encoded. ``features="all"`` encodes every
    feature from the start, as the paper does.

    Parameters
    ----------
    problem
        The rows to classify.
    depth
        Depth of the perfect tree.
    solver
        PySAT solver name (one of :data:`SOLVERS`).
    at_most_one
        Encoding of formula (2), see :func:`satdt.sat.perfect.one_feature_clauses`
        (``"seqcounter"`` only with ``features="all"``).
    counterexamples
        Which misclassified rows to add per round (see :data:`COUNTEREXAMPLE_POLICIES`).
    features
        ``"lazy"`` or ``"all"``, see above.
    recorder
        Receives one :class:`~satdt.result.SatCall` per solver call.
    deadline
        ``time.perf_counter()`` value after which the loop stops with ``"UNKNOWN"``.
    """

    def __init__(
        self,
        problem: Problem,
        depth: int,
        *,
        solver: str = DEFAULT_SOLVER,
        at_most_one: str = DEFAULT_AT_MOST_ONE,
        counterexamples: str | int = DEFAULT_COUNTEREXAMPLES,
        features: str = DEFAULT_FEATURES,
        repair: bool = True,
        recorder: Recorder,
        deadline: float | None = None,
    ) -> None:
        if solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
        if counterexamples not in COUNTEREXAMPLE_POLICIES and not (
            isinstance(counterexamples, int) and counterexamples >= 1
        ):
            raise ValueError(
                f"counterexamples must be one of {COUNTEREXAMPLE_POLICIES} or a positive integer, "
                f"got {counterexamples!r}"
            )
        if features not in FEATURE_MODES:
            raise ValueError(f"features must be one of {FEATURE_MODES}, got {features!r}")
        if features == "lazy" and at_most_one != "none":
            raise ValueError("formula (2) (at_most_one) is only encoded with features='all'")
        self.problem = problem
        self.depth = depth
        self.solver_name = solver
        self.counterexamples = counterexamples
        self.at_most_one = at_most_one
        self.lazy = features == "lazy"
        self.repair = repair
        self.recorder = recorder
        self.deadline = deadline
        self.pool = IDPool()
        m = problem.B.shape[1]
        self.solver = Solver(name=solver)
        self.n_clauses = 0
        self.included: list[int] = []
        self._included_set: set[int] = set()
        self.rounds = 0
        # slot = a feature of the formula; every feature belongs to one slot, with an orientation
        if self.lazy:
            self.slot_of = np.zeros(m, dtype=np.int64)
            self.slot_feature = (
                np.array([(m - 1) // 2], dtype=np.int64) if m else np.zeros(0, np.int64)
            )
        else:
            self.slot_of = np.arange(m, dtype=np.int64)
            self.slot_feature = np.arange(m, dtype=np.int64)
        self.flip = np.zeros(m, dtype=np.uint8)
        self.vars: PerfectTreeVars = PerfectTreeVars(
            self.pool,
            depth,
            m,
            problem.n_classes,
            feature_vars(self.pool, depth, self._slot_keys(range(len(self.slot_feature)))),
            class_vars(self.pool, depth, problem.n_classes),
        )
        self._selector = 0
        self.counter = None
        self._add(self._some_feature_clauses() + one_feature_clauses(self.vars, at_most_one))

    def _repair(self, node_feature: np.ndarray) -> Tree | None:
        """Re-grow the last levels of a perfect tree on all rows (see :func:`repair_bottom`).

        Three levels when cheap enough, else two, else (many features) no repair.
        """
        p = self.problem
        m = p.B.shape[1]
        work = m * m * (len(p.y) // 64 + 1) * p.n_classes
        if not self.repair or work > _REPAIR_WORK:
            return None
        levels = 3 if m * work <= _REPAIR_WORK else 2
        return repair_bottom(node_feature, self.depth, p.B, p.y, p.n_classes, levels)

    def _slot_keys(self, slots: Iterable[int]) -> list[Hashable]:
        """Pool keys of slots' F variables: the feature itself, or ("class", s) when lazy."""
        if self.lazy:
            return [("class", int(s)) for s in slots]
        return [int(self.slot_feature[s]) for s in slots]

    def close(self) -> None:
        self.solver.delete()

    def __enter__(self) -> CounterexampleLoop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _add(self, clauses: list[list[int]]) -> None:
        for start in range(0, len(clauses), _CHUNK):
            if self.deadline is not None and time.perf_counter() >= self.deadline:
                raise _TimeUp
            self.solver.append_formula(clauses[start : start + _CHUNK])
        self.n_clauses += len(clauses)

    def _some_feature_clauses(self) -> list[list[int]]:
        """Formula (1) over the current slots; under a fresh selector when slots may be added.

        The clauses of the previous generation are switched off by a unit clause on their
        selector: they are implied by the new ones, which list more features.
        """
        clauses = some_feature_clauses(self.vars)
        if not self.lazy:
            return clauses
        retired = [[self._selector]] if self._selector else []
        self._selector = self.pool.id(("S", len(self.slot_feature)))
        return [*retired, *([*clause, self._selector] for clause in clauses)]

    def _split_slots(self, new_rows: list[int]) -> list[int]:
        """Split the feature classes by the new rows' values; return the slots created."""
        B = self.problem.B
        if not self.included:  # no encoded row yet: orient every feature like the first new row
            self.flip = B[new_rows[0]].copy()
        values = B[new_rows].T ^ self.flip[:, None]  # (m, new) values relative to each orientation
        keys = np.column_stack([self.slot_of, values])
        _, group = np.unique(keys, axis=0, return_inverse=True)
        group = group.ravel()
        n_old = len(self.slot_feature)
        # the group of each old representative keeps its slot
        slot_of_group = np.full(group.max() + 1, -1, dtype=np.int64)
        slot_of_group[group[self.slot_feature]] = np.arange(n_old)
        created: list[int] = []
        new_features: list[int] = []
        for g in np.flatnonzero(slot_of_group < 0):
            slot_of_group[g] = n_old + len(created)
            created.append(int(slot_of_group[g]))
            new_features.append(-1)
        self.slot_of = slot_of_group[group]
        # representative: the middle feature of the class among those oriented like the old one
        features = np.array(list(self.slot_feature) + new_features, dtype=np.int64)
        order = np.argsort(self.slot_of, kind="stable")
        bounds = np.searchsorted(self.slot_of[order], np.arange(len(features) + 1))
        for slot in range(len(features)):
            members = order[bounds[slot] : bounds[slot + 1]]
            if features[slot] >= 0:
                members = members[self.flip[members] == self.flip[features[slot]]]
            features[slot] = members[(len(members) - 1) // 2]
        self.slot_feature = features
        return created

    def add_examples(self, rows: list[int] | np.ndarray) -> bool:
        """Add the clauses (3)-(6) of problem rows ``rows``; False if the deadline passed."""
        p = self.problem
        new_rows = [
            int(i) for i in dict.fromkeys(int(i) for i in rows) if int(i) not in self._included_set
        ]
        if not new_rows:
            return True
        try:
            created = self._split_slots(new_rows) if self.lazy else []
            if created:
                F_new = feature_vars(self.pool, self.depth, self._slot_keys(created))
                self.vars.F = np.concatenate([self.vars.F, F_new], axis=1)
                rows_b = p.B[:, self.slot_feature[created]]
                for i in self.included:
                    self._add(self._routing_clauses(F_new, i, rows_b[i]))
                self._add(self._some_feature_clauses())
            slot_rows = p.B[:, self.slot_feature]
            for i in new_rows:
                self._add(self._example_clauses(i, slot_rows[i]))
                self.included.append(i)
                self._included_set.add(i)
        except _TimeUp:
            return False
        return True

    def _routing_clauses(self, F: np.ndarray, i: int, values: np.ndarray) -> list[list[int]]:
        """Formulas (3)-(4) of row i for the features whose variables are the columns of F."""
        return routing_clauses(F, path_vars(self.pool, i, self.depth), values)

    def _example_clauses(self, i: int, values: np.ndarray) -> list[list[int]]:
        """Formulas (3)-(6) of row i over the current slots."""
        X = path_vars(self.pool, i, self.depth)
        return routing_clauses(self.vars.F, X, values) + leaf_clauses(
            self.vars, X, int(self.problem.y[i])
        )

    def try_tree(self, tree: Tree, max_leaves: int | None = None) -> LoopOutcome | None:
        """Start from a heuristic tree of depth <= this one: settle the depth if it can be made consistent.

        The tree's last two or three levels are re-grown optimally (:func:`satdt.greedy.repair_bottom`);
        if that classifies every row (within ``max_leaves`` leaves), it is the answer. Otherwise
        the tree becomes the solver's phase hint (:meth:`suggest`).
        """
        if self.repair:
            node_feature, _ = perfect_form(tree, self.depth)
            repaired = self._repair(node_feature)
            within = max_leaves is None or (
                repaired is not None and repaired.simplify(self.problem.B).n_leaves <= max_leaves
            )
            if repaired is not None and within:
                return LoopOutcome("SAT", repaired)
        self.suggest(tree)
        return None

    def top_assumptions(self, tree: Tree, levels: int) -> list[int]:
        """Literals fixing the features of the top ``levels`` levels to those of ``tree``."""
        node_feature, _ = perfect_form(tree, self.depth)
        nodes = np.arange(2 ** min(levels, self.depth) - 1)
        return self.vars.F[nodes, self.slot_of[node_feature[nodes]]].tolist()

    def suggest(self, tree: Tree) -> None:
        """Phase hints: let the solver try ``tree`` (over binary features, any depth <= this one) first.

        Only the search order changes, never the formula; the path variables of the encoded
        rows follow the tree too.
        """
        node_feature, leaf_class = perfect_form(tree, self.depth)
        rows = self.included
        literals = self.vars.F[np.arange(self.vars.n_internal), self.slot_of[node_feature]].tolist()
        literals += self.vars.C[np.arange(self.vars.n_leaves), leaf_class].tolist()
        if rows:
            leaves = perfect_leaf_of(node_feature, self.depth, self.problem.B[rows])
            bits = (leaves[:, None] >> np.arange(self.depth - 1, -1, -1)[None, :]) & 1
            X = np.array([path_vars(self.pool, i, self.depth) for i in rows])
            literals += np.where(bits == 1, X, -X).ravel().tolist()
        self.solver.set_phases(literals)

    def assumptions(self) -> list[int]:
        """The literals every solve assumes (the live generation of formula (1))."""
        return [-self._selector] if self._selector else []

    def add_leaf_counter(self, max_bound: int, kind: str = DEFAULT_COUNTER) -> None:
        """Formulas (7)-(10): count the labelled leaves, for bounds up to ``max_bound``.

        Generated once into the live solver; :meth:`run` then takes ``max_leaves`` and imposes
        it by assumption (see :mod:`satdt.sat.counter`).
        """
        U, clauses = labelled_leaf_vars(self.pool, self.vars.C)
        self.counter = leaf_counter(kind, self.pool, U, max_bound)
        try:
            self._add(clauses + self.counter.clauses)
        except _TimeUp:
            self.counter = None
            raise

    def _decode(self, model: list[int], strict: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The perfect tree of a model: ``(node_feature, leaf_class, leaf of every row)``.

        A leaf no encoded example reaches is free in the model. Without a leaf bound it gets
        the majority class of the training rows that reach it (fewer needless
        counterexamples); under a bound (``strict``) a leaf without a class stays without one
        (-1), so the rows reaching it are counterexamples and the tree keeps within the bound.
        """
        p, k = self.problem, self.depth
        slot, leaf_class = decode(self.vars, model)
        node_feature = self.slot_feature[slot]
        leaf = perfect_leaf_of(node_feature, k, p.B)
        reached_by_encoded = np.zeros(2**k, dtype=bool)
        reached_by_encoded[leaf[self.included]] = True
        if strict:
            return (
                node_feature,
                np.where(reached_by_encoded | (leaf_class >= 0), leaf_class, -1),
                leaf,
            )
        counts = np.zeros((2**k, p.n_classes))
        np.add.at(counts, (leaf, p.y), 1.0)
        default = int(np.argmax(np.bincount(p.y, minlength=p.n_classes)))
        majority = np.where(counts.sum(axis=1) > 0, np.argmax(counts, axis=1), default)
        return (
            node_feature,
            np.where(reached_by_encoded & (leaf_class >= 0), leaf_class, majority),
            leaf,
        )

    def _tree(self, node_feature: np.ndarray, leaf_class: np.ndarray) -> Tree:
        k = self.depth

        def build(q: int, level: int):
            if level == k:
                return max(int(leaf_class[q - 2**k]), 0)  # a classless leaf is reached by no row
            return (
                int(node_feature[q - 1]),
                0.5,
                build(2 * q, level + 1),
                build(2 * q + 1, level + 1),
            )

        return Tree.from_nested(build(1, 0), classes=np.arange(self.problem.n_classes))

    def _pick_counterexamples(self, wrong: np.ndarray, leaf: np.ndarray) -> list[int]:
        if self.counterexamples == "first":
            return [int(wrong[0])]
        if self.counterexamples == "all":
            return [int(i) for i in wrong]
        _, first_per_leaf = np.unique(leaf[wrong], return_index=True)
        picked = wrong[np.sort(first_per_leaf)]
        if isinstance(self.counterexamples, int):
            picked = picked[: self.counterexamples]
        return [int(i) for i in picked]

    def run(
        self, max_leaves: int | None = None, assumptions: list[int] | None = None
    ) -> LoopOutcome:
        """Solve, check, add counterexamples, repeat: until consistent, UNSAT or out of time.

        ``max_leaves`` bounds the labelled leaves (needs :meth:`add_leaf_counter`). Without a
        bound, a model whose tree misclassifies rows is first repaired: its last levels are
        re-grown optimally on all rows (:func:`satdt.greedy.repair_bottom`); when that makes it
        consistent, the depth is settled without more SAT calls.
        """
        bound = [] if max_leaves is None else self.counter.at_most(max_leaves)
        bound += assumptions or []
        p = self.problem
        while True:
            self.rounds += 1
            started = time.perf_counter()
            status = solve_until(
                self.solver, self.solver_name, self.assumptions() + bound, self.deadline
            )
            spent = time.perf_counter() - started
            call = dict(
                depth=self.depth,
                round=self.rounds,
                n_examples=len(self.included),
                n_vars=max(self.pool.top, self.solver.nof_vars()),
                n_clauses=self.n_clauses,
                time=spent,
                max_leaves=max_leaves,
            )
            if status is None or status is False:
                word = "UNKNOWN" if status is None else "UNSAT"
                self.recorder.sat_call(SatCall(status=word, **call))
                return LoopOutcome(word)
            node_feature, leaf_class, leaf = self._decode(
                self.solver.get_model(), max_leaves is not None
            )
            wrong = np.flatnonzero(leaf_class[leaf] != p.y)
            repaired = None
            if len(wrong) and self.repair and max_leaves is None:
                repaired = self._repair(node_feature)
            if len(wrong) == 0 or repaired is not None:
                self.recorder.sat_call(SatCall(status="SAT", **call))
                tree = repaired if repaired is not None else self._tree(node_feature, leaf_class)
                return LoopOutcome("SAT", tree)
            picked = self._pick_counterexamples(wrong, leaf)
            added = tuple((int(p.rows[i]), p.labels[p.y[i]].item()) for i in picked)
            self.recorder.sat_call(SatCall(status="SAT", counterexamples=added, **call))
            if not self.add_examples(picked):
                return LoopOutcome("UNKNOWN")


def depth_lower_bound(n_classes_present: int) -> int:
    """A tree of depth k has at most 2^k leaves, and each class needs one."""
    return max(0, math.ceil(math.log2(max(n_classes_present, 1))))


class _Search:
    """The loops of one search, by depth, and every example they used (seeds for new loops)."""

    def __init__(
        self,
        problem: Problem,
        options: dict,
        deadline: float | None,
        recorder: Recorder,
        max_leaves: int | None = None,
    ) -> None:
        self.problem = problem
        self.max_leaves = max_leaves
        self.counter = options.pop("counter", DEFAULT_COUNTER)
        self.options = options
        self.deadline = deadline
        self.recorder = recorder
        self.loops: dict[int, CounterexampleLoop] = {}
        self.examples: dict[int, None] = {}  # insertion-ordered set
        recorder.stats.update(rows=len(problem.y), binary_features=problem.B.shape[1], sat_calls=0)

    def __enter__(self) -> _Search:
        return self

    def __exit__(self, *exc: object) -> None:
        for k in list(self.loops):
            self.close(k)
        stats = self.recorder.stats
        stats["examples_used"] = len(self.examples)
        stats["solve_time"] = sum(call.time for call in self.recorder.trace)

    def close(self, k: int) -> None:
        loop = self.loops.pop(k)
        self.examples.update(dict.fromkeys(loop.included))
        self.recorder.stats["sat_calls"] += loop.rounds
        loop.close()

    def loop_at(self, k: int) -> CounterexampleLoop | None:
        """The live loop at depth k, created and seeded with every example used so far; None on time-out."""
        if k not in self.loops:
            loop = CounterexampleLoop(
                self.problem, k, recorder=self.recorder, deadline=self.deadline, **self.options
            )
            self.loops[k] = loop
            if not loop.add_examples(list(self.examples)):
                return None
            if self.max_leaves is not None and self.max_leaves < 2**k:
                try:
                    loop.add_leaf_counter(self.max_leaves, self.counter)
                except _TimeUp:
                    return None
        return self.loops[k]

    def bound(self, k: int) -> int | None:
        """The leaf bound the loop at depth k runs under (None: no node cap, or a cap it cannot reach)."""
        loop = self.loops.get(k)
        return self.max_leaves if loop is not None and loop.counter is not None else None

    def settle(self, k: int) -> LoopOutcome:
        """Is there a consistent tree of depth k? Tries a heuristic tree (repaired) before the solver.

        The heuristic is the lookahead tree when there are few features, else the greedy
        tree; when it cannot be made consistent it becomes the solver's phase hint.
        """
        loop = self.loop_at(k)
        if loop is None:
            return LoopOutcome("UNKNOWN")
        p = self.problem
        m = p.B.shape[1]
        lookahead_work = 2 ** max(k - 3, 0) * m**3 * (len(p.y) // 64 + 1) * p.n_classes
        if k > 3 and lookahead_work <= _LOOKAHEAD_WORK:
            hint = lookahead_tree(p.B, p.y, p.n_classes, k)
        else:
            hint = greedy_tree(p.B, p.y, p.n_classes, max_depth=k)
        outcome = loop.try_tree(hint, self.max_leaves)
        if outcome is not None:
            self.recorder.stats.setdefault("settled_without_sat_call", []).append(k)
            return outcome
        if k >= _GUIDED_DEPTH and hint.depth > 0:
            # guesses: the best-looking root features; SAT under one is an answer, UNSAT only
            # refutes the guess (its counterexamples stay useful)
            for root in root_candidates(p.B, p.y, p.n_classes, _GUIDED_ROOTS):
                guess = [int(loop.vars.F[0, loop.slot_of[root]])]
                outcome = loop.run(max_leaves=self.bound(k), assumptions=guess)
                if outcome.status != "UNSAT":
                    self.examples.update(dict.fromkeys(loop.included))
                    return outcome
        outcome = loop.run(max_leaves=self.bound(k))
        self.examples.update(dict.fromkeys(loop.included))
        return outcome

    def depth_search(
        self, lower: int, upper: int, max_depth: int | None
    ) -> tuple[int | None, Tree | None, bool]:
        """Depths upwards from ``lower`` while below ``upper`` (a depth already achieved).

        Returns ``(depth, tree, timed_out)``: the first SAT depth and its simplified tree
        (None when no depth below ``upper`` and within ``max_depth`` is SAT). The loop at the SAT
        depth stays open; ``recorder.lower_bound`` holds the last UNSAT depth + 1.
        """
        k = lower
        while k < upper and (max_depth is None or k <= max_depth):
            outcome = self.settle(k)
            if outcome.status == "UNKNOWN":
                return None, None, True
            if outcome.status == "UNSAT":
                self.close(k)
                k += 1
                self.recorder.lower_bound = k
                continue
            return k, outcome.tree.simplify(self.problem.B), False
        return None, None, False

    def minimum_depth(
        self, greedy: Tree, max_depth: int | None
    ) -> tuple[int | None, Tree | None, bool]:
        """:meth:`depth_search` from the sound lower bound up to the greedy tree's depth.

        When no shallower depth is SAT, the greedy tree itself has the minimum depth. Under a
        node cap the greedy tree may be too large: then the search goes on up to depth
        ``max_leaves - 1``, the deepest a tree with that many leaves can be.
        """
        present = int(np.unique(self.problem.y).size)
        admissible = self.admits(greedy)
        upper = greedy.depth if admissible else self.max_leaves
        depth, tree, timed_out = self.depth_search(depth_lower_bound(present), upper, max_depth)
        if (
            depth is None
            and not timed_out
            and admissible
            and (max_depth is None or greedy.depth <= max_depth)
        ):
            return greedy.depth, greedy, False
        return depth, tree, timed_out

    def admits(self, tree: Tree) -> bool:
        """Whether a tree keeps within the node cap."""
        return self.max_leaves is None or tree.n_leaves <= self.max_leaves


def _infeasible(
    max_depth: int | None, max_leaves: int | None, lower_bound: float, timed_out: bool
) -> InfeasibleError:
    limits = [f"depth at most {max_depth}"] if max_depth is not None else []
    if max_leaves is not None:
        limits.append(f"at most {2 * max_leaves - 1} nodes")
    wanted = "consistent tree of " + " and ".join(limits) if limits else "consistent tree"
    if timed_out:
        return InfeasibleError(
            f"no {wanted} was found before the time limit (no consistent tree has depth below "
            f"{lower_bound:g}); raise the time limit"
        )
    if max_leaves is not None:
        return InfeasibleError(f"no {wanted} exists (proven); relax --max-nodes or --max-depth")
    return InfeasibleError(
        f"no {wanted} exists: every consistent tree has depth at least {lower_bound:g} (proven); "
        "raise --max-depth"
    )


def _leaf_cap(max_nodes: int | None) -> int | None:
    """A tree with L leaves has 2L - 1 nodes: the most leaves within ``max_nodes`` nodes."""
    return None if max_nodes is None else max(0, (max_nodes + 1) // 2)


def minimum_depth(
    problem: Problem,
    *,
    max_depth: int | None = None,
    max_nodes: int | None = None,
    deadline: float | None = None,
    recorder: Recorder,
    **options: object,
) -> SearchResult:
    """The minimum-depth tree consistent with every row of ``problem`` (DT_depth).

    A greedy pure tree gives the first incumbent and an upper bound; depths are then tried
    upwards from a sound lower bound, each with its own incremental solver, seeded with the
    examples the previous depths needed. The first SAT depth is the minimum. On time-out the
    best tree known is returned with ``proven_optimal=False`` and ``lower_bound`` = last
    UNSAT depth + 1. ``max_nodes`` caps the size (a leaf counter under assumptions in every
    loop); ``options`` are those of :class:`CounterexampleLoop`.

    Raises
    ------
    InfeasibleError
        When no consistent tree within ``max_depth`` and ``max_nodes`` exists (proven), or none
        was found before the deadline.
    """
    B, y = problem.B, problem.y
    max_leaves = _leaf_cap(max_nodes)
    recorder.lower_bound = depth_lower_bound(int(np.unique(y).size))
    greedy = greedy_tree(B, y, problem.n_classes).simplify(B)
    with _Search(problem, options, deadline, recorder, max_leaves) as search:
        if (max_depth is None or greedy.depth <= max_depth) and search.admits(greedy):
            recorder.improve(greedy, greedy.depth)
        depth, tree, timed_out = search.minimum_depth(greedy, max_depth)
    if tree is not None and (recorder.best is None or depth < recorder.best.value):
        recorder.improve(tree, depth)
    if recorder.best is None:
        raise _infeasible(max_depth, max_leaves, recorder.lower_bound, timed_out)
    if not timed_out:
        recorder.lower_bound = recorder.best.value
    return recorder.snapshot(proven_optimal=recorder.lower_bound >= recorder.best.value)


SIZE_STRATEGIES = ("descending", "dichotomic", "galloping")
DEFAULT_SIZE_STRATEGY = "descending"


def _minimise_leaves(
    search: _Search, depth: int, upper: int, lower: int, counter: str, strategy: str, on_tree
) -> tuple[int, bool]:
    """The fewest leaves of a consistent tree of depth <= ``depth``; ``upper`` leaves are achieved.

    One leaf counter sized for ``upper - 1`` goes into the live loop at this depth; every
    bound is an assumption on it. "descending" asks for one leaf fewer than the best tree so
    far (each SAT answer's simplified tree may jump further down); "dichotomic" asks for the
    middle of the open interval (the paper's search); "galloping" asks for 1, 2, 4, ... leaves
    fewer after each SAT answer and falls back to one fewer after an UNSAT one. Counterexamples found under any bound
    stay in the solver: they hold for every bound. Returns ``(lower bound, proven)``; every
    smaller tree found goes to ``on_tree``.
    """
    if upper <= lower:
        return upper, True
    loop = search.loop_at(depth)
    if loop is None:
        return lower, False
    if loop.counter is None:
        try:
            loop.add_leaf_counter(upper - 1, counter)
        except _TimeUp:
            return lower, False
    step = 1
    while lower < upper:
        if strategy == "dichotomic":
            target = (lower + upper - 1) // 2
        elif strategy == "galloping":
            target = max(lower, upper - step)
        else:
            target = upper - 1
        outcome = loop.run(max_leaves=target)
        search.examples.update(dict.fromkeys(loop.included))
        if outcome.status == "UNKNOWN":
            return lower, False
        if outcome.status == "UNSAT":
            lower = target + 1
            step = 1
            continue
        tree = outcome.tree.simplify(search.problem.B)
        upper = tree.n_leaves
        step *= 2
        on_tree(tree)
    return lower, True


def minimum_size(
    problem: Problem,
    *,
    max_depth: int | None = None,
    max_nodes: int | None = None,
    counter: str = DEFAULT_COUNTER,
    strategy: str = DEFAULT_SIZE_STRATEGY,
    deadline: float | None = None,
    recorder: Recorder,
    **options: object,
) -> SearchResult:
    """The consistent tree with the fewest nodes (DT_size), as ``2 L - 1`` for L leaves.

    Without ``max_depth``: the fewest nodes among the trees of minimum depth (the paper's
    DT_size). With ``max_depth = K``: the fewest nodes among all trees of depth <= K, which by
    Theorem 2 is the fewest labelled leaves of a perfect tree of depth K. ``max_nodes`` is a cap
    (infeasible beyond it); ``options`` are those of :class:`CounterexampleLoop`.
    """
    if strategy not in SIZE_STRATEGIES:
        raise ValueError(f"strategy must be one of {SIZE_STRATEGIES}, got {strategy!r}")
    B, y = problem.B, problem.y
    n_present = int(np.unique(y).size)
    best: list[Tree] = []  # the smallest admissible tree over binary features so far

    max_leaves = _leaf_cap(max_nodes)

    def on_tree(tree: Tree) -> None:
        admissible = (max_depth is None or tree.depth <= max_depth) and (
            max_leaves is None or tree.n_leaves <= max_leaves
        )
        if admissible and (not best or tree.n_leaves < best[-1].n_leaves):
            best.append(tree)
            recorder.improve(tree, tree.n_nodes)

    greedy = greedy_tree(B, y, problem.n_classes).simplify(B)
    with _Search(problem, dict(options, counter=counter), deadline, recorder, max_leaves) as search:
        depth, tree, timed_out = search.minimum_depth(greedy, max_depth)
        depth_lower = recorder.lower_bound
        if max_depth is not None or depth is None:
            on_tree(greedy)  # any depth <= max_depth competes (or nothing better is known)
        if tree is not None:
            on_tree(tree)
        if depth is None:
            recorder.lower_bound = 2 * max(n_present, depth_lower + 1) - 1
            if recorder.best is None:
                raise _infeasible(max_depth, max_leaves, depth_lower, timed_out)
            return recorder.snapshot(proven_optimal=False)
        target = depth if max_depth is None else max_depth
        if target > depth:  # the perfect trees of depth K hold every tree of depth <= K
            outcome = search.settle(target)
            if outcome.status == "SAT":
                on_tree(outcome.tree.simplify(B))
        lower = max(n_present, depth + 1)
        lower, proven = _minimise_leaves(
            search, target, best[-1].n_leaves, lower, counter, strategy, on_tree
        )
    recorder.lower_bound = 2 * lower - 1
    recorder.stats["depth"] = recorder.best.tree.depth
    return recorder.snapshot(proven_optimal=proven)


@dataclass(frozen=True)
class ParetoPoint:
    """The smallest consistent tree of depth at most ``depth`` (over binary features)."""

    depth: int
    n_nodes: int
    tree: Tree
    proven: bool


def pareto_front(
    problem: Problem,
    *,
    max_depth: int | None = None,
    counter: str = DEFAULT_COUNTER,
    strategy: str = DEFAULT_SIZE_STRATEGY,
    deadline: float | None = None,
    recorder: Recorder,
    **options: object,
) -> tuple[list[ParetoPoint], str]:
    """The depth/size trade-off: for each depth from the minimum to ``max_depth`` (default: the
    minimum + 2), the fewest nodes of a consistent tree of at most that depth.

    Stops early once the leaf count L at depth d satisfies L <= d + 2: a deeper tree has a path
    of d + 1 tests, hence at least d + 2 leaves, so it cannot be smaller. Returns the points
    and the rule that ended the search.
    """
    B, y = problem.B, problem.y
    n_present = int(np.unique(y).size)
    greedy = greedy_tree(B, y, problem.n_classes).simplify(B)
    points: list[ParetoPoint] = []
    with _Search(problem, options, deadline, recorder) as search:
        depth, tree, timed_out = search.minimum_depth(greedy, max_depth)
        if depth is None:
            raise _infeasible(max_depth, None, recorder.lower_bound, timed_out)
        last = depth + 2 if max_depth is None else max_depth
        best = [tree]
        recorder.improve(tree, tree.n_nodes)
        reason = f"reached the last depth asked for ({last})"
        for d in range(depth, last + 1):
            found: list[Tree] = []

            def on_tree(candidate: Tree, found: list[Tree] = found) -> None:
                found.append(candidate)
                recorder.improve(candidate, candidate.n_nodes)

            if d > depth:
                outcome = search.settle(d)
                if (
                    outcome.status == "SAT"
                    and outcome.tree.simplify(B).n_leaves < best[-1].n_leaves
                ):
                    on_tree(outcome.tree.simplify(B))
            upper = min([best[-1].n_leaves] + [t.n_leaves for t in found])
            _, proven = _minimise_leaves(
                search, d, upper, max(n_present, depth + 1), counter, strategy, on_tree
            )
            best.extend(found)
            smallest = min(best, key=lambda t: t.n_leaves)
            points.append(ParetoPoint(d, smallest.n_nodes, smallest, proven))
            if d in search.loops:
                search.close(d)
            if not proven:
                reason = "time limit: the last point is not proven"
                break
            if smallest.n_leaves <= d + 2:
                reason = (
                    f"stopped after depth {d}: its {smallest.n_leaves} leaves are at most depth + 2, "
                    f"and any deeper tree has at least {d + 2} leaves"
                )
                break
    return points, reason
