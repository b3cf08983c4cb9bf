/* Software prefetch for the loops that read a node's rows out of a column or
 * a gradient array: below the root a node's rows are scattered over the
 * data set, so each read would wait for memory while the row before it adds
 * (the histogram build spent 70% of its samples on that one load at
 * 1,000,000 rows). The loops ask for the row GBMO_PREFETCH_ROWS ahead, as
 * LightGBM's histogram build does (benchmarks/README.md, "Prefetching a
 * node's rows"). A hint only: nothing changes but the time. */
#ifndef GBMO_PREFETCH_H
#define GBMO_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)  /* clang too */
#define gbmo_prefetch(address) __builtin_prefetch((address), 0, 3)
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <xmmintrin.h>
#define gbmo_prefetch(address) _mm_prefetch((const char *)(address), _MM_HINT_T0)
#else
#define gbmo_prefetch(address) ((void)(address))
#endif

/* How far ahead: 32, 128 and 256 rows measured, 128 the fastest. */
#define GBMO_PREFETCH_ROWS 128
/* Only for nodes whose rows lie this many rows apart on average, or more:
 * the hardware's own prefetch serves closer rows. */
#define GBMO_PREFETCH_GAP 16
/* Only for data of this many rows or more: smaller ones stay in the caches. */
#define GBMO_PREFETCH_MIN_TOTAL 65536

/* The row to ask for while rows[i] is read: rows[i + ahead], or the last
 * before stop at the end of a node. */
#define gbmo_row_ahead(rows, i, ahead, stop)                                         \
    ((rows)[(i) + (ahead) < (stop) ? (i) + (ahead) : (stop) - 1])

/* Asks for the bin of gbmo_row_ahead(rows, i, ahead, stop)
 * while rows[i]'s is read; nothing when ahead is 0. A macro: written as a
 * static inline function, GCC 12 left no prefetch in the histogram loops
 * (objdump -d showed none), and the gain went with it. */
#define gbmo_prefetch_bin(column, rows, i, ahead, stop)                              \
    do {                                                                             \
        if (ahead)                                                                   \
            gbmo_prefetch((column) + gbmo_row_ahead(rows, i, ahead, stop));          \
    } while (0)

/* The histograms built by row read each row's entries, two loads apart
 * (indptr, then the entries), at the node's scattered rows: prefetched
 * GBMO_PREFETCH_ENTRY_ROWS rows ahead (16 to 64 measured alike, 128 slower)
 * once every row's entries take GBMO_PREFETCH_MIN_ENTRIES (a megabyte, a
 * core's L2 here): on 100,000 rows of 20 ones in 1,000 one-hot columns a round
 * took 1.3x less time, on 5,000 rows a tenth more. The root's rows come in
 * order, but the hint cost them less than the other nodes gained. */
#define GBMO_PREFETCH_ENTRY_ROWS 32
#define GBMO_PREFETCH_MIN_ENTRIES (1 << 18)

/* Asks for indptr at row rows[i + 2 ahead] and for the entries of row
 * rows[i + ahead], whose indptr the step ahead asked for; nothing when ahead
 * is 0. */
#define gbmo_prefetch_entries(indptr, entry_slot, rows, i, ahead, stop)              \
    do {                                                                             \
        if (ahead) {                                                                 \
            gbmo_prefetch((indptr) + gbmo_row_ahead(rows, i, 2 * (ahead), stop));    \
            gbmo_prefetch((entry_slot) + (indptr)[gbmo_row_ahead(rows, i, ahead, stop)]); \
        }                                                                            \
    } while (0)

#endif
