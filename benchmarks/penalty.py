"""Leaf penalty: satdt beside pystreed's cost complexity and GOSDT; tuned accuracy; missing values.

Every method here minimises the same objective, written in one convention:

    (misclassified rows) / (rows) + λ · (leaves)      over trees of depth <= d.

- ``satdt``: ``OptimalTreeClassifier(objective="error", max_depth=d, leaf_penalty=λ)``
  (``method="auto"``), fitted in the worker after ``satdt.warmup()``.
- ``pystreed``: ``STreeDClassifier(optimization_task="cost-complex-accuracy",
  cost_complexity=λ)`` (its default task accepts ``cost_complexity`` and ignores it). STreeD
  charges λ per branching node; a binary tree has one leaf more than branching nodes, so its
  objective is ours minus λ, and the optimal trees are the same.
- ``gosdt``: ``GOSDTClassifier(regularization=λ, depth_budget=d, allow_small_reg=True)``: λ per
  leaf on the misclassified fraction, as here (without ``allow_small_reg`` it silently raises a
  λ under 1/rows to 1/rows). Its ``predict`` passes ``force_all_finite`` to scikit-learn's
  ``check_array``, which scikit-learn 1.8 removed, so its tree is evaluated through
  ``trees_[0].predict``.

The convention check, first: on random tiny binary data the brute-force optimum of the
objective above (every tree of depth <= d) against each method's returned tree.

Table 1, time to prove: each cp4im file at depths 4 and 5, λ in {0.001, 0.005, 0.01}. The time
is the median of ``--repeats`` fits when the first is under 5 s (else one fit), capped at
``--cap`` seconds (GOSDT: ``--gosdt-cap``, as it proves little at these depths). A value is
recomputed from the returned tree (errors by predicting the training rows, leaves counted),
never taken from the method, and ``agree`` says whether the values of the methods that proved
are equal. The targets: the same optimum as pystreed
wherever both prove; satdt proven no slower than pystreed on at least two thirds of the
instances.

Table 2, tuned accuracy: 5-fold stratified cross-validation (fixed seed) of a tree of depth
``--cv-depth`` whose λ is chosen by an inner ``GridSearchCV`` over ``--cv-grid``, beside the
depth-tuned optimal tree (``GridSearchCV`` over ``max_depth`` 1..5, no penalty) and CART (scikit-
learn, depth tuned the same way); per file the median test accuracy and the median number of
leaves over the outer folds. Inner fits are capped at ``--cv-limit`` seconds (a capped fit keeps
its best tree; the unproven column counts them). The target: the λ-tuned tree's median accuracy
at least the depth-tuned tree's, with fewer leaves.

Table 3, missing values: ``--missing-rate`` of the feature cells of three numeric files deleted
at random (fixed seed), then 5-fold accuracy at depth ``--missing-depth`` of satdt handling
them natively (``missing="split"``, the default), scikit-learn's ``DecisionTreeClassifier``
(native NaN support since 1.3), median imputation then satdt, and satdt on the complete file.

Table 4, sparse trees (``--parts sparse``): no depth limit at all, GOSDT's own objective.
satdt is ``OptimalTreeClassifier(objective="error", leaf_penalty=λ)`` with no ``max_depth``,
GOSDT is ``GOSDTClassifier(regularization=λ, depth_budget=None, allow_small_reg=True)``, at
each λ of ``--sparse-penalties`` on each cp4im file, one fit each (in its own worker) capped at
``--sparse-cap`` seconds, under ``--sparse-mem-gb`` of address space (GOSDT's queue takes GBs; the peak
resident memory of each worker is printed). imodels has no ``AutoOptTreeClassifier`` in its
released versions (3.0.4, its latest on PyPI, checked), so it has no column. The targets: the
same optimum wherever both prove; satdt proven no slower on at least 80 % of the instances
either proves; satdt's peak memory within 1 GB.

Every run happens in its own subprocess under an address-space limit; ``--jobs 2`` runs two at
once (one core each). A peer that does not import is skipped with a line saying why.

    python benchmarks/penalty.py --jobs 1                       # all four parts (about 1 h)
    python benchmarks/penalty.py --parts prove --files zoo-1,anneal --depths 4 --repeats 1
    python benchmarks/penalty.py --dry-run                      # the runs it would make
    python benchmarks/penalty.py --parts sparse --methods satdt,gosdt --files zoo-1,anneal

GOSDT comes with the ``bench-gosdt`` extra; the sparse part was measured with it installed in a
virtual environment of its own (``python -m venv --system-site-packages VENV && VENV/bin/pip
install -e ".[bench-gosdt]"``) and the script run by ``VENV/bin/python``.

Run from the repository root; the data is read from ``../shared/data``. Never collected by
pytest (no ``test_`` prefix); results never become assertions.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import resource
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

from harness import run_jobs, run_worker, worker_env

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CP4IM = DATA / "cp4im"
CONTINUOUS = DATA / "continuous"
PROVERS = ("satdt", "pystreed", "gosdt")
CV_KINDS = ("penalty", "depth", "cart")
MISSING_KINDS = ("satdt", "cart", "impute", "complete")
MISSING_FILES = "raisin,bank,segment"
SHORT = 5.0  # a first fit under this many seconds is repeated
TOL = 1e-9  # two recomputed objective values agree within this
FOLDS = 5
MAX_TUNED_DEPTH = 5


# ---------------------------------------------------------------------- data
def _load_cp4im(name: str):
    import numpy as np

    table = np.loadtxt(CP4IM / f"{name}.txt", dtype=np.uint8, ndmin=2)
    return np.ascontiguousarray(table[:, 1:]), table[:, 0].astype(np.int64)


def _load_continuous(name: str):
    import numpy as np

    table = np.loadtxt(CONTINUOUS / f"{name}.txt", ndmin=2)
    return np.ascontiguousarray(table[:, 1:]), table[:, 0].astype(np.int64)


def delete_cells(X, rate: float, seed: int):
    """A copy of ``X`` with ``round(rate * cells)`` cells, drawn without replacement, set to NaN."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = X.astype(np.float64)
    chosen = rng.choice(out.size, size=round(rate * out.size), replace=False)
    out.flat[chosen] = np.nan
    return out


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ---------------------------------------------------------------------- the three fits
def _gosdt_leaves(node: dict) -> int:
    return 1 if "prediction" in node else _gosdt_leaves(node["true"]) + _gosdt_leaves(node["false"])


def _fit_satdt(B, y, depth: int, penalty: float, cap: float):
    """(predictions on B, leaves, proven, reported value)."""
    from satdt import OptimalTreeClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = OptimalTreeClassifier(
            objective="error", max_depth=depth, leaf_penalty=penalty, time_limit=cap
        ).fit(B, y)
    result = model.result_
    return model.predict(B), model.tree_.n_leaves, result.proven_optimal, result.objective_value


def _fit_pystreed(B, y, depth: int, penalty: float, cap: float):
    from pystreed import STreeDClassifier

    model = STreeDClassifier(
        optimization_task="cost-complex-accuracy",
        cost_complexity=penalty,
        max_depth=depth,
        time_limit=cap,
    ).fit(B, y)
    return model.predict(B), model.get_n_leaves(), model.fit_result.is_optimal(), None


def _fit_gosdt(B, y, depth: int, penalty: float, cap: float):
    from gosdt import GOSDTClassifier

    model = GOSDTClassifier(
        regularization=penalty,
        depth_budget=depth,
        allow_small_reg=True,
        time_limit=max(1, math.ceil(cap)),
    )
    model.fit(B, y)
    result = model.get_result()
    proven = result["status"].name == "CONVERGED"
    leaves = _gosdt_leaves(json.loads(result["models_string"])[0])
    return model.trees_[0].predict(B), leaves, proven, float(result["upper_bound"])


FITS = {"satdt": _fit_satdt, "pystreed": _fit_pystreed, "gosdt": _fit_gosdt}


def _warm(method: str) -> None:
    """Load the library (and satdt's kernels) outside the timing."""
    import numpy as np

    if method == "satdt":
        import satdt

        satdt.warmup()
    B = np.array([[0, 1], [1, 0], [1, 1], [0, 0]], dtype=np.uint8)
    FITS[method](B, np.array([0, 1, 1, 0]), 1, 0.01, 10.0)


def value(errors: int, rows: int, penalty: float, leaves: int) -> float:
    """The objective in the one convention of this benchmark: error fraction + λ per leaf."""
    return errors / rows + penalty * leaves


# ---------------------------------------------------------------------- workers
def prove_worker(
    method: str, name: str, depth: int | None, penalties: list[float], cap: float, repeats: int
):
    B, y = _load_cp4im(name)
    _warm(method)
    out = {}
    for penalty in penalties:
        times, values = [], set()
        for i in range(repeats):
            tic = time.perf_counter()
            predicted, leaves, proven, reported = FITS[method](B, y, depth, penalty, cap)
            times.append(time.perf_counter() - tic)
            errors = int((predicted != y).sum())
            values.add(round(value(errors, len(y), penalty, leaves), 12))
            if i == 0 and (times[0] >= SHORT or not proven):
                break
        out[str(penalty)] = {
            "time": statistics.median(times),
            "fits": len(times),
            "proven": bool(proven),
            "errors": errors,
            "leaves": int(leaves),
            "value": value(errors, len(y), penalty, leaves),
            "values_differ": len(values) > 1,
            "reported": reported,
        }
    out["peak_mb"] = _peak_mb()
    return out


def _brute(B, y, rows, depth: int, penalty: float, n: int) -> float:
    """The optimum of error/n + λ·leaves over every tree of depth <= ``depth`` on ``rows``."""
    import numpy as np

    counts = np.bincount(y[rows], minlength=2)
    best = (len(rows) - counts.max()) / n + penalty
    if depth == 0 or counts.min() == 0:
        return best
    for f in range(B.shape[1]):
        right = B[rows, f] == 1
        if right.all() or not right.any():
            continue
        split = _brute(B, y, rows[~right], depth - 1, penalty, n)
        split += _brute(B, y, rows[right], depth - 1, penalty, n)
        best = min(best, split)
    return best


def convention_worker(method: str, instances: int, seed: int):
    """Brute-force optimum against the method's tree on random tiny data."""
    import numpy as np

    _warm(method)
    rng = np.random.default_rng(seed)
    agree, mismatches = 0, []
    for i in range(instances):
        n, m = int(rng.integers(12, 40)), int(rng.integers(2, 6))
        B = rng.integers(0, 2, size=(n, m)).astype(np.uint8)
        y = rng.integers(0, 2, size=n)
        depth = int(rng.integers(1, 4))
        penalty = float(rng.choice([0.0, 0.01, 0.03, 0.08, 0.2]))
        if len(np.unique(y)) < 2:
            y[0] = 1 - y[0]
        best = _brute(B, y, np.arange(n), depth, penalty, n)
        predicted, leaves, _, _ = FITS[method](B, y, depth, penalty, 10.0)
        got = value(int((predicted != y).sum()), n, penalty, leaves)
        if abs(got - best) <= TOL:
            agree += 1
        else:
            mismatches.append(f"#{i} n={n} d={depth} λ={penalty}: brute {best:.5f}, got {got:.5f}")
    return {"instances": instances, "agree": agree, "mismatches": mismatches[:3]}


def cv_worker(
    kind: str, name: str, depth: int, grid: list[float], inner: int, limit: float, seed: int
):
    import numpy as np
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.tree import DecisionTreeClassifier

    X, y = _load_cp4im(name)
    if kind != "cart":
        import satdt
        from satdt import OptimalTreeClassifier
        from satdt.core.errors import NotProvenWarning

        satdt.warmup()
    outer = StratifiedKFold(FOLDS, shuffle=True, random_state=seed)
    inner_cv = StratifiedKFold(inner, shuffle=True, random_state=seed)
    depths = list(range(1, MAX_TUNED_DEPTH + 1))
    accuracy, leaves, chosen, unproven = [], [], [], 0
    for train, test in outer.split(X, y):
        if kind == "penalty":
            base = OptimalTreeClassifier(objective="error", max_depth=depth, time_limit=limit)
            search = GridSearchCV(base, {"leaf_penalty": grid}, cv=inner_cv)
        elif kind == "depth":
            base = OptimalTreeClassifier(objective="error", time_limit=limit)
            search = GridSearchCV(base, {"max_depth": depths}, cv=inner_cv)
        else:
            base = DecisionTreeClassifier(random_state=seed)
            search = GridSearchCV(base, {"max_depth": depths}, cv=inner_cv)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            search.fit(X[train], y[train])
        if kind != "cart":
            unproven += sum(issubclass(w.category, NotProvenWarning) for w in caught)
        model = search.best_estimator_
        accuracy.append(float(np.mean(model.predict(X[test]) == y[test])))
        leaves.append(int(model.get_n_leaves() if kind == "cart" else model.tree_.n_leaves))
        chosen.append(next(iter(search.best_params_.values())))
    return {"accuracy": accuracy, "leaves": leaves, "chosen": chosen, "unproven": unproven}


def missing_worker(kind: str, name: str, depth: int, rate: float, limit: float, seed: int):
    import numpy as np
    from sklearn.impute import SimpleImputer
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.tree import DecisionTreeClassifier

    X, y = _load_continuous(name)
    if kind != "complete":
        X = delete_cells(X, rate, seed)
    if kind != "cart":
        import satdt
        from satdt import OptimalTreeClassifier

        satdt.warmup()
    accuracy, leaves, unproven, seconds = [], [], 0, []
    for train, test in StratifiedKFold(FOLDS, shuffle=True, random_state=seed).split(X, y):
        if kind == "cart":
            model = DecisionTreeClassifier(max_depth=depth, random_state=seed)
        else:
            model = OptimalTreeClassifier(objective="error", max_depth=depth, time_limit=limit)
            if kind == "impute":
                model = make_pipeline(SimpleImputer(strategy="median"), model)
        tic = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X[train], y[train])
        seconds.append(time.perf_counter() - tic)
        tree = model[-1] if kind == "impute" else model
        if kind == "cart":
            leaves.append(int(tree.get_n_leaves()))
        else:
            leaves.append(int(tree.tree_.n_leaves))
            unproven += not tree.result_.proven_optimal
        accuracy.append(float(np.mean(model.predict(X[test]) == y[test])))
    return {"accuracy": accuracy, "leaves": leaves, "unproven": unproven, "seconds": seconds}


def worker(args: list[str]) -> None:
    part, kind, name, *rest = args
    if part == "prove":
        depth, penalties, cap, repeats = rest
        out = prove_worker(
            kind,
            name,
            None if depth == "none" else int(depth),
            [float(p) for p in penalties.split(",")],
            float(cap),
            int(repeats),
        )
    elif part == "convention":
        out = convention_worker(kind, int(name), int(rest[0]))
    elif part == "cv":
        depth, grid, inner, limit, seed = rest
        out = cv_worker(
            kind,
            name,
            int(depth),
            [float(g) for g in grid.split(",")],
            int(inner),
            float(limit),
            int(seed),
        )
    else:
        depth, rate, limit, seed = rest
        out = missing_worker(kind, name, int(depth), float(rate), float(limit), int(seed))
    print(json.dumps(out))


# ---------------------------------------------------------------------- driver side
def _missing_peers(methods: list[str]) -> dict[str, str]:
    """Why a peer cannot run here (not importable), by method."""
    modules = {"pystreed": "pystreed", "gosdt": "gosdt"}
    return {
        m: f"{modules[m]} does not import (pip install {modules[m]})"
        for m in methods
        if m in modules and importlib.util.find_spec(modules[m]) is None
    }


def _fmt_time(run: dict | None, cap: float) -> str:
    if run is None:
        return "-"
    if "failed" in run:
        return run["failed"]
    return f"{run['time']:.3f}" if run["proven"] else f">{cap:g}"


def _fmt_value(run: dict | None) -> str:
    if run is None or "failed" in run:
        return "-"
    flag = "" if run["proven"] else "*"
    return f"{run['value']:.5f} ({run['errors']}/{run['leaves']}){flag}"


def _agree(runs: list[dict | None]) -> str:
    proven = [r["value"] for r in runs if r and "failed" not in r and r["proven"]]
    if len(proven) < 2:
        return "-"
    return "yes" if max(proven) - min(proven) <= TOL else "NO"


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


def _no_slower(a: dict | None, b: dict | None) -> bool:
    """satdt proved, and the peer did not, or took at least as long."""
    if not a or "failed" in a or not a["proven"]:
        return False
    return not b or "failed" in b or not b["proven"] or a["time"] <= b["time"]


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _cap(args, method: str) -> float:
    return args.gosdt_cap if method == "gosdt" else args.cap


def prove_table(args, files, methods, env) -> None:
    depths = [int(d) for d in args.depths.split(",")]
    penalties = [float(p) for p in args.penalties.split(",")]
    jobs = [(m, n, d) for d in depths for n in files for m in methods]
    runs: dict = {}

    def execute(job) -> None:
        method, name, depth = job
        cap = _cap(args, method)
        timeout = len(penalties) * cap * (args.repeats + 1) + 120
        arguments = [
            "prove",
            method,
            name,
            str(depth),
            args.penalties,
            str(cap),
            str(args.repeats),
        ]
        runs[job] = run_worker(__file__, arguments, timeout, args.mem_gb, env)
        if "failed" in runs[job]:
            print(f"  {name} depth {depth} {method}: {runs[job]['failed']}", flush=True)

    print(
        f"\n{len(jobs)} prove runs ({len(penalties)} penalties each; cap per fit {args.cap:g} s, "
        f"GOSDT {args.gosdt_cap:g} s)"
    )
    run_jobs(jobs, execute, args.jobs)
    header = (
        "| file | depth | λ | satdt s | pystreed s | GOSDT s | satdt/pystreed "
        "| satdt value (err/leaves)"
        " | pystreed value | GOSDT value | agree | MB satdt/pystreed/GOSDT |"
    )
    print("\n" + header)
    print("|" + "---|" * (header.count("|") - 1))
    both = same = wins = instances = 0
    gosdt_both = gosdt_same = 0
    for depth in depths:
        for name in files:
            per = {m: runs.get((m, name, depth)) for m in PROVERS}
            mem = "/".join(
                f"{r['peak_mb']:.0f}" if r and "peak_mb" in r else "-" for r in per.values()
            )
            for penalty in penalties:
                at = {
                    m: (r if r and "failed" in r else (r or {}).get(str(penalty)))
                    for m, r in per.items()
                }
                s, ps, gs = at["satdt"], at["pystreed"], at["gosdt"]
                instances += 1
                wins += _no_slower(s, ps)
                if _agree([s, ps]) != "-":
                    both += 1
                    same += _agree([s, ps]) == "yes"
                if _agree([s, gs]) != "-":
                    gosdt_both += 1
                    gosdt_same += _agree([s, gs]) == "yes"
                print(
                    f"| {name} | {depth} | {penalty:g} | {_fmt_time(s, args.cap)} "
                    f"| {_fmt_time(ps, args.cap)} | {_fmt_time(gs, args.gosdt_cap)} "
                    f"| {_ratio(s, ps)} "
                    f"| {_fmt_value(s)} | {_fmt_value(ps)} | {_fmt_value(gs)} "
                    f"| {_agree([s, ps, gs])} | {mem} |",
                    flush=True,
                )
    print(
        "\nvalue = errors/rows + λ·leaves, recomputed from each returned tree (pystreed's own "
        "objective is this minus λ); * = not proven within the cap; agree: the proven values "
        "are equal (- : fewer than two proved)."
    )
    print(
        f"same optimum as pystreed wherever both prove: {same}/{both} ({_met(same == both)}); "
        f"as GOSDT: {gosdt_same}/{gosdt_both}"
    )
    print(
        f"satdt proven no slower than pystreed: {wins}/{instances} instances "
        f"(target 2/3: {_met(3 * wins >= 2 * instances)})"
    )


def sparse_table(args, files, env) -> None:
    """Table 4: satdt and GOSDT with no depth limit, one fit per file and λ, each in its own
    worker (a fit that runs out of memory loses only its own row)."""
    methods = [m for m in ("satdt", "gosdt") if m in args.methods.split(",")]
    penalties = [float(p) for p in args.sparse_penalties.split(",")]
    cap = args.sparse_cap
    jobs = [(m, n, p) for n in files for p in penalties for m in methods]
    runs: dict = {}

    def execute(job) -> None:
        method, name, penalty = job
        arguments = ["prove", method, name, "none", str(penalty), str(cap), "1"]
        run = run_worker(__file__, arguments, cap + 150, args.sparse_mem_gb, env)
        if "failed" in run:
            print(f"  {name} λ {penalty:g} no depth limit {method}: {run['failed']}", flush=True)
            runs[job] = run
        else:
            runs[job] = {**run[str(penalty)], "peak_mb": run["peak_mb"]}

    print(f"\n{len(jobs)} runs with no depth limit (cap {cap:g} s)")
    run_jobs(jobs, execute, args.jobs)
    header = (
        "| file | λ | satdt s | GOSDT s | satdt/GOSDT | satdt value (err/leaves) "
        "| GOSDT value | agree | peak MB satdt/GOSDT |"
    )
    print("\n" + header)
    print("|" + "---|" * (header.count("|") - 1))
    both = same = either = wins = 0
    peak = 0.0
    for name in files:
        for penalty in penalties:
            s, g = runs.get(("satdt", name, penalty)), runs.get(("gosdt", name, penalty))
            mem = "/".join(f"{r['peak_mb']:.0f}" if r and "peak_mb" in r else "-" for r in (s, g))
            if s and "peak_mb" in s:
                peak = max(peak, s["peak_mb"])
            proved = [r for r in (s, g) if r and "failed" not in r and r["proven"]]
            either += bool(proved)
            wins += bool(proved) and _no_slower(s, g)
            if _agree([s, g]) != "-":
                both += 1
                same += _agree([s, g]) == "yes"
            print(
                f"| {name} | {penalty:g} | {_fmt_time(s, cap)} | {_fmt_time(g, cap)} "
                f"| {_ratio(s, g)} | {_fmt_value(s)} | {_fmt_value(g)} | {_agree([s, g])} "
                f"| {mem} |",
                flush=True,
            )
    print(
        "\nvalue = errors/rows + λ·leaves, recomputed from each returned tree; * = not proven "
        "within the cap; one fit per instance, each in its own worker; peak MB: the worker's "
        "peak resident memory."
    )
    print(f"same optimum wherever both prove: {same}/{both} ({_met(same == both)})")
    print(
        f"satdt proven no slower than GOSDT on {wins}/{either} instances either proves "
        f"(target 80 %: {_met(5 * wins >= 4 * either)})"
    )
    print(f"satdt's peak memory {peak:.0f} MB (target 1 GB: {_met(peak <= 1024)})")


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def cv_table(args, files, env) -> None:
    jobs = [(k, n) for n in files for k in CV_KINDS]
    runs: dict = {}

    def execute(job) -> None:
        kind, name = job
        arguments = [
            "cv",
            kind,
            name,
            str(args.cv_depth),
            args.cv_grid,
            str(args.inner),
            str(args.cv_limit),
            str(args.seed),
        ]
        runs[job] = run_worker(__file__, arguments, args.cv_timeout, args.mem_gb, env)
        if "failed" in runs[job]:
            print(f"  {name} cv {kind}: {runs[job]['failed']}", flush=True)

    print(
        f"\n{len(jobs)} cross-validation runs (outer {FOLDS} folds, inner {args.inner}, "
        f"inner fits capped at {args.cv_limit:g} s)"
    )
    run_jobs(jobs, execute, args.jobs)
    header = (
        f"| file | λ-tuned acc (depth {args.cv_depth}) | leaves | λ chosen | unproven "
        "| depth-tuned acc | leaves | depth chosen | unproven | CART acc | leaves | depth chosen |"
    )
    print("\n" + header)
    print("|" + "---|" * (header.count("|") - 1))
    medians = {k: ([], []) for k in CV_KINDS}
    for name in files:
        cells = []
        for kind in CV_KINDS:
            run = runs.get((kind, name))
            if not run or "failed" in run:
                cells += [run["failed"] if run else "-", "-", "-"] + (
                    ["-"] if kind != "cart" else []
                )
                continue
            acc, leaves = _median(run["accuracy"]), _median(run["leaves"])
            medians[kind][0].append(acc)
            medians[kind][1].append(leaves)
            chosen = ",".join(f"{c:g}" for c in run["chosen"])
            cells += [f"{acc:.4f}", f"{leaves:g}", chosen]
            if kind != "cart":
                cells.append(str(run["unproven"]))
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    summary = []
    for kind in CV_KINDS:
        accs, leaves = medians[kind]
        summary += [f"**{_median(accs):.4f}**", f"**{_median(leaves):g}**", ""]
        if kind != "cart":
            summary.append("")
    print("| median over files | " + " | ".join(summary) + " |")
    (pa, pl), (da, dl) = medians["penalty"], medians["depth"]
    if pa and da:
        ok = _median(pa) >= _median(da) and _median(pl) < _median(dl)
        print(
            f"\nper file: median test accuracy and median leaves over the {FOLDS} outer folds; "
            "chosen: the value picked in each outer fold; unproven: inner fits stopped by the cap."
        )
        print(
            f"λ-tuned median accuracy {_median(pa):.4f} vs depth-tuned {_median(da):.4f}, leaves "
            f"{_median(pl):g} vs {_median(dl):g} (target: accuracy at least, fewer leaves: "
            f"{_met(ok)})"
        )


def missing_table(args, env) -> None:
    files = args.missing_files.split(",")
    jobs = [(k, n) for n in files for k in MISSING_KINDS]
    runs: dict = {}

    def execute(job) -> None:
        kind, name = job
        arguments = [
            "missing",
            kind,
            name,
            str(args.missing_depth),
            str(args.missing_rate),
            str(args.missing_limit),
            str(args.seed),
        ]
        timeout = FOLDS * args.missing_limit * 2 + 300
        runs[job] = run_worker(__file__, arguments, timeout, args.mem_gb, env)
        if "failed" in runs[job]:
            print(f"  {name} missing {kind}: {runs[job]['failed']}", flush=True)

    print(f"\n{len(jobs)} missing-value runs (fits capped at {args.missing_limit:g} s)")
    run_jobs(jobs, execute, args.jobs)
    d = args.missing_depth
    header = (
        "| file | rows x cols | satdt native acc | leaves | s/fit | unproven "
        "| CART (NaN) acc | leaves "
        "| impute + satdt acc | leaves | unproven | satdt, complete data acc |"
    )
    print(f"\nDepth {d}, {args.missing_rate:.0%} of the feature cells deleted (seed {args.seed}).")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for name in files:
        X, _ = _load_continuous(name)
        cells = [f"{X.shape[0]} x {X.shape[1]}"]
        for kind in MISSING_KINDS:
            run = runs.get((kind, name))
            width = {"satdt": 4, "cart": 2, "impute": 3, "complete": 1}[kind]
            if not run or "failed" in run:
                cells += [run["failed"] if run else "-"] + ["-"] * (width - 1)
                continue
            cells.append(f"{_median(run['accuracy']):.4f}")
            if kind == "complete":
                continue
            cells.append(f"{_median(run['leaves']):g}")
            if kind == "satdt":
                cells.append(f"{_median(run['seconds']):.2f}")
            if kind != "cart":
                cells.append(str(run["unproven"]))
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    print(
        f"\nMedians over {FOLDS} stratified folds; s/fit: median seconds of a native fit; "
        "unproven: folds whose fit hit the cap (its best tree is scored)."
    )


def convention_check(args, methods, env) -> None:
    print(f"convention check ({args.convention} random tiny instances, brute force per leaf):")
    for method in methods:
        run = run_worker(
            __file__,
            ["convention", method, str(args.convention), str(args.seed)],
            600,
            args.mem_gb,
            env,
        )
        if "failed" in run:
            print(f"  {method}: {run['failed']}")
            continue
        print(f"  {method}: optimum equal on {run['agree']}/{run['instances']}")
        for line in run["mismatches"]:
            print(f"    {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="convention,prove,cv,missing")
    parser.add_argument("--files", default="", help="comma-separated cp4im names (default: all)")
    parser.add_argument("--depths", default="4,5")
    parser.add_argument("--penalties", default="0.001,0.005,0.01")
    parser.add_argument("--methods", default=",".join(PROVERS))
    parser.add_argument("--cap", type=float, default=20.0, help="seconds per fit (prove table)")
    parser.add_argument("--gosdt-cap", type=float, default=10.0, help="seconds per GOSDT fit")
    parser.add_argument("--repeats", type=int, default=3, help="fits of an instance under 5 s")
    parser.add_argument("--convention", type=int, default=30, help="tiny instances to check")
    parser.add_argument("--cv-files", default="", help="cp4im names (default: as --files)")
    parser.add_argument("--cv-depth", type=int, default=4)
    parser.add_argument("--cv-grid", default="0.001,0.002,0.005,0.01,0.02,0.05")
    parser.add_argument("--inner", type=int, default=3, help="inner cross-validation folds")
    parser.add_argument("--cv-limit", type=float, default=10.0, help="seconds per inner fit")
    parser.add_argument("--cv-timeout", type=float, default=1800.0, help="seconds per cv run")
    parser.add_argument("--missing-files", default=MISSING_FILES)
    parser.add_argument("--missing-depth", type=int, default=3)
    parser.add_argument("--missing-rate", type=float, default=0.1)
    parser.add_argument("--missing-limit", type=float, default=60.0, help="seconds per fit")
    parser.add_argument("--sparse-penalties", default="0.005,0.01,0.02,0.05")
    parser.add_argument("--sparse-cap", type=float, default=60.0, help="seconds per fit")
    parser.add_argument("--sparse-mem-gb", type=float, default=8.0, help="address space per run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (one core each)")
    parser.add_argument("--mem-gb", type=float, default=8.0, help="address-space limit per run")
    parser.add_argument("--dry-run", action="store_true", help="print the runs, run nothing")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    if not CP4IM.exists():
        sys.exit(f"data not found: {CP4IM}")
    files = args.files.split(",") if args.files else sorted(p.stem for p in CP4IM.glob("*.txt"))
    parts = args.parts.split(",")
    methods = args.methods.split(",")
    for method, why in _missing_peers(methods).items():
        print(f"skipped {method}: {why}")
        methods.remove(method)
    if args.dry_run:
        cv_files = args.cv_files.split(",") if args.cv_files else files
        n_prove = len(files) * len(args.depths.split(",")) * len(methods)
        print(
            f"parts {parts}; {len(files)} files ({', '.join(files)}); methods {methods}\n"
            f"prove: {n_prove} runs x {len(args.penalties.split(','))} penalties, cap "
            f"{args.cap:g} s\ncv: {len(cv_files) * len(CV_KINDS)} runs\nmissing: "
            f"{len(args.missing_files.split(',')) * len(MISSING_KINDS)} runs on "
            f"{args.missing_files}\n{args.jobs} at once"
        )
        return
    env = worker_env(ROOT)
    if "satdt" in methods or {"cv", "missing"} & set(parts):
        # fill the shared Numba cache before timing runs; a failure shows in satdt's rows
        warm = [sys.executable, "-c", "import satdt; satdt.warmup()"]
        if subprocess.run(warm, env=env, capture_output=True).returncode != 0:
            print("satdt.warmup() failed: satdt's runs will fail")
    started = time.perf_counter()
    if "convention" in parts:
        convention_check(args, methods, env)
    if "prove" in parts:
        prove_table(args, files, methods, env)
    if "cv" in parts:
        cv_table(args, args.cv_files.split(",") if args.cv_files else files, env)
    if "missing" in parts:
        missing_table(args, env)
    if "sparse" in parts:
        sparse_table(args, files, env)
    print(f"\ntotal benchmark time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
