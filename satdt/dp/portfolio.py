"""Blossom and CA-DL8.5 sharing one incumbent (``method="portfolio"``, and ``auto``).

Blossom finds good trees almost at once (it always completes the current tree first), and is
the best anytime search under 15-30 s in Kiossou, Nijssen & Schaus (CA-DL8.5, Tables 2-3);
CA-DL8.5's restarts under a pruning rule reach the optimum sooner on deeper trees and
prove it through the restart that cut nothing (Algorithm 2). The portfolio runs Blossom
alone for a first slice, then alternates: CA-DL8.5 runs, and every ``every`` seconds of it
Blossom resumes (:class:`~satdt.dp.blossom.BlossomRun` keeps its state between slices) for
its share of the time. Both report to the same recorder; each restart of CA-DL8.5 starts
from the incumbent, whoever found it, and Blossom prunes with it. Both searches are
complete, so whichever exhausts its space first proves the incumbent optimal. That is the
one-core schedule (``n_jobs=1``); with ``n_jobs >= 2`` the two run at the same time, in two
processes (:mod:`satdt.dp.parallel`).
"""

from __future__ import annotations

import time

import numpy as np

from ..result import DPStats, PortfolioStats, Recorder, SearchResult
from . import kernels, parallel
from .common import bound_to_beat, check_inputs, check_leaf_options, prepare_binary, tolerance

# CA-DL8.5's rule with the lowest primal integrals besides Blossom in benchmarks/anytime.py.
DEFAULT_RULE = "topk"
FIRST_SLICE = 0.5  # seconds of Blossom alone: its first trees
BLOSSOM_SHARE = 0.5  # then Blossom's fraction of the time
EVERY = 0.05  # seconds of CA-DL8.5 between two Blossom slices


class _BlossomSlices:
    """Blossom as CA-DL8.5's companion: resumed between DL8.5 nodes for its share of time.

    ``start()`` makes the search once Blossom's kernels are ready (``None``: not yet; the
    kernels may still be compiling in the background when CA-DL8.5 starts).
    """

    def __init__(self, run, start, recorder: Recorder, tol: float, deadline, share, every):
        self.run, self.start, self.recorder = run, start, recorder
        self.tol, self.deadline = tol, deadline
        self.ratio = share / (1.0 - share)
        self.every = every
        self.resumed = time.perf_counter()
        self.seconds = 0.0

    def pause(self, now: float) -> bool:
        if self.run is None:
            self.run = self.start()
            if self.run is None:
                return False
            self.resumed = now  # Blossom's share counts from its start
        best = self.recorder.best
        if best is not None:
            self.run.tighten(best.value - self.tol)
        until = now + self.ratio * (now - self.resumed)
        if self.deadline is not None:
            until = min(until, self.deadline)
        proven = self.run.advance(until)
        self.resumed = time.perf_counter()
        self.seconds += self.resumed - now
        return proven


def solve_min_error(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    max_depth: int,
    *,
    sample_weight: np.ndarray | None = None,
    deadline: float | None = None,
    recorder: Recorder,
    upper_bound: float | None = None,
    leaf_penalty: float = 0.0,
    min_support: int = 1,
    rule: str = DEFAULT_RULE,
    first_slice: float = FIRST_SLICE,
    blossom_share: float = BLOSSOM_SHARE,
    every: float = EVERY,
    n_jobs: int = 1,
    parallel_rule: str | None = None,
) -> SearchResult:
    """Minimum-cost tree of depth at most ``max_depth`` by Blossom and CA-DL8.5 together.

    Arguments as :func:`satdt.dp.blossom.solve_min_error` (both searches minimise the error
    plus ``leaf_penalty`` per leaf under the minimum support ``min_support``; values are
    those costs); ``rule`` is CA-DL8.5's rule (its default schedule), ``first_slice`` the
    seconds Blossom runs alone first, ``blossom_share`` (in (0, 1)) Blossom's fraction of
    the time afterwards, ``every`` the seconds of CA-DL8.5 between two Blossom slices.
    With ``n_jobs >= 2`` (and the kernels of both searches compiled) they run at the same
    time, Blossom here and DL8.5 in a child process (:mod:`satdt.dp.parallel`; the schedule
    arguments then do not apply); ``n_jobs=1`` is the one-core schedule. The child runs
    DL8.5 under ``parallel_rule`` (default ``None``: plain DL8.5, which proves sooner than
    CA-DL8.5's restarts in ``benchmarks/min_error.py``, while Blossom gives the early trees).
    ``recorder.stats`` becomes a :class:`~satdt.result.PortfolioStats`: CA-DL8.5's
    counters, Blossom's in ``blossom``, the time each search had, and which one proved the
    optimum.

    On a fresh install the two searches' kernels may still be compiling in the background
    (:mod:`satdt.dp.kernels`): the portfolio starts with whichever search is ready (Blossom
    alone until CA-DL8.5's kernels are, or CA-DL8.5 alone until Blossom's are) and takes the
    other in as soon as it is ready. With both ready it runs as described above.
    """
    B = np.ascontiguousarray(B, dtype=np.uint8)
    y = np.asarray(y, dtype=np.int64)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    check_inputs(B, y, w, n_classes, max_depth)
    P, s = check_leaf_options(leaf_penalty, min_support)
    if not 0.0 < blossom_share < 1.0:
        raise ValueError(f"blossom_share must lie in (0, 1), got {blossom_share}")
    tic = time.perf_counter()
    bound = bound_to_beat(upper_bound, recorder, w)
    prep = prepare_binary(B, y, w, n_classes)
    K = int(max_depth)
    tol = tolerance(w)
    N, M = prep.data.Bd.shape
    blossom_stats = DPStats(
        rows=int(B.shape[0]),
        distinct_rows=int(N),
        features=int(B.shape[1]),
        features_used=int(M),
        irreducible_error=prep.floor,
    )
    source = (B, y, w, n_classes)
    ca_groups = ["counts", "support"] if s > 1 else ["counts"]  # CA-DL8.5's kernels
    if not kernels.ready(ca_groups) and not kernels.ready(["blossom"]):
        kernels.load(ca_groups)  # nothing ready: compile here (the caller did not wait)
    leaf = {"leaf_penalty": P, "min_support": s}
    if K == 0 or M == 0 or bound <= prep.floor + P:  # nothing to interleave
        if not kernels.ready(ca_groups):
            return _blossom().solve_min_error(
                B, y, n_classes, K, sample_weight=w, deadline=deadline, recorder=recorder,
                upper_bound=upper_bound, **leaf,
            )  # fmt: skip
        from . import dl85

        return dl85.solve_min_error(
            B, y, n_classes, K, sample_weight=w, deadline=deadline, recorder=recorder,
            upper_bound=upper_bound, rule=rule, prep=prep, **leaf,
        )  # fmt: skip
    both = ["blossom", *ca_groups]
    if n_jobs >= 2 and parallel.available() and kernels.ready(both):
        kernels.load(both)
        return parallel.solve_min_error(
            prep, source, K, bound=bound, tol=tol, deadline=deadline, recorder=recorder,
            blossom_stats=blossom_stats, rule=parallel_rule, **leaf,
        )  # fmt: skip
    run = None
    proven = False
    blossom_seconds = 0.0
    if kernels.ready(["blossom"]):
        run = _blossom().BlossomRun(prep, K, bound, source, recorder, blossom_stats, **leaf)
        first = time.perf_counter() + first_slice
        proven = run.advance(first if deadline is None else min(first, deadline))
        while not (proven or _past(deadline) or kernels.ready(ca_groups)):  # CA-DL8.5 compiling
            proven = run.advance(_soon(deadline))
        blossom_seconds = time.perf_counter() - tic
    if proven or _past(deadline):
        result = run.finish()
        recorder.stats = PortfolioStats(
            **vars(blossom_stats),
            blossom=blossom_stats,
            blossom_seconds=blossom_seconds,
            proven_by="blossom" if proven else "",
        )
        return recorder.snapshot(proven_optimal=result.proven_optimal)

    def start_blossom():
        """Blossom's search, from the incumbent, once its kernels are ready."""
        if not kernels.ready(["blossom"]):
            return None
        best = recorder.best
        now = bound if best is None else min(bound, best.value - tol)
        return _blossom().BlossomRun(prep, K, now, source, recorder, blossom_stats, **leaf)

    from . import dl85  # ready now (waited for above, or compiled here)

    slices = _BlossomSlices(run, start_blossom, recorder, tol, deadline, blossom_share, every)
    ca_tic = time.perf_counter()
    best = recorder.best
    result = dl85.solve_min_error(
        B, y, n_classes, K, sample_weight=w, deadline=deadline, recorder=recorder,
        upper_bound=None if best is None else best.value, rule=rule, prep=prep,
        companion=slices, **leaf,
    )  # fmt: skip
    if slices.run is not None:
        slices.run.fill_stats()
    ca_seconds = time.perf_counter() - ca_tic - slices.seconds
    ca_stats = recorder.stats
    by_blossom = slices.run is not None and slices.run.proven
    recorder.stats = PortfolioStats(
        **vars(ca_stats),
        blossom=blossom_stats,
        blossom_seconds=blossom_seconds + slices.seconds,
        dl85_seconds=ca_seconds,
        proven_by=("blossom" if by_blossom else "cadl85") if result.proven_optimal else "",
    )
    recorder.lower_bound = result.lower_bound
    return recorder.snapshot(proven_optimal=result.proven_optimal)


def _blossom():
    """The Blossom module, imported when its kernels are wanted (importing it loads them)."""
    from . import blossom

    return blossom


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline


def _soon(deadline: float | None) -> float:
    """A short slice of Blossom alone, between two looks at CA-DL8.5's kernels."""
    until = time.perf_counter() + 0.1
    return until if deadline is None else min(until, deadline)
