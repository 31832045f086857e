"""Learning from a teacher (satdt.sat.teaching): random Boolean functions get the brute-force
minimum depth and size from counterexamples alone, the multiplexer's loop is as recorded, and
a teacher that lies, or wanders out of its domains, gets a clear error."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_consistent_depth, min_consistent_leaves

from satdt.core.errors import DataError
from satdt.sat.growing import GrowingRows, GrowingSearch
from satdt.sat.teaching import teach
from satdt.task.result import Recorder
from satdt.task.teachers import FunctionTeacher, TableTeacher, read_domains

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it


def _learn(teacher, objective="depth", max_depth=None, known=True, heuristics=False, **options):
    domains = read_domains(teacher.domains)
    labels = np.unique(teacher.classes).tolist() if known else []
    rows = GrowingRows(len(domains.design_values), labels, domains=domains.design_values)
    search = GrowingSearch(rows, objective, max_depth, heuristics=heuristics)
    recorder = Recorder(objective)
    return teach(teacher, search, domains, recorder=recorder, **options), rows


def mux(a0, a1, d0, d1, d2, d3):
    return [d0, d1, d2, d3][2 * a1 + a0]


MUX_DOMAINS = {name: bool for name in ("a0", "a1", "d0", "d1", "d2", "d3")}


@settings(deadline=None, max_examples=examples(30))
@given(
    st.integers(3, 5).flatmap(
        lambda n: st.tuples(st.just(n), st.lists(st.integers(0, 2), min_size=2**n, max_size=2**n))
    ),
    st.sampled_from(["depth", "size"]),
    st.sampled_from(["first", "per_leaf", "all"]),
    st.booleans(),
    st.booleans(),
)
def test_random_functions_get_the_brute_force_minimum(
    function, objective, policy, known, heuristics
):
    n, table = function
    teacher = TableTeacher([bool] * n, table, counterexamples=policy)
    result, rows = _learn(teacher, objective, known=known, heuristics=heuristics)
    assert result.proven_optimal
    assert teacher.accepts(result.model)
    B = np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.uint8)
    depth = min_consistent_depth(B, np.array(table))
    if objective == "depth":
        assert result.objective_value == result.model.depth == depth
    else:
        assert result.model.n_leaves == min_consistent_leaves(B, np.array(table), depth)
    assert result.stats.rows == rows.n_rows <= 2**n
    assert result.stats.questions == teacher.questions


def test_the_multiplexer_is_learnt_from_thirteen_counterexamples():
    """The 6-input multiplexer: depth 3, proven by UNSAT at depths 1 and 2 on rows the teacher
    gave; each question after the one-leaf trees costs one SAT call (recorded effort)."""
    teacher = FunctionTeacher(mux, MUX_DOMAINS)
    result, rows = _learn(teacher)
    assert result.proven_optimal and result.objective_value == 3
    assert teacher.accepts(result.model)
    assert [c.status for c in result.trace].count("UNSAT") == 2
    assert (len(result.trace), result.stats.questions, rows.n_rows) == (16, 14, 13)
    for call in result.trace[:-1]:
        if call.status == "SAT":  # the teacher's row, framed in the tree it was shown
            assert len(call.counterexamples) == 1 and call.tree.count_error() == 1
    assert result.trace[-1].status == "SAT" and not result.trace[-1].counterexamples
    size, _ = _learn(FunctionTeacher(mux, MUX_DOMAINS), "size")
    assert size.proven_optimal and size.objective_value == 15


def test_a_teacher_that_lies_gets_a_clear_error():
    class Liar:
        def __init__(self):
            self.domains, self.classes = [bool, bool], [0, 1]

        def counterexample(self, tree):
            row = np.array([[0.0, 1.0]])
            return row, tree.predict(row)  # a row the tree classifies right

    domains = read_domains(Liar().domains)
    rows = GrowingRows(2, [0, 1], domains=domains.design_values)
    with pytest.raises(DataError, match="a counterexample is a row the tree gets wrong"):
        teach(Liar(), GrowingSearch(rows, heuristics=False), domains, recorder=Recorder("depth"))


def test_a_row_outside_the_domains_or_two_labels_for_one_row_are_refused():
    class Wanderer:
        def __init__(self, row):
            self.domains, self.classes, self.row = {"x": [0, 1, 2]}, ["a", "b"], row

        def counterexample(self, tree):  # the row, labelled what the tree does not say
            said = tree.predict(np.array([[0.0]]))[0]
            return [self.row], ["b" if said == "a" else "a"]

    for row, match in (
        ([3], r"'x': 3 is not in its domain \(0, 1, 2\)"),
        ([0], "labelled 'a', but the same row came before labelled 'b'"),
    ):
        teacher = Wanderer(row)
        domains = read_domains(teacher.domains)
        rows = GrowingRows(1, ["a", "b"], domains=domains.design_values)
        with pytest.raises(DataError, match=match):
            teach(
                teacher, GrowingSearch(rows, heuristics=False), domains, recorder=Recorder("depth")
            )


def test_without_classes_the_first_question_shows_no_tree():
    asked = []

    class Quiet(TableTeacher):
        def counterexample(self, tree):
            asked.append(tree)
            return super().counterexample(tree)

    teacher = Quiet([bool, bool], [0, 1, 1, 0])
    del teacher.classes
    result, _ = _learn(teacher, known=False)
    assert asked[0] is None and result.proven_optimal and result.objective_value == 2

    class Silent:
        def __init__(self):
            self.domains = [bool]

        def counterexample(self, tree):
            return None

    domains = read_domains(Silent().domains)
    with pytest.raises(DataError, match="the teacher gave none"):
        teach(
            Silent(),
            GrowingSearch(GrowingRows(1), heuristics=False),
            domains,
            recorder=Recorder("depth"),
        )


def test_max_rounds_and_the_deadline_stop_with_the_last_tree_not_proven():
    result, rows = _learn(FunctionTeacher(mux, MUX_DOMAINS), max_rounds=5)
    assert not result.proven_optimal and "max_rounds=5" in result.stop_reason
    assert result.stats.questions == 5
    np.testing.assert_array_equal(result.model.predict(rows.X), np.asarray(rows.labels)[rows.y])
    late, _ = _learn(FunctionTeacher(mux, MUX_DOMAINS), deadline=time.perf_counter() - 1)
    assert not late.proven_optimal and "time limit" in late.stop_reason
