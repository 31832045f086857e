"""Teachers: data given as a function, a program or a model that points at a tree's mistakes.

Exact learning from counterexamples (Angluin's equivalence queries, which Avellaneda, AAAI
2020, cites for active inference): the learner shows a tree, and the teacher answers with
labelled rows the tree gets wrong, or with none when it has no objection.
``OptimalTreeClassifier(...).fit_teacher(teacher)`` alternates the SAT loop and the teacher
(:mod:`satdt.sat.teaching`) and returns the minimum-depth (or minimum-size) tree the teacher
accepts, proven: every smaller depth was refuted on rows the teacher gave.

A teacher is any object with (:class:`Teacher`):

- ``domains``: the values each column takes, one entry per column (a mapping from column
  names to entries names them): a sequence of numbers (a numeric column; the tree's
  thresholds lie between consecutive values), a sequence of strings (a categorical column,
  one 0/1 column ``name == value`` per category), or ``bool`` (False and True, as 0 and 1);
- optionally ``classes``: every label (the first question then shows a one-leaf tree);
- ``counterexample(tree)``: the rows ``tree`` classifies wrong with their right labels, as
  ``(rows, labels)`` (one row or several, values from the domains), or ``None`` when the tree
  is right everywhere. ``tree`` is a :class:`~satdt.Tree` over the design columns of the
  domains (:meth:`Domains.encode`: numeric and Boolean columns as they are, so
  ``tree.predict(rows)`` reads a numeric teacher's rows directly). Without ``classes`` the
  first question shows no tree (``None``): answer with any labelled rows.

:class:`FunctionTeacher` (a Python function over the product of the domains) and
:class:`ModelTeacher` (a fitted model over a finite grid) check every point of the domain.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..core.errors import DataError, ParameterError
from ..data.schema import CATEGORICAL, NUMERIC, ColumnSpec, Schema
from ..models.tree import Tree

# The most points a teacher that checks every point of its domain enumerates.
MAX_POINTS = 2_000_000
# The counterexamples a table teacher returns: the first wrong point, one per leaf that holds
# wrong points, every wrong point, or (an integer k) the first k of one per leaf.
TEACHER_POLICIES = ("first", "per_leaf", "all")


@runtime_checkable
class Teacher(Protocol):
    """What :meth:`OptimalTreeClassifier.fit_teacher` asks of a teacher (see the module notes).

    ``classes`` (every label) is optional and read with ``getattr``.
    """

    domains: Sequence[Any] | Mapping[str, Any]

    def counterexample(self, tree: Tree | None) -> tuple[Any, Any] | None:
        """Labelled rows ``tree`` gets wrong, as ``(rows, labels)``, or None if there are none.

        Parameters
        ----------
        tree : Tree or None
            The tree to check, over the design columns of the domains (None: any row).

        Returns
        -------
        tuple or None
            ``(rows, labels)``, one value of the domains per column in each row.
        """
        ...


@dataclass(frozen=True)
class Domains:
    """A teacher's domains, read: the columns, their values, and how rows become design rows.

    Parameters
    ----------
    schema : Schema
        The columns (numeric, or categorical with their categories) and the design columns'
        names, as for a fitted estimator's ``schema_``.
    values : tuple of ndarray
        Per column, its values: floats for a numeric or Boolean column, the categories for a
        categorical one.
    design_values : tuple of ndarray
        Per design column, the numbers it takes (a category's column: 0 and 1).
    raw : tuple of tuple
        Per column, its values as given (``False, True`` for ``bool``), sorted for numbers.
    """

    schema: Schema
    values: tuple[np.ndarray, ...]
    design_values: tuple[np.ndarray, ...]
    raw: tuple[tuple[Any, ...], ...]

    @property
    def n_points(self) -> int:
        """How many points the product of the domains holds."""
        return math.prod(len(v) for v in self.values)

    def encode(self, rows: Any) -> np.ndarray:
        """Encode rows of the teacher's columns as design rows (a category as its 0/1 columns).

        Parameters
        ----------
        rows : array-like
            One row, or a table of rows, one value of the domains per column.

        Returns
        -------
        numpy.ndarray
            The design rows, float64.

        Raises
        ------
        DataError
            If the rows are not a table of the domains' width, or a cell is no value of its
            column's domain.
        """
        array = np.asarray(rows, dtype=object)
        if array.ndim == 1:
            array = array.reshape(1, -1)
        columns = self.schema.columns
        if array.ndim != 2 or array.shape[1] != len(columns):
            raise DataError(
                f"a teacher's rows have one value per column ({len(columns)}: "
                f"{', '.join(c.name for c in columns)}), got an array of shape {array.shape}"
            )
        parts = []
        for j, spec in enumerate(columns):
            cells = array[:, j]
            if spec.kind == NUMERIC:
                try:
                    numbers = cells.astype(np.float64)
                except (TypeError, ValueError):
                    raise DataError(
                        f"column {spec.name!r} is numeric, got {cells.tolist()[:4]}"
                    ) from None
                outside = ~np.isin(numbers, self.values[j])
                if outside.any():
                    raise _outside(spec.name, cells[outside][0], self.raw[j])
                parts.append(numbers[:, None])
            else:
                codes = {category: k for k, category in enumerate(spec.categories)}
                index = np.array([codes.get(str(v), -1) for v in cells], dtype=np.int64)
                if (index < 0).any():
                    raise _outside(spec.name, cells[index < 0][0], self.raw[j])
                parts.append((index[:, None] == np.arange(len(codes))).astype(np.float64))
        return np.hstack(parts) if parts else np.zeros((len(array), 0))

    def product(self) -> itertools.product:
        """Enumerate every point of the product of the domains, the last column fastest.

        Returns
        -------
        itertools.product
            Tuples of values as given.

        Raises
        ------
        ParameterError
            If the product holds more than :data:`MAX_POINTS` points.
        """
        if self.n_points > MAX_POINTS:
            raise ParameterError(
                f"the domains hold {self.n_points:,} points, more than {MAX_POINTS:,} to check "
                "one by one; give fewer values per column, or write a teacher that finds its "
                "counterexamples another way (a solver, a search over the tree's leaves)"
            )
        return itertools.product(*self.raw)

    def points(self) -> np.ndarray:
        """Tabulate every point of :meth:`product`.

        Returns
        -------
        numpy.ndarray
            One row per point: floats when every column is numeric (or Boolean), else objects.
        """
        numeric = all(spec.kind == NUMERIC for spec in self.schema.columns)
        grid = list(self.product())
        out = np.array(grid, dtype=np.float64 if numeric else object)
        return out.reshape(len(grid), len(self.values))


def _outside(name: str, value: Any, values: tuple[Any, ...]) -> DataError:
    shown = ", ".join(map(str, values[:8])) + (" ..." if len(values) > 8 else "")
    return DataError(
        f"column {name!r}: {value!r} is not in its domain ({shown}); a teacher's rows take the "
        "values of its domains"
    )


def read_domains(domains: Sequence[Any] | Mapping[str, Any]) -> Domains:
    """Read a teacher's ``domains`` (see the module notes) into :class:`Domains`.

    Parameters
    ----------
    domains : sequence or mapping
        One entry per column (a mapping names the columns): numbers, strings or ``bool``.

    Returns
    -------
    Domains
        The columns, their values and their design columns.

    Raises
    ------
    ParameterError
        If a domain is empty, mixes numbers and strings, or is not a sequence or ``bool``.
    """
    if isinstance(domains, Mapping):
        names, entries = [str(k) for k in domains], list(domains.values())
    else:
        entries = list(domains)
        names = [f"x{j}" for j in range(len(entries))]
    if not entries:
        raise ParameterError("a teacher's domains are empty: give the values of each column")
    specs, values, design, raw = [], [], [], []
    for name, entry in zip(names, entries, strict=True):
        if entry is bool:
            entry = (False, True)
        if isinstance(entry, str) or not isinstance(entry, Sequence | np.ndarray):
            raise ParameterError(
                f"the domain of column {name!r} must be a sequence of values or bool, got {entry!r}"
            )
        items = list(entry)
        if not items:
            raise ParameterError(f"the domain of column {name!r} is empty: give its values")
        if all(isinstance(v, str) for v in items):
            categories = tuple(dict.fromkeys(items))
            specs.append(ColumnSpec(name, CATEGORICAL, categories))
            values.append(np.array(categories, dtype=object))
            design += [np.array([0.0, 1.0])] * len(categories)
            raw.append(categories)
        elif all(isinstance(v, int | float | bool | np.number | np.bool_) for v in items):
            numbers = np.unique(np.asarray(items, dtype=np.float64))
            if not np.isfinite(numbers).all():
                raise ParameterError(f"the domain of column {name!r} holds NaN or infinity")
            specs.append(ColumnSpec(name, NUMERIC))
            values.append(numbers)
            design.append(numbers)
            raw.append(tuple(sorted(dict.fromkeys(items))))
        else:
            raise ParameterError(
                f"the domain of column {name!r} mixes numbers and strings ({items[:4]}); give "
                "numbers (a numeric column) or strings (categories)"
            )
    schema = Schema.from_columns(specs, target="label")
    return Domains(schema, tuple(values), tuple(design), tuple(raw))


class TableTeacher:
    """A teacher that knows the label of every point of its domains and checks them all.

    Parameters
    ----------
    domains : sequence or mapping
        The domains (see the module notes); their product is enumerated once (at most
        ``MAX_POINTS`` points).
    labels : array-like
        The label of every point of the product of the domains, in that order.
    counterexamples : str or int, default="first"
        Which wrong points to return: ``"first"`` (the first, in the order of the points),
        ``"per_leaf"`` (the first of each leaf of the tree that holds wrong points), ``"all"``,
        or an integer k (the first k of ``"per_leaf"``).
    """

    def __init__(
        self,
        domains: Sequence[Any] | Mapping[str, Any],
        labels: Any,
        counterexamples: str | int = "first",
    ) -> None:
        if counterexamples not in TEACHER_POLICIES and not (
            isinstance(counterexamples, int) and counterexamples >= 1
        ):
            raise ParameterError(
                f"counterexamples must be one of {TEACHER_POLICIES} or a positive integer, "
                f"got {counterexamples!r}"
            )
        self.domains = domains
        self.read = read_domains(domains)
        self.points = self.read.points()
        self.design = self.read.encode(self.points)
        self.labels = np.asarray(labels)
        if self.labels.shape != (len(self.points),):
            raise DataError(
                f"{len(self.labels)} labels for the {len(self.points)} points of the domains"
            )
        self.classes = np.unique(self.labels)
        self.counterexamples = counterexamples
        self.questions = 0

    def counterexample(self, tree: Tree | None) -> tuple[np.ndarray, np.ndarray] | None:
        """The points ``tree`` classifies wrong, with their labels (None: it is right on all).

        Parameters
        ----------
        tree : Tree or None
            A tree over the design columns of the domains; None asks for any labelled point.

        Returns
        -------
        tuple of ndarray, or None
            ``(points, labels)``, or None when ``tree`` predicts every point's label.
        """
        self.questions += 1
        if tree is None:
            return self.points[:1], self.labels[:1]
        wrong = np.flatnonzero(tree.predict(self.design) != self.labels)
        if len(wrong) == 0:
            return None
        if self.counterexamples == "first":
            wrong = wrong[:1]
        elif self.counterexamples != "all":
            leaf = tree.apply(self.design[wrong])
            _, first = np.unique(leaf, return_index=True)
            wrong = wrong[np.sort(first)]
            if isinstance(self.counterexamples, int):
                wrong = wrong[: self.counterexamples]
        return self.points[wrong], self.labels[wrong]

    def accepts(self, tree: Tree) -> bool:
        """Check ``tree`` on every point of the domains.

        Parameters
        ----------
        tree : Tree
            A tree over the design columns of the domains.

        Returns
        -------
        bool
            Whether it predicts the label of every point.
        """
        return bool(np.array_equal(tree.predict(self.design), self.labels))


class FunctionTeacher(TableTeacher):
    """A teacher from a Python function: ``function(*point)`` is the label of each point.

    Every point of the product of the domains is labelled once, when the teacher is made, and
    checked at every question: a tree it accepts equals the function on the whole domain.

    Parameters
    ----------
    function : callable
        Called with one value per column (in the order of ``domains``), returns the label.
    domains : sequence or mapping
        The domains (see the teacher protocol, ``satdt.task.teachers``).
    counterexamples : str or int, default="first"
        Which wrong points each answer returns (see :class:`TableTeacher`).

    Examples
    --------
    >>> teacher = FunctionTeacher(lambda a, b: a != b, [bool, bool])
    >>> teacher.classes.tolist()
    [False, True]
    """

    def __init__(
        self,
        function: Callable[..., Any],
        domains: Sequence[Any] | Mapping[str, Any],
        counterexamples: str | int = "first",
    ) -> None:
        labels = [function(*point) for point in read_domains(domains).product()]
        super().__init__(domains, labels, counterexamples)
        self.function = function


class ModelTeacher(TableTeacher):
    """A teacher from a fitted model: its predictions on every point of a finite grid.

    A tree the teacher accepts predicts what the model predicts on every point of the grid
    (for a tree ensemble over the grid of its thresholds, everywhere: a born-again tree).

    Parameters
    ----------
    model : object
        Anything with ``predict(rows)`` (a scikit-learn estimator, a satdt model, a
        pipeline), called once on the grid.
    domains : sequence or mapping
        The grid: the values each column takes, as a teacher's domains.
    counterexamples : str or int, default="first"
        Which wrong points each answer returns (see :class:`TableTeacher`).
    """

    def __init__(
        self,
        model: Any,
        domains: Sequence[Any] | Mapping[str, Any],
        counterexamples: str | int = "first",
    ) -> None:
        read = read_domains(domains)
        points = read.points()
        numeric = all(spec.kind == NUMERIC for spec in read.schema.columns)
        labels = np.asarray(model.predict(points if numeric else points.astype(object)))
        super().__init__(domains, labels.reshape(-1), counterexamples)
        self.model = model
