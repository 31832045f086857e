"""The table of diagram searches: every route to an optimal decision diagram, in one place.

Each :class:`DiagramMethod` says which objectives it solves (``error``: objective (18) of
Florio et al.; ``size``: the fewest nodes of a consistent diagram), which splits, which of the
paper's extensions (``max_splits``, ``min_flow``, ``fairness``), which estimator options are
its own, and the function that runs it. :class:`~satdt.estimators.diagram.OptimalDiagramClassifier`,
``satdt diagram --method`` and the user guide's table of diagram searches (docs/guide/diagrams.md) read this table.

Every ``error`` route is anytime from the same two starts, recorded before it runs: the
paper's Step-1 heuristic and the best tree that fits the skeleton (a tree is a diagram; the
tree DP gives it in seconds). A route only ever improves on them.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.errors import InfeasibleError, ParameterError, TooLargeForSat
from ..models.diagram import Diagram
from ..models.diagram_checks import ErrorObjective, Extensions, objective, violation
from ..prepare.prepared import Prepared
from ..task.result import Recorder, SearchResult
from ..task.stats import Stats
from .runner import min_error_tree

EXTENSIONS = ("max_splits", "min_flow", "fairness")
# The starts' share of the time limit each, and their budget without one (seconds).
START_SHARE = 0.1
START_SECONDS = 5.0
#: ``auto`` runs MaxSAT on univariate splits up to this many clauses (estimated), else the MILP.
AUTO_MAXSAT_CLAUSES = 3_000_000
#: Memory per clause of the MaxSAT formula (Python lists, then the solver's copy; measured: about
#: 3.2 GB for ionosphere's 11 million clauses), against ``max_memory_mb``.
CLAUSE_BYTES = 300


@dataclass
class DiagramStats(Stats):
    """Counters of a diagram fit.

    The starts: ``heuristic_objective`` (Step 1) and ``tree_objective`` (the best tree that
    fits the skeleton; ``tree_depth`` its depth), with their seconds. The MILP: ``solver``
    (``""``: it did not run), ``status`` (``optimal``, ``time_limit``, ``infeasible``: nothing
    better than the start), ``mip_gap``, ``mip_nodes``. The SAT routes: ``sat_calls`` (oracle
    calls), ``examples`` (distinct rows in the formula).
    """

    heuristic_objective: float = float("nan")
    heuristic_seconds: float = 0.0
    tree_objective: float = float("nan")
    tree_depth: int = 0
    tree_seconds: float = 0.0
    solver: str = ""
    status: str = ""
    mip_gap: float = float("nan")
    mip_nodes: int = 0
    sat_calls: int = 0
    examples: int = 0


@dataclass
class DiagramTask:
    """What a route receives: the prepared data, the skeleton, the objective and its options.

    ``extensions`` are the paper's (``fairness`` masks the prepared rows). A route records
    every diagram it finds with :meth:`record` (in the user's units) and sets ``proven`` and
    ``lower_bound``.
    """

    data: Prepared
    widths: tuple[int, ...]
    objective: str
    alpha: float
    split: str
    extensions: Extensions = field(default_factory=Extensions)
    solver: str = "highs"
    heuristic_time: float | None = None
    seed: int = 0
    stats: DiagramStats = field(default_factory=DiagramStats)
    proven: bool = False
    lower_bound: float = 0.0
    step1: Diagram | None = None  # the Step-1 start in scaled units (the MILP's start)

    @property
    def recorder(self) -> Recorder:
        return self.data.recorder

    @property
    def deadline(self) -> float | None:
        return self.data.deadline

    def value(self, diagram: Diagram) -> float | None:
        """Objective (18) of a diagram in the user's units; None if it breaks an extension."""
        data = self.data
        broken = violation(diagram, data.X, data.y, data.weight, **self.extensions.as_dict())
        if broken is not None:
            return None
        return objective(diagram, data.X, data.y, self.alpha, self.widths, data.weight)

    def record(self, diagram: Diagram) -> float | None:
        """Record a diagram in the user's units if it meets the extensions; its value."""
        value = self.value(diagram)
        if value is not None:
            self.recorder.improve(self.user(diagram), value, mapped=True)
        return value

    def user(self, diagram: Diagram) -> Diagram:
        data = self.data
        return diagram.replace(
            classes=data.classes,
            feature_names=data.feature_names,
            indicator=list(data.schema.indicator),
        )

    def budget(self) -> float:
        """Seconds for one start: ``heuristic_time``, else 10 % of the time left, at most 5 s."""
        if self.heuristic_time is not None:
            return float(self.heuristic_time)
        left = self.data.time_left()
        return START_SECONDS if left is None else min(START_SECONDS, START_SHARE * max(left, 0.0))


@dataclass(frozen=True)
class DiagramMethod:
    """One route of the table."""

    name: str
    objectives: tuple[str, ...]
    splits: tuple[str, ...]
    extensions: tuple[str, ...]
    summary: str
    run: Callable[[DiagramTask], None]
    params: tuple[str, ...] = ()  # estimator options that only this route reads
    tree_methods: tuple[str, ...] = ("portfolio", "contree")  # their kernels: satdt warmup


# ---------------------------------------------------------------------- skeleton and trees
def complete_depth(widths: tuple[int, ...]) -> int:
    """The depth of the deepest complete tree that fits the skeleton (layer l holds 2**l)."""
    depth = 0
    while depth < len(widths) and widths[depth] >= 2**depth:
        depth += 1
    return depth


def is_complete(widths: tuple[int, ...]) -> bool:
    """Whether every tree of depth ``len(widths)`` fits the skeleton: then, with alpha = 0,
    the best diagram is the best tree of that depth (unfold any diagram into a tree of the
    same depth and predictions)."""
    return complete_depth(widths) == len(widths)


def fit_tree_diagram(
    X: np.ndarray,
    y: np.ndarray,
    weight: np.ndarray | None,
    n_classes: int,
    depth: int,
    seconds: float,
    simplify: bool = True,
) -> tuple[Diagram, SearchResult] | None:
    """The fewest-errors tree of depth ``depth`` (the tree search of ``method='auto'``, at most
    ``seconds``: :func:`satdt.search.runner.min_error_tree`) on ``X`` and the class indices
    ``y``, as a diagram (classes ``0..n_classes-1``; ``simplify``: equal subtrees merged) with
    the tree's search result; None when no tree came before the time ran out."""
    if seconds <= 0.01:
        return None
    result = min_error_tree(X, y, weight, depth, seconds if np.isfinite(seconds) else None)
    if result is None:
        return None
    found = result.model
    tree = Diagram.from_tree(found, n_features=X.shape[1])
    label = np.asarray(found.classes, dtype=np.int64)  # tree class index -> row label
    low, high = (
        np.where(arc < 0, -1 - label[-1 - np.minimum(arc, -1)], arc)
        for arc in (tree.low, tree.high)
    )
    diagram = tree.replace(low=low, high=high, classes=np.arange(n_classes))
    return (diagram.simplify() if simplify else diagram), result


def _tree_diagram(
    data: Prepared, depth: int, seconds: float, X: np.ndarray | None = None
) -> tuple[Diagram, SearchResult] | None:
    """:func:`fit_tree_diagram` on the prepared rows (``X`` default: the design matrix)."""
    X = data.X if X is None else X
    return fit_tree_diagram(X, data.y, data.weight, data.n_classes, depth, seconds)


def tree_start(task: DiagramTask) -> None:
    """Record the best tree that fits the skeleton (by objective (18), depths 1 .. the deepest
    complete one; the DP minimises errors at each depth, so each is that depth's best for
    alpha = 0 and a good start otherwise)."""
    stats, clock = task.stats, time.perf_counter()
    end = clock + task.budget()
    best = np.inf
    for depth in range(complete_depth(task.widths), 0, -1):
        found = _tree_diagram(task.data, depth, end - time.perf_counter())
        if found is None:
            break
        value = task.record(found[0])
        if value is not None and value < best:
            best, stats.tree_depth = value, depth
    stats.tree_objective = float(best) if np.isfinite(best) else float("nan")
    stats.tree_seconds = time.perf_counter() - clock


def step1_start(task: DiagramTask) -> None:
    """Record the paper's Step-1 construction heuristic (kept in scaled units for the MILP)."""
    from ..mip.heuristic import ConstructOptions, construct

    data, stats = task.data, task.stats
    clock = time.perf_counter()
    lo, scale = _scaling(data.X)
    start = construct(
        (data.X - lo) / scale,
        data.y,
        data.n_classes,
        task.widths,
        ErrorObjective(task.alpha, data.weight),
        ConstructOptions(split=task.split, time_budget=task.budget(), seed=task.seed),
        deadline=task.deadline,
    )
    task.step1 = start
    stats.heuristic_seconds = time.perf_counter() - clock
    value = task.record(start.unscale(lo, lo + scale))
    stats.heuristic_objective = float("nan") if value is None else value


def _scaling(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Min-max scaling of the columns: ``(X - lo) / scale`` lies in [0, 1]."""
    lo, hi = X.min(axis=0, initial=np.inf), X.max(axis=0, initial=-np.inf)
    return lo, np.where(hi > lo, hi - lo, 1.0)


# ---------------------------------------------------------------------- the routes
def _run_tree(task: DiagramTask) -> None:
    """A complete-tree skeleton with alpha = 0: the best tree of depth ``len(widths)``."""
    data = task.data
    left = data.time_left()
    found = _tree_diagram(data, len(task.widths), np.inf if left is None else left)
    if found is None:
        return
    diagram, result = found
    value = task.record(diagram)
    task.stats.tree_objective = float("nan") if value is None else value
    task.stats.tree_depth = len(task.widths)
    total = float(data.weight.sum())
    task.proven = bool(result.proven_optimal)
    task.lower_bound = float(result.lower_bound) / total if total > 0 else 0.0


def _run_maxsat(task: DiagramTask) -> None:
    """Objective (18) by MaxSAT over every threshold, incumbents from each oracle model."""
    from ..sat.diagram import MaxSatRun, estimated_clauses, in_design_units, minimum_error_diagram

    data = task.data
    size = estimated_clauses(len(data.y), task.widths, data.full_threshold_count(), data.n_classes)
    if size * CLAUSE_BYTES > data.max_memory_mb * 2**20:
        raise TooLargeForSat(
            f"the MaxSAT formula would hold about {size:,} clauses (about "
            f"{size * CLAUSE_BYTES / 2**20:,.0f} MB), over max_memory_mb={data.max_memory_mb:g}; "
            "use method='milp' or raise max_memory_mb"
        )
    view = data.binary()

    def design(diagram: Diagram) -> Diagram:
        return in_design_units(
            diagram, view.column, view.threshold, data.feature_names, list(data.schema.indicator)
        )

    found = minimum_error_diagram(
        view.B,
        data.y,
        data.n_classes,
        task.widths,
        ErrorObjective(task.alpha, data.weight),
        task.extensions,
        MaxSatRun(
            on_improve=lambda diagram, value: task.record(design(diagram)),
            deadline=task.deadline,
        ),
    )
    task.record(design(found.diagram))
    if view.binarizer.reduced_to_ is None:  # every threshold: exact for univariate splits
        task.proven, task.lower_bound = found.proven, float(found.lower_bound)
    task.stats.sat_calls, task.stats.examples = found.sat_calls, found.examples


def _run_milp(task: DiagramTask) -> None:
    """The paper's MILP from the best start (in scaled units), improving solutions recorded."""
    from ..mip.milp import MilpOptions, solve_diagram

    data, stats = task.data, task.stats
    lo, scale = _scaling(data.X)
    Xs = (data.X - lo) / scale
    left = data.time_left()
    if left is not None and left <= 0:
        return
    start, best = task.step1, task.recorder.best
    if best is not None and not best.value >= stats.heuristic_objective - 1e-12:
        start = _scaled(best.model, lo, scale)  # the tree start is better (a MIP start for it)
    stats.solver = task.solver
    options = MilpOptions(
        alpha=task.alpha,
        split=task.split,
        solver=task.solver,
        max_splits=task.extensions.max_splits,
        min_flow=task.extensions.min_flow,
        fairness=task.extensions.fairness,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # an unusable start is just dropped
        outcome = solve_diagram(
            Xs,
            data.y,
            data.n_classes,
            task.widths,
            options,
            sample_weight=data.weight,
            deadline=task.deadline,
            start=start,
            on_incumbent=lambda d, value, bound, elapsed: task.record(d.unscale(lo, lo + scale)),
        )
    stats.status, stats.mip_gap, stats.mip_nodes = outcome.status, outcome.gap, outcome.nodes
    stats.interrupted = outcome.status in ("time_limit", "interrupted")
    if outcome.diagram is not None:
        task.record(outcome.diagram.unscale(lo, lo + scale))
    task.proven = outcome.proven_optimal or (
        outcome.status == "infeasible" and task.recorder.best is not None
    )  # nothing beats the start it was given
    task.lower_bound = float(outcome.bound)
    if outcome.status == "infeasible" and task.recorder.best is None:
        raise InfeasibleError(
            "no diagram of this skeleton satisfies the constraints (fairness, min_flow, "
            "max_splits): relax them or widen the skeleton"
        )


def _scaled(diagram: Diagram, lo: np.ndarray, scale: np.ndarray) -> Diagram:
    """A univariate diagram in the user's units on min-max scaled features."""
    inner = diagram.feature >= 0
    threshold = diagram.threshold.copy()
    f = diagram.feature[inner]
    threshold[inner] = (threshold[inner] - lo[f]) / scale[f]
    return diagram.replace(threshold=threshold)


def _run_size(task: DiagramTask) -> None:
    """The fewest nodes of a consistent diagram by the counterexample-guided SAT loop."""
    from ..sat.diagram import SizeRun, in_design_units, minimum_size_diagram

    data = task.data
    view = data.binary()
    start = _tree_diagram(data, len(task.widths), task.budget(), X=view.B.astype(np.float64))
    found = minimum_size_diagram(
        view.B,
        data.y,
        data.n_classes,
        task.widths,
        SizeRun(deadline=task.deadline, start=None if start is None else start[0]),
    )
    diagram = in_design_units(
        found.diagram, view.column, view.threshold, data.feature_names, list(data.schema.indicator)
    )
    task.recorder.improve(task.user(diagram), float(found.objective), mapped=True)
    if view.binarizer.reduced_to_ is None:  # else optimal only over the quantile thresholds
        task.proven, task.lower_bound = found.proven, float(found.lower_bound)
    task.stats.sat_calls, task.stats.examples = found.sat_calls, found.examples


DIAGRAM_METHODS: dict[str, DiagramMethod] = {
    m.name: m
    for m in (
        DiagramMethod(
            name="milp",
            objectives=("error",),
            splits=("univariate", "multivariate"),
            extensions=EXTENSIONS,
            summary="the MILP (1)-(20) of Florio et al. with HiGHS or SCIP, from the best start; "
            "the only route for multivariate splits",
            run=_run_milp,
            params=("milp_solver",),
        ),
        DiagramMethod(
            name="maxsat",
            objectives=("error",),
            splits=("univariate",),
            extensions=EXTENSIONS,
            summary="objective (18) by MaxSAT (RC2) over every threshold, exact for univariate "
            "splits; each oracle model is an incumbent",
            run=_run_maxsat,
        ),
        DiagramMethod(
            name="tree",
            objectives=("error",),
            splits=("univariate",),
            extensions=(),
            summary="the tree DP at depth len(widths): exact when the skeleton holds every tree "
            "of that depth (widths 1, 2, 4, ..) and alpha = 0",
            run=_run_tree,
        ),
        DiagramMethod(
            name="sat",
            objectives=("size",),
            splits=("univariate",),
            extensions=(),
            summary="the smallest consistent diagram by incremental SAT with a "
            "counterexample-guided loop",
            run=_run_size,
            tree_methods=("portfolio",),
        ),
    )
}
ROUTES = ("auto", *DIAGRAM_METHODS)


def choose_route(
    objective: str,
    split: str,
    widths: tuple[int, ...],
    alpha: float,
    extensions: dict[str, Any],
    data: Prepared | None = None,
) -> str:
    """The route ``method='auto'`` runs (on these data, when given).

    ``size``: ``sat``. Multivariate splits: ``milp``. A complete-tree skeleton with alpha = 0
    and no extension: ``tree`` (exact). Otherwise ``maxsat`` (exact over every threshold) when
    its formula has at most :data:`AUTO_MAXSAT_CLAUSES` clauses (estimated), else ``milp``.
    """
    if objective == "size":
        return "sat"
    if split != "univariate":
        return "milp"
    if alpha == 0 and is_complete(widths) and all(v is None for v in extensions.values()):
        return "tree"
    if data is None:
        return "maxsat"
    from ..sat.diagram import estimated_clauses

    size = estimated_clauses(len(data.y), widths, data.full_threshold_count(), data.n_classes)
    return "maxsat" if size <= AUTO_MAXSAT_CLAUSES else "milp"


def check_route(
    method: str,
    objective: str,
    split: str,
    widths: tuple[int, ...],
    alpha: float,
    extensions: dict[str, Any],
    own: dict[str, Any],
) -> None:
    """Refuse what a route cannot do, naming the route that can. ``own`` holds the options
    that belong to one route (set to a value other than their default)."""
    explicit = method != "auto"
    if not explicit:
        method = choose_route(objective, split, widths, alpha, extensions)
        if method == "sat" and any(v is not None for v in extensions.values()):
            used = [k for k, v in extensions.items() if v is not None]
            raise ParameterError(
                f"objective='size' (method 'sat') takes none of {used}; they belong to "
                "objective='error'"
            )
    if method not in DIAGRAM_METHODS:
        raise ParameterError(f"method must be one of {list(ROUTES)}, got {method!r}")
    route = DIAGRAM_METHODS[method]
    if objective not in route.objectives:
        able = [m.name for m in DIAGRAM_METHODS.values() if objective in m.objectives]
        raise ParameterError(
            f"method {method!r} does not solve objective {objective!r}; use one of {able} "
            "(or method='auto')"
        )
    if split not in route.splits:
        raise ParameterError(
            f"method {method!r} learns {' / '.join(route.splits)} splits, not {split!r}; "
            "use method 'milp' (or 'auto')"
        )
    for name, value in extensions.items():
        if value is not None and name not in route.extensions:
            able = [m.name for m in DIAGRAM_METHODS.values() if name in m.extensions]
            raise ParameterError(
                f"{name} is an extension of method {' / '.join(map(repr, able))}, not of "
                f"{method!r}; leave it at None"
            )
    for name in own if explicit else ():  # auto: an option of a route it did not pick is idle
        if name not in route.params:
            owners = [m.name for m in DIAGRAM_METHODS.values() if name in m.params]
            raise ParameterError(
                f"{name} is an option of method {' / '.join(map(repr, owners))}, not of "
                f"{method!r}; leave it at 'auto'"
            )
    if method == "tree" and (alpha != 0 or not is_complete(widths)):
        raise ParameterError(
            "method 'tree' is exact only for a complete-tree skeleton (widths 1, 2, 4, ..) with "
            f"alpha = 0, got widths {widths} and alpha {alpha}; use 'maxsat' or 'auto'"
        )


def diagram_methods_table() -> str:
    """The user guide's table of diagram searches (docs/guide/diagrams.md), as markdown."""
    lines = [
        "| method | objective | splits | extensions | what it is | own options |",
        "|---|---|---|---|---|---|",
    ]
    for m in DIAGRAM_METHODS.values():
        lines.append(
            f"| `{m.name}` | {', '.join(m.objectives)} | {', '.join(m.splits)} | "
            f"{', '.join(m.extensions) or '—'} | {m.summary} | "
            f"{', '.join(f'`{p}`' for p in m.params) or '—'} |"
        )
    return "\n".join(lines)
