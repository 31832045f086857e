"""Running incremental SAT solvers against a wall-clock deadline.

Every SAT search of satdt keeps one incremental PySAT solver per formula, adds clauses to it
between calls and must stop at its ``time_limit`` with the best model known. This module holds
what that needs, independently of any encoding: the solvers that support it, a solve call
that returns ``None`` when the deadline passes (timer interrupts, or conflict budgets for
CaDiCaL, which cannot be interrupted from another thread), and clause insertion in chunks
that checks the clock in between (a large formula can take longer to hand over than to solve).

Deadlines are ``time.perf_counter()`` values (``None``: no limit).
"""

from __future__ import annotations

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

    ``name`` is the solver's PySAT name (one of :data:`SAT_SOLVERS`). Ctrl-C inside the solver
    (which PySAT reports as its own error) becomes KeyboardInterrupt, so that callers can
    return the best model known.
    """
    try:
        return _solve_until(solver, name, assumptions, deadline)
    except Exception as exc:
        if "keyboard interrupt" in str(exc).lower():
            raise KeyboardInterrupt from None
        raise


def _solve_until(
    solver: Solver, name: str, assumptions: list[int], deadline: float | None
) -> bool | None:
    """See :func:`solve_until`.

    CaDiCaL cannot be interrupted from another thread, so it runs on conflict budgets sized
    to about a tenth of a second between looks at the clock; the other solvers are
    interrupted by a timer.
    """
    if deadline is None:
        return solver.solve(assumptions=assumptions)
    if time.perf_counter() >= deadline:
        return None
    if name.startswith("cadical"):
        budget = 2000
        while True:
            started = time.perf_counter()
            solver.conf_budget(budget)
            status = solver.solve_limited(assumptions=assumptions)
            if status is not None:
                return status
            now = time.perf_counter()
            if now >= deadline:
                return None
            spent = max(now - started, 1e-4)
            budget = int(min(max(budget * 0.1 / spent, 500), 10**6))
    timer = threading.Timer(max(deadline - time.perf_counter(), 0.0), solver.interrupt)
    timer.start()
    try:
        status = solver.solve_limited(assumptions=assumptions, expect_interrupt=True)
    finally:
        timer.cancel()
        solver.clear_interrupt()
    return status
