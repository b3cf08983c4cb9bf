"""Gradients and hessians of the built-in losses, fused into one pass over the
rows (numpy needs several temporaries of shape (n, d) per round).

weight has n entries, or none for unit weights. A NaN target (a missing
label of a loss that masks them) gives zero gradient and hessian."""
from cython.parallel cimport prange, threadid
from libc.math cimport exp

from .common cimport G_H_t

import numpy as np

# Hessians of saturated probabilities are floored so leaf values stay finite.
cdef double MIN_HESSIAN = 1e-16


def squared_error_gradients(const double[:, ::1] y,
                            const double[:, ::1] raw,
                            const double[::1] weight,
                            G_H_t[:, ::1] grad,
                            int n_threads):
    """grad = weight * (raw - y), 0 where y is NaN; the hessian is the weight
    (0 where y is NaN), set by the caller."""
    cdef Py_ssize_t n = raw.shape[0], d = raw.shape[1]
    cdef bint weighted = weight.shape[0] > 0
    cdef Py_ssize_t i, j
    cdef double w
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        w = weight[i] if weighted else 1.0
        for j in range(d):
            if y[i, j] != y[i, j]:
                grad[i, j] = 0.0
            else:
                grad[i, j] = <G_H_t>(w * (raw[i, j] - y[i, j]))


cdef inline double row_exps(const char* row, Py_ssize_t stride, Py_ssize_t d,
                            double* exps) noexcept nogil:
    """exps[j] = exp(score j - the row's largest), which cannot overflow, for
    a row of d > 0 scores stride bytes apart; returns their sum."""
    cdef double top = (<const double*> row)[0], score, total = 0.0
    cdef Py_ssize_t j
    for j in range(1, d):
        score = (<const double*> (row + j * stride))[0]
        if score > top:
            top = score
    for j in range(d):
        exps[j] = exp((<const double*> (row + j * stride))[0] - top)
        total = total + exps[j]
    return total


def softmax_gradients(const long long[::1] y,
                      const double[:, ::1] raw,
                      const double[::1] weight,
                      G_H_t[:, ::1] grad,
                      G_H_t[:, ::1] hess,
                      int n_threads):
    """grad = weight * (p - onehot(y)), hess = weight * max(p (1 - p), MIN_HESSIAN),
    with p the softmax of the row's raw scores."""
    cdef Py_ssize_t n = raw.shape[0], d = raw.shape[1]
    cdef bint weighted = weight.shape[0] > 0
    cdef Py_ssize_t i, j
    cdef double w, total, p, h
    cdef double* exps
    if d == 0:
        return
    # each thread's row of exps: computed once, not again for p (the exps
    # were most of this kernel's time); rows a cache line apart or more, so
    # that no two threads write one line
    scratch = np.empty((max(n_threads, 1), (d // 8 + 2) * 8))
    cdef double[:, ::1] scratch_rows = scratch
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        exps = &scratch_rows[threadid(), 0]
        w = weight[i] if weighted else 1.0
        total = row_exps(<const char*> &raw[i, 0], sizeof(double), d, exps)
        for j in range(d):
            p = exps[j] / total
            h = p * (1.0 - p)
            hess[i, j] = <G_H_t>(w * (h if h > MIN_HESSIAN else MIN_HESSIAN))
            grad[i, j] = <G_H_t>(w * (p - (1.0 if y[i] == j else 0.0)))


def sigmoid_gradients(const double[:, ::1] y,
                      const double[:, ::1] raw,
                      const double[::1] weight,
                      G_H_t[:, ::1] grad,
                      G_H_t[:, ::1] hess,
                      int n_threads):
    """grad = weight * (p - y), hess = weight * max(p (1 - p), MIN_HESSIAN), p = sigmoid(raw);
    both 0 where y is NaN."""
    cdef Py_ssize_t n = raw.shape[0], d = raw.shape[1]
    cdef bint weighted = weight.shape[0] > 0
    cdef Py_ssize_t i, j
    cdef double w, p, h
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        w = weight[i] if weighted else 1.0
        for j in range(d):
            if y[i, j] != y[i, j]:
                grad[i, j] = 0.0
                hess[i, j] = 0.0
                continue
            p = 1.0 / (1.0 + exp(-raw[i, j]))
            h = p * (1.0 - p)
            hess[i, j] = <G_H_t>(w * (h if h > MIN_HESSIAN else MIN_HESSIAN))
            grad[i, j] = <G_H_t>(w * (p - y[i, j]))


def softmax_transform(const double[:, :] raw, double[:, ::1] out, int n_threads):
    """out = the softmax of each row of raw (any strides): one exp an element,
    where scipy.special.softmax makes five passes over (n, d) temporaries."""
    cdef Py_ssize_t n = raw.shape[0], d = raw.shape[1]
    cdef Py_ssize_t i, j
    cdef double total
    if out.shape[0] != n or out.shape[1] != d:
        raise ValueError(f"out must have raw's shape ({n}, {d}), got ({out.shape[0]}, "
                         f"{out.shape[1]})")
    if d == 0:
        return
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        total = row_exps(<const char*> &raw[i, 0], raw.strides[1], d, &out[i, 0])
        for j in range(d):
            out[i, j] = out[i, j] / total


def sigmoid_transform(const double[:, :] raw, double[:, ::1] out, int n_threads):
    """out = 1 / (1 + exp(-raw)) elementwise (raw with any strides)."""
    cdef Py_ssize_t n = raw.shape[0], d = raw.shape[1]
    cdef Py_ssize_t i, j
    if out.shape[0] != n or out.shape[1] != d:
        raise ValueError(f"out must have raw's shape ({n}, {d}), got ({out.shape[0]}, "
                         f"{out.shape[1]})")
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        for j in range(d):
            out[i, j] = 1.0 / (1.0 + exp(-raw[i, j]))
