"""Linear leaves (linear_tree=True), as LightGBM's linear trees with a vector
of outputs: a leaf predicts an intercept plus coefficients times the raw
values of the numeric features its path splits on, one set of coefficients
per output; a row missing (NaN) one of those features gets the leaf's
constant value instead.

Each leaf's model is one Newton step of the loss on the leaf's training rows
(Zhang et al.'s linear trees, LightGBM's Eq. 3): for output j,
(Z' H_j Z + linear_lambda I') beta_j = -Z' g_j, Z the rows' feature values
and a column of ones, H_j their hessians, I' the identity without the
intercept's entry (the intercept is not penalised). When the outputs share a
hessian (mse, weights) every output's system has one matrix. The kernels are
in _core/_linear.pyx.
"""
from dataclasses import dataclass

import numpy as np

from ._core import NODE_DTYPE
from ._core._linear import add_linear_parts, leaf_normal_equations
from .missing_values import as_read


@dataclass
class LinearLeaves:
    """A tree's linear leaves: leaf l's features are features[start:start +
    feature_counts[l]] (start: the counts before it) with coefficients
    coefficients[start:start + feature_counts[l]] (a row a feature, a column
    a value of the leaf, as leaf_values), and its intercepts intercepts[l]. A
    leaf of no features predicts its constant value (leaf_values) alone."""
    feature_counts: np.ndarray  # (n_leaves,) int32
    features: np.ndarray        # (sum of the counts,) int32
    coefficients: np.ndarray    # (sum of the counts, width) float64
    intercepts: np.ndarray      # (n_leaves, width) float64

    def scale(self, factor):
        """Multiplies the leaves' predictions by factor (as a tree's values are)."""
        self.coefficients *= factor
        self.intercepts *= factor

    def to_dict(self):
        return {"leaf_feature_counts": self.feature_counts.tolist(),
                "leaf_features": self.features.tolist(),
                "leaf_coefficients": self.coefficients.tolist(),
                "leaf_intercepts": self.intercepts.tolist()}


def check_linear_X(is_sparse, params):
    """linear_tree reads a row's values of a leaf's features, which a sparse
    X's kernels do not keep at hand."""
    if is_sparse and params["linear_tree"]:
        raise ValueError("linear_tree=True needs a dense X: its leaves multiply the rows' "
                         "feature values; pass X.toarray(), or train without linear_tree")


def linear_values(X, params):
    """X's values as a model of params reads them (missing values as it
    reads them), dense: what linear leaves multiply."""
    X = as_read(X, params)
    return X.toarray() if hasattr(X, "toarray") else X


def path_features(tree, numeric):
    """Each leaf's numeric features split on along its path, sorted: a list
    of arrays by leaf. numeric: (n_features,) bool."""
    on_path = [()] * tree.n_nodes
    by_leaf = [None] * tree.n_leaves
    for node in range(tree.n_nodes):  # a parent comes before its children
        if tree.node_left[node] < 0:
            by_leaf[tree.node_value[node]] = np.array(sorted(set(on_path[node])),
                                                      dtype=np.int32)
            continue
        feature = int(tree.node_feature[node])
        below = on_path[node] + ((feature,) if numeric[feature]
                                 and node not in tree.categories_left else ())
        on_path[tree.node_left[node]] = on_path[tree.node_right[node]] = below
    return by_leaf


def fit_linear_leaves(tree, X, rows, leaf_start, leaf_stop, grad, hess, hess_constant,
                      numeric, linear_lambda, shrinkage, n_threads):
    """The LinearLeaves of a grown tree (its leaf_values already shrunk) from
    its training rows (rows grouped by leaf, as the grower leaves them), their
    raw values X (as the model reads X), and the gradients it was grown on:
    grad (n, width), hess (n, width), (n, 1) or, with hess_constant, (n, 0).
    A leaf keeps only its constant value when its path has no numeric
    feature, when fewer of its rows than its features + 1 have all of them,
    or when its system has no finite solution."""
    width = tree.leaf_values.shape[1]
    by_leaf = path_features(tree, numeric)
    counts = np.array([len(features) for features in by_leaf], dtype=np.int32)
    feature_start = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=feature_start[1:])
    features = np.concatenate(by_leaf + [np.zeros(0, dtype=np.int32)])
    size = int(counts.max(initial=0)) + 1
    shared = hess.shape[1] <= 1 or width == 1
    ZHZ = np.zeros((len(counts), 1 if shared else width, size, size))
    Zg = np.zeros((len(counts), width, size))
    n_used = np.zeros(len(counts), dtype=np.int64)
    if size > 1:
        leaf_normal_equations(X, rows, np.asarray(leaf_start, dtype=np.intp),
                              np.asarray(leaf_stop, dtype=np.intp), feature_start, features,
                              grad, hess, ZHZ, Zg, np.zeros((len(counts), size)), n_used,
                              n_threads)
    coefficients, intercepts = [], tree.leaf_values.copy()
    for leaf, p in enumerate(counts):
        beta = None
        if p and n_used[leaf] > p:
            beta = _solved(ZHZ[leaf, :, :p + 1, :p + 1] * hess_constant, Zg[leaf, :, :p + 1],
                           linear_lambda)
        if beta is None:
            counts[leaf] = 0
            continue
        coefficients.append(beta[:p] * shrinkage)
        intercepts[leaf] = beta[p] * shrinkage
    kept = np.repeat(counts > 0, np.diff(feature_start))
    return LinearLeaves(counts, np.ascontiguousarray(features[kept]),
                        np.concatenate(coefficients + [np.zeros((0, width))]), intercepts)


def _solved(upper, Zg, linear_lambda):
    """beta (p + 1, width) of the normal equations whose matrices' upper
    triangles are upper (m, p + 1, p + 1), m 1 (shared) or width, and whose
    right-hand sides are -Zg (width, p + 1); None when they have no finite
    solution. A singular system (features equal on the leaf's rows, with no
    penalty) takes its least-squares solution of least norm."""
    matrices = upper + np.swapaxes(np.triu(upper, 1), 1, 2)
    p = matrices.shape[1] - 1
    matrices[:, np.arange(p), np.arange(p)] += linear_lambda
    rhs = -Zg
    try:
        if len(matrices) == 1:
            beta = np.linalg.solve(matrices[0], rhs.T)
        else:
            beta = np.linalg.solve(matrices, rhs[:, :, None])[:, :, 0].T
    except np.linalg.LinAlgError:
        beta = np.column_stack([
            np.linalg.lstsq(matrices[min(j, len(matrices) - 1)], rhs[j], rcond=None)[0]
            for j in range(len(rhs))])
    return beta if np.all(np.isfinite(beta)) else None


def linear_kernel_arguments(linear_leaves, n_leaves, leaves):
    """add_linear_parts' arguments for trees of n_leaves leaves each (a
    packed forest's, or one tree's), laid out flat as leaves (LeafArrays),
    of which those in linear_leaves ({tree: LinearLeaves}) have linear
    leaves: each leaf's feature range, the features, each leaf's coefficient
    offset, the coefficients, and, where the values are, each leaf's
    intercepts less its constant values (0 in the other trees)."""
    first_leaf = np.cumsum(n_leaves) - n_leaves
    counts = np.zeros(int(np.sum(n_leaves)), dtype=np.int64)
    shift = np.zeros(len(leaves.values))
    linear = sorted(linear_leaves.items())
    for t, tree_leaves in linear:
        first = first_leaf[t]
        counts[first:first + n_leaves[t]] = tree_leaves.feature_counts
        value_span = slice(leaves.value_start[first], leaves.value_start[first + n_leaves[t]])
        shift[value_span] = tree_leaves.intercepts.ravel() - leaves.values[value_span]
    feature_start = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=feature_start[1:])
    coefficient_start = np.zeros(len(counts), dtype=np.int64)
    np.cumsum((counts * np.diff(leaves.value_start))[:-1], out=coefficient_start[1:])
    return (feature_start,
            np.concatenate([leaves.features for _, leaves in linear]
                           + [np.zeros(0, dtype=np.int32)]),
            coefficient_start,
            np.concatenate([leaves.coefficients.ravel() for _, leaves in linear] + [np.zeros(0)]),
            leaves.value_start, leaves.output_start, shift, leaves.kernel_arguments()[3])


def tree_linear_arguments(tree):
    """linear_kernel_arguments of one tree with linear leaves."""
    return linear_kernel_arguments({0: tree.linear_leaves}, [tree.n_leaves], tree.leaf_arrays())


def add_linear_predictions(X, leaf, arguments, scale, out, n_threads):
    """out += scale * the linear leaves' part of the prediction (beyond the
    constant values) of the rows of X, each in the leaves leaf (n, n_trees)
    of the flat leaves that arguments (linear_kernel_arguments) describe."""
    add_linear_parts(X, np.ascontiguousarray(leaf, dtype=NODE_DTYPE), *arguments, scale, out,
                     n_threads)
