"""The best-first loop in Cython (_core/_grow.pyx) grows the trees the Python
loop grows, bit for bit, wherever it is used (per-node draws included); and it
refuses bad arguments."""
import numpy as np
import pytest

import gbmo
from gbmo import grower
from gbmo._core._grow import grow_best_first, immutable_copy
from gbmo._core._histogram import ROW_CHUNKS, row_entries

TREE_ARRAYS = ("node_feature", "node_bin", "node_threshold", "node_missing_left", "node_gain",
               "node_count", "node_left", "node_right", "node_value", "leaf_values")


def _data(n, d, seed, missing=0.0, sparse_columns=0, categories=0, nonzero=0.15,
          coarse=False):
    """Correlated outputs of 8 features; optionally NaN in feature 1,
    mostly-zero leading columns (a share `nonzero` of their values not 0:
    skipped bins, and at 0.15 row-wise histograms),
    features 6 and 7 made codes of `categories` categories, whose effects on
    the outputs are in no order of the codes (7's on the outputs' slopes on
    feature 0), feature 6 missing as often as feature 1, and with coarse
    features 0 and 4 of 2 and about 7 values (histogram rows beyond theirs,
    which the loop in Cython leaves alone)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8))
    if coarse:
        X[:, 0], X[:, 4] = X[:, 0] > 0.5, np.round(X[:, 4])
    X[:, :sparse_columns] *= rng.random((n, sparse_columns)) < nonzero
    if missing:
        X[rng.random(n) < missing, 1] = np.nan
    base = np.sin(X[:, 0]) + np.nan_to_num(X[:, 1]) * X[:, 2] + 0.5 * X[:, 3]
    Y = base[:, None] + 0.3 * rng.normal(size=(n, d)) + np.arange(d) * X[:, 4:5]
    if categories:
        X[:, 6:] = rng.integers(0, categories, size=(n, 2))
        codes = X[:, 6:].astype(int)
        Y += rng.normal(size=(categories, d))[codes[:, 0]]
        Y += rng.normal(size=(categories, 1))[codes[:, 1]] * X[:, :1]
        X[rng.random(n) < missing, 6] = np.nan
    return X, Y


def _train_both(monkeypatch, params, X, y, rounds, callbacks=(), held=None):
    """(native, python) boosters; fails unless the native loop grew every tree.
    held, when given, receives how many nodes each native tree's GrownNodes held.
    The runs are kept, and with them the trees' binned_sets, to compare."""
    calls = [] if held is None else held

    def counting(*args, **options):
        calls.append(len(args[-1].start))
        return grow_best_first(*args, **options)

    monkeypatch.setattr(grower, "grow_best_first", counting)
    params = {"verbosity": 0, **params}
    native = gbmo.train(params, gbmo.Dataset(X, y), rounds, callbacks=list(callbacks),
                        keep_training_booster=True)
    assert len(calls) == sum(1 for _ in native.trees)
    monkeypatch.setattr(grower, "NATIVE_GROWTH", False)
    python = gbmo.train(params, gbmo.Dataset(X, y), rounds, callbacks=list(callbacks),
                        keep_training_booster=True)
    assert len(calls) == len(native.trees)  # the Python loop did not call it
    return native, python


def _assert_same_node_arrays(native, python):
    """The two boosters' trees hold the same node arrays and leaf values, bit for bit."""
    assert len(native.trees) == len(python.trees)
    for a, b in zip(native.trees, python.trees):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


CASES = {
    "mse, 3 outputs": ({}, dict(n=2000, d=3)),
    "one output": ({"max_leaves": 63}, dict(n=3000, d=1)),
    "missing values": ({"min_samples_leaf": 5}, dict(n=2000, d=2, missing=0.3)),
    "skipped bins, row-wise": ({}, dict(n=2000, d=3, sparse_columns=3)),
    "l1, min_gain, min_child_weight": (
        {"lambda_l1": 2.0, "min_gain": 5.0, "min_child_weight": 5.0, "lambda_l2": 0.0},
        dict(n=2000, d=3)),
    "max_depth": ({"max_depth": 3, "max_leaves": 31}, dict(n=2000, d=2)),
    "more leaves than rows allow": ({"max_leaves": 1000, "min_samples_leaf": 1},
                                    dict(n=60, d=2)),
    "histogram cache of 1": ({"hist_cache": 1, "max_leaves": 40}, dict(n=2000, d=2)),
    "histogram cache of 3": ({"hist_cache": 3, "max_leaves": 40}, dict(n=2000, d=2)),
    "bagging, colsample_bytree": ({"subsample": 0.6, "subsample_freq": 1,
                                   "colsample_bytree": 0.5, "seed": 4}, dict(n=2000, d=3)),
    "goss": ({"data_sample_strategy": "goss", "learning_rate": 0.5}, dict(n=3000, d=2)),
    "single-output trees": ({"tree_mode": "single_output"}, dict(n=1500, d=3)),
    "colsample_bynode": ({"colsample_bynode": 0.4, "seed": 5}, dict(n=2000, d=3)),
    "extra_trees": ({"extra_trees": True, "max_bins": 31, "seed": 6}, dict(n=2000, d=2)),
    "monotone constraints": ({"monotone_constraints": [1, 0, -1, 0, 1, 0, 0, 0]},
                             dict(n=2000, d=3)),
    "monotone, single-output trees, l1": (
        {"monotone_constraints": [[1, 0, 0], [0, 0, 0], [0, -1, 1]] + [[0, 0, 0]] * 5,
         "tree_mode": "single_output", "lambda_l1": 1.0}, dict(n=1500, d=3)),
    "max_delta_step": ({"max_delta_step": 0.3, "learning_rate": 1.0}, dict(n=2000, d=2)),
    # deep trees: most nodes hold fewer rows than bins, and the histogram
    # slots pass from tree to tree
    "deep trees of small nodes": ({"max_leaves": 255, "min_samples_leaf": 2,
                                   "colsample_bynode": 0.5, "seed": 12},
                                  dict(n=2000, d=5, missing=0.1)),
    "deep trees, skipped bins, row-wise, small cache": (
        {"max_leaves": 200, "min_samples_leaf": 1, "hist_cache": 3, "subsample": 0.7},
        dict(n=1500, d=3, sparse_columns=3, missing=0.2)),
    "deep trees, depth-wise, categorical, one output": (
        {"growth": "depthwise", "max_depth": 9, "max_leaves": 300, "min_samples_leaf": 1,
         "categorical_feature": [6, 7]}, dict(n=1500, d=1, categories=30, missing=0.1)),
    "deep random forest": ({"boosting": "rf", "subsample": 0.6, "max_leaves": 255,
                            "min_samples_leaf": 3, "lambda_l2": 0.0}, dict(n=2000, d=4)),
    "path_smooth": ({"path_smooth": 30.0, "max_leaves": 40}, dict(n=2000, d=3, missing=0.1)),
    "path_smooth, monotone, max_delta_step, l1, depth-wise": (
        {"path_smooth": 5.0, "monotone_constraints": [1, 0, -1, 0, 0, 0, 0, 0],
         "max_delta_step": 0.4, "lambda_l1": 1.0, "growth": "depthwise", "max_depth": 5},
        dict(n=2000, d=2)),
    "path_smooth, categorical, single-output trees": (
        {"path_smooth": 10.0, "categorical_feature": [6, 7], "tree_mode": "single_output"},
        dict(n=2000, d=2, categories=15)),
    "interaction constraints": ({"interaction_constraints": [[0, 1], [2, 3], [1, 4, 5]]},
                                dict(n=2000, d=2, missing=0.2)),
    "interaction constraints, colsample_bynode, monotone": (
        {"interaction_constraints": [[0, 1, 2], [2, 3, 4]], "colsample_bynode": 0.6,
         "monotone_constraints": [1, 0, 0, -1, 0, 0, 0, 0], "seed": 3}, dict(n=2000, d=2)),
    "interaction constraints, features in no group": (
        {"interaction_constraints": [[2, 3]]}, dict(n=2000, d=2)),
    "interaction constraints, single-output trees": (
        {"interaction_constraints": [[0, 3], [1, 2, 4]], "tree_mode": "single_output"},
        dict(n=1500, d=2)),
    "depth-wise": ({"growth": "depthwise", "max_depth": 5, "max_leaves": 24},
                   dict(n=3000, d=3, missing=0.1)),
    "depth-wise, small cache, row-wise, goss": (
        {"growth": "depthwise", "max_depth": 6, "max_leaves": 63, "hist_cache": 7,
         "data_sample_strategy": "goss", "learning_rate": 0.5}, dict(n=3000, d=2, sparse_columns=3)),
    "depth-wise, constraints, draws": (
        {"growth": "depthwise", "max_depth": 4, "monotone_constraints": [1, 0, 0, -1, 0, 0, 0, 0],
         "interaction_constraints": [[0, 1, 2], [2, 3, 4]], "colsample_bynode": 0.7,
         "extra_trees": True, "seed": 9}, dict(n=2000, d=2)),
    "extra_trees, colsample_bynode, bagging": (
        {"extra_trees": True, "colsample_bynode": 0.7, "subsample": 0.7, "seed": 7},
        dict(n=2000, d=2, missing=0.2)),
    "two threads": ({"n_threads": 2}, dict(n=20000, d=2)),
    "colsample_bytree, row-wise": ({"colsample_bytree": 0.6, "seed": 2},
                                   dict(n=2000, d=2, sparse_columns=3)),
    "two threads, row-wise": ({"n_threads": 2}, dict(n=20000, d=3, sparse_columns=3)),
    "two threads: colsample_bynode, interaction constraints, row-wise": (
        {"n_threads": 2, "colsample_bynode": 0.6, "seed": 4,
         "interaction_constraints": [[0, 1, 2, 5], [2, 3, 4, 6, 7]]},
        dict(n=20000, d=2, sparse_columns=3)),
    "two threads: skipped bins, categorical, extra_trees, monotone, l1": (
        {"n_threads": 2, "categorical_feature": [6, 7], "extra_trees": True, "lambda_l1": 0.5,
         "monotone_constraints": [0, 0, 0, 1, 0, 0, 0, 0], "seed": 5},
        dict(n=20000, d=2, sparse_columns=3, nonzero=0.4, categories=12, missing=0.1)),
    "categorical features": ({"categorical_feature": [6, 7], "min_samples_leaf": 5},
                             dict(n=2000, d=3, categories=12, missing=0.2)),
    "categorical, one output, cat_smooth 0": (
        {"categorical_feature": [6, 7], "cat_smooth": 0.0, "max_leaves": 63},
        dict(n=3000, d=1, categories=40)),
    "categorical, more categories than bins, row-wise": (
        {"categorical_feature": [6, 7], "max_bins": 15},
        dict(n=2000, d=2, categories=30, sparse_columns=3)),
    "categorical, extra_trees, colsample_bynode, monotone": (
        {"categorical_feature": [7], "extra_trees": True, "colsample_bynode": 0.7,
         "monotone_constraints": [1, 0, 0, -1, 0, 0, 0, 0], "seed": 11},
        dict(n=2000, d=2, categories=9)),
    "categorical, depth-wise, small cache, single-output trees": (
        {"categorical_feature": [6, 7], "growth": "depthwise", "max_depth": 5,
         "hist_cache": 5, "tree_mode": "single_output"}, dict(n=2000, d=2, categories=15)),
    "categorical, one category a set, no other rules": (
        {"categorical_feature": [6, 7], "max_cat_to_onehot": 4, "min_data_per_group": 0,
         "cat_l2": 0.0, "cat_smooth": 0.0}, dict(n=2000, d=3, categories=4, missing=0.2)),
    "categorical, interaction constraints, two threads": (
        {"categorical_feature": [6, 7], "interaction_constraints": [[0, 6], [1, 2, 7]],
         "n_threads": 2}, dict(n=20000, d=2, categories=25, missing=0.1)),
    "features of 2 and 7 values, row-wise, two threads": (
        {"n_threads": 2}, dict(n=20000, d=3, missing=0.1, sparse_columns=1, coarse=True)),
    "features of 2 and 7 values, depth-wise, one output, 16-bit bins": (
        {"growth": "depthwise", "max_depth": 5, "max_bins": 1000},
        dict(n=3000, d=1, sparse_columns=3, coarse=True)),
    "random_strength, two threads": ({"random_strength": 4.0, "n_threads": 2, "seed": 3},
                                     dict(n=20000, d=2, missing=0.1)),
    "random_strength, one output, depth-wise, categorical, extra_trees": (
        {"random_strength": 2.0, "growth": "depthwise", "max_depth": 5,
         "categorical_feature": [6, 7], "extra_trees": True, "seed": 8},
        dict(n=2000, d=1, categories=12, missing=0.1)),
    "random_strength, monotone, l1, one-hot sets": (
        {"random_strength": 3.0, "monotone_constraints": [1, 0, 0, -1, 0, 0, 0, 0],
         "lambda_l1": 0.5, "categorical_feature": [6, 7], "max_cat_to_onehot": 4, "seed": 12},
        dict(n=2000, d=3, categories=4, missing=0.2)),
    # 70,000 rows: the nodes of 4,375 rows or fewer prefetch theirs (prefetch.h)
    "prefetching nodes, two threads": ({"n_threads": 2, "max_leaves": 127},
                                       dict(n=70000, d=2, missing=0.1, sparse_columns=2)),
    "prefetching nodes, depth-wise": ({"growth": "depthwise", "max_depth": 8,
                                       "max_leaves": 255}, dict(n=70000, d=1)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_native_loop_grows_the_python_loops_trees(monkeypatch, case):
    params, data = CASES[case]
    X, Y = _data(seed=hash(case) % 1000, **data)
    native, python = _train_both(monkeypatch, params, X, Y, 6)
    assert len(native.trees) == len(python.trees)
    assert max(tree.n_leaves for tree in native.trees) > 2  # the trees split
    if "min_gain" in params:  # ... and some stop before max_leaves for it
        assert min(tree.n_leaves for tree in native.trees) < 31
    _assert_same_node_arrays(native, python)
    for a, b in zip(native.trees, python.trees):
        assert a.categories_left.keys() == b.categories_left.keys()
        for node, ranks in a.categories_left.items():
            np.testing.assert_array_equal(ranks, b.categories_left[node])
        assert a.binned_sets.keys() == b.binned_sets.keys()
        for name, flags in a.binned_sets.items():
            np.testing.assert_array_equal(flags, b.binned_sets[name], err_msg=name)
    if "categorical_feature" in params:  # ... categorical sets among them
        assert sum(len(tree.categories_left) for tree in native.trees) >= 6
    np.testing.assert_array_equal(native.feature_importance("gain", per_output=True),
                                  python.feature_importance("gain", per_output=True))
    np.testing.assert_array_equal(native.predict(X), python.predict(X))


REUSE_CASES = {
    "mse": ({}, dict(n=2000, d=2)),
    "monotone, path_smooth": ({"monotone_constraints": [1, 0, 0, -1, 0, 0, 0, 0],
                               "path_smooth": 5.0}, dict(n=2000, d=2)),
    "categorical": ({"categorical_feature": [6, 7]}, dict(n=2000, d=2, categories=12)),
    "depth-wise, no depth bound": ({"growth": "depthwise", "max_depth": -1}, dict(n=2000, d=2)),
}


@pytest.mark.parametrize("case", list(REUSE_CASES))
def test_native_loop_grows_the_python_loops_trees_as_their_node_bound_changes(monkeypatch, case):
    """The run's nodes, kept from tree to tree, are made larger for a tree
    that may have more (min_samples_leaf bounds them), and a tree that may
    have fewer after it uses part of them."""
    extra, data = REUSE_CASES[case]
    X, Y = _data(seed=8, **data)
    resets = [gbmo.reset_parameter(min_samples_leaf=[300, 200, 20, 5, 600, 50])]
    held = []
    native, python = _train_both(monkeypatch, {"max_leaves": 63, **extra}, X, Y, 6,
                                 callbacks=resets, held=held)
    assert held == [11, 19, 125, 125, 125, 125]
    leaves = [tree.n_leaves for tree in native.trees]
    assert leaves[4] < leaves[0] < leaves[2]
    _assert_same_node_arrays(native, python)
    for a, b in zip(native.trees, python.trees):
        assert a.categories_left.keys() == b.categories_left.keys()


def test_workspace_keeps_grown_nodes_of_each_kind():
    """Trees of two widths in turn (single-output trees of an output with
    missing targets, a hessian column each, and of one without) reuse their
    own nodes instead of making new ones for each tree."""
    workspace = grower.GrowerWorkspace(100)
    narrow = workspace.grown_nodes(7, 2, 0, 0, False)
    wide = workspace.grown_nodes(7, 3, 0, 0, False)
    assert wide is not narrow and wide.sums.shape == (7, 3)
    assert workspace.grown_nodes(5, 2, 0, 0, False) is narrow
    assert workspace.grown_nodes(7, 3, 0, 0, False) is wide
    larger = workspace.grown_nodes(9, 2, 0, 0, False)
    assert larger is not narrow and len(larger.start) == 9
    assert workspace.grown_nodes(9, 2, 2, 256, True).lower.shape == (9, 2)


@pytest.mark.parametrize("growth", ["bestfirst", "depthwise"])
@pytest.mark.parametrize("cache", [1, 2, 3, 7, 64])
def test_native_loop_builds_and_subtracts_where_the_python_loop_does(monkeypatch, cache,
                                                                     growth):
    """Gradients spread over e^-12 to e^12 make float64 histogram sums
    inexact, so a histogram built from rows and one subtracted from its
    parent's differ in their last bits: the trees agree bit for bit only if
    both loops subtract, build and evict at the same nodes (MSE's sums are
    exact and cannot tell)."""
    rng = np.random.default_rng(0)
    n = 3000
    X = rng.normal(size=(n, 6))
    G = ((np.sin(X[:, :1]) + X[:, 1:3] * X[:, 2:3] + rng.normal(size=(n, 2)))
         * np.exp(rng.uniform(-12, 12, size=(n, 1))))

    def objective(y, raw):
        return G + raw, np.ones((len(y), 1))

    native, python = _train_both(
        monkeypatch, {"objective": objective, "hist_cache": cache, "max_leaves": 64,
                      "growth": growth, "max_depth": 8}, X, np.zeros((n, 2)), 2)
    _assert_same_node_arrays(native, python)


@pytest.mark.parametrize("objective, hessian_width", [("softmax", 3), ("sigmoid", 3)])
def test_native_loop_with_per_output_hessians(monkeypatch, objective, hessian_width):
    """Classification losses give a hessian per output (k = d), which the
    loop gathers beside the gradients."""
    X, Y = _data(2000, 3, seed=7)
    if objective == "softmax":
        y = np.digitize(Y[:, 0], np.quantile(Y[:, 0], [1 / 3, 2 / 3]))
    else:
        y = (Y > np.median(Y, axis=0)).astype(float)
    native, python = _train_both(monkeypatch, {"objective": objective}, X, y, 5)
    assert native.trees[0].leaf_values.shape[1] == hessian_width
    _assert_same_node_arrays(native, python)


@pytest.mark.parametrize("growth, widest", [("bestfirst", 1), ("depthwise", 8)])
def test_native_loop_builds_a_levels_histograms_in_one_pass(monkeypatch, growth, widest):
    """Depth-wise growth splits a level's nodes together and builds their
    children's histograms in one pass (8 at the fourth level of depth 5);
    best-first builds one smaller child at a time while the parents keep
    their histograms."""
    widest_passes = []

    def recording(*args, **options):
        n_nodes = grow_best_first(*args, **options)
        widest_passes.append(args[-1].widest_pass)
        return n_nodes

    monkeypatch.setattr(grower, "grow_best_first", recording)
    X, Y = _data(20000, 2, seed=3)
    gbmo.train({"verbosity": 0, "growth": growth, "max_depth": 5, "max_leaves": 32,
                "min_samples_leaf": 5}, gbmo.Dataset(X, Y), 2)
    assert max(widest_passes) == widest


def test_native_loop_splits_the_earlier_node_on_equal_gains(monkeypatch):
    """Values 0, 1, 10, 11 on four equal groups: the root's children have
    exactly equal gains, and with three leaves only the one made first (the
    left child) splits, as in the Python loop's heap."""
    x = np.repeat(np.arange(4.0), 50)
    y = np.array([0.0, 1.0, 10.0, 11.0])[x.astype(int)]
    native, python = _train_both(monkeypatch, {"max_leaves": 3, "min_samples_leaf": 1},
                                 x[:, None], y, 1)
    tree = native.trees[0]
    assert tree.node_gain[1] > 0 and tree.node_left[1] >= 0 and tree.node_left[2] == -1
    _assert_same_node_arrays(native, python)


def test_native_loop_stays_a_leaf_without_features_or_rows_to_split(monkeypatch):
    """Constant features: every tree is one leaf holding the mean gradient step."""
    X = np.ones((100, 3))
    Y = np.random.default_rng(0).normal(size=(100, 2))
    native, python = _train_both(monkeypatch, {"learning_rate": 1.0, "lambda_l2": 0.0},
                                 X, Y, 2)
    assert native.trees[0].n_leaves == 1
    np.testing.assert_allclose(native.predict(X[:1])[0], Y.mean(axis=0), atol=1e-6)
    np.testing.assert_array_equal(native.trees[0].leaf_values, python.trees[0].leaf_values)


def _arguments(n_rows=50, d=2, n_features=3, n_bins=8, n_slots=4, max_leaves=4):
    """Valid grow_best_first arguments for a small problem, as a dict."""
    rng = np.random.default_rng(0)
    width = d + 1
    return dict(
        X_binned=rng.integers(0, n_bins - 1, size=(n_features, n_rows)).astype(np.uint8),
        grad=rng.normal(size=(n_rows, d)).astype(np.float32),
        hess=np.empty((n_rows, 0), dtype=np.float32), hess_constant=1.0,
        rows=np.arange(n_rows, dtype=np.uint32), n_rows=n_rows,
        left_buffer=np.empty(n_rows, np.uint32), right_buffer=np.empty(n_rows, np.uint32),
        ordered=np.empty(n_rows * width, np.float32),
        histograms=np.empty((n_slots, n_features, n_bins, width)), capacity=n_slots,
        features=np.arange(n_features, dtype=np.int32),
        column_features=np.arange(n_features, dtype=np.int32),
        n_bins_non_missing=np.full(n_features, n_bins - 1, np.int32), missing_bin=255,
        skipped_bins=None, row_wise=None, lambda_l2=1.0, lambda_l1=0.0, min_samples_leaf=5,
        min_child_weight=0.0, min_gain=0.0, max_depth=-1, max_leaves=max_leaves, n_threads=1,
        nodes=grower.GrownNodes(2 * max_leaves - 1, width))


def test_grow_best_first_splits_a_small_problem():
    arguments = _arguments()
    n_nodes = grow_best_first(**arguments)
    nodes = arguments["nodes"]
    assert n_nodes == 7  # max_leaves = 4
    assert sorted(arguments["rows"]) == list(range(50))
    leaves = [m for m in range(n_nodes) if nodes.left[m] < 0]
    # the leaves partition the rows, and each leaf's sums are its rows' gradients
    assert sum(nodes.stop[m] - nodes.start[m] for m in leaves) == 50
    for m in leaves:
        rows = arguments["rows"][nodes.start[m]:nodes.stop[m]]
        np.testing.assert_allclose(nodes.sums[m, :2], arguments["grad"][rows].sum(axis=0),
                                   rtol=1e-6, atol=1e-6)
        assert nodes.sums[m, 2] == len(rows)
    assert 2 <= nodes.peak_histograms <= 4


def test_grow_best_first_splits_by_categorical_sets():
    """Feature 0's categories 1, 4 and 6 hold the large gradients: the root
    sends exactly those bins, or exactly the others, left (the missing bin,
    which no row has, with the larger side), and the rows follow the set."""
    arguments = _arguments(n_rows=400, d=1, max_leaves=2)
    X_binned, grad = arguments["X_binned"], arguments["grad"]
    grad[:] = np.where(np.isin(X_binned[0], [1, 4, 6]), 5.0, -1.0)[:, None]
    nodes = grower.GrownNodes(3, 2, n_flags=256)
    arguments.update(nodes=nodes, categorical=np.array([1, 0, 0], np.uint8), cat_smooth=0.0)
    assert grow_best_first(**arguments) == 3
    assert nodes.feature[0] == 0
    flags = nodes.left_flags[0]
    assert set(np.flatnonzero(flags[:255])) in ({1, 4, 6}, set(range(7)) - {1, 4, 6})
    n_left = nodes.stop[1] - nodes.start[1]
    assert flags[255] == nodes.missing_left[0] == (n_left >= 400 - n_left)
    left_rows = arguments["rows"][nodes.start[1]:nodes.stop[1]]
    assert flags[X_binned[0, left_rows]].all() and len(left_rows) == nodes.stop[1]
    right_rows = arguments["rows"][nodes.start[2]:nodes.stop[2]]
    assert not flags[X_binned[0, right_rows]].any()
    np.testing.assert_allclose(nodes.left_sums[0], nodes.sums[1])


def _row_wise_arguments(freeze=immutable_copy):
    """_arguments() with feature 0 built row by row, its entries passed
    through freeze (by default made immutable, as RowEntries leaves them)."""
    arguments = _arguments()
    X_binned = arguments["X_binned"]
    skipped_bins = np.array([0, -1, -1], np.int32)
    indptr, slot = (freeze(array) for array in row_entries(
        X_binned, np.array([0], np.int32), skipped_bins, 8, 1))
    chunk_hists = np.empty((ROW_CHUNKS - 1,) + arguments["histograms"].shape[1:])
    arguments.update(skipped_bins=skipped_bins, column_features=np.array([1, 2], np.int32),
                     row_wise=(indptr, slot, 8, np.array([1, 0, 0], np.uint8), chunk_hists,
                               len(slot) / 50))
    return arguments


def test_grow_best_first_checks_other_row_entries_than_those_it_checked():
    """A run's immutable entries are checked once; other entries, or the
    same against fewer bins, are checked again."""
    arguments = _row_wise_arguments()
    assert grow_best_first(**arguments) == 7
    assert grow_best_first(**_row_wise_arguments()) == 7  # grows on the ones it checked
    indptr, slot, *rest = arguments["row_wise"]
    bad_slot = slot.copy()
    bad_slot[0] = 3 * 8  # feature 3 of 3
    with pytest.raises(ValueError, match="row_wise entry 0 is outside"):
        grow_best_first(**{**arguments, "row_wise": (indptr, immutable_copy(bad_slot), *rest)})
    assert grow_best_first(**arguments) == 7
    fewer_bins = np.empty((4, 3, 6, 3))
    arguments["n_bins_non_missing"] = np.full(3, 5, np.int32)
    indptr, slot, _, wanted, _, mean_entries = arguments["row_wise"]
    arguments["row_wise"] = (indptr, slot, 6, wanted, np.empty((ROW_CHUNKS - 1, 3, 6, 3)),
                             mean_entries)
    with pytest.raises(ValueError, match="row_wise's entries are slots of histograms 6 bins "
                                         "tall, the histograms are 8"):
        grow_best_first(**arguments)
    slot_of_feature_3 = immutable_copy(np.full_like(slot, 3 * 6))  # of 3 features
    with pytest.raises(ValueError, match="row_wise entry 0 is outside"):
        grow_best_first(**{**arguments, "histograms": fewer_bins,
                           "row_wise": (indptr, slot_of_feature_3, *arguments["row_wise"][2:])})


class _ClaimsBytesBase(np.ndarray):
    base = property(lambda self: b"")


@pytest.mark.parametrize("freeze", [
    lambda array: array,
    lambda array: array.view(),  # read-only views of a writeable array
    lambda array: array.view(_ClaimsBytesBase),
])
def test_grow_best_first_checks_changeable_row_entries_every_time(freeze):
    """Entries someone can still change are checked at every call, even
    when they are read-only by then."""
    arguments = _row_wise_arguments(freeze)
    assert grow_best_first(**arguments) == 7
    slot = arguments["row_wise"][1]
    base = slot if type(slot) is not np.ndarray or slot.base is None else slot.base
    base[:] = 250
    slot.setflags(write=False)
    with pytest.raises(ValueError, match="row_wise entry 0 is outside"):
        grow_best_first(**arguments)


def test_grow_best_first_takes_row_wise_as_any_sequence():
    arguments = _row_wise_arguments()
    arguments["row_wise"] = list(arguments["row_wise"])
    assert grow_best_first(**arguments) == 7


def test_grow_best_first_needs_every_feature_built_one_way():
    """With row_wise, column_features must be the features not built by row."""
    arguments = _row_wise_arguments()
    arguments["column_features"] = np.array([1], np.int32)  # feature 2 built neither way
    with pytest.raises(ValueError, match="column_features must be the features not built"):
        grow_best_first(**arguments)


@pytest.mark.parametrize("change, message", [
    ({"n_rows": 51}, "disagree on the rows"),
    ({"hess": np.empty((50, 3), np.float32)}, "disagree on the rows or outputs"),
    ({"left_buffer": np.empty(10, np.uint32)}, "partition buffers"),
    ({"ordered": np.empty(10, np.float32)}, "partition buffers and ordered"),
    ({"histograms": np.empty((4, 2, 8, 3))}, "histograms must be"),
    ({"capacity": 1}, "capacity >= 2"),
    ({"nodes": grower.GrownNodes(3, 3)}, "nodes must hold 7 nodes"),
    ({"min_samples_leaf": 0}, "min_samples_leaf >= 1"),
    ({"skipped_bins": np.full(3, 8, np.int32)}, "skipped_bins\\[0\\] = 8 is beyond"),
    ({"column_features": np.array([0, 3], np.int32)}, "column feature 3"),
    ({"column_features": np.array([0, 2], np.int32)}, "column_features must be the features"),
    ({"column_features": np.array([2, 1, 0], np.int32)}, "in the same order"),
    ({"features": np.array([1, 0], np.int32)}, "not ascending"),
    ({"group_indptr": np.array([0, 2], np.int32), "group_features": np.array([0, 3], np.int32)},
     "interaction group feature 3"),
    ({"group_indptr": np.array([0, 3], np.int32), "group_features": np.array([0, 1], np.int32)},
     "group_indptr must run"),
    ({"group_indptr": np.array([0, 9, 2], np.int32), "group_features": np.array([0, 1], np.int32)},
     "group_indptr must not decrease"),
    ({"row_wise": (np.zeros(51, np.int64), np.zeros(0, np.uint32), 8, np.ones(3, np.uint8),
                   np.zeros((ROW_CHUNKS - 1, 3, 7, 3)), 0.0),
      "skipped_bins": np.zeros(3, np.int32)}, "row_wise needs"),
    ({"n_bins_non_missing": np.full(2, 7, np.int32)}, "one entry per feature"),
    ({"features": np.array([0, 5], np.int32)}, "feature 5"),
    ({"row_wise": (np.zeros(3, np.int64), np.zeros(0, np.uint32), 8, np.ones(3, np.uint8),
                   np.zeros((ROW_CHUNKS - 1, 3, 8, 3)), 0.0)}, "row_wise needs"),
    ({"row_wise": (np.zeros(51, np.int64), np.zeros(0, np.uint32), 8, np.ones(3, np.uint8),
                   np.zeros((ROW_CHUNKS - 1, 3, 8, 3)), 0.0),
      "skipped_bins": np.full(3, -1, np.int32)}, "feature 0 is built by row"),
    ({"row_wise": (np.r_[0, np.ones(50, np.int64)], np.array([3 * 8], np.uint32), 8,
                   np.ones(3, np.uint8), np.zeros((ROW_CHUNKS - 1, 3, 8, 3)), 0.0),
      "skipped_bins": np.zeros(3, np.int32)}, "row_wise entry 0"),
    ({"monotone": np.full((3, 2), 2, np.int8), "nodes": grower.GrownNodes(7, 3, 2)},
     "-1, 0 or \\+1"),
    ({"categorical": np.ones(2, np.uint8), "nodes": grower.GrownNodes(7, 3, n_flags=256)},
     "a flag per feature \\(3\\)"),
    ({"categorical": np.ones(3, np.uint8)}, "left_flags must be \\(7, 256\\) for 8-bit bins"),
    ({"categorical": np.ones(3, np.uint8), "nodes": grower.GrownNodes(7, 3, n_flags=256),
      "cat_smooth": -1.0}, "cat_smooth must be >= 0"),
])
def test_grow_best_first_refuses_bad_arguments(change, message):
    arguments = {**_arguments(), **change}
    with pytest.raises(ValueError, match=message):
        grow_best_first(**arguments)


def test_row_entries_split_a_trees_features_into_by_row_and_by_column():
    """Per tree: flags for its features built by row, and its other features
    in order; kept from one tree to the next only for the same features."""
    rng = np.random.default_rng(5)
    X_binned = rng.integers(0, 4, size=(6, 300)).astype(np.uint8)
    X_binned[[0, 2, 3]] *= rng.random((3, 300)) < 0.1  # mostly bin 0
    by_row = np.array([1, 0, 1, 1, 0, 0], dtype=bool)
    entries = grower.RowEntries(X_binned, 4, np.where(by_row, 0, -1).astype(np.int32), by_row,
                                2)
    for features in ([0, 1, 2, 3, 4, 5], [1, 3, 5], [1, 3, 5], [0, 4], [0, 1, 2, 3, 4, 5]):
        features = np.array(features, dtype=np.int32)
        wanted, column_features = entries.split(features)
        expected = np.zeros(6, dtype=np.uint8)
        expected[features] = by_row[features]
        np.testing.assert_array_equal(wanted, expected)
        np.testing.assert_array_equal(column_features, [f for f in features if not by_row[f]])
        assert column_features.dtype == np.int32 and column_features.flags.c_contiguous
        assert not wanted.flags.writeable and not column_features.flags.writeable
