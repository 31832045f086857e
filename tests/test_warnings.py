"""Warnings point at the user's call: ``fit`` or ``fit_dataset``, tree or diagram estimator."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from satdt import OptimalDiagramClassifier, OptimalTreeClassifier, read_csv
from satdt.errors import NotProvenWarning

IRIS = Path(__file__).resolve().parents[1] / "examples" / "data" / "iris.csv"


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
        from satdt.prepare import validate

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


# modules moved into satdt.models and satdt.estimators: the old paths work, with a FutureWarning, for one release
MOVED = {
    "satdt.tree": "satdt.models.tree",
    "satdt.diagram": "satdt.models.diagram",
    "satdt.diagram_checks": "satdt.models.diagram_checks",
    "satdt.model": "satdt.models.model",
    "satdt.export": "satdt.models.export",
    "satdt.learner": "satdt.estimators.tree",
    "satdt.diagrams": "satdt.estimators.diagram",
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_module_warns_at_the_users_import_and_still_works(old: str) -> None:
    import importlib
    import sys

    from satdt.errors import REMOVED_IN

    sys.modules.pop(old, None)  # imported afresh, so that its warning is given again
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(f"import {old}", __file__, "exec"), {})  # an import statement here
    module, new = sys.modules[old], importlib.import_module(MOVED[old])
    moved = [w for w in caught if issubclass(w.category, FutureWarning)]
    assert len(moved) == 1 and f"satdt {REMOVED_IN}" in str(moved[0].message)
    assert MOVED[old] in str(moved[0].message)
    assert moved[0].filename == __file__  # the user's import, not the library's
    public = [name for name in dir(new) if not name.startswith("__")]
    assert public and all(getattr(module, name) is getattr(new, name) for name in public)
