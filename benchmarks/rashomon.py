"""Rashomon-set sizes: satdt's exact count beside TreeFARMS on the binary CP4IM files.

Both count the trees of depth at most d whose objective

    (misclassified rows) / (rows) + λ · (leaves)

is at most the optimum plus ε. The definitions differ in three ways, and the table gives each
library's own (raw) count and the two counts made comparable:

- satdt (``satdt.rashomon_set(X, y, d, epsilon=ε, leaf_penalty=λ)``): its prepared binary
  features (for 0/1 columns the columns themselves, less constant columns and any column equal
  or complementary to an earlier one); a leaf predicts any class the bound allows; every split
  separates the rows reaching it, and a split whose two leaves predict one class is a tree of
  its own.
- TreeFARMS (``treefarms.TREEFARMS(config).fit(X, y)``, ``model_count`` of its model set;
  version 0.2.4) with ``{"regularization": λ, "rashomon_bound_adder": ε, "depth_budget":
  d + 1, "rashomon_ignore_trivial_extensions": true}``: its ``depth_budget`` counts the root
  as depth 1, so d + 1 allows d levels of splits; its bound is the optimum plus the adder (a
  ``rashomon_bound_multiplier`` m would give the optimum times 1 + m, that is ε = m ·
  optimum). It splits on every column it is given (two equal or complementary columns make
  two trees of each tree on either); a leaf predicts its majority class only (a tie: the
  larger label, TreeFARMS's ``Dataset::summary``); a split whose children are two leaves of
  one class is left out (a "trivial extension"); a split must leave rows on both sides.
  Objectives and the bound are single-precision floats, so a tree exactly at the bound is
  kept or dropped by rounding.

Raw counts: satdt on the file as it is; TreeFARMS on the file as it is, bound optimum + ε (at
the depths of ``--raw-depths``, default 2 only: on the files' complementary column pairs it
splits on twice the features, and its raw runs at depth 3 would not fit the time budget).
Comparable counts: TreeFARMS on satdt's features (the file's columns less constant, duplicate
and complementary ones, which are the columns satdt keeps) with the bound optimum + ε + s,
where s is half the smallest positive a/rows + b·λ - ε (|a| <= rows, |b| <= 2^d: a tree's
objective exceeds the optimum's by some a/rows + b·λ), so that the trees exactly at the bound
are kept, as satdt keeps them, and no tree beyond it is let in (with λ and ε multiples of
1/200, s is at least 1/(400·rows), 3e-7 on mushroom, above single-precision rounding); satdt's set enumerated (``RashomonSet.trees()``, when it holds at most
``--enumerate`` trees) and filtered to the trees TreeFARMS's rules allow: every leaf predicts
the majority class (a tie: the larger label) and no split has two leaves of one class.
``same`` compares the two comparable counts, and where they differ the histograms by (errors,
leaves) are printed below the table.

Times: each library in its own process (``--jobs`` at once, one core each), timed inside the
process around the call that counts (satdt: ``rashomon_set``, data preparation included;
TreeFARMS: ``fit``, its optimum search, set extraction and the Python model set included),
killed past ``--limit`` seconds. TreeFARMS's time is that of its comparable run; the ratio is
TreeFARMS's time over satdt's; "satdt no slower" counts the instances where satdt finished
no later than TreeFARMS or TreeFARMS was killed. satdt's enumeration for the comparable count is timed apart and
not in the ratio.

TreeFARMS pins ``editables==0.2`` and pulls ``timbertrek``: install it in a virtual
environment that sees the system packages (``python -m venv --system-site-packages VENV &&
VENV/bin/pip install treefarms``) and pass ``--treefarms-python VENV/bin/python``.

    nice -n 5 python benchmarks/rashomon.py --treefarms-python VENV/bin/python
    python benchmarks/rashomon.py --quick --treefarms-python VENV/bin/python
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
from harness import limit_memory, run_jobs, worker_env

ROOT = Path(__file__).resolve().parents[1]
CP4IM = ROOT.parent / "shared" / "data" / "cp4im"
FILES = (
    "tic-tac-toe",
    "heart-cleveland",
    "anneal",
    "australian-credit",
    "diabetes",
    "hypothyroid",
    "primary-tumor",
    "vote",
    "mushroom",
)
QUICK = {
    "files": "tic-tac-toe,primary-tumor",
    "depths": "2",
    "penalties": "0.02",
    "epsilons": "0.01",
}
MARK = "RESULT "


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A CP4IM file: the label in the first column, 0/1 features after it."""
    data = np.loadtxt(CP4IM / f"{name}.txt", dtype=np.int64, ndmin=2)
    return data[:, 1:], data[:, 0]


def distinct_columns(X: np.ndarray) -> list[int]:
    """The columns satdt keeps of a 0/1 matrix: not constant, and neither equal nor
    complementary to an earlier column."""
    seen: set[bytes] = set()
    keep = []
    for j in range(X.shape[1]):
        column = X[:, j].astype(np.uint8)
        if column.min() == column.max():
            continue
        key = (column if column[0] == 0 else 1 - column).tobytes()
        if key not in seen:
            seen.add(key)
            keep.append(j)
    return keep


def tie_slack(rows: int, penalty: float, depth: int, epsilon: float) -> float:
    """Half the smallest positive a / rows + b * penalty - epsilon (|a| <= rows, |b| <= 2^depth):
    the objective of a tree exceeds the optimum's by some a / rows + b * penalty, so a bound
    raised by less keeps the trees at exactly optimum + epsilon and lets no tree in beyond."""
    lam, eps = Fraction(str(penalty)), Fraction(str(epsilon))
    smallest = None
    for b in range(-(2**depth), 2**depth + 1):
        target = (eps - b * lam) * rows  # the a closest to it
        for a in (math.floor(target), math.ceil(target), math.floor(target) + 1):
            if abs(a) > rows:
                continue
            gap = Fraction(a, rows) + b * lam - eps
            if gap > 0 and (smallest is None or gap < smallest):
                smallest = gap
    return float(smallest) / 2 if smallest is not None else 0.0


# ---------------------------------------------------------------------------------- workers


def satdt_worker(name: str, depth: int, penalty: float, epsilon: float, cap: int, budget: float):
    import satdt

    X, y = load(name)
    satdt.rashomon_set(X[:20], y[:20], 1, epsilon=0.0)  # lazy imports, untimed
    started = time.perf_counter()
    rashomon = satdt.rashomon_set(X, y, depth, epsilon=epsilon, leaf_penalty=penalty)
    seconds = time.perf_counter() - started
    out = {"count": rashomon.count, "optimum": rashomon.optimum, "seconds": seconds}
    if rashomon.count > cap:
        out["comparable"] = f"> {cap} trees"
        return out
    started = time.perf_counter()
    histogram: dict[tuple[int, int], int] = {}
    for tree in rashomon.trees():
        if time.perf_counter() - started > budget:
            out["comparable"] = f"> {budget:g} s"
            return out
        key = treefarms_key(tree)
        if key is not None:
            histogram[key] = histogram.get(key, 0) + 1
    out["comparable"] = sum(histogram.values())
    out["histogram"] = sorted([*key, count] for key, count in histogram.items())
    out["enumerate_seconds"] = time.perf_counter() - started
    return out


def treefarms_key(tree) -> tuple[int, int] | None:
    """(errors, leaves) of a tree of satdt's set that TreeFARMS counts too, else None: every
    leaf predicts its majority class (a tie: the larger label) and no split has two leaves of
    one class."""
    leaf = tree.feature == -1
    errors = 0
    for node in np.flatnonzero(leaf):
        counts = tree.counts[node]
        majority = len(counts) - 1 - int(np.argmax(counts[::-1]))
        if tree.value[node] != majority:
            return None
        errors += round(float(counts.sum() - counts[majority]))
    for node in np.flatnonzero(~leaf):
        left, right = tree.left[node], tree.right[node]
        if leaf[left] and leaf[right] and tree.value[left] == tree.value[right]:
            return None
    return errors, int(leaf.sum())


def treefarms_worker(name: str, depth: int, penalty: float, adder: float, distinct: bool):
    import contextlib
    import io

    import pandas as pd
    from treefarms import TREEFARMS

    X, y = load(name)
    if distinct:
        X = X[:, distinct_columns(X)]
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    labels = pd.Series(y, name="class")
    config = {
        "regularization": penalty,
        "rashomon_bound_adder": adder,
        "depth_budget": depth + 1,
        "rashomon_ignore_trivial_extensions": True,
        "verbose": False,
    }
    model = TREEFARMS(config)
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        model.fit(frame, labels)
    seconds = time.perf_counter() - started
    models = model.model_set
    histogram: dict[tuple[int, int], int] = {}
    metrics = models.available_metrics
    for pointer, (_, errors, leaves) in zip(
        metrics["metric_pointers"], metrics["metric_values"], strict=True
    ):
        key = (int(errors), int(leaves))
        histogram[key] = histogram.get(key, 0) + models.storage[pointer]["count"]
    return {
        "count": models.model_count,
        "seconds": seconds,
        "timeout": bool(model.timeout),
        "features": X.shape[1],
        "histogram": sorted([*key, count] for key, count in histogram.items()),
    }


def worker(args: list[str]) -> None:
    kind, name, depth, penalty, *rest = args
    if kind == "satdt":
        epsilon, cap, budget = rest
        out = satdt_worker(
            name, int(depth), float(penalty), float(epsilon), int(cap), float(budget)
        )
    else:
        adder, distinct = rest
        out = treefarms_worker(name, int(depth), float(penalty), float(adder), distinct == "1")
    sys.stdout.flush()
    print(MARK + json.dumps(out), flush=True)


# ---------------------------------------------------------------------------------- driver


def run(python: str, args: list[str], timeout: float, mem_gb: float, env: dict) -> dict:
    """One worker in its own process; its line starting with MARK is the result."""
    try:
        done = subprocess.run(
            [python, __file__, "--worker", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            preexec_fn=limit_memory(mem_gb),
        )
    except subprocess.TimeoutExpired:
        return {"failed": f"> {timeout:g} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        return {"failed": f"exit {done.returncode}: {tail[:60]}"}
    return json.loads(lines[-1][len(MARK) :])


def machine() -> str:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next(
            (line.split(":", 1)[1].strip() for line in lscpu.splitlines() if "Model name" in line),
            platform.processor() or "?",
        )
    except OSError:
        model = platform.processor() or "?"
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


def cell(result: dict, key: str = "count") -> str:
    if "failed" in result:
        return result["failed"]
    return str(result[key])


def seconds(result: dict) -> str:
    return "—" if "failed" in result else f"{result['seconds']:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default=",".join(FILES))
    parser.add_argument("--depths", default="2,3")
    parser.add_argument("--penalties", default="0.01,0.02,0.05")
    parser.add_argument("--epsilons", default="0.005,0.01,0.02")
    parser.add_argument("--quick", action="store_true", help="2 files, depth 2, one λ and ε")
    parser.add_argument("--raw-depths", default="2", help="depths of TreeFARMS's raw runs")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per counting run")
    parser.add_argument("--enumerate", type=int, default=50_000, help="most trees to filter")
    parser.add_argument("--enumerate-limit", type=float, default=30.0, help="seconds to filter")
    parser.add_argument("--treefarms-python", default=sys.executable)
    parser.add_argument("--jobs", type=int, default=2, help="runs at once (one core each)")
    parser.add_argument("--mem-gb", type=float, default=8.0, help="address-space limit per run")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    if args.quick:
        for key, value in QUICK.items():
            setattr(args, key, value)
    if not CP4IM.exists():
        sys.exit(f"data not found: {CP4IM}")
    check = subprocess.run([args.treefarms_python, "-c", "import treefarms"], capture_output=True)
    if check.returncode != 0:
        sys.exit(f"treefarms does not import in {args.treefarms_python}: see --treefarms-python")
    names = [n for n in args.files.split(",") if (CP4IM / f"{n}.txt").exists()]
    absent = [n for n in args.files.split(",") if n not in names]
    instances = [
        (name, int(d), float(lam), float(eps))
        for name in names
        for d in args.depths.split(",")
        for lam in args.penalties.split(",")
        for eps in args.epsilons.split(",")
    ]
    rows = {name: len(load(name)[1]) for name in names}
    env = worker_env(ROOT)
    # fill satdt's Numba cache once, before the timed runs
    subprocess.run([sys.executable, "-c", "import satdt; satdt.warmup()"], env=env, check=True)
    results: dict[tuple, dict] = {}
    jobs = []
    for inst in instances:
        name, depth, lam, eps = inst
        slack = tie_slack(rows[name], lam, depth, eps)
        satdt_args = [str(args.enumerate), str(args.enumerate_limit)]
        jobs.append((inst, "satdt", sys.executable, [str(eps), *satdt_args]))
        if str(depth) in args.raw_depths.split(","):
            jobs.append((inst, "raw", args.treefarms_python, [repr(eps), "0"]))
        jobs.append((inst, "same", args.treefarms_python, [repr(eps + slack), "1"]))

    def execute(job) -> None:
        inst, kind, python, rest = job
        name, depth, lam, _ = inst
        head = ["satdt" if kind == "satdt" else "treefarms", name, str(depth), str(lam)]
        timeout = args.limit + (args.enumerate_limit + 10 if kind == "satdt" else 0)
        results[inst, kind] = run(python, head + rest, timeout, args.mem_gb, env)

    started = time.perf_counter()
    print(f"{len(instances)} instances, {len(jobs)} runs, {args.jobs} at once", flush=True)
    run_jobs(jobs, execute, args.jobs)
    wall = time.perf_counter() - started

    shown = [a for a in sys.argv[1:] if not a.startswith("--treefarms-python")]
    if "--treefarms-python" in sys.argv[1:]:  # its value is a path of this machine
        shown.remove(args.treefarms_python)
    command = " ".join(["python benchmarks/rashomon.py", *shown])
    print(f"\n## Rashomon-set sizes: satdt and TreeFARMS\n\nCommand: `{command}`  ")
    print(f"Date: {datetime.date.today().isoformat()}  ")
    print(f"Machine: {machine()}  ")
    print(
        f"Limit {args.limit:g} s per counting run, {args.jobs} runs at once; satdt's set "
        f"filtered when it holds at most {args.enumerate} trees. Total {wall:.0f} s."
    )
    if absent:
        print(f"Not in the data folder: {', '.join(absent)}.")
    print(
        "\n| file | d | λ | ε | satdt raw | TreeFARMS raw | satdt comparable | "
        "TreeFARMS comparable | same | satdt s | TreeFARMS s | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    both = same = faster = total = 0
    differing = []
    for inst in instances:
        name, depth, lam, eps = inst
        mine, theirs = results[inst, "satdt"], results[inst, "same"]
        raw = results.get((inst, "raw"), {"failed": "not run"})
        total += 1
        agree = "—"
        if "failed" not in mine and "failed" not in theirs and isinstance(mine["comparable"], int):
            both += 1
            agree = "yes" if mine["comparable"] == theirs["count"] else "**no**"
            same += mine["comparable"] == theirs["count"]
            if mine["comparable"] != theirs["count"]:
                differing.append((inst, mine.get("histogram"), theirs.get("histogram")))
        ratio = "—"
        if "failed" not in mine:
            if "failed" in theirs or theirs["seconds"] >= mine["seconds"]:
                faster += 1
            if "failed" not in theirs:
                ratio = f"{theirs['seconds'] / max(mine['seconds'], 1e-9):.1f}"
        print(
            f"| {name} | {depth} | {lam:g} | {eps:g} | {cell(mine)} | {cell(raw)} | "
            f"{cell(mine, 'comparable') if 'failed' not in mine else '—'} | {cell(theirs)} | "
            f"{agree} | {seconds(mine)} | {seconds(theirs)} | {ratio} |"
        )
    print(
        f"\nSame counts wherever both finish: {same} of {both}; satdt no slower on {faster} of "
        f"{total}."
    )
    for inst, mine, theirs in differing:
        print(f"\n{inst}: (errors, leaves, trees) satdt {mine}\n  TreeFARMS {theirs}")


if __name__ == "__main__":
    main()
