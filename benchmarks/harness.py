"""What the subprocess benchmarks share: one run of a worker under a memory limit."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

# Thread pools of BLAS and OpenMP: one core per run, whatever the machine has.
_ONE_THREAD = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def worker_env(root: Path) -> dict:
    """The environment of a worker: the repository importable, one thread per run."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(dict.fromkeys(_ONE_THREAD, "1"))
    return env


def run_jobs(jobs: Sequence[Any], execute: Callable[[Any], None], n_jobs: int) -> None:
    """Call ``execute`` on every job, ``n_jobs`` at once, printing progress every 10 jobs."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=n_jobs) as pool:
        for done, _ in enumerate(pool.map(execute, jobs), 1):
            if done % 10 == 0 or done == len(jobs):
                print(
                    f"  {done}/{len(jobs)} runs ({time.perf_counter() - started:.0f} s)", flush=True
                )


def limit_memory(gigabytes: float):
    """A ``preexec_fn`` capping the child's address space (a runaway fit cannot take the machine)."""

    def apply() -> None:
        limit = int(gigabytes * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def run_worker(script: str, args: list[str], timeout: float, mem_gb: float, env: dict) -> dict:
    """Run ``script --worker ARGS`` in a capped subprocess; its last stdout line is JSON.

    A kill, a non-zero exit or a crash becomes ``{"failed": reason}``, a row of the table.
    """
    try:
        done = subprocess.run(
            [sys.executable, script, "--worker", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            preexec_fn=limit_memory(mem_gb),
        )
    except subprocess.TimeoutExpired:
        return {"failed": "killed (time)"}
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {"failed": f"exit {done.returncode}: {tail[:80]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])
