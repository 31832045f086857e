"""``satdt sweep`` (a grid of fits, resumable, locally or on Dask) and ``satdt report``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..core.errors import SatdtError
from .messages import EXIT_INFEASIBLE, EXIT_OK
from .status import SweepBar


def _values(text: str) -> list[Any]:
    """``3,4`` -> ``[3, 4]``: numbers, ``none``, ``true``/``false``, else words."""
    values: list[Any] = []
    for word in text.split(","):
        try:
            values.append(json.loads(word.lower() if word.lower() in ("true", "false") else word))
        except json.JSONDecodeError:
            values.append(None if word.lower() == "none" else word)
    return values


def _sweep_document(args: argparse.Namespace) -> tuple[dict[str, Any], str | None]:
    """The sweep spec as a dictionary, the flags replacing its keys; and its directory."""
    from ..sweep import read_document

    document: dict[str, Any] = {}
    base = None
    if args.spec:
        document = read_document(Path(args.spec))
        base = str(Path(args.spec).resolve().parent)
    if args.data:
        entry: dict[str, Any] = {"files": args.data}
        entry.update({k: v for k, v in (("target", args.target), ("split", args.split)) if v})
        document["data"] = [entry]
    if args.param or args.estimator:
        grid: dict[str, Any] = {}
        for item in args.param or []:
            name, sep, text = item.partition("=")
            if not sep or not name:
                raise SatdtError(f"--param takes NAME=V1,V2, got {item!r}")
            grid[name.strip()] = _values(text)
        kind = args.estimator or "tree"
        document["estimator"] = [{"name": kind, "estimator": kind, "grid": grid}]
    if args.time_limit:
        document["time_limit"] = _values(args.time_limit)
    for name in ("folds", "seed", "retries", "margin"):
        if getattr(args, name) is not None:
            document[name] = getattr(args, name)
    if not document.get("data") or not document.get("estimator"):
        raise SatdtError(
            "a sweep needs data and estimators: give a SPEC file, or --data and --param"
        )
    return document, base


def sweep_command(args: argparse.Namespace) -> int:
    """Run the missing tasks of a sweep, appending their results; print what was done."""
    from ..sweep import load_spec, run_sweep

    document, base = _sweep_document(args)
    spec = load_spec(document, base=base)
    output = args.output or spec.output or "sweep.jsonl"
    if args.dry_run:
        print(f"{len(spec.jobs)} tasks; results in {output}")
        return EXIT_OK
    bar = SweepBar(sys.stderr, args.quiet)
    try:
        summary = run_sweep(
            spec,
            output,
            jobs=args.jobs,
            scheduler=args.scheduler,
            max_tasks=args.max_tasks,
            retry_failed=args.retry_failed,
            on_progress=bar,
        )
    finally:
        bar.clear()
    p = summary.progress
    print(
        f"{p.total} tasks: {p.done} run now ({p.failed} failed), {p.skipped} already in "
        f"{summary.path}; {p.elapsed:.1f} s"
    )
    for record in summary.failures[:10]:
        print(
            f"failed: {record['data']} fold {record['fold']} {record['params']}: {record['error']}"
        )
    if summary.interrupted:
        print("satdt: interrupted; run the same command again to continue", file=sys.stderr)
        return 130
    return EXIT_INFEASIBLE if p.failed else EXIT_OK


def report_command(args: argparse.Namespace) -> int:
    """Print the table of a sweep's results; draw its plots with ``--plots``."""
    from ..sweep import aggregate, plot_report, read_results, report_markdown

    if not Path(args.results).is_file():
        raise SatdtError(f"file not found: {args.results} (expected a sweep's results)")
    headers, results = read_results(args.results)
    if not results:
        raise SatdtError(f"{args.results} holds no results yet")
    versions = sorted({h.get("satdt", "?") for h in headers})
    failed = sum(r["status"] != "ok" for r in results)
    print(f"{len(results)} results ({failed} failed) of satdt {', '.join(versions)}\n")
    sys.stdout.write(report_markdown(aggregate(results)))
    if args.plots:
        written = plot_report(results, args.plots)
        print(f"\n{len(written)} plots written to {args.plots}")
    return EXIT_OK
