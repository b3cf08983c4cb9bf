"""64-bit index arithmetic in the kernels, without gigabytes of memory: the
arrays below span more than 2^31 bytes or rows of *virtual* memory (numpy's
zeros come from calloc, whose untouched pages are never backed), and the
kernels touch only a few cells past the 2^31 boundary. A 32-bit offset would
read the wrong cell (or crash) there."""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from gbmo._core import (G_H_DTYPE, HIST_DTYPE, NODE_DTYPE, ROW_DTYPE, WALK_NODE_DTYPE,
                        X_BINNED_DTYPE)
from gbmo._core._histogram import build_histograms
from gbmo._core._partition import split_rows
from gbmo._core._predict import predict_raw

BEYOND_INT32 = 2**31 + 12


def test_predict_raw_reads_features_more_than_2_gib_apart():
    # feature 1 of row i lives 2^31 + 8 bytes after feature 0
    buffer = np.zeros(BEYOND_INT32 // 8 + 16)
    column_offset = BEYOND_INT32 // 8
    X = as_strided(buffer, shape=(4, 2), strides=(8, column_offset * 8))
    buffer[column_offset:column_offset + 4] = [-1.0, 5.0, -2.0, 7.0]  # feature 1
    # a stump on feature 1 at threshold 0: leaves 0 (left) and 1 (right)
    arrays = dict(
        tree_roots=np.zeros(1, NODE_DTYPE), tree_depth=np.ones(1, np.int32),
        # feature 1 (times 4, see WalkNode), children 1 and 2; a leaf is its own left child
        walk_nodes=np.array([(0.0, 4, 1), (np.inf, 0, 1), (np.inf, 0, 2)], WALK_NODE_DTYPE),
        node_value=np.array([-1, 0, 1], NODE_DTYPE))
    out = np.zeros((4, 1))
    predict_raw(X, *arrays.values(), np.array([0, 1, 2], np.int64), np.full(2, -1, np.int64),
                np.array([10.0, 20.0]), np.zeros(1, np.int32), np.zeros(1), out, 2)
    np.testing.assert_array_equal(out[:, 0], [10.0, 20.0, 10.0, 20.0])


def test_histogram_and_partition_take_row_indices_beyond_2_31():
    n_rows = BEYOND_INT32
    X_binned = np.zeros((1, n_rows), dtype=X_BINNED_DTYPE)
    rows = np.array([5, n_rows - 3, n_rows - 2, 2**31 + 1], dtype=ROW_DTYPE)
    X_binned[0, rows] = [0, 2, 1, 2]
    ordered = np.ones((4, 2), dtype=G_H_DTYPE)  # [gradient 1, count 1] per row
    ordered[:, 0] = [1.0, 2.0, 3.0, 4.0]
    hist = np.zeros((1, 4, 2), dtype=HIST_DTYPE)
    build_histograms(X_binned, rows, ordered, np.zeros(1, np.int32), hist, 2)
    np.testing.assert_array_equal(hist[0, :3, 0], [1.0, 3.0, 6.0])
    np.testing.assert_array_equal(hist[0, :3, 1], [1, 1, 2])

    left_buffer, right_buffer = np.empty(4, ROW_DTYPE), np.empty(4, ROW_DTYPE)
    n_left = split_rows(rows, X_binned[0], 1, False, 255, left_buffer, right_buffer, 2)
    assert n_left == 2
    assert rows[:2].tolist() == [5, n_rows - 2]
    assert rows[2:].tolist() == [n_rows - 3, 2**31 + 1]
