"""What the subprocess benchmarks share: one run of a worker under a memory limit."""

from __future__ import annotations

import json
import resource
import subprocess
import sys


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
