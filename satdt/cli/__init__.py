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

from .commands import main
from .messages import EXIT_INFEASIBLE, EXIT_OK, EXIT_USAGE, cli_message
from .parser import build_parser

__all__ = ["EXIT_INFEASIBLE", "EXIT_OK", "EXIT_USAGE", "build_parser", "cli_message", "main"]
