"""Minimal sets and minimal hitting sets: the CXps of a row are the inclusion-minimal sets of
its blocking sets, its AXps their minimal hitting sets (the duality of Ignatiev et al., AIxIA
2020). The smallest AXp comes from PySAT's :class:`~pysat.examples.hitman.Hitman` (by MaxSAT);
every AXp at once from Berge's algorithm over bit masks of the CXps, with Hitman's enumeration
(one MaxSAT call per AXp) where the sets grow too many (:data:`BERGE_MAX_SETS`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TypeVar

# what a blocking set comes with (the explainer's path to another class)
Witness = TypeVar("Witness")


def minimal_sets(
    blocking: list[tuple[frozenset[int], Witness]],
) -> list[tuple[frozenset[int], Witness]]:
    """The inclusion-minimal blocking sets (the CXps), fewest features first; one witness each
    (the path the set blocks)."""
    ordered = sorted(blocking, key=lambda item: (len(item[0]), sorted(item[0])))
    minimal: list[tuple[frozenset[int], Witness]] = []
    for features, path in ordered:
        if not any(kept <= features for kept, _ in minimal):
            minimal.append((features, path))
    return minimal


def minimal_hitting_sets(
    sets: list[list[int]], deadline: float | None
) -> Iterator[list[int] | None]:
    """Every minimal hitting set of ``sets``, smallest first (PySAT's Hitman, by MaxSAT);
    ``None`` once ``deadline`` passes (checked after the first). No set to hit: the empty set
    is the only one."""
    if not sets:
        yield []
        return
    from pysat.examples.hitman import Hitman

    with Hitman(bootstrap_with=sets, htype="sorted") as hitman:
        first = True
        while True:
            if not first and deadline is not None and time.perf_counter() > deadline:
                yield None
                return
            first = False
            found = hitman.get()
            if found is None:
                return
            hitman.block(found)
            yield sorted(found)


#: the most sets Berge's algorithm keeps at a step before the enumeration turns to Hitman
BERGE_MAX_SETS = 20_000


def berge(sets: list[list[int]], deadline: float | None) -> list[int] | None:
    """Every minimal hitting set of ``sets`` as bit masks, by Berge's algorithm (Berge,
    *Hypergraphs*, 1989): the minimal hitting sets of the sets so far, extended by one set at a
    time; None when a step holds more than :data:`BERGE_MAX_SETS` or ``deadline`` passes.

    At a step with set ``s``, a hitting set ``h`` that meets ``s`` stays; one that misses it
    becomes ``h + {b}`` for each ``b`` of ``s``, kept unless a staying set is inside it. Those
    are all the new minimal ones: the grown sets cannot hold one another (``h' + {b'}`` inside
    ``h + {b}`` would put ``b'``, of ``s``, in ``h``), nor can a staying set hold a grown one.
    """
    family = [0]
    for mask in sorted({sum(1 << f for f in s) for s in sets}, key=int.bit_count):
        if deadline is not None and time.perf_counter() > deadline:
            return None
        bits = [1 << f for f in range(mask.bit_length()) if mask >> f & 1]
        staying = [h for h in family if h & mask]
        # a staying set inside h + {b} meets the new set in b alone: only those holding b
        holding = {b: [k for k in staying if k & b] for b in bits}
        grown = [
            h | b
            for h in family
            if not h & mask
            for b in bits
            if not any(k & (h | b) == k for k in holding[b])
        ]
        family = staying + grown
        if len(family) > BERGE_MAX_SETS:
            return None
    return family


def every_hitting_set(
    sets: list[list[int]], smallest: list[int], limit: int, deadline: float | None
) -> tuple[list[list[int]], bool]:
    """The minimal hitting sets of ``sets`` (every AXp, from the CXps), ``smallest`` (one of the
    fewest features) first, then by size and in the order of their features, at most ``limit``,
    and whether that is all of them.

    Berge's algorithm finds them all at once, without a solver call per set; past its limits
    (a family too large, the deadline) PySAT's Hitman enumerates them by MaxSAT, one call each.
    """
    masks = berge(sets, deadline)
    if masks is not None:
        found = sorted(
            ([f for f in range(m.bit_length()) if m >> f & 1] for m in masks),
            key=lambda h: (h != smallest, len(h), h),
        )
        return found[:limit], len(found) <= limit
    enumerated: list[list[int]] = []
    for hitting in minimal_hitting_sets(sets, deadline):
        if hitting is None or len(enumerated) >= limit:  # the time limit, or the limit
            return enumerated, False
        enumerated.append(hitting)
    return enumerated, True
