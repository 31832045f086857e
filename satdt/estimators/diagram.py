"""OptimalDiagramClassifier: optimal decision diagrams, scikit-learn compatible.

The estimator checks its options, prepares the data (shared with the trees), records the two
starts every ``error`` route begins from (the Step-1 heuristic of Florio et al. and the best
tree that fits the skeleton) and dispatches to a route of the table of diagram searches
(:mod:`satdt.search.diagrams`): the MILP, MaxSAT, the tree DP or incremental SAT; ``auto``
picks one by the rule documented there and in the user guide (docs/guide/diagrams.md). Every returned diagram is checked
against the data (objective (18) recomputed, extensions met) before it is returned.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from ..core.errors import (
    NotProvenWarning,
    ParameterError,
    SatdtError,
    TimeUp,
    TooLargeForSat,
    user_stacklevel,
)
from ..core.params import NONE, Check, Choice, Integer, Param, Real
from ..data import Dataset, check_complete
from ..models.diagram import Diagram
from ..models.diagram_checks import (
    FAIRNESS_KINDS,
    SPLITS,
    Extensions,
    Fairness,
    check_widths,
    fits,
    objective,
    violation,
)
from ..prepare.costs import tree_cost
from ..prepare.prepared import Prepared
from ..prepare.validate import check_class_weight, validate
from ..search.diagrams import (
    DIAGRAM_METHODS,
    ROUTES,
    DiagramTask,
    check_route,
    choose_route,
    step1_start,
    tree_start,
)
from ..search.params import TREE_PARAMS
from ..task.events import Event
from .base import SatdtEstimator

SOLVER_CHOICES = ("auto", "scip", "highs")


def _is_sequence(value: Any) -> bool:
    return isinstance(value, list | tuple | np.ndarray)


def _is_fairness(value: Any) -> bool:
    return isinstance(value, dict) and "column" in value


def _default_solver() -> str:
    """SCIP when installed (it finds incumbents without a start; measured), else HiGHS."""
    try:
        import pyscipopt  # noqa: F401
    except ImportError:
        return "highs"
    return "scip"


# the tree estimator's declaration of cost_matrix: the same rules, the same reading of a flag
_COST_MATRIX = next(param for param in TREE_PARAMS if param.name == "cost_matrix")


class OptimalDiagramClassifier(SatdtEstimator):
    """Optimal decision diagrams of a given skeleton (Florio et al., AAAI 2023).

    The objective is the paper's (18): misclassified weight over total weight plus ``alpha``
    times the share of the skeleton's nodes (the root aside) that are used; or, with
    ``objective='size'``, the fewest nodes of a diagram classifying every row correctly.
    ``method`` picks a route of ``satdt.search.diagrams.DIAGRAM_METHODS`` (``auto``: the
    rule of ``satdt.search.diagrams.choose_route``). ``diagram_`` is the fitted
    :class:`~satdt.Diagram` (in the user's units), ``result_`` the
    :class:`~satdt.task.result.SearchResult` (``objective_value``, ``lower_bound``,
    ``proven_optimal``, the history of incumbents; ``stats`` a
    ``DiagramStats``), ``method_`` the route that ran. The MILP
    solver is an optional extra: ``pip install -e ".[diagrams]"``.
    """

    _PARAMS: ClassVar[tuple[Param, ...]] = (
        Param(
            "objective",
            "error",
            "'error': objective (18); 'size': the fewest nodes of a diagram classifying every "
            "training row correctly.",
            (Choice(("error", "size")),),
        ),
        Param(
            "method",
            "auto",
            "A route of the table of diagram searches: 'milp', 'maxsat', 'tree', 'sat', or "
            "'auto' (the rule of the user guide's diagrams page).",
            (Choice(ROUTES),),
        ),
        Param(
            "widths",
            (1, 2, 4, 4),
            "Nodes per layer of the skeleton (the first must be 1).",
            (
                Check(
                    "a sequence of positive integers starting with 1", _is_sequence, "tuple of int"
                ),
            ),
        ),
        Param("alpha", 0.01, "Weight of the complexity term of objective (18).", (Real(0),)),
        Param(
            "split",
            "univariate",
            "'univariate' (x[c] <= t) or 'multivariate' (a . x <= b on the scaled features; "
            "method 'milp').",
            (Choice(SPLITS),),
        ),
        Param(
            "time_limit",
            None,
            "Wall-clock seconds from the call of fit, preparation included.",
            (NONE, Real(0, low_open=True)),
        ),
        Param(
            "milp_solver",
            "auto",
            "MILP solver (method 'milp'): 'scip' (pyscipopt), 'highs' (highspy); 'auto': SCIP "
            "when installed, else HiGHS (which one depends on the machine, so no fixed default).",
            (Choice(SOLVER_CHOICES),),
        ),
        Param(
            "min_flow",
            None,
            "Stability (20): every used node carries at least this weight.",
            (NONE, Real(0, low_open=True)),
        ),
        Param(
            "max_splits",
            None,
            "Parsimony: at most this many used decision nodes (root included; terminals not "
            "counted), as n_splits counts them.",
            (NONE, Integer(0)),
        ),
        Param(
            "fairness",
            None,
            "A dict {'column': name, 'ratio': 0.8, 'kind': 'parity' | 'false_positive' | "
            "'false_negative', 'positive': label}: the rate of positive predictions (or of false "
            "positives / negatives) of the two groups of a two-valued column stay within "
            "the ratio, both ways (19).",
            (NONE, Check("a dict with at least 'column'", _is_fairness, "dict")),
        ),
        Param(
            "heuristic_time",
            None,
            "Seconds for each start (the Step-1 heuristic, the best tree of the skeleton; "
            "None: 10 % of the time limit, at most 5 s).",
            (NONE, Real(0, low_open=True)),
        ),
        Param(
            "random_state",
            0,
            "Seed of the heuristic's feature subsampling.",
            (Integer(0),),
        ),
        Param(
            "max_memory_mb",
            1024,
            "Memory budget of the data preparation.",
            (Real(0, low_open=True),),
        ),
        Param(
            "class_weight",
            None,
            "None, 'balanced' (n_rows / (n_classes * rows of the class)) or {label: weight}: "
            "multiplies sample_weight, as in scikit-learn.",
            TREE_PARAMS[-2].rules,
        ),
        Param(
            "cost_matrix",
            None,
            "Misclassification costs, C[a][b] the cost of predicting b for a row of class a "
            "(>= 0, zero diagonal): a square array in classes_ order or a dict {true label: "
            "{predicted label: cost}} (pairs not named cost 1). Objective (18) then weighs the "
            "rows' cost instead of their misclassified weight; a terminal predicts its class "
            "of least cost. Not with min_flow or fairness.",
            _COST_MATRIX.rules,
            objectives=("error",),
            metavar="C",
        ),
    )
    _RENAMED: ClassVar[dict[str, str]] = {
        "max_nodes": "max_splits",
        "seed": "random_state",
        "solver": "milp_solver",
    }
    _fitted_attribute: ClassVar[str] = "diagram_"
    # the shared preparation's settings that diagrams do not vary: every threshold, no relabelling
    max_thresholds = None
    resolve = None

    @classmethod
    def _method_params(cls) -> dict[str, Param]:
        return {}

    # ------------------------------------------------------------------ checks
    def _check(self) -> tuple[int, ...]:
        """Check every option (before any work); the skeleton as a tuple."""
        self._check_params()
        try:
            widths = check_widths(self.widths)
        except SatdtError as error:
            raise ParameterError(f"widths: {error}") from None
        check_class_weight(self.class_weight)
        solver = self._param("milp_solver")
        if self.fairness is not None:
            unknown = set(self.fairness) - {"column", "ratio", "kind", "positive"}
            if unknown:
                raise ParameterError(f"fairness has unknown keys {sorted(unknown)}")
            kind = self.fairness.get("kind", "parity")
            if kind not in FAIRNESS_KINDS:
                raise ParameterError(
                    f"fairness kind must be one of {list(FAIRNESS_KINDS)}, got {kind!r}"
                )
            ratio = self.fairness.get("ratio", 0.8)
            if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0 < ratio <= 1:
                raise ParameterError(f"fairness ratio must be in (0, 1], got {ratio!r}")
        self._check_costs()
        own = {} if solver == "auto" else {"milp_solver": solver}
        check_route(
            self.method,
            self.objective,
            self.split,
            widths,
            float(self.alpha),
            self._extensions(),
            own,
        )
        return widths

    def _check_costs(self) -> None:
        """``cost_matrix`` goes with objective (18) alone: the smallest consistent diagram has
        no error to cost, and the stability and fairness constraints count the rows' own
        weights, which the reduction of costs rewrites (:mod:`satdt.prepare.costs`)."""
        if self.cost_matrix is None:
            return
        if self.objective != "error":
            raise ParameterError(
                "cost_matrix applies to objective='error' (a consistent diagram classifies "
                f"every row right, so no error has a cost), not {self.objective!r}; leave it "
                "at None"
            )
        for name in ("min_flow", "fairness"):
            if getattr(self, name) is not None:
                raise ParameterError(
                    f"cost_matrix does not go with {name} yet (the constraint counts the rows' "
                    f"weights, which costs rewrite); leave {name} at None or cost_matrix at None"
                )

    def _extensions(self) -> dict[str, Any]:
        return {
            "max_splits": self._param("max_splits"),
            "min_flow": self.min_flow,
            "fairness": self.fairness,
        }

    # ------------------------------------------------------------------ fitting
    def to_onnx(self) -> Any:
        """The fitted diagram as an ONNX model (:func:`satdt.models.export.diagram_to_onnx`).

        It reads the design matrix (``feature_names_in_``'s columns, categorical columns one-hot
        encoded) as float64 and predicts exactly as :meth:`predict` and :meth:`predict_proba`
        do. Needs the ``onnx`` package (the ``export`` extra).

        Returns
        -------
        onnx.ModelProto
            The model: input ``X``, outputs ``label`` and ``probabilities``.
        """
        return self._fitted_model().to_onnx()

    def fit(
        self,
        X: Any,
        y: Any,
        sample_weight: Any = None,
        *,
        feature_names: list[str] | None = None,
    ) -> OptimalDiagramClassifier:
        """Train the diagram on ``X`` and the labels ``y`` (see the class docstring).

        Parameters
        ----------
        X : array-like of shape (n_rows, n_columns)
            The features: a NumPy array, a table of strings (categorical columns) or a pandas
            DataFrame; diagrams need complete data.
        y : array-like of shape (n_rows,)
            The labels.
        sample_weight : array-like of shape (n_rows,), optional
            Weight of each row (default 1).
        feature_names : list of str, optional
            Names of the columns of ``X`` (a DataFrame's are used by default).

        Returns
        -------
        OptimalDiagramClassifier
            This estimator, fitted: ``diagram_``, ``result_`` and ``method_`` are set.
        """
        started = time.perf_counter()
        self._check()
        dataset = validate(X, y, feature_names=feature_names, estimator=type(self).__name__)
        return self.fit_dataset(dataset, sample_weight=sample_weight, started=started)

    def _check_missing(self, dataset: Dataset) -> None:
        """Diagrams refuse missing cells, naming the reason."""
        check_complete(
            dataset,
            "diagrams need complete data (the MILP and the diagram searches compare numbers, "
            "with no side for missing values): impute the missing values or remove the "
            "incomplete rows; OptimalTreeClassifier learns where missing values go",
        )

    def fit_dataset(
        self,
        dataset: Dataset,
        sample_weight: Any = None,
        *,
        on_event: Callable[[Event], None] | None = None,
        started: float | None = None,
    ) -> OptimalDiagramClassifier:
        """Fit on a table read by :func:`satdt.read_csv` (keeps its schema).

        Parameters
        ----------
        dataset : Dataset
            The table, with its labels.
        sample_weight : array-like of shape (n_rows,), optional
            Weight of each row (default 1).
        on_event : callable, optional
            Called with every event the search reports (live status lines).
        started : float, optional
            The ``time.perf_counter()`` value the time limit counts from (default: now).

        Returns
        -------
        OptimalDiagramClassifier
            This estimator, fitted.
        """
        widths = self._check()
        solver = self._param("milp_solver")
        data = self._prepare(dataset, sample_weight, on_event, started)
        task = DiagramTask(
            data,
            widths,
            self.objective,
            self._search_alpha(data),
            self.split,
            Extensions(self._param("max_splits"), self.min_flow, self._fairness(data)),
            solver=_default_solver() if solver == "auto" else solver,
            heuristic_time=self.heuristic_time,
            seed=int(self._param("random_state")),
        )
        data.recorder.stats = task.stats
        name = self.method
        if name == "auto":
            try:
                name = choose_route(
                    self.objective, self.split, widths, task.alpha, self._extensions(), data
                )
            except TimeUp:  # the limit passed while looking at the data: the choice without them
                name = choose_route(
                    self.objective, self.split, widths, task.alpha, self._extensions()
                )
        self.method_ = name
        if data.n_classes == 1:  # one terminal, no error, no node: optimal whatever the route
            task.record(
                Diagram.single_terminal(0, n_features=data.X.shape[1], classes=data.classes)
            )
            task.proven, task.lower_bound = True, 0.0
        elif self.objective == "error" and name != "tree":
            tree_start(task)
            step1_start(task)
        if not task.proven and (data.time_left() is None or data.time_left() > 0):
            try:
                DIAGRAM_METHODS[name].run(task)
            except TooLargeForSat:
                if self.method != "auto":
                    raise
                self.method_ = "milp"  # an extension's counter too large for the SAT routes
                DIAGRAM_METHODS["milp"].run(task)
        if data.recorder.best is None:
            raise SatdtError(
                "the time limit passed before a diagram satisfying the constraints was found; "
                "raise time_limit"
            )
        data.recorder.lower_bound = task.lower_bound
        result = data.recorder.snapshot(proven_optimal=task.proven)
        diagram = result.model
        if data.original is not None:  # costs: the searches' value, then the user's rows
            self._check_diagram(diagram, data, widths, data.recorder.best.value, task)
            diagram = diagram.with_counts(data.original.X, data.original.y, data.original.weight)
            result = replace(result, model=diagram)
            self._check_cost(diagram, data, widths, result.objective_value)
        else:
            if diagram.terminal_counts is None:  # SAT routes: predict_proba from the training rows
                diagram = diagram.with_counts(data.X, data.y, data.weight)
                result = replace(result, model=diagram)
            self._check_diagram(diagram, data, widths, result.objective_value, task)
        self.result_ = result
        self.diagram_ = diagram
        if not task.proven:
            warnings.warn(
                f"search stopped early: returning the best diagram found ({self.objective} "
                f"{result.objective_value:.6g}, lower bound {result.lower_bound:.6g}), not "
                "proven optimal",
                NotProvenWarning,
                stacklevel=user_stacklevel(),
            )
        return self

    def _search_alpha(self, data: Prepared) -> float:
        """The ``alpha`` the routes run with: the user's, or with a cost matrix the user's times
        W / W' (W the rows' total weight, W' that of the rows the reduction rewrote them as).

        On the rewritten rows a diagram's objective (18) is (cost + offset) / W' + alpha' *
        share = (W / W') (cost / W + alpha * share) + offset / W': the same optimum; the
        recorder subtracts offset / W' and scales by W' / W, so every value reported is the
        user's objective (18) with costs.
        """
        if data.original is None:
            return float(self.alpha)
        total, rewritten = float(data.original.weight.sum()), float(data.weight.sum())
        data.recorder.begin(
            value_scale=rewritten / total,
            value_offset=data.costs.offset / rewritten,
            cost_matrix=data.costs.matrix,
        )
        return float(self.alpha) * total / rewritten

    def _check_cost(
        self, diagram: Any, data: Prepared, widths: tuple[int, ...], value: float
    ) -> None:
        """Recompute objective (18) with costs on the user's rows: the weighted cost of the
        predictions over the total weight plus alpha times the share of nodes used."""
        original = data.original
        weight = original.weight
        wrong = float(weight[diagram.terminal(original.X) != original.y].sum())
        nodes = objective(diagram, original.X, original.y, float(self.alpha), widths, weight)
        cost = tree_cost(diagram.terminal(original.X), original.y, weight, data.costs.matrix)
        recomputed = nodes + (cost - wrong) / float(weight.sum())
        if not np.isclose(recomputed, value, rtol=1e-6, atol=1e-6):
            raise RuntimeError(
                f"internal error: the diagram's objective with costs is {recomputed}, "
                f"reported {value}"
            )

    def _fairness(self, data: Prepared) -> Fairness | None:
        """The fairness constraint over the prepared rows from the ``fairness`` dict, or None."""
        if self.fairness is None:
            return None
        spec = self.fairness
        column = spec["column"]
        names = data.feature_names
        if column not in names:
            raise ParameterError(
                f"fairness column {column!r} is not a column of the design matrix; columns: {names}"
            )
        values = data.X[:, names.index(column)]
        distinct = np.unique(values)
        if len(distinct) != 2:
            raise ParameterError(
                f"fairness column {column!r} must take exactly two values (two groups), it "
                f"takes {len(distinct)}"
            )
        positive = spec.get("positive", data.classes[-1])
        labels = [str(c) for c in data.classes]
        if str(positive) not in labels:
            raise ParameterError(f"fairness positive label {positive!r} is not a class: {labels}")
        return Fairness(
            kind=spec.get("kind", "parity"),
            group1=values == distinct[0],
            group2=values == distinct[1],
            positive=labels.index(str(positive)),
            ratio=float(spec.get("ratio", 0.8)),
        )

    def _check_diagram(
        self,
        diagram: Any,
        data: Prepared,
        widths: tuple[int, ...],
        value: float,
        task: DiagramTask,
    ) -> None:
        """Recompute the objective of the returned diagram on the data and check the extensions
        and the skeleton (correct before fast)."""
        if not fits(diagram, widths):
            raise RuntimeError(f"internal error: the diagram {diagram.widths} breaks the skeleton")
        if self.objective == "size":
            if (diagram.predict_index(data.X) != data.y).any() or diagram.n_splits != value:
                raise RuntimeError("internal error: the smallest diagram misclassifies rows")
            return
        broken = violation(diagram, data.X, data.y, data.weight, **task.extensions.as_dict())
        if broken is not None:
            raise RuntimeError(
                f"internal error: the diagram returned breaks a constraint: {broken}"
            )
        recomputed = objective(diagram, data.X, data.y, task.alpha, widths, data.weight)
        if not np.isclose(recomputed, value, rtol=1e-6, atol=1e-6):
            raise RuntimeError(
                f"internal error: the diagram's objective is {recomputed}, reported {value}"
            )
