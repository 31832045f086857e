"""Every tree a search returns, re-checked against the data before anyone sees it.

Correct before fast: :func:`check_tree` recomputes a tree's objective on the prepared rows
(its depth or size for the consistency objectives, which must classify every row; its
weighted error or cost plus the leaf penalty for the error objective) and its constraints
(depth, nodes, leaf support), independently of the search that built it.
"""

from __future__ import annotations

import numpy as np

from ..models.tree import LEAF, Tree
from ..prepare.costs import tree_cost
from ..prepare.prepared import Prepared
from ..task.objectives import OBJECTIVES


def check_tree(
    model: Tree,
    data: Prepared,
    value: float,
    objective: str,
    leaf_penalty: float = 0.0,
    min_support: int = 1,
    cost_matrix: np.ndarray | None = None,
    *,
    max_nodes: int | None = None,
    max_depth: int | None = None,
) -> None:
    """Re-check a tree against the data before anyone sees it (correct before fast).

    ``value`` is in the search's units: for the error objective, the weighted error (with a
    ``cost_matrix``, the weighted cost of the predictions) plus ``leaf_penalty`` (in units
    of the weights) per leaf; every leaf must hold ``min_support`` rows. The tree has at most
    ``max_nodes`` nodes and depth at most ``max_depth`` (when given).
    """
    if (max_nodes is not None and model.n_nodes > max_nodes) or (
        max_depth is not None and model.depth > max_depth
    ):
        raise RuntimeError(
            f"internal error: the returned model has {model.n_nodes} nodes and depth "
            f"{model.depth}, over max_nodes={max_nodes} or max_depth={max_depth}"
        )
    predicted = model.predict_index(data.X)
    wrong = predicted != data.y
    kind = OBJECTIVES[objective]
    if kind.consistency:
        if wrong.any():
            raise RuntimeError("internal error: the returned model misclassifies training rows")
        expected = kind.value_of(model, 0.0)
        if expected != value:
            raise RuntimeError(
                f"internal error: reported {objective} {value} but the model has {expected}"
            )
        return
    if cost_matrix is None:
        error = float(data.weight[wrong].sum())
        what = "error"
    else:
        error = tree_cost(predicted, data.y, data.weight, cost_matrix)
        what = "cost"
    cost = error + leaf_penalty * model.n_leaves
    scale = float(data.weight.sum()) * (1.0 if cost_matrix is None else float(cost_matrix.max()))
    if not np.isclose(cost, value, rtol=1e-9, atol=1e-9 * max(1.0, scale)):
        what = what if leaf_penalty == 0 else f"penalised {what}"
        raise RuntimeError(f"internal error: model {what} {cost} != reported {value}")
    if min_support > 1 and model.n_leaves > 1:
        support = np.bincount(model.apply(data.X)[data.weight > 0], minlength=model.n_nodes)
        leaves = np.flatnonzero(model.feature == LEAF)
        if support[leaves].min() < min_support:
            raise RuntimeError(
                f"internal error: a leaf holds {support[leaves].min()} rows, fewer than "
                f"min_support={min_support}"
            )
