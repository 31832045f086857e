"""One proof on several cores: DL8.5's root splits shared out among worker processes
(``satdt.dp.root_split``, the portfolio's form for ``n_jobs >= 2`` at depth 4 or more)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import OPTIMA, ROOT, alive, children, examples, load_cp4im
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import min_error

from satdt import OptimalTreeClassifier
from satdt.dp import _dl85_search, blossom, portfolio, root_split
from satdt.dp.common import SearchSettings
from satdt.dp.portfolio import PortfolioOptions
from satdt.task.result import Recorder
from satdt.task.stats import PortfolioStats


@pytest.fixture
def workers_prove(monkeypatch):
    """The workers start at once and Blossom finds nothing: every tree and the proof come
    from the workers (small data would be proven by Blossom alone)."""

    def idle(self, until):
        time.sleep(0.002 if until is None else max(0.0, min(until - time.perf_counter(), 0.002)))
        return self.proven

    monkeypatch.setattr(root_split, "ALONE", 0.0)
    monkeypatch.setattr(blossom.BlossomRun, "advance", idle)


def _solve(B, y, w, n_classes, depth, n_jobs, **leaf):
    return portfolio.solve_min_error(
        B,
        y,
        n_classes,
        depth,
        SearchSettings(sample_weight=w, recorder=Recorder("error"), **leaf),
        PortfolioOptions(n_jobs=n_jobs),
    )


@settings(
    max_examples=examples(15),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 24),
    shape=st.sampled_from([(4, 5), (5, 3)]),  # (depth, features): brute force stays quick
    classes=st.integers(1, 3),
    weighted=st.booleans(),
    leaf=st.sampled_from([(0.0, 1), (0.7, 1), (0.0, 2), (1.5, 2)]),
)
def test_one_two_three_jobs_prove_the_brute_force_optimum(
    workers_prove, seed, n, shape, classes, weighted, leaf, spawned
):
    depth, m = shape
    penalty, support = leaf
    rng = np.random.default_rng(seed)
    B = rng.integers(0, 2, size=(n, m), dtype=np.uint8)
    y = rng.integers(0, classes, size=n)
    w = rng.choice([0.0, 1.0, 2.0], size=n) if weighted else np.ones(n)
    expected = min_error(B, y, w, classes, depth, support, leaf_penalty=penalty)
    for n_jobs in (1, 2, 3):
        result = _solve(B, y, w, classes, depth, n_jobs, leaf_penalty=penalty, min_support=support)
        assert result.proven_optimal, n_jobs
        assert result.objective_value == pytest.approx(expected, abs=1e-9), n_jobs
        assert result.lower_bound == pytest.approx(expected, abs=1e-9)
        tree = result.model
        assert tree.depth <= depth
        assert tree.count_error() + penalty * tree.n_leaves == pytest.approx(expected, abs=1e-9)
        values = [value for _, value, *_ in result.history]
        assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
    assert spawned() == []


@pytest.mark.parametrize(("name", "depth"), [("heart-cleveland", 4), ("vehicle", 4)])
@pytest.mark.parametrize("n_jobs", [2, 3])
def test_the_workers_prove_the_recorded_optima(workers_prove, name, depth, n_jobs):
    B, y = load_cp4im(name)
    seen = []
    recorder = Recorder("error", on_improve=lambda result: seen.append(result.objective_value))
    result = portfolio.solve_min_error(
        B, y, 2, depth, SearchSettings(recorder=recorder), PortfolioOptions(n_jobs=n_jobs)
    )
    assert result.proven_optimal and result.objective_value == OPTIMA[(name, depth)]
    assert result.model.count_error() == OPTIMA[(name, depth)]
    stats = result.stats
    assert isinstance(stats, PortfolioStats) and stats.proven_by == "dl85"
    assert stats.nodes > 0 and stats.dl85_seconds > 0
    assert seen == [value for _, value, *_ in result.history] and seen[-1] == OPTIMA[(name, depth)]


@pytest.mark.slow
def test_the_estimator_proves_the_recorded_optimum_on_every_core(spawned):
    B, y = load_cp4im("heart-cleveland")
    model = OptimalTreeClassifier(objective="error", max_depth=5, method="portfolio", n_jobs=-1)
    model.fit(B, y)
    assert model.result_.proven_optimal
    assert model.result_.objective_value == OPTIMA[("heart-cleveland", 5)]
    assert spawned() == []


def test_the_cache_cap_is_shared_out_among_the_workers(workers_prove):
    """The cap is the fit's: two workers under a tiny cap fill it and still prove."""
    B, y = load_cp4im("heart-cleveland")
    result = portfolio.solve_min_error(
        B, y, 2, 4, SearchSettings(recorder=Recorder("error")),
        PortfolioOptions(n_jobs=2, max_cache_mb=0.02),
    )  # fmt: skip
    assert result.proven_optimal and result.objective_value == OPTIMA[("heart-cleveland", 4)]
    assert result.stats.cache_full


def test_an_error_of_a_worker_is_raised_here(workers_prove, monkeypatch, spawned):
    def broken(*args, **kwargs):
        raise RuntimeError("internal error: broken")

    monkeypatch.setattr(_dl85_search.Search, "_branch", broken)
    B, y = load_cp4im("heart-cleveland")
    with pytest.raises(RuntimeError, match="broken"):
        portfolio.solve_min_error(
            B, y, 2, 4, SearchSettings(recorder=Recorder("error")), PortfolioOptions(n_jobs=2)
        )
    assert spawned() == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_killed_stops_the_search_unproven_with_its_best_tree(spawned):
    """A worker the system kills (short of memory, say) may hold a lock the others wait for:
    the parent stops them all and returns the best tree, unproven, with a true bound."""
    import threading

    B, y = load_cp4im("australian-credit")
    killed = []

    def kill_one():
        until = time.perf_counter() + 30
        while time.perf_counter() < until:
            workers = spawned()
            if len(workers) == 2:
                time.sleep(0.3)
                os.kill(workers[0], signal.SIGKILL)
                killed.append(workers[0])
                return
            time.sleep(0.01)

    killer = threading.Thread(target=kill_one)
    killer.start()
    tic = time.perf_counter()
    result = portfolio.solve_min_error(
        B, y, 2, 5, SearchSettings(recorder=Recorder("error")), PortfolioOptions(n_jobs=2)
    )
    killer.join()
    assert killed and time.perf_counter() - tic < 5.0
    assert not result.proven_optimal and result.stats.proven_by == ""
    optimum = OPTIMA[("australian-credit", 5)]
    assert result.model.count_error() == result.objective_value >= optimum
    assert result.lower_bound <= optimum
    assert spawned() == []


@pytest.mark.filterwarnings("ignore::satdt.core.errors.NotProvenWarning")
def test_a_deadline_keeps_the_best_tree_and_a_true_lower_bound(spawned):
    B, y = load_cp4im("australian-credit")
    tic = time.perf_counter()
    model = OptimalTreeClassifier(
        objective="error", max_depth=5, method="portfolio", n_jobs=2, time_limit=1.0
    ).fit(B, y)
    assert time.perf_counter() - tic < 1.0 + 0.7
    result = model.result_
    assert not result.proven_optimal
    assert result.model.count_error() == result.objective_value >= OPTIMA[("australian-credit", 5)]
    assert result.lower_bound <= OPTIMA[("australian-credit", 5)]
    assert spawned() == []


WORKERS = os.cpu_count() or 1  # what n_jobs=-1 gives
_LONG_FIT = """
import numpy as np
from satdt import OptimalTreeClassifier
rng = np.random.default_rng(0)
B = rng.integers(0, 2, size=(3000, 80), dtype=np.uint8)
y = (B[:, 0] ^ B[:, 1] ^ (rng.random(3000) < 0.2)).astype(np.int64)
model = OptimalTreeClassifier(objective="error", max_depth=7, method="portfolio", n_jobs=-1,
                              time_limit=60).fit(B, y)
print(model.result_.stop_reason, model.result_.proven_optimal, flush=True)
"""


def _start_long_fit() -> tuple[subprocess.Popen, list[int]]:
    """A process running a long fit on every core (at least two), and its workers once
    started (one per core)."""
    root = ROOT
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    fit = subprocess.Popen(
        [sys.executable, "-c", _LONG_FIT], env=env, stdout=subprocess.PIPE, text=True
    )
    until = time.perf_counter() + 60
    while time.perf_counter() < until:
        workers = children(fit.pid)
        if len(workers) == WORKERS:
            return fit, workers
        time.sleep(0.05)
    fit.kill()
    raise AssertionError(f"the fit started no {WORKERS} workers")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.skipif(WORKERS < 2, reason="one core: no workers")
def test_a_killed_fit_leaves_no_worker_behind():
    fit, workers = _start_long_fit()
    time.sleep(0.3)
    fit.send_signal(signal.SIGKILL)
    fit.wait()
    until = time.perf_counter() + 3
    while any(alive(pid) for pid in workers) and time.perf_counter() < until:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in workers)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.skipif(WORKERS < 2, reason="one core: no workers")
def test_ctrl_c_keeps_the_best_tree_and_stops_every_worker():
    fit, workers = _start_long_fit()
    time.sleep(0.5)
    fit.send_signal(signal.SIGINT)
    out, _ = fit.communicate(timeout=10)
    assert fit.returncode == 0
    assert out.split() == ["interrupted", "False"]
    assert not any(alive(pid) for pid in workers)


def test_the_shared_bounds_keep_the_highest_bound_and_stop_storing_when_full():
    import multiprocessing as mp

    table = root_split._Bounds(mp.get_context("fork"), 1)
    assert table.size == 1024
    rows = np.arange(5, dtype=np.int32)
    key, check = root_split._node_keys(3, rows)
    assert key != 0 and root_split._node_keys(4, rows) != (key, check)
    assert table.get(key, check) == -np.inf
    table.put(key, check, 2.0)
    table.put(key, check, 1.0)  # a weaker bound never replaces a stronger one
    assert table.get(key, check) == 2.0
    assert table.get(key, check + 1) == -np.inf  # same slot, other node: not taken for it
    for other in range(1, table.BUCKET):  # the key's bucket full ...
        table.put(key, check + other, 5.0)
    assert table.get(key, check + 1) == 5.0
    table.put(key + 1024, 7, 3.0)  # ... so another node there is not stored
    assert table.get(key + 1024, 7) == -np.inf
