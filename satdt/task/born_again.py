"""What a born-again search returns: the tree, its bounds and the search's effort.

Shared by the two routes of born-again trees (Vidal & Schiffer, "Born-Again Tree
Ensembles", ICML 2020): the dynamic programme over a forest's cells
(:mod:`satdt.dp.born_again`) and the counterexample-guided SAT search for forests whose
grid is too large to enumerate (:mod:`satdt.sat.born_again`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..models.tree import Tree
from .stats import Stats


@dataclass
class BornAgainStats:
    """Effort counters of one born-again search (exact: the same run counts the same).

    ``cells``: the forest's grid; ``filtered_cells``: after dropping the thresholds across
    which no cell changes class; ``axes``: features left with two levels or more.
    ``calls``: child regions asked for; ``expansions``: canonical regions solved (memo
    misses); ``memo_hits``, ``memo_entries``; ``face_scans``/``face_words``: looks at a
    face of a region and the words they read; ``steps``: search steps; ``grows``: times the
    memo was enlarged; ``seconds`` of the search (grid and tree included).
    """

    cells: int = 0
    filtered_cells: int = 0
    axes: int = 0
    calls: int = 0
    expansions: int = 0
    memo_hits: int = 0
    memo_entries: int = 0
    face_scans: int = 0
    face_words: int = 0
    steps: int = 0
    grows: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The counters as a JSON-ready dictionary."""
        return asdict(self)


@dataclass
class BornAgainResult:
    """A born-again tree and what is known about it.

    ``tree`` is faithful to the forest (checked on every cell before it is returned).
    ``depth`` and ``n_leaves`` are the tree's (``n_nodes = 2 * n_leaves - 1``, satdt's
    size); ``lower_bound`` bounds the objective from below (the depth for ``"depth"`` and
    ``"depth_then_size"``, the leaves for ``"size"``); ``proven`` says the tree is optimal.
    """

    tree: Tree
    objective: str
    depth: int
    n_leaves: int
    lower_bound: int
    proven: bool
    stats: BornAgainStats | BornAgainSatStats = field(default_factory=BornAgainStats)
    route: str = "grid"

    @property
    def n_nodes(self) -> int:
        """satdt's size of the tree: ``2 * n_leaves - 1``."""
        return 2 * self.n_leaves - 1


@dataclass
class BornAgainSatStats:
    """Effort counters of the counterexample-guided route (:mod:`satdt.sat.born_again`).

    ``cells``: the cells of the forest's grid (a float: it may exceed any integer type's
    range in spirit, and is only reported); ``samples``: cells the SAT formulas hold;
    ``sat_calls``, ``rounds`` (a tree checked against the forest), ``box_queries`` (leaf
    boxes proven by asking the forest), ``counterexamples`` (of them
    ``sampled_counterexamples``: found among random cells of the leaf boxes, before any
    proof); ``depths_refuted``: depths proven too small (UNSAT on the samples);
    ``seconds``.
    """

    cells: float = 0.0
    samples: int = 0
    sat_calls: int = 0
    rounds: int = 0
    box_queries: int = 0
    counterexamples: int = 0
    sampled_counterexamples: int = 0
    depths_refuted: list[int] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The counters as a JSON-ready dictionary."""
        return asdict(self)


@dataclass
class BornAgainSearchStats(Stats):
    """What one call of :func:`satdt.born_again` did (``satdt.search.born_again``).

    ``objective``: the born-again objective (``"depth"``, ``"size"``: fewest leaves,
    ``"depth_then_size"``); ``route``: ``"grid"`` (the dynamic programme over the cells) or
    ``"sat"`` (the counterexample-guided SAT search, for grids of more than ``max_cells``
    cells) or ``"greedy"`` (a first run whose kernels were still compiling at the time limit:
    the greedy faithful tree, built without them); ``cells``: the forest's grid;
    ``max_cells``: the most cells the grid route enumerates; ``trees``, ``features``: the forest's; ``depth_bound``, ``leaves_bound``: the
    lower bounds proven (the depth, the leaves); ``greedy_depth``, ``greedy_leaves``: the
    greedy faithful tree the SAT route starts from (0: none); ``faithful_by``: how the tree
    was re-checked before it was returned (``"grid"``: cell by cell on the grid of both
    models' thresholds; ``"boxes"``: leaf box by leaf box; ``"sat"``: a tree of the SAT
    search, whose every leaf box the search proved, by the same proof, before taking it);
    ``check_seconds``: the re-checks' seconds (on the SAT route, the greedy tree's, done as
    soon as it is built);
    ``grid`` and ``sat``: each route's own counters (None where it did not run).
    """

    objective: str = "depth"
    route: str = "grid"
    cells: float = 0.0
    max_cells: int = 0
    trees: int = 0
    features: int = 0
    depth_bound: int = 0
    leaves_bound: int = 0
    greedy_depth: int = 0
    greedy_leaves: int = 0
    faithful_by: str = ""
    check_seconds: float = 0.0
    grid: BornAgainStats | None = None
    sat: BornAgainSatStats | None = None
