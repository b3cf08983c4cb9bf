"""Multi-output histograms of one node.

A node's gradient rows are first gathered into one contiguous block whose
row i is [g_i0 .. g_i(d-1), h_i0 .. h_i(k-1), 1]: k is 0 when the hessian is
the same constant for every sample (MSE: the count stands in for it), 1 when
it is shared by all outputs, d otherwise. The trailing 1 makes the row count
part of the same add. The histogram of feature f is then (n_bins, width)
and the inner loop adds one short contiguous row, which the compiler
vectorises. Features are independent, so threads split them without
contention (layout measured in benchmarks/README.md); the features built
by row are added row after row instead, and there threads split a large
node's rows into chunks (build_histograms_by_row).
"""
from cython.parallel cimport prange
from libc.stdlib cimport free, malloc

import numpy as np
from numpy cimport int32_t, int64_t, uint32_t

from ..parallel import PARALLEL_MIN_WORK

from .common cimport (GBMO_PREFETCH_ENTRY_ROWS, GBMO_PREFETCH_GAP, GBMO_PREFETCH_MIN_ENTRIES,
                     GBMO_PREFETCH_MIN_TOTAL, GBMO_PREFETCH_ROWS, G_H_t,
                     HIST_t, ROW_t, X_BINNED_t, gbmo_prefetch, gbmo_prefetch_bin,
                     gbmo_prefetch_entries, gbmo_row_ahead, histogram_row, prefetch_distance,
                     uint8_t, uint16_t)

# prefetch.h's bounds, for the tests that take the prefetching loops
PREFETCH_ROWS = GBMO_PREFETCH_ROWS
PREFETCH_GAP = GBMO_PREFETCH_GAP
PREFETCH_MIN_TOTAL = GBMO_PREFETCH_MIN_TOTAL
PREFETCH_ENTRY_ROWS = GBMO_PREFETCH_ENTRY_ROWS
PREFETCH_MIN_ENTRIES = GBMO_PREFETCH_MIN_ENTRIES


cdef extern from "histogram_rows.h" nogil:
    # the loops below for rows of GBMO_WIDE_ROW values or more, with AVX2
    # where the CPU has it (see the header)
    const Py_ssize_t GBMO_WIDE_ROW
    void gbmo_add_wide_rows_u8(const uint8_t* column, const ROW_t* rows, Py_ssize_t n_rows,
                               const G_H_t* ordered, Py_ssize_t width, Py_ssize_t missing_row,
                               Py_ssize_t skipped, Py_ssize_t ahead, HIST_t* feature_hist)
    void gbmo_add_wide_rows_u16(const uint16_t* column, const ROW_t* rows, Py_ssize_t n_rows,
                                const G_H_t* ordered, Py_ssize_t width, Py_ssize_t missing_row,
                                Py_ssize_t skipped, Py_ssize_t ahead, HIST_t* feature_hist)
    void gbmo_add_wide_entries(const int64_t* indptr, const uint32_t* entry_slot,
                               const ROW_t* rows, Py_ssize_t first, Py_ssize_t stop,
                               const G_H_t* ordered, Py_ssize_t width, Py_ssize_t ahead,
                               HIST_t* hist)


cdef inline void add_wide_rows(const X_BINNED_t* column, const ROW_t* rows, Py_ssize_t n_rows,
                               const G_H_t* ordered, Py_ssize_t width, Py_ssize_t missing_row,
                               Py_ssize_t skipped, Py_ssize_t ahead,
                               HIST_t* feature_hist) noexcept nogil:
    """The header's loop for column's width of bins."""
    if X_BINNED_t is uint8_t:
        gbmo_add_wide_rows_u8(column, rows, n_rows, ordered, width, missing_row, skipped, ahead,
                              feature_hist)
    else:
        gbmo_add_wide_rows_u16(column, rows, n_rows, ordered, width, missing_row, skipped,
                               ahead, feature_hist)


def column_sums(const Summed[:, ::1] block, Py_ssize_t n_rows, HIST_t[::1] out):
    """out[j] = the sum of block[:n_rows, j] in float64, row after row (serial:
    the same on any thread count). For a node's gathered rows and a prefix of
    a histogram: numpy's axis-0 sum with a float64 accumulator took 190 us on
    7,000 x 6, as much as building that node's histogram."""
    cdef Py_ssize_t width = block.shape[1]
    if out.shape[0] != width or not 0 <= n_rows <= block.shape[0]:
        raise ValueError(f"column_sums of {n_rows} rows of a ({block.shape[0]}, {width}) "
                         f"block into {out.shape[0]} sums")
    with nogil:
        sum_rows(&block[0, 0], n_rows, width, &out[0])


cdef void gather_rows(const G_H_t* grad, const G_H_t* hess, Py_ssize_t d, Py_ssize_t k,
                      const ROW_t* rows, Py_ssize_t n_rows, Py_ssize_t n_total, G_H_t* out,
                      int n_threads) noexcept nogil:
    """out row i = [grad[rows[i]], hess[rows[i]], 1] (grad n_total x d, hess
    n_total x k, row-major; hess unread when k is 0)."""
    cdef Py_ssize_t width = d + k + 1
    cdef Py_ssize_t i
    cdef Py_ssize_t ahead = prefetch_distance(n_rows, n_total)
    # no OpenMP on one thread (see common.pxd, SERIAL_REGION)
    if n_threads > 1:
        for i in prange(n_rows, schedule="static", num_threads=n_threads):
            gather_row(grad, hess, d, k, rows, i, ahead, n_rows, out + i * width)
    else:
        for i in range(n_rows):
            gather_row(grad, hess, d, k, rows, i, ahead, n_rows, out + i * width)


cdef inline void gather_row(const G_H_t* grad, const G_H_t* hess, Py_ssize_t d, Py_ssize_t k,
                            const ROW_t* rows, Py_ssize_t i, Py_ssize_t ahead,
                            Py_ssize_t n_rows, G_H_t* out_row) noexcept nogil:
    """Row rows[i] of grad and hess into out_row, asking for the row ahead
    further on (none when 0; the last of the n_rows at the end)."""
    cdef Py_ssize_t j
    cdef ROW_t r = rows[i], later
    if ahead:
        later = gbmo_row_ahead(rows, i, ahead, n_rows)
        gbmo_prefetch(grad + later * d)
        if k > 0:
            gbmo_prefetch(hess + later * k)
    for j in range(d):
        out_row[j] = grad[r * d + j]
    for j in range(k):
        out_row[d + j] = hess[r * k + j]
    out_row[d + k] = 1.0


def gather_gradients(const G_H_t[:, ::1] grad,
                     const G_H_t[:, ::1] hess,
                     const ROW_t[::1] rows,
                     G_H_t[:, ::1] out,
                     int n_threads):
    """out[i] = [grad[rows[i]], hess[rows[i]], 1]; hess may have 0, 1 or d columns."""
    cdef Py_ssize_t d = grad.shape[1]
    cdef Py_ssize_t k = hess.shape[1]
    if out.shape[0] < rows.shape[0] or out.shape[1] != d + k + 1:
        raise ValueError(f"out must be at least ({rows.shape[0]}, {d + k + 1}), got "
                         f"({out.shape[0]}, {out.shape[1]})")
    if rows.shape[0] == 0:
        return
    with nogil:
        gather_rows(&grad[0, 0], &hess[0, 0] if k > 0 else NULL, d, k, &rows[0],
                    rows.shape[0], grad.shape[0], &out[0, 0], n_threads)


cdef inline Py_ssize_t value_rows(const int* value_bins, Py_ssize_t f,
                                  Py_ssize_t n_bins) noexcept nogil:
    """How many rows of its n_bins tall histogram feature f's values take
    before the missing row: value_bins[f] (its n_bins_non_missing), all but
    the missing row when value_bins is NULL."""
    if value_bins == NULL or value_bins[f] >= n_bins - 1:
        return n_bins - 1
    return value_bins[f] if value_bins[f] > 0 else 0


cdef inline void zero_feature(HIST_t* feature_hist, Py_ssize_t n_bins, Py_ssize_t used,
                              Py_ssize_t width) noexcept nogil:
    """Zeroes the rows of a feature's histogram that its values reach: the
    first `used` and the missing row, the last. Histograms are as tall as
    the most bins any feature has, and the rows between (a binary feature's
    253 of 256) are never written: they keep the 0 of the histograms'
    allocation (grower.GrowerWorkspace.histogram_block), and clearing and
    subtracting them cost a one-hot feature more than its adds."""
    cdef Py_ssize_t j
    for j in range(used * width):
        feature_hist[j] = 0.0
    for j in range((n_bins - 1) * width, n_bins * width):
        feature_hist[j] = 0.0


cdef inline void add_feature(HIST_t* feature_hist, const HIST_t* other, Py_ssize_t n_bins,
                             Py_ssize_t used, Py_ssize_t width) noexcept nogil:
    """Adds another histogram of the same feature (a chunk's, an interleaved
    one's) to feature_hist, on the rows zero_feature zeroes."""
    cdef Py_ssize_t j
    for j in range(used * width):
        feature_hist[j] += other[j]
    for j in range((n_bins - 1) * width, n_bins * width):
        feature_hist[j] += other[j]


cdef extern from "interleaved_scratch.h" nogil:
    # add_rows_interleaved's histograms (the node's own and this thread's
    # others), their most rows and values a row
    const Py_ssize_t GBMO_INTERLEAVED_HISTOGRAMS
    const Py_ssize_t GBMO_INTERLEAVED_HIST_ROWS
    const Py_ssize_t GBMO_INTERLEAVED_MAX_WIDTH
    HIST_t* gbmo_thread_interleaved_histograms()


cdef enum:
    # add_rows_interleaved's zeroing and summing of its other histograms cost
    # passes over the used rows, worth it from this many of the node's rows
    # per row
    INTERLEAVED_MIN_ROWS_PER_BIN = 8
    # ... and only for a column whose node rows come in runs: of the first
    # RUN_SAMPLE_ROWS, at least RUN_MIN_REPEATS repeat the bin of the row
    # before (an eighth; bins at random repeat 1 / bins of the time)
    RUN_SAMPLE_ROWS = 64
    RUN_MIN_REPEATS = 8


cdef inline bint interleaves(const X_BINNED_t* column, const ROW_t* rows, Py_ssize_t n_rows,
                             Py_ssize_t width, Py_ssize_t n_bins, Py_ssize_t used) noexcept nogil:
    """Whether a feature's rows are added by add_rows_interleaved: rows of few
    values, in a node large for its used rows, whose first rows repeat bins
    often. Four chains gain nothing where rows rarely repeat a bin, and
    their zeroing and summing then cost: 255 bins at random, 2,048 to 20,000
    rows, 2 values a row, took 1.06-1.28x the single histogram's time."""
    cdef Py_ssize_t i, repeats = 0
    if (width > GBMO_INTERLEAVED_MAX_WIDTH or n_bins > GBMO_INTERLEAVED_HIST_ROWS
            or n_rows < INTERLEAVED_MIN_ROWS_PER_BIN * (used + 1)):
        return False
    for i in range(1, min(n_rows, RUN_SAMPLE_ROWS)):
        repeats += column[rows[i]] == column[rows[i - 1]]
    return repeats >= RUN_MIN_REPEATS


cdef inline void add_rows_interleaved(const X_BINNED_t* column, const ROW_t* rows,
                                      Py_ssize_t n_rows, const G_H_t* ordered, Py_ssize_t width,
                                      Py_ssize_t n_bins, Py_ssize_t used, Py_ssize_t ahead,
                                      HIST_t* feature_hist) noexcept nogil:
    """Adds every row of 2 to GBMO_INTERLEAVED_MAX_WIDTH values (one output's
    2 or 3, a few outputs') to a zeroed feature_hist of n_bins <=
    GBMO_INTERLEAVED_HIST_ROWS rows, row i into histogram i mod 4
    (feature_hist or one of this thread's three, interleaved_scratch.h),
    which are then added to it. An add waits for the store of the one
    before it into the same bin, so a run of rows of one bin (a common
    value, a sorted or clustered column) was one chain of store-to-load
    latencies: 2.7 ns an add against 0.8 for bins in random order (one
    output, 5,000 rows, 8 bins); four histograms make four chains (0.8 and
    0.65). Rows of 4 to 8 values in runs: 1.3-2.1x faster."""
    cdef HIST_t* others = gbmo_thread_interleaved_histograms()
    cdef HIST_t* histograms[4]  # GBMO_INTERLEAVED_HISTOGRAMS, which the header holds at 4
    cdef Py_ssize_t i, j, h, missing_row = n_bins - 1
    cdef Py_ssize_t n_whole = n_rows - n_rows % GBMO_INTERLEAVED_HISTOGRAMS
    cdef HIST_t* row_0
    cdef HIST_t* row_1
    cdef HIST_t* row_2
    cdef HIST_t* row_3
    cdef const G_H_t* grad_rows
    histograms[0] = feature_hist
    for h in range(1, GBMO_INTERLEAVED_HISTOGRAMS):
        histograms[h] = others + (h - 1) * n_bins * width
        zero_feature(histograms[h], n_bins, used, width)
    # one output's adds written out, a loop for each width: a loop over the
    # four histograms was 20% slower, a test of the width within the loop
    # 15%, and one inlined function called with the width a constant 16%
    i = 0
    if width == 2:
        while i < n_whole:
            for h in range(GBMO_INTERLEAVED_HISTOGRAMS):
                gbmo_prefetch_bin(column, rows, i + h, ahead, n_rows)
            row_0 = histograms[0] + histogram_row(column[rows[i]], missing_row) * 2
            row_1 = histograms[1] + histogram_row(column[rows[i + 1]], missing_row) * 2
            row_2 = histograms[2] + histogram_row(column[rows[i + 2]], missing_row) * 2
            row_3 = histograms[3] + histogram_row(column[rows[i + 3]], missing_row) * 2
            grad_rows = ordered + i * 2
            row_0[0] += grad_rows[0]
            row_0[1] += grad_rows[1]
            row_1[0] += grad_rows[2]
            row_1[1] += grad_rows[3]
            row_2[0] += grad_rows[4]
            row_2[1] += grad_rows[5]
            row_3[0] += grad_rows[6]
            row_3[1] += grad_rows[7]
            i += GBMO_INTERLEAVED_HISTOGRAMS
    elif width > 3:
        while i < n_whole:
            for h in range(GBMO_INTERLEAVED_HISTOGRAMS):
                gbmo_prefetch_bin(column, rows, i + h, ahead, n_rows)
            row_0 = histograms[0] + histogram_row(column[rows[i]], missing_row) * width
            row_1 = histograms[1] + histogram_row(column[rows[i + 1]], missing_row) * width
            row_2 = histograms[2] + histogram_row(column[rows[i + 2]], missing_row) * width
            row_3 = histograms[3] + histogram_row(column[rows[i + 3]], missing_row) * width
            grad_rows = ordered + i * width
            for j in range(width):
                row_0[j] += grad_rows[j]
            for j in range(width):
                row_1[j] += grad_rows[width + j]
            for j in range(width):
                row_2[j] += grad_rows[2 * width + j]
            for j in range(width):
                row_3[j] += grad_rows[3 * width + j]
            i += GBMO_INTERLEAVED_HISTOGRAMS
    else:
        while i < n_whole:
            for h in range(GBMO_INTERLEAVED_HISTOGRAMS):
                gbmo_prefetch_bin(column, rows, i + h, ahead, n_rows)
            row_0 = histograms[0] + histogram_row(column[rows[i]], missing_row) * 3
            row_1 = histograms[1] + histogram_row(column[rows[i + 1]], missing_row) * 3
            row_2 = histograms[2] + histogram_row(column[rows[i + 2]], missing_row) * 3
            row_3 = histograms[3] + histogram_row(column[rows[i + 3]], missing_row) * 3
            grad_rows = ordered + i * 3
            row_0[0] += grad_rows[0]
            row_0[1] += grad_rows[1]
            row_0[2] += grad_rows[2]
            row_1[0] += grad_rows[3]
            row_1[1] += grad_rows[4]
            row_1[2] += grad_rows[5]
            row_2[0] += grad_rows[6]
            row_2[1] += grad_rows[7]
            row_2[2] += grad_rows[8]
            row_3[0] += grad_rows[9]
            row_3[1] += grad_rows[10]
            row_3[2] += grad_rows[11]
            i += GBMO_INTERLEAVED_HISTOGRAMS
    for i in range(n_whole, n_rows):
        row_0 = feature_hist + histogram_row(column[rows[i]], missing_row) * width
        for j in range(width):
            row_0[j] += ordered[i * width + j]
    for h in range(1, GBMO_INTERLEAVED_HISTOGRAMS):
        add_feature(feature_hist, histograms[h], n_bins, used, width)


cdef inline void accumulate_feature(const X_BINNED_t* column, const ROW_t* rows,
                                    Py_ssize_t n_rows, const G_H_t* ordered, Py_ssize_t width,
                                    Py_ssize_t n_bins, Py_ssize_t used, Py_ssize_t ahead,
                                    HIST_t* feature_hist) noexcept nogil:
    """One feature's histogram of one node: its rows zeroed (zero_feature),
    then every row's gathered block added to the bin of its value
    (prefetching the row ahead further on, none when 0)."""
    cdef Py_ssize_t i, j
    cdef Py_ssize_t missing_row = n_bins - 1
    cdef HIST_t* bin_row
    cdef const G_H_t* grad_row
    zero_feature(feature_hist, n_bins, used, width)
    if interleaves(column, rows, n_rows, width, n_bins, used):
        add_rows_interleaved(column, rows, n_rows, ordered, width, n_bins, used, ahead,
                             feature_hist)
        return
    # One output (single-output trees, sketches of one column) has rows of 2 or
    # 3 values: written out, the adds skip the inner loop's overhead.
    if width == 2:
        for i in range(n_rows):
            gbmo_prefetch_bin(column, rows, i, ahead, n_rows)
            bin_row = feature_hist + histogram_row(column[rows[i]], missing_row) * 2
            grad_row = ordered + i * 2
            bin_row[0] += grad_row[0]
            bin_row[1] += grad_row[1]
    elif width == 3:
        for i in range(n_rows):
            gbmo_prefetch_bin(column, rows, i, ahead, n_rows)
            bin_row = feature_hist + histogram_row(column[rows[i]], missing_row) * 3
            grad_row = ordered + i * 3
            bin_row[0] += grad_row[0]
            bin_row[1] += grad_row[1]
            bin_row[2] += grad_row[2]
    elif width >= GBMO_WIDE_ROW:
        add_wide_rows(column, rows, n_rows, ordered, width, missing_row, -1, ahead,
                      feature_hist)
    else:
        for i in range(n_rows):
            gbmo_prefetch_bin(column, rows, i, ahead, n_rows)
            bin_row = feature_hist + histogram_row(column[rows[i]], missing_row) * width
            grad_row = ordered + i * width
            for j in range(width):
                bin_row[j] += grad_row[j]


cdef inline void fill_skipped_bin(HIST_t* feature_hist, Py_ssize_t n_bins, Py_ssize_t used,
                                  Py_ssize_t width, Py_ssize_t skipped,
                                  const HIST_t* totals) noexcept nogil:
    """feature_hist[skipped] = totals - the other bins, in bin order: the
    first `used` and the missing row (the others hold 0, see zero_feature)."""
    cdef Py_ssize_t b, j
    cdef HIST_t* skipped_row = feature_hist + skipped * width
    for j in range(width):
        skipped_row[j] = totals[j]
    for b in range(used):
        if b != skipped:
            take_away_row(skipped_row, feature_hist + b * width, width)
    if skipped != n_bins - 1:
        take_away_row(skipped_row, feature_hist + (n_bins - 1) * width, width)


cdef inline void take_away_row(HIST_t* row, const HIST_t* other, Py_ssize_t width) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(width):
        row[j] -= other[j]


cdef inline void accumulate_feature_but_one_bin(const X_BINNED_t* column, const ROW_t* rows,
                                                Py_ssize_t n_rows, const G_H_t* ordered,
                                                Py_ssize_t width, Py_ssize_t n_bins,
                                                Py_ssize_t used, Py_ssize_t skipped,
                                                const HIST_t* totals, Py_ssize_t ahead,
                                                HIST_t* feature_hist) noexcept nogil:
    """accumulate_feature without adding the rows of bin `skipped`, whose sums
    are then the node's totals minus the other bins': a feature whose rows
    mostly share one value (MNIST's blank pixels, one-hot columns) costs the
    other rows only, as LightGBM's sparse bins do."""
    cdef Py_ssize_t i, j, b
    cdef Py_ssize_t missing_row = n_bins - 1
    cdef HIST_t* bin_row
    cdef const G_H_t* grad_row
    zero_feature(feature_hist, n_bins, used, width)
    if width >= GBMO_WIDE_ROW:
        add_wide_rows(column, rows, n_rows, ordered, width, missing_row, skipped, ahead,
                      feature_hist)
    else:
        for i in range(n_rows):
            gbmo_prefetch_bin(column, rows, i, ahead, n_rows)
            b = histogram_row(column[rows[i]], missing_row)
            if b == skipped:
                continue
            bin_row = feature_hist + b * width
            grad_row = ordered + i * width
            for j in range(width):
                bin_row[j] += grad_row[j]
    fill_skipped_bin(feature_hist, n_bins, used, width, skipped, totals)


cdef inline void accumulate(const X_BINNED_t* column, Py_ssize_t n_total,
                            const ROW_t* rows, Py_ssize_t n_rows, const G_H_t* ordered,
                            Py_ssize_t width, Py_ssize_t n_bins, Py_ssize_t used,
                            Py_ssize_t skipped, const HIST_t* totals,
                            HIST_t* feature_hist) noexcept nogil:
    """One feature's histogram of a node's n_rows rows out of the column's
    n_total, which decide whether the loop prefetches; its values take its
    first `used` rows and the last (see zero_feature)."""
    cdef Py_ssize_t ahead = prefetch_distance(n_rows, n_total)
    if skipped < 0:
        accumulate_feature(column, rows, n_rows, ordered, width, n_bins, used, ahead,
                           feature_hist)
    else:
        accumulate_feature_but_one_bin(column, rows, n_rows, ordered, width, n_bins, used, skipped,
                                       totals, ahead, feature_hist)


cdef inline void accumulate_column(const void* X_binned, bint wide_bins, Py_ssize_t column,
                                   Py_ssize_t row_stride, const ROW_t* rows, Py_ssize_t n_rows,
                                   const G_H_t* ordered, Py_ssize_t width, Py_ssize_t n_bins,
                                   Py_ssize_t used, Py_ssize_t skipped, const HIST_t* totals,
                                   HIST_t* feature_hist) noexcept nogil:
    """accumulate on row `column` of X_binned (row_stride bins apart), whose
    bins are 16-bit when wide_bins, else 8-bit."""
    if wide_bins:
        accumulate(<const uint16_t*> X_binned + column * row_stride, row_stride, rows, n_rows,
                   ordered, width, n_bins, used, skipped, totals, feature_hist)
    else:
        accumulate(<const uint8_t*> X_binned + column * row_stride, row_stride, rows, n_rows,
                   ordered, width, n_bins, used, skipped, totals, feature_hist)


cdef Py_ssize_t check_skipped_bins(const int[::1] skipped_bins, const HIST_t[:, ::1] totals,
                                   Py_ssize_t n_features, Py_ssize_t n_bins, Py_ssize_t width,
                                   Py_ssize_t n_nodes) except -1:
    cdef Py_ssize_t f
    if skipped_bins is None:
        return 0
    if skipped_bins.shape[0] != n_features:
        raise ValueError(f"skipped_bins has {skipped_bins.shape[0]} entries for "
                         f"{n_features} features")
    for f in range(n_features):
        if skipped_bins[f] >= n_bins:
            raise ValueError(f"skipped_bins[{f}] = {skipped_bins[f]} is beyond the "
                             f"{n_bins} bins of a histogram")
    if totals is None or totals.shape[0] != n_nodes or totals.shape[1] != width:
        raise ValueError(f"skipped bins need totals of shape ({n_nodes}, {width}), the "
                         "sums of each node's gathered rows")
    return 0


cdef int check_value_bins(const int[::1] value_bins, const int[::1] skipped_bins,
                          Py_ssize_t n_features, Py_ssize_t n_bins) except -1:
    """value_bins, when given, has an entry per feature, and a feature's
    skipped bin is one of its rows (its value bins' or the last)."""
    cdef Py_ssize_t f
    if value_bins is None:
        return 0
    if value_bins.shape[0] != n_features:
        raise ValueError(f"value_bins has {value_bins.shape[0]} entries for {n_features} "
                         "features")
    for f in range(n_features if skipped_bins is not None else 0):
        if value_rows(&value_bins[0], f, n_bins) <= skipped_bins[f] < n_bins - 1:
            raise ValueError(f"skipped_bins[{f}] = {skipped_bins[f]} is none of the feature's "
                             f"{value_bins[f]} value bins nor the missing bin's row")
    return 0


cdef void build_feature_histograms(const void* X_binned, bint wide_bins, Py_ssize_t row_stride,
                                   const ROW_t* rows, Py_ssize_t n_rows, const G_H_t* ordered,
                                   const int* features, Py_ssize_t n_features,
                                   const int* columns, const int* skipped_bins,
                                   const int* value_bins, const HIST_t* totals, HIST_t* hist,
                                   Py_ssize_t n_bins, Py_ssize_t width,
                                   int n_threads) noexcept nogil:
    """build_histograms on raw pointers (X_binned row f row_stride bins after
    row f - 1, 16-bit bins when wide_bins; columns, skipped_bins, value_bins
    and totals NULL for none)."""
    cdef Py_ssize_t fi
    # no OpenMP on one thread (see common.pxd, SERIAL_REGION)
    if n_threads > 1:
        for fi in prange(n_features, schedule="dynamic", num_threads=n_threads):
            feature_histogram(X_binned, wide_bins, row_stride, rows, n_rows, ordered,
                              features[fi], columns[fi] if columns != NULL else features[fi],
                              skipped_bins, value_bins, totals, hist, n_bins, width)
    else:
        for fi in range(n_features):
            feature_histogram(X_binned, wide_bins, row_stride, rows, n_rows, ordered,
                              features[fi], columns[fi] if columns != NULL else features[fi],
                              skipped_bins, value_bins, totals, hist, n_bins, width)


cdef inline void feature_histogram(const void* X_binned, bint wide_bins, Py_ssize_t row_stride,
                                   const ROW_t* rows, Py_ssize_t n_rows, const G_H_t* ordered,
                                   Py_ssize_t f, Py_ssize_t column, const int* skipped_bins,
                                   const int* value_bins, const HIST_t* totals, HIST_t* hist,
                                   Py_ssize_t n_bins, Py_ssize_t width) noexcept nogil:
    """Feature f's histogram, from X_binned's row column."""
    accumulate_column(X_binned, wide_bins, column, row_stride, rows, n_rows, ordered, width,
                      n_bins, value_rows(value_bins, f, n_bins),
                      skipped_bins[f] if skipped_bins != NULL else -1, totals,
                      hist + f * n_bins * width)


def build_histograms(const X_BINNED_t[:, ::1] X_binned,
                     const ROW_t[::1] rows,
                     const G_H_t[:, ::1] ordered,
                     const int[::1] features,
                     HIST_t[:, :, ::1] hist,
                     int n_threads,
                     const int[::1] columns=None,
                     const int[::1] skipped_bins=None,
                     const HIST_t[:, ::1] totals=None,
                     const int[::1] value_bins=None):
    """hist[f, b, :] = sum of ordered[i] over node rows i whose feature f is in bin b,
    for every f in features (other features' slices are left untouched). The
    last row of hist[f] counts the missing values (binned as max_bins, which
    may be beyond it).
    columns, when given, is the row of X_binned holding each of features (the
    dense part of a mixed dense / sparse layout); else feature f is row f.
    skipped_bins, when given, has a bin per feature (-1: none) whose sums are
    totals[0] (the sums of ordered's rows) minus the other bins' instead of
    being added row by row.
    value_bins, when given, has each feature's number of value bins
    (n_bins_non_missing): rows from there to the last of hist[f] are left
    as they are, 0 in the grower's histograms (see zero_feature), but for a
    node of no rows, whose features' histograms are zeroed whole."""
    cdef Py_ssize_t fi
    check_skipped_bins(skipped_bins, totals, hist.shape[0], hist.shape[1], hist.shape[2], 1)
    check_value_bins(value_bins, skipped_bins, hist.shape[0], hist.shape[1])
    if rows.shape[0] == 0:
        for fi in range(features.shape[0]):
            hist[features[fi], :, :] = 0.0
        return
    if features.shape[0] == 0:
        return
    with nogil:
        build_feature_histograms(&X_binned[0, 0], X_BINNED_t is uint16_t, X_binned.shape[1],
                                 &rows[0], rows.shape[0],
                                 &ordered[0, 0], &features[0], features.shape[0],
                                 &columns[0] if columns is not None else NULL,
                                 &skipped_bins[0] if skipped_bins is not None else NULL,
                                 &value_bins[0] if value_bins is not None else NULL,
                                 &totals[0, 0] if skipped_bins is not None else NULL,
                                 &hist[0, 0, 0], hist.shape[1], hist.shape[2], n_threads)


cdef void build_nodes_histograms(const void* X_binned, bint wide_bins, Py_ssize_t row_stride,
                                 ROW_t** node_rows, const Py_ssize_t* node_counts,
                                 G_H_t** node_ordered, HIST_t** node_totals,
                                 HIST_t** node_hists, Py_ssize_t n_nodes, const int* features,
                                 Py_ssize_t n_features, const int* columns,
                                 const int* skipped_bins, const int* value_bins,
                                 Py_ssize_t n_bins, Py_ssize_t width,
                                 int n_threads) noexcept nogil:
    """build_histograms_of_nodes on raw pointers: node m's rows, gathered
    gradients, sums (for skipped bins) and histogram at node_rows[m],
    node_ordered[m], node_totals[m] and node_hists[m]."""
    cdef Py_ssize_t pair, m, i, f, c, skipped
    for pair in prange(n_nodes * n_features, schedule="dynamic", num_threads=n_threads,
                       use_threads_if=n_threads > 1):
        m = pair // n_features
        i = pair % n_features
        f = features[i]
        c = columns[i] if columns != NULL else f
        skipped = skipped_bins[f] if skipped_bins != NULL else -1
        accumulate_column(X_binned, wide_bins, c, row_stride, node_rows[m], node_counts[m],
                          node_ordered[m], width, n_bins, value_rows(value_bins, f, n_bins),
                          skipped, node_totals[m], node_hists[m] + f * n_bins * width)


def build_histograms_of_nodes(const X_BINNED_t[:, ::1] X_binned,
                              const ROW_t[::1] rows,
                              const Py_ssize_t[::1] node_offsets,
                              const G_H_t[:, ::1] ordered,
                              const int[::1] features,
                              HIST_t[:, :, :, ::1] hists,
                              int n_threads,
                              const int[::1] columns=None,
                              const int[::1] skipped_bins=None,
                              const HIST_t[:, ::1] totals=None,
                              const int[::1] value_bins=None):
    """build_histograms for several nodes in one parallel pass over (node, feature)
    pairs, so that many small nodes (a level of depth-wise growth) keep every
    thread busy. Node m's rows are rows[node_offsets[m]:node_offsets[m + 1]] and
    its gathered gradients the same rows of ordered; its histogram is hists[m].
    columns, skipped_bins and value_bins: as in build_histograms, with
    totals[m] node m's sums."""
    cdef Py_ssize_t n_nodes = hists.shape[0], m
    cdef Py_ssize_t width = hists.shape[3]
    check_skipped_bins(skipped_bins, totals, hists.shape[1], hists.shape[2], width, n_nodes)
    check_value_bins(value_bins, skipped_bins, hists.shape[1], hists.shape[2])
    if features.shape[0] == 0 or n_nodes == 0:
        return
    if rows.shape[0] == 0:
        hists[:, :, :, :] = 0.0
        return
    if node_offsets.shape[0] != n_nodes + 1 or node_offsets[0] != 0 \
            or node_offsets[n_nodes] != rows.shape[0]:
        raise ValueError(f"node_offsets must run from 0 to the {rows.shape[0]} rows in "
                         f"{n_nodes} steps")
    node_rows = <ROW_t**> malloc(n_nodes * sizeof(ROW_t*))
    node_counts = <Py_ssize_t*> malloc(n_nodes * sizeof(Py_ssize_t))
    node_ordered = <G_H_t**> malloc(n_nodes * sizeof(G_H_t*))
    node_totals = <HIST_t**> malloc(n_nodes * sizeof(HIST_t*))
    node_hists = <HIST_t**> malloc(n_nodes * sizeof(HIST_t*))
    try:
        if (node_rows == NULL or node_counts == NULL or node_ordered == NULL
                or node_totals == NULL or node_hists == NULL):
            raise MemoryError()
        for m in range(n_nodes):
            node_rows[m] = <ROW_t*> &rows[0] + node_offsets[m]
            node_counts[m] = node_offsets[m + 1] - node_offsets[m]
            node_ordered[m] = <G_H_t*> &ordered[0, 0] + node_offsets[m] * width
            node_totals[m] = <HIST_t*> &totals[m, 0] if skipped_bins is not None else NULL
            node_hists[m] = &hists[m, 0, 0, 0]
        with nogil:
            build_nodes_histograms(&X_binned[0, 0], X_BINNED_t is uint16_t, X_binned.shape[1],
                                   node_rows, node_counts,
                                   node_ordered, node_totals, node_hists, n_nodes,
                                   &features[0], features.shape[0],
                                   &columns[0] if columns is not None else NULL,
                                   &skipped_bins[0] if skipped_bins is not None else NULL,
                                   &value_bins[0] if value_bins is not None else NULL,
                                   hists.shape[2], width, n_threads)
    finally:
        free(node_rows)
        free(node_counts)
        free(node_ordered)
        free(node_totals)
        free(node_hists)


cdef void subtract_feature_histograms(const HIST_t* parent, const HIST_t* child,
                                      const int* features, Py_ssize_t n_features,
                                      const int* value_bins, Py_ssize_t n_bins,
                                      Py_ssize_t width, HIST_t* sibling,
                                      int n_threads) noexcept nogil:
    """subtract_histograms on raw pointers (value_bins NULL for none)."""
    cdef Py_ssize_t fi, f
    # no OpenMP on one thread (see common.pxd, SERIAL_REGION)
    if n_threads > 1:
        for fi in prange(n_features, schedule="static", num_threads=n_threads):
            f = features[fi]
            subtract_feature(parent, child, f * n_bins * width, n_bins,
                             value_rows(value_bins, f, n_bins), width, sibling)
    else:
        for fi in range(n_features):
            f = features[fi]
            subtract_feature(parent, child, f * n_bins * width, n_bins,
                             value_rows(value_bins, f, n_bins), width, sibling)


cdef void build_child_and_sibling(void* state, int f) noexcept nogil:
    """Feature f's histogram of a split's smaller child (built from its rows,
    unless built row by row already) and of the larger (its parent's minus
    the smaller's, in place), for _split.search_nodes to search at once;
    state is a ChildAndSibling."""
    cdef ChildAndSibling* split = <ChildAndSibling*> state
    if split.by_row == NULL or not split.by_row[f]:
        feature_histogram(split.X_binned, split.wide_bins, split.row_stride, split.rows,
                          split.n_rows, split.ordered, f, f, split.skipped_bins,
                          split.value_bins, split.totals, split.child, split.n_bins,
                          split.width)
    subtract_feature(split.sibling, split.child, f * split.n_bins * split.width, split.n_bins,
                     value_rows(split.value_bins, f, split.n_bins), split.width, split.sibling)


cdef inline void subtract_feature(const HIST_t* parent, const HIST_t* child, Py_ssize_t offset,
                                  Py_ssize_t n_bins, Py_ssize_t used, Py_ssize_t width,
                                  HIST_t* sibling) noexcept nogil:
    """A feature's rows of sibling = parent - child: its first `used` and the
    last (the others hold 0 in all three, see zero_feature)."""
    cdef Py_ssize_t j, last = offset + (n_bins - 1) * width
    for j in range(offset, offset + used * width):
        sibling[j] = parent[j] - child[j]
    for j in range(last, last + width):
        sibling[j] = parent[j] - child[j]


def subtract_histograms(const HIST_t[:, :, ::1] parent,
                        const HIST_t[:, :, ::1] child,
                        const int[::1] features,
                        HIST_t[:, :, ::1] sibling,
                        int n_threads,
                        const int[::1] value_bins=None):
    """sibling = parent - child on the given features (paper eq. 12);
    value_bins as in build_histograms."""
    if not (parent.shape[0] == child.shape[0] == sibling.shape[0]
            and parent.shape[1] == child.shape[1] == sibling.shape[1]
            and parent.shape[2] == child.shape[2] == sibling.shape[2]):
        raise ValueError("parent, child and sibling histograms must have the same shape")
    check_value_bins(value_bins, None, parent.shape[0], parent.shape[1])
    if features.shape[0] == 0:
        return
    with nogil:
        subtract_feature_histograms(&parent[0, 0, 0], &child[0, 0, 0], &features[0],
                                    features.shape[0],
                                    &value_bins[0] if value_bins is not None else NULL,
                                    parent.shape[1], parent.shape[2], &sibling[0, 0, 0],
                                    n_threads)


# A node's rows built by row are added in up to ROW_CHUNKS chunks of rows,
# each into its own histogram, then summed in chunk order: threads take
# chunks, and the sums do not depend on how many there are. Blocks of
# features, each thread reading every row, added no speed on two threads
# (benchmarks/README.md, "Histograms by row in chunks of rows"). A chunk
# needs ROW_CHUNK_WORK times the values its histogram adds to the sum, so
# that clearing and summing the chunks' histograms stays small.
cdef Py_ssize_t MOST_ROW_CHUNKS = 4
ROW_CHUNKS = MOST_ROW_CHUNKS
cdef Py_ssize_t ROW_CHUNK_WORK = 4
cdef Py_ssize_t PARALLEL_ROW_SUMS = PARALLEL_MIN_WORK


cdef inline Py_ssize_t row_chunks(Py_ssize_t n_rows, double mean_entries_per_row,
                                  Py_ssize_t width, Py_ssize_t summed_values) noexcept nogil:
    """How many chunks of rows a build by row of n_rows takes (see ROW_CHUNKS),
    from the rows' entries and the values a chunk adds to the sum."""
    cdef double work = n_rows * mean_entries_per_row * width
    cdef double chunks = work / (ROW_CHUNK_WORK * max(summed_values, 1))
    if chunks < 1:
        return 1
    return MOST_ROW_CHUNKS if chunks >= MOST_ROW_CHUNKS else <Py_ssize_t> chunks


cdef void build_row_wise_histograms(const int64_t* indptr, const uint32_t* entry_slot,
                                    Py_ssize_t n_entries, double mean_entries_per_row,
                                    Py_ssize_t n_features,
                                    const unsigned char* wanted, const int* skipped_bins,
                                    const int* value_bins, const ROW_t* rows,
                                    Py_ssize_t n_rows, const G_H_t* ordered,
                                    const HIST_t* totals, HIST_t* hist, HIST_t* chunk_hists,
                                    Py_ssize_t n_chunk_hists, Py_ssize_t n_bins,
                                    Py_ssize_t width, int n_threads) noexcept nogil:
    """build_histograms_by_row on raw pointers (value_bins NULL for none;
    chunk_hists n_chunk_hists histograms the shape of hist, the chunks'
    own; n_entries, every row's entries, decides the prefetch)."""
    cdef Py_ssize_t size = n_features * n_bins * width
    cdef Py_ssize_t summed = 0, n_chunks, chunk, first, stop, i, f, c, used
    cdef HIST_t* chunk_hist
    cdef HIST_t* feature_hist
    for f in range(n_features):
        if wanted[f]:
            summed += (value_rows(value_bins, f, n_bins) + 1) * width
    n_chunks = min(row_chunks(n_rows, mean_entries_per_row, width, summed), n_chunk_hists + 1)
    # entries past the caches are read at scattered rows, the root's included
    cdef Py_ssize_t ahead = (GBMO_PREFETCH_ENTRY_ROWS
                             if n_entries >= GBMO_PREFETCH_MIN_ENTRIES else 0)
    for chunk in prange(n_chunks, schedule="static", num_threads=n_threads,
                        use_threads_if=n_threads > 1 and n_chunks > 1):
        chunk_hist = hist if chunk == 0 else chunk_hists + (chunk - 1) * size
        for f in range(n_features):
            if wanted[f]:
                zero_feature(chunk_hist + f * n_bins * width, n_bins,
                             value_rows(value_bins, f, n_bins), width)
        first = chunk * n_rows // n_chunks
        stop = (chunk + 1) * n_rows // n_chunks
        if width >= GBMO_WIDE_ROW:
            gbmo_add_wide_entries(indptr, entry_slot, rows, first, stop, ordered, width,
                                  ahead, chunk_hist)
        else:
            for i in range(first, stop):
                gbmo_prefetch_entries(indptr, entry_slot, rows, i, ahead, stop)
                add_entries(entry_slot, indptr[rows[i]], indptr[rows[i] + 1],
                            ordered + i * width, width, chunk_hist)
    for f in prange(n_features, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1 and summed * n_chunks >= PARALLEL_ROW_SUMS):
        if wanted[f]:
            feature_hist = hist + f * n_bins * width
            used = value_rows(value_bins, f, n_bins)
            for c in range(1, n_chunks):
                add_feature(feature_hist, chunk_hists + (c - 1) * size + f * n_bins * width,
                            n_bins, used, width)
            fill_skipped_bin(feature_hist, n_bins, used, width, skipped_bins[f], totals)


cdef inline void add_entries(const uint32_t* entry_slot, Py_ssize_t first, Py_ssize_t stop,
                             const G_H_t* grad_row, Py_ssize_t width,
                             HIST_t* hist) noexcept nogil:
    """grad_row added to the histogram row of each of the entries [first,
    stop). Rows of 2 and 3 values are written out: a one-hot block's entries
    added 1.9x faster so than through the inner loop (benchmarks/README.md).
    The slots widen before they multiply, past 2^31 too."""
    cdef Py_ssize_t e, j
    cdef HIST_t* bin_row
    cdef HIST_t g0, g1, g2
    if width == 2:
        g0, g1 = grad_row[0], grad_row[1]
        for e in range(first, stop):
            bin_row = hist + <Py_ssize_t> entry_slot[e] * 2
            bin_row[0] += g0
            bin_row[1] += g1
    elif width == 3:
        g0, g1, g2 = grad_row[0], grad_row[1], grad_row[2]
        for e in range(first, stop):
            bin_row = hist + <Py_ssize_t> entry_slot[e] * 3
            bin_row[0] += g0
            bin_row[1] += g1
            bin_row[2] += g2
    else:
        for e in range(first, stop):
            bin_row = hist + <Py_ssize_t> entry_slot[e] * width
            for j in range(width):
                bin_row[j] += grad_row[j]


def build_histograms_by_row(const int64_t[::1] indptr,
                            const uint32_t[::1] entry_slot,
                            const unsigned char[::1] wanted,
                            const int[::1] skipped_bins,
                            const ROW_t[::1] rows,
                            const G_H_t[:, ::1] ordered,
                            const HIST_t[::1] totals,
                            HIST_t[:, :, ::1] hist,
                            HIST_t[:, :, :, ::1] chunk_hists,
                            int n_threads,
                            const int[::1] value_bins=None):
    """Histograms of the features whose rows mostly share one bin, from the
    other entries only: row r's entries are entry_slot[indptr[r]:indptr[r + 1]]
    (entry f * n_bins + b is feature f's histogram row b, n_bins the
    histograms' height, see row_entries), every feature f with wanted[f] has
    an entry in each row whose bin is not skipped_bins[f], and that bin is
    filled from totals. Work follows the node's entries, not its rows x
    features. Every entry is added, so the value rows of features with
    entries but not wanted hold sums of no meaning: a tree searches only the
    features it wants, and testing each entry cost more than adding it (2.5
    against 1 ns; benchmarks/README.md). Large nodes add chunks of their rows
    into chunk_hists (up to ROW_CHUNKS - 1 histograms of hist's shape,
    scratch; none keeps one chunk), summed in chunk order, so the sums do not
    depend on the threads. value_bins as in build_histograms."""
    cdef Py_ssize_t n_bins = hist.shape[1]
    cdef Py_ssize_t width = hist.shape[2]
    cdef Py_ssize_t f
    cdef double mean_entries = <double> indptr[indptr.shape[0] - 1] / max(1, indptr.shape[0] - 1)
    if totals.shape[0] != width or ordered.shape[1] != width:
        raise ValueError(f"totals and ordered rows must have the histogram's width {width}")
    if rows.shape[0] != ordered.shape[0]:
        raise ValueError(f"{rows.shape[0]} rows but {ordered.shape[0]} gathered rows")
    if wanted.shape[0] != hist.shape[0] or skipped_bins.shape[0] != hist.shape[0]:
        raise ValueError(f"wanted and skipped_bins need an entry for each of the "
                         f"{hist.shape[0]} features")
    if chunk_hists.shape[0] > MOST_ROW_CHUNKS - 1 or any(
            chunk_hists.shape[i + 1] != hist.shape[i] for i in range(3)):
        raise ValueError(f"chunk_hists must be at most {MOST_ROW_CHUNKS - 1} histograms of "
                         "hist's shape")
    for f in range(hist.shape[0]):
        if wanted[f] and not 0 <= skipped_bins[f] < n_bins:
            raise ValueError(f"feature {f} is built by row but its skipped bin "
                             f"{skipped_bins[f]} is not one of the {n_bins} bins")
    check_value_bins(value_bins, skipped_bins, hist.shape[0], n_bins)
    if rows.shape[0] == 0:
        for f in range(hist.shape[0]):
            if wanted[f]:
                hist[f, :, :] = 0.0
                hist[f, skipped_bins[f], :] = totals
        return
    with nogil:
        build_row_wise_histograms(&indptr[0], &entry_slot[0] if entry_slot.shape[0] else NULL,
                                  entry_slot.shape[0], mean_entries, hist.shape[0], &wanted[0],
                                  &skipped_bins[0],
                                  &value_bins[0] if value_bins is not None else NULL,
                                  &rows[0], rows.shape[0], &ordered[0, 0], &totals[0],
                                  &hist[0, 0, 0],
                                  &chunk_hists[0, 0, 0, 0] if chunk_hists.shape[0] else NULL,
                                  chunk_hists.shape[0], n_bins, width, n_threads)


# row_entries walks the binned data in blocks of this many rows, feature by
# feature: each read is contiguous, and a block's entries (about 600 KB at
# 30 a row) stay in cache while they are scattered into place.
cdef Py_ssize_t ROW_ENTRIES_BLOCK = 4096


cdef void block_entries(const X_BINNED_t[:, ::1] X_binned, const int[::1] features,
                        const int[::1] skipped_bins, Py_ssize_t n_bins, Py_ssize_t block,
                        bint counting, int64_t* per_row, uint32_t* entry_slot) noexcept nogil:
    """The entries of block's rows, feature by feature: counted into
    per_row[r] when counting, else written at per_row[r] (the row's next
    free place), which advances."""
    cdef Py_ssize_t first = block * ROW_ENTRIES_BLOCK
    cdef Py_ssize_t last = min(first + ROW_ENTRIES_BLOCK, X_binned.shape[1])
    cdef Py_ssize_t fi, f, r, b
    for fi in range(features.shape[0]):
        f = features[fi]
        for r in range(first, last):
            b = histogram_row(X_binned[f, r], n_bins - 1)
            if b != skipped_bins[f]:
                if not counting:
                    entry_slot[per_row[r]] = <uint32_t> (f * n_bins + b)
                per_row[r] += 1


# row_entries' slots are 32-bit: data of more features x histogram bins
# build every feature column by column (grower.GrowerWorkspace.dense_layout)
MAX_ROW_WISE_SLOTS = 2 ** 32


def row_entries(const X_BINNED_t[:, ::1] X_binned, const int[::1] features,
                const int[::1] skipped_bins, Py_ssize_t n_bins, int n_threads):
    """(indptr, entry_slot) for build_histograms_by_row: per row, for each of
    `features` (ascending) whose value is not in its skipped bin, the slot
    f * n_bins + b of that value's histogram row b (n_bins tall histograms,
    at most MAX_ROW_WISE_SLOTS slots in all). A slot locates the row in a
    node's histograms without reading the feature and bin apart: a one-hot
    block's entries added 1.5x faster so (benchmarks/README.md).
    Threads take blocks of rows, so the result does not depend on their
    number."""
    cdef Py_ssize_t n_rows = X_binned.shape[1]
    cdef Py_ssize_t n_blocks = (n_rows + ROW_ENTRIES_BLOCK - 1) // ROW_ENTRIES_BLOCK
    cdef Py_ssize_t block, fi, r
    for fi in range(1, features.shape[0]):
        if features[fi] <= features[fi - 1]:
            raise ValueError("row_entries needs features in ascending order")
    if X_binned.shape[0] * n_bins > MAX_ROW_WISE_SLOTS:
        raise ValueError(f"{X_binned.shape[0]} features x {n_bins} histogram bins are more "
                         f"than the {MAX_ROW_WISE_SLOTS} slots of row entries")
    indptr_array = np.zeros(n_rows + 1, dtype=np.int64)
    cdef int64_t[::1] indptr = indptr_array
    cdef bint parallel = n_threads > 1 and n_blocks > 1
    for block in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads,
                        use_threads_if=parallel):
        block_entries(X_binned, features, skipped_bins, n_bins, block, True, &indptr[1], NULL)
    with nogil:
        for r in range(n_rows):
            indptr[r + 1] += indptr[r]
    slot_array = np.empty(indptr[n_rows], dtype=np.uint32)
    cdef uint32_t[::1] entry_slot = slot_array
    fill = indptr_array[:n_rows].copy()
    cdef int64_t[::1] next_entry = fill
    for block in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads,
                        use_threads_if=parallel):
        block_entries(X_binned, features, skipped_bins, n_bins, block, False, &next_entry[0],
                      &entry_slot[0] if entry_slot.shape[0] else NULL)
    return indptr_array, slot_array
