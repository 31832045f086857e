"""Pictures of models: ``satdt.plot.plot_tree`` / ``save_tree``, the loop, the Pareto front,
the notebooks' inline SVG and the CLI's ``--draw`` / ``--draw-loop``, with and without matplotlib.

A drawing is checked node by node: every box's text carries the gid ``satdt-node-...``, which
an SVG file keeps as the id of a group, so the boxes drawn are counted, not just the file.
"""

from __future__ import annotations

import itertools
import re
import sys

import numpy as np
import pytest
from helpers import ROOT

from satdt import Diagram, OptimalTreeClassifier, Tree, read_csv
from satdt.cli import main
from satdt.core.errors import SatdtError

pytest.importorskip("matplotlib", reason="the plot extra is not installed")

from matplotlib.figure import Figure

from satdt.plot import model_svg, plot_loop, plot_pareto, plot_tree, save_tree

EXAMPLES = ROOT / "examples" / "data"
MOUSE = EXAMPLES / "mouse.csv"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def node_ids(svg: str) -> list[str]:
    return re.findall(r'id="satdt-node-([a-z]+-\d+)"', svg)


def boxes(model) -> int:
    """The boxes a full drawing has: every node (a diagram's class terminals included)."""
    return model.n_nodes


def chain(depth: int) -> Tree:
    """A tree of the given depth testing x[0] <= 0.5, x[1] <= 0.5, ... down one side."""
    nested: object = 1
    for level in reversed(range(depth)):
        nested = (level, 0.5, level % 2, nested)
    X = np.array(list(itertools.product([0, 1], repeat=depth)), dtype=float)
    tree = Tree.from_nested(
        nested, classes=["a", "b"], feature_names=[f"f{i}" for i in range(depth)]
    )
    return tree.with_counts(X, tree.predict_index(X))


def parity_diagram() -> Diagram:
    """Parity of four bits in six nodes, with arcs that skip layers (n1.0 -> odd, n2.0 -> n3.0...)."""
    return Diagram(
        [0, 1, 1, 2, 2, 3],
        [0, 1, 1, 2, 2, 3],
        [0.5] * 6,
        [1, 3, 4, -1, 5, -1],
        [2, -2, 3, 5, -2, -2],
        n_features=4,
        classes=["even", "odd"],
        feature_names=["a", "b", "c", "d"],
    )


@pytest.fixture(scope="module")
def mouse():
    data = read_csv(MOUSE)
    model = OptimalTreeClassifier(method="sat").fit_dataset(data)
    return data, model


def models(mouse_model):
    tree = mouse_model.tree_
    return {
        "tree": tree,
        "one leaf": Tree.single_leaf(0, ["only"]),
        "deep tree": chain(8),
        "diagram": parity_diagram(),
        "diagram of a tree": Diagram.from_tree(tree),
        "one terminal": Diagram.single_terminal(1, n_features=2, classes=["a", "b"]),
    }


@pytest.mark.parametrize(
    "name", ["tree", "one leaf", "deep tree", "diagram", "diagram of a tree", "one terminal"]
)
def test_every_model_kind_is_drawn_box_by_box(mouse, tmp_path, name):
    model = models(mouse[1])[name]
    svg = tmp_path / "m.svg"
    save_tree(model, svg, title=name)
    ids = node_ids(svg.read_text())
    assert len(ids) == len(set(ids)) == boxes(model)
    png = tmp_path / "m.png"
    save_tree(model, png)
    data = png.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    from matplotlib.image import imread

    pixels = imread(png)
    assert pixels.shape[0] > 50 and pixels.shape[1] > 50
    assert pixels[..., :3].std() > 0.05  # not a blank image
    # the same boxes as text artists of an Axes the caller owns
    ax = Figure(figsize=(8, 5)).add_subplot()
    assert plot_tree(model, ax) is ax
    drawn = [t for t in ax.texts if (t.get_gid() or "").startswith("satdt-node-")]
    assert len(drawn) == boxes(model)


def test_plot_tree_makes_a_figure_sized_to_the_model():
    import matplotlib.pyplot as plt

    small, deep = plot_tree(chain(1)), plot_tree(chain(6))
    try:
        assert small.figure is not deep.figure
        assert deep.figure.get_size_inches()[1] > small.figure.get_size_inches()[1]
        assert sum((t.get_gid() or "").startswith("satdt-node-") for t in deep.texts) == 13
    finally:
        plt.close(small.figure)
        plt.close(deep.figure)


def test_tree_boxes_show_split_class_and_counts(mouse):
    _, model = mouse
    ax = Figure().add_subplot()
    plot_tree(model, ax, class_names=["healthy", "sick"])
    texts = {t.get_gid(): t.get_text() for t in ax.texts if t.get_gid()}
    root = texts["satdt-node-node-0"]
    tree = model.tree_
    assert tree.condition(0, True) in root
    assert f"n={tree.counts[0].sum():g}" in root
    leaves = [text for gid, text in texts.items() if "-leaf-" in gid]
    assert len(leaves) == tree.n_leaves
    assert all(text.startswith(("class healthy", "class sick")) for text in leaves)
    edges = [t.get_text() for t in ax.texts if not t.get_gid()]
    assert edges.count("yes") == edges.count("no") == tree.n_nodes - tree.n_leaves


def test_names_and_errors_shown():
    tree = Tree.from_nested((0, 0.5, 0, 1), classes=[0, 1])
    tree = tree.with_counts(np.array([[0.0], [1.0], [1.0]]), np.array([0, 1, 0]))
    ax = Figure().add_subplot()
    plot_tree(tree, ax, feature_names=["age"], class_names=["no", "yes"])
    text = " | ".join(t.get_text() for t in ax.texts)
    assert "age <= 0.5" in text and "class yes" in text and "1 wrong" in text
    with pytest.raises(SatdtError, match="class_names must name the 2 classes"):
        plot_tree(tree, ax, class_names=["one"])
    with pytest.raises(SatdtError, match="max_depth must be None or an integer"):
        plot_tree(tree, ax, max_depth=-1)
    with pytest.raises(SatdtError, match="cannot draw a str"):
        plot_tree("tree", ax)
    with pytest.raises(SatdtError, match="not fitted yet"):
        plot_tree(OptimalTreeClassifier(), ax)


def test_max_depth_cuts_with_markers(tmp_path):
    deep = chain(8)
    svg = tmp_path / "cut.svg"
    save_tree(deep, svg, max_depth=2)
    ids = node_ids(svg.read_text())
    # tests at depths 0-2 (3 nodes), their 3 leaves, one marker for the rest
    assert sorted(i.split("-")[0] for i in ids) == ["leaf"] * 3 + ["more"] + ["node"] * 3
    assert "(10 nodes below)" in svg.read_text()
    diagram = parity_diagram()
    save_tree(diagram, svg, max_depth=1)
    ids = node_ids(svg.read_text())
    assert sorted(i for i in ids if i.startswith("node")) == ["node-0", "node-1", "node-2"]
    assert sorted(i for i in ids if i.startswith("more")) == ["more-3", "more-4"]
    assert "terminal-1" in ids  # n1.0's "no" arc goes straight to odd


def test_long_arcs_pass_between_boxes():
    """No arc of a diagram runs through a box of a layer it crosses."""
    from matplotlib.patches import FancyBboxPatch, PathPatch

    ax = Figure(figsize=(6, 8)).add_subplot()
    plot_tree(Diagram.from_tree(chain(5)), ax)
    frames = [p.get_bbox() for p in ax.patches if isinstance(p, FancyBboxPatch)]
    for patch in ax.patches:
        if not isinstance(patch, PathPatch):
            continue
        points = patch.get_path().interpolated(40).vertices
        for frame in frames:
            inside = (
                (points[:, 0] > frame.x0 + 1e-6)
                & (points[:, 0] < frame.x1 - 1e-6)
                & (points[:, 1] > frame.y0 + 1e-6)
                & (points[:, 1] < frame.y1 - 1e-6)
            )
            assert not inside.any()


def test_notebook_pictures(mouse):
    _, model = mouse
    svg = model.tree_._repr_svg_()
    assert svg.startswith("<svg") and len(node_ids(svg)) == model.tree_.n_nodes
    assert len(node_ids(parity_diagram()._repr_svg_())) == boxes(parity_diagram())
    bundle = model._repr_mimebundle_()
    assert bundle["text/plain"] == repr(model) == "OptimalTreeClassifier(method='sat')"
    assert len(node_ids(bundle["image/svg+xml"])) == model.tree_.n_nodes
    assert OptimalTreeClassifier()._repr_mimebundle_() == {"text/plain": "OptimalTreeClassifier()"}
    deep = chain(9)  # cut at depth 6 in a notebook
    assert len(node_ids(model_svg(deep))) < deep.n_nodes
    assert len(node_ids(model_svg(deep, max_depth=9))) == deep.n_nodes


def test_sat_calls_record_their_trees(mouse):
    data, model = mouse
    calls = model.result_.trace
    assert calls and calls[-1].status == "SAT"
    X, y = data.X, np.asarray(data.y)
    for call in calls:
        if call.status != "SAT":
            assert call.tree is None
            continue
        wrong = call.tree.predict(X) != y
        assert call.tree.count_error() == wrong.sum()
        assert all(wrong[row] and y[row] == label for row, label in call.counterexamples)
        assert bool(call.counterexamples) == wrong.any()


def test_plot_loop_one_panel_per_call(mouse, tmp_path):
    _, model = mouse
    result = model.result_
    calls = result.trace
    path = tmp_path / "loop.svg"
    figure = plot_loop(result, path)
    text = path.read_text()
    expected = sum(c.tree.n_nodes for c in calls if c.tree is not None) + result.model.n_nodes
    assert len(node_ids(text)) == expected
    assert text.count('id="satdt-message"') == sum(c.status == "UNSAT" for c in calls)
    assert "proven minimum: depth 4" in text
    assert f"{len(calls)} SAT calls" in text
    assert figure is not None
    small = plot_loop(result, tmp_path / "small.png", max_panels=4, row_names=list(range(100)))
    panels = [t for t in small.texts if "call " in t.get_text()]
    assert len(panels) == 3
    assert f"({len(calls) - 3} not shown)" in small.texts[0].get_text()


def test_plot_loop_needs_sat_calls(tmp_path):
    X = np.array([[0.0], [1.0]])
    model = OptimalTreeClassifier(method="boxes").fit(X, [0, 1])
    with pytest.raises(SatdtError, match="plot_loop draws the SAT calls"):
        plot_loop(model.result_, tmp_path / "loop.png")


def test_plot_pareto(mouse, tmp_path):
    data, _ = mouse
    front = OptimalTreeClassifier(objective="size", method="sat", max_depth=5).pareto_dataset(data)
    assert len(front) == 2
    path = tmp_path / "front.svg"
    plot_pareto(front, path)
    text = path.read_text()
    assert text.count('id="satdt-pareto-point') == len(front)
    assert len(node_ids(text)) == sum(tree.n_nodes for _, _, tree, _ in front)


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("suffix", ["png", "svg", "pdf"])
def test_cli_draw_writes_each_format(capsys, tmp_path, suffix):
    picture = tmp_path / f"tree.{suffix}"
    code, out, err = run(capsys, "infer", MOUSE, "--draw", picture)
    assert code == 0, err
    assert "depth: 4" in out and f"tree drawn to {picture}" in err
    data = picture.read_bytes()
    signature = {"png": PNG_SIGNATURE, "pdf": b"%PDF", "svg": b"<?xml"}[suffix]
    assert data.startswith(signature)
    if suffix == "svg":  # every node of the tree printed is drawn (the portfolio's arms
        # may find different trees of depth 4 on a loaded machine)
        nodes = int(re.search(r"^nodes: (\d+)", out, re.MULTILINE).group(1))
        assert len(node_ids(data.decode())) == nodes >= 9


def test_cli_draw_fit_diagram_pareto_and_saved_model(capsys, tmp_path):
    code, _, err = run(capsys, "fit", MOUSE, "--max-depth", "2", "--draw", tmp_path / "fit.svg")
    assert code == 0, err
    assert len(node_ids((tmp_path / "fit.svg").read_text())) >= 3
    code, _, err = run(
        capsys, "diagram", EXAMPLES / "tiny.csv", "--size", "--widths", "1,2,2", "--draw", tmp_path / "d.svg",
        "--save", tmp_path / "d.json", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    assert node_ids((tmp_path / "d.svg").read_text())
    code, _, err = run(capsys, "predict", tmp_path / "d.json", "--draw", tmp_path / "again.svg")
    assert code == 0, err
    assert sorted(node_ids((tmp_path / "again.svg").read_text())) == sorted(
        node_ids((tmp_path / "d.svg").read_text())
    )
    code, _, err = run(
        capsys, "infer", EXAMPLES / "tiny.csv", "--pareto", "--draw", tmp_path / "front.png"
    )
    assert code == 0, err
    assert (tmp_path / "front.png").read_bytes()[:8] == PNG_SIGNATURE
    code, _, err = run(capsys, "predict", tmp_path / "d.json")
    assert code == 2 and "give the DATA to predict, or --draw FILE" in err


def test_cli_draw_loop(capsys, tmp_path):
    loop = tmp_path / "loop.svg"
    code, out, err = run(capsys, "infer", MOUSE, "--draw-loop", loop, "--quiet")
    assert code == 0, err
    text = loop.read_text()
    assert "mouse.csv: the counterexample-guided loop" in text
    assert re.search(r"adds line \d+ \(\d\)", text)  # rows named by their line in the file
    code, out, err = run(capsys, "infer", MOUSE, "--draw-loop", tmp_path / "l.xyz")
    assert code == 2 and out == "" and "--draw-loop cannot write a .xyz file" in err
    code, out, err = run(capsys, "infer", MOUSE, "--draw-loop", loop, "--method", "boxes")
    assert code == 2 and out == ""
    assert "--draw-loop draws the SAT calls: use --method sat, not boxes" in err


def test_without_matplotlib(capsys, tmp_path, monkeypatch, mouse):
    _, model = mouse
    saved = tmp_path / "m.json"
    assert run(capsys, "infer", MOUSE, "--save", saved, "--quiet")[0] == 0
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    picture = tmp_path / "tree.png"
    for argv, flag in (
        (["infer", MOUSE, "--draw", picture], "--draw"),
        (["infer", MOUSE, "--draw-loop", picture], "--draw-loop"),
        (["diagram", MOUSE, "--size", "--draw", picture], "--draw"),
        (["predict", saved, "--draw", picture], "--draw"),
    ):
        code, out, err = run(capsys, *argv)
        assert code == 2
        assert err.strip() == f'satdt: error: {flag} needs matplotlib: pip install -e ".[plot]"'
        assert out == "" and not picture.exists()
    with pytest.raises(SatdtError, match=r"plot_tree needs matplotlib: pip install"):
        plot_tree(model)
    assert model.tree_._repr_svg_() is None  # Jupyter shows the text repr instead
    assert model._repr_mimebundle_() == {"text/plain": repr(model)}


NOTEBOOKS = ROOT / "examples" / "notebooks"


def test_notebooks_are_committed_without_outputs():
    nbformat = pytest.importorskip("nbformat")
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    assert paths
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
        assert all(not cell.outputs for cell in notebook.cells if cell.cell_type == "code")


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_runs_and_draws(path, tmp_path):
    """Every cell runs (an error fails the test); the models and the loop show as pictures."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    ).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    svgs = [o["data"]["image/svg+xml"] for o in outputs if "image/svg+xml" in o.get("data", {})]
    pngs = [o["data"]["image/png"] for o in outputs if "image/png" in o.get("data", {})]
    assert len(svgs) >= 2 and all(node_ids(svg) for svg in svgs)  # fitted models show themselves
    assert len(pngs) >= 3  # the loop, the Pareto front, tree and diagram side by side
    text = "".join(o.get("text", "") for o in outputs)
    assert "depth 1: 12 variables, 39 clauses -> UNSAT" in text
    assert "tree: 15 tests; diagram: 7 tests" in text
    if path.stem == "minimum_depth_by_sat":  # explanations drawn, optimal trees counted
        assert len(pngs) >= 4 and "smallest AXp:" in text and "CXp:" in text
        assert "28,593,596,438 trees of the minimum depth 4" in text
        assert "680 of them have the fewest nodes, 15" in text


def test_plot_loop_draws_a_teachers_fit(tmp_path):
    """The SAT calls of fit_teacher: each tree with the row the teacher returned, in red."""
    from satdt.task.teachers import FunctionTeacher

    teacher = FunctionTeacher(lambda a, b, c: (a and b) or c, [bool, bool, bool])
    model = OptimalTreeClassifier().fit_teacher(teacher)
    path = tmp_path / "teacher.svg"
    plot_loop(model.result_, path, row_names=[str(i) for i in range(8)])
    text = path.read_text()
    calls = model.result_.trace
    assert f"learning from a teacher: {len(calls)} SAT calls" in text
    assert text.count("the teacher: wrong on") == sum(bool(c.counterexamples) for c in calls)
    assert "the teacher accepts it" in text
