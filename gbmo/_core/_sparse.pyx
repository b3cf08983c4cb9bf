"""Kernels for scipy sparse X (CSR / CSC): binning, the sparse binned layout,
histograms, partition scratch and prediction, none of which densifies X.

Binned layout of a sparse feature (CSC-like): the rows whose bin differs from
the feature's *zero bin* (the bin of the value 0) in increasing order, with
their bins; every other row is in the zero bin. Column s holds entries
indptr[s] .. indptr[s + 1] - 1 of `indices` (uint32 rows) and `bins` (8-bit,
or 16-bit above 255 bins).

A sparse feature's histogram over a node's rows is built from the node's
rows' stored entries only: row_slots lays the entries out again by row, for
_histogram.build_histograms_by_row, and the zero bin is then the node's
[G, H, count] totals minus the other bins.
"""
from cython.parallel cimport prange
from libc.math cimport isnan
from libc.stdlib cimport free, malloc

import numpy as np

from .common cimport (BIN_INDEX_t, G_H_t, HIST_t, NODE_t, X_BINNED_t, X_t, histogram_row,
                      is_bin_of, uint16_t)
from .leaves cimport add_leaf, check_prediction_shapes, start_row
from numpy cimport int32_t, int64_t, uint32_t

ctypedef fused X_IN_t:
    float
    double

ctypedef fused INDEX_t:
    int32_t
    int64_t


cdef inline int bin_of_value(double x, const X_t* edges, int n_edges,
                             int missing_bin) noexcept nogil:
    """The number of edges strictly below x (as _binning.map_to_bins); NaN: missing_bin."""
    cdef int lo = 0
    cdef int hi = n_edges
    cdef int mid
    if isnan(x):
        return missing_bin
    while lo < hi:
        mid = (lo + hi) // 2
        if edges[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def map_sparse_to_bins(const X_IN_t[::1] data,
                       const INDEX_t[::1] indptr,
                       const INDEX_t[::1] indices,
                       bint by_row,
                       const X_t[:, ::1] edges,
                       const int[::1] n_edges,
                       int missing_bin,
                       X_BINNED_t[::1] out,
                       int n_threads):
    """out[k] = the bin of the stored value data[k]. by_row: CSR (indices are
    features), else CSC (the feature of entry k is its column)."""
    cdef Py_ssize_t n_major = indptr.shape[0] - 1
    cdef Py_ssize_t major, k, f
    for major in prange(n_major, nogil=True, schedule="dynamic", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        for k in range(indptr[major], indptr[major + 1]):
            f = indices[k] if by_row else major
            out[k] = <X_BINNED_t> bin_of_value(data[k], &edges[f, 0], n_edges[f], missing_bin)


def count_off_zero_bins(const X_BINNED_t[::1] stored_bins,
                        const INDEX_t[::1] indptr,
                        const INDEX_t[::1] indices,
                        bint by_row,
                        const X_BINNED_t[::1] zero_bin,
                        int64_t[::1] counts):
    """counts[f] += the number of stored entries of feature f outside its zero bin."""
    cdef Py_ssize_t n_major = indptr.shape[0] - 1
    cdef Py_ssize_t major, k, f
    with nogil:
        for major in range(n_major):
            for k in range(indptr[major], indptr[major + 1]):
                f = indices[k] if by_row else major
                if stored_bins[k] != zero_bin[f]:
                    counts[f] += 1


def scatter_binned(const X_BINNED_t[::1] stored_bins,
                   const INDEX_t[::1] indptr,
                   const INDEX_t[::1] indices,
                   bint by_row,
                   const X_BINNED_t[::1] zero_bin,
                   const unsigned char[::1] is_sparse,
                   const int[::1] column_of,
                   int64_t[::1] cursor,
                   uint32_t[::1] out_indices,
                   X_BINNED_t[::1] out_bins,
                   X_BINNED_t[:, ::1] dense):
    """Writes every stored entry outside its feature's zero bin: to the sparse
    layout (at cursor[column], which advances) or to dense[column, row]
    (pre-filled with the zero bin). Entries arrive in increasing row order
    within a feature (CSR rows in order, CSC with sorted indices)."""
    cdef Py_ssize_t n_major = indptr.shape[0] - 1
    cdef Py_ssize_t major, k, f, row, c
    cdef int64_t pos
    cdef X_BINNED_t b
    with nogil:
        for major in range(n_major):
            for k in range(indptr[major], indptr[major + 1]):
                if by_row:
                    f = indices[k]
                    row = major
                else:
                    f = major
                    row = indices[k]
                b = stored_bins[k]
                if b == zero_bin[f]:
                    continue
                c = column_of[f]
                if is_sparse[f]:
                    pos = cursor[c]
                    cursor[c] = pos + 1
                    out_indices[pos] = <uint32_t>row
                    out_bins[pos] = b
                else:
                    dense[c, row] = b


def decompress_column(const int64_t[::1] indptr,
                      const uint32_t[::1] indices,
                      const X_BINNED_t[::1] bins,
                      Py_ssize_t column,
                      int zero_bin,
                      X_BINNED_t[::1] out):
    """out[i] = the bin of row i in sparse column `column` (n_rows entries):
    O(n_rows) bins of scratch, reused across splits."""
    cdef Py_ssize_t k
    if out.shape[0] == 0:
        return
    with nogil:
        for k in range(out.shape[0]):
            out[k] = <X_BINNED_t> zero_bin
        for k in range(indptr[column], indptr[column + 1]):
            out[indices[k]] = bins[k]


def row_slots(const int64_t[::1] indptr,
              const uint32_t[::1] indices,
              const X_BINNED_t[::1] bins,
              const int64_t[::1] feature_of_column,
              Py_ssize_t n_bins,
              Py_ssize_t n_rows):
    """(row_indptr, slot): the stored entries of the sparse columns again by
    row, each row's in column order, as the slots f * n_bins + b of their
    features' histogram rows (a bin b above the missing row n_bins - 1 in
    it), for _histogram.build_histograms_by_row. A count and a fill, so the
    only memory beyond the result is a cursor per row (an argsort of the
    entries took 12 bytes each more)."""
    cdef Py_ssize_t n_columns = indptr.shape[0] - 1
    cdef Py_ssize_t c, k, r
    cdef int64_t base
    if feature_of_column.shape[0] != n_columns or indices.shape[0] != bins.shape[0] \
            or indptr[n_columns] != indices.shape[0]:
        raise ValueError("row_slots needs a feature per column and a bin per stored row")
    row_indptr_array = np.zeros(n_rows + 1, dtype=np.int64)
    cdef int64_t[::1] row_indptr = row_indptr_array
    slot_array = np.empty(indices.shape[0], dtype=np.uint32)
    cdef uint32_t[::1] slot = slot_array
    cursor_array = np.empty(n_rows, dtype=np.int64)
    cdef int64_t[::1] cursor = cursor_array
    with nogil:
        for k in range(indices.shape[0]):
            if indices[k] >= n_rows:
                with gil:
                    raise ValueError(f"stored row {indices[k]} of {n_rows} rows")
            row_indptr[indices[k] + 1] += 1
        for r in range(n_rows):
            row_indptr[r + 1] += row_indptr[r]
            cursor[r] = row_indptr[r]
        for c in range(n_columns):
            base = feature_of_column[c] * n_bins
            for k in range(indptr[c], indptr[c + 1]):
                r = indices[k]
                slot[cursor[r]] = <uint32_t> (base + histogram_row(bins[k], n_bins - 1))
                cursor[r] += 1
    return row_indptr_array, slot_array


cdef inline X_BINNED_t binned_value(Py_ssize_t i, Py_ssize_t f, const X_BINNED_t* dense,
                                    Py_ssize_t n_rows, const int* column_of,
                                    const unsigned char* is_sparse, const int64_t* indptr,
                                    const uint32_t* indices, const X_BINNED_t* bins,
                                    const X_BINNED_t* zero_bin) noexcept nogil:
    """The bin of row i, feature f in the mixed layout: a dense read, or a binary
    search of the row among the sparse column's stored rows."""
    cdef Py_ssize_t c = column_of[f]
    cdef int64_t lo, hi, mid
    if not is_sparse[f]:
        return dense[c * n_rows + i]
    lo = indptr[c]
    hi = indptr[c + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < <uint32_t>i:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[c + 1] and indices[lo] == <uint32_t>i:
        return bins[lo]
    return zero_bin[c]


def predict_binned_mixed(const X_BINNED_t[:, ::1] dense,
                         const int[::1] column_of,
                         const unsigned char[::1] is_sparse,
                         const int64_t[::1] indptr,
                         const uint32_t[::1] indices,
                         const X_BINNED_t[::1] bins,
                         const X_BINNED_t[::1] zero_bin,
                         Py_ssize_t n_rows,
                         int missing_bin,
                         const NODE_t[::1] tree_roots,
                         const int[::1] node_feature,
                         const BIN_INDEX_t[::1] node_bin,
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
    """_predict.predict_binned for the mixed dense / sparse binned layout.
    Arrays may be empty (no dense or no sparse feature): they are then never read."""
    cdef Py_ssize_t d = out.shape[1]
    cdef Py_ssize_t i, t
    cdef NODE_t node
    cdef X_BINNED_t b
    cdef const X_BINNED_t* dense_ptr = NULL
    cdef const uint32_t* indices_ptr = NULL
    cdef const X_BINNED_t* bins_ptr = NULL
    cdef const X_BINNED_t* zero_ptr = NULL
    if not is_bin_of(missing_bin, X_BINNED_t is uint16_t):
        raise ValueError(f"missing_bin {missing_bin} is not a bin of the binned data's dtype")
    if n_rows == 0 or tree_roots.shape[0] == 0:
        return
    if dense.shape[0] > 0:
        dense_ptr = &dense[0, 0]
    if indices.shape[0] > 0:
        indices_ptr = &indices[0]
        bins_ptr = &bins[0]
    if zero_bin.shape[0] > 0:
        zero_ptr = &zero_bin[0]
    for i in prange(n_rows, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        for t in range(tree_roots.shape[0]):
            node = tree_roots[t]
            while node_left[node] >= 0:
                b = binned_value(i, node_feature[node], dense_ptr, n_rows, &column_of[0],
                                 &is_sparse[0], &indptr[0], indices_ptr, bins_ptr, zero_ptr)
                if b == missing_bin:
                    node = node_left[node] if node_missing_left[node] else node_right[node]
                elif b <= node_bin[node]:
                    node = node_left[node]
                else:
                    node = node_right[node]
            add_leaf(&out[i, 0], d, node_value[node], &value_start[0], &output_start[0],
                     &values[0], &outputs[0])


cdef inline NODE_t reach_leaf_csr(const X_IN_t* data, const INDEX_t* cols, Py_ssize_t nnz,
                                  NODE_t node, const int* feature, const X_t* threshold,
                                  const unsigned char* missing_left,
                                  const NODE_t* left, const NODE_t* right) noexcept nogil:
    """A CSR row (sorted column indices cols[:nnz], values data[:nnz]) down one
    tree: a feature not stored is 0. Same comparisons as the dense traversal."""
    cdef double x
    cdef Py_ssize_t lo, hi, mid
    cdef int f
    while left[node] >= 0:
        f = feature[node]
        lo = 0
        hi = nnz
        while lo < hi:
            mid = (lo + hi) // 2
            if cols[mid] < f:
                lo = mid + 1
            else:
                hi = mid
        if lo < nnz and cols[lo] == f:
            x = data[lo]
        else:
            x = 0.0
        if isnan(x):
            node = left[node] if missing_left[node] else right[node]
        elif x <= threshold[node]:
            node = left[node]
        else:
            node = right[node]
    return node


def predict_raw_csr(const X_IN_t[::1] data,
                    const INDEX_t[::1] indices,
                    const INDEX_t[::1] indptr,
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
    """_predict.predict_raw for canonical CSR X (sorted indices, no duplicates),
    traversed in place: each visited node binary-searches its feature in the row."""
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t d = out.shape[1]
    cdef Py_ssize_t i, t
    cdef NODE_t node
    cdef const X_IN_t* data_ptr = NULL
    cdef const INDEX_t* indices_ptr = NULL
    check_prediction_shapes(n, init_score.shape[0], out.shape[0], d)
    if data.shape[0] > 0:
        data_ptr = &data[0]
        indices_ptr = &indices[0]
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        start_row(&out[i, 0], &init_score[0], d)
        for t in range(tree_roots.shape[0]):
            node = reach_leaf_csr(data_ptr + indptr[i], indices_ptr + indptr[i],
                                  indptr[i + 1] - indptr[i], tree_roots[t], &node_feature[0],
                                  &node_threshold[0], &node_missing_left[0], &node_left[0],
                                  &node_right[0])
            add_leaf(&out[i, 0], d, node_value[node], &value_start[0], &output_start[0],
                     &values[0], &outputs[0])


def predict_leaf_raw_csr(const X_IN_t[::1] data,
                         const INDEX_t[::1] indices,
                         const INDEX_t[::1] indptr,
                         const NODE_t[::1] tree_roots,
                         const int[::1] node_feature,
                         const X_t[::1] node_threshold,
                         const unsigned char[::1] node_missing_left,
                         const NODE_t[::1] node_left,
                         const NODE_t[::1] node_right,
                         const NODE_t[::1] node_value,
                         NODE_t[:, ::1] out,
                         int n_threads):
    """_predict.predict_leaf_raw for canonical CSR X."""
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t i, t
    cdef NODE_t node
    cdef const X_IN_t* data_ptr = NULL
    cdef const INDEX_t* indices_ptr = NULL
    if n <= 0 or tree_roots.shape[0] == 0:
        return
    if data.shape[0] > 0:
        data_ptr = &data[0]
        indices_ptr = &indices[0]
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        for t in range(tree_roots.shape[0]):
            node = reach_leaf_csr(data_ptr + indptr[i], indices_ptr + indptr[i],
                                  indptr[i + 1] - indptr[i], tree_roots[t], &node_feature[0],
                                  &node_threshold[0], &node_missing_left[0], &node_left[0],
                                  &node_right[0])
            out[i, t] = node_value[node]
