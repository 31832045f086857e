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
