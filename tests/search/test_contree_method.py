"""ConTree as a method of the table: the estimator, the command line, max_gap's reporting."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import ROOT

from satdt import OptimalTreeClassifier, read_csv
from satdt.cli import main
from satdt.core.errors import NotProvenWarning, SatdtError
from satdt.task.stats import ConTreeStats

IRIS = ROOT / "examples" / "data" / "iris.csv"


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_contree_equals_blossom_with_every_threshold_on_iris(depth):
    data = read_csv(IRIS)
    fits = {
        method: OptimalTreeClassifier(objective="error", method=method, max_depth=depth).fit(
            data.X, data.y
        )
        for method in ("contree", "blossom")
    }
    assert isinstance(fits["contree"].result_.stats, ConTreeStats)
    for model in fits.values():
        assert model.result_.proven_optimal
    errors = {m: f.result_.objective_value for m, f in fits.items()}
    assert errors["contree"] == errors["blossom"]
    predicted = fits["contree"].predict(data.X)
    assert (predicted != np.asarray(data.y)).sum() == errors["contree"]


def test_a_fractional_gap_is_reported_as_a_gap_not_a_time_out():
    data = read_csv(IRIS)
    model = OptimalTreeClassifier(objective="error", method="contree", max_depth=3, max_gap=0.05)
    with pytest.warns(NotProvenWarning, match="within the permitted gap"):
        model.fit(data.X, data.y)
    result = model.result_
    exact = OptimalTreeClassifier(objective="error", method="contree", max_depth=3).fit(
        data.X, data.y
    )
    assert result.gap == pytest.approx(0.05 * 150)
    assert not result.proven_optimal
    assert exact.result_.objective_value <= result.objective_value
    assert result.objective_value - exact.result_.objective_value <= result.gap
    assert result.lower_bound <= exact.result_.objective_value


def test_a_gap_as_an_error_count_still_works_for_one_release():
    data = read_csv(IRIS)
    fits = {}
    for gap in (0.05, 7.5):
        model = OptimalTreeClassifier(objective="error", method="contree", max_depth=3, max_gap=gap)
        expected = r"write max_gap=0\.05\b.*0\.3" if gap >= 1 else "permitted gap"
        with pytest.warns((FutureWarning, NotProvenWarning), match=expected):
            model.fit(data.X, data.y)
        fits[gap] = model.result_
    assert fits[7.5].gap == fits[0.05].gap == pytest.approx(7.5)
    assert fits[7.5].objective_value == fits[0.05].objective_value


def test_exact_contree_gives_no_warning():
    data = read_csv(IRIS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotProvenWarning)
        OptimalTreeClassifier(objective="error", method="contree", max_depth=2).fit(data.X, data.y)


@pytest.mark.parametrize("gap", [-1, float("nan"), "big", True])
def test_bad_gaps_are_refused(gap):
    with pytest.raises(SatdtError, match="max_gap"):
        OptimalTreeClassifier(objective="error", method="contree", max_depth=2, max_gap=gap).fit(
            [[0.0], [1.0]], [0, 1]
        )


def test_cli_fit_with_contree_and_a_gap(capsys):
    code = main(["fit", str(IRIS), "--max-depth", "2", "--method", "contree", "--max-gap", "0.02"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "within 3 of the optimum (max_gap)" in out
    code = main(["fit", str(IRIS), "--max-depth", "2", "--method", "contree"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "proven optimal" in out and "splits evaluated" in out


def _numeric_table(rows: int, columns: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random numeric columns with many distinct values (far more thresholds than the crossover)."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((rows, columns)), 4)
    y = (X[:, 0] + X[:, 1] > 1).astype(int) ^ (rng.random(rows) < 0.1)
    return X, y


def test_auto_runs_contree_on_numeric_columns_with_many_thresholds():
    X, y = _numeric_table(400, 3)
    auto = OptimalTreeClassifier(objective="error", max_depth=2).fit(X, y)
    portfolio = OptimalTreeClassifier(objective="error", method="portfolio", max_depth=2).fit(X, y)
    assert auto.method_ == "contree"
    assert isinstance(auto.result_.stats, ConTreeStats)
    assert portfolio.method_ == "portfolio"
    assert auto.result_.proven_optimal and portfolio.result_.proven_optimal
    assert auto.result_.objective_value == portfolio.result_.objective_value


def test_auto_keeps_the_portfolio_where_binary_features_are_few_or_asked_for():
    data = read_csv(IRIS)  # 4 columns, 119 thresholds: below the crossover
    assert OptimalTreeClassifier(objective="error", max_depth=2).fit(data.X, data.y).method_ == (
        "portfolio"
    )
    X, y = _numeric_table(400, 3)
    quantiles = OptimalTreeClassifier(objective="error", max_depth=2, max_thresholds=8)
    assert quantiles.fit(X, y).method_ == "portfolio"


def test_auto_with_a_time_limit_on_a_large_table_runs_the_portfolio():
    X, y = _numeric_table(20_000, 2)
    model = OptimalTreeClassifier(objective="error", max_depth=1, time_limit=60).fit(X, y)
    assert model.method_ == "portfolio"
    untimed = OptimalTreeClassifier(objective="error", max_depth=1).fit(X, y)
    assert untimed.method_ == "contree"
    assert untimed.result_.objective_value <= model.result_.objective_value


def test_cli_says_which_method_auto_ran(tmp_path, capsys):
    X, y = _numeric_table(300, 3)
    path = tmp_path / "numeric.csv"
    header = "a,b,c,label"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="", fmt="%g")
    assert main(["fit", str(path), "--max-depth", "2"]) == 0
    assert "method: contree (auto)" in capsys.readouterr().out
    assert main(["fit", str(path), "--max-depth", "2", "--format", "json"]) == 0
    assert '"method": "contree"' in capsys.readouterr().out
