"""Born-again trees beside BA-Trees (Vidal & Schiffer, ICML 2020), one core each.

Part 1, BA-Trees' 60 published forests (6 tables x 10 folds, 10 trees of depth 3, in
``../shared/peers/ba-trees/forests``): the optimal depth (``--objective depth``) or depth
then leaves (``--objective depth_then_size``: "same" says the same depth and no more leaves
than BA-Trees, whose programme combines each child's own lexicographic optimum and may keep
more leaves than the fewest at that depth) by satdt's cell DP and by BA-Trees' C++ (built
from ``../shared/peers/ba-trees/src`` with ``make`` into a temporary folder, or
``--ba-binary PATH``). Times are CPU seconds of the search, the forest already read: BA-Trees'
own figure (its ``.out`` file: ``clock()`` around its search) and ``time.process_time()``
around :func:`satdt.dp.born_again.born_again_tree` (Numba's kernels loaded before). BA-Trees
allocates 4 bytes per region of the filtered grid; a fold needing more than
``--ba-memory-gb`` is not started (the table says what it would need), and every run is
capped at that memory.

Part 2 (``--wide``), forests over tables of 20 features or more, made as BA-Trees made theirs:
each column binned into 10 ordinal levels (quantiles), a random forest of 10 trees of depth 3
with half the features tried per split (seeded), hard votes. satdt is called as a
user calls it, ``satdt.born_again(forest, time_limit=--wide-cap)``, and timed as a whole
(wall seconds, the re-check of faithfulness included): it runs the grid route when the grid
has at most ``MAX_GRID_CELLS`` cells, else the SAT route (:mod:`satdt.sat.born_again`: the
greedy faithful tree, sub-box lower bounds, the counterexample-guided SAT loop); BA-Trees
runs until it stops.

    python benchmarks/born_again.py                              # part 1, objective depth
    python benchmarks/born_again.py --objective depth_then_size
    python benchmarks/born_again.py --datasets Seeds HTRU2 --folds 1 2 3
    python benchmarks/born_again.py --wide --no-published        # part 2 only
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PEER = ROOT.parent / "shared" / "peers" / "ba-trees"
DATA = ROOT.parent / "shared" / "data"
DATASETS = [
    "Seeds",
    "HTRU2",
    "Pima-Diabetes",
    "COMPAS-ProPublica",
    "FICO",
    "Breast-Cancer-Wisconsin",
]
# the paper's average optimal depth per table (objective depth), from the peer's notes
PAPER_DEPTH = {
    "Breast-Cancer-Wisconsin": 12.5,
    "COMPAS-ProPublica": 8.9,
    "FICO": 8.6,
    "HTRU2": 6.0,
    "Pima-Diabetes": 9.6,
    "Seeds": 10.2,
}
BA_OBJECTIVE = {"depth": 0, "size": 1, "depth_then_size": 2}
# (name, file, reader): tables of 20 features or more
WIDE = [
    ("thyroid-ann", "odd/thyroid-ann.csv", "odd"),
    ("fault", "continuous/fault.txt", "continuous"),
    ("breast-cancer-diagnostic", "odd/breast-cancer-diagnostic.csv", "odd"),
    ("ionosphere", "odd/ionosphere.csv", "odd"),
    ("spambase", "odd/spambase.csv", "odd"),
]


# ---------------------------------------------------------------------- BA-Trees
def build_ba(target: Path) -> Path:
    """BA-Trees' solver built with its makefile (plain g++, no CPLEX) in ``target``."""
    source = PEER / "src" / "born_again_dp"
    for name in os.listdir(source):
        if name.endswith((".cpp", ".h")) or name == "makefile":
            shutil.copy(source / name, target / name)
    subprocess.run(["make"], cwd=target, check=True, capture_output=True)
    return target / "bornAgain"


def one_core() -> None:
    """Run on one core (this process and BA-Trees' children alike)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def run_ba(binary: Path, forest: Path, objective: str, timeout: float, memory_gb: float) -> dict:
    """One BA-Trees run: its depth, leaves and CPU seconds, or why there are none."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "out"

        def limits() -> None:
            cap = int(memory_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            one_core()

        started = time.perf_counter()
        try:
            done = subprocess.run(
                [str(binary), str(forest), str(out), "-obj", str(BA_OBJECTIVE[objective])],
                capture_output=True,
                text=True,
                timeout=timeout,
                preexec_fn=limits,
            )
        except subprocess.TimeoutExpired:
            return {"failed": f"over {timeout:.0f} s"}
        wall = time.perf_counter() - started
        stats = Path(f"{out}.out")
        if not stats.exists():
            said = [
                line for line in done.stdout.splitlines() if "WARNING" in line or "CELLS" in line
            ]
            tail = said[-1] if said else (done.stderr.strip().splitlines() or ["no tree"])[-1]
            return {"failed": f"no tree after {wall:.0f} s ({tail.strip()[:60]})"}
        fields = stats.read_text().strip().split(",")
        return {
            "depth": int(fields[6]),
            "leaves": int(fields[8]),
            "seconds": float(fields[10]),
            "wall": wall,
        }


def ba_gigabytes(forest) -> float:
    """Memory BA-Trees allocates for its regions: 4 bytes per box of the filtered grid."""
    cells = forest.cell_classes()
    boxes = 1.0
    for axis in range(cells.ndim):
        changes = np.diff(cells, axis=axis) != 0
        others = tuple(b for b in range(cells.ndim) if b != axis)
        n = int(changes.any(axis=others).sum()) + 1
        boxes *= n * (n + 1) / 2
    return 4 * boxes / 2**30


# ---------------------------------------------------------------------- satdt
def run_satdt(forest, objective: str, cap: float) -> dict:
    from satdt.dp.born_again import born_again_tree

    started, wall = time.process_time(), time.perf_counter()
    result = born_again_tree(forest, objective, deadline=wall + cap)
    return {
        "depth": result.depth,
        "leaves": result.n_leaves,
        "seconds": time.process_time() - started,
        "wall": time.perf_counter() - wall,
        "proven": result.proven,
        "expansions": result.stats.expansions,
    }


def warm_up() -> None:
    """Load the kernels (compiled once into Numba's cache) before anything is timed."""
    from satdt.dp.born_again import born_again_tree
    from satdt.models.forest import Forest

    forest = Forest.from_nested([(0, 0.5, (1, 0.5, 0, 1), 1), (1, 0.5, 0, 1)], 2, [0, 1])
    for objective in BA_OBJECTIVE:
        born_again_tree(forest, objective)


# ---------------------------------------------------------------------- part 1
def published(args: argparse.Namespace, binary: Path) -> None:
    from satdt.models.forest_io import read_forest

    every_ratio, totals = [], [0.0, 0.0]
    all_equal = True
    for name in args.datasets:
        print(
            f"\n### {name} (objective {args.objective}; paper's average depth {PAPER_DEPTH[name]})\n"
        )
        print(
            "| fold | depth satdt | depth BA-Trees | same | leaves satdt | leaves BA-Trees | satdt s | BA-Trees s | ratio |"
        )
        print("|---:|---:|---:|:---:|---:|---:|---:|---:|---:|")
        sums, ratios = [0.0, 0.0], []
        for fold in args.folds:
            path = PEER / "forests" / name / f"{name}.RF{fold}.txt"
            forest = read_forest(path)
            ours = run_satdt(forest, args.objective, args.cap)
            need = ba_gigabytes(forest)
            if need > args.ba_memory_gb:
                theirs = {"failed": f"not run: needs {need:.0f} GB"}
            else:
                theirs = run_ba(binary, path, args.objective, args.cap, args.ba_memory_gb)
            mark = "" if ours["proven"] else " (not proven)"
            if "failed" in theirs:
                print(
                    f"| {fold} | {ours['depth']}{mark} | {theirs['failed']} | | {ours['leaves']} | "
                    f"| {ours['seconds']:.3f} | | |",
                    flush=True,
                )
                continue
            same = ours["proven"] and ours["depth"] == theirs["depth"]
            if args.objective == "size":
                same &= ours["leaves"] == theirs["leaves"]
            elif args.objective == "depth_then_size":  # BA-Trees' programme may keep more
                same &= ours["leaves"] <= theirs["leaves"]
            all_equal &= same
            ratio = ours["seconds"] / max(theirs["seconds"], 1e-3)
            ratios.append(ratio)
            sums[0] += ours["seconds"]
            sums[1] += theirs["seconds"]
            fewer = " (fewer)" if ours["leaves"] < theirs["leaves"] else ""
            print(
                f"| {fold} | {ours['depth']}{mark} | {theirs['depth']} | {'yes' if same else 'NO'} | "
                f"{ours['leaves']}{fewer if args.objective == 'depth_then_size' else ''} | "
                f"{theirs['leaves']} | {ours['seconds']:.3f} | "
                f"{theirs['seconds']:.3f} | {ratio:.2f} |",
                flush=True,
            )
        if ratios:
            print(
                f"| **total** (both ran) | | | | | | **{sums[0]:.2f}** | **{sums[1]:.2f}** | "
                f"**{sums[0] / max(sums[1], 1e-3):.2f}** (median {statistics.median(ratios):.2f}) |"
            )
            every_ratio += ratios
            totals[0] += sums[0]
            totals[1] += sums[1]
    if every_ratio:
        print(
            f"\n**All forests both ran ({len(every_ratio)}):** satdt {totals[0]:.2f} s, BA-Trees "
            f"{totals[1]:.2f} s, ratio of totals {totals[0] / max(totals[1], 1e-3):.2f}, median "
            f"ratio {statistics.median(every_ratio):.2f}; same optimum everywhere: "
            f"{'yes' if all_equal else 'NO'}"
        )


# ---------------------------------------------------------------------- part 2
def read_table(path: Path, reader: str) -> tuple[np.ndarray, np.ndarray]:
    if reader == "continuous":
        data = np.loadtxt(path)
        return data[:, 1:], data[:, 0].astype(int)
    data = np.genfromtxt(path, delimiter=",", skip_header=1)
    return data[:, :-1], data[:, -1].astype(int)


def wide_forest(path: Path, reader: str, seed: int):
    """A forest made as BA-Trees made theirs: columns in 10 ordinal levels (quantiles),
    10 trees of depth 3, half the features per split, hard votes."""
    from sklearn.ensemble import RandomForestClassifier

    from satdt.models.forest_io import from_sklearn

    X, y = read_table(path, reader)
    X = np.nan_to_num(X)
    binned = np.empty_like(X)
    for c in range(X.shape[1]):
        edges = np.unique(np.quantile(X[:, c], np.linspace(0.1, 0.9, 9)))
        binned[:, c] = np.searchsorted(edges, X[:, c], side="right")
    model = RandomForestClassifier(
        n_estimators=10, max_depth=3, max_features=0.5, random_state=seed
    ).fit(binned, np.unique(y, return_inverse=True)[1])
    return from_sklearn(model, vote="hard")


def wide(args: argparse.Namespace, binary: Path | None) -> None:
    import warnings

    import satdt
    from satdt.models.faithful import is_faithful
    from satdt.models.forest_io import write_forest

    print(
        f"\n### Wide forests (satdt.born_again with time_limit={args.wide_cap:.0f}; "
        f"BA-Trees up to {args.cap:.0f} s)\n"
    )
    print(
        "| table | features | grid cells | route | satdt depth | lower bound | proven | leaves "
        "| satdt s (whole call) | of it: re-check s | BA-Trees |"
    )
    print("|---|---:|---:|---|---:|---:|:---:|---:|---:|---:|---|")
    for name, file, reader in WIDE:
        if args.wide_tables and name not in args.wide_tables:
            continue
        forest = wide_forest(DATA / file, reader, args.seed)
        cells = math.prod(len(t) + 1 for t in forest.thresholds())
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", satdt.NotProvenWarning)
            model = satdt.born_again(forest, time_limit=args.wide_cap)
        seconds = time.perf_counter() - started
        result, tree = model.result_, model.tree_
        faithful = is_faithful(tree, forest, max_cells=0)  # the benchmark's own check, box by box
        theirs = "not run"
        if binary is not None:
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / f"{name}.txt"
                write_forest(path, forest, dataset=name)
                ba = run_ba(binary, path, "depth", args.cap, args.ba_memory_gb)
            theirs = ba.get("failed") or f"depth {ba['depth']} in {ba['seconds']:.1f} s"
        print(
            f"| {name} | {forest.n_features} | {cells:.2e} | {result.stats.route} | "
            f"{tree.depth} | {result.lower_bound:g} | "
            f"{'yes' if result.proven_optimal else 'no'} | {tree.n_leaves} | {seconds:.1f}"
            f"{'' if faithful else ' (NOT FAITHFUL)'} | {result.stats.check_seconds:.1f} | "
            f"{theirs} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objective", choices=list(BA_OBJECTIVE), default="depth")
    parser.add_argument("--datasets", nargs="+", default=DATASETS, choices=DATASETS)
    parser.add_argument("--folds", nargs="+", type=int, default=list(range(1, 11)))
    parser.add_argument("--ba-binary", type=Path, help="BA-Trees' bornAgain (default: built here)")
    parser.add_argument("--cap", type=float, default=600.0, help="seconds per run, each solver")
    parser.add_argument("--ba-memory-gb", type=float, default=6.0)
    parser.add_argument("--no-published", action="store_true", help="skip part 1")
    parser.add_argument("--wide", action="store_true", help="run part 2")
    parser.add_argument("--wide-cap", type=float, default=120.0)
    parser.add_argument("--wide-tables", nargs="*", default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    one_core()
    warm_up()
    with tempfile.TemporaryDirectory() as folder:
        binary = args.ba_binary or build_ba(Path(folder))
        print(f"BA-Trees: {binary}; one core each; CPU seconds of the search (forest read)")
        if not args.no_published:
            published(args, binary)
        if args.wide:
            wide(args, binary)


if __name__ == "__main__":
    main()
