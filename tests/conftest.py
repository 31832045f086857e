"""Shared test helpers: where the public benchmark data lives."""

from __future__ import annotations

from pathlib import Path

import pytest

# The benchmark data sits next to the repository, in ../shared/data (see its README.md).
DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared benchmark data directory; skips the test when it is not there."""
    if not DATA_DIR.is_dir():
        pytest.skip("benchmark data not found: expected ../shared/data next to the repository")
    return DATA_DIR


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels() -> None:
    """Every Numba kernel group compiled into the cache before the tests (as ``satdt warmup``
    does; nothing is loaded here): searches then run as they run warm, so their effort
    counters are those of a warm run. A first run is tested in fresh caches of its own
    (``test_cold_start.py``, ``test_kernels.py``)."""
    from satdt.dp import kernels

    groups = list(kernels.GROUPS)
    if kernels.request(groups):
        kernels.wait([groups], None)


@pytest.fixture(autouse=True)
def _no_sweep_workers_left():
    """A sweep keeps its workers for the next sweep of the process; a test's are stopped after
    it, so that no test sees another test's processes (the portfolio's no-orphan checks)."""
    yield
    import sys

    if "satdt.sweep.local" in sys.modules or "satdt.sweep.on_dask" in sys.modules:
        from satdt.sweep import close_workers

        close_workers()
