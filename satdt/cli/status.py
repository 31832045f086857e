"""The live lines on stderr: a search's status and ``--trace``, and a sweep's progress bar."""

from __future__ import annotations

import time
from typing import Any, TextIO

from ..task.events import Event, LowerBound, Progress, SatCall
from ..task.objectives import OBJECTIVES
from ..task.result import SearchResult

_TRACE_HEADER = "depth round examples variables   clauses answer                   time s  counterexamples added"


class Status:
    """A one-line live status on stderr (only on a terminal), and the ``--trace`` lines."""

    def __init__(
        self, enabled: bool, stream: TextIO, trace: TextIO | None = None, line_numbers=None
    ) -> None:
        self.enabled = enabled and stream.isatty()
        self.stream = stream
        self.shown = False
        self.trace = trace
        self.line_numbers = line_numbers
        self.trace_started = False
        self.lower = 0.0  # the bounds so far, for the --trace lines
        self.upper = float("inf")

    def show(self, text: str) -> None:
        if self.enabled:
            self.stream.write("\r\033[K" + text)
            self.stream.flush()
            self.shown = True

    def event(self, event: Event) -> None:
        if isinstance(event, SatCall):
            self.sat_call(event)
        elif isinstance(event, Progress):
            done = f" {event.done:g}/{event.total:g}" if event.total else ""
            self.show(f"{event.step}{done}")
        elif isinstance(event, LowerBound):
            self.lower = event.value
            self.bounds(event.elapsed)

    def bounds(self, seconds: float, objective: str = "depth") -> None:
        """A ``--trace`` line: the bounds proven and achieved once either changed."""
        if self.trace is None or self.upper == float("inf"):
            return
        self.clear()
        unit = OBJECTIVES[objective].unit
        self.trace.write(f"bounds: {self.lower:g} <= {unit} <= {self.upper:g}  ({seconds:.3f} s)\n")
        self.trace.flush()

    def sat_call(self, call: SatCall) -> None:
        if self.trace is not None:
            self.clear()
            if not self.trace_started:
                self.trace.write(_TRACE_HEADER + "\n")
                self.trace_started = True
            added = ", ".join(
                f"line {self.line_numbers[row]} ({label})" for row, label in call.counterexamples
            )
            bound = "" if call.max_leaves is None else f" <={call.max_leaves} leaves"
            self.trace.write(
                f"{call.depth:>5} {call.round:>5} {call.n_examples:>8} {call.n_vars:>9} "
                f"{call.n_clauses:>9} {call.status + bound:<20} {call.time:>8.3f}  {added}\n"
            )
            self.trace.flush()
        self.show(
            f"depth {call.depth}  round {call.round}  examples {call.n_examples}  {call.status}"
        )

    def improve(self, result: SearchResult) -> None:
        if OBJECTIVES[result.objective].consistency:
            self.upper = result.objective_value
            self.bounds(result.runtime, result.objective)
        self.show(f"{result.runtime:7.2f} s  best {result.objective}: {result.objective_value:g}")

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


class SweepBar:
    """Sweep progress on stderr: a bar on a terminal, else a plain line every tenth of the tasks."""

    def __init__(self, stream: TextIO, quiet: bool) -> None:
        self.stream = stream
        self.tty = stream.isatty() and not quiet
        self.quiet = quiet
        self.tenth = -1

    def __call__(self, p: Any) -> None:
        finished = p.skipped + p.done
        eta = "" if p.eta is None else f"  ETA {time.strftime('%H:%M:%S', time.gmtime(p.eta))}"
        counts = f"{finished}/{p.total} done  {p.running} running  {p.failed} failed{eta}"
        if self.tty:
            filled = 30 * finished // max(p.total, 1)
            self.stream.write(f"\r\033[K[{'#' * filled}{'.' * (30 - filled)}] {counts}")
            self.stream.flush()
        elif not self.quiet and 10 * finished // max(p.total, 1) > self.tenth:
            self.tenth = 10 * finished // max(p.total, 1)
            self.stream.write(f"sweep: {counts}\n")
            self.stream.flush()

    def clear(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()
