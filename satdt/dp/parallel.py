"""The portfolio on two cores: Blossom here, DL8.5 in a child process, one incumbent.

What :func:`satdt.dp.portfolio.solve_min_error` runs with ``n_jobs >= 2``. The child is
forked once the kernels of both searches are loaded here, so it shares the prepared data
and the compiled kernels with this process (no copy, no compilation, no cache load). The
two searches share the incumbent both ways:

- this process publishes the cost of the recorder's incumbent in shared memory, which the
  child reads between two DL8.5 nodes: its search starts from it (the upper bound of
  Algorithm 1, and of each restart of CA-DL8.5 under a rule, Algorithm 2, line 8, Kiossou,
  Nijssen & Schaus), whoever found it;
- the child sends each tree it finds (and its restarts) through a pipe; this process puts
  them on the recorder between two slices of Blossom (so ``on_improve`` and the history see
  every tree) and Blossom prunes with them (:meth:`~satdt.dp.blossom.BlossomRun.tighten`).

Both searches are complete: the first to exhaust its space proves the incumbent optimal and
the other is stopped. The child stops by itself when asked, at the deadline, or when this
process is gone (its parent changed: killed, say), and ignores Ctrl-C, after which this
process stops it and keeps the best tree.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import os
import signal
import time
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.errors import honour_interrupt, interrupt_handled
from ..models.tree import Tree
from ..task.events import Event
from ..task.result import Incumbent, Recorder, SearchResult
from ..task.stats import DL85Stats, DPStats, PortfolioStats
from .common import PreparedBinary, SearchSettings

# Seconds of Blossom alone first (its first trees): what it proves by then costs no second
# process; short, since DL8.5 proves most problems several times sooner than Blossom.
ALONE = 0.1
SLICE = 0.02  # seconds of Blossom between two looks at the child's messages
EVERY = 0.005  # seconds of DL8.5 between two looks at the shared incumbent
STOP_WAIT = 0.05  # seconds the child has to send its counters once asked to stop
_BEST, _STOP = 0, 1  # the shared array: the parent's incumbent cost, the stop flag


def available() -> bool:
    """Whether this process can fork a child that shares the loaded kernels (a platform with
    ``fork``; not a daemonic worker of a process pool, which may have no children)."""
    return "fork" in mp.get_all_start_methods() and not mp.current_process().daemon


def start_process(ctx, target, args: tuple) -> mp.process.BaseProcess:
    """Fork a daemon child process (named ``satdt``) that runs ``target(*args)`` and ignores
    Ctrl-C, which is this process's to handle (it stops the child and keeps the best tree).

    SIGINT is blocked in this thread while it forks, so the child ignores Ctrl-C from its
    first instruction: a terminal's Ctrl-C reaches the whole process group, and one raised in
    the child before it ignored SIGINT would print a traceback and end it. A Ctrl-C that lands
    here meanwhile is delivered when SIGINT is unblocked, once the child is started.
    """
    process = ctx.Process(target=_ignoring_ctrl_c, args=(target, *args), daemon=True, name="satdt")
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        process.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return process


def _ignoring_ctrl_c(target, *args) -> None:
    """The child's first step: ignore SIGINT (one that came since the fork is discarded), forget
    a Ctrl-C the parent noted before it (the parent raises it), then run ``target``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    interrupt_handled()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    target(*args)


class _Stopped(Exception):
    """The parent asked the child to stop (the other search proved, or time is up there)."""


class _ChildRecorder(Recorder):
    """The child's recorder: sends each tree and event to the parent, and sees the parent's
    incumbent cost as its own best (the bound DL8.5, or each CA-DL8.5 restart, must beat).

    It is also the DL8.5 search's companion (:class:`~satdt.dp._dl85_anytime.Companion`):
    between two nodes it checks that the parent lives and has not asked it to stop.
    """

    every = EVERY

    def __init__(self, conn, shared, parent: int) -> None:
        super().__init__("error")
        self.conn, self.shared, self.parent = conn, shared, parent

    @property
    def best(self) -> Incumbent | None:
        own = self.history[-1] if self.history else None
        theirs = self.shared[_BEST]
        if own is None or theirs < own.value:
            return None if math.isinf(theirs) else Incumbent(0.0, theirs, None)
        return own

    def improve(self, tree: Tree, value: float, *, mapped: bool = False) -> Tree | None:
        kept = super().improve(tree, value, mapped=True)
        if kept is not None:
            self.conn.send(("tree", tree, value))
        return kept

    def event(self, event: Event) -> None:
        self.conn.send(("event", event))

    def pause(self, now: float) -> bool:
        if os.getppid() != self.parent:  # the parent is gone: nobody wants the answer
            os._exit(0)
        if self.shared[_STOP]:
            raise _Stopped
        return False


def _child(conn, shared, parent: int, solve, problem: dict[str, Any]) -> None:
    """The child's DL8.5 (``solve``, run in the forked process): its trees, restarts and
    finally ``("done", proven, seconds, stats)`` go to the parent through ``conn``."""
    recorder = _ChildRecorder(conn, shared, parent)
    tic = time.perf_counter()
    proven = False
    try:
        settings = replace(problem.pop("settings"), recorder=recorder)
        proven = solve(settings=settings, companion=recorder, **problem).proven_optimal
    except _Stopped:
        pass
    except Exception as exc:  # the parent raises it (an internal error, say)
        conn.send(("error", exc))
        return
    with contextlib.suppress(OSError):  # the parent stopped listening
        conn.send(("done", proven, time.perf_counter() - tic, recorder.stats))


class _Messages:
    """The parent's side of the pipe: the child's trees go to the recorder as they come."""

    def __init__(self, conn, recorder: Recorder) -> None:
        self.conn, self.recorder = conn, recorder
        self.done: tuple[bool, float, DL85Stats] | None = None

    def drain(self, timeout: float = 0.0) -> None:
        """Take every message waiting (for up to ``timeout`` seconds for the first); raise
        the child's exception if it failed."""
        conn = self.conn
        try:
            while self.done is None and conn.poll(timeout):
                timeout = 0.0
                message = conn.recv()
                if message[0] == "tree":
                    self.recorder.improve(message[1], message[2])
                elif message[0] == "event":
                    self.recorder.event(message[1])
                elif message[0] == "error":
                    raise message[1]
                else:
                    self.done = message[1:]
        except (EOFError, OSError):  # the child died: Blossom goes on alone
            self.done = self.done or (False, 0.0, None)


def solve_min_error(
    prep: PreparedBinary,
    source: tuple[np.ndarray, np.ndarray, np.ndarray, int],
    K: int,
    settings: SearchSettings,
    *,
    bound: float,
    tol: float,
    blossom_stats: DPStats,
    rule: str | None,
) -> SearchResult:
    """Blossom in this process and DL8.5 (CA-DL8.5 with ``rule``) in a forked child, until
    one proves.

    ``prep`` is the data prepared from ``source`` = ``(B, y, w, n_classes)``; ``bound`` the
    cost a tree must beat (the caller's incumbent less the tolerance ``tol``, or ``inf``).
    The kernels of both searches must be loaded here (the child inherits them). Blossom
    runs alone for :data:`ALONE` seconds first. ``settings`` are the portfolio's, checked
    (its weights those of ``source``). Values are costs (error plus the leaf penalty per
    leaf); ``recorder.stats`` becomes a
    :class:`~satdt.task.stats.PortfolioStats` as in the one-core portfolio.
    """
    from . import blossom, dl85  # loaded here before the fork: the child shares them

    tic = time.perf_counter()
    recorder, deadline = settings.recorder, settings.deadline
    run = blossom.BlossomRun(
        prep, K, bound, source, recorder, blossom_stats, settings.leaf_penalty,
        settings.min_support,
    )  # fmt: skip
    alone = tic + ALONE
    if run.advance(alone if deadline is None else min(alone, deadline)) or _past(deadline):
        _set_stats(run, tic, None, by_blossom=run.proven, child=rule)
        return _finish(run, None, by_blossom=run.proven)
    B, y, w, n_classes = source
    ctx = mp.get_context("fork")
    best = recorder.best
    shared = ctx.RawArray("d", [math.inf if best is None else best.value, 0.0])
    reader, writer = ctx.Pipe(duplex=False)
    problem = {
        "B": B, "y": y, "n_classes": n_classes, "max_depth": K,
        "settings": replace(settings, sample_weight=w, upper_bound=None),
        "options": dl85.DL85Options(rule=rule), "prep": prep,
    }  # fmt: skip
    child = start_process(ctx, _child, (writer, shared, os.getpid(), dl85.solve_min_error, problem))
    writer.close()  # the child holds the only writing end: its death is an end of file here
    messages = _Messages(reader, recorder)
    by_blossom = False
    try:
        by_blossom = _race(run, messages, shared, tol, deadline)
    finally:  # also on Ctrl-C: stop the child, keep what it sent, and the counters
        shared[_STOP] = 1.0
        with contextlib.suppress(Exception):
            if messages.done is None:
                messages.drain(STOP_WAIT)
        child.kill()
        child.join()
        reader.close()
        _set_stats(run, tic, messages.done, by_blossom=by_blossom, child=rule)
    return _finish(run, messages.done, by_blossom=by_blossom)


def _race(run, messages: _Messages, shared, tol: float, deadline: float | None) -> bool:
    """Blossom in slices, taking the child's trees in between, until a proof or the
    deadline: whether Blossom proved (else the child did, or time is up)."""
    recorder = run.recorder
    published = math.inf
    while True:
        honour_interrupt()  # a Ctrl-C that other code swallowed
        best = recorder.best
        if best is not None and best.value < published:
            published = shared[_BEST] = best.value  # the child's next (re)start beats it
            run.tighten(best.value - tol)
        until = time.perf_counter() + SLICE
        if run.proven or run.advance(until if deadline is None else min(until, deadline)):
            return True
        messages.drain()
        if messages.done is not None and messages.done[0]:
            return False
        if _past(deadline):
            return False


def _set_stats(
    run,
    tic: float,
    done: tuple[bool, float, DL85Stats | None] | None,
    *,
    by_blossom: bool,
    child: str | None,
) -> None:
    """Blossom's end (:meth:`~satdt.dp.blossom.BlossomRun.finish`: its counters and lower
    bound, the root as a leaf if no tree yet) and the recorder's statistics: the child's
    counters (DL8.5's, or CA-DL8.5's under the rule ``child``; Blossom's if it sent none),
    Blossom's, the seconds of each, and who proved the optimum."""
    run.finish()
    by_child, dl85_seconds, ca_stats = done or (False, 0.0, None)
    if ca_stats is None:
        ca_stats = DL85Stats(**vars(run.stats))
    proven = by_blossom or by_child
    child_name = "dl85" if child is None else "cadl85"
    run.recorder.stats = PortfolioStats(
        **vars(ca_stats),
        blossom=run.stats,
        blossom_seconds=time.perf_counter() - tic,
        dl85_seconds=dl85_seconds,
        proven_by=("blossom" if by_blossom else child_name) if proven else "",
    )


def _finish(run, done: tuple[bool, float, DL85Stats | None] | None, *, by_blossom: bool):
    """The result: the recorder's incumbent, proven by either search."""
    recorder = run.recorder
    proven = by_blossom or bool(done and done[0])
    if proven:
        recorder.lower_bound = recorder.best.value
    return recorder.snapshot(proven_optimal=proven)


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline
