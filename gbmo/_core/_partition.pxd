from .common cimport ROW_t


cdef void threshold_sides(unsigned char* goes_left, Py_ssize_t n_flags, int threshold_bin,
                          bint missing_left, int missing_bin) noexcept nogil

cdef Py_ssize_t partition_rows(ROW_t* rows, Py_ssize_t n, const void* column, bint wide_bins,
                               Py_ssize_t n_total, const unsigned char* goes_left,
                               Py_ssize_t n_flags, ROW_t* left_buffer, ROW_t* right_buffer,
                               int n_threads) noexcept nogil
