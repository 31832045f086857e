"""Model files: a model with the schema of its table.

A model file is JSON: the kind of model (:data:`MODEL_KINDS`) and its ``to_dict()``, the
schema of the table it was learnt from (column names and kinds, categories, label column)
and a summary of the search, so that ``satdt predict`` can check and encode new data
exactly as the training data was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import DataError
from ..data import Schema
from .base import Model
from .diagram import Diagram
from .tree import Tree

if TYPE_CHECKING:
    from ..task.result import SearchResult

FORMAT = "satdt-model"
VERSION = 2


# Every kind of model a file may hold, by its ``kind``.
MODEL_KINDS: dict[str, type[Model]] = {Tree.kind: Tree, Diagram.kind: Diagram}


def model_dict(model: Model, schema: Schema, result: SearchResult | None = None) -> dict[str, Any]:
    """The JSON-ready form of a fitted model."""
    summary = None
    if result is not None:
        summary = {
            "objective": result.objective,
            "objective_value": result.objective_value,
            "lower_bound": result.lower_bound,
            "proven_optimal": result.proven_optimal,
        }
    return {
        "format": FORMAT,
        "version": VERSION,
        "kind": model.kind,
        "schema": schema.to_dict(),
        "model": model.to_dict(),
        "search": summary,
    }


def save_model(
    path: str | Path, model: Model, schema: Schema, result: SearchResult | None = None
) -> None:
    Path(path).write_text(
        json.dumps(model_dict(model, schema, result), indent=1) + "\n", encoding="utf-8"
    )


def load_model(path: str | Path) -> tuple[Model, Schema]:
    """Read a model written by :func:`save_model`; a clear :class:`DataError` otherwise."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"model file not found: {path}; check the path") from None
    except IsADirectoryError:
        raise DataError(f"{path} is a directory, not a model file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path} is not a satdt model (not valid JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DataError(
            f"{path} is not a satdt model: save one with 'satdt infer ... --save {path.name}'"
        )
    # version 1 files hold a tree under "tree"
    kind, body = (
        (data.get("kind"), data.get("model")) if "kind" in data else ("tree", data.get("tree"))
    )
    if kind not in MODEL_KINDS:
        raise DataError(
            f"{path} holds a model of kind {kind!r}, which this version of satdt does not know "
            f"(known: {', '.join(MODEL_KINDS)}); upgrade satdt"
        )
    try:
        return MODEL_KINDS[kind].from_dict(body), Schema.from_dict(data["schema"])
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{path} is a damaged satdt model ({exc})") from None
