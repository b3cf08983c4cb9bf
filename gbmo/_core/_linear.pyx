"""Linear leaves (linear_tree): a leaf's prediction is an intercept plus
coefficients times the raw values of the numeric features split on along its
path, as LightGBM's linear trees, with a vector of outputs.

A leaf's model is fit by one Newton step on its rows, the normal equations
(Z' H_j Z + lambda) beta_j = -Z' g_j for each output j, where a row of Z is
the leaf's feature values then 1. leaf_normal_equations sums them; numpy
solves the small systems. A row missing (NaN) any of its leaf's features
takes no part in the fit and is predicted by the leaf's constant value
instead; add_linear_parts adds, for the others, the linear prediction less
that constant value (which the tree's walk has added already).
"""
from cython.parallel cimport prange

from .common cimport G_H_t, NODE_t, ROW_t

ctypedef fused X_IN_t:
    float
    double


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
                          long long[::1] n_used,
                          int n_threads):
    """For each leaf l (its rows rows[leaf_start[l]:leaf_stop[l]], its p
    features features[feature_start[l]:feature_start[l + 1]]) and each
    output j of grad's w: ZHZ[l, j, :p + 1, :p + 1] += h z z' (the upper
    triangle only) and Zg[l, j, :p + 1] += g_j z over the rows with none of
    the features missing, z their values then 1; n_used[l] counts them.
    hess: (n, w), a hessian per output; (n, 1), one for every output; or
    (n, 0), a constant that the caller multiplies in (ZHZ then holds the
    sums of z z' alone). ZHZ's second axis is w, or 1 when the outputs share
    a hessian. row_scratch: (n_leaves, p_max + 1), a row's z per leaf, so
    that threads working on other leaves never share one. The sums are
    added to what the arrays hold."""
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
    if ZHZ.shape[3] != size or Zg.shape[2] != size or row_scratch.shape[1] != size:
        raise ValueError(f"the sums and the scratch need {size} entries a row of z")
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
        z[p] = 1.0
        for s in range(leaf_start[l], leaf_stop[l]):
            row = rows[s]
            values = (<const char*> &X[0, 0]) + row * row_stride
            complete = True
            for a in range(p):
                x = (<const X_IN_t*> (values + leaf_features[a] * feature_stride))[0]
                if x != x:
                    complete = False
                    break
                z[a] = x
            if not complete:
                continue
            n_used[l] += 1
            sums = &Zg[l, 0, 0]
            for j in range(width):
                g = grad[row, j]
                for a in range(p + 1):
                    sums[j * size + a] += g * z[a]
            sums = &ZHZ[l, 0, 0, 0]
            for j in range(1 if shared else width):
                if hess_width == 0:
                    h = 1.0
                else:
                    h = hess[row, 0 if shared else j]
                for a in range(p + 1):
                    hz = h * z[a]
                    for c in range(a, p + 1):
                        sums[(j * size + a) * size + c] += hz * z[c]


def add_linear_parts(const X_IN_t[:, :] X,
                     const NODE_t[:, ::1] leaf,
                     const long long[::1] feature_start,
                     const int[::1] features,
                     const long long[::1] coefficient_start,
                     const double[::1] coefficients,
                     const long long[::1] value_start,
                     const long long[::1] output_start,
                     const double[::1] intercepts,
                     const int[::1] outputs,
                     double scale,
                     double[:, ::1] out,
                     int n_threads,
                     const double[::1] fallback=None):
    """out[i] += scale * (intercepts + coefficients times X[i]'s values) of
    each leaf leaf[i, t], a leaf index into the flat leaves as LeafArrays lays
    them out (value_start, output_start and outputs; intercepts are where its
    values would be). Leaf l's p features are features[feature_start[l]:
    feature_start[l + 1]], its coefficients a (p, width) block at
    coefficient_start[l]. A row missing any of its leaf's features, and any
    row of a leaf without features, adds fallback's values of the leaf (the
    constant values) instead, or nothing without fallback (a prediction
    whose walk added the constant values already, and whose intercepts are
    then the intercepts less them)."""
    cdef Py_ssize_t n = X.shape[0], n_trees = leaf.shape[1], d = out.shape[1]
    cdef Py_ssize_t n_leaves = value_start.shape[0] - 1
    cdef Py_ssize_t row_stride = X.strides[0], feature_stride = X.strides[1]
    cdef Py_ssize_t i, t, a, k, l, p, width, m
    cdef long long first_feature, first_value, first_coefficient, listed
    cdef double x, total
    cdef const char* values
    cdef bint complete
    cdef bint falls_back = fallback is not None
    if leaf.shape[0] != n or out.shape[0] != n:
        raise ValueError(f"leaf and out need X's {n} rows; got {leaf.shape[0]} and "
                         f"{out.shape[0]}")
    if feature_start.shape[0] != n_leaves + 1 or coefficient_start.shape[0] != n_leaves \
            or output_start.shape[0] != n_leaves \
            or intercepts.shape[0] != value_start[n_leaves] \
            or (falls_back and fallback.shape[0] != value_start[n_leaves]):
        raise ValueError(f"every per-leaf array needs the {n_leaves} leaves")
    for l in range(n_leaves):
        p = feature_start[l + 1] - feature_start[l]
        width = value_start[l + 1] - value_start[l]
        if p < 0 or feature_start[l + 1] > features.shape[0] or width < 0 \
                or coefficient_start[l] < 0 \
                or coefficient_start[l] + p * width > coefficients.shape[0] \
                or (output_start[l] < 0 and width != d) \
                or (output_start[l] >= 0 and output_start[l] + width > outputs.shape[0]):
            raise ValueError(f"leaf {l}'s features, coefficients or outputs fall outside "
                             "their arrays")
    for m in range(features.shape[0]):
        if not 0 <= features[m] < X.shape[1]:
            raise ValueError(f"feature {features[m]} is not one of X's {X.shape[1]}")
    for m in range(outputs.shape[0]):
        if not 0 <= outputs[m] < d:
            raise ValueError(f"output {outputs[m]} is not one of out's {d}")
    for i in range(n):
        for t in range(n_trees):
            if not 0 <= leaf[i, t] < n_leaves:
                raise ValueError(f"leaf {leaf[i, t]} is not one of the {n_leaves}")
    if n == 0:
        return
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads,
                    use_threads_if=n_threads > 1):
        values = (<const char*> &X[0, 0]) + i * row_stride
        for t in range(n_trees):
            l = leaf[i, t]
            first_feature = feature_start[l]
            p = feature_start[l + 1] - first_feature
            complete = p > 0
            for a in range(p):
                x = (<const X_IN_t*> (values + features[first_feature + a] * feature_stride))[0]
                if x != x:
                    complete = False
                    break
            if not complete and not falls_back:
                continue
            first_value = value_start[l]
            width = value_start[l + 1] - first_value
            first_coefficient = coefficient_start[l]
            listed = output_start[l]
            for k in range(width):
                if complete:
                    total = intercepts[first_value + k]
                    for a in range(p):
                        x = (<const X_IN_t*> (values + features[first_feature + a]
                                              * feature_stride))[0]
                        total = total + coefficients[first_coefficient + a * width + k] * x
                else:
                    total = fallback[first_value + k]
                out[i, k if listed < 0 else outputs[listed + k]] += scale * total
