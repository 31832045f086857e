"""Ctrl-C is never lost. SIGINT is sent to the command line at many moments of a run (while
Python and satdt load, while the data is read and prepared, during the greedy start, between
and inside SAT calls, inside DP slices), with CPU-bound processes running beside it. Every
time the run ends promptly and says so: exit 0 with the best tree marked interrupted, or exit
130 saying it was interrupted before any tree (or, before Python's own handler is installed,
killed by the signal); never a traceback once the command line runs, never a run that goes on
as if nothing happened.

A Ctrl-C can also be swallowed by other code: Numba imports SciPy, YAML and cffi under
``except ImportError``, and an extension module being imported when the signal lands reports
its KeyboardInterrupt as an ImportError, so the import goes on as if nothing happened. The
command line's handler has noted it (:func:`satdt.core.errors.on_sigint`), and the searches
raise it at their next look at the clock; the portfolio's every phase is tested with such a
Ctrl-C, on one core and on two."""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import ROOT

# Seconds after the start at which the signal is sent: Python's start, satdt's imports, the
# reading and preparation, the greedy start, then the searches themselves (the portfolio's
# kernels, its first slices, its workers on two cores, the search).
DELAYS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.35, 0.5, 0.8, 1.2, 1.6, 2.0, 2.5, 3.0, 3.5, 4.5)
# Seconds a run may take to end once interrupted (a solver stops at its next look, a DP
# slice within milliseconds, then the tree is checked and printed), on a loaded machine.
PROMPT = 10.0


def _runs(data_dir: Path) -> dict[str, list[str]]:
    """Runs that take far longer than the latest signal when left alone."""
    diabetes = ["fit", str(data_dir / "cp4im" / "diabetes.txt"), "--max-depth", "6"]
    return {
        # the SAT loop on car: about 15 s warm
        "sat": ["infer", str(data_dir / "inferdt" / "car.csv"), "--method", "sat"],
        # the DL8.5/Blossom portfolio on diabetes: about 30 s warm; loading its kernels from
        # Numba's cache runs Python in LLVM's callbacks, where Python drops a KeyboardInterrupt,
        # and Numba's optional imports may swallow one
        "portfolio": diabetes,
        # its workers: the signal goes to the whole process group, as a terminal sends it
        "portfolio-2-jobs": [*diabetes, "--n-jobs", "2"],
    }


@pytest.fixture
def loaded_machine():
    """Two CPU-bound processes beside the run, as on a busy machine."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    yield
    for hog in hogs:
        hog.kill()
        hog.wait()


def _group_left(group: int) -> bool:
    """Whether a process of the process group ``group`` is still running, after a moment
    (a worker whose parent is gone exits at its next look, within milliseconds of search)."""
    until = time.perf_counter() + 3.0
    while True:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return False
        if time.perf_counter() > until:
            return True
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
@pytest.mark.parametrize("run", ["sat", "portfolio", "portfolio-2-jobs"])
def test_a_ctrl_c_at_any_moment_ends_the_run_and_says_so(run, data_dir, loaded_machine):
    command = [sys.executable, "-m", "satdt.cli", *_runs(data_dir)[run]]
    for ended_cleanly, delay in enumerate(DELAYS):
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            start_new_session=True,  # a process group of its own, as a terminal's job
        )
        time.sleep(delay)
        os.killpg(process.pid, signal.SIGINT)  # the parent and any worker, as Ctrl-C does
        sent = time.perf_counter()
        try:
            out, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            pytest.fail(f"signal at {delay} s: lost, the run went on ({ended_cleanly} ended)")
        ended = time.perf_counter() - sent
        said = f"signal at {delay} s, exit {process.returncode} after {ended:.1f} s:\n{out}\n{err}"
        assert ended <= PROMPT, said
        assert not _group_left(process.pid), f"a worker outlived the run; {said}"
        if "Traceback" in err:
            # the signal came while the interpreter started (its site module, runpy) or
            # imported satdt.cli's first lines, before the command line ran: Python's own
            # handling, which ends the process at once
            assert process.returncode != 0, said
            assert not re.search(r'satdt[\\/][^"]*", line \d+, in (?!<module>)', err), said
        elif process.returncode == 0:
            assert "interrupted" in out and "not proven" in out, said
        elif process.returncode == 130:
            assert "interrupted" in err, said
        else:  # before Python installed its handler: the signal's default action
            assert process.returncode == -signal.SIGINT, said


_DROPPED_IN_A_CALLBACK = """
import ctypes, os, signal, time
from satdt.cli import ctrl_c_kept

def callback():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.2)  # the KeyboardInterrupt is raised here, inside ctypes: Python drops it

with ctrl_c_kept():
    ctypes.CFUNCTYPE(None)(callback)()
    print("the callback returned", flush=True)
    try:
        time.sleep(10)
        print("lost")
    except KeyboardInterrupt:
        print("raised again")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to oneself is POSIX")
def test_a_ctrl_c_dropped_inside_a_callback_is_raised_again():
    # Numba loads a kernel from its cache through LLVM's ctypes callbacks: a Ctrl-C landing
    # there was dropped by Python (printed as "Exception ignored") and the search ran on
    process = subprocess.run(
        [sys.executable, "-c", _DROPPED_IN_A_CALLBACK],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert process.stdout.splitlines() == ["the callback returned", "raised again"], process
    assert "Exception ignored" not in process.stderr, process.stderr


def _ctrl_c_in_disguise() -> None:
    """A Ctrl-C that a library reports as an error of its own, as NumPy does when one lands
    while it compares structured arrays (np.unique(..., axis=0) in the SAT loop)."""
    from satdt.core.errors import on_sigint

    try:
        on_sigint(signal.SIGINT, None)
    except KeyboardInterrupt:
        raise TypeError(
            "Cannot compare structured arrays unless they have a common dtype"
        ) from None


@pytest.mark.parametrize("greedy_first", [True, False])
def test_a_ctrl_c_turned_into_another_error_still_returns_the_best_tree(monkeypatch, greedy_first):
    from satdt import NotProvenWarning, OptimalTreeClassifier
    from satdt.core.errors import interrupt_handled, interrupt_pending
    from satdt.search.runner import TreeSearch

    def compute(self):
        if greedy_first:
            self.start_greedy()
        _ctrl_c_in_disguise()

    monkeypatch.setattr(TreeSearch, "compute", compute)
    X = [[0, 0], [0, 1], [1, 0], [1, 1]]
    y = [0, 1, 1, 0]
    try:
        if greedy_first:
            with pytest.warns(NotProvenWarning, match="interrupted"):
                model = OptimalTreeClassifier().fit(X, y)
            assert model.result_.stop_reason == "interrupted"
            assert not model.result_.proven_optimal
            assert (model.predict(X) == y).all()
            assert not interrupt_pending()
        else:  # nothing to return: the Ctrl-C itself goes on up (the CLI says "interrupted")
            with pytest.raises(KeyboardInterrupt):
                OptimalTreeClassifier().fit(X, y)
    finally:
        interrupt_handled()


def test_an_error_without_a_ctrl_c_is_not_taken_for_one(monkeypatch):
    from satdt import OptimalTreeClassifier
    from satdt.search.runner import TreeSearch

    def compute(self):
        self.start_greedy()
        raise TypeError("a bug of ours")

    monkeypatch.setattr(TreeSearch, "compute", compute)
    with pytest.raises(TypeError, match="a bug of ours"):
        OptimalTreeClassifier().fit([[0], [1]], [0, 1])


def _swallowed_ctrl_c() -> None:
    """A real Ctrl-C that other code swallows, as Numba's optional imports did: the signal's
    KeyboardInterrupt reported as an ImportError (an extension module being imported), which
    ``except ImportError`` drops. In the main thread only (the handler runs there)."""
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises in here
        except KeyboardInterrupt:
            raise ImportError("PyCapsule_Import could not import module") from None
    except ImportError:
        pass  # an optional package "not installed"


def _once(function, call: int = 1, calls: list[int] | None = None):
    """``function`` that swallows a Ctrl-C first on the ``call``-th call in the main thread
    (``calls``: a counter shared with other functions)."""
    calls = [0] if calls is None else calls

    def wrapped(*args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            calls[0] += 1
            if calls[0] == call:
                _swallowed_ctrl_c()
        return function(*args, **kwargs)

    return wrapped


def _swallow_in(phase: str, monkeypatch) -> None:
    """Swallow a Ctrl-C in one phase of the portfolio: while its kernels load (DL8.5's first
    node, or before the workers are forked), in Blossom's first slice, when the search
    reports its second tree (DL8.5's or a worker's), or as a CA-DL8.5 restricted search takes
    its second turn (DL8.5 behind the clock: one core)."""
    from satdt.cli.status import Status
    from satdt.dp import kernels, portfolio
    from satdt.dp.blossom import BlossomRun
    from satdt.dp.turns import ThreadedSearch

    if phase == "kernels":  # the first load in this thread, before the search's first node
        calls = [0]
        monkeypatch.setattr(kernels, "load", _once(kernels.load, calls=calls))
        monkeypatch.setattr(kernels, "load_soon", _once(kernels.load_soon, calls=calls))
    elif phase == "blossom":
        monkeypatch.setattr(BlossomRun, "advance", _once(BlossomRun.advance))
    elif phase == "restricted":
        monkeypatch.setattr(portfolio._Slices, "behind", lambda self, now: True)
        monkeypatch.setattr(ThreadedSearch, "advance", _once(ThreadedSearch.advance, call=2))
    else:
        monkeypatch.setattr(Status, "improve", _once(Status.improve, call=2))


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to oneself is POSIX")
@pytest.mark.parametrize(
    ("phase", "n_jobs"),
    # the restricted searches run on one core only
    [(phase, n) for phase in ("kernels", "blossom", "tree") for n in (1, 2)] + [("restricted", 1)],
)
def test_a_ctrl_c_swallowed_by_other_code_stops_the_portfolio(
    phase, n_jobs, data_dir, monkeypatch, capsys
):
    from satdt.cli import main

    if n_jobs > 1 and (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the estimator runs one job")
    _swallow_in(phase, monkeypatch)
    path = str(data_dir / "cp4im" / "diabetes.txt")
    # about a minute to its proof on one core: left running, it ends at the time limit
    args = ["fit", path, "--max-depth", "6", "--n-jobs", str(n_jobs), "--time-limit", "30"]
    code = main(args)
    out, err = capsys.readouterr()
    said = f"{phase}, n_jobs={n_jobs}: exit {code}\n{out}\n{err}"
    # the best tree marked interrupted, or (a Ctrl-C before the first tree) exit 130
    assert (code == 0 and "interrupted" in out) or (code == 130 and "interrupted" in err), said
    assert "time limit" not in out + err, said
    assert multiprocessing.active_children() == [], said  # every worker stopped
    assert not [t for t in threading.enumerate() if t.name.startswith("satdt-cadl85")], said


def test_a_ctrl_c_that_an_import_reports_as_an_error_of_its_own_ends_the_run(monkeypatch, capsys):
    # NumPy imported while a Ctrl-C lands: "ImportError: PyCapsule_Import could not import
    # module "datetime"", with no KeyboardInterrupt among its causes. The command line had
    # noted the Ctrl-C, but forgot it before it looked at the error.
    from satdt.cli import commands, main

    def interrupted_import(argv):
        lost = False
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            lost = True
        if lost:
            raise ImportError('PyCapsule_Import could not import module "datetime"')
        return 0

    monkeypatch.setattr(commands, "main", interrupted_import)
    assert main(["fit", "x.csv"]) == 130
    assert "interrupted" in capsys.readouterr().err
