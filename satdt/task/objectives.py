"""The objectives a tree search minimises, each knowing its value, its bounds and its verb.

An :class:`Objective` is one row of :data:`OBJECTIVES`: the estimators check ``objective=``
against it, the searches compute a tree's value and the bound a refuted depth gives from it,
the command line picks it from the command and its flag (``satdt infer`` asks for the
minimum depth, ``satdt infer --size`` for the minimum size, ``satdt fit`` for the fewest
errors), and the summaries and pictures name its unit from it. A new objective is one row
here, its searches in the table of searches (:mod:`satdt.search.registry`) and its command
line flag (:mod:`satdt.cli.parser`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CONSISTENCY, ERROR = "consistency", "error"


def _depth(tree: Any) -> int:
    return tree.depth


def _nodes(tree: Any) -> int:
    return tree.n_nodes


@dataclass(frozen=True)
class Objective:
    """What a search minimises.

    Attributes
    ----------
    name : str
        The value of ``objective=``.
    kind : str
        ``"consistency"`` (every training row classified correctly; the value is a measure of
        the tree) or ``"error"`` (weighted errors, plus a leaf penalty per leaf).
    verb : str
        The command line that asks for it.
    unit : str
        What its values count, for summaries and pictures.
    measure : callable or None
        A consistency objective's value of a tree (its depth, its nodes).
    """

    name: str
    kind: str
    verb: str
    unit: str
    measure: Any = None

    @property
    def consistency(self) -> bool:
        """Whether every training row must be classified correctly."""
        return self.kind == CONSISTENCY

    def value_of(self, tree: Any, error: float, leaf_penalty: float = 0.0) -> float:
        """The objective value of a model whose (weighted) training error is ``error``
        (the error objective adds ``leaf_penalty``, in units of the weights, per leaf)."""
        if self.measure is not None:
            return self.measure(tree)
        return error + leaf_penalty * tree.n_leaves if leaf_penalty else error

    def at_least(self, depth: int) -> int:
        """The least value of a consistent tree of depth at least ``depth``: its depth, or
        (size) ``2 * depth + 1`` nodes, a tree of depth d having at least d + 1 leaves."""
        if self.measure is _depth:
            return depth
        if self.measure is _nodes:
            return 2 * depth + 1
        raise ValueError(f"objective {self.name!r} has no bound from the depth")


OBJECTIVES: dict[str, Objective] = {
    o.name: o
    for o in (
        # the shallowest tree that classifies every row
        Objective("depth", CONSISTENCY, "satdt infer", "depth", _depth),
        # the consistent tree with the fewest nodes
        Objective("size", CONSISTENCY, "satdt infer --size", "nodes", _nodes),
        # the tree of depth <= max_depth with the fewest errors
        Objective("error", ERROR, "satdt fit", "training error"),
    )
}
