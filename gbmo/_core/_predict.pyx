"""Forest traversal, in parallel over rows.

A forest is packed into flat node arrays shared by all its trees: node_left[i]
is -1 for a leaf, and node_value[i] is then the leaf's index l. Internal nodes
send a row left when its value is <= node_threshold[i] (binned: bin <=
node_bin[i]), and a missing value (NaN, or the missing bin) left iff
node_missing_left[i].

Leaf l's values are values[value_start[l]:value_start[l + 1]]. A dense leaf
(output_start[l] < 0) holds all d outputs in order; a sparse leaf holds only
the outputs listed at outputs[output_start[l]:], so adding it costs its k
values rather than d.
"""
from cython.parallel cimport prange
from libc.math cimport isnan

from .common cimport NODE_t, ROW_t, X_BINNED_t, X_t
from .leaves cimport add_leaf, check_prediction_shapes, start_row

ctypedef fused X_IN_t:
    float
    double


cdef inline NODE_t reach_leaf_raw(const char* row, Py_ssize_t feature_stride, bint is_double,
                                  NODE_t node, const int* feature, const X_t* threshold,
                                  const unsigned char* missing_left,
                                  const NODE_t* left, const NODE_t* right) noexcept nogil:
    """row points at a sample's first feature; features are feature_stride bytes apart."""
    cdef double x
    cdef const char* cell
    while left[node] >= 0:
        cell = row + feature[node] * feature_stride
        x = (<const double*> cell)[0] if is_double else (<const float*> cell)[0]
        if isnan(x):
            node = left[node] if missing_left[node] else right[node]
        elif x <= threshold[node]:
            node = left[node]
        else:
            node = right[node]
    return node


def predict_raw(const X_IN_t[:, :] X,
                const NODE_t[::1] tree_roots,
                const int[::1] node_feature,
                const X_t[::1] node_threshold,
                const unsigned char[::1] node_missing_left,
                const NODE_t[::1] node_left,
                const NODE_t[::1] node_right,
                const NODE_t[::1] node_value,
                const long long[::1] value_start,
                const long long[::1] output_start,
                const double[::1] values,
                const int[::1] outputs,
                const double[::1] init_score,
                double[:, ::1] out,
                int n_threads):
    """out[i] = init_score + the sum over trees of the leaf row i reaches. X may
    have any strides. out may be uninitialised: each row is started here, so
    that it is written while in cache rather than in a pass of its own."""
    cdef Py_ssize_t n = X.shape[0]
    cdef Py_ssize_t d = out.shape[1]
    cdef Py_ssize_t feature_stride = X.strides[1]
    cdef bint is_double = X_IN_t is double
    cdef Py_ssize_t i, t
    cdef NODE_t node
    check_prediction_shapes(n, init_score.shape[0], out.shape[0], d)
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        start_row(&out[i, 0], &init_score[0], d)
        for t in range(tree_roots.shape[0]):
            node = reach_leaf_raw(<const char*> &X[i, 0], feature_stride, is_double,
                                  tree_roots[t], &node_feature[0], &node_threshold[0],
                                  &node_missing_left[0], &node_left[0], &node_right[0])
            add_leaf(&out[i, 0], d, node_value[node], &value_start[0], &output_start[0],
                     &values[0], &outputs[0])


def predict_leaf_raw(const X_IN_t[:, :] X,
                     const NODE_t[::1] tree_roots,
                     const int[::1] node_feature,
                     const X_t[::1] node_threshold,
                     const unsigned char[::1] node_missing_left,
                     const NODE_t[::1] node_left,
                     const NODE_t[::1] node_right,
                     const NODE_t[::1] node_value,
                     NODE_t[:, ::1] out,
                     int n_threads):
    """out[i, t] = the index (into values) of the leaf row i reaches in tree t."""
    cdef Py_ssize_t n = X.shape[0]
    cdef Py_ssize_t feature_stride = X.strides[1]
    cdef bint is_double = X_IN_t is double
    cdef Py_ssize_t i, t
    cdef NODE_t node
    if n == 0 or tree_roots.shape[0] == 0:
        return
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        for t in range(tree_roots.shape[0]):
            node = reach_leaf_raw(<const char*> &X[i, 0], feature_stride, is_double,
                                  tree_roots[t], &node_feature[0], &node_threshold[0],
                                  &node_missing_left[0], &node_left[0], &node_right[0])
            out[i, t] = node_value[node]


def predict_binned(const X_BINNED_t[:, ::1] X_binned,
                   X_BINNED_t missing_bin,
                   const NODE_t[::1] tree_roots,
                   const int[::1] node_feature,
                   const X_BINNED_t[::1] node_bin,
                   const unsigned char[::1] node_missing_left,
                   const NODE_t[::1] node_left,
                   const NODE_t[::1] node_right,
                   const NODE_t[::1] node_value,
                   const long long[::1] value_start,
                   const long long[::1] output_start,
                   const double[::1] values,
                   const int[::1] outputs,
                   double[:, ::1] out,
                   int n_threads):
    """predict_raw for X_binned of shape (n_features, n_rows), binned with the
    edges the trees were grown on."""
    cdef Py_ssize_t n = X_binned.shape[1]
    cdef Py_ssize_t d = out.shape[1]
    cdef Py_ssize_t i, t
    cdef NODE_t node
    cdef X_BINNED_t b
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        for t in range(tree_roots.shape[0]):
            node = tree_roots[t]
            while node_left[node] >= 0:
                b = X_binned[node_feature[node], i]
                if b == missing_bin:
                    node = node_left[node] if node_missing_left[node] else node_right[node]
                elif b <= node_bin[node]:
                    node = node_left[node]
                else:
                    node = node_right[node]
            add_leaf(&out[i, 0], d, node_value[node], &value_start[0], &output_start[0],
                     &values[0], &outputs[0])


def add_leaf_values(const ROW_t[::1] rows,
                    const Py_ssize_t[::1] leaf_start,
                    const Py_ssize_t[::1] leaf_stop,
                    const long long[::1] value_start,
                    const long long[::1] output_start,
                    const double[::1] values,
                    const int[::1] outputs,
                    double[:, ::1] raw,
                    int n_threads):
    """Adds leaf l to raw[rows[s]] for every s in [leaf_start[l], leaf_stop[l]):
    the training rows' update from the grower's final partition, no traversal."""
    cdef Py_ssize_t d = raw.shape[1]
    cdef Py_ssize_t l, s
    for l in prange(leaf_start.shape[0], nogil=True, schedule="dynamic", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        for s in range(leaf_start[l], leaf_stop[l]):
            add_leaf(&raw[rows[s], 0], d, l, &value_start[0], &output_start[0],
                     &values[0], &outputs[0])
