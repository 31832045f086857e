"""Minimum-size benchmark: DT_size on the inferdt files, beside the reference implementation.

Each run is a separate process (whole-process time, imports included), capped by a time
limit. The reference column is the C++ reference implementation (MiniSat, dichotomic search on
a sequential counter), whole process, measured on this kind of machine.

    python benchmarks/min_size.py                          # method auto (box DP or SAT)
    python benchmarks/min_size.py --method sat             # SAT everywhere, default counter
    python benchmarks/min_size.py --compare --no-splits    # SAT: counter x search, side by side
    python benchmarks/min_size.py --numeric --cap 60       # numeric tables (numeric_tables.py)

`fit s` is the in-process fit (reading and preparing the data included), `process s` the
whole process.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from inferdt import DATA, dataset_names, parser_with_files
from numeric_tables import add_numeric_arguments, sizes_of

# whole-process seconds of the reference implementation (None: not finished in 120 s)
REFERENCE = {
    "mouse": 0.044,
    "iris": 0.11,
    "monk1": 0.09,
    "monk3": 1.35,
    "monk2": 4.8,
    "wine": 12.2,
    "car": None,
    "balance-scale_bin1": None,
    "balance-scale_bin2": None,
}
SPLIT_FILES = ("iris", "monk1", "monk2", "monk3", "wine")


def child(path: str, method: str, counter: str, search: str, cap: float) -> None:
    """Run one DT_size search in this process and print its result as JSON."""
    import warnings

    from satdt import OptimalTreeClassifier, read_csv

    warnings.simplefilter("ignore")
    sat_options = {"leaf_counter": counter, "size_search": search} if method == "sat" else {}
    model = OptimalTreeClassifier(objective="size", method=method, time_limit=cap, **sat_options)
    result = model.fit_dataset(read_csv(path)).result_
    print(
        json.dumps(
            {
                "method": model.method_,
                "fit": result.runtime,
                "depth": result.model.depth,
                "nodes": result.objective_value,
                "lower": result.lower_bound,
                "proven": result.proven_optimal,
                "calls": len(result.trace),
                "solve": sum(call.time for call in result.trace),
            }
        )
    )


def run(path: Path, method: str, counter: str, search: str, cap: float) -> dict:
    command = [
        sys.executable,
        __file__,
        "--child",
        str(path),
        "--method",
        method,
        "--counter",
        counter,
        "--search",
        search,
        "--cap",
        str(cap),
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=cap + 120)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    return result


def row(name: str, counter: str, search: str, result: dict) -> str:
    if result.get("method", "sat") != "sat":
        counter = search = "-"
    ref_text = "-"
    if name in REFERENCE:
        ref_text = f"{REFERENCE[name]:g}" if REFERENCE[name] else "> 120"
    if "error" in result:
        return f"| {name} | | {counter} | {search} | | | | | | | {ref_text} | {result['error']} |"
    nodes = f"{result['nodes']:g}" + ("" if result["proven"] else f" (>= {result['lower']:g})")
    ratio = f"{result['wall'] / REFERENCE[name]:.2f}" if REFERENCE.get(name) else "-"
    return (
        f"| {name} | {result['method']} | {counter} | {search} | {result['depth']} | {nodes} | "
        f"{result['calls']} | {result['solve']:.2f} | {result['fit']:.2f} | {result['wall']:.2f} "
        f"| {ref_text} | {ratio} |"
    )


def main() -> None:
    parser = parser_with_files(__doc__.splitlines()[0], list(REFERENCE))
    parser.add_argument("--counter", default="totalizer", choices=("totalizer", "sequential"))
    parser.add_argument(
        "--search", default="descending", choices=("descending", "dichotomic", "galloping")
    )
    parser.add_argument("--method", default="auto", choices=("auto", "sat", "boxes", "hybrid"))
    add_numeric_arguments(parser)
    parser.add_argument("--sat-cap", type=float, help="with --numeric: SAT's limit (default --cap)")
    parser.add_argument(
        "--compare", action="store_true", help="SAT: every counter x search combination"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.method, args.counter, args.search, args.cap)
        return
    if args.numeric:
        from numeric_tables import size_table

        size_table(args.tables, sizes_of(args), args.cap, args.sat_cap)
        return
    combos = (
        [
            (c, s)
            for c in ("sequential", "totalizer")
            for s in ("descending", "dichotomic", "galloping")
        ]
        if args.compare
        else [(args.counter, args.search)]
    )
    method = "sat" if args.compare else args.method
    names = dataset_names(args.files, SPLIT_FILES, not args.no_splits)
    print(
        "| dataset | method | counter | search | depth | nodes | SAT calls | solve s | fit s "
        "| process s | reference s | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    started = time.perf_counter()
    for name in names:
        for counter, search in combos:
            print(
                row(
                    name,
                    counter,
                    search,
                    run(DATA / f"{name}.csv", method, counter, search, args.cap),
                ),
                flush=True,
            )
    print(f"\nwhole run: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
