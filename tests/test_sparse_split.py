"""find_best_sparse_splits, select_top_k and select_top_k_shared against brute force.

The references are computed from the rows themselves (not from the histogram) and
enumerate every feature, threshold and missing direction, and every subset of k
outputs (itertools.combinations): per child for the unrestricted split (paper
Algorithm 5), one shared subset for the restricted split (Algorithm 6). The
parent's score is its own top-k sum in both modes. Gradients are continuous
random numbers, so every argmax is unique.
"""
import numpy as np
import pytest

from gbmo._core import HIST_DTYPE
from gbmo._core._split import find_best_sparse_splits, select_top_k, select_top_k_shared

# the shared reference helpers (tests/split_reference.py); rewritten asserts there report
# their values on failure as they would here
pytest.register_assert_rewrite("split_reference")
from split_reference import (  # noqa: E402
    HESS_WIDTHS, LAMBDA, brute_force_feature, check_against_brute_force, check_min_child_weight,
    check_min_samples_leaf, hess_width_of, kernel_subsets, make_node, node_histogram,
    run_dense, run_sparse, split_sums)


# -- split search against brute force ----------------------------------------------
@pytest.mark.parametrize("restricted", [False, True], ids=["unrestricted", "restricted"])
@pytest.mark.parametrize("k_kind", ["1", "2", "d-1", "d"])
@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
@pytest.mark.parametrize("d,seed", [(4, 0), (6, 1), (5, 2)])
def test_matches_brute_force(restricted, k_kind, hess_kind, d, seed):
    rng = np.random.default_rng(100 * seed + 10 * d + HESS_WIDTHS.index(hess_kind))
    hess_width = hess_width_of(hess_kind, d)
    top_k = {"1": 1, "2": 2, "d-1": d - 1, "d": d}[k_kind]
    max_bins = 12
    n_bins_per_feature = [7, 12, 1, 4, 2, 9, 1]
    X_binned, grad, hess = make_node(rng, 160, n_bins_per_feature, {1, 2, 3, 5}, max_bins, d,
                                     hess_width, varied_outputs=True)
    hess_constant = 0.7 if hess_width == 0 else 1.0
    features = np.arange(7, dtype=np.int32)
    gain, bin_, missing_left, _ = check_against_brute_force(
        X_binned, grad, hess, max_bins, n_bins_per_feature, features, hess_width,
        hess_constant, min_samples_leaf=1, min_child_weight=0.0, top_k=top_k,
        restricted=restricted)
    # a one-bin feature without missing values cannot be split
    assert gain[6] == -1.0 and bin_[6] == -1


@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
@pytest.mark.parametrize("top_k", [1, 2])
def test_missing_directions_and_larger_child(hess_kind, top_k):
    """Missing rows that look like low or high bins (both directions occur), and
    features without missing values (missing follows the larger child)."""
    rng = np.random.default_rng(7 + top_k)
    d = 4
    hess_width = hess_width_of(hess_kind, d)
    max_bins = 10
    n_bins_per_feature = [10, 10, 6, 6, 10, 7, 9]
    n_rows = 241  # odd: the children never tie
    X_binned, grad, hess = make_node(rng, n_rows, n_bins_per_feature, {0, 1, 2, 3},
                                     max_bins, d, hess_width, varied_outputs=True)
    for f in range(4):
        missing = X_binned[f] == max_bins
        low = X_binned[f] < n_bins_per_feature[f] // 2
        grad[missing, :2] += np.float32(3.0)
        grad[low & ~missing, :2] += np.float32(3.0 if f % 2 else -3.0)
    X_binned[5] = np.minimum(X_binned[5], 2)   # skewed: larger child on either side
    X_binned[6] = np.maximum(X_binned[6], 5)
    features = np.arange(7, dtype=np.int32)
    for restricted in (False, True):
        _, bin_, missing_left, _ = check_against_brute_force(
            X_binned, grad, hess, max_bins, n_bins_per_feature, features, hess_width, 1.0,
            min_samples_leaf=2, min_child_weight=0.0, top_k=top_k, restricted=restricted)
        assert set(missing_left[:4].tolist()) == {0, 1}
        for f in (4, 5, 6):
            n_left = int(np.count_nonzero(X_binned[f] <= bin_[f]))
            assert bool(missing_left[f]) == (n_left > n_rows - n_left), f


@pytest.mark.parametrize("restricted", [False, True], ids=["unrestricted", "restricted"])
@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
def test_min_samples_leaf_respected(restricted, hess_kind):
    rng = np.random.default_rng(3)
    d, top_k = 4, 2
    hess_width = hess_width_of(hess_kind, d)
    max_bins = 16
    n_bins_per_feature = [16, 10, 6, 16]
    n_rows = 200
    X_binned, grad, hess = make_node(rng, n_rows, n_bins_per_feature, {1, 3}, max_bins, d,
                                     hess_width, varied_outputs=True)
    features = np.arange(4, dtype=np.int32)
    min_samples_leaf = 70
    gain, bin_, missing_left, candidates = check_against_brute_force(
        X_binned, grad, hess, max_bins, n_bins_per_feature, features, hess_width, 1.0,
        min_samples_leaf=min_samples_leaf, min_child_weight=0.0, top_k=top_k,
        restricted=restricted)
    check_min_samples_leaf(X_binned, max_bins, features, gain, bin_, missing_left, candidates,
                           min_samples_leaf)


@pytest.mark.parametrize("restricted", [False, True], ids=["unrestricted", "restricted"])
@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
def test_min_child_weight_is_mean_hessian_over_all_outputs(restricted, hess_kind):
    rng = np.random.default_rng(31)
    d, top_k = 3, 1
    hess_width = hess_width_of(hess_kind, d)
    max_bins = 16
    n_bins_per_feature = [16, 12, 8]
    X_binned, grad, hess = make_node(rng, 150, n_bins_per_feature, {1}, max_bins, d,
                                     hess_width, hess_scales=np.array([0.1, 1.0, 5.0])[:hess_width],
                                     varied_outputs=True)
    hess_constant = 0.5
    per_row = hess_constant if hess_width == 0 else float(hess.mean())
    min_child_weight = 45 * per_row
    features = np.arange(3, dtype=np.int32)
    gain, bin_, missing_left, candidates = check_against_brute_force(
        X_binned, grad, hess, max_bins, n_bins_per_feature, features, hess_width,
        hess_constant, min_samples_leaf=1, min_child_weight=min_child_weight, top_k=top_k,
        restricted=restricted)
    check_min_child_weight(X_binned, grad, hess, max_bins, features, bin_, missing_left,
                           candidates, hess_width, hess_constant, min_child_weight)


@pytest.mark.parametrize("restricted", [False, True], ids=["unrestricted", "restricted"])
def test_no_valid_split(restricted):
    rng = np.random.default_rng(41)
    max_bins = 8
    n_bins_per_feature = [8, 3, 1]
    X_binned, grad, hess = make_node(rng, 40, n_bins_per_feature, {1, 2}, max_bins, 3, 3,
                                     varied_outputs=True)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    features = np.arange(3, dtype=np.int32)
    for min_samples_leaf, min_child_weight in ((21, 0.0), (1, 1e9)):
        gain, bin_, _ = run_sparse(hist, features, n_bins_per_feature, parent, 3, 3, 1.0,
                                   min_samples_leaf, min_child_weight, 2, restricted)
        np.testing.assert_array_equal(gain, -1.0)
        np.testing.assert_array_equal(bin_, -1)


@pytest.mark.parametrize("restricted", [False, True], ids=["unrestricted", "restricted"])
@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
def test_empty_bins_first_best_wins(restricted, hess_kind):
    """Thresholds around empty bins make the same partition, so the same gain to the
    last bit; the first in scan order wins, as in the dense split: the chosen bin is
    populated (the lowest threshold giving that partition) and the gain is optimal."""
    rng = np.random.default_rng(51)
    d, top_k, max_bins = 6, 2, 20
    hess_width = hess_width_of(hess_kind, d)
    n_bins_per_feature = [20, 20, 15]
    X_binned, grad, hess = make_node(rng, 200, [10, 10, 10], {1}, max_bins, d, hess_width,
                                     varied_outputs=True)
    X_binned[X_binned != max_bins] *= 2   # only even bins populated
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    gain, bin_, missing_left = run_sparse(hist, np.arange(3, dtype=np.int32),
                                          n_bins_per_feature, parent, d, hess_width, 1.0, 1,
                                          0.0, top_k, restricted)
    for f in range(3):
        (ref_gain, _, _, _), _, _ = brute_force_feature(
            X_binned[f], n_bins_per_feature[f], max_bins, grad, hess, hess_width, 1.0, 1, 0.0,
            top_k, restricted)
        np.testing.assert_allclose(gain[f], ref_gain, rtol=1e-8)
        if bin_[f] >= 0:
            assert bin_[f] % 2 == 0 and hist[f, bin_[f], -1] > 0, (f, bin_[f])
    assert np.count_nonzero(bin_ >= 0) >= 2


# -- larger d: the heap against a sort-based reference on the histogram -------------
def sorted_reference(hist, parent, n_bins, d, hess_width, hess_constant, top_k, restricted):
    """Best (gain, bin, missing_left) per feature, top-k sums by np.sort, no constraints."""
    def imp(sums):
        G = sums[..., :d]
        if hess_width == 0:
            H = hess_constant * sums[..., d:d + 1]
        elif hess_width == 1:
            H = sums[..., d:d + 1]
        else:
            H = sums[..., d:2 * d]
        return G * G / (H + LAMBDA)

    def top(values):
        return np.sort(values, axis=-1)[..., -top_k:].sum(axis=-1)

    parent_score = top(imp(parent))
    out = []
    for f in range(hist.shape[0]):
        nb = n_bins[f]
        cumulative = np.cumsum(hist[f, :nb], axis=0)
        missing = hist[f, -1]
        lefts = [(cumulative, 0)] if missing[-1] == 0 else [(cumulative, 0),
                                                            (cumulative + missing, 1)]
        best = (-1.0, -1, 0)
        for left, direction in lefts:
            right = parent - left
            ok = (left[:, -1] > 0) & (right[:, -1] > 0)
            if restricted:
                gains = 0.5 * (top(imp(left) + imp(right)) - parent_score)
            else:
                gains = 0.5 * (top(imp(left)) + top(imp(right)) - parent_score)
            gains = np.where(ok, gains, -np.inf)
            t = int(np.argmax(gains))
            if gains[t] > best[0]:
                if missing[-1] == 0:
                    direction = int(left[t, -1] >= right[t, -1])
                best = (float(gains[t]), t, direction)
        out.append(best)
    return out


@pytest.mark.parametrize("restricted", [False, True], ids=["unrestricted", "restricted"])
@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
@pytest.mark.parametrize("top_k", [1, 4, 7, 39])
def test_many_outputs_against_sorting(restricted, hess_kind, top_k):
    rng = np.random.default_rng(top_k)
    d = 40
    hess_width = hess_width_of(hess_kind, d)
    max_bins = 32
    n_bins_per_feature = [32, 20, 9, 32, 5]
    X_binned, grad, hess = make_node(rng, 500, n_bins_per_feature, {1, 3}, max_bins, d,
                                     hess_width, varied_outputs=True)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    features = np.arange(5, dtype=np.int32)
    gain, bin_, missing_left = run_sparse(hist, features, n_bins_per_feature, parent, d,
                                          hess_width, 1.0, 1, 0.0, top_k, restricted)
    for f, (ref_gain, ref_bin, ref_left) in enumerate(sorted_reference(
            hist, parent, n_bins_per_feature, d, hess_width, 1.0, top_k, restricted)):
        assert (bin_[f], missing_left[f]) == (ref_bin, ref_left), f
        np.testing.assert_allclose(gain[f], ref_gain, rtol=1e-9)


# -- relations between the modes ----------------------------------------------------
@pytest.mark.parametrize("restricted", [False, True], ids=["unrestricted", "restricted"])
@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
@pytest.mark.parametrize("d", [1, 3, 8])
def test_top_k_at_least_d_is_the_dense_split(restricted, hess_kind, d):
    rng = np.random.default_rng(d)
    hess_width = hess_width_of(hess_kind, d)
    max_bins = 16
    n_bins_per_feature = [16, 12, 1, 7, 3]
    X_binned, grad, hess = make_node(rng, 200, n_bins_per_feature, {1, 2}, max_bins, d,
                                     hess_width, varied_outputs=True)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    features = np.array([4, 0, 1, 2], dtype=np.int32)
    for min_samples_leaf, min_child_weight in ((1, 0.0), (40, 0.0), (1, 30.0)):
        dense = run_dense(hist, features, n_bins_per_feature, parent, d, hess_width, 0.8,
                          min_samples_leaf, min_child_weight)
        for top_k in (d, d + 3):
            sparse = run_sparse(hist, features, n_bins_per_feature, parent, d, hess_width, 0.8,
                                min_samples_leaf, min_child_weight, top_k, restricted)
            for a, b in zip(dense, sparse):
                np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
def test_unrestricted_gain_at_least_restricted(hess_kind):
    """Per candidate, topk(left) + topk(right) >= topk(left + right): so per feature."""
    rng = np.random.default_rng(61)
    d = 12
    hess_width = hess_width_of(hess_kind, d)
    max_bins = 20
    n_bins_per_feature = [20, 14, 6, 20]
    X_binned, grad, hess = make_node(rng, 300, n_bins_per_feature, {1}, max_bins, d,
                                     hess_width, varied_outputs=True)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    features = np.arange(4, dtype=np.int32)
    for top_k in (1, 3, 6):
        free, _, _ = run_sparse(hist, features, n_bins_per_feature, parent, d, hess_width,
                                1.0, 5, 0.0, top_k, False)
        shared, _, _ = run_sparse(hist, features, n_bins_per_feature, parent, d, hess_width,
                                  1.0, 5, 0.0, top_k, True)
        assert np.all(free >= shared - 1e-9 * np.abs(shared))
        assert np.any(free > shared)


@pytest.mark.parametrize("restricted", [False, True], ids=["unrestricted", "restricted"])
@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
def test_threads_do_not_change_results(restricted, hess_kind):
    rng = np.random.default_rng(21)
    d = 20
    hess_width = hess_width_of(hess_kind, d)
    max_bins = 20
    n_bins_per_feature = [20, 5, 13, 3, 8, 17, 20, 11]
    X_binned, grad, hess = make_node(rng, 300, n_bins_per_feature, {0, 2, 4}, max_bins, d,
                                     hess_width, varied_outputs=True)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    features = np.array([4, 0, 5, 2, 7, 6], dtype=np.int32)
    results = [run_sparse(hist, features, n_bins_per_feature, parent, d, hess_width, 1.0, 3,
                          1e-3, 3, restricted, n_threads=n_threads)
               for n_threads in (1, 2, 3)]
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)
    untouched = np.setdiff1d(np.arange(len(n_bins_per_feature)), features)
    assert np.all(results[0][0][untouched] == 99.0)


# -- select_top_k -------------------------------------------------------------------
def random_sums(rng, d, hess_width, count=50.0):
    return np.concatenate([rng.normal(size=d) * 5, rng.uniform(1, 30, size=hess_width),
                           [count]]).astype(HIST_DTYPE)


def reference_improvement(sums, d, hess_width, hess_constant):
    G = sums[:d]
    if hess_width == 0:
        H = hess_constant * sums[d]
    elif hess_width == 1:
        H = sums[d]
    else:
        H = sums[d:2 * d]
    return G * G / (H + LAMBDA)


def reference_top_k(values, top_k):
    """Largest first, equal values: smaller index first; returned in index order."""
    return np.sort(np.argsort(-values, kind="stable")[:top_k])


@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
@pytest.mark.parametrize("d", [1, 2, 5, 17, 100])
def test_select_top_k_against_argsort(hess_kind, d):
    rng = np.random.default_rng(d)
    hess_width = hess_width_of(hess_kind, d)
    for _ in range(5):
        sums = random_sums(rng, d, hess_width)
        values = reference_improvement(sums, d, hess_width, 0.6)
        for top_k in sorted({1, 2, 3, 4, d // 2, d - 1, d} - {0}):
            if top_k > d:
                continue
            out = np.full(top_k, -7, dtype=np.intp)
            total = select_top_k(sums, d, hess_width, 0.6, LAMBDA, top_k, out)
            expected = reference_top_k(values, top_k)
            np.testing.assert_array_equal(out, expected)
            np.testing.assert_allclose(total, values[expected].sum(), rtol=1e-12)


@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
@pytest.mark.parametrize("d", [2, 6, 50])
def test_select_top_k_shared_against_argsort(hess_kind, d):
    rng = np.random.default_rng(d + 1)
    hess_width = hess_width_of(hess_kind, d)
    for _ in range(5):
        left = random_sums(rng, d, hess_width, 20.0)
        right = random_sums(rng, d, hess_width, 35.0)
        values = (reference_improvement(left, d, hess_width, 1.3)
                  + reference_improvement(right, d, hess_width, 1.3))
        for top_k in sorted({1, 2, 4, d - 1, d} - {0}):
            if top_k > d:
                continue
            out = np.empty(top_k, dtype=np.intp)
            total = select_top_k_shared(left, right, d, hess_width, 1.3, LAMBDA, top_k, out)
            expected = reference_top_k(values, top_k)
            np.testing.assert_array_equal(out, expected)
            np.testing.assert_allclose(total, values[expected].sum(), rtol=1e-12)


def test_select_top_k_ties_go_to_the_smaller_index():
    d = 9
    # one shared hessian: equal |G| gives bit-identical improvements
    G = np.array([1.0, 3.0, 0.0, -3.0, 2.0, 3.0, 0.0, -2.0, 1.0])
    sums = np.concatenate([G, [10.0, 40.0]])
    for top_k, expected in [(1, [1]), (2, [1, 3]), (3, [1, 3, 5]), (4, [1, 3, 4, 5]),
                            (5, [1, 3, 4, 5, 7]), (6, [0, 1, 3, 4, 5, 7]),
                            (8, [0, 1, 2, 3, 4, 5, 7, 8])]:
        out = np.empty(top_k, dtype=np.intp)
        select_top_k(sums, d, 1, 1.0, LAMBDA, top_k, out)
        np.testing.assert_array_equal(out, expected)
    zeros = np.concatenate([np.zeros(d), [40.0]])
    out = np.empty(3, dtype=np.intp)
    assert select_top_k(zeros, d, 0, 1.0, LAMBDA, 3, out) == 0.0
    np.testing.assert_array_equal(out, [0, 1, 2])


def test_select_top_k_is_the_parent_score_of_the_split_search():
    """The gain of the best unrestricted split equals 0.5 * (select score of left +
    of right - select score of the parent): the documented parent score."""
    rng = np.random.default_rng(71)
    d, top_k, max_bins = 10, 3, 16
    X_binned, grad, hess = make_node(rng, 200, [16, 9], {1}, max_bins, d, d, varied_outputs=True)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    out = np.empty(top_k, dtype=np.intp)
    parent_score = select_top_k(parent, d, d, 1.0, LAMBDA, top_k, out)
    for restricted in (False, True):
        gain, bin_, missing_left = run_sparse(hist, np.arange(2, dtype=np.int32), [16, 9],
                                              parent, d, d, 1.0, 1, 0.0, top_k, restricted)
        for f in range(2):
            left, right = split_sums(hist, parent, f, bin_[f], missing_left[f])
            _, total = kernel_subsets(left, right, d, d, 1.0, top_k, restricted)
            np.testing.assert_allclose(gain[f], 0.5 * (total - parent_score), rtol=1e-10)


def test_bad_arguments():
    sums = np.ones(4 + 4 + 1)
    hist = np.zeros((1, 3, 9))
    one = np.zeros(1, dtype=np.int32)
    with pytest.raises(ValueError, match="top_k"):
        find_best_sparse_splits(hist, one, np.array([2], dtype=np.int32), sums, 4, 4, 1.0, 1.0,
                                1, 0.0, 0, False, np.zeros(1), np.zeros(1, dtype=np.int32),
                                np.zeros(1, dtype=np.uint8), 1)
    with pytest.raises(ValueError, match="n_outputs \\+ hess_width \\+ 1"):
        find_best_sparse_splits(hist, one, np.array([2], dtype=np.int32), sums[:-1], 4, 4, 1.0,
                                1.0, 1, 0.0, 2, True, np.zeros(1), np.zeros(1, dtype=np.int32),
                                np.zeros(1, dtype=np.uint8), 1)
    with pytest.raises(ValueError, match="hess_width"):
        select_top_k(np.ones(4 + 2 + 1), 4, 2, 1.0, 1.0, 2, np.empty(2, dtype=np.intp))
    with pytest.raises(ValueError, match="top_k"):
        select_top_k(sums, 4, 4, 1.0, 1.0, 5, np.empty(5, dtype=np.intp))
    with pytest.raises(ValueError, match="top_k"):
        select_top_k(sums, 4, 4, 1.0, 1.0, 0, np.empty(0, dtype=np.intp))
    with pytest.raises(ValueError, match="out_indices"):
        select_top_k(sums, 4, 4, 1.0, 1.0, 2, np.empty(3, dtype=np.intp))
    with pytest.raises(ValueError, match="sums"):
        select_top_k(sums[:-1], 4, 4, 1.0, 1.0, 2, np.empty(2, dtype=np.intp))
    with pytest.raises(ValueError, match="same length"):
        select_top_k_shared(sums, sums[:-1], 4, 4, 1.0, 1.0, 2, np.empty(2, dtype=np.intp))
