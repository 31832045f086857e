"""The SAT side: encoding, the counterexample-guided loop and the minimum-depth search."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import consistent_binary_data, examples, threshold_data
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import min_consistent_depth, threshold_features
from pysat.formula import IDPool
from pysat.solvers import Solver

from satdt.core.errors import InfeasibleError
from satdt.sat.chains import ChainLoop, chain_budget, threshold_chains
from satdt.sat.loop import CounterexampleLoop
from satdt.sat.perfect import decode, example_clauses, perfect_leaf_of, structure_clauses, tree_vars
from satdt.sat.problem import Problem
from satdt.sat.search import minimum_depth
from satdt.sat.solving import SAT_SOLVERS
from satdt.task.result import Recorder
from satdt.task.stats import SatStats

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it


def solve_min_depth(B, y, n_classes, **options):
    problem = Problem.from_data(B, y, n_classes, np.arange(n_classes))
    return minimum_depth(problem, recorder=Recorder("depth"), **options)


@settings(deadline=None, max_examples=examples(150))
@given(
    consistent_binary_data(),
    st.sampled_from(["lazy", "all"]),
    st.sampled_from(["first", "per_leaf", "all"]),
)
def test_min_depth_equals_brute_force(data, features, counterexamples):
    B, y, n_classes = data
    result = solve_min_depth(B, y, n_classes, features=features, counterexamples=counterexamples)
    assert result.proven_optimal
    assert result.objective_value == min_consistent_depth(B, y)
    assert result.model.depth == result.objective_value
    np.testing.assert_array_equal(result.model.predict_index(B.astype(float)), y)


@pytest.mark.parametrize("solver", SAT_SOLVERS)
def test_every_solver_finds_the_same_minimum(solver):
    rng = np.random.default_rng(7)
    B = rng.integers(0, 2, size=(40, 8), dtype=np.uint8)
    y = (B[:, 0] ^ B[:, 1] ^ (B[:, 2] & B[:, 3])).astype(np.int64)
    result = solve_min_depth(B, y, 2, solver=solver)
    assert result.objective_value == min_consistent_depth(B, y)
    assert result.proven_optimal


def test_full_encoding_models_decode_to_consistent_trees():
    """Encoding every row at once (no loop): any model is a perfect tree consistent with all rows."""
    rng = np.random.default_rng(3)
    B = rng.integers(0, 2, size=(12, 4), dtype=np.uint8)
    y = (B[:, 0] & B[:, 1]).astype(np.int64)
    pool = IDPool()
    tv = tree_vars(pool, 2, 4, 2)
    clauses = structure_clauses(tv, "pairwise")
    for i in range(len(y)):
        clauses += example_clauses(tv, i, B[i], int(y[i]))
    with Solver(name="glucose4", bootstrap_with=clauses) as solver:
        assert solver.solve()
        node_feature, leaf_class = decode(tv, solver.get_model())
    leaves = perfect_leaf_of(node_feature, 2, B)
    np.testing.assert_array_equal(leaf_class[leaves], y)
    # at depth 1 no single feature separates x0 AND x1: UNSAT
    pool = IDPool()
    tv = tree_vars(pool, 1, 4, 2)
    clauses = structure_clauses(tv, "pairwise")
    for i in range(len(y)):
        clauses += example_clauses(tv, i, B[i], int(y[i]))
    with Solver(name="glucose4", bootstrap_with=clauses) as solver:
        assert not solver.solve()


def test_loop_uses_one_incremental_solver_and_few_examples():
    rng = np.random.default_rng(11)
    B = rng.integers(0, 2, size=(200, 10), dtype=np.uint8)
    y = (B[:, 0] & B[:, 3] | B[:, 5]).astype(np.int64)
    problem = Problem.from_data(B, y, 2, np.arange(2))
    recorder = Recorder("depth")
    with CounterexampleLoop(problem, 3, recorder=recorder) as loop:
        solver = loop.solver
        outcome = loop.run()
        assert loop.solver is solver
        assert outcome.status == "SAT"
        assert len(loop.included) < len(problem.y)
    # examples in the formula never shrink between calls, and only counterexamples are added
    sizes = [call.n_examples for call in recorder.trace]
    assert sizes == sorted(sizes)
    assert sizes[0] == 0


def test_time_limit_returns_greedy_tree_not_proven():
    rng = np.random.default_rng(5)
    B = rng.integers(0, 2, size=(400, 30), dtype=np.uint8)
    y = rng.integers(0, 2, size=400)
    started = time.perf_counter()
    result = solve_min_depth(B, y, 2, deadline=time.perf_counter() + 1.0)
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0 + 2.0
    assert not result.proven_optimal
    assert result.lower_bound < result.objective_value
    np.testing.assert_array_equal(result.model.predict_index(B.astype(float)), y)


def test_deadline_passed_before_the_first_loop_returns_the_greedy_tree():
    rng = np.random.default_rng(5)
    B = rng.integers(0, 2, size=(100, 12), dtype=np.uint8)
    y = rng.integers(0, 2, size=100)
    result = solve_min_depth(B, y, 2, deadline=time.perf_counter() - 1.0)
    assert not result.proven_optimal
    assert result.trace == ()
    np.testing.assert_array_equal(result.model.predict_index(B.astype(float)), y)


def test_stats_are_typed_and_count_the_calls():
    rng = np.random.default_rng(11)
    B = rng.integers(0, 2, size=(200, 10), dtype=np.uint8)
    y = (B[:, 0] & B[:, 3] | B[:, 5]).astype(np.int64)
    result = solve_min_depth(np.vstack([B, B[:5]]), np.concatenate([y, y[:5]]), 2)
    stats = result.stats
    assert isinstance(stats, SatStats)
    assert stats.rows == len(np.unique(B, axis=0)) and stats.binary_features == 10
    assert stats.sat_calls == len(result.trace) > 0
    assert 0 < stats.examples_used < stats.rows
    assert stats.solve_time == pytest.approx(sum(call.time for call in result.trace))


@settings(deadline=None, max_examples=examples(100))
@given(
    st.integers(0, 12),
    st.integers(0, 70),
    st.integers(1, 3),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_problem_keeps_the_first_of_identical_rows(n, m, n_classes, contradictions, seed):
    """The first row of every distinct (row, label) pair, in row order (as np.unique would)."""
    rng = np.random.default_rng(seed)
    B = rng.integers(0, 2, size=(n, m), dtype=np.uint8)
    B = B[rng.integers(0, max(n, 1), size=n)] if n else B  # many identical rows
    y = rng.integers(0, n_classes, size=n)
    if not contradictions and n:
        _, group = np.unique(B, axis=0, return_inverse=True)
        y = y[np.unique(group.ravel(), return_index=True)[1]][group.ravel()]
    problem = Problem.from_data(B, y, n_classes, np.arange(n_classes))
    keyed = np.column_stack([B, y]) if B.size else y[:, None]
    expected = np.sort(np.unique(keyed, axis=0, return_index=True)[1])
    np.testing.assert_array_equal(problem.rows, expected)
    np.testing.assert_array_equal(problem.B, B[expected])
    np.testing.assert_array_equal(problem.y, y[expected])
    assert problem.B.dtype == np.uint8 and problem.B.flags.c_contiguous


def test_depth_cap_below_minimum_is_infeasible():
    B = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.uint8)
    y = np.array([0, 1, 1, 0])
    with pytest.raises(InfeasibleError, match=r"at least 2.*raise max_depth"):
        solve_min_depth(B, y, 2, max_depth=1)
    assert solve_min_depth(B, y, 2, max_depth=2).objective_value == 2


@settings(deadline=None, max_examples=examples(40))
@given(consistent_binary_data(), st.sampled_from(["pairwise", "seqcounter"]))
def test_formula_2_encodings_give_the_same_minimum(data, at_most_one):
    """Formula (2) is optional (equisatisfiable without it); with it, the answers are the same."""
    B, y, n_classes = data
    result = solve_min_depth(B, y, n_classes, features="all", at_most_one=at_most_one)
    assert result.objective_value == min_consistent_depth(B, y)


@settings(deadline=None, max_examples=examples(40))
@given(consistent_binary_data(), st.sampled_from(SAT_SOLVERS))
def test_a_race_of_solvers_finds_the_same_minima(data, lead):
    """n_jobs=2 races two solvers on every call: the same proven minimum depth and size."""
    from naive import min_consistent_leaves

    from satdt.sat.search import minimum_size

    B, y, n_classes = data
    depth = solve_min_depth(B, y, n_classes, solver=lead, n_jobs=2)
    assert depth.proven_optimal and depth.objective_value == min_consistent_depth(B, y)
    np.testing.assert_array_equal(depth.model.predict_index(B.astype(float)), y)
    problem = Problem.from_data(B, y, n_classes, np.arange(n_classes))
    size = minimum_size(problem, recorder=Recorder("size"), solver=lead, n_jobs=2)
    # the fewest leaves at the minimum depth (DT_size)
    leaves = min_consistent_leaves(B, y, int(depth.objective_value))
    assert size.proven_optimal and size.model.n_leaves == leaves


def test_a_race_answers_with_the_winner_model_and_keeps_its_time_limit():
    from pysat.examples.genhard import PHP

    from satdt.sat.solving import SolverRace, race_partners, solve_until

    assert race_partners("glucose4", 2) == ["glucose4", "maplechrono"]
    assert race_partners("cadical195", 3) == ["cadical195", "glucose4", "maplechrono"]
    race = SolverRace(race_partners("glucose4", 2))
    try:
        race.append_formula([[1, 2], [-1, 2], [-2, 3]])
        assert solve_until(race, "glucose4", [-3], None) is False
        assert solve_until(race, "glucose4", [], None) is True
        model = race.get_model()
        assert 2 in model and 3 in model
        race.append_formula(PHP(11).clauses)
        started = time.perf_counter()
        assert solve_until(race, "glucose4", [], time.perf_counter() + 0.5) is None
        assert time.perf_counter() - started < 2.0
    finally:
        race.delete()


@pytest.mark.parametrize("solver", [*SAT_SOLVERS, "race"])
def test_ctrl_c_stops_the_solver_cleanly(solver):
    """Ctrl-C during a solve raises KeyboardInterrupt and leaves the solver whole: PySAT's own
    handler jumps out of the solver, which could crash the process once the search returned."""
    import os
    import signal
    import threading

    from pysat.examples.genhard import PHP

    from satdt.sat.solving import new_solver, solve_until

    oracle = new_solver("glucose4", 2) if solver == "race" else Solver(name=solver)
    oracle.append_formula(PHP(10).clauses)
    try:
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        started = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            solve_until(oracle, solver, [], None)
        assert time.perf_counter() - started < 5.0
        # the solver still answers: PHP(10) is unsatisfiable, and quickly so with a unit fixed
        assert solve_until(oracle, solver, [1, 2], None) is False
        assert solve_until(oracle, solver, [], time.perf_counter() + 0.2) is None
    finally:
        oracle.delete()


def test_a_ctrl_c_while_a_finished_call_is_collected_is_not_lost():
    """A SIGINT that lands while the waiting thread collects a call that has answered (or been
    stopped) is raised once the call has ended: the search stops, as the user asked."""
    import threading

    from satdt.sat import solving

    class Call:
        sliced = True
        go = None
        entered = True  # it went into its solver

        def __init__(self):
            self.finished = threading.Event()
            self.waits = 0

        def stop(self):
            pass

    call = Call()

    def wait_interrupted():  # Ctrl-C lands in the first wait
        call.waits += 1
        if call.waits == 1:
            raise KeyboardInterrupt
        return True

    call.finished.wait = wait_interrupted
    with pytest.raises(KeyboardInterrupt):
        solving._stop([call])
    assert call.waits == 2  # it still waited for the call to end before raising


def test_a_ctrl_c_while_the_solve_threads_start_leaves_no_solver_running():
    """Ctrl-C can land while the solve threads start (Thread.start waits for each): a thread
    that has not gone into its solver then never does, and stopping does not wait for it,
    so no solver is left running (and freed under its thread) after the search stopped."""
    import threading

    from satdt.sat import solving

    class Solver:
        solves = 0

        def solve_limited(self, assumptions, expect_interrupt):
            Solver.solves += 1
            return True

        def interrupt(self):
            pass

        def clear_interrupt(self):
            pass

    call = solving._SolveCall(Solver(), "glucose4", [], None)
    call.go = threading.Event()  # the main thread was interrupted before it set go
    thread = threading.Thread(target=call.run, daemon=True)
    thread.start()
    solving._stop([call])
    thread.join(5)
    assert not thread.is_alive() and call.finished.is_set()
    assert Solver.solves == 0 and not call.entered and call.status is None


def test_threshold_chains_partition_the_features_into_nested_chains():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 12, size=(40, 3))
    B = np.column_stack([threshold_features(X), rng.integers(0, 2, size=40)]).astype(np.uint8)
    chains = threshold_chains(B)
    assert sorted(np.concatenate(chains).tolist()) == list(range(B.shape[1]))
    for chain in chains:  # every feature's rows are within those of the one before it
        assert not (B[:, chain[1:]] & ~B[:, chain[:-1]]).any()
    assert len(chains) == 4  # one chain per numeric column, the random column alone
    assert threshold_chains(B, max_chains=4) is not None
    assert threshold_chains(B, max_chains=3) is None
    assert chain_budget(B.shape[1]) >= 4 and chain_budget(7) == 0


@settings(deadline=None, max_examples=examples(150))
@given(threshold_data(), st.sampled_from(["first", "per_leaf", "all"]))
def test_chain_encoding_min_depth_equals_brute_force(data, counterexamples):
    B, y, n_classes = data
    result = solve_min_depth(B, y, n_classes, features="chains", counterexamples=counterexamples)
    depth = min_consistent_depth(B, y)
    assert result.proven_optimal
    assert result.objective_value == depth
    assert result.model.depth == result.objective_value
    np.testing.assert_array_equal(result.model.predict_index(B.astype(float)), y)
    # the loop alone (the search may take the greedy tree's depth without a SAT call)
    problem = Problem.from_data(B, y, n_classes, np.arange(n_classes))
    chains = threshold_chains(problem.B)
    for k, status in ((depth, "SAT"), (depth - 1, "UNSAT")):
        if k < 1:
            continue
        with ChainLoop(problem, k, chains, recorder=Recorder("depth")) as loop:
            outcome = loop.run()
        assert outcome.status == status
        if status == "SAT":
            np.testing.assert_array_equal(
                outcome.tree.predict_index(problem.B.astype(float)), problem.y
            )


@pytest.mark.parametrize("seed", range(3))
def test_chain_and_per_feature_encodings_agree_on_many_thresholds(seed):
    """Beyond brute force: the order encoding (the default here) and the lazy per-feature
    encoding prove the same minimum depth, every call's tree decoded from its model."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 30, size=(80, 3))
    y = (X[:, 0] * 7 + X[:, 1] * 3 + X[:, 2]) // 50 % 4
    B = threshold_features(X)
    chains = solve_min_depth(B, y, 4)
    lazy = solve_min_depth(B, y, 4, features="lazy")
    assert chains.proven_optimal and lazy.proven_optimal
    assert chains.objective_value == lazy.objective_value
    np.testing.assert_array_equal(chains.model.predict_index(B.astype(float)), y)
    assert max(c.n_clauses for c in chains.trace) < max(c.n_clauses for c in lazy.trace)


def test_rows_a_deadline_keeps_from_the_formula_wait_for_the_next_run():
    # past the deadline no row's clauses are built (none is half in the formula); the next
    # run without a deadline builds them first, in order, and its tree is right on every row
    rng = np.random.default_rng(11)
    B = rng.integers(0, 2, size=(200, 10), dtype=np.uint8)
    y = (B[:, 0] & B[:, 3] | B[:, 5]).astype(np.int64)
    problem = Problem.from_data(B, y, 2, np.arange(2))
    with CounterexampleLoop(problem, 3, recorder=Recorder("depth")) as loop:
        loop.deadline = time.perf_counter() - 1.0
        assert loop.add_examples(range(40)) is False
        assert loop.included == []
        assert loop.run().status == "UNKNOWN" and loop.included == []
        loop.deadline = None
        outcome = loop.run()
        assert loop.included[:40] == list(range(40))
    assert outcome.status == "SAT"
    np.testing.assert_array_equal(outcome.tree.predict_index(B.astype(float)), y)
