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
from typing import Any, ClassVar

import numpy as np

from . import methods, tree_search
from .costs import cost_matrix
from .data import Dataset, check_complete
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
from .models.tree import Tree
from .params import Param
from .prepare import (
    Prepared,
    check_class_weight,
    class_weights,
    design_for,
    prepare,
    sample_weights,
    validate,
)
from .result import Event, Recorder, SearchResult


class ParetoFront(list):
    """A list of ``(depth, n_nodes, tree, proven)``, one per depth, and the rule that ended it."""

    def __init__(self, points: list[tuple[int, int, Tree, bool]], stop_reason: str) -> None:
        super().__init__(points)
        self.stop_reason = stop_reason


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


# The default of a renamed parameter's old name: not set.
DEPRECATED = "deprecated"


def _is_deprecated_default(value: Any) -> bool:
    return isinstance(value, str) and value == DEPRECATED


def _documented_type(param: Param) -> str:
    """The numpydoc type line of a parameter: its type and its default."""
    return f"{param.type_name()}, default={param.default!r}"


def _literal_names(text: str) -> str:
    """Help text for a docstring: fitted attributes (``method_``, ``result_.stats``) as
    literals, which reStructuredText would read as links."""
    return re.sub(r"(?<![`\w])(\w+_(?:\.\w+)*)(?![`\w])", r"``\1``", text)


class SatdtEstimator:
    """What every satdt estimator shares: parameters from a table, checks, data preparation.

    A subclass declares its parameters in ``_PARAMS`` (:class:`satdt.params.Param`: name,
    default, values, help); the method parameters of :mod:`satdt.methods` are added after
    them. ``__init__`` only stores keyword arguments, as scikit-learn requires; its signature,
    the docstring's parameter list and the checks of :meth:`_check_params` come from the same
    table.
    """

    _PARAMS: ClassVar[tuple[Param, ...]] = ()
    # parameters renamed: old name -> new name; the old one is still taken (its default is
    # DEPRECATED) with a FutureWarning until satdt errors.REMOVED_IN
    _RENAMED: ClassVar[dict[str, str]] = {}
    _fitted_attribute: ClassVar[str] = "model_"
    # what scikit-learn before 1.6 reads (is_classifier, its checks); 1.6 on: __sklearn_tags__
    _estimator_type: ClassVar[str] = "classifier"

    @classmethod
    def _method_params(cls) -> dict[str, Param]:
        """The parameters of the searches this estimator runs (the table's, for trees)."""
        return methods.method_params()

    @classmethod
    def _table(cls) -> dict[str, Param]:
        """Every parameter of the table by name: the estimator's, then its methods'."""
        return {param.name: param for param in cls._PARAMS} | cls._method_params()

    @classmethod
    def _defaults(cls) -> dict[str, Any]:
        defaults = {name: param.default for name, param in cls._table().items()}
        defaults["on_improve"] = None
        for old in cls._RENAMED:
            defaults[old] = DEPRECATED
        return defaults

    def _param(self, name: str, warn: bool = False) -> Any:
        """The value of parameter ``name``, or of the old name it replaces when that was set
        (``warn``: with a FutureWarning, which :meth:`_check_params` gives once per fit)."""
        for old, new in self._RENAMED.items():
            if new == name and not _is_deprecated_default(getattr(self, old, DEPRECATED)):
                if warn:
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
        documented = [
            (param.name, _documented_type(param), f"{param.help} Values: {param.describe()}.")
            for param in cls._PARAMS
        ]
        for name, param in cls._method_params().items():
            users = [m.name for m in methods.METHODS.values() if param in m.params]
            documented.append(
                (
                    name,
                    _documented_type(param),
                    f"Method {', '.join(users)}: {param.help} ({param.describe()}).",
                )
            )
        documented.append(
            (
                "on_improve",
                "callable, default=None",
                "Called with the SearchResult on every new incumbent.",
            )
        )
        for old, new in cls._RENAMED.items():
            documented.append(
                (old, "deprecated", f"Renamed {new} (same meaning); removed in {REMOVED_IN}.")
            )
        lines = [
            f"    {name} : {kind}\n"
            + textwrap.fill(
                _literal_names(text), 92, initial_indent=" " * 8, subsequent_indent=" " * 8
            )
            for name, kind, text in documented
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
            if defaults.get(k) is not v
            and (isinstance(v, np.ndarray) or bool(np.all(defaults.get(k) != v)))
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
    def _check_params(self) -> None:
        """Check every parameter of the estimator's table against its rules
        (:class:`satdt.params.Param`); a renamed one under whichever name was set."""
        for param in self._PARAMS:
            param.check(self._param(param.name, warn=True))

    def _resolve(self) -> tuple[Method, dict[str, Any]]:
        """Check every parameter; return the method to run and its options."""
        self._check_params()
        check_class_weight(self.class_weight)
        options = {name: getattr(self, name) for name in methods.method_params()}
        method, own = methods.resolve_method(self.objective, self.method, options, self.max_nodes)
        self._check_error_options()
        kind = OBJECTIVES[self.objective].kind
        if (
            kind != CONSISTENCY
            and self.max_depth is None
            and self.max_nodes is None
            and not self.leaf_penalty > 0
        ):
            raise ParameterError(
                f"objective={self.objective!r} needs max_depth (the depth of the trees "
                "compared), max_nodes (which bounds the depth), or a leaf_penalty > 0, which "
                "bounds the leaves of the optimum"
            )
        return method, own

    def _check_error_options(self) -> None:
        """The error objective's options (leaf_penalty, min_support, cost_matrix) keep their
        defaults under the consistency objectives."""
        cost_matrix = getattr(self, "cost_matrix", None)
        if OBJECTIVES[self.objective].kind == CONSISTENCY and (
            self.leaf_penalty > 0 or self.min_support > 1 or cost_matrix is not None
        ):
            name = "leaf_penalty" if self.leaf_penalty > 0 else "min_support"
            if cost_matrix is not None:
                raise ParameterError(
                    "cost_matrix applies to objective='error' (a consistent tree classifies "
                    f"every row right, so no error has a cost), not {self.objective!r}; leave "
                    "it at None"
                )
            raise ParameterError(
                f"{name} applies to objective='error' (a consistent tree has pure leaves "
                f"and no error to trade), not {self.objective!r}; leave it at its default"
            )

    # ------------------------------------------------------------------ fitting
    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, *, feature_names: list[str] | None = None
    ) -> SatdtEstimator:
        """Find the optimal model for ``(X, y)``.

        Parameters
        ----------
        X : array-like or DataFrame
            A numeric array, a table of strings/objects (categorical columns) or a pandas
            DataFrame.
        y : array-like
            The labels.
        sample_weight : array-like, optional
            Row weights for the error objective; the consistency objectives use them only as
            presence (a row of weight 0 is left out).
        feature_names : list of str, optional
            Column names (a DataFrame's are used otherwise).

        Returns
        -------
        SatdtEstimator
            ``self``, fitted.
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
        max_nodes = self.max_nodes
        if self.method == "auto" and not options:
            return methods.METHODS[methods.choose_method(self.objective, data, max_nodes)]
        if method.input == "numeric" and data.has_missing:
            other = methods.choose_method(self.objective, data, max_nodes)
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
        if getattr(self, "cost_matrix", None) is not None:
            C = cost_matrix(self.cost_matrix, data.classes)
            data = data.with_costs(C, int(getattr(self, "min_support", 1)))
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

        Ctrl-C during the search returns the best model found so far, not proven.

        Parameters
        ----------
        dataset : Dataset
            The table.
        sample_weight : array-like, optional
            Row weights, as for :meth:`fit`.
        on_event : callable, optional
            Receives every event as it happens (SAT calls, preparation progress: the CLI's
            live status line).
        started : float, optional
            The ``time.perf_counter()`` value the time limit counts from (default: now; the
            CLI passes the moment it started reading).

        Returns
        -------
        SatdtEstimator
            ``self``, fitted.
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
            result = recorder.snapshot(proven_optimal=False, stop_reason="interrupted")
        result = tree_search.finish(result, task)
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
        leaves: :func:`satdt.tree_search.value_scale`). A minimum support larger than the
        training rows admits no tree at all. With a cost matrix, the total and the rows are the
        user's, and the searches' minimum support counts each user row as the ``factor`` rows
        the reduction made of it.
        """
        if OBJECTIVES[self.objective].kind == CONSISTENCY:
            return
        # with a cost matrix the user's rows (the searches read them rewritten, each row as
        # `factor` rows of the same features: satdt.costs), and costs in units of the weights
        data = task.data if task.data.original is None else task.data.original
        total = float(data.weight.sum())
        if self.leaf_penalty > 0:
            task.leaf_penalty = float(self.leaf_penalty) * total
        min_support = int(self.min_support)
        rows = int(np.count_nonzero(data.weight > 0))
        if min_support > rows:
            raise InfeasibleError(
                f"min_support={min_support} is more than the {rows} training rows of "
                "positive weight: no leaf can hold that many; lower min_support"
            )
        costs = task.data.costs
        task.min_support = min_support * (1 if costs is None else max(costs.factor, 1))

    def _search(self, method: Method, task: Task) -> SearchResult:
        """Run the method through :func:`satdt.tree_search.run_search` (one class, a greedy
        start, kernels awaited, time-outs; no depth limit: :func:`satdt.methods.run_without_depth`)."""
        return tree_search.run_search(method, task)

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
        """The label predicted for each row of ``X``.

        Parameters
        ----------
        X : array-like or DataFrame
            Rows with the columns given to ``fit``.

        Returns
        -------
        numpy.ndarray
            One label per row.
        """
        return self._fitted_model().predict(self._design(X))

    def predict_proba(self, X: Any) -> np.ndarray:
        """Training class frequencies of the leaf (or terminal) each row reaches.

        Parameters
        ----------
        X : array-like or DataFrame
            Rows with the columns given to ``fit``.

        Returns
        -------
        numpy.ndarray
            ``(n_rows, n_classes)``, columns in ``classes_`` order.
        """
        return self._fitted_model().predict_proba(self._design(X))

    def apply(self, X: Any) -> np.ndarray:
        """Where each row ends.

        Parameters
        ----------
        X : array-like or DataFrame
            Rows with the columns given to ``fit``.

        Returns
        -------
        numpy.ndarray
            The node each row ends at: a tree's leaf (its node index, as scikit-learn's
            ``apply``), a diagram's terminal (:meth:`Diagram.apply`; ``Diagram.decision_path``
            gives the nodes a row visits).
        """
        return self._fitted_model().apply(self._design(X))

    def explain(
        self,
        X: Any,
        rows: Any = None,
        *,
        enumerate_axps: bool = False,
        limit: int = 100,
        time_limit: float | None = None,
    ) -> list[Any]:
        """Why the fitted model predicts what it does (:func:`satdt.explain`).

        Parameters
        ----------
        X : array-like or DataFrame
            Rows with the columns given to ``fit``.
        rows : sequence of int, optional
            The rows to explain (default: all).
        enumerate_axps : bool, default=False
            Also list every abductive explanation, smallest first.
        limit : int, default=100
            At most this many abductive explanations per row.
        time_limit : float, optional
            Seconds per row for the enumeration.

        Returns
        -------
        list of Explanation
            One per row: the path, abductive and contrastive explanations on the user's
            columns, each checked against the model.
        """
        from .explanations import explain

        return explain(
            self, X, rows, enumerate_axps=enumerate_axps, limit=limit, time_limit=time_limit
        )

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean (weighted) accuracy on ``(X, y)``.

        Parameters
        ----------
        X : array-like or DataFrame
            Rows with the columns given to ``fit``.
        y : array-like
            Their labels.
        sample_weight : array-like, optional
            Row weights.

        Returns
        -------
        float
            The share of the rows' weight predicted correctly.
        """
        correct = self.predict(X) == np.asarray(y)
        return float(np.average(correct, weights=sample_weights(sample_weight, len(correct))))


class OptimalTreeClassifier(SatdtEstimator):
    """Optimal decision trees: minimum depth, minimum size (SAT) or minimum error (DP).

    Every tree returned is re-checked against the training data. ``result_`` holds the
    :class:`~satdt.result.SearchResult` (objective value, lower bound, proven or not, the
    history of incumbents, events and the method's statistics); ``tree_`` the tree;
    ``method_`` the name of the method that ran (what ``method="auto"`` chose).
    """

    _PARAMS: ClassVar[tuple[Param, ...]] = methods.TREE_PARAMS
    _fitted_attribute: ClassVar[str] = "tree_"

    def to_sklearn(self) -> Any:
        """The fitted tree as a fitted ``sklearn.tree.DecisionTreeClassifier``.

        Its ``predict``, ``predict_proba`` and ``apply`` equal this estimator's on every row
        (missing values included), so scikit-learn's ``plot_tree``, ``export_graphviz`` and
        ``export_text`` (pass ``feature_names=list(est.feature_names_in_)``), SHAP's tree
        explainer and skl2onnx take it. Needs scikit-learn (the ``export`` extra).

        Returns
        -------
        sklearn.tree.DecisionTreeClassifier
            The same tree, fitted.
        """
        return self._fitted_model().to_sklearn(self._export_columns())

    def to_onnx(self) -> Any:
        """The fitted tree as an ONNX model, for onnxruntime and other ONNX runtimes.

        Needs skl2onnx (the ``export`` extra).

        Returns
        -------
        onnx.ModelProto
            Input ``X`` (float32 rows), outputs ``label`` and ``probabilities``.
        """
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
        """The depth/size Pareto front of a table read by :func:`satdt.read_csv`.

        The fitted ``tree_`` is the smallest tree of the front (see :func:`pareto_front`).

        Parameters
        ----------
        dataset : Dataset
            The table.
        on_event : callable, optional
            Receives every event as it happens.

        Returns
        -------
        ParetoFront
            A list of ``(depth, n_nodes, tree, proven)``, one per depth, with the rule that
            ended it as ``stop_reason``.
        """
        if self.objective != "size" or self.max_nodes is not None:
            raise ParameterError(
                "the Pareto front is a size objective without max_nodes: use objective='size'"
            )
        method, options = self._resolve()
        data = self._prepare(dataset, None, on_event, None)
        method = self._method_for(data, method, options)
        if data.n_classes == 1:
            points = [(0, 1, data.finish(Tree.single_leaf(0, data.classes)), True)]
            reason = "a single class: one leaf"
        else:
            task = Task(data, self.objective, self.max_depth, None, options)
            points, reason = tree_search.run_pareto(method, task)
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
    """The depth/size trade-off of consistent trees.

    For each depth from the minimum to ``max_depth`` (default: the minimum + 2), the fewest
    nodes of a tree of at most that depth.

    Parameters
    ----------
    X : array-like or DataFrame
        The rows, as for :meth:`OptimalTreeClassifier.fit`.
    y : array-like
        The labels.
    max_depth : int, optional
        The last depth (default: the minimum + 2).
    feature_names : list of str, optional
        Column names.
    **params : dict
        Parameters of :class:`OptimalTreeClassifier` (``time_limit``, ``resolve``,
        ``solver``, ...).

    Returns
    -------
    ParetoFront
        A list of ``(depth, n_nodes, tree, proven)``; its ``stop_reason`` says which rule
        ended it (the last depth asked for, a time limit, or the leaf count L at depth d with
        L <= d + 2, after which no deeper tree can be smaller).
    """
    model = OptimalTreeClassifier(objective="size", max_depth=max_depth, **params)
    model._resolve()
    dataset = validate(X, y, feature_names=feature_names, estimator="pareto_front")
    return model.pareto_dataset(dataset)
