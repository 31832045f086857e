"""The one data preparation of satdt: from a validated table to what a search reads.

Grouping identical rows and identical (or complementary) binary features happens here and
only here, on packed bits, so the SAT and DP sides share one implementation.
"""

from __future__ import annotations

import numpy as np


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
    packed = np.packbits((B != 0).T, axis=1, bitorder="little")
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
        return np.ascontiguousarray(A.astype(np.float64) + 0.0).view(np.uint64)  # -0.0 == 0.0
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

    ``A`` is a 0/1 matrix (compared as packed bits), a float matrix (``-0.0 == 0.0``) or an
    integer matrix. ``first[g]`` is the smallest row index of group ``g``; groups are numbered
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


def distinct_features(B: np.ndarray) -> np.ndarray:
    """Indices of the binary columns worth keeping on these rows, ascending.

    Drops constant columns and every column identical or complementary to an earlier column:
    a tree can use the earlier column instead, with its branches swapped if complementary.
    Columns are compared as bitsets (each flipped so that row 0 reads 0), so the cost is a
    sort of ``k`` bitsets of ``n`` bits, never a copy of ``B``.
    """
    B = np.asarray(B)
    if B.ndim != 2:
        raise ValueError(f"expected a 2-D binary matrix, got shape {B.shape}")
    n, k = B.shape
    if n == 0 or k == 0:
        return np.zeros(0, dtype=np.int64)
    bits = column_bitsets(B)
    flipped = B[0] != 0
    bits[flipped] = ~bits[flipped]
    tail = n % 64
    if tail:  # bits past the last row stay zero after the flip
        bits[:, -1] &= np.uint64((1 << tail) - 1)
    first, _ = group_rows(bits)
    constant = ~bits[first].any(axis=1)  # after the flip, a constant column is all zeros
    return np.sort(first[~constant]).astype(np.int64)
