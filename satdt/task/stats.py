"""Each search's counters, typed."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..models.tree import Tree

if TYPE_CHECKING:
    pass


@dataclass
class Stats:
    """Counters every method has; methods extend it with their own (see ``as_dict``)."""

    interrupted: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The counters as a JSON-ready dictionary."""
        return asdict(self)


@dataclass
class SatStats(Stats):
    """Counters of the counterexample-guided SAT searches."""

    rows: int = 0
    binary_features: int = 0
    sat_calls: int = 0
    examples_used: int = 0
    solve_time: float = 0.0
    settled_without_sat_call: list[int] = field(default_factory=list)


@dataclass
class GrowingStats(SatStats):
    """Counters of a SAT search whose rows arrive (``partial_fit``, ``fit_teacher``), for one call.

    ``rows`` counts the distinct rows so far, ``examples_used`` the rows any formula holds so
    far, ``sat_calls`` and ``solve_time`` this call's; ``new_rows`` the distinct rows this call
    brought (a batch's new rows, a teacher's counterexamples), ``tree_kept`` whether the tree
    classified them all (no SAT call), ``questions`` the teacher's answers asked for, and
    ``rows_seen`` every row given so far, repeated ones included.
    """

    new_rows: int = 0
    tree_kept: bool = False
    questions: int = 0
    rows_seen: int = 0


@dataclass
class DPStats(Stats):
    """Counters of the dynamic-programming searches over binary features."""

    rows: int = 0
    distinct_rows: int = 0
    features: int = 0
    features_used: int = 0
    irreducible_error: float = 0.0
    expansions: int = 0
    bottom_solves: int = 0
    backtracks: int = 0
    cuts: int = 0
    similarity_cuts: int = 0
    complete_trees: int = 0


@dataclass
class DL85Stats(DPStats):
    """Counters of DL8.5 and CA-DL8.5: search nodes, the cache of solved branches, restarts.

    ``cache_full`` says that the cache reached ``max_cache_mb`` and stopped storing new
    branches (those are recomputed when met again; the search stays exact).
    ``support_cuts`` counts the splits cut by the leaf-support bound (no depth limit only).
    """

    nodes: int = 0
    support_cuts: int = 0
    cache_hits: int = 0
    cache_entries: int = 0
    cache_mb: float = 0.0
    cache_full: bool = False
    restarts: int = 0


@dataclass
class BudgetStats(DPStats):
    """Counters of the node budget search (:mod:`satdt.dp.budget`).

    ``expansions`` counts the splits evaluated at depths of three or more, ``bottom_solves``
    the pair tables computed (one matrix product each); ``cuts`` the splits of nodes of depth
    four or more and the subproblems cut by their bounds unsearched, ``similarity_cuts`` the
    splits of three-level nodes skipped uncounted (by their children's leaves and single
    splits, or by the similarity bound); ``branching_budget`` is the most
    branching nodes allowed, ``depths_done`` the deepest depth solved. ``cache_full`` says
    the cache of subproblems reached ``max_cache_mb`` at least once and was emptied.
    """

    branching_budget: int = 0
    depths_done: int = 0
    cache_hits: int = 0
    cache_entries: int = 0
    cache_full: bool = False


@dataclass
class ConTreeStats(DPStats):
    """Counters of ConTree.

    ``expansions`` counts evaluated splits at depths of three or more, ``bottom_solves`` the
    depth-two (or depth-one) subproblems solved by a kernel, ``d2_splits`` the D2Split calls,
    ``cuts`` the split indices pruned by the interval rules and the similarity bound.
    ``cache_full`` says the cache reached ``max_cache_mb`` and stopped storing.
    """

    d2_splits: int = 0
    cache_hits: int = 0
    cache_entries: int = 0
    cache_mb: float = 0.0
    cache_full: bool = False


@dataclass
class BoxStats(Stats):
    """Counters of the box dynamic programme (:mod:`satdt.dp.boxes`): the boxes of the
    threshold grid, the depths tabulated (0 .. ``depths - 1``) and the seconds it took."""

    boxes: int = 0
    depths: int = 1
    seconds: float = 0.0


@dataclass
class PortfolioStats(DL85Stats):
    """The portfolio of Blossom and CA-DL8.5 (``method="auto"`` for the error objective).

    The inherited counters are CA-DL8.5's (Blossom's alone when it finished in its first
    slice), ``blossom`` holds Blossom's; the seconds each search ran (``restricted_seconds``:
    CA-DL8.5's restricted searches beside them on one core), and which one proved the optimum
    (``""``: not proven).
    """

    blossom: DPStats | None = None
    blossom_seconds: float = 0.0
    dl85_seconds: float = 0.0
    restricted_seconds: float = 0.0
    proven_by: str = ""


@dataclass
class Decision:
    """What one slice of a consistency decision found out: ``status`` is ``"SAT"`` (``tree``
    holds a consistent tree of at most the depth asked), ``"UNSAT"`` (proven: none exists) or
    ``"UNKNOWN"`` (the slice ended first; ``tree``, if any, is a consistent tree better than
    the bound it ran under, not proven the best)."""

    status: str
    tree: Tree | None = None


@dataclass
class ImproveStats(Stats):
    """Counters of the local improvement of a consistent tree (:mod:`satdt.dp.improve`).

    ``start_depth`` and ``depth`` are the incumbent's depth when it began and now;
    ``passes`` counts the passes (one target depth, one time budget per solve),
    ``improvements`` the times the depth fell, ``solves`` the subtrees re-solved exactly
    (ConTree's calls), ``replaced`` those replaced by a shallower one, ``resplits`` the nodes
    given a new split. Less to search: of the ``thresholds`` of the subproblems solved (their
    rows' neighbouring values), ``thresholds_dropped`` lay between values of one class;
    ``rows_merged`` rows became identical to another, ``columns_dropped`` columns had a single
    value or repeated an earlier one.
    """

    start_depth: int = 0
    depth: int = 0
    passes: int = 0
    improvements: int = 0
    solves: int = 0
    replaced: int = 0
    resplits: int = 0
    thresholds: int = 0
    thresholds_dropped: int = 0
    rows_merged: int = 0
    columns_dropped: int = 0


@dataclass
class CoreStats(Stats):
    """Counters of the lower bounds from cores (:mod:`satdt.dp.cores`).

    ``decisions`` counts ConTree's completed decisions on a core, ``rows`` the core's rows
    now, ``cores`` each depth refuted with the rows of the core that refuted it; of the
    table's thresholds, the core's own ``thresholds`` are searched and ``thresholds_dropped``
    are not (they split the core as one of its own does).
    """

    decisions: int = 0
    rows: int = 0
    cores: list[tuple[int, int]] = field(default_factory=list)
    thresholds: int = 0
    thresholds_dropped: int = 0


# The searches a consistency portfolio's proofs name (Proof.by), as people read them.
SEARCH_NAMES = {
    "sat": "SAT",
    "contree": "ConTree",
    "blossom": "Blossom on quantile thresholds",
    "cores": "ConTree on a core of rows",
    "improve": "local improvement",
    "greedy": "the greedy tree",
    "classes": "classes",
}


@dataclass
class Proof:
    """One question a consistency search settled: is there a consistent tree of depth at most
    ``depth`` (and, when ``leaves`` is set, of fewer than ``leaves`` leaves)? ``answer`` is
    ``"found"`` (a tree) or ``"none"`` (proven: no such tree), ``by`` the search that settled
    it (``"sat"``, ``"contree"``, ``"greedy"`` for the first tree, ``"classes"`` for the
    bound one leaf per class gives) and ``seconds`` when, from the start of the fit."""

    depth: int
    answer: str
    by: str
    seconds: float
    leaves: int | None = None


@dataclass
class HybridStats(Stats):
    """Counters of the consistency portfolio (:mod:`satdt.search.hybrid`): SAT over binary features
    and ConTree's decision procedure over the numeric columns, in slices on one core.

    ``proofs`` lists every question settled, in order (:class:`Proof`); ``lower_bound_by`` and
    ``found_by`` name the search that proved the final lower bound and the one that found the
    returned tree; ``sat_seconds`` and ``contree_seconds`` the time each ran (ConTree's
    includes ranking the columns); ``sat`` and ``contree`` their own counters (None when that
    search did not run: SAT where the features of every threshold would not fit, ConTree
    while its kernels were loading).
    """

    rows: int = 0
    binary_features: int = 0
    proofs: list[Proof] = field(default_factory=list)
    lower_bound_by: str = ""
    found_by: str = ""
    sat_seconds: float = 0.0
    contree_seconds: float = 0.0
    arm_seconds: dict[str, float] = field(default_factory=dict)
    sat: SatStats | None = None
    contree: ConTreeStats | None = None
    improve: ImproveStats | None = None
    cores: CoreStats | None = None


@dataclass
class Preparation:
    """What data preparation did: the features a search saw and how they were chosen."""

    rows: int = 0
    binary_features_total: int = 0
    binary_features: int = 0
    binarization: str = ""
    relabelled_rows: int = 0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
