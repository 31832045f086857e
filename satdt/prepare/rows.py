"""Rows and features as bits: the one grouping of identical rows and features, and the
contradictions among rows (identical features, different labels).

Binary rows pack into 64-bit words (:func:`pack_rows`), a column's rows into a bitset
(:func:`column_bitsets`); :func:`group_rows` groups identical rows by hashing their words,
:func:`distinct_bitsets` and :func:`distinct_features` keep one of each identical (or
complementary) feature. :func:`find_contradictions` lists the groups of rows that no
consistent tree can separate, :func:`contradiction_error` says so with their lines in the
file, :func:`resolve_majority` relabels each group with its majority label.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import (
    ContradictionError,
)

if TYPE_CHECKING:
    pass

# Tiles of the transposition in unpack_columns: columns unpacked at a time, rows copied at a time.
TILE_COLUMNS, TILE_ROWS = 256, 1024
_ROWS_SHOWN = 10  # rows listed per group of contradictory rows in an error message


# ---------------------------------------------------------------------- packed bits
def pack_rows(B: np.ndarray) -> np.ndarray:
    """The rows of a 0/1 matrix ``(n, k)`` as ``(n, ceil(k / 64))`` uint64 words.

    Bits are packed with :func:`numpy.packbits` (big bit order within a byte) and the bytes
    read as little-endian words: only equality and a fixed order matter to the callers.
    """
    B = np.asarray(B)
    packed = np.packbits(B != 0 if B.dtype != np.uint8 else B, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def column_bitsets(B: np.ndarray) -> np.ndarray:
    """The columns of a 0/1 matrix ``(n, k)`` as ``k`` bitsets of ``n`` bits in uint64 words.

    Bit ``i`` of bitset ``j`` (little bit order: word ``i // 64``, bit ``i % 64``) is ``B[i, j]``;
    counting rows of a set is a popcount.
    """
    B = np.asarray(B)
    packed = np.packbits(B.T, axis=1, bitorder="little")  # nonzero packs as 1: no bool copy
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def _row_keys(A: np.ndarray) -> np.ndarray:
    """Integer words whose rows are equal exactly when the rows of ``A`` are equal."""
    A = np.asarray(A)
    if A.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {A.shape}")
    if A.dtype == np.uint8 or A.dtype == np.bool_:
        return pack_rows(A)
    if A.dtype.kind == "f":
        A = A.astype(np.float64) + 0.0  # -0.0 == 0.0
        A[np.isnan(A)] = np.nan  # one NaN: a missing cell equals a missing cell
        return np.ascontiguousarray(A).view(np.uint64)
    return np.ascontiguousarray(A)


def _hash_rows(words: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of a word matrix (equal rows, equal hashes)."""
    h = np.full(words.shape[0], 0x9E3779B97F4A7C15, dtype=np.uint64)
    for column in words.T:
        h ^= column.view(np.uint64) if column.dtype.itemsize == 8 else column.astype(np.uint64)
        h *= np.uint64(0xBF58476D1CE4E5B9)  # wraps modulo 2**64
        h ^= h >> np.uint64(31)
    return h


def group_rows(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups of identical rows: the first row of each group and the group of each row.

    ``A`` is a 0/1 matrix (compared as packed bits), a float matrix (``-0.0 == 0.0``, and NaN,
    a missing cell, equals NaN: every split sends two such rows the same way) or an integer
    matrix. ``first[g]`` is the smallest row index of group ``g``; groups are numbered
    in an order fixed by their contents. Rows are sorted by a 64-bit hash, and only rows whose
    hashes collide are sorted by their words, so the cost is one sort of ``n`` integers.
    """
    words = _row_keys(A)
    n, width = words.shape
    if width <= 1:
        key = words[:, 0] if width else np.zeros(n, dtype=np.uint64)
        order = np.argsort(key, kind="stable")
    else:
        h = _hash_rows(words)
        order = np.argsort(h, kind="stable")
        ordered_hash = h[order]
        same = ordered_hash[1:] == ordered_hash[:-1]
        in_run = np.zeros(n, dtype=bool)
        in_run[1:] |= same
        in_run[:-1] |= same
        if in_run.any():  # equal hashes: sort those rows by their words (hash first)
            sub = order[in_run]
            order[in_run] = sub[np.lexsort((*words[sub].T[::-1], h[sub]))]
    ordered = words[order]
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    group_sorted = np.cumsum(new_group) - 1
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = group_sorted
    return order[new_group], inverse


def distinct_bitsets(bits: np.ndarray, n: int) -> np.ndarray:
    """Indices of the features worth keeping, given as column bitsets of ``n`` rows, ascending.

    Drops constant features and every feature identical or complementary to an earlier one:
    a tree can use the earlier feature instead, with its branches swapped if complementary.
    Each bitset is compared flipped so that row 0 reads 0; the cost is a sort of ``k``
    bitsets, never a copy of the dense matrix.
    """
    if n == 0 or len(bits) == 0:
        return np.zeros(0, dtype=np.int64)
    bits = bits.copy()
    flipped = (bits[:, 0] & np.uint64(1)) != 0
    bits[flipped] = ~bits[flipped]
    tail = n % 64
    if tail:  # bits past the last row stay zero after the flip
        bits[:, -1] &= np.uint64((1 << tail) - 1)
    first, _ = group_rows(bits)
    constant = ~bits[first].any(axis=1)  # after the flip, a constant feature is all zeros
    return np.sort(first[~constant]).astype(np.int64)


def distinct_features(B: np.ndarray) -> np.ndarray:
    """:func:`distinct_bitsets` of the columns of a dense 0/1 matrix ``(n, k)``."""
    B = np.asarray(B)
    if B.ndim != 2:
        raise ValueError(f"expected a 2-D binary matrix, got shape {B.shape}")
    return distinct_bitsets(column_bitsets(B), B.shape[0])


def unpack_columns(
    bits: np.ndarray, n: int, on_block: Callable[[], None] | None = None
) -> np.ndarray:
    """Column bitsets ``(k, words)`` back to a C-contiguous uint8 ``(n, k)`` matrix.

    A block of columns is unpacked at once, then copied into the matrix in row tiles (a
    transposition tile by tile stays in the cache). ``on_block()`` is called between
    blocks (progress, deadline).
    """
    k = len(bits)
    B = np.empty((n, k), dtype=np.uint8)
    for start in range(0, k, TILE_COLUMNS):
        block = np.unpackbits(
            bits[start : start + TILE_COLUMNS].view(np.uint8), axis=1, count=n, bitorder="little"
        )
        for row in range(0, n, TILE_ROWS):
            B[row : row + TILE_ROWS, start : start + TILE_COLUMNS] = block[
                :, row : row + TILE_ROWS
            ].T
        if on_block is not None:
            on_block()
    return B


# ---------------------------------------------------------------------- contradictions
def find_contradictions(X: np.ndarray, y: np.ndarray) -> list[list[int]]:
    """Groups of rows with identical features but not all the same label.

    Returns 0-based row indices, ascending within a group, groups ordered by their first row.
    """
    X = np.asarray(X)
    y = np.asarray(y)
    if len(X) == 0:
        return []
    _, rows = group_rows(X)
    _, labels = np.unique(y, return_inverse=True)
    labels = labels.reshape(-1)
    # a group is contradictory when its rows do not all carry the label of its first row
    first_label = np.full(rows.max() + 1, -1, dtype=np.int64)
    first_label[rows[::-1]] = labels[::-1]
    mixed = np.zeros(len(first_label), dtype=bool)
    mixed[rows[labels != first_label[rows]]] = True
    members = np.flatnonzero(mixed[rows])
    groups: dict[int, list[int]] = {}
    for i in members.tolist():
        groups.setdefault(int(rows[i]), []).append(i)
    return list(groups.values())


def contradiction_error(
    groups: Sequence[Sequence[int]],
    y: np.ndarray,
    line_numbers: np.ndarray,
    source: str | None,
    limit: int = 10,
) -> ContradictionError:
    """The error for contradictory rows, listing at most ``limit`` groups by line number."""
    y = np.asarray(y)
    line_numbers = np.asarray(line_numbers)
    count = len(groups)
    verb = "group of rows has" if count == 1 else "groups of rows have"
    head = f"no consistent tree exists: {count} {verb} identical features but different labels"
    lines = [f"{head} (rows numbered from 1)" if source is None else f"{head} in {source}"]
    where = "rows" if source is None else "lines"
    for group in groups[:limit]:
        shown = group[:_ROWS_SHOWN]
        numbers = ", ".join(str(line_numbers[i]) for i in shown)
        labels = ", ".join(str(y[i]) for i in shown)
        if len(group) > len(shown):
            numbers += f", ... ({len(group)} rows)"
            labels += ", ..."
        lines.append(f"  {where} {numbers}: labels {labels}")
    if count > limit:
        lines.append(f"  ... and {count - limit} more groups")
    lines.append("set resolve='majority' to keep each group's majority label")
    line_groups = [[int(line_numbers[i]) for i in group] for group in groups]
    return ContradictionError("\n".join(lines), line_groups)


def resolve_majority(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, int]:
    """Give every group of identical rows its majority label (ties: the smallest label).

    Returns the new labels and the number of rows whose label changed.
    """
    y = np.asarray(y)
    resolved = y.copy()
    changed = 0
    for group in find_contradictions(X, y):
        labels, counts = np.unique(y[group], return_counts=True)
        majority = labels[np.argmax(counts)]  # argmax takes the first, i.e. smallest, of ties
        changed += int(np.count_nonzero(y[group] != majority))
        resolved[group] = majority
    return resolved, changed
