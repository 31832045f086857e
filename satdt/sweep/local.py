"""The local executor: jobs on worker processes, watched by the parent.

Workers tell the parent through a queue which job they start, so the parent knows what runs
where: a job over ``time_limit + margin`` has its worker killed and is recorded failed (not
retried: it would run away again); when a worker dies the pool breaks, the jobs that were
running are retried up to ``retries`` times and those that had not started are resubmitted
free, to a new pool.

Workers start fast: on Linux, when the parent runs no other thread, they are forked after
the parent has read each data file once and loaded the Numba kernels the jobs' estimators
run (:func:`_prime`), so a worker starts in milliseconds with both (copy-on-write) instead
of importing satdt, reading the files and loading the kernels itself (about 2 s each);
elsewhere they are spawned, as before. A pool that ends a sweep whole stays alive for the
next sweep of this process (a notebook's grid after grid), until the process exits.
"""

from __future__ import annotations

import atexit
import concurrent.futures as cf
import contextlib
import multiprocessing as mp
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .spec import SweepJob
from .worker import run_job

if TYPE_CHECKING:
    from .run import _Run

_MESSAGES: Any = None  # a local worker's queue to the parent


def _init_worker(messages: Any) -> None:
    """Local worker start: Ctrl-C is the parent's business; say which process this is."""
    global _MESSAGES
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _MESSAGES = messages
    messages.put(("worker", os.getpid(), None))


def _run_reporting(job: SweepJob) -> dict[str, Any]:
    """:func:`run_job` in a local worker, telling the parent first which job starts here."""
    _MESSAGES.put(("start", os.getpid(), job.key))
    return run_job(job)


def _kill(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _context() -> Any:
    """Fork where it is safe and fast (Linux, no other thread in the parent: a fork copies
    only the calling thread, so a lock another thread held would stay held in the child; a
    kept pool's own threads count, so a pool that breaks is replaced by spawned workers);
    else spawn (clean state, any platform)."""
    if sys.platform == "linux" and threading.active_count() == 1:
        return mp.get_context("fork")
    return mp.get_context("spawn")


def _prime(jobs: list[SweepJob]) -> None:
    """Before forking: read each data file once and load the kernels of the jobs' estimators
    in the parent, for the workers to inherit. Never raises: a job that cannot be primed
    fails in its worker, where its record says why."""
    from .worker import _cached, _warm, resolve_estimator

    seen: set[tuple[str, str]] = set()
    for job in jobs:
        with contextlib.suppress(Exception):
            _cached(job.train, job.read)
            if job.test is not None:
                _cached(job.test, job.read, schema_of=job.train)
        estimator = (job.estimator, repr(sorted(job.params.items())))
        if estimator not in seen:
            seen.add(estimator)
            with contextlib.suppress(Exception):
                _warm(resolve_estimator(job.estimator)(**job.params))


# Pools kept for the next sweep of this process: (processes, start method) -> the executor,
# its queue of messages and the pids of its workers.
_KEPT: dict[tuple[int, str], tuple[cf.ProcessPoolExecutor, Any, set[int]]] = {}


@atexit.register
def _close_kept(wait: bool = False) -> None:
    """Stop the kept pools (at exit: at once; ``wait``: until their threads end, so that
    the parent runs no other thread and may fork again)."""
    for executor, _, workers in _KEPT.values():
        if wait:
            executor.shutdown(wait=True)
        else:
            executor.shutdown(wait=False, cancel_futures=True)
            _kill(workers)
    _KEPT.clear()


def _run_local(
    jobs: list[SweepJob], run: _Run, processes: int, retries: int, margin: float
) -> None:
    """Run on ``processes`` local processes (see the module notes).

    A pool is used until a worker dies; then the jobs to rerun go to a new pool.
    """
    if (processes, "fork") in _KEPT:  # forked for an earlier sweep: its workers serve
        context = mp.get_context("fork")
    else:
        _close_kept(wait=True)  # one kept pool at a time: its threads would forbid a fork
        if _context().get_start_method() == "fork":
            _prime(jobs)
        context = _context()  # priming started no thread, or it is spawn after all
    attempts: dict[str, int] = {}
    while jobs:
        jobs = _Pool(context, processes, run, attempts, retries, margin).execute(jobs)


class _Pool:
    """One process pool and what the parent knows of it: its workers, which job runs on which
    worker since when, the jobs it killed for running over, the jobs the pool broke under."""

    def __init__(
        self,
        context: Any,
        processes: int,
        run: _Run,
        attempts: dict[str, int],
        retries: int,
        margin: float,
    ) -> None:
        self.processes = processes
        self.run = run
        self.attempts = attempts  # key -> times its worker died under it, over every pool
        self.retries = retries
        self.margin = margin
        self.running: dict[str, tuple[int, float]] = {}  # key -> (worker pid, when heard)
        self.finished: set[str] = set()
        self.kept = (processes, context.get_start_method())
        if self.kept in _KEPT:  # the pool of an earlier sweep of this process, whole
            self.executor, self.messages, self.workers = _KEPT.pop(self.kept)
            self._listen()  # late "start" messages of the earlier sweep: not this one's
            self.running.clear()
        else:
            self.messages = context.Queue()
            self.executor = cf.ProcessPoolExecutor(
                processes, mp_context=context, initializer=_init_worker, initargs=(self.messages,)
            )
            self.workers = set()
        self.killed: dict[str, float] = {}  # key -> seconds it had run
        self.broken: list[SweepJob] = []

    def execute(self, jobs: list[SweepJob]) -> list[SweepJob]:
        """Run ``jobs`` on this pool until they are done or a worker dies; return what to rerun."""
        try:
            futures = {self.executor.submit(_run_reporting, job): job for job in jobs}
            limits = {job.key: job.time_limit for job in jobs}
            while futures:
                done, _ = cf.wait(futures, timeout=0.2, return_when=cf.FIRST_COMPLETED)
                self._listen()
                for future in done:
                    self._finish(futures.pop(future), future)
                self._kill_overdue(limits)
                self.run.report(min(len(self.running), self.processes))
        except BaseException:  # Ctrl-C: stop the workers now, their jobs rerun next time
            self._listen()
            self.executor.shutdown(wait=False, cancel_futures=True)
            _kill(self.workers)
            raise
        reruns = self._reruns()
        if self.broken:
            self.executor.shutdown(wait=False)  # every result is in: no need to wait for the exit
        else:  # whole: kept for the next sweep of this process
            _KEPT[self.kept] = (self.executor, self.messages, self.workers)
        return reruns

    def _listen(self) -> None:
        """Take in the workers' messages: a worker started, a job started on a worker."""
        while True:
            try:
                what, pid, key = self.messages.get_nowait()
            except queue.Empty:
                return
            if what == "worker":
                self.workers.add(pid)
            elif key not in self.finished:
                self.running[key] = (pid, time.monotonic())

    def _finish(self, job: SweepJob, future: cf.Future) -> None:
        """Record a finished job, or set it aside when the pool broke under it."""
        self.finished.add(job.key)
        error = future.exception()
        if isinstance(error, cf.process.BrokenProcessPool):
            self.broken.append(job)
            return
        self.running.pop(job.key, None)
        tries = self.attempts.get(job.key, 0) + 1
        if error is not None:  # the job or its record could not be pickled
            self.run.fail(job, f"{type(error).__name__}: {error}", tries)
            return
        record = future.result()
        record["attempts"] = tries
        self.run.record(record)

    def _kill_overdue(self, limits: dict[str, float | None]) -> None:
        """Kill the worker of every job running longer than its time limit plus the margin."""
        now = time.monotonic()
        for key, (pid, since) in self.running.items():
            limit = limits[key]
            if limit is not None and key not in self.killed and now - since > limit + self.margin:
                self.killed[key] = now - since
                _kill([pid])

    def _reruns(self) -> list[SweepJob]:
        """Sort the jobs the pool broke under: the killed one fails; those that were running
        are retried (counted as an attempt unless the parent's kill broke the pool), up to
        ``retries``; those that had not started rerun free."""
        rerun = []
        for job in self.broken:
            tries = self.attempts.get(job.key, 0) + 1
            if job.key in self.killed:
                self.run.fail(
                    job,
                    f"killed after {self.killed[job.key]:.1f} s: over time_limit "
                    f"{job.time_limit:g} s + margin {self.margin:g} s",
                    tries,
                )
            elif job.key in self.running and not self.killed:  # it was on the worker that died
                self.attempts[job.key] = tries
                if tries > self.retries:
                    self.run.fail(
                        job, f"the worker process died {tries} times running this task", tries
                    )
                else:
                    self.run.progress.retried += 1
                    rerun.append(job)
            else:
                rerun.append(job)
        return rerun
