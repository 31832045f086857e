"""One table of parameters: every estimator's signature, docstring, checks and command-line
flags come from its declarations (satdt.core.params.Param), and the docs show the same table."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import ROOT

from satdt import OptimalDiagramClassifier, OptimalTreeClassifier, ParameterError
from satdt.cli import build_parser
from satdt.core.params import NONE, Choice, Integer, Param, Real
from satdt.estimators.parameters import parameter_tables
from satdt.search.params import TREE_PARAMS, tree_params
from satdt.search.registry import method_params

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it

ESTIMATORS = (OptimalTreeClassifier, OptimalDiagramClassifier)
NOT_A_VALUE = object()  # no rule accepts it


def _accepted_values(param: Param) -> list[object]:
    """Values each rule of the parameter accepts, the default first."""
    values: list[object] = [param.default]
    for rule in param.rules:
        if isinstance(rule, Choice):
            values += list(rule.names())
        elif isinstance(rule, Integer):
            values.append(rule.low if rule.high is None else rule.high)
        elif isinstance(rule, Real):
            values.append(rule.low + 1 if rule.high is None else (rule.low + rule.high) / 2)
        elif rule is NONE:
            values.append(None)
    return values


@pytest.mark.parametrize(
    "param",
    list(tree_params().values()) + list(OptimalDiagramClassifier._PARAMS),
    ids=lambda param: param.name,
)
def test_every_rule_accepts_its_values_and_the_message_says_the_rule(param: Param) -> None:
    for value in _accepted_values(param):
        param.check(value)
    with pytest.raises(ParameterError) as refused:
        param.check(NOT_A_VALUE)
    message = str(refused.value)
    assert message.startswith(f"{param.name} must be {param.describe()}, got ")
    assert f"(default: {param.default!r})" in message
    assert isinstance(refused.value, ValueError)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: e.__name__)
def test_the_estimator_checks_every_parameter_of_its_table(estimator) -> None:
    X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 1, 0, 1])
    for param in estimator._PARAMS:
        model = estimator(**{param.name: NOT_A_VALUE})
        with pytest.raises(ParameterError, match=f"^{param.name} must be"):
            model.fit(X, y)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: e.__name__)
def test_signature_and_docstring_come_from_the_table(estimator) -> None:
    params = estimator().get_params()
    for param in estimator._table().values():
        assert params[param.name] == param.default or params[param.name] is param.default
        assert f"{param.name} : {param.type_name()}, default={param.default!r}" in (
            estimator.__doc__
        )
        assert " ".join(param.describe().split()) in " ".join(estimator.__doc__.split())


def test_defaults_are_real_values_not_auto() -> None:
    """'auto' is a choice only where it chooses (method, milp_solver), not a default's name."""
    for param in tree_params().values():
        assert param.default != "auto" or param.name == "method", param.name
    for param in OptimalDiagramClassifier._PARAMS:
        assert param.default != "auto" or param.name in ("method", "milp_solver"), param.name


def test_auto_for_a_method_option_is_the_default_for_one_release() -> None:
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    y = np.array([0, 1, 1, 0])
    with pytest.warns(FutureWarning, match=r"solver='auto'.*solver='glucose4'.*0\.3"):
        old = OptimalTreeClassifier(method="sat", solver="auto").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        new = OptimalTreeClassifier(method="sat").fit(X, y)
    assert old.tree_ == new.tree_


def test_cli_flags_come_from_the_table() -> None:
    commands = build_parser()._subparsers._group_actions[0].choices
    for command in ("infer", "fit"):
        actions = {a.dest: a for a in commands[command]._actions}
        for name, param in tree_params().items():
            if name not in actions or name == "method":  # its help lists the command's methods
                continue
            action = actions[name]
            assert param.flag in action.option_strings
            assert action.default == param.default, name
            assert action.required or "(default: " in action.help
            if action.type is not None and name != "class_weight":
                assert action.type == param.parse, name
    fit_flags = {a.dest for a in commands["fit"]._actions}
    for name in ("leaf_penalty", "min_support", "class_weight", "n_jobs", "time_limit"):
        assert name in fit_flags


def test_a_cli_value_is_checked_by_the_same_rule(capsys) -> None:
    from satdt.cli import main

    data = ROOT / "examples" / "data" / "iris.csv"
    assert main(["fit", str(data), "--max-depth", "2", "--min-support", "0"]) == 2
    err = capsys.readouterr().err
    assert "--min-support must be an integer >= 1, got 0" in err


def test_the_docs_page_shows_every_parameter_with_its_rule() -> None:
    page = parameter_tables()
    for param in [*tree_params().values(), *OptimalDiagramClassifier._PARAMS]:
        assert f"| `{param.name}` | `{param.default!r}` | {param.describe()}" in page


def test_each_parameter_is_declared_once() -> None:
    names = [param.name for param in TREE_PARAMS]
    assert len(names) == len(set(names))
    assert not set(names) & set(method_params()), "a shared parameter is declared twice"
    assert all(param.rules for param in tree_params().values())
