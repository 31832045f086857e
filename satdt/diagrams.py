"""OptimalDiagramClassifier: optimal decision diagrams, scikit-learn compatible.

The paper's two steps (Florio et al., AAAI 2023, "Training Strategy"): the Step-1
construction heuristic (:func:`satdt.mip.heuristic.construct`) gives a diagram at once; it
is the first incumbent and the MILP's warm start and cutoff; then the MILP of
:mod:`satdt.mip.milp` improves it under ``time_limit`` and proves it optimal when it can.
Features are min-max scaled to [0, 1] for the MILP (as the paper assumes) and the diagram is
mapped back to the user's units. The estimator shares the tree learner's data preparation,
validation, errors, :class:`~satdt.result.SearchResult` and parameter handling.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from . import methods
from .data import Dataset
from .diagram import Diagram
from .errors import NotProvenWarning, SatdtError
from .learner import SatdtEstimator, _check_count, _check_positive
from .prepare import Prepared, validate
from .result import Event, Stats

SPLITS = ("univariate", "multivariate")
SOLVERS = ("auto", "scip", "highs")
FAIRNESS_KINDS = ("parity", "false_positive", "false_negative")
# The Step-1 heuristic's share of the time limit, and its budget without one (seconds).
_HEURISTIC_SHARE = 0.1
_HEURISTIC_SECONDS = 5.0


@dataclass
class DiagramStats(Stats):
    """Counters of a diagram fit: the heuristic's objective, the MILP's bound, gap and nodes.

    ``solver`` is the MILP solver used (``""``: the MILP did not run); ``status`` its final
    status (``optimal``, ``time_limit``, ``infeasible``: nothing better than the start).
    """

    heuristic_objective: float = float("nan")
    heuristic_seconds: float = 0.0
    solver: str = ""
    status: str = ""
    mip_gap: float = float("nan")
    mip_nodes: int = 0


def _default_solver() -> str:
    """SCIP when installed (it finds incumbents without a start; measured), else HiGHS."""
    try:
        import pyscipopt  # noqa: F401
    except ImportError:
        return "highs"
    return "scip"


class OptimalDiagramClassifier(SatdtEstimator):
    """Optimal decision diagrams of a given skeleton by mixed-integer linear programming.

    The objective is the paper's (18): misclassified weight over total weight plus ``alpha``
    times the share of the skeleton's nodes (the root aside) that are used. ``diagram_`` is
    the fitted :class:`~satdt.diagram.Diagram` (in the user's units), ``result_`` the
    :class:`~satdt.result.SearchResult` (``objective_value``, the MILP's ``lower_bound``,
    ``proven_optimal``, the history of incumbents; ``stats`` a :class:`DiagramStats`).
    The MILP solver is an optional extra: ``pip install -e ".[diagrams]"``.
    """

    _SHARED: ClassVar[tuple[tuple[str, Any, str], ...]] = (
        (
            "objective",
            "error",
            "'error': objective (18); 'size': the fewest nodes of a diagram classifying every "
            "training row correctly (method 'sat' only).",
        ),
        (
            "method",
            "milp",
            "'milp': the Step-1 heuristic then the MILP (numeric features, every extension); "
            "'sat': incremental SAT (size) or MaxSAT (error) over binary features.",
        ),
        ("widths", (1, 2, 4, 4), "Nodes per layer of the skeleton (the first must be 1)."),
        ("alpha", 0.01, "Weight of the complexity term of objective (18)."),
        (
            "split",
            "univariate",
            "'univariate' (x[c] <= t) or 'multivariate' (a . x <= b on the scaled features).",
        ),
        ("time_limit", None, "Wall-clock seconds from the call of fit, preparation included."),
        (
            "solver",
            "auto",
            "MILP solver: 'scip' (pyscipopt), 'highs' (highspy); 'auto': SCIP when installed.",
        ),
        ("min_flow", None, "Stability (20): every used node carries at least this weight."),
        ("max_nodes", None, "Parsimony: at most this many used internal nodes (root included)."),
        (
            "fairness",
            None,
            "A dict {'column': name, 'ratio': 0.8, 'kind': 'parity' | 'false_positive' | "
            "'false_negative', 'positive': label}: the rate of positive predictions (or of false "
            "positives / negatives) of the two groups of a two-valued column stay within "
            "the ratio, both ways (19).",
        ),
        (
            "heuristic_time",
            None,
            "Seconds for the Step-1 heuristic (default: 10 % of the time limit, at most 5 s).",
        ),
        ("seed", 0, "Seed of the heuristic's feature subsampling."),
        ("max_memory_mb", 1024, "Memory budget of the data preparation."),
    )
    _fitted_attribute: ClassVar[str] = "diagram_"
    # the shared preparation's settings that diagrams do not vary: every threshold, no relabelling
    max_thresholds = None
    resolve = None

    @classmethod
    def _method_params(cls) -> dict[str, methods.Param]:
        return {}

    # ------------------------------------------------------------------ checks
    def _check(self) -> tuple[tuple[int, ...], str]:
        widths = self.widths
        if (
            isinstance(widths, str | bytes)
            or not hasattr(widths, "__len__")
            or len(widths) == 0
            or any(isinstance(w, bool) or not isinstance(w, int | np.integer) for w in widths)
            or any(w < 1 for w in widths)
            or widths[0] != 1
        ):
            raise SatdtError(
                f"widths must be a sequence of positive integers starting with 1 (the root), "
                f"got {widths!r}; e.g. (1, 2, 4, 4)"
            )
        if (
            isinstance(self.alpha, bool)
            or not isinstance(self.alpha, int | float)
            or not (self.alpha >= 0)
        ):
            raise SatdtError(f"alpha must be a number >= 0, got {self.alpha!r}")
        if self.split not in SPLITS:
            raise SatdtError(f"split must be one of {list(SPLITS)}, got {self.split!r}")
        if self.solver not in SOLVERS:
            raise SatdtError(f"solver must be one of {list(SOLVERS)}, got {self.solver!r}")
        _check_positive("time_limit", self.time_limit, "seconds")
        _check_positive("heuristic_time", self.heuristic_time, "seconds")
        _check_positive("max_memory_mb", self.max_memory_mb, "megabytes", allow_none=False)
        _check_count("max_nodes", self.max_nodes)
        if self.min_flow is not None:
            _check_positive("min_flow", self.min_flow, "rows (weight)")
        if self.fairness is not None:
            if not isinstance(self.fairness, dict) or "column" not in self.fairness:
                raise SatdtError(
                    "fairness must be a dict with at least 'column' (and 'ratio', 'kind', "
                    f"'positive'), got {self.fairness!r}"
                )
            unknown = set(self.fairness) - {"column", "ratio", "kind", "positive"}
            if unknown:
                raise SatdtError(f"fairness has unknown keys {sorted(unknown)}")
            kind = self.fairness.get("kind", "parity")
            if kind not in FAIRNESS_KINDS:
                raise SatdtError(
                    f"fairness kind must be one of {list(FAIRNESS_KINDS)}, got {kind!r}"
                )
            ratio = self.fairness.get("ratio", 0.8)
            if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0 < ratio <= 1:
                raise SatdtError(f"fairness ratio must be in (0, 1], got {ratio!r}")
        if self.objective not in ("error", "size"):
            raise SatdtError(f"objective must be 'error' or 'size', got {self.objective!r}")
        if self.method not in ("milp", "sat"):
            raise SatdtError(f"method must be 'milp' or 'sat', got {self.method!r}")
        if self.method == "sat":
            extras = [
                name
                for name in ("min_flow", "max_nodes", "fairness")
                if getattr(self, name) is not None
            ]
            if extras or self.split != "univariate":
                raise SatdtError(
                    f"method='sat' learns univariate diagrams without {', '.join(extras) or 'them'}"
                    "; use method='milp' for multivariate splits, min_flow, max_nodes, fairness"
                )
        elif self.objective == "size":
            raise SatdtError("objective='size' is solved by method='sat'")
        solver = _default_solver() if self.solver == "auto" else self.solver
        return tuple(int(w) for w in widths), solver

    # ------------------------------------------------------------------ fitting
    def fit(
        self,
        X: Any,
        y: Any,
        sample_weight: Any = None,
        *,
        feature_names: list[str] | None = None,
    ) -> OptimalDiagramClassifier:
        """Train the diagram on ``X`` and the labels ``y`` (see the class docstring)."""
        started = time.perf_counter()
        self._check()
        dataset = validate(X, y, feature_names=feature_names, estimator=type(self).__name__)
        return self.fit_dataset(dataset, sample_weight=sample_weight, started=started)

    def fit_dataset(
        self,
        dataset: Dataset,
        sample_weight: Any = None,
        *,
        on_event: Callable[[Event], None] | None = None,
        started: float | None = None,
    ) -> OptimalDiagramClassifier:
        """Fit on a table read by :func:`satdt.read_csv` (keeps its schema)."""
        from .mip.heuristic import construct, objective
        from .mip.milp import solve_diagram

        widths, solver = self._check()
        data = self._prepare(dataset, sample_weight, on_event, started)
        recorder, deadline = data.recorder, data.deadline
        self.method_ = self.method
        if self.method == "sat":
            return self._fit_sat(data, widths)
        stats = DiagramStats()
        recorder.stats = stats
        X, yi, w = data.X, data.y, data.weight
        lo, hi = X.min(axis=0, initial=np.inf), X.max(axis=0, initial=-np.inf)
        scale = np.where(hi > lo, hi - lo, 1.0)
        Xs = (X - lo) / scale
        fairness = self._fairness(data)

        def user(diagram: Diagram) -> Diagram:
            return diagram.unscale(lo, hi).replace(
                classes=data.classes,
                feature_names=data.feature_names,
                indicator=list(data.schema.indicator),
            )

        def record(diagram: Diagram, value: float) -> None:
            recorder.improve(user(diagram), float(value), mapped=True)

        budget = self.heuristic_time
        if budget is None:
            left = data.time_left()
            budget = (
                _HEURISTIC_SECONDS
                if left is None
                else min(_HEURISTIC_SECONDS, _HEURISTIC_SHARE * max(left, 0.0))
            )
        clock = time.perf_counter()
        start = construct(
            Xs,
            yi,
            data.n_classes,
            widths,
            alpha=float(self.alpha),
            sample_weight=w,
            split=self.split,
            time_budget=float(budget),
            seed=int(self.seed),
            deadline=deadline,
        )
        stats.heuristic_seconds = time.perf_counter() - clock
        stats.heuristic_objective = objective(start, Xs, yi, float(self.alpha), widths, w)
        constrained = (
            fairness is not None or self.min_flow is not None or self.max_nodes is not None
        )
        if not constrained:  # the start may break an extension: then it is only a MIP start
            record(start, stats.heuristic_objective)
        left = data.time_left()
        proven = False
        if left is None or left > 0:
            stats.solver = solver
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # an unusable start is just dropped
                outcome = solve_diagram(
                    Xs,
                    yi,
                    data.n_classes,
                    widths,
                    alpha=float(self.alpha),
                    split=self.split,
                    sample_weight=w,
                    solver=solver,
                    deadline=deadline,
                    start=start,
                    max_nodes=self.max_nodes,
                    min_flow=self.min_flow,
                    fairness=fairness,
                    on_incumbent=lambda d, value, bound, elapsed: record(d, value),
                )
            stats.status = outcome.status
            stats.mip_gap = outcome.gap
            stats.mip_nodes = outcome.nodes
            stats.interrupted = outcome.status in ("time_limit", "interrupted")
            if outcome.diagram is not None:
                record(outcome.diagram, outcome.objective)
            if outcome.status == "infeasible" and constrained and recorder.best is None:
                raise SatdtError(
                    "no diagram of this skeleton satisfies the constraints (fairness, min_flow, "
                    "max_nodes): relax them or widen the skeleton"
                )
            proven = outcome.proven_optimal or (
                outcome.status == "infeasible" and not constrained  # nothing beats the start
            )
            recorder.lower_bound = float(outcome.bound)
        if recorder.best is None:
            raise SatdtError(
                "the time limit passed before a diagram satisfying the constraints was found; "
                "raise time_limit"
            )
        result = recorder.snapshot(proven_optimal=proven)
        diagram = result.tree
        self._check_diagram(diagram, data, widths, result.objective_value)
        self.result_ = result
        self.diagram_ = diagram
        if not proven:
            warnings.warn(
                f"search stopped early: returning the best diagram found (objective "
                f"{result.objective_value:.6g}, lower bound {result.lower_bound:.6g}), not proven "
                "optimal",
                NotProvenWarning,
                stacklevel=2,
            )
        return self

    def _fit_sat(self, data: Prepared, widths: tuple[int, ...]) -> OptimalDiagramClassifier:
        """Minimum size by the counterexample-guided SAT loop, minimum error by MaxSAT (RC2)."""
        from .sat.diagram import in_design_units, minimum_error_diagram, minimum_size_diagram

        recorder = data.recorder
        view = data.binary()
        common = {"deadline": data.deadline, "classes": np.arange(data.n_classes)}
        if self.objective == "size":
            found = minimum_size_diagram(view.B, data.y, data.n_classes, widths, **common)
        else:
            found = minimum_error_diagram(
                view.B,
                data.y,
                data.n_classes,
                widths,
                alpha=float(self.alpha),
                sample_weight=data.weight,
                **common,
            )
        diagram = in_design_units(
            found.diagram,
            view.column,
            view.threshold,
            data.feature_names,
            list(data.schema.indicator),
        ).replace(classes=data.classes)
        recorder.improve(diagram, float(found.objective), mapped=True)
        recorder.lower_bound = float(found.lower_bound)
        result = recorder.snapshot(proven_optimal=found.proven)
        if self.objective == "size":
            if (
                diagram.predict_index(data.X) != data.y
            ).any() or diagram.n_nodes != found.objective:
                raise RuntimeError("internal error: the smallest diagram misclassifies rows")
        else:
            self._check_diagram(diagram, data, widths, result.objective_value)
        self.result_ = result
        self.diagram_ = diagram
        if not found.proven:
            warnings.warn(
                f"search stopped early: returning the best diagram found ({self.objective} "
                f"{result.objective_value:.6g}, lower bound {result.lower_bound:.6g}), not "
                "proven optimal",
                NotProvenWarning,
                stacklevel=3,
            )
        return self

    def _fairness(self, data: Prepared) -> Any:
        """The MILP's fairness constraint from the ``fairness`` dict, or None."""
        if self.fairness is None:
            return None
        from .mip.milp import Fairness

        spec = self.fairness
        column = spec["column"]
        names = data.feature_names
        if column not in names:
            raise SatdtError(
                f"fairness column {column!r} is not a column of the design matrix; columns: {names}"
            )
        values = data.X[:, names.index(column)]
        distinct = np.unique(values)
        if len(distinct) != 2:
            raise SatdtError(
                f"fairness column {column!r} must take exactly two values (two groups), it "
                f"takes {len(distinct)}"
            )
        positive = spec.get("positive", data.classes[-1])
        labels = [str(c) for c in data.classes]
        if str(positive) not in labels:
            raise SatdtError(f"fairness positive label {positive!r} is not a class: {labels}")
        return Fairness(
            kind=spec.get("kind", "parity"),
            group1=values == distinct[0],
            group2=values == distinct[1],
            positive=labels.index(str(positive)),
            ratio=float(spec.get("ratio", 0.8)),
        )

    def _check_diagram(
        self, diagram: Diagram, data: Prepared, widths: tuple[int, ...], value: float
    ) -> None:
        """Recompute objective (18) of the returned diagram on the data (correct before fast)."""
        from .mip.heuristic import objective

        recomputed = objective(diagram, data.X, data.y, float(self.alpha), widths, data.weight)
        if not np.isclose(recomputed, value, rtol=1e-6, atol=1e-6):
            raise RuntimeError(
                f"internal error: the diagram's objective is {recomputed}, reported {value}"
            )
