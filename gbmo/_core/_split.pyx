"""GBDT-MO split search: for every feature the bin threshold and missing-value
direction with the largest gain.

- dense (Algorithm 4, find_best_splits): the gain is summed over all outputs;
- sparse top-k (Algorithms 5 and 6, find_best_sparse_splits): each child keeps
  only k outputs (its own k, or one set shared by both children), and the gain
  sums the improvements G_j^2 / (H_j + lambda) of the kept outputs only;
- select_top_k / select_top_k_shared: the k outputs a sparse leaf keeps;
- split_gain_table: every dense split's gain at one node (symmetric growth);
- monotone constraints (dense search only): a node's leaf values are bounded
  per output, [lower_j, upper_j], and a split on a feature constrained for
  output j must order its children's bounded values of j the constraint's way;
- L1 regularisation (lambda_l1 > 0, every search): each gradient sum G_j is
  moved toward 0 by lambda_l1 before it is scored (see l1_shrunk).

Histogram rows have the layout of _histogram: d gradient sums, k hessian sums
(k = 0: every hessian is hess_constant, so the count stands in; k = 1: one
hessian shared by the outputs; k = d), then the row count.
"""
from cython.parallel cimport parallel, prange
from libc.float cimport DBL_MAX
from libc.math cimport INFINITY, NAN, fabs, sqrt
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc

import numpy as np

from .common cimport HIST_t, counter_draw, soft_threshold


cdef inline double regularized(double hessian, double lambda_l2) noexcept nogil:
    """H + lambda as a denominator; +inf when it is 0 (an output without any
    hessian in a node, e.g. all its labels missing, with lambda_l2 = 0), so
    that output adds 0 to a gain instead of 0 / 0 = NaN, which lost the split
    for every output."""
    cdef double total = hessian + lambda_l2
    return total if total != 0.0 else INFINITY


cdef inline const HIST_t* l1_shrunk(const HIST_t* sums, Py_ssize_t d, Py_ssize_t width,
                                    double lambda_l1, HIST_t* out) noexcept nogil:
    """sums with each gradient sum soft-thresholded, in out; sums itself when
    lambda_l1 is 0. With the L1 term lambda_l1 |w_j| in a leaf's objective its
    best value is -T(G_j) / (H_j + lambda) and its score T(G_j)^2 / (H_j +
    lambda) (XGBoost's and LightGBM's formulas), so every score below, dense,
    sparse or bounded, is the L2 one of the shrunk sums."""
    cdef Py_ssize_t j
    if lambda_l1 == 0.0:
        return sums
    for j in range(d):
        out[j] = soft_threshold(sums[j], lambda_l1)
    for j in range(d, width):
        out[j] = sums[j]
    return out


cdef inline double sum_of_squares(const HIST_t* values, Py_ssize_t n) noexcept nogil:
    """In four partial sums: one running sum makes every add wait for the one
    before it, which at d = 100 cost more than the multiplications."""
    cdef Py_ssize_t j = 0
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    while j + 4 <= n:
        s0 += values[j] * values[j]
        s1 += values[j + 1] * values[j + 1]
        s2 += values[j + 2] * values[j + 2]
        s3 += values[j + 3] * values[j + 3]
        j += 4
    while j < n:
        s0 += values[j] * values[j]
        j += 1
    return (s0 + s1) + (s2 + s3)


cdef inline double score(const HIST_t* sums, Py_ssize_t d, Py_ssize_t k,
                         double hess_constant, double lambda_l2) noexcept nogil:
    """sum_j G_j^2 / (H_j + lambda): twice the objective decrease of a leaf."""
    cdef Py_ssize_t j
    cdef double total = 0.0
    if k == 0:
        return sum_of_squares(sums, d) / regularized(hess_constant * sums[d], lambda_l2)
    if k == 1:
        return sum_of_squares(sums, d) / regularized(sums[d], lambda_l2)
    # Here the divisions, not the adds, set the pace (partial sums measured slower).
    for j in range(d):
        total += sums[j] * sums[j] / regularized(sums[d + j], lambda_l2)
    return total


cdef inline double smoothed(double value, double count, double anchor,
                           double path_smooth) noexcept nogil:
    """value pulled toward anchor by path_smooth / (count + path_smooth): a
    node of few rows keeps mostly its parent's value. LightGBM divides by
    count / path_smooth + 1, which overflows for a path_smooth near the
    smallest doubles."""
    cdef double total = count + path_smooth
    return value * (count / total) + anchor * (path_smooth / total)


cdef inline double bounded_score(const HIST_t* sums, Py_ssize_t d, Py_ssize_t k,
                                 double hess_constant, double lambda_l2, const ValueBounds* b,
                                 double* values) noexcept nogil:
    """score when each leaf value w_j = -G_j / (H_j + lambda) is bounded as b
    says (see ValueBounds): twice the objective decrease, -(2 G_j w_j + (H_j
    + lambda) w_j^2), which is G_j^2 / (H_j + lambda) when nothing bounds it.
    values (when not NULL) receives the w_j."""
    cdef Py_ssize_t j
    cdef double hessian, value, total = 0.0
    for j in range(d):
        if k == 0:
            hessian = hess_constant * sums[d] + lambda_l2
        elif k == 1:
            hessian = sums[d] + lambda_l2
        else:
            hessian = sums[d + j] + lambda_l2
        # no hessian: no rows that count, so G is 0 and any value costs nothing
        value = -sums[j] / hessian if hessian != 0.0 else 0.0
        if b.path_smooth > 0.0:
            value = smoothed(min(max(value, -b.max_output), b.max_output), sums[d + k],
                             b.anchor[j], b.path_smooth)
        value = min(max(value, b.lower[j]), b.upper[j])
        if values != NULL:
            values[j] = value
        total -= 2.0 * sums[j] * value + hessian * value * value
    return total


cdef inline double mean_hessian(const HIST_t* sums, Py_ssize_t d, Py_ssize_t k,
                                double hess_constant) noexcept nogil:
    cdef Py_ssize_t j = 0
    cdef const HIST_t* hess = sums + d
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    if k == 0:
        return hess_constant * sums[d]
    if k == 1:
        return sums[d]
    while j + 4 <= d:  # partial sums, as in sum_of_squares
        s0 += hess[j]
        s1 += hess[j + 1]
        s2 += hess[j + 2]
        s3 += hess[j + 3]
        j += 4
    while j < d:
        s0 += hess[j]
        j += 1
    return ((s0 + s1) + (s2 + s3)) / d


cdef inline void improvements(const HIST_t* sums, Py_ssize_t d, Py_ssize_t k,
                              double hess_constant, double lambda_l2,
                              double* out) noexcept nogil:
    """out[j] = G_j^2 / (H_j + lambda) for the d outputs of one sums row."""
    cdef Py_ssize_t j
    cdef double inverse
    if k <= 1:
        if k == 0:
            inverse = 1.0 / regularized(hess_constant * sums[d], lambda_l2)
        else:
            inverse = 1.0 / regularized(sums[d], lambda_l2)
        for j in range(d):
            out[j] = sums[j] * sums[j] * inverse
    else:
        for j in range(d):
            out[j] = sums[j] * sums[j] / regularized(sums[d + j], lambda_l2)


cdef inline void paired_improvements(const HIST_t* left, const HIST_t* right, Py_ssize_t d,
                                     Py_ssize_t k, double hess_constant, double lambda_l2,
                                     double* out) noexcept nogil:
    """out[j] = improvement of output j in left + in right (restricted selection key)."""
    cdef Py_ssize_t j
    cdef double inverse_left, inverse_right
    if k <= 1:
        if k == 0:
            inverse_left = 1.0 / regularized(hess_constant * left[d], lambda_l2)
            inverse_right = 1.0 / regularized(hess_constant * right[d], lambda_l2)
        else:
            inverse_left = 1.0 / regularized(left[d], lambda_l2)
            inverse_right = 1.0 / regularized(right[d], lambda_l2)
        for j in range(d):
            out[j] = left[j] * left[j] * inverse_left + right[j] * right[j] * inverse_right
    else:
        for j in range(d):
            out[j] = (left[j] * left[j] / regularized(left[d + j], lambda_l2)
                      + right[j] * right[j] / regularized(right[d + j], lambda_l2))


cdef struct TopK:
    # a bounded selection's state, one per thread and child (see top_k_sum)
    double* heap               # top_k values, a min-heap
    Py_ssize_t* heap_index     # their outputs
    bint seeded                # heap_index holds the previous call's winners


cdef inline void sift_down(double* heap, Py_ssize_t* heap_index, Py_ssize_t size,
                           Py_ssize_t pos, double x, Py_ssize_t index) noexcept nogil:
    """Puts (x, index) at pos of a min-heap of values and sifts it down."""
    cdef Py_ssize_t child
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= x:
            break
        heap[pos] = heap[child]
        heap_index[pos] = heap_index[child]
        pos = child
    heap[pos] = x
    heap_index[pos] = index


cdef inline double top_k_sum(double* values, Py_ssize_t n, Py_ssize_t top_k,
                             TopK* sel) noexcept nogil:
    """Sum of the top_k largest of values[0:n] (1 <= top_k <= n), kept in a min-heap of
    size top_k: O(n log top_k) at worst. values is scratch: its heap seeds are
    overwritten with -inf.

    When sel.seeded, the heap starts from the outputs that won the previous call (the
    previous threshold of the same scan, whose children differ by one bin), so its
    minimum is near final from the start. The seeds' entries are then set to -inf,
    so a value passes the comparison with the heap's minimum only when it really
    enters the heap (rarely), and eight comparisons are OR-ed into one branch.
    Correct for any seed: every value is offered once, and a value pushed out has
    top_k values at least as large. The seed is reset at the start of every
    threshold scan, so results do not depend on which thread scanned what; the
    same values with the same seed give the same heap, hence the bit-identical sum
    that first-best-wins relies on for thresholds that make the same partition."""
    cdef double* heap = sel.heap
    cdef Py_ssize_t* heap_index = sel.heap_index
    cdef Py_ssize_t i, j
    cdef double x, threshold
    cdef double total = 0.0
    if not sel.seeded:
        for i in range(top_k):
            heap_index[i] = i
        sel.seeded = True
    for i in range(top_k):
        j = heap_index[i]
        heap[i] = values[j]
        values[j] = -INFINITY
    for i in range(top_k // 2 - 1, -1, -1):   # heapify (a no-op on an unchanged heap)
        sift_down(heap, heap_index, top_k, i, heap[i], heap_index[i])
    threshold = heap[0]
    j = 0
    while j + 8 <= n:
        if ((values[j] > threshold) | (values[j + 1] > threshold)
                | (values[j + 2] > threshold) | (values[j + 3] > threshold)
                | (values[j + 4] > threshold) | (values[j + 5] > threshold)
                | (values[j + 6] > threshold) | (values[j + 7] > threshold)):
            for i in range(j, j + 8):
                x = values[i]
                if x > threshold:
                    sift_down(heap, heap_index, top_k, 0, x, i)
                    threshold = heap[0]
        j += 8
    for i in range(j, n):
        x = values[i]
        if x > threshold:
            sift_down(heap, heap_index, top_k, 0, x, i)
            threshold = heap[0]
    for i in range(top_k):
        total += heap[i]
    return total


cdef inline bint ranks_below(double value_a, Py_ssize_t index_a,
                             double value_b, Py_ssize_t index_b) noexcept nogil:
    """True when output a ranks below output b: smaller improvement, or equal
    improvement and larger index (ties go to the smaller index)."""
    return value_a < value_b or (value_a == value_b and index_a > index_b)


cdef void top_k_indices(const double* values, Py_ssize_t n, Py_ssize_t top_k,
                        double* heap, Py_ssize_t* heap_index,
                        Py_ssize_t* out) noexcept nogil:
    """Indices of the top_k largest values (ties: smaller index first), written to
    out in increasing index order: an unseeded min-heap as in top_k_sum, ordered by
    (value, -index) so that ties are deterministic. Once per leaf, not per candidate."""
    cdef Py_ssize_t i, pos, child, parent_pos, index
    cdef double x
    for i in range(n):
        x = values[i]
        if i < top_k:
            pos = i
            while pos > 0:
                parent_pos = (pos - 1) >> 1
                if not ranks_below(x, i, heap[parent_pos], heap_index[parent_pos]):
                    break
                heap[pos] = heap[parent_pos]
                heap_index[pos] = heap_index[parent_pos]
                pos = parent_pos
            heap[pos] = x
            heap_index[pos] = i
        elif ranks_below(heap[0], heap_index[0], x, i):
            pos = 0
            while True:
                child = 2 * pos + 1
                if child >= top_k:
                    break
                if child + 1 < top_k and ranks_below(heap[child + 1], heap_index[child + 1],
                                                     heap[child], heap_index[child]):
                    child += 1
                if not ranks_below(heap[child], heap_index[child], x, i):
                    break
                heap[pos] = heap[child]
                heap_index[pos] = heap_index[child]
                pos = child
            heap[pos] = x
            heap_index[pos] = i
    # insertion sort of the top_k indices (top_k is small)
    for i in range(top_k):
        index = heap_index[i]
        pos = i
        while pos > 0 and out[pos - 1] > index:
            out[pos] = out[pos - 1]
            pos -= 1
        out[pos] = index


cdef struct Scratch:
    # per-thread buffers, allocated once per thread
    HIST_t* left               # width
    HIST_t* right              # width
    HIST_t* shrunk_left        # width (lambda_l1 > 0 only)
    HIST_t* shrunk_right       # width (lambda_l1 > 0 only)
    double* improvement        # n_outputs (sparse only)
    double* improvement_right  # n_outputs (unrestricted only)
    TopK* select_left          # sparse only: the left child's / the shared selection
    TopK* select_right         # unrestricted only
    double* left_values        # n_outputs (monotone constraints only)
    double* right_values       # n_outputs (monotone constraints only)
    const signed char* direction  # per output, the constraint of the feature being scanned
    CategoryScratch* categories   # categorical features only


cdef struct CategoryScratch:
    # order_categories' buffers, per thread
    int* order                 # histogram rows
    double* key                # histogram rows
    HIST_t* permuted           # histogram rows x width
    double* values             # histogram rows x n_outputs
    double* centre             # n_outputs
    double* direction          # n_outputs
    double* product            # n_outputs


cdef struct Candidate:
    double score               # what candidates compete with: the gain, plus noise
    double gain
    int bin
    unsigned char missing_left
    double left_count
    uint64_t noise_base        # the candidates' counters of split_noise, but for
                               # their position and missing side


# 2^16 and sqrt(3): four 16-bit uniforms summed have variance 1/3
cdef double SIXTEEN_BITS = 65536.0
cdef double ROOT_3 = 1.7320508075688772


# A candidate's counter for split_noise: its missing side in bit 0, its
# position (a threshold, or a step of a categorical set's run) in bits 1-8, a
# one-hot set's category in bits 9-17, its kind in bits 18-20 and its feature
# in bits 21-47. 16-bit bins (max_bins above 255) put the position's bits
# above the eighth in bits 48-55, and the category's above the ninth in bits
# 56-62: 8-bit bins' counters, and so their models, stay as they were.
cdef int NOISE_CATEGORY_SHIFT = 9
cdef int NOISE_KIND_SHIFT = 18
cdef int NOISE_FEATURE_SHIFT = 21
cdef int NOISE_HIGH_POSITION_SHIFT = 48 - 8
cdef int NOISE_HIGH_CATEGORY_SHIFT = 56 - 9
cdef uint64_t NOISE_THRESHOLD = 0, NOISE_ONE_HOT = 1, NOISE_RUN = 2, NOISE_RUN_REVERSED = 3
cdef uint64_t NOISE_ALL_CATEGORIES = 4


cdef inline uint64_t noise_base(Py_ssize_t feature, uint64_t kind,
                                Py_ssize_t category) noexcept nogil:
    return ((<uint64_t>feature << NOISE_FEATURE_SHIFT) | (kind << NOISE_KIND_SHIFT)
            | ((<uint64_t>category & 0x1FF) << NOISE_CATEGORY_SHIFT)
            | ((<uint64_t>category >> 9) << NOISE_HIGH_CATEGORY_SHIFT))


cdef inline uint64_t noise_counter(uint64_t base, Py_ssize_t position,
                                   uint64_t side) noexcept nogil:
    """The counter of the candidate at position on side of a noise_base."""
    return (base | ((<uint64_t>position & 0xFF) << 1)
            | ((<uint64_t>position >> 8) << NOISE_HIGH_POSITION_SHIFT) | side)


cdef inline double split_noise(uint64_t key, uint64_t counter) noexcept nogil:
    """The draw of random_strength's noise for one candidate (its counter:
    see noise_base), about standard normal: the sum of the four 16-bit
    quarters of a hash of the counter, each a uniform draw, centred and
    scaled to variance 1 (so bounded by +-2 sqrt(3); a Box-Muller draw per
    candidate would cost more than its gain). The hash counts from the
    node's key, so a candidate's draw depends on nothing else: not on the
    threads, nor on which other candidates were scored."""
    cdef uint64_t h = counter_draw(key, counter)
    cdef double total = <double>((h & 0xFFFF) + ((h >> 16) & 0xFFFF) + ((h >> 32) & 0xFFFF)
                                 + (h >> 48)) + 2.0
    return (total / SIXTEEN_BITS - 2.0) * ROOT_3


cdef inline double noise_spread_squared(double noise_scale, double gain,
                                        double parent_score) noexcept nogil:
    """The variance of the noise on a candidate of this gain (the node's
    score parent_score): CatBoost's noise on its score's square root,
    carried to first order to the gain (see SplitContext)."""
    return noise_scale * noise_scale * (2.0 * gain + max(parent_score, 0.0))


cdef inline void consider(const SplitContext* c, double gain, int position,
                          unsigned char side, double left_count, Candidate* best) noexcept nogil:
    """Keeps the candidate in best when its score beats best's: its gain,
    or under random_strength (c.noise_scale > 0) its gain plus noise, where
    only candidates whose gain exceeds c.least_gain compete (a split the
    grower would not make must not win)."""
    cdef double candidate_score = gain, spread_squared, margin
    if c.noise_scale > 0.0:
        if not gain > c.least_gain:
            return
        # a candidate that even the largest draw (2 sqrt(3) spreads) cannot
        # lift to best.score is dropped on squares: a square root and a draw
        # per candidate paced the scan
        margin = best.score - gain
        spread_squared = noise_spread_squared(c.noise_scale, gain, c.parent_score)
        if margin > 0.0 and margin * margin >= 12.0 * spread_squared:
            return
        candidate_score = gain + sqrt(spread_squared) * split_noise(
            c.noise_key, noise_counter(best.noise_base, position, side))
    if candidate_score > best.score:
        best.score = candidate_score
        best.gain = gain
        best.bin = position
        best.missing_left = side
        best.left_count = left_count


cdef inline bint children_valid(const SplitContext* c, const HIST_t* left,
                                HIST_t* right) noexcept nogil:
    """Fills right = parent - left; False when a child breaks min_samples_leaf or
    min_child_weight (the mean hessian over all outputs, in every mode)."""
    cdef Py_ssize_t d = c.n_outputs, k = c.hess_width
    cdef Py_ssize_t j
    # Counts first: most rejected candidates fail them, before any d-wide work.
    if left[d + k] < c.min_samples_leaf or c.parent[d + k] - left[d + k] < c.min_samples_leaf:
        return False
    for j in range(d + k + 1):
        right[j] = c.parent[j] - left[j]
    if (mean_hessian(left, d, k, c.hess_constant) < c.min_child_weight or
            mean_hessian(right, d, k, c.hess_constant) < c.min_child_weight):
        return False
    return True


cdef inline double bounded_split_gain(const SplitContext* c, const HIST_t* left,
                                      const HIST_t* right, Scratch* s) noexcept nogil:
    """The dense gain with each child's values bounded as its parent's; -1 when
    an output's values are out of the order its constraint on the feature
    asks."""
    cdef Py_ssize_t d = c.n_outputs, j
    cdef double total = (bounded_score(left, d, c.hess_width, c.hess_constant, c.lambda_l2,
                                       &c.bounds, s.left_values)
                         + bounded_score(right, d, c.hess_width, c.hess_constant, c.lambda_l2,
                                         &c.bounds, s.right_values))
    for j in range(d):
        if s.direction[j] * (s.right_values[j] - s.left_values[j]) < 0.0:
            return -1.0
    return 0.5 * (total - c.parent_score)


cdef inline double split_gain(const SplitContext* c, const HIST_t* left, HIST_t* right,
                              Scratch* s) noexcept nogil:
    """Gain of parent -> (left, parent - left); -1 when a child breaks a constraint.
    Fills right (unshrunk) as a side effect."""
    cdef Py_ssize_t d = c.n_outputs, k = c.hess_width
    cdef const HIST_t* scored_left
    cdef const HIST_t* scored_right
    if not children_valid(c, left, right):
        return -1.0
    scored_left = l1_shrunk(left, d, d + k + 1, c.lambda_l1, s.shrunk_left)
    scored_right = l1_shrunk(right, d, d + k + 1, c.lambda_l1, s.shrunk_right)
    if c.monotone != NULL:
        return bounded_split_gain(c, scored_left, scored_right, s)
    if c.top_k == 0:
        return 0.5 * (score(scored_left, d, k, c.hess_constant, c.lambda_l2)
                      + score(scored_right, d, k, c.hess_constant, c.lambda_l2)
                      - c.parent_score)
    if c.restricted:
        paired_improvements(scored_left, scored_right, d, k, c.hess_constant, c.lambda_l2,
                            s.improvement)
        return 0.5 * (top_k_sum(s.improvement, d, c.top_k, s.select_left) - c.parent_score)
    improvements(scored_left, d, k, c.hess_constant, c.lambda_l2, s.improvement)
    improvements(scored_right, d, k, c.hess_constant, c.lambda_l2, s.improvement_right)
    return 0.5 * (top_k_sum(s.improvement, d, c.top_k, s.select_left)
                  + top_k_sum(s.improvement_right, d, c.top_k, s.select_right)
                  - c.parent_score)


cdef inline void scan_thresholds(const SplitContext* c, const HIST_t* feature_hist,
                                 Py_ssize_t n_thresholds, const HIST_t* initial_left,
                                 unsigned char missing_left, Scratch* s,
                                 Candidate* best) noexcept nogil:
    """Tries "bins <= t go left" for t < n_thresholds, the left side starting from
    initial_left (the missing bin's sums, or NULL for none); keeps the best in best."""
    cdef Py_ssize_t width = c.n_outputs + c.hess_width + 1
    cdef Py_ssize_t t, j
    cdef HIST_t* left = s.left
    if s.select_left != NULL:
        s.select_left.seeded = False
    if s.select_right != NULL:
        s.select_right.seeded = False
    for j in range(width):
        left[j] = initial_left[j] if initial_left != NULL else 0.0
    for t in range(n_thresholds):
        # An empty bin leaves the left side as it was: the same candidate as
        # threshold t - 1, which already had its chance (ties keep the lower t).
        if t > 0 and feature_hist[t * width + width - 1] == 0:
            continue
        for j in range(width):
            left[j] += feature_hist[t * width + j]
        # The right side only shrinks as t grows: once too small, it stays so.
        if c.parent[width - 1] - left[width - 1] < c.min_samples_leaf:
            break
        consider(c, split_gain(c, left, s.right, s), <int>t, missing_left, left[width - 1], best)


cdef inline double beat_threshold(double best_score, const SplitContext* c,
                                  double lowest_denominator, bint noisy) noexcept nogil:
    """scan_thresholds_one_output's bound: a candidate whose children's scores
    sum to less than this cannot score above best_score, whatever the
    rounding (a relative margin of 1e-9 against errors of about 1e-15).
    Without noise a score is a gain, 0.5 (children - parent_score). Under
    random_strength (noisy) it is at most that plus 2 sqrt(3) noise_scale
    sqrt(children) (split_noise's largest draw), which beats best_score only
    when sqrt(children) exceeds the positive root of that quadratic.

    NaN, which turns the test off, unless the bound and lowest_denominator
    (the least H + lambda a candidate that keeps min_child_weight can have)
    are at least 1e-100: then no product of the test underflows, so its
    rounding stays within the margin, and every denominator is positive."""
    cdef double parent_score = c.parent_score, needed, reach
    if noisy:
        reach = 2.0 * ROOT_3 * c.noise_scale
        needed = max(parent_score, 0.0) + 2.0 * best_score
        # the root sqrt(reach^2 + needed) - reach, written so that it keeps
        # its digits when reach^2 is far above needed
        needed = needed / (sqrt(reach * reach + needed) + reach) if needed > 0.0 else 0.0
        needed = needed * needed
    else:
        needed = 2.0 * best_score + parent_score
    cdef double bound = needed - 1e-9 * (fabs(needed) + fabs(parent_score))
    return bound if bound >= 1e-100 and lowest_denominator >= 1e-100 else NAN


cdef inline void scan_thresholds_one_output(const SplitContext* c,
                                            const HIST_t* feature_hist,
                                            Py_ssize_t n_thresholds,
                                            const HIST_t* initial_left,
                                            unsigned char missing_left,
                                            Candidate* best, bint l1,
                                            bint noisy) noexcept nogil:
    """scan_thresholds for a dense split of one output (single-output trees):
    the same candidates and the same gains, bit for bit, with the sums in
    registers instead of width-long loops, which cost more than the
    arithmetic when width is 2 or 3.

    The gain's two divisions paced the loop, so a candidate is first tested
    without them: G_L^2 / D_L + G_R^2 / D_R can beat the best only if
    G_L^2 D_R + G_R^2 D_L reaches the bound times D_L D_R (for positive
    denominators D). The few that pass get their exact gain and the exact
    comparison, so the choice is the one the plain loop makes. l1 (a constant
    at each call, so the compiler drops the test without it) says whether
    c.lambda_l1 is not 0, noisy (the same) whether c.noise_scale is: then
    candidates compete by score (consider), and the bound is beat_threshold's
    for scores."""
    cdef Py_ssize_t k = c.hess_width
    cdef Py_ssize_t width = k + 2
    cdef Py_ssize_t t
    cdef double lambda_l2 = c.lambda_l2, lambda_l1 = c.lambda_l1, hess_constant = c.hess_constant
    cdef double parent_score = c.parent_score
    cdef double min_samples_leaf = c.min_samples_leaf, min_child_weight = c.min_child_weight
    cdef double parent_grad = c.parent[0], parent_count = c.parent[width - 1]
    cdef double parent_hess = c.parent[1] if k == 1 else 0.0
    cdef double left_grad = 0.0, left_hess = 0.0, left_count = 0.0
    cdef double right_grad, right_hess, right_count, hess_left_total, hess_right_total, gain
    cdef double left_square, right_square, left_denominator, right_denominator
    cdef double bound
    cdef double best_gain = best.gain, best_score
    # the least H + lambda of a candidate that keeps min_child_weight
    cdef double lowest_denominator = c.min_child_weight + lambda_l2
    cdef double threshold = beat_threshold(best.score, c, lowest_denominator, noisy)
    cdef int best_bin = -1
    if initial_left != NULL:
        left_grad = initial_left[0]
        left_count = initial_left[width - 1]
        if k == 1:
            left_hess = initial_left[1]
    for t in range(n_thresholds):
        if t > 0 and feature_hist[t * width + width - 1] == 0:
            continue
        left_grad += feature_hist[t * width]
        left_count += feature_hist[t * width + width - 1]
        if k == 1:
            left_hess += feature_hist[t * width + 1]
        right_count = parent_count - left_count
        if right_count < min_samples_leaf:
            break
        if left_count < min_samples_leaf:
            continue
        right_grad = parent_grad - left_grad
        if k == 1:
            right_hess = parent_hess - left_hess
            hess_left_total = left_hess
            hess_right_total = right_hess
        else:
            hess_left_total = hess_constant * left_count
            hess_right_total = hess_constant * right_count
        if hess_left_total < min_child_weight or hess_right_total < min_child_weight:
            continue
        if l1:
            left_square = soft_threshold(left_grad, lambda_l1)
            right_square = soft_threshold(right_grad, lambda_l1)
        else:
            left_square, right_square = left_grad, right_grad
        left_square = 0.0 + left_square * left_square
        right_square = 0.0 + right_square * right_square
        left_denominator = hess_left_total + lambda_l2
        right_denominator = hess_right_total + lambda_l2
        # where the bound overflows or is NaN the candidate is scored exactly
        bound = threshold * left_denominator * right_denominator
        if (bound <= DBL_MAX
                and (left_square * right_denominator + right_square * left_denominator)
                * (1.0 + 1e-9) < bound):
            continue
        gain = 0.5 * (left_square / regularized(hess_left_total, lambda_l2)
                      + right_square / regularized(hess_right_total, lambda_l2)
                      - parent_score)
        if noisy:
            best_score = best.score
            consider(c, gain, <int>t, missing_left, left_count, best)
            if best.score != best_score:
                threshold = beat_threshold(best.score, c, lowest_denominator, True)
        elif gain > best_gain:
            best_gain = gain
            best_bin = <int>t
            best.left_count = left_count
            threshold = beat_threshold(best_gain, c, lowest_denominator, False)
    if best_bin >= 0:
        best.score = best.gain = best_gain
        best.bin = best_bin
        best.missing_left = missing_left


cdef inline void scan(const SplitContext* c, const HIST_t* feature_hist,
                      Py_ssize_t n_thresholds, const HIST_t* initial_left,
                      unsigned char missing_left, Scratch* s, Candidate* best) noexcept nogil:
    if c.top_k == 0 and c.n_outputs == 1 and c.monotone == NULL:
        # one inlined copy per case: the penalty's test cost 6% here at
        # lambda_l1 = 0, and the noise's 4% with it
        if c.noise_scale > 0.0:
            scan_thresholds_one_output(c, feature_hist, n_thresholds, initial_left,
                                       missing_left, best, c.lambda_l1 != 0.0, True)
        elif c.lambda_l1 == 0.0:
            scan_thresholds_one_output(c, feature_hist, n_thresholds, initial_left,
                                       missing_left, best, False, False)
        else:
            scan_thresholds_one_output(c, feature_hist, n_thresholds, initial_left,
                                       missing_left, best, True, False)
    else:
        scan_thresholds(c, feature_hist, n_thresholds, initial_left, missing_left, s, best)


cdef TopK* new_top_k(Py_ssize_t top_k) noexcept nogil:
    cdef TopK* sel = <TopK*> malloc(sizeof(TopK))
    sel.heap = <double*> malloc(top_k * sizeof(double))
    sel.heap_index = <Py_ssize_t*> malloc(top_k * sizeof(Py_ssize_t))
    sel.seeded = False
    return sel


cdef void free_top_k(TopK* sel) noexcept nogil:
    if sel != NULL:
        free(sel.heap)
        free(sel.heap_index)
        free(sel)


cdef CategoryScratch* new_category_scratch(Py_ssize_t n_rows, Py_ssize_t width,
                                          Py_ssize_t d) noexcept nogil:
    cdef CategoryScratch* c = <CategoryScratch*> malloc(sizeof(CategoryScratch))
    c.order = <int*> malloc(n_rows * sizeof(int))
    c.key = <double*> malloc(n_rows * sizeof(double))
    c.permuted = <HIST_t*> malloc(n_rows * width * sizeof(HIST_t))
    c.values = <double*> malloc(n_rows * d * sizeof(double))
    c.centre = <double*> malloc(d * sizeof(double))
    c.direction = <double*> malloc(d * sizeof(double))
    c.product = <double*> malloc(d * sizeof(double))
    return c


cdef void free_category_scratch(CategoryScratch* c) noexcept nogil:
    if c != NULL:
        free(c.order)
        free(c.key)
        free(c.permuted)
        free(c.values)
        free(c.centre)
        free(c.direction)
        free(c.product)
        free(c)


cdef Py_ssize_t order_categories(const SplitContext* context, const HIST_t* feature_hist,
                                 Py_ssize_t n_bins, CategoryScratch* c) noexcept nogil:
    """A categorical feature's bins (categories) of at least cat_smooth rows
    (and at least one) in c.order, sorted by their leaf values at this node,
    and their histogram rows in that order in c.permuted; returns how many.
    search_categories then tries runs from either end of the order as the
    left child's set, as LightGBM does: for one output the leaf value
    -G / (H + cat_smooth) orders them, which makes the best prefix the best
    two-group split (Fisher 1958); for several, the projection of the leaf
    vectors on their first principal direction (weighted by rows, by power
    iteration; Coppersmith et al. 1999). Other bins are in no set: their
    categories go right, as LightGBM's rare categories do."""
    cdef Py_ssize_t d = context.n_outputs, k = context.hess_width
    cdef Py_ssize_t width = d + k + 1
    cdef Py_ssize_t b, i, j, m = 0, iteration, heaviest = 0
    cdef double hessian, total_weight = 0.0, norm, key
    cdef int bin_
    for b in range(n_bins):
        if feature_hist[b * width + width - 1] > 0 \
                and feature_hist[b * width + width - 1] >= context.rules.cat_smooth:
            c.order[m] = <int>b
            m += 1
    for i in range(m):
        b = c.order[i]
        for j in range(d):
            if k == 0:
                hessian = context.hess_constant * feature_hist[b * width + width - 1]
            elif k == 1:
                hessian = feature_hist[b * width + d]
            else:
                hessian = feature_hist[b * width + d + j]
            hessian += context.rules.cat_smooth
            c.values[i * d + j] = (-feature_hist[b * width + j] / hessian
                                   if hessian > 0.0 else 0.0)
    if d == 1:
        for i in range(m):
            c.key[i] = c.values[i]
    else:
        for j in range(d):
            c.centre[j] = 0.0
        for i in range(m):
            key = feature_hist[c.order[i] * width + width - 1]  # the bin's rows weigh it
            total_weight += key
            if key > feature_hist[c.order[heaviest] * width + width - 1]:
                heaviest = i
            for j in range(d):
                c.centre[j] += key * c.values[i * d + j]
        for j in range(d):
            c.centre[j] /= total_weight
            c.direction[j] = c.values[heaviest * d + j] - c.centre[j]
        for iteration in range(10):
            norm = 0.0
            for j in range(d):
                norm += c.direction[j] * c.direction[j]
            if norm == 0.0:  # no spread: any order is as good
                c.direction[0] = 1.0
                norm = 1.0
            norm = sqrt(norm)
            for j in range(d):
                c.direction[j] /= norm
                c.product[j] = 0.0
            for i in range(m):
                key = 0.0
                for j in range(d):
                    key += (c.values[i * d + j] - c.centre[j]) * c.direction[j]
                key *= feature_hist[c.order[i] * width + width - 1]
                for j in range(d):
                    c.product[j] += key * (c.values[i * d + j] - c.centre[j])
            for j in range(d):
                c.direction[j] = c.product[j]
        for i in range(m):
            key = 0.0
            for j in range(d):
                key += (c.values[i * d + j] - c.centre[j]) * c.direction[j]
            c.key[i] = key
    # insertion sort of at most a histogram's rows, stable: ties keep bin order
    for i in range(1, m):
        key = c.key[i]
        bin_ = c.order[i]
        j = i - 1
        while j >= 0 and c.key[j] > key:
            c.key[j + 1] = c.key[j]
            c.order[j + 1] = c.order[j]
            j -= 1
        c.key[j + 1] = key
        c.order[j + 1] = bin_
    for i in range(m):
        for j in range(width):
            c.permuted[i * width + j] = feature_hist[c.order[i] * width + j]
    return m


cdef inline void try_set(const SplitContext* c, Py_ssize_t position, unsigned char side,
                         Scratch* s, Candidate* best) noexcept nogil:
    """Scores the set in s.left (missing rows included when side is 1) and
    keeps it in best when it gains more."""
    cdef double left_count = s.left[c.n_outputs + c.hess_width]
    if left_count <= 0.0 or c.parent[c.n_outputs + c.hess_width] - left_count <= 0.0:
        return  # a set leaves no child empty, even with min_samples_leaf 0
    consider(c, split_gain(c, s.left, s.right, s), <int>position, side, left_count, best)


cdef void scan_run(const SplitContext* c, const CategoryScratch* cats, Py_ssize_t m,
                   Py_ssize_t n_in_run, bint reverse, const HIST_t* initial,
                   unsigned char side, Py_ssize_t pick, Scratch* s,
                   Candidate* best) noexcept nogil:
    """The sets of search_categories that run from one end of the order
    (reverse: its last category first), as LightGBM's loop tries them: a
    category joins the set at each step; a set too small for
    min_samples_leaf or min_child_weight is skipped, one that leaves the
    other side too small ends the run, and one is scored only once the
    categories added since the last scored one hold min_data_per_group rows.
    initial: the missing row's sums (side 1) or NULL; pick >= 0 scores only
    the set of that step. best.bin is the set's last position in the run."""
    cdef Py_ssize_t d = c.n_outputs, k = c.hess_width
    cdef Py_ssize_t width = d + k + 1, i, j, t
    cdef double parent_count = c.parent[width - 1], group = 0.0
    cdef double min_right = max(c.min_samples_leaf, c.rules.min_data_per_group)
    if s.select_left != NULL:
        s.select_left.seeded = False
    if s.select_right != NULL:
        s.select_right.seeded = False
    for j in range(width):
        s.left[j] = initial[j] if initial != NULL else 0.0
    for i in range(n_in_run):
        t = m - 1 - i if reverse else i
        for j in range(width):
            s.left[j] += cats.permuted[t * width + j]
        group += cats.permuted[t * width + width - 1]
        if s.left[width - 1] < c.min_samples_leaf \
                or mean_hessian(s.left, d, k, c.hess_constant) < c.min_child_weight:
            continue
        if parent_count - s.left[width - 1] < min_right:
            break
        if group < c.rules.min_data_per_group:
            continue
        group = 0.0
        if pick < 0 or i == pick:
            try_set(c, i, side, s, best)


cdef void search_categories(const SplitContext* c, Py_ssize_t f, const HIST_t* feature_hist,
                            const HIST_t* missing, Py_ssize_t n_bins, Py_ssize_t draw,
                            Scratch* s, Candidate* best) noexcept nogil:
    """A categorical feature's best set at this node, as LightGBM chooses it,
    with the missing bin's side tried both ways as for numeric features:

    - a feature of at most max_cat_to_onehot bins sends one category left;
    - otherwise its categories of at least cat_smooth rows are ordered
      (order_categories), and the set is a run from either end of the order
      of at most max_cat_threshold of them and at most half (the other end's
      runs hold the rest), tried as scan_run does; and, when the node has
      missing rows, every ordered category against them. The children of
      such a set are scored with lambda_l2 + cat_l2 (the parent with
      lambda_l2), so that it must gain more than a threshold would.

    The set is the front of the feature's row of category_order, up to its
    position best.bin. draw >= 0 (extra trees, a draw among the feature's
    n_bins values) tries one category, or one step of each run."""
    cdef Py_ssize_t width = c.n_outputs + c.hess_width + 1
    cdef int* order_out = c.category_order + f * c.order_stride
    cdef CategoryScratch* cats = s.categories
    cdef bint has_missing = missing[width - 1] > 0
    cdef double parent_count = c.parent[width - 1]
    cdef Py_ssize_t m, i, j, t, n_in_run, pick, side
    cdef int direction
    cdef int won = -1      # the category or the direction of the best set
    cdef SplitContext set_context
    cdef Candidate trial
    if n_bins <= c.rules.max_cat_to_onehot:
        if s.select_left != NULL:
            s.select_left.seeded = False
        if s.select_right != NULL:
            s.select_right.seeded = False
        m = 0
        for t in range(n_bins):
            if feature_hist[t * width + width - 1] > 0:
                cats.order[m] = <int>t
                m += 1
        pick = -1 if draw < 0 else draw * m // n_bins
        for i in range(m):
            if pick >= 0 and i != pick:
                continue
            t = cats.order[i]
            for side in range(2 if has_missing else 1):
                for j in range(width):
                    s.left[j] = feature_hist[t * width + j] + (missing[j] if side else 0.0)
                trial.score = best.score
                best.noise_base = noise_base(f, NOISE_ONE_HOT, t)
                try_set(c, 0, <unsigned char>side, s, best)
                if best.score > trial.score:
                    won = <int>t
        if won >= 0:
            order_out[0] = won
    else:
        set_context = c[0]
        set_context.lambda_l2 = c.lambda_l2 + c.rules.cat_l2
        m = order_categories(c, feature_hist, n_bins, cats)
        n_in_run = min(c.rules.max_cat_threshold, (m + 1) // 2)
        pick = -1 if draw < 0 else draw * n_in_run // n_bins
        for direction in range(2):
            for side in range(2 if has_missing else 1):
                trial.score = best.score
                best.noise_base = noise_base(f, NOISE_RUN_REVERSED if direction else NOISE_RUN, 0)
                scan_run(&set_context, cats, m, n_in_run, direction == 1,
                         missing if side else NULL, <unsigned char>side, pick, s, best)
                if best.score > trial.score:
                    won = direction
        if has_missing and draw < 0 and m > 0:
            # the missing rows against every ordered category: no run's
            # complement, and LightGBM's missing values never split so
            for j in range(width):
                s.left[j] = 0.0
            for i in range(m):
                for j in range(width):
                    s.left[j] += cats.permuted[i * width + j]
            trial.score = best.score
            best.noise_base = noise_base(f, NOISE_ALL_CATEGORIES, 0)
            if parent_count - s.left[width - 1] >= c.rules.min_data_per_group:
                try_set(&set_context, m - 1, 0, s, best)
            if best.score > trial.score:
                won = 0
        if won >= 0:
            for i in range(m):
                order_out[i] = cats.order[m - 1 - i if won == 1 else i]
    if best.bin >= 0 and not has_missing:
        best.missing_left = best.left_count >= parent_count - best.left_count


ctypedef void (*CategorySearch)(const SplitContext*, Py_ssize_t, const HIST_t*, const HIST_t*,
                                Py_ssize_t, Py_ssize_t, Scratch*, Candidate*) noexcept nogil

# Called through this pointer, search_categories stays out of search_features'
# loop: inlined there, it made the numeric features' scans 10-20% slower
# (ab_kernel.py --kernel split).
cdef CategorySearch categories_search = search_categories


cdef struct FeatureScratch:
    # search_feature's buffers, per thread
    Scratch* scan
    Candidate* best
    HIST_t* before           # the sums of the bins before a random threshold
    HIST_t* before_missing   # the same plus the missing bin


cdef FeatureScratch new_feature_scratch(const SplitContext* context, Py_ssize_t n_hist_bins,
                                        bint random) noexcept nogil:
    cdef Py_ssize_t d = context.n_outputs
    cdef Py_ssize_t width = d + context.hess_width + 1
    cdef FeatureScratch f
    cdef Scratch* s = <Scratch*> malloc(sizeof(Scratch))
    f.scan = s
    f.best = <Candidate*> malloc(sizeof(Candidate))
    s.left = <HIST_t*> malloc(width * sizeof(HIST_t))
    s.right = <HIST_t*> malloc(width * sizeof(HIST_t))
    s.shrunk_left = NULL
    s.shrunk_right = NULL
    if context.lambda_l1 != 0.0:
        s.shrunk_left = <HIST_t*> malloc(width * sizeof(HIST_t))
        s.shrunk_right = <HIST_t*> malloc(width * sizeof(HIST_t))
    s.improvement = NULL
    s.improvement_right = NULL
    s.select_left = NULL
    s.select_right = NULL
    s.left_values = NULL
    s.right_values = NULL
    s.direction = NULL
    f.before = f.before_missing = NULL
    s.categories = NULL
    if context.categorical != NULL:
        s.categories = new_category_scratch(n_hist_bins, width, d)
    if random:
        f.before = <HIST_t*> malloc(width * sizeof(HIST_t))
        f.before_missing = <HIST_t*> malloc(width * sizeof(HIST_t))
    if context.monotone != NULL:
        s.left_values = <double*> malloc(d * sizeof(double))
        s.right_values = <double*> malloc(d * sizeof(double))
    if context.top_k > 0:
        s.improvement = <double*> malloc(d * sizeof(double))
        s.select_left = new_top_k(context.top_k)
        if not context.restricted:
            s.improvement_right = <double*> malloc(d * sizeof(double))
            s.select_right = new_top_k(context.top_k)
    return f


cdef void free_feature_scratch(FeatureScratch* f) noexcept nogil:
    cdef Scratch* s = f.scan
    free(s.left)
    free(s.right)
    free(s.shrunk_left)
    free(s.shrunk_right)
    free(s.improvement)
    free(s.improvement_right)
    free(s.left_values)
    free(s.right_values)
    free_top_k(s.select_left)
    free_top_k(s.select_right)
    free(f.before)
    free(f.before_missing)
    free_category_scratch(s.categories)
    free(s)
    free(f.best)


cdef void search_feature(const SplitContext* context, const HIST_t* hist,
                                Py_ssize_t n_hist_bins, int f, const int* n_bins_non_missing,
                                double* best_gain, int* best_bin,
                                unsigned char* best_missing_left, const int* random_bins,
                                FeatureScratch* scratch) noexcept nogil:
    """Feature f's best split into best_gain[f], best_bin[f] and
    best_missing_left[f] (see search_features)."""
    cdef Py_ssize_t d = context.n_outputs
    cdef Py_ssize_t width = d + context.hess_width + 1
    cdef Py_ssize_t missing_bin = n_hist_bins - 1
    cdef double parent_count = context.parent[width - 1]
    cdef Py_ssize_t n_bins = n_bins_non_missing[f]
    cdef const HIST_t* base = hist + f * n_hist_bins * width    # the feature's rows
    cdef const HIST_t* missing = base + missing_bin * width
    cdef const HIST_t* start = base
    cdef Candidate* best = scratch.best
    cdef Scratch* s = scratch.scan
    cdef HIST_t* before = scratch.before
    cdef HIST_t* before_missing = scratch.before_missing
    # the left side's start: before, NULL without a draw
    cdef HIST_t* initial = before if random_bins != NULL else NULL
    cdef Py_ssize_t j, t, first, n_thresholds
    # under noise a score may be below -1, so only -inf says "none"
    best.score = -INFINITY if context.noise_scale > 0.0 else -1.0
    best.gain = -1.0
    best.bin = -1
    best.missing_left = 0
    best.noise_base = noise_base(f, NOISE_THRESHOLD, 0)
    if context.monotone != NULL:
        s.direction = context.monotone + f * d
    if context.categorical != NULL and context.categorical[f]:
        categories_search(context, f, base, missing, n_bins,
                          -1 if random_bins == NULL else random_bins[f], s, best)
    else:
        first = 0 if random_bins == NULL else min(random_bins[f], max(n_bins - 2, 0))
        if random_bins != NULL:
            start = base + first * width
            for j in range(width):
                before[j] = 0.0
            for t in range(first):
                for j in range(width):
                    before[j] += base[t * width + j]
            for j in range(width):
                before_missing[j] = before[j] + missing[j]
        if missing[width - 1] > 0:
            # Missing right: every threshold including "all values left";
            # missing left: every threshold that leaves some values right.
            n_thresholds = n_bins if random_bins == NULL else (first < n_bins)
            scan(context, start, n_thresholds, initial, 0, s, best)
            n_thresholds = n_bins - 1 if random_bins == NULL else (first < n_bins - 1)
            scan(context, start, n_thresholds,
                 missing if random_bins == NULL else before_missing, 1, s, best)
        else:
            n_thresholds = n_bins - 1 if random_bins == NULL else (first < n_bins - 1)
            scan(context, start, n_thresholds, initial, 0, s, best)
            if best.bin >= 0:
                best.missing_left = best.left_count >= parent_count - best.left_count
        if best.bin >= 0:
            best.bin += <int>first
    best_gain[f] = best.score
    best_bin[f] = best.bin
    best_missing_left[f] = best.missing_left
    if context.noiseless_gain != NULL:
        context.noiseless_gain[f] = best.gain


cdef void search_features(const SplitContext* context,
                          const HIST_t* hist,
                          Py_ssize_t n_hist_bins,
                          const int* features,
                          Py_ssize_t n_features,
                          const int* n_bins_non_missing,
                          double* best_gain,
                          int* best_bin,
                          unsigned char* best_missing_left,
                          int n_threads,
                          const int* random_bins) noexcept nogil:
    """The per-feature search shared by the dense and the sparse entry points
    and the grower's loop (_grow.pyx): hist is (features, n_hist_bins,
    width), row-major. random_bins (NULL: every threshold) gives each
    feature the one threshold to try (extra trees): the scans then see the
    histogram from that bin on, one threshold long, with the bins before it
    as the left side's start."""
    search_nodes(&context, &hist, 1, n_hist_bins, features, n_features, NULL,
                 n_bins_non_missing, &best_gain, &best_bin, &best_missing_left, &random_bins,
                 n_threads, NULL, NULL)


cdef void search_nodes(const SplitContext** contexts, const HIST_t** hists, Py_ssize_t n_nodes,
                       Py_ssize_t n_hist_bins, const int* features, Py_ssize_t n_features,
                       const unsigned char** searched, const int* n_bins_non_missing,
                       double** best_gain, int** best_bin, unsigned char** best_missing_left,
                       const int** random_bins, int n_threads, FeaturePrelude prelude,
                       void* prelude_state) noexcept nogil:
    """search_features for n_nodes nodes over features, node i with
    contexts[i], hists[i], random_bins[i] and its own outputs, and only the
    features f with searched[i][f] set (searched or searched[i] NULL: all),
    a feature's searches one after the other on one thread. prelude (NULL:
    none) runs on that thread before them, given prelude_state and the
    feature: the grower builds the feature's histograms there, so that they
    are searched while in that thread's cache. The contexts differ only in
    their node's sums and bounds, and under noise its key and noiseless
    gains (one scratch a thread serves them all)."""
    cdef Py_ssize_t fi, i
    cdef FeatureScratch scratch
    cdef bint random = False
    for i in range(n_nodes):
        random = random or random_bins[i] != NULL
    # no OpenMP on one thread (see common.pxd, SERIAL_REGION)
    if n_threads > 1:
        with parallel(num_threads=n_threads):
            # per thread: a struct assigned field by field inside prange
            # would be shared between threads
            scratch = new_feature_scratch(contexts[0], n_hist_bins, random)
            for fi in prange(n_features, schedule="dynamic"):
                search_nodes_feature(contexts, hists, n_nodes, n_hist_bins, features[fi],
                                     searched, n_bins_non_missing, best_gain, best_bin,
                                     best_missing_left, random_bins, prelude, prelude_state,
                                     &scratch)
            free_feature_scratch(&scratch)
    else:
        scratch = new_feature_scratch(contexts[0], n_hist_bins, random)
        for fi in range(n_features):
            search_nodes_feature(contexts, hists, n_nodes, n_hist_bins, features[fi], searched,
                                 n_bins_non_missing, best_gain, best_bin, best_missing_left,
                                 random_bins, prelude, prelude_state, &scratch)
        free_feature_scratch(&scratch)


cdef inline void search_nodes_feature(const SplitContext** contexts, const HIST_t** hists,
                                      Py_ssize_t n_nodes, Py_ssize_t n_hist_bins, int f,
                                      const unsigned char** searched,
                                      const int* n_bins_non_missing, double** best_gain,
                                      int** best_bin, unsigned char** best_missing_left,
                                      const int** random_bins, FeaturePrelude prelude,
                                      void* prelude_state,
                                      FeatureScratch* scratch) noexcept nogil:
    cdef Py_ssize_t i
    if prelude != NULL:
        prelude(prelude_state, f)
    for i in range(n_nodes):
        if searched == NULL or searched[i] == NULL or searched[i][f]:
            search_feature(contexts[i], hists[i], n_hist_bins, f, n_bins_non_missing,
                           best_gain[i], best_bin[i], best_missing_left[i], random_bins[i],
                           scratch)


cdef void init_context(SplitContext* context, const HIST_t* parent, Py_ssize_t n_outputs,
                       Py_ssize_t hess_width, double hess_constant, double lambda_l2,
                       double lambda_l1, double min_samples_leaf, double min_child_weight,
                       Py_ssize_t top_k, bint restricted,
                       const ValueBounds* bounds) noexcept nogil:
    """Every field but parent_score; no monotone constraints or categorical
    features (the entry points add them). bounds: NULL for none."""
    context.n_outputs = n_outputs
    context.hess_width = hess_width
    context.hess_constant = hess_constant
    context.lambda_l2 = lambda_l2
    context.lambda_l1 = lambda_l1
    context.min_samples_leaf = min_samples_leaf
    context.min_child_weight = min_child_weight
    context.parent = parent
    context.top_k = top_k
    context.restricted = restricted
    context.monotone = NULL
    if bounds != NULL:
        context.bounds = bounds[0]
    else:
        context.bounds.lower = context.bounds.upper = context.bounds.anchor = NULL
        context.bounds.path_smooth = 0.0
        context.bounds.max_output = INFINITY
    context.categorical = NULL
    context.category_order = NULL
    context.noise_scale = 0.0
    context.noise_key = 0
    context.least_gain = 0.0
    context.noiseless_gain = NULL


cdef void dense_context(SplitContext* context, const HIST_t* parent, HIST_t* shrunk_parent,
                        Py_ssize_t n_outputs, Py_ssize_t hess_width, double hess_constant,
                        double lambda_l2, double lambda_l1, double min_samples_leaf,
                        double min_child_weight, const signed char* monotone,
                        const ValueBounds* bounds) noexcept nogil:
    """The context of a dense search (shrunk_parent: width scratch for the
    parent's shrunk sums when lambda_l1 > 0), under monotone constraints
    with the node's bounds when monotone is not NULL. The parent is scored
    with its values bounded as its children's are: under path_smooth, pulled
    toward its own values (LightGBM's gain shift)."""
    cdef const HIST_t* scored = l1_shrunk(parent, n_outputs, n_outputs + hess_width + 1,
                                          lambda_l1, shrunk_parent)
    init_context(context, parent, n_outputs, hess_width, hess_constant, lambda_l2, lambda_l1,
                 min_samples_leaf, min_child_weight, 0, False,
                 bounds if monotone != NULL else NULL)
    if monotone != NULL:
        context.monotone = monotone
        context.parent_score = bounded_score(scored, n_outputs, hess_width, hess_constant,
                                             lambda_l2, bounds, NULL)
    else:
        context.parent_score = score(scored, n_outputs, hess_width, hess_constant, lambda_l2)


cdef void clipped_leaf_values(const HIST_t* sums, Py_ssize_t n_outputs, Py_ssize_t hess_width,
                              double hess_constant, double lambda_l2, double lambda_l1,
                              const ValueBounds* bounds, HIST_t* shrunk,
                              double* values) noexcept nogil:
    """A node's leaf values -T(G) / (H + lambda), bounded as bounds says, into
    values (shrunk: width scratch), as grower.TreeGrower._bounded_values."""
    bounded_score(l1_shrunk(sums, n_outputs, n_outputs + hess_width + 1, lambda_l1, shrunk),
                  n_outputs, hess_width, hess_constant, lambda_l2, bounds, values)


cdef SplitContext _context(const HIST_t[::1] parent, Py_ssize_t n_outputs,
                           Py_ssize_t hess_width, double hess_constant, double lambda_l2,
                           double lambda_l1, double min_samples_leaf, double min_child_weight,
                           Py_ssize_t top_k, bint restricted,
                           const ValueBounds* bounds=NULL) except *:
    """top_k = 0 means dense: the parent scores all outputs, else its top_k;
    with bounds its values are bounded (monotone constraints, max_delta_step,
    path_smooth). parent must outlive the context, which points into it."""
    cdef SplitContext context
    if not lambda_l1 >= 0.0:
        raise ValueError(f"lambda_l1 must be >= 0, got {lambda_l1}")
    init_context(&context, &parent[0], n_outputs, hess_width, hess_constant, lambda_l2,
                 lambda_l1, min_samples_leaf, min_child_weight, top_k, restricted, bounds)
    cdef const HIST_t[::1] scored = _shrunk(parent, n_outputs, lambda_l1)
    if bounds != NULL:
        context.parent_score = bounded_score(&scored[0], n_outputs, hess_width, hess_constant,
                                             lambda_l2, bounds, NULL)
    elif top_k == 0:
        context.parent_score = score(&scored[0], n_outputs, hess_width, hess_constant,
                                     lambda_l2)
    else:
        context.parent_score = _top_k_score(&scored[0], n_outputs, hess_width, hess_constant,
                                            lambda_l2, top_k)
    return context


cdef const HIST_t[::1] _shrunk(const HIST_t[::1] sums, Py_ssize_t n_outputs, double lambda_l1):
    """sums itself, or with lambda_l1 a copy whose gradient sums are
    soft-thresholded (l1_shrunk): no allocation per search without it."""
    if lambda_l1 == 0.0:
        return sums
    cdef HIST_t[::1] out = np.empty(sums.shape[0])
    l1_shrunk(&sums[0], n_outputs, sums.shape[0], lambda_l1, &out[0])
    return out


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
                     int n_threads,
                     const signed char[:, ::1] monotone=None,
                     const double[::1] lower=None,
                     const double[::1] upper=None,
                     const double[::1] anchor=None,
                     double path_smooth=0.0,
                     double max_output=INFINITY,
                     double lambda_l1=0.0,
                     const int[::1] random_bins=None,
                     const unsigned char[::1] categorical=None,
                     double cat_smooth=10.0,
                     int[:, ::1] category_order=None,
                     double cat_l2=0.0,
                     double min_data_per_group=0.0,
                     Py_ssize_t max_cat_threshold=256,
                     Py_ssize_t max_cat_to_onehot=0,
                     double noise_scale=0.0,
                     uint64_t noise_key=0,
                     double[::1] noiseless_gain=None,
                     double least_gain=0.0):
    """For each f in features: rows in bins <= best_bin[f] go left, the missing
    bin (the last one) goes left iff best_missing_left[f]. best_gain[f] is -1
    (and best_bin[f] -1) when no split of f satisfies the constraints with a
    gain above -1; the grower only takes positive gains. When the node has no
    missing value of f, missing goes to the child with more rows. Returns the
    position in features of the best gain (the first on ties; NaN never wins),
    -1 when there is none.

    monotone (n_features, n_outputs: +1 increasing, -1 decreasing, 0 free)
    with the node's bounds lower and upper (per output) searches under
    monotone constraints: see bounded_split_gain. There, path_smooth > 0
    pulls every value toward anchor (per output; the node's own values),
    after cutting it to +-max_output (max_delta_step): see ValueBounds.
    lambda_l1 > 0 scores soft-thresholded gradient sums (l1_shrunk).

    random_bins (per feature of hist; extra trees) limits each feature to one
    threshold, "bins <= random_bins[f] go left", with each missing direction;
    it must lie in [0, max(n_bins - 2, 0)] (with no values on one side only
    the missing-value split "all values left" remains).

    categorical (per feature of hist, 1 for a categorical one) with
    category_order (out, (n_features, hist rows)): a categorical feature's
    bins go left by a set found at this node (search_categories, under the
    rules cat_smooth, cat_l2, min_data_per_group, max_cat_threshold and
    max_cat_to_onehot; the defaults here set no rule but cat_smooth's, 10,
    which smooths the order and keeps categories of fewer rows out of the
    sets), written to the front of category_order[f]: the bins
    category_order[f, :best_bin[f] + 1] go left (random_bins[f], in
    [0, n_bins - 1] for a categorical feature, draws one candidate set).

    noise_scale > 0 (random_strength) chooses by noisy scores among the
    candidates that gain more than least_gain (see SplitContext):
    best_gain[f] is then f's best score, -inf for none, the returned
    position the best score's, and noiseless_gain[f] (per feature of hist,
    required) the gain of f's chosen split."""
    cdef ValueBounds bounds
    if monotone is not None:
        if lower is None or upper is None or monotone.shape[0] != hist.shape[0] \
                or monotone.shape[1] != n_outputs or lower.shape[0] != n_outputs \
                or upper.shape[0] != n_outputs:
            raise ValueError(f"monotone must be ({hist.shape[0]}, {n_outputs}) (features, "
                             f"outputs) and lower and upper ({n_outputs},)")
        _check_smoothing(path_smooth, anchor, n_outputs, max_output)
        bounds.lower, bounds.upper = &lower[0], &upper[0]
        bounds.anchor = &anchor[0] if path_smooth > 0.0 else NULL
        bounds.path_smooth, bounds.max_output = path_smooth, max_output
    elif path_smooth != 0.0:
        raise ValueError("path_smooth searches with bounds: give monotone, lower and upper")
    cdef SplitContext context = _context(parent, n_outputs, hess_width, hess_constant,
                                         lambda_l2, lambda_l1, min_samples_leaf,
                                         min_child_weight, 0, False,
                                         &bounds if monotone is not None else NULL)
    if monotone is not None:
        context.monotone = &monotone[0, 0]
    _set_categorical(&context, hist, categorical,
                     category_rules(cat_smooth, cat_l2, min_data_per_group, max_cat_threshold,
                                    max_cat_to_onehot), category_order)
    _set_noise(&context, hist, noise_scale, noise_key, noiseless_gain, least_gain)
    cdef const int* random = _random_bins(random_bins, hist, features, n_bins_non_missing, categorical)
    with nogil:
        search_features(&context, &hist[0, 0, 0], hist.shape[1], &features[0],
                        features.shape[0], &n_bins_non_missing[0], &best_gain[0], &best_bin[0],
                        &best_missing_left[0], n_threads, random)
    return best_feature_position(&features[0], features.shape[0], &best_gain[0])


def _check_smoothing(double path_smooth, const double[::1] anchor, Py_ssize_t n_outputs,
                     double max_output):
    if not path_smooth >= 0.0 or not max_output > 0.0:
        raise ValueError(f"path_smooth must be >= 0 and max_output > 0, got {path_smooth} "
                         f"and {max_output}")
    if path_smooth > 0.0 and (anchor is None or anchor.shape[0] != n_outputs):
        raise ValueError(f"path_smooth needs an anchor value per output ({n_outputs},)")


cdef CategoryRules category_rules(double cat_smooth, double cat_l2, double min_data_per_group,
                                  Py_ssize_t max_cat_threshold,
                                  Py_ssize_t max_cat_to_onehot) except *:
    """The rules, checked: each a number >= 0, max_cat_threshold >= 1."""
    cdef CategoryRules rules
    for name, value in (("cat_smooth", cat_smooth), ("cat_l2", cat_l2),
                        ("min_data_per_group", min_data_per_group),
                        ("max_cat_to_onehot", max_cat_to_onehot)):
        if not value >= 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    if max_cat_threshold < 1:
        raise ValueError(f"max_cat_threshold must be >= 1, got {max_cat_threshold}")
    rules.cat_smooth = cat_smooth
    rules.cat_l2 = cat_l2
    rules.min_data_per_group = min_data_per_group
    rules.max_cat_threshold = max_cat_threshold
    rules.max_cat_to_onehot = max_cat_to_onehot
    return rules


cdef int _set_categorical(SplitContext* context, const HIST_t[:, :, ::1] hist,
                          const unsigned char[::1] categorical, CategoryRules rules,
                          int[:, ::1] category_order) except -1:
    """The context's categorical fields, checked (none when categorical is None)."""
    if categorical is None:
        return 0
    if category_order is None or categorical.shape[0] != hist.shape[0] \
            or category_order.shape[0] != hist.shape[0] \
            or category_order.shape[1] != hist.shape[1]:
        raise ValueError(f"categorical needs one flag per feature ({hist.shape[0]}) and "
                         f"category_order the shape ({hist.shape[0]}, {hist.shape[1]})")
    context.categorical = &categorical[0]
    context.rules = rules
    context.category_order = &category_order[0, 0]
    context.order_stride = category_order.shape[1]
    return 0


cdef int _set_noise(SplitContext* context, const HIST_t[:, :, ::1] hist, double noise_scale,
                    uint64_t noise_key, double[::1] noiseless_gain,
                    double least_gain) except -1:
    if not 0.0 <= noise_scale < INFINITY:
        raise ValueError(f"noise_scale must be finite and >= 0, got {noise_scale}")
    if not 0.0 <= least_gain < INFINITY:
        raise ValueError(f"least_gain must be finite and >= 0, got {least_gain}")
    if noise_scale == 0.0:
        return 0
    if noiseless_gain is None or noiseless_gain.shape[0] != hist.shape[0]:
        raise ValueError(f"noise_scale > 0 needs noiseless_gain, one per feature of hist "
                         f"({hist.shape[0]})")
    context.noise_scale = noise_scale
    context.noise_key = noise_key
    context.least_gain = least_gain
    context.noiseless_gain = &noiseless_gain[0]
    return 0


def noisy_level_scores(uint64_t noise_key, const double[:, :, ::1] gains, double noise_scale,
                       double parent_score, double least_gain, double[:, :, ::1] out):
    """out[f, t, m] = what the threshold candidate (feature f, "bins <= t go
    left", missing left iff m) of gain gains[f, t, m] competes with under
    random_strength, as the searches score it (consider): its gain plus
    noise, drawn under noise_key, when the gain exceeds least_gain, else
    -inf. Symmetric growth scores its level's summed gains so."""
    cdef Py_ssize_t f, t, m
    cdef double gain
    if out.shape[2] != 2 or tuple(gains.shape) != tuple(out.shape):
        raise ValueError(f"gains and out must both be (features, thresholds, 2), got "
                         f"{tuple(gains.shape)[:3]} and {tuple(out.shape)[:3]}")
    with nogil:
        for f in range(out.shape[0]):
            for t in range(out.shape[1]):
                for m in range(2):
                    gain = gains[f, t, m]
                    if not gain > least_gain:
                        out[f, t, m] = -INFINITY
                        continue
                    out[f, t, m] = gain + sqrt(noise_spread_squared(
                        noise_scale, gain, parent_score)) * split_noise(
                            noise_key, noise_counter(noise_base(f, NOISE_THRESHOLD, 0), t,
                                                     <uint64_t>m))


cdef const int* _random_bins(const int[::1] random_bins, const HIST_t[:, :, ::1] hist,
                             const int[::1] features, const int[::1] n_bins_non_missing,
                             const unsigned char[::1] categorical) except? NULL:
    """random_bins' data, checked; NULL when None. A numeric feature's draw
    is a threshold, one of its n_bins - 1; a categorical one's one of its
    n_bins (search_categories)."""
    cdef Py_ssize_t fi, f, highest
    if random_bins is None:
        return NULL
    if random_bins.shape[0] != hist.shape[0]:
        raise ValueError(f"random_bins must have one bin per feature ({hist.shape[0]}), got "
                         f"{random_bins.shape[0]}")
    for fi in range(features.shape[0]):
        f = features[fi]
        highest = n_bins_non_missing[f] - (1 if categorical is not None and categorical[f]
                                           else 2)
        if not 0 <= random_bins[f] <= max(highest, 0):
            raise ValueError(f"random_bins[{f}] = {random_bins[f]} is outside [0, "
                             f"{max(highest, 0)}]")
    return &random_bins[0]


cdef inline void fill_gain_row(const SplitContext* c, const HIST_t* feature_hist,
                               Py_ssize_t n_thresholds, const HIST_t* initial_left,
                               HIST_t* left, HIST_t* right, HIST_t* shrunk_left,
                               HIST_t* shrunk_right, double* gains) noexcept nogil:
    """gains[2 t] = the dense gain of "bins <= t go left" (the left side
    starting from initial_left, or nothing) for t < n_thresholds, where both
    children keep the constraints; other entries are left as they were."""
    cdef Py_ssize_t width = c.n_outputs + c.hess_width + 1
    cdef Py_ssize_t t, j
    for j in range(width):
        left[j] = initial_left[j] if initial_left != NULL else 0.0
    for t in range(n_thresholds):
        for j in range(width):
            left[j] += feature_hist[t * width + j]
        # The right side only shrinks as t grows: once too small, it stays so.
        if c.parent[width - 1] - left[width - 1] < c.min_samples_leaf:
            break
        if children_valid(c, left, right):
            gains[2 * t] = 0.5 * (score(l1_shrunk(left, c.n_outputs, width, c.lambda_l1,
                                                  shrunk_left),
                                        c.n_outputs, c.hess_width, c.hess_constant, c.lambda_l2)
                                  + score(l1_shrunk(right, c.n_outputs, width, c.lambda_l1,
                                                    shrunk_right),
                                          c.n_outputs, c.hess_width, c.hess_constant,
                                          c.lambda_l2)
                                  - c.parent_score)


def split_gain_table(const HIST_t[:, :, ::1] hist,
                     const int[::1] features,
                     const int[::1] n_bins_non_missing,
                     const HIST_t[::1] parent,
                     Py_ssize_t n_outputs,
                     Py_ssize_t hess_width,
                     double hess_constant,
                     double lambda_l2,
                     double min_samples_leaf,
                     double min_child_weight,
                     double[:, :, ::1] gains,
                     int n_threads,
                     double lambda_l1=0.0):
    """Every dense split of one node, for symmetric growth, which picks the
    split with the largest gain summed over the nodes of a level:
    gains[f, t, m] = the gain of "bins <= t go left, the missing bin left iff
    m" for f in features, -inf for splits that break min_samples_leaf or
    min_child_weight and for thresholds f does not have. Other features'
    entries are left as they were, so that a table filled with -inf once
    serves every node of a level. Unlike find_best_splits, a threshold after
    an empty bin gets its gain too (the same as the one before): at another
    node of the level the two differ."""
    cdef Py_ssize_t width = n_outputs + hess_width + 1
    cdef Py_ssize_t missing_bin = hist.shape[1] - 1
    cdef Py_ssize_t fi, f, n_bins, t
    cdef HIST_t* left
    cdef HIST_t* right
    cdef HIST_t* shrunk_left
    cdef HIST_t* shrunk_right
    if hist.shape[2] != width or parent.shape[0] != width:
        raise ValueError(f"histogram rows and parent must have {width} sums, got "
                         f"{hist.shape[2]} and {parent.shape[0]}")
    if gains.shape[0] != hist.shape[0] or gains.shape[1] < missing_bin or gains.shape[2] != 2:
        raise ValueError(f"gains must be ({hist.shape[0]}, >= {missing_bin}, 2), got "
                         f"({gains.shape[0]}, {gains.shape[1]}, {gains.shape[2]})")
    for fi in range(features.shape[0]):
        f = features[fi]
        if not 0 <= f < hist.shape[0] or not 0 <= n_bins_non_missing[f] <= missing_bin:
            raise ValueError(f"feature {f} or its bin count is outside the histogram")
    cdef SplitContext context = _context(parent, n_outputs, hess_width, hess_constant,
                                         lambda_l2, lambda_l1, min_samples_leaf,
                                         min_child_weight, 0, False)
    with nogil, parallel(num_threads=n_threads, use_threads_if=n_threads > 1):
        left = <HIST_t*> malloc(width * sizeof(HIST_t))
        right = <HIST_t*> malloc(width * sizeof(HIST_t))
        shrunk_left = <HIST_t*> malloc(width * sizeof(HIST_t))
        shrunk_right = <HIST_t*> malloc(width * sizeof(HIST_t))
        for fi in prange(features.shape[0], schedule="dynamic"):
            f = features[fi]
            n_bins = n_bins_non_missing[f]
            for t in range(gains.shape[1]):
                gains[f, t, 0] = -INFINITY
                gains[f, t, 1] = -INFINITY
            # Missing right: every threshold, including "all values left";
            # missing left: every threshold that leaves some values right.
            fill_gain_row(&context, &hist[f, 0, 0], n_bins, NULL, left, right, shrunk_left,
                          shrunk_right, &gains[f, 0, 0])
            fill_gain_row(&context, &hist[f, 0, 0], n_bins - 1, &hist[f, missing_bin, 0],
                          left, right, shrunk_left, shrunk_right, &gains[f, 0, 1])
        free(left)
        free(right)
        free(shrunk_left)
        free(shrunk_right)


cdef Py_ssize_t best_feature_position(const int* features, Py_ssize_t n_features,
                                      const double* best_gain) noexcept nogil:
    """The position in features of the largest gain (the first on ties), -1
    when there is none (no features, or every gain NaN): the grower's choice
    among the features, here because numpy's fancy indexing and argmax cost
    more than the search on small nodes."""
    cdef Py_ssize_t fi, best = -1
    cdef double top = -INFINITY
    for fi in range(n_features):
        if best_gain[features[fi]] > top:
            best = fi
            top = best_gain[features[fi]]
    return best


def _check_top_k(Py_ssize_t n_outputs, Py_ssize_t hess_width, Py_ssize_t top_k):
    if hess_width != 0 and hess_width != 1 and hess_width != n_outputs:
        raise ValueError(f"hess_width must be 0, 1 or n_outputs={n_outputs}, got {hess_width}")
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")


def find_best_sparse_splits(const HIST_t[:, :, ::1] hist,
                            const int[::1] features,
                            const int[::1] n_bins_non_missing,
                            const HIST_t[::1] parent,
                            Py_ssize_t n_outputs,
                            Py_ssize_t hess_width,
                            double hess_constant,
                            double lambda_l2,
                            double min_samples_leaf,
                            double min_child_weight,
                            Py_ssize_t top_k,
                            bint restricted,
                            double[::1] best_gain,
                            int[::1] best_bin,
                            unsigned char[::1] best_missing_left,
                            int n_threads,
                            double lambda_l1=0.0,
                            const int[::1] random_bins=None,
                            const unsigned char[::1] categorical=None,
                            double cat_smooth=10.0,
                            int[:, ::1] category_order=None,
                            double cat_l2=0.0,
                            double min_data_per_group=0.0,
                            Py_ssize_t max_cat_threshold=256,
                            Py_ssize_t max_cat_to_onehot=0,
                            double noise_scale=0.0,
                            uint64_t noise_key=0,
                            double[::1] noiseless_gain=None,
                            double least_gain=0.0):
    """Sparse top-k split search (GBDT-MO Algorithms 5 and 6). Same arguments,
    outputs, thresholds, missing-value handling, constraints and tie-breaking as
    find_best_splits (random_bins, categorical features and random_strength's
    noise included), plus top_k (>= 1) and restricted.

    With imp_j(node) = G_j^2 / (H_j + lambda) and topk(v) = the sum of the top_k
    largest entries of v:

    - unrestricted (restricted=False, Algorithm 5): each child keeps its own
      top_k outputs;
          gain = 0.5 * (topk(imp(left)) + topk(imp(right)) - topk(imp(parent)))
    - restricted (restricted=True, Algorithm 6): both children keep one set S
      of top_k outputs, the one with the largest imp_j(left) + imp_j(right);
          gain = 0.5 * (topk(imp(left) + imp(right)) - topk(imp(parent)))

    The parent score in both modes is topk(imp(parent)), computed here from
    parent: the objective of the parent as a sparse leaf with its own top_k
    outputs. It is one constant per node, so it changes no choice inside the
    node, only the gain's level (best-first order, min_gain).

    The gain is the raw sum; the caller compares gain / min(top_k, n_outputs)
    with min_gain (the gain averaged over the kept outputs, paper appendix B),
    where the dense split divides by n_outputs. min_child_weight is the mean
    hessian over all n_outputs, as in the dense search.

    When top_k >= n_outputs every output is kept and this is exactly
    find_best_splits (same call, bit-identical results). lambda_l1 as there."""
    _check_top_k(n_outputs, hess_width, top_k)
    if hist.shape[2] != n_outputs + hess_width + 1 or parent.shape[0] != hist.shape[2]:
        raise ValueError(f"hist rows and parent must have n_outputs + hess_width + 1 = "
                         f"{n_outputs + hess_width + 1} entries, got {hist.shape[2]} and "
                         f"{parent.shape[0]}")
    if top_k >= n_outputs:
        return find_best_splits(hist, features, n_bins_non_missing, parent, n_outputs,
                                hess_width, hess_constant, lambda_l2, min_samples_leaf,
                                min_child_weight, best_gain, best_bin, best_missing_left,
                                n_threads, lambda_l1=lambda_l1, random_bins=random_bins,
                                categorical=categorical, cat_smooth=cat_smooth,
                                category_order=category_order, cat_l2=cat_l2,
                                min_data_per_group=min_data_per_group,
                                max_cat_threshold=max_cat_threshold,
                                max_cat_to_onehot=max_cat_to_onehot, noise_scale=noise_scale,
                                noise_key=noise_key, noiseless_gain=noiseless_gain,
                                least_gain=least_gain)
    cdef SplitContext context = _context(parent, n_outputs, hess_width, hess_constant,
                                         lambda_l2, lambda_l1, min_samples_leaf,
                                         min_child_weight, top_k, restricted)
    _set_categorical(&context, hist, categorical,
                     category_rules(cat_smooth, cat_l2, min_data_per_group, max_cat_threshold,
                                    max_cat_to_onehot), category_order)
    _set_noise(&context, hist, noise_scale, noise_key, noiseless_gain, least_gain)
    cdef const int* random = _random_bins(random_bins, hist, features, n_bins_non_missing, categorical)
    with nogil:
        search_features(&context, &hist[0, 0, 0], hist.shape[1], &features[0],
                        features.shape[0], &n_bins_non_missing[0], &best_gain[0], &best_bin[0],
                        &best_missing_left[0], n_threads, random)
    return best_feature_position(&features[0], features.shape[0], &best_gain[0])


cdef double _top_k_score(const HIST_t* sums, Py_ssize_t d, Py_ssize_t k,
                         double hess_constant, double lambda_l2, Py_ssize_t top_k) except -1.0:
    """The sparse score of one node: what select_top_k returns for its sums."""
    cdef Py_ssize_t* indices = <Py_ssize_t*> malloc(top_k * sizeof(Py_ssize_t))
    cdef double total
    if indices == NULL:
        raise MemoryError()
    try:
        total = _select(sums, NULL, d, k, hess_constant, lambda_l2, top_k, indices)
    finally:
        free(indices)
    return total


cdef double _select(const HIST_t* first, const HIST_t* second, Py_ssize_t d, Py_ssize_t k,
                    double hess_constant, double lambda_l2, Py_ssize_t top_k,
                    Py_ssize_t* out) except -1.0:
    """out = the top_k outputs by imp(first) (+ imp(second) when second != NULL), in
    increasing index order; returns the sum of their keys."""
    cdef double* values = <double*> malloc((d + top_k) * sizeof(double))
    cdef Py_ssize_t* heap_index = <Py_ssize_t*> malloc(top_k * sizeof(Py_ssize_t))
    cdef Py_ssize_t i
    cdef double total = 0.0
    if values == NULL or heap_index == NULL:
        free(values)
        free(heap_index)
        raise MemoryError()
    if second == NULL:
        improvements(first, d, k, hess_constant, lambda_l2, values)
    else:
        paired_improvements(first, second, d, k, hess_constant, lambda_l2, values)
    top_k_indices(values, d, top_k, values + d, heap_index, out)
    for i in range(top_k):
        total += values[out[i]]
    free(values)
    free(heap_index)
    return total


def _check_selection(Py_ssize_t sums_size, Py_ssize_t n_outputs, Py_ssize_t hess_width,
                     Py_ssize_t top_k, Py_ssize_t out_size):
    _check_top_k(n_outputs, hess_width, top_k)
    if top_k > n_outputs:
        raise ValueError(f"top_k must be <= n_outputs={n_outputs}, got {top_k}")
    if sums_size != n_outputs + hess_width + 1:
        raise ValueError(f"a sums row must have n_outputs + hess_width + 1 = "
                         f"{n_outputs + hess_width + 1} entries, got {sums_size}")
    if out_size != top_k:
        raise ValueError(f"out_indices must have top_k={top_k} entries, got {out_size}")


def select_top_k(const HIST_t[::1] sums,
                 Py_ssize_t n_outputs,
                 Py_ssize_t hess_width,
                 double hess_constant,
                 double lambda_l2,
                 Py_ssize_t top_k,
                 Py_ssize_t[::1] out_indices,
                 double lambda_l1=0.0):
    """The outputs an unrestricted sparse leaf keeps. sums is one node's row in the
    histogram layout; writes to out_indices (np.intp, length top_k, 1 <= top_k <=
    n_outputs) the top_k outputs j with the largest G_j^2 / (H_j + lambda), in
    increasing index order; equal improvements go to the smaller index. Returns
    the sum of their improvements (the leaf's sparse score, as used by
    find_best_sparse_splits; lambda_l1 as there)."""
    _check_selection(sums.shape[0], n_outputs, hess_width, top_k, out_indices.shape[0])
    cdef const HIST_t[::1] scored = _shrunk(sums, n_outputs, lambda_l1)
    return _select(&scored[0], NULL, n_outputs, hess_width, hess_constant, lambda_l2, top_k,
                   &out_indices[0])


def select_top_k_shared(const HIST_t[::1] left_sums,
                        const HIST_t[::1] right_sums,
                        Py_ssize_t n_outputs,
                        Py_ssize_t hess_width,
                        double hess_constant,
                        double lambda_l2,
                        Py_ssize_t top_k,
                        Py_ssize_t[::1] out_indices,
                        double lambda_l1=0.0):
    """The one set of outputs both children of a restricted sparse split keep: the
    top_k outputs j with the largest imp_j(left) + imp_j(right), in increasing
    index order, ties to the smaller index (same contract as select_top_k).
    Returns the sum of their keys (twice the gain plus the parent score)."""
    _check_selection(left_sums.shape[0], n_outputs, hess_width, top_k, out_indices.shape[0])
    if right_sums.shape[0] != left_sums.shape[0]:
        raise ValueError("left_sums and right_sums must have the same length")
    cdef const HIST_t[::1] scored_left = _shrunk(left_sums, n_outputs, lambda_l1)
    cdef const HIST_t[::1] scored_right = _shrunk(right_sums, n_outputs, lambda_l1)
    return _select(&scored_left[0], &scored_right[0], n_outputs, hess_width, hess_constant,
                   lambda_l2, top_k, &out_indices[0])


def node_values(const HIST_t[:, ::1] sums, Py_ssize_t n_outputs, Py_ssize_t hess_width,
                double hess_constant, double lambda_l2, double lambda_l1,
                const double[::1] extra_l2, const double[:, ::1] lower,
                const double[:, ::1] upper, double[:, ::1] values, double[:, ::1] scores,
                const double[:, ::1] anchor=None, double path_smooth=0.0,
                double max_output=INFINITY):
    """Per node (a row of [G, H, count] sums) and output j: values[r, j] = the
    leaf value -T(G_j) / (H_j + lambda + extra_l2[r]) (T: soft_threshold; 0
    where that denominator is 0), clipped to [lower[r, j], upper[r, j]], and,
    when scores has rows, scores[r, j] = twice the objective decrease that
    value brings, -(2 T(G_j) w_j + (H_j + lambda) w_j^2), which is T(G_j)^2 /
    (H_j + lambda) unclipped. extra_l2 may be empty (0 for every node);
    lower and upper have no columns without bounds. With path_smooth > 0
    (and bounds) each value is first cut to +-max_output and pulled toward
    anchor[r, j] as ValueBounds says. One pass over a tree's nodes: the same
    in numpy took 20 calls, as much as a tenth of a round on small data."""
    cdef Py_ssize_t n = sums.shape[0], d = n_outputs, r, j
    cdef bint bounded = lower.shape[1] > 0, with_scores = scores.shape[0] > 0
    cdef double t, h, v, extra
    if sums.shape[1] != d + hess_width + 1 or hess_width not in (0, 1, d):
        raise ValueError(f"sums must be (n, {d} + hess_width + 1) with hess_width 0, 1 or "
                         f"{d}; got {sums.shape[1]} columns and hess_width {hess_width}")
    if values.shape[0] != n or values.shape[1] != d or (
            with_scores and (scores.shape[0] != n or scores.shape[1] != d)):
        raise ValueError(f"values (and scores, when given) must be ({n}, {d})")
    if extra_l2.shape[0] not in (0, n):
        raise ValueError(f"extra_l2 must have {n} entries or none, got {extra_l2.shape[0]}")
    if bounded and not (lower.shape[0] == upper.shape[0] == n and lower.shape[1]
                        == upper.shape[1] == d):
        raise ValueError(f"lower and upper must be ({n}, {d}) or have no columns")
    if path_smooth != 0.0 and not (bounded and path_smooth > 0.0 and max_output > 0.0
                                   and anchor is not None and anchor.shape[0] == n
                                   and anchor.shape[1] == d):
        raise ValueError(f"path_smooth > 0 needs bounds, max_output > 0 and anchor ({n}, {d})")
    with nogil:
        for r in range(n):
            extra = extra_l2[r] if extra_l2.shape[0] else 0.0
            for j in range(d):
                t = sums[r, j]
                if lambda_l1 != 0.0:
                    # numpy's sign(G) max(|G| - l1, 0), to the sign of a zero,
                    # as grower.soft_threshold
                    t = ((t > 0.0) - (t < 0.0)) * max(fabs(t) - lambda_l1, 0.0)
                if hess_width == 0:
                    h = hess_constant * sums[r, d]
                else:
                    h = sums[r, d + (j if hess_width > 1 else 0)]
                h = h + lambda_l2 + extra
                v = -t / h if h != 0.0 else 0.0
                if path_smooth > 0.0:
                    v = smoothed(min(max(v, -max_output), max_output), sums[r, d + hess_width],
                                 anchor[r, j], path_smooth)
                if bounded:
                    # np.clip's order: a bound equal to v (signed zeros) wins
                    v = v if v > lower[r, j] or v != v else lower[r, j]
                    v = v if v < upper[r, j] or v != v else upper[r, j]
                values[r, j] = v
                if with_scores:
                    scores[r, j] = -(2.0 * t * v + h * (v * v)) if bounded else -t * v
