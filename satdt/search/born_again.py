"""Born-again trees of a tree ensemble, one deadline for the whole search.

A born-again tree (Vidal & Schiffer, "Born-Again Tree Ensembles", ICML 2020) is a single
tree that decides like the forest on every point of the input space. Two routes find it,
both exact when they finish and both anytime:

``"grid"``
    The dynamic programme over the forest's cells (:func:`satdt.dp.born_again.
    born_again_tree`), when the grid has at most ``max_cells`` cells (default
    :data:`satdt.dp.born_again.MAX_GRID_CELLS`): depth, size (leaves) or depth then size.
``"sat"``
    For larger grids: a greedy faithful tree (:func:`satdt.dp.born_again.
    greedy_faithful_tree`) as the first incumbent, lower bounds from sub-boxes solved
    exactly (:func:`satdt.dp.born_again.box_lower_bound`), then the counterexample-guided
    SAT search over growing sets of cells (:func:`satdt.sat.born_again.born_again_sat`),
    which minimises the depth. The size is then the best tree's, not proven, with the
    leaves' lower bound of the sub-boxes.

Whatever the route, the tree returned is re-checked against the forest
(:func:`satdt.models.faithful.is_faithful`: cell by cell on a small grid, else leaf box by
leaf box; on the SAT route within the deadline, see :func:`_sat_route`) and reported as a
:class:`~satdt.task.result.SearchResult` whose objective is satdt's: ``"depth"`` for the
depth, ``"size"`` (nodes, ``2 * leaves - 1``) for the size and for depth then size; the
born-again objective is in the statistics
(:class:`~satdt.task.born_again.BornAgainSearchStats`).
"""

from __future__ import annotations

import math
import time

from ..core.errors import ParameterError
from ..models.faithful import is_faithful, union_thresholds
from ..models.forest import Forest
from ..models.tree import Tree
from ..task.born_again import BornAgainResult, BornAgainSearchStats
from ..task.result import Recorder, SearchResult

#: The born-again objectives: the depth, the leaves, the leaves among the trees of least depth.
BORN_AGAIN_OBJECTIVES = ("depth", "size", "depth_then_size")
#: satdt's objective of each (its values: a depth, or nodes).
SATDT_OBJECTIVE = {"depth": "depth", "size": "size", "depth_then_size": "size"}
#: The most cells of the union grid on which the tree is re-checked cell by cell (above it,
#: leaf box by leaf box).
CHECK_CELLS = 2**22


def _await_kernels(recorder: Recorder, deadline: float | None) -> bool:
    """The cell programme's Numba kernels ready in this process (both routes run them):
    compiled in the background on a first run (said as progress), else loaded from the cache.
    Returns False when the deadline passed first (the caller then needs no kernel)."""
    from ..dp import kernels
    from ..dp.kernels import kernels_of

    options = kernels_of("born_again")({})
    if any(kernels.ready(option) for option in options):
        return True
    groups = [group for option in options for group in option]
    if kernels.request(groups):
        recorder.progress("compiling the born-again kernels (first run only)")
        return kernels.wait(options, deadline)
    return True  # no background process: the kernels compile here when first called


def born_again_search(
    forest: Forest,
    objective: str = "depth",
    *,
    deadline: float | None = None,
    recorder: Recorder | None = None,
    max_cells: int | None = None,
) -> SearchResult:
    """The born-again tree of a forest by the grid route when it fits, else the SAT route.

    Parameters
    ----------
    forest : Forest
        The tree ensemble.
    objective : {"depth", "size", "depth_then_size"}, default "depth"
        The born-again objective (see the module notes).
    deadline : float, optional
        A ``time.perf_counter()`` value for the whole search: past it, the best faithful tree
        found is returned, not proven, with a true lower bound.
    recorder : Recorder, optional
        Where the search reports (its objective satdt's: :data:`SATDT_OBJECTIVE`).
    max_cells : int, optional
        The most cells of the forest's grid the grid route enumerates (default
        :data:`satdt.dp.born_again.MAX_GRID_CELLS`).

    Returns
    -------
    SearchResult
        The tree (faithful, re-checked), its value (depth or nodes), a lower bound, whether
        it is proven, and :class:`~satdt.task.born_again.BornAgainSearchStats`.

    Raises
    ------
    ParameterError
        An unknown objective.
    """
    if objective not in BORN_AGAIN_OBJECTIVES:
        raise ParameterError(
            f"objective must be one of {list(BORN_AGAIN_OBJECTIVES)}, got {objective!r}"
        )
    recorder = recorder or Recorder(SATDT_OBJECTIVE[objective])
    ready = _await_kernels(recorder, deadline)
    from ..dp.born_again import (
        MAX_GRID_CELLS,
        GridTooLarge,
        born_again_tree,
        greedy_faithful_tree,
        grid_cells,
    )

    max_cells = MAX_GRID_CELLS if max_cells is None else int(max_cells)
    cells = grid_cells(forest)
    stats = BornAgainSearchStats(
        objective=objective,
        cells=float(cells),
        max_cells=max_cells,
        trees=forest.n_trees,
        features=forest.n_features,
    )
    recorder.stats = stats
    found = None
    if not ready:  # a first run whose compilation outlasted the time limit: no kernel needed
        stats.route = "greedy"
        tree = greedy_faithful_tree(forest, objective, max_cells=0)
        proven, depth_bound, leaves_bound = False, 0, 1
    elif cells <= max_cells:
        recorder.progress(f"born-again tree: the cell programme over {cells:,} cells")
        try:
            found = born_again_tree(forest, objective, deadline=deadline, max_cells=max_cells)
        except GridTooLarge:  # the grid counted otherwise: the SAT route
            found = None
    if found is not None:
        stats.route, stats.grid = "grid", found.stats
        tree, proven = found.tree, found.proven
        depth_bound, leaves_bound = _bounds(found)
    elif ready:
        tree, proven, depth_bound, leaves_bound = _sat_route(
            forest, objective, deadline, recorder, stats
        )
    stats.depth_bound, stats.leaves_bound = depth_bound, leaves_bound
    if stats.route != "sat":  # the SAT route's trees are checked as they come (_sat_route)
        _check(tree, forest, stats)
    value, bound = _satdt_value(objective, tree, depth_bound, leaves_bound)
    recorder.lower_bound = bound
    recorder.improve(tree, value, mapped=True)
    reason = ""
    if not proven:
        late = deadline is not None and time.perf_counter() >= deadline
        reason = "time limit" if late else _why_not_proven(objective, stats.route)
    return recorder.snapshot(proven_optimal=proven, stop_reason=reason)


def _bounds(found: BornAgainResult) -> tuple[int, int]:
    """The (depth, leaves) lower bounds of a grid route's result: its bound is a depth for
    ``"depth"`` and ``"depth_then_size"``, leaves for ``"size"``; a tree of depth d has at
    least d + 1 leaves."""
    if found.proven:
        return found.depth, found.n_leaves
    if found.objective == "size":
        return 0, max(found.lower_bound, 1)
    return found.lower_bound, found.lower_bound + 1


def _satdt_value(objective: str, tree: Tree, depth: int, leaves: int) -> tuple[int, int]:
    """The tree's value and the lower bound in satdt's units: a depth, or nodes."""
    if SATDT_OBJECTIVE[objective] == "depth":
        return tree.depth, min(depth, tree.depth)
    return tree.n_nodes, min(2 * max(leaves, 1) - 1, tree.n_nodes)


def _why_not_proven(objective: str, route: str) -> str:
    if route == "sat" and objective != "depth":
        return "the SAT route minimises the depth: the leaves are the best tree's, not proven"
    return "not proven"


def _sat_route(
    forest: Forest,
    objective: str,
    deadline: float | None,
    recorder: Recorder,
    stats: BornAgainSearchStats,
) -> tuple[Tree, bool, int, int]:
    """The SAT route within the deadline: the greedy faithful tree (half the time left at
    most), sub-box bounds (to three quarters), then the SAT search (to the end).

    Every tree it can return is checked against the forest before the deadline: the greedy
    tree by :func:`_check` as soon as it is built (its own leaves were proven on restricted
    forests, so this is a second, independent proof), a tree of the SAT search by the
    search itself, which returns only a tree whose every leaf box
    :func:`~satdt.models.faithful.box_counterexamples` proved (the same proof as
    :func:`_check`'s, on that very tree; running it twice would prove nothing more). So the
    re-check costs no time past the deadline.

    Returns the tree, whether it is proven, and the (depth, leaves) lower bounds."""
    from ..dp.born_again import box_lower_bound, greedy_faithful_tree
    from ..sat.born_again import born_again_sat

    started = time.perf_counter()

    def share(part: float) -> float | None:
        return None if deadline is None else started + part * max(deadline - started, 0.0)

    stats.route = "sat"
    recorder.progress("born-again tree: the greedy faithful tree")
    greedy = greedy_faithful_tree(forest, objective, deadline=share(0.5))
    _check(greedy, forest, stats)  # now, on the clock: it may be the tree returned
    stats.greedy_depth, stats.greedy_leaves = greedy.depth, greedy.n_leaves
    value, _ = _satdt_value(objective, greedy, 0, 0)
    recorder.improve(greedy, value, mapped=True)
    recorder.progress("born-again tree: lower bounds from sub-boxes")
    depth_bound = box_lower_bound(forest, "depth", deadline=share(0.75))
    recorder.progress("born-again tree: the counterexample-guided SAT search")
    found = born_again_sat(
        forest,
        incumbent=greedy,
        lower_bound=depth_bound,
        deadline=deadline,
        incumbent_proven=True,
    )
    stats.sat = found.stats
    depth_bound = max(depth_bound, found.lower_bound)
    leaves_bound = depth_bound + 1 if depth_bound > 0 else 1
    tree = found.tree
    if objective == "size":
        size_bound = box_lower_bound(forest, "size", deadline=deadline)
        leaves_bound = max(leaves_bound, size_bound)
        tree = min((found.tree, greedy), key=lambda t: (t.n_leaves, t.depth))
    if tree is not greedy:
        stats.faithful_by = "sat"
    if objective == "depth":
        return tree, found.proven, depth_bound, leaves_bound
    if objective == "size":
        return tree, tree.n_leaves <= leaves_bound, depth_bound, leaves_bound
    # depth then size: the depth is the SAT route's; the leaves are proven only at d + 1
    proven = found.proven and tree.n_leaves <= tree.depth + 1
    return tree, proven, depth_bound, leaves_bound


def _check(tree: Tree, forest: Forest, stats: BornAgainSearchStats) -> None:
    """Re-check that the tree decides like the forest everywhere (as every satdt model is
    re-checked before it is returned)."""
    tic = time.perf_counter()
    cells = math.prod(len(t) + 1 for t in union_thresholds(forest, tree))
    stats.faithful_by = "grid" if cells <= CHECK_CELLS else "boxes"
    if not is_faithful(tree, forest, max_cells=CHECK_CELLS):
        raise RuntimeError(
            "internal error: the born-again tree does not decide like the forest everywhere"
        )
    stats.check_seconds += time.perf_counter() - tic
