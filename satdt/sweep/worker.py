"""The sweep's worker side: read a job's data once per process, split its fold, fit, measure.

:func:`run_job` never raises: a job's failure is recorded, not the sweep's end.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import os
import socket
import sys
import time
import warnings
from typing import Any

import numpy as np

from ..core.errors import SatdtError
from .results import _job_record, _now
from .spec import ESTIMATORS, SweepJob, _check_estimator_name

_DATA_CACHE: dict[tuple[Any, ...], Any] = {}
_WARMED: set[str] = set()


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


def _cached(path: str, read: dict[str, Any], schema_of: str | None = None) -> Any:
    """A data file read once per process (keyed by path, mtime, size and read options).

    With ``schema_of``, the file is read with the schema of that (training) file.
    """
    from ..data import read_csv, read_with_schema

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
    from ..estimators.base import SatdtEstimator
    from ..estimators.diagram import OptimalDiagramClassifier
    from ..search.auto import candidates
    from ..search.registry import METHODS, warmup

    if not isinstance(model, SatdtEstimator):
        return 0.0
    objective, method = model.objective, model.method
    if isinstance(model, OptimalDiagramClassifier):  # the routes' tree starts
        from ..search.diagrams import DIAGRAM_METHODS

        routes = DIAGRAM_METHODS.values() if method == "auto" else [DIAGRAM_METHODS[method]]
        names = {name for route in routes for name in route.tree_methods}
    else:
        names = set(candidates(objective, method))
    started = time.perf_counter()
    todo = sorted(name for name in names - _WARMED if name in METHODS)
    if todo:
        warmup(todo, jobs=1)  # the sweep's workers are the parallelism
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


def _split(job: SweepJob) -> tuple[Any, Any, Any, Any, list[str]]:
    """``(X_train, y_train, X_test, y_test, feature_names)`` of a job (test ``None``: no test)."""
    data = _cached(job.train, job.read)
    if job.test is not None:
        test = _cached(job.test, job.read, schema_of=job.train)
        return data.X, data.y, test.X, test.y, data.feature_names
    if job.folds <= 1:
        return data.X, data.y, None, None, data.feature_names
    fold = stratified_folds(data.y, job.folds, job.seed)
    train, test = fold != job.fold, fold == job.fold
    return data.X[train], data.y[train], data.X[test], data.y[test], data.feature_names


def run_job(job: SweepJob) -> dict[str, Any]:
    """Fit one task of a sweep in this process and return its record (never raises).

    The record holds the training error (misclassified fraction of the training part), the
    test accuracy (``None`` without a test part), the model's depth and nodes, whether the
    search proved it optimal and its lower bound, the fit's wall-clock seconds, the process's
    memory before and at its peak during the fit, and the history of incumbents
    ``[elapsed, value]``. A task that raises is recorded with ``status = "failed"`` and the
    error.
    """
    record: dict[str, Any] = {
        **_job_record(job),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": _now(),
    }
    try:
        X, y, X_test, y_test, names = _split(job)
        model = resolve_estimator(job.estimator)(**job.params)
        if job.time_limit is not None and "time_limit" in model.get_params():
            model.set_params(time_limit=job.time_limit)
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
        fitted = getattr(result, "model", None)
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
