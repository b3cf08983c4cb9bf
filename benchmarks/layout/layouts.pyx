# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The two histogram layouts DESIGN.md asks to compare, single-threaded so the
comparison is of memory access, not of scheduling.

feature_major: X_binned (p, n); for each feature, for each node row, add the
    row's gathered gradient block to the feature's bin (gbmo's kernel).
row_major: X_binned (n, p); for each node row, for each feature, the same add.
"""
from libc.string cimport memset


def feature_major(const unsigned char[:, ::1] X_binned, const unsigned int[::1] rows,
                  const float[:, ::1] ordered, double[:, :, ::1] hist):
    cdef Py_ssize_t n = rows.shape[0], width = hist.shape[2], n_bins = hist.shape[1]
    cdef Py_ssize_t f, i, j
    cdef double* bin_row
    cdef const float* grad_row
    with nogil:
        memset(&hist[0, 0, 0], 0, hist.shape[0] * n_bins * width * sizeof(double))
        for f in range(X_binned.shape[0]):
            for i in range(n):
                bin_row = &hist[f, X_binned[f, rows[i]], 0]
                grad_row = &ordered[i, 0]
                for j in range(width):
                    bin_row[j] += grad_row[j]


def row_major(const unsigned char[:, ::1] X_binned_rows, const unsigned int[::1] rows,
              const float[:, ::1] ordered, double[:, :, ::1] hist):
    cdef Py_ssize_t n = rows.shape[0], width = hist.shape[2], n_bins = hist.shape[1]
    cdef Py_ssize_t p = X_binned_rows.shape[1]
    cdef Py_ssize_t f, i, j
    cdef double* bin_row
    cdef const float* grad_row
    cdef const unsigned char* bins
    with nogil:
        memset(&hist[0, 0, 0], 0, hist.shape[0] * n_bins * width * sizeof(double))
        for i in range(n):
            bins = &X_binned_rows[rows[i], 0]
            grad_row = &ordered[i, 0]
            for f in range(p):
                bin_row = &hist[f, bins[f], 0]
                for j in range(width):
                    bin_row[j] += grad_row[j]
