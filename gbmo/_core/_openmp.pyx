"""The OpenMP runtime's thread count, read at the time of asking.

It follows OMP_NUM_THREADS and, while one is in force, threadpoolctl's limit
(which joblib's workers set), so gbmo's default thread count does what
scikit-learn's and LightGBM's do. A build without OpenMP runs on one thread.
"""

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int gbmo_openmp_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int gbmo_openmp_max_threads(void) { return 1; }
    #endif
    """
    int gbmo_openmp_max_threads() nogil


def openmp_max_threads():
    """The number of threads an OpenMP parallel region would get now."""
    return gbmo_openmp_max_threads()
