"""Module boundaries of the architecture map: no module imports across them.

Every module of the package is parsed with ``ast``; its imports, function-level and relative
ones included (and ``importlib.import_module`` of a literal name), are resolved to absolute
module names and checked against the rules below. A rule names module prefixes, so it keeps
holding when a module becomes a package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "satdt"

ESTIMATORS = ("satdt.learner", "satdt.diagrams", "satdt.cli")
SEARCH = (
    "satdt.sat",
    "satdt.dp",
    "satdt.mip",
    "satdt.methods",
    "satdt.diagram_search",
    "satdt.hybrid",
)
# the tables of searches (trees; diagram routes): the only way into the MILP
MIP_IMPORTERS = ("satdt.mip", "satdt.methods", "satdt.diagram_search")
MODELS_AND_DATA = (
    "satdt.models",
    "satdt.data",
    "satdt.binarize",
    "satdt.prepare",
    "satdt.result",
)

# (modules the rule applies to, imports they must not make, why)
RULES = [
    (
        ("satdt.sat",),
        ("numba", "satdt.hybrid", *ESTIMATORS),
        "the SAT side uses PySAT and numpy only",
    ),
    (
        ("satdt.dp",),
        ("pysat", "satdt.hybrid", *ESTIMATORS),
        "the DP side uses numpy and numba only",
    ),
    (MODELS_AND_DATA, SEARCH, "models and data import no search code"),
]


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module name the file imports, anywhere in it, as an absolute name (``from a
    import b`` gives ``a`` and ``a.b``, since ``b`` may be a module)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


MODULES = {_module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def test_imports_are_resolved() -> None:
    # the parser sees relative, function-level and absolute imports alike
    assert "satdt.sat.problem" in MODULES["satdt.methods"]  # function-level, relative
    assert "satdt.result" in MODULES["satdt.dp.boxes"]  # `from ..result import ...`
    assert "numba" in MODULES["satdt.dp._counts"]
    assert "pysat.examples.rc2" in MODULES["satdt.sat.diagram.maxsat"]


@pytest.mark.parametrize(("owners", "forbidden", "why"), RULES, ids=[r[2] for r in RULES])
def test_no_module_imports_across_a_boundary(owners, forbidden, why) -> None:
    crossings = [
        f"{module} imports {name}"
        for module, names in MODULES.items()
        if _within(module, owners)
        for name in sorted(names)
        if _within(name, forbidden)
    ]
    assert not crossings, f"{why}: " + "; ".join(crossings)


def test_the_consistency_portfolio_is_reached_only_through_the_table_of_searches() -> None:
    importers = [m for m, names in MODULES.items() if "satdt.hybrid" in names]
    assert importers == ["satdt.methods"], importers


def test_the_milp_is_reached_only_through_the_tables_of_searches() -> None:
    crossings = [
        f"{module} imports {name}"
        for module, names in MODULES.items()
        if not _within(module, MIP_IMPORTERS)
        for name in sorted(names)
        if _within(name, ("satdt.mip",))
    ]
    assert not crossings, "; ".join(crossings)
