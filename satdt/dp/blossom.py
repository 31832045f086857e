"""Blossom: anytime minimum-error decision trees of bounded depth.

Demirovic, Hebrard & Jean, "A simple and efficient anytime algorithm for computing optimal
decision trees" (see ``shared/notes/blossom.md``). The search always completes the current
tree before trying an alternative feature anywhere, so a good tree (Gini at the top, optimal
depth-two subtrees at the bottom) is known almost at once and improves until the search
space is exhausted, which proves it optimal. Memory is proportional to the data: one current
tree, no cache.

This module prepares the data (merging duplicate rows, dropping redundant features), drives
the kernels of :mod:`satdt.dp._kernels` in chunks so the deadline is honoured, and turns the
kernels' heap-ordered trees into :class:`satdt.tree.Tree` objects.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from ..result import Recorder, SearchResult
from ..tree import Tree
from . import _kernels as k

# Seconds of work per kernel call: short enough to honour a deadline and report incumbents
# promptly, long enough that the Python round trip costs nothing.
_CHUNK_SECONDS = 0.02


@dataclass(frozen=True)
class _Prepared:
    """The data as the kernels see it.

    ``Bd`` holds the distinct rows over the kept features, each kept feature flipped when
    that makes it sparser (``flip``); ``keep[j]`` is the column of ``B`` behind feature j.
    """

    Bd: np.ndarray  # uint8 (N, M)
    W: np.ndarray  # float64 (N, C): class weights of each distinct row
    pure: np.ndarray  # int64 (N,): the only class of a row, -1 if several
    ones_ptr: np.ndarray  # int64 (N + 1,)
    ones: np.ndarray  # int64 (nnz,): 1-features of each row, ascending
    rirr: np.ndarray  # float64 (N,): irreducible error of each row
    keep: np.ndarray  # int64 (M,)
    flip: np.ndarray  # bool (M,)
    floor: float  # irreducible error of the data

    @property
    def data(self) -> tuple[np.ndarray, ...]:
        return (self.Bd, self.W, self.pure, self.ones_ptr, self.ones, self.rirr)


def _group_rows(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups of identical rows of a 0/1 matrix: first row of each group, group of each row.

    Rows are packed into 64-bit words and sorted with ``lexsort``, which is much faster than
    ``np.unique(axis=0)`` on wide rows.
    """
    n = A.shape[0]
    packed = np.packbits(A, axis=1)
    pad = (-packed.shape[1]) % 8
    words = np.ascontiguousarray(np.pad(packed, ((0, 0), (0, pad)))).view(np.uint64)
    order = np.lexsort(words.T[::-1]) if words.shape[1] else np.arange(n)
    ordered = words[order]
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    group_sorted = np.cumsum(new_group) - 1
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group_sorted
    first = order[new_group]
    return first, inverse


def _prepare(B: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> _Prepared:
    """Merge duplicate rows into class weights; drop constant, identical and complementary features.

    Rows with the same features but different classes can never be separated: a distinct row
    keeps its per-class weights, and its weight minus its heaviest class is irreducible.
    Two features that are equal or complementary on every row split the same way, so one is
    enough.
    """
    used = w > 0
    B, y, w = B[used], y[used], w[used]
    n, m = B.shape
    if n == 0 or m == 0:  # at most one distinct row
        U = np.zeros((min(n, 1), m), dtype=np.uint8)
        inverse = np.zeros(n, dtype=np.int64)
    else:
        first, inverse = _group_rows(B)
        U = B[first]
    N = U.shape[0]
    W = np.zeros((N, n_classes))
    np.add.at(W, (inverse, y), w)
    rirr = W.sum(axis=1) - W.max(axis=1, initial=0.0)
    nonzero = (W > 0).sum(axis=1)
    pure = np.where(nonzero == 1, W.argmax(axis=1), -1).astype(np.int64)

    if N > 1:
        varies = U.min(axis=0) != U.max(axis=0)
        canonical = U ^ U[0]  # complementary columns become identical
        candidates = np.flatnonzero(varies)
        first_col, _ = _group_rows(np.ascontiguousarray(canonical[:, candidates].T))
        keep = np.sort(candidates[first_col]).astype(np.int64)
    else:
        keep = np.zeros(0, dtype=np.int64)
    Bd = U[:, keep]
    flip = Bd.sum(axis=0) * 2 > N
    Bd = np.ascontiguousarray(Bd ^ flip.astype(np.uint8))
    row, col = np.nonzero(Bd)
    ones_ptr = np.zeros(N + 1, dtype=np.int64)
    np.cumsum(np.bincount(row, minlength=N), out=ones_ptr[1:])
    return _Prepared(
        Bd=Bd,
        W=np.ascontiguousarray(W),
        pure=pure,
        ones_ptr=ones_ptr,
        ones=col.astype(np.int64),
        rirr=rirr,
        keep=keep,
        flip=flip,
        floor=float(rirr.sum()),
    )


def _allocate(prep: _Prepared, K: int) -> tuple:
    """State, control arrays and scratch space of one search (sizes: data, positions, depth)."""
    N, M = prep.Bd.shape
    C = prep.W.shape[1]
    L = max(K - 2, 0)
    P = 1 << (L + 1)
    state = (
        np.zeros((L + 1, N), dtype=np.int64),  # perm
        np.zeros((P, k.N_IP), dtype=np.int64),  # ip
        np.zeros((P, k.N_FP)),  # fp
        np.zeros((P if L > 0 else 1, M), dtype=np.int64),  # dom
        np.full((L + 1) << (K + 1), -1, dtype=np.int64),  # bt
        np.zeros(2 * P, dtype=np.int64),  # stk
        np.full(1 << (K + 1), -1, dtype=np.int64),  # inc
    )
    ctl = np.zeros(k.N_CTL, dtype=np.int64)
    ctl[k.C_K] = K
    ctl[k.C_L] = L
    fctl = np.zeros(k.N_FCTL)
    fctl[k.F_INCUMBENT] = np.inf
    fctl[k.F_FLOOR] = prep.floor
    pair_size = M * M * C if K >= 2 else 1

    def space() -> tuple[np.ndarray, ...]:  # pair counts over a local feature index
        return (
            np.zeros(pair_size),  # pairs
            np.zeros((M, C)),  # single
            np.zeros(C),  # tot
            np.zeros(M, dtype=np.int64),  # n1
            np.zeros(M, dtype=np.int64),  # act
            np.zeros(M, dtype=np.int64),  # loc
        )

    scr = (
        np.zeros((M, C)),  # single
        np.zeros(C),  # tot
        np.zeros(C),  # side
        np.zeros(M),  # score
        np.zeros(M, dtype=np.int64),  # n1
        np.zeros(M, dtype=np.int64),  # buf
        np.zeros(M),  # best_left
        np.zeros(M),  # best_right
        np.zeros(M, dtype=np.int64),  # arg_left
        np.zeros(M, dtype=np.int64),  # arg_right
        np.zeros(M, dtype=np.int64),  # cand
        np.zeros((M, C)),  # child single
        np.zeros(C),  # child tot
        np.zeros(M, dtype=np.int64),  # child n1
    )
    spaces = (space(), space())
    return state, ctl, fctl, scr, spaces


def _heap_to_tree(
    inc: np.ndarray,
    prep: _Prepared,
    B: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    n_classes: int,
) -> Tree:
    """The kernels' heap-ordered tree over reduced features as a Tree over the columns of B.

    Leaves predict the heaviest class of the rows reaching them; a flipped feature swaps its
    children, so that rows with ``B[:, j] == 0`` still go left.
    """
    N = prep.Bd.shape[0]
    node = np.ones(N, dtype=np.int64)
    rows = np.arange(N)
    while True:
        f = inc[node]
        active = f >= 0
        if not active.any():
            break
        node[active] = 2 * node[active] + prep.Bd[rows[active], f[active]]
    leaf_weight = np.zeros((len(inc), n_classes))
    np.add.at(leaf_weight, node, prep.W)

    def nested(p: int):
        f = int(inc[p])
        if f < 0:
            return int(np.argmax(leaf_weight[p]))
        zero_side, one_side = 2 * p, 2 * p + 1
        if prep.flip[f]:
            zero_side, one_side = one_side, zero_side
        return (int(prep.keep[f]), 0.5, nested(zero_side), nested(one_side))

    tree = Tree.from_nested(nested(1), classes=np.arange(n_classes))
    return tree.with_counts(B, y, w)


def tree_error(tree: Tree) -> float:
    """Training error of a tree from its ``counts``: leaf weights minus their predicted class."""
    leaves = np.flatnonzero(tree.feature == -1)
    counts = tree.counts[leaves]
    return float(counts.sum() - counts[np.arange(len(leaves)), tree.value[leaves]].sum())


def _checked_tree(value: float, inc: np.ndarray, prep: _Prepared, B, y, w, n_classes) -> Tree:
    """Build the tree and check that it really has the error the search claims."""
    tree = _heap_to_tree(inc, prep, B, y, w, n_classes)
    error = tree_error(tree)
    if abs(error - value) > 1e-9 * max(1.0, float(w.sum())):
        raise RuntimeError(
            f"internal error: the search reports error {value} but its tree has error {error}"
        )
    return tree


def _check_inputs(B: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, depth: int) -> None:
    """Reject inputs the kernels cannot handle, saying the rule, the value seen and the fix."""
    n = B.shape[0] if B.ndim == 2 else -1
    if B.ndim != 2 or y.shape != (n,) or w.shape != (n,):
        raise DataError(
            f"B must be (n, m) with y and sample_weight of length n; got B {B.shape}, "
            f"y {y.shape}, sample_weight {w.shape}: pass arrays with one entry per row"
        )
    if B.size and B.max() > 1:
        raise DataError(
            f"B must hold 0/1 values; found {int(B.max())}: binarize the features first"
        )
    if n and (y.min() < 0 or y.max() >= n_classes):
        raise DataError(
            f"class indices must lie in [0, {n_classes}); found {int(y.min())}..{int(y.max())}: "
            "encode the labels as 0 .. n_classes - 1"
        )
    if not np.all(np.isfinite(w)) or (w < 0).any():
        raise DataError("sample weights must be finite and >= 0: drop or fix the offending rows")
    if depth < 0:
        raise DataError(f"max_depth must be >= 0; got {depth}")


def solve_min_error(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    max_depth: int,
    *,
    sample_weight: np.ndarray | None = None,
    deadline: float | None = None,
    recorder: Recorder,
) -> SearchResult:
    """Minimum-error tree of depth at most ``max_depth`` over binary features, by Blossom.

    Parameters
    ----------
    B
        ``uint8 (n, m)`` binary features; a node on feature j sends rows with ``B[:, j] == 0``
        left (threshold 0.5).
    y
        Class index of each row, in ``[0, n_classes)``.
    n_classes
        Number of classes; leaves hold class indices.
    max_depth
        Maximum depth (0 gives a single leaf).
    sample_weight
        Non-negative row weights (default: all ones); the error is the weight misclassified.
    deadline
        Absolute ``time.perf_counter()`` value at which to stop and return the best tree.
    recorder
        Receives every incumbent (``recorder.improve``), the lower bound and statistics.

    Returns
    -------
    SearchResult
        The recorder's snapshot; ``proven_optimal`` when the search space was exhausted or
        the error reached the irreducible error of the data.
    """
    B = np.ascontiguousarray(B, dtype=np.uint8)
    y = np.asarray(y, dtype=np.int64)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    _check_inputs(B, y, w, n_classes, max_depth)
    prep = _prepare(B, y, w, n_classes)
    N, M = prep.Bd.shape
    K = int(max_depth)
    recorder.stats.update(
        rows=int(B.shape[0]),
        distinct_rows=int(N),
        features=int(B.shape[1]),
        features_used=int(M),
    )
    if K == 0 or M == 0:
        inc = np.full(2, -1, dtype=np.int64)
        leaf = float(prep.W.sum() - prep.W.sum(axis=0).max(initial=0.0))
        recorder.improve(_checked_tree(leaf, inc, prep, B, y, w, n_classes), leaf)
        recorder.lower_bound = leaf
        return recorder.snapshot(proven_optimal=True)

    state, ctl, fctl, scr, spaces = _allocate(prep, K)
    data = prep.data
    k.start(data, state, ctl, scr)
    inc = state[-1]
    budget = 20_000
    proven = False
    while True:
        tic = time.perf_counter()
        status = k.search(data, state, ctl, fctl, scr, spaces, budget)
        toc = time.perf_counter()
        if ctl[k.C_IMPROVED]:
            ctl[k.C_IMPROVED] = 0
            value = float(fctl[k.F_INCUMBENT])
            recorder.improve(_checked_tree(value, inc, prep, B, y, w, n_classes), value)
        if status == k.DONE:
            proven = True
            break
        if deadline is not None and toc >= deadline:
            break
        rate = budget / max(toc - tic, 1e-6)
        chunk = _CHUNK_SECONDS if deadline is None else min(_CHUNK_SECONDS, deadline - toc)
        budget = int(min(max(rate * chunk, 1_000), 1e12))

    if recorder.best is None:  # stopped before the first complete tree: the root as a leaf
        leaf = float(prep.W.sum() - prep.W.sum(axis=0).max())
        inc[:] = -1
        recorder.improve(_checked_tree(leaf, inc, prep, B, y, w, n_classes), leaf)
    recorder.lower_bound = float(fctl[k.F_INCUMBENT]) if proven else prep.floor
    recorder.stats.update(
        {
            "irreducible_error": prep.floor,
            "expansions": int(ctl[k.C_EXPAND]),
            "bottom_solves": int(ctl[k.C_SOLVE]),
            "backtracks": int(ctl[k.C_BACKTRACK]),
            "cuts": int(ctl[k.C_CUTS]),
            "similarity_cuts": int(ctl[k.C_SIM_CUTS]),
            "complete_trees": int(ctl[k.C_TREES]),
        }
    )
    return recorder.snapshot(proven_optimal=proven)


def warmup() -> None:
    """Compile (or load from numba's cache) every kernel on a tiny problem."""
    rng = np.random.default_rng(0)
    B = rng.integers(0, 2, size=(24, 5), dtype=np.uint8)
    y = rng.integers(0, 3, size=24)
    w = rng.random(24)
    for depth in (1, 2, 3):
        solve_min_error(B, y, 3, depth, sample_weight=w, recorder=Recorder("error"))
