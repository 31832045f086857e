"""ConTree: optimal minimum-error trees of bounded depth directly on numeric features.

Brita, van der Linden & Demirovic, "Optimal classification trees for continuous feature
data using dynamic programming with branch-and-bound" (AAAI 2025). The recursion is
``CT(D, d) = min_f Branch(D, d, f)`` (Eq. (4)), ``Branch`` the best threshold of a column
(Eq. (5)) and ``Split`` the sum of the two optimal subtrees (Eq. (6)), with:

* per-column sorted orders of the rows, kept with each subproblem and split stably, so no
  subproblem is sorted again (:func:`satdt.dp._contree_kernels.partition`);
* Branch over intervals of split indices (Algorithm 1) with the similarity lower bound
  (Eq. (3)) and the three interval prunings: neighbourhood pruning (Corollary 1, Eq. (9)),
  interval shrinking (Theorem 2, Eq. (10)) and sub-interval pruning (Theorem 3);
* the depth-two subroutine D2Split (Algorithm 2), which solves both depth-one children of
  a split in one pass over the sorted data, and a whole depth-two Branch in one kernel
  (:func:`satdt.dp._contree_d2.solve_d2`; on a first run, until that kernel is compiled in
  the background, depth-two subproblems recurse in Python, finding the same optima);
* class-weight bounds (a tree with k leaves classifies at most the k heaviest classes
  right), which rule out a split from the class weights of its sides before they are
  solved (:meth:`_Search._bounds`, and per D2Split call in the depth-two kernel): on data
  with more classes than leaves they save many subproblems;
* a cache of solved subproblems keyed by (row set, remaining depth), holding the exact
  optimum or a lower bound (the optimum is at least the upper bound a search failed under);
* ``max_gap``: the root accepts only trees better than the incumbent by more than the gap,
  so the result is within the gap of the optimum.

The leaf penalty and the minimum support. The search minimises the *cost*: the weighted
error plus ``leaf_penalty`` per leaf, every bound above read in cost units. Each side of a
split costs at least its irreducible error plus one leaf, so a split is tried only below the
subproblem's irreducible error plus two leaves (a leaf is optimal as soon as its error is at
most the irreducible error plus the penalty), and D2Split evaluates a side's split only below
its best less two leaves. ``min_support`` allows a split only with that many training rows
(of positive weight, duplicates each counted) on both sides: the split points of a column
are then a range of positions. Branch's bounds rest on two facts (see
:mod:`satdt.dp._contree_kernels`): adding rows of weight x to a row set raises its optimal
cost by at most x, which holds under both, and no subset costs more than its superset,
which a minimum support breaks (a subset may be too small to split). Then a subset at
depth d costs at most ``(2^d - 1) * max(0, (min_support - 1) * wmax - leaf_penalty)`` more
(``wmax`` the largest row weight), and the bounds that used monotonicity subtract that.

Anytime. At depth three or more a greedy Gini tree (:mod:`satdt.dp.greedy`) is the first
incumbent and the first bound; then the root reports each better tree it completes. The
deadline is looked at before every subproblem and, inside the depth-two kernel, about
every millisecond (a depth-two subproblem of 10^5 rows with thousands of thresholds can
take minutes), so the search stops within milliseconds of it. At depth four or more on
large data, the first improvement over the greedy tree needs a whole depth-three
subproblem solved.

Thresholds. Column c's distinct values over the whole data ``v_0 < v_1 < ...`` give the
thresholds of :class:`satdt.prepare.binarize.Binarizer` with ``max_thresholds=None``: between
``v_r`` and ``v_{r+1}`` the shortest decimal in ``[v_r, v_{r+1})`` near the midpoint. The
search splits a subproblem between two consecutive values of its own rows, ``v_r`` and the
next value present; that threshold sends the same rows left (rank <= r) as the search
assumed, and every returned tree is checked: its recomputed error must match.

Identical rows are merged first (their class weights summed), rows of weight 0 dropped.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import DataError, ParameterError, TimeUp
from ..models.tree import Tree
from ..prepare.rows import group_rows
from ..task.result import Recorder, SearchResult
from ..task.stats import ConTreeStats
from . import _contree_kernels as k
from . import kernels
from .common import SearchSettings, check_inputs, check_leaf_options
from .contree_starts import (
    PRIMAL_DEPTH,
    REL_TOL,
    checked_tree,
    greedy_first,
    penalised_cost,
    primal,
    solve_with_primal,
)

#: The pruning switches (all on by default): ``neighbourhood`` (Eq. (9)), ``shrinking``
#: (interval shrinking, Theorem 2 and Eq. (10)), ``subinterval`` (Theorem 3), ``similarity``
#: (the similarity lower bound of Eq. (3) on each chosen split before solving it) and
#: ``d2split`` (depth-two subproblems by Algorithm 2 in one kernel instead of recursion).
PRUNING = frozenset({"neighbourhood", "shrinking", "subinterval", "similarity", "d2split"})
_FLAGS = {
    "neighbourhood": k.NEIGHBOURHOOD,
    "shrinking": k.SHRINKING,
    "subinterval": k.SUBINTERVAL,
    "similarity": k.SIMILARITY,
}
# Estimated bytes of one cache entry besides its key (tuple, floats, nested tree).
_ENTRY_BYTES = 200


@dataclass(frozen=True)
class PreparedNumeric:
    """The distinct rows as ranks: ``Rt[f, u]`` rank of row u in column f (int32, (m, N)).

    ``values[f]`` are column f's distinct values; ``W`` the class weights of each distinct
    row, ``rw`` their sums, ``rirr`` each row's irreducible error, ``floor`` their total,
    ``cls`` each row's class when it has a single one (else -1), ``rc`` the number of
    training rows (of positive weight) merged into each (int64).
    """

    Rt: np.ndarray
    cls: np.ndarray
    values: list[np.ndarray]
    W: np.ndarray
    rw: np.ndarray
    rirr: np.ndarray
    floor: float
    rc: np.ndarray


@dataclass(frozen=True)
class _Rows:
    """The training rows as ConTree's incumbents are built over them: ``X``, ``y``, the
    weights ``w``, ``n_classes``, their ranks ``prep``, the leaf penalty ``pen`` and the
    minimum support ``s`` (what the greedy first tree and the primal share)."""

    X: np.ndarray
    y: np.ndarray
    w: np.ndarray
    n_classes: int
    prep: PreparedNumeric
    pen: float = 0.0
    s: int = 1


def prepare_numeric(
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    n_classes: int,
    *,
    column_values: list[np.ndarray] | None = None,
    check_time: Callable[[], None] = lambda: None,
) -> PreparedNumeric:
    """Rank every column over the whole data and merge identical rows into class weights.

    ``column_values``: each column's sorted distinct values, when the caller has them (rows
    of weight 0 may add values no kept row has: harmless, the thresholds between kept rows'
    values are the same). ``check_time()`` is called between columns (it raises past the
    deadline).
    """
    used = w > 0
    if not used.all():
        X, y, w = X[used], y[used], w[used]
    n, m = X.shape
    ranks = np.empty((n, m), dtype=np.int32)
    values = []
    for f in range(m):
        vals = np.unique(X[:, f]) if column_values is None else column_values[f]
        values.append(vals)
        ranks[:, f] = np.searchsorted(vals, X[:, f])
        check_time()
    if n:
        first, inverse = group_rows(ranks)
    else:
        first, inverse = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    N = first.shape[0]
    W = np.zeros((N, n_classes))
    np.add.at(W, (inverse, y), w)
    rw = W.sum(axis=1)
    rirr = rw - W.max(axis=1, initial=0.0)
    Rt = np.ascontiguousarray(ranks[first].T)
    cls = np.where((W > 0).sum(axis=1) == 1, W.argmax(axis=1), -1).astype(np.int32)
    rc = np.bincount(inverse, minlength=N).astype(np.int64)
    return PreparedNumeric(
        Rt=Rt, cls=cls, values=values, W=W, rw=rw, rirr=rirr, floor=float(rirr.sum()), rc=rc
    )


def _root_leaf(prep: PreparedNumeric) -> float:
    """Error of the whole data as a single leaf."""
    totals = prep.W.sum(axis=0)
    return float(totals.sum() - totals.max(initial=0.0))


def _root_order(prep: PreparedNumeric, check_time: Callable[[], None] = lambda: None) -> np.ndarray:
    """The root subproblem: all distinct rows sorted by each column (ties by row id);
    ``check_time()`` is called between columns (a column of 10^6 rows sorts in a tenth of a
    second)."""
    m, N = prep.Rt.shape
    order = np.empty((m, N), dtype=np.int32)
    for f in range(m):
        order[f] = np.argsort(prep.Rt[f], kind="stable")
        check_time()
    return order


class _Search:
    """The recursion of Eq. (4)-(6) over subproblems (sorted orders), with the cache.

    ``solve(order, d, ub)`` returns ``(value, node)``: with ``node`` not None, ``value`` is
    the optimal cost of the subproblem at depth ``d`` (below ``ub``) and ``node`` its tree in
    rank space (``-1`` a leaf, or ``(column, rank, left, right)``, rank r sending the rows of
    rank <= r left); otherwise ``value >= ub`` is a lower bound on the optimum. The cost is
    the error plus ``pen`` per leaf, every split with ``s`` training rows on each side.
    ``on_root`` gets each better tree of the root search.
    """

    def __init__(
        self,
        prep: PreparedNumeric,
        flags: int,
        d2: bool,
        max_cache_mb: float,
        deadline: float | None,
        stats: ConTreeStats,
        on_root: Callable[[float, Any], None],
        pen: float = 0.0,
        s: int = 1,
        wmax: float = 0.0,
    ) -> None:
        self.prep = prep
        self.pen = pen
        self.s = s
        # a subset of a row set costs at most gamma more per merged leaf than the set (see
        # satdt.dp._contree_kernels): 0 (monotonicity) without a support rule
        self.gamma = max(0.0, (s - 1) * wmax - pen)
        self.flags = flags
        self.rule = np.zeros(k.N_RULE)
        self.rule[k.RULE_PEN] = pen
        self.rule[k.RULE_SUPPORT] = s
        self.rule[k.RULE_GAMMA] = self.gamma
        self.d2 = d2
        self.d2_kernel: Callable[..., float] | None = None
        self.cap = max_cache_mb * 2**20
        self.deadline = deadline
        self.stats = stats
        self.cache: dict[tuple[int, bytes], tuple[float, Any, bool]] = {}
        self.cache_bytes = 0
        N = prep.Rt.shape[1]
        C = prep.W.shape[1]
        self.goleft = np.zeros(N, dtype=np.bool_)
        self.out = np.zeros(k.N_OUT, dtype=np.int64)
        self.FQ = np.zeros(C)
        self.CL = np.zeros(C)
        self.on_root = on_root

    def _check_time(self) -> None:
        """Raise :class:`TimeUp` past the deadline."""
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            raise TimeUp

    def _d2_ready(self) -> bool:
        """Whether depth-two subproblems go to the D2Split kernel: when asked for (``d2``) and
        compiled; until then (a first run) they recurse in Python, which finds the same optima."""
        if self.d2_kernel is None and self.d2 and kernels.ready(_d2_groups()):
            from ._contree_d2 import solve_d2

            self.d2_kernel = solve_d2
        return self.d2_kernel is not None

    def _store(self, key: tuple[int, bytes], value: float, node: Any, exact: bool) -> None:
        old = self.cache.get(key)
        if old is None:
            size = len(key[1]) + _ENTRY_BYTES
            if self.cache_bytes + size > self.cap:
                self.stats.cache_full = True
                return
            self.cache_bytes += size
        elif old[2] or old[0] >= value:
            return
        self.cache[key] = (value, node, exact)

    def _kernel(self, order: np.ndarray, d: int, ub: float, slack: float) -> tuple[float, Any]:
        p = self.prep
        out = self.out
        self.stats.bottom_solves += 1
        if d == 2:
            deadline = math.inf if self.deadline is None else self.deadline
            value = self.d2_kernel(
                order,
                p.Rt,
                p.W,
                p.rw,
                p.rirr,
                p.cls,
                p.rc,
                self.rule,
                ub,
                slack,
                self.flags,
                self.goleft,
                out,
                deadline,
            )
            self.stats.d2_splits += int(out[k.O_D2SPLITS])
            self.stats.cuts += int(out[k.O_CUTS])
        else:
            value = k.solve_d1(order, p.Rt, p.W, p.rw, p.rirr, p.rc, self.rule, ub, slack, out)
        if not out[k.O_FOUND]:
            return ub, None
        if out[k.O_F1] < 0:
            return value, -1
        children = []
        for f, r in ((out[k.O_FL], out[k.O_RL]), (out[k.O_FR], out[k.O_RR])):
            children.append(-1 if d == 1 or f < 0 else (int(f), int(r), -1, -1))
        return value, (int(out[k.O_F1]), int(out[k.O_R1]), children[0], children[1])

    def _leaf(self, order: np.ndarray, ub: float) -> tuple[float, Any]:
        p = self.prep
        tot, _ = k.class_totals(order[0], p.W, p.rw, p.rirr, self.FQ)
        leaf = float(tot - self.FQ.max(initial=0.0)) + self.pen
        return (leaf, -1) if leaf < ub else (ub, None)

    def solve(
        self, order: np.ndarray, d: int, ub: float, slack: float = 0.0, root: bool = False
    ) -> tuple[float, Any]:
        """The optimum of ``order`` at depth ``d`` if below ``ub`` (see the class docstring).

        At the ``root``, a split is useful only below the best cost minus ``slack`` (the
        gap), each new best tree goes to ``on_root``, and nothing is cached.
        """
        self._check_time()
        if d == 0 or order.shape[1] <= 1:
            return self._leaf(order, ub)
        key = None if root else (d, np.sort(order[0]).tobytes())
        if key is not None:
            hit = self.cache.get(key)
            if hit is not None and (hit[2] or hit[0] >= ub):
                self.stats.cache_hits += 1
                return (hit[0], hit[1]) if hit[0] < ub else (hit[0], None)
        if d == 1 or (d == 2 and self._d2_ready()):
            value, node = self._kernel(order, d, ub, slack)
            if d == 2 and self.out[k.O_TIMEOUT]:
                if root and node is not None:  # the best depth-two tree so far, not proven
                    self.on_root(value, node)
                raise TimeUp
        else:
            value, node = self._branch_all(order, d, ub, slack, root)
        if key is not None:
            self._store(key, value, node, node is not None)
        return value, node

    def _bounds(
        self, left0: np.ndarray, FQ: np.ndarray, tot: float, floor: float, d: int
    ) -> tuple[float, float]:
        """Lower bounds on the costs at depth ``d`` of the two sides of a split (``left0``: the
        left side's rows; ``FQ``, ``tot``, ``floor``: the class weights, total weight and
        irreducible error of both): a leaf, or a split into at most ``2^d`` leaves, which
        classify at most the ``2^d`` heaviest classes right."""
        p = self.prep
        FL = self.FQ
        totL, floorL = k.class_totals(left0, p.W, p.rw, p.rirr, FL)
        bounds = []
        for F, t, fl in ((FL, totL, floorL), (FQ - FL, tot - totL, floor - floorL)):
            top = np.sort(F)[::-1][: 2**d].sum()
            leaf = float(t - F.max(initial=0.0)) + self.pen
            bounds.append(min(leaf, max(fl, float(t - top)) + 2 * self.pen))
        return bounds[0], bounds[1]

    def _split_points(self, order: np.ndarray, FQ: np.ndarray, tot: float) -> tuple:
        """Every column's split points and best single split (``pos, P, Ks, err, hint`` of
        :func:`satdt.dp._contree_kernels.depth_one_all`); raises :class:`TimeUp` past the
        deadline (looked at between columns)."""
        p = self.prep
        m, n = order.shape
        pos = np.empty((m, n), dtype=np.int64)
        P = np.empty((m, n))
        Ks = np.empty(m, dtype=np.int64)
        err = np.empty(m)
        hint = np.empty(m, dtype=np.int64)
        if not k.depth_one_all(
            order, p.Rt, p.W, p.rw, p.rc, self.s, FQ, tot, self.CL, pos, P, Ks, err, hint,
            math.inf if self.deadline is None else self.deadline,
        ):  # fmt: skip
            raise TimeUp
        return pos, P, Ks, err, hint

    def _branch_all(self, order: np.ndarray, d: int, ub: float, slack: float, root: bool):
        """min over columns of Branch (Eq. (4)), each by Algorithm 1 with the children by Eq. (6)."""
        p = self.prep
        pen = self.pen
        m, n = order.shape
        C = p.W.shape[1]
        FQ = np.zeros(C)
        tot, floor = k.class_totals(order[0], p.W, p.rw, p.rirr, FQ)
        best_value, best_node = ub, None
        leaf = float(tot - FQ.max(initial=0.0)) + pen
        if leaf < ub:
            best_value, best_node = leaf, -1
            if root:
                self.on_root(leaf, -1)
        target = best_value - slack if best_node is not None else ub
        least = floor + 2 * pen  # the least cost of a split
        if target <= least:
            return best_value, best_node
        pos, P, Ks, err, hint = self._split_points(order, FQ, tot)
        ctl = np.zeros(k.N_CTL, dtype=np.int64)
        # a superset of a side (depth d - 1) costs at least the side's cost less this
        drop = self.gamma * (2 ** (d - 1) - 1)
        for f in np.argsort(err, kind="stable"):
            f = int(f)
            K = int(Ks[f])
            if K == 0:
                continue
            queue = np.empty((K + 2, 4), dtype=np.int64)
            thL = np.zeros(K)
            thR = np.zeros(K)
            Pf = P[f]
            k.branch_init(queue, ctl, K, int(hint[f]))
            rank_f = p.Rt[f]
            while True:
                w = k.branch_next(queue, ctl, Pf, thL, thR, K, target, self.flags, pen, drop)
                if w < 0:
                    break
                self.stats.expansions += 1
                cut = int(pos[f, w])
                left = np.empty((m, cut), dtype=np.int32)
                right = np.empty((m, n - cut), dtype=np.int32)
                r = int(rank_f[order[f, cut - 1]])
                k.partition(order, rank_f, r, left, right)
                lbl, lbr = self._bounds(left[0], FQ, tot, floor, d - 1)
                if lbl + lbr >= target:  # the class weights alone rule the split out
                    ctl[k.PRUNED] += 1
                    k.branch_update(
                        queue, ctl, Pf, thL, thR, target, self.flags, pen, drop, lbl, lbr
                    )
                    self._check_time()  # a partition of the rows each: the clock between
                    continue
                # The larger side first, with the bound target (less a leaf, the other
                # side's least cost); the other with target less the first's cost plus the
                # weight between w and the far end of its interval (and the drop), so that if
                # it fails, Corollary 1 prunes that whole interval (the paper's eta,
                # Algorithm 1, lines 13-15).
                i, j = int(ctl[k.CUR_I]), int(ctl[k.CUR_J])
                eta = max(Pf[w] - Pf[i], Pf[j] - Pf[w]) + drop
                big, small = (left, right) if 2 * cut >= n else (right, left)
                t1, n1 = self.solve(big, d - 1, target - pen)
                ub2 = target - t1 + eta
                if ub2 > pen:
                    t2, n2 = self.solve(small, d - 1, ub2)
                else:  # it costs at least a leaf: its least cost, a lower bound
                    t2, n2 = float(p.rirr[small[0]].sum()) + pen, None
                (tl, nl), (tr, nr) = ((t1, n1), (t2, n2)) if big is left else ((t2, n2), (t1, n1))
                if nl is not None and nr is not None and tl + tr < target:
                    best_value, best_node = tl + tr, (f, r, nl, nr)
                    target = best_value - slack
                    if root:
                        self.on_root(best_value, best_node)
                k.branch_update(queue, ctl, Pf, thL, thR, target, self.flags, pen, drop, tl, tr)
                if target <= least:
                    break
            self.stats.cuts += int(ctl[k.PRUNED])
            if target <= least:
                break
        if best_node is None:
            return ub, None
        return best_value, best_node


def _flags(prune: Iterable[str]) -> tuple[int, bool]:
    """The kernels' bit flags of the switches, and whether D2Split is on."""
    switches = frozenset(prune)
    unknown = switches - PRUNING
    if unknown:
        raise ParameterError(
            f"unknown pruning switches {sorted(unknown)}: choose among {sorted(PRUNING)}"
        )
    flags = 0
    for name, bit in _FLAGS.items():
        if name in switches:
            flags |= bit
    return flags, "d2split" in switches


@dataclass(frozen=True)
class ConTreeOptions:
    """ConTree's own options (:func:`solve_min_error`).

    Attributes
    ----------
    max_gap
        The paper's optimality gap, in cost units: an absolute amount (``>= 1``) or, when
        below 1, a fraction of the total weight. The result is within it of the optimum;
        ``lower_bound`` is the best cost less the gap, and ``proven_optimal`` needs a gap of 0.
    max_cache_mb
        Cap on the cache of solved subproblems (an estimate of its memory); once reached it
        stops storing and the search stays exact.
    prune
        The names of the switches of :data:`PRUNING` to use (all by default); for ablation
        studies. Every combination gives the same optimum.
    column_values
        Each column's sorted distinct values over the rows of positive weight, when the
        caller has them (the estimator's data preparation does).
    """

    max_gap: float = 0.0
    max_cache_mb: float = 512
    prune: Iterable[str] = PRUNING
    column_values: list[np.ndarray] | None = None


def solve_min_error(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    max_depth: int,
    settings: SearchSettings,
    options: ConTreeOptions = ConTreeOptions(),
) -> SearchResult:
    """Minimum-cost tree of depth at most ``max_depth`` on numeric features, by ConTree.

    The cost is the weighted error plus ``leaf_penalty`` per leaf (the error alone by
    default); every value reported (incumbents, ``upper_bound``, ``lower_bound``) is a cost.

    Parameters
    ----------
    X
        float64 ``(n, m)`` design matrix without NaN; a node ``(c, t)`` sends ``x[c] <= t`` left.
    y, n_classes, max_depth, settings
        As :func:`satdt.dp.blossom.solve_min_error`: class indices, number of classes,
        maximum depth, and the shared settings (:class:`~satdt.dp.common.SearchSettings`):
        the rows' non-negative weights, a ``time.perf_counter()`` value to stop at, the
        recorder receiving every incumbent (and a :class:`~satdt.task.stats.ConTreeStats`), the
        cost of an incumbent already on the recorder that the search must beat, the leaf
        penalty and the minimum support (duplicates counted one each; above 1 some of
        Branch's bounds are weaker, see the module docstring).
    options
        ConTree's own (:class:`ConTreeOptions`): the permitted gap, the cache's cap, the
        pruning switches, the columns' values.

    Returns
    -------
    SearchResult
        The recorder's snapshot; ``proven_optimal`` when the search completed with no gap.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    w = settings.weights(len(y))
    recorder, deadline, upper_bound = settings.recorder, settings.deadline, settings.upper_bound
    max_gap, max_cache_mb = options.max_gap, options.max_cache_mb
    check_inputs(X, y, w, n_classes, max_depth, binary=False)
    pen, s = check_leaf_options(settings.leaf_penalty, settings.min_support)
    if not (max_gap >= 0):
        raise ParameterError(f"max_gap must be >= 0; got {max_gap}")
    flags, d2 = _flags(options.prune)
    if d2 and not kernels.request(_d2_groups()):  # no background compilation: here, now
        kernels.load(_d2_groups())
    total = float(w.sum())
    tol = REL_TOL * max(1.0, total)
    gap = float(max_gap) * total if 0 < max_gap < 1 else float(max_gap)
    slack = max(gap, tol)
    _check_upper_bound(upper_bound, recorder, tol)

    def check_time() -> None:
        if deadline is not None and time.perf_counter() >= deadline:
            raise TimeUp

    try:
        prep = prepare_numeric(
            X, y, w, n_classes, column_values=options.column_values, check_time=check_time
        )
        order = _root_order(prep, check_time)
    except TimeUp:  # stopped while ranking or sorting the columns
        return _stopped_before_search(recorder, X, y, w, n_classes, pen)
    m, N = prep.Rt.shape
    stats = ConTreeStats(
        rows=int(X.shape[0]),
        distinct_rows=int(N),
        features=int(m),
        features_used=int(m),
        irreducible_error=prep.floor,
    )
    recorder.stats = stats
    ub = math.inf if upper_bound is None else float(upper_bound) - slack

    def report(value: float, node: Any) -> None:
        tree = checked_tree(value, node, prep, X, y, w, n_classes, pen, s)
        if recorder.best is None or value < recorder.best.value:
            recorder.improve(tree, value)

    rows = _Rows(X, y, w, n_classes, prep, pen, s)
    wmax = float(w.max(initial=0.0))
    search = _Search(prep, flags, d2, max_cache_mb, deadline, stats, report, pen, s, wmax)
    proven = False
    # a greedy first tree: an incumbent at once, a bound to prune (unless the caller's
    # incumbent, such as the estimator's greedy tree on large tables, already gives one)
    if max_depth >= 3 and N > 1 and upper_bound is None:
        ub = greedy_first(rows, report, max_depth, deadline, ub, slack)
    try:
        if N == 0 or m == 0:  # nothing to split: a leaf
            value, node = _root_leaf(prep) + pen, -1
        elif deadline is not None and max_depth >= PRIMAL_DEPTH:
            value, node = solve_with_primal(
                search, order, int(max_depth), ub, slack, deadline, recorder,
                lambda until: primal(rows, report, max_depth, until),
            )  # fmt: skip
        else:
            value, node = search.solve(order, int(max_depth), ub, slack=slack, root=True)
        if node is not None:
            report(value, node)
        proven = True
    except TimeUp:
        stats.interrupted = True
    if recorder.best is None:  # stopped before the first tree: the root as a leaf
        report(_root_leaf(prep) + pen, -1)
    stats.cache_entries = len(search.cache)
    stats.cache_mb = search.cache_bytes / 2**20
    return _snapshot(recorder, proven, gap, least=prep.floor + pen)


def _stopped_before_search(
    recorder: Recorder, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, pen: float
) -> SearchResult:
    """The result of a search stopped while the columns were ranked or sorted: the caller's
    incumbent, else the root as a leaf, not proven."""
    recorder.stats = ConTreeStats(rows=int(X.shape[0]), interrupted=True)
    if recorder.best is None:
        totals = np.bincount(y, weights=w, minlength=n_classes)
        leaf = Tree.single_leaf(int(totals.argmax()), np.arange(n_classes)).with_counts(X, y, w)
        recorder.improve(leaf, penalised_cost(leaf, pen))
    return recorder.snapshot(proven_optimal=False)


def _snapshot(recorder: Recorder, proven: bool, gap: float, least: float) -> SearchResult:
    """The result with its lower bound: the best cost (less the permitted gap) when the
    search completed, else ``least`` (any tree costs at least the irreducible error and a
    leaf)."""
    best_value = recorder.best.value
    if proven:
        recorder.lower_bound = best_value if gap == 0 else max(best_value - gap, least)
        recorder.gap = gap
    else:
        recorder.lower_bound = least
    return recorder.snapshot(proven_optimal=proven and gap == 0)


def _check_upper_bound(upper_bound: float | None, recorder: Recorder, tol: float) -> None:
    """An ``upper_bound`` must come with its tree on the recorder (the result returns it)."""
    if upper_bound is None:
        return
    best = recorder.best
    if best is None or best.value > float(upper_bound) + tol:
        seen = "no incumbent" if best is None else f"an incumbent of cost {best.value}"
        raise DataError(
            f"upper_bound={upper_bound} needs the tree it comes from on the recorder; "
            f"the recorder holds {seen}: record that tree first (recorder.improve)"
        )


def _d2_groups() -> tuple[str, ...]:
    """The depth-two kernel's groups (from the table of searches)."""
    from .kernels import kernels_of

    return kernels_of("contree").later
