"""Step 1 of Florio et al. (AAAI 2023): a multi-start construction heuristic for decision diagrams.

The diagram is grown top-down, layer by layer, in a fixed skeleton (``widths[l]`` nodes in
layer ``l``, the root alone in layer 0). Each node takes the univariate split of largest
information gain over the rows reaching it. The two flows leaving each node of layer ``l``
are then routed: a flow whose errors, sent to its majority class, cost no more than one node
does in objective (18) goes to that class terminal (a long arc); the others are greedily
merged, pair by pair, down to ``widths[l + 1]`` groups, each group becoming a node of layer
``l + 1``. The nodes of the last layer split too (they are internal nodes of the skeleton, as
in the MILP), and the flows leaving them go to the terminal of their majority class. The
construction restarts with a random ``feature_fraction`` of the features at each split while
time remains. Every diagram is pruned bottom-up: a node whose successors are both terminals
is replaced by its majority terminal when objective (18) does not get worse (the paper prunes
when it improves; on a tie the smaller diagram is kept). The best by objective (18) is kept.

Greedy merging (the paper's "merge the pair of flows that least decreases the information
gain"): the entropy mass of a flow with class weights ``c`` is ``M(c) = W H(c / W)`` with
``W = sum(c)``. Merging groups ``A`` and ``B`` loses ``M(A + B) - M(A) - M(B) >= 0`` of
information gain; sending ``A`` to its majority terminal gives up all the gain still to be
made on it, ``M(A)``. The cheapest of these moves is applied until the flows fit the layer.
Two flows leaving the same node are never merged (that node would be useless and the
diagram could not keep its layers), so such a pair is resolved by sending a flow to its
terminal.

Everything works on features min-max scaled to [0, 1] (as the MILP does); thresholds are
midpoints between consecutive distinct values of a feature over all rows, so no row lies on a
threshold and ``x <= t`` splits the rows reaching a node exactly as the chosen split does.
The two sides of a split are at least ``min_gap`` apart (the MILP's ``epsilon``), so the
diagram is a valid MILP start.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import SatdtError, TimeUp
from ..models.diagram import Diagram
from ..models.diagram_checks import SPLITS, ErrorObjective
from ..models.diagram_checks import objective as objective_18

# Largest number of floats a split evaluation holds at once (rows x features x classes).
_CHUNK_FLOATS = 2_000_000


def _xlogx(c: np.ndarray) -> np.ndarray:
    positive = c > 0
    return np.where(positive, c * np.log(np.where(positive, c, 1.0)), 0.0)


def _mass(counts: np.ndarray) -> np.ndarray:
    """Entropy mass ``W H(c / W)`` of class-weight vectors along the last axis (nats)."""
    return _xlogx(counts.sum(axis=-1)) - _xlogx(counts).sum(axis=-1)


def _best_split(
    X: np.ndarray, Yw: np.ndarray, rows: np.ndarray, features: np.ndarray, min_gap: float
) -> tuple[int, float] | None:
    """The univariate split of ``rows`` of largest information gain over ``features``.

    ``(feature, value)``: rows with ``x[feature] <= value`` go low, ``value`` being one of
    theirs; ``None`` when every candidate feature is constant on the rows. Ties go to the
    first feature in ``features``, then to the smallest value. Only values at least
    ``min_gap`` below the next value of the rows are candidates.
    """
    m = len(rows)
    if m < 2:
        return None
    Y = Yw[rows]
    total = Y.sum(axis=0)
    chunk = max(1, _CHUNK_FLOATS // (m * Y.shape[1]))
    best_cost, best = np.inf, None
    for start in range(0, len(features), chunk):
        block = features[start : start + chunk]
        values = X[np.ix_(rows, block)]
        order = np.argsort(values, axis=0, kind="stable")
        ordered = np.take_along_axis(values, order, axis=0)
        left = np.cumsum(Y[order], axis=0)[:-1]  # (m - 1, features, classes)
        cost = _mass(left) + _mass(total - left)
        gap = ordered[1:] - ordered[:-1]
        cost = np.where((gap > 0) & (gap >= min_gap), cost, np.inf).T  # (features, m - 1)
        flat = int(np.argmin(cost))
        j, p = divmod(flat, m - 1)
        if cost[j, p] < best_cost:
            best_cost, best = cost[j, p], (int(block[j]), float(ordered[p, j]))
    return best


@dataclass
class _Flow:
    """Rows leaving ``parent`` by ``side`` (0: low, 1: high), with their class weights."""

    parent: int
    side: int
    rows: np.ndarray
    counts: np.ndarray


@dataclass
class _Group:
    """Flows merged into one node of the next layer."""

    flows: list[_Flow]
    counts: np.ndarray
    parents: set[int] = field(default_factory=set)


def _merge(flows: list[_Flow], width: int) -> tuple[list[_Group], list[_Flow]]:
    """Greedily merge flows into at most ``width`` groups; the groups and the flows retired."""
    groups = [_Group([f], f.counts, {f.parent}) for f in flows]
    retired: list[_Flow] = []
    while len(groups) > width:
        mass = [float(_mass(g.counts)) for g in groups]
        # (loss, kind, a, b): kind 0 merges groups a and b, kind 1 retires group a
        best = min((mass[a], 1, a, a) for a in range(len(groups)))
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                if groups[a].parents.isdisjoint(groups[b].parents):
                    both = groups[a].counts + groups[b].counts
                    best = min(best, (float(_mass(both)) - mass[a] - mass[b], 0, a, b))
        _, kind, a, b = best
        if kind == 1:
            retired.extend(groups.pop(a).flows)
        else:
            gb = groups.pop(b)
            ga = groups[a]
            groups[a] = _Group(ga.flows + gb.flows, ga.counts + gb.counts, ga.parents | gb.parents)
    return groups, retired


class _Builder:
    """One top-down construction in the skeleton; nodes in arrays, then pruned."""

    def __init__(
        self, X: np.ndarray, Yw: np.ndarray, widths: Sequence[int], alpha: float, min_gap: float
    ):
        self.X, self.Yw, self.widths, self.min_gap = X, Yw, list(widths), min_gap
        self.values = [np.unique(column) for column in X.T]
        size = sum(widths)
        total = float(Yw.sum())
        # the error weight one node is worth in objective (18)
        self.node_weight = alpha * total / (size - 1) if size > 1 else 0.0
        self.layer: list[int] = []
        self.feature: list[int] = []
        self.threshold: list[float] = []
        self.succ: list[list[int]] = []
        self.side_counts: list[np.ndarray] = []

    def _midpoint(self, feature: int, value: float) -> float:
        """Halfway from ``value`` to the next distinct value of the feature in all of ``X``
        (``value`` itself if rounding reaches the next): no row lies on the threshold."""
        values = self.values[feature]
        after = values[np.searchsorted(values, value, side="right")]
        t = value + (after - value) / 2
        return float(t if value <= t < after else value)

    def _point(self, flows: list[_Flow], target: int) -> None:
        for f in flows:
            self.succ[f.parent][f.side] = target

    def build(
        self,
        rng: np.random.Generator | None,
        n_sampled: int,
        stop: float | None,
    ) -> int:
        """Grow the diagram; the root's successor code (0, or a terminal when nothing splits)."""
        d = self.X.shape[1]
        everything = np.arange(d)
        root_rows = np.flatnonzero(self.Yw.sum(axis=1) > 0)
        groups = [_Group([], self.Yw[root_rows].sum(axis=0))]
        group_rows = [root_rows]
        root = -1 - int(np.argmax(groups[0].counts))
        for level in range(len(self.widths)):
            flows: list[_Flow] = []
            for group, rows in zip(groups, group_rows, strict=True):
                if stop is not None and time.perf_counter() >= stop:
                    raise TimeUp
                features = everything
                if rng is not None and n_sampled < d:
                    features = np.sort(rng.choice(d, n_sampled, replace=False))
                split = _best_split(self.X, self.Yw, rows, features, self.min_gap)
                if split is None and len(features) < d:
                    split = _best_split(self.X, self.Yw, rows, everything, self.min_gap)
                if split is None:  # rows too alike to split: the group ends at its majority class
                    self._point(group.flows, -1 - int(np.argmax(group.counts)))
                    continue
                node = len(self.layer)
                threshold = self._midpoint(*split)
                if node == 0:
                    root = 0
                self._point(group.flows, node)
                self.layer.append(level)
                self.feature.append(split[0])
                self.threshold.append(threshold)
                self.succ.append([0, 0])
                go_low = self.X[rows, split[0]] <= threshold
                sides = []
                for side, part in enumerate((rows[go_low], rows[~go_low])):
                    counts = self.Yw[part].sum(axis=0)
                    sides.append(counts)
                    flows.append(_Flow(node, side, part, counts))
                self.side_counts.append(np.array(sides))
            last = level == len(self.widths) - 1
            routed: list[_Flow] = []
            for f in flows:
                error = float(f.counts.sum() - f.counts.max())
                if last or error <= self.node_weight:
                    self._point([f], -1 - int(np.argmax(f.counts)))
                else:
                    routed.append(f)
            if last or not routed:
                break
            groups, retired = _merge(routed, self.widths[level + 1])
            for f in retired:
                self._point([f], -1 - int(np.argmax(f.counts)))
            group_rows = [np.concatenate([f.rows for f in g.flows]) for g in groups]
        return root

    def prune(self) -> np.ndarray:
        """Bottom-up, replace a node whose successors are terminals by its majority terminal
        when objective (18) does not get worse; the mask of the nodes kept."""
        n = len(self.layer)
        kept = np.ones(n, dtype=bool)
        for i in range(n - 1, -1, -1):  # successors come later: they are final already
            lo, hi = self.succ[i]
            if lo >= 0 or hi >= 0:
                continue
            sides = self.side_counts[i]
            now = sum(sides[s].sum() - sides[s][-1 - t] for s, t in enumerate((lo, hi)))
            counts = sides.sum(axis=0)
            after = counts.sum() - counts.max()
            saving = self.node_weight if i > 0 else 0.0
            if after <= now + saving + 1e-12 * max(1.0, counts.sum()):
                kept[i] = False
                terminal = -1 - int(np.argmax(counts))
                for j in range(i):
                    for side in (0, 1):
                        if self.succ[j][side] == i:
                            self.succ[j][side] = terminal
        return kept

    def diagram(self, root: int, n_classes: int) -> Diagram:
        """The pruned diagram, nodes of each layer sorted by decreasing in-degree."""
        d = self.X.shape[1]
        kept = self.prune() if root == 0 else None
        if kept is None or not kept[0]:
            counts = self.Yw.sum(axis=0)
            return Diagram.single_terminal(
                int(np.argmax(counts)), n_features=d, classes=np.arange(n_classes)
            )
        succ = np.array(self.succ, dtype=np.int64)
        layer = np.array(self.layer, dtype=np.int64)
        nodes = np.flatnonzero(kept)
        indegree = np.bincount(succ[nodes][succ[nodes] >= 0], minlength=len(layer))
        # MILP constraint (12) wants in-degrees non-increasing along a layer
        nodes = nodes[np.lexsort((nodes, -indegree[nodes], layer[nodes]))]
        index = np.zeros(len(layer), dtype=np.int64)
        index[nodes] = np.arange(len(nodes))
        new = np.where(succ[nodes] >= 0, index[np.maximum(succ[nodes], 0)], succ[nodes])
        return Diagram(
            layer[nodes],
            np.array(self.feature)[nodes],
            np.array(self.threshold)[nodes],
            new[:, 0],
            new[:, 1],
            n_features=d,
            classes=np.arange(n_classes),
        )


@dataclass(frozen=True)
class ConstructOptions:
    """The knobs of the Step-1 construction (:func:`construct`).

    Parameters
    ----------
    split : {"univariate", "multivariate"}
        The splits of the MILP the diagram starts. The construction makes univariate splits
        in both cases: an axis-parallel hyperplane is a valid multivariate split, a fine start.
    time_budget : float
        Seconds of restarts after the first construction (the paper repeats for 60 s).
    feature_fraction : float
        Share of the features considered at each split in the restarts (the first
        construction sees them all); in (0, 1].
    seed : int
        Seed of the feature sampling; the result is deterministic for a seed when
        ``max_starts`` ends the restarts before the time does.
    max_starts : int, optional
        At most this many constructions (``None``: only time limits them).
    min_gap : float
        Split only between values at least this far apart, so that the diagram is a valid
        start for the MILP whose constraint (13) uses ``epsilon = min_gap`` (0: any values).
    """

    split: str = "univariate"
    time_budget: float = 10.0
    feature_fraction: float = 0.6
    seed: int = 0
    max_starts: int | None = 200
    min_gap: float = 1e-4


_DEFAULT_OPTIONS = ConstructOptions()


def _check(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    widths: Sequence[int],
    objective: ErrorObjective,
    options: ConstructOptions,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    alpha, sample_weight = objective.alpha, objective.sample_weight
    split, feature_fraction, min_gap = options.split, options.feature_fraction, options.min_gap
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or y.shape != (len(X),):
        raise SatdtError(
            f"X must be 2-D and y hold one label per row; got X of shape {X.shape} and y of "
            f"shape {y.shape}"
        )
    if (
        n_classes < 1
        or not np.all(np.mod(y, 1) == 0)
        or (len(y) and (y.min() < 0 or y.max() >= n_classes))
    ):
        raise SatdtError(
            f"labels must be class indices in [0, n_classes={n_classes}); encode them first"
        )
    if not len(widths) or widths[0] != 1 or min(widths) < 1:
        raise SatdtError(
            f"widths must list at least one layer, the first of width 1 and none below 1; got "
            f"{list(widths)}"
        )
    if not alpha >= 0:
        raise SatdtError(f"alpha must be at least 0; got {alpha}")
    if split not in SPLITS:
        raise SatdtError(f"split must be one of {SPLITS}; got {split!r}")
    if not min_gap >= 0:
        raise SatdtError(f"min_gap must be at least 0; got {min_gap}")
    if not 0 < feature_fraction <= 1:
        raise SatdtError(f"feature_fraction must be in (0, 1]; got {feature_fraction}")
    weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    if weight.shape != (len(y),) or np.any(weight < 0) or not np.all(np.isfinite(weight)):
        raise SatdtError(
            "sample_weight must hold one finite, non-negative weight per row; got shape "
            f"{weight.shape}"
        )
    return X, y.astype(np.int64), weight


def construct(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    widths: Sequence[int],
    objective: ErrorObjective,
    options: ConstructOptions = _DEFAULT_OPTIONS,
    *,
    deadline: float | None = None,
    on_improve: Callable[[Diagram, float], None] | None = None,
) -> Diagram:
    """A good diagram in the skeleton ``widths``, by objective (18): the MILP's warm start.

    Parameters
    ----------
    X
        ``(n, d)`` float features min-max scaled to [0, 1].
    y
        Class indices ``0 .. n_classes - 1``.
    n_classes
        Number of classes (terminals).
    widths
        The skeleton: ``widths[l]`` internal nodes at most in layer ``l``; ``widths[0] == 1``.
    objective
        Objective (18): ``alpha``, the weight of its node term, and the row weights
        (default 1).
    options
        The construction's splits, restarts, seed and minimum gap (:class:`ConstructOptions`).
    deadline
        ``time.perf_counter()`` value after which no construction starts or continues (the
        best diagram so far, at worst the majority class, is returned).
    on_improve
        Called with each new best diagram and its objective value.

    Returns
    -------
    Diagram
        At most ``widths[l]`` nodes in layer ``l``, the root in layer 0, arcs only to the next
        layer or to terminals, classes ``0 .. n_classes - 1``, thresholds in scaled units,
        counts of ``(X, y)`` recorded. A single terminal when no split pays for itself.
    """
    X, y, weight = _check(X, y, n_classes, widths, objective, options)
    alpha, max_starts, min_gap = objective.alpha, options.max_starts, options.min_gap
    started = time.perf_counter()
    budget_end = started + max(0.0, float(options.time_budget))
    restarts_end = budget_end if deadline is None else min(deadline, budget_end)
    Yw = np.zeros((len(y), n_classes))
    Yw[np.arange(len(y)), y] = weight
    d = X.shape[1]
    n_sampled = min(d, max(1, round(options.feature_fraction * d)))
    rng = np.random.default_rng(options.seed)

    def finish(diagram: Diagram) -> tuple[Diagram, float]:
        diagram = diagram.with_counts(X, y, weight)
        return diagram, objective_18(diagram, X, y, alpha, widths, weight)

    best, best_value = finish(
        Diagram.single_terminal(
            int(np.argmax(Yw.sum(axis=0))), n_features=d, classes=np.arange(n_classes)
        )
    )
    if on_improve is not None:
        on_improve(best, best_value)
    start = 0
    while max_starts is None or start < max_starts:
        stop = deadline if start == 0 else restarts_end
        if stop is not None and time.perf_counter() >= stop:
            break
        builder = _Builder(X, Yw, widths, alpha, min_gap)
        try:
            root = builder.build(rng if start > 0 else None, n_sampled, stop)
        except TimeUp:  # the time ran out during this construction
            break
        candidate, value = finish(builder.diagram(root, n_classes))
        if value < best_value:
            best, best_value = candidate, value
            if on_improve is not None:
                on_improve(best, best_value)
        start += 1
        if n_sampled == d or best_value == 0.0:  # restarts would repeat the first construction
            break
    return best
