"""The pages in encodings/ say what the code does: every generated block and count formula is checked.

A page marks each block that satdt produces with ``<!-- generated: NAME -->`` ...
``<!-- end generated -->``; the test regenerates it with the function ``BLOCKS[NAME]`` and
compares. Count formulas sit in tables between ``<!-- counts -->`` and ``<!-- end counts -->``:
one row per variable kind or formula, its last cell a Python expression in code quotes over
n (distinct rows), m (binary features), c (classes), k (depth) and, for node limits,
max_nodes and L; the test evaluates them over a grid and compares with the header of
``encode_dimacs``. After a change in the code, refresh the pages with::

    python tests/project/test_encodings_docs.py --write
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Callable

import numpy as np
import pytest
from helpers import ROOT
from pysat.formula import CNF, IDPool
from pysat.solvers import Solver

from satdt import OptimalTreeClassifier, read_csv
from satdt.core.errors import DataError
from satdt.data import Dataset, from_arrays
from satdt.sat.counter import SequentialCounter, TotalizerCounter
from satdt.sat.dimacs import decode_dimacs, encode_dimacs

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it

ENCODINGS = ROOT / "encodings"
DATA = ROOT / "examples" / "data"
PAGES = ("README.md", "perfect-tree.md", "node-counter.md", "incremental-loop.md")
BLOCK = re.compile(
    r"(?P<open><!-- generated: (?P<name>[\w./-]+) -->\n)(?P<body>.*?)(?P<close><!-- end generated -->)",
    re.S,
)
COUNTS = re.compile(r"<!-- counts -->\n(?P<table>.*?)<!-- end counts -->", re.S)
SOLVER = "glucose4"  # the solver pinned for every generated answer
LOOP_DATA = ("mouse", "iris", "monk1", "monk2", "monk3")


# ---------------------------------------------------------------------------- generators
def _tiny() -> Dataset:
    return read_csv(DATA / "tiny.csv")


def _solve(text: str) -> list[int] | None:
    with Solver(name=SOLVER, bootstrap_with=CNF(from_string=text).clauses) as solver:
        return solver.get_model() if solver.solve() else None


def _fence(text: str, lang: str = "text") -> str:
    return f"```{lang}\n{text.rstrip()}\n```\n"


def _legend(text: str) -> dict[int, str]:
    """Variable -> its meaning, from the comment lines of an encode_dimacs output."""
    legend = {}
    for line in text.splitlines():
        parts = line.split(" : ", 1)
        words = parts[0].split()
        if len(parts) == 2 and len(words) >= 3 and words[0] == "c" and words[1].isdigit():
            legend[int(words[1])] = f"{' '.join(words[2:])} : {parts[1]}"
    return legend


def block_tiny_data() -> str:
    data = _tiny()
    table = (DATA / "tiny.csv").read_text().strip().splitlines()
    lines = [f"line {i + 1}: {row}" for i, row in enumerate(table)]
    return (
        _fence("\n".join(lines))
        + f"\n{len(data.y)} rows, design columns: "
        + ", ".join(f"`{name}`" for name in data.feature_names)
        + "\n"
    )


def block_tiny_cnf() -> str:
    return _fence(encode_dimacs(_tiny(), 2))


def block_tiny_model() -> str:
    text = encode_dimacs(_tiny(), 2)
    model = _solve(text)
    legend = _legend(text)
    true = [f"{v:>3}  {legend[v]}" for v in model if v > 0]
    return (
        _fence("s SATISFIABLE\nv " + " ".join(map(str, model)) + " 0")
        + "\nThe variables it sets true:\n\n"
        + _fence("\n".join(true))
    )


def block_tiny_tree() -> str:
    text = encode_dimacs(_tiny(), 2)
    model = _solve(text)
    solution = "v " + " ".join(map(str, model)) + " 0"
    tree = decode_dimacs(text, "s SATISFIABLE\n" + solution)
    return _fence(tree.export_text())


def block_tiny_depth1() -> str:
    text = encode_dimacs(_tiny(), 1)
    header = [line for line in text.splitlines() if re.match(r"c (variables|clauses): \d", line)]
    answer = "SAT" if _solve(text) is not None else "UNSAT"
    try:
        decode_dimacs(text, "s UNSATISFIABLE" if answer == "UNSAT" else "")
        message = ""
    except DataError as error:
        message = str(error)
    return _fence("\n".join([*header, f"{SOLVER}: {answer}", f"satdt decode: {message}"]))


def block_tiny_counter() -> str:
    text = encode_dimacs(_tiny(), 2, max_nodes=5)
    lines = text.splitlines()
    head = lines[: lines.index("c binary features:")]
    kinds = [line for line in lines if re.match(r"c \d+ [UH] ", line)]
    p = next(i for i, line in enumerate(lines) if line.startswith("p cnf"))
    counts = _header_counts(text)
    counter = lines[len(lines) - sum(counts[f"({i})"] for i in (7, 8, 9, 10)) :]
    n_base = counts["clauses"] - len(counter)
    return _fence(
        "\n".join(
            [
                *head,
                "c ...",
                *kinds,
                "c ...",
                lines[p],
                f"... the {n_base} clauses (1)-(6) ...",
                *counter,
            ]
        )
    )


def block_tiny_bounds() -> str:
    data = _tiny()
    rows = [
        "| max_nodes | L | variables | clauses | answer | decoded tree |",
        "|---|---|---|---|---|---|",
    ]
    for max_nodes in (3, 4, 5, 7):
        text = encode_dimacs(data, 2, max_nodes=max_nodes)
        p = next(line for line in text.splitlines() if line.startswith("p cnf")).split()
        bound = re.search(r"at most L = (\d+) leaves", text).group(1)
        model = _solve(text)
        if model is None:
            answer, shape = "UNSAT", "none"
        else:
            tree = decode_dimacs(text, " ".join(map(str, model)))
            answer, shape = "SAT", f"{tree.n_nodes} nodes, depth {tree.depth}"
        rows.append(f"| {max_nodes} | {bound} | {p[2]} | {p[3]} | {answer} | {shape} |")
    return "\n".join(rows) + "\n"


def block_counter_sizes() -> str:
    rows = [
        "| depth k | leaves N | bound L | sequential: variables | sequential: clauses "
        "| totalizer: variables | totalizer: clauses |",
        "|---|---|---|---|---|---|---|",
    ]
    for k, bound in ((2, 3), (3, 4), (4, 8), (5, 12), (6, 20)):
        n = 2**k
        cells = []
        for kind in (SequentialCounter, TotalizerCounter):
            pool = IDPool()
            U = np.array([pool.id(("U", v)) for v in range(n)], dtype=np.int64)
            before = pool.top
            counter = kind(pool, U, bound)
            top = counter._totalizer.top_id if kind is TotalizerCounter else pool.top
            cells += [str(top - before), str(len(counter.clauses))]
        rows.append(f"| {k} | {n} | {bound} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def _fit(name: str, objective: str) -> OptimalTreeClassifier:
    model = OptimalTreeClassifier(
        objective=objective, method="sat", solver=SOLVER, counterexamples="per_leaf"
    )
    return model.fit_dataset(read_csv(DATA / f"{name}.csv"))


def block_mouse_trace() -> str:
    data = read_csv(DATA / "mouse.csv")
    result = _fit("mouse", "depth").result_
    rows = [
        "| depth | round | examples | variables | clauses | answer | counterexamples added (line: class) |",
        "|---|---|---|---|---|---|---|",
    ]
    for call in result.trace:
        added = ", ".join(
            f"{data.line_numbers[row]}: {label}" for row, label in call.counterexamples
        )
        rows.append(
            f"| {call.depth} | {call.round} | {call.n_examples} | {call.n_vars} | "
            f"{call.n_clauses} | {call.status} | {added} |"
        )
    settled = result.stats.settled_without_sat_call
    note = (
        f"\nDepth {', '.join(map(str, settled))}: settled by the repaired heuristic tree, "
        f"without a SAT call.\n"
        if settled
        else ""
    )
    return "\n".join(rows) + "\n" + note


def block_loop_measured() -> str:
    rows = [
        "| data | distinct rows | binary features | min depth | examples used | SAT calls "
        "| clauses, full formula | clauses, largest loop formula | min nodes | examples used "
        "| SAT calls |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in LOOP_DATA:
        depth = _fit(name, "depth").result_
        size = _fit(name, "size").result_
        k = int(depth.objective_value)
        full = encode_dimacs(read_csv(DATA / f"{name}.csv"), k)
        full_clauses = next(line for line in full.splitlines() if line[:5] == "p cnf").split()[3]
        largest = max((call.n_clauses for call in depth.trace), default=0)
        rows.append(
            f"| {name} | {depth.stats.rows} | {depth.stats.binary_features} | {k} | "
            f"{depth.stats.examples_used} | {len(depth.trace)} | {full_clauses} | {largest} | "
            f"{int(size.objective_value)} | {size.stats.examples_used} | {len(size.trace)} |"
        )
    return "\n".join(rows) + "\n"


BLOCKS: dict[str, Callable[[], str]] = {
    "tiny-data": block_tiny_data,
    "tiny-cnf": block_tiny_cnf,
    "tiny-model": block_tiny_model,
    "tiny-tree": block_tiny_tree,
    "tiny-depth1": block_tiny_depth1,
    "tiny-counter": block_tiny_counter,
    "tiny-bounds": block_tiny_bounds,
    "counter-sizes": block_counter_sizes,
    "mouse-trace": block_mouse_trace,
    "loop-measured": block_loop_measured,
}


def refresh(text: str, cache: dict[str, str]) -> str:
    """The page with every generated block regenerated."""

    def replace(match: re.Match) -> str:
        name = match.group("name")
        if name not in cache:
            cache[name] = BLOCKS[name]()
        return match.group("open") + cache[name] + match.group("close")

    return BLOCK.sub(replace, text)


# ---------------------------------------------------------------------------- tests
def test_encodings_is_not_a_python_package() -> None:
    # a top-level package named `encodings` would shadow Python's codec module
    assert not (ENCODINGS / "__init__.py").exists()
    assert not list(ENCODINGS.rglob("*.py"))


def test_every_page_exists_and_links_resolve() -> None:
    for page in PAGES:
        text = (ENCODINGS / page).read_text()
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
            assert (ENCODINGS / target).exists(), f"{page} links to missing {target}"


def test_every_block_is_used_once_and_known() -> None:
    names = [
        m.group("name") for page in PAGES for m in BLOCK.finditer((ENCODINGS / page).read_text())
    ]
    assert sorted(names) == sorted(BLOCKS), "blocks in the pages differ from BLOCKS"


@pytest.mark.parametrize("name", sorted(set(BLOCKS) - {"loop-measured", "mouse-trace"}))
def test_generated_block_is_current(name: str) -> None:
    _check_block(name)


# seconds of work: in the full suite, not the quick loop
@pytest.mark.slow
def test_measured_loop_numbers_are_current() -> None:
    _check_block("mouse-trace")
    _check_block("loop-measured")


def _check_block(name: str) -> None:
    for page in PAGES:
        for match in BLOCK.finditer((ENCODINGS / page).read_text()):
            if match.group("name") == name:
                assert match.group("body") == BLOCKS[name](), (
                    f"encodings/{page}: block {name!r} differs from what satdt produces now; "
                    f"run `python tests/project/test_encodings_docs.py --write` and review the diff"
                )
                return
    pytest.fail(f"block {name!r} is in no page")


def _formulas(page: str) -> dict[str, str]:
    """key -> Python expression, from the counts tables of a page."""
    formulas = {}
    for table in COUNTS.finditer((ENCODINGS / page).read_text()):
        for row in table.group("table").splitlines():
            cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
            if len(cells) >= 2 and cells[-1].startswith("`") and cells[0] not in ("---", ""):
                formulas[cells[0].strip("`")] = cells[-1].strip("`")
    return formulas


def _binary_dataset(n: int, m: int, c: int, seed: int) -> Dataset:
    """n distinct rows (plus one duplicate), m usable binary features, c classes."""
    rng = np.random.default_rng(seed)
    # columns as bit patterns with row 0 = 0: never constant, identical or complementary
    patterns = np.arange(1, 2 ** (n - 1))
    while True:
        chosen = rng.choice(patterns, size=m, replace=False)
        B = (chosen[None, :] >> np.arange(n)[:, None]) & 1
        if len(np.unique(B, axis=0)) == n:
            break
    y = np.arange(n) % c
    X = np.vstack([B, B[-1:]]).astype(float)
    design, schema, labels = from_arrays(X, np.append(y, y[-1]))
    return Dataset(design, labels, schema, np.arange(1, n + 2), None)


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
        bound = re.search(r"at most L = (\d+) leaves", line)
        if bound:
            counts["L"] = int(bound.group(1))
    p = next(line for line in text.splitlines() if line.startswith("p cnf")).split()
    assert counts["variables"] == int(p[2]) and counts["clauses"] == int(p[3])
    assert len(CNF(from_string=text).clauses) == counts["clauses"]
    return counts


GRID = [
    (n, m, c, k)
    for n, m, c, k in itertools.product((2, 4, 7), (1, 2, 3, 5), (2, 3), (0, 1, 2, 3))
    if c <= n and n <= 2**m and m <= 2 ** (n - 1) - 1
]


def test_count_formulas_match_the_encoder() -> None:
    plain = _formulas("perfect-tree.md")
    limited = _formulas("node-counter.md")
    assert {"F", "C", "X", "variables", "(1)", "(2)", "(3)-(4)", "(5)-(6)", "clauses"} <= set(plain)
    assert {"L", "U", "H", "(7)", "(8)", "(9)", "(10)", "variables", "clauses"} <= set(limited)
    for seed, (n, m, c, k) in enumerate(GRID):
        data = _binary_dataset(n, m, c, seed)
        names = {"n": n, "m": m, "c": c, "k": k}
        counts = _header_counts(encode_dimacs(data, k))
        for key, expression in plain.items():
            assert eval(expression, {}, names) == counts[key], (key, expression, n, m, c, k)
        for max_nodes in (3, 6, 9, 40):
            counts = _header_counts(encode_dimacs(data, k, max_nodes=max_nodes))
            scope = {**names, "max_nodes": max_nodes}
            scope["L"] = eval(limited["L"], {}, scope)
            for key, expression in {**plain, **limited}.items():
                if key in counts:
                    assert eval(expression, {}, scope) == counts[key], (key, expression, scope)


def write() -> None:
    """Regenerate every block of every page in place."""
    cache: dict[str, str] = {}
    for page in PAGES:
        path = ENCODINGS / page
        old = path.read_text()
        new = refresh(old, cache)
        if new != old:
            path.write_text(new)
            print(f"updated encodings/{page}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/project/test_encodings_docs.py --write")
    write()
