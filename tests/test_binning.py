"""BinMapper and the map_to_bins kernel against plain-numpy references."""
import numpy as np
import pytest

from gbmo._core import X_BINNED_DTYPE, X_DTYPE, binned_dtype
from gbmo._core._binning import map_to_bins
from gbmo.binning import BinMapper


# -- references ---------------------------------------------------------------
def reference_bins(X, edges, n_edges, missing_bin):
    """bin = number of edges strictly below x (a plain Python loop); NaN -> missing."""
    X = np.asarray(X, dtype=np.float64)
    out = np.empty((X.shape[1], X.shape[0]), dtype=np.int64)
    for f in range(X.shape[1]):
        feature_edges = [float(e) for e in edges[f, : n_edges[f]]]
        for i in range(X.shape[0]):
            x = float(X[i, f])
            if np.isnan(x):
                out[f, i] = missing_bin
            else:
                out[f, i] = sum(1 for e in feature_edges if e < x)
    return out


def fitted_edges(mapper, f):
    return mapper.edges_[f, : mapper.n_edges_[f]]


def assert_in_edge_interval(mapper, X, binned):
    """edges[b - 1] < x <= edges[b] for every non-missing value; NaN -> missing bin."""
    X = np.asarray(X, dtype=np.float64)
    for f in range(X.shape[1]):
        edges = fitted_edges(mapper, f)
        n_edges = len(edges)
        for i in range(X.shape[0]):
            x, b = X[i, f], int(binned[f, i])
            if np.isnan(x):
                assert b == mapper.missing_bin, (f, i, x, b)
                continue
            assert 0 <= b <= n_edges, (f, i, x, b, n_edges)
            assert b < mapper.n_bins_non_missing_[f]
            if b > 0:
                assert edges[b - 1] < x, (f, i, x, b, edges[b - 1])
            if b < n_edges:
                assert x <= edges[b], (f, i, x, b, edges[b])


def assert_edges_strictly_increasing(mapper):
    for f in range(mapper.edges_.shape[0]):
        edges = fitted_edges(mapper, f)
        assert not np.any(np.isnan(edges)), (f, edges)
        assert np.all(edges[1:] > edges[:-1]), (f, edges)
        assert mapper.n_bins_non_missing_[f] == len(edges) + 1
        assert 1 <= mapper.n_bins_non_missing_[f] <= mapper.max_bins


def random_matrix(rng, n_rows, n_features, nan_fraction=0.1):
    """Columns of different kinds: continuous, few distinct values, heavy duplicates."""
    columns = []
    for f in range(n_features):
        kind = f % 4
        if kind == 0:
            col = rng.normal(size=n_rows)
        elif kind == 1:
            col = rng.integers(0, 7, size=n_rows).astype(float)
        elif kind == 2:
            col = np.where(rng.random(n_rows) < 0.7, 3.0, rng.exponential(size=n_rows))
        else:
            col = np.round(rng.normal(size=n_rows) * 30) / 3
        col[rng.random(n_rows) < nan_fraction] = np.nan
        columns.append(col)
    return np.column_stack(columns)


# -- map_to_bins kernel -------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("missing_bin", [200, 1000])  # 1,000: 16-bit bins
def test_map_to_bins_counts_edges_strictly_below(dtype, seed, missing_bin):
    rng = np.random.default_rng(seed)
    n_rows, n_features, width = 60, 5, 9
    edges = np.sort(rng.normal(size=(n_features, width)), axis=1)
    n_edges = rng.integers(0, width + 1, size=n_features).astype(np.int32)
    X = rng.normal(size=(n_rows, n_features))
    # values exactly on an edge must go to the bin the edge closes (x <= edge)
    for f in range(n_features):
        if n_edges[f]:
            X[: n_edges[f], f] = edges[f, : n_edges[f]]
    nan_mask = rng.random(X.shape) < 0.1
    nan_mask[:width] = False
    X[nan_mask] = np.nan
    X = X.astype(dtype)
    if dtype is np.float32:  # edges representable in float32 so the ties are exact
        edges = edges.astype(np.float32).astype(np.float64)
        for f in range(n_features):
            X[: n_edges[f], f] = edges[f, : n_edges[f]]
    out = np.empty((n_features, n_rows), dtype=binned_dtype(missing_bin))
    map_to_bins(X, edges, n_edges, missing_bin, out, 2)
    np.testing.assert_array_equal(out, reference_bins(X, edges, n_edges, missing_bin))
    # the rows put exactly on an edge land in that edge's bin
    for f in range(n_features):
        np.testing.assert_array_equal(out[f, : n_edges[f]], np.arange(n_edges[f]))


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_map_to_bins_memory_orders_and_threads(n_threads):
    rng = np.random.default_rng(7)
    big = rng.normal(size=(41, 12))
    big[rng.random(big.shape) < 0.2] = np.nan
    edges = np.sort(rng.normal(size=(6, 5)), axis=1)
    n_edges = np.array([5, 0, 3, 5, 1, 2], dtype=np.int32)
    views = {
        "C": np.ascontiguousarray(big[:, :6]),
        "F": np.asfortranarray(big[:, :6]),
        "strided": big[::2, ::2],
        "reversed": big[::-3, ::-2][:, :6],
        "read-only": np.ascontiguousarray(big[:, :6]),
        "broadcast": np.broadcast_to(big[3, :6], (9, 6)),
    }
    views["read-only"].setflags(write=False)
    for name, X in views.items():
        X = X[:, :6]
        out = np.empty((6, X.shape[0]), dtype=X_BINNED_DTYPE)
        map_to_bins(X, edges, n_edges, 255, out, n_threads)
        np.testing.assert_array_equal(out, reference_bins(X, edges, n_edges, 255),
                                      err_msg=name)


def test_map_to_bins_empty_input():
    edges = np.zeros((3, 1))
    n_edges = np.ones(3, dtype=np.int32)
    out = np.empty((3, 0), dtype=X_BINNED_DTYPE)
    map_to_bins(np.empty((0, 3)), edges, n_edges, 255, out, 2)
    assert out.shape == (3, 0)


# -- BinMapper ----------------------------------------------------------------
@pytest.mark.parametrize("max_bins", [2, 5, 16, 255, 256, 1000])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_value_in_its_edge_interval(max_bins, seed):
    rng = np.random.default_rng(seed)
    X = random_matrix(rng, 600, 8)
    mapper = BinMapper(max_bins=max_bins).fit(X)
    binned = mapper.transform(X)
    # a byte a bin up to 255 bins and the missing one; two above
    assert binned.dtype == (np.uint8 if max_bins <= 255 else np.uint16)
    assert binned.shape == (8, 600)
    assert binned.flags.c_contiguous
    assert_edges_strictly_increasing(mapper)
    assert_in_edge_interval(mapper, X, binned)
    np.testing.assert_array_equal(
        binned, reference_bins(X, mapper.edges_, mapper.n_edges_, mapper.missing_bin))
    # values and bins are in the same order: binning is monotone
    for f in range(X.shape[1]):
        present = ~np.isnan(X[:, f])
        order = np.argsort(X[present, f], kind="stable")
        assert np.all(np.diff(binned[f, present][order].astype(int)) >= 0)


def test_nan_goes_to_missing_bin_and_nowhere_else():
    rng = np.random.default_rng(3)
    X = random_matrix(rng, 200, 4, nan_fraction=0.3)
    for max_bins in (3, 40, 255):
        mapper = BinMapper(max_bins=max_bins).fit(X)
        binned = mapper.transform(X)
        assert mapper.missing_bin == max_bins
        np.testing.assert_array_equal(binned == max_bins, np.isnan(X).T)
        limit = np.broadcast_to(mapper.n_bins_non_missing_[:, None], binned.shape)
        present = ~np.isnan(X).T
        assert np.all(binned[present] < limit[present])


@pytest.mark.parametrize("case", ["duplicates", "huge", "infinite", "near_max", "tiny",
                                  "adjacent"])
@pytest.mark.parametrize("max_bins", [3, 10, 255])
def test_edges_strictly_increasing_on_hard_columns(case, max_bins):
    rng = np.random.default_rng(11)
    n = 400
    if case == "duplicates":
        col = rng.choice([1.0, 2.0, 2.0, 2.0, 2.0, 5.0], size=n)
        col[:50] = rng.normal(size=50)
    elif case == "huge":
        col = rng.choice([-1e300, 1e300, -1.0, 0.0, 1.0], size=n)
        col[:100] = rng.normal(size=100) * 1e300
    elif case == "infinite":
        col = rng.normal(size=n)
        col[rng.random(n) < 0.2] = np.inf
        col[rng.random(n) < 0.2] = -np.inf
    elif case == "near_max":
        col = rng.choice([-1.7e308, 1.7e308, -np.finfo(float).max, np.finfo(float).max,
                          0.0], size=n)
        col[:100] = rng.uniform(-1.0, 1.0, size=100) * 1.7e308
    elif case == "tiny":  # subnormals: x/2 rounds
        tiny = np.finfo(float).smallest_subnormal
        col = rng.integers(-40, 40, size=n) * tiny
    else:  # neighbouring doubles: the midpoint rounds onto one of them
        col = 1.0 + rng.integers(0, 20, size=n) * np.spacing(1.0)
    col[rng.random(n) < 0.05] = np.nan
    X = np.column_stack([col, col[::-1].copy()])
    mapper = BinMapper(max_bins=max_bins).fit(X)
    assert_edges_strictly_increasing(mapper)
    binned = mapper.transform(X)
    assert_in_edge_interval(mapper, X, binned)
    # with few distinct values, every one of them keeps its own bin
    for f in range(2):
        distinct = np.unique(X[~np.isnan(X[:, f]), f])
        if len(distinct) <= max_bins:
            assert mapper.n_bins_non_missing_[f] == len(distinct)
            bins_of_distinct = [np.unique(binned[f, X[:, f] == v]) for v in distinct]
            assert all(len(b) == 1 for b in bins_of_distinct)
            np.testing.assert_array_equal(np.concatenate(bins_of_distinct),
                                          np.arange(len(distinct)))


def test_infinities_land_in_outer_bins():
    rng = np.random.default_rng(5)
    for max_bins in (4, 255):
        col = rng.normal(size=500)
        col[:20] = np.inf
        col[20:40] = -np.inf
        X = col[:, None]
        mapper = BinMapper(max_bins=max_bins).fit(X)
        binned = mapper.transform(X)[0]
        assert np.all(binned[:20] == mapper.n_bins_non_missing_[0] - 1)
        assert np.all(binned[20:40] == 0)
        assert_in_edge_interval(mapper, X, binned[None, :])


def test_float32_input_matches_float64_of_same_values():
    rng = np.random.default_rng(8)
    X32 = random_matrix(rng, 300, 6).astype(np.float32)
    X64 = X32.astype(np.float64)
    for max_bins in (7, 255):
        m32 = BinMapper(max_bins=max_bins).fit(X32)
        m64 = BinMapper(max_bins=max_bins).fit(X64)
        np.testing.assert_array_equal(m32.edges_, m64.edges_)
        np.testing.assert_array_equal(m32.n_bins_non_missing_, m64.n_bins_non_missing_)
        b32 = m32.transform(X32)
        np.testing.assert_array_equal(b32, m64.transform(X64))
        assert_in_edge_interval(m32, X32, b32)
        assert_edges_strictly_increasing(m32)


def test_float32_adjacent_values_get_distinct_bins():
    base = np.float32(1.5)
    values = [base]
    for _ in range(10):
        values.append(np.nextafter(values[-1], np.float32(2)))
    col = np.array(values * 3, dtype=np.float32)
    X = col[:, None]
    mapper = BinMapper(max_bins=255).fit(X)
    binned = mapper.transform(X)[0]
    assert mapper.n_bins_non_missing_[0] == 11
    np.testing.assert_array_equal(binned, np.tile(np.arange(11), 3))


@pytest.mark.parametrize("max_bins", [4, 255])
def test_memory_order_and_views_give_same_bins(max_bins):
    rng = np.random.default_rng(9)
    big = random_matrix(rng, 240, 10)
    C = np.ascontiguousarray(big[::2, 1::2])
    variants = {
        "F": np.asfortranarray(C),
        "strided": big[::2, 1::2],
        "float32_F": np.asfortranarray(C.astype(np.float32)),
    }
    mapper = BinMapper(max_bins=max_bins).fit(C)
    expected = mapper.transform(C)
    for name, X in variants.items():
        if X.dtype == np.float32:
            ref_mapper = BinMapper(max_bins=max_bins).fit(np.ascontiguousarray(X))
            np.testing.assert_array_equal(BinMapper(max_bins=max_bins).fit(X).edges_,
                                          ref_mapper.edges_, err_msg=name)
            np.testing.assert_array_equal(ref_mapper.transform(X),
                                          ref_mapper.transform(np.ascontiguousarray(X)),
                                          err_msg=name)
            continue
        other = BinMapper(max_bins=max_bins).fit(X)
        np.testing.assert_array_equal(other.edges_, mapper.edges_, err_msg=name)
        np.testing.assert_array_equal(other.transform(X), expected, err_msg=name)
        np.testing.assert_array_equal(mapper.transform(X), expected, err_msg=name)


@pytest.mark.parametrize("n_distinct", [1, 2, 3, 17, 100])
def test_few_distinct_values_one_bin_each(n_distinct):
    rng = np.random.default_rng(n_distinct)
    distinct = np.sort(rng.choice(np.arange(-500, 500), n_distinct, replace=False) * 0.37)
    idx = rng.integers(0, n_distinct, size=400)
    idx[:n_distinct] = np.arange(n_distinct)
    col = distinct[idx]
    col[n_distinct:][rng.random(400 - n_distinct) < 0.1] = np.nan
    X = np.column_stack([col, -col])
    mapper = BinMapper(max_bins=100).fit(X)
    binned = mapper.transform(X)
    np.testing.assert_array_equal(mapper.n_bins_non_missing_, [n_distinct, n_distinct])
    present = ~np.isnan(col)
    # bin index == rank of the value among the distinct values
    np.testing.assert_array_equal(binned[0, present], idx[present])
    np.testing.assert_array_equal(binned[1, present], n_distinct - 1 - idx[present])
    assert np.all(binned[:, ~present] == 100)


@pytest.mark.parametrize("max_bins", [4, 10, 32])
def test_many_distinct_values_give_equal_count_quantiles(max_bins):
    rng = np.random.default_rng(max_bins)
    n = 6000
    X = np.column_stack([rng.normal(size=n), rng.exponential(size=n) ** 3,
                         rng.uniform(-1e6, 1e6, size=n)])
    X[rng.random(X.shape) < 0.05] = np.nan
    mapper = BinMapper(max_bins=max_bins).fit(X)
    binned = mapper.transform(X)
    assert_edges_strictly_increasing(mapper)
    for f in range(X.shape[1]):
        assert mapper.n_bins_non_missing_[f] == max_bins
        present = binned[f][binned[f] != mapper.missing_bin]
        counts = np.bincount(present, minlength=max_bins)
        expected = present.size / max_bins
        assert counts.min() >= 0.9 * expected, counts
        assert counts.max() <= 1.1 * expected, counts


def test_quantile_bins_with_heavy_duplicates_are_valid():
    rng = np.random.default_rng(4)
    col = np.where(rng.random(2000) < 0.6, 0.0, rng.normal(size=2000))
    X = col[:, None]
    mapper = BinMapper(max_bins=10).fit(X)
    binned = mapper.transform(X)
    assert_edges_strictly_increasing(mapper)
    assert_in_edge_interval(mapper, X, binned)
    # every bin is populated: no edge without data on both sides
    assert len(np.unique(binned[0])) == mapper.n_bins_non_missing_[0]


def test_constant_and_all_nan_columns_have_one_bin():
    n = 50
    X = np.column_stack([np.full(n, 3.25), np.full(n, np.nan), np.full(n, -np.inf),
                         np.arange(n, dtype=float)])
    for max_bins in (2, 255):
        mapper = BinMapper(max_bins=max_bins).fit(X)
        np.testing.assert_array_equal(mapper.n_bins_non_missing_[:3], [1, 1, 1])
        assert mapper.n_bins_non_missing_[3] == min(n, max_bins)
        binned = mapper.transform(X)
        assert np.all(binned[0] == 0)
        assert np.all(binned[1] == mapper.missing_bin)
        assert np.all(binned[2] == 0)
        # unseen values of a constant column still land in its single value bin
        probe = np.array([[-1e9, 1e9, -5.0, 0.0], [np.nan, 7.0, np.inf, 0.5]])
        pb = mapper.transform(probe)
        np.testing.assert_array_equal(pb[0], [0, mapper.missing_bin])
        np.testing.assert_array_equal(pb[1], [0, 0])
        np.testing.assert_array_equal(pb[2], [0, 0])


@pytest.mark.parametrize("max_bins", [3, 12, 255])
def test_bin_threshold_consistent_with_bins(max_bins):
    rng = np.random.default_rng(12)
    X = random_matrix(rng, 500, 8)
    X[:5, 0] = [np.inf, -np.inf, 1e300, -1e300, 0.0]
    mapper = BinMapper(max_bins=max_bins).fit(X)
    # probe the training values, the edges themselves and their neighbours
    probes = [X]
    for f in range(X.shape[1]):
        e = fitted_edges(mapper, f)
        for v in (e, np.nextafter(e, np.inf), np.nextafter(e, -np.inf)):
            col = np.full((len(v), X.shape[1]), np.nan)
            col[:, f] = v
            probes.append(col)
    P = np.vstack(probes)
    binned = mapper.transform(P).astype(int)
    for f in range(X.shape[1]):
        present = ~np.isnan(P[:, f])
        x = P[present, f]
        b = binned[f, present]
        for t in range(mapper.n_bins_non_missing_[f] + 1):
            threshold = mapper.bin_threshold(f, t)
            np.testing.assert_array_equal(x <= threshold, b <= t, err_msg=f"f={f} t={t}")


def test_results_independent_of_n_threads():
    rng = np.random.default_rng(13)
    X = random_matrix(rng, 1001, 7)
    m1 = BinMapper(max_bins=20, n_threads=1).fit(X)
    m2 = BinMapper(max_bins=20, n_threads=2).fit(X)
    np.testing.assert_array_equal(m1.edges_, m2.edges_)
    np.testing.assert_array_equal(m1.transform(X), m2.transform(X))
    out = np.empty((7, 1001), dtype=X_BINNED_DTYPE)
    map_to_bins(np.asfortranarray(X), m1.edges_, m1.n_edges_, 20, out, 3)
    np.testing.assert_array_equal(out, m1.transform(X))


@pytest.mark.parametrize("n_distinct", [254, 255, 256, 300])
def test_255_and_256_distinct_values_with_max_bins_255(n_distinct):
    rng = np.random.default_rng(n_distinct)
    values = np.sort(rng.normal(size=n_distinct))
    col = np.concatenate([values, rng.choice(values, 300), [np.nan] * 7])
    rng.shuffle(col)
    X = col[:, None]
    mapper = BinMapper(max_bins=255).fit(X)
    binned = mapper.transform(X)
    assert_edges_strictly_increasing(mapper)
    assert_in_edge_interval(mapper, X, binned)
    present = ~np.isnan(col)
    assert np.all(binned[0, ~present] == 255)
    assert np.all(binned[0, present] < 255)
    if n_distinct <= 255:
        assert mapper.n_bins_non_missing_[0] == n_distinct
        np.testing.assert_array_equal(binned[0, present],
                                      np.searchsorted(values, col[present]))
    else:
        assert mapper.n_bins_non_missing_[0] <= 255
        # most bins hold one or two distinct values
        assert mapper.n_bins_non_missing_[0] >= 200


def test_subsampled_fit_still_bins_every_row():
    rng = np.random.default_rng(14)
    X = random_matrix(rng, 3000, 4)
    X[0, 0] = 1e6   # probably outside the sample
    X[1, 0] = -1e6
    mapper = BinMapper(max_bins=16, subsample=500, seed=1).fit(X)
    binned = mapper.transform(X)
    assert_edges_strictly_increasing(mapper)
    assert_in_edge_interval(mapper, X, binned)
    again = BinMapper(max_bins=16, subsample=500, seed=1).fit(X)
    np.testing.assert_array_equal(again.edges_, mapper.edges_)
    assert mapper.edges_.dtype == X_DTYPE


# -- min_data_in_bin ---------------------------------------------------------------
def merged_reference(values, edges, min_data_in_bin):
    """The greedy merge spelled out: walk the bins from the lowest, close one
    at an edge once it holds min_data_in_bin values, and fold a short last
    bin into the one before."""
    kept, in_bin = [], 0
    for i, edge in enumerate(edges):
        in_bin += np.sum((values <= edge) & (values > (edges[i - 1] if i else -np.inf)))
        if in_bin >= min_data_in_bin:
            kept.append(edge)
            in_bin = 0
    if kept and np.sum(values > kept[-1]) < min_data_in_bin:
        kept.pop()
    return np.array(kept)


@pytest.mark.parametrize("min_data_in_bin", [2, 3, 10, 40])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_min_data_in_bin_merges_small_bins_into_their_neighbours(min_data_in_bin, seed):
    """Few distinct values (a bin each), many (quantiles, some of one value),
    a column of mostly zeros; with NaN, which stays in the missing bin."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 40, 300), rng.normal(size=300),
                         np.where(rng.random(300) < 0.8, 0.0, rng.poisson(2, 300)),
                         np.round(rng.exponential(size=300), 1)]).astype(float)
    X[rng.random(X.shape) < 0.05] = np.nan
    plain = BinMapper(max_bins=63).fit(X)
    merged = BinMapper(max_bins=63, min_data_in_bin=min_data_in_bin).fit(X)
    binned = merged.transform(X)
    for f in range(X.shape[1]):
        values = X[:, f][~np.isnan(X[:, f])]
        expected = merged_reference(values, plain.edges_[f, :plain.n_edges_[f]],
                                    min_data_in_bin)
        np.testing.assert_array_equal(merged.edges_[f, :merged.n_edges_[f]], expected)
        counts = np.bincount(binned[f][binned[f] != merged.missing_bin])
        assert counts.sum() == len(values)
        if len(counts) > 1:  # one bin keeps every value, however few
            assert counts.min() >= min_data_in_bin
        assert np.all(binned[f][np.isnan(X[:, f])] == merged.missing_bin)


@pytest.mark.parametrize("min_data_in_bin", [1, 5, 30])
def test_min_data_in_bin_gives_sparse_x_the_edges_of_the_dense_array(min_data_in_bin):
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(3)
    X = np.where(rng.random((400, 5)) < 0.7, 0.0, rng.normal(size=(400, 5)))
    X[:, 1] = np.where(X[:, 1] != 0, np.round(X[:, 1]), 0.0)  # few distinct values
    X[:5, 2] = 0.0  # stored zeros beside the implicit ones
    dense = BinMapper(max_bins=31, min_data_in_bin=min_data_in_bin).fit(X)
    as_sparse = sparse.csr_matrix(X)
    as_sparse.data[as_sparse.data == 0] = 0.0
    from_sparse = BinMapper(max_bins=31, min_data_in_bin=min_data_in_bin).fit(as_sparse)
    np.testing.assert_array_equal(from_sparse.edges_, dense.edges_)
    np.testing.assert_array_equal(from_sparse.n_bins_non_missing_, dense.n_bins_non_missing_)


@pytest.mark.parametrize("max_bins, min_data_in_bin, n_threads", [(255, 1, 1), (15, 1, 2),
                                                                 (31, 7, 2), (4, 3, 1)])
def test_dense_columns_copied_in_blocks_and_mostly_zero_get_each_column_s_own_edges(
        max_bins, min_data_in_bin, n_threads):
    """Every column against the one-column sort of _feature_edges, across
    block boundaries (70 features) and zero shares around the half where the
    sort of the other values takes over; with NaN, infinities, -0.0 and ties."""
    from gbmo.binning import _EDGE_BLOCK, _feature_edges

    rng = np.random.default_rng(max_bins + min_data_in_bin)
    n_rows, n_features = 301, 2 * _EDGE_BLOCK + 6
    zero_share = np.linspace(0.0, 1.0, n_features)
    scale = 10.0 ** rng.integers(0, 3, n_features)  # ties: 1, 2 or 3 digits a column
    values = np.round(rng.normal(size=(n_rows, n_features)) * scale) / scale
    X = np.where(rng.random((n_rows, n_features)) < zero_share, 0.0, values)
    X[rng.random(X.shape) < 0.03] = np.nan
    X[::50, 5] = np.inf
    X[1::50, 5] = -np.inf
    X[::3, 7] = -0.0
    X[:, 9] = 0.0
    mapper = BinMapper(max_bins=max_bins, min_data_in_bin=min_data_in_bin,
                       n_threads=n_threads).fit(X)
    for f in range(n_features):
        expected = _feature_edges(np.ascontiguousarray(X[:, f]), max_bins, min_data_in_bin)
        np.testing.assert_array_equal(mapper.edges_[f, :len(expected)], expected)
        assert mapper.n_bins_non_missing_[f] == len(expected) + 1
    np.testing.assert_array_equal(mapper.has_missing_, np.isnan(X).any(axis=0))
    np.testing.assert_array_equal(BinMapper(max_bins=max_bins, min_data_in_bin=min_data_in_bin)
                                  .fit(np.asfortranarray(X.astype(np.float32))).edges_,
                                  BinMapper(max_bins=max_bins, min_data_in_bin=min_data_in_bin)
                                  .fit(X.astype(np.float32)).edges_)


def split_thresholds(model, feature):
    """The set of thresholds of model's splits on feature."""
    return {threshold for tree in model.dump_model()["trees"]
            for split_feature, threshold, left in zip(tree["node_feature"],
                                                      tree["node_threshold"], tree["node_left"])
            if left >= 0 and split_feature == feature}


def test_min_data_in_bin_trains_on_merged_bins_and_leaves_categories_alone():
    import gbmo

    rng = np.random.default_rng(4)
    n = 600
    X = np.column_stack([rng.integers(0, 60, n), rng.integers(0, 25, n)]).astype(float)
    y = np.sin(X[:, 0] / 6) + (X[:, 1] % 3) + 0.1 * rng.normal(size=n)
    data = gbmo.Dataset(X, y, categorical_feature=[1])
    plain = gbmo.train({"verbosity": 0}, data, 3)
    assert data.bin_mapper.n_bins_non_missing_[0] == 60
    merged = gbmo.train({"verbosity": 0, "min_data_in_bin": 40}, data, 3)
    # the Dataset is binned again for the new parameter: 600 values, 40 a bin
    assert 2 <= data.bin_mapper.n_bins_non_missing_[0] <= 15
    assert data.bin_mapper.n_bins_non_missing_[1] == 25  # a bin per category still
    thresholds = split_thresholds(merged, 0)
    assert thresholds and thresholds <= set(
        data.bin_mapper.edges_[0, :data.bin_mapper.n_edges_[0]])
    assert not np.allclose(plain.predict(X), merged.predict(X))
    with pytest.raises(ValueError, match="parameter 'min_data_in_bin' = 0 is out of range"):
        gbmo.train({"verbosity": 0, "min_data_in_bin": 0}, data, 1)


# -- max_bins_by_feature ----------------------------------------------------------
def test_max_bins_by_feature_gives_each_feature_its_own_quantile_bins():
    """Each feature is binned as max_bins = its own value would bin it, and
    the missing bin sits above every feature's value bins."""
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(5)
    X = np.where(rng.random((500, 3)) < 0.5, 0.0, rng.normal(size=(500, 3)))
    X[:, 1] = rng.normal(size=500)  # no repeated value: it fills all its bins
    X[rng.random(500) < 0.1, 1] = np.nan
    by_feature = [4, 40, 17]
    mapper = BinMapper(max_bins=255, max_bins_by_feature=by_feature).fit(X)
    assert mapper.missing_bin == 40
    for f, bins in enumerate(by_feature):
        alone = BinMapper(max_bins=bins).fit(X[:, [f]])
        np.testing.assert_array_equal(mapper.edges_[f, :mapper.n_edges_[f]],
                                      alone.edges_[0, :alone.n_edges_[0]])
        assert mapper.n_bins_non_missing_[f] <= bins
    assert mapper.n_bins_non_missing_[1] == 40
    binned = mapper.transform(X)
    np.testing.assert_array_equal(binned[1] == mapper.missing_bin, np.isnan(X[:, 1]))
    assert binned[~np.isnan(X.T)].max() < 40
    from_sparse = BinMapper(max_bins_by_feature=by_feature).fit(sparse.csr_matrix(X))
    np.testing.assert_array_equal(from_sparse.edges_, mapper.edges_)


@pytest.mark.parametrize("by_feature", [[3, 200], [3, 4]])
def test_max_bin_by_feature_trains_on_each_feature_s_bins(by_feature):
    """With missing values, whose bin is above the largest feature's
    (4 with [3, 4]): the training loop's own scores of its rows equal
    predict's, which walks the raw values."""
    import gbmo

    rng = np.random.default_rng(6)
    X = rng.normal(size=(800, 2))
    y = np.sin(3 * X[:, 0]) + np.sin(3 * X[:, 1]) + 0.05 * rng.normal(size=800)
    X[rng.random(800) < 0.2, 1] = np.nan
    data = gbmo.Dataset(X, y)
    recorded = {}
    model = gbmo.train({"verbosity": 0, "max_bin_by_feature": by_feature}, data, 20,
                       valid_sets=[data], valid_names=["train"],
                       callbacks=[gbmo.record_evaluation(recorded)])
    assert list(data.bin_mapper.n_bins_non_missing_) == by_feature
    assert recorded["train"]["rmse"][-1] == pytest.approx(
        np.sqrt(np.mean((model.predict(X) - y) ** 2)), rel=1e-9)
    thresholds = [split_thresholds(model, f) for f in range(2)]
    for f in range(2):  # each feature's edges (inf: every value one side, missing the other)
        edges = data.bin_mapper.edges_[f, :data.bin_mapper.n_edges_[f]]
        assert len(edges) == by_feature[f] - 1
        assert thresholds[f] <= set(edges) | {np.inf}
    assert len(thresholds[1]) > 4 or by_feature[1] == 4
    # the Dataset is binned again when the parameter changes
    gbmo.train({"verbosity": 0}, data, 1)
    assert list(data.bin_mapper.n_bins_non_missing_) == [255, 255]


@pytest.mark.parametrize("value, message", [
    ([3], "max_bins_by_feature has 1 values for 2 features"),
    (3, "must be a list with one number of bins"),
    ([3, None], "must be a list with one number of bins"),
    ([[3], [4]], "must be a list with one number of bins"),
    ([3, 1], "out of range"),
    ([3, 65536], "out of range"),
])
def test_max_bin_by_feature_errors(value, message):
    import gbmo

    X = np.arange(40.0).reshape(20, 2)
    with pytest.raises(ValueError, match=message):
        gbmo.train({"verbosity": 0, "max_bin_by_feature": value}, gbmo.Dataset(X, X[:, 0]), 1)


def test_a_mapper_with_another_s_features_bins_them_by_its_edges():
    rng = np.random.default_rng(17)
    X = rng.normal(size=(500, 4))
    X[rng.random(500) < 0.1, 2] = np.nan
    mapper = BinMapper(max_bins=31).fit(X)
    # the third feature's edges from other rows: a fold's own
    other = BinMapper(max_bins=31).fit(np.ascontiguousarray(X[:120, [2]] * 3.0))
    merged = mapper.with_features_of([2], other)
    binned = merged.transform(X)
    np.testing.assert_array_equal(binned[[0, 1, 3]], mapper.transform(X)[[0, 1, 3]])
    np.testing.assert_array_equal(binned[2], other.transform(np.ascontiguousarray(X[:, [2]]))[0])
    np.testing.assert_array_equal(merged.transform_features(np.ascontiguousarray(X[:, [2, 0]]),
                                                            [2, 0]), binned[[2, 0]])
    assert merged.n_bins_non_missing_[2] == other.n_bins_non_missing_[0]
    assert merged.has_missing_[2] and merged.shared_from == (mapper, [2])
    assert not np.array_equal(merged.edges_[2], mapper.edges_[2])
    np.testing.assert_array_equal(mapper.transform(X)[2], BinMapper(max_bins=31).fit(X).transform(
        X)[2])  # the mapper itself unchanged
