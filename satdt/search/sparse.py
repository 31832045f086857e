"""The error objective with a leaf penalty and no depth limit: the optimal sparse tree of any
depth, by DL8.5's unlimited search or by deepening another method until a bound proves it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..prepare.prepared import Prepared
from ..task.result import SearchResult
from ..task.spec import Task
from .runs import blossom_feature_cap, run_dl85

if TYPE_CHECKING:
    from .registry import Method

# The methods whose depth-unbounded search is DL8.5's (dp.dl85.solve_min_error with
# max_depth=None; CA-DL8.5 under its rule): the binary-feature searches that run it.
_SPARSE_DL85 = ("dl85", "cadl85", "portfolio")


def run_without_depth(method: Method, task: Task) -> SearchResult:
    """The error objective with a leaf penalty and no depth limit: the optimal sparse tree of
    any depth (GOSDT's and OSDT's objective: errors / total weight + leaf_penalty * leaves).

    ``dl85``, ``cadl85`` and ``portfolio`` run DL8.5's search with no depth limit (each
    node's depth is what the penalty allows its rows, :func:`satdt.dp.dl85.solve_min_error`
    with ``max_depth=None``; CA-DL8.5 under its rule). The other methods run at depth
    D = 1, 2, ... (each run starts from the best tree so far as its upper bound) until the
    optimum over the trees of depth at most D is proven optimal over every depth: a deeper
    tree has a path of D + 1 tests, hence at least D + 2 leaves, so it costs at least
    ``P * (D + 2)`` plus the fewest errors any tree makes (the weight of the minority
    classes of each group of rows with equal binary features). A single leaf costs at most
    the total weight plus ``P``, so D stays below ``total / P``. Stopped by the time limit,
    the result is the best tree so far with the lower bound over every depth.
    """
    if method.name in _SPARSE_DL85:
        return run_dl85(task, rule="discrepancy" if method.name == "cadl85" else None)
    recorder = task.recorder
    floor = _fewest_errors(task.data)
    penalty = task.leaf_penalty
    depth = 1
    while True:
        task.max_depth = depth
        result = method.run(task)
        deeper = floor + penalty * (depth + 2)  # the least cost of a tree deeper than `depth`
        best = recorder.best.value
        if result.proven_optimal and best <= deeper * (1 + 1e-12):
            return result
        if not result.proven_optimal:  # stopped: the bound holds over every depth
            recorder.lower_bound = min(recorder.lower_bound, deeper)
            return recorder.snapshot(proven_optimal=False)
        recorder.lower_bound = min(best, deeper)
        depth += 1


def _fewest_errors(data: Prepared) -> float:
    """The least weighted error of any classifier of the binary features: within each group
    of rows with equal features, the weight of all but the heaviest class."""
    B = data.binary(blossom_feature_cap(data)).B
    _, group = np.unique(B, axis=0, return_inverse=True)
    group = group.ravel()
    weights = np.zeros((int(group.max()) + 1, data.n_classes))
    np.add.at(weights, (group, data.y), data.weight)
    return float(weights.sum() - weights.max(axis=1).sum())
