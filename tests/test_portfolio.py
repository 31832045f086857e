"""The portfolio of Blossom and CA-DL8.5 (``method="auto"`` for the error objective)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_error

from satdt import OptimalTreeClassifier
from satdt.dp import blossom, portfolio
from satdt.result import PortfolioStats, Recorder


def _optimum(B, y, n_classes, depth, w=None) -> float:
    return blossom.solve_min_error(
        B, y, n_classes, depth, sample_weight=w, recorder=Recorder("error")
    ).objective_value


@settings(max_examples=40, deadline=None)
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
        B, y, classes, depth, sample_weight=w, recorder=Recorder("error"), first_slice=0.0,
        every=every,
    )  # fmt: skip
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(_optimum(B, y, classes, depth, w))
    assert result.lower_bound == pytest.approx(result.objective_value)
    assert result.model.count_error() == pytest.approx(result.objective_value)


@settings(max_examples=60, deadline=None)
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
        B, y, classes, depth, sample_weight=w, recorder=Recorder("error"), first_slice=0.0,
        every=every, leaf_penalty=penalty, min_support=min_support,
    )  # fmt: skip
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
    """With no first slice, CA-DL8.5 and Blossom alternate; the answer is Blossom's optimum."""
    B, y = _hard(n=120, m=12)
    result = portfolio.solve_min_error(
        B, y, 2, 3, recorder=Recorder("error"), first_slice=0.0, every=0.001
    )
    stats = result.stats
    assert isinstance(stats, PortfolioStats)
    assert stats.blossom_seconds > 0 and stats.dl85_seconds > 0
    assert stats.proven_by in ("blossom", "cadl85")
    assert result.proven_optimal
    assert result.objective_value == pytest.approx(_optimum(B, y, 2, 3))
    values = [value for _, value, *_ in result.history]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)


def test_deadline_returns_the_best_tree_not_proven():
    B, y = _hard()
    tic = time.perf_counter()
    result = portfolio.solve_min_error(
        B, y, 2, 6, recorder=Recorder("error"), deadline=tic + 1.0, first_slice=0.2
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
    tree = blossom.solve_min_error(B, y, 2, 2, recorder=Recorder("error")).model
    recorder.improve(tree, best)
    result = portfolio.solve_min_error(
        B, y, 2, 2, recorder=recorder, upper_bound=best, first_slice=0.0
    )
    assert result.proven_optimal
    assert result.model.count_error() == pytest.approx(best)
    assert result.history[-1][2] is tree
