# A linear leaf's part of a row's prediction (linear_tree, gbmo.linear_leaves),
# shared by the dense-X walk (_predict.pyx), which adds it right after the
# leaf's constant values, and by the training scores' update (_linear.pyx),
# which adds the two in the same order, so that the scores a run keeps are
# predict's to the last bit.

ctypedef fused X_IN_t:
    float
    double

cdef enum:
    # a leaf's first features whose values add_linear_part reads once into
    # a local array (a path rarely splits on more); any further ones are read
    # again for each output
    GATHERED_FEATURES = 64


cdef struct LinearLeaves:
    # leaf l's p features are features[feature_start[l]:feature_start[l + 1]],
    # its coefficients a (p, width) block at coefficient_start[l], and shift,
    # where the leaf's values are, its intercepts less its constant values.
    # feature_start NULL: no linear leaves.
    const long long* feature_start
    const int* features
    const long long* coefficient_start
    const double* coefficients
    const double* shift


cdef inline void add_linear_part(double* out_row, const X_IN_t* x_row, Py_ssize_t feature_stride,
                                 Py_ssize_t leaf, const LinearLeaves* linear,
                                 const long long* value_start, const long long* output_start,
                                 const int* outputs, double scale) noexcept nogil:
    """out_row += scale * (shift + coefficients times the row's values) of the
    leaf: a linear leaf's prediction less its constant values. Nothing for a
    leaf without features, or a row missing (NaN) one of them or holding an
    infinite value there (which a line would carry to every output), whose
    prediction is the constant values. feature_stride in bytes."""
    cdef const char* row = <const char*> x_row
    cdef long long first_feature = linear.feature_start[leaf]
    cdef Py_ssize_t p = linear.feature_start[leaf + 1] - first_feature
    cdef long long first_value, first_coefficient, listed
    cdef Py_ssize_t a, k, width
    cdef double x, total
    cdef double gathered[GATHERED_FEATURES]
    for a in range(p):
        x = (<const X_IN_t*> (row + linear.features[first_feature + a] * feature_stride))[0]
        if x - x != 0.0:  # NaN or infinite
            return
        if a < GATHERED_FEATURES:
            gathered[a] = x
    if p == 0:
        return
    first_value = value_start[leaf]
    width = value_start[leaf + 1] - first_value
    first_coefficient = linear.coefficient_start[leaf]
    listed = output_start[leaf]
    for k in range(width):
        total = linear.shift[first_value + k]
        for a in range(p):
            if a < GATHERED_FEATURES:
                x = gathered[a]
            else:
                x = (<const X_IN_t*> (row + linear.features[first_feature + a]
                                      * feature_stride))[0]
            total = total + linear.coefficients[first_coefficient + a * width + k] * x
        out_row[k if listed < 0 else outputs[listed + k]] += scale * total


cdef inline LinearLeaves linear_leaves_of(const long long[::1] feature_start,
                                          const int[::1] features,
                                          const long long[::1] coefficient_start,
                                          const double[::1] coefficients,
                                          const double[::1] shift,
                                          const long long[::1] value_start,
                                          const long long[::1] output_start,
                                          const int[::1] outputs,
                                          Py_ssize_t n_features, Py_ssize_t d) except *:
    """The LinearLeaves of these arrays for leaves laid out by value_start,
    output_start and outputs (LeafArrays), checked to stay inside their
    arrays, X's n_features and d outputs; feature_start NULL when
    feature_start is None."""
    cdef LinearLeaves linear
    cdef Py_ssize_t n_leaves = value_start.shape[0] - 1
    cdef Py_ssize_t l, m, p, width
    linear.feature_start = NULL
    if feature_start is None:
        return linear
    for l in range(n_leaves + 1):
        if value_start[l] < (0 if l == 0 else value_start[l - 1]):
            raise ValueError(f"value_start must not decrease from 0 (leaf {l})")
    if feature_start.shape[0] != n_leaves + 1 or coefficient_start.shape[0] != n_leaves \
            or output_start.shape[0] != n_leaves or shift.shape[0] != value_start[n_leaves]:
        raise ValueError(f"every linear leaf array needs the {n_leaves} leaves")
    for l in range(n_leaves):
        p = feature_start[l + 1] - feature_start[l]
        width = value_start[l + 1] - value_start[l]
        if p < 0 or feature_start[l] < 0 or feature_start[l + 1] > features.shape[0] \
                or width < 0 or coefficient_start[l] < 0 \
                or coefficient_start[l] + p * width > coefficients.shape[0] \
                or (output_start[l] < 0 and width != d) \
                or (output_start[l] >= 0 and output_start[l] + width > outputs.shape[0]):
            raise ValueError(f"leaf {l}'s features, coefficients or outputs fall outside "
                             "their arrays")
    for m in range(features.shape[0]):
        if not 0 <= features[m] < n_features:
            raise ValueError(f"feature {features[m]} is not one of X's {n_features}")
    for m in range(outputs.shape[0]):
        if not 0 <= outputs[m] < d:
            raise ValueError(f"output {outputs[m]} is not one of out's {d}")
    linear.feature_start = &feature_start[0]
    linear.features = &features[0] if features.shape[0] else NULL
    linear.coefficient_start = &coefficient_start[0] if n_leaves else NULL
    linear.coefficients = &coefficients[0] if coefficients.shape[0] else NULL
    linear.shift = &shift[0] if shift.shape[0] else NULL
    return linear
