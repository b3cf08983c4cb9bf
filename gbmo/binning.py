"""BinMapper: quantile bin edges per feature and the mapping of raw X to bins.

Dense X is binned to a dense array (n_features, n_rows) of 8-bit bins, or
16-bit above 255 bins. scipy sparse X (CSR / CSC) is binned to a
SparseBinned: features with few rows outside the bin of 0 (their *zero bin*)
keep only those rows and bins, the others a dense row each, so the binned
data never takes n_rows x n_features bins.
"""

import copy

import numpy as np

from ._core import X_DTYPE, binned_dtype
from ._core._binning import map_to_bins
from ._core._histogram import MAX_ROW_WISE_SLOTS
from ._core._predict import predict_binned as _predict_binned_dense
from ._core._sparse import (count_off_zero_bins, decompress_column, map_sparse_to_bins,
                            predict_binned_mixed, row_slots, scatter_binned)
from .parallel import WORK_PER_ELEMENT, map_in_threads, threads_for
from .validation import check_sparse_features, is_scipy_sparse

# A feature of sparse X is stored sparsely when at most this fraction of its
# rows lie outside its zero bin: above it, a dense row of bins is smaller than
# the 5 or 6 bytes (row index + bin) a stored row takes, and its histograms,
# which read the node's gathered gradients in order, are faster than random
# reads by row.
SPARSE_MAX_DENSITY = 0.1
# Columns of dense X copied out at once to find their edges, at most: 32
# float64 of a row are four cache lines (blocks of 8-32 columns took
# 0.095-0.099 s of 100,000 x 300, of 64 0.21, of 128 0.36).
_EDGE_BLOCK = 32
# Rows of such a block copied at once (256-2048 alike, 4096 slower)
_TILE_ROWS = 1024


def _distinct_value_edges(distinct):
    """Edges between adjacent distinct values. Each edge e satisfies a <= e < b so
    that a and b land in different bins even where the midpoint rounds up to b
    or overflows (a/2 + b/2 avoids the overflow of a + b near 1e308)."""
    lower, upper = distinct[:-1], distinct[1:]
    with np.errstate(invalid="ignore", over="ignore"):
        middle = lower / 2 + upper / 2
    return np.where((middle >= upper) | np.isnan(middle), lower, middle)


def _quantile_edges(ordered, max_bins):
    """max_bins - 1 quantile edges of the sorted values' finite part, each the
    midpoint of the two nearest order statistics, made strictly increasing.
    Infinite values are left out of the quantiles: they land in the outer bins."""
    finite = ordered[np.isfinite(ordered)]
    if finite.size == 0:
        return _distinct_value_edges(np.unique(ordered))
    positions = np.linspace(0, finite.size - 1, max_bins + 1)[1:-1]
    middle = finite[np.floor(positions).astype(np.intp)] / 2 + finite[np.ceil(positions).astype(np.intp)] / 2
    edges = np.unique(middle)
    return edges[edges < finite[-1]]


def _merged_edges(edges, counts_at_most, min_data_in_bin):
    """edges without those that leave a bin fewer than min_data_in_bin values,
    LightGBM's min_data_in_bin: from the lowest bin up, an edge is kept once
    its bin holds that many values, and a last bin short of them joins the
    one before. counts_at_most(edges): how many values are <= each edge."""
    if min_data_in_bin <= 1 or edges.size == 0:
        return edges
    at_most = counts_at_most(edges)
    total = counts_at_most(np.array([np.inf], dtype=edges.dtype))[0]
    kept, below = [], 0
    for i, count in enumerate(at_most):
        if count - below >= min_data_in_bin:
            kept.append(i)
            below = count
    if kept and total - below < min_data_in_bin:
        kept.pop()
    return edges[kept]


def _feature_edges(column, max_bins, min_data_in_bin=1):
    """Bin edges of one feature from its (sub)sampled values; one sort serves both
    the distinct values and the quantiles."""
    ordered = np.sort(column[~np.isnan(column)])
    if ordered.size == 0:
        return ordered
    distinct = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
    if distinct.size <= max_bins:
        edges = _distinct_value_edges(distinct)
    else:
        edges = _quantile_edges(ordered, max_bins)
    return _merged_edges(edges, lambda e: np.searchsorted(ordered, e, side="right"),
                         min_data_in_bin)


def _columns(X, start, width):
    """Columns start .. start + width of X as contiguous rows of X_DTYPE,
    copied a tile of rows at a time: a tile's cache lines stay in cache
    while each of its columns is read out (numpy's transposing copy of the
    whole height took 0.44 s of 100,000 x 1,000, by tiles 0.19-0.23)."""
    columns = np.empty((min(width, X.shape[1] - start), X.shape[0]), dtype=X_DTYPE)
    for row in range(0, X.shape[0], _TILE_ROWS):
        columns[:, row:row + _TILE_ROWS] = X[row:row + _TILE_ROWS, start:start + width].T
    return columns


def _column_edges(column, max_bins, min_data_in_bin):
    """_feature_edges of a dense column, by _sparse_feature_edges' sort of the
    values other than 0 when zeros are at least half of them (the same
    edges; on mostly-zero columns the smaller sort is faster). Values are
    counted first, so a column of few zeros takes no copy of its values."""
    nonzero = column != 0
    n_zeros = column.size - np.count_nonzero(nonzero)
    if 2 * n_zeros < column.size:
        return _feature_edges(column, max_bins, min_data_in_bin)
    return _sparse_feature_edges(column[nonzero], n_zeros, max_bins, min_data_in_bin)


def _sparse_feature_edges(values, n_zeros, max_bins, min_data_in_bin=1):
    """_feature_edges of a column given as its stored values plus n_zeros zeros
    that are not materialised: the same edges, bit for bit, as on the dense
    column, at the cost of the stored values only."""
    values = values[~np.isnan(values)]
    if n_zeros == 0:
        return _feature_edges(values, max_bins, min_data_in_bin)
    ordered = np.sort(values)
    negative = ordered[: np.searchsorted(ordered, 0.0, side="left")]
    positive = ordered[np.searchsorted(ordered, 0.0, side="right"):]
    n_zeros += ordered.size - negative.size - positive.size  # stored zeros
    distinct = [part[np.concatenate(([True], part[1:] != part[:-1]))] if part.size else part
                for part in (negative, positive)]

    def counts_at_most(edges):
        return (np.searchsorted(ordered, edges, side="right")
                + np.where(edges >= 0.0, n_zeros - (ordered == 0.0).sum(), 0))

    if distinct[0].size + 1 + distinct[1].size <= max_bins:
        return _merged_edges(
            _distinct_value_edges(np.concatenate((distinct[0], [0.0], distinct[1]))),
            counts_at_most, min_data_in_bin)
    # The finite order statistics: negative finite values, the zeros, positive finite values.
    negative = negative[np.isfinite(negative)]
    positive = positive[np.isfinite(positive)]
    n_negative, size = negative.size, negative.size + n_zeros + positive.size

    def order_statistic(index):
        out = np.zeros(index.shape, dtype=X_DTYPE)
        low = index < n_negative
        out[low] = negative[index[low]]
        high = index >= n_negative + n_zeros
        out[high] = positive[index[high] - n_negative - n_zeros]
        return out

    positions = np.linspace(0, size - 1, max_bins + 1)[1:-1]
    middle = (order_statistic(np.floor(positions).astype(np.intp)) / 2
              + order_statistic(np.ceil(positions).astype(np.intp)) / 2)
    edges = np.unique(middle)
    return _merged_edges(edges[edges < order_statistic(np.array([size - 1]))[0]],
                         counts_at_most, min_data_in_bin)


class SparseBinned:
    """Binned sparse X in a mixed layout, standing in for the dense
    (n_features, n_rows) array of bins (`shape` and `dtype` are the same).

    Feature f is dense (is_sparse[f] == 0) as row column_of[f] of `dense`
    (n_dense, n_rows), or sparse as column s = column_of[f] of a CSC-like
    layout: indices[indptr[s]:indptr[s + 1]] (uint32, increasing) are the rows
    outside its zero bin zero_bin[s], bins[...] their bins.
    """

    def __init__(self, n_rows, dense, is_sparse, column_of, indptr, indices, bins, zero_bin):
        self.n_rows = n_rows
        self.dense, self.is_sparse, self.column_of = dense, is_sparse, column_of
        self.indptr, self.indices, self.bins, self.zero_bin = indptr, indices, bins, zero_bin
        self.shape = (len(is_sparse), n_rows)
        self._by_row = self._row_entries = None

    def by_row(self):
        """The sparse columns' entries again by row (CSR-like, made once):
        (row_indptr int64 (n_rows + 1,), the entries' sparse columns int32,
        their bins), each row's entries in column order; for kernels that
        read a few rows' entries (a small node's) rather than a few columns."""
        if self._by_row is None:
            column = np.repeat(np.arange(len(self.indptr) - 1, dtype=np.int32),
                               np.diff(self.indptr))
            order = np.argsort(self.indices, kind="stable")
            row_indptr = np.zeros(self.n_rows + 1, dtype=np.int64)
            np.cumsum(np.bincount(self.indices, minlength=self.n_rows), out=row_indptr[1:])
            self._by_row = (row_indptr, np.ascontiguousarray(column[order]),
                            np.ascontiguousarray(self.bins[order]))
        return self._by_row

    def row_entries(self, n_histogram_bins):
        """(indptr, slot, skipped_bins) of the sparse columns for
        _histogram.build_histograms_by_row with histograms n_histogram_bins
        tall (made once per height): row r's stored entries as the slots
        f * n_histogram_bins + b of their features' histogram rows,
        slot[indptr[r]:indptr[r + 1]], and per feature the row of its zero
        bin (-1 for the dense features), whose sums are a node's totals minus
        the other rows'. A node's histograms then cost its own rows' entries,
        not every stored value of the columns."""
        if self._row_entries is None or self._row_entries[0] != n_histogram_bins:
            n_features = len(self.is_sparse)
            if n_features * n_histogram_bins > MAX_ROW_WISE_SLOTS:
                raise ValueError(f"{n_features} features x {n_histogram_bins} histogram bins "
                                 f"of sparse X are more than the {MAX_ROW_WISE_SLOTS} slots "
                                 "its histograms can address: give fewer max_bins")
            sparse_features = np.flatnonzero(self.is_sparse)
            feature_of_column = np.empty(len(self.indptr) - 1, dtype=np.int64)
            feature_of_column[self.column_of[sparse_features]] = sparse_features
            row_indptr, slot = row_slots(self.indptr, self.indices, self.bins,
                                         feature_of_column, n_histogram_bins, self.n_rows)
            skipped_bins = np.full(n_features, -1, dtype=np.int32)
            skipped_bins[sparse_features] = np.minimum(
                self.zero_bin[self.column_of[sparse_features]], n_histogram_bins - 1)
            self._row_entries = n_histogram_bins, (row_indptr, slot, skipped_bins)
        return self._row_entries[1]

    @property
    def dtype(self):
        return self.bins.dtype

    @property
    def nnz(self):
        return len(self.indices)

    @property
    def nbytes(self):
        return sum(a.nbytes for a in (self.dense, self.is_sparse, self.column_of, self.indptr,
                                      self.indices, self.bins, self.zero_bin))

    def split_features(self, features):
        """(dense features, their dense rows, sparse features)."""
        features = np.asarray(features, dtype=np.int32)
        sparse = self.is_sparse[features].astype(bool)
        dense = features[~sparse]
        return tuple(np.ascontiguousarray(a, dtype=np.int32)
                     for a in (dense, self.column_of[dense], features[sparse]))

    def column(self, feature, out=None):
        """Feature's bins for every row: a view of the dense row, or the sparse
        column decompressed into out (n_rows scratch of dtype, allocated if None)."""
        c = int(self.column_of[feature])
        if not self.is_sparse[feature]:
            return self.dense[c]
        if out is None:
            out = np.empty(self.n_rows, dtype=self.dtype)
        decompress_column(self.indptr, self.indices, self.bins, c, self.zero_bin[c], out)
        return out

    def __getitem__(self, feature):
        return self.column(feature)

    def bins_of_rows(self, feature, rows):
        """Feature's bins of the given rows: a gather from the dense row, or
        the sparse column's listed rows found by binary search (O(len(rows)
        log), not the column's n_rows)."""
        c = int(self.column_of[feature])
        if not self.is_sparse[feature]:
            return self.dense[c, rows]
        start = int(self.indptr[c])
        listed = self.indices[start:self.indptr[c + 1]]
        place = np.searchsorted(listed, rows)
        found = place < len(listed)
        found[found] = listed[place[found]] == rows[found]
        out = np.full(len(rows), self.zero_bin[c], dtype=self.dtype)
        out[found] = self.bins[start + place[found]]
        return out

    def toarray(self):
        """The dense (n_features, n_rows) layout (for tests and small data only)."""
        out = np.empty(self.shape, dtype=self.dtype)
        for f in range(self.shape[0]):
            out[f] = self.column(f)
        return out

    def predict(self, missing_bin, *arguments):
        """_predict.predict_binned's arguments after (X_binned, missing_bin)."""
        predict_binned_mixed(self.dense, self.column_of, self.is_sparse, self.indptr,
                             self.indices, self.bins, self.zero_bin, self.n_rows, missing_bin,
                             *arguments)


def predict_binned(X_binned, missing_bin, *arguments, **categorical):
    """_predict.predict_binned for a dense binned array or a SparseBinned
    (categorical splits, the keywords, need dense X)."""
    if isinstance(X_binned, SparseBinned):
        return X_binned.predict(missing_bin, *arguments)
    return _predict_binned_dense(X_binned, missing_bin, *arguments, **categorical)


def check_bins_by_feature(max_bins_by_feature, n_features):
    """max_bins_by_feature, when given, has a value per feature."""
    if max_bins_by_feature is not None and len(max_bins_by_feature) != n_features:
        raise ValueError(f"max_bins_by_feature has {len(max_bins_by_feature)} values for "
                         f"{n_features} features: give one per feature")


class BinMapper:
    """Learns up to max_bins bins per feature from (a subsample of) X.

    Bins 0 .. n_bins_non_missing[f] - 1 hold values; bin index max_bins
    (`missing_bin`) holds NaN. A value x falls in bin b when
    edges[b - 1] < x <= edges[b]; +inf lands in the last value bin and -inf in
    the first.
    """

    # (mapper, features) of one made by with_features_of: the mapper whose
    # edges it has but for those features'
    shared_from = (None, None)

    def __init__(self, max_bins=255, subsample=200_000, seed=0, n_threads=1, min_data_in_bin=1,
                 max_bins_by_feature=None):
        self.max_bins = max_bins
        self.subsample = subsample
        self.seed = seed
        self.n_threads = n_threads
        self.min_data_in_bin = min_data_in_bin
        # each feature's own max_bins (LightGBM's max_bin_by_feature), or None
        self.max_bins_by_feature = max_bins_by_feature

    @property
    def missing_bin(self):
        """Above every feature's value bins."""
        if self.max_bins_by_feature is None:
            return self.max_bins
        return max(self.max_bins_by_feature)

    @property
    def histogram_bins(self):
        """Rows of a feature's histogram: the most value bins any feature has,
        plus the last one for missing values (binned as missing_bin). On
        binary features at d = 159 this makes a histogram 1,836 x 3 x 319
        float64 (14 MB) instead of 1,836 x 256 x 319 (1.2 GB)."""
        return int(self.n_bins_non_missing_.max(initial=0)) + 1

    def fit(self, X, categorical=()):
        """X: a dense array, or scipy sparse CSR / CSC (canonical, see
        validation.check_sparse_features), whose edges come from the stored
        values plus the count of implicit zeros: the same as on X densified.
        categorical: the features whose values are category ranks, a bin
        each, which min_data_in_bin does not merge."""
        self._unmerged = frozenset(categorical)
        if is_scipy_sparse(X):
            X = check_sparse_features(X)
        n_rows, n_features = X.shape
        check_bins_by_feature(self.max_bins_by_feature, n_features)
        if self.subsample is not None and n_rows > self.subsample:
            rng = np.random.default_rng(self.seed)
            sample = np.sort(rng.choice(n_rows, self.subsample, replace=False))
            X = X[sample]
        if is_scipy_sparse(X):
            edges_per_feature, self.has_missing_ = self._sparse_edges(X)
        else:
            edges_per_feature, self.has_missing_ = self._dense_edges(X)
        self.n_bins_non_missing_ = np.array(
            [len(e) + 1 for e in edges_per_feature], dtype=np.int32
        )
        width = max(1, max(len(e) for e in edges_per_feature)) if n_features else 1
        self.edges_ = np.full((n_features, width), np.inf, dtype=X_DTYPE)
        for f, e in enumerate(edges_per_feature):
            self.edges_[f, : len(e)] = e
        self.n_edges_ = np.ascontiguousarray(self.n_bins_non_missing_ - 1, dtype=np.int32)
        return self

    def _min_data_in_bin(self, feature):
        return 1 if feature in self._unmerged else self.min_data_in_bin

    def _max_bins(self, feature):
        return (self.max_bins if self.max_bins_by_feature is None
                else self.max_bins_by_feature[feature])

    def _dense_edges(self, X):
        """Edges and has-missing flags of each column of dense X. Columns are
        copied out a block at a time (a row-major column read alone cost a
        cache miss a value: 0.3 s of 100,000 x 300, its block copies 0.1),
        and a column mostly of zeros sorts its other values only
        (_sparse_feature_edges: the same edges, 2.6x faster at 3% nonzero).
        numpy's sort releases the GIL, so blocks are binned in parallel
        threads."""
        # at least four blocks a thread, so that threads finish together
        width = max(_EDGE_BLOCK // 4, min(_EDGE_BLOCK, -(-X.shape[1] // (4 * self.n_threads))))

        def edges_of_block(start):
            block = _columns(X, start, width)
            return [(_column_edges(column, self._max_bins(f), self._min_data_in_bin(f)),
                      bool(np.isnan(column).any()))
                     for f, column in enumerate(block, start)]

        # A feature with one value and some NaN can still split "missing or not".
        results = [r for block in map_in_threads(edges_of_block, range(0, X.shape[1], width),
                                                 self.n_threads)
                   for r in block]
        return [e for e, _ in results], np.array([m for _, m in results], dtype=bool)

    def _sparse_edges(self, X):
        """Edges and has-missing flags of each column of sparse X, column by column."""
        n_rows, n_features = X.shape
        X = X.tocsc()
        indptr, data = X.indptr, X.data

        def edges_of(f):
            values = np.asarray(data[indptr[f]:indptr[f + 1]], dtype=X_DTYPE)
            return (_sparse_feature_edges(values, n_rows - values.size, self._max_bins(f),
                                          self._min_data_in_bin(f)),
                    bool(np.isnan(values).any()))

        # Features in chunks: one task per feature would cost more than its work.
        chunks = np.array_split(np.arange(n_features), min(n_features, 16 * self.n_threads))
        results = [r for chunk in map_in_threads(lambda c: [edges_of(f) for f in c], chunks,
                                                 self.n_threads)
                   for r in chunk]
        return [e for e, _ in results], np.array([m for _, m in results], dtype=bool)

    @property
    def zero_bin_(self):
        """The bin of the value 0 for each feature (edges are padded with +inf)."""
        return (self.edges_ < 0).sum(axis=1).astype(binned_dtype(self.missing_bin))

    def transform(self, X, max_sparse_density=None):
        """X (n_rows, n_features) float32/float64 -> bins (n_features, n_rows),
        8-bit up to 255 bins and 16-bit beyond (binned_dtype);
        scipy sparse CSR / CSC X -> SparseBinned, whose features with at most
        max_sparse_density (default SPARSE_MAX_DENSITY) of their rows outside
        the zero bin are stored sparsely."""
        if is_scipy_sparse(X):
            return self._transform_sparse(X, max_sparse_density)
        return self.transform_features(X, np.arange(X.shape[1]))

    def transform_features(self, columns, features):
        """The bins (len(features), n_rows) of dense columns, the values of
        features (indices) in their order."""
        out = np.empty((columns.shape[1], columns.shape[0]), dtype=binned_dtype(self.missing_bin))
        map_to_bins(columns, np.ascontiguousarray(self.edges_[features]),
                    np.ascontiguousarray(self.n_edges_[features]), self.missing_bin, out,
                    threads_for(self.n_threads, columns.size))
        return out

    def with_features_of(self, features, other):
        """A copy whose features' (indices) edges are other's, a BinMapper
        fitted to those features' columns alone, in their order; its
        shared_from names this mapper and those features."""
        mapper = copy.copy(self)
        mapper.shared_from = (self, list(features))
        edges = np.full((len(self.edges_), max(self.edges_.shape[1], other.edges_.shape[1])),
                        np.inf, dtype=X_DTYPE)
        edges[:, :self.edges_.shape[1]] = self.edges_
        edges[features] = np.inf
        edges[features, :other.edges_.shape[1]] = other.edges_
        mapper.edges_ = edges
        mapper.n_bins_non_missing_ = self.n_bins_non_missing_.copy()
        mapper.n_bins_non_missing_[features] = other.n_bins_non_missing_
        mapper.n_edges_ = np.ascontiguousarray(mapper.n_bins_non_missing_ - 1, dtype=np.int32)
        mapper.has_missing_ = self.has_missing_.copy()
        mapper.has_missing_[features] = other.has_missing_
        return mapper

    def _transform_sparse(self, X, max_sparse_density):
        if max_sparse_density is None:
            max_sparse_density = SPARSE_MAX_DENSITY
        X = check_sparse_features(X)
        n_rows, n_features = X.shape
        by_row = X.format == "csr"
        indptr, indices = X.indptr, X.indices
        if indptr.dtype not in (np.int32, np.int64):
            indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
        # 1. the bin of every stored value, 2. per feature, how many leave the zero bin
        dtype = binned_dtype(self.missing_bin)
        stored = np.empty(X.nnz, dtype=dtype)
        map_sparse_to_bins(X.data, indptr, indices, by_row, self.edges_, self.n_edges_,
                           self.missing_bin, stored,
                           threads_for(self.n_threads, X.nnz * WORK_PER_ELEMENT))
        zero_bin = self.zero_bin_
        counts = np.zeros(n_features, dtype=np.int64)
        count_off_zero_bins(stored, indptr, indices, by_row, zero_bin, counts)
        # 3. the layout: sparse features' CSC-like arrays, dense features' rows
        is_sparse = (counts <= max_sparse_density * n_rows).astype(np.uint8)
        sparse_features = np.flatnonzero(is_sparse)
        dense_features = np.flatnonzero(is_sparse == 0)
        column_of = np.zeros(n_features, dtype=np.int32)
        column_of[sparse_features] = np.arange(len(sparse_features))
        column_of[dense_features] = np.arange(len(dense_features))
        new_indptr = np.zeros(len(sparse_features) + 1, dtype=np.int64)
        np.cumsum(counts[sparse_features], out=new_indptr[1:])
        new_indices = np.empty(new_indptr[-1], dtype=np.uint32)
        new_bins = np.empty(new_indptr[-1], dtype=dtype)
        dense = np.empty((len(dense_features), n_rows), dtype=dtype)
        dense[:] = zero_bin[dense_features, None]
        # 4. every stored value outside its zero bin to its place
        scatter_binned(stored, indptr, indices, by_row, zero_bin, is_sparse, column_of,
                       new_indptr[:-1].copy(), new_indices, new_bins, dense)
        del stored
        return SparseBinned(n_rows, dense, is_sparse, column_of, new_indptr, new_indices,
                            new_bins, np.ascontiguousarray(zero_bin[sparse_features]))

    def bins_of(self, feature, values):
        """The value bins of one feature's values (not NaN), by transform's
        rule: x falls in bin b when edges[b - 1] < x <= edges[b]."""
        return np.searchsorted(self.edges_[feature, :self.n_edges_[feature]], values,
                               side="left")

    def bin_threshold(self, feature, bin_index):
        """The raw threshold equivalent to 'bin <= bin_index' for feature
        (elementwise over arrays of features and bins): +inf from the last
        value bin on."""
        feature, bin_index = np.asarray(feature), np.asarray(bin_index)
        edges = self.edges_[feature, np.minimum(bin_index, self.edges_.shape[1] - 1)]
        return np.where(bin_index >= self.n_edges_[feature], np.inf, edges)
