"""The portfolio of Blossom and CA-DL8.5 (``method="auto"`` for the error objective)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from helpers import ROOT, examples
from helpers import alive as _alive
from helpers import children as _children
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import min_error

from satdt import NotProvenWarning, OptimalTreeClassifier
from satdt.dp import blossom, dl85, parallel, portfolio
from satdt.dp.common import SearchSettings
from satdt.dp.portfolio import PortfolioOptions
from satdt.task.events import Restart
from satdt.task.result import Recorder
from satdt.task.stats import PortfolioStats


def _optimum(B, y, n_classes, depth, w=None) -> float:
    return blossom.solve_min_error(
        B, y, n_classes, depth, SearchSettings(sample_weight=w, recorder=Recorder("error"))
    ).objective_value


@settings(max_examples=examples(40), deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 40),
    m=st.integers(1, 6),
    classes=st.integers(1, 3),
    depth=st.integers(0, 3),
    weighted=st.booleans(),
    every=st.sampled_from([0.0, 0.05]),
)
def test_portfolio_finds_and_proves_the_optimum(seed, n, m, classes, depth, weighted, every):
    rng = np.random.default_rng(seed)
    B = rng.integers(0, 2, size=(n, m), dtype=np.uint8)
    y = rng.integers(0, classes, size=n)
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    result = portfolio.solve_min_error(
        B,
        y,
        classes,
        depth,
        SearchSettings(sample_weight=w, recorder=Recorder("error")),
        PortfolioOptions(first_slice=0.0, every=every),
    )
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(_optimum(B, y, classes, depth, w))
    assert result.lower_bound == pytest.approx(result.objective_value)
    assert result.model.count_error() == pytest.approx(result.objective_value)


@settings(max_examples=examples(60), deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 12),
    m=st.integers(1, 5),
    classes=st.integers(2, 4),
    depth=st.integers(0, 3),
    penalty=st.sampled_from([0.0, 0.3, 1.0, 50.0]),
    min_support=st.sampled_from([1, 2, 3]),
    every=st.sampled_from([0.0, 0.05]),
)
def test_portfolio_minimises_the_penalised_cost_under_the_support(
    seed, n, m, classes, depth, penalty, min_support, every
):
    """Both searches minimise error + penalty x leaves under the minimum support: the proven
    value is the brute force's and the tree costs exactly that."""
    rng = np.random.default_rng(seed)
    B = rng.integers(0, 2, size=(n, m), dtype=np.uint8)
    B = B[rng.integers(0, n, size=n)]  # duplicates
    y = rng.integers(0, classes, size=n)
    w = rng.choice([0.0, 0.5, 1.0, 2.0], size=n)
    result = portfolio.solve_min_error(
        B,
        y,
        classes,
        depth,
        SearchSettings(
            sample_weight=w,
            recorder=Recorder("error"),
            leaf_penalty=penalty,
            min_support=min_support,
        ),
        PortfolioOptions(first_slice=0.0, every=every),
    )
    expected = min_error(B, y, w, classes, depth, min_support, leaf_penalty=penalty)
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(expected, abs=1e-9)
    assert result.lower_bound == pytest.approx(result.objective_value)
    tree = result.model
    cost = tree.count_error() + penalty * tree.n_leaves
    assert cost == pytest.approx(result.objective_value, abs=1e-9)
    if tree.n_leaves > 1:
        reached = tree.apply(B[w > 0].astype(float))
        leaves = np.flatnonzero(tree.feature < 0)
        assert min((reached == leaf).sum() for leaf in leaves) >= min_support


def _hard(seed: int = 0, n: int = 400, m: int = 40):
    rng = np.random.default_rng(seed)
    B = rng.integers(0, 2, size=(n, m), dtype=np.uint8)
    y = (B[:, 0] ^ B[:, 1] ^ (rng.random(n) < 0.2)).astype(np.int64)
    return B, y


def test_both_searches_share_the_work_and_the_proof():
    """With no first slice, DL8.5 and Blossom alternate; the answer is Blossom's optimum."""
    B, y = _hard(n=160, m=12)
    result = portfolio.solve_min_error(
        B,
        y,
        2,
        4,
        SearchSettings(recorder=Recorder("error")),
        PortfolioOptions(first_slice=0.0, every=0.0005),
    )
    stats = result.stats
    assert isinstance(stats, PortfolioStats)
    assert stats.blossom_seconds > 0 and stats.dl85_seconds > 0
    assert stats.proven_by in ("blossom", "dl85")
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(_optimum(B, y, 2, 4))
    values = [value for _, value, *_ in result.history]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)


def test_deadline_returns_the_best_tree_not_proven():
    B, y = _hard()
    tic = time.perf_counter()
    result = portfolio.solve_min_error(
        B,
        y,
        2,
        6,
        SearchSettings(recorder=Recorder("error"), deadline=tic + 1.0),
        PortfolioOptions(first_slice=0.2),
    )
    assert time.perf_counter() - tic < 1.6
    assert not result.proven_optimal
    assert result.model.count_error() == pytest.approx(result.objective_value)
    assert result.lower_bound <= result.objective_value


def test_auto_runs_the_portfolio_for_error():
    B, y = _hard(n=80, m=8)
    model = OptimalTreeClassifier(objective="error", max_depth=3).fit(B, y)
    assert isinstance(model.result_.stats, PortfolioStats)
    assert model.result_.proven_optimal
    assert model.result_.objective_value == pytest.approx(_optimum(B, y, 2, 3))


def test_a_caller_bound_is_kept_when_nothing_beats_it():
    B, y = _hard(n=60, m=6)
    best = _optimum(B, y, 2, 2)
    recorder = Recorder("error")
    tree = blossom.solve_min_error(B, y, 2, 2, SearchSettings(recorder=Recorder("error"))).model
    recorder.improve(tree, best)
    result = portfolio.solve_min_error(
        B,
        y,
        2,
        2,
        SearchSettings(recorder=recorder, upper_bound=best),
        PortfolioOptions(first_slice=0.0),
    )
    assert result.proven_optimal
    assert result.model.count_error() == pytest.approx(best)
    assert result.history[-1][2] is tree


# ---------------------------------------------------------------------- two jobs
@pytest.fixture
def race_at_once(monkeypatch):
    """Fork CA-DL8.5's process at once (small data would be proven by Blossom alone)."""
    monkeypatch.setattr(parallel, "ALONE", 0.0)


@pytest.fixture
def blossom_idle(monkeypatch, race_at_once):
    """Blossom finds nothing: the trees and the proof must come from CA-DL8.5's process."""

    def idle(self, until):
        time.sleep(0.002 if until is None else max(0.0, min(until - time.perf_counter(), 0.002)))
        return self.proven

    monkeypatch.setattr(blossom.BlossomRun, "advance", idle)


@pytest.mark.parametrize("idle", [False, True])  # idle: the child (plain DL8.5) proves
@pytest.mark.parametrize(
    ("seed", "depth", "penalty", "support"),
    [(0, 2, 0.0, 1), (1, 3, 0.0, 1), (2, 3, 0.7, 1), (3, 2, 0.0, 3), (4, 3, 1.5, 2)],
)
def test_two_jobs_prove_the_brute_force_optimum(
    race_at_once, request, idle, seed, depth, penalty, support
):
    rng = np.random.default_rng(seed)
    n, m = 24, 5
    B = rng.integers(0, 2, size=(n, m), dtype=np.uint8)
    y = rng.integers(0, 3, size=n)
    w = rng.choice([0.0, 1.0, 2.0], size=n)
    expected = min_error(B, y, w, 3, depth, support, leaf_penalty=penalty)
    leaf = {"leaf_penalty": penalty, "min_support": support}
    one = portfolio.solve_min_error(
        B, y, 3, depth, SearchSettings(sample_weight=w, recorder=Recorder("error"), **leaf)
    )
    two = portfolio.solve_min_error(
        B,
        y,
        3,
        depth,
        SearchSettings(sample_weight=w, recorder=Recorder("error"), **leaf),
        PortfolioOptions(n_jobs=2),
    )
    assert one.proven_optimal and two.proven_optimal
    assert two.objective_value == pytest.approx(expected, abs=1e-9)
    assert one.objective_value == pytest.approx(expected, abs=1e-9)
    assert two.model.count_error() + penalty * two.model.n_leaves == pytest.approx(expected)
    assert isinstance(two.stats, PortfolioStats) and two.stats.proven_by in ("blossom", "dl85")
    values = [value for _, value, *_ in two.history]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)


def test_the_second_process_sends_its_trees_restarts_and_proof(request):
    """The child's trees reach the recorder (and ``on_improve``), CA-DL8.5's restarts (under
    a rule) the events; its proof is the result's."""
    B, y = _hard(n=300, m=20)
    expected = _optimum(B, y, 2, 3)
    request.getfixturevalue("blossom_idle")
    seen = []
    recorder = Recorder("error", on_improve=lambda result: seen.append(result.objective_value))
    result = portfolio.solve_min_error(
        B,
        y,
        2,
        3,
        SearchSettings(recorder=recorder),
        PortfolioOptions(n_jobs=2, parallel_rule="topk"),
    )
    assert result.proven_optimal and result.stats.proven_by == "cadl85"
    assert result.objective_value == pytest.approx(expected)
    assert result.model.count_error() == pytest.approx(result.objective_value)
    assert seen == [value for _, value, *_ in result.history] and seen
    restarts = [event for event in result.events if isinstance(event, Restart)]
    assert restarts and restarts[-1].complete
    assert result.stats.restarts == len(restarts) and result.stats.dl85_seconds > 0


def test_the_estimator_runs_the_portfolio_on_two_jobs(race_at_once, spawned):
    B, y = _hard(n=200, m=12)
    model = OptimalTreeClassifier(objective="error", max_depth=3, method="portfolio", n_jobs=2)
    model.fit(B, y)
    assert model.method_ == "portfolio"
    assert model.result_.proven_optimal
    assert model.result_.objective_value == pytest.approx(_optimum(B, y, 2, 3))
    assert spawned() == []


@pytest.mark.filterwarnings("ignore::satdt.core.errors.NotProvenWarning")
def test_two_jobs_keep_the_time_limit(spawned):
    B, y = _hard(n=2000, m=60)
    tic = time.perf_counter()
    model = OptimalTreeClassifier(
        objective="error", max_depth=6, method="portfolio", n_jobs=2, time_limit=1.5
    ).fit(B, y)
    assert time.perf_counter() - tic < 1.5 + 0.7
    assert not model.result_.proven_optimal
    assert model.result_.model.count_error() <= len(y)
    assert spawned() == []


_LONG_FIT = """
import numpy as np
from satdt import OptimalTreeClassifier
rng = np.random.default_rng(0)
B = rng.integers(0, 2, size=(3000, 80), dtype=np.uint8)
y = (B[:, 0] ^ B[:, 1] ^ (rng.random(3000) < 0.2)).astype(np.int64)
model = OptimalTreeClassifier(objective="error", max_depth=7, method="portfolio", n_jobs=2,
                              time_limit=60).fit(B, y)
print(model.result_.stop_reason, model.result_.proven_optimal, flush=True)
"""


def _start_long_fit() -> tuple[subprocess.Popen, int]:
    """A process running a long two-job fit, and its CA-DL8.5 child once started."""
    root = ROOT
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    fit = subprocess.Popen(
        [sys.executable, "-c", _LONG_FIT], env=env, stdout=subprocess.PIPE, text=True
    )
    until = time.perf_counter() + 60
    while time.perf_counter() < until:
        children = _children(fit.pid)
        if children:
            return fit, children[0]
        time.sleep(0.05)
    fit.kill()
    raise AssertionError("the fit started no second process")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_fit_leaves_no_process_behind():
    fit, child = _start_long_fit()
    time.sleep(0.3)
    fit.send_signal(signal.SIGKILL)
    fit.wait()
    until = time.perf_counter() + 3
    while _alive(child) and time.perf_counter() < until:
        time.sleep(0.05)
    assert not _alive(child)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_keeps_the_best_tree_and_stops_the_second_process():
    fit, child = _start_long_fit()
    time.sleep(0.5)
    fit.send_signal(signal.SIGINT)
    out, _ = fit.communicate(timeout=10)
    assert fit.returncode == 0
    assert out.split() == ["interrupted", "False"]
    assert not _alive(child)


def test_an_error_of_the_second_process_is_raised_here(blossom_idle, monkeypatch, spawned):
    def broken(**kwargs):
        raise RuntimeError("internal error: broken")

    monkeypatch.setattr(dl85, "solve_min_error", broken)
    B, y = _hard(n=100, m=10)
    with pytest.raises(RuntimeError, match="broken"):
        portfolio.solve_min_error(
            B, y, 2, 3, SearchSettings(recorder=Recorder("error")), PortfolioOptions(n_jobs=2)
        )
    assert spawned() == []


def test_two_jobs_wait_for_no_compilation(monkeypatch):
    """With a kernel group not compiled yet, two jobs run the one-core schedule (which starts
    with whichever search is ready) instead of forking a process that would compile it."""

    def forked(*args, **kwargs):
        raise AssertionError("forked a process before the kernels were ready")

    monkeypatch.setattr(parallel, "solve_min_error", forked)
    monkeypatch.setattr(portfolio.kernels, "ready", lambda names: "blossom" not in names)
    B, y = _hard(n=100, m=10)
    result = portfolio.solve_min_error(
        B, y, 2, 3, SearchSettings(recorder=Recorder("error")), PortfolioOptions(n_jobs=2)
    )
    assert result.proven_optimal and result.stats.proven_by == "dl85"
    assert result.objective_value == pytest.approx(_optimum(B, y, 2, 3))


# ---------------------------------------------------------------- CA-DL8.5's restricted searches
class _Progress:
    """A companion that records DL8.5's progress at each of its looks."""

    every = 0.0005

    def __init__(self) -> None:
        self.seen: list[float] = []
        self.search = None

    def watch(self, search) -> None:
        self.search = search

    def pause(self, now: float) -> bool:
        self.seen.append(self.search.progress())
        return False


def test_the_progress_of_dl85_grows_to_nearly_all_of_its_search():
    B, y = _hard(n=160, m=12)
    watcher = _Progress()
    dl85.solve_min_error(B, y, 2, 4, SearchSettings(recorder=Recorder("error")), companion=watcher)
    assert watcher.seen and all(0.0 <= p <= 1.0 for p in watcher.seen)
    assert watcher.seen[0] < 0.2 and max(watcher.seen) > 0.6


class _Search:
    def __init__(self, done: float) -> None:
        self.done = done

    def progress(self) -> float:
        return self.done


def test_dl85_is_behind_the_clock_when_less_of_it_is_done_than_of_the_time_limit():
    recorder = Recorder("error")
    start = time.perf_counter()

    def slices(deadline, done):
        s = portfolio._Slices([], recorder, 0.0, deadline, portfolio.BEHIND)
        s.began = start
        s.watch(_Search(done))
        return s

    late = start + portfolio.BEHIND_AFTER + 1.0  # 1 s after the first look that may judge
    assert not slices(None, 0.0).behind(late)  # no time limit: the proof comes first
    assert not slices(start + 100.0, 0.0).behind(start + 0.5)  # too soon to say
    ten = start + 10 * (portfolio.BEHIND_AFTER + 1.0)  # a tenth of the time limit gone
    assert slices(ten, 0.05).behind(late)
    assert not slices(ten, 0.2).behind(late)


def _threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("satdt-cadl85")]


@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 40),
    m=st.integers(1, 6),
    classes=st.integers(2, 3),
    depth=st.integers(2, 4),
    leaf=st.sampled_from([(0.0, 1), (0.6, 1), (0.0, 2)]),
)
def test_behind_the_clock_every_search_takes_turns_and_the_optimum_is_proven(
    monkeypatch, seed, n, m, classes, depth, leaf
):
    monkeypatch.setattr(portfolio._Slices, "behind", lambda self, now: True)
    penalty, support = leaf
    rng = np.random.default_rng(seed)
    B = rng.integers(0, 2, size=(n, m), dtype=np.uint8)
    y = rng.integers(0, classes, size=n)
    expected = min_error(B, y, np.ones(n), classes, depth, support, leaf_penalty=penalty)
    settings_ = SearchSettings(
        recorder=Recorder("error"), deadline=time.perf_counter() + 60.0,
        leaf_penalty=penalty, min_support=support,
    )  # fmt: skip
    result = portfolio.solve_min_error(
        B, y, classes, depth, settings_, PortfolioOptions(every=0.0002)
    )
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(expected, abs=1e-9)
    tree = result.model
    assert tree.count_error() + penalty * tree.n_leaves == pytest.approx(result.objective_value)
    values = [value for _, value, *_ in result.history]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
    assert _threads() == []  # every restricted search's thread ended


def test_behind_the_clock_the_restricted_searches_run_and_their_trees_count(monkeypatch):
    monkeypatch.setattr(portfolio, "BEHIND_AFTER", 0.2)
    B, y = _hard(n=600, m=60)
    tic = time.perf_counter()
    recorder = Recorder("error")
    result = portfolio.solve_min_error(
        B, y, 2, 6, SearchSettings(recorder=recorder, deadline=tic + 1.2), PortfolioOptions()
    )
    stats = result.stats
    assert not result.proven_optimal
    assert stats.restricted_seconds > 0.1  # once DL8.5 was behind, from 0.2 s on
    assert result.model.count_error() == pytest.approx(result.objective_value)
    assert any(
        isinstance(e, Restart) and e.rule in ("topk", "discrepancy") for e in recorder.events
    )
    assert _threads() == []


def test_a_proof_that_keeps_up_with_the_clock_runs_no_restricted_search():
    B, y = _hard(n=160, m=12)
    result = portfolio.solve_min_error(
        B, y, 2, 4,
        SearchSettings(recorder=Recorder("error"), deadline=time.perf_counter() + 60.0),
        PortfolioOptions(),
    )  # fmt: skip
    assert result.proven_optimal
    assert result.stats.restricted_seconds == 0.0


def test_ctrl_c_while_a_restricted_search_has_the_turn_ends_its_thread(monkeypatch):
    from satdt.dp.turns import ThreadedSearch

    advance = ThreadedSearch.advance
    calls = [0]

    def interrupted(self, until):
        calls[0] += 1
        if calls[0] == 3:  # the Ctrl-C lands while the portfolio waits for the turn
            advance(self, until)
            raise KeyboardInterrupt
        return advance(self, until)

    monkeypatch.setattr(ThreadedSearch, "advance", interrupted)
    monkeypatch.setattr(portfolio._Slices, "behind", lambda self, now: True)
    B, y = _hard(n=600, m=60)
    model = OptimalTreeClassifier(objective="error", max_depth=6, time_limit=30)
    with pytest.warns(NotProvenWarning, match="interrupted"):
        model.fit(B, y)
    assert model.result_.stop_reason == "interrupted"
    assert calls[0] == 3
    assert _threads() == []
