"""A grown tree's nodes as the model's node arrays (tree.Tree's node_* fields).

Both growth loops number their nodes in the order they made them; a model
numbers them breadth-first, so that children come after their parents.
Done here in one pass: on small data, the 30 numpy calls it took cost as much
as a tenth of a boosting round.
"""
from libc.math cimport INFINITY

cimport numpy as cnp
import numpy as np

from .common cimport BIN_INDEX_t, NODE_t, X_t

cnp.import_array()


cdef inline cnp.ndarray empty(Py_ssize_t n, int typenum):
    """np.empty(n) of a numpy type number without a Python call: the arrays
    here are written through their data pointers, as acquiring a typed
    memoryview of each cost about as much as the pass itself."""
    cdef cnp.npy_intp size = n
    return cnp.PyArray_EMPTY(1, &size, typenum, 0)


def tree_arrays(const int[::1] order, const int[::1] left, const int[::1] right,
                const Py_ssize_t[::1] start, const Py_ssize_t[::1] stop,
                const int[::1] feature, const int[::1] bin_,
                const unsigned char[::1] missing_left, const double[::1] gain,
                const unsigned char[::1] categorical, const X_t[:, ::1] edges,
                const int[::1] n_edges):
    """(arrays, leaves, splits, leaf_start, leaf_stop) of the grown nodes
    listed breadth-first in order: arrays holds Tree's node_* fields; leaves
    and splits the grown nodes of the model's leaves and splits, each in the
    model's order; leaf_start and leaf_stop the rows [start, stop) of each
    of the model's leaves.

    Per grown node: left and right (its children, -1 for a leaf), its rows
    [start, stop), and for a split its feature, bin, missing side and gain. A split
    on a feature flagged in categorical (empty: none) sends a set of
    categories left, which lives apart: its threshold and bin are 0. Other
    splits send left the bins <= bin, whose raw threshold is the feature's
    edge there (edges[f, :n_edges[f]]), or +inf from its last value bin on."""
    cdef Py_ssize_t n = order.shape[0], n_features = edges.shape[0], position, i
    cdef Py_ssize_t n_leaves = 0, n_splits = 0, n_grown = left.shape[0]
    cdef int node, f
    if not (right.shape[0] == start.shape[0] == stop.shape[0] == feature.shape[0]
            == bin_.shape[0] == missing_left.shape[0] == gain.shape[0] == n_grown) \
            or n > n_grown:
        raise ValueError(f"the grown nodes' arrays must have one entry per node ({n_grown}) "
                         f"and order at most as many; got right {right.shape[0]}, start "
                         f"{start.shape[0]}, stop {stop.shape[0]}, feature {feature.shape[0]}, "
                         f"bin {bin_.shape[0]}, "
                         f"missing_left {missing_left.shape[0]}, gain {gain.shape[0]}, "
                         f"order {n}")
    if n_edges.shape[0] != n_features or (categorical.shape[0] not in (0, n_features)):
        raise ValueError(f"n_edges (and categorical, when given) must have one entry per "
                         f"feature of edges ({n_features}); got {n_edges.shape[0]} and "
                         f"{categorical.shape[0]}")
    for position in range(n_features):
        if not 0 <= n_edges[position] <= edges.shape[1]:
            raise ValueError(f"feature {position} has {n_edges[position]} edges of "
                             f"{edges.shape[1]}")
    for position in range(n):
        node = order[position]
        if not 0 <= node < n_grown:
            raise ValueError(f"order lists node {node} of {n_grown}")
        if stop[node] < start[node]:
            raise ValueError(f"node {node} stops at row {stop[node]} before its start "
                             f"{start[node]}")
        if left[node] >= 0:
            f = feature[node]
            if not 0 <= f < n_features:
                raise ValueError(f"split node {node} has feature {f} of {n_features}")
            if bin_[node] < 0:
                raise ValueError(f"split node {node} has bin {bin_[node]}")
    # model position of each grown node (those in order; the rest stay -1)
    cdef NODE_t[::1] model_position = np.empty(n_grown, dtype=np.int32)
    model_position[:] = -1
    for position in range(n):
        model_position[order[position]] = <NODE_t>position
    for position in range(n):
        node = order[position]
        if left[node] >= 0 and not (0 <= left[node] < n_grown and 0 <= right[node]
                                    < n_grown and model_position[left[node]] > position
                                    and model_position[right[node]] > position):
            raise ValueError(f"split node {node}'s children must follow it in order")
    node_feature, node_left, node_right, node_value, leaves, splits = (
        empty(n, cnp.NPY_INT32) for _ in range(6))
    node_threshold, node_gain = empty(n, cnp.NPY_FLOAT64), empty(n, cnp.NPY_FLOAT64)
    node_bin, node_missing_left = empty(n, cnp.NPY_UINT16), empty(n, cnp.NPY_UINT8)
    node_count = empty(n, cnp.NPY_INT64)
    leaf_start, leaf_stop = empty(n, cnp.NPY_INTP), empty(n, cnp.NPY_INTP)
    cdef int* out_feature = <int*> cnp.PyArray_DATA(node_feature)
    cdef int* out_left = <int*> cnp.PyArray_DATA(node_left)
    cdef int* out_right = <int*> cnp.PyArray_DATA(node_right)
    cdef int* out_value = <int*> cnp.PyArray_DATA(node_value)
    cdef int* out_leaves = <int*> cnp.PyArray_DATA(leaves)
    cdef int* out_splits = <int*> cnp.PyArray_DATA(splits)
    cdef double* out_threshold = <double*> cnp.PyArray_DATA(node_threshold)
    cdef double* out_gain = <double*> cnp.PyArray_DATA(node_gain)
    cdef BIN_INDEX_t* out_bin = <BIN_INDEX_t*> cnp.PyArray_DATA(node_bin)
    cdef unsigned char* out_missing_left = <unsigned char*> cnp.PyArray_DATA(node_missing_left)
    cdef long long* out_count = <long long*> cnp.PyArray_DATA(node_count)
    cdef Py_ssize_t* out_leaf_start = <Py_ssize_t*> cnp.PyArray_DATA(leaf_start)
    cdef Py_ssize_t* out_leaf_stop = <Py_ssize_t*> cnp.PyArray_DATA(leaf_stop)
    for position in range(n):
        node = order[position]
        out_count[position] = stop[node] - start[node]
        # a leaf's fields, and a categorical split's threshold and bin
        out_feature[position] = out_bin[position] = out_missing_left[position] = 0
        out_threshold[position] = out_gain[position] = 0.0
        out_left[position] = out_right[position] = out_value[position] = -1
        if left[node] < 0:
            out_value[position] = <int>n_leaves
            out_leaves[n_leaves] = node
            out_leaf_start[n_leaves] = start[node]
            out_leaf_stop[n_leaves] = stop[node]
            n_leaves += 1
            continue
        out_splits[n_splits] = node
        n_splits += 1
        f = feature[node]
        out_feature[position] = f
        out_missing_left[position] = missing_left[node]
        out_gain[position] = gain[node]
        out_left[position] = model_position[left[node]]
        out_right[position] = model_position[right[node]]
        if categorical.shape[0] and categorical[f]:
            continue
        out_bin[position] = <BIN_INDEX_t>bin_[node]
        out_threshold[position] = (edges[f, bin_[node]] if bin_[node] < n_edges[f]
                                   else INFINITY)
    arrays = {"node_feature": node_feature, "node_threshold": node_threshold,
              "node_bin": node_bin, "node_missing_left": node_missing_left,
              "node_gain": node_gain, "node_count": node_count, "node_left": node_left,
              "node_right": node_right, "node_value": node_value}
    return (arrays, leaves[:n_leaves], splits[:n_splits], leaf_start[:n_leaves],
            leaf_stop[:n_leaves])
