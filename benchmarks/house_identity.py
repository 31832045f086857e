"""Same results before and after a change of the house (modules moved, imports rewritten).

Fits a fixed list of cases and writes, per case, every model (a tree's arrays, a diagram's
structure, as their ``to_dict``), the objective value, the bound, the proof and the effort
counters that are exact (nodes, depth-two solves, cuts, cache hits, SAT calls, clauses: the same
search on the same data does the same work once the kernels are compiled; times are left out).
Trees: minimum depth and size by SAT on shipped files, minimum error by DL8.5, Blossom, the
portfolio and ConTree at small depths, with and without a leaf penalty; diagrams: one per route
(the MILP with HiGHS when installed, MaxSAT, the tree DP, SAT), and the best tree of a skeleton
(``fit_tree_diagram``). Cases on the shared benchmark data (``../shared/data``, or ``--data``)
are skipped when it is not there. Run it on the code before the change and after, and compare::

    python benchmarks/house_identity.py --out before.json
    ... the change ...
    python benchmarks/house_identity.py --out after.json --compare before.json

``--compare`` prints the cases whose results differ and exits with status 1 if any does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "data"
SHARED = ROOT.parent / "shared" / "data"

# Counters that measure work and are exact for a search that is not cut by the clock.
EFFORT = (
    "expansions",
    "bottom_solves",
    "backtracks",
    "cuts",
    "similarity_cuts",
    "complete_trees",
    "nodes",
    "cache_hits",
    "cache_entries",
    "restarts",
    "sat_calls",
    "examples_used",
    "examples",
    "mip_nodes",
    "tree_depth",
    "tree_objective",
    "heuristic_objective",
    "status",
    "solver",
    "rows",
    "distinct_rows",
    "features",
    "features_used",
    "binary_features",
    "irreducible_error",
)

# (name, method, depth, leaf penalty, data): minimum error trees
ERROR_TREES = [
    ("iris", "dl85", 3, 0.0, "examples"),
    ("iris", "blossom", 3, 0.0, "examples"),
    ("iris", "portfolio", 2, 0.0, "examples"),
    ("iris", "contree", 3, 0.0, "examples"),
    ("iris", "contree", 3, 0.01, "examples"),
    ("monk2", "dl85", 3, 0.01, "examples"),
    ("monk2", "blossom", 3, 0.01, "examples"),
    ("monk2", "auto", 2, 0.0, "examples"),
    ("heart-cleveland", "dl85", 3, 0.0, "cp4im"),
    ("heart-cleveland", "blossom", 3, 0.01, "cp4im"),
    ("anneal", "cadl85", 3, 0.0, "cp4im"),
    ("bank-300", "contree", 3, 0.0, "continuous"),
    ("raisin-300", "contree", 2, 0.01, "continuous"),
]
# (name, objective, method, data): consistent trees
CONSISTENT_TREES = [
    ("mouse", "depth", "sat", "examples"),
    ("iris", "depth", "sat", "examples"),
    ("monk1", "depth", "sat", "examples"),
    ("mouse", "size", "sat", "examples"),
    ("iris", "depth", "auto", "examples"),
    ("wine", "depth", "sat", "inferdt"),
]
# (name, route, objective, widths, alpha, data): diagrams
DIAGRAMS = [
    ("mouse", "sat", "size", (1, 2, 4, 4), 0.01, "examples"),
    ("mouse", "maxsat", "error", (1, 2, 2), 0.01, "examples"),
    ("monk1", "maxsat", "error", (1, 2, 2), 0.01, "examples"),
    ("iris", "tree", "error", (1, 2, 4), 0.0, "examples"),
    ("monk1", "tree", "error", (1, 2), 0.0, "examples"),
    ("mouse", "milp", "error", (1, 2), 0.01, "examples"),
    ("iris", "auto", "error", (1, 2, 2), 0.01, "examples"),
]
# (name, depth, data): the best tree of a skeleton, as a diagram
TREE_DIAGRAMS = [("iris", 2, "examples"), ("monk1", 3, "examples"), ("mouse", 2, "examples")]


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not np.isfinite(value):
        return repr(value)
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    return value


def _effort(stats: Any, events: list[Any]) -> dict[str, Any]:
    found = {k: _jsonable(v) for k, v in stats.as_dict().items() if k in EFFORT}
    calls = [e for e in events if getattr(e, "kind", "") == "sat_call"]
    if calls:
        found["calls"] = [[c.depth, c.status, c.n_vars, c.n_clauses, c.n_examples] for c in calls]
    return dict(sorted(found.items()))


def _result(result: Any, events: list[Any], method: str) -> dict[str, Any]:
    return {
        "method": method,
        "model": result.model.to_dict(),
        "objective": _jsonable(float(result.objective_value)),
        "lower_bound": _jsonable(float(result.lower_bound)),
        "proven": bool(result.proven_optimal),
        "effort": _effort(result.stats, events),
    }


class Data:
    """Where the files are: the shipped examples and the shared benchmark data."""

    def __init__(self, shared: Path) -> None:
        self.shared = shared

    def table(self, name: str, where: str) -> tuple[np.ndarray, np.ndarray] | Any | None:
        from satdt import read_csv

        if where == "examples":
            return read_csv(EXAMPLES / f"{name}.csv")
        if where == "inferdt":
            path = self.shared / "inferdt" / f"{name}.csv"
            return read_csv(path) if path.exists() else None
        if where == "cp4im":
            path = self.shared / "cp4im" / f"{name}.txt"
            if not path.exists():
                return None
            table = np.loadtxt(path, dtype=np.uint8, ndmin=2)
            return np.ascontiguousarray(table[:, 1:]), table[:, 0].astype(np.int64)
        base, rows = name.rsplit("-", 1)
        path = self.shared / "continuous" / f"{base}.txt"
        if not path.exists():
            return None
        table = np.loadtxt(path, ndmin=2)
        rng = np.random.default_rng(0)
        keep = np.sort(rng.choice(len(table), size=min(int(rows), len(table)), replace=False))
        return table[keep, 1:], table[keep, 0].astype(np.int64)


def _fit(estimator: Any, table: Any) -> list[Any]:
    events: list[Any] = []
    if isinstance(table, tuple):
        estimator.fit(*table)
    else:
        estimator.fit_dataset(table, on_event=events.append)
    return events


def run_cases(data: Data) -> dict[str, Any]:
    from satdt import OptimalDiagramClassifier, OptimalTreeClassifier

    out: dict[str, Any] = {}
    for name, objective, method, where in CONSISTENT_TREES:
        table = data.table(name, where)
        if table is None:
            continue
        model = OptimalTreeClassifier(objective=objective, method=method)
        events = _fit(model, table)
        out[f"tree|{objective}|{method}|{name}"] = _result(model.result_, events, model.method_)
    for name, method, depth, penalty, where in ERROR_TREES:
        table = data.table(name, where)
        if table is None:
            continue
        model = OptimalTreeClassifier(
            objective="error", max_depth=depth, method=method, leaf_penalty=penalty
        )
        events = _fit(model, table)
        key = f"tree|error|{method}|{name}|d{depth}|p{penalty:g}"
        out[key] = _result(model.result_, events, model.method_)
    for name, route, objective, widths, alpha, where in DIAGRAMS:
        table = data.table(name, where)
        if table is None:
            continue
        params: dict[str, Any] = {"milp_solver": "highs"} if route == "milp" else {}
        if route == "milp":
            try:
                import highspy  # noqa: F401
            except ImportError:
                continue
        model = OptimalDiagramClassifier(
            objective=objective, method=route, widths=widths, alpha=alpha, **params
        )
        events = _fit(model, table)
        key = f"diagram|{objective}|{route}|{name}|{'-'.join(map(str, widths))}|a{alpha:g}"
        out[key] = _result(model.result_, events, model.method_)
    for name, depth, where in TREE_DIAGRAMS:
        table = data.table(name, where)
        if table is None:
            continue
        classes, y = np.unique(np.asarray(table.y), return_inverse=True)
        X = np.asarray(table.X, dtype=np.float64)
        out[f"tree-diagram|{name}|d{depth}"] = _tree_diagram(X, y, len(classes), depth)
    return out


def _tree_diagram(X: np.ndarray, y: np.ndarray, n_classes: int, depth: int) -> Any:
    from satdt.search.diagrams import fit_tree_diagram

    found = fit_tree_diagram(X, y, None, n_classes, depth, 60.0)
    if found is None:
        return None
    diagram, result = found
    return {
        "model": diagram.to_dict(),
        "proven": bool(result.proven_optimal),
        "lower_bound": _jsonable(float(result.lower_bound)),
        "objective": _jsonable(float(result.objective_value)),
    }


def _differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    lines = [f"only before: {k}" for k in sorted(set(before) - set(after))]
    lines += [f"only after: {k}" for k in sorted(set(after) - set(before))]
    for key in sorted(set(before) & set(after)):
        if before[key] != after[key]:
            fields = (
                sorted(f for f in before[key] if before[key][f] != after[key].get(f))
                if isinstance(before[key], dict) and isinstance(after[key], dict)
                else ["the whole case"]
            )
            lines.append(f"differs: {key} ({', '.join(fields)})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    parser.add_argument("--compare", type=Path, help="a JSON file written before the change")
    parser.add_argument("--data", type=Path, default=SHARED, help="the shared benchmark data")
    args = parser.parse_args(argv)
    import satdt

    satdt.warmup()  # every kernel compiled first: the searches run as they run warm
    results = run_cases(Data(args.data))
    text = json.dumps(results, indent=1, sort_keys=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    print(f"{len(results)} cases written to {args.out}")
    if args.compare is None:
        return 0
    before = json.loads(args.compare.read_text(encoding="utf-8"))
    lines = _differences(before, json.loads(text))
    print("\n".join(lines) if lines else f"identical: {len(results)} cases")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
