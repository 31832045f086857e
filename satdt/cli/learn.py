"""``satdt infer`` and ``satdt fit`` (a tree from the table of searches), ``satdt predict``."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import NotProvenWarning, SatdtError
from ..data import read_with_schema
from ..estimators.tree import OptimalTreeClassifier
from ..models.files import load_model
from ..search.registry import method_params
from ..task.objectives import OBJECTIVES
from .draw import check_drawings, draw, draw_title, write_report
from .files import read_training, save_model_file, write_output
from .messages import EXIT_OK
from .render import (
    print_summary,
    print_test_accuracy,
    proof_phrase,
    render_front,
    render_tree,
    tree_summary,
)
from .status import Status


def tree_estimator(args: argparse.Namespace) -> OptimalTreeClassifier:
    """The estimator a learning command asks for, every option from the command line."""
    if args.command == "infer":
        objective = "size" if args.size or args.pareto else "depth"
        extra: dict[str, Any] = dict(max_nodes=args.max_nodes, resolve=args.resolve)
    else:
        objective = "error"
        extra = dict(
            max_nodes=args.max_nodes,
            leaf_penalty=args.leaf_penalty,
            min_support=args.min_support,
            class_weight=args.class_weight,
            cost_matrix=getattr(args, "cost_matrix", None),
        )
    options = {name: getattr(args, name) for name in method_params() if hasattr(args, name)}
    method = args.method
    if (getattr(args, "trace", False) or getattr(args, "draw_loop", None)) and method == "auto":
        method = "sat"  # the trace shows the SAT calls: auto's box DP would make none
    if getattr(args, "draw_loop", None) and method != "sat":
        raise SatdtError(f"--draw-loop draws the SAT calls: use --method sat, not {method}")
    return OptimalTreeClassifier(
        objective=objective,
        method=method,
        max_depth=args.max_depth,
        time_limit=args.time_limit,
        max_thresholds=args.max_thresholds,
        max_memory_mb=args.max_memory_mb,
        missing=args.missing,
        n_jobs=args.n_jobs,
        **extra,
        **options,
    )


def learn_command(args: argparse.Namespace, model: OptimalTreeClassifier, started: float) -> int:
    """Read, fit and report; the time limit counts from ``started`` (reading included)."""
    plot_path = getattr(args, "plot", None)
    if plot_path:  # before the search: a missing matplotlib must not cost a long fit
        from ..plot import check_plot_target

        check_plot_target(plot_path, what="--plot")
    check_drawings(args)
    trace = None
    if getattr(args, "trace", False):
        trace = sys.stdout if args.format == "text" and not args.output else sys.stderr
    status = Status(not args.quiet, sys.stderr, trace)
    status.show(f"reading {args.data}")
    dataset = read_training(args)
    status.line_numbers = dataset.line_numbers
    model.on_improve = status.improve
    front = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NotProvenWarning)
        try:
            if getattr(args, "pareto", False):
                front = model.pareto_dataset(dataset, on_event=status.event)
            else:
                model.fit_dataset(dataset, on_event=status.event, started=started)
        finally:
            status.clear()
    if front is not None:
        write_output(render_front(front, args.format), args.output)
        if args.save:
            save_model_file(args.save, model.tree_, model.schema_, model.result_)
        draw(args, front, model.result_, dataset, "Pareto front")
        write_report(args, model, dataset)
        return EXIT_OK
    write_output(render_tree(model, args.format), args.output)
    if not args.quiet:
        print_summary(args, "\n".join(tree_summary(model, dataset)), caught)
    if args.test:
        print_test_accuracy(args, model.schema_, model.tree_)
    if args.save:
        save_model_file(args.save, model.tree_, model.schema_, model.result_)
        if not args.quiet:
            print(f"model saved to {args.save}", file=sys.stderr)
    if plot_path:
        from ..plot import plot_history

        plot_history(
            model.result_,
            plot_path,
            title=_plot_title(args, model, len(dataset.y)),
            log_time=args.plot_log_time,
        )
        if not args.quiet:
            print(f"anytime curve saved to {plot_path}", file=sys.stderr)
    draw(args, model.tree_, model.result_, dataset, "tree")
    write_report(args, model, dataset)
    return EXIT_OK


def _plot_title(args: argparse.Namespace, model: OptimalTreeClassifier, n_rows: int) -> str:
    """The title of a ``--plot`` curve: dataset and method, the bound on the depth asked for;
    the final value and its proof."""
    result = model.result_
    proof = proof_phrase(result, ", ")
    if OBJECTIVES[result.objective].consistency:
        unit = OBJECTIVES[result.objective].unit
        return (
            f"{Path(args.data).name}: {model.method_}, {n_rows} rows\n"
            f"{unit} {result.objective_value:g} ({proof}), {result.runtime:.2f} s"
        )
    return (
        f"{Path(args.data).name}: {model.method_}, depth <= {model.max_depth}\n"
        f"{result.objective_value:g} errors of {n_rows} rows ({proof}), {result.runtime:.2f} s"
    )


def predict_command(args: argparse.Namespace) -> int:
    """Predict the rows of a file with a saved model (or only draw the model)."""
    if args.data is None and not args.draw:
        raise SatdtError("give the DATA to predict, or --draw FILE to draw the model")
    check_drawings(args)
    fitted, schema = load_model(args.model)
    if args.draw:
        from ..plot import save_tree

        save_tree(fitted, args.draw, title=f"{Path(args.model).name}: {draw_title(fitted, None)}")
        print(f"model drawn to {args.draw}", file=sys.stderr)
        if args.data is None:
            return EXIT_OK
    data = read_with_schema(args.data, schema, input_format=args.input_format, sep=args.sep)
    predicted = fitted.predict(data.X)
    lines = [schema.target] + [str(p) for p in predicted.tolist()]
    write_output("\n".join(lines) + "\n", args.output)
    if data.y is not None:
        accuracy = float(np.mean(predicted == data.y))
        print(f"accuracy: {accuracy:.4f} ({len(predicted)} rows)", file=sys.stderr)
    return EXIT_OK
