"""Per-leaf sums of gradients over the grower's final row partition.

When an ensembler chooses the tree's structure from split gradients, the leaf
values still come from the full update gradients: one pass over each leaf's
rows, after the tree is grown, instead of carrying d more columns through
every histogram."""
from cython.parallel cimport prange

from .common cimport G_H_t, HIST_t, ROW_t


def leaf_gradient_sums(const ROW_t[::1] rows,
                       const Py_ssize_t[::1] leaf_start,
                       const Py_ssize_t[::1] leaf_stop,
                       const G_H_t[:, ::1] grad,
                       const G_H_t[:, ::1] hess,
                       HIST_t[:, ::1] grad_sums,
                       HIST_t[:, ::1] hess_sums,
                       int n_threads):
    """grad_sums[l, j] = sum of grad[rows[s], j] over s in [leaf_start[l], leaf_stop[l]);
    hess_sums likewise, with as many columns as hess (1 or d)."""
    cdef Py_ssize_t d = grad.shape[1], k = hess.shape[1]
    cdef Py_ssize_t l, s, j, r
    for l in prange(leaf_start.shape[0], nogil=True, schedule="dynamic", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        for j in range(d):
            grad_sums[l, j] = 0.0
        for j in range(k):
            hess_sums[l, j] = 0.0
        for s in range(leaf_start[l], leaf_stop[l]):
            r = rows[s]
            for j in range(d):
                grad_sums[l, j] += grad[r, j]
            for j in range(k):
                hess_sums[l, j] += hess[r, j]
