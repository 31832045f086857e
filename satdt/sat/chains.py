"""Threshold chains: the order encoding of nested binary features in the perfect-tree formula.

See ``encodings/threshold-chains.md``. The features ``x[c] > t_1, ..., x[c] > t_L`` of one
numeric column (``t_1 < ... < t_L``) are nested: every row true on a feature is true on the features before it. In such a chain a
row is true on a prefix of the features, of length ``r``, so a node that tests the chain's
feature at position ``t`` sends it right exactly when ``t <= r``. With order variables
``T[q][c][t]`` = "node q tests chain c at a position >= t" (``T[q][c][1]``: it tests chain c
at all), formulas (3)-(4) of one row take two clauses per chain and node instead of one per
feature: ``NOT p OR NOT T[1] OR T[r + 1] OR X`` (selected, position <= r: right) and
``NOT p OR NOT T[r + 1] OR NOT X`` (position > r: left). On a table of a few numeric columns
with many thresholds the formula shrinks by about the number of thresholds per column (an
order encoding of thresholds, as in the SAT trees over numeric features of Shati, Cohen and
McIlraith, CP 2021). :mod:`satdt.sat.search` decides where it is used.

The F variables of formula (1) stay, defined as the positions: ``F[q][a] <-> T[t] AND NOT
T[t + 1]`` for feature a at position t of its chain, so models decode, phase hints and root
guesses work as in the per-feature encoding.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import TimeUp
from ..models.tree import Tree
from ..task.result import Recorder
from .loop import CounterexampleLoop
from .perfect import Clauses, leaf_clauses, path_vars, perfect_form
from .problem import Problem

# The chains pay off when a node's routing clauses shrink at least this much: 2 clauses per
# chain against one per feature (lazy classes of features keep a formula smaller than m).
# Measured: on balance-scale (16 features, 4 chains) both encodings take the same time.
CHAIN_GAIN = 4


def threshold_chains(B: np.ndarray, max_chains: int | None = None) -> list[np.ndarray] | None:
    """Partition the columns of ``B`` into chains of nested features (first fit, most rows first).

    In every chain the rows true on a feature are a subset of those true on the one before it,
    on every row of ``B``. The thresholds of one numeric column form one chain; a categorical
    one-hot column is a chain of its own. None when more than ``max_chains`` chains would be
    needed (the work is at most about ``m * max_chains * n / 8`` bytes compared).
    """
    m = B.shape[1]
    bits = np.packbits(B != 0, axis=0).T  # (m, bytes): one row per feature
    order = np.argsort(-B.sum(axis=0, dtype=np.int64), kind="stable")
    limit = m if max_chains is None else max_chains
    tails = np.empty((min(limit, m), bits.shape[1]), dtype=np.uint8)  # each chain's last column
    chains: list[list[int]] = []
    for a in order:
        column = bits[a]
        fits = np.flatnonzero(~(column & ~tails[: len(chains)]).any(axis=1))
        if len(fits):
            c = int(fits[0])
            chains[c].append(int(a))
        elif len(chains) == limit:
            return None
        else:
            c = len(chains)
            chains.append([int(a)])
        tails[c] = column
    return [np.array(chain, dtype=np.int64) for chain in chains]


def chain_budget(n_features: int) -> int:
    """The most chains for which the order encoding shrinks the routing clauses by at least
    :data:`CHAIN_GAIN` (two clauses per chain against one per feature)."""
    return n_features // (2 * CHAIN_GAIN)


class ChainLoop(CounterexampleLoop):
    """The counterexample-guided loop (Algorithm 3) on the order encoding of threshold chains.

    Every feature is in the formula (as with ``features="all"``), but a row's formulas (3)-(4)
    cost two clauses per chain and node. ``chains`` is a partition of the features as
    :func:`threshold_chains` returns it; the other parameters are those of
    :class:`~satdt.sat.loop.CounterexampleLoop`.
    """

    def __init__(
        self,
        problem: Problem,
        depth: int,
        chains: list[np.ndarray],
        *,
        recorder: Recorder,
        deadline: float | None = None,
        **options: object,
    ) -> None:
        super().__init__(
            problem, depth, features="all", recorder=recorder, deadline=deadline, **options
        )
        m = problem.B.shape[1]
        self.chains = chains
        self.chain_of = np.zeros(m, dtype=np.int64)
        self.position = np.zeros(m, dtype=np.int64)  # 1-based position in its chain
        for c, chain in enumerate(chains):
            self.chain_of[chain] = c
            self.position[chain] = np.arange(1, len(chain) + 1)
        # T[q - 1][c][t] for t = 1 .. L (index 0 unused: "position >= 0" is always true)
        self.T = [
            [
                np.array([0] + [self.pool.id(("T", q, c, t)) for t in range(1, len(ch) + 1)])
                for c, ch in enumerate(chains)
            ]
            for q in range(1, 2**depth)
        ]
        try:
            self._add(self._order_clauses())
        except TimeUp:
            self.solver.delete()
            raise

    def _order_clauses(self) -> Clauses:
        """``T[t + 1] -> T[t]``, and ``F[q][a] <-> T[t] AND NOT T[t + 1]`` for a at position t."""
        clauses: Clauses = []
        for q, per_chain in enumerate(self.T):
            for chain, T in zip(self.chains, per_chain, strict=True):
                L = len(chain)
                clauses.extend([-int(T[t + 1]), int(T[t])] for t in range(1, L))
                F = self.vars.F[q, chain]
                for t in range(1, L + 1):
                    f = int(F[t - 1])
                    clauses.append([-f, int(T[t])])
                    if t < L:
                        clauses.append([-f, -int(T[t + 1])])
                        clauses.append([f, -int(T[t]), int(T[t + 1])])
                    else:
                        clauses.append([f, -int(T[t])])
        return clauses

    def _example_clauses(self, i: int, values: np.ndarray) -> Clauses:
        """Formulas (3)-(4) of row i in the order encoding, then (5)-(6)."""
        X = path_vars(self.pool, i, self.depth)
        ranks = [int(values[chain].sum()) for chain in self.chains]
        clauses: Clauses = []
        for q, per_chain in enumerate(self.T, start=1):
            j = q.bit_length() - 1
            p = q - 2**j
            bits = [(p >> (j - 1 - level)) & 1 for level in range(j)]
            not_path = [int(-X[level]) if bit else int(X[level]) for level, bit in enumerate(bits)]
            x = int(X[j])
            for T, r in zip(per_chain, ranks, strict=True):
                L = len(T) - 1
                if r > 0:  # selected at a position <= r: right
                    beyond = [int(T[r + 1])] if r < L else []
                    clauses.append([*not_path, -int(T[1]), x, *beyond])
                if r < L:  # position > r: left
                    clauses.append([*not_path, -int(T[r + 1]), -x])
        return clauses + leaf_clauses(self.vars, X, int(self.problem.y[i]))

    def suggest(self, tree: Tree) -> None:
        """Phase hints on the F variables (as in the loop) and on the order variables."""
        super().suggest(tree)
        node_feature, _ = perfect_form(tree, self.depth)
        literals: list[int] = []
        for q, a in enumerate(node_feature):
            chosen, t = int(self.chain_of[a]), int(self.position[a])
            for c, T in enumerate(self.T[q]):
                if c != chosen:
                    literals.append(-int(T[1]))
                    continue
                literals.extend(int(v) for v in T[1 : t + 1])
                literals.extend(-int(v) for v in T[t + 1 :])
        self.solver.set_phases(literals)
