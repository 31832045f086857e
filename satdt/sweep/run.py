"""Running a sweep: the jobs missing from the results file, on local processes or on Dask.

:func:`run_sweep` writes a header, hands the missing jobs to an executor
(:mod:`satdt.sweep.local` or :mod:`satdt.sweep.on_dask`) and records what comes back through
the bookkeeping both share (:class:`_Run`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.errors import interrupt_handled
from .local import _run_local
from .on_dask import _run_dask
from .results import ResultsFile, _job_record, _now, read_results
from .spec import SweepJob, SweepSpec, load_spec


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

    def fail(self, job: SweepJob, error: str, attempts: int) -> None:
        record = {
            **_job_record(job),
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
        :func:`build_jobs`).
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
    todo = [job for job in spec.jobs if job.key not in done]
    skipped = len(spec.jobs) - len(todo)
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
                "tasks": len(spec.jobs),
                "spec": spec.document,
            }
        )
        run.report(0)
        if todo and scheduler:
            _run_dask(todo, run, scheduler, retries, margin)
        elif todo:
            _run_local(todo, run, jobs or os.cpu_count() or 1, retries, margin)
    except KeyboardInterrupt:
        interrupt_handled()
        interrupted = True
    finally:
        results.close()
    run.report(0)
    return SweepSummary(path, run.progress, interrupted, run.failures)


def close_workers() -> None:
    """Stop the worker processes (and local Dask clusters) that finished sweeps left running
    for the next sweep of this process; the next sweep starts new ones. They also stop when
    the process exits."""
    from . import local, on_dask

    local._close_kept(wait=True)
    on_dask._close_kept()
