"""satdt as its users install it: ``python -m build`` makes the sdist and the wheel, ``twine
check`` passes them, each holds what it should, and the wheel installed into a fresh virtual
environment (no checkout on its path) runs: ``satdt --version``, the README's first command on a
copy of the shipped table, and an import of every public name and subpackage."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from helpers import ROOT

# Run by the installed interpreter: every public name and subpackage imports from the installed
# package, its type marker is there, and a fit runs (SAT: no kernels to compile).
SMOKE = """
import importlib, pkgutil, sys
from pathlib import Path

import satdt

checkout = Path(sys.argv[1])
installed = Path(satdt.__file__).resolve().parent
assert checkout not in installed.parents, f"satdt imported from the checkout: {installed}"
assert (installed / "py.typed").is_file(), "no py.typed beside the installed package"
for name in satdt.__all__:
    getattr(satdt, name)
subpackages = [
    module.name
    for module in pkgutil.iter_modules(satdt.__path__, "satdt.")
    if module.ispkg and not module.name.rpartition(".")[2].startswith("_")
]
for name in subpackages:
    importlib.import_module(name)
data = satdt.read_csv("mouse.csv")
model = satdt.OptimalTreeClassifier().fit(data.X, data.y)
assert model.result_.objective_value == 4 and model.result_.proven_optimal, model.result_
print(len(satdt.__all__), "names;", " ".join(subpackages))
"""


def _run(args: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
    out = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert out.returncode == 0, f"{' '.join(args)}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """The sdist and the wheel of this checkout, built by ``python -m build``."""
    pytest.importorskip("build", reason="`build` makes the sdist and wheel: the test extra has it")
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], timeout=900)
    return out


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("satdt-*-py3-none-any.whl")
    return wheel


@pytest.mark.slow
def test_twine_passes_the_sdist_and_the_wheel(dist):
    pytest.importorskip("twine", reason="`twine check` reads the metadata: the test extra has it")
    files = sorted(dist.iterdir(), key=lambda f: f.suffix)
    assert [f.suffix for f in files] == [".gz", ".whl"], files
    out = _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)], 300)
    assert out.stdout.count("PASSED") == 2, out.stdout


@pytest.mark.slow
def test_the_wheel_holds_the_package_alone(dist):
    import satdt

    wheel = _wheel(dist)
    assert wheel.name == f"satdt-{satdt.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(f"satdt-{satdt.__version__}.dist-info/METADATA").decode()
    info = f"satdt-{satdt.__version__}.dist-info/"
    assert {f"{info}licenses/LICENSE", f"{info}METADATA", f"{info}entry_points.txt"} <= set(names)
    assert "satdt/py.typed" in names
    outside = [n for n in names if not n.startswith(("satdt/", info))]
    assert not outside, outside  # no tests, benchmarks, docs or examples
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".nbi", ".nbc"))]
    sources = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "satdt").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    missing = sources - set(names)
    assert not missing, f"modules left out of the wheel (a folder without __init__.py?): {missing}"
    for field in (
        "License-Expression: MIT",
        "Requires-Python: >=3.10",
        "Classifier: Typing :: Typed",
        "Project-URL: Documentation, ",
        "Provides-Extra: plot",
        "Description-Content-Type: text/markdown",
    ):
        assert field in metadata, field


@pytest.mark.slow
def test_the_sdist_holds_the_sources_tests_and_docs(dist):
    import satdt

    (sdist,) = dist.glob("satdt-*.tar.gz")
    top = f"satdt-{satdt.__version__}/"
    with tarfile.open(sdist) as archive:
        names = {name.removeprefix(top) for name in archive.getnames()}
    for needed in (
        "README.md",
        "LICENSE",
        "CHANGELOG.md",
        "pyproject.toml",
        "satdt/__init__.py",
        "satdt/py.typed",
        "tests/project/test_packaging.py",
        "docs/conf.py",
        "docs/index.md",
        "docs/images/tree.png",
        "examples/data/mouse.csv",
        "encodings/README.md",
    ):
        assert needed in names, needed
    built = ("docs/_build/", "docs/auto_examples/", "docs/generated/", "docs/teaching/notebooks/")
    leftovers = [n for n in names if n.startswith(built) or "__pycache__" in n]
    assert not leftovers, leftovers[:10]


@pytest.mark.slow
def test_the_wheel_runs_from_a_clean_virtual_environment(dist, tmp_path):
    """Installed with pip into a venv of its own (its dependencies from the package index or
    pip's cache) and run from a folder outside the checkout, with nothing on PYTHONPATH."""
    import satdt

    venv = tmp_path / "venv"
    made = subprocess.run(
        [sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300
    )
    if made.returncode != 0:  # Debian's Python without python3-venv: no ensurepip
        pytest.skip(f"python -m venv cannot make a virtual environment here: {made.stderr[-300:]}")
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / "python"

    work = tmp_path / "work"
    work.mkdir()
    (work / "mouse.csv").write_bytes((ROOT / "examples" / "data" / "mouse.csv").read_bytes())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(
        PATH=os.pathsep.join([str(bin_dir), env.get("PATH", "")]),
        PYTHONNOUSERSITE="1",
        NUMBA_CACHE_DIR=str(tmp_path / "numba"),
        VIRTUAL_ENV=str(venv),
    )
    # pip too sees nothing of the checkout (on PYTHONPATH, its egg-info says satdt is installed)
    _run([str(python), "-m", "pip", "install", "-q", str(_wheel(dist))], 1200, env=env)
    satdt_cli = str(bin_dir / "satdt")

    version = _run([satdt_cli, "--version"], 120, cwd=work, env=env)
    assert version.stdout.strip() == f"satdt {satdt.__version__}"

    # the README's first command, on the shipped table copied out of the checkout
    inferred = _run([satdt_cli, "infer", "mouse.csv"], 600, cwd=work, env=env)
    assert "depth: 4 (proven minimum)" in inferred.stdout, inferred.stdout

    imported = _run([str(python), "-c", SMOKE, str(ROOT)], 600, cwd=work, env=env)
    assert f"{len(satdt.__all__)} names;" in imported.stdout
    for subpackage in ("cli", "data", "estimators", "models", "plot"):
        assert f"satdt.{subpackage}" in imported.stdout.split(), imported.stdout
