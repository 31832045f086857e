"""OptimalTreeClassifier: the one facade over satdt's searches, scikit-learn compatible.

It validates the data once, binarises it, chooses the search (SAT for the consistency
objectives, DP for the error objective), maps the tree found back to the user's columns,
re-checks it against the data and keeps the :class:`~satdt.result.SearchResult`.
scikit-learn is optional: the estimator implements the parts of its protocol it needs
(``get_params``/``set_params``, tags, ``score``) itself.
"""

from __future__ import annotations

import inspect
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .binarize import Binarizer, reduce_features
from .data import (
    Dataset,
    Schema,
    contradiction_error,
    find_contradictions,
    from_arrays,
    resolve_majority,
)
from .errors import (
    DataError,
    InfeasibleError,
    NotProvenWarning,
    SatdtError,
    data_conversion_warning,
    not_fitted_error,
)
from .result import Recorder, SatCall, SearchResult
from .tree import Tree

OBJECTIVES = ("depth", "size", "error")
METHODS = ("auto", "sat", "blossom")


@dataclass
class _Prepared:
    """The data of one fit as the searches see it, and how to map their trees back."""

    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    B: np.ndarray
    recorder: Recorder
    deadline: float | None
    to_user_tree: Callable[[Tree], Tree]


class ParetoFront(list):
    """A list of ``(depth, n_nodes, tree, proven)``, one per depth, and the rule that ended it."""

    def __init__(self, points: list[tuple[int, int, Tree, bool]], stop_reason: str) -> None:
        super().__init__(points)
        self.stop_reason = stop_reason


class _ParamsMixin:
    """``get_params``/``set_params``/``__repr__`` from the ``__init__`` signature, as scikit-learn expects."""

    @classmethod
    def _param_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        return [p.name for p in signature.parameters.values() if p.kind == p.KEYWORD_ONLY]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> _ParamsMixin:
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"invalid parameter {name!r} for {type(self).__name__}; valid: {valid}"
                )
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
        }
        changed = [
            f"{k}={v!r}"
            for k, v in self.get_params().items()
            if defaults.get(k) is not v and defaults.get(k) != v
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):  # only scikit-learn calls this, so it may import it
        from sklearn.utils import ClassifierTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(),
        )


def _check_numeric_array(X: Any) -> np.ndarray | None:
    """Numeric array-likes as a float matrix (with scikit-learn's error types); None for tables."""
    if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        raise TypeError("satdt does not take sparse matrices; pass a dense array (X.toarray())")
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        return None  # a DataFrame: data.from_arrays reads its column types
    array = np.asarray(X)
    if array.dtype == object:
        for cell in array.ravel():
            if not isinstance(cell, str | int | float | bool | np.generic | None):
                raise TypeError(
                    f"argument must be a string or a number, not '{type(cell).__name__}': "
                    "every cell of X must be a number or a category name"
                )
        return None
    if array.dtype.kind in "US":
        return None
    if array.dtype.kind == "b":
        return array.astype(np.float64)
    if np.iscomplexobj(array):
        raise ValueError("Complex data not supported")
    if array.ndim != 2:
        raise ValueError(
            f"Expected a 2D array, got a {array.ndim}D array instead. Reshape your data either "
            "using array.reshape(-1, 1) if your data has a single feature or "
            "array.reshape(1, -1) if it contains a single sample"
        )
    if array.shape[1] == 0:
        raise ValueError(
            f"0 feature(s) (shape={array.shape}) while a minimum of 1 is required; "
            "give at least one feature column"
        )
    array = array.astype(np.float64)
    if not np.isfinite(array).all():
        raise ValueError("Input X contains NaN or infinity; satdt needs complete, finite data")
    return array


class OptimalTreeClassifier(_ParamsMixin):
    """Optimal decision trees: minimum depth, minimum size (SAT) or minimum error (DP).

    Parameters
    ----------
    objective
        ``"depth"``: the shallowest tree that classifies every training row correctly;
        ``"size"``: the smallest such tree (fewest nodes) at the minimum depth, or over all
        depths up to ``max_depth``; ``"error"``: the tree of depth at most ``max_depth``
        with the fewest misclassified (weighted) training rows.
    max_depth
        A cap on the depth (required for ``"error"``).
    max_nodes
        A cap on the number of nodes (internal + leaves) for the SAT objectives.
    time_limit
        Wall-clock seconds; when reached, the best tree found so far is returned with
        ``result_.proven_optimal = False`` and a :class:`~satdt.errors.NotProvenWarning`.
    solver
        The SAT solver (``"auto"`` or one of ``satdt.sat.cegar.SOLVERS``).
    method
        ``"auto"`` (SAT for depth/size, Blossom for error), ``"sat"`` or ``"blossom"``.
    max_thresholds
        At most this many quantile thresholds per numeric column (``None``: every midpoint
        between consecutive distinct values; optimality then holds for the full data).
    resolve
        ``None``: contradictory rows (same features, different labels) are an error for the
        consistency objectives; ``"majority"``: relabel each group with its majority label.
    counterexamples
        Which misclassified rows the counterexample-guided loop adds per round: ``"per_leaf"``
        (default: one per leaf that misclassifies rows), ``"first"``, ``"all"`` or an integer.
    leaf_counter, size_search
        For ``objective="size"``: the labelled-leaf counter (``"sequential"``, the paper's, or
        ``"totalizer"``) and the bound search (``"descending"`` or ``"dichotomic"``, the paper's).
    on_improve
        Called with the current :class:`~satdt.result.SearchResult` on every new incumbent.
    """

    def __init__(
        self,
        *,
        objective: str = "depth",
        max_depth: int | None = None,
        max_nodes: int | None = None,
        time_limit: float | None = None,
        solver: str = "auto",
        method: str = "auto",
        max_thresholds: int | None = None,
        resolve: str | None = None,
        counterexamples: str | int = "auto",
        leaf_counter: str = "auto",
        size_search: str = "auto",
        on_improve: Callable[[SearchResult], None] | None = None,
    ) -> None:
        self.objective = objective
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.time_limit = time_limit
        self.solver = solver
        self.method = method
        self.max_thresholds = max_thresholds
        self.resolve = resolve
        self.counterexamples = counterexamples
        self.leaf_counter = leaf_counter
        self.size_search = size_search
        self.on_improve = on_improve

    # ------------------------------------------------------------------ options
    def _check_options(self) -> str:
        """Validate the options; return the method to run."""
        if self.objective not in OBJECTIVES:
            raise SatdtError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        if self.method not in METHODS:
            raise SatdtError(f"method must be one of {METHODS}, got {self.method!r}")
        for name in ("max_depth", "max_nodes", "max_thresholds"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0
            ):
                raise SatdtError(f"{name} must be a non-negative integer or None, got {value!r}")
        if self.time_limit is not None and not (
            isinstance(self.time_limit, int | float) and self.time_limit > 0
        ):
            raise SatdtError(
                f"time_limit must be a positive number of seconds, got {self.time_limit!r}"
            )
        if self.resolve not in (None, "majority"):
            raise SatdtError(f"resolve must be None or 'majority', got {self.resolve!r}")
        if self.objective != "error":
            self._check_sat_options()
        method = self.method
        if method == "auto":
            method = "blossom" if self.objective == "error" else "sat"
        if self.objective == "error" and method != "blossom":
            raise SatdtError("objective='error' is solved by method='blossom'")
        if self.objective in ("depth", "size") and method != "sat":
            raise SatdtError(f"objective={self.objective!r} is solved by method='sat'")
        if self.objective == "error" and self.max_depth is None:
            raise SatdtError("objective='error' needs max_depth (the depth of the trees compared)")
        if self.max_nodes is not None and self.objective == "error":
            raise SatdtError(
                "max_nodes caps the consistency objectives ('depth', 'size'), not 'error'"
            )
        return method

    # ------------------------------------------------------------------ fitting
    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, *, feature_names: list[str] | None = None
    ) -> OptimalTreeClassifier:
        """Find the optimal tree for ``(X, y)``; returns ``self``.

        ``X`` is a numeric array, a table of strings/objects (categorical columns) or a pandas
        DataFrame. ``sample_weight`` weighs rows for ``objective="error"``; the consistency
        objectives use it only as presence (a row of weight 0 is left out).
        """
        self._check_options()
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        y_array = np.asarray(y)
        if y_array.ndim == 2 and y_array.shape[1] == 1:
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected; it was flattened "
                "(give y as a 1d array, one label per row)",
                data_conversion_warning(),
                stacklevel=2,
            )
            y = y_array = y_array.ravel()
        if (
            y_array.dtype.kind == "f"
            and np.isfinite(y_array).all()
            and (y_array != np.round(y_array)).any()
        ):
            raise ValueError(
                "Unknown label type: continuous. satdt learns classifiers: give class labels "
                "(integers or strings), not a continuous target"
            )
        numeric = _check_numeric_array(X)
        design, schema, labels = from_arrays(
            X if numeric is None else numeric, y, feature_names=feature_names
        )
        dataset = Dataset(design, labels, schema, np.arange(1, len(labels) + 1), None)
        return self.fit_dataset(dataset, sample_weight=sample_weight)

    def fit_dataset(
        self,
        dataset: Dataset,
        sample_weight: Any = None,
        *,
        on_sat_call: Callable[[SatCall], None] | None = None,
    ) -> OptimalTreeClassifier:
        """Fit on a table read by :func:`satdt.read_csv` (keeps its schema and line numbers).

        ``on_sat_call`` receives every SAT call as it ends (the CLI's live status line).
        Ctrl-C during the search returns the best tree found so far, not proven.
        """
        method = self._check_options()
        prepared = self._prepare(dataset, sample_weight, on_sat_call)
        recorder = prepared.recorder
        try:
            if len(self.classes_) == 1:
                if self.max_nodes is not None and self.max_nodes < 1:
                    raise InfeasibleError("no tree has fewer than 1 node: raise max_nodes")
                single = {"depth": 0, "size": 1, "error": 0.0}[self.objective]
                recorder.improve(Tree.single_leaf(0, np.arange(1)), single)
                result = recorder.snapshot(proven_optimal=True)
            elif method == "sat":
                result = self._fit_sat(prepared.B, prepared.y, recorder, prepared.deadline)
            else:
                result = self._fit_blossom(
                    prepared.B, prepared.y, prepared.weight, recorder, prepared.deadline
                )
        except KeyboardInterrupt:
            if recorder.best is None:
                raise
            recorder.stats["interrupted"] = True
            result = recorder.snapshot(proven_optimal=False)
        self._check_tree(result.tree, prepared, result.objective_value)
        self.result_ = result
        self.tree_ = result.tree
        if not result.proven_optimal:
            warnings.warn(
                f"search stopped early: returning the best tree found ({self.objective} "
                f"{result.objective_value:g}, lower bound {result.lower_bound:g}), not proven optimal",
                NotProvenWarning,
                stacklevel=2,
            )
        return self

    def _prepare(
        self, dataset: Dataset, sample_weight: Any, on_sat_call: Callable[[SatCall], None] | None
    ) -> _Prepared:
        """Validate, drop zero-weight rows, settle contradictions, binarise; set the fitted schema."""
        X, y = dataset.X, np.asarray(dataset.y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1D (one label per row), got shape {y.shape}")
        if len(y) != len(X):
            raise ValueError(f"X has {len(X)} rows but y has {len(y)} labels")
        if len(y) == 0:
            raise DataError("the data has no rows: satdt needs at least one labelled row")
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            raise ValueError("y contains NaN or infinity")
        weight = self._weights(sample_weight, len(y))
        keep = weight > 0
        if not keep.any():
            raise DataError("every sample_weight is zero: no row is left to learn from")
        line_numbers = dataset.line_numbers[keep]
        X, y, weight = X[keep], y[keep], weight[keep]

        self.schema_: Schema = dataset.schema
        self.feature_names_in_ = np.asarray(dataset.schema.feature_names, dtype=object)
        self.n_features_in_ = X.shape[1]
        self.classes_, y_index = np.unique(y, return_inverse=True)
        y_index = y_index.astype(np.int64)

        relabelled = 0
        if self.objective in ("depth", "size"):
            groups = find_contradictions(X, y_index)
            if groups:
                if self.resolve != "majority":
                    raise contradiction_error(groups, y, line_numbers, dataset.source)
                y_index, relabelled = resolve_majority(X, y_index)

        binarizer = Binarizer(max_thresholds=self.max_thresholds).fit(
            X, list(dataset.schema.feature_names), dataset.schema.indicator
        )
        self.binarizer_ = binarizer
        B = binarizer.transform(X)
        if self.objective in ("depth", "size") and self.max_thresholds is not None:
            y_index, merged = self._resolve_binary_contradictions(B, y_index)
            relabelled += merged
        kept = reduce_features(B)
        B = np.ascontiguousarray(B[:, kept])
        column = binarizer.column_[kept]
        threshold = binarizer.threshold_[kept]
        names = list(dataset.schema.feature_names)
        indicator = list(dataset.schema.indicator)
        classes = self.classes_

        def to_user_tree(tree: Tree) -> Tree:
            mapped = tree.map_features(column, threshold, names, indicator)
            mapped.classes = classes
            return mapped.simplify(X).with_counts(X, y_index, weight)

        recorder = Recorder(
            self.objective,
            to_user_tree=to_user_tree,
            on_improve=self.on_improve,
            on_sat_call=on_sat_call,
        )
        recorder.stats.update(
            binary_features_total=binarizer.n_features_,
            binary_features=B.shape[1],
            binarization=binarizer.describe(),
            relabelled_rows=relabelled,
        )
        deadline = None if self.time_limit is None else time.perf_counter() + float(self.time_limit)
        return _Prepared(X, y_index, weight, B, recorder, deadline, to_user_tree)

    def pareto_dataset(
        self, dataset: Dataset, *, on_sat_call: Callable[[SatCall], None] | None = None
    ) -> ParetoFront:
        """The depth/size Pareto front of a table read by :func:`satdt.read_csv` (see :func:`pareto_front`).

        The fitted ``tree_`` is the smallest tree of the front.
        """
        from .sat.cegar import Problem
        from .sat.cegar import pareto_front as search_front

        if self.objective != "size" or self.max_nodes is not None:
            raise SatdtError(
                "the Pareto front is a size objective without max_nodes: use objective='size'"
            )
        self._check_options()
        prepared = self._prepare(dataset, None, on_sat_call)
        if len(self.classes_) == 1:
            leaf = prepared.to_user_tree(Tree.single_leaf(0, np.arange(1)))
            points = [(0, 1, leaf, True)]
            reason = "a single class: one leaf"
        else:
            problem = Problem.from_data(prepared.B, prepared.y, len(self.classes_), self.classes_)
            front, reason = search_front(
                problem,
                max_depth=self.max_depth,
                deadline=prepared.deadline,
                recorder=prepared.recorder,
                **self._sat_options(),
            )
            points = [(p.depth, p.n_nodes, prepared.to_user_tree(p.tree), p.proven) for p in front]
        for _, n_nodes, tree, _ in points:
            self._check_tree(tree, prepared, n_nodes)
        self.tree_ = points[-1][2]
        self.result_ = prepared.recorder.snapshot(proven_optimal=all(p[3] for p in points))
        return ParetoFront(points, reason)

    def _check_tree(self, tree: Tree, prepared: _Prepared, value: float) -> None:
        """Re-check a tree against the data before anyone sees it (correct before fast)."""
        predicted = tree.predict_index(prepared.X)
        if self.objective == "error":
            error = float(prepared.weight[predicted != prepared.y].sum())
            if not np.isclose(error, value):
                raise RuntimeError(f"internal error: tree error {error} != reported {value}")
            return
        if (predicted != prepared.y).any():
            raise RuntimeError("internal error: the returned tree misclassifies training rows")
        expected = tree.depth if self.objective == "depth" else tree.n_nodes
        if expected != value:
            raise RuntimeError(
                f"internal error: reported {self.objective} {value} but the tree has {expected}"
            )

    def _resolve_binary_contradictions(
        self, B: np.ndarray, y_index: np.ndarray
    ) -> tuple[np.ndarray, int]:
        """Rows that only quantile thresholds make identical may still disagree on the label."""
        groups = find_contradictions(B, y_index)
        if not groups:
            return y_index, 0
        if self.resolve != "majority":
            raise DataError(
                f"with at most {self.max_thresholds} thresholds per column, {len(groups)} groups of "
                "rows become identical but have different labels, so no consistent tree exists "
                "over these features; use full thresholds (max_thresholds=None) or "
                "resolve='majority'"
            )
        return resolve_majority(B, y_index)

    @staticmethod
    def _weights(sample_weight: Any, n: int) -> np.ndarray:
        if sample_weight is None:
            return np.ones(n)
        weight = np.asarray(sample_weight, dtype=np.float64)
        if weight.ndim == 0:
            weight = np.full(n, float(weight))
        if weight.shape != (n,):
            raise ValueError(f"sample_weight must have shape ({n},), got {weight.shape}")
        if not np.isfinite(weight).all() or (weight < 0).any():
            raise ValueError("sample_weight must be finite and non-negative")
        return weight

    def _check_sat_options(self) -> None:
        from .sat.cegar import COUNTEREXAMPLE_POLICIES, SIZE_STRATEGIES, SOLVERS
        from .sat.counter import COUNTERS

        allowed = {
            "solver": SOLVERS,
            "counterexamples": COUNTEREXAMPLE_POLICIES,
            "leaf_counter": COUNTERS,
            "size_search": SIZE_STRATEGIES,
        }
        for name, choices in allowed.items():
            value = getattr(self, name)
            positive_int = name == "counterexamples" and isinstance(value, int) and value >= 1
            if value != "auto" and value not in choices and not positive_int:
                raise SatdtError(f"{name} must be 'auto' or one of {choices}, got {value!r}")

    def _sat_options(self) -> dict[str, Any]:
        """The SAT tuning options the user set (``"auto"`` leaves satdt's defaults)."""
        tuning = {
            "solver": self.solver,
            "counterexamples": self.counterexamples,
        }
        if self.objective == "size":
            tuning.update(counter=self.leaf_counter, strategy=self.size_search)
        return {name: value for name, value in tuning.items() if value != "auto"}

    def _fit_sat(
        self, B: np.ndarray, y: np.ndarray, recorder: Recorder, deadline: float | None
    ) -> SearchResult:
        from .sat.cegar import Problem, minimum_depth, minimum_size

        problem = Problem.from_data(B, y, len(self.classes_), self.classes_)
        search = minimum_size if self.objective == "size" else minimum_depth
        return search(
            problem,
            max_depth=self.max_depth,
            max_nodes=self.max_nodes,
            deadline=deadline,
            recorder=recorder,
            **self._sat_options(),
        )

    def _fit_blossom(
        self,
        B: np.ndarray,
        y: np.ndarray,
        weight: np.ndarray,
        recorder: Recorder,
        deadline: float | None,
    ) -> SearchResult:
        from .dp.blossom import solve_min_error

        return solve_min_error(
            B,
            y,
            len(self.classes_),
            int(self.max_depth),
            sample_weight=weight,
            deadline=deadline,
            recorder=recorder,
        )

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self) -> None:
        if not hasattr(self, "tree_"):
            raise not_fitted_error(
                f"this {type(self).__name__} is not fitted yet; call fit(X, y) before using it"
            )

    def _design(self, X: Any) -> np.ndarray:
        """Rows to predict as the fitted design matrix, encoded with the fitted schema."""
        self._check_fitted()
        schema = self.schema_
        categorical = len(schema.columns) != self.n_features_in_
        numeric = _check_numeric_array(X)
        if numeric is not None and not categorical:
            if numeric.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {numeric.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{self.n_features_in_} features as input"
                )
            return numeric
        if hasattr(X, "columns") and hasattr(X, "dtypes"):
            missing = [c for c in schema.column_names if c not in set(map(str, X.columns))]
            if missing:
                raise DataError(f"X lacks the columns {missing} that the model was fitted on")
            X = X.rename(columns=str)[schema.column_names].to_numpy(dtype=object)
        raw = np.asarray(X if numeric is None else numeric, dtype=object)
        if raw.ndim != 2 or raw.shape[1] != len(schema.columns):
            raise ValueError(
                f"X has {raw.shape[-1] if raw.ndim else 0} features, but {type(self).__name__} is "
                f"expecting {len(schema.columns)} features as input"
            )
        return schema.encode(raw)

    def predict(self, X: Any) -> np.ndarray:
        """The label predicted for each row of ``X``."""
        X = self._design(X)
        return self.tree_.predict(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Training class frequencies of the leaf each row reaches, columns in ``classes_`` order."""
        X = self._design(X)
        return self.tree_.predict_proba(X)

    def apply(self, X: Any) -> np.ndarray:
        """The leaf each row reaches."""
        X = self._design(X)
        return self.tree_.apply(X)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean (weighted) accuracy on ``(X, y)``."""
        correct = self.predict(X) == np.asarray(y)
        weight = self._weights(sample_weight, len(correct))
        return float(np.average(correct, weights=weight))


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
    model._check_options()
    design, schema, labels = from_arrays(X, y, feature_names=feature_names)
    dataset = Dataset(design, labels, schema, np.arange(1, len(labels) + 1), None)
    return model.pareto_dataset(dataset)
