"""The pruning rules of CA-DL8.5 and how they relax between restarts (NumPy only).

Kiossou, Nijssen & Schaus, "A Generic Complete Anytime Beam Search for Optimal Decision
Tree": Table 1 lists the rules, Algorithm 2 relaxes the rule's limit before each restart.
Kept apart from the search so that the table of searches can list them without loading the
search's kernels.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import ParameterError

RULES = ("discrepancy", "topk", "topk_star", "purity", "gain")
SCHEDULES = ("monotonic", "exponential", "luby")


def luby(i: int) -> int:
    """The i-th term (from 1) of the Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, ..."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    while True:
        if i == (1 << k) - 1:
            return 1 << (k - 1)
        i -= (1 << (k - 1)) - 1
        k = 1
        while (1 << k) - 1 < i:
            k += 1


def relaxation(schedule: str, step: float, restart: int) -> float:
    """How far the rule is relaxed before restart ``restart`` (0 for the first one).

    The sum of the first ``restart`` increments: ``step`` each (monotonic), ``step * 2^r``
    (exponential: the limit roughly doubles), ``step * luby(r + 1)`` (Luby).
    """
    if schedule == "monotonic":
        return step * restart
    if schedule == "exponential":
        return step * ((1 << restart) - 1)
    if schedule == "luby":
        return step * sum(luby(r + 1) for r in range(restart))
    raise ParameterError(f"relax must be one of {list(SCHEDULES)}, got {schedule!r}")


class Rule:
    """A CA-DL8.5 rule (Table 1) at one limit: which features a node may try.

    ``state`` is what the rule carries down a path: the discrepancies spent, the gain gap
    accumulated (``0`` for the rules that keep none).
    """

    def __init__(self, name: str, limit: float) -> None:
        self.name = name
        self.limit = limit

    def stops(self, leaf: float, weight: float) -> bool:
        """Purity rule: a node pure enough is not expanded (Table 1, ``prune``)."""
        return self.name == "purity" and weight > 0 and 1.0 - leaf / weight >= self.limit

    def mask(self, state: float, depth: int, gaps: np.ndarray | None, n: int) -> np.ndarray:
        """Which of a node's ``n`` features (heuristic order) the rule lets it try."""
        index = np.arange(n)
        if self.name == "discrepancy":
            return index <= self.limit - state + 1e-9
        if self.name == "topk":
            return index < self.limit
        if self.name == "topk_star":
            return index < max(1, int(self.limit) >> depth)
        if self.name == "gain" and gaps is not None:
            return state + gaps <= self.limit + 1e-12
        return np.ones(n, dtype=bool)

    def child_state(self, state: float, i: int, gap: float) -> float:
        if self.name == "discrepancy":
            return state + i
        if self.name == "gain":
            return state + gap
        return 0.0
