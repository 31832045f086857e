"""One proof on several cores: the time to prove a minimum-error tree by ``n_jobs``.

For each cp4im file and depth, ``OptimalTreeClassifier(objective="error", method="portfolio",
n_jobs=j)`` fits the whole file for each ``j`` asked, in turns (1, 2, ..., then again), in
this one process after a warm-up fit (the kernels loaded, so no compilation is timed). Per
``j`` the table gives the median wall seconds to the proof, the CPU seconds of this process and
its workers together, the search nodes (the workers' summed: the work the split added), the
speed-up in wall time against ``n_jobs=1`` in the same run, and the speed-up a machine with a
free core per worker would give if the workers share the work evenly: CPU(1) / (CPU(j) / j).
Every fit must prove the same optimum (else the script stops). The load average is printed
before and after (the speed-ups mean something only on an otherwise idle machine), and, for
two jobs, whether each proof meets the targets: at least 1.4x on proofs of 1-3 s on one job,
at least 1.7x on proofs over 10 s.

    python benchmarks/cores.py                      # the targets' cases, n_jobs 1 and 2, medians of 3
    python benchmarks/cores.py --cases heart-cleveland:5,vehicle:4 --jobs 1,2 --repeat 3

The estimator never runs more workers than the machine has cores; ``--direct`` calls the
portfolio itself (``satdt.dp.portfolio.solve_min_error``) with ``n_jobs`` workers however many
cores there are, to count the work of 4 or 8 workers on a smaller machine (their wall times
then say nothing: the workers take turns on the cores).

    python benchmarks/cores.py --direct --cases australian-credit:5 --jobs 1,2,4,8

Run from the repository root; the data is read from ``../shared/data/cp4im``. Never
collected by pytest (no ``test_`` prefix); results never become assertions.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "cp4im"
# Proofs of 1-3 s on one job (heart-cleveland 5, vehicle 4, diabetes 5) and over 10 s
# (ionosphere 4, diabetes 6), on a 2-core machine
CASES = "heart-cleveland:5,vehicle:4,diabetes:5,ionosphere:4,diabetes:6"
# (least seconds on one job, most seconds, least speed-up of two jobs)
TARGETS = ((1.0, 3.0, 1.4), (10.0, float("inf"), 1.7))


def _load(name: str) -> tuple[np.ndarray, np.ndarray]:
    table = np.loadtxt(DATA / f"{name}.txt", dtype=np.uint8, ndmin=2)
    return np.ascontiguousarray(table[:, 1:]), table[:, 0].astype(np.int64)


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the workers)."""
    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
    )


def _fit(
    B: np.ndarray, y: np.ndarray, depth: int, n_jobs: int, direct: bool = False
) -> tuple[float, float, int, float]:
    """One fit: ``(wall seconds, CPU seconds, search nodes, proven cost)``; ``direct``: the
    portfolio called with ``n_jobs`` workers, not capped at the machine's cores."""
    from satdt import OptimalTreeClassifier
    from satdt.dp import portfolio
    from satdt.dp.common import SearchSettings
    from satdt.task.result import Recorder

    cpu, tic = _cpu(), time.perf_counter()
    if direct:
        settings = SearchSettings(recorder=Recorder("error"))
        options = portfolio.PortfolioOptions(n_jobs=n_jobs)
        result = portfolio.solve_min_error(B, y, 2, depth, settings, options)
    else:
        model = OptimalTreeClassifier(
            objective="error", max_depth=depth, method="portfolio", n_jobs=n_jobs
        )
        result = model.fit(B, y).result_
    wall, cpu = time.perf_counter() - tic, _cpu() - cpu
    if not result.proven_optimal:
        raise SystemExit(f"not proven with n_jobs={n_jobs}")
    return wall, cpu, int(result.stats.nodes), float(result.objective_value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=CASES, help="comma-separated cp4im name:depth")
    parser.add_argument("--jobs", default="1,2", help="comma-separated n_jobs values")
    parser.add_argument("--repeat", type=int, default=3, help="fits per n_jobs (median)")
    parser.add_argument(
        "--direct", action="store_true", help="the portfolio itself: n_jobs not capped at cores"
    )
    args = parser.parse_args()
    jobs = [int(j) for j in args.jobs.split(",")]
    print(f"load average before: {_load_average()}", flush=True)
    B, y = _load("heart-cleveland")
    _fit(B, y, 3, 1)  # warm-up: the kernels loaded before anything is timed
    print(
        "| file | depth | optimum | n_jobs | wall s | CPU s | nodes | wall 1/j | CPU(1)/(CPU(j)/j) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    verdicts: list[str] = []
    for case in args.cases.split(","):
        name, depth = case.split(":")
        B, y = _load(name)
        runs: dict[int, list[tuple[float, float, int, float]]] = {j: [] for j in jobs}
        for _ in range(args.repeat):
            for j in jobs:
                runs[j].append(_fit(B, y, int(depth), j, args.direct))
        costs = sorted({run[3] for per in runs.values() for run in per})
        if len(costs) != 1:
            raise SystemExit(f"{case}: the optima differ: {costs}")
        base_wall = statistics.median(run[0] for run in runs[jobs[0]])
        base_cpu = statistics.median(run[1] for run in runs[jobs[0]])
        for j in jobs:
            wall = statistics.median(run[0] for run in runs[j])
            cpu = statistics.median(run[1] for run in runs[j])
            nodes = int(statistics.median(run[2] for run in runs[j]))
            print(
                f"| {name} | {depth} | {costs[0]:g} | {j} | "
                f"{wall:.2f} | {cpu:.2f} | {nodes} | {base_wall / wall:.2f} | "
                f"{base_cpu / (cpu / j):.2f} |",
                flush=True,
            )
            if j == 2 and jobs[0] == 1:
                verdicts.append(_verdict(case, base_wall, base_wall / wall))
    print(f"\nload average after: {_load_average()}")
    for line in verdicts:
        print(line)


def _load_average() -> str:
    """The system's load averages over 1, 5 and 15 minutes (``uptime``'s)."""
    try:
        return ", ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def _verdict(case: str, one_job: float, speedup: float) -> str:
    """Whether two jobs meet the target of a proof this long on one job (if one applies)."""
    for low, high, target in TARGETS:
        if low <= one_job <= high:
            met = "met" if speedup >= target else "MISSED"
            return f"{case}: {one_job:.2f} s on one job, 2 jobs {speedup:.2f}x (target {target}x): {met}"
    return f"{case}: {one_job:.2f} s on one job, 2 jobs {speedup:.2f}x (no target at this length)"


if __name__ == "__main__":
    main()
