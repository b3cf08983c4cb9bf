"""Weighted means down the columns of an elementwise loss, in one pass.

The metrics (gbmo/metrics.py) score every validation set every round. In
numpy, a weighted mean that leaves NaN out takes about six passes and as many
(n, d) temporaries, and numpy sums down the columns of a C-ordered (n, d)
array a row at a time: rmse on 200,000 x 10 rows took 28 ms, which made a
round with a validation set of the training set's size 40-80% slower."""
from cython.parallel cimport prange
from libc.math cimport fabs, log, NAN

import numpy as np

cdef enum:
    # Rows summed into one partial sum; the partials are added in order
    # afterwards, so a mean does not depend on the thread count.
    BLOCK_ROWS = 1024


cpdef enum Element:
    # what an element (y, p) contributes to its column's mean
    SQUARED_ERROR
    ABSOLUTE_ERROR
    LOG_LOSS            # of probability p against a label y in [0, 1]
    MISCLASSIFIED       # 1 when p and y fall on different sides of 0.5
    VALUE               # y itself: a value computed beforehand (p is not read)
    PERCENTAGE_ERROR    # |p - y| / max(1, |y|), LightGBM's mape


cdef inline double element(Element kind, double y, double p, double eps) noexcept nogil:
    """kind's value of (y, p); NaN, which leaves it out, when y is missing."""
    if kind == SQUARED_ERROR:
        return (p - y) * (p - y)
    if kind == ABSOLUTE_ERROR:
        return fabs(p - y)
    if kind == PERCENTAGE_ERROR:
        return fabs(p - y) / (fabs(y) if fabs(y) > 1.0 else 1.0)
    if kind == LOG_LOSS:
        p = eps if p < eps else (1.0 - eps if p > 1.0 - eps else p)
        # a 0/1 label's other term is exactly 0 (p is clipped), so one log does
        if y == 1.0:
            return -log(p)
        if y == 0.0:
            return -log(1.0 - p)
        return -(y * log(p) + (1.0 - y) * log(1.0 - p))
    if kind == MISCLASSIFIED:
        if y != y:
            return NAN
        return 1.0 if (p > 0.5) != (y > 0.5) else 0.0
    return y


cdef inline void block_sums(Element kind, const double[:, :] y, const double[:, :] prediction,
                            const double[::1] weight, Py_ssize_t first, Py_ssize_t stop,
                            double eps, double[:, ::1] sums) noexcept nogil:
    """sums[0, j], sums[1, j] = the weighted sum of column j's elements over
    rows first .. stop - 1 that are not NaN, and the sum of their weights.
    Inlined where kind is a literal, so that each kind's loop is compiled with
    its element folded in; a column at a time, so the sums stay in registers."""
    cdef Py_ssize_t i, j
    cdef double w, value, total, total_weight
    for j in range(y.shape[1]):
        total = 0.0
        total_weight = 0.0
        for i in range(first, stop):
            w = 1.0 if weight is None else weight[i]
            value = element(kind, y[i, j], prediction[i, j], eps)
            if value == value:
                total = total + w * value
                total_weight = total_weight + w
        sums[0, j] = total
        sums[1, j] = total_weight


def column_means(Element kind, const double[:, :] y, const double[:, :] prediction,
                 const double[::1] weight, int n_threads, double eps=1e-15):
    """Per column j: the mean of element(kind, y[i, j], prediction[i, j]) over
    the rows i where it is not NaN, weighted by weight[i] (None: 1); NaN for a
    column without such a row or without weight. Any strides (a broadcast
    prediction row has stride 0)."""
    cdef Py_ssize_t n = y.shape[0], d = y.shape[1]
    if prediction.shape[0] != n or prediction.shape[1] != d:
        raise ValueError(f"prediction must have y's shape ({n}, {d}), got "
                         f"({prediction.shape[0]}, {prediction.shape[1]})")
    if weight is not None and weight.shape[0] != n:
        raise ValueError(f"weight must have one value per row ({n}), got {weight.shape[0]}")
    cdef Py_ssize_t n_blocks = (n + BLOCK_ROWS - 1) // BLOCK_ROWS
    partials = np.zeros((n_blocks, 2, d))
    cdef double[:, :, ::1] partial = partials
    cdef Py_ssize_t block, first, stop
    for block in prange(n_blocks, nogil=True, schedule="static", num_threads=n_threads,
                        use_threads_if=n_threads > 1):
        first = block * BLOCK_ROWS
        stop = min(n, first + BLOCK_ROWS)
        if kind == SQUARED_ERROR:
            block_sums(SQUARED_ERROR, y, prediction, weight, first, stop, eps, partial[block])
        elif kind == ABSOLUTE_ERROR:
            block_sums(ABSOLUTE_ERROR, y, prediction, weight, first, stop, eps, partial[block])
        elif kind == LOG_LOSS:
            block_sums(LOG_LOSS, y, prediction, weight, first, stop, eps, partial[block])
        elif kind == MISCLASSIFIED:
            block_sums(MISCLASSIFIED, y, prediction, weight, first, stop, eps, partial[block])
        elif kind == PERCENTAGE_ERROR:
            block_sums(PERCENTAGE_ERROR, y, prediction, weight, first, stop, eps,
                       partial[block])
        else:
            block_sums(VALUE, y, prediction, weight, first, stop, eps, partial[block])
    totals = partials.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return totals[0] / totals[1]
