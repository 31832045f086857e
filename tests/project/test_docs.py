"""The documentation: the README is the front door (two commands first, at most 250 lines,
every link resolves), every code block of the guide pages runs, and the site under docs/ builds
with warnings as errors (numpydoc's validation and broken cross-references included), running
every example of the gallery and the teaching notebooks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import ROOT

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _pages() -> list[Path]:
    built = ("_build", "auto_examples", "generated")
    pages = [ROOT / "README.md", ROOT / "CHANGELOG.md"]
    pages += [p for p in (ROOT / "docs").rglob("*.md") if not set(p.parts) & set(built)]
    return pages


def test_the_readme_is_a_front_door():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250
    assert lines[2] == "```bash" and "pip install" in lines[3] and "satdt infer" in lines[3]
    assert lines[4].startswith("python -m pytest")


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if "://" in target or target.startswith("mailto:"):
            continue
        assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: {target} is missing"


def test_every_benchmark_table_says_when_where_and_how():
    """Each table of the benchmarks page is preceded by its **Measured** line: the date, the
    machine (cores, CPU model, Python version) and the command that made it."""
    lines = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8").splitlines()
    headers = [i - 1 for i, line in enumerate(lines) if line.startswith("|---")]
    assert headers
    previous = 0
    for header in headers:
        before = "\n".join(lines[previous:header])
        measured = before[before.rfind("**Measured**") :] if "**Measured**" in before else ""
        where = f"benchmarks.md:{header + 1}"
        assert re.search(r"\b20\d\d-\d\d-\d\d\b", measured), f"{where}: no date"
        assert re.search(r"\d+ cores, .+\(`lscpu`", measured), f"{where}: no cores, CPU"
        assert re.search(r"Python 3\.\d+", measured), f"{where}: no Python version"
        assert "`python benchmarks/" in measured, f"{where}: no command"
        previous = header + 2
        while previous < len(lines) and lines[previous].startswith("|"):
            previous += 1


def test_every_gallery_example_is_in_the_site():
    gallery = sorted((ROOT / "examples" / "gallery").glob("plot_*.py"))
    assert len(gallery) >= 12
    for example in gallery:
        first = example.read_text(encoding="utf-8").split('"""')[1].strip().splitlines()
        assert len(first) >= 2 and set(first[1]) == {"="}, f"{example.name}: a title, underlined"


def test_numpydoc_validates_the_api_reference():
    """The build checks every docstring the API reference shows (the slow build below fails
    on a warning); the checks left out, and the objects, are few and each says why."""
    import runpy

    conf = runpy.run_path(str(ROOT / "docs" / "conf.py"))
    checks = conf["numpydoc_validation_checks"]
    assert "all" in checks and len(checks) <= 8, checks  # "all" minus the listed checks
    for kept in ("PR01", "PR04", "RT01", "GL08", "SS01", "SS05"):
        assert kept not in checks, kept
    assert not conf["numpydoc_validation_exclude"]  # every public docstring is validated


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """The site, built once per pytest run, with warnings as errors: Sphinx's run and the
    folder of its HTML. In a temporary folder, or in ``$SATDT_DOCS_OUT`` (kept, for a person to
    look at its pages and screenshots)."""
    for module in ("sphinx", "sphinx_gallery", "pydata_sphinx_theme", "myst_nb", "sphinx_design"):
        pytest.importorskip(module)
    kept = os.environ.get("SATDT_DOCS_OUT")
    out = Path(kept).resolve() if kept else tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "-n",  # nitpicky: every cross-reference resolves
            "--keep-going",
            "-q",
            "-E",
            "-d",
            str(out / "doctrees"),
            "docs",
            str(out / "html"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    return built, out / "html"


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium executable; skips the test (before the site is built for it) without one."""
    from browser import find_chromium

    executable = find_chromium()
    if executable is None:
        pytest.skip("no Chromium on the PATH: `apt-get install chromium` (Debian) installs it")
    return executable


@pytest.mark.slow
def test_the_site_builds_with_warnings_as_errors(site):
    out, html = site
    invalid = [line for line in out.stderr.splitlines() if "[numpydoc] Validation" in line]
    assert not invalid, "docstrings numpydoc rejects:\n" + out.stderr[-4000:]
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    for page in ("index.html", "api.html", "guide/methods.html", "auto_examples/index.html"):
        assert (html / page).exists(), page
    for example in (ROOT / "examples" / "gallery").glob("plot_*.py"):
        built = (html / "auto_examples" / f"{example.stem}.html").read_text(encoding="utf-8")
        assert "sphx-glr-script-out" in built or "sphx-glr-single-img" in built, example.name
    for notebook in (ROOT / "examples" / "notebooks").glob("*.ipynb"):  # run, with pictures
        built = (html / "teaching" / "notebooks" / f"{notebook.stem}.html").read_text("utf-8")
        assert built.count("<img") >= 3 and "cell_output" in built, notebook.name


def _serve(folder: Path) -> tuple[ThreadingHTTPServer, str]:
    """``folder`` served on 127.0.0.1 by a thread (the search page fetches its index, which a
    ``file://`` page may not); the server and its address."""
    import functools
    import threading

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/"


# The landing page's first screen at 1280 px (what a visitor sees before scrolling): the picture,
# the two commands, the example and the first row of cards, each element's top in CSS pixels.
FIRST_SCREEN = """({
    picture: document.querySelector(".landing-hero img")?.getBoundingClientRect().top,
    commands: document.querySelector(".landing-hero .highlight-bash")?.getBoundingClientRect().top,
    example: document.querySelector(".landing-hero .highlight-python")?.getBoundingClientRect().top,
    cards: document.querySelector(".sd-card")?.getBoundingClientRect().top,
    n_cards: document.querySelectorAll(".sd-card").length,
})"""
SEARCH_DONE = "document.querySelector('#search-results .search-summary')?.innerText"
SEARCH_RESULTS = """Array.from(document.querySelectorAll("#search-results ul.search li > a"),
    (a) => [a.textContent.trim(), a.getAttribute("href")])"""


@pytest.mark.slow
def test_every_page_loads_in_a_browser(chromium, site):
    """Every page of the built site (the guide, the gallery, the API reference, the teaching
    notebooks) opened in headless Chromium at 1280 px: it loads with no error in the JavaScript
    console, every image loads and nothing is fetched from another site; the search's first
    answer to "minimum depth" is the page on the minimum-depth search; the landing page shows its picture, commands, example and cards before any
    scrolling. Screenshots of the landing page and a gallery page go to ``_screenshots/`` in the
    build."""
    from browser import Chromium

    out, html = site
    assert out.returncode == 0, "the site did not build:\n" + out.stderr[-4000:]
    hidden = {"_static", "_sources", "_images", "_downloads", "doctrees"}
    pages = sorted(
        p.relative_to(html).as_posix()
        for p in html.rglob("*.html")
        if not hidden & set(p.relative_to(html).parts)
    )
    for page in ["index.html", "api.html", "search.html", "teaching/index.html"] + [
        f"{folder}/{source.stem}.html"
        for folder in ("guide", "getting-started", "how-it-works")
        for source in (ROOT / "docs" / folder).glob("*.md")
    ]:
        assert page in pages, page
    for example in (ROOT / "examples" / "gallery").glob("plot_*.py"):
        assert f"auto_examples/{example.stem}.html" in pages, example.name
    assert sum(page.startswith("generated/") for page in pages) >= 20  # the API's pages
    server, base = _serve(html)
    shots = html / "_screenshots"
    try:
        with Chromium(chromium, width=1280, height=800) as browser:
            problems = {}
            for page in pages:
                visit = browser.visit(base + page)
                assert visit.title, page
                if visit.problems:
                    problems[page] = visit.problems
            assert not problems, "\n".join(f"{p}: {'; '.join(e)}" for p, e in problems.items())

            browser.visit(base + "search.html?q=minimum+depth")
            summary = browser.wait_until(SEARCH_DONE, timeout=30)
            results = browser.evaluate(SEARCH_RESULTS)
            assert results, summary  # the page's index entry puts it first
            assert results[0][1].startswith("how-it-works/minimum-depth.html"), results[:5]

            landing = browser.visit(base + "index.html")
            assert not landing.problems, landing.problems
            seen = browser.evaluate(FIRST_SCREEN)
            assert seen["n_cards"] >= 6, seen
            for element in ("picture", "commands", "example", "cards"):
                assert seen[element] is not None and seen[element] < 800, (element, seen)
            browser.screenshot(shots / "index.png")
            browser.screenshot(shots / "index-full.png", full_page=True)
            browser.visit(base + "auto_examples/plot_01_minimum_depth_numeric.html")
            browser.screenshot(shots / "gallery-minimum-depth.png")
    finally:
        server.shutdown()
        server.server_close()
    for shot in ("index.png", "index-full.png", "gallery-minimum-depth.png"):
        png = (shots / shot).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == 1280, shot


@pytest.mark.slow
@pytest.mark.parametrize(
    "page", ["README.md", "docs/index.md", "docs/getting-started/first-steps.md"]
)
def test_the_python_blocks_of_the_first_pages_run(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    code = "import warnings; warnings.simplefilter('error', FutureWarning)\n" + "\n".join(blocks)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]


# Every code block of the guide pages runs: the ```python blocks of one page in order, in one
# namespace, and the ```bash / ```console / ```sh blocks whose first command is `satdt`
# through the command line, in a temporary directory holding a copy of the shipped data
# (examples/data, examples/sweeps). A page that reads ../shared/data gets it next to that
# directory, as next to the repository, and is skipped when it is not there.
GUIDE_DIRS = ("getting-started", "guide", "teaching", "how-it-works")
FENCE = re.compile(r"^```([\w{}-]*)([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)
SHELL = ("bash", "console", "sh", "shell")
EXIT_CODE = re.compile(r"#.*\bexit(?:s| code)?\s+(\d+)\b")
SHARED_DATA = ROOT.parent / "shared" / "data"
# pages whose blocks take more than a few seconds run only with the slow tests: sweeps.md runs
# 180 cross-validation fits twice over (once on a local Dask cluster), about 10 s on two cores
SLOW_PAGES = {"docs/guide/sweeps.md"}


def _guide_pages() -> list[Path]:
    return sorted(p for d in GUIDE_DIRS for p in (ROOT / "docs" / d).glob("*.md"))


def _blocks(page: Path) -> list[tuple[str, str]]:
    """The fenced blocks of a page, ``{include}`` directives replaced by the blocks of the
    page they include, as (language, code)."""
    blocks = []
    for language, argument, code in FENCE.findall(page.read_text(encoding="utf-8")):
        if language == "{include}":
            blocks += _blocks((page.parent / argument.strip()).resolve())
        else:
            blocks.append((language, code))
    return blocks


def _runnable(page: Path) -> list[tuple[str, str]]:
    return [
        (language, code)
        for language, code in _blocks(page)
        if language == "python"
        or (language in SHELL and code.lstrip().removeprefix("$ ").startswith("satdt "))
    ]


def _solve_with_pysat(cnf: str, out: str) -> int:
    """What ``minisat CNF OUT`` does, for a machine without MiniSat: the result file in
    MiniSat's format, exit code 10 (SAT) or 20 (UNSAT)."""
    from pysat.formula import CNF
    from pysat.solvers import Minisat22

    with Minisat22(bootstrap_with=CNF(from_file=cnf).clauses) as solver:
        sat = solver.solve()
        model = solver.get_model() if sat else None
    text = "SAT\n" + " ".join(map(str, model)) + " 0\n" if sat else "UNSAT\n"
    Path(out).write_text(text, encoding="utf-8")
    return 10 if sat else 20


def _run_shell_block(code: str, where: str) -> None:
    import shlex
    import shutil

    from satdt.cli import main

    lines = [line.strip() for line in code.splitlines()]
    if any(line.startswith("$ ") for line in lines):  # a console session: the rest is output
        lines = [line for line in lines if line.startswith("$ ")]
    for line in lines:
        line = line.removeprefix("$ ")
        if not line or line.startswith("#"):
            continue
        argv = shlex.split(line, comments=True)
        expected = int(m.group(1)) if (m := EXIT_CODE.search(line)) else 0
        if argv[0] == "satdt":
            status = main(argv[1:])
            assert status == expected, f"{where}: `{line}` exited {status}, expected {expected}"
        elif argv[0] == "minisat":  # the external solver of the teaching pages
            if shutil.which("minisat"):
                status = subprocess.run(argv, capture_output=True, timeout=60).returncode
            else:
                status = _solve_with_pysat(*argv[1:3])
            assert status in (10, 20), f"{where}: `{line}` exited {status}"
        else:
            raise AssertionError(
                f"{where}: no rule to run `{line}` (teach tests/project/test_docs.py)"
            )


def _page_param(page: Path):
    name = str(page.relative_to(ROOT))
    marks = [pytest.mark.slow] if name in SLOW_PAGES else []
    return pytest.param(page, id=name, marks=marks)


@pytest.mark.parametrize("page", [_page_param(p) for p in _guide_pages() if _runnable(p)])
def test_the_code_blocks_of_the_guide_pages_run(page, tmp_path, monkeypatch):
    import shutil
    import warnings

    blocks = _runnable(page)
    if any("../shared/data" in code for _, code in blocks):
        if not SHARED_DATA.is_dir():
            pytest.skip(f"{page.name} reads ../shared/data, not found at {SHARED_DATA}")
        (tmp_path / "shared").mkdir()
        (tmp_path / "shared" / "data").symlink_to(SHARED_DATA, target_is_directory=True)
    work = tmp_path / "work"
    for folder in ("data", "sweeps"):
        shutil.copytree(ROOT / "examples" / folder, work / "examples" / folder)
    monkeypatch.chdir(work)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": "__main__"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        for number, (language, code) in enumerate(blocks, 1):
            where = f"{page.relative_to(ROOT)}, block {number}"
            if language == "python":
                exec(compile(code, where, "exec"), namespace)
            else:
                _run_shell_block(code, where)
