"""Searches that take turns on one core: a recursive search run in a thread of its own, one
slice at a time, and the recorder it reports through.

The one-core portfolio (:mod:`satdt.dp.portfolio`) runs DL8.5 and, between its nodes, its
companions for their shares of the time: Blossom, whose state lives in arrays and resumes by a
call (:class:`~satdt.dp.blossom.BlossomRun`), and CA-DL8.5's restricted searches (Kiossou,
Nijssen & Schaus, Algorithm 2 under the top-k and discrepancy rules of their Table 1), whose
state is a recursion on a Python stack. :class:`ThreadedSearch` gives such a search a stack of
its own: it runs in a thread only while the portfolio waits for it (one search runs at a time,
so they never share the core nor the recorder at once), and hands the turn back at its next
look at the clock once its slice is over. :class:`Forwarding` is its recorder: its trees go to
the portfolio's recorder (and so to ``history`` and ``on_improve``, re-checked), it prunes
with the portfolio's incumbent whoever found it, and its statistics stay its own.

A Ctrl-C lands in the main thread, waiting for the turn to come back: the portfolio then stops
the thread (:meth:`ThreadedSearch.close`: it ends at its next look at the clock) before it
returns the best tree. An error of the thread (a Ctrl-C it raised at its look, among them) is
raised in the main thread when the turn comes back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..models.tree import Tree
from ..task.events import Event
from ..task.result import Incumbent, Recorder, SearchResult

EVERY = 0.005  # seconds between two looks at the clock of a search in a thread
CLOSE_WAIT = 5.0  # seconds a stopped thread has to end (its next look, within milliseconds)


class Forwarding(Recorder):
    """The recorder of a search run beside others: its trees and events go to ``main``, its
    incumbent is ``main``'s (the bound it must beat), its statistics and bounds its own."""

    def __init__(self, main: Recorder) -> None:
        super().__init__(main.objective, start=main.start)
        self.main = main

    @property
    def best(self) -> Incumbent | None:
        return self.main.best

    def improve(self, tree: Tree, value: float, *, mapped: bool = False) -> Tree | None:
        return self.main.improve(tree, value, mapped=mapped)

    def event(self, event: Event) -> None:
        self.main.event(event)


class _Stopped(Exception):
    """The portfolio stopped the search (it proved, the deadline, Ctrl-C)."""


class ThreadedSearch:
    """A search run in a thread of its own, one turn at a time.

    ``solve(companion)`` runs the search (DL8.5's :func:`~satdt.dp.dl85.solve_min_error` with
    this object as its companion, which it calls between nodes); it starts at the first
    :meth:`advance`. :meth:`advance` runs it until a time and returns whether it proved its
    incumbent optimal (it finished with a proof); the search goes on at the next call.
    """

    every = EVERY

    def __init__(self, name: str, solve: Callable[[ThreadedSearch], SearchResult]) -> None:
        self.name = name
        self._solve = solve
        self._go = threading.Event()  # the main thread gives the turn
        self._back = threading.Event()  # ... and waits for it to come back
        self._until = 0.0
        self._stop = False
        self._thread: threading.Thread | None = None
        self.done = False
        self.proven = False
        self.error: BaseException | None = None
        self.seconds = 0.0

    # ---------------------------------------------------------------- the thread's side
    def pause(self, now: float) -> bool:
        """The search's look between two nodes: once its slice is over, give the turn back
        and wait for the next one (raise to end when stopped meanwhile)."""
        if now < self._until and not self._stop:
            return False
        self._back.set()
        self._go.wait()
        self._go.clear()
        if self._stop:
            raise _Stopped
        return False

    def _run(self) -> None:
        self._go.wait()
        self._go.clear()
        try:
            if not self._stop:
                self.proven = self._solve(self).proven_optimal
        except _Stopped:
            pass
        except BaseException as error:  # raised again in the main thread (advance)
            self.error = error
        finally:
            self.done = True
            self._back.set()

    # ---------------------------------------------------------------- the main thread's side
    def advance(self, until: float) -> bool:
        """Run the search until ``until`` (a ``time.perf_counter()`` value): whether it has
        proven its incumbent optimal. Raises the error the search met, if any."""
        if self.done:
            self._raise()
            return self.proven
        tic = time.perf_counter()
        self._until = until
        self._back.clear()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"satdt-{self.name}")
            self._thread.daemon = True
            self._thread.start()
        self._go.set()
        self._back.wait()
        self.seconds += time.perf_counter() - tic
        self._raise()
        return self.done and self.proven

    def _raise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def close(self) -> None:
        """Stop the search and wait for its thread to end (it ends at its next look)."""
        self._stop = True
        thread = self._thread
        if thread is None or self.done:
            return
        self._go.set()
        thread.join(CLOSE_WAIT)


def stop_all(searches: list[Any]) -> None:
    """Close every search of ``searches`` that runs in a thread."""
    for search in searches:
        if isinstance(search, ThreadedSearch):
            search.close()
