"""``satdt explain``: formal explanations of a saved model's predictions (:mod:`satdt.explain`)."""

from __future__ import annotations

import argparse
import json

from ..data import read_with_schema
from ..errors import SatdtError
from ..explanations import explain, redundancy
from ..model import load_model
from .files import write_output
from .messages import EXIT_OK


def explain_command(args: argparse.Namespace) -> int:
    """Explain the rows of a file with a saved model: text or JSON, then the paths' redundancy."""
    if args.limit < 1:
        raise SatdtError(f"--limit must be an integer >= 1, got {args.limit}")
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
