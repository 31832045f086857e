"""The first fit on a fresh install: whole-process times with an empty and a warm Numba cache.

For iris, monk1, a CP4IM file and a continuous file (ConTree), each in its own empty Numba
cache (``NUMBA_CACHE_DIR``):

* ``satdt fit FILE --max-depth K`` cold (nothing compiled yet) and warm (median of several
  runs), whole process, interpreter start included;
* the same cold with ``--time-limit T`` (each in a fresh cache), its time, whether it kept the
  limit within max(0.5 s, 5 %), and its training accuracy beside CART's of the same depth;
* ``satdt infer`` (minimum depth) on scikit-learn's breast-cancer table cold, warm and cold
  with ``--time-limit``: SAT searches while ConTree's kernels compile in the background;
* ``satdt warmup`` cold (every kernel), and per kernel group;
* the README's first command, ``satdt infer examples/data/mouse.csv``, as on a fresh install
  (the package copied afresh, so that no bytecode is compiled yet, and an empty Numba cache)
  and warm: its ``time:`` line (from the process start, as the command line counts a time
  limit) against the promise of at most 1 s, and the whole process;
* beside them the whole process of pystreed and pycontree on the same files (import + fit),
  median of several runs (the ``bench`` extra installs them).

    python benchmarks/cold_start.py                  # K = 3, T = 5 s and 2 s, 3 warm runs
    python benchmarks/cold_start.py --files iris --runs 5
    python benchmarks/cold_start.py --infer-only     # minimum depth on breast-cancer only
    python benchmarks/cold_start.py --readme-only    # the README's first command only

Run from the repository root; data from ``examples/data`` and ``../shared/data``. Never
collected by pytest; results never become assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
FILES = {
    "iris": ROOT / "examples" / "data" / "iris.csv",
    "monk1": ROOT / "examples" / "data" / "monk1.csv",
    "anneal": SHARED / "cp4im" / "anneal.txt",
    "bank": SHARED / "continuous" / "bank.txt",
}
PEERS = ("pystreed", "pycontree")


# ---------------------------------------------------------------------- worker side
def _load(path: Path):
    import numpy as np

    if path.suffix == ".txt":  # label first, space-separated, no header
        table = np.loadtxt(path, ndmin=2)
        return table[:, 1:], table[:, 0].astype(int)
    table = np.genfromtxt(path, delimiter=",", skip_header=1, encoding="utf-8-sig")
    return table[:, :-1], table[:, -1].astype(int)


def _peer(name: str, path: Path, depth: int) -> None:
    """Import a peer, load the data, fit, print the training accuracy (timed from outside)."""
    if name == "pystreed":
        from pystreed import STreeDClassifier

        X, y = _load(path)
        model = STreeDClassifier(max_depth=depth, time_limit=600)
    else:
        from pycontree import ConTree

        X, y = _load(path)
        model = ConTree(max_depth=depth, time_limit=600)
    model.fit(X, y)
    print(json.dumps({"accuracy": float((model.predict(X) == y).mean())}))


def _cart(path: Path, depth: int) -> float:
    from sklearn.tree import DecisionTreeClassifier

    X, y = _load(path)
    return float(DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y).score(X, y))


# ---------------------------------------------------------------------- driver side
def _timed(command: list[str], env: dict[str, str], timeout: float = 900) -> tuple[float, str]:
    tic = time.perf_counter()
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )
    elapsed = time.perf_counter() - tic
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        raise RuntimeError(f"{' '.join(command[1:4])}: exit {done.returncode}: {tail}")
    return elapsed, done.stdout


def _env(cache: str) -> dict[str, str]:
    return {**os.environ, "NUMBA_CACHE_DIR": cache}


def _fit(path: Path, depth: int, cache: str, limit: float | None = None) -> tuple[float, dict]:
    command = [sys.executable, "-m", "satdt.cli", "fit", str(path), "--max-depth", str(depth)]
    command += ["--format", "json", "--quiet"]
    if limit is not None:
        command += ["--time-limit", str(limit)]
    elapsed, out = _timed(command, _env(cache))
    return elapsed, json.loads(out)


def _accuracy(document: dict, path: Path) -> float:
    X, y = _load(path)
    from satdt.models.tree import Tree

    tree = Tree.from_dict(document["tree"])
    return float((tree.predict(X) == y).mean())


def _finish_background(cache: str) -> None:
    """Wait for a background compilation of that cache to end (``satdt warmup`` waits on its
    locks), so that warm runs find every kernel there."""
    _timed([sys.executable, "-m", "satdt.cli", "warmup"], _env(cache))


def _infer(path: Path, cache: str, limit: float | None = None) -> tuple[float, dict]:
    command = [sys.executable, "-m", "satdt.cli", "infer", str(path), "--format", "json"]
    command += ["--quiet"] + ([] if limit is None else ["--time-limit", str(limit)])
    elapsed, out = _timed(command, _env(cache))
    return elapsed, json.loads(out)


def _infer_section(limits: list[float], runs: int) -> None:
    """Minimum depth on a numeric table: cold, warm (median), cold under each limit."""
    import numpy as np
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    print("\n## Whole process of `satdt infer` on breast-cancer (569 x 30, numeric)\n")
    header = "| cold | cold depth | warm (median) | warm depth |"
    header += "".join(
        f" cold, limit {limit:g} s | depth (lower bound) | kept |" for limit in limits
    )
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "breast_cancer.csv"
        names = ",".join([f"x{j}" for j in range(X.shape[1])] + ["label"])
        np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=names, comments="")
        cache = str(Path(folder) / "cache")
        cold, document = _infer(path, cache)
        _finish_background(cache)
        warm_runs = [_infer(path, cache) for _ in range(runs)]
        warm = statistics.median(t for t, _ in warm_runs)
        row = f"| {cold:.2f} | {document['depth']} | {warm:.2f} | {warm_runs[0][1]['depth']} |"
        for limit in limits:
            limited_cache = str(Path(folder) / f"cache-{limit:g}")
            elapsed, limited = _infer(path, limited_cache, limit)
            _finish_background(limited_cache)
            kept = elapsed <= limit + max(0.5, 0.05 * limit)
            bound = f"{limited['depth']} (>= {limited['lower_bound']:g})"
            row += f" {elapsed:.2f} | {bound} | {'yes' if kept else 'NO'} |"
        print(row, flush=True)


README_DATA = ROOT / "examples" / "data" / "mouse.csv"
README_PROMISE = 1.0  # seconds of ``time:`` for the README's first command on a fresh install


def _readme_run(package: Path, cache: str) -> tuple[float, float]:
    """One ``satdt infer examples/data/mouse.csv`` with the package at ``package``: its
    ``time:`` (seconds from the process start) and the whole process."""
    env = {**_env(cache), "PYTHONPATH": str(package)}
    command = [sys.executable, "-m", "satdt.cli", "infer", str(README_DATA)]
    elapsed, out = _timed(command, env)
    found = re.search(r"^time: ([0-9.]+) s$", out, re.MULTILINE)
    if found is None:
        raise RuntimeError("satdt infer printed no time: line")
    return float(found.group(1)), elapsed


def _readme_section(runs: int) -> None:
    """The README's first command as on a fresh install (a copy of the package without
    bytecode, an empty Numba cache), then warm (median of ``runs``)."""
    import satdt

    source = Path(satdt.__file__).resolve().parent
    print("\n## The README's first command: `satdt infer examples/data/mouse.csv`\n")
    print("| run | `time:` s | whole process s | `time:` within 1 s |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        package = Path(folder) / "site"
        shutil.copytree(source, package / "satdt", ignore=shutil.ignore_patterns("__pycache__"))
        cache = str(Path(folder) / "cache")
        rows = [("fresh install (no bytecode, empty Numba cache)", *_readme_run(package, cache))]
        warm = [_readme_run(package, cache) for _ in range(runs)]
        rows.append(
            (
                f"warm (median of {runs})",
                statistics.median(t for t, _ in warm),
                statistics.median(w for _, w in warm),
            )
        )
        for label, shown, whole in rows:
            kept = "yes" if shown <= README_PROMISE else "NO"
            print(f"| {label} | {shown:.3f} | {whole:.2f} | {kept} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", default=",".join(FILES), help="comma-separated names")
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--limits", default="5,2", help="comma-separated time limits (s)")
    parser.add_argument("--runs", type=int, default=3, help="warm runs (median)")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument(
        "--infer-only", action="store_true", help="only the `satdt infer` table (breast-cancer)"
    )
    parser.add_argument(
        "--readme-only", action="store_true", help="only the README's first command"
    )
    parser.add_argument(
        "--peer", nargs=3, metavar=("NAME", "FILE", "DEPTH"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.peer:
        _peer(args.peer[0], FILES[args.peer[1]], int(args.peer[2]))
        return
    names = args.files.split(",")
    limits = [float(x) for x in args.limits.split(",") if x]
    depth = args.depth
    if args.infer_only:
        _infer_section(limits, args.runs)
        return
    if args.readme_only:
        _readme_section(args.runs)
        return

    print(f"## Whole process of `satdt fit FILE --max-depth {depth}` (seconds)\n")
    header = "| file | method | cold | warm (median) | cold/warm | proven |"
    for limit in limits:
        header += f" cold, limit {limit:g} s | kept | accuracy (CART) |"
    for peer in () if args.no_peers else PEERS:
        header += f" {peer} (median) | satdt warm / {peer} |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for name in names:
        path = FILES[name]
        with tempfile.TemporaryDirectory() as cache:
            cold, document = _fit(path, depth, cache)
            _finish_background(cache)
            warm = statistics.median(_fit(path, depth, cache)[0] for _ in range(args.runs))
        row = (
            f"| {name} | {document['method']} | {cold:.2f} | {warm:.2f} | {cold / warm:.1f} | "
            f"{'yes' if document['proven_optimal'] else 'no'} |"
        )
        cart = _cart(path, depth)
        for limit in limits:
            with tempfile.TemporaryDirectory() as cache:
                elapsed, limited = _fit(path, depth, cache, limit)
                accuracy = _accuracy(limited, path)
                _finish_background(cache)  # its compilation goes on after the fit returned
            kept = elapsed <= limit + max(0.5, 0.05 * limit)
            row += f" {elapsed:.2f} | {'yes' if kept else 'NO'} | {accuracy:.3f} ({cart:.3f}) |"
        for peer in () if args.no_peers else PEERS:
            command = [sys.executable, __file__, "--peer", peer, name, str(depth)]
            times = [_timed(command, dict(os.environ))[0] for _ in range(args.runs)]
            peer_time = statistics.median(times)
            row += f" {peer_time:.2f} | {warm / peer_time:.2f} |"
        print(row, flush=True)

    _infer_section(limits, args.runs)
    _readme_section(args.runs)

    print("\n## `satdt warmup` on an empty cache\n")
    with tempfile.TemporaryDirectory() as cache:
        elapsed, out = _timed([sys.executable, "-m", "satdt.cli", "warmup"], _env(cache))
        print(f"whole process: {elapsed:.2f} s\n\n```text\n{out.strip()}\n```")
        elapsed, _ = _timed([sys.executable, "-m", "satdt.cli", "warmup"], _env(cache))
        print(f"\nagain (loads from the cache): {elapsed:.2f} s")


if __name__ == "__main__":
    main()
