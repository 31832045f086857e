"""``satdt diagram``: an optimal decision diagram by a route of the table of diagram searches."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

import numpy as np

from ..core.errors import NotProvenWarning, SatdtError
from .draw import check_drawings, draw, write_report
from .files import read_training, save_model_file, write_output
from .messages import EXIT_OK
from .render import diagram_summary, print_summary, print_test_accuracy, render_diagram


def _diagram_estimator(args: argparse.Namespace) -> Any:
    from ..estimators.diagram import OptimalDiagramClassifier

    try:
        widths = tuple(int(w) for w in args.widths.split(","))
    except ValueError:
        raise SatdtError(
            f"--widths takes integers separated by commas, got {args.widths!r}"
        ) from None
    fairness = None
    if args.fair_column is not None:
        fairness = {"column": args.fair_column, "ratio": args.fair_ratio, "kind": args.fair_kind}
        if args.fair_positive is not None:
            fairness["positive"] = args.fair_positive
    return OptimalDiagramClassifier(
        objective="size" if args.size else "error",
        method=args.method,
        widths=widths,
        alpha=args.alpha,
        split="multivariate" if args.multivariate else "univariate",
        time_limit=args.time_limit,
        min_flow=args.min_flow,
        max_splits=args.max_splits,
        fairness=fairness,
        milp_solver=args.milp_solver,
        class_weight=args.class_weight,
        cost_matrix=args.cost_matrix,
    )


def diagram_command(args: argparse.Namespace, started: float) -> int:
    """Train a diagram, print it (text, JSON or DOT) and a summary; save it if asked."""
    model = _diagram_estimator(args)
    check_drawings(args)
    dataset = read_training(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NotProvenWarning)
        model.fit_dataset(dataset, started=started)
    result, fitted = model.result_, model.diagram_
    write_output(render_diagram(model, args.format), args.output)
    if not args.quiet:
        print_summary(args, "\n".join(diagram_summary(model, dataset)), caught)
    if args.test:
        print_test_accuracy(args, model.schema_, fitted)
    if args.save:
        save_model_file(args.save, fitted, model.schema_, result)
        if not args.quiet:
            print(f"model saved to {args.save}", file=sys.stderr)
    if args.draw and fitted.counts is None:  # the picture shows the training counts
        y_index = np.searchsorted(fitted.classes, np.asarray(dataset.y))
        fitted = fitted.with_counts(dataset.X, y_index)
    draw(args, fitted, result, dataset, "diagram")
    write_report(args, model, dataset)
    return EXIT_OK
