"""The lazy import of matplotlib (the ``plot`` extra) and the error when it is missing.

matplotlib is imported only inside functions, so ``import satdt`` never pays for it.
:func:`check_plot_target` lets a caller (the CLI's ``--plot``, ``--draw``, ``--draw-loop``)
fail before a long search rather than after it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.errors import SatdtError

INSTALL_HINT = 'pip install -e ".[plot]"'


def check_plot_target(path: str | Path | None = None, *, what: str = "plot_history") -> None:
    """Raise :class:`SatdtError` unless a curve can be drawn (to ``path``, when given).

    Checks that matplotlib can be imported and that the file extension of ``path`` names a
    format matplotlib writes (``.png``, ``.pdf``, ``.svg``, ...; no extension means PNG).
    ``what`` names the caller in the message (the CLI passes ``"--plot"``).
    """
    try:
        import matplotlib  # noqa: F401  (first: its absence must win over cached submodules)
        from matplotlib.figure import Figure
    except ImportError:
        raise SatdtError(f"{what} needs matplotlib: {INSTALL_HINT}") from None
    if path is None:
        return
    suffix = Path(path).suffix.lower().lstrip(".")
    supported = Figure().canvas.get_supported_filetypes()
    if suffix and suffix not in supported:
        raise SatdtError(
            f"{what} cannot write a .{suffix} file: use one of "
            + ", ".join(f".{name}" for name in sorted(supported))
        )


def mpl_svg_text() -> Any:
    """A context in which SVG output keeps text as text (smaller, searchable, selectable)."""
    import matplotlib as mpl

    return mpl.rc_context({"svg.fonttype": "none"})


def save_figure(figure: Any, path: str | Path, dpi: float = 110) -> None:
    """Save a figure (the format from the extension), text kept as text in an SVG."""
    try:
        with mpl_svg_text():
            figure.savefig(path, dpi=dpi)
    except OSError as exc:
        raise SatdtError(f"cannot write {path}: {exc.strerror or exc}") from None
