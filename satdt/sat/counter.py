"""Limits on the number of labelled leaves: formulas (7)-(10) of Avellaneda (AAAI 2020).

See ``encodings/node-counter.md``. By Theorem 2, for L >= 2 a consistent tree of depth <= k
with L leaves (2L - 1 nodes) exists iff a consistent perfect tree of depth k exists in which at
most L leaves carry a class. ``U[v]`` says that leaf v carries a class (7); a unary counter over
the U variables is generated once, sized for the largest bound that will be asked, and each
bound is imposed by assuming one literal false, so a bound search never re-encodes anything.

Two counters share one interface: the paper's sequential counter H (8)-(10), and PySAT's
incremental totalizer.
"""

from __future__ import annotations

import numpy as np
from pysat.card import ITotalizer
from pysat.formula import IDPool

Clauses = list[list[int]]

COUNTERS = ("sequential", "totalizer")
DEFAULT_COUNTER = "totalizer"  # smaller, and faster on monk2/monk3 in benchmarks/min_size.py


def labelled_leaf_vars(pool: IDPool, C: np.ndarray) -> tuple[np.ndarray, Clauses]:
    """Formula (7): ``U[v] <- C[v][c]`` for every leaf v and class c.

    Only this direction is needed: U is only ever bounded from above, so a solver never
    gains by setting U true without a class.
    """
    U = np.array([pool.id(("U", v)) for v in range(C.shape[0])], dtype=np.int64)
    clauses = np.stack([-C, np.broadcast_to(U[:, None], C.shape)], axis=-1).reshape(-1, 2)
    return U, clauses.tolist()


class _Counter:
    """What both counters share: ``n`` inputs, bounds up to ``max_bound`` by one assumption."""

    n: int
    max_bound: int
    clauses: Clauses

    def _at_least(self, j: int) -> int:
        """The output literal implied true when at least ``j`` inputs are true."""
        raise NotImplementedError

    def at_most(self, bound: int) -> list[int]:
        """Assumption literals for "at most ``bound`` labelled leaves" (formula (10))."""
        if bound >= self.n:
            return []
        if bound > self.max_bound:
            raise ValueError(
                f"the counter was built for bounds up to {self.max_bound}, not {bound}"
            )
        return [-self._at_least(bound + 1)]


class SequentialCounter(_Counter):
    """The sequential counter of formulas (8)-(10) over ``U[0..N-1]``, for bounds up to ``max_bound``.

    ``H[v][j]`` (v = 0..N, j = 0..min(v, max_bound + 1)) is implied true when at least j of the
    first v leaves are labelled: (8) ``H[v][j] -> H[v+1][j]``, (9) ``U[v] AND H[v][j] ->
    H[v+1][j+1]``, (10) ``H[0][0]``. "At most L labelled leaves" is the assumption
    ``NOT H[N][L+1]``. ``H[v][j]`` with j > v could never be forced, so it is not created
    (``H`` holds 0 there) and the clauses that would mention it are left out.
    """

    def __init__(self, pool: IDPool, U: np.ndarray, max_bound: int) -> None:
        self.n = len(U)
        self.max_bound = max_bound
        top = max_bound + 1
        H = np.zeros((self.n + 1, top + 1), dtype=np.int64)
        for v in range(self.n + 1):
            for j in range(min(v, top) + 1):
                H[v, j] = pool.id(("H", v, j))
        self.H = H
        keep = np.stack([-H[:-1], H[1:]], axis=-1).reshape(-1, 2)
        labelled = np.broadcast_to(-U[:, None], (self.n, top))
        step = np.stack([labelled, -H[:-1, :top], H[1:, 1:]], axis=-1).reshape(-1, 3)
        self.formulas: dict[str, Clauses] = {
            "(8)": keep[keep[:, 0] != 0].tolist(),
            "(9)": step[step[:, 1] != 0].tolist(),
            "(10)": [[int(H[0, 0])]],  # the bound itself is an assumption, see at_most
        }
        self.clauses = self.formulas["(10)"] + self.formulas["(8)"] + self.formulas["(9)"]

    @property
    def n_vars(self) -> int:
        return int(np.count_nonzero(self.H))

    def _at_least(self, j: int) -> int:
        return int(self.H[self.n, j])


class TotalizerCounter(_Counter):
    """PySAT's incremental totalizer behind the interface of :class:`SequentialCounter`."""

    def __init__(self, pool: IDPool, U: np.ndarray, max_bound: int) -> None:
        self.n = len(U)
        self.max_bound = max_bound
        self._totalizer = ITotalizer(
            lits=U.tolist(), ubound=min(max_bound + 1, self.n), top_id=pool.top
        )
        pool.occupy(pool.top + 1, self._totalizer.top_id)
        self.clauses: Clauses = [list(c) for c in self._totalizer.cnf.clauses]

    def _at_least(self, j: int) -> int:
        return self._totalizer.rhs[j - 1]  # rhs[k] is true when at least k + 1 inputs are


def leaf_counter(kind: str, pool: IDPool, U: np.ndarray, max_bound: int) -> _Counter:
    """A labelled-leaf counter of the given kind (see :data:`COUNTERS`)."""
    if kind == "sequential":
        return SequentialCounter(pool, U, max_bound)
    if kind == "totalizer":
        return TotalizerCounter(pool, U, max_bound)
    raise ValueError(f"counter must be one of {COUNTERS}, got {kind!r}")


def weighted_counter(
    pool: IDPool, tag: object, lits: list[int], weights: list[int], cap: int, up: bool
) -> tuple[list[int | None], Clauses]:
    """A sequential weight counter: outputs ``out[j]`` (j = 1..cap) over ``sum w_i [lit_i]``.

    ``up``: the sum at least j forces ``out[j]`` (bound it from above by assuming ``NOT out[j]``);
    otherwise ``out[j]`` forces the sum to be at least j (bound it from below by asserting
    ``out[j]``). Prefix variables ``("W", tag, i, j)`` say it for the first i + 1 literals
    (Hölldobler et al.'s SWC, one direction): ``len(lits) * cap`` variables, at most two
    clauses each. Weights are positive integers. ``out[0]`` is None (always true).
    """
    clauses: Clauses = []
    prev: list[int | None] = [None] * (cap + 1)  # the empty prefix: no sum >= 1
    for i, (x, w) in enumerate(zip(lits, weights, strict=True)):
        cur: list[int | None] = [None] * (cap + 1)
        for j in range(1, cap + 1):
            s = pool.id(("W", tag, i, j))
            cur[j] = s
            rest = j - w
            if up:
                if prev[j] is not None:
                    clauses.append([-prev[j], s])
                if rest <= 0:
                    clauses.append([-x, s])
                elif prev[rest] is not None:
                    clauses.append([-x, -prev[rest], s])
            else:
                same = [] if prev[j] is None else [prev[j]]
                clauses.append([-s, *same, x])
                if rest > 0:
                    clauses.append([-s, *same, *([] if prev[rest] is None else [prev[rest]])])
        prev = cur
    return prev, clauses
