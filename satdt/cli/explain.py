"""``satdt explain``: formal explanations of a saved model's predictions (:mod:`satdt.explain`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..core.errors import SatdtError
from ..data import read_with_schema
from ..explanations.explainer import explain, redundancy
from ..models.files import load_model
from .files import write_output
from .messages import EXIT_OK


def explain_command(args: argparse.Namespace) -> int:
    """Explain the rows of a file with a saved model: text or JSON, then the paths' redundancy."""
    if args.limit < 1:
        raise SatdtError(f"--limit must be an integer >= 1, got {args.limit}")
    if args.draw:
        from ..plot import check_plot_target

        check_plot_target(args.draw, what="--draw")
    fitted, schema = load_model(args.model)
    data = read_with_schema(args.data, schema, input_format=args.input_format, sep=args.sep)
    explanations = explain(
        fitted,
        data.X,
        args.rows,
        enumerate_axps=args.all_axps,
        limit=args.limit,
        time_limit=args.time_limit,
    )
    if args.draw:
        _draw(fitted, explanations, args.draw, args.show)
    summary = redundancy(explanations)
    if args.format == "json":
        document = {"explanations": [e.to_dict() for e in explanations], "summary": summary}
        write_output(json.dumps(document, indent=2) + "\n", args.output)
        return EXIT_OK
    lines = [str(e) for e in explanations]
    lines.append(
        f"paths: {summary['rows']} rows; {summary['redundant_rows']:.0%} of them test columns "
        f"that their smallest AXp does not need ({summary['mean_redundancy']:.0%} of a path's "
        "columns on average)"
    )
    write_output("\n".join(lines) + "\n", args.output)
    return EXIT_OK


def _draw(fitted: object, explanations: list, path: str, show: str) -> None:
    """One picture per row: ``path`` itself for one row, else ``path``'s name + ``-row<R>``."""
    from ..plot import save_explanation

    target = Path(path)
    for explanation in explanations:
        if show == "cxp" and not explanation.cxps:
            raise SatdtError(
                f"--show cxp: row {explanation.row} has no CXp (every row gets its class): "
                "draw an AXp instead (--show smallest_axp)"
            )
        file = target
        if len(explanations) > 1:
            file = target.with_name(f"{target.stem}-row{explanation.row}{target.suffix}")
        save_explanation(fitted, explanation, file, show=show)


def rashomon_command(args: argparse.Namespace) -> int:
    """Count the Rashomon set of a table; its values, the columns' shares, the best trees."""
    from ..estimators.canonical import minimum_depth_trees
    from ..estimators.rashomon import minimum_size_trees, rashomon_set
    from .files import read_training

    if args.reliance and args.depth:
        raise SatdtError(
            "--reliance goes with --epsilon or --size (the consistent trees of --depth have no "
            "error to grow): leave out one of them"
        )
    data = read_training(args)
    if args.depth:
        rashomon = minimum_depth_trees(
            data,
            None,
            args.max_depth,
            time_limit=args.time_limit,
            max_thresholds=args.max_thresholds,
        )
        title = (
            f"consistent trees of depth <= {args.max_depth} up to symmetry (the minimum depth "
            f"is {rashomon.optimum})"
        )
    elif args.size:
        rashomon = minimum_size_trees(
            data, None, args.max_depth, max_thresholds=args.max_thresholds
        )
        title = f"consistent trees of depth <= {args.max_depth} with {rashomon.optimum} nodes"
    else:
        rashomon = rashomon_set(
            data,
            None,
            args.max_depth,
            epsilon=args.epsilon,
            leaf_penalty=args.leaf_penalty,
            max_thresholds=args.max_thresholds,
        )
        title = (
            f"trees of depth <= {args.max_depth} within {args.epsilon:g} of the optimum "
            f"{rashomon.optimum:.6g}"
        )
    reliance = rashomon.model_class_reliance() if args.reliance else None
    shares = rashomon.feature_importance()
    best = list(rashomon.trees(limit=args.show))
    unit = "nodes" if args.depth else "objective value"
    if args.format == "json":
        document = {
            "count": rashomon.count,
            "optimum": rashomon.optimum,
            "epsilon": 0.0 if args.depth else rashomon.epsilon,
            "histogram": [[value, count] for value, count in rashomon.histogram().items()],
            "feature_shares": shares,
            "trees": [tree.to_dict() for tree in best],
        }
        if reliance is not None:
            document["model_class_reliance"] = {k: list(v) for k, v in reliance.items()}
        write_output(json.dumps(document, indent=2) + "\n", args.output)
        return EXIT_OK
    lines = [
        f"{title}: {rashomon.count}",
        f"{unit}: trees",
        *(f"  {value:.6g}: {count}" for value, count in rashomon.histogram().items()),
        "share of the trees that split on each column:",
        *(
            f"  {name}: {share:.1%}"
            for name, share in sorted(shares.items(), key=lambda item: -item[1])
            if share > 0
        ),
    ]
    if reliance is not None:
        lines.append("model class reliance (the error's growth when the column is switched):")
        lines += [f"  {name}: {low:.4g} to {high:.4g}" for name, (low, high) in reliance.items()]
    for rank, tree in enumerate(best, 1):
        lines += [f"tree {rank}:", tree.export_text()]
    write_output("\n".join(lines) + "\n", args.output)
    return EXIT_OK
