"""The bounds over time: the incumbents' values and the lower bound, and for a consistency
portfolio each depth settled, by which search and when."""

from __future__ import annotations

from typing import Any

from ._fit import Fit
from ._html import Html, capped, more, number, paragraph, seconds, section, table
from .svg import Marker, Series, chart_svg

MAX_INCUMBENTS = 30  # rows of the incumbents' table

#: what each search that settles a depth is, for people (HybridStats.proofs' ``by``)
SETTLED_BY = {
    "sat": "SAT (the counterexample-guided loop)",
    "contree": "ConTree (dynamic programme)",
    "blossom": "Blossom (dynamic programme)",
    "greedy": "the greedy tree (the first tree)",
    "classes": "one leaf per class (a bound)",
}


def _lower_bound(fit: Fit, proofs: list[Any]) -> Series:
    """The lower bound as it rose: from the depths refuted when the portfolio proved them
    (minimum depth), else only its value at the end."""
    result = fit.result
    points: list[tuple[float, float]] = []
    notes: list[str] = []
    if result.objective == "depth":
        bound = 0.0
        for proof in sorted(proofs, key=lambda p: p.seconds):
            if proof.answer == "none" and proof.leaves is None and proof.depth + 1 > bound:
                bound = float(proof.depth + 1)
                points.append((proof.seconds, bound))
                notes.append(f"depth {proof.depth} refuted by {proof.by} at {proof.seconds:.3g} s")
    at_end = f"lower bound {number(result.lower_bound)}, proven by the end ({result.runtime:.3g} s)"
    if not points:
        return Series(
            "lower bound proven by the end",
            "lower",
            [(result.runtime, result.lower_bound)],
            [at_end],
        )
    if result.lower_bound > points[-1][1]:
        points.append((result.runtime, result.lower_bound))
        notes.append(at_end)
    return Series("proven lower bound", "lower", points, notes)


def bounds_section(fit: Fit) -> Html:
    """The chart of the incumbents and the lower bound over time, the incumbents' table and
    the depths settled."""
    result = fit.result
    history = list(result.history)
    proofs = list(getattr(result.stats, "proofs", []) or [])
    incumbents = [(float(i.elapsed), float(i.value)) for i in history]
    if not incumbents:  # a result made by hand: only its final model is known
        incumbents = [(result.runtime, result.objective_value)]
    series = [
        Series(
            "best model found so far",
            "incumbent",
            incumbents,
            [f"{number(v)} found at {t:.3g} s" for t, v in incumbents],
        ),
        _lower_bound(fit, proofs),
    ]
    markers = []
    if result.objective == "depth":
        markers = [
            Marker(
                p.seconds,
                float(p.depth),
                "refuted" if p.answer == "none" else "found",
                f"depth {p.depth}: {'no consistent tree' if p.answer == 'none' else 'a tree'} "
                f"({SETTLED_BY.get(p.by, p.by)}) at {p.seconds:.3g} s",
            )
            for p in proofs
            if p.leaves is None
        ]
    y_name = {"depth": "depth", "size": "nodes"}.get(result.objective, "objective value")
    integers = result.objective in ("depth", "size")
    body = [chart_svg(series, markers, result.runtime, y_name, integers)]
    shown, left_out = capped(history, MAX_INCUMBENTS)
    body.append("<h3>Incumbents</h3>")
    if shown:
        value = [] if integers else [y_name]  # a depth or a node count is in the table already
        body.append(
            table(
                ("time", *value, "depth", "nodes"),
                (
                    (
                        seconds(i.elapsed),
                        *([] if integers else [number(i.value)]),
                        i.model.depth,
                        i.model.n_nodes,
                    )
                    for i in shown
                ),
            )
        )
    else:
        body.append(paragraph("The result holds no history of incumbents, only its final model."))
    body.append(more(left_out, "incumbents"))
    if proofs:
        body.append("<h3>Depths settled</h3>")
        body.append(
            paragraph(
                "The portfolio asks, depth by depth, whether a consistent tree exists; the "
                "first search to answer settles it, and every answer is shared."
            )
        )
        leaves = any(p.leaves is not None for p in proofs)  # a size search's questions
        body.append(
            table(
                (
                    "depth",
                    *(["fewer leaves than"] if leaves else []),
                    "answer",
                    "settled by",
                    "time",
                ),
                (
                    (
                        p.depth,
                        *([p.leaves if p.leaves is not None else ""] if leaves else []),
                        "no consistent tree" if p.answer == "none" else "a consistent tree",
                        SETTLED_BY.get(p.by, p.by),
                        seconds(p.seconds),
                    )
                    for p in proofs
                ),
            )
        )
    return section(
        "bounds",
        "Bounds over time",
        "The blue steps are the best model found so far, the red dashed steps the lower bound "
        "proven so far: every model is at least that good, so where they meet the search has "
        "proved its model optimal. Hover a dot for its time.",
        body,
    )
