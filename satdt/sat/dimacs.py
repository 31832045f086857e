"""The perfect-tree formula as a DIMACS CNF file, and a solver's model back as a tree.

For teaching and for using any SAT solver: :func:`encode_dimacs` writes the *whole* formula
of Avellaneda (AAAI 2020) for a dataset and a depth -- formulas (1)-(6) for every distinct
row, and with a node limit the labelled-leaf counter (7)-(10) -- with no incremental loop,
and a comment line giving the meaning of every variable in the user's terms.
:func:`read_solution` reads what a solver prints, and :func:`decode_dimacs` turns a model
into a :class:`~satdt.Tree` using nothing but the CNF file and the solution.

The formulas, the exact variable and clause counts and a fully worked example are in
``encodings/perfect-tree.md`` and ``encodings/node-counter.md`` (symbols:
``encodings/README.md``). The comment lines of a file look like::

    c 17 F node=3 feature=5 : node 3 tests "petal_length > 2.45"
    c 40 C leaf=2 class=0 : leaf 2 predicts "setosa"
    c 55 X line=12 level=1 : the row on line 12 goes right at depth 1

followed by ``c satdt-decode {...}`` lines (JSON) that :func:`decode_dimacs` reads: the
depth, the design columns, each binary feature's column and threshold, each class's label.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pysat.formula import IDPool

from ..core.errors import DataError
from ..data import Dataset
from ..models.tree import DEFAULT_LEFT, Tree
from ..prepare.prepared import prepare_consistent
from ..task.result import Recorder
from .counter import SequentialCounter, labelled_leaf_vars
from .perfect import (
    Clauses,
    PerfectTreeVars,
    example_clauses,
    one_feature_clauses,
    some_feature_clauses,
    tree_vars,
)
from .problem import Problem

FORMAT = "satdt-cnf"
VERSION = 1
_RECORD = "c satdt-decode "
# Memory budget of the binary features, as the estimator's default: beyond it the formula
# would have millions of clauses anyway.
_MEMORY_MB = 1024
_LEGEND = re.compile(r"^c (\d+) ([A-Z]) ((?:\w+=\d+ ?)*): ")


def _json(value: Any) -> str:
    """Compact, ASCII-only JSON of a plain value (a NumPy scalar becomes a Python one)."""
    if isinstance(value, np.generic):
        value = value.item()
    return json.dumps(value)


# ---------------------------------------------------------------------------- encoding
def encode_dimacs(dataset: Dataset, depth: int, *, max_nodes: int | None = None) -> str:
    """The DIMACS CNF whose models are the perfect trees of depth ``depth`` consistent with the data.

    The data are binarised exactly as :class:`~satdt.OptimalTreeClassifier` does (every
    threshold ``x[c] > t`` between consecutive values, one-hot categories, then duplicate,
    complementary and constant features dropped), identical rows are kept once, and the
    formula holds (1)-(2) once and (3)-(6) for every distinct row (formula (2) as the paper's
    pairwise "at most one feature per node"). A satisfying assignment exists iff some tree of
    depth at most ``depth`` classifies every row correctly.

    Parameters
    ----------
    dataset
        A labelled table, e.g. from :func:`satdt.read_csv`.
    depth
        Depth of the perfect tree (0 = a single leaf).
    max_nodes
        Also require at most this many nodes (internal + leaves): adds formulas (7)-(10)
        bounding the labelled leaves by L = floor((max_nodes + 1) / 2), capped at 2^depth
        (Theorem 2 of the paper; a tree with L leaves has 2L - 1 nodes).

    Returns
    -------
    str
        The DIMACS text: a header comment (data, depth, variable and clause counts per
        formula), one comment per variable giving its meaning, the ``c satdt-decode`` lines
        that :func:`decode_dimacs` reads, then ``p cnf V C`` and the clauses. The same
        inputs always give the same text.

    Raises
    ------
    DataError
        No labels, contradictory rows (no consistent tree exists at any depth), a bad depth or
        node limit, or no usable feature when ``depth >= 1``.
    """
    _check_int("depth", depth, 0)
    if max_nodes is not None:
        _check_int("max_nodes", max_nodes, 3)
    if dataset.y is None:
        raise DataError(
            "the data has no label column: encoding needs the class of every row; "
            "give a labelled file"
        )
    data = prepare_consistent(dataset, Recorder("depth"), max_memory_mb=_MEMORY_MB)
    view = data.binary()
    classes = data.classes
    problem = Problem.from_data(view.B, data.y, len(classes), classes)
    feature_names = view.names
    names = data.feature_names
    indicator = sorted(int(i) for i in data.schema.indicator)
    n, m = problem.B.shape
    if m == 0 and depth >= 1:
        raise DataError(
            f"every binary feature is constant on these rows (there are {n} distinct rows), "
            f"so no node can test anything: the only tree is a single leaf; use depth 0"
        )
    lines_of_rows = data.line_numbers[problem.rows]

    pool = IDPool()
    tv = tree_vars(pool, depth, m, len(classes))
    sections, counter, bound = _sections(pool, tv, problem, max_nodes)

    var_counts = [("F", tv.F.size), ("C", tv.C.size), ("X", n * depth)]
    if counter is not None:
        var_counts += [("U", counter.n), ("H", counter.n_vars)]
    n_clauses = sum(len(c) for _, c in sections)
    source = "the data" if dataset.source is None else Path(dataset.source).name
    out: list[str] = []
    add = out.append
    limit = "" if max_nodes is None else f" and at most {max_nodes} nodes"
    add(f"c satdt encode: decision trees of depth at most {depth}{limit} that classify")
    add(f"c every row of {source} correctly, as a perfect tree of depth {depth}")
    add("c (Avellaneda, AAAI 2020); formulas and counts: encodings/perfect-tree.md")
    if max_nodes is not None:
        add(f"c and encodings/node-counter.md (at most L = {bound} leaves carry a class)")
    add(
        f"c data: {len(data.y)} rows ({n} distinct), {data.X.shape[1]} design columns, "
        f"{m} binary features, {len(classes)} classes"
    )
    add(f"c depth: {depth} ({tv.n_internal} internal nodes, {tv.n_leaves} leaves)")
    add(f"c variables: {pool.top} = " + " + ".join(f"{kind} {count}" for kind, count in var_counts))
    add(f"c clauses: {n_clauses} = " + " + ".join(f"{name} {len(c)}" for name, c in sections))
    add("c")
    add("c Internal nodes are numbered 1.. breadth-first: node q has children 2q (left) and")
    add("c 2q+1 (right). A node tests one binary feature; a row for which the feature is true")
    add("c goes right. The root is at depth 0.")
    add("c Leaves are numbered 0.. from the left; read in binary (k bits), a leaf's number")
    add("c is its path from the root (1 = right). Rows are named by their line in the file.")
    add("c binary features:")
    for a, name in enumerate(feature_names):
        add(f"c   feature {a}: {_json(name)}")
    add("c classes:")
    for c, label in enumerate(classes):
        add(f"c   class {c}: {_json(str(label))}")
    add("c")
    add("c variables:")
    out += _variable_comments(pool, tv, feature_names, classes, lines_of_rows, counter, bound)
    add("c")
    add("c read by satdt decode:")
    out += _records(depth, max_nodes, source, names, indicator, view)
    out += [_RECORD + _json({"class": c, "label": label.item()}) for c, label in enumerate(classes)]
    add(f"p cnf {pool.top} {n_clauses}")
    for _, clauses in sections:
        out.extend(" ".join(map(str, clause)) + " 0" for clause in clauses)
    return "\n".join(out) + "\n"


def _sections(
    pool: IDPool, tv: PerfectTreeVars, problem: Problem, max_nodes: int | None
) -> tuple[list[tuple[str, Clauses]], SequentialCounter | None, int | None]:
    """The clauses by formula: (1)-(6) over every distinct row, then (7)-(10) with
    ``max_nodes``; also the leaf counter and its bound L (None without ``max_nodes``)."""
    m = problem.B.shape[1]
    sections: list[tuple[str, Clauses]] = [
        ("(1)", some_feature_clauses(tv)),
        ("(2)", one_feature_clauses(tv, "pairwise")),
    ]
    routing: Clauses = []
    leaves: Clauses = []
    n_routing = tv.n_internal * m
    for i in range(len(problem.B)):
        clauses = example_clauses(tv, i, problem.B[i], int(problem.y[i]))
        routing.extend(clauses[:n_routing])
        leaves.extend(clauses[n_routing:])
    sections += [("(3)-(4)", routing), ("(5)-(6)", leaves)]
    bound = None
    counter = None
    if max_nodes is not None:
        bound = min((max_nodes + 1) // 2, tv.n_leaves)
        U, clauses7 = labelled_leaf_vars(pool, tv.C)
        counter = SequentialCounter(pool, U, bound)
        bound_clause = [[literal] for literal in counter.at_most(bound)]
        sections += [
            ("(7)", clauses7),
            ("(8)", counter.formulas["(8)"]),
            ("(9)", counter.formulas["(9)"]),
            ("(10)", counter.formulas["(10)"] + bound_clause),
        ]
    return sections, counter, bound


def _variable_comments(
    pool: IDPool,
    tv: PerfectTreeVars,
    feature_names: list[str],
    classes: np.ndarray,
    lines_of_rows: np.ndarray,
    counter: SequentialCounter | None,
    bound: int | None,
) -> list[str]:
    """One comment per variable: what it means for the tree or the row."""
    m, depth = tv.n_features, tv.depth
    out: list[str] = []
    add = out.append
    for q in range(1, tv.n_internal + 1):
        for a in range(m):
            add(
                f"c {tv.F[q - 1, a]} F node={q} feature={a} : node {q} tests "
                f"{_json(feature_names[a])}"
            )
    for v in range(tv.n_leaves):
        for c in range(len(classes)):
            add(f"c {tv.C[v, c]} C leaf={v} class={c} : leaf {v} predicts {_json(str(classes[c]))}")
    for i in range(len(lines_of_rows)):
        for j in range(depth):
            line = int(lines_of_rows[i])
            add(
                f"c {pool.id(('X', i, j))} X line={line} level={j} : the row on line {line} "
                f"goes right at depth {j}"
            )
    if counter is not None:
        for v in range(counter.n):
            add(f"c {pool.id(('U', v))} U leaf={v} : leaf {v} carries a class")
        for v in range(counter.n + 1):
            for j in range(min(v, bound + 1) + 1):
                add(
                    f"c {counter.H[v, j]} H prefix={v} count={j} : true when at least {j} of "
                    f"the first {v} leaves carry a class"
                )
    return out


def _records(
    depth: int,
    max_nodes: int | None,
    source: str,
    names: list[str],
    indicator: list[int],
    view: Any,
) -> list[str]:
    """The ``c satdt-decode`` lines of the header, the design columns and the binary features."""
    header = {
        "format": FORMAT,
        "version": VERSION,
        "depth": depth,
        "max_nodes": max_nodes,
        "data": source,
    }
    out = [_RECORD + _json(header)]
    for col, name in enumerate(names):
        out.append(_RECORD + _json({"column": col, "name": name, "indicator": col in indicator}))
    for a in range(len(view.names)):
        record = {
            "feature": a,
            "column": int(view.column[a]),
            "threshold": float(view.threshold[a]),
        }
        if view.missing[a] < DEFAULT_LEFT:  # where the feature puts rows missing that cell
            record["missing"] = int(view.missing[a])
        out.append(_RECORD + _json(record))
    return out


def _check_int(name: str, value: Any, smallest: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < smallest:
        raise DataError(f"{name} must be an integer >= {smallest}, got {value!r}")


# ---------------------------------------------------------------------------- solutions
def read_solution(text: str) -> list[int] | None:
    """The literals of a SAT solver's answer, or ``None`` when it says UNSAT.

    Three formats are accepted:

    - the SAT competition's: ``s SATISFIABLE`` or ``s UNSATISFIABLE``, then ``v`` lines of
      literals, the last one ending with ``0`` (``c`` lines are ignored);
    - MiniSat's result file (``minisat in.cnf out.txt``): ``SAT`` then one line of literals
      ending with ``0``, or ``UNSAT``;
    - a bare list of literals (the final ``0`` optional).

    Raises
    ------
    DataError
        Empty or malformed text, a solver that gave up (``UNKNOWN``/``INDET``), or a
        variable given both signs.
    """
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not (line == "c" or line.startswith("c "))]
    if not lines:
        raise DataError(
            "the solution is empty: expected a SAT solver's output (an 's SATISFIABLE' line "
            "and 'v' lines, MiniSat's 'SAT' and a line of literals, or a list of literals)"
        )
    head = lines[0].split()
    if head[0] in ("s", "v"):
        return _competition(lines)
    if head[0].upper() in ("SAT", "UNSAT", "INDET", "UNKNOWN"):
        if len(head) > 1:
            raise DataError(
                f"malformed solution: the first line {lines[0]!r} should hold only "
                f"SAT, UNSAT or INDET"
            )
        status = head[0].upper()
        if status in ("INDET", "UNKNOWN"):
            raise _gave_up(status)
        if status == "UNSAT":
            return None
        return _literals(" ".join(lines[1:]).split(), final_zero=True, where="after 'SAT'")
    return _literals(" ".join(lines).split(), final_zero=False, where="in the list")


def _competition(lines: list[str]) -> list[int] | None:
    status: str | None = None
    tokens: list[str] = []
    for line in lines:
        kind, _, rest = line.partition(" ")
        if kind == "s":
            if status is not None:
                raise DataError("malformed solution: more than one 's' (status) line")
            status = rest.strip().upper()
        elif kind == "v":
            tokens.extend(rest.split())
        else:
            raise DataError(
                f"malformed solution: the line {line[:60]!r} starts with neither 's', 'v' nor "
                f"'c' (competition format)"
            )
    if status is None:
        raise DataError("malformed solution: 'v' lines without an 's SATISFIABLE' line")
    if status in ("UNKNOWN", "INDETERMINATE"):
        raise _gave_up(status)
    if status == "UNSATISFIABLE":
        return None
    if status != "SATISFIABLE":
        raise DataError(
            f"malformed solution: unknown status 's {status}'; expected SATISFIABLE or "
            f"UNSATISFIABLE"
        )
    return _literals(tokens, final_zero=True, where="in the 'v' lines")


def _gave_up(status: str) -> DataError:
    return DataError(
        f"the solver gave no answer ({status}): it stopped before deciding the formula; "
        f"run it longer"
    )


def _literals(tokens: list[str], *, final_zero: bool, where: str) -> list[int]:
    values: list[int] = []
    for token in tokens:
        try:
            values.append(int(token))
        except ValueError:
            raise DataError(
                f"malformed solution: {token[:30]!r} {where} is not an integer literal"
            ) from None
    if final_zero and (not values or values[-1] != 0):
        raise DataError(
            f"malformed solution: the literals {where} do not end with 0; the output may be "
            f"truncated"
        )
    if values and values[-1] == 0:
        values.pop()
    if 0 in values:
        raise DataError(f"malformed solution: a 0 {where} before the last literal")
    if not values:
        raise DataError(f"malformed solution: no literals {where}")
    signs: dict[int, int] = {}
    for lit in values:
        if signs.setdefault(abs(lit), lit) != lit:
            raise DataError(f"malformed solution: variable {abs(lit)} is given both true and false")
    return values


# ---------------------------------------------------------------------------- decoding
@dataclass
class _Formula:
    """What :func:`decode_dimacs` reads from a CNF file written by :func:`encode_dimacs`."""

    n_vars: int = 0
    clauses: list[list[int]] = field(default_factory=list)
    clause_lines: list[int] = field(default_factory=list)
    legend: dict[int, str] = field(default_factory=dict)
    header: dict[str, Any] = field(default_factory=dict)
    columns: list[dict[str, Any]] = field(default_factory=list)
    features: list[dict[str, Any]] = field(default_factory=list)
    classes: list[Any] = field(default_factory=list)
    F: dict[int, tuple[int, int]] = field(default_factory=dict)
    C: dict[int, tuple[int, int]] = field(default_factory=dict)


def _parse_cnf(text: str) -> _Formula:
    formula = _Formula()
    declared: tuple[int, int] | None = None
    current: list[int] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line == "%":
            continue
        if line.startswith("c"):
            _parse_comment(formula, line, number)
            continue
        if line.startswith("p"):
            parts = line.split()
            if declared is not None or len(parts) != 4 or parts[1] != "cnf":
                raise DataError(f"CNF line {number}: malformed problem line {line!r}")
            try:
                declared = (int(parts[2]), int(parts[3]))
            except ValueError:
                raise DataError(f"CNF line {number}: malformed problem line {line!r}") from None
            continue
        if declared is None:
            raise DataError(f"CNF line {number}: a clause before the 'p cnf' line")
        for token in line.split():
            try:
                lit = int(token)
            except ValueError:
                raise DataError(f"CNF line {number}: {token[:30]!r} is not a literal") from None
            if lit == 0:
                formula.clauses.append(current)
                formula.clause_lines.append(number)
                current = []
            else:
                current.append(lit)
    if not formula.header:
        raise DataError(
            "this CNF file was not written by 'satdt encode' (no 'c satdt-decode' lines): "
            "decoding needs the meaning of the variables, which only satdt's comments give"
        )
    if declared is None:
        raise DataError("the CNF file has no 'p cnf' line; it may be truncated")
    if current or len(formula.clauses) != declared[1]:
        raise DataError(
            f"the CNF file is damaged: its 'p cnf' line announces {declared[1]} clauses but "
            f"it holds {len(formula.clauses) + bool(current)}"
        )
    formula.n_vars = declared[0]
    _check_records(formula)
    return formula


def _parse_comment(formula: _Formula, line: str, number: int) -> None:
    if line.startswith(_RECORD):
        try:
            record = json.loads(line[len(_RECORD) :])
        except json.JSONDecodeError:
            raise DataError(f"CNF line {number}: damaged 'c satdt-decode' record") from None
        if "format" in record:
            formula.header = record
        elif "column" in record and "name" in record:
            formula.columns.append(record)
        elif "feature" in record:
            formula.features.append(record)
        elif "class" in record:
            formula.classes.append(record["label"])
        return
    match = _LEGEND.match(line)
    if match is None:
        return
    var, kind = int(match.group(1)), match.group(2)
    keys = dict(item.split("=") for item in match.group(3).split())
    formula.legend[var] = f"{kind} {match.group(3).strip()}"
    if kind == "F":
        formula.F[var] = (int(keys["node"]), int(keys["feature"]))
    elif kind == "C":
        formula.C[var] = (int(keys["leaf"]), int(keys["class"]))


def _check_records(formula: _Formula) -> None:
    header = formula.header
    if header.get("format") != FORMAT or header.get("version") != VERSION:
        raise DataError(
            f"unsupported CNF file: format {header.get('format')!r} version "
            f"{header.get('version')!r}; this satdt reads {FORMAT!r} version {VERSION}: "
            f"encode the data again"
        )
    depth = header.get("depth")
    if not isinstance(depth, int) or depth < 0:
        raise DataError("the CNF file is damaged: its depth record is missing or invalid")
    n_features, n_classes = len(formula.features), len(formula.classes)
    expected_f = (2**depth - 1) * n_features
    if len(formula.F) != expected_f or len(formula.C) != 2**depth * n_classes or not n_classes:
        raise DataError(
            "the CNF file is damaged: the comment lines do not describe every F and C "
            "variable; encode the data again"
        )


def decode_dimacs(cnf_text: str, solution_text: str) -> Tree:
    """The tree in a solver's model of a formula written by :func:`encode_dimacs`.

    Only the CNF file is used (its comments give the meaning of the variables, and its
    clauses are checked): every internal node tests the first feature true for it, every
    leaf predicts the first class true for it. A leaf with no class is reached by no row
    (formula (5) labels every row's leaf), so a node whose side holds only such leaves is
    replaced by its other side; sibling leaves of one class are merged. The tree is over the
    user's design columns (thresholds ``x[c] <= t`` go left), with the user's labels.

    Parameters
    ----------
    cnf_text
        The text written by :func:`encode_dimacs` (``satdt encode``).
    solution_text
        The solver's output, in any format :func:`read_solution` reads.

    Raises
    ------
    DataError
        The CNF was not written by satdt or is damaged, the solution is malformed or
        unsatisfiable, or it violates a clause of the formula (the message names it).
    """
    formula = _parse_cnf(cnf_text)
    literals = read_solution(solution_text)
    depth = formula.header["depth"]
    if literals is None:
        limit = formula.header.get("max_nodes")
        nodes = "" if limit is None else f" and at most {limit} nodes"
        raise DataError(
            f"the solver found the formula unsatisfiable: no tree of depth {depth} (or less)"
            f"{nodes} classifies every row of {formula.header.get('data', 'the data')} "
            f"correctly; encode again with a larger depth"
            + ("" if limit is None else " or node limit")
        )
    truth = np.zeros(formula.n_vars + 1, dtype=np.int8)  # 1 true, -1 false, 0 unassigned
    for lit in literals:
        if abs(lit) > formula.n_vars:
            raise DataError(
                f"the solution sets variable {abs(lit)}, but the formula has only "
                f"{formula.n_vars} variables: is it the solution of another formula?"
            )
        truth[abs(lit)] = 1 if lit > 0 else -1
    for index, clause in enumerate(formula.clauses):
        if not any(truth[abs(lit)] == (1 if lit > 0 else -1) for lit in clause):
            meaning = ", ".join(_describe(formula, lit) for lit in clause)
            raise DataError(
                f"the solution does not satisfy clause {index + 1} of the formula (CNF line "
                f"{formula.clause_lines[index]}: {' '.join(map(str, clause))} 0), which says "
                f"one of: {meaning}; is it the solution of this formula?"
            )
    node_feature = np.full(2**depth - 1, -1, dtype=np.int64)
    for var, (node, feature) in sorted(formula.F.items(), key=lambda item: item[1]):
        if truth[var] == 1 and node_feature[node - 1] < 0:
            node_feature[node - 1] = feature
    leaf_class = np.full(2**depth, -1, dtype=np.int64)
    for var, (leaf, cls) in sorted(formula.C.items(), key=lambda item: item[1]):
        if truth[var] == 1 and leaf_class[leaf] < 0:
            leaf_class[leaf] = cls
    nested = _collapse(node_feature, leaf_class, depth)
    binary = Tree.from_nested(0 if nested is None else nested, np.arange(len(formula.classes)))
    features = sorted(formula.features, key=lambda record: record["feature"])
    columns = sorted(formula.columns, key=lambda record: record["column"])
    tree = binary.map_features(
        np.array([int(r["column"]) for r in features], dtype=np.int64),
        np.array([float(r["threshold"]) for r in features], dtype=np.float64),
        [str(r["name"]) for r in columns],
        [int(r["column"]) for r in columns if r.get("indicator")],
        np.array([int(r.get("missing", DEFAULT_LEFT)) for r in features], dtype=np.int8),
    )
    tree.classes = np.asarray(formula.classes)
    return tree


def _describe(formula: _Formula, lit: int) -> str:
    meaning = formula.legend.get(abs(lit), f"variable {abs(lit)}")
    return meaning if lit > 0 else f"NOT {meaning}"


def _collapse(node_feature: np.ndarray, leaf_class: np.ndarray, depth: int) -> Any:
    """The perfect tree as nested tuples, without class-less leaves, sibling leaves merged.

    Returns ``None`` when no leaf below has a class. A node tested by no feature (possible
    only when formula (1) is missing) is treated as testing feature 0.
    """

    def build(q: int, level: int) -> Any:
        if level == depth:
            cls = int(leaf_class[q - 2**depth])
            return None if cls < 0 else cls
        lo, hi = build(2 * q, level + 1), build(2 * q + 1, level + 1)
        if lo is None or hi is None:
            return hi if lo is None else lo
        if not isinstance(lo, tuple) and lo == hi:
            return lo
        return (max(int(node_feature[q - 1]), 0), 0.5, lo, hi)

    return build(1, 0)
