"""find_best_splits against a brute-force scan over every feature, threshold and
missing direction, computed from the rows themselves (not from the histogram)."""
import numpy as np
import pytest

from gbmo._core import G_H_DTYPE, HIST_DTYPE, X_BINNED_DTYPE
from gbmo._core._split import find_best_splits

LAMBDA = 1.0


# -- data -----------------------------------------------------------------------
def make_node(rng, n_rows, n_bins_per_feature, missing_features, max_bins, d, k,
              hess_scales=None):
    """Rows of a node: bins per feature (every value bin populated), float32 gradients
    with some signal, positive float32 hessians (n, k)."""
    n_features = len(n_bins_per_feature)
    missing_bin = max_bins
    X_binned = np.empty((n_features, n_rows), dtype=X_BINNED_DTYPE)
    for f, n_bins in enumerate(n_bins_per_feature):
        col = np.concatenate([np.arange(n_bins), rng.integers(0, n_bins, n_rows - n_bins)])
        col = rng.permutation(col)
        if f in missing_features:
            # keep every value bin populated, put some rows in the missing bin
            spare = np.flatnonzero(np.bincount(col, minlength=n_bins)[col] > 1)
            chosen = rng.choice(spare, size=max(1, len(spare) // 6), replace=False)
            col[chosen] = missing_bin
        X_binned[f] = col
    signal = (X_binned[0].astype(float) / max(1, n_bins_per_feature[0]))[:, None]
    grad = (rng.normal(size=(n_rows, d)) + signal * rng.normal(size=d)).astype(G_H_DTYPE)
    if hess_scales is None:
        hess_scales = np.ones(k)
    hess = (rng.uniform(0.2, 1.5, size=(n_rows, k)) * hess_scales).astype(G_H_DTYPE)
    return X_binned, grad, hess


def node_histogram(X_binned, grad, hess, max_bins):
    """(n_features, max_bins + 1, d + k + 1) with np.add.at: [G, H, count] per bin."""
    rows = np.hstack([grad, hess, np.ones((grad.shape[0], 1), dtype=G_H_DTYPE)])
    rows = rows.astype(np.float64)
    hist = np.zeros((X_binned.shape[0], max_bins + 1, rows.shape[1]), dtype=HIST_DTYPE)
    for f in range(X_binned.shape[0]):
        np.add.at(hist[f], X_binned[f].astype(np.intp), rows)
    parent = rows.sum(axis=0)
    return hist, parent


# -- brute force --------------------------------------------------------------
def score(G, H, lambda_l2):
    return float(np.sum(G * G / (H + lambda_l2)))


def child_stats(grad, hess, mask, k, hess_constant):
    """(G (d,), H (d,) broadcastable, count) straight from the rows in mask."""
    G = grad[mask].astype(np.float64).sum(axis=0)
    count = int(mask.sum())
    if k == 0:
        H = np.full(grad.shape[1], hess_constant * count)
    elif k == 1:
        H = np.full(grad.shape[1], hess[mask, 0].astype(np.float64).sum())
    else:
        H = hess[mask].astype(np.float64).sum(axis=0)
    return G, H, count


def brute_force_feature(bins, n_bins, missing_bin, grad, hess, k, hess_constant,
                        lambda_l2, min_samples_leaf, min_child_weight):
    """Every (threshold, missing direction) whose children are both non-empty.
    Returns (gain, bin, missing_left, all_candidates); gain -1 / bin -1 when none
    passes the constraints."""
    everything = np.ones(len(bins), dtype=bool)
    GP, HP, _ = child_stats(grad, hess, everything, k, hess_constant)
    parent_score = score(GP, HP, lambda_l2)
    is_missing = bins == missing_bin
    has_missing = bool(is_missing.any())
    candidates = []
    for missing_left in ((False, True) if has_missing else (False,)):
        for t in range(n_bins):
            left = ((bins <= t) & ~is_missing) | (is_missing & missing_left)
            n_left = int(left.sum())
            if n_left == 0 or n_left == len(bins):
                continue
            GL, HL, nL = child_stats(grad, hess, left, k, hess_constant)
            GR, HR, nR = child_stats(grad, hess, ~left, k, hess_constant)
            valid = (nL >= min_samples_leaf and nR >= min_samples_leaf
                     and HL.mean() >= min_child_weight and HR.mean() >= min_child_weight)
            gain = 0.5 * (score(GL, HL, lambda_l2) + score(GR, HR, lambda_l2) - parent_score)
            if not has_missing:
                # no missing value seen: missing follows the child with more rows
                direction = nL >= nR
            else:
                direction = missing_left
            candidates.append((gain, t, direction, valid, nL, nR))
    valid = [c for c in candidates if c[3]]
    if not valid:
        return -1.0, -1, False, candidates, parent_score
    best = max(valid, key=lambda c: c[0])
    if best[0] <= -1.0:  # the kernel's "no split" marker wins over worse gains
        return -1.0, -1, False, candidates, parent_score
    return best[0], best[1], best[2], candidates, parent_score


def run_kernel(hist, features, n_bins_non_missing, parent, d, k, hess_constant,
               lambda_l2, min_samples_leaf, min_child_weight, n_threads):
    n_features = hist.shape[0]
    gain = np.full(n_features, 99.0)
    bin_ = np.full(n_features, 99, dtype=np.int32)
    missing_left = np.full(n_features, 99, dtype=np.uint8)
    find_best_splits(hist, features, n_bins_non_missing, parent, d, k, hess_constant,
                     lambda_l2, min_samples_leaf, min_child_weight, gain, bin_,
                     missing_left, n_threads)
    return gain, bin_, missing_left


def check_against_brute_force(X_binned, grad, hess, max_bins, n_bins_per_feature, features,
                              k, hess_constant, min_samples_leaf, min_child_weight,
                              n_threads=2):
    d = grad.shape[1]
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    n_bins = np.asarray(n_bins_per_feature, dtype=np.int32)
    gain, bin_, missing_left = run_kernel(hist, features, n_bins, parent, d, k, hess_constant,
                                          LAMBDA, min_samples_leaf, min_child_weight, n_threads)
    results = {}
    for f in features:
        ref_gain, ref_bin, ref_left, candidates, parent_score = brute_force_feature(
            X_binned[f], n_bins[f], max_bins, grad, hess, k, hess_constant, LAMBDA,
            min_samples_leaf, min_child_weight)
        assert bin_[f] == ref_bin, (f, bin_[f], ref_bin)
        assert bool(missing_left[f]) == ref_left, (f, missing_left[f], ref_left)
        np.testing.assert_allclose(gain[f], ref_gain, rtol=1e-8, atol=1e-10 * parent_score)
        results[int(f)] = candidates
    untouched = np.setdiff1d(np.arange(hist.shape[0]), features)
    assert np.all(gain[untouched] == 99.0)
    assert np.all(bin_[untouched] == 99)
    assert np.all(missing_left[untouched] == 99)
    return gain, bin_, missing_left, results


# -- tests ----------------------------------------------------------------------
@pytest.mark.parametrize("k_kind", ["0", "1", "d"])
@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_brute_force(k_kind, d, seed):
    rng = np.random.default_rng(seed * 7 + d)
    k = {"0": 0, "1": 1, "d": d}[k_kind]
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
                             hess_constant, LAMBDA, 1, 0.0)[0] for f in features])


@pytest.mark.parametrize("k_kind", ["0", "1", "d"])
def test_subset_of_features_and_threads(k_kind):
    rng = np.random.default_rng(21)
    d = 4
    k = {"0": 0, "1": 1, "d": d}[k_kind]
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


@pytest.mark.parametrize("k_kind", ["0", "1", "d"])
@pytest.mark.parametrize("seed", [3, 4])
def test_min_samples_leaf_respected(k_kind, seed):
    rng = np.random.default_rng(seed)
    d = 2
    k = {"0": 0, "1": 1, "d": d}[k_kind]
    max_bins = 16
    n_bins_per_feature = [16, 10, 6, 16]
    n_rows = 200
    X_binned, grad, hess = make_node(rng, n_rows, n_bins_per_feature, {1, 3}, max_bins, d, k)
    features = np.arange(4, dtype=np.int32)
    min_samples_leaf = 70
    gain, bin_, missing_left, candidates = check_against_brute_force(
        X_binned, grad, hess, max_bins, n_bins_per_feature, features, k, 1.0,
        min_samples_leaf=min_samples_leaf, min_child_weight=0.0)
    binding = 0
    for f in features:
        if bin_[f] >= 0:
            bins = X_binned[f]
            left = ((bins <= bin_[f]) & (bins != max_bins)) | (
                (bins == max_bins) & bool(missing_left[f]))
            assert min_samples_leaf <= left.sum() <= n_rows - min_samples_leaf
        unconstrained = max(candidates[int(f)], key=lambda c: c[0])
        if min(unconstrained[4], unconstrained[5]) < min_samples_leaf:
            binding += 1
            assert gain[f] < unconstrained[0]
    assert binding > 0, "the constraint should change at least one feature's best split"


@pytest.mark.parametrize("k_kind", ["0", "1", "d"])
def test_min_child_weight_is_mean_hessian_over_outputs(k_kind):
    rng = np.random.default_rng(31)
    d = 3
    k = {"0": 0, "1": 1, "d": d}[k_kind]
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
    binding = 0
    for f in features:
        if bin_[f] >= 0:
            bins = X_binned[f]
            left = ((bins <= bin_[f]) & (bins != max_bins)) | (
                (bins == max_bins) & bool(missing_left[f]))
            for mask in (left, ~left):
                _, H, _ = child_stats(grad, hess, mask, k, hess_constant)
                assert H.mean() >= min_child_weight
        unconstrained = max(candidates[int(f)], key=lambda c: c[0])
        if not unconstrained[3]:
            binding += 1
    assert binding > 0


def test_no_valid_split():
    rng = np.random.default_rng(41)
    max_bins = 8
    n_bins_per_feature = [8, 3, 1]
    X_binned, grad, hess = make_node(rng, 40, n_bins_per_feature, {1, 2}, max_bins, 2, 2)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    features = np.arange(3, dtype=np.int32)
    gain, bin_, _ = run_kernel(hist, features, np.array(n_bins_per_feature, dtype=np.int32),
                               parent, 2, 2, 1.0, LAMBDA, 21, 0.0, 2)
    np.testing.assert_array_equal(gain, -1.0)
    np.testing.assert_array_equal(bin_, -1)
    gain, bin_, _ = run_kernel(hist, features, np.array(n_bins_per_feature, dtype=np.int32),
                               parent, 2, 2, 1.0, LAMBDA, 1, 1e9, 2)
    np.testing.assert_array_equal(gain, -1.0)
    np.testing.assert_array_equal(bin_, -1)


@pytest.mark.parametrize("k_kind", ["0", "1", "d"])
@pytest.mark.parametrize("seed", [5, 6, 7, 8])
def test_missing_values_in_both_directions(k_kind, seed):
    """Missing rows with strongly negative or positive gradients: the best direction
    differs between features, and the kernel finds it."""
    rng = np.random.default_rng(seed)
    d = 2
    k = {"0": 0, "1": 1, "d": d}[k_kind]
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


@pytest.mark.parametrize("k_kind", ["0", "1", "d"])
@pytest.mark.parametrize("seed", [9, 10, 11])
def test_no_missing_values_direction_follows_larger_child(k_kind, seed):
    rng = np.random.default_rng(seed)
    d = 3
    k = {"0": 0, "1": 1, "d": d}[k_kind]
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


def test_empty_bins_choose_an_optimal_threshold():
    """Thresholds around empty bins give identical partitions: whichever the kernel
    picks, its gain is the brute-force optimum and the partition is the optimal one."""
    rng = np.random.default_rng(51)
    d, k, max_bins = 2, 2, 20
    n_bins_per_feature = [20, 20, 15]
    X_binned, grad, hess = make_node(rng, 200, [10, 10, 10], {1}, max_bins, d, k)
    X_binned[X_binned != max_bins] *= 2   # only even bins populated
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    features = np.arange(3, dtype=np.int32)
    gain, bin_, missing_left = run_kernel(
        hist, features, np.array(n_bins_per_feature, dtype=np.int32), parent, d, k, 1.0,
        LAMBDA, 1, 0.0, 2)
    for f in features:
        ref_gain, ref_bin, ref_left, candidates, parent_score = brute_force_feature(
            X_binned[f], n_bins_per_feature[f], max_bins, grad, hess, k, 1.0, LAMBDA, 1, 0.0)
        np.testing.assert_allclose(gain[f], ref_gain, rtol=1e-8, atol=1e-10 * parent_score)
        bins = X_binned[f]

        def partition(t, left_missing):
            return ((bins <= t) & (bins != max_bins)) | ((bins == max_bins) & left_missing)

        np.testing.assert_array_equal(partition(bin_[f], bool(missing_left[f])),
                                      partition(ref_bin, ref_left))
