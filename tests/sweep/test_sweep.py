"""Sweeps: specs, folds, local and Dask executors, nothing lost or duplicated, the report."""

from __future__ import annotations

import json
import math
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT

from satdt import OptimalTreeClassifier, SatdtError, read_csv
from satdt.cli import main
from satdt.sweep import (
    aggregate,
    cv_depths,
    load_spec,
    read_results,
    report_markdown,
    resolve_estimator,
    run_sweep,
    stratified_folds,
)

EXAMPLES = ROOT / "examples" / "data"
HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _workers_import_this_module(monkeypatch):
    """Spawned workers (local and Dask) import the test estimators below as ``test_sweep`` (and
    the tests' helpers it imports)."""
    paths = [str(HERE), str(HERE.parent), str(ROOT), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))


class SleepyClassifier:
    """A test estimator: predicts the majority class after sleeping; records the pid it runs in.

    ``pid_dir``: while fitting, a file named by the process id is there (the tests kill
    workers found this way).
    """

    def __init__(self, seconds: float = 0.0, pid_dir: str | None = None, time_limit=None) -> None:
        self.seconds = seconds
        self.pid_dir = pid_dir
        self.time_limit = time_limit

    def get_params(self, deep: bool = True) -> dict:
        return {"seconds": self.seconds, "pid_dir": self.pid_dir, "time_limit": self.time_limit}

    def set_params(self, **params) -> SleepyClassifier:
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def fit(self, X, y) -> SleepyClassifier:
        marker = None if self.pid_dir is None else Path(self.pid_dir) / str(os.getpid())
        if marker is not None:
            marker.touch()
        time.sleep(self.seconds)
        if marker is not None:
            marker.unlink()
        values, counts = np.unique(y, return_counts=True)
        self.label_ = values[np.argmax(counts)]
        return self

    def score(self, X, y) -> float:
        return float(np.mean(np.asarray(y) == self.label_))


def _tree_spec(folds: int = 3) -> dict:
    return {
        "data": [{"files": [str(EXAMPLES / "mouse.csv"), str(EXAMPLES / "iris.csv")]}],
        "estimator": [
            {
                "name": "tree",
                "params": {"objective": "error"},
                "grid": {"max_depth": [2, 3], "method": ["blossom", "contree"]},
            }
        ],
        "folds": folds,
        "time_limit": 20,
    }


def _sleepy_spec(n_files: int = 1, folds: int = 5, **params) -> dict:
    files = [str(EXAMPLES / name) for name in ("mouse.csv", "iris.csv", "monk1.csv")[:n_files]]
    return {
        "data": [{"files": files}],
        "estimator": [
            {"name": "sleepy", "estimator": "test_sweep:SleepyClassifier", "params": params}
        ],
        "folds": folds,
    }


def _lines(path: Path) -> list[dict]:
    """Every line of a results file, each parsed (so each must be valid JSON)."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def _outcome(record: dict) -> tuple:
    """What a task found, without timings."""
    return tuple(
        record[k]
        for k in ("status", "train_error", "test_accuracy", "depth", "nodes", "objective_value")
    )


# ---------------------------------------------------------------------- folds and specs
def test_stratified_folds_balanced_and_deterministic():
    y = np.array([0] * 23 + [1] * 11 + [2] * 6)
    fold = stratified_folds(y, 5, seed=3)
    assert np.array_equal(fold, stratified_folds(y, 5, seed=3))
    assert not np.array_equal(fold, stratified_folds(y, 5, seed=4))
    sizes = np.bincount(fold, minlength=5)
    assert sizes.max() - sizes.min() <= 1
    for cls in range(3):
        per_fold = np.bincount(fold[y == cls], minlength=5)
        assert per_fold.max() - per_fold.min() <= 1
    with pytest.raises(Exception, match="at least 5 rows"):
        stratified_folds(np.array([0, 1, 0]), 5, 0)


def test_spec_toml_json_and_file_pairs(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "mouse.csv").write_bytes((EXAMPLES / "mouse.csv").read_bytes())
    tmp_path = tmp_path / "sweeps"
    tmp_path.mkdir()
    for k in range(2):
        for part in ("train", "test"):
            (tmp_path / f"toy.csv.{part}{k}.csv").write_text("a,b,y\n1,2,0\n3,4,1\n5,6,0\n")
    (tmp_path / "spec.toml").write_text(
        'time_limit = [5, 10]\nfolds = 4\n[[data]]\nfiles = ["../data/mouse.csv"]\n'
        '[[data]]\nfiles = ["toy.csv.train*.csv"]\nsplit = "files"\n'
        '[[estimator]]\nparams = { objective = "error" }\ngrid = { max_depth = [1, 2, 3] }\n'
    )
    spec = load_spec(tmp_path / "spec.toml")
    mouse = [t for t in spec.jobs if t.data == "mouse.csv"]
    toy = [t for t in spec.jobs if t.data == "toy.csv"]
    assert len(mouse) == 3 * 2 * 4 and len(toy) == 3 * 2 * 2
    assert {(t.fold, Path(t.test).name) for t in toy} == {
        (0, "toy.csv.test0.csv"),
        (1, "toy.csv.test1.csv"),
    }
    assert len({t.key for t in spec.jobs}) == len(spec.jobs)
    document = json.loads(json.dumps(spec.document))
    (tmp_path / "spec.json").write_text(json.dumps(document))
    assert [t.key for t in load_spec(tmp_path / "spec.json").jobs] == [t.key for t in spec.jobs]
    # a changed data file makes new tasks
    (tmp_path / "toy.csv.train0.csv").write_text("a,b,y\n1,2,1\n3,4,1\n5,6,0\n")
    changed = {t.key for t in load_spec(tmp_path / "spec.toml").jobs}
    assert len(changed - {t.key for t in spec.jobs}) == 3 * 2


def test_spec_errors(tmp_path):
    with pytest.raises(Exception, match="unknown keys"):
        load_spec({"data": [], "estimator": [], "depth": 3})
    with pytest.raises(Exception, match="no data file matches"):
        load_spec({"data": [{"files": ["nothing*.csv"]}], "estimator": [{}]}, base=str(tmp_path))
    assert resolve_estimator("tree") is OptimalTreeClassifier
    with pytest.raises(SatdtError, match=r"'satdt\.nothing:Thing' is not available here"):
        resolve_estimator("satdt.nothing:Thing")
    try:  # the diagram estimator, once its module exists
        assert resolve_estimator("diagram").__name__ == "OptimalDiagramClassifier"
    except SatdtError as exc:
        assert "not available here" in str(exc)
    with pytest.raises(Exception, match="estimator must be one of"):
        load_spec(
            {
                "data": [{"files": [str(EXAMPLES / "mouse.csv")]}],
                "estimator": [{"estimator": "forest"}],
            }
        )


# ---------------------------------------------------------------------- running locally
def test_local_sweep_records_and_rerun_skips(tmp_path):
    out = tmp_path / "results.jsonl"
    summary = run_sweep(_tree_spec(), out, jobs=2)
    spec = load_spec(_tree_spec())
    assert summary.progress.done == len(spec.jobs) == 24 and summary.progress.failed == 0
    headers, results = read_results(out)
    assert headers[0]["satdt"] and headers[0]["spec"]["folds"] == 3
    assert {r["key"] for r in results} == {t.key for t in spec.jobs}
    for r in results:
        assert r["status"] == "ok" and r["proven_optimal"] and r["attempts"] == 1
        assert 0 <= r["train_error"] <= 1 and 0 <= r["test_accuracy"] <= 1
        assert r["depth"] <= r["params"]["max_depth"] and r["nodes"] >= 1
        assert r["history"] and r["history"][-1][1] == r["objective_value"]
        assert r["peak_rss_mb"] >= r["rss_before_mb"] > 0
        assert r["runtime"] < 20
    # the training error is the optimum the search proved (rows of the training part)
    some = next(r for r in results if r["data"] == "mouse.csv")
    assert some["train_error"] == pytest.approx(some["objective_value"] / some["train_rows"])
    again = run_sweep(_tree_spec(), out, jobs=2)
    assert again.progress.done == 0 and again.progress.skipped == 24
    assert len([line for line in _lines(out) if line["type"] == "result"]) == 24


def test_task_limit_then_rerun_runs_only_missing(tmp_path):
    out = tmp_path / "results.jsonl"
    first = run_sweep(_sleepy_spec(), out, jobs=2, max_tasks=2)
    assert first.progress.done == 2
    second = run_sweep(_sleepy_spec(), out, jobs=2)
    assert second.progress.done == 3 and second.progress.skipped == 2
    keys = [line["key"] for line in _lines(out) if line["type"] == "result"]
    assert len(keys) == len(set(keys)) == 5


def test_failing_tasks_are_recorded_and_the_rest_finish(tmp_path):
    broken = tmp_path / "broken.csv"
    broken.write_text("a,b,y\n1,2\n3,4,1\n")
    spec = {
        "data": [{"files": [str(EXAMPLES / "mouse.csv"), str(broken)]}],
        "estimator": [
            {
                "params": {"objective": "error", "max_depth": 2},
                "grid": {"method": ["blossom", "nonsense"]},
            }
        ],
        "folds": 2,
    }
    summary = run_sweep(spec, tmp_path / "r.jsonl", jobs=2)
    _, results = read_results(tmp_path / "r.jsonl")
    assert len(results) == 8 and summary.progress.failed == 6
    ok = [r for r in results if r["status"] == "ok"]
    assert {(r["data"], r["params"]["method"]) for r in ok} == {("mouse.csv", "blossom")}
    messages = {r["error"].split(":")[0] for r in results if r["status"] == "failed"}
    assert messages == {"DataError", "ParameterError"}
    assert any("method must be" in r["error"] for r in results if r["status"] == "failed")


def test_runaway_fit_is_killed_and_recorded(tmp_path):
    # fits of 0.1 s against a limit of 2 s and a margin of 1 s: on a loaded machine an
    # ordinary fit still ends in time, and only the stuck one is killed
    spec = _sleepy_spec(folds=2, seconds=0.1)
    spec["estimator"].append(
        {"name": "stuck", "estimator": "test_sweep:SleepyClassifier", "params": {"seconds": 600}}
    )
    spec["time_limit"] = 2.0
    started = time.perf_counter()
    summary = run_sweep(spec, tmp_path / "r.jsonl", jobs=2, margin=1.0)
    assert time.perf_counter() - started < 30
    _, results = read_results(tmp_path / "r.jsonl")
    stuck = [r for r in results if r["label"] == "stuck"]
    assert len(results) == 4 and summary.progress.failed == 2
    assert all(r["status"] == "failed" and "killed after" in r["error"] for r in stuck)
    assert all(r["status"] == "ok" for r in results if r["label"] == "sleepy")


def test_dead_worker_task_is_retried(tmp_path):
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    killed: list[int] = []

    def kill_one(progress) -> None:
        running = list(pid_dir.iterdir())
        if not killed and running:
            killed.append(int(running[0].name))
            os.kill(killed[0], signal.SIGKILL)

    spec = _sleepy_spec(folds=4, seconds=0.4, pid_dir=str(pid_dir))
    summary = run_sweep(spec, tmp_path / "r.jsonl", jobs=2, on_progress=kill_one)
    assert killed and summary.progress.retried >= 1 and summary.progress.failed == 0
    lines = [line for line in _lines(tmp_path / "r.jsonl") if line["type"] == "result"]
    assert len(lines) == len({line["key"] for line in lines}) == 4
    assert all(line["status"] == "ok" for line in lines)
    assert max(line["attempts"] for line in lines) == 2


# seconds of work: in the full suite, not the quick loop
@pytest.mark.slow
def test_sigint_stops_cleanly_and_rerun_completes(tmp_path):
    spec = tmp_path / "spec.json"
    # jobs of 1 s: the signal, sent once 3 results are in, lands while 7 are left even when a
    # loaded machine delays this loop by a few seconds
    spec.write_text(json.dumps(_sleepy_spec(n_files=2, folds=5, seconds=1.0)))
    out = tmp_path / "r.jsonl"
    command = [sys.executable, "-m", "satdt.cli", "sweep", str(spec), "-o", str(out), "--jobs", "2"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if out.exists() and out.read_text().count('"type": "result"') >= 3:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    partial = [line["key"] for line in _lines(out) if line["type"] == "result"]
    assert 3 <= len(partial) < 10
    rerun = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{10 - len(partial)} run now" in rerun.stdout
    keys = [line["key"] for line in _lines(out) if line["type"] == "result"]
    assert len(keys) == len(set(keys)) == 10


def test_torn_last_line_is_ignored_and_repaired(tmp_path):
    out = tmp_path / "r.jsonl"
    run_sweep(_sleepy_spec(folds=2), out, jobs=1)
    whole = out.read_text()
    last = whole.splitlines()[-1]
    out.write_text(whole[: len(whole) - len(last) // 2 - 1])  # killed while writing it
    headers, results = read_results(out)
    assert len(headers) == 1 and len(results) == 1
    summary = run_sweep(_sleepy_spec(folds=2), out, jobs=1)
    assert summary.progress.done == 1
    assert len([line for line in _lines(out) if line["type"] == "result"]) == 2
    # a torn line in the middle is an error, not silently skipped
    out.write_text('{"type": "header"}\n{"type": "res\n{"type": "header"}\n')
    with pytest.raises(Exception, match="line 2"):
        read_results(out)


# ---------------------------------------------------------------------- the report
def _record(
    data, depth, fold, accuracy, error, proven=True, runtime=1.0, status="ok", history=None
):
    return {
        "type": "result",
        "key": f"{data}-{depth}-{fold}-{status}",
        "data": data,
        "label": "tree",
        "params": {"objective": "error", "max_depth": depth},
        "fold": fold,
        "time_limit": 10.0,
        "status": status,
        "error": None if status == "ok" else "SatdtError: no",
        "test_accuracy": accuracy,
        "train_error": error,
        "proven_optimal": proven,
        "runtime": runtime,
        "nodes": 2 * depth + 1,
        "objective": "error",
        "objective_value": history[-1][1] if history else 0.0,
        "history": history or [[0.0, 0.0]],
    }


def test_report_aggregates_a_hand_made_file(tmp_path, capsys):
    records = [
        _record("a.csv", 2, 0, 0.8, 0.10, history=[[0.0, 4.0], [1.0, 2.0]]),
        _record("a.csv", 2, 1, 0.6, 0.20, proven=False, runtime=3.0, history=[[0.0, 5.0]]),
        _record("a.csv", 3, 0, 0.9, 0.05, history=[[0.5, 2.0]]),
        _record("a.csv", 3, 1, 0.9, 0.05, history=[[0.0, 1.0]]),
        _record("a.csv", 3, 2, None, None, status="failed"),
    ]
    path = tmp_path / "r.jsonl"
    header = {"type": "header", "satdt": "9.9", "spec": {}}
    path.write_text("\n".join(json.dumps(r) for r in [header, *records]) + '\n{"type": "res')
    _, results = read_results(path)
    rows = aggregate(results)
    assert [(r.data, r.max_depth, r.runs, r.failed, r.proven) for r in rows] == [
        ("a.csv", 2, 2, 0, 1),
        ("a.csv", 3, 3, 1, 2),
    ]
    assert rows[0].test_accuracy[0] == pytest.approx(0.7)
    assert rows[0].test_accuracy[1] == pytest.approx(np.std([0.8, 0.6], ddof=1))
    assert rows[0].train_error[0] == pytest.approx(0.15)
    assert rows[0].runtime[0] == pytest.approx(2.0)
    # primal integrals: fold 0 best known 2 (depth 3 has its own), horizon 10 s
    # depth 2, fold 0: gap 1/2 for 1 s -> 0.5; fold 1: best known 5 -> 0
    assert rows[0].primal_integral == pytest.approx(0.25)
    assert rows[1].primal_integral == pytest.approx(0.25)  # fold 0: no tree for 0.5 s
    assert cv_depths(rows) == {("a.csv", "tree objective=error", 10.0): 3}
    table = report_markdown(rows)
    assert "| a.csv | tree objective=error | 2 | 10 | 2 | 0 | 0.700 ± 0.141 |" in table
    assert "1/2" in table and "2/2" in table
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "5 results (1 failed) of satdt 9.9" in out and "cross-validation" in out
    assert main(["report", str(path), "--plots", str(tmp_path / "plots")]) == 0
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == [
        "a_csv_anytime_d2.png",
        "a_csv_anytime_d3.png",
        "a_csv_depth.png",
    ]


def test_cli_sweep_flags_dry_run_and_exit_codes(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    flags = ["--data", str(EXAMPLES / "mouse.csv"), "--param", "objective=error"]
    flags += ["--param", "max_depth=1,2", "--folds", "2", "-o", str(out), "--jobs", "1"]
    assert main(["sweep", *flags, "--dry-run"]) == 0
    assert "4 tasks" in capsys.readouterr().out
    assert main(["sweep", *flags, "--quiet"]) == 0
    assert "4 tasks: 4 run now (0 failed)" in capsys.readouterr().out
    assert main(["sweep", *flags, "--param", "method=nonsense", "--quiet"]) == 1
    assert "method must be" in capsys.readouterr().out
    assert main(["sweep", "--folds", "2"]) == 2
    assert "needs data and estimators" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.jsonl")]) == 2


def test_shipped_example_spec_loads():
    spec = load_spec(ROOT / "examples" / "sweeps" / "small.toml")
    assert len(spec.jobs) == 5 * 3 * 2 * 5 and spec.output.name == "small.jsonl"


# ---------------------------------------------------------------------- Dask
@pytest.mark.slow
def test_dask_local_cluster_matches_local_processes(tmp_path):
    pytest.importorskip("distributed")
    local = run_sweep(_tree_spec(), tmp_path / "local.jsonl", jobs=2)
    dask = run_sweep(_tree_spec(), tmp_path / "dask.jsonl", scheduler="local:2")
    assert local.progress.failed == dask.progress.failed == 0
    _, a = read_results(tmp_path / "local.jsonl")
    _, b = read_results(tmp_path / "dask.jsonl")
    assert {r["key"]: _outcome(r) for r in a} == {r["key"]: _outcome(r) for r in b}
    assert len(a) == 24


@pytest.mark.slow
def test_dask_worker_killed_mid_sweep_loses_and_duplicates_nothing(tmp_path):
    pytest.importorskip("distributed")
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    killed: list[int] = []

    def kill_one(progress) -> None:
        running = list(pid_dir.iterdir())
        if not killed and progress.done >= 2 and running:
            killed.append(int(running[0].name))
            os.kill(killed[0], signal.SIGKILL)

    spec = _sleepy_spec(n_files=2, folds=5, seconds=0.5, pid_dir=str(pid_dir))
    summary = run_sweep(spec, tmp_path / "r.jsonl", scheduler="local:2", on_progress=kill_one)
    assert killed and summary.progress.failed == 0 and summary.progress.done == 10
    lines = [line for line in _lines(tmp_path / "r.jsonl") if line["type"] == "result"]
    assert len(lines) == len({line["key"] for line in lines}) == 10
    assert all(line["status"] == "ok" for line in lines)
    assert len({line["pid"] for line in lines} - set(killed)) >= 2  # a restarted worker ran some


@pytest.mark.slow
def test_dask_runaway_fit_is_recorded_failed(tmp_path):
    pytest.importorskip("distributed")
    spec = _sleepy_spec(folds=2, seconds=0.2)
    spec["estimator"].append(
        {"name": "stuck", "estimator": "test_sweep:SleepyClassifier", "params": {"seconds": 600}}
    )
    spec["time_limit"] = 0.5
    summary = run_sweep(spec, tmp_path / "r.jsonl", scheduler="local:2", margin=0.5, retries=1)
    _, results = read_results(tmp_path / "r.jsonl")
    assert len(results) == 4 and summary.progress.failed == 2
    assert all("KilledWorker" in r["error"] for r in results if r["label"] == "stuck")


def test_missing_dask_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(Exception, match=r"\[cluster\]"):
        run_sweep(_sleepy_spec(folds=2), tmp_path / "r.jsonl", scheduler="local:1")


# ---------------------------------------------------------------------- scikit-learn interplay
def test_estimators_pickle_fitted_and_unfitted():
    data = read_csv(EXAMPLES / "mouse.csv")
    model = OptimalTreeClassifier(objective="error", max_depth=2, method="blossom")
    clone = pickle.loads(pickle.dumps(model))
    assert clone.get_params() == model.get_params()
    model.fit(data.X, data.y)
    fitted = pickle.loads(pickle.dumps(model))
    assert np.array_equal(fitted.predict(data.X), model.predict(data.X))
    assert fitted.result_.objective_value == model.result_.objective_value


def test_grid_search_cv_with_two_processes():
    sklearn = pytest.importorskip("sklearn.model_selection")
    data = read_csv(EXAMPLES / "iris.csv")
    search = sklearn.GridSearchCV(
        OptimalTreeClassifier(objective="error", method="blossom"),
        {"max_depth": [1, 2, 3]},
        cv=3,
        n_jobs=2,
    )
    search.fit(data.X, data.y)
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)  # joblib keeps its workers for the next call
    serial = sklearn.GridSearchCV(
        OptimalTreeClassifier(objective="error", method="blossom"), {"max_depth": [1, 2, 3]}, cv=3
    ).fit(data.X, data.y)
    assert search.best_params_ == serial.best_params_
    assert np.allclose(search.cv_results_["mean_test_score"], serial.cv_results_["mean_test_score"])
    assert search.best_estimator_.tree_.depth <= search.best_params_["max_depth"]


@pytest.mark.slow
def test_joblib_dask_backend():
    sklearn = pytest.importorskip("sklearn.model_selection")
    distributed = pytest.importorskip("distributed")
    import joblib

    data = read_csv(EXAMPLES / "iris.csv")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
        joblib.parallel_backend("dask"),
    ):
        search = sklearn.GridSearchCV(
            OptimalTreeClassifier(objective="error", method="blossom"),
            {"max_depth": [1, 2, 3]},
            cv=3,
        ).fit(data.X, data.y)
    assert search.best_params_["max_depth"] in (2, 3)
    assert math.isclose(search.best_score_, max(search.cv_results_["mean_test_score"]))


def test_diagram_estimator_by_name(tmp_path):
    try:
        resolve_estimator("diagram")
    except SatdtError:
        pytest.skip("OptimalDiagramClassifier is not in this satdt")
    spec = {
        "data": [{"files": [str(EXAMPLES / "mouse.csv")]}],
        "estimator": [{"estimator": "diagram", "name": "diagram", "params": {"method": "maxsat"}}],
        "folds": 2,
        "time_limit": 30,
    }
    summary = run_sweep(spec, tmp_path / "r.jsonl", jobs=2)
    _, results = read_results(tmp_path / "r.jsonl")
    assert summary.progress.failed == 0 and len(results) == 2
    assert all(r["nodes"] >= 1 and r["test_accuracy"] is not None for r in results)


_TWO_SWEEPS = """
import json, sys
from satdt.sweep import local, read_results, run_sweep

spec, out = json.loads(sys.argv[1]), sys.argv[2]
runs = []
for name in ("first", "second"):
    run_sweep(spec, f"{out}/{name}.jsonl", jobs=2)
    _, records = read_results(f"{out}/{name}.jsonl")
    runs.append([[r["key"], r["pid"], r["warmup"], r["objective_value"]] for r in records])
print(json.dumps({"runs": runs, "kept": [list(k) for k in local._KEPT]}))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")
def test_workers_start_primed_and_a_whole_pool_serves_the_next_sweep(tmp_path):
    """In a process of its own (no other thread): workers forked after the parent read the
    data and loaded the kernels load nothing (warm-up 0); the second sweep of the process
    runs on the same workers, with the same results."""
    done = subprocess.run(
        [sys.executable, "-c", _TWO_SWEEPS, json.dumps(_tree_spec()), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    first, second = report["runs"]
    assert len(first) == len(second) == 24
    assert all(warmup < 1e-3 for _, _, warmup, _ in first)  # nothing left to load
    assert {pid for _, pid, _, _ in second} <= {pid for _, pid, _, _ in first}
    assert {k: v for k, _, _, v in second} == {k: v for k, _, _, v in first}
    assert report["kept"] == [[2, "fork"]]
