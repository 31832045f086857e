"""Minimum depths on the benchmark files of the minimum-depth SAT literature (reference values)."""

from __future__ import annotations

import pytest

from satdt import OptimalTreeClassifier, read_csv

QUICK = {"mouse": 4, "iris": 4, "monk1": 5, "monk2": 6, "monk3": 6, "wine": 3}
SLOW = {"car": 8, "balance-scale_bin1": 8, "balance-scale_bin2": 8}


def check_depth(data_dir, name: str, depth: int) -> None:
    data = read_csv(data_dir / "inferdt" / f"{name}.csv")
    model = OptimalTreeClassifier().fit_dataset(data)
    assert model.result_.proven_optimal
    assert model.tree_.depth == model.result_.objective_value == depth
    assert (model.predict(data.X) == data.y).all()


@pytest.mark.parametrize("name", sorted(QUICK))
def test_minimum_depth_matches_reference(data_dir, name):
    check_depth(data_dir, name, QUICK[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW))
def test_minimum_depth_matches_reference_slow(data_dir, name):
    check_depth(data_dir, name, SLOW[name])


@pytest.mark.parametrize("split", range(5))
def test_training_splits_are_consistent_and_proven(data_dir, split):
    data = read_csv(data_dir / "inferdt" / f"iris.csv.train{split}.csv")
    model = OptimalTreeClassifier().fit_dataset(data)
    assert model.result_.proven_optimal
    assert model.score(data.X, data.y) == 1.0
