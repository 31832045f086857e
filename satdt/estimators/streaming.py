"""Rows that arrive: ``OptimalTreeClassifier.partial_fit`` and ``fit_teacher``.

Both keep the counterexample-guided search between calls (:mod:`satdt.sat.growing`: one
incremental solver per depth, its learnt clauses, the proven bounds) in the fitted attribute
``stream_`` (:class:`Stream`). ``partial_fit`` adds a batch of labelled rows: when the current
tree classifies them all no SAT call is made, otherwise the loops go on, and the tree after
each call is a minimum for every row seen so far, proven, as a fresh ``fit`` on them would
find. ``fit_teacher`` learns from a teacher (:mod:`satdt.task.teachers`,
:mod:`satdt.sat.teaching`). Both run the SAT search alone, on every threshold of the rows.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from types import MethodType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.errors import DataError, NotProvenWarning, ParameterError, user_stacklevel
from ..data import check_complete
from ..data.schema import CATEGORICAL, ColumnSpec, Schema
from ..prepare.validate import sample_weights, validate
from ..task.objectives import OBJECTIVES
from ..task.result import Recorder, SearchResult

if TYPE_CHECKING:
    from ..sat.growing import GrowingSearch

# The parameters a stream is made with: a later call must not change them.
_STREAM_PARAMS = (
    "objective",
    "max_depth",
    "solver",
    "counterexamples",
    "leaf_counter",
    "size_search",
    "n_jobs",
    "missing",
)


def unavailable(estimator: Any, name: str) -> str | None:
    """Why ``estimator`` offers no ``partial_fit`` (``fit_teacher``) with its parameters, or None."""
    if estimator.objective not in ("depth", "size"):
        why = f"objective={estimator.objective!r} (they find consistent trees: 'depth' or 'size')"
    elif estimator.method not in ("auto", "sat"):
        why = f"method={estimator.method!r} (they run the SAT loop: method='sat' or 'auto')"
    elif estimator.max_thresholds is not None:
        why = (
            f"max_thresholds={estimator.max_thresholds!r} (quantile thresholds move as rows "
            "arrive: leave it None, every threshold)"
        )
    elif estimator.resolve is not None:
        why = f"resolve={estimator.resolve!r} (a relabelled row could change label later)"
    elif estimator.max_nodes is not None:
        why = f"max_nodes={estimator.max_nodes!r} (leave it None)"
    else:
        return None
    return f"{type(estimator).__name__}.{name} is not available with {why}"


class _OnlyWhenAvailable:
    """A method that exists only for the parameters it serves (as scikit-learn's
    ``available_if``): elsewhere ``hasattr`` is False and the AttributeError says why."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.__doc__ = function.__doc__
        self.__name__ = function.__name__
        self.__wrapped__ = function

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self.function
        why = unavailable(obj, self.__name__)
        if why is not None:
            raise AttributeError(why)
        return MethodType(self.function, obj)


class Stream:
    """What ``partial_fit`` and ``fit_teacher`` keep between calls (an estimator's ``stream_``).

    Attributes
    ----------
    search
        The search (:class:`satdt.sat.growing.GrowingSearch`): the loops per depth with their
        solvers, the proven bounds, the current tree; ``search.rows`` the rows.
    schema
        The columns of the rows (categories seen so far).
    params
        The estimator's parameters the stream was made with.
    classes
        The labels given as ``classes`` to the first call (sorted), or None: labels join as
        they arrive.
    """

    def __init__(
        self,
        search: GrowingSearch,
        schema: Schema,
        params: dict[str, Any],
        classes: list[Any] | None = None,
    ) -> None:
        self.search = search
        self.schema = schema
        self.params = params
        self.classes = classes

    @property
    def X(self) -> np.ndarray:
        """The distinct rows seen, in order of arrival, as design rows."""
        return self.search.rows.X

    @property
    def y(self) -> np.ndarray:
        """The label of each row of ``X``."""
        rows = self.search.rows
        return np.asarray(rows.labels)[rows.y] if rows.n_rows else np.zeros(0)

    @property
    def rows_seen(self) -> int:
        """Every row given so far, repeated ones included."""
        return self.search.rows.given

    def close(self) -> None:
        """Close the solvers."""
        self.search.close()


def _params(estimator: Any) -> dict[str, Any]:
    return {name: getattr(estimator, name) for name in _STREAM_PARAMS}


def _search_options(estimator: Any) -> dict[str, Any]:
    """The loop's options (``solver="race"``: racing solvers on every call, as in ``fit``)."""
    from ..sat.solving import DEFAULT_SOLVER
    from .base import resolve_n_jobs

    options = dict(
        solver=estimator.solver,
        counterexamples=estimator.counterexamples,
        n_jobs=1,
        leaf_counter=estimator.leaf_counter,
        size_search=estimator.size_search,
    )
    if options["solver"] == "race":
        options["solver"] = DEFAULT_SOLVER
        options["n_jobs"] = max(resolve_n_jobs(estimator.n_jobs), 2)
    return options


def end_stream(estimator: Any) -> None:
    """Drop the estimator's stream, if any, and close its solvers (``fit`` starts afresh)."""
    stream = estimator.__dict__.pop("stream_", None)
    if stream is not None:
        stream.close()


def _merge(old: Schema, batch: Schema) -> tuple[Schema, list[int]]:
    """The columns of a stream and of a new batch: the categories the batch brings appended
    to their column's. Returns the schema and where its new design columns are."""
    if [c.name for c in batch.columns] != [c.name for c in old.columns]:
        if len(batch.columns) != len(old.columns):
            raise ValueError(
                f"X has {len(batch.columns)} features, but OptimalTreeClassifier is expecting "
                f"{len(old.columns)} features as input"
            )
        raise ValueError(
            "The feature names should match those that were passed during fit: "
            f"{[c.name for c in old.columns]}, got {[c.name for c in batch.columns]}"
        )
    specs = []
    for before, now in zip(old.columns, batch.columns, strict=True):
        if before.kind != now.kind:
            raise DataError(
                f"column {before.name!r} was {before.kind} in the first call of partial_fit and "
                f"is {now.kind} now; give every batch the same kind of values in a column"
            )
        if before.kind == CATEGORICAL:
            added = tuple(c for c in now.categories if c not in before.categories)
            before = ColumnSpec(
                before.name, CATEGORICAL, before.categories + added, before.missing or now.missing
            )
        specs.append(before)
    merged = Schema.from_columns(specs, old.target, old.dropped)
    known = set(old.feature_names)
    return merged, [k for k, name in enumerate(merged.feature_names) if name not in known]


def _batch_labels(labels: list[Any], stream: Stream, classes: Any) -> None:
    """Check a later batch's labels: ``classes`` as on the first call, every label among them
    when they were given, one type of label throughout."""
    if classes is not None:
        given = np.unique(np.asarray(classes)).tolist()
        if given != stream.classes:
            raise ValueError(
                f"classes={given} is not the same as on the first call of partial_fit, "
                f"{stream.classes}"
            )
    if stream.classes is not None:
        known = set(stream.classes)
        strange = [label for label in labels if label not in known]
        if strange:
            raise ValueError(
                f"y holds the label {strange[0]!r}, which is not among classes="
                f"{stream.classes} given to the first call of partial_fit"
            )
    before = stream.search.rows.labels
    if before and labels:
        kinds = {np.asarray(before).dtype.kind, np.asarray(labels).dtype.kind}
        if len(kinds) > 1:
            raise DataError(
                f"y holds labels of another type ({labels[0]!r}) than the earlier calls "
                f"({before[0]!r}); give every batch labels of one type"
            )


def partial_fit(self: Any, X: Any, y: Any, classes: Any = None, sample_weight: Any = None) -> Any:
    """Add labelled rows and keep the tree a minimum of every row seen so far.

    Rows the current tree classifies cost no SAT call; the others join the
    counterexample-guided loops, whose solvers and learnt clauses are kept from call to call
    (``stream_``). The depth (size) after each call is the minimum on all rows seen so far,
    proven, as a fresh ``fit`` on them finds it: more rows only raise the minimum, a depth
    refuted on some rows stays refuted, and the thresholds are those of every value seen.
    Only for ``objective="depth"`` or ``"size"`` with the SAT search (``method="sat"`` or
    ``"auto"``), every threshold (``max_thresholds=None``), no ``resolve`` and no
    ``max_nodes``; a later ``fit`` starts afresh.

    Parameters
    ----------
    X : array-like or DataFrame
        Rows with the columns of the first call (a category not seen before is welcome);
        no missing numeric cell.
    y : array-like
        Their labels.
    classes : array-like, optional
        Every label the stream will hold, as scikit-learn's ``partial_fit`` takes it on the
        first call (a later label outside it is an error). Without it, classes join as they
        arrive.
    sample_weight : array-like, optional
        Rows of weight 0 are left out; the other weights do not matter to a consistent tree.

    Returns
    -------
    OptimalTreeClassifier
        ``self``, with ``tree_`` and ``result_`` (this call's SAT calls, in
        ``result_.stats``: a ``GrowingStats``).

    Raises
    ------
    DataError
        If a row repeats an earlier one with another label (no consistent tree exists), or
        holds a missing numeric cell.
    InfeasibleError
        If no consistent tree of depth at most ``max_depth`` exists for the rows so far.
    """
    from ..sat.growing import GrowingRows, GrowingSearch

    started = time.perf_counter()
    self._resolve()
    dataset = validate(X, y, estimator=type(self).__name__, missing=self.missing)
    if self.missing == "error":
        check_complete(dataset)
    keep = sample_weights(sample_weight, len(dataset.y)) > 0
    design = dataset.X[keep]
    if np.isnan(design).any():
        row, column = np.argwhere(np.isnan(design))[0]
        raise DataError(
            f"row {int(np.flatnonzero(keep)[row])}, column "
            f"{dataset.schema.feature_names[column]!r} is missing: partial_fit takes complete "
            "numeric cells; impute them, or fit on all rows with missing='split'"
        )
    labels = [
        label
        for label, kept in zip(np.asarray(dataset.y).tolist(), keep.tolist(), strict=True)
        if kept
    ]
    stream: Stream | None = getattr(self, "stream_", None)
    if stream is None:
        fixed = None if classes is None else np.unique(np.asarray(classes)).tolist()
        rows = GrowingRows(design.shape[1], fixed or ())
        search = GrowingSearch(rows, self.objective, self.max_depth, **_search_options(self))
        stream = Stream(search, dataset.schema, _params(self), fixed)
        batch = design
        _batch_labels(labels, stream, None)
    else:
        if stream.params != _params(self):
            raise ParameterError(
                f"partial_fit goes on with the parameters of its first call ({stream.params}); "
                "call fit, or clone the estimator, to start again with others"
            )
        _batch_labels(labels, stream, classes)
        schema, added = _merge(stream.schema, dataset.schema)
        if added:
            stream.search.insert_columns(added)
        where = {name: k for k, name in enumerate(schema.feature_names)}
        batch = np.zeros((len(design), len(schema.feature_names)))
        batch[:, [where[n] for n in dataset.schema.feature_names]] = design
        stream.schema = schema
    rows = stream.search.rows
    new = rows.add(batch, rows.class_index(labels))
    self.stream_ = stream
    recorder = Recorder(self.objective, on_improve=self.on_improve, start=started)
    return _finish(self, stream, recorder, len(new))


def _finish(self: Any, stream: Stream, recorder: Recorder, new_rows: int) -> Any:
    """Solve from where the stream stands, re-check the tree, set the fitted attributes."""
    from ..sat.teaching import user_mapping

    search, rows = stream.search, stream.search.rows
    schema = stream.schema
    names, indicator = list(schema.feature_names), list(schema.indicator)
    recorder.begin(to_user_tree=user_mapping(rows.view(), names, indicator))
    deadline = None if self.time_limit is None else recorder.start + float(self.time_limit)
    settled_before = len(search.settled)
    proven = search.solve(recorder, deadline)
    model = rows.view().labelled(search.tree, names, indicator)
    _check(model, stream, search.value, self.objective, self.max_depth)
    recorder.improve(model, search.value, mapped=True)
    recorder.lower_bound = search.lower_bound
    recorder.stats = search.stats(recorder, new_rows, 0, settled_before)
    stop = "" if proven else "time limit: the best tree of the rows so far"
    return _set_fitted(self, stream, recorder.snapshot(proven_optimal=proven, stop_reason=stop))


def _check(model: Any, stream: Stream, value: int, objective: str, max_depth: int | None) -> None:
    """Every tree re-checked against every row seen (correct before fast)."""
    if not np.array_equal(model.predict(stream.X), stream.y):
        raise RuntimeError("internal error: the tree misclassifies rows seen")
    if OBJECTIVES[objective].value_of(model, 0.0) != value:
        raise RuntimeError(f"internal error: reported {objective} {value} for another tree")
    if max_depth is not None and model.depth > max_depth:
        raise RuntimeError(f"internal error: a tree of depth {model.depth} > max_depth")


def _set_fitted(self: Any, stream: Stream, result: SearchResult) -> Any:
    """The fitted attributes of ``partial_fit`` and ``fit_teacher``; a warning if not proven."""
    self.stream_ = stream
    self.result_ = result
    self.tree_ = result.model
    self.method_ = "sat"
    self.schema_ = stream.schema
    self.feature_names_in_ = np.asarray(stream.schema.feature_names, dtype=object)
    self.n_features_in_ = len(stream.schema.feature_names)
    self.classes_ = result.model.classes
    if not result.proven_optimal:
        warnings.warn(
            f"{result.stop_reason}: returning a tree ({self.objective} "
            f"{result.objective_value:g}, lower bound {result.lower_bound:g}), not proven "
            "optimal",
            NotProvenWarning,
            stacklevel=user_stacklevel(),
        )
    return self


def fit_teacher(
    self: Any, teacher: Any, *, max_rounds: int | None = None, time_limit: float | None = None
) -> Any:
    """Learn the minimum tree a teacher accepts, from its counterexamples alone.

    The counterexample-guided loop with a teacher in place of a table
    (``satdt.task.teachers``): it starts from no rows, finds the minimum-depth (size) tree
    of the rows the teacher gave so far, shows it to the teacher and adds the rows it gets
    wrong, until the teacher has no objection. The tree is then a minimum for the teacher's
    whole domain, proven: every smaller depth (size) was refuted on rows the teacher gave.
    ``stream_`` holds the teacher's rows and the search (a later ``partial_fit`` goes on with
    them). Only for ``objective="depth"`` or ``"size"`` with the SAT search, as
    :meth:`partial_fit`.

    Parameters
    ----------
    teacher : Teacher
        Anything with ``domains``, optionally ``classes``, and ``counterexample(tree)``
        (``satdt.task.teachers.Teacher``; :class:`~satdt.task.teachers.FunctionTeacher`
        and :class:`~satdt.task.teachers.ModelTeacher` are ready-made).
    max_rounds : int, optional
        At most this many questions to the teacher; then the last tree, not proven.
    time_limit : float, optional
        Seconds for this call (default: the estimator's ``time_limit``); then the last tree,
        not proven.

    Returns
    -------
    OptimalTreeClassifier
        ``self``, fitted: ``tree_`` over the domains' design columns, ``result_`` (its SAT
        calls hold the teacher's rows as their counterexamples: ``satdt.plot.plot_loop``
        draws them), ``classes_``, ``schema_``.

    Raises
    ------
    ParameterError
        If ``teacher`` has no ``domains`` or no ``counterexample``, or ``max_rounds`` is not
        a positive integer.
    DataError
        If the teacher returns a row the tree classifies right, a row outside its domains,
        or the same row with two labels.
    """
    from ..sat.growing import GrowingRows, GrowingSearch
    from ..sat.teaching import teach
    from ..task.teachers import read_domains

    started = time.perf_counter()
    self._resolve()
    if not hasattr(teacher, "domains") or not callable(getattr(teacher, "counterexample", None)):
        raise ParameterError(
            f"a teacher has domains and a method counterexample(tree), got {teacher!r} "
            "(see satdt.task.teachers)"
        )
    if max_rounds is not None and (
        isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1
    ):
        raise ParameterError(f"max_rounds must be a positive integer or None, got {max_rounds!r}")
    limit = self.time_limit if time_limit is None else time_limit
    if limit is not None and not float(limit) > 0:
        raise ParameterError(f"time_limit must be a positive number of seconds, got {limit!r}")
    domains = read_domains(teacher.domains)
    classes = getattr(teacher, "classes", None)
    labels = [] if classes is None else np.unique(np.asarray(classes)).tolist()
    rows = GrowingRows(len(domains.design_values), labels, domains=domains.design_values)
    options = dict(_search_options(self), heuristics=False)
    search = GrowingSearch(rows, self.objective, self.max_depth, **options)
    end_stream(self)
    stream = Stream(search, domains.schema, _params(self), labels or None)
    recorder = Recorder(self.objective, on_improve=self.on_improve, start=started)
    deadline = None if limit is None else recorder.start + float(limit)
    result = teach(
        teacher, search, domains, recorder=recorder, deadline=deadline, max_rounds=max_rounds
    )
    _check(result.model, stream, search.value, self.objective, self.max_depth)
    return _set_fitted(self, stream, result)


class StreamingTree:
    """``partial_fit`` and ``fit_teacher`` for :class:`~satdt.OptimalTreeClassifier`."""

    partial_fit = _OnlyWhenAvailable(partial_fit)
    fit_teacher = _OnlyWhenAvailable(fit_teacher)
