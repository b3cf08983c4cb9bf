"""Reference helpers shared by tests/test_split.py (dense split search) and
tests/test_sparse_split.py (sparse top-k split search). Plain functions, no tests.

- random node data (`make_node`) and its histogram (`node_histogram`);
- a brute-force split reference computed from the rows themselves, not from the
  histogram (`child_stats`, `improvement`, `best_subset`, `brute_force_feature`,
  and `brute_force_table` for symmetric growth's table of every split's gain):
  every feature, threshold and missing direction and, for the sparse split, every
  subset of top_k outputs (itertools.combinations);
- calls of the kernels (`run_dense`, `run_sparse`, `split_sums`, `kernel_subsets`);
- checks of the kernels against the reference (`check_against_brute_force`,
  `check_min_samples_leaf`, `check_min_child_weight`).

tests/ has no __init__.py, so pytest (default "prepend" import mode) puts tests/ on
sys.path and the test files import this module as `split_reference`. They register it
for pytest's assertion rewriting before importing it, so that a failing check here
reports its values as it would inside a test file.

Every score soft-thresholds the gradient sums by `LAMBDA_L1` (0 here; a test of
L1 regularisation patches it), and every kernel call passes it.

Hessian layouts ("hess kinds", `HESS_WIDTHS`): "0", one constant per row
(hess_constant, no hessian column); "1", one column shared by every output; "d", one
column per output. A child's hessian is always given as a (d,) array.
"""
from itertools import combinations

import numpy as np

from gbmo._core import G_H_DTYPE, HIST_DTYPE, X_BINNED_DTYPE
from gbmo._core._split import (find_best_sparse_splits, find_best_splits, select_top_k,
                               select_top_k_shared)

LAMBDA = 1.0
LAMBDA_L1 = 0.0

HESS_WIDTHS = ["0", "1", "d"]


def hess_width_of(kind, d):
    """Number of hessian columns of a hess kind ("0", "1" or "d") with d outputs."""
    return {"0": 0, "1": 1, "d": d}[kind]


# -- data -----------------------------------------------------------------------
def make_node(rng, n_rows, n_bins_per_feature, missing_features, max_bins, d, hess_width,
              hess_scales=None, varied_outputs=False):
    """Rows of a node: (X_binned (n_features, n_rows), grad (n_rows, d),
    hess (n_rows, hess_width)).

    Every value bin of a feature is populated; the features in missing_features also
    have some rows in the missing bin (max_bins). Gradients are float32 with some
    signal from feature 0: standard normal noise plus feature 0 times a standard
    normal strength per output, or with varied_outputs, noise scaled per output by
    U(0.5, 2) and strengths of scale 2, so that the outputs differ in size and signal.
    Hessians are positive float32, column j scaled by hess_scales[j] (default 1).

    The draws from rng always come in the same order, so a seed gives the same node:
    per feature the extra bins, the permutation, the missing rows; then the gradient
    noise, its per-output scales (varied_outputs only), the strengths, the hessians.
    """
    missing_bin = max_bins
    X_binned = np.empty((len(n_bins_per_feature), n_rows), dtype=X_BINNED_DTYPE)
    for f, n_bins in enumerate(n_bins_per_feature):
        col = rng.permutation(np.concatenate(
            [np.arange(n_bins), rng.integers(0, n_bins, n_rows - n_bins)]))
        if f in missing_features:
            # keep every value bin populated, put some rows in the missing bin
            spare = np.flatnonzero(np.bincount(col, minlength=n_bins)[col] > 1)
            chosen = rng.choice(spare, size=max(1, len(spare) // 6), replace=False)
            col[chosen] = missing_bin
        X_binned[f] = col
    signal = (X_binned[0].astype(float) / max(1, n_bins_per_feature[0]))[:, None]
    if varied_outputs:
        grad = (rng.normal(size=(n_rows, d)) * rng.uniform(0.5, 2.0, size=d)
                + signal * rng.normal(scale=2.0, size=d))
    else:
        grad = rng.normal(size=(n_rows, d)) + signal * rng.normal(size=d)
    grad = grad.astype(G_H_DTYPE)
    if hess_scales is None:
        hess_scales = np.ones(hess_width)
    hess = (rng.uniform(0.2, 1.5, size=(n_rows, hess_width)) * hess_scales).astype(G_H_DTYPE)
    return X_binned, grad, hess


def node_histogram(X_binned, grad, hess, max_bins):
    """(hist, parent): hist (n_features, max_bins + 1, d + hess_width + 1) holds
    [G, H, count] per bin (np.add.at over the rows), parent the sums over all rows."""
    rows = np.hstack([grad, hess, np.ones((grad.shape[0], 1), dtype=G_H_DTYPE)])
    rows = rows.astype(np.float64)
    hist = np.zeros((X_binned.shape[0], max_bins + 1, rows.shape[1]), dtype=HIST_DTYPE)
    for f in range(X_binned.shape[0]):
        np.add.at(hist[f], X_binned[f].astype(np.intp), rows)
    return hist, rows.sum(axis=0)


def rows_left(bins, threshold, missing_left, missing_bin):
    """Boolean mask of the rows a split sends left: value bins <= threshold, and the
    rows in the missing bin when missing_left."""
    is_missing = bins == missing_bin
    return ((bins <= threshold) & ~is_missing) | (is_missing & bool(missing_left))


# -- brute force ----------------------------------------------------------------
def child_stats(grad, hess, mask, hess_width, hess_constant):
    """(G (d,), H (d,), count) straight from the rows in mask."""
    G = grad[mask].astype(np.float64).sum(axis=0)
    count = int(mask.sum())
    if hess_width == 0:
        H = np.full(grad.shape[1], hess_constant * count)
    elif hess_width == 1:
        H = np.full(grad.shape[1], hess[mask, 0].astype(np.float64).sum())
    else:
        H = hess[mask].astype(np.float64).sum(axis=0)
    return G, H, count


def improvement(G, H):
    """Per-output score T(G)^2 / (H + lambda), T(G) = sign(G) max(|G| - lambda_l1, 0)."""
    shrunk = np.sign(G) * np.maximum(np.abs(G) - LAMBDA_L1, 0.0)
    return shrunk * shrunk / (H + LAMBDA)


def best_subset(values, top_k):
    """(largest sum over every subset of top_k outputs, that subset); top_k None: the
    sum over all outputs (the dense score) and all of them."""
    if top_k is None:
        return float(np.sum(values)), tuple(range(len(values)))
    subset = max(combinations(range(len(values)), top_k), key=lambda s: values[list(s)].sum())
    return float(values[list(subset)].sum()), subset


def brute_force_feature(bins, n_bins, missing_bin, grad, hess, hess_width, hess_constant,
                        min_samples_leaf, min_child_weight, top_k=None, restricted=False):
    """Every (threshold, missing direction) with two non-empty children, in the
    kernel's scan order (missing right, then missing left).

    top_k None: the dense split, every output counts. Otherwise the sparse split: the
    best top_k outputs per child (restricted False, paper Algorithm 5) or one shared
    subset for both children (restricted True, Algorithm 6). The parent's score is the
    score of its own best subset in every mode.

    Returns ((gain, bin, missing_left, (left subset, right subset)), candidates,
    parent score); gain -1 / bin -1 when no candidate passes min_samples_leaf and
    min_child_weight (mean hessian over the outputs). A candidate is
    (gain, threshold, missing_left, valid, n_left, n_right, subsets). Without missing
    values the missing direction follows the child with more rows."""
    everything = np.ones(len(bins), dtype=bool)
    parent_score, _ = best_subset(improvement(*child_stats(grad, hess, everything, hess_width,
                                                           hess_constant)[:2]), top_k)
    has_missing = bool((bins == missing_bin).any())
    candidates = []
    for missing_left in ((False, True) if has_missing else (False,)):
        for t in range(n_bins):
            left = rows_left(bins, t, missing_left, missing_bin)
            n_left = int(left.sum())
            if n_left == 0 or n_left == len(bins):
                continue
            GL, HL, nL = child_stats(grad, hess, left, hess_width, hess_constant)
            GR, HR, nR = child_stats(grad, hess, ~left, hess_width, hess_constant)
            valid = (nL >= min_samples_leaf and nR >= min_samples_leaf
                     and HL.mean() >= min_child_weight and HR.mean() >= min_child_weight)
            if restricted:
                total, subset = best_subset(improvement(GL, HL) + improvement(GR, HR), top_k)
                subsets = (subset, subset)
            else:
                total_left, subset_left = best_subset(improvement(GL, HL), top_k)
                total_right, subset_right = best_subset(improvement(GR, HR), top_k)
                total = total_left + total_right
                subsets = (subset_left, subset_right)
            gain = 0.5 * (total - parent_score)
            direction = missing_left if has_missing else nL >= nR
            candidates.append((gain, t, direction, valid, nL, nR, subsets))
    valid = [c for c in candidates if c[3]]
    best = max(valid, key=lambda c: c[0]) if valid else None
    if best is None or best[0] <= -1.0:  # the kernel's "no split" marker
        return (-1.0, -1, False, None), candidates, parent_score
    return (best[0], best[1], best[2], best[6]), candidates, parent_score


def brute_force_table(X_binned, grad, hess, n_bins_per_feature, features, max_bins, hess_width,
                      hess_constant, min_samples_leaf, min_child_weight):
    """gains[f, t, m] of every candidate, from the rows; -inf where none."""
    everything = np.ones(grad.shape[0], dtype=bool)
    parent_score = improvement(*child_stats(grad, hess, everything, hess_width,
                                            hess_constant)[:2]).sum()
    table = np.full((X_binned.shape[0], max_bins, 2), -np.inf)
    for f in features:
        n_bins = n_bins_per_feature[f]
        for missing_left, n_thresholds in ((0, n_bins), (1, n_bins - 1)):
            for t in range(n_thresholds):
                mask = rows_left(X_binned[f], t, missing_left, max_bins)
                (G_l, H_l, n_l), (G_r, H_r, n_r) = (
                    child_stats(grad, hess, side, hess_width, hess_constant)
                    for side in (mask, ~mask))
                if (min(n_l, n_r) < min_samples_leaf
                        or min(H_l.mean(), H_r.mean()) < min_child_weight):
                    continue
                table[f, t, missing_left] = 0.5 * (improvement(G_l, H_l).sum()
                                                   + improvement(G_r, H_r).sum() - parent_score)
    return table


# -- kernel calls -----------------------------------------------------------------
def unset_outputs(n_features):
    """(gain, bin, missing_left) output arrays filled with 99: a kernel must overwrite
    the entries of the features it searches and leave the others alone."""
    return (np.full(n_features, 99.0), np.full(n_features, 99, dtype=np.int32),
            np.full(n_features, 99, dtype=np.uint8))


def run_dense(hist, features, n_bins, parent, d, hess_width, hess_constant, min_samples_leaf,
              min_child_weight, n_threads=2):
    """find_best_splits on hist: (gain, bin, missing_left) per feature."""
    gain, bin_, missing_left = unset_outputs(hist.shape[0])
    find_best_splits(hist, features, np.asarray(n_bins, dtype=np.int32), parent, d, hess_width,
                     hess_constant, LAMBDA, min_samples_leaf, min_child_weight, gain, bin_,
                     missing_left, n_threads, lambda_l1=LAMBDA_L1)
    return gain, bin_, missing_left


def run_sparse(hist, features, n_bins, parent, d, hess_width, hess_constant, min_samples_leaf,
               min_child_weight, top_k, restricted, n_threads=2):
    """find_best_sparse_splits on hist: (gain, bin, missing_left) per feature."""
    gain, bin_, missing_left = unset_outputs(hist.shape[0])
    find_best_sparse_splits(hist, features, np.asarray(n_bins, dtype=np.int32), parent, d,
                            hess_width, hess_constant, LAMBDA, min_samples_leaf,
                            min_child_weight, top_k, restricted, gain, bin_, missing_left,
                            n_threads, lambda_l1=LAMBDA_L1)
    return gain, bin_, missing_left


def split_sums(hist, parent, f, bin_, missing_left):
    """(left sums, right sums) of the split the kernel chose, from the histogram."""
    left = hist[f, : bin_ + 1].sum(axis=0)
    if missing_left:
        left = left + hist[f, -1]
    return left, parent - left


def kernel_subsets(left, right, d, hess_width, hess_constant, top_k, restricted):
    """((left subset, right subset), total score) the selection kernels keep for the
    children sums left and right: select_top_k per child, or select_top_k_shared."""
    out_left = np.empty(top_k, dtype=np.intp)
    if restricted:
        total = select_top_k_shared(left, right, d, hess_width, hess_constant, LAMBDA, top_k,
                                    out_left, lambda_l1=LAMBDA_L1)
        return (tuple(out_left), tuple(out_left)), total
    out_right = np.empty(top_k, dtype=np.intp)
    total = (select_top_k(left, d, hess_width, hess_constant, LAMBDA, top_k, out_left,
                          lambda_l1=LAMBDA_L1)
             + select_top_k(right, d, hess_width, hess_constant, LAMBDA, top_k, out_right,
                            lambda_l1=LAMBDA_L1))
    return (tuple(out_left), tuple(out_right)), total


# -- checks ---------------------------------------------------------------------
def check_against_brute_force(X_binned, grad, hess, max_bins, n_bins_per_feature, features,
                              hess_width, hess_constant, min_samples_leaf, min_child_weight,
                              top_k=None, restricted=False, n_threads=2):
    """Run the kernel on the node's histogram (top_k None: the dense find_best_splits,
    otherwise find_best_sparse_splits) and assert, per feature in features, the
    brute-force bin, missing direction and gain; for a sparse split also the outputs
    the selection kernels keep and the gain they imply. Features not in features must
    be left untouched. Returns (gain, bin, missing_left, {feature: candidates})."""
    d = grad.shape[1]
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    if top_k is None:
        gain, bin_, missing_left = run_dense(hist, features, n_bins_per_feature, parent, d,
                                             hess_width, hess_constant, min_samples_leaf,
                                             min_child_weight, n_threads)
    else:
        gain, bin_, missing_left = run_sparse(hist, features, n_bins_per_feature, parent, d,
                                              hess_width, hess_constant, min_samples_leaf,
                                              min_child_weight, top_k, restricted, n_threads)
    all_candidates = {}
    for f in features:
        (ref_gain, ref_bin, ref_left, ref_subsets), candidates, parent_score = \
            brute_force_feature(X_binned[f], n_bins_per_feature[f], max_bins, grad, hess,
                                hess_width, hess_constant, min_samples_leaf, min_child_weight,
                                top_k, restricted)
        assert bin_[f] == ref_bin, (f, bin_[f], ref_bin)
        assert bool(missing_left[f]) == ref_left, (f, missing_left[f], ref_left)
        # absolute tolerance: relative to the parent score, floored at 1 for a sparse split
        scale = parent_score if top_k is None else max(parent_score, 1.0)
        tolerance = dict(rtol=1e-8, atol=1e-10 * scale)
        np.testing.assert_allclose(gain[f], ref_gain, **tolerance)
        if top_k is not None and ref_bin >= 0:
            # the outputs the children keep, and the gain they imply
            left, right = split_sums(hist, parent, f, bin_[f], missing_left[f])
            subsets, total = kernel_subsets(left, right, d, hess_width, hess_constant, top_k,
                                            restricted)
            assert subsets == ref_subsets, (f, subsets, ref_subsets)
            np.testing.assert_allclose(0.5 * (total - parent_score), gain[f], **tolerance)
        all_candidates[int(f)] = candidates
    untouched = np.setdiff1d(np.arange(hist.shape[0]), features)
    assert np.all(gain[untouched] == 99.0)
    assert np.all(bin_[untouched] == 99)
    assert np.all(missing_left[untouched] == 99)
    return gain, bin_, missing_left, all_candidates


def check_min_samples_leaf(X_binned, max_bins, features, gain, bin_, missing_left, candidates,
                           min_samples_leaf):
    """Every split the kernel chose leaves min_samples_leaf rows or more in each child,
    and the constraint binds for at least one feature: there the unconstrained
    brute-force best (from check_against_brute_force's candidates) has a smaller child,
    and a larger gain than the kernel's."""
    n_rows = X_binned.shape[1]
    binding = 0
    for f in features:
        if bin_[f] >= 0:
            left = rows_left(X_binned[f], bin_[f], missing_left[f], max_bins)
            assert min_samples_leaf <= left.sum() <= n_rows - min_samples_leaf
        unconstrained = max(candidates[int(f)], key=lambda c: c[0])
        if min(unconstrained[4], unconstrained[5]) < min_samples_leaf:
            binding += 1
            assert gain[f] < unconstrained[0]
    assert binding > 0, "the constraint should change at least one feature's best split"


def check_min_child_weight(X_binned, grad, hess, max_bins, features, bin_, missing_left,
                           candidates, hess_width, hess_constant, min_child_weight):
    """Every split the kernel chose has a mean hessian over the outputs of
    min_child_weight or more in each child (from the rows), and the constraint binds for
    at least one feature: there the unconstrained brute-force best is not valid."""
    binding = 0
    for f in features:
        if bin_[f] >= 0:
            left = rows_left(X_binned[f], bin_[f], missing_left[f], max_bins)
            for mask in (left, ~left):
                _, H, _ = child_stats(grad, hess, mask, hess_width, hess_constant)
                assert H.mean() >= min_child_weight
        if not max(candidates[int(f)], key=lambda c: c[0])[3]:
            binding += 1
    assert binding > 0
