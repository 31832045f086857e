"""Formal explanations of a prediction: abductive (AXp) and contrastive (CXp) explanations.

For a row ``x`` that a model predicts as class ``c`` (Izza, Ignatiev & Marques-Silva, "On
Explaining Decision Trees", JAIR 2022, after Ignatiev et al., AAAI 2019):

* an **AXp** is a subset-minimal set of features such that fixing them to their values in
  ``x`` forces the prediction ``c``, whatever values the other features take (within their
  domains);
* a **CXp** is a subset-minimal set of features such that letting them change (the others
  kept) can give another class.

Every AXp hits every CXp and the other way round: each set is the family of minimal hitting
sets of the other (the duality of Ignatiev et al., AIxIA 2020). Paths make the CXps of a tree
or a diagram direct: for a path ending in another class, the features whose value in ``x``
breaks one of the path's tests must all change to follow it, and changing them is enough when
each of them can satisfy the path's tests on it. The CXps are the inclusion-minimal sets among
these *blocking sets*; the AXps are their minimal hitting sets. One AXp comes from deletion
(drop a feature while the rest still hits every blocking set: linear in the features), the
smallest AXp from PySAT's minimal-hitting-set enumerator (:class:`pysat.examples.hitman.Hitman`,
by MaxSAT), and every AXp at once by Berge's algorithm over bit masks of the CXps (Hitman, one
MaxSAT call per AXp, where the sets grow too many). Izza et al. show that a tree's path is often not an AXp: it holds tests that the prediction does not
need; :func:`redundancy` measures that share.

A *feature* is a column of the user's table: a numeric column is one design column, whose
domain is the real numbers (and missing, where the model learned a side for missing values on
that column); a categorical column is its group of 0/1 design columns named ``colour == red``
(and ``colour is missing``), whose domain is "exactly one of them is 1". An explanation states
its conditions on those columns: a numeric column as the interval of the model's thresholds
that holds its value (``2.45 < petal length <= 4.75``), a categorical one as ``colour = red``.

Every explanation returned is checked against the model before it is returned, against one
walk of the model per row (not the paths it was computed from): the walk keeps, per feature,
the values the branches taken so far allow, drops the branches no value takes, and collects
for each way to another class the features whose value in the row it does not take. An AXp
must meet each of these sets (it forces the prediction) and be the only feature it fixes in
one of them, for each of its features (it is minimal); a CXp must hold one of them (it can
flip the prediction) and hold none without any of its features (it is minimal).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.errors import ParameterError, SatdtError
from ..models.tree import LEAF, MISSING_LEFT, MISSING_RIGHT, Tree
from .explanation import Condition, Contrast, Explanation
from .hitting import every_hitting_set, minimal_hitting_sets, minimal_sets

__all__ = ["Explainer", "explain", "redundancy"]


# A test on a path: (design column, threshold, goes low (x <= t holds), whether a missing
# value takes this direction).
_Test = tuple[int, float, bool, bool]


@dataclass
class _Path:
    """A path of the model: the class it ends in, its tests grouped by feature, its nodes
    from the root (its leaf last; a diagram's terminal ``k`` as ``-1 - k``)."""

    target: int
    tests: dict[int, list[_Test]] = field(default_factory=dict)
    nodes: tuple[int, ...] = ()


class Explainer:
    """Explanations of one model's predictions (see the module notes).

    Parameters
    ----------
    model
        A :class:`~satdt.models.tree.Tree` or a univariate :class:`~satdt.models.diagram.Diagram`, over the
        design matrix (its ``feature_names`` name the columns; indicator columns named
        ``colour == red`` / ``colour is missing`` form the categorical column ``colour``).
    """

    def __init__(self, model: Any) -> None:
        if getattr(model, "multivariate", False):
            raise SatdtError(
                "explanations need tests on one column each: this diagram has multivariate "
                "(hyperplane) nodes; explain a diagram learned with split='univariate'"
            )
        self.model = model
        self.names = _design_names(model)
        self.group, self.features, self.categorical = _features(model, self.names)
        self.paths = list(_paths(model, self.group))
        self.thresholds = _thresholds(model)
        self.missing_ok = _learned_missing(model, self.group, len(self.features))
        # the paths that some values of the features follow (the others are unreachable)
        self._open_paths = [
            path
            for path in self.paths
            if all(self._satisfiable(f, tests) for f, tests in path.tests.items())
        ]
        self._index_nodes()

    # ------------------------------------------------------------------ one row
    def explain(
        self,
        x: np.ndarray,
        row: int = 0,
        *,
        enumerate_axps: bool = False,
        limit: int = 100,
        time_limit: float | None = None,
    ) -> Explanation:
        """Explain the prediction of one design-matrix row ``x``.

        ``enumerate_axps`` also lists every AXp, smallest first, at most ``limit`` of them and
        for at most ``time_limit`` seconds (``complete`` says whether it ended).
        """
        x = np.asarray(x, dtype=np.float64)
        predicted = int(self.model.predict_index(x[None, :])[0])
        blocking = self.blocking_sets(x, predicted)
        cxps = minimal_sets(blocking)
        axp = self._deletion_axp(blocking)
        sets = [sorted(s) for s, _ in cxps]
        smallest = next(minimal_hitting_sets(sets, None))  # one MaxSAT call: as enumerated or not
        axps, complete = [], True
        if enumerate_axps:
            deadline = time.perf_counter() + time_limit if time_limit else None
            axps, complete = every_hitting_set(sets, smallest, limit, deadline)
        own = self._row_path(x, predicted)
        on_path = set(own.tests)
        restricted = [s & on_path for s, _ in cxps]
        droppable = [f for f in on_path if all(s - {f} for s in restricted)]
        if droppable:  # the path is not itself an AXp: its smallest AXp, by MaxSAT
            within_path = next(minimal_hitting_sets(sorted(map(sorted, restricted)), None))
        else:  # no test of the path can go: the path is its only AXp
            within_path = sorted(on_path)
        opened = self._ways_to_other_classes(x, predicted)
        for candidate in [axp, smallest, within_path, *axps]:
            self._check_axp(opened, candidate)
        for features, _ in cxps:
            self._check_cxp(opened, features)
        classes = self.model.classes
        said = self._conditions(x)
        return Explanation(
            row=row,
            prediction=classes[predicted],
            path=tuple(self._path_conditions_of(own, sorted(own.tests))),
            axp=said(axp),
            smallest_axp=said(smallest),
            cxps=tuple(
                Contrast(
                    tuple(self.features[f] for f in sorted(features)),
                    tuple(self._path_conditions_of(path, sorted(features))),
                    classes[path.target],
                    path.nodes,
                )
                for features, path in cxps
            ),
            axps=tuple(said(found) for found in axps),
            complete=complete,
            path_axp=said(within_path),
            nodes=own.nodes,
            node_columns=tuple(
                self.features[self.group[int(self.model.feature[node])]] for node in own.nodes[:-1]
            ),
        )

    def blocking_sets(self, x: np.ndarray, predicted: int) -> list[tuple[frozenset[int], _Path]]:
        """For each path that ends in another class and that some values of the features can
        follow: the features whose value in ``x`` breaks one of its tests."""
        sets = []
        for path in self._open_paths:
            if path.target == predicted:
                continue
            breaking = frozenset(
                f for f, tests in path.tests.items() if not self._holds(f, tests, x)
            )
            sets.append((breaking, path))
        return sets

    # ------------------------------------------------------------------ the explanations
    @staticmethod
    def _deletion_axp(blocking: list[tuple[frozenset[int], _Path]]) -> list[int]:
        """One subset-minimal hitting set of the blocking sets, by deletion from the union."""
        masks = [sum(1 << f for f in s) for s, _ in blocking]
        kept = 0
        for mask in masks:
            kept |= mask
        for feature in range(kept.bit_length()):
            trial = kept & ~(1 << feature)
            if trial != kept and all(mask & trial for mask in masks):
                kept = trial
        return [f for f in range(kept.bit_length()) if kept >> f & 1]

    @staticmethod
    def _check_axp(opened: list[int], features: Sequence[int]) -> None:
        """An AXp fixes a feature of every way to another class (it forces the prediction),
        and each of its features is the only one it fixes on some way (it is minimal)."""
        fixed = sum(1 << f for f in features)
        alone = 0  # the features that are the only one fixed on some way
        for way in opened:
            met = way & fixed
            if not met:
                raise RuntimeError(
                    f"internal error: {list(features)} does not force the prediction"
                )
            if met & (met - 1) == 0:
                alone |= met
        if alone != fixed:
            raise RuntimeError(f"internal error: AXp {list(features)} is not minimal")

    @staticmethod
    def _check_cxp(opened: list[int], features: frozenset[int]) -> None:
        """A CXp frees every feature of some way to another class (it can flip the
        prediction), and no way needs fewer of them (it is minimal)."""
        freed = sum(1 << f for f in features)
        if not any(way & ~freed == 0 for way in opened):
            raise RuntimeError(f"internal error: changing {set(features)} cannot flip it")
        for f in features:
            if any(way & ~(freed & ~(1 << f)) == 0 for way in opened):
                raise RuntimeError(f"internal error: CXp {set(features)} is not minimal")

    def _ways_to_other_classes(self, x: np.ndarray, predicted: int) -> list[int]:
        """The checks' own account of the model, by a walk of its nodes (not through the paths
        the explanations come from): for each way to another class that values of the features
        can follow, the features (bit ``f``) whose value in ``x`` it does not take.

        The walk keeps, per feature, the interval (and, for a categorical one, the tests) the
        branches taken so far allow, undoing them on the way back, and drops a branch that no
        value can take. Fixing a set of features to ``x`` leaves another class reachable
        exactly when it misses one of these sets, so each check is a few mask operations.
        """
        nodes = self._nodes
        n = len(self.features)
        low, high = [-math.inf] * n, [math.inf] * n
        missing = list(self.missing_ok)  # whether a missing value still follows every test
        categorical_tests: dict[int, list[_Test]] = {f: [] for f in self.categorical}
        found: set[int] = set()

        def walk(node: int, left: int) -> None:
            here = nodes[node]
            if here[0] is None:  # a leaf (terminal) of class here[1]
                if here[1] != predicted:
                    found.add(left)
                return
            column, threshold, feature, branches = here
            value = x[column]
            for goes_low, child, missing_goes in branches:
                takes = missing_goes if value != value else (value <= threshold) == goes_low
                away = left if takes else left | 1 << feature
                tests = categorical_tests.get(feature)
                if tests is not None:
                    tests.append((column, threshold, goes_low, missing_goes))
                    if self._satisfiable(feature, tests):
                        walk(child, away)
                    tests.pop()
                    continue
                saved = low[feature], high[feature], missing[feature]
                if goes_low:
                    high[feature] = min(high[feature], threshold)
                else:
                    low[feature] = max(low[feature], threshold)
                missing[feature] = missing[feature] and missing_goes
                if low[feature] < high[feature] or missing[feature]:
                    walk(child, away)
                low[feature], high[feature], missing[feature] = saved

        walk(self._root, 0)
        # the inclusion-minimal sets decide every check (a set holding another adds nothing)
        minimal: list[int] = []
        for way in sorted(found, key=int.bit_count):
            if not any(kept & way == kept for kept in minimal):
                minimal.append(way)
        return minimal

    def _index_nodes(self) -> None:
        """Per node, what the walk reads: ``(None, class)`` for a leaf or terminal, else
        ``(column, threshold, feature, ((goes low, child, missing follows), ...))``; nodes
        keyed by their index (a diagram's terminals by ``-1 - class``)."""
        model = self.model
        is_tree = isinstance(model, Tree)
        nodes: dict[int, tuple] = {}
        for node in range(len(model.feature)):
            if is_tree and model.feature[node] == LEAF:
                nodes[node] = (None, int(model.value[node]))
                continue
            column = int(model.feature[node])
            nodes[node] = (
                column,
                float(model.threshold[node]),
                self.group[column],
                tuple(
                    (goes_low, child, self._missing_goes(node, goes_low, is_tree))
                    for goes_low, child in self._branches(node, is_tree)
                ),
            )
        if not is_tree:
            for k in range(len(model.classes)):
                nodes[-1 - k] = (None, k)
        self._nodes = nodes
        self._root = 0 if is_tree else int(model.root)

    def _branches(self, node: int, is_tree: bool) -> list[tuple[bool, int]]:
        model = self.model
        if is_tree:
            return [(True, int(model.left[node])), (False, int(model.right[node]))]
        return [(True, int(model.low[node])), (False, int(model.high[node]))]

    def _missing_goes(self, node: int, goes_low: bool, is_tree: bool) -> bool:
        """Whether a missing value follows this branch of the node (trees only)."""
        if not is_tree:
            return False
        return (int(self.model.missing[node]) & 1 == 0) == goes_low

    # ------------------------------------------------------------------ tests on a feature
    def _holds(self, feature: int, tests: Sequence[_Test], x: np.ndarray) -> bool:
        """Whether the row's values on this feature pass every test."""
        for column, threshold, goes_low, missing_ok in tests:
            value = x[column]
            if math.isnan(value):
                if not missing_ok:
                    return False
            elif (value <= threshold) != goes_low:
                return False
        return True

    def _satisfiable(self, feature: int, tests: Sequence[_Test]) -> bool:
        """Whether some value of the feature's domain passes every test."""
        columns = self.categorical.get(feature)
        if columns is not None:  # exactly one indicator of the column is 1
            return any(
                all((float(column == one) <= t) == low for column, t, low, _ in tests)
                for one in columns
            )
        if self.missing_ok[feature] and all(ok for *_, ok in tests):
            return True
        low = max((t for _, t, goes_low, _ in tests if not goes_low), default=-math.inf)
        high = min((t for _, t, goes_low, _ in tests if goes_low), default=math.inf)
        return low < high

    # ------------------------------------------------------------------ words
    def _conditions(self, x: np.ndarray) -> Any:
        """The row's values on a set of features, as the cells of the model's thresholds: a
        function of the features, each feature's condition worded once per row."""
        worded: dict[int, Condition] = {}

        def said(features: Sequence[int]) -> tuple[Condition, ...]:
            for feature in features:
                if feature not in worded:
                    worded[feature] = self._condition(x, feature)
            return tuple(worded[feature] for feature in sorted(features))

        return said

    def _condition(self, x: np.ndarray, feature: int) -> Condition:
        """The row's value on one feature, as the cell of the model's thresholds holding it."""
        name = self.features[feature]
        columns = self.categorical.get(feature)
        if columns is not None:
            on = [c for c in columns if x[c] == 1]
            value = _category(self.names[on[0]], name) if on else None
            text = f"{name} is missing" if value == "" else f"{name} = {value}"
            if value is None:
                text = f"{name} is none of the categories learned"
            return Condition(name, text)
        column = self.group.index(feature)  # a numeric feature's one design column
        value = x[column]
        if math.isnan(value):
            return Condition(name, f"{name} is missing")
        cuts = self.thresholds.get(column, [])
        below = [t for t in cuts if t < value]
        above = [t for t in cuts if t >= value]
        return Condition(name, _interval(name, max(below, default=None), min(above, default=None)))

    def _row_path(self, x: np.ndarray, predicted: int) -> _Path:
        """The row's own path (a tree's, or a diagram's route): the one path of its class whose
        tests the row passes."""
        for path in self.paths:
            if path.target == predicted and all(
                self._holds(f, t, x) for f, t in path.tests.items()
            ):
                return path
        raise RuntimeError("internal error: no path of the model holds the row")

    def _path_conditions_of(self, path: _Path, features: Sequence[int]) -> list[Condition]:
        conditions = []
        for feature in features:
            name = self.features[feature]
            tests = path.tests[feature]
            columns = self.categorical.get(feature)
            if columns is not None:
                allowed = [
                    _category(self.names[one], name)
                    for one in columns
                    if all((float(c == one) <= t) == low for c, t, low, _ in tests)
                ]
                shown = ["missing" if a == "" else a for a in allowed]
                text = (
                    f"{name} = {shown[0]}"
                    if len(shown) == 1
                    else f"{name} in {{{', '.join(shown)}}}"
                )
                conditions.append(Condition(name, text))
                continue
            low = max((t for _, t, goes_low, _ in tests if not goes_low), default=None)
            high = min((t for _, t, goes_low, _ in tests if goes_low), default=None)
            text = _interval(name, low, high)
            if self.missing_ok[feature] and all(ok for *_, ok in tests):
                text += " or missing"
            conditions.append(Condition(name, text))
        return conditions


def _interval(name: str, low: float | None, high: float | None) -> str:
    if low is None and high is None:
        return f"{name} any"
    if low is None:
        return f"{name} <= {high:g}"
    if high is None:
        return f"{name} > {low:g}"
    return f"{low:g} < {name} <= {high:g}"


def _category(design_name: str, column: str) -> str:
    """The category of an indicator column (``""`` for ``column is missing``)."""
    if design_name == f"{column} is missing":
        return ""
    return design_name[len(column) + len(" == ") :]


def _design_names(model: Any) -> list[str]:
    n = int(model.n_features) if hasattr(model, "n_features") else None
    names = model.feature_names
    if names is not None:
        return list(names)
    if n is None:
        used = model.feature[model.feature >= 0]
        n = int(used.max()) + 1 if used.size else 0
    return [f"x[{j}]" for j in range(n)]


def _features(model: Any, names: list[str]) -> tuple[list[int], list[str], dict[int, list[int]]]:
    """The feature of each design column, the features' names, and the indicator columns of
    each categorical feature."""
    indicator = set(int(i) for i in (model.indicator or ()))
    group: list[int] = []
    features: list[str] = []
    categorical: dict[int, list[int]] = {}
    by_name: dict[str, int] = {}
    for column, name in enumerate(names):
        if column in indicator:
            base = name.split(" == ")[0] if " == " in name else name.removesuffix(" is missing")
            if base not in by_name:
                by_name[base] = len(features)
                features.append(base)
                categorical[by_name[base]] = []
            group.append(by_name[base])
            categorical[by_name[base]].append(column)
        else:
            group.append(len(features))
            features.append(name)
    return group, features, categorical


def _thresholds(model: Any) -> dict[int, list[float]]:
    cuts: dict[int, set[float]] = {}
    reachable = model.reachable() if hasattr(model, "reachable") else None
    for node in range(len(model.feature)):
        column = int(model.feature[node])
        if column >= 0 and (reachable is None or reachable[node]):
            cuts.setdefault(column, set()).add(float(model.threshold[node]))
    return {column: sorted(values) for column, values in cuts.items()}


def _learned_missing(model: Any, group: list[int], n_features: int) -> list[bool]:
    """Features that may be missing: those on whose columns the tree learned a missing side."""
    may = [False] * n_features
    if isinstance(model, Tree):
        for node in np.flatnonzero(model.feature != LEAF):
            if int(model.missing[node]) in (MISSING_LEFT, MISSING_RIGHT):
                may[group[int(model.feature[node])]] = True
    return may


def _paths(model: Any, group: list[int]) -> Iterator[_Path]:
    """Every root-to-leaf (or terminal) path of a tree or a diagram, tests grouped by feature."""
    is_tree = isinstance(model, Tree)
    start = 0 if is_tree else int(model.root)
    stack: list[tuple[int, tuple[_Test, ...], tuple[int, ...]]] = [(start, (), ())]
    while stack:
        node, tests, nodes = stack.pop()
        leaf = model.feature[node] == LEAF if is_tree else node < 0
        if leaf:
            path = _Path(int(model.value[node]) if is_tree else -1 - node, nodes=(*nodes, node))
            for test in tests:
                path.tests.setdefault(group[test[0]], []).append(test)
            yield path
            continue
        column, threshold = int(model.feature[node]), float(model.threshold[node])
        if is_tree:
            side = int(model.missing[node]) & 1  # 0: missing goes left
            children = [(True, model.left[node], side == 0), (False, model.right[node], side == 1)]
        else:
            children = [(True, model.low[node], False), (False, model.high[node], False)]
        for goes_low, child, missing_ok in children:
            test = (column, threshold, goes_low, missing_ok)
            stack.append((int(child), (*tests, test), (*nodes, node)))


# ---------------------------------------------------------------------- the public entry point
def explain(
    model: Any,
    X: Any,
    rows: Sequence[int] | None = None,
    *,
    enumerate_axps: bool = False,
    limit: int = 100,
    time_limit: float | None = None,
) -> list[Explanation]:
    """Explain the predictions of a model on some rows of ``X``.

    Parameters
    ----------
    model : estimator, Tree or Diagram
        A fitted :class:`~satdt.OptimalTreeClassifier` or
        :class:`~satdt.OptimalDiagramClassifier` (``X`` is then as given to ``fit``: a
        table, categorical columns included), or a :class:`~satdt.Tree` or
        :class:`~satdt.Diagram` (``X`` is then its design matrix).
    X : array-like or DataFrame
        The rows.
    rows : sequence of int, optional
        Which rows to explain (default: all).
    enumerate_axps : bool, default=False
        Also list every AXp of each row, smallest first.
    limit : int, default=100
        At most this many AXps per row.
    time_limit : float, optional
        Seconds per row for the enumeration.

    Returns
    -------
    list of Explanation
        One per row, each checked against the model.
    """
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ParameterError(f"limit must be an integer >= 1, got {limit!r}")
    if time_limit is not None and not (isinstance(time_limit, int | float) and time_limit > 0):
        raise ParameterError(f"time_limit must be None or a number > 0, got {time_limit!r}")
    fitted = getattr(model, "_fitted_model", None)
    if fitted is not None:
        design = model._design(X)
        model = fitted()
    else:
        design = np.asarray(X, dtype=np.float64)
        if design.ndim == 1:
            design = design[None, :]
    if design.ndim != 2:
        raise ParameterError(f"X must be a table of rows, got an array of shape {design.shape}")
    chosen = range(len(design)) if rows is None else rows
    for row in chosen:
        if not 0 <= int(row) < len(design):
            raise ParameterError(f"row {row} is not a row of X (it has {len(design)} rows)")
    explainer = Explainer(model)
    return [
        explainer.explain(
            design[int(row)],
            int(row),
            enumerate_axps=enumerate_axps,
            limit=limit,
            time_limit=time_limit,
        )
        for row in chosen
    ]


def redundancy(explanations: Sequence[Explanation]) -> dict[str, float]:
    """How redundant the paths of some explained rows are.

    Parameters
    ----------
    explanations : sequence of Explanation
        From :func:`satdt.explain`.

    Returns
    -------
    dict
        ``rows``; ``mean_redundancy``, the mean share of a path's columns that the smallest
        AXp does not need; ``redundant_rows``, the share of rows whose path holds such
        columns; ``mean_path_columns`` and ``mean_smallest_axp``, the mean lengths.
    """
    if not explanations:
        return {"rows": 0, "mean_redundancy": 0.0, "redundant_rows": 0.0}
    shares = [e.redundancy for e in explanations]
    return {
        "rows": len(explanations),
        "mean_redundancy": float(np.mean(shares)),
        "redundant_rows": float(np.mean([s > 0 for s in shares])),
        "mean_path_columns": float(np.mean([len(e.path) for e in explanations])),
        "mean_smallest_axp": float(np.mean([len(e.smallest_axp) for e in explanations])),
    }
