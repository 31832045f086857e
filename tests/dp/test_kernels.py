"""The Numba kernels compiled off the critical path (satdt.dp.kernels): one signature per
kernel, stamps beside Numba's cache, one compilation for concurrent processes, a background
compiler that can be interrupted without breaking the cache."""

from __future__ import annotations

import ast
import functools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT, examples
from hypothesis import given, settings
from hypothesis import strategies as st

import satdt
from satdt.dp import kernels


def python(code: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with ``env`` added to the environment."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def test_groups_come_after_what_they_need():
    assert kernels.in_order(["blossom", "support"]) == ["counts", "support", "blossom"]
    assert kernels.in_order(["contree", "contree"]) == ["contree"]
    with pytest.raises(ValueError, match="unknown kernel group"):
        kernels.in_order(["nope"])


def test_the_kernel_registry_names_each_searchs_groups():
    from satdt.search.registry import METHODS, kernel_groups

    # DL8.5, the portfolio's lead, starts on the counting kernels; its three-level kernel
    # comes next, then Blossom's (the slowest group to compile)
    assert kernel_groups(["portfolio"]) == ["counts", "support", "dl85", "blossom"]
    assert kernel_groups(["sat", "boxes"]) == []
    no_support = (("counts",), ("counts", "dl85"))  # no support rule: not compiled
    assert kernels.kernels_of("dl85")({}) == no_support
    with_support = (("counts", "support"), ("counts", "support", "dl85"))
    assert kernels.kernels_of("dl85")({"min_support": 2}) == with_support
    assert kernels.kernels_of("portfolio")({}) == (*no_support, ("blossom",))
    assert set(kernel_groups()) == set(kernels.GROUPS)
    # every method of the table has its groups (or none) in the kernels' registry, beside the
    # helper searches and the born-again search (satdt.search.born_again, not in the table)
    assert set(kernels.SEARCH_KERNELS) - {"greedy", "born_again"} <= set(METHODS)
    assert kernels.kernels_of("born_again")({}) == (("born_again",),)
    # the searches ask the registry for the groups they load themselves
    assert kernels.kernels_of("dl85").later == ("dl85",)
    assert kernels.kernels_of("greedy").start == ("greedy",)
    assert kernels.kernels_of("hybrid")({}) == ()  # a fit waits for none
    assert kernel_groups(["hybrid"]) == ["contree", "contree_d2"]
    assert kernels.kernels_of("contree")({}) == (
        ("contree",),
        ("contree", "contree_d2", "greedy"),
    )


class _Worker:
    """A background compiler's process as :func:`satdt.dp.kernels.background` sees it."""

    def __init__(self, running: bool) -> None:
        self.running = running

    def poll(self) -> int | None:
        return None if self.running else 1


def test_background_says_what_this_process_had_compiled(monkeypatch):
    stamped = {"contree"}
    monkeypatch.setattr(kernels, "loaded", lambda name: False)
    monkeypatch.setattr(kernels, "cached", lambda name: name in stamped)
    monkeypatch.setattr(kernels, "_workers", {})
    assert kernels.background() == {}  # nothing asked: the kernels were ready, or none needed
    kernels._workers[("contree", "contree_d2")] = _Worker(running=True)
    kernels._workers[("greedy",)] = _Worker(running=False)
    assert kernels.background() == {
        "contree": "compiled",
        "contree_d2": "compiling",
        "greedy": "failed",
    }
    stamped |= {"contree_d2", "greedy"}  # done meanwhile (the greedy group by another process)
    assert set(kernels.background().values()) == {"compiled"}


def test_background_of_one_fit_leaves_out_the_processes_of_earlier_fits(monkeypatch):
    monkeypatch.setattr(kernels, "loaded", lambda name: False)
    monkeypatch.setattr(kernels, "cached", lambda name: False)
    monkeypatch.setattr(kernels, "_workers", {("greedy",): _Worker(running=True)})
    monkeypatch.setattr(kernels, "_started", {("greedy",): 10.0})
    kernels._workers[("contree",)] = _Worker(running=True)
    kernels._started[("contree",)] = 20.0
    assert kernels.background(since=15.0) == {"contree": "compiling"}
    assert kernels.background(since=25.0) == {}
    assert kernels.background() == {"greedy": "compiling", "contree": "compiling"}


def test_cache_dir_is_where_numba_writes():
    from satdt.dp import _counts

    assert kernels.cache_dir() == Path(_counts.eval_pairs_penalised._cache._cache_path)


def test_every_kernel_is_compiled_for_one_signature():
    """After every DP method ran (several depths, weights, classes, options), each kernel
    still has the one signature it was declared with: no call site compiled another."""
    done = python(
        """
        import json, numpy as np
        from numba.core.dispatcher import Dispatcher
        import satdt
        from satdt import OptimalTreeClassifier
        satdt.warmup()
        rng = np.random.default_rng(0)
        X = rng.integers(0, 4, size=(80, 4)).astype(float)
        for n_classes in (2, 3):
            y = rng.integers(0, n_classes, size=80)
            w = rng.random(80)
            for method, extra in [("blossom", {}), ("dl85", {"min_support": 3}),
                                  ("blossom", {"min_support": 3, "leaf_penalty": 0.01}),
                                  ("cadl85", {}), ("portfolio", {}), ("contree", {})]:
                for depth in (1, 2, 3, 4):
                    OptimalTreeClassifier(objective="error", max_depth=depth, method=method,
                                          **extra).fit(X, y, sample_weight=w)
        from satdt.dp import greedy
        X, y, w = greedy._check_inputs(X, y, 3, None, None)
        greedy._grow_numba(X, y, 3, w, None, None)
        import sys
        counts = {}
        for name, module in list(sys.modules.items()):
            if name.startswith("satdt.dp._"):
                for key, value in vars(module).items():
                    if isinstance(value, Dispatcher) and value.py_func.__module__ == name:
                        counts[f"{name}.{key}"] = [str(s) for s in value.signatures]
        print(json.dumps(counts))
        """,
        {},
    )
    assert done.returncode == 0, done.stderr
    signatures = json.loads(done.stdout.strip().splitlines()[-1])
    compiled = {name: sigs for name, sigs in signatures.items() if sigs}
    assert len(compiled) >= 30  # every kernel module took part
    several = {name: sigs for name, sigs in compiled.items() if len(sigs) != 1}
    assert not several, several
    literal = [name for name, sigs in compiled.items() if "Literal" in sigs[0]]
    assert not literal, literal


def test_warmup_reports_each_group():
    records = satdt.warmup()
    assert [r.group for r in records] == list(kernels.GROUPS)
    assert all(r.action in ("compiled", "loaded") for r in records)
    assert all(kernels.ready([r.group]) for r in records)


@pytest.mark.slow
def test_background_compilation_stamps_groups_and_the_next_process_loads_them(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    first = python(
        """
        import time
        from satdt.dp import kernels
        assert not kernels.ready(["support"])
        assert kernels.request(["support"])
        assert kernels.wait([["support"]], time.perf_counter() + 300)
        print("ready")
        """,
        env,
    )
    assert first.returncode == 0 and "ready" in first.stdout, first.stderr
    folder = next(tmp_path.iterdir())
    stamps = sorted(p.name.split("-")[1] for p in folder.glob("satdt-*.ok"))
    assert stamps == ["counts", "support"]
    second = python(
        """
        from satdt.dp import kernels
        print([(r.group, r.action) for r in kernels.compile_groups(["support"])])
        """,
        env,
    )
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "[('counts', 'loaded'), ('support', 'loaded')]"


@pytest.mark.slow
def test_concurrent_processes_compile_a_group_once(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    code = "from satdt.dp import kernels; print(kernels.compile_groups(['counts'])[0].action)"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True, cwd=ROOT
        )
        for _ in range(2)
    ]
    actions = sorted(p.communicate(timeout=600)[0].strip() for p in procs)
    assert actions == ["compiled", "loaded"]


@pytest.mark.slow
def test_an_interrupted_compilation_leaves_a_cache_the_next_run_completes(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    worker = subprocess.Popen(
        [sys.executable, "-m", "satdt.dp.kernels", "counts", "blossom"], env=env, cwd=ROOT
    )
    # Ctrl-C once the counting kernels are done, so that it lands while the next groups (the
    # support kernels, then Blossom's) are being compiled and their cache files written: a
    # fixed sleep raced a fast machine, which had compiled them all before it
    until = time.perf_counter() + 120
    while not list(tmp_path.glob("*/satdt-counts-*.ok")) and time.perf_counter() < until:
        time.sleep(0.02)
    time.sleep(0.2)
    worker.send_signal(signal.SIGINT)  # what Ctrl-C in the terminal does
    worker.wait(timeout=60)
    assert not list(tmp_path.glob("*/satdt-blossom-*.ok"))
    done = python(
        """
        import numpy as np
        from satdt.dp import kernels
        print([r.action for r in kernels.compile_groups(["blossom"])])
        from satdt import OptimalTreeClassifier
        X = np.random.default_rng(1).integers(0, 3, size=(60, 3)).astype(float)
        y = (X[:, 0] + X[:, 1] > 2).astype(int)
        model = OptimalTreeClassifier(objective="error", max_depth=2, method="blossom").fit(X, y)
        print(model.result_.proven_optimal)
        """,
        {"NUMBA_CACHE_DIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    *needed, last = ast.literal_eval(lines[0])  # counts, support, then blossom
    assert len(needed) == 2 and set(needed) <= {"compiled", "loaded"} and last == "compiled"
    assert lines[1] == "True"
    assert list(tmp_path.glob("*/satdt-blossom-*.ok"))


# ---------------------------------------------------------------------- the kernels' own sorts
keys = st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, float("inf")]), max_size=120)


@settings(deadline=None, max_examples=examples(150))
@given(keys)
def test_stable_sort_is_numpys_stable_argsort(values):
    from satdt.dp._blossom_kernels import stable_sort

    A = np.array(values, dtype=np.float64)
    n = len(values)
    keys_, order = A.copy(), np.arange(n, dtype=np.int64)
    stable_sort(keys_, order, n, np.zeros(n), np.zeros(n, dtype=np.int64))
    assert np.array_equal(order, np.argsort(A, kind="stable"))
    assert np.array_equal(keys_, np.sort(A))


@settings(deadline=None, max_examples=examples(150))
@given(keys)
def test_quick_argsort_orders_ties_as_numbas_argsort(values):
    """The depth-two kernel ranks columns with it where it used Numba's np.argsort (unstable:
    ties in its own order); the same order keeps the same search and the same trees."""
    from satdt.dp._contree_d2 import quick_argsort

    A = np.array(values, dtype=np.float64)
    order = np.arange(len(values), dtype=np.int64)
    quick_argsort(A, order)
    assert np.array_equal(order, _numba_argsort()(A))


@functools.cache
def _numba_argsort():
    """Numba's own ``np.argsort`` (quicksort), compiled once."""
    from numba import njit

    return njit(lambda a: np.argsort(a))
