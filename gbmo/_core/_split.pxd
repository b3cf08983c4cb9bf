from .common cimport HIST_t


cdef struct CategoryRules:
    # how search_categories forms a categorical feature's sets (LightGBM's
    # parameters of the same names)
    double cat_smooth          # added to each category's hessian when ordering; and
                               # categories of fewer rows join no set
    double cat_l2              # added to lambda_l2 when scoring a set's children
    double min_data_per_group  # rows of each group of categories a set grows by
    Py_ssize_t max_cat_threshold  # categories in a set at most
    Py_ssize_t max_cat_to_onehot  # features of at most this many bins: one category a set


cdef struct SplitContext:
    Py_ssize_t n_outputs
    Py_ssize_t hess_width
    double hess_constant
    double lambda_l2
    double lambda_l1
    double min_samples_leaf
    double min_child_weight
    const HIST_t* parent
    double parent_score
    # sparse top-k search only (top_k == 0: dense)
    Py_ssize_t top_k
    bint restricted
    # monotone constraints (NULL: none): per feature and output -1, 0 or +1,
    # and the node's bounds on its leaf values, per output
    const signed char* monotone
    const double* lower
    const double* upper
    # categorical features (NULL: none): per feature 1 when its bins are
    # categories, ordered at each node (order_categories), and the rules of
    # their sets (search_categories)
    const unsigned char* categorical
    CategoryRules rules
    int* category_order        # out: (n_features, histogram rows), each one's order
    Py_ssize_t order_stride


cdef void dense_context(SplitContext* context, const HIST_t* parent, HIST_t* shrunk_parent,
                        Py_ssize_t n_outputs, Py_ssize_t hess_width, double hess_constant,
                        double lambda_l2, double lambda_l1, double min_samples_leaf,
                        double min_child_weight, const signed char* monotone,
                        const double* lower, const double* upper) noexcept nogil

cdef void clipped_leaf_values(const HIST_t* sums, Py_ssize_t n_outputs, Py_ssize_t hess_width,
                              double hess_constant, double lambda_l2, double lambda_l1,
                              const double* lower, const double* upper, HIST_t* shrunk,
                              double* values) noexcept nogil

cdef void search_features(const SplitContext* context,
                          const HIST_t* hist,
                          Py_ssize_t n_hist_bins,
                          const int* features,
                          Py_ssize_t n_features,
                          const int* n_bins_non_missing,
                          double* best_gain,
                          int* best_bin,
                          unsigned char* best_missing_left,
                          int n_threads,
                          const int* random_bins) noexcept nogil

cdef Py_ssize_t best_feature_position(const int* features, Py_ssize_t n_features,
                                      const double* best_gain) noexcept nogil

cdef CategoryRules category_rules(double cat_smooth, double cat_l2, double min_data_per_group,
                                  Py_ssize_t max_cat_threshold,
                                  Py_ssize_t max_cat_to_onehot) except *
