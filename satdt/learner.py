"""Moved to :mod:`satdt.estimators.tree`: this old path still works, with a FutureWarning, until the release
that :data:`satdt.errors.REMOVED_IN` names."""

from __future__ import annotations

from typing import Any

from .errors import moved_module
from .estimators import base as _base
from .estimators import tree as _tree

moved_module(__name__, "satdt.estimators.tree")
_MOVED = (_tree, _base)
__all__ = [name for module in _MOVED for name in dir(module) if not name.startswith("_")]


def __getattr__(name: str) -> Any:
    for module in _MOVED:
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({name for module in _MOVED for name in dir(module)})
