"""Minimum depth and size on numeric tables: ConTree's decision procedure (satdt.dp.consistent)
and the portfolio of SAT and ConTree (satdt.search.hybrid), against brute force and each other."""

from __future__ import annotations

import contextlib
import time
import warnings

import numpy as np
import pytest
from helpers import ROOT, examples, labels_by_row, small_integer_rows
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_consistent_depth, min_consistent_leaves, threshold_features

import satdt.search.hybrid as hybrid
from satdt import OptimalTreeClassifier, read_csv
from satdt.core.errors import ContradictionError, InfeasibleError, NotProvenWarning, SatdtError
from satdt.dp import kernels
from satdt.task.stats import HybridStats

kernels.load(["contree", "contree_d2"])
from satdt.dp.consistent import ConsistencyDP  # noqa: E402 (after the kernels are loaded)

ROUTES = ("hybrid", "contree", "sat")


@st.composite
def numeric_consistent(draw, max_rows: int = 10, max_columns: int = 3, max_classes: int = 3):
    """Tiny numeric data (small integers, so thresholds repeat) whose identical rows share
    one label: a consistent tree exists."""
    X = small_integer_rows(draw, max_rows, max_columns)
    n_classes = draw(st.integers(2, max_classes))
    return X, labels_by_row(draw, X, st.integers(0, n_classes - 1)).astype(np.int64)


@contextlib.contextmanager
def interleaved():
    """The portfolio with ConTree's kernels loading at once and turns of a few microseconds:
    every question goes back and forth between the searches many times."""
    saved = hybrid.LOAD_AFTER, hybrid.FIRST_SLICE
    hybrid.LOAD_AFTER, hybrid.FIRST_SLICE = 0.0, 1e-5
    try:
        yield
    finally:
        hybrid.LOAD_AFTER, hybrid.FIRST_SLICE = saved


def _fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotProvenWarning)
        return OptimalTreeClassifier(**params).fit(X, y)


def _every_route_proves(X, y, expected, **params):
    """Every route, and the portfolio with turns of microseconds, proves ``expected``; their
    results."""
    results = []
    for method in ROUTES:
        results.append(_fit(X, y, method=method, **params).result_)
    with interleaved():
        results.append(_fit(X, y, method="hybrid", **params).result_)
    for method, result in zip((*ROUTES, "hybrid in turns"), results, strict=True):
        assert result.proven_optimal and result.objective_value == expected, method
    return results


@given(numeric_consistent())
@settings(max_examples=examples(120), deadline=None)
def test_every_route_proves_the_brute_force_minimum_depth(problem):
    X, y = problem
    _every_route_proves(X, y, min_consistent_depth(threshold_features(X), y))


@given(numeric_consistent(max_rows=12, max_columns=3), st.sampled_from(["depth", "size"]))
@settings(max_examples=examples(100), deadline=None)
def test_every_bound_recorded_over_time_is_valid(problem, objective):
    """The portfolio in turns of microseconds (every arm, the cores and the local improvement
    among them, gets turns): each lower bound it records is at most the brute-force optimum,
    each incumbent at least it, both monotone in time, and they meet when proven."""
    X, y = problem
    if np.unique(y).size == 1:
        return  # one leaf, before any search
    B = threshold_features(X)
    depth = min_consistent_depth(B, y)
    optimum = depth if objective == "depth" else 2 * min_consistent_leaves(B, y, int(depth)) - 1
    with interleaved():
        result = _fit(X, y, method="hybrid", objective=objective).result_
    lower = [bound.value for bound in result.lower_bounds]
    upper = [incumbent.value for incumbent in result.history]
    assert lower and all(value <= optimum for value in lower) and lower == sorted(lower)
    assert all(value >= optimum for value in upper) and upper == sorted(upper, reverse=True)
    times = [bound.elapsed for bound in result.lower_bounds]
    assert times == sorted(times) and times[-1] <= result.runtime
    assert result.proven_optimal and lower[-1] == upper[-1] == optimum


@given(numeric_consistent(max_rows=9), st.integers(0, 2))
@settings(max_examples=examples(100), deadline=None)
def test_every_route_proves_the_brute_force_minimum_size(problem, extra):
    X, y = problem
    B = threshold_features(X)
    depth = int(min_consistent_depth(B, y))
    for max_depth in (None, depth + extra):
        expected = 2 * min_consistent_leaves(B, y, depth if max_depth is None else max_depth) - 1
        for result in _every_route_proves(X, y, expected, objective="size", max_depth=max_depth):
            assert max_depth is not None or result.model.depth == depth


@given(numeric_consistent(max_rows=9), st.integers(1, 7))
@settings(max_examples=examples(80), deadline=None)
def test_a_node_cap_is_kept_or_proven_infeasible(problem, max_nodes):
    X, y = problem
    B = threshold_features(X)
    fewest = 2 * min_consistent_leaves(B, y, len(y)) - 1  # any depth
    for method in ("hybrid", "contree"):
        if fewest > max_nodes:
            with pytest.raises(InfeasibleError):
                _fit(X, y, method=method, max_nodes=max_nodes)
            continue
        result = _fit(X, y, method=method, max_nodes=max_nodes).result_
        assert result.model.n_nodes <= max_nodes and result.proven_optimal
        sat = _fit(X, y, method="sat", max_nodes=max_nodes).result_
        assert result.objective_value == sat.objective_value


@given(numeric_consistent(), st.integers(0, 4), st.floats(1e-6, 1e-4))
@settings(max_examples=examples(100), deadline=None)
def test_decisions_cut_into_slices_never_claim_a_wrong_answer(problem, depth, first_slice):
    """ConTree's decision stopped after a few microseconds and resumed (with its cache), each
    slice twice as long as the last (as the portfolio's turns grow), ends with the
    brute-force answer; no slice claims one before."""
    X, y = problem
    B = threshold_features(X)
    dp = ConsistencyDP(X, y, int(y.max()) + 1)
    feasible = min_consistent_depth(B, y) <= depth
    slices = (first_slice * 2**i for i in range(60))
    answer = dp.decide(depth, time.perf_counter() + next(slices))
    while answer.status == "UNKNOWN":
        answer = dp.decide(depth, time.perf_counter() + next(slices))
    assert answer.status == ("SAT" if feasible else "UNSAT")
    if feasible:
        assert answer.tree.depth <= depth and (answer.tree.predict(X) == y).all()
        fewest = min_consistent_leaves(B, y, depth)
        upper = answer.tree.n_leaves + 1
        slices = (first_slice * 2**i for i in range(60))
        while True:
            step = dp.fewer_leaves(depth, upper, time.perf_counter() + next(slices))
            if step.tree is not None:
                assert step.tree.n_leaves < upper and (step.tree.predict(X) == y).all()
                upper = step.tree.n_leaves
            if step.status != "UNKNOWN":
                break
        assert upper == fewest


def test_the_sat_loop_resumes_after_a_deadline_in_the_middle_of_its_clauses():
    """A slice that ends while a loop hands clauses to the solver leaves them queued: the next
    run sends them first, and the answer is the one an uninterrupted loop gives."""
    from satdt.sat.loop import CounterexampleLoop
    from satdt.sat.problem import Problem
    from satdt.task.result import Recorder

    rng = np.random.default_rng(3)
    B = rng.integers(0, 2, size=(60, 12)).astype(np.uint8)
    y = (B[:, 0] ^ B[:, 1] ^ B[:, 2]).astype(np.int64)
    problem = Problem.from_data(B, y, 2, np.array([0, 1]))
    for depth, expected in ((2, "UNSAT"), (3, "SAT")):
        loop = CounterexampleLoop(problem, depth, recorder=Recorder("depth"))
        loop.deadline = time.perf_counter() - 1  # every handover stops at once
        assert loop.add_examples(list(range(60))) is False
        assert loop.run().status == "UNKNOWN"
        loop.deadline = None
        outcome = loop.run()
        assert outcome.status == expected
        if expected == "SAT":
            assert (outcome.tree.predict(B.astype(float)) == y).all()
        loop.close()


@pytest.fixture(scope="module")
def breast_cancer():
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_breast_cancer(return_X_y=True)
    return X, y


# seconds of work: in the full suite, not the quick loop
@pytest.mark.slow
def test_breast_cancer_minimum_depth_is_proven_and_every_search_agrees(breast_cancer):
    """ConTree's error optimum is positive at depth 3 and 0 at depth 4: the portfolio and the
    decision procedure (on the whole table or on a core of its rows) prove depth 4, saying
    which search settled what."""
    X, y = breast_cancer
    below = OptimalTreeClassifier(objective="error", method="contree", max_depth=3).fit(X, y)
    assert below.result_.proven_optimal and below.result_.objective_value > 0
    for method in ("hybrid", "contree"):
        result = _fit(X, y, method=method).result_
        assert result.proven_optimal and result.objective_value == 4
        stats = result.stats
        assert isinstance(stats, HybridStats) and stats.lower_bound_by in ("contree", "cores")
        refuted = {p.depth for p in stats.proofs if p.answer == "none"}
        assert 3 in refuted and all(p.depth <= 4 or p.answer == "found" for p in stats.proofs)


def test_the_decision_prunes_far_more_than_the_optimisation(breast_cancer):
    """Refuting depth 3 with the bound "no error" evaluates a fraction of the splits that
    proving the optimum of 9 errors at depth 3 takes (effort, not seconds)."""
    from satdt.dp.common import SearchSettings
    from satdt.dp.contree import solve_min_error
    from satdt.task.result import Recorder

    X, y = breast_cancer
    recorder = Recorder("error")
    solve_min_error(X, y, 2, 3, SearchSettings(recorder=recorder))
    optimised = recorder.stats.expansions + recorder.stats.bottom_solves
    dp = ConsistencyDP(X, y, 2)
    assert dp.decide(3, None).status == "UNSAT"
    stats = dp.stats()
    assert stats.expansions + stats.bottom_solves < optimised / 3


def test_a_time_limit_returns_a_consistent_tree_and_a_sound_bound(breast_cancer):
    X, y = breast_cancer
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotProvenWarning)
        model = OptimalTreeClassifier(time_limit=0.6).fit(X, y)
    assert time.perf_counter() - started < 0.6 + 0.5
    result = model.result_
    assert (model.predict(X) == y).all()
    assert result.lower_bound <= 4 <= result.objective_value
    assert result.proven_optimal or result.stop_reason == "time limit"


def test_ctrl_c_returns_the_best_tree_with_its_bound(breast_cancer):
    """Ctrl-C after the first better tree: the fit returns it, marked interrupted."""
    X, y = breast_cancer

    def interrupt(result):
        if len(result.history) >= 2:
            raise KeyboardInterrupt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotProvenWarning)
        model = OptimalTreeClassifier(method="contree", on_improve=interrupt).fit(X, y)
    result = model.result_
    assert not result.proven_optimal and result.stop_reason == "interrupted"
    assert (model.predict(X) == y).all() and result.lower_bound <= 4


# seconds of work: in the full suite, not the quick loop
@pytest.mark.slow
def test_size_on_breast_cancer_is_smaller_than_cart_and_at_the_minimum_depth(breast_cancer):
    X, y = breast_cancer
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotProvenWarning)
        # the minimum depth (4) takes about 4 s on an idle core: room for a loaded machine
        model = OptimalTreeClassifier(objective="size", time_limit=12).fit(X, y)
    assert model.tree_.depth == 4 and (model.predict(X) == y).all()
    assert model.result_.objective_value <= 31  # a complete depth-4 tree at worst


def test_contradictions_are_named_or_resolved_by_majority():
    X = np.array([[0.5, 1.0], [0.5, 1.0], [0.2, 3.0], [0.9, 2.0]])
    y = np.array([0, 1, 1, 0])
    for method in ("hybrid", "contree"):
        with pytest.raises(ContradictionError, match="rows"):
            OptimalTreeClassifier(method=method).fit(X, y)
        model = OptimalTreeClassifier(method=method, resolve="majority").fit(X, y)
        assert model.result_.proven_optimal and model.result_.preparation.relabelled_rows == 1


def test_max_thresholds_and_missing_values_go_to_sat():
    """auto: the portfolio on numeric columns with many values; SAT where thresholds are
    limited (ConTree searches them all) or cells are missing (ConTree has no side for them)."""
    rng = np.random.default_rng(0)
    X = rng.random((60, 4))
    y = (X[:, 0] + X[:, 1] > 1).astype(np.int64)
    assert OptimalTreeClassifier().fit(X, y).method_ == "hybrid"
    assert OptimalTreeClassifier(max_thresholds=4, resolve="majority").fit(X, y).method_ == "sat"
    X[3, 2] = np.nan
    assert OptimalTreeClassifier().fit(X, y).method_ == "sat"
    with pytest.raises(SatdtError, match="missing"):
        OptimalTreeClassifier(method="contree").fit(X, y)


SHIPPED = {"mouse": 4, "iris": 4, "monk1": 5, "monk2": 6, "monk3": 6, "tiny": None}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_every_route_agrees_on_the_shipped_datasets(name):

    table = read_csv(ROOT / "examples" / "data" / f"{name}.csv")
    depths = {}
    for method in ("hybrid", "contree", "sat", "boxes"):
        try:
            result = OptimalTreeClassifier(method=method).fit_dataset(table).result_
        except SatdtError as refusal:  # the box DP where the grid would not fit
            assert method == "boxes" and "max_memory_mb" in str(refusal)
            continue
        assert result.proven_optimal, method
        depths[method] = result.objective_value
    assert len(set(depths.values())) == 1, depths
    assert SHIPPED[name] is None or depths["sat"] == SHIPPED[name]


@given(numeric_consistent(max_rows=9))
@settings(max_examples=examples(60), deadline=None)
def test_the_pareto_front_of_every_route_equals_brute_force(problem):
    from satdt import pareto_front

    X, y = problem
    B = threshold_features(X)
    depth = int(min_consistent_depth(B, y))
    if depth == 0:
        return
    fronts = {}
    for method in ROUTES:
        front = pareto_front(X, y, method=method)
        for point_depth, n_nodes, tree, proven in front:
            assert proven and tree.depth <= point_depth and (tree.predict(X) == y).all()
            assert n_nodes == 2 * min_consistent_leaves(B, y, point_depth) - 1 == tree.n_nodes
        fronts[method] = [(d, n) for d, n, _, _ in front]
    assert fronts["hybrid"] == fronts["contree"] == fronts["sat"]
    assert fronts["sat"][0][0] == depth


def test_the_command_line_says_which_search_settled_what(capsys, tmp_path, breast_cancer):
    import json

    from satdt.cli import main

    X, y = breast_cancer
    path = tmp_path / "cancer.csv"
    header = ",".join([f"x{j}" for j in range(X.shape[1])] + ["label"])
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="")
    assert main(["infer", str(path), "--format", "json", "--quiet"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["depth"] == 4 and document["proven_optimal"] and document["method"] == "hybrid"
    stats = document["stats"]
    assert stats["lower_bound_by"] in ("contree", "cores")
    assert stats["found_by"] in ("contree", "cores", "blossom")
    refuted = next(p for p in stats["proofs"] if p["depth"] == 3 and p["answer"] == "none")
    assert refuted["by"] in ("contree", "cores")
    assert main(["infer", str(path)]) == 0
    out = capsys.readouterr().out
    assert "depth: 4 (proven minimum)" in out and "depth 3: none (ConTree" in out
    assert "lower bound proven by ConTree" in out and "cores: " in out


def test_sigint_during_the_portfolio_prints_the_best_tree(tmp_path):
    """SIGINT while SAT and ConTree take turns on digits (minimum depth far from settled):
    exit 0 with the best consistent tree, marked interrupted, its bound, no traceback."""
    import json
    import signal
    import subprocess
    import sys

    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_digits(return_X_y=True)
    path = tmp_path / "digits.csv"
    header = ",".join([f"x{j}" for j in range(X.shape[1])] + ["label"])
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="", fmt="%g")
    command = [sys.executable, "-m", "satdt.cli", "infer", str(path), "--format", "json"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4.0)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    document = json.loads(out)
    assert document["stats"]["interrupted"] and not document["proven_optimal"]
    assert 4 <= document["lower_bound"] <= document["depth"]
