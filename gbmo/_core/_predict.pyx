"""Forest traversal, in parallel over rows.

A forest is packed into flat node arrays shared by all its trees: node_left[i]
is -1 for a leaf, and node_value[i] is then the leaf's index l. Internal nodes
send a row left when its value is <= node_threshold[i] (binned: bin <=
node_bin[i]), and a missing value (NaN, or the missing bin) left iff
node_missing_left[i]. The raw-X kernels take the trees as WalkNode records
instead (see there), in an order where siblings are adjacent.

Leaf l's values are values[value_start[l]:value_start[l + 1]]. A dense leaf
(output_start[l] < 0) holds all d outputs in order; a sparse leaf holds only
the outputs listed at outputs[output_start[l]:], so adding it costs its k
values rather than d.
"""
from cython.parallel cimport prange
from libc.math cimport isnan
from libc.stdlib cimport free, malloc

from .common cimport (BIN_INDEX_t, NODE_t, ROW_t, X_BINNED_t, X_t, flag_index, in_category_set,
                      is_bin_of, uint8_t, uint16_t)
from .leaves cimport add_leaf, check_prediction_shapes, start_row
from .linear cimport LinearLeaves, X_IN_t, add_linear_part, linear_leaves_of

cdef enum:
    # Rows that walk a tree together: enough independent walks to hide each
    # step's load latency; 8 to 32 measured alike, 4 and 64 slower.
    BLOCK_ROWS = 16


cdef packed struct WalkNode:
    # A node as the raw-X walk reads it, in one 16-byte load. The right child
    # is left + 1, so the walk adds the direction to left; a leaf is its own
    # left child with an infinite threshold, which no value exceeds, so rows
    # that reached it stay. _PackedForest builds these (WALK_NODE_DTYPE). A
    # categorical split holds in threshold the offset of its set in the
    # forest's category words: the set's size in bits, then its bits.
    X_t threshold
    int feature_and_missing     # feature * 4, + 2 for a categorical split, + 1 when missing goes right
    NODE_t left


cdef struct Trees:
    # A forest as the raw-X kernels walk it (see _PackedForest.tree_arguments)
    Py_ssize_t n_trees
    const NODE_t* root
    const int* depth
    const WalkNode* nodes
    const NODE_t* leaf
    const unsigned long long* category_words  # NULL: no categorical split


cdef Trees trees_of(const NODE_t[::1] tree_roots, const int[::1] tree_depth,
                    const WalkNode[::1] walk_nodes, const NODE_t[::1] node_value,
                    const unsigned long long[::1] category_words):
    cdef Trees trees
    trees.n_trees = tree_roots.shape[0]
    trees.category_words = NULL
    if trees.n_trees:
        trees.root, trees.depth = &tree_roots[0], &tree_depth[0]
        trees.nodes, trees.leaf = &walk_nodes[0], &node_value[0]
    if category_words is not None and category_words.shape[0]:
        trees.category_words = &category_words[0]
    return trees


cdef inline bint block_has_nan(const X_IN_t* first_row, Py_ssize_t n_rows,
                              Py_ssize_t row_stride, Py_ssize_t feature_stride,
                              Py_ssize_t n_features) noexcept nogil:
    """Whether a block's rows hold a missing value (strides in bytes)."""
    cdef const char* rows = <const char*> first_row
    cdef Py_ssize_t r, f
    cdef double x
    for r in range(n_rows):
        for f in range(n_features):
            x = (<const X_IN_t*> (rows + r * row_stride + f * feature_stride))[0]
            if x != x:
                return True
    return False


cdef inline void reach_leaves(const X_IN_t* first_row, Py_ssize_t n_rows,
                              Py_ssize_t row_stride, Py_ssize_t feature_stride,
                              const Trees* trees, Py_ssize_t t, NODE_t* node,
                              bint categorical, bint nan_free) noexcept nogil:
    """node[r] = the leaf node that row r of a block reaches in tree t. Strides
    are in bytes.

    A branch per node would be mispredicted about half the time on real data,
    so the rows step without branches: the direction is arithmetic, and each
    step moves every row of the block at once so that their loads overlap. A
    tree is at most depth[t] steps deep; the walk stops early when no row
    moved, which keeps a long, thin branch of an unbalanced tree from costing
    every row its length. categorical (a constant at each call, so the
    compiler keeps the plain walk for forests without categorical splits)
    tests set membership at the nodes flagged so. nan_free (a constant too)
    says that no row of the block is missing a value: the step then leaves
    out the missing side's test, which took a quarter of the walk's time
    (1.32x faster on 31- and 63-leaf trees, 1.18x on depth-wise ones)."""
    cdef const char* rows = <const char*> first_row
    # a local rather than trees' field, which (built without strict aliasing)
    # the compiler would reload after every store to node
    cdef const WalkNode* nodes = trees.nodes
    cdef const WalkNode* at
    cdef Py_ssize_t r, step
    cdef NODE_t to
    cdef double x
    cdef bint moved
    for r in range(n_rows):
        node[r] = trees.root[t]
    for step in range(trees.depth[t]):
        moved = False
        for r in range(n_rows):
            at = nodes + node[r]
            x = (<const X_IN_t*> (rows + r * row_stride
                                  + (at.feature_and_missing >> 2) * feature_stride))[0]
            if categorical and at.feature_and_missing & 2:
                # right when not in the set (x is a rank, or NaN when missing)
                if nan_free:
                    to = at.left + (not in_category_set(trees.category_words,
                                                        <Py_ssize_t>at.threshold, x))
                else:
                    to = at.left + (((x != x) & (at.feature_and_missing & 1)) | (
                        (x == x) & (not in_category_set(trees.category_words,
                                                        <Py_ssize_t>at.threshold, x))))
            elif nan_free:
                to = at.left + (x > at.threshold)
            else:
                # right when above the threshold, or missing and sent right (NaN > t is false)
                to = at.left + ((x > at.threshold) | ((x != x) & (at.feature_and_missing & 1)))
            moved |= to != node[r]
            node[r] = to
        if not moved:
            break


cdef inline void walk_tree(const X_IN_t* first_row, Py_ssize_t n_rows, Py_ssize_t row_stride,
                          Py_ssize_t feature_stride, const Trees* trees, Py_ssize_t t,
                          NODE_t* node, bint categorical, bint nan_free) noexcept nogil:
    """reach_leaves, with nan_free a literal in each branch so that both walks
    are compiled with it folded in (as categorical, see predict_raw)."""
    if nan_free:
        reach_leaves(first_row, n_rows, row_stride, feature_stride, trees, t, node,
                     categorical, True)
    else:
        reach_leaves(first_row, n_rows, row_stride, feature_stride, trees, t, node,
                     categorical, False)


cdef inline void predict_block(const X_IN_t* first_row, Py_ssize_t n_rows, Py_ssize_t row_stride,
                        Py_ssize_t feature_stride, Py_ssize_t n_features, const Trees* trees,
                        const long long* value_start, const long long* output_start,
                        const double* values, const int* outputs, const double* init_score,
                        double* out, Py_ssize_t d, bint categorical,
                        const LinearLeaves* linear) noexcept nogil:
    """out's n_rows rows (d apart) = init_score + their leaves' predictions:
    the values, and a linear leaf's part right after them (linear.pxd).
    categorical as in reach_leaves."""
    # on this thread's stack: a shared buffer's rows would share cache lines
    cdef NODE_t node[BLOCK_ROWS]
    cdef Py_ssize_t r, t
    cdef bint nan_free
    nan_free = not block_has_nan(first_row, n_rows, row_stride, feature_stride, n_features)
    for r in range(n_rows):
        start_row(out + r * d, init_score, d)
    for t in range(trees.n_trees):
        walk_tree(first_row, n_rows, row_stride, feature_stride, trees, t, node, categorical,
                  nan_free)
        for r in range(n_rows):
            add_leaf(out + r * d, d, trees.leaf[node[r]], value_start, output_start, values,
                     outputs)
        if linear.feature_start != NULL:  # a loop of its own: a test a row cost 5% (A/B)
            for r in range(n_rows):
                add_linear_part(out + r * d, <const X_IN_t*> ((<const char*> first_row)
                                                              + r * row_stride),
                                feature_stride, trees.leaf[node[r]], linear, value_start,
                                output_start, outputs, 1.0)


cdef inline void leaves_of_block(const X_IN_t* first_row, Py_ssize_t n_rows,
                                Py_ssize_t row_stride, Py_ssize_t feature_stride,
                                Py_ssize_t n_features, const Trees* trees, NODE_t* out,
                                bint categorical) noexcept nogil:
    """out's n_rows rows (n_trees apart) = the leaf index each row reaches per
    tree. categorical as in reach_leaves."""
    cdef NODE_t node[BLOCK_ROWS]
    cdef Py_ssize_t r, t
    cdef bint nan_free
    nan_free = not block_has_nan(first_row, n_rows, row_stride, feature_stride, n_features)
    for t in range(trees.n_trees):
        walk_tree(first_row, n_rows, row_stride, feature_stride, trees, t, node, categorical,
                  nan_free)
        for r in range(n_rows):
            out[r * trees.n_trees + t] = trees.leaf[node[r]]


cdef inline Py_ssize_t rows_per_block(Py_ssize_t n, int n_threads) noexcept nogil:
    """Rows a block walks together: BLOCK_ROWS, but fewer when the rows make
    fewer blocks than threads, so that a request of 10 rows is two blocks of
    5 on two threads, not one block on one."""
    if n_threads <= 1 or n >= BLOCK_ROWS * n_threads:
        return BLOCK_ROWS
    return (n + n_threads - 1) // n_threads


def predict_raw(const X_IN_t[:, :] X,
                const NODE_t[::1] tree_roots,
                const int[::1] tree_depth,
                const WalkNode[::1] walk_nodes,
                const NODE_t[::1] node_value,
                const long long[::1] value_start,
                const long long[::1] output_start,
                const double[::1] values,
                const int[::1] outputs,
                const double[::1] init_score,
                double[:, ::1] out,
                int n_threads,
                const unsigned long long[::1] category_words=None,
                const long long[::1] linear_feature_start=None,
                const int[::1] linear_features=None,
                const long long[::1] linear_coefficient_start=None,
                const double[::1] linear_coefficients=None,
                const double[::1] linear_shift=None):
    """out[i] = init_score + the sum over trees of the leaf row i reaches. X may
    have any strides. out may be uninitialised: each row is started here, so
    that it is written while in cache rather than in a pass of its own.
    The trees come as _PackedForest.tree_arguments gives them; linear_*, the
    arrays of linear.pxd's LinearLeaves, for a forest with linear leaves."""
    cdef Py_ssize_t n = X.shape[0]
    cdef Py_ssize_t d = out.shape[1]
    cdef Py_ssize_t row_stride = X.strides[0], feature_stride = X.strides[1]
    cdef Py_ssize_t block, first
    cdef Trees trees = trees_of(tree_roots, tree_depth, walk_nodes, node_value, category_words)
    cdef LinearLeaves linear = linear_leaves_of(
        linear_feature_start, linear_features, linear_coefficient_start, linear_coefficients,
        linear_shift, value_start, output_start, outputs, X.shape[1], d)
    check_prediction_shapes(n, init_score.shape[0], out.shape[0], d)
    if n == 0:
        return
    cdef Py_ssize_t block_rows = rows_per_block(n, n_threads)
    # One loop per kind of forest, so that each walk is compiled with its flag
    # a constant: the compiler outlines a parallel loop's body before it could
    # fold in a flag passed down, and the test inside one loop cost forests
    # without categorical splits 11-17% (review 5, benchmarks/README.md).
    if trees.category_words == NULL:
        for block in prange((n + block_rows - 1) // block_rows, nogil=True, schedule="static",
                            num_threads=n_threads, use_threads_if=n_threads > 1):
            first = block * block_rows
            predict_block(&X[first, 0], min(block_rows, n - first), row_stride, feature_stride,
                          X.shape[1], &trees, &value_start[0], &output_start[0], &values[0], &outputs[0],
                          &init_score[0], &out[first, 0], d, False, &linear)
    else:
        for block in prange((n + block_rows - 1) // block_rows, nogil=True, schedule="static",
                            num_threads=n_threads, use_threads_if=n_threads > 1):
            first = block * block_rows
            predict_block(&X[first, 0], min(block_rows, n - first), row_stride, feature_stride,
                          X.shape[1], &trees, &value_start[0], &output_start[0], &values[0], &outputs[0],
                          &init_score[0], &out[first, 0], d, True, &linear)


def predict_leaf_raw(const X_IN_t[:, :] X,
                     const NODE_t[::1] tree_roots,
                     const int[::1] tree_depth,
                     const WalkNode[::1] walk_nodes,
                     const NODE_t[::1] node_value,
                     NODE_t[:, ::1] out,
                     int n_threads,
                     const unsigned long long[::1] category_words=None):
    """out[i, t] = the index (into values) of the leaf row i reaches in tree t."""
    cdef Py_ssize_t n = X.shape[0]
    cdef Py_ssize_t row_stride = X.strides[0], feature_stride = X.strides[1]
    cdef Py_ssize_t block, first
    cdef Trees trees = trees_of(tree_roots, tree_depth, walk_nodes, node_value, category_words)
    if n == 0 or trees.n_trees == 0:
        return
    cdef Py_ssize_t block_rows = rows_per_block(n, n_threads)
    if trees.category_words == NULL:  # one loop per kind of forest, as in predict_raw
        for block in prange((n + block_rows - 1) // block_rows, nogil=True, schedule="static",
                            num_threads=n_threads, use_threads_if=n_threads > 1):
            first = block * block_rows
            leaves_of_block(&X[first, 0], min(block_rows, n - first), row_stride,
                            feature_stride, X.shape[1], &trees, &out[first, 0], False)
    else:
        for block in prange((n + block_rows - 1) // block_rows, nogil=True, schedule="static",
                            num_threads=n_threads, use_threads_if=n_threads > 1):
            first = block * block_rows
            leaves_of_block(&X[first, 0], min(block_rows, n - first), row_stride,
                            feature_stride, X.shape[1], &trees, &out[first, 0], True)


cdef packed struct BinnedNode:
    # A node as the binned walk reads it: a row goes right when its bin is the
    # missing bin and missing_right, or another bin above bin; to the right
    # child at left + right_offset. A leaf is its own left child with offset
    # 0, so rows that reached it stay.
    NODE_t left
    NODE_t right_offset
    int feature
    BIN_INDEX_t bin
    unsigned char missing_right
    unsigned char categorical      # its set's flags say which bins go left
    # 16 bytes, so that no node straddles two cache lines


cdef BinnedNode* binned_nodes(const int[::1] node_feature, const BIN_INDEX_t[::1] node_bin,
                              const unsigned char[::1] node_missing_left,
                              const NODE_t[::1] node_left, const NODE_t[::1] node_right,
                              const int[::1] node_set) except NULL:
    """The nodes packed as BinnedNode (freed by the caller)."""
    cdef Py_ssize_t n_nodes = node_left.shape[0], i
    cdef BinnedNode* nodes = <BinnedNode*> malloc(max(n_nodes, 1) * sizeof(BinnedNode))
    if nodes == NULL:
        raise MemoryError(f"no memory for {n_nodes} nodes")
    for i in range(n_nodes):
        if node_left[i] < 0:
            nodes[i].left, nodes[i].right_offset = <NODE_t>i, 0
            nodes[i].feature = 0
        else:
            nodes[i].left, nodes[i].right_offset = node_left[i], node_right[i] - node_left[i]
            nodes[i].feature = node_feature[i]
        nodes[i].bin = node_bin[i]
        nodes[i].missing_right = not node_missing_left[i]
        nodes[i].categorical = node_set is not None and node_set[i] >= 0
    return nodes


cdef inline void reach_binned_leaves(const X_BINNED_t[:, ::1] X_binned, int missing_bin,
                                     Py_ssize_t first, Py_ssize_t n_rows,
                                     const BinnedNode* nodes, NODE_t root, Py_ssize_t max_steps,
                                     const int* node_set,
                                     const unsigned char[:, ::1] set_left_flags, NODE_t* node,
                                     bint categorical) noexcept nogil:
    """node[r] = the leaf node that row first + r reaches from root, the rows
    stepping together without branches as in reach_leaves (whose reasons
    hold here too: 1.4-1.7x faster than a walk per row that branches).
    A categorical node's bins go left by its set's flags, row node_set[node]
    of set_left_flags, which a 16-bit bin reads at common.flag_index."""
    cdef const BinnedNode* at
    cdef Py_ssize_t r, step
    cdef Py_ssize_t n_flags = set_left_flags.shape[1] if categorical else 0
    cdef Py_ssize_t b
    cdef NODE_t to
    cdef bint moved, right
    for r in range(n_rows):
        node[r] = root
    if nodes[root].left == root and nodes[root].right_offset == 0:
        return  # a single leaf, which reads no feature (there may be none)
    for step in range(max_steps):
        moved = False
        for r in range(n_rows):
            at = nodes + node[r]
            b = X_binned[at.feature, first + r]
            if categorical and at.categorical:
                if X_BINNED_t is uint16_t:
                    right = not set_left_flags[node_set[node[r]], flag_index(b, n_flags)]
                else:
                    right = not set_left_flags[node_set[node[r]], b]
            else:
                # the missing bin is above every other, so b > at.bin holds for it
                right = (b > at.bin) & ((b != missing_bin) | at.missing_right)
            # arithmetic, not a choice, which the compiler may make a branch
            to = at.left + (at.right_offset & -<NODE_t>right)
            moved |= to != node[r]
            node[r] = to
        if not moved:
            break


cdef inline void predict_binned_block(const X_BINNED_t[:, ::1] X_binned, int missing_bin,
                                      Py_ssize_t first, Py_ssize_t n_rows,
                                      const BinnedNode* nodes, const NODE_t[::1] tree_roots,
                                      const NODE_t[::1] node_value, const int* node_set,
                                      const unsigned char[:, ::1] set_left_flags,
                                      const long long* value_start, const long long* output_start,
                                      const double* values, const int* outputs, double* out,
                                      Py_ssize_t d, bint categorical) noexcept nogil:
    """out's n_rows rows (d apart) += rows first.. 's leaves in every tree.
    categorical as in reach_leaves."""
    # on this thread's stack, as in predict_block
    cdef NODE_t node[BLOCK_ROWS]
    cdef Py_ssize_t r, t
    for t in range(tree_roots.shape[0]):
        # A tree is fewer than len(node_value) steps deep; the bound ends a walk
        # that a malformed tree would send round a cycle. categorical a literal
        # in each call, as nan_free in walk_tree.
        if categorical:
            reach_binned_leaves(X_binned, missing_bin, first, n_rows, nodes, tree_roots[t],
                                node_value.shape[0], node_set, set_left_flags, node, True)
        else:
            reach_binned_leaves(X_binned, missing_bin, first, n_rows, nodes, tree_roots[t],
                                node_value.shape[0], node_set, set_left_flags, node, False)
        for r in range(n_rows):
            add_leaf(out + r * d, d, node_value[node[r]], value_start, output_start, values,
                     outputs)


def predict_binned(const X_BINNED_t[:, ::1] X_binned,
                   int missing_bin,
                   const NODE_t[::1] tree_roots,
                   const int[::1] node_feature,
                   const BIN_INDEX_t[::1] node_bin,
                   const unsigned char[::1] node_missing_left,
                   const NODE_t[::1] node_left,
                   const NODE_t[::1] node_right,
                   const NODE_t[::1] node_value,
                   const long long[::1] value_start,
                   const long long[::1] output_start,
                   const double[::1] values,
                   const int[::1] outputs,
                   double[:, ::1] out,
                   int n_threads,
                   const int[::1] node_set=None,
                   const unsigned char[:, ::1] set_left_flags=None):
    """out += each row's leaf values in every tree, for X_binned of shape
    (n_features, n_rows), binned with the edges the trees were grown on. With
    categorical splits, node_set gives each node's set (a row of
    set_left_flags, -1 for a threshold split or a leaf), whose flags say
    which bins go left, the missing bin's included: 256 flags for 8-bit
    bins, 2 to missing_bin + 1 for 16-bit (see common.bin_flags)."""
    cdef Py_ssize_t n = X_binned.shape[1]
    cdef Py_ssize_t d = out.shape[1]
    cdef Py_ssize_t n_nodes = node_left.shape[0]
    cdef Py_ssize_t block, first, i
    cdef bint categorical = node_set is not None
    if not is_bin_of(missing_bin, X_BINNED_t is uint16_t):
        raise ValueError(f"missing_bin {missing_bin} is not a bin of X_binned's dtype")
    if categorical:
        if set_left_flags is None or node_set.shape[0] != n_nodes or not (
                set_left_flags.shape[1] == 256 if X_BINNED_t is uint8_t
                else 2 <= set_left_flags.shape[1] <= missing_bin + 1):
            raise ValueError(f"node_set must name a set for each of the {n_nodes} nodes, and "
                             f"set_left_flags hold 256 flags a set for 8-bit bins, 2 to "
                             f"missing_bin + 1 for 16-bit")
        for i in range(n_nodes):
            if not -1 <= node_set[i] < set_left_flags.shape[0]:
                raise ValueError(f"node {i}'s set {node_set[i]} is not one of the "
                                 f"{set_left_flags.shape[0]} sets")
    if n == 0 or tree_roots.shape[0] == 0:
        return
    cdef BinnedNode* nodes = binned_nodes(node_feature, node_bin, node_missing_left, node_left,
                                          node_right, node_set)
    try:
        for block in prange((n + BLOCK_ROWS - 1) // BLOCK_ROWS, nogil=True, schedule="static",
                            num_threads=n_threads, use_threads_if=n_threads > 1):
            first = block * BLOCK_ROWS
            predict_binned_block(X_binned, missing_bin, first, min(BLOCK_ROWS, n - first), nodes,
                                 tree_roots, node_value,
                                 &node_set[0] if categorical else NULL, set_left_flags,
                                 &value_start[0], &output_start[0], &values[0], &outputs[0],
                                 &out[first, 0], d, categorical)
    finally:
        free(nodes)


def add_leaf_values(const ROW_t[::1] rows,
                    const Py_ssize_t[::1] leaf_start,
                    const Py_ssize_t[::1] leaf_stop,
                    const double[:, ::1] leaf_values,
                    const int[:, ::1] leaf_outputs,
                    double[:, ::1] raw,
                    int n_threads):
    """Adds leaf l's values to raw[rows[s]] for every s in [leaf_start[l],
    leaf_stop[l]): the training rows' update from the grower's final
    partition, no traversal. A tree's own leaf arrays: leaf_values (n_leaves,
    d) for dense leaves (leaf_outputs empty), else leaf_values and
    leaf_outputs both (n_leaves, k), the values of the outputs named. Taken
    as they are because forming the prediction kernels' flat leaves
    (LeafArrays) cost as much as the adds on small data."""
    cdef Py_ssize_t d = raw.shape[1], n_leaves = leaf_values.shape[0]
    cdef Py_ssize_t width = leaf_values.shape[1]
    cdef Py_ssize_t l, s, j
    cdef bint sparse = leaf_outputs.shape[0] > 0
    cdef double* row
    if leaf_start.shape[0] != n_leaves or leaf_stop.shape[0] != n_leaves:
        raise ValueError(f"each of the {n_leaves} leaves needs a start and a stop; got "
                         f"{leaf_start.shape[0]} starts and {leaf_stop.shape[0]} stops")
    if sparse and (leaf_outputs.shape[0] != n_leaves or leaf_outputs.shape[1] != width):
        raise ValueError(f"sparse leaves name the output of each value: leaf_outputs must be "
                         f"({n_leaves}, {width}) as leaf_values; got ({leaf_outputs.shape[0]}, "
                         f"{leaf_outputs.shape[1]})")
    if not sparse and width != d:
        raise ValueError(f"dense leaves hold a value for each of the d = {d} outputs; got "
                         f"{width}")
    for l in range(n_leaves):
        if not 0 <= leaf_start[l] <= leaf_stop[l] <= rows.shape[0]:
            raise ValueError(f"leaf {l}'s rows [{leaf_start[l]}, {leaf_stop[l]}) are not a "
                             f"range of the {rows.shape[0]} rows")
    for l in range(n_leaves if sparse else 0):
        for j in range(width):
            if not 0 <= leaf_outputs[l, j] < d:
                raise ValueError(f"leaf {l} names output {leaf_outputs[l, j]} of d = {d}")
    for l in prange(n_leaves, nogil=True, schedule="dynamic", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        for s in range(leaf_start[l], leaf_stop[l]):
            row = &raw[rows[s], 0]
            if sparse:
                for j in range(width):
                    row[leaf_outputs[l, j]] += leaf_values[l, j]
            else:
                for j in range(width):
                    row[j] += leaf_values[l, j]
