"""Searches that take turns on one core: a search in a thread of its own runs only while the
caller waits for it, hands the turn back once its slice is over, raises its errors in the
caller's thread and ends when closed."""

from __future__ import annotations

import threading
import time

import pytest

from satdt.dp.turns import Forwarding, ThreadedSearch
from satdt.models.tree import Tree
from satdt.task.result import Recorder

pytestmark = pytest.mark.no_kernels


class _Counting:
    """A search that counts its steps and looks at the clock between two (as DL8.5 does)."""

    def __init__(self, steps: int | None = None) -> None:
        self.steps = 0
        self.limit = steps
        self.running = threading.Event()

    def __call__(self, companion: ThreadedSearch):
        while self.limit is None or self.steps < self.limit:
            self.running.set()
            self.steps += 1
            time.sleep(0.0005)
            self.running.clear()
            companion.pause(time.perf_counter())
        return _Result(proven_optimal=True)


class _Result:
    def __init__(self, proven_optimal: bool) -> None:
        self.proven_optimal = proven_optimal


def test_a_search_runs_only_during_its_turns():
    search = _Counting()
    run = ThreadedSearch("count", search)
    try:
        assert not run.advance(time.perf_counter() + 0.01)
        first = search.steps
        assert first >= 1
        time.sleep(0.02)  # the caller's time: the search waits for its turn
        assert search.steps == first and not search.running.is_set()
        run.advance(time.perf_counter() + 0.01)
        assert search.steps > first
    finally:
        run.close()
    assert run.done


def test_a_finished_search_says_whether_it_proved():
    run = ThreadedSearch("count", _Counting(steps=3))
    assert run.advance(time.perf_counter() + 10.0)  # it ends before its slice does
    assert run.done and run.proven
    assert run.advance(time.perf_counter() + 10.0)  # and says so again


def test_an_error_of_the_search_is_raised_in_the_callers_thread():
    def broken(companion):
        companion.pause(time.perf_counter())
        raise KeyboardInterrupt  # a Ctrl-C the search raised at its look at the clock

    run = ThreadedSearch("broken", broken)
    with pytest.raises(KeyboardInterrupt):
        for _ in range(5):
            run.advance(time.perf_counter())
    assert run.done


def test_closing_ends_the_thread_at_its_next_look():
    run = ThreadedSearch("count", _Counting())
    run.advance(time.perf_counter() + 0.005)
    run.close()
    assert run.done
    assert not any(t.name == "satdt-count" for t in threading.enumerate())


def test_a_search_never_started_closes_at_once():
    run = ThreadedSearch("count", _Counting())
    run.close()
    assert not run.done  # nothing ran


def test_the_forwarding_recorder_reports_to_the_main_one_and_prunes_with_its_incumbent():
    main = Recorder("error")
    forwarding = Forwarding(main)
    leaf = Tree.single_leaf(0, [0, 1])
    main.improve(leaf, 5.0, mapped=True)
    assert forwarding.best.value == 5.0
    assert forwarding.improve(leaf, 6.0, mapped=True) is None  # no better: ignored
    forwarding.improve(leaf, 4.0, mapped=True)
    assert [i.value for i in main.history] == [5.0, 4.0]
    forwarding.lower_bound = 3.0  # its own bounds and statistics
    assert main.lower_bound == 0.0
