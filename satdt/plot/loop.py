"""The counterexample-guided loop drawn call by call (Algorithm 3 of Avellaneda)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import SatdtError
from ._mpl import check_plot_target
from ._panels import Panel, finish, panel_figure
from .layout import model_picture

if TYPE_CHECKING:
    from ..task.result import SearchResult


def _row_list(
    rows: Sequence[tuple[int, Any]], row_names: Sequence[Any] | None, limit: int = 4
) -> str:
    words = [
        f"{'row ' + str(row) if row_names is None else row_names[row]} ({label})"
        for row, label in rows[:limit]
    ]
    if len(rows) > limit:
        words.append(f"{len(rows) - limit} more")
    return ", ".join(words)


def plot_loop(
    result: SearchResult,
    path: str | Path | None = None,
    *,
    max_panels: int = 16,
    columns: int = 4,
    max_depth: int | None = None,
    row_names: Sequence[Any] | None = None,
    title: str | None = None,
) -> Any:
    """Draw the counterexample-guided loop (Algorithm 3 of Avellaneda): one panel per SAT call.

    Each panel shows the tree of the solver's model, its leaves holding misclassified
    training rows framed in red, the formula's size, and the counterexamples added next; an
    UNSAT call says which depth it ruled out. The last panel is the returned tree and whether
    it is proven minimal. Calls beyond ``max_panels`` are left out from the middle (the
    title says how many).

    Parameters
    ----------
    result
        A SAT search's result (``model.result_`` of ``OptimalTreeClassifier(method="sat")``,
        of ``partial_fit`` or of ``fit_teacher``, whose SAT calls show the rows the teacher
        returned).
    path
        Save the figure there (format from the extension); default: a pyplot figure to show.
    max_panels, columns
        At most this many panels, in rows of ``columns``.
    max_depth
        Cut the trees drawn at this depth (see :func:`plot_tree`).
    row_names
        How to name training row ``i`` (default ``row i``; the CLI passes line numbers).
    title
        The figure's title; default: the number of calls and the answer.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    SatdtError
        If matplotlib is missing, or the result holds no SAT call.
    """
    check_plot_target(path, what="plot_loop")
    calls = list(result.trace)
    if not calls:
        raise SatdtError(
            "plot_loop draws the SAT calls of a search, and this result has none: fit with "
            "method='sat' (a consistency objective), or the depth was settled by a heuristic tree"
        )
    if max_panels < 2:
        raise SatdtError(f"max_panels must be at least 2, got {max_panels}")
    numbered = list(enumerate(calls, start=1))
    left_out = max(0, len(numbered) - (max_panels - 1))
    if left_out:
        first = (max_panels - 1) // 2
        numbered = numbered[:first] + numbered[first + left_out :]
    taught = getattr(result.stats, "questions", 0) > 0  # fit_teacher: the teacher's rows
    panels = []
    for number, call in numbered:
        bound = "" if call.max_leaves is None else f", <= {call.max_leaves} leaves"
        head = (
            f"call {number}: depth {call.depth}{bound}: {call.status}\n"
            f"{call.n_examples} rows encoded, {call.n_vars} vars, {call.n_clauses} clauses"
        )
        if call.status == "SAT" and call.tree is not None:
            picture = model_picture(call.tree, None, None, max_depth, True)
            wrong = call.tree.count_error()
            rows = "training row" if wrong == 1 else "training rows"
            if call.counterexamples and taught:
                foot = f"the teacher: wrong on {_row_list(call.counterexamples, row_names)} (red)"
            elif call.counterexamples:
                foot = (
                    f"{wrong:g} {rows} wrong (red); adds "
                    f"{_row_list(call.counterexamples, row_names)}"
                )
            elif wrong:
                foot = f"{wrong:g} {rows} wrong: the last levels are re-grown"
            elif taught:
                foot = "right on the teacher's rows so far"
            else:
                foot = f"every training row right: depth {call.depth} is enough"
            panels.append(Panel(head, picture=picture, foot=foot, colour="#1f5f99"))
        elif call.status == "UNSAT":
            message = (
                f"no tree of depth {call.depth}\nclassifies these {call.n_examples} rows,\n"
                f"so none classifies them all"
            )
            panels.append(Panel(head, message=message, colour="#a3312a"))
        else:
            panels.append(Panel(head, message="stopped: time limit", colour="0.4"))
    final = result.model
    what = {"depth": f"depth {final.depth}", "size": f"{final.n_nodes} nodes"}.get(
        result.objective, f"{result.objective} {result.objective_value:g}"
    )
    proof = "proven minimum" if result.proven_optimal else "best found, not proven"
    panels.append(
        Panel(
            f"{proof}: {what}\n{final.n_nodes} nodes, depth {final.depth}",
            picture=model_picture(final, None, None, max_depth, True),
            foot=_loop_summary(result, len(calls)),
            colour="#1d6b35" if result.proven_optimal else "0.3",
        )
    )
    if title is None and taught:
        title = (
            f"learning from a teacher: {len(calls)} SAT calls, {result.stats.questions} questions"
        )
    elif title is None:
        title = f"the counterexample-guided loop: {len(calls)} SAT calls"
        if left_out:
            title += f" ({left_out} not shown)"
    figure, _, _ = panel_figure(panels, title, columns=columns, pyplot=path is None)
    return finish(figure, path)


def _loop_summary(result: SearchResult, n_calls: int) -> str:
    """The last panel's footnote: the calls, the rows encoded, a depth no call was needed for."""
    used, rows = getattr(result.stats, "examples_used", 0), getattr(result.stats, "rows", 0)
    text = f"{n_calls} SAT calls" + (f", {used} of {rows} distinct rows encoded" if used else "")
    if getattr(result.stats, "questions", 0):
        text += "; the teacher accepts it"
    if result.model.depth in getattr(result.stats, "settled_without_sat_call", ()):
        text += f"; depth {result.model.depth}: a repaired heuristic tree, no SAT call"
    return text
