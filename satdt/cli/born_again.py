"""``satdt born-again``: the born-again tree of a forest file, its summary and its files."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from ..core.errors import NotProvenWarning, SatdtError
from ..estimators.born_again import born_again_forest, load_ensemble
from ..estimators.tree import OptimalTreeClassifier
from ..models.forest import Forest
from ..models.forest_io import write_forest
from .files import save_model_file, write_output
from .messages import EXIT_OK
from .render import render_tree
from .reports import search_lines
from .status import Status

_OBJECTIVES = {
    "depth": "the minimum depth",
    "size": "the fewest leaves",
    "depth_then_size": "the fewest leaves among the trees of minimum depth",
}


def born_again_command(args: argparse.Namespace, started: float) -> int:
    """Read the forest, find its born-again tree, print it and its summary, write its files."""
    status = Status(not args.quiet, sys.stderr)
    status.show(f"reading {args.forest}")
    forest = load_ensemble(args.forest, args.vote)
    try:
        with warnings.catch_warnings():  # the summary says what is not proven
            warnings.simplefilter("ignore", NotProvenWarning)
            model = born_again_forest(
                forest, args.objective, args.time_limit, started=started, on_event=status.event
            )
    finally:
        status.clear()
    write_output(render_tree(model, args.format), args.output)
    if not args.quiet:
        to_stdout = args.format == "text" and not args.output
        print("\n".join(born_again_summary(model)), file=sys.stdout if to_stdout else sys.stderr)
        sys.stdout.flush()
    if args.save:
        save_model_file(args.save, model.tree_, model.schema_, model.result_)
        if not args.quiet:
            print(f"model saved to {args.save}", file=sys.stderr)
    if args.export_ba:
        _export_ba(args.export_ba, model, Path(args.forest).stem)
        if not args.quiet:
            print(f"tree written in BA-Trees' format to {args.export_ba}", file=sys.stderr)
    return EXIT_OK


def _export_ba(path: str, model: OptimalTreeClassifier, dataset: str) -> None:
    """The tree as a forest of one tree in BA-Trees' text format (as BA-Trees writes its
    born-again trees: ``ENSEMBLE: BA``)."""
    one = Forest.from_tree(model.tree_, model.n_features_in_)
    try:
        write_forest(path, one, dataset=dataset or "satdt", ensemble="BA")
    except OSError as exc:
        raise SatdtError(f"cannot write {path}: {exc.strerror}; choose another path") from None


def born_again_summary(model: OptimalTreeClassifier) -> list[str]:
    """The summary lines after a born-again tree: depth and leaves (proven or bounded), the
    objective, the route and what it did, the check, the time."""
    result, tree = model.result_, model.tree_
    stats = result.stats
    if result.proven_optimal:
        proof = "proven minimum"
    else:
        reason = f" ({result.stop_reason})" if result.stop_reason else ""
        proof = f"not proven{reason}; {_bound_phrase(result.objective, stats)}"
    if stats.objective == "depth":
        lines = [
            f"depth: {tree.depth} ({proof})",
            f"leaves: {tree.n_leaves} ({tree.n_nodes} nodes)",
        ]
    else:
        lines = [f"leaves: {tree.n_leaves} ({tree.n_nodes} nodes; {proof})", f"depth: {tree.depth}"]
    lines.append(f"objective: {_OBJECTIVES[stats.objective]}")
    lines.append(f"method: born-again, {stats.route} route")
    lines += search_lines(result)
    if stats.interrupted:
        lines.append("interrupted: the best tree found so far")
    lines.append(f"time: {result.runtime:.3f} s")
    return lines


def _bound_phrase(objective: str, stats) -> str:
    if objective == "depth":
        return f"the minimum depth is at least {stats.depth_bound}"
    return f"the fewest leaves are at least {max(stats.leaves_bound, 1)}"
