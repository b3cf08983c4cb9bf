"""How many threads a kernel call, or a map over Python-level tasks, gets."""

from concurrent.futures import ThreadPoolExecutor

# A parallel region costs tens of microseconds when the cores are free and
# milliseconds when another process holds one, so calls with less work than
# this (counted in inner-loop updates) run on one thread.
PARALLEL_MIN_WORK = 1 << 13


def threads_for(n_threads, work):
    return n_threads if work >= PARALLEL_MIN_WORK else 1


def map_in_threads(function, items, n_threads):
    """list(map(function, items)) on up to n_threads threads; one thread runs
    in the caller's, so n_threads=1 starts no thread at all."""
    items = list(items)
    n_workers = min(n_threads, len(items))
    if n_workers <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(n_workers) as pool:
        return list(pool.map(function, items))
