"""DL8.5 on several cores: the root's splits shared out among worker processes, Blossom here.

What :func:`satdt.dp.portfolio.solve_min_error` runs with ``n_jobs >= 2`` at depth 4 or more.
DL8.5's root (Algorithm 1, lines 13-29, Kiossou, Nijssen & Schaus) tries each feature in Gini
order, each split one independent subproblem: its two children searched under the best tree's
cost. Here ``n_jobs`` forked workers take the root's features from one shared queue (work
stealing at the top: a worker that finishes a feature takes the next one in Gini order), each
with its own DL8.5 search and cache (the cap ``max_cache_mb`` shared out, so the memory bound
holds for the fit) and the best complete tree's cost in shared memory as the bound its next
split must beat. That bound is read before each split; a split in progress keeps the bound it
started with (DL8.5 passes bounds down the recursion), so a worker may search more than the
one-core search does, never less than needed: the optimum is the same. The node reached by
splitting on ``f`` then ``g`` is reached by ``g`` then ``f`` too, often in another worker:
what the workers prove of the nodes with three or more levels left goes to a table of bounds
in shared memory (:class:`_Bounds`), which cuts such a node at once wherever it is met again
under a bound it cannot beat (what one cache does on one core). The three-level kernel's cache
of children (the nodes with two levels left, the bulk of the work) is shared as well
(:class:`_Children`): each worker writes its own table and reads the others'.

This process runs Blossom (:class:`~satdt.dp.blossom.BlossomRun`) in slices between looks at
the workers' messages, for its first trees and beside them while its slices improve the
incumbent (its share of a core halves after each slice that did not, down to ``MIN_RATIO``).
Every tree, a worker's (the root's splits and the path trees within them) or Blossom's, goes to
the recorder and tightens the shared bound and Blossom. The optimum is proven when every root
feature is done (or when Blossom exhausts its space); stopped earlier (the deadline, Ctrl-C),
the lower bound is the least bound of the features not done. Workers ignore Ctrl-C (this
process stops them and keeps the best tree), stop at the deadline, and exit by themselves when
this process is gone (killed, say): they look at their parent between two DL8.5 nodes.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import multiprocessing as mp
import os
import time
import zlib
from dataclasses import dataclass, fields
from multiprocessing.connection import wait
from typing import Any

import numpy as np

from ..core.errors import TimeUp, honour_interrupt
from ..task.result import SearchResult
from ..task.stats import DL85Stats, DPStats, PortfolioStats
from ._dl85_anytime import LEAF
from .common import PreparedBinary, SearchSettings
from .parallel import start_process

# Seconds of Blossom alone first: what it proves by then (a small problem) starts no worker;
# short, since a worker starts in milliseconds (a fork) and a second of proof on two cores
# should not wait a tenth of it
ALONE = 0.02
MIN_DEPTH = 4  # below, the root's children would not use the three-level kernel: one search
SLICE = 0.02  # seconds of Blossom per slice
# Blossom's seconds per second spent waiting for the workers: at first, at most (while its slices
# improve the incumbent: a third of a core) and at least (after slices that did not)
START_RATIO, MAX_RATIO, MIN_RATIO = 1.0 / 16.0, 0.5, 1.0 / 32.0
EVERY = 0.005  # seconds of DL8.5 between two looks at the parent and the stop flag
STOP_WAIT = 0.05  # seconds the workers have to send their counters once asked to stop
# the shared array: the workers' best cost (written under the lock), the parent's (written by
# the parent alone, which takes no lock: killed, it leaves none held), the stop flag, the next
# feature to take, the root's number of features (-1 until a worker wrote it), then each
# feature's bound (its split's, raised once searched)
_BEST, _PARENT, _STOP, _NEXT, _COUNT, _BOUNDS = 0, 1, 2, 3, 4, 5
_DONE = 2  # a feature's status once its split is searched (else 0, or 1 while in progress)


class _Stopped(Exception):
    """The parent asked the workers to stop (a proof, the deadline there, Ctrl-C)."""


class _Watch:
    """A worker's look-up between DL8.5 nodes (a :class:`~satdt.dp._dl85_anytime.Companion`):
    exit when the parent is gone, stop when asked, and trade the news of the caches of
    children with the other workers (``trade``, once the search has its cache)."""

    every = EVERY

    def __init__(self, shared, parent: int) -> None:
        self.shared, self.parent = shared, parent
        self.trade = None

    def pause(self, now: float) -> bool:
        if os.getppid() != self.parent:  # the parent is gone: nobody wants the answer
            os._exit(0)
        if self.shared[_STOP]:
            raise _Stopped
        if self.trade is not None:
            self.trade()
        return False


class _Children:
    """The workers' caches of children (the nodes with two levels left that the three-level
    kernel solves, :mod:`satdt.dp._dl85_three`) in memory they share: one table per worker,
    each written by its worker alone and read by the others.

    The same child is reached under root split ``f`` (then ``g``, ``h``) and under ``g`` or
    ``h``, often in another worker: without this each worker solved it again (two workers on
    heart-cleveland at depth 5 made 40 % more depth-two solves than one). A worker says how
    many of its entries are complete (``count``, written under ``lock`` after the kernel
    that wrote them returned) and reads the others' counts under the same lock: what it then
    reads of their tables, below those counts, was written before (the lock orders the
    two). Between two looks (every :data:`EVERY` seconds of search) a child another worker
    is solving is solved twice; the result is the same, as it is exact. The tables are one
    anonymous shared mapping, whose zeroed pages the system hands out as they are written.
    """

    def __init__(self, ctx, n_jobs: int, cache_bytes: float) -> None:
        from .common import child_cache_sizes

        slots, entries, cells = child_cache_sizes(cache_bytes)
        shapes = [
            ("slots", np.int64, (slots,)),
            ("keys", np.int64, (entries,)),
            ("values", np.float64, (entries,)),
            ("subtrees", np.int64, (entries, 3)),
            ("starts", np.int64, (entries,)),
            ("lens", np.int64, (entries,)),
            ("pool", np.int32, (cells,)),
            ("count", np.int64, ()),
        ]
        sizes = [n_jobs * np.dtype(dtype).itemsize * math.prod(shape) for _, dtype, shape in shapes]
        self.memory = mmap.mmap(-1, sum(-(-size // 8) * 8 for size in sizes))  # 8-byte aligned
        self.arrays: dict[str, np.ndarray] = {}
        offset = 0
        for (name, dtype, shape), size in zip(shapes, sizes, strict=True):
            count = size // np.dtype(dtype).itemsize
            flat = np.frombuffer(self.memory, dtype, count, offset)
            self.arrays[name] = flat.reshape((n_jobs, *shape))
            offset += -(-size // 8) * 8
        self.lock = ctx.Lock()

    def table(self, w: int) -> tuple[np.ndarray, ...]:
        """Worker ``w``'s own table (its rows of the shared arrays)."""
        names = ("slots", "keys", "values", "subtrees", "starts", "lens", "pool")
        return tuple(self.arrays[name][w] for name in names)

    def peers(self, w: int):
        """The tables of the other workers, as worker ``w`` reads them (nothing visible yet)."""
        from .common import Peers

        a = self.arrays
        limit = np.zeros(a["count"].shape[0], dtype=np.int64)
        limit[w] = -1
        return Peers(
            a["slots"], a["keys"], a["values"], a["subtrees"], a["starts"], a["lens"],
            a["pool"], limit,
        )  # fmt: skip

    def trade(self, w: int, three) -> None:
        """Say how many of worker ``w``'s entries are complete; read the others' counts."""
        count, limit = self.arrays["count"], three.peers.limit
        with self.lock:
            count[w] = three.fill[0]
            limit[:] = count
        limit[w] = -1


def _best(shared) -> float:
    """The best tree's cost known to the workers and the parent."""
    return min(shared[_BEST], shared[_PARENT])


def _lower_shared(shared, lock, value: float) -> None:
    """A worker's better tree: its cost becomes the workers' best (under the lock)."""
    with lock:
        if value < shared[_BEST]:
            shared[_BEST] = value


class _Bounds:
    """What the workers proved of the nodes with three or more levels left, in shared memory:
    per node, a cost its optimum is at least (exactly its optimum when a tree was found).

    The same node is met under different root splits (rows without ``f`` then without ``g``,
    or the other way round), in different workers; each worker's own cache keeps its trees,
    this table the bounds that let another worker cut the node at once (the cut that a
    shared cache would give; Algorithm 1, lines 9-11). A node's key (the hash of its levels
    left and rows) picks a bucket of ``BUCKET`` slots, a second hash checks the entry; no
    replacement: a full bucket stops storing, like the cache. Each bucket is read and written
    under one of ``STRIPES`` locks, so workers seldom wait for one another (nor for one the
    system paused while it held a lock). The table is an anonymous shared mapping: the system
    hands out its zeroed pages as they are written, so a small search pays for the entries it
    stores, not for the table's size.
    """

    BUCKET = 8
    STRIPES = 64

    def __init__(self, ctx, entries: int) -> None:
        self.size = 1 << max(10, entries.bit_length() - 1)  # at most ``entries``, at least 1024
        self.memory = mmap.mmap(-1, 24 * self.size)  # shared with the forked workers
        self.keys = np.frombuffer(self.memory, np.int64, self.size, 0)
        self.checks = np.frombuffer(self.memory, np.int64, self.size, 8 * self.size)
        self.values = np.frombuffer(self.memory, np.float64, self.size, 16 * self.size)
        self.locks = [ctx.Lock() for _ in range(self.STRIPES)]

    def _bucket(self, key: int) -> tuple[int, Any]:
        """The first slot of the key's bucket, and its lock."""
        start = key & (self.size - self.BUCKET)
        return start, self.locks[(start // self.BUCKET) % self.STRIPES]

    def get(self, key: int, check: int) -> float:
        """The node's bound, or ``-inf`` when none is stored."""
        start, lock = self._bucket(key)
        keys, checks = self.keys, self.checks
        with lock:
            for slot in range(start, start + self.BUCKET):
                if keys[slot] == 0:
                    return -math.inf
                if keys[slot] == key and checks[slot] == check:
                    return float(self.values[slot])
        return -math.inf

    def put(self, key: int, check: int, value: float) -> None:
        """Store the node's bound (raise it, if one is stored); nothing when the bucket is full."""
        start, lock = self._bucket(key)
        keys, checks, values = self.keys, self.checks, self.values
        with lock:
            for slot in range(start, start + self.BUCKET):
                if keys[slot] == 0:
                    keys[slot], checks[slot], values[slot] = key, check, value
                    return
                if keys[slot] == key and checks[slot] == check:
                    values[slot] = max(values[slot], value)
                    return


_INT64 = (1 << 63) - 1


def _node_keys(rem: int, rows: np.ndarray) -> tuple[int, int]:
    """A node's key (never 0) and check: two independent hashes of its levels left and rows."""
    data = rows.tobytes()
    key = hash((rem, data)) or 1  # the workers share the parent's hash seed (forked)
    return key, ((zlib.crc32(data) << 8) ^ rem ^ (rows.size << 40)) & _INT64


def _shared_search(base):
    """DL8.5's search class with the shared table of bounds in front of its nodes with three
    or more levels left: a node whose stored bound reaches its upper bound is cut at once,
    and every such node's result is stored (its optimum, or the bound it failed to beat);
    its three-level kernel's cache of children is worker ``worker``'s table of ``children``,
    and it reads the others'."""

    class SharedSearch(base):
        bounds: _Bounds
        children: _Children
        worker: int

        def _new_three(self):
            from .common import new_three_level

            n_rows, n_features, n_classes, _ = self._three_size
            children, w = self.children, self.worker
            return new_three_level(
                n_rows, n_features, n_classes, table=children.table(w), peers=children.peers(w)
            )

        def node(self, rows, rem, depth, ub, state):
            if rem < 3:
                return super().node(rows, rem, depth, ub, state)
            key, check = _node_keys(rem, rows)
            known = self.bounds.get(key, check)
            if known >= ub:
                self.hits += 1
                return known, None, True
            value, tree, terminal = super().node(rows, rem, depth, ub, state)
            if terminal and value > known:
                self.bounds.put(key, check, value)
            return value, tree, terminal

    return SharedSearch


@dataclass(frozen=True)
class _Board:
    """What the parent and its workers share: ``shared`` (the bounds and the queue, laid out
    as the indices above say), ``status`` (each root split's: 0, 1 in progress, ``_DONE``),
    the ``lock`` over both, the table of proved node ``bounds``, the workers' caches of
    ``children`` and the parent's pid."""

    shared: Any
    status: Any
    lock: Any
    bounds: _Bounds
    children: _Children
    parent: int


def _worker(
    conn: Any,
    board: _Board,
    w: int,
    prep: PreparedBinary,
    K: int,
    settings: SearchSettings,
    cache_mb: float,
    tol: float,
) -> None:
    """One worker (run in a forked process): the root's splits taken from the shared queue,
    each searched by DL8.5 under the shared bound; its trees go to the parent through ``conn``,
    then ``("done", all_done, seconds, stats)``."""
    shared, status, lock = board.shared, board.status, board.lock
    from ._counts import node_totals  # all loaded in the parent before the fork
    from ._dl85_search import Search, _leaf
    from .dl85 import _fill_stats

    tic = time.perf_counter()
    P = settings.leaf_penalty
    sent = [math.inf]

    def on_root(value: float, nested: Any) -> None:  # a path tree within a root split
        if value < min(sent[0], _best(shared) - tol):
            sent[0] = value
            conn.send(("tree", value, nested))
            _lower_shared(shared, lock, value)

    search = None
    finished = False
    watch = _Watch(shared, board.parent)
    SharedSearch = _shared_search(Search)
    SharedSearch.bounds, SharedSearch.children, SharedSearch.worker = (
        board.bounds,
        board.children,
        w,
    )
    try:
        search = SharedSearch(
            prep, K, settings.min_support, P, cache_mb, settings.deadline, tol, on_root, watch
        )

        def trade() -> None:
            if search.three is not None:
                board.children.trade(w, search.three)

        watch.trade = trade
        data = prep.data
        rows = np.arange(data.Bd.shape[0], dtype=np.int32)
        tot = np.empty(data.W.shape[1])
        lb = float(node_totals(rows, data.W, data.rirr, tot)) + 2 * P
        leaf = _leaf(tot) + P
        cand, single = search._candidates(rows, tot)
        val = search._split_bounds(rows, tot, cand, single)
        with lock:  # every worker computes the same features: the first one publishes them
            if shared[_COUNT] < 0:
                shared[_BOUNDS : _BOUNDS + cand.size] = val
                shared[_COUNT] = cand.size
        while True:
            with lock:
                i = int(shared[_NEXT])
                shared[_NEXT] = i + 1
                if i < cand.size:
                    status[i] = 1
            if i >= cand.size:
                finished = True
                break
            child_ub = min(leaf, _best(shared) - tol)
            value = val[i]
            if lb < child_ub - tol and val[i] < child_ub:
                search.frames[:] = [[leaf, child_ub, None, -1, -1, 0.0, 0.0, None, i, cand.size]]
                f = int(cand[i])
                value, lt, rt, _ = search._branch(
                    rows, None, f, tot, single[i], K, 0, child_ub, 0.0, search.frames[0]
                )
                if rt is not None and value < child_ub:
                    on_root(value, (f, lt, rt))
            else:
                search.cuts += 1
            shared[_BOUNDS + i] = max(val[i], value)
            status[i] = _DONE
            trade()
    except (_Stopped, TimeUp):
        pass
    except Exception as exc:  # the parent raises it (an internal error, say)
        with contextlib.suppress(OSError):  # the parent stopped listening
            conn.send(("error", exc))
        return
    stats = DL85Stats()
    if search is not None:
        _fill_stats(stats, search)
    with contextlib.suppress(OSError):
        conn.send(("done", finished, time.perf_counter() - tic, stats))


def solve_min_error(
    prep: PreparedBinary,
    source: tuple[np.ndarray, np.ndarray, np.ndarray, int],
    K: int,
    settings: SearchSettings,
    *,
    n_jobs: int,
    bound: float,
    tol: float,
    blossom_stats: DPStats,
    max_cache_mb: float,
) -> SearchResult:
    """The optimum of depth at most ``K`` by ``n_jobs`` DL8.5 workers sharing the root's
    splits, with Blossom in this process.

    ``prep`` is the data prepared from ``source`` = ``(B, y, w, n_classes)``; ``bound`` the
    cost a tree must beat (the caller's incumbent less the tolerance ``tol``, or ``inf``);
    ``settings`` the portfolio's, checked; ``max_cache_mb`` the cache cap of the whole fit,
    shared out among the workers. The kernels of both searches must be loaded here (the
    workers inherit them). ``recorder.stats`` becomes a
    :class:`~satdt.task.stats.PortfolioStats`: the workers' counters summed, Blossom's, the
    longest worker's seconds, and who proved the optimum.
    """
    from . import blossom, dl85  # loaded here before the fork: the workers share them
    from ._dl85_search import three_cache_bytes

    tic = time.perf_counter()
    recorder, deadline = settings.recorder, settings.deadline
    B, y, w, n_classes = source
    P = settings.leaf_penalty
    run = blossom.BlossomRun(
        prep, K, bound, source, recorder, blossom_stats, P, settings.min_support
    )
    alone = tic + ALONE
    if run.advance(alone if deadline is None else min(alone, deadline)) or _past(deadline):
        run.finish()  # proven (or out of time) before any worker started
        recorder.stats = _stats(run, [], tic, run.proven, run.proven)
        return recorder.snapshot(proven_optimal=run.proven)

    def to_tree(nested: Any):
        return dl85._to_tree(nested, prep, B, y, w, n_classes)

    on_root, _ = dl85._reporter(recorder, bound, tol, P, to_tree)
    M = prep.data.Bd.shape[1]
    ctx = mp.get_context("fork")
    best = recorder.best
    start = math.inf if best is None else best.value
    shared = ctx.RawArray("d", [start, start, 0, 0, -1] + [0.0] * M)
    status = ctx.RawArray("b", M)
    lock = ctx.Lock()
    # an eighth of the cache's cap for the shared bounds (24 bytes an entry), the rest theirs
    bounds = _Bounds(ctx, int(max_cache_mb * 2**20 / 8 / 24))
    cache_mb = max_cache_mb * 7 / 8 / n_jobs
    children = _Children(ctx, n_jobs, three_cache_bytes(cache_mb))
    board = _Board(shared, status, lock, bounds, children, os.getpid())
    messages = _Messages(on_root)
    workers = []
    by_blossom = proven = False
    try:
        for number in range(n_jobs):
            reader, writer = ctx.Pipe(duplex=False)
            args = (writer, board, number, prep, K, settings, cache_mb, tol)
            worker = start_process(ctx, _worker, args)  # it ignores Ctrl-C, ours to handle
            writer.close()  # the worker holds the only writing end: its death ends the file
            messages.open.append(reader)
            workers.append(worker)
        by_blossom = _race(run, messages, shared, tol, deadline)
        proven = by_blossom or messages.all_done()
    finally:  # also on Ctrl-C: stop the workers, keep what they sent, and the counters
        shared[_STOP] = 1.0
        with contextlib.suppress(Exception):
            messages.drain(STOP_WAIT, until_done=True)
        for worker in workers:
            worker.kill()
            worker.join()
        for reader in messages.open:
            reader.close()
        if proven and not by_blossom:  # no split beat the root as a leaf: the leaf, if below
            tot = prep.data.W.sum(axis=0)  # the caller's bound
            on_root(float(tot.sum() - tot.max(initial=0.0)) + P, LEAF)
        run.finish()  # Blossom's counters and bound; the root as a leaf if no tree yet
        recorder.stats = _stats(run, messages.done, tic, by_blossom, proven)
    if proven:
        recorder.lower_bound = recorder.best.value
    else:
        least = max(recorder.lower_bound, prep.floor + P)  # Blossom's bound, or any tree's
        recorder.lower_bound = min(recorder.best.value, _lower_bound(shared, status, least))
    return recorder.snapshot(proven_optimal=proven)


class _Messages:
    """This process's side of the workers' pipes: their trees go to the recorder (through
    ``on_root``, which re-checks each against the data) as they come."""

    def __init__(self, on_root) -> None:
        self.on_root = on_root
        self.open: list = []  # the pipes of the workers that have not sent their end
        self.done: list[tuple[bool, float, DL85Stats]] = []
        # a worker died (killed, say, by the system short of memory): the others may wait
        # for a lock it held, so the search stops, unproven
        self.lost = False

    def all_done(self) -> bool:
        """Whether every worker ended with the root's features all searched."""
        return not self.open and all(d[0] for d in self.done)

    def drain(self, timeout: float = 0.0, *, until_done: bool = False) -> None:
        """Take every message waiting (for up to ``timeout`` seconds for the first, or for
        every worker's last with ``until_done``); raise a worker's exception if it failed."""
        end = time.perf_counter() + timeout
        while self.open:
            ready = wait(self.open, max(0.0, end - time.perf_counter()))
            if not ready:
                return
            for conn in ready:
                try:
                    message = conn.recv()
                except (EOFError, OSError):  # the worker died (killed): its features undone
                    self.open.remove(conn)
                    conn.close()
                    self.done.append((False, 0.0, DL85Stats()))
                    self.lost = True
                    continue
                if message[0] == "tree":
                    self.on_root(message[1], message[2])
                elif message[0] == "error":
                    raise message[1]
                else:
                    self.open.remove(conn)
                    conn.close()
                    self.done.append(message[1:])
            if not until_done:
                end = time.perf_counter()  # the rest without waiting


def _race(run, messages: _Messages, shared, tol: float, deadline: float | None) -> bool:
    """Blossom in slices, the workers' trees taken in between, until every worker is done
    (or one died), Blossom proves, or the deadline: whether Blossom proved."""
    recorder = run.recorder
    ratio = START_RATIO  # Blossom's seconds per second of waiting (halved after an idle slice)
    while True:
        honour_interrupt()  # a Ctrl-C that other code swallowed
        best = recorder.best
        if best is not None and best.value < shared[_PARENT]:
            shared[_PARENT] = best.value
        if best is not None:
            run.tighten(best.value - tol)
        if not run.proven:
            before = len(recorder.history)
            until = time.perf_counter() + SLICE
            if run.advance(until if deadline is None else min(until, deadline)):
                return True
            grew = len(recorder.history) > before
            ratio = min(MAX_RATIO, ratio * 2.0) if grew else max(MIN_RATIO, ratio / 2.0)
        wait_for = SLICE / ratio
        if deadline is not None:
            wait_for = max(0.0, min(wait_for, deadline - time.perf_counter()))
        messages.drain(wait_for)
        if not messages.open or messages.lost or _past(deadline):
            return False


def _stats(run, done: list, tic: float, by_blossom: bool, proven: bool) -> PortfolioStats:
    """The workers' counters summed (the cache flags or-ed), Blossom's beside them."""
    total = DL85Stats(**{f.name: getattr(run.stats, f.name) for f in fields(DPStats)})
    for name in ("expansions", "bottom_solves", "cuts", "similarity_cuts"):
        setattr(total, name, 0)
    seconds = 0.0
    for _, worker_seconds, stats in done:
        seconds = max(seconds, worker_seconds)
        for name in (
            "expansions", "bottom_solves", "cuts", "similarity_cuts", "nodes", "cache_hits",
            "cache_entries", "cache_mb",
        ):  # fmt: skip
            setattr(total, name, getattr(total, name) + getattr(stats, name))
        total.cache_full = total.cache_full or stats.cache_full
    return PortfolioStats(
        **vars(total),
        blossom=run.stats,
        blossom_seconds=time.perf_counter() - tic,
        dl85_seconds=seconds,
        proven_by=("blossom" if by_blossom else "dl85") if proven else "",
    )


def _lower_bound(shared, status, least: float) -> float:
    """Stopped before a proof: the least bound of the root's splits not done (the bound of a
    split no worker finished: what it costs at least), and never below ``least`` (what any
    tree costs at least); ``least`` alone before a worker listed the root's features."""
    count = int(shared[_COUNT])
    pending = [shared[_BOUNDS + i] for i in range(max(count, 0)) if status[i] != _DONE]
    return max(least, min(pending, default=math.inf)) if count >= 0 else least


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline
