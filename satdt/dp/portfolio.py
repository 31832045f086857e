"""Blossom, DL8.5 and CA-DL8.5 sharing one incumbent (``method="portfolio"``, and ``auto``).

Blossom finds good trees almost at once (it always completes the current tree first), and is
the best anytime search under 15-30 s in Kiossou, Nijssen & Schaus (CA-DL8.5, Tables 2-3);
DL8.5, whose nodes with three levels left run in one kernel with a cache of their children
(:mod:`satdt.dp._dl85_three`), proves the optimum several times sooner
(``benchmarks/min_error.py``). The portfolio runs DL8.5 (after a first slice of Blossom alone, if
asked), and every ``every`` seconds of it its companions resume for their shares of the time
(:class:`_Slices`). While DL8.5 keeps up with the clock (no time limit, or at least as much of
its search done as of the time limit gone), Blossom alone (:class:`~satdt.dp.blossom.BlossomRun`
keeps its state between slices): ``START_SHARE`` at first, doubled after each slice that improved
the incumbent (up to ``blossom_share``) and halved after each one that did not (down to
``MIN_SHARE``), so that nearly the whole core goes to the search that closes the gap. Once DL8.5
is behind the clock (wide, hard files that nobody proves within the limit), CA-DL8.5's restricted
searches join Blossom (Algorithm 2 under the top-k and discrepancy rules: restarts that try few
features near the root, each in a thread of its own, :mod:`satdt.dp.turns`), and the companions'
shares grow while their slices improve the tree (:data:`BEHIND`). All report to the same
recorder; each prunes with the incumbent, whoever found it. Every search is complete, so
whichever exhausts its space first proves the incumbent optimal. That is the one-core schedule
(``n_jobs=1``); with ``n_jobs >= 2`` DL8.5's root splits are shared out among ``n_jobs`` worker
processes with Blossom beside them (:mod:`satdt.dp.root_split`, at depth 4 or more), or, at
smaller depths and under a CA-DL8.5 rule, the two searches run at the same time in two
processes (:mod:`satdt.dp.parallel`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import NamedTuple

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
from .turns import Forwarding, ThreadedSearch, stop_all

# Plain DL8.5 (no CA-DL8.5 rule): with Blossom beside it for the early trees, its proofs are
# the portfolio's (CA-DL8.5's restarts proved 2-4x later in benchmarks/min_error.py).
DEFAULT_RULE: str | None = None
# Seconds of Blossom alone first: none, so that what DL8.5 proves at once costs no Blossom (its
# first turn comes after EVERY seconds of DL8.5, whose path trees are the first incumbents).
FIRST_SLICE = 0.0
BLOSSOM_SHARE = 0.5  # then Blossom's fraction of the time at most, while its slices improve
START_SHARE = 0.2  # ... where it starts
MIN_SHARE = 1.0 / 17.0  # ... and the least it falls to after slices that did not
EVERY = 0.05  # seconds of DL8.5 between two turns of its companions
# CA-DL8.5's restricted searches (Kiossou, Nijssen & Schaus, Algorithm 2 under the top-k and
# discrepancy rules of Table 1), whose restarts try few features near the root: on wide files
# that nobody proves they find better trees than DL8.5, deep in its first subtrees, and often
# than Blossom. Each runs in a thread of its own (:class:`~satdt.dp.turns.ThreadedSearch`),
# only while DL8.5 is behind the clock (:class:`_Slices`), with a cache of its own (each this
# share of the cap; DL8.5 keeps the rest).
RESTRICTED = ("topk", "discrepancy")
RESTRICTED_CACHE = 1.0 / 8.0


class _Companion:
    """One of DL8.5's companions in the one-core portfolio: a search resumed between DL8.5's
    nodes (``run.advance(until)``), made by ``start()`` once it can start (``None``: not yet;
    Blossom's kernels may still be compiling), with its share of the time, ``ratio`` seconds
    per second of DL8.5 (see :class:`_Slices`). ``behind_only``: it runs only while DL8.5 is
    behind the clock."""

    def __init__(self, name: str, start, ratio: float, run=None, behind_only: bool = False):
        self.name, self.start, self.run = name, start, run
        self.ratio = ratio
        self.behind_only = behind_only
        self.seconds = 0.0


class _Schedule(NamedTuple):
    """How companions' shares move (seconds per second of DL8.5): doubled after a slice that
    improved the incumbent, up to ``top``; after one that did not, halved every ``patience``
    such slices, down to ``floor``."""

    floor: float
    top: float
    patience: float


def _ratio(share: float) -> float:
    """A fraction of the time as seconds per second of the other search."""
    return share / (1.0 - share)


# DL8.5 is behind the clock when, after this many seconds, the part of its search done is
# smaller than the part of the time limit gone
BEHIND_AFTER = 1.0
# The companions' shares then (seconds per second of DL8.5): at least two, up to sixteen while
# their slices improve the tree (three companions leave DL8.5 between a 7th and a 49th of the
# core), halved after every eight slices that did not (CA-DL8.5's trees come at the ends of
# its restarts, seconds apart)
BEHIND = _Schedule(floor=2.0, top=16.0, patience=8.0)


class _Slices:
    """DL8.5's companions (:class:`~satdt.dp._dl85_anytime.Companion`): at each pause, every
    companion in turn runs for its share of the time DL8.5 just ran; the first to prove the
    incumbent optimal ends the portfolio (``prover``).

    Two schedules. While DL8.5 keeps up with the clock (no time limit, or the part of its
    search done, :meth:`~satdt.dp._dl85_search.Search.progress`, at least the part of the
    time limit gone), the proof comes first: Blossom alone beside it, on ``proving``'s
    shares. Once DL8.5 is behind (after :data:`BEHIND_AFTER` seconds: wide, hard files, where
    it is deep in its first subtrees when the time is up), the trees come first: every
    companion, CA-DL8.5's restricted searches among them, on :data:`BEHIND`'s larger shares,
    DL8.5 keeping a slice per turn of theirs.
    """

    def __init__(self, companions: list[_Companion], recorder: Recorder, tol, deadline, proving):
        self.companions, self.recorder = companions, recorder
        self.tol, self.deadline, self.every = tol, deadline, EVERY
        self.proving = proving
        self.resumed = self.began = time.perf_counter()
        self.prover = ""
        self.search = None

    def watch(self, search) -> None:
        """DL8.5's search, whose progress decides the schedule."""
        self.search = search

    def behind(self, now: float) -> bool:
        """Whether DL8.5 is behind the clock (see the class's docstring)."""
        if self.deadline is None or self.search is None or now - self.began < BEHIND_AFTER:
            return False
        budget = self.deadline - self.began
        return budget > 0 and self.search.progress() < (now - self.began) / budget

    def pause(self, now: float) -> bool:
        ran = now - self.resumed  # DL8.5's turn
        behind = self.behind(now)
        schedule = BEHIND if behind else self.proving
        for companion in self.companions:
            if companion.behind_only and not behind:
                continue
            span = ran
            if companion.run is None:
                companion.run = companion.start()
                if companion.run is None:
                    continue
                span = 0.0  # its share counts from its start
            if self._turn(companion, span, schedule):
                self.prover = companion.name
                return True
        self.resumed = time.perf_counter()
        return False

    def _turn(self, companion: _Companion, span: float, schedule: _Schedule) -> bool:
        """One slice of ``companion`` for its share of ``span`` seconds: whether it proved."""
        recorder, run = self.recorder, companion.run
        best = recorder.best
        if best is not None and isinstance(run, _blossom().BlossomRun):
            run.tighten(best.value - self.tol)  # (a search in a thread reads the recorder)
        ratio = min(max(companion.ratio, schedule.floor), schedule.top)
        before = len(recorder.history)
        tic = time.perf_counter()
        until = tic + ratio * span
        if self.deadline is not None:
            until = min(until, self.deadline)
        proven = run.advance(until)
        if len(recorder.history) > before:
            ratio *= 2.0
        else:
            ratio *= 0.5 ** (1.0 / schedule.patience)
        companion.ratio = min(max(ratio, schedule.floor), schedule.top)
        companion.seconds += time.perf_counter() - tic
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
        The cap on the caches of DL8.5's searches together: those workers (each has its
        share), or on one core DL8.5 and its restricted companions (each of these an eighth;
        DL8.5's default cap, :data:`satdt.dp.dl85.DEFAULT_CACHE_MB`).
    restricted
        The CA-DL8.5 rules whose restricted searches run beside DL8.5 and Blossom on one core
        (:data:`RESTRICTED`; empty: none).
    """

    rule: str | None = DEFAULT_RULE
    first_slice: float = FIRST_SLICE
    blossom_share: float = BLOSSOM_SHARE
    every: float = EVERY
    n_jobs: int = 1
    parallel_rule: str | None = DEFAULT_RULE
    max_cache_mb: float = 512.0
    restricted: tuple[str, ...] = RESTRICTED


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

    restricted = [r for r in options.restricted if r in dl85.RULES]
    cache_mb = options.max_cache_mb * (1.0 - RESTRICTED_CACHE * len(restricted))
    problem = (B, y, n_classes, K)
    companions = [
        _Companion("blossom", start_blossom, _ratio(min(START_SHARE, options.blossom_share)), run),
        *[
            _Companion(
                f"cadl85-{r}", _restricted(r, problem, settings, prep, options), BEHIND.floor,
                behind_only=True,
            )
            for r in restricted
        ],
    ]  # fmt: skip
    proving = _Schedule(_ratio(MIN_SHARE), _ratio(options.blossom_share), 1.0)
    slices = _Slices(companions, recorder, tol, deadline, proving)
    slices.every = options.every
    ca_tic = time.perf_counter()
    best = recorder.best
    try:
        result = dl85.solve_min_error(
            B, y, n_classes, K,
            replace(settings, upper_bound=None if best is None else best.value),
            dl85.DL85Options(rule=rule, max_cache_mb=cache_mb), prep=prep, companion=slices,
        )  # fmt: skip
    finally:  # also on Ctrl-C: the restricted searches' threads end before the tree is returned
        stop_all([c.run for c in companions])
    blossom = companions[0]
    if blossom.run is not None:
        blossom.run.fill_stats()
    others = sum(c.seconds for c in companions[1:])
    ca_seconds = time.perf_counter() - ca_tic - blossom.seconds - others
    ca_stats = recorder.stats
    recorder.stats = PortfolioStats(
        **vars(ca_stats),
        blossom=blossom_stats,
        blossom_seconds=blossom_seconds + blossom.seconds,
        dl85_seconds=ca_seconds,
        restricted_seconds=others,
        proven_by=(slices.prover or _prover(rule)) if result.proven_optimal else "",
    )
    recorder.lower_bound = result.lower_bound
    return recorder.snapshot(proven_optimal=result.proven_optimal)


def _restricted(rule: str, problem: tuple, settings: SearchSettings, prep, options):
    """How to start CA-DL8.5 under ``rule`` beside DL8.5: a search in a thread of its own
    (:class:`~satdt.dp.turns.ThreadedSearch`) reporting to the portfolio's recorder through a
    :class:`~satdt.dp.turns.Forwarding` one, with its share of the cache's cap."""
    from . import dl85

    B, y, n_classes, K = problem
    forwarding = Forwarding(settings.recorder)
    own = replace(settings, recorder=forwarding, upper_bound=None)
    cadl85 = dl85.DL85Options(rule=rule, max_cache_mb=options.max_cache_mb * RESTRICTED_CACHE)

    def solve(companion: ThreadedSearch) -> SearchResult:
        return dl85.solve_min_error(B, y, n_classes, K, own, cadl85, prep=prep, companion=companion)

    return lambda: ThreadedSearch(f"cadl85-{rule}", solve)


def _groups(min_support: int) -> tuple[list[str], list[str], list[str]]:
    """The kernel groups (from the table of searches): what DL8.5 starts on under this
    minimum support, Blossom's, and both searches' whole (what a child process inherits when
    they run side by side)."""
    from .kernels import kernels_of

    dl85 = kernels_of("dl85")
    start = list(dl85.to_start(min_support))
    blossom = list(kernels_of("blossom").start)
    return start, blossom, [*blossom, *dl85.later, *start]


def _prover(rule: str | None) -> str:
    """``stats.proven_by`` when DL8.5 proved: DL8.5, or CA-DL8.5 (under a rule)."""
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
