"""The estimators: scikit-learn compatible front ends over the tables of searches.

:class:`OptimalTreeClassifier` (:mod:`satdt.estimators.tree`) runs the tree searches of
:mod:`satdt.search.registry`, :class:`OptimalDiagramClassifier` (:mod:`satdt.estimators.diagram`) the
diagram routes of :mod:`satdt.search.diagrams`; both are a :class:`SatdtEstimator`
(:mod:`satdt.estimators.base`). Names are imported on first use, so importing this package is
cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from .base import SatdtEstimator
    from .diagram import OptimalDiagramClassifier
    from .tree import OptimalTreeClassifier, ParetoFront, pareto_front

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "SatdtEstimator": "base",
        "OptimalTreeClassifier": "tree",
        "ParetoFront": "tree",
        "pareto_front": "tree",
        "OptimalDiagramClassifier": "diagram",
    },
)

__all__ = [
    "OptimalDiagramClassifier",
    "OptimalTreeClassifier",
    "ParetoFront",
    "SatdtEstimator",
    "pareto_front",
]
