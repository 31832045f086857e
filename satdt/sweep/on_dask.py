"""The Dask executor: jobs on a Dask cluster, results back in the parent in order of completion.

The scheduler reschedules the jobs of a dead worker up to its
``distributed.scheduler.allowed-failures`` (set to ``retries`` for a cluster started here),
then the job is recorded failed (``KilledWorker``). A single-threaded worker arms a
process-wide ``SIGALRM`` timer for ``time_limit + margin``: a runaway fit kills the worker
process, its nanny restarts it and the same rule ends in a failed record.

Workers are primed once per sweep, all at once, before the first job (each reads the data files
and loads the kernels the jobs' estimators run, :func:`satdt.sweep.local._prime`), not inside
the first job of each; a local cluster started here (``local:N``) that ends a sweep whole
stays up for the next sweep of this process, until it exits.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import time
from typing import TYPE_CHECKING, Any

from ..core.errors import SatdtError
from .spec import SweepJob
from .worker import run_job

if TYPE_CHECKING:
    from .run import _Run

_CLUSTER_HINT = 'pip install -e ".[cluster]"'
# Local clusters kept for the next sweep of this process: "local:N retries=R" -> (client,
# cluster).
_KEPT: dict[str, tuple[Any, Any]] = {}


@atexit.register
def _close_kept() -> None:
    for client, cluster in _KEPT.values():
        with contextlib.suppress(Exception):
            client.close()
            cluster.close()
    _KEPT.clear()


def _dask_client(scheduler: str, retries: int) -> tuple[Any, Any]:
    """``(client, cluster)``: a client of ``scheduler`` (an address, or ``local:N``)."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise SatdtError(
            f"running on a Dask cluster needs dask.distributed: {_CLUSTER_HINT}"
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


def _run_on_dask_worker(job: SweepJob, hard_limit: float | None) -> dict[str, Any]:
    """:func:`run_job` on a Dask worker, killed by ``SIGALRM`` after ``hard_limit`` seconds.

    Only on a single-threaded worker: the timer is one per process.
    """
    from distributed import get_worker

    armed = hard_limit is not None and get_worker().state.nthreads == 1
    if armed:
        signal.setitimer(signal.ITIMER_REAL, hard_limit)
    try:
        return run_job(job)
    finally:
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)


def _prime_worker(jobs: list[SweepJob]) -> None:
    """On a worker, before its first job: read the data, load the kernels."""
    from .local import _prime

    _prime(jobs)


def _run_dask(jobs: list[SweepJob], run: _Run, scheduler: str, retries: int, margin: float) -> None:
    """Run on a Dask cluster; results come back to this process in order of completion."""
    kept = f"{scheduler} retries={retries}"  # a local cluster's allowed failures are its own
    if kept in _KEPT:
        client, cluster = _KEPT.pop(kept)
    else:
        client, cluster = _dask_client(scheduler, retries)
    from distributed import as_completed

    futures = []
    whole = False
    try:
        client.run(_prime_worker, jobs)
        by_key = {}
        for job in jobs:
            limit = None if job.time_limit is None else job.time_limit + margin
            future = client.submit(
                _run_on_dask_worker, job, limit, key=f"satdt-sweep-{job.key}", retries=retries
            )
            futures.append(future)
            by_key[future.key] = job
        last = 0.0
        for future in as_completed(futures):
            job = by_key[future.key]
            if future.status == "finished":
                record = future.result()
                record["attempts"] = None  # Dask does not say
                run.record(record)
            else:
                exc = future.exception()
                run.fail(job, f"{type(exc).__name__}: {exc}", retries + 1)
            future.release()
            if time.perf_counter() - last > 1.0:
                last = time.perf_counter()
                processing = client.processing()
                run.report(sum(len(keys) for keys in processing.values()))
            else:
                run.report()
        whole = True
    finally:
        client.cancel(futures)
        if whole and cluster is not None:  # kept for the next sweep of this process
            _KEPT[kept] = (client, cluster)
        else:
            client.close()
            if cluster is not None:
                cluster.close()
