"""Helpers several test modules share: the cp4im benchmark files and their proven optima,
hypothesis strategies for tiny data, and the check of a DP search's returned tree."""

from __future__ import annotations

import csv
import os
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st
from naive import threshold_features

from satdt.dp.common import SearchSettings
from satdt.models.diagram import Diagram
from satdt.models.forest import Forest

# The repository, the shipped example tables and the shared benchmark data beside it.
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "data"
SHARED = ROOT.parent / "shared" / "data"
# Files the tests compare against (effort records, recorded trees, model files of a release).
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CP4IM = SHARED / "cp4im"


# Hypothesis's profiles: "ci" runs each property test with its full count of examples, "dev"
# (the quick loop) with a tenth of it; tests that set no count get the profile's.
PROFILES = {"ci": 100, "dev": 10}
_profile = ["ci"]


def use_profile(name: str) -> None:
    """Load Hypothesis's profile ``name`` (``"ci"`` or ``"dev"``) for this test session."""
    from hypothesis import settings

    if name not in PROFILES:
        raise ValueError(f"HYPOTHESIS_PROFILE must be one of {sorted(PROFILES)}, got {name!r}")
    for profile, count in PROFILES.items():
        settings.register_profile(profile, max_examples=count)
    settings.load_profile(name)
    _profile[0] = name


def examples(count: int) -> int:
    """A property test's number of examples: ``count`` under the ``ci`` profile, a tenth of it
    (at least 3) under ``dev``, the quick loop's."""
    return count if _profile[0] == "ci" else max(3, count * PROFILES["dev"] // PROFILES["ci"])


def dp_settings(options: dict, **settings) -> tuple[SearchSettings, dict]:
    """A DP search's shared settings from ``settings`` and those of ``options`` that are
    shared ones (rows' weights, deadline, recorder, bound, leaf penalty, support); the rest
    of ``options`` (the search's own) as a dictionary."""
    shared = {f.name for f in fields(SearchSettings)}
    settings.update({k: v for k, v in options.items() if k in shared})
    return SearchSettings(**settings), {k: v for k, v in options.items() if k not in shared}


def load_cp4im(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of a cp4im file (first column the 0/1 label), or skip the test."""
    path = CP4IM / f"{name}.txt"
    if not path.exists():
        pytest.skip(f"shared data not found: {path} (the cp4im files live in ../shared/data)")
    table = np.loadtxt(path, dtype=np.uint8, ndmin=2)
    return np.ascontiguousarray(table[:, 1:]), table[:, 0].astype(np.int64)


def optima() -> dict[tuple[str, int], int]:
    path = CP4IM / "optima.csv"
    if not path.exists():
        return {}
    with path.open() as handle:
        return {
            (row["dataset"], int(row["max_depth"])): int(row["optimal_error"])
            for row in csv.DictReader(handle)
        }


OPTIMA = optima()


def check_tree(result, B, y, weight, depth):
    """The returned tree has the reported error on the data and respects the depth cap."""
    tree = result.model
    assert tree.depth <= depth
    w = np.ones(len(y)) if weight is None else weight
    predicted = tree.predict(B.astype(float))
    assert float(w[predicted != y].sum()) == pytest.approx(result.objective_value, abs=1e-9)
    assert tree.count_error() == pytest.approx(result.objective_value, abs=1e-9)


@st.composite
def tiny_problems(draw):
    n = draw(st.integers(1, 12))
    m = draw(st.integers(1, 5))
    n_classes = draw(st.integers(2, 3))
    B = np.array(
        draw(st.lists(st.lists(st.integers(0, 1), min_size=m, max_size=m), min_size=n, max_size=n)),
        dtype=np.uint8,
    )
    y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
    weights = st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 0.1, 0.3, 2.7])
    kind = draw(st.sampled_from(["none", "integer", "fractional"]))
    if kind == "none":
        w = None
    elif kind == "integer":
        w = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=float)
    else:
        w = np.array(draw(st.lists(weights, min_size=n, max_size=n)))
    depth = draw(st.integers(0, 3))
    return B, y, w, n_classes, depth


@st.composite
def consistent_binary_data(draw, max_rows: int = 10, max_features: int = 4, max_classes: int = 3):
    """Random tiny binary data whose identical rows share one label (so a consistent tree exists)."""
    m = draw(st.integers(1, max_features))
    n = draw(st.integers(1, max_rows))
    n_classes = draw(st.integers(2, max_classes))
    rows = draw(
        st.lists(st.lists(st.integers(0, 1), min_size=m, max_size=m), min_size=n, max_size=n)
    )
    B = np.array(rows, dtype=np.uint8)
    label_of = {}
    y = []
    for row in rows:
        key = tuple(row)
        if key not in label_of:
            label_of[key] = draw(st.integers(0, n_classes - 1))
        y.append(label_of[key])
    return B, np.array(y, dtype=np.int64), n_classes


@st.composite
def threshold_data(draw, max_rows: int = 9, max_columns: int = 3, max_classes: int = 3):
    """Tiny numeric data as every threshold feature (nested chains), sometimes with a random
    binary column; identical rows share one label."""
    n = draw(st.integers(1, max_rows))
    columns = draw(st.integers(1, max_columns))
    n_classes = draw(st.integers(2, max_classes))
    X = np.array(
        draw(st.lists(st.lists(st.integers(0, 5), min_size=n, max_size=n), min_size=columns))
    ).T
    B = threshold_features(X)
    if draw(st.booleans()):
        extra = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
        B = np.column_stack([B, np.array(extra, dtype=np.uint8)])
    label_of: dict[tuple[int, ...], int] = {}
    y = [label_of.setdefault(tuple(row), draw(st.integers(0, n_classes - 1))) for row in B]
    return B.astype(np.uint8), np.array(y, dtype=np.int64), n_classes


def random_diagram(
    rng: np.random.Generator,
    widths: tuple[int, ...],
    n_features: int,
    n_classes: int,
    multivariate: bool = False,
    grid: int = 4,
) -> Diagram:
    """A random diagram filling ``widths``; thresholds on a coarse grid so tests repeat."""
    layer = np.repeat(np.arange(len(widths)), widths)
    n = len(layer)
    first = np.concatenate([[0], np.cumsum(widths)])
    feature = rng.integers(n_features, size=n)
    if multivariate:
        feature[rng.random(n) < 0.5] = -1
    threshold = rng.integers(grid + 1, size=n) / grid
    coef = rng.integers(-2, 3, size=(n, n_features)).astype(float) if multivariate else None
    succ = np.empty((n, 2), dtype=np.int64)
    for i in range(n):
        for side in range(2):
            later = np.arange(first[layer[i] + 1], n)
            if len(later) and rng.random() < 0.7:
                succ[i, side] = rng.choice(later)
            else:
                succ[i, side] = -1 - rng.integers(n_classes)
    return Diagram(
        layer,
        feature,
        threshold,
        succ[:, 0],
        succ[:, 1],
        coef=coef,
        n_features=n_features,
        classes=[f"c{k}" for k in range(n_classes)],
    )


def children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``, from /proc; Python's own
    multiprocessing resource tracker (started by any earlier test that made a process queue,
    alive until the interpreter exits) is not one of ours."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read()
        except OSError:
            continue
        if b"multiprocessing.resource_tracker" in command:
            continue
        if int(stat[1]) == pid and stat[0] != "Z":
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (exists and is not a zombie), from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@st.composite
def tiny_tables(draw):
    """Tiny numeric tables: 4-9 rows, 1-2 columns of a few values, 2-3 classes, weights."""
    n = draw(st.integers(4, 9))
    m = draw(st.integers(1, 2))
    n_classes = draw(st.integers(2, 3))
    X = np.array(
        draw(st.lists(st.lists(st.integers(0, 3), min_size=m, max_size=m), min_size=n, max_size=n)),
        dtype=float,
    )
    y = np.array(draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)))
    w = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n)))
    return X, y, w


def grid_box(data, thresholds: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """A box ``low < x <= high`` of a forest's grid drawn with Hypothesis' ``data``: per
    feature, two of its edges (the thresholds and the infinite ends)."""
    low, high = [], []
    for t in thresholds:
        edges = np.concatenate([[-np.inf], t, [np.inf]])
        a = data.draw(st.integers(0, len(edges) - 2))
        b = data.draw(st.integers(a + 1, len(edges) - 1))
        low.append(edges[a])
        high.append(edges[b])
    return np.array(low), np.array(high)


@st.composite
def tiny_forests(draw, votes=("hard", "soft", "sum")):
    """A few trees of depth <= 2 over 2-3 features, thresholds from a small pool (shared
    between trees), leaves with ties now and then."""
    vote = draw(st.sampled_from(votes))
    p = draw(st.integers(2, 3))
    n_classes = 2 if vote == "sum" else draw(st.integers(2, 3))
    pool = [0.5, 1.5, 2.5]

    def leaf():
        if vote == "hard":
            return draw(st.integers(0, n_classes - 1))
        if vote == "sum":
            return draw(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]))
        weights = np.array(
            draw(st.lists(st.integers(0, 2), min_size=n_classes, max_size=n_classes))
        )
        weights[0] += weights.sum() == 0
        return list(weights / weights.sum())

    def node(depth):
        if depth == 0 or (draw(st.booleans()) and depth < 2):
            return leaf()
        f = draw(st.integers(0, p - 1))
        return (f, draw(st.sampled_from(pool)), node(depth - 1), node(depth - 1))

    trees = [node(2) for _ in range(draw(st.integers(1, 4)))]
    if vote == "sum":  # an initial prediction, a tree of one leaf, as boosting has
        trees.insert(0, draw(st.sampled_from([0.0, 0.25, -0.5])))
    return Forest.from_nested(trees, p, list(range(n_classes)), vote)


def small_integer_rows(draw, max_rows: int, max_columns: int, min_rows: int = 1) -> np.ndarray:
    """Tiny numeric rows of small integers, so that thresholds repeat (inside a
    ``st.composite`` strategy: ``draw`` is its)."""
    n = draw(st.integers(min_rows, max_rows))
    columns = draw(st.integers(1, max_columns))
    cell = st.integers(0, 4)
    rows = st.lists(st.lists(cell, min_size=columns, max_size=columns), min_size=n, max_size=n)
    return np.array(draw(rows), dtype=np.float64)


def labels_by_row(draw, X: np.ndarray, labels) -> np.ndarray:
    """A label per row drawn from the strategy ``labels``, identical rows sharing one: a
    consistent tree exists."""
    label_of: dict[tuple[float, ...], object] = {}
    return np.array([label_of.setdefault(tuple(row), draw(labels)) for row in X.tolist()])
