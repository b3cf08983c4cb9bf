"""Whether a hessian is one constant column: then the histograms count rows
in its place (the MSE path; see _histogram.pyx, where k = 0).

A module of its own because adding it to a kernel module slowed that
module's unchanged loops: in _histogram.pyx the histogram build by 7% at
100,000 rows, in _losses.pyx the squared-error gradients by a third, for a
reason not found (benchmarks/README.md, "The Python around each tree,
again").
"""
from cython cimport floating

# is_constant_column compares this many rows between its checks
cdef Py_ssize_t CONSTANT_BLOCK = 1024


def is_constant_column(const floating[:, ::1] hess):
    """Whether hess is one column whose rows all hold the same number. A
    loop that stops at the first block holding another value: numpy's
    all(hess == hess[0]) cost 2-3 us a tree on small data, and a temporary
    of n flags on large; the blocks' branch-free compares vectorise."""
    cdef Py_ssize_t block, i, n = hess.shape[0]
    cdef bint differs = False
    cdef const floating* column
    cdef floating first
    if hess.shape[1] != 1 or n == 0 or hess[0, 0] != hess[0, 0]:  # NaN is no constant
        return False
    column, first = &hess[0, 0], hess[0, 0]
    with nogil:
        for block in range((n + CONSTANT_BLOCK - 1) // CONSTANT_BLOCK):
            for i in range(block * CONSTANT_BLOCK, min((block + 1) * CONSTANT_BLOCK, n)):
                differs |= column[i] != first
            if differs:
                break
    return not differs
