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
    """
    headers: list[dict[str, Any]] = []
    results: dict[str, dict[str, Any]] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        return headers, []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):  # no newline after it: torn by a kill
                continue
            raise SatdtError(f"{path}, line {number}: not a JSON record") from None
        if record.get("type") == "header":
            headers.append(record)
        elif record.get("type") == "result":
            results[record["key"]] = record
    return headers, list(results.values())


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
