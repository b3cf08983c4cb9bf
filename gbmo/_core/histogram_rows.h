/* The histogram build's inner loop in C, so that GCC on x86-64 Linux can
 * compile it twice, for AVX2 and for the baseline x86-64 the wheels target,
 * and pick one when the module loads (target_clones, an ifunc): a wide
 * multi-output row (softmax's 2d + 1 values) then adds 4 doubles an
 * instruction instead of 2. Narrower rows keep _histogram.pyx's own loops,
 * which were faster for them. The adds are element-wise, so every path
 * gives the same bits. Other compilers build the baseline only.
 * (benchmarks/README.md, "Histogram adds with AVX2".) */
#ifndef GBMO_HISTOGRAM_ROWS_H
#define GBMO_HISTOGRAM_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "prefetch.h"

/* target_clones needs GCC 6 or later and the loader's ifuncs, which glibc
 * has and musl (Alpine) has not; <stdint.h> has defined __GLIBC__ by here. */
#if defined(__GNUC__) && __GNUC__ >= 6 && !defined(__clang__) && defined(__x86_64__) \
    && defined(__GLIBC__)
#define GBMO_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GBMO_TARGET_CLONES
#endif

/* Rows of at least this many values take the clones: at 4 values a row
 * the AVX2 loop was 15% slower than the baseline, at 8 0.89-0.98x without
 * a skipped bin, from 9 to 15 values 1.07-1.18x faster and from 16 to 41
 * 1.10-1.41x (benchmarks/ab_kernel.py --kernel histogram). */
#define GBMO_WIDE_ROW 9

/* Adds row i of ordered (width values) to the bin of rows[i]'s value in
 * column (values above missing_row count in it), except the rows whose bin
 * is skipped (-1: none): _histogram.pyx's loops for rows of GBMO_WIDE_ROW
 * values or more. Defined for columns of 8-bit bins (..._u8) and of 16-bit
 * bins (..._u16). */
#define GBMO_DEFINE_ADD_WIDE_ROWS(suffix, bin_type)                                            \
    GBMO_TARGET_CLONES                                                                         \
    static void gbmo_add_wide_rows_##suffix(const bin_type *column, const uint32_t *rows,      \
                                            ptrdiff_t n_rows, const float *ordered,            \
                                            ptrdiff_t width, ptrdiff_t missing_row,            \
                                            ptrdiff_t skipped, ptrdiff_t ahead,                \
                                            double *feature_hist)                              \
    {                                                                                          \
        for (ptrdiff_t i = 0; i < n_rows; i++) {                                               \
            gbmo_prefetch_bin(column, rows, i, ahead, n_rows);                                 \
            ptrdiff_t bin = column[rows[i]];                                                   \
            if (bin > missing_row)                                                             \
                bin = missing_row;                                                             \
            if (bin == skipped)                                                                \
                continue;                                                                      \
            double *bin_row = feature_hist + bin * width;                                      \
            const float *grad_row = ordered + i * width;                                       \
            for (ptrdiff_t j = 0; j < width; j++)                                              \
                bin_row[j] += grad_row[j];                                                     \
        }                                                                                      \
    }

GBMO_DEFINE_ADD_WIDE_ROWS(u8, uint8_t)
GBMO_DEFINE_ADD_WIDE_ROWS(u16, uint16_t)

/* The same adds for the features built by row: row i of ordered (width
 * values) to the histogram row of each entry of rows[i] for i in [first,
 * stop), row r's entries entry_slot[indptr[r]:indptr[r + 1]]:
 * _histogram.pyx's add_entries for rows of GBMO_WIDE_ROW values or more. */
GBMO_TARGET_CLONES
static void gbmo_add_wide_entries(const int64_t *indptr, const uint32_t *entry_slot,
                                  const uint32_t *rows, ptrdiff_t first, ptrdiff_t stop,
                                  const float *ordered, ptrdiff_t width, ptrdiff_t ahead,
                                  double *hist)
{
    for (ptrdiff_t i = first; i < stop; i++) {
        gbmo_prefetch_entries(indptr, entry_slot, rows, i, ahead, stop);
        const float *grad_row = ordered + i * width;
        for (int64_t e = indptr[rows[i]]; e < indptr[rows[i] + 1]; e++) {
            double *bin_row = hist + (ptrdiff_t)entry_slot[e] * width;
            for (ptrdiff_t j = 0; j < width; j++)
                bin_row[j] += grad_row[j];
        }
    }
}

#endif
