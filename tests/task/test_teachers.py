"""The teachers' side (satdt.task.teachers): domains read and encoded, the table teachers'
answers by policy, and the clear errors of domains that cannot be read."""

from __future__ import annotations

import numpy as np
import pytest

from satdt.core.errors import DataError, ParameterError
from satdt.models.tree import Tree
from satdt.task import teachers
from satdt.task.teachers import (
    FunctionTeacher,
    ModelTeacher,
    TableTeacher,
    Teacher,
    read_domains,
)

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it


def test_domains_are_read_into_columns_and_design_columns():
    domains = read_domains({"on": bool, "size": [3, 1, 2, 1], "colour": ["red", "blue"]})
    assert domains.schema.column_names == ["on", "size", "colour"]
    assert domains.schema.feature_names == ("on", "size", "colour == red", "colour == blue")
    assert [v.tolist() for v in domains.design_values] == [[0, 1], [1, 2, 3], [0, 1], [0, 1]]
    assert domains.raw == ((False, True), (1, 2, 3), ("red", "blue"))
    assert domains.n_points == 12
    rows = [[True, 2, "blue"], [False, 3, "red"]]
    np.testing.assert_array_equal(domains.encode(rows), [[1, 2, 0, 1], [0, 3, 1, 0]])
    points = domains.points()
    assert points.shape == (12, 3) and points[0].tolist() == [False, 1, "red"]
    assert read_domains([bool, [0.5, 1.5]]).schema.column_names == ["x0", "x1"]


@pytest.mark.parametrize(
    ("domains", "match"),
    [
        ([], "domains are empty"),
        ([[]], "column 'x0' is empty"),
        (["ab"], "must be a sequence of values or bool"),
        ([[1, "a"]], "mixes numbers and strings"),
        ([[1.0, float("nan")]], "NaN or infinity"),
    ],
)
def test_domains_that_cannot_be_read_say_why(domains, match):
    with pytest.raises(ParameterError, match=match):
        read_domains(domains)


def test_rows_outside_the_domains_are_refused_by_name():
    domains = read_domains({"size": [1, 2], "colour": ["red", "blue"]})
    with pytest.raises(DataError, match=r"column 'colour': 'green' is not in its domain"):
        domains.encode([[1, "green"]])
    with pytest.raises(DataError, match="one value per column"):
        domains.encode([[1, "red", 3]])


def test_a_domain_too_large_to_enumerate_is_refused(monkeypatch):
    monkeypatch.setattr(teachers, "MAX_POINTS", 100)
    with pytest.raises(ParameterError, match="more than 100 to check one by one"):
        FunctionTeacher(lambda *x: 0, [range(10)] * 3)


def test_a_table_teacher_answers_by_its_policy():
    labels = [0, 1, 1, 0, 1, 0, 0, 1]  # parity of three bits
    leaf = Tree.single_leaf(0, np.array([0, 1]))
    split = Tree.from_nested((0, 0.5, 0, 1), np.array([0, 1]))
    for policy, expected in (("first", 1), ("all", 4), ("per_leaf", 1), (2, 1)):
        teacher = TableTeacher([bool] * 3, labels, counterexamples=policy)
        rows, answer = teacher.counterexample(leaf)
        assert len(rows) == expected and set(answer.tolist()) == {1}
        assert teacher.questions == 1
    teacher = TableTeacher([bool] * 3, labels, counterexamples="per_leaf")
    rows, answer = teacher.counterexample(split)
    assert rows[:, 0].tolist() == [0, 1]  # one wrong point in each leaf
    assert teacher.counterexample(None)[0].tolist() == [[0, 0, 0]]
    assert not teacher.accepts(split)
    with pytest.raises(ParameterError, match="counterexamples must be one of"):
        TableTeacher([bool], [0, 1], counterexamples="some")
    with pytest.raises(DataError, match="3 labels for the 2 points"):
        TableTeacher([bool], [0, 1, 1])


def test_function_and_model_teachers_label_every_point():
    teacher = FunctionTeacher(lambda a, colour: f"{colour}{a}", {"a": [1, 2], "c": ["r", "g"]})
    assert teacher.labels.tolist() == ["r1", "g1", "r2", "g2"]
    assert isinstance(teacher, Teacher)

    class Model:  # anything with predict
        def predict(self, rows):
            return (rows[:, 0] > rows[:, 1]).astype(int)

    grid = ModelTeacher(Model(), [[0, 1, 2], [0, 1, 2]])
    assert grid.labels.tolist() == [0, 0, 0, 1, 0, 0, 1, 1, 0]
    assert grid.classes.tolist() == [0, 1]
