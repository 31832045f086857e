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
