"""tree_arrays (grown nodes -> the model's node arrays) against a plain
breadth-first numbering of the same nodes, and its refusals."""
import numpy as np
import pytest

from gbmo._core._tree_arrays import tree_arrays
from gbmo.binning import BinMapper


def _grown_tree(rng, n_splits, n_features):
    """A random tree as a growth loop leaves it: nodes numbered in the order
    they were made (children of a split made together, splits chosen in a
    random order), and the breadth-first order of the model."""
    left, right, open_leaves = [-1], [-1], [0]
    for _ in range(n_splits):
        node = open_leaves.pop(int(rng.integers(len(open_leaves))))
        left[node], right[node] = len(left), len(left) + 1
        left += [-1, -1]
        right += [-1, -1]
        open_leaves += [len(left) - 2, len(left) - 1]
    order = [0]
    for node in order:
        if left[node] >= 0:
            order += [left[node], right[node]]
    n = len(left)
    start = rng.integers(0, 1000, n).astype(np.intp)
    return (np.array(order, dtype=np.int32), np.array(left, dtype=np.int32),
            np.array(right, dtype=np.int32), start, start + rng.integers(1, 100, n),
            rng.integers(0, n_features, n).astype(np.int32),
            rng.integers(0, 12, n).astype(np.int32), rng.integers(0, 2, n).astype(np.uint8),
            rng.random(n))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("with_categorical", [False, True])
def test_tree_arrays_number_the_nodes_breadth_first(seed, with_categorical):
    rng = np.random.default_rng(seed)
    n_features = 4
    order, left, right, start, stop, feature, bin_, missing_left, gain = _grown_tree(
        rng, int(rng.integers(0, 12)), n_features)
    # the edges of a fitted BinMapper: some features with fewer bins than bin_
    X = np.c_[rng.normal(size=(200, 2)), rng.integers(0, 4, (200, 2))]
    mapper = BinMapper(max_bins=12).fit(X)
    edges, n_edges = mapper.edges_, mapper.n_edges_
    categorical = (np.array([0, 1, 0, 0], dtype=np.uint8) if with_categorical
                   else np.zeros(0, dtype=np.uint8))
    arrays, leaves, splits, leaf_start, leaf_stop = tree_arrays(
        order, left, right, start, stop, feature, bin_, missing_left, gain, categorical, edges,
        n_edges)
    position = {int(node): p for p, node in enumerate(order)}
    n_leaves = 0
    for p, node in enumerate(order):
        assert arrays["node_count"][p] == stop[node] - start[node]
        if left[node] < 0:
            assert arrays["node_value"][p] == n_leaves and leaves[n_leaves] == node
            assert leaf_start[n_leaves] == start[node] and leaf_stop[n_leaves] == stop[node]
            assert arrays["node_left"][p] == arrays["node_right"][p] == -1
            assert arrays["node_gain"][p] == 0 and arrays["node_feature"][p] == 0
            n_leaves += 1
            continue
        f = feature[node]
        assert arrays["node_value"][p] == -1
        assert arrays["node_left"][p] == position[left[node]]
        assert arrays["node_right"][p] == position[right[node]]
        assert arrays["node_feature"][p] == f and arrays["node_gain"][p] == gain[node]
        assert arrays["node_missing_left"][p] == missing_left[node]
        if with_categorical and categorical[f]:
            assert arrays["node_bin"][p] == 0 and arrays["node_threshold"][p] == 0
        else:
            assert arrays["node_bin"][p] == bin_[node]
            assert arrays["node_threshold"][p] == mapper.bin_threshold(f, bin_[node])
    np.testing.assert_array_equal(splits, [n for n in order if left[n] >= 0])
    assert len(leaves) == len(leaf_start) == len(leaf_stop) == n_leaves


def test_tree_arrays_refuse_nodes_they_cannot_number():
    rng = np.random.default_rng(0)
    order, left, right, start, stop, feature, bin_, missing_left, gain = _grown_tree(rng, 3, 2)
    edges, four_edges = np.zeros((2, 4)), np.full(2, 4, dtype=np.int32)
    no_flags = np.zeros(0, dtype=np.uint8)

    def call(n_edges=four_edges, **changed):
        arguments = dict(order=order, left=left, right=right, start=start, stop=stop,
                         feature=feature, bin_=bin_, missing_left=missing_left, gain=gain)
        arguments.update(changed)
        return tree_arrays(*arguments.values(), no_flags, edges, n_edges)

    with pytest.raises(ValueError, match="order lists node 99"):
        call(order=np.r_[order[:-1], 99].astype(np.int32))
    with pytest.raises(ValueError, match="has feature 5 of 2"):
        call(feature=np.full_like(feature, 5))
    with pytest.raises(ValueError, match="has bin -1"):
        call(bin_=np.full_like(bin_, -1))
    with pytest.raises(ValueError, match="children must follow it"):
        call(order=order[::-1].copy())
    with pytest.raises(ValueError, match="one entry per node \\(7\\).*stop 1"):
        call(stop=stop[:1])
    with pytest.raises(ValueError, match="node 0 stops at row 2 before its start 5"):
        call(start=np.r_[5, start[1:]].astype(np.intp), stop=np.r_[2, stop[1:]].astype(np.intp))
    with pytest.raises(ValueError, match="one entry per feature of edges \\(2\\); got 1"):
        call(n_edges=four_edges[:1])
    with pytest.raises(ValueError, match="feature 1 has 9 edges of 4"):
        call(n_edges=np.array([4, 9], dtype=np.int32))
