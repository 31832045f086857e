"""What ``method="auto"`` runs: the rules that pick a method of the table of searches for an
objective and, once prepared, the data (:func:`choose_method`), and every method it may pick
(:func:`candidates`, what a sweep warms up)."""

from __future__ import annotations

from ..prepare.prepared import Prepared
from ..task.objectives import OBJECTIVES

# Above this many binary features (every threshold of every column), ConTree on the numeric
# columns is faster than Blossom on their binarisation (benchmarks/continuous.py, docs/how-it-works/contree.md).
CONTREE_CROSSOVER = 500
# With a time limit, from this many rows on the portfolio is the better anytime search: on
# quantile thresholds it has good trees within seconds, where one depth-two subproblem of
# ConTree on every threshold can take longer than the limit (docs/how-it-works/minimum-error.md, "Which search").
CONTREE_TIMED_ROWS = 20_000


def choose_method(
    objective: str, data: Prepared | None = None, max_nodes: int | None = None
) -> str:
    """The method ``method="auto"`` runs for an objective (on these data, when given).

    The error objective under a node budget (``max_nodes``) runs ``budget``, the one error
    search that honours it.

    The consistency objectives run the box DP when every column has so few values that the
    grid has at most :data:`satdt.dp.boxes.AUTO_BOXES` boxes (and ``max_thresholds`` does not
    limit the thresholds), otherwise the portfolio of SAT and ConTree (``hybrid``); SAT alone
    when ``max_thresholds`` is set (ConTree searches every threshold) or values are missing.
    The error objective runs ConTree on the numeric columns when their thresholds would give
    more than :data:`CONTREE_CROSSOVER` binary features, ``max_thresholds`` does not limit
    them, and there is no time limit or fewer than :data:`CONTREE_TIMED_ROWS` rows;
    otherwise the portfolio of Blossom and DL8.5 on binary features. Data with missing
    values go to the methods over binary features (SAT, the portfolio): the box DP and
    ConTree search the numeric columns, which have no side for a missing value.
    """
    if max_nodes is not None and not OBJECTIVES[objective].consistency:
        return "budget"
    if data is not None and data.has_missing:
        return "portfolio" if not OBJECTIVES[objective].consistency else "sat"
    if OBJECTIVES[objective].consistency:
        if data is None:
            return "hybrid"
        if data.max_thresholds is not None:
            return "sat"
        from ..dp.boxes import AUTO_BOXES, box_count, box_table_mb  # NumPy only: no numba

        values = data.column_values()
        if box_count(values) <= AUTO_BOXES and box_table_mb(values) <= data.max_memory_mb / 2:
            return "boxes"
        return "hybrid"
    if (
        data is not None
        and data.max_thresholds is None
        and (data.deadline is None or _user_rows(data) < CONTREE_TIMED_ROWS)
        and data.full_threshold_count() > CONTREE_CROSSOVER
    ):
        return "contree"
    return "portfolio"


def _user_rows(data: Prepared) -> int:
    """The user's rows (with a cost matrix the searches read them rewritten as more rows of
    the same features, :mod:`satdt.prepare.costs`; ConTree merges those again)."""
    return len(data.y if data.original is None else data.original.y)


def candidates(objective: str, method: str = "auto") -> tuple[str, ...]:
    """The methods a fit with this objective and ``method`` may run: ``method`` itself, or
    (``"auto"``) every method :func:`choose_method` can return for the objective, whatever
    the data (what the sweep warms up before it measures a fit)."""
    if method != "auto":
        return (method,)
    if not OBJECTIVES[objective].consistency:
        return ("portfolio", "contree", "budget")
    return ("hybrid", "sat", "boxes")
