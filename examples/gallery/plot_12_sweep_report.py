"""
A sweep and its report
======================

A grid of datasets x methods x depths x folds, run on local processes, one JSON line per task;
the report aggregates the folds.
"""

import tempfile
from pathlib import Path

from satdt.sweep.report import aggregate, report_markdown
from satdt.sweep.results import read_results
from satdt.sweep.run import run_sweep

# the shipped data, beside this folder (the site builder runs the example from its folder)
HERE = Path(__file__).parent if "__file__" in globals() else Path.cwd()
DATA = HERE.resolve().parent / "data"
spec = {
    "data": [{"files": [str(DATA / "monk1.csv"), str(DATA / "mouse.csv")]}],
    "estimator": [
        {
            "name": "tree",
            "estimator": "tree",
            "params": {"objective": "error"},
            "grid": {"max_depth": [2, 3], "method": ["blossom", "dl85"]},
        }
    ],
    "folds": 3,
    "time_limit": 20,
}


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        results_file = Path(folder) / "sweep.jsonl"
        summary = run_sweep(spec, results_file, jobs=2)  # two worker processes
        _, results = read_results(results_file)
    print(f"{len(results)} tasks, {summary.progress.failed} failed")
    print(report_markdown(aggregate(results)))


if __name__ == "__main__":  # worker processes import this file: only the parent runs the sweep
    main()
