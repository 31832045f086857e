"""The ``satdt`` command line: the only package that prints for people.

``satdt infer data.csv`` prints the minimum-depth tree that classifies every row correctly;
``satdt fit data.csv --max-depth K`` the tree of depth at most K with the fewest errors;
``satdt predict model.json data.csv`` applies a saved model. Exit codes: 0 a tree was
produced (proven optimal or not), 1 no tree satisfies the constraints, 2 usage or data error.

Modules: ``parser`` (the parser, built from the tables of searches), ``commands`` (``main``),
one module per group of commands (``learn``: infer, fit, predict; ``diagram``; ``encode``:
encode, decode; ``sweep``: sweep, report; ``warmup``), ``render`` (what they print),
``status`` (the live lines on stderr), ``draw`` (the drawing options), ``files`` (what they
read and write), ``messages`` (library messages in flag words, exit codes).
"""

from __future__ import annotations

import importlib
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from ..errors import honour_interrupt, interrupt_handled, on_sigint

__all__ = ["EXIT_INFEASIBLE", "EXIT_OK", "EXIT_USAGE", "build_parser", "cli_message", "main"]

_LATER = {
    "EXIT_INFEASIBLE": "messages",
    "EXIT_OK": "messages",
    "EXIT_USAGE": "messages",
    "cli_message": "messages",
    "build_parser": "parser",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (:func:`satdt.cli.commands.main`).

    Ctrl-C is never lost: satdt's SIGINT handler (:func:`satdt.errors.on_sigint`) is
    installed first (from the main thread, over Python's default one only), so a Ctrl-C
    that Python drops is raised again at the next checkpoint; one that lands before a
    command runs (while NumPy, PySAT and the rest load) ends the run at once with exit code
    130 and no traceback.
    """
    try:
        return _run(argv)
    except KeyboardInterrupt:
        print("satdt: interrupted", file=sys.stderr)
        return 130


def _run(argv: Sequence[str] | None) -> int:
    install = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    if install:
        signal.signal(signal.SIGINT, on_sigint)
    unraisable = sys.unraisablehook

    def quiet_ctrl_c(dropped: Any) -> None:
        """Python dropped an exception; a Ctrl-C it dropped is signalled again, to be raised
        where it can propagate (and a checkpoint would raise it, see on_sigint)."""
        if not isinstance(dropped.exc_value, KeyboardInterrupt):
            unraisable(dropped)
        elif install:
            signal.raise_signal(signal.SIGINT)

    sys.unraisablehook = quiet_ctrl_c
    try:
        commands = importlib.import_module(".commands", __name__)
        honour_interrupt()
        return commands.main(argv)
    finally:
        interrupt_handled()
        sys.unraisablehook = unraisable
        if install:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def __getattr__(name: str) -> Any:
    module = _LATER.get(name)
    if module is None:
        raise AttributeError(f"module 'satdt.cli' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
