"""The ``satdt`` command line: the only module that prints for people.

``satdt infer data.csv`` prints the minimum-depth tree that classifies every row correctly;
``satdt fit data.csv --max-depth K`` the tree of depth at most K with the fewest errors;
``satdt predict model.json data.csv`` applies a saved model. Exit codes: 0 a tree was
produced (proven optimal or not), 1 no tree satisfies the constraints, 2 usage or data error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from . import __version__, methods
from .data import Dataset, read_csv, read_with_schema
from .errors import InfeasibleError, NotProvenWarning, SatdtError
from .learner import OptimalTreeClassifier, ParetoFront
from .model import Model, load_model, model_dict, save_model
from .result import Event, Progress, SatCall, SearchResult

EXIT_OK, EXIT_INFEASIBLE, EXIT_USAGE = 0, 1, 2
_INDENTED_NODES = 2000  # JSON output of larger models is not indented
_EXIT_RESERVE = 0.3  # seconds of --time-limit kept for writing the output and exiting
# The objectives of each learning command.
COMMAND_OBJECTIVES = {"infer": ("depth", "size"), "fit": ("error",)}
# Library messages name parameters; these are the command-line flags that set them.
_FLAGS = {
    "max_depth": "--max-depth",
    "max_nodes": "--max-nodes",
    "time_limit": "--time-limit",
    "max_thresholds": "--max-thresholds",
    "max_memory_mb": "--max-memory-mb",
    "resolve": "--resolve",
    "method": "--method",
    "sep": "--sep",
    "drop": "--drop",
    **{name: param.flag for name, param in methods.method_params().items()},
}
_PARAMETER = re.compile(
    r"(?<![\w'\"-])("
    + "|".join(map(re.escape, _FLAGS))
    + r")(?:=(['\"]?)([^'\"\s,;)]+)\2)?(?![\w'\"])"
)


def cli_message(text: str) -> str:
    """A library message with parameter names turned into flags: ``max_depth=3`` -> ``--max-depth 3``."""

    def flag(match: re.Match[str]) -> str:
        name, value = match.group(1), match.group(3)
        return _FLAGS[name] if value is None else f"{_FLAGS[name]} {value}"

    return _PARAMETER.sub(flag, text)


def _add_data_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", help="training data: CSV with a header, or label-first .txt")
    parser.add_argument(
        "--target", help="label column (name or 0-based index); default: the last column"
    )
    parser.add_argument("--drop", default="", help="comma-separated columns to ignore")
    parser.add_argument(
        "--input-format",
        choices=("auto", "csv", "labelfirst"),
        default="auto",
        help="auto: .txt files are space-separated with the label first, others CSV",
    )
    parser.add_argument(
        "--sep",
        metavar="CHAR",
        help="CSV separator (default: detected among , ; tab |); e.g. --sep ';'",
    )


def _add_method_options(parser: argparse.ArgumentParser, command: str) -> None:
    """--method and the options of the methods this command can run, from the table of searches."""
    objectives = COMMAND_OBJECTIVES[command]
    available = methods.methods_for(objectives)
    lines = [f"{m.name}: {m.summary}" for m in available]
    parser.add_argument(
        "--method",
        default="auto",
        choices=["auto", *(m.name for m in available)],
        help="the search (default auto): " + "; ".join(lines),
    )
    seen: set[str] = set()
    for method in available:
        for param in method.params:
            if param.name in seen:
                continue
            seen.add(param.name)
            parser.add_argument(
                param.flag,
                dest=param.name,
                default=param.default,
                type=param.parse,
                metavar=param.name.upper(),
                help=f"method {method.name}: {param.help}",
            )
    parser.add_argument(
        "--max-thresholds",
        type=int,
        metavar="Q",
        help="at most Q quantile thresholds per numeric column (optimal for those only)",
    )
    parser.add_argument(
        "--max-memory-mb",
        type=float,
        default=1024,
        metavar="MB",
        help="memory budget of the binary features (default 1024); over it, fewer thresholds",
    )


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--time-limit", type=float, metavar="S", help="wall-clock seconds; then the best tree found"
    )
    parser.add_argument(
        "--format", choices=("text", "json", "dot"), default="text", help="output format"
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the output here instead of stdout"
    )
    parser.add_argument(
        "--save", metavar="MODEL", help="save the model (tree + input schema) as JSON"
    )
    parser.add_argument("--test", metavar="FILE", help="also report accuracy on this labelled file")
    parser.add_argument("--quiet", action="store_true", help="no live status line and no summary")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="satdt", description="Optimal decision trees with logic.")
    parser.add_argument("--version", action="version", version=f"satdt {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    infer = commands.add_parser(
        "infer",
        help="the minimum-depth tree that classifies every row correctly (SAT)",
        description="Find the minimum-depth decision tree consistent with every row.",
    )
    _add_data_options(infer)
    infer.add_argument(
        "--max-depth",
        type=int,
        metavar="K",
        help="fail (exit 1) if no consistent tree of depth <= K exists",
    )
    infer.add_argument(
        "--resolve",
        choices=("majority",),
        help="relabel contradictory rows with their group's majority label",
    )
    infer.add_argument(
        "--max-nodes",
        type=int,
        metavar="N",
        help="only trees with at most N nodes (internal + leaves); exit 1 if none is consistent",
    )
    infer.add_argument(
        "--trace",
        action="store_true",
        help="print one line per SAT call: depth, round, examples, variables, clauses, answer, "
        "counterexamples, time (runs the SAT search when --method is auto)",
    )
    shape = infer.add_mutually_exclusive_group()
    shape.add_argument(
        "--size",
        action="store_true",
        help="the fewest nodes among the trees of minimum depth (or of depth <= --max-depth)",
    )
    shape.add_argument(
        "--pareto",
        action="store_true",
        help="the fewest nodes at each depth from the minimum to --max-depth (default: minimum + 2)",
    )
    _add_method_options(infer, "infer")
    _add_output_options(infer)

    fit = commands.add_parser(
        "fit",
        help="the tree of depth <= K with the fewest training errors (DP)",
        description="Find the decision tree of depth at most K with the fewest misclassified rows.",
    )
    _add_data_options(fit)
    fit.add_argument(
        "--max-depth", type=int, metavar="K", required=True, help="maximum depth of the tree"
    )
    _add_method_options(fit, "fit")
    _add_output_options(fit)
    fit.add_argument(
        "--plot",
        metavar="FILE",
        help="draw the training error of the incumbents over time to FILE (.png, .pdf, .svg; needs matplotlib)",
    )
    fit.add_argument(
        "--plot-log-time", action="store_true", help="with --plot: a logarithmic time axis"
    )

    encode = commands.add_parser(
        "encode",
        help="write the SAT formula of a dataset as DIMACS CNF, every variable explained",
        description=(
            "Write the full perfect-tree formula (all rows, formulas (1)-(6); with --max-nodes also "
            "(7)-(10)) in DIMACS CNF, with comment lines giving the meaning of every variable."
        ),
    )
    _add_data_options(encode)
    encode.add_argument("--depth", type=int, metavar="K", help="depth of the perfect tree")
    encode.add_argument(
        "--diagram",
        metavar="W0,W1,...",
        help="instead of a tree: the diagrams of this skeleton (nodes per layer) consistent "
        "with the data (encodings/diagram.md)",
    )
    encode.add_argument(
        "--max-nodes", type=int, metavar="N", help="at most N nodes (internal + leaves)"
    )
    encode.add_argument(
        "-o", "--output", metavar="FILE", help="write the CNF here instead of stdout"
    )

    decode = commands.add_parser(
        "decode",
        help="turn a SAT solver's answer to 'satdt encode' back into a tree",
        description=(
            "Read a formula written by 'satdt encode' and a solver's output (competition format, "
            "MiniSat's result file, or a list of literals) and print the tree it describes."
        ),
    )
    decode.add_argument("formula", help="the CNF file written by 'satdt encode'")
    decode.add_argument("solution", help="the solver's output")
    decode.add_argument("-o", "--output", metavar="FILE", help="also write the tree as JSON here")

    predict = commands.add_parser(
        "predict",
        help="predict with a saved model",
        description="Predict labels with a model saved by --save.",
    )
    predict.add_argument("model", help="model JSON written by 'satdt infer --save'")
    predict.add_argument(
        "data",
        help="rows to predict (same columns as the training data; the label column may be absent)",
    )
    predict.add_argument("--input-format", choices=("auto", "csv", "labelfirst"), default="auto")
    predict.add_argument("--sep", metavar="CHAR", help="CSV separator (default: detected)")
    predict.add_argument(
        "-o", "--output", metavar="FILE", help="write predictions (CSV) here instead of stdout"
    )
    _add_diagram_command(commands)
    _add_sweep_commands(commands)
    warmup = commands.add_parser(
        "warmup",
        help="compile the search kernels now (Docker images, CI, cluster bootstrap)",
        description=(
            "Compile every Numba kernel of the DP searches (or of the methods given) into "
            "Numba's on-disk cache, or load them if they are there; prints what it did and how "
            "long it took. Later runs load them in a fraction of a second."
        ),
    )
    warmup.add_argument(
        "--method",
        action="append",
        choices=[m.name for m in methods.METHODS.values() if m.kernels(None)]
        + [f"diagram-{name}" for name in _diagram_routes()],
        help="only the kernels of this method (repeatable; diagram-ROUTE: a diagram route's "
        "tree starts); default: every method's",
    )
    warmup.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="processes compiling at once (default: the cores, at most 2)",
    )
    warmup.add_argument(
        "--verbose", action="store_true", help="also the compile time of each kernel"
    )
    return parser


def _diagram_routes() -> list[str]:
    from .diagram_search import DIAGRAM_METHODS

    return [name for name, route in DIAGRAM_METHODS.items() if route.tree_methods]


def _add_diagram_command(commands: Any) -> None:
    """``satdt diagram``: an optimal decision diagram by a route of the table of diagram searches."""
    from .diagram_search import DIAGRAM_METHODS, ROUTES

    routes = "; ".join(f"{m.name}: {m.summary}" for m in DIAGRAM_METHODS.values())
    diagram = commands.add_parser(
        "diagram",
        help="an optimal decision diagram of a skeleton (MaxSAT, MILP, tree DP or SAT)",
        description=(
            "Train the decision diagram of a skeleton (nodes per layer) with the least objective "
            "(18) of Florio et al. (training errors / rows + alpha x share of nodes used), "
            "anytime from the Step-1 heuristic and the best tree of the skeleton. --size: the "
            "smallest diagram classifying every row correctly, by incremental SAT. Methods: "
            + routes
        ),
    )
    _add_data_options(diagram)
    diagram.add_argument(
        "--widths", default="1,2,4,4", metavar="W0,W1,...", help="nodes per layer (default 1,2,4,4)"
    )
    diagram.add_argument("--alpha", type=float, default=0.01, help="complexity weight (18)")
    diagram.add_argument(
        "--size", action="store_true", help="the smallest consistent diagram (SAT)"
    )
    diagram.add_argument(
        "--method",
        choices=ROUTES,
        default="auto",
        help="the route (default auto: see the README's rule)",
    )
    diagram.add_argument("--multivariate", action="store_true", help="hyperplane splits a.x <= b")
    diagram.add_argument("--min-flow", type=float, metavar="S", help="stability (20)")
    diagram.add_argument("--max-nodes", type=int, metavar="N", help="parsimony: at most N nodes")
    diagram.add_argument("--fair-column", metavar="COL", help="two-valued column of the groups")
    diagram.add_argument("--fair-ratio", type=float, default=0.8, help="fairness ratio (19)")
    diagram.add_argument(
        "--fair-kind",
        choices=("parity", "false_positive", "false_negative"),
        default="parity",
        help="what the fairness ratio compares",
    )
    diagram.add_argument("--fair-positive", metavar="LABEL", help="the positive class")
    diagram.add_argument(
        "--solver", choices=("auto", "scip", "highs"), default="auto", help="MILP solver (milp)"
    )
    _add_output_options(diagram)


def _diagram_estimator(args: argparse.Namespace) -> Any:
    from .diagrams import OptimalDiagramClassifier

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
        max_nodes=args.max_nodes,
        fairness=fairness,
        solver=args.solver,
    )


def _diagram_report(method: str, stats: Any) -> list[str]:
    """The route's own summary lines, and the starts every error route began from."""
    from .diagram_search import DIAGRAM_METHODS

    lines = list(DIAGRAM_METHODS[method].report(stats))
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


def _print_summary(args: argparse.Namespace, summary: str, caught: list) -> None:
    """The summary after the model (stdout with a text model there, else stderr), then warnings."""
    to_stdout = args.format == "text" and not args.output
    print(summary, file=sys.stdout if to_stdout else sys.stderr)
    sys.stdout.flush()
    for warning in caught:
        if issubclass(warning.category, NotProvenWarning):
            print(f"warning: {cli_message(str(warning.message))}", file=sys.stderr)


def _print_test_accuracy(args: argparse.Namespace, schema: Any, fitted: Any) -> None:
    """Accuracy of a fitted model on ``--test``, read with the training schema."""
    test = read_with_schema(
        args.test, schema, input_format=args.input_format, require_target=True, sep=args.sep
    )
    accuracy = float(np.mean(fitted.predict(test.X) == test.y))
    print(f"test accuracy: {accuracy:.4f} ({len(test.y)} rows of {args.test})")


def _diagram(args: argparse.Namespace, started: float) -> int:
    """Train a diagram, print it (text, JSON or DOT) and a summary; save it if asked."""
    model = _diagram_estimator(args)
    dataset = _read_training(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NotProvenWarning)
        model.fit_dataset(dataset, started=started)
    result, fitted = model.result_, model.diagram_
    if args.format == "dot":
        text = fitted.to_dot() + "\n"
    elif args.format == "json":
        document = {
            "kind": fitted.kind,
            fitted.kind: fitted.to_dict(),
            "objective": model.objective,
            "objective_value": result.objective_value,
            "method": model.method_,
            "n_nodes": fitted.n_nodes,
            "depth": fitted.depth,
            "proven_optimal": result.proven_optimal,
            "lower_bound": result.lower_bound,
            "runtime": result.runtime,
            "stats": result.stats.as_dict(),
        }
        text = json.dumps(document, indent=1, default=_json_default) + "\n"
    else:
        text = fitted.export_text() + "\n"
    _write(text, args.output)
    if not args.quiet:
        n = len(dataset.y)
        errors = int((model.predict(dataset.X) != np.asarray(dataset.y)).sum())
        proof = (
            "proven optimal"
            if result.proven_optimal
            else f"not proven; lower bound {result.lower_bound:.6g}"
        )
        what = "nodes" if model.objective == "size" else "objective (18)"
        lines = [
            f"{what}: {result.objective_value:.6g} ({proof})",
            f"nodes: {fitted.n_nodes}, depth: {fitted.depth}, training errors: {errors} of {n} rows",
            f"method: {model.method_}",
            *_diagram_report(model.method_, result.stats),
            f"time: {result.runtime:.3g} s",
        ]
        _print_summary(args, "\n".join(lines), caught)
    if args.test:
        _print_test_accuracy(args, model.schema_, fitted)
    if args.save:
        _save(args.save, fitted, model.schema_, result)
        if not args.quiet:
            print(f"model saved to {args.save}", file=sys.stderr)
    return EXIT_OK


def _add_sweep_commands(commands: Any) -> None:
    """``satdt sweep`` (run a grid of fits, resumable) and ``satdt report`` (its table, plots)."""
    sweep = commands.add_parser(
        "sweep",
        help="fit every file x estimator x parameters x fold of a grid, locally or on Dask",
        description=(
            "Run a sweep described in SPEC (TOML or JSON; see examples/sweeps/) and/or flags; "
            "flags replace the spec's keys. One JSON line per finished task is appended to the "
            "results file; a rerun skips the tasks already there."
        ),
    )
    sweep.add_argument("spec", nargs="?", help="the sweep spec (.toml or .json)")
    sweep.add_argument("-o", "--output", metavar="RESULTS", help="results file (JSON lines)")
    sweep.add_argument(
        "--data",
        action="append",
        metavar="GLOB",
        help="data files (repeatable; replaces the spec's)",
    )
    sweep.add_argument("--target", help="with --data: the label column")
    sweep.add_argument(
        "--split",
        choices=("kfold", "files"),
        help="with --data: k-fold, or the files' own name.trainK / name.testK pairs",
    )
    sweep.add_argument(
        "--estimator", metavar="NAME", help="with --param: 'tree', 'diagram' or module:Class"
    )
    sweep.add_argument(
        "--param",
        action="append",
        metavar="NAME=V1,V2",
        help="a parameter and its values (repeatable; replaces the spec's estimators)",
    )
    sweep.add_argument("--folds", type=int, metavar="K", help="stratified k-fold (1: no test)")
    sweep.add_argument("--seed", type=int, help="seed of the folds")
    sweep.add_argument(
        "--time-limit", metavar="S[,S]", help="seconds per fit (several: one sweep per value)"
    )
    sweep.add_argument(
        "--jobs", type=int, metavar="N", help="local worker processes (default: the cores)"
    )
    sweep.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a Dask scheduler (tcp://host:8786), or local:N for a local Dask cluster",
    )
    sweep.add_argument("--retries", type=int, metavar="N", help="reruns after a worker died")
    sweep.add_argument(
        "--margin", type=float, metavar="S", help="kill a fit this long over its time limit"
    )
    sweep.add_argument("--max-tasks", type=int, metavar="N", help="run at most N missing tasks")
    sweep.add_argument("--retry-failed", action="store_true", help="rerun failed tasks too")
    sweep.add_argument("--dry-run", action="store_true", help="count the tasks and stop")
    sweep.add_argument("--quiet", action="store_true", help="no progress, only the summary")

    report = commands.add_parser(
        "report",
        help="the table of a sweep's results: mean +- std per file x estimator x depth",
        description=(
            "Aggregate a sweep's results: test accuracy and training error (mean +- std over "
            "folds), proven-optimal counts, runtime, nodes, primal integral, and the depth "
            "chosen by cross-validation."
        ),
    )
    report.add_argument("results", help="the results file written by 'satdt sweep'")
    report.add_argument(
        "--plots", metavar="DIR", help="also draw PNG plots there (needs matplotlib)"
    )


_TRACE_HEADER = "depth round examples variables   clauses answer                   time s  counterexamples added"


class _Status:
    """A one-line live status on stderr (only on a terminal), and the ``--trace`` lines."""

    def __init__(
        self, enabled: bool, stream: TextIO, trace: TextIO | None = None, line_numbers=None
    ) -> None:
        self.enabled = enabled and stream.isatty()
        self.stream = stream
        self.shown = False
        self.trace = trace
        self.line_numbers = line_numbers
        self.trace_started = False

    def show(self, text: str) -> None:
        if self.enabled:
            self.stream.write("\r\033[K" + text)
            self.stream.flush()
            self.shown = True

    def event(self, event: Event) -> None:
        if isinstance(event, SatCall):
            self.sat_call(event)
        elif isinstance(event, Progress):
            done = f" {event.done:g}/{event.total:g}" if event.total else ""
            self.show(f"{event.step}{done}")

    def sat_call(self, call: SatCall) -> None:
        if self.trace is not None:
            self.clear()
            if not self.trace_started:
                self.trace.write(_TRACE_HEADER + "\n")
                self.trace_started = True
            added = ", ".join(
                f"line {self.line_numbers[row]} ({label})" for row, label in call.counterexamples
            )
            bound = "" if call.max_leaves is None else f" <={call.max_leaves} leaves"
            self.trace.write(
                f"{call.depth:>5} {call.round:>5} {call.n_examples:>8} {call.n_vars:>9} "
                f"{call.n_clauses:>9} {call.status + bound:<20} {call.time:>8.3f}  {added}\n"
            )
            self.trace.flush()
        self.show(
            f"depth {call.depth}  round {call.round}  examples {call.n_examples}  {call.status}"
        )

    def improve(self, result: SearchResult) -> None:
        self.show(f"{result.runtime:7.2f} s  best {result.objective}: {result.objective_value:g}")

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


def _read_training(args: argparse.Namespace) -> Dataset:
    target: str | int | None = args.target
    drop = [c.strip() for c in args.drop.split(",") if c.strip()]
    return read_csv(
        args.data, target=target, drop=drop, input_format=args.input_format, sep=args.sep
    )


def _leaves(model: Model) -> str:
    """ "13 leaves" for a tree; empty for a model without leaves of its own (a diagram)."""
    n_leaves = getattr(model, "n_leaves", None)
    return "" if n_leaves is None else ("1 leaf" if n_leaves == 1 else f"{n_leaves} leaves")


def _proof(result, sep: str) -> str:
    """What is proven of an error: optimal, within the permitted gap, or only a lower bound."""
    if result.proven_optimal:
        return "proven optimal"
    if result.gap > 0:
        return (
            f"within {result.gap:g} of the optimum (max_gap){sep}lower bound {result.lower_bound:g}"
        )
    return f"not proven{sep}lower bound {result.lower_bound:g}"


def _summary(model: OptimalTreeClassifier, dataset: Dataset) -> list[str]:
    result = model.result_
    tree = result.tree
    preparation = result.preparation
    lines = []
    if result.objective == "error":
        n = len(dataset.y)
        error = result.objective_value
        proof = _proof(result, "; ")
        if result.proven_optimal and "quantile" in preparation.binarization:
            proof += " for these binary features only"
        lines.append(f"errors: {error:g} of {n} rows ({proof}), accuracy {1 - error / n:.4f}")
        lines.append(f"depth: {tree.depth} (at most {model.max_depth})")
        lines.append(f"nodes: {tree.n_nodes} ({_leaves(tree)})")
    else:
        proof = (
            "proven minimum"
            if result.proven_optimal
            else f"not proven; the minimum is at least {result.lower_bound:g}"
        )
        if result.objective == "size":
            lines.append(
                f"nodes: {tree.n_nodes} ({'; '.join(filter(None, [_leaves(tree), proof]))})"
            )
            scope = (
                "the minimum depth"
                if model.max_depth is None
                else f"depth at most {model.max_depth}"
            )
            lines.append(f"depth: {tree.depth} (among trees of {scope})")
        else:
            lines.append(f"depth: {tree.depth} ({proof})")
            lines.append(f"nodes: {tree.n_nodes} ({_leaves(tree)})")
    method = methods.METHODS[model.method_]
    lines.append(f"method: {method.name}{' (auto)' if model.method == 'auto' else ''}")
    lines += method.report(result)
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
    lines.append(f"time: {result.runtime:.3f} s")
    return lines


def _render(model: OptimalTreeClassifier, fmt: str) -> str:
    result = model.result_
    fitted = result.tree
    if fmt == "dot":
        return fitted.to_dot() + "\n"
    if fmt == "json":
        document = {
            "kind": fitted.kind,
            fitted.kind: fitted.to_dict(),
            "objective": result.objective,
            "objective_value": result.objective_value,
            "method": model.method_,
            "depth": fitted.depth,
            "n_nodes": fitted.n_nodes,
            "n_leaves": getattr(fitted, "n_leaves", None),
            "proven_optimal": result.proven_optimal,
            "lower_bound": result.lower_bound,
            "stop_reason": result.stop_reason,
            "runtime": result.runtime,
            "stats": result.stats.as_dict(),
            "preparation": result.preparation.as_dict(),
        }
        # indented for people; a large model in one line (the C encoder is ten times faster)
        indent = 1 if fitted.n_nodes <= _INDENTED_NODES else None
        return json.dumps(document, indent=indent, default=_json_default) + "\n"
    return fitted.export_text() + "\n"


def _render_front(front: ParetoFront, fmt: str) -> str:
    """The depth/size Pareto front: a table (text), or JSON with every tree."""
    if fmt == "json":
        document = {
            "points": [
                {"depth": d, "n_nodes": n, "proven_optimal": proven, "tree": tree.to_dict()}
                for d, n, tree, proven in front
            ],
            "stop_reason": front.stop_reason,
        }
        return json.dumps(document, indent=1, default=_json_default) + "\n"
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


def _json_default(value: object) -> object:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _write(text: str, output: str | None) -> None:
    """Write ``text`` to ``output`` (stdout when None); if that fails, to stdout, and say so."""
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            sys.stdout.write(text)
            raise SatdtError(
                f"cannot write {output}: {exc.strerror}; the output is printed above instead"
            ) from None
    else:
        sys.stdout.write(text)


def _save(path: str, model: Model, schema: Any, result: SearchResult) -> None:
    """Save a model with ``--save``; if that fails, print it (the saved JSON) and say so."""
    try:
        save_model(path, model, schema, result)
    except OSError as exc:
        sys.stdout.write(json.dumps(model_dict(model, schema, result), indent=1) + "\n")
        raise SatdtError(
            f"cannot save the model to {path}: {exc.strerror}; it is printed above as JSON "
            "(save it from there)"
        ) from None


# Options that name a file a command writes (checked before it reads or searches anything).
_OUTPUTS = {"output": "-o/--output", "save": "--save", "plot": "--plot"}


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse output paths that cannot be written, before any work: a missing folder, a
    folder in place of a file, no permission. Nothing is created here."""
    for name, flag in _OUTPUTS.items():
        path = getattr(args, name, None)
        if path:
            _check_writable(Path(path), flag)
    plots = getattr(args, "plots", None)
    if plots:  # a folder, created with its parents if needed
        folder = Path(plots).absolute()
        existing = next(p for p in (folder, *folder.parents) if p.exists())
        if not existing.is_dir():
            raise SatdtError(f"--plots {plots}: {existing} is a file, not a folder")
        if not os.access(existing, os.W_OK):
            raise SatdtError(f"--plots {plots}: no permission to write in {existing}")


def _check_writable(path: Path, flag: str) -> None:
    parent = path.absolute().parent
    if path.is_dir():
        raise SatdtError(f"{flag} {path} is a folder, not a file: name a file in it")
    if not parent.is_dir():
        raise SatdtError(
            f"{flag} {path}: the folder {parent} does not exist; create it or choose another path"
        )
    target = path if path.exists() else parent
    if not os.access(target, os.W_OK):
        raise SatdtError(f"{flag} {path}: no permission to write there; choose another path")


def _plot_title(args: argparse.Namespace, model: OptimalTreeClassifier, n_rows: int) -> str:
    """The title of a ``--plot`` curve: dataset, method and depth; final error and its proof."""
    result = model.result_
    proof = _proof(result, ", ")
    return (
        f"{Path(args.data).name}: {model.method_}, depth <= {model.max_depth}\n"
        f"{result.objective_value:g} errors of {n_rows} rows ({proof}), {result.runtime:.2f} s"
    )


def _process_started() -> float:
    """The ``time.perf_counter()`` value at which this process started (Linux), else now."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as uptime:
            seconds_since_boot = float(uptime.read().split()[0])
        age = seconds_since_boot - int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22
    except (OSError, ValueError, IndexError):
        return time.perf_counter()
    return time.perf_counter() - min(max(age, 0.0), 5.0)


def _learn(args: argparse.Namespace, model: OptimalTreeClassifier, started: float) -> int:
    """Read, fit and report; the time limit counts from ``started`` (reading included)."""
    plot_path = getattr(args, "plot", None)
    if plot_path:  # before the search: a missing matplotlib must not cost a long fit
        from .plot import check_plot_target

        check_plot_target(plot_path, what="--plot")
    trace = None
    if getattr(args, "trace", False):
        trace = sys.stdout if args.format == "text" and not args.output else sys.stderr
    status = _Status(not args.quiet, sys.stderr, trace)
    status.show(f"reading {args.data}")
    dataset = _read_training(args)
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
        _write(_render_front(front, args.format), args.output)
        if args.save:
            _save(args.save, model.tree_, model.schema_, model.result_)
        return EXIT_OK
    _write(_render(model, args.format), args.output)
    if not args.quiet:
        _print_summary(args, "\n".join(_summary(model, dataset)), caught)
    if args.test:
        _print_test_accuracy(args, model.schema_, model.tree_)
    if args.save:
        _save(args.save, model.tree_, model.schema_, model.result_)
        if not args.quiet:
            print(f"model saved to {args.save}", file=sys.stderr)
    if plot_path:
        from .plot import plot_history

        plot_history(
            model.result_,
            plot_path,
            title=_plot_title(args, model, len(dataset.y)),
            log_time=args.plot_log_time,
        )
        if not args.quiet:
            print(f"anytime curve saved to {plot_path}", file=sys.stderr)
    return EXIT_OK


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SatdtError(f"file not found: {path} (expected {what}); check the path") from None
    except IsADirectoryError:
        raise SatdtError(f"{path} is a directory, not {what}") from None
    except UnicodeDecodeError:
        raise SatdtError(f"{path} is not a text file (not UTF-8): expected {what}") from None


def _encode(args: argparse.Namespace) -> int:
    if args.diagram is not None:
        from .sat.diagram import encode_diagram_dimacs

        if args.depth is not None:
            raise SatdtError("--depth is for trees; a diagram's layers are given by --diagram")
        try:
            widths = [int(w) for w in args.diagram.split(",")]
        except ValueError:
            raise SatdtError(
                f"--diagram takes integers separated by commas, got {args.diagram!r}"
            ) from None
        text = encode_diagram_dimacs(_read_training(args), widths, max_nodes=args.max_nodes)
        _write(text, args.output)
        return EXIT_OK
    from .sat.dimacs import encode_dimacs

    if args.depth is None:
        raise SatdtError("give --depth K (a tree) or --diagram W0,W1,... (a diagram)")
    _write(encode_dimacs(_read_training(args), args.depth, max_nodes=args.max_nodes), args.output)
    return EXIT_OK


def _decode(args: argparse.Namespace) -> int:
    from .sat.dimacs import decode_dimacs

    tree = decode_dimacs(
        _read_text(args.formula, "a CNF file"), _read_text(args.solution, "a solver output")
    )
    print(tree.export_text())
    print(f"depth: {tree.depth}\nnodes: {tree.n_nodes} ({_leaves(tree)})")
    if args.output:
        _write(tree.to_json(indent=1) + "\n", args.output)
    return EXIT_OK


def _warmup(args: argparse.Namespace) -> int:
    """Compile (or load) the kernels and print, per group, what was done and how long it took."""
    from .dp.kernels import GROUPS, cache_dir

    print(f"{'kernels':<10} {'what':<43} {'done':<20} {'seconds':>7}")

    def report(done: Any) -> None:
        print(
            f"{done.group:<10} {GROUPS[done.group].summary:<43} {done.action:<20} "
            f"{done.seconds:>7.2f}",
            flush=True,
        )
        if args.verbose:
            for kernel, seconds in sorted(done.kernels.items(), key=lambda kv: -kv[1]):
                print(f"  {kernel:<50} {seconds:>7.2f}", flush=True)

    tic = time.perf_counter()
    names = None
    if args.method is not None:
        from .diagram_search import DIAGRAM_METHODS

        names = [
            tree
            for name in args.method
            for tree in (
                DIAGRAM_METHODS[name.removeprefix("diagram-")].tree_methods
                if name.startswith("diagram-")
                else (name,)
            )
        ]
    records = methods.warmup(names, report, args.jobs)
    total = time.perf_counter() - tic
    compiled = sum(r.action.startswith("compiled") for r in records)
    print(f"total: {total:.2f} s ({compiled} of {len(records)} groups compiled)")
    folder = cache_dir()
    where = f"Numba's cache: {folder}" if folder else "Numba cannot cache here: no writable folder"
    print(where)
    return EXIT_OK


def _predict(args: argparse.Namespace) -> int:
    fitted, schema = load_model(args.model)
    data = read_with_schema(args.data, schema, input_format=args.input_format, sep=args.sep)
    predicted = fitted.predict(data.X)
    lines = [schema.target] + [str(p) for p in predicted.tolist()]
    _write("\n".join(lines) + "\n", args.output)
    if data.y is not None:
        accuracy = float(np.mean(predicted == data.y))
        print(f"accuracy: {accuracy:.4f} ({len(predicted)} rows)", file=sys.stderr)
    return EXIT_OK


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
    from .sweep import read_document

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


class _SweepBar:
    """Sweep progress on stderr: a bar on a terminal, else a plain line every tenth of the tasks."""

    def __init__(self, stream: TextIO, quiet: bool) -> None:
        self.stream = stream
        self.tty = stream.isatty() and not quiet
        self.quiet = quiet
        self.tenth = -1

    def __call__(self, p: Any) -> None:
        finished = p.skipped + p.done
        eta = "" if p.eta is None else f"  ETA {time.strftime('%H:%M:%S', time.gmtime(p.eta))}"
        counts = f"{finished}/{p.total} done  {p.running} running  {p.failed} failed{eta}"
        if self.tty:
            filled = 30 * finished // max(p.total, 1)
            self.stream.write(f"\r\033[K[{'#' * filled}{'.' * (30 - filled)}] {counts}")
            self.stream.flush()
        elif not self.quiet and 10 * finished // max(p.total, 1) > self.tenth:
            self.tenth = 10 * finished // max(p.total, 1)
            self.stream.write(f"sweep: {counts}\n")
            self.stream.flush()

    def clear(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _sweep(args: argparse.Namespace) -> int:
    from .sweep import load_spec, run_sweep

    document, base = _sweep_document(args)
    spec = load_spec(document, base=base)
    output = args.output or spec.output or "sweep.jsonl"
    if args.dry_run:
        print(f"{len(spec.tasks)} tasks; results in {output}")
        return EXIT_OK
    bar = _SweepBar(sys.stderr, args.quiet)
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


def _report(args: argparse.Namespace) -> int:
    from .sweep import aggregate, plot_report, read_results, report_markdown

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


def _estimator(args: argparse.Namespace) -> OptimalTreeClassifier:
    """The estimator a learning command asks for, every option from the command line."""
    if args.command == "infer":
        objective = "size" if args.size or args.pareto else "depth"
        extra: dict[str, Any] = dict(max_nodes=args.max_nodes, resolve=args.resolve)
    else:
        objective, extra = "error", {}
    options = {name: getattr(args, name) for name in methods.method_params() if hasattr(args, name)}
    method = args.method
    if getattr(args, "trace", False) and method == "auto":
        method = "sat"  # the trace shows the SAT calls: auto's box DP would make none
    return OptimalTreeClassifier(
        objective=objective,
        method=method,
        max_depth=args.max_depth,
        time_limit=args.time_limit,
        max_thresholds=args.max_thresholds,
        max_memory_mb=args.max_memory_mb,
        **extra,
        **options,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 tree found, 1 infeasible, 2 usage/data error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_outputs(args)
        if args.command == "warmup":
            return _warmup(args)
        if args.command == "predict":
            return _predict(args)
        if args.command == "encode":
            return _encode(args)
        if args.command == "decode":
            return _decode(args)
        if args.command == "sweep":
            return _sweep(args)
        if args.command == "report":
            return _report(args)
        # run as a command, --time-limit covers the whole command from the process start,
        # keeping a little time for writing the model and exiting
        started = _process_started() if argv is None else time.perf_counter()
        if args.command == "diagram":
            return _diagram(args, started)
        model = _estimator(args)
        if argv is None and model.time_limit is not None and model.time_limit > 4 * _EXIT_RESERVE:
            model.time_limit -= _EXIT_RESERVE
        return _learn(args, model, started)
    except InfeasibleError as exc:
        print(f"satdt: {cli_message(str(exc))}", file=sys.stderr)
        return EXIT_INFEASIBLE
    except SatdtError as exc:
        print(f"satdt: error: {cli_message(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except NotImplementedError as exc:
        print(f"satdt: not available: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("satdt: interrupted before any tree was found", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader (e.g. `| head`) stopped reading: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
