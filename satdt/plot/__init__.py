"""Pictures with matplotlib: anytime curves, trees and diagrams, the SAT loop, the Pareto front.

:func:`plot_history` draws the incumbent's objective value over time; :func:`plot_tree` and
:func:`save_tree` a :class:`~satdt.Tree` or a :class:`~satdt.Diagram` (no Graphviz);
:func:`model_svg` the inline SVG a notebook shows for a model; :func:`plot_explanation` and :func:`save_explanation` a model with one
row's explanation marked on it (:func:`satdt.explain`); :func:`plot_loop` the SAT calls of
the counterexample-guided loop; :func:`plot_pareto` a depth/size front.

matplotlib is an optional dependency (the ``plot`` extra), imported only inside these functions,
so ``import satdt`` never pays for it. :func:`check_plot_target` lets a caller (the CLI's
``--plot``, ``--draw``, ``--draw-loop``) fail before a long search rather than after it.
"""

from ._mpl import check_plot_target
from .anytime import plot_history
from .draw import REPR_MAX_DEPTH, model_svg, plot_tree, save_tree
from .explain import plot_explanation, save_explanation
from .loop import plot_loop
from .pareto import plot_pareto

__all__ = [
    "REPR_MAX_DEPTH",
    "check_plot_target",
    "model_svg",
    "plot_explanation",
    "plot_history",
    "plot_loop",
    "plot_pareto",
    "plot_tree",
    "save_explanation",
    "save_tree",
]
