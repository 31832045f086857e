"""The table of searches: every method reachable from the estimator and the command line,
every option checked with a clear error, every method in ``--help`` and in the README."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from helpers import FIXTURES, ROOT

from satdt import OptimalTreeClassifier, read_csv
from satdt.cli import build_parser, cli_message, main
from satdt.core.errors import SatdtError
from satdt.core.params import Choice, Integer, Param, Real
from satdt.prepare.prepared import Prepared, prepare
from satdt.prepare.validate import validate
from satdt.search.auto import candidates, choose_method
from satdt.search.registry import METHODS, method_params, methods_table, resolve_method
from satdt.task.objectives import CONSISTENCY, OBJECTIVES
from satdt.task.result import Recorder

IRIS = ROOT / "examples" / "data" / "iris.csv"
# iris's grid has 4e10 boxes: the box DP runs on the monks problem instead
DATA = {"boxes": ROOT / "examples" / "data" / "monk1.csv"}
PAIRS = [(m.name, objective) for m in METHODS.values() for objective in m.objectives]
BAD_VALUE = "no-such-choice"


def _small_params(objective: str) -> dict:
    return {"max_depth": 2} if OBJECTIVES[objective].kind == "error" else {}


@pytest.mark.parametrize(("method", "objective"), PAIRS)
def test_every_method_runs_from_the_estimator(method: str, objective: str) -> None:
    data = read_csv(DATA.get(method, IRIS))
    model = OptimalTreeClassifier(objective=objective, method=method, **_small_params(objective))
    model.fit(data.X, data.y)
    result = model.result_
    assert result.proven_optimal
    predicted = model.predict(data.X)
    if OBJECTIVES[objective].kind == "consistency":
        assert (predicted == data.y).all()
    else:
        assert result.objective_value == np.sum(predicted != data.y)
        assert model.tree_.depth <= 2


@pytest.mark.parametrize(("method", "objective"), PAIRS)
def test_every_method_runs_from_the_command_line(capsys, method: str, objective: str) -> None:
    if objective == "error":
        argv = ["fit", str(IRIS), "--max-depth", "2", "--method", method]
    else:
        argv = ["infer", str(DATA.get(method, IRIS)), "--method", method] + (
            ["--size"] if objective == "size" else []
        )
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "time:" in out


def test_every_method_and_option_is_in_help() -> None:
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # argparse keeps them here
    text = {name: commands[name].format_help() for name in ("infer", "fit")}
    for method in METHODS.values():
        command = "fit" if "error" in method.objectives else "infer"
        assert method.name in text[command]
        for param in method.params:
            assert param.flag in text[command]


def _another_value(param: Param) -> object:
    """A value the parameter accepts other than its default."""
    for rule in param.rules:
        if isinstance(rule, Choice):
            value = next(name for name in rule.names() if name != param.default)
        elif isinstance(rule, Integer | Real):
            value = rule.low + 1 if rule.high is None else (rule.low + rule.high) / 2
        else:
            continue
        param.check(value)
        return value
    raise AssertionError(f"no value for {param.name}")


@pytest.mark.parametrize("name", sorted(method_params()))
def test_every_option_is_checked(name: str) -> None:
    param = method_params()[name]
    owner = next(m for m in METHODS.values() if param in m.params)
    objective = param.objectives[0] if param.objectives else owner.objectives[0]
    model = OptimalTreeClassifier(
        objective=objective, method=owner.name, **_small_params(objective), **{name: BAD_VALUE}
    )
    with pytest.raises(SatdtError, match=name):
        model.fit([[0.0], [1.0]], [0, 1])
    # the option of another method is refused with a message naming both
    others = [m for m in METHODS.values() if param not in m.params]
    for other in others:
        objective = other.objectives[0]
        value = _another_value(param)
        with pytest.raises(SatdtError, match=rf"{name}.*{other.name}"):
            resolve_method(objective, other.name, {name: value})


def test_unknown_method_and_objective_mismatch_are_refused() -> None:
    with pytest.raises(SatdtError, match="method must be"):
        resolve_method("depth", "magic", {})
    with pytest.raises(SatdtError, match="does not solve"):
        resolve_method("error", "sat", {})
    with pytest.raises(SatdtError, match="objective must be"):
        resolve_method("height", "auto", {})


def test_estimator_signature_comes_from_the_table() -> None:
    params = OptimalTreeClassifier().get_params()
    for name in method_params():
        assert name in params
    with pytest.raises(TypeError, match="unexpected keyword"):
        OptimalTreeClassifier(no_such_option=1)
    for name in method_params():
        assert name in OptimalTreeClassifier.__doc__


def test_readme_and_user_guide_list_every_method() -> None:
    for page in ("README.md", "docs/guide/methods.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        assert methods_table() in text, (
            f"regenerate {page}'s table: satdt.search.registry.methods_table()"
        )


def test_cli_translates_parameter_names_to_flags() -> None:
    assert cli_message("raise max_depth") == "raise --max-depth"
    assert cli_message("set resolve='majority' now") == "set --resolve majority now"
    assert cli_message("column 'max_depth' is fine") == "column 'max_depth' is fine"
    assert cli_message("time_limit=5") == "--time-limit 5"


def _prepared(X: np.ndarray, y: np.ndarray, objective: str) -> Prepared:
    return prepare(
        validate(X, y),
        None,
        consistency=OBJECTIVES[objective].kind == CONSISTENCY,
        resolve=None,
        recorder=Recorder(objective),
        deadline=None,
        max_thresholds=None,
        max_memory_mb=1024,
    )


@pytest.mark.parametrize("objective", list(OBJECTIVES))
def test_candidates_are_what_auto_can_choose(objective: str) -> None:
    rng = np.random.default_rng(0)
    few = np.array([[a, b] for a in range(3) for b in range(3)], dtype=float)  # a tiny grid
    many = np.round(rng.random((300, 3)), 4)  # far more thresholds than the crossovers
    chosen = {choose_method(objective)}
    for X in (few, many):
        y = (X[:, 0] > X[:, 1]).astype(int)
        data = _prepared(X, y, objective)
        chosen.add(choose_method(objective, data))
        chosen.add(choose_method(objective, data, max_nodes=5))  # a node budget
        data.max_thresholds = 1
        chosen.add(choose_method(objective, data))
    assert chosen == set(candidates(objective))
    assert all(objective in METHODS[name].objectives for name in candidates(objective))
    for method in METHODS:
        assert candidates(objective, method) == (method,)


def test_importing_satdt_loads_no_search_module() -> None:
    # the table of searches promises that search modules load only when a method runs
    code = (
        "import sys, satdt, satdt.search.registry; "
        "print(sorted(m for m in sys.modules if m.startswith("
        "('satdt.sat', 'satdt.dp', 'satdt.mip', 'numba', 'pysat'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _incomplete(methods, records: dict) -> list[str]:
    """What each method of the table lacks: its statistics classes, a report of each on the
    command line (satdt.cli.reports), an effort record (tests/fixtures/effort.json)."""
    from satdt.cli.reports import report_of

    missing = []
    for method in methods:
        if not method.stats:
            missing.append(f"{method.name}: no statistics class")
        missing += [
            f"{method.name}: no report of {stats.__name__} in satdt.cli.reports"
            for stats in method.stats
            if report_of(stats) is None
        ]
        if not any(key.startswith(f"{method.name}-") for key in records):
            missing.append(f"{method.name}: no effort record in tests/search/test_effort.py")
    return missing


def test_every_method_has_its_statistics_report_and_effort_record() -> None:
    # a method added to the table needs all three (docs/contributing.md, "Adding a search")
    import json

    records = json.loads((FIXTURES / "effort.json").read_text())
    assert _incomplete(METHODS.values(), records) == []


def test_a_method_without_its_report_or_record_is_seen() -> None:
    from dataclasses import replace

    from satdt.task.stats import Stats

    bare = replace(METHODS["blossom"], name="newcomer", stats=(Stats,))
    assert _incomplete([bare], {}) == [
        "newcomer: no report of Stats in satdt.cli.reports",
        "newcomer: no effort record in tests/search/test_effort.py",
    ]
    assert _incomplete([replace(bare, stats=())], {"newcomer-x": {}}) == [
        "newcomer: no statistics class"
    ]
