"""Blossom and DL8.5 sharing one incumbent (``method="portfolio"``, and ``auto``).

Blossom finds good trees almost at once (it always completes the current tree first), and is
the best anytime search under 15-30 s in Kiossou, Nijssen & Schaus (CA-DL8.5, Tables 2-3);
DL8.5, whose nodes with three levels left run in one kernel with a cache of their children
(:mod:`satdt.dp._dl85_three`), proves the optimum several times sooner
(``benchmarks/min_error.py``). The portfolio runs DL8.5 (after a first slice of Blossom alone, if
asked), and every ``every`` seconds of it Blossom resumes (:class:`~satdt.dp.blossom.BlossomRun`
keeps its state between slices) for its share of the time: ``START_SHARE`` at first, doubled
after each slice that improved the incumbent (up to ``blossom_share``) and halved after each
one that did not (down to ``MIN_SHARE``). So while Blossom finds better trees (large or deep
problems) it has up to half the core, and once the incumbent stops improving nearly the whole
core goes to the search that closes the gap. Both report to the same recorder; DL8.5 prunes with the incumbent,
whoever found it, and so does Blossom. Both searches are complete, so whichever exhausts its
space first proves the incumbent optimal. That is the one-core schedule (``n_jobs=1``); with
``n_jobs >= 2`` DL8.5's root splits are shared out among ``n_jobs`` worker processes with
Blossom beside them (:mod:`satdt.dp.root_split`, at depth 4 or more), or, at smaller depths
and under a CA-DL8.5 rule, the two searches run at the same time in two processes
(:mod:`satdt.dp.parallel`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from ..core.errors import TimeUp
from ..task.result import Recorder, SearchResult
from ..task.stats import DPStats, PortfolioStats
from . import kernels, parallel, root_split
from .common import (
    SearchSettings,
    bound_to_beat,
    check_inputs,
    check_leaf_options,
    prepare_binary,
    tolerance,
)

# Plain DL8.5 (no CA-DL8.5 rule): with Blossom beside it for the early trees, its proofs are
# the portfolio's (CA-DL8.5's restarts proved 2-4x later in benchmarks/min_error.py).
DEFAULT_RULE: str | None = None
# Seconds of Blossom alone first: none, so that what DL8.5 proves at once costs no Blossom (its
# first turn comes after EVERY seconds of DL8.5, whose path trees are the first incumbents).
FIRST_SLICE = 0.0
BLOSSOM_SHARE = 0.5  # then Blossom's fraction of the time at most, while its slices improve
START_SHARE = 0.2  # ... where it starts
MIN_SHARE = 1.0 / 17.0  # ... and the least it falls to after slices that did not
EVERY = 0.05  # seconds of DL8.5 between two Blossom slices


class _BlossomSlices:
    """Blossom as DL8.5's companion: resumed between DL8.5 nodes for its share of the time,
    which starts at ``START_SHARE``, doubles after each slice that improved the incumbent (up
    to ``share``) and halves after each one that did not (down to ``MIN_SHARE``).

    ``start()`` makes the search once Blossom's kernels are ready (``None``: not yet; the
    kernels may still be compiling in the background when DL8.5 starts).
    """

    def __init__(self, run, start, recorder: Recorder, tol: float, deadline, share, every):
        self.run, self.start, self.recorder = run, start, recorder
        self.tol, self.deadline = tol, deadline
        self.top = share / (1.0 - share)  # Blossom's seconds per second of DL8.5, at most
        self.floor = min(self.top, MIN_SHARE / (1.0 - MIN_SHARE))
        self.ratio = min(self.top, START_SHARE / (1.0 - START_SHARE))
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
        before = len(self.recorder.history)
        until = now + self.ratio * (now - self.resumed)
        if self.deadline is not None:
            until = min(until, self.deadline)
        proven = self.run.advance(until)
        if len(self.recorder.history) > before:
            self.ratio = min(self.top, self.ratio * 2.0)
        else:
            self.ratio = max(self.floor, self.ratio / 2.0)
        self.resumed = time.perf_counter()
        self.seconds += self.resumed - now
        return proven


@dataclass(frozen=True)
class PortfolioOptions:
    """The portfolio's own options (:func:`solve_min_error`).

    Attributes
    ----------
    rule
        A CA-DL8.5 rule for the DL8.5 side (``None``: plain DL8.5) on one core.
    first_slice
        The seconds Blossom runs alone first.
    blossom_share
        In (0, 1): the largest fraction of the time Blossom has afterwards (its share starts
        at ``START_SHARE``, doubles after each slice that improved the incumbent, halves
        after each one that did not, down to ``MIN_SHARE``).
    every
        The seconds of DL8.5 between two Blossom slices.
    n_jobs
        With 2 or more (and the kernels of both searches compiled) they run at the same
        time, Blossom here and DL8.5 in a child process (:mod:`satdt.dp.parallel`; the
        schedule options then do not apply), under ``parallel_rule``; 1 is the one-core
        schedule.
    parallel_rule
        The CA-DL8.5 rule of the child process (``None``: plain DL8.5). Without a rule, at
        depth :data:`~satdt.dp.root_split.MIN_DEPTH` or more, ``n_jobs`` DL8.5 workers share
        the root's splits instead, Blossom here (:mod:`satdt.dp.root_split`).
    max_cache_mb
        The cap on the caches of those workers together (each has its share; DL8.5's
        default cap, :data:`satdt.dp.dl85.DEFAULT_CACHE_MB`).
    """

    rule: str | None = DEFAULT_RULE
    first_slice: float = FIRST_SLICE
    blossom_share: float = BLOSSOM_SHARE
    every: float = EVERY
    n_jobs: int = 1
    parallel_rule: str | None = DEFAULT_RULE
    max_cache_mb: float = 512.0


def solve_min_error(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    max_depth: int,
    settings: SearchSettings,
    options: PortfolioOptions = PortfolioOptions(),
) -> SearchResult:
    """Minimum-cost tree of depth at most ``max_depth`` by Blossom and DL8.5 together.

    Arguments as :func:`satdt.dp.blossom.solve_min_error` (both searches minimise the error
    plus the leaf penalty per leaf under the minimum support of ``settings``; values are
    those costs); ``options`` the portfolio's own (:class:`PortfolioOptions`: the DL8.5
    side's rule, the one-core schedule, ``n_jobs``). ``recorder.stats`` becomes a
    :class:`~satdt.task.stats.PortfolioStats`: DL8.5's counters, Blossom's in ``blossom``, the
    time each search had, and which one proved the optimum.

    On a fresh install the two searches' kernels may still be compiling in the background
    (:mod:`satdt.dp.kernels`): the portfolio starts with whichever search is ready (Blossom
    alone until DL8.5's kernels are, or DL8.5 alone until Blossom's are) and takes the
    other in as soon as it is ready. DL8.5 needs only the shared counting kernels to start;
    its three-level kernel (the slowest to compile) it takes in when compiled. With both
    ready it runs as described above.
    """
    B = np.ascontiguousarray(B, dtype=np.uint8)
    y = np.asarray(y, dtype=np.int64)
    w = settings.weights(len(y))
    recorder, deadline, rule = settings.recorder, settings.deadline, options.rule
    check_inputs(B, y, w, n_classes, max_depth)
    P, s = check_leaf_options(settings.leaf_penalty, settings.min_support)
    if not 0.0 < options.blossom_share < 1.0:
        raise ValueError(f"blossom_share must lie in (0, 1), got {options.blossom_share}")
    tic = time.perf_counter()
    bound = bound_to_beat(settings.upper_bound, recorder, w)
    # the searches below get the checked leaf options and the weights as an array
    settings = replace(settings, sample_weight=w, leaf_penalty=P, min_support=s)
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
    # what DL8.5 needs to start (its three-level kernel it takes in when ready) and Blossom
    ca_groups, blossom_groups, both = _groups(s)
    if not kernels.ready(ca_groups) and not kernels.ready(blossom_groups):
        kernels.load(ca_groups)  # nothing ready: compile here (the caller did not wait)
    leaf = {"leaf_penalty": P, "min_support": s}
    if K == 0 or M == 0 or bound <= prep.floor + P:  # nothing to interleave
        if not kernels.ready(ca_groups):
            return _blossom().solve_min_error(B, y, n_classes, K, settings)
        from . import dl85

        return dl85.solve_min_error(
            B, y, n_classes, K, settings, dl85.DL85Options(rule=rule), prep=prep
        )
    if options.n_jobs >= 2 and parallel.available() and kernels.ready(both):
        kernels.load(both)
        if K >= root_split.MIN_DEPTH and options.parallel_rule is None:
            return root_split.solve_min_error(
                prep, source, K, settings, n_jobs=options.n_jobs, bound=bound, tol=tol,
                blossom_stats=blossom_stats, max_cache_mb=options.max_cache_mb,
            )  # fmt: skip
        return parallel.solve_min_error(
            prep, source, K, settings, bound=bound, tol=tol, blossom_stats=blossom_stats,
            rule=options.parallel_rule,
        )  # fmt: skip
    run = None
    proven = False
    blossom_seconds = 0.0
    if (options.first_slice > 0 or not kernels.ready(ca_groups)) and kernels.load_soon(
        blossom_groups, deadline
    ):
        run = _blossom().BlossomRun(prep, K, bound, source, recorder, blossom_stats, **leaf)
        first = time.perf_counter() + options.first_slice
        proven = run.advance(first if deadline is None else min(first, deadline))
        while not (proven or _past(deadline) or kernels.ready(ca_groups)):  # DL8.5 compiling
            proven = run.advance(_soon(deadline))
        blossom_seconds = time.perf_counter() - tic
    if run is None and _past(deadline):  # the time limit passed before either search ran
        raise TimeUp("portfolio")
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
        """Blossom's search, from the incumbent, once its kernels are loaded (near the
        deadline, loaded in a background thread first)."""
        if not kernels.load_soon(blossom_groups, deadline):
            return None
        best = recorder.best
        now = bound if best is None else min(bound, best.value - tol)
        return _blossom().BlossomRun(prep, K, now, source, recorder, blossom_stats, **leaf)

    from . import dl85  # ready now (waited for above, or compiled here)

    slices = _BlossomSlices(
        run, start_blossom, recorder, tol, deadline, options.blossom_share, options.every
    )
    ca_tic = time.perf_counter()
    best = recorder.best
    result = dl85.solve_min_error(
        B, y, n_classes, K,
        replace(settings, upper_bound=None if best is None else best.value),
        dl85.DL85Options(rule=rule), prep=prep, companion=slices,
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
        proven_by=_prover(by_blossom, rule) if result.proven_optimal else "",
    )
    recorder.lower_bound = result.lower_bound
    return recorder.snapshot(proven_optimal=result.proven_optimal)


def _groups(min_support: int) -> tuple[list[str], list[str], list[str]]:
    """The kernel groups (from the table of searches): what DL8.5 starts on under this
    minimum support, Blossom's, and both searches' whole (what a child process inherits when
    they run side by side)."""
    from .kernels import kernels_of

    dl85 = kernels_of("dl85")
    start = list(dl85.to_start(min_support))
    blossom = list(kernels_of("blossom").start)
    return start, blossom, [*blossom, *dl85.later, *start]


def _prover(by_blossom: bool, rule: str | None) -> str:
    """``stats.proven_by``: Blossom, DL8.5 or CA-DL8.5 (under a rule)."""
    if by_blossom:
        return "blossom"
    return "dl85" if rule is None else "cadl85"


def _blossom():
    """The Blossom module, imported when its kernels are wanted (importing it loads them)."""
    from . import blossom

    return blossom


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline


def _soon(deadline: float | None) -> float:
    """A short slice of Blossom alone, between two looks at DL8.5's kernels."""
    until = time.perf_counter() + 0.1
    return until if deadline is None else min(until, deadline)
