"""Module boundaries of the architecture map: no module imports across them, and no cycle.

Every module of the package is parsed with ``ast``; its imports, function-level and relative
ones included (and ``importlib.import_module`` of a literal name), are resolved to absolute
module names and checked against the rules below. A rule names module prefixes, so it keeps
holding when a module becomes a package. The imports that run when a module is imported
(module level, not under ``TYPE_CHECKING``) form a graph with no cycle; a function-level
import may close one (a lazy import, as ``Tree.to_sklearn`` imports the exporters).
Each rule is shown to fail on an import that crosses it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest
from helpers import ROOT

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it

PACKAGE = ROOT / "satdt"

# The layers, from the ground up: a module imports only from its own layer and below, at import
# time and inside functions alike (``TYPE_CHECKING`` aside). Modules of one layer may import
# each other unless a rule below keeps them apart (the SAT side and the DP side).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("satdt.core",),  # errors, the parameter rules, lazy exports
    ("satdt.data",),  # tables in
    ("satdt.models",),  # Tree, Diagram, model files, export
    ("satdt.prepare",),  # validation, weights, binarization, costs: table -> Prepared
    ("satdt.task",),  # objectives, Task, results, the recorder, statistics
    # the engines, and what reads a model without searching (explanations, pictures, the
    # report of a fit)
    ("satdt.sat", "satdt.dp", "satdt.mip", "satdt.explanations", "satdt.plot", "satdt.report"),
    ("satdt.search",),  # the registry of searches, auto's rules, the runner, hybrid, diagrams
    ("satdt.estimators",),  # scikit-learn estimators, the Rashomon set
    ("satdt.sweep",),  # grids of fits
    ("satdt.cli",),  # the command line: the only package that prints
)
ENGINES = ("satdt.sat", "satdt.dp", "satdt.mip")
ESTIMATORS = ("satdt.estimators", "satdt.cli")
PLOTTING = ("satdt.plot", "matplotlib")

# (modules the rule applies to, imports they must not make, why)
RULES = [
    (
        ("satdt.sat",),
        ("numba", "satdt.dp", "satdt.search", *ESTIMATORS),
        "the SAT side uses PySAT and numpy only",
    ),
    (
        ("satdt.dp",),
        ("pysat", "satdt.sat", "satdt.search", *ESTIMATORS),
        "the DP side uses numpy and numba only",
    ),
    (("satdt.models",), PLOTTING, "models import no plotting code"),
    (
        ("satdt.explanations", "satdt.plot", "satdt.report"),
        ENGINES,
        "explanations, pictures and reports run no search",
    ),
    (("satdt.report",), ("matplotlib",), "a report is drawn without matplotlib"),
]


def _layer(name: str) -> int | None:
    """The floor of a satdt module (None: the package root, which sits above every layer)."""
    for floor, prefixes in enumerate(LAYERS):
        if _within(name, prefixes):
            return floor
    return None


def _climbs(modules: dict[str, set[str]]) -> list[str]:
    """``importer imports imported`` for each import of a satdt module from a higher layer."""
    found = []
    for module, names in modules.items():
        floor = _layer(module)
        if floor is None:
            continue
        for name in sorted(names):
            target = _layer(name) if name.startswith("satdt.") else None
            if target is not None and target > floor:
                found.append(f"{module} imports {name}")
    return found


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(node: ast.ImportFrom, package: str) -> str:
    """The absolute name of the module a ``from ... import`` statement names."""
    if not node.level:
        return str(node.module)
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def _package(path: Path) -> str:
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _imports(path: Path) -> set[str]:
    """Every module name the file imports, anywhere in it, as an absolute name (``from a
    import b`` gives ``a`` and ``a.b``, since ``b`` may be a module)."""
    package = _package(path)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, package)
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


def _type_checking(node: ast.stmt) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _import_time_statements(body: list[ast.stmt]):
    """The import statements that run when the module is imported: at module level, in
    class bodies and in ``if``/``try``/``with`` blocks there; not in functions, not under
    ``if TYPE_CHECKING``."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or _type_checking(node):
            continue
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    yield from _import_time_statements(inner)


def _module_level_imports(path: Path, known: set[str]) -> set[str]:
    """The satdt modules whose code runs when this file is imported because it imports them
    (the packages on the way included, but not the importer's own packages, which are loaded
    already)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return _imported_modules(path, _import_time_statements(tree.body), known)


def _imported_modules(path: Path, statements: Iterable[ast.stmt], known: set[str]) -> set[str]:
    """The satdt modules (of ``known``) these import statements of the file load: each named
    module and the packages on the way, but not the file's own packages."""
    name, package = _module_name(path), _package(path)
    targets: set[str] = set()
    for node in statements:
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, package)
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    found: set[str] = set()
    for target in targets:
        parts = target.split(".")
        for end in range(1, len(parts) + 1):
            prefix = ".".join(parts[:end])
            if prefix in known and prefix != name and not name.startswith(prefix + "."):
                found.add(prefix)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of a graph: each strongly connected component of more than one
    module (or a module importing itself), sorted (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _crossings(
    modules: dict[str, set[str]], owners: tuple[str, ...], forbidden: tuple[str, ...]
) -> list[str]:
    return [
        f"{module} imports {name}"
        for module, names in modules.items()
        if _within(module, owners)
        for name in sorted(names)
        if _within(name, forbidden)
    ]


def _reached_only_through(
    modules: dict[str, set[str]], target: tuple[str, ...], importers: tuple[str, ...]
) -> list[str]:
    return [
        f"{module} imports {name}"
        for module, names in modules.items()
        if not _within(module, importers)
        for name in sorted(names)
        if _within(name, target)
    ]


FILES = sorted(PACKAGE.rglob("*.py"))
MODULES = {_module_name(p): _imports(p) for p in FILES}
AT_IMPORT = {_module_name(p): _module_level_imports(p, set(MODULES)) for p in FILES}


def _runtime_imports(path: Path, known: set[str]) -> set[str]:
    """The satdt modules the file imports anywhere, functions included, but not under
    ``if TYPE_CHECKING`` (packages on the way included, the file's own packages not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    hidden = {
        id(inner)
        for node in ast.walk(tree)
        if _type_checking(node)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    statements = [node for node in ast.walk(tree) if id(node) not in hidden]
    return _imported_modules(path, statements, known)


RUNTIME = {_module_name(p): _runtime_imports(p, set(MODULES)) for p in FILES}
# The largest circle of modules importing each other (function-level imports included): a few
# modules that are one thing split for size (a model and its exporters) may form one.
MAX_CIRCLE = 3
MAX_LINES = 800  # a module over this is two modules
MAX_LOOSE = (
    6  # modules at the package root (besides __init__ and __main__): the folder says the layer
)


def test_imports_are_resolved() -> None:
    # the parser sees relative, function-level and absolute imports alike
    assert "satdt.sat.problem" in MODULES["satdt.search.hybrid"]  # function-level, relative
    assert "satdt.task.result" in MODULES["satdt.dp.boxes"]  # `from ..task.result import ...`
    assert "numba" in MODULES["satdt.dp._counts"]
    assert "pysat.examples.rc2" in MODULES["satdt.sat.diagram.maxsat"]
    # ... and the graph of what runs at import time only the module-level ones
    assert "satdt.sat.problem" not in AT_IMPORT["satdt.search.hybrid"]  # inside a function
    assert "satdt.task.result" not in AT_IMPORT["satdt.models.files"]  # under TYPE_CHECKING
    assert {"satdt.models", "satdt.models.diagram"} <= AT_IMPORT["satdt.mip.solution"]
    assert "satdt.models.display" in AT_IMPORT["satdt.models.base"]  # `from . import display`
    assert "satdt.models" not in AT_IMPORT["satdt.models.base"]  # its own package
    # the runtime graph: functions included, TYPE_CHECKING left out
    assert "satdt.sat.problem" in RUNTIME["satdt.search.hybrid"]
    assert "satdt.task.result" not in RUNTIME["satdt.models.files"]


def test_every_module_is_in_a_layer() -> None:
    unplaced = [m for m in MODULES if m != "satdt" and _layer(m) is None]
    assert not unplaced, f"modules in no layer of LAYERS: {unplaced}"


def test_no_module_imports_from_a_higher_layer() -> None:
    # what runs, functions included (a type named under TYPE_CHECKING runs nothing)
    climbs = _climbs(RUNTIME)
    assert not climbs, "a module imports only its own layer and below: " + "; ".join(climbs)


def test_an_import_from_a_higher_layer_is_seen() -> None:
    assert _climbs({"satdt.dp.probe": {"satdt.search.registry"}}) == [
        "satdt.dp.probe imports satdt.search.registry"
    ]
    assert _climbs({"satdt.search.probe": {"satdt.dp.kernels", "numpy"}}) == []


@pytest.mark.parametrize(("owners", "forbidden", "why"), RULES, ids=[r[2] for r in RULES])
def test_no_module_imports_across_a_boundary(owners, forbidden, why) -> None:
    crossings = _crossings(MODULES, owners, forbidden)
    assert not crossings, f"{why}: " + "; ".join(crossings)


def test_the_consistency_portfolio_is_reached_only_through_the_searches() -> None:
    crossings = _reached_only_through(MODULES, ("satdt.search.hybrid",), ("satdt.search",))
    assert not crossings, "; ".join(crossings)


def test_the_milp_is_reached_only_through_the_searches() -> None:
    crossings = _reached_only_through(MODULES, ("satdt.mip",), ("satdt.mip", "satdt.search"))
    assert not crossings, "; ".join(crossings)


def test_no_import_cycle_among_the_modules() -> None:
    # what runs at import time: a cycle there makes the order of imports matter
    cycles = _cycles(AT_IMPORT)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_no_import_circle_of_more_than_three_modules() -> None:
    # function-level imports included: a lazy import that closes a wide circle is still a
    # circle in the house, whatever order the imports run in
    wide = [c for c in _cycles(RUNTIME) if len(c) > MAX_CIRCLE]
    assert not wide, "import circles: " + "; ".join(" <-> ".join(c) for c in wide)


def test_no_module_is_over_800_lines() -> None:
    long = {_module_name(p): n for p in FILES if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_few_modules_at_the_package_root() -> None:
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(loose) <= MAX_LOOSE, loose


def test_every_rule_fails_on_a_crossing() -> None:
    # each rule, fed one import that crosses it, reports that import (a rule that cannot fail
    # guards nothing)
    for owners, forbidden, why in RULES:
        module, name = f"{owners[0]}.probe", f"{forbidden[0]}.probe"
        assert _crossings({module: {name}}, owners, forbidden) == [f"{module} imports {name}"], why
    assert _reached_only_through(
        {"satdt.estimators.tree": {"satdt.search.hybrid"}}, ("satdt.search.hybrid",), ()
    )
    assert _reached_only_through({"satdt.cli.probe": {"satdt.mip.milp"}}, ("satdt.mip",), ())
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"a"}}) == [["a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


# ---------------------------------------------------------------- kernel groups, named once
# The module that may name a Numba kernel group: the registry of groups, which says which
# groups each search runs on (kernels_of); the searches ask it.
KERNEL_NAMERS = ("satdt.dp.kernels",)
# The modules that load kernels for a search: the DP side and the searches beside it.
KERNEL_USERS = ("satdt.dp", "satdt.search")


def _named_groups(tree: ast.AST, groups: set[str]) -> list[str]:
    """The kernel groups a module's code names: a group's name in the arguments of a call to
    the kernels' module (``kernels.ready(["blossom"])``; a search's name given to the table,
    ``kernels_of("blossom")``, is not a group's), or a list, tuple or set of groups' names
    (``GROUPS = ("contree", "contree_d2")``, ``[*start, "dl85"]``)."""

    def names_in(node: ast.AST) -> list[ast.Constant]:
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "kernels_of":
            return []
        if isinstance(node, ast.Constant):
            return [node] if isinstance(node.value, str) and node.value in groups else []
        return [c for child in ast.iter_child_nodes(node) for c in names_in(child)]

    def a_set_of_groups(node: ast.List | ast.Tuple | ast.Set) -> list[ast.Constant]:
        constants = [e for e in node.elts if isinstance(e, ast.Constant)]
        others = [e for e in node.elts if not isinstance(e, ast.Constant | ast.Starred)]
        if constants and not others and all(c.value in groups for c in constants):
            return constants
        return []

    found: list[ast.Constant] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "kernels"
        ):
            found += [c for arg in (*node.args, *node.keywords) for c in names_in(arg)]
        elif isinstance(node, ast.List | ast.Tuple | ast.Set):
            found += a_set_of_groups(node)
    return sorted({f"{c.value!r} (line {c.lineno})" for c in found})


def _kernel_groups() -> set[str]:
    from satdt.dp.kernels import GROUPS

    return set(GROUPS)


def test_only_the_table_of_searches_names_kernel_groups() -> None:
    # a search that named its groups itself could disagree with what the table says it runs
    # on (what a fit waits for, what a warm-up compiles)
    groups = _kernel_groups()
    named = [
        f"{_module_name(path)} names {name}"
        for path in FILES
        if _within(_module_name(path), KERNEL_USERS)
        and not _within(_module_name(path), KERNEL_NAMERS)
        for name in _named_groups(ast.parse(path.read_text(encoding="utf-8")), groups)
    ]
    assert not named, "; ".join(named)


def test_naming_a_kernel_group_is_seen() -> None:
    groups = _kernel_groups()
    for code in (
        'kernels.ready(["blossom"])',
        'kernels.load_soon(("dl85",), deadline)',
        'GROUPS = ("contree", "contree_d2")',
        'kernels.loaded("greedy")',
    ):
        assert _named_groups(ast.parse(code), groups), code
    assert _named_groups(ast.parse('both = ["blossom", "dl85", *start]'), groups)
    assert not _named_groups(ast.parse('proven_by = "blossom"'), groups)
    assert not _named_groups(ast.parse('if by in ("sat", "contree", "blossom"): pass'), groups)
    assert not _named_groups(ast.parse('kernels.ready(kernels_of("blossom").start)'), groups)


# A recorder's map to the user's trees and the units of its values are said once, by the one
# that runs the search (Recorder.begin); why a search stopped is an argument of its snapshot.
RECORDER_SETTINGS = {
    "to_user_tree",
    "value_scale",
    "value_offset",
    "cost_matrix",
    "stop_reason",
    "_to_user_tree",
    "_value_scale",
    "_value_offset",
    "_cost_matrix",
}


def _recorder_settings_assigned(tree: ast.AST) -> list[int]:
    """Lines that assign one of a recorder's settings on an object other than ``self``."""
    lines = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and target.attr in RECORDER_SETTINGS
                and not (isinstance(target.value, ast.Name) and target.value.id == "self")
            ):
                lines.append(node.lineno)
    return lines


def test_no_recorder_setting_is_assigned_from_outside() -> None:
    found = {
        _module_name(path): lines
        for path in FILES
        if (lines := _recorder_settings_assigned(ast.parse(path.read_text())))
    }
    assert found == {}


def test_assigning_a_recorder_setting_is_seen() -> None:
    assert _recorder_settings_assigned(ast.parse("task.recorder.value_scale = 0.5")) == [1]
    assert _recorder_settings_assigned(ast.parse("self.stop_reason = 'x'")) == []


# Functions with more than about eight arguments take an options object (frozen dataclasses
# that group what belongs together, as SearchSettings, MilpOptions, ErrorObjective and the
# diagram searches' runs do); over MAX_PARAMETERS is refused. Exempt: the numba kernels
# (flat arrays, one explicit signature each) and the data classes' constructors (a model's or
# a prepared table's arrays).
MAX_PARAMETERS = 10
KERNEL_FILES = ("_contree_d2.py", "_contree_scan.py", "_dl85_three.py", "_greedy_kernels.py")
DATA_CLASSES = {
    "satdt.models.tree": "Tree",
    "satdt.models.diagram": "Diagram",
    "satdt.prepare.prepared": "Prepared",
}
# "module:function" -> why it may take more (none today; a reason is required to add one)
PARAMETER_EXCEPTIONS: dict[str, str] = {}


def _is_kernel_file(path: Path) -> bool:
    return path.name in KERNEL_FILES or (
        path.name.startswith("_") and path.name.endswith("_kernels.py")
    )


def _too_many_parameters(tree: ast.AST, module: str, limit: int = MAX_PARAMETERS) -> list[str]:
    """``module:function (n)`` for each function (methods as ``Class.method``) of more than
    ``limit`` parameters, ``self`` and ``cls`` not counted, ``*args`` and ``**kwargs`` counted
    one each; the data classes' ``__init__`` left out."""
    found = []

    def visit(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{owner}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                a = child.args
                names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
                count = sum(n not in ("self", "cls") for n in names)
                count += (a.vararg is not None) + (a.kwarg is not None)
                name = f"{owner}{child.name}"
                constructor = child.name == "__init__" and DATA_CLASSES.get(module) == owner[:-1]
                if count > limit and not constructor:
                    found.append(f"{module}:{name} ({count})")
                visit(child, f"{name}.")
            else:
                visit(child, owner)

    visit(tree, "")
    return found


def test_no_function_takes_more_than_ten_parameters() -> None:
    found = [
        entry
        for path in FILES
        if not _is_kernel_file(path)
        for entry in _too_many_parameters(ast.parse(path.read_text()), _module_name(path))
        if entry.rsplit(" ", 1)[0] not in PARAMETER_EXCEPTIONS
    ]
    assert not found, "group these arguments into an options object: " + "; ".join(found)


def test_too_many_parameters_is_seen() -> None:
    eleven = ", ".join(f"a{i}" for i in range(11))
    ten = ", ".join(f"a{i}" for i in range(10))
    assert _too_many_parameters(ast.parse(f"def f({eleven}): pass"), "m") == ["m:f (11)"]
    assert _too_many_parameters(ast.parse(f"def f({ten}): pass"), "m") == []
    assert _too_many_parameters(ast.parse(f"def f(*, {ten}, **more): pass"), "m") == ["m:f (11)"]
    method = f"class C:\n    def g(self, {ten}):\n        def h({eleven}): pass"
    assert _too_many_parameters(ast.parse(method), "m") == ["m:C.g.h (11)"]
    tree = f"class Tree:\n    def __init__(self, {eleven}): pass"
    assert _too_many_parameters(ast.parse(tree), "satdt.models.tree") == []
    assert _too_many_parameters(ast.parse(tree), "satdt.search") == [
        "satdt.search:Tree.__init__ (11)"
    ]
    assert _is_kernel_file(Path("_blossom_kernels.py")) and _is_kernel_file(Path("_contree_d2.py"))
    assert not _is_kernel_file(Path("contree.py"))


def _module_exists(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _missing_modules(path: Path) -> list[str]:
    """The satdt modules the file imports (``import m``, ``from m import ...``, at any level
    of nesting) that do not exist: a relative import left pointing at the wrong package."""
    package = _package(path)
    missing = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [_resolve(node, package)]
        missing += [n for n in names if n.split(".")[0] == "satdt" and not _module_exists(n)]
    return missing


def test_every_imported_satdt_module_exists() -> None:
    found = {_module_name(p): m for p in FILES if (m := _missing_modules(p))}
    assert found == {}


def test_a_missing_module_is_seen(tmp_path: Path) -> None:
    assert _module_exists("satdt.estimators.base") and _module_exists("satdt.models")
    assert not _module_exists("satdt.estimators.plot")
