"""The docs' page of the estimators' parameters, from their declarations.

The estimators' signatures, docstrings and checks and the command line's flags come from the
same tables (:mod:`satdt.core.params`, :data:`satdt.search.params.TREE_PARAMS`, each
method's own parameters and :class:`~satdt.estimators.diagram.OptimalDiagramClassifier`'s):
this module writes them as the site's Parameters page when the site is built.
"""

from __future__ import annotations

from ..core.params import parameters_table
from ..search.params import TREE_PARAMS
from ..search.registry import METHODS, method_params
from .diagram import OptimalDiagramClassifier


def parameter_tables() -> str:
    """The docs' page of parameters (``docs/guide/parameters.md``, written when the site is
    built): the tree estimator's, the tree methods' own, the diagram estimator's."""
    owners = {
        name: "method " + ", ".join(m.name for m in METHODS.values() if param in m.params)
        for name, param in method_params().items()
    }
    return (
        "\n\n".join(
            [
                "# Parameters\n\nGenerated from satdt's table of parameters when the site is built: "
                "the estimators' signatures, their checks and the command line's flags come from "
                "the same declarations (`satdt.core.params.Param`). A value outside a parameter's "
                "values raises `satdt.ParameterError` (a `ValueError`) naming the rule, the value "
                "seen and the default; on the command line the parameter is the flag "
                "`--name-with-dashes`.",
                "## OptimalTreeClassifier\n\n" + parameters_table(TREE_PARAMS),
                "## The tree methods' own options\n\nEach belongs to the methods named; another "
                "method refuses it unless it keeps its default.\n\n"
                + parameters_table(method_params().values(), owners),
                "## OptimalDiagramClassifier\n\n"
                + parameters_table(OptimalDiagramClassifier._PARAMS),
            ]
        )
        + "\n"
    )
