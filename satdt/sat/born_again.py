"""Born-again trees of forests whose cell grid is too large to enumerate: the forest as the
teacher of a counterexample-guided SAT search.

The cells of a forest with many features are beyond counting (the dynamic programme of
:mod:`satdt.dp.born_again` tabulates them all), but a faithful tree needs only to be right
on every cell, and whether it is can be asked of the forest one leaf box at a time
(:func:`satdt.models.faithful.box_counterexamples`: a point of the box where the forest
decides otherwise, or a proof that there is none). So, as Avellaneda's loop learns a
minimum-depth tree from the rows it got wrong (:mod:`satdt.sat.loop`), this search learns
from the cells a tree got wrong:

1. A faithful tree given by the caller is the incumbent (:func:`satdt.dp.born_again.
   greedy_faithful_tree` grows one without enumerating the cells); its depth bounds the
   optimum from above.
2. For depths from the lower bound up, one :class:`~satdt.sat.loop.CounterexampleLoop`
   per depth finds a tree of that depth consistent with the sampled cells (each cell is a
   row, its binary features ``x[c] > t`` over the forest's thresholds). Its leaf boxes
   are asked of the forest, a few random cells of each first, then, when those find no
   cell decided otherwise, a proof of each box: no counterexample, and the tree is
   faithful and optimal (no tree of smaller depth fits even the samples); else the
   counterexamples join the samples (as many as :data:`CLAUSES_PER_ROUND` allows) and the
   same solver goes on. UNSAT on the samples proves the depth too small for the
   forest, since the samples are cells of it: the lower bound rises.

The search returns the best faithful tree known and a lower bound at any time; callers add
the bound of sub-boxes solved exactly (:func:`satdt.dp.born_again.box_lower_bound`). Put
together (the DP's side and the SAT side meet in the caller, as the architecture wants)::

    incumbent = greedy_faithful_tree(forest, deadline=soon)
    bound = box_lower_bound(forest, deadline=soon)
    result = born_again_sat(
        forest, incumbent=incumbent, lower_bound=bound, deadline=end, incumbent_proven=True
    )
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..core.errors import ParameterError, TimeUp
from ..models.faithful import (
    _Leaves,
    box_counterexample,
    box_counterexamples,
    leaf_counterexamples,
    tree_leaf_boxes,
)
from ..models.forest import Forest, random_cells
from ..models.tree import Tree
from ..task.born_again import BornAgainResult, BornAgainSatStats
from ..task.result import Recorder
from .loop import CounterexampleLoop
from .problem import Problem

#: The deepest perfect tree the SAT formulas are built for (2**depth leaves).
MAX_SAT_DEPTH = 12
#: Random cells drawn from each leaf box of a SAT tree before its leaves are proven.
SAMPLES_PER_LEAF = 4
#: The most clauses the counterexamples of one round may add (formulas (3)-(6) cost
#: about ``2**depth`` times the thresholds per cell): past it, a random part of them.
CLAUSES_PER_ROUND = 2**21


class _Cells:
    """The forest's thresholds as binary features, and cells drawn from boxes."""

    def __init__(self, forest: Forest, rng: np.random.Generator) -> None:
        self.forest = forest
        self.rng = rng
        self.thresholds = forest.thresholds()
        self.feature = np.array(
            [c for c, t in enumerate(self.thresholds) for _ in t], dtype=np.int64
        )
        self.value = np.concatenate([*self.thresholds, np.zeros(0)])

    def binary(self, points: np.ndarray) -> np.ndarray:
        """The rows ``x[c] > t`` of points, one column per threshold of the forest."""
        return (points[:, self.feature] > self.value[None, :]).astype(np.uint8)

    def sample(self, low: np.ndarray, high: np.ndarray, n: int) -> np.ndarray:
        """``n`` random points of the box ``low < x <= high``, each in a random cell of it
        (:func:`~satdt.models.forest.random_cells`)."""
        return random_cells(self.thresholds, low, high, n, self.rng)[0]


def _decode(cells: _Cells, tree: Tree, forest: Forest) -> Tree:
    """A tree over the binary features ``x[c] > t`` as a tree over the forest's features."""

    def convert(node: Any) -> Any:
        if not isinstance(node, tuple):
            return node
        j, _, left, right = node[:4]
        return (int(cells.feature[j]), float(cells.value[j]), convert(left), convert(right))

    return Tree.from_nested(convert(tree.to_nested()), forest.classes, forest.feature_names)


def _tree_counterexamples(
    forest: Forest,
    cells: _Cells,
    leaves: _Leaves,
    tree: Tree,
    deadline: float | None,
    stats: BornAgainSatStats,
) -> list[np.ndarray]:
    """Points where a SAT tree decides otherwise than the forest, at most one per leaf
    (none: the tree is faithful, proven).

    First :data:`SAMPLES_PER_LEAF` random cells of every leaf box, all compared at once:
    a tree fitted to a few cells is usually wrong on many, and a wrong cell found so costs
    no proof. Only when the samples find nothing are the leaf boxes proven
    (:func:`box_counterexamples`, raising :class:`TimeUp` past the deadline).
    """
    nodes, low, high = tree_leaf_boxes(tree, forest.n_features)
    classes = tree.value[nodes].astype(np.int64)
    drawn = random_cells(cells.thresholds, low, high, SAMPLES_PER_LEAF, cells.rng)
    flat = drawn.reshape(-1, forest.n_features)
    wrong = (forest.predict_index(flat) != np.repeat(classes, SAMPLES_PER_LEAF)).reshape(
        len(nodes), SAMPLES_PER_LEAF
    )
    missed = np.flatnonzero(wrong.any(axis=1))
    if len(missed):
        stats.sampled_counterexamples += len(missed)
        return [drawn[i, wrong[i].argmax()] for i in missed]
    stats.box_queries += len(nodes)
    points = box_counterexamples(forest, low, high, classes, leaves, deadline)
    return [point for point in points if point is not None]


def _within_budget(
    found: list[np.ndarray], depth: int, n_thresholds: int, n_classes: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """The counterexamples of a round that join the formula: all of them when their clauses
    fit :data:`CLAUSES_PER_ROUND`, else as many as fit (at least one), drawn at random.
    Those left out are found again if the next tree is still wrong there."""
    per_cell = (2**depth - 1) * n_thresholds + 2**depth * n_classes
    room = max(1, CLAUSES_PER_ROUND // per_cell)
    if len(found) <= room:
        return found
    return [found[i] for i in sorted(rng.choice(len(found), size=room, replace=False))]


def born_again_sat(
    forest: Forest,
    *,
    incumbent: Tree,
    deadline: float | None = None,
    lower_bound: int = 0,
    max_depth: int = MAX_SAT_DEPTH,
    seed: int = 0,
    incumbent_proven: bool = False,
) -> BornAgainResult:
    """The minimum-depth born-again tree of a forest by SAT on a growing set of its cells.

    Parameters
    ----------
    forest : Forest
        The tree ensemble.
    deadline : float, optional
        A ``time.perf_counter()`` value: past it, the best faithful tree known is returned
        with the lower bound proven so far.
    lower_bound : int, default 0
        A depth known to be needed (e.g. :func:`satdt.dp.born_again.box_lower_bound`).
    incumbent : Tree
        A faithful tree to start from (:func:`satdt.dp.born_again.greedy_faithful_tree`).
    max_depth : int, default :data:`MAX_SAT_DEPTH`
        The deepest tree the SAT formulas are built for.
    seed : int, default 0
        Seeds the sampled cells.
    incumbent_proven : bool, default False
        The incumbent's leaves are proven already (as
        :func:`~satdt.dp.born_again.greedy_faithful_tree` proves each of its leaves): it is
        not checked again, leaf box by leaf box, before the search.

    Returns
    -------
    BornAgainResult
        ``route="sat"``; the tree is faithful (every leaf box proven), optimal when
        ``proven``.

    Raises
    ------
    ParameterError
        When the incumbent is not faithful (checked leaf box by leaf box first, unless
        ``incumbent_proven``).
    """
    started = time.perf_counter()
    # the upper bound must be a faithful tree
    wrong = [] if incumbent_proven else leaf_counterexamples(incumbent, forest)
    if wrong:
        leaf, point = wrong[0]
        raise ParameterError(
            f"the incumbent tree is not faithful to the forest: at x = {point.tolist()} its "
            f"leaf {leaf} decides class {incumbent.value[leaf]}, the forest "
            f"{int(forest.predict_index(point[None, :])[0])}"
        )
    stats = BornAgainSatStats(cells=float(math.prod(len(t) + 1 for t in forest.thresholds())))
    rng = np.random.default_rng(seed)
    cells = _Cells(forest, rng)
    best = incumbent
    bound = max(int(lower_bound), 0 if _constant(forest) else 1)
    n = forest.n_features
    points = cells.sample(np.full(n, -np.inf), np.full(n, np.inf), 16)
    leaves = _Leaves(forest)
    while bound < best.depth and bound <= max_depth:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        outcome, tree, points = _solve_depth(forest, cells, leaves, points, bound, deadline, stats)
        if outcome == "UNSAT":
            stats.depths_refuted.append(bound)
            bound += 1
        elif outcome == "FAITHFUL":
            best = tree
            break
        else:
            break
    stats.samples = len(points)
    stats.seconds = time.perf_counter() - started
    proven = best.depth <= bound
    return BornAgainResult(
        best, "depth", best.depth, best.n_leaves, min(bound, best.depth), proven, stats, "sat"
    )


def _constant(forest: Forest) -> bool:
    """Whether the forest decides one class everywhere (then the tree is one leaf)."""
    n = forest.n_features
    point = np.zeros((1, n))
    cls = int(forest.predict_index(point)[0])
    return box_counterexample(forest, np.full(n, -np.inf), np.full(n, np.inf), cls) is None


def _solve_depth(
    forest: Forest,
    cells: _Cells,
    leaves: _Leaves,
    points: np.ndarray,
    depth: int,
    deadline: float | None,
    stats: BornAgainSatStats,
) -> tuple[str, Tree | None, np.ndarray]:
    """One depth of the search: ``("FAITHFUL", tree)``, ``("UNSAT", None)`` or
    ``("UNKNOWN", None)`` (the deadline), with the sampled cells grown meanwhile."""
    if depth == 0:
        return "UNSAT", None, points  # the forest is not constant (checked by the caller)

    def problem() -> Problem:
        labels = forest.predict_index(points)
        B = cells.binary(points)
        return Problem(B, labels, forest.n_classes, np.arange(len(B)), np.arange(forest.n_classes))

    loop = CounterexampleLoop(problem(), depth, recorder=Recorder("depth"), deadline=deadline)
    try:
        while True:
            outcome = loop.run()
            if outcome.status != "SAT":
                return outcome.status, None, points
            stats.rounds += 1
            tree = _decode(cells, outcome.tree, forest)
            try:
                found = _tree_counterexamples(forest, cells, leaves, tree, deadline, stats)
            except TimeUp:
                return "UNKNOWN", None, points
            if not found:
                return "FAITHFUL", tree, points
            found = _within_budget(found, depth, len(cells.value), forest.n_classes, cells.rng)
            stats.counterexamples += len(found)
            start = len(points)
            points = np.vstack([points, np.array(found)])
            loop.problem = problem()  # the same rows first: the loop's row indices hold
            loop.add_examples(range(start, len(points)))
    finally:
        stats.sat_calls += loop.rounds
        loop.close()
