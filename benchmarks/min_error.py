"""Minimum-error trees of bounded depth: satdt's Blossom against pystreed, pydl8.5 and CART.

Every run happens in its own subprocess under an address-space limit and reports its own
peak resident memory. For each cp4im file and depth the table gives the time to prove
optimality (or the cap), the error reached after 1 s, 10 s and at the cap where the method
exposes it (satdt's incumbent history; the peers only report their final tree), the first
tree's error, peak memory, and ratios satdt/peer. The cold (fresh numba cache) and warm
start-up times of satdt are measured once.

    python benchmarks/min_error.py                       # every file, depths 3 4 5 7 10
    python benchmarks/min_error.py --files anneal,vehicle --depths 3,4 --cap 10

``--n-jobs 1,2`` prints instead the table of ``method="auto"`` (the portfolio of Blossom and
CA-DL8.5) with each number of jobs against its single searches (Blossom, CA-DL8.5 top-k,
DL8.5, through the estimator) and pystreed: the time to prove optimality of each, and the
ratios of ``auto`` to the best single search and to pystreed, and of 2 jobs to 1.

    python benchmarks/min_error.py --n-jobs 1,2 --files anneal,vehicle --depths 4,5 --cap 60

Run from the repository root; the data is read from ``../shared/data/cp4im``. Never
collected by pytest (no ``test_`` prefix); results never become assertions.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import limit_memory, run_worker

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "cp4im"
METHODS = ("satdt", "pystreed", "dl85", "cart")
CHECKPOINTS = (1.0, 10.0, 60.0)


# ---------------------------------------------------------------------- worker side
def _load(name: str):
    import numpy as np

    table = np.loadtxt(DATA / f"{name}.txt", dtype=np.uint8, ndmin=2)
    return np.ascontiguousarray(table[:, 1:]), table[:, 0].astype(np.int64)


def _peak_mb() -> float:
    """The largest resident memory of this process or of a child it ran (the portfolio's)."""
    peaks = (
        resource.getrusage(who).ru_maxrss
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return max(peaks) / 1024.0


def _run_satdt(B, y, depth: int, cap: float) -> dict:
    import satdt
    from satdt.dp.blossom import solve_min_error
    from satdt.dp.common import SearchSettings
    from satdt.task.result import Recorder

    satdt.warmup()
    recorder = Recorder("error")
    tic = time.perf_counter()
    result = solve_min_error(B, y, 2, depth, SearchSettings(deadline=tic + cap, recorder=recorder))
    elapsed = time.perf_counter() - tic
    history = [(inc.elapsed - (tic - recorder.start), inc.value) for inc in recorder.history]
    at = {}
    for t in CHECKPOINTS:
        values = [v for e, v in history if e <= t]
        if values and t <= cap + 1e-9:
            at[str(t)] = min(values)
    return {
        "time": elapsed,
        "proven": result.proven_optimal,
        "error": result.objective_value,
        "first": history[0][1],
        "first_time": history[0][0],
        "at": at,
    }


def _run_estimator(method: str, n_jobs: int, B, y, depth: int, cap: float) -> dict:
    """One fit of the estimator (kernels loaded outside the timing)."""
    import satdt
    from satdt import OptimalTreeClassifier

    satdt.warmup()
    options = {"method": "cadl85", "rule": "topk"} if method == "cadl85" else {"method": method}
    model = OptimalTreeClassifier(
        objective="error", max_depth=depth, time_limit=cap, n_jobs=n_jobs, **options
    )
    tic = time.perf_counter()
    result = model.fit(B, y).result_
    elapsed = time.perf_counter() - tic
    return {"time": elapsed, "proven": result.proven_optimal, "error": result.objective_value}


def _run_pystreed(B, y, depth: int, cap: float) -> dict:
    from pystreed import STreeDClassifier

    STreeDClassifier(max_depth=1).fit(B[:20], y[:20])  # load the library outside the timing
    model = STreeDClassifier(max_depth=depth, time_limit=cap)
    tic = time.perf_counter()
    model.fit(B, y)
    elapsed = time.perf_counter() - tic
    error = float((model.predict(B) != y).sum())
    proven = elapsed < cap * 0.98
    return {"time": elapsed, "proven": proven, "error": error, "at": _final_at(error, elapsed)}


def _run_dl85(B, y, depth: int, cap: float) -> dict:
    from pydl85 import DL85Classifier

    DL85Classifier(max_depth=1).fit(B[:20], y[:20])  # load the library outside the timing
    model = DL85Classifier(max_depth=depth, time_limit=cap)
    tic = time.perf_counter()
    model.fit(B, y)
    elapsed = time.perf_counter() - tic
    error = float((model.predict(B) != y).sum())
    proven = not getattr(model, "timeout_", elapsed >= cap * 0.98)
    return {"time": elapsed, "proven": proven, "error": error, "at": _final_at(error, elapsed)}


def _run_cart(B, y, depth: int, cap: float) -> dict:
    from sklearn.tree import DecisionTreeClassifier

    tic = time.perf_counter()
    model = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(B, y)
    elapsed = time.perf_counter() - tic
    error = float((model.predict(B) != y).sum())
    return {"time": elapsed, "proven": False, "error": error, "at": {}}


def _final_at(error: float, elapsed: float) -> dict:
    """A peer that only reports its final tree: its error is known from the end of its run."""
    return {str(t): error for t in CHECKPOINTS if elapsed <= t}


def worker(method: str, name: str, depth: int, cap: float) -> None:
    B, y = _load(name)
    run = {"satdt": _run_satdt, "pystreed": _run_pystreed, "dl85": _run_dl85, "cart": _run_cart}
    if method in run:
        out = run[method](B, y, depth, cap)
    else:  # an estimator method, as "auto@2" (two jobs) or "blossom@1"
        search, jobs = method.split("@")
        out = _run_estimator(search, int(jobs), B, y, depth, cap)
    out["peak_mb"] = _peak_mb()
    print(json.dumps(out))


# ---------------------------------------------------------------------- driver side
def _env(cache_dir: str | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    return env


def run_one(method: str, name: str, depth: int, cap: float, mem_gb: float, env: dict) -> dict:
    return run_worker(__file__, [method, name, str(depth), str(cap)], cap + 120, mem_gb, env)


def startup_times(mem_gb: float) -> tuple[float, float]:
    """Wall time of a process that imports satdt and runs warmup: fresh cache, then warm."""
    code = "import satdt; satdt.warmup()"
    with tempfile.TemporaryDirectory() as cache:
        times = []
        for _ in range(2):
            tic = time.perf_counter()
            subprocess.run(
                [sys.executable, "-c", code],
                check=True,
                env=_env(cache),
                preexec_fn=limit_memory(mem_gb),
            )
            times.append(time.perf_counter() - tic)
    return times[0], times[1]


def _fmt_time(run: dict | None, cap: float) -> str:
    if run is None:
        return "-"
    if "failed" in run:
        return run["failed"]
    return f"{run['time']:.3f}" if run["proven"] else f">{cap:g}"


def _fmt(value) -> str:
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _ratio(a: dict | None, b: dict | None) -> str:
    if not a or not b or "failed" in a or "failed" in b:
        return "-"
    if a["proven"] and b["proven"]:
        return f"{a['time'] / max(b['time'], 1e-4):.2f}"
    if a["proven"]:
        return "<1 (peer unproven)"
    if b["proven"]:
        return ">1 (satdt unproven)"
    return "both unproven"


SINGLES = ("blossom", "cadl85", "dl85")


def _best_single(runs: dict) -> dict | None:
    """The fastest single search that proved (or any, when none did)."""
    done = [runs[m] for m in SINGLES if runs.get(m) and "failed" not in runs[m]]
    proven = [r for r in done if r["proven"]]
    return min(proven, key=lambda r: r["time"]) if proven else (done[0] if done else None)


def portfolio_table(args, files: list[str], depths: list[int], env: dict) -> None:
    """``auto`` with each number of jobs against its single searches and pystreed."""
    jobs = [int(j) for j in args.n_jobs.split(",")]
    autos = [f"auto@{j}" for j in jobs]
    names = [*autos, *(f"{m}@1" for m in SINGLES), "pystreed"]
    heads = [f"auto {j} job{'s' if j > 1 else ''} s" for j in jobs]
    heads += ["Blossom s", "CA-DL8.5 s", "DL8.5 s", "pystreed s", "err"]
    ratios = [f"auto {j}/best single" for j in jobs] + [f"auto {j}/pystreed" for j in jobs]
    if len(jobs) > 1:
        ratios.append(f"auto {jobs[-1]}/auto {jobs[0]}")
    header = "| file | depth | " + " | ".join(heads + ratios) + " | MB auto |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for depth in depths:
        for name in files:
            cap = args.cap if depth <= 5 else args.deep_cap
            runs = {m: run_one(m, name, depth, cap, args.mem_gb, env) for m in names}
            runs.update({m: runs.pop(f"{m}@1") for m in SINGLES})
            best = _best_single(runs)
            cells = [_fmt_time(runs[m], cap) for m in [*autos, *SINGLES, "pystreed"]]
            errors = {_fmt(r.get("error")) for r in runs.values() if r and "error" in r}
            cells.append("/".join(sorted(errors)))
            cells += [_ratio(runs[a], best) for a in autos]
            cells += [_ratio(runs[a], runs["pystreed"]) for a in autos]
            if len(jobs) > 1:
                cells.append(_ratio(runs[autos[-1]], runs[autos[0]]))
            mem = "/".join(f"{runs[a].get('peak_mb', 0):.0f}" for a in autos)
            print(f"| {name} | {depth} | " + " | ".join(cells) + f" | {mem} |", flush=True)


def optima() -> dict:
    path = DATA / "optima.csv"
    if not path.exists():
        return {}
    with path.open() as handle:
        return {
            (r["dataset"], int(r["max_depth"])): float(r["optimal_error"])
            for r in csv.DictReader(handle)
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="", help="comma-separated cp4im names (default: all)")
    parser.add_argument("--depths", default="3,4,5,7,10")
    parser.add_argument("--cap", type=float, default=60.0, help="seconds per run at depth <= 5")
    parser.add_argument(
        "--deep-cap",
        type=float,
        default=20.0,
        help="seconds per run at depth > 5 (keeps the default run under an hour)",
    )
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--mem-gb", type=float, default=8.0, help="address-space limit per run")
    parser.add_argument(
        "--no-startup", action="store_true", help="skip the cold/warm start-up measurement"
    )
    parser.add_argument(
        "--n-jobs",
        default="",
        help="comma-separated numbers of jobs (e.g. 1,2): the table of auto against its single "
        "searches and pystreed instead",
    )
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        method, name, depth, cap = args.worker
        worker(method, name, int(depth), float(cap))
        return
    if not DATA.exists():
        sys.exit(f"data not found: {DATA}")
    files = args.files.split(",") if args.files else sorted(p.stem for p in DATA.glob("*.txt"))
    depths = [int(d) for d in args.depths.split(",")]
    methods = args.methods.split(",")
    known = optima()
    env = _env()
    started = time.perf_counter()

    if not args.no_startup:
        cold, warm = startup_times(args.mem_gb)
        print(
            f"satdt start-up (import satdt + warmup, whole process): cold {cold:.1f} s, warm {warm:.2f} s\n"
        )
    # make sure the shared cache is warm before timing runs
    subprocess.run([sys.executable, "-c", "import satdt; satdt.warmup()"], check=True, env=env)
    if args.n_jobs:
        portfolio_table(args, files, depths, env)
        print(f"\ntotal benchmark time {time.perf_counter() - started:.0f} s")
        return

    header = (
        "| file | depth | opt | satdt prove s | satdt err 1s/10s/cap | satdt first | pystreed s | pystreed err"
        " | dl85 s | dl85 err | CART err | satdt/pystreed | satdt/dl85 | MB satdt/pystreed/dl85 |"
    )
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for depth in depths:
        for name in files:
            cap = args.cap if depth <= 5 else args.deep_cap
            runs = {m: run_one(m, name, depth, cap, args.mem_gb, env) for m in methods}
            s, ps, dl, cart = (runs.get(m) for m in METHODS)
            at = s.get("at", {}) if s and "failed" not in s else {}
            err_s = (
                "/".join(_fmt(at.get(str(t))) for t in CHECKPOINTS[:2])
                + "/"
                + _fmt(s.get("error") if s else None)
            )
            mem = "/".join(
                f"{r['peak_mb']:.0f}" if r and "peak_mb" in r else "-" for r in (s, ps, dl)
            )
            print(
                f"| {name} | {depth} | {_fmt(known.get((name, depth)))} | {_fmt_time(s, cap)} | {err_s} "
                f"| {_fmt(s.get('first') if s else None)} | {_fmt_time(ps, cap)} | {_fmt(ps.get('error') if ps else None)} "
                f"| {_fmt_time(dl, cap)} | {_fmt(dl.get('error') if dl else None)} | {_fmt(cart.get('error') if cart else None)} "
                f"| {_ratio(s, ps)} | {_ratio(s, dl)} | {mem} |",
                flush=True,
            )
    print(f"\ntotal benchmark time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
