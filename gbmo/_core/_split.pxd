from libc.stdint cimport uint64_t

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


cdef struct ValueBounds:
    # what bounds a node's leaf values (monotone constraints, max_delta_step,
    # path_smooth): each value w_j = -T(G_j) / (H_j + lambda) is first cut to
    # +-max_output (max_delta_step; inf for none), then, when path_smooth > 0,
    # pulled toward anchor_j, its parent's value, as LightGBM smooths a path
    # (w n / (n + path_smooth) + anchor path_smooth / (n + path_smooth), n
    # the node's rows), then clipped to [lower_j, upper_j]
    const double* lower
    const double* upper
    const double* anchor       # NULL when path_smooth is 0
    double path_smooth
    double max_output


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
    # and what bounds the node's leaf values (also for max_delta_step and
    # path_smooth, which search with every direction 0)
    const signed char* monotone
    ValueBounds bounds
    # categorical features (NULL: none): per feature 1 when its bins are
    # categories, ordered at each node (order_categories), and the rules of
    # their sets (search_categories)
    const unsigned char* categorical
    CategoryRules rules
    int* category_order        # out: (n_features, histogram rows), each one's order
    Py_ssize_t order_stride
    # random_strength (noise_scale 0: none): a candidate whose gain exceeds
    # least_gain (>= 0: min_gain times the outputs its average counts, so
    # that a split the grower would refuse never wins) competes with its gain
    # plus noise_scale * sqrt(2 gain + parent_score) times a standard normal
    # draw that noise_key and the candidate fix (split_noise); noiseless_gain
    # (out, per feature) keeps the kept candidate's own gain
    double noise_scale
    uint64_t noise_key
    double least_gain
    double* noiseless_gain


cdef void dense_context(SplitContext* context, const HIST_t* parent, HIST_t* shrunk_parent,
                        Py_ssize_t n_outputs, Py_ssize_t hess_width, double hess_constant,
                        double lambda_l2, double lambda_l1, double min_samples_leaf,
                        double min_child_weight, const signed char* monotone,
                        const ValueBounds* bounds) noexcept nogil

cdef void clipped_leaf_values(const HIST_t* sums, Py_ssize_t n_outputs, Py_ssize_t hess_width,
                              double hess_constant, double lambda_l2, double lambda_l1,
                              const ValueBounds* bounds, HIST_t* shrunk,
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

# Work search_nodes runs for each feature before searching it, on the same
# thread: given its state and the feature.
ctypedef void (*FeaturePrelude)(void* state, int feature) noexcept nogil

cdef void search_nodes(const SplitContext** contexts, const HIST_t** hists, Py_ssize_t n_nodes,
                       Py_ssize_t n_hist_bins, const int* features, Py_ssize_t n_features,
                       const unsigned char** searched, const int* n_bins_non_missing,
                       double** best_gain, int** best_bin, unsigned char** best_missing_left,
                       const int** random_bins, int n_threads, FeaturePrelude prelude,
                       void* prelude_state) noexcept nogil

cdef Py_ssize_t best_feature_position(const int* features, Py_ssize_t n_features,
                                      const double* best_gain) noexcept nogil

cdef CategoryRules category_rules(double cat_smooth, double cat_l2, double min_data_per_group,
                                  Py_ssize_t max_cat_threshold,
                                  Py_ssize_t max_cat_to_onehot) except *
