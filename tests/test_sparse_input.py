"""scipy sparse X (CSR / CSC) for fit and predict without densifying it.

Implicit entries are 0, stored NaN is missing. Sparse X must give the model
the dense array gives: the same bin edges, the same binned values, the same
trees and — gradients being float32 summed in float64, exactly on these
data — the same leaf values and predictions bit for bit. Each new kernel is
checked against a numpy reference on small random inputs.
"""
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import gbmo
import gbmo.binning
from gbmo._core import (BIN_INDEX_DTYPE, G_H_DTYPE, HIST_DTYPE, NODE_DTYPE, WALK_NODE_DTYPE,
                        X_BINNED_DTYPE)
from gbmo._core._binning import map_to_bins
from gbmo._core._predict import predict_binned, predict_leaf_raw, predict_raw
from gbmo._core._histogram import ROW_CHUNKS, build_histograms_by_row
from gbmo._core._sparse import (decompress_column, map_sparse_to_bins, predict_binned_mixed,
                                predict_leaf_raw_csr, predict_raw_csr)
from gbmo.binning import BinMapper, SparseBinned, _feature_edges, _sparse_feature_edges

N_THREADS = 2


# -- data ---------------------------------------------------------------------
def sparse_data(seed=0, n_rows=500, n_features=12, density=0.15):
    """CSR X with negative values, stored NaN, stored zeros, an all-zero column
    (2), a column with no zeros (3), a dense column (4) and few-valued columns,
    plus targets that depend on several of them."""
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=density, format="lil", random_state=seed,
                  data_rvs=lambda size: rng.normal(size=size) * 3)
    X[:, 2] = 0.0
    X[:, 3] = rng.uniform(1, 2, size=(n_rows, 1))
    X[:, 4] = rng.normal(size=(n_rows, 1)) * (rng.random((n_rows, 1)) < 0.6)
    X[::7, 5] = rng.integers(-2, 3, size=(len(range(0, n_rows, 7)), 1))
    X = X.tocsr()
    X.data[::29] = np.nan
    X.data[1::37] = 0.0  # explicit zeros stay stored
    D = X.toarray()
    Z = np.nan_to_num(D)
    y = np.column_stack([Z[:, 0] + 2 * Z[:, 1] * (Z[:, 3] > 1.5), np.abs(Z[:, 4]) - Z[:, 5],
                         Z[:, 6] ** 2 + 0.1 * rng.normal(size=n_rows)])
    return X, D, y


@pytest.fixture(params=[0.0, 0.2, 1.0], ids=["all-dense", "mixed", "all-sparse"])
def max_density(request, monkeypatch):
    """The binned layout: every feature dense, a mix, every feature sparse."""
    monkeypatch.setattr(gbmo.binning, "SPARSE_MAX_DENSITY", request.param)
    return request.param


def tree_arrays(booster):
    return [(t.node_feature, t.node_bin, t.node_threshold, t.node_missing_left, t.node_left,
             t.node_right, t.node_value, t.node_count, t.node_gain, t.leaf_values)
            for t in booster.trees]


def assert_same_model(a, b):
    assert len(a.trees) == len(b.trees)
    for arrays_a, arrays_b in zip(tree_arrays(a), tree_arrays(b)):
        for x, y in zip(arrays_a, arrays_b):
            np.testing.assert_array_equal(x, y)


# -- bin edges and the binned layout ------------------------------------------
def test_sparse_edges_equal_dense_edges():
    """Edges from the stored values plus a count of zeros equal those of the
    dense column, in the distinct-value and the quantile regimes, with NaN,
    infinities, stored zeros and -0.0."""
    rng = np.random.default_rng(1)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.0, 1e308, -1e308])
    for trial in range(200):
        n = int(rng.integers(1, 300))
        column = np.zeros(n)
        stored = rng.random(n) < rng.random()
        kind = trial % 4
        if kind == 0:
            column[stored] = rng.normal(size=stored.sum())
        elif kind == 1:
            column[stored] = rng.integers(-3, 4, size=stored.sum())
        else:
            column[stored] = rng.choice(specials, size=stored.sum())
            if kind == 3:
                column[stored] += rng.normal(size=stored.sum())
        max_bins = int(rng.integers(2, 40))
        expected = _feature_edges(column, max_bins)
        got = _sparse_feature_edges(column[stored], n - stored.sum(), max_bins)
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("subsample", [None, 150])
def test_bin_mapper_sparse_equals_dense(fmt, subsample):
    X, D, _ = sparse_data()
    X = X.asformat(fmt)
    dense = BinMapper(31, subsample, 3, N_THREADS).fit(D)
    sparse = BinMapper(31, subsample, 3, N_THREADS).fit(X)
    np.testing.assert_array_equal(sparse.edges_, dense.edges_)
    np.testing.assert_array_equal(sparse.n_bins_non_missing_, dense.n_bins_non_missing_)
    np.testing.assert_array_equal(sparse.has_missing_, dense.has_missing_)
    expected = dense.transform(D)
    for max_sparse_density in (0.0, 0.1, 0.3, 1.0):
        binned = sparse.transform(X, max_sparse_density)
        assert isinstance(binned, SparseBinned)
        assert binned.shape == expected.shape
        np.testing.assert_array_equal(binned.toarray(), expected)


def test_binned_layout():
    """Features with few rows outside the zero bin are stored sparsely, the
    others as dense rows; stored rows are increasing and never in the zero bin."""
    X, D, _ = sparse_data(n_rows=400)
    mapper = BinMapper(63, None, 0, N_THREADS).fit(X)
    binned = mapper.transform(X, 0.2)
    expected = mapper.transform(D)
    zero_bin = mapper.zero_bin_
    off_zero = (expected != zero_bin[:, None]).sum(axis=1)
    np.testing.assert_array_equal(binned.is_sparse, off_zero <= 0.2 * 400)
    assert binned.is_sparse[2] and not binned.is_sparse[3] and not binned.is_sparse[4]
    for f in np.flatnonzero(binned.is_sparse):
        c = binned.column_of[f]
        rows = binned.indices[binned.indptr[c]:binned.indptr[c + 1]]
        np.testing.assert_array_equal(rows, np.flatnonzero(expected[f] != zero_bin[f]))
        np.testing.assert_array_equal(binned.bins[binned.indptr[c]:binned.indptr[c + 1]],
                                      expected[f, rows])
        assert binned.zero_bin[c] == zero_bin[f]
    assert binned.indptr[binned.column_of[2] + 1] == binned.indptr[binned.column_of[2]]
    assert binned.nbytes < expected.nbytes


# -- kernels against numpy references -----------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_map_sparse_to_bins(dtype, index_dtype, fmt):
    X, D, _ = sparse_data(seed=2)
    X = X.asformat(fmt).astype(dtype)
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    mapper = BinMapper(15, None, 0, 1).fit(D)
    out = np.empty(X.nnz, dtype=X_BINNED_DTYPE)
    map_sparse_to_bins(X.data, X.indptr, X.indices, fmt == "csr", mapper.edges_, mapper.n_edges_,
                       mapper.missing_bin, out, N_THREADS)
    dense_bins = np.empty((D.shape[1], D.shape[0]), dtype=X_BINNED_DTYPE)
    map_to_bins(X.toarray(), mapper.edges_, mapper.n_edges_, mapper.missing_bin, dense_bins, 1)
    coo = X.tocoo()  # canonical CSR / CSC keeps the stored order in tocoo
    np.testing.assert_array_equal(out, dense_bins[coo.col, coo.row])


def test_decompress_column():
    rng = np.random.default_rng(3)
    n_rows = 50
    indptr = np.array([0, 3, 3, 7], dtype=np.int64)
    indices = np.concatenate([np.sort(rng.choice(n_rows, 3, replace=False)),
                              np.sort(rng.choice(n_rows, 4, replace=False))]).astype(np.uint32)
    bins = rng.integers(0, 9, size=7).astype(X_BINNED_DTYPE)
    for column, zero_bin in ((0, 4), (1, 2), (2, 0)):
        out = np.full(n_rows, 77, dtype=X_BINNED_DTYPE)
        decompress_column(indptr, indices, bins, column, zero_bin, out)
        expected = np.full(n_rows, zero_bin, dtype=X_BINNED_DTYPE)
        stored = slice(indptr[column], indptr[column + 1])
        expected[indices[stored]] = bins[stored]
        np.testing.assert_array_equal(out, expected)


def binned_sparse_data(seed):
    X, _, _ = sparse_data(seed=seed)
    mapper = BinMapper(15, None, 0, 1).fit(X)
    return mapper.transform(X, max_sparse_density=0.5)


def test_sparse_binned_by_row_lists_each_row_s_entries_in_column_order():
    binned = binned_sparse_data(seed=4)
    row_indptr, column, bins = binned.by_row()
    assert binned.by_row()[0] is row_indptr  # made once
    sparse_features = np.flatnonzero(binned.is_sparse)
    dense = binned.toarray()[sparse_features]  # (sparse columns, rows)
    for row in range(binned.n_rows):
        entries = slice(row_indptr[row], row_indptr[row + 1])
        expected = np.flatnonzero(dense[:, row] != binned.zero_bin)
        np.testing.assert_array_equal(column[entries], expected)
        np.testing.assert_array_equal(bins[entries], dense[expected, row])


def test_bins_of_rows_equals_the_dense_layout():
    binned = binned_sparse_data(seed=5)
    dense = binned.toarray()
    rows = np.random.default_rng(5).choice(binned.n_rows, 120, replace=False).astype(np.uint32)
    assert binned.is_sparse.any() and not binned.is_sparse.all()
    for feature in range(binned.shape[0]):
        np.testing.assert_array_equal(binned.bins_of_rows(feature, rows), dense[feature, rows])


def test_node_entries_by_column_groups_the_node_s_entries():
    from gbmo._core._sparse_output import node_entries_by_column

    binned = binned_sparse_data(seed=6)
    dense = binned.toarray()[np.flatnonzero(binned.is_sparse)]
    rows = np.flatnonzero(np.random.default_rng(6).random(binned.n_rows) < 0.3).astype(np.uint32)
    start, row, bins = node_entries_by_column(rows, *binned.by_row(), dense.shape[0])
    for s in range(dense.shape[0]):
        places = np.flatnonzero(dense[s, rows] != binned.zero_bin[s])
        np.testing.assert_array_equal(row[start[s]:start[s + 1]], places)
        np.testing.assert_array_equal(bins[start[s]:start[s + 1]], dense[s, rows[places]])
    assert start[-1] == sum((dense[s, rows] != binned.zero_bin[s]).sum()
                            for s in range(dense.shape[0]))


@pytest.mark.parametrize("hess_kind", ["0", "1", "d"])
@pytest.mark.parametrize("n_threads", [1, N_THREADS])
@pytest.mark.parametrize("few_values", [False, True])
def test_sparse_row_entries_build_the_histograms_of_a_node(hess_kind, n_threads, few_values):
    """The sparse columns' entries by row (SparseBinned.row_entries) give a
    node's histograms of its sparse features by row: counts exact, sums close
    to np.add.at over the node's rows of the decompressed columns (the zero
    bin the totals minus the rest). With few values per feature the
    histograms are shorter than max_bins + 1 and their last bin counts the
    missing values (binned as max_bins)."""
    rng = np.random.default_rng(4)
    n_rows, n_features, d = 300, 8, 3
    X, D, _ = sparse_data(seed=5, n_rows=n_rows, n_features=n_features)
    if few_values:
        X.data = np.round(X.data)
    mapper = BinMapper(40 if few_values else 11, None, 0, 1).fit(X)
    n_bins = mapper.histogram_bins
    assert n_bins == (16 if few_values else 12)
    binned = mapper.transform(X, 1.0)
    dense = mapper.transform(D)
    indptr, slot, zero_bins = binned.row_entries(n_bins)
    sparse = np.flatnonzero(binned.is_sparse)
    assert len(sparse) >= 4 and np.all(zero_bins[binned.is_sparse == 0] == -1)
    for r in rng.choice(n_rows, 20, replace=False):  # a row's entries: its values off zero bins
        off = [f for f in sparse if dense[f, r] != zero_bins[f]]
        assert sorted(slot[indptr[r]:indptr[r + 1]]) == [
            f * n_bins + min(dense[f, r], n_bins - 1) for f in off]
    with pytest.raises(ValueError, match="8 features x 536870913 histogram bins of sparse X "
                                         "are more than the 4294967296 slots"):
        binned.row_entries(2 ** 29 + 1)
    k = {"0": 0, "1": 1, "d": d}[hess_kind]
    rows = np.sort(rng.choice(n_rows, 200, replace=False)).astype(np.uint32)
    grad = rng.normal(size=(len(rows), d)).astype(G_H_DTYPE)
    hess = rng.uniform(0.1, 2, size=(len(rows), k)).astype(G_H_DTYPE)
    ordered = np.hstack([grad, hess, np.ones((len(rows), 1), G_H_DTYPE)])
    block = ordered.astype(np.float64)
    wanted = np.zeros(n_features, dtype=np.uint8)
    wanted[sparse[:4]] = 1
    hist = np.full((n_features, n_bins, d + k + 1), -7.0, dtype=HIST_DTYPE)
    build_histograms_by_row(indptr, slot, wanted, zero_bins, rows, ordered, block.sum(axis=0),
                            hist, np.zeros((ROW_CHUNKS - 1,) + hist.shape), n_threads,
                            mapper.n_bins_non_missing_.astype(np.int32))
    for f in range(n_features):
        if not wanted[f]:
            continue
        expected = np.zeros((n_bins, d + k + 1))
        np.add.at(expected, np.minimum(dense[f, rows], n_bins - 1), block)
        written = np.r_[0:mapper.n_bins_non_missing_[f], n_bins - 1]
        np.testing.assert_array_equal(hist[f][written, -1], expected[written, -1])
        np.testing.assert_allclose(hist[f][written], expected[written], rtol=1e-10, atol=1e-10)
    assert np.all(hist[binned.is_sparse == 0] == -7.0)  # dense features: no entries


def stump_forest(specs):
    """A forest of stumps, one per (feature, threshold, bin, missing_left) in
    specs: node 3t splits, its leaves 2t and 2t + 1 (at nodes 3t + 1, 3t + 2)."""
    T = len(specs)
    feature, threshold, bin_, missing_left = (np.array(column) for column in zip(*specs))
    forest = dict(
        tree_roots=np.arange(T, dtype=NODE_DTYPE) * 3,
        node_feature=np.zeros(3 * T, np.int32), node_threshold=np.zeros(3 * T),
        node_bin=np.zeros(3 * T, BIN_INDEX_DTYPE), node_missing_left=np.zeros(3 * T, np.uint8),
        node_left=np.full(3 * T, -1, NODE_DTYPE), node_right=np.full(3 * T, -1, NODE_DTYPE),
        node_value=np.full(3 * T, -1, NODE_DTYPE))
    roots = forest["tree_roots"]
    forest["node_feature"][roots] = feature
    forest["node_threshold"][roots] = threshold
    forest["node_bin"][roots] = bin_
    forest["node_missing_left"][roots] = missing_left
    forest["node_left"][roots], forest["node_right"][roots] = roots + 1, roots + 2
    forest["node_value"][roots + 1] = np.arange(T) * 2
    forest["node_value"][roots + 2] = np.arange(T) * 2 + 1
    forest["tree_depth"] = np.ones(T, np.int32)
    # the dense-X kernels' nodes: a leaf is its own left child, above every value
    walk = np.zeros(3 * T, WALK_NODE_DTYPE)
    walk["threshold"], walk["left"] = np.inf, np.arange(3 * T)
    walk["threshold"][roots], walk["left"][roots] = threshold, roots + 1
    walk["feature_and_missing"][roots] = 4 * feature + 1 - missing_left  # see WalkNode
    forest["walk_nodes"] = walk
    values = np.random.default_rng(T).normal(size=2 * T)
    leaves = (np.arange(2 * T + 1, dtype=np.int64), np.full(2 * T, -1, np.int64), values,
              np.zeros(1, np.int32))
    return forest, leaves


def forest_arguments(forest, *names):
    return [forest[name] for name in names]


BINNED_NAMES = ("tree_roots", "node_feature", "node_bin", "node_missing_left", "node_left",
                "node_right", "node_value")
RAW_NAMES = ("tree_roots", "node_feature", "node_threshold", "node_missing_left", "node_left",
             "node_right", "node_value")
DENSE_RAW_NAMES = ("tree_roots", "tree_depth", "walk_nodes", "node_value")


def test_predict_binned_mixed_equals_dense_layout():
    X, D, _ = sparse_data(seed=6)
    mapper = BinMapper(15, None, 0, 1).fit(X)
    dense = mapper.transform(D)
    specs = [(f, 0.0, b, missing_left) for f in range(D.shape[1])
             for b in (0, 3, mapper.zero_bin_[f]) for missing_left in (0, 1)]
    forest, leaves = stump_forest(specs)
    arguments = forest_arguments(forest, *BINNED_NAMES)
    expected = np.zeros((D.shape[0], 1))
    predict_binned(dense, mapper.missing_bin, *arguments, *leaves, expected, 1)
    for max_sparse_density in (0.0, 0.2, 1.0):
        binned = mapper.transform(X, max_sparse_density)
        got = np.zeros((D.shape[0], 1))
        predict_binned_mixed(binned.dense, binned.column_of, binned.is_sparse, binned.indptr,
                             binned.indices, binned.bins, binned.zero_bin, binned.n_rows,
                             mapper.missing_bin, *arguments, *leaves, got, N_THREADS)
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match="missing_bin 300 is not a bin of the binned data's"):
        predict_binned_mixed(binned.dense, binned.column_of, binned.is_sparse, binned.indptr,
                             binned.indices, binned.bins, binned.zero_bin, binned.n_rows,
                             300, *arguments, *leaves, got, N_THREADS)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_predict_raw_csr_equals_dense(dtype, index_dtype):
    """Stored zeros, NaN, negative values, thresholds at 0, below 0 and at
    stored values, both missing directions; raw scores and leaf indices."""
    X, D, _ = sparse_data(seed=7)
    X = X.astype(dtype)
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    D = X.toarray()
    values = X.data[np.isfinite(X.data)].astype(np.float64)
    specs = [(f, threshold, 0, missing_left) for f in range(D.shape[1])
             for threshold in (0.0, -0.5, values[f], -1e300) for missing_left in (0, 1)]
    forest, leaves = stump_forest(specs)
    arguments = forest_arguments(forest, *RAW_NAMES)
    expected = np.zeros((D.shape[0], 1))
    dense_arguments = forest_arguments(forest, *DENSE_RAW_NAMES)
    predict_raw(D, *dense_arguments, *leaves, np.array([0.25]), expected, 1)
    got = np.full((D.shape[0], 1), np.nan)
    predict_raw_csr(X.data, X.indices, X.indptr, *arguments, *leaves, np.array([0.25]),
                    got, N_THREADS)
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match="init_score of 2"):
        predict_raw_csr(X.data, X.indices, X.indptr, *arguments, *leaves, np.zeros(2), got, 1)
    expected_leaf = np.zeros((D.shape[0], len(specs)), NODE_DTYPE)
    predict_leaf_raw(D, *dense_arguments, expected_leaf, 1)
    got_leaf = np.zeros_like(expected_leaf)
    predict_leaf_raw_csr(X.data, X.indices, X.indptr, *arguments, got_leaf, N_THREADS)
    np.testing.assert_array_equal(got_leaf, expected_leaf)
    assert len(np.unique(got_leaf % 2)) == 2  # both sides are reached


# -- training: the same model as on the dense array ---------------------------
PARAMS = dict(max_leaves=12, learning_rate=0.3, min_samples_leaf=5, max_bins=63,
              n_threads=N_THREADS, verbosity=-1, seed=3)


@pytest.mark.parametrize("objective", ["mse", "softmax"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_training_equals_dense(objective, fmt, max_density):
    X, D, y = sparse_data()
    if objective == "softmax":
        y = (y[:, 0] > 0).astype(int) + (y[:, 1] > 0.5)
    params = dict(PARAMS, objective=objective)
    dense = gbmo.train(params, gbmo.Dataset(D, y), 8)
    sparse_set = gbmo.Dataset(X.asformat(fmt), y)
    sparse = gbmo.train(params, sparse_set, 8)
    assert isinstance(sparse_set.X_binned, SparseBinned)
    is_sparse = sparse_set.X_binned.is_sparse.astype(bool)
    # all-dense still stores the all-zero column 2 "sparsely" (no entries at all)
    expected_sparse = {0.0: [2], 1.0: range(X.shape[1])}.get(max_density)
    if expected_sparse is None:  # mixed: the columns without zeros or 60% non-zero are dense
        assert is_sparse[2] and not is_sparse[3] and not is_sparse[4] and is_sparse.sum() > 5
    else:
        np.testing.assert_array_equal(np.flatnonzero(is_sparse), expected_sparse)
    assert sum(t.n_leaves for t in dense.trees) > 8 * 4  # the model does grow
    assert_same_model(dense, sparse)
    np.testing.assert_array_equal(sparse.predict(X), dense.predict(D))
    np.testing.assert_array_equal(sparse.predict_leaf(X), dense.predict_leaf(D))


@pytest.mark.parametrize("extra", [
    dict(subsample=0.7, subsample_freq=1),
    dict(growth="depthwise", max_depth=4, hist_cache=4),
    dict(colsample_bytree=0.6, colsample_bynode=0.7),
    dict(split="sparse", top_k=1),
    dict(tree_mode="single_output", hist_cache=2),
], ids=["bagging", "depthwise", "colsample", "top-k", "single-output"])
def test_sparse_training_modes_and_validation_sets(extra, max_density):
    """Bagging and validation sets traverse the binned sparse layout; every
    growth mode gives the dense model, and the same evaluation history."""
    X, D, y = sparse_data(seed=8, n_rows=400)
    params = dict(PARAMS, objective="mse", **extra)

    def fit(M):
        train_set = gbmo.Dataset(M[:300], y[:300])
        valid = train_set.create_valid(M[300:], y[300:])
        return gbmo.train(params, train_set, 6, valid_sets=[valid])

    dense, sparse = fit(D), fit(X)
    assert_same_model(dense, sparse)
    assert sparse.evals_result == dense.evals_result


def test_one_hot_sparse_x_adds_large_nodes_in_chunks_as_dense_x_does(chunk_scratch_requests):
    """Binary columns at 5%: sparse X's large nodes add their rows in chunks
    (the scratch is small), and the model is the dense X's, whose columns
    are built by row too, on one thread or two."""
    rng = np.random.default_rng(11)
    D = (rng.random((20000, 20)) < 0.05).astype(float)
    y = D @ rng.normal(size=20) + 0.1 * rng.normal(size=20000)
    asked = chunk_scratch_requests
    params = dict(PARAMS, max_leaves=15)
    dense = gbmo.train(params, gbmo.Dataset(D, y), 4)
    asked.clear()
    sparse_set = gbmo.Dataset(sp.csr_matrix(D), y)
    sparse = gbmo.train(params, sparse_set, 4)
    assert sparse_set.X_binned.is_sparse.all() and len(asked) > 0
    one_thread = gbmo.train(dict(params, n_threads=1), sparse_set, 4)
    assert_same_model(sparse, one_thread)
    for a, b in zip(dense.trees, sparse.trees):
        np.testing.assert_array_equal(a.node_feature, b.node_feature)
        np.testing.assert_array_equal(a.node_bin, b.node_bin)
    np.testing.assert_allclose(sparse.predict(D), dense.predict(D), rtol=1e-9, atol=1e-9)


def test_results_do_not_depend_on_threads(monkeypatch):
    monkeypatch.setattr(gbmo.binning, "SPARSE_MAX_DENSITY", 0.2)
    X, _, y = sparse_data(seed=9)
    one = gbmo.train(dict(PARAMS, n_threads=1), gbmo.Dataset(X, y), 5)
    two = gbmo.train(dict(PARAMS, n_threads=2), gbmo.Dataset(X, y), 5)
    assert_same_model(one, two)


def test_bin_subsample_on_sparse_input(monkeypatch):
    monkeypatch.setattr(gbmo.binning, "SPARSE_MAX_DENSITY", 0.2)
    X, D, y = sparse_data(seed=10)
    params = dict(PARAMS, bin_subsample=120)
    assert_same_model(gbmo.train(params, gbmo.Dataset(D, y), 4),
                      gbmo.train(params, gbmo.Dataset(X, y), 4))


def test_cv_on_sparse_input(monkeypatch):
    monkeypatch.setattr(gbmo.binning, "SPARSE_MAX_DENSITY", 0.2)
    X, D, y = sparse_data(seed=11, n_rows=300)
    dense = gbmo.cv(dict(PARAMS, objective="mse"), gbmo.Dataset(D, y), 4, nfold=3)
    sparse = gbmo.cv(dict(PARAMS, objective="mse"), gbmo.Dataset(X, y), 4, nfold=3)
    assert dense == sparse


# -- prediction on sparse X ---------------------------------------------------
@pytest.fixture(scope="module")
def dense_booster():
    X, D, y = sparse_data(seed=12)
    return gbmo.train(dict(PARAMS, objective="mse"), gbmo.Dataset(D, y), 6), X, D


@pytest.mark.parametrize("convert", [
    lambda X: X, lambda X: X.tocsc(), lambda X: X.tocoo(), lambda X: X.tolil(),
    lambda X: X.todok(), lambda X: sp.csr_array(X), lambda X: sp.csc_array(X),
    lambda X: sp.coo_array(X), lambda X: X.astype(np.float32),
], ids=["csr", "csc", "coo", "lil", "dok", "csr_array", "csc_array", "coo_array", "float32"])
def test_predict_on_sparse_equals_dense(dense_booster, convert):
    booster, X, D = dense_booster
    Xs = convert(X)
    D = Xs.toarray()
    np.testing.assert_array_equal(booster.predict(Xs), booster.predict(D))
    np.testing.assert_array_equal(booster.predict(Xs, raw_score=True, num_iteration=3),
                                  booster.predict(D, raw_score=True, num_iteration=3))
    np.testing.assert_array_equal(booster.predict_leaf(Xs), booster.predict_leaf(D))


def test_predict_on_non_canonical_csr(dense_booster):
    """Unsorted column indices and duplicate entries (summed, as toarray does);
    the caller's matrix is left as it was."""
    booster, X, D = dense_booster
    coo = X.tocoo()
    order = np.random.default_rng(0).permutation(coo.nnz)
    half = coo.data[order] / 2
    rows, cols = coo.row[order], coo.col[order]
    messy = sp.csr_matrix((np.concatenate([half, half]),
                           (np.concatenate([rows, rows]), np.concatenate([cols, cols]))),
                          shape=X.shape)
    messy = sp.csr_matrix((messy.data, messy.indices, messy.indptr), shape=X.shape)
    messy.has_sorted_indices = False
    data_before = messy.data.copy()
    np.testing.assert_array_equal(booster.predict(messy), booster.predict(messy.toarray()))
    np.testing.assert_array_equal(messy.data, data_before)


# -- scikit-learn estimators --------------------------------------------------
def test_sklearn_estimators_take_sparse_input():
    pytest.importorskip("sklearn")
    from gbmo.sklearn import GBMOClassifier, GBMORegressor

    X, D, y = sparse_data(seed=13)
    regressor = GBMORegressor(n_estimators=5, min_samples_leaf=5).fit(X, y)
    np.testing.assert_array_equal(
        regressor.predict(X), GBMORegressor(n_estimators=5, min_samples_leaf=5).fit(D, y)
        .predict(D))
    labels = (y[:, 0] > 0).astype(int)
    classifier = GBMOClassifier(n_estimators=5, early_stopping_rounds=2).fit(X.tocsc(), labels)
    np.testing.assert_array_equal(classifier.predict_proba(sp.coo_array(X)),
                                  classifier.predict_proba(D))


# -- errors -------------------------------------------------------------------
def test_a_1d_sparse_array_is_refused_as_not_2d():
    one_d = sp.coo_array(np.ones(5))
    if one_d.ndim != 1:  # scipy < 1.13: coo_array of a vector is one row, (1, 5)
        pytest.skip(f"this scipy has no 1-D sparse arrays (coo_array(np.ones(5)) is "
                    f"{one_d.shape}): there is no 1-D sparse X to refuse")
    with pytest.raises(ValueError, match=r"X must be 2-D \(n_rows, n_features\), got shape "
                                         r"\(5,\)"):
        gbmo.Dataset(one_d, np.zeros(5))


def test_sparse_input_errors(dense_booster):
    booster, X, _ = dense_booster
    y = np.zeros(X.shape[0])
    with pytest.raises(ValueError, match="empty"):
        gbmo.Dataset(sp.csr_matrix((0, 4)), np.zeros(0))
    with pytest.raises(ValueError, match="empty"):
        gbmo.Dataset(sp.csr_matrix((5, 0)), np.zeros(5))
    with pytest.raises(TypeError, match="complex"):
        gbmo.Dataset(X.astype(np.complex128), y)
    with pytest.raises(ValueError, match="features"):
        booster.predict(X[:, :-1])
    with pytest.raises(ValueError, match="rows"):
        gbmo.Dataset(X, y[:-1])
    # integer and boolean sparse data become float64
    ints = sp.csr_matrix(np.nan_to_num(X.toarray()).round().astype(np.int64))
    assert gbmo.Dataset(ints, y).X.dtype == np.float64
    assert gbmo.Dataset(ints.astype(bool), y).X.dtype == np.float64
    np.testing.assert_array_equal(booster.predict(ints), booster.predict(ints.toarray()))


# -- memory: the dense matrix is never allocated ------------------------------
def test_peak_memory_well_under_dense_size():
    """20,000 x 2,000 at 0.5% density: binning, training and prediction (with
    histograms kept small: 31 bins, a cache of 4) trace far less than n x p
    bytes, the size of the dense binned matrix alone (an eighth of the float64 X)."""
    n_rows, n_features = 20_000, 2_000
    rng = np.random.default_rng(0)
    per_row = 10  # 0.5% of 2,000 (scipy.sparse.random is slow at this size)
    X = sp.csr_matrix((rng.normal(size=n_rows * per_row),
                       rng.integers(0, n_features, size=n_rows * per_row),
                       np.arange(0, n_rows * per_row + 1, per_row)), shape=(n_rows, n_features))
    X.sum_duplicates()
    y = np.column_stack([X[:, 0].toarray().ravel(), X[:, 1].toarray().ravel()])
    y += 0.01 * rng.normal(size=y.shape)
    params = dict(objective="mse", max_leaves=8, max_bins=31, hist_cache=4,
                  n_threads=N_THREADS, verbosity=-1)
    tracemalloc.start()
    try:
        train_set = gbmo.Dataset(X, y)
        booster = gbmo.train(params, train_set, 2)
        prediction = booster.predict(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    dense_bytes = n_rows * n_features
    assert train_set.X_binned.nbytes < dense_bytes / 30  # 5 bytes per stored value
    assert peak < dense_bytes / 4, f"traced peak {peak / 1e6:.1f} MB"
    assert prediction.shape == (n_rows, 2)


def test_import_gbmo_leaves_scipy_sparse_unloaded_and_still_takes_sparse_X(tmp_path):
    """scipy.sparse took half of `import gbmo`; a scipy sparse X can only exist
    once it is loaded, so gbmo checks sys.modules instead of importing it."""
    script = (
        "import sys, numpy as np, gbmo\n"
        "assert 'scipy.sparse' not in sys.modules, 'imported by gbmo'\n"
        "import scipy.sparse as sp\n"
        "X = sp.random(200, 4, density=0.5, format='csr', random_state=0)\n"
        "y = np.asarray(X.sum(axis=1)).ravel()\n"
        "booster = gbmo.train({'verbosity': 0, 'min_samples_leaf': 5}, gbmo.Dataset(X, y), 5)\n"
        "assert booster.predict(X).shape == (200,)\n"
        "assert np.allclose(booster.predict(X), booster.predict(X.toarray()))\n"
        "print('ok')\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def _malformed(X, part, position, value):
    """A copy of CSR / CSC X with one entry of indices or indptr changed, as
    scipy's constructor takes it unchecked."""
    indices, indptr = X.indices.copy(), X.indptr.copy()
    {"indices": indices, "indptr": indptr}[part][position] = value
    return type(X)((X.data, indices, indptr), shape=X.shape)


@pytest.mark.parametrize("kind, part, position, value, message", [
    ("csr", "indices", 3, 7, r"CSR matrix: its entry 3 has column index 7; allowed: 0 \.\. 4"),
    ("csr", "indices", 0, -1, r"CSR matrix: its entry 0 has column index -1; allowed: 0 \.\. 4"),
    ("csr", "indptr", 5, 10**6, r"CSR matrix: its indptr decreases at row 5 \(1000000 then "),
    ("csc", "indices", 0, 210, r"CSC matrix: its entry 0 has row index 210; allowed: 0 \.\. 199"),
])
def test_a_malformed_sparse_x_is_refused_before_the_kernels_read_it(kind, part, position, value,
                                                                    message):
    """Found by an audit: a column index past the last column crashed the
    interpreter in training (free(): invalid next size), a broken indptr in
    predict, and predict read other out-of-range indices silently."""
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(200, 5))
    y = dense[:, 0]
    bad = _malformed(getattr(sp, f"{kind}_matrix")(dense), part, position, value)
    with pytest.raises(ValueError, match="X is a malformed scipy sparse " + message):
        gbmo.train({"verbosity": -1}, gbmo.Dataset(bad, y), 2)
    model = gbmo.train({"verbosity": -1}, gbmo.Dataset(dense, y), 2)
    with pytest.raises(ValueError, match="X is a malformed scipy sparse " + message):
        model.predict(bad)
    labels = _malformed(sp.csr_matrix((dense > 0).astype(float)), "indices", 1, 9)
    with pytest.raises(ValueError, match=r"Y is a malformed scipy sparse CSR matrix: its entry 1 "
                                         r"has column index 9"):
        gbmo.Dataset(dense, labels)
