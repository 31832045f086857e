"""``satdt born-again``: a BA-Trees forest file in, the tree and its summary out, the tree
saved for ``satdt predict`` and exported in BA-Trees' format; bad files in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from naive import grid_points

from satdt import read_forest
from satdt.cli import main
from satdt.cli.reports import report_of
from satdt.models.faithful import union_thresholds
from satdt.models.files import load_model
from satdt.models.forest import Forest
from satdt.models.forest_io import write_forest

# three trees over three features, hard votes (two of three win)
TREES = [
    (0, 0.5, 0, (1, 1.5, 0, 1)),
    (1, 1.5, 0, (0, 0.5, (2, 2.5, 0, 1), 1)),
    (2, 2.5, 0, 1),
]


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def forest_file(tmp_path: Path) -> tuple[Path, Forest]:
    forest = Forest.from_nested(TREES, 3, [0, 1])
    path = tmp_path / "forest.txt"
    write_forest(path, forest, dataset="toy")
    return path, forest


def test_the_tree_and_its_summary(capsys, forest_file) -> None:
    path, _ = forest_file
    code, out, err = run(capsys, "born-again", path)
    assert code == 0, err
    assert "class:" in out
    assert "depth: " in out and "(proven minimum)" in out
    assert "method: born-again, grid route" in out
    assert "faithful to the forest: proven on every cell of the grid" in out
    assert "time:" in out
    # born-again is not a method of the table of searches: its lines come from its statistics
    from satdt.task.born_again import BornAgainSearchStats

    assert report_of(BornAgainSearchStats) is not None


def test_save_then_predict_and_export_ba_round_trip(capsys, forest_file, tmp_path) -> None:
    path, forest = forest_file
    saved, exported = tmp_path / "tree.json", tmp_path / "tree.txt"
    code, out, err = run(
        capsys, "born-again", path, "--objective", "depth_then_size", "--save", saved,
        "--export-ba", exported, "--quiet",
    )  # fmt: skip
    assert code == 0, err
    tree, schema = load_model(saved)
    assert schema.column_names == ["f0", "f1", "f2"]
    points = grid_points(union_thresholds(forest, tree))
    assert np.array_equal(tree.predict(points), forest.predict(points))
    # BA-Trees' tools read the export: a forest of one tree, the same tree
    one = read_forest(exported)
    assert one.n_trees == 1 and np.array_equal(one.predict(points), forest.predict(points))
    assert one == Forest.from_tree(tree, 3)
    assert "ENSEMBLE: BA" in exported.read_text()
    # satdt predict reads the saved model back
    rows = tmp_path / "rows.csv"
    rows.write_text("f0,f1,f2\n1,2,3\n0,2,3\n1,1,0\n", encoding="utf-8")
    code, out, err = run(capsys, "predict", saved, rows)
    assert code == 0, err
    expected = forest.predict(np.array([[1, 2, 3], [0, 2, 3], [1, 1, 0]], dtype=float))
    assert out.split() == ["class", *map(str, expected.tolist())] == ["class", "1", "1", "0"]
    # and the exported tree is a forest born-again can take again
    code, out, err = run(capsys, "born-again", exported, "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert document["method"] == "born-again" and document["proven_optimal"]
    assert document["depth"] == tree.depth
    assert document["stats"]["route"] == "grid"


def test_json_output_and_time_limit(capsys, forest_file) -> None:
    path, _ = forest_file
    code, out, err = run(capsys, "born-again", path, "--objective", "size", "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert document["objective"] == "size" and document["stats"]["objective"] == "size"
    assert document["objective_value"] == document["n_nodes"] == document["lower_bound"]
    assert "leaves:" in err  # the summary goes to stderr with a JSON output
    code, out, err = run(capsys, "born-again", path, "--time-limit", "1e-9")
    assert code == 0, err
    assert "not proven (time limit)" in out and "at least" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "cannot read the forest file"),
        ("DATASET_NAME: x\n", "the file ends where 'ENSEMBLE:' should be"),
        ("garbage\n", "expected 'DATASET_NAME: ...'"),
    ],
)
def test_a_bad_forest_file_is_one_line(capsys, tmp_path, text, message) -> None:
    path = tmp_path / "forest.txt"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "born-again", path)
    assert code == 2
    assert err.startswith("satdt: error: ") and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert out == ""


def test_a_broken_node_names_its_line(capsys, forest_file, tmp_path) -> None:
    path, _ = forest_file
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("0 IN"))
    lines[at] = lines[at].replace("0 IN 1 2 0", "0 IN 1 2 7")
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = run(capsys, "born-again", bad)
    assert code == 2
    assert f"line {at + 1}: the feature must be in 0..2, got 7" in err


def test_options_that_do_not_apply_are_refused(capsys, forest_file, tmp_path) -> None:
    path, _ = forest_file
    code, _, err = run(capsys, "born-again", path, "--vote", "soft")
    assert code == 2 and "votes 'hard', not 'soft'" in err
    code, _, err = run(capsys, "born-again", path, "--save", tmp_path / "no" / "m.json")
    assert code == 2 and "--save" in err and "does not exist" in err
    code, _, err = run(capsys, "born-again", path, "--time-limit", "-1")
    assert code == 2 and "time" in err
