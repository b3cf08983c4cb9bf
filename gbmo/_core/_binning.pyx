"""Raw feature values -> bin indices, in parallel over rows."""
from cython.parallel cimport prange
from libc.math cimport isnan

from .common cimport X_BINNED_t, X_t

ctypedef fused X_IN_t:
    float
    double


def map_to_bins(const X_IN_t[:, :] X,
                const X_t[:, ::1] edges,
                const int[::1] n_edges,
                int missing_bin,
                X_BINNED_t[:, ::1] out,
                int n_threads):
    """out[f, i] = number of edges of feature f strictly below X[i, f], so that
    bin(x) <= t exactly when x <= edges[f, t]; NaN goes to missing_bin.

    X is (n_rows, n_features) in any memory order; out is (n_features, n_rows).
    """
    cdef Py_ssize_t n_rows = X.shape[0]
    cdef Py_ssize_t n_features = X.shape[1]
    cdef Py_ssize_t i, f
    cdef int lo, hi, mid
    cdef double x
    for i in prange(n_rows, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        for f in range(n_features):
            x = X[i, f]
            if isnan(x):
                out[f, i] = missing_bin
                continue
            lo = 0
            hi = n_edges[f]
            while lo < hi:
                mid = (lo + hi) // 2
                if edges[f, mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            out[f, i] = <X_BINNED_t>lo
