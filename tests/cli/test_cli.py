"""The command line, run in-process: output, exit codes, models on disk, bad input."""

from __future__ import annotations

import io
import json
import shutil
import time
from pathlib import Path

import pytest
from helpers import ROOT

from satdt import OptimalTreeClassifier, read_csv
from satdt.cli import main
from satdt.cli.status import Status
from satdt.core.errors import InfeasibleError
from satdt.task.events import Progress

EXAMPLES = ROOT / "examples" / "data"
MOUSE = EXAMPLES / "mouse.csv"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_infer_prints_minimum_depth_tree(capsys):
    code, out, err = run(capsys, "infer", MOUSE)
    assert code == 0, err
    assert "depth: 4 (proven minimum)" in out
    assert "class: 1" in out and "<=" in out
    assert "examples used:" in out and "SAT calls:" in out and "time:" in out


def test_infer_json_and_dot(capsys, tmp_path):
    code, out, _ = run(capsys, "infer", MOUSE, "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document["depth"] == 4 and document["proven_optimal"] is True
    assert document["n_nodes"] == 2 * document["n_leaves"] - 1
    assert {"lower_bound", "runtime", "tree"} <= set(document)
    target = tmp_path / "tree.dot"
    code, out, _ = run(capsys, "infer", MOUSE, "--format", "dot", "-o", target, "--quiet")
    assert code == 0 and out == ""
    assert target.read_text().startswith("digraph")


def test_save_predict_round_trip_and_test_accuracy(capsys, tmp_path):
    model = tmp_path / "model.json"
    code, out, _ = run(capsys, "infer", MOUSE, "--save", model, "--test", MOUSE)
    assert code == 0
    assert "test accuracy: 1.0000" in out
    predictions = tmp_path / "out.csv"
    code, _, err = run(capsys, "predict", model, MOUSE, "-o", predictions)
    assert code == 0
    lines = predictions.read_text().split()
    truth = [line.split(",")[-1] for line in MOUSE.read_text().split()[1:]]
    assert lines[0] == "X" and lines[1:] == truth
    assert "accuracy: 1.0000" in err


def test_predict_refuses_other_columns(capsys, tmp_path):
    model = tmp_path / "model.json"
    assert run(capsys, "infer", MOUSE, "--save", model, "--quiet")[0] == 0
    other = tmp_path / "other.csv"
    other.write_text("A,B,Q\n1,2,3\n")
    code, _, err = run(capsys, "predict", model, other)
    assert code == 2 and "Traceback" not in err
    assert "C" in err


def test_target_drop_and_categorical_columns(capsys, tmp_path):
    data = tmp_path / "shapes.csv"
    data.write_text("label,colour,size,id\nyes,red,1,1\nno,blue,1,2\nno,green,2,3\nyes,red,2,4\n")
    code, out, _ = run(capsys, "infer", data, "--target", "label", "--drop", "id")
    assert code == 0
    assert "colour == red" in out or "colour != red" in out
    assert "depth: 1" in out


def test_max_depth_below_minimum_exits_1(capsys):
    code, _, err = run(capsys, "infer", MOUSE, "--max-depth", "2")
    assert code == 1
    assert "at least 3" in err and "Traceback" not in err


def test_contradictions_exit_2_with_lines_and_resolve(capsys, tmp_path):
    data = tmp_path / "c.csv"
    data.write_text("a,b,y\n0,0,1\n0,1,0\n0,0,0\n1,1,1\n0,0,1\n")
    code, _, err = run(capsys, "infer", data)
    assert code == 2
    assert "lines 2, 4, 6" in err and "--resolve majority" in err
    code, out, _ = run(capsys, "infer", data, "--resolve", "majority")
    assert code == 0
    assert "relabelled rows (majority): 1" in out


def test_time_limit_is_honoured(capsys):
    data = ROOT.parent / "shared" / "data" / "inferdt" / "car.csv"
    if not data.exists():
        pytest.skip("benchmark data not found: ../shared/data/inferdt/car.csv")
    started = time.perf_counter()
    code, out, err = run(capsys, "infer", data, "--time-limit", "1", "--method", "sat")
    assert time.perf_counter() - started < 1 + 2
    assert code == 0
    assert "not proven" in out and "warning:" in err


BAD_INPUTS = {
    "missing file": (None, "not found"),
    "empty file": ("", "empty"),
    "header only": ("a,b,y\n", "no data rows"),
    "ragged rows": ("a,b,y\n1,2,0\n1,0\n", "line 3"),
    "empty cell": ("a,b,y\n1,,0\n1,2,1\n", "missing"),
    "NA": ("a,b,y\n1,NA,0\n1,2,1\n", "missing"),
    "question mark": ("a,b,y\n1,?,0\n1,2,1\n", "missing"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_exits_2_without_traceback(capsys, tmp_path, case):
    content, expected = BAD_INPUTS[case]
    path = tmp_path / "data.csv"
    if content is not None:
        path.write_text(content)
    code, _, err = run(capsys, "infer", path, "--missing", "error")
    assert code == 2
    assert "Traceback" not in err
    assert expected in err.lower()


def test_more_bad_input(capsys, tmp_path):
    assert run(capsys, "infer", MOUSE, "--target", "nope")[0] == 2
    assert run(capsys, "infer", MOUSE, "--drop", "X")[0] == 2
    assert run(capsys, "infer", tmp_path)[0] == 2  # a directory
    binary = tmp_path / "latin1.csv"
    binary.write_bytes("a,y\ncaf\xe9,1\n".encode("latin-1"))
    code, _, err = run(capsys, "infer", binary)
    assert code == 2 and "utf-8" in err.lower()
    assert run(capsys, "predict", tmp_path / "none.json", MOUSE)[0] == 2
    with pytest.raises(SystemExit) as usage:
        main(["infer"])
    assert usage.value.code == 2
    capsys.readouterr()


def test_single_class_is_one_leaf(capsys, tmp_path):
    data = tmp_path / "one.csv"
    data.write_text("a,y\n1,x\n2,x\n")
    code, out, _ = run(capsys, "infer", data)
    assert code == 0
    assert out.startswith("class: x") and "depth: 0" in out


def test_label_first_format(capsys, tmp_path):
    data = tmp_path / "tiny.txt"
    data.write_text("1 0 1\n0 1 1\n1 0 0\n0 1 0\n")
    code, out, _ = run(capsys, "infer", data)
    assert code == 0 and "depth: 1" in out
    shutil.copy(data, tmp_path / "tiny.data")
    assert run(capsys, "infer", tmp_path / "tiny.data", "--input-format", "labelfirst")[0] == 0


def test_ctrl_c_returns_best_tree(data_dir):
    """SIGINT during the search: exit 0 with the best tree known, marked interrupted."""
    import os
    import signal
    import subprocess
    import sys

    car = str(data_dir / "inferdt" / "car.csv")
    command = [sys.executable, "-m", "satdt.cli", "infer", car, "--method", "sat", "--trace"]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    # the signal goes once the search has made its tenth SAT call (however loaded the machine:
    # a Ctrl-C before the search starts is test_interrupts.py's), far from its end (~15 s)
    calls = 0
    while calls < 11 and process.stdout.readline():
        calls += 1
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "interrupted" in out and "not proven" in out
    assert "Traceback" not in err


def test_infer_trace_prints_the_bounds_as_they_change(capsys):
    """--trace: a line each time the lower bound rises or a shallower tree is found, until
    they meet; the summary gives the bounds over time."""
    code, out, _ = run(capsys, "infer", MOUSE, "--trace")
    assert code == 0
    lines = [line for line in out.splitlines() if line.startswith("bounds: ")]
    lower = [int(line.split()[1]) for line in lines]
    upper = [int(line.split()[5]) for line in lines]
    assert lower == sorted(lower) and upper == sorted(upper, reverse=True)
    assert lower[-1] == upper[-1] == 4 and len(lines) >= 4
    summary = next(line for line in out.splitlines() if line.startswith("bounds over time"))
    assert summary.startswith("bounds over time (depth, lower-upper): ")
    assert summary.endswith(": 4-4")


def test_fit_minimum_error(capsys, data_dir):
    code, out, _ = run(capsys, "fit", data_dir / "cp4im" / "anneal.txt", "--max-depth", "3")
    assert code == 0
    assert "errors: 112 of 812 rows (proven optimal)" in out
    code, out, _ = run(
        capsys, "fit", MOUSE, "--max-depth", "2", "--max-thresholds", "3", "--format", "json"
    )
    assert code == 0 and json.loads(out)["objective"] == "error"
    # without --max-depth, only a leaf penalty bounds the tree: a usage error naming both
    assert main(["fit", str(MOUSE)]) == 2
    assert "needs --max-depth" in capsys.readouterr().err


def test_fit_on_two_jobs_proves_the_same_optimum(capsys, data_dir):
    data = data_dir / "cp4im" / "heart-cleveland.txt"
    code, out, err = run(capsys, "fit", data, "--max-depth", "4", "--n-jobs", "2")
    assert code == 0 and "Traceback" not in err
    assert "errors: 25 of 296 rows (proven optimal)" in out
    assert main(["fit", str(data), "--max-depth", "4", "--n-jobs", "0"]) == 2
    err = capsys.readouterr().err
    assert "--n-jobs must be" in err and "non-zero integer" in err and "Traceback" not in err


def test_fit_time_limit(capsys, data_dir):
    started = time.perf_counter()
    code, out, err = run(
        capsys, "fit", data_dir / "cp4im" / "diabetes.txt", "--max-depth", "6", "--time-limit", "1"
    )
    assert code == 0
    assert (
        time.perf_counter() - started < 1 + 2 + 1
    )  # the numba cache is warm after the previous test
    assert "not proven; lower bound" in out and "warning:" in err


def test_encode_solve_decode_round_trip(capsys, tmp_path):
    from pysat.formula import CNF
    from pysat.solvers import Solver

    tiny = EXAMPLES / "tiny.csv"
    formula = tmp_path / "formula.cnf"
    assert run(capsys, "encode", tiny, "--depth", "2", "-o", formula)[0] == 0
    with Solver(name="minisat22", bootstrap_with=CNF(from_file=str(formula)).clauses) as solver:
        assert solver.solve()
        model = solver.get_model()
    solution = tmp_path / "solution.txt"
    solution.write_text("s SATISFIABLE\nv " + " ".join(map(str, model)) + " 0\n")
    tree_json = tmp_path / "tree.json"
    code, out, _ = run(capsys, "decode", formula, solution, "-o", tree_json)
    assert code == 0 and "class:" in out and "depth: " in out
    assert json.loads(tree_json.read_text())["format"] == "satdt-tree"
    solution.write_text("s UNSATISFIABLE\n")
    code, _, err = run(capsys, "decode", formula, solution)
    assert code == 2 and "unsatisfiable" in err
    code, _, err = run(capsys, "decode", tmp_path / "missing.cnf", solution)
    assert code == 2 and "file not found" in err


def test_messages_name_flags_on_the_command_line_and_parameters_in_the_library(capsys):
    code, _, err = run(capsys, "infer", MOUSE, "--max-depth", "2")
    assert code == 1 and "--max-depth" in err
    with pytest.raises(InfeasibleError) as info:
        OptimalTreeClassifier(max_depth=2).fit(read_csv(MOUSE).X, read_csv(MOUSE).y)
    assert "max_depth" in str(info.value) and "--max-depth" not in str(info.value)


def test_semicolon_file_with_decimal_commas(capsys, tmp_path):
    data = tmp_path / "export.csv"
    data.write_text("width;height;kind\n1,5;2;a\n2,5;2;b\n1,5;3;a\n3,25;1;b\n")
    code, out, err = run(capsys, "infer", data)
    assert code == 0, err
    assert "width <= 2" in out and "depth: 1" in out
    code, out, err = run(capsys, "infer", data, "--sep", ";")
    assert code == 0, err
    assert run(capsys, "infer", data, "--sep", ";;")[0] == 2


def test_method_choices_come_from_the_table(capsys):
    with pytest.raises(SystemExit):
        main(["fit", str(MOUSE), "--max-depth", "2", "--method", "sat"])
    assert "invalid choice" in capsys.readouterr().err
    code, _, err = run(capsys, "infer", MOUSE, "--counterexamples", "nope")
    assert code == 2 and "--counterexamples" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_a_terminal():
    screen = _Terminal()
    status = Status(True, screen)
    status.event(Progress("binarizing", 3, 10))
    assert "binarizing 3/10" in screen.getvalue()
    status.clear()
    assert screen.getvalue().endswith("\r\033[K")
    quiet = io.StringIO()  # not a terminal: nothing is drawn
    Status(True, quiet).event(Progress("binarizing", 3, 10))
    assert quiet.getvalue() == ""


def test_models_saved_by_version_1_still_load(capsys, tmp_path):
    model = tmp_path / "model.json"
    assert run(capsys, "infer", MOUSE, "--save", model, "--quiet")[0] == 0
    document = json.loads(model.read_text())
    assert document["kind"] == "tree" and document["version"] == 2
    old = {k: v for k, v in document.items() if k not in ("kind", "model")}
    old.update(version=1, tree=document["model"])
    legacy = tmp_path / "legacy.json"
    legacy.write_text(json.dumps(old))
    code, out, _ = run(capsys, "predict", legacy, MOUSE)
    assert code == 0 and out.split()[0] == "X"
    document["kind"] = "forest"
    model.write_text(json.dumps(document))
    code, _, err = run(capsys, "predict", model, MOUSE)
    assert code == 2 and "forest" in err


# ---------------------------------------------------------------------- output paths
@pytest.mark.parametrize(
    "argv",
    [
        ["infer", MOUSE, "--save", "{missing}/model.json"],
        ["infer", MOUSE, "-o", "{missing}/tree.txt"],
        ["fit", MOUSE, "--max-depth", "2", "--save", "{missing}/model.json"],
        ["fit", MOUSE, "--max-depth", "2", "--plot", "{missing}/curve.png"],
        ["fit", MOUSE, "--max-depth", "2", "-o", "{tmp}"],  # a folder, not a file
        ["diagram", MOUSE, "--size", "--save", "{missing}/diagram.json"],
        ["predict", "{tmp}/model.json", MOUSE, "-o", "{missing}/predicted.csv"],
        ["encode", MOUSE, "--depth", "2", "-o", "{missing}/formula.cnf"],
        ["decode", "{tmp}/formula.cnf", "{tmp}/answer.txt", "-o", "{missing}/tree.json"],
        ["sweep", "--data", str(MOUSE), "--param", "max_depth=2", "-o", "{missing}/r.jsonl"],
        ["report", "{tmp}/results.jsonl", "--plots", "{tmp}/model.json/plots"],
    ],
)
def test_an_unwritable_output_fails_before_any_work(capsys, tmp_path, argv):
    (tmp_path / "model.json").write_text("{}")  # a file where --plots wants a folder
    args = [str(a).format(missing=tmp_path / "missing", tmp=tmp_path) for a in argv]
    code, out, err = run(capsys, *args)
    assert code == 2, err
    assert out == ""  # nothing was searched, printed or written
    assert "Traceback" not in err and err.startswith("satdt: error:")
    assert ("does not exist" in err) or ("folder" in err) or ("is a file" in err)
    assert not (tmp_path / "missing").exists()


def test_a_model_that_cannot_be_saved_after_the_search_is_printed(capsys, tmp_path, monkeypatch):
    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("satdt.cli.files.save_model", full_disk)
    code, out, err = run(capsys, "infer", MOUSE, "--save", tmp_path / "model.json")
    assert code == 2
    assert "depth: 4 (proven minimum)" in out  # the tree and its summary
    document = json.loads(out[out.index('{\n "format"') :])  # then the model file's content
    assert document["kind"] == "tree"
    assert "cannot save the model" in err and "No space left" in err


def test_an_output_that_cannot_be_written_after_the_search_is_printed(
    capsys, tmp_path, monkeypatch
):
    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full_disk)
    code, out, err = run(capsys, "infer", MOUSE, "-o", tmp_path / "tree.txt", "--quiet")
    assert code == 2
    assert "class: 1" in out and "cannot write" in err and "printed above" in err


def test_warmup_command_reports_every_group(capsys):
    code, out, _ = run(capsys, "warmup", "--method", "blossom", "--verbose")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].split()[0] == "counts" and lines[1].split()[-1].replace(".", "").isdigit()
    assert any(line.split()[0] == "blossom" for line in lines[1:])
    assert "Numba's cache:" in out and "total:" in out


def test_the_summary_says_what_a_first_run_compiled_in_the_background(capsys, monkeypatch):
    from satdt.dp import kernels

    code, out, _ = run(capsys, "infer", MOUSE)
    assert code == 0 and "first run:" not in out  # SAT alone: no kernel asked for
    states = {"contree": "compiled", "greedy": "compiling"}
    monkeypatch.setattr(kernels, "background", lambda since=None: dict(states))
    code, out, _ = run(capsys, "infer", MOUSE)
    assert code == 0
    assert (
        "first run: kernels in the background (compiled: contree; still compiling: greedy); "
        "later runs load them from Numba's cache"
    ) in out.splitlines()


def test_the_lines_of_a_stream_and_of_a_teacher():
    """A call of partial_fit says the rows it brought and whether the tree kept; fit_teacher
    how many questions it asked."""
    import numpy as np

    from satdt.cli.reports import search_lines
    from satdt.task.teachers import FunctionTeacher

    model = OptimalTreeClassifier().partial_fit(np.array([[0.0], [4.0]]), [0, 1])
    model.partial_fit(np.array([[1.0], [3.0], [0.0]]), [0, 1, 0])
    lines = search_lines(model.result_)
    assert "new rows: 2 (5 given so far)" in lines and "SAT calls: 0" in lines
    assert "the tree classified every new row: kept, no SAT call" in lines
    teacher = FunctionTeacher(lambda a, b: a and b, [bool, bool])
    lines = search_lines(OptimalTreeClassifier().fit_teacher(teacher).result_)
    assert any(line.startswith("teacher: ") and "questions" in line for line in lines)
