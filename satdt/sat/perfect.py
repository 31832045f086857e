"""The perfect-tree depth encoding of Avellaneda (AAAI 2020), formulas (1)-(6).

See ``encodings/perfect-tree.md`` for the formulas, their sizes and a worked example.

A perfect tree of depth k has internal nodes q = 1 .. 2^k - 1 in heap order (children of q are
2q and 2q + 1) and leaves v = 0 .. 2^k - 1; read in binary (most significant bit first), a
leaf index is the path from the root, bit 1 = right branch. Variables, all from one
:class:`pysat.formula.IDPool` with tuple keys so that a model decodes with ``pool.obj(v)``:

- ``("F", q, a)``: internal node q tests binary feature a (the example goes right iff its
  feature a is 1);
- ``("C", v, c)``: leaf v predicts class c;
- ``("X", i, j)``: example i goes right at depth j (j = 0 .. k-1).

The structure clauses (1)-(2) are generated once per depth; the clauses (3)-(6) of one
example are generated on their own, so that an example can be added to a live solver.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from pysat.card import CardEnc, EncType
from pysat.formula import IDPool

from ..models.tree import Tree

Clauses = list[list[int]]

# How formula (2), "at most one feature per node", is encoded.
AT_MOST_ONE = ("none", "pairwise", "seqcounter")


@dataclass
class PerfectTreeVars:
    """The variables of a depth-``depth`` perfect tree over ``n_features`` features and ``n_classes`` classes.

    ``F[q - 1, a]`` is the id of ``("F", q, a)`` and ``C[v, c]`` the id of ``("C", v, c)``.
    """

    pool: IDPool
    depth: int
    n_features: int
    n_classes: int
    F: np.ndarray
    C: np.ndarray

    @property
    def n_internal(self) -> int:
        return 2**self.depth - 1

    @property
    def n_leaves(self) -> int:
        return 2**self.depth


def feature_vars(pool: IDPool, depth: int, features: Sequence[Hashable]) -> np.ndarray:
    """The F variables of the given features: column t holds ``("F", q, features[t])`` for q = 1 .."""
    n_internal = 2**depth - 1
    return np.array(
        [[pool.id(("F", q, a)) for a in features] for q in range(1, n_internal + 1)],
        dtype=np.int64,
    ).reshape(n_internal, len(features))


def class_vars(pool: IDPool, depth: int, n_classes: int) -> np.ndarray:
    """The C variables: row v holds ``("C", v, c)`` for every class c."""
    return np.array(
        [[pool.id(("C", v, c)) for c in range(n_classes)] for v in range(2**depth)],
        dtype=np.int64,
    ).reshape(2**depth, n_classes)


def tree_vars(pool: IDPool, depth: int, n_features: int, n_classes: int) -> PerfectTreeVars:
    """Create the F and C variables of a perfect tree (the X variables come with each example)."""
    F = feature_vars(pool, depth, list(range(n_features)))
    return PerfectTreeVars(
        pool, depth, n_features, n_classes, F, class_vars(pool, depth, n_classes)
    )


def some_feature_clauses(tv: PerfectTreeVars) -> Clauses:
    """Formula (1): every internal node tests at least one feature."""
    return tv.F.tolist()


def one_feature_clauses(tv: PerfectTreeVars, encoding: str = "pairwise") -> Clauses:
    """Formula (2): every internal node tests at most one feature.

    ``"pairwise"`` is the paper's m(m-1)/2 binary clauses per node; ``"seqcounter"`` is a
    sequential counter (about 3m clauses and m auxiliary variables per node); ``"none"``
    omits the formula. Omitting it keeps the formula equisatisfiable: when a node of a model
    tests several features, clauses (3)-(4) force every encoded example reaching it to agree
    on all of them, so testing only the first of them routes every encoded example the same
    way (and the model with only that F true still satisfies (1) and (3)-(6)). Decoding
    takes the first true feature, so the three choices yield the same trees' guarantees.
    """
    if encoding not in AT_MOST_ONE:
        raise ValueError(f"at_most_one must be one of {AT_MOST_ONE}, got {encoding!r}")
    if encoding == "none" or tv.n_features < 2:
        return []
    clauses: Clauses = []
    if encoding == "pairwise":
        a, b = np.triu_indices(tv.n_features, k=1)
        for row in tv.F:
            clauses.extend(np.stack([-row[a], -row[b]], axis=1).tolist())
        return clauses
    for row in tv.F:
        card = CardEnc.atmost(row.tolist(), bound=1, vpool=tv.pool, encoding=EncType.seqcounter)
        clauses.extend(card.clauses)
    return clauses


def structure_clauses(tv: PerfectTreeVars, at_most_one: str = "pairwise") -> Clauses:
    """Formulas (1) and (2): the clauses that hold before any example is added."""
    return some_feature_clauses(tv) + one_feature_clauses(tv, at_most_one)


def path_vars(pool: IDPool, example: int, depth: int) -> np.ndarray:
    """The X variables of one example: ``X[j]`` is true when it goes right at depth j."""
    return np.array([pool.id(("X", example, j)) for j in range(depth)], dtype=np.int64)


def _negated_paths(X: np.ndarray, n_bits: int) -> np.ndarray:
    """For every node at depth ``n_bits`` (in order), the literals of NOT(path to it).

    Row p lists, for each level l < n_bits, ``-X[l]`` if bit l of p (most significant first)
    is 1 (the path goes right there) and ``X[l]`` otherwise.
    """
    p = np.arange(2**n_bits)[:, None]
    shifts = np.arange(n_bits - 1, -1, -1)[None, :]
    bits = (p >> shifts) & 1
    return np.where(bits == 1, -X[:n_bits][None, :], X[:n_bits][None, :])


def routing_clauses(F: np.ndarray, X: np.ndarray, row: np.ndarray) -> Clauses:
    """Formulas (3)-(4) for one example, by the depth-first enumeration of Algorithm 1.

    ``F[q - 1, a]`` are the feature variables (any subset of features, as columns) and
    ``row[a]`` the example's value of feature a. At node q on depth j, reached by path p:
    ``NOT p OR NOT X[j] OR NOT F[q][a]`` for every feature a the example has as 0, and
    ``NOT p OR X[j] OR NOT F[q][a]`` for every a it has as 1 (the example goes right at q
    exactly when the tested feature is 1). Clauses come grouped by depth, nodes in heap
    order, features in order.
    """
    m = F.shape[1]
    depth = len(X)
    x_lit_sign = np.where(np.asarray(row) == 1, 1, -1)
    clauses: Clauses = []
    for j in range(depth):
        n_nodes = 2**j
        block = np.empty((n_nodes, m, j + 2), dtype=np.int64)
        block[:, :, :j] = _negated_paths(X, j)[:, None, :]
        block[:, :, j] = x_lit_sign[None, :] * X[j]
        block[:, :, j + 1] = -F[n_nodes - 1 : 2 * n_nodes - 1, :]
        clauses.extend(block.reshape(n_nodes * m, j + 2).tolist())
    return clauses


def leaf_clauses(tv: PerfectTreeVars, X: np.ndarray, label: int) -> Clauses:
    """Formulas (5)-(6) for one example of class ``label``, by Algorithm 2.

    For every leaf v: ``NOT (X = v) OR C[v][label]`` and ``NOT (X = v) OR NOT C[v][c]`` for
    every other class c.
    """
    neg_path = _negated_paths(X, tv.depth)
    n_leaves, c = tv.n_leaves, tv.n_classes
    block = np.empty((n_leaves, c, tv.depth + 1), dtype=np.int64)
    block[:, :, : tv.depth] = neg_path[:, None, :]
    sign = np.full(c, -1, dtype=np.int64)
    sign[label] = 1
    block[:, :, tv.depth] = tv.C * sign[None, :]
    # the positive clause (5) first, then the clauses (6), per leaf
    order = np.concatenate([[label], np.delete(np.arange(c), label)])
    return block[:, order, :].reshape(n_leaves * c, tv.depth + 1).tolist()


def other_class_clauses(X: np.ndarray, C: np.ndarray) -> Clauses:
    """Formula (6) of one example for classes that are not its own, given as the columns of ``C``.

    For every leaf v and every column c of ``C``: ``NOT (X = v) OR NOT C[v][c]``. These are the
    clauses (6) that a class added after the example was encoded owes it
    (:meth:`satdt.sat.loop.CounterexampleLoop.grow`).
    """
    depth = len(X)
    neg_path = _negated_paths(X, depth)
    n_leaves, c = C.shape
    block = np.empty((n_leaves, c, depth + 1), dtype=np.int64)
    block[:, :, :depth] = neg_path[:, None, :]
    block[:, :, depth] = -C
    return block.reshape(n_leaves * c, depth + 1).tolist()


def example_clauses(tv: PerfectTreeVars, example: int, row: np.ndarray, label: int) -> Clauses:
    """All the clauses (3)-(6) that example ``example`` (features ``row``, class ``label``) adds."""
    X = path_vars(tv.pool, example, tv.depth)
    return routing_clauses(tv.F, X, row) + leaf_clauses(tv, X, label)


def decode(tv: PerfectTreeVars, model: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Read a model: the feature of every internal node and the class of every leaf.

    Returns ``(node_feature, leaf_class)``: ``node_feature[q - 1]`` is the first feature true
    at node q (0 when none is, which formula (1) rules out); ``leaf_class[v]`` is the first
    class true at leaf v, or -1 when none is (a leaf no encoded example reaches).
    """
    truth = np.zeros(max(int(tv.pool.top), max((abs(v) for v in model), default=0)) + 1, dtype=bool)
    positive = np.asarray([v for v in model if v > 0], dtype=np.int64)
    truth[positive] = True
    f_true = truth[tv.F]
    node_feature = np.argmax(f_true, axis=1) if f_true.shape[1] else np.zeros(tv.n_internal, int)
    c_true = truth[tv.C]
    leaf_class = np.where(c_true.any(axis=1), np.argmax(c_true, axis=1), -1)
    return node_feature.astype(np.int64), leaf_class.astype(np.int64)


def perfect_leaf_of(node_feature: np.ndarray, depth: int, B: np.ndarray) -> np.ndarray:
    """The leaf (0 .. 2^depth - 1) each row of the binary matrix ``B`` reaches in a perfect tree."""
    node = np.ones(B.shape[0], dtype=np.int64)
    rows = np.arange(B.shape[0])
    for _ in range(depth):
        node = 2 * node + B[rows, node_feature[node - 1]]
    return node - 2**depth


def perfect_form(tree: Tree, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """A tree over binary features (depth <= ``depth``) as a perfect tree of depth ``depth``.

    Returns ``(node_feature, leaf_class)`` as :func:`decode` does. A leaf above the last level is
    expanded by re-testing its parent's feature, which sends all its rows the same way, and both
    children keep its class (the construction behind Theorem 2).
    """
    node_feature = np.zeros(2**depth - 1, dtype=np.int64)
    leaf_class = np.zeros(2**depth, dtype=np.int64)

    def walk(node: int, q: int, level: int, parent_feature: int) -> None:
        is_leaf = tree.feature[node] < 0
        if level == depth:
            leaf_class[q - 2**depth] = (
                tree.value[node] if is_leaf else int(np.argmax(tree.counts[node]))
            )
            return
        if is_leaf:
            node_feature[q - 1] = parent_feature
            walk(node, 2 * q, level + 1, parent_feature)
            walk(node, 2 * q + 1, level + 1, parent_feature)
            return
        f = int(tree.feature[node])
        node_feature[q - 1] = f
        walk(int(tree.left[node]), 2 * q, level + 1, f)
        walk(int(tree.right[node]), 2 * q + 1, level + 1, f)

    walk(0, 1, 0, 0)
    return node_feature, leaf_class
