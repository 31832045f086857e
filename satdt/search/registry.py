"""The table of searches: every tree method satdt offers, in one place.

Each :class:`Method` says which objectives it solves, which view of the data it reads
(binary features or the numeric design matrix), its own parameters with their defaults and
checks, the function that runs it (:mod:`satdt.search.runs`) and the statistics it returns
(:mod:`satdt.task.stats`). The estimators, the command line (``--method`` choices, flags,
help), :func:`satdt.warmup` and the README's table of methods all read this table; which
Numba kernel groups a method runs on is said by :func:`satdt.dp.kernels.kernels_of`, what the
command line prints about its work by :mod:`satdt.cli.reports`. Search modules are imported
only when a method runs, so importing this table stays cheap.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..core.errors import REMOVED_IN, ParameterError, user_stacklevel
from ..core.params import NONE, Check, Choice, Integer, Param, Real, is_number
from ..task.objectives import OBJECTIVES
from ..task.result import SearchResult
from ..task.spec import Task
from ..task.stats import (
    BoxStats,
    BudgetStats,
    ConTreeStats,
    DL85Stats,
    DPStats,
    HybridStats,
    PortfolioStats,
    SatStats,
    Stats,
)
from .auto import choose_method
from .runs import (
    run_blossom,
    run_boxes,
    run_budget,
    run_cadl85,
    run_contree,
    run_dl85,
    run_hybrid,
    run_portfolio,
    run_sat,
)


@dataclass(frozen=True)
class Method:
    """One search of the table."""

    name: str
    objectives: tuple[str, ...]
    input: str  # "binary" or "numeric"
    summary: str
    run: Callable[[Task], SearchResult]
    # the statistics its results carry (the command line's report of each: satdt.cli.reports)
    stats: tuple[type[Stats], ...]
    params: tuple[Param, ...] = ()
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


# ---------------------------------------------------------------------- DL8.5, CA-DL8.5
def _dl85_rules() -> tuple[str, ...]:
    from ..dp.rules import RULES

    return RULES


def _dl85_schedules() -> tuple[str, ...]:
    from ..dp.rules import SCHEDULES

    return SCHEDULES


_MAX_CACHE_MB = Param(
    "max_cache_mb",
    512,
    "cap in MB on the cache of solved branches; when full, new branches are recomputed "
    "instead of stored (still exact)",
    (Real(0, low_open=True),),
    metavar="MB",
)


# ---------------------------------------------------------------------- the table
METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            name="sat",
            objectives=("depth", "size"),
            input="binary",
            summary="incremental SAT with a counterexample-guided loop (Avellaneda 2020)",
            run=run_sat,
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
            stats=(SatStats,),
            node_budget=("depth", "size"),
        ),
        Method(
            name="boxes",
            objectives=("depth", "size"),
            input="numeric",
            summary="DP over every box of the threshold grid, all at once per depth: proves minimum "
            "depth and size on columns with few values (what `auto` runs there)",
            run=run_boxes,
            stats=(BoxStats,),
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
            run=run_hybrid,
            params=(_MAX_CACHE_MB,),
            stats=(HybridStats,),
            node_budget=("depth", "size"),
        ),
        Method(
            name="blossom",
            objectives=("error",),
            input="binary",
            summary="anytime depth-first DP with optimal depth-two subtrees (Demirovic et al.)",
            run=run_blossom,
            stats=(DPStats,),
        ),
        Method(
            name="dl85",
            objectives=("error",),
            input="binary",
            summary="depth-first OR-AND search with a cache of solved branches (DL8.5, "
            "Aglin et al.)",
            run=run_dl85,
            params=(_MAX_CACHE_MB,),
            stats=(DL85Stats,),
        ),
        Method(
            name="cadl85",
            objectives=("error",),
            input="binary",
            summary="DL8.5 restarted under a pruning rule relaxed each time, complete and "
            "anytime (CA-DL8.5, Kiossou et al.)",
            run=run_cadl85,
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
            stats=(DL85Stats,),
        ),
        Method(
            name="contree",
            objectives=("error", "depth", "size"),
            input="numeric",
            summary="DP with branch-and-bound over every threshold of the numeric columns, no "
            "binarisation (ConTree, Brita et al.); for depth and size, a decision procedure "
            "(is there a tree of depth k with no error?)",
            run=run_contree,
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
            stats=(ConTreeStats, HybridStats),
            node_budget=("depth", "size"),
        ),
        Method(
            name="portfolio",
            objectives=("error",),
            input="binary",
            summary="DL8.5 with Blossom in slices on one core, "
            "sharing the incumbent; Blossom's share grows while its slices improve the tree and "
            "shrinks while they do not; once DL8.5 is behind the time limit, CA-DL8.5's top-k and "
            "discrepancy searches join them (what `auto` runs for `error` unless it picks "
            "`contree`); "
            "with n_jobs >= 2 "
            "DL8.5's root splits shared out among n_jobs processes (depth >= 4; below, DL8.5 on a "
            "second process), Blossom beside them; on a first run it starts with whichever "
            "search's kernels are compiled",
            run=run_portfolio,
            stats=(PortfolioStats,),
        ),
        Method(
            name="budget",
            objectives=("error",),
            input="binary",
            summary="the fewest errors within max_nodes nodes and max_depth: MurTree's recursion "
            "with a size dimension, every node count at once, depth-two subtrees from one pair "
            "table (what `auto` runs for `error` with max_nodes)",
            run=run_budget,
            params=(_MAX_CACHE_MB,),
            stats=(BudgetStats,),
            node_budget=("error",),
        ),
    )
}


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
