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

import contextlib
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from ..core.errors import honour_interrupt, interrupt_handled, interrupt_pending, on_sigint

__all__ = ["EXIT_INFEASIBLE", "EXIT_OK", "EXIT_USAGE", "build_parser", "cli_message", "main"]

# Seconds after a dropped Ctrl-C at which it is signalled again (the code that dropped it
# has returned by then; if not, it is dropped and signalled again once more).
_SIGNAL_AGAIN = 0.05

_LATER = {
    "EXIT_INFEASIBLE": "messages",
    "EXIT_OK": "messages",
    "EXIT_USAGE": "messages",
    "cli_message": "messages",
    "build_parser": "parser",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (:func:`satdt.cli.commands.main`).

    Ctrl-C is never lost: satdt's SIGINT handler (:func:`satdt.core.errors.on_sigint`) is
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


def _from_a_ctrl_c(error: BaseException) -> bool:
    """Whether a KeyboardInterrupt is among the causes of ``error``."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _run(argv: Sequence[str] | None) -> int:
    with ctrl_c_kept():
        try:
            commands = importlib.import_module(".commands", __name__)
            honour_interrupt()
            return commands.main(argv)
        except Exception as error:
            # a Ctrl-C that other code turned into an error of its own (a dataclass being
            # created while a module loads reports it as a RuntimeError; NumPy's extension
            # module, imported while one lands, an ImportError that does not name it). Asked
            # here, before the block ends and forgets the Ctrl-C it noted.
            if interrupt_pending() or _from_a_ctrl_c(error):
                raise KeyboardInterrupt from error
            raise


@contextlib.contextmanager
def ctrl_c_kept() -> Iterator[None]:
    """Within the block, a Ctrl-C is never lost: :func:`satdt.core.errors.on_sigint` handles
    SIGINT (installed from the main thread, over Python's default handler only), and a
    KeyboardInterrupt that Python drops (raised inside a ctypes callback, a ``__del__``, an
    import's lock callback: it reaches ``sys.unraisablehook``) is signalled again a moment
    later, while it is still pending, to be raised where it can propagate. Not at once: the
    hook runs inside the code that dropped it (a callback of LLVM's while Numba loads a
    kernel, say), which would drop it again."""
    install = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    if install:
        signal.signal(signal.SIGINT, on_sigint)
    unraisable = sys.unraisablehook

    def signal_again() -> None:
        if interrupt_pending():  # not raised at a checkpoint meanwhile
            os.kill(os.getpid(), signal.SIGINT)

    def quiet_ctrl_c(dropped: Any) -> None:
        if not isinstance(dropped.exc_value, KeyboardInterrupt):
            unraisable(dropped)
        elif install:
            again = threading.Timer(_SIGNAL_AGAIN, signal_again)
            again.daemon = True
            again.start()

    sys.unraisablehook = quiet_ctrl_c
    try:
        yield
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
