"""The counterexample-guided loop step by step (Algorithm 3 of Avellaneda): one step per SAT
call, from the :class:`~satdt.task.events.SatCall` events of the result."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..plot.layout import model_picture
from ._fit import Fit
from ._html import Html, capped, esc, more, not_applicable, paragraph, section, table
from .svg import picture_svg

MAX_STEPS = 200  # SAT calls shown one by one: the first and the last halves, the middle counted
MAX_ROWS_ADDED = 12  # counterexamples listed per step
PICTURE_BUDGET = 600_000  # characters of the steps' tree pictures; later trees as text
STEP_SCALE = 0.7  # the steps' trees, relative to their own size


def _status_text(call: Any, wrong: float | None) -> str:
    """What one SAT call's answer means, in a sentence."""
    bound = f"of depth at most {call.depth}"
    if call.max_leaves is not None:
        bound += f" and at most {call.max_leaves} leaves"
    rows = f"the {call.n_examples} rows encoded"
    if call.status == "UNSAT":
        return (
            f"UNSAT: no tree {bound} classifies {rows}, so none classifies them all: this "
            "bound is refuted."
        )
    if call.status != "SAT":
        return "Stopped before an answer: the time limit, or the end of SAT's turn in a portfolio."
    found = f"SAT: the solver found a tree {bound} that classifies {rows}"
    if wrong is None:
        return found + "."
    if call.counterexamples:
        return (
            f"{found}; checked on every training row it gets {wrong:g} wrong (the red leaves), "
            f"so {len(call.counterexamples)} of them join the formula as counterexamples:"
        )
    if wrong:
        return (
            f"{found}; it gets {wrong:g} training rows wrong, and re-growing its last levels on "
            "every row (a repair) makes it right on all of them: the bound is met."
        )
    return f"{found}, and every training row is right: this bound is met."


def _step(fit: Fit, number: int, call: Any, budget: list[int]) -> str:
    """One SAT call: its numbers in the summary line, then what its answer means, the rows
    added and the tree found (drawn while the budget lasts, else as text)."""
    tree = call.tree if call.status == "SAT" else None
    wrong = tree.count_error() if tree is not None else None
    added = f", adds {len(call.counterexamples)} rows" if call.counterexamples else ""
    bound = "" if call.max_leaves is None else f" ≤ {call.max_leaves} leaves"
    summary = (
        f"call {number}: depth {call.depth}{bound}: {call.status}: {call.n_examples} rows "
        f"encoded, {call.n_vars} variables, {call.n_clauses} clauses, {call.time:.3g} s{added}"
    )
    body = [paragraph(_status_text(call, wrong))]
    if call.counterexamples:
        shown, left_out = capped(call.counterexamples, MAX_ROWS_ADDED)
        body.append(table(("row added", "label"), ((fit.row_name(r), label) for r, label in shown)))
        body.append(more(left_out, "rows added"))
    if tree is not None:
        picture = picture_svg(
            model_picture(tree, None, None, None, True),
            scale=STEP_SCALE,
            label=f"the tree of call {number}",
        )
        if len(picture) <= budget[0]:
            budget[0] -= len(picture)
            body.append(f'<div class="figure small">{picture}</div>')
        else:
            body.append(f"<pre>{esc(tree.export_text())}</pre>")
    return (
        f'<details class="step {esc(call.status.lower())}" data-call="{number}">'
        f"<summary>{esc(summary)}</summary>{''.join(body)}</details>"
    )


def _depths(calls: Sequence[Any]) -> Html:
    """Per bound asked (depth, and leaves): the calls it took and the last answer."""
    bounds: dict[tuple[int, Any], list[Any]] = {}
    for call in calls:
        bounds.setdefault((call.depth, call.max_leaves), []).append(call)
    leaves = any(call.max_leaves is not None for call in calls)  # a size search's bounds
    return table(
        (
            "depth",
            *(["leaves at most"] if leaves else []),
            "SAT calls",
            "rows encoded at the last",
            "last answer",
        ),
        (
            (
                depth,
                *([bound if bound is not None else ""] if leaves else []),
                len(group),
                group[-1].n_examples,
                group[-1].status,
            )
            for (depth, bound), group in bounds.items()
        ),
    )


def loop_section(fit: Fit) -> Html:
    """Every SAT call (the first and last :data:`MAX_STEPS` when there are more), after a
    table of the bounds asked; one line when the search called no SAT solver."""
    result = fit.result
    calls = list(result.trace)
    intro = (
        "The counterexample-guided loop: the formula starts from a few rows, and each SAT call "
        "asks for a tree of a given depth classifying the rows encoded so far. SAT: the tree "
        "is checked on every training row and rows it gets wrong join the formula; UNSAT: not "
        "even these rows can be classified, so no tree of that depth exists. Open a step to "
        "see its rows and its tree."
    )
    if not calls:
        sat_calls = getattr(result.stats, "sat_calls", 0)
        if sat_calls:
            line = (
                f"This search made {sat_calls} SAT calls but did not record them one by one; "
                "fit a tree with method='sat' or 'hybrid' (satdt infer) to see the loop."
            )
        else:
            which = f"the {fit.method} search" if fit.method else "this search"
            line = (
                f"No SAT call: {which} is not a SAT loop. Fit a tree of minimum depth or size "
                "with method='sat' or 'hybrid' (satdt infer) to see it."
            )
        return section("loop", "The counterexample loop", intro, [not_applicable(line)])
    sat_stats = getattr(result.stats, "sat", None) or result.stats
    used, rows = getattr(sat_stats, "examples_used", 0), getattr(sat_stats, "rows", 0)
    counted = f"{len(calls)} SAT calls"
    if used and rows:
        counted += f"; in the end {used} of the {rows} distinct training rows were encoded"
    body = [paragraph(counted + "."), _depths(calls)]
    for depth in getattr(sat_stats, "settled_without_sat_call", ()) or ():
        body.append(paragraph(f"Depth {depth}: settled by a repaired heuristic tree, no SAT call."))
    numbered = list(enumerate(calls, start=1))
    left_out = max(0, len(numbered) - MAX_STEPS)
    body.append(
        '<p class="step-buttons"><button type="button" data-steps="open">open every step</button> '
        '<button type="button" data-steps="close">close every step</button></p>'
    )
    budget = [PICTURE_BUDGET]
    for position, (number, call) in enumerate(numbered):
        if left_out and position == MAX_STEPS // 2:
            body.append(paragraph(f"... {left_out} calls not shown ...", kind="more"))
        if left_out and MAX_STEPS // 2 <= position < MAX_STEPS // 2 + left_out:
            continue
        body.append(_step(fit, number, call, budget))
    return section("loop", "The counterexample loop", intro, body)
