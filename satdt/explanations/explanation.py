"""What an explanation is: a row's prediction, its abductive explanations (AXps: sets of
columns whose values force the prediction) and contrastive ones (CXps: sets of columns whose
change can flip it), each stated on the user's columns as conditions; the nodes of the model
they mark (:meth:`Explanation.marks`, for the pictures)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import ParameterError


@dataclass(frozen=True)
class Condition:
    """A condition on one column of the user's table, as people read it.

    Parameters
    ----------
    column : str
        The column's name.
    text : str
        The condition (``2.45 < petal length <= 4.75``, ``colour = red``).
    """

    column: str
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Contrast:
    """A CXp: columns that, changed, can give another prediction.

    Parameters
    ----------
    columns : tuple of str
        The columns to change (a subset-minimal set).
    conditions : tuple of Condition
        What they must become: the tests on them of one path of the model that ends in
        ``prediction``.
    prediction : object
        The label that path gives.
    nodes : tuple of int, default=()
        That path through the model: node indices from the root, then its leaf (a diagram's
        class terminal ``k`` as ``-1 - k``).
    """

    columns: tuple[str, ...]
    conditions: tuple[Condition, ...]
    prediction: Any
    nodes: tuple[int, ...] = ()

    def __str__(self) -> str:
        changes = " and ".join(map(str, self.conditions))
        return f"{changes} -> {self.prediction}"


@dataclass(frozen=True)
class Explanation:
    """Why a model predicts what it does for one row (each parameter is an attribute).

    Parameters
    ----------
    row : int
        The row's index in the data explained.
    prediction : object
        The label the model predicts.
    path : tuple of Condition
        The tests the row passes on its way through the model, merged per column.
    axp : tuple of Condition
        One AXp (subset-minimal), as the row's conditions on its columns.
    smallest_axp : tuple of Condition
        An AXp with the fewest columns.
    cxps : tuple of Contrast
        Every CXp, fewest columns first (for a tree or a diagram they come from its paths).
    axps : tuple of tuple of Condition, default=()
        Every AXp, smallest first, when enumeration was asked for (else empty).
    complete : bool, default=True
        Whether the enumeration ended (not stopped by its limit or time limit).
    path_axp : tuple of Condition, default=()
        The smallest AXp among the path's own columns (the path is an AXp once its needless
        tests are dropped; Izza et al.'s measure of a path's redundancy).
    nodes : tuple of int, default=()
        The row's path through the model: node indices from the root, then its leaf (a
        diagram's class terminal ``k`` as ``-1 - k``).
    node_columns : tuple of str, default=()
        The column each node of the path but the last tests.
    """

    row: int
    prediction: Any
    path: tuple[Condition, ...]
    axp: tuple[Condition, ...]
    smallest_axp: tuple[Condition, ...]
    cxps: tuple[Contrast, ...]
    axps: tuple[tuple[Condition, ...], ...] = ()
    complete: bool = True
    path_axp: tuple[Condition, ...] = ()
    nodes: tuple[int, ...] = ()
    node_columns: tuple[str, ...] = ()

    @property
    def cxp(self) -> Contrast | None:
        """One CXp (None when no change of any column gives another class)."""
        return self.cxps[0] if self.cxps else None

    @property
    def smallest_cxp(self) -> Contrast | None:
        """A CXp with the fewest columns (the first of ``cxps``)."""
        return self.cxp

    @property
    def redundancy(self) -> float:
        """The share of the path's columns that the prediction does not need: those left out
        of the smallest AXp among the path's own columns (0 for a path that is itself an AXp,
        as Izza et al. measure a path's redundancy)."""
        used = {c.column for c in self.path}
        return 1.0 - len(self.path_axp) / len(used) if used else 0.0

    def marks(self, show: str = "smallest_axp", contrast: int = 0) -> dict[int, str]:
        """The role of each node that a drawing of the explanation marks.

        Parameters
        ----------
        show : {"smallest_axp", "axp", "path_axp", "cxp"}, default="smallest_axp"
            Which explanation: an AXp (its columns' tests on the row's path are the ones the
            prediction needs) or a CXp (its columns' tests on the path are the ones to change).
        contrast : int, default=0
            With ``show="cxp"``: which CXp of ``cxps``.

        Returns
        -------
        dict
            Node index (a diagram's terminal ``k`` as ``-1 - k``) -> role: ``"explanation"``
            (a test of the path on a column of the explanation), ``"path"`` (a test of the path
            on another column: for an AXp, one the prediction does not need), ``"leaf"`` (the
            row's leaf), ``"contrast"`` (a node of the CXp's other-class path off the row's
            path) and ``"contrast-leaf"`` (where that path ends).
        """
        shown = MARKED.get(show)
        if shown is None:
            raise ParameterError(
                f"show must be one of {', '.join(sorted(MARKED))}, got {show!r}: pick which "
                "explanation to draw"
            )
        if shown == "cxps":
            if not self.cxps:
                raise ParameterError(
                    f"row {self.row} has no CXp (no change of any column gives another class): "
                    'draw an AXp (show="smallest_axp")'
                )
            if isinstance(contrast, bool) or not isinstance(contrast, int):
                raise ParameterError(f"contrast must be an integer, got {contrast!r}")
            if not 0 <= contrast < len(self.cxps):
                raise ParameterError(
                    f"contrast must index one of the row's {len(self.cxps)} CXps (0 to "
                    f"{len(self.cxps) - 1}), got {contrast}"
                )
            chosen = self.cxps[contrast]
            columns = set(chosen.columns)
        else:
            chosen = None
            columns = {c.column for c in getattr(self, shown)}
        marks = {}
        if chosen is not None:
            for node in chosen.nodes[:-1]:
                marks[node] = "contrast"
            marks[chosen.nodes[-1]] = "contrast-leaf"
        for node, column in zip(self.nodes, self.node_columns, strict=False):
            marks[node] = "explanation" if column in columns else "path"
        if self.nodes:
            marks[self.nodes[-1]] = "leaf"
        return marks

    def __str__(self) -> str:
        def joined(conditions: Sequence[Condition]) -> str:
            return " and ".join(map(str, conditions)) or "(always)"

        lines = [
            f"row {self.row}: predicted {self.prediction}",
            f"  path:          {joined(self.path)}",
            f"  AXp:           {joined(self.axp)}",
            f"  smallest AXp:  {joined(self.smallest_axp)}",
        ]
        lines += [f"  CXp:           {contrast}" for contrast in self.cxps]
        if not self.cxps:
            lines.append("  CXp:           none (every row gets this prediction)")
        for axp in self.axps:
            lines.append(f"  an AXp:        {joined(axp)}")
        if self.axps and not self.complete:
            lines.append("  (AXp enumeration stopped by its limit)")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The explanation as JSON-ready values.

        Returns
        -------
        dict
            The fields above as strings, lists and numbers, with ``redundancy``.
        """

        def texts(conditions: Sequence[Condition]) -> list[str]:
            return [c.text for c in conditions]

        return {
            "row": self.row,
            "prediction": plain(self.prediction),
            "path": texts(self.path),
            "axp": texts(self.axp),
            "smallest_axp": texts(self.smallest_axp),
            "cxps": [
                {
                    "columns": list(c.columns),
                    "conditions": texts(c.conditions),
                    "prediction": plain(c.prediction),
                    "nodes": list(c.nodes),
                }
                for c in self.cxps
            ],
            "axps": [texts(axp) for axp in self.axps],
            "complete": self.complete,
            "path_axp": texts(self.path_axp),
            "redundancy": self.redundancy,
            "nodes": list(self.nodes),
        }


# The explanations a drawing can show (Explanation.marks' ``show``) and the field each reads.
MARKED = {"axp": "axp", "smallest_axp": "smallest_axp", "path_axp": "path_axp", "cxp": "cxps"}


def plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value
