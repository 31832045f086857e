"""The HTML report of a fit (``satdt.report``, ``model.report``, ``--report``): read back with
the standard library's HTML parser, section by section, with no browser.

A page is checked for what it must hold (its sections in order, the model drawn box by box,
one step per SAT call, the explanations asked for), for what it must not (a resource from the
network, a user's string read as markup), and for its size on a real table.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser

import numpy as np
import pytest
from helpers import ROOT

from satdt import (
    OptimalDiagramClassifier,
    OptimalTreeClassifier,
    ParameterError,
    Tree,
    read_csv,
)
from satdt.cli import main
from satdt.core.errors import NotFittedError, SatdtError
from satdt.report import SECTIONS, report_html, visible_text
from satdt.report import loop as loop_module
from satdt.task.result import SearchResult

EXAMPLES = ROOT / "examples" / "data"
MOUSE = EXAMPLES / "mouse.csv"
IRIS = EXAMPLES / "iris.csv"
HOSTILE = "<script>alert(1)</script>"
MAX_BYTES = 2_000_000


class Page(HTMLParser):
    """What a page holds: its elements' tags and attributes in order, the text of its style
    and script elements, and the structure the tests look at."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.stack: list[tuple[str, dict[str, str]]] = []
        self.inside: dict[str, list[str]] = {"style": [], "script": [], "title": []}
        self.doctype = ""
        self.boxes: dict[str, list[str]] = {}  # the figure's id (or "" ) -> gids of its boxes
        self.feed(text)
        self.close()

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        self.elements.append((tag, attributes))
        if tag == "g" and "box" in attributes.get("class", "").split():
            figure = next((a.get("id", "") for t, a in reversed(self.stack) if t == "div"), "")
            self.boxes.setdefault(figure, []).append(attributes["data-gid"])
        if tag not in ("meta", "link", "br"):  # the void elements a page holds
            self.stack.append((tag, attributes))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1][0] == tag, f"</{tag}> closes no open <{tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        tag = self.stack[-1][0] if self.stack else ""
        if tag in self.inside and (tag != "title" or self.stack[-2][0] == "head"):
            self.inside[tag].append(data)  # the page's title, not a drawing's tooltip

    def tagged(self, tag: str, kind: str | None = None) -> list[dict[str, str]]:
        """The attributes of each element ``tag`` (of class ``kind``, when given)."""
        return [
            a
            for t, a in self.elements
            if t == tag and (kind is None or kind in a.get("class", "").split())
        ]

    @property
    def sections(self) -> list[str]:
        return [a["id"] for a in self.tagged("section")]

    @property
    def steps(self) -> list[int]:
        return [int(a["data-call"]) for a in self.tagged("details", "step")]

    @property
    def explained(self) -> list[int]:
        return [int(a["data-row"]) for a in self.tagged("div", "explanation")]

    def section_text(self, page: str, anchor: str) -> str:
        start = page.index(f'<section id="{anchor}">')
        return visible_text(page[start : page.index("</section>", start)])


def check_page(page: str) -> Page:
    """The checks every report passes: valid HTML5's frame, the sections in order, the model
    drawn, and no resource from elsewhere."""
    parsed = Page(page)
    assert parsed.doctype.lower() == "doctype html"
    assert parsed.tagged("meta")[0] == {"charset": "utf-8"}
    assert "".join(parsed.inside["title"]).startswith("satdt report")
    assert parsed.sections == [anchor for anchor, _ in SECTIONS]
    links = [a["href"] for a in parsed.tagged("a")]
    assert links == [f"#{anchor}" for anchor, _ in SECTIONS]  # the table of contents, no more
    for tag, attributes in parsed.elements:
        assert "src" not in attributes, tag
        # in-page links only; the page's icon is an empty data address (no request)
        assert attributes.get("href", "#").startswith("#") or attributes == {
            "rel": "icon",
            "href": "data:,",
        }, tag
        assert "xlink:href" not in attributes, tag
    assert [a for a in parsed.tagged("script")] == [{}]  # one inline script, nothing loaded
    style = "".join(parsed.inside["style"])
    assert "@import" not in style and "url(" not in style
    assert "http://" not in page and "https://" not in page
    assert len(parsed.boxes["model-figure"]) >= 1
    assert len(parsed.tagged("svg")) >= 2  # the model and the chart
    return parsed


@pytest.fixture(scope="module")
def mouse():
    return read_csv(MOUSE)


def _report(model, data, **options) -> str:
    return report_html(
        model._fitted_model(),
        model.result_,
        method=model.method_,
        X=data.X,
        row_names=[f"line {n}" for n in data.line_numbers],
        title="mouse.csv",
        **options,
    )


@pytest.mark.parametrize("method", ["sat", "hybrid"])
def test_a_sat_fit_shows_every_call_and_the_explanations(mouse, method):
    model = OptimalTreeClassifier(method=method).fit_dataset(mouse)
    page = _report(model, mouse, rows=[0, 5, 20])
    parsed = check_page(page)
    assert sorted(parsed.boxes["model-figure"]) == sorted(
        f"{'leaf' if model.tree_.feature[i] < 0 else 'node'}-{i}"
        for i in range(model.tree_.n_nodes)
    )
    calls = model.result_.trace
    assert len(calls) > 3
    assert parsed.steps == list(range(1, len(calls) + 1))
    statuses = [a["class"].split()[1] for a in parsed.tagged("details", "step")]
    assert statuses == [call.status.lower() for call in calls]
    # each SAT answer's tree drawn in its step (the budget is far from spent here)
    answered = [call.tree for call in calls if call.status == "SAT"]
    assert len(parsed.tagged("div", "small")) == len(answered)
    assert len(parsed.boxes[""]) == sum(tree.n_nodes for tree in answered)
    assert parsed.explained == [0, 5, 20]
    loop = parsed.section_text(page, "loop")
    added = next(call for call in calls if call.counterexamples)
    row, label = added.counterexamples[0]
    assert f"line {mouse.line_numbers[row]} {label}" in loop  # rows named by their line
    assert "UNSAT" in loop  # the depths below the minimum are refuted
    text = parsed.section_text(page, "explanations")
    assert text.count("smallest AXp (enough to force the prediction)") == 3
    assert "line 2: predicted" in text  # row 0 of the table is line 2 of the file


def test_the_hybrid_fit_shows_which_search_settled_each_depth(mouse):
    model = OptimalTreeClassifier(method="hybrid").fit_dataset(mouse)
    page = _report(model, mouse)
    parsed = check_page(page)
    bounds = parsed.section_text(page, "bounds")
    proofs = model.result_.stats.proofs
    assert "Depths settled" in bounds
    refuted = [p for p in proofs if p.answer == "none"]
    assert refuted and bounds.count("no consistent tree") == len(refuted)
    markers = [a for a in parsed.tagged("path", "marker")]
    assert len(markers) == len([p for p in proofs if p.leaves is None])
    lower = [a for a in parsed.tagged("circle", "lower")]
    assert len(lower) == len({p.depth for p in refuted})  # one step up per depth refuted
    assert len(parsed.explained) == 3  # by default, rows covering the classes predicted
    predicted = model.predict(mouse.X[parsed.explained])
    assert len(set(predicted.tolist())) == len(model.classes_)


def test_a_dp_fit_says_it_has_no_sat_loop(mouse):
    model = OptimalTreeClassifier(objective="error", max_depth=2).fit_dataset(mouse)
    page = _report(model, mouse, rows=2)
    parsed = check_page(page)
    assert parsed.steps == []
    loop = parsed.section_text(page, "loop")
    assert f"No SAT call: the {model.method_} search is not a SAT loop" in loop
    assert len(parsed.explained) == 2
    search = parsed.section_text(page, "search")
    assert "objective error" in search and "proven optimal yes" in search


def test_a_diagram_fit_is_drawn_node_by_node(mouse):
    model = OptimalDiagramClassifier(objective="size", widths=(1, 2, 2, 2)).fit_dataset(mouse)
    page = _report(model, mouse, rows=[1])
    parsed = check_page(page)
    assert len(parsed.boxes["model-figure"]) == model.diagram_.n_nodes
    assert any(g.startswith("terminal-") for g in parsed.boxes["model-figure"])
    loop = parsed.section_text(page, "loop")
    assert f"made {model.result_.stats.sat_calls} SAT calls but did not record" in loop
    assert parsed.explained == [1]
    # the buttons mark nodes that the model figure holds
    drawn = set(parsed.boxes["model-figure"])
    for button in parsed.tagged("button"):
        if "data-marks" in button:
            gids = [pair.split(":")[0] for pair in button["data-marks"].split()]
            assert gids and set(gids) <= drawn


def _full(level: int, depth: int) -> object:
    """A complete tree of ``depth`` levels, in nested form."""
    if level == depth:
        return level % 2
    return (level % 3, 0.5 + level, _full(level + 1, depth), _full(level + 1, depth))


def test_a_deep_tree_keeps_its_own_size_in_a_scrolling_frame():
    tree = Tree.from_nested(_full(0, 8), classes=["a", "b"])
    result = SearchResult("depth", tree, 8, 8, True, 0.5)  # made by hand: no history, no call
    page = report_html(tree, result)
    parsed = check_page(page)
    assert len(parsed.boxes["model-figure"]) == tree.n_nodes == 511
    picture = parsed.tagged("svg", "picture")[0]
    assert picture["width"] == picture["viewbox"].split()[2]  # not shrunk: 12 px text
    assert picture["font-size"] == "12"
    assert "The result holds no history" in parsed.section_text(page, "bounds")
    assert "No SAT call: this search is not a SAT loop" in parsed.section_text(page, "loop")
    assert "No rows were given" in parsed.section_text(page, "explanations")


def test_user_strings_show_as_text():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(40, 2)).astype(float)
    y = np.where(X[:, 0] > 1, "<img src=x onerror=alert(1)>", "plain")
    model = OptimalTreeClassifier().fit(X, y, feature_names=[HOSTILE, "other & more"])
    page = report_html(model, model.result_, method=model.method_, X=X, title=HOSTILE)
    parsed = check_page(page)
    assert parsed.tagged("img") == []
    text = visible_text(page)
    assert f"satdt report: {HOSTILE}" in text
    assert f"{HOSTILE} <= 1.5" in text  # the tree's test, in the drawing and its text
    assert "other & more" in text
    assert "class <img src=x onerror=alert(1)>" in text


def test_visible_text_leaves_out_code_and_keeps_drawings(mouse):
    model = OptimalTreeClassifier(method="sat").fit_dataset(mouse)
    text = visible_text(_report(model, mouse))
    assert "addEventListener" not in text and "font-family" not in text
    root = model.tree_.condition(0, True)
    assert text.count(root) >= 2  # the drawing's box and the tree as text
    counts = (
        f"n={model.tree_.counts[0].sum():g} [{', '.join(f'{c:g}' for c in model.tree_.counts[0])}]"
    )
    box = f"{root}{counts}class {model.classes_[np.argmax(model.tree_.counts[0])]}"
    assert box in text.splitlines()  # a box's lines run together, as a browser's text does
    assert "time (s)" in text  # the chart's axis
    assert text.splitlines()[0] == "satdt report: mouse.csv"


def test_a_report_needs_no_matplotlib(mouse, monkeypatch, tmp_path):
    model = OptimalTreeClassifier(method="sat").fit_dataset(mouse)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    page = model.report(tmp_path / "r.html", X=mouse).read_text(encoding="utf-8")
    assert len(check_page(page).boxes["model-figure"]) == model.tree_.n_nodes


def test_long_lists_are_capped(mouse, monkeypatch):
    model = OptimalTreeClassifier(method="sat").fit_dataset(mouse)
    calls = model.result_.trace
    monkeypatch.setattr(loop_module, "MAX_STEPS", 4)
    monkeypatch.setattr(loop_module, "MAX_ROWS_ADDED", 1)
    monkeypatch.setattr(loop_module, "PICTURE_BUDGET", 0)
    page = _report(model, mouse)
    parsed = check_page(page)
    assert parsed.steps == [1, 2, len(calls) - 1, len(calls)]
    loop = parsed.section_text(page, "loop")
    assert f"... {len(calls) - 4} calls not shown ..." in loop
    shown = [calls[i] for i in (0, 1, -2, -1)]
    many = [call for call in shown if len(call.counterexamples) > 1]
    assert loop.count("more rows added") == len(many)
    assert parsed.tagged("div", "small") == []  # no budget left: the trees as text
    assert loop.count("class:") >= 2


def test_estimator_report(mouse, tmp_path):
    model = OptimalTreeClassifier(method="sat")
    with pytest.raises(NotFittedError, match="not fitted yet"):
        model.report(tmp_path / "r.html")
    model.fit_dataset(mouse)
    written = model.report(tmp_path / "r.html", X=mouse, rows=[3])
    assert written == tmp_path / "r.html"
    parsed = check_page(written.read_text(encoding="utf-8"))
    assert parsed.explained == [3]
    assert "".join(parsed.inside["title"]) == "satdt report: mouse.csv"
    page = model.report(tmp_path / "array.html", X=mouse.X[:10], rows=2).read_text()
    explained = Page(page).explained
    classes = set(model.predict(mouse.X[:10]).tolist())
    assert len(explained) == 2
    assert len(set(model.predict(mouse.X[explained]).tolist())) == min(2, len(classes))
    assert "".join(Page(page).inside["title"]) == "satdt report: OptimalTreeClassifier"
    bare = model.report(tmp_path / "bare.html").read_text()
    assert Page(bare).explained == [] and "No rows were given: pass X" in visible_text(bare)
    with pytest.raises(ParameterError, match=r"rows \[70\] are not rows of X \(it has 70 rows\)"):
        model.report(tmp_path / "r.html", X=mouse, rows=[70])
    with pytest.raises(ParameterError, match="rows must be a number of rows >= 0"):
        model.report(tmp_path / "r.html", X=mouse, rows=-1)
    with pytest.raises(ParameterError, match="no X was given: pass X too"):
        model.report(tmp_path / "r.html", rows=[1])
    with pytest.raises(SatdtError, match=r"report writes an HTML page: name a \.html file"):
        model.report(tmp_path / "r.png")


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_writes_the_report(capsys, tmp_path):
    target = tmp_path / "mouse.html"
    code, _, err = run(capsys, "infer", MOUSE, "--report", target, "-o", tmp_path / "t.txt")
    assert code == 0, err
    assert f"report written to {target}" in err
    page = target.read_text(encoding="utf-8")
    parsed = check_page(page)
    assert len(parsed.steps) > 0 and len(parsed.explained) == 3
    assert "line " in parsed.section_text(page, "explanations")
    target = tmp_path / "fit.html"
    code, _, err = run(capsys, "fit", IRIS, "--max-depth", "2", "--report", target, "--quiet")
    assert code == 0 and err == ""
    assert Page(target.read_text(encoding="utf-8")).steps == []


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("r.png", "--report writes an HTML page: name a .html file, got"),
        ("missing/r.html", "the folder"),
    ],
)
def test_cli_refuses_a_bad_report_path_before_the_search(
    capsys, tmp_path, monkeypatch, name, message
):
    def no_search(*args, **kwargs):
        raise AssertionError("the search ran")

    monkeypatch.setattr(OptimalTreeClassifier, "fit_dataset", no_search)
    monkeypatch.setattr(OptimalDiagramClassifier, "fit_dataset", no_search)
    for command in (["infer"], ["fit", "--max-depth", "2"], ["diagram"]):
        code, out, err = run(capsys, command[0], MOUSE, *command[1:], "--report", tmp_path / name)
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and message in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [["infer"], ["fit", "--max-depth", "3"]],
    ids=["infer", "fit-depth-3"],
)
def test_breast_cancer_report_is_small(capsys, tmp_path, argv):
    datasets = pytest.importorskip("sklearn.datasets")
    frame = datasets.load_breast_cancer(as_frame=True).frame
    data = tmp_path / "breast_cancer.csv"
    frame.to_csv(data, index=False)
    target = tmp_path / "breast_cancer.html"
    code, _, err = run(capsys, argv[0], data, *argv[1:], "--report", target, "--quiet")
    assert code == 0, err
    page = target.read_text(encoding="utf-8")
    assert len(page.encode("utf-8")) < MAX_BYTES
    parsed = check_page(page)
    assert len(parsed.explained) == 3
