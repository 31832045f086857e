"""Model files: a model with the schema of its table, read back as untrusted input.

A model file is JSON: the format tag and version, the kind of model (:data:`MODEL_KINDS`)
and its ``to_dict()``, the schema of the table it was learnt from (column names and kinds,
categories, label column) and a summary of the search, so that ``satdt predict`` can check
and encode new data exactly as the training data was. Files are shared between people, so
:func:`load_model` checks everything it reads: the format and its version (a newer one is
named), every field of the model (:meth:`Model.from_dict <satdt.models.base.Model.from_dict>`:
types, node indices, one tree or a layered DAG, finite thresholds, classes that agree with
the counts), the schema, and that the two agree; a damaged or edited file is refused with
one :class:`~satdt.core.errors.DataError` line, in time linear in its size.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import DataError, ModelError
from ..data import Schema
from .base import Model
from .diagram import Diagram
from .fields import NewerFormatError, shown
from .tree import Tree

if TYPE_CHECKING:
    from ..task.result import SearchResult

FORMAT = "satdt-model"
VERSION = 2  # version 1 files hold a tree under "tree", without "kind" and "model"

# Every kind of model a file may hold, by its ``kind``.
MODEL_KINDS: dict[str, type[Model]] = {Tree.kind: Tree, Diagram.kind: Diagram}

_DAMAGED = "the file is damaged or was edited: save the model again"


def model_dict(model: Model, schema: Schema, result: SearchResult | None = None) -> dict[str, Any]:
    """The JSON-ready form of a fitted model.

    Parameters
    ----------
    model : Model
        The tree or the diagram.
    schema : Schema
        The schema of the table the model was learnt from.
    result : SearchResult, optional
        The search that found the model, summarised in the file.

    Returns
    -------
    dict
        The document :func:`save_model` writes and :func:`read_model_dict` reads.
    """
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
    """Write a model file (:func:`model_dict` as JSON) that :func:`load_model` reads.

    Parameters
    ----------
    path : str or Path
        The file to write.
    model : Model
        The tree or the diagram.
    schema : Schema
        The schema of the table the model was learnt from.
    result : SearchResult, optional
        The search that found the model, summarised in the file.
    """
    Path(path).write_text(
        json.dumps(model_dict(model, schema, result), indent=1) + "\n", encoding="utf-8"
    )


def load_model(path: str | Path) -> tuple[Model, Schema]:
    """Read a model file written by :func:`save_model`, checked as untrusted input.

    Parameters
    ----------
    path : str or Path
        The model file.

    Returns
    -------
    tuple of (Model, Schema)
        The model and the schema to read data for it with.

    Raises
    ------
    DataError
        When the file is missing, not JSON, not a satdt model, written by a newer satdt, or
        damaged (a :class:`~satdt.core.errors.ModelError`): one line that names the file, the
        rule, the value seen and the fix.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"model file not found: {path}; check the path") from None
    except IsADirectoryError:
        raise DataError(f"{path} is a directory, not a model file") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path} is not a satdt model (not UTF-8 text: {exc})") from None
    except OSError as exc:
        raise DataError(f"cannot read the model file {path}: {exc.strerror or exc}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path} is not a satdt model (not valid JSON: {exc})") from None
    except RecursionError:
        raise ModelError(f"{path} is not a satdt model (JSON nested too deeply)") from None
    return read_model_dict(document, str(path))


def read_model_dict(document: Any, source: str = "the model") -> tuple[Model, Schema]:
    """The model and the schema of a parsed model file (:func:`model_dict`'s document).

    Parameters
    ----------
    document : object
        The file's JSON, parsed (anything: it is checked).
    source : str, default "the model"
        The file's name, for messages.

    Returns
    -------
    tuple of (Model, Schema)
        The model and the schema to read data for it with.

    Raises
    ------
    DataError
        As :func:`load_model`.
    """
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        name = Path(source).name
        raise DataError(
            f"{source} is not a satdt model: save one with 'satdt infer ... --save {name}'"
        )
    version = document.get("version")
    if type(version) is not int or version < 1:
        raise ModelError(
            f"model file {source}: the 'version' field must be a positive integer; got "
            f"{shown(version)}; {_DAMAGED}"
        )
    if version > VERSION:
        raise NewerFormatError(
            f"model file {source} was written by a newer satdt (model file version {version}; "
            f"this satdt reads versions 1 to {VERSION}): upgrade satdt to read it"
        )
    kind, body = (
        ("tree", document.get("tree"))
        if version == 1
        else (
            document.get("kind"),
            document.get("model"),
        )
    )
    if not isinstance(kind, str) or kind not in MODEL_KINDS:
        raise ModelError(
            f"{source} holds a model of kind {shown(kind)}, which this version of satdt does not "
            f"know (known: {', '.join(MODEL_KINDS)}); upgrade satdt"
        )
    try:
        schema = Schema.from_dict(document.get("schema"))
    except DataError as exc:
        raise DataError(f"model file {source}: {exc}") from None
    try:
        model = MODEL_KINDS[kind].from_dict(body)
        model.check_columns(schema.feature_names)
    except NewerFormatError as exc:
        raise NewerFormatError(f"model file {source}: {exc}") from None
    except ModelError as exc:
        raise type(exc)(f"model file {source}: {exc}; {_DAMAGED}") from None
    return model, schema
