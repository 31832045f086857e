"""Search effort guards: a slip in a search shows up here before any benchmark.

For a fixed set of instances per search (Blossom, DL8.5, CA-DL8.5 and ConTree at depths 3-5,
with and without a leaf penalty, on CP4IM and continuous files; the SAT loop for minimum depth
and size; partial_fit on fixed streams and fit_teacher on the multiplexer; the SAT route of
diagrams), the optimum, the proof and the effort counters (nodes
expanded, depth-two solves, cuts, cache hits, SAT calls, examples used, clauses) are recorded
in ``tests/fixtures/effort.json``. The counters are exact (the same search on the same data does
the same work; the kernels are compiled before the tests, see ``conftest.py``), so this is no
timed test: a counter more than 10 % above its record fails, and so does a changed optimum
or proof.

A change that costs effort on purpose re-records in the same commit, saying why::

    SATDT_RECORD_EFFORT="why the effort changed" python -m pytest tests/search/test_effort.py

which rewrites the records of the instances run whose optimum, proof or effort changed (each
with that reason).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np
import pytest
from helpers import FIXTURES, ROOT, load_cp4im

from satdt import OptimalDiagramClassifier, OptimalTreeClassifier, read_csv
from satdt.prepare.validate import validate

RECORDS = FIXTURES / "effort.json"
EXAMPLES = ROOT / "examples" / "data"
CONTINUOUS = ROOT.parent / "shared" / "data" / "continuous"
GROWTH = 1.10  # a counter may grow by at most 10 % over its record
REASON = os.environ.get("SATDT_RECORD_EFFORT", "")

# Counters that measure work (timings, sizes of the data and flags are not effort).
EFFORT = (
    "expansions",
    "bottom_solves",
    "backtracks",
    "cuts",
    "similarity_cuts",
    "complete_trees",
    "nodes",
    "cache_hits",
    "cache_entries",
    "restarts",
    "sat_calls",
    "examples_used",
    "clauses",
    "variables",
    "boxes",
    # the steps of the consistency portfolio (satdt.dp.improve, satdt.dp.cores)
    "passes",
    "improvements",
    "solves",
    "replaced",
    "resplits",
    "decisions",
    "core_rows",
    "thresholds_dropped",
    "rows_merged",
    "columns_dropped",
)

# (search, file, depth, leaf penalty): the DP instances, each proven within seconds
DP = [
    *[(m, "heart-cleveland", d, p) for m in ("blossom", "dl85") for d in (3, 4) for p in (0, 0.01)],
    *[(m, "anneal", d, p) for m in ("blossom", "dl85") for d in (3, 4) for p in (0, 0.01)],
    *[(m, "vehicle", d, p) for m in ("blossom", "dl85") for d in (3, 4) for p in (0, 0.01)],
    *[(m, f, 5, 0.01) for m in ("blossom", "dl85") for f in ("segment", "hypothyroid")],
    *[("cadl85", f, 4, 0) for f in ("heart-cleveland", "anneal", "vehicle")],
    *[
        ("contree", f"{name}-300", d, p)
        for name in ("bank", "raisin")
        for d in (3, 4)
        for p in (0, 0.01)
    ],
]
# (objective, file): the SAT loop (minimum depth; minimum size at that depth)
SAT = [
    ("depth", "mouse"),
    ("depth", "iris"),
    ("depth", "wine"),
    ("size", "mouse"),
    ("size", "iris"),
]
SHARED_SAT = {"wine"}  # in ../shared/data/inferdt, the others in examples/data
# (method, objective, file, options): the other searches of the table, each on an instance it
# settles alone (the portfolios' searches take turns by the clock: here one of them settles
# the instance in its first turn, so that the work is the same on every run)
OTHERS = [
    ("boxes", "depth", "monk1", {}),
    ("boxes", "size", "monk1", {}),
    ("hybrid", "depth", "mouse", {}),
    ("portfolio", "error", "heart-cleveland", {"max_depth": 2}),
    ("budget", "error", "heart-cleveland", {"max_depth": 3, "max_nodes": 9}),
]


# (step, file): the consistency portfolio's steps alone, each to its end (every exact solve
# completes within its budget, so the work is the same on every run): the local improvement
# of the greedy tree, and the cores up to the first depth they do not refute
STEPS = [("improve", "bank-300"), ("cores", "bank-300")]


def _records() -> dict[str, Any]:
    return json.loads(RECORDS.read_text(encoding="utf-8")) if RECORDS.exists() else {}


def _continuous(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The first rows of a shared continuous file (label first), or skip."""
    base, rows = name.rsplit("-", 1)
    path = CONTINUOUS / f"{base}.txt"
    if not path.exists():
        pytest.skip(f"shared data not found: {path} (the continuous files live in ../shared/data)")
    table = np.loadtxt(path, ndmin=2)
    rng = np.random.default_rng(0)
    keep = np.sort(rng.choice(len(table), size=min(int(rows), len(table)), replace=False))
    return table[keep, 1:], table[keep, 0].astype(np.int64)


def _effort(stats: dict[str, Any], events: list[Any] = ()) -> dict[str, int]:
    counters = {k: int(v) for k, v in stats.items() if k in EFFORT and isinstance(v, int | float)}
    for part, inner in stats.items():  # a portfolio's searches' own counters (hybrid: sat, contree)
        if isinstance(inner, dict):
            counters |= {f"{part}.{k}": int(v) for k, v in _effort(inner).items()}
    calls = [e for e in events if getattr(e, "kind", "") == "sat_call"]
    if calls:
        counters["clauses"] = max(c.n_clauses for c in calls)
        counters["variables"] = max(c.n_vars for c in calls)
    return counters


def _check(key: str, optimum: float, proven: bool, effort: dict[str, int]) -> None:
    """Compare with the record (or rewrite it when re-recording)."""
    if REASON:
        records = _records()
        record = {"optimum": optimum, "proven": proven, "effort": effort}
        old = records.get(key, {})
        if {k: old.get(k) for k in record} == record:
            return  # unchanged: it keeps the reason it was recorded with
        records[key] = {**record, "why": REASON}
        RECORDS.parent.mkdir(exist_ok=True)
        text = json.dumps(dict(sorted(records.items())), indent=1, sort_keys=True)
        RECORDS.write_text(text + "\n", encoding="utf-8")
        return
    record = _records().get(key)
    assert record is not None, f"no record for {key}: record it (see the module docstring)"
    assert proven == record["proven"], f"{key}: proven {proven}, recorded {record['proven']}"
    assert math.isclose(optimum, record["optimum"], rel_tol=1e-9, abs_tol=1e-9), (
        f"{key}: optimum {optimum}, recorded {record['optimum']}"
    )
    grown = {
        name: (value, record["effort"][name])
        for name, value in effort.items()
        if name in record["effort"] and value > GROWTH * record["effort"][name] + 1
    }
    assert not grown, (
        f"{key}: effort grew more than 10 % (now, recorded): {grown}; if on purpose, re-record "
        f"with the reason (see the module docstring)"
    )
    assert set(effort) == set(record["effort"]), f"{key}: other counters than recorded"


def _dp_id(case: tuple[str, str, int, float]) -> str:
    method, name, depth, penalty = case
    return f"{method}-{name}-d{depth}-p{penalty:g}"


# the instances of several seconds each run in the full suite, not the quick loop
HEAVY = {("cadl85", "vehicle"), ("contree", "raisin-300"), ("contree", "bank-300")}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, marks=pytest.mark.slow)
        if (case[0], case[1]) in HEAVY and case[2] >= 4
        else case
        for case in DP
    ],
    ids=_dp_id,
)
def test_dp_effort_stays_within_its_record(case):
    method, name, depth, penalty = case
    if method == "contree":
        X, y = _continuous(name)
    else:
        X, y = load_cp4im(name)
    model = OptimalTreeClassifier(
        objective="error", max_depth=depth, method=method, leaf_penalty=penalty
    ).fit(X, y)
    result = model.result_
    assert result.proven_optimal
    _check(_dp_id(case), result.objective_value, True, _effort(result.stats.as_dict()))


@pytest.mark.parametrize("case", SAT, ids=lambda c: f"sat-{c[0]}-{c[1]}")
def test_sat_loop_effort_stays_within_its_record(case, data_dir):
    objective, name = case
    data = read_csv((data_dir / "inferdt" if name in SHARED_SAT else EXAMPLES) / f"{name}.csv")
    events: list[Any] = []
    model = OptimalTreeClassifier(objective=objective, method="sat")
    model.fit_dataset(data, on_event=events.append)
    result = model.result_
    value = float(result.model.depth if objective == "depth" else result.model.n_nodes)
    key = f"sat-{objective}-{name}"
    _check(key, value, result.proven_optimal, _effort(result.stats.as_dict(), events))


def test_sat_diagram_effort_stays_within_its_record():
    data = read_csv(EXAMPLES / "mouse.csv")
    events: list[Any] = []
    model = OptimalDiagramClassifier(objective="size", method="sat")
    model.fit_dataset(data, on_event=events.append)
    result = model.result_
    effort = _effort(result.stats.as_dict(), events)
    _check("diagram-sat-size-mouse", float(result.model.n_splits), result.proven_optimal, effort)


def _other_id(case: tuple[str, str, str, dict[str, Any]]) -> str:
    method, objective, name, options = case
    return "-".join([method, objective, name, *(f"{k}{v}" for k, v in sorted(options.items()))])


@pytest.mark.parametrize("case", OTHERS, ids=_other_id)
def test_every_other_search_stays_within_its_record(case):
    method, objective, name, options = case
    if name in ("monk1", "mouse"):
        data = read_csv(EXAMPLES / f"{name}.csv")
        X, y = data.X, data.y
    else:
        X, y = load_cp4im(name)
    events: list[Any] = []
    model = OptimalTreeClassifier(objective=objective, method=method, **options)
    model.fit_dataset(validate(X, y), on_event=events.append)
    result = model.result_
    _check(
        _other_id(case),
        float(result.objective_value),
        result.proven_optimal,
        _effort(result.stats.as_dict(), events),
    )


@pytest.mark.parametrize("case", STEPS, ids=lambda c: f"step-{c[0]}-{c[1]}")
def test_the_portfolio_steps_stay_within_their_record(case):
    from satdt.dp.cores import CoreBound
    from satdt.dp.greedy import greedy_numeric_tree
    from satdt.dp.improve import ImproveOptions, LocalImprovement

    step, name = case
    X, y = _continuous(name)
    n_classes = int(y.max()) + 1
    if step == "improve":
        options = ImproveOptions(max_rows=100, first_budget=60.0, max_budget=60.0)
        start = greedy_numeric_tree(X, y, n_classes)
        search = LocalImprovement(X, y, n_classes, start, options=options)
        while not search.exhausted:
            search.advance(math.inf)
        value, proven, stats = float(search.depth), False, search.stats.as_dict()
    else:
        cores = CoreBound(X, y, n_classes)
        depth = 0
        while cores.advance(depth, math.inf).status == "UNSAT":
            depth += 1
        value, proven = float(depth), True  # the first depth not refuted: the minimum
        stats = {**cores.stats.as_dict(), "core_rows": cores.stats.rows}
    _check(f"step-{step}-{name}", value, proven, _effort(stats))


# (objective, file, batch): partial_fit on a file's rows in batches, the SAT calls of the
# whole stream; and fit_teacher on the 6-input multiplexer
STREAMS = [("depth", "mouse", 10), ("size", "mouse", 10), ("depth", "iris", 25)]


@pytest.mark.parametrize("case", STREAMS, ids=lambda c: f"stream-{c[0]}-{c[1]}-b{c[2]}")
def test_a_streams_effort_stays_within_its_record(case):
    objective, name, batch = case
    data = read_csv(EXAMPLES / f"{name}.csv")
    model = OptimalTreeClassifier(objective=objective)
    calls, settled, proven = 0, 0, True
    for start in range(0, len(data.y), batch):
        model.partial_fit(data.X[start : start + batch], data.y[start : start + batch])
        calls += len(model.result_.trace)
        settled += len(model.result_.stats.settled_without_sat_call)
        proven = proven and model.result_.proven_optimal
    effort = {
        "sat_calls": calls,
        "examples_used": model.result_.stats.examples_used,
        "settled": settled,
    }
    value = float(model.result_.objective_value)
    _check(f"stream-{objective}-{name}-b{batch}", value, proven, effort)


@pytest.mark.parametrize("objective", ["depth", "size"])
def test_a_teachers_effort_stays_within_its_record(objective):
    from satdt.task.teachers import FunctionTeacher

    def multiplexer(a0, a1, d0, d1, d2, d3):
        return [d0, d1, d2, d3][2 * a1 + a0]

    teacher = FunctionTeacher(multiplexer, [bool] * 6)
    result = OptimalTreeClassifier(objective=objective).fit_teacher(teacher).result_
    effort = {
        "sat_calls": len(result.trace),
        "questions": result.stats.questions,
        "examples_used": result.stats.examples_used,
    }
    _check(
        f"teacher-{objective}-multiplexer6", result.objective_value, result.proven_optimal, effort
    )
