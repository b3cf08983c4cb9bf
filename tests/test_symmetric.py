"""Symmetric (oblivious) growth: the split gain table of one node against a
brute-force scan of its rows, and trees in which every node of a level splits
on the same feature, threshold and missing side."""
import numpy as np
import pytest

pytest.register_assert_rewrite("split_reference")
from split_reference import (  # noqa: E402
    HESS_WIDTHS, LAMBDA, brute_force_table, child_stats, hess_width_of, improvement, make_node,
    node_histogram, rows_left)

from gbmo._core._split import split_gain_table  # noqa: E402


@pytest.mark.parametrize("k_kind", HESS_WIDTHS)
@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_split_gain_table_matches_brute_force(k_kind, d, seed):
    rng = np.random.default_rng(seed * 11 + d)
    k = hess_width_of(k_kind, d)
    max_bins = 10
    n_bins_per_feature = [6, 10, 1, 3, 2, 8, 1]
    X_binned, grad, hess = make_node(rng, 150, n_bins_per_feature, {1, 2, 3, 5}, max_bins, d, k)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    hess_constant = 1.0 if k else 0.7
    features = np.array([0, 1, 2, 3, 5, 6], dtype=np.int32)  # feature 4 is left out
    for min_samples_leaf, min_child_weight in ((1, 0.0), (40, 0.0), (1, 30.0)):
        expected = brute_force_table(X_binned, grad, hess, n_bins_per_feature, features,
                                     max_bins, k, hess_constant, min_samples_leaf,
                                     min_child_weight)
        for n_threads in (1, 2):
            gains = np.full((len(n_bins_per_feature), max_bins, 2), np.nan)
            split_gain_table(hist, features, np.array(n_bins_per_feature, np.int32), parent, d,
                             k, hess_constant, LAMBDA, min_samples_leaf, min_child_weight, gains,
                             n_threads)
            covered = gains[features]
            assert not np.any(np.isnan(covered))  # every entry of the features written
            np.testing.assert_array_equal(np.isfinite(covered), np.isfinite(expected[features]))
            np.testing.assert_allclose(gains[np.isfinite(gains)],
                                       expected[np.isfinite(expected)], rtol=1e-9, atol=1e-9)
        assert np.all(np.isnan(gains[4]))  # not among the features: left as it was
        if min_samples_leaf == 1 and min_child_weight == 0.0:
            # a one-bin feature with missing values: all values left, missing right
            assert np.isfinite(gains[2, 0, 0]) and not np.isfinite(gains[2, 0, 1])
            # without missing values both sides are the same split but for the
            # last threshold, which would leave nothing on the right
            np.testing.assert_array_equal(gains[0, :5, 0], gains[0, :5, 1])
            assert not np.isfinite(gains[0, 5, 0])
        else:
            assert np.sum(np.isfinite(gains)) < np.sum(np.isfinite(
                brute_force_table(X_binned, grad, hess, n_bins_per_feature, features, max_bins,
                                  k, hess_constant, 1, 0.0)))  # the constraints bite


def test_split_gain_table_refuses_a_table_of_the_wrong_shape():
    rng = np.random.default_rng(3)
    X_binned, grad, hess = make_node(rng, 40, [4, 4], set(), 4, 2, 1)
    hist, parent = node_histogram(X_binned, grad, hess, 4)
    arguments = (hist, np.array([0, 1], np.int32), np.array([4, 4], np.int32), parent, 2, 1,
                 1.0, 1.0, 1, 0.0)
    with pytest.raises(ValueError, match=r"gains must be \(2, >= 4, 2\)"):
        split_gain_table(*arguments, np.zeros((2, 3, 2)), 1)
    with pytest.raises(ValueError, match="feature 5"):
        split_gain_table(hist, np.array([5], np.int32), *arguments[2:], np.zeros((2, 4, 2)), 1)


# -- growth -----------------------------------------------------------------------
import gbmo  # noqa: E402

rng = np.random.default_rng(5)
X = rng.normal(size=(1200, 5))
X[::7, 2] = np.nan
Y = np.column_stack([np.sin(X[:, 0]) + X[:, 1], np.nan_to_num(X[:, 2]) * X[:, 3]])
Y += 0.1 * rng.normal(size=Y.shape)
PARAMS = {"verbosity": 0, "growth": "symmetric", "max_depth": 4, "min_samples_leaf": 1,
          "max_leaves": 64}


def node_depths(tree):
    depth = np.zeros(tree.n_nodes, dtype=int)
    for node in range(tree.n_nodes):
        if tree.node_left[node] >= 0:
            depth[tree.node_left[node]] = depth[tree.node_right[node]] = depth[node] + 1
    return depth


def level_splits(tree):
    """{depth: set of (feature, bin)} of the internal nodes."""
    depth, internal = node_depths(tree), tree.node_left >= 0
    return {level: set(zip(tree.node_feature[internal & (depth == level)].tolist(),
                           tree.node_bin[internal & (depth == level)].tolist()))
            for level in set(depth[internal].tolist())}


def test_every_node_of_a_level_splits_on_one_feature_and_threshold():
    booster = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 5)
    for tree in booster.trees:
        assert node_depths(tree).max() == 4 and tree.n_leaves <= 16
        assert all(len(splits) == 1 for splits in level_splits(tree).values())
        # a node whose rows all fall on one side of its level's split stays a leaf
        # (here: feature 1 splits a tree twice), unless min_samples_leaf holds both sides
        assert tree.node_count[tree.node_left < 0].min() >= 1
    assert any(2 in {f for (f, _) in splits} for tree in booster.trees
               for splits in [set().union(*level_splits(tree).values())])  # the NaN feature


def test_each_level_takes_the_split_with_the_largest_gain_summed_over_its_nodes():
    """Brute force from the rows: at every level of the first tree, every
    (feature, bin threshold, missing side) gains the sum, over the level's
    nodes where both children keep min_samples_leaf rows, of the dense gain."""
    params = {**PARAMS, "min_samples_leaf": 40, "learning_rate": 1.0}
    dataset = gbmo.Dataset(X, Y)
    booster = gbmo.train(params, dataset, 1)
    tree = booster.trees[0]
    mapper = dataset.bin_mapper
    X_binned, missing_bin = dataset.X_binned, mapper.missing_bin
    raw = np.tile(booster.init_score, (len(X), 1))
    grad = booster.loss.gradients(Y, raw, None)[0]
    hess = np.empty((len(X), 0), dtype=grad.dtype)
    # every row's node, level by level
    at = np.zeros(len(X), dtype=int)
    depth = node_depths(tree)
    for level in range(node_depths(tree).max()):
        nodes = np.flatnonzero(depth == level)
        totals = {}
        for node in nodes:
            rows = at == node
            parent = child_stats(grad, hess, rows, 0, 1.0)
            for f in range(X.shape[1]):
                n_bins = mapper.n_bins_non_missing_[f]
                for side, n_thresholds in ((0, n_bins), (1, n_bins - 1)):
                    for t in range(n_thresholds):
                        left = rows & rows_left(X_binned[f], t, side, missing_bin)
                        (G_l, H_l, n_l), (G_r, H_r, n_r) = (
                            child_stats(grad, hess, mask, 0, 1.0) for mask in (left, rows & ~left))
                        if min(n_l, n_r) < 40:
                            continue
                        gain = 0.5 * (improvement(G_l, H_l).sum() + improvement(G_r, H_r).sum()
                                      - improvement(*parent[:2]).sum())
                        totals[f, t, side] = totals.get((f, t, side), 0.0) + gain
        split = nodes[tree.node_left[nodes] >= 0][0]
        chosen = [totals[tree.node_feature[split], tree.node_bin[split], side] for side in (0, 1)
                  if (tree.node_feature[split], tree.node_bin[split], side) in totals]
        assert max(chosen) == pytest.approx(max(totals.values()), rel=1e-9)
        for node in nodes[tree.node_left[nodes] >= 0]:
            goes_left = rows_left(X_binned[tree.node_feature[node]], tree.node_bin[node],
                                  tree.node_missing_left[node], missing_bin)
            rows = at == node
            at[rows & goes_left] = tree.node_left[node]
            at[rows & ~goes_left] = tree.node_right[node]


def test_a_node_whose_children_would_be_too_small_stays_a_leaf():
    params = {**PARAMS, "min_samples_leaf": 150, "max_depth": 5}
    booster = gbmo.train(params, gbmo.Dataset(X, Y), 5)
    leaves = [tree.n_leaves for tree in booster.trees]
    assert min(leaves) > 4 and max(leaves) < 32  # some nodes split, some did not
    for tree in booster.trees:
        assert all(len(splits) == 1 for splits in level_splits(tree).values())
        assert tree.node_count[tree.node_left < 0].min() >= 150


@pytest.mark.parametrize("max_depth, max_leaves, depth", [(-1, 31, 4), (-1, 64, 6), (3, 64, 3),
                                                          (6, 20, 4), (6, None, 6), (-1, None, 4)])
def test_the_depth_is_max_depth_and_a_full_level_fits_max_leaves(max_depth, max_leaves, depth):
    """Without max_leaves, a max_depth is grown whole, as CatBoost's depth (the
    default of 31 leaves cut depth 6 to 4 levels); without either, 31."""
    params = {**PARAMS, "max_depth": max_depth, "max_leaves": max_leaves}
    if max_leaves is None:
        del params["max_leaves"]
    booster = gbmo.train(params, gbmo.Dataset(X, Y), 2)
    assert max(node_depths(tree).max() for tree in booster.trees) == depth


def test_symmetric_trees_learn_save_and_predict_as_loaded(tmp_path):
    train, test = slice(0, 900), slice(900, None)
    booster = gbmo.train({**PARAMS, "min_samples_leaf": 10}, gbmo.Dataset(X[train], Y[train]), 60)
    rmse = np.sqrt(np.mean((booster.predict(X[test]) - Y[test]) ** 2))
    baseline = np.sqrt(np.mean((Y[train].mean(axis=0) - Y[test]) ** 2))
    assert rmse < 0.4 * baseline
    booster.save_model(tmp_path / "model.json")
    loaded = gbmo.Booster(model_file=tmp_path / "model.json")
    np.testing.assert_array_equal(loaded.predict(X[test]), booster.predict(X[test]))
    assert loaded.params["growth"] == "symmetric"


def test_sparse_X_and_single_output_trees_grow_symmetric_too():
    import scipy.sparse

    X_sparse = np.where(np.abs(X) < 0.7, 0.0, X)
    dense = gbmo.train(PARAMS, gbmo.Dataset(X_sparse, Y), 3)
    sparse = gbmo.train(PARAMS, gbmo.Dataset(scipy.sparse.csr_matrix(X_sparse), Y), 3)
    for a, b in zip(dense.trees, sparse.trees):
        assert level_splits(a) == level_splits(b)
    single = gbmo.train({**PARAMS, "tree_mode": "single_output"}, gbmo.Dataset(X, Y), 2)
    assert len(single.trees) == 4
    for tree in single.trees:
        assert all(len(splits) == 1 for splits in level_splits(tree).values())


def test_symmetric_growth_needs_the_dense_split():
    with pytest.raises(ValueError, match="growth='symmetric' needs split='dense', got "
                                         "split='sparse_restricted'"):
        gbmo.train({**PARAMS, "split": "sparse_restricted", "top_k": 1}, gbmo.Dataset(X, Y), 1)


def test_a_histogram_cache_smaller_than_a_level_grows_the_same_trees():
    """Parents whose histograms do not fit are given up and both their
    children built instead of one built and one subtracted."""
    unbounded = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 3)
    bounded = gbmo.train({**PARAMS, "hist_cache": 2}, gbmo.Dataset(X, Y), 3)
    for a, b in zip(unbounded.trees, bounded.trees):
        np.testing.assert_array_equal(a.node_bin, b.node_bin)
        np.testing.assert_array_equal(a.node_feature, b.node_feature)
        np.testing.assert_allclose(a.leaf_values, b.leaf_values, rtol=1e-9, atol=1e-12)


def test_the_estimators_grow_symmetric_trees():
    from gbmo.sklearn import GBMOClassifier, GBMORegressor

    shape = dict(growth="symmetric", max_depth=3, n_estimators=100, learning_rate=0.3,
                 min_samples_leaf=5)
    regressor = GBMORegressor(**shape).fit(X, Y)
    classes = (Y[:, 0] > 0).astype(int) + (Y[:, 1] > 0)
    classifier = GBMOClassifier(**shape).fit(X, classes)
    for model in (regressor, classifier):
        trees = model.booster_.trees
        assert max(node_depths(tree).max() for tree in trees) == 3
        assert all(len(splits) == 1 for tree in trees for splits in level_splits(tree).values())
    assert regressor.score(X, Y) > 0.8 and classifier.score(X, classes) > 0.8
