"""The drawing options: ``--draw`` (a model or a Pareto front) and ``--draw-loop`` (the SAT
calls), checked before any work; matplotlib is imported only when one is given. ``--report``
(the fit as an HTML page, no matplotlib needed) too."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..estimators.tree import ParetoFront
from ..task.objectives import OBJECTIVES


def check_drawings(args: argparse.Namespace) -> None:
    """Before any work: ``--draw`` and ``--draw-loop`` need matplotlib and a known format,
    ``--report`` an ``.html`` file."""
    for name, flag in (("draw", "--draw"), ("draw_loop", "--draw-loop")):
        path = getattr(args, name, None)
        if path:
            from ..plot import check_plot_target  # only then: a fit without drawings loads none

            check_plot_target(path, what=flag)
    if getattr(args, "report", None):
        from ..report import check_report_target

        check_report_target(args.report, what="--report")


def write_report(args: argparse.Namespace, estimator: Any, dataset: Any) -> None:
    """Write ``--report``: the fit as an HTML page, its rows named by their lines."""
    if getattr(args, "report", None):
        estimator.report(args.report, X=dataset)
        if not args.quiet:
            print(f"report written to {args.report}", file=sys.stderr)


def draw(args: argparse.Namespace, model: Any, result: Any, dataset: Any, what: str) -> None:
    """Write ``--draw`` (the model, or a Pareto front) and ``--draw-loop`` (the SAT calls)."""
    from .. import plot

    if getattr(args, "draw", None):
        if isinstance(model, ParetoFront):
            plot.plot_pareto(
                model, args.draw, title=f"{Path(args.data).name}: depth / size trade-off"
            )
        else:
            plot.save_tree(
                model, args.draw, title=f"{Path(args.data).name}: {draw_title(model, result)}"
            )
        if not args.quiet:
            print(f"{what} drawn to {args.draw}", file=sys.stderr)
    if getattr(args, "draw_loop", None):
        line = [f"line {n}" for n in dataset.line_numbers]
        title = (
            f"{Path(args.data).name}: the counterexample-guided loop, {len(result.trace)} SAT calls"
        )
        plot.plot_loop(result, args.draw_loop, row_names=line, title=title)
        if not args.quiet:
            print(f"SAT calls drawn to {args.draw_loop}", file=sys.stderr)


def draw_title(model: Any, result: Any) -> str:
    """``depth 4, 19 nodes (proven minimum depth)``: the title of a ``--draw`` picture."""
    shape = f"depth {model.depth}, {model.n_nodes} nodes"
    if result is None:
        return shape
    if OBJECTIVES[result.objective].consistency:
        proof = ("proven minimum " if result.proven_optimal else "not proven minimal: ") + (
            result.objective
        )
    else:
        proof = f"{result.objective} {result.objective_value:.6g}, " + (
            "proven optimal" if result.proven_optimal else "not proven"
        )
    return f"{shape} ({proof})"
