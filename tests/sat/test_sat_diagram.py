"""Decision diagrams by SAT and MaxSAT (satdt.sat.diagram) against brute force and the trees."""

from __future__ import annotations

import itertools
import re
import sys
import time

import numpy as np
import pytest
from helpers import ROOT
from naive import min_consistent_nodes, min_diagram_objective
from pysat.formula import CNF
from pysat.solvers import Solver

import satdt.sat.diagram.size as sd
from satdt import OptimalTreeClassifier
from satdt.core.errors import DataError, InfeasibleError
from satdt.data import Dataset, from_arrays
from satdt.models.diagram_checks import ErrorObjective, Extensions
from satdt.models.diagram_checks import objective as diagram_objective
from satdt.sat.diagram import (
    DiagramLoop,
    MaxSatRun,
    Names,
    SizeRun,
    compact,
    diagram_cnf,
    encode_diagram_dimacs,
    in_design_units,
    layer_caps,
    minimum_error_diagram,
    minimum_size_diagram,
    tree_skeleton,
)
from satdt.search.diagrams import fit_tree_diagram

PAGE = ROOT / "encodings" / "diagram.md"
SKELETONS = [(1,), (1, 1), (1, 2), (1, 1, 1), (1, 2, 1), (1, 2, 2)]
BLOCK = re.compile(
    r"(?P<open><!-- generated: (?P<name>[\w./-]+) -->\n)(?P<body>.*?)(?P<close><!-- end generated -->)",
    re.S,
)
COUNTS = re.compile(r"<!-- counts -->\n(?P<table>.*?)<!-- end counts -->", re.S)


def _random(seed: int, n: int, m: int, c: int = 2, distinct: bool = True):
    rng = np.random.default_rng(seed)
    B = rng.integers(0, 2, size=(n, m)).astype(np.uint8)
    if distinct:
        B = np.unique(B, axis=0)
    return B, rng.integers(0, c, size=len(B))


def _parity(bits: int) -> tuple[np.ndarray, np.ndarray]:
    B = np.array(list(itertools.product((0, 1), repeat=bits)), dtype=np.uint8)
    return B, B.sum(axis=1) % 2


def _check_consistent(diagram, B, y) -> None:
    assert (diagram.predict_index(B.astype(float)) == y).all()


# ---------------------------------------------------------------------------- against brute force
@pytest.mark.parametrize("seed", range(12))
def test_minimum_size_equals_brute_force(seed: int) -> None:
    widths = SKELETONS[seed % len(SKELETONS)]
    B, y = _random(seed, 6, 3, c=2 + seed % 2)
    expected = min_consistent_nodes(B, y, 3, widths)
    if len(np.unique(y)) == 1:
        expected = 0  # a single terminal, where the skeleton's root would pass every row on
    if expected == np.inf:
        with pytest.raises(InfeasibleError):
            minimum_size_diagram(B, y, 3, widths)
        return
    result = minimum_size_diagram(B, y, 3, widths)
    assert result.proven and result.objective == result.lower_bound == expected
    assert result.diagram.n_splits == expected
    _check_consistent(result.diagram, B, y)


@pytest.mark.parametrize("seed", range(12))
def test_minimum_objective_equals_brute_force(seed: int) -> None:
    widths = SKELETONS[seed % len(SKELETONS)]
    B, y = _random(100 + seed, 6, 3, c=2 + seed % 2, distinct=False)
    alpha = (0.0, 0.05, 0.3, 1.0)[seed % 4]
    weight = None if seed % 3 else np.random.default_rng(seed).integers(1, 4, len(y)) / 2
    expected = min_diagram_objective(B, y, 3, widths, alpha, weight)
    result = minimum_error_diagram(B, y, 3, widths, ErrorObjective(alpha, weight))
    assert result.proven and result.objective == pytest.approx(expected, abs=1e-9)
    assert result.lower_bound == pytest.approx(expected, abs=1e-9)
    assert diagram_objective(result.diagram, B, y, alpha, widths, weight) == pytest.approx(
        expected, abs=1e-9
    )


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12, 36))
def test_more_skeletons_and_rows_against_brute_force(seed: int) -> None:
    widths = SKELETONS[seed % len(SKELETONS)]
    B, y = _random(seed, 7, 3, c=2 + seed % 2, distinct=False)
    alpha = (0.0, 0.02, 0.2)[seed % 3]
    result = minimum_error_diagram(B, y, 3, widths, ErrorObjective(alpha))
    assert result.objective == pytest.approx(
        min_diagram_objective(B, y, 3, widths, alpha), abs=1e-9
    )
    B, y = np.unique(B, axis=0), None
    y = np.random.default_rng(seed).integers(0, 2, len(B))
    expected = 0 if len(np.unique(y)) == 1 else min_consistent_nodes(B, y, 2, widths)
    if expected < np.inf:
        assert minimum_size_diagram(B, y, 2, widths).objective == expected


def test_objective_agrees_with_the_mip_heuristic_and_naive_reference() -> None:
    from satdt.models.diagram_checks import objective

    B, y = _random(7, 6, 3, distinct=False)
    result = minimum_error_diagram(B, y, 2, (1, 2), ErrorObjective(0.1))
    X = B.astype(float)
    assert objective(result.diagram, X, y, 0.1, (1, 2)) == pytest.approx(result.objective)
    assert min_diagram_objective(X, y, 2, (1, 2), 0.1) == pytest.approx(result.objective)


def _smallest_without_symmetry_breaking(B, y, c, widths, upto):
    """The fewest nodes of a consistent diagram by the CNF without (D4)-(D5), None if > upto."""
    for max_splits in range(1, upto + 1):
        cnf = diagram_cnf(B, y, c, widths, max_splits=max_splits)
        clauses = [cl for name, cs in cnf.sections if name not in ("(D4)", "(D5)") for cl in cs]
        with Solver(name="glucose4", bootstrap_with=clauses) as solver:
            if solver.solve():
                _check_consistent(cnf.formula.decode(solver.get_model()), B, y)
                return max_splits
    return None


@pytest.mark.parametrize("seed", range(8))
def test_symmetry_breaking_and_layer_caps_keep_the_optimum(seed: int) -> None:
    # wider skeletons than brute force reaches: the search (with (D4)-(D5) and the layer caps
    # of each bound) against the bare formula (D1)-(D3), (D6)-(D8) with a node limit
    widths = [(1, 2, 3), (1, 2, 4), (1, 2, 2, 2), (1, 2, 4, 3)][seed % 4]
    B, y = _random(300 + seed, 14, 4, c=2 + seed % 2)
    if len(np.unique(y)) == 1:
        pytest.skip("one class")
    try:
        result = minimum_size_diagram(B, y, 2 + seed % 2, widths)
    except InfeasibleError:
        assert _smallest_without_symmetry_breaking(B, y, 2 + seed % 2, widths, sum(widths)) is None
        return
    assert result.proven
    _check_consistent(result.diagram, B, y)
    assert _smallest_without_symmetry_breaking(B, y, 2 + seed % 2, widths, sum(widths)) == (
        result.objective
    )


def test_layer_caps_hold_every_diagram_of_the_bound() -> None:
    assert layer_caps((1, 2, 4, 8, 16, 32), 10) == (1, 2, 4, 4, 4, 4)
    assert layer_caps((1, 2, 4, 8, 16, 32), 17) == (1, 2, 4, 8, 8, 8)
    assert layer_caps((1, 2, 4), 2) == (1, 1, 0)

    # the widths of every diagram of at most N nodes, enumerated layer by layer: layer l + 1
    # holds at most twice layer l
    def widest(N: int) -> tuple[int, ...]:
        out = [0] * 6

        def grow(layers: list[int]) -> None:
            if sum(layers) > N:
                return
            for l, w in enumerate(layers):
                out[l] = max(out[l], w)
            if len(layers) < 6:
                for w in range(1, 2 * layers[-1] + 1):
                    grow([*layers, w])

        grow([1])
        return tuple(out)

    for N in range(1, 12):
        assert layer_caps((1, 2, 4, 8, 16, 32), N) == widest(N)


def _tree_start(B, y, n_classes, depth):
    """The fewest-errors tree of ``depth`` over the binary features, as a diagram."""
    return fit_tree_diagram(B.astype(float), y, None, n_classes, depth, 5.0, simplify=False)[0]


@pytest.mark.parametrize("seed", range(6))
def test_compact_keeps_the_diagram_consistent_and_never_larger(seed: int) -> None:
    B, y = _random(400 + seed, 40, 6, c=2 + seed % 2)
    tree = OptimalTreeClassifier(objective="error", max_depth=6).fit(B.astype(float), y)
    assert tree.result_.objective_value == 0  # the rows have a consistent tree of depth 6
    start = _tree_start(B, y, 2 + seed % 2, 6)
    # a consistent start (of any size: trees of equal error may differ in size, and which one
    # a time-sliced search returns first depends on the machine's load)
    assert start is not None and np.array_equal(start.predict(B.astype(float)), y)
    small = compact(start, B, y, 2 + seed % 2)
    _check_consistent(small, B, y)
    assert 1 <= small.n_splits <= start.n_splits
    assert len(small.widths) <= len(start.widths)
    assert all(a <= b for a, b in zip(small.widths, start.widths, strict=False))
    B3, y3 = _parity(3)  # the tree of 3-bit parity shares its subtrees: 7 nodes become 5
    tree3 = _tree_start(B3, y3, 2, 3)
    assert tree3.n_splits == 7 and compact(tree3, B3, y3, 2).n_splits == 5


# ---------------------------------------------------------------------------- against trees
@pytest.mark.parametrize("seed", range(6))
def test_tree_skeleton_diagram_never_larger_than_the_smallest_tree(seed: int) -> None:
    B, y = _random(200 + seed, 14, 5)
    depth = 4
    try:
        tree = OptimalTreeClassifier(objective="size", max_depth=depth).fit(B.astype(float), y)
    except InfeasibleError:
        pytest.skip("no consistent tree within the depth")
    tree_internal = (tree.tree_.n_nodes - 1) // 2  # trees count leaves too
    result = minimum_size_diagram(B, y, 2, tree_skeleton(depth))
    assert result.widths == (1, 2, 4, 8)
    assert result.proven and result.objective <= tree_internal
    _check_consistent(result.diagram, B, y)


def test_parity_diagram_is_strictly_smaller_than_the_tree() -> None:
    B, y = _parity(3)
    tree = OptimalTreeClassifier(objective="size", max_depth=3).fit(B.astype(float), y)
    result = minimum_size_diagram(B, y, 2, tree_skeleton(3))
    assert (tree.tree_.n_nodes - 1) // 2 == 7
    assert result.proven and result.objective == 5
    assert result.diagram.widths == (1, 2, 2)


# ---------------------------------------------------------------------------- incremental loop
def test_examples_join_the_same_solver() -> None:
    B, y = _parity(4)
    with DiagramLoop(B, y, 2, (1, 2, 2, 2)) as loop:
        solver = loop.solver
        clauses = loop.n_clauses
        assert loop.included == []
        status, diagram = loop.run()
        assert status == "SAT" and loop.solver is solver
        assert 0 < len(loop.included) < len(y)  # not every row was needed
        assert loop.n_clauses > clauses and loop.calls > 1
        _check_consistent(diagram, B, y)
        loop.add_counter(6)
        assert loop.run(max_splits=6)[0] == "UNSAT"  # 4-bit parity needs 7 nodes
        assert loop.run(max_splits=7)[0] == "SAT"


def test_time_limit_returns_the_best_diagram_not_proven(monkeypatch) -> None:
    B, y = _parity(4)
    real = sd.solve_until
    seen = {"sat": 0}

    def stop_after_first_diagram(solver, name, assumptions, deadline):
        if seen["sat"]:
            return None  # as when the deadline passes
        status = real(solver, name, assumptions, deadline)
        if status:
            model = solver.get_model()
            diagram = loop_formula[0].decode(model)
            if (diagram.predict_index(B.astype(float)) == y).all():
                seen["sat"] = 1
        return status

    loop_formula = []
    original = sd.DiagramLoop.__init__

    def remember(self, *args, **kwargs):
        original(self, *args, **kwargs)
        loop_formula.append(self.formula)

    monkeypatch.setattr(sd, "solve_until", stop_after_first_diagram)
    monkeypatch.setattr(sd.DiagramLoop, "__init__", remember)
    result = minimum_size_diagram(B, y, 2, (1, 2, 4, 4))
    assert not result.proven and result.lower_bound < result.objective
    _check_consistent(result.diagram, B, y)


def test_the_last_share_of_the_time_raises_the_lower_bound(monkeypatch) -> None:
    B, y = _parity(4)
    asked = []
    real = sd.DiagramLoop.run

    def spy(self, max_splits=None):
        asked.append(max_splits)
        return real(self, max_splits)

    monkeypatch.setattr(sd.DiagramLoop, "run", spy)
    monkeypatch.setattr(sd, "LOWER_SHARE", 1.0)  # the descent gets no time
    result = minimum_size_diagram(B, y, 2, (1, 2, 4, 4), SizeRun(deadline=time.perf_counter() + 30))
    assert result.proven and result.objective == result.lower_bound == 7
    _check_consistent(result.diagram, B, y)
    # the first diagram (no bound), the descent cut at once, then the bounds rise from 1
    assert asked[0] is None and asked[2:] == list(range(1, asked[1] + 1))


def test_time_limits_without_a_diagram() -> None:
    B, y = _parity(4)
    with pytest.raises(InfeasibleError, match="time limit"):
        minimum_size_diagram(B, y, 2, (1, 2, 2, 2), SizeRun(deadline=time.perf_counter()))
    result = minimum_error_diagram(
        B, y, 2, (1, 2, 2, 2), ErrorObjective(0.1), run=MaxSatRun(deadline=time.perf_counter())
    )
    assert not result.proven and result.objective == 0.5 and result.lower_bound <= 0.5


def test_maxsat_time_limit_interrupts_rc2() -> None:
    B, y = _random(5, 200, 10, c=3, distinct=False)
    result = minimum_error_diagram(
        B,
        y,
        3,
        (1, 2, 3, 3),
        ErrorObjective(0.01),
        run=MaxSatRun(deadline=time.perf_counter() + 0.5),
    )
    assert result.runtime < 10
    assert result.lower_bound <= result.objective + 1e-12
    majority = np.bincount(y, minlength=3).max() / len(y)
    assert result.objective <= 1 - majority + 1e-12  # never worse than the majority terminal


# ---------------------------------------------------------------------------- edge cases
def test_single_class_and_bad_input() -> None:
    B, _ = _parity(2)
    result = minimum_size_diagram(B, np.zeros(4, int), 2, (1, 2))
    assert result.objective == 0 and result.diagram.n_splits == 0 and result.proven
    with pytest.raises(DataError):
        minimum_size_diagram(B, np.zeros(4, int), 2, (2, 2))
    with pytest.raises(DataError, match="max_depth"):
        minimum_size_diagram(B, np.zeros(4, int), 2, tree_skeleton(0))
    with pytest.raises(DataError, match="alpha"):
        minimum_error_diagram(B, np.zeros(4, int), 2, (1, 2), ErrorObjective(-1.0))
    with pytest.raises(InfeasibleError, match="different labels"):
        minimum_size_diagram(np.vstack([B, B[:1]]), np.array([0, 1, 1, 0, 1]), 2, (1, 2))
    assert tree_skeleton(5, 3) == (1, 2, 3, 3, 3)


def test_every_group_of_maxsat_options_reaches_the_search() -> None:
    """The extensions bound the diagram, the run's hook hears of every incumbent, the names
    label the result: none of the option objects is dropped on the way."""
    B, y = _parity(3)
    heard: list[float] = []
    result = minimum_error_diagram(
        B,
        y,
        2,
        (1, 2, 2),
        ErrorObjective(0.0),
        Extensions(max_splits=1),
        MaxSatRun(on_improve=lambda diagram, value: heard.append(value)),
        Names(classes=["no", "yes"], feature_names=["a", "b", "c"]),
    )
    assert result.proven and result.diagram.n_splits <= 1
    assert result.objective == pytest.approx(0.5)  # parity: one split leaves half wrong
    assert heard and heard[-1] == pytest.approx(result.objective)
    assert list(result.diagram.classes) == ["no", "yes"]
    assert list(result.diagram.feature_names) == ["a", "b", "c"]
    unbounded = minimum_error_diagram(B, y, 2, (1, 2, 2), ErrorObjective(0.0))
    assert unbounded.objective == 0.0 and unbounded.diagram.n_splits > 1
    assert Extensions(max_splits=1).used() == ["max_splits"] and Extensions().used() == []
    assert Extensions(min_flow=2.0).as_dict() == {
        "max_splits": None,
        "min_flow": 2.0,
        "fairness": None,
    }


def test_merged_rows_and_design_units() -> None:
    B, y = _parity(2)
    B2, y2 = np.vstack([B, B]), np.concatenate([y, 1 - y[:1], y[1:]])
    result = minimum_error_diagram(B2, y2, 2, (1, 2), ErrorObjective(0.0))
    assert result.examples == 4 and result.objective == pytest.approx(1 / 8)
    column, threshold = np.array([2, 0]), np.array([1.5, 3.0])
    design = in_design_units(result.diagram, column, threshold, ["a", "b", "c"])
    X = np.column_stack([3 + 2 * B[:, 1], np.zeros(4), 1 + B[:, 0]]).astype(float)
    assert (design.predict_index(X) == result.diagram.predict_index(B.astype(float))).all()


# ---------------------------------------------------------------------------- CNF and the page
def _dataset(B: np.ndarray, y: np.ndarray) -> Dataset:
    design, schema, labels = from_arrays(B.astype(float), y)
    return Dataset(design, labels, schema, np.arange(2, len(y) + 2), None)


def _header_counts(text: str) -> dict[str, int]:
    counts = {}
    for line in text.splitlines():
        if re.match(r"c (variables|clauses): \d+ = ", line):
            what, rest = line[2:].split(":", 1)
            total, parts = rest.split("=", 1)
            counts[what] = int(total)
            for part in parts.split(" + "):
                key, value = part.strip().rsplit(" ", 1)
                counts[key] = int(value)
    p = next(line for line in text.splitlines() if line.startswith("p cnf")).split()
    assert counts["variables"] == int(p[2]) and counts["clauses"] == int(p[3])
    assert len(CNF(from_string=text).clauses) == counts["clauses"]
    return counts


def _page_formulas() -> dict[str, str]:
    formulas = {}
    for table in COUNTS.finditer(PAGE.read_text()):
        for row in table.group("table").splitlines():
            cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
            if len(cells) >= 2 and cells[-1].startswith("`") and cells[0] not in ("---", ""):
                formulas[cells[0].strip("`")] = cells[-1].strip("`")
    return formulas


def test_page_size_formulas_equal_the_cnf_counts() -> None:
    formulas = _page_formulas()
    assert {"F", "A", "Lo", "Hi", "R", "V", "G", "variables", "clauses"} <= set(formulas)
    assert {f"(D{i})" for i in range(1, 9)} <= set(formulas)
    for seed, widths in enumerate([(1,), (1, 2), (1, 1, 1), (1, 2, 3), (1, 2, 4, 2), (1, 2, 4, 8)]):
        for m, c in ((1, 2), (2, 3), (4, 2)):
            B, y = _random(seed, 9, m, c, distinct=False)
            cnf = diagram_cnf(B, y, c, widths)
            counts = {**dict(cnf.var_counts), **{k: len(v) for k, v in cnf.sections}}
            counts.update(variables=cnf.n_vars, clauses=len(cnf.clauses()))
            P = sum(a * b for a, b in itertools.pairwise(widths))
            scope = {"n": len(B), "m": m, "c": c, "S": sum(widths), "D": len(widths), "P": P}
            scope["T"] = widths[-1]
            for key, expression in formulas.items():
                assert eval(expression, {}, scope) == counts[key], (key, expression, scope)


def test_dimacs_header_counts_the_formula() -> None:
    text = _xor_text(max_splits=4)
    counts = _header_counts(text)
    assert counts["(D9)"] > 0 and counts["H"] > 0
    legend = [line for line in text.splitlines() if re.match(r"c \d+ ", line)]
    assert len(legend) == counts["variables"]


def test_cnf_models_decode_to_consistent_diagrams_and_bounds_hold() -> None:
    B, y = _parity(3)
    for max_splits, expected in ((4, False), (5, True), (None, True)):
        cnf = diagram_cnf(B, y, 2, (1, 2, 2), max_splits=max_splits)
        with Solver(name="glucose4", bootstrap_with=cnf.clauses()) as solver:
            assert solver.solve() == expected
            if expected:
                diagram = cnf.formula.decode(solver.get_model())
                _check_consistent(diagram, B, y)
                assert max_splits is None or diagram.n_splits <= max_splits
        assert set(cnf.legend) == set(range(1, cnf.n_vars + 1))


# the worked example of the page: 3-bit parity with a noise-free label
def block_xor_data() -> str:
    B, y = _parity(3)
    lines = ["x0,x1,x2,odd"] + [
        ",".join(map(str, [*row, label])) for row, label in zip(B, y, strict=True)
    ]
    return "```text\n" + "\n".join(lines) + "\n```\n"


def _xor_text(max_splits: int | None = None) -> str:
    B, y = _parity(3)
    return encode_diagram_dimacs(_dataset(B, y), (1, 2, 2), max_splits=max_splits)


def block_xor_header() -> str:
    lines = _xor_text().splitlines()
    head = lines[: lines.index("c variables:")]
    row = [line for line in lines if "example=0 " in line]
    return "```text\n" + "\n".join([*head, "c ...", *row, "c ..."]) + "\n```\n"


def block_xor_row() -> str:
    B, y = _parity(3)
    cnf = diagram_cnf(B, y, 2, (1, 2, 2))
    sections = cnf.formula.example_sections(0, B[0], {1: 0})
    out = []
    for name, clauses in sections:
        out.append(f"{name}: {len(clauses)} clauses")
        for clause in clauses[:6]:
            meaning = " OR ".join(
                ("" if lit > 0 else "NOT ") + cnf.legend[abs(lit)].split(" : ")[1] for lit in clause
            )
            out.append(f"  {' '.join(map(str, clause))} 0    {meaning}")
        out.append("  ...")
    return "```text\n" + "\n".join(out) + "\n```\n"


def block_xor_answers() -> str:
    rows = [
        "| max_splits | variables | clauses | glucose 4 | decoded diagram |",
        "|---|---|---|---|---|",
    ]
    B, y = _parity(3)
    for max_splits in (4, 5):
        cnf = diagram_cnf(B, y, 2, (1, 2, 2), max_splits=max_splits)
        with Solver(name="glucose4", bootstrap_with=cnf.clauses()) as solver:
            if solver.solve():
                d = cnf.formula.decode(solver.get_model())
                answer, shape = "SAT", f"{d.n_splits} nodes, widths {list(d.widths)}"
            else:
                answer, shape = "UNSAT", "none"
        rows.append(f"| {max_splits} | {cnf.n_vars} | {cnf.n_clauses} | {answer} | {shape} |")
    return "\n".join(rows) + "\n"


def block_xor_diagram() -> str:
    B, y = _parity(3)
    result = minimum_size_diagram(
        B, y, 2, tree_skeleton(3), names=Names(feature_names=["x0", "x1", "x2"])
    )
    tree = OptimalTreeClassifier(objective="size", max_depth=3).fit(B.astype(float), y)
    return (
        "```text\n"
        + result.diagram.export_text().rstrip()
        + "\n```\n\n"
        + f"minimum_size_diagram(widths=tree_skeleton(3)): {result.objective} internal nodes, proven "
        f"{result.proven}, {result.sat_calls} SAT calls, {result.examples} of 8 rows encoded; "
        f"the smallest tree: {(tree.tree_.n_nodes - 1) // 2} internal nodes.\n"
    )


def block_xor_maxsat() -> str:
    B, y = _parity(3)
    rows = ["| skeleton | alpha | objective (18) | errors | nodes |", "|---|---|---|---|---|"]
    for widths, alpha in (((1, 2, 2), 0.1), ((1, 2, 2), 1.0), ((1, 1, 1), 0.1), ((1, 2), 0.1)):
        r = minimum_error_diagram(B, y, 2, widths, ErrorObjective(alpha))
        errors = int((r.diagram.predict_index(B.astype(float)) != y).sum())
        rows.append(
            f"| {list(widths)} | {alpha} | {r.objective:.4f} | {errors} of 8 | {r.diagram.n_splits} |"
        )
    return "\n".join(rows) + "\n"


BLOCKS = {
    "diagram-xor-data": block_xor_data,
    "diagram-xor-header": block_xor_header,
    "diagram-xor-row": block_xor_row,
    "diagram-xor-answers": block_xor_answers,
    "diagram-xor-diagram": block_xor_diagram,
    "diagram-xor-maxsat": block_xor_maxsat,
}


def test_page_blocks_are_current() -> None:
    text = PAGE.read_text()
    names = [match.group("name") for match in BLOCK.finditer(text)]
    assert sorted(names) == sorted(BLOCKS)
    for match in BLOCK.finditer(text):
        assert match.group("body") == BLOCKS[match.group("name")](), (
            f"encodings/diagram.md: block {match.group('name')!r} is stale; run "
            "`python tests/sat/test_sat_diagram.py --write`"
        )


def write() -> None:
    """Regenerate the generated blocks of encodings/diagram.md in place."""
    text = PAGE.read_text()
    PAGE.write_text(
        BLOCK.sub(lambda m: m.group("open") + BLOCKS[m.group("name")]() + m.group("close"), text)
    )


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/sat/test_sat_diagram.py --write")
    write()


def _soybean_consistent_100(data_dir) -> tuple[np.ndarray, np.ndarray]:
    """100 rows (seed 0) of CP4IM soybean whose feature vector carries one label."""
    table = np.loadtxt(data_dir / "cp4im" / "soybean.txt", dtype=np.uint8, ndmin=2)
    B, y = np.ascontiguousarray(table[:, 1:]), table[:, 0].astype(np.int64)
    labels: dict[bytes, set[int]] = {}
    for row, label in zip(B, y, strict=True):
        labels.setdefault(row.tobytes(), set()).add(int(label))
    keep = np.array([len(labels[row.tobytes()]) == 1 for row in B])
    chosen = np.sort(np.random.default_rng(0).choice(int(keep.sum()), 100, replace=False))
    return B[keep][chosen], y[keep][chosen]


# objective (18) of soybean's subset above on (1, 2, 2), alpha 0.01: proven by the slow test
SOYBEAN_OPTIMUM = 0.05


# seconds of work: in the full suite, not the quick loop
@pytest.mark.slow
def test_a_stopped_maxsat_search_keeps_a_valid_bound_and_its_time_limit(data_dir) -> None:
    """RC2 stopped by the clock: its bound never passes the optimum, and it stops near the
    limit. It used to process the interrupted call's unproven core (a bound of 0.12-0.13 here)
    and minimise it with more oracle calls (9.7 s for a 5 s limit)."""
    import time

    B, y = _soybean_consistent_100(data_dir)
    for cap in (2.0, 5.0):
        began = time.perf_counter()
        stopped = minimum_error_diagram(
            B,
            y,
            2,
            (1, 2, 2),
            ErrorObjective(0.01),
            run=MaxSatRun(deadline=time.perf_counter() + cap),
        )
        # the old fault went 4.7 s past a 5 s limit; 3 s leaves room for a loaded machine
        assert time.perf_counter() - began < cap + 3.0
        assert stopped.lower_bound <= SOYBEAN_OPTIMUM + 1e-12 <= stopped.objective + 1e-12


@pytest.mark.slow
def test_soybean_optimum_behind_the_stopped_search_test(data_dir) -> None:
    B, y = _soybean_consistent_100(data_dir)
    result = minimum_error_diagram(B, y, 2, (1, 2, 2), ErrorObjective(0.01))
    assert result.proven and result.objective == pytest.approx(SOYBEAN_OPTIMUM)
