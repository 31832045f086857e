"""The table of diagram searches: auto's rule, every route against brute force, anytime fits."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from helpers import ROOT, examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from naive import min_diagram_objective

import satdt.search.diagrams as ds
from satdt import OptimalDiagramClassifier, OptimalTreeClassifier
from satdt.core.errors import NotProvenWarning, SatdtError
from satdt.models.diagram_checks import objective

ODD = ROOT.parent / "shared" / "data" / "odd"


def _fit(**params):
    X, y = params.pop("X"), params.pop("y")
    weight = params.pop("sample_weight", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotProvenWarning)
        return OptimalDiagramClassifier(**params).fit(X, y, sample_weight=weight)


def _has_milp() -> bool:
    try:
        import highspy  # noqa: F401
    except ImportError:
        return False
    return True


def _data(seed: int, n: int = 8, values: int = 3, features: int = 2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, values, (n, features)).astype(float)
    y = rng.integers(0, 2, n)
    y[:4] = [0, 1, 1, 0]  # both classes in both groups of the fairness cases
    return X, y


# ---------------------------------------------------------------------- auto's rule
@pytest.mark.parametrize(
    ("kwargs", "route"),
    [
        ({"objective": "size"}, "sat"),
        ({"split": "multivariate"}, "milp"),
        ({"widths": (1, 2, 4), "alpha": 0.0}, "tree"),
        ({"widths": (1, 2, 4), "alpha": 0.0, "max_splits": 3}, "maxsat"),
        ({"widths": (1, 2, 3), "alpha": 0.0}, "maxsat"),
        ({"widths": (1, 2, 4), "alpha": 0.01}, "maxsat"),
    ],
)
def test_auto_runs_the_documented_route(kwargs, route) -> None:
    X, y = _data(0, n=30, values=5)
    if route == "milp" and not _has_milp():
        pytest.skip("the MILP route needs the diagrams extra (highspy)")
    params = {"widths": (1, 2, 2), "alpha": 0.01, **kwargs}
    if params.get("objective") == "size":
        y = (X[:, 0] > 2).astype(int)  # a consistent diagram exists
    model = _fit(X=X, y=y, **params)
    assert model.method_ == route


def test_auto_sends_a_formula_too_large_for_maxsat_to_the_milp(monkeypatch) -> None:
    if not _has_milp():
        pytest.skip("the MILP route needs the diagrams extra (highspy)")
    monkeypatch.setattr(ds, "AUTO_MAXSAT_CLAUSES", 10)
    X, y = _data(1, n=20)
    assert _fit(X=X, y=y, widths=(1, 2), time_limit=20).method_ == "milp"


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"method": "maxsat", "split": "multivariate"}, "use method 'milp'"),
        ({"method": "maxsat", "milp_solver": "highs"}, "milp_solver is an option of method 'milp'"),
        ({"method": "tree", "alpha": 0.1, "widths": (1, 2)}, "alpha = 0"),
        ({"method": "tree", "alpha": 0.0, "widths": (1, 2, 2)}, "complete-tree"),
        ({"method": "tree", "alpha": 0.0, "widths": (1, 2), "max_splits": 2}, "max_splits is an"),
        ({"method": "sat"}, "does not solve objective 'error'"),
        ({"objective": "size", "min_flow": 2}, "objective='size'"),
        ({"method": "nope"}, "method must be one of"),
    ],
)
def test_an_option_of_another_route_is_refused_naming_both(kwargs, words) -> None:
    X, y = _data(2)
    with pytest.raises(SatdtError, match=words):
        _fit(X=X, y=y, **{"widths": (1, 2, 2), **kwargs})


def test_the_user_guide_holds_the_table_of_diagram_searches() -> None:
    page = (ROOT / "docs" / "guide" / "diagrams.md").read_text(encoding="utf-8")
    assert ds.diagram_methods_table() in page


# ---------------------------------------------------------------------- brute force
EXTENSION_CASES = [
    {},
    {"max_splits": 2},
    {"min_flow": 3.0},
    {"fairness": ("parity", 0.8)},
    {"fairness": ("false_positive", 0.5)},
    {"fairness": ("false_negative", 0.5)},
]


def _routes(extensions: dict) -> list[str]:
    routes = ["maxsat"]
    if _has_milp():
        routes.append("milp")
    return routes


@pytest.mark.parametrize("extensions", EXTENSION_CASES, ids=lambda e: ",".join(e) or "plain")
@pytest.mark.parametrize("alpha", [0.0, 0.2])
@given(seed=st.integers(0, 10_000))
@settings(max_examples=examples(4), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_route_agrees_with_brute_force(extensions, alpha, seed) -> None:
    X, y = _data(seed, n=7)
    widths = (1, 2)
    params = {"widths": widths, "alpha": alpha}
    naive = {}
    if "max_splits" in extensions:
        params["max_splits"] = naive["max_splits"] = extensions["max_splits"]
    if "min_flow" in extensions:
        params["min_flow"] = naive["min_flow"] = extensions["min_flow"]
    if "fairness" in extensions:
        kind, ratio = extensions["fairness"]
        X = np.column_stack([X, np.arange(len(y)) % 2])  # the groups: a two-valued column
        params["fairness"] = {"column": "x2", "ratio": ratio, "kind": kind, "positive": 1}
        group = X[:, 2] == 0
        naive["fairness"] = (kind, group, ~group, 1, ratio)
    best = min_diagram_objective(X, y, 2, widths, alpha, **naive)
    for route in _routes(extensions):
        model = OptimalDiagramClassifier(method=route, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotProvenWarning)
            if np.isinf(best):
                with pytest.raises(SatdtError):
                    model.fit(X, y, feature_names=[f"x{j}" for j in range(X.shape[1])])
                continue
            model.fit(X, y, feature_names=[f"x{j}" for j in range(X.shape[1])])
        assert model.result_.proven_optimal, route
        assert model.result_.objective_value == pytest.approx(best, abs=1e-9), route
        assert objective(model.diagram_, X, y, alpha, widths) == pytest.approx(best, abs=1e-9)


@given(seed=st.integers(0, 10_000))
@settings(max_examples=examples(6), deadline=None)
def test_maxsat_with_weights_agrees_with_brute_force(seed) -> None:
    X, y = _data(seed, n=7)
    weight = np.random.default_rng(seed).integers(1, 4, len(y)).astype(float)
    best = min_diagram_objective(X, y, 2, (1, 2), 0.1, weight, min_flow=4.0)
    model = OptimalDiagramClassifier(method="maxsat", widths=(1, 2), alpha=0.1, min_flow=4.0)
    if np.isinf(best):
        with pytest.raises(SatdtError):
            model.fit(X, y, sample_weight=weight)
        return
    model.fit(X, y, sample_weight=weight)
    assert model.result_.objective_value == pytest.approx(best, abs=1e-9)


def test_the_routes_agree_with_each_other_on_a_real_file() -> None:
    if not _has_milp():
        pytest.skip("the MILP route needs the diagrams extra (highspy)")
    X, y = _odd("soybean-small")
    values = {}
    for route in ("maxsat", "milp"):
        model = _fit(X=X, y=y, method=route, widths=(1, 2), alpha=0.01, time_limit=60)
        assert model.result_.proven_optimal, route
        values[route] = model.result_.objective_value
    assert values["maxsat"] == pytest.approx(values["milp"], abs=1e-6)


# ---------------------------------------------------------------------- the tree route
def _odd(name: str):
    path = ODD / f"{name}.csv"
    if not path.exists():
        pytest.skip(f"{path.name} is not in the shared data folder")
    table = np.genfromtxt(path, delimiter=",", skip_header=1)
    return table[:, :-1], table[:, -1].astype(int)


@pytest.mark.parametrize("name", ["iris", "hepatitis", "habermans-survival"])
def test_a_complete_tree_skeleton_with_alpha_zero_is_blossoms_optimum(name) -> None:
    X, y = _odd(name)
    began = time.perf_counter()
    model = _fit(X=X, y=y, widths=(1, 2, 4), alpha=0.0)
    seconds = time.perf_counter() - began
    tree = OptimalTreeClassifier(objective="error", max_depth=3, method="blossom").fit(X, y)
    assert model.method_ == "tree"
    assert model.result_.proven_optimal
    errors = int((model.predict(X) != y).sum())
    assert errors == round(tree.result_.objective_value)
    assert model.result_.objective_value == pytest.approx(errors / len(y))
    assert seconds < 30


# ---------------------------------------------------------------------- anytime
@pytest.mark.slow
@pytest.mark.parametrize("route", ["maxsat", "milp"])
def test_a_time_limited_fit_keeps_its_limit_and_beats_its_starts(route) -> None:
    if route == "milp" and not _has_milp():
        pytest.skip("the MILP route needs the diagrams extra (highspy)")
    X, y = _odd("habermans-survival")
    limit = 8.0
    began = time.perf_counter()
    model = _fit(X=X, y=y, method=route, widths=(1, 2, 4, 4), alpha=0.01, time_limit=limit)
    seconds = time.perf_counter() - began
    result, stats = model.result_, model.result_.stats
    assert seconds <= limit + max(0.5, 0.05 * limit)
    assert result.objective_value <= stats.heuristic_objective + 1e-12
    assert result.objective_value <= stats.tree_objective + 1e-12
    assert result.lower_bound <= result.objective_value + 1e-12
    if not result.proven_optimal:
        # a valid lower bound: below every diagram the other route finds
        rival = "maxsat" if route == "milp" else "milp"
        if rival == "milp" and not _has_milp():
            return
        other = _fit(X=X, y=y, method=rival, widths=(1, 2, 4, 4), alpha=0.01, time_limit=20)
        assert result.lower_bound <= other.result_.objective_value + 1e-9


def test_maxsat_reports_incumbents_as_it_goes() -> None:
    X, y = _odd("iris")
    seen = []
    model = OptimalDiagramClassifier(
        method="maxsat", widths=(1, 2, 2), alpha=0.01, on_improve=seen.append
    )
    model.fit(X, y)
    values = [r.objective_value for r in seen]
    assert len(values) >= 2 and values == sorted(values, reverse=True)
    assert values[-1] == pytest.approx(model.result_.objective_value)
    assert [h.value for h in model.result_.history] == values


# ---------------------------------------------------------------------- command line
def test_cli_diagram_takes_the_routes_and_refuses_a_foreign_option(capsys) -> None:
    from satdt.cli import EXIT_OK, main

    iris = ROOT / "examples" / "data" / "iris.csv"
    assert main(["diagram", str(iris), "--widths", "1,2,4", "--alpha", "0"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "method: tree" in out and "proven optimal" in out
    assert main(["diagram", str(iris), "--widths", "1,2", "--method", "maxsat"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "method: maxsat" in out and "starts: Step-1 heuristic" in out
    code = main(["diagram", str(iris), "--method", "maxsat", "--solver", "scip"])
    err = capsys.readouterr().err
    assert code != EXIT_OK
    assert "--milp-solver is an option of --method 'milp'" in err and "Traceback" not in err


def test_maxsat_never_returns_worse_than_its_starts() -> None:
    from satdt.models.diagram_checks import ErrorObjective
    from satdt.sat.diagram import MaxSatRun, minimum_error_diagram

    X, y = _odd("iris")
    B = (X[:, [2, 3]] > np.array([2.45, 1.75])).astype(np.uint8)  # two binary features
    start = OptimalDiagramClassifier(method="maxsat", widths=(1, 2), alpha=0.0)
    start.fit(B.astype(float), y)
    found = minimum_error_diagram(
        B, y, 3, (1, 2), ErrorObjective(0.0), run=MaxSatRun(deadline=time.perf_counter())
    )
    assert found.diagram.n_splits == 0  # no time: the majority terminal
    best = start.result_.objective_value
    diagram = start.diagram_.replace(classes=np.arange(3))
    again = minimum_error_diagram(
        B,
        y,
        3,
        (1, 2),
        ErrorObjective(0.0),
        run=MaxSatRun(starts=[diagram], deadline=time.perf_counter()),
    )
    assert again.objective == pytest.approx(best) and not again.proven


def test_auto_leaves_a_counter_too_large_for_sat_to_the_milp(monkeypatch) -> None:
    if not _has_milp():
        pytest.skip("the MILP route needs the diagrams extra (highspy)")
    import satdt.sat.diagram.maxsat as maxsat

    monkeypatch.setattr(maxsat, "MAX_COUNT", 1)
    X, y = _data(3, n=12)
    model = _fit(X=X, y=y, widths=(1, 2), alpha=0.1, min_flow=3.0, time_limit=30)
    assert model.method_ == "milp"
    with pytest.raises(SatdtError, match="use method='milp'"):
        _fit(X=X, y=y, method="maxsat", widths=(1, 2), alpha=0.1, min_flow=3.0)


# seconds of work: in the full suite, not the quick loop
@pytest.mark.slow
def test_maxsat_refuses_a_formula_over_the_memory_budget() -> None:
    X, y = _odd("ionosphere")
    with pytest.raises(SatdtError, match="max_memory_mb"):
        _fit(X=X, y=y, method="maxsat", widths=(1, 2, 4, 8), max_memory_mb=256)


def test_the_tree_start_is_the_tree_estimators_tree():
    # the best tree of a skeleton runs the tree search of the table without the estimator,
    # and finds what the estimator finds
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(80, 3)).round(1), rng.integers(0, 3, size=80)
    weight = rng.uniform(0.5, 2.0, size=80)
    for depth in (1, 2, 3):
        diagram, result = ds.fit_tree_diagram(X, y, weight, 3, depth, 60.0, simplify=False)
        model = OptimalTreeClassifier(objective="error", max_depth=depth)
        model.fit(X, y, sample_weight=weight)
        assert result.model == model.tree_ and result.proven_optimal
        # equal up to the order of a float sum (a greedy first tree may hold the same value)
        assert result.objective_value == pytest.approx(model.result_.objective_value, rel=1e-12)
        assert np.array_equal(diagram.predict_index(X), model.predict(X))


def test_the_tree_start_is_none_only_when_no_tree_came(monkeypatch):
    from satdt.core.errors import InfeasibleError, ParameterError
    from satdt.search.runner import TreeSearch

    X, y = np.array([[0.0], [1.0], [2.0]]), np.array([0, 1, 1])
    assert ds.fit_tree_diagram(X, y, None, 2, 1, 0.005) is None  # no time at all
    with pytest.raises(ValueError, match="infinity"):  # a mistake is not "no tree"
        ds.fit_tree_diagram(np.array([[np.inf], [0.0]]), np.array([0, 1]), None, 2, 1, 5.0)

    def stopped(self):
        raise InfeasibleError("the time limit passed before any model")

    monkeypatch.setattr(TreeSearch, "compute", stopped)
    assert ds.fit_tree_diagram(X, y, None, 2, 1, 5.0) is None

    def broken(self):
        raise ParameterError("a bug, not a time-out")

    monkeypatch.setattr(TreeSearch, "compute", broken)
    with pytest.raises(ParameterError, match="a bug"):
        ds.fit_tree_diagram(X, y, None, 2, 1, 5.0)
