"""Running incremental SAT solvers against a wall-clock deadline.

Every SAT search of satdt keeps one incremental PySAT solver per formula, adds clauses to it
between calls and must stop at its ``time_limit`` with the best model known. This module holds
what that needs, independently of any encoding: the solvers that support it, a solve call
that returns ``None`` when the deadline passes and stops cleanly on Ctrl-C (interrupts, or
conflict budgets for CaDiCaL, which cannot be interrupted from another thread), and clause
insertion in chunks that checks the clock in between (a large formula can take longer to
hand over than to solve).

Deadlines are ``time.perf_counter()`` values (``None``: no limit).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Sequence

from pysat.solvers import Solver

from ..errors import TimeUp

# Solvers that accept clauses between calls and can be stopped at a deadline.
SAT_SOLVERS = ("cadical195", "glucose4", "glucose3", "minisat22", "maplechrono")
DEFAULT_SOLVER = "glucose4"
# How many clauses to hand to the solver between two looks at the clock.
CLAUSE_CHUNK = 20000


def past(deadline: float | None) -> bool:
    """Whether the deadline (a ``time.perf_counter()`` value, or ``None``) has passed."""
    return deadline is not None and time.perf_counter() >= deadline


def add_clauses(
    solver: Solver,
    clauses: Sequence[list[int]],
    deadline: float | None,
    chunk: int = CLAUSE_CHUNK,
) -> None:
    """Append ``clauses`` to ``solver``, ``chunk`` at a time, looking at the clock before each.

    Raises
    ------
    TimeUp
        When the deadline passes before every clause is in (some chunks may be in already).
    """
    for start in range(0, len(clauses), chunk):
        if past(deadline):
            raise TimeUp
        solver.append_formula(clauses[start : start + chunk])


def solve_until(
    solver: Solver, name: str, assumptions: list[int], deadline: float | None
) -> bool | None:
    """Solve under ``assumptions``; ``None`` when ``deadline`` (a perf_counter value) passes first.

    ``name`` is the solver's PySAT name (one of :data:`SAT_SOLVERS`). The solver runs in a
    helper thread, with PySAT's ``expect_interrupt`` (the GIL released, no signal handler of
    its own), while the calling thread waits. PySAT's own Ctrl-C handling (``solve()``, and
    ``solve_limited`` without ``expect_interrupt``) jumps out of the solver from inside a
    signal handler, which can leave the solver's memory corrupt: the process then crashed when
    the search went on to return its best tree. Here Ctrl-C reaches the waiting thread, which
    stops the solver cleanly and raises KeyboardInterrupt, so that callers can return the best
    model known.
    """
    if past(deadline):
        return None
    call = _SolveCall(solver, name, assumptions, deadline)
    threading.Thread(target=call.run, name="satdt-solve", daemon=True).start()
    # waits on an Event, not Thread.join: a join that Ctrl-C interrupts can leave the thread
    # looking finished while it still runs, and the solver would be freed under it
    try:
        while not call.finished.wait(_wait(deadline)):
            if past(deadline):
                break
    except BaseException:  # Ctrl-C: stop the solver cleanly, then let it propagate
        _stop(call)
        raise
    _stop(call)
    return call.result()


def _stop(call: _SolveCall) -> None:
    """Stop the call and wait for it to end, through further Ctrl-C: the solver must not be
    freed while its thread still runs in it (a stopped call ends within a fraction of a
    second); then clear the solver's interrupt flag for its next call."""
    call.stop()
    while True:
        try:
            call.finished.wait()
            break
        except KeyboardInterrupt:
            continue
    if not call.sliced:
        call.solver.clear_interrupt()


def _wait(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.perf_counter(), 0.0)


class _SolveCall:
    """One solve call run by a helper thread; see :func:`solve_until`.

    CaDiCaL cannot be interrupted from another thread, so it runs on conflict budgets sized to
    about a tenth of a second between looks at the clock and at the stop flag; the other
    solvers are interrupted.
    """

    def __init__(
        self, solver: Solver, name: str, assumptions: list[int], deadline: float | None
    ) -> None:
        self.solver, self.assumptions, self.deadline = solver, assumptions, deadline
        self.sliced = name.startswith("cadical")
        self.stopped = threading.Event()
        self.status: bool | None = None
        self.error: BaseException | None = None
        self.finished = threading.Event()

    def run(self) -> None:
        if hasattr(signal, "pthread_sigmask"):  # Ctrl-C goes to the waiting thread
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.status = self._sliced() if self.sliced else self._whole()
        except BaseException as exc:  # handed to the waiting thread
            self.error = exc
        finally:
            self.finished.set()

    def _whole(self) -> bool | None:
        return self.solver.solve_limited(assumptions=self.assumptions, expect_interrupt=True)

    def _sliced(self) -> bool | None:
        budget = 2000
        while not self.stopped.is_set():
            started = time.perf_counter()
            self.solver.conf_budget(budget)
            status = self.solver.solve_limited(assumptions=self.assumptions, expect_interrupt=True)
            if status is not None:
                return status
            now = time.perf_counter()
            if self.deadline is not None and now >= self.deadline:
                return None
            spent = max(now - started, 1e-4)
            budget = int(min(max(budget * 0.1 / spent, 500), 10**6))
        return None

    def stop(self) -> None:
        """Ask the solve to end now (harmless once it has ended)."""
        self.stopped.set()
        if not self.sliced:
            self.solver.interrupt()

    def result(self) -> bool | None:
        """The call's answer (``None``: stopped first)."""
        if self.error is not None:
            raise self.error
        return self.status
