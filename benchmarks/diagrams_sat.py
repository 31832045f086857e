"""Decision diagrams by SAT (minimum size) and MaxSAT (objective (18)), beside the MILP.

Prints two markdown tables. Minimum size: satdt.sat.diagram.minimum_size_diagram on the
consistent inferdt files and the consistent CP4IM subsets of ``diagrams.CP4IM_RUNS`` (when
``../shared/data/cp4im`` is there) over the automatic skeleton of the given depth, and the MILP of
satdt.mip.milp.solve_diagram on the same skeleton with alpha = 0.5 / n (below one error's
weight, so its optimum is a consistent diagram with the fewest nodes). Minimum error:
minimum_error_diagram (RC2) and the MILP at alpha = 0.01 on small skeletons. Every run has
the same time cap; times are wall-clock seconds in this process (imports and data
preparation excluded). Both sides see the same hypotheses: the MILP's univariate splits on
min-max scaled columns cut where the binary features ``x[c] > t`` do.

    nice -n 10 python benchmarks/diagrams_sat.py                 # both tables, MILP included
    nice -n 10 python benchmarks/diagrams_sat.py --no-milp --cap 30
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from inferdt import DATA

from satdt import read_csv
from satdt.core.errors import InfeasibleError
from satdt.models.diagram_checks import ErrorObjective
from satdt.prepare.prepared import prepare
from satdt.sat.diagram import (
    MaxSatRun,
    SizeRun,
    minimum_error_diagram,
    minimum_size_diagram,
    tree_skeleton,
)
from satdt.task.result import Recorder

SIZE_RUNS = (("mouse", 4), ("monk1", 5), ("monk3", 6), ("monk2", 6))
ERROR_RUNS = (
    ("mouse", (1, 2, 2)),
    ("monk1", (1, 2, 2)),
    ("monk3", (1, 2, 2)),
    ("monk2", (1, 2, 2)),
    ("mouse", (1, 2, 4)),
    ("monk1", (1, 2, 4)),
)


def load(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Binary features, min-max scaled design matrix, class indices, number of classes."""
    data = prepare(
        read_csv(DATA / f"{name}.csv"),
        None,
        consistency=True,
        resolve=None,
        recorder=Recorder("size"),
        deadline=None,
        max_thresholds=None,
        max_memory_mb=1024,
    )
    X = data.X
    lo, hi = X.min(axis=0), X.max(axis=0)
    scaled = (X - lo) / np.where(hi > lo, hi - lo, 1.0)
    return data.binary().B, scaled, data.y, len(data.classes)


def milp(X, y, k, widths, alpha, cap) -> tuple[float, str, object]:
    """(seconds, status, outcome) of the MILP; the status says whether it proved optimality."""
    from satdt.mip.milp import MilpOptions, solve_diagram

    began = time.perf_counter()
    options = MilpOptions(alpha=alpha)
    outcome = solve_diagram(X, y, k, widths, options, deadline=time.perf_counter() + cap)
    return time.perf_counter() - began, outcome.status, outcome


def ratio(milp_seconds: float, milp_proven: bool, sat_seconds: float, sat_proven: bool) -> str:
    if not sat_proven:
        return "-"
    value = milp_seconds / max(sat_seconds, 1e-3)
    return f"{value:.0f}x" if milp_proven else f">= {value:.0f}x"


def size_data() -> list[tuple[str, int, tuple]]:
    """(label, depth, (B, X, y, k)) of every minimum-size run: inferdt files, CP4IM subsets."""
    runs = [(name, depth, load(name)) for name, depth in SIZE_RUNS]
    try:
        from diagrams import CP4IM, CP4IM_RUNS, binary_data
    except ImportError:
        return runs
    for name, rows, depth in CP4IM_RUNS:
        if (CP4IM / f"{name}.txt").exists():
            runs.append((f"{name} ({rows} rows)", depth, binary_data(f"cp4im/{name}", rows)))
    return runs


def size_table(cap: float, with_milp: bool) -> None:
    print(f"### Minimum-size consistent diagrams (cap {cap:g} s per run)\n")
    print(
        "| data | rows | binary features | skeleton | SAT nodes | proven | SAT calls | rows encoded "
        "| SAT s | MILP nodes | MILP status | MILP s | MILP / SAT |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, depth, (B, X, y, k) in size_data():
        widths = tree_skeleton(depth)
        began = time.perf_counter()
        try:
            r = minimum_size_diagram(B, y, k, widths, SizeRun(deadline=time.perf_counter() + cap))
            nodes = str(r.objective) if r.proven else f"{r.objective} (lower bound {r.lower_bound})"
            sat = (nodes, str(r.proven), str(r.sat_calls), str(r.examples))
            proven = r.proven
        except InfeasibleError:
            sat, proven = ("none found", "False", "-", "-"), False
        sat_s = time.perf_counter() - began
        cells = ["-", "not run", "-", "-"]
        if with_milp:
            seconds, status, out = milp(X, y, k, widths, 0.5 / len(y), cap)
            errors = 0 if out.diagram is None else int((out.diagram.predict_index(X) != y).sum())
            nodes = "-" if out.diagram is None else f"{out.diagram.n_nodes} ({errors} errors)"
            cells = [
                nodes,
                status,
                f"{seconds:.1f}",
                ratio(seconds, status == "optimal", sat_s, proven),
            ]
        print(
            f"| {name} | {len(y)} | {B.shape[1]} | {list(widths)} | "
            + " | ".join(sat)
            + f" | {sat_s:.2f} | "
            + " | ".join(cells)
            + " |",
            flush=True,
        )


def error_table(cap: float, with_milp: bool, alpha: float = 0.01) -> None:
    print(f"\n### Minimum objective (18), alpha = {alpha} (cap {cap:g} s per run)\n")
    print(
        "| data | skeleton | MaxSAT objective | lower bound | proven | SAT calls | MaxSAT s "
        "| MILP objective | MILP bound | MILP status | MILP s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    proved = [0, 0]
    for name, widths in ERROR_RUNS:
        B, X, y, k = load(name)
        r = minimum_error_diagram(
            B,
            y,
            k,
            widths,
            ErrorObjective(alpha),
            run=MaxSatRun(deadline=time.perf_counter() + cap),
        )
        proved[0] += r.proven
        cells = ["-", "-", "not run", "-"]
        if with_milp:
            seconds, status, out = milp(X, y, k, widths, alpha, cap)
            proved[1] += status == "optimal"
            cells = [f"{out.objective:.4f}", f"{out.bound:.4f}", status, f"{seconds:.1f}"]
        print(
            f"| {name} | {list(widths)} | {r.objective:.4f} | {r.lower_bound:.4f} | {r.proven} "
            f"| {r.sat_calls} | {r.runtime:.2f} | " + " | ".join(cells) + " |",
            flush=True,
        )
    milp_count = f"{proved[1]}" if with_milp else "not run"
    print(f"\nProven optimal: MaxSAT {proved[0]} of {len(ERROR_RUNS)}, MILP {milp_count}.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=60.0, help="time limit per run, seconds")
    parser.add_argument("--no-milp", action="store_true", help="skip the MILP columns")
    parser.add_argument("--only", choices=("size", "error"), help="print one table only")
    args = parser.parse_args()
    with_milp = not args.no_milp
    if with_milp:
        try:
            import highspy  # noqa: F401
        except ImportError:
            print("highspy is not installed: MILP columns skipped (pip install -e '.[diagrams]')")
            with_milp = False
    warnings.simplefilter("ignore")
    if args.only != "error":
        size_table(args.cap, with_milp)
    if args.only != "size":
        error_table(args.cap / 2, with_milp)


if __name__ == "__main__":
    main()
