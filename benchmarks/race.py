"""A race of SAT solvers on one fit (`--n-jobs 2`) beside each solver alone, on the inferdt files.

Each run is a separate process (`satdt infer FILE --method sat --format json`): glucose4 alone
(satdt's default), MapleChrono alone, and `--n-jobs 2` (both on every SAT call, the first answer
winning). Runs under 20 s are repeated and the median is reported; `race / best` compares the
race with the faster single solver of that file, `race / default` with glucose4 alone. The
race needs two free cores: on a loaded machine its numbers are pessimistic.

    python benchmarks/race.py                          # minimum depth on the default files
    python benchmarks/race.py --size --files wine iris # minimum size
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from inferdt import DATA, dataset_names, parser_with_files

FILES = ["iris", "monk2", "wine", "balance-scale_bin1", "balance-scale_bin2", "car"]
RUNS = {"glucose4": ("glucose4", 1), "maplechrono": ("maplechrono", 1), "race": ("glucose4", 2)}


def run_once(path: Path, cap: float, solver: str, n_jobs: int, size: bool) -> dict:
    command = [sys.executable, "-m", "satdt.cli", "infer", str(path), "--format", "json"]
    command += ["--quiet", "--method", "sat", "--solver", solver, "--n-jobs", str(n_jobs)]
    command += ["--time-limit", str(cap)] + (["--size"] if size else [])
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=cap + 60)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    document = json.loads(done.stdout)
    document["wall"] = wall
    return document


def measure(path: Path, cap: float, repeats: int, solver: str, n_jobs: int, size: bool) -> dict:
    first = run_once(path, cap, solver, n_jobs, size)
    if "error" in first or first["wall"] >= 20 or repeats <= 1:
        return first
    runs = [first] + [run_once(path, cap, solver, n_jobs, size) for _ in range(repeats - 1)]
    runs = [r for r in runs if "error" not in r]
    first["wall"] = statistics.median(r["wall"] for r in runs)
    return first


def cell(result: dict) -> str:
    if "error" in result:
        return result["error"]
    mark = "" if result["proven_optimal"] else " (not proven)"
    return f"{result['wall']:.2f}{mark}"


def main() -> None:
    parser = parser_with_files(__doc__.splitlines()[0], FILES)
    parser.add_argument("--repeats", type=int, default=3, help="runs when under 20 s (median)")
    parser.add_argument("--size", action="store_true", help="minimum size, not minimum depth")
    args = parser.parse_args()
    names = dataset_names(args.files, (), False)
    what = "size" if args.size else "depth"
    print(
        f"| dataset | {what} | glucose4 s | maplechrono s | race s | race / best | race / default |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in names:
        path = DATA / f"{name}.csv"
        results = {
            key: measure(path, args.cap, args.repeats, solver, n_jobs, args.size)
            for key, (solver, n_jobs) in RUNS.items()
        }
        good = {k: r for k, r in results.items() if "error" not in r}
        answers = {r["n_nodes"] if args.size else r["depth"] for r in good.values()}
        proven = [r for k, r in good.items() if k != "race" and r["proven_optimal"]]
        race = results["race"]
        ratios = "| - | -"
        if proven and "error" not in race:
            best = min(r["wall"] for r in proven)
            default = results["glucose4"].get("wall", float("nan"))
            ratios = f"| {race['wall'] / best:.2f} | {race['wall'] / default:.2f}"
        shown = "/".join(str(a) for a in sorted(answers))
        print(
            f"| {name} | {shown} | {cell(results['glucose4'])} | {cell(results['maplechrono'])} "
            f"| {cell(race)} {ratios} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
