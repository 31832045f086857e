"""The test session: the shared benchmark data, Hypothesis's profile for the run, the Numba
kernels compiled before the first test that may run one, no sweep workers left between tests.

The tests mirror the package (``tests/sat/`` tests ``satdt/sat/``, and so on; ``project/``
tests the repository as a whole: the layers, the docs, the examples); ``helpers.py`` and
``naive.py`` (every brute-force reference) serve them all, ``fixtures/`` holds recorded files."""

from __future__ import annotations

import os
from pathlib import Path

import helpers
import pytest


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared benchmark data directory; skips the test when it is not there."""
    if not helpers.SHARED.is_dir():
        pytest.skip("benchmark data not found: expected ../shared/data next to the repository")
    return helpers.SHARED


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis's profile: ``dev`` (few examples) for the quick loop, ``-m "not slow"``;
    ``ci`` (each test's full count) for every other run, ``python -m pytest`` among them.
    ``HYPOTHESIS_PROFILE=dev|ci`` chooses it outright."""
    quick = "not slow" in (config.option.markexpr or "")
    helpers.use_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("dev" if quick else "ci"))


_warm: list[bool] = []


@pytest.fixture(autouse=True)
def compiled_kernels(request: pytest.FixtureRequest) -> None:
    """Every Numba kernel group compiled into the cache before the first test that may run a
    search kernel (as ``satdt warmup`` does; nothing is loaded here): searches then run as
    they run warm, so their effort counters are those of a warm run. Test modules that run no
    kernel say so (``pytestmark = pytest.mark.no_kernels``) and never wait for them: a run of
    those alone compiles nothing. A first run is tested in fresh caches of its own
    (``search/test_cold_start.py``, ``dp/test_kernels.py``)."""
    if _warm or request.node.get_closest_marker("no_kernels") is not None:
        return
    from satdt.dp import kernels

    groups = list(kernels.GROUPS)
    if kernels.request(groups):
        kernels.wait([groups], None)
    _warm.append(True)


@pytest.fixture(autouse=True)
def _no_sweep_workers_left():
    """A sweep keeps its workers for the next sweep of the process; a test's are stopped after
    it, so that no test sees another test's processes (the portfolio's no-orphan checks)."""
    yield
    import sys

    if "satdt.sweep.local" in sys.modules or "satdt.sweep.on_dask" in sys.modules:
        from satdt.sweep import close_workers

        close_workers()


@pytest.fixture
def spawned():
    """The live child processes of this one that the test started: ``spawned()`` leaves out
    those alive before it (a pool another test of this worker keeps for reuse, say), so that a
    no-orphan check sees only its own search's workers."""
    import os

    from helpers import children

    before = set(children(os.getpid()))
    return lambda: [pid for pid in children(os.getpid()) if pid not in before]
