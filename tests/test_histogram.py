"""gather_gradients, build_histograms and subtract_histograms against numpy references."""
import numpy as np
import pytest

from gbmo._core import G_H_DTYPE, HIST_DTYPE, ROW_DTYPE, X_BINNED_DTYPE, X_BINNED_WIDE_DTYPE
from gbmo._core._histogram import (MAX_ROW_WISE_SLOTS, PREFETCH_ENTRY_ROWS, PREFETCH_GAP,
                                   PREFETCH_MIN_ENTRIES, PREFETCH_MIN_TOTAL,
                                   PREFETCH_ROWS, ROW_CHUNKS, build_histograms,
                                   build_histograms_by_row,
                                   build_histograms_of_nodes, column_sums, gather_gradients,
                                   row_entries, subtract_histograms)

SENTINEL = -12345.5

# The kernels read 8-bit bins, and 16-bit bins (max_bins above 255), to which
# the tests give values above 255.
BIN_DTYPES = [pytest.param(X_BINNED_DTYPE, id="8-bit"),
              pytest.param(X_BINNED_WIDE_DTYPE, id="16-bit")]


def bins_of(dtype, small):
    """The number of bins a test of `small` bins takes for dtype: for 16-bit
    bins, 300 more, so that values above 255 are added."""
    return small if dtype == X_BINNED_DTYPE else small + 300


def make_data(rng, n_rows, n_features, n_bins, d, k, dtype=X_BINNED_DTYPE):
    """Binned X (n_features, n_rows) of dtype, float32 grad (n, d), hess (n, k)."""
    X_binned = rng.integers(0, n_bins, size=(n_features, n_rows)).astype(dtype)
    grad = rng.normal(size=(n_rows, d)).astype(G_H_DTYPE)
    hess = rng.uniform(0.1, 2.0, size=(n_rows, k)).astype(G_H_DTYPE)
    return X_binned, grad, hess


def hess_width(kind, d):
    return {"0": 0, "1": 1, "d": d}[kind]


def reference_gather(grad, hess, rows):
    n = len(rows)
    out = np.empty((n, grad.shape[1] + hess.shape[1] + 1), dtype=G_H_DTYPE)
    for i, r in enumerate(rows):
        out[i] = np.concatenate([grad[r], hess[r], [1.0]])
    return out


def reference_histograms(X_binned, rows, ordered, features, n_bins, n_features):
    """np.add.at over the node rows; NaN for the features that are not asked for."""
    width = ordered.shape[1]
    hist = np.full((n_features, n_bins, width), np.nan)
    for f in features:
        hist[f] = 0.0
        np.add.at(hist[f], X_binned[f, rows].astype(np.intp), ordered.astype(np.float64))
    return hist


def gathered(grad, hess, rows, n_threads=2):
    out = np.empty((len(rows), grad.shape[1] + hess.shape[1] + 1), dtype=G_H_DTYPE)
    gather_gradients(grad, hess, rows, out, n_threads)
    return out


def kernel_histograms(X_binned, rows, ordered, features, n_bins, n_threads, fill=SENTINEL):
    hist = np.full((X_binned.shape[0], n_bins, ordered.shape[1]), fill, dtype=HIST_DTYPE)
    build_histograms(X_binned, rows, ordered, features, hist, n_threads)
    return hist


def random_rows(rng, n_rows, size):
    """A subset of the rows in a random (not sorted) order, like a node's rows."""
    return rng.permutation(n_rows)[:size].astype(ROW_DTYPE)


# -- gather_gradients ---------------------------------------------------------
@pytest.mark.parametrize("k_kind", ["0", "1", "d"])
@pytest.mark.parametrize("d", [1, 3, 8])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_gather_gradients_layout(k_kind, d, n_threads):
    rng = np.random.default_rng(d * 10 + len(k_kind))
    n_rows = 57
    k = hess_width(k_kind, d)
    _, grad, hess = make_data(rng, n_rows, 1, 4, d, k)
    rows = random_rows(rng, n_rows, 31)
    out = np.full((len(rows), d + k + 1), np.nan, dtype=G_H_DTYPE)
    gather_gradients(grad, hess, rows, out, n_threads)
    np.testing.assert_array_equal(out, reference_gather(grad, hess, rows))
    np.testing.assert_array_equal(out[:, :d], grad[rows])
    np.testing.assert_array_equal(out[:, d:d + k], hess[rows])
    np.testing.assert_array_equal(out[:, -1], 1.0)


def test_gather_gradients_repeated_and_empty_rows():
    rng = np.random.default_rng(1)
    _, grad, hess = make_data(rng, 10, 1, 2, 4, 4)
    rows = np.array([3, 3, 0, 9, 3], dtype=ROW_DTYPE)
    out = np.empty((5, 9), dtype=G_H_DTYPE)
    gather_gradients(grad, hess, rows, out, 2)
    np.testing.assert_array_equal(out, reference_gather(grad, hess, rows))
    empty = np.empty((0, 9), dtype=G_H_DTYPE)
    gather_gradients(grad, hess, np.empty(0, dtype=ROW_DTYPE), empty, 2)
    assert empty.shape == (0, 9)


# -- build_histograms ---------------------------------------------------------
@pytest.mark.parametrize("k_kind", ["0", "1", "d"])
@pytest.mark.parametrize("d", [1, 4, 8, 20])  # rows of 2 to 41 values: from 9 the C loop
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("dtype", BIN_DTYPES)
def test_build_histograms_matches_add_at(k_kind, d, seed, dtype):
    rng = np.random.default_rng(seed)
    n_rows, n_features, n_bins = 200, 7, bins_of(dtype, 9)
    k = hess_width(k_kind, d)
    X_binned, grad, hess = make_data(rng, n_rows, n_features, n_bins, d, k, dtype)
    rows = random_rows(rng, n_rows, 150)
    features = np.array([5, 0, 2, 6], dtype=np.int32)
    ordered = gathered(grad, hess, rows)
    hist = kernel_histograms(X_binned, rows, ordered, features, n_bins, 2)
    expected = reference_histograms(X_binned, rows, ordered, features, n_bins, n_features)
    for f in features:
        # counts are exact
        np.testing.assert_array_equal(
            hist[f, :, -1], np.bincount(X_binned[f, rows], minlength=n_bins))
        np.testing.assert_allclose(hist[f], expected[f], rtol=1e-10, atol=1e-10)
        # every feature sees every node row once
        np.testing.assert_allclose(hist[f].sum(axis=0),
                                   ordered.astype(np.float64).sum(axis=0), rtol=1e-10, atol=1e-9)
    # the features not listed are untouched
    others = np.setdiff1d(np.arange(n_features), features)
    assert np.all(hist[others] == SENTINEL)


def test_build_histograms_overwrites_stale_buffer():
    """A recycled buffer holds an old node's histogram: the listed slices must be reset."""
    rng = np.random.default_rng(2)
    X_binned, grad, hess = make_data(rng, 80, 3, 5, 2, 2)
    features = np.arange(3, dtype=np.int32)
    rows = random_rows(rng, 80, 40)
    ordered = gathered(grad, hess, rows)
    stale = kernel_histograms(X_binned, rows, ordered, features, 5, 1, fill=777.0)
    fresh = kernel_histograms(X_binned, rows, ordered, features, 5, 1, fill=0.0)
    np.testing.assert_array_equal(stale, fresh)
    # reuse of the same buffer for other rows
    rows2 = random_rows(rng, 80, 13)
    ordered2 = gathered(grad, hess, rows2)
    build_histograms(X_binned, rows2, ordered2, features, stale, 2)
    expected = reference_histograms(X_binned, rows2, ordered2, features, 5, 3)
    np.testing.assert_allclose(stale, expected, rtol=1e-10, atol=1e-10)


def test_build_histograms_uses_the_gathered_order():
    """ordered[i] belongs to rows[i]: permuting rows and ordered together changes nothing,
    permuting only ordered does."""
    rng = np.random.default_rng(3)
    X_binned, grad, hess = make_data(rng, 60, 2, 6, 3, 0)
    rows = random_rows(rng, 60, 60)
    features = np.array([0, 1], dtype=np.int32)
    base = kernel_histograms(X_binned, rows, gathered(grad, hess, rows), features, 6, 2)
    perm = rng.permutation(60)
    rows_p = np.ascontiguousarray(rows[perm])
    permuted = kernel_histograms(X_binned, rows_p, gathered(grad, hess, rows_p), features, 6, 2)
    np.testing.assert_allclose(permuted, base, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(permuted[..., -1], base[..., -1])


def test_build_histograms_empty_node_and_missing_bin():
    rng = np.random.default_rng(4)
    n_bins = 256  # bins 0..254 plus missing 255, the largest layout
    X_binned, grad, hess = make_data(rng, 300, 3, 255, 2, 1)
    X_binned[:, ::7] = 255
    features = np.array([0, 1, 2], dtype=np.int32)
    rows = random_rows(rng, 300, 300)
    ordered = gathered(grad, hess, rows)
    hist = kernel_histograms(X_binned, rows, ordered, features, n_bins, 2)
    expected = reference_histograms(X_binned, rows, ordered, features, n_bins, 3)
    np.testing.assert_allclose(hist, expected, rtol=1e-10, atol=1e-10)
    for f in features:
        assert hist[f, 255, -1] == np.count_nonzero(X_binned[f] == 255)
    empty_rows = np.empty(0, dtype=ROW_DTYPE)
    hist = kernel_histograms(X_binned, empty_rows, np.empty((0, 4), dtype=G_H_DTYPE),
                             features[:2], n_bins, 2)
    assert np.all(hist[:2] == 0.0)
    assert np.all(hist[2] == SENTINEL)


@pytest.mark.parametrize("d", [1, 2, 5])
def test_a_histogram_shorter_than_max_bins_counts_missing_in_its_last_bin(d):
    """Features with few values get histograms of the most bins any feature has
    plus one; the missing value (max_bins = 255) lands in that last bin. d = 1
    and 2 cover the written-out rows of 2 and 3 values."""
    rng = np.random.default_rng(9)
    n_bins = 4  # values 0..2 plus missing
    X_binned, grad, hess = make_data(rng, 120, 3, n_bins - 1, d, 0)
    X_binned[:, ::5] = 255
    features = np.array([0, 1, 2], dtype=np.int32)
    rows = random_rows(rng, 120, 100)
    ordered = gathered(grad, hess, rows)
    hist = kernel_histograms(X_binned, rows, ordered, features, n_bins, 2)
    expected = reference_histograms(np.minimum(X_binned, n_bins - 1), rows, ordered, features,
                                    n_bins, 3)
    np.testing.assert_allclose(hist, expected, rtol=1e-10, atol=1e-10)
    for f in features:
        assert hist[f, -1, -1] == np.count_nonzero(X_binned[f, rows] == 255)


@pytest.mark.parametrize("k_kind", ["0", "1", "d"])
def test_build_histograms_threads_agree(k_kind):
    rng = np.random.default_rng(5)
    d = 5
    k = hess_width(k_kind, d)
    X_binned, grad, hess = make_data(rng, 500, 11, 17, d, k)
    rows = random_rows(rng, 500, 420)
    features = np.array([10, 3, 4, 0, 7, 8, 1], dtype=np.int32)
    results = []
    for n_threads in (1, 2, 3):
        ordered = gathered(grad, hess, rows, n_threads)
        results.append(kernel_histograms(X_binned, rows, ordered, features, 17, n_threads))
    for other in results[1:]:
        np.testing.assert_array_equal(other[..., -1], results[0][..., -1])
        np.testing.assert_allclose(other, results[0], rtol=1e-12, atol=1e-12)


# -- subtract_histograms ------------------------------------------------------
@pytest.mark.parametrize("k_kind", ["0", "1", "d"])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_subtraction_equals_direct_sibling(k_kind, n_threads):
    rng = np.random.default_rng(6)
    d, n_rows, n_features, n_bins = 3, 250, 6, 12
    k = hess_width(k_kind, d)
    X_binned, grad, hess = make_data(rng, n_rows, n_features, n_bins, d, k)
    parent_rows = random_rows(rng, n_rows, 200)
    go_left = X_binned[2, parent_rows] <= 5
    left_rows = np.ascontiguousarray(parent_rows[go_left])
    right_rows = np.ascontiguousarray(parent_rows[~go_left])
    features = np.array([0, 2, 3, 5], dtype=np.int32)

    def hist_of(rows):
        return kernel_histograms(X_binned, rows, gathered(grad, hess, rows), features,
                                 n_bins, n_threads)

    parent, left, right = hist_of(parent_rows), hist_of(left_rows), hist_of(right_rows)
    sibling = np.full_like(parent, SENTINEL)
    subtract_histograms(parent, left, features, sibling, n_threads)
    np.testing.assert_allclose(sibling[features], right[features], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(sibling[features][..., -1], right[features][..., -1])
    others = np.setdiff1d(np.arange(n_features), features)
    assert np.all(sibling[others] == SENTINEL)
    # in place, as the grower does it: the parent's buffer becomes the sibling
    in_place = parent.copy()
    subtract_histograms(in_place, left, features, in_place, n_threads)
    np.testing.assert_allclose(in_place[features], right[features], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(in_place[others], parent[others])


def test_subtraction_reference_elementwise():
    rng = np.random.default_rng(7)
    parent = rng.normal(size=(4, 5, 3))
    child = rng.normal(size=(4, 5, 3))
    features = np.array([3, 1], dtype=np.int32)
    out = np.zeros_like(parent)
    subtract_histograms(parent, child, features, out, 2)
    expected = np.zeros_like(parent)
    for f in features:
        for b in range(5):
            for j in range(3):
                expected[f, b, j] = parent[f, b, j] - child[f, b, j]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_histograms_of_several_nodes_equal_one_node_at_a_time(n_threads):
    """build_histograms_of_nodes (one pass over every (node, feature) pair) gives
    each node the histogram build_histograms gives it alone."""
    rng = np.random.default_rng(41)
    n_rows, n_features, n_bins, width = 300, 5, 9, 4
    X_binned = rng.integers(0, n_bins, size=(n_features, n_rows)).astype(np.uint8)
    sizes = [0, 1, 57, 120, 7]
    rows = rng.permutation(n_rows)[: sum(sizes)].astype(np.uint32)
    offsets = np.cumsum([0] + sizes).astype(np.intp)
    ordered = rng.normal(size=(len(rows), width)).astype(np.float32)
    features = np.array([0, 2, 3, 4], dtype=np.int32)
    together = np.full((len(sizes), n_features, n_bins, width), np.nan)
    build_histograms_of_nodes(X_binned, rows, offsets, ordered, features, together, n_threads)
    for m in range(len(sizes)):
        alone = np.full((n_features, n_bins, width), np.nan)
        part = slice(offsets[m], offsets[m + 1])
        build_histograms(X_binned, np.ascontiguousarray(rows[part]),
                         np.ascontiguousarray(ordered[part]), features, alone, 1)
        np.testing.assert_allclose(together[m][features], alone[features], rtol=1e-12, atol=1e-12)
        assert np.all(np.isnan(together[m][1]))  # unlisted feature untouched


# -- a node's rows scattered over many rows --------------------------------------
# With PREFETCH_MIN_TOTAL rows or more, a node of at most 1 / PREFETCH_GAP of
# them has its bins and gradients prefetched PREFETCH_ROWS rows ahead, clamped
# to its last row (prefetch.h): sizes around PREFETCH_ROWS take every clamp,
# and SCATTERED_TOTAL // PREFETCH_GAP is the largest node that prefetches.
SCATTERED_TOTAL = PREFETCH_MIN_TOTAL + 1000
SCATTERED_SIZES = [1, 2, PREFETCH_ROWS - 1, PREFETCH_ROWS, PREFETCH_ROWS + 1,
                   SCATTERED_TOTAL // PREFETCH_GAP]


@pytest.mark.parametrize("k_kind", ["0", "1", "d"])
@pytest.mark.parametrize("d", [1, 2, 5, 20])  # rows of 2, 3, 6-11 and 21-41 values
@pytest.mark.parametrize("n_node_rows", SCATTERED_SIZES)
@pytest.mark.parametrize("dtype", BIN_DTYPES)
def test_a_node_scattered_over_many_rows_matches_add_at(k_kind, d, n_node_rows, dtype):
    """The prefetching loops gather, add and skip bins as the others do."""
    rng = np.random.default_rng(n_node_rows * 7 + d)
    n_features, n_bins = 3, bins_of(dtype, 11)
    k = hess_width(k_kind, d)
    X_binned, grad, hess = make_data(rng, SCATTERED_TOTAL, n_features, n_bins, d, k, dtype)
    rows = np.sort(random_rows(rng, SCATTERED_TOTAL, n_node_rows))
    features = np.arange(n_features, dtype=np.int32)
    for n_threads in (1, 2):
        ordered = gathered(grad, hess, rows, n_threads)
        np.testing.assert_array_equal(ordered, reference_gather(grad, hess, rows))
        hist = kernel_histograms(X_binned, rows, ordered, features, n_bins, n_threads)
        expected = reference_histograms(X_binned, rows, ordered, features, n_bins, n_features)
        np.testing.assert_array_equal(hist[..., -1], expected[..., -1])  # counts exact
        np.testing.assert_allclose(hist, expected, rtol=1e-10, atol=1e-10)
        # with a skipped bin per feature, from the node's totals
        skipped = np.array([0, 5, n_bins - 1], dtype=np.int32)
        totals = ordered.astype(np.float64).sum(axis=0)[None]
        hist_skipping = np.full_like(hist, SENTINEL)
        build_histograms(X_binned, rows, ordered, features, hist_skipping, n_threads, None,
                         skipped, totals)
        np.testing.assert_allclose(hist_skipping, expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", BIN_DTYPES)
def test_several_scattered_nodes_equal_one_node_at_a_time(dtype):
    """Depth-wise growth's pass over several nodes, empty ones among them, on
    the prefetching loops."""
    rng = np.random.default_rng(15)
    n_features, n_bins, width = 3, bins_of(dtype, 9), 4
    X_binned = rng.integers(0, n_bins, size=(n_features, SCATTERED_TOTAL)).astype(dtype)
    sizes = [0, SCATTERED_TOTAL // PREFETCH_GAP, 1, 0, PREFETCH_ROWS + 1]
    rows = rng.permutation(SCATTERED_TOTAL)[: sum(sizes)].astype(np.uint32)
    offsets = np.cumsum([0] + sizes).astype(np.intp)
    for m in range(len(sizes)):
        rows[offsets[m]:offsets[m + 1]].sort()
    ordered = rng.normal(size=(len(rows), width)).astype(np.float32)
    features = np.arange(n_features, dtype=np.int32)
    together = np.full((len(sizes), n_features, n_bins, width), np.nan)
    build_histograms_of_nodes(X_binned, rows, offsets, ordered, features, together, 2)
    for m in range(len(sizes)):
        part = slice(offsets[m], offsets[m + 1])
        expected = reference_histograms(X_binned, rows[part], ordered[part], features, n_bins,
                                        n_features)
        np.testing.assert_array_equal(together[m][..., -1], expected[..., -1])
        np.testing.assert_allclose(together[m], expected, rtol=1e-9, atol=1e-9)


# rows of 2, 3 (one output), 4, 5, 7, 8 and 9 values (the last not split)
@pytest.mark.parametrize("d, k_kind", [(1, "0"), (1, "1"), (3, "0"), (2, "1"), (3, "d"),
                                       (7, "0"), (4, "d")])
@pytest.mark.parametrize("n_node_rows", [79, 80, 81, 82, 83, 161])
@pytest.mark.parametrize("in_runs", [False, True])
def test_rows_of_a_few_values_split_over_four_histograms_match_add_at(d, k_kind, n_node_rows,
                                                                      in_runs):
    """A node of at least 8 rows per used bin, whose first rows repeat bins
    often, adds rows of up to 8 values into four histograms in turn, then
    sums them: 79 rows of 9 value bins (and the missing one) stay below
    that, 80 to 83 cover every remainder of rows over the four; a feature of
    5 value bins (value_bins) takes them all and leaves its histogram's rows
    between those and the missing row as they were; bins in runs (a sorted
    column: four histograms) or at random (one or four); missing values
    too."""
    rng = np.random.default_rng(n_node_rows)
    n_bins, n_rows, n_features = 10, 200, 3  # values 0 .. 8 plus missing
    X_binned, grad, hess = make_data(rng, n_rows, n_features, n_bins - 1, d,
                                     hess_width(k_kind, d))
    X_binned[1, ::7] = np.iinfo(X_binned.dtype).max
    X_binned[2] = np.where(rng.random(n_rows) < 0.6, 3, X_binned[2] % 5)
    value_bins = np.array([9, 9, 5], dtype=np.int32)
    rows = random_rows(rng, n_rows, n_node_rows)
    if in_runs:
        X_binned[:, np.sort(rows)] = np.sort(X_binned[:, rows], axis=1)
        rows = np.sort(rows)
    ordered = gathered(grad, hess, rows)
    features = np.arange(n_features, dtype=np.int32)
    hist = np.full((n_features, n_bins, ordered.shape[1]), SENTINEL)
    build_histograms(X_binned, rows, ordered, features, hist, 1, value_bins=value_bins)
    expected = reference_histograms(np.minimum(X_binned, n_bins - 1), rows, ordered, features,
                                    n_bins, n_features)
    expected[2, 5:n_bins - 1] = SENTINEL  # never written
    np.testing.assert_array_equal(hist[..., -1], expected[..., -1])  # counts exact
    np.testing.assert_allclose(hist, expected, rtol=1e-12, atol=1e-12)


# -- skipped bins ---------------------------------------------------------------
@pytest.mark.parametrize("k_kind", ["0", "1", "d"])
@pytest.mark.parametrize("d", [1, 2, 5, 8, 20])  # rows of 9 values or more take the C loop
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", BIN_DTYPES)
def test_a_skipped_bin_is_the_totals_minus_the_other_bins(k_kind, d, n_threads, dtype):
    """Each feature may name a bin (-1: none) whose rows are not added; it is
    filled from the node's totals. Covered: a dominant bin, the missing bin (the
    last row, binned as the dtype's largest value), a bin no node row is in,
    and none."""
    rng = np.random.default_rng(12)
    n_bins = bins_of(dtype, 6)  # values 0 .. n_bins - 2 plus missing
    n_rows, n_features = 400, 5
    k = hess_width(k_kind, d)
    X_binned, grad, hess = make_data(rng, n_rows, n_features, n_bins - 1, d, k, dtype)
    X_binned[0, rng.random(n_rows) < 0.8] = 2
    X_binned[1, rng.random(n_rows) < 0.7] = np.iinfo(dtype).max
    X_binned[2, X_binned[2] == 4] = 3
    skipped = np.array([2, n_bins - 1, 4, -1, 0], dtype=np.int32)
    features = np.array([0, 1, 2, 3, 4], dtype=np.int32)
    rows = random_rows(rng, n_rows, 300)
    ordered = gathered(grad, hess, rows)
    totals = ordered.astype(np.float64).sum(axis=0)[None]
    hist = np.full((n_features, n_bins, ordered.shape[1]), SENTINEL)
    build_histograms(X_binned, rows, ordered, features, hist, n_threads, None, skipped, totals)
    expected = reference_histograms(np.minimum(X_binned, n_bins - 1), rows, ordered, features,
                                    n_bins, n_features)
    np.testing.assert_array_equal(hist[..., -1], expected[..., -1])  # counts exact
    np.testing.assert_allclose(hist, expected, rtol=1e-9, atol=1e-9)
    # The skipped rows really come from the totals: shifted totals shift them only.
    shifted = np.full_like(hist, SENTINEL)
    build_histograms(X_binned, rows, ordered, features, shifted, n_threads, None, skipped,
                     totals + 1000.0)
    moved = np.zeros(hist.shape, dtype=bool)
    for f, b in enumerate(skipped):
        if b >= 0:
            moved[f, b] = True
    np.testing.assert_allclose(shifted[moved], hist[moved] + 1000.0, rtol=1e-12)
    np.testing.assert_array_equal(shifted[~moved], hist[~moved])


@pytest.mark.parametrize("dtype", BIN_DTYPES)
def test_several_nodes_with_skipped_bins_equal_one_node_at_a_time(dtype):
    rng = np.random.default_rng(13)
    n_rows, n_features, n_bins, width = 300, 4, bins_of(dtype, 7), 5
    X_binned = rng.integers(0, n_bins, size=(n_features, n_rows)).astype(dtype)
    X_binned[:, rng.random(n_rows) < 0.6] = 1
    sizes = [0, 1, 90, 150]
    rows = rng.permutation(n_rows)[: sum(sizes)].astype(np.uint32)
    offsets = np.cumsum([0] + sizes).astype(np.intp)
    ordered = rng.normal(size=(len(rows), width)).astype(np.float32)
    features = np.arange(n_features, dtype=np.int32)
    skipped = np.array([1, 1, -1, n_bins - 1], dtype=np.int32)
    totals = np.array([ordered[offsets[m]:offsets[m + 1]].astype(np.float64).sum(axis=0)
                       for m in range(len(sizes))])
    together = np.full((len(sizes), n_features, n_bins, width), np.nan)
    build_histograms_of_nodes(X_binned, rows, offsets, ordered, features, together, 2, None,
                              skipped, totals)
    for m in range(len(sizes)):
        part = slice(offsets[m], offsets[m + 1])
        alone = kernel_histograms(X_binned, np.ascontiguousarray(rows[part]),
                                  np.ascontiguousarray(ordered[part]), features, n_bins, 1)
        np.testing.assert_array_equal(together[m][..., -1], alone[..., -1])
        np.testing.assert_allclose(together[m], alone, rtol=1e-9, atol=1e-9)


def test_skipped_bins_need_matching_totals_and_bins_in_range():
    rng = np.random.default_rng(14)
    X_binned, grad, hess = make_data(rng, 20, 2, 3, 2, 0)
    rows = random_rows(rng, 20, 20)
    ordered = gathered(grad, hess, rows)
    features = np.array([0, 1], dtype=np.int32)
    hist = np.zeros((2, 4, 3))
    totals = np.zeros((1, 3))
    with pytest.raises(ValueError, match="skipped_bins has 1 entries for 2 features"):
        build_histograms(X_binned, rows, ordered, features, hist, 1, None,
                         np.array([0], dtype=np.int32), totals)
    with pytest.raises(ValueError, match=r"skipped_bins\[1\] = 4 is beyond the 4 bins"):
        build_histograms(X_binned, rows, ordered, features, hist, 1, None,
                         np.array([0, 4], dtype=np.int32), totals)
    with pytest.raises(ValueError, match=r"need totals of shape \(1, 3\)"):
        build_histograms(X_binned, rows, ordered, features, hist, 1, None,
                         np.array([0, 1], dtype=np.int32), None)


# -- column_sums ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_rows", [0, 1, 37, 200])
def test_column_sums_of_leading_rows(dtype, n_rows):
    rng = np.random.default_rng(15)
    block = rng.normal(size=(200, 7)).astype(dtype)
    out = np.full(7, np.nan)
    column_sums(block, n_rows, out)
    np.testing.assert_allclose(out, block[:n_rows].astype(np.float64).sum(axis=0),
                               rtol=1e-12, atol=1e-12)


def test_column_sums_rejects_a_wrong_shape():
    block = np.zeros((5, 3))
    with pytest.raises(ValueError, match=r"column_sums of 6 rows of a \(5, 3\) block"):
        column_sums(block, 6, np.zeros(3))
    with pytest.raises(ValueError, match="into 2 sums"):
        column_sums(block, 5, np.zeros(2))


# -- histograms by row ----------------------------------------------------------
def mostly_common_bins(rng, n_rows, n_features, n_bins, dtype=X_BINNED_DTYPE):
    """Binned X of dtype whose features mostly sit in one bin (a different
    one each, the missing value, the dtype's largest, for feature 1), and
    those bins as histogram rows."""
    X_binned = rng.integers(0, n_bins - 1, size=(n_features, n_rows)).astype(dtype)
    common = rng.integers(0, n_bins - 1, size=n_features).astype(np.int32)
    common[1] = n_bins - 1
    for f in range(n_features):
        X_binned[f, rng.random(n_rows) < 0.8] = np.iinfo(dtype).max if f == 1 else common[f]
    return X_binned, common


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("n_rows", [50, 9000])  # 9,000: three blocks of rows, the last partial
@pytest.mark.parametrize("dtype", BIN_DTYPES)
def test_row_entries_list_each_rows_values_outside_the_common_bin(n_rows, n_threads, dtype):
    """Each row's entries are the slots f * n_bins + b of its values b outside
    feature f's common bin, features ascending."""
    rng = np.random.default_rng(16)
    n_bins = bins_of(dtype, 6)
    X_binned, common = mostly_common_bins(rng, n_rows, 5, n_bins, dtype)
    features = np.array([0, 1, 3], dtype=np.int32)
    indptr, entry_slot = row_entries(X_binned, features, common, n_bins, n_threads)
    assert entry_slot.dtype == np.uint32
    mapped = np.minimum(X_binned, n_bins - 1)
    outside = mapped[features] != common[features, None]  # (features, rows)
    np.testing.assert_array_equal(np.diff(indptr), outside.sum(axis=0))
    for r in rng.choice(n_rows, size=50, replace=False):
        expected = [f * n_bins + mapped[f, r] for f in features if mapped[f, r] != common[f]]
        assert list(entry_slot[indptr[r]:indptr[r + 1]]) == expected
    rows, positions = np.nonzero(outside.T)  # every entry, row by row, features ascending
    np.testing.assert_array_equal(
        entry_slot, features[positions] * n_bins + mapped[features[positions], rows])
    with pytest.raises(ValueError, match="ascending"):
        row_entries(X_binned, features[::-1].copy(), common, n_bins, n_threads)


def test_row_entries_refuse_more_slots_than_32_bits_hold():
    X_binned = np.zeros((3, 10), dtype=X_BINNED_DTYPE)
    too_tall = MAX_ROW_WISE_SLOTS // 3 + 1
    with pytest.raises(ValueError, match=f"3 features x {too_tall} histogram bins are more "
                                         f"than the {MAX_ROW_WISE_SLOTS} slots"):
        row_entries(X_binned, np.arange(3, dtype=np.int32), np.zeros(3, np.int32), too_tall, 1)


@pytest.mark.parametrize("n_node_rows", [20, 600])  # one chunk of rows; all ROW_CHUNKS
@pytest.mark.parametrize("width", [2, 3, 8, 21])  # 21: histogram_rows.h's loop
@pytest.mark.parametrize("dtype", BIN_DTYPES)
def test_histograms_by_row_equal_the_reference(n_node_rows, width, dtype):
    """Wanted features get the reference histogram (their common bin from the
    totals), the rows between a feature's value rows and its missing row stay
    untouched, and any thread count gives the same sums, whether a node's
    rows are added in one chunk or in ROW_CHUNKS, summed in order (a large
    node writes the chunks' scratch, a small one leaves it alone)."""
    rng = np.random.default_rng(17)
    n_rows, n_features, n_bins = 800, 7, bins_of(dtype, 6)
    X_binned, common = mostly_common_bins(rng, n_rows, n_features, n_bins, dtype)
    by_row = np.array([0, 1, 2, 4, 6], dtype=np.int32)
    wanted = np.zeros(n_features, dtype=np.uint8)
    wanted[[0, 1, 4, 6]] = 1  # feature 2 has entries but is not wanted in this tree
    # two rows between the value rows and the missing one, never written,
    # for the features whose common bin is not there
    between = np.zeros((n_features, n_bins), dtype=bool)
    between[(common < n_bins - 3) | (common == n_bins - 1), n_bins - 3:n_bins - 1] = True
    assert between.any(axis=1)[wanted == 1].sum() >= 2
    value_bins = np.where(between.any(axis=1), n_bins - 3, n_bins - 1).astype(np.int32)
    bins = np.minimum(X_binned, n_bins - 1).astype(np.intp)
    X_binned[np.take_along_axis(between, bins, axis=1)] = 0  # no value there
    indptr, entry_slot = row_entries(X_binned, by_row, common, n_bins, 2)
    rows = np.sort(random_rows(rng, n_rows, n_node_rows))
    ordered = rng.normal(size=(n_node_rows, width)).astype(np.float32)
    totals = ordered.astype(np.float64).sum(axis=0)
    expected = reference_histograms(np.minimum(X_binned, n_bins - 1), rows, ordered,
                                    np.flatnonzero(wanted), n_bins, n_features)
    results = []
    for n_threads in (1, 2, 3):
        hist = np.full((n_features, n_bins, width), SENTINEL)
        chunk_hists = np.full((ROW_CHUNKS - 1,) + hist.shape, SENTINEL)
        build_histograms_by_row(indptr, entry_slot, wanted, common, rows, ordered, totals, hist,
                                chunk_hists, n_threads, value_bins)
        for f in np.flatnonzero(wanted):
            kept = ~between[f]
            np.testing.assert_array_equal(hist[f, kept, -1], expected[f, kept, -1])
            np.testing.assert_allclose(hist[f, kept], expected[f, kept], rtol=1e-9, atol=1e-9)
        assert np.all(hist[between] == SENTINEL)
        assert np.all(chunk_hists[:, between] == SENTINEL)
        assert np.all(hist[[3, 5]] == SENTINEL)  # no entries, not wanted
        chunked = ~np.all(chunk_hists[:, wanted == 1] == SENTINEL, axis=(1, 2, 3))
        assert list(chunked) == [n_node_rows > 100 and dtype == X_BINNED_DTYPE] * (ROW_CHUNKS - 1)
        results.append(hist[wanted == 1])
    for hist in results[1:]:
        np.testing.assert_array_equal(hist, results[0])
    one_chunk = np.full((n_features, n_bins, width), SENTINEL)  # no scratch: one chunk
    build_histograms_by_row(indptr, entry_slot, wanted, common, rows, ordered, totals, one_chunk,
                            np.empty((0,) + one_chunk.shape), 2, value_bins)
    np.testing.assert_allclose(one_chunk[wanted == 1], results[0], rtol=1e-9, atol=1e-9)
    if n_node_rows <= 100:
        np.testing.assert_array_equal(one_chunk[wanted == 1], results[0])


@pytest.mark.parametrize("width", [2, 3, 5, 21])  # written out, the inner loop, the C loop
def test_histograms_by_row_of_many_entries_prefetched_equal_the_reference(width):
    """Past PREFETCH_MIN_ENTRIES entries the loops ask for the entries of the
    row PREFETCH_ENTRY_ROWS ahead, and for its indptr twice as far, clamped to
    a node's last row: node sizes around both distances take every clamp."""
    rng = np.random.default_rng(18)
    n_rows, n_features, n_bins = 70_000, 8, 6
    X_binned = rng.integers(0, n_bins, size=(n_features, n_rows)).astype(X_BINNED_DTYPE)
    X_binned[rng.random(X_binned.shape) < 0.35] = 0
    common = np.zeros(n_features, dtype=np.int32)
    indptr, entry_slot = row_entries(X_binned, np.arange(n_features, dtype=np.int32), common,
                                     n_bins, 2)
    assert len(entry_slot) >= PREFETCH_MIN_ENTRIES
    wanted = np.ones(n_features, dtype=np.uint8)
    for n_node_rows in (1, PREFETCH_ENTRY_ROWS, PREFETCH_ENTRY_ROWS + 1, 2 * PREFETCH_ENTRY_ROWS,
                        2 * PREFETCH_ENTRY_ROWS + 1, 5_000, n_rows):
        rows = np.sort(random_rows(rng, n_rows, n_node_rows))
        ordered = rng.normal(size=(n_node_rows, width)).astype(np.float32)
        totals = ordered.astype(np.float64).sum(axis=0)
        expected = reference_histograms(X_binned, rows, ordered, np.arange(n_features), n_bins,
                                        n_features)
        for n_threads in (1, 2):
            hist = np.full((n_features, n_bins, width), SENTINEL)
            build_histograms_by_row(indptr, entry_slot, wanted, common, rows, ordered, totals,
                                    hist, np.zeros((ROW_CHUNKS - 1,) + hist.shape), n_threads)
            np.testing.assert_array_equal(hist[..., -1], expected[..., -1])
            np.testing.assert_allclose(hist, expected, rtol=1e-9, atol=1e-9)


def test_histograms_by_row_reject_inconsistent_arguments():
    rng = np.random.default_rng(18)
    X_binned, common = mostly_common_bins(rng, 20, 3, 4)
    features = np.arange(3, dtype=np.int32)
    indptr, entry_slot = row_entries(X_binned, features, common, 4, 2)
    rows = np.arange(20, dtype=np.uint32)
    ordered = np.zeros((20, 2), dtype=np.float32)
    wanted = np.ones(3, dtype=np.uint8)
    hist = np.zeros((3, 4, 2))

    def build(**change):
        arguments = dict(indptr=indptr, entry_slot=entry_slot, wanted=wanted,
                         skipped_bins=common, rows=rows, ordered=ordered, totals=np.zeros(2),
                         hist=hist, chunk_hists=np.zeros((ROW_CHUNKS - 1, 3, 4, 2)),
                         n_threads=1)
        arguments.update(change)
        build_histograms_by_row(**arguments)

    with pytest.raises(ValueError, match="skipped bin -1 is not one of the 4 bins"):
        build(skipped_bins=np.array([0, -1, 2], dtype=np.int32))
    with pytest.raises(ValueError, match="width 2"):
        build(totals=np.zeros(3))
    with pytest.raises(ValueError, match="20 rows but 19 gathered rows"):
        build(ordered=np.zeros((19, 2), dtype=np.float32))
    with pytest.raises(ValueError, match=f"chunk_hists must be at most {ROW_CHUNKS - 1} "
                                         "histograms of hist's shape"):
        build(chunk_hists=np.zeros((ROW_CHUNKS - 1, 3, 5, 2)))
    with pytest.raises(ValueError, match=f"chunk_hists must be at most {ROW_CHUNKS - 1}"):
        build(chunk_hists=np.zeros((ROW_CHUNKS, 3, 4, 2)))


# -- rows beyond a feature's value bins ----------------------------------------
@pytest.mark.parametrize("dtype", BIN_DTYPES)
@pytest.mark.parametrize("width", [2, 3, 6, 20])  # 20: the C loop
def test_value_bins_leave_the_rows_between_a_feature_s_bins_and_the_last_alone(dtype, width):
    """With value_bins, every kernel writes a feature's first value_bins[f]
    rows and its last (missing) row only: the rows between keep what they
    held (SENTINEL here, 0 in the grower), and the rows written equal the
    reference, skipped bins and all."""
    rng = np.random.default_rng(19)
    n_rows, n_bins = 3000, bins_of(dtype, 12)
    value_bins = np.array([2, 5, n_bins - 1, 1], dtype=np.int32)
    missing = np.iinfo(dtype).max
    X_binned = np.stack([rng.integers(0, v, size=n_rows) for v in value_bins]).astype(dtype)
    X_binned[:, rng.random(n_rows) < 0.1] = missing
    features = np.arange(4, dtype=np.int32)
    rows = random_rows(rng, n_rows, 2000)
    ordered = rng.normal(size=(len(rows), width)).astype(np.float32)
    expected = reference_histograms(np.minimum(X_binned, n_bins - 1), rows, ordered, features,
                                    n_bins, 4)
    between = np.zeros((4, n_bins), dtype=bool)
    for f, v in enumerate(value_bins):
        between[f, v:n_bins - 1] = True

    def check(hist, expected):
        assert np.all(hist[between] == SENTINEL)
        np.testing.assert_allclose(hist[~between], expected[~between], rtol=1e-9, atol=1e-9)

    skipped = np.array([0, 3, -1, n_bins - 1], dtype=np.int32)
    totals = ordered.astype(np.float64).sum(axis=0)[None]
    for skip in (None, skipped):
        hist = np.full((4, n_bins, width), SENTINEL)
        build_histograms(X_binned, rows, ordered, features, hist, 2, None, skip,
                         totals if skip is not None else None, value_bins)
        check(hist, expected)
    offsets = np.array([0, 500, len(rows)], dtype=np.intp)
    hists = np.full((2, 4, n_bins, width), SENTINEL)
    build_histograms_of_nodes(X_binned, rows, offsets, ordered, features, hists, 2,
                              value_bins=value_bins)
    for m in range(2):
        part = slice(offsets[m], offsets[m + 1])
        alone = reference_histograms(np.minimum(X_binned, n_bins - 1), rows[part],
                                     ordered[part], features, n_bins, 4)
        assert np.all(hists[m][between] == SENTINEL)
        np.testing.assert_allclose(hists[m][~between], alone[~between], rtol=1e-9, atol=1e-9)
    child = np.full_like(hist, SENTINEL)
    child[~between] = rng.normal(size=(int((~between).sum()), width))
    sibling = hist.copy()
    subtract_histograms(hist, child, features, sibling, 2, value_bins)
    assert np.all(sibling[between] == SENTINEL)
    np.testing.assert_array_equal(sibling[~between], hist[~between] - child[~between])
    common = np.array([0, 1, 2, 0], dtype=np.int32)
    indptr, entry_slot = row_entries(X_binned, features, common, n_bins, 2)
    by_row = np.full((4, n_bins, width), SENTINEL)
    chunk_hists = np.full((ROW_CHUNKS - 1,) + by_row.shape, SENTINEL)
    build_histograms_by_row(indptr, entry_slot, np.ones(4, np.uint8), common, np.sort(rows),
                            ordered, totals[0], by_row, chunk_hists, 2, value_bins)
    assert np.all(chunk_hists[:, between] == SENTINEL)
    check(by_row, reference_histograms(np.minimum(X_binned, n_bins - 1), np.sort(rows), ordered,
                                       features, n_bins, 4))


def test_value_bins_are_one_per_feature_and_hold_the_skipped_bins():
    X_binned = np.zeros((2, 10), dtype=X_BINNED_DTYPE)
    rows = np.arange(10, dtype=ROW_DTYPE)
    ordered = np.ones((10, 2), dtype=G_H_DTYPE)
    features = np.arange(2, dtype=np.int32)
    hist = np.zeros((2, 6, 2))
    with pytest.raises(ValueError, match="value_bins has 3 entries for 2 features"):
        build_histograms(X_binned, rows, ordered, features, hist, 1,
                         value_bins=np.array([2, 2, 2], np.int32))
    with pytest.raises(ValueError, match=r"skipped_bins\[1\] = 3 is none of the feature's 2 "
                                         "value bins nor the missing bin's row"):
        build_histograms(X_binned, rows, ordered, features, hist, 1, None,
                         np.array([0, 3], np.int32), np.ones((1, 2)),
                         np.array([2, 2], np.int32))
    with pytest.raises(ValueError, match="must have the same shape"):
        subtract_histograms(hist, np.zeros((2, 3, 4)), features, hist, 1)
