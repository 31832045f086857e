"""The incremental counterexample-guided loop (Algorithm 3 of Avellaneda, AAAI 2020) at one depth.

See ``encodings/incremental-loop.md``. One solver per depth, kept for the whole search at
that depth: the loop starts with no examples, solves, decodes the perfect tree of the model,
looks for training rows it misclassifies and adds their clauses (3)-(6) to the *same*
solver, until the tree is consistent (SAT) or the formula is unsatisfiable (no consistent
tree of that depth exists: UNSAT on a subset of the rows is UNSAT on all of them). Bounds
on the labelled leaves (formulas (7)-(10)) go in as assumptions, so one loop serves every
bound of a size search. The searches over depths and sizes are in :mod:`satdt.sat.search`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from functools import partial

import numpy as np
from pysat.formula import IDPool

from ..core.errors import TimeUp
from ..models.tree import Tree
from ..task.events import SatCall
from ..task.result import Recorder
from .counter import DEFAULT_COUNTER, labelled_leaf_vars, leaf_counter
from .heuristics import repair_bottom
from .perfect import (
    PerfectTreeVars,
    class_vars,
    decode,
    feature_vars,
    leaf_clauses,
    one_feature_clauses,
    other_class_clauses,
    path_vars,
    perfect_form,
    perfect_leaf_of,
    routing_clauses,
    some_feature_clauses,
)
from .problem import Problem
from .solving import CLAUSE_CHUNK, DEFAULT_SOLVER, SAT_SOLVERS, new_solver, past, solve_until

# "first": add the first misclassified row; "per_leaf": one misclassified row per leaf the
# tree sends misclassified rows to; "all": every misclassified row; an integer k: the first k
# of the "per_leaf" rows.
TREE_COUNTEREXAMPLE_POLICIES = ("first", "per_leaf", "all")
DEFAULT_COUNTEREXAMPLES = "per_leaf"
DEFAULT_AT_MOST_ONE = "none"
FEATURE_MODES = ("lazy", "all")
DEFAULT_FEATURES = "lazy"

# Largest m^2 * words * classes for which SAT models are repaired (best_depth_two's work per round).
_REPAIR_WORK = 2 * 10**6
# Below this many rows SAT calls cost less than the exhaustive heuristics: the models of the
# loop are not repaired, the heuristic tree is repaired on two levels, not three, and it is the
# greedy tree, not the lookahead tree (mouse's fit 0.33 s -> 0.04 s, iris's 0.30 s -> 0.12 s;
# car's SAT search, 1727 rows, is 12 % slower without them).
SMALL_ROWS = 512


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
        PySAT solver name (one of :data:`~satdt.sat.solving.SAT_SOLVERS`).
    at_most_one
        Encoding of formula (2), see :func:`satdt.sat.perfect.one_feature_clauses`
        (``"seqcounter"`` only with ``features="all"``).
    counterexamples
        Which misclassified rows to add per round (see :data:`TREE_COUNTEREXAMPLE_POLICIES`).
    features
        ``"lazy"`` or ``"all"``, see above.
    recorder
        Receives one :class:`~satdt.task.events.SatCall` per solver call.
    deadline
        ``time.perf_counter()`` value after which the loop stops with ``"UNKNOWN"``.
    n_jobs
        With more than one, every call races that many solvers (``solver`` and the
        partners :func:`~satdt.sat.solving.race_partners` picks) on the same formula, the
        first answer winning: the same trees' depth and size, found by whichever solver is
        faster on each call.

    Raises
    ------
    TimeUp
        When the deadline passes before formulas (1)-(2) are in the solver.
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
        recorder: Recorder,
        deadline: float | None = None,
        n_jobs: int = 1,
    ) -> None:
        if solver not in SAT_SOLVERS:
            raise ValueError(f"solver must be one of {SAT_SOLVERS}, got {solver!r}")
        if counterexamples not in TREE_COUNTEREXAMPLE_POLICIES and not (
            isinstance(counterexamples, int) and counterexamples >= 1
        ):
            raise ValueError(
                f"counterexamples must be one of {TREE_COUNTEREXAMPLE_POLICIES} or a positive integer, "
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
        self.recorder = recorder
        self.deadline = deadline
        self.pool = IDPool()
        m = problem.B.shape[1]
        self.solver = new_solver(solver, n_jobs)
        self.n_clauses = 0
        self._pending: list[list[list[int]]] = []  # clauses not yet in the solver
        self._pending_at = 0  # how many of the first pending list are in already
        self.included: list[int] = []
        self._included_set: set[int] = set()
        self._waiting: list[int] = []  # rows whose clauses a deadline kept from being built
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
        try:
            self._add(self._some_feature_clauses() + one_feature_clauses(self.vars, at_most_one))
        except TimeUp:
            self.solver.delete()
            raise

    def _repair(self, node_feature: np.ndarray) -> Tree | None:
        """Re-grow the last levels of a perfect tree on all rows (see :func:`repair_bottom`).

        Three levels when cheap enough and the rows are at least :data:`SMALL_ROWS`, else two,
        else (many features) no repair.
        """
        p = self.problem
        m = p.B.shape[1]
        work = m * m * (len(p.y) // 64 + 1) * p.n_classes
        if work > _REPAIR_WORK:
            return None
        levels = 3 if len(p.y) >= SMALL_ROWS and m * work <= _REPAIR_WORK else 2
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
        """Add clauses to the formula and hand them to the solver, as far as the deadline allows.

        Raises :class:`~satdt.core.errors.TimeUp` at the deadline; the clauses not handed over stay
        queued and go first at the next :meth:`run`, so the loop's formula is always whole
        (only the solver may lag behind it) and a loop stopped by a deadline can resume.
        """
        self.n_clauses += len(clauses)
        if clauses:
            self._pending.append(clauses)
        self._flush()

    def _flush(self) -> None:
        """Hand the queued clauses to the solver, a chunk at a time (TimeUp at the deadline)."""
        while self._pending:
            clauses = self._pending[0]
            for start in range(self._pending_at, len(clauses), CLAUSE_CHUNK):
                if past(self.deadline):
                    self._pending_at = start
                    raise TimeUp
                self.solver.append_formula(clauses[start : start + CLAUSE_CHUNK])
            self._pending.pop(0)
            self._pending_at = 0

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
        """Add the clauses (3)-(6) of problem rows ``rows``; False if the deadline passed.

        Past the deadline, the rows whose clauses are not built yet wait (each row's clauses
        are whole or absent): the next call, or :meth:`run`, builds them first, so a loop
        stopped by a deadline resumes with the formula it would have had."""
        p = self.problem
        waiting, self._waiting = self._waiting, []
        new_rows = [
            i
            for i in dict.fromkeys([*waiting, *(int(i) for i in rows)])
            if i not in self._included_set
        ]
        if not new_rows:
            return True
        clauses: list[list[int]] = []
        created = self._split_slots(new_rows) if self.lazy else []
        if created:
            F_new = feature_vars(self.pool, self.depth, self._slot_keys(created))
            self.vars.F = np.concatenate([self.vars.F, F_new], axis=1)
            rows_b = p.B[:, self.slot_feature[created]]
            for i in self.included:
                clauses += self._routing_clauses(F_new, i, rows_b[i])
            clauses += self._some_feature_clauses()
        slot_rows = p.B[:, self.slot_feature]
        for k, i in enumerate(new_rows):
            if past(self.deadline):
                self._waiting += new_rows[k:]
                break
            clauses += self._example_clauses(i, slot_rows[i])
            self.included.append(i)
            self._included_set.add(i)
        try:
            self._add(clauses)  # the formula is whole; the solver may lag (see _add)
        except TimeUp:
            return False
        return not self._waiting

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

        The tree's last two or three levels are re-grown optimally
        (:func:`~satdt.sat.heuristics.repair_bottom`); if that classifies every row (within
        ``max_leaves`` leaves), it is the answer. Otherwise the tree becomes the solver's phase
        hint (:meth:`suggest`).
        """
        node_feature, _ = perfect_form(tree, self.depth)
        repaired = self._repair(node_feature)
        within = max_leaves is None or (
            repaired is not None and repaired.simplify(self.problem.B).n_leaves <= max_leaves
        )
        if repaired is not None and within:
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

    def add_leaf_counter(self, max_bound: int, kind: str = DEFAULT_COUNTER) -> None:
        """Formulas (7)-(10): count the labelled leaves, for bounds up to ``max_bound``.

        Generated once into the live solver; :meth:`run` then takes ``max_leaves`` and imposes
        it by assumption (see :mod:`satdt.sat.counter`).
        """
        U, clauses = labelled_leaf_vars(self.pool, self.vars.C)
        self.counter = leaf_counter(kind, self.pool, U, max_bound)
        self._add(clauses + self.counter.clauses)  # on TimeUp, queued for the next run

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
        bound and from :data:`SMALL_ROWS` rows on, a model whose tree misclassifies rows is
        first repaired: its last levels are re-grown optimally on all rows
        (:func:`~satdt.sat.heuristics.repair_bottom`); when that makes it consistent, the depth
        is settled without more SAT calls.
        """
        bound = [] if max_leaves is None else self.counter.at_most(max_leaves)
        bound += assumptions or []
        p = self.problem
        while True:
            if self._waiting and not self.add_examples([]):  # rows a deadline kept waiting
                return LoopOutcome("UNKNOWN")
            try:
                self._flush()
            except TimeUp:
                return LoopOutcome("UNKNOWN")
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
                self.recorder.event(SatCall(status=word, **call))
                return LoopOutcome(word)
            node_feature, leaf_class, leaf = self._decode(
                self.solver.get_model(), max_leaves is not None
            )
            wrong = np.flatnonzero(leaf_class[leaf] != p.y)
            repaired = None
            if len(wrong) and max_leaves is None and len(p.y) >= SMALL_ROWS:
                repaired = self._repair(node_feature)
            found = self._tree(node_feature, leaf_class)
            call["found"] = partial(self.recorder.to_user_tree, found)
            if len(wrong) == 0 or repaired is not None:
                self.recorder.event(SatCall(status="SAT", **call))
                return LoopOutcome("SAT", repaired if repaired is not None else found)
            picked = self._pick_counterexamples(wrong, leaf)
            added = tuple((int(p.rows[i]), p.labels[p.y[i]].item()) for i in picked)
            self.recorder.event(SatCall(status="SAT", counterexamples=added, **call))
            if not self.add_examples(picked):
                return LoopOutcome("UNKNOWN")

    # ------------------------------------------------------------------ a problem that grows
    def grow(self, problem: Problem) -> None:
        """Take ``problem``: this loop's problem with rows, features and classes appended.

        For :mod:`satdt.sat.growing` (``partial_fit``, teachers). The rows, features and
        classes of the current problem keep their indices and their values in ``problem``,
        so every clause in the solver stays true to them; new rows enter the formula only as
        counterexamples of later rounds. A new feature joins the class of the features it
        equals, or complements, on every encoded row (a threshold between two values seen
        equals its neighbour on the rows seen before it, a new category's column is 0 on
        them); features that match no class form classes of their own, which get their F
        variables, the clauses (3)-(4) of the encoded rows and a new generation of formula
        (1), as when a new example splits a class. A new class gets its C variables, the
        clauses (6) every encoded row owes it, and formula (7) when there is a leaf counter.
        Only ``features="lazy"`` loops grow. Clauses the deadline keeps from the solver stay
        queued for the next :meth:`run`.
        """
        if not self.lazy:
            raise ValueError("only a loop with features='lazy' can grow")
        self.problem = problem
        clauses: list[list[int]] = []
        if problem.B.shape[1] > len(self.slot_of):
            clauses += self._join_features(len(self.slot_of))
        if problem.n_classes > self.vars.n_classes:
            clauses += self._join_classes(self.vars.n_classes)
        with contextlib.suppress(TimeUp):  # queued: run() hands them over first
            self._add(clauses)

    def _join_features(self, first: int) -> list[list[int]]:
        """Put features ``first ..`` into classes (see :meth:`grow`); the clauses of new classes."""
        B = self.problem.B
        new = np.arange(first, B.shape[1])
        rows = self.included
        encoded = B[rows] if rows else np.zeros((0, B.shape[1]), dtype=np.uint8)
        flip_new = encoded[0, new] if rows else np.zeros(len(new), dtype=np.uint8)
        self.flip = np.concatenate([self.flip, flip_new]).astype(np.uint8)
        reps = self.slot_feature
        known = np.packbits(encoded[:, reps] ^ self.flip[reps], axis=0)
        slot_of_key = {known[:, s].tobytes(): s for s in range(len(reps))}
        keys = np.packbits(encoded[:, new] ^ flip_new, axis=0)
        slot_new = np.empty(len(new), dtype=np.int64)
        created: list[int] = []
        members: dict[int, list[int]] = {}
        for t, f in enumerate(new.tolist()):
            key = keys[:, t].tobytes()
            if key not in slot_of_key:
                slot_of_key[key] = len(reps) + len(created)
                created.append(slot_of_key[key])
            slot_new[t] = slot_of_key[key]
            members.setdefault(int(slot_new[t]), []).append(f)
        self.slot_of = np.concatenate([self.slot_of, slot_new])
        self.slot_feature = np.concatenate(
            [reps, [members[s][(len(members[s]) - 1) // 2] for s in created]]
        ).astype(np.int64)
        self.vars.n_features = B.shape[1]
        if not created:
            return []
        F_new = feature_vars(self.pool, self.depth, self._slot_keys(created))
        self.vars.F = np.concatenate([self.vars.F, F_new], axis=1)
        values = B[:, self.slot_feature[created]]
        clauses: list[list[int]] = []
        for i in rows:
            clauses += self._routing_clauses(F_new, i, values[i])
        return clauses + self._some_feature_clauses()

    def _join_classes(self, first: int) -> list[list[int]]:
        """C variables for classes ``first ..``, the clauses (6) of the encoded rows, formula (7)."""
        n_classes = self.problem.n_classes
        C_new = np.array(
            [
                [self.pool.id(("C", v, c)) for c in range(first, n_classes)]
                for v in range(self.vars.n_leaves)
            ],
            dtype=np.int64,
        ).reshape(self.vars.n_leaves, n_classes - first)
        self.vars.C = np.concatenate([self.vars.C, C_new], axis=1)
        self.vars.n_classes = n_classes
        clauses: list[list[int]] = []
        for i in self.included:
            clauses += other_class_clauses(path_vars(self.pool, i, self.depth), C_new)
        if self.counter is not None:
            clauses += labelled_leaf_vars(self.pool, C_new)[1]
        return clauses
