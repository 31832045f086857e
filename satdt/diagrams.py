"""Moved to :mod:`satdt.estimators.diagram`: this old path still works, with a FutureWarning, until the release
that :data:`satdt.errors.REMOVED_IN` names."""

from __future__ import annotations

from typing import Any

from .errors import moved_module
from .estimators import diagram as _diagram

moved_module(__name__, "satdt.estimators.diagram")
_MOVED = (_diagram,)
__all__ = [name for module in _MOVED for name in dir(module) if not name.startswith("_")]


def __getattr__(name: str) -> Any:
    for module in _MOVED:
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({name for module in _MOVED for name in dir(module)})
