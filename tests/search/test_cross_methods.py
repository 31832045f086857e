"""Across methods: the SAT minimum depth is the smallest depth at which the DP's optimal error is 0."""

from __future__ import annotations

import pytest

from satdt import OptimalTreeClassifier, read_csv

MIN_DEPTH = {"mouse": 4, "iris": 4, "monk1": 5, "monk2": 6, "monk3": 6, "wine": 3}


@pytest.mark.parametrize("name", sorted(MIN_DEPTH))
def test_sat_min_depth_is_the_first_zero_error_depth(data_dir, name):
    data = read_csv(data_dir / "inferdt" / f"{name}.csv")
    depth = OptimalTreeClassifier().fit_dataset(data).result_.objective_value
    assert depth == MIN_DEPTH[name]
    at_depth = OptimalTreeClassifier(objective="error", max_depth=depth).fit_dataset(data).result_
    below = OptimalTreeClassifier(objective="error", max_depth=depth - 1).fit_dataset(data).result_
    assert at_depth.proven_optimal and at_depth.objective_value == 0
    assert below.proven_optimal and below.objective_value > 0


ROUTES = ("hybrid", "contree", "sat", "boxes")
INFERDT = ("mouse", "iris", "monk1", "monk2", "monk3", "wine", "car", "balance-scale_bin1")


def _proven_depths(table, limit: float) -> dict[str, float]:
    """The minimum depth by every route that proves it within ``limit`` seconds (the box DP
    where its grid fits)."""
    import warnings

    from satdt.core.errors import NotProvenWarning, SatdtError

    depths = {}
    for method in ROUTES:
        model = OptimalTreeClassifier(method=method, time_limit=limit, resolve="majority")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NotProvenWarning)
                result = model.fit_dataset(table).result_
        except SatdtError as refusal:  # the box DP over its memory budget
            assert method == "boxes" and "max_memory_mb" in str(refusal)
            continue
        if result.proven_optimal:
            depths[method] = result.objective_value
    return depths


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.slow) if n in ("car", "balance-scale_bin1") else n
        for n in INFERDT
    ],
)
def test_every_route_that_proves_the_minimum_depth_agrees(data_dir, name):
    depths = _proven_depths(read_csv(data_dir / "inferdt" / f"{name}.csv"), limit=60)
    assert "hybrid" in depths and len(set(depths.values())) == 1, depths


CONTINUOUS = ("bank", "raisin", "segment", "fault", "occupancy", "page", "htru")


@pytest.mark.slow
@pytest.mark.parametrize("name", CONTINUOUS)
def test_every_route_agrees_on_samples_of_the_continuous_files(data_dir, name):
    """200-row samples of ConTree's files (contradictions relabelled by majority)."""
    import numpy as np

    from satdt.prepare.validate import validate

    table = np.loadtxt(data_dir / "continuous" / f"{name}.txt", ndmin=2)
    rows = np.random.default_rng(0).choice(len(table), 200, replace=False)
    X, y = table[rows, 1:], table[rows, 0].astype(int)
    depths = _proven_depths(validate(X, y, estimator="test"), limit=15)
    assert len(set(depths.values())) <= 1, depths
    assert "hybrid" in depths or "contree" not in depths, depths
