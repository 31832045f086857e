"""Scale: satdt on large random numeric tables (10^4 to 10^6 rows x 20 columns).

The tables are generated here (in a temporary directory): values uniform in [0, 1) rounded
to 3 decimals, label ``x0 + x1 > 1`` flipped with probability 0.1 (seeded); ``--columns``
sets the width. For each size, objective (``depth``, ``size``, ``error`` at ``--depth``),
method (``--methods``: ``auto`` by default; each named method runs the objectives it
solves) and mode, one fit runs in its own subprocess under an address-space limit
(``--memory-cap-gb``) and is killed at the time limit + 60 s, so a run that grows without
bound is a row of the table, not a dead machine.

- ``library``: ``OptimalTreeClassifier(...).fit(X, y)`` on arrays; timed from the call of fit.
- ``cli``: ``python -m satdt.cli infer|fit FILE.csv ...`` on the CSV; whole process timed
  (start-up and reading included). The tree is then re-checked by ``satdt predict``.

Per run: time, its overrun (time - limit), whether it came back within the limit +
max(0.5 s, 5 %), the process's own peak resident memory, the tree's depth and nodes, its training accuracy (recomputed from
predictions), proven or not, and for ``error`` CART's training accuracy at the same depth
(scikit-learn, measured here). Then one line per target, among them the worst overrun per
table size (rows x columns) against the promise: within 1 s up to 10^6 cells, within 2 s up
to 10^7.

    python benchmarks/scale.py                       # 10^4, 10^5, 10^6 rows; all objectives, both modes
    python benchmarks/scale.py --quick               # 10^4 and 10^5 rows only
    python benchmarks/scale.py --rows 1000000 --objectives error --modes library --memory-cap-gb 4
    python benchmarks/scale.py --rows 40000 150000 400000 --columns 25 --modes cli \
        --time-limit 5 --methods auto contree portfolio     # the overrun per size and method
    PYTHONPATH=OTHER_CHECKOUT python benchmarks/scale.py --quick   # measure another satdt

The environment (``PYTHONPATH`` included) is passed to every child unchanged, and the children
run in the temporary directory, so ``PYTHONPATH`` decides which satdt is measured. Never
collected by pytest (no ``test_`` prefix); results never become assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OBJECTIVES = ("depth", "size", "error")
MODES = ("library", "cli")
COLUMNS = 20
# The methods each objective may run (``--methods``); ``auto`` runs for every objective.
ERROR_METHODS = ("portfolio", "contree", "blossom", "dl85", "cadl85")
CONSISTENCY_METHODS = ("hybrid", "sat", "contree")
# The promise on time limits: the worst overrun allowed up to a table of this many cells.
OVERRUN_PROMISE = ((10**6, 1.0), (10**7, 2.0))
NOISE = 0.1
KILL_MARGIN = 60.0  # seconds past the time limit before a run is killed
MEMORY_TARGET_MB = 2048.0
MEMORY_WORDS = ("MemoryError", "bad_alloc", "Cannot allocate", "Unable to allocate", "ENOMEM")


# ---------------------------------------------------------------------- worker side
def _worker_library(
    folder: str, objective: str, depth: int, time_limit: float, method: str = "auto"
) -> None:
    """One fit on the arrays of ``folder``; prints the result as JSON (last stdout line)."""
    import warnings

    import numpy as np

    import satdt

    X = np.load(Path(folder) / "X.npy")
    y = np.load(Path(folder) / "y.npy")
    model = satdt.OptimalTreeClassifier(
        objective=objective,
        max_depth=depth if objective == "error" else None,
        time_limit=time_limit,
        method=method,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NotProvenWarning: read from result_ instead
        tic = time.perf_counter()
        model.fit(X, y)
        elapsed = time.perf_counter() - tic
    predicted = model.predict(X)
    errors = int(np.sum(predicted != y))
    result = getattr(model, "result_", None)
    tree = model.tree_
    out = {
        "timed": elapsed,
        "depth": int(tree.depth),
        "nodes": int(tree.n_nodes),
        "errors": errors,
        "accuracy": 1.0 - errors / len(y),
        "proven": getattr(result, "proven_optimal", None),
        "lower_bound": getattr(result, "lower_bound", None),
        "objective_value": getattr(result, "objective_value", None),
        "satdt": str(Path(satdt.__file__).parent),
    }
    print(json.dumps(out, default=float))


def _worker_warmup(objectives: list[str], depth: int) -> None:
    """Fit tiny tables once per objective so that compiled (numba) code is cached on disk."""
    import warnings

    import numpy as np

    import satdt

    X, y = make_table(300, seed=1)
    for objective in objectives:
        model = satdt.OptimalTreeClassifier(
            objective=objective,
            max_depth=depth if objective == "error" else None,
            time_limit=5.0,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
    print(json.dumps({"satdt": str(Path(satdt.__file__).parent), "numpy": np.__version__}))


# ---------------------------------------------------------------------- data
def make_table(rows: int, seed: int, columns: int = COLUMNS):
    """Numeric columns uniform in [0, 1) (3 decimals); label x0 + x1 > 1, 10 % flipped."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = np.round(rng.random((rows, columns)), 3)
    clean = X[:, 0] + X[:, 1] > 1.0
    y = (clean ^ (rng.random(rows) < NOISE)).astype(np.int64)
    return X, y


def write_table(folder: Path, X, y, csv: bool) -> None:
    """Arrays as .npy (library mode) and, if asked, the same table as CSV (CLI mode)."""
    import numpy as np

    np.save(folder / "X.npy", X)
    np.save(folder / "y.npy", y)
    if csv:
        header = ",".join([f"x{j}" for j in range(X.shape[1])] + ["label"])
        # "%.3f" of a value rounded to 3 decimals parses back to the same float
        fmt = ["%.3f"] * X.shape[1] + ["%d"]
        table = np.column_stack([X, y.astype(np.float64)])
        np.savetxt(folder / "data.csv", table, fmt=fmt, delimiter=",", header=header, comments="")


# ---------------------------------------------------------------------- driver side
def _limit_memory(gigabytes: float):
    def apply() -> None:
        limit = int(gigabytes * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def _env() -> dict:
    """The caller's environment unchanged; this checkout only as a fallback at the end."""
    env = dict(os.environ)
    path = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = (path + os.pathsep if path else "") + str(ROOT)
    return env


def spawn(cmd: list[str], env: dict, cwd: Path, cap_gb: float, kill_after: float) -> dict:
    """Run ``cmd``; wall time, exit status, peak RSS of that process alone (``wait4``)."""
    out_path, err_path = cwd / "child.out", cwd / "child.err"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        tic = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=env,
            cwd=cwd,
            preexec_fn=_limit_memory(cap_gb),
            start_new_session=True,
        )
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - tic > kill_after:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        wall = time.perf_counter() - tic
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code  # reaped by wait4 above
    return {
        "wall": wall,
        "code": code,
        "killed": killed,
        "peak_mb": usage.ru_maxrss / 1024.0,
        "stdout": out_path.read_text(errors="replace"),
        "stderr": err_path.read_text(errors="replace"),
    }


def failure(run: dict, kill_after: float) -> str | None:
    """Why a run produced no result (``None`` if it exited normally)."""
    if run["killed"]:
        return f"killed at {kill_after:g} s (time)"
    lines = [line.strip() for line in run["stderr"].splitlines() if line.strip()]
    tail = lines[-1] if lines else "no message"
    head, colon, message = tail.partition(": ")
    if " " not in head and "." in head:  # a traceback's last line: keep the exception's name
        tail = head.rsplit(".", 1)[1] + colon + message
    tail = tail[:100]
    memory = any(word in run["stderr"] for word in MEMORY_WORDS)
    code = run["code"]
    if code < 0:
        name = signal.Signals(-code).name
        return f"{name}{' (memory cap)' if memory else ''}: {tail}"
    if code != 0:
        return f"{'memory cap: ' if memory else ''}exit {code}: {tail}"
    return None


def run_library(folder: Path, objective: str, method: str, args, env: dict) -> dict:
    kill_after = args.time_limit + KILL_MARGIN
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "library", str(folder)]
    cmd += [objective, str(args.depth), str(args.time_limit), method]
    run = spawn(cmd, env, folder, args.memory_cap_gb, kill_after)
    row = {"process": run["wall"], "peak_mb": run["peak_mb"]}
    reason = failure(run, kill_after)
    if reason is None:
        try:
            row.update(json.loads(run["stdout"].strip().splitlines()[-1]))
        except (IndexError, ValueError):
            reason = "no JSON result on stdout"
    row["failed"] = reason
    return row


def run_cli(folder: Path, objective: str, method: str, args, y, env: dict) -> dict:
    import numpy as np

    kill_after = args.time_limit + KILL_MARGIN
    data, document, model = folder / "data.csv", folder / "tree.json", folder / "model.json"
    for stale in (document, model):
        stale.unlink(missing_ok=True)
    cli = [sys.executable, "-m", "satdt.cli"]
    if objective == "error":
        cmd = [*cli, "fit", str(data), "--max-depth", str(args.depth)]
    else:
        cmd = [*cli, "infer", str(data)] + (["--size"] if objective == "size" else [])
    cmd += ["--time-limit", str(args.time_limit), "--format", "json", "-o", str(document)]
    cmd += ["--save", str(model)] + ([] if method == "auto" else ["--method", method])
    run = spawn(cmd, env, folder, args.memory_cap_gb, kill_after)
    row = {"process": run["wall"], "timed": run["wall"], "peak_mb": run["peak_mb"]}
    reason = failure(run, kill_after)
    if reason is None:
        try:
            found = json.loads(document.read_text())
            row.update(
                depth=found.get("depth"),
                nodes=found.get("n_nodes"),
                proven=found.get("proven_optimal"),
                lower_bound=found.get("lower_bound"),
                objective_value=found.get("objective_value"),
                search=found.get("runtime"),
            )
        except (OSError, ValueError) as exc:
            reason = f"no JSON tree: {exc}"
    if reason is None:  # re-check the saved model on the training file
        predictions = folder / "predictions.csv"
        cmd = [*cli, "predict", str(model), str(data), "-o", str(predictions)]
        check = spawn(cmd, env, folder, args.memory_cap_gb, kill_after)
        bad = failure(check, kill_after)
        if bad is None:
            predicted = np.loadtxt(predictions, skiprows=1, dtype=np.float64, ndmin=1)
            errors = int(np.sum(predicted != y))
            row.update(errors=errors, accuracy=1.0 - errors / len(y))
        else:
            row["check"] = f"predict failed: {bad}"
    row["failed"] = reason
    return row


def cart_accuracy(X, y, depth: int) -> float | None:
    try:
        from sklearn.tree import DecisionTreeClassifier
    except ImportError:
        return None
    return float(DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y).score(X, y))


# ---------------------------------------------------------------------- report
def _rows_label(rows: int) -> str:
    exponent = len(str(rows)) - 1
    return f"10^{exponent}" if rows == 10**exponent else str(rows)


def _tolerance(limit: float) -> float:
    return limit + max(0.5, 0.05 * limit)


def _proven(row: dict) -> str:
    if row.get("proven") is None:
        return "?"
    if row["proven"]:
        return "yes"
    bound = row.get("lower_bound")
    return "no" if bound is None else f"no (lb {bound:g})"


def _consistent(row: dict, objective: str) -> str:
    if objective == "error" or row.get("accuracy") is None:
        return "-"
    return "yes" if row.get("errors") == 0 else f"no ({row['errors']} errors)"


def _cells(size: int, row: dict) -> str:
    return _cell_count(size * row["columns"])


def _cell_count(cells: int) -> str:
    return f"{cells:.1e}".replace("e+0", "e")


def table_row(size: int, run: str, mode: str, row: dict, cart: float | None, limit: float):
    objective, _, method = run.partition(" ")
    label = objective if objective != "error" else f"error (d<={row['max_depth']})"
    label += f" {method}" if method else ""
    if row.get("failed"):
        cells = [_rows_label(size), _cells(size, row), label, mode, row["failed"].replace("|", "/")]
        cells += [f"{row.get('timed', row['process']):.2f}", "-", "no (no tree)"]
        cells += [f"{row['peak_mb']:.0f}"] + ["-"] * 5
        return [*cells, "-" if cart is None else f"{cart:.4f}", "-"]
    timed = row["timed"]
    within = "yes" if timed <= _tolerance(limit) else f"no (+{timed - limit:.1f} s)"
    accuracy = row.get("accuracy")
    acc = f"{accuracy:.4f}" if accuracy is not None else row.get("check", "?")
    cart_cell = diff = "-"
    if objective == "error" and cart is not None:
        cart_cell = f"{cart:.4f}"
        if accuracy is not None:
            diff = f"{accuracy - cart:+.4f}"
    return [
        _rows_label(size),
        _cells(size, row),
        label,
        mode,
        "ok",
        f"{timed:.2f}",
        f"{timed - limit:+.2f}",
        within,
        f"{row['peak_mb']:.0f}",
        str(row.get("depth")),
        str(row.get("nodes")),
        acc,
        _consistent(row, objective),
        _proven(row),
        cart_cell,
        diff,
    ]


HEADER = [
    "rows",
    "cells",
    "objective",
    "mode",
    "status",
    "time s",
    "over s",
    "within limit",
    "peak MB",
    "depth",
    "nodes",
    "train acc",
    "consistent",
    "proven",
    "CART acc",
    "satdt - CART",
]


def _markdown(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _verdict(ok: bool | None) -> str:
    return "not measured" if ok is None else ("PASS" if ok else "FAIL")


def _objective(run: str) -> str:
    """The objective of a run's label (``error``, ``error contree``, ...)."""
    return run.split()[0]


def overrun_line(results: list[tuple[int, str, str, dict, float | None]], limit: float) -> str:
    """The worst overrun (time - limit) per table size, against :data:`OVERRUN_PROMISE`."""
    worst: dict[int, tuple[float, str]] = {}
    for size, run, mode, row, _ in results:
        cells = size * row["columns"]
        over = row.get("timed", row["process"]) - limit
        if row.get("failed"):
            over = max(over, KILL_MARGIN)  # no tree: as bad as it gets
        if cells not in worst or over > worst[cells][0]:
            worst[cells] = (over, f"{run} {mode}")
    missed = []
    for cells, (over, what) in worst.items():
        allowed = next((s for top, s in OVERRUN_PROMISE if cells <= top), None)
        if allowed is not None and over > allowed:
            missed.append(f"{_cell_count(cells)} cells {what} (+{over:.2f} s > {allowed:g} s)")
    sizes = "; ".join(
        f"{_cell_count(cells)} cells {over:+.2f} s ({what})"
        for cells, (over, what) in sorted(worst.items())
    )
    ok = None if not worst else not missed
    return (
        f"- time limit kept within 1 s up to 10^6 cells and 2 s up to 10^7 (worst overrun per "
        f"size: {sizes or 'none'}): {_verdict(ok)}"
        + (f"; not: {', '.join(missed)}" if missed else "")
    )


def targets(results: list[tuple[int, str, str, dict, float | None]], limit: float) -> list[str]:
    lines = []

    def name(size: int, objective: str, mode: str) -> str:
        return f"{_rows_label(size)} {objective} {mode}"

    late = [
        name(s, o, m)
        for s, o, m, r, _ in results
        if r.get("failed") or r["timed"] > _tolerance(limit)
    ]
    ok = None if not results else not late
    lines.append(
        f"- every run returns a tree within {limit:g} s + max(0.5 s, 5 %): {_verdict(ok)}"
        f" ({len(results) - len(late)} of {len(results)})"
        + (f"; not: {', '.join(late)}" if late else "")
    )

    lines.append(overrun_line(results, limit))

    big = [(s, o, m, r) for s, o, m, r, _ in results if s >= 10**6]
    heavy = [
        f"{name(s, o, m)} ({r['peak_mb']:.0f} MB{', failed' if r.get('failed') else ''})"
        for s, o, m, r in big
        if r.get("failed") or r["peak_mb"] >= MEMORY_TARGET_MB
    ]
    ok = None if not big else not heavy
    lines.append(
        f"- peak memory under 2 GB at 10^6 rows: {_verdict(ok)}"
        + (f" ({len(big) - len(heavy)} of {len(big)})" if big else " (no 10^6-row run)")
        + (f"; not: {', '.join(heavy)}" if heavy else "")
    )

    errs = [(s, o, m, r, c) for s, o, m, r, c in results if _objective(o) == "error"]
    if errs and all(c is None for *_, c in errs):
        lines.append("- error objective never worse than CART: not measured (scikit-learn missing)")
    else:
        worse = [
            name(s, o, m)
            for s, o, m, r, c in errs
            if r.get("failed") or r.get("accuracy") is None or r["accuracy"] < c - 1e-12
        ]
        ok = None if not errs else not worse
        lines.append(
            f"- error objective never worse than CART of the same depth (training accuracy): "
            f"{_verdict(ok)} ({len(errs) - len(worse)} of {len(errs)})"
            + (f"; not (worse or no tree): {', '.join(worse)}" if worse else "")
        )

    cons = [(s, o, m, r) for s, o, m, r, _ in results if _objective(o) != "error"]
    bad = []
    for s, o, m, r in cons:
        if r.get("failed") or r.get("errors") != 0:
            bad.append(f"{name(s, o, m)} (no consistent tree)")
            continue
        value = r["depth"] if _objective(o) == "depth" else r["nodes"]
        bound = r.get("lower_bound")
        if r.get("proven") is None:
            bad.append(f"{name(s, o, m)} (proof status missing)")
        elif r["proven"] and bound is not None and bound < value:
            bad.append(f"{name(s, o, m)} (proven, but lower bound {bound:g} < {value})")
        elif not r["proven"] and bound is not None and bound >= value:
            bad.append(f"{name(s, o, m)} (not proven, but lower bound {bound:g} >= {value})")
    ok = None if not cons else not bad
    lines.append(
        f"- consistency objectives return a consistent tree, marked not proven when not proven: "
        f"{_verdict(ok)}"
        + (f" ({len(cons) - len(bad)} of {len(cons)})" if cons else " (no depth/size run)")
        + (f"; not: {', '.join(bad)}" if bad else "")
    )
    return lines


def runs_of(objectives: list[str], methods: list[str]) -> list[tuple[str, str]]:
    """Each objective with each method that solves it (``auto`` solves every one)."""
    return [
        (objective, method)
        for objective in objectives
        for method in methods
        if method == "auto"
        or method in (ERROR_METHODS if objective == "error" else CONSISTENCY_METHODS)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10**4, 10**5, 10**6])
    parser.add_argument("--objectives", nargs="+", choices=OBJECTIVES, default=list(OBJECTIVES))
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=("auto", *dict.fromkeys(ERROR_METHODS + CONSISTENCY_METHODS)),
        default=["auto"],
        help="methods to run (each for the objectives it solves)",
    )
    parser.add_argument("--columns", type=int, default=COLUMNS, help="columns of each table")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per fit")
    parser.add_argument("--depth", type=int, default=3, help="max_depth of the error objective")
    parser.add_argument(
        "--memory-cap-gb",
        "--memory-cap",
        type=float,
        default=8.0,
        help="address-space limit (RLIMIT_AS) of every child, in GB",
    )
    parser.add_argument("--quick", action="store_true", help="10^4 and 10^5 rows only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-warmup", action="store_true", help="skip the numba cache warm-up")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        kind, *rest = args.worker
        if kind == "library":
            folder, objective, depth, limit, method = rest
            _worker_library(folder, objective, int(depth), float(limit), method)
        else:
            _worker_warmup(rest[1:], int(rest[0]))
        return

    sizes = [r for r in args.rows if not (args.quick and r > 10**5)]
    if args.quick and not sizes:
        sizes = [10**4, 10**5]
    env = _env()
    started = time.perf_counter()
    load = os.getloadavg()
    print(
        f"{os.cpu_count()} CPUs, load average {load[0]:.2f} at start (timings under whatever "
        f"else runs on this machine); time limit {args.time_limit:g} s, memory cap "
        f"{args.memory_cap_gb:g} GB per run, error objective at depth <= {args.depth}, seed {args.seed}"
    )
    with tempfile.TemporaryDirectory(prefix="satdt-scale-") as tmp:
        folder = Path(tmp)
        if not args.no_warmup:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "warmup"]
            cmd += [str(args.depth), *args.objectives]
            warm = spawn(cmd, env, folder, args.memory_cap_gb, 600.0)
            reason = failure(warm, 600.0)
            if reason is None:
                where = json.loads(warm["stdout"].strip().splitlines()[-1])["satdt"]
                print(f"satdt measured: {where} (warm-up of compiled code {warm['wall']:.1f} s)")
            else:
                print(f"warm-up failed ({reason}); measuring anyway")
        try:
            import sklearn  # noqa: F401
        except ImportError:
            print("scikit-learn missing: the CART columns are left empty")
        print()
        print(_markdown(HEADER))
        print("|" + "---|" * len(HEADER))
        results = []
        for size in sizes:
            X, y = make_table(size, args.seed, args.columns)
            write_table(folder, X, y, csv="cli" in args.modes)
            cart = cart_accuracy(X, y, args.depth) if "error" in args.objectives else None
            for objective, method in runs_of(args.objectives, args.methods):
                for mode in args.modes:
                    if mode == "library":
                        row = run_library(folder, objective, method, args, env)
                    else:
                        row = run_cli(folder, objective, method, args, y, env)
                    row["max_depth"], row["columns"] = args.depth, args.columns
                    c = cart if objective == "error" else None
                    run = objective if method == "auto" else f"{objective} {method}"
                    results.append((size, run, mode, row, c))
                    print(
                        _markdown(table_row(size, run, mode, row, c, args.time_limit)),
                        flush=True,
                    )
            del X, y
            for name in ("X.npy", "y.npy", "data.csv"):
                (folder / name).unlink(missing_ok=True)
    print()
    print(
        "time s: library from the call of fit (for a failed run: the whole process); cli the "
        "whole process (start-up and reading included). peak MB: the child's own peak resident "
        "memory (wait4). proven: lb = the lower bound reported with an unproven tree."
    )
    print()
    for line in targets(results, args.time_limit):
        print(line)
    load = os.getloadavg()
    print(
        f"\nload average {load[0]:.2f} at end; total benchmark time "
        f"{time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
