"""The table of searches: every method satdt offers, in one place.

Each :class:`Method` says which objectives it solves, which view of the data it reads
(binary features or the numeric design matrix), its own parameters with their defaults and
checks, the function that runs it and its warm-up. The estimators, the command line
(``--method`` choices, flags, help, summary lines), :func:`satdt.warmup` and the README's
table of methods all read this table, so a new method is one module plus one entry here.
Search modules are imported only when a method runs, so importing this table stays cheap.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.errors import REMOVED_IN, InfeasibleError, ParameterError, user_stacklevel
from ..core.params import NONE, Check, Choice, Integer, Param, Real, is_number
from ..prepare.prepared import Prepared
from ..task.result import Recorder, SatStats, SearchResult

CONSISTENCY, ERROR = "consistency", "error"


@dataclass(frozen=True)
class Objective:
    """What a search minimises: ``kind`` is ``"consistency"`` (every row right) or ``"error"``."""

    name: str
    kind: str

    def value_of(self, tree: Any, error: float, leaf_penalty: float = 0.0) -> float:
        """The objective value of a model whose (weighted) training error is ``error``
        (the error objective adds ``leaf_penalty``, in units of the weights, per leaf)."""
        if self.name == "depth":
            return tree.depth
        if self.name == "size":
            return tree.n_nodes
        return error + leaf_penalty * tree.n_leaves if leaf_penalty else error


OBJECTIVES: dict[str, Objective] = {
    o.name: o
    for o in (
        Objective("depth", CONSISTENCY),  # the shallowest tree that classifies every row
        Objective("size", CONSISTENCY),  # the consistent tree with the fewest nodes
        Objective("error", ERROR),  # the tree of depth <= max_depth with the fewest errors
    )
}


# ---------------------------------------------------------------------- parameters
# The parameters of every tree search (OptimalTreeClassifier's besides each method's own, which
# the methods of the table declare): its signature, docstring and checks, the command line's
# flags and the docs' table come from here.
def _method_names() -> tuple[str, ...]:
    return ("auto", *METHODS)


def _class_weight_dict(value: Any) -> bool:
    return isinstance(value, dict)


def _n_jobs(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool) and value != 0


def _cost_matrix_like(value: Any) -> bool:
    from ..prepare.costs import is_cost_matrix_like

    return is_cost_matrix_like(value)


def _read_cost_matrix(text: str) -> Any:
    from ..prepare.costs import read_cost_matrix

    return read_cost_matrix(text)


TREE_PARAMS: tuple[Param, ...] = (
    Param(
        "objective",
        "depth",
        '"depth": the shallowest tree that classifies every training row correctly; '
        '"size": the smallest such tree (fewest nodes) at the minimum depth, or over all '
        'depths up to max_depth; "error": the tree of depth at most max_depth with the '
        "fewest misclassified (weighted) training rows.",
        (Choice(tuple(OBJECTIVES)),),
    ),
    Param(
        "method",
        "auto",
        "The search, from the table of searches (satdt.search.registry.METHODS); 'auto' picks the "
        "method for the objective and, for 'error', the data (ConTree on numeric columns "
        "with many thresholds, else the Blossom/DL8.5 portfolio); method_ says which ran.",
        (Choice(_method_names),),
    ),
    Param(
        "max_depth",
        None,
        'A cap on the depth (required for "error").',
        (NONE, Integer(0)),
        metavar="K",
    ),
    Param(
        "max_nodes",
        None,
        "A cap on the number of nodes (internal + leaves; a tree with k branching nodes has "
        '2k + 1). "depth" and "size": only consistent trees within it; "error": the fewest '
        "errors among the trees of depth at most max_depth within it (MurTree's and STreeD's "
        "depth-and-size constraint; method 'budget', which auto runs then); without max_depth "
        "the depth is free within the cap.",
        (NONE, Integer(0)),
        metavar="N",
        cli_help="only trees with at most N nodes (internal + leaves); exit 1 if none is "
        "consistent",
    ),
    Param(
        "time_limit",
        None,
        "Wall-clock seconds from the call of fit, data preparation included; then the best "
        "tree found is returned with result_.proven_optimal = False and a NotProvenWarning.",
        (NONE, Real(0, low_open=True)),
        metavar="S",
        cli_help="wall-clock seconds from the start; then the best tree found",
    ),
    Param(
        "max_thresholds",
        None,
        "At most this many quantile thresholds per numeric column (None: every midpoint "
        "between consecutive distinct values; optimality then holds for the full data).",
        (NONE, Integer(1)),
        metavar="Q",
        cli_help="at most Q quantile thresholds per numeric column (optimal for those only)",
    ),
    Param(
        "max_memory_mb",
        1024,
        "Memory budget of the binary features: when every threshold would exceed it, fewer "
        "quantile thresholds are used (result_.preparation.notes says so).",
        (Real(0, low_open=True),),
        metavar="MB",
        cli_help="memory budget of the binary features; over it, fewer thresholds",
    ),
    Param(
        "resolve",
        None,
        "None: contradictory rows (same features, different labels) are an error for the "
        "consistency objectives; 'majority': relabel each group with its majority label.",
        (NONE, Choice(("majority",))),
        objectives=("depth", "size"),
        cli_help="relabel contradictory rows with their group's majority label",
    ),
    Param(
        "missing",
        "split",
        '"split": a feature cell may be missing (NaN, None; empty or NA in a file); each '
        "split of a column with missing values also learns the side its missing rows take, "
        "optimally, and predict sends them there (a split on a column without missing "
        'values sends them where more training rows went). "error": refuse missing cells.',
        (Choice(("split", "error")),),
        cli_help="split: a cell may be missing (empty, NA, ?, ...); each split learns the side "
        "its missing rows take, and predict sends them there; error: refuse them",
    ),
    Param(
        "leaf_penalty",
        0.0,
        'With objective="error": minimise (weighted errors) / (total weight) + leaf_penalty * '
        "(number of leaves) over trees of depth at most max_depth, so that a leaf is split "
        "only where that saves more than leaf_penalty of the weight; result_.objective_value "
        "is then that penalised value. 0: the fewest errors.",
        (Real(0),),
        objectives=("error",),
        metavar="L",
        cli_help="minimise errors / rows + L * leaves (0: the fewest errors); a leaf is split "
        "only where that saves more than a fraction L of the rows",
    ),
    Param(
        "min_support",
        1,
        'With objective="error": every leaf holds at least this many training rows (of positive '
        "weight); a split is tried only when both sides hold that many.",
        (Integer(1),),
        objectives=("error",),
        metavar="N",
        cli_help="every leaf holds at least N training rows",
    ),
    Param(
        "class_weight",
        None,
        "None, 'balanced' (n_rows / (n_classes * rows of the class)) or {label: weight}: "
        "multiplies sample_weight, as in scikit-learn.",
        (
            NONE,
            Choice(("balanced",)),
            Check("a dict {label: weight >= 0}", _class_weight_dict, "dict"),
        ),
        metavar="W",
        cli_help="'balanced' (n_rows / (n_classes * rows of the class)) or LABEL=WEIGHT pairs "
        "separated by commas (e.g. yes=3,no=1): multiplies each row's weight",
    ),
    Param(
        "cost_matrix",
        None,
        'With objective="error": misclassification costs, C[a][b] the cost of predicting b '
        "for a row of class a (>= 0, zero diagonal), as a square array in classes_ order or a "
        "dict {true label: {predicted label: cost}} (pairs not named cost 1). The search "
        "minimises the rows' weighted cost (times sample_weight and class_weight); a leaf "
        "predicts its class of least cost; result_.objective_value and "
        "result_.training_error are costs. None: every error costs 1.",
        (
            NONE,
            Check(
                "a square array of costs or a dict {true label: {predicted label: cost}}",
                _cost_matrix_like,
                "array-like or dict",
                read=_read_cost_matrix,
            ),
        ),
        objectives=("error",),
        metavar="C",
        cli_help="misclassification costs: rows separated by ';' in classes_ order "
        "('0,1;5,0': predicting the first class for the second costs 5), or JSON (a list of "
        "rows or {true: {predicted: cost}}), or a JSON file",
    ),
    Param(
        "n_jobs",
        1,
        "Cores for one fit (None: 1; -1: every core; -2: all but one): the portfolio's proof is "
        "shared out among that many processes (DL8.5's root splits, Blossom beside them); with "
        "solver='race' the SAT searches race that many solvers on every call. The optima are the "
        "same; 1 is the single-core search.",
        (NONE, Check("a non-zero integer", _n_jobs, "int", read=int)),
        metavar="N",
        cli_help="cores for this fit (-1: every core); the optimum is the same",
    ),
)


def tree_params() -> dict[str, Param]:
    """Every parameter of the tree searches by name: :data:`TREE_PARAMS`, then the methods'."""
    return {param.name: param for param in TREE_PARAMS} | method_params()


# A method parameter is a satdt.core.params.Param too: the estimators take it under its own name,
# and the command line as --name-with-dashes, both from the table of searches.


@dataclass
class Task:
    """What a method's ``run`` receives: the prepared data, the objective and the options.

    ``options`` holds the method's own parameters that differ from their defaults.
    A model the estimator found before the method ran (a greedy tree on a large table) is
    ``recorder.best``: the bound the method must beat.
    """

    data: Prepared
    objective: str
    max_depth: int | None
    max_nodes: int | None
    options: dict[str, Any] = field(default_factory=dict)
    checked: Any = None  # a model the estimator already re-checked against the data
    # The error objective's cost of a leaf, in units of the weights (the estimator's
    # leaf_penalty times the total weight), and the fewest positive-weight rows in a leaf.
    leaf_penalty: float = 0.0
    min_support: int = 1
    n_jobs: int = 1  # cores for this fit (the estimator's n_jobs, resolved)

    @property
    def recorder(self) -> Recorder:
        return self.data.recorder

    @property
    def deadline(self) -> float | None:
        return self.data.deadline


@dataclass(frozen=True)
class Method:
    """One search of the table."""

    name: str
    objectives: tuple[str, ...]
    input: str  # "binary" or "numeric"
    summary: str
    run: Callable[[Task], SearchResult]
    params: tuple[Param, ...] = ()
    report: Callable[[SearchResult], list[str]] = lambda result: []
    # the objectives under which it honours max_nodes (a node budget)
    node_budget: tuple[str, ...] = ()

    def params_for(self, objective: str) -> tuple[Param, ...]:
        return tuple(p for p in self.params if not p.objectives or objective in p.objectives)


# ---------------------------------------------------------------------- SAT
def _sat_solvers() -> tuple[str, ...]:
    from ..sat.solving import SAT_SOLVERS

    return (*SAT_SOLVERS, "race")


def _sat_policies() -> tuple[str, ...]:
    from ..sat.loop import TREE_COUNTEREXAMPLE_POLICIES

    return TREE_COUNTEREXAMPLE_POLICIES


def _sat_counters() -> tuple[str, ...]:
    from ..sat.counter import COUNTERS

    return COUNTERS


def _sat_strategies() -> tuple[str, ...]:
    from ..sat.search import SIZE_STRATEGIES

    return SIZE_STRATEGIES


def _sat_options(task: Task) -> dict[str, Any]:
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


def _sat_problem(task: Task):
    from ..sat.problem import Problem

    data = task.data
    return Problem.from_data(data.binary().B, data.y, data.n_classes, data.classes)


def _run_sat(task: Task) -> SearchResult:
    from ..sat.search import minimum_depth, minimum_size

    search = minimum_size if task.objective == "size" else minimum_depth
    best = task.recorder.best
    return search(
        _sat_problem(task),
        max_depth=task.max_depth,
        max_nodes=task.max_nodes,
        deadline=task.deadline,
        recorder=task.recorder,
        first_tree=None if best is None else best.model,
        **_sat_options(task),
    )


def run_pareto(task: Task, method: str = "sat"):
    """The depth/size Pareto front: ``(points, stop reason)``, by SAT over binary features,
    (``method="boxes"``) from the box DP's tables over the numeric columns, or by the
    consistency portfolio (``"hybrid"``) or ConTree alone (``"contree"``)."""
    if method == "boxes":
        return _boxes(task, front=True)
    if method in ("hybrid", "contree"):
        from .hybrid import pareto_front as hybrid_front

        return hybrid_front(task, use_sat=method == "hybrid")
    from ..sat.search import pareto_front

    return pareto_front(
        _sat_problem(task),
        max_depth=task.max_depth,
        deadline=task.deadline,
        recorder=task.recorder,
        **_sat_options(task),
    )


def _report_sat(result: SearchResult) -> list[str]:
    stats = result.stats
    if not isinstance(stats, SatStats):  # the tree came before the search (one class, greedy)
        return []
    lines = [
        f"examples used: {stats.examples_used} of {stats.rows} distinct rows",
        f"SAT calls: {len(result.trace)}",
    ]
    if stats.settled_without_sat_call:
        depths = ", ".join(map(str, stats.settled_without_sat_call))
        lines.append(
            f"depth {depths}: a heuristic tree, re-grown at its last levels, was consistent "
            "(no SAT call)"
        )
    return lines


# ---------------------------------------------------------------------- box DP
def _boxes(task: Task, front: bool = False) -> Any:
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


def _report_boxes(result: SearchResult) -> list[str]:
    from ..task.result import BoxStats

    stats = result.stats
    if not isinstance(stats, BoxStats):
        return []
    return [
        f"boxes: {stats.boxes:,}, depths tabulated: 0-{stats.depths - 1}, {stats.seconds:.2f} s"
    ]


# ---------------------------------------------------------------------- Blossom
# Pair-count updates per second of the depth-two solver (measured on this kind of machine,
# with room to spare); used to size the features so a first tree comes within half the time.
_PAIR_UPDATES_PER_SECOND = 2e8


def _blossom_feature_cap(data: Prepared) -> int:
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


def _run_dp(
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


def _run_blossom(task: Task) -> SearchResult:
    from ..dp.blossom import solve_min_error

    return _run_dp(solve_min_error, task, task.data.binary(_blossom_feature_cap(task.data)).B)


# ---------------------------------------------------------------------- DL8.5, CA-DL8.5
def _dl85_rules() -> tuple[str, ...]:
    from ..dp.rules import RULES

    return RULES


def _dl85_schedules() -> tuple[str, ...]:
    from ..dp.rules import SCHEDULES

    return SCHEDULES


def _run_dl85(task: Task, rule: str | None = None) -> SearchResult:
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
    B = data.binary(_blossom_feature_cap(data)).B
    return _run_dp(solve_min_error, task, B, DL85Options(**options))


def _run_cadl85(task: Task) -> SearchResult:
    return _run_dl85(task, rule="discrepancy")


def _run_portfolio(task: Task) -> SearchResult:
    from ..dp.portfolio import PortfolioOptions, solve_min_error

    B = task.data.binary(_blossom_feature_cap(task.data)).B
    return _run_dp(solve_min_error, task, B, PortfolioOptions(n_jobs=task.n_jobs))


def _report_portfolio(result: SearchResult) -> list[str]:
    from ..task.result import PortfolioStats

    stats = result.stats
    if not isinstance(stats, PortfolioStats):
        return []
    names = {"blossom": "Blossom", "dl85": "DL8.5"}
    other = "CA-DL8.5" if stats.proven_by == "cadl85" else "DL8.5"
    lines = [f"time: Blossom {stats.blossom_seconds:.2f} s, {other} {stats.dl85_seconds:.2f} s"]
    if stats.proven_by:
        lines.append(f"optimality proven by {names.get(stats.proven_by, 'CA-DL8.5')}")
    if stats.dl85_seconds > 0:
        lines += _report_dl85(result)
    return lines


def _report_dl85(result: SearchResult) -> list[str]:
    from ..task.result import DL85Stats

    stats = result.stats
    if not isinstance(stats, DL85Stats):
        return []
    lines = [
        f"search nodes: {stats.nodes}, cache: {stats.cache_entries} branches "
        f"({stats.cache_mb:.1f} MB{', full' if stats.cache_full else ''}), "
        f"{stats.cache_hits} hits"
    ]
    if stats.restarts:
        lines.append(f"restarts: {stats.restarts}")
    return lines


_MAX_CACHE_MB = Param(
    "max_cache_mb",
    512,
    "cap in MB on the cache of solved branches; when full, new branches are recomputed "
    "instead of stored (still exact)",
    (Real(0, low_open=True),),
    metavar="MB",
)


# ---------------------------------------------------------------------- ConTree
def _run_contree(task: Task) -> SearchResult:
    if OBJECTIVES[task.objective].kind == CONSISTENCY:
        return _run_hybrid(task, use_sat=False)
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
    return _run_dp(solve_min_error, task, data.numeric(), options)


def _report_contree(result: SearchResult) -> list[str]:
    from ..task.result import ConTreeStats, HybridStats

    stats = result.stats
    if isinstance(stats, HybridStats):
        return _report_hybrid(result)
    if not isinstance(stats, ConTreeStats):
        return []
    return [
        f"splits evaluated: {stats.expansions}, depth-two solves: {stats.bottom_solves}, "
        f"cache: {stats.cache_entries} subproblems ({stats.cache_mb:.1f} MB"
        f"{', full' if stats.cache_full else ''}), {stats.cache_hits} hits"
    ]


# ---------------------------------------------------------------------- SAT and ConTree
def _run_hybrid(task: Task, use_sat: bool = True) -> SearchResult:
    from .hybrid import solve

    return solve(task, use_sat=use_sat)


def _report_hybrid(result: SearchResult) -> list[str]:
    """What each search settled (depths, and leaves for the size), which one proved the
    bound and found the tree, and the time each ran."""
    from ..task.result import HybridStats
    from .hybrid import NAMES

    stats = result.stats
    if not isinstance(stats, HybridStats):
        return []
    settled = []
    for proof in stats.proofs:
        if proof.by == "greedy":
            continue
        what = f"depth {proof.depth}" + (
            "" if proof.leaves is None else f" under {proof.leaves} leaves"
        )
        verdict = "found" if proof.answer == "found" else "none"
        settled.append(f"{what}: {verdict} ({NAMES[proof.by]}, {proof.seconds:.2f} s)")
    lines = []
    if settled:
        lines.append("settled: " + "; ".join(settled))
    who = []
    if stats.found_by:
        who.append(f"tree found by {NAMES[stats.found_by]}")
    if result.proven_optimal and stats.lower_bound_by:
        who.append(f"lower bound proven by {NAMES[stats.lower_bound_by]}")
    if who:
        lines.append(", ".join(who))
    if stats.sat is not None:
        sat = stats.sat
        lines.append(
            f"SAT: {stats.sat_seconds:.2f} s; SAT calls: {sat.sat_calls}; examples used: "
            f"{sat.examples_used} of {sat.rows} distinct rows; {stats.binary_features} binary "
            "features"
        )
    if stats.contree is not None:
        tree = stats.contree
        lines.append(
            f"ConTree: {stats.contree_seconds:.2f} s; splits evaluated: {tree.expansions}, "
            f"depth-two solves: {tree.bottom_solves}, cache: {tree.cache_entries} subproblems "
            f"({tree.cache_mb:.1f} MB{', full' if tree.cache_full else ''})"
        )
    return lines


# ---------------------------------------------------------------------- node budget
def _run_budget(task: Task) -> SearchResult:
    """The error objective within ``max_nodes`` nodes (:mod:`satdt.dp.budget`; no cap when
    None); without ``max_depth`` the depth is free within the cap (a tree of k branching
    nodes has depth at most k)."""
    from ..dp.budget import BudgetOptions, branching_budget, solve_min_error

    if task.max_nodes is not None and task.max_nodes < 1:
        raise InfeasibleError("no tree has fewer than 1 node: raise max_nodes")
    depth = task.max_depth
    if depth is None:  # run_search sends a task without depth and node cap elsewhere
        depth = branching_budget(task.max_nodes, 62)
    B = task.data.binary(_blossom_feature_cap(task.data)).B
    options = BudgetOptions(max_nodes=task.max_nodes, **task.options)
    return _run_dp(solve_min_error, task, B, options, depth=depth)


def _report_budget(result: SearchResult) -> list[str]:
    from ..task.result import BudgetStats

    stats = result.stats
    if not isinstance(stats, BudgetStats):
        return []
    return [
        f"branching nodes allowed: {stats.branching_budget}, depths solved: 0-"
        f"{stats.depths_done}; splits evaluated: {stats.expansions}, pair tables: "
        f"{stats.bottom_solves}, cache: {stats.cache_entries} subproblems"
        f"{' (emptied when full)' if stats.cache_full else ''}, {stats.cache_hits} hits"
    ]


# ---------------------------------------------------------------------- the table
METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            name="sat",
            objectives=("depth", "size"),
            input="binary",
            summary="incremental SAT with a counterexample-guided loop (Avellaneda 2020)",
            run=_run_sat,
            params=(
                Param(
                    "solver",
                    "glucose4",
                    "the SAT solver; race: max(n_jobs, 2) solvers on every call, the first "
                    "answer winning",
                    (Choice(_sat_solvers),),
                ),
                Param(
                    "counterexamples",
                    "per_leaf",
                    "misclassified rows added per round: per_leaf (the worst of each leaf), "
                    "first, all, or a number",
                    (Choice(_sat_policies), Integer(1)),
                ),
                Param(
                    "leaf_counter",
                    "totalizer",
                    "the cardinality encoding that counts labelled leaves for the size bound",
                    (Choice(_sat_counters),),
                    objectives=("size",),
                ),
                Param(
                    "size_search",
                    "descending",
                    "how the size bound moves between SAT calls",
                    (Choice(_sat_strategies),),
                    objectives=("size",),
                ),
            ),
            report=_report_sat,
            node_budget=("depth", "size"),
        ),
        Method(
            name="boxes",
            objectives=("depth", "size"),
            input="numeric",
            summary="DP over every box of the threshold grid, all at once per depth: proves minimum "
            "depth and size on columns with few values (what `auto` runs there)",
            run=_boxes,
            report=_report_boxes,
            node_budget=("depth", "size"),
        ),
        Method(
            name="hybrid",
            objectives=("depth", "size"),
            input="numeric",
            summary="SAT (from the first second) and ConTree as a decision procedure (once its "
            "kernels are loaded) in turns on one core, sharing every bound: proves minimum depth "
            "and size on numeric tables (what `auto` runs unless the box DP fits or values are "
            "missing)",
            run=_run_hybrid,
            params=(_MAX_CACHE_MB,),
            report=_report_hybrid,
            node_budget=("depth", "size"),
        ),
        Method(
            name="blossom",
            objectives=("error",),
            input="binary",
            summary="anytime depth-first DP with optimal depth-two subtrees (Demirovic et al.)",
            run=_run_blossom,
        ),
        Method(
            name="dl85",
            objectives=("error",),
            input="binary",
            summary="depth-first OR-AND search with a cache of solved branches (DL8.5, "
            "Aglin et al.)",
            run=_run_dl85,
            params=(_MAX_CACHE_MB,),
            report=_report_dl85,
        ),
        Method(
            name="cadl85",
            objectives=("error",),
            input="binary",
            summary="DL8.5 restarted under a pruning rule relaxed each time, complete and "
            "anytime (CA-DL8.5, Kiossou et al.)",
            run=_run_cadl85,
            params=(
                _MAX_CACHE_MB,
                Param(
                    "rule",
                    "discrepancy",
                    "what prunes a restart",
                    (Choice(_dl85_rules),),
                ),
                Param(
                    "relax",
                    "monotonic",
                    "how the rule relaxes between restarts",
                    (Choice(_dl85_schedules),),
                ),
                Param(
                    "relax_step",
                    None,
                    "the relaxation step, in the rule's unit: feature positions for "
                    "discrepancy/topk/topk_star (None: 1), purity or gain in bits for "
                    "purity/gain (None: 0.05)",
                    (NONE, Real(0, low_open=True)),
                    metavar="STEP",
                ),
            ),
            report=_report_dl85,
        ),
        Method(
            name="contree",
            objectives=("error", "depth", "size"),
            input="numeric",
            summary="DP with branch-and-bound over every threshold of the numeric columns, no "
            "binarisation (ConTree, Brita et al.); for depth and size, a decision procedure "
            "(is there a tree of depth k with no error?)",
            run=_run_contree,
            params=(
                _MAX_CACHE_MB,
                Param(
                    "max_gap",
                    0.0,
                    "permitted gap to the optimum, as a fraction of the rows' weight (0.01: "
                    "one per cent), as leaf_penalty is",
                    (
                        Real(0, 1, high_open=True),
                        Check(
                            f"an error count >= 1 (deprecated, removed in {REMOVED_IN})",
                            lambda value: is_number(value) and value >= 1,
                        ),
                    ),
                    objectives=("error",),
                    metavar="GAP",
                ),
            ),
            report=_report_contree,
            node_budget=("depth", "size"),
        ),
        Method(
            name="portfolio",
            objectives=("error",),
            input="binary",
            summary="DL8.5 with Blossom in slices on one core, "
            "sharing the incumbent; Blossom's share grows while its slices improve the tree and "
            "shrinks while they do not (what `auto` runs for `error` unless it picks `contree`); "
            "with n_jobs >= 2 "
            "DL8.5's root splits shared out among n_jobs processes (depth >= 4; below, DL8.5 on a "
            "second process), Blossom beside them; on a first run it starts with whichever "
            "search's kernels are compiled",
            run=_run_portfolio,
            report=_report_portfolio,
        ),
        Method(
            name="budget",
            objectives=("error",),
            input="binary",
            summary="the fewest errors within max_nodes nodes and max_depth: MurTree's recursion "
            "with a size dimension, every node count at once, depth-two subtrees from one pair "
            "table (what `auto` runs for `error` with max_nodes)",
            run=_run_budget,
            params=(_MAX_CACHE_MB,),
            report=_report_budget,
            node_budget=("error",),
        ),
    )
}


# Above this many binary features (every threshold of every column), ConTree on the numeric
# columns is faster than Blossom on their binarisation (benchmarks/continuous.py, docs/how-it-works/contree.md).
CONTREE_CROSSOVER = 500
# With a time limit, from this many rows on the portfolio is the better anytime search: on
# quantile thresholds it has good trees within seconds, where one depth-two subproblem of
# ConTree on every threshold can take longer than the limit (docs/how-it-works/minimum-error.md, "Which search").
CONTREE_TIMED_ROWS = 20_000


def choose_method(
    objective: str, data: Prepared | None = None, max_nodes: int | None = None
) -> str:
    """The method ``method="auto"`` runs for an objective (on these data, when given).

    The error objective under a node budget (``max_nodes``) runs ``budget``, the one error
    search that honours it.

    The consistency objectives run the box DP when every column has so few values that the
    grid has at most :data:`satdt.dp.boxes.AUTO_BOXES` boxes (and ``max_thresholds`` does not
    limit the thresholds), otherwise the portfolio of SAT and ConTree (``hybrid``); SAT alone
    when ``max_thresholds`` is set (ConTree searches every threshold) or values are missing.
    The error objective runs ConTree on the numeric columns when their thresholds would give
    more than :data:`CONTREE_CROSSOVER` binary features, ``max_thresholds`` does not limit
    them, and there is no time limit or fewer than :data:`CONTREE_TIMED_ROWS` rows;
    otherwise the portfolio of Blossom and DL8.5 on binary features. Data with missing
    values go to the methods over binary features (SAT, the portfolio): the box DP and
    ConTree search the numeric columns, which have no side for a missing value.
    """
    if max_nodes is not None and OBJECTIVES[objective].kind == ERROR:
        return "budget"
    if data is not None and data.has_missing:
        return "portfolio" if OBJECTIVES[objective].kind == ERROR else "sat"
    if OBJECTIVES[objective].kind != ERROR:
        if data is None:
            return "hybrid"
        if data.max_thresholds is not None:
            return "sat"
        from ..dp.boxes import AUTO_BOXES, box_count, box_table_mb  # NumPy only: no numba

        values = data.column_values()
        if box_count(values) <= AUTO_BOXES and box_table_mb(values) <= data.max_memory_mb / 2:
            return "boxes"
        return "hybrid"
    if (
        data is not None
        and data.max_thresholds is None
        and (data.deadline is None or _user_rows(data) < CONTREE_TIMED_ROWS)
        and data.full_threshold_count() > CONTREE_CROSSOVER
    ):
        return "contree"
    return "portfolio"


def _user_rows(data: Prepared) -> int:
    """The user's rows (with a cost matrix the searches read them rewritten as more rows of
    the same features, :mod:`satdt.prepare.costs`; ConTree merges those again)."""
    return len(data.y if data.original is None else data.original.y)


def candidates(objective: str, method: str = "auto") -> tuple[str, ...]:
    """The methods a fit with this objective and ``method`` may run: ``method`` itself, or
    (``"auto"``) every method :func:`choose_method` can return for the objective, whatever
    the data (what the sweep warms up before it measures a fit)."""
    if method != "auto":
        return (method,)
    if OBJECTIVES[objective].kind == ERROR:
        return ("portfolio", "contree", "budget")
    return ("hybrid", "sat", "boxes")


def methods_for(objectives: tuple[str, ...]) -> list[Method]:
    """The methods that solve at least one of these objectives, in table order."""
    return [m for m in METHODS.values() if set(m.objectives) & set(objectives)]


def method_params() -> dict[str, Param]:
    """Every method parameter by name (a name used by several methods means the same there)."""
    params: dict[str, Param] = {}
    for method in METHODS.values():
        for param in method.params:
            params.setdefault(param.name, param)
    return params


def _auto_for(objective: str, options: dict[str, Any], max_nodes: int | None) -> str:
    """What ``method="auto"`` runs before it sees the data: the method whose own options the
    user set (``solver`` means SAT), else :func:`choose_method`'s choice without data."""
    default = choose_method(objective, max_nodes=max_nodes)
    for candidate in (default, *(m.name for m in METHODS.values())):
        method = METHODS[candidate]
        if objective not in method.objectives:
            continue
        if max_nodes is not None and objective not in method.node_budget:
            continue
        own = method.params_for(objective)
        if any(options.get(p.name, p.default) != p.default for p in own):
            return candidate
    return default


def resolve_method(
    objective: str, method: str, options: dict[str, Any], max_nodes: int | None = None
) -> tuple[Method, dict[str, Any]]:
    """Check an objective, a method name and the method options; return the method to run.

    ``options`` are every method parameter as the user set them; those of other methods
    must keep their defaults. A node budget (``max_nodes``) needs a method that honours it
    under the objective (:attr:`Method.node_budget`), and ``budget`` needs one. Returns the
    method and its options that differ from their defaults (the search's own defaults are
    the same values).
    """
    if objective not in OBJECTIVES:
        raise ParameterError(f"objective must be one of {list(OBJECTIVES)}, got {objective!r}")
    if method != "auto" and method not in METHODS:
        raise ParameterError(f"method must be 'auto' or one of {list(METHODS)}, got {method!r}")
    chosen = METHODS[method if method != "auto" else _auto_for(objective, options, max_nodes)]
    if objective not in chosen.objectives:
        solvers = [m.name for m in METHODS.values() if objective in m.objectives]
        raise ParameterError(
            f"method {chosen.name!r} does not solve objective {objective!r}; "
            f"use one of {solvers} (or method='auto')"
        )
    budgeted = [m.name for m in METHODS.values() if objective in m.node_budget]
    if max_nodes is not None and objective not in chosen.node_budget:
        raise ParameterError(
            f"method {chosen.name!r} takes no node budget with objective {objective!r}, got "
            f"max_nodes={max_nodes}: use one of {budgeted} (or method='auto'), or leave "
            "max_nodes out"
        )
    own = {p.name: p for p in chosen.params_for(objective)}
    options = {name: _auto_is_default(name, value) for name, value in options.items()}
    for name, param in method_params().items():
        value = options.get(name, param.default)
        if name in own:
            param.check(value)
        elif value != param.default:
            users = [m.name for m in METHODS.values() if any(p.name == name for p in m.params)]
            raise ParameterError(
                f"{name} is an option of method {' / '.join(map(repr, users))}, not of "
                f"{chosen.name!r} with objective {objective!r}; leave it at {param.default!r}"
            )
    return chosen, {
        name: options[name]
        for name, param in own.items()
        if name in options and options[name] != param.default
    }


def _auto_is_default(name: str, value: Any) -> Any:
    """A method option given as ``"auto"``, the name its default had before 0.2: the default,
    with a FutureWarning."""
    param = method_params().get(name)
    if param is None or not (isinstance(value, str) and value == "auto"):
        return value
    warnings.warn(
        f"{name}='auto' is the default's old name: leave {name} out or write "
        f"{name}={param.default!r}; 'auto' is refused from satdt {REMOVED_IN}",
        FutureWarning,
        stacklevel=user_stacklevel(),
    )
    return param.default


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
        return _run_dl85(task, rule="discrepancy" if method.name == "cadl85" else None)
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
    B = data.binary(_blossom_feature_cap(data)).B
    _, group = np.unique(B, axis=0, return_inverse=True)
    group = group.ravel()
    weights = np.zeros((int(group.max()) + 1, data.n_classes))
    np.add.at(weights, (group, data.y), data.weight)
    return float(weights.sum() - weights.max(axis=1).sum())


def kernel_groups(names: Iterable[str] | None = None) -> list[str]:
    """The Numba kernel groups that these methods (default: all) run, in compile order."""
    from ..dp.kernels import GROUPS, in_order, kernels_of

    if names is None:
        return list(GROUPS)
    return in_order(g for name in names for option in kernels_of(name)(None) for g in option)


def warmup(
    names: Iterable[str] | None = None,
    report: Callable[[Any], None] | None = None,
    jobs: int | None = None,
) -> list[Any]:
    """Compile (or load from Numba's cache) the kernels of these methods (default: all) now,
    not at their first fit, on up to ``jobs`` processes at once (default: the cores, at most
    2); returns what was done per kernel group (:class:`satdt.dp.kernels.Compiled`)."""
    import os

    from ..dp.kernels import compile_groups

    jobs = min(os.cpu_count() or 1, 2) if jobs is None else jobs
    return compile_groups(kernel_groups(names), report, jobs=jobs)


def methods_table() -> str:
    """The table of methods of the README and the user guide, as markdown."""
    lines = ["| method | objectives | input | what it is | options |", "|---|---|---|---|---|"]
    for m in METHODS.values():
        options = ", ".join(f"`{p.name}`" for p in m.params) or "—"
        lines.append(
            f"| `{m.name}` | {', '.join(m.objectives)} | {m.input} features | {m.summary} | "
            f"{options} |"
        )
    return "\n".join(lines)
