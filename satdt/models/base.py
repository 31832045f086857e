"""What every satdt model is: :class:`Model`, the base of :class:`~satdt.Tree` and
:class:`~satdt.Diagram`.

A model is a graph of tests over the design matrix: a row starts at the model's first node,
each internal node sends it to one of two successors by its test (the first successor when
the test holds: a tree's left child, a diagram's low side), and the walk ends where the model
predicts (a tree's leaf, a diagram's class terminal). :class:`Model` walks the rows, turns where
they end into classes, labels and training frequencies, reads and writes the model's JSON,
compares, copies and names the columns; each kind says only what is its own: its arrays, how
a node tests a row, where a walk ends, its text and its structural rules.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np

from ..core.errors import ModelError
from . import display
from .fields import Fields

# A node that tests no single column: a tree's leaf, a diagram's multivariate node.
LEAF = -1

# The kind of the model at hand, in the base's signatures: a Tree's copy is a Tree.
Self = TypeVar("Self", bound="Model")


def format_threshold(value: float) -> str:
    """The shortest text that reads back as exactly this threshold (binarised thresholds are short)."""
    return repr(float(value))


def json_scalar(value: Any) -> Any:
    """A NumPy scalar as the plain Python value JSON can hold."""
    return value.item() if isinstance(value, np.generic) else value


def dot_quote(text: str) -> str:
    """Text as a Graphviz DOT string (quotes, backslashes and line breaks escaped)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped + '"'


def class_frequencies(counts: np.ndarray | None, index: np.ndarray, n_classes: int) -> np.ndarray:
    """The share of each class in ``counts`` (one row per item); one-hot on ``index`` where
    a row holds no weight, or everywhere when ``counts`` is None (no training weights known)."""
    one_hot = np.eye(n_classes)[index]
    if counts is None:
        return one_hot
    total = counts.sum(axis=1, keepdims=True)
    return np.where(total > 0, counts / np.where(total > 0, total, 1.0), one_hot)


def _same(a: Any, b: Any) -> bool:
    """Whether two fields of models are equal: arrays by shape and values (NaN equal to NaN in
    float arrays), anything else by ``==``."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        floats = a.dtype.kind == "f" and b.dtype.kind == "f"
        return bool(np.array_equal(a, b, equal_nan=floats))
    return bool(a == b)


def _copied(value: Any) -> Any:
    """A field as a constructor argument that shares no array with the original."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, frozenset):
        return sorted(value)
    return value


class Model(ABC):
    """The base of satdt's models: a graph of tests over the rows of a design matrix.

    Subclasses keep their constructor's arguments as attributes of the same names (their
    ``__slots__``), among them ``classes`` (the user's labels, indexed by class index),
    ``feature_names`` (names of the design columns, or None) and ``indicator`` (the design
    columns that are 0/1 indicators of a category).
    """

    __slots__ = ()

    #: The model's kind in model files (the keys of ``satdt.models.files.MODEL_KINDS``).
    kind: ClassVar[str]
    #: The first fields of the model's dictionary: its format tag and version (and any tag).
    header: ClassVar[dict[str, Any]]
    # The error its rules raise (DiagramError for a diagram).
    _error: ClassVar[type[ModelError]] = ModelError

    classes: np.ndarray
    feature_names: list[str] | None
    indicator: frozenset[int]

    # ------------------------------------------------------------------ what each kind says
    @abstractmethod
    def check(self) -> None:
        """Raise the model's error (a :class:`~satdt.core.errors.ModelError`) for the first
        structural rule its arrays break; a model read from a file is checked so."""

    @property
    @abstractmethod
    def n_nodes(self) -> int:
        """All nodes: decision nodes (:attr:`n_splits`) and the nodes that predict."""

    @property
    @abstractmethod
    def n_splits(self) -> int:
        """Decision (internal) nodes."""

    @property
    @abstractmethod
    def n_leaves(self) -> int:
        """The nodes that predict."""

    @property
    @abstractmethod
    def depth(self) -> int:
        """Decision nodes on the longest path from the first node (0 for a model that tests nothing)."""

    @abstractmethod
    def apply(self, X: np.ndarray) -> np.ndarray:
        """The node each row of ``X`` ends at."""

    @abstractmethod
    def export_text(self) -> str:
        """The model as text, in the user's names and labels."""

    @abstractmethod
    def to_dot(self) -> str:
        """The model as Graphviz DOT source."""

    @abstractmethod
    def _start(self) -> int:
        """The state every row starts in."""

    @abstractmethod
    def _internal(self, state: np.ndarray) -> np.ndarray:
        """Whether each state is a decision node (the walk goes on from it)."""

    @abstractmethod
    def _successors(self) -> tuple[np.ndarray, np.ndarray]:
        """Each decision node's successor when its test holds, and when it does not."""

    @abstractmethod
    def _holds(self, X: np.ndarray, rows: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Whether row ``rows[i]`` of ``X`` satisfies the test of ``nodes[i]``."""

    @abstractmethod
    def _end_class(self, end: np.ndarray) -> np.ndarray:
        """The class index each end state predicts."""

    @abstractmethod
    def _end_counts(self, end: np.ndarray) -> np.ndarray | None:
        """The training class weights of each end state (None: none recorded)."""

    @abstractmethod
    def _check_width(self, width: int) -> None:
        """Raise the model's error unless it reads rows of ``width`` design columns."""

    @abstractmethod
    def _arrays(self) -> dict[str, Any]:
        """The model's own fields of its dictionary, JSON-ready, after the shared ones."""

    @classmethod
    @abstractmethod
    def _from_fields(cls: type[Self], fields: Fields, shared: dict[str, Any]) -> Self:
        """The model of a dictionary's fields; ``shared`` holds the labels and the names,
        read already, as constructor arguments."""

    @abstractmethod
    def _repr_items(self) -> list[str]:
        """What the repr says of the model."""

    # ------------------------------------------------------------------ rows
    def _rows(self, X: np.ndarray) -> np.ndarray:
        """``X`` as the float64 rows the walk reads."""
        return np.asarray(X, dtype=np.float64)

    def _walk(
        self, X: np.ndarray, path: np.ndarray | None = None, sides: np.ndarray | None = None
    ) -> np.ndarray:
        """Move all rows one arc at a time; the state each row ends in.

        Only the rows still at a decision node move on, so the work is the sum of the paths'
        lengths. ``path`` (rows x (depth + 1)) receives each row's states, its end state
        repeated to the last column; ``sides`` (nodes x 2) counts the rows that leave each
        node when its test holds and when it does not.
        """
        first, second = self._successors()
        state = np.full(len(X), self._start(), dtype=np.int64)
        active = np.flatnonzero(self._internal(state))
        step = 0
        while True:
            if path is not None:
                path[:, step] = state
            if not len(active):
                break
            node = state[active]
            holds = self._holds(X, active, node)
            if sides is not None:
                np.add.at(sides, (node, (~holds).astype(np.int64)), 1)
            state[active] = np.where(holds, first[node], second[node])
            active = active[self._internal(state[active])]
            step += 1
        if path is not None:
            path[:, step:] = state[:, None]
        return state

    def decision_path(self, X: np.ndarray) -> np.ndarray:
        """The path of each row: the nodes it visits, an ``(n_rows, depth + 1)`` int array.

        Row ``r`` lists the decision nodes it visits from the first, then the node it ends
        at (a tree's leaf; a diagram's terminal ``-1 - k``), repeated to the end as padding:
        the last column is always where the row ends.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix.

        Returns
        -------
        ndarray of int64 of shape (n_rows, depth + 1)
            The path of each row.
        """
        X = self._rows(X)
        path = np.empty((len(X), self.depth + 1), dtype=np.int64)
        self._walk(X, path=path)
        return path

    def predict_index(self, X: np.ndarray) -> np.ndarray:
        """Class index predicted for each row.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix.

        Returns
        -------
        ndarray of int64 of shape (n_rows,)
            Indices into ``classes``.
        """
        return self._end_class(self._walk(self._rows(X)))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The user's label predicted for each row.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix.

        Returns
        -------
        ndarray of shape (n_rows,)
            Labels taken from ``classes``.
        """
        return self.classes[self.predict_index(X)]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Training class frequencies where each row ends (one-hot where none are known).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows of the design matrix.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
            The share of each class in the training weight that ended where the row ends;
            one-hot on the predicted class where no training weight did.
        """
        end = self._walk(self._rows(X))
        return class_frequencies(self._end_counts(end), self._end_class(end), self.n_classes)

    @property
    def n_classes(self) -> int:
        """Number of classes (the length of ``classes``)."""
        return len(self.classes)

    def check_columns(self, feature_names: Sequence[str]) -> None:
        """Raise the model's error unless it reads design matrices of these columns.

        A model file holds its model and the schema of the table it was learnt from; the
        two must agree, or predicting on data read with the schema would fail.

        Parameters
        ----------
        feature_names : sequence of str
            The names of the design matrix's columns.

        Raises
        ------
        ModelError
            When the model names other columns, or tests a column beyond them.
        """
        names = list(feature_names)
        if self.feature_names is not None and self.feature_names != names:
            raise self._error(
                f"the {self.kind} names the columns {self.feature_names[:6]!r}"
                f"{'...' if len(self.feature_names) > 6 else ''} but the data's columns are "
                f"{names[:6]!r}{'...' if len(names) > 6 else ''}: they must be the same"
            )
        self._check_width(len(names))

    # ------------------------------------------------------------------ text
    def _feature_name(self, feature: int) -> str:
        if self.feature_names is not None and 0 <= feature < len(self.feature_names):
            return self.feature_names[feature]
        return f"x[{feature}]"

    def _univariate_test(self, feature: int, threshold: float, holds: bool) -> str:
        """The test ``x[feature] <= threshold`` as text, for the rows that satisfy it or the
        others; an indicator column reads as its category (``colour != red``)."""
        name = self._feature_name(feature)
        if feature in self.indicator and " == " in name:
            column, category = name.split(" == ", 1)
            return f"{column} != {category}" if holds else name
        if feature in self.indicator and name.endswith(" is missing"):
            return name.removesuffix(" is missing") + " is not missing" if holds else name
        t = format_threshold(threshold)
        return f"{name} <= {t}" if holds else f"{name} > {t}"

    # ------------------------------------------------------------------ copies
    def replace(self: Self, **changes: Any) -> Self:
        """A copy with some constructor arguments replaced (e.g. ``feature_names``).

        The copy shares no array with this model; the constructor checks it as it checks
        any model.

        Parameters
        ----------
        **changes
            Constructor arguments, by name, to replace.

        Returns
        -------
        Model
            The new model, of this model's kind.
        """
        arguments = {name: _copied(getattr(self, name)) for name in self.__slots__}
        arguments.update(changes)
        return type(self)(**arguments)

    def copy(self: Self) -> Self:
        """A copy that shares no array with this model (the feature names are shared).

        Returns
        -------
        Model
            An equal model.
        """
        return self.replace()

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary; :meth:`from_dict` restores an equal model.

        Returns
        -------
        dict
            The format tag and version, the labels, the feature names and the model's arrays
            as lists.
        """
        return {
            **self.header,
            "classes": [json_scalar(c) for c in self.classes.tolist()],
            "feature_names": self.feature_names,
            "indicator": sorted(self.indicator),
            **self._arrays(),
        }

    @classmethod
    def from_dict(cls: type[Self], data: dict[str, Any]) -> Self:
        """The model a dictionary of :meth:`to_dict` describes, checked as untrusted input.

        Every field is checked (its type, length and range) before an array is built, then
        the model's structural rules (:meth:`check`): a damaged or edited dictionary is
        refused, in time linear in its size, and never hangs a later prediction.

        Parameters
        ----------
        data : dict
            A dictionary written by :meth:`to_dict` (or read from its JSON).

        Returns
        -------
        Model
            The model.

        Raises
        ------
        ModelError
            If ``data`` is not a model of this kind, was written by a newer satdt, or breaks
            a rule of the kind.
        """
        fields = Fields(data, cls.kind, cls._error)
        fields.header(cls.header["format"], cls.header["version"])
        shared = {
            "classes": fields.labels(),
            "feature_names": fields.strings("feature_names"),
            "indicator": fields.integers("indicator", optional=True),
        }
        model = cls._from_fields(fields, shared)
        model.check()
        return model

    def to_json(self, indent: int | None = None) -> str:
        """The model as JSON text (:meth:`to_dict`, serialised).

        Parameters
        ----------
        indent : int, optional
            Indentation of the JSON (default: one line).

        Returns
        -------
        str
            The JSON text; :meth:`from_json` reads it back.
        """
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls: type[Self], text: str) -> Self:
        """The model that JSON text of :meth:`to_json` describes, checked as :meth:`from_dict`
        checks.

        Parameters
        ----------
        text : str
            The JSON text.

        Returns
        -------
        Model
            The model.

        Raises
        ------
        ModelError
            If the text is not JSON, or not a model of this kind (see :meth:`from_dict`).
        """
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise cls._error(f"not a satdt {cls.kind}: not valid JSON ({exc})") from None
        return cls.from_dict(data)

    # ------------------------------------------------------------------ comparison
    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(_same(getattr(self, name), getattr(other, name)) for name in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self._repr_items())})"

    def _repr_svg_(self) -> str | None:
        """The model drawn for Jupyter (:func:`satdt.plot.model_svg`, through the hook of
        :mod:`satdt.models.display`); None without matplotlib, and the notebook shows the text
        repr instead."""
        return display.svg(self)
