"""Minimum depth (and size) on ordinary numeric tables: what `benchmarks/min_depth.py --numeric`
and `benchmarks/min_size.py --numeric` run.

The tables: scikit-learn's bundled breast-cancer, wine, iris and digits (whole, and digits
subsampled to 500 rows), and every shared continuous file (ConTree's) subsampled to 200, 500
and 2,000 rows (a fixed seed; contradictory rows relabelled by their majority, as
``--resolve majority`` does). Each is written once as a CSV file (label last) in a
temporary folder.

Per table, side by side, every run a separate process (whole-process seconds, imports and
kernel loading included):

- ``CART``: scikit-learn's ``DecisionTreeClassifier`` grown to purity, its depth (and nodes);
- ``sat``: ``satdt infer --method sat`` (today's SAT search alone);
- ``auto``: ``satdt infer`` (the portfolio of SAT and ConTree, or the box DP);
- ``auto@10s``: ``satdt infer --time-limit 10``: its depth must never exceed CART's;
- ``ConTree k-1`` and ``ConTree k``: ``satdt fit --method contree --max-depth K`` (the
  minimum-error search) at the depth below auto's and at auto's depth: the minimum depth is
  k when the first has a positive error and the second none.

``min_size.py --numeric`` runs the size objective instead (``satdt infer --size``): the
fewest nodes at the minimum depth by SAT alone, ConTree alone (``--method contree``: its
decision procedure, then its leaf-penalty search) and ``auto``, beside CART's node count.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CONTINUOUS = ROOT.parent / "shared" / "data" / "continuous"
SKLEARN = ("breast_cancer", "wine", "iris", "digits")
SIZES = (200, 500, 2000)
SEED = 0


def add_numeric_arguments(parser) -> None:
    """``--numeric``, ``--tables`` and ``--sizes``, shared by min_depth.py and min_size.py."""
    parser.add_argument(
        "--numeric", action="store_true", help="the numeric tables instead (numeric_tables.py)"
    )
    parser.add_argument("--tables", nargs="*", help="numeric tables by name (default: all)")
    parser.add_argument(
        "--sizes", default="200,500,2000", help="rows of the subsampled continuous files"
    )


def sizes_of(args) -> tuple[int, ...]:
    return tuple(int(size) for size in args.sizes.split(","))


def _resolve_majority(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Relabel every group of identical rows with its majority label (ties: the smallest)."""
    _, group = np.unique(X, axis=0, return_inverse=True)
    group = group.ravel()
    y = y.copy()
    for g in np.flatnonzero(np.bincount(group) > 1):
        members = np.flatnonzero(group == g)
        y[members] = np.bincount(y[members]).argmax()
    return y


def tables(
    names: list[str] | None, sizes: tuple[int, ...]
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(name, X, y)`` of every table asked for (all by default); y relabelled by majority."""
    found = []
    from sklearn import datasets

    for name in SKLEARN:
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
        found.append((name, X.astype(float), y.astype(np.int64)))
        if name == "digits":
            idx = np.random.default_rng(SEED).choice(len(y), 500, replace=False)
            found.append(("digits-500", X[idx].astype(float), y[idx].astype(np.int64)))
    if CONTINUOUS.is_dir():
        for path in sorted(CONTINUOUS.glob("*.txt")):
            table = np.loadtxt(path, ndmin=2)
            X, y = table[:, 1:], np.unique(table[:, 0], return_inverse=True)[1].astype(np.int64)
            for rows in sizes:
                if rows >= len(y):
                    continue
                idx = np.random.default_rng(SEED).choice(len(y), rows, replace=False)
                found.append((f"{path.stem}-{rows}", X[idx], y[idx]))
    else:
        print(f"(shared continuous files not found: {CONTINUOUS.name}/ skipped)")
    if names:
        found = [t for t in found if t[0] in names]
    return [(name, X, _resolve_majority(X, y)) for name, X, y in found]


def write_csv(folder: Path, name: str, X: np.ndarray, y: np.ndarray) -> Path:
    path = folder / f"{name}.csv"
    header = ",".join([f"x{j}" for j in range(X.shape[1])] + ["label"])
    np.savetxt(
        path, np.column_stack([X, y]), delimiter=",", header=header, comments="", fmt="%.17g"
    )
    return path


def cart(X: np.ndarray, y: np.ndarray) -> tuple[int, int]:
    """Depth and nodes of scikit-learn's CART grown to purity."""
    from sklearn.tree import DecisionTreeClassifier

    tree = DecisionTreeClassifier(random_state=SEED).fit(X, y)
    return int(tree.get_depth()), int(tree.tree_.node_count)


def run(command: list[str], cap: float) -> dict:
    """One satdt command (JSON output) as a process: its document and whole-process seconds."""
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=cap + 60)
    except subprocess.TimeoutExpired:
        return {"error": "killed", "wall": time.perf_counter() - started}
    wall = time.perf_counter() - started
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return {"error": tail[:60], "wall": wall}
    document = json.loads(done.stdout)
    document["wall"] = wall
    return document


def satdt(*args: str) -> list[str]:
    return [sys.executable, "-m", "satdt.cli", *args, "--format", "json", "--quiet"]


def infer(path: Path, cap: float, *extra: str) -> dict:
    return run(
        satdt("infer", str(path), "--resolve", "majority", "--time-limit", str(cap), *extra), cap
    )


def contree_fit(path: Path, depth: int, cap: float, *extra: str) -> dict:
    return run(
        satdt(
            "fit", str(path), "--method", "contree", "--max-depth", str(depth),
            "--time-limit", str(cap), *extra,
        ),
        cap,
    )  # fmt: skip


def _depth(doc: dict) -> str:
    if "error" in doc:
        return doc["error"]
    proven = "" if doc["proven_optimal"] else f" (>= {doc['lower_bound']:g})"
    return f"{doc['depth']}{proven}"


def _by(doc: dict) -> str:
    stats = doc.get("stats", {})
    found, lower = stats.get("found_by", ""), stats.get("lower_bound_by", "")
    return f"{found}/{lower}" if found or lower else doc.get("method", "")


def _fit_cell(doc: dict | None) -> str:
    if doc is None:
        return "-"
    if "error" in doc and "errors" not in doc:
        return doc["error"]
    mark = "" if doc["proven_optimal"] else "?"
    return f"{doc['errors']:g}{mark} ({doc['wall']:.2f} s)"


def depth_table(
    names: list[str] | None,
    sizes: tuple[int, ...],
    cap: float,
    short: float,
    sat_cap: float | None = None,
) -> None:
    """The minimum-depth table (``min_depth.py --numeric``); ``sat_cap``: SAT's own limit
    (default ``cap``)."""
    print(
        "| table | rows | cols | classes | CART depth | sat depth | sat s | auto depth | auto s "
        "| found/proven by | ConTree k-1 | ConTree k | ConTree sum s | auto / ConTree "
        f"| auto@{short:g}s depth | <= CART |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios, within = [], []
    with tempfile.TemporaryDirectory() as folder:
        for name, X, y in tables(names, sizes):
            path = write_csv(Path(folder), name, X, y)
            cart_depth, _ = cart(X, y)
            sat = infer(path, cap if sat_cap is None else sat_cap, "--method", "sat")
            auto = infer(path, cap)
            quick = infer(path, short)
            low = high = None
            if "error" not in auto:
                k = auto["depth"]
                high = contree_fit(path, k, cap)
                low = contree_fit(path, k - 1, cap) if k > 0 else None
            # ConTree settles the minimum depth: a positive optimum at k - 1, 0 at k, both proven
            settled = (
                low is not None and high is not None and "error" not in low
                and "error" not in high and low["proven_optimal"] and high["proven_optimal"]
                and low["errors"] > 0 and high["errors"] == 0
            )  # fmt: skip
            total = (low["wall"] + high["wall"]) if settled else None
            ratio = "-"
            if settled:
                ratios.append(auto["wall"] / total if auto.get("proven_optimal") else math.inf)
                ratio = f"{ratios[-1]:.2f}" if auto.get("proven_optimal") else "not proven"
            ok = "error" not in quick and quick["depth"] <= cart_depth
            within.append(ok)
            print(
                f"| {name} | {len(y)} | {X.shape[1]} | {len(np.unique(y))} | {cart_depth} "
                f"| {_depth(sat)} | {sat['wall']:.2f} | {_depth(auto)} | {auto['wall']:.2f} "
                f"| {_by(auto)} | {_fit_cell(low)} | {_fit_cell(high)} "
                f"| {'-' if total is None else f'{total:.2f}'} | {ratio} | {_depth(quick)} "
                f"| {'yes' if ok else 'NO'} |",
                flush=True,
            )
    if ratios:
        print(
            f"\nauto / (ConTree k-1 + k) where ConTree settles the minimum depth: median "
            f"{statistics.median(ratios):.2f}, max {max(ratios):.2f}; auto proves it in no more "
            f"time on {sum(r <= 1 for r in ratios)} of {len(ratios)} tables"
        )
    print(f"auto@{short:g}s no deeper than CART on {sum(within)} of {len(within)} tables")


def size_table(
    names: list[str] | None, sizes: tuple[int, ...], cap: float, sat_cap: float | None = None
) -> None:
    """The minimum-size table (``min_size.py --numeric``); ``sat_cap``: SAT's own limit."""

    def nodes(doc: dict) -> str:
        if "error" in doc:
            return doc["error"]
        proven = "" if doc["proven_optimal"] else f" (>= {doc['lower_bound']:g})"
        return f"{doc['n_nodes']}{proven} ({doc['wall']:.2f} s)"

    print(
        "| table | rows | CART depth | CART nodes | sat nodes | contree nodes | auto depth "
        "| auto nodes | found/proven by |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name, X, y in tables(names, sizes):
            path = write_csv(Path(folder), name, X, y)
            cart_depth, cart_nodes = cart(X, y)
            sat = infer(path, cap if sat_cap is None else sat_cap, "--size", "--method", "sat")
            contree = infer(path, cap, "--size", "--method", "contree")
            auto = infer(path, cap, "--size")
            print(
                f"| {name} | {len(y)} | {cart_depth} | {cart_nodes} | {nodes(sat)} "
                f"| {nodes(contree)} | {auto.get('depth', '-')} | {nodes(auto)} | {_by(auto)} |",
                flush=True,
            )


def targets_table(names: list[str] | None, sizes: tuple[int, ...], cap: float) -> None:
    """The minimum depth's targets (``min_depth.py --numeric --targets``): ``auto`` alone at
    ``cap`` seconds per table, beside CART's fully grown depth, with what each step of the
    consistency portfolio bought: the greedy start, the local improvement (DT-SLIM), the
    lower bound the cores proved, and the final bounds."""
    print(
        "| table | rows | cols | classes | CART | depth | lower bound | proven | s "
        "| depth / CART | gap | greedy | after improvement | cores' bound | found/proven by |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    counts = {"tables": 0, "proven": 0, "cart": 0, "cart or proven": 0, "gap": 0}
    digits = "not run"
    with tempfile.TemporaryDirectory() as folder:
        for name, X, y in tables(names, sizes):
            path = write_csv(Path(folder), name, X, y)
            cart_depth, _ = cart(X, y)
            doc = infer(path, cap)
            counts["tables"] += 1
            if "error" in doc:
                print(f"| {name} | {len(y)} | {X.shape[1]} | {len(np.unique(y))} | {cart_depth} "
                      f"| {doc['error']} | | | {doc['wall']:.1f} | | | | | | |", flush=True)  # fmt: skip
                continue
            depth, low = doc["depth"], math.ceil(doc["lower_bound"] - 1e-9)
            proven = bool(doc["proven_optimal"])
            stats = doc.get("stats") or {}
            improve, cores = stats.get("improve") or {}, stats.get("cores") or {}
            refuted = [d for d, _ in cores.get("cores", [])]
            counts["proven"] += proven
            counts["cart"] += depth <= 0.6 * cart_depth
            counts["cart or proven"] += depth <= 0.6 * cart_depth or proven
            counts["gap"] += depth - low <= 2
            if name == "digits":
                digits = "proven" if proven else f"{depth} (>= {low})"
            print(
                f"| {name} | {len(y)} | {X.shape[1]} | {len(np.unique(y))} | {cart_depth} "
                f"| {depth} | {low} | {'yes' if proven else 'no'} | {doc['wall']:.1f} "
                f"| {depth / max(cart_depth, 1):.2f} | {depth - low} "
                f"| {improve.get('start_depth', '-')} | {improve.get('depth', '-')} "
                f"| {max(refuted) + 1 if refuted else '-'} | {_by(doc)} |",
                flush=True,
            )
    n = counts["tables"]
    print(
        f"\nproven: {counts['proven']} of {n}; digits: {digits}; depth <= 0.6 x CART: "
        f"{counts['cart']} of {n} (or the proven minimum, deeper than that: "
        f"{counts['cart or proven']} of {n}); depth <= lower bound + 2: {counts['gap']} of {n}"
    )
