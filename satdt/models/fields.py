"""A model's dictionary read as untrusted input: each field's JSON type, length and range.

A model's dictionary (:meth:`Tree.to_dict <satdt.Tree.to_dict>`,
:meth:`Diagram.to_dict <satdt.Diagram.to_dict>`, a model file) may come from someone else's
file, damaged or edited. :class:`Fields` reads it one field at a time and checks what JSON
can get wrong (a missing key, a string where a number belongs, a ragged matrix, an integer
beyond 64 bits, a newer format) before an array is allocated, so that a bad dictionary is
refused with a :class:`~satdt.core.errors.ModelError` naming the field, in time linear in
its size. The models then check their own rules on the arrays (a tree's shape, a diagram's
layers).
"""

from __future__ import annotations

import math
import reprlib
from typing import Any

import numpy as np

from ..core.errors import ModelError


class NewerFormatError(ModelError):
    """A model (or its file) written by a newer satdt, in a version of its format that this one
    does not read: not damaged, upgrading satdt reads it."""


# The integers an int64 array holds.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 40
_SHORT.maxlist = _SHORT.maxdict = 4
_SHORT.maxlevel = 2


def shown(value: Any) -> str:
    """A value as a message shows it: its repr, cut short (a huge list stays one line)."""
    return _SHORT.repr(value)


def json_kind(value: Any) -> str:
    """The JSON type of a parsed value, as a message names it."""
    if value is None:
        return "null"
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number")):
        if isinstance(value, kind):
            return name
    return {str: "a string", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__
    )


def _number(value: Any) -> float | None:
    """A JSON number as a float (None: not a number, or too large for a float)."""
    if type(value) is float:
        return value
    if type(value) is int:
        try:
            return float(value)
        except OverflowError:
            return None
    return None


def _label_number(value: Any) -> bool:
    """Whether a numeric label is one NumPy holds as it is: finite, an integer within 64 bits."""
    if type(value) is int:
        return INT64_MIN <= value <= INT64_MAX
    return math.isfinite(value)


class Fields:
    """The fields of one model's dictionary, each read and checked as it is asked for.

    Parameters
    ----------
    data : object
        The dictionary as parsed from JSON (anything: it is checked to be an object).
    what : str
        What the dictionary describes, for messages (``"tree"``, ``"diagram"``).
    error : type of ModelError
        The error raised for a bad field (:class:`~satdt.models.diagram_checks.DiagramError`
        for a diagram).
    """

    def __init__(self, data: Any, what: str, error: type[ModelError] = ModelError) -> None:
        if not isinstance(data, dict):
            raise error(f"a satdt {what} is a JSON object of fields; got {json_kind(data)}")
        self.data, self.what, self.error = data, what, error

    def _bad(self, key: str, rule: str, value: Any) -> ModelError:
        return self.error(f"the {self.what}'s field {key!r} {rule}; got {shown(value)}")

    def value(self, key: str, optional: bool = False) -> Any:
        """The raw value of a field (None for an optional field that is absent)."""
        if key not in self.data:
            if optional:
                return None
            raise self.error(
                f"the {self.what} has no field {key!r}; a satdt {self.what} holds "
                f"{', '.join(map(repr, self.data))} and {key!r}"
                if self.data
                else f"the {self.what} has no field {key!r}: its object is empty"
            )
        return self.data[key]

    def header(self, format_tag: str, version: int) -> None:
        """Check the format tag and the version: a newer version names itself."""
        found = self.data.get("format")
        if found != format_tag:
            raise self.error(
                f"not a satdt {self.what}: the 'format' field is {shown(found)}, not {format_tag!r}"
            )
        written = self.data.get("version")
        if type(written) is not int or written < 1:
            raise self._bad("version", "must be a positive integer", written)
        if written > version:
            raise NewerFormatError(
                f"the {self.what} was written by a newer satdt (format version {written}; this "
                f"satdt reads version {version} and earlier): upgrade satdt to read it"
            )

    def integer(self, key: str, low: int = INT64_MIN, high: int = INT64_MAX) -> int:
        """An integer field within ``[low, high]``."""
        value = self.value(key)
        if type(value) is not int or not low <= value <= high:
            raise self._bad(key, f"must be an integer in [{low}, {high}]", value)
        return value

    def _list(self, key: str, value: Any, length: int | None) -> list[Any]:
        if type(value) is not list:
            raise self._bad(key, "must be a list", value)
        if length is not None and len(value) != length:
            raise self.error(
                f"the {self.what}'s field {key!r} must hold {length} entries (one per node); "
                f"it holds {len(value)}"
            )
        return value

    def integers(
        self,
        key: str,
        length: int | None = None,
        low: int = INT64_MIN,
        high: int = INT64_MAX,
        optional: bool = False,
    ) -> np.ndarray | None:
        """A list of integers within ``[low, high]`` as an int64 array (None: optional, absent)."""
        value = self.value(key, optional)
        if value is None and optional:
            return None
        items = self._list(key, value, length)
        for i, item in enumerate(items):
            if type(item) is not int or not low <= item <= high:
                raise self._bad(f"{key}[{i}]", f"must be an integer in [{low}, {high}]", item)
        return np.array(items, dtype=np.int64)

    def numbers(self, key: str, length: int, tokens: dict[Any, float] | None = None) -> np.ndarray:
        """A list of numbers as a float64 array; ``tokens`` maps JSON values that stand for
        numbers JSON cannot write (``None``: NaN, ``"inf"``: infinity) to them."""
        items = self._list(key, self.value(key), length)
        tokens = tokens or {}
        out = np.empty(len(items), dtype=np.float64)
        for i, item in enumerate(items):
            number = _number(item)
            if number is None and (item is None or type(item) is str) and item in tokens:
                number = tokens[item]
            if number is None:
                allowed = "".join(f" or {t!r}" for t in tokens)
                raise self._bad(f"{key}[{i}]", f"must be a number{allowed}", item)
            out[i] = number
        return out

    def matrix(self, key: str, rows: int, columns: int, per: str) -> np.ndarray | None:
        """An optional ``rows`` x ``columns`` list of lists of numbers as a float64 array, a
        column ``per`` class or feature; its shape is checked row by row, so a declared size
        costs nothing before it is seen."""
        value = self.value(key, optional=True)
        if value is None:
            return None
        if type(value) is not list or len(value) != rows:
            raise self._bad(key, f"must be null or a list of {rows} rows", value)
        rule = f"must be a list of {columns} numbers, one per {per}"
        for r, row in enumerate(value):
            if type(row) is not list or len(row) != columns:
                raise self._bad(f"{key}[{r}]", rule, row)
            for c, item in enumerate(row):
                if _number(item) is None:
                    raise self._bad(f"{key}[{r}][{c}]", "must be a number", item)
        return np.array(value, dtype=np.float64).reshape(rows, columns)

    def strings(self, key: str) -> list[str] | None:
        """An optional list of strings (None: absent or null)."""
        value = self.value(key, optional=True)
        if value is None:
            return None
        items = self._list(key, value, None)
        for i, item in enumerate(items):
            if type(item) is not str:
                raise self._bad(f"{key}[{i}]", "must be a string", item)
        return items

    def labels(self, key: str = "classes") -> np.ndarray:
        """The class labels: a non-empty list of distinct strings, booleans or finite numbers
        (one kind for all: a mixed list would change the labels' type)."""
        items = self._list(key, self.value(key), None)
        if not items:
            raise self._bad(key, "must name at least one class", items)
        kinds = {json_kind(item) for item in items}
        numbers = kinds <= {"an integer", "a number"}
        if not (numbers or kinds == {"a string"} or kinds == {"a boolean"}):
            raise self._bad(
                key, "must be labels of one kind: all strings, all booleans or all numbers", items
            )
        if numbers and not all(map(_label_number, items)):
            raise self._bad(key, "must be finite numbers (integers within 64 bits)", items)
        if len(set(items)) != len(items):
            raise self._bad(key, "must be distinct labels", items)
        return np.asarray(items)
