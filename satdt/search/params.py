"""The parameters of every tree search, declared once: :data:`TREE_PARAMS` (the tree
estimator's own) and, through :func:`tree_params`, each method's (the table of searches).

The estimator's signature, docstring and checks, the command line's flags and the docs' table
of parameters come from these declarations (:class:`satdt.core.params.Param`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.params import NONE, Check, Choice, Integer, Param, Real
from ..task.objectives import OBJECTIVES
from .registry import METHODS, method_params


# The parameters of every tree search (OptimalTreeClassifier's besides each method's own, which
# the methods of the table declare): its signature, docstring and checks, the command line's
# flags and the docs' table come from here.
def _method_names() -> tuple[str, ...]:
    return ("auto", *METHODS)


def _class_weight_dict(value: Any) -> bool:
    return isinstance(value, dict)


def _n_jobs(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool) and value != 0


def _cost_matrix_like(value: Any) -> bool:
    from ..prepare.costs import is_cost_matrix_like

    return is_cost_matrix_like(value)


def _read_cost_matrix(text: str) -> Any:
    from ..prepare.costs import read_cost_matrix

    return read_cost_matrix(text)


TREE_PARAMS: tuple[Param, ...] = (
    Param(
        "objective",
        "depth",
        '"depth": the shallowest tree that classifies every training row correctly; '
        '"size": the smallest such tree (fewest nodes) at the minimum depth, or over all '
        'depths up to max_depth; "error": the tree of depth at most max_depth with the '
        "fewest misclassified (weighted) training rows.",
        (Choice(tuple(OBJECTIVES)),),
    ),
    Param(
        "method",
        "auto",
        "The search, from the table of searches (satdt.search.registry.METHODS); 'auto' picks the "
        "method for the objective and, for 'error', the data (ConTree on numeric columns "
        "with many thresholds, else the Blossom/DL8.5 portfolio); method_ says which ran.",
        (Choice(_method_names),),
    ),
    Param(
        "max_depth",
        None,
        'A cap on the depth (required for "error").',
        (NONE, Integer(0)),
        metavar="K",
    ),
    Param(
        "max_nodes",
        None,
        "A cap on the number of nodes (internal + leaves; a tree with k branching nodes has "
        '2k + 1). "depth" and "size": only consistent trees within it; "error": the fewest '
        "errors among the trees of depth at most max_depth within it (MurTree's and STreeD's "
        "depth-and-size constraint; method 'budget', which auto runs then); without max_depth "
        "the depth is free within the cap.",
        (NONE, Integer(0)),
        metavar="N",
        cli_help="only trees with at most N nodes (internal + leaves); exit 1 if none is "
        "consistent",
    ),
    Param(
        "time_limit",
        None,
        "Wall-clock seconds from the call of fit, data preparation included; then the best "
        "tree found is returned with result_.proven_optimal = False and a NotProvenWarning.",
        (NONE, Real(0, low_open=True)),
        metavar="S",
        cli_help="wall-clock seconds from the start; then the best tree found",
    ),
    Param(
        "max_thresholds",
        None,
        "At most this many quantile thresholds per numeric column (None: every midpoint "
        "between consecutive distinct values; optimality then holds for the full data).",
        (NONE, Integer(1)),
        metavar="Q",
        cli_help="at most Q quantile thresholds per numeric column (optimal for those only)",
    ),
    Param(
        "max_memory_mb",
        1024,
        "Memory budget of the binary features: when every threshold would exceed it, fewer "
        "quantile thresholds are used (result_.preparation.notes says so).",
        (Real(0, low_open=True),),
        metavar="MB",
        cli_help="memory budget of the binary features; over it, fewer thresholds",
    ),
    Param(
        "resolve",
        None,
        "None: contradictory rows (same features, different labels) are an error for the "
        "consistency objectives; 'majority': relabel each group with its majority label.",
        (NONE, Choice(("majority",))),
        objectives=("depth", "size"),
        cli_help="relabel contradictory rows with their group's majority label",
    ),
    Param(
        "missing",
        "split",
        '"split": a feature cell may be missing (NaN, None; empty or NA in a file); each '
        "split of a column with missing values also learns the side its missing rows take, "
        "optimally, and predict sends them there (a split on a column without missing "
        'values sends them where more training rows went). "error": refuse missing cells.',
        (Choice(("split", "error")),),
        cli_help="split: a cell may be missing (empty, NA, ?, ...); each split learns the side "
        "its missing rows take, and predict sends them there; error: refuse them",
    ),
    Param(
        "leaf_penalty",
        0.0,
        'With objective="error": minimise (weighted errors) / (total weight) + leaf_penalty * '
        "(number of leaves) over trees of depth at most max_depth, so that a leaf is split "
        "only where that saves more than leaf_penalty of the weight; result_.objective_value "
        "is then that penalised value. 0: the fewest errors.",
        (Real(0),),
        objectives=("error",),
        metavar="L",
        cli_help="minimise errors / rows + L * leaves (0: the fewest errors); a leaf is split "
        "only where that saves more than a fraction L of the rows",
    ),
    Param(
        "min_support",
        1,
        'With objective="error": every leaf holds at least this many training rows (of positive '
        "weight); a split is tried only when both sides hold that many.",
        (Integer(1),),
        objectives=("error",),
        metavar="N",
        cli_help="every leaf holds at least N training rows",
    ),
    Param(
        "class_weight",
        None,
        "None, 'balanced' (n_rows / (n_classes * rows of the class)) or {label: weight}: "
        "multiplies sample_weight, as in scikit-learn.",
        (
            NONE,
            Choice(("balanced",)),
            Check("a dict {label: weight >= 0}", _class_weight_dict, "dict"),
        ),
        metavar="W",
        cli_help="'balanced' (n_rows / (n_classes * rows of the class)) or LABEL=WEIGHT pairs "
        "separated by commas (e.g. yes=3,no=1): multiplies each row's weight",
    ),
    Param(
        "cost_matrix",
        None,
        'With objective="error": misclassification costs, C[a][b] the cost of predicting b '
        "for a row of class a (>= 0, zero diagonal), as a square array in classes_ order or a "
        "dict {true label: {predicted label: cost}} (pairs not named cost 1). The search "
        "minimises the rows' weighted cost (times sample_weight and class_weight); a leaf "
        "predicts its class of least cost; result_.objective_value and "
        "result_.training_error are costs. None: every error costs 1.",
        (
            NONE,
            Check(
                "a square array of costs or a dict {true label: {predicted label: cost}}",
                _cost_matrix_like,
                "array-like or dict",
                read=_read_cost_matrix,
            ),
        ),
        objectives=("error",),
        metavar="C",
        cli_help="misclassification costs: rows separated by ';' in classes_ order "
        "('0,1;5,0': predicting the first class for the second costs 5), or JSON (a list of "
        "rows or {true: {predicted: cost}}), or a JSON file",
    ),
    Param(
        "n_jobs",
        1,
        "Cores for one fit (None: 1; -1: every core; -2: all but one): the portfolio's proof is "
        "shared out among that many processes (DL8.5's root splits, Blossom beside them); with "
        "solver='race' the SAT searches race that many solvers on every call. The optima are the "
        "same; 1 is the single-core search.",
        (NONE, Check("a non-zero integer", _n_jobs, "int", read=int)),
        metavar="N",
        cli_help="cores for this fit (-1: every core); the optimum is the same",
    ),
)


def tree_params() -> dict[str, Param]:
    """Every parameter of the tree searches by name: :data:`TREE_PARAMS`, then the methods'."""
    return {param.name: param for param in TREE_PARAMS} | method_params()
