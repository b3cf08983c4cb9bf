"""Best-first growth of one tree in one call without the GIL.

The Python grower (grower.TreeGrower) decides which node splits next and
calls a kernel for every step: with few rows and outputs its Python between
the calls (node objects, argument checks, small numpy arrays) cost as much as
the kernels, 40% of a d = 1 model's time on 20,000 rows. This loop takes the
same steps in the same order over the same kernels' nogil cores, so it grows
the same tree bit for bit (tests/test_native_grower.py checks it against the
Python grower). It takes the common configuration (dense binned data, the
dense split, best-first growth; see TreeGrower.native); the Python grower
keeps the others.

Nodes are numbered as they are made (the root 0, a split's children next),
as the Python loop numbers them, so per-node draws (node_draws) agree; each
has a histogram slot in a block of n_slots histograms while it may still
split. Waiting nodes are a binary heap on (largest gain, earliest made).
"""
from libc.math cimport INFINITY, nearbyint
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc, qsort
from cython.parallel cimport prange

import weakref

import numpy as np
from numpy cimport int32_t, int64_t, uint32_t

from .common cimport (G_H_t, HIST_t, ROW_t, X_BINNED_t, bin_flags, bins_after, counter_draw,
                      flag_index, is_bin_of, splitmix, uint8_t, uint16_t)
from ._histogram cimport (ChildAndSibling, build_child_and_sibling, build_feature_histograms,
                          build_nodes_histograms, build_row_wise_histograms, gather_rows,
                          subtract_feature_histograms, sum_rows)
from ._partition cimport partition_rows, threshold_sides
from ._split cimport (CategoryRules, SplitContext, ValueBounds, best_feature_position,
                      category_rules, clipped_leaf_values, dense_context, search_features,
                      search_nodes)

from ..parallel import PARALLEL_MIN_WORK
from ._histogram import ROW_CHUNKS

cdef Py_ssize_t parallel_min_work = PARALLEL_MIN_WORK


cdef inline uint64_t tree_key(uint64_t tree_seed, uint64_t purpose) noexcept nogil:
    """A key of the tree's draws for one purpose (a node's stream, or its
    noise), hashed rather than summed so that nearby purposes do not share
    shifted draws."""
    return splitmix(tree_seed ^ splitmix(purpose))


cdef void fill_node_draws(uint64_t tree_seed, Py_ssize_t node, Py_ssize_t stream,
                          Py_ssize_t n, uint64_t* out) noexcept nogil:
    """node_draws into out."""
    cdef uint64_t key = tree_key(tree_seed, <uint64_t>node * 2 + <uint64_t>stream)
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = counter_draw(key, <uint64_t>i)


cdef inline uint64_t noise_key_of(uint64_t tree_seed, Py_ssize_t node) noexcept nogil:
    """node_noise_key. The node's complement keeps its keys apart from
    node_draws' counters (node * 2 + stream)."""
    return tree_key(tree_seed, ~(<uint64_t>node))


def node_noise_key(uint64_t tree_seed, Py_ssize_t node_id):
    """The key of random_strength's noise at one node (see
    _split.SplitContext), from the tree's seed and the node alone, as
    node_draws; both growth loops take it from here."""
    return noise_key_of(tree_seed, node_id)


def node_draws(uint64_t tree_seed, Py_ssize_t node_id, Py_ssize_t stream, Py_ssize_t n):
    """n uniform 64-bit draws for one node and purpose (stream), the same
    whatever was drawn for other nodes: a counter from a key that hashes the
    tree's seed, the node and the stream, each step hashed again (splitmix64).
    The key is hashed, not summed, so that nodes k and k + 1 do not share
    shifted draws. Both growth loops draw a node's features
    (colsample_bynode, stream 0) and thresholds (extra_trees, stream 1) here."""
    draws = np.empty(max(n, 0), dtype=np.uint64)
    cdef uint64_t[::1] out = draws
    if n > 0:
        fill_node_draws(tree_seed, node_id, stream, n, &out[0])
    return draws


cdef struct Draw:
    uint64_t value
    Py_ssize_t position


cdef int draw_order(const void* a, const void* b) noexcept nogil:
    """Smaller draws first, then earlier positions (numpy's stable argsort)."""
    cdef const Draw* x = <const Draw*> a
    cdef const Draw* y = <const Draw*> b
    if x.value != y.value:
        return -1 if x.value < y.value else 1
    return (x.position > y.position) - (x.position < y.position)


cdef struct Waiting:
    int depth
    double gain
    Py_ssize_t order
    int node


cdef struct Search:
    # one split search's scratch
    double* split_gain               # all features (under noise, their scores)
    double* noiseless_gain           # all features: their splits' gains under noise
    int* split_bin                   # all features
    unsigned char* split_missing_left  # all features
    HIST_t* shrunk_parent            # width
    uint64_t* draws                  # all features
    Draw* sorted_draws               # the tree's features
    unsigned char* chosen            # the tree's features
    int* node_features               # the tree's features
    int* allowed                     # the tree's features
    uint64_t* allowed_bits           # a bit per feature (interaction constraints)
    int* random_bins                 # all features
    unsigned char* searched          # all features: 1 for those the node searches
    int* category_order              # all features x histogram bins (categorical only)


cdef inline Py_ssize_t bit_words(Py_ssize_t n_bits) noexcept nogil:
    return (n_bits + 63) // 64


cdef inline bint has_bit(const uint64_t* bits, Py_ssize_t i) noexcept nogil:
    return (bits[i >> 6] >> (i & 63)) & 1


cdef bint new_search(Search* s, Py_ssize_t n_all_features, Py_ssize_t n_features,
                     Py_ssize_t width, Py_ssize_t order_size) noexcept nogil:
    """Allocates s's buffers (order_size entries for the categories' orders);
    False when one could not be."""
    n_all_features = max(n_all_features, 1)
    n_features = max(n_features, 1)
    s.split_gain = <double*> malloc(n_all_features * sizeof(double))
    s.noiseless_gain = <double*> malloc(n_all_features * sizeof(double))
    s.split_bin = <int*> malloc(n_all_features * sizeof(int))
    s.split_missing_left = <unsigned char*> malloc(n_all_features * sizeof(unsigned char))
    s.shrunk_parent = <HIST_t*> malloc(width * sizeof(HIST_t))
    s.draws = <uint64_t*> malloc(n_all_features * sizeof(uint64_t))
    s.sorted_draws = <Draw*> malloc(n_features * sizeof(Draw))
    s.chosen = <unsigned char*> malloc(n_features * sizeof(unsigned char))
    s.node_features = <int*> malloc(n_features * sizeof(int))
    s.allowed = <int*> malloc(n_features * sizeof(int))
    s.allowed_bits = <uint64_t*> malloc(bit_words(n_all_features) * sizeof(uint64_t))
    s.random_bins = <int*> malloc(n_all_features * sizeof(int))
    s.searched = <unsigned char*> malloc(n_all_features * sizeof(unsigned char))
    s.category_order = <int*> malloc(max(order_size, 1) * sizeof(int))
    return not (s.split_gain == NULL or s.noiseless_gain == NULL or s.split_bin == NULL
                or s.split_missing_left == NULL or s.shrunk_parent == NULL or s.draws == NULL
                or s.sorted_draws == NULL or s.chosen == NULL or s.node_features == NULL or s.allowed == NULL
                or s.allowed_bits == NULL or s.random_bins == NULL or s.searched == NULL
                or s.category_order == NULL)


cdef void free_search(Search* s) noexcept nogil:
    free(s.split_gain)
    free(s.noiseless_gain)
    free(s.split_bin)
    free(s.split_missing_left)
    free(s.shrunk_parent)
    free(s.draws)
    free(s.sorted_draws)
    free(s.chosen)
    free(s.node_features)
    free(s.allowed)
    free(s.allowed_bits)
    free(s.random_bins)
    free(s.searched)
    free(s.category_order)


cdef struct Grow:
    # the data, as the Python grower's
    const void* X_binned
    bint wide_bins                   # X_binned's bins are 16-bit, else 8-bit
    Py_ssize_t row_stride
    const G_H_t* grad
    const G_H_t* hess
    Py_ssize_t d, k, width
    double hess_constant
    ROW_t* rows
    ROW_t* left_buffer
    ROW_t* right_buffer
    G_H_t* ordered
    const int* features
    Py_ssize_t n_features
    const int* column_features      # those built column by column
    Py_ssize_t n_column_features
    const int* n_bins_non_missing
    int missing_bin
    const int* skipped_bins          # NULL: none
    # the features built row by row (indptr NULL: none)
    const int64_t* indptr
    const uint32_t* entry_slot
    const unsigned char* wanted
    HIST_t* chunk_hists               # up to _histogram.ROW_CHUNKS - 1 histograms, scratch
    Py_ssize_t n_chunk_hists
    Py_ssize_t n_entries              # every row's entries
    double mean_entries_per_row
    # parameters
    double lambda_l2, lambda_l1, min_samples_leaf, min_child_weight, min_gain
    Py_ssize_t max_depth, max_leaves
    int n_threads
    # histograms: n_slots of (all features, n_hist_bins, width)
    HIST_t* histograms
    Py_ssize_t hist_size, n_hist_bins, capacity
    # the histogram rows a node's column-wise build clears and a search or a
    # subtraction reads: each feature's value bins and the missing row
    double column_rows, feature_rows
    int* free_slots
    Py_ssize_t n_free, n_alive, peak_alive
    Py_ssize_t widest_pass           # the most nodes whose histograms were built in one pass
    # nodes
    Py_ssize_t n_nodes
    Py_ssize_t* start
    Py_ssize_t* stop
    int* depth
    HIST_t* sums
    HIST_t* left_sums
    double* gain
    int* feature
    int* bin
    unsigned char* missing_left
    int* left
    int* right
    int* slot
    # waiting nodes
    Waiting* heap
    Py_ssize_t heap_size
    # depth-wise growth: a level's nodes first, and up to level_batch of them
    # split together, their children's histograms built in one pass
    bint depthwise
    Py_ssize_t level_batch
    int* batch                       # level_batch
    int* to_build                    # 2 level_batch
    int* subtracted                  # level_batch: parents whose larger child subtracts
    ROW_t** node_rows                # 2 level_batch, for build_nodes_histograms
    Py_ssize_t* node_counts
    G_H_t** node_ordered
    HIST_t** node_totals
    HIST_t** node_hists
    # interaction constraints (n_groups 0: none): each group's features as
    # bits, and each node's parent, whose features make its path
    Py_ssize_t n_groups
    uint64_t* group_bits             # n_groups x bit_words(all features)
    int* parent
    # per-node draws (colsample_bynode < 1, extra_trees)
    uint64_t tree_seed
    double bynode_fraction
    bint extra_trees
    double noise_scale               # random_strength's (0: none)
    Py_ssize_t n_all_features
    # monotone constraints (NULL: none): per feature and output -1, 0 or +1,
    # and each node's bounds on its values, per output
    const signed char* monotone
    double* lower
    double* upper
    double* left_values              # outputs
    double* right_values             # outputs
    # path_smooth > 0 (with monotone, every direction 0 if need be): each
    # node's values, per output, toward which its children's are pulled;
    # max_output cuts a value before it is (max_delta_step, else inf)
    double path_smooth
    double max_output
    double* value
    # categorical features (NULL: none): per feature 1 when its bins are
    # categories, ordered at each node; a split on one sends left the bins
    # whose flag is set in its node's row of left_flags (n_set_flags per node,
    # the missing bin's included)
    const unsigned char* categorical
    CategoryRules category_rules
    unsigned char* left_flags
    Py_ssize_t n_set_flags           # 256 for 8-bit bins, for 16-bit the categorical
                                     # features' most bins + 1 (see common.bin_flags)
    Py_ssize_t n_flags               # bin_flags(missing_bin, n_hist_bins)
    unsigned char* threshold_flags   # n_flags: the bins a threshold split sends left
    # the scratch of two searches (a split's children are searched together)
    Search searches[2]
    bint out_of_slots


cdef inline int threads_for(const Grow* g, double work) noexcept nogil:
    """parallel.threads_for."""
    return g.n_threads if work >= parallel_min_work else 1


cdef inline double build_work(const Grow* g, Py_ssize_t count, Py_ssize_t n_nodes) noexcept nogil:
    """The column-wise histograms of n_nodes nodes of count rows in all: each
    row's adds, and zeroing each histogram's rows (column_rows), which on
    nodes of fewer rows than bins costs more than the adds."""
    return (<double>count * g.n_column_features + n_nodes * g.column_rows) * g.width


cdef inline HIST_t* histogram_of(const Grow* g, int node) noexcept nogil:
    return g.histograms + g.slot[node] * g.hist_size


cdef inline bint can_split(const Grow* g, int node) noexcept nogil:
    return (g.depth[node] < g.max_depth and g.n_features > 0
            and g.stop[node] - g.start[node] >= 2 * g.min_samples_leaf)


cdef int new_node(Grow* g, Py_ssize_t start, Py_ssize_t stop, int depth) noexcept nogil:
    cdef int node = <int>g.n_nodes
    g.n_nodes += 1
    g.start[node] = start
    g.stop[node] = stop
    g.depth[node] = depth
    g.gain[node] = -1.0
    g.feature[node] = -1
    g.bin[node] = 0
    g.missing_left[node] = 0
    g.left[node] = -1
    g.right[node] = -1
    g.slot[node] = -1
    return node


# -- waiting nodes: a binary heap, the largest gain first (depth-wise: the
# shallowest, then the largest gain), then the earliest --------------------------
cdef inline bint comes_before(const Grow* g, const Waiting* a, const Waiting* b) noexcept nogil:
    if g.depthwise and a.depth != b.depth:
        return a.depth < b.depth
    return a.gain > b.gain or (a.gain == b.gain and a.order < b.order)


cdef void push(Grow* g, int node, Py_ssize_t order) noexcept nogil:
    cdef Py_ssize_t i = g.heap_size, parent
    cdef Waiting entry
    entry.depth = g.depth[node]
    entry.gain = g.gain[node]
    entry.order = order
    entry.node = node
    g.heap_size += 1
    while i > 0:
        parent = (i - 1) >> 1
        if not comes_before(g, &entry, &g.heap[parent]):
            break
        g.heap[i] = g.heap[parent]
        i = parent
    g.heap[i] = entry


cdef int pop(Grow* g) noexcept nogil:
    cdef int node = g.heap[0].node
    cdef Waiting last
    cdef Py_ssize_t i = 0, child
    g.heap_size -= 1
    last = g.heap[g.heap_size]
    while True:
        child = 2 * i + 1
        if child >= g.heap_size:
            break
        if child + 1 < g.heap_size and comes_before(g, &g.heap[child + 1], &g.heap[child]):
            child += 1
        if not comes_before(g, &g.heap[child], &last):
            break
        g.heap[i] = g.heap[child]
        i = child
    if g.heap_size > 0:
        g.heap[i] = last
    return node


# -- histogram slots -----------------------------------------------------------
cdef void release(Grow* g, int node) noexcept nogil:
    if g.slot[node] >= 0:
        g.free_slots[g.n_free] = g.slot[node]
        g.n_free += 1
        g.n_alive -= 1
        g.slot[node] = -1


cdef bint evict_one(Grow* g) noexcept nogil:
    """Frees the histogram of the waiting node least likely to split next
    (the smallest gain; depth-wise, of the deepest level); False when no
    waiting node holds one."""
    cdef Py_ssize_t i
    cdef int chosen = -1, node
    for i in range(g.heap_size):
        node = g.heap[i].node
        if g.slot[node] >= 0 and (
                chosen < 0 or (g.depthwise and g.depth[node] > g.depth[chosen])
                or ((not g.depthwise or g.depth[node] == g.depth[chosen])
                    and g.gain[node] < g.gain[chosen])):
            chosen = node
    if chosen < 0:
        return False
    release(g, chosen)
    return True


cdef void make_room(Grow* g, Py_ssize_t needed) noexcept nogil:
    """Evicts until needed more histograms fit in the capacity, or nothing is
    left to evict."""
    while g.n_alive + needed > g.capacity and evict_one(g):
        pass


cdef bint take_slot(Grow* g, int node) noexcept nogil:
    make_room(g, 1)
    if g.n_free == 0:  # the caller sized the block for the most that can be alive
        g.out_of_slots = True
        return False
    g.n_free -= 1
    g.slot[node] = g.free_slots[g.n_free]
    g.n_alive += 1
    g.peak_alive = max(g.peak_alive, g.n_alive)
    return True


# -- the steps -----------------------------------------------------------------
cdef void gather(Grow* g, int node) noexcept nogil:
    cdef Py_ssize_t count = g.stop[node] - g.start[node]
    gather_rows(g.grad, g.hess, g.d, g.k, g.rows + g.start[node], count, g.row_stride,
                g.ordered, threads_for(g, count * g.width))


cdef void build(Grow* g, int node, bint sums_known) noexcept nogil:
    """node's histogram, into a slot; the root's sums come from its gathered
    rows first (skipped bins need them)."""
    cdef Py_ssize_t count = g.stop[node] - g.start[node]
    cdef const ROW_t* rows = g.rows + g.start[node]
    cdef HIST_t* sums = g.sums + node * g.width
    cdef HIST_t* histogram
    gather(g, node)
    if not sums_known:
        sum_rows(g.ordered, count, g.width, sums)
    if not take_slot(g, node):
        return
    histogram = histogram_of(g, node)
    build_feature_histograms(g.X_binned, g.wide_bins, g.row_stride, rows, count, g.ordered,
                             g.column_features, g.n_column_features, NULL, g.skipped_bins,
                             g.n_bins_non_missing, sums, histogram, g.n_hist_bins, g.width,
                             threads_for(g, build_work(g, count, 1)))
    build_by_row(g, node, g.ordered)


cdef void build_by_row(Grow* g, int node, const G_H_t* ordered) noexcept nogil:
    """node's histograms of the features built row by row (none without
    row_wise), from its rows' gathered gradients `ordered`; node's sums
    known, its slot taken."""
    cdef Py_ssize_t count = g.stop[node] - g.start[node]
    if g.indptr != NULL:
        build_row_wise_histograms(g.indptr, g.entry_slot, g.n_entries, g.mean_entries_per_row,
                                  g.n_all_features, g.wanted, g.skipped_bins,
                                  g.n_bins_non_missing, g.rows + g.start[node], count, ordered,
                                  g.sums + node * g.width, histogram_of(g, node),
                                  g.chunk_hists, g.n_chunk_hists, g.n_hist_bins, g.width,
                                  threads_for(g, count * g.width * g.mean_entries_per_row))


cdef Py_ssize_t allowed_features(const Grow* g, int node, Search* s) noexcept nogil:
    """Interaction constraints: the tree's features that may join the ones
    split on above node (its path), into s.allowed; returns how many. As
    grower.InteractionConstraints.allowed: those of every group holding the
    whole path, and a path of one feature may repeat it."""
    cdef Py_ssize_t words = bit_words(g.n_all_features), group, w, i, m = 0
    cdef int ancestor, first = g.feature[g.parent[node]]
    cdef bint holds, one_feature = True
    cdef const uint64_t* bits
    for w in range(words):
        s.allowed_bits[w] = 0
    for group in range(g.n_groups):
        bits = g.group_bits + group * words
        holds = True
        ancestor = g.parent[node]
        while ancestor >= 0 and holds:
            holds = has_bit(bits, g.feature[ancestor])
            ancestor = g.parent[ancestor]
        if holds:
            for w in range(words):
                s.allowed_bits[w] |= bits[w]
    ancestor = g.parent[node]
    while ancestor >= 0:
        one_feature = one_feature and g.feature[ancestor] == first
        ancestor = g.parent[ancestor]
    if one_feature:
        s.allowed_bits[first >> 6] |= (<uint64_t>1) << (first & 63)
    for i in range(g.n_features):
        if has_bit(s.allowed_bits, g.features[i]):
            s.allowed[m] = g.features[i]
            m += 1
    return m


cdef Py_ssize_t draw_node_features(const Grow* g, int node, const int* features,
                                   Py_ssize_t n, Search* s) noexcept nogil:
    """colsample_bynode: of features (n, ascending), those of the
    round(fraction x n) smallest draws (at least one), ascending, into
    s.node_features; returns how many. As grower.TreeGrower._node_features."""
    cdef Py_ssize_t size, i
    cdef Py_ssize_t m = 0
    size = max(1, <Py_ssize_t>nearbyint(g.bynode_fraction * n))
    fill_node_draws(g.tree_seed, node, 0, n, s.draws)
    for i in range(n):
        s.sorted_draws[i].value = s.draws[i]
        s.sorted_draws[i].position = i
        s.chosen[i] = 0
    qsort(s.sorted_draws, n, sizeof(Draw), draw_order)
    for i in range(min(size, n)):
        s.chosen[s.sorted_draws[i].position] = 1
    for i in range(n):
        if s.chosen[i]:
            s.node_features[m] = features[i]
            m += 1
    return m


cdef void draw_random_bins(const Grow* g, int node, Search* s) noexcept nogil:
    """extra_trees: each feature's one threshold, between two of its value
    bins (a categorical feature's draw is one of its bins), into
    s.random_bins. As grower.TreeGrower._find_split."""
    cdef Py_ssize_t f
    cdef uint64_t choices
    fill_node_draws(g.tree_seed, node, 1, g.n_all_features, s.draws)
    for f in range(g.n_all_features):
        choices = <uint64_t>max(g.n_bins_non_missing[f]
                                - (0 if g.categorical != NULL and g.categorical[f] else 1), 1)
        s.random_bins[f] = <int>(s.draws[f] % choices)


cdef inline double search_work(const Grow* g) noexcept nogil:
    return g.feature_rows * g.width


cdef Py_ssize_t prepare_search(Grow* g, int node, Search* s, SplitContext* context,
                               const int** features, const int** random_bins) noexcept nogil:
    """node's split context, the features to search (into features; returns
    how many) and under extra_trees their thresholds (random_bins, else
    NULL). node's entries are all it writes, with s, so two nodes may be
    searched at once with a Search each."""
    cdef Py_ssize_t n_features = g.n_features
    features[0] = g.features
    random_bins[0] = NULL
    if g.n_groups > 0 and node > 0:
        n_features = allowed_features(g, node, s)
        features[0] = s.allowed
    if g.bynode_fraction < 1.0:
        n_features = draw_node_features(g, node, features[0], n_features, s)
        features[0] = s.node_features
    if g.extra_trees:
        draw_random_bins(g, node, s)
        random_bins[0] = s.random_bins
    cdef ValueBounds bounds = node_bounds(g, node)
    dense_context(context, g.sums + node * g.width, s.shrunk_parent, g.d, g.k,
                  g.hess_constant, g.lambda_l2, g.lambda_l1, g.min_samples_leaf,
                  g.min_child_weight, g.monotone, &bounds)
    if g.noise_scale > 0.0:
        context.noise_scale = g.noise_scale
        context.noise_key = noise_key_of(g.tree_seed, node)
        context.least_gain = max(g.min_gain, 0.0) * g.d
        context.noiseless_gain = s.noiseless_gain
    if g.categorical != NULL:
        context.categorical = g.categorical
        context.rules = g.category_rules
        context.category_order = s.category_order
        context.order_stride = g.n_hist_bins
    return n_features


cdef void keep_split(Grow* g, int node, const Search* s, const int* features,
                     Py_ssize_t n_features) noexcept nogil:
    """node's best split of those its search found (gain, feature, bin,
    missing side, left sums), kept when its gain is positive and its gain
    per output above min_gain."""
    cdef HIST_t* feature_hist
    cdef HIST_t* left_sums = g.left_sums + node * g.width
    cdef Py_ssize_t best = best_feature_position(features, n_features, s.split_gain), j
    cdef int f
    cdef double gain
    if best < 0:
        return
    f = features[best]
    gain = s.noiseless_gain[f] if g.noise_scale > 0.0 else s.split_gain[f]
    if gain <= 0 or gain / g.d <= g.min_gain:
        return
    g.gain[node] = gain
    g.feature[node] = f
    g.bin[node] = s.split_bin[f]
    g.missing_left[node] = s.split_missing_left[f]
    feature_hist = histogram_of(g, node) + f * g.n_hist_bins * g.width
    if g.categorical != NULL and g.categorical[f]:
        set_sums(g, node, s.category_order + f * g.n_hist_bins, feature_hist, left_sums)
    else:
        sum_rows(feature_hist, g.bin[node] + 1, g.width, left_sums)
    if g.missing_left[node]:
        for j in range(g.width):
            left_sums[j] += feature_hist[(g.n_hist_bins - 1) * g.width + j]


cdef void find_split(Grow* g, int node, Search* s, int n_threads) noexcept nogil:
    """node's best split, from the histogram it holds."""
    cdef SplitContext context
    cdef const int* features
    cdef const int* random_bins
    cdef Py_ssize_t n_features = prepare_search(g, node, s, &context, &features, &random_bins)
    search_features(&context, histogram_of(g, node), g.n_hist_bins, features, n_features,
                    g.n_bins_non_missing, s.split_gain, s.split_bin, s.split_missing_left,
                    n_threads, random_bins)
    keep_split(g, node, s, features, n_features)


cdef void set_sums(Grow* g, int node, const int* order, const HIST_t* feature_hist,
                   HIST_t* left_sums) noexcept nogil:
    """A categorical split's set, the bins order[:bin + 1] of its node's order
    of the categories, as node's flags (the missing bin's from its side),
    and the set's sums into left_sums, adding its bins in ascending order
    as the Python loop does."""
    cdef unsigned char* flags = g.left_flags + node * g.n_set_flags
    cdef Py_ssize_t b, j
    for b in range(g.n_set_flags):
        flags[b] = 0
    for b in range(g.bin[node] + 1):
        flags[order[b]] = 1
    for j in range(g.width):
        left_sums[j] = 0.0
    for b in range(min(g.n_hist_bins, g.n_set_flags) - 1):
        if flags[b]:
            for j in range(g.width):
                left_sums[j] += feature_hist[b * g.width + j]
    flags[flag_index(g.missing_bin, g.n_set_flags)] = g.missing_left[node]


cdef inline ValueBounds node_bounds(const Grow* g, int node) noexcept nogil:
    """What bounds the values of node's children in its search (its own
    bounds, and under path_smooth its values as their anchor); unread
    without monotone."""
    cdef ValueBounds bounds
    bounds.lower = g.lower + node * g.d if g.monotone != NULL else NULL
    bounds.upper = g.upper + node * g.d if g.monotone != NULL else NULL
    bounds.anchor = g.value + node * g.d if g.path_smooth > 0.0 else NULL
    bounds.path_smooth = g.path_smooth
    bounds.max_output = g.max_output
    return bounds


cdef void bound_children(Grow* g, int node) noexcept nogil:
    """The children's bounds: their parent's, and for a split on a
    constrained feature, cut at the midpoint of the two children's values
    (per output), as grower.TreeGrower._bound_children. Under path_smooth
    the children's values are kept: their own children's anchors."""
    cdef int left = g.left[node], right = g.right[node]
    cdef const signed char* direction = g.monotone + g.feature[node] * g.d
    cdef const double* lower = g.lower + node * g.d
    cdef const double* upper = g.upper + node * g.d
    cdef ValueBounds bounds = node_bounds(g, node)
    cdef double* left_values = g.left_values
    cdef double* right_values = g.right_values
    cdef Py_ssize_t j
    cdef bint constrained = False
    cdef double middle
    for j in range(g.d):
        g.lower[left * g.d + j] = g.lower[right * g.d + j] = lower[j]
        g.upper[left * g.d + j] = g.upper[right * g.d + j] = upper[j]
        constrained = constrained or direction[j] != 0
    if g.path_smooth > 0.0:
        left_values, right_values = g.value + left * g.d, g.value + right * g.d
    elif not constrained:
        return
    clipped_leaf_values(g.sums + left * g.width, g.d, g.k, g.hess_constant, g.lambda_l2,
                        g.lambda_l1, &bounds, g.searches[0].shrunk_parent, left_values)
    clipped_leaf_values(g.sums + right * g.width, g.d, g.k, g.hess_constant, g.lambda_l2,
                        g.lambda_l1, &bounds, g.searches[0].shrunk_parent, right_values)
    for j in range(g.d if constrained else 0):
        middle = 0.5 * (left_values[j] + right_values[j])
        if direction[j] > 0:
            g.upper[left * g.d + j] = min(upper[j], middle)
            g.lower[right * g.d + j] = max(lower[j], middle)
        elif direction[j] < 0:
            g.lower[left * g.d + j] = max(lower[j], middle)
            g.upper[right * g.d + j] = min(upper[j], middle)


cdef void split(Grow* g, int node) noexcept nogil:
    """Partitions node's rows and makes its two children."""
    cdef const unsigned char* goes_left = g.threshold_flags
    cdef Py_ssize_t count = g.stop[node] - g.start[node], n_left, j
    cdef Py_ssize_t column = g.feature[node] * g.row_stride
    cdef Py_ssize_t n_flags = g.n_flags
    cdef int left, right
    if g.categorical != NULL and g.categorical[g.feature[node]]:
        goes_left = g.left_flags + node * g.n_set_flags
        n_flags = g.n_set_flags
    else:
        threshold_sides(g.threshold_flags, g.n_flags, g.bin[node], g.missing_left[node],
                        g.missing_bin)
    n_left = partition_rows(g.rows + g.start[node], count,
                            bins_after(g.X_binned, g.wide_bins, column), g.wide_bins,
                            g.row_stride, goes_left, n_flags, g.left_buffer, g.right_buffer,
                            threads_for(g, count))
    left = new_node(g, g.start[node], g.start[node] + n_left, g.depth[node] + 1)
    right = new_node(g, g.start[node] + n_left, g.stop[node], g.depth[node] + 1)
    g.left[node] = left
    g.right[node] = right
    g.parent[left] = g.parent[right] = node
    for j in range(g.width):
        g.sums[left * g.width + j] = g.left_sums[node * g.width + j]
        g.sums[right * g.width + j] = (g.sums[node * g.width + j]
                                       - g.left_sums[node * g.width + j])
    if g.monotone != NULL:
        bound_children(g, node)


cdef void build_all(Grow* g, const int* nodes, Py_ssize_t n) noexcept nogil:
    """Several nodes' histograms (their sums known): one parallel pass over
    every (node, feature) pair, so that a level's small nodes keep every
    thread busy. As grower.TreeGrower._build_all."""
    cdef Py_ssize_t m, count, offset = 0
    cdef int node
    make_room(g, n)
    g.widest_pass = max(g.widest_pass, n)
    if n == 1:
        build(g, nodes[0], True)
        return
    for m in range(n):
        node = nodes[m]
        if not take_slot(g, node):
            return
        count = g.stop[node] - g.start[node]
        gather_rows(g.grad, g.hess, g.d, g.k, g.rows + g.start[node], count, g.row_stride,
                    g.ordered + offset * g.width, threads_for(g, count * g.width))
        g.node_rows[m] = g.rows + g.start[node]
        g.node_counts[m] = count
        g.node_ordered[m] = g.ordered + offset * g.width
        g.node_totals[m] = g.sums + node * g.width
        g.node_hists[m] = histogram_of(g, node)
        offset += count
    build_nodes_histograms(g.X_binned, g.wide_bins, g.row_stride, g.node_rows, g.node_counts,
                           g.node_ordered, g.node_totals, g.node_hists, n,
                           g.column_features, g.n_column_features, NULL, g.skipped_bins,
                           g.n_bins_non_missing, g.n_hist_bins, g.width,
                           threads_for(g, build_work(g, offset, n)))
    for m in range(n):
        build_by_row(g, nodes[m], g.node_ordered[m])


cdef inline void smaller_larger(const Grow* g, int parent, int* small, int* large) noexcept nogil:
    cdef int left = g.left[parent], right = g.right[parent]
    if g.stop[left] - g.start[left] <= g.stop[right] - g.start[right]:
        small[0], large[0] = left, right
    else:
        small[0], large[0] = right, left


cdef void prepare_children(Grow* g, const int* parents, Py_ssize_t n) noexcept nogil:
    """The histograms of the children that may split (the smaller built, the
    larger its parent's minus it while the parent holds one; all built in
    one pass), then their best splits. As grower.TreeGrower._prepare_children."""
    cdef Py_ssize_t m, n_build = 0, n_subtracted = 0
    cdef int parent, left, right, small, large, child
    cdef bint left_splits, right_splits
    if n == 1 and g.slot[parents[0]] >= 0:
        smaller_larger(g, parents[0], &small, &large)
        if can_split(g, large):
            build_and_search_children(g, parents[0], small, large)
            release_unsplit(g, small)
            release_unsplit(g, large)
            return
    for m in range(n):
        parent = parents[m]
        left, right = g.left[parent], g.right[parent]
        left_splits, right_splits = can_split(g, left), can_split(g, right)
        if not left_splits and not right_splits:
            release(g, parent)
            continue
        smaller_larger(g, parent, &small, &large)
        if g.slot[parent] >= 0 and can_split(g, large):
            g.to_build[n_build] = small
            n_build += 1
            g.subtracted[n_subtracted] = parent
            n_subtracted += 1
        else:
            release(g, parent)
            if left_splits:
                g.to_build[n_build] = left
                n_build += 1
            if right_splits:
                g.to_build[n_build] = right
                n_build += 1
    if n_build > 0:
        build_all(g, g.to_build, n_build)
    if g.out_of_slots:
        return
    for m in range(n_subtracted):
        parent = g.subtracted[m]
        smaller_larger(g, parent, &small, &large)
        g.slot[large] = g.slot[parent]
        g.slot[parent] = -1
        subtract_feature_histograms(histogram_of(g, large), histogram_of(g, small),
                                    g.features, g.n_features, g.n_bins_non_missing,
                                    g.n_hist_bins, g.width, histogram_of(g, large),
                                    threads_for(g, g.feature_rows * g.width))
    for m in range(n):
        left, right = g.left[parents[m]], g.right[parents[m]]
        search_children(g, left, right)
        release_unsplit(g, left)
        release_unsplit(g, right)


cdef inline void release_unsplit(Grow* g, int node) noexcept nogil:
    """Frees the histogram of a node that found no split."""
    if g.gain[node] <= 0:
        release(g, node)


cdef const unsigned char* searched_flags(const Grow* g, Search* s, const int* features,
                                        Py_ssize_t n_features) noexcept nogil:
    """A node's searched features (those colsample_bynode and interaction
    constraints leave it) as flags in s, or NULL when it searches all the
    tree's features."""
    cdef Py_ssize_t i
    if features == g.features:
        return NULL
    for i in range(g.n_features):
        s.searched[g.features[i]] = 0
    for i in range(n_features):
        s.searched[features[i]] = 1
    return s.searched


cdef void build_and_search_children(Grow* g, int parent, int small,
                                    int large) noexcept nogil:
    """parent's children (small and large, by rows) one feature at a time:
    the smaller's histogram built from its rows, the larger's as the parent's minus it (the larger takes
    over the parent's slot), then the searches of those that may split (each
    on the features its draws and constraints leave it), a feature's steps
    on one thread while its bins are in that thread's cache
    (LightGBM subtracts and searches a feature so). One parallel region a
    split, where building, subtracting and searching each child took one
    apiece, each ending in a barrier. The same splits as prepare_children's
    steps one after the other."""
    cdef int node
    cdef Py_ssize_t i, n_searched = 0
    cdef ChildAndSibling histograms
    cdef SplitContext contexts[2]
    cdef const SplitContext* context_of[2]
    cdef const HIST_t* histogram_of_node[2]
    cdef double* gains[2]
    cdef int* bins[2]
    cdef unsigned char* missing_left[2]
    cdef const int* random_bins[2]
    cdef const unsigned char* searched_features[2]
    cdef const int* features[2]
    cdef Py_ssize_t n_features[2]
    cdef int searched[2]
    # the caller's condition can_split(large) makes n_searched at least 1,
    # which search_nodes needs (its scratch follows the first context)
    g.widest_pass = max(g.widest_pass, 1)
    gather(g, small)
    if not take_slot(g, small):
        return
    g.slot[large] = g.slot[parent]
    g.slot[parent] = -1
    histograms.by_row = g.wanted if g.indptr != NULL else NULL
    build_by_row(g, small, g.ordered)
    for i in range(2):
        node = small if i == 0 else large
        if can_split(g, node):
            searched[n_searched] = node
            n_features[n_searched] = prepare_search(g, node, &g.searches[n_searched],
                                                    &contexts[n_searched],
                                                    &features[n_searched],
                                                    &random_bins[n_searched])
            searched_features[n_searched] = searched_flags(
                g, &g.searches[n_searched], features[n_searched], n_features[n_searched])
            context_of[n_searched] = &contexts[n_searched]
            histogram_of_node[n_searched] = histogram_of(g, node)
            gains[n_searched] = g.searches[n_searched].split_gain
            bins[n_searched] = g.searches[n_searched].split_bin
            missing_left[n_searched] = g.searches[n_searched].split_missing_left
            n_searched += 1
    histograms.X_binned = g.X_binned
    histograms.wide_bins = g.wide_bins
    histograms.row_stride = g.row_stride
    histograms.rows = g.rows + g.start[small]
    histograms.n_rows = g.stop[small] - g.start[small]
    histograms.ordered = g.ordered
    histograms.skipped_bins = g.skipped_bins
    histograms.value_bins = g.n_bins_non_missing
    histograms.totals = g.sums + small * g.width
    histograms.child = histogram_of(g, small)
    histograms.sibling = histogram_of(g, large)
    histograms.n_bins = g.n_hist_bins
    histograms.width = g.width
    search_nodes(context_of, histogram_of_node, n_searched, g.n_hist_bins, g.features,
                 g.n_features, searched_features, g.n_bins_non_missing, gains, bins,
                 missing_left, random_bins,
                 threads_for(g, build_work(g, histograms.n_rows, 1)
                             + (1 + n_searched) * search_work(g)),
                 build_child_and_sibling, &histograms)
    for i in range(n_searched):
        keep_split(g, searched[i], &g.searches[i], features[i], n_features[i])


cdef void search_children(Grow* g, int left, int right) noexcept nogil:
    """The best splits of the children that hold a histogram and may split;
    when both do and each search is too small for all the threads, the two
    run at once, a thread each (a one-output model's searches: 7 features x
    256 bins)."""
    cdef int i, child
    cdef bint both = (g.slot[left] >= 0 and can_split(g, left)
                      and g.slot[right] >= 0 and can_split(g, right))
    if both and g.n_threads > 1 and threads_for(g, search_work(g)) == 1:
        for i in prange(2, schedule="static", num_threads=2):
            find_split(g, left if i == 0 else right, &g.searches[i], 1)
        return
    for i in range(2):
        child = left if i == 0 else right
        if g.slot[child] >= 0 and can_split(g, child):
            find_split(g, child, &g.searches[0], threads_for(g, search_work(g)))


cdef void grow(Grow* g, Py_ssize_t n_rows) noexcept nogil:
    cdef int root = new_node(g, 0, n_rows, 0)
    cdef int child
    cdef Py_ssize_t order = 0, n_leaves = 1, n_batch, m
    cdef int i
    cdef ValueBounds unsmoothed
    if can_split(g, root):
        build(g, root, False)
    else:
        gather(g, root)
        sum_rows(g.ordered, n_rows, g.width, g.sums)
    if g.path_smooth > 0.0:
        # the root's values are not smoothed (it has no parent): LightGBM's
        unsmoothed = node_bounds(g, root)
        unsmoothed.path_smooth = 0.0
        clipped_leaf_values(g.sums, g.d, g.k, g.hess_constant, g.lambda_l2, g.lambda_l1,
                            &unsmoothed, g.searches[0].shrunk_parent, g.value)
    if g.slot[root] >= 0:
        find_split(g, root, &g.searches[0], threads_for(g, search_work(g)))
    if g.gain[root] > 0:
        push(g, root, order)
    while g.heap_size > 0 and n_leaves < g.max_leaves and not g.out_of_slots:
        g.batch[0] = pop(g)
        n_batch = 1
        # depth-wise: the level's next nodes join, as many as the cache allows
        while (n_batch < g.level_batch and g.heap_size > 0
               and g.depth[g.heap[0].node] == g.depth[g.batch[0]]
               and n_leaves + n_batch < g.max_leaves):
            g.batch[n_batch] = pop(g)
            n_batch += 1
        for m in range(n_batch):
            split(g, g.batch[m])
        n_leaves += n_batch
        if n_leaves < g.max_leaves:
            prepare_children(g, g.batch, n_batch)
        else:
            for m in range(n_batch):
                release(g, g.batch[m])
        for m in range(n_batch):
            for i in range(2):
                child = g.left[g.batch[m]] if i == 0 else g.right[g.batch[m]]
                if g.gain[child] > 0:
                    order += 1
                    push(g, child, order)


def node_bound(Py_ssize_t n_rows, Py_ssize_t max_leaves, double min_samples_leaf,
               Py_ssize_t max_depth):
    """The most nodes a tree can have: 2 L - 1 for L leaves, at most
    max_leaves, n_rows / min_samples_leaf (every leaf keeps that many rows
    but the root's) and 2^max_depth (max_depth <= 0: none)."""
    cdef Py_ssize_t leaves = max(1, min(max_leaves, <Py_ssize_t>(n_rows
                                                                  / max(min_samples_leaf, 1.0))))
    if 0 < max_depth < 62:
        leaves = min(leaves, (<Py_ssize_t>1) << max_depth)
    return 2 * leaves - 1


cdef void breadth_first(const Grow* g, int* order) noexcept nogil:
    """order: the nodes breadth-first from the root (children after parents,
    the left child first), as the model numbers them."""
    cdef Py_ssize_t head = 0, tail = 1
    cdef int node
    order[0] = 0
    while head < tail:
        node = order[head]
        head += 1
        if g.left[node] >= 0:
            order[tail] = g.left[node]
            order[tail + 1] = g.right[node]
            tail += 2


# The row_wise entries checked last: a run passes the same immutable arrays
# for every tree, and checking their entries again (often millions) took 8%
# of a tree's time (benchmarks/README.md, "Fewer barriers a split").
_checked_entries = ()


def immutable_copy(array):
    """A copy of array no one can change (a numpy view of bytes, which numpy
    will not make writeable or resize): row_wise arrays that grow_best_first
    checks once a run."""
    return np.frombuffer(array.tobytes(), dtype=array.dtype)


def _immutable(array):
    """Whether array is one of immutable_copy's."""
    return (type(array) is np.ndarray and type(array.base) is bytes
            and not array.flags.writeable)


def _checked_before(row_wise, Py_ssize_t n_features, Py_ssize_t n_bins):
    """Whether row_wise's indptr and entries are the immutable arrays last
    checked against as many features and bins."""
    checked = _checked_entries
    if len(checked) != 4 or (n_features, n_bins) != checked[2:]:
        return False
    return all(reference() is array and _immutable(array)
               for reference, array in zip(checked[:2], row_wise[:2]))


def _remember_checked(row_wise, Py_ssize_t n_features, Py_ssize_t n_bins):
    """Remembers row_wise's indptr and entries as checked, when immutable."""
    global _checked_entries
    if all(_immutable(array) for array in row_wise[:2]):
        _checked_entries = (*(weakref.ref(array) for array in row_wise[:2]), n_features, n_bins)


def _column_features_are_the_rest(const int[::1] features, const int[::1] column_features,
                                  const unsigned char[::1] by_row):
    """Whether column_features are the features without a by_row flag (all
    when by_row is None), in order: a split's histograms build every other
    feature column by column (build_and_search_children)."""
    cdef Py_ssize_t i, m = 0
    for i in range(features.shape[0]):
        if by_row is not None and 0 <= features[i] < by_row.shape[0] and by_row[features[i]]:
            continue
        if m >= column_features.shape[0] or column_features[m] != features[i]:
            return False
        m += 1
    return m == column_features.shape[0]


def grow_best_first(const X_BINNED_t[:, ::1] X_binned,
                    const G_H_t[:, ::1] grad,
                    const G_H_t[:, ::1] hess,
                    double hess_constant,
                    ROW_t[::1] rows,
                    Py_ssize_t n_rows,
                    ROW_t[::1] left_buffer,
                    ROW_t[::1] right_buffer,
                    G_H_t[::1] ordered,
                    HIST_t[:, :, :, ::1] histograms,
                    Py_ssize_t capacity,
                    const int[::1] features,
                    const int[::1] column_features,
                    const int[::1] n_bins_non_missing,
                    int missing_bin,
                    const int[::1] skipped_bins,
                    row_wise,
                    double lambda_l2,
                    double lambda_l1,
                    double min_samples_leaf,
                    double min_child_weight,
                    double min_gain,
                    Py_ssize_t max_depth,
                    Py_ssize_t max_leaves,
                    int n_threads,
                    nodes,
                    uint64_t tree_seed=0,
                    double colsample_bynode=1.0,
                    bint extra_trees=False,
                    double noise_scale=0.0,
                    const signed char[:, ::1] monotone=None,
                    double root_bound=INFINITY,
                    double path_smooth=0.0,
                    const int[::1] group_indptr=None,
                    const int[::1] group_features=None,
                    bint depthwise=False,
                    Py_ssize_t level_batch=1,
                    const unsigned char[::1] categorical=None,
                    double cat_smooth=10.0,
                    double cat_l2=0.0,
                    double min_data_per_group=0.0,
                    Py_ssize_t max_cat_threshold=256,
                    Py_ssize_t max_cat_to_onehot=0):
    """Grows one tree best-first on the first n_rows of rows (reordered by
    leaf, as the Python grower leaves them) and returns its number of nodes.

    The arguments are the Python grower's: X_binned (features, all rows),
    grad (rows, d) and hess (rows, k) float32 with k in {0, 1, d}, the
    partition buffers, ordered (at least n_rows x (d + k + 1) float32),
    histograms (n_slots, features, histogram bins, d + k + 1) with capacity
    the cache's bound (at least 2), skipped_bins (None: none), row_wise
    (None, or the RowEntries fields indptr, slot and n_histogram_bins, the
    features wanted, up to _histogram.ROW_CHUNKS - 1 scratch histograms
    (none: one chunk of rows) and the mean entries per row), max_depth (<= 0: none);
    the features ascending.
    nodes (grower.GrownNodes) holds the arrays the nodes are written to, one
    entry per node in the order they were made, and `breadth_first`, their
    order in the model; its peak_histograms is set to the most histograms
    that were alive at once, its widest_pass to the most nodes whose
    histograms one pass built. colsample_bynode < 1 and extra_trees draw each
    node's features and thresholds from tree_seed (node_draws), and
    noise_scale > 0 (random_strength) its split noise (node_noise_key). monotone
    (features, outputs: +1, -1, 0) bounds the nodes' values (the root's to
    +-root_bound) into nodes.lower and nodes.upper (as many rows as nodes,
    one column per output), as the Python loop does; path_smooth > 0 (with
    monotone) pulls each node's values toward its parent's (after cutting
    them to +-root_bound; see _split.ValueBounds) and writes them to
    nodes.value (the root's unsmoothed). Interaction
    constraints: group m holds the features group_features[group_indptr[m]:
    group_indptr[m + 1]]. depthwise splits a level before the next, up to
    level_batch nodes of it at once. categorical (a flag per feature) splits
    the flagged features by sets, as find_best_splits does under the rules
    cat_smooth to max_cat_to_onehot, and a split on one sends left the bins
    set in its node's row of nodes.left_flags (as many rows as nodes,
    flags each, the missing bin's included: 256 for 8-bit bins, for 16-bit at
    least the categorical features' most bins + 1 and at most the histogram
    bins)."""
    cdef Grow g
    cdef bint searches_ready
    cdef Py_ssize_t width = grad.shape[1] + hess.shape[1] + 1
    cdef Py_ssize_t max_nodes = nodes.start.shape[0], needed, words, group
    cdef Py_ssize_t n_slots = histograms.shape[0]
    cdef Py_ssize_t n_all_features = X_binned.shape[0]
    cdef Py_ssize_t i
    cdef Py_ssize_t[::1] start = nodes.start, stop = nodes.stop
    cdef int[::1] depth = nodes.depth, feature = nodes.feature, bin_ = nodes.bin
    cdef int[::1] left = nodes.left, right = nodes.right, order = nodes.breadth_first
    cdef HIST_t[:, ::1] sums = nodes.sums, left_sums = nodes.left_sums
    cdef double[::1] gain = nodes.gain
    cdef unsigned char[::1] missing_left = nodes.missing_left
    cdef const int64_t[::1] indptr
    cdef const uint32_t[::1] entry_slot
    cdef const unsigned char[::1] wanted
    cdef HIST_t[:, :, :, ::1] chunk_hists
    cdef Py_ssize_t n_slots_of_features = n_all_features * histograms.shape[2]
    if not 0 <= n_rows <= rows.shape[0] or X_binned.shape[1] != grad.shape[0] \
            or hess.shape[0] != grad.shape[0] or hess.shape[1] not in (0, 1, grad.shape[1]):
        raise ValueError("rows, X_binned, grad and hess disagree on the rows or outputs")
    if left_buffer.shape[0] < n_rows or right_buffer.shape[0] < n_rows \
            or ordered.shape[0] < n_rows * width:
        raise ValueError(f"the partition buffers and ordered must hold {n_rows} rows")
    if histograms.shape[1] != n_all_features or histograms.shape[3] != width \
            or n_slots < 2 or capacity < 2:
        raise ValueError(f"histograms must be (>= 2 slots, {n_all_features}, bins, {width}) "
                         "and capacity >= 2")
    needed = node_bound(n_rows, max_leaves, min_samples_leaf, max_depth)
    if max_leaves < 2 or min_samples_leaf < 1 or sums.shape[1] != width \
            or left_sums.shape[1] != width or min(
                len(getattr(nodes, name)) for name in (
                    "start", "stop", "depth", "feature", "bin", "left", "right",
                    "breadth_first", "sums", "left_sums", "gain", "missing_left")) < needed:
        raise ValueError(f"nodes must hold {needed} nodes of {width} sums (max_leaves >= 2, "
                         "min_samples_leaf >= 1)")
    if n_bins_non_missing.shape[0] != n_all_features \
            or not is_bin_of(missing_bin, X_BINNED_t is uint16_t) \
            or (skipped_bins is not None and skipped_bins.shape[0] != n_all_features):
        raise ValueError("n_bins_non_missing and skipped_bins need one entry per feature, "
                         "and missing_bin must be a bin of X_binned's dtype")
    for i in range(features.shape[0]):
        if not 0 <= features[i] < n_all_features \
                or not 0 <= n_bins_non_missing[features[i]] < histograms.shape[2] \
                or (i > 0 and features[i] <= features[i - 1]):
            raise ValueError(f"feature {features[i]} or its bins are outside the histograms, "
                             "or the features are not ascending")
    for i in range(column_features.shape[0]):
        if not 0 <= column_features[i] < n_all_features:
            raise ValueError(f"column feature {column_features[i]} is outside the histograms")
    for i in range(n_all_features if skipped_bins is not None else 0):
        if skipped_bins[i] >= histograms.shape[2]:
            raise ValueError(f"skipped_bins[{i}] = {skipped_bins[i]} is beyond the "
                             f"{histograms.shape[2]} bins of a histogram")
    g.X_binned = &X_binned[0, 0]
    g.wide_bins = X_BINNED_t is uint16_t
    g.row_stride = X_binned.shape[1]
    g.grad = &grad[0, 0]
    g.hess = &hess[0, 0] if hess.shape[1] > 0 else NULL
    g.d = grad.shape[1]
    g.k = hess.shape[1]
    g.width = width
    g.hess_constant = hess_constant
    g.rows = &rows[0]
    g.left_buffer = &left_buffer[0]
    g.right_buffer = &right_buffer[0]
    g.ordered = &ordered[0]
    g.features = &features[0] if features.shape[0] > 0 else NULL
    g.n_features = features.shape[0]
    g.column_features = &column_features[0] if column_features.shape[0] > 0 else NULL
    g.n_column_features = column_features.shape[0]
    g.n_bins_non_missing = &n_bins_non_missing[0]
    g.missing_bin = missing_bin
    g.n_flags = bin_flags(missing_bin, histograms.shape[2])
    g.skipped_bins = &skipped_bins[0] if skipped_bins is not None else NULL
    g.indptr = NULL
    if row_wise is not None:
        row_wise = tuple(row_wise)  # read once: the arrays checked are the arrays used
        indptr, entry_slot, slot_bins, wanted, chunk_hists = row_wise[:5]
        if slot_bins != histograms.shape[2]:
            raise ValueError(f"row_wise's entries are slots of histograms {slot_bins} bins "
                             f"tall, the histograms are {histograms.shape[2]}")
        if indptr.shape[0] != X_binned.shape[1] + 1 or wanted.shape[0] != n_all_features \
                or g.skipped_bins == NULL or indptr[0] != 0 \
                or entry_slot.shape[0] != indptr[indptr.shape[0] - 1] \
                or chunk_hists.shape[0] > ROW_CHUNKS - 1 \
                or any(chunk_hists.shape[i] != histograms.shape[i] for i in range(1, 4)):
            raise ValueError("row_wise needs an indptr entry per row plus one (from 0 to its "
                             "entries), a wanted flag per feature, at most ROW_CHUNKS - 1 "
                             "histograms of the chunks, and skipped_bins")
        if not _checked_before(row_wise, n_all_features, histograms.shape[2]):
            for i in range(1, indptr.shape[0]):
                if indptr[i] < indptr[i - 1]:
                    raise ValueError("row_wise's indptr must not decrease")
            for i in range(entry_slot.shape[0]):
                if entry_slot[i] >= n_slots_of_features:
                    raise ValueError(f"row_wise entry {i} is outside the histograms")
            _remember_checked(row_wise, n_all_features, histograms.shape[2])
        for i in range(n_all_features):
            if wanted[i] and not 0 <= skipped_bins[i] < histograms.shape[2]:
                raise ValueError(f"feature {i} is built by row but has no skipped bin")
        g.indptr = &indptr[0]
        g.entry_slot = &entry_slot[0] if entry_slot.shape[0] > 0 else NULL
        g.wanted = &wanted[0]
        g.chunk_hists = &chunk_hists[0, 0, 0, 0] if chunk_hists.shape[0] else NULL
        g.n_chunk_hists = chunk_hists.shape[0]
        g.n_entries = entry_slot.shape[0]
        g.mean_entries_per_row = row_wise[5]
    if not _column_features_are_the_rest(features, column_features,
                                         None if row_wise is None else row_wise[3]):
        raise ValueError("column_features must be the features not built by row (all of "
                         "them without row_wise), in the same order")
    g.lambda_l2 = lambda_l2
    g.lambda_l1 = lambda_l1
    g.min_samples_leaf = min_samples_leaf
    g.min_child_weight = min_child_weight
    g.min_gain = min_gain
    g.max_depth = max_depth if max_depth > 0 else max_nodes
    g.max_leaves = max_leaves
    g.n_threads = n_threads
    g.histograms = &histograms[0, 0, 0, 0]
    g.n_hist_bins = histograms.shape[2]
    g.column_rows = g.feature_rows = 0.0
    for i in range(column_features.shape[0]):
        g.column_rows += min(n_bins_non_missing[column_features[i]] + 1, g.n_hist_bins)
    for i in range(features.shape[0]):
        g.feature_rows += min(n_bins_non_missing[features[i]] + 1, g.n_hist_bins)
    g.hist_size = histograms.shape[1] * histograms.shape[2] * width
    g.capacity = capacity
    g.n_free = n_slots
    g.n_alive = g.peak_alive = g.widest_pass = 0
    g.n_nodes = 0
    g.start, g.stop, g.depth = &start[0], &stop[0], &depth[0]
    g.sums, g.left_sums = &sums[0, 0], &left_sums[0, 0]
    g.gain, g.feature, g.bin = &gain[0], &feature[0], &bin_[0]
    g.missing_left, g.left, g.right = &missing_left[0], &left[0], &right[0]
    g.heap_size = 0
    g.out_of_slots = False
    if not 0.0 < colsample_bynode <= 1.0:
        raise ValueError(f"colsample_bynode must be in (0, 1], got {colsample_bynode}")
    if not 0.0 <= noise_scale < INFINITY:
        raise ValueError(f"noise_scale must be finite and >= 0, got {noise_scale}")
    g.tree_seed = tree_seed
    g.bynode_fraction = colsample_bynode
    g.extra_trees = extra_trees
    g.noise_scale = noise_scale
    g.n_all_features = n_all_features
    cdef double[:, ::1] lower, upper, value
    g.monotone = NULL
    g.path_smooth, g.max_output, g.value = 0.0, root_bound, NULL
    if path_smooth != 0.0:
        value = nodes.value
        if monotone is None or not path_smooth > 0.0 or value.shape[0] < needed \
                or value.shape[1] != g.d:
            raise ValueError(f"path_smooth must be >= 0, and > 0 needs monotone and the "
                             f"nodes' values ({needed}, {g.d})")
        g.path_smooth, g.value = path_smooth, &value[0, 0]
    if monotone is not None:
        lower, upper = nodes.lower, nodes.upper
        if monotone.shape[0] != n_all_features or monotone.shape[1] != g.d \
                or lower.shape[0] < needed or upper.shape[0] < needed \
                or lower.shape[1] != g.d or upper.shape[1] != g.d:
            raise ValueError(f"monotone must be ({n_all_features}, {g.d}) and the nodes' "
                             f"bounds ({needed}, {g.d})")
        if not root_bound > 0:
            raise ValueError(f"root_bound must be > 0, got {root_bound}")
        for i in range(n_all_features * g.d):
            if not -1 <= (&monotone[0, 0])[i] <= 1:
                raise ValueError("monotone holds -1, 0 or +1 per feature and output")
        g.monotone = &monotone[0, 0]
        g.lower, g.upper = &lower[0, 0], &upper[0, 0]
        for i in range(g.d):
            g.lower[i] = -root_bound
            g.upper[i] = root_bound
    cdef unsigned char[:, ::1] left_flags
    cdef Py_ssize_t order_size = 0, set_bins = 1
    g.categorical = NULL
    if categorical is not None:
        left_flags = nodes.left_flags
        if categorical.shape[0] != n_all_features:
            raise ValueError(f"categorical needs a flag per feature ({n_all_features})")
        for i in range(n_all_features):
            if categorical[i]:
                set_bins = max(set_bins, n_bins_non_missing[i] + 1)
        g.n_set_flags = left_flags.shape[1]
        if left_flags.shape[0] < needed or not (
                g.n_set_flags == 256 if X_BINNED_t is uint8_t
                else set_bins <= g.n_set_flags <= histograms.shape[2]):
            raise ValueError(f"the nodes' left_flags must be ({needed}, 256) for 8-bit bins, "
                             f"for 16-bit ({needed}, {set_bins} to {histograms.shape[2]}): "
                             f"the categorical features' most bins + 1 to the histograms'")
        g.category_rules = category_rules(cat_smooth, cat_l2, min_data_per_group,
                                          max_cat_threshold, max_cat_to_onehot)
        g.categorical = &categorical[0]
        g.left_flags = &left_flags[0, 0]
        order_size = n_all_features * g.n_hist_bins
    # every check before the first malloc: the buffers are freed only from the try below
    g.n_groups = 0
    if group_indptr is not None:
        g.n_groups = group_indptr.shape[0] - 1
        if g.n_groups < 1 or group_features is None or group_indptr[0] != 0 \
                or group_indptr[g.n_groups] != group_features.shape[0]:
            raise ValueError("group_indptr must run from 0 to the length of group_features")
        for i in range(1, g.n_groups + 1):
            if group_indptr[i] < group_indptr[i - 1]:
                raise ValueError("group_indptr must not decrease")
        for i in range(group_features.shape[0]):
            if not 0 <= group_features[i] < n_all_features:
                raise ValueError(f"interaction group feature {group_features[i]} is not one "
                                 f"of the {n_all_features} features")
    if level_batch < 1:
        raise ValueError(f"level_batch must be >= 1, got {level_batch}")
    g.free_slots = <int*> malloc(n_slots * sizeof(int))
    g.slot = <int*> malloc(max_nodes * sizeof(int))
    g.heap = <Waiting*> malloc(max_nodes * sizeof(Waiting))
    searches_ready = (new_search(&g.searches[0], n_all_features, g.n_features, width, order_size)
                      & new_search(&g.searches[1], n_all_features, g.n_features, width,
                                   order_size))
    words = bit_words(n_all_features)
    g.group_bits = <uint64_t*> malloc(max(g.n_groups * words, 1) * sizeof(uint64_t))
    g.parent = <int*> malloc(max_nodes * sizeof(int))
    if g.group_bits != NULL:
        for i in range(g.n_groups * words):
            g.group_bits[i] = 0
        for group in range(g.n_groups):
            for i in range(group_indptr[group], group_indptr[group + 1]):
                g.group_bits[group * words + (group_features[i] >> 6)] |= \
                    (<uint64_t>1) << (group_features[i] & 63)
    if g.parent != NULL:
        g.parent[0] = -1
    g.depthwise = depthwise
    g.level_batch = min(level_batch, max_nodes)
    g.batch = <int*> malloc(g.level_batch * sizeof(int))
    g.to_build = <int*> malloc(2 * g.level_batch * sizeof(int))
    g.subtracted = <int*> malloc(g.level_batch * sizeof(int))
    g.node_rows = <ROW_t**> malloc(2 * g.level_batch * sizeof(ROW_t*))
    g.node_counts = <Py_ssize_t*> malloc(2 * g.level_batch * sizeof(Py_ssize_t))
    g.node_ordered = <G_H_t**> malloc(2 * g.level_batch * sizeof(G_H_t*))
    g.node_totals = <HIST_t**> malloc(2 * g.level_batch * sizeof(HIST_t*))
    g.node_hists = <HIST_t**> malloc(2 * g.level_batch * sizeof(HIST_t*))
    g.left_values = <double*> malloc(g.d * sizeof(double))
    g.right_values = <double*> malloc(g.d * sizeof(double))
    g.threshold_flags = <unsigned char*> malloc(g.n_flags)
    try:
        if (g.free_slots == NULL or g.slot == NULL or g.heap == NULL or not searches_ready
                or g.threshold_flags == NULL
                or g.left_values == NULL or g.right_values == NULL or g.group_bits == NULL
                or g.parent == NULL or g.batch == NULL or g.to_build == NULL
                or g.subtracted == NULL or g.node_rows == NULL or g.node_counts == NULL
                or g.node_ordered == NULL or g.node_totals == NULL or g.node_hists == NULL):
            raise MemoryError()
        for i in range(n_slots):
            g.free_slots[i] = <int>(n_slots - 1 - i)
        with nogil:
            grow(&g, n_rows)
            breadth_first(&g, &order[0])
        if g.out_of_slots:
            raise RuntimeError(f"growing a tree needed more than the {n_slots} histograms "
                               "allotted to it")
        nodes.peak_histograms = g.peak_alive
        nodes.widest_pass = g.widest_pass
        return g.n_nodes
    finally:
        free(g.free_slots)
        free(g.slot)
        free(g.heap)
        free_search(&g.searches[0])
        free_search(&g.searches[1])
        free(g.left_values)
        free(g.right_values)
        free(g.group_bits)
        free(g.parent)
        free(g.batch)
        free(g.to_build)
        free(g.subtracted)
        free(g.node_rows)
        free(g.node_counts)
        free(g.node_ordered)
        free(g.node_totals)
        free(g.node_hists)
        free(g.threshold_flags)
