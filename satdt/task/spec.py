"""What a search is asked: the prepared data, the objective, its bounds and the options."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..prepare.prepared import Prepared
from .result import Recorder

# A method parameter is a satdt.core.params.Param too: the estimators take it under its own name,
# and the command line as --name-with-dashes, both from the table of searches.


@dataclass
class Task:
    """What a method's ``run`` receives: the prepared data, the objective and the options.

    ``options`` holds the method's own parameters that differ from their defaults.
    A model the estimator found before the method ran (a greedy tree on a large table) is
    ``recorder.best``: the bound the method must beat.
    """

    data: Prepared
    objective: str
    max_depth: int | None
    max_nodes: int | None
    options: dict[str, Any] = field(default_factory=dict)
    checked: Any = None  # a model the estimator already re-checked against the data
    # The error objective's cost of a leaf, in units of the weights (the estimator's
    # leaf_penalty times the total weight), and the fewest positive-weight rows in a leaf.
    leaf_penalty: float = 0.0
    min_support: int = 1
    n_jobs: int = 1  # cores for this fit (the estimator's n_jobs, resolved)

    @property
    def recorder(self) -> Recorder:
        return self.data.recorder

    @property
    def deadline(self) -> float | None:
        return self.data.deadline
