"""Wide binary tables that nobody proves: the shared continuous tables binarized by quantiles.

The anytime benchmarks' cp4im files are small enough that ``auto`` proves most of them within
the budget, so they say little of the trees a search finds before a proof. Real wide binary
files (a few thousand rows, a few hundred 0/1 columns) are where the anytime lead is won or lost.
These are made from the numeric tables of the ConTree paper in ``../shared/data/continuous``
(2,000 rows or more): each column becomes the binary features ``x > t`` for ``T`` thresholds at
its quantiles ``i / (T + 1)``, ``i = 1..T`` (fewer where a column has fewer distinct values),
so that a file has 200-300 binary columns. Nothing is random unless ``rows`` asks for a
subsample, drawn with a fixed seed; the tables are made when needed, never stored.

    python benchmarks/wide.py                       # the files' shapes

``load(name)`` gives ``(B, y)``: ``B`` uint8 0/1 features, ``y`` class indices; ``name`` is one of
:data:`WIDE` (``eeg-q20``) or any continuous table with its thresholds (``bank-q30``), optionally
subsampled (``eeg-q20-r3000``: 3,000 rows drawn with the seed 0).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "continuous"
# The wide files: each continuous table of 2,000 rows or more, with its thresholds per column
# chosen so that it has about 200-300 binary columns (occupancy's 5 columns cannot: left out).
WIDE = ("avila-q30", "bean-q20", "eeg-q20", "htru-q30", "page-q30", "room-q30")
SEED = 0


def quantile_features(X: np.ndarray, thresholds: int) -> np.ndarray:
    """``B[:, j] = X[:, c] > t`` for each column ``c`` and each distinct threshold ``t`` among its
    quantiles ``i / (thresholds + 1)`` that splits the column's values (both sides non-empty);
    identical features (same rows) kept once."""
    levels = np.arange(1, thresholds + 1) / (thresholds + 1)
    columns = []
    for values in X.T:
        cuts = np.unique(np.quantile(values, levels))
        cuts = cuts[(cuts >= values.min()) & (cuts < values.max())]
        columns.extend(values > t for t in cuts)
    B = np.ascontiguousarray(np.array(columns, dtype=np.uint8).T)
    _, first = np.unique(B, axis=1, return_index=True)
    return np.ascontiguousarray(B[:, np.sort(first)])


def parse(name: str) -> tuple[str, int, int | None]:
    """``(table, thresholds, rows)`` of a name such as ``eeg-q20`` or ``eeg-q20-r3000``."""
    parts = name.split("-")
    table, rest = parts[0], parts[1:]
    thresholds = next((int(p[1:]) for p in rest if p.startswith("q")), None)
    rows = next((int(p[1:]) for p in rest if p.startswith("r")), None)
    if thresholds is None or len(rest) != 1 + (rows is not None):
        raise ValueError(f"a wide file is named TABLE-qT or TABLE-qT-rN, got {name!r}")
    return table, thresholds, rows


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The wide binary table ``name`` (see the module's docstring): ``(B, y)``."""
    table, thresholds, rows = parse(name)
    data = np.loadtxt(DATA / f"{table}.txt", ndmin=2)
    if rows is not None and rows < len(data):
        keep = np.sort(np.random.default_rng(SEED).choice(len(data), rows, replace=False))
        data = data[keep]
    y = data[:, 0].astype(np.int64)
    return quantile_features(data[:, 1:], thresholds), y


def is_wide(name: str) -> bool:
    """Whether ``name`` names a wide file (else a cp4im file)."""
    try:
        table, _, _ = parse(name)
    except ValueError:
        return False
    return (DATA / f"{table}.txt").is_file()


if __name__ == "__main__":
    print("| file | rows | binary columns | classes | majority class |")
    print("|---|---|---|---|---|")
    for wide in WIDE:
        B, y = load(wide)
        share = np.bincount(y).max() / len(y)
        print(f"| {wide} | {B.shape[0]} | {B.shape[1]} | {y.max() + 1} | {share:.2f} |")
