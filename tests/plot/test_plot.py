"""Anytime curves: ``satdt.plot.plot_history`` and ``satdt fit --plot``, with and without matplotlib."""

from __future__ import annotations

import dataclasses
import sys

import pytest
from helpers import ROOT

from satdt import OptimalTreeClassifier, read_csv
from satdt.cli import main
from satdt.core.errors import SatdtError

pytest.importorskip("matplotlib", reason="the plot extra is not installed")

from satdt.plot import check_plot_target, plot_history

EXAMPLES = ROOT / "examples" / "data"
IRIS = EXAMPLES / "iris.csv"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MISSING = 'satdt: error: --plot needs matplotlib: pip install -e ".[plot]"'


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def iris_result():
    data = read_csv(IRIS)
    return OptimalTreeClassifier(objective="error", max_depth=2).fit(data.X, data.y).result_


def test_cli_fit_plot_writes_a_png(capsys, tmp_path):
    curve = tmp_path / "curve.png"
    code, out, err = run(capsys, "fit", IRIS, "--max-depth", "2", "--plot", curve)
    assert code == 0, err
    assert "errors:" in out  # the usual output is all there
    assert curve.read_bytes()[:8] == PNG_SIGNATURE
    assert f"anytime curve saved to {curve}" in err
    log_curve = tmp_path / "log.png"
    code, _, err = run(
        capsys, "fit", IRIS, "--max-depth", "2", "--plot", log_curve, "--plot-log-time", "--quiet"
    )
    assert code == 0, err
    assert err == ""
    assert log_curve.read_bytes()[:8] == PNG_SIGNATURE


def test_cli_infer_plot_draws_the_depth_and_its_lower_bound(capsys, tmp_path):
    """satdt infer --plot: the incumbents' depths and the proven lower bound over time."""
    curve = tmp_path / "depth.png"
    code, _, err = run(capsys, "infer", EXAMPLES / "mouse.csv", "--plot", curve)
    assert code == 0, err
    assert curve.read_bytes()[:8] == PNG_SIGNATURE
    model = OptimalTreeClassifier().fit(*_mouse())
    bounds = model.result_.lower_bounds
    assert bounds and bounds[-1].value == model.result_.objective_value == 4
    plot_history(model.result_, tmp_path / "again.svg", log_time=True)


def _mouse():
    data = read_csv(EXAMPLES / "mouse.csv")
    return data.X, data.y


def test_cli_plot_without_matplotlib_fails_before_the_fit(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    curve = tmp_path / "curve.png"
    saved = tmp_path / "model.json"
    code, out, err = run(capsys, "fit", IRIS, "--max-depth", "2", "--plot", curve, "--save", saved)
    assert code == 2
    assert err.strip() == MISSING
    assert "Traceback" not in err
    assert out == ""  # checked before the search: no half-done run
    assert not curve.exists() and not saved.exists()


def test_cli_plot_refuses_an_unknown_format_before_the_fit(capsys, tmp_path):
    code, out, err = run(capsys, "fit", IRIS, "--max-depth", "2", "--plot", tmp_path / "c.xyz")
    assert code == 2 and out == ""
    assert "--plot cannot write a .xyz file" in err and ".png" in err
    assert "Traceback" not in err


def test_plot_history_formats_and_title(iris_result, tmp_path):
    png = tmp_path / "a.png"
    plot_history(iris_result, png, title="iris, depth 2")
    assert png.read_bytes()[:8] == PNG_SIGNATURE
    svg = tmp_path / "a.svg"
    plot_history(iris_result, svg, log_time=True)  # default title
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text


def test_plot_history_unproven_and_hand_made_results(iris_result, tmp_path):
    unproven = dataclasses.replace(
        iris_result, proven_optimal=False, lower_bound=iris_result.objective_value - 2
    )
    plot_history(unproven, tmp_path / "unproven.png", log_time=True)
    no_history = dataclasses.replace(iris_result, history=(), runtime=0.0)
    plot_history(no_history, tmp_path / "bare.png")
    plot_history(no_history, tmp_path / "bare_log.png", log_time=True)
    for name in ("unproven.png", "bare.png", "bare_log.png"):
        assert (tmp_path / name).read_bytes()[:8] == PNG_SIGNATURE


def test_plot_errors_are_satdt_errors(iris_result, tmp_path, monkeypatch):
    with pytest.raises(SatdtError, match="cannot write"):
        plot_history(iris_result, tmp_path / "missing-folder" / "a.png")
    check_plot_target(tmp_path / "no_extension")  # matplotlib's default format (PNG)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(SatdtError, match=r"plot_history needs matplotlib: pip install"):
        plot_history(iris_result, tmp_path / "a.png")
