"""CNF out and back: encode_dimacs -> a SAT solver -> read_solution / decode_dimacs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT
from pysat.formula import CNF
from pysat.solvers import Solver

from satdt import read_csv
from satdt.core.errors import ContradictionError, DataError
from satdt.data import Dataset, from_arrays
from satdt.sat.dimacs import decode_dimacs, encode_dimacs, read_solution

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it

EXAMPLES = ROOT / "examples" / "data"
# (file, minimum depth): the depth below which the formula is UNSAT
MIN_DEPTH = {"tiny.csv": 2, "mouse.csv": 4}


def dataset(name: str) -> Dataset:
    return read_csv(EXAMPLES / name)


def solve(text: str, solver: str = "glucose4") -> list[int] | None:
    cnf = CNF(from_string=text)
    with Solver(name=solver, bootstrap_with=cnf.clauses) as s:
        return s.get_model() if s.solve() else None


def as_format(model: list[int] | None, fmt: str) -> str:
    """A model written as a solver would: competition, MiniSat result file or bare literals."""
    if fmt == "competition":
        if model is None:
            return "c a comment\ns UNSATISFIABLE\n"
        # several v lines, as real solvers wrap them
        chunks = [model[i : i + 10] for i in range(0, len(model), 10)]
        v_lines = "".join("v " + " ".join(map(str, c)) + "\n" for c in chunks)
        return "c solved\ns SATISFIABLE\n" + v_lines + "v 0\n"
    if fmt == "minisat":
        return "UNSAT\n" if model is None else "SAT\n" + " ".join(map(str, model)) + " 0\n"
    assert model is not None
    return "\n".join(" ".join(map(str, model[i : i + 7])) for i in range(0, len(model), 7))


def check_consistent(tree, data: Dataset) -> None:
    assert np.array_equal(tree.predict(data.X), data.y)


@pytest.mark.parametrize("solver", ["glucose4", "minisat22", "cadical195"])
@pytest.mark.parametrize("fmt", ["competition", "minisat", "bare"])
@pytest.mark.parametrize("name", sorted(MIN_DEPTH))
def test_round_trip_at_minimum_depth(name: str, fmt: str, solver: str) -> None:
    data = dataset(name)
    depth = MIN_DEPTH[name]
    text = encode_dimacs(data, depth)
    model = solve(text, solver)
    assert model is not None
    tree = decode_dimacs(text, as_format(model, fmt))
    check_consistent(tree, data)
    assert tree.depth == depth
    assert list(tree.feature_names) == data.feature_names
    assert set(tree.classes.tolist()) == set(np.unique(data.y).tolist())


@pytest.mark.parametrize("fmt", ["competition", "minisat"])
@pytest.mark.parametrize("name", sorted(MIN_DEPTH))
def test_below_the_minimum_depth_is_unsat(name: str, fmt: str) -> None:
    data = dataset(name)
    text = encode_dimacs(data, MIN_DEPTH[name] - 1)
    assert solve(text) is None
    with pytest.raises(DataError, match=r"unsatisfiable: no tree of depth \d"):
        decode_dimacs(text, as_format(None, fmt))


def test_deeper_formulas_decode_to_consistent_trees() -> None:
    data = dataset("tiny.csv")
    for depth in (3, 4):
        text = encode_dimacs(data, depth)
        tree = decode_dimacs(text, as_format(solve(text), "bare"))
        check_consistent(tree, data)
        assert tree.depth <= depth


def test_node_limit_mouse() -> None:
    data = dataset("mouse.csv")
    sat = encode_dimacs(data, 4, max_nodes=15)
    assert "c clauses:" in sat and "(7)" in sat and "(10) 2" in sat
    tree = decode_dimacs(sat, as_format(solve(sat), "competition"))
    check_consistent(tree, data)
    assert tree.n_nodes <= 15
    unsat = encode_dimacs(data, 4, max_nodes=13)
    assert solve(unsat) is None
    with pytest.raises(DataError, match="at most 13 nodes"):
        decode_dimacs(unsat, "s UNSATISFIABLE\n")


def test_node_limit_tiny() -> None:
    data = dataset("tiny.csv")
    text = encode_dimacs(data, 3, max_nodes=5)
    tree = decode_dimacs(text, as_format(solve(text), "minisat"))
    check_consistent(tree, data)
    assert tree.n_nodes == 5
    assert solve(encode_dimacs(data, 3, max_nodes=4)) is None  # L = 2 leaves: 3 nodes


def test_output_is_deterministic_and_names_every_variable() -> None:
    data = dataset("tiny.csv")
    text = encode_dimacs(data, 2, max_nodes=5)
    assert text == encode_dimacs(dataset("tiny.csv"), 2, max_nodes=5)
    cnf = CNF(from_string=text)
    described = {
        int(line.split()[1])
        for line in text.splitlines()
        if line[:2] == "c " and line.split()[1].isdigit()
    }
    assert described == set(range(1, cnf.nv + 1))
    assert 'c 1 F node=1 feature=0 : node 1 tests "outlook == rainy"' in text
    assert "X line=2 level=0 : the row on line 2 goes right at depth 0" in text
    assert str(EXAMPLES) not in text  # no machine path, only the file name
    assert "tiny.csv" in text


def test_duplicate_rows_are_encoded_once() -> None:
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 1]], dtype=float)
    design, schema, y = from_arrays(X, [0, 1, 1, 0, 0])
    data = Dataset(design, y, schema, np.arange(1, 6), None)
    text = encode_dimacs(data, 2)
    assert "4 distinct" in text
    tree = decode_dimacs(text, as_format(solve(text), "bare"))
    check_consistent(tree, data)


def test_encode_errors() -> None:
    data = dataset("tiny.csv")
    with pytest.raises(DataError, match="depth must be an integer"):
        encode_dimacs(data, -1)
    with pytest.raises(DataError, match="max_nodes must be an integer >= 3"):
        encode_dimacs(data, 2, max_nodes=1)
    design, schema, y = from_arrays(np.array([[0.0], [0.0]]), ["a", "b"])
    with pytest.raises(ContradictionError):
        encode_dimacs(Dataset(design, y, schema, np.arange(1, 3), None), 2)
    design, schema, y = from_arrays(np.array([[1.0], [1.0]]), ["a", "a"])
    with pytest.raises(DataError, match="use depth 0"):
        encode_dimacs(Dataset(design, y, schema, np.arange(1, 3), None), 1)
    single = encode_dimacs(Dataset(design, y, schema, np.arange(1, 3), None), 0)
    assert decode_dimacs(single, "1 0").export_text() == "class: a"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("s SATISFIABLE\nv 1 -2\nv 3 0\n", [1, -2, 3]),
        ("c comment\ns UNSATISFIABLE\n", None),
        ("SAT\n1 -2 3 0\n", [1, -2, 3]),
        ("UNSAT\n", None),
        ("1 -2 3 0", [1, -2, 3]),
        ("1 -2\n3", [1, -2, 3]),
    ],
)
def test_read_solution_formats(text: str, expected: list[int] | None) -> None:
    assert read_solution(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("s SATISFIABLE\nv 1 2\n", "do not end with 0"),
        ("s SATISFIABLE\nv 1 2 0\nhello\n", "starts with neither"),
        ("s MAYBE\n", "unknown status"),
        ("s UNKNOWN\n", "gave no answer"),
        ("v 1 2 0\n", "without an 's SATISFIABLE'"),
        ("s SATISFIABLE\ns SATISFIABLE\nv 0\n", "more than one"),
        ("SAT\n1 x 0\n", "not an integer"),
        ("SAT\n", "do not end with 0"),
        ("INDET\n", "gave no answer"),
        ("1 0 2", "before the last"),
        ("1 -1 0", "both true and false"),
        ("0", "no literals"),
    ],
)
def test_read_solution_rejects_malformed_text(text: str, message: str) -> None:
    with pytest.raises(DataError, match=message):
        read_solution(text)


def test_decode_rejects_wrong_solutions() -> None:
    data = dataset("tiny.csv")
    text = encode_dimacs(data, 2)
    cnf = CNF(from_string=text)
    everything_false = " ".join(str(-v) for v in range(1, cnf.nv + 1)) + " 0"
    with pytest.raises(DataError, match=r"does not satisfy clause 1 .*F node=1 feature=0"):
        decode_dimacs(text, everything_false)
    model = solve(text)
    flipped = [-lit if abs(lit) == 18 else lit for lit in model]  # route line 2 the other way
    with pytest.raises(DataError, match="does not satisfy clause"):
        decode_dimacs(text, as_format(flipped, "bare"))
    with pytest.raises(DataError, match="only 27 variables"):
        decode_dimacs(text, as_format([*model, 99], "bare"))


def test_decode_rejects_foreign_or_damaged_cnf() -> None:
    with pytest.raises(DataError, match="not written by 'satdt encode'"):
        decode_dimacs("p cnf 2 1\n1 2 0\n", "1 2 0")
    text = encode_dimacs(dataset("tiny.csv"), 2)
    with pytest.raises(DataError, match="damaged"):
        decode_dimacs(text.rsplit("\n", 2)[0] + "\n", "1 0")


def _external_solver() -> list[str] | None:
    for name in ("minisat", "picosat"):
        if shutil.which(name):
            return [name]
    return None


@pytest.mark.skipif(
    _external_solver() is None,
    reason="no command-line SAT solver on PATH: install Debian's 'minisat' or 'picosat'",
)
@pytest.mark.parametrize("depth", [3, 4])
def test_round_trip_with_an_external_solver(tmp_path: Path, depth: int) -> None:
    data = dataset("mouse.csv")
    cnf_path = tmp_path / "formula.cnf"
    cnf_path.write_text(encode_dimacs(data, depth))
    for name in ("minisat", "picosat"):
        if not shutil.which(name):
            continue
        out = tmp_path / f"{name}.txt"
        if name == "minisat":
            done = subprocess.run(
                [name, "-verb=0", str(cnf_path), str(out)], capture_output=True, check=False
            )
            solution = out.read_text()
        else:
            done = subprocess.run([name, str(cnf_path)], capture_output=True, check=False)
            solution = done.stdout.decode()
        assert done.returncode == (10 if depth == 4 else 20)  # SAT / UNSAT exit codes
        if depth == 4:
            tree = decode_dimacs(cnf_path.read_text(), solution)
            check_consistent(tree, data)
            assert tree.depth == 4
        else:
            with pytest.raises(DataError, match="unsatisfiable"):
                decode_dimacs(cnf_path.read_text(), solution)
