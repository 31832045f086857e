"""The Step-1 construction heuristic of the decision-diagram MILP, and objective (18)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import ROOT, examples
from hypothesis import given, settings
from hypothesis import strategies as st

from satdt.core.errors import SatdtError
from satdt.mip.heuristic import ConstructOptions, construct
from satdt.models.diagram import Diagram
from satdt.models.diagram_checks import ErrorObjective, objective

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it

# The benchmark data sits next to the repository, in ../shared/data (see its README.md).
ODD_DIR = ROOT.parent / "shared" / "data" / "odd"

SKELETONS = [(1,), (1, 2), (1, 2, 4, 8), (1, 2, 4, 4, 4), (1, 2, 3, 3, 3, 3, 3), (1, 2, 2, 2, 2)]


def fits_skeleton(diagram: Diagram, widths: tuple[int, ...]) -> None:
    """What the MILP warm start needs: layers within the widths, arcs to the next layer or
    a terminal, no node sending both sides to the same place."""
    assert diagram.n_splits == len(diagram.layer)  # nothing unreachable
    if not diagram.n_splits:
        assert diagram.root < 0
        return
    counts = np.bincount(diagram.layer)
    assert len(counts) <= len(widths)
    assert np.all(counts <= np.asarray(widths)[: len(counts)])
    for i in range(diagram.n_splits):
        assert diagram.low[i] != diagram.high[i]
        for s in (diagram.low[i], diagram.high[i]):
            assert s < 0 or diagram.layer[s] == diagram.layer[i] + 1
    assert set(diagram.classes.tolist()) <= set(range(diagram.n_classes))


def load(name: str) -> tuple[np.ndarray, np.ndarray, int]:
    """An ODD benchmark file, min-max scaled as the paper does; skips when absent."""
    path = ODD_DIR / f"{name}.csv"
    if not path.is_file():
        pytest.skip(f"benchmark data not found: expected ../shared/data/odd/{name}.csv")
    data = np.genfromtxt(path, delimiter=",", skip_header=1, dtype=str)
    X = data[:, :-1].astype(float)
    classes, y = np.unique(data[:, -1], return_inverse=True)
    lo, hi = X.min(axis=0), X.max(axis=0)
    return (X - lo) / np.where(hi > lo, hi - lo, 1.0), y, len(classes)


def random_data(seed: int, n: int = 120, d: int = 4, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((n, d)), 2)
    votes = (X[:, 0] > 0.5).astype(int) + (X[:, 1] + X[:, 2] > 1.1) + (rng.random(n) < 0.15)
    y = votes % k
    return X, y


# ---------------------------------------------------------------------------- objective
def test_objective_counts_error_and_nodes() -> None:
    # x0 <= 0.5 and x1 <= 0.5: class 0; x0 <= 0.5 and x1 > 0.5: class 1; x0 > 0.5: class 0
    diagram = Diagram([0, 1], [0, 1], [0.5, 0.5], [1, -1], [-1, -2], n_features=2, classes=[0, 1])
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = np.array([0, 1, 0, 1])  # only the last row is misclassified
    assert objective(diagram, X, y, 0.3, (1, 2, 2)) == pytest.approx(1 / 4 + 0.3 * 1 / 4)
    weights = np.array([1.0, 2.0, 3.0, 4.0])
    assert objective(diagram, X, y, 0.3, (1, 2, 2), weights) == pytest.approx(0.4 + 0.3 / 4)
    terminal = Diagram.single_terminal(1, n_features=2, classes=[0, 1])
    assert objective(terminal, X, y, 0.3, (1, 2, 2)) == 0.5
    assert objective(terminal, X, y, 0.3, (1,)) == 0.5
    root_only = Diagram([0], [0], [0.5], [-1], [-2], n_features=2, classes=[0, 1])
    assert objective(root_only, X, y, 0.3, (1,)) == 0.5


# ---------------------------------------------------------------------------- skeleton
@pytest.mark.parametrize("widths", SKELETONS)
@pytest.mark.parametrize("seed", range(4))
def test_fits_the_skeleton_on_random_data(widths: tuple[int, ...], seed: int) -> None:
    X, y = random_data(seed)
    reported: list[tuple[Diagram, float]] = []
    diagram = construct(
        X,
        y,
        3,
        widths,
        ErrorObjective(0.05),
        ConstructOptions(seed=seed, max_starts=20),
        on_improve=lambda d, v: reported.append((d, v)),
    )
    fits_skeleton(diagram, widths)
    assert reported and reported[-1][0] == diagram
    values = [v for _, v in reported]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
    for model, value in reported:  # each reported value is objective (18) recomputed
        assert value == objective(model, X, y, 0.05, widths)
    majority = Diagram.single_terminal(
        int(np.argmax(np.bincount(y, minlength=3))), n_features=4, classes=[0, 1, 2]
    )
    assert values[-1] <= objective(majority, X, y, 0.05, widths)
    assert np.allclose(diagram.terminal_counts.sum(axis=0), np.bincount(y, minlength=3))


@settings(max_examples=examples(60), deadline=None)
@given(
    seed=st.integers(0, 10_000),
    widths=st.lists(st.integers(1, 4), min_size=0, max_size=4),
    n=st.integers(1, 40),
    k=st.integers(1, 4),
    alpha=st.sampled_from([0.0, 0.01, 0.5, 2.0]),
    weighted=st.booleans(),
)
def test_fits_the_skeleton_on_any_data(
    seed: int, widths: list[int], n: int, k: int, alpha: float, weighted: bool
) -> None:
    rng = np.random.default_rng(seed)
    X = rng.integers(4, size=(n, 3)) / 3
    y = rng.integers(k, size=n)
    weight = rng.random(n) if weighted else None
    skeleton = (1, *widths)
    diagram = construct(
        X, y, k, skeleton, ErrorObjective(alpha, weight), ConstructOptions(max_starts=5)
    )
    fits_skeleton(diagram, skeleton)
    majority = Diagram.single_terminal(
        int(np.argmax(np.bincount(y, weight, minlength=k))), n_features=3, classes=range(k)
    )
    assert objective(diagram, X, y, alpha, skeleton, weight) <= objective(
        majority, X, y, alpha, skeleton, weight
    )


@pytest.mark.parametrize(
    "name", ["iris", "balance-scale", "breast-cancer-wisconsin", "monks2", "car-evaluation"]
)
@pytest.mark.parametrize("widths", [(1, 2, 4, 8), (1, 2, 3, 3, 3, 3, 3)])
def test_fits_the_skeleton_on_benchmark_files(name: str, widths: tuple[int, ...]) -> None:
    X, y, k = load(name)
    diagram = construct(X, y, k, widths, ErrorObjective(0.01), ConstructOptions(max_starts=10))
    fits_skeleton(diagram, widths)
    value = objective(diagram, X, y, 0.01, widths)
    assert value < 1 - np.bincount(y).max() / len(y)  # better than the majority class
    assert diagram.n_features == X.shape[1]
    for i in range(diagram.n_splits):  # thresholds are midpoints of distinct values
        column = X[:, diagram.feature[i]]
        assert not np.any(column == diagram.threshold[i])


def test_iris_is_nearly_separated() -> None:
    X, y, k = load("iris")
    diagram = construct(X, y, k, (1, 2, 2, 2), ErrorObjective(0.0), ConstructOptions(max_starts=20))
    assert np.mean(diagram.terminal(X) != y) <= 0.02


# ---------------------------------------------------------------------------- behaviour
def test_xor_is_solved_with_width_two() -> None:
    rng = np.random.default_rng(0)
    bits = rng.integers(2, size=(200, 2))
    X = np.column_stack([bits, rng.random(200)])  # the third feature is noise
    y = bits[:, 0] ^ bits[:, 1]
    diagram = construct(X, y, 2, (1, 2), ErrorObjective(0.1), ConstructOptions(max_starts=30))
    assert np.array_equal(diagram.terminal(X), y)
    assert diagram.widths == (1, 2)
    assert objective(diagram, X, y, 0.1, (1, 2)) == pytest.approx(0.1)


def test_merging_flows_saves_a_node() -> None:
    # class 1 iff x0 != x1 and x2: after splits on x0 then x1, the two flows left impure both
    # follow x2, so one node of layer 2 serves both (a tree needs two)
    rng = np.random.default_rng(1)
    X = rng.integers(2, size=(400, 3)).astype(float)
    y = ((X[:, 0] != X[:, 1]) & (X[:, 2] == 1)).astype(int)
    diagram = construct(X, y, 2, (1, 2, 1), ErrorObjective(0.0), ConstructOptions(max_starts=30))
    assert np.array_equal(diagram.terminal(X), y)
    assert diagram.widths == (1, 2, 1)
    fits_skeleton(diagram, (1, 2, 1))


@pytest.mark.parametrize("min_gap", [0.0, 1e-4, 0.05])
def test_split_sides_are_min_gap_apart(min_gap: float) -> None:
    rng = np.random.default_rng(9)
    X = np.round(rng.random((300, 3)), 5)  # many values closer than 1e-4
    y = ((X[:, 0] > 0.3) ^ (X[:, 1] > 0.6)).astype(int)
    diagram = construct(
        X, y, 2, (1, 2, 2, 2), ErrorObjective(0.0), ConstructOptions(max_starts=10, min_gap=min_gap)
    )
    fits_skeleton(diagram, (1, 2, 2, 2))
    path = diagram.decision_path(X)
    for node in range(diagram.n_splits):
        here = np.any(path == node, axis=1)
        column = X[here, diagram.feature[node]]
        low = column <= diagram.threshold[node]
        assert low.any() and (~low).any()
        assert column[~low].min() - column[low].max() >= min_gap


def test_pure_data_gives_a_single_terminal() -> None:
    X = np.random.default_rng(2).random((30, 2))
    diagram = construct(X, np.full(30, 2), 3, (1, 2), ErrorObjective(0.0))
    assert diagram.n_splits == 0 and diagram.root == -3


def test_large_alpha_prunes_to_few_nodes() -> None:
    X, y = random_data(3)
    diagram = construct(
        X, y, 3, (1, 2, 4, 8), ErrorObjective(10.0), ConstructOptions(max_starts=10)
    )
    assert diagram.n_splits <= 1


def test_deterministic_for_a_seed() -> None:
    X, y = random_data(4, n=200, d=8)
    first = construct(
        X,
        y,
        3,
        (1, 2, 2, 2),
        ErrorObjective(0.01),
        ConstructOptions(seed=7, max_starts=15, time_budget=60),
    )
    again = construct(
        X,
        y,
        3,
        (1, 2, 2, 2),
        ErrorObjective(0.01),
        ConstructOptions(seed=7, max_starts=15, time_budget=60),
    )
    assert first == again


def test_deadline_is_respected() -> None:
    rng = np.random.default_rng(5)
    X = rng.random((3000, 40))
    y = (X[:, :5].sum(axis=1) * 3).astype(int) % 4
    began = time.perf_counter()
    diagram = construct(
        X,
        y,
        4,
        (1, 2, 4, 8, 8, 8),
        ErrorObjective(0.01),
        ConstructOptions(max_starts=None),
        deadline=began + 0.3,
    )
    assert time.perf_counter() - began < 1.5
    fits_skeleton(diagram, (1, 2, 4, 8, 8, 8))
    began = time.perf_counter()
    late = construct(X, y, 4, (1, 2), ErrorObjective(0.01), deadline=began - 1)
    assert late.n_splits == 0 and time.perf_counter() - began < 1.0


def test_time_budget_limits_restarts() -> None:
    rng = np.random.default_rng(6)
    X = rng.random((1000, 20))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    began = time.perf_counter()
    construct(
        X,
        y,
        2,
        (1, 2, 2, 2),
        ErrorObjective(0.01),
        ConstructOptions(max_starts=None, time_budget=0.3),
    )
    assert time.perf_counter() - began < 2.0


def test_multivariate_starts_from_univariate_splits() -> None:
    X, y = random_data(7)
    uni = construct(X, y, 3, (1, 2, 2), ErrorObjective(0.01), ConstructOptions(max_starts=5))
    multi = construct(
        X,
        y,
        3,
        (1, 2, 2),
        ErrorObjective(0.01),
        ConstructOptions(max_starts=5, split="multivariate"),
    )
    assert uni == multi


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"widths": (2, 2)}, "widths"),
        ({"widths": ()}, "widths"),
        ({"widths": (1, 0)}, "widths"),
        ({"alpha": -1.0}, "alpha"),
        ({"split": "oblique"}, "split"),
        ({"feature_fraction": 0.0}, "feature_fraction"),
        ({"min_gap": -1.0}, "min_gap"),
        ({"n_classes": 2}, "class indices"),
        ({"y": np.full(120, 0.5)}, "class indices"),
        ({"sample_weight": -np.ones(120)}, "sample_weight"),
        ({"y": np.zeros(3, dtype=int)}, "one label per row"),
    ],
)
def test_bad_parameters_are_explained(changes: dict, message: str) -> None:
    X, y = random_data(8)
    args = {"X": X, "y": y, "n_classes": 3, "widths": (1, 2), "alpha": 0.1}
    args.update(changes)
    objective18 = ErrorObjective(args.pop("alpha"), args.pop("sample_weight", None))
    options = ConstructOptions(
        **{k: args.pop(k) for k in ("split", "feature_fraction", "min_gap") if k in args}
    )
    with pytest.raises(SatdtError, match=message):
        construct(args["X"], args["y"], args["n_classes"], args["widths"], objective18, options)
