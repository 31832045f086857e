"""The report of a fit opened in headless Chromium, as a student opens it: it renders (not
blank), with no error in the JavaScript console, nothing fetched from the network, the text the
standard library reads back from its HTML, and buttons that work (zoom, open every step, mark an
explanation on the model). Skipped, saying how to install it, without Chromium."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import Chromium, find_chromium
from helpers import EXAMPLES

from satdt import OptimalTreeClassifier, read_csv
from satdt.report.text import normalised, visible_text

pytestmark = pytest.mark.slow

# every step opened, then the body's text as a reader sees it
OPENED_TEXT = """(() => {
  document.querySelectorAll("details").forEach((d) => { d.open = true; });
  return document.body.innerText;
})()"""
MODEL_WIDTH = 'document.querySelector("#model-figure svg").getBoundingClientRect().width'


@pytest.fixture(scope="module")
def chromium() -> str:
    executable = find_chromium()
    if executable is None:
        pytest.skip("no Chromium on the PATH: `apt-get install chromium` (Debian) installs it")
    return executable


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A folder served on 127.0.0.1 (as a page opened by double-click is read from disk, but
    with the HTTP status a visit checks) and its address."""
    folder = tmp_path_factory.mktemp("reports")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield folder, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def _reports(folder: Path) -> dict[str, str]:
    """The reports of a SAT fit (the loop, step by step) and of a minimum-error fit."""
    data = read_csv(EXAMPLES / "mouse.csv")
    sat = OptimalTreeClassifier(method="sat").fit_dataset(data)
    sat.report(folder / "sat.html", X=data)
    iris = read_csv(EXAMPLES / "iris.csv")
    dp = OptimalTreeClassifier(objective="error", max_depth=3).fit_dataset(iris)
    dp.report(folder / "error.html", X=iris)
    return {"sat": "sat.html", "error": "error.html"}


def test_the_reports_render_in_a_browser_and_their_buttons_work(chromium, served) -> None:
    folder, base = served
    pages = _reports(folder)
    with Chromium(chromium, width=1280, height=900) as browser:
        for kind, page in pages.items():
            visit = browser.visit(base + page)
            assert visit.problems == [], f"{page}: {visit.problems}"
            assert visit.title, page
            assert browser.evaluate(MODEL_WIDTH) > 50, f"{page}: the model is not drawn"
            shown = normalised(browser.evaluate(OPENED_TEXT))
            assert len(shown) > 500, f"{page} looks blank"
            html = (folder / page).read_text(encoding="utf-8")
            assert shown == visible_text(html), page
            # zooming in widens the drawing
            before = browser.evaluate(MODEL_WIDTH)
            browser.evaluate("document.querySelector(\"button[data-zoom='1.25']\").click()")
            assert browser.evaluate(MODEL_WIDTH) == pytest.approx(1.25 * before, rel=0.05)
            # an explanation's button marks its nodes on the model
            browser.evaluate('document.querySelector("button[data-marks]").click()')
            marked = browser.evaluate(
                'document.querySelectorAll("#model-figure g.box[data-mark]").length'
            )
            assert marked > 0, f"{page}: no node marked"
            if kind == "sat":  # the loop's steps open and close together
                steps = browser.evaluate('document.querySelectorAll("details.step").length')
                assert steps > 1
                browser.evaluate('document.querySelector("button[data-steps=close]").click()')
                assert (
                    browser.evaluate('document.querySelectorAll("details.step[open]").length') == 0
                )
                browser.evaluate('document.querySelector("button[data-steps=open]").click()')
                assert (
                    browser.evaluate('document.querySelectorAll("details.step[open]").length')
                    == steps
                )
