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


cdef struct SplitContext:
    Py_ssize_t n_outputs
    Py_ssize_t hess_width
    double hess_constant
    double lambda_l2
    double min_samples_leaf
    double min_child_weight
    const HIST_t* parent
    double parent_score


cdef struct Candidate:
    double gain
    int bin
    unsigned char missing_left
    double left_count


cdef inline double split_gain(const SplitContext* c, const HIST_t* left, HIST_t* right) noexcept nogil:
    """Gain of parent -> (left, parent - left); -1 when a child breaks a constraint.
    Fills right as a side effect."""
    cdef Py_ssize_t d = c.n_outputs, k = c.hess_width
    cdef Py_ssize_t j
    for j in range(d + k + 1):
        right[j] = c.parent[j] - left[j]
    if left[d + k] < c.min_samples_leaf or right[d + k] < c.min_samples_leaf:
        return -1.0
    if (mean_hessian(left, d, k, c.hess_constant) < c.min_child_weight or
            mean_hessian(right, d, k, c.hess_constant) < c.min_child_weight):
        return -1.0
    return 0.5 * (score(left, d, k, c.hess_constant, c.lambda_l2)
                  + score(right, d, k, c.hess_constant, c.lambda_l2) - c.parent_score)


cdef inline void scan_thresholds(const SplitContext* c, const HIST_t* feature_hist,
                                 Py_ssize_t n_thresholds, const HIST_t* initial_left,
                                 unsigned char missing_left, HIST_t* left, HIST_t* right,
                                 Candidate* best) noexcept nogil:
    """Tries "bins <= t go left" for t < n_thresholds, the left side starting from
    initial_left (the missing bin's sums, or NULL for none); keeps the best in best."""
    cdef Py_ssize_t width = c.n_outputs + c.hess_width + 1
    cdef Py_ssize_t t, j
    cdef double gain
    for j in range(width):
        left[j] = initial_left[j] if initial_left != NULL else 0.0
    for t in range(n_thresholds):
        for j in range(width):
            left[j] += feature_hist[t * width + j]
        gain = split_gain(c, left, right)
        if gain > best.gain:
            best.gain = gain
            best.bin = <int>t
            best.missing_left = missing_left
            best.left_count = left[width - 1]


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
    (and best_bin[f] -1) when no split of f satisfies the constraints with a
    gain above -1; the grower only takes positive gains. When the node has no
    missing value of f, missing goes to the child with more rows."""
    cdef SplitContext context
    context.n_outputs = n_outputs
    context.hess_width = hess_width
    context.hess_constant = hess_constant
    context.lambda_l2 = lambda_l2
    context.min_samples_leaf = min_samples_leaf
    context.min_child_weight = min_child_weight
    context.parent = &parent[0]
    context.parent_score = score(&parent[0], n_outputs, hess_width, hess_constant, lambda_l2)
    cdef Py_ssize_t width = n_outputs + hess_width + 1
    cdef Py_ssize_t missing_bin = hist.shape[1] - 1
    cdef Py_ssize_t fi, f, n_bins
    cdef Candidate* best
    cdef const HIST_t* missing
    cdef HIST_t* left
    cdef HIST_t* right

    with nogil, parallel(num_threads=n_threads):
        left = <HIST_t*> malloc(width * sizeof(HIST_t))
        right = <HIST_t*> malloc(width * sizeof(HIST_t))
        # Per-thread scratch: a struct assigned field by field inside prange
        # would be shared between threads.
        best = <Candidate*> malloc(sizeof(Candidate))
        for fi in prange(features.shape[0], schedule="dynamic"):
            f = features[fi]
            n_bins = n_bins_non_missing[f]
            missing = &hist[f, missing_bin, 0]
            best.gain = -1.0
            best.bin = -1
            best.missing_left = 0
            if missing[width - 1] > 0:
                # Missing right: every threshold including "all values left";
                # missing left: every threshold that leaves some values right.
                scan_thresholds(&context, &hist[f, 0, 0], n_bins, NULL, 0, left, right, best)
                scan_thresholds(&context, &hist[f, 0, 0], n_bins - 1, missing, 1, left, right, best)
            else:
                scan_thresholds(&context, &hist[f, 0, 0], n_bins - 1, NULL, 0, left, right, best)
                if best.bin >= 0:
                    best.missing_left = best.left_count >= parent[width - 1] - best.left_count
            best_gain[f] = best.gain
            best_bin[f] = best.bin
            best_missing_left[f] = best.missing_left
        free(left)
        free(right)
        free(best)
