"""The sweep's results file as untrusted input: ``satdt report`` (and a rerun of the sweep)
refuses a damaged or edited line with one line naming the line, the field and the value."""

from __future__ import annotations

import json

import pytest

from satdt.cli import main
from satdt.core.errors import SatdtError
from satdt.sweep import read_results

RESULT = {
    "type": "result",
    "key": "k",
    "data": "a.csv",
    "label": "tree",
    "params": {"max_depth": 2},
    "fold": 0,
    "time_limit": 10.0,
    "status": "ok",
    "runtime": 1.0,
    "train_error": 0.1,
    "test_accuracy": 0.9,
    "objective": "error",
    "objective_value": 3.0,
    "history": [[0.0, 3.0]],
}
BAD_RESULTS = {
    "a line that is not JSON": ("{not json", "line 2: not a JSON record"),
    "a record that is a list": ([1, 2], "a record is a JSON object"),
    "a number as text": ({**RESULT, "runtime": "fast"}, "runtime must be a number"),
    "a field dropped": ({k: v for k, v in RESULT.items() if k != "key"}, "no field 'key'"),
    "a depth as text": (
        {**RESULT, "params": {"max_depth": "2"}},
        "params['max_depth'] must be an integer",
    ),
    "a broken history": ({**RESULT, "history": [[0.0]]}, "[seconds, value] pairs"),
    "an unknown status": ({**RESULT, "status": "fine"}, "status must be 'ok' or 'failed'"),
    "a run without its runtime": (
        {k: v for k, v in RESULT.items() if k != "runtime"},
        "no field 'runtime'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_RESULTS))
def test_report_refuses_a_damaged_results_file_in_one_line(capsys, tmp_path, case):
    record, message = BAD_RESULTS[case]
    path = tmp_path / "results.jsonl"
    line = record if isinstance(record, str) else json.dumps(record)
    header = json.dumps({"type": "header", "satdt": "0.1"})
    path.write_text(f"{header}\n{line}\n{json.dumps({**RESULT, 'key': 'other'})}\n")
    code = main(["report", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert message in err and "line 2" in err
    with pytest.raises(SatdtError, match="line 2"):
        read_results(path)
