"""The ``satdt`` parser: one subcommand per command, the options of the searches built from
the table of searches (``satdt.search.registry``) and the table of diagram routes."""

from __future__ import annotations

import argparse
from typing import Any

from .. import __version__
from ..core.params import label_value
from ..dp.kernels import kernels_of
from ..search.params import tree_params
from ..search.registry import METHODS, methods_for

# The objectives of each learning command.
COMMAND_OBJECTIVES = {"infer": ("depth", "size"), "fit": ("error",)}


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
    available = methods_for(objectives)
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
            options = param.argparse_options()
            options["help"] = f"method {method.name}: {options['help']}"
            parser.add_argument(param.flag, **options)
    for name in ("missing", "max_thresholds", "max_memory_mb"):
        _add_param(parser, name)


def _add_param(parser: argparse.ArgumentParser, name: str, **overrides: Any) -> None:
    """The flag of a parameter of the tree searches (``satdt.search.params.TREE_PARAMS``): its type,
    default, metavar and help come from the table; ``overrides`` adapt it to a command."""
    param = tree_params()[name]
    options = param.argparse_options()
    if "help" in overrides and not overrides.get("required"):
        overrides["help"] += options["help"][options["help"].rindex(" (default: ") :]
    parser.add_argument(param.flag, **(options | overrides))


def _class_weight(text: str) -> Any:
    """``balanced`` or ``LABEL=WEIGHT,...`` as the estimator's ``class_weight``."""
    if text == "balanced":
        return text
    weights: dict[Any, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        label, sep, weight = item.rpartition("=")
        try:
            weights[label_value(label)] = float(weight)
        except ValueError:
            sep = ""
        if not sep:
            raise argparse.ArgumentTypeError(
                f"takes 'balanced' or LABEL=WEIGHT pairs separated by commas, got {text!r}"
            )
    return weights


def _add_class_weight(parser: argparse.ArgumentParser) -> None:
    _add_param(parser, "class_weight", type=_class_weight)


def _add_error_options(parser: argparse.ArgumentParser) -> None:
    """The options of the error objective: leaf penalty, minimum support, class weights."""
    _add_param(parser, "leaf_penalty")
    _add_param(parser, "min_support")
    _add_class_weight(parser)
    _add_param(parser, "cost_matrix")


def _add_n_jobs(parser: argparse.ArgumentParser) -> None:
    _add_param(parser, "n_jobs")


def _add_model_outputs(parser: argparse.ArgumentParser) -> None:
    """The time limit and where the model goes: every command that learns one."""
    _add_param(parser, "time_limit")
    parser.add_argument(
        "--format", choices=("text", "json", "dot"), default="text", help="output format"
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the output here instead of stdout"
    )
    parser.add_argument(
        "--save", metavar="MODEL", help="save the model (tree + input schema) as JSON"
    )


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    _add_model_outputs(parser)
    parser.add_argument(
        "--draw",
        metavar="FILE",
        help="draw the model to FILE (.png, .svg, .pdf; needs matplotlib, not Graphviz)",
    )
    parser.add_argument(
        "--report",
        metavar="FILE.html",
        help="write the fit as one self-contained HTML page: the data, the model drawn, the "
        "search, its statistics, the bounds over time, the SAT loop step by step, explanations",
    )
    parser.add_argument("--test", metavar="FILE", help="also report accuracy on this labelled file")
    parser.add_argument("--quiet", action="store_true", help="no live status line and no summary")


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command, in the order ``satdt --help`` lists them."""
    parser = argparse.ArgumentParser(prog="satdt", description="Optimal decision trees with logic.")
    parser.add_argument("--version", action="version", version=f"satdt {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_infer_command(commands)
    _add_fit_command(commands)
    _add_encode_command(commands)
    _add_decode_command(commands)
    _add_predict_command(commands)
    _add_explain_command(commands)
    _add_rashomon_command(commands)
    _add_diagram_command(commands)
    _add_born_again_command(commands)
    _add_sweep_commands(commands)
    _add_warmup_command(commands)
    return parser


def _add_infer_command(commands: Any) -> None:
    """``satdt infer``: the smallest consistent tree (depth, size, Pareto front)."""
    infer = commands.add_parser(
        "infer",
        help="the minimum-depth tree that classifies every row correctly (SAT)",
        description="Find the minimum-depth decision tree consistent with every row.",
    )
    _add_data_options(infer)
    _add_param(infer, "max_depth", help="fail (exit 1) if no consistent tree of depth <= K exists")
    _add_param(infer, "resolve")
    _add_param(infer, "max_nodes")
    infer.add_argument(
        "--trace",
        action="store_true",
        help="print one line per SAT call: depth, round, examples, variables, clauses, answer, "
        "counterexamples, time (runs the SAT search when --method is auto)",
    )
    infer.add_argument(
        "--draw-loop",
        metavar="FILE",
        help="draw each SAT call's tree and counterexamples, then the minimum, to FILE "
        "(.png, .svg, .pdf; needs matplotlib; runs the SAT search when --method is auto)",
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
    _add_n_jobs(infer)
    _add_plot_options(
        infer, "the depth (nodes with --size) of the incumbents and the proven lower bound"
    )


def _add_fit_command(commands: Any) -> None:
    """``satdt fit``: the tree of bounded depth with the least error objective."""
    fit = commands.add_parser(
        "fit",
        help="the tree of depth <= K with the fewest training errors (DP)",
        description="Find the decision tree of depth at most K with the fewest misclassified rows.",
    )
    _add_data_options(fit)
    _add_param(
        fit,
        "max_depth",
        help="maximum depth of the tree; without it, --leaf-penalty > 0 bounds the leaves and "
        "the tree may be of any depth",
    )
    _add_param(
        fit,
        "max_nodes",
        help="the fewest errors among the trees of at most N nodes (internal + leaves; a tree "
        "with k splits has 2k + 1), MurTree's and STreeD's node limit (method budget); "
        "without --max-depth the depth is free within N",
    )
    _add_error_options(fit)
    _add_method_options(fit, "fit")
    _add_output_options(fit)
    _add_n_jobs(fit)
    _add_plot_options(fit, "the training error of the incumbents")


def _add_plot_options(command: Any, what: str) -> None:
    """``--plot FILE`` (the anytime curve: ``what`` over time) and ``--plot-log-time``."""
    command.add_argument(
        "--plot",
        metavar="FILE",
        help=f"draw {what} over time to FILE (.png, .pdf, .svg; needs matplotlib)",
    )
    command.add_argument(
        "--plot-log-time", action="store_true", help="with --plot: a logarithmic time axis"
    )


def _add_encode_command(commands: Any) -> None:
    """``satdt encode``: a dataset's formula as DIMACS CNF."""
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
        "--max-nodes", type=int, metavar="N", help="a tree of at most N nodes (internal + leaves)"
    )
    encode.add_argument(
        "--max-splits", type=int, metavar="N", help="a diagram of at most N decision nodes"
    )
    encode.add_argument(
        "-o", "--output", metavar="FILE", help="write the CNF here instead of stdout"
    )


def _add_decode_command(commands: Any) -> None:
    """``satdt decode``: a solver's answer back into a tree."""
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


def _add_predict_command(commands: Any) -> None:
    """``satdt predict``: predictions of a saved model, or its drawing."""
    predict = commands.add_parser(
        "predict",
        help="predict with a saved model",
        description="Predict labels with a model saved by --save.",
    )
    predict.add_argument("model", help="model JSON written by 'satdt infer --save'")
    predict.add_argument(
        "data",
        nargs="?",
        help="rows to predict (same columns as the training data; the label column may be absent)",
    )
    predict.add_argument(
        "--draw", metavar="FILE", help="draw the model to FILE (.png, .svg, .pdf; needs matplotlib)"
    )
    predict.add_argument("--input-format", choices=("auto", "csv", "labelfirst"), default="auto")
    predict.add_argument("--sep", metavar="CHAR", help="CSV separator (default: detected)")
    predict.add_argument(
        "-o", "--output", metavar="FILE", help="write predictions (CSV) here instead of stdout"
    )


def _rows(text: str) -> list[int]:
    """``0,3,5-7`` as row indices."""
    rows: list[int] = []
    try:
        for part in filter(None, (p.strip() for p in text.split(","))):
            first, dash, last = part.partition("-")
            rows += list(range(int(first), int(last) + 1)) if dash else [int(first)]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"takes row numbers and ranges separated by commas (0,3,5-7), got {text!r}"
        ) from None
    return rows


def _add_explain_command(commands: Any) -> None:
    """``satdt explain``: why a saved model predicts what it does on some rows."""
    explain = commands.add_parser(
        "explain",
        help="why a saved model predicts what it does: abductive and contrastive explanations",
        description=(
            "For each row: the path, one subset-minimal and the smallest abductive explanation "
            "(AXp: conditions on the row's columns that force the prediction whatever the other "
            "columns hold), and every contrastive explanation (CXp: columns that, changed, can "
            "give another class, and to what); the paths' redundancy at the end."
        ),
    )
    explain.add_argument("model", help="model JSON written by 'satdt infer/fit/diagram --save'")
    explain.add_argument("data", help="rows to explain (CSV, or label-first .txt), as for predict")
    explain.add_argument(
        "--rows", type=_rows, metavar="R", help="rows to explain, 0-based: 0,3,5-7 (default: all)"
    )
    explain.add_argument(
        "--all-axps", action="store_true", help="also list every AXp of each row, smallest first"
    )
    explain.add_argument(
        "--limit", type=int, default=100, metavar="N", help="at most N AXps per row (default 100)"
    )
    explain.add_argument(
        "--time-limit", type=float, metavar="S", help="seconds per row for --all-axps"
    )
    explain.add_argument("--format", choices=("text", "json"), default="text")
    explain.add_argument(
        "--draw",
        metavar="FILE",
        help="draw the model with the row's path and its explanation marked to FILE (.png, .svg, "
        ".pdf; needs matplotlib); with several rows one file per row, FILE's name + -row<R>",
    )
    explain.add_argument(
        "--show",
        choices=("smallest_axp", "axp", "path_axp", "cxp"),
        default="smallest_axp",
        help="the explanation --draw marks (cxp: the smallest CXp; default smallest_axp)",
    )
    explain.add_argument("--input-format", choices=("auto", "csv", "labelfirst"), default="auto")
    explain.add_argument("--sep", metavar="CHAR", help="CSV separator (default: detected)")
    explain.add_argument(
        "-o", "--output", metavar="FILE", help="write the output here instead of stdout"
    )


def _add_rashomon_command(commands: Any) -> None:
    """``satdt rashomon``: every tree within epsilon of the optimum."""
    rashomon = commands.add_parser(
        "rashomon",
        help="the Rashomon set: how many trees are within epsilon of the optimum, and which",
        description=(
            "Count every tree of depth <= K whose objective (errors / rows + L x leaves) is within "
            "E of the optimum, exactly; show the objective values, each column's share of the "
            "trees that split on it, and the best trees."
        ),
    )
    _add_data_options(rashomon)
    _add_param(rashomon, "max_depth", required=True, help="the trees' depth budget")
    which = rashomon.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--epsilon",
        type=float,
        metavar="E",
        help="slack above the optimum, in the objective's unit (0: every optimal tree)",
    )
    which.add_argument(
        "--size",
        action="store_true",
        help="instead: every consistent tree with the fewest nodes at depth <= K",
    )
    which.add_argument(
        "--depth",
        action="store_true",
        help="instead: every consistent tree of depth <= K, each once up to the changes that keep "
        "its function on the training rows (K the minimum depth: every minimum-depth tree)",
    )
    _add_param(rashomon, "leaf_penalty")
    _add_param(rashomon, "max_thresholds")
    rashomon.add_argument(
        "--show", type=int, default=3, metavar="N", help="print the N best trees (default 3)"
    )
    rashomon.add_argument(
        "--time-limit", type=float, metavar="S", help="with --depth: seconds for the count"
    )
    rashomon.add_argument(
        "--reliance",
        action="store_true",
        help="with --epsilon or --size: also each column's model class reliance, the least and "
        "the most that a tree of the set relies on it (Fisher, Rudin and Dominici 2019)",
    )
    rashomon.add_argument("--format", choices=("text", "json"), default="text")
    rashomon.add_argument(
        "-o", "--output", metavar="FILE", help="write the output here instead of stdout"
    )


def _add_warmup_command(commands: Any) -> None:
    """``satdt warmup``: compile the search kernels now."""
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
        choices=[m.name for m in METHODS.values() if kernels_of(m.name)(None)]
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


def _diagram_routes() -> list[str]:
    from ..search.diagrams import DIAGRAM_METHODS

    return [name for name, route in DIAGRAM_METHODS.items() if route.tree_methods]


def _add_diagram_command(commands: Any) -> None:
    """``satdt diagram``: an optimal decision diagram by a route of the table of diagram searches."""
    from ..search.diagrams import DIAGRAM_METHODS, ROUTES

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
        help="the route (default auto: see the user guide's diagrams page)",
    )
    diagram.add_argument("--multivariate", action="store_true", help="hyperplane splits a.x <= b")
    diagram.add_argument("--min-flow", type=float, metavar="S", help="stability (20)")
    diagram.add_argument(
        "--max-splits",
        "--max-nodes",
        dest="max_splits",
        type=int,
        metavar="N",
        help="parsimony: at most N decision nodes (--max-nodes: its old name)",
    )
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
        "--milp-solver",
        "--solver",
        dest="milp_solver",
        choices=("auto", "scip", "highs"),
        default="auto",
        help="MILP solver (milp; --solver: its old name)",
    )
    _add_class_weight(diagram)
    _add_param(diagram, "cost_matrix")
    _add_output_options(diagram)


def _add_born_again_command(commands: Any) -> None:
    """``satdt born-again``: the smallest tree that decides like a tree ensemble everywhere."""
    command = commands.add_parser(
        "born-again",
        help="the smallest tree deciding like a tree ensemble everywhere (born-again tree)",
        description=(
            "Find the born-again tree of a forest written in BA-Trees' text format (Vidal & "
            "Schiffer, ICML 2020): the smallest single tree that decides like the forest on "
            "every input, proven faithful. Small cell grids go to the exact dynamic "
            "programme over the forest's cells, larger ones to a counterexample-guided SAT "
            "search over sampled cells (minimum depth)."
        ),
    )
    command.add_argument("forest", metavar="FOREST", help="the forest, in BA-Trees' text format")
    command.add_argument(
        "--objective",
        choices=("depth", "size", "depth_then_size"),
        default="depth",
        help="minimise the depth (default), the leaves, or the leaves among the trees of "
        "minimum depth",
    )
    command.add_argument(
        "--vote",
        choices=("hard", "soft"),
        help="how the forest's trees decide together (BA-Trees' files: hard, one vote per tree)",
    )
    _add_model_outputs(command)
    command.add_argument(
        "--export-ba",
        metavar="FILE",
        help="write the tree in BA-Trees' text format (a forest of one tree), for BA-Trees' tools",
    )
    command.add_argument("--quiet", action="store_true", help="no live status line and no summary")


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
