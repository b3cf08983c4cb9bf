"""BinMapper: quantile bin edges per feature and the mapping of raw X to bins."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._core import X_BINNED_DTYPE, X_DTYPE
from ._core._binning import map_to_bins
from .parallel import threads_for


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


def _feature_edges(column, max_bins):
    """Bin edges of one feature from its (sub)sampled values; one sort serves both
    the distinct values and the quantiles."""
    ordered = np.sort(column[~np.isnan(column)])
    if ordered.size == 0:
        return ordered
    distinct = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
    if distinct.size <= max_bins:
        return _distinct_value_edges(distinct)
    return _quantile_edges(ordered, max_bins)


class BinMapper:
    """Learns up to max_bins bins per feature from (a subsample of) X.

    Bins 0 .. n_bins_non_missing[f] - 1 hold values; bin index max_bins
    (`missing_bin`) holds NaN. A value x falls in bin b when
    edges[b - 1] < x <= edges[b]; +inf lands in the last value bin and -inf in
    the first.
    """

    def __init__(self, max_bins=255, subsample=200_000, seed=0, n_threads=1):
        self.max_bins = max_bins
        self.subsample = subsample
        self.seed = seed
        self.n_threads = n_threads

    @property
    def missing_bin(self):
        return self.max_bins

    def fit(self, X):
        n_rows, n_features = X.shape
        if self.subsample is not None and n_rows > self.subsample:
            rng = np.random.default_rng(self.seed)
            sample = np.sort(rng.choice(n_rows, self.subsample, replace=False))
            X = X[sample]
        # numpy's sort releases the GIL, so features are binned in parallel threads.
        with ThreadPoolExecutor(max(1, min(self.n_threads, n_features))) as pool:
            edges_per_feature = list(pool.map(
                lambda f: _feature_edges(np.asarray(X[:, f], dtype=X_DTYPE), self.max_bins),
                range(n_features)))
        self.n_bins_non_missing_ = np.array(
            [len(e) + 1 for e in edges_per_feature], dtype=np.int32
        )
        # A feature with one value and some NaN can still split "missing or not".
        self.has_missing_ = np.isnan(X).any(axis=0) if n_features else np.zeros(0, bool)
        width = max(1, max(len(e) for e in edges_per_feature)) if n_features else 1
        self.edges_ = np.full((n_features, width), np.inf, dtype=X_DTYPE)
        for f, e in enumerate(edges_per_feature):
            self.edges_[f, : len(e)] = e
        self.n_edges_ = np.ascontiguousarray(self.n_bins_non_missing_ - 1, dtype=np.int32)
        return self

    def transform(self, X):
        """X (n_rows, n_features) float32/float64 -> bins (n_features, n_rows) uint8."""
        out = np.empty((X.shape[1], X.shape[0]), dtype=X_BINNED_DTYPE)
        threads = threads_for(self.n_threads, X.size)
        map_to_bins(X, self.edges_, self.n_edges_, self.missing_bin, out, threads)
        return out

    def bin_threshold(self, feature, bin_index):
        """The raw threshold equivalent to 'bin <= bin_index' for feature."""
        if bin_index >= self.n_edges_[feature]:
            return np.inf
        return float(self.edges_[feature, bin_index])
