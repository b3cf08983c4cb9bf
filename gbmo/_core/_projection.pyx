"""Random projections of the gradient rows (output sketching).

numpy's matmul hands this product to the BLAS thread pool, whose threads keep
spinning after the call and take the cores from the OpenMP threads of the
next kernels (measured in benchmarks/README.md, "Output sketching"): here the
product runs on the same OpenMP threads as every other kernel."""
from cython.parallel cimport prange

from .common cimport G_H_t


def project_rows(const G_H_t[:, ::1] grad,
                 const G_H_t[:, ::1] projection_t,
                 G_H_t[:, ::1] out,
                 int n_threads):
    """out = grad @ projection_t.T: (n, d) gradient rows onto k directions
    given as the rows of projection_t (k, d), so both operands are read
    contiguously. Four partial sums per entry let the adds overlap."""
    cdef Py_ssize_t n = grad.shape[0], d = grad.shape[1], k = projection_t.shape[0]
    cdef Py_ssize_t i, j, c
    cdef const G_H_t* row
    cdef const G_H_t* direction
    cdef G_H_t s0, s1, s2, s3
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        row = &grad[i, 0]
        for c in range(k):
            direction = &projection_t[c, 0]
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            j = 0
            while j + 4 <= d:
                s0 = s0 + row[j] * direction[j]
                s1 = s1 + row[j + 1] * direction[j + 1]
                s2 = s2 + row[j + 2] * direction[j + 2]
                s3 = s3 + row[j + 3] * direction[j + 3]
                j = j + 4
            while j < d:
                s0 = s0 + row[j] * direction[j]
                j = j + 1
            out[i, c] = (s0 + s1) + (s2 + s3)
