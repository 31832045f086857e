"""The incremental counterexample-guided loop (Algorithm 3) and the minimum-depth search.

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
from ..greedy import greedy_tree, repair_bottom
from ..result import Recorder, SatCall, SearchResult
from ..tree import Tree
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
DEFAULT_SOLVER = "cadical195"
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
        n, m = problem.B.shape
        self.repair = repair and m * m * (n // 64 + 1) * problem.n_classes <= _REPAIR_WORK
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
        self._add(self._some_feature_clauses() + one_feature_clauses(self.vars, at_most_one))

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

    def try_tree(self, tree: Tree) -> LoopOutcome | None:
        """Start from a heuristic tree of depth <= this one: settle the depth if it can be made consistent.

        The tree's last two levels are re-grown optimally (:func:`satdt.greedy.repair_bottom`);
        if that classifies every row, it is the answer. Otherwise the tree becomes the
        solver's phase hint (:meth:`suggest`).
        """
        if self.repair:
            node_feature, _ = perfect_form(tree, self.depth)
            repaired = repair_bottom(
                node_feature, self.depth, self.problem.B, self.problem.y, self.problem.n_classes
            )
            if repaired is not None:
                return LoopOutcome("SAT", repaired)
        self.suggest(tree)
        return None

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

    def _decode_tree(self, model: list[int]) -> tuple[np.ndarray, Tree]:
        """The perfect tree of a model, leaves that no encoded example reaches labelled by majority.

        A leaf reached only by rows outside the formula is free in the model; giving it the
        majority class of the training rows that reach it avoids needless counterexamples.
        """
        p, k = self.problem, self.depth
        slot, leaf_class = decode(self.vars, model)
        node_feature = self.slot_feature[slot]
        leaf = perfect_leaf_of(node_feature, k, p.B)
        encoded = np.zeros(len(p.y), dtype=bool)
        encoded[self.included] = True
        counts = np.zeros((2**k, p.n_classes))
        np.add.at(counts, (leaf, p.y), 1.0)
        reached_by_encoded = np.zeros(2**k, dtype=bool)
        reached_by_encoded[leaf[encoded]] = True
        default = int(np.argmax(np.bincount(p.y, minlength=p.n_classes)))
        majority = np.where(counts.sum(axis=1) > 0, np.argmax(counts, axis=1), default)
        leaf_class = np.where(reached_by_encoded & (leaf_class >= 0), leaf_class, majority)

        def build(q: int, level: int):
            if level == k:
                return int(leaf_class[q - 2**k])
            return (
                int(node_feature[q - 1]),
                0.5,
                build(2 * q, level + 1),
                build(2 * q + 1, level + 1),
            )

        return node_feature, Tree.from_nested(build(1, 0), classes=np.arange(p.n_classes))

    def _pick_counterexamples(self, tree: Tree, wrong: np.ndarray) -> list[int]:
        if self.counterexamples == "first":
            return [int(wrong[0])]
        if self.counterexamples == "all":
            return [int(i) for i in wrong]
        leaves = tree.apply(self.problem.B[wrong])
        _, first_per_leaf = np.unique(leaves, return_index=True)
        picked = wrong[np.sort(first_per_leaf)]
        if isinstance(self.counterexamples, int):
            picked = picked[: self.counterexamples]
        return [int(i) for i in picked]

    def run(
        self, assumptions: list[int] | None = None, max_leaves: int | None = None
    ) -> LoopOutcome:
        """Solve, check, add counterexamples, repeat: until consistent, UNSAT or out of time.

        A model whose tree misclassifies rows is first repaired: its last two levels are
        re-grown optimally on all rows (:func:`satdt.greedy.repair_bottom`); when that makes it
        consistent, the depth is settled without more SAT calls. Not under ``assumptions``
        (a bound the repaired tree might break).
        """
        extra = list(assumptions or [])
        p = self.problem
        while True:
            self.rounds += 1
            started = time.perf_counter()
            status = solve_until(
                self.solver, self.solver_name, self.assumptions() + extra, self.deadline
            )
            spent = time.perf_counter() - started
            call = dict(
                depth=self.depth,
                round=self.rounds,
                n_examples=len(self.included),
                n_vars=self.pool.top,
                n_clauses=self.n_clauses,
                time=spent,
                max_leaves=max_leaves,
            )
            if status is None or status is False:
                word = "UNKNOWN" if status is None else "UNSAT"
                self.recorder.sat_call(SatCall(status=word, **call))
                return LoopOutcome(word)
            node_feature, tree = self._decode_tree(self.solver.get_model())
            wrong = np.flatnonzero(tree.predict_index(p.B) != p.y)
            repaired = None
            if len(wrong) and self.repair and not extra:
                repaired = repair_bottom(node_feature, self.depth, p.B, p.y, p.n_classes)
            if len(wrong) == 0 or repaired is not None:
                self.recorder.sat_call(SatCall(status="SAT", **call))
                return LoopOutcome("SAT", tree if repaired is None else repaired)
            picked = self._pick_counterexamples(tree, wrong)
            added = tuple((int(p.rows[i]), p.labels[p.y[i]].item()) for i in picked)
            self.recorder.sat_call(SatCall(status="SAT", counterexamples=added, **call))
            if not self.add_examples(picked):
                return LoopOutcome("UNKNOWN")


def depth_lower_bound(n_classes_present: int) -> int:
    """A tree of depth k has at most 2^k leaves, and each class needs one."""
    return max(0, math.ceil(math.log2(max(n_classes_present, 1))))


def minimum_depth(
    problem: Problem,
    *,
    max_depth: int | None = None,
    solver: str = DEFAULT_SOLVER,
    at_most_one: str = DEFAULT_AT_MOST_ONE,
    counterexamples: str | int = DEFAULT_COUNTEREXAMPLES,
    features: str = DEFAULT_FEATURES,
    deadline: float | None = None,
    recorder: Recorder,
) -> SearchResult:
    """The minimum-depth tree consistent with every row of ``problem`` (DT_depth).

    A greedy pure tree gives the first incumbent and an upper bound; depths are then tried
    upwards from a sound lower bound, each with its own incremental solver, seeded with the
    examples the previous depth needed. The first SAT depth is the minimum. On time-out the
    best tree known is returned with ``proven_optimal=False`` and ``lower_bound`` = last
    UNSAT depth + 1.

    Raises
    ------
    InfeasibleError
        When ``max_depth`` is below the minimum depth (proven), or no tree of depth at most
        ``max_depth`` was found before the deadline.
    """
    B, y = problem.B, problem.y
    present = int(np.unique(y).size)
    lower = depth_lower_bound(present)
    recorder.lower_bound = lower
    stats = recorder.stats
    stats.update(rows=len(y), binary_features=B.shape[1], sat_calls=0)

    upper_tree = greedy_tree(B, y, problem.n_classes).simplify(B)
    if max_depth is None or upper_tree.depth <= max_depth:
        recorder.improve(upper_tree, upper_tree.depth)
    upper = upper_tree.depth
    seeds: list[int] = []
    k = lower
    timed_out = False
    while k < upper and (max_depth is None or k <= max_depth):
        with CounterexampleLoop(
            problem,
            k,
            solver=solver,
            at_most_one=at_most_one,
            counterexamples=counterexamples,
            features=features,
            recorder=recorder,
            deadline=deadline,
        ) as loop:
            if loop.add_examples(seeds):
                hint = greedy_tree(B, y, problem.n_classes, max_depth=k)
                outcome = loop.try_tree(hint) or loop.run()
            else:
                outcome = LoopOutcome("UNKNOWN")
            stats["sat_calls"] += loop.rounds
            stats["examples_used"] = len(loop.included)
            seeds = loop.included
        if outcome.status == "UNKNOWN":
            timed_out = True
            break
        if outcome.status == "UNSAT":
            k += 1
            recorder.lower_bound = k
            continue
        tree = outcome.tree.simplify(B)
        upper = tree.depth
        recorder.improve(tree, upper)
        break
    if recorder.best is None or recorder.best.value > (
        max_depth if max_depth is not None else math.inf
    ):
        if timed_out:
            raise InfeasibleError(
                f"no consistent tree of depth at most {max_depth} was found before the time limit "
                f"(no such tree has depth below {recorder.lower_bound}); raise the time limit"
            )
        raise InfeasibleError(
            f"no consistent tree of depth at most {max_depth} exists: the minimum depth is "
            f"at least {recorder.lower_bound} (proven); raise --max-depth"
        )
    if not timed_out:
        recorder.lower_bound = recorder.best.value
    stats.setdefault("examples_used", 0)
    stats["solve_time"] = sum(call.time for call in recorder.trace)
    return recorder.snapshot(proven_optimal=recorder.lower_bound >= recorder.best.value)
