"""BinMapper: quantile bin edges per feature and the mapping of raw X to bins."""
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


def _quantile_edges(values, max_bins):
    """max_bins - 1 quantile edges of the finite values, made strictly increasing.
    Infinite values are left out of the quantiles: they land in the outer bins."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return _distinct_value_edges(np.unique(values))
    percentiles = np.linspace(0, 100, max_bins + 1)[1:-1]
    edges = np.unique(np.percentile(finite, percentiles, method="midpoint"))
    return edges[edges < finite.max()] if edges.size else edges


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
        edges_per_feature = []
        for f in range(n_features):
            column = np.asarray(X[:, f], dtype=X_DTYPE)
            present = column[~np.isnan(column)]
            distinct = np.unique(present)
            if distinct.size <= self.max_bins:
                edges = _distinct_value_edges(distinct)
            else:
                edges = _quantile_edges(present, self.max_bins)
            edges_per_feature.append(edges)
        self.n_bins_non_missing_ = np.array(
            [len(e) + 1 for e in edges_per_feature], dtype=np.int32
        )
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
