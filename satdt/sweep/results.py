"""The sweep's results file: JSON lines, a header per run and one record per finished task.

Only the parent process writes it; each record is flushed and fsynced as written, so nothing
that finished is lost, and the last record of a task's key wins when it is read.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import SatdtError
from .spec import SweepJob

# A job's fields left out of its record: where the files are on this machine, how to read them.
_NOT_RECORDED = ("train", "test", "read")


def _now() -> str:
    """The time now (UTC, milliseconds), as the records write it."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _job_record(job: SweepJob) -> dict[str, Any]:
    """The first fields of a task's result record: its type and the job's fields, by name."""
    return {
        "type": "result",
        **{k: v for k, v in asdict(job).items() if k not in _NOT_RECORDED},
    }


def read_results(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(headers, results)`` of a results file; the last record of each task key wins.

    A torn last line (the sweep was killed while writing it) is ignored: that task reruns.
    Every other line must be a record as the sweep writes it (the fields the report reads,
    of their types): a damaged or edited line is a :class:`~satdt.core.errors.SatdtError`
    that names the line, the field and the value.
    """
    headers: list[dict[str, Any]] = []
    results: dict[str, dict[str, Any]] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        return headers, []
    except UnicodeDecodeError:
        raise SatdtError(f"{path} is not a sweep's results file (not UTF-8 text)") from None
    except OSError as exc:
        raise SatdtError(f"cannot read the results file {path}: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            if number == len(lines):  # no newline after it: torn by a kill
                continue
            raise SatdtError(f"{path}, line {number}: not a JSON record") from None
        kind = _check_record(record, f"{path}, line {number}")
        if kind == "header":
            headers.append(record)
        elif kind == "result":
            results[record["key"]] = record
    return headers, list(results.values())


_NUMBER = (int, float)
_NONE = (type(None),)
# The fields of the records that the report and a rerun read, with the JSON types each may
# hold: every header; every result; the results of the tasks that ran ("status": "ok"), and
# what those may leave out.
_HEADER_FIELDS: dict[str, tuple[type, ...]] = {"satdt": (str,)}
_RESULT_FIELDS: dict[str, tuple[type, ...]] = {
    "key": (str,),
    "data": (str,),
    "label": (str,),
    "params": (dict,),
    "fold": (int,),
    "time_limit": _NUMBER + _NONE,
    "status": (str,),
}
_OK_FIELDS: dict[str, tuple[type, ...]] = {
    "runtime": _NUMBER,
    "train_error": _NUMBER + _NONE,
    "objective": (str, *_NONE),
}
_OK_OPTIONAL: dict[str, tuple[type, ...]] = {
    "test_accuracy": _NUMBER + _NONE,
    "proven_optimal": (bool, *_NONE),
    "nodes": (int, *_NONE),
    "objective_value": _NUMBER + _NONE,
    "history": (list,),
}
_TYPE_NAMES = {str: "a string", dict: "an object", list: "a list", bool: "a boolean"}
_FIX = "the results file is damaged or was edited: remove the line (a rerun of the sweep redoes it)"


def _damaged(where: str, what: str, value: Any) -> SatdtError:
    return SatdtError(f"{where}: {what}, got {value!r:.60}; {_FIX}")


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool)


def _check_record(record: Any, where: str) -> str | None:
    """The record's type (``"header"``, ``"result"``, None for another), once its fields are
    checked; a :class:`~satdt.core.errors.SatdtError` for a field of the wrong type."""
    if not isinstance(record, dict):
        raise _damaged(where, "a record is a JSON object", record)
    kind = record.get("type")
    if kind == "header":
        _check_fields(record, _HEADER_FIELDS, where, required=False)
    elif kind == "result":
        _check_fields(record, _RESULT_FIELDS, where, required=True)
        if record["status"] not in ("ok", "failed"):
            raise _damaged(where, "status must be 'ok' or 'failed'", record["status"])
        depth = record["params"].get("max_depth")
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)):
            raise _damaged(where, "params['max_depth'] must be an integer or null", depth)
        if record["status"] == "ok":
            _check_fields(record, _OK_FIELDS, where, required=True)
            _check_fields(record, _OK_OPTIONAL, where, required=False)
            for point in record.get("history") or ():
                if (
                    not isinstance(point, list)
                    or len(point) < 2
                    or not all(map(_is_number, point[:2]))
                ):
                    raise _damaged(where, "history holds [seconds, value] pairs of numbers", point)
    return kind if isinstance(kind, str) else None


def _check_fields(
    record: dict[str, Any], fields: dict[str, tuple[type, ...]], where: str, required: bool
) -> None:
    """Each field of ``fields`` (absent only when not ``required``) holds one of its types (a
    boolean is no number)."""
    for name, types in fields.items():
        if name not in record:
            if required:
                raise SatdtError(f"{where}: the result record has no field {name!r}; {_FIX}")
            continue
        value = record[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            allowed = ["a number" if float in types else "an integer"] if int in types else []
            allowed += [_TYPE_NAMES[t] for t in types if t in _TYPE_NAMES]
            allowed += ["null"] if type(None) in types else []
            raise _damaged(where, f"{name} must be {' or '.join(allowed)}", value)


class ResultsFile:
    """The append-only JSON-lines file a sweep writes, from the parent process only.

    Opening it repairs a torn last line (cut back to the last newline), so appending after a
    killed run keeps every line valid JSON. Each record is flushed and fsynced as written.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(self.path, "a+b")  # noqa: SIM115 (held open for the whole sweep)
        size = self.file.seek(0, os.SEEK_END)
        if size:
            self.file.seek(max(0, size - (1 << 20)))
            tail = self.file.read()
            if not tail.endswith(b"\n"):
                cut = tail.rfind(b"\n")
                self.file.truncate(size - len(tail) + cut + 1 if cut >= 0 else 0)
                self.file.seek(0, os.SEEK_END)

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, default=_item_or_str, allow_nan=True) + "\n"
        self.file.write(line.encode())
        self.file.flush()
        os.fsync(self.file.fileno())

    def close(self) -> None:
        self.file.close()


def _item_or_str(value: object) -> object:
    """What JSON cannot write, written anyway: a NumPy scalar as its Python value, anything
    else as its ``str`` (a record is never lost to an odd parameter value)."""
    if isinstance(value, np.generic):
        return value.item()
    return str(value)
