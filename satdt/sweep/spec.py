"""The sweep's spec: a TOML or JSON file expanded into its tasks, one fit each.

Each task (a :class:`SweepJob`) is named by a key hashing the data file (name and content),
the estimator, its parameters, the fold and the time limit: a task whose key is in the results
file is done.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from glob import glob
from itertools import product
from pathlib import Path
from typing import Any

from ..core.errors import SatdtError

# Estimators by name; "module:Class" names any other classifier with fit/score. Imported only
# in the worker that runs the task, so a module still being written costs nothing until used.
ESTIMATORS = {
    "tree": "satdt.estimators.tree:OptimalTreeClassifier",
    "diagram": "satdt.estimators.diagram:OptimalDiagramClassifier",
}
DEFAULT_MARGIN = 30.0  # seconds a fit may overrun its time limit before it is killed
DEFAULT_RETRIES = 2  # times a task is rerun after its worker died
_SPLIT_FILE = re.compile(r"train(\d+)")  # iris.csv.train3.csv pairs with iris.csv.test3.csv


@dataclass(frozen=True)
class SweepJob:
    """One task of a sweep, a single fit: which data, which estimator with which parameters,
    which fold.

    ``train`` and ``test`` are absolute paths; ``test`` is ``None`` for a k-fold split of
    ``train`` (``folds`` parts, ``seed``), or for ``folds=1`` (fit on the whole file, no test).
    ``data`` is the file's name as reported, ``label`` the estimator's. The field names are
    those of the results file's records.
    """

    key: str
    data: str
    train: str
    test: str | None
    read: dict[str, Any]
    fold: int
    folds: int
    seed: int
    estimator: str
    label: str
    params: dict[str, Any]
    time_limit: float | None


@dataclass
class SweepSpec:
    """A sweep as read from its file: its tasks and where their results go."""

    jobs: list[SweepJob]
    document: dict[str, Any]
    output: Path | None = None
    retries: int = DEFAULT_RETRIES
    margin: float = DEFAULT_MARGIN


def read_document(path: Path) -> dict[str, Any]:
    """The spec file as a dictionary: TOML (tomllib, or tomli before Python 3.11) or JSON."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SatdtError(f"cannot read the sweep spec {path}: {exc.strerror}") from None
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise SatdtError(f"{path} is not valid JSON: {exc}") from None
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise SatdtError(
                f"reading {path.name} needs tomllib (Python 3.11+) or tomli: pip install tomli, "
                "or write the spec as JSON"
            ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SatdtError(f"{path} is not valid TOML: {exc}") from None


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _digest(path: str) -> str:
    """The content hash of a data file (a changed file makes new tasks)."""
    sha = hashlib.sha256()
    try:
        with open(path, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                sha.update(block)
    except OSError:
        return "unreadable"  # the task fails in the worker and records why
    return sha.hexdigest()[:16]


def job_key(fields: dict[str, Any]) -> str:
    """The hash that names a task: data (name and content), estimator, parameters, fold, limit."""
    text = json.dumps(fields, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _data_files(entry: dict[str, Any], base: Path) -> list[tuple[str, str, str | None, int | None]]:
    """``(name, train, test, fold)`` of a data entry: globs relative to ``base``.

    ``split = "files"`` pairs every training file ``...train<K>...`` with its ``...test<K>...``.
    """
    patterns = _as_list(entry.get("files", []))
    if not patterns:
        raise SatdtError("every [[data]] entry needs files = [...] (paths or globs)")
    paired = entry.get("split", "kfold") == "files"
    if entry.get("split", "kfold") not in ("kfold", "files"):
        raise SatdtError(f"split must be 'kfold' or 'files', got {entry['split']!r}")
    found = []
    for pattern in patterns:
        full = pattern if Path(pattern).is_absolute() else str(base / pattern)
        matches = sorted(glob(full)) or ([] if any(c in pattern for c in "*?[") else [full])
        if not matches:
            raise SatdtError(f"no data file matches {pattern!r} (relative to {base})")
        for path in matches:
            name = os.path.relpath(path, base)  # in the key; reports show the file name
            if not paired:
                found.append((name, os.path.abspath(path), None, None))
                continue
            match = list(_SPLIT_FILE.finditer(Path(path).name))
            if not match:
                raise SatdtError(
                    f"split = 'files' needs training files named like name.train0.csv, got {path}"
                )
            last = match[-1]
            test_name = (
                Path(path).name[: last.start()] + "test" + Path(path).name[last.start() + 5 :]
            )
            test = str(Path(path).with_name(test_name))
            stem = Path(path).name[: last.start()].rstrip("._-")
            found.append(
                (
                    os.path.relpath(str(Path(path).with_name(stem)), base),
                    os.path.abspath(path),
                    os.path.abspath(test),
                    int(last.group(1)),
                )
            )
    return found


def _grid(params: dict[str, Any], grid: dict[str, Any]) -> list[dict[str, Any]]:
    """Every combination of the grid's values, each over the fixed ``params``."""
    names = list(grid)
    return [
        {**params, **dict(zip(names, values, strict=True))}
        for values in product(*(_as_list(grid[n]) for n in names))
    ]


def _check_estimator_name(name: str) -> None:
    if name not in ESTIMATORS and ":" not in name:
        raise SatdtError(
            f"estimator must be one of {sorted(ESTIMATORS)} or 'module:Class', got {name!r}"
        )


def build_jobs(document: dict[str, Any], base: Path) -> list[SweepJob]:
    """Expand a spec document into its tasks (paths in it are relative to ``base``).

    The document has ``data`` (a list of ``{files, target, input_format, sep, drop, split}``),
    ``estimator`` (a list of ``{name, estimator, params, grid}``), and ``folds`` (default 5;
    1: fit on the whole file, no test), ``seed`` (default 0) and ``time_limit`` (seconds, a
    number or a list; default none).
    """
    known = {"data", "estimator", "folds", "seed", "time_limit", "output", "retries", "margin"}
    unknown = set(document) - known
    if unknown:
        raise SatdtError(
            f"unknown keys in the sweep spec: {sorted(unknown)}; known: {sorted(known)}"
        )
    folds = document.get("folds", 5)
    seed = document.get("seed", 0)
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 1:
        raise SatdtError(f"folds must be a positive integer, got {folds!r}")
    limits = [None if t is None else float(t) for t in _as_list(document.get("time_limit"))]
    for limit in limits:
        if limit is not None and not limit > 0:
            raise SatdtError(f"time_limit must be positive seconds, got {limit!r}")
    estimators = _as_list(document.get("estimator", []))
    if not estimators:
        raise SatdtError("the sweep spec needs at least one [[estimator]]")
    jobs = []
    for entry in _as_list(document.get("data", [])):
        read = {
            k: entry[k]
            for k in ("target", "input_format", "sep", "drop")
            if entry.get(k) is not None
        }
        for name, train, test, file_fold in _data_files(entry, base):
            digest = _digest(train) + ("" if test is None else _digest(test))
            fold_ids = [file_fold] if test is not None else range(folds if folds > 1 else 1)
            for est in estimators:
                kind = est.get("estimator", "tree")
                _check_estimator_name(kind)
                label = est.get("name", kind)
                for params, limit, fold in product(
                    _grid(dict(est.get("params", {})), dict(est.get("grid", {}))), limits, fold_ids
                ):
                    n_folds = 0 if test is not None else folds
                    key = job_key(
                        dict(data=name, digest=digest, read=read, estimator=kind, label=label,
                             params=params, fold=fold, folds=n_folds, seed=seed, time_limit=limit)
                    )  # fmt: skip
                    jobs.append(
                        SweepJob(key, Path(name).name, train, test, read, fold, n_folds, seed, kind,
                                 label, params, limit)
                    )  # fmt: skip
    if not jobs:
        raise SatdtError("the sweep spec needs at least one [[data]] entry with files")
    return jobs


def load_spec(
    source: str | os.PathLike[str] | dict[str, Any], base: str | None = None
) -> SweepSpec:
    """Read a sweep spec (a ``.toml`` or ``.json`` file, or a dictionary) and build its tasks.

    Paths in a file are relative to the file; in a dictionary, to ``base`` (default: the
    current directory). An ``output`` key names the results file (relative likewise).
    """
    if isinstance(source, dict):
        document, root = source, Path(base or ".").resolve()
    else:
        path = Path(source)
        document, root = read_document(path), path.resolve().parent
    output = document.get("output")
    return SweepSpec(
        jobs=build_jobs(document, root),
        document=document,
        output=None if output is None else root / output,
        retries=int(document.get("retries", DEFAULT_RETRIES)),
        margin=float(document.get("margin", DEFAULT_MARGIN)),
    )
