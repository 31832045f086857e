"""Numba kernels of the born-again tree search (:mod:`satdt.dp.born_again`).

The grid: ``N`` cells in C order over ``p`` axes (the forest's features with two levels or
more), ``cls[z]`` the forest's class on cell ``z``, ``coords[z, k]`` its level on axis ``k``,
``stride[k]`` the step of one level on axis ``k``. A *region* (Vidal & Schiffer, "Born-Again
Tree Ensembles", ICML 2020, Section 4: the subproblems of the dynamic programme) is a box of
cells named by its two corners, ``bot`` (lowest levels) and ``top``; its key is
``bot * N + top``. Splitting a region on axis ``a`` after level ``l`` gives the regions
``[bot, top - (hi_a - l) e_a]`` (left, ``x_a <= l``) and ``[bot + (l + 1 - lo_a) e_a, top]``.

**Canonical regions.** If two end slices of a region along an axis carry the same classes
(the *faces* of that end agree), dropping the outer one changes neither the optimal depth
nor the optimal size: a tree for the smaller region decides the dropped slice as its twin,
since every threshold it tests on that axis lies inside the smaller range. Dropping slices
until every end face differs gives the region's canonical form, and the search memoises
canonical regions only. A region is pure exactly when its canonical form is one cell. This
is BA-Trees' hyperplane filtering (``FSpace::exportUsefulHyperplanes``) applied inside
every region, not once for the whole space; many regions share one canonical form.

**Faces.** Whether the slices ``x`` and ``x + 1`` of axis ``b`` differ inside a region is
asked of a bit-packed copy of the classes: the last axes of the grid (``nout`` onwards)
form words of ``isize <= 64`` cells, one bit plane per bit of the class index, and
``masks[k, lo, hi]`` selects the cells of a word whose level on the packed axis ``k`` lies
in ``lo .. hi``; a face is then a handful of word operations. A region keeps, per axis and
end, a *witness*: a cell of that end face whose class differs from its neighbour across
the face. A child region inherits its parent's witnesses that still lie inside it (or whose
projection onto it still differs), so most faces need no look at all; when a slice is
dropped, the witnesses on it move to its twin, which decides the same.

**The search** runs on an explicit stack (one frame per region being solved), so that it
can stop after a budget of steps and resume where it stopped: time limits and a growing
memo never lose work. Frames hold the region, the axis order (widest canonical range
first), the position of the split loop and the best value so far.

- Depth (``OBJ_DEPTH``): BA-Trees' recursion with its two bounds (Section 4.2): along an
  axis, the left child's depth never decreases and the right child's never increases with
  the split level (Theorem 4), so the best split of an axis is found by bisection; and a
  sub-region's optimum bounds its region from below, so a region stops as soon as a
  child's depth meets the best split found (``lb >= ub``).
- Size (``OBJ_SIZE``, splits = leaves - 1) and size within a depth budget (``OBJ_BUDGET``:
  the fewest splits of a tree of depth at most the region's budget, ``UNKNOWN`` when there
  is none; children get the budget less one): every split level is tried (the sum has no
  bisection), an axis stops when its left child alone reaches the best value (it only
  grows with the level). Depth then size is the depth's search, then the budgeted one
  with the optimal depth as the root's budget: exactly the fewest leaves among the trees
  of minimum depth. (BA-Trees' depth-then-leaves programme combines each child's own
  lexicographic optimum, which can miss it: a child shallower than its sibling may take
  more depth for fewer leaves.)

Memo: open addressing, one int64 pair per slot (``memo[2 i]`` the key, ``-1`` empty;
``memo[2 i + 1]`` the value), so that a look-up reads one cache line; beside it the best
split of each canonical region (``axis << 16 | level``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

I8_T = types.int8[::1]
I16_2D_T = types.int16[:, ::1]
I64_T = types.int64[::1]
I64_2D_T = types.int64[:, ::1]
U64_2D_T = types.uint64[:, ::1]
U64_3D_T = types.uint64[:, :, ::1]
I32_T = types.int32[::1]

OBJ_DEPTH, OBJ_SIZE, OBJ_BUDGET = 0, 1, 2
#: "No bound yet" in frames; the value of a region no tree within its budget classifies.
UNKNOWN = np.int64(2**62)
#: Keys are ``region * BUDGETS + budget`` (the budget is 0 but for ``OBJ_BUDGET``).
BUDGETS = np.int64(64)

# slots of ``info`` (the grid's sizes and the objective)
I_N, I_P, I_NOUT, I_ISIZE, I_OBJ = 0, 1, 2, 3, 4
# slots of ``state`` (counters, the stack pointer, the run's status)
S_CALLS, S_EXPANSIONS, S_HITS, S_ENTRIES, S_LIMIT, S_SCANS, S_WORDS = 0, 1, 2, 3, 4, 5, 6
S_SP, S_STATUS, S_RESULT, S_BUDGET, S_STEPS, S_BEST_BOUND, S_EARLY = 7, 8, 9, 10, 11, 12, 13
N_STATE = 14
# statuses
DONE, PAUSED, GROW = 0, 1, 2
# columns of a frame (then ``p`` columns: the axis order)
F_BOT, F_TOP, F_KEY, F_RAW, F_OI, F_S, F_E, F_L, F_PHASE, F_LB, F_UB, F_SPLIT = range(12)
F_BUDGET = 12
N_FIELDS = 13
# phases of a frame
NEXT, WAIT_LEFT, WAIT_RIGHT = 0, 1, 2
NEED = np.int64(-1)  # an evaluation that pushed a frame


@njit(types.int64(I64_T, types.int64), cache=True)
def slot(memo, key):
    """The slot of ``key`` in the memo, or the empty slot where it would go."""
    mask = (memo.shape[0] >> 1) - 1
    i = ((key * np.int64(-7046029254386353131)) >> np.int64(17)) & mask
    while memo[2 * i] != -1 and memo[2 * i] != key:
        i = (i + 1) & mask
    return i


@njit(types.void(I64_T, I32_T, I64_T, I32_T), cache=True)
def rehash(old_memo, old_splits, memo, splits):
    """Move every entry of a memo into a larger (empty) one."""
    for j in range(old_memo.shape[0] >> 1):
        key = old_memo[2 * j]
        if key != -1:
            i = slot(memo, key)
            memo[2 * i] = key
            memo[2 * i + 1] = old_memo[2 * j + 1]
            splits[i] = old_splits[j]


@njit(
    types.int64(
        types.int64, types.int64, types.int64, types.int64,
        I64_T, I16_2D_T, I64_T, U64_2D_T, U64_3D_T, I64_T, I64_T, I64_T,
    ),
    cache=True,
)  # fmt: skip
def face_witness(bot, top, b, x, info, coords, stride, words, masks, istride, idx, state):
    """A cell ``z`` of the region with level ``x`` on axis ``b`` whose class differs from
    the cell ``z + e_b``'s, or -1 when the slices ``x`` and ``x + 1`` agree in the region."""
    p = info[I_P]
    nout = info[I_NOUT]
    isize = info[I_ISIZE]
    m = np.uint64(0xFFFFFFFFFFFFFFFF)
    for k in range(nout, p):
        m &= masks[k, coords[bot, k], coords[top, k]]
    inner = b >= nout
    if inner:
        m &= masks[b, x, x]
        shift = np.uint64(istride[b])
        step = 0
    else:
        shift = np.uint64(0)
        step = stride[b] // isize
    o = 0
    for k in range(nout):
        idx[k] = coords[bot, k]
        o += idx[k] * (stride[k] // isize)
    if not inner:
        o += (x - coords[bot, b]) * step
        idx[b] = x
    planes = words.shape[0]
    state[S_SCANS] += 1
    while True:
        state[S_WORDS] += 1
        for plane in range(planes):
            w = words[plane, o]
            d = (w ^ w >> shift) & m if inner else (w ^ words[plane, o + step]) & m
            if d != 0:
                pos = 0
                while ((d >> np.uint64(pos)) & np.uint64(1)) == 0:
                    pos += 1
                return o * isize + pos
        k = nout - 1
        while k >= 0:
            if k == b:
                k -= 1
                continue
            if idx[k] < coords[top, k]:
                idx[k] += 1
                o += stride[k] // isize
                break
            o -= (idx[k] - coords[bot, k]) * (stride[k] // isize)
            idx[k] = coords[bot, k]
            k -= 1
        if k < 0:
            return -1


@njit(
    types.UniTuple(types.int64, 2)(
        types.int64, types.int64, types.int64, I64_T, I64_T,
        I8_T, I64_T, I16_2D_T, I64_T, U64_2D_T, U64_3D_T, I64_T, I64_T, I64_T,
    ),
    cache=True,
)  # fmt: skip
def canonical(  # noqa: C901 - the faces' loop, inlined
    bot, top, a, src, dst, cls, info, coords, stride, words, masks, istride, idx, state
):
    """The canonical form of a region that differs from its parent (witnesses ``src``) on
    axis ``a`` only (``a = -1``: no parent; ``src`` is then ignored). Writes the canonical
    region's witnesses (``2 * axis + end``, -1 where the axis has one level) to ``dst``.

    A range of two equal slices keeps its lower level, so that the canonical form of a
    region does not depend on the order the faces are looked at."""
    p = info[I_P]
    for b in range(p):
        lo = coords[bot, b]
        hi = coords[top, b]
        for s in range(2):
            j = 2 * b + s
            dst[j] = -2  # to look at
            if lo == hi:
                dst[j] = -1
                continue
            if a < 0:
                continue
            w = src[j]
            if w < 0:
                continue
            if b == a:
                c = coords[w, b]
                if (s == 0 and c == lo) or (s == 1 and c == hi - 1):
                    dst[j] = w
                continue
            c = coords[w, a]
            if coords[bot, a] <= c <= coords[top, a]:
                dst[j] = w
                continue
            # the witness's projection onto the region often still differs
            if c < coords[bot, a]:
                z = w + (coords[bot, a] - c) * stride[a]
            else:
                z = w - (c - coords[top, a]) * stride[a]
            if cls[z] != cls[z + stride[b]]:
                dst[j] = z
    pending = True
    while pending:
        pending = False
        for b in range(p):
            for s in range(2):
                j = 2 * b + s
                if dst[j] != -2:
                    continue
                lo = coords[bot, b]
                hi = coords[top, b]
                x = lo if s == 0 else hi - 1
                w = face_witness(
                    bot, top, b, x, info, coords, stride, words, masks, istride, idx, state
                )
                if w >= 0:
                    dst[j] = w
                    continue
                # the end slices agree: drop the outer one (the top one of a range of two)
                pending = True
                if s == 0 and hi - lo > 1:
                    gone = lo
                    bot += stride[b]
                    move = stride[b]
                else:
                    gone = hi
                    top -= stride[b]
                    move = -stride[b]
                for jj in range(2 * p):
                    ww = dst[jj]
                    if ww >= 0 and coords[ww, b] == gone:
                        dst[jj] = ww + move  # its twin decides the same
                if coords[bot, b] == coords[top, b]:
                    dst[2 * b] = -1
                    dst[2 * b + 1] = -1
                else:
                    dst[2 * b + (1 if gone == hi else 0)] = -2
    return bot, top


@njit(types.void(types.int64, types.int64, types.int64, I64_T, I32_T, I64_T), cache=True)
def _store(key, value, split, memo, splits, state):
    i = slot(memo, key)
    if memo[2 * i] != key:
        memo[2 * i] = key
        state[S_ENTRIES] += 1
    memo[2 * i + 1] = value
    splits[i] = split


@njit(
    types.void(
        types.int64, types.int64, types.int64, types.int64, types.int64, types.int64, I64_T,
        I16_2D_T, I64_2D_T,
    ),
    cache=True,
)  # fmt: skip
def push(f, bot, top, key, raw, budget, info, coords, frames):
    """Set frame ``f`` to solve the canonical region ``[bot, top]`` (within a depth
    ``budget`` for ``OBJ_BUDGET``): axes widest first."""
    p = info[I_P]
    row = frames[f]
    row[F_BOT] = bot
    row[F_TOP] = top
    row[F_KEY] = key
    row[F_RAW] = raw
    row[F_BUDGET] = budget
    row[F_OI] = -1
    row[F_S] = 0
    row[F_E] = 0
    row[F_PHASE] = NEXT
    row[F_LB] = 1  # an impure region needs one split at least
    row[F_UB] = UNKNOWN
    row[F_SPLIT] = -1
    for k in range(p):  # insertion sort of the axes by decreasing range (stable)
        r = coords[top, k] - coords[bot, k]
        j = k
        while j > 0:
            prev = row[N_FIELDS + j - 1]
            if coords[top, prev] - coords[bot, prev] >= r:
                break
            row[N_FIELDS + j] = prev
            j -= 1
        row[N_FIELDS + j] = k


@njit(
    types.int64(
        types.int64, types.int64, types.int64, types.int64,
        I8_T, I64_T, I16_2D_T, I64_T, U64_2D_T, U64_3D_T, I64_T,
        I64_T, I32_T, I64_2D_T, I64_2D_T, I64_T, I64_T,
    ),
    cache=True,
)  # fmt: skip
def evaluate(
    cb, ct, a, f, cls, info, coords, stride, words, masks, istride,
    memo, splits, frames, wit, idx, state,
):  # fmt: skip
    """The value of the region ``[cb, ct]``, a child (split on axis ``a``) of frame ``f``'s
    region: from the memo, or 0 when pure; else a frame ``f + 1`` is pushed to solve its
    canonical form and ``NEED`` is returned."""
    state[S_CALLS] += 1
    if cb == ct:
        return 0
    n = info[I_N]
    budget = frames[f, F_BUDGET] - 1 if info[I_OBJ] == OBJ_BUDGET else 0
    raw = (cb * n + ct) * BUDGETS + budget
    i = slot(memo, raw)
    if memo[2 * i] == raw:
        state[S_HITS] += 1
        return memo[2 * i + 1]
    b2, t2 = canonical(
        cb, ct, a, wit[f], wit[f + 1], cls, info, coords, stride, words, masks, istride, idx, state
    )
    if b2 == t2:
        memo[2 * i] = raw
        memo[2 * i + 1] = 0
        state[S_ENTRIES] += 1
        return 0
    key = (b2 * n + t2) * BUDGETS + budget
    if key != raw:
        j = slot(memo, key)
        if memo[2 * j] == key:
            state[S_HITS] += 1
            value = memo[2 * j + 1]
            memo[2 * i] = raw
            memo[2 * i + 1] = value
            state[S_ENTRIES] += 1
            return value
    if info[I_OBJ] == OBJ_BUDGET and budget == 0:  # impure, and no split left
        _store(key, UNKNOWN, -1, memo, splits, state)
        if key != raw:
            _store(raw, UNKNOWN, -1, memo, splits, state)
        return UNKNOWN
    push(f + 1, b2, t2, key, raw if key != raw else -1, budget, info, coords, frames)
    # sub-regions solved already bound it from below: the regions one end slice smaller
    row = frames[f + 1]
    # and, but for a budget (the child's is smaller), its parent's best split from above
    if info[I_OBJ] != OBJ_BUDGET and frames[f, F_UB] < row[F_UB]:
        row[F_UB] = frames[f, F_UB]
    for b in range(info[I_P]):
        if coords[t2, b] > coords[b2, b]:
            for region in (b2 * n + t2 - stride[b], (b2 + stride[b]) * n + t2):
                probe = region * BUDGETS + budget
                j = slot(memo, probe)
                if memo[2 * j] == probe and memo[2 * j + 1] > row[F_LB]:
                    row[F_LB] = memo[2 * j + 1]
    state[S_SP] = f + 1
    return NEED


@njit(types.int64(I64_T, types.int64), cache=True)
def _split_level(row, objective):
    """The level after which the frame splits next: the middle of the bisection (depth),
    the next level in turn (the size objectives)."""
    if objective == OBJ_DEPTH:
        return (row[F_S] + row[F_E]) // 2
    return row[F_S]


@njit(types.boolean(types.int64, types.int64, types.int64), cache=True)
def _too_big(left, ub, objective):
    """Whether a split whose left child has value ``left`` cannot beat ``ub`` (one split
    more), or the left child has no tree within its budget (nor will the larger ones)."""
    return left >= UNKNOWN or (ub != UNKNOWN and 1 + left >= ub)


@njit(types.int64(types.int64, types.int64, types.int64), cache=True)
def _combine(left, right, objective):
    """The value of a split whose children have values ``left`` and ``right``."""
    if left >= UNKNOWN or right >= UNKNOWN:  # a side no tree within its budget classifies
        return UNKNOWN
    return 1 + left + right


@njit(
    types.int64(
        I8_T, I64_T, I16_2D_T, I64_T, U64_2D_T, U64_3D_T, I64_T,
        I64_T, I32_T, I64_2D_T, I64_2D_T, I64_T, I64_T,
    ),
    cache=True,
)  # fmt: skip
def run(  # noqa: C901 - one state machine: a frame's phases in one loop
    cls, info, coords, stride, words, masks, istride, memo, splits, frames, wit, idx, state
):
    """Run the search on the stack ``frames[0 .. state[S_SP]]`` until the root is solved
    (``DONE``, its value in ``state[S_RESULT]``), ``state[S_BUDGET]`` steps passed
    (``PAUSED``) or the memo is half full (``GROW``: enlarge it with :func:`rehash` and run
    again). A frame's phase says which child it waits for; a solved child's value comes
    back in ``ret`` (kept in ``state[S_RESULT]`` between runs)."""
    p = info[I_P]
    objective = info[I_OBJ]
    ret = state[S_RESULT]
    steps = 0
    while True:
        f = state[S_SP]
        if f < 0:
            state[S_STATUS] = DONE
            break
        if state[S_ENTRIES] >= state[S_LIMIT]:
            state[S_STATUS] = GROW
            break
        if steps >= state[S_BUDGET]:
            state[S_STATUS] = PAUSED
            break
        steps += 1
        row = frames[f]
        bot = row[F_BOT]
        top = row[F_TOP]
        if row[F_OI] == -1:  # a new frame
            state[S_EXPANSIONS] += 1
            row[F_OI] = 0
            ax = row[N_FIELDS]
            row[F_S] = coords[bot, ax]
            row[F_E] = coords[top, ax]
        phase = row[F_PHASE]
        while True:  # advance the frame until it waits for a child or is solved
            if phase == WAIT_LEFT:
                left = ret
                row[F_L] = left
                if objective != OBJ_BUDGET:  # a child within the same budget bounds it
                    row[F_LB] = max(row[F_LB], left)
                ax = row[N_FIELDS + row[F_OI]]
                l = _split_level(row, objective)
                phase = NEXT
                if objective == OBJ_DEPTH:
                    if 1 + left >= row[F_UB]:
                        row[F_E] = l  # deeper left children lie above l (Theorem 4)
                        continue
                elif _too_big(left, row[F_UB], objective):
                    row[F_S] = row[F_E]  # the left child only grows along this axis
                    continue
                v = evaluate(
                    bot + stride[ax] * (l + 1 - coords[bot, ax]), top, ax, f, cls, info,
                    coords, stride, words, masks, istride, memo, splits, frames, wit,
                    idx, state,
                )  # fmt: skip
                if v == NEED:
                    row[F_PHASE] = WAIT_RIGHT
                    break
                ret = v
                phase = WAIT_RIGHT
                continue
            if phase == WAIT_RIGHT:
                right = ret
                left = row[F_L]
                if objective != OBJ_BUDGET:
                    row[F_LB] = max(row[F_LB], right)
                ax = row[N_FIELDS + row[F_OI]]
                l = _split_level(row, objective)
                phase = NEXT
                if objective == OBJ_DEPTH:
                    if 1 + right < row[F_UB]:
                        row[F_UB] = 1 + max(left, right)
                        row[F_SPLIT] = (ax << 16) | l
                    if 1 + left >= row[F_UB]:
                        row[F_E] = l
                    if 1 + right >= row[F_UB]:
                        row[F_S] = l + 1  # deeper right children lie below l
                else:
                    value = _combine(left, right, objective)
                    if value < row[F_UB]:
                        row[F_UB] = value
                        row[F_SPLIT] = (ax << 16) | l
                    row[F_S] = l + 1
                continue
            # the next split to try, or the frame is solved
            solved = row[F_LB] >= row[F_UB]
            if solved:
                state[S_EARLY] += 1
            while not solved and row[F_S] >= row[F_E]:
                row[F_OI] += 1
                if row[F_OI] >= p:
                    solved = True
                    break
                ax = row[N_FIELDS + row[F_OI]]
                row[F_S] = coords[bot, ax]
                row[F_E] = coords[top, ax]
            if solved:
                value = row[F_UB]
                _store(row[F_KEY], value, row[F_SPLIT], memo, splits, state)
                if row[F_RAW] >= 0:
                    _store(row[F_RAW], value, -1, memo, splits, state)
                if value < UNKNOWN:
                    state[S_BEST_BOUND] = max(state[S_BEST_BOUND], value)
                ret = value
                state[S_SP] = f - 1
                break
            ax = row[N_FIELDS + row[F_OI]]
            l = _split_level(row, objective)
            v = evaluate(
                bot, top + stride[ax] * (l - coords[top, ax]), ax, f, cls, info, coords,
                stride, words, masks, istride, memo, splits, frames, wit, idx, state,
            )  # fmt: skip
            if v == NEED:
                row[F_PHASE] = WAIT_LEFT
                break
            ret = v
            phase = WAIT_LEFT
    state[S_RESULT] = ret
    state[S_STEPS] += steps
    return state[S_STATUS]
