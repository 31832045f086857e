"""Sweeps: the grid datasets x estimators x parameters x time limits x folds, run anywhere.

A sweep is described by a small TOML (or JSON) file, read by :func:`load_spec`, and expanded
into :class:`Task` objects, one fit each. :func:`run_sweep` runs the tasks on local worker
processes (:class:`concurrent.futures.ProcessPoolExecutor`) or on a Dask cluster, and the
parent process alone appends one JSON line per finished task to the results file (flushed and
fsynced), so nothing that finished is lost and a rerun skips it. :func:`read_results`,
:func:`aggregate`, :func:`cv_depths` and :func:`plot_report` turn the file into the report.

Guarantees and how they are kept:

- *Resumable*: a task's key hashes the data file (name and content), the estimator, its
  parameters, the fold and the time limit; a task whose key is in the file is skipped.
- *Worker death*: locally, a dead worker breaks the pool; the pool is recreated and the tasks
  that were running are retried up to ``retries`` times (then recorded failed), tasks that had
  not started are resubmitted free. On Dask the scheduler reschedules the tasks of a dead
  worker up to its ``distributed.scheduler.allowed-failures`` (set to ``retries`` for a
  cluster started here), then the task is recorded failed (``KilledWorker``).
- *Runaway fits*: locally, the parent kills the worker running a task longer than
  ``time_limit + margin`` and records the task failed (not retried: it would run away again).
  On Dask, a single-threaded worker arms a process-wide ``SIGALRM`` timer for
  ``time_limit + margin``: the worker process dies, its nanny restarts it and the scheduler's
  ``allowed-failures`` rule ends in a failed record. Workers with several threads are not
  protected (one timer per process); run them with ``--nthreads 1``.
- *Errors*: a task that raises is recorded failed with its message; the sweep goes on.
- *Ctrl-C*: the parent stops the workers; the file keeps every finished task.

Data files are read once per worker process (a cache keyed by path, modification time and
size): tasks carry paths, never data, so on a cluster the files must be at the same path on
every worker.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import hashlib
import importlib
import inspect
import json
import math
import multiprocessing as mp
import os
import queue
import re
import signal
import socket
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from glob import glob
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__
from .errors import SatdtError

# Estimators by name; "module:Class" names any other classifier with fit/score. Imported only
# in the worker that runs the task, so a module still being written costs nothing until used.
ESTIMATORS = {
    "tree": "satdt.learner:OptimalTreeClassifier",
    "diagram": "satdt.diagrams:OptimalDiagramClassifier",
}
DEFAULT_MARGIN = 30.0  # seconds a fit may overrun its time limit before it is killed
DEFAULT_RETRIES = 2  # times a task is rerun after its worker died
CLUSTER_HINT = 'pip install -e ".[cluster]"'
_SPLIT_FILE = re.compile(r"train(\d+)")  # iris.csv.train3.csv pairs with iris.csv.test3.csv


# ---------------------------------------------------------------------- spec and tasks
@dataclass(frozen=True)
class Task:
    """One fit of a sweep: which data, which estimator with which parameters, which fold.

    ``train`` and ``test`` are absolute paths; ``test`` is ``None`` for a k-fold split of
    ``train`` (``folds`` parts, ``seed``), or for ``folds=1`` (fit on the whole file, no test).
    ``data`` is the file's name as reported, ``label`` the estimator's.
    """

    key: str
    data: str
    train: str
    test: str | None
    read: dict[str, Any]
    fold: int
    folds: int
    seed: int
    estimator: str
    label: str
    params: dict[str, Any]
    time_limit: float | None


@dataclass
class SweepSpec:
    """A sweep as read from its file: the tasks and where their results go."""

    tasks: list[Task]
    document: dict[str, Any]
    output: Path | None = None
    retries: int = DEFAULT_RETRIES
    margin: float = DEFAULT_MARGIN


def read_document(path: Path) -> dict[str, Any]:
    """The spec file as a dictionary: TOML (tomllib, or tomli before Python 3.11) or JSON."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SatdtError(f"cannot read the sweep spec {path}: {exc.strerror}") from None
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise SatdtError(f"{path} is not valid JSON: {exc}") from None
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise SatdtError(
                f"reading {path.name} needs tomllib (Python 3.11+) or tomli: pip install tomli, "
                "or write the spec as JSON"
            ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SatdtError(f"{path} is not valid TOML: {exc}") from None


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _digest(path: str) -> str:
    """The content hash of a data file (a changed file makes new tasks)."""
    sha = hashlib.sha256()
    try:
        with open(path, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                sha.update(block)
    except OSError:
        return "unreadable"  # the task fails in the worker and records why
    return sha.hexdigest()[:16]


def task_key(fields: dict[str, Any]) -> str:
    """The hash that names a task: data (name and content), estimator, parameters, fold, limit."""
    text = json.dumps(fields, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _data_files(entry: dict[str, Any], base: Path) -> list[tuple[str, str, str | None, int | None]]:
    """``(name, train, test, fold)`` of a data entry: globs relative to ``base``.

    ``split = "files"`` pairs every training file ``...train<K>...`` with its ``...test<K>...``.
    """
    patterns = _as_list(entry.get("files", []))
    if not patterns:
        raise SatdtError("every [[data]] entry needs files = [...] (paths or globs)")
    paired = entry.get("split", "kfold") == "files"
    if entry.get("split", "kfold") not in ("kfold", "files"):
        raise SatdtError(f"split must be 'kfold' or 'files', got {entry['split']!r}")
    found = []
    for pattern in patterns:
        full = pattern if Path(pattern).is_absolute() else str(base / pattern)
        matches = sorted(glob(full)) or ([] if any(c in pattern for c in "*?[") else [full])
        if not matches:
            raise SatdtError(f"no data file matches {pattern!r} (relative to {base})")
        for path in matches:
            name = os.path.relpath(path, base)  # in the key; reports show the file name
            if not paired:
                found.append((name, os.path.abspath(path), None, None))
                continue
            match = list(_SPLIT_FILE.finditer(Path(path).name))
            if not match:
                raise SatdtError(
                    f"split = 'files' needs training files named like name.train0.csv, got {path}"
                )
            last = match[-1]
            test_name = (
                Path(path).name[: last.start()] + "test" + Path(path).name[last.start() + 5 :]
            )
            test = str(Path(path).with_name(test_name))
            stem = Path(path).name[: last.start()].rstrip("._-")
            found.append(
                (
                    os.path.relpath(str(Path(path).with_name(stem)), base),
                    os.path.abspath(path),
                    os.path.abspath(test),
                    int(last.group(1)),
                )
            )
    return found


def _grid(params: dict[str, Any], grid: dict[str, Any]) -> list[dict[str, Any]]:
    """Every combination of the grid's values, each over the fixed ``params``."""
    names = list(grid)
    return [
        {**params, **dict(zip(names, values, strict=True))}
        for values in product(*(_as_list(grid[n]) for n in names))
    ]


def _check_estimator_name(name: str) -> None:
    if name not in ESTIMATORS and ":" not in name:
        raise SatdtError(
            f"estimator must be one of {sorted(ESTIMATORS)} or 'module:Class', got {name!r}"
        )


def build_tasks(document: dict[str, Any], base: Path) -> list[Task]:
    """Expand a spec document into its tasks (paths in it are relative to ``base``).

    The document has ``data`` (a list of ``{files, target, input_format, sep, drop, split}``),
    ``estimator`` (a list of ``{name, estimator, params, grid}``), and ``folds`` (default 5;
    1: fit on the whole file, no test), ``seed`` (default 0) and ``time_limit`` (seconds, a
    number or a list; default none).
    """
    known = {"data", "estimator", "folds", "seed", "time_limit", "output", "retries", "margin"}
    unknown = set(document) - known
    if unknown:
        raise SatdtError(
            f"unknown keys in the sweep spec: {sorted(unknown)}; known: {sorted(known)}"
        )
    folds = document.get("folds", 5)
    seed = document.get("seed", 0)
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 1:
        raise SatdtError(f"folds must be a positive integer, got {folds!r}")
    limits = [None if t is None else float(t) for t in _as_list(document.get("time_limit"))]
    for limit in limits:
        if limit is not None and not limit > 0:
            raise SatdtError(f"time_limit must be positive seconds, got {limit!r}")
    estimators = _as_list(document.get("estimator", []))
    if not estimators:
        raise SatdtError("the sweep spec needs at least one [[estimator]]")
    tasks = []
    for entry in _as_list(document.get("data", [])):
        read = {
            k: entry[k]
            for k in ("target", "input_format", "sep", "drop")
            if entry.get(k) is not None
        }
        for name, train, test, file_fold in _data_files(entry, base):
            digest = _digest(train) + ("" if test is None else _digest(test))
            fold_ids = [file_fold] if test is not None else range(folds if folds > 1 else 1)
            for est in estimators:
                kind = est.get("estimator", "tree")
                _check_estimator_name(kind)
                label = est.get("name", kind)
                for params, limit, fold in product(
                    _grid(dict(est.get("params", {})), dict(est.get("grid", {}))), limits, fold_ids
                ):
                    n_folds = 0 if test is not None else folds
                    key = task_key(
                        dict(data=name, digest=digest, read=read, estimator=kind, label=label,
                             params=params, fold=fold, folds=n_folds, seed=seed, time_limit=limit)
                    )  # fmt: skip
                    tasks.append(
                        Task(key, Path(name).name, train, test, read, fold, n_folds, seed, kind, label,
                             params, limit)
                    )  # fmt: skip
    if not tasks:
        raise SatdtError("the sweep spec needs at least one [[data]] entry with files")
    return tasks


def load_spec(
    source: str | os.PathLike[str] | dict[str, Any], base: str | None = None
) -> SweepSpec:
    """Read a sweep spec (a ``.toml`` or ``.json`` file, or a dictionary) and build its tasks.

    Paths in a file are relative to the file; in a dictionary, to ``base`` (default: the
    current directory). An ``output`` key names the results file (relative likewise).
    """
    if isinstance(source, dict):
        document, root = source, Path(base or ".").resolve()
    else:
        path = Path(source)
        document, root = read_document(path), path.resolve().parent
    tasks = build_tasks(document, root)
    output = document.get("output")
    return SweepSpec(
        tasks=tasks,
        document=document,
        output=None if output is None else root / output,
        retries=int(document.get("retries", DEFAULT_RETRIES)),
        margin=float(document.get("margin", DEFAULT_MARGIN)),
    )


def stratified_folds(y: np.ndarray, k: int, seed: int) -> np.ndarray:
    """The fold (0..k-1) of each row: every class spread evenly over the folds, shuffled by ``seed``.

    Classes are dealt in turn, continuing where the previous class stopped, so fold sizes differ
    by at most one; the same ``(y, k, seed)`` always gives the same folds (scikit-learn's
    ``StratifiedKFold`` is not needed at run time).
    """
    if len(y) < k:
        raise SatdtError(f"folds={k} needs at least {k} rows, the file has {len(y)}")
    _, codes = np.unique(np.asarray(y), return_inverse=True)
    rng = np.random.default_rng(seed)
    fold = np.empty(len(codes), dtype=np.int64)
    start = 0
    for cls in range(codes.max() + 1):
        rows = rng.permutation(np.flatnonzero(codes == cls))
        fold[rows] = (start + np.arange(len(rows))) % k
        start += len(rows)
    return fold


# ---------------------------------------------------------------------- the worker side
_DATA_CACHE: dict[tuple[Any, ...], Any] = {}
_WARMED: set[str] = set()


def _cached(path: str, read: dict[str, Any], schema_of: str | None = None) -> Any:
    """A data file read once per process (keyed by path, mtime, size and read options).

    With ``schema_of``, the file is read with the schema of that (training) file.
    """
    from .data import read_csv, read_with_schema

    stat = os.stat(path)
    key = (path, stat.st_mtime_ns, stat.st_size, json.dumps(read, sort_keys=True), schema_of)
    if key not in _DATA_CACHE:
        fmt = {"input_format": read.get("input_format", "auto"), "sep": read.get("sep")}
        if schema_of is None:
            drop = read.get("drop", [])
            drop = [c.strip() for c in drop.split(",")] if isinstance(drop, str) else drop
            data = read_csv(path, target=read.get("target"), drop=drop, **fmt)
        else:
            schema = _cached(schema_of, read).schema
            data = read_with_schema(path, schema, require_target=True, **fmt)
        _DATA_CACHE[key] = data
    return _DATA_CACHE[key]


def resolve_estimator(name: str) -> type:
    """The estimator class of a name of :data:`ESTIMATORS` or ``"module:Class"``, imported now."""
    _check_estimator_name(name)
    module_name, _, class_name = ESTIMATORS.get(name, name).partition(":")
    try:
        return getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise SatdtError(f"estimator {name!r} is not available here: {exc}") from None


def _warm(model: Any) -> float:
    """Load the Numba kernels of the method a satdt estimator will run, once per process.

    Kept out of the measured fit time: the first worker compiles them (the others wait for
    it, :mod:`satdt.dp.kernels`), every other process loads them from Numba's cache; returns
    the seconds it took (0 when already loaded).
    """
    from . import methods
    from .diagrams import OptimalDiagramClassifier
    from .learner import SatdtEstimator

    if not isinstance(model, SatdtEstimator):
        return 0.0
    objective, method = model.objective, model.method
    if isinstance(model, OptimalDiagramClassifier):  # the routes' tree starts
        from .diagram_search import DIAGRAM_METHODS

        routes = DIAGRAM_METHODS.values() if method == "auto" else [DIAGRAM_METHODS[method]]
        names = {name for route in routes for name in route.tree_methods}
    else:
        names = {methods.choose_method(objective) if method == "auto" else method}
        if method == "auto" and objective == "error":
            names.add("contree")  # what auto picks on numeric data with many thresholds
    started = time.perf_counter()
    todo = sorted(name for name in names - _WARMED if name in methods.METHODS)
    if todo:
        methods.warmup(todo, jobs=1)  # the sweep's workers are the parallelism
    _WARMED.update(names)
    return time.perf_counter() - started


def _reset_peak_memory() -> str:
    """Reset the process's peak resident size where Linux allows it; return the measure used.

    ``VmHWM`` (Linux, reset through ``/proc/self/clear_refs``) is the peak resident memory of
    the process during the fit: everything counts (numpy, Numba's allocations, the SAT
    solver's C heap) at no cost to the fit. tracemalloc would see only Python's allocator and
    slow the fit down. Elsewhere ``ru_maxrss``, which cannot be reset: its value is then the
    peak of the worker's life so far, an upper bound.
    """
    try:
        with open("/proc/self/clear_refs", "w") as file:
            file.write("5")
        return "VmHWM"
    except OSError:
        return "ru_maxrss"


def _memory_mb(measure: str) -> tuple[float, float]:
    """``(current, peak)`` resident memory of this process in MB."""
    if measure == "VmHWM":
        values = {}
        with open("/proc/self/status") as file:
            for line in file:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    values[line.split(":")[0]] = int(line.split()[1]) / 1024
        return values["VmRSS"], values["VmHWM"]
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak_mb = peak / (1024 * 1024 if sys.platform == "darwin" else 1024)  # bytes on macOS
    return math.nan, peak_mb


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _split(task: Task) -> tuple[Any, Any, Any, Any, list[str]]:
    """``(X_train, y_train, X_test, y_test, feature_names)`` of a task (test ``None``: no test)."""
    data = _cached(task.train, task.read)
    if task.test is not None:
        test = _cached(task.test, task.read, schema_of=task.train)
        return data.X, data.y, test.X, test.y, data.feature_names
    if task.folds <= 1:
        return data.X, data.y, None, None, data.feature_names
    fold = stratified_folds(data.y, task.folds, task.seed)
    train, test = fold != task.fold, fold == task.fold
    return data.X[train], data.y[train], data.X[test], data.y[test], data.feature_names


def run_task(task: Task) -> dict[str, Any]:
    """Fit one task in this process and return its record (never raises).

    The record holds the training error (misclassified fraction of the training part), the
    test accuracy (``None`` without a test part), the model's depth and nodes, whether the
    search proved it optimal and its lower bound, the fit's wall-clock seconds, the process's
    memory before and at its peak during the fit, and the history of incumbents
    ``[elapsed, value]``. A task that raises is recorded with ``status = "failed"`` and the
    error.
    """
    record: dict[str, Any] = {
        "type": "result",
        **{k: v for k, v in asdict(task).items() if k not in ("train", "test", "read")},
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": _now(),
    }
    try:
        X, y, X_test, y_test, names = _split(task)
        model = resolve_estimator(task.estimator)(**task.params)
        if task.time_limit is not None and "time_limit" in model.get_params():
            model.set_params(time_limit=task.time_limit)
        record["warmup"] = _warm(model)
        extra = (
            {"feature_names": names}
            if "feature_names" in inspect.signature(model.fit).parameters
            else {}
        )
        measure = _reset_peak_memory()
        before, _ = _memory_mb(measure)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # not proven: the record says so
            started = time.perf_counter()
            model.fit(X, y, **extra)
            runtime = time.perf_counter() - started
        _, peak = _memory_mb(measure)
        result = getattr(model, "result_", None)
        fitted = getattr(result, "tree", None)
        record.update(
            status="ok",
            runtime=runtime,
            train_rows=len(y),
            test_rows=None if y_test is None else len(y_test),
            train_error=1.0 - float(model.score(X, y)),
            test_accuracy=None if y_test is None else float(model.score(X_test, y_test)),
            depth=getattr(fitted, "depth", None),
            nodes=getattr(fitted, "n_nodes", None),
            method=getattr(model, "method_", None),
            objective=getattr(result, "objective", None),
            objective_value=getattr(result, "objective_value", None),
            proven_optimal=getattr(result, "proven_optimal", None),
            lower_bound=getattr(result, "lower_bound", None),
            history=[[float(h[0]), float(h[1])] for h in getattr(result, "history", ())],
            rss_before_mb=before,
            peak_rss_mb=peak,
            memory_measure=measure,
        )
    except Exception as exc:  # a task's failure is data of the sweep, not its end
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}")
    record["finished"] = _now()
    return record


# ---------------------------------------------------------------------- the results file
def read_results(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(headers, results)`` of a results file; the last record of each task key wins.

    A torn last line (the sweep was killed while writing it) is ignored: that task reruns.
    """
    headers: list[dict[str, Any]] = []
    results: dict[str, dict[str, Any]] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        return headers, []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):  # no newline after it: torn by a kill
                continue
            raise SatdtError(f"{path}, line {number}: not a JSON record") from None
        if record.get("type") == "header":
            headers.append(record)
        elif record.get("type") == "result":
            results[record["key"]] = record
    return headers, list(results.values())


class ResultsFile:
    """The append-only JSON-lines file a sweep writes, from the parent process only.

    Opening it repairs a torn last line (cut back to the last newline), so appending after a
    killed run keeps every line valid JSON. Each record is flushed and fsynced as written.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(self.path, "a+b")  # noqa: SIM115 (held open for the whole sweep)
        size = self.file.seek(0, os.SEEK_END)
        if size:
            self.file.seek(max(0, size - (1 << 20)))
            tail = self.file.read()
            if not tail.endswith(b"\n"):
                cut = tail.rfind(b"\n")
                self.file.truncate(size - len(tail) + cut + 1 if cut >= 0 else 0)
                self.file.seek(0, os.SEEK_END)

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, default=_json_default, allow_nan=True) + "\n"
        self.file.write(line.encode())
        self.file.flush()
        os.fsync(self.file.fileno())

    def close(self) -> None:
        self.file.close()


def _json_default(value: object) -> object:
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


# ---------------------------------------------------------------------- running
@dataclass
class SweepProgress:
    """Where a sweep stands, passed to the progress callback."""

    total: int
    done: int = 0  # finished in this run (ok or failed), skipped ones not included
    failed: int = 0
    running: int = 0
    skipped: int = 0  # already in the results file
    elapsed: float = 0.0
    retried: int = 0

    @property
    def eta(self) -> float | None:
        """Seconds left at this run's pace so far (``None`` before the first task ends)."""
        left = self.total - self.skipped - self.done
        return None if self.done == 0 else self.elapsed / self.done * left


@dataclass
class SweepSummary:
    """What a call of :func:`run_sweep` did."""

    path: Path
    progress: SweepProgress
    interrupted: bool = False
    failures: list[dict[str, Any]] = field(default_factory=list)


_MESSAGES: Any = None  # a local worker's queue to the parent


def _init_worker(messages: Any) -> None:
    """Local worker start: Ctrl-C is the parent's business; say which process this is."""
    global _MESSAGES
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _MESSAGES = messages
    messages.put(("worker", os.getpid(), None))


def _run_reporting(task: Task) -> dict[str, Any]:
    """:func:`run_task` in a local worker, telling the parent first which task starts here."""
    _MESSAGES.put(("start", os.getpid(), task.key))
    return run_task(task)


class _Run:
    """The bookkeeping a sweep shares between executors: file, counts, progress callback."""

    def __init__(
        self,
        results: ResultsFile,
        on_progress: Callable[[SweepProgress], None] | None,
        total: int,
        skipped: int,
    ) -> None:
        self.results = results
        self.on_progress = on_progress
        self.progress = SweepProgress(total=total, skipped=skipped)
        self.started = time.perf_counter()
        self.failures: list[dict[str, Any]] = []

    def record(self, record: dict[str, Any]) -> None:
        self.results.write(record)
        self.progress.done += 1
        if record["status"] != "ok":
            self.progress.failed += 1
            self.failures.append(record)
        self.report()

    def fail(self, task: Task, error: str, attempts: int) -> None:
        record = {
            "type": "result",
            **{k: v for k, v in asdict(task).items() if k not in ("train", "test", "read")},
            "status": "failed",
            "error": error,
            "attempts": attempts,
            "finished": _now(),
        }
        self.record(record)

    def report(self, running: int | None = None) -> None:
        if running is not None:
            self.progress.running = running
        self.progress.elapsed = time.perf_counter() - self.started
        if self.on_progress is not None:
            self.on_progress(self.progress)


def _kill(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _run_local(tasks: list[Task], run: _Run, jobs: int, retries: int, margin: float) -> None:
    """Run on ``jobs`` local processes (spawned: clean state, Numba-safe, any platform).

    A pool is used until a worker dies; then the tasks to rerun go to a new pool.
    """
    context = mp.get_context("spawn")
    attempts: dict[str, int] = {}
    while tasks:
        tasks = _run_pool(tasks, run, context, jobs, attempts, retries, margin)


def _run_pool(
    tasks: list[Task],
    run: _Run,
    context: Any,
    jobs: int,
    attempts: dict[str, int],
    retries: int,
    margin: float,
) -> list[Task]:
    """Run tasks on one process pool until they are done or a worker dies; return what to rerun.

    Workers tell the parent (through a queue) which task they start, so the parent knows what
    runs where: a task over ``time_limit + margin`` has its worker killed and is recorded
    failed; when a worker dies the pool breaks, the tasks that were running are retried (not
    counted as an attempt when the parent's kill broke the pool) and those that had not
    started are resubmitted.
    """
    messages = context.Queue()
    pool = cf.ProcessPoolExecutor(
        jobs, mp_context=context, initializer=_init_worker, initargs=(messages,)
    )
    workers: set[int] = set()
    running: dict[str, tuple[int, float]] = {}  # key -> (worker pid, when the parent heard)
    finished: set[str] = set()
    killed: dict[str, float] = {}  # key -> seconds it had run
    broken: list[Task] = []

    def listen() -> None:
        while True:
            try:
                what, pid, key = messages.get_nowait()
            except queue.Empty:
                return
            if what == "worker":
                workers.add(pid)
            elif key not in finished:
                running[key] = (pid, time.monotonic())

    try:
        futures = {pool.submit(_run_reporting, task): task for task in tasks}
        limits = {task.key: task.time_limit for task in tasks}
        while futures:
            done, _ = cf.wait(futures, timeout=0.2, return_when=cf.FIRST_COMPLETED)
            listen()
            for future in done:
                task = futures.pop(future)
                finished.add(task.key)
                error = future.exception()
                if isinstance(error, cf.process.BrokenProcessPool):
                    broken.append(task)
                    continue
                running.pop(task.key, None)
                tries = attempts.get(task.key, 0) + 1
                if error is not None:  # the task or its record could not be pickled
                    run.fail(task, f"{type(error).__name__}: {error}", tries)
                    continue
                record = future.result()
                record["attempts"] = tries
                run.record(record)
            now = time.monotonic()
            for key, (pid, since) in running.items():
                limit = limits[key]
                if limit is not None and key not in killed and now - since > limit + margin:
                    killed[key] = now - since
                    _kill([pid])
            run.report(min(len(running), jobs))
    except BaseException:  # Ctrl-C: stop the workers now, their tasks rerun next time
        listen()
        pool.shutdown(wait=False, cancel_futures=True)
        _kill(workers)
        raise
    pool.shutdown(wait=False)  # every result is in: the workers' exit need not be waited for
    rerun = []
    for task in broken:
        tries = attempts.get(task.key, 0) + 1
        if task.key in killed:
            run.fail(
                task,
                f"killed after {killed[task.key]:.1f} s: over time_limit {task.time_limit:g} s "
                f"+ margin {margin:g} s",
                tries,
            )
        elif task.key in running and not killed:  # it was on the worker that died
            attempts[task.key] = tries
            if tries > retries:
                run.fail(task, f"the worker process died {tries} times running this task", tries)
            else:
                run.progress.retried += 1
                rerun.append(task)
        else:
            rerun.append(task)
    return rerun


def _dask_client(scheduler: str, retries: int) -> tuple[Any, Any]:
    """``(client, cluster)``: a client of ``scheduler`` (an address, or ``local:N``)."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise SatdtError(
            f"running on a Dask cluster needs dask.distributed: {CLUSTER_HINT}"
        ) from None
    if scheduler.startswith("local"):
        n = scheduler.partition(":")[2]
        if n and not n.isdigit():
            raise SatdtError(f"scheduler 'local:N' needs a number of workers, got {scheduler!r}")
        with dask.config.set({"distributed.scheduler.allowed-failures": retries}):
            cluster = LocalCluster(
                n_workers=int(n) if n else os.cpu_count(),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
        return Client(cluster), cluster
    return Client(scheduler), None


def _run_on_dask_worker(task: Task, hard_limit: float | None) -> dict[str, Any]:
    """:func:`run_task` on a Dask worker, killed by ``SIGALRM`` after ``hard_limit`` seconds.

    Only on a single-threaded worker: the timer is one per process.
    """
    from distributed import get_worker

    armed = hard_limit is not None and get_worker().state.nthreads == 1
    if armed:
        signal.setitimer(signal.ITIMER_REAL, hard_limit)
    try:
        return run_task(task)
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)


def _run_dask(tasks: list[Task], run: _Run, scheduler: str, retries: int, margin: float) -> None:
    """Run on a Dask cluster; results come back to this process in order of completion."""
    client, cluster = _dask_client(scheduler, retries)
    from distributed import as_completed

    futures = []
    try:
        by_key = {}
        for task in tasks:
            limit = None if task.time_limit is None else task.time_limit + margin
            future = client.submit(
                _run_on_dask_worker, task, limit, key=f"satdt-sweep-{task.key}", retries=retries
            )
            futures.append(future)
            by_key[future.key] = task
        last = 0.0
        for future in as_completed(futures):
            task = by_key[future.key]
            if future.status == "finished":
                record = future.result()
                record["attempts"] = None  # Dask does not say
                run.record(record)
            else:
                exc = future.exception()
                run.fail(task, f"{type(exc).__name__}: {exc}", retries + 1)
            future.release()
            if time.perf_counter() - last > 1.0:
                last = time.perf_counter()
                processing = client.processing()
                run.report(sum(len(keys) for keys in processing.values()))
            else:
                run.report()
    finally:
        client.cancel(futures)
        client.close()
        if cluster is not None:
            cluster.close()


def run_sweep(
    spec: SweepSpec | str | os.PathLike[str] | dict[str, Any],
    output: str | os.PathLike[str] | None = None,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    retries: int | None = None,
    margin: float | None = None,
    max_tasks: int | None = None,
    retry_failed: bool = False,
    on_progress: Callable[[SweepProgress], None] | None = None,
) -> SweepSummary:
    """Run a sweep, appending one JSON line per finished task to ``output``.

    Parameters
    ----------
    spec
        A :class:`SweepSpec`, a spec file (TOML or JSON) or a spec dictionary (see
        :func:`build_tasks`).
    output
        The results file (default: the spec's ``output``, else ``sweep.jsonl``). Tasks already
        in it are skipped; a header record (spec, satdt version, time) starts each run.
    jobs
        Local worker processes (default: the number of cores). Ignored with ``scheduler``.
    scheduler
        A Dask scheduler address, or ``"local:N"`` for a local Dask cluster of N
        single-threaded worker processes.
    retries
        Reruns of a task whose worker died (default: the spec's, else 2).
    margin
        Seconds over its ``time_limit`` after which a fit is killed (default: the spec's, else 30).
    max_tasks
        Run at most this many of the missing tasks, then stop (a rerun continues).
    retry_failed
        Also rerun tasks recorded failed.
    on_progress
        Called with a :class:`SweepProgress` as tasks start and end.

    Returns
    -------
    SweepSummary
        The counts, the failures of this run, and whether Ctrl-C stopped it.
    """
    if not isinstance(spec, SweepSpec):
        spec = load_spec(spec)
    path = Path(output or spec.output or "sweep.jsonl")
    retries = spec.retries if retries is None else retries
    margin = spec.margin if margin is None else margin
    _, previous = read_results(path)
    done = {r["key"] for r in previous if r["status"] == "ok" or not retry_failed}
    todo = [t for t in spec.tasks if t.key not in done]
    skipped = len(spec.tasks) - len(todo)
    if max_tasks is not None:
        todo = todo[:max_tasks]
    results = ResultsFile(path)
    run = _Run(results, on_progress, skipped + len(todo), skipped)
    interrupted = False
    try:
        results.write(
            {
                "type": "header",
                "satdt": __version__,
                "created": _now(),
                "tasks": len(spec.tasks),
                "spec": spec.document,
            }
        )
        run.report(0)
        if todo and scheduler:
            _run_dask(todo, run, scheduler, retries, margin)
        elif todo:
            _run_local(todo, run, jobs or os.cpu_count() or 1, retries, margin)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        results.close()
    run.report(0)
    return SweepSummary(path, run.progress, interrupted, run.failures)


# ---------------------------------------------------------------------- the report
@dataclass
class Row:
    """One line of the report: a file, an estimator configuration, a depth and a time limit."""

    data: str
    estimator: str
    max_depth: Any
    time_limit: float | None
    runs: int
    failed: int
    test_accuracy: tuple[float, float]  # mean, std over the folds with a test part
    train_error: tuple[float, float]
    proven: int
    runtime: tuple[float, float]
    nodes: float
    primal_integral: float  # mean over runs with a history (NaN otherwise)


def config_name(record: dict[str, Any]) -> str:
    """An estimator configuration as shown: its label and the parameters besides ``max_depth``."""
    params = {k: v for k, v in record["params"].items() if k != "max_depth"}
    shown = " ".join(f"{k}={v}" for k, v in sorted(params.items()))
    return f"{record['label']} {shown}".strip()


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    if not values:
        return math.nan, math.nan
    array = np.asarray(values, dtype=float)
    return float(array.mean()), float(array.std(ddof=1)) if len(array) > 1 else 0.0


def best_known(results: Iterable[dict[str, Any]]) -> dict[tuple[Any, ...], float]:
    """The lowest objective value any run reached, per (file, fold, max_depth, objective)."""
    best: dict[tuple[Any, ...], float] = {}
    for r in results:
        if r["status"] == "ok" and r.get("objective_value") is not None:
            key = (r["data"], r["fold"], r["params"].get("max_depth"), r["objective"])
            best[key] = min(best.get(key, math.inf), r["objective_value"])
    return best


def run_primal_integral(record: dict[str, Any], best: dict[tuple[Any, ...], float]) -> float:
    """The primal integral of a run's incumbents (horizon: its time limit, else its runtime)."""
    from .result import primal_integral

    if record["status"] != "ok" or not record.get("history"):
        return math.nan
    key = (record["data"], record["fold"], record["params"].get("max_depth"), record["objective"])
    horizon = record["time_limit"] or record["runtime"]
    return primal_integral(record["history"], best[key], max(horizon, record["history"][-1][0]))


def _group_key(record: dict[str, Any]) -> tuple[Any, ...]:
    depth = record["params"].get("max_depth")
    return (
        record["data"],
        config_name(record),
        -1 if depth is None else depth,
        record["time_limit"] or 0,
    )


def aggregate(results: Sequence[dict[str, Any]]) -> list[Row]:
    """The report's rows: per file x estimator configuration x max_depth x time limit."""
    best = best_known(results)
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault(_group_key(r), []).append(r)
    rows = []
    for key in sorted(groups, key=lambda k: tuple(map(str, k[:2])) + k[2:]):
        members = groups[key]
        ok = [r for r in members if r["status"] == "ok"]
        integrals = [v for v in (run_primal_integral(r, best) for r in ok) if not math.isnan(v)]
        rows.append(
            Row(
                data=key[0],
                estimator=key[1],
                max_depth=members[0]["params"].get("max_depth"),
                time_limit=members[0]["time_limit"],
                runs=len(members),
                failed=len(members) - len(ok),
                test_accuracy=_mean_std(
                    [r["test_accuracy"] for r in ok if r.get("test_accuracy") is not None]
                ),
                train_error=_mean_std([r["train_error"] for r in ok]),
                proven=sum(bool(r.get("proven_optimal")) for r in ok),
                runtime=_mean_std([r["runtime"] for r in ok]),
                nodes=float(np.mean([r["nodes"] for r in ok if r.get("nodes") is not None]))
                if any(r.get("nodes") is not None for r in ok)
                else math.nan,
                primal_integral=float(np.mean(integrals)) if integrals else math.nan,
            )
        )
    return rows


def cv_depths(rows: Sequence[Row]) -> dict[tuple[str, str, float | None], Any]:
    """The ``max_depth`` chosen by cross-validation per (file, estimator, time limit).

    The depth with the highest mean test accuracy; ties go to the shallower tree. Rows without
    test accuracy (``folds = 1``) choose nothing.
    """
    chosen: dict[tuple[str, str, float | None], tuple[float, Any]] = {}
    for row in rows:
        accuracy = row.test_accuracy[0]
        if math.isnan(accuracy) or row.max_depth is None:
            continue
        key = (row.data, row.estimator, row.time_limit)
        best = chosen.get(key)
        if best is None or accuracy > best[0] or (accuracy == best[0] and row.max_depth < best[1]):
            chosen[key] = (accuracy, row.max_depth)
    return {key: depth for key, (_, depth) in chosen.items()}


def report_markdown(rows: Sequence[Row]) -> str:
    """The aggregated table and the cross-validated depths, as markdown."""

    def pm(pair: tuple[float, float], digits: int = 3) -> str:
        return "–" if math.isnan(pair[0]) else f"{pair[0]:.{digits}f} ± {pair[1]:.{digits}f}"

    lines = [
        "| data | estimator | max_depth | time limit | runs | failed | test accuracy | "
        "training error | proven | runtime s | nodes | primal integral |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ok = r.runs - r.failed
        lines.append(
            f"| {r.data} | {r.estimator} | {'–' if r.max_depth is None else r.max_depth} | "
            f"{'–' if r.time_limit is None else f'{r.time_limit:g}'} | {r.runs} | {r.failed} | "
            f"{pm(r.test_accuracy)} | {pm(r.train_error)} | {r.proven}/{ok} | "
            f"{pm(r.runtime)} | {'–' if math.isnan(r.nodes) else f'{r.nodes:.1f}'} | "
            f"{'–' if math.isnan(r.primal_integral) else f'{r.primal_integral:.3f}'} |"
        )
    chosen = cv_depths(rows)
    if chosen:
        lines += ["", "| data | estimator | time limit | depth chosen by cross-validation |"]
        lines.append("|---|---|---:|---:|")
        for (data, estimator, limit), depth in sorted(chosen.items(), key=lambda kv: str(kv[0])):
            shown = "–" if limit is None else f"{limit:g}"
            lines.append(f"| {data} | {estimator} | {shown} | {depth} |")
    return "\n".join(lines) + "\n"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")


def _curve_name(record: dict[str, Any]) -> str:
    limit = record["time_limit"]
    return config_name(record) + (f" ({limit:g} s)" if limit else "")


def plot_report(results: Sequence[dict[str, Any]], directory: str | os.PathLike[str]) -> list[Path]:
    """Draw the report's PNG plots into ``directory``; returns the files written.

    Per data file: test accuracy vs depth and runtime vs depth (mean ± std over folds, one
    line per estimator configuration), and per file and depth the anytime curves (the
    incumbents' objective value over time, every fold) with the mean primal integral in the
    legend. Needs matplotlib (the ``plot`` extra).
    """
    from .plot import check_plot_target

    check_plot_target(what="plot_report")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    rows = [r for r in aggregate(results) if r.max_depth is not None]
    best = best_known(results)
    written = []
    for data in sorted({r.data for r in rows}):
        figure = Figure(figsize=(11, 4.2), layout="constrained")
        accuracy_ax, runtime_ax = figure.subplots(1, 2)
        for estimator in sorted({r.estimator for r in rows if r.data == data}):
            mine = sorted((r for r in rows if r.data == data and r.estimator == estimator),
                          key=lambda r: (r.time_limit or 0, r.max_depth))  # fmt: skip
            for limit in sorted({r.time_limit or 0 for r in mine}):
                line = [r for r in mine if (r.time_limit or 0) == limit]
                name = estimator + (f" ({limit:g} s)" if limit else "")
                depths = [r.max_depth for r in line]
                for ax, values in (
                    (accuracy_ax, [r.test_accuracy for r in line]),
                    (runtime_ax, [r.runtime for r in line]),
                ):
                    ax.errorbar(depths, [v[0] for v in values], yerr=[v[1] for v in values],
                                marker="o", capsize=3, label=name)  # fmt: skip
        for ax in (accuracy_ax, runtime_ax):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        accuracy_ax.set(xlabel="max_depth", ylabel="test accuracy", title=f"{data}: accuracy")
        runtime_ax.set(xlabel="max_depth", ylabel="runtime (s)", yscale="log",
                       title=f"{data}: runtime")  # fmt: skip
        accuracy_ax.legend(fontsize="small")
        path = out / f"{_slug(data)}_depth.png"
        figure.savefig(path, dpi=110)
        written.append(path)
        for depth in sorted({r.max_depth for r in rows if r.data == data}):
            runs = [r for r in results if r["data"] == data and r["status"] == "ok"
                    and r["params"].get("max_depth") == depth and r.get("history")]  # fmt: skip
            if not runs:
                continue
            figure = Figure(figsize=(7, 4.2), layout="constrained")
            ax = figure.subplots()
            curves: dict[str, list[dict[str, Any]]] = {}
            for r in runs:
                curves.setdefault(_curve_name(r), []).append(r)
            for number, (name, members) in enumerate(curves.items()):
                colour = f"C{number % 10}"
                for r in members:
                    times = [h[0] for h in r["history"]] + [r["runtime"]]
                    values = [h[1] for h in r["history"]] + [r["history"][-1][1]]
                    ax.step(times, values, where="post", color=colour, alpha=0.7)
                mean = np.nanmean([run_primal_integral(r, best) for r in members])
                ax.plot([], [], color=colour, label=f"{name}: primal integral {mean:.3f}")
            ax.set(xlabel="time (s)", ylabel=runs[0]["objective"] or "objective",
                   title=f"{data}, max_depth {depth}: incumbents (every fold)")  # fmt: skip
            ax.legend(fontsize="small")
            path = out / f"{_slug(data)}_anytime_d{depth}.png"
            figure.savefig(path, dpi=110)
            written.append(path)
    return written
