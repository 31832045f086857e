"""How the command line speaks: library messages in its own words, and its exit codes.

Library messages name parameters (``max_depth=3``); people typed flags (``--max-depth 3``).
"""

from __future__ import annotations

import re

from ..search.params import tree_params

EXIT_OK, EXIT_INFEASIBLE, EXIT_USAGE = 0, 1, 2
# Library messages name parameters; these are the command-line flags that set them.
_FLAGS = {
    "max_splits": "--max-splits",
    "milp_solver": "--milp-solver",
    "sep": "--sep",
    "drop": "--drop",
    **{
        name: param.flag
        for name, param in tree_params().items()
        if name not in ("objective", "missing")  # the objective is the command; see below
    },
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

    text = _PARAMETER.sub(flag, text)
    # "missing" is also a plain word of messages: only its settings become the flag
    return re.sub(r"\bmissing='(split|error)'", r"--missing \1", text)
