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

from ..core.errors import TimeUp, honour_interrupt

# Solvers that accept clauses between calls and can be stopped at a deadline.
SAT_SOLVERS = ("cadical195", "glucose4", "glucose3", "minisat22", "maplechrono")
DEFAULT_SOLVER = "glucose4"
# How many clauses to hand to the solver between two looks at the clock.
CLAUSE_CHUNK = 20000


def past(deadline: float | None) -> bool:
    """Whether the deadline (a ``time.perf_counter()`` value, or ``None``) has passed."""
    return deadline is not None and time.perf_counter() >= deadline


def add_clauses(
    solver: Solver | SolverRace,
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
    solver: Solver | SolverRace, name: str, assumptions: list[int], deadline: float | None
) -> bool | None:
    """Solve under ``assumptions``; ``None`` when ``deadline`` (a perf_counter value) passes first.

    ``name`` is the solver's PySAT name (one of :data:`SAT_SOLVERS`; ignored for a
    :class:`SolverRace`, whose solvers have theirs). The solver runs in a helper thread, with
    PySAT's ``expect_interrupt`` (the GIL released, no signal handler of its own), while the
    calling thread waits. PySAT's own Ctrl-C handling (``solve()``, and ``solve_limited``
    without ``expect_interrupt``) jumps out of the solver from inside a signal handler, which
    can leave the solver's memory corrupt: the process then crashed when the search went on
    to return its best tree. Here Ctrl-C reaches the waiting thread, which stops the solver
    cleanly and raises KeyboardInterrupt, so that callers can return the best model known.
    A race runs each of its solvers in its own thread; the first answer wins and stops the
    others.
    """
    honour_interrupt()  # a Ctrl-C that Python dropped since the last call
    if past(deadline):
        return None
    if isinstance(solver, SolverRace):
        calls = [_SolveCall(one, n, assumptions, deadline) for one, n in solver.entrants()]
    else:
        calls = [_SolveCall(solver, name, assumptions, deadline)]
    answered = threading.Event()
    go = threading.Event()  # the threads touch their solver only after this, unless stopped
    # waits on an Event, not Thread.join: a join that Ctrl-C interrupts can leave the thread
    # looking finished while it still runs, and the solver would be freed under it; a Ctrl-C
    # while the threads start (Thread.start waits for them) stops those that started
    try:
        for call in calls:
            call.answered, call.go = answered, go
            threading.Thread(target=call.run, name="satdt-solve", daemon=True).start()
        go.set()
        while _winner(calls) is None and not past(deadline):
            answered.wait(_wait(deadline))
            answered.clear()
    except BaseException:  # Ctrl-C: stop the solvers cleanly, then let it propagate
        _stop(calls)
        raise
    _stop(calls)
    winner = _winner(calls)
    if winner is None:
        return None
    if isinstance(solver, SolverRace):
        solver.winner = winner
        solver.wins[winner] += 1
    return calls[winner].result()


def _winner(calls: list[_SolveCall]) -> int | None:
    """The first call that answered (or failed); with every call ended unanswered, the first."""
    for index, call in enumerate(calls):
        if call.finished.is_set() and (call.status is not None or call.error is not None):
            return index
    if all(call.finished.is_set() for call in calls):
        return 0
    return None


def _stop(calls: list[_SolveCall]) -> None:
    """Stop the calls and wait for them to end, through further Ctrl-C: a solver must not be
    freed while its thread still runs in it (a stopped call ends within a fraction of a
    second); then clear the solvers' interrupt flags for their next call. A Ctrl-C that lands
    while it waits is raised once they have ended, never lost (also after a call that
    answered: the search must still stop)."""
    interrupted = False
    for call in calls:
        call.stop()
        if call.go is not None:
            call.go.set()  # a thread still waiting to begin ends without touching its solver
    for call in calls:
        if not call.entered:  # final once stopped: it never ran, or never will, its solver
            continue
        while True:
            try:
                call.finished.wait()
                break
            except KeyboardInterrupt:
                interrupted = True
        if not call.sliced:
            call.solver.clear_interrupt()
    if interrupted:
        raise KeyboardInterrupt


def _wait(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.perf_counter(), 0.0)


class SolverRace:
    """Several PySAT solvers holding one formula, raced on every call (``n_jobs`` > 1).

    It takes the clauses and phases a :class:`~pysat.solvers.Solver` takes, hands them to
    each solver, and :func:`solve_until` runs them side by side, one thread each (PySAT
    releases the GIL while they search), the first answer winning; ``get_model`` is the
    winner's. Every solver keeps what it learnt, so each call starts where it stopped.
    Memory is one formula per solver.
    """

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self.solvers = [Solver(name=name) for name in self.names]
        self.winner = 0
        self.wins = [0] * len(self.names)

    def entrants(self) -> list[tuple[Solver, str]]:
        return list(zip(self.solvers, self.names, strict=True))

    def append_formula(self, clauses: Sequence[list[int]]) -> None:
        for solver in self.solvers:
            solver.append_formula(clauses)

    def set_phases(self, literals: list[int]) -> None:
        for solver in self.solvers:
            solver.set_phases(literals)

    def nof_vars(self) -> int:
        return max(solver.nof_vars() for solver in self.solvers)

    def get_model(self) -> list[int] | None:
        return self.solvers[self.winner].get_model()

    def delete(self) -> None:
        for solver in self.solvers:
            solver.delete()


# Partners of a race, in the order they join it. Solvers that can be interrupted come first:
# a CaDiCaL that lost a call still runs to the end of its conflict budget (about 0.1 s) before
# the next call may touch it, which cost more than it won on the inferdt files.
RACE_ORDER = ("glucose4", "maplechrono", "minisat22", "glucose3", "cadical195")


def race_partners(name: str, n_jobs: int) -> list[str]:
    """The solvers of a race of ``n_jobs`` led by ``name``: the others in the order
    :data:`RACE_ORDER`."""
    order = RACE_ORDER
    others = [other for other in order if other != name]
    return [name, *others[: max(n_jobs, 1) - 1]]


def new_solver(name: str, n_jobs: int = 1) -> Solver | SolverRace:
    """One PySAT solver, or with ``n_jobs`` > 1 a :class:`SolverRace` led by it."""
    if n_jobs <= 1:
        return Solver(name=name)
    return SolverRace(race_partners(name, n_jobs))


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
        self.answered: threading.Event | None = None  # shared by the calls of a race
        self.go: threading.Event | None = None  # set once every thread of the call started
        self.entered = False  # whether the thread went into its solver (under ``lock``)
        self.lock = threading.Lock()

    def run(self) -> None:
        if hasattr(signal, "pthread_sigmask"):  # Ctrl-C goes to the waiting thread
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            if self.go is not None:
                self.go.wait()
            with self.lock:
                if self.stopped.is_set():
                    return
                self.entered = True
            self.status = self._sliced() if self.sliced else self._whole()
        except BaseException as exc:  # handed to the waiting thread
            self.error = exc
        finally:
            self.finished.set()
            if self.answered is not None:
                self.answered.set()

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
        """Ask the solve to end now (harmless once it has ended); a thread that has not gone
        into its solver yet never will."""
        with self.lock:
            self.stopped.set()
            entered = self.entered
        if entered and not self.sliced:
            self.solver.interrupt()

    def result(self) -> bool | None:
        """The call's answer (``None``: stopped first)."""
        if self.error is not None:
            raise self.error
        return self.status
