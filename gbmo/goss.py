"""Gradient-based one-side sampling (GOSS, Ke et al. 2017, LightGBM's
data_sample_strategy="goss").

Each round a tree is grown on the top_rate fraction of rows with the largest
gradients and an other_rate fraction drawn at random from the rest, whose
gradients and hessians are multiplied by the rest's count over the draw's
((1 - top_rate) / other_rate up to rounding) so that their sums estimate
those of all the rows they stand for. Rows with small
gradients are already fitted well, so dropping most of them changes the
chosen splits little while the histograms cost a fraction of the rows.

A row's size is sum_j |g_ij h_ij| over its outputs, LightGBM's measure for
its multi-class trees, so one sample serves every output of a vector-leaf
tree. As in LightGBM, the first 1 / learning_rate rounds use every row: the
gradients of a model that has barely started say little about which rows
are fitted. Unlike LightGBM, the leaf values are then set again from every
row's own gradients (goss_renew_leaves, engine._Trainer._renew_leaves): the
sample chooses the splits well, but its few amplified rows set the values
poorly.
"""
import numpy as np

from ._core import ROW_DTYPE


def goss_warmup_rounds(learning_rate):
    return int(1.0 / learning_rate)


def goss_sample(grad, hess, top_rate, other_rate, rng):
    """goss_sample_by_size for dense (n, d) gradients and hessians."""
    # One size for all outputs, so that one sample serves a vector-leaf tree;
    # summed in float64, where n float32 terms spanning fewer than about
    # 29 - log2(n) binary orders of magnitude add up exactly in any order:
    # rows of equal terms then tie, and a sparse-label row's entries (the
    # non-zero terms alone, sparse_output) give the same size. Terms spread
    # wider (well-fitted sigmoid labels) can round differently by order, so
    # the two paths may then draw different samples.
    return goss_sample_by_size(np.abs(grad * hess).sum(axis=1, dtype=np.float64), top_rate,
                               other_rate, rng)


def goss_sample_by_size(size, top_rate, other_rate, rng):
    """(rows, other_rows, factor): the sorted rows a tree is grown on, the rows
    among them drawn from the small-gradient rest, and what their gradients
    are multiplied by: the rest's count over the draw's, which the rates give
    only up to the rounding of the counts. size: each row's sum_j |g_ij h_ij|."""
    n_rows = size.shape[0]
    n_top = min(n_rows, int(top_rate * n_rows))
    n_other = min(n_rows - n_top, max(1, int(other_rate * n_rows)))
    # a partition, not a sort: O(n), and deterministic for the same sizes
    order = np.argpartition(-size, n_top - 1) if n_top else np.arange(n_rows)
    top, rest = order[:n_top], order[n_top:]
    other = rng.choice(rest, size=n_other, replace=False) if n_other else rest[:0]
    rows = np.sort(np.concatenate([top, other])).astype(ROW_DTYPE)
    factor = (n_rows - n_top) / n_other if n_other else 1.0
    return rows, np.sort(other), factor


def amplified(arrays, rows, factor):
    """Copies of the (n, k) arrays with the given rows multiplied by factor;
    the copies leave the loss's own arrays as they were."""
    out = []
    for array in arrays:
        array = np.array(array, copy=True)
        array[rows] *= factor
        out.append(array)
    return out
