"""How a notebook shows a model: a hook that the drawing side fills.

The models import no plotting code (matplotlib and the layouts live in :mod:`satdt.plot`,
which imports the models, not the other way). A model's ``_repr_svg_`` asks :func:`svg`, which
calls the drawing registered with :func:`set_svg`. The package root registers
:func:`satdt.plot.model_svg` behind a lazy import when satdt is imported, so in Jupyter a
:class:`~satdt.Tree` or a :class:`~satdt.Diagram` still shows itself as a
picture; with nothing registered, or without matplotlib, the notebook shows the text repr.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_draw: Callable[[Any], str | None] | None = None


def set_svg(draw: Callable[[Any], str | None] | None) -> None:
    """Register ``draw(model) -> SVG text or None`` as a notebook's picture of a model."""
    global _draw
    _draw = draw


def svg(model: Any) -> str | None:
    """The model drawn as inline SVG by the registered drawing; None without one."""
    return None if _draw is None else _draw(model)
