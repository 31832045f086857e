"""Node budget: satdt's ``max_nodes`` beside pystreed's ``max_num_nodes`` (the error objective).

Both minimise the misclassified rows over the trees of depth <= d within a node budget, in
two vocabularies:

- ``satdt``: ``OptimalTreeClassifier(objective="error", max_depth=d, max_nodes=2n + 1)``
  (``method="auto"``, which runs ``budget``): satdt counts every node, branching nodes and
  leaves, and a binary tree with n branching nodes has 2n + 1 nodes.
- ``pystreed``: ``STreeDClassifier(max_depth=d, max_num_nodes=n)`` (task ``"accuracy"``):
  STreeD counts branching nodes only.

So each row of the table gives the budget ``n`` in branching nodes and runs satdt with
``max_nodes = 2n + 1``. Both get the same binary matrix (the CP4IM files are 0/1). The errors
are recomputed from each returned tree (predictions on the training rows), never taken from
the method; ``same`` says whether they are equal, and both trees' sizes are checked against
the budget (satdt's ``n_nodes <= 2n + 1``; pystreed's is not exposed and is left unchecked).

Times are wall-clock seconds of ``fit`` in this process, satdt after ``satdt.search.registry.warmup``
(its kernels compiled or loaded beforehand) and one untimed fit of each on a small random
table (first calls paid), both under ``--cap`` seconds; the median of
``--repeats`` fits when the first is under ``--short`` seconds. ``ratio`` is satdt / pystreed
(below 1: satdt faster). The target: the same optima everywhere, satdt no slower on at least
two thirds of the instances.

    python benchmarks/budget.py                                  # the default grid
    python benchmarks/budget.py --files anneal --depths 4 --nodes 5 --repeats 1

Run from the repository root; the data is read from ``../shared/data``. Never collected by
pytest (no ``test_`` prefix); results never become assertions.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CP4IM = ROOT.parent / "shared" / "data" / "cp4im"
FILES = "anneal,breast-wisconsin,heart-cleveland,primary-tumor,soybean,tic-tac-toe,zoo-1"


def _load(name: str) -> tuple[np.ndarray, np.ndarray]:
    table = np.loadtxt(CP4IM / f"{name}.txt", dtype=np.uint8, ndmin=2)
    return np.ascontiguousarray(table[:, 1:]), table[:, 0].astype(np.int64)


def _fit_satdt(B, y, depth: int, branching: int, cap: float) -> tuple[int, bool, int]:
    from satdt import OptimalTreeClassifier

    model = OptimalTreeClassifier(
        objective="error", max_depth=depth, max_nodes=2 * branching + 1, time_limit=cap
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a capped fit warns; the table says "not proven"
        model.fit(B, y)
    if model.tree_.n_nodes > 2 * branching + 1:
        raise RuntimeError(f"satdt's tree has {model.tree_.n_nodes} nodes, over the budget")
    errors = int((model.predict(B) != y).sum())
    return errors, model.result_.proven_optimal, model.tree_.n_nodes


def _fit_pystreed(B, y, depth: int, branching: int, cap: float) -> tuple[int, bool, int]:
    from pystreed import STreeDClassifier

    model = STreeDClassifier(max_depth=depth, max_num_nodes=branching, time_limit=cap)
    model.fit(B, y)
    errors = int((model.predict(B) != y).sum())
    return errors, True, -1


def _timed(fit, B, y, depth: int, branching: int, cap: float, repeats: int, short: float):
    """(errors, proven, nodes, median seconds) of ``repeats`` fits (one if the first is long)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        errors, proven, nodes = fit(B, y, depth, branching, cap)
        times.append(time.perf_counter() - started)
        if times[0] >= short:
            break
    return errors, proven and times[0] < cap, nodes, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default=FILES, help="comma-separated cp4im names")
    parser.add_argument("--depths", default="3,4,5")
    parser.add_argument("--nodes", default="3,5,7", help="budgets in branching nodes (STreeD's)")
    parser.add_argument("--cap", type=float, default=60.0, help="seconds per fit")
    parser.add_argument("--repeats", type=int, default=3, help="fits of an instance under --short")
    parser.add_argument("--short", type=float, default=2.0)
    args = parser.parse_args()

    import satdt.search.registry

    satdt.search.registry.warmup(["budget"])
    # one untimed fit of each on a small random table: first calls (imports, dispatch) paid
    rng = np.random.default_rng(0)
    B0, y0 = rng.integers(0, 2, (200, 12), dtype=np.uint8), rng.integers(0, 2, 200)
    for fit in (_fit_satdt, _fit_pystreed):
        fit(B0, y0, 4, 7, args.cap)
    names = [name for name in args.files.split(",") if (CP4IM / f"{name}.txt").exists()]
    missing = set(args.files.split(",")) - set(names)
    if missing:
        print(f"skipped (not in {CP4IM.name}): {', '.join(sorted(missing))}")
    print(
        "| file | rows × features | depth | n (branching) | satdt max_nodes | satdt errors "
        "| pystreed errors | same | satdt nodes | satdt s | pystreed s | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    same = faster = count = 0
    for name in names:
        B, y = _load(name)
        for depth in map(int, args.depths.split(",")):
            for n in map(int, args.nodes.split(",")):
                common = (B, y, depth, n, args.cap, args.repeats, args.short)
                s_err, s_proven, s_nodes, s_time = _timed(_fit_satdt, *common)
                p_err, p_proven, _, p_time = _timed(_fit_pystreed, *common)
                both = s_proven and p_proven
                agree = s_err == p_err if both else None
                ratio = s_time / max(p_time, 1e-9)
                count += 1
                same += bool(agree)
                faster += ratio <= 1.0
                flag = {True: "yes", False: "**no**", None: "not proven"}[agree]
                print(
                    f"| {name} | {B.shape[0]} × {B.shape[1]} | {depth} | {n} | {2 * n + 1} | "
                    f"{s_err} | {p_err} | {flag} | {s_nodes} | {s_time:.3f} | {p_time:.3f} | "
                    f"{ratio:.2f} |",
                    flush=True,
                )
    print(
        f"\nsame optimum on {same}/{count} instances; satdt no slower on {faster}/{count} "
        f"(target: at least {-(-2 * count // 3)})"
    )


if __name__ == "__main__":
    main()
