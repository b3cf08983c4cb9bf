"""Feature contributions (SHAP values) of raw scores, by path-dependent TreeSHAP
(Lundberg, Erion & Lee 2018, "Consistent individualized feature attribution
for tree ensembles", Algorithm 2), for vector leaves.

A row's contribution of feature i in a tree is its Shapley value for the
game v(S) = E[leaf | the row's values of the features in S], where a split
on a feature outside S sends the row both ways, weighted by the children's
training rows (node_cover). The walk keeps, along the path from the root,
the unique features met with the fraction of the row's paths that a feature
being known (one) or unknown (zero) lets through, and the weights of every
subset size; a leaf then adds its value times each feature's weight. The
weights do not depend on the output, so a vector leaf costs d adds per
feature on its path, as in prediction.

The forest comes in the flat arrays of _predict.pyx (node_left[i] < 0 for a
leaf, node_value[i] its leaf index; leaves as in leaves.pxd).
"""
cimport numpy as np
import numpy as np
from cython.parallel cimport prange, threadid

from .common cimport NODE_t, X_t, in_category_set
from .leaves cimport add_scaled_leaf


cdef struct PathStep:
    int feature             # -1 for the root's step
    double zero_fraction    # share of the paths let through when the feature is unknown
    double one_fraction     # ... when it is known: 1 on the row's side, else 0
    double weight           # permutation weight of the subsets of this size


cdef struct Forest:
    const int* feature
    const X_t* threshold
    const unsigned char* missing_left
    const NODE_t* left
    const NODE_t* right
    const NODE_t* leaf
    const double* cover
    const long long* value_start
    const long long* output_start
    const double* values
    const int* outputs
    const long long* category_offset            # per node; -1 but at categorical splits
    const unsigned long long* category_words    # NULL: no categorical split
    # reciprocal[k] = 1 / k for the path lengths met: a leaf's weights take
    # about depth^2 steps of two divisions each, which were most of the walk
    const double* reciprocal


cdef inline void extend(PathStep* path, Py_ssize_t length, double zero_fraction,
                        double one_fraction, int feature, const double* reciprocal) noexcept nogil:
    """Appends a step to a path of `length` steps and updates the weights."""
    cdef Py_ssize_t i
    cdef double per_length = reciprocal[length + 1]
    path[length].feature = feature
    path[length].zero_fraction = zero_fraction
    path[length].one_fraction = one_fraction
    path[length].weight = 1.0 if length == 0 else 0.0
    for i in range(length - 1, -1, -1):
        path[i + 1].weight += one_fraction * path[i].weight * (i + 1) * per_length
        path[i].weight = zero_fraction * path[i].weight * (length - i) * per_length


cdef inline void unwind(PathStep* path, Py_ssize_t last, Py_ssize_t k,
                        const double* reciprocal) noexcept nogil:
    """Undoes extend for step k of a path whose last step is `last`."""
    cdef double one = path[k].one_fraction, zero = path[k].zero_fraction
    cdef double next_weight = path[last].weight, kept, scale
    cdef Py_ssize_t i
    if one != 0:
        scale = (last + 1) / one
        for i in range(last - 1, -1, -1):
            kept = path[i].weight
            path[i].weight = next_weight * scale * reciprocal[i + 1]
            next_weight = kept - path[i].weight * zero * (last - i) * reciprocal[last + 1]
    else:
        scale = (last + 1) / zero
        for i in range(last - 1, -1, -1):
            path[i].weight = path[i].weight * scale * reciprocal[last - i]
    for i in range(k, last):
        path[i].feature = path[i + 1].feature
        path[i].zero_fraction = path[i + 1].zero_fraction
        path[i].one_fraction = path[i + 1].one_fraction


cdef inline double unwound_weight(const PathStep* path, Py_ssize_t last, Py_ssize_t k,
                                  const double* reciprocal) noexcept nogil:
    """The total weight of the path without step k, leaving the path as it is."""
    cdef double one = path[k].one_fraction, zero = path[k].zero_fraction
    cdef double next_weight = path[last].weight, total = 0.0, scale, share_rate, carried
    cdef Py_ssize_t i
    if one != 0:
        scale = (last + 1) / one
        carried = zero * reciprocal[last + 1]
        for i in range(last - 1, -1, -1):
            # the factors multiplied first, so that each step waits on the
            # previous one for one product and one difference only
            share_rate = scale * reciprocal[i + 1]
            total += next_weight * share_rate
            next_weight = path[i].weight - next_weight * (share_rate * carried * (last - i))
    else:
        scale = (last + 1) / zero
        for i in range(last - 1, -1, -1):
            total += path[i].weight * scale * reciprocal[last - i]
    return total


cdef void visit(const Forest* forest, const double* x, double* contributions, Py_ssize_t d,
                NODE_t node, PathStep* parent_path, Py_ssize_t length,
                double zero_fraction, double one_fraction, int feature) noexcept nogil:
    """Walks the subtree at node with the parent's path of `length` steps
    extended by (zero_fraction, one_fraction, feature). A path lives in the
    buffer right after its parent's, which stays intact for the sibling."""
    cdef PathStep* path = parent_path + length
    cdef Py_ssize_t i, k, last
    cdef NODE_t hot, cold
    cdef bint goes_right
    cdef double value, incoming_zero = 1.0, incoming_one = 1.0
    cdef int split_feature
    for i in range(length):
        path[i] = parent_path[i]
    extend(path, length, zero_fraction, one_fraction, feature, forest.reciprocal)
    last = length
    if forest.left[node] < 0:
        for i in range(1, last + 1):
            add_scaled_leaf(contributions + path[i].feature * d, d, forest.leaf[node],
                            unwound_weight(path, last, i, forest.reciprocal)
                            * (path[i].one_fraction - path[i].zero_fraction),
                            forest.value_start, forest.output_start, forest.values,
                            forest.outputs)
        return
    split_feature = forest.feature[node]
    value = x[split_feature]
    # the row's side, by prediction's rule (NaN > t is false; a categorical
    # split sends a rank outside its set right)
    if forest.category_words != NULL and forest.category_offset[node] >= 0:
        goes_right = ((value != value and not forest.missing_left[node])
                      or (value == value and not in_category_set(
                          forest.category_words, forest.category_offset[node], value)))
    else:
        goes_right = value > forest.threshold[node] or (value != value
                                                        and not forest.missing_left[node])
    if goes_right:
        hot, cold = forest.right[node], forest.left[node]
    else:
        hot, cold = forest.left[node], forest.right[node]
    # a feature met again on the path: its earlier step is folded into this one
    for k in range(1, last + 1):
        if path[k].feature == split_feature:
            incoming_zero, incoming_one = path[k].zero_fraction, path[k].one_fraction
            unwind(path, last, k, forest.reciprocal)
            last -= 1
            break
    visit(forest, x, contributions, d, hot, path, last + 1,
          incoming_zero * forest.cover[hot] / forest.cover[node], incoming_one, split_feature)
    visit(forest, x, contributions, d, cold, path, last + 1,
          incoming_zero * forest.cover[cold] / forest.cover[node], 0.0, split_feature)


def tree_shap(const double[:, ::1] X,
              const NODE_t[::1] tree_roots,
              int max_depth,
              const int[::1] node_feature,
              const X_t[::1] node_threshold,
              const unsigned char[::1] node_missing_left,
              const NODE_t[::1] node_left,
              const NODE_t[::1] node_right,
              const NODE_t[::1] node_value,
              const double[::1] node_cover,
              const long long[::1] value_start,
              const long long[::1] output_start,
              const double[::1] values,
              const int[::1] outputs,
              double[:, :, ::1] out,
              int n_threads,
              const long long[::1] category_offset=None,
              const unsigned long long[::1] category_words=None):
    """out[i, f] += the contribution of feature f to row i's raw scores (a
    d-vector), summed over the trees. max_depth is at least every tree's
    depth (edges); every node_cover must be > 0. Categorical splits: each
    node's offset in category_words, as _predict's walk reads them."""
    cdef Py_ssize_t n = X.shape[0], d = out.shape[2]
    cdef Py_ssize_t i, t
    # each level of the walk keeps its path (at most depth + 1 steps) after its parent's
    cdef Py_ssize_t path_steps = (max_depth + 2) * (max_depth + 3) // 2
    cdef PathStep* paths
    cdef Forest forest
    if out.shape[0] != n or out.shape[1] != X.shape[1] + 1:
        raise ValueError(f"out must be ({n}, {X.shape[1] + 1}, d); got ({out.shape[0]}, "
                         f"{out.shape[1]}, {d})")
    if n == 0 or tree_roots.shape[0] == 0:
        return
    n_threads = max(1, min(n_threads, n))
    # one path buffer per thread, allocated here rather than per row
    buffers = np.empty(n_threads * path_steps * sizeof(PathStep), dtype=np.uint8)
    paths = <PathStep*> np.PyArray_DATA(buffers)
    # a leaf at depth D reads 1 / k for k up to D + 1 (its path: the root's
    # step and D more); 1 / 0 is never read
    reciprocals = np.concatenate([[np.inf], 1.0 / np.arange(1, max_depth + 2)])
    forest.reciprocal = <const double*> np.PyArray_DATA(reciprocals)
    forest.feature, forest.threshold = &node_feature[0], &node_threshold[0]
    forest.missing_left, forest.left, forest.right = (&node_missing_left[0], &node_left[0],
                                                      &node_right[0])
    forest.leaf, forest.cover = &node_value[0], &node_cover[0]
    forest.value_start, forest.output_start = &value_start[0], &output_start[0]
    forest.values, forest.outputs = &values[0], &outputs[0]
    forest.category_words = NULL
    if category_words is not None and category_words.shape[0]:
        if category_offset is None or category_offset.shape[0] != node_left.shape[0]:
            raise ValueError(f"category_offset must have {node_left.shape[0]} entries")
        forest.category_offset, forest.category_words = &category_offset[0], &category_words[0]
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        for t in range(tree_roots.shape[0]):
            visit(&forest, &X[i, 0], &out[i, 0, 0], d, tree_roots[t],
                  paths + threadid() * path_steps, 0, 1.0, 1.0, -1)
