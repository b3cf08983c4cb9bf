"""Zeroed memory for node histograms that keeps their unwritten rows unmapped.

A histogram is (n_features, n_bins, width) float64, as tall as the feature
with the most bins, and the kernels write only a feature's value rows and its
missing row (value_bins, _histogram.zero_feature); the rows between keep the 0
of the allocation, untouched. np.zeros leaves untouched memory unmapped, but
numpy asks the kernel for huge pages on large arrays (madvise), and then one
written row maps 2 MB: with one feature of 65,535 bins beside 49 of 16 values,
a run's histograms became resident in full (1.1 GB where 0.16 GB were
written). Where most of a histogram is never written, its memory is an
anonymous mapping of small pages instead.
"""
import mmap

import numpy as np

from ._core import HIST_DTYPE

PAGE_BYTES = mmap.PAGESIZE
# Small pages for a histogram whose written pages are less than this share of
# its bytes; otherwise numpy's allocation, with huge pages where the kernel
# gives them (fewer TLB misses when most rows are written anyway).
SMALL_PAGES_BELOW = 0.5


def written_bytes(shape, value_bins):
    """The bytes of small pages that the kernels write in a histogram of shape
    (n_features, n_bins, width): each feature's first min(value_bins, n_bins -
    1) rows and its last, rounded out to pages."""
    n_features, n_bins, width = shape
    row_bytes = width * np.dtype(HIST_DTYPE).itemsize
    value_rows = np.minimum(np.asarray(value_bins, dtype=np.int64)[:n_features], n_bins - 1)
    # a feature's rows start anywhere in a page: one more page each for the
    # value rows and the last row, which may straddle two
    value_pages = -(-value_rows * row_bytes // PAGE_BYTES) + 1  # ceiling division
    missing_pages = -(-row_bytes // PAGE_BYTES) + 1
    return int(np.minimum((value_pages + missing_pages) * PAGE_BYTES,
                          n_bins * row_bytes).sum())


def zeroed_histograms(shape, value_bins):
    """np.zeros(shape, HIST_DTYPE) for histograms whose last three axes are
    (n_features, n_bins, width), the first any count of them; where the
    kernels write less than SMALL_PAGES_BELOW of each histogram (and the
    system can say so), an anonymous mapping of small pages, zero until
    written."""
    total = int(np.prod(shape)) * np.dtype(HIST_DTYPE).itemsize
    one = int(np.prod(shape[-3:])) * np.dtype(HIST_DTYPE).itemsize
    no_huge_pages = getattr(mmap, "MADV_NOHUGEPAGE", None)
    if (total == 0 or no_huge_pages is None
            or written_bytes(shape[-3:], value_bins) >= SMALL_PAGES_BELOW * one):
        return np.zeros(shape, dtype=HIST_DTYPE)
    # private, as numpy's memory is: a forked child's writes stay its own
    memory = mmap.mmap(-1, total, flags=mmap.MAP_PRIVATE)
    try:
        memory.madvise(no_huge_pages)
    except OSError:  # a kernel without transparent huge pages has none to refuse
        pass
    return np.ndarray(shape, dtype=HIST_DTYPE, buffer=memory)


def owns_memory(histograms):
    """Whether histograms holds its own memory (zeroed_histograms made it),
    rather than being a view into a larger block."""
    return histograms.base is None or isinstance(histograms.base, mmap.mmap)
