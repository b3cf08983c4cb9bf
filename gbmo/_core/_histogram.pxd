from numpy cimport int32_t, int64_t, uint32_t

from .common cimport G_H_t, HIST_t, ROW_t


ctypedef fused Summed:
    float
    double


cdef inline void sum_rows(const Summed* block, Py_ssize_t n_rows, Py_ssize_t width,
                          HIST_t* out) noexcept nogil:
    """out[j] = the sum of the first n_rows rows' column j (block row-major,
    width wide) in float64, row after row: serial, so the same on any thread
    count. For a node's gathered rows and a prefix of a histogram."""
    cdef Py_ssize_t i, j
    cdef double first = 0.0, second = 0.0, third = 0.0
    if width <= 3:
        # One output (rows of 2 or 3): the sums stay in registers. Through
        # out, each add waited for the store of the one before (the compiler
        # cannot tell that out does not alias block): 6% of a one-output
        # model's time went to the root's sums.
        for i in range(n_rows):
            first += block[i * width]
            if width > 1:
                second += block[i * width + 1]
            if width > 2:
                third += block[i * width + 2]
        out[0] = first
        if width > 1:
            out[1] = second
        if width > 2:
            out[2] = third
        return
    for j in range(width):
        out[j] = 0.0
    for i in range(n_rows):
        for j in range(width):
            out[j] += block[i * width + j]


cdef void gather_rows(const G_H_t* grad, const G_H_t* hess, Py_ssize_t d, Py_ssize_t k,
                      const ROW_t* rows, Py_ssize_t n_rows, Py_ssize_t n_total, G_H_t* out,
                      int n_threads) noexcept nogil

# value_bins, in the functions below: each feature's number of value bins
# (n_bins_non_missing), whose rows and the last are the only ones written:
# the rows between keep the 0 of the histograms' allocation
# (_histogram.zero_feature). NULL: every row.

cdef void build_feature_histograms(const void* X_binned, bint wide_bins, Py_ssize_t row_stride,
                                   const ROW_t* rows, Py_ssize_t n_rows, const G_H_t* ordered,
                                   const int* features, Py_ssize_t n_features,
                                   const int* columns, const int* skipped_bins,
                                   const int* value_bins, const HIST_t* totals, HIST_t* hist,
                                   Py_ssize_t n_bins, Py_ssize_t width,
                                   int n_threads) noexcept nogil

cdef struct ChildAndSibling:
    # a split's histograms, one feature at a time (build_child_and_sibling)
    const void* X_binned
    bint wide_bins              # X_binned's bins are 16-bit, else 8-bit
    Py_ssize_t row_stride
    const ROW_t* rows           # the built child's rows
    Py_ssize_t n_rows
    const G_H_t* ordered        # their gathered gradients
    const int* skipped_bins     # NULL: none
    const int* value_bins       # NULL: every row
    const HIST_t* totals        # the built child's sums
    const unsigned char* by_row # per feature 1 when the child's was built row by row
                                # already (NULL: none)
    HIST_t* child               # its histogram
    HIST_t* sibling             # the parent's histogram, made the sibling's in place
    Py_ssize_t n_bins
    Py_ssize_t width

cdef void build_child_and_sibling(void* state, int f) noexcept nogil

cdef void subtract_feature_histograms(const HIST_t* parent, const HIST_t* child,
                                      const int* features, Py_ssize_t n_features,
                                      const int* value_bins, Py_ssize_t n_bins,
                                      Py_ssize_t width, HIST_t* sibling,
                                      int n_threads) noexcept nogil

cdef void build_row_wise_histograms(const int64_t* indptr, const uint32_t* entry_slot,
                                    Py_ssize_t n_entries, double mean_entries_per_row,
                                    Py_ssize_t n_features,
                                    const unsigned char* wanted, const int* skipped_bins,
                                    const int* value_bins, const ROW_t* rows,
                                    Py_ssize_t n_rows, const G_H_t* ordered,
                                    const HIST_t* totals, HIST_t* hist, HIST_t* chunk_hists,
                                    Py_ssize_t n_chunk_hists, Py_ssize_t n_bins,
                                    Py_ssize_t width, int n_threads) noexcept nogil

cdef void build_nodes_histograms(const void* X_binned, bint wide_bins, Py_ssize_t row_stride,
                                 ROW_t** node_rows, const Py_ssize_t* node_counts,
                                 G_H_t** node_ordered, HIST_t** node_totals,
                                 HIST_t** node_hists, Py_ssize_t n_nodes, const int* features,
                                 Py_ssize_t n_features, const int* columns,
                                 const int* skipped_bins, const int* value_bins,
                                 Py_ssize_t n_bins, Py_ssize_t width,
                                 int n_threads) noexcept nogil
