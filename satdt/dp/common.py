"""What every dynamic-programming search shares before its kernels run (NumPy only).

The binary data as the counting kernels of :mod:`satdt.dp._counts` read them, grouped in
named tuples of flat, C-contiguous arrays (Numba compiles ``typing.NamedTuple`` values of
arrays in nopython mode and reads their fields by name):

- :class:`Data`: the distinct rows of the training data, each with its class weights;
- :class:`Scratch`: per-feature work arrays of one search, overwritten by every call;
- :class:`Space`: the class weights of one set of rows over the features that split it,
  singly and in pairs (MurTree's depth-two counting), in a local feature numbering.

Rows are named by their index in :class:`Data`; a set of rows is an ``int32`` array of such
indices (a slice of a search's row permutation).

Also the shared preparation (:func:`prepare_binary`: duplicate rows merged, redundant
features dropped), the input checks, the rounding tolerance and the bound a search must beat.
Nothing here imports Numba, so a search can prepare its data while its kernels compile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..core.errors import DataError, ParameterError
from ..prepare.rows import distinct_features, group_rows
from ..task.result import Recorder
from ..task.stats import DPStats

# Relative tolerance on errors (sums of float weights in different orders), times the total
# weight: a tree's recomputed error must match the search's within it, and a tree must beat
# ``upper_bound`` by more than it to count as strictly better.
_REL_TOL = 1e-9
# Cells (rows x features) per block when building the CSR 1-features, so that NumPy's int64
# index temporaries stay small (at most 32 MB) however large the data is.
_CSR_BLOCK_CELLS = 1 << 21


@dataclass(frozen=True, eq=False)
class SearchSettings:
    """What every minimum-error search of :mod:`satdt.dp` is given besides its data and depth
    (each search's own options come in a second object: ``DL85Options``, ``PortfolioOptions``,
    ``ConTreeOptions``).

    Attributes
    ----------
    recorder
        Receives every incumbent (``recorder.improve``), the lower bound, and the statistics.
    sample_weight
        Non-negative row weights (``None``: all ones); the error is the weight misclassified.
    deadline
        Absolute ``time.perf_counter()`` value at which to stop and return the best tree.
    upper_bound
        The cost of a tree of depth at most ``max_depth`` that the caller already recorded
        on ``recorder`` (for instance a greedy tree): the search reports only trees strictly
        better (by more than a relative tolerance of 1e-9 of the total weight) and prunes
        with this bound from the start. ``None``: no such tree.
    leaf_penalty
        Cost of each leaf, in the units of the weights (>= 0): a split is kept only when it
        lowers the error by more than the penalty of the leaf it adds.
    min_support
        Least number of training rows of positive weight on each side of a split (>= 1;
        DL8.5's minimum support); a single leaf is always allowed.
    """

    recorder: Recorder
    sample_weight: np.ndarray | None = None
    deadline: float | None = None
    upper_bound: float | None = None
    leaf_penalty: float = 0.0
    min_support: int = 1

    def weights(self, n: int) -> np.ndarray:
        """The rows' weights as float64 (ones when none were given)."""
        if self.sample_weight is None:
            return np.ones(n)
        return np.asarray(self.sample_weight, dtype=np.float64)


class Data(NamedTuple):
    """The ``N`` distinct rows over ``M`` binary features, as every counting kernel reads them.

    Features are stored *flipped* where that makes them sparser (see :func:`build_data`): the
    kernels only ever visit the 1-entries of a row, so a sparse matrix is cheap to count.
    """

    Bd: np.ndarray  # uint8 (N, M): the binary features (after the flip)
    W: np.ndarray  # float64 (N, C): class weights of each distinct row
    pure: np.ndarray  # int64 (N,): the only class of a row, -1 if it has several
    ones_ptr: np.ndarray  # int64 (N + 1,): row u's 1-features are ones[ones_ptr[u]:ones_ptr[u + 1]]
    ones: np.ndarray  # int32 (nnz,): 1-features of each row, ascending (CSR indices)
    rirr: np.ndarray  # float64 (N,): irreducible error of each row (weight minus heaviest class)


class Scratch(NamedTuple):
    """Work arrays of the counting kernels, sized by ``M`` features and ``C`` classes."""

    single: np.ndarray  # float64 (M, C): class weights of the rows having feature f
    n1: np.ndarray  # int64 (M,): number of rows having feature f
    tot: np.ndarray  # float64 (C,): class weights of all the rows
    side: np.ndarray  # float64 (C,): class weights of one side of a split
    score: np.ndarray  # float64 (M,): a score per feature (e.g. a heuristic's)
    buf: np.ndarray  # int64 (M,): features (or local indices) of one row or one list
    cand: np.ndarray  # int64 (M,): local indices taking part in a depth-two evaluation
    best_left: np.ndarray  # float64 (M,): best one-split error of a root feature's 0-side
    best_right: np.ndarray  # float64 (M,): ... and of its 1-side
    arg_left: np.ndarray  # int64 (M,): the split giving best_left (-1: a leaf)
    arg_right: np.ndarray  # int64 (M,): the split giving best_right (-1: a leaf)


class Space(NamedTuple):
    """Class weights of a set of rows over the ``a`` features that split it, in local indices.

    Local index ``i < a`` stands for feature ``act[i]``; ``loc[f]`` is feature f's local index
    (-1 if f does not split the rows). ``pairs[(i * a + j) * C + c]`` (``i < j``) is the weight
    of class c on the rows having both features.
    """

    pairs: np.ndarray  # float64 (M * M * C,) or (1,) when pairs are not needed
    single: np.ndarray  # float64 (M, C)
    tot: np.ndarray  # float64 (C,)
    n1: np.ndarray  # int64 (M,)
    act: np.ndarray  # int64 (M,)
    loc: np.ndarray  # int64 (M,)


class Peers(NamedTuple):
    """The caches of children of the other searches of one proof (DL8.5's workers sharing the
    root's splits, :mod:`satdt.dp.root_split`), read-only: row ``w`` of each array is worker
    ``w``'s table, laid out as :class:`ThreeLevel`'s own, in memory the workers share. Worker
    ``w`` writes only its row and says how many of its entries are complete; ``limit[w]`` is
    what this search last read of it (entries ``e < limit[w]`` are visible, the others
    skipped; -1 for this search's own row). No rows (``W = 0``) on one core."""

    slots: np.ndarray  # int64 (W, S)
    keys: np.ndarray  # int64 (W, E)
    values: np.ndarray  # float64 (W, E)
    subtrees: np.ndarray  # int64 (W, E, 3)
    starts: np.ndarray  # int64 (W, E)
    lens: np.ndarray  # int64 (W, E)
    pool: np.ndarray  # int32 (W, R)
    limit: np.ndarray  # int64 (W,)


def no_peers() -> Peers:
    """:class:`Peers` of a search alone (no rows)."""
    table = np.zeros((0, 1), dtype=np.int64)
    return Peers(
        slots=table,
        keys=table,
        values=np.zeros((0, 1)),
        subtrees=np.zeros((0, 1, 3), dtype=np.int64),
        starts=table,
        lens=table,
        pool=np.zeros((0, 1), dtype=np.int32),
        limit=np.zeros(0, dtype=np.int64),
    )


class ThreeLevel(NamedTuple):
    """Work arrays of DL8.5's nodes with three levels left (:func:`satdt.dp._counts.depth3_splits`).

    ``state`` carries a node's search between two kernel calls: its bound ``child_ub``, its
    lower bound, and per side the feature and value of the child solved last (MurTree's
    similarity bound); ``best`` the best split's subtrees. The children (two levels left)
    solved so far are cached by their set of rows: an open-addressing table (``slots``) of
    entries (``keys``, the sum of the rows' random ``zobrist`` numbers; the rows themselves in
    ``pool`` from ``starts``, ``lens`` of them, compared in full on a match; ``values`` and
    ``subtrees``, their optimum), within fixed capacities (``fill``: entries and pool cells
    used, hits, 1 once full). A child missing there is looked up in ``peers``, the tables of
    the other workers of the same proof (none on one core).
    """

    parent: Space  # the node's rows over the features that split them
    small: Space  # a feature's smaller child, counted in the parent's local space
    large: Space  # its larger child, by subtraction (no pair table)
    split: np.ndarray  # int32 (2N,): a feature's 0-side rows from 0, its 1-side rows from N
    state: np.ndarray  # float64 (7,): child_ub, lower bound, last feature and value per side,
    # the parent's number of local features
    best: np.ndarray  # int64 (7,): the best split's feature, then each child's (g, g_left, g_right)
    found: np.ndarray  # int64 (M,): per candidate, 1 when its split beat the bound of its time
    trees: np.ndarray  # int64 (M, 6): per candidate, each child's (g, g_left, g_right); -1 = leaf
    stats: np.ndarray  # int64 (5,): children visited, depth-two solves, cuts, similarity cuts, work
    zobrist: np.ndarray  # int64 (N,): a random number per row
    slots: np.ndarray  # int64 (S,), S a power of two >= 2E: 0 empty, else entry + 1
    keys: np.ndarray  # int64 (E,)
    values: np.ndarray  # float64 (E,)
    subtrees: np.ndarray  # int64 (E, 3)
    starts: np.ndarray  # int64 (E,)
    lens: np.ndarray  # int64 (E,)
    pool: np.ndarray  # int32 (R,)
    fill: np.ndarray  # int64 (4,)
    peers: Peers


# Bytes per cached child besides its rows: key, value, subtree, start, length, two slots.
CHILD_ENTRY_BYTES = 72


def child_cache_sizes(cache_bytes: float) -> tuple[int, int, int]:
    """``(slots, entries, pool cells)`` of a cache of children within about ``cache_bytes``:
    half for the entries, half for their rows."""
    entries = int(cache_bytes / 2 / CHILD_ENTRY_BYTES)
    return 1 << max(1, (2 * entries - 1).bit_length()), entries, int(cache_bytes / 2 / 4)


def new_three_level(
    n_rows: int,
    n_features: int,
    n_classes: int,
    cache_bytes: float = 0.0,
    table: tuple[np.ndarray, ...] | None = None,
    peers: Peers | None = None,
) -> ThreeLevel:
    """Zeroed :class:`ThreeLevel` arrays for ``n_rows`` distinct rows, with a cache of
    children within about ``cache_bytes`` (half for entries, half for their rows; zeroed
    memory the system hands out as it is written). ``table``: the cache's arrays ``(slots,
    keys, values, subtrees, starts, lens, pool)`` given (a worker's row of shared ones, sized
    by :func:`child_cache_sizes`), with the other workers' ``peers``."""
    M, C = n_features, n_classes
    if table is None:
        slots, entries, cells = child_cache_sizes(cache_bytes)
        table = (
            np.zeros(slots, dtype=np.int64),
            np.zeros(entries, dtype=np.int64),
            np.zeros(entries),
            np.zeros((entries, 3), dtype=np.int64),
            np.zeros(entries, dtype=np.int64),
            np.zeros(entries, dtype=np.int64),
            np.zeros(cells, dtype=np.int32),
        )
    return ThreeLevel(
        parent=new_space(M, C),
        small=new_space(M, C),
        large=new_space(M, C, pairs=False),
        split=np.zeros(2 * n_rows, dtype=np.int32),
        state=np.zeros(7),
        best=np.full(7, -1, dtype=np.int64),
        found=np.zeros(M, dtype=np.int64),
        trees=np.full((M, 6), -1, dtype=np.int64),
        stats=np.zeros(5, dtype=np.int64),
        zobrist=np.random.default_rng(0).integers(-(2**63), 2**63 - 1, n_rows, dtype=np.int64),
        slots=table[0],
        keys=table[1],
        values=table[2],
        subtrees=table[3],
        starts=table[4],
        lens=table[5],
        pool=table[6],
        fill=np.zeros(4, dtype=np.int64),
        peers=no_peers() if peers is None else peers,
    )


class BudgetWork(NamedTuple):
    """Work arrays of the node budget search's nodes with three levels left
    (:func:`satdt.dp._budget_kernels.node_three`), and its cache of their children.

    ``parent`` holds the node's rows counted over the features that split them, ``child``
    a child's (the smaller side) in the parent's features, ``split`` the two sides. A child
    (two levels left) is named by the set of its path's literals (``2 * feature + value``),
    which fixes its rows: the cache is an open-addressing table (``slots``) of entries
    (``keys``, the sum of the literals' random ``zobrist`` numbers; ``lits``, the literals
    ascending, -1 after them, compared in full on a match; ``costs``, its cost vector for
    0..3 branching nodes), within a fixed capacity (``fill``: entries used, hits, 1 once
    full).
    """

    parent: Space
    child: Space
    split: np.ndarray  # int32 (2N,): a feature's 0-side rows from 0, its 1-side rows from N
    zobrist: np.ndarray  # int64 (2M,): a random number per literal
    slots: np.ndarray  # int64 (S,), S a power of two >= 2E: 0 empty, else entry + 1
    keys: np.ndarray  # int64 (E,)
    lits: np.ndarray  # int64 (E, L): L the most literals of a path
    costs: np.ndarray  # float64 (E, 4)
    fill: np.ndarray  # int64 (3,)


def budget_entry_bytes(max_literals: int) -> int:
    """Bytes per cached child of :class:`BudgetWork` (key, literals, costs, two slots)."""
    return 8 * (max(1, max_literals) + 4) + 8 + 16


def new_budget_work(
    n_rows: int, n_features: int, n_columns: int, max_literals: int, entries: int
) -> BudgetWork:
    """Zeroed :class:`BudgetWork` arrays for ``n_rows`` distinct rows, ``n_features``
    features and ``n_columns`` counted columns, with a cache of ``entries`` children of up
    to ``max_literals`` literals."""
    M = n_features
    spaces = BudgetWork(
        parent=new_space(M, n_columns),
        child=new_space(M, n_columns),
        split=np.zeros(2 * n_rows, dtype=np.int32),
        zobrist=np.random.default_rng(0).integers(-(2**63), 2**63 - 1, 2 * M, dtype=np.int64),
        slots=np.zeros(0, dtype=np.int64),
        keys=np.zeros(0, dtype=np.int64),
        lits=np.zeros((0, 0), dtype=np.int64),
        costs=np.zeros((0, 4)),
        fill=np.zeros(3, dtype=np.int64),
    )
    return empty_budget_cache(spaces, max_literals, entries)


def empty_budget_cache(work: BudgetWork, max_literals: int, entries: int) -> BudgetWork:
    """``work`` with an empty cache of ``entries`` children (its spaces kept)."""
    entries = max(1, entries)
    return work._replace(
        slots=np.zeros(1 << max(1, (2 * entries - 1).bit_length()), dtype=np.int64),
        keys=np.zeros(entries, dtype=np.int64),
        lits=np.zeros((entries, max(1, max_literals)), dtype=np.int64),
        costs=np.zeros((entries, 4)),
        fill=np.zeros(3, dtype=np.int64),
    )


def new_scratch(n_features: int, n_classes: int) -> Scratch:
    """Zeroed :class:`Scratch` arrays for ``n_features`` features and ``n_classes`` classes."""
    M, C = n_features, n_classes
    return Scratch(
        single=np.zeros((M, C)),
        n1=np.zeros(M, dtype=np.int64),
        tot=np.zeros(C),
        side=np.zeros(C),
        score=np.zeros(M),
        buf=np.zeros(M, dtype=np.int64),
        cand=np.zeros(M, dtype=np.int64),
        best_left=np.zeros(M),
        best_right=np.zeros(M),
        arg_left=np.zeros(M, dtype=np.int64),
        arg_right=np.zeros(M, dtype=np.int64),
    )


def new_space(n_features: int, n_classes: int, *, pairs: bool = True) -> Space:
    """A zeroed :class:`Space`; without ``pairs`` its pair table is a single unused cell."""
    M, C = n_features, n_classes
    return Space(
        pairs=np.zeros(M * M * C if pairs else 1),
        single=np.zeros((M, C)),
        tot=np.zeros(C),
        n1=np.zeros(M, dtype=np.int64),
        act=np.zeros(M, dtype=np.int64),
        loc=np.zeros(M, dtype=np.int64),
    )


def build_data(U: np.ndarray, W: np.ndarray, *, copy: bool = True) -> tuple[Data, np.ndarray]:
    """The :class:`Data` of distinct rows ``U`` (0/1 ``(N, M)``) with class weights ``W``.

    A feature set on more than half of the rows is flipped (``flip[j]``), so that no column
    has more 1-entries than 0-entries; a tree on the flipped feature is the same tree with its
    children swapped. The CSR indices are built block by block, in ``int32``: they are the
    largest array of the data (up to half of ``N * M`` entries).

    Returns ``(data, flip)``. With ``copy=False`` a C-contiguous uint8 ``U`` is flipped in
    place and becomes ``data.Bd`` (no second ``N * M`` array).
    """
    N, M = U.shape
    if M >= 2**31:
        raise ValueError(f"at most 2**31 - 1 features are supported, got {M}")
    flip = U.sum(axis=0, dtype=np.int64) * 2 > N
    Bd = np.array(U, dtype=np.uint8, order="C", copy=copy or None)
    np.bitwise_xor(Bd, flip.astype(np.uint8), out=Bd)
    ones_ptr = np.zeros(N + 1, dtype=np.int64)
    np.cumsum(Bd.sum(axis=1, dtype=np.int64), out=ones_ptr[1:])
    ones = np.empty(int(ones_ptr[-1]), dtype=np.int32)
    step = max(1, _CSR_BLOCK_CELLS // max(M, 1))
    for lo in range(0, N, step):
        hi = min(lo + step, N)
        ones[ones_ptr[lo] : ones_ptr[hi]] = np.nonzero(Bd[lo:hi])[1]
    W = np.ascontiguousarray(W, dtype=np.float64)
    rirr = W.sum(axis=1) - W.max(axis=1, initial=0.0)
    nonzero = (W > 0).sum(axis=1)
    pure = np.where(nonzero == 1, W.argmax(axis=1), -1).astype(np.int64)
    data = Data(Bd=Bd, W=W, pure=pure, ones_ptr=ones_ptr, ones=ones, rirr=rirr)
    return data, flip


@dataclass(frozen=True)
class PreparedBinary:
    """The data as the kernels see it.

    ``data`` holds the distinct rows over the kept features, each kept feature flipped when
    that makes it sparser (``flip``); ``keep[j]`` is the column of ``B`` behind feature j;
    ``floor`` is the irreducible error of the data (no tree can do better); ``count[u]`` is
    the number of training rows (of positive weight) merged into distinct row u, for
    supports (DL8.5's ``min_support``).
    """

    data: Data
    keep: np.ndarray  # int64 (M,)
    flip: np.ndarray  # bool (M,)
    floor: float
    count: np.ndarray  # int64 (N,)


def prepare_binary(B: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> PreparedBinary:
    """Merge duplicate rows into class weights; drop constant, identical and complementary features.

    Rows with the same features but different classes can never be separated: a distinct row
    keeps its per-class weights, and its weight minus its heaviest class is irreducible (the
    paper's preprocessing (a), for any number of classes). Two features that are equal or
    complementary on every row split the same way, so one is enough (preprocessing (b)).
    The search does not depend on the order of the distinct rows (with unit weights, its
    results are identical for any order; with fractional weights only float rounding of sums
    can differ).
    """
    used = w > 0
    if not used.all():
        B, y, w = B[used], y[used], w[used]
    n, m = B.shape
    if n == 0 or m == 0:  # at most one distinct row
        first = np.zeros(min(n, 1), dtype=np.int64)
        inverse = np.zeros(n, dtype=np.int64)
    else:
        first, inverse = group_rows(B)
    N = first.shape[0]
    if N >= 2**31:
        raise DataError(f"at most 2**31 - 1 distinct rows are supported; got {N}")
    W = np.zeros((N, n_classes))
    np.add.at(W, (inverse, y), w)
    count = np.bincount(inverse, minlength=N).astype(np.int64)
    del inverse
    U = B[first]
    keep = distinct_features(U) if N > 1 else np.zeros(0, dtype=np.int64)
    if keep.shape[0] < m:
        U = U[:, keep]
    data, flip = build_data(U, W, copy=False)
    return PreparedBinary(
        data=data, keep=keep, flip=flip, floor=float(data.rirr.sum()), count=count
    )


def check_inputs(
    B: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, depth: int, *, binary: bool = True
) -> None:
    """Reject inputs the kernels cannot handle, saying the rule, the value seen and the fix.

    ``binary``: the features must be 0/1 (Blossom, DL8.5); else any finite numbers (ConTree).
    """
    name = "B" if binary else "X"
    n = B.shape[0] if B.ndim == 2 else -1
    if B.ndim != 2 or y.shape != (n,) or w.shape != (n,):
        raise DataError(
            f"{name} must be (n, m) with y and sample_weight of length n; got {name} {B.shape}, "
            f"y {y.shape}, sample_weight {w.shape}: pass arrays with one entry per row"
        )
    if binary and B.size and B.max() > 1:
        raise DataError(
            f"B must hold 0/1 values; found {int(B.max())}: binarize the features first"
        )
    if not binary and B.size and not np.all(np.isfinite(B)):
        raise DataError("X must hold finite numbers: impute or drop rows with NaN or inf")
    if n and (y.min() < 0 or y.max() >= n_classes):
        raise DataError(
            f"class indices must lie in [0, {n_classes}); found {int(y.min())}..{int(y.max())}: "
            "encode the labels as 0 .. n_classes - 1"
        )
    if not np.all(np.isfinite(w)) or (w < 0).any():
        raise ParameterError(
            "sample weights must be finite and >= 0: drop or fix the offending rows"
        )
    if depth < 0:
        raise ParameterError(f"max_depth must be >= 0; got {depth}")


def check_leaf_options(leaf_penalty: float, min_support: int) -> tuple[float, int]:
    """The leaf penalty (a finite number >= 0) and minimum support (an integer >= 1) of an
    error search, checked; refused with :class:`DataError` otherwise."""
    if (
        isinstance(leaf_penalty, bool)
        or not isinstance(leaf_penalty, int | float | np.integer | np.floating)
        or not math.isfinite(leaf_penalty)
        or leaf_penalty < 0
    ):
        raise ParameterError(
            f"leaf_penalty must be a finite number >= 0 (in units of the weights), "
            f"got {leaf_penalty!r}"
        )
    if isinstance(min_support, bool) or not isinstance(min_support, int | np.integer):
        raise ParameterError(f"min_support must be a positive integer, got {min_support!r}")
    if min_support < 1:
        raise ParameterError(f"min_support must be >= 1, got {min_support}")
    return float(leaf_penalty), int(min_support)


def start_stats(kind: type[DPStats], B: np.ndarray, prep: PreparedBinary, recorder: Recorder):
    """A DP search's statistics (``kind``, a :class:`DPStats` subclass), set on the recorder."""
    N, M = prep.data.Bd.shape
    stats = kind(
        rows=int(B.shape[0]),
        distinct_rows=int(N),
        features=int(B.shape[1]),
        features_used=int(M),
        irreducible_error=prep.floor,
    )
    recorder.stats = stats
    return stats


def tolerance(w: np.ndarray) -> float:
    """How much two errors may differ by float rounding alone (relative to the total weight)."""
    return _REL_TOL * max(1.0, float(w.sum()))


def bound_to_beat(upper_bound: float | None, recorder: Recorder, w: np.ndarray) -> float:
    """The error a DP search must beat: ``upper_bound`` less a rounding tolerance (``inf`` if None).

    The tree the bound comes from must already be the recorder's incumbent, since the search
    reports only better trees.
    """
    if upper_bound is None:
        return math.inf
    tol = tolerance(w)
    bound = float(upper_bound) - tol
    best = recorder.best
    if math.isnan(bound) or best is None or best.value > float(upper_bound) + tol:
        seen = "no incumbent" if best is None else f"an incumbent of error {best.value}"
        raise DataError(
            f"upper_bound={upper_bound} needs the tree it comes from on the recorder; "
            f"the recorder holds {seen}: record that tree first (recorder.improve)"
        )
    return bound
