/* Software prefetch for the loops that read a node's rows out of a column or
 * a gradient array: below the root a node's rows are scattered over the
 * data set, so each read would wait for memory while the row before it adds
 * (the histogram build spent 70% of its samples on that one load at
 * 1,000,000 rows). The loops ask for the row GBMO_PREFETCH_ROWS ahead, as
 * LightGBM's histogram build does (benchmarks/README.md, "Prefetching a
 * node's rows"). A hint only: nothing changes but the time. */
#ifndef GBMO_PREFETCH_H
#define GBMO_PREFETCH_H

#if defined(__GNUC__) || defined(__clang__)
#define gbmo_prefetch(address) __builtin_prefetch((address), 0, 3)
#else
#define gbmo_prefetch(address) ((void)(address))
#endif

#define GBMO_PREFETCH_ROWS 128
#define GBMO_PREFETCH_GAP 16
#define GBMO_PREFETCH_MIN_TOTAL 65536

#endif
