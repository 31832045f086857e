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
times and its fastest run is shown (other processes on the machine only slow a run down).

Run from the repository root (the data is read from ``../shared/data/cp4im``); needs the
``cluster`` extra for the Dask row::

    nice -n 5 python benchmarks/sweep.py
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "cp4im"
FILES = ("heart-cleveland", "australian-credit", "diabetes", "hypothyroid")


def grid() -> dict:
    """The 40-task sweep spec."""
    return {
        "data": [{"files": [str(DATA / f"{name}.txt") for name in FILES]}],
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


def measure(name: str, workers: int, **executor) -> dict:
    """Run the grid on one executor into a fresh results file; its timings."""
    from satdt.sweep import read_results, run_sweep

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "results.jsonl"
        started = time.perf_counter()
        summary = run_sweep(grid(), path, **executor)
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
        "--repeat", type=int, default=3, help="runs per executor; the fastest is shown (default 3)"
    )
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"data not found: {DATA}")
    import satdt

    satdt.warmup()  # compile into numba's cache: workers only load

    def best(name: str, workers: int, **executor) -> dict:
        runs = [measure(name, workers, **executor) for _ in range(args.repeat)]
        return min(runs, key=lambda r: r["wall"])

    rows = [best("local", 1, jobs=1), best("local", 2, jobs=2)]
    if not args.no_dask:
        try:
            import distributed  # noqa: F401
        except ImportError:
            print('Dask row skipped: pip install -e ".[cluster]"', file=sys.stderr)
        else:
            rows.append(best("Dask LocalCluster", 2, scheduler="local:2"))
    base = rows[0]["wall"]
    print("| executor | workers | tasks | wall s | sum of fits s | speed-up | overhead per task ms "
          "| Numba warm-up s (loads) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['executor']} | {r['workers']} | {r['tasks']} | {r['wall']:.2f} | "
            f"{r['fits']:.2f} | {base / r['wall']:.2f} | {1000 * r['overhead']:.0f} | "
            f"{r['warmup']:.2f} ({r['loads']}) |"
        )


if __name__ == "__main__":
    main()
