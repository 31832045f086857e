"""Moved to :mod:`satdt.models.export`: this old path still works, with a FutureWarning, until
the release that :data:`satdt.errors.REMOVED_IN` names."""

from __future__ import annotations

from typing import Any

from .errors import moved_module
from .models import export as _moved

moved_module(__name__, _moved.__name__)
__all__ = [name for name in dir(_moved) if not name.startswith("_")]  # as `import *` gave


def __getattr__(name: str) -> Any:
    return getattr(_moved, name)


def __dir__() -> list[str]:
    return dir(_moved)
