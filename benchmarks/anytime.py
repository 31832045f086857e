"""Anytime minimum-error trees: satdt's Blossom, DL8.5, CA-DL8.5, portfolio and auto against peers.

The evaluation of Kiossou, Nijssen & Schaus (CA-DL8.5, Tables 2-3): for each cp4im file,
depth and time budget, every method's incumbent curve is scored by its primal gap integral
(``satdt.task.result.primal_integral``, Berthold 2013) against the best error any method found on
that file and depth in the whole run. Per depth the table gives, for each method and budget,
the average primal integral (seconds; 0 = optimal at once, budget = no tree), the number of
instances proven within the budget, and the largest peak resident memory.

- satdt (Blossom, DL8.5, every CA-DL8.5 rule with its default schedule, all schedules with
  ``--all``, the portfolio, and ``method="auto"``, whose row repeats the runs of the method it
  picks): one run per file and depth at the largest budget; its history gives the curve at
  every smaller budget (a search does not know its budget except for stopping).
  ``result_.history`` is the curve. Every kernel is compiled and loaded before the timing.
- pytrees-rs's CA-DL8.5 (discrepancy and top-k rules): also one run at the largest budget,
  its curve from ``fit_anytime``'s callback. Its reported error can differ from the error of
  the tree it returns after a time-out, so every point of its curve is raised to at least the
  error of the returned tree, scored by its own predictions; its "optimal" status counts as
  a proof only when that tree has the error it reports (on zoo-1 at depth 5 it reports 0 and
  returns a tree with 2 errors).
- pystreed and pydl8.5 only report their final tree: they are run once at each budget with
  their own time limit, and their curve is that one point (at its finish time); a run that
  proved its tree within a budget stands for every larger budget.

Every run happens in its own subprocess under an address-space limit and reports its own peak
resident memory. Each run has one core, as in the paper; ``--jobs 2`` runs two at a time on a
machine with two cores. The script prints an upper bound of the run time first; searches that
prove early make it shorter (the default set took 65 min with ``--jobs 2``). A peer that is not
importable is skipped with a line saying why (``pip install -e ".[bench]"``). ``--save FILE``
writes every run's curve as JSON; ``--plot FILE`` draws the
average primal gap over time of the anytime methods per depth (matplotlib optional).

    python benchmarks/anytime.py --jobs 2                # 4 files, depths 5 6 7, budgets 15 30 60
    python benchmarks/anytime.py --quick                 # 4 files, depths 5 6, budgets 5 10 (about 10 min)
    python benchmarks/anytime.py --files anneal,zoo-1 --depths 5 --budgets 5 --plot curves.png
    python benchmarks/anytime.py --all --methods blossom,cadl85-discrepancy,pytrees-discrepancy
    python benchmarks/anytime.py --quick --n-jobs 2 --methods portfolio,portfolio@2,blossom

``--n-jobs N`` adds ``portfolio@N`` and ``auto@N``: the same searches with ``n_jobs=N`` (the
portfolio's CA-DL8.5 in a second process); their peak memory counts that process.

Run from the repository root; the data is read from ``../shared/data/cp4im``. Never
collected by pytest (no ``test_`` prefix); results never become assertions.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import wide
from harness import run_worker

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "cp4im"
RULES = ("discrepancy", "topk", "topk_star", "purity", "gain")
RELAXES = ("monotonic", "exponential", "luby")
DEFAULT_FILES = "anneal,australian-credit,hypothyroid,vehicle"
QUICK_FILES = "zoo-1,tic-tac-toe,anneal,heart-cleveland"
PEER_MODULES = {"pytrees": "pytrees", "pystreed": "pystreed", "pydl85": "pydl85"}
FINAL_ONLY = ("pystreed", "pydl85")


def satdt_methods(all_schedules: bool) -> list[str]:
    names = ["blossom", "dl85"]
    for rule in RULES:
        names.append(f"cadl85-{rule}")
        if all_schedules:
            names += [f"cadl85-{rule}-{relax}" for relax in RELAXES]
    return [*names, "portfolio", "auto"]


PEER_METHODS = ["pytrees-discrepancy", "pytrees-topk", "pystreed", "pydl85"]


def _peer_of(method: str) -> str | None:
    head = method.split("-")[0]
    return head if head in PEER_MODULES else None


# ---------------------------------------------------------------------- worker side
def _load(name: str):
    import numpy as np

    if wide.is_wide(name):
        return wide.load(name)
    table = np.loadtxt(DATA / f"{name}.txt", dtype=np.uint8, ndmin=2)
    return np.ascontiguousarray(table[:, 1:]), table[:, 0].astype(np.int64)


def _peak_mb() -> float:
    """The largest resident memory of this process or of a child it ran (the portfolio's)."""
    peaks = (
        resource.getrusage(who).ru_maxrss
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return max(peaks) / 1024.0


def _run_satdt(method: str, B, y, depth: int, budget: float) -> dict:
    import satdt
    from satdt import OptimalTreeClassifier

    method, _, jobs = method.partition("@")
    options: dict = {"method": method, "n_jobs": int(jobs or 1)}
    if method.startswith("cadl85-"):
        parts = method.split("-")
        options = {"method": "cadl85", "rule": parts[1], "n_jobs": 1}
        if len(parts) > 2:
            options["relax"] = parts[2]
    satdt.warmup()  # compile and load every kernel outside the timing
    model = OptimalTreeClassifier(
        objective="error", max_depth=depth, time_limit=budget, **options
    ).fit(B, y)
    result = model.result_
    return {
        "curve": [(float(inc[0]), float(inc[1])) for inc in result.history],
        "time": float(result.runtime),
        "proven": bool(result.proven_optimal),
        "error": float(result.history[-1][1]) if result.history else None,
    }


def _run_pytrees(method: str, B, y, depth: int, budget: float) -> dict:
    from pytrees import DL85Classifier
    from pytrees.rules import DiscrepancyRule, TopKRule

    rule = method.split("-", 1)[1]
    kwargs = {"discrepancy": DiscrepancyRule()} if rule == "discrepancy" else {"topk": TopKRule()}
    DL85Classifier(max_depth=1, max_time=5.0, **kwargs).fit(B[:20], y[:20])  # load outside timing
    model = DL85Classifier(max_depth=depth, max_time=budget, **kwargs)
    reported: list[tuple[float, float]] = []
    tic = time.perf_counter()
    model.fit_anytime(B, y, lambda error, seconds, status: reported.append((seconds, error)))
    elapsed = time.perf_counter() - tic
    error = float((model.predict(B) != y).sum())
    # the returned tree is the last incumbent: no point of the curve can be below its error
    curve = [(float(t), max(float(v), error)) for t, v in reported]
    if not curve or curve[-1][1] > error:
        curve.append((elapsed, error))
    return {
        "curve": curve,
        "time": elapsed,
        # a proof only counts for a returned tree that has the error it reports
        "proven": str(getattr(model, "status_", "")).lower() == "optimal"
        and bool(reported)
        and float(reported[-1][1]) == error,
        "error": error,
        "reported": float(reported[-1][1]) if reported else None,
    }


def _run_final_only(method: str, B, y, depth: int, budget: float) -> dict:
    if method == "pystreed":
        from pystreed import STreeDClassifier as Model
    else:
        from pydl85 import DL85Classifier as Model
    Model(max_depth=1).fit(B[:20], y[:20])  # load the library outside the timing
    model = Model(max_depth=depth, time_limit=budget)
    tic = time.perf_counter()
    model.fit(B, y)
    elapsed = time.perf_counter() - tic
    error = float((model.predict(B) != y).sum())
    proven = not getattr(model, "timeout_", elapsed >= budget * 0.98)
    return {"curve": [(elapsed, error)], "time": elapsed, "proven": bool(proven), "error": error}


def worker(method: str, name: str, depth: int, budget: float) -> None:
    B, y = _load(name)
    if method.startswith("pytrees-"):
        out = _run_pytrees(method, B, y, depth, budget)
    elif method in FINAL_ONLY:
        out = _run_final_only(method, B, y, depth, budget)
    else:
        out = _run_satdt(method, B, y, depth, budget)
    out["peak_mb"] = _peak_mb()
    print(json.dumps(out))


# ---------------------------------------------------------------------- driver side
def run_one(method: str, name: str, depth: int, budget: float, mem_gb: float, env: dict) -> dict:
    return run_worker(__file__, [method, name, str(depth), str(budget)], budget + 120, mem_gb, env)


def available_peers() -> dict[str, str | None]:
    """For each peer module: None if importable, else why not."""
    why = {}
    for peer, module in PEER_MODULES.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError) as exc:  # a broken install
            found, reason = False, str(exc)
        else:
            reason = f"module {module!r} not installed"
        why[peer] = None if found else reason
    return why


def _curve_at(run: dict, budget: float, final_only: bool) -> list[tuple[float, float]]:
    """The curve of a run as seen at ``budget``; a final-only peer's time is capped at it."""
    if final_only:
        return [(min(t, budget), v) for t, v in run["curve"]]
    return [(t, v) for t, v in run["curve"] if t <= budget]


def _gap(value: float, best: float) -> float:
    top = max(abs(value), abs(best))
    return 0.0 if top == 0 else abs(value - best) / top


def plot_curves(path: str, curves: dict, budget: float) -> None:
    """Average primal gap over time per anytime method, one panel per depth."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"\n--plot: matplotlib is not installed (pip install matplotlib); {path} not drawn")
        return
    import numpy as np

    depths = sorted(curves)
    fig, axes = plt.subplots(1, len(depths), figsize=(5.5 * len(depths), 4), squeeze=False)
    grid = np.linspace(0.0, budget, 400)
    for ax, depth in zip(axes[0], depths, strict=True):
        for method, runs in curves[depth].items():
            gaps = []
            for curve, best in runs:
                g = np.ones_like(grid)
                low = np.inf
                for t, v in curve:
                    low = min(low, v)
                    g[grid >= t] = _gap(low, best)
                gaps.append(g)
            ax.step(grid, np.mean(gaps, axis=0), where="post", label=method)
        ax.set_title(f"depth {depth}")
        ax.set_xlabel("seconds")
        ax.set_ylabel("average primal gap")
        ax.set_ylim(-0.02, 1.02)
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\ncurves written to {path}")


def _final(run: dict, budget: float, final_only: bool) -> float | None:
    """The error of the best tree a run had at ``budget`` (None: no tree, or the run failed)."""
    if "curve" not in run:
        return None
    values = [v for _t, v in _curve_at(run, budget, final_only)]
    return min(values) if values else None


def final_errors(runs: dict, files: list, depths: list, budgets: list, methods: list) -> None:
    """Per file, depth and budget, each method's final error (the best tree it had by then; a
    peer's by the trees it returned), and whether ``auto`` is at or below every pytrees-rs
    variant (``ok``), with how many cells it is."""
    peers = [m for m in methods if m.startswith("pytrees-")]
    if "auto" not in methods or not peers:
        return
    shown = ["auto", *peers]
    print("### final error (the best tree by each budget)\n")
    print("| file | depth | budget | " + " | ".join(shown) + " | auto <= best pytrees-rs |")
    print("|---|---|---|" + "---|" * (len(shown) + 1))
    met = cells = 0
    for name in files:
        for depth in depths:
            for budget in budgets:
                errors = {
                    m: _final(runs[depth, name, m, budget if m in FINAL_ONLY else max(budgets)],
                              budget, m in FINAL_ONLY)
                    for m in shown
                }  # fmt: skip
                peer_best = min((e for m, e in errors.items() if m in peers and e is not None),
                                default=None)  # fmt: skip
                ok = errors["auto"] is not None and (
                    peer_best is None or errors["auto"] <= peer_best
                )
                cells += 1
                met += ok
                text = " | ".join("-" if errors[m] is None else f"{errors[m]:g}" for m in shown)
                print(f"| {name} | {depth} | {budget:g} | {text} | {'ok' if ok else 'NO'} |")
    print(f"\nauto at or below the best pytrees-rs variant in {met} of {cells} cells\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="", help="comma-separated cp4im names")
    parser.add_argument("--depths", default="")
    parser.add_argument("--budgets", default="", help="seconds, comma-separated")
    parser.add_argument("--quick", action="store_true", help="a subset of about 10 minutes")
    parser.add_argument(
        "--wide",
        action="store_true",
        help="the wide binarized continuous tables (benchmarks/wide.py), depths 5 6 7, budgets "
        "10 30 60, auto beside pytrees-rs",
    )
    parser.add_argument("--all", action="store_true", help="every CA-DL8.5 schedule")
    parser.add_argument("--methods", default="", help="comma-separated subset of the methods")
    parser.add_argument("--mem-gb", type=float, default=4.0, help="address-space limit per run")
    parser.add_argument("--plot", default="", help="PNG file for the average curves")
    parser.add_argument(
        "--jobs", type=int, default=1, help="runs at once (one core each; default 1, as the paper)"
    )
    parser.add_argument(
        "--n-jobs", type=int, default=1, help="also run portfolio@N and auto@N with n_jobs=N"
    )
    parser.add_argument("--save", default="", help="JSON file for every run's curve")
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        method, name, depth, budget = args.worker
        worker(method, name, int(depth), float(budget))
        return
    if not DATA.exists():
        sys.exit(f"data not found: {DATA}")
    default_files = ",".join(wide.WIDE) if args.wide else DEFAULT_FILES
    files = (args.files or (QUICK_FILES if args.quick else default_files)).split(",")
    depths = [int(d) for d in (args.depths or ("5,6" if args.quick else "5,6,7")).split(",")]
    default_budgets = "10,30,60" if args.wide else "15,30,60"
    budgets = sorted(
        float(b) for b in (args.budgets or ("5,10" if args.quick else default_budgets)).split(",")
    )
    horizon = budgets[-1]
    methods = satdt_methods(args.all) + PEER_METHODS
    if args.wide and not args.methods:
        methods = ["auto", "pytrees-discrepancy", "pytrees-topk"]
    if args.n_jobs > 1:
        methods += [f"portfolio@{args.n_jobs}", f"auto@{args.n_jobs}"]
    if args.methods:
        wanted = args.methods.split(",")
        unknown = [m for m in wanted if m not in methods]
        if unknown:
            sys.exit(f"unknown methods {unknown}; choose from {methods}")
        methods = wanted
    missing = available_peers()
    for peer, reason in missing.items():
        if reason is not None and any(_peer_of(m) == peer for m in methods):
            print(f'skipped {peer}: {reason} (install with: pip install -e ".[bench]")')
    methods = [m for m in methods if _peer_of(m) is None or missing[_peer_of(m)] is None]

    anytime = sum(m not in FINAL_ONLY for m in methods)
    final = sum(m in FINAL_ONLY for m in methods)
    worst = len(files) * len(depths) * (anytime * horizon + final * sum(budgets)) / args.jobs
    print(
        f"{len(methods)} methods, {len(files)} files, depths {depths}, budgets {budgets}: "
        f"at most about {worst / 60:.0f} min of runs (less when searches prove early)",
        flush=True,
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    subprocess.run([sys.executable, "-c", "import satdt; satdt.warmup()"], check=True, env=env)
    started = time.perf_counter()
    # runs[(depth, name, method, budget)]; anytime methods run once at the largest budget
    runs: dict = {}

    def chain(depth: int, name: str, method: str) -> None:
        """Every run of one method on one file and depth (a final-only peer: each budget).

        A final-only peer that proved its tree within a budget gives the same answer at every
        larger budget: that run is reused instead of repeated.
        """
        reuse = None
        for budget in budgets if method in FINAL_ONLY else [horizon]:
            run = reuse or run_one(method, name, depth, budget, args.mem_gb, env)
            if run.get("proven") and run["time"] <= budget:
                reuse = run
            runs[depth, name, method, budget] = run
            if "failed" in run:
                print(f"  {name} depth {depth} {method} {budget:g}s: {run['failed']}", flush=True)

    # ``auto`` runs one of the methods of the table: its row is that method's runs when those
    # are in this benchmark anyway
    from satdt.search.auto import choose_method

    alias = choose_method("error")
    same = "auto" in methods and alias in methods
    if same:
        print(f"auto runs {alias}: its row repeats {alias}'s runs", flush=True)
    jobs = [(d, n, m) for d in depths for n in files for m in methods if not (same and m == "auto")]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for done, _ in enumerate(pool.map(lambda job: chain(*job), jobs), 1):
            if done % 10 == 0 or done == len(jobs):
                print(
                    f"  {done}/{len(jobs)} runs ({time.perf_counter() - started:.0f} s)", flush=True
                )
    if same:
        for (d, n, m, b), run in list(runs.items()):
            if m == alias:
                runs[d, n, "auto", b] = run
    if args.save:
        rows = [
            {"depth": d, "file": n, "method": m, "budget": b, **run}
            for (d, n, m, b), run in runs.items()
        ]
        Path(args.save).write_text(json.dumps(rows))
        print(f"runs written to {args.save}")

    from satdt.task.result import primal_integral

    print(
        f"\nfiles: {', '.join(files)}. Primal integral in seconds (lower is better; = budget "
        "when no tree), best-known = the lowest error any method found on that file and depth "
        "in this run; proven = instances proven optimal within the budget; MB = largest peak "
        "resident memory of a run. satdt and pytrees-rs: one run at the largest budget, scored "
        "on its curve at each budget; pytrees-rs's curve is its callback's values raised to at "
        "least the error of the tree it returns (its own predictions), and its proof counts only when that tree has the reported error. pystreed and pydl8.5 "
        "report only their final tree: run once at each budget, one point at their finish.\n"
    )
    curves: dict = {}
    for depth in depths:
        best = {}
        for name in files:
            values = [
                v
                for (d, n, _m, _b), run in runs.items()
                if d == depth and n == name and "curve" in run
                for _t, v in run["curve"]
            ]
            best[name] = min(values) if values else None
        cols = [f"PI {b:g}s" for b in budgets] + [f"proven {b:g}s" for b in budgets]
        print(f"### depth {depth} ({len(files)} files)\n")
        print("| method | " + " | ".join(cols) + " | MB | failed |")
        print("|---|" + "---|" * (len(cols) + 2))
        curves[depth] = {}
        for method in methods:
            final_only = method in FINAL_ONLY
            cells_pi, cells_proven = [], []
            peak, failed = 0.0, 0
            for budget in budgets:
                total, proven, counted = 0.0, 0, 0
                for name in files:
                    run = runs[depth, name, method, budget if final_only else horizon]
                    if best[name] is None:
                        continue
                    counted += 1
                    if "failed" in run:
                        total += budget
                        continue
                    total += primal_integral(_curve_at(run, budget, final_only), best[name], budget)
                    proven += run["proven"] and run["time"] <= budget
                cells_pi.append(f"{total / counted:.2f}" if counted else "-")
                cells_proven.append(str(proven))
            for name in files:
                for budget in budgets if final_only else [horizon]:
                    run = runs[depth, name, method, budget]
                    failed += "failed" in run
                    peak = max(peak, run.get("peak_mb", 0.0))
                    if not final_only and "curve" in run and best[name] is not None:
                        curves[depth].setdefault(method, []).append((run["curve"], best[name]))
            label = method + (" (final only)" if final_only else "")
            print(
                f"| {label} | "
                + " | ".join(cells_pi + cells_proven)
                + f" | {peak:.0f} | {failed} |"
            )
        print()
    final_errors(runs, files, depths, budgets, methods)
    print(f"total benchmark time {time.perf_counter() - started:.0f} s")
    if args.plot:
        plot_curves(args.plot, curves, horizon)


if __name__ == "__main__":
    main()
