"""find_best_splits against a brute-force scan over every feature, threshold and
missing direction, computed from the rows themselves (not from the histogram)."""
import numpy as np
import pytest

from gbmo._core._split import find_best_splits

# the shared reference helpers (tests/split_reference.py); rewritten asserts there report
# their values on failure as they would here
pytest.register_assert_rewrite("split_reference")
from split_reference import (  # noqa: E402
    HESS_WIDTHS, brute_force_feature, check_against_brute_force, check_min_child_weight,
    check_min_samples_leaf, hess_width_of, make_node, node_histogram, rows_left, run_dense)


# -- tests ----------------------------------------------------------------------
@pytest.mark.parametrize("k_kind", HESS_WIDTHS)
@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_brute_force(k_kind, d, seed):
    rng = np.random.default_rng(seed * 7 + d)
    k = hess_width_of(k_kind, d)
    max_bins = 12
    n_bins_per_feature = [7, 12, 1, 4, 2, 9, 1]
    missing_features = {1, 2, 3, 5}
    X_binned, grad, hess = make_node(rng, 160, n_bins_per_feature, missing_features,
                                     max_bins, d, k)
    hess_constant = 1.0 if k else 0.7
    features = np.array([0, 1, 2, 3, 4, 5, 6], dtype=np.int32)
    gain, bin_, _, _ = check_against_brute_force(
        X_binned, grad, hess, max_bins, n_bins_per_feature, features, k, hess_constant,
        min_samples_leaf=1, min_child_weight=0.0)
    # a one-bin feature without missing values cannot be split
    assert gain[6] == -1.0 and bin_[6] == -1
    # a one-bin feature with missing values has exactly one split
    assert bin_[2] == 0
    # the best over all features agrees with the overall brute-force best
    assert np.argmax(gain[features]) == np.argmax(
        [brute_force_feature(X_binned[f], n_bins_per_feature[f], max_bins, grad, hess, k,
                             hess_constant, 1, 0.0)[0][0] for f in features])


@pytest.mark.parametrize("d", [1, 4])
@pytest.mark.parametrize("k_kind", HESS_WIDTHS)
def test_subset_of_features_and_threads(k_kind, d):
    rng = np.random.default_rng(21)
    k = hess_width_of(k_kind, d)
    max_bins = 20
    n_bins_per_feature = [20, 5, 13, 3, 8, 17]
    X_binned, grad, hess = make_node(rng, 300, n_bins_per_feature, {0, 2, 4}, max_bins, d, k)
    features = np.array([4, 0, 5, 2], dtype=np.int32)
    out = []
    for n_threads in (1, 2, 3):
        out.append(check_against_brute_force(
            X_binned, grad, hess, max_bins, n_bins_per_feature, features, k, 1.0,
            min_samples_leaf=3, min_child_weight=1e-3, n_threads=n_threads)[:3])
    for other in out[1:]:
        for a, b in zip(out[0], other):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("k_kind", HESS_WIDTHS)
@pytest.mark.parametrize("seed", [3, 4])
def test_min_samples_leaf_respected(k_kind, seed, d):
    rng = np.random.default_rng(seed)
    k = hess_width_of(k_kind, d)
    max_bins = 16
    n_bins_per_feature = [16, 10, 6, 16]
    n_rows = 200
    X_binned, grad, hess = make_node(rng, n_rows, n_bins_per_feature, {1, 3}, max_bins, d, k)
    features = np.arange(4, dtype=np.int32)
    min_samples_leaf = 70
    gain, bin_, missing_left, candidates = check_against_brute_force(
        X_binned, grad, hess, max_bins, n_bins_per_feature, features, k, 1.0,
        min_samples_leaf=min_samples_leaf, min_child_weight=0.0)
    check_min_samples_leaf(X_binned, max_bins, features, gain, bin_, missing_left, candidates,
                           min_samples_leaf)


@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("k_kind", HESS_WIDTHS)
def test_min_child_weight_is_mean_hessian_over_outputs(k_kind, d):
    rng = np.random.default_rng(31)
    k = hess_width_of(k_kind, d)
    max_bins = 16
    n_bins_per_feature = [16, 12, 8]
    # outputs with very different hessian scales: mean != min != max != sum
    X_binned, grad, hess = make_node(rng, 150, n_bins_per_feature, {1}, max_bins, d, k,
                                     hess_scales=np.array([0.1, 1.0, 5.0])[:k])
    hess_constant = 0.5
    features = np.arange(3, dtype=np.int32)
    if k == 0:
        per_row = hess_constant
    elif k == 1:
        per_row = float(hess[:, 0].mean())
    else:
        per_row = float(hess.mean())
    # roughly the hessian of 45 rows
    min_child_weight = 45 * per_row
    gain, bin_, missing_left, candidates = check_against_brute_force(
        X_binned, grad, hess, max_bins, n_bins_per_feature, features, k, hess_constant,
        min_samples_leaf=1, min_child_weight=min_child_weight)
    check_min_child_weight(X_binned, grad, hess, max_bins, features, bin_, missing_left,
                           candidates, k, hess_constant, min_child_weight)


def test_no_valid_split():
    rng = np.random.default_rng(41)
    max_bins = 8
    n_bins_per_feature = [8, 3, 1]
    X_binned, grad, hess = make_node(rng, 40, n_bins_per_feature, {1, 2}, max_bins, 2, 2)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    features = np.arange(3, dtype=np.int32)
    gain, bin_, _ = run_dense(hist, features, np.array(n_bins_per_feature, dtype=np.int32),
                              parent, 2, 2, 1.0, 21, 0.0, 2)
    np.testing.assert_array_equal(gain, -1.0)
    np.testing.assert_array_equal(bin_, -1)
    gain, bin_, _ = run_dense(hist, features, np.array(n_bins_per_feature, dtype=np.int32),
                              parent, 2, 2, 1.0, 1, 1e9, 2)
    np.testing.assert_array_equal(gain, -1.0)
    np.testing.assert_array_equal(bin_, -1)


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("k_kind", HESS_WIDTHS)
@pytest.mark.parametrize("seed", [5, 6, 7, 8])
def test_missing_values_in_both_directions(k_kind, seed, d):
    """Missing rows with strongly negative or positive gradients: the best direction
    differs between features, and the kernel finds it."""
    rng = np.random.default_rng(seed)
    k = hess_width_of(k_kind, d)
    max_bins = 10
    n_bins_per_feature = [10, 10, 6, 6, 10, 10]
    X_binned, grad, hess = make_node(rng, 240, n_bins_per_feature, set(range(6)),
                                     max_bins, d, k)
    # a feature's missing rows get gradients like its low bins (odd f) or high bins
    for f in range(6):
        missing = X_binned[f] == max_bins
        low = X_binned[f] < n_bins_per_feature[f] // 2
        grad[missing] += np.float32(3.0)
        grad[low & ~missing] += np.float32(3.0 if f % 2 else -3.0)
    features = np.arange(6, dtype=np.int32)
    _, bin_, missing_left, _ = check_against_brute_force(
        X_binned, grad, hess, max_bins, n_bins_per_feature, features, k, 1.0,
        min_samples_leaf=2, min_child_weight=0.0)
    assert set(missing_left[features].tolist()) == {0, 1}


@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("k_kind", HESS_WIDTHS)
@pytest.mark.parametrize("seed", [9, 10, 11])
def test_no_missing_values_direction_follows_larger_child(k_kind, seed, d):
    rng = np.random.default_rng(seed)
    k = hess_width_of(k_kind, d)
    max_bins = 12
    n_bins_per_feature = [12, 9, 5, 12, 7, 3]
    n_rows = 151  # odd: the children never tie
    X_binned, grad, hess = make_node(rng, n_rows, n_bins_per_feature, set(), max_bins, d, k)
    # skew features so that the best split leaves the larger child on either side
    X_binned[3] = np.minimum(X_binned[3], 2)
    X_binned[4] = np.maximum(X_binned[4], 5)
    features = np.arange(6, dtype=np.int32)
    gain, bin_, missing_left, _ = check_against_brute_force(
        X_binned, grad, hess, max_bins, n_bins_per_feature, features, k, 1.0,
        min_samples_leaf=1, min_child_weight=0.0)
    split = [f for f in features if bin_[f] >= 0]
    assert len(split) >= 4
    for f in split:
        n_left = int(np.count_nonzero(X_binned[f] <= bin_[f]))
        assert bool(missing_left[f]) == (n_left > n_rows - n_left), f
    assert set(missing_left[split].tolist()) == {0, 1}


@pytest.mark.parametrize("d, k", [(2, 2), (1, 1), (1, 0)])
def test_empty_bins_choose_an_optimal_threshold(d, k):
    """Thresholds around empty bins give identical partitions: whichever the kernel
    picks, its gain is the brute-force optimum and the partition is the optimal one."""
    rng = np.random.default_rng(51)
    max_bins = 20
    n_bins_per_feature = [20, 20, 15]
    X_binned, grad, hess = make_node(rng, 200, [10, 10, 10], {1}, max_bins, d, k)
    X_binned[X_binned != max_bins] *= 2   # only even bins populated
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    features = np.arange(3, dtype=np.int32)
    gain, bin_, missing_left = run_dense(
        hist, features, np.array(n_bins_per_feature, dtype=np.int32), parent, d, k, 1.0,
        1, 0.0, 2)
    for f in features:
        (ref_gain, ref_bin, ref_left, _), _, parent_score = brute_force_feature(
            X_binned[f], n_bins_per_feature[f], max_bins, grad, hess, k, 1.0, 1, 0.0)
        np.testing.assert_allclose(gain[f], ref_gain, rtol=1e-8, atol=1e-10 * parent_score)
        np.testing.assert_array_equal(rows_left(X_binned[f], bin_[f], missing_left[f], max_bins),
                                      rows_left(X_binned[f], ref_bin, ref_left, max_bins))


@pytest.mark.parametrize("sparse", [False, True])
def test_an_output_without_hessian_adds_nothing_at_lambda_zero(sparse):
    """An output whose hessian sums are 0 in the node (all its labels missing)
    with lambda_l2 = 0 made every gain 0/0 = NaN, so no split was ever taken:
    it must add nothing, giving the gains of the other outputs alone."""
    from gbmo._core._split import find_best_sparse_splits, find_best_splits

    rng = np.random.default_rng(61)
    d, max_bins = 3, 10
    n_bins_per_feature = [10, 10, 6]
    X_binned, grad, hess = make_node(rng, 200, n_bins_per_feature, {1}, max_bins, d, d)
    grad[:, 2] = 0.0
    hess[:, 2] = 0.0
    features = np.arange(3, dtype=np.int32)
    n_bins = np.array(n_bins_per_feature, dtype=np.int32)

    def gains(grad, hess, d):
        hist, parent = node_histogram(X_binned, grad, hess, max_bins)
        gain, bin_, missing_left = (np.full(3, -7.0), np.full(3, -7, np.int32),
                                    np.zeros(3, np.uint8))
        if sparse:
            find_best_sparse_splits(hist, features, n_bins, parent, d, d, 1.0, 0.0, 1, 0.0,
                                    1, False, gain, bin_, missing_left, 1)
        else:
            find_best_splits(hist, features, n_bins, parent, d, d, 1.0, 0.0, 1, 0.0, gain,
                             bin_, missing_left, 1)
        return gain, bin_

    with_empty_output = gains(grad, hess, d)
    without_it = gains(np.ascontiguousarray(grad[:, :2]), np.ascontiguousarray(hess[:, :2]), 2)
    assert np.all(np.isfinite(with_empty_output[0])) and np.all(with_empty_output[0] > 0)
    np.testing.assert_allclose(with_empty_output[0], without_it[0], rtol=1e-12)
    np.testing.assert_array_equal(with_empty_output[1], without_it[1])


@pytest.mark.parametrize("sparse", [False, True])
def test_search_returns_the_position_of_the_best_feature(sparse):
    from gbmo._core._split import find_best_sparse_splits, find_best_splits

    rng = np.random.default_rng(71)
    d, max_bins = 3, 12
    n_bins_per_feature = [12, 5, 1, 9, 7]
    X_binned, grad, hess = make_node(rng, 150, n_bins_per_feature, {0, 3}, max_bins, d, d)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    n_bins = np.array(n_bins_per_feature, dtype=np.int32)
    for features in ([4, 0, 3, 1], [2], [], [3, 2, 0]):
        features = np.array(features, dtype=np.int32)
        gain, bin_, missing_left = (np.full(5, -7.0), np.full(5, -7, np.int32),
                                    np.zeros(5, np.uint8))
        arguments = (hist, features, n_bins, parent, d, d, 1.0, 1.0, 1, 0.0)
        if sparse:
            best = find_best_sparse_splits(*arguments, 2, False, gain, bin_, missing_left, 1)
        else:
            best = find_best_splits(*arguments, gain, bin_, missing_left, 1)
        if len(features) == 0:
            assert best == -1
        else:
            assert best == int(np.argmax(gain[features]))


# -- the one-output scan's test without divisions ---------------------------------
def _regularized(hessian, lambda_l2):
    total = hessian + lambda_l2
    return total if total != 0.0 else np.inf


def _soft(g, alpha):
    return g - alpha if g > alpha else (g + alpha if g < -alpha else 0.0)


def plain_one_output_search(hist, n_bins, parent, hess_width, hess_constant, lambda_l2,
                            min_samples_leaf, min_child_weight, lambda_l1):
    """The one-output search as a plain loop with the kernel's arithmetic in its
    order, every gain computed: (gain, bin, missing_left) per feature."""
    width = hess_width + 2

    def hessian(sums):
        return sums[1] if hess_width else hess_constant * sums[-1]

    def score(sums):
        g = _soft(sums[0], lambda_l1) if lambda_l1 else sums[0]
        return (0.0 + g * g) / _regularized(hessian(sums), lambda_l2)

    parent_score = score(parent)

    def scan(feature_hist, n_thresholds, initial, missing_left, best):
        left = np.zeros(width) if initial is None else initial.astype(np.float64)
        for t in range(n_thresholds):
            if t > 0 and feature_hist[t, -1] == 0:
                continue
            left = left + feature_hist[t]  # the kernel adds 0.0 + ... in the same order
            right = parent - left
            if right[-1] < min_samples_leaf:
                break
            if left[-1] < min_samples_leaf:
                continue
            if hessian(left) < min_child_weight or hessian(right) < min_child_weight:
                continue
            gain = 0.5 * (score(left) + score(right) - parent_score)
            if gain > best[0]:
                best = (gain, t, missing_left, left[-1])
        return best

    results = []
    for f, feature_hist in enumerate(hist):
        missing = feature_hist[-1]
        best = (-1.0, -1, 0, 0.0)
        if missing[-1] > 0:
            best = scan(feature_hist, n_bins[f], None, 0, best)
            best = scan(feature_hist, n_bins[f] - 1, missing, 1, best)
        else:
            best = scan(feature_hist, n_bins[f] - 1, None, 0, best)
            if best[1] >= 0:
                best = best[:2] + (int(best[3] >= parent[-1] - best[3]), best[3])
        results.append(best[:3])
    return results


def _extreme_histograms(rng, n):
    """One-output histograms whose sums span float64's range, with near-ties."""
    for _ in range(n):
        hess_width = int(rng.integers(0, 2))
        n_bins = int(rng.integers(2, 6))
        scale = 10.0 ** rng.uniform(-300, 300, size=(n_bins + 1, 2))
        hist = np.zeros((1, n_bins + 1, hess_width + 2))
        hist[0, :, 0] = rng.normal(size=n_bins + 1) * scale[:, 0]
        if hess_width:
            hist[0, :, 1] = rng.uniform(0, 1, size=n_bins + 1) * scale[:, 1]
        hist[0, :, -1] = rng.integers(0, 4, size=n_bins + 1)
        if rng.random() < 0.5:
            hist[0, -1] = 0  # no missing values
        hess_constant = float(10.0 ** rng.uniform(-308, 300)) if rng.random() < 0.3 else 1.0
        lambda_l2 = float(rng.choice([0.0, 1.0, 10.0 ** rng.uniform(-300, 300)]))
        lambda_l1 = float(rng.choice([0.0, 0.0, 10.0 ** rng.uniform(-300, 300)]))
        yield hist, n_bins, hess_width, hess_constant, lambda_l2, lambda_l1


# Found by review: an underflowing and an overflowing bound once skipped the best split.
REVIEW_CASES = [
    (np.array([[[np.sqrt(1e300 * 2.0**-17), 2.0**-17, 10], [-np.sqrt(1.2e300 * 2.0**-17), 2.0**33, 10],
                [np.sqrt(1.2e300 * 2.0**-17), 2.0**-17, 10], [0, 0, 0]]]), 3, 1, 1.0, 0.0, 0.0),
    (np.array([[[3.2397111607441714e-12, 85865.69463087607],
                [3.2589150029463035e-148, 4.796565694651813],
                [1.9809567785503388e-11, 547754.9696668999], [0.0, 0.0]]]),
     3, 0, 6.363150086482828e-308, 0.0, 0.0),
]


@pytest.mark.parametrize("seed", range(4))
def test_one_output_search_is_the_plain_loop_bit_for_bit(seed):
    """The scan skips a candidate without dividing only when it cannot win:
    every gain and choice equals the plain loop's, over float64's range."""
    rng = np.random.default_rng(seed)
    cases = list(_extreme_histograms(rng, 400)) + (REVIEW_CASES if seed == 0 else [])
    for hist, n_bins, hess_width, hess_constant, lambda_l2, lambda_l1 in cases:
        hist = np.ascontiguousarray(hist, dtype=np.float64)
        parent = hist[0].sum(axis=0)
        for min_samples_leaf, min_child_weight in ((0.0, 0.0), (1.0, 1e-3)):
            with np.errstate(all="ignore"):  # inf and NaN gains are part of the range
                expected = plain_one_output_search(hist, [n_bins], parent, hess_width,
                                                   hess_constant, lambda_l2, min_samples_leaf,
                                                   min_child_weight, lambda_l1)
            gain, bin_, missing_left = np.empty(1), np.empty(1, np.int32), np.empty(1, np.uint8)
            find_best_splits(hist, np.array([0], np.int32), np.array([n_bins], np.int32), parent,
                             1, hess_width, hess_constant, lambda_l2, min_samples_leaf,
                             min_child_weight, gain, bin_, missing_left, 1, lambda_l1=lambda_l1)
            got = (gain[0], int(bin_[0]), int(missing_left[0]))
            assert np.array_equal(np.array(got[:1]), np.array(expected[0][:1]), equal_nan=True) \
                and got[1:] == expected[0][1:], (hist.tolist(), hess_width, hess_constant,
                                                 lambda_l2, lambda_l1, got, expected)


# -- extra trees: one random threshold per feature ----------------------------------
@pytest.mark.parametrize("k_kind", HESS_WIDTHS)
@pytest.mark.parametrize("d, top_k, restricted", [(1, None, False), (3, None, False),
                                                  (4, 2, False), (4, 2, True)])
@pytest.mark.parametrize("seed", range(3))
def test_random_bins_try_only_the_drawn_threshold(k_kind, d, top_k, restricted, seed):
    """Each feature's result is the best, over both missing directions, of the
    brute-force candidates at its drawn threshold only."""
    from gbmo._core._split import find_best_sparse_splits

    rng = np.random.default_rng(seed)
    k = hess_width_of(k_kind, d)
    max_bins = 10
    n_bins_per_feature = [7, 10, 1, 4, 2, 9]
    X_binned, grad, hess = make_node(rng, 150, n_bins_per_feature, {1, 2, 3}, max_bins, d, k)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    features = np.arange(len(n_bins_per_feature), dtype=np.int32)
    n_bins = np.array(n_bins_per_feature, dtype=np.int32)
    random_bins = rng.integers(0, np.maximum(n_bins - 1, 1)).astype(np.int32)
    hess_constant = 1.0 if k else 0.7
    gain, bin_, missing_left = (np.empty(len(features)), np.empty(len(features), np.int32),
                                np.empty(len(features), np.uint8))
    arguments = (hist, features, n_bins, parent, d, k, hess_constant, 1.0, 3, 0.0)
    if top_k is None:
        find_best_splits(*arguments, gain, bin_, missing_left, 1, random_bins=random_bins)
    else:
        find_best_sparse_splits(*arguments, top_k, restricted, gain, bin_, missing_left, 1,
                                random_bins=random_bins)
    for f in features:
        _, candidates, _ = brute_force_feature(X_binned[f], n_bins[f], max_bins, grad, hess, k,
                                               hess_constant, 3, 0.0, top_k, restricted)
        # a gain of -1 or less is the kernel's "no split", as in the brute force
        at_drawn = [c for c in candidates if c[3] and c[1] == random_bins[f] and c[0] > -1.0]
        if not at_drawn:
            assert bin_[f] == -1 and gain[f] == -1.0
            continue
        best = max(at_drawn, key=lambda c: c[0])  # the first of equal gains: missing right
        assert bin_[f] == random_bins[f]
        assert gain[f] == pytest.approx(best[0], rel=1e-9, abs=1e-12)
        assert bool(missing_left[f]) == bool(best[2])


def test_random_bins_outside_a_feature_s_thresholds_are_refused():
    hist = np.zeros((2, 5, 3))
    hist[:, :4, 0], hist[:, :4, 2] = 1.0, 5.0
    outputs = np.empty(2), np.empty(2, np.int32), np.empty(2, np.uint8)
    arguments = (hist, np.array([0, 1], np.int32), np.array([4, 1], np.int32),
                 hist[0].sum(axis=0), 1, 0, 1.0, 1.0, 1, 0.0, *outputs, 1)
    for bad, message in (([3, 0], r"random_bins\[0\] = 3 is outside \[0, 2\]"),
                         ([0, 1], r"random_bins\[1\] = 1 is outside \[0, 0\]"),
                         ([0], r"one bin per feature \(2\), got 1")):
        with pytest.raises(ValueError, match=message):
            find_best_splits(*arguments, random_bins=np.array(bad, np.int32))


# -- categorical features: each node orders its categories ---------------------------
def _category_histogram(rng, n_categories, d, hess_width):
    n_bins = n_categories
    counts = rng.integers(0, 15, size=n_bins)
    counts[:2] = np.maximum(counts[:2], 3)
    width = d + hess_width + 1
    hist = np.zeros((1, n_bins + 1, width))
    hist[0, :n_bins, :d] = rng.normal(size=(n_bins, d)) * counts[:, None]
    if hess_width:
        hist[0, :n_bins, d:d + hess_width] = rng.uniform(0.5, 1.0, (n_bins, hess_width)) * \
            counts[:, None]
    hist[0, :n_bins, -1] = counts
    if rng.random() < 0.5:
        hist[0, -1] = hist[0, 0] / 2  # some missing values
    return hist, n_bins


def _dense_gain(sums, parent, d, hess_width, lambda_l2):
    def score(v):
        h = v[d:d + hess_width] if hess_width else v[-1:]
        return float(np.sum(v[:d] ** 2 / (np.broadcast_to(h, (d,)) + lambda_l2)))
    return 0.5 * (score(sums) + score(parent - sums) - score(parent))


@pytest.mark.parametrize("hess_width", [0, 1])
@pytest.mark.parametrize("seed", range(30))
def test_one_output_categorical_split_is_the_best_partition(hess_width, seed):
    """For one output the order by leaf value makes the best prefix the best
    partition of the categories (Fisher): against every subset, either
    missing side."""
    import itertools

    rng = np.random.default_rng(seed)
    hist, n_bins = _category_histogram(rng, int(rng.integers(2, 8)), 1, hess_width)
    parent = hist[0].sum(axis=0)
    outputs = np.empty(1), np.empty(1, np.int32), np.empty(1, np.uint8)
    order = np.full((1, n_bins + 1), -1, np.int32)
    find_best_splits(hist, np.array([0], np.int32), np.array([n_bins], np.int32), parent, 1,
                     hess_width, 1.0, 1.0, 1.0, 0.0, *outputs, 1,
                     categorical=np.array([1], np.uint8), cat_smooth=0.0, category_order=order)
    present = [b for b in range(n_bins) if hist[0, b, -1] > 0]
    best = -1.0
    for size in range(0, len(present) + 1):
        for subset in itertools.combinations(present, size):
            for missing_left in (0, 1):
                left = hist[0, list(subset)].sum(axis=0) + missing_left * hist[0, -1]
                if left[-1] >= 1 and parent[-1] - left[-1] >= 1:
                    best = max(best, _dense_gain(left, parent, 1, hess_width, 1.0))
    assert outputs[0][0] == pytest.approx(best, rel=1e-9)
    chosen = order[0, :outputs[1][0] + 1]
    left = hist[0, chosen].sum(axis=0) + outputs[2][0] * hist[0, -1]
    assert _dense_gain(left, parent, 1, hess_width, 1.0) == pytest.approx(outputs[0][0])


@pytest.mark.parametrize("seed", range(10))
def test_several_outputs_split_a_prefix_of_the_projection_order(seed):
    """For d outputs the set is a run from one end of the categories ordered
    by the projection of their leaf vectors on the principal direction
    (numpy's eigenvector here), those of fewer than cat_smooth rows left out,
    and its gain is the one reported."""
    rng = np.random.default_rng(seed)
    d = 3
    hist, n_bins = _category_histogram(rng, 6, d, d)
    hist[0, -1] = 0
    parent = hist[0].sum(axis=0)
    outputs = np.empty(1), np.empty(1, np.int32), np.empty(1, np.uint8)
    order = np.full((1, n_bins + 1), -1, np.int32)
    find_best_splits(hist, np.array([0], np.int32), np.array([n_bins], np.int32), parent, d,
                     d, 1.0, 1.0, 1.0, 0.0, *outputs, 1, categorical=np.array([1], np.uint8),
                     cat_smooth=2.0, category_order=order)
    present = np.flatnonzero(hist[0, :n_bins, -1] >= 2.0)
    values = -hist[0, present, :d] / (hist[0, present, d:2 * d] + 2.0)
    weights = hist[0, present, -1]
    centred = values - np.average(values, axis=0, weights=weights)
    direction = np.linalg.eigh((weights[:, None] * centred).T @ centred)[1][:, -1]
    expected = present[np.argsort(centred @ direction)]
    found = order[0, :len(present)]
    assert np.array_equal(found, expected) or np.array_equal(found, expected[::-1])
    chosen = order[0, :outputs[1][0] + 1]
    assert _dense_gain(hist[0, chosen].sum(axis=0), parent, d, d, 1.0) == \
        pytest.approx(outputs[0][0], rel=1e-9)


def _set_candidates(hist, n_bins, hess_width, lambda_l2, min_samples_leaf, rules):
    """Every set LightGBM's rules allow a categorical feature of one output,
    plainly, as LightGBM's loop tries them: (sorted bins that go left,
    missing side, gain)."""
    d = 1
    counts, missing, parent = hist[0, :n_bins, -1], hist[0, -1], hist[0].sum(axis=0)

    def score(v, l2):
        h = v[d] if hess_width else v[-1]
        return v[0] ** 2 / (h + l2)

    def gain(left, l2_children):
        right = parent - left
        if min(left[-1], right[-1]) <= 0 or min(left[-1], right[-1]) < min_samples_leaf:
            return None
        return 0.5 * (score(left, l2_children) + score(right, l2_children)
                      - score(parent, lambda_l2))

    sides = (0, 1) if missing[-1] > 0 else (0,)
    candidates = []
    if n_bins <= rules["max_cat_to_onehot"]:
        for b in np.flatnonzero(counts > 0):
            candidates += [((b,), side, gain(hist[0, b] + side * missing, lambda_l2))
                           for side in sides]
        return [c for c in candidates if c[2] is not None]
    l2_sets = lambda_l2 + rules["cat_l2"]
    kept = [b for b in range(n_bins) if counts[b] > 0 and counts[b] >= rules["cat_smooth"]]
    hessians = hist[0, :n_bins, d] if hess_width else counts
    value = {b: -hist[0, b, 0] / (hessians[b] + rules["cat_smooth"]) for b in kept}
    order = sorted(kept, key=lambda b: (value[b], b))
    min_right = max(min_samples_leaf, rules["min_data_per_group"])
    for run in (order, order[::-1]):
        for side in sides:
            taken, group = [], 0.0
            for b in run[:min(rules["max_cat_threshold"], (len(order) + 1) // 2)]:
                taken.append(b)
                group += counts[b]
                left = hist[0, taken].sum(axis=0) + side * missing
                if left[-1] < min_samples_leaf:
                    continue
                if parent[-1] - left[-1] < min_right:
                    break
                if group < rules["min_data_per_group"]:
                    continue
                group = 0.0
                candidates.append((tuple(sorted(taken)), side, gain(left, l2_sets)))
    if missing[-1] > 0 and order:
        everything = hist[0, order].sum(axis=0)
        if parent[-1] - everything[-1] >= rules["min_data_per_group"]:
            candidates.append((tuple(sorted(order)), 0, gain(everything, l2_sets)))
    return [c for c in candidates if c[2] is not None]


@pytest.mark.parametrize("seed", range(60))
def test_categorical_sets_follow_lightgbm_s_rules(seed):
    """The set found under cat_smooth, cat_l2, min_data_per_group,
    max_cat_threshold and max_cat_to_onehot is the best of the sets a plain
    enumeration of those rules allows, with the same gain."""
    rng = np.random.default_rng(seed)
    hess_width = int(rng.integers(0, 2))
    n_bins = int(rng.integers(2, 12))
    hist = np.zeros((1, n_bins + 1, hess_width + 2))
    counts = rng.integers(0, 40, size=n_bins).astype(float)
    hist[0, :n_bins, 0] = rng.normal(size=n_bins) * counts + rng.normal(size=n_bins)
    if hess_width:
        hist[0, :n_bins, 1] = rng.uniform(0.2, 1.0, n_bins) * counts
    hist[0, :n_bins, -1] = counts
    if rng.random() < 0.5:
        hist[0, -1] = [rng.normal() * 10, 5.0, 10.0][-(hess_width + 2):]
    rules = {"cat_smooth": float(rng.choice([0.0, 5.0, 20.0])),
             "cat_l2": float(rng.choice([0.0, 10.0])),
             "min_data_per_group": int(rng.choice([0, 30, 60])),
             "max_cat_threshold": int(rng.integers(1, 6)),
             "max_cat_to_onehot": int(rng.choice([0, 4, 8]))}
    outputs = np.empty(1), np.empty(1, np.int32), np.empty(1, np.uint8)
    order = np.full((1, n_bins + 1), -1, np.int32)
    find_best_splits(hist, np.array([0], np.int32), np.array([n_bins], np.int32),
                     hist[0].sum(axis=0), 1, hess_width, 1.0, 1.0, 5.0, 0.0, *outputs, 1,
                     categorical=np.array([1], np.uint8), category_order=order, **rules)
    candidates = _set_candidates(hist, n_bins, hess_width, 1.0, 5.0, rules)
    best = max((g for _, _, g in candidates), default=-1.0)
    if best <= -1.0:
        assert outputs[1][0] == -1
        return
    assert outputs[0][0] == pytest.approx(best, rel=1e-9, abs=1e-12)
    chosen = (tuple(sorted(order[0, :outputs[1][0] + 1])), int(outputs[2][0]))
    gains = {(bins, side): g for bins, side, g in candidates}
    if missing_free := hist[0, -1, -1] == 0:
        chosen = (chosen[0], 0)  # with no missing rows, its side is only a convention
    assert chosen in gains and gains[chosen] == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert missing_free or outputs[2][0] in (0, 1)


def test_categorical_sets_on_several_outputs_send_one_category_left_when_few():
    """max_cat_to_onehot: with at most that many categories a set is one
    category, the best such of several outputs, whatever the order."""
    rng = np.random.default_rng(3)
    d, n_bins = 3, 4
    hist = np.zeros((1, n_bins + 1, d + 1))
    hist[0, :n_bins, :d] = rng.normal(size=(n_bins, d)) * 20
    hist[0, :n_bins, -1] = 20.0
    parent = hist[0].sum(axis=0)
    outputs = np.empty(1), np.empty(1, np.int32), np.empty(1, np.uint8)
    order = np.full((1, n_bins + 1), -1, np.int32)
    find_best_splits(hist, np.array([0], np.int32), np.array([n_bins], np.int32), parent, d,
                     0, 1.0, 1.0, 1.0, 0.0, *outputs, 1, categorical=np.array([1], np.uint8),
                     category_order=order, max_cat_to_onehot=4)
    assert outputs[1][0] == 0
    gains = [_dense_gain(hist[0, b], parent, d, 0, 1.0) for b in range(n_bins)]
    assert order[0, 0] == int(np.argmax(gains))
    assert outputs[0][0] == pytest.approx(max(gains), rel=1e-9)


@pytest.mark.parametrize("rule, value, message", [
    ("cat_l2", -1.0, "cat_l2 must be >= 0"),
    ("min_data_per_group", -1.0, "min_data_per_group must be >= 0"),
    ("max_cat_threshold", 0, "max_cat_threshold must be >= 1"),
    ("max_cat_to_onehot", -1, "max_cat_to_onehot must be >= 0"),
    ("cat_smooth", float("nan"), "cat_smooth must be >= 0"),
])
def test_bad_category_rules_are_refused(rule, value, message):
    hist = np.ones((1, 5, 2))
    outputs = np.empty(1), np.empty(1, np.int32), np.empty(1, np.uint8)
    with pytest.raises(ValueError, match=message):
        find_best_splits(hist, np.array([0], np.int32), np.array([4], np.int32),
                         hist[0].sum(axis=0), 1, 0, 1.0, 1.0, 1.0, 0.0, *outputs, 1,
                         categorical=np.array([1], np.uint8),
                         category_order=np.zeros((1, 5), np.int32), **{rule: value})


@pytest.mark.parametrize("hess_width", ["constant", "shared", "per_output"])
@pytest.mark.parametrize("lambda_l1", [0.0, 0.4])
@pytest.mark.parametrize("bounded", [False, True])
def test_node_values_and_scores_against_numpy(hess_width, lambda_l1, bounded):
    """node_values against the formulas written in numpy: leaf values
    -T(G) / (H + lambda + extra), 0 where that is 0 / 0, clipped to bounds;
    scores T(G)^2 / (H + lambda) unclipped, -(2 T(G) w + (H + lambda) w^2)
    clipped."""
    from gbmo._core._split import node_values

    rng = np.random.default_rng(7)
    n, d = 9, 3
    k = {"constant": 0, "shared": 1, "per_output": d}[hess_width]
    sums = np.c_[rng.normal(size=(n, d)), rng.random((n, k)) * 5, rng.integers(1, 9, (n, 1))]
    sums[1, :d] = [0.0, -0.1, 0.1]  # zeros, and signed zeros under lambda_l1
    lambda_l2, hess_constant = 0.0, 1.5
    if k:
        sums[0, d:d + k] = 0.0  # no hessian and no lambda: value 0
        sums[0, :d] = 0.0
    extra = rng.random(n) * (np.arange(n) % 2)
    hessian = {0: hess_constant * sums[:, d:d + 1], 1: sums[:, d:d + 1],
               d: sums[:, d:2 * d]}[k] + lambda_l2 + extra[:, None]
    shrunk = np.sign(sums[:, :d]) * np.maximum(np.abs(sums[:, :d]) - lambda_l1, 0.0)
    expected = np.zeros((n, d))
    np.divide(-shrunk, hessian, out=expected, where=hessian != 0)
    lower = upper = np.zeros((0, 0))
    if bounded:
        lower, upper = np.full((n, d), -0.2), np.full((n, d), 0.3)
        lower[1], upper[2] = 0.0, -0.0  # bounds equal to a zero value: np.clip's sign
        expected = np.clip(expected, lower, upper)
        expected_scores = -(2.0 * shrunk * expected + hessian * expected ** 2)
    else:
        expected_scores = -shrunk * expected
    values, scores = np.empty((n, d)), np.empty((n, d))
    node_values(sums, d, k, hess_constant, lambda_l2, lambda_l1, extra, lower, upper, values,
                scores)
    np.testing.assert_array_equal(values, expected)
    np.testing.assert_array_equal(np.signbit(values), np.signbit(expected))
    np.testing.assert_array_equal(scores, expected_scores)
    assert np.all(np.isfinite(values))


def test_node_values_refuse_mismatched_shapes():
    from gbmo._core._split import node_values

    sums, none = np.ones((4, 3)), np.zeros((0, 0))
    values = np.empty((4, 1))
    with pytest.raises(ValueError, match="sums must be"):
        node_values(sums, 1, 2, 1.0, 0.0, 0.0, np.zeros(0), none, none, values, none)
    with pytest.raises(ValueError, match="values"):
        node_values(sums, 1, 1, 1.0, 0.0, 0.0, np.zeros(0), none, none, np.empty((3, 1)), none)
    with pytest.raises(ValueError, match="extra_l2"):
        node_values(sums, 1, 1, 1.0, 0.0, 0.0, np.zeros(2), none, none, values, none)
    with pytest.raises(ValueError, match="lower and upper"):
        node_values(sums, 1, 1, 1.0, 0.0, 0.0, np.zeros(0), np.zeros((2, 1)),
                    np.zeros((2, 1)), values, none)
