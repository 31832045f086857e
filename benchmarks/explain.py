"""Formal explanations of optimal trees: satdt's beside PyXAI's, and how redundant paths are.

For each data file and depth, ``OptimalTreeClassifier(objective="error", max_depth=d,
method="portfolio", time_limit=...)`` is fitted on the whole file; the same tree is rebuilt in
PyXAI (Audemard et al.) from its nodes, and a sample of rows (seed 0, the same rows at every
depth) is explained by both libraries:

* satdt: ``Explainer(tree).explain(x, enumerate_axps=True, limit=...)`` (the explainer built once per tree, its time shared among the rows), every AXp and
  every CXp, as sets of columns;
* PyXAI: ``Explaining.initialize(tree, instance)``, then ``sufficient_reason(n=ALL)`` (every
  sufficient reason: the prime implicants of the tree's CNF that the instance satisfies) and
  ``contrastive_reason(n=ALL)``; ``minimal_sufficient_reason()`` separately (timed apart).

How the trees are imported: satdt's node ``x[j] <= t ? left : right`` becomes
``Builder.DecisionNode(j + 1, operator=Builder.GT, threshold=t, left=..., right=...)`` (PyXAI's
features count from 1 and its right child is the condition's "yes"), leaves hold the class
index, and ``Builder.DecisionTree(n_columns, root, n_classes=k)`` ties them together.

Comparing what is comparable. PyXAI's reasons are sets of *binary conditions* (one Boolean
variable per distinct test ``x[j] > t`` of the tree), satdt's are sets of *columns* (a numeric
column is one feature over the reals: fixing it fixes every test on it). Where a column is
tested at one threshold only (every cp4im file: 0/1 columns, threshold 0.5) the two notions
coincide. Where a column is split at several thresholds they do not: a row with ``x = 4`` and
tests ``x > 3`` and ``x > 5`` has two literals on ``x``, PyXAI may return the reasons
``{x > 3, y > 1}`` and ``{x <= 5, y > 1}`` that are one column set, or a prime implicant over
literals whose column set is not minimal among column sets. The column-level notions follow
from the literal-level ones: a set of columns F forces the prediction exactly when the literals
of the row on F do, which holds exactly when F contains the columns of some prime implicant;
so the column AXps are the inclusion-minimal column sets of PyXAI's sufficient reasons, and
likewise the column CXps are the inclusion-minimal column sets of its contrastive reasons
(each contrastive reason is the set of the row's literals that one other-class path
contradicts). The benchmark compares satdt's sets with these projections, and counts how many
literal-level reasons PyXAI returned beside the column sets they collapse to.

PyXAI's *theory* (``set_features_type`` / ``activate_theory``) adds, for a numeric feature, the
clauses ``x > t2 -> x > t1`` for its ordered thresholds ``t1 < t2`` (and one-hot constraints for
categorical ones): without it the literals of one column are independent variables, so a path
whose tests on a column contradict each other (a *dead* path, which no value follows) counts
as open. For decision trees PyXAI applies the theory to ``is_implicant`` and to filter
contrastive reasons, not to ``sufficient_reason``. Once whole columns are fixed, the theory only
matters through dead paths, so the comparison runs without it and the tables count the dead
paths of each tree (satdt skips them: it explains over the values the columns can take).

Redundancy (Izza, Ignatiev & Marques-Silva, "On Explaining Decision Trees", JAIR 2022, Table
of path explanation redundancy): per tree, over the sample rows, ``satdt.explanations.explainer.
redundancy`` (the share of rows whose path tests columns the smallest AXp among the path's own
columns does not need, and
the mean share of such columns), and the paper's notion from the enumerated AXps: a row's path
is redundant when some AXp is a strict subset of the columns it tests, and the share of
redundant columns is ``1 - |A| / |path|`` for the smallest such AXp ``A`` (``m``, ``M``, ``avg``:
its minimum, maximum and mean over the redundant rows, as in the paper). The paper counts paths
of the tree and literals; this counts sample rows and columns.

Timing, each library in its own worker process (the same machine, one after the other): per
row, satdt's ``satdt.explain`` call, everything it does (the paths, one AXp, the smallest, every
CXp, every AXp and the check of each against the model); PyXAI's ``initialize`` with the row
plus both enumerations; the median over the rows of each tree, in milliseconds. Fitting is not
timed here.

Commands (from the repository root; PyXAI lives in its own virtual environment, which sees the
system packages)::

    python -m venv --system-site-packages VENV && VENV/bin/pip install pyxai
    nice -n 5 VENV/bin/python benchmarks/explain.py            # full: 8 files, depths 3-8, 50 rows
    nice -n 5 VENV/bin/python benchmarks/explain.py --quick    # 2 files, depths 3-5, 20 rows

Measured on 2 cores: the full run 7 minutes (6 of them fitting), ``--quick`` under 20 s.
``--pyxai-python`` names another interpreter for the PyXAI worker (default: this one). Never
collected by pytest.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CP4IM = ROOT.parent / "shared" / "data" / "cp4im"
FILES = (
    "anneal",
    "australian-credit",
    "diabetes",
    "hypothyroid",
    "vehicle",
    "iris",
    "wine",
    "breast_cancer",
)
SKLEARN = ("iris", "wine", "breast_cancer")
QUICK_FILES = ("anneal", "iris")
SEED = 0
LIMIT = 10**6  # AXps per row: far above any tree here, so every enumeration ends


# ---------------------------------------------------------------------- data and trees
def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A cp4im file (label first, 0/1 columns) or one of scikit-learn's bundled tables."""
    if name in SKLEARN:
        from sklearn import datasets

        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
        return X.astype(np.float64), y.astype(np.int64)
    table = np.loadtxt(CP4IM / f"{name}.txt", dtype=np.float64, ndmin=2)
    return np.ascontiguousarray(table[:, 1:]), table[:, 0].astype(np.int64)


def tree_facts(tree) -> dict:
    """Nodes, leaves, columns split at several thresholds, and dead leaves (whose path's
    tests on some column no value passes)."""
    cuts: dict[int, set[float]] = {}
    dead = 0
    stack = [(0, {})]
    while stack:
        node, box = stack.pop()
        column = int(tree.feature[node])
        if column < 0:
            dead += any(low >= high for low, high in box.values())
            continue
        t = float(tree.threshold[node])
        cuts.setdefault(column, set()).add(t)
        low, high = box.get(column, (-np.inf, np.inf))
        stack.append((int(tree.left[node]), {**box, column: (low, min(high, t))}))
        stack.append((int(tree.right[node]), {**box, column: (max(low, t), high)}))
    return {
        "nodes": int(tree.n_nodes),
        "leaves": int(tree.n_leaves),
        "multi": sum(len(c) > 1 for c in cuts.values()),
        "dead": int(dead),
    }


def fit_trees(files, depths, time_limit: float, n_rows: int) -> list[dict]:
    """One job per (file, depth): the tree as a dictionary, the sample rows, their facts."""
    import satdt

    jobs = []
    for name in files:
        X, y = load(name)
        rows = np.sort(np.random.default_rng(SEED).choice(len(y), min(n_rows, len(y)), False))
        for depth in depths:
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # not proven within the time limit: said below
                model = satdt.OptimalTreeClassifier(
                    objective="error", max_depth=depth, method="portfolio", time_limit=time_limit
                ).fit(X, y)
            tree = model.tree_
            accuracy = float(np.mean(tree.predict(X) == y))
            proven = bool(getattr(model.result_, "proven_optimal", False))
            seconds = time.perf_counter() - started
            print(
                f"  fitted {name} depth {depth}: {tree.n_leaves} leaves, "
                f"{'optimal' if proven else 'not proven'}, {seconds:.1f} s",
                file=sys.stderr,
                flush=True,
            )
            jobs.append(
                {
                    "file": name,
                    "depth": depth,
                    "tree": tree.to_dict(),
                    "X": X[rows].tolist(),
                    "accuracy": accuracy,
                    "proven": proven,
                    **tree_facts(tree),
                }
            )
    return jobs


# ---------------------------------------------------------------------- workers
def satdt_worker(jobs: list[dict]) -> list[dict]:
    import satdt
    from satdt.explanations.explainer import Explainer, redundancy

    results = []
    for job in jobs:
        tree = satdt.Tree.from_dict(job["tree"])
        X = np.asarray(job["X"], dtype=np.float64)
        names = tree.feature_names or [f"x[{j}]" for j in range(X.shape[1])]
        index = {name: j for j, name in enumerate(names)}

        def columns(conditions, index=index):
            return sorted(index[c.column] for c in conditions)

        satdt.explain(tree, X, rows=[0], enumerate_axps=True, limit=LIMIT)  # warm-up
        # the explainer (the model's paths and node tables) is built once per tree, as
        # PyXAI's tree is; its time is shared among the rows
        started = time.perf_counter()
        explainer = Explainer(tree)
        built = (time.perf_counter() - started) / len(X)
        rows, explanations = [], []
        for i in range(len(X)):
            started = time.perf_counter()
            e = explainer.explain(X[i], i, enumerate_axps=True, limit=LIMIT)
            seconds = time.perf_counter() - started + built
            explanations.append(e)
            rows.append(
                {
                    "seconds": seconds,
                    "prediction": int(np.flatnonzero(tree.classes == e.prediction)[0]),
                    "path": columns(e.path),
                    "axp": columns(e.axp),
                    "smallest": columns(e.smallest_axp),
                    "path_axp": columns(e.path_axp),
                    "axps": [columns(a) for a in e.axps],
                    "cxps": [sorted(index[c] for c in x.columns) for x in e.cxps],
                    "complete": e.complete,
                }
            )
        results.append({"rows": rows, "redundancy": redundancy(explanations)})
    return results


def pyxai_tree(tree: dict, n_columns: int):
    """The satdt tree (as a dictionary) rebuilt from its nodes with PyXAI's Builder."""
    from pyxai import Builder

    feature, threshold = tree["feature"], tree["threshold"]
    left, right, value = tree["left"], tree["right"], tree["value"]

    def build(node: int):
        if feature[node] < 0:
            return int(value[node])
        return Builder.DecisionNode(
            feature[node] + 1,
            operator=Builder.GT,
            threshold=float(threshold[node]),
            left=build(left[node]),
            right=build(right[node]),
        )

    root = build(0)
    if not isinstance(root, Builder.DecisionNode):
        root = Builder.LeafNode(root)
    names = [f"x{j}" for j in range(n_columns)]
    return Builder.DecisionTree(
        n_columns, root, n_classes=len(tree["classes"]), feature_names=names
    )


def _reasons(found) -> list[list[int]]:
    """PyXAI's answer as a list of reasons (it returns one reason bare when there is one)."""
    if not found:
        return []
    if isinstance(found[0], int | np.integer):
        return [list(found)]
    return [list(r) for r in found]


def pyxai_worker(jobs: list[dict]) -> list[dict]:
    sys.argv[1:] = []  # PyXAI reads the command line when imported
    from pyxai import Explaining, Tools

    Tools.set_verbose(0)
    results = []
    for job in jobs:
        X = np.asarray(job["X"], dtype=np.float64)
        tree = pyxai_tree(job["tree"], X.shape[1])
        binaries = tree.map_id_binaries_to_features  # variable -> (feature from 1, op, t)

        def columns(reason, binaries=binaries):
            return sorted({binaries[abs(lit)][0] - 1 for lit in reason})

        explainer = Explaining.initialize(tree, instance=tuple(X[0]))  # warm-up
        explainer.sufficient_reason(n=Explaining.ALL)
        rows = []
        for x in X:
            started = time.perf_counter()
            explainer = Explaining.initialize(tree, instance=tuple(x))
            sufficient = _reasons(explainer.sufficient_reason(n=Explaining.ALL))
            contrastive = _reasons(explainer.contrastive_reason(n=Explaining.ALL))
            seconds = time.perf_counter() - started
            started = time.perf_counter()
            minimal = _reasons(explainer.minimal_sufficient_reason())
            minimal_seconds = time.perf_counter() - started
            rows.append(
                {
                    "seconds": seconds,
                    "minimal_seconds": minimal_seconds,
                    "prediction": int(explainer.target_prediction),
                    "sufficient": [columns(r) for r in sufficient],
                    "contrastive": [columns(r) for r in contrastive],
                    "minimal": columns(minimal[0]) if minimal else [],
                }
            )
        results.append({"rows": rows})
    return results


def run_worker(kind: str, python: str, jobs_path: Path, folder: Path) -> list[dict]:
    out = folder / f"{kind}.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"
    subprocess.run(  # the workers' own chatter (PyXAI's warnings) goes to stderr
        [python, str(Path(__file__).resolve()), "--worker", kind, str(jobs_path), str(out)],
        check=True,
        env=env,
        stdout=sys.stderr,
        cwd=folder,  # PyXAI's MaxSAT solver leaves its scratch files (tmp/) in the folder
    )
    return json.loads(out.read_text())


# ---------------------------------------------------------------------- comparison
def minimal_sets(sets) -> set[frozenset[int]]:
    """The inclusion-minimal sets among ``sets``."""
    unique = sorted({frozenset(s) for s in sets}, key=len)
    kept: list[frozenset[int]] = []
    for s in unique:
        if not any(k <= s for k in kept):
            kept.append(s)
    return set(kept)


def compare(job: dict, ours: dict, theirs: dict) -> dict:
    counts = dict.fromkeys(
        (
            "rows",
            "prediction_differs",
            "axps_same",
            "axps_differ",
            "cxps_same",
            "cxps_differ",
            "smallest_same",
            "minimal_same",
            "axps",
            "pyxai_sufficient",
            "cxps",
            "pyxai_contrastive",
            "incomplete",
        ),
        0,
    )
    differences = []
    for i, (a, b) in enumerate(zip(ours["rows"], theirs["rows"], strict=True)):
        counts["rows"] += 1
        counts["incomplete"] += not a["complete"]
        if a["prediction"] != b["prediction"]:
            counts["prediction_differs"] += 1
            differences.append((i, "prediction", a["prediction"], b["prediction"]))
            continue
        our_axps = {frozenset(s) for s in a["axps"]}
        their_axps = minimal_sets(b["sufficient"])
        our_cxps = {frozenset(s) for s in a["cxps"]}
        their_cxps = minimal_sets(b["contrastive"])
        counts["axps"] += len(our_axps)
        counts["pyxai_sufficient"] += len(b["sufficient"])
        counts["cxps"] += len(our_cxps)
        counts["pyxai_contrastive"] += len(b["contrastive"])
        if our_axps == their_axps:
            counts["axps_same"] += 1
        else:
            counts["axps_differ"] += 1
            differences.append((i, "AXps", sorted(map(sorted, our_axps)), their_axps))
        if our_cxps == their_cxps:
            counts["cxps_same"] += 1
        else:
            counts["cxps_differ"] += 1
            differences.append((i, "CXps", sorted(map(sorted, our_cxps)), their_cxps))
        fewest = min((len(s) for s in their_axps), default=0)
        counts["smallest_same"] += len(a["smallest"]) == fewest
        counts["minimal_same"] += len(b["minimal"]) == len(a["smallest"])
    counts["satdt_ms"] = 1000 * statistics.median(r["seconds"] for r in ours["rows"])
    counts["pyxai_ms"] = 1000 * statistics.median(r["seconds"] for r in theirs["rows"])
    counts["pyxai_min_ms"] = 1000 * statistics.median(r["minimal_seconds"] for r in theirs["rows"])
    counts["differences"] = differences[:5]
    return counts


def paper_redundancy(rows: list[dict]) -> dict:
    """Izza et al.'s path redundancy from the enumerated AXps: a path is redundant when some
    AXp is a strict subset of its columns; its redundant share uses the smallest such AXp."""
    shares = []
    for row in rows:
        path = set(row["path"])
        inside = [len(a) for a in row["axps"] if set(a) < path]
        shares.append(1 - min(inside) / len(path) if inside and path else 0.0)
    redundant = [s for s in shares if s > 0]
    return {
        "redundant_rows": len(redundant) / len(shares),
        "m": min(redundant, default=0.0),
        "M": max(redundant, default=0.0),
        "avg": statistics.mean(redundant) if redundant else 0.0,
        "mean_all": statistics.mean(shares),
        "flags": [s > 0 for s in shares],
    }


# ---------------------------------------------------------------------- printing
def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for package in ("satdt", "pyxai", "python-sat"):
        try:
            found.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            found.append(f"{package} (not installed as a package)")
    return ", ".join(found)


def table(header: list[str], rows: list[list]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")
    print()


def pct(x: float) -> str:
    return f"{100 * x:.0f}"


def report(jobs, ours, theirs) -> None:
    print("## satdt's explanations beside PyXAI's (columns; PyXAI's reasons projected)\n")
    header = [
        "file",
        "depth",
        "leaves",
        "multi-cut columns",
        "dead paths",
        "rows",
        "AXps same / differ",
        "CXps same / differ",
        "AXps (satdt / PyXAI literal sets)",
        "CXps (satdt / PyXAI literal sets)",
        "smallest AXp same size",
        "PyXAI minimal = smallest",
        "satdt ms/row",
        "PyXAI ms/row",
        "PyXAI minimal ms",
    ]
    rows, notes, totals = [], [], dict.fromkeys(("rows", "axps_same", "cxps_same"), 0)
    for job, a, b in zip(jobs, ours, theirs, strict=True):
        c = compare(job, a, b)
        for key in totals:
            totals[key] += c[key]
        rows.append(
            [
                job["file"],
                job["depth"],
                job["leaves"],
                job["multi"],
                job["dead"],
                c["rows"],
                f"{c['axps_same']} / {c['axps_differ']}",
                f"{c['cxps_same']} / {c['cxps_differ']}",
                f"{c['axps']} / {c['pyxai_sufficient']}",
                f"{c['cxps']} / {c['pyxai_contrastive']}",
                c["smallest_same"],
                c["minimal_same"],
                f"{c['satdt_ms']:.1f}",
                f"{c['pyxai_ms']:.1f}",
                f"{c['pyxai_min_ms']:.1f}",
            ]
        )
        if c["prediction_differs"] or c["incomplete"]:
            notes.append(
                f"{job['file']} depth {job['depth']}: {c['prediction_differs']} predictions "
                f"differ, {c['incomplete']} enumerations incomplete"
            )
        for i, what, mine, other in c["differences"]:
            other = sorted(map(sorted, other)) if isinstance(other, set) else other
            notes.append(
                f"{job['file']} d{job['depth']} row {i} {what}: satdt {mine} PyXAI {other}"
            )
    table(header, rows)
    print(
        f"Rows: {totals['rows']}; AXp sets identical on {totals['axps_same']}, CXp sets on "
        f"{totals['cxps_same']}.\n"
    )
    for note in notes:
        print(f"- {note}")
    if notes:
        print()

    print("## Path redundancy (Izza et al., JAIR 2022), over the sample rows\n")
    header = [
        "file",
        "depth",
        "nodes",
        "%A (train)",
        "optimal",
        "rows",
        "%R satdt",
        "mean % satdt",
        "%R paper",
        "m %",
        "M %",
        "avg %",
        "rows where they differ",
        "path columns",
        "smallest AXp",
    ]
    rows = []
    for job, a in zip(jobs, ours, strict=True):
        r, p = a["redundancy"], paper_redundancy(a["rows"])
        ours_flags = [
            len(set(row["path"]) - set(row["path_axp"])) > 0 for row in a["rows"]
        ]  # satdt's: the path tests a column its smallest AXp within the path leaves out
        differ = sum(x != y for x, y in zip(ours_flags, p["flags"], strict=True))
        rows.append(
            [
                job["file"],
                job["depth"],
                job["nodes"],
                pct(job["accuracy"]),
                "yes" if job["proven"] else "no",
                r["rows"],
                pct(r["redundant_rows"]),
                pct(r["mean_redundancy"]),
                pct(p["redundant_rows"]),
                pct(p["m"]),
                pct(p["M"]),
                pct(p["avg"]),
                differ,
                f"{r['mean_path_columns']:.2f}",
                f"{r['mean_smallest_axp']:.2f}",
            ]
        )
    table(header, rows)


# ---------------------------------------------------------------------- entry point
def depths_of(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 files, depths 3-5, 20 rows")
    parser.add_argument("--files", help="comma-separated files (default: all eight)")
    parser.add_argument("--depths", help="a depth or a range (default 3-8)")
    parser.add_argument("--rows", type=int, help="sample rows per tree (default 50)")
    parser.add_argument("--time-limit", type=float, help="seconds per fit (default 30)")
    parser.add_argument("--pyxai-python", default=sys.executable, help="the PyXAI worker's Python")
    parser.add_argument(
        "--worker", nargs=3, metavar=("KIND", "JOBS", "OUT"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.worker:
        kind, jobs_path, out = args.worker
        jobs = json.loads(Path(jobs_path).read_text())
        work = satdt_worker if kind == "satdt" else pyxai_worker
        Path(out).write_text(json.dumps(work(jobs)))
        return

    files = args.files.split(",") if args.files else list(QUICK_FILES if args.quick else FILES)
    depths = depths_of(args.depths or ("3-5" if args.quick else "3-8"))
    n_rows = args.rows or (20 if args.quick else 50)
    time_limit = args.time_limit or (10.0 if args.quick else 30.0)

    command = shlex.join(["python", "benchmarks/explain.py", *sys.argv[1:]])
    print(f"Command: `{command}`  ")
    print(f"Date: {datetime.date.today().isoformat()}  ")
    print(f"Machine: {machine()}  ")
    print(f"Versions: {versions()}  ")
    print(
        f"Trees: objective='error', method='portfolio', time_limit={time_limit:g} s, depths "
        f"{depths[0]}-{depths[-1]}; {n_rows} sample rows per file (seed {SEED}).\n"
    )
    started = time.perf_counter()
    jobs = fit_trees(files, depths, time_limit, n_rows)
    fitted = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        jobs_path = Path(folder) / "jobs.json"
        jobs_path.write_text(json.dumps(jobs))
        ours = run_worker("satdt", sys.executable, jobs_path, Path(folder))
        theirs = run_worker("pyxai", args.pyxai_python, jobs_path, Path(folder))
    report(jobs, ours, theirs)
    total = time.perf_counter() - started
    print(f"Wall time: {total:.0f} s ({fitted:.0f} s fitting).")


if __name__ == "__main__":
    main()
