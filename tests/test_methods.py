"""The table of searches: every method reachable from the estimator and the command line,
every option checked with a clear error, every method in ``--help`` and in the README."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from satdt import OptimalTreeClassifier, read_csv
from satdt.cli import build_parser, cli_message, main
from satdt.errors import SatdtError
from satdt.methods import METHODS, OBJECTIVES, method_params, methods_table, resolve

ROOT = Path(__file__).resolve().parents[1]
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
        choices = param.allowed()
        value = choices[1] if len(choices) > 1 else 1
        with pytest.raises(SatdtError, match=rf"{name}.*{other.name}"):
            resolve(objective, other.name, {name: value})


def test_unknown_method_and_objective_mismatch_are_refused() -> None:
    with pytest.raises(SatdtError, match="method must be"):
        resolve("depth", "magic", {})
    with pytest.raises(SatdtError, match="does not solve"):
        resolve("error", "sat", {})
    with pytest.raises(SatdtError, match="objective must be"):
        resolve("height", "auto", {})


def test_estimator_signature_comes_from_the_table() -> None:
    params = OptimalTreeClassifier().get_params()
    for name in method_params():
        assert name in params
    with pytest.raises(TypeError, match="unexpected keyword"):
        OptimalTreeClassifier(no_such_option=1)
    for name in method_params():
        assert name in OptimalTreeClassifier.__doc__


def test_readme_lists_every_method() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert methods_table() in readme, "regenerate the README's table: satdt.methods.methods_table()"


def test_cli_translates_parameter_names_to_flags() -> None:
    assert cli_message("raise max_depth") == "raise --max-depth"
    assert cli_message("set resolve='majority' now") == "set --resolve majority now"
    assert cli_message("column 'max_depth' is fine") == "column 'max_depth' is fine"
    assert cli_message("time_limit=5") == "--time-limit 5"
