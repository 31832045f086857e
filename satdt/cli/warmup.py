"""``satdt warmup``: compile the search kernels into Numba's cache (or load them from it)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from ..search.registry import warmup
from .messages import EXIT_OK


def warmup_command(args: argparse.Namespace) -> int:
    """Compile (or load) the kernels and print, per group, what was done and how long it took."""
    from ..dp.kernels import GROUPS, cache_dir

    print(f"{'kernels':<10} {'what':<43} {'done':<20} {'seconds':>7}")

    def report(done: Any) -> None:
        print(
            f"{done.group:<10} {GROUPS[done.group].summary:<43} {done.action:<20} "
            f"{done.seconds:>7.2f}",
            flush=True,
        )
        if args.verbose:
            for kernel, seconds in sorted(done.kernels.items(), key=lambda kv: -kv[1]):
                print(f"  {kernel:<50} {seconds:>7.2f}", flush=True)

    tic = time.perf_counter()
    names = None
    if args.method is not None:
        from ..search.diagrams import DIAGRAM_METHODS

        names = [
            tree
            for name in args.method
            for tree in (
                DIAGRAM_METHODS[name.removeprefix("diagram-")].tree_methods
                if name.startswith("diagram-")
                else (name,)
            )
        ]
    records = warmup(names, report, args.jobs)
    total = time.perf_counter() - tic
    compiled = sum(r.action.startswith("compiled") for r in records)
    print(f"total: {total:.2f} s ({compiled} of {len(records)} groups compiled)")
    folder = cache_dir()
    where = f"Numba's cache: {folder}" if folder else "Numba cannot cache here: no writable folder"
    print(where)
    return EXIT_OK
