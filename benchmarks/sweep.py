"""Sweep executors: the same 40-task grid on 1 and 2 local worker processes and a 2-worker Dask cluster.

The grid: minimum-error trees of depth 4 by Blossom and DL8.5 on four cp4im files
(heart-cleveland, australian-credit, diabetes, hypothyroid), 5-fold stratified
cross-validation: 40 fits of about 0.1-0.6 s each. For each executor the table gives the wall
time of :func:`satdt.sweep.run_sweep` (workers started, every task run and written), the sum of
the fits' own runtimes, the speed-up over one local worker, and the per-task overhead

    overhead = (wall - sum of fit times / workers) / tasks,

which charges everything that is not fitting to the tasks: starting the workers (spawned
processes importing satdt), reading each file once per worker, loading the Numba kernels from
numba's on-disk cache once per worker (``warm-up``: the seconds and the number of
(worker, method) loads), shipping tasks and results, and writing the results file. Every
kernel is compiled into the cache before the first timing. Each executor runs ``--repeat``
times in this process: the first run starts the workers (on Linux forked after the parent
read the files and loaded the kernels, so they load nothing), the later ones reuse them (a
pool that ends a sweep whole serves the next); the table shows the first and the fastest
later run. ``--files 8`` runs the 80-task grid (eight files), ``--workers 1,2,16`` more
worker counts.

Run from the repository root (the data is read from ``../shared/data/cp4im``); needs the
``cluster`` extra for the Dask row::

    nice -n 5 python benchmarks/sweep.py
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "cp4im"
FILES = ("heart-cleveland", "australian-credit", "diabetes", "hypothyroid")
# The 80-task grid: eight shared CP4IM files.
FILES_80 = (*FILES, "anneal", "tic-tac-toe", "vehicle", "primary-tumor")


def grid(files: tuple[str, ...] = FILES) -> dict:
    """The sweep spec: the files x depth 4 x Blossom and DL8.5 x 5 folds."""
    return {
        "data": [{"files": [str(DATA / f"{name}.txt") for name in files]}],
        "estimator": [
            {
                "name": "tree",
                "params": {"objective": "error", "max_depth": 4},
                "grid": {"method": ["blossom", "dl85"]},
            }
        ],
        "folds": 5,
        "time_limit": 60,
    }


def measure(name: str, workers: int, files: tuple[str, ...], **executor) -> dict:
    """Run the grid on one executor into a fresh results file; its timings."""
    from satdt.sweep import read_results, run_sweep

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "results.jsonl"
        started = time.perf_counter()
        summary = run_sweep(grid(files), path, **executor)
        wall = time.perf_counter() - started
        _, results = read_results(path)
    if summary.progress.failed:
        sys.exit(f"{name}: {summary.progress.failed} tasks failed: {summary.failures[0]['error']}")
    fits = sum(r["runtime"] for r in results)
    loads = [r["warmup"] for r in results if r["warmup"] > 1e-3]
    return {
        "executor": name,
        "workers": workers,
        "tasks": len(results),
        "wall": wall,
        "fits": fits,
        "overhead": (wall - fits / workers) / len(results),
        "warmup": sum(loads),
        "loads": len(loads),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-dask", action="store_true", help="only the local executors")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs per executor (default 3): the first, then "
        "the fastest of the others, which reuse the workers the first started",
    )
    parser.add_argument(
        "--files", type=int, choices=(4, 8), default=4, help="4 files (40 tasks) or 8 (80)"
    )
    parser.add_argument(
        "--workers", default="1,2", help="local worker counts, comma-separated (default 1,2)"
    )
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"data not found: {DATA}")
    import satdt

    satdt.warmup()  # compile into numba's cache: workers only load
    files = FILES if args.files == 4 else FILES_80

    def runs(name: str, workers: int, **executor) -> list[dict]:
        first = measure(name, workers, files, **executor)
        later = [measure(name, workers, files, **executor) for _ in range(args.repeat - 1)]
        rows = [{**first, "run": "first"}]
        if later:
            rows.append({**min(later, key=lambda r: r["wall"]), "run": "again (same process)"})
        return rows

    rows = []
    for workers in (int(w) for w in args.workers.split(",")):
        rows += runs("local", workers, jobs=workers)
    if not args.no_dask:
        try:
            import distributed  # noqa: F401
        except ImportError:
            print('Dask row skipped: pip install -e ".[cluster]"', file=sys.stderr)
        else:
            rows += runs("Dask LocalCluster", 2, scheduler="local:2")
    base = {r["run"]: r["wall"] for r in rows if r["executor"] == "local" and r["workers"] == 1}
    print("| executor | workers | run | tasks | wall s | sum of fits s | speed-up | "
          "efficiency | overhead per task ms | Numba warm-up s (loads) |")  # fmt: skip
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        speedup = base.get(r["run"], math.nan) / r["wall"]
        print(
            f"| {r['executor']} | {r['workers']} | {r['run']} | {r['tasks']} | {r['wall']:.2f} | "
            f"{r['fits']:.2f} | {speedup:.2f} | {speedup / r['workers']:.2f} | "
            f"{1000 * r['overhead']:.0f} | {r['warmup']:.2f} ({r['loads']}) |"
        )


if __name__ == "__main__":
    main()
