"""The documentation: the README is the front door (two commands first, at most 250 lines,
every link resolves) and the site under docs/ builds with warnings as errors, running every
example of the gallery."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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


def test_every_gallery_example_is_in_the_site():
    gallery = sorted((ROOT / "examples" / "gallery").glob("plot_*.py"))
    assert len(gallery) >= 12
    for example in gallery:
        first = example.read_text(encoding="utf-8").split('"""')[1].strip().splitlines()
        assert len(first) >= 2 and set(first[1]) == {"="}, f"{example.name}: a title, underlined"


@pytest.mark.slow
def test_the_site_builds_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("sphinx_gallery")
    pytest.importorskip("pydata_sphinx_theme")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-E",
            "-d",
            str(tmp_path / "doctrees"),
            "docs",
            str(tmp_path / "html"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    html = tmp_path / "html"
    for page in ("index.html", "api.html", "guide/methods.html", "auto_examples/index.html"):
        assert (html / page).exists(), page
    for example in (ROOT / "examples" / "gallery").glob("plot_*.py"):
        built = (html / "auto_examples" / f"{example.stem}.html").read_text(encoding="utf-8")
        assert "sphx-glr-script-out" in built or "sphx-glr-single-img" in built, example.name


@pytest.mark.slow
@pytest.mark.parametrize("page", ["README.md", "docs/getting-started/first-steps.md"])
def test_the_python_blocks_of_the_first_pages_run(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    code = "import warnings; warnings.simplefilter('error', FutureWarning)\n" + "\n".join(blocks)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
