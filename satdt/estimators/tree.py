"""OptimalTreeClassifier: optimal decision trees over satdt's searches, scikit-learn compatible.

The estimator checks its parameters once, looks the method up in the table of searches
(:mod:`satdt.search.registry`), prepares the data (:mod:`satdt.prepare.prepared`), runs the method through
:mod:`satdt.search.runner`, re-checks the model against the data and keeps the
:class:`~satdt.task.result.SearchResult`. Its parameters are the shared ones plus every method's
own, read from the table, so a new method needs no change here.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from ..core.errors import (
    InfeasibleError,
    NotProvenWarning,
    ParameterError,
    TimeUp,
    user_stacklevel,
)
from ..core.params import Param
from ..data import Dataset
from ..models.tree import Tree
from ..prepare.prepared import Prepared
from ..prepare.validate import check_class_weight, validate
from ..search.auto import choose_method
from ..search.params import TREE_PARAMS
from ..search.registry import METHODS, Method, method_params, resolve_method
from ..search.runner import TreeSearch
from ..task.events import Event
from ..task.objectives import OBJECTIVES
from ..task.spec import Task
from .base import SatdtEstimator, resolve_n_jobs
from .streaming import StreamingTree, end_stream


class ParetoFront(list):
    """A list of ``(depth, n_nodes, tree, proven)``, one per depth, and the rule that ended it."""

    def __init__(self, points: list[tuple[int, int, Tree, bool]], stop_reason: str) -> None:
        super().__init__(points)
        self.stop_reason = stop_reason


class OptimalTreeClassifier(StreamingTree, SatdtEstimator):
    """Optimal decision trees: minimum depth, minimum size (SAT) or minimum error (DP).

    Every tree returned is re-checked against the training data. ``result_`` holds the
    :class:`~satdt.task.result.SearchResult` (objective value, lower bound, proven or not, the
    history of incumbents, events and the method's statistics); ``tree_`` the tree;
    ``method_`` the name of the method that ran (what ``method="auto"`` chose). For the
    consistency objectives, :meth:`partial_fit` keeps the minimum tree of rows that arrive in
    batches and :meth:`fit_teacher` learns from a teacher's counterexamples; both keep their
    search in ``stream_``.
    """

    _PARAMS: ClassVar[tuple[Param, ...]] = TREE_PARAMS
    _fitted_attribute: ClassVar[str] = "tree_"

    def _resolve(self) -> tuple[Method, dict[str, Any]]:
        """Check every parameter; return the method to run and its options."""
        self._check_params()
        check_class_weight(self.class_weight)
        options = {name: getattr(self, name) for name in method_params()}
        method, own = resolve_method(self.objective, self.method, options, self.max_nodes)
        self._check_error_options()
        if (
            not OBJECTIVES[self.objective].consistency
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
        if OBJECTIVES[self.objective].consistency and (
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

    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, *, feature_names: list[str] | None = None
    ) -> OptimalTreeClassifier:
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

    def _method_for(self, data: Prepared, method: Method, options: dict[str, Any]) -> Method:
        """The method to run: ``auto`` looks at the prepared data, unless method options were
        given (they name the method they belong to, the one :meth:`_resolve` chose)."""
        max_nodes = self.max_nodes
        if self.method == "auto" and not options:
            return METHODS[choose_method(self.objective, data, max_nodes)]
        if method.input == "numeric" and data.has_missing:
            other = choose_method(self.objective, data, max_nodes)
            raise ParameterError(
                f"method={method.name!r} searches the numeric columns and cannot take missing "
                f"values; use method={other!r} (what method='auto' runs on these data), or "
                "impute the missing values"
            )
        return method

    def fit_dataset(
        self,
        dataset: Dataset,
        sample_weight: Any = None,
        *,
        on_event: Callable[[Event], None] | None = None,
        started: float | None = None,
    ) -> OptimalTreeClassifier:
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
        end_stream(self)
        data = self._prepare(dataset, sample_weight, on_event, started)
        # if the limit passes while auto looks at the data, its choice without them
        with contextlib.suppress(TimeUp):
            method = self._method_for(data, method, options)
        task = Task(data, self.objective, self.max_depth, self.max_nodes, options)
        task.n_jobs = resolve_n_jobs(getattr(self, "n_jobs", 1))
        self._set_error_options(task)
        result = self._search(method, task).run()
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
        leaves: :func:`satdt.search.runner.value_scale`). A minimum support larger than the
        training rows admits no tree at all. With a cost matrix, the total and the rows are the
        user's, and the searches' minimum support counts each user row as the ``factor`` rows
        the reduction made of it.
        """
        if OBJECTIVES[self.objective].consistency:
            return
        # with a cost matrix the user's rows (the searches read them rewritten, each row as
        # `factor` rows of the same features: satdt.prepare.costs), and costs in units of the weights
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

    def _search(self, method: Method, task: Task) -> TreeSearch:
        """The search of the fit (:class:`satdt.search.runner.TreeSearch`: one class, a greedy
        start, kernels awaited, time-outs and Ctrl-C into the best tree, the tree re-checked)."""
        return TreeSearch(method, task)

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
        end_stream(self)
        data = self._prepare(dataset, None, on_event, None)
        method = self._method_for(data, method, options)
        task = Task(data, self.objective, self.max_depth, None, options)
        points, reason = self._search(method, task).pareto()
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
