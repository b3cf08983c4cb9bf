"""Linear leaves (linear_tree=True), as LightGBM's linear trees with a vector
of outputs: a leaf predicts an intercept plus coefficients times the raw
values of the numeric features its path splits on, one set of coefficients
per output; a row missing (NaN) one of those features, or holding an
infinite value there, gets the leaf's constant value instead.

Each leaf's model is one Newton step of the loss on the leaf's training rows
(LightGBM's, after Eq. 3 of Friedberg et al.'s local linear forests): for
output j, (Z' H_j Z + linear_lambda I') beta_j = -Z' g_j, Z the rows'
feature values and a column of ones, H_j their hessians, I' the identity
without the intercept's entry (the intercept is not penalised). When the
outputs share a hessian (mse, weights) every output's system has one
matrix. The sums are the kernels' (_core/_linear.pyx); numpy solves the
small systems, on the features centred on the leaf's means (_solved).
"""
from dataclasses import dataclass

import numpy as np

from ._core import NODE_DTYPE
from ._core._linear import add_linear_parts, leaf_normal_equations
from .missing_values import as_read
from .parallel import WORK_PER_ELEMENT, threads_for

# the least eigenvalue of a leaf's system, scaled to a unit diagonal, over its
# largest, whose direction a line keeps, and the least variance of a feature
# on a leaf's rows over its mean square that gives it a slope (see _solved)
SINGULAR = 1e-12
CONSTANT = 1e-10
# the least spread (sum of hessian-weighted squares about the mean) of a
# feature on a leaf's rows that gives it a slope: below it the unit-diagonal
# scaling (1 / sqrt of it, times another feature's) overflows, and a feature
# of values near 1e-160 took every other feature's slope with it
SMALLEST_SPREAD = 1e-300


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

    def sloped_outputs(self, tree, n_outputs):
        """(n_outputs,) bool: the outputs a line of tree (whose leaves these
        are) moves, a coefficient of theirs not 0."""
        sloped = np.zeros(n_outputs, dtype=bool)
        moved = self.coefficients != 0  # (features, width)
        if tree.leaf_outputs is None:
            sloped |= moved.any(axis=0)
        else:
            leaf_of_feature = np.repeat(np.arange(tree.n_leaves), self.feature_counts)
            sloped[tree.leaf_outputs[leaf_of_feature][moved]] = True
        return sloped

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
                      by_leaf, linear_lambda, shrinkage, n_threads):
    """The LinearLeaves of a grown tree (its leaf_values already shrunk) from
    its training rows (rows grouped by leaf, as the grower leaves them), their
    raw values X (as the model reads X), and the gradients that set its
    leaves: grad (n, width), hess (n, width), (n, 1) or, with hess_constant,
    (n, 0); by_leaf: each leaf's features (path_features', or a refit's
    existing ones).
    A leaf keeps only its constant value when its path has no numeric
    feature, when fewer of its rows than its features + 1 have all of them,
    when every slope comes out 0, or when its sums or solution overflow;
    None when no leaf has a line."""
    width = tree.leaf_values.shape[1]
    counts = np.array([len(features) for features in by_leaf], dtype=np.int32)
    feature_start = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=feature_start[1:])
    features = np.concatenate(by_leaf + [np.zeros(0, dtype=np.int32)])
    size = int(counts.max(initial=0)) + 1
    shared = hess.shape[1] <= 1 or width == 1
    ZHZ = np.zeros((len(counts), 1 if shared else width, size, size))
    Zg = np.zeros((len(counts), width, size))
    n_used = np.zeros(len(counts), dtype=np.int64)
    origins = np.zeros((len(counts), size))
    if size > 1:
        leaf_normal_equations(X, rows, np.asarray(leaf_start, dtype=np.intp),
                              np.asarray(leaf_stop, dtype=np.intp), feature_start, features,
                              grad, hess, ZHZ, Zg, np.zeros((len(counts), size)), origins,
                              n_used, threads_for(n_threads, len(rows) * size * (size + width)))
    coefficients = np.zeros((len(features), width))
    intercepts = tree.leaf_values.copy()
    fitted = (counts > 0) & (n_used > counts)
    leaves = np.flatnonzero(fitted)
    # every leaf's system in one call: a leaf of fewer features has zero rows
    # beyond them, which _solved gives slope 0 as it would a constant feature
    # (a call per leaf size was most of a small tree's fit)
    upper = ZHZ[leaves] * hess_constant
    solved = _solved(upper[:, 0] if shared else upper, Zg[leaves], linear_lambda) * shrinkage
    slopes = solved[:, :-1]
    # the sums were about each leaf's origin: the intercept at 0 is moved back
    solved[:, -1] -= np.einsum("lf,lfw->lw", origins[leaves, :-1], slopes)
    # a leaf of no slope keeps its constant values (lambda_l2's and lambda_l1's
    # pull, a loss's own leaf values), which an intercept would replace
    kept = np.all(np.isfinite(solved), axis=(1, 2)) & np.any(slopes != 0, axis=(1, 2))
    fitted[leaves[~kept]] = False
    leaves, slopes, solved = leaves[kept], slopes[kept], solved[kept]
    used = np.arange(size - 1) < counts[leaves][:, None]  # (leaves, size - 1)
    coefficients[(feature_start[leaves][:, None] + np.arange(size - 1))[used]] = slopes[used]
    intercepts[leaves] = solved[:, -1]
    if not fitted.any():
        return None
    counts[~fitted] = 0
    kept = np.repeat(fitted, np.diff(feature_start))
    return LinearLeaves(counts, np.ascontiguousarray(features[kept]),
                        np.ascontiguousarray(coefficients[kept]), intercepts)


def leaf_features(linear_leaves):
    """Each leaf's features, a list of arrays by leaf."""
    stops = np.cumsum(linear_leaves.feature_counts)
    return np.split(linear_leaves.features, stops[:-1])


def refitted_linear_leaves(tree, fitted, decay_rate, new_values):
    """tree's linear leaves with decay_rate of each line kept and 1 -
    decay_rate of fitted's taken (a LinearLeaves of the same features, as
    fit_linear_leaves gives them, or None), as refit blends leaf values
    (tree's leaf_values are the blended ones already). A leaf that fitted
    gives no line (no new row reaches it, too few whole rows, no slope)
    blends toward the new rows' constant, new_values (shrunk, not blended):
    its intercept as a value, its slopes toward 0 (LightGBM sets them to 0
    there). A leaf of no features keeps its constant values as intercepts."""
    old = tree.linear_leaves
    refit_leaves = (np.zeros(tree.n_leaves, dtype=bool) if fitted is None
                    else fitted.feature_counts > 0)
    refit_rows = np.repeat(refit_leaves, old.feature_counts)
    coefficients = decay_rate * old.coefficients
    intercepts = decay_rate * old.intercepts + (1.0 - decay_rate) * new_values
    if fitted is not None:
        coefficients[refit_rows] += (1.0 - decay_rate) * fitted.coefficients
        intercepts[refit_leaves] = (decay_rate * old.intercepts[refit_leaves]
                                    + (1.0 - decay_rate) * fitted.intercepts[refit_leaves])
    featureless = old.feature_counts == 0
    intercepts[featureless] = tree.leaf_values[featureless]
    return LinearLeaves(old.feature_counts.copy(), old.features.copy(), coefficients, intercepts)


def _solved(upper, Zg, linear_lambda):
    """beta (leaves, p + 1, width) of leaves' normal equations whose matrices'
    upper triangles are upper, (leaves, p + 1, p + 1) when every output
    shares one or (leaves, width, p + 1, p + 1), and whose right-hand sides
    are -Zg (leaves, width, p + 1); the intercept comes last. The slopes are
    solved on the features centred on the leaf's (hessian-weighted) means,
    which takes the intercept out (its Schur complement), and each centred
    matrix is scaled to a unit diagonal: a feature constant on the leaf's rows
    then gets slope 0 and the intercept its level, features of other scales
    (an income beside a rate) keep exact slopes, and of directions that the
    rows do not determine (collinear features, rows of hessian 0) below
    SINGULAR of the largest, the least-squares solution of least norm keeps
    none. A system of no hessian at all gives NaN. Solved together, a call
    for all: numpy's cost per call was most of a small tree's fit."""
    matrices = upper + np.swapaxes(np.triu(upper, 1), -1, -2)
    if matrices.ndim == 3:
        matrices = matrices[:, None]  # one matrix for every output
    # sums that overflowed (values near the float range) make no line
    overflowed = ~np.all(np.isfinite(matrices), axis=(-2, -1))
    matrices = np.where(overflowed[..., None, None], 0.0, matrices)
    p = matrices.shape[-1] - 1
    cross, hessian = matrices[..., :p, p], matrices[..., p, p]  # (leaves, m, p), (leaves, m)
    weighted = np.where(hessian > 0, hessian, 1.0)
    centred = (matrices[..., :p, :p]
               - cross[..., :, None] * cross[..., None, :] / weighted[..., None, None])
    # a feature whose spread about its mean is within the sums' rounding of
    # its mean square is constant on the leaf's rows: no slope
    spread = np.diagonal(centred, axis1=-2, axis2=-1)
    constant = ((spread <= CONSTANT * np.diagonal(matrices[..., :p, :p], axis1=-2, axis2=-1))
                | (spread < SMALLEST_SPREAD))
    centred[constant[..., :, None] | constant[..., None, :]] = 0.0
    centred[..., np.arange(p), np.arange(p)] += linear_lambda
    diagonal = np.diagonal(centred, axis1=-2, axis2=-1)
    unit = np.where(diagonal > 0, 1.0 / np.sqrt(np.where(diagonal > 0, diagonal, 1.0)), 1.0)
    scaling = unit[..., :, None] * unit[..., None, :]
    inverses = np.linalg.pinv(centred * scaling, rcond=SINGULAR, hermitian=True) * scaling
    slope_sums, level_sums = Zg[..., :p], Zg[..., p]  # (leaves, width, p), (leaves, width)
    centred_sums = np.where(constant, 0.0, cross * (level_sums / weighted)[..., None] - slope_sums)
    slopes = (inverses @ centred_sums[..., None])[..., 0]
    intercepts = np.where((hessian > 0) & ~overflowed,
                          (-level_sums - np.sum(cross * slopes, axis=-1)) / weighted, np.nan)
    return np.swapaxes(np.concatenate([slopes, intercepts[..., None]], axis=-1), 1, 2)


def linear_kernel_arguments(linear_leaves, n_leaves, leaves):
    """The arrays of linear.pxd's LinearLeaves for trees of n_leaves leaves
    each (a packed forest's, or one tree's), laid out flat as leaves
    (LeafArrays), of which those in linear_leaves ({tree: LinearLeaves}) have
    linear leaves: each leaf's feature range, the features, each leaf's
    coefficient offset, the coefficients, and, where the values are, the
    intercepts less the constant values (0 in the other trees)."""
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
            np.concatenate([tree_leaves.features for _, tree_leaves in linear]
                           + [np.zeros(0, dtype=np.int32)]),
            coefficient_start,
            np.concatenate([tree_leaves.coefficients.ravel() for _, tree_leaves in linear]
                           + [np.zeros(0)]),
            shift)


def add_tree_predictions(X, leaf, tree, scale, out, n_threads):
    """out += scale * the predictions of a tree with linear leaves for the
    rows of X, each in the leaf leaf (n,), as predict sums them."""
    leaves = tree.leaf_arrays()
    add_linear_parts(X, np.ascontiguousarray(leaf, dtype=NODE_DTYPE),
                     *leaves.kernel_arguments(),
                     *linear_kernel_arguments({0: tree.linear_leaves}, [tree.n_leaves], leaves),
                     scale, out, threads_for(n_threads, len(leaf) * WORK_PER_ELEMENT))
