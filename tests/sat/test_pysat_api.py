"""The private RC2 hook satdt overrides keeps its shape in the installed PySAT.

:class:`satdt.sat.diagram.maxsat._CountingRC2` overrides ``RC2._call_oracle`` to count the
oracle calls, report every model as an anytime diagram and stop at the clock. It is private
API: a PySAT release that removed it (releases before 1.8.dev30 lack it), changed its
arguments or called the SAT oracle around it would silently switch those off. These tests
read PySAT's RC2 source with ``inspect`` and fail loudly instead (pyproject.toml pins the
versions checked).
"""

from __future__ import annotations

import ast
import inspect
import threading

import pytest
from pysat.examples import rc2
from pysat.formula import WCNF

from satdt.sat.diagram.maxsat import _CountingRC2, _Stopped

pytestmark = pytest.mark.no_kernels  # runs no Numba kernel: the session compiles none for it

HOOK = "_call_oracle"
RC2_CLASSES = (rc2.RC2, rc2.RC2Stratified)


def _calls(cls: type, attribute: str) -> list[tuple[str, ast.Call]]:
    """Every call ``<...>.attribute(...)`` in the class's own source, with the calling method."""
    tree = ast.parse(inspect.getsource(cls))
    found = []
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef):
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == attribute
                ):
                    found.append((function.name, node))
    return found


def test_rc2_defines_the_hook_with_the_overridden_signature() -> None:
    assert HOOK in vars(rc2.RC2), "RC2._call_oracle is gone: _CountingRC2 would never run"
    base = inspect.signature(rc2.RC2Stratified._call_oracle)
    ours = inspect.signature(_CountingRC2._call_oracle)
    assert list(base.parameters) == ["self", "assumptions", "expect_interrupt"]
    assert list(ours.parameters) == list(base.parameters)
    assert base.parameters["expect_interrupt"].default is False
    # the hook is one limited solve, which returns None when interrupted
    (caller, call), *others = _calls(rc2.RC2, "solve_limited")
    assert caller == HOOK and not others
    assert {k.arg for k in call.keywords} == {"assumptions", "expect_interrupt"}


def test_rc2_calls_the_oracle_only_through_the_hook_and_as_overridden() -> None:
    hook_calls = [call for cls in RC2_CLASSES for _, call in _calls(cls, HOOK)]
    assert hook_calls, "RC2 no longer calls _call_oracle"
    for call in hook_calls:
        assert len(call.args) + len(call.keywords) <= 2, ast.unparse(call)
        assert {k.arg for k in call.keywords} <= {"assumptions", "expect_interrupt"}
    for cls in RC2_CLASSES:
        for name in ("solve", "solve_limited"):
            bypass = [f for f, _ in _calls(cls, name) if f != HOOK]
            assert not bypass, f"{cls.__name__}.{'/'.join(bypass)} calls the oracle directly"


def _tiny_wcnf() -> WCNF:
    wcnf = WCNF()
    wcnf.append([1, 2])  # hard: one of the two is true
    wcnf.append([-1], weight=1)
    wcnf.append([-2], weight=2)
    return wcnf


def test_the_override_counts_calls_and_sees_models() -> None:
    seen: list[list[int]] = []
    with _CountingRC2(_tiny_wcnf(), solver="glucose4", adapt=True, exhaust=True, minz=True) as m:
        m.stop, m.on_model = threading.Event(), seen.append
        model = m.compute(expect_interrupt=True)
        assert m.cost == 1 and 1 in model and -2 in model
        assert m.calls >= 2 and seen and all(1 in s or 2 in s for s in seen)


def test_a_stopped_override_ends_the_computation() -> None:
    with _CountingRC2(_tiny_wcnf(), solver="glucose4", adapt=True, exhaust=True, minz=True) as m:
        m.stop = threading.Event()
        m.stop.set()
        with pytest.raises(_Stopped):
            m.compute(expect_interrupt=True)
