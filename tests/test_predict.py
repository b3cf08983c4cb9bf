"""Prediction kernels against a pure-Python traversal of hand-built and trained trees."""
import numpy as np
import pytest

import gbmo
import gbmo.engine
from gbmo._core import NODE_DTYPE, ROW_DTYPE, X_BINNED_DTYPE, binned_dtype
from gbmo._core._predict import add_leaf_values, predict_binned, predict_leaf_raw, predict_raw
from gbmo.binning import BinMapper
from gbmo.booster import _PackedForest
from gbmo.tree import Tree


# -- trees ----------------------------------------------------------------------
def random_tree(rng, n_features, d, max_depth, thresholds_of, n_bins, p_split=0.75):
    """A random tree with children numbered after their parents. thresholds_of(f)
    gives the candidate raw thresholds of feature f; node_bin is drawn in [0, n_bins)."""
    feature, threshold, bin_, missing_left, left, right, value, depth = [], [], [], [], [], [], [], []
    leaves = []

    def new_node(dep):
        for lst, v in ((feature, 0), (threshold, 0.0), (bin_, 0), (missing_left, 0),
                       (left, -1), (right, -1), (value, -1), (depth, dep)):
            lst.append(v)
        return len(left) - 1

    queue = [new_node(0)]
    while queue:
        node = queue.pop(0)
        if depth[node] < max_depth and (node == 0 or rng.random() < p_split):
            f = int(rng.integers(n_features))
            feature[node] = f
            threshold[node] = float(rng.choice(thresholds_of(f)))
            bin_[node] = int(rng.integers(0, n_bins))
            missing_left[node] = int(rng.integers(2))
            left[node] = new_node(depth[node] + 1)
            right[node] = new_node(depth[node] + 1)
            queue += [left[node], right[node]]
        else:
            value[node] = len(leaves)
            leaves.append(rng.normal(size=d))
    # shuffle the leaf numbering so that node_value is not simply increasing
    perm = rng.permutation(len(leaves))
    value = [int(perm[v]) if v >= 0 else -1 for v in value]
    leaf_values = np.empty((len(leaves), d))
    leaf_values[perm] = np.array(leaves)
    n = len(left)
    tree = Tree(leaf_values, node_feature=feature, node_threshold=threshold, node_bin=bin_,
                node_missing_left=missing_left, node_left=left, node_right=right,
                node_value=value, node_gain=np.zeros(n), node_count=np.zeros(n, dtype=np.int64))
    tree.validate(n_features, d)
    return tree


def depth_first(tree):
    """tree with its nodes renumbered in preorder (a node, its left subtree,
    its right subtree), so that siblings are apart, as best-first growth
    numbers them too."""
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        if tree.node_left[node] >= 0:
            stack += [tree.node_right[node], tree.node_left[node]]
    order = np.array(order)
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    columns = {name: getattr(tree, name)[order] for name in (
        "node_feature", "node_threshold", "node_bin", "node_missing_left", "node_value",
        "node_gain", "node_count")}
    for name in ("node_left", "node_right"):
        children = getattr(tree, name)[order]
        columns[name] = np.where(children >= 0, position[np.maximum(children, 0)], -1)
    renumbered = Tree(tree.leaf_values, **columns)
    renumbered.validate(int(tree.node_feature.max()) + 1, tree.leaf_values.shape[1])
    return renumbered


def reference_leaf_raw(tree, x):
    """Node index of the leaf a raw row reaches, by the documented rule."""
    node = 0
    while tree.node_left[node] >= 0:
        v = float(x[tree.node_feature[node]])
        if np.isnan(v):
            go_left = bool(tree.node_missing_left[node])
        else:
            go_left = v <= float(tree.node_threshold[node])
        node = tree.node_left[node] if go_left else tree.node_right[node]
    return node


def reference_leaf_binned(tree, bins, missing_bin):
    node = 0
    while tree.node_left[node] >= 0:
        b = int(bins[tree.node_feature[node]])
        if b == missing_bin:
            go_left = bool(tree.node_missing_left[node])
        else:
            go_left = b <= int(tree.node_bin[node])
        node = tree.node_left[node] if go_left else tree.node_right[node]
    return node


def reference_predict_raw(trees, X, start=None):
    X = np.asarray(X)
    d = trees[0].leaf_values.shape[1]
    out = np.zeros((X.shape[0], d)) if start is None else start.copy()
    for i in range(X.shape[0]):
        for tree in trees:
            out[i] += tree.leaf_values[tree.node_value[reference_leaf_raw(tree, X[i])]]
    return out


def reference_leaf_indices(trees, X):
    """Global leaf index (into the packed values) per row and tree."""
    offsets = np.cumsum([0] + [t.n_leaves for t in trees])
    out = np.empty((X.shape[0], len(trees)), dtype=np.int64)
    for i in range(X.shape[0]):
        for t, tree in enumerate(trees):
            out[i, t] = offsets[t] + tree.node_value[reference_leaf_raw(tree, X[i])]
    return out


def reference_predict_binned(trees, X_binned, missing_bin, start=None):
    n = X_binned.shape[1]
    d = trees[0].leaf_values.shape[1]
    out = np.zeros((n, d)) if start is None else start.copy()
    for i in range(n):
        for tree in trees:
            leaf = reference_leaf_binned(tree, X_binned[:, i], missing_bin)
            out[i] += tree.leaf_values[tree.node_value[leaf]]
    return out


def make_X(rng, n_rows, n_features, nan_fraction=0.15):
    """Values on a coarse grid (so rows hit thresholds exactly), NaN and infinities."""
    X = np.round(rng.normal(size=(n_rows, n_features)) * 4) / 4
    X[rng.random(X.shape) < 0.03] = np.inf
    X[rng.random(X.shape) < 0.03] = -np.inf
    X[rng.random(X.shape) < nan_fraction] = np.nan
    return X


def grid_thresholds(f):
    return np.concatenate([np.arange(-8, 9) / 4, [np.inf, -np.inf]])


def forest_of(rng, n_trees, n_features, d, n_bins=16, max_depth=5):
    return [random_tree(rng, n_features, d, max_depth, grid_thresholds, n_bins)
            for _ in range(n_trees)]


def kernel_raw(forest, X, init_score, n_threads=2):
    # NaN where the kernel must write: it starts every row from init_score itself
    out = np.full((X.shape[0], init_score.size), np.nan)
    predict_raw(*forest.tree_arguments(X), *forest.leaves.kernel_arguments(), init_score, out,
                n_threads)
    return out


# -- hand-built trees ---------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("d", [1, 4])
@pytest.mark.parametrize("numbering", ["breadth_first", "depth_first"])
def test_predict_raw_matches_traversal(seed, d, numbering):
    rng = np.random.default_rng(seed)
    trees = forest_of(rng, 6, 5, d)
    if numbering == "depth_first":
        trees = [depth_first(tree) for tree in trees]
        assert any(np.any(t.node_right[t.node_left >= 0] != t.node_left[t.node_left >= 0] + 1)
                   for t in trees)
    forest = _PackedForest.of_trees(trees)
    X = make_X(rng, 120, 5)
    init_score = rng.normal(size=d)
    expected = reference_predict_raw(trees, X, np.tile(init_score, (120, 1)))
    for n_threads in (1, 2, 3):
        np.testing.assert_allclose(kernel_raw(forest, X, init_score, n_threads), expected,
                                   rtol=1e-12, atol=1e-12)


def reference_depth(tree):
    """The longest root-to-leaf path, in edges, by recursion."""
    def below(node):
        if tree.node_left[node] < 0:
            return 0
        return 1 + max(below(tree.node_left[node]), below(tree.node_right[node]))
    return below(0)


def chain_tree(length, d, rng):
    """Node 0 sends x0 <= 0 to a leaf; its right child starts a chain of `length`
    splits on x1 at thresholds 0, 1, 2, ..., each with a leaf on the left, so a
    row with x0 > 0 walks until x1 is at most the threshold (NaN: missing_left)."""
    columns = {name: [] for name in ("node_feature", "node_threshold", "node_missing_left",
                                     "node_left", "node_right", "node_value")}
    n_leaves = 0

    def new_node(feature=0, threshold=0.0, missing_left=0):
        for name, v in zip(columns, (feature, threshold, missing_left, -1, -1, -1)):
            columns[name].append(v)
        return len(columns["node_left"]) - 1

    def split(node):
        nonlocal n_leaves
        left, right = new_node(), new_node()
        columns["node_left"][node], columns["node_right"][node] = left, right
        columns["node_value"][left] = n_leaves
        n_leaves += 1
        return right

    node = split(new_node(0, 0.0, 1))
    for k in range(length):
        columns["node_feature"][node], columns["node_threshold"][node] = 1, float(k)
        columns["node_missing_left"][node] = k % 2
        node = split(node)
    columns["node_value"][node] = n_leaves
    n = len(columns["node_left"])
    tree = Tree(rng.normal(size=(n_leaves + 1, d)), node_bin=np.zeros(n, int),
                node_gain=np.zeros(n), node_count=np.zeros(n, dtype=np.int64), **columns)
    tree.validate(2, d)
    return tree


@pytest.mark.parametrize("n_rows", [1, 2, 3, 5, 10, 15, 16, 17, 31, 32, 33, 47, 50])
def test_rows_in_partial_blocks_are_predicted(n_rows):
    """Rows walk the trees 16 at a time, or in as many smaller blocks as
    threads when they are fewer than 16 a thread: fewer rows than a block,
    and a last block cut anywhere, on trees of different depths."""
    rng = np.random.default_rng(n_rows)
    trees = forest_of(rng, 5, 4, 2, max_depth=6)
    forest = _PackedForest.of_trees(trees)
    X = make_X(rng, n_rows, 4)
    for n_threads in (1, 2, 3):
        np.testing.assert_allclose(kernel_raw(forest, X, np.zeros(2), n_threads),
                                   reference_predict_raw(trees, X), rtol=1e-12, atol=1e-12)
        leaf = np.empty((n_rows, 5), dtype=NODE_DTYPE)
        predict_leaf_raw(*forest.tree_arguments(X), leaf, n_threads)
        np.testing.assert_array_equal(leaf, reference_leaf_indices(trees, X))


def test_a_deep_unbalanced_tree_sends_every_row_to_its_leaf():
    """Most rows stop after one step while a few walk a chain 40 deep: a block
    stops walking only when none of its rows moved."""
    rng = np.random.default_rng(8)
    trees = [chain_tree(40, 3, rng), *forest_of(rng, 2, 2, 3)]
    forest = _PackedForest.of_trees(trees)
    np.testing.assert_array_equal(forest.tree_depth, [reference_depth(t) for t in trees])
    assert forest.tree_depth[0] == 41
    X = np.column_stack([rng.choice([-1.0, 1.0], p=[0.9, 0.1], size=200),
                         rng.integers(-1, 45, size=200).astype(float)])
    X[rng.random(200) < 0.1, 1] = np.nan
    X[100:105] = [[1.0, 100.0], [1.0, 38.5], [1.0, 20.0], [1.0, np.nan], [1.0, -5.0]]
    reached = reference_leaf_indices(trees, X)[:, 0]
    assert list(reached[100:105]) == [41, 40, 21, 2, 1]  # the chain's end, middle and start
    np.testing.assert_allclose(kernel_raw(forest, X, np.zeros(3)), reference_predict_raw(trees, X),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layout", ["C64", "F64", "C32", "F32", "strided64", "strided32",
                                    "reversed64", "transposed32"])
def test_predict_raw_dtypes_and_memory_layouts(layout):
    rng = np.random.default_rng(3)
    d, n_features = 3, 6
    trees = forest_of(rng, 5, n_features, d)
    forest = _PackedForest.of_trees(trees)
    big = make_X(rng, 150, 2 * n_features)
    dtype = np.float32 if layout.endswith("32") else np.float64
    big = big.astype(dtype)  # the grid values are exact in float32
    if layout.startswith("C"):
        X = np.ascontiguousarray(big[:, :n_features])
    elif layout.startswith("F"):
        X = np.asfortranarray(big[:, :n_features])
    elif layout.startswith("strided"):
        X = big[::3, ::2]
    elif layout.startswith("reversed"):
        X = big[::-2, ::-2]
    else:
        X = np.ascontiguousarray(big[:, :n_features].T).T  # F order via a transpose
    assert X.shape[1] == n_features
    start = np.zeros(d)
    expected = reference_predict_raw(trees, X.astype(np.float64))
    np.testing.assert_allclose(kernel_raw(forest, X, start), expected, rtol=1e-12, atol=1e-12)
    # read-only arrays (e.g. from pandas or np.broadcast_to) are accepted
    X_ro = X.copy(order="K")
    X_ro.setflags(write=False)
    np.testing.assert_array_equal(kernel_raw(forest, X_ro, start), kernel_raw(forest, X, start))
    # the same values in C-ordered float64 give the same result
    C = np.ascontiguousarray(X, dtype=np.float64)
    np.testing.assert_array_equal(kernel_raw(forest, X, start), kernel_raw(forest, C, start))


def test_float32_values_compared_in_double():
    """A float32 value just above a float64 threshold goes right even when the threshold
    rounds to that float32 value."""
    x32 = np.float32(0.1)
    threshold = float(np.nextafter(np.float64(x32), -np.inf))  # just below float64(x32)
    tree = Tree(np.array([[1.0], [2.0]]), node_feature=[0, 0, 0], node_threshold=[threshold, 0, 0],
                node_bin=[0, 0, 0], node_missing_left=[1, 0, 0], node_left=[1, -1, -1],
                node_right=[2, -1, -1], node_value=[-1, 0, 1], node_gain=[0, 0, 0],
                node_count=[0, 0, 0])
    forest = _PackedForest.of_trees([tree])
    X32 = np.array([[x32], [np.nextafter(x32, np.float32(0))], [np.nan]], dtype=np.float32)
    out = kernel_raw(forest, X32, np.zeros(1))
    np.testing.assert_array_equal(out, reference_predict_raw([tree], X32.astype(np.float64)))
    np.testing.assert_array_equal(out[:, 0], [2.0, 1.0, 1.0])


def test_a_single_leaf_forest_adds_its_leaf_to_every_row():
    rng = np.random.default_rng(4)
    stump = Tree(np.array([[1.5, -2.0]]), node_feature=[0], node_threshold=[0.0], node_bin=[0],
                 node_missing_left=[0], node_left=[-1], node_right=[-1], node_value=[0],
                 node_gain=[0.0], node_count=[0])
    forest = _PackedForest.of_trees([stump])
    X = make_X(rng, 7, 3)
    out = kernel_raw(forest, X, np.ones(2))
    np.testing.assert_array_equal(out, np.tile([2.5, -1.0], (7, 1)))
    # the binned walk reads no feature for it: binned data may have none
    binned_out = np.ones((7, 2))
    predict_binned(np.zeros((0, 7), dtype=X_BINNED_DTYPE), 255, forest.tree_roots,
                   forest.node_feature, forest.node_bin, forest.node_missing_left,
                   forest.node_left, forest.node_right, forest.node_value,
                   *forest.leaves.kernel_arguments(), binned_out, 2)
    np.testing.assert_array_equal(binned_out, out)


def test_predict_raw_refuses_an_init_score_or_out_of_the_wrong_size():
    """The kernel writes out's rows from init_score with bounds checks off."""
    rng = np.random.default_rng(4)
    forest = _PackedForest.of_trees(forest_of(rng, 2, 3, 4))
    X = make_X(rng, 5, 3)
    arguments = (*forest.tree_arguments(X), *forest.leaves.kernel_arguments())
    with pytest.raises(ValueError, match="init_score of 1"):
        predict_raw(*arguments, np.zeros(1), np.empty((5, 4)), 1)
    with pytest.raises(ValueError, match="out with 4 rows"):
        predict_raw(*arguments, np.zeros(4), np.empty((4, 4)), 1)


@pytest.mark.parametrize("missing_rows", ["none", "one_block", "scattered", "all"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_blocks_with_and_without_missing_values_walk_alike(missing_rows, dtype, order):
    """A block of rows without NaN walks without the missing side's test; a
    block with one takes it. Rows in both kinds of block, missing values sent
    left and right, infinities: the leaves and values of a plain traversal."""
    rng = np.random.default_rng(9)
    trees = forest_of(rng, 8, 6, 3)
    forest = _PackedForest.of_trees(trees)
    X = make_X(rng, 100, 6, nan_fraction=0.0)  # grid values and infinities
    rows = {"none": [], "one_block": [20, 21, 30], "scattered": [0, 37, 99],
            "all": range(100)}[missing_rows]
    for row in rows:
        X[row, rng.integers(0, 6, size=3)] = np.nan
    X = np.asarray(X.astype(dtype), order=order)
    exact = X.astype(np.float64)
    np.testing.assert_allclose(kernel_raw(forest, X, np.zeros(3)),
                               reference_predict_raw(trees, exact), rtol=1e-12, atol=1e-12)
    out = np.full((100, 8), -7, dtype=NODE_DTYPE)
    predict_leaf_raw(*forest.tree_arguments(X), out, 2)
    np.testing.assert_array_equal(out, reference_leaf_indices(trees, exact))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_predict_leaf_raw_matches_traversal(dtype, order):
    rng = np.random.default_rng(5)
    trees = forest_of(rng, 4, 5, 2)
    forest = _PackedForest.of_trees(trees)
    X = np.asarray(make_X(rng, 90, 5).astype(dtype), order=order)
    expected = reference_leaf_indices(trees, X.astype(np.float64))
    for n_threads in (1, 2):
        out = np.full((90, 4), -7, dtype=NODE_DTYPE)
        predict_leaf_raw(*forest.tree_arguments(X), out, n_threads)
        np.testing.assert_array_equal(out, expected)
    # strided view
    Xs = np.asarray(make_X(rng, 90, 10).astype(dtype), order=order)[::2, 1::2]
    out = np.empty((45, 4), dtype=NODE_DTYPE)
    predict_leaf_raw(*forest.tree_arguments(Xs), out, 2)
    np.testing.assert_array_equal(out, reference_leaf_indices(trees, Xs.astype(np.float64)))
    # leaf indices index the packed values: summing them gives predict_raw
    summed = forest.leaves.values.reshape(-1, 2)[out].sum(axis=1)
    np.testing.assert_allclose(summed, kernel_raw(forest, Xs, np.zeros(2)),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("missing_bin", [16, 255, 1000])  # 1,000: 16-bit bins
@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("numbering", ["breadth_first", "depth_first"])
def test_predict_binned_matches_traversal(missing_bin, n_threads, numbering):
    rng = np.random.default_rng(missing_bin + n_threads)
    d, n_features, n_rows = 3, 4, 130
    trees = forest_of(rng, 5, n_features, d, n_bins=missing_bin)
    if numbering == "depth_first":  # right children not beside their left siblings
        trees = [depth_first(tree) for tree in trees]
    trees.append(Tree(rng.normal(size=(1, d)), node_feature=[0], node_threshold=[0.0],
                      node_bin=[0], node_missing_left=[0], node_left=[-1], node_right=[-1],
                      node_value=[0], node_gain=[0.0], node_count=[n_rows]))
    forest = _PackedForest.of_trees(trees)
    X_binned = rng.integers(0, missing_bin + 1,
                            size=(n_features, n_rows)).astype(binned_dtype(missing_bin))
    X_binned[:, ::5] = missing_bin
    start = rng.normal(size=(n_rows, d))
    out = start.copy()
    predict_binned(X_binned, missing_bin, forest.tree_roots, forest.node_feature,
                   forest.node_bin, forest.node_missing_left, forest.node_left,
                   forest.node_right, forest.node_value, *forest.leaves.kernel_arguments(), out, n_threads)
    np.testing.assert_allclose(out, reference_predict_binned(trees, X_binned, missing_bin, start),
                               rtol=1e-12, atol=1e-12)


def test_binned_and_raw_prediction_agree_through_bin_thresholds():
    """Trees whose raw thresholds are BinMapper.bin_threshold of their bins predict the
    same on raw X as on the binned X."""
    rng = np.random.default_rng(6)
    n_features, d = 4, 2
    X = make_X(rng, 300, n_features)
    X[:, 0] = rng.normal(size=300)  # one continuous feature: quantile bins
    X[rng.random(300) < 0.1, 0] = np.nan
    mapper = BinMapper(max_bins=12).fit(X)
    trees = []
    for _ in range(6):
        tree = random_tree(rng, n_features, d, 5, grid_thresholds, 12)
        for node in np.flatnonzero(tree.node_left >= 0):
            f = tree.node_feature[node]
            t = int(rng.integers(0, mapper.n_bins_non_missing_[f]))
            tree.node_bin[node] = t
            tree.node_threshold[node] = mapper.bin_threshold(f, t)
        trees.append(tree)
    forest = _PackedForest.of_trees(trees)
    X_binned = mapper.transform(X)
    binned_out = np.zeros((300, d))
    predict_binned(X_binned, mapper.missing_bin, forest.tree_roots, forest.node_feature,
                   forest.node_bin, forest.node_missing_left, forest.node_left,
                   forest.node_right, forest.node_value, *forest.leaves.kernel_arguments(), binned_out, 2)
    raw_out = kernel_raw(forest, X, np.zeros(d))
    np.testing.assert_allclose(raw_out, binned_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(raw_out, reference_predict_raw(trees, X), rtol=1e-12, atol=1e-12)


# -- add_leaf_values ------------------------------------------------------------
@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("d, k", [(1, None), (5, None), (5, 2), (5, 1)])
def test_add_leaf_values_matches_loop(n_threads, d, k):
    """Dense leaves (k None) add all d values, sparse ones (and a
    single-output tree's, k = 1) their k to the outputs they name."""
    rng = np.random.default_rng(7 + d + (k or 0))
    n_rows, n_leaves = 103, 9
    rows = rng.permutation(n_rows).astype(ROW_DTYPE)
    cuts = np.sort(rng.choice(np.arange(1, n_rows), n_leaves - 1, replace=False))
    bounds = np.concatenate([[0], cuts, [n_rows]])
    # leaves in an order unrelated to their position in rows; one leaf empty
    order = rng.permutation(n_leaves)
    leaf_start = np.ascontiguousarray(bounds[:-1][order], dtype=np.intp)
    leaf_stop = np.ascontiguousarray(bounds[1:][order], dtype=np.intp)
    leaf_stop[0] = leaf_start[0]
    leaf_values = rng.normal(size=(n_leaves, k or d))
    leaf_outputs = (np.zeros((0, 0), dtype=np.int32) if k is None else
                    np.sort(rng.permuted(np.tile(np.arange(d), (n_leaves, 1)), axis=1)[:, :k],
                            axis=1).astype(np.int32))
    raw = rng.normal(size=(n_rows, d))
    expected = raw.copy()
    for leaf in range(n_leaves):
        outputs = np.arange(d) if k is None else leaf_outputs[leaf]
        for s in range(leaf_start[leaf], leaf_stop[leaf]):
            expected[rows[s], outputs] += leaf_values[leaf]
    add_leaf_values(rows, leaf_start, leaf_stop, leaf_values, leaf_outputs, raw, n_threads)
    np.testing.assert_allclose(raw, expected, rtol=1e-15, atol=0)


def test_add_leaf_values_refuses_leaves_that_do_not_fit():
    rows = np.arange(4, dtype=ROW_DTYPE)
    ranges = np.array([0, 2], dtype=np.intp), np.array([2, 4], dtype=np.intp)
    raw = np.zeros((4, 3))
    dense = np.zeros((0, 0), dtype=np.int32)
    with pytest.raises(ValueError, match="each of the d = 3 outputs; got 2"):
        add_leaf_values(rows, *ranges, np.ones((2, 2)), dense, raw, 1)
    with pytest.raises(ValueError, match="each of the 3 leaves needs a start and a stop; got 2"):
        add_leaf_values(rows, *ranges, np.ones((3, 3)), dense, raw, 1)
    with pytest.raises(ValueError, match="must be \\(2, 1\\) as leaf_values; got \\(2, 2\\)"):
        add_leaf_values(rows, *ranges, np.ones((2, 1)), np.zeros((2, 2), dtype=np.int32), raw, 1)
    for start, stop in (([0, 3], [2, 2]), ([0, 2], [2, 5]), ([-1, 2], [2, 4])):
        with pytest.raises(ValueError, match="are not a range of the 4 rows"):
            add_leaf_values(rows, np.array(start, dtype=np.intp), np.array(stop, dtype=np.intp),
                            np.ones((2, 3)), dense, raw, 1)
    with pytest.raises(ValueError, match="leaf 1 names output 3 of d = 3"):
        add_leaf_values(rows, *ranges, np.ones((2, 1)), np.array([[0], [3]], dtype=np.int32),
                        raw, 1)
    assert not raw.any()


# -- trained trees --------------------------------------------------------------
def training_problem(objective, rng, n_rows=300, n_features=5, dtype=np.float64):
    X = rng.normal(size=(n_rows, n_features))
    X[:, 1] = np.round(X[:, 1] * 2)  # few distinct values
    X[rng.random(X.shape) < 0.1] = np.nan
    signal = np.nan_to_num(X[:, :3], nan=1.0)
    weight = None
    if objective == "mse":
        Y = signal @ rng.normal(size=(3, 3)) + 0.1 * rng.normal(size=(n_rows, 3))
    elif objective == "mse_weighted":   # a non-constant (n, 1) hessian
        Y = signal @ rng.normal(size=(3, 2))
        weight = rng.uniform(0.5, 2.0, size=n_rows)
    elif objective == "softmax":        # an (n, d) hessian
        Y = np.argmax(signal + 0.3 * rng.normal(size=(n_rows, 3)), axis=1)
    else:                               # sigmoid, multi-label
        Y = (signal[:, :2] + 0.3 * rng.normal(size=(n_rows, 2)) > 0).astype(float)
    return X.astype(dtype), Y, weight


def train(objective, X, Y, weight, rounds=6, **extra):
    params = {"objective": "mse" if objective == "mse_weighted" else objective,
              "max_leaves": 8, "min_samples_leaf": 5, "max_bins": 16, "learning_rate": 0.3,
              "verbosity": 0, "n_threads": 2}
    params.update(extra)
    return gbmo.train(params, gbmo.Dataset(X, Y, weight=weight), num_boost_round=rounds)


@pytest.mark.parametrize("objective", ["mse", "mse_weighted", "softmax", "sigmoid"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_trained_trees_predict_like_traversal(objective, dtype):
    rng = np.random.default_rng(8)
    X, Y, weight = training_problem(objective, rng, dtype=dtype)
    booster = train(objective, X, Y, weight)
    trees = booster.trees
    assert len(trees) == 6 and any(t.n_leaves > 2 for t in trees)
    X_test = training_problem(objective, np.random.default_rng(9), n_rows=80, dtype=dtype)[0]
    for data in (X, X_test, np.asfortranarray(X_test), X_test[::-1, :]):
        start = np.tile(booster.init_score, (data.shape[0], 1))
        expected = reference_predict_raw(trees, data.astype(np.float64), start)
        np.testing.assert_allclose(booster.predict(data, raw_score=True), expected,
                                   rtol=1e-12, atol=1e-12)
        leaf_offsets = np.cumsum([0] + [t.n_leaves for t in trees[:-1]])
        np.testing.assert_array_equal(
            booster.predict_leaf(data),
            reference_leaf_indices(trees, data.astype(np.float64)) - leaf_offsets)


@pytest.mark.parametrize("objective", ["mse", "mse_weighted", "softmax", "sigmoid"])
@pytest.mark.parametrize("max_leaves,hist_cache,dtype,bin_subsample", [
    (8, 64, np.float64, 200_000),
    (2, 64, np.float64, 200_000),
    (10, 64, np.float32, 60),      # float32 X, edges fitted on a subsample
    (12, 1, np.float64, 200_000),  # a histogram cache smaller than the candidate queue
])
def test_training_update_equals_prediction(objective, max_leaves, hist_cache, dtype,
                                           bin_subsample, monkeypatch):
    """The raw scores training keeps (from the grower's partition, no traversal) and those
    of a validation set (predict_binned) equal booster.predict(X, raw_score=True)."""
    captured = {}
    real_add, real_binned = gbmo.engine.add_leaf_values, gbmo.engine.predict_binned

    def spy_add(rows, leaf_start, leaf_stop, *leaf_arrays_raw_threads):
        # the leaves' ranges partition the rows: every training row gets one leaf
        covered = np.zeros(len(rows), dtype=int)
        for a, b in zip(leaf_start, leaf_stop):
            covered[a:b] += 1
        assert np.all(covered == 1)
        assert np.array_equal(np.sort(rows), np.arange(len(rows)))
        captured["train"] = leaf_arrays_raw_threads[-2]
        return real_add(rows, leaf_start, leaf_stop, *leaf_arrays_raw_threads)

    def spy_binned(X_binned, missing_bin, roots, *args):
        captured["valid"] = args[-2]
        return real_binned(X_binned, missing_bin, roots, *args)

    monkeypatch.setattr(gbmo.engine, "add_leaf_values", spy_add)
    monkeypatch.setattr(gbmo.engine, "predict_binned", spy_binned)
    rng = np.random.default_rng(10)
    X, Y, weight = training_problem(objective, rng, dtype=dtype)
    X_valid, Y_valid, _ = training_problem(objective, np.random.default_rng(11), n_rows=70,
                                           dtype=dtype)
    params = {"objective": "mse" if objective == "mse_weighted" else objective,
              "max_leaves": max_leaves, "min_samples_leaf": 3, "max_bins": 8,
              "learning_rate": 0.5, "verbosity": 0, "n_threads": 2, "hist_cache": hist_cache,
              "bin_subsample": bin_subsample}
    train_set = gbmo.Dataset(X, Y, weight=weight)
    booster = gbmo.train(params, train_set, num_boost_round=5,
                         valid_sets=[train_set.create_valid(X_valid, Y_valid)])
    assert booster.num_trees == 5
    assert max(t.n_leaves for t in booster.trees) == max_leaves
    np.testing.assert_allclose(captured["train"], booster.predict(X, raw_score=True),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(captured["valid"], booster.predict(X_valid, raw_score=True),
                               rtol=1e-12, atol=1e-12)
    start = np.tile(booster.init_score, (X.shape[0], 1))
    np.testing.assert_allclose(captured["train"],
                               reference_predict_raw(booster.trees, X.astype(np.float64), start),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("target", ["one", "two", "classes"])
def test_no_rows_predict_empty_arrays_of_every_kind(target):
    """As LightGBM, a prediction of no rows is empty (batched pipelines may
    pass an empty batch), with the shape every kind of prediction has;
    training still needs rows, and X still needs its features."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y, params, d = {"one": (X[:, 0], {}, None), "two": (X[:, :2], {}, 2),
                    "classes": ((X[:, 0] > 0) + (X[:, 1] > 0).astype(int), {"objective": "softmax"},
                                3)}[target]
    booster = gbmo.train({"verbosity": 0, **params}, gbmo.Dataset(X, y), 3)
    outputs = () if d is None else (d,)
    for no_rows in (X[:0], sp.csr_matrix(X[:0])):
        assert booster.predict(no_rows).shape == (0, *outputs)
        assert booster.predict(no_rows, raw_score=True).shape == (0, *outputs)
        assert booster.predict(no_rows, num_iteration=0).shape == (0, *outputs)
        assert booster.predict(no_rows, pred_contrib=True).shape == (0, 4, *outputs)
        assert booster.predict(no_rows, pred_leaf=True).shape == (0, 3)
    with pytest.raises(ValueError, match="X has 2 features, but the model was trained on 3"):
        booster.predict(X[:0, :2])
    with pytest.raises(ValueError, match=r"X is empty: shape \(0, 3\)"):
        gbmo.Dataset(X[:0], y[:0])


def test_every_range_of_rounds_predicts_from_one_packing_of_the_trees():
    """A range of rounds (start_iteration, num_iteration, iteration_range) is
    a part of one packing of every tree: it was packed again for each new
    range, 350x a one-row prediction's time on 2,000 trees (found by audit)."""
    rng = np.random.default_rng(41)
    X = rng.normal(size=(300, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    Y = np.c_[np.nan_to_num(X[:, 0]), np.nan_to_num(X[:, 1] * X[:, 2])]
    booster = gbmo.train({"verbosity": 0, "max_leaves": 7, "min_samples_leaf": 5},
                         gbmo.Dataset(X, Y), 12)
    packing = None
    for start, rounds in [(0, None), (2, 3), (5, 4), (0, 7), (11, 1), (2, 3)]:
        stop = len(booster.trees) if rounds is None else start + rounds
        trees = booster.trees[start:stop]
        expected = reference_predict_raw(trees, X, np.tile(booster.init_score, (len(X), 1)))
        np.testing.assert_allclose(
            booster.predict(X, start_iteration=start, num_iteration=rounds, raw_score=True),
            expected, rtol=1e-12, atol=1e-12)
        leaves = booster.predict_leaf(X, start_iteration=start, num_iteration=rounds)
        for t, tree in enumerate(trees):
            np.testing.assert_array_equal(leaves[:, t], [
                tree.node_value[reference_leaf_raw(tree, x)] for x in X])
        contributions = booster.predict(X, start_iteration=start, num_iteration=rounds,
                                        pred_contrib=True)
        np.testing.assert_allclose(contributions.sum(axis=1), expected, atol=1e-9)
        packing = packing or booster._packed[0]
        assert booster._packed[0] is packing
