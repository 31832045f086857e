"""The one data preparation, seen through the estimator: weights, contradictions by objective
kind, the memory budget of binary features, progress events and the time limit."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

import satdt.prepare.validate
from satdt import OptimalTreeClassifier
from satdt.core.errors import ContradictionError, NotProvenWarning
from satdt.search.runner import LARGE_ROWS
from satdt.task.events import Progress


def _noisy_numeric(rows: int, columns: int = 20, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((rows, columns)), 3)
    y = ((X[:, 0] + X[:, 1] > 1) ^ (rng.random(rows) < 0.1)).astype(int)
    return X, y


def test_contradictions_depend_on_the_objective_kind() -> None:
    X = np.array([[0.0], [0.0], [1.0]])
    y = np.array([0, 1, 1])
    with pytest.raises(ContradictionError):
        OptimalTreeClassifier().fit(X, y)
    relabelled = OptimalTreeClassifier(resolve="majority").fit(X, y)
    assert relabelled.result_.preparation.relabelled_rows == 1
    error = OptimalTreeClassifier(objective="error", max_depth=1).fit(X, y)
    assert error.result_.objective_value == 1  # the irreducible error, no complaint


def test_zero_weight_rows_are_left_out() -> None:
    X = np.array([[0.0], [0.0], [1.0]])
    y = np.array([0, 1, 1])
    model = OptimalTreeClassifier().fit(X, y, sample_weight=[1, 0, 1])
    assert model.result_.objective_value == 1
    assert model.result_.preparation.rows == 2


def test_a_small_memory_budget_switches_to_quantile_thresholds() -> None:
    X, y = _noisy_numeric(2000, columns=3)
    # the binary features' budget (auto would run ConTree on these numeric columns, unbinarised)
    model = OptimalTreeClassifier(
        objective="error", method="portfolio", max_depth=2, max_memory_mb=0.05
    )
    model.fit(X, y)
    preparation = model.result_.preparation
    assert "quantile" in preparation.binarization
    assert preparation.binary_features_total * 2000 <= 0.05 * 2**20
    assert any("max_memory_mb" in note for note in preparation.notes)
    full = OptimalTreeClassifier(objective="error", max_depth=2).fit(X, y)
    assert full.result_.preparation.notes == []
    assert full.result_.objective_value <= model.result_.objective_value


def test_preparation_reports_progress() -> None:
    X, y = _noisy_numeric(300, columns=4)
    events = []
    model = OptimalTreeClassifier(objective="error", max_depth=1)
    model.fit_dataset(
        satdt.prepare.validate.validate(X, y), on_event=events.append
    )  # the CLI's live status line reads these
    assert any(isinstance(event, Progress) for event in events)


@pytest.mark.parametrize("objective", ["depth", "size", "error"])
def test_time_limit_counts_from_fit_and_a_greedy_tree_comes_back(objective: str) -> None:
    satdt.warmup()
    X, y = _noisy_numeric(max(LARGE_ROWS, 30_000))
    limit = 1.0
    model = OptimalTreeClassifier(
        objective=objective, max_depth=3 if objective == "error" else None
    )
    model.set_params(time_limit=limit)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotProvenWarning)
        model.fit(X, y)
    elapsed = time.perf_counter() - started
    assert elapsed <= limit + 0.5, f"{elapsed:.2f} s"
    accuracy = model.score(X, y)
    if objective == "error":
        assert model.tree_.depth <= 3 and accuracy > 0.75
    else:
        assert accuracy == 1.0 and not model.result_.proven_optimal
