"""What a diagram is held to: its arrays' structural rules, the fit of its layers to a
skeleton, objective (18) of Florio et al. and the paper's extensions (parsimony, (19), (20)).

:class:`~satdt.Diagram` checks its arrays here when it is built; every diagram route
(the MILP, SAT and MaxSAT, the best-tree start) scores and checks its results here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import DataError, ModelError
from .base import LEAF

if TYPE_CHECKING:
    from .diagram import Diagram

#: A node tests one feature against a threshold, or a hyperplane of all of them.
SPLITS = ("univariate", "multivariate")
#: The rates a fairness constraint compares (see :class:`Fairness`).
FAIRNESS_KINDS = ("parity", "false_positive", "false_negative")


class DiagramError(ModelError):
    """A diagram's arrays break a structural rule, or data does not fit the diagram."""


#: The highest layer number: a diagram's widths (one count per layer, empty layers included)
#: stay small; no search learns a diagram within orders of magnitude of it.
MAX_LAYER = 2**16


# ---------------------------------------------------------------------------- structural rules
def check_arrays(diagram: Diagram) -> None:
    """Raise :class:`DiagramError` for the first structural rule the diagram's arrays break."""
    _check_lengths(diagram)
    _check_layers(diagram)
    _check_tests(diagram)
    _check_successors(diagram)
    _check_coef(diagram)
    _check_annotations(diagram)


def _check_lengths(diagram: Diagram) -> None:
    """One entry per internal node in every per-node array; classes; ``n_features``."""
    n, n_classes, d = len(diagram.layer), len(diagram.classes), diagram.n_features
    for name in ("feature", "threshold", "low", "high"):
        if len(getattr(diagram, name)) != n:
            raise DiagramError(
                f"every per-node array must have one entry per internal node: layer has {n}, "
                f"{name} has {len(getattr(diagram, name))}; pass arrays of equal length"
            )
    if diagram.classes.ndim != 1 or n_classes < 1:
        raise DiagramError(
            f"classes must be a non-empty list of labels; got {diagram.classes.tolist()!r}"
        )
    if d < 0:
        raise DiagramError(f"n_features must be at least 0; got {d}")


def _check_layers(diagram: Diagram) -> None:
    """The root, and nodes sorted by layer with only the root in layer 0."""
    n, n_classes = len(diagram.layer), len(diagram.classes)
    if n == 0:
        if not -n_classes <= diagram.root < 0:
            raise DiagramError(
                "a diagram without internal nodes is a single terminal: root must be -1 - k "
                f"for a class index k in [0, {n_classes}); got root={diagram.root}; use "
                "Diagram.single_terminal(k, ...)"
            )
    elif diagram.root != 0:
        raise DiagramError(
            f"a diagram with internal nodes starts at node 0; got root={diagram.root}; "
            "leave root unset"
        )
    if n and diagram.layer[0] != 0:
        raise DiagramError(
            f"node 0 is the root and must be in layer 0; got layer {diagram.layer[0]}; "
            "number layers from 0"
        )
    if n > 1 and np.any(diagram.layer[1:] < 1):
        i = 1 + int(np.argmax(diagram.layer[1:] < 1))
        raise DiagramError(
            f"only the root is in layer 0; node {i} has layer {diagram.layer[i]}; put it in a "
            "later layer (layer 0 has width 1)"
        )
    if n > 1 and np.any(np.diff(diagram.layer) < 0):
        i = 1 + int(np.argmax(np.diff(diagram.layer) < 0))
        raise DiagramError(
            f"nodes must be sorted by layer; node {i} (layer {diagram.layer[i]}) follows node "
            f"{i - 1} (layer {diagram.layer[i - 1]}); sort the nodes by layer"
        )
    if n and diagram.layer[-1] > MAX_LAYER:
        raise DiagramError(
            f"node {n - 1} is in layer {diagram.layer[-1]}; layers are numbered up to "
            f"{MAX_LAYER} (a diagram's widths list every layer)"
        )


def _check_tests(diagram: Diagram) -> None:
    """Tested features within the design matrix (or -1), finite thresholds."""
    d = diagram.n_features
    bad = np.flatnonzero((diagram.feature < LEAF) | (diagram.feature >= d))
    if len(bad):
        i = int(bad[0])
        raise DiagramError(
            f"node {i} tests feature {diagram.feature[i]}, outside [0, {d}) (n_features={d}); "
            "use a column index of the design matrix, or -1 for a multivariate node"
        )
    bad = np.flatnonzero(~np.isfinite(diagram.threshold))
    if len(bad):
        i = int(bad[0])
        raise DiagramError(
            f"node {i} has threshold {diagram.threshold[i]}; thresholds must be finite numbers"
        )


def _check_successors(diagram: Diagram) -> None:
    """Successors are internal nodes of a later layer or class terminals."""
    n, n_classes, layer = len(diagram.layer), len(diagram.classes), diagram.layer
    for side in ("low", "high"):
        succ = getattr(diagram, side)
        inside = np.clip(succ, 0, max(n - 1, 0))
        later = (succ < 0) | ((succ < n) & (layer[inside] > layer))
        bad = np.flatnonzero(~later | (succ < -n_classes))
        if not len(bad):
            continue
        i, s = int(bad[0]), int(succ[bad[0]])
        if s >= 0:
            where = f"node {s} of layer {layer[s]}" if s < n else f"node {s}"
            raise DiagramError(
                f"node {i} (layer {layer[i]}) has {side} successor {where}: "
                f"successors must be internal nodes of a later layer (indices below {n}) "
                "or class terminals -1 - k; fix the arc or the layers"
            )
        raise DiagramError(
            f"node {i} has {side} successor {s}, the terminal of class index "
            f"{-1 - s}, but there are {n_classes} classes; terminals are -1 - k for "
            f"k in [0, {n_classes})"
        )


def _check_coef(diagram: Diagram) -> None:
    """The hyperplanes: present when a node is multivariate, of the right shape, finite."""
    n, d = len(diagram.layer), diagram.n_features
    if diagram.coef is None and np.any(diagram.feature == LEAF):
        raise DiagramError(
            "a multivariate node (feature -1) needs its hyperplane: pass coef, an array of "
            f"shape (n_nodes, n_features) = ({n}, {d}); got coef=None"
        )
    if diagram.coef is not None:
        if diagram.coef.shape != (n, d):
            raise DiagramError(
                f"coef must have shape (n_nodes, n_features) = ({n}, {d}); got {diagram.coef.shape}"
            )
        if not np.all(np.isfinite(diagram.coef)):
            raise DiagramError("coef holds a non-finite value; hyperplanes must be finite")


def _check_annotations(diagram: Diagram) -> None:
    """Feature names, training counts and indicator columns, when given."""
    n, n_classes, d = len(diagram.layer), len(diagram.classes), diagram.n_features
    if diagram.feature_names is not None and len(diagram.feature_names) != d:
        raise DiagramError(
            f"feature_names must name the {d} features; got {len(diagram.feature_names)} "
            "names; pass one name per design column"
        )
    for name, shape in (("counts", (n, n_classes)), ("terminal_counts", (n_classes,) * 2)):
        value = getattr(diagram, name)
        if value is not None and value.shape != shape:
            raise DiagramError(
                f"{name} must have shape {shape}; got {value.shape}; pass None when unknown"
            )
        if value is not None and (not np.all(np.isfinite(value)) or np.any(value < 0)):
            raise DiagramError(f"{name} are training weights: finite numbers >= 0")
    if any(not 0 <= i < d for i in diagram.indicator):
        raise DiagramError(
            f"indicator columns must be in [0, {d}); got {sorted(diagram.indicator)}"
        )


# ---------------------------------------------------------------------------- what every route shares
def check_widths(widths: Sequence[int]) -> tuple[int, ...]:
    """A skeleton's layer widths as a tuple of positive integers, the first 1 (the root)."""
    if isinstance(widths, str | bytes) or not hasattr(widths, "__len__") or len(widths) == 0:
        raise DataError(
            f"widths must be a sequence of layer widths, got {widths!r}; e.g. (1, 2, 4, 4)"
        )
    out = []
    for w in widths:
        if isinstance(w, bool) or not isinstance(w, int | np.integer) or w < 1:
            raise DataError(
                f"widths must be positive integers starting with 1 (the root), got {widths!r}; "
                "e.g. (1, 2, 4, 4)"
            )
        out.append(int(w))
    if out[0] != 1:
        raise DataError(
            f"widths must start with 1 (the root's layer), got {widths!r}; e.g. (1, 2, 4, 4)"
        )
    return tuple(out)


def fits(diagram: Diagram, widths: Sequence[int]) -> bool:
    """Whether the diagram's layers fit the skeleton: no more layers, no wider ones."""
    return len(diagram.widths) <= len(widths) and all(
        w <= v for w, v in zip(diagram.widths, widths, strict=False)
    )


def objective(
    diagram: Diagram,
    X: np.ndarray,
    y: np.ndarray,
    alpha: float,
    widths: Sequence[int],
    sample_weight: np.ndarray | None = None,
) -> float:
    """Objective (18) of Florio et al.: error rate plus ``alpha`` times the node share.

    ``(weight of misclassified rows) / (total weight) + alpha * (n_splits - 1) / (|V_I| - 1)``
    where ``n_splits`` counts the diagram's reachable internal nodes (the root is always active
    in the MILP, so it is not counted; a single terminal counts 0) and ``|V_I| = sum(widths)``
    is the skeleton's number of internal nodes (the node term is 0 when ``|V_I| = 1``). Binary
    features work as they are (threshold 0.5: low = feature false).
    """
    y = np.asarray(y, dtype=np.int64)
    weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    total = float(weight.sum())
    wrong = float(weight[diagram.terminal(X) != y].sum())
    error = wrong / total if total > 0 else 0.0
    size = int(sum(widths))
    nodes = max(diagram.n_splits - 1, 0)
    return error + (alpha * nodes / (size - 1) if size > 1 else 0.0)


@dataclass(frozen=True)
class Fairness:
    """A fairness constraint between two groups of rows, after (19) of the paper.

    Parameters
    ----------
    kind : {"parity", "false_positive", "false_negative"}
        Which rate is compared: the rate of rows predicted ``positive`` (demographic parity, (19)),
        the false-positive rate (rows of another class predicted ``positive``: predictive equality)
        or the false-negative rate (rows of class ``positive`` predicted otherwise: equal opportunity).
    group1, group2 : array of bool, shape (n_samples,)
        The two groups (not necessarily disjoint), as masks over the training rows.
    positive : int
        The desirable class (index in ``0..n_classes-1``).
    ratio : float
        The ratio ``xi`` in (0, 1]; 0.8 is the four-fifths rule.
    both_ways : bool
        With True (the default) ``rate(g1) >= ratio * rate(g2)`` *and* ``rate(g2) >= ratio * rate(g1)``,
        so the smaller rate is at least ``ratio`` times the larger (the four-fifths rule); with False
        only the first inequality, which is (19) itself.

    Notes
    -----
    The paper's (19) compares counts ``sum_{i in g1} w_iP >= xi sum_{i in g2} w_iP``; here each side
    is divided by its group's (weighted) size, so rates are compared; for groups of equal size this
    is (19). Counts are weighted by ``sample_weight``.
    """

    kind: str
    group1: np.ndarray
    group2: np.ndarray
    positive: int = 1
    ratio: float = 0.8
    both_ways: bool = True

    def rates(
        self, predicted: np.ndarray, y: np.ndarray, weight: np.ndarray
    ) -> tuple[float, float]:
        """The compared rate of each group for the class indices ``predicted`` (0 for an empty group)."""
        hit = predicted == self.positive
        if self.kind == "parity":
            counted, base = hit, np.ones(len(y), bool)
        elif self.kind == "false_positive":
            counted, base = hit & (y != self.positive), y != self.positive
        else:
            counted, base = ~hit & (y == self.positive), y == self.positive
        out = []
        for group in (self.group1, self.group2):
            total = float(weight[group & base].sum())
            out.append(float(weight[group & counted].sum()) / total if total > 0 else 0.0)
        return out[0], out[1]

    def holds(self, predicted: np.ndarray, y: np.ndarray, weight: np.ndarray) -> bool:
        """Whether predictions ``predicted`` satisfy the constraint (a tolerance of 1e-9)."""
        r1, r2 = self.rates(predicted, y, weight)
        ok = r1 >= self.ratio * r2 - 1e-9
        return ok and (not self.both_ways or r2 >= self.ratio * r1 - 1e-9)


@dataclass(frozen=True, eq=False)
class ErrorObjective:
    """Objective (18) of Florio et al. as a search minimises it (see :func:`objective`).

    Parameters
    ----------
    alpha : float
        Weight of the node share: weighted error rate plus ``alpha * (active non-root nodes) /
        (internal nodes - 1)``; alpha >= 0 (0.01 by default, as for the MILP).
    sample_weight : array of float, shape (n_samples,), optional
        Non-negative row weights (None: 1 each); checked by the search that receives them.
    """

    alpha: float = 0.01
    sample_weight: np.ndarray | None = None


@dataclass(frozen=True)
class Extensions:
    """The paper's extensions of objective (18), each None when unused.

    Parameters
    ----------
    max_splits : int, optional
        Parsimony: at most this many active internal nodes, the root included.
    min_flow : float, optional
        Stability (20): every active internal node is reached by a weight of at least
        ``min_flow``.
    fairness : Fairness, optional
        Fairness (19) or a variant (see :class:`Fairness`), its groups masks over the rows.
    """

    max_splits: int | None = None
    min_flow: float | None = None
    fairness: Fairness | None = None

    def as_dict(self) -> dict[str, int | float | Fairness | None]:
        """The three by name (the keywords of :func:`violation`)."""
        return {"max_splits": self.max_splits, "min_flow": self.min_flow, "fairness": self.fairness}

    def used(self) -> list[str]:
        """The names of the extensions that are set."""
        return [name for name, value in self.as_dict().items() if value is not None]


def violation(
    diagram: Diagram,
    X: np.ndarray,
    y: np.ndarray,
    weight: np.ndarray,
    *,
    max_splits: int | None = None,
    min_flow: float | None = None,
    fairness: Fairness | None = None,
) -> str | None:
    """Which extension of the paper the diagram breaks on these rows (None: it meets them all).

    ``max_splits`` bounds the internal nodes (root included; parsimony), ``min_flow`` the weight
    through every internal node ((20): stability), ``fairness`` is (19) or a variant.
    """
    if max_splits is not None and diagram.n_splits > max_splits:
        return f"{diagram.n_splits} decision nodes, more than max_splits={max_splits}"
    if min_flow is not None and diagram.n_splits:
        path = diagram.decision_path(X)
        flow = np.zeros(diagram.n_splits)
        for step in range(path.shape[1]):
            inner = path[:, step] >= 0
            np.add.at(flow, path[inner, step], weight[inner])
        reached = flow[diagram.reachable()]
        if len(reached) and reached.min() < min_flow - 1e-9:
            return f"a node carries a weight of {reached.min():g}, below min_flow={min_flow:g}"
    if fairness is not None and not fairness.holds(diagram.terminal(X), np.asarray(y), weight):
        r1, r2 = fairness.rates(diagram.terminal(X), np.asarray(y), weight)
        return (
            f"the groups' {fairness.kind} rates {r1:.4g} and {r2:.4g} break ratio {fairness.ratio}"
        )
    return None
