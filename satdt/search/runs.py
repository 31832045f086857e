"""How each method of the table of searches runs: from a :class:`~satdt.task.spec.Task` to
its search's call.

Each ``run_*`` takes the task (prepared data, objective, bounds, the method's own options)
and calls one search of the engines (:mod:`satdt.sat`, :mod:`satdt.dp`, or the consistency
portfolio of :mod:`satdt.search.hybrid`) with the view of the data it reads: binary features
(within Blossom's feature cap where time or memory is short) or the numeric matrix. Engine
modules are imported on first use, so the table that names these functions stays cheap.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import REMOVED_IN, InfeasibleError, ParameterError, user_stacklevel
from ..prepare.prepared import Prepared
from ..task.objectives import OBJECTIVES
from ..task.result import SearchResult
from ..task.spec import Task


def sat_options(task: Task) -> dict[str, Any]:
    """The SAT search's keyword arguments from the method's options.

    ``solver="race"`` races max(n_jobs, 2) solvers on every call, Glucose 4 leading
    (:class:`~satdt.sat.solving.SolverRace`). It is not what ``n_jobs`` alone does: on the
    inferdt files Glucose won nearly every call, and the race took 6-45 % longer than Glucose
    alone (benchmarks/race.py), for the second formula it feeds and the memory it shares.
    """
    from ..sat.solving import DEFAULT_SOLVER

    options = dict(task.options)
    if options.get("solver") == "race":
        options["solver"] = DEFAULT_SOLVER
        options["n_jobs"] = max(task.n_jobs, 2)
    return options


def sat_problem(task: Task):
    from ..sat.problem import Problem

    data = task.data
    return Problem.from_data(data.binary().B, data.y, data.n_classes, data.classes)


def run_sat(task: Task) -> SearchResult:
    from ..sat.search import minimum_depth, minimum_size

    search = minimum_size if task.objective == "size" else minimum_depth
    best = task.recorder.best
    return search(
        sat_problem(task),
        max_depth=task.max_depth,
        max_nodes=task.max_nodes,
        deadline=task.deadline,
        recorder=task.recorder,
        first_tree=None if best is None else best.model,
        **sat_options(task),
    )


def run_front(task: Task, method: str = "sat"):
    """The depth/size Pareto front: ``(points, stop reason)``, by SAT over binary features,
    (``method="boxes"``) from the box DP's tables over the numeric columns, or by the
    consistency portfolio (``"hybrid"``) or ConTree alone (``"contree"``)."""
    if method == "boxes":
        return run_boxes(task, front=True)
    if method in ("hybrid", "contree"):
        from .hybrid import pareto_front as hybrid_front

        return hybrid_front(task, use_sat=method == "hybrid")
    from ..sat.search import pareto_front

    return pareto_front(
        sat_problem(task),
        max_depth=task.max_depth,
        deadline=task.deadline,
        recorder=task.recorder,
        **sat_options(task),
    )


# ---------------------------------------------------------------------- box DP
def run_boxes(task: Task, front: bool = False) -> Any:
    """The box DP's search for the task's objective, or (``front``) its Pareto front, once the
    tables are known to fit in ``max_memory_mb``."""
    from ..dp import boxes

    data = task.data
    values = data.column_values()
    needed = boxes.box_table_mb(values)
    if needed > data.max_memory_mb:
        raise ParameterError(
            f"method='boxes' would tabulate {boxes.box_count(values):,} boxes here "
            f"(columns with many distinct values), up to {needed:,.0f} MB, over max_memory_mb="
            f"{data.max_memory_mb:g}: use method='hybrid' (what method='auto' runs here) or "
            "method='sat'"
        )
    common = dict(
        column_values=values,
        max_depth=task.max_depth,
        deadline=task.deadline,
        recorder=task.recorder,
    )
    if front:
        return boxes.pareto_front(data.numeric(), data.y, data.n_classes, **common)
    return boxes.solve_consistent(
        data.numeric(), data.y, data.n_classes, task.objective, max_nodes=task.max_nodes, **common
    )


# ---------------------------------------------------------------------- Blossom
# Pair-count updates per second of the depth-two solver (measured on this kind of machine,
# with room to spare); used to size the features so a first tree comes within half the time.
_PAIR_UPDATES_PER_SECOND = 2e8


def blossom_feature_cap(data: Prepared) -> int:
    """The most binary features Blossom can take here.

    Memory: two tables of pair counts of ``M * M * C`` doubles must fit in a quarter of
    ``max_memory_mb``. Time: the depth-two solves of a first tree update about
    ``n * (M / 2) ** 2 / 2`` pair counts (rows hold at most half of the features, after
    flipping), and one solve cannot be interrupted, so with a time limit that work must fit
    in half of the time left.
    """
    memory = int(math.sqrt(data.max_memory_mb * 2**20 / (4 * 2 * 8 * data.n_classes)))
    left = data.time_left()
    if left is None:
        return memory
    work = _PAIR_UPDATES_PER_SECOND * max(left, 0.0) / 2
    speed = int(2 * math.sqrt(2 * work / len(data.y)))
    return max(1, min(memory, speed))


def run_dp(
    solve: Callable[..., SearchResult],
    task: Task,
    X: np.ndarray,
    *options: Any,
    depth: int | None = None,
) -> SearchResult:
    """Call a DP search's ``solve_min_error`` on ``X`` with the task's rows, bounds, clock,
    leaf penalty and minimum leaf support (:class:`satdt.dp.common.SearchSettings`), and the
    search's own ``options`` object if any; at ``depth`` (default: the task's max_depth)."""
    from ..dp.common import SearchSettings

    data, best = task.data, task.recorder.best
    settings = SearchSettings(
        task.recorder,
        sample_weight=data.weight,
        deadline=task.deadline,
        upper_bound=None if best is None else best.value,
        leaf_penalty=task.leaf_penalty,
        min_support=task.min_support,
    )
    depth = task.max_depth if depth is None else depth  # None: no depth limit (dl85 only)
    return solve(
        X, data.y, data.n_classes, None if depth is None else int(depth), settings, *options
    )


def run_blossom(task: Task) -> SearchResult:
    from ..dp.blossom import solve_min_error

    return run_dp(solve_min_error, task, task.data.binary(blossom_feature_cap(task.data)).B)


def run_dl85(task: Task, rule: str | None = None) -> SearchResult:
    from ..dp.dl85 import DL85Options, solve_min_error

    data = task.data
    options = dict(task.options)
    if rule is not None:
        options.setdefault("rule", rule)
    step = options.get("relax_step")
    if step is not None and step >= 1 and options.get("rule") in ("purity", "gain"):
        warnings.warn(
            f"relax_step={step:g} with rule={options['rule']!r} reads as hundredths, as before "
            f"0.2; relax_step is now in the rule's unit (bits of {options['rule']}): write "
            f"relax_step={step / 100:g}. Hundredths are refused from satdt {REMOVED_IN}.",
            FutureWarning,
            stacklevel=user_stacklevel(),
        )
        options["relax_step"] = step / 100
    B = data.binary(blossom_feature_cap(data)).B
    return run_dp(solve_min_error, task, B, DL85Options(**options))


def run_cadl85(task: Task) -> SearchResult:
    return run_dl85(task, rule="discrepancy")


def run_portfolio(task: Task) -> SearchResult:
    from ..dp.portfolio import PortfolioOptions, solve_min_error

    B = task.data.binary(blossom_feature_cap(task.data)).B
    return run_dp(solve_min_error, task, B, PortfolioOptions(n_jobs=task.n_jobs))


# ---------------------------------------------------------------------- ConTree
def run_contree(task: Task) -> SearchResult:
    if OBJECTIVES[task.objective].consistency:
        return run_hybrid(task, use_sat=False)
    from ..dp.contree import ConTreeOptions, solve_min_error

    data = task.data
    gap = task.options.get("max_gap", 0.0)
    if gap >= 1:
        warnings.warn(
            f"max_gap={gap:g} reads as an error count, as before 0.2; max_gap is now a "
            f"fraction of the rows' weight, as leaf_penalty is: write max_gap="
            f"{gap / float(data.weight.sum()):.6g}. Counts are refused from satdt {REMOVED_IN}.",
            FutureWarning,
            stacklevel=user_stacklevel(),
        )
    own = dict(task.options)
    if data.original is not None and 0 < gap < 1:
        # a fraction of the user's rows' weight, as leaf_penalty; the rows the cost reduction
        # rewrote weigh more or less in all (satdt.prepare.costs): the same gap as a share of theirs,
        # or as a weight (ConTree reads a gap >= 1 as one)
        allowed = gap * float(data.original.weight.sum())
        share = allowed / float(data.weight.sum())
        own["max_gap"] = share if share < 1 else allowed
    options = ConTreeOptions(column_values=data.column_values(), **own)
    return run_dp(solve_min_error, task, data.numeric(), options)


# ---------------------------------------------------------------------- SAT and ConTree
def run_hybrid(task: Task, use_sat: bool = True) -> SearchResult:
    from .hybrid import solve

    return solve(task, use_sat=use_sat)


# ---------------------------------------------------------------------- node budget
def run_budget(task: Task) -> SearchResult:
    """The error objective within ``max_nodes`` nodes (:mod:`satdt.dp.budget`; no cap when
    None); without ``max_depth`` the depth is free within the cap (a tree of k branching
    nodes has depth at most k)."""
    from ..dp.budget import BudgetOptions, branching_budget, solve_min_error

    if task.max_nodes is not None and task.max_nodes < 1:
        raise InfeasibleError("no tree has fewer than 1 node: raise max_nodes")
    depth = task.max_depth
    if depth is None:  # the runner sends a task without depth and node cap elsewhere
        depth = branching_budget(task.max_nodes, 62)
    B = task.data.binary(blossom_feature_cap(task.data)).B
    options = BudgetOptions(max_nodes=task.max_nodes, **task.options)
    return run_dp(solve_min_error, task, B, options, depth=depth)
