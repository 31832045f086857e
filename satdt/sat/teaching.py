"""Learning from a teacher: the counterexample-guided loop whose counterexamples a teacher gives.

Algorithm 3 of Avellaneda (AAAI 2020) with the training table replaced by a teacher
(:mod:`satdt.task.teachers`; Angluin's equivalence queries, which the paper cites for active
inference). The search starts from no rows; it finds the minimum-depth (or -size) tree of the
rows the teacher gave so far (:class:`~satdt.sat.growing.GrowingSearch`, one incremental
solver per depth, kept from round to round) and shows it to the teacher, whose counterexamples
join the rows; until the teacher accepts a tree. That tree is a minimum for the teacher's
whole domain: every smaller depth (size) was refuted on some of its rows, and UNSAT on some
rows is UNSAT on all of them. See ``docs/teaching/teachers.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.errors import DataError
from ..models.tree import Tree
from ..task.events import SatCall
from ..task.result import Recorder, SearchResult
from ..task.teachers import Domains, Teacher
from .growing import GrowingSearch, RowsView
from .solving import past


def user_mapping(
    view: RowsView, names: Sequence[str] | None, indicator: Sequence[int] = ()
) -> Callable[[Tree], Tree]:
    """The map from a loop's trees (over binary features) to the user's: over the columns,
    simplified on the rows of ``view``, with their labels, names and class counts."""

    def to_user_tree(tree: Tree) -> Tree:
        return view.labelled(view.column_tree(tree), names, indicator)

    return to_user_tree


def teach(
    teacher: Teacher,
    search: GrowingSearch,
    domains: Domains,
    *,
    recorder: Recorder,
    deadline: float | None = None,
    max_rounds: int | None = None,
) -> SearchResult:
    """Alternate the search and the teacher until the teacher accepts a tree.

    Each round the search returns the minimum tree of the teacher's rows so far and the
    teacher is asked about it (one question). Its counterexamples must be rows the tree gets
    wrong; they become the ``counterexamples`` of the SAT call that found the tree (its
    ``tree`` then holds them, so :func:`satdt.plot.plot_loop` frames them in red).

    Parameters
    ----------
    teacher
        The teacher (:class:`~satdt.task.teachers.Teacher`).
    search
        A search over rows with the domains' values (:class:`~satdt.sat.growing.GrowingRows`
        made with ``domains=domains.design_values``), usually with ``heuristics=False``; it
        may hold rows already.
    domains
        The teacher's domains, read (:func:`~satdt.task.teachers.read_domains`).
    recorder
        Receives the SAT calls and the tree.
    deadline
        ``time.perf_counter()`` value after which the last tree is returned, not proven.
    max_rounds
        At most this many questions (then the last tree is returned, not proven).

    Returns
    -------
    SearchResult
        The tree (over the design columns, with the teacher's labels), proven optimal when
        the teacher accepted it and every smaller value was refuted.

    Raises
    ------
    DataError
        If the teacher returns a row the tree classifies right (that is no counterexample),
        a row outside its domains, the same row with two labels, or, asked without a tree,
        no row.
    InfeasibleError
        When no consistent tree within the search's ``max_depth`` exists.
    """
    rows = search.rows
    names = list(domains.schema.feature_names)
    indicator = list(domains.schema.indicator)
    questions, new_rows, accepted, stop = 0, 0, False, ""
    settled_before = len(search.settled)
    if rows.n_classes == 0 and rows.n_rows == 0:
        answer = teacher.counterexample(None)
        questions += 1
        if answer is None or len(answer[1]) == 0:
            raise DataError(
                "asked for a first row (the teacher has no classes, so there is no tree to "
                "show), the teacher gave none; give the teacher classes, or answer "
                "counterexample(None) with any labelled rows"
            )
        new_rows += len(rows.add(domains.encode(answer[0]), rows.class_index(_labels(answer[1]))))
    while True:
        recorder.begin(to_user_tree=user_mapping(rows.view(), names, indicator))
        before = len(recorder.events)
        if not search.solve(recorder, deadline):
            stop = "time limit: the last tree is the best of the teacher's rows so far"
            break
        tree = rows.view().labelled(search.tree, names, indicator)
        if max_rounds is not None and questions >= max_rounds:
            stop = (
                f"max_rounds={max_rounds} questions asked: the last tree is a minimum for the "
                "teacher's rows so far, not accepted by the teacher"
            )
            break
        answer = teacher.counterexample(tree)
        questions += 1
        if answer is None or len(answer[1]) == 0:
            accepted = True
            break
        design, labels = domains.encode(answer[0]), _labels(answer[1])
        _check_counterexamples(tree, design, labels)
        added = rows.add(design, rows.class_index(labels)).tolist()
        new_rows += len(added)
        given = tuple((int(rows.arrival[r]), rows.labels[rows.y[r]]) for r in added)
        shown = rows.view().labelled(search.tree, names, indicator)
        _amend_last_call(recorder, before, given, shown)
        if past(deadline):
            stop = "time limit: the last tree is the best of the teacher's rows so far"
            break
    model = rows.view().labelled(search.tree, names, indicator)
    recorder.improve(model, search.value, mapped=True)
    recorder.lower_bound = search.lower_bound
    recorder.stats = search.stats(recorder, new_rows, questions, settled_before)
    return recorder.snapshot(proven_optimal=accepted and search.proven, stop_reason=stop)


def _labels(labels: Any) -> list[Any]:
    """A teacher's labels as Python values (``numpy.int64(1)`` and ``1`` are one class)."""
    return np.asarray(labels).reshape(-1).tolist()


def _check_counterexamples(tree: Tree, design: np.ndarray, labels: list[Any]) -> None:
    """Every row a teacher returns must be one ``tree`` classifies wrong."""
    if len(design) != len(labels):
        raise DataError(
            f"the teacher returned {len(design)} rows and {len(labels)} labels; give one "
            "label per row"
        )
    predicted = tree.predict(design).tolist()
    for row, label, said in zip(design.tolist(), labels, predicted, strict=True):
        if said == label:
            values = ", ".join(f"{v:g}" for v in row[:12])
            raise DataError(
                f"the teacher returned the row ({values}) labelled {label!r}, which the tree "
                f"it was shown classifies as {said!r}: a counterexample is a row the tree gets "
                "wrong; check the teacher's counterexample(tree)"
            )


def _amend_last_call(
    recorder: Recorder, since: int, counterexamples: tuple[tuple[int, Any], ...], shown: Tree
) -> None:
    """Give the last SAT answer of this round the teacher's rows as its counterexamples (the
    rows added after it) and, as its tree, the tree shown with the counts of every row now."""
    events = recorder.events
    for i in range(len(events) - 1, since - 1, -1):
        call = events[i]
        if isinstance(call, SatCall) and call.status == "SAT":
            events[i] = dataclasses.replace(call, counterexamples=counterexamples, found=shown)
            return
