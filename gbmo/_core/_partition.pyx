"""Splitting a node's row indices into its left and right children in place."""
from cython.parallel cimport prange
from libc.string cimport memcpy

from libc.stdlib cimport free, malloc

from .common cimport (ROW_t, X_BINNED_t, flag_index, gbmo_prefetch_bin, is_bin_of,
                      prefetch_distance, uint8_t, uint16_t)


cdef void threshold_sides(unsigned char* goes_left, Py_ssize_t n_flags, int threshold_bin,
                          bint missing_left, int missing_bin) noexcept nogil:
    """goes_left's n_flags flags (see common.bin_flags) for a split "bins <=
    threshold_bin go left", the missing bin going left iff missing_left."""
    cdef Py_ssize_t b, missing = flag_index(missing_bin, n_flags)
    for b in range(n_flags):
        if b == missing:
            goes_left[b] = missing_left
        else:
            goes_left[b] = b <= threshold_bin


cdef inline void split_chunk(const ROW_t* rows, Py_ssize_t start, Py_ssize_t stop,
                             const X_BINNED_t* column, Py_ssize_t ahead,
                             const unsigned char* goes_left, Py_ssize_t n_flags,
                             ROW_t* left_buffer, ROW_t* right_buffer, Py_ssize_t* n_left,
                             Py_ssize_t* n_right) noexcept nogil:
    """rows[start:stop] into left_buffer[start:] and right_buffer[start:] by
    side, in order; n_left and n_right their counts. Prefetches the row ahead
    further on (none when 0). A 16-bit bin reads its flag at flag_index of
    goes_left's n_flags: the last for the missing bin and above
    (common.bin_flags); an 8-bit bin indexes its 256 flags directly."""
    cdef Py_ssize_t i, n_l = 0, n_r = 0
    cdef unsigned char b
    cdef ROW_t r
    # Branch-free: each row is written to both buffers and only the side
    # it goes to advances. A branch mispredicts on about half the rows
    # of a balanced split; this costs 0.8 ns a row whatever the split,
    # against 1.7-5 ns for splits from 50/50 to 90/10, 0.7 ns at 97/3
    # (benchmarks/README.md, "Partition").
    for i in range(start, stop):
        gbmo_prefetch_bin(column, rows, i, ahead, stop)
        r = rows[i]
        if X_BINNED_t is uint16_t:
            b = goes_left[flag_index(column[r], n_flags)]
        else:
            b = goes_left[column[r]]
        left_buffer[start + n_l] = r
        right_buffer[start + n_r] = r
        n_l = n_l + b
        n_r = n_r + 1 - b
    n_left[0] = n_l
    n_right[0] = n_r


cdef inline void gather_chunk(ROW_t* rows, Py_ssize_t start, const ROW_t* left_buffer,
                              const ROW_t* right_buffer, Py_ssize_t n_left, Py_ssize_t n_right,
                              Py_ssize_t left_offset, Py_ssize_t right_offset) noexcept nogil:
    """A chunk's sides, from the buffers to their places in rows."""
    if n_left > 0:
        memcpy(&rows[left_offset], &left_buffer[start], n_left * sizeof(ROW_t))
    if n_right > 0:
        memcpy(&rows[right_offset], &right_buffer[start], n_right * sizeof(ROW_t))


cdef Py_ssize_t partition_rows(ROW_t* rows, Py_ssize_t n, const void* column, bint wide_bins,
                               Py_ssize_t n_total, const unsigned char* goes_left,
                               Py_ssize_t n_flags, ROW_t* left_buffer, ROW_t* right_buffer,
                               int n_threads) noexcept nogil:
    """split_rows on raw pointers (column 16-bit bins when wide_bins, else
    8-bit; goes_left: 0 or 1 per bin, n_flags of them; n_total the column's
    length, which decides whether the loop prefetches); the grower's loop
    (_grow.pyx) calls it without the GIL."""
    if wide_bins:
        return partition_column(rows, n, <const uint16_t*> column, n_total, goes_left,
                                n_flags, left_buffer, right_buffer, n_threads)
    return partition_column(rows, n, <const uint8_t*> column, n_total, goes_left, n_flags,
                            left_buffer, right_buffer, n_threads)


cdef Py_ssize_t partition_column(ROW_t* rows, Py_ssize_t n, const X_BINNED_t* column,
                                 Py_ssize_t n_total, const unsigned char* goes_left,
                                 Py_ssize_t n_flags, ROW_t* left_buffer, ROW_t* right_buffer,
                                 int n_threads) noexcept nogil:
    cdef int n_chunks = n_threads if n >= n_threads else 1
    cdef Py_ssize_t chunk_size
    cdef Py_ssize_t[64] n_left_of, n_right_of, left_offset, right_offset
    cdef int c
    cdef Py_ssize_t total_left
    cdef Py_ssize_t ahead = prefetch_distance(n, n_total)
    if n == 0:
        return 0
    if n_chunks > 64:
        n_chunks = 64
    chunk_size = (n + n_chunks - 1) // n_chunks
    # no OpenMP on one thread (see common.pxd, SERIAL_REGION)
    if n_chunks > 1:
        for c in prange(n_chunks, schedule="static", num_threads=n_threads):
            split_chunk(rows, c * chunk_size, min((c + 1) * chunk_size, n), column, ahead,
                        goes_left, n_flags, left_buffer, right_buffer, &n_left_of[c],
                        &n_right_of[c])
    else:
        split_chunk(rows, 0, n, column, ahead, goes_left, n_flags, left_buffer,
                    right_buffer, &n_left_of[0], &n_right_of[0])

    total_left = 0
    for c in range(n_chunks):
        left_offset[c] = total_left
        total_left += n_left_of[c]
    right_offset[0] = total_left
    for c in range(1, n_chunks):
        right_offset[c] = right_offset[c - 1] + n_right_of[c - 1]

    if n_chunks > 1:
        for c in prange(n_chunks, schedule="static", num_threads=n_threads):
            gather_chunk(rows, c * chunk_size, left_buffer, right_buffer, n_left_of[c],
                         n_right_of[c], left_offset[c], right_offset[c])
    else:
        gather_chunk(rows, 0, left_buffer, right_buffer, n_left_of[0], n_right_of[0],
                     left_offset[0], right_offset[0])
    return total_left


def split_rows(ROW_t[::1] rows,
               const X_BINNED_t[::1] column,
               int threshold_bin,
               bint missing_left,
               int missing_bin,
               ROW_t[::1] left_buffer,
               ROW_t[::1] right_buffer,
               int n_threads,
               const unsigned char[::1] left_bins=None,
               Py_ssize_t n_flags=0):
    """Reorders rows so that those going left come first, each side keeping its
    order; returns how many go left. Buffers are scratch space of at least
    len(rows). Each thread partitions one contiguous chunk into the buffers at
    the chunk's offset, then the chunks are copied back in order.

    A row goes left when its bin is <= threshold_bin (the missing bin when
    missing_left), or, with left_bins (a categorical split's set: 256 flags
    for 8-bit bins, for 16-bit up to one per bin to the missing bin's, see
    common.bin_flags), when its flag is set. n_flags > 0 sizes the table a
    threshold split on 16-bit bins builds (common.bin_flags: the histogram
    rows), which otherwise reaches the missing bin: at 65,535 bins that
    took longer than partitioning a node of 100 rows."""
    cdef Py_ssize_t c, n_left
    cdef unsigned char* goes_left  # per bin: one lookup, whatever the split's kind
    if not is_bin_of(missing_bin, X_BINNED_t is uint16_t):
        raise ValueError(f"missing_bin {missing_bin} is not a bin of the column's dtype")
    if n_flags and not (n_flags == 256 if X_BINNED_t is uint8_t
                        else 2 <= n_flags <= missing_bin + 1):
        raise ValueError(f"n_flags sizes the table: 256 for 8-bit bins, 2 to the missing "
                         f"bin's {missing_bin + 1} for 16-bit; got {n_flags}")
    if not n_flags:
        n_flags = missing_bin + 1 if X_BINNED_t is uint16_t else 256
    if left_bins is not None:
        if not (left_bins.shape[0] == 256 if X_BINNED_t is uint8_t
                else 2 <= left_bins.shape[0] <= missing_bin + 1):
            raise ValueError(f"left_bins must have 256 flags for 8-bit bins, 2 to the missing "
                             f"bin's {missing_bin + 1} for 16-bit bins; got "
                             f"{left_bins.shape[0]}")
        n_flags = left_bins.shape[0]
    if left_buffer.shape[0] < rows.shape[0] or right_buffer.shape[0] < rows.shape[0]:
        raise ValueError(f"the buffers must hold the {rows.shape[0]} rows")
    if rows.shape[0] == 0:
        return 0
    goes_left = <unsigned char*> malloc(n_flags)
    if goes_left == NULL:
        raise MemoryError()
    try:
        if left_bins is not None:
            for c in range(n_flags):
                goes_left[c] = left_bins[c] != 0
        else:
            threshold_sides(goes_left, n_flags, threshold_bin, missing_left, missing_bin)
        with nogil:
            n_left = partition_column(&rows[0], rows.shape[0], &column[0], column.shape[0],
                                      goes_left, n_flags, &left_buffer[0], &right_buffer[0],
                                      n_threads)
    finally:
        free(goes_left)
    return n_left
