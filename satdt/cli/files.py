"""The files a command reads and writes: output paths checked before any work, the training
table, and text or a model written out (printed instead, and said so, when that fails)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..core.errors import SatdtError
from ..data import Dataset, read_csv
from ..models.base import Model
from ..models.files import model_dict, save_model
from ..task.result import SearchResult

# Options that name a file a command writes (checked before it reads or searches anything).
_OUTPUTS = {
    "output": "-o/--output",
    "save": "--save",
    "plot": "--plot",
    "draw": "--draw",
    "draw_loop": "--draw-loop",
    "report": "--report",
    "export_ba": "--export-ba",
}


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse output paths that cannot be written, before any work: a missing folder, a
    folder in place of a file, no permission. Nothing is created here."""
    for name, flag in _OUTPUTS.items():
        path = getattr(args, name, None)
        if path:
            _check_writable(Path(path), flag)
    plots = getattr(args, "plots", None)
    if plots:  # a folder, created with its parents if needed
        folder = Path(plots).absolute()
        existing = next(p for p in (folder, *folder.parents) if p.exists())
        if not existing.is_dir():
            raise SatdtError(f"--plots {plots}: {existing} is a file, not a folder")
        if not os.access(existing, os.W_OK):
            raise SatdtError(f"--plots {plots}: no permission to write in {existing}")


def _check_writable(path: Path, flag: str) -> None:
    parent = path.absolute().parent
    if path.is_dir():
        raise SatdtError(f"{flag} {path} is a folder, not a file: name a file in it")
    if not parent.is_dir():
        raise SatdtError(
            f"{flag} {path}: the folder {parent} does not exist; create it or choose another path"
        )
    target = path if path.exists() else parent
    if not os.access(target, os.W_OK):
        raise SatdtError(f"{flag} {path}: no permission to write there; choose another path")


def read_training(args: argparse.Namespace) -> Dataset:
    """The training table named by the data options (``data``, ``--target``, ``--drop``, ...)."""
    target: str | int | None = args.target
    drop = [c.strip() for c in args.drop.split(",") if c.strip()]
    return read_csv(
        args.data,
        target=target,
        drop=drop,
        input_format=args.input_format,
        sep=args.sep,
        missing=getattr(args, "missing", "split"),
    )


def write_output(text: str, output: str | None) -> None:
    """Write ``text`` to ``output`` (stdout when None); if that fails, to stdout, and say so."""
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            sys.stdout.write(text)
            raise SatdtError(
                f"cannot write {output}: {exc.strerror}; the output is printed above instead"
            ) from None
    else:
        sys.stdout.write(text)


def save_model_file(path: str, model: Model, schema: Any, result: SearchResult) -> None:
    """Save a model with ``--save``; if that fails, print it (the saved JSON) and say so."""
    try:
        save_model(path, model, schema, result)
    except OSError as exc:
        sys.stdout.write(json.dumps(model_dict(model, schema, result), indent=1) + "\n")
        raise SatdtError(
            f"cannot save the model to {path}: {exc.strerror}; it is printed above as JSON "
            "(save it from there)"
        ) from None
