"""GBDT-sparse (Si et al. 2017) kernels: split search on sparse gradient rows
and top-k prediction, with work proportional to the non-zeros touched, not to
the number of labels L.

Gradients are CSR-like: row r's entries are grad_label / grad / hess
[grad_indptr[r]:grad_indptr[r + 1]]; a label without an entry has gradient
and hessian 0 in that row.

Per label q, imp_q = G_q^2 / (H_q + lambda). A child keeps its top_k labels
(the unrestricted sparse split of GBDT-MO, Algorithm 5), so

    gain = 0.5 * (topk(imp(left)) + topk(imp(right)) - parent_score)

which is what _split.find_best_sparse_splits computes from dense histograms;
here the histograms are never built: each thread sorts the node's rows by the
feature's bin and adds their sparse gradient rows into an L-sized accumulator
(with a list of the labels touched), bin after bin. The right side's labels
that the left has not touched keep the parent's sums, so its top k comes from
the touched labels plus the head of the parent's labels sorted by imp.

Sparse X comes as binning.SparseBinned: a sparse feature's rows outside its
zero bin are listed with their bins. A search first sorts its node's rows'
entries by column (from SparseBinned.by_row, in the node's entries, not
the columns'), and a sparse feature's sort then reads its slice; when the
zero bin is bin 0 and holds most of the node's rows, they are never placed
(see sort_rows_by_bin), so such a feature costs its entries in the node.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

import numpy as np

from .common cimport G_H_t, X_BINNED_t, is_bin_of, soft_threshold, uint8_t, uint16_t


cdef inline double imp(double g, double h, double lambda_l2, double lambda_l1) noexcept nogil:
    # H + lambda = 0 (no hessian, lambda 0) adds nothing, as in _split.regularized;
    # the gradient sum is soft-thresholded by lambda_l1, as in _split.l1_shrunk
    # (behind its own test: folded into the common path it cost 24% at 0).
    cdef double total = h + lambda_l2
    if total == 0.0:
        return 0.0
    if lambda_l1 != 0.0:
        g = soft_threshold(g, lambda_l1)
    return g * g / total


cdef struct Heap:
    # An indexed max-heap of labels by key: pos[label] is its place in label_at.
    # Keys in heap order beside the labels, so sifting reads adjacent memory
    # instead of a key per label scattered over L.
    int* label_at            # size entries
    double* key              # size entries: the key of label_at[i]
    int* pos                 # L
    Py_ssize_t size


cdef inline void heap_move(Heap* h, Py_ssize_t pos, int label, double x) noexcept nogil:
    """Sifts label, whose key is now x (or new at pos), up or down to its place."""
    cdef Py_ssize_t parent, child
    while pos > 0:
        parent = (pos - 1) >> 1
        if h.key[parent] >= x:
            break
        h.label_at[pos] = h.label_at[parent]
        h.key[pos] = h.key[parent]
        h.pos[h.label_at[pos]] = pos
        pos = parent
    while True:
        child = 2 * pos + 1
        if child >= h.size:
            break
        if child + 1 < h.size and h.key[child + 1] > h.key[child]:
            child += 1
        if h.key[child] <= x:
            break
        h.label_at[pos] = h.label_at[child]
        h.key[pos] = h.key[child]
        h.pos[h.label_at[pos]] = pos
        pos = child
    h.label_at[pos] = label
    h.key[pos] = x
    h.pos[label] = pos


cdef inline Py_ssize_t heap_top(const Heap* h, Py_ssize_t top_k, double* out,
                                Py_ssize_t* frontier) noexcept nogil:
    """The top_k largest keys into out, largest first (fewer when the heap is
    smaller): a best-first walk from the root with a small max-heap `frontier`
    of heap positions, O(top_k log top_k)."""
    cdef Py_ssize_t n = 0, m = 0, pos, i, child, parent, c
    cdef double x
    if h.size == 0:
        return 0
    frontier[0] = 0
    m = 1
    while n < top_k and m > 0:
        pos = frontier[0]
        out[n] = h.key[pos]
        n += 1
        # pop the frontier's root, then push pos's children
        m -= 1
        frontier_sift_down(h, frontier, m, frontier[m])
        for c in range(2):
            child = 2 * pos + 1 + c
            if child < h.size:
                i = m
                m += 1
                x = h.key[child]
                while i > 0:
                    parent = (i - 1) >> 1
                    if h.key[frontier[parent]] >= x:
                        break
                    frontier[i] = frontier[parent]
                    i = parent
                frontier[i] = child
    return n


cdef inline void frontier_sift_down(const Heap* h, Py_ssize_t* frontier, Py_ssize_t m,
                                    Py_ssize_t item) noexcept nogil:
    cdef Py_ssize_t pos = 0, child
    cdef double x
    if m == 0:
        return
    x = h.key[item]
    while True:
        child = 2 * pos + 1
        if child >= m:
            break
        if child + 1 < m and h.key[frontier[child + 1]] > h.key[frontier[child]]:
            child += 1
        if h.key[frontier[child]] <= x:
            break
        frontier[pos] = frontier[child]
        pos = child
    frontier[pos] = item


cdef struct Thread:
    double* left_grad        # L, valid where stamp == current
    double* left_hess        # L
    double* parent_grad      # L, valid for the node's labels
    double* parent_hess      # L
    int* stamp               # L: the scan that last touched the label
    int* dirty_stamp         # L: the bin that last changed the label
    int* dirty               # labels changed by the current bin
    Py_ssize_t n_dirty
    int current
    int current_bin
    Heap left                # touched labels by imp(left)
    Heap right               # touched labels by imp(parent - left)
    int* rank                # L: a parent label's place in parent_sorted
    Py_ssize_t* next_untouched   # n_parent + 1: a linked list of the untouched
    Py_ssize_t* prev_untouched   # parent labels in parent_sorted order; n_parent = end
    Py_ssize_t* frontier     # 2 top_k + 2
    double* top_left         # top_k
    double* top_right        # top_k
    Py_ssize_t* order        # node rows sorted by bin
    Py_ssize_t* outside_bin0 # the node rows not in bin 0, in row order
    Py_ssize_t* bin_start    # missing_bin + 2
    uint16_t* node_bins      # a sparse column's bin of each node row, when all are placed


cdef struct Columns:
    # Where a feature's bins are read: row f of dense (features x rows), or
    # with sparse X (is_sparse not NULL, see binning.SparseBinned) the dense
    # features' row column_of[f], or for sparse column s = column_of[f] the
    # node's rows it lists, entry_row[entry_start[s]:entry_start[s + 1]]
    # (places in the node's rows, increasing), and their bins entry_bin[...].
    # The bins are 16-bit when wide_bins, else 8-bit: find_best_sparse_output_splits
    # sets it from the dtype its binned data was specialised for.
    const void* dense
    Py_ssize_t n_rows
    const unsigned char* is_sparse
    const int* column_of
    const void* zero_bin
    const long long* entry_start
    const Py_ssize_t* entry_row
    const void* entry_bin
    bint wide_bins


cdef struct Node:
    Py_ssize_t n_node_rows
    Py_ssize_t top_k
    double lambda_l2
    double lambda_l1
    double min_samples_leaf
    double min_child_weight
    double n_labels
    double parent_score
    double parent_hess_total
    Py_ssize_t n_parent_labels
    # the node's rows and the gradients' entries (see the module), and the
    # parent's imp in decreasing order: read by every scan of every feature
    const unsigned int* rows
    const long long* grad_indptr
    const int* grad_label
    const G_H_t* grad
    const G_H_t* hess
    const double* parent_sorted_imp


cdef inline double side_sums(Thread* t, const Node* c, double* right_score) noexcept nogil:
    """topk(imp(left)); right_score gets topk(imp(parent - left)): the best
    touched labels merged with the best untouched ones, which keep the
    parent's sums and head the linked list of untouched labels."""
    cdef Py_ssize_t i, n_left, n_right, taken = 0, r
    cdef double total = 0.0
    n_left = heap_top(&t.left, c.top_k, t.top_left, t.frontier)
    for i in range(n_left):
        total += t.top_left[i]
    n_right = heap_top(&t.right, c.top_k, t.top_right, t.frontier)
    right_score[0] = 0.0
    i = 0
    r = t.next_untouched[c.n_parent_labels]
    while taken < c.top_k and (i < n_right or r != c.n_parent_labels):
        if r == c.n_parent_labels or (i < n_right
                                      and t.top_right[i] >= c.parent_sorted_imp[r]):
            right_score[0] += t.top_right[i]
            i += 1
        else:
            right_score[0] += c.parent_sorted_imp[r]
            r = t.next_untouched[r]
        taken += 1
    return total


cdef inline void add_rows(Thread* t, const Node* c, Py_ssize_t first, Py_ssize_t last,
                          double* hess_total) noexcept nogil:
    cdef Py_ssize_t i, e
    cdef unsigned int row
    cdef int label
    for i in range(first, last):
        row = c.rows[t.order[i]]
        for e in range(c.grad_indptr[row], c.grad_indptr[row + 1]):
            label = c.grad_label[e]
            if t.stamp[label] != t.current:
                t.stamp[label] = t.current
                t.left_grad[label] = 0.0
                t.left_hess[label] = 0.0
                t.left.pos[label] = -1  # not in the heaps yet
            if t.dirty_stamp[label] != t.current_bin:
                t.dirty_stamp[label] = t.current_bin
                t.dirty[t.n_dirty] = label
                t.n_dirty += 1
            t.left_grad[label] += c.grad[e]
            t.left_hess[label] += c.hess[e]
            hess_total[0] += c.hess[e]


cdef inline void update_heaps(Thread* t, const Node* c) noexcept nogil:
    """New keys for the labels the last rows changed; a newly touched label
    enters both heaps and leaves the untouched list."""
    cdef Py_ssize_t i, r
    cdef int label
    cdef double left_key, right_key
    for i in range(t.n_dirty):
        label = t.dirty[i]
        left_key = imp(t.left_grad[label], t.left_hess[label], c.lambda_l2, c.lambda_l1)
        right_key = imp(t.parent_grad[label] - t.left_grad[label],
                        t.parent_hess[label] - t.left_hess[label], c.lambda_l2,
                        c.lambda_l1)
        if t.left.pos[label] < 0:
            r = t.rank[label]
            t.next_untouched[t.prev_untouched[r]] = t.next_untouched[r]
            t.prev_untouched[t.next_untouched[r]] = t.prev_untouched[r]
            t.left.size += 1
            heap_move(&t.left, t.left.size - 1, label, left_key)
            t.right.size += 1
            heap_move(&t.right, t.right.size - 1, label, right_key)
        else:
            heap_move(&t.left, t.left.pos[label], label, left_key)
            heap_move(&t.right, t.right.pos[label], label, right_key)
    t.n_dirty = 0
    t.current_bin += 1


cdef inline void start_scan(Thread* t, const Node* c) noexcept nogil:
    """Nothing accumulated, every parent label untouched (n_parent: the list's end)."""
    cdef Py_ssize_t r, n_parent = c.n_parent_labels
    t.current += 1
    t.current_bin += 1
    t.n_dirty = 0
    t.left.size = 0
    t.right.size = 0
    for r in range(n_parent + 1):
        t.next_untouched[r] = r + 1 if r < n_parent else 0
        t.prev_untouched[r] = r - 1 if r > 0 else n_parent


cdef inline bint weighs_enough(const Node* c, double side_hess_total) noexcept nogil:
    """Both sides keep min_child_weight, the mean hessian over all L labels (as
    in the dense search); side_hess_total is either side's."""
    return not (side_hess_total / c.n_labels < c.min_child_weight or
                (c.parent_hess_total - side_hess_total) / c.n_labels < c.min_child_weight)


cdef inline double candidate_gain(Thread* t, const Node* c) noexcept nogil:
    """The gain of the candidate whose one side the accumulator holds (the
    other is the parent minus it), with the heaps brought up to date."""
    cdef double held, other
    update_heaps(t, c)
    held = side_sums(t, c, &other)
    return 0.5 * (held + other - c.parent_score)


cdef inline void keep_if_better(double gain, Py_ssize_t b, bint missing_left, double left_count,
                                double* best_gain, int* best_bin,
                                unsigned char* best_missing_left,
                                double* best_left_count) noexcept nogil:
    if gain > best_gain[0]:
        best_gain[0] = gain
        best_bin[0] = <int>b
        best_missing_left[0] = missing_left
        best_left_count[0] = left_count


cdef inline void sort_rows_by_bin(Thread* t, const Node* c, const Columns* x, Py_ssize_t f,
                                  Py_ssize_t n_bins, Py_ssize_t missing_bin) noexcept nogil:
    """sort_rows_of_width on x's bins, 16-bit or 8-bit."""
    if x.wide_bins:
        sort_rows_of_width(t, c, x, <const uint16_t*> x.dense, <const uint16_t*> x.zero_bin,
                           <const uint16_t*> x.entry_bin, f, n_bins, missing_bin)
    else:
        sort_rows_of_width(t, c, x, <const uint8_t*> x.dense, <const uint8_t*> x.zero_bin,
                           <const uint8_t*> x.entry_bin, f, n_bins, missing_bin)


cdef inline void sort_rows_of_width(Thread* t, const Node* c, const Columns* x,
                                    const X_BINNED_t* dense, const X_BINNED_t* zero_bins,
                                    const X_BINNED_t* entry_bins, Py_ssize_t f,
                                    Py_ssize_t n_bins, Py_ssize_t missing_bin) noexcept nogil:
    """A stable counting sort of the node's rows (places in c.rows) by feature
    f's bin into t.order, bin b's at t.bin_start[b]... When bin 0 holds most
    of them, scan_either scans from the top, which never reads bin 0's rows
    when there is a threshold above it (n_bins > 1): only the others are
    placed (a sparse feature's few). Rows outside bin 0 come in row order,
    from the node's rows or a sparse column's listed ones, so both layouts
    sort alike."""
    cdef Py_ssize_t b, r, placed, n_outside = 0, n = c.n_node_rows, s = 0
    cdef bint sparse = x.is_sparse != NULL and x.is_sparse[f]
    cdef const X_BINNED_t* column = NULL
    cdef const Py_ssize_t* outside = t.outside_bin0
    cdef const X_BINNED_t* outside_bins = NULL
    cdef X_BINNED_t zero = 0
    for b in range(missing_bin + 2):
        t.bin_start[b] = 0
    if sparse:
        s = x.column_of[f]
        zero = zero_bins[s]
        outside = x.entry_row + x.entry_start[s]
        outside_bins = entry_bins + x.entry_start[s]
        n_outside = x.entry_start[s + 1] - x.entry_start[s]
        for placed in range(n_outside):
            t.bin_start[outside_bins[placed] + 1] += 1
        t.bin_start[zero + 1] += n - n_outside
    else:
        column = dense + (f if x.is_sparse == NULL else x.column_of[f]) * x.n_rows
        for r in range(n):
            b = column[c.rows[r]]
            t.bin_start[b + 1] += 1
            if b != 0:
                t.outside_bin0[n_outside] = r
                n_outside = n_outside + 1
    for b in range(missing_bin + 1):
        t.bin_start[b + 1] += t.bin_start[b]
    if zero == 0 and 2 * (n - n_outside) > n and n_bins > 1:
        for placed in range(n_outside):
            r = outside[placed]
            if sparse:
                b = outside_bins[placed]
            else:
                b = column[c.rows[r]]
            t.order[t.bin_start[b]] = r
            t.bin_start[b] += 1
        t.bin_start[0] += n - n_outside
    else:
        if sparse:  # every row placed: the column's bins of the node's rows first
            for r in range(n):
                t.node_bins[r] = zero
            for placed in range(n_outside):
                t.node_bins[outside[placed]] = outside_bins[placed]
        for r in range(n):
            b = t.node_bins[r] if sparse else column[c.rows[r]]
            t.order[t.bin_start[b]] = r
            t.bin_start[b] += 1
    for b in range(missing_bin, 0, -1):
        t.bin_start[b] = t.bin_start[b - 1]
    t.bin_start[0] = 0


cdef inline void scan_from_the_top(Thread* t, const Node* c, Py_ssize_t n_thresholds,
                                   Py_ssize_t n_bins, bint with_missing, Py_ssize_t missing_bin,
                                   double* best_gain, int* best_bin,
                                   unsigned char* best_missing_left,
                                   double* best_left_count) noexcept nogil:
    """scan's candidates with the right side accumulated instead, bins from the
    top down: far fewer entries when most rows sit in the low bins (a sparse
    binary feature's 0). The gain is symmetric in the sides, so the heaps
    serve as they are; the smallest threshold wins ties, as in scan."""
    cdef Py_ssize_t b
    cdef double right_count = 0.0, right_hess_total = 0.0, gain
    cdef double parent_count = c.n_node_rows, scan_gain = -INFINITY, scan_left_count = 0.0
    cdef int scan_bin = -1
    start_scan(t, c)
    if not with_missing:
        add_rows(t, c, t.bin_start[missing_bin], t.bin_start[missing_bin + 1], &right_hess_total)
        right_count += t.bin_start[missing_bin + 1] - t.bin_start[missing_bin]
    for b in range(n_bins - 1, n_thresholds - 1, -1):  # bins right of every threshold
        add_rows(t, c, t.bin_start[b], t.bin_start[b + 1], &right_hess_total)
        right_count += t.bin_start[b + 1] - t.bin_start[b]
    for b in range(n_thresholds - 1, -1, -1):
        if b < n_thresholds - 1:
            add_rows(t, c, t.bin_start[b + 1], t.bin_start[b + 2], &right_hess_total)
            right_count += t.bin_start[b + 2] - t.bin_start[b + 1]
        if b > 0 and t.bin_start[b + 1] == t.bin_start[b]:
            continue  # the partition of b - 1, which comes next
        if right_count < c.min_samples_leaf:
            continue
        if parent_count - right_count < c.min_samples_leaf:
            break  # the left side only shrinks from here
        if not weighs_enough(c, right_hess_total):
            continue
        gain = candidate_gain(t, c)
        if gain >= scan_gain:
            scan_gain = gain
            scan_bin = <int>b
            scan_left_count = parent_count - right_count
    if scan_bin >= 0 and scan_gain > best_gain[0]:
        best_gain[0] = scan_gain
        best_bin[0] = scan_bin
        best_missing_left[0] = with_missing
        best_left_count[0] = scan_left_count


cdef inline void scan_either(Thread* t, const Node* c, Py_ssize_t n_thresholds,
                             Py_ssize_t n_bins, bint with_missing, Py_ssize_t missing_bin,
                             double* best_gain, int* best_bin,
                             unsigned char* best_missing_left,
                             double* best_left_count) noexcept nogil:
    """scan, or scan_from_the_top when more than half the rows are in bin 0."""
    if 2 * (t.bin_start[1] - t.bin_start[0]) > c.n_node_rows:
        scan_from_the_top(t, c, n_thresholds, n_bins, with_missing, missing_bin, best_gain,
                          best_bin, best_missing_left, best_left_count)
    else:
        scan(t, c, n_thresholds, with_missing, missing_bin, best_gain, best_bin, best_missing_left,
             best_left_count)


cdef inline void scan(Thread* t, const Node* c, Py_ssize_t n_thresholds, bint with_missing,
                      Py_ssize_t missing_bin,
                      double* best_gain, int* best_bin, unsigned char* best_missing_left,
                      double* best_left_count) noexcept nogil:
    """Tries "bins <= b go left" for b < n_thresholds, missing rows left iff
    with_missing; the same candidates, order and constraints as _split.scan_thresholds."""
    cdef Py_ssize_t b
    cdef double left_count = 0.0, left_hess_total = 0.0
    cdef double parent_count = c.n_node_rows
    start_scan(t, c)
    if with_missing:
        add_rows(t, c, t.bin_start[missing_bin], t.bin_start[missing_bin + 1], &left_hess_total)
        left_count += t.bin_start[missing_bin + 1] - t.bin_start[missing_bin]
    for b in range(n_thresholds):
        if b > 0 and t.bin_start[b + 1] == t.bin_start[b]:
            continue
        add_rows(t, c, t.bin_start[b], t.bin_start[b + 1], &left_hess_total)
        left_count += t.bin_start[b + 1] - t.bin_start[b]
        if parent_count - left_count < c.min_samples_leaf:
            break
        if left_count < c.min_samples_leaf:
            continue
        if not weighs_enough(c, left_hess_total):
            continue
        keep_if_better(candidate_gain(t, c), b, with_missing, left_count,
                       best_gain, best_bin, best_missing_left, best_left_count)


cdef inline void evaluate_threshold(Thread* t, const Node* c, Py_ssize_t b, Py_ssize_t n_bins,
                                    bint missing_left, Py_ssize_t missing_bin,
                                    double* best_gain, int* best_bin,
                                    unsigned char* best_missing_left,
                                    double* best_left_count) noexcept nogil:
    """extra_trees: the one candidate "bins <= b go left", missing rows left iff
    missing_left, under scan's constraints (an empty bin b included, as
    _split's search of a drawn threshold). Only the side with fewer values is
    added up: the gain is symmetric in the sides (as in scan_from_the_top),
    and when the counting sort left bin 0's rows unplaced they are the
    majority, on the left. The side is chosen without the missing rows, so
    both missing directions add up the same values: missing rows without
    entries then leave the two gains exactly equal, and missing right is kept,
    as in _split (otherwise rounding could pick either)."""
    cdef Py_ssize_t n_missing = t.bin_start[missing_bin + 1] - t.bin_start[missing_bin]
    cdef double parent_count = c.n_node_rows
    cdef double left_values = t.bin_start[b + 1]
    cdef double left_count = left_values + (n_missing if missing_left else 0)
    cdef double added_hess = 0.0
    cdef bint left_added = 2 * left_values <= parent_count
    if left_count < c.min_samples_leaf or parent_count - left_count < c.min_samples_leaf:
        return
    start_scan(t, c)
    if left_added:
        add_rows(t, c, 0, t.bin_start[b + 1], &added_hess)
    else:
        add_rows(t, c, t.bin_start[b + 1], t.bin_start[n_bins], &added_hess)
    if missing_left == left_added:
        add_rows(t, c, t.bin_start[missing_bin], t.bin_start[missing_bin + 1], &added_hess)
    if weighs_enough(c, added_hess):
        keep_if_better(candidate_gain(t, c), b, missing_left, left_count,
                       best_gain, best_bin, best_missing_left, best_left_count)


def node_entries_by_column(const unsigned int[::1] rows, const long long[::1] row_indptr,
                           const int[::1] entry_column, const X_BINNED_t[::1] entry_bins,
                           Py_ssize_t n_columns):
    """(start (n_columns + 1,), row, bin): the entries of the node's rows
    (row_indptr / entry_column / entry_bins: SparseBinned.by_row) grouped by
    sparse column, column s's at [start[s], start[s + 1]) with their places
    in rows, increasing (a counting sort over the node's entries)."""
    cdef Py_ssize_t r, e, n_entries = 0
    start_array = np.zeros(n_columns + 2, dtype=np.int64)
    cdef long long[::1] start = start_array
    with nogil:
        for r in range(rows.shape[0]):
            for e in range(row_indptr[rows[r]], row_indptr[rows[r] + 1]):
                start[entry_column[e] + 2] += 1
            n_entries += row_indptr[rows[r] + 1] - row_indptr[rows[r]]
        for e in range(2, n_columns + 2):
            start[e] += start[e - 1]
    # start[s + 1] is now where column s's entries go; it ends at start[s + 2]
    row_array = np.empty(max(n_entries, 1), dtype=np.intp)
    bin_dtype = np.uint16 if X_BINNED_t is uint16_t else np.uint8
    bin_array = np.empty(max(n_entries, 1), dtype=bin_dtype)
    cdef Py_ssize_t[::1] row_of = row_array
    cdef X_BINNED_t[::1] bin_of = bin_array
    cdef long long place
    with nogil:
        for r in range(rows.shape[0]):
            for e in range(row_indptr[rows[r]], row_indptr[rows[r] + 1]):
                place = start[entry_column[e] + 1]
                row_of[place] = r
                bin_of[place] = entry_bins[e]
                start[entry_column[e] + 1] = place + 1
    return start_array[:n_columns + 1], row_array, bin_array


def find_best_sparse_output_splits(const X_BINNED_t[:, ::1] X_binned,
                                   const unsigned int[::1] rows,
                                   const int[::1] features,
                                   const int[::1] n_bins_non_missing,
                                   Py_ssize_t missing_bin,
                                   const long long[::1] grad_indptr,
                                   const int[::1] grad_label,
                                   const G_H_t[::1] grad,
                                   const G_H_t[::1] hess,
                                   Py_ssize_t n_labels,
                                   const int[::1] parent_labels,
                                   const double[::1] parent_grad,
                                   const double[::1] parent_hess,
                                   const int[::1] parent_sorted,
                                   const double[::1] parent_sorted_imp,
                                   double parent_score,
                                   Py_ssize_t top_k,
                                   double lambda_l2,
                                   double min_samples_leaf,
                                   double min_child_weight,
                                   double[::1] best_gain,
                                   int[::1] best_bin,
                                   unsigned char[::1] best_missing_left,
                                   int n_threads,
                                   double lambda_l1=0.0,
                                   const int[::1] random_bins=None,
                                   sparse_binned=None):
    """For each f in features, the best split of the node whose rows are rows:
    same outputs and conventions as _split.find_best_sparse_splits (unrestricted,
    per-label hessians): best_gain[f] -1 and best_bin[f] -1 when none is valid;
    missing values go left iff best_missing_left[f] (with none in the node, to
    the child with more rows).

    parent_labels / parent_grad / parent_hess: the node's labels with non-zero
    entries and their sums; parent_sorted / parent_sorted_imp: the same labels
    by decreasing imp; parent_score: the sum of the top_k largest imp, where
    imp = T(G)^2 / (H + lambda_l2) with T soft-thresholding by lambda_l1.
    random_bins (extra_trees): each feature's drawn threshold, the only one
    tried (at most its n_bins - 2, as _split's search).

    sparse_binned: X as a binning.SparseBinned, whose dense features' rows
    X_binned then holds (its `dense`); rows must then increase (as a node's
    do), so that a sparse column lists the node's rows in the order the
    dense layout reads them."""
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    if not is_bin_of(missing_bin, X_BINNED_t is uint16_t):
        raise ValueError(f"missing_bin {missing_bin} is not a bin of X_binned's dtype")
    if grad_indptr.shape[0] != X_binned.shape[1] + 1:
        raise ValueError(f"grad_indptr must have n_rows + 1 = {X_binned.shape[1] + 1} "
                         f"entries, got {grad_indptr.shape[0]}")
    cdef Columns x
    cdef Py_ssize_t n_features = X_binned.shape[0]
    cdef const unsigned char[::1] is_sparse
    cdef const int[::1] column_of
    cdef const X_BINNED_t[::1] zero_bin
    cdef long long[::1] entry_start
    cdef Py_ssize_t[::1] entry_row
    cdef X_BINNED_t[::1] entry_bin
    x.dense = &X_binned[0, 0] if X_binned.shape[0] and X_binned.shape[1] else NULL
    x.wide_bins = X_BINNED_t is uint16_t
    x.n_rows = X_binned.shape[1]
    x.is_sparse = NULL
    if sparse_binned is not None:
        is_sparse, column_of = sparse_binned.is_sparse, sparse_binned.column_of
        zero_bin = sparse_binned.zero_bin
        n_features = is_sparse.shape[0]
        if (column_of.shape[0] != n_features or sparse_binned.n_rows != X_binned.shape[1]
                or X_binned.shape[0] != n_features - zero_bin.shape[0]):
            raise ValueError("sparse_binned must describe X_binned's rows and its features")
        if rows.shape[0] > 1 and not np.all(np.diff(np.asarray(rows, dtype=np.int64)) > 0):
            raise ValueError("rows must increase when sparse_binned is given")
        entry_start, entry_row, entry_bin = node_entries_by_column(
            rows, *sparse_binned.by_row(), zero_bin.shape[0])
        x.is_sparse, x.column_of = &is_sparse[0], &column_of[0]
        x.zero_bin = &zero_bin[0] if zero_bin.shape[0] else NULL
        x.entry_start = &entry_start[0]
        x.entry_row = &entry_row[0]
        x.entry_bin = &entry_bin[0]
    if not (grad_label.shape[0] == grad.shape[0] == hess.shape[0]):
        raise ValueError("grad_label, grad and hess must have the same length")
    cdef Node c
    c.n_node_rows = rows.shape[0]
    c.top_k = top_k
    c.lambda_l2 = lambda_l2
    c.lambda_l1 = lambda_l1
    c.min_samples_leaf = min_samples_leaf
    c.min_child_weight = min_child_weight
    c.n_labels = n_labels
    c.parent_score = parent_score
    c.n_parent_labels = parent_sorted.shape[0]
    # NULL where empty: a node without rows, gradients without entries
    c.rows = &rows[0] if rows.shape[0] else NULL
    c.grad_indptr = &grad_indptr[0]
    c.grad_label = &grad_label[0] if grad_label.shape[0] else NULL
    c.grad = &grad[0] if grad.shape[0] else NULL
    c.hess = &hess[0] if hess.shape[0] else NULL
    c.parent_sorted_imp = &parent_sorted_imp[0] if parent_sorted_imp.shape[0] else NULL
    cdef double parent_hess_total = 0.0
    cdef Py_ssize_t i
    for i in range(parent_hess.shape[0]):
        parent_hess_total += parent_hess[i]
    c.parent_hess_total = parent_hess_total
    cdef Py_ssize_t fi, f, b, n_bins, n_rows_node = rows.shape[0]
    cdef Thread* t
    cdef double gain, left_count
    cdef int bin_
    cdef unsigned char missing_left
    # not `NULL if ... else &random_bins[0]`: Cython's temporary for that drops the const
    cdef const int* drawn = NULL
    if random_bins is not None:
        if random_bins.shape[0] < n_features:
            raise ValueError(f"random_bins must have a bin per feature ({n_features}), "
                             f"got {random_bins.shape[0]}")
        for i in range(n_features):
            if random_bins[i] < 0:
                raise ValueError(f"random_bins[{i}] = {random_bins[i]}: a bin must be >= 0")
        drawn = &random_bins[0]
    with nogil, parallel(num_threads=n_threads, use_threads_if=n_threads > 1):
        t = <Thread*> malloc(sizeof(Thread))
        t.left_grad = <double*> malloc(n_labels * sizeof(double))
        t.left_hess = <double*> malloc(n_labels * sizeof(double))
        t.parent_grad = <double*> malloc(n_labels * sizeof(double))
        t.parent_hess = <double*> malloc(n_labels * sizeof(double))
        t.stamp = <int*> malloc(n_labels * sizeof(int))
        t.dirty_stamp = <int*> malloc(n_labels * sizeof(int))
        t.dirty = <int*> malloc(n_labels * sizeof(int))
        t.left.label_at = <int*> malloc(n_labels * sizeof(int))
        t.left.pos = <int*> malloc(n_labels * sizeof(int))
        t.left.key = <double*> malloc(n_labels * sizeof(double))
        t.right.label_at = <int*> malloc(n_labels * sizeof(int))
        t.right.pos = <int*> malloc(n_labels * sizeof(int))
        t.right.key = <double*> malloc(n_labels * sizeof(double))
        t.rank = <int*> malloc(n_labels * sizeof(int))
        t.next_untouched = <Py_ssize_t*> malloc((parent_sorted.shape[0] + 1) * sizeof(Py_ssize_t))
        t.prev_untouched = <Py_ssize_t*> malloc((parent_sorted.shape[0] + 1) * sizeof(Py_ssize_t))
        t.frontier = <Py_ssize_t*> malloc((2 * top_k + 2) * sizeof(Py_ssize_t))
        t.top_left = <double*> malloc(top_k * sizeof(double))
        t.top_right = <double*> malloc(top_k * sizeof(double))
        t.order = <Py_ssize_t*> malloc((n_rows_node + 1) * sizeof(Py_ssize_t))
        t.outside_bin0 = <Py_ssize_t*> malloc((n_rows_node + 1) * sizeof(Py_ssize_t))
        t.bin_start = <Py_ssize_t*> malloc((missing_bin + 2) * sizeof(Py_ssize_t))
        t.node_bins = <uint16_t*> malloc((n_rows_node + 1) * sizeof(uint16_t))
        t.current = 0
        t.current_bin = 0
        for i in range(n_labels):
            t.stamp[i] = 0
            t.dirty_stamp[i] = 0
        for i in range(parent_sorted.shape[0]):
            t.rank[parent_sorted[i]] = i
        for i in range(parent_labels.shape[0]):
            t.parent_grad[parent_labels[i]] = parent_grad[i]
            t.parent_hess[parent_labels[i]] = parent_hess[i]
        for fi in prange(features.shape[0], schedule="dynamic"):
            f = features[fi]
            n_bins = n_bins_non_missing[f]
            sort_rows_by_bin(t, &c, &x, f, n_bins, missing_bin)
            gain = -1.0
            bin_ = -1
            missing_left = 0
            left_count = 0.0
            if drawn != NULL:
                b = min(drawn[f], max(n_bins - 2, 0))
                if t.bin_start[missing_bin + 1] > t.bin_start[missing_bin]:
                    evaluate_threshold(t, &c, b, n_bins, False, missing_bin, &gain,
                                       &bin_, &missing_left, &left_count)
                    if b < n_bins - 1:
                        evaluate_threshold(t, &c, b, n_bins, True, missing_bin, &gain,
                                           &bin_, &missing_left, &left_count)
                elif b < n_bins - 1:
                    evaluate_threshold(t, &c, b, n_bins, False, missing_bin, &gain,
                                       &bin_, &missing_left, &left_count)
                    if bin_ >= 0:
                        missing_left = left_count >= n_rows_node - left_count
            elif t.bin_start[missing_bin + 1] > t.bin_start[missing_bin]:
                scan_either(t, &c, n_bins, n_bins, False, missing_bin, &gain, &bin_,
                            &missing_left, &left_count)
                scan_either(t, &c, n_bins - 1, n_bins, True, missing_bin, &gain, &bin_,
                            &missing_left, &left_count)
            else:
                scan_either(t, &c, n_bins - 1, n_bins, False, missing_bin, &gain, &bin_,
                            &missing_left, &left_count)
                if bin_ >= 0:
                    missing_left = left_count >= n_rows_node - left_count
            best_gain[f] = gain
            best_bin[f] = bin_
            best_missing_left[f] = missing_left
        free(t.left_grad)
        free(t.left_hess)
        free(t.parent_grad)
        free(t.parent_hess)
        free(t.stamp)
        free(t.dirty_stamp)
        free(t.dirty)
        free(t.left.label_at)
        free(t.left.pos)
        free(t.left.key)
        free(t.right.label_at)
        free(t.right.pos)
        free(t.right.key)
        free(t.rank)
        free(t.next_untouched)
        free(t.prev_untouched)
        free(t.frontier)
        free(t.top_left)
        free(t.top_right)
        free(t.order)
        free(t.outside_bin0)
        free(t.bin_start)
        free(t.node_bins)
        free(t)


cdef void insert_sorted(const double* score, const int* touched, Py_ssize_t n_touched,
                        Py_ssize_t top_k, int* labels, double* scores) noexcept nogil:
    """labels / scores: the top_k of the touched labels by decreasing score,
    ties to the smaller label, by insertion into a sorted list (k is small)."""
    cdef Py_ssize_t j, pos, m = 0
    cdef int label
    cdef double x
    for j in range(n_touched):
        label = touched[j]
        x = score[label]
        if m == top_k and not (x > scores[m - 1] or (
                x == scores[m - 1] and label < labels[m - 1])):
            continue
        pos = m if m < top_k else top_k - 1
        while pos > 0 and (scores[pos - 1] < x or (
                scores[pos - 1] == x and labels[pos - 1] > label)):
            scores[pos] = scores[pos - 1]
            labels[pos] = labels[pos - 1]
            pos -= 1
        scores[pos] = x
        labels[pos] = label
        if m < top_k:
            m += 1


def predict_top_k(const int[:, ::1] leaves,
                  const long long[::1] tree_leaf_offset,
                  const long long[::1] value_start,
                  const int[::1] outputs,
                  const double[::1] values,
                  const double[::1] base_score,
                  Py_ssize_t top_k,
                  int[:, ::1] out_labels,
                  double[:, ::1] out_scores,
                  int n_threads):
    """Per row, the top_k labels by score = base_score[q] + the sum of the
    values its leaves hold for q (leaves[i, t]: the leaf of row i in tree t,
    global leaf tree_leaf_offset[t] + leaves[i, t]; a leaf's (label, value)
    pairs are outputs / values[value_start[l]:value_start[l + 1]]). Labels no
    leaf touches score base_score[q]; they fill the places the touched labels
    leave free, largest base first (ties: smaller label). Sorted by decreasing
    score, ties to the smaller label."""
    cdef Py_ssize_t n_rows = leaves.shape[0], n_trees = leaves.shape[1]
    cdef Py_ssize_t n_labels = base_score.shape[0]
    if top_k < 1 or top_k > n_labels:
        raise ValueError(f"k must be in [1, {n_labels}] (the number of labels), got {top_k}")
    if out_labels.shape[0] != n_rows or out_labels.shape[1] != top_k:
        raise ValueError("out_labels must be (n_rows, k)")
    cdef Py_ssize_t i, tr, e, j, pos, n_touched, m
    cdef long long leaf
    cdef int label
    cdef double* score
    cdef int* stamp
    cdef int* touched
    cdef double x
    # Labels ranked by base score once (ties: smaller label) for the untouched ones.
    import numpy as np
    cdef int[::1] base_order = np.lexsort((np.arange(n_labels), -np.asarray(base_score))
                                          ).astype(np.int32)
    with nogil, parallel(num_threads=n_threads, use_threads_if=n_threads > 1):
        score = <double*> malloc(n_labels * sizeof(double))
        stamp = <int*> malloc(n_labels * sizeof(int))
        touched = <int*> malloc(n_labels * sizeof(int))
        for pos in range(n_labels):
            stamp[pos] = -1
        for i in prange(n_rows, schedule="static"):
            n_touched = 0
            for tr in range(n_trees):
                leaf = tree_leaf_offset[tr] + leaves[i, tr]
                for e in range(value_start[leaf], value_start[leaf + 1]):
                    label = outputs[e]
                    if stamp[label] != i:
                        stamp[label] = i
                        score[label] = base_score[label]
                        touched[n_touched] = label
                        n_touched = n_touched + 1
                    score[label] += values[e]
            # Untouched labels: the best k by base score join the candidates.
            m = 0
            for j in range(n_labels):
                if m >= top_k:
                    break
                label = base_order[j]
                if stamp[label] != i:
                    stamp[label] = i
                    score[label] = base_score[label]
                    touched[n_touched] = label
                    n_touched = n_touched + 1
                    m = m + 1
            insert_sorted(score, touched, n_touched, top_k, &out_labels[i, 0],
                          &out_scores[i, 0])
        free(score)
        free(stamp)
        free(touched)
