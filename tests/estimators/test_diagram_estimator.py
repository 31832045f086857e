"""OptimalDiagramClassifier: the Step-1 heuristic then the MILP, behind the estimator shape."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from helpers import ROOT
from naive import min_diagram_objective

from satdt import OptimalDiagramClassifier, OptimalTreeClassifier, SatdtError, read_csv
from satdt.core.errors import NotProvenWarning
from satdt.models.diagram import Diagram
from satdt.models.diagram_checks import objective
from satdt.models.files import load_model, save_model

pytest.importorskip("highspy")
IRIS = ROOT / "examples" / "data" / "iris.csv"


def _fit(X, y, **params) -> OptimalDiagramClassifier:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotProvenWarning)
        return OptimalDiagramClassifier(**params).fit(X, y)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_optimum_equals_brute_force_on_tiny_data(seed, solver):
    pytest.importorskip("pyscipopt" if solver == "scip" else "highspy")
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(7, 2)).astype(float) * 10 + 5  # not in [0, 1]: scaled inside
    y = rng.integers(0, 2, size=7)
    alpha = 0.2 if seed % 2 else 0.0
    model = OptimalDiagramClassifier(
        method="milp", widths=(1, 2), alpha=alpha, milp_solver=solver
    ).fit(X, y)
    assert model.result_.proven_optimal
    best = min_diagram_objective(X, y, 2, (1, 2), alpha)
    assert model.result_.objective_value == pytest.approx(best, abs=1e-6)
    # the returned diagram is in the user's units and has that objective
    assert objective(model.diagram_, X, np.searchsorted(model.classes_, y), alpha, (1, 2)) == (
        pytest.approx(best, abs=1e-6)
    )


def test_tree_skeleton_matches_the_optimal_tree_error_on_an_iris_sample():
    data = read_csv(IRIS)
    rows = np.random.default_rng(1).choice(len(data.y), 40, replace=False)
    X, y = np.asarray(data.X, dtype=float)[rows], np.asarray(data.y)[rows]
    diagram = OptimalDiagramClassifier(widths=(1, 2), alpha=0.0, time_limit=120).fit(X, y)
    tree = OptimalTreeClassifier(objective="error", max_depth=2, method="blossom").fit(X, y)
    assert diagram.result_.proven_optimal
    errors = diagram.result_.objective_value * len(y)
    assert errors == pytest.approx(tree.result_.objective_value)
    assert (diagram.predict(X) != y).sum() == round(errors)


def test_time_limit_returns_the_heuristic_or_better_not_proven():
    data = read_csv(IRIS)
    with pytest.warns(NotProvenWarning):
        model = OptimalDiagramClassifier(method="milp", widths=(1, 2, 4, 4), time_limit=3).fit(
            data.X, data.y
        )
    result = model.result_
    assert not result.proven_optimal
    assert result.runtime < 8
    assert result.objective_value <= result.stats.heuristic_objective + 1e-12
    assert result.lower_bound <= result.objective_value
    assert model.score(data.X, data.y) > 0.9


def test_parsimony_and_stability_hold_on_the_returned_diagram():
    data = read_csv(IRIS)
    rows = np.random.default_rng(2).choice(len(data.y), 30, replace=False)
    X, y = np.asarray(data.X, dtype=float)[rows], np.asarray(data.y)[rows]
    small = _fit(X, y, widths=(1, 2, 2), alpha=0.0, max_splits=1, time_limit=60)
    assert small.diagram_.n_splits <= 1
    stable = _fit(X, y, widths=(1, 2, 2), alpha=0.0, min_flow=8, time_limit=60)
    paths = stable.diagram_.decision_path(X)
    for node in range(len(stable.diagram_.layer)):
        through = (paths == node).any(axis=1).sum()
        assert through == 0 or through >= 8


def test_fairness_keeps_the_positive_rates_of_two_groups_within_the_ratio():
    rng = np.random.default_rng(3)
    group = rng.integers(0, 2, 40)
    score = rng.random(40) + 0.4 * group
    y = (score > 0.7).astype(int)
    X = np.column_stack([score, group])
    fair = _fit(
        X,
        y,
        widths=(1, 2),
        alpha=0.0,
        time_limit=60,
        fairness={"column": "x1", "ratio": 0.8, "positive": 1},
    )
    unfair = _fit(X, y, widths=(1, 2), alpha=0.0, time_limit=60)
    predicted = fair.predict(X)
    rates = [predicted[group == g].mean() for g in (0, 1)]
    assert min(rates) >= 0.8 * max(rates) - 1e-9
    assert fair.result_.objective_value >= unfair.result_.objective_value


def test_a_saved_diagram_loads_and_predicts_the_same(tmp_path):
    data = read_csv(IRIS)
    model = _fit(data.X, data.y, widths=(1, 2, 2), time_limit=5)
    path = tmp_path / "odd.json"
    save_model(path, model.diagram_, model.schema_, model.result_)
    loaded, _ = load_model(path)
    assert isinstance(loaded, Diagram)
    assert loaded == model.diagram_
    assert (loaded.predict(np.asarray(data.X, dtype=float)) == model.predict(data.X)).all()


@pytest.mark.parametrize(
    "params",
    [
        {"widths": (2, 2)},
        {"widths": ()},
        {"widths": "124"},
        {"alpha": -1},
        {"split": "oblique"},
        {"milp_solver": "gurobi"},
        {"fairness": {"column": "x0", "kind": "equalised"}},
        {"fairness": {"ratio": 0.8}},
    ],
)
def test_bad_parameters_are_refused_with_a_clear_error(params):
    with pytest.raises(SatdtError):
        OptimalDiagramClassifier(**params).fit(np.eye(3), [0, 1, 1])


def test_a_fairness_column_needs_two_groups():
    X = np.column_stack([np.arange(6.0), np.arange(6.0) % 3])
    with pytest.raises(SatdtError, match="exactly two values"):
        OptimalDiagramClassifier(widths=(1,), fairness={"column": "x1"}).fit(X, [0, 1] * 3)


def _parity(bits: int) -> tuple[np.ndarray, np.ndarray]:
    X = np.array([[(i >> b) & 1 for b in range(bits)] for i in range(2**bits)], dtype=float)
    return X, X.sum(axis=1).astype(int) % 2


def test_sat_smallest_consistent_diagram_beats_the_smallest_tree_on_parity():
    X, y = _parity(3)
    diagram = OptimalDiagramClassifier(method="sat", objective="size", widths=(1, 2, 4)).fit(X, y)
    tree = OptimalTreeClassifier(objective="size").fit(X, y)
    assert diagram.result_.proven_optimal
    assert (diagram.predict(X) == y).all()
    tree_internal = (tree.tree_.n_nodes - 1) // 2
    assert diagram.diagram_.n_splits == diagram.result_.objective_value == 5 < tree_internal


@pytest.mark.parametrize("seed", range(3))
def test_maxsat_and_the_milp_reach_the_same_optimum_on_binary_data(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(16, 3)).astype(float)
    y = (X[:, 0].astype(int) ^ X[:, 1].astype(int)) | (rng.random(16) < 0.2)
    fits = {
        method: OptimalDiagramClassifier(method=method, widths=(1, 2, 2), alpha=0.1).fit(X, y)
        for method in ("maxsat", "milp")
    }
    for model in fits.values():
        assert model.result_.proven_optimal
    assert fits["maxsat"].result_.objective_value == pytest.approx(
        fits["milp"].result_.objective_value, abs=1e-6
    )


@pytest.mark.parametrize(
    "params",
    [
        {"method": "sat", "max_splits": 3},
        {"method": "sat", "split": "multivariate"},
        {"objective": "size", "max_splits": 3},
        {"method": "maxsat", "milp_solver": "scip"},
        {"objective": "depth"},
        {"method": "cart"},
    ],
)
def test_routes_refuse_what_they_cannot_do(params):
    with pytest.raises(SatdtError):
        OptimalDiagramClassifier(**params).fit(np.eye(3), [0, 1, 1])


def test_cli_diagram_prints_saves_and_predicts(tmp_path, capsys):
    from satdt.cli import main

    saved = tmp_path / "odd.json"
    args = ["diagram", str(IRIS), "--widths", "1,2,2", "--time-limit", "3", "--save", str(saved)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "n0.0:" in out and "objective (18):" in out and "method: maxsat" in out
    assert main(["predict", str(saved), str(IRIS)]) == 0
    captured = capsys.readouterr()
    assert "accuracy: 0.9" in captured.err
    assert (
        main(
            [
                "diagram",
                str(IRIS),
                "--widths",
                "1,2",
                "--time-limit",
                "3",
                "--format",
                "json",
                "--quiet",
            ]
        )
        == 0
    )
    document = json.loads(capsys.readouterr().out)
    assert document["kind"] == "diagram" and document["method"] == "maxsat"
    assert Diagram.from_dict(document["diagram"]).n_nodes == document["n_nodes"]


def test_cli_diagram_size_and_bad_widths(tmp_path, capsys):
    from satdt.cli import main

    mouse = IRIS.parent / "mouse.csv"
    assert main(["diagram", str(mouse), "--size", "--widths", "1,2,4,4"]) == 0
    assert "(proven optimal)" in capsys.readouterr().out
    assert main(["diagram", str(IRIS), "--widths", "1,x"]) == 2
    assert "--widths takes integers" in capsys.readouterr().err


@pytest.mark.parametrize("method", ["maxsat", "milp"])
def test_cli_diagram_on_a_table_with_a_categorical_column(capsys, method):
    # the summary counts errors on the design matrix, which the diagram reads (one-hot)
    from satdt.cli import main

    tiny = IRIS.parent / "tiny.csv"
    argv = ["diagram", str(tiny), "--widths", "1,2", "--method", method, "--time-limit", "20"]
    if method == "milp":
        pytest.importorskip("highspy")
        argv += ["--milp-solver", "highs"]
    assert main(argv) == 0, capsys.readouterr().err
    assert "training errors: 0 of 5 rows" in capsys.readouterr().out


def test_cli_encode_diagram_writes_a_satisfiable_cnf(tmp_path, capsys):
    from pysat.formula import CNF
    from pysat.solvers import Solver

    from satdt.cli import main

    tiny = IRIS.parent / "tiny.csv"
    out = tmp_path / "tiny.cnf"
    assert main(["encode", str(tiny), "--diagram", "1,2", "-o", str(out)]) == 0
    text = out.read_text()
    assert "skeleton: 3 internal nodes in 2 layers" in text
    with Solver(name="glucose4", bootstrap_with=CNF(from_string=text).clauses) as solver:
        assert solver.solve()
    assert main(["encode", str(tiny)]) == 2
    assert "--diagram" in capsys.readouterr().err
