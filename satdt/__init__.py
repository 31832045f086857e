"""satdt: optimal decision trees with logic.

Minimum-depth and minimum-size trees that classify every training row correctly (incremental
SAT, PySAT), and minimum-error trees of bounded depth (anytime dynamic programming, Numba),
behind one scikit-learn compatible estimator, :class:`OptimalTreeClassifier`; the methods
are listed in one table of searches, :data:`satdt.search.registry.METHODS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .core.lazy import lazy_exports
from .models import display

if TYPE_CHECKING:
    from .core.errors import (
        ContradictionError,
        DataError,
        InfeasibleError,
        ModelError,
        NotFittedError,
        NotProvenWarning,
        ParameterError,
        SatdtError,
    )
    from .data import Dataset, read_csv
    from .estimators import OptimalDiagramClassifier, OptimalTreeClassifier, pareto_front
    from .estimators.born_again import born_again
    from .estimators.canonical import minimum_depth_trees
    from .estimators.rashomon import minimum_size_trees, rashomon_set
    from .explanations.explainer import explain
    from .models import Diagram, Tree
    from .models.forest_io import read_forest
    from .prepare.binarize import Binarizer
    from .task.result import SearchResult

__version__ = "0.2.0"

# The public names and their modules, imported on first use: ``import satdt.cli`` stays light,
# so the command line installs its Ctrl-C handling before NumPy and PySAT load.
_PUBLIC = {
    "Binarizer": "prepare.binarize",
    "read_csv": "data",
    "Dataset": "data",
    "Diagram": "models",
    "OptimalDiagramClassifier": "estimators",
    "SatdtError": "core.errors",
    "ContradictionError": "core.errors",
    "DataError": "core.errors",
    "InfeasibleError": "core.errors",
    "ModelError": "core.errors",
    "NotFittedError": "core.errors",
    "NotProvenWarning": "core.errors",
    "explain": "explanations.explainer",
    "ParameterError": "core.errors",
    "OptimalTreeClassifier": "estimators",
    "pareto_front": "estimators",
    "SearchResult": "task.result",
    "rashomon_set": "estimators.rashomon",
    "minimum_size_trees": "estimators.rashomon",
    "minimum_depth_trees": "estimators.canonical",
    "Tree": "models",
    "born_again": "estimators.born_again",
    "read_forest": "models.forest_io",
}


def _model_svg(model: Any) -> str | None:
    """A notebook's picture of a model: :func:`satdt.plot.model_svg`, imported when drawn."""
    from .plot import model_svg

    return model_svg(model)


# The models import no plotting code; the package root, which knows both, gives them their
# picture (satdt.models.display is a few lines of the standard library: importing it is cheap).
display.set_svg(_model_svg)


__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC)


__all__ = [
    "Binarizer",
    "ContradictionError",
    "DataError",
    "Dataset",
    "Diagram",
    "InfeasibleError",
    "ModelError",
    "NotFittedError",
    "NotProvenWarning",
    "OptimalDiagramClassifier",
    "OptimalTreeClassifier",
    "ParameterError",
    "SatdtError",
    "SearchResult",
    "Tree",
    "__version__",
    "born_again",
    "explain",
    "minimum_depth_trees",
    "minimum_size_trees",
    "pareto_front",
    "rashomon_set",
    "read_csv",
    "read_forest",
    "warmup",
]


def warmup() -> list:
    """Compile (or load from Numba's on-disk cache) every Numba kernel now, not at a first fit.

    For Docker images, CI and cluster bootstrap (``satdt warmup`` on the command line).

    Returns
    -------
    list of satdt.dp.kernels.Compiled
        What was done per kernel group: compiled or loaded, the seconds, the compile seconds
        of each kernel.
    """
    from .search.registry import warmup as warmup_methods

    return warmup_methods()
