"""Interaction constraints: every root-to-leaf path of a trained tree uses
features that one group holds (or a single feature in no group)."""
import numpy as np
import pytest
import scipy.sparse as sp

import gbmo


def path_feature_sets(tree):
    """The set of features split on along each root-to-leaf path."""
    paths, stack = [], [(0, frozenset())]
    while stack:
        node, path = stack.pop()
        if tree.node_left[node] < 0:
            paths.append(path)
            continue
        path = path | {int(tree.node_feature[node])}
        stack += [(tree.node_left[node], path), (tree.node_right[node], path)]
    return paths


def allowed(path, groups):
    return len(path) <= 1 or any(path <= set(group) for group in groups)


def problem(rng, n=1500, p=5):
    X = rng.normal(size=(n, p))
    X[rng.random(X.shape) < 0.05] = np.nan
    Z = np.nan_to_num(X)
    Y = np.column_stack([Z[:, 0] * Z[:, 1] + Z[:, 2] * Z[:, 3] + Z[:, 4] * Z[:, 0],
                         np.sin(Z[:, 0] + Z[:, 2]) + Z[:, 3] * Z[:, 4]])
    return X, Y + 0.1 * rng.normal(size=Y.shape)


@pytest.mark.parametrize("params", [
    {}, {"growth": "depthwise", "max_depth": 5}, {"growth": "symmetric", "max_depth": 4},
    {"tree_mode": "single_output"}, {"colsample_bynode": 0.5, "subsample": 0.7},
    {"split": "sparse", "top_k": 1},
])
@pytest.mark.parametrize("groups", [[[0, 1], [2, 3]], [[0, 1, 2], [2, 3, 4]], [[0, 4]]])
def test_every_path_of_a_trained_model_keeps_to_one_group(params, groups):
    rng = np.random.default_rng(0)
    X, Y = problem(rng)
    booster = gbmo.train(dict(params, verbosity=0, max_leaves=16, min_samples_leaf=5,
                              interaction_constraints=groups), gbmo.Dataset(X, Y), 15)
    paths = [path for tree in booster.trees for path in path_feature_sets(tree)]
    assert all(allowed(path, groups) for path in paths)
    # the constraints still leave interactions to learn
    assert any(len(path) >= 2 for path in paths)


def test_without_constraints_the_same_data_grows_paths_that_break_them():
    rng = np.random.default_rng(0)
    X, Y = problem(rng)
    booster = gbmo.train({"verbosity": 0, "max_leaves": 16}, gbmo.Dataset(X, Y), 15)
    paths = [path for tree in booster.trees for path in path_feature_sets(tree)]
    assert not all(allowed(path, [[0, 1], [2, 3]]) for path in paths)


def test_groups_that_split_the_features_in_two_give_an_additive_model():
    """With [[0, 1], [2, 3, 4]] every tree is f(x0, x1) + g(x2, x3, x4), so the
    mixed difference across the two halves vanishes for every output."""
    rng = np.random.default_rng(1)
    X, Y = problem(rng)
    booster = gbmo.train({"verbosity": 0, "interaction_constraints": [[0, 1], [2, 3, 4]]},
                         gbmo.Dataset(X, Y), 30)
    a, b = rng.normal(size=(2, 200, 5))
    ab = np.column_stack([a[:, :2], b[:, 2:]])
    ba = np.column_stack([b[:, :2], a[:, 2:]])
    mixed = (booster.predict(a) - booster.predict(ab) - booster.predict(ba)
             + booster.predict(b))
    np.testing.assert_allclose(mixed, 0.0, atol=1e-12)


def test_sparse_x_and_the_estimator_keep_to_the_groups():
    from gbmo.sklearn import GBMORegressor

    X = sp.random(800, 5, density=0.5, random_state=2, format="csr")
    Z = X.toarray()
    Y = np.column_stack([Z[:, 0] * Z[:, 1], Z[:, 2] * Z[:, 3] + Z[:, 4]])
    groups = [[0, 1], [2, 3]]
    booster = gbmo.train({"verbosity": 0, "interaction_constraints": groups},
                         gbmo.Dataset(X, Y), 10)
    model = GBMORegressor(n_estimators=10, interaction_constraints=groups).fit(Z, Y)
    for trees in (booster.trees, model.booster_.trees):
        assert all(allowed(path, groups) for tree in trees for path in path_feature_sets(tree))


def test_groups_of_feature_names_are_the_groups_of_their_positions():
    import pandas as pd

    from gbmo.sklearn import GBMORegressor

    rng = np.random.default_rng(4)
    X, Y = problem(rng, 600)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])
    by_index = gbmo.train({"verbosity": 0, "interaction_constraints": [[0, 1], [2, 3, 4]]},
                          gbmo.Dataset(frame, Y), 8).predict(frame)
    for groups in ([["a", "b"], ["c", "d", "e"]], [["a", 1], [2, "d", "e"]]):
        named = gbmo.train({"verbosity": 0, "interaction_constraints": groups},
                           gbmo.Dataset(frame, Y), 8)
        np.testing.assert_array_equal(named.predict(frame), by_index)
    model = GBMORegressor(n_estimators=8, interaction_cst=[["a", "b"], ["c", "d", "e"]])
    np.testing.assert_array_equal(model.fit(frame, Y).predict(frame), by_index)
    with pytest.raises(ValueError, match=r"interaction_constraints names 'z', which is not a "
                                         r"feature name; the names are \['a', 'b', 'c', 'd', "):
        gbmo.train({"verbosity": 0, "interaction_constraints": [["a", "z"]]},
                   gbmo.Dataset(frame, Y), 1)
    with pytest.raises(ValueError, match="interaction_constraints names the feature 'a', but X "
                                         "has no feature names"):
        gbmo.train({"verbosity": 0, "interaction_constraints": [["a", "b"]]},
                   gbmo.Dataset(X, Y), 1)


def test_text_is_a_feature_s_name_before_it_is_an_index():
    """Columns named "2", "0", ...: a group's "2" is that column, not position
    2; text naming no column is an index, as LightGBM reads numbers as text."""
    rng = np.random.default_rng(5)
    X, Y = problem(rng, 600)
    names = ["2", "0", "1", "x", "y"]
    by_name = gbmo.train({"verbosity": 0, "interaction_constraints": [["2", "0"], ["x", "4"]]},
                         gbmo.Dataset(X, Y, feature_name=names), 8)
    by_index = gbmo.train({"verbosity": 0, "interaction_constraints": [[0, 1], [3, 4]]},
                          gbmo.Dataset(X, Y, feature_name=names), 8)
    np.testing.assert_array_equal(by_name.predict(X), by_index.predict(X))
    with pytest.raises(ValueError, match=r"'interaction_constraints' = -1 is out of range"):
        gbmo.train({"verbosity": 0, "interaction_constraints": [["-1", "x"]]},
                   gbmo.Dataset(X, Y, feature_name=names), 1)


def test_an_empty_list_means_no_constraints():
    rng = np.random.default_rng(3)
    X, Y = problem(rng, 400)
    free = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, Y), 5)
    empty = gbmo.train({"verbosity": 0, "interaction_constraints": []}, gbmo.Dataset(X, Y), 5)
    np.testing.assert_array_equal(empty.predict(X), free.predict(X))


@pytest.mark.parametrize("groups, message", [
    ([0, 1], "must be a list of lists of feature indices"),
    ([[0, [1]]], "must be a list of lists of feature indices"),
    ([[0, 7]], r"interaction_constraints name features \[7\], but X has 5"),
    ([[0, -1]], r"'interaction_constraints' = -1 is out of range"),
])
def test_bad_groups_are_refused_by_name(groups, message):
    rng = np.random.default_rng(0)
    X, Y = problem(rng, 100)
    with pytest.raises(ValueError, match=message):
        gbmo.train({"verbosity": 0, "interaction_constraints": groups}, gbmo.Dataset(X, Y), 1)


@pytest.mark.parametrize("extra", [{}, {"colsample_bynode": 0.6}])
def test_a_sparse_y_keeps_every_path_in_a_group_as_dense_gbdt_mo_does(extra):
    """The sparse-output grower allows a node the features the dense one
    allows (the same helper), so both grow the same trees; with a squared
    hinge as the dense path's custom objective."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 5))
    logits = X @ rng.normal(size=(5, 12)) + X[:, [0]] * X[:, [1]] - 1.5
    labels = (rng.random((400, 12)) < 1 / (1 + np.exp(-logits))).astype(float)
    groups = [[0, 1], [1, 2, 3]]

    def squared_hinge(y, raw):
        sign, f = np.where(y > 0, 1.0, -1.0), raw - 1.0  # the sparse path starts at -1
        margin = 1.0 - sign * f
        return -2.0 * sign * np.maximum(margin, 0.0), np.where(margin > 0, 2.0, 0.0)

    params = {"verbosity": 0, "split": "sparse", "top_k": 3, "max_leaves": 8,
              "min_samples_leaf": 5, "min_child_weight": 0.0, "learning_rate": 0.3,
              "interaction_constraints": groups, "seed": 5, "n_threads": 1, **extra}
    sparse_booster = gbmo.train({**params, "objective": "squared_hinge"},
                                gbmo.Dataset(X, sp.csr_matrix(labels)), 6)
    dense_booster = gbmo.train({**params, "objective": squared_hinge},
                               gbmo.Dataset(X, labels), 6)
    for tree, dense in zip(sparse_booster.trees, dense_booster.trees, strict=True):
        np.testing.assert_array_equal(tree.node_feature, dense.node_feature)
        np.testing.assert_array_equal(tree.node_bin, dense.node_bin)
        np.testing.assert_array_equal(tree.leaf_outputs, dense.leaf_outputs)
        assert all(allowed(path, groups) for path in path_feature_sets(tree))
    assert any(len(path) > 1 for tree in sparse_booster.trees
               for path in path_feature_sets(tree))


def test_a_feature_in_no_group_splits_again_below_itself_and_with_nothing_else():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(2000, 3))
    y = np.sin(3 * X[:, 2]) + X[:, 0] * X[:, 1]
    booster = gbmo.train({"verbosity": 0, "interaction_constraints": [[0, 1]]},
                         gbmo.Dataset(X, y), 10)
    repeated = 0
    for tree in booster.trees:
        stack = [(0, ())]
        while stack:
            node, features = stack.pop()
            if tree.node_left[node] < 0:
                assert 2 not in features or set(features) == {2}, features
                repeated += features.count(2) >= 2
                continue
            features = features + (int(tree.node_feature[node]),)
            stack += [(tree.node_left[node], features), (tree.node_right[node], features)]
    assert repeated > 0
