/* The three extra histograms of _histogram.pyx's add_rows_interleaved, one
 * set per thread, as thread-local storage: 3 x 256 rows x 8 values of
 * doubles, 48 KB. On the stack they made a worker thread need 68 KB where
 * 36 KB did before, and a small thread stack (OMP_STACKSIZE=48K) crashed the
 * process. glibc and macOS allocate (and zero) a module's thread-local block
 * for a thread when it first reads it; Windows and musl set it up for every
 * thread of the process once the module is loaded (48 KB each, musl's
 * untouched until used). The kernel zeroes the rows it uses before each
 * use, so nothing carries over between calls, threads or a fork. */
#ifndef GBMO_INTERLEAVED_SCRATCH_H
#define GBMO_INTERLEAVED_SCRATCH_H

#if defined(_MSC_VER)
#define GBMO_THREAD_LOCAL __declspec(thread)
#else
#define GBMO_THREAD_LOCAL __thread
#endif

/* histograms a row may go to (the node's own and three more), their most
 * rows (8-bit bins' 256) and most values a row */
#define GBMO_INTERLEAVED_HISTOGRAMS 4
#define GBMO_INTERLEAVED_HIST_ROWS 256
#define GBMO_INTERLEAVED_MAX_WIDTH 8

#if GBMO_INTERLEAVED_HISTOGRAMS != 4
#error "add_rows_interleaved is written out for four histograms"
#endif

static GBMO_THREAD_LOCAL double gbmo_interleaved_histograms[
    (GBMO_INTERLEAVED_HISTOGRAMS - 1) * GBMO_INTERLEAVED_HIST_ROWS * GBMO_INTERLEAVED_MAX_WIDTH];

/* This thread's three extra histograms, one after the other. */
static inline double *gbmo_thread_interleaved_histograms(void)
{
    return gbmo_interleaved_histograms;
}

#endif
