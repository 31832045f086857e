"""What the learning commands print: the model (text, JSON or DOT), a Pareto front, the
summary after it, warnings in command-line words, and the accuracy on a test file."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import NotProvenWarning
from ..data import Dataset, read_with_schema
from ..estimators.tree import OptimalTreeClassifier, ParetoFront
from ..models.base import Model
from ..search.registry import METHODS
from ..task.objectives import OBJECTIVES
from .messages import cli_message
from .reports import background_lines, diagram_lines, search_lines

_INDENTED_NODES = 2000  # JSON output of larger models is not indented


def _numpy_scalar_value(value: object) -> object:
    """``json.dumps``'s ``default``: a NumPy scalar as its Python value; anything else refused."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def leaves_phrase(model: Model) -> str:
    """ "13 leaves" for a tree; empty for a model without leaves of its own (a diagram)."""
    n_leaves = getattr(model, "n_leaves", None)
    return "" if n_leaves is None else ("1 leaf" if n_leaves == 1 else f"{n_leaves} leaves")


def proof_phrase(result, sep: str) -> str:
    """What is proven of an error: optimal, within the permitted gap, or only a lower bound."""
    if result.proven_optimal:
        return "proven optimal"
    if result.gap > 0:
        return (
            f"within {result.gap:g} of the optimum (max_gap){sep}lower bound {result.lower_bound:g}"
        )
    return f"not proven{sep}lower bound {result.lower_bound:g}"


def tree_summary(model: OptimalTreeClassifier, dataset: Dataset) -> list[str]:
    """The summary lines after a tree: objective and proof, shape, method, preparation, time."""
    result = model.result_
    tree = result.model
    preparation = result.preparation
    lines = []
    if not OBJECTIVES[result.objective].consistency:
        n = len(dataset.y)
        proof = proof_phrase(result, "; ")
        if result.proven_optimal and "quantile" in preparation.binarization:
            proof += " for these binary features only"
        if result.cost_matrix is not None:
            error = tree.count_error()
            cost = f"{result.training_error:g}"
            if model.leaf_penalty > 0:
                lines.append(
                    f"objective: {result.objective_value:.6g} = cost / weight + "
                    f"{model.leaf_penalty:g} * leaves ({proof})"
                )
            else:
                cost += f" ({proof})"
            lines.append(
                f"cost: {cost}; errors: {error:g} of {n} rows, accuracy {1 - error / n:.4f}"
            )
        elif model.leaf_penalty > 0:
            error = tree.count_error()
            lines.append(
                f"objective: {result.objective_value:.6g} = errors / weight + "
                f"{model.leaf_penalty:g} * leaves ({proof})"
            )
            lines.append(f"errors: {error:g} of {n} rows, accuracy {1 - error / n:.4f}")
        else:
            error = result.objective_value
            lines.append(f"errors: {error:g} of {n} rows ({proof}), accuracy {1 - error / n:.4f}")
        budget = "any depth" if model.max_depth is None else f"at most {model.max_depth}"
        lines.append(f"depth: {tree.depth} ({budget})")
        lines.append(f"nodes: {tree.n_nodes} ({leaves_phrase(tree)})")
    else:
        proof = (
            "proven minimum"
            if result.proven_optimal
            else f"not proven; the minimum is at least {result.lower_bound:g}"
        )
        if result.objective == "size":
            lines.append(
                f"nodes: {tree.n_nodes} ({'; '.join(filter(None, [leaves_phrase(tree), proof]))})"
            )
            scope = (
                "the minimum depth"
                if model.max_depth is None
                else f"depth at most {model.max_depth}"
            )
            lines.append(f"depth: {tree.depth} (among trees of {scope})")
        else:
            lines.append(f"depth: {tree.depth} ({proof})")
            lines.append(f"nodes: {tree.n_nodes} ({leaves_phrase(tree)})")
    method = METHODS[model.method_]
    lines.append(f"method: {method.name}{' (auto)' if model.method == 'auto' else ''}")
    lines += search_lines(result)
    if preparation.relabelled_rows:
        lines.append(
            f"relabelled rows (majority): {preparation.relabelled_rows} "
            "(training errors of this tree)"
        )
    if preparation.binarization:
        lines.append(
            f"binary features: {preparation.binary_features} after reduction "
            f"({preparation.binarization})"
        )
    lines += [f"note: {cli_message(note)}" for note in preparation.notes]
    if result.stats.interrupted:
        lines.append("interrupted: the best tree found so far")
    lines += background_lines(result)
    lines.append(f"time: {result.runtime:.3f} s")
    return lines


def _render_model(fitted: Any, fmt: str, document: Callable[[], dict[str, Any]]) -> str:
    """A model as ``text``, ``dot`` or ``json``: ``document()`` (the model and its result),
    indented for people unless the model is large (the C encoder is ten times faster)."""
    if fmt == "dot":
        return fitted.to_dot() + "\n"
    if fmt == "json":
        indent = 1 if fitted.n_nodes <= _INDENTED_NODES else None
        return json.dumps(document(), indent=indent, default=_numpy_scalar_value) + "\n"
    return fitted.export_text() + "\n"


def render_tree(model: OptimalTreeClassifier, fmt: str) -> str:
    """A fitted estimator's tree as ``text``, ``json`` (with the result) or ``dot``."""
    result = model.result_
    fitted = result.model
    return _render_model(
        fitted,
        fmt,
        lambda: {
            "kind": fitted.kind,
            fitted.kind: fitted.to_dict(),
            "objective": result.objective,
            "objective_value": result.objective_value,
            "method": model.method_,
            "depth": fitted.depth,
            "n_nodes": fitted.n_nodes,
            "n_splits": fitted.n_splits,
            "n_leaves": fitted.n_leaves,
            "proven_optimal": result.proven_optimal,
            "lower_bound": result.lower_bound,
            "stop_reason": result.stop_reason,
            **(
                {"errors": fitted.count_error(), "leaf_penalty": model.leaf_penalty}
                if not OBJECTIVES[result.objective].consistency
                else {}
            ),
            **({"cost": result.training_error} if result.cost_matrix is not None else {}),
            "runtime": result.runtime,
            "stats": result.stats.as_dict(),
            "preparation": result.preparation.as_dict(),
        },
    )


def render_front(front: ParetoFront, fmt: str) -> str:
    """The depth/size Pareto front: a table (text), or JSON with every tree."""
    if fmt == "json":
        document = {
            "points": [
                {"depth": d, "n_nodes": n, "proven_optimal": proven, "tree": tree.to_dict()}
                for d, n, tree, proven in front
            ],
            "stop_reason": front.stop_reason,
        }
        return json.dumps(document, indent=1, default=_numpy_scalar_value) + "\n"
    if fmt == "dot":
        return front[-1][2].to_dot() + "\n"
    lines = ["depth  nodes  leaves  tree depth  proven"]
    for depth, n_nodes, tree, proven in front:
        lines.append(
            f"{depth:>5}  {n_nodes:>5}  {tree.n_leaves:>6}  {tree.depth:>10}  {'yes' if proven else 'no'}"
        )
    lines.append(front.stop_reason)
    lines.append("")
    lines.append(f"smallest tree ({front[-1][1]} nodes):")
    lines.append(front[-1][2].export_text())
    return "\n".join(lines) + "\n"


def render_diagram(model: Any, fmt: str) -> str:
    """A fitted diagram estimator's diagram as ``text``, ``json`` (with the result) or ``dot``."""
    result, fitted = model.result_, model.diagram_
    return _render_model(
        fitted,
        fmt,
        lambda: {
            "kind": fitted.kind,
            fitted.kind: fitted.to_dict(),
            "objective": model.objective,
            "objective_value": result.objective_value,
            "method": model.method_,
            "n_nodes": fitted.n_nodes,
            "n_splits": fitted.n_splits,
            "n_leaves": fitted.n_leaves,
            "depth": fitted.depth,
            "proven_optimal": result.proven_optimal,
            "lower_bound": result.lower_bound,
            "runtime": result.runtime,
            "stats": result.stats.as_dict(),
        },
    )


def diagram_summary(model: Any, dataset: Dataset) -> list[str]:
    """The summary lines after a diagram: objective and proof, shape, route, starts, time."""
    result, fitted = model.result_, model.diagram_
    n = len(dataset.y)
    # the diagram reads the design matrix (categorical columns one-hot), as dataset.X is
    errors = int((fitted.predict(dataset.X) != np.asarray(dataset.y)).sum())
    proof = (
        "proven optimal"
        if result.proven_optimal
        else f"not proven; lower bound {result.lower_bound:.6g}"
    )
    what = "decision nodes" if model.objective == "size" else "objective (18)"
    return [
        f"{what}: {result.objective_value:.6g} ({proof})",
        f"decision nodes: {fitted.n_splits} (and {fitted.n_terminals} terminals), depth: "
        f"{fitted.depth}, training errors: {errors} of {n} rows",
        f"method: {model.method_}",
        *_diagram_report(model.method_, result.stats),
        f"time: {result.runtime:.3g} s",
    ]


def _diagram_report(method: str, stats: Any) -> list[str]:
    """The route's own summary lines, and the starts every error route began from."""
    lines = diagram_lines(method, stats)
    starts = [
        f"{what} {value:.6g}"
        for what, value in (
            ("Step-1 heuristic", stats.heuristic_objective),
            (f"best tree of depth {stats.tree_depth}", stats.tree_objective),
        )
        if value == value and method != "tree"  # not NaN
    ]
    if starts:
        lines.append("starts: " + ", ".join(starts))
    return lines


def print_summary(args: argparse.Namespace, summary: str, caught: list) -> None:
    """The summary after the model (stdout with a text model there, else stderr), then warnings."""
    to_stdout = args.format == "text" and not args.output
    print(summary, file=sys.stdout if to_stdout else sys.stderr)
    sys.stdout.flush()
    for warning in caught:
        if issubclass(warning.category, NotProvenWarning):
            print(f"warning: {cli_message(str(warning.message))}", file=sys.stderr)


def print_test_accuracy(args: argparse.Namespace, schema: Any, fitted: Any) -> None:
    """Accuracy of a fitted model on ``--test``, read with the training schema."""
    test = read_with_schema(
        args.test, schema, input_format=args.input_format, require_target=True, sep=args.sep
    )
    accuracy = float(np.mean(fitted.predict(test.X) == test.y))
    print(f"test accuracy: {accuracy:.4f} ({len(test.y)} rows of {args.test})")
