"""How many OpenMP threads a kernel call gets."""

# A parallel region costs tens of microseconds when the cores are free and
# milliseconds when another process holds one, so calls with less work than
# this (counted in inner-loop updates) run on one thread.
PARALLEL_MIN_WORK = 1 << 13


def threads_for(n_threads, work):
    return n_threads if work >= PARALLEL_MIN_WORK else 1
