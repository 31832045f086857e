"""Numba's kernels off the critical path: compiled once, in the background, then loaded.

Every DP search runs Numba kernels, and Numba compiles a kernel the first time it is used,
which on a fresh install takes seconds to tens of seconds that no time limit can interrupt.
So a search never compiles in the caller's process when it can avoid it:

* The kernels come in **groups** (:data:`GROUPS`), one per kernel module of
  :mod:`satdt.dp`. Each kernel has one explicit signature, so importing its module compiles
  it, or loads it from Numba's on-disk cache when it was compiled before.
* A group is **ready** when its modules are imported in this process or when a *stamp*
  says that a complete compilation of exactly these sources, by this Numba, for this CPU,
  is in the cache. Stamps (``satdt-<group>-<key>.ok``) live beside Numba's cache files, so
  deleting the cache deletes them too.
* :func:`request` starts a **background process** (``python -m satdt.dp.kernels``) that
  compiles the groups a search needs and stamps them, while the caller does what needs no
  kernel (reading, preparing, a greedy tree in NumPy); :func:`wait` then waits for the
  stamps until a deadline, and importing the modules loads the kernels from the cache.
* A **lock file** per group serialises compilations: several cold processes at once
  (sweep workers, ``GridSearchCV(n_jobs=2)``, two terminals) compile each group once; the
  others wait for its stamp and load it. Numba writes each cache file to a temporary name
  and renames it, and a stamp is written only after a whole group compiled, so an
  interrupted compilation (Ctrl-C) leaves a cache that the next run completes.

Where the cache lives is Numba's choice (:func:`cache_dir`): ``$NUMBA_CACHE_DIR`` when set;
else ``__pycache__`` beside the sources when that is writable (an editable install); else a
user-wide folder (``~/.cache/numba`` on Linux) for a read-only installation.
``SATDT_BACKGROUND_COMPILE=0`` turns the background process off (kernels then compile in
the caller's process, as plain Numba code does).

This module imports neither Numba nor a kernel module until asked: the SAT searches never
load them.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

_PACKAGE = __package__  # satdt.dp (also when run as ``python -m satdt.dp.kernels``)
_HERE = Path(__file__).resolve().parent
# Seconds between two looks at the stamps while waiting for a background compilation.
_POLL = 0.05


@dataclass(frozen=True)
class KernelGroup:
    """Kernels compiled together: the modules of :mod:`satdt.dp` whose import compiles them."""

    name: str
    modules: tuple[str, ...]
    needs: tuple[str, ...]  # groups whose kernels these call (compiled first)
    summary: str


GROUPS: dict[str, KernelGroup] = {
    g.name: g
    for g in (
        KernelGroup("counts", ("_counts",), (), "counting and depth-two kernels (DL8.5)"),
        KernelGroup("dl85", ("_dl85_three",), ("counts",), "DL8.5's three-level nodes"),
        KernelGroup("support", ("_dl85_kernels",), ("counts",), "the minimum support rule"),
        KernelGroup("blossom", ("_blossom_kernels",), ("counts", "support"), "Blossom's search"),
        KernelGroup(
            "budget", ("_budget_kernels",), ("counts",), "the node budget's depth-two kernel"
        ),
        KernelGroup("contree", ("_contree_kernels",), (), "ConTree on numeric columns"),
        KernelGroup(
            "contree_d2",
            ("_contree_scan", "_contree_d2"),
            ("contree",),
            "ConTree's depth-two kernel",
        ),
        KernelGroup("greedy", ("_greedy_kernels",), (), "the greedy tree of large tables"),
        KernelGroup(
            "born_again", ("_born_again_kernels",), (), "born-again trees over a forest's cells"
        ),
    )
}


@dataclass(frozen=True)
class Compiled:
    """What :func:`compile_groups` did for one group: ``action`` is ``"compiled"``,
    ``"compiled in parallel"`` (by a background process at the same time), ``"loaded"``
    (from the cache) or ``"loaded, not cached"`` (Numba could not write its cache: the
    kernels will compile again in the next process); ``kernels`` maps each kernel to its
    compile seconds (empty when loaded)."""

    group: str
    action: str
    seconds: float
    kernels: dict[str, float]


@dataclass(frozen=True)
class Kernels:
    """The kernel groups one search runs on, by what it uses them for: with :data:`GROUPS`,
    the one place that names them (a search asks :func:`kernels_of`).

    Called with a search's options (``None``: any options, as a warm-up asks), it gives the
    alternatives the search can start on, fewest groups first: it can start once every group
    of one of them is ready, and all are compiled, in order, when it first runs.
    """

    start: tuple[str, ...] = ()  # what it starts on
    support: tuple[str, ...] = ()  # added to ``start`` when min_support > 1
    later: tuple[str, ...] = ()  # what it takes in once compiled
    helpers: tuple[str, ...] = ()  # the helper searches' groups it loads with ``later``
    instead: tuple[str, ...] = ()  # another search's groups it can start on alone
    waits: bool = True  # False: a fit waits for none (the search loads them itself)

    def to_start(self, min_support: int) -> tuple[str, ...]:
        """The groups it starts on under this minimum support."""
        return (*self.start, *self.support) if min_support > 1 else self.start

    def __call__(self, options: dict[str, Any] | None) -> tuple[tuple[str, ...], ...]:
        if options is not None and not self.waits:
            return ()
        start = self.to_start(2 if options is None else options.get("min_support", 1))
        if not start and not self.instead:
            return ()
        more = (*self.later, *self.helpers)
        return (
            start,
            *(((*start, *more),) if more else ()),
            *((self.instead,) if self.instead else ()),
        )


_GREEDY = Kernels(start=("greedy",))
_BLOSSOM = Kernels(start=("blossom",))
# DL8.5 starts on the shared counting kernels (and the support rule's when min_support > 1),
# then takes in its three-level nodes once compiled
_DL85 = Kernels(start=("counts",), support=("support",), later=("dl85",))
# ConTree: its depth-two kernel once compiled; the greedy tree's kernels for its first bound
_CONTREE = Kernels(start=("contree",), later=("contree_d2",), helpers=_GREEDY.start)

# The kernel groups of every search by its name: the methods of the table of searches
# (satdt.search.registry.METHODS; a method without kernels, such as "sat" or "boxes", has none
# here) and the helper searches they run ("greedy").
SEARCH_KERNELS: dict[str, Kernels] = {
    "greedy": _GREEDY,
    "blossom": _BLOSSOM,
    "dl85": _DL85,
    "cadl85": _DL85,
    "contree": _CONTREE,
    # DL8.5 with Blossom, starting with whichever is ready
    "portfolio": Kernels(
        start=_DL85.start, support=_DL85.support, later=_DL85.later, instead=_BLOSSOM.start
    ),
    # ConTree's kernels (Blossom's too, for the primal arm, once loaded): a fit waits for none,
    # the hybrid search starts with SAT and loads them meanwhile; a warm-up compiles ConTree's
    "hybrid": Kernels(start=_CONTREE.start, later=_CONTREE.later, waits=False),
    # the node budget search: the shared counting kernels and its depth-two kernel
    "budget": Kernels(start=("counts", "budget")),
    # born-again trees (satdt.search.born_again): the cell programme's kernels, which the
    # greedy faithful tree of the SAT route also runs on its small boxes
    "born_again": Kernels(start=("born_again",)),
}


def kernels_of(search: str) -> Kernels:
    """The kernel groups of a search by its name (none for a search without kernels)."""
    return SEARCH_KERNELS.get(search, Kernels())


def in_order(groups: Iterable[str]) -> list[str]:
    """The groups with the groups they need, each after what it needs, without repeats."""
    ordered: list[str] = []

    def add(name: str) -> None:
        if name not in ordered:
            for need in GROUPS[name].needs:
                add(need)
            ordered.append(name)

    for name in groups:
        if name not in GROUPS:
            raise ValueError(f"unknown kernel group {name!r}; known: {list(GROUPS)}")
        add(name)
    return ordered


# ---------------------------------------------------------------------- where, and which
def _jit_disabled() -> bool:
    return os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")


def _probe_function() -> Callable[[], None]:
    """A function that Numba's cache locators take for one defined in this package's files."""
    code = compile("def probe():\n    pass\n", str(_HERE / "_counts.py"), "exec")
    namespace: dict = {}
    exec(code, namespace)
    return namespace["probe"]


@lru_cache(maxsize=1)
def cache_dir() -> Path | None:
    """The folder of Numba's cache files for the kernels of :mod:`satdt.dp` (``None``: none).

    Asked of Numba's own cache locators, so it is the folder Numba writes: ``$NUMBA_CACHE_DIR``
    (a subfolder), else ``__pycache__`` beside the sources if writable, else the user-wide
    cache folder.
    """
    try:
        from numba.core.caching import CompileResultCacheImpl

        return Path(CompileResultCacheImpl(_probe_function()).locator.get_cache_path())
    except Exception:  # an unknown Numba layout, or no writable folder: no caching
        return None


@cache
def _key(name: str) -> str:
    """What a stamp of group ``name`` vouches for: these sources, this Numba, this CPU."""
    import llvmlite
    import llvmlite.binding as llvm
    import numba

    parts = [numba.__version__, llvmlite.__version__, sys.version]
    parts.append(os.environ.get("NUMBA_CPU_NAME") or llvm.get_host_cpu_name())
    parts.append(os.environ.get("NUMBA_CPU_FEATURES") or llvm.get_host_cpu_features().flatten())
    for group in in_order([name]):
        for module in GROUPS[group].modules:
            parts.append((_HERE / f"{module}.py").read_text(encoding="utf-8"))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _stamp(name: str) -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / f"satdt-{name}-{_key(name)}.ok"


def loaded(name: str) -> bool:
    """Whether the group's kernels are in this process already."""
    return all(f"{_PACKAGE}.{module}" in sys.modules for module in GROUPS[name].modules)


def cached(name: str) -> bool:
    """Whether a complete compilation of the group is in Numba's cache (its stamp exists)."""
    stamp = _stamp(name)
    return stamp is not None and stamp.exists()


def ready(names: Iterable[str]) -> bool:
    """Whether every group (and what it needs) can be used without compiling."""
    if _jit_disabled():
        return True
    return all(loaded(name) or cached(name) for name in in_order(names))


def load(names: Iterable[str]) -> None:
    """Import the groups' kernels: from the cache when ready, else compiling them here."""
    for name in in_order(names):
        for module in GROUPS[name].modules:
            importlib.import_module(f"{_PACKAGE}.{module}")


# Seconds left before a deadline under which a search loads a group that became ready in a
# background thread (loading from the cache takes up to about a second), not in its own.
LOAD_SECONDS = 2.0


class Loading:
    """Kernel groups being imported in a background thread, so that the thread that waits
    for them keeps its time limit (loading from the cache takes up to about a second, and
    compiling, where no background process can, much longer).

    ``then``: groups loaded afterwards if they are ready by then (compiled meanwhile by the
    background process). One per set of groups and process (:func:`load_in_background`).
    """

    def __init__(self, names: tuple[str, ...], then: tuple[str, ...]) -> None:
        self.error: BaseException | None = None
        # an Event, not Thread.join: a join that a Ctrl-C interrupts can leave the thread's
        # lock held, after which the thread looks alive for ever
        self._loaded = threading.Event()
        self._thread = threading.Thread(
            target=self._load, args=(names, then), name="satdt-load", daemon=True
        )
        self._thread.start()

    def _load(self, names: tuple[str, ...], then: tuple[str, ...]) -> None:
        try:
            load(names)
            for name in then:
                if ready([name]):
                    load([name])
        except BaseException as error:  # raised again in the thread that asks (done)
            self.error = error
        finally:
            self._loaded.set()

    def done(self, wait: float = 0.0) -> bool:
        """Whether the groups are loaded, waiting at most ``wait`` seconds; an error met
        while loading is raised here."""
        if not self._loaded.wait(wait if wait > 0 else 0.0):
            return False
        if self.error is not None:
            raise self.error
        return True


_loading: dict[tuple[tuple[str, ...], tuple[str, ...]], Loading] = {}


def load_in_background(names: Iterable[str], then: Iterable[str] = ()) -> Loading:
    """Start loading the groups in a background thread (once per process: a later call for
    the same groups gets the same :class:`Loading`)."""
    key = (tuple(in_order(names)), tuple(then))
    loading = _loading.get(key)
    if loading is None:
        loading = _loading[key] = Loading(*key)
    return loading


def load_soon(names: Iterable[str], deadline: float | None) -> bool:
    """Whether the groups are loaded, loading ready ones: in the calling thread when the
    ``deadline`` (a ``time.perf_counter()`` value) is ``None`` or more than
    :data:`LOAD_SECONDS` away, else in a background thread, so that a search taking in a
    kernel that arrived mid-run keeps its time limit (it looks again later). False while
    they are not ready or still loading."""
    ordered = tuple(in_order(names))
    loading = _loading.get((ordered, ()))
    if loading is not None:
        return loading.done()
    if not ready(ordered):
        return False
    if deadline is None or deadline - time.perf_counter() > LOAD_SECONDS:
        load(ordered)
        return True
    return load_in_background(ordered).done()


# ---------------------------------------------------------------------- compiling
@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if needed) while in the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        try:
            import fcntl
        except ImportError:  # Windows
            import msvcrt

            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
                    break
                except OSError:  # LK_LOCK gives up after 10 s: keep waiting
                    continue
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _compile_times(modules: tuple[str, ...]) -> tuple[dict[str, float], Callable[[], None]]:
    """Seconds Numba spends compiling each kernel of these modules, while listening."""
    from numba.core import event

    names = {f"{_PACKAGE}.{module}" for module in modules}
    seconds: dict[str, float] = {}
    started: list[tuple[str, float]] = []

    class Listener(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            func = ev.data["dispatcher"].py_func
            label = func.__name__ if func.__module__ in names else ""
            started.append((label, time.perf_counter()))

        def on_end(self, ev: event.Event) -> None:
            label, tic = started.pop()
            if label and not any(outer for outer, _ in started):  # not nested in a kernel
                seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - tic

    listener = Listener()
    event.register("numba:compile", listener)
    return seconds, lambda: event.unregister("numba:compile", listener)


def compile_groups(
    names: Iterable[str], report: Callable[[Compiled], None] | None = None, jobs: int = 1
) -> list[Compiled]:
    """Make the groups' kernels ready in this process: load them, or compile and stamp them.

    Each group is compiled under its lock, so that concurrent processes compile it once; a
    group that another process stamped meanwhile is loaded instead. With ``jobs`` > 1, groups
    that need nothing of each other compile at the same time in background processes (the
    rest here), so a cold ``satdt warmup`` uses the cores it has. ``report`` is called after
    each group.
    """
    ordered = in_order(names)
    elsewhere: set[str] = set()
    helpers: list[subprocess.Popen] = []
    done: list[Compiled] = []
    folder = cache_dir()
    for at, name in enumerate(ordered):
        # before each group, idle helpers take the groups that need nothing still to compile
        # but this one (after the shared counting kernels, DL8.5's and Blossom's part ways)
        later = [g for g in ordered[at:] if g not in elsewhere and not (loaded(g) or cached(g))]
        elsewhere |= _spread(later, jobs - sum(h.poll() is None for h in helpers), helpers)
        group = GROUPS[name]
        lock = (
            contextlib.nullcontext() if folder is None else _locked(folder / f"satdt-{name}.lock")
        )
        with lock:
            tic = time.perf_counter()
            if loaded(name) or cached(name):
                load([name])
                record = Compiled(name, "loaded", time.perf_counter() - tic, {})
                if name in elsewhere:  # compiled by a background process just now
                    record = _stamped(name) or record
            else:
                seconds, stop = _compile_times(group.modules)
                try:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        load([name])
                finally:
                    stop()
                saved = not any("Cannot cache" in str(w.message) for w in caught)
                elapsed = time.perf_counter() - tic
                stamp = _stamp(name)
                if saved and stamp is not None:
                    _write_stamp(stamp, name, elapsed, seconds)
                action = "compiled" if saved and stamp is not None else "loaded, not cached"
                record = Compiled(name, action, elapsed, seconds)
        done.append(record)
        if report is not None:
            report(record)
    return done


def _spread(todo: list[str], jobs: int, helpers: list[subprocess.Popen]) -> set[str]:
    """Start background processes for the groups of ``todo`` that need nothing of its first
    chain of groups (up to ``jobs - 1`` processes, appended to ``helpers``); returns the
    groups given to them. Groups already compiled link nothing."""
    todo_set = set(todo)
    chains: list[list[str]] = []  # groups linked by what they still need, in order
    for name in todo:
        linked = [c for c in chains if set(in_order([name])) & todo_set & set(c)]
        for chain in linked[1:]:
            linked[0].extend(chain)
            chains.remove(chain)
        if linked:
            linked[0].append(name)
        else:
            chains.append([name])
    if jobs < 2 or len(chains) < 2 or not _background_allowed():
        return set()
    given: set[str] = set()
    rest = chains[1:]
    for k in range(min(jobs - 1, len(rest))):
        share = [g for chain in rest[k :: jobs - 1] for g in chain]
        if request(share):
            given.update(share)
            helper = _workers.get(tuple(in_order(share)))
            if helper is not None:
                helpers.append(helper)
    return given


def _stamped(name: str) -> Compiled | None:
    """What the stamp of a group compiled by another process says about it."""
    stamp = _stamp(name)
    try:
        facts = json.loads(stamp.read_text(encoding="utf-8")) if stamp else None
    except (OSError, ValueError):
        return None
    if not isinstance(facts, dict):
        return None
    kernels = facts.get("kernels", {})
    return Compiled(name, "compiled in parallel", float(facts.get("seconds", 0.0)), kernels)


def _write_stamp(stamp: Path, name: str, seconds: float, kernels: dict[str, float]) -> None:
    """Write the group's stamp (atomically) and remove its stamps of other sources."""
    for old in stamp.parent.glob(f"satdt-{name}-*.ok"):
        with contextlib.suppress(OSError):
            old.unlink()
    text = json.dumps({"group": name, "seconds": round(seconds, 3), "kernels": kernels})
    partial = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, stamp)


# ---------------------------------------------------------------------- in the background
_workers: dict[tuple[str, ...], subprocess.Popen] = {}
_started: dict[tuple[str, ...], float] = {}  # when each background process was started


def _background_allowed() -> bool:
    return (
        os.environ.get("SATDT_BACKGROUND_COMPILE", "1") != "0"
        and bool(sys.executable)
        and not getattr(sys, "frozen", False)
        and cache_dir() is not None
    )


def request(names: Iterable[str]) -> bool:
    """Start compiling the groups in a background process, unless they are ready.

    Returns False when that is not possible (no writable cache, no Python executable, or
    ``SATDT_BACKGROUND_COMPILE=0``): the caller then compiles in its own process.
    """
    ordered = tuple(in_order(names))
    if ready(ordered):
        return True
    if not _background_allowed():
        return False
    worker = _workers.get(ordered)
    if worker is not None and worker.poll() is None:
        return True  # already on it
    folder = cache_dir()
    assert folder is not None  # checked by _background_allowed
    log = open(folder / "satdt-compile.log", "ab")  # noqa: SIM115 (the child writes it)
    try:
        _workers[ordered] = subprocess.Popen(
            [sys.executable, "-m", f"{_PACKAGE}.kernels", *ordered],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            close_fds=True,
        )
        _started[ordered] = time.perf_counter()
    except OSError:
        return False
    finally:
        log.close()
    return True


def background(since: float | None = None) -> dict[str, str]:
    """The kernel groups this process had compiled in a background process (a first run),
    each ``"compiled"`` (ready now), ``"compiling"`` (its process still at work: later runs
    load them from the cache once it is done) or ``"failed"``. Empty when none was asked: the
    kernels were ready, or the fit needed none (a SAT search never asks). ``since``: a
    ``time.perf_counter()`` value; only the processes started from then on count (those of
    one fit, in a process that fits again: a notebook, a sweep's worker)."""
    states: dict[str, str] = {}
    for groups, worker in _workers.items():
        if since is not None and _started.get(groups, since) < since:
            continue
        for name in groups:
            if loaded(name) or cached(name):
                states[name] = "compiled"
            elif states.get(name) != "compiling":
                states[name] = "compiling" if worker.poll() is None else "failed"
    return states


def failed(names: Iterable[str]) -> bool:
    """Whether every background process started for these groups ended without making
    them ready (and at least one was started)."""
    wanted = set(in_order(names))
    workers = [w for groups, w in _workers.items() if wanted <= set(groups)]
    return bool(workers) and all(w.poll() is not None for w in workers) and not ready(wanted)


def wait(
    options: Iterable[Iterable[str]],
    until: float | None,
    on_wait: Callable[[float], None] | None = None,
) -> bool:
    """Wait until the groups of one of the ``options`` are ready, or ``until`` passes.

    ``until`` is a ``time.perf_counter()`` value (``None``: no limit); ``on_wait(seconds
    waited)`` is called about once a second. Returns whether an option is ready: False when
    time is up or every background process ended without making one ready (see
    :func:`failed`).
    """
    options = [tuple(in_order(option)) for option in options]
    start = time.perf_counter()
    told = 0
    while not any(ready(option) for option in options):
        now = time.perf_counter()
        if (until is not None and now >= until) or all(failed(o) for o in options):
            return False
        if on_wait is not None and now - start >= told:
            on_wait(now - start)
            told += 1
        time.sleep(_POLL if until is None else max(0.0, min(_POLL, until - now)))
    return True


def main(argv: list[str] | None = None) -> int:
    """The background compiler: ``python -m satdt.dp.kernels GROUP ...``."""
    names = sys.argv[1:] if argv is None else argv
    compile_groups(names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
