# Adding a leaf's values to a row of raw scores, shared by the dense-X and the
# CSR-X traversals (_predict.pyx, _sparse.pyx). Leaf l's values are
# values[value_start[l]:value_start[l + 1]]: a dense leaf (output_start[l] < 0)
# holds all d outputs in order, a sparse leaf only the outputs listed at
# outputs[output_start[l]:], so adding it costs its k values rather than d.


cdef inline void add_scaled_leaf(double* out_row, Py_ssize_t d, Py_ssize_t leaf, double scale,
                                 const long long* value_start, const long long* output_start,
                                 const double* values, const int* outputs) noexcept nogil:
    cdef long long first = value_start[leaf]
    cdef long long n_values = value_start[leaf + 1] - first
    cdef long long listed = output_start[leaf]
    cdef Py_ssize_t m
    if listed < 0:
        for m in range(d):
            out_row[m] += scale * values[first + m]
    else:
        for m in range(n_values):
            out_row[outputs[listed + m]] += scale * values[first + m]


cdef inline void add_leaf(double* out_row, Py_ssize_t d, Py_ssize_t leaf,
                          const long long* value_start, const long long* output_start,
                          const double* values, const int* outputs) noexcept nogil:
    # inlined with the constant scale, which the compiler folds away (x * 1.0 is x)
    add_scaled_leaf(out_row, d, leaf, 1.0, value_start, output_start, values, outputs)


cdef inline void start_row(double* out_row, const double* init_score, Py_ssize_t d) noexcept nogil:
    cdef Py_ssize_t m
    for m in range(d):
        out_row[m] = init_score[m]


cdef inline int check_prediction_shapes(Py_ssize_t n_rows, Py_ssize_t n_init_scores,
                                        Py_ssize_t out_rows, Py_ssize_t d) except -1:
    """start_row reads d initial scores and writes out's rows: both must fit."""
    if n_init_scores != d or out_rows != n_rows:
        raise ValueError(f"out must be ({n_rows}, d) and init_score (d,); got out with "
                         f"{out_rows} rows and {d} columns, init_score of {n_init_scores}")
    return 0
