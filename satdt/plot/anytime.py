"""Anytime curves: the incumbent's objective value over time, drawn with matplotlib."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import SatdtError
from ..task.objectives import OBJECTIVES
from ._mpl import check_plot_target

if TYPE_CHECKING:
    from ..task.result import SearchResult


def plot_history(
    result: SearchResult,
    path: str | Path,
    title: str | None = None,
    *,
    log_time: bool = False,
) -> None:
    """Draw the incumbent's objective value over time as a step plot and save it to ``path``.

    One step per entry of ``result.history``, held until ``result.runtime``; a dot marks each
    new incumbent. Where the search recorded its proven lower bound over time
    (``result.lower_bounds``: the consistency searches), it is drawn as a second, dashed step
    curve, so the gap between the bounds shows at every moment; otherwise, when the search
    did not prove its last tree optimal, the final lower bound is a dashed line. The format
    follows the file extension (PNG by default).

    Parameters
    ----------
    result
        A search's result (``model.result_``).
    path
        The image file to write.
    title
        The figure's title; default: the final value and whether it is proven.
    log_time
        A logarithmic time axis (incumbents found in the first milliseconds become visible).

    Raises
    ------
    SatdtError
        If matplotlib is missing, the format is unknown, or the file cannot be written.
    """
    check_plot_target(path)
    from matplotlib.figure import Figure  # a Figure without pyplot needs no display or backend

    runtime = float(result.runtime)
    times = [float(incumbent.elapsed) for incumbent in result.history]
    values = [float(incumbent.value) for incumbent in result.history]
    if not times:  # a result made by hand: only its final tree is known
        times, values = [runtime], [float(result.objective_value)]
    end = max(runtime, times[-1])
    if log_time:  # a log axis has no 0: start a decade below the first positive time
        positive = [t for t in [*times, end] if t > 0]
        start = min(positive) / 10 if positive else 1e-3
        times = [max(t, start) for t in times]
        end = max(end, start * 10)
    else:
        start = 0.0

    figure = Figure(figsize=(7, 4.2), layout="constrained")
    axes = figure.add_subplot()
    if times[0] > start:
        axes.axvspan(start, times[0], color="0.92", linewidth=0, label="no tree yet")
    axes.step([*times, end], [*values, values[-1]], where="post", color="C0", linewidth=1.8)
    axes.plot(times, values, "o", color="C0", markersize=4, label="new incumbent")
    if result.lower_bounds:
        bound_times = [max(float(bound.elapsed), start) for bound in result.lower_bounds]
        bounds = [float(bound.value) for bound in result.lower_bounds]
        axes.step(
            [*bound_times, end],
            [*bounds, bounds[-1]],
            where="post",
            color="C3",
            linestyle="--",
            linewidth=1.2,
            label=f"proven lower bound (last {bounds[-1]:g})",
        )
    elif not result.proven_optimal and math.isfinite(result.lower_bound):
        axes.axhline(
            result.lower_bound,
            color="C3",
            linestyle="--",
            linewidth=1,
            label=f"proven lower bound {result.lower_bound:g}",
        )
    axes.legend(loc="upper right", frameon=False, fontsize=9)
    if log_time:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        axes.set_xscale("log")
        axes.set_xlim(start, end * 1.3)
        axes.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axes.xaxis.set_minor_formatter(NullFormatter())
    else:
        axes.set_xlim(0, end * 1.02 if end > 0 else 1)
    axes.set_xlabel("time (s, log scale)" if log_time else "time (s)")
    axes.set_ylabel(OBJECTIVES[result.objective].unit)
    axes.grid(True, alpha=0.3)
    if title is None:
        proof = "proven optimal" if result.proven_optimal else "not proven"
        title = f"{result.objective} {result.objective_value:g} ({proof})"
    axes.set_title(title, fontsize=10)
    try:
        figure.savefig(path, dpi=120)
    except OSError as exc:
        raise SatdtError(f"cannot write {path}: {exc.strerror or exc}") from None
