"""Warnings point at the user's call: ``fit`` or ``fit_dataset``, tree or diagram estimator."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import ROOT

from satdt import OptimalDiagramClassifier, OptimalTreeClassifier, read_csv
from satdt.core.errors import NotProvenWarning

IRIS = ROOT / "examples" / "data" / "iris.csv"


def _warnings_of(fit) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [w for w in caught if issubclass(w.category, NotProvenWarning)]


def _check_points_here(caught: list[warnings.WarningMessage], match: str) -> None:
    assert caught and all(match in str(w.message) for w in caught)
    assert all(w.filename == __file__ for w in caught), [w.filename for w in caught]


@pytest.mark.parametrize("entry", ["fit", "fit_dataset"])
def test_time_limit_warning_points_at_the_callers_line(entry: str) -> None:
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(300, 8)), rng.integers(0, 3, size=300)
    model = OptimalTreeClassifier(time_limit=0.5)
    if entry == "fit":
        caught = _warnings_of(lambda: model.fit(X, y))
    else:
        from satdt.prepare.validate import validate

        caught = _warnings_of(lambda: model.fit_dataset(validate(X, y)))
    _check_points_here(caught, "stopped early")


@pytest.mark.parametrize("entry", ["fit", "fit_dataset"])
def test_max_gap_warning_points_at_the_callers_line(entry: str) -> None:
    data = read_csv(IRIS)
    model = OptimalTreeClassifier(objective="error", method="contree", max_depth=3, max_gap=0.05)
    if entry == "fit":
        caught = _warnings_of(lambda: model.fit(data.X, data.y))
    else:
        caught = _warnings_of(lambda: model.fit_dataset(data))
    _check_points_here(caught, "within the permitted gap")


@pytest.mark.parametrize("entry", ["fit", "fit_dataset"])
def test_diagram_warning_points_at_the_callers_line(entry: str) -> None:
    data = read_csv(IRIS)
    model = OptimalDiagramClassifier(method="maxsat", widths=(1, 2, 4, 4), time_limit=0.2)
    if entry == "fit":
        caught = _warnings_of(lambda: model.fit(data.X, data.y))
    else:
        caught = _warnings_of(lambda: model.fit_dataset(data))
    _check_points_here(caught, "stopped early")
