"""OptimalTreeClassifier: the one estimator over satdt's searches, scikit-learn compatible.

The estimator checks its parameters once, looks the method up in the table of searches
(:mod:`satdt.methods`), prepares the data (:mod:`satdt.prepare`), runs the method, re-checks
the model against the data and keeps the :class:`~satdt.result.SearchResult`. Its
parameters are the shared ones plus every method's own, read from the table, so a new
method needs no change here. scikit-learn is optional: the estimator implements the parts
of its protocol it needs (``get_params``/``set_params``, tags, ``score``) itself.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import re
import textwrap
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from . import methods
from .data import Dataset, check_complete, check_missing
from .errors import (
    REMOVED_IN,
    InfeasibleError,
    NotProvenWarning,
    ParameterError,
    TimeUp,
    honour_interrupt,
    interrupt_handled,
    interrupt_pending,
    not_fitted_error,
    renamed,
    user_stacklevel,
)
from .methods import CONSISTENCY, OBJECTIVES, Method, Task
from .models.tree import LEAF, Tree
from .prepare import (
    Prepared,
    check_class_weight,
    class_weights,
    design_for,
    is_non_negative_number,
    prepare,
    sample_weights,
    validate,
)
from .result import Event, Progress, Recorder, SearchResult

# From this many rows on, a greedy tree grown on the numeric data (every threshold, Numba)
# is the first incumbent, so that a time limit or a memory budget never leaves the user
# with less than one greedy pass; below, the methods' own first trees come at once.
LARGE_ROWS = 20_000


class ParetoFront(list):
    """A list of ``(depth, n_nodes, tree, proven)``, one per depth, and the rule that ended it."""

    def __init__(self, points: list[tuple[int, int, Tree, bool]], stop_reason: str) -> None:
        super().__init__(points)
        self.stop_reason = stop_reason


def _check_count(name: str, value: Any) -> None:
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0
    ):
        raise ParameterError(f"{name} must be a non-negative integer or None, got {value!r}")


def resolve_n_jobs(n_jobs: Any) -> int:
    """The number of cores ``n_jobs`` asks for, scikit-learn's way (None: 1; -1: every core;
    -2: all but one), at most the machine's."""
    cores = os.cpu_count() or 1
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int | np.integer) or n_jobs == 0:
        raise ParameterError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    wanted = int(n_jobs) if n_jobs > 0 else cores + 1 + int(n_jobs)
    return max(1, min(wanted, cores))


def _check_positive(name: str, value: Any, unit: str, allow_none: bool = True) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int | float | np.number) or value <= 0:
        raise ParameterError(f"{name} must be a positive number of {unit}, got {value!r}")


# The default of a renamed parameter's old name: not set.
DEPRECATED = "deprecated"


def _is_deprecated_default(value: Any) -> bool:
    return isinstance(value, str) and value == DEPRECATED


def _literal_names(text: str) -> str:
    """Help text for a docstring: fitted attributes (``method_``, ``result_.stats``) as
    literals, which reStructuredText would read as links."""
    return re.sub(r"(?<![`\w])(\w+_(?:\.\w+)*)(?![`\w])", r"``\1``", text)


class SatdtEstimator:
    """What every satdt estimator shares: parameters from a table, checks, data preparation.

    A subclass lists its shared parameters in ``_SHARED`` (name, default, help); the method
    parameters of :mod:`satdt.methods` are added after them. ``__init__`` only stores keyword
    arguments, as scikit-learn requires; its signature is built from the same lists.
    """

    _SHARED: ClassVar[tuple[tuple[str, Any, str], ...]] = ()
    # parameters renamed: old name -> new name; the old one is still taken (its default is
    # DEPRECATED) with a FutureWarning until satdt errors.REMOVED_IN
    _RENAMED: ClassVar[dict[str, str]] = {}
    _fitted_attribute: ClassVar[str] = "model_"
    # what scikit-learn before 1.6 reads (is_classifier, its checks); 1.6 on: __sklearn_tags__
    _estimator_type: ClassVar[str] = "classifier"

    @classmethod
    def _method_params(cls) -> dict[str, methods.Param]:
        """The parameters of the searches this estimator runs (the table's, for trees)."""
        return methods.method_params()

    @classmethod
    def _defaults(cls) -> dict[str, Any]:
        defaults = {name: default for name, default, _ in cls._SHARED}
        for name, param in cls._method_params().items():
            defaults.setdefault(name, param.default)
        defaults["on_improve"] = None
        for old in cls._RENAMED:
            defaults[old] = DEPRECATED
        return defaults

    def _param(self, name: str) -> Any:
        """The value of parameter ``name``, or of the old name it replaces when that was set
        (with a FutureWarning)."""
        for old, new in self._RENAMED.items():
            if new == name and not _is_deprecated_default(getattr(self, old, DEPRECATED)):
                renamed(old, new, type(self).__name__)
                return getattr(self, old)
        return getattr(self, name)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            return  # a subclass's own __init__ is kept (it stores its parameters itself)
        defaults = cls._defaults()

        def __init__(self: SatdtEstimator, **params: Any) -> None:
            for name in params:
                if name not in defaults:
                    raise TypeError(
                        f"{cls.__name__}.__init__() got an unexpected keyword argument {name!r}"
                    )
            for name, default in defaults.items():
                setattr(self, name, params.get(name, default))

        self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [self_param]
            + [
                inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
                for name, default in defaults.items()
            ]
        )
        __init__.__qualname__ = f"{cls.__name__}.__init__"
        cls.__init__ = __init__  # type: ignore[method-assign]
        documented = [(name, text) for name, _, text in cls._SHARED]
        for name, param in cls._method_params().items():
            users = [m.name for m in methods.METHODS.values() if param in m.params]
            documented.append((name, f"Method {', '.join(users)}: {param.help}."))
        documented.append(("on_improve", "Called with the SearchResult on every new incumbent."))
        for old, new in cls._RENAMED.items():
            documented.append(
                (old, f"Deprecated: renamed {new} (same meaning); removed in {REMOVED_IN}.")
            )
        lines = [
            f"    {name}\n"
            + textwrap.fill(
                _literal_names(text), 92, initial_indent=" " * 8, subsequent_indent=" " * 8
            )
            for name, text in documented
        ]
        cls.__doc__ = (cls.__doc__ or "") + "\n    Parameters\n    ----------\n" + "\n".join(lines)

    # ------------------------------------------------------------------ scikit-learn protocol
    @classmethod
    def _param_names(cls) -> list[str]:
        """The table's parameters, and those a subclass's own ``__init__`` adds."""
        names = list(cls._defaults())
        own = inspect.signature(cls.__init__).parameters.values()
        names += [
            p.name
            for p in own
            if p.name != "self"
            and p.name not in names
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ]
        return names

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> SatdtEstimator:
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"invalid parameter {name!r} for {type(self).__name__}; valid: {valid}"
                )
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = self._defaults()
        changed = [
            f"{k}={v!r}"
            for k, v in self.get_params().items()
            if defaults.get(k) is not v and defaults.get(k) != v
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """What Jupyter shows: the repr above, and once fitted the model drawn as SVG
        (:func:`satdt.plot.model_svg`; text only without matplotlib)."""
        bundle = {"text/plain": repr(self)}
        fitted = getattr(self, self._fitted_attribute, None)
        if fitted is not None:
            from .plot import model_svg

            svg = model_svg(fitted)
            if svg is not None:
                bundle["image/svg+xml"] = svg
        return bundle

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn before 1.6
        return {"requires_y": True, "allow_nan": getattr(self, "missing", None) == "split"}

    def __sklearn_tags__(self):  # only scikit-learn calls this, so it may import it
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(),
            input_tags=InputTags(allow_nan=getattr(self, "missing", None) == "split"),
        )

    # ------------------------------------------------------------------ checks
    def _resolve(self) -> tuple[Method, dict[str, Any]]:
        """Check every parameter; return the method to run and its options."""
        for name in ("max_depth", "max_nodes", "max_thresholds"):
            _check_count(name, getattr(self, name))
        if self.max_thresholds is not None and self.max_thresholds < 1:
            raise ParameterError(
                f"max_thresholds must be a positive integer or None, got {self.max_thresholds!r}"
            )
        _check_positive("time_limit", self.time_limit, "seconds")
        _check_positive("max_memory_mb", self.max_memory_mb, "megabytes", allow_none=False)
        if self.resolve not in (None, "majority"):
            raise ParameterError(f"resolve must be None or 'majority', got {self.resolve!r}")
        check_missing(self.missing)
        resolve_n_jobs(getattr(self, "n_jobs", 1))
        options = {name: getattr(self, name) for name in methods.method_params()}
        method, own = methods.resolve_method(self.objective, self.method, options)
        self._check_error_options()
        kind = OBJECTIVES[self.objective].kind
        if kind != CONSISTENCY and self.max_depth is None:
            raise ParameterError(
                f"objective={self.objective!r} needs max_depth (the depth of the trees compared)"
            )
        if self.max_nodes is not None and kind != CONSISTENCY:
            raise ParameterError(
                "max_nodes caps the consistency objectives ('depth', 'size'), not "
                f"{self.objective!r}"
            )
        return method, own

    def _check_error_options(self) -> None:
        """Check the options of the error objective: leaf_penalty, min_support, class_weight."""
        penalty, support = self.leaf_penalty, self.min_support
        if not is_non_negative_number(penalty):
            raise ParameterError(
                f"leaf_penalty must be a finite number >= 0 (the cost of a leaf, as a fraction "
                f"of the total weight), got {penalty!r}"
            )
        if isinstance(support, bool) or not isinstance(support, int | np.integer) or support < 1:
            raise ParameterError(f"min_support must be a positive integer, got {support!r}")
        check_class_weight(self.class_weight)
        consistency = OBJECTIVES[self.objective].kind == CONSISTENCY
        if consistency and (penalty > 0 or support > 1):
            name = "leaf_penalty" if penalty > 0 else "min_support"
            raise ParameterError(
                f"{name} applies to objective='error' (a consistent tree has pure leaves "
                f"and no error to trade), not {self.objective!r}; leave it at its default"
            )

    # ------------------------------------------------------------------ fitting
    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, *, feature_names: list[str] | None = None
    ) -> SatdtEstimator:
        """Find the optimal model for ``(X, y)``; returns ``self``.

        ``X`` is a numeric array, a table of strings/objects (categorical columns) or a pandas
        DataFrame. ``sample_weight`` weighs rows for the error objective; the consistency
        objectives use it only as presence (a row of weight 0 is left out).
        """
        started = time.perf_counter()
        self._resolve()
        dataset = validate(
            X, y, feature_names=feature_names, estimator=type(self).__name__, missing=self.missing
        )
        return self.fit_dataset(dataset, sample_weight=sample_weight, started=started)

    def _check_missing(self, dataset: Dataset) -> None:
        """Refuse a table with missing cells when ``missing="error"``."""
        if self.missing == "error":
            check_complete(dataset)

    def _method_for(self, data: Prepared, method: Method, options: dict[str, Any]) -> Method:
        """The method to run: ``auto`` looks at the prepared data, unless method options were
        given (they name the method they belong to, the one :meth:`_resolve` chose)."""
        if self.method == "auto" and not options:
            return methods.METHODS[methods.choose_method(self.objective, data)]
        if method.input == "numeric" and data.has_missing:
            other = methods.choose_method(self.objective, data)
            raise ParameterError(
                f"method={method.name!r} searches the numeric columns and cannot take missing "
                f"values; use method={other!r} (what method='auto' runs on these data), or "
                "impute the missing values"
            )
        return method

    def _prepare(
        self,
        dataset: Dataset,
        sample_weight: Any,
        on_event: Callable[[Event], None] | None,
        started: float | None,
    ) -> Prepared:
        """Prepare the data of one fit and set the fitted schema attributes."""
        self._check_missing(dataset)
        recorder = Recorder(
            self.objective, on_improve=self.on_improve, on_event=on_event, start=started
        )
        deadline = None if self.time_limit is None else recorder.start + float(self.time_limit)
        if self.class_weight is not None:
            sample_weight = sample_weights(sample_weight, len(dataset.y)) * class_weights(
                self.class_weight, dataset.y
            )
        data = prepare(
            dataset,
            sample_weight,
            consistency=OBJECTIVES[self.objective].kind == CONSISTENCY,
            resolve=self.resolve,
            recorder=recorder,
            deadline=deadline,
            max_thresholds=self.max_thresholds,
            max_memory_mb=float(self.max_memory_mb),
        )
        self.schema_ = dataset.schema
        self.feature_names_in_ = np.asarray(dataset.schema.feature_names, dtype=object)
        self.n_features_in_ = data.X.shape[1]
        self.classes_ = data.classes
        return data

    def fit_dataset(
        self,
        dataset: Dataset,
        sample_weight: Any = None,
        *,
        on_event: Callable[[Event], None] | None = None,
        started: float | None = None,
    ) -> SatdtEstimator:
        """Fit on a table read by :func:`satdt.read_csv` (keeps its schema and line numbers).

        ``on_event`` receives every event as it happens (SAT calls, preparation progress: the
        CLI's live status line); ``started`` is the ``time.perf_counter()`` value the time
        limit counts from (default: now; the CLI passes the moment it started reading).
        Ctrl-C during the search returns the best model found so far, not proven.
        """
        method, options = self._resolve()
        data = self._prepare(dataset, sample_weight, on_event, started)
        # if the limit passes while auto looks at the data, its choice without them
        with contextlib.suppress(TimeUp):
            method = self._method_for(data, method, options)
        task = Task(data, self.objective, self.max_depth, self.max_nodes, options)
        task.n_jobs = resolve_n_jobs(getattr(self, "n_jobs", 1))
        recorder = data.recorder
        self._set_error_options(task)
        try:
            honour_interrupt()  # a Ctrl-C dropped while the data was read and prepared
            result = self._search(method, task)
        except (KeyboardInterrupt, Exception) as stopped:
            if not isinstance(stopped, KeyboardInterrupt):
                if not interrupt_pending():
                    raise
                # a Ctrl-C that a library turned into an error of its own: NumPy reports a
                # KeyboardInterrupt raised while it compares structured arrays as a TypeError
                if recorder.best is None:
                    raise KeyboardInterrupt from stopped
            elif recorder.best is None:
                raise
            interrupt_handled()
            recorder.stats.interrupted = True
            recorder.stop_reason = "interrupted"
            result = recorder.snapshot(proven_optimal=False)
        left = data.time_left()
        if not (result.proven_optimal or result.stop_reason) and left is not None and left <= 0:
            recorder.stop_reason = "time limit"
            result = replace(result, stop_reason=recorder.stop_reason)
        if result.model is not task.checked:  # a greedy first tree was checked when recorded
            self._check_model(result.model, data, recorder.best.value, task)
        self.result_ = result
        self.method_ = method.name
        setattr(self, self._fitted_attribute, result.model)
        if not result.proven_optimal and result.gap > 0:
            warnings.warn(
                f"search completed within the permitted gap (max_gap): {self.objective} "
                f"{result.objective_value:g} is at most {result.gap:g} above the optimum "
                f"(lower bound {result.lower_bound:g}), not proven optimal",
                NotProvenWarning,
                stacklevel=user_stacklevel(),
            )
        elif not result.proven_optimal:
            why = f" ({result.stop_reason})" if result.stop_reason else ""
            warnings.warn(
                f"search stopped early{why}: returning the best model found ({self.objective} "
                f"{result.objective_value:g}, lower bound {result.lower_bound:g}), not proven optimal",
                NotProvenWarning,
                stacklevel=user_stacklevel(),
            )
        return self

    def _set_error_options(self, task: Task) -> None:
        """Give the task its leaf penalty in units of the weights and its minimum support.

        The searches minimise error + P * leaves with P = leaf_penalty * total weight; the
        results show that cost divided by the total weight (error / total + leaf_penalty *
        leaves). A minimum support larger than the training rows admits no tree at all.
        """
        data = task.data
        if OBJECTIVES[self.objective].kind == CONSISTENCY:
            return
        total = float(data.weight.sum())
        if self.leaf_penalty > 0:
            task.leaf_penalty = float(self.leaf_penalty) * total
            task.recorder.value_scale = 1.0 / total
        task.min_support = int(self.min_support)
        rows = int(np.count_nonzero(data.weight > 0))
        if task.min_support > rows:
            raise InfeasibleError(
                f"min_support={task.min_support} is more than the {rows} training rows of "
                "positive weight: no leaf can hold that many; lower min_support"
            )

    def _search(self, method: Method, task: Task) -> SearchResult:
        """Run the method, after the shared first steps: one class, a greedy start, time-outs."""
        data, recorder = task.data, task.recorder
        recorder.to_user_tree = data.user_tree if method.input == "binary" else data.finish
        if data.n_classes == 1:
            if self.max_nodes is not None and self.max_nodes < 1:
                raise InfeasibleError("no tree has fewer than 1 node: raise max_nodes")
            leaf = data.finish(Tree.single_leaf(0, data.classes))
            value = OBJECTIVES[self.objective].value_of(leaf, 0.0, task.leaf_penalty)
            recorder.improve(leaf, value, mapped=True)
            return recorder.snapshot(proven_optimal=True)
        if len(data.y) >= LARGE_ROWS:
            self._greedy_start(task)
        try:
            if not self._await_kernels(method, task):
                if recorder.best is None:  # no admissible greedy tree: as any time-out
                    raise TimeUp
                return recorder.snapshot(proven_optimal=False)
            return method.run(task)
        except TimeUp:
            if recorder.best is None:
                self._greedy_start(task, hurry=True)
            if recorder.best is None:
                raise InfeasibleError(
                    "the time limit passed before any model satisfying the constraints was "
                    "found; raise time_limit"
                ) from None
            return recorder.snapshot(proven_optimal=False)

    def _await_kernels(self, method: Method, task: Task) -> bool:
        """Make sure the method's Numba kernels are ready before it runs; False: time is up.

        On a first run they compile in a background process (:mod:`satdt.dp.kernels`) while
        a greedy tree grown in NumPy becomes the incumbent, so that a time limit that passes
        first still returns a real tree, not proven, saying why. Once compiled they load
        from Numba's cache in a fraction of a second.
        """
        options = method.kernels({**task.options, "min_support": task.min_support})
        if not options:
            return True
        from .dp import kernels

        background = kernels.request([group for option in options for group in option])
        recorder = task.recorder
        if not any(kernels.ready(option) for option in options):
            if not background:
                return True  # no background compilation here: the method compiles them itself
            if recorder.best is None:
                self._greedy_start(task)
            step = "compiling the search kernels (first run only)"
            recorder.event(Progress(step))

            def tell(seconds: float) -> None:
                if seconds >= 1:
                    recorder.event(Progress(f"{step}: {seconds:.0f} s"))

            if not kernels.wait(options, task.deadline, tell):
                left = task.data.time_left()
                if left is None or left > 0:
                    return True  # the background compilation failed: the method compiles here
                recorder.stop_reason = (
                    "time limit while the search kernels were compiling (a first run), so this "
                    "is the greedy tree; later runs load the kernels from the cache"
                )
                return False
        # the most the method can use (the others, if any, compile in the background meanwhile)
        chosen = max((option for option in options if kernels.ready(option)), key=len)
        if task.deadline is None or all(kernels.loaded(g) for g in chosen):
            return True
        # in the cache but not in this process: loading takes about a second, so the greedy
        # tree first, and the time limit holds while they load
        if recorder.best is None:
            self._greedy_start(task)
        if kernels.load_in_background(chosen).done(max(task.deadline - time.perf_counter(), 0.0)):
            return True
        recorder.stop_reason = (
            "time limit while the search kernels were loading from the cache, so this is the "
            "greedy tree"
        )
        return False

    def _greedy_start(self, task: Task, hurry: bool = False) -> None:
        """Record a greedy tree grown on the numeric data as the first incumbent.

        For the consistency objectives it is grown until every leaf is pure (a consistent
        tree); for the error objective, to ``max_depth``. Its value becomes the bound the
        method must beat. ``hurry``: the deadline has passed, grow it at once anyway.
        """
        from .dp.greedy import greedy_numeric_tree

        data = task.data
        if data.has_missing:
            return  # the numeric greedy tree takes no missing values: the method starts alone
        consistency = OBJECTIVES[self.objective].kind == CONSISTENCY
        data.recorder.event(Progress("growing a greedy tree on the numeric data"))
        tree = greedy_numeric_tree(
            data.X,
            data.y,
            data.n_classes,
            sample_weight=data.weight,
            max_depth=None if consistency else self.max_depth,
            deadline=None if hurry else data.deadline,
        )
        # grown on these rows and weights, it carries their class weights; a tree grown until
        # every leaf is pure has no leaf to merge, so only a depth-capped one is simplified
        tree = data.named(tree) if consistency else data.finish(tree)
        if not consistency and (task.leaf_penalty > 0 or task.min_support > 1):
            tree = tree.pruned(task.leaf_penalty, task.min_support, data.X, data.y, data.weight)
        error = tree.count_error()
        if consistency and (
            error > 0
            or (self.max_depth is not None and tree.depth > self.max_depth)
            or (self.max_nodes is not None and tree.n_nodes > self.max_nodes)
        ):
            return  # not admissible: the method must find its own first tree
        value = OBJECTIVES[self.objective].value_of(tree, error, task.leaf_penalty)
        if data.recorder.improve(tree, value, mapped=True) is not None:
            # now, within the time limit: not again at the end
            self._check_model(tree, data, value, task)
            task.checked = tree

    def _check_model(
        self, model: Any, data: Prepared, value: float, task: Task | None = None
    ) -> None:
        """Re-check a model against the data before anyone sees it (correct before fast).

        ``value`` is in the search's units: for the error objective, the weighted error plus
        the task's leaf penalty per leaf; every leaf must hold the task's minimum support.
        """
        predicted = model.predict_index(data.X)
        wrong = predicted != data.y
        objective = OBJECTIVES[self.objective]
        if objective.kind == CONSISTENCY:
            if wrong.any():
                raise RuntimeError("internal error: the returned model misclassifies training rows")
            expected = objective.value_of(model, 0.0)
            if expected != value:
                raise RuntimeError(
                    f"internal error: reported {self.objective} {value} but the model has {expected}"
                )
            return
        error = float(data.weight[wrong].sum())
        penalty = 0.0 if task is None else task.leaf_penalty
        cost = error + penalty * getattr(model, "n_leaves", 0)
        if not np.isclose(cost, value, rtol=1e-9, atol=1e-9 * max(1.0, float(data.weight.sum()))):
            what = "error" if penalty == 0 else "penalised error"
            raise RuntimeError(f"internal error: model {what} {cost} != reported {value}")
        if task is not None and task.min_support > 1 and getattr(model, "n_leaves", 1) > 1:
            support = np.bincount(model.apply(data.X)[data.weight > 0], minlength=model.n_nodes)
            leaves = np.flatnonzero(model.feature == LEAF)
            if support[leaves].min() < task.min_support:
                raise RuntimeError(
                    f"internal error: a leaf holds {support[leaves].min()} rows, fewer than "
                    f"min_support={task.min_support}"
                )

    # ------------------------------------------------------------------ prediction
    def _fitted_model(self) -> Any:
        model = getattr(self, self._fitted_attribute, None)
        if model is None:
            raise not_fitted_error(
                f"this {type(self).__name__} is not fitted yet; call fit(X, y) before using it"
            )
        return model

    def _design(self, X: Any) -> np.ndarray:
        """Rows to predict as the fitted design matrix, encoded with the fitted schema.

        Missing cells are kept (the tree routes them) only by an estimator with
        ``missing="split"``; the others refuse them, as they refused them when fitting.
        """
        self._fitted_model()
        design = design_for(X, self.schema_, self.n_features_in_, type(self).__name__)
        if getattr(self, "missing", "error") != "split" and np.isnan(design).any():
            raise ValueError(
                f"Input X contains NaN (a missing value), which this {type(self).__name__} "
                "refuses (fitted with missing='error', or a diagram): impute the missing values"
            )
        return design

    def predict(self, X: Any) -> np.ndarray:
        """The label predicted for each row of ``X``."""
        return self._fitted_model().predict(self._design(X))

    def predict_proba(self, X: Any) -> np.ndarray:
        """Training class frequencies of the leaf each row reaches, columns in ``classes_`` order."""
        return self._fitted_model().predict_proba(self._design(X))

    def apply(self, X: Any) -> np.ndarray:
        """Where each row ends: a tree's leaf (its node index, as scikit-learn's ``apply``);
        a diagram's path, the nodes it visits then its terminal (:meth:`Diagram.apply`,
        whose last column is the terminal ``-1 - class index``)."""
        return self._fitted_model().apply(self._design(X))

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean (weighted) accuracy on ``(X, y)``."""
        correct = self.predict(X) == np.asarray(y)
        return float(np.average(correct, weights=sample_weights(sample_weight, len(correct))))


class OptimalTreeClassifier(SatdtEstimator):
    """Optimal decision trees: minimum depth, minimum size (SAT) or minimum error (DP).

    Every tree returned is re-checked against the training data. ``result_`` holds the
    :class:`~satdt.result.SearchResult` (objective value, lower bound, proven or not, the
    history of incumbents, events and the method's statistics); ``tree_`` the tree;
    ``method_`` the name of the method that ran (what ``method="auto"`` chose).
    """

    _SHARED: ClassVar[tuple[tuple[str, Any, str], ...]] = (
        (
            "objective",
            "depth",
            '"depth": the shallowest tree that classifies every training row correctly; '
            '"size": the smallest such tree (fewest nodes) at the minimum depth, or over all '
            'depths up to max_depth; "error": the tree of depth at most max_depth with the '
            "fewest misclassified (weighted) training rows.",
        ),
        (
            "method",
            "auto",
            "The search, from the table of searches (satdt.methods.METHODS); 'auto' picks the "
            "method for the objective and, for 'error', the data (ConTree on numeric columns "
            "with many thresholds, else the Blossom/DL8.5 portfolio); method_ says which ran.",
        ),
        ("max_depth", None, 'A cap on the depth (required for "error").'),
        (
            "max_nodes",
            None,
            "A cap on the number of nodes (internal + leaves), consistency objectives.",
        ),
        (
            "time_limit",
            None,
            "Wall-clock seconds from the call of fit, data preparation included; then the best "
            "tree found is returned with result_.proven_optimal = False and a NotProvenWarning.",
        ),
        (
            "max_thresholds",
            None,
            "At most this many quantile thresholds per numeric column (None: every midpoint "
            "between consecutive distinct values; optimality then holds for the full data).",
        ),
        (
            "max_memory_mb",
            1024,
            "Memory budget of the binary features: when every threshold would exceed it, fewer "
            "quantile thresholds are used (result_.preparation.notes says so).",
        ),
        (
            "resolve",
            None,
            "None: contradictory rows (same features, different labels) are an error for the "
            "consistency objectives; 'majority': relabel each group with its majority label.",
        ),
        (
            "missing",
            "split",
            '"split": a feature cell may be missing (NaN, None; empty or NA in a file); each '
            "split of a column with missing values also learns the side its missing rows take, "
            "optimally, and predict sends them there (a split on a column without missing "
            'values sends them where more training rows went). "error": refuse missing cells.',
        ),
        (
            "leaf_penalty",
            0.0,
            'objective="error": minimise (weighted errors) / (total weight) + leaf_penalty * '
            "(number of leaves) over trees of depth at most max_depth, so that a leaf is split "
            "only where that saves more than leaf_penalty of the weight; result_.objective_value "
            "is then that penalised value. 0: the fewest errors.",
        ),
        (
            "min_support",
            1,
            'objective="error": every leaf holds at least this many training rows (of positive '
            "weight); a split is tried only when both sides hold that many.",
        ),
        (
            "class_weight",
            None,
            "None, 'balanced' (n_rows / (n_classes * rows of the class)) or {label: weight}: "
            "multiplies sample_weight, as in scikit-learn.",
        ),
        (
            "n_jobs",
            1,
            "Cores for one fit (None: 1; -1: every core): the portfolio's searches run side by "
            "side sharing the incumbent; with solver='race' the SAT searches race that many "
            "solvers on every call. The optima are the same; 1 is the single-core search.",
        ),
    )
    _fitted_attribute: ClassVar[str] = "tree_"

    def to_sklearn(self) -> Any:
        """The fitted tree as a fitted ``sklearn.tree.DecisionTreeClassifier``.

        Its ``predict``, ``predict_proba`` and ``apply`` equal this estimator's on every row
        (missing values included), so scikit-learn's ``plot_tree``, ``export_graphviz`` and
        ``export_text`` (pass ``feature_names=list(est.feature_names_in_)``), SHAP's tree
        explainer and skl2onnx take it. Needs scikit-learn (the ``export`` extra).
        """
        return self._fitted_model().to_sklearn(self._export_columns())

    def to_onnx(self) -> Any:
        """The fitted tree as an ONNX model (``onnx.ModelProto``: input ``X`` float32 rows,
        outputs ``label`` and ``probabilities``), for onnxruntime and other ONNX runtimes.
        Needs skl2onnx (the ``export`` extra)."""
        return self._fitted_model().to_onnx(self._export_columns())

    def _export_columns(self) -> int:
        """The columns an exported model reads: the user's, which must be its design matrix."""
        self._fitted_model()
        if len(self.schema_.columns) != self.n_features_in_:
            raise ValueError(
                f"the tree reads {self.n_features_in_} encoded columns, not the "
                f"{len(self.schema_.columns)} columns given to fit (categorical columns are "
                "one-hot encoded inside satdt); export tree_ instead and give it "
                "schema_.encode(X) rows: est.tree_.to_sklearn(est.n_features_in_)"
            )
        return int(self.n_features_in_)

    def pareto_dataset(
        self, dataset: Dataset, *, on_event: Callable[[Event], None] | None = None
    ) -> ParetoFront:
        """The depth/size Pareto front of a table read by :func:`satdt.read_csv` (see :func:`pareto_front`).

        The fitted ``tree_`` is the smallest tree of the front.
        """
        if self.objective != "size" or self.max_nodes is not None:
            raise ParameterError(
                "the Pareto front is a size objective without max_nodes: use objective='size'"
            )
        method, options = self._resolve()
        data = self._prepare(dataset, None, on_event, None)
        method = self._method_for(data, method, options)
        to_user = data.user_tree if method.input == "binary" else data.finish
        data.recorder.to_user_tree = to_user
        if data.n_classes == 1:
            points = [(0, 1, data.finish(Tree.single_leaf(0, data.classes)), True)]
            reason = "a single class: one leaf"
        else:
            task = Task(data, self.objective, self.max_depth, None, options)
            front, reason = methods.run_pareto(task, method.name)
            points = [(p.depth, p.n_nodes, to_user(p.tree), p.proven) for p in front]
        for _, n_nodes, tree, _ in points:
            self._check_model(tree, data, n_nodes)
        self.tree_ = points[-1][2]
        self.method_ = method.name
        self.result_ = data.recorder.snapshot(proven_optimal=all(p[3] for p in points))
        return ParetoFront(points, reason)


def pareto_front(
    X: Any,
    y: Any,
    max_depth: int | None = None,
    *,
    feature_names: list[str] | None = None,
    **params: Any,
) -> ParetoFront:
    """The depth/size trade-off of consistent trees: for each depth from the minimum to
    ``max_depth`` (default: the minimum + 2), the fewest nodes of a tree of at most that depth.

    Returns a list of ``(depth, n_nodes, tree, proven)``; its ``stop_reason`` says which rule
    ended it (the last depth asked for, a time limit, or the leaf count L at depth d with
    L <= d + 2, after which no deeper tree can be smaller). ``params`` are those of
    :class:`OptimalTreeClassifier` (``time_limit``, ``resolve``, ``solver``, ...).
    """
    model = OptimalTreeClassifier(objective="size", max_depth=max_depth, **params)
    model._resolve()
    dataset = validate(X, y, feature_names=feature_names, estimator="pareto_front")
    return model.pareto_dataset(dataset)
