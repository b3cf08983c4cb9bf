"""Dense GBDT-MO split search (Algorithm 4): for every feature the bin threshold
and missing-value direction with the largest gain summed over outputs.

Histogram rows have the layout of _histogram: d gradient sums, k hessian sums
(k = 0: every hessian is hess_constant, so the count stands in; k = 1: one
hessian shared by the outputs; k = d), then the row count.
"""
from cython.parallel cimport parallel, prange
from libc.stdlib cimport free, malloc

from .common cimport HIST_t


cdef inline double score(const HIST_t* sums, Py_ssize_t d, Py_ssize_t k,
                         double hess_constant, double lambda_l2) noexcept nogil:
    """sum_j G_j^2 / (H_j + lambda): twice the objective decrease of a leaf."""
    cdef Py_ssize_t j
    cdef double total = 0.0
    cdef double squares = 0.0
    if k == 0:
        for j in range(d):
            squares += sums[j] * sums[j]
        return squares / (hess_constant * sums[d] + lambda_l2)
    if k == 1:
        for j in range(d):
            squares += sums[j] * sums[j]
        return squares / (sums[d] + lambda_l2)
    for j in range(d):
        total += sums[j] * sums[j] / (sums[d + j] + lambda_l2)
    return total


cdef inline double mean_hessian(const HIST_t* sums, Py_ssize_t d, Py_ssize_t k,
                                double hess_constant) noexcept nogil:
    cdef Py_ssize_t j
    cdef double total = 0.0
    if k == 0:
        return hess_constant * sums[d]
    if k == 1:
        return sums[d]
    for j in range(d):
        total += sums[d + j]
    return total / d


cdef inline double split_gain(const HIST_t* left, HIST_t* right, const HIST_t* parent,
                              Py_ssize_t d, Py_ssize_t k, double hess_constant,
                              double lambda_l2, double parent_score,
                              double min_samples_leaf, double min_child_weight) noexcept nogil:
    """Gain of parent -> (left, parent - left); -1 when a child breaks a constraint.
    Fills right as a side effect."""
    cdef Py_ssize_t width = d + k + 1
    cdef Py_ssize_t j
    for j in range(width):
        right[j] = parent[j] - left[j]
    if left[d + k] < min_samples_leaf or right[d + k] < min_samples_leaf:
        return -1.0
    if (mean_hessian(left, d, k, hess_constant) < min_child_weight or
            mean_hessian(right, d, k, hess_constant) < min_child_weight):
        return -1.0
    return 0.5 * (score(left, d, k, hess_constant, lambda_l2)
                  + score(right, d, k, hess_constant, lambda_l2) - parent_score)


def find_best_splits(const HIST_t[:, :, ::1] hist,
                     const int[::1] features,
                     const int[::1] n_bins_non_missing,
                     const HIST_t[::1] parent,
                     Py_ssize_t n_outputs,
                     Py_ssize_t hess_width,
                     double hess_constant,
                     double lambda_l2,
                     double min_samples_leaf,
                     double min_child_weight,
                     double[::1] best_gain,
                     int[::1] best_bin,
                     unsigned char[::1] best_missing_left,
                     int n_threads):
    """For each f in features: rows in bins <= best_bin[f] go left, the missing
    bin (the last one) goes left iff best_missing_left[f]. best_gain[f] is -1
    when no split of f satisfies the constraints. When the node has no missing
    value of f, missing goes to the child with more rows, as seen in training."""
    cdef Py_ssize_t d = n_outputs
    cdef Py_ssize_t k = hess_width
    cdef Py_ssize_t width = d + k + 1
    cdef Py_ssize_t count = d + k
    cdef Py_ssize_t missing_bin = hist.shape[1] - 1
    cdef double parent_score = score(&parent[0], d, k, hess_constant, lambda_l2)
    cdef Py_ssize_t fi, f, t, j, n_bins
    cdef double gain, best, best_left_count, n_missing
    cdef int chosen_bin
    cdef unsigned char missing_left
    cdef const HIST_t* missing
    cdef HIST_t* left
    cdef HIST_t* right

    with nogil, parallel(num_threads=n_threads):
        left = <HIST_t*> malloc(width * sizeof(HIST_t))
        right = <HIST_t*> malloc(width * sizeof(HIST_t))
        for fi in prange(features.shape[0], schedule="dynamic"):
            f = features[fi]
            n_bins = n_bins_non_missing[f]
            missing = &hist[f, missing_bin, 0]
            n_missing = missing[count]
            best = -1.0
            chosen_bin = -1
            missing_left = 0
            best_left_count = 0.0

            # Missing values go right: every threshold, and with missing values
            # present also "all non-missing left".
            for j in range(width):
                left[j] = 0.0
            for t in range(n_bins if n_missing > 0 else n_bins - 1):
                for j in range(width):
                    left[j] = left[j] + hist[f, t, j]
                gain = split_gain(left, right, &parent[0], d, k, hess_constant, lambda_l2,
                                  parent_score, min_samples_leaf, min_child_weight)
                if gain > best:
                    best = gain
                    chosen_bin = t
                    missing_left = 0
                    best_left_count = left[count]

            if n_missing > 0:
                for j in range(width):
                    left[j] = missing[j]
                for t in range(n_bins - 1):
                    for j in range(width):
                        left[j] = left[j] + hist[f, t, j]
                    gain = split_gain(left, right, &parent[0], d, k, hess_constant, lambda_l2,
                                      parent_score, min_samples_leaf, min_child_weight)
                    if gain > best:
                        best = gain
                        chosen_bin = t
                        missing_left = 1
            elif chosen_bin >= 0:
                missing_left = best_left_count >= parent[count] - best_left_count

            best_gain[f] = best
            best_bin[f] = chosen_bin
            best_missing_left[f] = missing_left
        free(left)
        free(right)
