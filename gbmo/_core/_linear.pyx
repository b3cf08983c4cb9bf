"""Linear leaves (linear_tree): a leaf's prediction is an intercept plus
coefficients times the raw values of the numeric features split on along its
path, as LightGBM's linear trees, with a vector of outputs.

A leaf's model is fit by one Newton step on its rows, the normal equations
(Z' H_j Z + lambda) beta_j = -Z' g_j for each output j, where a row of Z is
the leaf's feature values then 1. leaf_normal_equations sums them; numpy
solves the small systems. A row missing (NaN) any of its leaf's features,
or holding an infinite value there, takes no part in the fit and is
predicted by the leaf's constant value instead; add_linear_parts adds a
tree's predictions to the training scores as predict_raw's walk adds them
(linear.pxd).
"""
from cython.parallel cimport prange

from .common cimport G_H_t, NODE_t, ROW_t
from .leaves cimport add_scaled_leaf
from .linear cimport LinearLeaves, X_IN_t, add_linear_part, linear_leaves_of


def leaf_normal_equations(const X_IN_t[:, :] X,
                          const ROW_t[::1] rows,
                          const Py_ssize_t[::1] leaf_start,
                          const Py_ssize_t[::1] leaf_stop,
                          const long long[::1] feature_start,
                          const int[::1] features,
                          const G_H_t[:, ::1] grad,
                          const G_H_t[:, ::1] hess,
                          double[:, :, :, ::1] ZHZ,
                          double[:, :, ::1] Zg,
                          double[:, ::1] row_scratch,
                          double[:, ::1] origins,
                          long long[::1] n_used,
                          int n_threads):
    """For each leaf l (its rows rows[leaf_start[l]:leaf_stop[l]], its p
    features features[feature_start[l]:feature_start[l + 1]]) and each
    output j of grad's w: ZHZ[l, j] += h z z' (the upper triangle only) and
    Zg[l, j] += g_j z over the rows with none of the features missing or
    infinite, z (of size p_max + 1) their values at 0 .. p - 1, 1 last (the
    intercept's, at p_max, so that every leaf's system has one layout, its
    unused entries 0); n_used[l] counts them.
    hess: (n, w), a hessian per output; (n, 1), one for every output; or
    (n, 0), a constant that the caller multiplies in (ZHZ then holds the
    sums of z z' alone). ZHZ's second axis is w, or 1 when the outputs share
    a hessian. row_scratch: (n_leaves, p_max + 1), a row's z per leaf, so
    that threads working on other leaves never share one. z holds the
    values less the leaf's first whole row's, which origins (n_leaves,
    p_max + 1) receives: sums about a point among the rows keep a feature's
    spread where raw sums of large values (timestamps) would round it away
    (the intercept is moved back by the caller). The sums are added to what
    the arrays hold."""
    cdef Py_ssize_t n_leaves = leaf_start.shape[0]
    cdef Py_ssize_t width = grad.shape[1], hess_width = hess.shape[1]
    cdef Py_ssize_t size = ZHZ.shape[2]
    cdef Py_ssize_t row_stride = X.strides[0], feature_stride = X.strides[1]
    cdef Py_ssize_t l, s, a, c, j, p, m
    cdef ROW_t row
    cdef double x, h, g, hz
    cdef double* z
    cdef double* sums      # the leaf's ZHZ, then its Zg: plain offsets, not 4-D indexing
    cdef const int* leaf_features
    cdef const char* values
    cdef bint complete
    cdef bint shared = hess_width <= 1 or width == 1
    if leaf_stop.shape[0] != n_leaves or feature_start.shape[0] != n_leaves + 1 \
            or ZHZ.shape[0] != n_leaves or Zg.shape[0] != n_leaves \
            or n_used.shape[0] != n_leaves or row_scratch.shape[0] != n_leaves:
        raise ValueError(f"every per-leaf array needs the {n_leaves} leaves (feature_start "
                         "one more)")
    if hess_width not in (0, 1, width) or ZHZ.shape[1] != (width if hess_width == width > 1
                                                         else 1) \
            or Zg.shape[1] != width or grad.shape[0] != X.shape[0] \
            or (hess_width and hess.shape[0] != X.shape[0]):
        raise ValueError(f"grad ({grad.shape[0]}, {width}) and hess ({hess.shape[0]}, "
                         f"{hess_width}) do not fit X's {X.shape[0]} rows or the sums' shapes")
    if ZHZ.shape[3] != size or Zg.shape[2] != size or row_scratch.shape[1] != size \
            or origins.shape[0] != n_leaves or origins.shape[1] != size:
        raise ValueError(f"the sums, the scratch and the origins need {size} entries a row "
                         "of z")
    for l in range(n_leaves):
        if not 0 <= leaf_start[l] <= leaf_stop[l] <= rows.shape[0]:
            raise ValueError(f"leaf {l}'s rows [{leaf_start[l]}, {leaf_stop[l]}) are not a "
                             f"range of the {rows.shape[0]} rows")
        if not 0 <= feature_start[l] <= feature_start[l + 1] <= features.shape[0] \
                or feature_start[l + 1] - feature_start[l] >= size:
            raise ValueError(f"leaf {l}'s features do not fit in features or in {size} - 1")
    for m in range(features.shape[0]):
        if not 0 <= features[m] < X.shape[1]:
            raise ValueError(f"feature {features[m]} is not one of X's {X.shape[1]}")
    for s in range(rows.shape[0]):
        if rows[s] >= X.shape[0]:
            raise ValueError(f"row {rows[s]} is not one of X's {X.shape[0]}")
    if X.shape[0] == 0:
        return
    for l in prange(n_leaves, nogil=True, schedule="dynamic", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        p = feature_start[l + 1] - feature_start[l]
        leaf_features = &features[feature_start[l]] if p else NULL
        z = &row_scratch[l, 0]
        z[p] = 1.0  # z[a] for a = p stands for the intercept's entry, at size - 1
        for s in range(leaf_start[l], leaf_stop[l]):
            row = rows[s]
            values = (<const char*> &X[0, 0]) + row * row_stride
            complete = True
            for a in range(p):
                x = (<const X_IN_t*> (values + leaf_features[a] * feature_stride))[0]
                if x - x != 0.0:  # NaN or infinite: the row's prediction is the constant
                    complete = False
                    break
                z[a] = x
            if not complete:
                continue
            if n_used[l] == 0:
                for a in range(p):
                    origins[l, a] = z[a]
            for a in range(p):
                z[a] = z[a] - origins[l, a]
            n_used[l] += 1
            sums = &Zg[l, 0, 0]
            for j in range(width):
                g = grad[row, j]
                for a in range(p + 1):
                    sums[j * size + (a if a < p else size - 1)] += g * z[a]
            sums = &ZHZ[l, 0, 0, 0]
            for j in range(1 if shared else width):
                if hess_width == 0:
                    h = 1.0
                else:
                    h = hess[row, 0 if shared else j]
                for a in range(p + 1):
                    hz = h * z[a]
                    for c in range(a, p + 1):
                        sums[(j * size + (a if a < p else size - 1)) * size
                             + (c if c < p else size - 1)] += hz * z[c]


def add_linear_parts(const X_IN_t[:, :] X not None,
                     const NODE_t[::1] leaf not None,
                     const long long[::1] value_start not None,
                     const long long[::1] output_start not None,
                     const double[::1] values not None,
                     const int[::1] outputs not None,
                     const long long[::1] feature_start not None,
                     const int[::1] features not None,
                     const long long[::1] coefficient_start not None,
                     const double[::1] coefficients not None,
                     const double[::1] shift not None,
                     double scale,
                     double[:, ::1] out not None,
                     int n_threads):
    """out[i] += scale * the prediction of leaf leaf[i] of a tree whose leaves
    are laid out as LeafArrays lays them out (value_start, output_start,
    values, outputs) with linear leaves (linear.pxd's LinearLeaves of the
    other arrays): the leaf's values, then its linear part, in the order the
    dense-X walk of predict_raw adds them (the same sums, to the last bit)."""
    cdef Py_ssize_t n = X.shape[0], d = out.shape[1]
    cdef Py_ssize_t n_leaves = value_start.shape[0] - 1
    cdef Py_ssize_t row_stride = X.strides[0], feature_stride = X.strides[1]
    cdef Py_ssize_t i
    cdef LinearLeaves linear = linear_leaves_of(feature_start, features, coefficient_start,
                                                coefficients, shift, value_start, output_start,
                                                outputs, X.shape[1], d)
    if leaf.shape[0] != n or out.shape[0] != n:
        raise ValueError(f"leaf and out need X's {n} rows; got {leaf.shape[0]} and "
                         f"{out.shape[0]}")
    if values.shape[0] != value_start[n_leaves]:
        raise ValueError(f"values must hold the leaves' {value_start[n_leaves]} values")
    for i in range(n):
        if not 0 <= leaf[i] < n_leaves:
            raise ValueError(f"leaf {leaf[i]} is not one of the {n_leaves}")
    if n == 0:
        return
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        add_scaled_leaf(&out[i, 0], d, leaf[i], scale, &value_start[0], &output_start[0],
                        &values[0], &outputs[0])
        add_linear_part(&out[i, 0], <const X_IN_t*> ((<const char*> &X[0, 0]) + i * row_stride),
                        feature_stride, leaf[i], &linear, &value_start[0], &output_start[0],
                        &outputs[0], scale)
