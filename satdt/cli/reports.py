"""What the command line prints about each search's work: one function per statistics class.

A search returns its counters as a typed :class:`~satdt.task.stats.Stats` (each method of the
table of searches says which, :attr:`satdt.search.registry.Method.stats`); this module turns
each into the summary's lines, as scikit-learn's ``export_text`` turns a tree into text: the
library computes, the command line words. :func:`search_lines` finds the lines of a result's
statistics by their class (its closest ancestor with a report), :func:`diagram_lines` those of
a diagram route's. A new search adds its statistics class and one function here (the test of
the table of searches fails otherwise).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..task.born_again import BornAgainSearchStats
from ..task.objectives import OBJECTIVES
from ..task.result import SearchResult
from ..task.stats import (
    SEARCH_NAMES,
    BoxStats,
    BudgetStats,
    ConTreeStats,
    CoreStats,
    DL85Stats,
    DPStats,
    GrowingStats,
    HybridStats,
    ImproveStats,
    PortfolioStats,
    SatStats,
    Stats,
)

# The most moments a summary's line of bounds over time shows (the first ones and the last).
MAX_MOMENTS = 12


def bounds_over_time(result: SearchResult) -> list[tuple[float, float, float]]:
    """``(seconds, lower bound, upper bound)`` at each moment either changed: the proven lower
    bounds (``result.lower_bounds``) beside the incumbents (``result.history``); the upper
    bound is infinite before the first incumbent (the line of the summary starts at it)."""
    changes = sorted(
        [(b.elapsed, 0, b.value) for b in result.lower_bounds]
        + [(i.elapsed, 1, i.value) for i in result.history]
    )
    lower, upper = 0.0, float("inf")
    moments: list[tuple[float, float, float]] = []
    for seconds, which, value in changes:
        if which == 0:
            lower = max(lower, value)
        else:
            upper = min(upper, value)
        if moments and moments[-1][0] == seconds:
            moments.pop()
        moments.append((seconds, lower, upper))
    return moments


def _bounds_line(result: SearchResult) -> list[str]:
    """The summary's line of the bounds over time (none without a lower bound recorded)."""
    if not result.lower_bounds:
        return []
    moments = [moment for moment in bounds_over_time(result) if moment[2] < float("inf")]
    shown = [f"{s:.2f} s: {lo:g}-{hi:g}" for s, lo, hi in moments]
    if len(shown) > MAX_MOMENTS:
        kept = MAX_MOMENTS // 2
        shown = [*shown[:kept], f"({len(shown) - 2 * kept} more)", *shown[-kept:]]
    unit = OBJECTIVES[result.objective].unit
    return [f"bounds over time ({unit}, lower-upper): " + "; ".join(shown)]


def _sat(result: SearchResult, stats: SatStats) -> list[str]:
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
    return lines + _bounds_line(result)


def _growing(result: SearchResult, stats: GrowingStats) -> list[str]:
    """A call of partial_fit or fit_teacher: the rows it brought, whether the tree kept."""
    lines = _sat(result, stats)
    if stats.questions:
        lines.append(f"teacher: {stats.questions} questions, {stats.new_rows} counterexamples")
    else:
        lines.append(f"new rows: {stats.new_rows} ({stats.rows_seen} given so far)")
    if stats.tree_kept:
        lines.append("the tree classified every new row: kept, no SAT call")
    return lines


def _boxes(result: SearchResult, stats: BoxStats) -> list[str]:
    return [
        f"boxes: {stats.boxes:,}, depths tabulated: 0-{stats.depths - 1}, {stats.seconds:.2f} s"
    ]


def _dp(result: SearchResult, stats: DPStats) -> list[str]:
    return [
        f"splits evaluated: {stats.expansions}, depth-two solves: {stats.bottom_solves}, "
        f"features used: {stats.features_used} of {stats.features}"
    ]


def _dl85(result: SearchResult, stats: DL85Stats) -> list[str]:
    lines = [
        f"search nodes: {stats.nodes}, cache: {stats.cache_entries} branches "
        f"({stats.cache_mb:.1f} MB{', full' if stats.cache_full else ''}), "
        f"{stats.cache_hits} hits"
    ]
    if stats.restarts:
        lines.append(f"restarts: {stats.restarts}")
    return lines


def _portfolio(result: SearchResult, stats: PortfolioStats) -> list[str]:
    names = {"blossom": "Blossom", "dl85": "DL8.5"}
    other = "CA-DL8.5" if stats.proven_by == "cadl85" else "DL8.5"
    line = f"time: Blossom {stats.blossom_seconds:.2f} s, {other} {stats.dl85_seconds:.2f} s"
    if stats.restricted_seconds > 0:
        line += f", CA-DL8.5 restricted (top-k, discrepancy) {stats.restricted_seconds:.2f} s"
    lines = [line]
    if stats.proven_by:
        lines.append(f"optimality proven by {names.get(stats.proven_by, 'CA-DL8.5')}")
    if stats.dl85_seconds > 0:
        lines += _dl85(result, stats)
    return lines


def _contree(result: SearchResult, stats: ConTreeStats) -> list[str]:
    return [
        f"splits evaluated: {stats.expansions}, depth-two solves: {stats.bottom_solves}, "
        f"cache: {stats.cache_entries} subproblems ({stats.cache_mb:.1f} MB"
        f"{', full' if stats.cache_full else ''}), {stats.cache_hits} hits"
    ]


def _improve(result: SearchResult, stats: ImproveStats) -> list[str]:
    """The local improvement: the depths, the subtrees re-solved, what the merged values saved."""
    if stats.solves == 0:
        return []
    return [
        f"local improvement: depth {stats.start_depth} -> {stats.depth} "
        f"({stats.improvements} times lower, {stats.passes} passes); subtrees re-solved: "
        f"{stats.solves}, {stats.replaced} replaced, {stats.resplits} new splits",
        f"less to search: {stats.thresholds_dropped:,} of {stats.thresholds:,} thresholds "
        f"between values of one class dropped, {stats.rows_merged} rows merged, "
        f"{stats.columns_dropped} columns dropped",
    ]


def _cores(result: SearchResult, stats: CoreStats) -> list[str]:
    """The lower bounds from cores: each depth refuted and the rows that refuted it."""
    if stats.decisions == 0:
        return []
    refuted = ", ".join(f"depth {depth} on {rows}" for depth, rows in stats.cores)
    return [
        f"cores: {stats.decisions} decisions; refuted {refuted or 'none'}; core of "
        f"{stats.rows} rows now, {stats.thresholds:,} thresholds searched "
        f"({stats.thresholds_dropped:,} of the table's dropped)"
    ]


def _hybrid(result: SearchResult, stats: HybridStats) -> list[str]:
    """What each search settled (depths, and leaves for the size), which one proved the
    bound and found the tree, and the time each ran."""
    settled = []
    for proof in stats.proofs:
        if proof.by == "greedy":
            continue
        what = f"depth {proof.depth}" + (
            "" if proof.leaves is None else f" under {proof.leaves} leaves"
        )
        verdict = "found" if proof.answer == "found" else "none"
        settled.append(f"{what}: {verdict} ({SEARCH_NAMES[proof.by]}, {proof.seconds:.2f} s)")
    lines = []
    if settled:
        lines.append("settled: " + "; ".join(settled))
    who = []
    if stats.found_by:
        who.append(f"tree found by {SEARCH_NAMES[stats.found_by]}")
    if result.proven_optimal and stats.lower_bound_by:
        who.append(f"lower bound proven by {SEARCH_NAMES[stats.lower_bound_by]}")
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
    if stats.cores is not None:
        lines += _cores(result, stats.cores)
    if stats.improve is not None:
        lines += _improve(result, stats.improve)
    return lines + _bounds_line(result)


def _budget(result: SearchResult, stats: BudgetStats) -> list[str]:
    return [
        f"branching nodes allowed: {stats.branching_budget}, depths solved: 0-"
        f"{stats.depths_done}; splits evaluated: {stats.expansions}, pair tables: "
        f"{stats.bottom_solves}, cache: {stats.cache_entries} subproblems"
        f"{' (emptied when full)' if stats.cache_full else ''}, {stats.cache_hits} hits"
    ]


def _born_again(result: SearchResult, stats: BornAgainSearchStats) -> list[str]:
    """The route, the grid, what each route did, and how the tree was re-checked."""
    grid = f"{stats.cells:,.0f}" if stats.cells < 1e15 else f"{stats.cells:.3g}"
    lines = [
        f"forest: {stats.trees} trees over {stats.features} features; grid: {grid} cells "
        f"(the grid route takes at most {stats.max_cells:,})"
    ]
    if stats.grid is not None:
        g = stats.grid
        lines.append(
            f"route: grid (cell programme): {g.filtered_cells:,} cells after filtering, "
            f"{g.axes} axes; regions solved: {g.expansions:,}, memo hits: {g.memo_hits:,}, "
            f"{g.seconds:.2f} s"
        )
    if stats.sat is not None:
        s = stats.sat
        refuted = ", ".join(map(str, s.depths_refuted)) or "none"
        lines.append(
            f"route: SAT on sampled cells: greedy faithful tree of depth {stats.greedy_depth} "
            f"({stats.greedy_leaves} leaves); SAT calls: {s.sat_calls}, cells sampled: "
            f"{s.samples}, counterexamples: {s.counterexamples}, depths refuted: {refuted}, "
            f"{s.seconds:.2f} s"
        )
    if stats.route == "greedy":
        lines.append(
            "route: the greedy faithful tree (the kernels were still compiling at the time "
            "limit: a first run; later runs load them)"
        )
    if stats.faithful_by == "sat":
        lines.append(
            "faithful to the forest: proven leaf box by leaf box by the SAT search, "
            "before it took the tree"
        )
    else:
        where = (
            "on every cell of the grid" if stats.faithful_by == "grid" else "leaf box by leaf box"
        )
        lines.append(f"faithful to the forest: proven {where} ({stats.check_seconds:.2f} s)")
    return lines


# Each statistics class's lines (a subclass without its own takes its closest ancestor's).
REPORTS: dict[type[Stats], Callable[[SearchResult, Any], list[str]]] = {
    SatStats: _sat,
    GrowingStats: _growing,
    BoxStats: _boxes,
    DPStats: _dp,
    DL85Stats: _dl85,
    PortfolioStats: _portfolio,
    ConTreeStats: _contree,
    HybridStats: _hybrid,
    ImproveStats: _improve,
    CoreStats: _cores,
    BudgetStats: _budget,
    BornAgainSearchStats: _born_again,
}


def report_of(stats_class: type[Stats]) -> Callable[[SearchResult, Any], list[str]] | None:
    """The report function of a statistics class: its own, else its closest ancestor's
    (``None`` for the plain :class:`~satdt.task.stats.Stats` of a search that did not run)."""
    for cls in stats_class.__mro__:
        if cls in REPORTS:
            return REPORTS[cls]
    return None


def search_lines(result: SearchResult) -> list[str]:
    """The summary's lines about the search's work, from its statistics (none when the tree
    came before any search: one class, a greedy tree that the time limit kept)."""
    report = report_of(type(result.stats))
    return [] if report is None else report(result, result.stats)


def background_lines(result: SearchResult) -> list[str]:
    """What a first run had compiled in the background (none when nothing was: the kernels
    were in the cache, or the search needed none, as SAT)."""
    states = result.compiled_in_background
    if not states:
        return []
    words = {
        "compiled": "compiled",
        "compiling": "still compiling",
        "failed": "failed (satdt-compile.log in Numba's cache folder says why)",
    }
    parts = []
    for state, phrase in words.items():
        groups = [group for group, seen in states.items() if seen == state]
        if groups:
            parts.append(f"{phrase}: {', '.join(groups)}")
    later = "; later runs load them from Numba's cache" if set(states.values()) - {"failed"} else ""
    return [f"first run: kernels in the background ({'; '.join(parts)}){later}"]


def diagram_lines(method: str, stats: Any) -> list[str]:
    """A diagram route's own lines: the MILP's solver, status, gap and nodes; the SAT and MaxSAT
    routes' calls and rows encoded."""
    if method == "milp":
        if not stats.solver:
            return []
        return [
            f"MILP ({stats.solver}): {stats.status}, gap {stats.mip_gap:.3g}, "
            f"{stats.mip_nodes} nodes"
        ]
    if method in ("maxsat", "sat"):
        return [f"SAT calls: {stats.sat_calls}, distinct rows encoded: {stats.examples}"]
    return []
