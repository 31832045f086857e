"""The primal gap integral (Berthold 2013) of anytime curves: hand-computed values, checks, a reference."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from helpers import ROOT, examples
from hypothesis import given, settings
from hypothesis import strategies as st

from satdt import OptimalTreeClassifier, read_csv
from satdt.core.errors import SatdtError
from satdt.task.result import Incumbent, primal_gap, primal_integral

IRIS = ROOT / "examples" / "data" / "iris.csv"


@pytest.fixture(scope="module")
def iris_result():
    data = read_csv(IRIS)
    model = OptimalTreeClassifier(objective="error", max_depth=2).fit(data.X, data.y)
    return model.result_


def test_primal_gap_definition():
    assert primal_gap(10, 5) == 0.5
    assert primal_gap(5, 5) == 0.0
    assert primal_gap(0, 0) == 0.0  # 0/0: both zero means no gap
    assert primal_gap(3, 0) == 1.0  # any solution against an optimum of 0 has gap 1
    assert primal_gap(math.inf, 5) == 1.0  # no solution yet
    assert primal_gap(-1, 1) == 1.0  # opposite signs (Berthold's definition)


def test_no_solution_at_all_is_the_horizon():
    assert primal_integral([], best_known=3, horizon=10) == 10
    # a solution found only after the horizon does not count
    assert primal_integral([(12.0, 3)], best_known=3, horizon=10) == 10
    # an infinite value is no solution either
    assert primal_integral([(1.0, math.inf)], best_known=3, horizon=10) == 10


def test_optimal_at_time_zero_is_zero():
    assert primal_integral([(0.0, 5)], best_known=5, horizon=10) == 0
    assert primal_integral([(0.0, 0)], best_known=0, horizon=10) == 0
    assert primal_integral([(0.0, 5)], best_known=5, horizon=0) == 0


def test_two_step_history_by_hand():
    history = [(2.0, 10), (6.0, 5)]
    # [0,2): no tree, gap 1 -> 2; [2,6): |10-4|/10 = 0.6 -> 2.4; [6,10]: |5-4|/5 = 0.2 -> 0.8
    assert primal_integral(history, best_known=4, horizon=10) == pytest.approx(5.2)
    # against the curve's own best: 2 + 0.5 * 4 + 0 * 4
    assert primal_integral(history, best_known=5, horizon=10) == pytest.approx(4.0)
    # a horizon inside the second step cuts it: 2 + 0.5 * 2
    assert primal_integral(history, best_known=5, horizon=4) == pytest.approx(3.0)
    # an improvement exactly at the horizon comes too late
    assert primal_integral(history, best_known=5, horizon=6) == pytest.approx(4.0)


def test_zero_best_known():
    # [0,1): 1; [1,3): |2-0|/2 = 1; [3,5]: 0/0 -> 0
    assert primal_integral([(1.0, 2), (3.0, 0)], best_known=0, horizon=5) == pytest.approx(3.0)
    assert primal_integral([(1.0, 0)], best_known=0, horizon=4) == pytest.approx(1.0)


def test_best_so_far_and_incumbent_tuples(iris_result):
    # a peer's curve need not improve strictly: best(t) is the lowest value seen so far
    assert primal_integral([(1.0, 5), (2.0, 8)], best_known=5, horizon=3) == pytest.approx(1.0)
    tree = iris_result.model
    incumbents = [Incumbent(2.0, 10.0, tree), Incumbent(6.0, 5.0, tree)]
    assert primal_integral(incumbents, best_known=4, horizon=10) == pytest.approx(5.2)
    # float noise below best_known (sums of row weights) is tolerated, and counts as gap 0
    assert primal_integral([(0.0, 0.3 - 1e-15)], best_known=0.3, horizon=2) == 0


@pytest.mark.parametrize(
    ("history", "best_known", "horizon", "message"),
    [
        ([(1.0, 5)], 5, -1.0, "horizon must be"),
        ([(1.0, 5)], 5, math.nan, "horizon must be"),
        ([(1.0, 5)], math.inf, 10, "best_known must be a finite"),
        ([(1.0, 5), (2.0, 3)], 4, 10, "below best_known=4"),
        ([(1.0, 5), (20.0, 3)], 4, 10, "below best_known=4"),  # even beyond the horizon
        ([(2.0, 5), (1.0, 4)], 4, 10, "in order of time"),
        ([(-1.0, 5)], 4, 10, "in order of time"),
        ([(1.0, math.nan)], 4, 10, "NaN"),
    ],
)
def test_wrong_arguments_are_refused(history, best_known, horizon, message):
    with pytest.raises(SatdtError, match=message):
        primal_integral(history, best_known=best_known, horizon=horizon)


def test_search_result_method(iris_result):
    result = iris_result
    best = result.objective_value
    assert result.history and result.history[-1].value == best
    value = result.primal_integral(best)
    assert value == pytest.approx(primal_integral(result.history, best, result.runtime))
    assert 0 <= value <= result.runtime
    assert result.primal_integral(best, horizon=0) == 0
    # a lower reference (another method's better tree) only raises the integral
    assert result.primal_integral(best - 1) >= value
    with pytest.raises(SatdtError, match="below best_known"):
        result.primal_integral(best + 1)
    made = dataclasses.replace(
        result,
        runtime=10.0,
        history=(Incumbent(2.0, best + 10, result.model), Incumbent(6.0, best, result.model)),
    )
    expected = 2 + 4 * 10 / (best + 10)
    assert made.primal_integral(best) == pytest.approx(expected)
    assert made.primal_integral(best, horizon=20) == pytest.approx(expected)
    assert dataclasses.replace(result, history=()).primal_integral(best, 7) == 7


def _reference(points: list[tuple[float, float]], best_known: float, horizon: float) -> float:
    """p(t) evaluated in the middle of every piece between breakpoints, times the piece's length."""
    cuts = sorted({0.0, horizon, *(t for t, _ in points if t < horizon)})
    total = 0.0
    for left, right in itertools.pairwise(cuts):
        middle = (left + right) / 2
        seen = [v for t, v in points if t <= middle]
        if not seen:
            gap = 1.0
        else:
            best = min(seen)
            scale = max(abs(best), abs(best_known))
            gap = 0.0 if scale == 0 else abs(best - best_known) / scale
        total += gap * (right - left)
    return total


@settings(deadline=None, max_examples=examples(200))
@given(
    st.lists(
        st.tuples(
            st.floats(0, 50, allow_nan=False),
            st.integers(0, 40),
        ),
        max_size=8,
    ),
    st.integers(0, 40),
    st.floats(0, 60, allow_nan=False),
)
def test_matches_a_piecewise_reference(points, offset, horizon):
    points = sorted(points, key=lambda point: point[0])
    best_known = min([v for _, v in points], default=offset)
    value = primal_integral(points, best_known=best_known, horizon=horizon)
    assert value == pytest.approx(_reference(points, best_known, horizon), abs=1e-9)
    assert -1e-9 <= value <= horizon + 1e-9
    # more time never lowers the integral; a lower reference never lowers it either
    assert primal_integral(points, best_known, horizon + 1) >= value - 1e-9
    if best_known > 0:
        assert primal_integral(points, best_known - 1, horizon) >= value - 1e-9
    assert isinstance(value, float) and np.isfinite(value)
