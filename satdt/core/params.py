"""Parameters declared once: a name, its default, the values it takes and what it means.

Each estimator declares its parameters in one table (``OptimalTreeClassifier._PARAMS``,
``OptimalDiagramClassifier._PARAMS``, and the method parameters of
:data:`satdt.search.registry.METHODS`); the estimator's signature and docstring, its validation, the
command line's flags (type, default, metavar, help) and the docs' parameter tables
(:func:`parameters_table`) all come from that table, in the manner of scikit-learn's
``_parameter_constraints``. A value is accepted when one of its parameter's rules accepts it;
otherwise :class:`~satdt.core.errors.ParameterError` (a ``ValueError``) names every rule, the value
seen and the default. Defaults are real values, never an ``"auto"`` that stands for one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ParameterError

__all__ = [
    "NONE",
    "Check",
    "Choice",
    "Integer",
    "Param",
    "Real",
    "Rule",
    "parameters_table",
]

# What Rule.parse returns for a command-line word it does not read.
_UNREAD = object()


def is_integer(value: Any) -> bool:
    """An integer that is not a bool (NumPy's included)."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def label_value(text: str) -> Any:
    """A class label typed on the command line (``--class-weight``, ``--cost-matrix``): an
    integer or a number when it reads as one, else the text itself."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def is_number(value: Any) -> bool:
    """A finite real number that is not a bool (NumPy's included)."""
    return (
        isinstance(value, int | float | np.integer | np.floating)
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


class Rule:
    """One kind of value a parameter takes."""

    def accepts(self, value: Any) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        """The rule in words, as the error message and the docs say it."""
        raise NotImplementedError

    def parse(self, text: str) -> Any:
        """A command-line word as a value of this rule, or ``_UNREAD``."""
        return _UNREAD

    def type_name(self) -> str:
        """The rule as a numpydoc type (``int``, ``float``, ``{'a', 'b'}``, ``None``)."""
        return "object"


@dataclass(frozen=True)
class Choice(Rule):
    """One of some names; ``values`` may be a callable, so that the module that defines them
    (a search's, with its imports) loads only when a value is checked."""

    values: tuple[str, ...] | Callable[[], tuple[str, ...]]

    def names(self) -> tuple[str, ...]:
        return self.values() if callable(self.values) else self.values

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.names()

    def describe(self) -> str:
        return "one of " + ", ".join(repr(name) for name in self.names())

    def parse(self, text: str) -> Any:
        return text if text in self.names() else _UNREAD

    def type_name(self) -> str:
        return "{" + ", ".join(repr(name) for name in self.names()) + "}"


@dataclass(frozen=True)
class Integer(Rule):
    """An integer ``low <= value`` (``<= high`` when given)."""

    low: int
    high: int | None = None

    def accepts(self, value: Any) -> bool:
        return is_integer(value) and value >= self.low and (self.high is None or value <= self.high)

    def describe(self) -> str:
        if self.high is None:
            return f"an integer >= {self.low}"
        return f"an integer from {self.low} to {self.high}"

    def parse(self, text: str) -> Any:
        try:
            return int(text)
        except ValueError:
            return _UNREAD

    def type_name(self) -> str:
        return "int"


@dataclass(frozen=True)
class Real(Rule):
    """A finite number in an interval: ``low`` (excluded when ``low_open``) up to ``high``
    (excluded when ``high_open``; no upper end when None)."""

    low: float
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def accepts(self, value: Any) -> bool:
        if not is_number(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        if self.high is None:
            return above
        return above and (value < self.high if self.high_open else value <= self.high)

    def describe(self) -> str:
        low = f"{'>' if self.low_open else '>='} {self.low:g}"
        if self.high is None:
            return f"a number {low}"
        return f"a number {low} and {'<' if self.high_open else '<='} {self.high:g}"

    def parse(self, text: str) -> Any:
        try:
            return float(text)
        except ValueError:
            return _UNREAD

    def type_name(self) -> str:
        return "float"


@dataclass(frozen=True)
class _Nothing(Rule):
    def accepts(self, value: Any) -> bool:
        return value is None

    def describe(self) -> str:
        return "None"

    def type_name(self) -> str:
        return "None"


NONE: Rule = _Nothing()


@dataclass(frozen=True)
class Check(Rule):
    """A rule with a test of its own (a dict of class weights, a skeleton, ...)."""

    description: str
    test: Callable[[Any], bool]
    kind: str = "object"  # its numpydoc type
    # reads a command-line word as a value (None or ValueError: the word is not one of these)
    read: Callable[[str], Any] | None = None

    def accepts(self, value: Any) -> bool:
        return self.test(value)

    def parse(self, text: str) -> Any:
        if self.read is None:
            return _UNREAD
        try:
            value = self.read(text)
        except ValueError:
            return _UNREAD
        return _UNREAD if value is None else value

    def describe(self) -> str:
        return self.description

    def type_name(self) -> str:
        return self.kind


@dataclass(frozen=True)
class Param:
    """A parameter: its name, default, help for people and the rules of its values.

    ``objectives``: the objectives it applies to (empty: all of its estimator's or method's).
    ``metavar`` and ``cli_help`` shape its command-line flag (``--name-with-dashes``); the
    help defaults to ``help``.
    """

    name: str
    default: Any
    help: str
    rules: tuple[Rule, ...] = ()
    objectives: tuple[str, ...] = ()
    metavar: str | None = None
    cli_help: str | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def describe(self) -> str:
        """The values allowed, in words."""
        return " or ".join(rule.describe() for rule in self.rules)

    def type_name(self) -> str:
        """The values allowed as a numpydoc type: ``int or None``, ``{'a', 'b'}``."""
        names = list(dict.fromkeys(rule.type_name() for rule in self.rules))
        return " or ".join(names) or "object"

    def check(self, value: Any) -> None:
        """Raise :class:`ParameterError` saying the rule, the value seen and the default."""
        if not self.rules or any(rule.accepts(value) for rule in self.rules):
            return
        raise ParameterError(
            f"{self.name} must be {self.describe()}, got {value!r} (default: {self.default!r})"
        )

    def parse(self, text: str) -> Any:
        """A command-line word as a value: the first rule that reads it (numbers where
        allowed); else the word itself, which :meth:`check` then refuses, saying why."""
        for rule in self.rules:
            value = rule.parse(text)
            if value is not _UNREAD:
                return value
        return text

    def _choices_shown(self) -> str | None:
        """``{a,b}`` for a parameter that takes only fixed names (None, and names that a
        search module defines, are not shown: the help says them)."""
        if all(isinstance(rule, Choice) and not callable(rule.values) for rule in self.rules):
            return "{" + ",".join(name for rule in self.rules for name in rule.names()) + "}"
        return None

    def argparse_options(self) -> dict[str, Any]:
        """What ``ArgumentParser.add_argument(param.flag, **options)`` takes."""
        return {
            "dest": self.name,
            "default": self.default,
            "type": self.parse,
            "metavar": self.metavar or self._choices_shown() or self.name.upper(),
            "help": f"{self.cli_help or self.help} (default: {_shown(self.default)})",
        }


def _shown(value: Any) -> str:
    return "none" if value is None else str(value)


def parameters_table(params: Iterable[Param], owners: dict[str, str] | None = None) -> str:
    """The docs' table of these parameters, as markdown: name, default, values, meaning
    (``owners`` adds who takes each: the methods of a method parameter)."""
    lines = ["| parameter | default | values | meaning |", "|---|---|---|---|"]
    for param in params:
        meaning = param.help.replace("|", "\\|")
        if owners and param.name in owners:
            meaning = f"{owners[param.name]}: {meaning}"
        values = param.describe().replace("|", "\\|") or "any"
        lines.append(f"| `{param.name}` | `{param.default!r}` | {values} | {meaning} |")
    return "\n".join(lines)
