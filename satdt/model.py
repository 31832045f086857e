"""Models on disk: a tree together with the input schema it expects.

The file is JSON: the tree (``Tree.to_dict``), the schema of the table it was learnt from
(column names and kinds, categories, label column) and a summary of the search, so that
``satdt predict`` can check and encode new data exactly as the training data was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .data import Schema
from .errors import DataError
from .result import SearchResult
from .tree import Tree

FORMAT = "satdt-model"


def model_dict(tree: Tree, schema: Schema, result: SearchResult | None = None) -> dict[str, Any]:
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
        "version": 1,
        "schema": schema.to_dict(),
        "tree": tree.to_dict(),
        "search": summary,
    }


def save_model(
    path: str | Path, tree: Tree, schema: Schema, result: SearchResult | None = None
) -> None:
    Path(path).write_text(
        json.dumps(model_dict(tree, schema, result), indent=1) + "\n", encoding="utf-8"
    )


def load_model(path: str | Path) -> tuple[Tree, Schema]:
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
    try:
        return Tree.from_dict(data["tree"]), Schema.from_dict(data["schema"])
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{path} is a damaged satdt model ({exc})") from None
