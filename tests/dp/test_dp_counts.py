"""The shared DP counting kernels (satdt.dp._counts) against brute force on tiny weighted data."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import depth2_tree_error, expand_class_weights, min_error

from satdt.dp._counts import (
    build_data,
    count_in_space,
    eval_pairs_difference_penalised,
    eval_pairs_penalised,
    make_space,
    new_scratch,
    new_space,
    similarity_bound,
    solve_depth1,
    solve_depth2,
)

WEIGHTS = [0.0, 0.1, 0.25, 0.3, 0.5, 1.0, 1.5, 2.0, 2.7]


@st.composite
def weighted_rows(draw):
    """Binary rows with class weights: most rows of one class, some carrying several classes."""
    n = draw(st.integers(1, 10))
    m = draw(st.integers(1, 5))
    n_classes = draw(st.integers(2, 4))
    B = np.array(
        draw(st.lists(st.lists(st.integers(0, 1), min_size=m, max_size=m), min_size=n, max_size=n)),
        dtype=np.uint8,
    )
    W = np.zeros((n, n_classes))
    for u in range(n):
        if draw(st.booleans()):
            W[u, draw(st.integers(0, n_classes - 1))] = draw(st.sampled_from(WEIGHTS[1:]))
        else:
            W[u] = draw(st.lists(st.sampled_from(WEIGHTS), min_size=n_classes, max_size=n_classes))
    subset = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return B, W, subset


def _setup(B, W):
    data, flip = build_data(B, W)
    m, n_classes = B.shape[1], W.shape[1]
    return data, flip, new_scratch(m, n_classes), new_space(m, n_classes)


def _reference(B, W, depth, penalty=0.0):
    Bx, y, w = expand_class_weights(B, W)
    return min_error(Bx, y, w, W.shape[1], depth, leaf_penalty=penalty)


def _leaves(f, gl, gr):
    """Leaves of a depth-two tree as the kernels return it (-1 = leaf)."""
    return 1 if f < 0 else (1 if gl < 0 else 2) + (1 if gr < 0 else 2)


def test_build_data_flips_dense_features_and_uses_int32_indices():
    B = np.array([[1, 0, 1], [1, 1, 0], [1, 0, 0], [0, 0, 1]], dtype=np.uint8)
    W = np.array([[1.0, 0.0], [0.0, 2.0], [0.5, 0.5], [0.0, 0.0]])
    data, flip = build_data(B, W)
    assert flip.tolist() == [True, False, False]
    assert np.array_equal(data.Bd, B ^ flip.astype(np.uint8))
    assert data.ones.dtype == np.int32 and data.ones_ptr.dtype == np.int64
    for u in range(B.shape[0]):
        row = data.ones[data.ones_ptr[u] : data.ones_ptr[u + 1]]
        assert row.tolist() == np.flatnonzero(data.Bd[u]).tolist()
    assert data.pure.tolist() == [0, 1, -1, -1]
    assert data.rirr.tolist() == [0.0, 0.0, 0.5, 0.0]
    assert np.array_equal(B, np.array([[1, 0, 1], [1, 1, 0], [1, 0, 0], [0, 0, 1]]))  # copied


@settings(deadline=None, max_examples=examples(300))
@given(weighted_rows())
def test_depth1_and_depth2_match_brute_force(problem):
    B, W, subset = problem
    data, _flip, scr, space = _setup(B, W)
    rows = np.flatnonzero(subset).astype(np.int32)
    Bs, Ws = data.Bd[rows], W[rows]  # the tree's features are the (possibly flipped) columns

    e1, f, _work = solve_depth1(rows, data, scr)
    assert e1 == pytest.approx(_reference(B[rows], Ws, 1), abs=1e-9)
    assert depth2_tree_error(Bs, Ws, f, -1, -1) == pytest.approx(e1, abs=1e-9)

    e2, f, gl, gr, _work = solve_depth2(rows, data, scr, space)
    assert e2 == pytest.approx(_reference(B[rows], Ws, 2), abs=1e-9)
    assert depth2_tree_error(Bs, Ws, f, gl, gr) == pytest.approx(e2, abs=1e-9)
    assert e2 <= e1 + 1e-12


@settings(deadline=None, max_examples=examples(200))
@given(weighted_rows(), st.integers(0, 4), st.sampled_from([0.0, 0.4, 3.0]))
def test_children_counted_in_the_parent_space(problem, g, penalty):
    """The smaller child counted in its parent's space, the larger one by subtraction; each
    solved with a leaf penalty (its cost: the error plus the penalty per leaf)."""
    B, W, subset = problem
    g = g % B.shape[1]
    data, _flip, scr, qs = _setup(B, W)
    m, n_classes = B.shape[1], W.shape[1]
    xs, large = new_space(m, n_classes), new_space(m, n_classes, pairs=False)
    rows = np.flatnonzero(subset).astype(np.int32)
    a, _work = make_space(rows, data, scr, qs)
    small = rows[data.Bd[rows, g] == 0]
    other = rows[data.Bd[rows, g] == 1]
    count_in_space(small, data, qs.loc, a, xs, scr.buf)

    e, i, il, ir, _work = eval_pairs_penalised(xs, xs.pairs, small.shape[0], a, penalty, scr)
    assert e == pytest.approx(_reference(B[small], W[small], 2, penalty), abs=1e-9)
    f, gl, gr = (int(qs.act[x]) if x >= 0 else -1 for x in (i, il, ir))
    cost = depth2_tree_error(data.Bd[small], W[small], f, gl, gr) + penalty * _leaves(f, gl, gr)
    assert cost == pytest.approx(e, abs=1e-9)

    large.single[:a] = qs.single[:a] - xs.single[:a]
    large.tot[:] = qs.tot - xs.tot
    large.n1[:a] = qs.n1[:a] - xs.n1[:a]
    e, i, il, ir, _work = eval_pairs_difference_penalised(
        large, qs.pairs, xs.pairs, other.shape[0], a, penalty, scr
    )
    assert e == pytest.approx(_reference(B[other], W[other], 2, penalty), abs=1e-9)
    f, gl, gr = (int(qs.act[x]) if x >= 0 else -1 for x in (i, il, ir))
    cost = depth2_tree_error(data.Bd[other], W[other], f, gl, gr) + penalty * _leaves(f, gl, gr)
    assert cost == pytest.approx(e, abs=1e-9)


@settings(deadline=None, max_examples=examples(200))
@given(weighted_rows(), st.integers(0, 4), st.integers(0, 4), st.integers(0, 1), st.integers(0, 2))
def test_similarity_bound_is_a_lower_bound(problem, g, f, side, depth):
    B, W, subset = problem
    data, _flip, scr, qs = _setup(B, W)
    rows = np.flatnonzero(subset).astype(np.int32)
    a, _work = make_space(rows, data, scr, qs)
    active = [int(x) for x in qs.act[:a]]
    if not active:
        return
    g, f = active[g % len(active)], active[f % len(active)]
    if g == f:  # the bound compares two different features (the diagonal holds no pairs)
        return
    then = rows[data.Bd[rows, g] == side]
    now = rows[data.Bd[rows, f] == side]
    opt_then = _reference(data.Bd[then], W[then], depth)
    bound = similarity_bound(opt_then, qs, a, g, f, side)
    assert bound <= _reference(data.Bd[now], W[now], depth) + 1e-9
