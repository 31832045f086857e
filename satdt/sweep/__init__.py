"""Sweeps: the grid datasets x estimators x parameters x time limits x folds, run anywhere.

A sweep is described by a small TOML (or JSON) file, read by :func:`load_spec`, and expanded
into its tasks, one :class:`SweepJob` (one fit) each. :func:`run_sweep` runs the tasks on local
worker processes (:class:`concurrent.futures.ProcessPoolExecutor`) or on a Dask cluster, and
the parent process alone appends one JSON line per finished task to the results file (flushed
and fsynced), so nothing that finished is lost and a rerun skips it. :func:`read_results`,
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

The modules: :mod:`~satdt.sweep.spec` (the spec and its tasks), :mod:`~satdt.sweep.worker`
(one fit), :mod:`~satdt.sweep.results` (the results file), :mod:`~satdt.sweep.run` (running
a sweep), :mod:`~satdt.sweep.local` and :mod:`~satdt.sweep.on_dask` (the executors),
:mod:`~satdt.sweep.report` (the report).
"""

from .report import (
    Row,
    aggregate,
    best_known,
    config_name,
    cv_depths,
    plot_report,
    report_markdown,
    run_primal_integral,
)
from .results import read_results
from .run import SweepProgress, SweepSummary, close_workers, run_sweep
from .spec import ESTIMATORS, SweepJob, SweepSpec, build_jobs, load_spec, read_document
from .worker import resolve_estimator, run_job, stratified_folds

__all__ = [
    "ESTIMATORS",
    "Row",
    "SweepJob",
    "SweepProgress",
    "SweepSpec",
    "SweepSummary",
    "aggregate",
    "best_known",
    "build_jobs",
    "close_workers",
    "config_name",
    "cv_depths",
    "load_spec",
    "plot_report",
    "read_document",
    "read_results",
    "report_markdown",
    "resolve_estimator",
    "run_job",
    "run_primal_integral",
    "run_sweep",
    "stratified_folds",
]
