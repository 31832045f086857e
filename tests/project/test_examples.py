"""Smoke tests: every script in examples/ runs (in a fresh directory) and says what it should."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

EXAMPLES = ROOT / "examples"

CASES = {
    "quickstart.py": ["minimum depth: 4 (proven: True)", "wrote iris_tree.dot"],
    "encode_by_hand.py": [
        "Step 5: UNSAT",
        "27 variables, 97 clauses",
        "predicts every row correctly: True",
    ],
    "counterexamples.py": ["minimum depth 6", "rows the loop used:", "142277"],
    "depth_vs_size.py": ["depth nodes leaves", "stopped:"],
}


@pytest.mark.parametrize("script", sorted(CASES))
def test_example_runs(script: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for expected in CASES[script]:
        assert expected in done.stdout, f"{script}: {expected!r} not in its output"


def test_every_example_is_tested_and_documented() -> None:
    scripts = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert scripts == sorted(CASES)
    for name in scripts:
        assert (EXAMPLES / name).read_text().startswith('"""'), f"{name} has no docstring"


def test_quickstart_writes_dot(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(EXAMPLES / "quickstart.py")],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert (tmp_path / "iris_tree.dot").read_text().startswith("digraph tree {")
