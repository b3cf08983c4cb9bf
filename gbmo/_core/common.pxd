# The dtypes shared by every kernel; gbmo/_core/__init__.py mirrors them for Python.
from libc.stdint cimport uint64_t
from numpy cimport uint8_t, uint16_t, float32_t, float64_t, int32_t, int64_t, uint32_t

# A binned feature value; the bin above every other (missing_bin, max_bins)
# holds NaN. 8 bits up to 255 bins, 16 bits beyond (max_bins up to 65535):
# the kernels that read bins are compiled for both, and code that keeps a
# pointer to either (the grower's state) holds it as `const void*` with a
# flag, wide_bins, that says which.
ctypedef fused X_BINNED_t:
    uint8_t
    uint16_t
ctypedef uint16_t BIN_INDEX_t   # any bin of either width: a split's threshold bin
ctypedef float32_t G_H_t        # gradients and hessians
ctypedef float64_t HIST_t       # histogram sums
ctypedef float64_t X_t          # raw feature values
ctypedef uint32_t ROW_t         # a row index inside the training set
ctypedef int32_t NODE_t         # a node index inside a tree

cdef extern from "prefetch.h" nogil:
    # hints to fetch a row's data ahead of a scattered read (see the header)
    const Py_ssize_t GBMO_PREFETCH_ROWS
    const Py_ssize_t GBMO_PREFETCH_GAP
    const Py_ssize_t GBMO_PREFETCH_MIN_TOTAL
    const Py_ssize_t GBMO_PREFETCH_ENTRY_ROWS
    const Py_ssize_t GBMO_PREFETCH_MIN_ENTRIES
    void gbmo_prefetch(const void* address)
    ROW_t gbmo_row_ahead(const ROW_t* rows, Py_ssize_t i, Py_ssize_t ahead, Py_ssize_t stop)
    # a macro: column may hold either width of bins
    void gbmo_prefetch_bin(const void* column, const ROW_t* rows, Py_ssize_t i,
                           Py_ssize_t ahead, Py_ssize_t stop)
    void gbmo_prefetch_entries(const int64_t* indptr, const uint32_t* entry_slot,
                               const ROW_t* rows, Py_ssize_t i, Py_ssize_t ahead,
                               Py_ssize_t stop)

# SERIAL_REGION: an OpenMP parallel region costs about 0.9 us on this
# project's machine even when its `if` clause keeps it to one thread (libgomp
# still sets up a team), against 1.2 us for two threads. The grower calls its
# kernels about 200 times a tree, on one thread for most small nodes, so the
# kernels it calls run their loop without OpenMP when given one thread
# (benchmarks/README.md, "Parallel regions on one thread").


cdef inline uint64_t splitmix(uint64_t x) noexcept nogil:
    """splitmix64's finaliser (Steele et al. 2014): a bijection of 64-bit
    integers whose outputs for nearby inputs look independent. Every
    per-node draw (the grower's node_draws) and the split noise
    (random_strength) hash their counters with it."""
    x = (x ^ (x >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    x = (x ^ (x >> 27)) * <uint64_t>0x94D049BB133111EB
    return x ^ (x >> 31)


cdef inline uint64_t counter_draw(uint64_t key, uint64_t counter) noexcept nogil:
    """The draw number counter of a stream keyed by key: splitmix64's step
    (the golden ratio's 64 bits) counter + 1 times from the key, hashed."""
    return splitmix(key + (counter + 1) * <uint64_t>0x9E3779B97F4A7C15)


cdef inline double soft_threshold(double gradient, double lambda_l1) noexcept nogil:
    """A gradient sum moved toward 0 by lambda_l1, and 0 within it: the L1
    penalty's form of G in every leaf value and score."""
    if gradient > lambda_l1:
        return gradient - lambda_l1
    if gradient < -lambda_l1:
        return gradient + lambda_l1
    return 0.0


cdef inline Py_ssize_t prefetch_distance(Py_ssize_t n_rows, Py_ssize_t n_total) noexcept nogil:
    """How many rows ahead a loop over a node's n_rows rows (of the data's
    n_total) prefetches, 0 for not at all: only when there are
    GBMO_PREFETCH_MIN_TOTAL rows or more and the node's lie at least
    GBMO_PREFETCH_GAP rows apart on average. Fewer rows stay in the caches,
    and the hardware's own prefetch serves rows close together: there the
    hint's instructions would only cost."""
    if n_total < GBMO_PREFETCH_MIN_TOTAL or n_rows * GBMO_PREFETCH_GAP > n_total:
        return 0
    return GBMO_PREFETCH_ROWS


cdef inline Py_ssize_t histogram_row(Py_ssize_t value, Py_ssize_t missing_row) noexcept nogil:
    """The row of a feature's histogram that counts a binned value. Histograms
    have as many rows as the most bins any feature has plus one for missing
    values, which the binned data holds as max_bins (above every real bin): so
    features with few values (binary, one-hot, small integers) do not make
    every histogram max_bins tall."""
    return value if value < missing_row else missing_row


cdef inline Py_ssize_t bin_flags(Py_ssize_t missing_bin, Py_ssize_t histogram_bins) noexcept nogil:
    """The length of a table of one flag per bin ("goes left"): 256 for 8-bit
    bins, so that any byte indexes it; for 16-bit bins one per histogram row
    (histogram_bins), whose last is the missing bin's, as in histogram_row
    (a table as long as max_bins would take 64 KB a node at 65,535 bins,
    most of it for bins no feature has). A bin reads the flag at
    flag_index. gbmo/_core/__init__.py mirrors both."""
    return 256 if missing_bin < 256 else histogram_bins


cdef inline Py_ssize_t flag_index(Py_ssize_t bin, Py_ssize_t n_flags) noexcept nogil:
    """Where a table of n_flags flags keeps bin's: the bin itself, the last
    flag for bins beyond it (the missing bin of 16-bit bins)."""
    return bin if bin < n_flags else n_flags - 1


cdef inline bint is_bin_of(Py_ssize_t value, bint wide_bins) noexcept nogil:
    """Whether value is a bin of 16-bit bins (wide_bins) or of 8-bit ones: the
    kernels' check of a missing_bin against their binned data's dtype."""
    return 0 <= value <= (65535 if wide_bins else 255)


cdef inline const void* bins_after(const void* binned, bint wide_bins,
                                   Py_ssize_t offset) noexcept nogil:
    """The address of the bin offset bins after binned (16-bit bins when
    wide_bins, else 8-bit)."""
    return <const char*> binned + offset * (2 if wide_bins else 1)


cdef inline bint in_category_set(const unsigned long long* words, Py_ssize_t offset,
                                 double x) noexcept nogil:
    """Whether the category rank x (a number >= 0, not NaN) is in a
    categorical split's set, stored at words[offset]: its size in bits, then
    its bits (booster._PackedForest builds them for the walks and TreeSHAP)."""
    cdef unsigned long long rank
    if not (0.0 <= x < <double>words[offset]):
        return False
    rank = <unsigned long long>x
    return (words[offset + 1 + (rank >> 6)] >> (rank & 63)) & 1
