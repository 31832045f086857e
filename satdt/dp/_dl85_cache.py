"""The cache of DL8.5's solved branches (Algorithm 1, lines 9-11 and 28-29), capped in memory.

Kiossou, Nijssen & Schaus, "A Generic Complete Anytime Beam Search for Optimal Decision
Tree" (``shared/papers/cadl85-kiossou-nijssen-schaus.txt``). Solved branches are stored under
the key ``(remaining depth, the bytes of the node's sorted distinct-row indices)``; a Python
dict compares keys in full, so two row sets whose hashes collide are never confused. An entry
is either the node's *exact* optimum with its tree (reused whatever the later upper bound), or
a *lower bound* from a search that found nothing below its upper bound (reused when a later
call's upper bound is no tighter, the paper's ``ub <= node.ub``). Under a CA-DL8.5 rule two
more stores live beside it: results of non-terminal nodes, kept for the current restart only
(keyed also by the rule's state), and each non-terminal node's record of its features (their
order and what each proved to be worth), kept across restarts (Algorithm 2).

All three are capped together at ``max_cache_mb`` (an estimate of their Python memory: keys,
entries and trees): once full the cache **stops storing** new entries and keeps the old ones,
so branches met again are searched again. The search stays exact; it only loses time.
"""

from __future__ import annotations

from typing import Any

from ._dl85_anytime import LEAF

# Estimated bytes of one cache entry besides its key's row bytes (dict slot, tuples, floats).
ENTRY_BYTES = 200
# Estimated bytes per internal node of a cached tree (a 3-tuple).
TREE_NODE_BYTES = 72


def tree_bytes(tree: Any) -> int:
    """Estimated bytes of a nested tree (its internal nodes)."""
    if tree is None or tree == LEAF:
        return 0
    return TREE_NODE_BYTES + tree_bytes(tree[1]) + tree_bytes(tree[2])


def record_bytes(key: tuple[int, bytes], record: tuple[Any, ...]) -> float:
    """Estimated bytes of a node's record of features (its arrays, not its trees)."""
    cand, single = record[0], record[2]
    return ENTRY_BYTES + len(key[1]) + cand.size * 25 + 8 * single.size


class BranchCache:
    """The solved branches of one search (exact optima and lower bounds), the current
    restart's non-terminal results, and the nodes' records of features, within ``cap`` bytes.

    The search derives from it: the stores are plain attributes it reads on its hot path.
    """

    def __init__(self, max_cache_mb: float) -> None:
        self.cap = max_cache_mb * 2**20
        self.cache: dict[tuple[int, bytes], tuple[bool, float, Any]] = {}
        self.local: dict[tuple[int, bytes, float], tuple[float, float, Any]] = {}
        self.bytes = 0.0
        self.local_bytes = 0.0
        self.partial: dict[tuple[int, bytes], tuple[Any, ...]] = {}
        self.partial_bytes = 0.0
        self.full = False

    def _room(self, size: float) -> bool:
        """Whether ``size`` more bytes fit; when not, the cache is full from now on."""
        if self.bytes + self.local_bytes + self.partial_bytes + size > self.cap:
            self.full = True
            return False
        return True

    def _store(self, key: tuple[int, bytes], exact: bool, value: float, tree: Any) -> None:
        """Keep a node's exact optimum (with its tree) or a lower bound on it."""
        old = self.cache.get(key)
        if old is not None:
            if old[0] or (not exact and old[1] >= value):
                return
            self.cache[key] = (exact, value, tree)  # replaces a weaker lower bound
            return
        size = ENTRY_BYTES + len(key[1]) + tree_bytes(tree)
        if self._room(size):
            self.cache[key] = (exact, value, tree)
            self.bytes += size

    def _store_local(self, key, state, ub, value, tree) -> None:
        """Keep a non-terminal node's result, for the current restart and rule state only."""
        size = ENTRY_BYTES + len(key[1]) + tree_bytes(tree)
        lkey = (key[0], key[1], state)
        if lkey not in self.local and self._room(size):
            self.local_bytes += size
        elif lkey not in self.local:
            return
        self.local[lkey] = (ub, value, tree)

    def _forget_local(self) -> None:
        """A new restart: results pruned by the previous rule are forgotten (Algorithm 2)."""
        self.local.clear()
        self.local_bytes = 0.0

    def _keep_record(self, key: tuple[int, bytes], record: tuple[Any, ...]) -> bool:
        """Keep a node's record of features across restarts, if it fits."""
        size = record_bytes(key, record)
        if not self._room(size):
            return False
        self.partial[key] = record
        self.partial_bytes += size
        return True

    def _remember_tree(self, record: tuple[Any, ...], i: int, tree: Any) -> None:
        """Record that feature ``i`` of a kept node is known exactly, with its tree, if it fits."""
        if self._room(TREE_NODE_BYTES * 8):
            record[4][i] = True
            record[5][i] = tree
            self.partial_bytes += tree_bytes(tree)

    def _drop_record(self, key: tuple[int, bytes], record: tuple[Any, ...]) -> None:
        """A node became terminal: its exact result is cached, its record is no longer needed."""
        del self.partial[key]
        self.partial_bytes -= record_bytes(key, record)
        self.partial_bytes -= sum(tree_bytes(t) for t in record[5].values())
