"""Public names of a package imported on first use (PEP 562), so importing the package is cheap.

``import satdt.cli`` must stay light (the command line installs its Ctrl-C handling before
NumPy and PySAT load), and ``import satdt.models`` must not load every model module: each
package lists its public names and the submodule that defines each one.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, public: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose public names load on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    public : dict of str to str
        Each public name and the submodule (relative to the package) that defines it.

    Returns
    -------
    tuple of callable
        ``(__getattr__, __dir__)``, to assign at the package's module level. A name, once
        imported, is kept in the package's namespace, so later lookups cost nothing.
    """

    def __getattr__(name: str) -> Any:
        module = public.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public})

    return __getattr__, __dir__
