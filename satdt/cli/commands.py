"""``main``: parse the command line, run the command, turn errors into exit codes."""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable, Sequence

from ..core.errors import InfeasibleError, SatdtError
from .files import check_outputs
from .learn import learn_command, tree_estimator
from .messages import EXIT_INFEASIBLE, EXIT_OK, EXIT_USAGE, cli_message
from .parser import build_parser

_EXIT_RESERVE = 0.3  # seconds of --time-limit kept for writing the output and exiting
# The commands that learn no model (no time limit counted from the process start), by the
# module that runs each: imported when asked for, so that ``satdt infer`` loads none of them
# (the explanations, the sweeps, ...) before its clock runs.
_COMMANDS: dict[str, tuple[str, str]] = {
    "warmup": ("warmup", "warmup_command"),
    "predict": ("learn", "predict_command"),
    "explain": ("explain", "explain_command"),
    "rashomon": ("explain", "rashomon_command"),
    "encode": ("encode", "encode_command"),
    "decode": ("encode", "decode_command"),
    "sweep": ("sweep", "sweep_command"),
    "report": ("sweep", "report_command"),
}


# The commands that learn a model other than a tree from data (their clock is the process's).
_LEARNERS: dict[str, tuple[str, str]] = {
    "diagram": ("diagram", "diagram_command"),
    "born-again": ("born_again", "born_again_command"),
}


def _command(name: str) -> Callable[..., int]:
    """The function of a command that learns no model, of ``diagram`` or of ``born-again``."""
    module, function = _COMMANDS.get(name) or _LEARNERS[name]
    return getattr(importlib.import_module(f".{module}", __package__), function)


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 tree found, 1 infeasible, 2 usage/data error)."""
    try:
        args = build_parser().parse_args(argv)
    except KeyboardInterrupt:
        print("satdt: interrupted", file=sys.stderr)
        return 130
    try:
        check_outputs(args)
        if args.command in _COMMANDS:
            return _command(args.command)(args)
        # run as a command, --time-limit covers the whole command from the process start,
        # keeping a little time for writing the model and exiting
        started = _process_started() if argv is None else time.perf_counter()
        if args.command == "diagram":
            return _command("diagram")(args, started)
        if args.command == "born-again":
            return _command("born-again")(args, started)
        model = tree_estimator(args)
        if argv is None and model.time_limit is not None and model.time_limit > 4 * _EXIT_RESERVE:
            model.time_limit -= _EXIT_RESERVE
        return learn_command(args, model, started)
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
