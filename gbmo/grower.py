"""TreeGrower: grows one multi-output tree on binned data, best-first (leaf-wise)
or depth-wise (level by level).

Python decides which node to split next; the Cython kernels build the
histograms, search the splits and partition the rows. Only the smaller child's
histogram is built; the larger one is the parent's minus it, as long as the
parent's histogram is still in the bounded cache. In the common configuration
(TreeGrower.native) the same loop runs in Cython in one call
(_core/_grow.pyx), which grows the same trees without the Python between
kernel calls.

X_binned is the dense (n_features, n_rows) array of bins, or a
binning.SparseBinned (from scipy sparse X): its dense features take the same
kernels, its sparse features' histograms are built by row from the node's
rows' stored entries (SparseBinned.row_entries), their zero bin being the
node's totals minus the other bins; a split on a sparse feature decompresses
its column into an n_rows scratch.
"""
import heapq
import warnings

import numpy as np

from ._core import G_H_DTYPE, HIST_DTYPE, ROW_DTYPE, bin_flags, flag_index
from ._core._histogram import (MAX_ROW_WISE_SLOTS, ROW_CHUNKS, build_histograms,
                               build_histograms_by_row, build_histograms_of_nodes, column_sums,
                               gather_gradients, row_entries, subtract_histograms)
from ._core._grow import (grow_best_first, immutable_copy, node_bound, node_draws,
                          node_noise_key)
from ._core._partition import split_rows
from ._core._split import (find_best_sparse_splits, find_best_splits, node_values,
                           noisy_level_scores, select_top_k, select_top_k_shared,
                           split_gain_table)
from ._core._tree_arrays import tree_arrays
from .histogram_memory import owns_memory, written_bytes, zeroed_histograms
from .parallel import threads_for
from .params import max_leaves_of
from .tree import Tree
from .validation import user_stacklevel

# Node histograms, n_features x histogram_bins x width float64 each, are cached
# for subtraction up to hist_cache of them and up to these many bytes (but at
# least the 2 a split needs). With many outputs one histogram can pass a
# gigabyte (bibtex: 1,836 features x 159 outputs x 2 = 1.2 GB), so the count
# alone ran out of memory. With sparse binned data (a SparseBinned) the
# histograms, not the data, dominate memory, and building a child (its rows'
# stored values plus one pass over the histogram) costs little more than a
# subtraction, so little time is lost by a tighter bound (100,000 x 10,000 at
# 1%: the same seconds per round with 2 cached as with 3, measured when a
# build read every stored value of the columns, which cost more).
DENSE_HIST_CACHE_BYTES = 2**30
SPARSE_HIST_CACHE_BYTES = 128 * 2**20

# A feature whose most common bin holds at least this share of the rows has
# its histograms built without that bin's rows (its sums are the node's minus
# the other bins'): row by row from the entries outside it
# (build_histograms_by_row; 3-10x faster than reading every row's bin on
# MNIST, at 4 bytes per entry, so at most 1.2x the binned data's memory), or,
# where the entries' slots pass 32 bits (MAX_ROW_WISE_SLOTS), column by column
# with a test of each row's bin. Below this share that test cost more than the
# adds it saved (a branch mispredicted on every other row near one half):
# binary features of 55% zeros trained 1.5-1.9x slower skipping at 3 to 10
# outputs; at 85% and more, skipping was 1.2-1.7x faster.
SKIP_BIN_SHARE = 0.7
# The shares are estimated on at most this many evenly spaced rows (enough
# for thresholds of one half and more; 2,000 features cost 0.13 s once a run).
SKIP_BIN_SAMPLE_ROWS = 16384
# The parameters that shape a categorical feature's sets (see
# _split.search_categories), LightGBM's names
CATEGORY_RULES = ("cat_smooth", "cat_l2", "min_data_per_group", "max_cat_threshold",
                  "max_cat_to_onehot")

# Whether the trees _core/_grow.pyx can grow are grown there (TreeGrower.native);
# the tests turn it off to check that both loops grow the same trees.
NATIVE_GROWTH = True

# tree_arrays' flags of a tree without categorical features
_NO_FLAGS = np.zeros(0, dtype=np.uint8)
HIST_ITEM_BYTES = np.dtype(HIST_DTYPE).itemsize
# node_values' arguments for no extra lambda_l2 and no bounds
_NO_EXTRA_L2 = np.zeros(0)
_NO_BOUNDS = (np.zeros((0, 0)), np.zeros((0, 0)))


class _Node:
    __slots__ = ("start", "stop", "depth", "sums", "histogram", "gain", "feature",
                 "bin", "missing_left", "left_sums", "left", "right", "index", "outputs",
                 "id", "lower", "upper", "value", "path", "left_bins", "left_flags")

    def __init__(self, start, stop, depth, sums):
        self.start, self.stop, self.depth, self.sums = start, stop, depth, sums
        self.histogram = None
        self.outputs = None  # the outputs a sparse leaf keeps, when its parent chose them
        self.lower = self.upper = None  # bounds on its values, under monotone constraints
        self.value = None  # its values under path_smooth, which pull its children's
        self.path = frozenset()  # the features split on above it (interaction constraints)
        self.gain = -1.0
        self.left = self.right = None
        self.left_bins = None  # a categorical split's set of bins
        self.left_flags = None  # ... as TreeGrower.n_set_flags flags, the missing bin's last

    @property
    def count(self):
        return self.stop - self.start


class InteractionConstraints:
    """Which of a tree's features a node may split on under
    interaction_constraints (groups: lists of features, or None for none),
    given its path, the features split on above it."""

    def __init__(self, groups, features):
        self.groups = None if groups is None else [frozenset(group) for group in groups]
        self.features = features
        self._allowed = {}  # path -> the features a node below it may split on

    @staticmethod
    def check_features(groups, n_features):
        """Refuses groups (resolved params' interaction_constraints) that name
        a feature X does not have."""
        outside = sorted({f for group in groups or [] for f in group if f >= n_features})
        if outside:
            raise ValueError(f"interaction_constraints name features {outside}, but X has "
                             f"{n_features} (indices 0 .. {n_features - 1})")

    def allowed(self, path):
        """A feature may join the features split on above a node when one
        group holds them all; a feature in no group may only repeat itself
        (never joined by another). Never empty: the path itself is allowed."""
        if self.groups is None or not path:
            return self.features
        if path not in self._allowed:
            allowed = set().union(*(group for group in self.groups if path <= group))
            if len(path) == 1:
                allowed |= path
            self._allowed[path] = np.ascontiguousarray(
                self.features[np.isin(self.features, list(allowed))], dtype=np.int32)
        return self._allowed[path]


def drawn_features(tree_seed, node_id, features, fraction):
    """colsample_bynode: a node's sorted draw of `fraction` of features (at
    least one; all of them at 1), from the tree's seed and the node's id as
    the loop in Cython draws them."""
    if fraction >= 1.0:
        return features
    size = max(1, int(round(fraction * len(features))))
    # the features of the size smallest draws: a uniform subset
    draws = node_draws(tree_seed, node_id, 0, len(features))
    return np.sort(features[np.argsort(draws, kind="stable")[:size]])


def drawn_thresholds(tree_seed, node_id, n_bins, categorical_flags=None):
    """extra_trees: each feature's one threshold at a node, a bin below its
    last of n_bins (a categorical feature's draw is one of its n_bins, see
    _split.search_categories), from the tree's seed and the node's id as the
    loop in Cython draws them (_grow.draw_random_bins)."""
    draws = node_draws(tree_seed, node_id, 1, len(n_bins))
    choices = n_bins - (1 if categorical_flags is None else 1 - categorical_flags)
    return (draws % np.maximum(choices, 1).astype(np.uint64)).astype(np.int32)


def _gradient_rms(grad, row_sample):
    """The root mean square of the rows' gradient vectors (their Euclidean
    norms), over row_sample (None: every row): random_strength's unit, as
    CatBoost scales its noise by its derivatives' deviation from 0."""
    rows = grad if row_sample is None else grad[row_sample]
    if len(rows) == 0:
        return 0.0
    return float(np.sqrt(np.einsum("ij,ij->", rows, rows, dtype=np.float64) / len(rows)))


def soft_threshold(grad_sums, lambda_l1):
    """Each gradient sum moved toward 0 by lambda_l1, and 0 within it: with
    the L1 term lambda_l1 |w| a leaf's best value is -T(G) / (H + lambda) and
    its score T(G)^2 / (H + lambda) (the split kernels' l1_shrunk)."""
    if lambda_l1 == 0.0:
        return grad_sums
    return np.sign(grad_sums) * np.maximum(np.abs(grad_sums) - lambda_l1, 0.0)


def leaf_values(grad_sums, regularized_hessian, lambda_l1=0.0):
    """-T(G) / (H + lambda) (T: soft_threshold), and 0 where H + lambda is 0:
    a leaf of rows whose weights are all 0 (a row sample can draw only those)
    with lambda_l2 = 0, whose G is 0 too, so it has nothing to say."""
    values = np.zeros(np.broadcast(grad_sums, regularized_hessian).shape)
    np.divide(-soft_threshold(grad_sums, lambda_l1), regularized_hessian, out=values,
              where=regularized_hessian != 0)
    return values


class GrownNodes:
    """The nodes grow_best_first writes, in the order they were made:
    rows [start, stop) of the workspace's rows, depth, [G, H, count] sums,
    and for a split its gain, feature, bin, missing side, children and left
    sums; breadth_first is their order in the model; peak_histograms, the
    most histograms alive at once; lower and upper, the bounds on each node's
    values under monotone constraints (bounded_outputs columns); value, each
    node's values under path_smooth (smoothed: bounded_outputs columns); with
    categorical features, left_flags: each split's set of bins that go left,
    n_flags flags (TreeGrower.n_set_flags, the missing bin's included; 0
    without categorical features)."""

    def __init__(self, max_nodes, width, bounded_outputs=0, n_flags=0, smoothed=False):
        self.start = np.empty(max_nodes, dtype=np.intp)
        self.stop = np.empty(max_nodes, dtype=np.intp)
        self.depth = np.empty(max_nodes, dtype=np.int32)
        self.sums = np.empty((max_nodes, width))
        self.left_sums = np.empty((max_nodes, width))
        self.gain = np.empty(max_nodes)
        self.feature = np.empty(max_nodes, dtype=np.int32)
        self.bin = np.empty(max_nodes, dtype=np.int32)
        self.missing_left = np.empty(max_nodes, dtype=np.uint8)
        self.left = np.empty(max_nodes, dtype=np.int32)
        self.right = np.empty(max_nodes, dtype=np.int32)
        self.breadth_first = np.empty(max_nodes, dtype=np.int32)
        self.peak_histograms = 0
        self.widest_pass = 0  # the most nodes whose histograms one pass built
        # each node's bounds on its values, under monotone constraints
        self.lower = np.empty((max_nodes, bounded_outputs))
        self.upper = np.empty((max_nodes, bounded_outputs))
        self.value = np.empty((max_nodes, bounded_outputs if smoothed else 0))
        self.left_flags = np.empty((max_nodes, n_flags), dtype=np.uint8)


def _warn_of_large_histograms(histogram_bytes, shape):
    """Says what makes a node's histograms larger than half the cache, which
    a split needs two of: the run then holds at least that twice."""
    n_features, n_bins, width = shape
    warnings.warn(f"a node's histograms take {histogram_bytes / 2**20:,.0f} MiB ({n_features} "
                  f"features x up to {n_bins} bins x {width} sums), and growing a tree holds "
                  "two or more: fewer bins (max_bins, max_bins_by_feature) keep them smaller",
                  UserWarning, stacklevel=user_stacklevel())


class _HistogramPool:
    """Recycles histogram buffers and bounds how many are alive at once."""

    def __init__(self, shape, capacity, value_bins):
        self.shape, self.capacity, self.value_bins = shape, capacity, value_bins
        self.free = []
        self.n_alive = 0

    def take(self):
        self.n_alive += 1
        # zeroed: the kernels leave a feature's rows beyond its value bins alone
        # (value_bins, _histogram.zero_feature)
        return self.free.pop() if self.free else self.zeroed()

    def zeroed(self, count=None):
        """A new zeroed histogram, or count of them in one block."""
        shape = self.shape if count is None else (count,) + self.shape
        return zeroed_histograms(shape, self.value_bins)

    def give_back(self, histogram):
        """Keeps the buffer for reuse while alive + free stays within capacity;
        views into a multi-node block are dropped, so the block is freed with
        its last view instead of piling up unused."""
        self.n_alive -= 1
        if owns_memory(histogram) and self.n_alive + len(self.free) < self.capacity:
            self.free.append(histogram)


class TreeGrower:
    """Grows one tree. grad (n, d) and hess (n, k) are float32 with k in {1, d};
    a constant hessian column should be passed as hess_constant with k = 0 instead.

    features are those the tree may split on; row_sample, when given, the
    (sorted) training rows it is grown on.

    After grow(), the workspace's rows hold the training rows grouped by
    leaf and `leaf_start` / `leaf_stop` the [start, stop) of each leaf in
    them, so raw scores can be updated without traversing X again;
    `split_output_gains` holds the splits' (features, gains per output,
    outputs involved), a row per split, for importance.
    """

    def __init__(self, X_binned, bin_mapper, features, grad, hess, hess_constant,
                 params, workspace, row_sample=None, rng=None, monotone=None,
                 categorical=None, split_noise=0.0):
        self.X_binned = X_binned
        self.row_sample = row_sample  # sorted rows to grow on, None for all
        # random_strength's noise on each candidate's gain, in the kernels'
        # unit (see _split.SplitContext): the round's strength (split_noise)
        # times the root mean square of the rows' gradient vectors
        self.noise_scale = split_noise * _gradient_rms(grad, row_sample) if split_noise else 0.0
        # Each node's draws (its features under colsample_bynode < 1, its
        # thresholds under extra_trees) come from this tree's seed and the
        # node's id, not from a shared stream: depth-wise growth may search
        # children it never splits, depending on the histogram cache.
        self.tree_seed = (None if rng is None or (params["colsample_bynode"] >= 1.0
                                                  and not params["extra_trees"]
                                                  and not self.noise_scale)
                          else int(rng.integers(0, 2**63)))
        self.bin_mapper = bin_mapper
        self.features = features
        self.grad, self.hess, self.hess_constant = grad, hess, hess_constant
        self.n_outputs = grad.shape[1]
        self.hess_width = hess.shape[1]
        self.width = self.n_outputs + self.hess_width + 1
        self.params = params
        self.lambda_l1 = params["lambda_l1"]
        self.n_threads = params["n_threads"]
        self.max_depth = params["max_depth"] if params["max_depth"] > 0 else np.inf
        self.max_leaves = max_leaves_of(params)
        self.symmetric = params["growth"] == "symmetric"
        if self.symmetric:  # a full level must fit in max_leaves
            self.max_depth = min(self.max_depth, int(np.log2(self.max_leaves)))
        # Sparse leaves only when they keep fewer outputs than there are.
        sparse = params["split"] != "dense" and params["top_k"] < self.n_outputs
        self.top_k = params["top_k"] if sparse else None
        self.restricted = params["split"] == "sparse_restricted"
        # (n_features, n_outputs): +1 / -1 where an output must increase /
        # decrease with a feature; None without constraints
        self.monotone = monotone
        # > 0: each node's values are pulled toward its parent's (LightGBM's
        # path smoothing), which the bounded search does (monotone given)
        self.path_smooth = params["path_smooth"]
        self.constraints = InteractionConstraints(params["interaction_constraints"],
                                                  self.features)
        self.workspace = workspace
        n_features = X_binned.shape[0]
        # A mixed dense / sparse binned layout (scipy sparse X).
        self.mixed = not isinstance(X_binned, np.ndarray)
        if self.mixed:
            self.dense_features, self.dense_columns, self.sparse_features = (
                X_binned.split_features(features))
        self.n_node_ids = 0
        # Sparse binned data has its own zero bins (SparseBinned.row_entries).
        self.skipped_bins = self.by_row = None
        self.column_features = features
        # what _build_by_row reads: (indptr, slot, wanted, skipped_bins, mean
        # entries per row) of the features built by row, None for none
        self.row_wise = None
        if self.mixed:
            n_histogram_bins = bin_mapper.histogram_bins
            if len(self.sparse_features):
                indptr, slot, zero_bins = X_binned.row_entries(n_histogram_bins)
                wanted = np.zeros(n_features, dtype=np.uint8)
                wanted[self.sparse_features] = 1
                self.row_wise = (indptr, slot, wanted, zero_bins,
                                 len(slot) / max(1, X_binned.n_rows))
        else:
            n_histogram_bins, self.skipped_bins, self.by_row = workspace.dense_layout(
                X_binned, bin_mapper)
            if self.by_row is not None:
                self.wanted, self.column_features = self.by_row.split(features)
                self.row_wise = (self.by_row.indptr, self.by_row.slot, self.wanted,
                                 self.skipped_bins, self.by_row.mean_entries_per_row)
        shape = (n_features, n_histogram_bins, self.width)
        # the length of a threshold split's table of flags (see _core.bin_flags)
        self.n_threshold_flags = bin_flags(bin_mapper.missing_bin, n_histogram_bins)
        # each feature's histogram rows before the missing one (the kernels'
        # value_bins): the others are never written, and stay 0
        self.value_bins = np.ascontiguousarray(bin_mapper.n_bins_non_missing_, dtype=np.int32)
        histogram_bytes = n_features * n_histogram_bins * self.width * HIST_ITEM_BYTES
        cache_bytes = self.cache_bytes = (SPARSE_HIST_CACHE_BYTES if self.mixed
                                          else DENSE_HIST_CACHE_BYTES)
        # (sparse X's smaller cache is a choice of speed, not of memory)
        # the memory they take: the rows the kernels write (histogram_memory),
        # at most histogram_bytes, which rules out most runs at once
        if (not self.mixed and not workspace.warned_of_large_histograms
                and 2 * histogram_bytes > cache_bytes):
            written = written_bytes(shape, self.value_bins)
            if 2 * written > cache_bytes:
                workspace.warned_of_large_histograms = True
                _warn_of_large_histograms(written, shape)
        # never below the two histograms a split needs (its parent's, which the
        # larger child takes over, and the smaller child's), in both loops
        capacity = max(2, min(params["hist_cache"], cache_bytes // histogram_bytes))
        # the loop in Cython takes all but sparse X, sparse splits and
        # symmetric growth
        self.native = (NATIVE_GROWTH and not self.mixed and not self.symmetric
                       and self.top_k is None)
        if self.native:
            # at most one histogram per leaf is alive
            self.capacity = capacity
            self.histograms = workspace.histogram_block(
                shape, min(capacity, self.max_leaves + 1), self.value_bins)
        else:
            self.pool = workspace.histogram_pool(shape, capacity, self.value_bins)
            # find_best_splits' best split of each feature
            self.split_gain = np.empty(n_features, dtype=np.float64)
            self.noiseless_gain = np.empty(n_features, dtype=np.float64)
            self.split_bin = np.empty(n_features, dtype=np.int32)
            self.split_missing_left = np.empty(n_features, dtype=np.uint8)
        # categorical: {feature: the bin of each category rank} (gbmo.categorical);
        # their bins are ordered at each node, but for symmetric trees, whose
        # levels share one threshold, which reads the ranks in their order
        self.categorical = None if self.symmetric or not categorical else categorical
        self.n_set_flags = 0  # the length of a categorical split's flags
        if self.categorical is not None:
            self.categorical_flags = np.zeros(n_features, dtype=np.uint8)
            self.categorical_flags[list(categorical)] = 1
            self.category_order = np.empty(shape[:2], dtype=np.int32)
            # up to the categorical features' most bins, the missing bin's flag
            # last (16-bit bins): not the histograms' height, which another
            # feature of many bins may set
            self.n_set_flags = bin_flags(bin_mapper.missing_bin, 1 + int(
                bin_mapper.n_bins_non_missing_[list(categorical)].max()))
        self.candidates = []  # heap of (priority, order, node) waiting to be split
        # A batch of parents holds its histograms while its children's are built
        # (up to two per parent), so a third of the cache bounds it.
        self.level_batch = (max(1, capacity // 3)
                            if params["growth"] == "depthwise" else 1)

    def _threads_for(self, work):
        return threads_for(self.n_threads, work)

    def _row_chunk_histograms(self, shape):
        """The scratch of a build by row's chunks of rows: none (one chunk)
        unless its ROW_CHUNKS - 1 histograms take at most a quarter of the
        histogram cache's bound (DENSE_ or SPARSE_HIST_CACHE_BYTES): only the
        rows of the features built by row are written, but histograms of
        many or tall features are large (sparse X's 10,000 features x 79
        bins would have taken 3 x 76 MB more)."""
        if (ROW_CHUNKS - 1) * 4 * np.prod(shape) * HIST_ITEM_BYTES > self.cache_bytes:
            return np.empty((0,) + tuple(shape))
        return self.workspace.row_chunk_histograms(shape, self.value_bins)

    def _new_node(self, start, stop, depth, sums):
        node = _Node(start, stop, depth, sums)
        node.id = self.n_node_ids
        self.n_node_ids += 1
        return node

    # -- histograms ---------------------------------------------------------
    def _build_mixed(self, nodes, histograms):
        """histograms[m] (a separate pool buffer each) of nodes[m], whose sums are
        known, in the mixed layout, node by node: dense features with the dense
        kernel, sparse ones by row from the node's rows' stored entries."""
        X = self.X_binned
        for node, histogram in zip(nodes, histograms):
            rows = self.workspace.rows[node.start:node.stop]
            ordered = self.workspace.ordered(node.count, self.width)
            gather_gradients(self.grad, self.hess, rows, ordered,
                             self._threads_for(node.count * self.width))
            if len(self.dense_features):
                build_histograms(X.dense, rows, ordered, self.dense_features, histogram,
                                 self._threads_for(node.count * self.width
                                                   * len(self.dense_features)),
                                 self.dense_columns, value_bins=self.value_bins)
            if self.row_wise is not None:
                self._build_by_row(rows, ordered, node.sums, histogram)

    def _skipping(self, nodes):
        """build_histograms' skipped_bins and totals arguments for nodes."""
        if self.skipped_bins is None:
            return ()
        return self.skipped_bins, np.array([node.sums for node in nodes], dtype=HIST_DTYPE)

    def _build_by_row(self, rows, ordered, sums, histogram):
        """The histograms of one node's features built by row (dense X's, see
        SKIP_BIN_SHARE; sparse X's sparse ones)."""
        indptr, slot, wanted, skipped_bins, mean_entries_per_row = self.row_wise
        build_histograms_by_row(indptr, slot, wanted, skipped_bins, rows, ordered,
                                np.ascontiguousarray(sums, dtype=HIST_DTYPE), histogram,
                                self._row_chunk_histograms(histogram.shape),
                                self._threads_for(len(rows) * self.width * mean_entries_per_row),
                                self.value_bins)

    def _build(self, node):
        """node's histogram; the root's sums (None until then) come from its
        gathered rows, as skipped bins and sparse zero bins need them first."""
        if self.mixed:
            if node.sums is None:
                node.sums = self._gathered_sums(node)
            while self.pool.n_alive >= self.pool.capacity and self._evict_one():
                pass
            histogram = self.pool.take()
            self._build_mixed([node], [histogram])
            return histogram
        rows = self.workspace.rows[node.start:node.stop]
        ordered = self.workspace.ordered(node.count, self.width)
        gather_gradients(self.grad, self.hess, rows, ordered,
                         self._threads_for(node.count * self.width))
        if node.sums is None:
            node.sums = self._sums_of(ordered)
        while self.pool.n_alive >= self.pool.capacity and self._evict_one():
            pass
        histogram = self.pool.take()
        build_histograms(self.X_binned, rows, ordered, self.column_features, histogram,
                         self._threads_for(node.count * self.width * len(self.column_features)),
                         None, *self._skipping([node]), value_bins=self.value_bins)
        if self.row_wise is not None:
            self._build_by_row(rows, ordered, node.sums, histogram)
        return histogram

    def _release(self, node):
        if node.histogram is not None:
            self.pool.give_back(node.histogram)
            node.histogram = None

    def _evict_one(self):
        """Frees the histogram of the waiting node least likely to be split next;
        False when no waiting node holds one."""
        holders = [node for _, _, node in self.candidates if node.histogram is not None]
        if not holders:
            return False
        self._release(max(holders, key=self._priority))
        return True

    # -- splits -------------------------------------------------------------
    def _can_split(self, node):
        return (node.depth < self.max_depth and len(self.features) > 0
                and node.count >= 2 * self.params["min_samples_leaf"])

    def _find_split(self, node):
        params = self.params
        features = self._node_features(node)
        common = self._search_arguments(node.histogram, features,
                                        self.bin_mapper.n_bins_non_missing_, node.sums)
        results = (self.split_gain, self.split_bin, self.split_missing_left,
                   self._threads_for(node.histogram[0].size * len(features)))
        random_bins = None
        if params["extra_trees"]:
            random_bins = drawn_thresholds(
                self.tree_seed, node.id, self.bin_mapper.n_bins_non_missing_,
                None if self.categorical is None else self.categorical_flags)
        options = {"lambda_l1": self.lambda_l1, "random_bins": random_bins}
        # The threshold compares the gain averaged over the outputs it involves.
        involved = self.n_outputs if self.top_k is None else self.top_k
        if self.noise_scale:
            options.update(noise_scale=self.noise_scale,
                           noise_key=node_noise_key(self._seed(), node.id),
                           noiseless_gain=self.noiseless_gain,
                           least_gain=params["min_gain"] * involved)
        if self.categorical is not None:
            options.update(categorical=self.categorical_flags, category_order=self.category_order,
                           **self._category_rules())
        if self.top_k is None:
            bounds = ()
            if self.monotone is not None:
                bounds = (self.monotone, node.lower, node.upper)
                options.update(self._smoothing(node.value))
            best = find_best_splits(*common, *results, *bounds, **options)
        else:
            best = find_best_sparse_splits(*common, self.top_k, self.restricted, *results,
                                           **options)
        if best < 0:
            return
        feature = int(features[best])
        gain = (self.noiseless_gain if self.noise_scale else self.split_gain)[feature]
        if gain <= 0 or gain / involved <= params["min_gain"]:
            return
        self._set_split(node, feature, int(self.split_bin[feature]),
                        bool(self.split_missing_left[feature]), gain)

    def _search_arguments(self, histogram, features, n_bins, sums):
        """The leading arguments every split-search kernel takes."""
        params = self.params
        return (histogram, features, n_bins, sums, self.n_outputs, self.hess_width,
                self.hess_constant, params["lambda_l2"], params["min_samples_leaf"],
                params["min_child_weight"])

    def _set_split(self, node, feature, bin_, missing_left, gain):
        node.gain = float(gain)
        node.feature, node.bin, node.missing_left = feature, bin_, missing_left
        # Kept with the split because the histogram may be evicted before it is applied.
        feature_hist = node.histogram[feature]
        if self.categorical is not None and feature in self.categorical:
            # bin_ is a position in the node's order of the categories
            node.left_bins = np.sort(self.category_order[feature, :bin_ + 1])
            node.left_sums = feature_hist[node.left_bins].sum(axis=0)
        else:
            node.left_bins = None
            node.left_sums = np.empty(self.width)
            column_sums(feature_hist, bin_ + 1, node.left_sums)
        if missing_left:
            node.left_sums += feature_hist[-1]

    def _node_features(self, node):
        """The features a node may split on: those of the tree's that its path
        allows (see InteractionConstraints), all or a sorted draw of
        colsample_bynode of them (at least one)."""
        return drawn_features(self.tree_seed, node.id, self.constraints.allowed(node.path),
                              self.params["colsample_bynode"])

    def _split(self, node):
        left_sums = node.left_sums
        rows = self.workspace.rows[node.start:node.stop]
        if self.mixed:
            column = self.X_binned.column(node.feature,
                                          self.workspace.column_scratch(self.X_binned.dtype))
        else:
            column = self.X_binned[node.feature]
        if node.left_bins is not None:
            node.left_flags = np.zeros(self.n_set_flags, dtype=np.uint8)
            node.left_flags[node.left_bins] = 1
            node.left_flags[flag_index(self.bin_mapper.missing_bin, self.n_set_flags)] = \
                node.missing_left
        n_left = split_rows(
            rows, column, node.bin, node.missing_left,
            self.bin_mapper.missing_bin, self.workspace.left_buffer,
            self.workspace.right_buffer, self._threads_for(node.count), node.left_flags,
            self.n_threshold_flags,
        )
        middle = node.start + n_left
        node.left = self._new_node(node.start, middle, node.depth + 1, left_sums)
        node.right = self._new_node(middle, node.stop, node.depth + 1, node.sums - left_sums)
        node.left.path = node.right.path = node.path | {node.feature}
        if self.monotone is not None:
            self._bound_children(node)
        if self.top_k is not None and self.restricted:
            shared = np.empty(self.top_k, dtype=np.intp)
            select_top_k_shared(node.left.sums, node.right.sums, *self._selection_arguments(),
                                shared, lambda_l1=self.lambda_l1)
            node.left.outputs = node.right.outputs = shared
        return node.left, node.right

    def _bound_children(self, node):
        """The children's bounds: their parent's, and for a split on a
        constrained feature, cut at the midpoint of the two children's values
        (per output), so that every leaf below one side stays on its side of
        every leaf below the other (LightGBM's basic method). Under
        path_smooth the children's values, pulled toward node's, are kept:
        they pull their own children's."""
        left, right = node.left, node.right
        left.lower, left.upper = right.lower, right.upper = node.lower, node.upper
        for child in (left, right) if self.path_smooth > 0 else ():
            child.value = self._values(child.sums, bounds=(node.lower, node.upper),
                                       anchors=node.value)
        direction = self.monotone[node.feature]
        if not direction.any():
            return
        middle = 0.5 * (self._bounded_values(left) + self._bounded_values(right))
        left.upper = np.where(direction > 0, np.minimum(node.upper, middle), node.upper)
        right.lower = np.where(direction > 0, np.maximum(node.lower, middle), node.lower)
        left.lower = np.where(direction < 0, np.maximum(node.lower, middle), node.lower)
        right.upper = np.where(direction < 0, np.minimum(node.upper, middle), node.upper)

    def _bounded_values(self, node):
        """node's leaf values, clipped to its bounds when it has them (under
        path_smooth, the values kept when it was made)."""
        if node.value is not None:
            return node.value
        return self._values(node.sums,
                            bounds=None if node.lower is None else (node.lower, node.upper))

    def _smoothing(self, anchors):
        """The split and value kernels' path_smooth arguments, the values
        pulled toward anchors (none without path_smooth)."""
        if self.path_smooth <= 0:
            return {}
        return {"anchor": anchors, "path_smooth": self.path_smooth,
                "max_output": self._root_bound()}

    def _build_all(self, nodes):
        """Histograms of several nodes: one kernel pass over every (node, feature)
        pair when there are several, so small nodes still use every thread."""
        while self.pool.n_alive + len(nodes) > self.pool.capacity and self._evict_one():
            pass
        if len(nodes) == 1:
            nodes[0].histogram = self._build(nodes[0])
            return
        if self.mixed:  # a pool buffer per node, so memory stays within the cache
            histograms = [self.pool.take() for _ in nodes]
            self._build_mixed(nodes, histograms)
            for node, histogram in zip(nodes, histograms):
                node.histogram = histogram
            return
        self.pool.free.clear()  # the nodes get one new block: spare buffers go first
        all_rows = self.workspace.rows
        rows = np.concatenate([all_rows[node.start:node.stop] for node in nodes])
        offsets = np.cumsum([0] + [node.count for node in nodes]).astype(np.intp)
        ordered = self.workspace.ordered(len(rows), self.width)
        gather_gradients(self.grad, self.hess, rows, ordered,
                         self._threads_for(len(rows) * self.width))
        histograms = self.pool.zeroed(len(nodes))
        build_histograms_of_nodes(self.X_binned, rows, offsets, ordered, self.column_features,
                                  histograms,
                                  self._threads_for(len(rows) * self.width
                                                    * len(self.column_features)),
                                  None, *self._skipping(nodes), value_bins=self.value_bins)
        if self.row_wise is not None:
            for m, node in enumerate(nodes):
                part = slice(offsets[m], offsets[m + 1])
                self._build_by_row(rows[part], ordered[part], node.sums, histograms[m])
        for node, histogram in zip(nodes, histograms):
            node.histogram = histogram
        self.pool.n_alive += len(nodes)

    def _prepare_children(self, splits):
        """For each (parent, left, right): the children's histograms, then their
        best splits."""
        self._children_histograms(splits)
        for _, left, right in splits:
            for child in (left, right):
                if child.histogram is not None and self._can_split(child):
                    self._find_split(child)
                if child.gain <= 0:
                    self._release(child)

    def _children_histograms(self, splits):
        """The histograms of the children that may split: the smaller built, the
        larger the parent's minus it while the parent's is cached, all built in
        one pass. Each parent's is given up."""
        to_build, subtractions = [], []
        for parent, left, right in splits:
            splittable = [child for child in (left, right) if self._can_split(child)]
            if not splittable:
                self._release(parent)
                continue
            small, large = (left, right) if left.count <= right.count else (right, left)
            if parent.histogram is not None and large in splittable:
                to_build.append(small)
                subtractions.append((parent, small, large))
            else:
                self._release(parent)
                to_build.extend(splittable)
        if to_build:
            self._build_all(to_build)
        for parent, small, large in subtractions:
            large.histogram = parent.histogram
            parent.histogram = None
            subtract_histograms(large.histogram, small.histogram, self.features,
                                large.histogram,
                                self._threads_for(small.histogram[0].size * len(self.features)),
                                self.value_bins)

    # -- growth -------------------------------------------------------------
    def _priority(self, node):
        """Best-first splits the largest gain next; depth-wise finishes a level
        (largest gain first within it) before the next."""
        if self.params["growth"] == "depthwise":
            return (node.depth, -node.gain)
        return (0, -node.gain)

    def grow(self):
        if self.native:
            return self._grow_native()
        n_rows = self.workspace.reset_rows(self.row_sample)
        root = self._new_node(0, n_rows, 0, None)  # _build sums its gathered rows
        if self.monotone is not None:
            root.lower = np.full(self.n_outputs, -self._root_bound())
            root.upper = np.full(self.n_outputs, self._root_bound())
        if self._can_split(root):
            root.histogram = self._build(root)
        else:
            root.sums = self._gathered_sums(root)
        if self.path_smooth > 0:  # the root's values are not smoothed: LightGBM's
            root.value = self._values(root.sums, bounds=(root.lower, root.upper))
        if self.symmetric:
            self._grow_symmetric(root)
        else:
            self._grow_by_gain(root)
        return self._to_tree(root)

    def _group_arguments(self):
        """The interaction groups for grow_best_first: their features one
        after the other (group_features) and where each starts (group_indptr)."""
        if self.constraints.groups is None:
            return {}
        groups = [sorted(group) for group in self.constraints.groups]
        return {"group_indptr": np.cumsum([0] + [len(g) for g in groups]).astype(np.int32),
                "group_features": np.array([f for g in groups for f in g], dtype=np.int32)}

    def _category_rules(self):
        """The parameters of the split kernels' categorical sets."""
        return {name: self.params[name] for name in CATEGORY_RULES}

    def _categorical_arguments(self):
        """The categorical features' flags and rules for grow_best_first."""
        if self.categorical is None:
            return {}
        return {"categorical": self.categorical_flags, **self._category_rules()}

    def _root_bound(self):
        """The bound on the root's values under monotone constraints:
        max_delta_step when it is set (which runs on the same search)."""
        return self.params["max_delta_step"] if self.params["max_delta_step"] > 0 else np.inf

    def _grow_native(self):
        """grow() in one call of the Cython loop (_core/_grow.pyx)."""
        params, workspace = self.params, self.workspace
        n_rows = workspace.reset_rows(self.row_sample)
        bounded = self.monotone is not None
        n_flags = self.n_set_flags
        smoothed = self.path_smooth > 0
        nodes = workspace.grown_nodes(
            node_bound(n_rows, self.max_leaves, params["min_samples_leaf"],
                       params["max_depth"]),
            self.width, self.n_outputs if bounded else 0, n_flags, smoothed)
        entries = self.by_row
        row_wise = None if entries is None else (
            entries.indptr, entries.slot, entries.n_histogram_bins, self.wanted,
            self._row_chunk_histograms(self.histograms.shape[1:]), entries.mean_entries_per_row)
        n_nodes = grow_best_first(
            self.X_binned, self.grad, self.hess, self.hess_constant, workspace.rows, n_rows,
            workspace.left_buffer, workspace.right_buffer,
            workspace.ordered(n_rows, self.width).reshape(-1), self.histograms, self.capacity,
            self.features, self.column_features, self.bin_mapper.n_bins_non_missing_,
            self.bin_mapper.missing_bin, self.skipped_bins, row_wise, params["lambda_l2"],
            self.lambda_l1, params["min_samples_leaf"], params["min_child_weight"],
            params["min_gain"], params["max_depth"] if params["max_depth"] > 0 else -1,
            self.max_leaves, self.n_threads, nodes,
            tree_seed=self._seed(),
            colsample_bynode=params["colsample_bynode"], extra_trees=params["extra_trees"],
            noise_scale=self.noise_scale, monotone=self.monotone, root_bound=self._root_bound(),
            path_smooth=self.path_smooth, depthwise=params["growth"] == "depthwise",
            level_batch=self.level_batch,
            **self._group_arguments(), **self._categorical_arguments())
        arrays, leaves, splits, leaf_start, leaf_stop = tree_arrays(
            nodes.breadth_first[:n_nodes], nodes.left, nodes.right, nodes.start, nodes.stop,
            nodes.feature, nodes.bin, nodes.missing_left, nodes.gain,
            self.categorical_flags if n_flags else _NO_FLAGS, self.bin_mapper.edges_,
            self.bin_mapper.n_edges_)
        features = nodes.feature[splits]
        sets = ((), (), ())
        if n_flags:
            by_set = self.categorical_flags[features].astype(bool)
            set_splits = splits[by_set]
            model_position = np.flatnonzero(arrays["node_left"] >= 0)[by_set]
            sets = (model_position, features[by_set], nodes.left_flags[set_splits])
        def split_parts():
            return ((nodes.sums[splits], nodes.sums[nodes.left[splits]],
                     nodes.sums[nodes.right[splits]]),
                    (nodes.lower[splits], nodes.upper[splits]) if bounded else None,
                    nodes.value[splits] if smoothed else None)

        return self._finish_tree(
            arrays, leaf_start, leaf_stop, nodes.sums[leaves], features,
            split_parts, (nodes.lower[leaves], nodes.upper[leaves]) if bounded else None, None,
            sets, nodes.value[leaves] if smoothed else None)

    def _grow_by_gain(self, root):
        """Best-first, or depth-wise (see _priority)."""
        if root.histogram is not None:
            self._find_split(root)
        candidates = self.candidates
        order = 0
        if root.gain > 0:
            heapq.heappush(candidates, (self._priority(root), order, root))
        n_leaves = 1
        while candidates and n_leaves < self.max_leaves:
            batch = [heapq.heappop(candidates)[2]]
            # Depth-wise splits the nodes of a level together (as many as the
            # histogram cache allows) so their children's histograms take one pass.
            while (self.level_batch > 1 and candidates and len(batch) < self.level_batch
                   and candidates[0][2].depth == batch[0].depth
                   and n_leaves + len(batch) < self.max_leaves):
                batch.append(heapq.heappop(candidates)[2])
            splits = [(node, *self._split(node)) for node in batch]
            n_leaves += len(batch)
            if n_leaves < self.max_leaves:
                self._prepare_children(splits)
            else:
                for node in batch:
                    self._release(node)
            for _, left, right in splits:
                for child in (left, right):
                    if child.gain > 0:
                        order += 1
                        heapq.heappush(candidates, (self._priority(child), order, child))
        for _, _, node in candidates:
            self._release(node)

    def _grow_symmetric(self, root):
        """Every node of a level splits on one (feature, threshold, missing
        side): the one whose gain summed over the level's nodes is largest, as
        in CatBoost's symmetric (oblivious) trees, to max_depth. A node where
        that split would leave a child below min_samples_leaf or
        min_child_weight stays a leaf, and its gain counts for nothing."""
        n_features, n_histogram_rows, _ = self.pool.shape
        total = np.empty((n_features, n_histogram_rows - 1, 2))
        table = np.empty_like(total)
        level = [root] if root.histogram is not None else []
        n_bins = self.bin_mapper.n_bins_non_missing_
        while level:
            features = self._node_features(level[0])  # a level's nodes share their path
            total.fill(0.0)
            table.fill(-np.inf)  # the features not drawn stay so for every node
            for node in level:
                self._gain_table(node.histogram, features, n_bins, node.sums, table)
                np.add(total, table, out=total, where=table > -np.inf)
            best = int(np.argmax(total if not self.noise_scale else self._noisy(total, level)))
            feature, bin_, side = (int(i) for i in np.unravel_index(best, total.shape))
            gain = total.flat[best]
            if gain <= 0 or gain / self.n_outputs <= self.params["min_gain"]:
                break
            splits = []
            chosen = np.empty((1,) + total.shape[1:])
            for node in level:
                # the chosen feature's table alone says whether the node may split
                self._gain_table(node.histogram[feature:feature + 1], np.zeros(1, dtype=np.int32),
                                 n_bins[feature:feature + 1], node.sums, chosen)
                if chosen[0, bin_, side] == -np.inf:
                    self._release(node)
                    continue
                self._set_split(node, feature, bin_, bool(side), chosen[0, bin_, side])
                if node.histogram[feature, -1, -1] == 0:
                    # as find_best_splits: missing values, if any later, join the
                    # larger child (left_sums hold no missing rows to move)
                    left_count = node.left_sums[-1]
                    node.missing_left = bool(left_count >= node.count - left_count)
                splits.append((node, *self._split(node)))
            # a level may hold more histograms than the cache: its children are built instead
            for parent, _, _ in sorted(splits, key=lambda split: split[0].count):
                if self.pool.n_alive <= self.pool.capacity:
                    break
                self._release(parent)
            self._children_histograms(splits)
            level = [child for _, left, right in splits for child in (left, right)
                     if child.histogram is not None]
        for node in level:
            self._release(node)

    def _noisy(self, total, level):
        """random_strength on a level's summed gains: each candidate that the
        level's split would keep (a gain above min_gain per output) with the
        noise the searches add, from the level's summed parent scores and its
        first node's key; the others at -inf."""
        scores = np.empty_like(total)
        parent_score = float(self._scores(np.array([node.sums for node in level]),
                                          _NO_EXTRA_L2, None, None).sum())
        noisy_level_scores(node_noise_key(self._seed(), level[0].id), total, self.noise_scale,
                           parent_score, self.params["min_gain"] * self.n_outputs, scores)
        return scores

    def _seed(self):
        """The tree's seed for its nodes' draws, 0 when it drew none (the
        grower was given no rng): both loops key a node's draws so."""
        return 0 if self.tree_seed is None else self.tree_seed

    def _gain_table(self, histogram, features, n_bins, sums, table):
        """table[f, t, m] = the gain of each dense split of a node, for f in
        features, -inf where none (see split_gain_table)."""
        split_gain_table(*self._search_arguments(histogram, features, n_bins, sums), table,
                         self._threads_for(histogram[0].size * len(features)),
                         lambda_l1=self.lambda_l1)

    def _gathered_sums(self, node):
        rows = self.workspace.rows[node.start:node.stop]
        ordered = self.workspace.ordered(node.count, self.width)
        gather_gradients(self.grad, self.hess, rows, ordered, self._threads_for(node.count))
        return self._sums_of(ordered)

    def _sums_of(self, ordered):
        sums = np.empty(self.width)
        column_sums(ordered, len(ordered), sums)
        return sums

    def _selection_arguments(self):
        return (self.n_outputs, self.hess_width, self.hess_constant, self.params["lambda_l2"],
                self.top_k)

    def _values(self, sums, extra_l2=_NO_EXTRA_L2, bounds=None, anchors=None):
        """Leaf values -T(G) / (H + lambda + extra_l2) of the nodes whose
        [G, H, count] sums are the rows (or of the one node of 1-D sums),
        clipped to bounds (lower, upper) when given, and under path_smooth
        pulled toward anchors (their parents' values) when given."""
        return self._node_values(sums, extra_l2, bounds, anchors, with_scores=False)[0]

    def _scores(self, sums, extra_l2, bounds, anchors):
        """Each output's score of the nodes whose sums are the rows, their
        values bounded as in _values (see _core._split.node_values)."""
        return self._node_values(sums, extra_l2, bounds, anchors, with_scores=True)[1]

    def _node_values(self, sums, extra_l2, bounds, anchors, with_scores):
        """(values, scores) by one node_values call; scores empty unless with_scores."""
        rows = np.ascontiguousarray(sums, dtype=np.float64).reshape(-1, self.width)
        shape = (len(rows), self.n_outputs)
        values = np.empty(shape)
        scores = np.empty(shape if with_scores else (0, 0))
        lower, upper = _NO_BOUNDS if bounds is None else (
            np.ascontiguousarray(bound, dtype=np.float64).reshape(shape) for bound in bounds)
        smoothing = {} if anchors is None else self._smoothing(
            np.ascontiguousarray(anchors, dtype=np.float64).reshape(shape))
        node_values(rows, self.n_outputs, self.hess_width, self.hess_constant,
                    self.params["lambda_l2"], self.lambda_l1, extra_l2, lower, upper, values,
                    scores, **smoothing)
        if sums.ndim == 1:
            values, scores = values[0], scores.reshape(-1)
        return values, scores

    def _top_k_masks(self, improvement):
        """Per row, the top_k largest improvements."""
        mask = np.zeros(improvement.shape, dtype=bool)
        chosen = np.argpartition(-improvement, self.top_k - 1, axis=1)[:, :self.top_k]
        np.put_along_axis(mask, chosen, True, axis=1)
        return mask

    def _output_gains(self, split_sums, bounds, anchors, with_cat_l2):
        """For each split, its gain per output (summing to its gain) and which
        outputs it involves: all for dense, those a side or the parent keeps
        for sparse. split_sums: the (parents, left children, right children)
        sums, a row per split; bounds: the parents' (lower, upper) under
        monotone constraints, else None; anchors: the parents' values under
        path_smooth, else None; with_cat_l2: whether the search
        scored each split's children with cat_l2 added (a categorical set's),
        None for none.
        One pass over all the tree's splits."""
        d = self.n_outputs
        n_splits = len(split_sums[0])
        sums = np.concatenate(split_sums)
        extra_l2 = _NO_EXTRA_L2
        if with_cat_l2 is not None:
            extra_l2 = np.zeros((3, n_splits))
            extra_l2[1:, with_cat_l2] = self.params["cat_l2"]
            extra_l2 = extra_l2.reshape(-1)
        if bounds is not None:
            # values bounded by the parent's bounds, as the split search scored them
            bounds = tuple(np.tile(bound, (3, 1)) for bound in bounds)
        if anchors is not None:  # the parent's values pull all three, as in the search
            anchors = np.tile(anchors, (3, 1))
        parent, left, right = self._scores(sums, extra_l2, bounds,
                                           anchors).reshape(3, n_splits, d)
        if self.top_k is None:
            return 0.5 * (left + right - parent), np.ones(parent.shape, dtype=bool)
        keep_parent = self._top_k_masks(parent)
        if self.restricted:
            keep_left = keep_right = self._top_k_masks(left + right)
        else:
            keep_left, keep_right = self._top_k_masks(left), self._top_k_masks(right)
        gains = 0.5 * (np.where(keep_left, left, 0.0) + np.where(keep_right, right, 0.0)
                       - np.where(keep_parent, parent, 0.0))
        return gains, keep_left | keep_right | keep_parent

    def _leaf_outputs(self, node):
        """The outputs a sparse leaf keeps: its parent's shared set
        (restricted) or its own top k (unrestricted, root)."""
        if node.outputs is not None:
            return node.outputs
        outputs = np.empty(self.top_k, dtype=np.intp)
        select_top_k(node.sums, *self._selection_arguments(), outputs, lambda_l1=self.lambda_l1)
        return outputs

    def _to_tree(self, root):
        """The Tree of the grown nodes (see _finish_tree)."""
        arrays, leaves, splits = tree_structure(
            root, self.bin_mapper, None if self.categorical is None else self.categorical_flags)
        leaf_bounds = None
        if self.monotone is not None:
            leaf_bounds = tuple(np.array([getattr(node, side) for node in leaves])
                                for side in ("lower", "upper"))
        leaf_outputs = None
        if self.top_k is not None:
            leaf_outputs = np.array([self._leaf_outputs(node) for node in leaves])

        def split_parts():
            sums = tuple(np.array([node.sums for node in nodes]).reshape(-1, self.width)
                         for nodes in (splits, [node.left for node in splits],
                                       [node.right for node in splits]))
            bounds = None if self.monotone is None else tuple(
                np.array([getattr(node, side) for node in splits]).reshape(-1, self.n_outputs)
                for side in ("lower", "upper"))
            anchors = None if self.path_smooth <= 0 else np.array(
                [node.value for node in splits]).reshape(-1, self.n_outputs)
            return sums, bounds, anchors

        by_set = [node for node in splits if node.left_flags is not None]
        return self._finish_tree(
            arrays, np.array([node.start for node in leaves], dtype=np.intp),
            np.array([node.stop for node in leaves], dtype=np.intp),
            np.array([node.sums for node in leaves]), [node.feature for node in splits],
            split_parts, leaf_bounds, leaf_outputs,
            ([node.index for node in by_set], [node.feature for node in by_set],
             [node.left_flags for node in by_set]),
            np.array([node.value for node in leaves]) if self.path_smooth > 0 else None)

    def _finish_tree(self, arrays, leaf_start, leaf_stop, leaf_sums, split_features,
                     split_parts, leaf_bounds=None, leaf_outputs=None, sets=((), (), ()),
                     leaf_values=None):
        """The Tree of arrays (tree_structure's or tree_arrays'), with its
        leaves' values from their sums (clipped to leaf_bounds under monotone
        constraints, the leaf_outputs of sparse leaves; under path_smooth
        leaf_values, those kept as the leaves were made), each split's output
        gains (see _output_gains; split_parts() gives the splits' sums,
        bounds and anchors, asked for with several outputs only) and its categorical
        splits' sets: sets
        holds their nodes' numbers in the tree, features and left flags
        (n_flags each, the missing bin's included)."""
        self.leaf_start, self.leaf_stop = leaf_start, leaf_stop
        # kept for values set again later (a loss's renew_leaf_values), which
        # must stay within them as these do
        self.leaf_bounds = leaf_bounds
        values = (self._values(leaf_sums, bounds=leaf_bounds) if leaf_values is None
                  else np.array(leaf_values, dtype=np.float64))
        if leaf_outputs is not None:
            values = np.take_along_axis(values, leaf_outputs, axis=1)
        set_nodes, set_features, set_flags = sets
        if self.n_outputs == 1:
            # one output takes a split's whole gain, as the search scored it
            # (the same to 1e-15 as scoring its sums again: test_importance.py)
            gains = arrays["node_gain"][arrays["node_left"] >= 0].reshape(-1, 1)
            self.split_output_gains = (split_features, gains, np.ones(gains.shape, dtype=bool))
        else:
            with_cat_l2 = None
            if len(set_nodes):
                # the search scored the children of sets of ordered categories
                # with cat_l2, not those of one category (max_cat_to_onehot)
                ordered = (self.bin_mapper.n_bins_non_missing_[
                    np.asarray(split_features, dtype=np.intp)]
                    > self.params["max_cat_to_onehot"])
                with_cat_l2 = (np.isin(np.flatnonzero(arrays["node_left"] >= 0), set_nodes)
                               & ordered)
            self.split_output_gains = (split_features, *self._output_gains(
                *split_parts(), with_cat_l2))
        # each set as the ranks of the categories it sends left
        categories_left = {node: np.flatnonzero(flags[self.categorical[feature]])
                           for node, feature, flags in zip(set_nodes, set_features, set_flags)}
        tree = Tree(values, leaf_outputs, categories_left, **arrays)
        if len(set_nodes):  # the binned walk's view of the sets, built once per tree
            node_set = np.full(tree.n_nodes, -1, dtype=np.int32)
            node_set[set_nodes] = np.arange(len(set_nodes))
            tree.binned_sets = {"node_set": node_set,
                                "set_left_flags": np.array(set_flags, dtype=np.uint8)}
        return tree


def tree_structure(root, bin_mapper, categorical_flags=None):
    """(arrays, leaves, splits) of the nodes below root (each with left, right,
    count and, when split, feature, bin, missing_left and gain), numbered
    breadth-first so children come after parents: arrays holds Tree's node_*
    fields (see tree_arrays; categorical_flags: per feature, 1 where its
    splits send sets of categories left); leaf l of the Tree is leaves[l]."""
    nodes = [root]
    for node in nodes:
        if node.left is not None:
            nodes.extend((node.left, node.right))
    for index, node in enumerate(nodes):
        node.index = index
    is_split = [node.left is not None for node in nodes]
    counts = np.array([node.count for node in nodes], dtype=np.intp)
    # tree_arrays counts a node's rows as stop - start: here the nodes' rows
    # need not be ranges of one array (the sparse-output grower's are not)
    arrays, leaves, splits, _, _ = tree_arrays(
        np.arange(len(nodes), dtype=np.int32),
        np.array([node.left.index if split else -1 for node, split in zip(nodes, is_split)],
                 dtype=np.int32),
        np.array([node.right.index if split else -1 for node, split in zip(nodes, is_split)],
                 dtype=np.int32),
        np.zeros_like(counts), counts,
        *(np.array([getattr(node, name) if split else 0 for node, split in zip(nodes, is_split)],
                   dtype=dtype)
          for name, dtype in (("feature", np.int32), ("bin", np.int32),
                              ("missing_left", np.uint8), ("gain", np.float64))),
        _NO_FLAGS if categorical_flags is None else categorical_flags, bin_mapper.edges_,
        bin_mapper.n_edges_)
    return arrays, [nodes[i] for i in leaves], [nodes[i] for i in splits]


def common_bins(X_binned, n_histogram_bins):
    """Per feature (a row of dense X_binned), its most common histogram bin
    and that bin's share of the rows (estimated on up to SKIP_BIN_SAMPLE_ROWS)."""
    step = max(1, X_binned.shape[1] // SKIP_BIN_SAMPLE_ROWS)
    common = np.zeros(X_binned.shape[0], dtype=np.int32)
    share = np.zeros(X_binned.shape[0])
    # A feature at a time: a copy of the whole sample would be as large as the
    # binned data up to SKIP_BIN_SAMPLE_ROWS rows.
    for f, values in enumerate(X_binned[:, ::step]):
        counts = np.bincount(np.minimum(values, n_histogram_bins - 1))
        if len(counts):
            common[f] = np.argmax(counts)
            share[f] = counts[common[f]] / len(values)
    return common, share


class RowEntries:
    """Per row, the entries of the features built row by row whose value is not
    in their common bin (build_histograms_by_row), as slots of n_histogram_bins
    tall histograms."""

    def __init__(self, X_binned, n_histogram_bins, skipped_bins, by_row, n_threads):
        self.by_row = by_row  # per feature
        self.n_histogram_bins = n_histogram_bins
        self.indptr, self.slot = (immutable_copy(array) for array in row_entries(
            X_binned, np.flatnonzero(by_row).astype(np.int32), skipped_bins, n_histogram_bins,
            n_threads))
        self.mean_entries_per_row = len(self.slot) / max(1, X_binned.shape[1])
        self._split_of = (None, None)

    def split(self, features):
        """(wanted, column_features) of a tree that may split on features:
        a flag per feature of X for those built by row, and the others in
        their order, both read-only. Kept for the next tree, which without
        colsample_bytree asks for the same features: working them out cost
        a tenth of the Python around a small tree."""
        key = features.tobytes()
        # read once: runs on one Dataset share this cache, from several threads maybe
        kept = self._split_of
        if kept[0] != key:
            wanted = np.zeros(len(self.by_row), dtype=np.uint8)
            wanted[features] = self.by_row[features]
            column_features = np.ascontiguousarray(features[~self.by_row[features]])
            wanted.flags.writeable = column_features.flags.writeable = False
            kept = self._split_of = key, (wanted, column_features)
        return kept[1]


class GrowerWorkspace:
    """Buffers reused by every tree of one training run: the row partition,
    the partition scratch space, the gathered-gradient block and the
    histogram buffers. max_threads: the most threads any tree of the run
    gets (the thread governor may give a tree fewer). dense_layouts: where
    dense_layout keeps what it works out (a Dataset's, for its every run;
    None: this run's own)."""

    def __init__(self, n_rows, max_threads=1, dense_layouts=None):
        self.n_rows = n_rows
        self.max_threads = max_threads
        self._dense_layouts = {} if dense_layouts is None else dense_layouts
        self._pool = None
        self._histogram_block = None
        self._row_chunks = None
        self._every_row = np.arange(n_rows, dtype=ROW_DTYPE)
        self.rows = self._every_row.copy()
        self.left_buffer = np.empty(n_rows, dtype=ROW_DTYPE)
        self.right_buffer = np.empty(n_rows, dtype=ROW_DTYPE)
        self._ordered = np.empty(0, dtype=G_H_DTYPE)
        self._column = None
        self._grown_nodes = {}  # kind -> GrownNodes
        self.warned_of_large_histograms = False  # once a run

    def dense_layout(self, X_binned, bin_mapper):
        """(histogram rows per feature, skipped bins, RowEntries or None) of
        dense binned data: the bins a histogram build skips per feature (its
        most common, when SKIP_BIN_SHARE of the rows hold it, else -1) and the
        features built row by row (all those, where the slots allow).
        Computed once for the binned data (kept in dense_layouts: a Dataset's
        serve its every run), under the bounds of this module's settings."""
        n_histogram_bins = bin_mapper.histogram_bins
        key = (n_histogram_bins, SKIP_BIN_SHARE, MAX_ROW_WISE_SLOTS)
        if key not in self._dense_layouts:
            common, share = common_bins(X_binned, n_histogram_bins)
            skipped_bins = np.where(share >= SKIP_BIN_SHARE, common, -1).astype(np.int32)
            skipped_bins.flags.writeable = False  # shared by the runs
            by_row = ((skipped_bins >= 0)
                      & (X_binned.shape[0] * n_histogram_bins <= MAX_ROW_WISE_SLOTS))
            entries = (RowEntries(X_binned, n_histogram_bins, skipped_bins, by_row,
                                  self.max_threads) if by_row.any() else None)
            self._dense_layouts[key] = n_histogram_bins, skipped_bins, entries
        return self._dense_layouts[key]

    def histogram_block(self, shape, n_slots, value_bins):
        """n_slots histograms of shape in one array, for the loop in Cython;
        kept across trees as histogram_pool's buffers are. Zeroed once: the
        loop never writes a feature's rows between its value bins and the
        missing row (_histogram.zero_feature). Nothing reads them either, but
        0 keeps a sum over every row of a feature's histogram right."""
        block = self._histogram_block
        if block is None or block.shape[1:] != shape or len(block) < n_slots:
            block = self._histogram_block = zeroed_histograms((n_slots,) + shape, value_bins)
        return block[:n_slots]

    def row_chunk_histograms(self, shape, value_bins):
        """The ROW_CHUNKS - 1 histograms of shape into which builds by row add
        their chunks of a node's rows (build_histograms_by_row); kept across
        trees, as the histograms are. Only the rows of the features built by
        row are written."""
        chunks = self._row_chunks
        if chunks is None or chunks.shape[1:] != shape:
            chunks = self._row_chunks = zeroed_histograms((ROW_CHUNKS - 1,) + tuple(shape),
                                                          value_bins)
        return chunks

    def grown_nodes(self, max_nodes, width, bounded_outputs, n_flags, smoothed):
        """GrownNodes for at least max_nodes nodes (see GrownNodes), kept for
        the run's next trees of the same kind (a run's trees may alternate
        between widths: single-output trees of outputs with and without
        missing targets): allocating their 16 arrays cost more than a tenth
        of the Python around a small tree. The Tree copies what it keeps."""
        kind = width, bounded_outputs, n_flags, smoothed
        nodes = self._grown_nodes.get(kind)
        if nodes is None or len(nodes.start) < max_nodes:
            nodes = self._grown_nodes[kind] = GrownNodes(max_nodes, *kind)
        return nodes

    def histogram_pool(self, shape, capacity, value_bins):
        """The run's histogram pool, emptied of live buffers for a new tree.
        Kept across trees because a fresh buffer costs its page faults on first
        touch: at 2,000 rows that made building a histogram 7x slower than
        the build itself."""
        pool = self._pool
        if pool is None or pool.shape != shape or pool.capacity != capacity:
            pool = self._pool = _HistogramPool(shape, capacity, value_bins)
        # Buffers a finished tree did not give back are dropped, not counted.
        pool.n_alive = 0
        return pool

    def column_scratch(self, dtype):
        """n_rows scratch for a decompressed sparse column of bins of dtype."""
        if self._column is None or self._column.dtype != dtype:
            self._column = np.empty(self.n_rows, dtype=dtype)
        return self._column

    def reset_rows(self, row_sample=None):
        """Puts every row, or the sample's, at the front; returns how many."""
        if row_sample is None:
            self.rows[:] = self._every_row
            return self.n_rows
        self.rows[:len(row_sample)] = row_sample
        return len(row_sample)

    def ordered(self, n_rows, width):
        if self._ordered.size < n_rows * width:
            self._ordered = np.empty(self.n_rows * width, dtype=G_H_DTYPE)
        return self._ordered[: n_rows * width].reshape(n_rows, width)
