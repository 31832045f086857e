"""The sweep's report: rows aggregated over folds, the depths chosen by cross-validation,
markdown and plots."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class Row:
    """One line of the report: a file, an estimator configuration, a depth and a time limit."""

    data: str
    estimator: str
    max_depth: Any
    time_limit: float | None
    runs: int
    failed: int
    test_accuracy: tuple[float, float]  # mean, std over the folds with a test part
    train_error: tuple[float, float]
    proven: int
    runtime: tuple[float, float]
    nodes: float
    primal_integral: float  # mean over runs with a history (NaN otherwise)


def config_name(record: dict[str, Any]) -> str:
    """An estimator configuration as shown: its label and the parameters besides ``max_depth``."""
    params = {k: v for k, v in record["params"].items() if k != "max_depth"}
    shown = " ".join(f"{k}={v}" for k, v in sorted(params.items()))
    return f"{record['label']} {shown}".strip()


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    if not values:
        return math.nan, math.nan
    array = np.asarray(values, dtype=float)
    return float(array.mean()), float(array.std(ddof=1)) if len(array) > 1 else 0.0


def best_known(results: Iterable[dict[str, Any]]) -> dict[tuple[Any, ...], float]:
    """The lowest objective value any run reached, per (file, fold, max_depth, objective)."""
    best: dict[tuple[Any, ...], float] = {}
    for r in results:
        if r["status"] == "ok" and r.get("objective_value") is not None:
            key = (r["data"], r["fold"], r["params"].get("max_depth"), r["objective"])
            best[key] = min(best.get(key, math.inf), r["objective_value"])
    return best


def run_primal_integral(record: dict[str, Any], best: dict[tuple[Any, ...], float]) -> float:
    """The primal integral of a run's incumbents (horizon: its time limit, else its runtime)."""
    from ..task.result import primal_integral

    if record["status"] != "ok" or not record.get("history"):
        return math.nan
    key = (record["data"], record["fold"], record["params"].get("max_depth"), record["objective"])
    horizon = record["time_limit"] or record["runtime"]
    return primal_integral(record["history"], best[key], max(horizon, record["history"][-1][0]))


def _group_key(record: dict[str, Any]) -> tuple[Any, ...]:
    depth = record["params"].get("max_depth")
    return (
        record["data"],
        config_name(record),
        -1 if depth is None else depth,
        record["time_limit"] or 0,
    )


def aggregate(results: Sequence[dict[str, Any]]) -> list[Row]:
    """The report's rows: per file x estimator configuration x max_depth x time limit."""
    best = best_known(results)
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault(_group_key(r), []).append(r)
    rows = []
    for key in sorted(groups, key=lambda k: tuple(map(str, k[:2])) + k[2:]):
        members = groups[key]
        ok = [r for r in members if r["status"] == "ok"]
        integrals = [v for v in (run_primal_integral(r, best) for r in ok) if not math.isnan(v)]
        rows.append(
            Row(
                data=key[0],
                estimator=key[1],
                max_depth=members[0]["params"].get("max_depth"),
                time_limit=members[0]["time_limit"],
                runs=len(members),
                failed=len(members) - len(ok),
                test_accuracy=_mean_std(
                    [r["test_accuracy"] for r in ok if r.get("test_accuracy") is not None]
                ),
                train_error=_mean_std([r["train_error"] for r in ok]),
                proven=sum(bool(r.get("proven_optimal")) for r in ok),
                runtime=_mean_std([r["runtime"] for r in ok]),
                nodes=float(np.mean([r["nodes"] for r in ok if r.get("nodes") is not None]))
                if any(r.get("nodes") is not None for r in ok)
                else math.nan,
                primal_integral=float(np.mean(integrals)) if integrals else math.nan,
            )
        )
    return rows


def cv_depths(rows: Sequence[Row]) -> dict[tuple[str, str, float | None], Any]:
    """The ``max_depth`` chosen by cross-validation per (file, estimator, time limit).

    The depth with the highest mean test accuracy; ties go to the shallower tree. Rows without
    test accuracy (``folds = 1``) choose nothing.
    """
    chosen: dict[tuple[str, str, float | None], tuple[float, Any]] = {}
    for row in rows:
        accuracy = row.test_accuracy[0]
        if math.isnan(accuracy) or row.max_depth is None:
            continue
        key = (row.data, row.estimator, row.time_limit)
        best = chosen.get(key)
        if best is None or accuracy > best[0] or (accuracy == best[0] and row.max_depth < best[1]):
            chosen[key] = (accuracy, row.max_depth)
    return {key: depth for key, (_, depth) in chosen.items()}


def report_markdown(rows: Sequence[Row]) -> str:
    """The aggregated table and the cross-validated depths, as markdown."""

    def pm(pair: tuple[float, float], digits: int = 3) -> str:
        return "–" if math.isnan(pair[0]) else f"{pair[0]:.{digits}f} ± {pair[1]:.{digits}f}"

    lines = [
        "| data | estimator | max_depth | time limit | runs | failed | test accuracy | "
        "training error | proven | runtime s | nodes | primal integral |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ok = r.runs - r.failed
        lines.append(
            f"| {r.data} | {r.estimator} | {'–' if r.max_depth is None else r.max_depth} | "
            f"{'–' if r.time_limit is None else f'{r.time_limit:g}'} | {r.runs} | {r.failed} | "
            f"{pm(r.test_accuracy)} | {pm(r.train_error)} | {r.proven}/{ok} | "
            f"{pm(r.runtime)} | {'–' if math.isnan(r.nodes) else f'{r.nodes:.1f}'} | "
            f"{'–' if math.isnan(r.primal_integral) else f'{r.primal_integral:.3f}'} |"
        )
    chosen = cv_depths(rows)
    if chosen:
        lines += ["", "| data | estimator | time limit | depth chosen by cross-validation |"]
        lines.append("|---|---|---:|---:|")
        for (data, estimator, limit), depth in sorted(chosen.items(), key=lambda kv: str(kv[0])):
            shown = "–" if limit is None else f"{limit:g}"
            lines.append(f"| {data} | {estimator} | {shown} | {depth} |")
    return "\n".join(lines) + "\n"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")


def _curve_name(record: dict[str, Any]) -> str:
    limit = record["time_limit"]
    return config_name(record) + (f" ({limit:g} s)" if limit else "")


def plot_report(results: Sequence[dict[str, Any]], directory: str | os.PathLike[str]) -> list[Path]:
    """Draw the report's PNG plots into ``directory``; returns the files written.

    Per data file: test accuracy vs depth and runtime vs depth (mean ± std over folds, one
    line per estimator configuration), and per file and depth the anytime curves (the
    incumbents' objective value over time, every fold) with the mean primal integral in the
    legend. Needs matplotlib (the ``plot`` extra).
    """
    from ..plot import check_plot_target

    check_plot_target(what="plot_report")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    rows = [r for r in aggregate(results) if r.max_depth is not None]
    best = best_known(results)
    written = []
    for data in sorted({r.data for r in rows}):
        figure = Figure(figsize=(11, 4.2), layout="constrained")
        accuracy_ax, runtime_ax = figure.subplots(1, 2)
        for estimator in sorted({r.estimator for r in rows if r.data == data}):
            mine = sorted((r for r in rows if r.data == data and r.estimator == estimator),
                          key=lambda r: (r.time_limit or 0, r.max_depth))  # fmt: skip
            for limit in sorted({r.time_limit or 0 for r in mine}):
                line = [r for r in mine if (r.time_limit or 0) == limit]
                name = estimator + (f" ({limit:g} s)" if limit else "")
                depths = [r.max_depth for r in line]
                for ax, values in (
                    (accuracy_ax, [r.test_accuracy for r in line]),
                    (runtime_ax, [r.runtime for r in line]),
                ):
                    ax.errorbar(depths, [v[0] for v in values], yerr=[v[1] for v in values],
                                marker="o", capsize=3, label=name)  # fmt: skip
        for ax in (accuracy_ax, runtime_ax):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        accuracy_ax.set(xlabel="max_depth", ylabel="test accuracy", title=f"{data}: accuracy")
        runtime_ax.set(xlabel="max_depth", ylabel="runtime (s)", yscale="log",
                       title=f"{data}: runtime")  # fmt: skip
        accuracy_ax.legend(fontsize="small")
        path = out / f"{_slug(data)}_depth.png"
        figure.savefig(path, dpi=110)
        written.append(path)
        for depth in sorted({r.max_depth for r in rows if r.data == data}):
            runs = [r for r in results if r["data"] == data and r["status"] == "ok"
                    and r["params"].get("max_depth") == depth and r.get("history")]  # fmt: skip
            if not runs:
                continue
            figure = Figure(figsize=(7, 4.2), layout="constrained")
            ax = figure.subplots()
            curves: dict[str, list[dict[str, Any]]] = {}
            for r in runs:
                curves.setdefault(_curve_name(r), []).append(r)
            for number, (name, members) in enumerate(curves.items()):
                colour = f"C{number % 10}"
                for r in members:
                    times = [h[0] for h in r["history"]] + [r["runtime"]]
                    values = [h[1] for h in r["history"]] + [r["history"][-1][1]]
                    ax.step(times, values, where="post", color=colour, alpha=0.7)
                mean = np.nanmean([run_primal_integral(r, best) for r in members])
                ax.plot([], [], color=colour, label=f"{name}: primal integral {mean:.3f}")
            ax.set(xlabel="time (s)", ylabel=runs[0]["objective"] or "objective",
                   title=f"{data}, max_depth {depth}: incumbents (every fold)")  # fmt: skip
            ax.legend(fontsize="small")
            path = out / f"{_slug(data)}_anytime_d{depth}.png"
            figure.savefig(path, dpi=110)
            written.append(path)
    return written
